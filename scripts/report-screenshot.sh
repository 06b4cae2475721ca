#!/usr/bin/env bash
# Renders a saved run as the HTML report and screenshots it with headless
# Chromium (scripts/install-chromium.sh installs it).
#
#   scripts/report-screenshot.sh RUN.json [OUT.png] [WIDTHxHEIGHT]
#
# Defaults: docs/report-screenshot.png, 1280x4300 (the whole page of a bench run).
set -euo pipefail

say() { printf 'report-screenshot: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

run=${1:?usage: scripts/report-screenshot.sh RUN.json [OUT.png] [WIDTHxHEIGHT]}
out=${2:-docs/report-screenshot.png}
size=${3:-1280x4300}
[ -f "$run" ] || die "no report $run"
browser=${ORTEL_CHROMIUM:-/usr/bin/chromium}
[ -x "$browser" ] || die "no Chromium at $browser; run scripts/install-chromium.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/ortel report "$run" --file "$tmp/report.html"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$tmp/profile" \
  --window-size="${size/x/,}" --screenshot="$out" "file://$tmp/report.html" 2>/dev/null
say "wrote $out"
