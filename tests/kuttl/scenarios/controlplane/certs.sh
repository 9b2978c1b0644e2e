#!/usr/bin/env bash
# cert-manager's part, played with openssl (hack/test-certs.sh), then the KeystoneAPI.
set -euo pipefail
../../../../hack/test-certs.sh issue "$NAMESPACE"
kubectl -n "$NAMESPACE" apply -f ../../../../config/samples/osp-secret.yaml -f keystoneapi.yaml
