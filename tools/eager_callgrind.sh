#!/bin/sh
# eager_callgrind.sh [BENCH] -- instructions per cached eager op (issue 10 item 3):
# callgrind counts each op's loop in bench_jaxc.c (eager_loop_<op>) at two repetition
# counts; the difference over the extra calls is the cost of one cached call, free of
# first-call work (kernel building, compiling, cache fills).
set -eu
bench=${1:-build/jaxc_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export JAXC_CACHE_DIR="$tmp/kc"
for op in add exp sum bcast_add matmul; do
  for reps in 100 300; do
    JAXC_BENCH_EAGER_REPS=$reps valgrind --tool=callgrind --toggle-collect="eager_loop_$op" \
      --callgrind-out-file="$tmp/cg.$op.$reps" "$bench" eager >/dev/null 2>"$tmp/log" ||
      { cat "$tmp/log"; exit 1; }
  done
  a=$(callgrind_annotate "$tmp/cg.$op.100" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  b=$(callgrind_annotate "$tmp/cg.$op.300" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  # bench_eager runs 100 warm-up calls + 3 batches of reps: 600 calls more at 300
  echo "eager_$op $(( (b - a) / 600 )) instructions/call"
done
