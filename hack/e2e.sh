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
	kill -INT "$devrun" 2>/dev/null || true
	wait "$devrun" 2>/dev/null || true
	exit "$rc"
}
trap finish EXIT

# devrun prints the kubeconfig once the cluster is up and the CRDs are installed.
KUBECONFIG=
for _ in $(seq 3000); do
	KUBECONFIG=$(sed -n 's/^ *export KUBECONFIG=//p' "$logs/manager.log" | head -n 1)
	[[ -n $KUBECONFIG ]] && break
	kill -0 "$devrun" 2>/dev/null || { echo "e2e: devrun exited before the cluster was up" >&2; exit 1; }
	sleep 0.2
done
[[ -n $KUBECONFIG ]] || { echo "e2e: the cluster did not come up in 10 minutes" >&2; exit 1; }
export KUBECONFIG
echo "e2e: cluster ready, KUBECONFIG=$KUBECONFIG"

cd tests/e2e
"$kuttl" test --config kuttl-test.yaml "$@" 2>&1 | tee "$logs/kuttl.log"
