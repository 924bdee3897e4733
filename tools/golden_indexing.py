#!/usr/bin/env python3
"""golden_indexing.py -- writes tests/golden/indexing.txt: JAX's results for NumPy-style
indexing with a whole index expression, x[idx] (jaxc's jx_getitem) and
x.at[idx].get/set/add/multiply/min/max (jx_at_index_*): ints (out-of-range ones clamp:
jax_check_static_indices is off by default), slices with negative steps, newaxis, an
ellipsis anywhere, integer arrays of several dtypes (out-of-range, negative, uint32 >= 2^31)
separated or adjacent, bool masks of 1 and more dims, 0-d bools, empty results, the
errors JAX raises, and gradients. Read by tests/lib/test_getitem.c.

A case's params: idx=E,E,... with E one of: an int; a slice `start:stop:step` (an empty
part is None); N (None); E (Ellipsis); @K (the case's input K, an index array). Inputs:
x, then (updates) y, then the index arrays. mode=promise|clip|fill (at_ functions),
fill=V (at_get's fill_value). grad_* cases: the gradient of sum(sin(result)) with respect
to x (and y). Format: tests/support/golden.h.

Run:  pip install jax numpy;  python3 tools/golden_indexing.py  (jax_enable_x64 off)
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)

OUT = golden_io.path("indexing.txt")
RNG = np.random.RandomState(2024)
CASES = []
NAMES = set()


def f32(v):
  return jnp.asarray(np.asarray(v, dtype=np.float32))


def arr(v, dt):
  return jnp.asarray(np.asarray(v, dtype=dt))


def rand(shape):
  return f32(np.round(RNG.uniform(-2, 2, size=shape) * 8) / 8)


def parse(spec, ins):
  """The Python index tuple of a spec string (the idx= param)."""
  out = []
  for tok in spec.split(",") if spec else []:
    if tok == "N":
      out.append(None)
    elif tok == "E":
      out.append(Ellipsis)
    elif tok.startswith("@"):
      out.append(ins[int(tok[1:])])
    elif ":" in tok:
      parts = [int(p) if p else None for p in tok.split(":")]
      out.append(slice(*parts))
    else:
      out.append(int(tok))
  return tuple(out)


STATUS = [  # (exception type, message fragment) -> jx_status, as test_getitem.c expects
    (IndexError, "Too many indices", "JX_ERR_SHAPE"),
    (IndexError, "single ellipsis", "JX_ERR_VALUE"),
    (TypeError, "Indexer must have integer or boolean type", "JX_ERR_DTYPE"),
    (IndexError, "boolean index did not match", "JX_ERR_SHAPE"),
    (IndexError, "out of bounds for axis", "JX_ERR_SHAPE"),
    (TypeError, "Slice size at index", "JX_ERR_SHAPE"),
    (ValueError, "Incompatible shapes for broadcasting", "JX_ERR_SHAPE"),
    (ValueError, "Incompatible types for broadcasting", "JX_ERR_SHAPE"),
    (ValueError, "slice step cannot be zero", "JX_ERR_VALUE"),
    (TypeError, "does not accept dtype bool", "JX_ERR_DTYPE"),
]


def status_of(e):
  for typ, frag, st in STATUS:
    if isinstance(e, typ) and frag in str(e):
      return st
  raise e


def add(name, fn, ins, compute, params):
  assert name not in NAMES, name
  NAMES.add(name)
  try:
    outs = compute()
    err = None
  except Exception as e:  # noqa: BLE001 -- mapped to a status or re-raised
    outs, err = [], status_of(e)
  if not isinstance(outs, (list, tuple)):
    outs = [outs]
  CASES.append(golden_io.case_text(name, fn, params, ins, outs, err=err))


def getitem(name, x, spec, *arrays, expect_err=None):
  ins = [x, *arrays]
  add(name, "getitem", ins, lambda: x[parse(spec, ins)], {"idx": spec})
  if expect_err:
    assert CASES[-1].split("\n")[-2] == f"err {expect_err}", CASES[-1]


MODES = {"promise": "promise_in_bounds", "clip": "clip", "fill": "fill"}


def at_get(name, x, spec, *arrays, mode="promise", fill=None):
  ins = [x, *arrays]
  params = {"idx": spec, "mode": mode}
  if fill is not None:
    params["fill"] = fill
  add(name, "at_get", ins,
      lambda: x.at[parse(spec, ins)].get(mode=MODES[mode], fill_value=fill), params)


OPS = {"set": "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}


def at_op(name, op, x, y, spec, *arrays, mode="fill"):
  ins = [x, y, *arrays]
  m = {"fill": None, "promise": "promise_in_bounds", "clip": "clip"}[mode]
  add(name, "at_" + op, ins,
      lambda: getattr(x.at[parse(spec, ins)], OPS[op])(y, mode=m), {"idx": spec, "mode": mode})


def grad_getitem(name, x, spec, *arrays):
  ins = [x, *arrays]
  idx = parse(spec, ins)
  add(name, "grad_getitem", ins, lambda: jax.grad(lambda v: jnp.sum(jnp.sin(v[idx])))(x),
      {"idx": spec})


def grad_at(name, op, x, y, spec, *arrays, mode="fill"):
  ins = [x, y, *arrays]
  idx = parse(spec, ins)
  m = {"fill": None, "clip": "clip"}[mode]
  # JAX differentiates scatter_mul only with unique_indices=True (and unique indices)
  kw = {"unique_indices": True} if op == "mul" else {}
  f = lambda u, v: jnp.sum(jnp.sin(getattr(u.at[idx], OPS[op])(v, mode=m, **kw)))  # noqa: E731
  add(name, "grad_at_" + op, ins, lambda: jax.grad(f, argnums=(0, 1))(x, y),
      {"idx": spec, "mode": mode})


def getitem_cases():
  x = rand((3, 4))
  x4 = rand((2, 3, 4, 5))
  i2 = arr([1, -1], np.int32)
  j2 = arr([[0], [2]], np.int32)
  # ints: negative, out of range (JAX 0.10.2 clamps them: no IndexError by default)
  getitem("int", x, "1")
  getitem("int_neg", x, "-1")
  getitem("int_int", x, "1,-2")
  getitem("int_oob_clamps", x, "7")
  getitem("int_oob_neg_clamps", x, "-7")
  getitem("int_oob_second", x, "1,9")
  getitem("empty_tuple", x, "")
  # slices
  getitem("slice", x, "1:3")
  getitem("slice_rev", x, "::-1")
  getitem("slice_steps", x, "::2,1::2")
  getitem("slice_neg_step", x, "-1:0:-2")
  getitem("slice_neg_step3", x, ":,::-3")
  getitem("slice_empty", x, "5:1")
  getitem("slice_past_end", x, "10:")
  getitem("slice_int", x, "1:,-1")
  # newaxis and the ellipsis
  getitem("newaxis_first", x, "N")
  getitem("newaxis_mid", x, ":,N")
  getitem("newaxis_int_newaxis", x, "N,1,N")
  getitem("ellipsis_newaxis", x, "E,N")
  getitem("ellipsis_int", x4, "E,1")
  getitem("int_ellipsis_int", x4, "1,E,2")
  getitem("slice_ellipsis_rev", x4, ":,E,::-1")
  getitem("ellipsis_alone", x4, "E")
  getitem("ellipsis_mid_newaxis", x4, "1,E,N,2")
  getitem("ellipsis_mid_slices", x4, "0:1,E,1:4:2,-2")
  # integer arrays
  getitem("arr_1d", x, "@1", arr([2, 0, -1, 2], np.int32))
  getitem("arr_2d", x, "@1", arr([[0, 1], [2, -3]], np.int32))
  getitem("arr_axis1", x, ":,@1", arr([3, 0, -4], np.int32))
  getitem("arr_arr_bcast", x, "@1,@2", i2, j2)
  getitem("arr_sep_slice", x4, "@1,:,@2", i2, j2)
  getitem("arr_adjacent", x4, ":,@1,@2", i2, j2)
  getitem("arr_sep_two_slices", x4, ":,@1,:,@2", arr([0, 2, 1], np.int32), arr([4], np.int32))
  getitem("arr_sep_ellipsis", x4, "@1,E,@2", i2, j2)
  getitem("arr_sep_newaxis", x4, "N,@1,N,@2", i2, j2)
  getitem("arr_newaxis_between", x4, ":,@1,N,@2", i2, j2)
  getitem("int_arr_separated", x4, "1,:,@1", i2)
  getitem("int_arr_separated2", x4, ":,1,:,@1", i2)
  getitem("arr_int_adjacent", x4, "@1,1", i2)
  getitem("ellipsis_arr_int", x4, "E,@1,1", arr([3, -5, 0], np.int32))
  getitem("arr_slices_rev", x4, "::-1,@1,1:,::-2", j2)
  getitem("arr0d", x, "@1", arr(2, np.int32))
  getitem("arr0d_neg", x, ":,@1", arr(-1, np.int32))
  getitem("arr0d_oob", x, "@1", arr(5, np.int32))
  getitem("arr0d_with_1d", x4, "@1,:,@2", arr(1, np.int32), arr([0, 3], np.int32))
  # out-of-range arrays clamp (gather mode promise_in_bounds), after one wrap
  getitem("arr_oob", f32(np.arange(5)), "@1", arr([7, -7, -1, 4, 5, -6], np.int32))
  getitem("arr_oob_2d", x, "@1,@2", arr([3, -4, 1], np.int32), arr([-5, 4, 9], np.int32))
  for dt in (np.int8, np.uint8, np.int16, np.uint16, np.uint32):
    getitem(f"arr_{np.dtype(dt).name}", x, "@1,@2", arr([2, 1, 0], dt), arr([3, 0, 1], dt))
  getitem("arr_int8_neg", x, "@1", arr([-1, -3, 1], np.int8))
  getitem("arr_uint32_big", f32(np.arange(5)), "@1", arr([4294967295, 3, 7, 2147483648], np.uint32))
  # bool masks (concrete: their nonzero())
  m1 = jnp.asarray([True, False, True, True])
  m2 = jnp.asarray([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
  getitem("mask_1d", x, ":,@1", m1)
  getitem("mask_2d", x, "@1", m2)
  getitem("mask_2d_x4", x4, "1,@1", m2)
  getitem("mask_in_middle", x4, ":,@1,2", m2)
  getitem("mask_and_arr", x, "@1,@2", jnp.asarray([True, False, True]), arr([3, 0], np.int32))
  getitem("mask_newaxis", x, "N,@1", m2)
  getitem("mask_all_false", x, "@1", jnp.zeros((3, 4), bool))
  getitem("mask_zero_dim", x, "@1", jnp.zeros((3, 0), bool))
  getitem("mask_rows", x4, "@1,E,0", jnp.asarray([False, True]))
  # 0-d bools: an axis of 1 (True) or 0 (False)
  getitem("bool_true", x, "@1", jnp.asarray(True))
  getitem("bool_false", x, "@1", jnp.asarray(False))
  getitem("bool_after_slice", x, ":,@1", jnp.asarray(True))
  getitem("bool_true_true", x, "@1,@2", jnp.asarray(True), jnp.asarray(True))
  getitem("bool_with_arr", x, "@1,@2", jnp.asarray(True), arr([2, 0], np.int32))
  # JAX: a 0-d bool does not separate the advanced indices (NumPy: (2, 3, 5))
  getitem("bool_not_separating", x4[0], ":,@1,:,@2", i2, jnp.asarray(True))
  getitem("bool_ellipsis", x4, "E,@1", jnp.asarray(True))
  # a newaxis before a 0-d bool: JAX 0.10.2 inserts the bool's axis one place late per
  # newaxis before it and indexes x's axis there (x[None, True] of a (3, 4) x has shape
  # (1, 1, 1, 4)); jaxc follows NumPy, whose result this case holds: (1, 1, 3, 4)
  xn = np.asarray(x)
  CASES.append(golden_io.case_text("numpy_newaxis_before_bool", "getitem", {"idx": "N,@1"},
                                   [x, jnp.asarray(True)], [jnp.asarray(xn[None, True])]))
  NAMES.add("numpy_newaxis_before_bool")
  CASES.append(golden_io.case_text("numpy_newaxis_arr_bool", "getitem", {"idx": "N,@1,@2"},
                                   [x, arr([2, 0], np.int32), jnp.asarray(True)],
                                   [jnp.asarray(xn[None, np.array([2, 0]), True])]))
  NAMES.add("numpy_newaxis_arr_bool")
  # empty results and empty axes
  e0 = jnp.zeros((0, 3), jnp.float32)
  getitem("empty_arr_index", x, "@1", arr([], np.int32))
  getitem("empty_axis_empty_index", e0, "@1", arr([], np.int32))
  getitem("empty_axis_slice", jnp.zeros((3, 0)), "1")
  getitem("empty_axis_int", e0, "0", expect_err="JX_ERR_SHAPE")
  getitem("empty_axis_arr", e0, "@1", arr([1], np.int32), expect_err="JX_ERR_SHAPE")
  getitem("empty_axis_arr0d", e0, "@1", arr(0, np.int32), expect_err="JX_ERR_SHAPE")
  getitem("empty_axis_adv_empty_result", e0, "0,@1", arr([], np.int32))
  # dtypes and weak types kept
  getitem("int_x", arr(np.arange(12).reshape(3, 4), np.int32), "@1,::-1", arr([2, 0], np.int32))
  getitem("bool_x", jnp.asarray([[True, False], [False, True]]), ":,@1", arr([1, 1, 0], np.int32))
  weak = lax.broadcast_in_dim(2.5, (4,), ())
  getitem("weak_x_arr", weak, "@1", arr([1, 3], np.int32))
  getitem("weak_x_slice", weak, "1:3")
  getitem("x0d_newaxis", f32(3.5), "N")
  getitem("x0d_ellipsis", f32(3.5), "E")
  getitem("x0d_true", f32(3.5), "@1", jnp.asarray(True))
  # errors
  getitem("err_two_ellipses", x, "E,E", expect_err="JX_ERR_VALUE")
  getitem("err_too_many", x, "1,1,1", expect_err="JX_ERR_SHAPE")
  getitem("err_too_many_mask", x, "@1,0", m2, expect_err="JX_ERR_SHAPE")
  getitem("err_float_index", x, "@1", f32([1.0]), expect_err="JX_ERR_DTYPE")
  getitem("err_mask_shape", x, "@1", jnp.asarray([True, False]), expect_err="JX_ERR_SHAPE")
  getitem("err_mask_shape_2d", x, "@1", jnp.ones((3, 3), bool), expect_err="JX_ERR_SHAPE")
  getitem("err_arrays_broadcast", x, "@1,@2", arr([0, 1], np.int32), arr([0, 1, 2], np.int32),
          expect_err="JX_ERR_SHAPE")
  getitem("err_zero_step", x, "::0", expect_err="JX_ERR_VALUE")


def at_cases():
  x = rand((3, 4))
  x4 = rand((2, 3, 4, 5))
  x5 = f32(np.arange(5) * 1.5 - 2)
  oob = arr([7, -7, -1, 1], np.int32)
  # get: promise (JAX's default) and clip clamp; fill fills
  for mode in ("promise", "clip", "fill"):
    at_get(f"get_oob_{mode}", x5, "@1", oob, mode=mode)
    at_get(f"get_int_oob_{mode}", x, "1,9", mode=mode)
    at_get(f"get_mixed_{mode}", x4, "@1,:,@2", arr([1, -3, 2], np.int32), arr([[0], [4], [-6]], np.int32),
           mode=mode)
  at_get("get_fill_value", x5, "@1", oob, mode="fill", fill=-3.0)
  at_get("get_fill_int_default", arr(np.arange(5), np.int32), "@1", oob, mode="fill")
  at_get("get_fill_int_value", arr(np.arange(5), np.int32), "@1", oob, mode="fill", fill=2.7)
  at_get("get_fill_uint32_big", x5, "@1", arr([4294967295, 3], np.uint32), mode="fill")
  at_get("get_fill_basic_0d", x, ":,@1", arr(-5, np.int32), mode="fill")
  at_get("get_fill_bool_x", jnp.asarray([True, False, True]), "@1", arr([0, 3], np.int32), mode="fill")
  # updates
  M6 = jnp.asarray([[True, False, True, False], [False, True, True, True], [False, False, False, True]])
  i3 = arr([1, -3, 1], np.int32)
  j3 = arr([[0], [4], [4]], np.int32)
  for op in OPS:
    for mode in ("fill", "clip", "promise"):
      at_op(f"{op}_oob_{mode}", op, x5, f32([9.0, -1.0, 4.5, 0.25]), "@2", oob, mode=mode)
    at_op(f"{op}_mixed", op, x4, rand((3, 1, 3, 5)), "@2,:,@3", i3, j3)
    at_op(f"{op}_adjacent_bcast", op, x4, rand((3, 1)), ":,@2,@3", i3, j3)
    at_op(f"{op}_slices_newaxis", op, x, rand((2, 1, 4)), "1:,N,::-1")
    at_op(f"{op}_mask", op, x, rand((6,)), "@2", M6)
    at_op(f"{op}_int_oob_dropped", op, x, f32(5.0), "9,1")
    at_op(f"{op}_int_ellipsis", op, x4, rand((3, 4)), "1,E,-2")
    at_op(f"{op}_bool_true", op, x, rand((1, 4)), "@2,-1", jnp.asarray(True))
    at_op(f"{op}_dups", op, x5, f32([1.0, 2.0, 3.0, -4.0, 5.0]), "@2", arr([4, -1, 0, 4, 2], np.int32))
  at_op("set_dups_2d", "set", x, rand((3, 2, 1, 4)), "@2,N,:", arr([[2, 0], [2, -1], [-1, 2]], np.int32))
  at_op("add_int_x_float_y", "add", arr(np.arange(6).reshape(2, 3), np.int32), f32([1.7, -1.7]), "@2,1",
        arr([0, 1], np.int32))
  at_op("set_weak_x", "set", lax.broadcast_in_dim(2.5, (4,), ()), f32(3.0), "@2", arr([1], np.int32))
  at_op("set_empty_returns_x", "set", x, f32([1.0, 2.0, 3.0]), "@2", arr([], np.int32))
  at_op("add_bool_false_axis", "add", x, f32(1.0), "@2", jnp.asarray(False))
  at_op("err_set_y_shape", "set", x, f32([1.0, 2.0, 3.0]), "@2", arr([0, 1], np.int32))
  at_op("err_add_bool", "add", jnp.asarray([True, False]), jnp.asarray(True), "0")
  at_op("set_0d_x", "set", f32(1.5), f32(7.0), "")
  # complex min/max: JAX's lexicographic order (real part, then imaginary), duplicates too
  xc = arr([1 + 1j, 2 + 1j, 2 - 1j, 5], np.complex64)
  yc = arr([2 + 0.5j, 1 + 9j, 3j, 4 + 2j, 7], np.complex64)
  at_op("min_complex_dups", "min", xc, yc, "@2", arr([1, 1, 2, 3, 3], np.int32))
  at_op("max_complex_dups", "max", xc, yc, "@2", arr([1, 1, 2, 3, 3], np.int32))


def grad_cases():
  x = rand((3, 4))
  x4 = rand((2, 3, 4, 5))
  grad_getitem("grad_arr_dups", x, "@1,::-1", arr([2, 0, 2, -1], np.int32))
  grad_getitem("grad_mixed", x4, "@1,:,@2", arr([1, -1, 1], np.int32), arr([[4], [0]], np.int32))
  grad_getitem("grad_mask", x, "@1", jnp.asarray(np.asarray(RNG.uniform(size=(3, 4)) > 0.4)))
  grad_getitem("grad_basic", x4, "1,E,N,::2")
  grad_getitem("grad_oob_clamped", x, "@1", arr([5, -9], np.int32))
  for op in ("set", "add", "min", "max"):
    grad_at(f"grad_{op}_mixed", op, x4, rand((3, 3, 3, 5)), "@2,:,@3", arr([1, 0, 1], np.int32),
            arr([[0], [4], [2]], np.int32))
    grad_at(f"grad_{op}_dups_drop", op, x, rand((5,)), "@2,1", arr([2, -1, 0, 2, 7], np.int32))
  grad_at("grad_mul_unique", "mul", x4, rand((3, 3, 5)), "@2,:,@3", arr([1, 0, 1], np.int32),
          arr([0, 3, 2], np.int32))
  grad_at("grad_set_clip", "set", x, rand((4,)), "@2,1", arr([2, -1, 5, 0], np.int32), mode="clip")


def main():
  getitem_cases()
  at_cases()
  grad_cases()
  header = ("# Generated by tools/golden_indexing.py with jax " + jax.__version__ +
            " -- do not edit.\n# x[idx] and x.at[idx] with whole index expressions; see the "
            "script for the idx= syntax.\n\n")
  golden_io.write(OUT, header, CASES)


if __name__ == "__main__":
  main()
