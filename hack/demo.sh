#!/usr/bin/env bash
# make demo: the main job end to end on one machine. Starts a real Keystone (Debian's
# packages, on 127.0.0.1), a local control plane with the operator (make run's devrun),
# registers image, compute and placement through an external KeystoneAPI, waits until
# everything is Ready, prints what kubectl and the openstack client see, and stops
# everything it started at the end or on Ctrl-C. DEMO_KEEP=1 keeps it running until Ctrl-C.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$(date +%s.%N)
work=$(mktemp -d)
pids=()
cleanup() {
	echo "demo: stopping what it started"
	for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

admin_password=demo-admin-secret
bin/localkeystone -admin-password "$admin_password" -url-file "$work/url" >"$work/keystone.log" 2>&1 &
pids+=($!)
bin/devrun --metrics-bind-address=0 --health-probe-bind-address=0 >"$work/operator.log" 2>&1 &
pids+=($!)

wait_file() {
	for _ in $(seq 900); do
		[[ -s $1 ]] && return 0
		sleep 0.2
	done
	echo "demo: $2 did not start; its log:" >&2
	cat "$3" >&2
	return 1
}
wait_file "$work/url" "Keystone" "$work/keystone.log"
export KUBECONFIG=$root/bin/run/kubeconfig
until grep -q "local control plane is up" "$work/operator.log"; do sleep 0.2; done
url=$(cat "$work/url")
echo "demo: Keystone at $url; operator on a local control plane (KUBECONFIG=$KUBECONFIG)"

kubectl create namespace openstack --dry-run=client -o yaml | kubectl apply -f - >/dev/null
service() { # name type user port
	cat <<YAML
---
apiVersion: keystone.openstack.org/v1beta1
kind: KeystoneService
metadata: {name: $1, namespace: openstack}
spec:
  serviceType: $2
  serviceName: $1
  serviceDescription: $1 service
  serviceUser: $3
  secret: osp-secret
  passwordSelector: ServicePassword
  endpoints:
    public: http://$1-public.openstack.svc:$4
    internal: http://$1-internal.openstack.svc:$4
YAML
}
{
	cat <<YAML
apiVersion: v1
kind: Secret
metadata: {name: osp-secret, namespace: openstack}
stringData: {AdminPassword: "$admin_password", ServicePassword: demo-service-secret}
---
apiVersion: keystone.openstack.org/v1beta1
kind: KeystoneAPI
metadata: {name: keystone, namespace: openstack}
spec:
  externalKeystoneAPI: true
  containerImage: unused-in-external-mode
  secret: osp-secret
  override:
    service:
      public: {endpointURL: "$url"}
      internal: {endpointURL: "$url"}
YAML
	service glance image glance 9292
	service nova compute nova 8774
	service placement placement placement 8778
} | kubectl apply -f -

kubectl -n openstack wait --for=condition=Ready keystoneapi/keystone --timeout=180s
kubectl -n openstack wait --for=condition=Ready keystoneservice --all --timeout=180s
printf '\ndemo: everything Ready %.1f s after the start\n\n' "$(echo "$(date +%s.%N) - $start" | bc)"
kubectl -n openstack get keystoneapi,keystoneservice
echo
openstack --os-auth-url "$url/v3" --os-username admin --os-password "$admin_password" --os-project-name admin \
	--os-user-domain-name Default --os-project-domain-name Default catalog list
if [[ ${DEMO_KEEP:-} == 1 ]]; then
	echo "demo: running; KUBECONFIG=$KUBECONFIG; Ctrl-C stops everything"
	while true; do sleep 3600; done
fi
