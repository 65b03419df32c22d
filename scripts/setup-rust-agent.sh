#!/usr/bin/env bash
# Build the Rust real peer of tests/peers/rust/ (a small A2A 1.0 agent on the
# official Rust SDK, a2a-lf 0.4.2 and a2a-server-lf 0.5.3 from crates.io) for
# the real-peer tests, with `cargo build --locked` from its committed
# Cargo.lock into "${CARGO_TARGET_DIR:-target}/real-peers/rust-agent", so the
# build is cached beside a2a-tap's own and a clean of the target dir takes it.
# Its own project: a2a-tap's dependency tree and Cargo.lock are not touched.
# Idempotent: when the binary is newer than every source of the project
# (Cargo.toml, Cargo.lock, src/), it returns at once without running cargo;
# otherwise cargo rebuilds what changed. Fails loudly.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
project="$root/tests/peers/rust"
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
out="$target_dir/real-peers/rust-agent"
binary="$out/debug/rust-peer-agent"

die() { echo "setup-rust-agent: $*" >&2; exit 1; }

[ -f "$project/Cargo.toml" ] || die "missing $project/Cargo.toml"
[ -f "$project/Cargo.lock" ] || die "missing $project/Cargo.lock"

if [ -x "$binary" ] && [ -z "$(find "$project/Cargo.toml" "$project/Cargo.lock" "$project/src" -newer "$binary" -print -quit)" ]; then
    echo "setup-rust-agent: $binary up to date"
    exit 0
fi

command -v cargo >/dev/null 2>&1 || die "no cargo on PATH"
echo "setup-rust-agent: cargo build --locked in tests/peers/rust (target: $out)"
started=$(date +%s)
# The a2a-tap build's RUSTFLAGS (e.g. -D warnings) are not this project's.
(cd "$project" && env -u RUSTFLAGS cargo build --locked --quiet --target-dir "$out") \
    || die "cargo build of tests/peers/rust failed"
[ -x "$binary" ] || die "cargo built no $binary"
touch "$binary"
echo "setup-rust-agent: ready ($binary, built in $(( $(date +%s) - started )) s)"
