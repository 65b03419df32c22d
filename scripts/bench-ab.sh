#!/usr/bin/env bash
# Compares two a2a-tap builds under the same load at the same moment: both
# run at once in front of one scripted upstream, each loaded by its own wrk,
# so a shared machine's background load hits both alike. Prints each round's
# requests/s and the ratio B/A. Loopback only; stops by itself.
#
#   scripts/bench-ab.sh OLD_BINARY NEW_BINARY
#   ROUNDS=8 DURATION=5s WORKLOAD=/json scripts/bench-ab.sh a b
#   CONFIG_A=plain.toml scripts/bench-ab.sh a b   # a --config for one side
#
# Two copies of one build come out within a few per cent of each other.
# Not a measure of validation's own cost: the analysis thread's CPU is
# shared out among both processes (scripts/bench.sh measures that).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

if (($# != 2)); then
  echo "usage: $0 BINARY_A BINARY_B" >&2
  exit 2
fi
BIN_A=$1
BIN_B=$2
for b in "$BIN_A" "$BIN_B"; do
  [[ -x $b ]] || { echo "not an executable: $b" >&2; exit 2; }
done
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-32}
WORKLOAD=${WORKLOAD:-/sse}
UP_PORT=${UP_PORT:-18920}
A_PORT=${A_PORT:-18921}
B_PORT=${B_PORT:-18923}

command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 2; }

start_work ab

cargo build --release --example bench_upstream 2>&1 | tail -1

start_tap() { # binary port config
  local cfg=()
  [[ -n $3 ]] && cfg=(--config "$3")
  RUST_LOG=warn "$1" "${cfg[@]}" --listen "127.0.0.1:$2" --admin "127.0.0.1:$(($2 + 1))" \
    --upstream "http://127.0.0.1:$UP_PORT" --audit-log /dev/null >/dev/null 2>"$WORK/tap-$2.log" &
  PIDS+=($!)
  wait_port "127.0.0.1:$2"
}

"${CARGO_TARGET_DIR:-target}/release/examples/bench_upstream" "127.0.0.1:$UP_PORT" 2>/dev/null &
PIDS+=($!)
wait_port "127.0.0.1:$UP_PORT"
start_tap "$BIN_A" "$A_PORT" "${CONFIG_A:-}"
start_tap "$BIN_B" "$B_PORT" "${CONFIG_B:-}"

write_post_lua "$WORK/post.lua"

rps() { awk '/^Requests\/sec:/ {print $2}' "$1"; }
echo "A = $BIN_A, B = $BIN_B; $WORKLOAD, $CONNS connections each, $DURATION rounds"
ratios=()
for r in $(seq 1 "$ROUNDS"); do
  wrk -t1 -c"$CONNS" -d"$DURATION" -s "$WORK/post.lua" "http://127.0.0.1:$A_PORT$WORKLOAD" >"$WORK/a.out" &
  wa=$!
  wrk -t1 -c"$CONNS" -d"$DURATION" -s "$WORK/post.lua" "http://127.0.0.1:$B_PORT$WORKLOAD" >"$WORK/b.out" &
  wb=$!
  wait "$wa" "$wb"
  a=$(rps "$WORK/a.out")
  b=$(rps "$WORK/b.out")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
  ratios+=("$ratio")
  printf 'round %d: A %10.0f  B %10.0f  B/A %s\n' "$r" "$a" "$b" "$ratio"
done
printf '%s\n' "${ratios[@]}" | sort -g | awk '{v[NR]=$1} END {print "median B/A " v[int((NR+1)/2)]}'
