#!/bin/sh
# fashion_mnist_cli.sh TRAINER SCRATCH -- the trainer's bad-input table (issue 12): each
# case runs examples/fashion_mnist.c's binary and checks its exit status and that its
# output contains the message. Then a short run on a tiny uncompressed IDX data set made
# here: the plot (with markers), the parameters and a valid trace are written, relative
# paths land in the caller's directory, and stderr has no progress-bar redraws (not a
# terminal). Run by CTest (tests/CMakeLists.txt: example_fashion_mnist_cli).
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: one case runs elsewhere
dir=$2
rm -rf "$dir"
mkdir -p "$dir/data" "$dir/bad" "$dir/run"
failures=0

# be32 N: N as 4 big-endian bytes
be32() { printf "\\$(printf '%03o' $(($1 >> 24 & 255)))\\$(printf '%03o' $(($1 >> 16 & 255)))\\$(printf '%03o' $(($1 >> 8 & 255)))\\$(printf '%03o' $(($1 & 255)))"; }
# images FILE N: N uint8 28x28 images (varying pixels); labels FILE N: N labels 0..9
images() {
  { printf '\000\000\010\003'; be32 "$2"; be32 28; be32 28
    i=0; while [ $i -lt "$2" ]; do head -c 784 /dev/zero | tr '\000' "\\$(printf '%03o' $((i * 23 % 256)))"; i=$((i + 1)); done
  } > "$1"
}
labels() {
  { printf '\000\000\010\001'; be32 "$2"
    i=0; while [ $i -lt "$2" ]; do printf "\\$(printf '%03o' $((i % 10)))"; i=$((i + 1)); done
  } > "$1"
}
images "$dir/data/train-images-idx3-ubyte" 16
labels "$dir/data/train-labels-idx1-ubyte" 16
images "$dir/data/t10k-images-idx3-ubyte" 8
labels "$dir/data/t10k-labels-idx1-ubyte" 8
images "$dir/bad/train-images-idx3-ubyte" 16
labels "$dir/bad/train-labels-idx1-ubyte" 15

out="--plot $dir/run/p.svg --save $dir/run/p.safetensors"

# check NAME STATUS MESSAGE ARGS...: exit status STATUS and MESSAGE in stdout+stderr
check() {
  name=$1 want=$2 msg=$3
  shift 3
  got_out=$("$bin" "$@" 2>&1)
  got=$?
  if [ "$got" -eq "$want" ] && printf '%s' "$got_out" | grep -qF -- "$msg"; then
    echo "ok   $name (exit $got)"
  else
    echo "FAIL $name: exit $got (expected $want); output:"
    printf '%s\n' "$got_out" | sed 's/^/     /'
    echo "     expected the message: $msg"
    failures=$((failures + 1))
  fi
}

check unknown_option 2 "fashion_mnist: unknown option --bogus (see --help)" --bogus
check missing_value 2 "fashion_mnist: --epochs needs a value" --epochs
check epochs_suffix 2 "fashion_mnist: --epochs 2x: expected a whole number from 1 to 100000" --epochs 2x
check epochs_huge 2 "fashion_mnist: --epochs 99999999999: expected a whole number from 1 to 100000" --epochs 99999999999
check epochs_zero 2 "fashion_mnist: --epochs 0: expected a whole number" --epochs 0
check lr_text 2 "fashion_mnist: --lr abc: expected a positive finite number" --lr abc
check lr_negative 2 "fashion_mnist: --lr -1: expected a positive finite number" --lr -1
check lr_nan 2 "fashion_mnist: --lr nan: expected a positive finite number" --lr nan
check seed_text 2 "fashion_mnist: --seed abc: expected a whole number" --seed abc
check seed_negative 2 "fashion_mnist: --seed -5: expected a whole number" --seed -5
check limit_zero 2 "fashion_mnist: --limit 0: expected a whole number" --limit 0
check limit_negative 2 "fashion_mnist: --limit -3: expected a whole number" --limit -3
check limit_text 2 "fashion_mnist: --limit abc: expected a whole number" --limit abc
check bench_zero 2 "fashion_mnist: --bench 0: expected a whole number" --bench 0
check bench_text 2 "fashion_mnist: --bench abc: expected a whole number" --bench abc
check batch_text 2 "fashion_mnist: --batch-size 12q: expected a whole number" --batch-size 12q
check device_unknown 2 "fashion_mnist: --device: jx_default_device: unknown device \"gpu\"" --device gpu
check devices_zero 2 "fashion_mnist: --devices 0: expected a whole number from 1 to 64" --devices 0
check devices_huge 2 "fashion_mnist: --devices 65: expected a whole number from 1 to 64" --devices 65
check devices_not_dividing 2 "fashion_mnist: --batch-size 10 is not divisible by --devices 4" \
  --batch-size 10 --devices 4
check model_unknown 2 "fashion_mnist: --model rnn: expected mlp or cnn" --model rnn
check help_defaults 0 "--epochs N          passes over the training set, 1..100000 (default 10)" --help
check batch_too_large 2 "fashion_mnist: --batch-size 100: larger than the 16 training images" \
  --data "$dir/data" --batch-size 100 $out
check no_data 1 "fashion_mnist: reading the data (install Debian's dataset-fashion-mnist or pass --data DIR)" \
  --data "$dir/nonexistent" $out
check counts_differ 1 "fashion_mnist: $dir/bad/train: 16 images of 28x28 and 15 labels" --data "$dir/bad" $out
# a label past the ten classes (the loss went NaN, blamed on the learning rate)
mkdir -p "$dir/badlab"
images "$dir/badlab/train-images-idx3-ubyte" 16
{ printf '\000\000\010\001'; be32 16; printf '\000\001\002\003\004\005\006\007\010\011\307\001\002\003\004\005'; } \
  > "$dir/badlab/train-labels-idx1-ubyte"
check label_range 1 "fashion_mnist: $dir/badlab/train: a label is 199 (Fashion-MNIST's classes are 0 to 9)" \
  --data "$dir/badlab" $out
check plot_unwritable 1 "fashion_mnist: --plot /nonexistent-jaxc/p.svg: cannot write there" \
  --data "$dir/data" --plot /nonexistent-jaxc/p.svg
check save_unwritable 1 "fashion_mnist: --save /nonexistent-jaxc/p.st: cannot write there" \
  --data "$dir/data" --save /nonexistent-jaxc/p.st
check trace_unwritable 1 "fashion_mnist: --trace /nonexistent-jaxc/t.json: cannot write there" \
  --data "$dir/data" --trace /nonexistent-jaxc/t.json $out
check loss_not_finite 1 "training stopped (--lr 1e+30 too large?)" \
  --data "$dir/data" --batch-size 8 --epochs 3 --lr 1e30 $out

# A short run on the uncompressed data, relative output paths, from another directory.
run_out=$(cd "$dir/run" && "$bin" --data ../data --epochs 2 --batch-size 8 --limit 12 --plot rel.svg \
          --save rel.safetensors --trace rel.json 2> stderr.txt)
rc=$?
printf '%s\n' "$run_out"
if [ $rc -ne 0 ]; then echo "FAIL short run: exit $rc"; cat "$dir/run/stderr.txt"; failures=$((failures + 1)); fi
for f in rel.svg rel.safetensors rel.json; do
  [ -s "$dir/run/$f" ] || { echo "FAIL short run: no $dir/run/$f"; failures=$((failures + 1)); }
done
printf '%s' "$run_out" | grep -qF "12 train / 8 test images" || { echo "FAIL: --limit 12 keeps all 8 test images"; failures=$((failures + 1)); }
[ "$(grep -c '<circle' "$dir/run/rel.svg" 2> /dev/null)" -eq 4 ] || { echo "FAIL: the plot has no marker per epoch and curve"; failures=$((failures + 1)); }
if tr -d '\n' < "$dir/run/stderr.txt" | grep -q "$(printf '\r')"; then
  echo "FAIL: carriage returns on stderr that is not a terminal"; failures=$((failures + 1))
fi
head -c 1 "$dir/run/rel.json" | grep -q '\[' && tail -c 2 "$dir/run/rel.json" | grep -q ']' &&
  grep -q '"name":"k_' "$dir/run/rel.json" || { echo "FAIL: the trace is not a closed array of named kernels"; failures=$((failures + 1)); }
if command -v python3 > /dev/null 2>&1; then
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/run/rel.json" ||
    { echo "FAIL: the trace is not valid JSON"; failures=$((failures + 1)); }
fi

# Data-parallel over 2 cpu devices: the same loss and test accuracy as one device
# (gradients averaged with pmean over equal halves of each batch).
dp1=$("$bin" --data "$dir/data" --model cnn --epochs 2 --batch-size 8 $out 2>&1 | grep '^epoch  2/2')
dp2=$("$bin" --data "$dir/data" --model cnn --epochs 2 --batch-size 8 --devices 2 $out 2>&1 | grep '^epoch  2/2')
echo "1 device:  $dp1"
echo "2 devices: $dp2"
# (compared up to the accuracy's '%': the times differ)
[ -n "$dp1" ] && [ "$(printf '%s' "$dp1" | sed 's/%.*//')" = "$(printf '%s' "$dp2" | sed 's/%.*//')" ] ||
  { echo "FAIL: --devices 2 does not reproduce one device's loss and accuracy"; failures=$((failures + 1)); }

echo "$failures failures"
[ $failures -eq 0 ] && rm -rf "$dir"
[ $failures -eq 0 ]
