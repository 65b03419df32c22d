#!/usr/bin/env bash
# The shared registry's own figures, loopback only: two a2a-tap replicas (A,
# B) in front of one scripted upstream, sharing facts through a local
# redis-server.
#  1. facts per second: a saturating SSE load (3 facts a request) on A for
#     $DURATION; how many facts A published and B received, and how long B
#     took after the load to have received them all.
#  2. the time from a terminal state passing A to B knowing it (median, p99),
#     one task at a time ($LATENCY_TASKS tasks).
#
#   scripts/bench-registry.sh
#   DURATION=20s CONNS=64 LATENCY_TASKS=1000 scripts/bench-registry.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

DURATION=${DURATION:-10s}
CONNS=${CONNS:-64}
LATENCY_TASKS=${LATENCY_TASKS:-500}
UP_PORT=${UP_PORT:-18920}
A_PORT=${A_PORT:-18921}
A_ADMIN=${A_ADMIN:-18922}
B_PORT=${B_PORT:-18923}
B_ADMIN=${B_ADMIN:-18924}
REDIS_PORT=${REDIS_PORT:-18925}

start_work bench-registry
command -v wrk >/dev/null || apt-get install -y -q wrk >/dev/null
./scripts/setup-redis.sh >/dev/null
cargo build --release --bin a2a-tap --example bench_upstream 2>&1 | tail -1
TARGET_DIR=${CARGO_TARGET_DIR:-target}
TAP_BIN=${TAP_BIN:-$TARGET_DIR/release/a2a-tap}
UP_BIN=$TARGET_DIR/release/examples/bench_upstream

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
  --daemonize yes --pidfile "$WORK/redis.pid" --logfile "$WORK/redis.log"
wait_port "127.0.0.1:$REDIS_PORT"
"$UP_BIN" "127.0.0.1:$UP_PORT" 2>"$WORK/upstream.log" &
PIDS+=($!)
wait_port "127.0.0.1:$UP_PORT"
printf '[registry]\nbackend = "redis"\nredis_url = "redis://127.0.0.1:%s"\nkey_prefix = "bench"\n' \
  "$REDIS_PORT" >"$WORK/shared.toml"
for r in "A $A_PORT $A_ADMIN" "B $B_PORT $B_ADMIN"; do
  read -r name port admin <<<"$r"
  RUST_LOG=warn "$TAP_BIN" --config "$WORK/shared.toml" --listen "127.0.0.1:$port" \
    --admin "127.0.0.1:$admin" --upstream "http://127.0.0.1:$UP_PORT" \
    >/dev/null 2>"$WORK/$name.log" &
  PIDS+=($!)
  wait_port "127.0.0.1:$port"
done
metric() { # admin name{labels}
  curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" 'index($0, m) == 1 {print $2; exit}'
}
sleep 1

echo "machine: $(nproc) cores; wrk, the upstream, both replicas and redis-server share them"
write_post_lua "$WORK/post.lua"
echo
echo "1. facts per second ($CONNS connections, $DURATION of SSE tasks through A):"
wrk -t2 -c"$CONNS" -d"$DURATION" -s "$WORK/post.lua" "http://127.0.0.1:$A_PORT/sse" >"$WORK/wrk.txt"
ended=$(date +%s.%N)
published=$(metric "$A_ADMIN" 'a2a_registry_facts_total{direction="published"}')
while :; do
  got=$(metric "$B_ADMIN" 'a2a_registry_facts_total{direction="received"}')
  [[ ${got%.*} -ge ${published%.*} ]] && break
  [[ $(awk -v s="$ended" -v n="$(date +%s.%N)" 'BEGIN {print (n - s > 30)}') == 1 ]] && break
  sleep 0.01
done
caught_up=$(awk -v s="$ended" -v n="$(date +%s.%N)" 'BEGIN {printf "%.2f", n - s}')
secs=${DURATION%s}
echo "  A: $(awk '/^Requests\/sec:/ {print $2}' "$WORK/wrk.txt") requests/s, published $published facts ($(awk -v p="$published" -v s="$secs" 'BEGIN {printf "%.0f", p / s}') facts/s)"
echo "  B: received $got of them, all $caught_up s after the load ended"
echo "  errors: A $(curl -s "http://127.0.0.1:$A_ADMIN/metrics" | awk '/^a2a_registry_errors_total/ {s+=$2} END {print s+0}'), B $(curl -s "http://127.0.0.1:$B_ADMIN/metrics" | awk '/^a2a_registry_errors_total/ {s+=$2} END {print s+0}')"
echo "  Redis: $(redis-cli -p "$REDIS_PORT" XLEN bench:facts) entries kept, $(redis-cli -p "$REDIS_PORT" INFO memory | awk -F: '/^used_memory_human/ {print $2}' | tr -d '\r') used"
echo
echo "2. latency:"
python3 scripts/registry-latency.py "http://127.0.0.1:$A_PORT/json" "http://127.0.0.1:$B_ADMIN" "$LATENCY_TASKS" | sed 's/^/  /'
