#!/usr/bin/env bash
# Measures what the live view costs `ortel agent`: CPU seconds per minute
# of the agent process with --ui off, with --ui on and no client, and with
# --ui on and one client streaming (curl on /api/v1/stream, every frame),
# in interleaved blocks. Usage: scripts/liveview-cost.sh [SECONDS_PER_BLOCK] [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
block=${1:-20}
pairs=${2:-3}
bin=$(mktemp -d)/ortel
go build -o "$bin" ./cmd/ortel
hz=$(getconf CLK_TCK)
out=$(mktemp -d)

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# one MODE: off | ui | ui+client; prints CPU seconds per minute.
one() {
  local mode=$1 port args=() client=
  port=$(( 20000 + RANDOM % 20000 ))
  [ "$mode" != off ] && args=(--ui "$port")
  "$bin" agent --quiet --out "$out/$mode" "${args[@]}" &
  local pid=$!
  sleep 2 # start-up is not what is measured
  if [ "$mode" = ui+client ]; then
    curl -sN "http://127.0.0.1:$port/api/v1/stream" >/dev/null &
    client=$!
  fi
  local t0 c0 t1 c1
  t0=$(date +%s.%N); c0=$(ticks $pid)
  sleep "$block"
  t1=$(date +%s.%N); c1=$(ticks $pid)
  [ -n "$client" ] && kill "$client"
  kill -INT "$pid"; wait "$pid" || true
  awk -v c="$((c1 - c0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.3f\n", c / hz / (t1 - t0) * 60 }'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); blocks of ${block}s, $pairs rounds"
for i in $(seq "$pairs"); do
  for mode in off ui ui+client; do
    printf '%s %s\n' "$mode" "$(one "$mode")"
  done
done | tee "$out/results" 
awk '{ s[$1] += $2; n[$1]++ } END { for (m in s) printf "mean %-10s %.3f CPU s/min (%.2f%% of one core)\n", m, s[m]/n[m], s[m]/n[m]/60*100 }' "$out/results" | sort
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
