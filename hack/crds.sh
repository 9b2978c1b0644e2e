#!/usr/bin/env bash
# Collects into DIR the CRDs the operator needs on a cluster: its own, and the
# MariaDBDatabase, MariaDBAccount, Memcached, TransportURL and Topology CRDs from the dependencies' Go modules.
set -euo pipefail
dir=${1:?usage: crds.sh DIR}
cd "$(dirname "$0")/.."
rm -rf "$dir" && mkdir -p "$dir"
cp config/crd/bases/*.yaml "$dir/"
mariadb=$(go list -m -f '{{.Dir}}' github.com/openstack-k8s-operators/mariadb-operator/api)
infra=$(go list -m -f '{{.Dir}}' github.com/openstack-k8s-operators/infra-operator/apis)
cp "$mariadb/bases/mariadb.openstack.org_mariadbdatabases.yaml" "$mariadb/bases/mariadb.openstack.org_mariadbaccounts.yaml" \
	"$infra/bases/memcached.openstack.org_memcacheds.yaml" "$infra/bases/rabbitmq.openstack.org_transporturls.yaml" \
	"$infra/bases/topology.openstack.org_topologies.yaml" "$dir/"
chmod u+w "$dir"/*
