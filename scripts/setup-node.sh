#!/usr/bin/env bash
# Install the JavaScript real peers of tests/peers/js/ (the official A2A
# JavaScript SDK, @a2a-js/sdk: v1 = 1.3.0, A2A 1.0; v03 = 0.3.14, A2A 0.3)
# with `npm ci` from their pinned package-lock.json, for the real-peer tests.
# Needs node and npm on PATH; when either is missing it installs Debian's
# nodejs and npm with apt-get (as root, or through sudo). Idempotent: a peer
# whose node_modules holds a stamp with its package-lock.json's hash is left
# as it is, so a second run returns at once. Fails loudly otherwise.
set -euo pipefail
# shellcheck source=scripts/apt-lib.sh
source "$(dirname "$0")/apt-lib.sh"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers="$root/tests/peers/js"
stamp_name=".a2a-tap-package-lock.sha256"
# Each peer and the oldest Node.js major it runs on: @a2a-js/sdk 1.3.0 declares
# engines.node >= 20 (on 18 its server fails: `crypto is not defined`);
# 0.3.14 declares >= 18.
projects=(v1 v03)
declare -A min_node=([v1]=20 [v03]=18)

die() { echo "setup-node: $*" >&2; exit 1; }

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

lock_hash() { sha256sum "$peers/$1/package-lock.json" | cut -d' ' -f1; }

up_to_date() {
    local dir="$peers/$1"
    [ -f "$dir/node_modules/$stamp_name" ] \
        && [ "$(cat "$dir/node_modules/$stamp_name")" = "$(lock_hash "$1")" ] \
        && [ -f "$dir/node_modules/@a2a-js/sdk/package.json" ]
}

sdk_version() {
    node -p "require('$peers/$1/node_modules/@a2a-js/sdk/package.json').version" 2>/dev/null || echo '?'
}

for p in "${projects[@]}"; do
    [ -f "$peers/$p/package.json" ] || die "missing $peers/$p/package.json"
    [ -f "$peers/$p/package-lock.json" ] || die "missing $peers/$p/package-lock.json"
done

have_tools() { command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; }

if have_tools; then
    all=1
    for p in "${projects[@]}"; do
        if ! up_to_date "$p" || [ "$(node_major)" -lt "${min_node[$p]}" ]; then all=0; fi
    done
    if [ "$all" = 1 ]; then
        echo "setup-node: tests/peers/js up to date (node $(node --version); v1 @a2a-js/sdk $(sdk_version v1), v03 @a2a-js/sdk $(sdk_version v03))"
        exit 0
    fi
fi

if ! have_tools; then
    echo "setup-node: node or npm not on PATH; installing Debian's nodejs and npm"
    apt_install setup-node nodejs npm
    have_tools || die "apt-get installed nodejs and npm, but node or npm is still not on PATH"
fi

major="$(node_major)"
[ "$major" -ge 18 ] || die "node $(node --version) is too old: the JavaScript peers need Node.js >= 18 (v1 needs >= 20)"

failed=()
for p in "${projects[@]}"; do
    dir="$peers/$p"
    if [ "$major" -lt "${min_node[$p]}" ]; then
        echo "setup-node: node $(node --version) is too old for tests/peers/js/$p: it needs Node.js >= ${min_node[$p]} (Debian bookworm's nodejs is 18; install Node.js 20 or later)" >&2
        failed+=("$p")
        continue
    fi
    if up_to_date "$p"; then
        echo "setup-node: tests/peers/js/$p up to date (@a2a-js/sdk $(sdk_version "$p"))"
        continue
    fi
    rm -f "$dir/node_modules/$stamp_name"
    echo "setup-node: npm ci in tests/peers/js/$p"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) \
        || die "npm ci in tests/peers/js/$p failed"
    [ -f "$dir/node_modules/@a2a-js/sdk/package.json" ] \
        || die "npm ci in tests/peers/js/$p left no @a2a-js/sdk"
    lock_hash "$p" > "$dir/node_modules/$stamp_name"
    echo "setup-node: tests/peers/js/$p ready (@a2a-js/sdk $(sdk_version "$p"), node $(node --version))"
done
[ "${#failed[@]}" = 0 ] || die "not set up: ${failed[*]}"
