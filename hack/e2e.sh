#!/usr/bin/env bash
# Runs the end-to-end scenarios (tests/e2e/scenarios) on the local single-node cluster:
# starts it unless it runs already, installs the CRDs, runs the operator built from
# this tree (bin/manager) and the test actor that plays mariadb-operator and
# infra-operator (bin/e2e-actor) on the host, then kuttl. Stops what it started; a
# cluster that was already running is left running. Logs: bin/e2e/.
# Usage: e2e.sh KUTTL_BINARY [kuttl test args]
set -euo pipefail
kuttl=${1:?usage: e2e.sh KUTTL_BINARY [kuttl test args]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
logs=bin/e2e
mkdir -p "$logs"

pids=()
started_cluster=false
finish() {
	local rc=$?
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	if ((rc != 0)); then
		echo "e2e: failed; the operator's last words (all in $root/$logs/manager.log):" >&2
		tail -n 20 "$root/$logs/manager.log" >&2 || true
	fi
	if $started_cluster; then "$root/hack/cluster.sh" down; fi
	exit "$rc"
}
trap finish EXIT

status=$(hack/cluster.sh status 2>/dev/null || true)
[[ $status == *"kubelet running"* ]] || started_cluster=true
KUBECONFIG=$(hack/cluster.sh up)
export KUBECONFIG
echo "e2e: cluster ready, KUBECONFIG=$KUBECONFIG"

hack/crds.sh "$logs/crds"
kubectl apply --server-side --force-conflicts -f "$logs/crds" >/dev/null
kubectl wait --for=condition=Established crd --all --timeout=60s >/dev/null

bin/manager --metrics-bind-address=0 --health-probe-bind-address=0 --cluster-dns=10.244.0.1:53 >"$logs/manager.log" 2>&1 &
pids+=($!)
bin/e2e-actor >"$logs/actor.log" 2>&1 &
pids+=($!)

cd tests/e2e
"$kuttl" test --config kuttl-test.yaml "$@" 2>&1 | tee "$root/$logs/kuttl.log"
