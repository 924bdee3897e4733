#!/usr/bin/env bash
# test.sh -- the README's test command: installs what the tests need, then builds and
# runs the whole CTest suite in two configurations, and the threaded tests in a third:
#   build/       RelWithDebInfo
#   build-asan/  RelWithDebInfo + AddressSanitizer + UndefinedBehaviorSanitizer
#   build-tsan/  RelWithDebInfo + ThreadSanitizer: only the tests labelled `threads`
#                (target threaded_tests, tests/CMakeLists.txt), to keep CI time down
# Extra arguments go to every ctest run (e.g. `tools/test.sh -R core`). Exits non-zero
# if a configuration fails to build or has a failing test; all always run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
"$root/tools/install_deps.sh"

jobs=$(nproc 2> /dev/null || echo 2)
summary=()
status=0

# suite DIR LABEL CMAKE_OPTIONS BUILD_TARGET(all: everything) [ctest args...]
suite() {
  local dir=$1 label=$2 options=$3 target=$4
  shift 4
  local build_args=()
  [[ $target == all ]] || build_args=(--target "$target")
  echo
  echo "======== $label: configure + build in $dir"
  # shellcheck disable=SC2086 # options is a list of -D flags
  if ! cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo $options \
      || ! cmake --build "$dir" --parallel "$jobs" "${build_args[@]}"; then
    summary+=("$label: BUILD FAILED")
    status=1
    return
  fi
  echo
  echo "======== $label: ctest"
  local log=$dir/ctest.log rc=0
  (cd "$dir" && ctest --output-on-failure --parallel "$jobs" "$@") 2>&1 | tee "$log" || rc=$?
  local line
  line=$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1 || true)
  summary+=("$label: ${line:-ctest did not print a summary (exit $rc)}")
  [[ $rc -eq 0 ]] || status=1
}

suite "$root/build" "release" "-DJAXC_BUILD_TESTS=ON -DJAXC_SANITIZE=OFF -DJAXC_TSAN=OFF" all --no-tests=error "$@"
suite "$root/build-asan" "asan+ubsan" "-DJAXC_BUILD_TESTS=ON -DJAXC_SANITIZE=ON -DJAXC_TSAN=OFF" all --no-tests=error "$@"
# a data race makes ThreadSanitizer fail the test (halt_on_error); extra arguments may
# select none of the threaded tests, which is not an error here
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  suite "$root/build-tsan" "tsan (threaded tests)" "-DJAXC_BUILD_TESTS=ON -DJAXC_SANITIZE=OFF -DJAXC_TSAN=ON" \
  threaded_tests -L threads --no-tests=ignore "$@"

echo
echo "======== summary"
printf '  %s\n' "${summary[@]}"
exit "$status"
