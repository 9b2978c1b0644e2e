#!/usr/bin/env bash
# Runs the end-to-end scenarios (tests/e2e/scenarios) on the local single-node cluster,
# with the operator installed as users install it: the manager image (hack/manager-image.sh,
# the Dockerfile built by buildah) imported into the cluster's containerd, and
# config/default applied with kubectl (generated RBAC, the
# Deployment; the CRDs are installed apart, as `make install` does), only its image replaced.
# bin/devrun -manager=false starts the cluster unless it runs already, installs the CRDs
# and runs the test actor that plays mariadb-operator and infra-operator (bin/e2e-actor);
# then kuttl runs. At the end the operator is uninstalled (the CRDs stay, as devrun
# installs them) and devrun stops what it started; a cluster that was already running
# keeps running.
# Logs: bin/e2e/ (manager.log: the operator's pod; devrun.log), bin/run/actor.log (the actor).
# Usage: e2e.sh KUTTL_BINARY [kuttl test args]
set -euo pipefail
kuttl=${1:?usage: e2e.sh KUTTL_BINARY [kuttl test args]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=hack/lib.sh
source hack/lib.sh
logs=$root/bin/e2e
overlay=$logs/operator
operator_ns=keystone-operator-system
deployment=keystone-stepwise-controller-manager
label=keystone-stepwise.dev/e2e=operator
mkdir -p "$logs" "$overlay"

bin/devrun -local=cluster -manager=false -actor="$root/bin/e2e-actor" >"$logs/devrun.log" 2>&1 &
devrun=$!
installed=false
finish() {
	local rc=$?
	if [[ $installed == true ]]; then
		kubectl -n "$operator_ns" logs "deploy/$deployment" --tail=-1 >"$logs/manager.log" 2>&1 || true
		if ((rc != 0)); then
			echo "e2e: failed; the operator's last words (all in $logs/manager.log):" >&2
			tail -n 20 "$logs/manager.log" >&2 || true
		fi
		uninstall || rc=1
	fi
	# Stopping the cluster it started takes devrun about 20 s.
	stop_pids 120 "$devrun"
	exit "$rc"
}
trap finish EXIT

# uninstall removes the operator once kuttl's namespaces are gone (their KeystoneAPIs
# and registrations need it for their finalizers), keeping the CRDs.
uninstall() {
	wait_until "kuttl's namespaces to be deleted" 300 0 "$logs/kuttl-namespaces.txt" no_kuttl_namespaces || return 1
	# Chained: called as `uninstall || rc=1`, so set -e does not stop at a failure here.
	kubectl delete namespace "$operator_ns" --ignore-not-found --timeout=120s &&
		kubectl delete clusterrole,clusterrolebinding -l "$label" --ignore-not-found
}
# kuttl_namespaces writes kuttl's namespaces to $logs/kuttl-namespaces.txt, one a line
# with what holds it when it is being deleted (its conditions name the finalizers and
# objects left), and prints their names.
kuttl_namespaces() {
	local all
	all=$(kubectl get namespaces -o jsonpath='{range .items[*]}namespace/{.metadata.name} {range .status.conditions[?(@.status=="True")]}{.message}; {end}{"\n"}{end}') || return 1
	grep '^namespace/kuttl-' <<<"$all" >"$logs/kuttl-namespaces.txt" || true
	cut -d ' ' -f 1 "$logs/kuttl-namespaces.txt"
}
no_kuttl_namespaces() {
	local names
	names=$(kuttl_namespaces) || return 1
	[[ -z $names ]]
}

# devrun prints the kubeconfig once the cluster is up and the CRDs are installed; from
# nothing (binaries built, images debootstrapped) that took 178 s.
wait_until "the local cluster (devrun's kubeconfig hint)" 900 "$devrun" "$logs/devrun.log" \
	contains "$logs/devrun.log" "export KUBECONFIG="
KUBECONFIG=$(sed -n 's/^ *export KUBECONFIG=//p' "$logs/devrun.log" | head -n 1)
export KUBECONFIG
echo "e2e: cluster ready, KUBECONFIG=$KUBECONFIG"
# Multus's kind, as on a cluster with Multus (the actor plays Multus's pod annotations):
# the tls scenario sets networkAttachments, as a default OpenStackControlPlane does.
kubectl apply --server-side -f tests/functional/testdata/crds/k8s.cni.cncf.io_network-attachment-definitions.yaml >/dev/null

mapfile -t image < <(hack/manager-image.sh "$root/bin/manager-image")
((${#image[@]} == 2)) || { echo "e2e: hack/manager-image.sh printed no archive and image" >&2; exit 1; }
hack/cluster.sh import "${image[0]}"
cat >"$overlay/kustomization.yaml" <<EOF
# Written by hack/e2e.sh: config/default with the image it built.
resources:
- ../../../config/default
images:
- name: keystone-operator
  newName: ${image[1]%:*}
  newTag: ${image[1]##*:}
labels:
- pairs:
    ${label%=*}: ${label#*=}
EOF
installed=true
# Server-side, as make deploy applies it: the fields an earlier apply or make deploy wrote are
# taken over (--force-conflicts), and no last-applied annotation is kept.
kubectl apply --server-side --force-conflicts -k "$overlay" >"$logs/apply.log"
kubectl -n "$operator_ns" rollout status "deploy/$deployment" --timeout=180s
echo "e2e: the operator runs in the cluster (image ${image[1]})"

# A run that was interrupted (the machine stopped mid-way) leaves its kuttl namespaces
# and the metrics check's account in the cluster's kept state: they go first, now that
# the operator runs to release their finalizers.
leftover=$(kuttl_namespaces)
if [[ -n $leftover ]]; then
	echo "e2e: deleting what an interrupted run left:" $leftover
	# shellcheck disable=SC2086 # one argument per name
	kubectl delete $leftover --wait=false >/dev/null
	wait_until "the namespaces an interrupted run left to be deleted" 300 0 "$logs/kuttl-namespaces.txt" no_kuttl_namespaces
fi
kubectl -n "$operator_ns" delete serviceaccount metrics-e2e --ignore-not-found >/dev/null
kubectl delete clusterrolebinding keystone-operator-metrics-e2e --ignore-not-found >/dev/null

# metrics_answer TOKEN prints the HTTP status of GET /metrics on the operator's HTTPS
# metrics Service with TOKEN (none when empty), and keeps the body in $logs/metrics.txt.
metrics_answer() {
	local ip auth=()
	ip=$(kubectl -n "$operator_ns" get service keystone-stepwise-controller-manager-metrics-service -o jsonpath='{.spec.clusterIP}')
	[[ -n $1 ]] && auth=(-H "Authorization: Bearer $1")
	curl -sk --max-time 10 -o "$logs/metrics.txt" -w '%{http_code}' "${auth[@]}" "https://$ip:8443/metrics"
}
# The metrics endpoint answers a caller granted config/rbac's metrics-reader (the
# operator's TokenReview and SubjectAccessReview permissions at work) and no one else.
kubectl -n "$operator_ns" create serviceaccount metrics-e2e >/dev/null
kubectl create clusterrolebinding keystone-operator-metrics-e2e --clusterrole=keystone-stepwise-metrics-reader \
	--serviceaccount="$operator_ns:metrics-e2e" >/dev/null
kubectl label clusterrolebinding keystone-operator-metrics-e2e "$label" >/dev/null
token=$(kubectl -n "$operator_ns" create token metrics-e2e --duration=10m)
wait_until "the metrics endpoint to answer the metrics-reader" 60 0 /dev/null \
	eval '[[ $(metrics_answer "$token") == 200 ]]'
grep -q '^controller_runtime_reconcile_total{controller="keystoneapi"' "$logs/metrics.txt" ||
	{ echo "e2e: /metrics has no reconcile count of the keystoneapi controller" >&2; exit 1; }
code=$(metrics_answer "")
[[ $code == 401 ]] || { echo "e2e: /metrics without a token answered $code, want 401" >&2; exit 1; }
echo "e2e: metrics over HTTPS answer the metrics-reader (200) and refuse anonymous callers (401)"

cd tests/e2e
"$kuttl" test --config kuttl-test.yaml "$@" 2>&1 | tee "$logs/kuttl.log"
