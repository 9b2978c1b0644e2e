#!/usr/bin/env bash
# Makes, in buildah's local storage (hack/buildah.sh), the two base images the Dockerfile
# names, which cannot be pulled here, under the names it uses, so that `buildah bud
# --pull=never` builds the Dockerfile unchanged:
#   docker.io/library/golang:GO_VERSION  a Debian bookworm (hack/debian-base.sh) with the
#       newest Go GO_VERSION.x the module proxy serves as golang.org/toolchain in
#       /usr/local/go, laid out as the official image (GOPATH /go, PATH, GOTOOLCHAIN=local)
#   gcr.io/distroless/static:nonroot     from scratch: distroless's passwd and group
#       (root, nobody, nonroot 65532), CA certificates, time zones and a 1777 /tmp, user
#       65532, as the real image has them
# Each is made again only when its recipe (this script, the toolchain's version) changes.
# Usage: image-bases.sh GO_VERSION
set -euo pipefail
go_version=${1:?usage: image-bases.sh GO_VERSION}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/buildah.sh
source "$here/buildah.sh"
log() { echo "image-bases: $*" >&2; }
recipe=$(sha256sum "$0" | cut -c1-12)
label=io.keystone-stepwise.recipe
arch=$(go env GOARCH)

work=$(mktemp -d "${TMPDIR:-/var/tmp}/image-bases.XXXXXX")
containers=()
cleanup() {
	local c
	for c in "${containers[@]}"; do bah rm "$c" >/dev/null 2>&1 || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# scratch sets c to a new working container from scratch and its mounted root, (name
# root); the cleanup removes it unless it was committed.
scratch() {
	local name
	name=$(bah from --pull=never scratch)
	containers+=("$name")
	c=("$name" "$(bah mount "$name")")
}

# The newest toolchain of the Dockerfile's Go version, as its golang:X.Y tag is.
toolchain=$(go list -m -versions golang.org/toolchain | tr ' ' '\n' |
	sed -n "s/^v0\.0\.1-go\(${go_version//./\\.}\(\.[0-9]*\)\?\)\.linux-$arch\$/\1/p" | sort -V | tail -n 1)
[[ -n $toolchain ]] || { log "the module proxy serves no golang.org/toolchain of Go $go_version for linux-$arch"; exit 1; }
golang=docker.io/library/golang:$go_version
# The Debian base it is made from is part of its recipe: that script (its format) and
# the mirror.
key="$recipe $(sha256sum "$here/debian-base.sh" | cut -c1-12) ${DEBIAN_MIRROR:-} go$toolchain"
if [[ $(image_label "$golang" "$label") != "$key" ]]; then
	start=$SECONDS
	dir=$(go mod download -json "golang.org/toolchain@v0.0.1-go$toolchain.linux-$arch" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	[[ -f $dir/bin/go ]] || { log "golang.org/toolchain go$toolchain has no bin/go"; exit 1; }
	scratch
	tar -C "${c[1]}" -xf "$("$here/debian-base.sh")"
	mkdir -p "${c[1]}/usr/local/go" "${c[1]}/go/bin" "${c[1]}/go/src" "${c[1]}/etc/ssl/certs"
	cp -a "$dir/." "${c[1]}/usr/local/go/"
	# The module zip keeps no modes: writable, and the commands executable, as Go's own
	# toolchain switch makes them.
	chmod -R u+w "${c[1]}/usr/local/go"
	chmod 0755 "${c[1]}"/usr/local/go/bin/* "${c[1]}"/usr/local/go/pkg/tool/*/*
	rm -f "${c[1]}/usr/local/go/go.mod"  # the module's, not a GOROOT's
	# The official image installs ca-certificates, for the module proxy over HTTPS.
	cp /etc/ssl/certs/ca-certificates.crt "${c[1]}/etc/ssl/certs/"
	bah config --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--env GOLANG_VERSION="$toolchain" --env GOTOOLCHAIN=local --env GOPATH=/go --workingdir /go \
		--cmd bash --label "$label=$key" "${c[0]}"
	bah commit --quiet --rm "${c[0]}" "$golang" >/dev/null
	containers=()
	log "$golang: Go $toolchain on Debian bookworm, made in $((SECONDS - start)) s"
fi

distroless=gcr.io/distroless/static:nonroot
if [[ $(image_label "$distroless" "$label") != "$recipe" ]]; then
	scratch
	root=${c[1]}
	mkdir -p "$root/etc/ssl/certs" "$root/home/nonroot" "$root/tmp" "$root/usr/share"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n' >"$root/etc/group"
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	[[ -d /usr/share/zoneinfo ]] && cp -a /usr/share/zoneinfo "$root/usr/share/"
	chown 65532:65532 "$root/home/nonroot"
	chmod 1777 "$root/tmp"
	bah config --user 65532 --workingdir /home/nonroot \
		--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt --label "$label=$recipe" "${c[0]}"
	bah commit --quiet --rm "${c[0]}" "$distroless" >/dev/null
	containers=()
	log "$distroless: made"
fi
