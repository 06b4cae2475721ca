#!/usr/bin/env bash
# Installs Prometheus from Debian (package "prometheus": the server binary and
# promtool) when it is not on PATH yet. Does nothing when it is.
#
# ortel's end-to-end test runs the prometheus binary itself, on a free
# loopback port with its own storage folder, so the Debian service must not
# start: the install runs under a policy-rc.d that refuses service starts
# (one already in place, as in most containers, is kept as it is).
#
#   scripts/install-prometheus.sh     prints the path of the prometheus binary
set -euo pipefail

say() { printf 'install-prometheus: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

if p=$(command -v prometheus); then
  say "already installed: $p ($(prometheus --version 2>&1 | head -n1))"
  printf '%s\n' "$p"
  exit 0
fi

command -v apt-get >/dev/null || die "prometheus is not installed and apt-get is missing; install Prometheus 2.x and put it on PATH"
sudo=
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || die "prometheus is not installed; run this script as root (or with sudo available)"
  sudo=sudo
fi

policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# written by ortel scripts/install-prometheus.sh; removed after the install\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  made_policy=1
fi
cleanup() { if [ -n "$made_policy" ]; then $sudo rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
# Other installs may hold the dpkg lock for a while: wait for it, not fail.
apt_opts=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
say "installing the Debian package prometheus"
$sudo apt-get "${apt_opts[@]}" update -qq >&2
$sudo apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends prometheus >&2

p=$(command -v prometheus) || die "the prometheus package installed no prometheus binary on PATH"
say "installed: $p ($(prometheus --version 2>&1 | head -n1))"
printf '%s\n' "$p"
