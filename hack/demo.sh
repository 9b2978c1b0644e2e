#!/usr/bin/env bash
# make demo: the main job end to end on one machine. Starts a real Keystone (Debian's
# packages, on 127.0.0.1), a local control plane without nodes with the operator
# (make run's devrun, -local=control-plane: the demo needs no pods, no root, no node),
# registers image, compute and placement through an external KeystoneAPI, waits until
# everything is Ready, prints what kubectl and the openstack client see, and stops
# everything it started at the end or on Ctrl-C. DEMO_KEEP=1 keeps it running until Ctrl-C.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=hack/lib.sh
source hack/lib.sh
start=$(date +%s.%N)
# Logs stay in bin/demo for a look after a failure.
work=$root/bin/demo
rm -rf "$work" && mkdir -p "$work"
pids=()
cleanup() {
	local rc=$?
	if ((rc != 0)) && [[ -s $work/operator.log ]]; then
		echo "demo: failed; the operator's last words (all in $work/operator.log):" >&2
		tail -n 20 "$work/operator.log" >&2 || true
	fi
	echo "demo: stopping what it started"
	((${#pids[@]} == 0)) || stop_pids 60 "${pids[@]}"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

admin_password=demo-admin-secret
bin/localkeystone -admin-password "$admin_password" -url-file "$work/url" >"$work/keystone.log" 2>&1 &
keystone=$!
pids+=("$keystone")
bin/devrun -local=control-plane --metrics-bind-address=0 --health-probe-bind-address=0 >"$work/operator.log" 2>&1 &
operator=$!
pids+=("$operator")

# Keystone from an empty data dir serves in 12-22 s; the control plane starts in about 5 s.
wait_until "Keystone to serve" 180 "$keystone" "$work/keystone.log" nonempty "$work/url"
wait_until "the local control plane and the operator" 180 "$operator" "$work/operator.log" \
	contains "$work/operator.log" "local control plane is up"
export KUBECONFIG=$root/bin/run/kubeconfig
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
---
apiVersion: keystone.openstack.org/v1beta1
kind: KeystoneEndpoint
metadata: {name: $1, namespace: openstack}
spec:
  serviceName: $1
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
kubectl -n openstack wait --for=condition=Ready keystoneendpoint --all --timeout=180s
printf '\ndemo: everything Ready %.1f s after the start\n\n' "$(echo "$(date +%s.%N) - $start" | bc)"
kubectl -n openstack get keystoneapi,keystoneservice,keystoneendpoint
echo
openstack --os-auth-url "$url/v3" --os-username admin --os-password "$admin_password" --os-project-name admin \
	--os-user-domain-name Default --os-project-domain-name Default catalog list
if [[ ${DEMO_KEEP:-} == 1 ]]; then
	echo "demo: running; KUBECONFIG=$KUBECONFIG; Ctrl-C stops everything"
	while true; do sleep 3600; done
fi
