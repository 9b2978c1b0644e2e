#!/usr/bin/env bash
# Packs a root file system as a one-layer OCI image archive, without a registry or a
# container engine (containerd's `ctr images import` reads it). Sourced by
# hack/cluster-images.sh and hack/manager-image.sh.

# oci_archive ROOT OUT REF ENTRYPOINT [USER] packs the directory ROOT as the image REF
# (name:tag) into the archive OUT, with ENTRYPOINT (a JSON list) run as USER (uid:gid,
# root when empty), and writes the manifest's digest to OUT without .tar plus .digest.
oci_archive() {
	local root=$1 out=$2 ref=$3 entrypoint=$4 user=${5:-} layout
	layout=$(mktemp -d "${TMPDIR:-/var/tmp}/oci.XXXXXX")
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
	config=$(printf '{"architecture":"amd64","os":"linux","config":{"User":"%s","Entrypoint":%s,"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$user" "$entrypoint" "$layer")
	read -r -a c <<<"$(blob "$config")"
	manifest=$(printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "${c[0]}" "${c[1]}" "$layer" "$layer_size")
	read -r -a m <<<"$(blob "$manifest")"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"${m[0]}" "${m[1]}" "$ref" "${ref##*:}" >"$layout/index.json"
	tar -C "$layout" -cf "$out.tmp" oci-layout index.json blobs && mv "$out.tmp" "$out"
	echo "sha256:${m[0]}" >"${out%.tar}.digest"
	rm -rf "$layout"
}
