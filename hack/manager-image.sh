#!/usr/bin/env bash
# Builds the manager image without a registry or a container engine, as the Dockerfile
# lays it out: the static binary /manager (CGO off), run as the non-root 65532:65532,
# in a one-layer OCI archive. The tag is a digest of the binary, so that a Deployment
# naming it rolls when the code changes. Prints the archive's path, then the image's
# name:tag.
# Usage: manager-image.sh OUT_DIR
set -euo pipefail
out=${1:?usage: manager-image.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/oci.sh
source "$here/oci.sh"
mkdir -p "$out"
root=$(mktemp -d "${TMPDIR:-/var/tmp}/manager-image.XXXXXX")
trap 'rm -rf "$root"' EXIT
# Built as the Dockerfile builds it, from its context alone.
"$here/dockerfile-build.sh" "$root/manager"
# A writable /tmp is the Deployment's (an emptyDir): the root file system is read-only.
mkdir -p "$root/tmp"
chmod 1777 "$root/tmp"
tag=$(sha256sum "$root/manager" | cut -c1-12)
ref=localhost/keystone-stepwise/keystone-operator:$tag
archive=$out/keystone-operator-$tag.tar
if [[ ! -s $archive ]]; then
	oci_archive "$root" "$archive" "$ref" '["/manager"]' 65532:65532
fi
echo "$archive"
echo "$ref"
