#!/usr/bin/env python3
"""golden_indexed.py -- writes tests/golden/indexed.txt: JAX's results for jaxc's indexed
updates (x.at[idx].add/set/mul/min/max along an axis, modes drop/clip, negative and
out-of-range indices, duplicates) and sorting routines (lexsort, lax.top_k,
searchsorted, unique with size/fill_value/index/inverse/counts), incl. NaN of both signs
and +-0 keys. Read by tests/lib/test_indexed.c. Format: tests/support/golden.h; a
negative NaN is written "-nan" (strtod reads it back with its sign).

Run:  pip install jax numpy;  python3 tools/golden_indexed.py  (jax_enable_x64 off)
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)

OUT = golden_io.path("indexed.txt")
NAN, INF = float("nan"), float("inf")
NNAN = float(np.copysign(np.float32(np.nan), np.float32(-1)))
RNG = np.random.RandomState(4321)


CASES = []
NAMES = set()


def case(name, fn, args, outs, params=None, err=None):
  assert name not in NAMES, name
  NAMES.add(name)
  if not isinstance(outs, (tuple, list)):
    outs = [outs]
  # sort keeps a NaN's sign bit: -nan, as the C test reads it back
  CASES.append(golden_io.case_text(name, fn, params, args, outs, err=err, signed_nan=True))


def f32(v):
  return jnp.asarray(np.asarray(v, dtype=np.float32))


def i32(v):
  return jnp.asarray(np.asarray(v, dtype=np.int32))


def rand(shape, lo=-2.0, hi=2.0):
  return f32(np.round(RNG.uniform(lo, hi, size=shape) * 16) / 16)


MODES = {"fill": "drop", "clip": "clip", "promise": "promise_in_bounds"}


def at_case(name, op, x, idx, y, axis=0, mode="fill"):
  sl = (slice(None),) * axis + (idx,)
  try:
    ref = getattr(x.at[sl], op)(y, mode=MODES[mode])
  except TypeError:  # "add does not accept dtype bool"
    case(name, "at_" + op, [x, idx, y], [], {"axis": axis, "mode": mode}, err="JX_ERR_DTYPE")
    return
  case(name, "at_" + op, [x, idx, y], ref, {"axis": axis, "mode": mode})


def at_cases():
  x1 = f32([1.5, -2.0, 3.0, 0.25, -0.5, 4.0])
  idx = i32([1, 1, -1, 7, -9, 3, 0])
  y1 = f32([2.0, -3.0, 0.5, 9.0, 7.0, NAN, -0.0])
  for op in ("add", "set", "mul", "min", "max"):
    for mode in ("fill", "clip"):
      at_case(f"{op}_1d_{mode}", op, x1, idx, y1, 0, mode)
      at_case(f"{op}_1d_scalar_{mode}", op, x1, i32([2, -2, 2, 6]), f32(-1.25), 0, mode)
    x2 = rand((4, 5))
    at_case(f"{op}_2d_axis0", op, x2, i32([3, 0, 3, -4, 4]), rand((5, 5)), 0, "fill")
    at_case(f"{op}_2d_axis1_bcast", op, x2, i32([[4, 0], [-1, 9]]), rand((2, 1)), 1, "fill")
    at_case(f"{op}_2d_axis1_clip", op, x2, i32([-7, 1, 8]), rand((4, 3)), 1, "clip")
    xi = i32([[5, -3, 2], [7, 0, -1]])
    at_case(f"{op}_int_axis1", op, xi, i32([2, 2, 0, -3]), i32([[1, -4, 6, 3], [2, 2, -5, 8]]), 1, "fill")
  at_case("set_negzero", "set", f32([1.0, 2.0, 3.0]), i32([0, 2]), f32([-0.0, NAN]), 0, "fill")
  at_case("add_empty_idx", "add", f32([1.0, 2.0]), i32([]), f32([]), 0, "fill")
  at_case("set_3d_axis1", "set", rand((2, 3, 2)), i32([[2], [0]]), rand((2, 2, 1, 2)), 1, "fill")
  # bool x: add/mul of bool updates raise (scatter_add/mul take no bool); set/min/max
  # take them; numeric updates compute in their dtype and convert back
  xb = jnp.asarray([True, False, True, False])
  # promise_in_bounds: XLA's scatter on CPU skips out-of-range updates (as drop does)
  for op in ("add", "set", "mul", "min", "max"):
    at_case(f"{op}_1d_promise", op, x1, idx, y1, 0, "promise")
  for op in ("add", "set", "mul", "min", "max"):
    at_case(f"{op}_bool", op, xb, i32([0, 1, 1, 3]), jnp.asarray([False, True, True, True]))
    at_case(f"{op}_bool_int", op, xb, i32([0, 1, 3]), i32([0, 2, -1]))


SPECIAL = [3.0, -0.0, NAN, 0.0, -INF, 1.0, float(NNAN), INF, 1.0, 0.0, -0.0]


def sort_cases():
  # lexsort
  k0 = f32([1.0, 0.0, NAN, -0.0, 2.0, 0.0, 1.0, NAN])
  k1 = i32([1, 0, 1, 0, 1, 0, 1, 0])
  k2 = f32([5.0, 5.0, 4.0, 4.0, 5.0, 5.0, 4.0, 4.0])
  case("lexsort_one", "lexsort", [k0], jnp.lexsort([k0]), {"axis": -1})
  case("lexsort_two", "lexsort", [k0, k1], jnp.lexsort([k0, k1]), {"axis": -1})
  case("lexsort_three", "lexsort", [k0, k1, k2], jnp.lexsort([k0, k1, k2]), {"axis": 0})
  a = i32(RNG.randint(0, 3, size=(3, 4)))
  b = i32(RNG.randint(0, 2, size=(3, 4)))
  case("lexsort_2d_axis0", "lexsort", [a, b], jnp.lexsort([a, b], axis=0), {"axis": 0})
  case("lexsort_2d_axis1", "lexsort", [a, b], jnp.lexsort([a, b], axis=1), {"axis": 1})
  # top_k
  sp = f32(SPECIAL)
  for k in (0, 3, 11):
    case(f"top_k_special_{k}", "top_k", [sp], lax.top_k(sp, k), {"k": k})
  m = rand((3, 6))
  m = m.at[1, 2].set(m[1, 4])
  case("top_k_2d", "top_k", [m], lax.top_k(m, 4), {"k": 4})
  ti = i32([[3, -1, 3, 7, -8, 7], [0, 0, 0, 1, 1, -2]])
  case("top_k_int", "top_k", [ti], lax.top_k(ti, 5), {"k": 5})
  # searchsorted
  srt = f32([-INF, -1.0, -0.0, 0.0, 0.0, 2.5, 2.5, INF, NAN])
  v = f32([[NAN, -INF, 0.0, -0.0], [2.5, 3.0, INF, -5.0]])
  for side in ("left", "right"):
    case(f"searchsorted_{side}", "searchsorted", [srt, v],
         jnp.searchsorted(srt, v, side=side), {"side": side})
  si = i32([1, 3, 3, 3, 8])
  vi = i32([0, 3, 9, 1, 8, 4])
  for side in ("left", "right"):
    case(f"searchsorted_int_{side}", "searchsorted", [si, vi],
         jnp.searchsorted(si, vi, side=side), {"side": side})
  case("searchsorted_scalar", "searchsorted", [si, i32(3)], jnp.searchsorted(si, i32(3)),
       {"side": "left"})
  # binary search (JAX's method='scan'): lengths around powers of two, duplicates, every
  # dtype, empty a / v, and unsorted a (where bisection and counting differ)
  for n in (1, 2, 3, 4, 7, 8, 9, 31, 64, 100):
    srt_n = f32(np.sort(np.round(RNG.uniform(-4, 4, size=n) * 2) / 2))
    q = f32(np.concatenate([np.round(RNG.uniform(-5, 5, size=12) * 2) / 2, np.asarray(srt_n)[:5]]))
    for side in ("left", "right"):
      case(f"searchsorted_n{n}_{side}", "searchsorted", [srt_n, q],
           jnp.searchsorted(srt_n, q, side=side), {"side": side})
  dt_cases = {
      "int8": ([-128, -5, -5, 0, 3, 127], [-128, -6, -5, 2, 127, 100]),
      "uint8": ([0, 1, 1, 200, 255], [0, 1, 2, 255, 254, 100]),
      "int16": ([-300, 0, 0, 7, 300], [-301, 0, 6, 7, 300, 301]),
      "uint16": ([0, 5, 65535], [0, 4, 5, 6, 65535]),
      "uint32": ([0, 3, 3, 4000000000], [0, 3, 3999999999, 4000000000, 4294967295]),
      "float16": ([-np.inf, -1.5, 0.0, 0.0, 2.0, np.nan], [np.nan, -np.inf, -0.0, 1.0, 2.0, np.inf]),
      "bfloat16": ([-2.0, -0.0, 0.5, np.inf], [np.nan, -2.0, 0.0, 0.5, 1.0, np.inf]),
      "bool": ([False, False, True, True, True], [True, False, True]),
  }
  for dt, (av, vv) in dt_cases.items():
    a_dt, v_dt = jnp.asarray(av, dtype=dt), jnp.asarray(vv, dtype=dt)
    for side in ("left", "right"):
      case(f"searchsorted_{dt}_{side}", "searchsorted", [a_dt, v_dt],
           jnp.searchsorted(a_dt, v_dt, side=side), {"side": side})
  ca = jnp.asarray([1, 1 + 2j, 1 + np.nan * 1j, 2 - 1j, np.nan], dtype=jnp.complex64)
  cv = jnp.asarray([1 + 1j, 1 + 2j, 3, 1 + np.nan * 1j, np.nan, -1j], dtype=jnp.complex64)
  for side in ("left", "right"):
    case(f"searchsorted_complex_{side}", "searchsorted", [ca, cv],
         jnp.searchsorted(ca, cv, side=side), {"side": side})
    case(f"searchsorted_mixed_{side}", "searchsorted", [si, f32([[2.5, 3.0], [-1.0, 9.5]])],
         jnp.searchsorted(si, f32([[2.5, 3.0], [-1.0, 9.5]]), side=side), {"side": side})
  uns = f32([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
  uq = f32([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 10.0])
  for side in ("left", "right"):
    case(f"searchsorted_unsorted_{side}", "searchsorted", [uns, uq],
         jnp.searchsorted(uns, uq, side=side), {"side": side})
  case("searchsorted_empty_a", "searchsorted", [f32([]), f32([1.0, -2.0])],
       jnp.searchsorted(f32([]), f32([1.0, -2.0])), {"side": "left"})
  case("searchsorted_empty_v", "searchsorted", [si, i32(np.zeros((0, 3)))],
       jnp.searchsorted(si, i32(np.zeros((0, 3))), side="right"), {"side": "right"})
  # unique
  u = f32([1.0, NAN, -0.0, 0.0, INF, float(NNAN), 3.0, 1.0, -2.0, 0.0])
  for size in (3, 6, 9, 12):
    r = jnp.unique(u, size=size, return_index=True, return_inverse=True, return_counts=True)
    case(f"unique_f_size{size}", "unique", [u], r, {"size": size, "fill": 0})
  r = jnp.unique(u, size=10, fill_value=-7.0, return_index=True, return_inverse=True,
                 return_counts=True)
  case("unique_f_fill", "unique", [u, f32(-7.0)], r, {"size": 10, "fill": 1})
  ui = i32([[4, 1, 4], [2, 1, 9]])
  r = jnp.unique(ui, size=6, return_index=True, return_inverse=True, return_counts=True)
  case("unique_int_2d", "unique", [ui], r, {"size": 6, "fill": 0})
  r = jnp.unique(ui, return_index=True, return_inverse=True, return_counts=True)
  case("unique_int_nosize", "unique", [ui], r, {"size": -1, "fill": 0})


def main():
  at_cases()
  sort_cases()
  golden_io.write(OUT, f"# Generated by tools/golden_indexed.py with jax {jax.__version__} -- "
                  "do not edit.\n# Format: tests/support/golden.h.\n\n", CASES)


if __name__ == "__main__":
  main()
