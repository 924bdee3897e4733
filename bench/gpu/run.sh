#!/bin/bash
# run.sh -- the GPU benchmark in one run: jaxc (bench_gpu, JAXC_DEVICE=cuda), then JAX
# and PyTorch (peers.py) on the same GPU, then a table of ratios. Usage, from a built
# tree: bash bench/gpu/run.sh BUILD_DIR [workload filter]. Logs go to $OUT (or .).
# FM_DATA=DIR (Fashion-MNIST files) adds the trainer's MLP and CNN steps (--bench).
build=${1:-build}
only=${2:-}
out=${OUT:-.}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
JAXC_DEVICE=cuda "$build/bench_gpu" $only 2>&1 | tee "$out/bench_jaxc.txt"
# the trainer's MLP and CNN steps (Adam, batch 128) where the data set is at hand
if [ -n "$FM_DATA" ] && { [ -z "$only" ] || [ "$only" = fm ]; }; then
  for m in mlp cnn; do
    JAXC_DEVICE=cuda "$build/jaxc_fashion_mnist" --model $m --bench 50 --limit 1000 --data "$FM_DATA" \
      --device cuda 2>&1 | grep "_step " | tee -a "$out/bench_jaxc.txt"
  done
fi
env -u LD_LIBRARY_PATH XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 python3 "$(dirname "$0")/peers.py" $only 2>&1 \
  | grep -v "^WARNING\|^I0000\|^W0000" | tee "$out/bench_peers.txt"
python3 - "$out/bench_jaxc.txt" "$out/bench_peers.txt" <<'PY'
import sys
j, p = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3:
        try: j[f[0]] = (float(f[1]), f[2])
        except ValueError: pass
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 4:
        try: p[(f[0], f[1])] = float(f[2])
        except ValueError: pass
higher = lambda unit: unit in ("TFLOP/s", "TB/s")
print("\n%-22s %12s %12s %12s %9s %9s" % ("workload", "jaxc", "jax", "torch", "vs jax", "vs torch"))
for name, (v, unit) in j.items():
    row = "%-22s %9.4g %-2s" % (name, v, unit[:2])
    ratios = []
    for peer in ("jax", "torch"):
        q = p.get((peer, name))
        row += " %12s" % ("%.4g" % q if q else "-")
        ratios.append(("%.2fx" % ((v / q) if higher(unit) else (q / v))) if q else "-")
    print(row + " %9s %9s" % tuple(ratios))
c = p.get(("torch", "copy_2^28"))
if c and "chain_2^28" in j:
    print("chain_2^28: %.1f%% of the device-to-device copy bandwidth (%.3f TB/s)" % (100 * j["chain_2^28"][0] / c, c))
print("(ratios > 1: jaxc faster)")
PY
