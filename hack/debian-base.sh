#!/usr/bin/env bash
# Prints the path of a tarball of a minimal Debian bookworm (debootstrap minbase), the
# root file system of the local cluster's images (hack/cluster-images.sh) and of the
# golang base the manager image is built on (hack/image-bases.sh). Built once, then
# cached by suite, mirror and format.
# Usage: debian-base.sh
set -euo pipefail
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/keystone-stepwise/images}
# Bump format when the way the base is made changes.
format=1
key=$(echo "$suite $mirror $format" | sha256sum | cut -c1-12)
tarball=$cache/base-$suite-$key.tar
if [[ ! -s $tarball ]]; then
	mkdir -p "$cache"
	work=$(mktemp -d "${TMPDIR:-/var/tmp}/debian-base.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	echo "debian-base: debootstrap $suite minbase (about 1.5 minutes)" >&2
	debootstrap --variant=minbase "$suite" "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		{ tail -20 "$work/debootstrap.log" >&2; exit 1; }
	tar --numeric-owner -C "$work/root" -cf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
fi
echo "$tarball"
