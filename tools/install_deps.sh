#!/usr/bin/env bash
# install_deps.sh -- installs the system packages jaxc needs to build, run and test
# (Debian/Ubuntu, apt-get). Does nothing when they are all present. Used by
# tools/demo.sh, tools/test.sh and .ci/run. Python is not needed: goldens are committed.
set -euo pipefail

# Extra package names given as arguments are installed too (tools/demo.sh asks for the
# Fashion-MNIST data set this way).
packages=(build-essential cmake pkg-config zlib1g-dev libopenblas-dev g++ "$@")

if ! command -v apt-get > /dev/null 2>&1 || ! command -v dpkg-query > /dev/null 2>&1; then
  echo "install_deps: no apt-get here; install these (or your system's equivalents) yourself:" >&2
  echo "  ${packages[*]}" >&2
  for tool in cc cmake pkg-config; do
    command -v "$tool" > /dev/null 2>&1 || { echo "install_deps: $tool is missing" >&2; exit 1; }
  done
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install_deps: all present (${packages[*]})"
  exit 0
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo > /dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "install_deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install_deps: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  "${missing[@]}"
