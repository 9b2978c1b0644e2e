#!/usr/bin/env bash
# Row 11 of BENCHMARKS.md: Keystone answering through every change, on the local cluster
# where Keystone's pods really run. Starts what `make run` needs (bin/devrun
# -manager=false: the cluster unless it runs already, the CRDs, the actor that plays
# mariadb-operator and infra-operator with real pods), runs tests/bench/disruption against
# it (the operator runs in the test, which restarts and upgrades it), and stops what it
# started. It writes bin/bench-row11.json for make bench's report.
# Logs: bin/bench-disruption/ (devrun.log, test.log).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=hack/lib.sh
source hack/lib.sh
logs=$root/bin/bench-disruption
mkdir -p "$logs"
rm -f bin/bench-row11.json

env -u KUBECONFIG bin/devrun -local=cluster -manager=false -actor="$root/bin/e2e-actor" >"$logs/devrun.log" 2>&1 &
devrun=$!
trap 'stop_pids 120 "$devrun"' EXIT
wait_until "the local cluster (devrun's kubeconfig hint)" 900 "$devrun" "$logs/devrun.log" \
	contains "$logs/devrun.log" "export KUBECONFIG="
kubeconfig=$(sed -n 's/^ *export KUBECONFIG=//p' "$logs/devrun.log" | head -n 1)
echo "bench-disruption: cluster up (KUBECONFIG=$kubeconfig)"
BENCH_KUBECONFIG=$kubeconfig go test -tags bench -count=1 -timeout 120m -v ./tests/bench/disruption -run TestDisruption 2>&1 |
	tee "$logs/test.log"
