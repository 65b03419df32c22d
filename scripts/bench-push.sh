#!/usr/bin/env bash
# The push relay's cost (docs/push.md): deliveries per second and CPU per
# delivery through a2a-tap's relay (`[push] relay = true`) against the same
# deliveries straight to the webhook, in one run, loopback only.
#
#   scripts/bench-push.sh                      # 3 rounds x 10 s, 64 connections
#   DURATION=5s ROUNDS=5 CONNS=32 scripts/bench-push.sh
#
# The webhook is the bench upstream (any POST answered with a small JSON);
# one config is registered through the proxy (a SendMessage to a stub agent
# that keeps the body it got, so the relay URL is known); wrk then POSTs a
# 1.0 StreamResponse status update for that config's task, as an agent's
# push sender does. Each delivery is judged (no finding: the audit log is
# checked empty at the end). Rounds alternate the two targets; medians are
# reported, and a2a-tap's CPU (all its threads, from /proc) per delivery.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
HOOK_PORT=${HOOK_PORT:-18930}
AGENT_PORT=${AGENT_PORT:-18931}
TAP_PORT=${TAP_PORT:-18932}
TAP_ADMIN=${TAP_ADMIN:-18933}
RELAY_PORT=${RELAY_PORT:-18934}

start_work bench-push
command -v wrk >/dev/null || {
  echo "installing wrk (apt-get)"
  apt-get install -y -q wrk >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q wrk >/dev/null; }
}
cargo build --release --bin a2a-tap --example bench_upstream 2>&1 | tail -1
TARGET_DIR=${CARGO_TARGET_DIR:-target}

"$TARGET_DIR/release/examples/bench_upstream" "127.0.0.1:$HOOK_PORT" >"$WORK/hook.log" 2>&1 &
PIDS+=($!)
# The stub agent: answers a task, keeps the last request body.
python3 - "$AGENT_PORT" "$WORK/agent.body" >"$WORK/agent.log" 2>&1 <<'PY' &
import http.server, sys
port, keep = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        open(keep, "wb").write(body)
        out = b'{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-bench","contextId":"c-bench","status":{"state":"TASK_STATE_WORKING"}}}}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
PIDS+=($!)
cat >"$WORK/tap.toml" <<EOF
[push]
relay = true
listen = "127.0.0.1:$RELAY_PORT"
public_url = "http://127.0.0.1:$RELAY_PORT"
EOF
"$TARGET_DIR/release/a2a-tap" --config "$WORK/tap.toml" --listen "127.0.0.1:$TAP_PORT" \
  --upstream "http://127.0.0.1:$AGENT_PORT" --admin "127.0.0.1:$TAP_ADMIN" \
  --audit-log "$WORK/audit.jsonl" --log-level warn >"$WORK/tap.log" 2>&1 &
TAP_PID=$!
PIDS+=("$TAP_PID")
for p in "$HOOK_PORT" "$AGENT_PORT" "$TAP_PORT" "$RELAY_PORT"; do wait_port "127.0.0.1:$p"; done

curl -fsS -o /dev/null -H 'content-type: application/json' -H 'A2A-Version: 1.0' \
  -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"role\":\"ROLE_USER\",\"messageId\":\"m-1\",\"parts\":[{\"text\":\"go\"}]},\"configuration\":{\"returnImmediately\":true,\"taskPushNotificationConfig\":{\"url\":\"http://127.0.0.1:$HOOK_PORT/hook\",\"token\":\"tok\"}}}}" \
  "http://127.0.0.1:$TAP_PORT/"
RELAY_URL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["params"]["configuration"]["taskPushNotificationConfig"]["url"])' "$WORK/agent.body")
case $RELAY_URL in
  "http://127.0.0.1:$RELAY_PORT/"*) ;;
  *) echo "the agent was not given a relay URL: $RELAY_URL" >&2; exit 1 ;;
esac

cat >"$WORK/delivery.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/a2a+json"
wrk.headers["X-A2A-Notification-Token"] = "tok"
wrk.body = '{"statusUpdate":{"taskId":"t-bench","contextId":"c-bench","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-01T00:00:00Z"}}}'
LUA

run_wrk() { # url -> "rps p50 p99 requests errors"
  local out
  out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$WORK/delivery.lua" "$1")
  echo "$(awk '/^Requests\/sec:/ {print $2}' <<<"$out") $(awk '$1 == "50%" {print $2}' <<<"$out")" \
    "$(awk '$1 == "99%" {print $2}' <<<"$out") $(awk '/ requests in / {print $1}' <<<"$out")" \
    "$(awk '/Non-2xx|Socket errors/ {printf "%s ", $0}' <<<"$out")"
}
ticks() { local f; read -r -a f <<<"$(sed 's/.*) //' "/proc/$1/stat")"; echo $((f[11] + f[12])); }
CLK_TCK=$(getconf CLK_TCK)

echo "machine: $(nproc) cores; wrk $THREADS threads, $CONNS connections, $DURATION a run, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  order=(direct relayed)
  ((round % 2 == 0)) && order=(relayed direct)
  for t in "${order[@]}"; do
    if [[ $t == direct ]]; then url="http://127.0.0.1:$HOOK_PORT/hook"; else url=$RELAY_URL; fi
    before=$(ticks "$TAP_PID")
    res=$(run_wrk "$url")
    after=$(ticks "$TAP_PID")
    echo "$res $((after - before))" >>"$WORK/$t.runs"
    echo "round $round $t: $res"
  done
done
for t in direct relayed; do
  rps=$(awk '{print $1}' "$WORK/$t.runs" | median)
  p50=$(awk '{print $2}' "$WORK/$t.runs" | to_ms | median)
  p99=$(awk '{print $3}' "$WORK/$t.runs" | to_ms | median)
  echo "$t: $rps deliveries/s (median), p50 $p50 ms, p99 $p99 ms"
done
awk -v clk="$CLK_TCK" '{n += $4; t += $NF} END {printf "a2a-tap CPU per relayed delivery (all threads, all rounds): %.1f us\n", n ? t * 1e6 / clk / n : 0}' "$WORK/relayed.runs"
sleep 2
curl -fsS "http://127.0.0.1:$TAP_ADMIN/metrics" | grep -E '^a2a_push_deliveries_total' || true
if [[ -s $WORK/audit.jsonl ]]; then
  echo "unexpected findings:" >&2
  head -3 "$WORK/audit.jsonl" >&2
  exit 1
fi
echo "no finding (every delivery judged legal)"
