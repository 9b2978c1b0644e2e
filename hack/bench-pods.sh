#!/usr/bin/env bash
# Row 10 of BENCHMARKS.md: the sample KeystoneAPI on the local cluster, where Keystone's
# pods really run. Starts what `make run` starts (bin/devrun: the cluster unless it runs
# already, the CRDs, the operator on this machine and the actor that plays
# mariadb-operator and infra-operator with real pods), runs tests/bench/critical against
# it, and stops what it started. It writes bin/bench-row10.json for make bench's report.
# Logs: bin/bench-pods/ (devrun.log, the operator's and the actor's output).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=hack/lib.sh
source hack/lib.sh
logs=$root/bin/bench-pods
mkdir -p "$logs"
rm -f bin/bench-row10.json

# The local cluster, whatever KUBECONFIG names: the row is measured where make run runs.
env -u KUBECONFIG bin/devrun -local=cluster -actor="$root/bin/e2e-actor" \
	-metrics-bind-address=0 -health-probe-bind-address=0 >"$logs/devrun.log" 2>&1 &
devrun=$!
trap 'stop_pids 120 "$devrun"' EXIT
wait_until "the local cluster and the operator (devrun's kubeconfig hint)" 900 "$devrun" "$logs/devrun.log" \
	contains "$logs/devrun.log" "export KUBECONFIG="
kubeconfig=$(sed -n 's/^ *export KUBECONFIG=//p' "$logs/devrun.log" | head -n 1)
echo "bench-pods: cluster and operator up (KUBECONFIG=$kubeconfig)"
BENCH_KUBECONFIG=$kubeconfig go test -tags bench -count=1 -timeout 40m -v ./tests/bench/critical -run TestCriticalPath 2>&1 |
	tee "$logs/test.log"
