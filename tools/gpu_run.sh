#!/bin/bash
# gpu_run.sh -- on the GPU machine (inside the carried .gpu folder or any checkout):
# configures and builds jaxc in build-gpu, then runs the ctest selection given as
# arguments (default: every *_cuda test plus backend_test_cuda) and writes the logs under
# $OUT (or ./gpu-out). Example: bash tools/gpu_run.sh -R 'lib_test_.*_cuda'
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
jobs=$(nproc)
set -o pipefail
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build-gpu --parallel "$jobs"; } \
  > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
[ $# -eq 0 ] && set -- -R '_cuda$|^backend_test_cuda$'
(cd build-gpu && ctest --parallel 8 --timeout ${CTEST_TIMEOUT:-600} --output-on-failure "$@") > "$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Skipped|Not Run" "$out/ctest.log" | tail -60
exit $rc
