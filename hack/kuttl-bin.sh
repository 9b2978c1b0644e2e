#!/usr/bin/env bash
# Builds kuttl (kubectl-kuttl) from the Go module proxy into $1, once per version:
# `go install` cannot (the proxy refuses its version list), a throwaway module can.
set -euo pipefail
out=${1:?usage: kuttl-bin.sh OUT_FILE}
version=${KUTTL_VERSION:-v0.26.0}
[[ -x $out ]] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
go mod init kuttl-build >/dev/null 2>&1
echo "kuttl-bin: building kuttl $version (minutes when the build cache is cold)" >&2
GOFLAGS=-mod=mod go get "github.com/kudobuilder/kuttl@$version" >/dev/null
mkdir -p "$(dirname "$out")"
GOFLAGS=-mod=mod go build -ldflags "-s -w -X github.com/kudobuilder/kuttl/internal/version.gitVersion=$version" \
	-o "$out.tmp" github.com/kudobuilder/kuttl/cmd/kubectl-kuttl
mv "$out.tmp" "$out"
