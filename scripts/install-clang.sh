#!/usr/bin/env bash
# Installs clang 14 and llvm-strip 14 from Debian 12 (bookworm), the
# compiler the committed eBPF objects of internal/attach are built with,
# when they are missing. Only `make ebpf` and `make ebpf-check` need them:
# building and testing ortel does not, since the objects are committed.
#
# The version is pinned: clang of another major version emits different
# bytes, and `make ebpf-check` compares the objects byte for byte.
set -euo pipefail
say() { printf 'install-clang: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
if command -v clang-14 >/dev/null && command -v llvm-strip-14 >/dev/null; then
  say "already installed: $(clang-14 --version | head -n1)"
  exit 0
fi
"$(dirname "$0")/apt-install.sh" clang-14 "install clang 14 and llvm-strip 14 (Debian 12's clang-14 and llvm-14 packages)" clang-14 llvm-14
command -v clang-14 >/dev/null || die "the clang-14 package installed no clang-14 on PATH"
say "installed: $(clang-14 --version | head -n1)"
