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
command -v apt-get >/dev/null || die "tmux is not installed and apt-get is missing; install tmux"
sudo=
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || die "tmux is not installed; run this script as root (or with sudo available)"
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
$sudo apt-get "${apt_opts[@]}" update -qq >&2
$sudo apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends tmux >&2
say "installed: $(tmux -V)"
