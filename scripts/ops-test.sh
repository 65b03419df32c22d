#!/usr/bin/env bash
# Operations kit test: alert rules under promtool, dashboard/rule metric names,
# and a live run on loopback: misbehaving agent -> a2a-tap -> /metrics -> a
# real Prometheus server (with dashboards/alerts.yml loaded).
#
#   scripts/ops-test.sh            everything (needs the built proxy)
#   scripts/ops-test.sh --static   rules, dashboard JSON and names vs the contract only
#
# Environment:
#   A2A_TAP_BIN        proxy binary to test (default: $CARGO_TARGET_DIR or
#                      target, then PROFILE/a2a-tap, built here)
#   OPS_TEST_PROFILE   release (default) or debug: the build whose binaries are
#                      tested (scripts/test.sh tests the debug build its
#                      `cargo test` already made, instead of building again)
#   OPS_TEST_NO_BUILD  set to 1 to skip `cargo build` (binaries already built)
#   OPS_TEST_KEEP      set to 1 to keep the temp dir (logs, scrape, audit log)
#   A2A_CONTRACT       the stable metric table (default: dashboards/contract-metrics.md)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

mode=full
case "${1:-}" in
  "") ;;
  --static) mode=static ;;
  *) echo "usage: $0 [--static]" >&2; exit 2 ;;
esac

step() { printf '\n== ops-test: %s\n' "$*"; }
fail() {
  local log
  for log in "${tmp:-/nonexistent}"/*.log; do
    [ -s "$log" ] || continue
    printf -- '--- %s (last 15 lines)\n' "${log##*/}" >&2
    tail -n 15 "$log" >&2
  done
  printf 'ops-test: FAIL: %s\n' "$*" >&2
  exit 1
}

# ---------------------------------------------------------------- static part

step "install promtool + prometheus (if missing)"
scripts/install-promtool.sh

step "promtool check rules / test rules"
promtool check rules dashboards/alerts.yml
promtool test rules dashboards/alerts.test.yml

step "dashboard JSON parses; its PromQL parses"
python3 -m json.tool dashboards/a2a-tap.json >/dev/null || fail "dashboards/a2a-tap.json is not valid JSON"
# Importable (a datasource input), filterable by upstream and instance (pod)
# in every query, and no all-zero series stacked.
python3 - dashboards/a2a-tap.json <<'EOF' || fail "dashboards/a2a-tap.json: see above"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
problems = []
if not any(i.get("type") == "datasource" and i.get("pluginId") == "prometheus" for i in d.get("__inputs", [])):
    problems.append("no __inputs entry for a Prometheus datasource")
names = {v["name"] for v in d["templating"]["list"]}
problems += [f"no ${v} variable" for v in ("datasource", "upstream", "instance") if v not in names]
for p in d["panels"]:
    stacked = ((p.get("fieldConfig") or {}).get("defaults") or {}).get("custom", {}).get("stacking", {}).get("mode") == "normal"
    for t in p.get("targets", []):
        if "$instance" not in t["expr"]:
            problems.append(f"panel {p['title']!r}: query without the $instance filter")
        if stacked and not t["expr"].rstrip().endswith("> 0"):
            problems.append(f"panel {p['title']!r}: stacked query keeps all-zero series")
for x in problems:
    print("dashboard:", x, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
tmp=$(mktemp -d "${TMPDIR:-/tmp}/a2a-ops-test.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in ${pids[@]+"${pids[@]}"}; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in ${pids[@]+"${pids[@]}"}; do
    # bounded: each child gets ~5 s to exit after SIGTERM, then SIGKILL
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "${OPS_TEST_KEEP:-0}" = 1 ]; then
    echo "ops-test: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
python3 scripts/ops_names.py --promql-rules "$tmp/dashboard-exprs.yml"
promtool check rules "$tmp/dashboard-exprs.yml" >/dev/null || {
  promtool check rules "$tmp/dashboard-exprs.yml" || true
  fail "a dashboard query does not parse as PromQL"
}

step "metric and label names of dashboard + alerts vs the contract"
contract=${A2A_CONTRACT:-dashboards/contract-metrics.md}
python3 scripts/ops_names.py --contract "$contract"

step "deployment examples parse (where the tools exist)"
if python3 -c 'import yaml, tomllib' 2>/dev/null; then
  python3 - deploy/kubernetes/*.yaml <<'EOF'
import sys, tomllib, yaml
for path in sys.argv[1:]:
    docs = [d for d in yaml.safe_load_all(open(path, encoding="utf-8")) if d]
    print(f"{path}: {', '.join(d['kind'] + '/' + d.get('metadata', {}).get('name', '-') for d in docs)}")
    for d in docs:
        for key, text in (d.get("data") or {}).items():
            if key.endswith(".toml"):
                tomllib.loads(text)
EOF
else
  echo "skipped: python3 lacks yaml or tomllib (the live run starts a2a-tap with the ConfigMap's config)"
fi
step "the Kustomize base renders; its PrometheusRule is dashboards/alerts.yml"
scripts/gen-prometheusrule.sh "$tmp/prometheusrule.yaml"
diff -u deploy/kubernetes/prometheusrule.yaml "$tmp/prometheusrule.yaml" ||
  fail "deploy/kubernetes/prometheusrule.yaml is stale: run scripts/gen-prometheusrule.sh"
if command -v kubectl >/dev/null 2>&1; then
  kustomize=(kubectl kustomize)
elif command -v kustomize >/dev/null 2>&1; then
  kustomize=(kustomize build)
else
  fail "kubectl (or kustomize) is needed to render deploy/kubernetes"
fi
"${kustomize[@]}" deploy/kubernetes >"$tmp/kustomized.yaml" || fail "deploy/kubernetes does not render"
for kind in ConfigMap Deployment Service ServiceMonitor PrometheusRule; do
  grep -q "^kind: $kind\$" "$tmp/kustomized.yaml" || fail "the Kustomize base renders no $kind"
done
echo "renders: $(grep '^kind: ' "$tmp/kustomized.yaml" | cut -d' ' -f2 | tr '\n' ' ')"
"${kustomize[@]}" deploy/kubernetes-replicas >"$tmp/kustomized-replicas.yaml" ||
  fail "deploy/kubernetes-replicas does not render"
grep -q 'backend = "redis"' "$tmp/kustomized-replicas.yaml" ||
  fail "the replicas overlay's ConfigMap has no shared registry"
grep -q '^  replicas: 3$' "$tmp/kustomized-replicas.yaml" || fail "the replicas overlay does not scale the Deployment"
echo "the replicas overlay renders (3 replicas, a Redis, backend = redis)"

if command -v systemd-analyze >/dev/null 2>&1; then
  # verify wants ExecStart's binary to exist: check a copy that runs /bin/true.
  sed 's|^ExecStart=/usr/local/bin/a2a-tap|ExecStart=/bin/true|' deploy/a2a-tap.service >"$tmp/a2a-tap.service"
  # It only warns (exit 0) on unknown keys: any remark about the unit fails.
  remarks=$(systemd-analyze verify "$tmp/a2a-tap.service" 2>&1) || fail "systemd-analyze verify: $remarks"
  if grep -F "a2a-tap.service" <<<"$remarks"; then
    fail "systemd-analyze verify has remarks on deploy/a2a-tap.service"
  fi
  echo "deploy/a2a-tap.service: systemd-analyze verify ok"
else
  echo "skipped: systemd-analyze not installed"
fi

if [ "$mode" = static ]; then
  step "static checks passed"
  exit 0
fi

# ------------------------------------------------------------------ live part

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll every 0.2 s until COMMAND succeeds.
wait_for() {
  local secs=$1 what=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${secs}s waiting for $what"
    sleep 0.2
  done
}

not_running() { ! kill -0 "$1" 2>/dev/null; }

# forget PID: a reaped child leaves the cleanup list (its PID may be reused).
forget() {
  local keep=() p
  for p in ${pids[@]+"${pids[@]}"}; do [ "$p" = "$1" ] || keep+=("$p"); done
  pids=(${keep[@]+"${keep[@]}"})
}

# wait_up PID SECONDS WHAT URL: poll URL until it answers 2xx; fail early if PID exits.
wait_up() {
  local pid=$1 secs=$2 what=$3 url=$4
  local deadline=$((SECONDS + secs)) status=0
  until http_ok "$url"; do
    if not_running "$pid"; then
      wait "$pid" || status=$?
      forget "$pid"
      fail "$what exited (status $status) before $url answered"
    fi
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${secs}s waiting for $what at $url"
    sleep 0.2
  done
}

http_ok() { curl -fs --max-time 2 -o /dev/null "$1"; }

profile=${OPS_TEST_PROFILE:-release}
case "$profile" in
  release) profile_flag=(--release) ;;
  debug) profile_flag=() ;;
  *) echo "ops-test: OPS_TEST_PROFILE must be release or debug, not '$profile'" >&2; exit 2 ;;
esac
target_dir=${CARGO_TARGET_DIR:-$root/target}
tap_bin=${A2A_TAP_BIN:-$target_dir/$profile/a2a-tap}
agent_bin=$target_dir/$profile/misbehaving_agent
if [ "${OPS_TEST_NO_BUILD:-0}" != 1 ]; then
  step "build a2a-tap and the misbehaving agent ($profile)"
  if [ -z "${A2A_TAP_BIN:-}" ]; then
    cargo build ${profile_flag[@]+"${profile_flag[@]}"} --locked --features example-agent --bin a2a-tap --bin misbehaving_agent
  else
    cargo build ${profile_flag[@]+"${profile_flag[@]}"} --locked --features example-agent --bin misbehaving_agent
  fi
fi
[ -x "$tap_bin" ] || fail "$tap_bin not found"
[ -x "$agent_bin" ] || fail "$agent_bin not found"

step "the container image's recipe fits the binary"
scripts/image-check.sh "$tap_bin" || fail "the image recipe does not fit"

step "the Kubernetes example's config.toml is accepted by a2a-tap"
awk '/^  config.toml: \|/ {on=1; next} on && /^    / {print substr($0, 5); next} on && /^ *$/ {print ""; next} on {exit}' \
  deploy/kubernetes/a2a-tap-sidecar.yaml >"$tmp/k8s-config.toml"
grep -q '^upstream' "$tmp/k8s-config.toml" || fail "could not extract config.toml from the ConfigMap"
k8s_admin_port=$(free_port)
"$tap_bin" --config "$tmp/k8s-config.toml" --listen "127.0.0.1:$(free_port)" \
  --admin "127.0.0.1:$k8s_admin_port" --audit-log "$tmp/k8s-audit.jsonl" >"$tmp/k8s-tap.log" 2>&1 &
k8s_pid=$!
pids+=("$k8s_pid")
wait_up "$k8s_pid" 15 "a2a-tap with the ConfigMap's config.toml" "http://127.0.0.1:$k8s_admin_port/healthz"
kill -TERM "$k8s_pid"
wait_for 10 "a2a-tap to exit on SIGTERM" not_running "$k8s_pid"
k8s_status=0
wait "$k8s_pid" || k8s_status=$?
forget "$k8s_pid"
[ "$k8s_status" = 0 ] || fail "a2a-tap with the ConfigMap's config exited $k8s_status on SIGTERM, not 0"
echo "accepted, and exited 0 on SIGTERM"
"$tap_bin" config check --config deploy/kubernetes-replicas/config.toml >"$tmp/replicas-config.txt" 2>&1 ||
  fail "deploy/kubernetes-replicas/config.toml is refused: $(cat "$tmp/replicas-config.txt")"
echo "the replicas overlay's config.toml is accepted (config check)"

step "start the misbehaving agent"
"$agent_bin" 127.0.0.1:0 >"$tmp/agent.out" 2>"$tmp/agent.log" &
agent_pid=$!
pids+=("$agent_pid")
wait_for 10 "the agent to listen" grep -q 'listening on' "$tmp/agent.out"
agent=$(sed -n 's/^misbehaving_agent listening on //p' "$tmp/agent.out")
echo "agent on $agent"

step "start a2a-tap in front of it"
listen_port=$(free_port)
admin_port=$(free_port)
proxy=http://127.0.0.1:$listen_port
admin=http://127.0.0.1:$admin_port
# Small max_body_bytes: the agent's plain JSON replies then pass unjudged, so
# a2a_analysis_skipped_total appears in the scrape (the dashboard uses it).
push_port=$(free_port)
# The push relay on: its series (deliveries by outcome, registrations) are
# in the scrape the dashboard's and the alert's names are checked against.
cat >"$tmp/a2a-tap.toml" <<EOF
[analysis]
max_body_bytes = 64

[push]
relay = true
listen = "127.0.0.1:$push_port"
public_url = "http://127.0.0.1:$push_port"
EOF
"$tap_bin" --config "$tmp/a2a-tap.toml" --listen "127.0.0.1:$listen_port" \
  --upstream "http://$agent" --admin "127.0.0.1:$admin_port" \
  --audit-log "$tmp/audit.jsonl" --name misbehaving-agent >"$tmp/tap.log" 2>&1 &
tap_pid=$!
pids+=("$tap_pid")
wait_up "$tap_pid" 15 "a2a-tap" "$admin/healthz"
wait_up "$tap_pid" 15 "a2a-tap (readiness)" "$admin/readyz"

step "start Prometheus scraping the admin port every 1s"
prom_port=$(free_port)
prom=http://127.0.0.1:$prom_port
cp dashboards/alerts.yml "$tmp/alerts.yml"
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - alerts.yml
scrape_configs:
  - job_name: a2a-tap
    static_configs:
      - targets: ["127.0.0.1:$admin_port"]
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/prom-data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!
pids+=("$prom_pid")
wait_up "$prom_pid" 30 "prometheus" "$prom/-/ready"

step "drive misbehaving streams through a2a-tap"
stream() { # stream SCRIPT ID -> body on stdout
  curl -sS -N --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -H 'Accept: text/event-stream' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"SendStreamingMessage\",\"params\":{\"message\":{\"role\":\"ROLE_USER\",\"messageId\":\"m-$2\",\"parts\":[{\"text\":\"$1\"}]}}}" \
    "$proxy/"
}
id=1
for script in terminal_exit abandoned_artifact unspecified_state clean; do
  body=$(stream "$script" "$id") || fail "stream $script failed through a2a-tap"
  frames=$(grep -c '^data: ' <<<"$body" || true)
  echo "$script: $frames frames forwarded"
  [ "$frames" -ge 3 ] || fail "stream $script came back with $frames frames: $body"
  id=$((id + 1))
done
# Plain JSON-RPC calls: request counters by method and a skipped analysis.
for method in SendMessage GetTask; do
  curl -fsS --max-time 5 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"$method\",\"params\":{\"id\":\"task-x\",\"message\":{\"role\":\"ROLE_USER\",\"messageId\":\"m-$id\",\"parts\":[{\"text\":\"hi\"}]}}}" \
    "$proxy/" >/dev/null
  id=$((id + 1))
done

step "Prometheus sees a2a_violations_total for the expected kinds (<= 30 s)"
expected="terminal_exit abandoned_artifact unspecified_state"
prom_kinds() {
  curl -fsS --max-time 2 --get --data-urlencode 'query=sum by (kind, severity) (a2a_violations_total)' \
    "$prom/api/v1/query" | python3 -c '
import json, sys
res = json.load(sys.stdin)["data"]["result"]
print(" ".join(sorted("%s/%s=%s" % (r["metric"].get("kind"), r["metric"].get("severity"), r["value"][1]) for r in res)))'
}
has_kinds() {
  local got; got=$(prom_kinds) || return 1
  for k in $expected; do
    [[ " $got" == *" $k/error="* ]] || return 1
  done
}
deadline=$((SECONDS + 30))
until has_kinds; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "Prometheus has: $(prom_kinds || echo '(query failed)')" >&2
    fail "a2a_violations_total did not show error-severity $expected within 30 s"
  fi
  sleep 0.5
done
echo "Prometheus has: $(prom_kinds)"

step "the audit log holds the same findings, none for the clean stream"
wait_for 5 "audit records" grep -q 'unspecified_state' "$tmp/audit.jsonl"
python3 - "$tmp/audit.jsonl" $expected <<'EOF'
import json, sys
path, expected = sys.argv[1], set(sys.argv[2:])
records = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
kinds = {r["kind"] for r in records}
print("audit kinds:", ", ".join(sorted(kinds)), f"({len(records)} records)")
missing = expected - kinds
clean = [r for r in records if str(r.get("task_id") or "").startswith("task-clean-")]
if missing:
    sys.exit(f"audit log lacks {sorted(missing)}")
if clean:
    sys.exit(f"the clean stream produced findings: {clean}")
EOF

step "the alert rules fire in the real Prometheus"
firing() {
  curl -fsS --max-time 2 "$prom/api/v1/alerts" | python3 -c '
import json, sys
alerts = json.load(sys.stdin)["data"]["alerts"]
print(" ".join(sorted("%s/%s" % (a["labels"]["alertname"], a["labels"].get("kind", "-"))
                      for a in alerts if a["state"] == "firing")))'
}
has_alerts() {
  local got; got=" $(firing) " || return 1
  [[ "$got" == *" A2AErrorViolation/terminal_exit "* ]] &&
    [[ "$got" == *" A2AErrorViolation/unspecified_state "* ]] &&
    [[ "$got" == *" A2AAbandonedArtifactOnCompletedTask/- "* ]]
}
deadline=$((SECONDS + 20))
until has_alerts; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "firing: $(firing || echo '(query failed)')" >&2
    fail "expected alerts did not fire within 20 s"
  fi
  sleep 0.5
done
echo "firing: $(firing)"

step "an unreachable upstream gives 502 and counts an upstream error"
kill "$agent_pid"
wait "$agent_pid" 2>/dev/null || true
forget "$agent_pid"
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
  -H 'A2A-Version: 1.0' -d '{"jsonrpc":"2.0","id":99,"method":"GetTask","params":{"id":"t"}}' "$proxy/")
[ "$code" = 502 ] || fail "expected 502 with the agent gone, got $code"
echo "agent gone: $code"

step "promtool check metrics on a real scrape"
curl -fsS --max-time 5 "$admin/metrics" >"$tmp/metrics.txt"
echo "families in scrape: $(grep -c '^# TYPE ' "$tmp/metrics.txt" || true)"
promtool check metrics <"$tmp/metrics.txt" || fail "promtool check metrics found problems"

step "every metric and label of dashboard + alerts exists in the real scrape"
python3 scripts/ops_names.py --scrape "$tmp/metrics.txt" || {
  echo "--- scrape: # TYPE lines" >&2; grep '^# TYPE ' "$tmp/metrics.txt" >&2 || true
  fail "names used by the dashboard or alerts are missing from the scrape"
}

step "all ops checks passed"
