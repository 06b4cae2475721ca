#!/usr/bin/env bash
# Runs ortel's end-to-end test (test/e2e, build tag e2e): a collector
# built from otelcol-config/builder-config.yaml and Debian's Prometheus on
# free loopback ports, `ortel bench` on a real model exporting OTLP to the
# collector, then checks on what Prometheus scraped and what spans left the
# collector. Logs and generated configs: out/e2e/ (kept, printed on failure).
#
#   scripts/e2e.sh            (make e2e: builds bin/ortel first)
#
# Environment: ORTEL_E2E_CMD, ORTEL_E2E_RUNS, ORTEL_E2E_PROFILED_RUNS,
# ORTEL_E2E_OUT (see test/e2e/doc.go); ORTEL_E2E_TIMEOUT bounds the Go
# test (default 20m; the collector is built before it starts).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
say() { printf 'e2e: %s\n' "$*" >&2; }

start=$(date +%s)
# The slow parts first, outside the test's time limit, each a no-op when
# already done.
scripts/build-collector.sh >/dev/null
scripts/install-prometheus.sh >/dev/null
if [ -z "${ORTEL_E2E_CMD:-}" ] && [ ! -x bin/ortel ]; then
  say "error: bin/ortel is missing: run make build (or make e2e), or set ORTEL_E2E_CMD"
  exit 1
fi

status=0
go test -tags e2e -count=1 -timeout "${ORTEL_E2E_TIMEOUT:-20m}" -v -run '^TestEndToEnd$' ./test/e2e/ || status=$?
if [ "$status" -ne 0 ]; then
  say "FAILED after $(( $(date +%s) - start ))s; logs in ${ORTEL_E2E_OUT:-$here/out/e2e}"
  exit "$status"
fi
say "passed in $(( $(date +%s) - start ))s"
