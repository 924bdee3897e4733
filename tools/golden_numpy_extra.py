#!/usr/bin/env python3
"""golden_numpy_extra.py -- writes tests/golden/numpy_extra.txt: JAX's results for the
functions of src/lib/numpy/extra.c over NaN, +-inf, -0.0 and broadcast inputs.
Format: tests/support/golden.h; params as in golden_reduce_movement.py (axes=0,1;
absent axes = None; axis=none is JX_AXIS_NONE).
Run:  python3 tools/golden_numpy_extra.py  (jax_enable_x64 off)"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402
import golden_io  # noqa: E402
import golden_reduce_movement as g  # noqa: E402

g.CASES.clear()
NAN, INF = float("nan"), float("inf")
OUT = golden_io.path("numpy_extra.txt")

SPEC = g.arr([NAN, 1.0, 2.0, NAN, INF, -1.0, 0.0, 5.0, -INF, INF, 1.0, 2.0, NAN, NAN, NAN,
              NAN], "float32", (4, 4))
M = {d: g.mat(d) for d in ("float32", "float16", "int32", "bool")}

RED = {"nansum": jnp.nansum, "nanprod": jnp.nanprod, "nanmax": jnp.nanmax,
       "nanmin": jnp.nanmin, "nanmean": jnp.nanmean, "ptp": jnp.ptp,
       "count_nonzero": jnp.count_nonzero, "amax": jnp.amax, "amin": jnp.amin}
for fn, f in RED.items():
    for nm, x in [("spec", SPEC)] + list(M.items()):
        if fn in ("nanmax", "nanmin", "ptp", "amax", "amin") and nm == "bool":
            continue
        for axes, kd in [(None, 0), ((0,), 0), ((1,), 1)]:
            p = ("" if axes is None else f"axes={g.lst(axes)} ") + f"keepdims={kd}"
            g.case(f"{fn}_{nm}_{axes and axes[0]}_{kd}", fn, [x],
                   lambda x, f=f, axes=axes, kd=kd: f(x, axis=axes, keepdims=bool(kd)), p)
for fn, f in {"nanvar": jnp.nanvar, "nanstd": jnp.nanstd}.items():
    for nm, x in [("spec", SPEC), ("f32", M["float32"]), ("f16", M["float16"]),
                  ("i32", M["int32"])]:
        for axes, ddof in [(None, 0), ((1,), 1), ((0,), 3)]:
            p = ("" if axes is None else f"axes={g.lst(axes)} ") + f"ddof={ddof} keepdims=0"
            g.case(f"{fn}_{nm}_{axes}_{ddof}", fn, [x],
                   lambda x, f=f, axes=axes, ddof=ddof: f(x, axis=axes, ddof=ddof), p)
for fn, f in {"nanargmax": jnp.nanargmax, "nanargmin": jnp.nanargmin}.items():
    for nm, x in [("spec", SPEC), ("f32", M["float32"]), ("i32", M["int32"])]:
        for ax in [None, 0, 1]:
            if nm == "spec" and ax in (None, 1):
                continue  # JAX's eager check raises on an all-NaN slice... only for ax=1 row 3
            g.case(f"{fn}_{nm}_{ax}", fn, [x], lambda x, f=f, ax=ax: f(x, axis=ax),
                   f"axis={'none' if ax is None else ax}")
for fn, f in {"nancumsum": jnp.nancumsum, "nancumprod": jnp.nancumprod}.items():
    for nm, x in [("spec", SPEC), ("f32", M["float32"]), ("i32", M["int32"])]:
        for ax in [None, 1]:
            g.case(f"{fn}_{nm}_{ax}", fn, [x], lambda x, f=f, ax=ax: f(x, axis=ax),
                   f"axis={'none' if ax is None else ax}")
W1 = g.arr([1.0, 2.0, 0.5, 3.0], "float32")
for nm, x in [("f32", M["float32"]), ("i32", M["int32"])]:
    g.case(f"average_{nm}_w1", "average", [x, W1], lambda x, w: jnp.average(x, 1, w), "axes=1")
    g.case(f"average_{nm}_full", "average", [x, x + 20],
           lambda x, w: jnp.average(x, None, w), "")
    g.case(f"average_{nm}_none", "average", [x], lambda x: jnp.average(x, 0), "axes=0")
Q1 = g.arr([0.0, 0.25, 0.5, 0.9, 1.0], "float32")
for nm, x in [("f32", M["float32"]), ("i32", M["int32"]), ("spec", SPEC)]:
    for ax, kd in [(None, 0), (0, 0), (1, 1)]:
        axp = f"axis={'none' if ax is None else ax} keepdims={kd}"
        g.case(f"quantile_{nm}_{ax}_{kd}", "quantile", [x, Q1],
               lambda x, q, ax=ax, kd=kd: jnp.quantile(x, q, axis=ax, keepdims=bool(kd)), axp)
        g.case(f"quantile0_{nm}_{ax}_{kd}", "quantile", [x, g.arr(0.3, "float32")],
               lambda x, q, ax=ax, kd=kd: jnp.quantile(x, q, axis=ax, keepdims=bool(kd)), axp)
        g.case(f"percentile_{nm}_{ax}_{kd}", "percentile", [x, Q1 * 100],
               lambda x, q, ax=ax, kd=kd: jnp.percentile(x, q, axis=ax, keepdims=bool(kd)), axp)
        g.case(f"median_{nm}_{ax}_{kd}", "median", [x],
               lambda x, ax=ax, kd=kd: jnp.median(x, axis=ax, keepdims=bool(kd)), axp)
for nm, x in [("f32", M["float32"]), ("i32", M["int32"]), ("bool", M["bool"]), ("spec", SPEC)]:
    for n, ax in [(1, -1), (2, 0), (0, 1)]:
        g.case(f"diff_{nm}_{n}_{ax}", "diff", [x], lambda x, n=n, ax=ax: jnp.diff(x, n, ax),
               f"n={n} axis={ax}")
    if nm != "bool":
        g.case(f"ediff1d_{nm}", "ediff1d", [x], jnp.ediff1d)
        g.case(f"trapezoid_{nm}", "trapezoid", [x], lambda x: jnp.trapezoid(x, dx=0.5, axis=0),
               "dx=0.5 axis=0")
        g.case(f"trapezoidx_{nm}", "trapezoid", [x, W1],
               lambda x, t: jnp.trapezoid(x, t, axis=1), "axis=1")
A = g.arr([1.0, NAN, INF, -INF, 1e-9, 100.0, 0.0, NAN], "float32")
B = g.arr([1.00001, NAN, INF, INF, 0.0, 100.01, -0.0, 1.0], "float32")
for en in (0, 1):
    g.case(f"isclose_{en}", "isclose", [A, B], lambda a, b, en=en: jnp.isclose(a, b, equal_nan=bool(en)), f"equal_nan={en}")
    g.case(f"allclose_{en}", "allclose", [A, A], lambda a, b, en=en: jnp.allclose(a, b, equal_nan=bool(en)), f"equal_nan={en}")
    g.case(f"array_equal_{en}", "array_equal", [A, A], lambda a, b, en=en: jnp.array_equal(a, b, equal_nan=bool(en)), f"equal_nan={en}")
g.case("isclose_int", "isclose", [M["int32"], g.arr(3, "int32")], jnp.isclose, "equal_nan=0")
g.case("isclose_bcast", "isclose", [M["float32"], g.arr([1.5, -2.25, 0.1, 3.0], "float32")], jnp.isclose, "equal_nan=0")
g.case("array_equal_shape", "array_equal", [M["float32"], W1], jnp.array_equal, "equal_nan=0")
g.case("array_equiv_bc", "array_equiv", [M["float32"], M["float32"][1]], jnp.array_equiv)
g.case("array_equiv_no", "array_equiv", [M["float32"], W1[:3]], jnp.array_equiv)
X = g.arr([NAN, INF, -INF, -0.0, 0.0, 0.5, -1.5, 2.0, 1e-3, -7.25, 3.0, 100.0], "float32")
UN = {"isposinf": jnp.isposinf, "isneginf": jnp.isneginf, "degrees": jnp.degrees,
      "radians": jnp.radians, "fabs": jnp.fabs, "sinc": jnp.sinc, "conj": jnp.conj,
      "real": jnp.real, "imag": jnp.imag, "nan_to_num": jnp.nan_to_num,
      "atleast_1d": jnp.atleast_1d, "atleast_2d": jnp.atleast_2d,
      "atleast_3d": jnp.atleast_3d, "flipud": jnp.flipud}
for fn, f in UN.items():
    for nm, x in [("f32", X), ("f16", X.astype("float16")), ("i32", M["int32"])]:
        g.case(f"{fn}_{nm}", fn, [x], f)
g.case("atleast_2d_0d", "atleast_2d", [g.arr(2.0, "float32")], jnp.atleast_2d)
g.case("atleast_3d_2d", "atleast_3d", [M["int32"]], jnp.atleast_3d)
Y = g.arr([1.0, 2.0, -0.0, NAN, INF, 0.5, 3.0, -2.0, 0.0, 1.0, -INF, 4.0], "float32")
BIN = {"heaviside": jnp.heaviside, "float_power": jnp.float_power,
       "logaddexp2": jnp.logaddexp2}
for fn, f in BIN.items():
    g.case(f"{fn}_f32", fn, [X, Y], f)
    g.case(f"{fn}_i32", fn, [M["int32"], g.arr(2, "int32")], f)
    g.case(f"{fn}_weak", fn, [X.astype("float16"), 0.5], f)
g.case("divmod_f32", "divmod", [X, Y], jnp.divmod)
g.case("divmod_i32", "divmod", [M["int32"], g.arr([3, -2, 5, 7], "int32")], jnp.divmod)
g.case("modf_f32", "modf", [X], jnp.modf)
g.case("fliplr", "fliplr", [M["float32"]], jnp.fliplr)
C = g.cube("float32")
for k in (-1, 0, 1, 2, 3, 5):
    g.case(f"rot90_{k}", "rot90", [C], lambda x, k=k: jnp.rot90(x, k), f"k={k} a0=0 a1=1")
    g.case(f"rot90b_{k}", "rot90", [C], lambda x, k=k: jnp.rot90(x, k, (2, 0)), f"k={k} a0=2 a1=0")
V = g.arr([1, 2, 3], "int32")
for fn, f in {"hstack": jnp.hstack, "vstack": jnp.vstack, "dstack": jnp.dstack,
              "column_stack": jnp.column_stack}.items():
    g.case(f"{fn}_1d", fn, [V, V * 2], lambda a, b, f=f: f([a, b]))
    g.case(f"{fn}_2d", fn, [M["int32"], M["int32"]], lambda a, b, f=f: f([a, b]))
g.case("append_none", "append", [M["float32"], V], lambda a, b: jnp.append(a, b), "axis=none")
g.case("append_0", "append", [M["float32"], M["int32"]], lambda a, b: jnp.append(a, b, 0), "axis=0")
for shp in [(5,), (2, 7), (0,), (3, 4)]:
    g.case(f"resize_{len(shp)}_{shp[0]}", "resize", [C], lambda x, s=shp: jnp.resize(x, s),
           f"shape={g.lst(shp)}")

golden_io.write(OUT, "# Generated by tools/golden_numpy_extra.py -- do not edit.\n", g.CASES, sep="\n")
