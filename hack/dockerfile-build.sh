#!/usr/bin/env bash
# Builds the manager binary as the Dockerfile's builder stage does, without a container
# engine: from exactly the build context docker would send (the checkout less what
# .dockerignore excludes), copying what the stage's COPY lines copy, and running its RUN
# lines in that copy. A file the Dockerfile forgets to copy, or .dockerignore leaves out,
# fails this build as it fails `docker build`.
# .dockerignore must have the form this project uses: "*", then "!path" lines.
# Usage: dockerfile-build.sh OUT_BINARY
set -euo pipefail
out=${1:?usage: dockerfile-build.sh OUT_BINARY}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/var/tmp}/dockerfile-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
context=$work/context
workspace=$work/workspace
mkdir -p "$context" "$workspace"

# The context: the files git has (tracked or not ignored) that .dockerignore lets through.
allowed=()
while IFS= read -r line; do
	case $line in
	'' | '#'*) ;;
	'*') ;;
	'!'*) allowed+=("${line#!}") ;;
	*)
		echo "dockerfile-build: .dockerignore line '$line' is not of the form '*' or '!path'" >&2
		exit 1
		;;
	esac
done <"$here/.dockerignore"
((${#allowed[@]} > 0)) || { echo "dockerfile-build: .dockerignore lets nothing through" >&2; exit 1; }
(cd "$here" && git ls-files --cached --others --exclude-standard -- "${allowed[@]}" | while IFS= read -r f; do
	[[ -e $f ]] || continue # deleted in the work tree
	mkdir -p "$context/$(dirname "$f")"
	cp -p "$f" "$context/$f"
done)

# The builder stage: its WORKDIR, COPY and RUN lines, up to the next FROM.
stage=0 ran=0
while IFS= read -r line; do
	read -r -a word <<<"$line"
	case ${word[0]:-} in
	FROM)
		stage=$((stage + 1))
		((stage == 1)) || break
		;;
	COPY)
		((${#word[@]} >= 3)) || { echo "dockerfile-build: cannot read '$line'" >&2; exit 1; }
		dst=${word[-1]}
		for src in "${word[@]:1:${#word[@]}-2}"; do
			[[ $src != --* ]] || { echo "dockerfile-build: COPY flags are not read: '$line'" >&2; exit 1; }
			[[ -e $context/$src ]] || { echo "dockerfile-build: COPY $src: not in the build context (.dockerignore?)" >&2; exit 1; }
			target=$workspace/$dst
			[[ $dst == */ ]] && mkdir -p "$target"
			if [[ -d $context/$src ]]; then
				mkdir -p "$target"
				cp -a "$context/$src/." "$target"
			else
				cp -p "$context/$src" "$target"
			fi
		done
		;;
	RUN)
		cmd=${line#RUN }
		# The binary goes where this script is asked to put it.
		cmd=${cmd//-o \/manager/-o \"$out\"}
		(cd "$workspace" && bash -euo pipefail -c "$cmd")
		ran=$((ran + 1))
		;;
	esac
done <"$here/Dockerfile"
((ran > 0)) || { echo "dockerfile-build: the Dockerfile's builder stage runs nothing" >&2; exit 1; }
[[ -x $out ]] || { echo "dockerfile-build: the builder stage made no $out" >&2; exit 1; }
