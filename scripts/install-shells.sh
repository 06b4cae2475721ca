#!/usr/bin/env bash
# Installs zsh and fish from Debian when they are missing: the test of
# `ortel completion` checks that the zsh and fish scripts it prints parse
# in the real shells (bash is always there).
set -euo pipefail
say() { printf 'install-shells: %s\n' "$*" >&2; }
missing=()
for sh in zsh fish; do
  command -v "$sh" >/dev/null || missing+=("$sh")
done
if [ ${#missing[@]} -eq 0 ]; then
  say "already installed: $(zsh --version), $(fish --version)"
  exit 0
fi
"$(dirname "$0")/apt-install.sh" "${missing[*]}" "install ${missing[*]}" "${missing[@]}"
say "installed: $(zsh --version), $(fish --version)"
