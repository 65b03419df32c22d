#!/usr/bin/env bash
# The test command of the README (and of CI): formatting, lints, the whole
# test suite with its real peers (the official Python, JavaScript and Rust A2A
# SDKs, fasta2a, grpcio, a real Prometheus and promtool, redis-server),
# installed here idempotently when missing.
# Steps run in order, the first failure stopping the script; two jobs run
# beside them from the start (the peers' installs, the fuzz build), and the
# step that needs one waits for it and fails if it failed.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

# Each step's wall time, printed as it ends and again in a table at the end:
# the CI budget is 20 minutes, and this says where it goes.
timings=()
current=""
step_started=$started
end_step() {
    [ -n "$current" ] || return 0
    local took=$(( $(date +%s) - step_started ))
    timings+=("$(printf '%5d s  %s' "$took" "$current")")
    echo "-- $current: ${took} s"
}
step() {
    end_step
    current="$1"
    step_started=$(date +%s)
    echo "== $1"
}

# await_background PID LOG WHAT: waits for a job started in the background,
# prints its output, and fails the script if it failed.
await_background() {
    local status=0
    wait "$1" || status=$?
    cat "$2"
    if [ "$status" -ne 0 ]; then
        echo "test.sh: $3 failed (exit $status; its output above)" >&2
        exit 1
    fi
}

# A cold build (CI's clean clone) compiles faster without incremental
# compilation's bookkeeping, which only a later rebuild would use.
if [ "${CI:-}" = true ]; then
    export CARGO_INCREMENTAL=0
fi

step "cargo fmt --check"
cargo fmt --all -- --check

# The peers' installs are mostly downloads: they run in the background,
# beside the compilation below, and are waited for before the tests run.
# Their output is printed then, in order; a failure fails the script there.
peers_log=$(mktemp)
# Each background job in a session of its own, so that an early exit can
# stop it with all its children (the trap below). `-w`: where the job is a
# process group leader (a shell with job control), setsid forks, and
# without it would exit at once with 0, whatever the job does. The job's
# shell writes its session's id (its pid) to a file, which the trap reads:
# where setsid forked, `$!` is the waiting parent, not the session.
sessions=$(mktemp)
setsid -w bash -c '
    echo $$ >>"$0"
    set -e
    echo "== python venvs with the official a2a-sdk 1.3.0 and 0.3.26, and fasta2a 2.1.1 (for the real-peer tests)"
    ./scripts/setup-python.sh
    echo "== node with the official @a2a-js/sdk 1.3.0 and 0.3.14 (for the real-peer tests)"
    ./scripts/setup-node.sh
    echo "== redis-server (for the shared-registry tests)"
    ./scripts/setup-redis.sh
    echo "== chromium (for the HTML report'"'"'s browser test)"
    ./scripts/setup-chromium.sh
' "$sessions" >"$peers_log" 2>&1 &
peers_pid=$!
# The fuzz targets' build (a release build of the whole tree, instrumented:
# about 6 minutes of 2 cores) runs in the background too, at the lowest
# priority: it takes what the compilation and the tests below leave idle
# (the tests wait on their peers and timers much of the time), never their
# share. The fuzz step waits for it.
fuzz_log=$(mktemp)
# A session is its own autogroup where the kernel groups by session
# (sched_autogroup): the group's nice is set too, or nice alone would only
# rank the build against itself, not against the tests.
setsid -w bash -c '
    echo $$ >>"$0"
    echo 19 >/proc/self/autogroup 2>/dev/null || true
    exec nice -n 19 ./scripts/fuzz.sh --build
' "$sessions" >"$fuzz_log" 2>&1 &
fuzz_pid=$!
stop_jobs() {
    local sid
    for sid in $(cat "$sessions" 2>/dev/null) "$peers_pid" "$fuzz_pid"; do
        kill -- -"$sid" 2>/dev/null || true
    done
    rm -f "$peers_log" "$fuzz_log" "$sessions"
}
trap stop_jobs EXIT

step "cargo clippy"
# example-agent: the quick start's agent (a binary behind that feature) too.
cargo clippy --all-targets --features example-agent -- -D warnings

step "minimum Rust version (rust-version) of every crate built in, and the Dockerfile's"
python3 scripts/msrv.py

step "the official Rust SDK's agent, tests/peers/rust (for the real-peer tests; cached in the target dir)"
./scripts/setup-rust-agent.sh

step "cargo test: build (the tests that need the peers above included)"
# Debug build: the proxy tests are I/O-bound and a release build of the
# dependencies would cost CI more than it saves on 2 cores.
# Plain `cargo test` leaves out the tests that need a tool installed above
# (each `#[ignore = "needs ...: run scripts/test.sh"]`); here they all run,
# and one whose tool is missing fails and names the setup script, never
# skips. `frames_per_second` is a measurement, not a check (see its file).
# The criterion benches (run once each, as tests) take no libtest flags;
# `--bench '*'` names them alone (`--benches` would run the library's and
# binaries' unit tests a second time).
cargo test --features example-agent --lib --bins --tests --examples --bench '*' --no-run

step "the peers' installs started at the beginning (python venvs, node, redis-server, chromium): waiting for them"
await_background "$peers_pid" "$peers_log" "installing the peers"

step "cargo test: run"
cargo test --features example-agent --lib --bins --tests --examples -- --include-ignored --skip frames_per_second
cargo test --features example-agent --bench '*'

step "fuzz: both targets for a bounded minute (stable toolchain; built in the background since the start)"
await_background "$fuzz_pid" "$fuzz_log" "building the fuzz targets"
./scripts/fuzz.sh 60

step "operations kit: promtool rules, a real Prometheus scraping a2a-tap"
# On the binaries `cargo test` above built (the proxy and, with the
# example-agent feature, the example agent): a `cargo build` of the dev
# profile would compile the crate once more, as `cargo test` builds it
# under the test profile.
OPS_TEST_PROFILE=debug OPS_TEST_NO_BUILD=1 ./scripts/ops-test.sh

end_step
echo "== where the time went"
printf '%s\n' "${timings[@]}"
echo "== all checks passed in $(( $(date +%s) - started )) s"
