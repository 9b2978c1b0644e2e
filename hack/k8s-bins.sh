#!/usr/bin/env bash
# Builds Kubernetes binaries from the Go module proxy, because the usual download
# buckets are not reachable here. A directory that already holds every binary of a set
# is left as it is, so a warm run takes milliseconds. Prints the directory.
#   k8s-bins.sh OUT_ROOT envtest  etcd, kube-apiserver, kubectl (KUBEBUILDER_ASSETS)
#   k8s-bins.sh OUT_ROOT node     kubelet, kube-controller-manager, kube-scheduler,
#                                 kube-proxy, CoreDNS and a pause binary for the local cluster
set -euo pipefail

out_root=${1:?usage: k8s-bins.sh OUT_ROOT envtest|node}
set_name=${2:-envtest}
k8s_version=${K8S_VERSION:-v1.31.14}
etcd_version=${ETCD_VERSION:-v3.5.21}
coredns_version=${COREDNS_VERSION:-v1.11.3}
here=$(cd "$(dirname "$0")" && pwd)

case $set_name in
envtest)
	dest="$out_root/k8s-$k8s_version-etcd-$etcd_version"
	k8s_cmds=(kube-apiserver kubectl)
	others=(etcd)
	;;
node)
	dest="$out_root/node-$k8s_version-coredns-$coredns_version"
	k8s_cmds=(kubelet kube-controller-manager kube-scheduler kube-proxy)
	others=(coredns pause)
	;;
*)
	echo "k8s-bins: unknown set $set_name (envtest or node)" >&2
	exit 2
	;;
esac

missing=false
for b in "${k8s_cmds[@]}" "${others[@]}"; do
	[[ -x $dest/$b ]] || missing=true
done
if ! $missing; then
	echo "$dest"
	exit 0
fi
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

log() { echo "k8s-bins: $*" >&2; }

# The staging modules (k8s.io/api, ...) are pinned by k8s.io/kubernetes' go.mod to
# ./staging paths; a throwaway module replaces each with its published
# v0.<minor>.<patch> twin. The proxy refuses six of them at v0.31.13 and v0.31.14
# (403); only the node binaries import those, and their v0.31.0 builds work.
staging_version="v0${k8s_version#v1}"
refused="k8s.io/cri-client k8s.io/csi-translation-lib k8s.io/endpointslice k8s.io/kube-controller-manager k8s.io/kube-proxy k8s.io/kube-scheduler"
build_k8s() {
	local mod="$work/k8s"
	mkdir -p "$mod"
	cd "$mod"
	go mod init local-k8s >/dev/null 2>&1
	local gomod
	gomod=$(go mod download -json "k8s.io/kubernetes@$k8s_version" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
	sed -n '/^replace (/,/^)/p' "$gomod" | awk -v v="$staging_version" -v refused="$refused" -v fallback="${staging_version%.*}.0" '
		BEGIN { n = split(refused, r, " "); for (i = 1; i <= n; i++) old[r[i]] = 1 }
		$2 == "=>" && $3 ~ /^\.\/staging/ { print "replace " $1 " => " $1 " " (($1 in old) ? fallback : v) }' >>go.mod
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
	for cmd in "${k8s_cmds[@]}"; do
		[[ -x $dest/$cmd ]] && continue
		log "building $cmd $k8s_version (minutes when the build cache is cold)"
		GOFLAGS=-mod=mod go build -ldflags "$ldflags" -o "$dest/$cmd" "k8s.io/kubernetes/cmd/$cmd"
	done
}

build_etcd() {
	local mod="$work/etcd"
	mkdir -p "$mod"
	cd "$mod"
	go mod init local-etcd >/dev/null 2>&1
	log "building etcd $etcd_version"
	GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@$etcd_version" >/dev/null
	GOFLAGS=-mod=mod go build -ldflags "-s -w" -o "$dest/etcd" go.etcd.io/etcd/server/v3
}

# CoreDNS with only the plugins a cluster needs (no upstream forwarding: there is no
# upstream to forward to here).
build_coredns() {
	local mod="$work/coredns"
	mkdir -p "$mod"
	cd "$mod"
	go mod init local-coredns >/dev/null 2>&1
	cat >main.go <<'GO'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// In the order of CoreDNS's plugin.cfg.
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "cache", "kubernetes"}
}

func main() { coremain.Run() }
GO
	log "building coredns $coredns_version"
	GOFLAGS=-mod=mod go get "github.com/coredns/coredns@$coredns_version" >/dev/null
	GOFLAGS=-mod=mod go mod tidy >/dev/null
	GOFLAGS=-mod=mod go build -ldflags "-s -w" -o "$dest/coredns" .
}

build_pause() {
	log "building pause"
	(cd "$here/.." && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$dest/pause" ./hack/pause)
}

for b in "${others[@]}"; do
	[[ -x $dest/$b ]] || "build_$b"
done
for cmd in "${k8s_cmds[@]}"; do
	if [[ ! -x $dest/$cmd ]]; then
		build_k8s
		break
	fi
done
echo "$dest"
