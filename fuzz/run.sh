#!/usr/bin/env bash
# run.sh TARGET SECONDS [libFuzzer flags...] -- builds the harness fuzz/fuzz_TARGET.c with
# clang, ASan and UBSan (in build-fuzz/, or $JAXC_FUZZ_BUILD) and fuzzes it for SECONDS.
# TARGET: idx, safetensors or npy. Starts from the committed seeds in fuzz/corpus/TARGET,
# keeps what it finds in build-fuzz/corpus/TARGET, writes crashing inputs to
# build-fuzz/crashes/TARGET/ and prints libFuzzer's final stats (executions, rate, peak
# memory). Leak detection is on (ASan's LeakSanitizer, and the harness's live-array count).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 TARGET SECONDS [libFuzzer flags...]   (TARGET: idx, safetensors, npy)" >&2
  exit 2
fi
target=$1
seconds=$2
shift 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${JAXC_FUZZ_BUILD:-$root/build-fuzz}
cc=${FUZZ_CC:-clang}
command -v "$cc" > /dev/null || { echo "run.sh: $cc not found (apt-get install clang)" >&2; exit 1; }

mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$cc" -DJAXC_FUZZ=ON -DJAXC_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" --target "fuzz_$target" -j "$(nproc)"

mkdir -p "$build/corpus/$target" "$build/crashes/$target"
args=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$build/crashes/$target/"
      -rss_limit_mb=2048 -timeout=10)
[[ -f $root/fuzz/$target.dict ]] && args+=(-dict="$root/fuzz/$target.dict")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$build/fuzz/fuzz_$target" "${args[@]}" "$@" "$build/corpus/$target" "$root/fuzz/corpus/$target"
