#!/usr/bin/env bash
# Install `promtool` and `prometheus` (Debian's `prometheus` package ships both)
# unless both are already on PATH. Idempotent; fails loudly when it cannot.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

if have promtool && have prometheus; then
  exit 0
fi

if ! have apt-get; then
  echo "install-promtool: promtool/prometheus not on PATH and apt-get is not available;" >&2
  echo "install Prometheus 2.x (promtool + prometheus) by hand and retry." >&2
  exit 1
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if have sudo; then
    sudo_cmd=(sudo)
  else
    echo "install-promtool: need root (or sudo) to apt-get install prometheus" >&2
    exit 1
  fi
fi

echo "install-promtool: installing Debian package 'prometheus' (promtool + prometheus)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo_cmd[@]}" apt-get update -qq; then
  echo "install-promtool: apt-get update failed" >&2
  exit 1
fi
# --no-install-recommends keeps the node exporter and friends out.
if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends prometheus >/dev/null; then
  echo "install-promtool: apt-get install prometheus failed" >&2
  exit 1
fi

# The package's postinst may start a system prometheus on :9090 when an init
# system runs; the tests never rely on it and use their own ports.
for tool in promtool prometheus; do
  if ! have "$tool"; then
    echo "install-promtool: '$tool' still not on PATH after installing the package" >&2
    exit 1
  fi
done
echo "install-promtool: $(promtool --version 2>&1 | head -n 1)" >&2
