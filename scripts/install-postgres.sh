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

# --no-start: the package's service must not start (ortel runs its own server).
"$(dirname "$0")/apt-install.sh" --no-start PostgreSQL "install PostgreSQL 15 (initdb, pg_ctl)" postgresql-15

bin=$(find_bin) && [ -x "$bin/initdb" ] || die "the postgresql-15 package installed no initdb"
id postgres >/dev/null 2>&1 || die "the postgresql-15 package created no postgres user"
say "installed: $bin ($("$bin/initdb" --version))"
printf '%s\n' "$bin"
