#!/usr/bin/env bash
# Installs tmux from Debian when it is missing: the test of `ortel top`
# drives it in a tmux pane (send-keys, capture-pane).
set -euo pipefail
say() { printf 'install-tmux: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
if command -v tmux >/dev/null; then
  say "already installed: $(tmux -V)"
  exit 0
fi
"$(dirname "$0")/apt-install.sh" tmux "install tmux" tmux
say "installed: $(tmux -V)"
