#!/usr/bin/env bash
# demo.sh -- the README's main job: installs what jaxc needs (compiler, CMake, OpenBLAS,
# zlib and Debian's Fashion-MNIST package), builds build/ and trains the MLP on
# Fashion-MNIST for a few epochs (examples/fashion_mnist.c). Arguments go to the
# trainer, with --epochs 3 first unless they name --epochs (the trainer's own default is
# 10); try `tools/demo.sh --model cnn --epochs 1`. It stays in
# the caller's directory, so relative paths given to the trainer (--plot, --save, --data)
# and its default outputs (fashion_mnist.svg, .safetensors) are the caller's.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/install_deps.sh" dataset-fashion-mnist

cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$root/build" --parallel "$(nproc 2> /dev/null || echo 2)" \
  --target jaxc_fashion_mnist jaxc_demo
case " $* " in *" --epochs "* | *" --epochs="* | *" --help "* | *" -h "*) ;; *) set -- --epochs 3 "$@" ;; esac
exec "$root/build/jaxc_fashion_mnist" "$@"
