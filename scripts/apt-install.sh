#!/usr/bin/env bash
# Installs Debian packages for the scripts/install-*.sh scripts, the one
# place they do it: as root, or through sudo; waiting for the dpkg lock
# (other installs may hold it) instead of failing; with --no-start, a
# policy-rc.d file keeps the packages' services from starting and is
# removed after.
#
#   scripts/apt-install.sh [--no-start] WHAT HINT PACKAGE...
#
# WHAT is what is missing, for the error messages ("tmux"); HINT says what
# to do where there is no apt-get ("install tmux").
set -euo pipefail

say() { printf 'apt-install: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

no_start=
if [ "${1:-}" = --no-start ]; then
  no_start=1
  shift
fi
[ $# -ge 3 ] || die "usage: scripts/apt-install.sh [--no-start] WHAT HINT PACKAGE..."
what=$1 hint=$2
shift 2

command -v apt-get >/dev/null || die "$what is not installed and apt-get is missing; $hint"
sudo=
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || die "$what is not installed; run this script as root (or with sudo available)"
  sudo=sudo
fi

policy=/usr/sbin/policy-rc.d
made_policy=
if [ -n "$no_start" ] && [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# written by ortel scripts/apt-install.sh; removed after the install\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  made_policy=1
fi
cleanup() { if [ -n "$made_policy" ]; then $sudo rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
say "installing the Debian package(s) $*"
$sudo apt-get "${apt_opts[@]}" update -qq >&2
$sudo apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "$@" >&2
