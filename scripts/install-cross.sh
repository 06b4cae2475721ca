#!/usr/bin/env bash
# Installs the Debian cross C compiler that scripts/release-binaries.sh
# needs to build ortel (cgo) for a foreign architecture: on an amd64 machine
# gcc-aarch64-linux-gnu (for arm64), on an arm64 machine gcc-x86-64-linux-gnu
# (for amd64). Does nothing when the compiler is already on PATH or ARCH is
# this machine's own.
#
#   scripts/install-cross.sh [--arch ARCH]    ARCH: amd64 or arm64 (default:
#                                             the one this machine is not)
set -euo pipefail

say() { printf 'install-cross: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

case "$(uname -m)" in
x86_64 | amd64) host=amd64 ;;
aarch64 | arm64) host=arm64 ;;
*) die "unsupported machine $(uname -m): ortel is released for amd64 and arm64" ;;
esac
target=
case "${1:-}" in
"") target=$([ "$host" = amd64 ] && echo arm64 || echo amd64) ;;
--arch)
  [ $# -eq 2 ] || die "usage: $0 [--arch amd64|arm64]"
  target=$2
  ;;
*) die "unknown argument: $1 (usage: $0 [--arch amd64|arm64])" ;;
esac
case "$target" in
amd64) triple=x86_64-linux-gnu pkg=gcc-x86-64-linux-gnu ;;
arm64) triple=aarch64-linux-gnu pkg=gcc-aarch64-linux-gnu ;;
*) die "unsupported architecture $target (amd64 or arm64)" ;;
esac
if [ "$target" = "$host" ]; then
  say "linux/$target is this machine's own: the native compiler builds it"
  exit 0
fi
if p=$(command -v "$triple-gcc"); then
  say "already installed: $p"
  exit 0
fi

# The C library headers of the target come with it (libc6-dev-*-cross).
"$(dirname "$0")/apt-install.sh" "$triple-gcc" "install a C cross compiler for $triple" "$pkg" "libc6-dev-${target}-cross"
p=$(command -v "$triple-gcc") || die "the $pkg package installed no $triple-gcc on PATH"
say "installed: $p ($("$p" --version | head -n1))"
