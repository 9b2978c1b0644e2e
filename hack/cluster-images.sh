#!/usr/bin/env bash
# Builds the local cluster's images from Debian with debootstrap (hack/images/<name>),
# packs each as a one-layer OCI archive, and imports it into the cluster's containerd.
# Archives are cached by a digest of their recipe; an image containerd already holds
# with the same digest is not imported again, so a warm run takes a second.
# Usage: cluster-images.sh CONTAINERD_ADDRESS PAUSE_BINARY
set -euo pipefail

address=${1:?usage: cluster-images.sh CONTAINERD_ADDRESS PAUSE_BINARY}
pause_bin=${2:?usage: cluster-images.sh CONTAINERD_ADDRESS PAUSE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
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
)

# Cache keys: bump format when the way images are built or packed changes; a recipe's
# files are part of its image's key.
format=1
base_key=$(echo "$suite $mirror $format" | sha256sum | cut -c1-12)
recipe_key() {
	(cd "$recipes/$1" && find . -type f | LC_ALL=C sort | xargs sha256sum; echo "$base_key") | sha256sum | cut -c1-12
}

mounted=()
cleanup() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
	[[ -n ${work:-} ]] && rm -rf "$work"
}
trap cleanup EXIT
work=$(mktemp -d "${TMPDIR:-/var/tmp}/cluster-images.XXXXXX")

# base prints a tarball of a minimal bookworm, built once per version of this script.
base() {
	local tarball="$cache/base-$suite-$base_key.tar"
	if [[ ! -s $tarball ]]; then
		log "debootstrap $suite minbase (about 1.5 minutes)"
		local root="$work/base"
		debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
			{ tail -20 "$work/debootstrap.log" >&2; return 1; }
		tar --numeric-owner -C "$root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
		rm -rf "$root"
	fi
	echo "$tarball"
}

# rootfs NAME DIR fills DIR with the image's file system.
rootfs() {
	local name=$1 root=$2 recipe=$recipes/$1
	if [[ $name == pause ]]; then
		install -D -m 0755 "$pause_bin" "$root/pause"
		return
	fi
	tar -C "$root" -xf "$(base)"
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

# oci DIR OUT NAME packs DIR as a one-layer OCI image archive OUT.
oci() {
	local root=$1 out=$2 name=$3 layout="$work/oci-$3"
	local entrypoint='["/pause"]'
	[[ -f $recipes/$name/entrypoint ]] && entrypoint=$(cat "$recipes/$name/entrypoint")
	mkdir -p "$layout/blobs/sha256"
	tar --numeric-owner -C "$root" --exclude=./dev/* --exclude=./proc/* --exclude=./sys/* -cf "$layout/layer.tar" .
	local layer layer_size
	layer=$(sha256sum "$layout/layer.tar" | cut -d' ' -f1)
	layer_size=$(stat -c %s "$layout/layer.tar")
	mv "$layout/layer.tar" "$layout/blobs/sha256/$layer"
	blob() { # blob CONTENT prints "digest size" after storing CONTENT
		local d
		d=$(printf '%s' "$1" | sha256sum | cut -d' ' -f1)
		printf '%s' "$1" >"$layout/blobs/sha256/$d"
		echo "$d ${#1}"
	}
	local config manifest c m
	config=$(printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s,"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$entrypoint" "$layer")
	read -r -a c <<<"$(blob "$config")"
	manifest=$(printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "${c[0]}" "${c[1]}" "$layer" "$layer_size")
	read -r -a m <<<"$(blob "$manifest")"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"${m[0]}" "${m[1]}" "${refs[$name]%% *}" "${refs[$name]##*:}" >"$layout/index.json"
	tar -C "$layout" -cf "$out.tmp" oci-layout index.json blobs && mv "$out.tmp" "$out"
	echo "sha256:${m[0]}" >"${out%.tar}.digest"
	rm -rf "$layout"
}

for name in pause mariadb memcached keystone; do
	if [[ $name == pause ]]; then
		key=$( (sha256sum "$pause_bin" | cut -d' ' -f1; echo "$base_key") | sha256sum | cut -c1-12)
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
