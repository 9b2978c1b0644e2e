#!/usr/bin/env bash
# Builds the manager image from the Dockerfile, unchanged, with buildah (Debian's) and no
# registry: `buildah bud --pull=never` on the two bases hack/image-bases.sh makes under the
# names the Dockerfile uses, from the context docker would send (.dockerignore applied
# by buildah itself). The module and build caches of this machine are mounted where the
# builder stage's go looks for them, so that a rebuild compiles only what changed; the
# Dockerfile is built as docker builds it otherwise, without keeping its stages' layers
# (a build is mostly cached compiles, and vfs would keep each layer whole). The image must start `/manager
# --help` as user 65532:65532. It is tagged with its own ID (timestamps zeroed, so the
# same code gives the same tag and a changed one rolls a Deployment naming it) and
# written as an archive for containerd (`ctr images import`).
# Prints the archive's path, then the image's name:tag.
# Usage: manager-image.sh OUT_DIR
set -euo pipefail
out=${1:?usage: manager-image.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=hack/buildah.sh
source "$here/buildah.sh"
log() { echo "manager-image: $*" >&2; }

go_version=$(sed -n 's/^ARG GO_VERSION=//p' "$root/Dockerfile")
[[ -n $go_version ]] || { log "the Dockerfile has no ARG GO_VERSION=..."; exit 1; }
"$here/image-bases.sh" "$go_version"

name=localhost/keystone-stepwise/keystone-operator
start=$SECONDS
bah bud --pull=never --layers=false --timestamp 0 --quiet --force-rm \
	--volume "$(go env GOMODCACHE):/go/pkg/mod" --volume "$(go env GOCACHE):/root/.cache/go-build" \
	--file "$root/Dockerfile" --tag "$name:build" "$root" >/dev/null
id=$(bah inspect --type image --format '{{.FromImageID}}' "$name:build")
tag=${id:0:12}
bah tag "$name:build" "$name:$tag"
log "$name:$tag built in $((SECONDS - start)) s"
# Only this build's image is kept (vfs stores each image whole).
bah images --noheading --format '{{.Name}}:{{.Tag}}' | while read -r old; do
	[[ $old != "$name:"* || $old == "$name:$tag" || $old == "$name:build" ]] || bah rmi "$old" >/dev/null
done
bah rmi --prune >/dev/null 2>&1 || true

# What the image runs, as whom: the Dockerfile's user, and /manager answering --help.
user=$(bah inspect --type image --format '{{.OCIv1.Config.User}}' "$name:$tag")
[[ $user == 65532:65532 ]] || { log "the image runs as '$user', not 65532:65532"; exit 1; }
container=$(bah from --pull=never "$name:$tag")
trap 'bah rm "$container" >/dev/null 2>&1 || true' EXIT
help=$(bah run "$container" -- /manager --help 2>&1) ||
	{ log "/manager --help in the image failed: $help"; exit 1; }
grep -q -- '-metrics-bind-address' <<<"$help" ||
	{ log "/manager --help in the image printed no usage: $help"; exit 1; }

mkdir -p "$out"
archive=$out/keystone-operator-$tag.tar
if [[ ! -s $archive ]]; then
	rm -f "$archive.tmp" # an interrupted push's
	bah push --quiet "$name:$tag" "oci-archive:$archive.tmp:$name:$tag"
	mv "$archive.tmp" "$archive"
fi
echo "$archive"
echo "$name:$tag"
