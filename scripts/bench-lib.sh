# Shared by the load scripts (sourced, not run): their scratch directory and
# background processes, waiting for a listener, the request every wrk run
# posts, and the median of a column and wrk's latencies in ms.

start_work() { # name: makes $WORK and $PIDS, cleared away on exit
  WORK=$(mktemp -d "/tmp/a2a-tap-$1.XXXXXX")
  PIDS=()
  trap stop_work EXIT
}

stop_work() { # stops what PIDS lists and any daemon that left a pid file in $WORK
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for f in "$WORK"/*.pid; do
    [[ -f $f ]] && kill "$(cat "$f")" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}

wait_port() { # host:port
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "nothing listening on $1" >&2
  return 1
}

write_post_lua() { # file: a wrk script POSTing a JSON-RPC SendStreamingMessage
  cat >"$1" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "text/event-stream"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"m-1","parts":[{"text":"book a flight"}]}}}'
LUA
}

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

to_ms() { # wrk latency (us/ms/s) -> ms
  awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v*=1000}; printf "%.3f\n", v}'
}
