#!/bin/bash
# bench/before_after.sh -- jaxc against an earlier jaxc on one machine: the jaxc side of
# bench/run.py (build/jaxc_bench and the Fashion-MNIST step rows), for two builds,
# alternated group by group (ORDER, default "b a a b") so the machine's load drifts
# equally over both, each run at nice -20 (root; others get a warning and their own priority) with an
# empty kernel cache (the *_compile rows measure cold compiles, as in bench/run.py).
# Then the best value per row and system, and the change (+ = after better).
#   bench/before_after.sh BEFORE_BUILD AFTER_BUILD [OUT_DIR]
# BENCH_GROUPS (default: every bench/run.py group but loops, fft and linalg) and ORDER override.
before=${1:?before build dir} after=${2:?after build dir} out=${3:-before_after}
groups=${BENCH_GROUPS:-matmul chain softmax reduce mlp transc tchain nnops gelu_mlp eager fm_mlp fm_cnn}
mkdir -p "$out"
for g in $groups; do
  for who in ${ORDER:-b a a b}; do
    d=$before; [ "$who" = a ] && d=$after
    cache=$(mktemp -d)
    case $g in
      fm_mlp) cmd=("$d/jaxc_fashion_mnist" --model mlp --bench 100 --limit 1000) ;; # as bench/run.py
      fm_cnn) cmd=("$d/jaxc_fashion_mnist" --model cnn --bench 20 --limit 1000) ;;
      *) cmd=("$d/jaxc_bench" "$g") ;;
    esac
    echo "# $g $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)" >> "$out/$who.txt"
    JAXC_CACHE_DIR=$cache nice -n -20 "${cmd[@]}" >> "$out/$who.txt" 2>> "$out/stderr.txt"
    rm -rf "$cache"
  done
done
python3 - "$out" <<'PY'
import collections, sys
def rows(path):
    d, unit = collections.defaultdict(list), {}
    for line in open(path):
        p = line.split()
        if len(p) == 3 and not line.startswith("#"):
            d[p[0]].append(float(p[1])); unit[p[0]] = p[2]
    return d, unit
b, unit = rows(sys.argv[1] + "/b.txt"); a, _ = rows(sys.argv[1] + "/a.txt")
print("| benchmark | unit | before | after | change (+ = after better) |\n|---|---|---|---|---|")
for k in b:
    if k not in a: continue
    low = unit[k] in ("ms", "us")
    vb, va = (min(b[k]), min(a[k])) if low else (max(b[k]), max(a[k]))
    print(f"| {k} | {unit[k]} | {vb:.2f} | {va:.2f} | {((vb / va) if low else (va / vb)) * 100 - 100:+.1f}% |")
PY
