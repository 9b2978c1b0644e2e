# Keystone operator suite. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

# Tools are built from the Go module proxy into $(LOCALBIN), one file per version,
# so a warm run rebuilds nothing and a version bump rebuilds only that tool.
LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_TOOLS_VERSION ?= v0.16.5
GOLANGCI_LINT_VERSION ?= v2.11.0
# The kustomize kubectl 1.31 embeds (kubectl apply -k), as a binary for kustomize edit.
KUSTOMIZE_VERSION ?= v5.4.2
KUTTL_VERSION ?= v0.26.0
KREW_VERSION ?= v0.4.3
K8S_VERSION ?= v1.31.14
ETCD_VERSION ?= v3.5.21
COREDNS_VERSION ?= v1.11.3

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
KUTTL ?= $(LOCALBIN)/kuttl-$(KUTTL_VERSION)
KREW_DIR = $(LOCALBIN)/krew-$(KREW_VERSION)
ENVTEST_DIR = $(LOCALBIN)/k8s-$(K8S_VERSION)-etcd-$(ETCD_VERSION)
NODE_DIR = $(LOCALBIN)/node-$(K8S_VERSION)-coredns-$(COREDNS_VERSION)
# What hack/cluster.sh needs to find its binaries.
CLUSTER_ENV = ENVTEST_BINS=$(ENVTEST_DIR) NODE_BINS=$(NODE_DIR)

# Go packages of each module; apis/ and tests/conformance/ are modules of their own.
ROOT_PKGS = ./...
APIS_DIR = apis
CONFORMANCE_DIR = tests/conformance
# keystone-operator's API module and lib-common's openstack module, which the conformance
# suite imports at pinned versions, have no entry in the checksum database; go.sum pins them.
CONFORMANCE_ENV = GONOSUMDB='github.com/openstack-k8s-operators/*'

# Ginkgo/go test flags; `make test TEST_ARGS=-v` for details.
TEST_ARGS ?=

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the markers.
	$(CONTROLLER_GEN) crd paths=./apis/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths="./controllers/..." output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate DeepCopy methods.
	cd $(APIS_DIR) && $(CONTROLLER_GEN) object:headerFile=../hack/boilerplate.go.txt paths=./...

.PHONY: fmt
fmt: ## Run gofmt on every module.
	gofmt -s -w $$(git ls-files --cached --others --exclude-standard '*.go')

.PHONY: vet
vet: ## Run go vet on every module.
	go vet $(ROOT_PKGS)
	cd $(APIS_DIR) && go vet ./...
	cd $(CONFORMANCE_DIR) && $(CONFORMANCE_ENV) go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (.golangci.yml) on every module.
	$(GOLANGCI_LINT) run $(ROOT_PKGS)
	cd $(APIS_DIR) && $(GOLANGCI_LINT) run --config ../.golangci.yml ./...
	cd $(CONFORMANCE_DIR) && $(CONFORMANCE_ENV) $(GOLANGCI_LINT) run --config ../../.golangci.yml ./...

.PHONY: verify
verify: manifests generate fmt ## Regenerate everything and fail if the tree changed.
	go mod tidy
	cd $(APIS_DIR) && go mod tidy
	cd $(CONFORMANCE_DIR) && $(CONFORMANCE_ENV) go mod tidy
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "verify: the tree is not what 'make manifests generate fmt' and 'go mod tidy' produce:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; fi

##@ Test

.PHONY: test
test: manifests generate vet envtest debian-deps $(KUSTOMIZE) ## Install what the tests need and run every test.
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) KUSTOMIZE=$(KUSTOMIZE) go test $(ROOT_PKGS) $(TEST_ARGS)
	cd $(APIS_DIR) && go test ./... $(TEST_ARGS)
	$(MAKE) conformance
	$(MAKE) kuttl
	$(MAKE) krew-check

.PHONY: conformance
conformance: manifests envtest debian-deps ## Play the dependent operators with keystone-operator's helpers, on this suite's CRDs and on upstream's.
	go build -o $(LOCALBIN)/manager ./cmd
	go build -o $(LOCALBIN)/asoperator ./tests/asoperator
	go build -o $(LOCALBIN)/localkeystone ./cmd/localkeystone
	cd $(CONFORMANCE_DIR) && for crds in ours upstream; do \
		$(CONFORMANCE_ENV) KUBEBUILDER_ASSETS=$(ENVTEST_DIR) CONFORMANCE_CRDS=$$crds go test -count=1 ./... $(TEST_ARGS) || exit 1; done

.PHONY: kuttl
kuttl: manifests envtest debian-deps $(KUTTL) kubectl-keystone ## Run the kuttl scenarios (tests/kuttl) with the operator and a real Keystone.
	go build -o $(LOCALBIN)/manager ./cmd
	go build -o $(LOCALBIN)/asoperator ./tests/asoperator
	go build -o $(LOCALBIN)/localkeystone ./cmd/localkeystone
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) hack/kuttl.sh $(KUTTL) $(KUTTL_ARGS)
	KUTTL_CRDS=upstream KUBEBUILDER_ASSETS=$(ENVTEST_DIR) hack/kuttl.sh $(KUTTL) --test controlplane

.PHONY: e2e
e2e: manifests envtest node-bins cluster-deps $(KUTTL) ## Run the end-to-end scenarios (tests/e2e) on the local cluster, the operator in it from its image and config/default.
	go build -o $(LOCALBIN)/devrun ./cmd/devrun
	go build -o $(LOCALBIN)/e2e-actor ./tests/e2e/actor
	$(CLUSTER_ENV) PATH=$(ENVTEST_DIR):$$PATH hack/e2e.sh $(KUTTL) $(KUTTL_ARGS)

.PHONY: bench
bench: manifests envtest ## Measure convergence and cost; writes BENCHMARKS.md (BENCH_RUN selects rows).
	$(if $(BENCH_RUN),$(if $(findstring Keystone,$(BENCH_RUN)),hack/debian-deps.sh keystone),hack/debian-deps.sh keystone)
	go build -o $(LOCALBIN)/manager ./cmd
	rm -f $(LOCALBIN)/bench-row7.json $(LOCALBIN)/bench-row10.json $(LOCALBIN)/bench-row11.json $(LOCALBIN)/bench-row12.json
	$(if $(BENCH_RUN),,$(MAKE) bench-pods)
	$(if $(BENCH_RUN),,$(MAKE) bench-disruption)
	$(if $(BENCH_RUN),,KUBEBUILDER_ASSETS=$(ENVTEST_DIR) BENCH_MEMORY=1 go test -tags bench -count=1 -timeout 40m -v ./tests/bench -run 'TestMemory|TestManagerCPU')
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) go test -tags bench -count=1 -timeout 30m -v ./tests/bench -run '$(or $(BENCH_RUN),.)'

.PHONY: bench-pods
bench-pods: manifests envtest node-bins cluster-deps ## Measure row 10: the sample KeystoneAPI's critical path with real pods on the local cluster (root).
	go build -o $(LOCALBIN)/devrun ./cmd/devrun
	go build -o $(LOCALBIN)/e2e-actor ./tests/e2e/actor
	$(CLUSTER_ENV) PATH=$(ENVTEST_DIR):$$PATH hack/bench-pods.sh

.PHONY: bench-disruption
bench-disruption: manifests envtest node-bins cluster-deps ## Measure row 11: failed requests through every change the operator makes, with real pods on the local cluster (root).
	go build -o $(LOCALBIN)/devrun ./cmd/devrun
	go build -o $(LOCALBIN)/e2e-actor ./tests/e2e/actor
	$(CLUSTER_ENV) PATH=$(ENVTEST_DIR):$$PATH hack/bench-disruption.sh

.PHONY: fuzz
fuzz: ## Fuzz the condition engine for FUZZTIME (default 60s).
	go test ./pkg/condition -run '^$$' -fuzz FuzzRound -fuzztime $${FUZZTIME:-60s}

##@ Build and run

.PHONY: build
build: generate ## Build the manager binary.
	go build -o $(LOCALBIN)/manager ./cmd

.PHONY: kubectl-keystone
kubectl-keystone: ## Build the kubectl plugin bin/kubectl-keystone (kubectl keystone tree): put bin/ on PATH to use it.
	go build -o $(LOCALBIN)/kubectl-keystone ./cmd/kubectl-keystone

# The plugin's version in its krew manifest and archives.
VERSION ?= 0.0.0-dev

.PHONY: krew
krew: ## Build the plugin's release archives and its krew manifest (dist/keystone.yaml) for VERSION.
	hack/krew.sh $(VERSION) dist

.PHONY: krew-check
krew-check: envtest $(KREW_DIR)/krew ## Validate the krew manifest and install the plugin from it with krew, as a user would.
	KREW_BIN=$(KREW_DIR) KUBECTL_BIN=$(ENVTEST_DIR) hack/krew-check.sh

.PHONY: manager-image
manager-image: generate image-deps ## Build the Dockerfile with buildah, without a registry: an OCI archive in bin/manager-image/.
	hack/manager-image.sh $(LOCALBIN)/manager-image

# `make run` runs against the current context of the kubeconfig kubectl uses (KUBECONFIG,
# else ~/.kube/config), as kubebuilder's does; with none, it starts a local cluster:
# RUN_LOCAL=cluster (a real single-node Kubernetes, root) or RUN_LOCAL=control-plane (no
# nodes, no root). RUN_LOCAL given on the command line uses that local cluster whatever
# kubeconfig there is. Only what the chosen target uses is built.
RUN_LOCAL ?= cluster
RUN_KUBECONFIG := $(or $(KUBECONFIG),$(wildcard $(HOME)/.kube/config))
RUN_TARGET := $(if $(filter command line,$(origin RUN_LOCAL)),$(RUN_LOCAL),$(if $(RUN_KUBECONFIG),kubeconfig,$(RUN_LOCAL)))

.PHONY: run
run: manifests generate kubectl-keystone $(if $(filter kubeconfig,$(RUN_TARGET)),,envtest) $(if $(filter cluster,$(RUN_TARGET)),node-bins cluster-deps) ## Run the operator: against the current kubeconfig context, or a local cluster it starts.
	go build -o $(LOCALBIN)/devrun ./cmd/devrun
	$(if $(filter cluster,$(RUN_TARGET)),go build -o $(LOCALBIN)/e2e-actor ./tests/e2e/actor)
	$(if $(filter kubeconfig,$(RUN_TARGET)),,KUBEBUILDER_ASSETS=$(ENVTEST_DIR) $(CLUSTER_ENV)) exec $(LOCALBIN)/devrun -local=$(RUN_TARGET) \
		$(if $(filter cluster,$(RUN_TARGET)),-actor=$(LOCALBIN)/e2e-actor) $(RUN_ARGS)

##@ Deploy (kubebuilder's targets; KUBECONFIG's cluster)

# The image make deploy and make docker-build name; CONTAINER_TOOL builds it.
IMG ?= keystone-operator:latest
CONTAINER_TOOL ?= docker
KUBECTL ?= kubectl

.PHONY: docker-build
docker-build: ## Build the manager image IMG with CONTAINER_TOOL from the Dockerfile (without an engine: make manager-image, buildah).
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push IMG with CONTAINER_TOOL.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: install
install: manifests ## Install the CRDs (config/crd) into the cluster.
	$(KUBECTL) apply --server-side --force-conflicts -k config/crd

.PHONY: uninstall
uninstall: ## Delete the CRDs, and with them every KeystoneAPI, registration and credential: asks first.
	@echo "uninstall deletes the CRDs and every KeystoneAPI, KeystoneService, KeystoneEndpoint and KeystoneApplicationCredential with them."
	@[[ $${CONFIRM:-} == yes ]] || { read -r -p "Type yes to go on: " answer && [[ $$answer == yes ]]; } || { echo "uninstall: nothing deleted"; exit 1; }
	$(KUBECTL) delete -k config/crd --ignore-not-found

.PHONY: deploy
deploy: install set-image ## Install the CRDs, then the operator (config/default) running IMG, kept in config/manager for every later apply.
	$(KUBECTL) apply --server-side --force-conflicts -k config/default

.PHONY: set-image
set-image: $(KUSTOMIZE) ## Make IMG the operator's image in config/manager (kubebuilder's kustomize edit set image): kubectl apply -k config/default deploys it.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)

.PHONY: build-installer
build-installer: manifests set-image ## Write dist/install.yaml: the CRDs and the operator running IMG, for kubectl apply -f without kustomize.
	mkdir -p dist
	{ $(KUSTOMIZE) build config/crd && echo --- && $(KUSTOMIZE) build config/default; } > dist/install.yaml

.PHONY: undeploy
undeploy: ## Remove the operator (config/default); the CRDs and every object of them stay.
	$(KUBECTL) delete -k config/default --ignore-not-found

##@ Local cluster

.PHONY: cluster-up
cluster-up: envtest node-bins cluster-deps ## Start a single-node Kubernetes on this machine (root); prints its kubeconfig.
	@$(CLUSTER_ENV) hack/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and restore the host; its state stays for the next cluster-up.
	$(CLUSTER_ENV) hack/cluster.sh down

.PHONY: cluster-purge
cluster-purge: ## Stop the local cluster and remove its state.
	$(CLUSTER_ENV) hack/cluster.sh purge

.PHONY: demo
demo: manifests generate envtest debian-deps ## Register services in a real Keystone through the operator, end to end, on this machine.
	go build -o $(LOCALBIN)/devrun ./cmd/devrun
	go build -o $(LOCALBIN)/localkeystone ./cmd/localkeystone
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) PATH=$(ENVTEST_DIR):$$PATH hack/demo.sh

##@ Tools

.PHONY: debian-deps
debian-deps: ## Install Debian's keystone, uwsgi, MariaDB and memcached for the real-Keystone tests, and promtool for the alerts'.
	hack/debian-deps.sh keystone
	hack/debian-deps.sh monitoring

.PHONY: image-deps
image-deps: ## Install Debian's buildah and debootstrap, which build the manager image.
	hack/debian-deps.sh image

.PHONY: cluster-deps
cluster-deps: ## Install Debian's containerd, runc, CNI plugins, iptables, debootstrap and buildah for the local cluster and the images.
	hack/debian-deps.sh cluster

.PHONY: node-bins
node-bins: ## Build kubelet, controller-manager, scheduler, kube-proxy, CoreDNS and pause (cached by version).
	@K8S_VERSION=$(K8S_VERSION) COREDNS_VERSION=$(COREDNS_VERSION) hack/k8s-bins.sh $(LOCALBIN) node >/dev/null

.PHONY: envtest
envtest: $(ENVTEST_DIR)/kube-apiserver ## Build etcd, kube-apiserver and kubectl for envtest (cached by version).
$(ENVTEST_DIR)/kube-apiserver:
	K8S_VERSION=$(K8S_VERSION) ETCD_VERSION=$(ETCD_VERSION) hack/k8s-bins.sh $(LOCALBIN) envtest

$(CONTROLLER_GEN):
	mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN)/.tmp-controller-gen go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(LOCALBIN)/.tmp-controller-gen/controller-gen $@ && rmdir $(LOCALBIN)/.tmp-controller-gen

$(KREW_DIR)/krew:
	mkdir -p $(KREW_DIR)
	GOBIN=$(KREW_DIR) go install sigs.k8s.io/krew/cmd/krew@$(KREW_VERSION) sigs.k8s.io/krew/cmd/validate-krew-manifest@$(KREW_VERSION)

$(KUTTL):
	KUTTL_VERSION=$(KUTTL_VERSION) hack/kuttl-bin.sh $@

$(KUSTOMIZE):
	mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN)/.tmp-kustomize go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv $(LOCALBIN)/.tmp-kustomize/kustomize $@ && rmdir $(LOCALBIN)/.tmp-kustomize

$(GOLANGCI_LINT):
	mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN)/.tmp-golangci-lint go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(LOCALBIN)/.tmp-golangci-lint/golangci-lint $@ && rmdir $(LOCALBIN)/.tmp-golangci-lint
