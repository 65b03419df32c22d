#!/usr/bin/env bash
# Instructions a2a-tap executes per request, validating and as a plain
# pass-through (`validate = false`), counted by valgrind's callgrind: the
# same on every run, so a change of a few per cent shows where the timed
# load scripts (scripts/bench.sh) cannot see it on a shared machine. It
# counts user-space instructions only (no kernel time, no cache misses):
# a guide to what a change saves, not a throughput.
#
#   scripts/bench-instructions.sh                 # this tree's release build
#   scripts/bench-instructions.sh path/to/a2a-tap # another build
#   WORKLOAD=/json DURATION=10 scripts/bench-instructions.sh
#
# Prints, per request: the serving threads' instructions in each mode, the
# difference, and the analysis threads'. Loopback only; stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

WORKLOAD=${WORKLOAD:-/sse}
DURATION=${DURATION:-15}
UP_PORT=${UP_PORT:-18930}
TAP_PORT=${TAP_PORT:-18931}

for tool in valgrind callgrind_annotate wrk; do
  command -v "$tool" >/dev/null || {
    echo "$tool is needed (apt-get install valgrind wrk)" >&2
    exit 2
  }
done

cargo build --release --bins --example bench_upstream 2>&1 | tail -1
BIN=${1:-${CARGO_TARGET_DIR:-target}/release/a2a-tap}
[[ -x $BIN ]] || { echo "not an executable: $BIN" >&2; exit 2; }

start_work instr

"${CARGO_TARGET_DIR:-target}/release/examples/bench_upstream" "127.0.0.1:$UP_PORT" 2>/dev/null &
PIDS+=($!)
wait_port "127.0.0.1:$UP_PORT"
write_post_lua "$WORK/post.lua"
printf 'validate = false\n' >"$WORK/plain.toml"

# Instructions of the threads whose profile names `$2`, over `$1` requests.
sum_threads() { # requests marker files...
  local n=$1 marker=$2 total=0 ir
  shift 2
  for f in "$@"; do
    grep -q "$marker" "$f" || continue
    ir=$(awk '/^totals:/ {print $2}' "$f")
    total=$((total + ir))
  done
  echo $((total / n))
}

measure() { # mode (validating|plain): prints "serving analysis" per request
  local dir="$WORK/$1" cfg=()
  mkdir -p "$dir"
  [[ $1 == plain ]] && cfg=(--config "$WORK/plain.toml")
  RUST_LOG=warn valgrind --tool=callgrind --separate-threads=yes --compress-strings=no \
    --callgrind-out-file="$dir/cg.out" "$BIN" "${cfg[@]}" \
    --listen "127.0.0.1:$TAP_PORT" --admin "127.0.0.1:$((TAP_PORT + 1))" \
    --upstream "http://127.0.0.1:$UP_PORT" --audit-log /dev/null \
    >/dev/null 2>"$dir/valgrind.log" &
  local pid=$!
  wait_port "127.0.0.1:$TAP_PORT" || { cat "$dir/valgrind.log" >&2; exit 1; }
  # A first run warms what is built once (connections, metric series).
  wrk -t1 -c8 -d2s -s "$WORK/post.lua" "http://127.0.0.1:$TAP_PORT$WORKLOAD" >/dev/null
  callgrind_control --zero "$pid" >/dev/null 2>&1
  wrk -t1 -c8 -d"${DURATION}s" -s "$WORK/post.lua" \
    "http://127.0.0.1:$TAP_PORT$WORKLOAD" >"$dir/wrk.txt"
  callgrind_control --dump "$pid" >/dev/null 2>&1
  kill -INT "$pid"
  wait "$pid" || true
  local n
  n=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
  # The dump after zeroing holds the measured interval: its files (one per
  # thread) are told apart by the code each thread ran.
  local files=("$dir"/cg.out.1-*)
  echo "$n $(sum_threads "$n" 'ServingThread' "${files[@]}") $(sum_threads "$n" 'analysis::worker::' "${files[@]}")"
}

read -r n_plain plain _ < <(measure plain)
read -r n_live serving analysis < <(measure validating)
echo "$BIN, $WORKLOAD, $DURATION s at 8 connections under callgrind"
echo "requests measured: validate = false $n_plain, validating $n_live"
echo "instructions per request:"
printf '  serving threads, validate = false  %8d\n' "$plain"
printf '  serving threads, validating        %8d  (%+d)\n' "$serving" $((serving - plain))
printf '  analysis thread                    %8d\n' "$analysis"
printf '  validation in all                  %8d  (%+.1f %% of the pass-through)\n' \
  $((serving - plain + analysis)) "$(awk -v a=$((serving - plain + analysis)) -v p="$plain" 'BEGIN {print 100 * a / p}')"
