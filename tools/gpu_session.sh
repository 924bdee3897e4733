#!/bin/bash
# gpu_session.sh -- one device-tool call on the GPU machine, in phases chosen by the
# environment (default: build suite bt bench):
#   build    configure + build build-gpu (Ninja, all cores)
#   suite    every *_cuda test (ctest -R "$SUITE", default '_cuda$'), then each failing
#            test again under cuda-gdb for a backtrace
#   memcheck compute-sanitizer --tool memcheck over each *_cuda test program
#   bench    bench/gpu/run.sh (jaxc, then JAX and PyTorch on the same GPU: ratios)
#   jbench   jaxc's side of the benchmark only (GRAPHS_AB=1: the MLP step again with
#            JAXC_CUDA_GRAPHS=0)
#   ncu      ncu of the kernels of the workloads in $NCU_ONLY, SASS of their cubins
#   ncumlp   ncu of the jitted MLP step's kernels (cuBLAS's too); mlpdbg its steps' host time
#   ncufm    ncu of the trainer's step's kernels ($FM_MODEL, default cnn)
#   jaxprof  JAX's MLP (MLP_B=fm_cnn: the trainer's CNN) step kernels per step (jax.profiler, bench/gpu/mlp_prof.py)
#   algos    the MLP step's GEMMs under every cuBLASLt algorithm (bench/gpu/gemm_algos.cu)
#   cexp     bench_gpu $CEXP_W once per "VAR=value" in $CEXP (a fresh kernel cache each)
# TARGETS="a b": build only these targets; BENCH_ONLY="mlp,argmax": those workloads.
#   train    jaxc_fashion_mnist --device cuda (MLP and CNN) on the carried data set
# The GPU machine reaches no package registry: its Debian packages travel in ../.deps,
# made once beside the carried tree (in the repository the device tool sends, ignored by
# .git/info/exclude) with
#   apt-get download libutf8proc2 libutf8proc-dev libopenblas0-pthread libopenblas-pthread-dev \
#     libopenblas-dev liblapacke liblapacke-dev libtmglib3 libgfortran5 libquadmath0 dataset-fashion-mnist
# and tools/gpu_sync.sh copies this worktree to ../.gpu; the call carries [".gpu", ".deps"].
# Where the data set's deb does not fit the call (64 MiB with the tree and the other
# debs), a 2000-image cut in ../fm (python3 tools/fm_cut.py /usr/share/datasets/fashion-mnist
# ../fm) serves the trainer's bench steps (FM below).
# A later call that carries nothing finds the earlier call's ignored build outputs
# (build-gpu) but not the carried sources: carry the tree again.
# Usage (carried tree): PHASES="build suite bench" bash tools/gpu_session.sh
# Logs go to gpu-out/ and are packed into $OUT/logs.tgz (the tool returns 8 files at most).
cd "$(dirname "$0")/.." || exit 1
out=$PWD/gpu-out
mkdir -p "$out"
phases=${PHASES:-build suite bt bench}
has() { case " $phases " in *" $1 "*) return 0 ;; esac; return 1; }
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
# KCACHE_OUT=1: the kernel cache also comes back ($OUT/kcache.tgz; unpack it as ../.kcache)
pack() {
  [ -n "$OUT" ] && tar czf "$OUT/logs.tgz" -C "$out" . 2>/dev/null
  [ -n "$OUT" ] && [ -n "$KCACHE_OUT" ] && [ -d "$JAXC_CACHE_DIR/cuda" ] && tar czf "$OUT/kcache.tgz" -C "$JAXC_CACHE_DIR" cuda 2>/dev/null
}
trap pack EXIT
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/gpu.txt"
export JAXC_CACHE_DIR=$PWD/build-gpu/kernel_cache
# Debian packages carried in ../.deps (the GPU machine reaches no registry): utf8proc,
# OpenBLAS, LAPACKE and the Fashion-MNIST data set, unpacked under /tmp/deps.
D=/tmp/deps L=/tmp/deps/usr/lib/x86_64-linux-gnu
DEPS_DIR=${DEPS_DIR:-../.deps} # (DEPS_DIR: another folder of them, e.g. without the data set)
if [ -d "$DEPS_DIR" ]; then
  for f in "$DEPS_DIR"/*.deb; do dpkg -x "$f" $D; done
  export LD_LIBRARY_PATH=$L/openblas-pthread:$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  DEPS="-DJAXC_UTF8PROC_INCLUDE=$D/usr/include -DJAXC_UTF8PROC_LIB=$L/libutf8proc.so
    -DJAXC_OPENBLAS_LIB=$L/openblas-pthread/libopenblas.so -DJAXC_CBLAS_INCLUDE=$D/usr/include/x86_64-linux-gnu/openblas-pthread
    -DJAXC_LAPACKE_LIB=$L/liblapacke.so -DJAXC_LAPACKE_INCLUDE=$D/usr/include"
fi
# the Fashion-MNIST files: the data set's deb where carried, else the cut in ../fm
FM=$D/usr/share/datasets/fashion-mnist
[ -d "$FM" ] || { [ -d ../fm ] && FM=$(cd ../fm && pwd); }
# the 88 MB all-MiniLM-L6-v2 model cannot travel (64 MiB a call): its tests skip here
export JAXC_MINILM_SKIP_MISSING=1
if has build; then
  set -o pipefail
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $DEPS $CMAKE_EXTRA && cmake --build build-gpu --parallel "$(nproc)" ${TARGETS:+--target $TARGETS}; } \
    > "$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
  set +o pipefail
  stamp "built"
fi
# a kernel cache carried from an earlier call (../.kcache/cuda, cubins keyed by their
# full source): tests compile only what changed
if [ -d ../.kcache/cuda ]; then mkdir -p "$JAXC_CACHE_DIR" && cp -r ../.kcache/cuda "$JAXC_CACHE_DIR/"; fi
# PAR=1: the suite, memcheck ($MEMCHECK_TESTS; MC_J, MC_TOTAL_S, MEMCHECK_S) and training
# run side by side
if [ -n "$PAR" ]; then
  if has memcheck; then
    # MC_J programs at a time (default: all at once); none is started after MC_TOTAL_S
    # seconds from here, and each runs at most MEMCHECK_S seconds nor past that end;
    # MC_OPTS: more compute-sanitizer options
    # An item "prog:i/n" runs prog with JAXC_TEST_SHARD=i/n (tests/support/test.h): one
    # slow program split over n processes; "prog:n" stands for prog:0/n .. prog:n-1/n.
    mc_one() {
      item=$1 exe=${1%%:*} shard= left=$(( MC_END - $(date +%s) ))
      # (the cuda backend's own test program keeps its suffix: backend_test -> backend_test_cuda)
      [ -x "build-gpu/tests/$exe" ] || [ ! -x "build-gpu/tests/${exe}_cuda" ] || exe=${exe}_cuda
      case $item in *:*) shard=${item#*:} ;; esac
      log=$out/mc_$(echo "$item" | tr ':/' '__').txt
      if [ "$left" -lt 15 ]; then echo "memcheck $item not run (MC_TOTAL_S spent)" >> "$out/memcheck.txt"; return; fi
      cap=$MEMCHECK_S; [ "$left" -lt "$cap" ] && cap=$left
      s0=$(date +%s)
      JAXC_TEST_SHARD=$shard JAXC_DEVICE=cuda JAXC_DEFAULT_MATMUL_PRECISION=highest timeout "$cap" compute-sanitizer \
        --tool memcheck --leak-check no --report-api-errors no --error-exitcode 99 $MC_OPTS "build-gpu/tests/$exe" > "$log" 2>&1
      rc=$?
      echo "memcheck $item rc=$rc $(( $(date +%s) - s0 ))s $(grep -E 'ERROR SUMMARY' "$log" | tail -1) | $(grep -E '^[0-9]+ passed' "$log" | tail -1)" >> "$out/memcheck.txt"
    }
    export -f mc_one; export out MC_OPTS MEMCHECK_S=${MEMCHECK_S:-300} MC_END=$(( $(date +%s) + ${MC_TOTAL_S:-100000} ))
    set --
    for t in ${MEMCHECK_TESTS:-backend_test}; do
      case $t in
      *:*/*) set -- "$@" "$t" ;;
      *:*) for i in $(seq 0 $(( ${t#*:} - 1 ))); do set -- "$@" "${t%%:*}:$i/${t#*:}"; done ;;
      *) set -- "$@" "$t" ;;
      esac
    done
    ( printf '%s\n' "$@" | xargs -P "${MC_J:-$#}" -I{} bash -c 'mc_one {}' ) &
    set --
  fi
  if has train; then
    ( for m in mlp cnn; do
        timeout "${TRAIN_S:-240}" build-gpu/jaxc_fashion_mnist --model $m --data "$FM" \
          --device cuda --epochs "${EPOCHS:-10}" > "$out/train_$m.txt" 2>&1
        echo "train $m rc=$?" >> "$out/train.txt"
      done ) &
  fi
fi
if has suite; then
  (cd build-gpu && timeout "${SUITE_S:-360}" ctest --parallel "${SUITE_J:-8}" --timeout "${TEST_S:-240}" \
     -R "${SUITE:-_cuda\$}" --output-on-failure > "$out/ctest.log" 2>&1)
  cp build-gpu/Testing/Temporary/LastTest.log "$out/lasttest.log" 2>/dev/null
  grep -E "tests passed|tests failed|Total Test" "$out/ctest.log"
  grep -E "^[[:space:]]+[0-9]+ - .*\((Failed|SEGFAULT|Timeout|Subprocess|Exception|Child|OTHER|Not Run)" "$out/ctest.log" | tee "$out/failed.txt"
  grep -E "^FAIL" "$out/ctest.log" | cut -c1-220 | sort | uniq | head -40
  grep -A24 "^\*\*\* signal" "$out/ctest.log" | head -80
  stamp "suite"
  # EXTRA: one more command (e.g. a test under other settings)
  [ -n "$EXTRA" ] && { (eval "$EXTRA") > "$out/extra.txt" 2>&1; echo "extra rc=$?"; grep -E "FAIL|passed|failed" "$out/extra.txt" | head -20; }
  if has bt; then
    for t in $(sed -n 's/^[[:space:]]*[0-9]* - \([A-Za-z0-9_]*\)_cuda (.*/\1/p' "$out/failed.txt" | head -6); do
      JAXC_DEVICE=cuda JAXC_DEFAULT_MATMUL_PRECISION=highest timeout 150 cuda-gdb -batch -ex run -ex bt \
        --args "build-gpu/tests/$t" > "$out/bt_$t.txt" 2>&1
      echo "== $t"; grep -E "^#[0-9]+|FAIL|signal|Error|error" "$out/bt_$t.txt" | head -25
    done
    stamp "backtraces"
  fi
fi
if [ -n "$PAR" ]; then
  wait
  stamp "parallel jobs done"
  cat "$out/memcheck.txt" "$out/train.txt" 2>/dev/null
  for m in mlp cnn; do [ -f "$out/train_$m.txt" ] && { echo "== train $m"; tr '\r' '\n' < "$out/train_$m.txt" | grep -v "^\s*$" | grep -iv "step.*/" | tail -14; }; done
  
fi
if has memcheck && [ -z "$PAR" ]; then
  n=0 bad=0
  for exe in $(sed -n 's/^ *Start *[0-9]*: \([A-Za-z0-9_]*\)_cuda$/\1/p' "$out/ctest.log" | sort -u); do
    [ -x "build-gpu/tests/$exe" ] || [ ! -x "build-gpu/tests/${exe}_cuda" ] || exe=${exe}_cuda
    [ -x "build-gpu/tests/$exe" ] || continue
    JAXC_DEVICE=cuda JAXC_DEFAULT_MATMUL_PRECISION=highest timeout "${MEMCHECK_S:-120}" compute-sanitizer \
      --tool memcheck --leak-check no --report-api-errors no --error-exitcode 99 "build-gpu/tests/$exe" > "$out/mc_$exe.txt" 2>&1
    rc=$?
    n=$((n + 1))
    s=$(grep -E "ERROR SUMMARY" "$out/mc_$exe.txt" | tail -1)
    [ $rc -ne 0 ] && bad=$((bad + 1))
    echo "memcheck $exe rc=$rc $s" | tee -a "$out/memcheck.txt"
  done
  echo "memcheck: $n programs, $bad with rc != 0"
  stamp "memcheck"
fi
# explore: hand-written ceilings (bench/gpu/ceilings.cu with nvcc), the chain at several
# elementwise grid sizes, SASS of jaxc's chain kernel, ncu of the chain/softmax/argmax
# kernels, the MLP step's host time and its steps (JAXC_DEBUG=1)
if has explore; then
  nvcc -O3 -arch=sm_90 -o /tmp/ceilings bench/gpu/ceilings.cu > "$out/ceil_build.txt" 2>&1 && timeout 120 /tmp/ceilings 2>&1 | tee "$out/ceilings.txt"
  cuobjdump -sass /tmp/ceilings > "$out/ceilings_sass.txt" 2>&1
  for b in ${EW_BPS:-16 4 0}; do echo "bps=$b $(JAXC_CUDA_EW_BPS=$b JAXC_DEVICE=cuda timeout 60 build-gpu/bench_gpu chain | grep chain)"; done | tee "$out/chain_bps.txt"
  mkdir -p /tmp/kc && JAXC_CACHE_DIR=/tmp/kc JAXC_DEVICE=cuda timeout 60 build-gpu/bench_gpu chain > /dev/null 2>&1
  for f in /tmp/kc/cuda/*.cubin; do cuobjdump -sass "$f"; done > "$out/chain_sass.txt" 2>&1; cat /tmp/kc/cuda/*.key > "$out/chain_src.txt" 2>/dev/null
  NCU="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section SchedulerStats"
  for w in ${NCU_ONLY:-chain softmax argmax}; do
    JAXC_DEVICE=cuda timeout 120 $NCU -k regex:'^k_' --launch-count 3 build-gpu/bench_gpu $w > "$out/ncu_$w.txt" 2>&1
    grep -E "^  k_|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Block Limit Registers|Executed Ipc A" "$out/ncu_$w.txt" | head -40
  done
  JAXC_DEVICE=cuda timeout 60 build-gpu/bench_gpu mlp | tee "$out/mlp.txt"
  stamp "explore"
fi
if has ncu; then
  mkdir -p /tmp/kn
  for w in ${NCU_ONLY:-argmax}; do
    JAXC_CACHE_DIR=/tmp/kn JAXC_DEVICE=cuda timeout 120 ncu --clock-control none --set full -k regex:"${NCU_K:-^k_}" --launch-count ${NCU_N:-2} \
      build-gpu/bench_gpu $w > "$out/ncu_$w.txt" 2>&1
    grep -E "^  k_|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Ipc A|Stall|Warp Cycles Per Issued" "$out/ncu_$w.txt" | head -60
  done
  for f in /tmp/kn/cuda/*.cubin; do cuobjdump -sass "$f"; done > "$out/ncu_sass.txt" 2>&1; cat /tmp/kn/cuda/*.key > "$out/ncu_src.txt" 2>/dev/null
  stamp "ncu"
fi
# ncumlp: the kernels of the jitted MLP step at batch $MLP_B (default 4096), cuBLAS's too,
# in steady state (launches NCU_SKIP.. NCU_SKIP+NCU_COUNT), caches left warm as in a loop
if has ncumlp; then
  JAXC_BENCH_MLP_BATCH=${MLP_B:-4096} JAXC_DEVICE=cuda timeout "${NCUMLP_S:-150}" ncu --clock-control none \
    --cache-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
    --launch-skip "${NCU_SKIP:-400}" --launch-count "${NCU_COUNT:-60}" build-gpu/bench_gpu mlp > "$out/ncu_mlp.txt" 2>&1
  grep -E "^  [A-Za-z_].*\(|Duration|Memory Throughput|Compute \(SM\) Throughput|Grid Size|Block Size" "$out/ncu_mlp.txt" \
    | sed 's/  */ /g' | cut -c1-160 > "$out/ncu_mlp_short.txt"
  head -150 "$out/ncu_mlp_short.txt"
  stamp "ncumlp"
fi
# ncufm: the kernels of the trainer's step ($FM_MODEL, default cnn; jaxc_fashion_mnist
# --bench on the carried data set), past its start-up's eager launches (NCU_SKIP)
if has ncufm; then
  JAXC_DEVICE=cuda timeout "${NCUMLP_S:-150}" ncu --clock-control none --cache-control none \
    --section SpeedOfLight --section LaunchStats --launch-skip "${NCU_SKIP:-3500}" --launch-count "${NCU_COUNT:-200}" \
    build-gpu/jaxc_fashion_mnist --model "${FM_MODEL:-cnn}" --bench 30 --limit 1000 --data "$FM" --device cuda \
    > "$out/ncu_fm.txt" 2>&1
  grep -E "^  [A-Za-z_].*\(|Duration|Memory Throughput|Compute \(SM\) Throughput|Grid Size|Block Size" "$out/ncu_fm.txt" \
    | sed 's/  */ /g' | cut -c1-160 > "$out/ncu_fm_short.txt"
  head -30 "$out/ncu_fm_short.txt"
  stamp "ncufm"
fi
# algos: the MLP step's large GEMMs timed for every cuBLASLt heuristic algorithm and
# cublasGemmEx's default (bench/gpu/gemm_algos.cu, nvcc here)
if has algos; then
  nvcc -O3 -arch=sm_90 -o /tmp/gemm_algos bench/gpu/gemm_algos.cu -lcublasLt -lcublas > "$out/algos_build.txt" 2>&1 &&
    timeout 60 /tmp/gemm_algos 2>&1 | tee "$out/algos.txt"
  stamp "algos"
fi
# jaxprof: where JAX's (XLA's) MLP step at batch $MLP_B (or fm_mlp / fm_cnn) spends GPU time (jax.profiler's
# device planes, bench/gpu/mlp_prof.py), and its optimized HLO
if has jaxprof; then
  env -u LD_LIBRARY_PATH XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 200 python3 bench/gpu/mlp_prof.py ${MLP_B:-4096} \
    > "$out/jaxprof.txt" 2>&1
  grep -v "^WARNING\|^I0000\|^W0000" "$out/jaxprof.txt" | head -60
  stamp "jaxprof"
fi
# mlpdbg: the host time of each step of the jitted MLP SGD step (JAXC_DEBUG=1), last call
if has mlpdbg; then
  JAXC_DEBUG=1 JAXC_DEVICE=cuda timeout 60 build-gpu/bench_gpu mlp 2> "$out/mlp_debug.txt" | tee "$out/mlp.txt"
  grep "jit step" "$out/mlp_debug.txt" | tail -40
fi
# cexp: the workload $CEXP_W (default chain) under experiment settings ($CEXP:
# "VAR=value ..." runs, a fresh kernel cache each; "A=1,B=2" sets both in one run)
if has cexp; then
  i=0 w=${CEXP_W:-chain}
  for e in ${CEXP:-JAXC_CUDA_EW_V=2}; do
    i=$((i + 1))
    echo "$e $(env $(echo "$e" | tr ',' ' ') JAXC_CACHE_DIR=/tmp/cexp$i JAXC_DEVICE=cuda timeout 60 build-gpu/bench_gpu "$w" | grep "$w")"
  done | tee "$out/cexp.txt"
  stamp "cexp"
fi
if has jbench; then
  JAXC_DEVICE=cuda timeout 200 build-gpu/bench_gpu ${BENCH_ONLY:-} 2>&1 | tee "$out/bench_jaxc_only.txt"
  [ -n "$GRAPHS_AB" ] && JAXC_CUDA_GRAPHS=0 JAXC_DEVICE=cuda timeout 100 build-gpu/bench_gpu mlp 2>&1 | sed 's/^/JAXC_CUDA_GRAPHS=0 /' \
    | tee -a "$out/bench_jaxc_only.txt"
  stamp "jbench"
fi
if has bench; then
  FM_DATA=$FM OUT=$out timeout "${BENCH_S:-300}" bash bench/gpu/run.sh build-gpu ${BENCH_ONLY:-} > "$out/bench.txt" 2>&1
  sed -n '/^workload/,$p' "$out/bench.txt"
  stamp "bench"
fi
if has train && [ -z "$PAR" ]; then
  for m in mlp cnn; do
    JAXC_DEVICE=cuda timeout 150 build-gpu/jaxc_fashion_mnist --model $m --data "$FM" --device cuda \
      --epochs 2 > "$out/train_$m.txt" 2>&1
    echo "train $m rc=$?"; tail -4 "$out/train_$m.txt"
  done
  stamp "train"
fi
