#!/usr/bin/env python3
"""golden_lax.py -- writes tests/golden/lax.txt: JAX's results for jaxc's lax functions
(src/lib/lax.c, lax_conv.c): conv_general_dilated in 1-d/2-d/3-d (strides, SAME /
SAME_LOWER / VALID / explicit and negative padding, lhs and rhs dilation, feature and
batch groups, several dimension numbers, float16/bfloat16/int32), conv, conv_transpose,
reduce_window, flax-style max/avg pooling, cumulative reductions (NaN, reverse, dtypes,
XLA's rounding order),
dynamic_slice / dynamic_update_slice with out-of-range starts, einsum strings,
dot_general, select_n, round, take_along_axis and reduce_precision (with its jvp/vjp). Format: tests/support/golden.h.

Run:  pip install jax numpy;  python3 tools/golden_lax.py  (jax_enable_x64 off)

Case params (read by tests/lib/test_lax.c) are comma-separated int lists; "-" is an
empty list or an absent option (None).
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)

OUT = golden_io.path("lax.txt")
NAN, INF = float("nan"), float("inf")
RNG = np.random.RandomState(1234)
ROUGH = np.random.RandomState(4321)


# ------------------------------------------------------------------ formatting

CASES = []
NAMES = set()


def ints(v):
  """A param list: None -> "-", a sequence -> "1,2,3"."""
  if v is None or (not isinstance(v, str) and len(v) == 0):
    return "-"
  if isinstance(v, str):
    return v
  return ",".join(str(int(x)) for x in v)


def case(name, fn, args, call, params=None, err=None):
  """Runs call(*args) under JAX and records inputs and output; with err, the call must
  raise and the case records that status."""
  assert name not in NAMES, name
  NAMES.add(name)
  if err:
    try:
      call(*args)
    except (TypeError, ValueError, IndexError):
      outs = []
    else:
      raise AssertionError(f"{name}: JAX accepted it")
  else:
    outs = [call(*args)]
  CASES.append(golden_io.case_text(name, fn, params, args, outs, err))


def rand(shape, dtype="float32", lo=-2.0, hi=2.0):
  """Values on a 1/16 grid: exact in every float dtype, so inputs match."""
  v = np.round(RNG.uniform(lo, hi, size=shape) * 16) / 16
  if dtype.startswith(("int", "uint")):
    v = np.round(v * 2)
  if dtype == "bool":
    return jnp.asarray(v > 0)
  return jnp.asarray(v, dtype=jnp.dtype(dtype))


def rough(shape, dtype="float32", scale=1.0, center=0.0):
  """Values that round in sums and products: normal draws over several binades (a complex
  dtype gets two), center + scale * draw; from their own generator, so that the cases
  drawn from RNG keep their inputs."""
  def draw():
    return ROUGH.standard_normal(shape) * np.exp2(ROUGH.uniform(-4, 4, shape)) * scale + center
  v = draw() + 1j * draw() if dtype.startswith("complex") else draw()
  return jnp.asarray(v, dtype=jnp.dtype(dtype))


# ------------------------------------------------------------------ conv

def pad_param(padding):
  if isinstance(padding, str):
    return {"padding": padding}
  return {"padding": "EXPLICIT", "pads": ints([p for lohi in padding for p in lohi])}


def conv_case(name, lhs_shape, rhs_shape, strides, padding, lhs_dil=None, rhs_dil=None,
              specs=None, fgc=1, bgc=1, dtype="float32", err=None):
  lhs, rhs = rand(lhs_shape, dtype), rand(rhs_shape, dtype)
  params = {"n": len(lhs_shape) - 2, "strides": ints(strides), **pad_param(padding),
            "lhs_dil": ints(lhs_dil), "rhs_dil": ints(rhs_dil),
            "specs": ",".join(specs) if specs else "-", "fgc": fgc, "bgc": bgc}
  f = lambda x, w: lax.conv_general_dilated(
      x, w, strides, padding, lhs_dil, rhs_dil, specs, feature_group_count=fgc,
      batch_group_count=bgc, precision=lax.Precision.HIGHEST)
  case(name, "conv_general_dilated", [lhs, rhs], f, params, err)


def conv_cases():
  # 1-d
  conv_case("conv1d_valid", (2, 3, 9), (4, 3, 3), (1,), "VALID")
  conv_case("conv1d_same_s2", (2, 3, 9), (4, 3, 3), (2,), "SAME")
  conv_case("conv1d_same_lower_s2", (2, 3, 8), (4, 3, 4), (2,), "SAME_LOWER")
  conv_case("conv1d_same_even_k", (1, 2, 7), (3, 2, 4), (1,), "SAME")
  conv_case("conv1d_explicit", (2, 3, 9), (4, 3, 3), (1,), [(2, 1)])
  conv_case("conv1d_negative_pad", (2, 3, 9), (4, 3, 3), (1,), [(-1, -2)])
  conv_case("conv1d_mixed_pad_s3", (1, 2, 10), (2, 2, 3), (3,), [(-2, 4)])
  conv_case("conv1d_rhs_dil", (2, 3, 11), (4, 3, 3), (1,), "VALID", rhs_dil=(2,))
  conv_case("conv1d_rhs_dil_same", (2, 3, 11), (4, 3, 3), (2,), "SAME", rhs_dil=(3,))
  conv_case("conv1d_lhs_dil", (2, 3, 5), (4, 3, 3), (1,), [(2, 2)], lhs_dil=(2,))
  conv_case("conv1d_lhs_rhs_dil_s2", (1, 2, 6), (3, 2, 2), (2,), [(1, 3)], lhs_dil=(3,),
            rhs_dil=(2,))
  conv_case("conv1d_nwc", (2, 9, 3), (3, 3, 4), (2,), "SAME", specs=("NWC", "WIO", "NWC"))
  conv_case("conv1d_groups", (2, 6, 8), (4, 3, 3), (1,), "VALID", fgc=2)
  conv_case("conv1d_depthwise", (2, 4, 8), (8, 1, 3), (1,), "SAME", fgc=4)
  conv_case("conv1d_batch_groups", (4, 3, 8), (6, 3, 3), (1,), "VALID", bgc=2)
  conv_case("conv1d_batch_groups_4", (8, 2, 6), (4, 2, 2), (2,), "SAME", bgc=4)
  conv_case("conv1d_window_too_big", (1, 2, 3), (2, 2, 5), (1,), "VALID")
  conv_case("conv1d_f16", (2, 3, 9), (4, 3, 3), (2,), "SAME", dtype="float16")
  conv_case("conv1d_bf16", (2, 3, 9), (4, 3, 3), (1,), "VALID", dtype="bfloat16")
  conv_case("conv1d_i32", (2, 3, 9), (4, 3, 3), (1,), [(1, 1)], dtype="int32")
  conv_case("conv1d_bool", (2, 3, 9), (4, 3, 3), (2,), "SAME", dtype="bool")
  conv_case("conv0d", (3, 4), (5, 4), (), [])
  # 2-d
  conv_case("conv2d_valid", (2, 3, 7, 6), (4, 3, 3, 2), (1, 1), "VALID")
  conv_case("conv2d_same_s2", (2, 3, 7, 6), (4, 3, 3, 3), (2, 2), "SAME")
  conv_case("conv2d_same_s21", (1, 2, 8, 5), (3, 2, 2, 3), (2, 1), "SAME")
  conv_case("conv2d_explicit", (2, 2, 5, 6), (3, 2, 3, 3), (1, 2), [(1, 2), (0, 1)])
  conv_case("conv2d_dil", (1, 2, 9, 8), (3, 2, 3, 2), (1, 1), "VALID", rhs_dil=(2, 3))
  conv_case("conv2d_lhs_dil", (1, 2, 4, 3), (2, 2, 3, 3), (1, 1), [(2, 2), (1, 2)],
            lhs_dil=(2, 3))
  conv_case("conv2d_nhwc", (2, 6, 5, 3), (3, 3, 3, 4), (1, 1), "SAME",
            specs=("NHWC", "HWIO", "NHWC"))
  conv_case("conv2d_nhwc_s2", (2, 7, 6, 3), (3, 2, 3, 4), (2, 2), "VALID",
            specs=("NHWC", "HWIO", "NHWC"))
  conv_case("conv2d_mixed_specs", (2, 5, 3, 6), (4, 3, 3, 3), (1, 2), "SAME",
            specs=("NHCW", "OHIW", "CWNH"))
  conv_case("conv2d_spatial_order", (1, 2, 6, 5), (3, 2, 2, 3), (1, 2), "VALID",
            specs=("NCHW", "OIWH", "NCWH"))
  conv_case("conv2d_groups", (2, 6, 5, 5), (6, 2, 3, 3), (1, 1), "SAME", fgc=3)
  conv_case("conv2d_depthwise_nhwc", (1, 6, 6, 4), (3, 3, 1, 8), (2, 2), "SAME",
            specs=("NHWC", "HWIO", "NHWC"), fgc=4)
  conv_case("conv2d_batch_groups", (4, 2, 5, 5), (4, 2, 3, 3), (1, 1), "VALID", bgc=2)
  conv_case("conv2d_f16", (1, 3, 6, 6), (2, 3, 3, 3), (1, 1), "SAME", dtype="float16")
  conv_case("conv2d_i32", (1, 2, 4, 4), (2, 2, 2, 2), (1, 1), "VALID", dtype="int32")
  # 3-d
  conv_case("conv3d_valid", (1, 2, 5, 4, 4), (3, 2, 2, 2, 3), (1, 1, 1), "VALID")
  conv_case("conv3d_same_s2", (2, 2, 5, 6, 4), (2, 2, 3, 3, 2), (2, 2, 1), "SAME")
  conv_case("conv3d_dil_explicit", (1, 1, 6, 5, 5), (2, 1, 2, 2, 2), (1, 2, 1),
            [(1, 0), (0, 1), (-1, 1)], rhs_dil=(2, 1, 2))
  conv_case("conv3d_ndhwc_groups", (1, 4, 4, 4, 4), (2, 2, 2, 2, 4), (1, 1, 1), "SAME",
            specs=("NDHWC", "DHWIO", "NDHWC"), fgc=2)
  conv_case("conv3d_lhs_dil", (1, 1, 3, 3, 2), (1, 1, 2, 2, 2), (1, 1, 1),
            [(1, 1), (0, 0), (1, 0)], lhs_dil=(2, 1, 2))
  # errors (the C messages are checked in test_lax.c)
  conv_case("conv_err_features", (1, 3, 5), (2, 2, 3), (1,), "VALID", err="JX_ERR_SHAPE")
  conv_case("conv_err_groups", (1, 6, 5), (4, 2, 3), (1,), "VALID", fgc=3,
            err="JX_ERR_SHAPE")
  conv_case("conv_err_batch_groups", (3, 2, 5), (4, 2, 3), (1,), "VALID", bgc=2,
            err="JX_ERR_SHAPE")
  conv_case("conv_err_both_groups", (2, 2, 5), (2, 1, 3), (1,), "VALID", fgc=2, bgc=2,
            err="JX_ERR_SHAPE")
  conv_case("conv_err_specs", (1, 2, 5), (2, 2, 3), (1,), "VALID",
            specs=("NCW", "OIH", "NCW"), err="JX_ERR_VALUE")
  conv_case("conv_err_string_pad_lhs_dil", (1, 2, 5), (2, 2, 3), (1,), "SAME",
            lhs_dil=(2,), err="JX_ERR_VALUE")
  # lax.conv: NCHW / OIHW
  x, w = rand((2, 3, 6, 5)), rand((4, 3, 3, 2))
  case("conv_shortcut_same", "conv", [x, w],
       lambda a, b: lax.conv(a, b, (2, 1), "SAME", precision=lax.Precision.HIGHEST),
       {"n": 2, "strides": "2,1", "padding": "SAME"})


def conv_transpose_cases():
  def ct(name, lhs_shape, rhs_shape, strides, padding, rhs_dil=None, specs=None,
         tk=False, dtype="float32"):
    lhs, rhs = rand(lhs_shape, dtype), rand(rhs_shape, dtype)
    params = {"n": len(lhs_shape) - 2, "strides": ints(strides), **pad_param(padding),
              "rhs_dil": ints(rhs_dil), "specs": ",".join(specs) if specs else "-",
              "tk": int(tk)}
    f = lambda x, w: lax.conv_transpose(x, w, strides, padding, rhs_dil, specs,
                                        transpose_kernel=tk,
                                        precision=lax.Precision.HIGHEST)
    case(name, "conv_transpose", [lhs, rhs], f, params)

  ct("convT1d_same_s2", (2, 5, 3), (3, 3, 4), (2,), "SAME")
  ct("convT1d_valid_s2", (2, 5, 3), (3, 3, 4), (2,), "VALID")
  ct("convT1d_valid_s3_k2", (1, 4, 2), (2, 2, 3), (3,), "VALID")
  ct("convT1d_explicit", (1, 4, 2), (3, 2, 3), (2,), [(1, 2)])
  ct("convT2d_same_s2", (2, 4, 3, 3), (3, 3, 3, 2), (2, 2), "SAME")
  ct("convT2d_valid_s12", (1, 3, 4, 2), (2, 3, 2, 3), (1, 2), "VALID")
  ct("convT2d_same_tk", (1, 4, 4, 2), (3, 3, 3, 2), (2, 2), "SAME", tk=True)
  ct("convT2d_dil", (1, 4, 4, 2), (3, 3, 2, 3), (2, 1), "SAME", rhs_dil=(2, 2))
  ct("convT2d_nchw", (1, 2, 4, 3), (3, 3, 2, 3), (2, 2), "VALID",
     specs=("NCHW", "HWIO", "NCHW"))
  ct("convT3d_same_s2", (1, 3, 3, 2, 2), (2, 2, 2, 2, 3), (2, 2, 2), "SAME")


# ------------------------------------------------------------ windows and pools

OPS = {"sum": (0.0, lax.add), "max": (-INF, lax.max), "min": (INF, lax.min),
       "prod": (1.0, lax.mul)}


def rw_case(name, shape, op, window, strides, padding, base=None, wdil=None,
            dtype="float32", x=None):
  x = rand(shape, dtype) if x is None else x
  init, comp = OPS[op]
  if dtype.startswith("int"):
    init = {"sum": 0, "prod": 1, "max": np.iinfo(dtype).min, "min": np.iinfo(dtype).max}[op]
  init = jnp.asarray(init, x.dtype)
  params = {"op": op, "window": ints(window), "strides": ints(strides),
            **pad_param(padding), "base_dil": ints(base), "win_dil": ints(wdil)}
  f = lambda a: lax.reduce_window(a, init, comp, window, strides, padding, base, wdil)
  case(name, "reduce_window", [x], f, params)


def window_cases():
  rw_case("rw_max_1d", (9,), "max", (3,), (2,), "VALID")
  rw_case("rw_sum_1d_same", (9,), "sum", (4,), (2,), "SAME")
  rw_case("rw_min_2d_same_lower", (5, 6), "min", (2, 3), (2, 2), "SAME_LOWER")
  rw_case("rw_prod_2d", (4, 5), "prod", (2, 2), (1, 2), "VALID")
  rw_case("rw_max_explicit", (2, 5, 6), "max", (1, 3, 2), (1, 2, 2), [(0, 0), (1, 2), (-1, 1)])
  rw_case("rw_sum_base_dil", (5,), "sum", (3,), (1,), [(1, 1)], base=(2,))
  rw_case("rw_max_base_dil", (4, 3), "max", (2, 2), (1, 1), "VALID", base=(2, 2))
  rw_case("rw_max_win_dil", (10, 6), "max", (3, 2), (1, 2), "SAME", wdil=(2, 3))
  rw_case("rw_sum_3d", (4, 5, 3), "sum", (2, 3, 2), (2, 1, 1), "SAME")
  rw_case("rw_max_i32", (3, 7), "max", (2, 3), (1, 2), [(1, 0), (1, 1)], dtype="int32")
  rw_case("rw_sum_f16", (3, 7), "sum", (2, 3), (1, 1), "VALID", dtype="float16")
  x = jnp.asarray([1.0, NAN, 3.0, -INF, 2.0, INF, 0.5, -1.0], jnp.float32)
  rw_case("rw_max_nan_inf", (8,), "max", (3,), (1,), "SAME", x=x)
  rw_case("rw_min_nan_inf", (8,), "min", (2,), (2,), "VALID", x=x)
  rw_case("rw_sum_nan_inf", (8,), "sum", (3,), (1,), "VALID", x=x)


def flax_pool(x, init, fn, window, strides, padding):
  """flax.linen.pooling.pool: windows over the dims between the batch dims and the
  features (the last dim)."""
  nb = x.ndim - (len(window) + 1)
  strides = strides or (1,) * len(window)
  dims = (1,) * nb + tuple(window) + (1,)
  st = (1,) * nb + tuple(strides) + (1,)
  if not isinstance(padding, str):
    padding = ((0, 0),) * nb + tuple(padding) + ((0, 0),)
  return lax.reduce_window(x, init, fn, dims, st, padding)


def max_pool(x, window, strides, padding):
  return flax_pool(x, -jnp.inf, lax.max, window, strides, padding)


def avg_pool(x, window, strides, padding, count_include_pad):
  y = flax_pool(x, 0.0, lax.add, window, strides, padding)
  if count_include_pad:
    return y / np.prod(window)
  div_shape = x.shape[:-1] + (1,)
  if len(div_shape) - 2 == len(window):
    div_shape = (1,) + div_shape[1:]
  return y / flax_pool(jnp.ones(div_shape), 0.0, lax.add, window, strides, padding)


def pool_cases():
  def pc(name, kind, shape, window, strides, padding, cip=True, dtype="float32"):
    x = rand(shape, dtype)
    params = {"n": len(window), "window": ints(window), "strides": ints(strides),
              **pad_param(padding), "cip": int(cip)}
    if kind == "max_pool":
      f = lambda a: max_pool(a, window, strides, padding)
    else:
      f = lambda a: avg_pool(a, window, strides, padding, cip)
    case(name, kind, [x], f, params)

  pc("maxpool1d", "max_pool", (2, 9, 3), (3,), (2,), "VALID")
  pc("maxpool2d_same", "max_pool", (2, 5, 6, 3), (2, 2), (2, 2), "SAME")
  pc("maxpool2d_s1", "max_pool", (1, 5, 5, 2), (3, 3), None, "SAME")
  pc("maxpool3d", "max_pool", (1, 4, 5, 4, 2), (2, 2, 2), (2, 2, 2), "VALID")
  pc("maxpool2d_explicit", "max_pool", (2, 4, 5, 1), (2, 3), (1, 2), [(1, 0), (1, 1)])
  pc("maxpool2d_two_batch_dims", "max_pool", (2, 2, 4, 4, 2), (2, 2), (2, 1), "VALID")
  pc("maxpool2d_no_batch", "max_pool", (5, 4, 2), (2, 2), (1, 1), "SAME")
  pc("avgpool1d", "avg_pool", (2, 9, 3), (3,), (2,), "VALID")
  pc("avgpool2d_same", "avg_pool", (2, 5, 6, 3), (3, 3), (2, 2), "SAME")
  pc("avgpool2d_same_excl", "avg_pool", (2, 5, 6, 3), (3, 3), (2, 2), "SAME", cip=False)
  pc("avgpool3d_explicit_excl", "avg_pool", (1, 4, 3, 4, 2), (2, 2, 3), (1, 2, 1),
     [(1, 1), (0, 1), (1, 1)], cip=False)
  pc("avgpool2d_f16", "avg_pool", (1, 4, 4, 2), (2, 2), (2, 2), "VALID", dtype="float16")
  pc("avgpool2d_i32", "avg_pool", (1, 4, 4, 2), (2, 2), (2, 2), "VALID", dtype="int32")


# ------------------------------------------------------------------ scans

def cum_cases():
  fns = {"cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax,
         "cummin": lax.cummin}
  specials = jnp.asarray([1.5, -2.0, NAN, 3.0, INF, -0.0, -INF, 0.5, 2.0], jnp.float32)
  for name, f in fns.items():
    for rev in (False, True):
      r = "_rev" if rev else ""
      x = rand((3, 17), lo=0.5, hi=1.5) if name == "cumprod" else rand((3, 17))
      case(f"{name}_axis1{r}", name, [x], lambda a: f(a, 1, rev), {"axis": 1, "reverse": int(rev)})
      case(f"{name}_axis0{r}", name, [rand((6, 4))], lambda a: f(a, 0, rev),
           {"axis": 0, "reverse": int(rev)})
      case(f"{name}_nan{r}", name, [specials], lambda a: f(a, 0, rev),
           {"axis": 0, "reverse": int(rev)})
    case(f"{name}_len1", name, [rand((2, 1))], lambda a: f(a, 1), {"axis": 1, "reverse": 0})
    case(f"{name}_empty", name, [rand((0, 3))], lambda a: f(a, 0), {"axis": 0, "reverse": 0})
    case(f"{name}_long", name, [rand((100,), lo=0.9, hi=1.1) if name == "cumprod"
                                 else rand((100,))], lambda a: f(a, 0), {"axis": 0, "reverse": 0})
    case(f"{name}_i32", name, [rand((2, 9), "int32")], lambda a: f(a, 1, True),
         {"axis": 1, "reverse": 1})
    case(f"{name}_i8", name, [rand((11,), "int8")], lambda a: f(a, 0),
         {"axis": 0, "reverse": 0})
    case(f"{name}_f16", name, [rand((2, 7), "float16", 0.5, 1.5)], lambda a: f(a, 1),
         {"axis": 1, "reverse": 0})
    case(f"{name}_bool", name, [rand((4,), "bool")], lambda a: f(a, 0),
         {"axis": 0, "reverse": 0}, err="JX_ERR_DTYPE")
  case("cumsum_neg_zero", "cumsum", [jnp.asarray([-0.0, -0.0, -0.0], jnp.float32)],
       lambda a: lax.cumsum(a, 0), {"axis": 0, "reverse": 0})
  case("cumsum_neg_zero_rev", "cumsum", [jnp.asarray([-0.0, -0.0, 1.0], jnp.float32)],
       lambda a: lax.cumsum(a, 0, True), {"axis": 0, "reverse": 1})
  # XLA's CPU order (reduce_window_rewriter.cc: rows of 16, their totals scanned again):
  # inexact values, so that another order shows in the bits (the test checks them exactly)
  for n in (16, 17, 40, 300, 5000):
    for rev in (False, True):
      r = "_rev" if rev else ""
      case(f"cumsum_order_{n}{r}", "cumsum", [rough((n,))], lambda a: lax.cumsum(a, 0, rev),
           {"axis": 0, "reverse": int(rev)})
      case(f"cumprod_order_{n}{r}", "cumprod", [rough((n,), scale=0.05, center=1.0)],
           lambda a: lax.cumprod(a, 0, rev), {"axis": 0, "reverse": int(rev)})
  for axis, shape in ((0, (40, 3, 2)), (1, (2, 40, 3)), (2, (3, 2, 40))):
    for rev in (False, True):
      r = "_rev" if rev else ""
      case(f"cumsum_order_axis{axis}{r}", "cumsum", [rough(shape)],
           lambda a: lax.cumsum(a, axis, rev), {"axis": axis, "reverse": int(rev)})
  for dt in ("float16", "bfloat16", "complex64"):
    for rev in (False, True):
      r = "_rev" if rev else ""
      case(f"cumsum_order_{dt}{r}", "cumsum", [rough((2, 70), dt)],
           lambda a: lax.cumsum(a, 1, rev), {"axis": 1, "reverse": int(rev)})
      case(f"cumprod_order_{dt}{r}", "cumprod", [rough((2, 70), dt, scale=0.05, center=1.0)],
           lambda a: lax.cumprod(a, 1, rev), {"axis": 1, "reverse": int(rev)})
  case("cumsum_f16_rounding", "cumsum", [jnp.asarray([2048, 301, 1001, 1.1], jnp.float16)],
       lambda a: lax.cumsum(a, 0), {"axis": 0, "reverse": 0})
  case("np_cumsum_order", "np_cumsum", [rough((3, 45))], lambda a: jnp.cumsum(a), {"axis": "none"})
  for name, f in (("np_cumsum", jnp.cumsum), ("np_cumprod", jnp.cumprod)):
    case(f"{name}_none", name, [rand((2, 3, 2), lo=0.5, hi=1.5)], lambda a: f(a),
         {"axis": "none"})
    case(f"{name}_axis_neg", name, [rand((2, 5), lo=0.5, hi=1.5)], lambda a: f(a, -1),
         {"axis": -1})
    case(f"{name}_bool", name, [rand((2, 5), "bool")], lambda a: f(a, 1), {"axis": 1})
    case(f"{name}_i8", name, [rand((6,), "int8")], lambda a: f(a, 0), {"axis": 0})
    case(f"{name}_weak_scalar", name, [2.5], lambda a: f(a), {"axis": "none"})


# ------------------------------------------------------------ dynamic slicing

def dyn_cases():
  x = rand((5, 6))
  for starts in ((1, 2), (-1, 0), (4, 5), (-7, 10), (0, -2), (3, -100)):
    tag = "_".join(str(s).replace("-", "m") for s in starts)
    si = [jnp.asarray(s, jnp.int32) for s in starts]
    case(f"dynamic_slice_{tag}", "dynamic_slice", [x] + si,
         lambda a, *s: lax.dynamic_slice(a, s, (2, 3)), {"sizes": "2,3"})
    upd = rand((2, 3))
    case(f"dynamic_update_slice_{tag}", "dynamic_update_slice", [x, upd] + si,
         lambda a, u, *s: lax.dynamic_update_slice(a, u, s))
  case("dynamic_slice_full", "dynamic_slice", [x, jnp.int32(3), jnp.int32(-1)],
       lambda a, *s: lax.dynamic_slice(a, s, (5, 6)), {"sizes": "5,6"})
  case("dynamic_slice_empty", "dynamic_slice", [x, jnp.int32(3), jnp.int32(2)],
       lambda a, *s: lax.dynamic_slice(a, s, (0, 2)), {"sizes": "0,2"})
  case("dynamic_slice_uint", "dynamic_slice",
       [jnp.arange(10, dtype=jnp.int32), jnp.uint32(4000000000)],
       lambda a, s: lax.dynamic_slice(a, (s,), (3,)), {"sizes": "3"})
  case("dynamic_slice_int8_start", "dynamic_slice",
       [jnp.arange(300, dtype=jnp.float32), jnp.int8(-100)],
       lambda a, s: lax.dynamic_slice(a, (s,), (4,)), {"sizes": "4"})
  case("dynamic_slice_3d", "dynamic_slice",
       [rand((3, 4, 5), "int32"), jnp.int32(1), jnp.int32(3), jnp.int32(-2)],
       lambda a, *s: lax.dynamic_slice(a, s, (2, 2, 3)), {"sizes": "2,2,3"})
  case("dynamic_update_slice_3d", "dynamic_update_slice",
       [rand((3, 4, 5), "int32"), rand((1, 4, 2), "int32"), jnp.int32(5), jnp.int32(1),
        jnp.int32(-1)], lambda a, u, *s: lax.dynamic_update_slice(a, u, s))
  case("dynamic_update_slice_full", "dynamic_update_slice",
       [rand((2, 3)), rand((2, 3)), jnp.int32(1), jnp.int32(1)],
       lambda a, u, *s: lax.dynamic_update_slice(a, u, s))
  case("dynamic_update_slice_empty_update", "dynamic_update_slice",
       [rand((2, 3)), rand((0, 3)), jnp.int32(1), jnp.int32(1)],
       lambda a, u, *s: lax.dynamic_update_slice(a, u, s))


# ------------------------------------------------------------------ einsum

EINSUMS = [
  ("ij,jk->ik", [(3, 4), (4, 5)]),
  ("ij,jk", [(3, 4), (4, 5)]),
  ("ij,kj->ki", [(2, 3), (4, 3)]),
  ("i,i->", [(5,), (5,)]),
  ("i,i", [(5,), (5,)]),
  ("i,j->ij", [(3,), (4,)]),
  ("i,j", [(3,), (4,)]),
  ("ii->i", [(4, 4)]),
  ("ii", [(4, 4)]),
  ("iij->ji", [(3, 3, 2)]),
  ("iji->ij", [(3, 2, 3)]),
  ("ij->", [(3, 4)]),
  ("ij->ji", [(3, 4)]),
  ("ij", [(3, 4)]),
  ("ji", [(3, 4)]),
  ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
  ("bij,bkj->bki", [(2, 3, 4), (2, 5, 4)]),
  ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
  ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
  ("...ij,jk->...ik", [(2, 2, 3, 4), (4, 5)]),
  ("i...->...", [(3, 2, 2)]),
  ("...i->i", [(2, 3, 4)]),
  ("i...i", [(3, 2, 3)]),
  ("...", [(3, 2)]),
  ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
  ("ij,jk,kl", [(2, 3), (3, 4), (4, 2)]),
  ("abc,cd,bd->ad", [(2, 3, 4), (4, 5), (3, 5)]),
  ("ab,bc,ca->", [(3, 4), (4, 5), (5, 3)]),
  ("ij,ij->ij", [(3, 4), (3, 4)]),
  ("ij,j->i", [(3, 1), (4,)]),
  ("ij,j->ij", [(3, 1), (4,)]),
  ("ij,jk->ik", [(3, 1), (5, 2)]),
  ("Ba,ab", [(2, 3), (3, 4)]),
  ("ba,ab", [(2, 3), (3, 2)]),
  ("xy,yz,zx->", [(2, 2), (2, 2), (2, 2)]),
  ("ijk,jil->kl", [(3, 2, 4), (2, 3, 5)]),
  ("ij , jk -> ik", [(2, 3), (3, 2)]),
  ("i,", [(3,), ()]),
  (",", [(), ()]),
  ("ab,cd->abcd", [(2, 3), (2, 2)]),
  ("i,i,i->i", [(4,), (4,), (4,)]),
  ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
]

EINSUM_ERRS = [
  ("ij,jk->ik", [(3, 4), (5, 6)], "JX_ERR_SHAPE"),
  ("ij,jk", [(3, 4)], "JX_ERR_VALUE"),
  ("ijk", [(3, 4)], "JX_ERR_SHAPE"),
  ("ii", [(3, 4)], "JX_ERR_SHAPE"),
  ("ij->ii", [(3, 3)], "JX_ERR_VALUE"),
  ("ij->k", [(3, 3)], "JX_ERR_VALUE"),
  ("i..j", [(3, 3)], "JX_ERR_VALUE"),
  ("i->i->i", [(3,)], "JX_ERR_VALUE"),
]


def einsum_cases():
  for k, (subs, shapes) in enumerate(EINSUMS):
    ops = [rand(s) for s in shapes]
    f = lambda *a, subs=subs: jnp.einsum(subs, *a, precision=lax.Precision.HIGHEST)
    case(f"einsum_{k}", "einsum", ops, f, {"subs": subs.replace(" ", "_")})
  ops = [rand((3, 4), "int32"), rand((4,), "int32")]
  case("einsum_i32", "einsum", ops, lambda a, b: jnp.einsum("ij,j->i", a, b), {"subs": "ij,j->i"})
  ops = [rand((3, 4), "bool"), rand((4, 2), "bool")]
  case("einsum_bool", "einsum", ops, lambda a, b: jnp.einsum("ij,jk", a, b), {"subs": "ij,jk"})
  ops = [rand((3, 4), "int8"), rand((4,), "float16")]
  case("einsum_mixed", "einsum", ops, lambda a, b: jnp.einsum("ij,j->i", a, b),
       {"subs": "ij,j->i"})
  ops = [rand((2, 3), "float16"), rand((3, 2), "float16")]
  case("einsum_f16", "einsum", ops, lambda a, b: jnp.einsum("ij,jk", a, b), {"subs": "ij,jk"})
  for k, (subs, shapes, err) in enumerate(EINSUM_ERRS):
    ops = [rand(s) for s in shapes]
    n = len(ops)
    f = lambda *a, subs=subs, n=n: jnp.einsum(subs, *a)
    case(f"einsum_err_{k}", "einsum", ops, f, {"subs": subs.replace(" ", "_")}, err=err)


# ------------------------------------------------------- dot_general and others

def dot_cases():
  def dc(name, xs, ys, lc, rc, lb, rb, dt=("float32", "float32")):
    x, y = rand(xs, dt[0]), rand(ys, dt[1])
    f = lambda a, b: lax.dot_general(a, b, ((lc, rc), (lb, rb)),
                                     precision=lax.Precision.HIGHEST)
    case(name, "dot_general", [x, y], f,
         {"lc": ints(lc), "rc": ints(rc), "lb": ints(lb), "rb": ints(rb)})

  dc("dot_general_matmul", (3, 4), (4, 5), (1,), (0,), (), ())
  dc("dot_general_batch", (2, 3, 4), (2, 4, 5), (2,), (1,), (0,), (0,))
  dc("dot_general_batch_mid", (3, 2, 4), (4, 5, 2), (2,), (0,), (1,), (2,))
  dc("dot_general_two_contract", (3, 4, 5), (5, 2, 4), (1, 2), (2, 0), (), ())
  dc("dot_general_outer", (3,), (2, 2), (), (), (), ())
  dc("dot_general_mixed", (3, 4), (4,), (1,), (0,), (), (), ("float32", "float16"))
  dc("dot_general_i8_f16", (3, 4), (4,), (1,), (0,), (), (), ("int8", "float16"))
  dc("dot_general_bool", (3, 4), (4, 2), (1,), (0,), (), (), ("bool", "bool"))
  dc("dot_general_i32", (2, 3, 4), (2, 4), (2,), (1,), (0,), (0,), ("int32", "int32"))


def misc_cases():
  c = [rand((2, 3)) for _ in range(4)]
  w = jnp.asarray([[0, 1, 2], [3, -1, 9]], jnp.int32)
  case("select_n_int", "select_n", [w] + c, lambda a, *cs: lax.select_n(a, *cs))
  case("select_n_int_3", "select_n", [w] + c[:3], lambda a, *cs: lax.select_n(a, *cs))
  case("select_n_uint8", "select_n", [jnp.asarray([[0, 1, 1], [1, 0, 0]], jnp.uint8)] + c[:2],
       lambda a, *cs: lax.select_n(a, *cs))
  case("select_n_bool", "select_n", [jnp.asarray([[True, False, True], [False, False, True]])]
       + c[:2], lambda a, *cs: lax.select_n(a, *cs))
  case("select_n_scalar", "select_n", [jnp.int32(1)] + c[:3],
       lambda a, *cs: lax.select_n(a, *cs))
  case("select_n_one", "select_n", [jnp.int32(5)] + c[:1], lambda a, *cs: lax.select_n(a, *cs))
  case("select_n_weak", "select_n", [jnp.asarray(True), 1.0, 2.0],
       lambda a, *cs: lax.select_n(a, *cs))
  case("select_n_err_bool_3", "select_n", [jnp.asarray(True)] + c[:3],
       lambda a, *cs: lax.select_n(a, *cs), err="JX_ERR_DTYPE")
  case("select_n_err_dtypes", "select_n", [jnp.int32(0), c[0], c[1].astype(jnp.float16)],
       lambda a, *cs: lax.select_n(a, *cs), err="JX_ERR_DTYPE")
  case("select_n_err_which_f32", "select_n", [jnp.float32(0), c[0], c[1]],
       lambda a, *cs: lax.select_n(a, *cs), err="JX_ERR_DTYPE")

  vals = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 3.7, -3.7, 1e30, NAN, INF,
          -INF, 2.5000002, 8388609.0]
  for dt in ("float32", "float16", "bfloat16"):
    x = jnp.asarray(vals, jnp.dtype(dt))
    for m in (0, 1):
      case(f"round_{dt}_{m}", "round", [x], lambda a, m=m: lax.round(a, m), {"method": m})
  case("round_int_err", "round", [jnp.asarray([1, 2], jnp.int32)], lambda a: lax.round(a, 0),
       {"method": 0}, err="JX_ERR_DTYPE")

  arr = rand((3, 4))
  idx = jnp.asarray([[0, 3, -1, 4], [-5, 2, 1, 7], [1, 1, -4, 0]], jnp.int32)
  for mode in ("fill", "clip"):
    case(f"take_along_axis1_{mode}", "take_along_axis", [arr, idx],
         lambda a, i, m=mode: jnp.take_along_axis(a, i, 1, mode=m), {"axis": 1, "mode": mode})
    i0 = jnp.asarray([[2, -1, 0, 3], [0, 1, 5, -4]], jnp.int32)
    case(f"take_along_axis0_{mode}", "take_along_axis", [arr, i0],
         lambda a, i, m=mode: jnp.take_along_axis(a, i, 0, mode=m), {"axis": 0, "mode": mode})
    i1 = jnp.asarray([[1], [-2], [9]], jnp.int32)
    case(f"take_along_axis_bcast_{mode}", "take_along_axis", [arr, i1],
         lambda a, i, m=mode: jnp.take_along_axis(a, i, 1, mode=m), {"axis": 1, "mode": mode})
    a2 = rand((1, 4), "int32")
    case(f"take_along_axis_arr_bcast_{mode}", "take_along_axis", [a2, idx],
         lambda a, i, m=mode: jnp.take_along_axis(a, i, 1, mode=m), {"axis": 1, "mode": mode})
    fl = jnp.asarray([0, 11, -1, 12, -13], jnp.int32)
    case(f"take_along_axis_none_{mode}", "take_along_axis", [arr, fl],
         lambda a, i, m=mode: jnp.take_along_axis(a, i, None, mode=m),
         {"axis": "none", "mode": mode})
    b = rand((2, 3), "bool")
    case(f"take_along_axis_bool_{mode}", "take_along_axis",
         [b, jnp.asarray([[0, 5, 1], [2, -1, -9]], jnp.int8)],
         lambda a, i, m=mode: jnp.take_along_axis(a, i, -1, mode=m), {"axis": -1, "mode": mode})
    u = rand((2, 3), "int32").astype(jnp.uint8)
    case(f"take_along_axis_u8_{mode}", "take_along_axis",
         [u, jnp.asarray([[0, 5, 1], [2, -1, -9]], jnp.int32)],
         lambda a, i, m=mode: jnp.take_along_axis(a, i, 1, mode=m), {"axis": 1, "mode": mode})
  case("take_along_axis_3d", "take_along_axis",
       [rand((2, 3, 4)), jnp.asarray(RNG.randint(-4, 4, size=(2, 2, 4)), jnp.int32)],
       lambda a, i: jnp.take_along_axis(a, i, 1), {"axis": 1, "mode": "fill"})
  case("take_along_axis_err_rank", "take_along_axis", [arr, jnp.asarray([0, 1], jnp.int32)],
       lambda a, i: jnp.take_along_axis(a, i, 1), {"axis": 1, "mode": "fill"},
       err="JX_ERR_SHAPE")
  case("take_along_axis_err_float", "take_along_axis", [arr, jnp.zeros((3, 1))],
       lambda a, i: jnp.take_along_axis(a, i, 1), {"axis": 1, "mode": "fill"},
       err="JX_ERR_DTYPE")


def reduce_precision_cases():
  """lax.reduce_precision: ties, overflow into infinity, the reduced format's denormals
  (flushed), float32 denormals, NaN and infinities; its jvp and vjp (linear)."""
  vals = [0.0, -0.0, 1.0, 1.00390625, 1.01171875, -1.00390625, 1.0009765625, 1.0029296875,
          3.0e38, 3.4028235e38, 65504.0, 65519.0, 65520.0, -65536.0, 448.0, 464.0, 480.0,
          6.1035156e-05, 6.0e-05, 3.0e-05, 1e-8, 1e-30, 1.1754944e-38, 1e-39, -1e-40,
          1.4e-45, NAN, -NAN, INF, -INF, 0.1, -2.7182817, 123456.79, 0.015625, 0.0146484375]
  x = jnp.asarray(vals, jnp.float32)
  r = jnp.asarray(rough((13,), scale=100.0))
  x = jnp.concatenate([x, r])
  settings = [(8, 7), (5, 10), (4, 3), (5, 2), (8, 0), (2, 1), (1, 4), (8, 23), (11, 52),
              (6, 30)]
  for e, m in settings:
    case(f"reduce_precision_f32_{e}_{m}", "reduce_precision", [x],
         lambda a, e=e, m=m: lax.reduce_precision(a, e, m), {"e": e, "m": m})
  for dt, (e, m) in (("float16", (4, 3)), ("float16", (5, 4)), ("bfloat16", (5, 2)),
                     ("bfloat16", (8, 3))):
    xd = x.astype(dt)
    case(f"reduce_precision_{dt}_{e}_{m}", "reduce_precision", [xd],
         lambda a, e=e, m=m: lax.reduce_precision(a, e, m), {"e": e, "m": m})
  t = jnp.asarray(rough(x.shape, scale=10.0))
  for e, m in ((8, 7), (4, 3)):
    case(f"reduce_precision_jvp_{e}_{m}", "reduce_precision_jvp", [x, t],
         lambda a, b, e=e, m=m: jax.jvp(lambda y: lax.reduce_precision(y, e, m), (a,), (b,))[1],
         {"e": e, "m": m})
    case(f"reduce_precision_vjp_{e}_{m}", "reduce_precision_vjp", [x, t],
         lambda a, b, e=e, m=m: jax.vjp(lambda y: lax.reduce_precision(y, e, m), a)[1](b)[0],
         {"e": e, "m": m})
  case("reduce_precision_int_err", "reduce_precision", [jnp.asarray([1, 2], jnp.int32)],
       lambda a: lax.reduce_precision(a, 8, 7), {"e": 8, "m": 7}, err="JX_ERR_DTYPE")
  case("reduce_precision_e0_err", "reduce_precision", [x[:3]],
       lambda a: lax.reduce_precision(a, 0, 7), {"e": 0, "m": 7}, err="JX_ERR_VALUE")
  case("reduce_precision_m_neg_err", "reduce_precision", [x[:3]],
       lambda a: lax.reduce_precision(a, 8, -1), {"e": 8, "m": -1}, err="JX_ERR_VALUE")


def erf_cases():
  xs = [-3.0, -1.2, -0.5, -1e-3, -0.0, 0.0, 1e-3, 0.3, 0.5, 1.0, 2.0, 3.9, 10.0, INF, -INF, NAN]
  us = [-1.0, -0.999, -0.9, -0.5, -1e-4, -0.0, 0.0, 1e-4, 0.1, 0.7, 0.99, 0.9999, 1.0, 1.5,
        -2.0, NAN]
  for dt in ("float32", "float16", "bfloat16"):
    x = jnp.asarray(xs + list(np.asarray(rand((16,), lo=-4.0, hi=4.0))), jnp.dtype(dt))
    u = jnp.asarray(us + list(np.asarray(rand((16,), lo=-1.0, hi=1.0))), jnp.dtype(dt))
    case(f"erf_{dt}", "erf", [x], lax.erf)
    case(f"erfc_{dt}", "erfc", [x], lax.erfc)
    case(f"erf_inv_{dt}", "erf_inv", [u], lax.erf_inv)
  case("erf_int_err", "erf", [jnp.asarray([1, 2], jnp.int32)], lax.erf, err="JX_ERR_DTYPE")
  case("erf_inv_int_err", "erf_inv", [jnp.asarray([1, 2], jnp.int32)], lax.erf_inv,
       err="JX_ERR_DTYPE")


def dot_mixed_cases():
  """lax.dot_general of mixed operand dtypes: the dtype XLA ranks higher, not jnp's
  promotion (int8 x uint8 -> int8, wrapping; float16 x bfloat16 -> bfloat16). Fixed
  values (no RNG draws: the cases before keep their inputs)."""
  def mc(name, x, y):
    f = lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                     precision=lax.Precision.HIGHEST)
    case(name, "dot_general", [x, y], f, {"lc": "1", "rc": "0", "lb": "-", "rb": "-"})
  mc("dot_general_i8_u8", jnp.asarray([[100, 100], [-3, 7]], jnp.int8), jnp.asarray([[2], [1]], jnp.uint8))
  mc("dot_general_i8_u32", jnp.asarray([[1, -2]], jnp.int8), jnp.asarray([[5], [7]], jnp.uint32))
  mc("dot_general_i16_u32", jnp.asarray([[300, 2]], jnp.int16), jnp.asarray([[3], [9]], jnp.uint32))
  mc("dot_general_f16_bf16", jnp.asarray([[1.5, -2.25]], jnp.float16), jnp.asarray([[0.5], [4.0]], jnp.bfloat16))
  mc("dot_general_bool_i8", jnp.asarray([[True, False, True]]), jnp.asarray([[3], [4], [-5]], jnp.int8))


def main():
  conv_cases()
  conv_transpose_cases()
  window_cases()
  pool_cases()
  cum_cases()
  dyn_cases()
  einsum_cases()
  dot_cases()
  misc_cases()
  erf_cases()
  dot_mixed_cases()
  reduce_precision_cases()
  golden_io.write(OUT, "# Generated by tools/golden_lax.py with jax %s -- do not edit.\n"
                  "# Format: tests/support/golden.h. Params: comma-separated int lists, "
                  "'-' = none.\n\n" % jax.__version__, CASES)


if __name__ == "__main__":
  main()
