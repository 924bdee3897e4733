#!/usr/bin/env python3
"""golden_numpy_more.py -- writes tests/golden/numpy_more.txt: JAX's results for
src/lib/numpy/more.c (frexp, ldexp, round with decimals, lax.div / lax.rem, cumulative_sum
/ cumulative_prod, digitize, interp, histogram_bin_edges, histogram, unwrap, polyval,
polymul) and gradients (fn "grad_<name>", d sum(f) / d args[0]). Read by
tests/lib/test_numpy_more.c (eager and jit). Format: tests/support/golden.h.

Run:  python3 tools/golden_numpy_more.py"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
import golden_io  # noqa: E402
import golden_reduce_movement as g  # noqa: E402

g.CASES.clear()
NAN, INF = float("nan"), float("inf")
OUT = golden_io.path("numpy_more.txt")


def arr(values, dtype, shape=None):
    a = np.array(values, np.int64 if dtype.startswith(("int", "uint")) else (bool if dtype == "bool" else np.float64))
    x = jnp.asarray(a, dtype=dtype)
    return x.reshape(shape) if shape is not None else x


F = arr([0.0, -0.0, 1.0, -3.5, 1e-40, -2e-44, 6.5e4, 3e38, NAN, INF, -INF, 0.1, 1024.0, 0.75], "float32")
# float32 subnormals left out: XLA on CPU flushes them (frexp(1e-40) gives (0.5, -149)
# there); jaxc keeps them (docs/api.md) and returns the exact decomposition.
g.case("frexp_f32", "frexp", [arr([0.0, -0.0, 1.0, -3.5, 1.2e-38, -2e-30, 6.5e4, 3e38, NAN, INF, -INF, 0.1, 1024.0, 0.75],
                                 "float32")], jnp.frexp)
g.case("frexp_f16", "frexp", [arr([0.0, 1.0, -3.5, 6e-8, 1e-5, 65504.0, NAN, INF], "float16")], jnp.frexp)
g.case("frexp_i32", "frexp", [arr([0, 1, -7, 1000], "int32")], jnp.frexp)
with jax.enable_x64(True):
    g.case("frexp_f64", "frexp", [arr([0.0, 1.0, -3.5, 2.5e-300, 1e-200, 1e308, NAN, -INF], "float64")], jnp.frexp, "x64=1")
    g.case("ldexp_f64", "ldexp", [arr([1.0, 0.5, 1e-300, -3.0, 0.0], "float64"), arr([3, -1, 600, 1023, 5], "int32")],
           jnp.ldexp, "x64=1")
g.case("ldexp_f32", "ldexp", [F, arr([2, 3, -1, 0, 40, 10, -20, 1, 3, -4, 5, -200, -1034, 127], "int32")], jnp.ldexp)
g.case("ldexp_bcast", "ldexp", [arr([[1.5], [-2.0]], "float32"), arr([0, 1, 130, -150], "int32")], jnp.ldexp)
g.case("ldexp_int", "ldexp", [arr([1, 2, 3], "int32"), arr([1, 2, 3], "int32")], jnp.ldexp)
g.case("ldexp_bad", "ldexp", [arr([1.0], "float32"), arr([1.0], "float32")], jnp.ldexp, err="JX_ERR_DTYPE")

R = arr([1.2345, -2.5, 2.5, 0.125, 1.005, -0.0, 123456.0, NAN, INF, 3.14159], "float32")
for d in (0, 1, 2, 3, -1, -2):
    g.case(f"round_f32_{d}", "round", [R], lambda x, d=d: jnp.round(x, d), f"decimals={d}")
g.case("round_f16_2", "round", [R.astype("float16")], lambda x: jnp.round(x, 2), "decimals=2")


def round_or_raise(x, d):
    try:
        return jnp.round(x, d)
    except NotImplementedError as e:  # integers with decimals < 0: recorded as an error
        raise ValueError(str(e))


for d in (1, -1):
    g.case(f"round_i32_{d}", "round", [arr([15, 25, -15, -25, 149, 151, 250, 7, -1234], "int32")],
           lambda x, d=d: round_or_raise(x, d), f"decimals={d}", err="JX_ERR_UNSUPPORTED" if d < 0 else None)

X = arr([7, -7, 7, -7, 5, 0, -2147483648, 9], "int32")
Y = arr([2, 2, -2, -2, 0, 3, -1, 9], "int32")
g.case("div_i32", "lax_div", [X, Y], lax.div)
g.case("rem_i32", "lax_rem", [X, Y], lax.rem)
XF = arr([7.5, -7.5, 7.5, -7.5, 1.0, 0.0, INF, NAN], "float32")
YF = arr([2.0, 2.0, -2.0, -2.0, 0.0, 0.0, 2.0, 1.0], "float32")
g.case("div_f32", "lax_div", [XF, YF], lax.div)
g.case("rem_f32", "lax_rem", [XF, YF], lax.rem)
g.case("div_weak", "lax_div", [X, 3], lax.div)
g.case("rem_u32", "lax_rem", [arr([7, 8, 9], "uint32"), arr([2, 0, 4], "uint32")], lax.rem)
g.case("div_mixed", "lax_div", [X, XF], lax.div, err="JX_ERR_DTYPE")

M = arr([[1, 2, 3], [4, 5, 6]], "int32")
B = arr([[True, False, True], [True, True, False]], "bool")
for ax in (0, 1, -1):
    for inc in (0, 1):
        g.case(f"cumulative_sum_{ax}_{inc}", "cumulative_sum", [M],
               lambda x, ax=ax, inc=inc: jnp.cumulative_sum(x, axis=ax, include_initial=bool(inc)),
               f"axis={ax} include_initial={inc}")
        g.case(f"cumulative_prod_{ax}_{inc}", "cumulative_prod", [M.astype("float32")],
               lambda x, ax=ax, inc=inc: jnp.cumulative_prod(x, axis=ax, include_initial=bool(inc)),
               f"axis={ax} include_initial={inc}")
g.case("cumulative_sum_bool", "cumulative_sum", [B], lambda x: jnp.cumulative_sum(x, axis=1), "axis=1")
g.case("cumulative_sum_dtype", "cumulative_sum", [M], lambda x: jnp.cumulative_sum(x, axis=1, dtype=jnp.float32),
       "axis=1 dtype=float32")
g.case("cumulative_sum_1d", "cumulative_sum", [arr([1.5, 2.5, -1.0], "float32")],
       lambda x: jnp.cumulative_sum(x, include_initial=True), "include_initial=1")

XS = arr([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0, NAN], "float32")
for right in (0, 1):
    g.case(f"digitize_inc_{right}", "digitize", [XS, arr([0.0, 1.0, 2.0, 3.0], "float32")],
           lambda x, b, r=right: jnp.digitize(x, b, right=bool(r)), f"right={right}")
    g.case(f"digitize_dec_{right}", "digitize", [XS, arr([3.0, 2.0, 1.0, 0.0], "float32")],
           lambda x, b, r=right: jnp.digitize(x, b, right=bool(r)), f"right={right}")
g.case("digitize_empty", "digitize", [XS, arr([], "float32")], lambda x, b: jnp.digitize(x, b), "right=0")
g.case("digitize_int", "digitize", [arr([[0, 5], [9, 2]], "int32"), arr([1, 3, 6], "int32")],
       lambda x, b: jnp.digitize(x, b), "right=0")

XP = arr([0.0, 1.0, 1.0, 2.5, 4.0], "float32")
FP = arr([1.0, 3.0, 5.0, -2.0, 0.0], "float32")
XI = arr([-1.0, 0.0, 0.25, 1.0, 1.5, 2.5, 3.9, 4.0, 7.0, NAN], "float32")
g.case("interp", "interp", [XI, XP, FP], jnp.interp)
g.case("interp_lr", "interp", [XI, XP, FP, arr(-9.0, "float32"), arr(9.0, "float32")],
       lambda x, xp, fp, l, r: jnp.interp(x, xp, fp, left=l, right=r))
g.case("interp_int", "interp", [arr([0, 1, 2, 3], "int32"), arr([0, 2], "int32"), arr([10, 20], "int32")], jnp.interp)
g.case("interp_one", "interp", [XI, arr([1.0], "float32"), arr([5.0], "float32")], jnp.interp)

H = arr([0.5, 1.0, 1.5, 2.0, 2.0, 3.7, -1.0, 5.0, 4.99, 2.5, 0.0, 1.25], "float32")
W = arr([1.0, 2.0, 0.5, 1.0, 1.0, 3.0, 1.0, 1.0, 2.0, 1.0, 1.0, 0.25], "float32")
for bins in (1, 4, 10):
    g.case(f"histogram_bin_edges_{bins}", "histogram_bin_edges", [H], lambda a, b=bins: jnp.histogram_bin_edges(a, b),
           f"bins={bins}")
    g.case(f"histogram_{bins}", "histogram", [H], lambda a, b=bins: jnp.histogram(a, b), f"bins={bins}")
g.case("histogram_range", "histogram", [H], lambda a: jnp.histogram(a, 5, range=(0.0, 4.0)), "bins=5 range=0,4")
g.case("histogram_w", "histogram", [H, W], lambda a, w: jnp.histogram(a, 3, weights=w), "bins=3")
g.case("histogram_density", "histogram", [H], lambda a: jnp.histogram(a, 4, density=True), "bins=4 density=1")
g.case("histogram_const", "histogram", [arr([2.0, 2.0, 2.0], "float32")], lambda a: jnp.histogram(a, 2), "bins=2")
g.case("histogram_int", "histogram", [arr([1, 2, 2, 3, 7], "int32")], lambda a: jnp.histogram(a, 3), "bins=3")
g.case("histogram_2d", "histogram", [H.reshape(3, 4)], lambda a: jnp.histogram(a, 4), "bins=4")

P = arr([0.0, 0.5, 3.5, 6.8, -2.0, 10.0, 0.1, 3.14159274], "float32")
g.case("unwrap", "unwrap", [P], jnp.unwrap, "axis=-1")
g.case("unwrap_disc", "unwrap", [P], lambda p: jnp.unwrap(p, discont=4.0), "axis=-1 discont=4")
g.case("unwrap_period", "unwrap", [P], lambda p: jnp.unwrap(p, period=5.0), "axis=-1 period=5")
g.case("unwrap_axis0", "unwrap", [P.reshape(4, 2)], lambda p: jnp.unwrap(p, axis=0), "axis=0")
g.case("unwrap_int", "unwrap", [arr([0, 3, 7, 1, 12], "int32")], lambda p: jnp.unwrap(p, period=6), "axis=-1 period=6")

g.case("polyval", "polyval", [arr([1.0, -2.0, 0.5, 3.0], "float32"), arr([[-1.0, 0.0], [2.0, 1.5]], "float32")],
       jnp.polyval)
g.case("polyval_int", "polyval", [arr([2, 0, -1], "int32"), arr([0, 1, 2, 3], "int32")], jnp.polyval)
g.case("polyval_weak", "polyval", [arr([1.0, 2.0], "float32"), 3.0], jnp.polyval)
g.case("polymul", "polymul", [arr([1.0, 2.0, 3.0], "float32"), arr([0.5, -1.0], "float32")], jnp.polymul)
g.case("polymul_int", "polymul", [arr([1, 2], "int32"), arr([3, 0, 1], "int32")], jnp.polymul)
g.case("polymul_1", "polymul", [arr([2.0], "float32"), arr([3.0, 1.0], "float32")], jnp.polymul)


# reductions with where= / initial=
RM = arr([[1.0, -2.0, 3.0, NAN], [4.0, 5.0, -6.0, 0.5], [7.0, 8.0, 9.0, -1.0]], "float32")
RW = arr([[1, 1, 0, 0], [1, 0, 1, 1], [0, 0, 0, 0]], "bool")
RI = arr([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], "int32")
for nm, x in (("f32", RM), ("i32", RI)):
    for ax, axp in ((None, ""), (1, "axes=1"), (0, "axes=0")):
        g.case(f"sum_where_{nm}_{ax}", "sum_where", [x, RW], lambda a, w, ax=ax: jnp.sum(a, axis=ax, where=w), axp)
        g.case(f"sum_init_{nm}_{ax}", "sum_where", [x, RW],
               lambda a, w, ax=ax: jnp.sum(a, axis=ax, where=w, initial=10), axp + " initial=10")
        g.case(f"prod_where_{nm}_{ax}", "prod_where", [x, RW], lambda a, w, ax=ax: jnp.prod(a, axis=ax, where=w), axp)
        g.case(f"max_where_{nm}_{ax}", "max_where", [x, RW],
               lambda a, w, ax=ax: jnp.max(a, axis=ax, where=w, initial=-5), axp + " initial=-5")
        g.case(f"min_init_{nm}_{ax}", "min_where", [x, RW],
               lambda a, w, ax=ax: jnp.min(a, axis=ax, where=w, initial=3), axp + " initial=3")
        g.case(f"mean_where_{nm}_{ax}", "mean_where", [x, RW], lambda a, w, ax=ax: jnp.mean(a, axis=ax, where=w), axp)
g.case("max_init_nomask", "max_where", [RI], lambda a: jnp.max(a, axis=1, initial=7), "axes=1 initial=7")
g.case("max_empty_init", "max_where", [arr([], "float32")], lambda a: jnp.max(a, initial=2.5), "initial=2.5")
g.case("sum_where_bcast", "sum_where", [RM, arr([1, 0, 1, 1], "bool")], lambda a, w: jnp.sum(a, axis=1, where=w, keepdims=True),
       "axes=1 keepdims=1")
g.case("max_where_noinit", "max_where", [RM, RW], lambda a, w: jnp.max(a, where=w), err="JX_ERR_VALUE")

# take / take_along_axis with fill_value
TX = arr([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32")
TI = arr([0, -1, 2, 3, -4, 1], "int32")
g.case("take_fill_1", "take_fill", [TX, TI], lambda x, i: jnp.take(x, i, axis=1, mode="fill", fill_value=-7.0),
       "axis=1 fill=-7")
g.case("take_fill_0", "take_fill", [TX, arr([[0, 5], [-2, 1]], "int32")],
       lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=9.0), "axis=0 fill=9")
g.case("take_fill_int", "take_fill", [RI, TI], lambda x, i: jnp.take(x, i, axis=1, mode="fill", fill_value=-1),
       "axis=1 fill=-1")
g.case("take_along_fill", "take_along_fill", [TX, arr([[0, 3], [-1, -5]], "int32")],
       lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="fill", fill_value=0.5), "axis=1 fill=0.5")

# fill values by dtype: complex reads NaN + 0j (jaxc gave -FLT_MAX + 0j); integral
# fill_values wrap to the dtype (take_along_axis clamped them: uint8 -1 gave 0)
C64 = jnp.asarray(np.array([[1 + 4j, 2 + 5j, 3 + 6j], [-1j, 0.5, -2 - 2j]], np.complex64))
g.case("take_complex64", "take", [C64[0], arr([0, 3, -4, -1], "int32")], lambda x, i: jnp.take(x, i, axis=0),
       "axis=0")
g.case("take_along_complex64", "take_along", [C64, arr([[0, 3], [-1, -5]], "int32")],
       lambda x, i: jnp.take_along_axis(x, i, axis=1), "axis=1")
g.case("take_fill_complex64", "take_fill", [C64, TI], lambda x, i: jnp.take(x, i, axis=1, mode="fill", fill_value=-7.0),
       "axis=1 fill=-7")
with jax.enable_x64(True):
    C128 = jnp.asarray(np.array([1 + 4j, 2 + 5j, 3 + 6j], np.complex128))
    g.case("take_complex128", "take", [C128, arr([0, 3, -4], "int32")], lambda x, i: jnp.take(x, i, axis=0),
           "axis=0 x64=1")
    g.case("take_along_complex128", "take_along", [C128, arr([2, 7, -9], "int32")],
           lambda x, i: jnp.take_along_axis(x, i, axis=0), "axis=0 x64=1")
for dt, fill in (("uint8", -1), ("uint8", 1000), ("int8", 300), ("int8", -129), ("uint32", -1), ("int16", 40000)):
    x = arr([[1, 2, 3], [4, 5, 6]], dt)
    nm = f"{dt}_{fill}".replace("-", "m")
    g.case(f"take_along_fill_{nm}", "take_along_fill", [x, arr([[0, 3], [-1, -5]], "int32")],
           lambda x, i, f=fill: jnp.take_along_axis(x, i, axis=1, mode="fill", fill_value=f), f"axis=1 fill={fill}")
    g.case(f"take_fill_{nm}", "take_fill", [x, TI],
           lambda x, i, f=fill: jnp.take(x, i, axis=1, mode="fill", fill_value=f), f"axis=1 fill={fill}")

# weak types (dtypes.is_weakly_typed): taking from or contracting weak operands stays weak;
# results built with strong constants (lax._const of a non-scalar, asarray(.., dtype),
# full_like(.., dtype)) are strong
from jax._src.lax.lax import _convert_element_type  # noqa: E402


def weak(values, dtype="float32", shape=None):
    return _convert_element_type(arr(values, dtype, shape), np.dtype(dtype), weak_type=True)


WV = weak([1.5, -2.0, 0.25])
WM = weak([1.0, 2.0, -1.0, 0.5, 3.0, -0.25], shape=(2, 3))
WMT = weak([2.0, -1.0, 0.5, 1.0, 0.0, 4.0], shape=(3, 2))
WI = weak([3, -1, 2], "int32")
W0 = weak(0.5)
g.case("weak_take", "take", [WV, arr([0, 2, 5, -1], "int32")], lambda x, i: jnp.take(x, i, axis=0), "axis=0")
g.case("weak_take_int", "take", [WI, arr([0, 5], "int32")], lambda x, i: jnp.take(x, i, axis=0), "axis=0")
g.case("weak_take_fill", "take_fill", [WV, arr([0, 2, 5], "int32")],
       lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-3.0), "axis=0 fill=-3")
g.case("weak_take_along_fill", "take_along_fill", [WV, arr([0, 2, 5], "int32")],
       lambda x, i: jnp.take_along_axis(x, i, axis=0, mode="fill", fill_value=-3.0), "axis=0 fill=-3")
g.case("weak_matmul", "matmul", [WM, WMT], jnp.matmul)
g.case("weak_matmul_vec", "matmul", [WV, WMT], jnp.matmul)
g.case("weak_matmul_strong", "matmul", [WM, arr([1.0, 2.0, 3.0], "float32")], jnp.matmul)
g.case("weak_matmul_f16", "matmul", [WM, arr([1.0, 2.0, 3.0], "float16")], jnp.matmul)
g.case("weak_dot", "dot", [WM, WMT], jnp.dot)
g.case("weak_dot_vec", "dot", [WV, WV], jnp.dot)
g.case("weak_dot_scalar", "dot", [W0, WV], jnp.dot)
g.case("weak_dot_int", "dot", [WI, WI], jnp.dot)
g.case("weak_inner", "inner", [WM, WM], jnp.inner)
g.case("weak_vdot", "vdot", [WM, WMT], jnp.vdot)
g.case("weak_tensordot", "tensordot", [WM, WMT], lambda x, y: jnp.tensordot(x, y, 1), "n=1")
g.case("weak_tensordot_0", "tensordot", [WV, WV], lambda x, y: jnp.tensordot(x, y, 0), "n=0")
g.case("weak_dus", "dus", [WV, weak([9.0]), arr(1, "int32")], lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)))
g.case("weak_dus_empty", "dus", [WV, weak([], shape=(0,)), arr(1, "int32")], lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)))
g.case("weak_polyval", "polyval", [WV, WV], jnp.polyval)
g.case("weak_polyval_0d", "polyval", [WV, W0], jnp.polyval)
WS = weak([NAN, INF, -INF, 0.0, -1.5, 2.0])
g.case("weak_nan_to_num", "nan_to_num", [WS], jnp.nan_to_num)
g.case("weak_nan_to_num_0d", "nan_to_num", [weak(NAN)], jnp.nan_to_num)
g.case("weak_nan_to_num_int", "nan_to_num", [WI], jnp.nan_to_num)
# complex: each part on its own (jaxc returned complex input unchanged)
CS = jnp.asarray(np.array([complex(NAN, 1), complex(INF, NAN), complex(-INF, 2), complex(3, -INF), 1.5 - 2.5j],
                          np.complex64))
g.case("nan_to_num_complex64", "nan_to_num", [CS], jnp.nan_to_num)
with jax.enable_x64(True):
    g.case("nan_to_num_complex128", "nan_to_num", [CS.astype(jnp.complex128)], jnp.nan_to_num, "x64=1")
g.case("weak_heaviside", "heaviside", [WS, weak([0.5] * 6)], jnp.heaviside)
g.case("weak_heaviside_0d", "heaviside", [weak(0.0), W0], jnp.heaviside)
g.case("weak_sinc", "sinc", [WS], jnp.sinc)
g.case("weak_sinc_0d", "sinc", [W0], jnp.sinc)
g.case("weak_sinc_0d_zero", "sinc", [weak(0.0)], jnp.sinc)
g.case("weak_logaddexp2", "logaddexp2", [WS, WV[jnp.array([0, 1, 2, 0, 1, 2])]], jnp.logaddexp2)
g.case("weak_logaddexp2_0d", "logaddexp2", [W0, weak(-1.0)], jnp.logaddexp2)

# nonzero / flatnonzero / argwhere with size; partition / argpartition
NZ = arr([[0.0, 1.5, 0.0, -2.0], [NAN, 0.0, 0.0, 3.0], [0.0, 0.0, -0.0, 4.0]], "float32")
for size in (3, 5, 8):
    g.case(f"nonzero_{size}", "nonzero", [NZ], lambda a, s=size: jnp.nonzero(a, size=s), f"size={size}")
    g.case(f"nonzero_fill_{size}", "nonzero", [NZ], lambda a, s=size: jnp.nonzero(a, size=s, fill_value=-1),
           f"size={size} fill=-1")
    g.case(f"flatnonzero_{size}", "flatnonzero", [NZ], lambda a, s=size: jnp.flatnonzero(a, size=s), f"size={size}")
    g.case(f"argwhere_{size}", "argwhere", [NZ], lambda a, s=size: jnp.argwhere(a, size=s, fill_value=7),
           f"size={size} fill=7")
g.case("nonzero_bool", "nonzero", [arr([True, False, True], "bool")], lambda a: jnp.nonzero(a, size=2), "size=2")
g.case("nonzero_nosize", "nonzero", [arr([[0, 2], [3, 0]], "int32")], jnp.nonzero, "size=-1")
g.case("argwhere_3d", "argwhere", [arr([0, 1, 0, 2, 3, 0, 0, 0], "int32").reshape(2, 2, 2)],
       lambda a: jnp.argwhere(a, size=4), "size=4")
PA = arr([[3.0, 1.0, 2.0, 5.0, 1.0, -4.0], [0.0, 9.0, -1.0, 2.5, 7.0, 2.5]], "float32")
for kth in (0, 2, 5, -1):
    for ax in (-1, 0):
        if ax == 0 and kth not in (0, -1):
            continue
        g.case(f"partition_{kth}_{ax}", "partition", [PA], lambda a, k=kth, ax=ax: jnp.partition(a, k, axis=ax),
               f"kth={kth} axis={ax}")
        g.case(f"argpartition_{kth}_{ax}", "argpartition", [PA], lambda a, k=kth, ax=ax: jnp.argpartition(a, k, axis=ax),
               f"kth={kth} axis={ax}")
g.case("partition_int", "partition", [arr([5, 3, 3, 9, -2, 3], "int32")], lambda a: jnp.partition(a, 2), "kth=2 axis=-1")
g.case("argpartition_int", "argpartition", [arr([5, 3, 3, 9, -2, 3], "int32")], lambda a: jnp.argpartition(a, 2),
       "kth=2 axis=-1")

# gradients
g.case("grad_interp", "grad_interp", [arr([0.25, 1.5, 3.0], "float32"), XP, FP],
       jax.grad(lambda x, xp, fp: jnp.sum(jnp.interp(x, xp, fp))))
g.case("grad_polyval", "grad_polyval", [arr([1.0, -2.0, 0.5], "float32"), arr([0.5, 2.0], "float32")],
       jax.grad(lambda p, x: jnp.sum(jnp.polyval(p, x))))
g.case("grad_ldexp", "grad_ldexp", [arr([1.0, -2.0, 0.5], "float32"), arr([1, 2, -3], "int32")],
       jax.grad(lambda x, e: jnp.sum(jnp.ldexp(x, e))))
g.case("grad_unwrap", "grad_unwrap", [P], jax.grad(lambda p: jnp.sum(jnp.unwrap(p) ** 2)))
g.case("grad_round", "grad_round", [R[:4]], jax.grad(lambda x: jnp.sum(jnp.round(x, 1) * x)))

g.case("grad_sum_where", "grad_sum_where", [RM, RW], jax.grad(lambda a, w: jnp.sum(jnp.sum(a, axis=1, where=w) ** 2)))
g.case("grad_mean_where", "grad_mean_where", [RM, RW], jax.grad(lambda a, w: jnp.sum(jnp.mean(a, axis=0, where=w))))

g.case("grad_partition", "grad_partition", [PA], jax.grad(lambda a: jnp.sum(jnp.partition(a, 2) * jnp.arange(6.0))))

# cumulative_sum promotes integers narrower than the default int (cumulative_prod does
# not); dtype=bool converts to bool, accumulates in int and returns bool
for dt in ("int8", "uint16", "bool"):
    V = arr([[1, 0, 2], [3, 1, 0]], dt) if dt != "bool" else B
    g.case(f"cumulative_sum_promote_{dt}", "cumulative_sum", [V], lambda x: jnp.cumulative_sum(x, axis=1), "axis=1")
    g.case(f"cumulative_prod_promote_{dt}", "cumulative_prod", [V], lambda x: jnp.cumulative_prod(x, axis=1), "axis=1")
NEG = arr([[1, -1, 0], [0, 0, 2]], "int32")
g.case("cumulative_sum_to_bool", "cumulative_sum", [NEG], lambda x: jnp.cumulative_sum(x, axis=1, dtype=bool),
       "axis=1 dtype=bool")
g.case("cumulative_prod_to_bool", "cumulative_prod", [NEG], lambda x: jnp.cumulative_prod(x, axis=1, dtype=bool),
       "axis=1 dtype=bool")
g.case("cumulative_sum_int8_to_int16", "cumulative_sum", [arr([100, 100, 100], "int8")],
       lambda x: jnp.cumulative_sum(x, dtype=jnp.int16, include_initial=True), "dtype=int16 include_initial=1")

golden_io.write(OUT, "# Generated by tools/golden_numpy_more.py -- do not edit.\n", g.CASES, sep="\n")
