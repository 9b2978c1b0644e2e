#!/usr/bin/env bash
# Installs Debian packages unless they are there already. apt-get starts no service
# here: the tests start their own servers and stop them afterwards.
#   debian-deps.sh [keystone]  what the real-Keystone tests run: keystone, uwsgi, MariaDB, memcached,
#                              and openssl for the kuttl scenarios' certificates
#   debian-deps.sh cluster     what the local Kubernetes node runs: containerd, runc, the CNI
#                              plugins, iptables and conntrack, debootstrap and buildah for its
#                              images and the manager's, and curl and python3 for the
#                              end-to-end checks
#   debian-deps.sh image       buildah and debootstrap, which build the manager image
#                              (hack/manager-image.sh)
#   debian-deps.sh monitoring  promtool (Debian's prometheus package), which tests the alerts
set -euo pipefail

case ${1:-keystone} in
keystone) packages=(keystone uwsgi-plugin-python3 python3-pymemcache python3-openstackclient mariadb-server mariadb-client memcached openssl) ;;
cluster) packages=(containerd runc containernetworking-plugins iptables conntrack debootstrap buildah openssl curl python3) ;;
image) packages=(buildah debootstrap) ;;
monitoring) packages=(prometheus) ;;
*)
	echo "debian-deps: unknown group $1 (keystone, cluster, image or monitoring)" >&2
	exit 2
	;;
esac
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "debian-deps: missing ${missing[*]}; run as root or: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "debian-deps: installing ${missing[*]} (about 2 minutes)" >&2
export DEBIAN_FRONTEND=noninteractive
# Never start the packaged services: tests run their own.
policy=/usr/sbin/policy-rc.d
created_policy=false
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=true
fi
trap '$created_policy && rm -f "$policy"' EXIT
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
