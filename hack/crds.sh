#!/usr/bin/env bash
# Collects into DIR the CRDs the operator needs on a cluster: its own, and the
# MariaDBDatabase, MariaDBAccount, Memcached, TransportURL and Topology CRDs from the dependencies' Go modules.
set -euo pipefail
dir=${1:?usage: crds.sh DIR}
cd "$(dirname "$0")/.."
rm -rf "$dir" && mkdir -p "$dir"
cp config/crd/bases/*.yaml "$dir/"
# module_dir MODULE is where MODULE of go.mod is, downloaded first on a fresh machine
# (go list -m names no directory for a module not in the module cache yet).
module_dir() {
	local dir
	dir=$(go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	if [[ -z $dir ]]; then
		echo "crds.sh: go mod download $1 gave no directory" >&2
		return 1
	fi
	echo "$dir"
}
mariadb=$(module_dir github.com/openstack-k8s-operators/mariadb-operator/api)
infra=$(module_dir github.com/openstack-k8s-operators/infra-operator/apis)
cp "$mariadb/bases/mariadb.openstack.org_mariadbdatabases.yaml" "$mariadb/bases/mariadb.openstack.org_mariadbaccounts.yaml" \
	"$infra/bases/memcached.openstack.org_memcacheds.yaml" "$infra/bases/rabbitmq.openstack.org_transporturls.yaml" \
	"$infra/bases/topology.openstack.org_topologies.yaml" "$dir/"
chmod u+w "$dir"/*
