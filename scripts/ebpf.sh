#!/usr/bin/env bash
# Regenerates the eBPF objects of `ortel attach` (internal/attach/bpf_*_bpfel.o
# and their bpf2go Go files) from internal/attach/bpf/probes.bpf.c, with
# clang 14 (Debian 12's; scripts/install-clang.sh installs it).
#
#   scripts/ebpf.sh           regenerate in place (after a change to the C)
#   scripts/ebpf.sh --check   regenerate, and fail when the result differs
#                             from the files in the tree (CI); the tree is
#                             left as it was
#
# The compiler is pinned: the objects are compared byte for byte, and clang
# of another major version emits other bytes. bpf2go itself runs at the
# cilium/ebpf version go.mod requires.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'ebpf: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

check=
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) die "unknown argument '$1' (usage: scripts/ebpf.sh [--check])" ;;
esac

for tool in clang-14 llvm-strip-14; do
  command -v "$tool" >/dev/null || die "$tool is not on PATH; install clang 14 with scripts/install-clang.sh (Debian 12: packages clang-14 and llvm-14)"
done
export BPF2GO_CC=clang-14 BPF2GO_STRIP=llvm-strip-14

dir=internal/attach
files=(bpf_x86_bpfel.o bpf_x86_bpfel.go bpf_arm64_bpfel.o bpf_arm64_bpfel.go)

if [ -z "$check" ]; then
  go generate "./$dir"
  say "regenerated ${files[*]} in $dir with $(clang-14 --version | head -n1)"
  exit 0
fi

for f in "${files[@]}"; do
  [ -f "$dir/$f" ] || die "$dir/$f is missing; run make ebpf and commit what it writes"
done
# The files as they are, put back on exit whatever happens.
saved=$(mktemp -d)
restore() {
  for f in "${files[@]}"; do cp -p "$saved/$f" "$dir/$f"; done
  rm -rf "$saved"
}
for f in "${files[@]}"; do cp -p "$dir/$f" "$saved/$f"; done
trap restore EXIT
go generate "./$dir"
stale=()
for f in "${files[@]}"; do
  cmp -s "$dir/$f" "$saved/$f" || stale+=("$f")
done
if [ ${#stale[@]} -gt 0 ]; then
  die "$dir: ${stale[*]} differ from what $dir/bpf/probes.bpf.c compiles to with $(clang-14 --version | head -n1); run make ebpf and commit the result"
fi
say "$dir: ${files[*]} are what $dir/bpf/probes.bpf.c compiles to ($(clang-14 --version | head -n1))"
