#!/usr/bin/env bash
# Create .venv/ at the repo root with the official A2A Python SDK (a2a-sdk) and
# the pinned packages of tests/peers/requirements.txt, for the real-peer tests.
# Idempotent: when the venv already holds exactly these requirements (a stamp
# with the requirements' hash), it returns at once. Fails loudly otherwise.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
req="$root/tests/peers/requirements.txt"
stamp="$venv/.a2a-tap-requirements.sha256"
python="${PYTHON:-python3}"

die() { echo "setup-python: $*" >&2; exit 1; }

[ -f "$req" ] || die "missing $req"
want="$(sha256sum "$req" | cut -d' ' -f1)"

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
    && "$venv/bin/python" -c 'import a2a.server.routes, a2a.client, uvicorn' 2>/dev/null; then
    echo "setup-python: .venv up to date (a2a-sdk $("$venv/bin/python" -c 'from importlib.metadata import version; print(version("a2a-sdk"))'))"
    exit 0
fi

command -v "$python" >/dev/null 2>&1 || die "no $python on PATH (need Python >= 3.10)"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || die "$python is older than 3.10; a2a-sdk needs >= 3.10"

if [ ! -x "$venv/bin/python" ]; then
    echo "setup-python: creating $venv"
    "$python" -m venv "$venv" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
fi

rm -f "$stamp"
echo "setup-python: installing $(grep -c '==' "$req") pinned packages from tests/peers/requirements.txt"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" \
    || die "pip install -r tests/peers/requirements.txt failed"
"$venv/bin/python" -c 'import a2a.server.routes, a2a.client, uvicorn' \
    || die "a2a-sdk installed but does not import"
echo "$want" > "$stamp"
echo "setup-python: ready ($("$venv/bin/python" -c 'from importlib.metadata import version; print("a2a-sdk", version("a2a-sdk"))'))"
