#!/usr/bin/env bash
# Load benchmark: the same load direct to a scripted upstream, through nginx
# proxy_pass (buffering off) and through a2a-tap, in one run, loopback only.
# Prints requests/s, p50 and p99 latency per target and workload, a2a-tap's RSS,
# validation's cost round by round, the CPU each a2a-tap process (by thread)
# and nginx's workers used per request, and a2a-tap against nginx round by
# round (requests/s, p99, CPU per request; added latency with one connection).
#
#   scripts/bench.sh            # 3 rounds x 10 s per target and workload, 64 connections
#   DURATION=20s CONNS=128 ROUNDS=5 scripts/bench.sh
#   LIGHT_CONNS=0 scripts/bench.sh   # only the saturating workloads
#   TRACED=0 REDIS=0 GRPC=0 ROUTES=0 scripts/bench.sh  # without the tracing, shared-registry, gRPC or routes rows
#
# FLOOR=1 (the default) adds the floor row: examples/bench_floor.rs, the
# least an HTTP/1.1 reverse proxy must do (parse both heads, follow both
# bodies' framing, relay each read) on tokio and httparse, nothing else.
# Its CPU a request is the same run's bottom line for a2a-tap and nginx.
#
# ROUTES=1 (the default) adds two a2a-tap rows behind [[route]] tables, the
# same workload under the prefix /agents/zz: tap-1route (that route alone)
# and tap-50routes (49 other routes of the same prefix length before it, so
# every request is matched against all 50); routing's cost is their ratio.
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
TRACED_PORT=${TRACED_PORT:-18906}
TRACED_ADMIN=${TRACED_ADMIN:-18907}
TRACED01_PORT=${TRACED01_PORT:-18908}
TRACED01_ADMIN=${TRACED01_ADMIN:-18909}
REDIS_PORT=${REDIS_PORT:-18910}
SHARED_PORT=${SHARED_PORT:-18911}
SHARED_ADMIN=${SHARED_ADMIN:-18912}
ROUTE1_PORT=${ROUTE1_PORT:-18913}
ROUTE1_ADMIN=${ROUTE1_ADMIN:-18914}
ROUTE50_PORT=${ROUTE50_PORT:-18915}
ROUTE50_ADMIN=${ROUTE50_ADMIN:-18916}
FLOOR_PORT=${FLOOR_PORT:-18917}
FLOOR=${FLOOR:-1}
ROUTES=${ROUTES:-1}
TRACED=${TRACED:-1}
REDIS=${REDIS:-1}
GRPC=${GRPC:-1}

start_work bench

# --- tools -----------------------------------------------------------------
need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || need_apt+=(nginx)
((GRPC)) && { command -v h2load >/dev/null || need_apt+=(nghttp2-client); }
if ((${#need_apt[@]})); then
  echo "installing ${need_apt[*]} (apt-get)"
  apt-get install -y -q "${need_apt[@]}" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q "${need_apt[@]}" >/dev/null; }
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
((REDIS)) && ./scripts/setup-redis.sh >/dev/null

cargo build --release --bin a2a-tap --example bench_upstream --example bench_floor 2>&1 | tail -1
TARGET_DIR=${CARGO_TARGET_DIR:-target}
TAP_BIN=${TAP_BIN:-$TARGET_DIR/release/a2a-tap} # TAP_BIN=path: another build
UP_BIN=$TARGET_DIR/release/examples/bench_upstream
FLOOR_BIN=$TARGET_DIR/release/examples/bench_floor

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
  # The workers do the proxying; their CPU is measured as a2a-tap's is.
  NGINX_PIDS=$(pgrep -P "$(cat "$WORK/nginx.pid")" | xargs)
}

# The floor: a bare HTTP/1.1 relay (examples/bench_floor.rs), one thread
# a core as a2a-tap's serving threads.
FLOOR_PID=""
start_floor() {
  "$FLOOR_BIN" "127.0.0.1:$FLOOR_PORT" "127.0.0.1:$UP_PORT" 2>"$WORK/floor.log" &
  FLOOR_PID=$!
  PIDS+=("$FLOOR_PID")
  wait_port "127.0.0.1:$FLOOR_PORT"
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
PLAIN_PID=""
start_tap_plain() {
  printf 'validate = false\n' >"$WORK/plain.toml"
  RUST_LOG=warn "$TAP_BIN" --config "$WORK/plain.toml" --listen "127.0.0.1:$PLAIN_PORT" \
    --admin "127.0.0.1:$PLAIN_ADMIN" --upstream "http://127.0.0.1:$UP_PORT" \
    >/dev/null 2>"$WORK/tap-plain.log" &
  PLAIN_PID=$!
  PIDS+=("$PLAIN_PID")
  wait_port "127.0.0.1:$PLAIN_PORT"
}

# a2a-tap validating with tracing on: every exchange's span exported over
# OTLP/HTTP to a local receiver (the scripted upstream answers its POSTs,
# so the receiver's work lands on the same machine), at sample ratio $2.
TRACED_PIDS=()
start_tap_traced() { # name ratio port admin
  printf '[tracing]\nendpoint = "http://127.0.0.1:%s"\nsample_ratio = %s\n' "$UP_PORT" "$2" >"$WORK/$1.toml"
  RUST_LOG=warn "$TAP_BIN" --config "$WORK/$1.toml" --listen "127.0.0.1:$3" \
    --admin "127.0.0.1:$4" --upstream "http://127.0.0.1:$UP_PORT" \
    >/dev/null 2>"$WORK/$1.log" &
  TRACED_PIDS+=($!)
  PIDS+=($!)
  wait_port "127.0.0.1:$3"
}

# a2a-tap validating with the registry shared through a local redis-server
# (no persistence): every task's states published to its stream, and the
# stream read back (a lone replica reads its own facts and skips them).
SHARED_PID=""
start_tap_shared() {
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize yes --pidfile "$WORK/redis.pid" --logfile "$WORK/redis.log"
  wait_port "127.0.0.1:$REDIS_PORT"
  printf '[registry]\nbackend = "redis"\nredis_url = "redis://127.0.0.1:%s"\nkey_prefix = "bench"\n' \
    "$REDIS_PORT" >"$WORK/shared.toml"
  RUST_LOG=warn "$TAP_BIN" --config "$WORK/shared.toml" --listen "127.0.0.1:$SHARED_PORT" \
    --admin "127.0.0.1:$SHARED_ADMIN" --upstream "http://127.0.0.1:$UP_PORT" \
    >/dev/null 2>"$WORK/tap-redis.log" &
  SHARED_PID=$!
  PIDS+=("$SHARED_PID")
  wait_port "127.0.0.1:$SHARED_PORT"
}

# a2a-tap validating behind [[route]] tables: $2 routes, the loaded one
# (/agents/zz, its prefix stripped) last among routes of one prefix length.
ROUTE_PIDS=()
start_tap_routes() { # name routes port admin
  local i
  : >"$WORK/$1.toml"
  for ((i = 1; i < $2; i++)); do
    printf '[[route]]\nname = "r%02d"\nupstream = "http://127.0.0.1:%s"\npath_prefix = "/agents/r%02d"\n' \
      "$i" "$UP_PORT" "$i" >>"$WORK/$1.toml"
  done
  printf '[[route]]\nname = "zz"\nupstream = "http://127.0.0.1:%s"\npath_prefix = "/agents/zz"\n' \
    "$UP_PORT" >>"$WORK/$1.toml"
  RUST_LOG=warn "$TAP_BIN" --config "$WORK/$1.toml" --listen "127.0.0.1:$3" \
    --admin "127.0.0.1:$4" >/dev/null 2>"$WORK/$1.log" &
  ROUTE_PIDS+=($!)
  PIDS+=($!)
  wait_port "127.0.0.1:$3"
}

rss_kb() { awk "/^$2:/ {print \$2}" "/proc/$1/status" 2>/dev/null || echo "?"; }

# name|base URL
TARGETS=(
  "direct|http://127.0.0.1:$UP_PORT"
  "nginx|http://127.0.0.1:$NGINX_PORT"
  "a2a-tap|http://127.0.0.1:$TAP_PORT"
  "tap-plain|http://127.0.0.1:$PLAIN_PORT"
)
((FLOOR)) && TARGETS+=("floor|http://127.0.0.1:$FLOOR_PORT")
TRACED_ROWS=()
if ((TRACED)); then
  TRACED_ROWS=(tap-traced tap-trace-0.1)
  TARGETS+=("tap-traced|http://127.0.0.1:$TRACED_PORT" "tap-trace-0.1|http://127.0.0.1:$TRACED01_PORT")
fi
((REDIS)) && TARGETS+=("tap-redis|http://127.0.0.1:$SHARED_PORT")
((ROUTES)) && TARGETS+=("tap-1route|http://127.0.0.1:$ROUTE1_PORT/agents/zz" "tap-50routes|http://127.0.0.1:$ROUTE50_PORT/agents/zz")
# workload|path|connections. The light-load rows (one connection: the CPU is
# not saturated) show what validation adds to each exchange's latency; the
# others, what it costs in throughput at 100 % CPU. Every answer is about a
# new task (the upstream numbers them), so the registry is always full of
# distinct tasks; the storm is the SSE stream with a finding in every one
# (STORM=0 leaves it out).
LIGHT_CONNS=${LIGHT_CONNS:-1}
STORM=${STORM:-1}
WORKLOADS=(
  "sse (20 events, 5 KB)|/sse|$CONNS"
  "json (small)|/json|$CONNS"
)
((STORM)) && WORKLOADS+=("storm (a finding each)|/storm|$CONNS")
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
((FLOOR)) && start_floor
if ((TRACED)); then
  start_tap_traced tap-traced 1.0 "$TRACED_PORT" "$TRACED_ADMIN"
  start_tap_traced tap-trace-0.1 0.1 "$TRACED01_PORT" "$TRACED01_ADMIN"
fi
((REDIS)) && start_tap_shared
if ((ROUTES)); then
  start_tap_routes tap-1route 1 "$ROUTE1_PORT" "$ROUTE1_ADMIN"
  start_tap_routes tap-50routes 50 "$ROUTE50_PORT" "$ROUTE50_ADMIN"
fi

run_wrk() { # url connections -> "rps p50 p99 requests notes"
  local out threads=$THREADS
  ((threads > $2)) && threads=$2
  out=$(wrk -t"$threads" -c"$2" -d"$DURATION" --latency -s "$WORK/post.lua" "$1")
  local rps p50 p99 n
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  n=$(awk '/ requests in / {print $1}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  local errs
  errs=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
  echo "$rps $p50 $p99 $n ${errs:-}"
}

# CPU time each thread of some processes has used, "tid name ticks" a line
# (ticks of 1/CLK_TCK s, user and system).
thread_ticks() { # pid...
  local p t stat f
  for p in "$@"; do for t in /proc/"$p"/task/*; do
    stat=$(<"$t/stat") || continue
    read -r -a f <<<"${stat##*) }"
    echo "${t##*/} $(<"$t/comm") $((f[11] + f[12]))"
  done; done 2>/dev/null
}

# The ticks a process's threads used between two thread_ticks files, as
# "serving analysis other" (a thread that ended between them is not
# counted; one that began is counted whole).
cpu_delta() { # before after
  awk 'NR == FNR {b[$1] = $3; next}
    {d = $3 - b[$1]; if ($2 ~ /serve/) s += d; else if ($2 ~ /analys/) a += d; else o += d}
    END {print s + 0, a + 0, o + 0}' "$1" "$2"
}

# The machine's CPU ticks so far, "idle steal total" (idle with iowait).
machine_ticks() { awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print $5 + $6, $9, t}' /proc/stat; }
CLK_TCK=$(getconf CLK_TCK)
percent() { awk -v part="$1" -v whole="$2" 'BEGIN {printf "%.1f", 100 * part / whole}'; }
times() { # a b [decimals]: a / b (0 when b is 0)
  awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN {printf "%." d "f", b ? a / b : 0}'
}

# CPU per request from a target's .cpu file (lines "requests serving
# analysis other"): "total serving analysis other" in µs.
per_req() { # file
  awk -v clk="$CLK_TCK" '{n += $1; s += $2; a += $3; o += $4}
    END {u = n ? 1e6 / clk / n : 0; printf "%.2f %.2f %.2f %.2f\n", (s + a + o) * u, s * u, a * u, o * u}' "$1"
}


echo
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); load generator, proxy and upstream share them"
echo "wrk: $THREADS threads, $CONNS keep-alive connections ($LIGHT_CONNS for the light-load rows), $DURATION per run, median of $ROUNDS rounds; POST JSON-RPC body"
echo
printf '%-22s %-10s %12s %10s %10s  %s\n' workload target "requests/s" "p50 ms" "p99 ms" notes
COSTS=()
AGAINST_NGINX=()
declare -A P50 P99
ROUTE_COSTS=()
TCOSTS=()
RCOSTS=()
CPU=()
for w in "${WORKLOADS[@]}"; do
  IFS='|' read -r wname wpath wconns <<<"$w"
  for t in "${TARGETS[@]}"; do
    : >"$WORK/${t%|*}.runs"
    : >"$WORK/${t%|*}.cpu"
  done
  read -r idle0 steal0 total0 < <(machine_ticks)
  for round in $(seq 1 "$ROUNDS"); do
    # Every other round runs the targets in reverse order, so that no
    # target always follows the same one.
    order=("${TARGETS[@]}")
    if ((round % 2 == 0)); then
      order=()
      for ((i = ${#TARGETS[@]} - 1; i >= 0; i--)); do order+=("${TARGETS[i]}"); done
    fi
    for t in "${order[@]}"; do
      # The a2a-tap processes' CPU, thread by thread, around their runs.
      case ${t%|*} in
        a2a-tap) pid=$TAP_PID ;;
        tap-plain) pid=$PLAIN_PID ;;
        tap-traced) pid=${TRACED_PIDS[0]} ;;
        tap-trace-0.1) pid=${TRACED_PIDS[1]} ;;
        tap-redis) pid=$SHARED_PID ;;
        tap-1route) pid=${ROUTE_PIDS[0]} ;;
        tap-50routes) pid=${ROUTE_PIDS[1]} ;;
        nginx) pid=$NGINX_PIDS ;;
        floor) pid=$FLOOR_PID ;;
        *) pid="" ;;
      esac
      # shellcheck disable=SC2086 # nginx: a list of worker pids
      [[ -n $pid ]] && thread_ticks $pid >"$WORK/ticks.before"
      run_wrk "${t#*|}$wpath" "$wconns" >>"$WORK/${t%|*}.runs"
      if [[ -n $pid ]]; then
        # shellcheck disable=SC2086
        thread_ticks $pid >"$WORK/ticks.after"
        echo "$(tail -1 "$WORK/${t%|*}.runs" | awk '{print $4}') $(cpu_delta "$WORK/ticks.before" "$WORK/ticks.after")" >>"$WORK/${t%|*}.cpu"
      fi
    done
  done
  read -r idle1 steal1 total1 < <(machine_ticks)
  for t in "${TARGETS[@]}"; do
    runs="$WORK/${t%|*}.runs"
    rps=$(awk '{print $1}' "$runs" | median)
    p50=$(awk '{print $2}' "$runs" | to_ms | median)
    p99=$(awk '{print $3}' "$runs" | to_ms | median)
    notes=$(awk '{$1=$2=$3=$4=""; print}' "$runs" | sort -u | xargs)
    P50[${t%|*}]=$p50 P99[${t%|*}]=$p99
    printf '%-22s %-10s %12s %10s %10s  %s\n' "$wname" "${t%|*}" "$rps" "$p50" "$p99" "$notes"
  done
  # What validation costs, round by round: a2a-tap and tap-plain run one
  # after the other in each round, so the pair shares the machine's mood.
  costs=$(paste -d' ' <(awk '{print $1}' "$WORK/a2a-tap.runs") <(awk '{print $1}' "$WORK/tap-plain.runs") |
    awk '{printf "%.1f\n", 100 * (1 - $1 / $2)}')
  COSTS+=("$wname: $(xargs <<<"$costs" | sed 's/ /, /g') % (median $(median <<<"$costs") %)")
  # What tracing costs on top of validation, round by round, at both ratios.
  if ((REDIS)); then
    rcosts=$(paste -d' ' <(awk '{print $1}' "$WORK/tap-redis.runs") <(awk '{print $1}' "$WORK/a2a-tap.runs") |
      awk '{printf "%.1f\n", 100 * (1 - $1 / $2)}')
    RCOSTS+=("$wname: $(xargs <<<"$rcosts" | sed 's/ /, /g') % (median $(median <<<"$rcosts") %)")
  fi
  if ((ROUTES)); then
    rtcosts=$(paste -d' ' <(awk '{print $1}' "$WORK/tap-50routes.runs") <(awk '{print $1}' "$WORK/tap-1route.runs") |
      awk '{printf "%.1f\n", 100 * (1 - $1 / $2)}')
    ROUTE_COSTS+=("$wname: $(xargs <<<"$rtcosts" | sed 's/ /, /g') % (median $(median <<<"$rtcosts") %)")
  fi
  for traced in ${TRACED_ROWS[@]+"${TRACED_ROWS[@]}"}; do
    tcosts=$(paste -d' ' <(awk '{print $1}' "$WORK/$traced.runs") <(awk '{print $1}' "$WORK/a2a-tap.runs") |
      awk '{printf "%.1f\n", 100 * (1 - $1 / $2)}')
    TCOSTS+=("$wname, $traced: $(xargs <<<"$tcosts" | sed 's/ /, /g') % (median $(median <<<"$tcosts") %)")
  done
  # CPU per request over all rounds: steadier than requests/s on a shared
  # machine. If every core is busy at tap-plain's rate r, a request costs
  # the machine cores/r of CPU in all; validation's extra d then cuts the
  # rate by d / (cores/r + d). A model, for the timed cost above to be read
  # against: it assumes nothing else changed (the idle share says how busy
  # the cores were).
  read -r tap_all tap_s tap_a tap_o < <(per_req "$WORK/a2a-tap.cpu")
  read -r plain_all plain_s _ plain_o < <(per_req "$WORK/tap-plain.cpu")
  plain_rps=$(awk '{print $1}' "$WORK/tap-plain.runs" | median)
  CPU+=("$wname: a2a-tap $tap_all µs (serving $tap_s, analysis $tap_a, other $tap_o), tap-plain $plain_all µs (serving $plain_s, other $plain_o)")
  if ((REDIS)); then
    read -r sh_all sh_s sh_a sh_o < <(per_req "$WORK/tap-redis.cpu")
    CPU+=("  tap-redis $sh_all µs (serving $sh_s, analysis $sh_a, registry threads $sh_o): the shared registry $(awk -v a="$sh_all" -v b="$tap_all" 'BEGIN {printf "%+.2f", a - b}') µs a request")
  fi
  if ((ROUTES)); then
    read -r r1_all _ _ _ < <(per_req "$WORK/tap-1route.cpu")
    read -r r50_all _ _ _ < <(per_req "$WORK/tap-50routes.cpu")
    CPU+=("  tap-1route $r1_all µs, tap-50routes $r50_all µs: 49 more routes $(awk -v a="$r50_all" -v b="$r1_all" 'BEGIN {printf "%+.2f", a - b}') µs a request")
  fi
  for traced in ${TRACED_ROWS[@]+"${TRACED_ROWS[@]}"}; do
    read -r tr_all tr_s tr_a tr_o < <(per_req "$WORK/$traced.cpu")
    CPU+=("  $traced $tr_all µs (serving $tr_s, analysis $tr_a, span export $tr_o): tracing $(awk -v a="$tr_all" -v b="$tap_all" 'BEGIN {printf "%+.2f", a - b}') µs a request")
  done
  idle=$(percent $((idle1 - idle0)) $((total1 - total0)))
  steal=$(percent $((steal1 - steal0)) $((total1 - total0)))
  delta=$(awk -v a="$tap_all" -v b="$plain_all" 'BEGIN {printf "%+.2f", a - b}')
  if awk -v i="$idle" 'BEGIN {exit !(i < 10)}'; then
    model="at tap-plain's $plain_rps requests/s a cost of $(awk -v d="$delta" -v r="$plain_rps" -v c="$(nproc)" 'BEGIN {printf "%.1f", 100 * d / (c * 1e6 / r + d)}') % if the $(nproc) cores are the limit"
  else
    model="the cores are not the limit here"
  fi
  CPU+=("  validation $delta µs a request, $model; idle $idle %, host steal $steal % during the workload")
  [[ $wpath == /storm ]] && cp "$WORK/a2a-tap.runs" "$WORK/a2a-tap.storm.runs"
  # a2a-tap against nginx: they run one after the other in each round.
  read -r ng_all _ _ _ < <(per_req "$WORK/nginx.cpu")
  CPU+=("  nginx $ng_all µs (its workers)")
  if ((FLOOR)); then
    read -r fl_all _ _ _ < <(per_req "$WORK/floor.cpu")
    CPU+=("  floor $fl_all µs (a bare HTTP/1.1 relay: a2a-tap $(times "$tap_all" "$fl_all") x, tap-plain $(times "$plain_all" "$fl_all") x, nginx $(times "$ng_all" "$fl_all") x its CPU)")
  fi
  ratios=$(paste -d' ' <(awk '{print $1}' "$WORK/a2a-tap.runs") <(awk '{print $1}' "$WORK/nginx.runs") |
    awk '{printf "%.3f\n", $1 / $2}')
  if ((wconns == CONNS)); then
    AGAINST_NGINX+=("$wname: requests/s $(xargs <<<"$ratios" | sed 's/ /, /g') x nginx's (median $(median <<<"$ratios")); p99 ${P99[a2a-tap]} against ${P99[nginx]} ms; CPU a request $tap_all against $ng_all µs ($(times "$tap_all" "$ng_all" 3) x)")
  else
    AGAINST_NGINX+=("$wname: added over direct, p50 $(awk -v a="${P50[a2a-tap]}" -v b="${P50[nginx]}" -v d="${P50[direct]}" 'BEGIN {printf "%.3f against %.3f", a - d, b - d}') ms, p99 $(awk -v a="${P99[a2a-tap]}" -v b="${P99[nginx]}" -v d="${P99[direct]}" 'BEGIN {printf "%.3f against %.3f", a - d, b - d}') ms (a2a-tap against nginx)")
  fi
done
# gRPC: the same task as 20 protobuf messages on a server stream (h2c,
# h2load as the load generator: one stream at a time per connection),
# direct and through a2a-tap validating and not.
GCOSTS=()
if ((GRPC)); then
  printf '\x00\x00\x00\x00\x07\x12\x05\x0a\x03m-1' >"$WORK/grpc-req.bin"
  run_h2load() { # url -> "rps mean_ms requests"
    local out
    out=$(h2load -c"$CONNS" -m1 -t"$THREADS" -D"${DURATION%s}" -d "$WORK/grpc-req.bin" \
      -H 'content-type: application/grpc' -H 'te: trailers' "$1/lf.a2a.v1.A2AService/SendStreamingMessage")
    awk '/^finished in/ {gsub(",", ""); rps = $4} /^requests:/ {n = $8} /^time for request:/ {m = $6} END {print rps, m, n}' <<<"$out"
  }
  for t in direct a2a-tap tap-plain; do : >"$WORK/$t.grpc" && : >"$WORK/$t.gcpu"; done
  for round in $(seq 1 "$ROUNDS"); do
    for t in direct a2a-tap tap-plain; do
      case $t in
        direct) url=http://127.0.0.1:$UP_PORT pid="" ;;
        a2a-tap) url=http://127.0.0.1:$TAP_PORT pid=$TAP_PID ;;
        tap-plain) url=http://127.0.0.1:$PLAIN_PORT pid=$PLAIN_PID ;;
      esac
      [[ -n $pid ]] && thread_ticks "$pid" >"$WORK/ticks.before"
      run_h2load "$url" >>"$WORK/$t.grpc"
      if [[ -n $pid ]]; then
        thread_ticks "$pid" >"$WORK/ticks.after"
        echo "$(tail -1 "$WORK/$t.grpc" | awk '{print $3}') $(cpu_delta "$WORK/ticks.before" "$WORK/ticks.after")" >>"$WORK/$t.gcpu"
      fi
    done
  done
  for t in direct a2a-tap tap-plain; do
    printf '%-22s %-10s %12s %10s %10s  %s\n' "grpc (20 messages)" "$t" \
      "$(awk '{print $1}' "$WORK/$t.grpc" | median)" "$(awk '{print $2}' "$WORK/$t.grpc" | to_ms | median)" "-" "h2load: mean, no p99"
  done
  gcosts=$(paste -d' ' <(awk '{print $1}' "$WORK/a2a-tap.grpc") <(awk '{print $1}' "$WORK/tap-plain.grpc") |
    awk '{printf "%.1f\n", 100 * (1 - $1 / $2)}')
  GCOSTS+=("grpc (20 messages): $(xargs <<<"$gcosts" | sed 's/ /, /g') % (median $(median <<<"$gcosts") %)")
  read -r g_all g_s g_a g_o < <(per_req "$WORK/a2a-tap.gcpu")
  read -r gp_all gp_s _ gp_o < <(per_req "$WORK/tap-plain.gcpu")
  CPU+=("grpc (20 messages): a2a-tap $g_all µs (serving $g_s, analysis $g_a, other $g_o), tap-plain $gp_all µs (serving $gp_s, other $gp_o): validation $(awk -v a="$g_all" -v b="$gp_all" 'BEGIN {printf "%+.2f", a - b}') µs a call")
fi
echo
echo "a2a-tap (validating) against nginx, round by round:"
printf '  %s\n' "${AGAINST_NGINX[@]}"
echo
echo "validation cost by round, 1 - a2a-tap / tap-plain requests/s:"
printf '  %s\n' "${COSTS[@]}" ${GCOSTS[@]+"${GCOSTS[@]}"}
echo
if ((TRACED)); then
  echo "tracing cost by round, 1 - tap-traced / a2a-tap requests/s (sample ratio 1.0, and 0.1):"
  printf '  %s\n' "${TCOSTS[@]}"
fi
if ((ROUTES)); then
  echo
  echo "routing cost by round, 1 - tap-50routes / tap-1route requests/s (the same route, 49 more before it):"
  printf '  %s\n' "${ROUTE_COSTS[@]}"
fi
if ((REDIS)); then
  echo
  echo "shared registry cost by round, 1 - tap-redis / a2a-tap requests/s:"
  printf '  %s\n' "${RCOSTS[@]}"
fi
echo
echo "CPU per request, all rounds (a2a-tap's threads, from /proc):"
printf '  %s\n' "${CPU[@]}"
echo
echo "a2a-tap RSS: now $(rss_kb "$TAP_PID" VmRSS) kB, peak $(rss_kb "$TAP_PID" VmHWM) kB"
echo "(a2a-tap validates; tap-plain is the same binary with validate = false)"
if command -v curl >/dev/null; then
  # The storm's streams each carry one terminal_exit; nothing else may be found.
  echo "a2a-tap findings during the run other than the storm's (must be 0: the workload is clean):" \
    "$(curl -s "http://127.0.0.1:$TAP_ADMIN/metrics" | awk '/^a2a_violations_total/ && !/kind="terminal_exit"/ {s+=$2} END {print s+0}')"
  if ((STORM)); then
    echo "a2a-tap storm findings (terminal_exit), and storm streams wrk saw complete:" \
      "$(curl -s "http://127.0.0.1:$TAP_ADMIN/metrics" | awk '/^a2a_violations_total/ && /kind="terminal_exit"/ {s+=$2} END {print s+0}'), $(awk '{n += $4} END {print n + 0}' "$WORK/a2a-tap.storm.runs")"
  fi
  echo "a2a-tap unjudged exchanges:" \
    "$(curl -s "http://127.0.0.1:$TAP_ADMIN/metrics" | awk '/^a2a_analysis_skipped_total/ {s+=$2} END {print s+0}')"
  if ((REDIS)); then
    echo "tap-redis facts published, registry errors:" \
      "$(curl -s "http://127.0.0.1:$SHARED_ADMIN/metrics" | awk '/^a2a_registry_facts_total\{direction="published"\}/ {p=$2} /^a2a_registry_errors_total/ {e+=$2} END {print p+0 ", " e+0}')"
  fi
  if ((TRACED)); then
  for admin in "$TRACED_ADMIN" "$TRACED01_ADMIN"; do
    echo "traced a2a-tap (admin $admin) spans dropped:" \
      "$(curl -s "http://127.0.0.1:$admin/metrics" | awk '/^a2a_trace_spans_dropped_total/ {s+=$2} END {print s+0}')"
  done
  fi
fi
