#!/usr/bin/env bash
# Checks the container image's recipe against what can be checked without a
# container daemon or a registry (neither is reachable here):
# - the Dockerfile's last stage runs as a non-root numeric user, the one the
#   Kubernetes example's securityContext names;
# - the proxy binary needs no shared library beyond the distroless `cc`
#   base's (glibc, libm, libgcc_s), so it starts there.
# With a working `docker` (daemon and registry reachable), set
# IMAGE_CHECK_BUILD=1 to also build the image and run `--version` in it.
#
#   scripts/image-check.sh BINARY
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=${1:?usage: scripts/image-check.sh BINARY}
fail() { echo "image-check: FAIL: $*" >&2; exit 1; }

user=$(awk '/^FROM /{u=""} /^USER /{u=$2} END{print u}' Dockerfile)
[[ "$user" =~ ^[1-9][0-9]*(:[1-9][0-9]*)?$ ]] || fail "the Dockerfile's last stage must set a numeric non-root USER, has '$user'"
uid=${user%%:*}
grep -q "runAsUser: $uid\$" deploy/kubernetes/a2a-tap-sidecar.yaml ||
  fail "deploy/kubernetes/a2a-tap-sidecar.yaml does not run a2a-tap as uid $uid (the image's USER)"
grep -q '^FROM gcr.io/distroless/cc-debian12' Dockerfile || fail "the Dockerfile's base is no longer distroless/cc: revisit the library list below"
echo "image-check: runs as $user, as the Kubernetes example does"

command -v readelf >/dev/null || fail "readelf (binutils) is needed"
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for lib in $needed; do
  case "$lib" in
    libc.so.6 | libm.so.6 | libgcc_s.so.1 | ld-linux-x86-64.so.2) ;;
    *) fail "$bin needs $lib, which distroless/cc does not have" ;;
  esac
done
echo "image-check: $bin needs only $needed(all in distroless/cc)"

if [ "${IMAGE_CHECK_BUILD:-0}" = 1 ]; then
  docker build -t a2a-tap:check .
  docker run --rm a2a-tap:check --version
else
  echo "image-check: image not built here (no container daemon or registry); build it with:"
  echo "  docker build --build-arg A2A_TAP_COMMIT=\$(git rev-parse --short=12 HEAD) -t a2a-tap:0.1.0 ."
fi
