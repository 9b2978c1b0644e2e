#!/usr/bin/env bash
# Runs the end-to-end scenarios (tests/e2e/scenarios) on the local single-node cluster.
# bin/devrun does what `make run` does: starts the cluster unless it runs already,
# installs the CRDs, runs the operator built from this tree and the test actor that
# plays mariadb-operator and infra-operator (bin/e2e-actor); then kuttl runs. Stopping
# devrun stops what it started; a cluster that was already running keeps running.
# Logs: bin/e2e/ (the operator), bin/run/actor.log (the actor).
# Usage: e2e.sh KUTTL_BINARY [kuttl test args]
set -euo pipefail
kuttl=${1:?usage: e2e.sh KUTTL_BINARY [kuttl test args]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=hack/lib.sh
source hack/lib.sh
logs=$root/bin/e2e
mkdir -p "$logs"

bin/devrun -local=cluster -actor="$root/bin/e2e-actor" -metrics-bind-address=0 -health-probe-bind-address=0 \
	>"$logs/manager.log" 2>&1 &
devrun=$!
finish() {
	local rc=$?
	if ((rc != 0)); then
		echo "e2e: failed; the operator's last words (all in $logs/manager.log):" >&2
		tail -n 20 "$logs/manager.log" >&2 || true
	fi
	# Stopping the cluster it started takes devrun about 20 s.
	stop_pids 120 "$devrun"
	exit "$rc"
}
trap finish EXIT

# devrun prints the kubeconfig once the cluster is up and the CRDs are installed; from
# nothing (binaries built, images debootstrapped) that took 178 s.
wait_until "the local cluster (devrun's kubeconfig hint)" 900 "$devrun" "$logs/manager.log" \
	contains "$logs/manager.log" "export KUBECONFIG="
KUBECONFIG=$(sed -n 's/^ *export KUBECONFIG=//p' "$logs/manager.log" | head -n 1)
export KUBECONFIG
echo "e2e: cluster ready, KUBECONFIG=$KUBECONFIG"

cd tests/e2e
"$kuttl" test --config kuttl-test.yaml "$@" 2>&1 | tee "$logs/kuttl.log"
