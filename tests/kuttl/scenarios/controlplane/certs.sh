#!/usr/bin/env bash
# cert-manager's part, played with openssl: a CA, a certificate per interface for its
# Service's name, and openstack-operator's combined CA bundle. Then the KeystoneAPI.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=rootca-internal \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
for iface in public internal; do
  host=keystone-$iface.$NAMESPACE.svc
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$host" \
    -keyout "$dir/$iface.key" -out "$dir/$iface.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n' "$host" >"$dir/$iface.ext"
  openssl x509 -req -in "$dir/$iface.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 1 \
    -extfile "$dir/$iface.ext" -out "$dir/$iface.crt" 2>/dev/null
  kubectl -n "$NAMESPACE" create secret tls cert-keystone-$iface-svc --cert "$dir/$iface.crt" --key "$dir/$iface.key"
done
kubectl -n "$NAMESPACE" create secret generic combined-ca-bundle --from-file=tls-ca-bundle.pem="$dir/ca.crt"
kubectl -n "$NAMESPACE" apply -f ../../../../config/samples/osp-secret.yaml -f keystoneapi.yaml
