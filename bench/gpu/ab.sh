#!/bin/bash
# ab.sh -- jaxc's GPU training steps under several settings (and builds), alternated in
# one run so the machine's drift falls on all alike: bench_gpu mlp (the MLP SGD step at
# batch 128 and 4096) and the trainer's CNN step (jaxc_fashion_mnist --bench 50 on
# FM_DATA, the Fashion-MNIST files or tools/fm_cut.py's cut), ROUNDS times (default 2).
#   bash bench/gpu/ab.sh BUILD [OTHER_BUILD]
# SETTINGS="X=1 JAXC_CUDA_NARROW=0" runs BUILD once per setting ("A=1,B=2" sets both; X=1
# is a no-op default); OTHER_BUILD (an earlier tree's build) runs with no setting, as
# "other". Lines "setting workload value unit" go to stdout and $OUT/ab.txt (or ./ab.txt).
build=${1:?build dir} other=${2:-}
out=${OUT:-.}
run() { # label build [settings]
  local label=$1 b=$2 env=${3:-X=1}
  env $(echo "$env" | tr ',' ' ') JAXC_DEVICE=cuda "$b/bench_gpu" mlp 2>&1 | grep mlp_step | sed "s/^/$label /"
  [ -n "$FM_DATA" ] && env $(echo "$env" | tr ',' ' ') JAXC_DEVICE=cuda "$b/jaxc_fashion_mnist" --model cnn --bench 50 \
    --limit 1000 --data "$FM_DATA" --device cuda 2>&1 | grep "_step " | sed "s/^/$label /"
}
for r in $(seq "${ROUNDS:-2}"); do
  for e in ${SETTINGS:-X=1}; do run "$e" "$build" "$e"; done
  [ -n "$other" ] && run other "$other"
done | tee "$out/ab.txt"
