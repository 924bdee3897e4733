#!/usr/bin/env bash
# demo.sh -- the README's main job: installs what jaxc needs, builds build/ (RelWithDebInfo)
# and runs the demo program (examples/demo.c). Arguments are passed to the demo.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
"$root/tools/install_deps.sh"

cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$root/build" --parallel "$(nproc 2> /dev/null || echo 2)" --target jaxc_demo
exec "$root/build/jaxc_demo" "$@"
