#!/usr/bin/env bash
# Runs the kuttl scenarios (tests/kuttl): kuttl starts its own etcd and kube-apiserver
# (KUBEBUILDER_ASSETS) and the operator built from this tree (bin/manager) beside them;
# a real Keystone from Debian's packages runs on 127.0.0.1 for the KeystoneService
# scenarios. Stops everything it started.
set -euo pipefail
kuttl=${1:?usage: kuttl.sh KUTTL_BINARY [kuttl test args]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=hack/lib.sh
source hack/lib.sh

hack/crds.sh bin/kuttl/crds
# KUTTL_CRDS=upstream installs keystone-operator's own CRD files (of the API module the
# conformance suite pins) in place of this suite's, as openstack-operator does.
if [[ ${KUTTL_CRDS:-ours} == upstream ]]; then
	upstream=$(cd tests/conformance && GONOSUMDB='github.com/openstack-k8s-operators/*' \
		go list -m -f '{{.Dir}}' github.com/openstack-k8s-operators/keystone-operator/api)
	rm -f bin/kuttl/crds/keystone.openstack.org_*.yaml
	cp "$upstream"/bases/keystone.openstack.org_*.yaml bin/kuttl/crds/
	chmod u+w bin/kuttl/crds/*
	echo "kuttl.sh: keystone-operator's CRDs from $upstream"
fi

export KEYSTONE_ADMIN_PASSWORD=kuttl-admin-secret
url_file=bin/kuttl/keystone-url
rm -f "$url_file"
bin/localkeystone -admin-password "$KEYSTONE_ADMIN_PASSWORD" -url-file "$url_file" >bin/kuttl/localkeystone.log 2>&1 &
keystone_pid=$!
trap 'stop_pids 60 $keystone_pid' EXIT
wait_until "the real Keystone" 180 "$keystone_pid" bin/kuttl/localkeystone.log nonempty "$url_file"
KEYSTONE_URL=$(cat "$url_file")
export KEYSTONE_URL
echo "kuttl.sh: real Keystone at $KEYSTONE_URL"

# kubectl for the scenarios' commands: the one built for envtest; and the plugin
# kubectl keystone (bin/kubectl-keystone), found by kubectl on PATH.
mkdir -p bin/kuttl/plugins
ln -sf "$root/bin/kubectl-keystone" bin/kuttl/plugins/kubectl-keystone
export PATH="$root/bin/kuttl/plugins:$KUBEBUILDER_ASSETS:$PATH"
cd tests/kuttl
"$kuttl" test --config kuttl-test.yaml "$@"
