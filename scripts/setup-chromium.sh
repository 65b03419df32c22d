#!/usr/bin/env bash
# Install Debian's chromium for the HTML report's browser test
# (tests/process/html.rs renders a report made by the real binary in
# headless chromium). Idempotent: returns at once when chromium is on
# PATH. Installs with apt-get as root, or through sudo; fails loudly when
# it cannot.
set -euo pipefail
# shellcheck source=scripts/apt-lib.sh
source "$(dirname "$0")/apt-lib.sh"

die() { echo "setup-chromium: $*" >&2; exit 1; }

if command -v chromium >/dev/null 2>&1; then
    echo "setup-chromium: $(chromium --version 2>/dev/null | head -n1)"
    exit 0
fi

apt_install setup-chromium chromium fonts-dejavu-core
command -v chromium >/dev/null 2>&1 || die "chromium still not on PATH after the install"
echo "setup-chromium: installed $(chromium --version 2>/dev/null | head -n1)"
