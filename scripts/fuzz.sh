#!/usr/bin/env bash
# Builds the fuzz targets of fuzz/ with libFuzzer on the stable toolchain
# (coverage instrumentation by stable -C flags; no sanitizer, which needs
# nightly: the code is safe Rust) and runs each for SECONDS/2 (default 60 in
# all), seeded from the test fixtures. Any crash fails the script and keeps
# its input under fuzz/artifacts/. Builds into $CARGO_TARGET_DIR/fuzz (or
# fuzz/target). Usage: scripts/fuzz.sh [SECONDS], or scripts/fuzz.sh --build
# to build the targets and stop (scripts/test.sh builds them in the
# background while the tests run, then runs them).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_only=0
if [ "${1:-}" = --build ]; then
    build_only=1
    shift
fi
seconds="${1:-60}"
case "$seconds" in
    ''|*[!0-9]*) echo "fuzz: SECONDS must be a whole number of seconds, not '$seconds' (usage: scripts/fuzz.sh [SECONDS] | --build)" >&2; exit 2 ;;
esac
targets=(framer_decode recordings)
per=$(( seconds / ${#targets[@]} ))
[ "$per" -ge 1 ] || per=1
target_dir="${CARGO_TARGET_DIR:-$root/fuzz/target}"
[ -n "${CARGO_TARGET_DIR:-}" ] && target_dir="$CARGO_TARGET_DIR/fuzz"

# What cargo-fuzz passes, minus the nightly-only sanitizer.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# With an explicit --target the flags reach the targets only, not the build
# scripts and proc macros (as cargo-fuzz does it).
host="$(rustc -vV | sed -n 's/^host: //p')"
echo "fuzz: building ${targets[*]} (release, instrumented) into $target_dir"
cargo build --quiet --release --manifest-path "$root/fuzz/Cargo.toml" \
    --target-dir "$target_dir" --target "$host" --bins
if [ "$build_only" = 1 ]; then
    echo "fuzz: built"
    exit 0
fi

seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
mkdir -p "$seeds/framer_decode" "$seeds/recordings" "$root/fuzz/artifacts"
i=0
for f in "$root"/tests/fixtures/sdk/*.sse "$root"/tests/fixtures/sdk/*.jsonl \
         "$root"/tests/fixtures/sdk/*.har "$root"/tests/fixtures/seeds/*.sse; do
    [ -f "$f" ] || continue
    i=$((i + 1))
    { printf '\200'; cat "$f"; } > "$seeds/framer_decode/$i"
    case "$f" in
        *.sse) kind='\000' ;;
        *.jsonl) kind='\001' ;;
        *) kind='\002' ;;
    esac
    { printf "$kind"; head -c 4096 "$f"; } > "$seeds/recordings/$i"
done

for t in "${targets[@]}"; do
    corpus="$root/fuzz/corpus/$t"
    mkdir -p "$corpus"
    echo "fuzz: $t for ${per}s"
    "$target_dir/$host/release/$t" "$corpus" "$seeds/$t" \
        -max_total_time="$per" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$root/fuzz/artifacts/$t-" -print_final_stats=1 2>&1 \
        | grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+== ERROR|SUMMARY)' || true
    # libFuzzer exits non-zero on a crash; pipefail is off for grep's sake.
    if ls "$root/fuzz/artifacts/$t-"* >/dev/null 2>&1; then
        echo "fuzz: $t found a failing input: $(ls "$root/fuzz/artifacts/$t-"*)" >&2
        exit 1
    fi
done
echo "fuzz: no failure"
