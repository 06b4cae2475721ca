#!/usr/bin/env bash
# Builds ortel's local OpenTelemetry Collector (otelcol-ortel) from
# otelcol-config/builder-config.yaml with the official collector builder, and
# prints the path of the binary on stdout (progress goes to stderr).
#
#   scripts/build-collector.sh            build if needed, print the path
#   scripts/build-collector.sh --path     print where the binary goes; build nothing
#
# The binary is cached under
#   ${ORTEL_CACHE_DIR:-<repo>/.cache/ortel}/otelcol/<sha256 of the manifest>/otelcol-ortel
# so a second run with the same manifest is instant, and a changed manifest
# builds a new one beside the old. The builder compiles with the normal Go
# build cache (GOCACHE), so a rebuild after a manifest change reuses compiled
# packages. Builds of the same manifest are serialized with a lock.
#
# Needs: go (and the Go module proxy, on the first build).
set -euo pipefail

BUILDER_VERSION=v0.155.0

here=$(cd "$(dirname "$0")/.." && pwd)
manifest="$here/otelcol-config/builder-config.yaml"
cache=${ORTEL_CACHE_DIR:-$here/.cache/ortel}

say() { printf 'build-collector: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ -f "$manifest" ] || die "collector build manifest not found: $manifest"
sum=$(sha256sum "$manifest" | cut -d' ' -f1)
dir="$cache/otelcol/$sum"
bin="$dir/otelcol-ortel"

if [ "${1:-}" = "--path" ]; then
  printf '%s\n' "$bin"
  exit 0
fi
[ $# -eq 0 ] || die "unknown argument: $1 (usage: $0 [--path])"

if [ -x "$bin" ]; then
  say "cached: $bin"
  printf '%s\n' "$bin"
  exit 0
fi

command -v go >/dev/null || die "go is needed to build the collector"
mkdir -p "$dir"
exec 9>"$dir/.lock"
if command -v flock >/dev/null; then
  flock 9
fi
if [ -x "$bin" ]; then # another build finished while we waited for the lock
  printf '%s\n' "$bin"
  exit 0
fi

work=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The builder takes its output folder from the manifest (the flag is
# deprecated), so build from a copy that names it.
sed "/^dist:/a\\  output_path: \"$work/src\"" "$manifest" >"$work/builder-config.yaml"

say "building otelcol-ortel with the collector builder $BUILDER_VERSION (first build takes minutes)"
start=$(date +%s)
# steps prints a line per step of the builder as it reaches it (its log
# goes whole to build.log): the first build takes minutes, and a line per
# step says where it is.
steps() {
  local line
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$work/build.log"
    case $line in
    *"Sources created"*) say "step 2 of 4: sources generated ($(( $(date +%s) - start ))s); getting the Go modules" ;;
    *"Getting go modules"*) ;;
    *"Compiling"*) say "step 3 of 4: modules ready ($(( $(date +%s) - start ))s); compiling the collector" ;;
    *"Compiled"*) say "step 4 of 4: compiled ($(( $(date +%s) - start ))s)" ;;
    esac
  done
}
say "step 1 of 4: fetching and starting the collector builder"
# GOFLAGS may carry -mod=vendor or similar from the caller; the builder's own
# module must resolve normally.
if ! GOFLAGS=-buildvcs=false go run "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION" \
      --config "$work/builder-config.yaml" 2>&1 | steps; then
  tail -n 60 "$work/build.log" >&2
  die "the collector builder failed (manifest $manifest)"
fi
[ -x "$work/src/otelcol-ortel" ] || die "the builder finished but left no binary at $work/src/otelcol-ortel"
mv "$work/src/otelcol-ortel" "$bin.tmp"
mv "$bin.tmp" "$bin"
say "built in $(( $(date +%s) - start ))s: $bin"
printf '%s\n' "$bin"
