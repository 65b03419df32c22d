#!/usr/bin/env bash
# Load benchmark: the same load direct to a scripted upstream, through nginx
# proxy_pass (buffering off) and through a2a-tap, in one run, loopback only.
# Prints requests/s, p50 and p99 latency per target and workload, and a2a-tap's RSS.
#
#   scripts/bench.sh            # 3 rounds x 10 s per target and workload, 64 connections
#   DURATION=20s CONNS=128 ROUNDS=5 scripts/bench.sh
#   LIGHT_CONNS=0 scripts/bench.sh   # only the saturating workloads
#
# Targets take turns within each round (in reverse order every other round)
# and the median round is reported, so background load on a shared machine
# hits them all alike; validation's cost is also given round by round.
#
# To compare another proxy setup, add a start_* function and a line in TARGETS.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
UP_PORT=${UP_PORT:-18900}
NGINX_PORT=${NGINX_PORT:-18901}
TAP_PORT=${TAP_PORT:-18902}
TAP_ADMIN=${TAP_ADMIN:-18903}
PLAIN_PORT=${PLAIN_PORT:-18904}
PLAIN_ADMIN=${PLAIN_ADMIN:-18905}

start_work bench

# --- tools -----------------------------------------------------------------
need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || need_apt+=(nginx)
if ((${#need_apt[@]})); then
  echo "installing ${need_apt[*]} (apt-get)"
  apt-get install -y -q "${need_apt[@]}" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q "${need_apt[@]}" >/dev/null; }
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

cargo build --release --bin a2a-tap --example bench_upstream 2>&1 | tail -1
TAP_BIN=target/release/a2a-tap
UP_BIN=target/release/examples/bench_upstream

# --- targets: each start_* prints the base URL to load -----------------------
start_upstream() {
  "$UP_BIN" "127.0.0.1:$UP_PORT" 2>"$WORK/upstream.log" &
  PIDS+=($!)
  wait_port "127.0.0.1:$UP_PORT"
}

start_nginx() {
  cat >"$WORK/nginx.conf" <<CONF
worker_processes auto;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream agent { server 127.0.0.1:$UP_PORT; keepalive 256; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / {
      proxy_pass http://agent;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
CONF
  "$NGINX" -c "$WORK/nginx.conf" -p "$WORK" -g 'daemon on;'
  wait_port "127.0.0.1:$NGINX_PORT"
}

TAP_PID=""
start_tap() {
  RUST_LOG=warn "$TAP_BIN" --listen "127.0.0.1:$TAP_PORT" --admin "127.0.0.1:$TAP_ADMIN" \
    --upstream "http://127.0.0.1:$UP_PORT" >/dev/null 2>"$WORK/tap.log" &
  TAP_PID=$!
  PIDS+=("$TAP_PID")
  wait_port "127.0.0.1:$TAP_PORT"
}

# The same binary as a plain pass-through (`validate = false`): what
# validation costs is the difference between the two a2a-tap rows.
start_tap_plain() {
  printf 'validate = false\n' >"$WORK/plain.toml"
  RUST_LOG=warn "$TAP_BIN" --config "$WORK/plain.toml" --listen "127.0.0.1:$PLAIN_PORT" \
    --admin "127.0.0.1:$PLAIN_ADMIN" --upstream "http://127.0.0.1:$UP_PORT" \
    >/dev/null 2>"$WORK/tap-plain.log" &
  PIDS+=($!)
  wait_port "127.0.0.1:$PLAIN_PORT"
}

rss_kb() { awk "/^$2:/ {print \$2}" "/proc/$1/status" 2>/dev/null || echo "?"; }

# name|base URL
TARGETS=(
  "direct|http://127.0.0.1:$UP_PORT"
  "nginx|http://127.0.0.1:$NGINX_PORT"
  "a2a-tap|http://127.0.0.1:$TAP_PORT"
  "tap-plain|http://127.0.0.1:$PLAIN_PORT"
)
# workload|path|connections. The light-load rows (one connection: the CPU is
# not saturated) show what validation adds to each exchange's latency; the
# others, what it costs in throughput at 100 % CPU.
LIGHT_CONNS=${LIGHT_CONNS:-1}
WORKLOADS=(
  "sse (20 events, 5 KB)|/sse|$CONNS"
  "json (small)|/json|$CONNS"
)
if ((LIGHT_CONNS > 0)); then # LIGHT_CONNS=0 skips them
  WORKLOADS+=(
    "sse, $LIGHT_CONNS conn.|/sse|$LIGHT_CONNS"
    "json, $LIGHT_CONNS conn.|/json|$LIGHT_CONNS"
  )
fi

write_post_lua "$WORK/post.lua"

start_upstream
start_nginx
start_tap
start_tap_plain

run_wrk() { # url connections -> "rps p50 p99"
  local out threads=$THREADS
  ((threads > $2)) && threads=$2
  out=$(wrk -t"$threads" -c"$2" -d"$DURATION" --latency -s "$WORK/post.lua" "$1")
  local rps p50 p99
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  local errs
  errs=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
  echo "$rps $p50 $p99 ${errs:-}"
}

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
to_ms() { # wrk latency (us/ms/s) -> ms
  awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v*=1000}; printf "%.3f\n", v}'
}

echo
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); load generator, proxy and upstream share them"
echo "wrk: $THREADS threads, $CONNS keep-alive connections ($LIGHT_CONNS for the light-load rows), $DURATION per run, median of $ROUNDS rounds; POST JSON-RPC body"
echo
printf '%-22s %-10s %12s %10s %10s  %s\n' workload target "requests/s" "p50 ms" "p99 ms" notes
COSTS=()
for w in "${WORKLOADS[@]}"; do
  IFS='|' read -r wname wpath wconns <<<"$w"
  for t in "${TARGETS[@]}"; do : >"$WORK/${t%|*}.runs"; done
  for round in $(seq 1 "$ROUNDS"); do
    # Every other round runs the targets in reverse order, so that no
    # target always follows the same one.
    order=("${TARGETS[@]}")
    if ((round % 2 == 0)); then
      order=()
      for ((i = ${#TARGETS[@]} - 1; i >= 0; i--)); do order+=("${TARGETS[i]}"); done
    fi
    for t in "${order[@]}"; do
      run_wrk "${t#*|}$wpath" "$wconns" >>"$WORK/${t%|*}.runs"
    done
  done
  for t in "${TARGETS[@]}"; do
    runs="$WORK/${t%|*}.runs"
    rps=$(awk '{print $1}' "$runs" | median)
    p50=$(awk '{print $2}' "$runs" | to_ms | median)
    p99=$(awk '{print $3}' "$runs" | to_ms | median)
    notes=$(awk '{$1=$2=$3=""; print}' "$runs" | sort -u | xargs)
    printf '%-22s %-10s %12s %10s %10s  %s\n' "$wname" "${t%|*}" "$rps" "$p50" "$p99" "$notes"
  done
  # What validation costs, round by round: a2a-tap and tap-plain run one
  # after the other in each round, so the pair shares the machine's mood.
  costs=$(paste -d' ' <(awk '{print $1}' "$WORK/a2a-tap.runs") <(awk '{print $1}' "$WORK/tap-plain.runs") |
    awk '{printf "%.1f\n", 100 * (1 - $1 / $2)}')
  COSTS+=("$wname: $(xargs <<<"$costs" | sed 's/ /, /g') % (median $(median <<<"$costs") %)")
done
echo
echo "validation cost by round, 1 - a2a-tap / tap-plain requests/s:"
printf '  %s\n' "${COSTS[@]}"
echo
echo "a2a-tap RSS: now $(rss_kb "$TAP_PID" VmRSS) kB, peak $(rss_kb "$TAP_PID" VmHWM) kB"
echo "(a2a-tap validates; tap-plain is the same binary with validate = false)"
if command -v curl >/dev/null; then
  echo "a2a-tap findings during the run (must be 0: the workload is clean):" \
    "$(curl -s "http://127.0.0.1:$TAP_ADMIN/metrics" | awk '/^a2a_violations_total/ {s+=$2} END {print s+0}')"
  echo "a2a-tap unjudged exchanges:" \
    "$(curl -s "http://127.0.0.1:$TAP_ADMIN/metrics" | awk '/^a2a_analysis_skipped_total/ {s+=$2} END {print s+0}')"
fi
