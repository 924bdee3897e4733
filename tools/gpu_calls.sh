#!/bin/bash
# gpu_calls.sh -- the issue-13 evidence in two device-tool calls of at most 600 s each, on
# a tree synced by tools/gpu_sync.sh into a carried folder (e.g. .cl/tree, with the
# Debian packages in .cl/.deps and the 2000-image Fashion-MNIST cut in .cl/fm; see
# tools/gpu_session.sh). Run on the GPU machine from the carried tree:
#   bash tools/gpu_calls.sh bench     build, (HINTS: the chain under each cache hint,) the whole
#                                     cuda suite (capped at $SUITE_S, 210 s), then
#                                     every workload against JAX and PyTorch
#                                     (bench/gpu/run.sh) in the time left
#   bash tools/gpu_calls.sh memcheck  build, compute-sanitizer memcheck over every cuda
#                                     test program, the 7 slowest split by JAXC_TEST_SHARD
#                                     (MC_FIRST="prog ...": those first; MC_TOTAL_S: start
#                                     none after that many seconds, for a call with less
#                                     device time left)
# Logs and tables land in $OUT (the device tool returns them). Session 33's two calls
# (bench/RESULTS.md "20:44-20:58") are these.
cd "$(dirname "$0")/.." || exit 1
T0=${T0:-$(date +%s)} # (T0: an earlier start of the same call, as seconds since the epoch)
case "${1:-bench}" in
bench)
  PHASES=build bash tools/gpu_session.sh || exit 1
  mv "$OUT/logs.tgz" "$OUT/logs_build.tgz" 2>/dev/null
  # HINTS="1 2": the chain under each JAXC_CUDA_EW_HINT (0-3: .cs loads / stores) that many
  # rounds, alternated, before the suite (the H100's tie with torch.compile, issue 13)
  for r in ${HINTS:-}; do for h in 0 1 2 3; do
    echo "hint $h: $(JAXC_DEVICE=cuda JAXC_CUDA_EW_HINT=$h timeout 40 build-gpu/bench_gpu chain 2>&1 | tr '\n' ' ')"
  done; done | tee "$OUT/hints.txt"
  [ -d ../fm ] && cp -r ../fm /tmp/fm
  SUITE_J=14 SUITE_S=${SUITE_S:-210} TEST_S=200 PHASES=suite bash tools/gpu_session.sh 2>&1 | tail -25
  mv "$OUT/logs.tgz" "$OUT/logs_suite.tgz" 2>/dev/null
  left=$(( 585 - ($(date +%s) - T0) ))
  mkdir -p "$OUT/bench"
  OUT=$OUT/bench FM_DATA=/tmp/fm timeout "$left" bash bench/gpu/run.sh build-gpu 2>&1 | tail -34
  ;;
memcheck)
  PHASES=build bash tools/gpu_session.sh || exit 1
  mv "$OUT/logs.tgz" "$OUT/logs_build.tgz" 2>/dev/null
  slow="transform_test_vmap:4 lib_test_linalg:4 lib_test_random:3 lib_test_random_more:2 lib_test_random_keys:2
        lib_test_special:2 core_test_errors:2"
  # every other cuda registration (X_cuda runs program X; backend_test's is backend_test_cuda,
  # which gpu_session.sh finds; X_shardIofN_cuda are shards of the slow ones above); the two
  # MiniLM programs skip there (no model travels)
  others=$(cd build-gpu && ctest -N -R '_cuda$' | sed -n 's/.*Test *#[0-9]*: \(.*\)_cuda$/\1/p' |
    grep -vE '^(transform_test_vmap|lib_test_(special|random|random_more|random_keys|linalg|tokenizer)|core_test_errors|examples_test_bert)$|_shard[0-9]+of[0-9]+$')
  for p in ${MC_FIRST:-}; do others=$(printf '%s\n' $others | grep -vxF "$p"); done
  PAR=1 PHASES="memcheck" MC_J=16 MC_TOTAL_S=${MC_TOTAL_S:-$(( 570 - ($(date +%s) - T0) ))} MEMCHECK_S=420 \
    MC_OPTS="--target-processes application-only" MEMCHECK_TESTS="${MC_FIRST:-} $slow $others" bash tools/gpu_session.sh 2>&1 | tail -100
  ;;
*) echo "usage: bash tools/gpu_calls.sh bench|memcheck" >&2; exit 2 ;;
esac
