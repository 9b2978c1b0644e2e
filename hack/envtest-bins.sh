#!/usr/bin/env bash
# Builds the envtest binaries (etcd, kube-apiserver, kubectl) from the Go module
# proxy into $1/<k8s-version>, because setup-envtest's download bucket is not
# reachable here. A directory that already holds all three is left as it is, so a
# warm run takes milliseconds. Prints the directory for KUBEBUILDER_ASSETS.
set -euo pipefail

out_root=${1:?usage: envtest-bins.sh OUT_ROOT}
k8s_version=${K8S_VERSION:-v1.31.14}
etcd_version=${ETCD_VERSION:-v3.5.21}
dest="$out_root/k8s-$k8s_version-etcd-$etcd_version"

if [[ -x $dest/kube-apiserver && -x $dest/kubectl && -x $dest/etcd ]]; then
	echo "$dest"
	exit 0
fi
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

log() { echo "envtest-bins: $*" >&2; }

# The staging modules (k8s.io/api, ...) are pinned by k8s.io/kubernetes' go.mod
# to ./staging paths; a throwaway module replaces each with its published
# v0.<minor>.<patch> twin.
staging_version="v0${k8s_version#v1}"
build_k8s() {
	local mod="$work/k8s"
	mkdir -p "$mod"
	cd "$mod"
	go mod init envtest-k8s >/dev/null 2>&1
	local gomod
	gomod=$(go mod download -json "k8s.io/kubernetes@$k8s_version" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
	{
		sed -n '/^replace (/,/^)/p' "$gomod" | awk '$2 == "=>" && $3 ~ /^\.\/staging/ {print "replace " $1 " => " $1 " '"$staging_version"'"}'
	} >>go.mod
	# The checksum database lacks entries for a few staging modules of 1.31.x.
	export GONOSUMDB="k8s.io/cluster-bootstrap,k8s.io/dynamic-resource-allocation,k8s.io/kube-aggregator,k8s.io/pod-security-admission"
	GOFLAGS=-mod=mod go get "k8s.io/kubernetes@$k8s_version" >/dev/null
	local major=${k8s_version#v}
	major=${major%%.*}
	local minor=${k8s_version#v*.}
	minor=${minor%%.*}
	local ldflags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
	done
	for cmd in kube-apiserver kubectl; do
		log "building $cmd $k8s_version (minutes when the build cache is cold)"
		GOFLAGS=-mod=mod go build -ldflags "$ldflags" -o "$dest/$cmd" "k8s.io/kubernetes/cmd/$cmd"
	done
}

build_etcd() {
	local mod="$work/etcd"
	mkdir -p "$mod"
	cd "$mod"
	go mod init envtest-etcd >/dev/null 2>&1
	log "building etcd $etcd_version"
	GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@$etcd_version" >/dev/null
	GOFLAGS=-mod=mod go build -ldflags "-s -w" -o "$dest/etcd" go.etcd.io/etcd/server/v3
}

[[ -x $dest/etcd ]] || build_etcd
[[ -x $dest/kube-apiserver && -x $dest/kubectl ]] || build_k8s
echo "$dest"
