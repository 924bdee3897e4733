#!/usr/bin/env bash
# test.sh -- the README's test command: installs what the tests need, then builds and
# runs the whole CTest suite in two configurations:
#   build/       RelWithDebInfo
#   build-asan/  RelWithDebInfo + AddressSanitizer + UndefinedBehaviorSanitizer
# Extra arguments go to both ctest runs (e.g. `tools/test.sh -R core`). Exits non-zero
# if either configuration fails to build or has a failing test; both always run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
"$root/tools/install_deps.sh"

jobs=$(nproc 2> /dev/null || echo 2)
summary=()
status=0

# suite DIR LABEL SANITIZE(ON|OFF) [ctest args...]
suite() {
  local dir=$1 label=$2 sanitize=$3
  shift 3
  echo
  echo "======== $label: configure + build in $dir"
  if ! cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DJAXC_SANITIZE="$sanitize" \
      || ! cmake --build "$dir" --parallel "$jobs"; then
    summary+=("$label: BUILD FAILED")
    status=1
    return
  fi
  echo
  echo "======== $label: ctest"
  local log=$dir/ctest.log rc=0
  (cd "$dir" && ctest --output-on-failure --no-tests=error --parallel "$jobs" "$@") 2>&1 | tee "$log" || rc=$?
  local line
  line=$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1 || true)
  summary+=("$label: ${line:-ctest did not print a summary (exit $rc)}")
  [[ $rc -eq 0 ]] || status=1
}

suite "$root/build" "release" OFF "$@"
suite "$root/build-asan" "asan+ubsan" ON "$@"

echo
echo "======== summary"
printf '  %s\n' "${summary[@]}"
exit "$status"
