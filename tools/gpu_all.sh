#!/bin/bash
# gpu_all.sh -- one device-tool call: build, the cuda suite, compute-sanitizer memcheck
# over a few tests, and the GPU benchmark; logs under $OUT. Usage (from the carried
# tree): bash tools/gpu_all.sh [ctest regex]
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
CTEST_TIMEOUT=${CTEST_TIMEOUT:-150} timeout 230 bash tools/gpu_run.sh -R "${1:-_cuda\$|^backend_test_cuda\$|render_test_cuda_render\$}"
cp build-gpu/Testing/Temporary/LastTest.log "$out/lasttest.log" 2>/dev/null
for t in ${MEMCHECK-backend_test_cuda lib_test_reduce}; do
  JAXC_DEVICE=cuda JAXC_DEFAULT_MATMUL_PRECISION=highest timeout 100 compute-sanitizer --tool memcheck \
    build-gpu/tests/$t > "$out/memcheck_$t.txt" 2>&1
  echo "memcheck $t: rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck_$t.txt")"
done
[ -n "$NOBENCH" ] || timeout 240 bash bench/gpu/run.sh build-gpu 2>&1 | tail -22
