#!/usr/bin/env bash
# Install redis-server (Debian's package) for the shared-registry tests
# (tests/process/replicas.rs starts and stops its own servers on free ports;
# nothing here starts one). Idempotent: returns at once when redis-server is
# on PATH. Installs with apt-get as root, or through sudo; fails loudly when
# it cannot.
set -euo pipefail

die() { echo "setup-redis: $*" >&2; exit 1; }

if command -v redis-server >/dev/null 2>&1; then
    echo "setup-redis: $(redis-server --version | cut -d' ' -f1-3)"
    exit 0
fi

if [ "$(id -u)" = 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    die "redis-server is missing and this user can't install it (not root, no password-less sudo): apt-get install redis-server"
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq || die "apt-get update failed"
"${as_root[@]}" apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
    || die "apt-get install redis-server failed"
# The package may start a system service on 6379; the tests use their own.
command -v redis-server >/dev/null 2>&1 || die "redis-server still not on PATH after the install"
echo "setup-redis: installed $(redis-server --version | cut -d' ' -f1-3)"
