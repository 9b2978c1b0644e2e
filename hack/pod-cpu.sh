#!/usr/bin/env bash
# pod-cpu.sh [SECONDS] [NAME-PREFIX]: on the local cluster's node (root), prints about
# once a second, for SECONDS (default 300), the processor time each pod whose name starts
# with NAME-PREFIX (default keystone-) used since the last line, read from its cgroup
# (v1 cpuacct or v2 cpu.stat), with its Ready status and deletion time, and the node's
# processors in use (/proc/stat). docs/benchmarks.md (what bounds row 11) used it beside
# make bench-disruption: `hack/pod-cpu.sh 600 > pod-cpu.log &`.
set -euo pipefail
limit=${1:-300}
prefix=${2:-keystone-}
root=$(cd "$(dirname "$0")/.." && pwd)
kubectl=${KUBECTL:-$(ls "$root"/bin/k8s-*/kubectl | head -n 1)}
export KUBECONFIG=${KUBECONFIG:-/var/lib/keystone-stepwise-cluster/admin.kubeconfig}

# usage_ns UID prints the processor time of pod UID's cgroup in nanoseconds, nothing when
# it has none (yet, or any more).
usage_ns() {
	local d
	for d in /sys/fs/cgroup/cpuacct/kubepods/pod"$1" /sys/fs/cgroup/cpuacct/kubepods/*/pod"$1"; do
		[[ -r $d/cpuacct.usage ]] && { cat "$d/cpuacct.usage"; return; }
	done
	for d in /sys/fs/cgroup/kubepods.slice/kubepods-pod"${1//-/_}".slice \
		/sys/fs/cgroup/kubepods.slice/kubepods-*.slice/kubepods-*-pod"${1//-/_}".slice \
		/sys/fs/cgroup/kubepods/pod"$1" /sys/fs/cgroup/kubepods/*/pod"$1"; do
		[[ -r $d/cpu.stat ]] && { awk '$1 == "usage_usec" { print $2 * 1000 }' "$d/cpu.stat"; return; }
	done
	return 0 # no cgroup: the pod has none yet, or none any more
}

# node_busy prints the node's processor time in use and in all, in clock ticks.
node_busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
}

declare -A last
read -r busy0 total0 < <(node_busy)
end=$((SECONDS + limit))
while ((SECONDS < end)); do
	pods=$("$kubectl" get pods -A -o jsonpath='{range .items[*]}{.metadata.uid} {.metadata.name} {.metadata.deletionTimestamp}{range .status.conditions[?(@.type=="Ready")]} ready={.status}{end}{"\n"}{end}')
	line=$(date +%T)
	while read -r uid name rest; do
		[[ -n $uid && $name == "$prefix"* ]] || continue
		# A pod that goes between the listing and the read has no cgroup to read.
		used=$(usage_ns "$uid" 2>/dev/null) || continue
		[[ -n $used ]] || continue
		before=${last[$uid]:-$used}
		last[$uid]=$used
		line+=" $name:$(((used - before) / 1000000))ms[$rest]"
	done <<<"$pods"
	read -r busy total < <(node_busy)
	line+=" node:$(awk -v b=$((busy - busy0)) -v t=$((total - total0)) -v n="$(nproc)" 'BEGIN { printf "%.2f", t ? b / t * n : 0 }')"
	busy0=$busy total0=$total
	echo "$line"
	sleep 1
done
