#!/usr/bin/env bash
# check_install.sh -- proves that an installed jaxc is usable from outside the project.
# Installs the given build tree into a fresh prefix, then builds and runs the consumers
# in this folder (C11 and C++, including only <jaxc.h>) two ways: with pkg-config and
# with find_package(jaxc); it also compiles and runs the README's C quickstart.
# Registered as the CTest test `install` by tests/CMakeLists.txt.
#
#   check_install.sh BUILD_DIR WORK_DIR [C_COMPILER]
#
# WORK_DIR is wiped and recreated. The C++ part is skipped (with a message) only when no
# C++ compiler exists; the environment variable CXX picks one.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR WORK_DIR [C_COMPILER]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
work=$2
cc=${3:-${CC:-cc}}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'check_install: FAIL: %s\n' "$*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix

step "cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix"

step "installed files"
(cd "$prefix" && find . \( -type f -o -type l \) | sort)
[[ -f $prefix/include/jaxc.h ]] || fail "include/jaxc.h not installed"
extra_headers=$(find "$prefix" -name '*.h' ! -path "$prefix/include/jaxc.h" ! -path "$prefix/include/jaxc/*.h")
for f in "$here"/../../include/jaxc/*.h; do
  [[ -f $prefix/include/jaxc/$(basename "$f") ]] || fail "include/jaxc/$(basename "$f") not installed"
done
[[ -z $extra_headers ]] || fail "private headers were installed: $extra_headers"
pcfile=$(find "$prefix" -name jaxc.pc -print -quit)
[[ -n $pcfile ]] || fail "jaxc.pc not installed"
libdir=$(cd "$(dirname "$pcfile")/.." && pwd)
for f in libjaxc.so libjaxc.a cmake/jaxc/jaxcConfig.cmake \
         cmake/jaxc/jaxcConfigVersion.cmake cmake/jaxc/jaxcTargets.cmake; do
  [[ -e $libdir/$f ]] || fail "$libdir/$f not installed"
done
soname_links=$(find "$libdir" -maxdepth 1 -name 'libjaxc.so.*' | wc -l)
[[ $soname_links -ge 2 ]] || fail "libjaxc.so version symlinks missing"

# Where the C++ compiler is, if any.
cxx=""
for c in "${CXX:-}" c++ g++ clang++; do
  if [[ -n $c ]] && command -v "$c" > /dev/null 2>&1; then cxx=$(command -v "$c"); break; fi
done

# ------------------------------------------------------------------ pkg-config
step "pkg-config"
command -v pkg-config > /dev/null || fail "pkg-config not found (apt-get install pkg-config)"
export PKG_CONFIG_PATH=$libdir/pkgconfig
echo "jaxc $(pkg-config --modversion jaxc)"
echo "cflags: $(pkg-config --cflags jaxc)"
echo "libs:   $(pkg-config --libs jaxc)"
mkdir -p "$work/pc"
# shellcheck disable=SC2046  # word splitting of pkg-config output is intended
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror "$here/consumer.c" -o "$work/pc/consumer_c" \
  $(pkg-config --cflags --libs jaxc) -lm
if [[ -n $cxx ]]; then
  # shellcheck disable=SC2046
  "$cxx" -std=c++11 -Wall -Wextra -Wpedantic -Werror "$here/consumer.cpp" \
    -o "$work/pc/consumer_cxx" $(pkg-config --cflags --libs jaxc)
fi

run() {
  local exe=$1
  echo "-- $exe"
  # It must load the installed libjaxc.so, not the one in the build tree.
  if ldd "$exe" 2> /dev/null | grep -q 'libjaxc\.so'; then
    ldd "$exe" | grep 'libjaxc\.so' | grep -qF "$libdir/" \
      || fail "$exe does not load libjaxc.so from $libdir: $(ldd "$exe" | grep libjaxc)"
  fi
  "$exe" || fail "$exe exited with status $?"
}
for exe in "$work/pc/consumer_c" ${cxx:+"$work/pc/consumer_cxx"}; do
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} run "$exe"
done

# The README's C quickstart must compile (warnings as errors) and run.
readme=$here/../../README.md
if [[ -f $readme ]]; then
  awk '/<!-- quickstart/ { mark = 1; next }
       mark && /^```c/ { body = 1; next }
       body && /^```/ { exit }
       body { print }' "$readme" > "$work/pc/quickstart.c"
  [[ -s $work/pc/quickstart.c ]] || fail "no quickstart block found in $readme"
  # shellcheck disable=SC2046
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror "$work/pc/quickstart.c" \
    -o "$work/pc/quickstart" $(pkg-config --cflags --libs jaxc)
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} run "$work/pc/quickstart"
fi

# --------------------------------------------------------------- find_package
step "find_package(jaxc)"
with_cxx=OFF
cxx_arg=()
if [[ -n $cxx ]]; then
  with_cxx=ON
  cxx_arg=(-DCMAKE_CXX_COMPILER="$cxx")
fi
cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  "${cxx_arg[@]}" -DWITH_CXX=$with_cxx -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$work/cmake" --parallel
# CMake puts the imported library's directory in the build RPATH: no LD_LIBRARY_PATH.
for exe in consumer_c consumer_c_static ${cxx:+consumer_cxx}; do
  run "$work/cmake/$exe"
done

if [[ -z $cxx ]]; then
  echo
  echo "check_install: SKIPPED the C++ consumers: no C++ compiler found (tried \$CXX, c++, g++, clang++)."
fi
echo
echo "check_install: OK"
