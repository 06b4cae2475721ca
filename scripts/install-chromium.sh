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

command -v apt-get >/dev/null || die "chromium is not installed and apt-get is missing; install Chromium and put it at /usr/bin/chromium"
sudo=
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || die "chromium is not installed; run this script as root (or with sudo available)"
  sudo=sudo
fi

export DEBIAN_FRONTEND=noninteractive
# Other installs may hold the dpkg lock for a while: wait for it, not fail.
apt_opts=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
say "installing the Debian package chromium"
$sudo apt-get "${apt_opts[@]}" update -qq >&2
$sudo apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2

p=/usr/bin/chromium
[ -x "$p" ] || die "the chromium package installed no $p"
say "installed: $p ($("$p" --version 2>/dev/null | head -n1))"
printf '%s\n' "$p"
