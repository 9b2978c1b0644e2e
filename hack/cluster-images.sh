#!/usr/bin/env bash
# Builds the local cluster's images from Debian with debootstrap (hack/debian-base.sh,
# hack/images/<name>), packs each as an OCI archive with buildah (hack/buildah.sh), and
# imports it into the cluster's containerd.
# Archives are cached by a digest of their recipe; an image containerd already holds
# with the same digest is not imported again, so a warm run takes a second.
# Usage: cluster-images.sh CONTAINERD_ADDRESS PAUSE_BINARY
set -euo pipefail

address=${1:?usage: cluster-images.sh CONTAINERD_ADDRESS PAUSE_BINARY}
pause_bin=${2:?usage: cluster-images.sh CONTAINERD_ADDRESS PAUSE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/buildah.sh
source "$here/buildah.sh"
recipes=$here/images
cache=${IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/keystone-stepwise/images}
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache"

log() { echo "cluster-images: $*" >&2; }
ctr_() { ctr --address "$address" -n k8s.io "$@"; }

# The names each image is imported under. The Keystone image also carries the upstream
# name that config/samples uses, so that the samples run unchanged on this cluster.
declare -A refs=(
	[pause]="localhost/keystone-stepwise/pause:1"
	[keystone]="localhost/keystone-stepwise/keystone:$suite quay.io/podified-antelope-centos9/openstack-keystone:current-podified"
	[mariadb]="localhost/keystone-stepwise/mariadb:$suite"
	[memcached]="localhost/keystone-stepwise/memcached:$suite"
	[rabbitmq]="localhost/keystone-stepwise/rabbitmq:$suite"
)

# Cache keys: bump format when the way images are built or packed changes (2: packed by
# buildah); a recipe's files are part of its image's key.
format=2
format_key=$( (echo "$suite $mirror $format"; sha256sum <"$here/debian-base.sh") | sha256sum | cut -c1-12)
recipe_key() {
	(cd "$recipes/$1" && find . -type f | LC_ALL=C sort | xargs sha256sum; echo "$format_key") | sha256sum | cut -c1-12
}

mounted=()
cleanup() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
	[[ -n ${work:-} ]] && rm -rf "$work"
}
trap cleanup EXIT
work=$(mktemp -d "${TMPDIR:-/var/tmp}/cluster-images.XXXXXX")

# rootfs NAME DIR fills DIR with the image's file system.
rootfs() {
	local name=$1 root=$2 recipe=$recipes/$1
	if [[ $name == pause ]]; then
		install -D -m 0755 "$pause_bin" "$root/pause"
		return
	fi
	tar -C "$root" -xf "$("$here/debian-base.sh")"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	if [[ -d /etc/apt/sources.list.d ]]; then
		cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null && rm -f "$root/etc/apt/sources.list" || true
	fi
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod +x "$root/usr/sbin/policy-rc.d"
	mount -t proc proc "$root/proc" && mounted+=("$root/proc")
	log "$name: installing $(tr '\n' ' ' <"$recipe/packages")"
	chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -c \
		"apt-get update -qq && apt-get install -y -qq --no-install-recommends $(tr '\n' ' ' <"$recipe/packages")" \
		>"$work/$name-apt.log" 2>&1 || { tail -30 "$work/$name-apt.log" >&2; return 1; }
	local f
	for f in "$recipe"/*; do
		case $(basename "$f") in packages | entrypoint | setup) ;; *) install -m 0755 "$f" "$root/usr/local/bin/" ;; esac
	done
	if [[ -f $recipe/setup ]]; then
		install -m 0755 "$recipe/setup" "$root/tmp/setup"
		chroot "$root" /tmp/setup
		rm -f "$root/tmp/setup"
	fi
	chroot "$root" apt-get clean
	umount "$root/proc"
	rm -rf "$root"/var/lib/apt/lists/* "$root/usr/sbin/policy-rc.d" "$root/etc/resolv.conf"
	: >"$root/etc/resolv.conf"
}

# oci DIR OUT NAME packs DIR as the image NAME's archive OUT (hack/buildah.sh).
oci() {
	local entrypoint='["/pause"]'
	[[ -f $recipes/$3/entrypoint ]] && entrypoint=$(cat "$recipes/$3/entrypoint")
	image_archive "$1" "${refs[$3]%% *}" "$entrypoint" "" "$2"
}

for name in pause mariadb memcached rabbitmq keystone; do
	if [[ $name == pause ]]; then
		key=$( (sha256sum "$pause_bin" | cut -d' ' -f1; echo "$format_key") | sha256sum | cut -c1-12)
	else
		key=$(recipe_key "$name")
	fi
	archive="$cache/$name-$key.tar"
	if [[ ! -s $archive || ! -s ${archive%.tar}.digest ]]; then
		start=$SECONDS
		root="$work/root-$name"
		mkdir -p "$root"
		rootfs "$name" "$root"
		oci "$root" "$archive" "$name"
		rm -rf "$root"
		log "$name: built in $((SECONDS - start)) s ($(du -h "$archive" | cut -f1))"
	fi
	digest=$(cat "${archive%.tar}.digest")
	read -r -a names <<<"${refs[$name]}"
	if ! ctr_ images ls | awk -v r="${names[0]}" -v d="$digest" '$1 == r && $3 == d {found=1} END {exit !found}'; then
		start=$SECONDS
		ctr_ images import "$archive" >/dev/null
		log "$name: imported in $((SECONDS - start)) s"
	fi
	for alias in "${names[@]:1}"; do
		ctr_ images tag --force "${names[0]}" "$alias" >/dev/null
	done
done
