#!/usr/bin/env bash
# Builds the release archives of kubectl-keystone and its krew manifest:
#   hack/krew.sh VERSION OUT_DIR [OS/ARCH ...]
# writes OUT_DIR/kubectl-keystone_<os>_<arch>.tar.gz for each platform (default: linux and
# darwin, amd64 and arm64) and OUT_DIR/keystone.yaml, whose archives are looked for at
# KREW_URL_BASE (default: the project's GitHub release of vVERSION).
set -euo pipefail
version=${1:?give the version, e.g. 0.1.0}
out=${2:?give the output directory}
shift 2
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
root=$(cd "$(dirname "$0")/.." && pwd)
base=${KREW_URL_BASE:-https://github.com/keystone-stepwise/keystone-operator/releases/download/v$version}

mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
entries=""
for platform in "${platforms[@]}"; do
	os=${platform%/*} arch=${platform#*/}
	archive=kubectl-keystone_${os}_${arch}.tar.gz
	rm -rf "${stage:?}/$platform" && mkdir -p "$stage/$platform"
	(cd "$root" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "-s -w" \
		-o "$stage/$platform/kubectl-keystone" ./cmd/kubectl-keystone)
	cp "$root/README.md" "$root/LICENSE" "$stage/$platform/"
	# Reproducible archives: fixed owner, order and times.
	tar -C "$stage/$platform" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - kubectl-keystone README.md LICENSE |
		gzip -n >"$out/$archive"
	sha=$(sha256sum "$out/$archive" | cut -d' ' -f1)
	entries+="  - selector:
      matchLabels:
        os: $os
        arch: $arch
    uri: $base/$archive
    sha256: $sha
    bin: kubectl-keystone
    files:
      - from: kubectl-keystone
        to: .
      - from: README.md
        to: .
      - from: LICENSE
        to: .
"
	echo "krew: $out/$archive ($sha)"
done
awk -v version="v$version" -v platforms="${entries%$'\n'}" \
	'{ gsub(/@VERSION@/, version); if ($0 == "@PLATFORMS@") print platforms; else print }' \
	"$root/hack/krew/keystone.yaml.in" >"$out/keystone.yaml"
echo "krew: $out/keystone.yaml"
