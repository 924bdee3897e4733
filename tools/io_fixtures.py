#!/usr/bin/env python3
"""io_fixtures.py -- writes the small files the src/io tests and fuzzers start from:

  tests/io/fixtures/*.safetensors   written by the real `safetensors` library (numpy API)
  tests/io/fixtures/*.npy           written by numpy.save
  fuzz/corpus/{idx,safetensors,npy} seed inputs: small valid files of every dtype

Run from anywhere: `pip install safetensors numpy; python3 tools/io_fixtures.py`.
Output is deterministic (fixed values, gzip without timestamps), so rerunning it only
changes files when the generator changes. The tests hold the expected values inline.
"""
import gzip
import io
import os
import struct

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "io", "fixtures")
CORPUS = os.path.join(ROOT, "fuzz", "corpus")

IDX_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C,
             np.float32: 0x0D, np.float64: 0x0E}


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def gz(data):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def idx_bytes(a):
    code = IDX_CODES[a.dtype.type]
    head = bytes([0, 0, code, a.ndim]) + b"".join(struct.pack(">i", d) for d in a.shape)
    return head + a.astype(a.dtype.newbyteorder(">")).tobytes()


def sample(dtype, shape):
    n = int(np.prod(shape))
    if np.dtype(dtype).kind == "f":
        v = (np.arange(n) - n / 2) * 0.75
    elif np.dtype(dtype).kind == "b":
        v = np.arange(n) % 3 == 0
    else:
        # Values that use every byte (byte order matters) and, when signed, the sign.
        info = np.iinfo(dtype)
        shift = max(info.bits - 9, 0)
        v = [(((i * 37 % 251) << shift) + 3 * i) % (1 << info.bits) for i in range(n)]
        v = np.array(v, dtype=f"u{info.bits // 8}").view(np.dtype(dtype).newbyteorder("="))
    return np.asarray(v).astype(dtype).reshape(shape)


def idx_seeds():
    out = os.path.join(CORPUS, "idx")
    for dtype in IDX_CODES:
        name = np.dtype(dtype).name
        for shape in [(3,), (2, 3), (2, 2, 2)]:
            data = idx_bytes(sample(dtype, shape))
            tag = "x".join(map(str, shape))
            write(os.path.join(out, f"{name}_{tag}.idx"), data)
        write(os.path.join(out, f"{name}_2x3.idx.gz"), gz(idx_bytes(sample(dtype, (2, 3)))))
    # A scalar (ndim 0), an empty array, and an MNIST-like pair.
    write(os.path.join(out, "scalar.idx"), bytes([0, 0, 0x08, 0, 42]))
    write(os.path.join(out, "empty.idx"), idx_bytes(np.zeros((0, 4), np.uint8)))
    write(os.path.join(out, "images.idx.gz"), gz(idx_bytes(sample(np.uint8, (2, 4, 4)))))
    write(os.path.join(out, "labels.idx"), idx_bytes(np.array([3, 7], np.uint8)))


ST_DTYPES = ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64",
             "uint64", "float16", "float32", "float64"]


def safetensors_files():
    from safetensors.numpy import save

    # Every numpy dtype safetensors knows, in one file, plus metadata.
    tensors = {f"t_{d}": sample(d, (2, 3)) for d in ST_DTYPES}
    tensors["scalar"] = np.array(2.5, np.float32)
    tensors["empty"] = np.zeros((0, 3), np.float32)
    tensors["name with \"quotes\" and \u00e9"] = np.array([1, 2], np.int32)
    # One metadata key: the library keeps metadata in a hash map, so the order of
    # several keys would change from run to run.
    data = save(tensors, metadata={"format": "np"})
    write(os.path.join(FIX, "all_dtypes.safetensors"), data)
    # bfloat16 has no numpy dtype: the bits of 1.0, -2.0, 0.5, 3.140625 as raw uint16,
    # relabeled BF16 in the header (same length, so offsets stay valid).
    bf = np.array([0x3F80, 0xC000, 0x3F00, 0x4049], np.uint16)
    data = save({"bf": bf})
    n = struct.unpack("<Q", data[:8])[0]
    head = data[8:8 + n].replace(b'"U16"', b'"BF16"')
    head = head.rstrip(b" ")
    head += b" " * ((8 - (8 + len(head)) % 8) % 8)
    write(os.path.join(FIX, "bf16.safetensors"), struct.pack("<Q", len(head)) + head
          + data[8 + n:])
    out = os.path.join(CORPUS, "safetensors")
    write(os.path.join(out, "all_dtypes.safetensors"), open(os.path.join(FIX,
          "all_dtypes.safetensors"), "rb").read())
    for d in ST_DTYPES:
        write(os.path.join(out, f"{d}.safetensors"), save({"x": sample(d, (2, 2))}))
    write(os.path.join(out, "empty_file.safetensors"), save({}))
    write(os.path.join(out, "two.safetensors"),
          save({"w": sample("float32", (3, 2)), "b": sample("float32", (2,))}))


NPY_DTYPES = ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64",
              "uint64", "float16", "float32", "float64"]


def npy_bytes(a, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a)
    else:
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def npy_files():
    write(os.path.join(FIX, "f32_2x3.npy"), npy_bytes(sample("float32", (2, 3))))
    write(os.path.join(FIX, "i64_be_4.npy"), npy_bytes(sample(">i8", (4,))))
    write(os.path.join(FIX, "f64_fortran_2x3.npy"),
          npy_bytes(np.asfortranarray(sample("float64", (2, 3)))))
    write(os.path.join(FIX, "u8_v2_3.npy"), npy_bytes(sample("uint8", (3,)), version=(2, 0)))
    write(os.path.join(FIX, "bool_scalar.npy"), npy_bytes(np.array(True)))
    out = os.path.join(CORPUS, "npy")
    for d in NPY_DTYPES:
        write(os.path.join(out, f"{d}.npy"), npy_bytes(sample(d, (2, 3))))
    write(os.path.join(out, "fortran.npy"), npy_bytes(np.asfortranarray(sample("int16", (3, 2)))))
    write(os.path.join(out, "big_endian.npy"), npy_bytes(sample(">f4", (3,))))
    write(os.path.join(out, "v2.npy"), npy_bytes(sample("int32", (2,)), version=(2, 0)))
    write(os.path.join(out, "scalar.npy"), npy_bytes(np.array(1.5, np.float64)))
    write(os.path.join(out, "empty.npy"), npy_bytes(np.zeros((0, 2), np.float32)))
    write(os.path.join(out, "f32.npy.gz"), gz(npy_bytes(sample("float32", (2, 2)))))


if __name__ == "__main__":
    idx_seeds()
    safetensors_files()
    npy_files()
    print("wrote fixtures to", FIX, "and seeds to", CORPUS)
