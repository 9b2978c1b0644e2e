#!/usr/bin/env bash
# Plays MetalLB (the internal LoadBalancer gets its address), the Job controller for
# the bootstrap, the Deployment controller; checks what the pods serve, then waits for
# Ready as a user would.
set -euo pipefail
kubectl -n "$NAMESPACE" patch service keystone-internal --subresource=status --type=merge \
  -p '{"status":{"loadBalancer":{"ingress":[{"ip":"172.17.0.80"}]}}}'
../../actors.sh job_succeeded keystone-bootstrap
../../actors.sh rolled_out keystone 1
kubectl -n "$NAMESPACE" wait --for=condition=Ready keystoneapi/keystone --timeout=30s
internal=$(kubectl -n "$NAMESPACE" get keystoneapi keystone -o jsonpath='{.status.apiEndpoints.internal}')
test "$internal" = "https://keystone-internal.$NAMESPACE.svc:5000" || { echo "internal endpoint: $internal"; exit 1; }
conf=$(kubectl -n "$NAMESPACE" get secret keystone-config-data -o jsonpath='{.data.httpd\.conf}' | base64 -d)
grep -q 'SSLCertificateFile "/var/lib/config-data/tls/certs/internal.crt"' <<<"$conf" || { echo "httpd.conf has no internal certificate"; exit 1; }
ks=$(kubectl -n "$NAMESPACE" get secret keystone-config-data -o jsonpath='{.data.keystone\.conf}' | base64 -d)
grep -q '^transport_url = rabbit://' <<<"$ks" || { echo "keystone.conf sends no notifications"; exit 1; }
grep -q '^enforce_scope = true' <<<"$ks" || { echo "keystone.conf does not enforce scopes"; exit 1; }
