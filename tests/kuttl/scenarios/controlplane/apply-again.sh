#!/usr/bin/env bash
# openstack-operator applies the same object on every reconcile: nothing changes, not
# the generation, and the operator writes nothing (resource versions unchanged).
set -euo pipefail
versions() {
  kubectl -n "$NAMESPACE" get keystoneapi/keystone deployment/keystone service/keystone-public service/keystone-internal \
    cronjob/keystone-cron secret/keystone-config-data transporturl/keystone-keystone-transport \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} gen {.metadata.generation}{"\n"}{end}'
}
before=$(versions)
kubectl -n "$NAMESPACE" apply -f keystoneapi.yaml
sleep 5
after=$(versions)
if [ "$before" != "$after" ]; then
  echo "a second apply changed something:"; diff <(echo "$before") <(echo "$after") || true; exit 1
fi
echo "$after"
