#!/usr/bin/env python3
"""fm_cut.py -- a small cut of the Fashion-MNIST data set (the first N training and M
test images with their labels, as valid IDX files) for the GPU machine, which the whole
30 MB set cannot travel to with the tree (the device tool carries 64 MiB a call). The
trainer's --bench steps read at most --limit images, so 2000 are enough for
`bench/gpu/run.sh build-gpu fm`.
Usage: python3 tools/fm_cut.py SRC_DIR DST_DIR [N_TRAIN [N_TEST]]
(SRC_DIR: e.g. /usr/share/datasets/fashion-mnist from Debian's dataset-fashion-mnist)."""
import gzip
import os
import struct
import sys


def cut(src, dst, name, n):
    images = gzip.open(os.path.join(src, name + "-images-idx3-ubyte.gz")).read()
    labels = gzip.open(os.path.join(src, name + "-labels-idx1-ubyte.gz")).read()
    magic, count, rows, cols = struct.unpack(">IIII", images[:16])
    lmagic, lcount = struct.unpack(">II", labels[:8])
    n = min(n, count, lcount)
    with gzip.open(os.path.join(dst, name + "-images-idx3-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">IIII", magic, n, rows, cols) + images[16:16 + n * rows * cols])
    with gzip.open(os.path.join(dst, name + "-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">II", lmagic, n) + labels[8:8 + n])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    n_train = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    n_test = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    os.makedirs(dst, exist_ok=True)
    cut(src, dst, "train", n_train)
    cut(src, dst, "t10k", n_test)


if __name__ == "__main__":
    main()
