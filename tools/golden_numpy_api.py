#!/usr/bin/env python3
"""golden_numpy_api.py -- writes tests/golden/numpy_api.txt: JAX's results for jax.numpy
edge cases the other golden files leave out -- zero-size arrays through sorting, scans,
quantiles, unique (and unique(axis=)), nonzero, histogram (edges arrays, histogram2d,
histogramdd), searchsorted(sorter=), take(mode="wrap"), einsum, pad and the movement functions; clip with
weak bounds; split at indices past the end; median / quantile of ints; diff with n past the
length; cumsum of small ints (overflow after promotion); and bincount, select, meshgrid,
array_split and pad's other modes -- plus gradients (param grad=1: the output is
d sum(f(x)^2)/2 / d x[0]). Read by tests/lib/test_numpy_api.c, which runs every case eagerly,
under jit and under vmap (each input stacked twice along a new axis 0).
Format: tests/support/golden.h; params as in golden_reduce_movement.py.

Run:  python3 tools/golden_numpy_api.py  (jax_enable_x64 off)"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import golden_io  # noqa: E402
import golden_reduce_movement as g  # noqa: E402

g.CASES.clear()
if os.environ.get("GOLDEN_EXPLORE"):  # report every mismatch of expectations, keep going
    _case = g.case

    def _soft(*a, **k):
        try:
            _case(*a, **k)
        except AssertionError as e:
            print("EXPLORE:", e)
    g.case = _soft
NAN, INF = float("nan"), float("inf")
OUT = golden_io.path("numpy_api.txt")
arr = g.arr


def f32(v, shape=None):
    return arr(v, "float32", shape)


def i32(v, shape=None):
    return arr(v, "int32", shape)


E = f32([]).reshape(0)
E23 = f32(np.zeros((2, 0, 3)))
X = f32([3.0, -1.0, NAN, 2.0, -0.0, 0.0, 7.0, -INF, 2.0], (3, 3))
XC = f32([1.5, -2.0, 3.25, 0.5, 4.0, -1.0, 2.5, 0.0, 6.0, -3.0, 1.0, 2.0], (3, 4))


def raises(f):
    """f, with any exception JAX raises reported as the ValueError g.case records."""
    def call(*a):
        try:
            return f(*a)
        except Exception as e:
            raise ValueError(repr(e))
    return call


def ramp(y):
    """y * arange(y.size) in y's shape: makes a gradient see where each output came from."""
    return y * jnp.arange(y.size, dtype=y.dtype).reshape(y.shape)


def grad_case(name, fn, ins, f, params=""):
    """d sum(f(x)^2)/2 / d x[0]: the C test differentiates the same loss (with ramp=1 in
    params f's output times ramp, as f applies it)."""
    p = (params + " " if params else "") + "grad=1"
    g.case(name, fn, ins, lambda *a: jax.grad(lambda x0, *r: 0.5 * jnp.sum(f(x0, *r) ** 2))(*a), p)


# ---------------------------------------------------------------- sorting, zero-size
for nm, x in [("empty", E), ("e23", E23)]:
    for ax in (0, -1):
        if x.ndim == 1 and ax == 0:
            continue
        g.case(f"sort_{nm}_{ax}", "sort", [x], lambda x, ax=ax: jnp.sort(x, axis=ax), f"axis={ax}")
        g.case(f"argsort_{nm}_{ax}", "argsort", [x], lambda x, ax=ax: jnp.argsort(x, axis=ax), f"axis={ax}")
        g.case(f"cumsum_{nm}_{ax}", "cumsum", [x], lambda x, ax=ax: jnp.cumsum(x, axis=ax), f"axis={ax}")
        g.case(f"cumprod_{nm}_{ax}", "cumprod", [x], lambda x, ax=ax: jnp.cumprod(x, axis=ax), f"axis={ax}")
        g.case(f"nancumsum_{nm}_{ax}", "nancumsum", [x], lambda x, ax=ax: jnp.nancumsum(x, axis=ax), f"axis={ax}")
        g.case(f"diff_{nm}_{ax}", "diff", [x], lambda x, ax=ax: jnp.diff(x, axis=ax), f"axis={ax} n=1")
        g.case(f"flip_{nm}_{ax}", "flip", [x], lambda x, ax=ax: jnp.flip(x, axis=ax), f"axis={ax}")
        g.case(f"roll_{nm}_{ax}", "roll", [x], lambda x, ax=ax: jnp.roll(x, 2, axis=ax), f"axis={ax} shift=2")
g.case("argsort_desc_ties", "argsort", [i32([2, 1, 2, 3, 1, 2])],
       lambda x: jnp.argsort(x, descending=True), "axis=-1 descending=1")
g.case("argsort_desc_nan", "argsort", [f32([0.0, NAN, -0.0, 1.0, NAN, -INF])],
       lambda x: jnp.argsort(x, descending=True), "axis=-1 descending=1")
g.case("sort_desc_u8", "sort", [arr([3, 255, 0, 7, 128], "uint8")],
       lambda x: jnp.sort(x, descending=True), "axis=-1 descending=1")
g.case("lexsort_empty", "lexsort", [E, E], lambda a, b: jnp.lexsort([a, b]), "axis=-1")
g.case("partition_neg_kth", "partition", [f32([5.0, 1.0, 4.0, 2.0, 3.0])],
       lambda x: jnp.partition(x, -2), "kth=-2 axis=-1")

# ---------------------------------------------------------------- scans of small ints
I8 = arr([100, 100, 100, -128, 1], "int8")
U8 = arr([200, 100, 7, 0, 255], "uint8")
for nm, x in [("i8", I8), ("u8", U8), ("bool", arr([1, 0, 1, 1], "bool"))]:
    g.case(f"cumsum_{nm}", "cumsum", [x], lambda x: jnp.cumsum(x), "axis=none")
    g.case(f"cumprod_{nm}", "cumprod", [x], lambda x: jnp.cumprod(x), "axis=none")
g.case("cumsum_2d_none", "cumsum", [XC], lambda x: jnp.cumsum(x), "axis=none")
g.case("nancumsum_2d", "nancumsum", [X], lambda x: jnp.nancumsum(x, axis=1), "axis=1")
g.case("nancumprod_2d", "nancumprod", [X], lambda x: jnp.nancumprod(x, axis=0), "axis=0")

# ---------------------------------------------------------------- diff
V = f32([1.0, 4.0, 9.0, 16.0])
for n in (0, 3, 4, 6):
    g.case(f"diff_n{n}", "diff", [V], lambda x, n=n: jnp.diff(x, n=n), f"axis=-1 n={n}")
g.case("diff_u8", "diff", [arr([5, 3, 10], "uint8")], lambda x: jnp.diff(x), "axis=-1 n=1")
g.case("diff_i8_n2", "diff", [I8], lambda x: jnp.diff(x, n=2), "axis=-1 n=2")

# ---------------------------------------------------------------- quantiles / medians
MI = i32([7, 1, 4, 3, 9, 2], (2, 3))
g.case("median_int", "median", [MI], lambda x: jnp.median(x), "axis=none")
g.case("median_int_ax1", "median", [MI], lambda x: jnp.median(x, axis=1), "axis=1")
g.case("median_even_kd", "median", [XC], lambda x: jnp.median(x, axis=1, keepdims=True), "axis=1 keepdims=1")
g.case("median_nan", "median", [X], lambda x: jnp.median(x, axis=0), "axis=0")
g.case("median_bool", "median", [arr([1, 0, 1, 1], "bool")], lambda x: jnp.median(x), "axis=none")
g.case("quantile_int_q", "quantile", [MI, f32([0.0, 0.25, 1.0])], lambda x, q: jnp.quantile(x, q, axis=1), "axis=1")
g.case("quantile_f16", "quantile", [XC.astype("float16"), arr(0.3, "float16")],
       lambda x, q: jnp.quantile(x, q, axis=0), "axis=0")
g.case("percentile_2d_q", "percentile", [XC, f32([[10.0, 50.0], [90.0, 100.0]])],
       lambda x, q: jnp.percentile(x, q, axis=1), "axis=1", err="JX_ERR_SHAPE")
for m in ("linear", "lower", "higher", "midpoint", "nearest"):
    g.case(f"quantile_m_{m}", "quantile", [XC, f32([0.0, 0.1, 0.5, 0.55, 0.9, 1.0])],
           lambda x, q, m=m: jnp.quantile(x, q, axis=1, method=m), f"axis=1 method={m}")
    g.case(f"percentile_m_{m}", "percentile", [XC, f32([15.0, 62.5])],
           lambda x, q, m=m: jnp.percentile(x, q, method=m), f"axis=none method={m}")
    g.case(f"quantile_m_{m}_nan", "quantile", [X, f32([0.5])],
           lambda x, q, m=m: jnp.quantile(x, q, axis=1, method=m), f"axis=1 method={m}")
grad_case("grad_quantile", "quantile", [XC, f32([0.3, 0.5])], lambda x, q: jnp.quantile(x, q, axis=1), "axis=1")
grad_case("grad_median", "median", [XC], lambda x: jnp.median(x, axis=0), "axis=0")

# ---------------------------------------------------------------- nan reductions, zero-size
for fn in ("nansum", "nanprod", "nanmean"):
    g.case(f"{fn}_empty", fn, [E23], lambda x, fn=fn: getattr(jnp, fn)(x, axis=1), "axes=1 keepdims=0")
g.case("nanmax_empty", "nanmax", [E23], lambda x: jnp.nanmax(x, axis=1), "axes=1 keepdims=0", err="JX_ERR_VALUE")
g.case("nanmax_empty_ok", "nanmax", [E23], lambda x: jnp.nanmax(x, axis=2), "axes=2 keepdims=0")
g.case("nanvar_empty", "nanvar", [E23], lambda x: jnp.nanvar(x, axis=1), "axes=1 keepdims=0 ddof=0")
grad_case("grad_nansum", "nansum", [X], lambda x: jnp.nansum(x, axis=1), "axes=1 keepdims=0")
grad_case("grad_nanmean", "nanmean", [X], lambda x: jnp.nanmean(x, axis=0), "axes=0 keepdims=0")
grad_case("grad_nanmax", "nanmax", [f32([1.0, NAN, 3.0, 3.0, -2.0], (5,))], lambda x: jnp.nanmax(x), "keepdims=0")

# ---------------------------------------------------------------- clip, where, round
CI = i32([-5, 0, 3, 9, 12])
g.case("clip_int_weak_float", "clip", [CI, 1.5, 8.5], lambda x, a, b: jnp.clip(x, a, b))
g.case("clip_int_weak_int", "clip", [arr([-5, 0, 3, 9, 12], "int8"), 1, 8], lambda x, a, b: jnp.clip(x, a, b))
g.case("clip_lo_gt_hi", "clip", [f32([1.0, 5.0, 9.0]), 6.0, 2.0], lambda x, a, b: jnp.clip(x, a, b))
g.case("clip_nan_bound", "clip", [f32([1.0, NAN, 9.0]), f32(NAN), f32(5.0)], lambda x, a, b: jnp.clip(x, a, b))
g.case("clip_lo_only", "clip_lo", [XC, f32([0.0, 1.0, 2.0, 3.0])], lambda x, a: jnp.clip(x, a, None))
g.case("clip_hi_only", "clip_hi", [XC, 2.0], lambda x, b: jnp.clip(x, None, b))
g.case("clip_none", "clip_none", [XC], lambda x: jnp.clip(x))
g.case("clip_u8_neg", "clip", [U8, -3, 150], lambda x, a, b: jnp.clip(x, a, b))
grad_case("grad_clip", "clip", [f32([-2.0, 0.0, 1.0, 3.0, 5.0]), f32(0.0), f32(3.0)],
          lambda x, a, b: jnp.clip(x, a, b))
g.case("where_nan_cond", "where", [f32([NAN, 0.0, -0.0, 2.0]), 1, 2.5], lambda c, a, b: jnp.where(c, a, b))
g.case("where_weak_ints", "where", [arr([1, 0, 1], "bool"), 1, 2], lambda c, a, b: jnp.where(c, a, b))
g.case("where_i8_weak", "where", [arr([1, 0, 1], "bool"), arr([1, 2, 3], "int8"), 7],
       lambda c, a, b: jnp.where(c, a, b))
g.case("where_u32_i32", "where", [arr([1, 0], "bool"), arr([1, 2], "uint32"), i32([-1, -2])],
       lambda c, a, b: jnp.where(c, a, b))
g.case("where_empty", "where", [arr(np.zeros((0, 2)), "bool"), E.reshape(0, 1), 3.0],
       lambda c, a, b: jnp.where(c, a, b))
g.case("round_int_0", "round", [CI], lambda x: jnp.round(x), "decimals=0")
g.case("round_bigdec", "round", [f32([1.23456789, 123456.7, 1e-5])], lambda x: jnp.round(x, 7), "decimals=7")
g.case("round_neg_dec", "round", [f32([1250.0, 1350.0, -1250.0, 15.0])], lambda x: jnp.round(x, -2), "decimals=-2")

# ---------------------------------------------------------------- split, stack, concatenate
A7 = f32(np.arange(7.0))
# JAX refuses indices past the end or descending ("Sizes passed to split must be nonnegative")
g.case("split_idx_past_end", "split_indices", [A7], lambda x: jnp.split(x, [3, 10]), "indices=3,10 axis=0",
       err="JX_ERR_SHAPE")
g.case("split_idx_desc", "split_indices", [A7], lambda x: jnp.split(x, [5, 2]), "indices=5,2 axis=0",
       err="JX_ERR_SHAPE")
g.case("split_idx_neg", "split_indices", [A7], lambda x: jnp.split(x, [-2]), "indices=-2 axis=0",
       err="JX_ERR_SHAPE")
g.case("split_empty3", "split", [E23], lambda x: jnp.split(x, 3, axis=2), "sections=3 axis=2")
g.case("split_0sec_empty", "split", [E23], lambda x: jnp.split(x, 5, axis=1), "sections=5 axis=1")
for sec in (3, 5, 9):
    g.case(f"array_split_{sec}", "array_split", [A7], lambda x, sec=sec: jnp.array_split(x, sec), f"sections={sec} axis=0")
g.case("array_split_2d", "array_split", [XC], lambda x: jnp.array_split(x, 3, axis=1), "sections=3 axis=1")
g.case("array_split_bad", "array_split", [A7], raises(lambda x: jnp.array_split(x, 0)), "sections=0 axis=0",
       err="JX_ERR_VALUE")  # JAX: ZeroDivisionError
g.case("concat_0d", "concatenate", [f32(1.0), f32(2.0)], lambda a, b: jnp.concatenate([a, b]), "axis=0",
       err="JX_ERR_SHAPE")
g.case("concat_empties", "concatenate", [E, i32([1, 2]), E], lambda a, b, c: jnp.concatenate([a, b, c]), "axis=0")
g.case("stack_empty", "stack", [E23, E23], lambda a, b: jnp.stack([a, b], axis=-2), "axis=-2")
g.case("stack_shape_bad", "stack", [E, V], lambda a, b: jnp.stack([a, b]), "axis=0", err="JX_ERR_SHAPE")

# ---------------------------------------------------------------- tri, rot90, roll, flip
g.case("tril_1d", "tril", [V], lambda x: jnp.tril(x), "k=0", err="JX_ERR_SHAPE")
g.case("triu_3d", "triu", [f32(np.arange(24.0), (2, 3, 4))], lambda x: jnp.triu(x, -1), "k=-1")
g.case("tril_empty", "tril", [E23], lambda x: jnp.tril(x, 1), "k=1")
C3 = f32(np.arange(24.0), (2, 3, 4))
for k in (-1, 2, 5, -6):
    g.case(f"rot90_k{k}_12", "rot90", [C3], lambda x, k=k: jnp.rot90(x, k, axes=(1, 2)), f"k={k} a0=1 a1=2")
g.case("rot90_k1_20", "rot90", [C3], lambda x: jnp.rot90(x, 1, axes=(2, 0)), "k=1 a0=2 a1=0")
g.case("rot90_same", "rot90", [C3], lambda x: jnp.rot90(x, 1, axes=(1, 1)), "k=1 a0=1 a1=1", err="JX_ERR_SHAPE")
g.case("roll_big_neg", "roll", [C3], lambda x: jnp.roll(x, -100, axis=-1), "shift=-100 axis=-1")
g.case("flip_neg_axis", "flip", [C3], lambda x: jnp.flip(x, axis=-2), "axis=-2")
g.case("flip_bad_axis", "flip", [C3], lambda x: jnp.flip(x, axis=3), "axis=3", err="JX_ERR_SHAPE")
g.case("roll_bad_axis", "roll", [C3], lambda x: jnp.roll(x, 1, axis=-4), "shift=1 axis=-4", err="JX_ERR_SHAPE")
grad_case("grad_rot90", "rot90", [C3], lambda x: ramp(jnp.rot90(x, 1, axes=(1, 2))), "k=1 a0=1 a1=2 ramp=1")

# ---------------------------------------------------------------- meshgrid, select, bincount
for ind in ("xy", "ij"):
    g.case(f"meshgrid_{ind}", "meshgrid", [f32([1.0, 2.0, 3.0]), i32([10, 20])],
           lambda a, b, ind=ind: jnp.meshgrid(a, b, indexing=ind), f"indexing={ind}")
    g.case(f"meshgrid3_{ind}", "meshgrid", [f32([1.0, 2.0]), i32([10, 20, 30]), f32([5.0, 6.0, 7.0, 8.0])],
           lambda a, b, c, ind=ind: jnp.meshgrid(a, b, c, indexing=ind), f"indexing={ind}")
g.case("meshgrid_one", "meshgrid", [f32([1.0, 2.0])], lambda a: jnp.meshgrid(a), "indexing=xy")
g.case("meshgrid_sparse", "meshgrid", [f32([1.0, 2.0, 3.0]), i32([10, 20]), arr([1, 0], "bool")],
       lambda a, b, c: jnp.meshgrid(a, b, c, sparse=True), "indexing=xy sparse=1")
g.case("meshgrid_weak", "meshgrid", [f32([1.0, 2.0]), 3.0], lambda a, b: jnp.meshgrid(a, b), "indexing=xy",
       err="JX_ERR_SHAPE")
g.case("meshgrid_2d_in", "meshgrid", [XC, V], lambda a, b: jnp.meshgrid(a, b), "indexing=xy", err="JX_ERR_SHAPE")
SC = [arr([1, 0, 0, 0], "bool"), arr([1, 1, 0, 0], "bool"), f32([1.0, 2.0, 3.0, 4.0]), f32([10.0, 20.0, 30.0, 40.0])]
g.case("select_2", "select", SC, lambda c0, c1, a, b: jnp.select([c0, c1], [a, b], -1.0), "default=-1.0")
g.case("select_bcast", "select",
       [arr([[1], [0]], "bool"), arr([0, 1, 0], "bool"), i32([1, 2, 3]), i32(7)],
       lambda c0, c1, a, b: jnp.select([c0, c1], [a, b], 0), "default=0")
g.case("select_nonbool", "select", [i32([1, 0]), arr([1, 1], "bool"), f32([1.0, 2.0]), f32([3.0, 4.0])],
       lambda c0, c1, a, b: jnp.select([c0, c1], [a, b]), "default=0")
BI = i32([0, 1, 1, 3, 2, 1, 7])
g.case("bincount", "bincount", [BI], lambda x: jnp.bincount(x), "length=-1 minlength=0")
g.case("bincount_len", "bincount", [BI], lambda x: jnp.bincount(x, length=5), "length=5 minlength=0")
g.case("bincount_minlen", "bincount", [BI], lambda x: jnp.bincount(x, minlength=10), "length=-1 minlength=10")
g.case("bincount_w", "bincount", [BI, f32([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5])],
       lambda x, w: jnp.bincount(x, w, length=8), "length=8 minlength=0")
g.case("bincount_neg", "bincount", [i32([-1, 0, 2, -5])], lambda x: jnp.bincount(x, length=3), "length=3 minlength=0")
g.case("bincount_empty", "bincount", [arr([], "int32")], lambda x: jnp.bincount(x, length=3), "length=3 minlength=0")
g.case("bincount_u8", "bincount", [arr([3, 3, 0], "uint8")], lambda x: jnp.bincount(x, length=4), "length=4 minlength=0")
g.case("bincount_bool", "bincount", [arr([1, 0, 1], "bool")], lambda x: jnp.bincount(x, length=3), "length=3 minlength=0")
g.case("bincount_minlen_len", "bincount", [BI], lambda x: jnp.bincount(x, minlength=10, length=4), "length=4 minlength=10")
g.case("bincount_float", "bincount", [f32([1.0, 2.0])], lambda x: jnp.bincount(x, length=3), "length=3 minlength=0",
       err="JX_ERR_DTYPE")
g.case("bincount_2d", "bincount", [i32([[1, 2]])], lambda x: jnp.bincount(x, length=3), "length=3 minlength=0",
       err="JX_ERR_SHAPE")
g.case("bincount_w_int", "bincount", [BI, arr([1, 2, 3, 4, 5, 6, 7], "int8")],
       lambda x, w: jnp.bincount(x, w, length=8), "length=8 minlength=0")
g.case("bincount_w_bool", "bincount", [BI, arr([1, 0, 1, 1, 0, 1, 1], "bool")],
       lambda x, w: jnp.bincount(x, w, length=8), "length=8 minlength=0", err="JX_ERR_DTYPE")

# ---------------------------------------------------------------- pad modes
P = f32([1.0, 2.0, 4.0, 7.0, 11.0])
P2 = f32(np.arange(12.0) ** 1.5, (3, 4))
PI = i32([1, 2, 4, 7], (2, 2))
for mode in ("edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "median", "linear_ramp", "empty"):
    for nm, x, pw in [("1d", P, [(2, 3)]), ("1d_big", P, [(7, 11)]), ("2d", P2, [(1, 2), (3, 0)]),
                      ("int", PI, [(1, 1), (2, 3)])]:
        if mode == "empty":
            continue  # the padding's values are unspecified
        flat = ",".join(str(v) for p in pw for v in p)
        g.case(f"pad_{mode}_{nm}", "pad_mode", [x], lambda x, mode=mode, pw=pw: jnp.pad(x, pw, mode=mode),
               f"mode={mode} pad={flat}")
g.case("pad_constant_pairs", "pad_mode", [P2], lambda x: jnp.pad(x, [(1, 2), (3, 0)], constant_values=((-1, -2), (-3, -4))),
       "mode=constant pad=1,2,3,0 cv=-1,-2,-3,-4")
g.case("pad_ramp_end", "pad_mode", [P2], lambda x: jnp.pad(x, [(2, 1), (1, 3)], mode="linear_ramp", end_values=((5, -5), (0, 10))),
       "mode=linear_ramp pad=2,1,1,3 ev=5,-5,0,10")
g.case("pad_ramp_int", "pad_mode", [PI], lambda x: jnp.pad(x, [(3, 1), (0, 2)], mode="linear_ramp", end_values=9),
       "mode=linear_ramp pad=3,1,0,2 ev=9,9,9,9")
g.case("pad_reflect_odd", "pad_mode", [P], lambda x: jnp.pad(x, [(3, 2)], mode="reflect", reflect_type="odd"),
       "mode=reflect pad=3,2 odd=1")
g.case("pad_symmetric_odd", "pad_mode", [P], lambda x: jnp.pad(x, [(3, 6)], mode="symmetric", reflect_type="odd"),
       "mode=symmetric pad=3,6 odd=1")
g.case("pad_reflect_len1", "pad_mode", [f32([5.0])], lambda x: jnp.pad(x, [(2, 3)], mode="reflect"), "mode=reflect pad=2,3")
g.case("pad_wrap_empty", "pad_mode", [E23], lambda x: jnp.pad(x, [(0, 0), (0, 0), (1, 1)], mode="wrap"),
       "mode=wrap pad=0,0,0,0,1,1")
g.case("pad_edge_emptyaxis", "pad_mode", [E23], lambda x: jnp.pad(x, [(0, 0), (1, 1), (0, 0)], mode="edge"),
       "mode=edge pad=0,0,1,1,0,0", err="JX_ERR_VALUE")
g.case("pad_stat_len", "pad_mode", [P2], lambda x: jnp.pad(x, [(2, 1), (1, 2)], mode="mean", stat_length=((2, 1), (3, 2))),
       "mode=mean pad=2,1,1,2 sl=2,1,3,2")
for mode in ("edge", "wrap", "reflect", "symmetric", "mean", "linear_ramp", "maximum"):
    grad_case(f"grad_pad_{mode}", "pad_mode", [P2], lambda x, mode=mode: ramp(jnp.pad(x, [(2, 1), (1, 3)], mode=mode)), f"mode={mode} pad=2,1,1,3 ramp=1")

# ---------------------------------------------------------------- unique, nonzero, histogram, digitize
g.case("unique_empty_size", "unique", [E, f32(-1.0)],
       lambda x, fv: jnp.unique(x, size=3, fill_value=fv, return_index=True, return_inverse=True, return_counts=True),
       "size=3 fill=1")
g.case("argwhere_empty", "argwhere", [E23.astype(bool)], lambda x: jnp.argwhere(x, size=2), "size=2")
g.case("argwhere_fill", "argwhere", [XC > 2], lambda x: jnp.argwhere(x, size=5, fill_value=-1), "size=5 fill=-1")
g.case("argwhere_empty_fill", "argwhere", [E23], lambda x: jnp.argwhere(x, size=2, fill_value=-1), "size=2 fill=-1")
g.case("nonzero_empty", "nonzero", [E23], lambda x: jnp.nonzero(x, size=2, fill_value=7), "size=2 fill=7")
g.case("histogram_empty", "histogram", [E], lambda x: jnp.histogram(x, bins=3, range=(0.0, 1.0)), "bins=3 range=0,1")
g.case("histogram_nan", "histogram", [f32([0.5, NAN, 1.0, 0.0, 2.0])], lambda x: jnp.histogram(x, bins=2, range=(0.0, 1.0)),
       "bins=2 range=0,1")
g.case("digitize_desc", "digitize", [f32([-1.0, 0.0, 1.5, 3.0, 5.0, NAN]), f32([4.0, 3.0, 1.0, 0.0])],
       lambda x, b: jnp.digitize(x, b), "right=0")
g.case("digitize_desc_right", "digitize", [f32([-1.0, 0.0, 1.5, 3.0, 5.0, NAN]), f32([4.0, 3.0, 1.0, 0.0])],
       lambda x, b: jnp.digitize(x, b, right=True), "right=1")
g.case("digitize_empty_bins", "digitize", [f32([1.0, 2.0]), E], lambda x, b: jnp.digitize(x, b), "right=0")
g.case("searchsorted_2d_v_empty_a", "searchsorted", [i32([]), i32([[1, 2], [3, 4]])],
       lambda a, v: jnp.searchsorted(a, v, side="right"), "side=right")

# ---------------------------------------------------------------- take / at / einsum, zero-size and oob
g.case("take_along_empty", "take_along", [E23, i32(np.zeros((2, 0, 1)))],
       lambda x, i: jnp.take_along_axis(x, i, axis=2), "axis=2 mode=fill")
g.case("take_along_clip_neg", "take_along", [XC, i32([[-9, 5, 0]] * 3)],
       lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="clip"), "axis=1 mode=clip")
g.case("take_along_clip_empty_axis", "take_along", [E23, i32(np.zeros((2, 1, 3)))],
       lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="clip"), "axis=1 mode=clip")
g.case("at_add_dups_oob", "at_add", [f32([1.0, 2.0, 3.0]), i32([0, 0, 3, -1, -4, 2, -3]), f32([1, 2, 4, 8, 16, 32, 64])],
       lambda x, i, y: x.at[i].add(y), "axis=0 mode=fill")
g.case("at_add_dups_clip", "at_add", [f32([1.0, 2.0, 3.0]), i32([0, 0, 3, -1, -4, 2, -3]), f32([1, 2, 4, 8, 16, 32, 64])],
       lambda x, i, y: x.at[i].add(y, mode="clip"), "axis=0 mode=clip")
g.case("at_set_i8_wrap", "at_set", [arr([1, 2, 3], "int8"), i32([1]), 300], lambda x, i, y: x.at[i].set(y),
       "axis=0 mode=fill")
g.case("at_mul_empty", "at_mul", [E23, i32([0, 1]), 2.0], lambda x, i, y: x.at[i].multiply(y), "axis=0 mode=fill")
g.case("at_max_nan", "at_max", [f32([1.0, NAN, 3.0]), i32([0, 1, 2, 0]), f32([NAN, 5.0, 1.0, 2.0])],
       lambda x, i, y: x.at[i].max(y), "axis=0 mode=fill")
g.case("at_min_u8", "at_min", [U8, i32([0, 0, 4]), arr([7, 3, 9], "uint8")], lambda x, i, y: x.at[i].min(y),
       "axis=0 mode=fill")
g.case("at_get_clip", "at_get", [XC, i32([-7, 0, 3, 9])], lambda x, i: x.at[i].get(mode="clip"), "axis=0 mode=clip")
g.case("take_clip_u8_idx", "at_get", [XC, arr([0, 2, 200], "uint8")], lambda x, i: jnp.take(x, i, axis=1, mode="clip"),
       "axis=1 mode=clip")
g.case("take_clip_u8_long", "at_get", [f32(np.arange(300.0)), arr([0, 254, 255], "uint8")],
       lambda x, i: jnp.take(x, i, mode="clip"), "axis=0 mode=clip")
g.case("take_clip_i8_long", "at_get", [f32(np.arange(300.0)), arr([-128, 5, 127], "int8")],
       lambda x, i: jnp.take(x, i, mode="clip"), "axis=0 mode=clip")
g.case("take_clip_flat", "at_get", [XC, i32([[-1, 30], [-30, 5]])], lambda x, i: jnp.take(x, i, mode="clip"),
       "axis=none mode=clip")
g.case("at_get_fill", "at_get", [XC, i32([-7, 0, -3, 3])], lambda x, i: x.at[i].get(mode="fill", fill_value=-9.0),
       "axis=0 mode=fill fill=-9")
grad_case("grad_at_add_dups", "at_add", [f32([1.0, 2.0, 3.0]), i32([0, 0, 2]), f32([1.0, 2.0, 3.0])],
          lambda x, i, y: x.at[i].add(y), "axis=0 mode=fill")
g.case("einsum_zero_dim", "einsum", [E23, f32(np.ones((3, 4)))], lambda a, b: jnp.einsum("ijk,kl->ijl", a, b),
       "subs=ijk,kl->ijl")
g.case("einsum_zero_contract", "einsum", [E23, f32(np.ones((0, 5)))], lambda a, b: jnp.einsum("ijk,jl->ikl", a, b),
       "subs=ijk,jl->ikl")
g.case("einsum_i8", "einsum", [arr([100, 100, 3], "int8"), arr([2, 1, 1], "int8")],
       lambda a, b: jnp.einsum("i,i->", a, b), "subs=i,i->")
g.case("einsum_ellipsis_bcast", "einsum", [f32(np.arange(6.0), (2, 1, 3)), f32(np.arange(12.0), (4, 3))],
       lambda a, b: jnp.einsum("...i,...i->...", a, b), "subs=...i,...i->...")
g.case("einsum_trace_batch", "einsum", [C3.reshape(2, 3, 4)[:, :, :3]], lambda a: jnp.einsum("bii->b", a), "subs=bii->b")
g.case("einsum_outer3", "einsum", [f32([1.0, 2.0]), f32([3.0, 4.0, 5.0]), f32([-1.0, 1.0])],
       lambda a, b, c: jnp.einsum("i,j,k->kji", a, b, c), "subs=i,j,k->kji")
g.case("einsum_mixed_i_f", "einsum", [i32([1, 2, 3]), f32([0.5, 0.25, 2.0])], lambda a, b: jnp.einsum("i,i", a, b),
       "subs=i,i")
grad_case("grad_einsum_trace", "einsum", [f32(np.arange(9.0), (3, 3))], lambda a: jnp.einsum("ii->i", a), "subs=ii->i")
grad_case("grad_einsum_rep", "einsum", [f32(np.arange(8.0), (2, 2, 2)), f32([1.0, -1.0])],
          lambda a, b: jnp.einsum("iij,j->ij", a, b), "subs=iij,j->ij")


# ---------------------------------------------------------------- more gradients
CZ = f32([2.0, 0.0, 3.0, -1.0, 0.0, 4.0], (2, 3))
grad_case("grad_cumprod_zeros", "cumprod", [CZ], lambda x: jnp.cumprod(x, axis=1), "axis=1")
grad_case("grad_cumprod_one_zero", "cumprod", [f32([2.0, 0.0, 3.0, 5.0])], lambda x: jnp.cumprod(x), "axis=-1")
grad_case("grad_cumsum_none", "cumsum", [CZ], lambda x: jnp.cumsum(x), "axis=none")
grad_case("grad_nancumsum", "nancumsum", [f32([1.0, NAN, 2.0, 3.0])], lambda x: jnp.nancumsum(x), "axis=-1")
grad_case("grad_sort_ties", "sort", [f32([3.0, 1.0, 3.0, -2.0, 1.0])], lambda x: ramp(jnp.sort(x)), "axis=-1 ramp=1")
grad_case("grad_sort_desc", "sort", [XC], lambda x: jnp.sort(x, axis=0, descending=True), "axis=0 descending=1")
grad_case("grad_diff2", "diff", [f32([1.0, 4.0, 9.0, 16.0, 30.0])], lambda x: jnp.diff(x, n=2), "axis=-1 n=2")
grad_case("grad_roll", "roll", [XC], lambda x: ramp(jnp.roll(x, 5)), "shift=5 axis=none ramp=1")
grad_case("grad_take_along_clip", "take_along", [XC, i32([[0, 0, 5], [1, -9, 2], [3, 3, 3]])],
          lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="clip"), "axis=1 mode=clip")
grad_case("grad_take_along_fill", "take_along", [XC, i32([[0, 0, 5], [1, -9, 2], [3, -1, 3]])],
          lambda x, i: jnp.take_along_axis(x, i, axis=1), "axis=1 mode=fill")
grad_case("grad_at_set_dups", "at_set", [f32([1.0, 2.0, 3.0]), i32([0, 0, 2, 5]), f32([1.0, 2.0, 3.0, 4.0])],
          lambda x, i, y: x.at[i].set(y), "axis=0 mode=fill")
grad_case("grad_at_mul", "at_mul", [f32([1.0, 2.0, 3.0]), i32([0, 0, 2]), f32([2.0, 3.0, 0.5])],
          lambda x, i, y: x.at[i].multiply(y), "axis=0 mode=fill")
grad_case("grad_at_max_ties", "at_max", [f32([1.0, 2.0, 3.0]), i32([0, 0, 2]), f32([1.0, 1.0, 0.5])],
          lambda x, i, y: x.at[i].max(y), "axis=0 mode=fill")
grad_case("grad_einsum_ellipsis", "einsum", [f32(np.arange(6.0), (2, 1, 3)), f32(np.arange(12.0), (4, 3))],
          lambda a, b: jnp.einsum("...i,...i->...", a, b), "subs=...i,...i->...")
grad_case("grad_percentile_nearest", "percentile", [XC, f32([30.0, 50.0])],
          lambda x, q: jnp.percentile(x, q, axis=1, method="nearest"), "axis=1 method=nearest")
grad_case("grad_bincount_w", "bincount_w0", [f32([0.5, 1.0, 1.5, 2.0]), i32([0, 1, 1, 3])],
          lambda w, x: jnp.bincount(x, w, length=4), "length=4 minlength=0")

# ---------------------------------------------------------------- errors: bad axes, shapes, dtypes
g.case("sort_bad_axis", "sort", [XC], lambda x: jnp.sort(x, axis=2), "axis=2", err="JX_ERR_SHAPE")
g.case("sort_0d", "sort", [f32(1.0)], lambda x: jnp.sort(x, axis=0), "axis=0", err="JX_ERR_SHAPE")
g.case("cumsum_bad_axis", "cumsum", [XC], lambda x: jnp.cumsum(x, axis=-3), "axis=-3", err="JX_ERR_SHAPE")
g.case("diff_neg_n", "diff", [V], lambda x: jnp.diff(x, n=-1), "axis=-1 n=-1", err="JX_ERR_VALUE")
g.case("diff_0d", "diff", [f32(1.0)], lambda x: jnp.diff(x), "axis=-1 n=1", err="JX_ERR_SHAPE")
g.case("median_bad_axis", "median", [XC], lambda x: jnp.median(x, axis=2), "axis=2", err="JX_ERR_SHAPE")
g.case("nansum_bad_axis", "nansum", [XC], lambda x: jnp.nansum(x, axis=5), "axes=5 keepdims=0", err="JX_ERR_SHAPE")
g.case("take_along_bad_axis", "take_along", [XC, i32([[0]])], lambda x, i: jnp.take_along_axis(x, i, axis=3),
       "axis=3 mode=fill", err="JX_ERR_SHAPE")
g.case("take_along_float_idx", "take_along", [XC, f32([[0.0]])], lambda x, i: jnp.take_along_axis(x, i, axis=1),
       "axis=1 mode=fill", err="JX_ERR_DTYPE")
g.case("at_add_float_idx", "at_add", [V, f32([0.0]), f32([1.0])], lambda x, i, y: x.at[i].add(y),
       "axis=0 mode=fill", err="JX_ERR_DTYPE")
g.case("at_add_bad_y", "at_add", [V, i32([0, 1]), f32([1.0, 2.0, 3.0])], lambda x, i, y: x.at[i].add(y),
       "axis=0 mode=fill", err="JX_ERR_SHAPE")
g.case("einsum_count", "einsum", [XC], lambda a: jnp.einsum("ij,jk->ik", a), "subs=ij,jk->ik", err="JX_ERR_VALUE")
g.case("where_bad_shape", "where", [arr([1, 0], "bool"), V, 1.0], lambda c, a, b: jnp.where(c, a, b),
       err="JX_ERR_SHAPE")
g.case("searchsorted_2d_a", "searchsorted", [XC, V], lambda a, v: jnp.searchsorted(a, v), "side=left",
       err="JX_ERR_SHAPE")
g.case("digitize_2d_bins", "digitize", [V, XC], lambda x, b: jnp.digitize(x, b), "right=0", err="JX_ERR_SHAPE")
g.case("lexsort_shapes", "lexsort", [V, A7], lambda a, b: jnp.lexsort([a, b]), "axis=-1", err="JX_ERR_SHAPE")
g.case("partition_bad_kth", "partition", [V], lambda x: jnp.partition(x, 4), "kth=4 axis=-1", err="JX_ERR_VALUE")
g.case("quantile_empty", "quantile", [E, f32(0.5)], lambda x, q: jnp.quantile(x, q), "axis=none",
       err="JX_ERR_VALUE")  # JAX: TypeError from the gather


# ---------------------------------------------------------------- diagonal / trace / tile / repeat corners
g.case("diagonal_3d_20", "diagonal", [C3], lambda x: jnp.diagonal(x, 1, axis1=2, axis2=0), "offset=1 axis1=2 axis2=0")
g.case("diagonal_empty", "diagonal", [E23], lambda x: jnp.diagonal(x, 0, axis1=1, axis2=2), "offset=0 axis1=1 axis2=2")
g.case("trace_i8", "trace", [arr([100, 1, 2, 100], "int8", (2, 2))], lambda x: jnp.trace(x), "offset=0 axis1=0 axis2=1")
g.case("trace_u8", "trace", [arr([200, 1, 2, 200], "uint8", (2, 2))], lambda x: jnp.trace(x), "offset=0 axis1=0 axis2=1")
g.case("trace_bool", "trace", [arr([1, 0, 1, 1], "bool", (2, 2))], lambda x: jnp.trace(x), "offset=0 axis1=0 axis2=1")
g.case("trace_3d_neg", "trace", [C3], lambda x: jnp.trace(x, -1, axis1=-1, axis2=-2), "offset=-1 axis1=-1 axis2=-2")
g.case("trace_same_axis", "trace", [C3], lambda x: jnp.trace(x, 0, axis1=1, axis2=1), "offset=0 axis1=1 axis2=1",
       err="JX_ERR_SHAPE")
grad_case("grad_trace", "trace", [C3], lambda x: jnp.trace(x, 1, axis1=1, axis2=2), "offset=1 axis1=1 axis2=2")
g.case("tile_zero", "tile", [XC], lambda x: jnp.tile(x, (0, 2)), "reps=0,2")
g.case("tile_empty", "tile", [E23], lambda x: jnp.tile(x, (2, 1, 1, 3)), "reps=2,1,1,3")
g.case("repeat_zero", "repeat", [XC], lambda x: jnp.repeat(x, 0, axis=1), "repeats=0 axis=1")
g.case("repeat_empty", "repeat", [E23], lambda x: jnp.repeat(x, 3, axis=2), "repeats=3 axis=2")
g.case("kron_int_float", "kron", [i32([[1, 2], [3, 4]]), f32([0.5, -1.0])], lambda a, b: jnp.kron(a, b))
g.case("kron_empty", "kron", [E23, f32([[1.0, 2.0]])], lambda a, b: jnp.kron(a, b))


# ---------------------------------------------------------------- cov / corrcoef
# inputs: m, then y / fweights / aweights where the params y=1 / fw=1 / aw=1 say so
def cov_case(name, ins, params, f, err=None):
    g.case(name, "cov", ins, raises(f) if err else f, params, err=err)


CM = f32([1.0, 2.5, -0.5, 4.0, 3.0, 0.25, -1.0, 2.0, 5.5, 0.0, 1.5, 2.0], (3, 4))
CY = f32([0.5, -2.0, 1.0, 3.5], (1, 4))
FW = i32([1, 3, 0, 2])
AW = f32([0.5, 1.0, 2.0, -0.25])
cov_case("cov_rows", [CM], "rowvar=1 bias=0 ddof=none", lambda m: jnp.cov(m))
cov_case("cov_cols", [CM], "rowvar=0 bias=0 ddof=none", lambda m: jnp.cov(m, rowvar=False))
cov_case("cov_bias", [CM], "rowvar=1 bias=1 ddof=none", lambda m: jnp.cov(m, bias=True))
cov_case("cov_ddof3", [CM], "rowvar=1 bias=0 ddof=3", lambda m: jnp.cov(m, ddof=3))
cov_case("cov_1d", [f32([1.0, 4.0, 2.0, 8.0])], "rowvar=1 bias=0 ddof=none", lambda m: jnp.cov(m))
cov_case("cov_int", [i32([[1, 4, 2], [3, 0, 7]])], "rowvar=1 bias=0 ddof=none", lambda m: jnp.cov(m))
cov_case("cov_y", [CM, CY], "rowvar=1 bias=0 ddof=none y=1", lambda m, y: jnp.cov(m, y))
cov_case("cov_y_cols", [CM.T, f32([0.5, -2.0, 1.0, 3.5], (4, 1))], "rowvar=0 bias=0 ddof=none y=1",
         lambda m, y: jnp.cov(m, y, rowvar=False))
# JAX promotes m and y as operands of one operation: their shapes must broadcast
cov_case("cov_y_nobcast", [CM.T, f32([0.5, -2.0, 1.0, 3.5])], "rowvar=0 bias=0 ddof=none y=1",
         lambda m, y: jnp.cov(m, y, rowvar=False), err="JX_ERR_SHAPE")
cov_case("cov_fw", [CM, FW], "rowvar=1 bias=0 ddof=none fw=1", lambda m, w: jnp.cov(m, fweights=w))
cov_case("cov_aw", [CM, AW], "rowvar=1 bias=0 ddof=none aw=1", lambda m, w: jnp.cov(m, aweights=w))
cov_case("cov_fw_aw", [CM, FW, AW], "rowvar=1 bias=0 ddof=none fw=1 aw=1",
         lambda m, f, a: jnp.cov(m, fweights=f, aweights=a))
cov_case("cov_fw_aw_bias", [CM, FW, AW], "rowvar=1 bias=1 ddof=none fw=1 aw=1",
         lambda m, f, a: jnp.cov(m, bias=True, fweights=f, aweights=a))
cov_case("cov_no_obs", [f32(np.zeros((2, 0)))], "rowvar=1 bias=0 ddof=none", lambda m: jnp.cov(m))
cov_case("cov_no_obs_1", [f32(np.zeros((1, 0)))], "rowvar=1 bias=0 ddof=none", lambda m: jnp.cov(m))
cov_case("cov_one_obs", [f32([[1.0], [2.0]])], "rowvar=1 bias=0 ddof=none", lambda m: jnp.cov(m))
cov_case("cov_3d", [f32(np.zeros((2, 2, 2)))], "rowvar=1 bias=0 ddof=none", lambda m: jnp.cov(m), err="JX_ERR_VALUE")
cov_case("cov_fw_float", [CM, AW], "rowvar=1 bias=0 ddof=none fw=1", lambda m, w: jnp.cov(m, fweights=w),
         err="JX_ERR_DTYPE")
cov_case("cov_fw_len", [CM, i32([1, 2])], "rowvar=1 bias=0 ddof=none fw=1", lambda m, w: jnp.cov(m, fweights=w),
         err="JX_ERR_SHAPE")
cov_case("cov_aw_2d", [CM, f32(np.ones((2, 4)))], "rowvar=1 bias=0 ddof=none aw=1",
         lambda m, w: jnp.cov(m, aweights=w), err="JX_ERR_SHAPE")
g.case("corrcoef_rows", "corrcoef", [CM], lambda x: jnp.corrcoef(x), "rowvar=1")
g.case("corrcoef_cols", "corrcoef", [CM.T], lambda x: jnp.corrcoef(x, rowvar=False), "rowvar=0")
g.case("corrcoef_y", "corrcoef", [CM, CY], lambda x, y: jnp.corrcoef(x, y), "rowvar=1 y=1")
g.case("corrcoef_1var", "corrcoef", [f32([1.0, 4.0, 2.0])], lambda x: jnp.corrcoef(x), "rowvar=1")
g.case("corrcoef_const", "corrcoef", [f32([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])], lambda x: jnp.corrcoef(x),
       "rowvar=1")

# ---------------------------------------------------------------- x64 (param x64=1)
with jax.enable_x64(True):
    g.case("x64_bincount", "bincount", [arr([0, 2, 2, 5], "int64")], lambda x: jnp.bincount(x, length=4),
           "length=4 minlength=0 x64=1")
    g.case("x64_argsort", "argsort", [jnp.asarray([3.0, 1.0, NAN, -0.0, 0.0], "float64")], lambda x: jnp.argsort(x),
           "axis=-1 x64=1")
    g.case("x64_cumsum_u32", "cumsum", [arr([4000000000, 4000000000], "uint32")], lambda x: jnp.cumsum(x), "axis=-1 x64=1")
    g.case("x64_cumsum_i8", "cumsum", [arr([100, 100], "int8")], lambda x: jnp.cumsum(x), "axis=-1 x64=1")
    g.case("x64_quantile_nearest", "quantile", [jnp.asarray([1.0, 2.0, 3.0, 4.0], "float64"), jnp.asarray([0.5, 1.0 / 3.0], "float64")],
           lambda x, q: jnp.quantile(x, q, method="nearest"), "axis=none method=nearest x64=1")
    g.case("x64_median_i64", "median", [arr([1, 2, 3, 10], "int64")], lambda x: jnp.median(x), "axis=none x64=1")
    g.case("x64_pad_ramp_i64", "pad_mode", [arr([10, 20], "int64")],
           lambda x: jnp.pad(x, [(3, 2)], mode="linear_ramp", end_values=((1, 100),)), "mode=linear_ramp pad=3,2 ev=1,100 x64=1")
    g.case("x64_select_u64_i64", "select", [arr([1, 0, 0], "bool"), arr([0, 1, 0], "bool"), arr([1, 2, 3], "uint64"),
                                            arr([-1, -2, -3], "int64")],
           lambda c0, c1, a, b: jnp.select([c0, c1], [a, b], 0), "default=0 x64=1")
    g.case("x64_argwhere", "argwhere", [arr([[0, 1], [1, 1]], "int32")], lambda x: jnp.argwhere(x, size=4), "size=4 x64=1")
    g.case("x64_take_clip_i64", "at_get", [jnp.asarray([1.0, 2.0, 3.0], "float64"), arr([-5, 1, 2**40], "int64")],
           lambda x, i: jnp.take(x, i, mode="clip"), "axis=0 mode=clip x64=1")
    # sorter gathers as a[sorter] does: int64 entries beyond int32 wrap once, then go to
    # JAX's int32 index dtype before clamping (a[[-2**63, 2**63-1]] is [a[4], a[0]])
    g.case("x64_searchsorted_sorter_i64", "searchsorted_sorter",
           [jnp.asarray([0.0, 1.0, 2.0, 3.0, 4.0], "float64"), jnp.asarray([0.0, 1.0, 2.0, 3.0, 4.0], "float64"),
            arr([-2**63, 2**63 - 1, -2**32 - 1, 2**32 + 1], "int64")],
           lambda a, v, s: jnp.searchsorted(a, v, sorter=s), "side=left x64=1")


# ---------------------------------------------------------------- take(mode="wrap")
g.case("take_wrap", "at_get", [XC, i32([-9, -1, 0, 3, 4, 13])], lambda x, i: jnp.take(x, i, axis=1, mode="wrap"),
       "axis=1 mode=wrap")
g.case("take_wrap_rows", "at_get", [XC, i32([[-4, 7], [2, -2]])], lambda x, i: jnp.take(x, i, axis=0, mode="wrap"),
       "axis=0 mode=wrap")
g.case("take_wrap_flat", "at_get", [XC, i32([-13, 25, 11, -1])], lambda x, i: jnp.take(x, i, mode="wrap"),
       "axis=none mode=wrap")
g.case("take_wrap_i8", "at_get", [XC, arr([-128, 127, -3], "int8")], lambda x, i: jnp.take(x, i, axis=1, mode="wrap"),
       "axis=1 mode=wrap")
g.case("take_wrap_u8", "at_get", [XC, arr([255, 0, 6], "uint8")], lambda x, i: jnp.take(x, i, axis=-1, mode="wrap"),
       "axis=-1 mode=wrap")
g.case("take_wrap_empty_idx", "at_get", [XC, i32([])], lambda x, i: jnp.take(x, i, axis=0, mode="wrap"),
       "axis=0 mode=wrap")
g.case("take_wrap_i8_long", "at_get", [f32(np.arange(300.0)), arr([1, -1], "int8")],
       raises(lambda x, i: jnp.take(x, i, mode="wrap")), "axis=0 mode=wrap", err="JX_ERR_VALUE")  # OverflowError
g.case("take_wrap_empty_axis", "at_get", [E23, i32([1])], lambda x, i: jnp.take(x, i, axis=1, mode="wrap"),
       "axis=1 mode=wrap", err="JX_ERR_SHAPE")
g.case("take_wrap_float_idx", "at_get", [XC, f32([1.0])], raises(lambda x, i: jnp.take(x, i, mode="wrap")),
       "axis=none mode=wrap", err="JX_ERR_DTYPE")
g.case("take_wrap_bad_axis", "at_get", [XC, i32([1])], raises(lambda x, i: jnp.take(x, i, axis=2, mode="wrap")),
       "axis=2 mode=wrap", err="JX_ERR_SHAPE")
g.case("take_along_wrap", "take_along", [XC, i32([[0, 5, -1]] * 3)],
       lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="wrap"), "axis=1 mode=wrap", err="JX_ERR_VALUE")
g.case("at_add_wrap", "at_add", [V, i32([0, 5]), f32([1.0, 2.0])], lambda x, i, y: x.at[i].add(y, mode="wrap"),
       "axis=0 mode=wrap", err="JX_ERR_VALUE")
g.case("at_set_wrap", "at_set", [V, i32([0, 5]), f32([1.0, 2.0])], lambda x, i, y: x.at[i].set(y, mode="wrap"),
       "axis=0 mode=wrap", err="JX_ERR_VALUE")
grad_case("grad_take_wrap", "at_get", [XC, i32([-9, -1, 0, 3, 13])], lambda x, i: jnp.take(x, i, axis=1, mode="wrap"),
          "axis=1 mode=wrap")

# ---------------------------------------------------------------- histograms
HA = f32([0.5, 1.0, 2.0, 3.0, 3.0, -1.0, 5.0, NAN, 2.5, 0.0])
HW = f32([1.0, 2.0, 0.5, 1.5, 1.0, 3.0, 1.0, 2.0, 0.25, 4.0])
HE = f32([0.0, 1.0, 2.0, 3.0])
g.case("histogram_edges", "histogram_edges", [HA, HE], lambda a, b: jnp.histogram(a, b))
g.case("histogram_edges_w", "histogram_edges", [HA, HE, HW], lambda a, b, w: jnp.histogram(a, b, weights=w))
g.case("histogram_edges_density", "histogram_edges", [HA, f32([0.0, 0.5, 2.0, 3.0])],
       lambda a, b: jnp.histogram(a, b, density=True), "density=1")
g.case("histogram_edges_w_density", "histogram_edges", [HA, f32([0.0, 0.5, 2.0, 3.0]), HW],
       lambda a, b, w: jnp.histogram(a, b, weights=w, density=True), "density=1")
g.case("histogram_edges_nonmono", "histogram_edges", [HA, f32([0.0, 3.0, 1.0, 2.0])], lambda a, b: jnp.histogram(a, b))
g.case("histogram_edges_desc", "histogram_edges", [HA, f32([3.0, 2.0, 1.0, 0.0])], lambda a, b: jnp.histogram(a, b))
g.case("histogram_edges_int", "histogram_edges", [i32([1, 2, 3, 3, 7, -2], (2, 3)), i32([0, 2, 4])],
       lambda a, b: jnp.histogram(a, b))
g.case("histogram_edges_f16w", "histogram_edges", [i32([1, 2, 3]), f32([1.0, 2.0, 3.0]), arr([1, 2, 3], "float16")],
       lambda a, b, w: jnp.histogram(a, b, weights=w))
g.case("histogram_edges_one", "histogram_edges", [HA, f32([1.0])], lambda a, b: jnp.histogram(a, b))
g.case("histogram_edges_dups", "histogram_edges", [HA, f32([0.0, 2.0, 2.0, 3.0])], lambda a, b: jnp.histogram(a, b))
g.case("histogram_edges_empty", "histogram_edges", [HA, E], lambda a, b: jnp.histogram(a, b), err="JX_ERR_SHAPE")
g.case("histogram_edges_2d", "histogram_edges", [HA, f32([[0.0, 1.0]])], lambda a, b: jnp.histogram(a, b),
       err="JX_ERR_SHAPE")
g.case("histogram_edges_bad_w", "histogram_edges", [HA, HE, f32([1.0, 2.0])],
       lambda a, b, w: jnp.histogram(a, b, weights=w), err="JX_ERR_SHAPE")
g.case("histogram_bins_w", "histogram", [HA, HW], lambda a, w: jnp.histogram(a, 4, range=(0.0, 4.0), weights=w),
       "bins=4 range=0,4")
g.case("histogram_bins_density", "histogram", [f32([0.5, 1.0, 2.0, 3.0, 3.0, 0.1])],
       lambda a: jnp.histogram(a, 5, density=True), "bins=5 density=1")
g.case("histogram_bins_data", "histogram", [i32([4, 1, 7, 7, 2, 9], (3, 2))], lambda a: jnp.histogram(a, 3), "bins=3")
g.case("histogram_bins_const", "histogram", [f32([2.0, 2.0, 2.0])], lambda a: jnp.histogram(a, 2), "bins=2")
g.case("histogram_bins_0", "histogram", [f32([0.5, 1.5])], lambda a: jnp.histogram(a, 0), "bins=0")
g.case("histogram_bins_neg", "histogram", [f32([0.5, 1.5])], lambda a: jnp.histogram(a, -1), "bins=-1",
       err="JX_ERR_VALUE")
g.case("histogram_range_rev", "histogram", [HA], lambda a: jnp.histogram(a, 3, range=(4.0, 0.0)), "bins=3 range=4,0")
g.case("histogram_bf16", "histogram", [HA.astype("bfloat16")], lambda a: jnp.histogram(a, 3, range=(-1.0, 2.0)),
       "bins=3 range=-1,2")
g.case("histogram_bin_edges_arr", "histogram_bin_edges_array", [HA.astype("float16"), i32([0, 1, 5])],
       lambda a, b: jnp.histogram_bin_edges(a, b))
g.case("histogram_bin_edges_int", "histogram_bin_edges", [i32([1, 2, 3, 9])], lambda a: jnp.histogram_bin_edges(a, 4),
       "bins=4")
g.case("histogram_bin_edges_range", "histogram_bin_edges", [HA], lambda a: jnp.histogram_bin_edges(a, 7, range=(-0.3, 1.1)),
       "bins=7 range=-0.3,1.1")
for nb in (12, 100, 300):  # XLA's linspace kernel, FMAs included: compared with tolerance 0
    g.case(f"histogram_bin_edges_exact_{nb}", "histogram_bin_edges", [f32([-3.27766, 0.5, -6.99441])],
           lambda a, nb=nb: jnp.histogram_bin_edges(a, nb), f"bins={nb}")
grad_case("grad_histogram_w", "histogram_w0", [HW, HA], lambda w, a: jnp.histogram(a, 3, range=(0.0, 3.0), weights=w)[0],
          "bins=3 range=0,3")
grad_case("grad_histogram_edges_w", "histogram_edges_w0", [HW, HA, f32([0.0, 0.5, 2.0, 3.0])],
          lambda w, a, b: jnp.histogram(a, b, weights=w, density=True)[0], "density=1")

HS = f32([0.0, 1.0, 1.0, 2.0, 2.0, 2.0, 0.5, 0.5, 3.0, NAN, -1.0, 1.5], (6, 2))
HS3 = f32(np.array([[0.1, 0.2, 0.3], [0.9, 0.5, 0.1], [0.5, 0.5, 0.5], [1.0, 0.0, 0.7], [0.2, 0.8, 1.0]]))


def hdd(*a, **k):
    h, e = jnp.histogramdd(*a, **k)
    return (h, *e)


g.case("histogramdd", "histogramdd", [HS], lambda s: hdd(s, bins=2), "bins=2,2")
g.case("histogramdd_bins", "histogramdd", [HS], lambda s: hdd(s, bins=[3, 2]), "bins=3,2")
g.case("histogramdd_range", "histogramdd", [HS], lambda s: hdd(s, bins=[2, 4], range=[(0.0, 2.0), None]),
       "bins=2,4 range=0,2,nan,nan")
g.case("histogramdd_w", "histogramdd", [HS, f32([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
       lambda s, w: hdd(s, bins=2, weights=w), "bins=2,2")
g.case("histogramdd_density", "histogramdd", [HS3], lambda s: hdd(s, bins=[2, 3, 2], density=True), "bins=2,3,2 density=1")
g.case("histogramdd_int", "histogramdd", [i32([0, 1, 2, 2, 4, 1, 3, 3], (4, 2))], lambda s: hdd(s, bins=2), "bins=2,2")
g.case("histogramdd_edges", "histogramdd_edges", [HS3, f32([0.0, 0.5, 1.0]), f32([0.0, 0.25, 0.5, 1.0]), f32([0.0, 1.0])],
       lambda s, e0, e1, e2: hdd(s, bins=[e0, e1, e2]))
g.case("histogramdd_1d", "histogramdd", [f32([0.0, 1.0])], lambda s: hdd(s, bins=2), "bins=2", err="JX_ERR_SHAPE")
g.case("histogramdd_bad_w", "histogramdd", [HS, f32([1.0, 2.0])], lambda s, w: hdd(s, bins=2, weights=w), "bins=2,2",
       err="JX_ERR_SHAPE")
HX, HY = f32([0.0, 1.0, 2.0, 0.5, 1.5]), f32([1.0, 2.0, 2.0, 1.25, 0.0])


def h2d(*a, **k):
    return jnp.histogram2d(*a, **k)


g.case("histogram2d", "histogram2d", [HX, HY], lambda x, y: h2d(x, y, bins=[2, 3]), "bins=2,3")
g.case("histogram2d_int_density", "histogram2d", [i32([0, 1, 2]), i32([1, 2, 2])],
       lambda x, y: h2d(x, y, bins=2, density=True), "bins=2,2 density=1")
g.case("histogram2d_w_range", "histogram2d", [HX, HY, f32([1.0, 0.5, 2.0, 1.0, 3.0])],
       lambda x, y, w: h2d(x, y, bins=2, range=[[0.0, 1.0], [0.0, 2.0]], weights=w), "bins=2,2 range=0,1,0,2")
g.case("histogram2d_mixed", "histogram2d", [HX, i32([1, 2, 2, 1, 0])], lambda x, y: h2d(x, y, bins=2), "bins=2,2")
g.case("histogram2d_len", "histogram2d", [HX, f32([1.0, 2.0])], raises(lambda x, y: h2d(x, y, bins=2)), "bins=2,2",
       err="JX_ERR_SHAPE")

# ---------------------------------------------------------------- searchsorted(sorter=)
SA, SV = f32([5.0, 1.0, 3.0, 2.0, NAN, -0.0]), f32([0.0, 2.0, 2.5, 6.0, NAN, -1.0])
for side in ("left", "right"):
    g.case(f"searchsorted_sorter_{side}", "searchsorted_sorter", [SA, SV, i32([5, 1, 3, 2, 0, 4])],
           lambda a, v, s, side=side: jnp.searchsorted(a, v, side=side, sorter=s), f"side={side}")
g.case("searchsorted_sorter_neg_oob", "searchsorted_sorter", [SA, SV, i32([-1, 1, 3, -3, 0, 9])],
       lambda a, v, s: jnp.searchsorted(a, v, sorter=s), "side=left")
g.case("searchsorted_sorter_short", "searchsorted_sorter", [SA, SV, i32([1, 3])],
       lambda a, v, s: jnp.searchsorted(a, v, sorter=s), "side=left")
g.case("searchsorted_sorter_u8", "searchsorted_sorter", [i32([50, 10, 30]), i32([[5, 30], [31, 60]]), arr([1, 2, 0], "uint8")],
       lambda a, v, s: jnp.searchsorted(a, v, side="right", sorter=s), "side=right")
g.case("searchsorted_sorter_mixed", "searchsorted_sorter", [i32([5, 1, 3]), f32([2.5, 3.0]), i32([1, 2, 0])],
       lambda a, v, s: jnp.searchsorted(a, v, sorter=s), "side=left")
g.case("searchsorted_sorter_empty", "searchsorted_sorter", [E, SV, i32([])],
       lambda a, v, s: jnp.searchsorted(a, v, sorter=s), "side=left")
g.case("searchsorted_sorter_float", "searchsorted_sorter", [SA, SV, f32([0.0] * 6)],
       lambda a, v, s: jnp.searchsorted(a, v, sorter=s), "side=left", err="JX_ERR_DTYPE")
g.case("searchsorted_sorter_empty_a", "searchsorted_sorter", [E, SV, i32([0, 0])],
       lambda a, v, s: jnp.searchsorted(a, v, sorter=s), "side=left", err="JX_ERR_SHAPE")
g.case("searchsorted_sorter_2d_a", "searchsorted_sorter", [XC, SV, i32([0])],
       lambda a, v, s: jnp.searchsorted(a, v, sorter=s), "side=left", err="JX_ERR_SHAPE")

# ---------------------------------------------------------------- unique(axis=)
UR = f32([1.0, 2.0, 0.0, 1.0, 2.0, 0.0, -0.0, 5.0, 1.0, 1.0, 2.0, -1.0, NAN, 0.0, 1.0, NAN, 0.0, 1.0], (6, 3))
UI = i32([3, 1, 3, 2, 1, 2, 3, 1, 3, 0, 0, 0], (3, 4))


def uniq(x, **k):
    return jnp.unique(x, return_index=True, return_inverse=True, return_counts=True, **k)


for ax in (0, 1, -1):
    g.case(f"unique_axis{ax}_f", "unique", [UR], lambda x, ax=ax: uniq(x, axis=ax), f"axis={ax} size=-1")
    g.case(f"unique_axis{ax}_i", "unique", [UI], lambda x, ax=ax: uniq(x, axis=ax), f"axis={ax} size=-1")
g.case("unique_axis_3d", "unique", [i32([1, 2, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2], (2, 3, 2))],
       lambda x: uniq(x, axis=1), "axis=1 size=-1")
g.case("unique_axis_size", "unique", [UR], lambda x: uniq(x, axis=0, size=6), "axis=0 size=6")
g.case("unique_axis_size_small", "unique", [UI], lambda x: uniq(x, axis=1, size=2), "axis=1 size=2")
g.case("unique_axis_size_fill", "unique", [UI, i32(-7)], lambda x, f: uniq(x, axis=1, size=5, fill_value=f),
       "axis=1 size=5 fill=1")
g.case("unique_axis_fill_row", "unique", [UI, i32([9, 8, 7])], lambda x, f: uniq(x, axis=1, size=5, fill_value=f),
       "axis=1 size=5 fill=1")
g.case("unique_axis_bool", "unique", [arr([1, 0, 1, 1, 0, 1, 0, 0], "bool", (4, 2))], lambda x: uniq(x, axis=0),
       "axis=0 size=-1")
g.case("unique_axis_empty", "unique", [E23], lambda x: uniq(x, axis=1), "axis=1 size=-1")
g.case("unique_axis_empty_fill", "unique", [E23, f32(4.0)], lambda x, f: uniq(x, axis=1, size=2, fill_value=f),
       "axis=1 size=2 fill=1")
g.case("unique_axis_empty_rows", "unique", [E23], lambda x: uniq(x, axis=0), "axis=0 size=-1")
g.case("unique_axis_empty_rows_fill", "unique", [E23, f32(4.0)], lambda x, f: uniq(x, axis=2, size=4, fill_value=f),
       "axis=2 size=4 fill=1")
g.case("unique_axis_bad", "unique", [UI], raises(lambda x: uniq(x, axis=2)), "axis=2 size=-1", err="JX_ERR_SHAPE")
g.case("unique_axis_0d", "unique", [f32(1.0)], raises(lambda x: uniq(x, axis=0)), "axis=0 size=-1", err="JX_ERR_SHAPE")
g.case("unique_axis_empty_nofill", "unique", [E23], raises(lambda x: uniq(x, axis=1, size=2)), "axis=1 size=2",
       err="JX_ERR_VALUE")


def main():
    golden_io.write(OUT, f"# Generated by tools/golden_numpy_api.py with jax {jax.__version__} -- "
                    "do not edit.\n# Format: tests/support/golden.h.\n\n", g.CASES)


if __name__ == "__main__":
    main()
