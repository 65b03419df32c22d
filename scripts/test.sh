#!/usr/bin/env bash
# The test command of the README (and of CI): formatting, lints, the whole
# test suite with its real peers (the official Python, JavaScript and Rust A2A
# SDKs, fasta2a, grpcio, a real Prometheus and promtool, redis-server),
# installed here idempotently when missing.
# Steps run in order; the first failure stops the script.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
# example-agent: the quick start's agent (a binary behind that feature) too.
cargo clippy --all-targets --features example-agent -- -D warnings

echo "== minimum Rust version (rust-version) of every crate built in, and the Dockerfile's"
python3 scripts/msrv.py

echo "== python venvs with the official a2a-sdk 1.3.0 and 0.3.26, and fasta2a 2.1.1 (for the real-peer tests)"
./scripts/setup-python.sh

echo "== node with the official @a2a-js/sdk 1.3.0 and 0.3.14 (for the real-peer tests)"
./scripts/setup-node.sh

echo "== the official Rust SDK's agent, tests/peers/rust (for the real-peer tests; cached in the target dir)"
./scripts/setup-rust-agent.sh

echo "== redis-server (for the shared-registry tests)"
./scripts/setup-redis.sh

echo "== chromium (for the HTML report's browser test)"
./scripts/setup-chromium.sh

echo "== cargo test, the tests that need the peers above included"
# Debug build: the proxy tests are I/O-bound and a release build of the
# dependencies would cost CI more than it saves on 2 cores.
# Plain `cargo test` leaves out the tests that need a tool installed above
# (each `#[ignore = "needs ...: run scripts/test.sh"]`); here they all run,
# and one whose tool is missing fails and names the setup script, never
# skips. `frames_per_second` is a measurement, not a check (see its file).
# The criterion benches (run once each, as tests) take no libtest flags.
cargo test --features example-agent --lib --bins --tests --examples -- --include-ignored --skip frames_per_second
cargo test --features example-agent --benches

echo "== fuzz: both targets for a bounded minute (stable toolchain)"
./scripts/fuzz.sh 60

echo "== operations kit: promtool rules, a real Prometheus scraping a2a-tap"
# On the debug build the tests above made: ops-test's own
# `cargo build` then only links the proxy and the example agent.
OPS_TEST_PROFILE=debug ./scripts/ops-test.sh

echo "== all checks passed in $(( $(date +%s) - started )) s"
