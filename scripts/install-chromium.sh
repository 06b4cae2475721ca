#!/usr/bin/env bash
# Installs Chromium from Debian (package "chromium") when it is not installed
# yet. Does nothing when it is.
#
# ortel's HTML report test (internal/report, TestHTMLRendersInChromium) opens
# the self-contained report in headless Chromium and fails on JavaScript
# errors or empty charts. Under CI=true that test fails when Chromium is
# missing, so CI runs this script first.
#
#   scripts/install-chromium.sh     prints the path of the chromium binary
set -euo pipefail

say() { printf 'install-chromium: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

for c in /usr/bin/chromium "$(command -v chromium 2>/dev/null || true)"; do
  if [ -n "$c" ] && [ -x "$c" ]; then
    say "already installed: $c ($("$c" --version 2>/dev/null | head -n1))"
    printf '%s\n' "$c"
    exit 0
  fi
done

"$(dirname "$0")/apt-install.sh" chromium "install Chromium and put it at /usr/bin/chromium" chromium fonts-dejavu-core

p=/usr/bin/chromium
[ -x "$p" ] || die "the chromium package installed no $p"
say "installed: $p ($("$p" --version 2>/dev/null | head -n1))"
printf '%s\n' "$p"
