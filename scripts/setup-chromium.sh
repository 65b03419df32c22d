#!/usr/bin/env bash
# Install Debian's chromium for the HTML report's browser test
# (tests/process/html.rs renders a report made by the real binary in
# headless chromium). Idempotent: returns at once when chromium is on
# PATH. Installs with apt-get as root, or through sudo; fails loudly when
# it cannot.
set -euo pipefail

die() { echo "setup-chromium: $*" >&2; exit 1; }

if command -v chromium >/dev/null 2>&1; then
    echo "setup-chromium: $(chromium --version 2>/dev/null | head -n1)"
    exit 0
fi

if [ "$(id -u)" = 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    die "chromium is missing and this user can't install it (not root, no password-less sudo): apt-get install chromium"
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq || die "apt-get update failed"
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null \
    || die "apt-get install chromium failed"
command -v chromium >/dev/null 2>&1 || die "chromium still not on PATH after the install"
echo "setup-chromium: installed $(chromium --version 2>/dev/null | head -n1)"
