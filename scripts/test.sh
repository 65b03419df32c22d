#!/usr/bin/env bash
# The test command of the README (and of CI): formatting, lints, the whole test suite.
# Steps run in order; the first failure stops the script.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --all-targets -- -D warnings

echo "== cargo test"
# Debug build: the proxy tests are I/O-bound and a release build of the
# dependencies would cost CI more than it saves on 2 cores.
cargo test --all-targets

echo "== all checks passed"
