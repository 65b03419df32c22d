#!/usr/bin/env bash
# Install redis-server (Debian's package) for the shared-registry tests
# (tests/process/replicas.rs starts and stops its own servers on free ports;
# nothing here starts one). Idempotent: returns at once when redis-server is
# on PATH. Installs with apt-get as root, or through sudo; fails loudly when
# it cannot.
set -euo pipefail
# shellcheck source=scripts/apt-lib.sh
source "$(dirname "$0")/apt-lib.sh"

die() { echo "setup-redis: $*" >&2; exit 1; }

if command -v redis-server >/dev/null 2>&1; then
    echo "setup-redis: $(redis-server --version | cut -d' ' -f1-3)"
    exit 0
fi

apt_install setup-redis redis-server
# The package may start a system service on 6379; the tests use their own.
command -v redis-server >/dev/null 2>&1 || die "redis-server still not on PATH after the install"
echo "setup-redis: installed $(redis-server --version | cut -d' ' -f1-3)"
