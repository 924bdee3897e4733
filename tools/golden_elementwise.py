#!/usr/bin/env python3
"""golden_elementwise.py -- writes tests/golden/elementwise.txt: JAX's results for every
elementwise function of jaxc (jax.numpy ufuncs, where, clip, astype, bitcast) over
special values (NaN, +-inf, -0.0, tiny, huge), every dtype, mixed and weak operands,
broadcasting and empty shapes. Format: see tests/support/golden.h.

Run:  pip install jax numpy;  python3 tools/golden_elementwise.py  (jax_enable_x64 off)

Inputs avoid float32/bfloat16 subnormals: XLA on CPU flushes them to zero (FTZ/DAZ),
which jaxc's backends need not do. float16 subnormals are fine (computed in float32).
"""
import itertools
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)

OUT = golden_io.path("elementwise.txt")

DTYPES = ["float32", "float16", "bfloat16", "int32", "int8", "uint8", "uint32", "bool"]
FLOATS = ["float32", "float16", "bfloat16"]
NAN, INF = float("nan"), float("inf")

# Value sets per dtype (each case uses them all, or the square of a short list).
VALUES = {
    "float32": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0,
                -7.25, 0.1, 100.0, 1e-30, 2e-38, 1e30, 3.0e38, -1e10, 0.75, -0.9],
    "float16": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0,
                -7.25, 0.1, 100.0, 6e-8, 1e-5, 65504.0, -1000.0, 0.75, -0.9],
    "bfloat16": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0,
                 -7.25, 0.1, 100.0, 1e-30, 2e-38, 1e30, 3.0e38, 0.75, -0.9],
    "int32": [0, 1, -1, 2, -2, 3, 7, -7, 100, -100, 12345, 2147483647, -2147483648],
    "int8": [0, 1, -1, 2, -3, 5, 7, -8, 100, 127, -128],
    "uint8": [0, 1, 2, 3, 7, 100, 128, 200, 255],
    "uint32": [0, 1, 2, 3, 7, 100, 123456789, 2147483648, 4294967295],
    "bool": [False, True],
}
# Short lists for binary cases (all pairs via (n,1) x (1,n) broadcasting).
PAIRS = {
    "float32": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -7.25, 1e-30, 1e30,
                3.0e38],
    "float16": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -7.25, 6e-8,
                65504.0],
    "bfloat16": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -7.25, 1e-30,
                 1e30],
    "int32": [0, 1, -1, 2, -3, 7, 31, 33, -100, 2147483647, -2147483648],
    "int8": [0, 1, -1, 2, -3, 7, 9, -128, 127],
    "uint8": [0, 1, 2, 3, 7, 9, 128, 255],
    "uint32": [0, 1, 2, 7, 33, 2147483648, 4294967295],
    "bool": [False, True],
}
# Small exponents for power (|x| ** large overflows to inf, ints wrap).
POW_Y = {
    "float32": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 2.0, -3.0],
    "float16": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 2.0],
    "bfloat16": [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 2.0],
    "int32": [0, 1, 2, 3, 5, 31, -1, -2],
    "int8": [0, 1, 2, 3, 7, -1],
    "uint8": [0, 1, 2, 3, 7],
    "uint32": [0, 1, 2, 3, 5, 31],
    "bool": [False, True],
}

UNARY = ["negative", "positive", "abs", "absolute", "sign", "exp", "exp2", "expm1", "log",
         "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "square", "reciprocal", "sin",
         "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
         "arccosh", "arctanh", "floor", "ceil", "trunc", "round", "rint", "isnan",
         "isinf", "isfinite", "signbit", "deg2rad", "rad2deg", "logical_not",
         "bitwise_not", "invert"]
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
          "remainder", "mod", "fmod", "power", "maximum", "minimum", "fmax", "fmin",
          "arctan2", "hypot", "logaddexp", "copysign", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
          "right_shift"]


def rsqrt(x):
  # jaxc's jx_rsqrt: lax.rsqrt after jnp's inexact promotion of ints and bool.
  x = jnp.asarray(x) if not isinstance(x, (int, float)) else x
  (x,) = jax._src.numpy.util.promote_dtypes_inexact(x)
  return lax.rsqrt(x)


def exp2_via_f32(x):
  # XLA's bfloat16 exp2 is exp(x * log(2)) with log(2) rounded to bfloat16 (2^-7.25
  # comes out 3% high); take JAX's float32 exp2 rounded to bfloat16 instead.
  if getattr(x, "dtype", None) == jnp.bfloat16:
    return jnp.exp2(x.astype(jnp.float32)).astype(jnp.bfloat16)
  return jnp.exp2(x)


def fn_of(name):
  if name == "rsqrt":
    return rsqrt
  if name == "exp2":
    return exp2_via_f32
  return getattr(jnp, name)


# ------------------------------------------------------------------ formatting

CASES = []
NAMES = set()


def case(name, fn, args, call, params=""):
  """Runs call(*args) under JAX and records inputs and output (or the error)."""
  assert name not in NAMES, name
  NAMES.add(name)
  try:
    outs, err = [call(*args)], None
  except (TypeError, ValueError) as e:  # JAX rejects the dtype
    msg = str(e).lower()
    if "shape" in msg and "broadcast" in msg:
      raise
    outs, err = [], "JX_ERR_DTYPE"
  CASES.append(golden_io.case_text(name, fn, params, args, outs, err))


def arr(values, dtype, shape=None):
  a = np.array(values, dtype=np.float64 if dtype in FLOATS else None)
  if dtype == "bool":
    a = np.array(values, dtype=bool)
  x = jnp.asarray(a, dtype=jnp.dtype(dtype))
  return x.reshape(shape) if shape is not None else x


def weak(v):
  return v  # a Python scalar: JAX's weak type


# -------------------------------------------------------------------- cases

def unary_cases():
  for name in UNARY:
    f = fn_of(name)
    for dt in DTYPES:
      case(f"{name}_{dt}", name, [arr(VALUES[dt], dt)], f)
    case(f"{name}_empty0", name, [arr([], "float32", (0,))], f)
    case(f"{name}_empty20", name, [arr([], "int32", (2, 0))], f)
    case(f"{name}_weak_float", name, [weak(2.5)], f)
    case(f"{name}_weak_int", name, [weak(-3)], f)
    case(f"{name}_2d", name, [arr([[0.25, -4.0, 9.0], [-0.0, 16.5, -1.5]], "float32")],
         f)


def binary_cases():
  for name in BINARY:
    f = fn_of(name)
    for dt in DTYPES:
      xs = PAIRS[dt]
      ys = POW_Y[dt] if name == "power" else xs
      # All pairs, as two flat arrays: XLA rewrites x / broadcast(y) into
      # x * (1 / y), which is neither exact nor FTZ-safe, so no broadcasting here.
      px, py = zip(*itertools.product(xs, ys))
      case(f"{name}_{dt}_pairs", name, [arr(list(px), dt), arr(list(py), dt)], f)
    # Same-shape operands, no broadcasting.
    case(f"{name}_same_shape", name,
         [arr([1.5, -2.0, 0.0, 7.0], "float32"), arr([2.0, 3.0, -0.0, -2.0], "float32")],
         f)
    case(f"{name}_same_shape_i32", name,
         [arr([5, -7, 0, 9], "int32"), arr([2, 3, 4, 1], "int32")], f)
    # Broadcasting.
    case(f"{name}_bcast_3x1_1x4", name,
         [arr([[1.0], [-2.0], [0.5]], "float32"),
          arr([[3.0, -1.0, 0.25, 2.0]], "float32")], f)
    case(f"{name}_bcast_scalar_2x3", name,
         [arr(2.0, "float32"), arr([[1.0, 2.0, 3.0], [-4.0, 0.5, -0.0]], "float32")], f)
    case(f"{name}_bcast_2x3_scalar", name,
         [arr([[1, 2, 3], [-4, 5, 0]], "int32"), arr(3, "int32")], f)
    # Empty.
    case(f"{name}_empty0", name, [arr([], "float32", (0,)), arr([], "float32", (0,))], f)
    case(f"{name}_empty20", name,
         [arr([], "int32", (2, 0)), arr([[1], [2]], "int32")], f)
    case(f"{name}_empty20_scalar", name, [arr([], "int8", (2, 0)), weak(2)], f)
    # Mixed dtypes and weak scalars.
    mixed = [
        ("i8_wint", arr([-3, 0, 5, 127], "int8"), weak(2)),
        ("i8_wfloat", arr([-3, 0, 5, 127], "int8"), weak(1.5)),
        ("wint_i8", weak(3), arr([-3, 1, 5, 127], "int8")),
        ("u8_wint", arr([0, 3, 200, 255], "uint8"), weak(2)),
        ("f16_wfloat", arr([-3.5, 0.0, 1e-5, 65504.0], "float16"), weak(2.5)),
        ("f16_wint", arr([-3.5, 0.0, 1.0, 1000.0], "float16"), weak(3)),
        ("bf16_wfloat", arr([-3.5, 0.0, 1e30, 7.0], "bfloat16"), weak(0.5)),
        ("bf16_wint", arr([-3.5, 0.0, 2.0, 7.0], "bfloat16"), weak(-2)),
        ("wfloat_bf16", weak(-1.25), arr([-3.5, 0.0, 2.0, 7.0], "bfloat16")),
        ("bool_wint", arr([True, False, True], "bool"), weak(3)),
        ("bool_wfloat", arr([True, False, True], "bool"), weak(0.5)),
        ("wint_wfloat", weak(3), weak(2.0)),
        ("wint_wint", weak(7), weak(-2)),
        ("wfloat_wfloat", weak(-7.5), weak(2.0)),
        ("u8_i8", arr([0, 3, 200, 255], "uint8"), arr([-3, 1, 5, 7], "int8")),
        ("i32_f16", arr([-3, 0, 5, 1000], "int32"), arr([1.5, -2.0, 3.0, 0.5], "float16")),
        ("u32_i32", arr([0, 3, 4000000000, 7], "uint32"), arr([-3, 1, 5, 7], "int32")),
        ("bf16_f16", arr([-3.5, 0.0, 2.0, 7.0], "bfloat16"),
         arr([1.5, -2.0, 3.0, 0.5], "float16")),
        ("f32_i8", arr([-3.5, 0.0, 2.0, 7.0], "float32"), arr([2, -1, 3, 0], "int8")),
        ("bool_i8", arr([True, False, True, True], "bool"), arr([2, -1, 3, 0], "int8")),
        ("f16_bool", arr([-3.5, 0.0, 2.0, 7.0], "float16"),
         arr([True, False, True, True], "bool")),
    ]
    for tag, x, y in mixed:
      case(f"{name}_{tag}", name, [x, y], f)


def power_cases():
  f = jnp.power
  for dt in FLOATS:
    xs = arr([NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-5], dt)
    for n in (0, 1, 2, 3, 5, -1, -2, -3):
      case(f"power_{dt}_intpow{n}".replace("-", "m"), "power", [xs, weak(n)], f)
  for dt in ("int32", "int8", "uint8"):
    xs = arr(VALUES[dt], dt)
    for n in (0, 1, 2, 3, 7, -1):
      case(f"power_{dt}_intpow{n}".replace("-", "m"), "power", [xs, weak(n)], f)
  # Strong concrete 0-d exponent: integer_pow, result in x's dtype (eager JAX).
  case("power_i8_strong_scalar_exp", "power", [arr([2, -3, 5], "int8"), arr(3, "int32")], f)
  case("power_f16_strong_scalar_exp", "power",
       [arr([2.0, -3.0, 0.5], "float16"), arr(2, "int32")], f)
  case("power_bool_scalar_exp", "power", [arr([True, False], "bool"), arr(True, "bool")], f)
  # Float base, integer array exponent (lax.pow without promotion).
  case("power_f16_i32", "power", [arr([2.0, -3.0, 0.5, 0.0], "float16"),
                                   arr([2, 3, -1, -2], "int32")], f)
  case("power_wfloat_i32", "power", [weak(2.0), arr([2, 3, -1, -2], "int32")], f)


def where_clip_cases():
  w = jnp.where
  c = arr([True, False, True, False], "bool")
  case("where_bool_f32", "where", [c, arr([1.0, NAN, -0.0, 3.0], "float32"),
                                   arr([INF, 2.0, 5.0, -0.0], "float32")], w)
  case("where_intcond", "where", [arr([1, 0, -2, 0], "int32"),
                                  arr([1, 2, 3, 4], "int8"), arr([5, 6, 7, 8], "int8")], w)
  case("where_floatcond_nan", "where", [arr([NAN, 0.0, -0.0, 0.5], "float32"),
                                        arr([1, 2, 3, 4], "uint8"), weak(9)], w)
  case("where_weak_mix", "where", [arr([1, 0], "int32"), weak(1.0),
                                   arr([2, 3], "int8")], w)
  case("where_all_weak", "where", [weak(1), weak(2), weak(3)], w)
  case("where_weakcond", "where", [weak(0.0), arr([1, 2], "int8"), arr([3, 4], "int8")], w)
  case("where_bcast", "where", [arr([[True], [False]], "bool"),
                                arr([1.5, 2.5, 3.5], "bfloat16"), arr(0.0, "float32")], w)
  case("where_promote", "where", [c, arr([1, 2, 3, 4], "uint8"),
                                  arr([-1, -2, -3, -4], "int8")], w)
  case("where_empty", "where", [arr([], "bool", (0,)), arr([], "float32", (0,)),
                                weak(1.0)], w)
  case("where_empty20", "where", [arr([[True]], "bool"), arr([], "float32", (2, 0)),
                                  arr([1.0], "float32")], w)

  def clip3(x, lo, hi):
    return jnp.clip(x, lo, hi)

  x32 = arr([NAN, -INF, INF, -0.0, 0.0, -5.0, 1.0, 2.5, 10.0], "float32")
  case("clip_f32", "clip", [x32, weak(-1.0), weak(2.0)], clip3)
  case("clip_f32_arrays", "clip", [x32, arr(-1.0, "float32"), arr(NAN, "float32")], clip3)
  case("clip_f32_lo_gt_hi", "clip", [x32, weak(3.0), weak(1.0)], clip3)
  case("clip_i8", "clip", [arr(VALUES["int8"], "int8"), weak(-3), weak(50)], clip3)
  case("clip_i8_float_bounds", "clip", [arr(VALUES["int8"], "int8"), weak(-3.5),
                                        weak(50.5)], clip3)
  case("clip_u8_bcast", "clip", [arr([[0, 100, 255]], "uint8"),
                                 arr([[10], [200]], "uint8"), weak(250)], clip3)
  case("clip_bf16", "clip", [arr(VALUES["bfloat16"], "bfloat16"), weak(-1), weak(1)],
       clip3)
  case("clip_lo_only", "clip", [x32, weak(0.5)], lambda x, lo: jnp.clip(x, lo, None),
       "nohi=1")
  case("clip_hi_only", "clip", [arr(VALUES["int32"], "int32"), weak(3)],
       lambda x, hi: jnp.clip(x, None, hi), "nolo=1")
  case("clip_none", "clip", [arr([1, 2], "int8")], lambda x: jnp.clip(x, None, None),
       "nolo=1 nohi=1")
  case("clip_empty", "clip", [arr([], "float32", (2, 0)), weak(0.0), weak(1.0)], clip3)


def conversion_cases():
  special = {
      "float32": [NAN, INF, -INF, -0.0, 0.0, 0.5, -0.5, 1.7, -1.7, 127.5, 128.0, -129.0,
                  255.9, 256.0, -1.0, 65504.0, 65520.0, 1e10, -1e10, 3e9, 4.5e9, 1e-30,
                  3.0e38, 0.1],
      "float16": [NAN, INF, -INF, -0.0, 0.0, 0.5, -0.5, 1.7, -1.7, 127.5, 128.0, -129.0,
                  255.9, 256.0, -1.0, 65504.0, 6e-8, 0.1],
      "bfloat16": [NAN, INF, -INF, -0.0, 0.0, 0.5, -0.5, 1.7, -1.7, 127.5, 128.0, -129.0,
                   255.0, 256.0, -1.0, 1e10, -1e10, 3e9, 1e-30, 3.0e38, 0.1],
      "int32": [0, 1, -1, 127, 128, -129, 255, 256, 65535, 16777217, -16777217,
                2147483647, -2147483648, 33554433],
      "int8": VALUES["int8"],
      "uint8": VALUES["uint8"],
      "uint32": [0, 1, 255, 256, 16777217, 2147483648, 4294967295, 4294967040],
      "bool": [False, True],
  }
  for src in DTYPES:
    x = arr(special[src], src)
    for dst in DTYPES + ["int16", "uint16", "float64", "int64"]:
      case(f"astype_{src}_to_{dst}", "astype", [x], lambda a, d=dst: a.astype(d),
           f"dtype={dst}")
  case("astype_weak_float", "astype", [weak(2.5)],
       lambda a: lax.convert_element_type(a, jnp.float32), "dtype=float32")
  case("astype_weak_int_to_f16", "astype", [weak(-7)],
       lambda a: lax.convert_element_type(a, jnp.float16), "dtype=float16")
  case("astype_empty", "astype", [arr([], "float32", (2, 0))],
       lambda a: a.astype("int8"), "dtype=int8")
  # jx_bitcast keeps the itemsize (lax also allows changing it, adding or removing a
  # trailing dim: not in jaxc's contract); bool only to bool, as lax requires.
  for src in DTYPES:
    x = arr(special[src], src)
    for dst in DTYPES + ["int16", "uint16"]:
      size = np.dtype(jnp.dtype(dst)).itemsize
      if (src == dst and src != "bool") or size != np.dtype(jnp.dtype(src)).itemsize:
        continue
      case(f"bitcast_{src}_to_{dst}", "bitcast", [x],
           lambda a, d=dst: lax.bitcast_convert_type(a, d), f"dtype={dst}")
  x16 = arr([0, 1, -1, 32767, -32768, 31744, -1024, 32256, 15360], "int16")
  for dst in ("float16", "bfloat16", "uint16"):
    case(f"bitcast_int16_to_{dst}", "bitcast", [x16],
         lambda a, d=dst: lax.bitcast_convert_type(a, d), f"dtype={dst}")


def main():
  unary_cases()
  binary_cases()
  power_cases()
  where_clip_cases()
  conversion_cases()
  golden_io.write(OUT, "# Generated by tools/golden_elementwise.py with jax %s, numpy %s "
                  "(jax_enable_x64 off). Format: tests/support/golden.h.\n"
                  % (jax.__version__, np.__version__), CASES, sep="\n")


if __name__ == "__main__":
  sys.exit(main())
