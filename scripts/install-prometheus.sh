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

# --no-start: the package's service must not start (tests run their own).
"$(dirname "$0")/apt-install.sh" --no-start prometheus "install Prometheus 2.x and put it on PATH" prometheus

p=$(command -v prometheus) || die "the prometheus package installed no prometheus binary on PATH"
say "installed: $p ($(prometheus --version 2>&1 | head -n1))"
printf '%s\n' "$p"
