#!/usr/bin/env bash
# Renders a saved run (report.json of a real `ortel bench`) as the HTML
# report, its analysis recomputed by this tree's rules, and screenshots its
# first screen with headless Chromium (scripts/install-chromium.sh installs
# it). The README's report section shows docs/report-screenshot.png, made
# from `ortel bench paddleocr-det --out out/det`:
#
#   scripts/report-screenshot.sh out/det/report.json [OUT.png] [WIDTHxHEIGHT]
#
# Defaults: docs/report-screenshot.png, 1280x900 (the first screen: header,
# latency and the findings; keeps the PNG small).
set -euo pipefail

say() { printf 'report-screenshot: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

run=${1:?usage: scripts/report-screenshot.sh RUN.json [OUT.png] [WIDTHxHEIGHT]}
out=${2:-docs/report-screenshot.png}
size=${3:-1280x900}
[ -f "$run" ] || die "no report $run"
browser=${ORTEL_CHROMIUM:-/usr/bin/chromium}
[ -x "$browser" ] || die "no Chromium at $browser; run scripts/install-chromium.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/ortel report "$run" --reanalyze --file "$tmp/report.html"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$tmp/profile" \
  --window-size="${size/x/,}" --screenshot="$out" "file://$tmp/report.html" 2>/dev/null
say "wrote $out ($(stat -c %s "$out") bytes)"
