#!/usr/bin/env bash
# Plays cert-manager and openstack-operator for TLS scenarios, with openssl: a CA (kept
# in the Secret test-root-ca of the namespace), a certificate per Keystone interface for
# its Service's name (cert-keystone-<interface>-svc), and the CA bundle
# (combined-ca-bundle, key tls-ca-bundle.pem).
#   test-certs.sh issue NAMESPACE            the CA, both certificates and the bundle
#   test-certs.sh renew NAMESPACE INTERFACE  a new certificate for INTERFACE, same CA
set -euo pipefail
command=${1:?usage: test-certs.sh issue|renew NAMESPACE [INTERFACE]}
ns=${2:?usage: test-certs.sh issue|renew NAMESPACE [INTERFACE]}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

apply_secret() { kubectl -n "$ns" create secret "$@" --dry-run=client -o yaml | kubectl -n "$ns" apply -f - >/dev/null; }

# certificate INTERFACE issues the interface's certificate with the CA in $dir.
certificate() {
	local iface=$1 host=keystone-$1.$ns.svc
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$host" \
		-keyout "$dir/$iface.key" -out "$dir/$iface.csr" 2>/dev/null
	printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n' "$host" >"$dir/$iface.ext"
	openssl x509 -req -in "$dir/$iface.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -set_serial "0x$(openssl rand -hex 8)" \
		-days 1 -extfile "$dir/$iface.ext" -out "$dir/$iface.crt" 2>/dev/null
	apply_secret tls "cert-keystone-$iface-svc" --cert "$dir/$iface.crt" --key "$dir/$iface.key"
	echo "test-certs: certificate of $host, serial $(openssl x509 -in "$dir/$iface.crt" -noout -serial | cut -d= -f2)"
}

case $command in
issue)
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=rootca-internal \
		-keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
	apply_secret tls test-root-ca --cert "$dir/ca.crt" --key "$dir/ca.key"
	apply_secret generic combined-ca-bundle --from-file=tls-ca-bundle.pem="$dir/ca.crt"
	certificate public
	certificate internal
	;;
renew)
	iface=${3:?usage: test-certs.sh renew NAMESPACE INTERFACE}
	kubectl -n "$ns" get secret test-root-ca -o jsonpath='{.data.tls\.crt}' | base64 -d >"$dir/ca.crt"
	kubectl -n "$ns" get secret test-root-ca -o jsonpath='{.data.tls\.key}' | base64 -d >"$dir/ca.key"
	certificate "$iface"
	;;
*)
	echo "test-certs: unknown command $command (issue or renew)" >&2
	exit 2
	;;
esac
