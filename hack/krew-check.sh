#!/usr/bin/env bash
# The plugin as a user gets it from krew: builds this platform's archive and the krew
# manifest (hack/krew.sh), validates the manifest with krew's own validator, installs
# the plugin from it with krew into a scratch KREW_ROOT, runs it through kubectl's
# plugin discovery. (krew uninstall needs krew's index, a git clone this machine cannot
# make; the scratch KREW_ROOT is removed instead.)
#   KREW_BIN: where krew and validate-krew-manifest are; KUBECTL_BIN: where kubectl is.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${KREW_BIN:?}" "${KUBECTL_BIN:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "krew-check: $*" >&2; exit 1; }

os=$(go env GOOS) arch=$(go env GOARCH)
"$root/hack/krew.sh" 0.0.0-check "$work/dist" "$os/$arch"
"$KREW_BIN/validate-krew-manifest" -manifest "$work/dist/keystone.yaml" -skip-install
# krew-index takes a plugin whose archive carries its licence.
contents=$(tar -tzf "$work/dist/kubectl-keystone_${os}_${arch}.tar.gz") || fail "cannot list the archive"
grep -qx LICENSE <<<"$contents" || fail "the archive carries no LICENSE: $contents"

export KREW_ROOT=$work/krew PATH=$work/krew/bin:$KUBECTL_BIN:$PATH
"$KREW_BIN/krew" install --manifest="$work/dist/keystone.yaml" --archive="$work/dist/kubectl-keystone_${os}_${arch}.tar.gz" </dev/null
plugins=$(kubectl plugin list 2>&1) || fail "kubectl plugin list failed: $plugins"
grep -qF "$KREW_ROOT/bin/kubectl-keystone" <<<"$plugins" || fail "kubectl does not find the installed plugin: $plugins"
help=$(kubectl keystone tree --help) || fail "kubectl keystone tree --help failed"
grep -qF -- "-A, --all-namespaces" <<<"$help" || fail "kubectl keystone tree --help does not show kubectl's flags: $help"
test -f "$KREW_ROOT/store/keystone/v0.0.0-check/LICENSE" || fail "krew did not install the LICENSE: $(ls -R "$KREW_ROOT/store")"
echo "krew-check: the manifest is valid; krew installed the plugin and its LICENSE from it and kubectl ran it"
