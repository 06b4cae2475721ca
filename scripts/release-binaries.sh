#!/usr/bin/env bash
# Builds the release binaries of the ortel CLI: linux/amd64 and linux/arm64,
# both with cgo (the ONNX Runtime and NVML bindings need it), the second
# cross-compiled with Debian's gcc-aarch64-linux-gnu. The Dockerfile runs
# this script for each platform of the image, so the image and the release
# binaries are the same build.
#
#   scripts/release-binaries.sh [--arch ARCH]... [OUTDIR]
#
# OUTDIR (default dist/) receives ortel-linux-ARCH for each ARCH (default:
# amd64 and arm64) and SHA256SUMS. ORTEL_VERSION, when set, is what
# `ortel version` prints (the release workflow sets it from the git tag).
#
# Reproducible: the same source, Go toolchain and C compiler give the same
# bytes whatever the checkout's path or the time (-trimpath, no VCS stamp,
# an empty Go build id; the ELF build id is a hash of the content).
#
# Needs: go; for a foreign ARCH, its cross compiler on PATH (amd64:
# x86_64-linux-gnu-gcc, arm64: aarch64-linux-gnu-gcc; Debian packages
# gcc-x86-64-linux-gnu and gcc-aarch64-linux-gnu, installed by
# scripts/install-cross.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'release-binaries: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

archs=()
out=
while [ $# -gt 0 ]; do
  case "$1" in
  --arch)
    [ $# -ge 2 ] || die "--arch needs a value (amd64 or arm64)"
    archs+=("$2")
    shift 2
    ;;
  -*) die "unknown flag: $1 (usage: $0 [--arch ARCH]... [OUTDIR])" ;;
  *)
    [ -z "$out" ] || die "one OUTDIR only (got $out and $1)"
    out=$1
    shift
    ;;
  esac
done
[ ${#archs[@]} -gt 0 ] || archs=(amd64 arm64)
out=${out:-$here/dist}

command -v go >/dev/null || die "go is needed"
host=$(go env GOHOSTARCH)

# The C compiler that targets linux/$1 from this machine.
cross_cc() {
  local triple
  case "$1" in
  amd64) triple=x86_64-linux-gnu ;;
  arm64) triple=aarch64-linux-gnu ;;
  *) die "unsupported architecture $1 (amd64 or arm64)" ;;
  esac
  if [ "$1" = "$host" ]; then
    printf '%s\n' "${ORTEL_REAL_CC:-gcc}"
  elif command -v "$triple-gcc" >/dev/null; then
    printf '%s\n' "$triple-gcc"
  else
    die "no C compiler for linux/$1: install $triple-gcc (scripts/install-cross.sh)"
  fi
}

ldflags="-s -w -buildid="
if [ -n "${ORTEL_VERSION:-}" ]; then
  case "$ORTEL_VERSION" in
  *[!A-Za-z0-9.+_-]*) die "ORTEL_VERSION=$ORTEL_VERSION: letters, digits and . + _ - only" ;;
  esac
  ldflags="$ldflags -X main.version=$ORTEL_VERSION"
fi

mkdir -p "$out"
cd "$here"
built=()
for arch in "${archs[@]}"; do
  cc=$(cross_cc "$arch")
  start=$(date +%s)
  say "building $out/ortel-linux-$arch (cgo, CC=$cc)"
  # The Makefile's quiet wrapper keeps go-nvml's deprecation warnings out
  # of the log; it runs $ORTEL_REAL_CC.
  ORTEL_REAL_CC=$cc CC="$here/scripts/cc-quiet-nvml.sh" CGO_ENABLED=1 GOOS=linux GOARCH=$arch GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags "$ldflags" -o "$out/ortel-linux-$arch.tmp" ./cmd/ortel
  mv "$out/ortel-linux-$arch.tmp" "$out/ortel-linux-$arch"
  built+=("ortel-linux-$arch")
  say "built in $(( $(date +%s) - start ))s: $out/ortel-linux-$arch"
done
(cd "$out" && sha256sum "${built[@]}" >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
say "checksums: $out/SHA256SUMS"
cat "$out/SHA256SUMS"
