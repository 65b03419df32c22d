#!/usr/bin/env bash
# Regenerates docs/report.png, the screenshot of the sample HTML report
# (docs/reports.md): `a2a-tap check --format html` over the report sample
# (agent markup in an artifact id and a state), a 0.3 stream that abandons
# an artifact, and the Python SDK's follow-up stream; rendered by headless
# chromium (scripts/setup-chromium.sh). Uses the debug binary in
# ${CARGO_TARGET_DIR:-target}.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-chromium.sh >/dev/null
cargo build -q --bin a2a-tap
bin="${CARGO_TARGET_DIR:-target}/debug/a2a-tap"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Exit 1 (error findings) is expected.
"$bin" check --format html \
    tests/fixtures/report/hostile.jsonrpc.sse \
    tests/fixtures/seeds/codegen-failed-abandoned.v03.sse \
    tests/fixtures/sdk/jsonrpc-1.0-ask-followup.sse >"$work/report.html" || [ $? = 1 ]
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$work/profile" --window-size=1100,1560 \
    --screenshot="$PWD/docs/report.png" "file://$work/report.html" 2>/dev/null
echo "report-screenshot: docs/report.png"
