#!/usr/bin/env bash
# Installs PostgreSQL from Debian (package postgresql-15: initdb, pg_ctl,
# postgres, psql and the postgres user) when initdb is not there yet. Does
# nothing when it is.
#
# The tests of the history store (internal/history) start their own server
# with initdb and pg_ctl in a temporary folder on a free loopback port, as
# the postgres user when run as root, and stop it at the end; the Debian
# service must not start, so the install runs under a policy-rc.d that
# refuses service starts (one already in place is kept as it is).
#
#   scripts/install-postgres.sh     prints the folder of initdb
set -euo pipefail

say() { printf 'install-postgres: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

find_bin() {
  if p=$(command -v initdb 2>/dev/null); then dirname "$(readlink -f "$p")"; return 0; fi
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n | tail -n1 | grep . && return 0
  return 1
}

if bin=$(find_bin) && [ -x "$bin/initdb" ]; then
  say "already installed: $bin ($("$bin/initdb" --version))"
  printf '%s\n' "$bin"
  exit 0
fi

command -v apt-get >/dev/null || die "PostgreSQL is not installed and apt-get is missing; install PostgreSQL 15 (initdb, pg_ctl)"
sudo=
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || die "PostgreSQL is not installed; run this script as root (or with sudo available)"
  sudo=sudo
fi

policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# written by ortel scripts/install-postgres.sh; removed after the install\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  made_policy=1
fi
cleanup() { if [ -n "$made_policy" ]; then $sudo rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
say "installing the Debian package postgresql-15"
$sudo apt-get "${apt_opts[@]}" update -qq >&2
$sudo apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends postgresql-15 >&2

bin=$(find_bin) && [ -x "$bin/initdb" ] || die "the postgresql-15 package installed no initdb"
id postgres >/dev/null 2>&1 || die "the postgresql-15 package created no postgres user"
say "installed: $bin ($("$bin/initdb" --version))"
printf '%s\n' "$bin"
