#!/usr/bin/env bash
# Runs buildah (Debian's, hack/debian-deps.sh image) as the project's scripts use it: as
# root, on a storage of the project's own (vfs, which works on any file system, inside a
# container too), isolation chroot (no user namespaces or runtime needed). Sourced by
# hack/image-bases.sh, hack/manager-image.sh and hack/cluster-images.sh.

image_cache=${IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/keystone-stepwise/images}
export BUILDAH_ISOLATION=chroot

# bah ARGS... is buildah on the project's storage.
bah() {
	buildah --root "$image_cache/containers" --runroot "${XDG_RUNTIME_DIR:-/run}/keystone-stepwise-containers" \
		--storage-driver vfs "$@"
}

# image_label IMAGE LABEL prints the label of a local image; nothing when the image or
# the label is missing.
image_label() {
	bah inspect --type image --format "{{index .OCIv1.Config.Labels \"$2\"}}" "$1" 2>/dev/null || true
}

# image_archive ROOT REF ENTRYPOINT USER OUT packs the directory ROOT as the image REF
# (name:tag), running ENTRYPOINT (a JSON list) as USER (uid:gid; the image's default,
# root, when empty), into the OCI archive OUT for `ctr images import`, and writes the
# digest of its manifest (the one containerd lists once imported) to OUT without .tar
# plus .digest. The image is not kept in buildah's storage.
image_archive() {
	local root=$1 ref=$2 entrypoint=$3 user=$4 out=$5 c mnt
	c=$(bah from --pull=never scratch)
	# Whatever fails, neither the working container nor the image stays in the storage
	# (vfs keeps each whole), nor a partial archive.
	if ! { mnt=$(bah mount "$c") &&
		tar --numeric-owner -C "$root" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf - . |
		tar --numeric-owner -C "$mnt" -xf - &&
		bah config --entrypoint "$entrypoint" ${user:+--user "$user"} \
			--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c" &&
		bah commit --quiet --rm "$c" "$ref" >/dev/null; }; then
		bah rm "$c" >/dev/null 2>&1 || true
		return 1
	fi
	rm -f "$out.tmp"
	if ! bah push --quiet --digestfile "${out%.tar}.digest" "$ref" "oci-archive:$out.tmp:$ref"; then
		bah rmi "$ref" >/dev/null 2>&1 || true
		rm -f "$out.tmp" "${out%.tar}.digest"
		return 1
	fi
	mv "$out.tmp" "$out"
	bah rmi "$ref" >/dev/null
}
