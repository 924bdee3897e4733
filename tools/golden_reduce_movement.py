#!/usr/bin/env python3
"""golden_reduce_movement.py -- writes tests/golden/reduce_movement.txt: JAX's results for
jaxc's reductions, movement functions, constructors, products (jax.numpy) and the text
of NumPy's str() for jx_to_string, over NaN, +-inf, -0.0, empty and broadcast shapes in
float32, float16, bfloat16, int32, int8, uint8 and bool. Format: tests/support/golden.h.

Run:  pip install jax numpy;  python3 tools/golden_reduce_movement.py  (jax_enable_x64 off)

Conventions the C tests (tests/lib/test_*.c) rely on:
  * params are key=value; lists are comma separated ("axes=0,2"); "none" is Python's
    None (axis=None, a slice bound left out); an absent "axes" means axes=None.
  * to_string cases store the expected text as a uint8 output (its UTF-8 bytes).
  * x64=1 cases (float64 linspace) ran under jax.enable_x64(True); the C test enables x64.
  * an expected error is written as `err JX_ERR_...` when JAX raises.
Float32/bfloat16 inputs avoid subnormals (XLA on CPU flushes them to zero).
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)

OUT = golden_io.path("reduce_movement.txt")
NAN, INF = float("nan"), float("inf")
DTYPES = ["float32", "float16", "bfloat16", "int32", "int8", "uint8", "bool"]
FLOATS = ("float32", "float16", "bfloat16")

# ----------------------------------------------------------------- formatting


def text_array(s):
    """Expected text of to_string cases: its bytes as a uint8 array."""
    return np.frombuffer(s.encode(), dtype=np.uint8)


CASES, NAMES = [], set()


def case(name, fn, ins, call, params="", err=None):
    """Runs call(*ins) under JAX; records inputs, params and the output(s) or error."""
    assert name not in NAMES, name
    NAMES.add(name)
    try:
        out = call(*ins)
    except (TypeError, ValueError, IndexError) as e:
        assert err, f"{name}: JAX raised {e!r}"
        outs = []
    else:
        assert not err, f"{name}: JAX did not raise"
        outs = out if isinstance(out, (list, tuple)) else [out]
    # Python numbers print as JAX holds them (weak, float32-rounded); call got them as given
    shown = [jnp.asarray(a) if isinstance(a, (bool, int, float)) and not isinstance(a, np.generic)
             else a for a in ins]
    outs = [jnp.asarray(o) if isinstance(o, (bool, int, float)) and not isinstance(o, np.generic)
            else o for o in outs]
    CASES.append(golden_io.case_text(name, fn, params, shown, outs, err))


def arr(values, dtype, shape=None):
    if dtype == "bool":
        a = np.array(values, dtype=bool)
    else:
        a = np.array(values, dtype=np.float64 if dtype in FLOATS else np.int64)
    x = jnp.asarray(a, dtype=jnp.dtype(dtype))
    return x.reshape(shape) if shape is not None else x


def lst(xs):
    return ",".join("none" if v is None else str(v) for v in xs)


# ----------------------------------------------------------------- inputs

# (3, 4) matrices per dtype: "clean" values, and "special" ones (NaN, +-inf, -0.0).
CLEAN = {
    "float32": [1.5, -2.25, 0.0, 3.0, -0.0, 7.5, -1.0, 2.0, 4.0, 0.5, -3.5, 10.0],
    "float16": [1.5, -2.25, 0.0, 3.0, -0.0, 7.5, -1.0, 2.0, 4.0, 0.5, -3.5, 10.0],
    "bfloat16": [1.5, -2.25, 0.0, 3.0, -0.0, 7.5, -1.0, 2.0, 4.0, 0.5, -3.5, 10.0],
    "int32": [1, -2, 0, 3, 2147483647, 1, -5, 5, 7, 7, -1, 2],
    "int8": [1, -2, 0, 3, 100, 127, -128, 5, 7, 7, -1, 2],
    "uint8": [1, 2, 0, 3, 200, 255, 128, 5, 7, 7, 1, 2],
    "bool": [1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1],
}
SPECIAL = [NAN, 1.0, 2.0, NAN, INF, -1.0, 0.0, 5.0, -INF, INF, 1.0, 2.0, -0.0, -0.0, 0.0,
           -INF]  # (4, 4)


def mat(dtype):
    return arr(CLEAN[dtype], dtype, (3, 4))


def cube(dtype):
    """(2, 3, 4) with distinct values (wrapping into the dtype's range)."""
    v = [(i * 7) % 23 - 11 for i in range(24)]
    if dtype == "uint8":
        v = [x + 11 for x in v]
    if dtype == "bool":
        v = [x % 3 == 0 for x in v]
    if dtype in FLOATS:
        v = [x * 0.5 for x in v]
        v[5], v[9] = -0.0, 0.0
    return arr(v, dtype, (2, 3, 4))


# ------------------------------------------------------------- reductions

RED = {"sum": jnp.sum, "prod": jnp.prod, "max": jnp.max, "min": jnp.min,
       "mean": jnp.mean, "any": jnp.any, "all": jnp.all}


def red_call(fn, axes, keepdims, ddof=0):
    def call(x):
        ax = None if axes is None else tuple(axes)
        if fn in ("var", "std"):
            return getattr(jnp, fn)(x, axis=ax, ddof=ddof, keepdims=keepdims)
        return RED[fn](x, axis=ax, keepdims=keepdims)
    return call


def red_params(axes, keepdims, ddof=None):
    p = [] if axes is None else [f"axes={lst(axes)}"]
    p.append(f"keepdims={int(keepdims)}")
    if ddof is not None:
        p.append(f"ddof={ddof}")
    return " ".join(p)


def reduction_cases():
    fns = list(RED) + ["var", "std"]
    axes_list = [None, (0,), (1,), (-1, 0)]
    for dt in DTYPES:
        for fn in fns:
            for axes in axes_list:
                for kd in (False, True):
                    if kd and axes not in (None, (1,)):
                        continue
                    ddof = 0 if fn in ("var", "std") else None
                    case(f"{fn}_{dt}_{lst(axes or ['all'])}_{int(kd)}", fn, [mat(dt)],
                         red_call(fn, axes, kd), red_params(axes, kd, ddof))
        for fn in fns:
            case(f"{fn}_{dt}_cube_02", fn, [cube(dt)], red_call(fn, (0, 2), False),
                 red_params((0, 2), False, 0 if fn in ("var", "std") else None))
    for dt in FLOATS:
        x = arr(SPECIAL, dt, (4, 4))
        for fn in fns:
            for axes in (None, (0,), (1,)):
                ddof = 0 if fn in ("var", "std") else None
                case(f"{fn}_{dt}_special_{lst(axes or ['all'])}", fn, [x],
                     red_call(fn, axes, False), red_params(axes, False, ddof))
    # Accumulation dtype: float16 / bfloat16 sums accumulate in float32.
    case("sum_float16_f32acc", "sum", [arr([60000.0, 60000.0, -60000.0], "float16")],
         red_call("sum", None, False), red_params(None, False))
    case("sum_bfloat16_f32acc", "sum", [arr([1.0] * 300, "bfloat16")],
         red_call("sum", None, False), red_params(None, False))
    case("mean_bfloat16_f32acc", "mean", [arr([1.0] * 300 + [2.0] * 20, "bfloat16")],
         red_call("mean", None, False), red_params(None, False))
    case("sum_int32_wrap", "sum", [arr([2147483647, 1, 5], "int32")],
         red_call("sum", None, False), red_params(None, False))
    case("prod_int8_promotes", "prod", [arr([100, 100, -3], "int8")],
         red_call("prod", None, False), red_params(None, False))
    # var / std with ddof, including ddof >= count (NaN).
    for ddof in (1, 2, 3, 5):
        for fn in ("var", "std"):
            case(f"{fn}_ddof{ddof}", fn, [mat("float32")], red_call(fn, (0,), False, ddof),
                 red_params((0,), False, ddof))
    case("var_int8_ddof1", "var", [mat("int8")], red_call("var", None, False, 1),
         red_params(None, False, 1))
    # Empty arrays and 0-d arrays.
    e = jnp.zeros((0, 3), jnp.float32)
    for fn in fns:
        for axes in ((0,), (1,), None):
            err = "JX_ERR_VALUE" if fn in ("max", "min") and axes != (1,) else None
            ddof = 0 if fn in ("var", "std") else None
            case(f"{fn}_empty_{lst(axes or ['all'])}", fn, [e], red_call(fn, axes, False),
                 red_params(axes, False, ddof), err)
    for dt in ("float32", "int8", "bool"):
        s = arr(3, dt) if dt != "bool" else arr(True, dt)
        for fn in fns:
            ddof = 0 if fn in ("var", "std") else None
            case(f"{fn}_{dt}_0d", fn, [s], red_call(fn, None, False), red_params(None, False, ddof))
    case("sum_weak_scalar", "sum", [jnp.asarray(2.5)], red_call("sum", None, False),
         red_params(None, False))


def arg_cases():
    for fn in ("argmax", "argmin"):
        f = getattr(jnp, fn)
        for dt in DTYPES:
            for axis in (None, 0, 1, -1):
                for kd in (False, True):
                    case(f"{fn}_{dt}_{axis}_{int(kd)}", fn, [mat(dt)],
                         lambda x, a=axis, k=kd, g=f: g(x, axis=a, keepdims=k),
                         f"axis={lst([axis])} keepdims={int(kd)}")
            case(f"{fn}_{dt}_cube", fn, [cube(dt)], lambda x, g=f: g(x, axis=1),
                 "axis=1 keepdims=0")
        for dt in FLOATS:
            x = arr(SPECIAL, dt, (4, 4))
            for axis in (None, 0, 1):
                case(f"{fn}_{dt}_special_{axis}", fn, [x], lambda x, a=axis, g=f: g(x, axis=a),
                     f"axis={lst([axis])} keepdims=0")
        ties = arr([2.0, 5.0, 5.0, 1.0, 1.0, 5.0, NAN, NAN, -INF, -INF, INF, INF], "float32",
                   (3, 4))
        case(f"{fn}_ties", fn, [ties], lambda x, g=f: g(x, axis=1), "axis=1 keepdims=0")
        e = jnp.zeros((0, 3), jnp.float32)
        case(f"{fn}_empty_0", fn, [e], lambda x, g=f: g(x, axis=0), "axis=0 keepdims=0",
             "JX_ERR_VALUE")
        case(f"{fn}_empty_1", fn, [e], lambda x, g=f: g(x, axis=1), "axis=1 keepdims=0")
        case(f"{fn}_0d", fn, [arr(4.0, "float32")], lambda x, g=f: g(x), "axis=none keepdims=0")


# --------------------------------------------------------------- movement

def movement_cases():
    for dt in DTYPES:
        x = cube(dt)
        m = f"_{dt}"
        case("reshape" + m, "reshape", [x], lambda a: jnp.reshape(a, (4, -1)), "shape=4,-1")
        case("ravel" + m, "ravel", [x], jnp.ravel)
        case("transpose" + m, "transpose", [x], lambda a: jnp.transpose(a, (1, 2, 0)),
             "perm=1,2,0")
        case("transpose_none" + m, "transpose", [x], jnp.transpose)
        case("flip" + m, "flip", [x], lambda a: jnp.flip(a, (0, 2)), "axes=0,2")
        case("roll" + m, "roll", [x], lambda a: jnp.roll(a, 5), "shift=5 axis=none")
        case("slice" + m, "slice", [x], lambda a: a[::-1, 1:, ::-2],
             "start=none,1,none stop=none,none,none step=-1,1,-2")
        case("pad" + m, "pad", [x], lambda a: jnp.pad(a, ((1, 0), (0, 2), (1, 1)),
                                                     constant_values=1), "pad=1,0,0,2,1,1 value=1")
        case("tile" + m, "tile", [x], lambda a: jnp.tile(a, (2, 1, 1)), "reps=2,1,1")
        case("repeat" + m, "repeat", [x], lambda a: jnp.repeat(a, 2, axis=1),
             "repeats=2 axis=1")
        idx = arr([[2, -1], [0, 5]], "int32")
        case("take" + m, "take", [x, idx], lambda a, i: jnp.take(a, i, axis=2), "axis=2")
        case("concatenate" + m, "concatenate", [x, x[:, :1]],
             lambda a, b: jnp.concatenate([a, b], axis=1), "axis=1")
        case("stack" + m, "stack", [x, x], lambda a, b: jnp.stack([a, b], axis=-1), "axis=-1")
        case("split" + m, "split", [x], lambda a: jnp.split(a, 2, axis=2), "sections=2 axis=2")
    x = cube("float32")
    # reshape / ravel / transpose family
    for shape in ((24,), (2, -1, 3), (-1,), (1, 2, 1, 12)):
        case(f"reshape_{lst(shape)}", "reshape", [x], lambda a, s=shape: jnp.reshape(a, s),
             f"shape={lst(shape)}")
    case("reshape_empty", "reshape", [jnp.zeros((0, 4))], lambda a: jnp.reshape(a, (2, 0, 3)),
         "shape=2,0,3")
    case("reshape_0d", "reshape", [arr(7.0, "float32")], lambda a: jnp.reshape(a, (1, 1)),
         "shape=1,1")
    case("reshape_to_0d", "reshape", [arr([7.0], "float32")], lambda a: jnp.reshape(a, ()),
         "shape=")
    case("reshape_weak", "reshape", [jnp.asarray(2.5)], lambda a: jnp.reshape(a, (1,)),
         "shape=1")
    case("swapaxes", "swapaxes", [x], lambda a: jnp.swapaxes(a, 0, -1), "axis1=0 axis2=-1")
    for s, d in ((0, 2), (2, 0), (-1, 1), (1, 1)):
        case(f"moveaxis_{s}_{d}", "moveaxis", [x], lambda a, s=s, d=d: jnp.moveaxis(a, s, d),
             f"source={s} destination={d}")
    # broadcasting and axes
    v = arr([1.0, -0.0, NAN], "float32")
    case("broadcast_to", "broadcast_to", [v], lambda a: jnp.broadcast_to(a, (2, 3)), "shape=2,3")
    case("broadcast_to_0", "broadcast_to", [arr([[1.0], [2.0]], "float32")],
         lambda a: jnp.broadcast_to(a, (4, 2, 0)), "shape=4,2,0")
    case("broadcast_to_0d", "broadcast_to", [arr(3, "int8")],
         lambda a: jnp.broadcast_to(a, (2, 2)), "shape=2,2")
    for ax in (0, 1, -1, 3):
        case(f"expand_dims_{ax}", "expand_dims", [x], lambda a, ax=ax: jnp.expand_dims(a, ax),
             f"axis={ax}")
    y = jnp.zeros((1, 3, 1, 2), jnp.int8) + arr([1, 2], "int8")
    case("squeeze_all", "squeeze", [y], jnp.squeeze)
    case("squeeze_2", "squeeze", [y], lambda a: jnp.squeeze(a, 2), "axes=2")
    case("squeeze_0_-2", "squeeze", [y], lambda a: jnp.squeeze(a, (0, -2)), "axes=0,-2")
    case("squeeze_0d", "squeeze", [arr(1.5, "float16")], jnp.squeeze)
    # joining and splitting, with promotion
    a8, f16 = arr([[1, 2]], "int8"), arr([[0.5, -0.0]], "float16")
    case("concatenate_promote", "concatenate", [a8, f16, arr([[3, 4]], "uint8")],
         lambda a, b, c: jnp.concatenate([a, b, c], axis=0), "axis=0")
    case("concatenate_bool_int", "concatenate", [arr([True, False], "bool"),
                                                  arr([7], "int32")],
         lambda a, b: jnp.concatenate([a, b]), "axis=0")
    case("concatenate_empty", "concatenate", [jnp.zeros((2, 0)), arr([[1.0], [2.0]], "float32")],
         lambda a, b: jnp.concatenate([a, b], axis=1), "axis=1")
    case("concatenate_one", "concatenate", [x], lambda a: jnp.concatenate([a], axis=-1), "axis=-1")
    case("stack_promote", "stack", [arr([1, 2], "uint8"), arr([-1, 3], "int8")],
         lambda a, b: jnp.stack([a, b]), "axis=0")
    case("stack_0d", "stack", [arr(1.0, "float32"), arr(2.0, "float32")],
         lambda a, b: jnp.stack([a, b]), "axis=0")
    case("split_3", "split", [x], lambda a: jnp.split(a, 3, axis=1), "sections=3 axis=1")
    case("split_1", "split", [x], lambda a: jnp.split(a, 1, axis=0), "sections=1 axis=0")
    for ind in ((1, 3), (0, 4), (2, 2), (0,), (4,)):
        case(f"split_indices_{lst(ind)}", "split_indices", [x],
             lambda a, i=ind: jnp.split(a, list(i), axis=-1), f"indices={lst(ind)} axis=-1")
    case("split_bad", "split", [x], lambda a: jnp.split(a, 3, axis=2), "sections=3 axis=2",
         "JX_ERR_SHAPE")
    # padding, flipping, rolling
    case("pad_0d", "pad", [arr(2.0, "float32")], lambda a: jnp.pad(a, np.zeros((0, 2), int)),
         "pad= value=0")
    case("pad_nan", "pad", [arr([1.0, 2.0], "float32")],
         lambda a: jnp.pad(a, ((2, 1),), constant_values=NAN), "pad=2,1 value=nan")
    case("pad_negzero", "pad", [arr([1.0], "float32")],
         lambda a: jnp.pad(a, ((1, 1),), constant_values=-0.0), "pad=1,1 value=-0.0")
    case("pad_int", "pad", [arr([1, 2], "int32")],
         lambda a: jnp.pad(a, ((1, 1),), constant_values=-3), "pad=1,1 value=-3")
    case("pad_empty", "pad", [jnp.zeros((0, 2), jnp.float16)],
         lambda a: jnp.pad(a, ((1, 1), (0, 1)), constant_values=5), "pad=1,1,0,1 value=5")
    case("flip_all", "flip", [x], jnp.flip)
    case("flip_none_axes", "flip", [x], lambda a: jnp.flip(a, ()), "axes=")
    for shift, axis in ((1, 0), (-1, 1), (7, 2), (-25, None), (0, 1), (3, -1), (24, None)):
        case(f"roll_{shift}_{axis}", "roll", [x], lambda a, s=shift, ax=axis: jnp.roll(a, s, ax),
             f"shift={shift} axis={lst([axis])}")
    case("roll_empty", "roll", [jnp.zeros((0, 3))], lambda a: jnp.roll(a, 2, 0), "shift=2 axis=0")
    case("roll_0d", "roll", [arr(5, "int8")], lambda a: jnp.roll(a, 3), "shift=3 axis=none")
    # tile and repeat
    v = arr([1, 2, 3], "int32")
    for reps in ((2,), (2, 2), (1, 0), (2, 1, 3), ()):
        case(f"tile_{lst(reps) or 'none'}", "tile", [v], lambda a, r=reps: jnp.tile(a, r),
             f"reps={lst(reps)}")
    case("tile_fewer_reps", "tile", [x], lambda a: jnp.tile(a, (2,)), "reps=2")
    case("tile_0d", "tile", [arr(1.5, "float32")], lambda a: jnp.tile(a, (3, 1)), "reps=3,1")
    for reps, axis in ((3, None), (0, 1), (1, 0), (2, -1)):
        case(f"repeat_{reps}_{axis}", "repeat", [x],
             lambda a, r=reps, ax=axis: jnp.repeat(a, r, axis=ax),
             f"repeats={reps} axis={lst([axis])}")
    case("repeat_0d", "repeat", [arr(2.0, "float32")], lambda a: jnp.repeat(a, 3),
         "repeats=3 axis=none")
    slice_cases(x)
    take_cases(x)


def slice_cases(x):
    v = arr(list(range(10)), "int32")
    specs = [(None, None, 1), (2, 8, 1), (-3, None, 1), (None, -3, 1), (8, 2, -1),
             (None, None, -1), (None, None, -3), (-1, -11, -2), (100, -100, -1),
             (-100, 100, 3), (5, 5, 1), (7, 3, 1), (3, 7, -1), (1, None, 100),
             (None, None, -100), (-2, None, -4), (0, 1, -1)]
    for i, (start, stop, step) in enumerate(specs):
        case(f"slice_1d_{i}", "slice", [v], lambda a, s=slice(start, stop, step): a[s],
             f"start={lst([start])} stop={lst([stop])} step={step}")
    case("slice_partial", "slice", [x], lambda a: a[1:, ::-1],
         "start=1,none stop=none,none step=1,-1")
    case("slice_none", "slice", [x], lambda a: a, "start= stop= step=")
    case("slice_empty", "slice", [jnp.zeros((0, 3))], lambda a: a[::-1, 1:],
         "start=none,1 stop=none,none step=-1,1")


def take_cases(x):
    v = arr([1.5, -0.0, NAN, INF, 2.0], "float32")
    for name, idx in (("in", [4, 0, -5, -1]), ("oob", [5, -6, 100, -100, 2]),
                      ("2d", [[0, 1], [-2, 7]]), ("empty", [])):
        i = arr(idx, "int32")
        case(f"take_1d_{name}", "take", [v, i], lambda a, b: jnp.take(a, b, axis=0), "axis=0")
    for dt in ("int8", "uint8", "int32", "bool", "float16", "bfloat16"):
        i = arr([1, -1, 4, -5, 0], "int32")
        case(f"take_fill_{dt}", "take", [mat(dt), i], lambda a, b: jnp.take(a, b, axis=1),
             "axis=1")
    for idt in ("int8", "uint8", "uint32"):
        i = arr([3, 1, 200], idt) if idt != "int8" else arr([3, -1, -128], idt)
        case(f"take_idx_{idt}", "take", [x, i], lambda a, b: jnp.take(a, b), "axis=none")
    case("take_flat", "take", [x, arr([[23, 0], [-24, 24]], "int32")],
         lambda a, b: jnp.take(a, b), "axis=none")
    case("take_0d_idx", "take", [x, arr(2, "int32")], lambda a, b: jnp.take(a, b, axis=1),
         "axis=1")
    case("take_empty_axis", "take", [jnp.zeros((2, 0)), arr([], "int32")],
         lambda a, b: jnp.take(a, b, axis=1), "axis=1")


# --------------------------------------------------------------- creation

def creation_cases():
    for dt in DTYPES:
        case(f"full_{dt}", "full", [], lambda d=dt: jnp.full((2, 3), -1.5 if d in FLOATS else 3, d),
             f"shape=2,3 value={-1.5 if dt in FLOATS else 3} dtype={dt}")
        case(f"zeros_{dt}", "zeros", [], lambda d=dt: jnp.zeros((3,), d), f"shape=3 dtype={dt}")
        case(f"ones_{dt}", "ones", [], lambda d=dt: jnp.ones((2, 0, 2), d),
             f"shape=2,0,2 dtype={dt}")
        case(f"zeros_like_{dt}", "zeros_like", [mat(dt)], jnp.zeros_like)
        case(f"ones_like_{dt}", "ones_like", [mat(dt)], jnp.ones_like)
        case(f"full_like_{dt}", "full_like", [mat(dt)], lambda a: jnp.full_like(a, 2), "value=2")
        case(f"eye_{dt}", "eye", [], lambda d=dt: jnp.eye(3, dtype=d), f"n=3 dtype={dt}")
        case(f"tril_{dt}", "tril", [cube(dt)], lambda a: jnp.tril(a), "k=0")
        case(f"triu_{dt}", "triu", [cube(dt)], lambda a: jnp.triu(a, 1), "k=1")
    case("full_0d", "full", [], lambda: jnp.full((), NAN, jnp.float32),
         "shape= value=nan dtype=float32")
    case("full_negzero", "full", [], lambda: jnp.full((2,), -0.0, jnp.float16),
         "shape=2 value=-0.0 dtype=float16")
    case("full_inf_int", "full", [], lambda: jnp.full((2,), 300, jnp.int32),
         "shape=2 value=300 dtype=int32")
    case("full_like_weak", "full_like", [jnp.asarray(2.5)], lambda a: jnp.full_like(a, 7),
         "value=7")
    case("zeros_like_weak", "zeros_like", [jnp.asarray(3)], jnp.zeros_like)
    # arange(start, stop, step, dtype)
    for start, stop, step, dt in ((0, 10, 1, "int32"), (0, 1, 0.1, "float32"),
                                  (10, 0, -3, "int32"), (0.5, 5, 1, "int32"),
                                  (-1, 1, 0.25, "float16"), (0, 1, 0.1, "bfloat16"),
                                  (0, 2.5, 0.5, "float32"), (5, 0, 1, "float32"),
                                  (1, 2, 0.3, "float32"), (-5, 5, 2.5, "int8"),
                                  (0, 300, 7, "uint8"), (0, 3, 1, "bool"),
                                  (0, 1e6, 1e5, "float32"), (1, 1, 1, "float32")):
        case(f"arange_{start}_{stop}_{step}_{dt}", "arange", [],
             lambda a=start, b=stop, c=step, d=dt: jnp.arange(a, b, c, dtype=d),
             f"start={start!r} stop={stop!r} step={step!r} dtype={dt}",
             "JX_ERR_DTYPE" if dt == "bool" else None)
    # linspace(start, stop, num, dtype)
    for start, stop, num, dt in ((0, 1, 5, "float32"), (0, 1, 50, "float32"),
                                 (-3.5, 7.25, 13, "float32"), (1, 0, 7, "float32"),
                                 (0, 1, 11, "float16"), (0, 1, 9, "bfloat16"),
                                 (0, 10, 4, "int32"), (-5, 5, 7, "int8"),
                                 (0, 1, 1, "float32"), (0, 1, 0, "float32"),
                                 (2, 2, 3, "float32"), (0, 1, 3, "bool"),
                                 (1e-3, 1e3, 6, "float32"), (0, 255, 4, "uint8"),
                                 (-7.04, -12.65, 44, "float32"), (1.26, -1.32, 19, "float16"),
                                 (3.62, 13.04, 58, "bfloat16"), (-9.5, 3.25, 37, "float16"),
                                 (0.3, -0.7, 23, "bfloat16")):
        case(f"linspace_{start}_{stop}_{num}_{dt}", "linspace", [],
             lambda a=start, b=stop, n=num, d=dt: jnp.linspace(a, b, n, dtype=d),
             f"start={start!r} stop={stop!r} num={num} dtype={dt}")
    # float32 across the sizes where XLA's CPU code contracts differently (creation.c's
    # linspace_f32): n = num - 1 <= 35, <= 223, <= 4441 (vector body + tail), >= 4442 even
    # and odd; the C test compares these with tolerance 0
    for num in (3, 13, 36, 37, 101, 224, 225, 1001, 4443, 4444):
        for start, stop in ((-3.27766, -6.99441), (0.3, 7.1), (-9187.65, 6119.45)):
            if num > 1001 and start != 0.3:
                continue
            case(f"linspace_f32_{start}_{stop}_{num}", "linspace", [],
                 lambda a=start, b=stop, n=num: jnp.linspace(a, b, n, dtype="float32"),
                 f"start={start!r} stop={stop!r} num={num} dtype=float32")
    with jax.enable_x64(True):  # float64: the same regimes at n <= 33, <= 175, vector blocks of 16
        for num in (13, 34, 35, 176, 177, 1001):
            for start, stop in ((-3.27766, -6.99441), (-9187.65, 6119.45)):
                case(f"linspace_f64_{start}_{stop}_{num}", "linspace", [],
                     lambda a=start, b=stop, n=num: jnp.linspace(a, b, n, dtype="float64"),
                     f"start={start!r} stop={stop!r} num={num} dtype=float64 x64=1")
    for start, stop, num, dt in ((-2.5, 1e4, 300, "int32"), (1e-3, -17.25, 40, "float16"),
                                 (0.1, 9.9, 250, "bfloat16"), (5.0, 5.0, 9, "float32")):
        case(f"linspace_{start}_{stop}_{num}_{dt}", "linspace", [],
             lambda a=start, b=stop, n=num, d=dt: jnp.linspace(a, b, n, dtype=d),
             f"start={start!r} stop={stop!r} num={num} dtype={dt}")
    for n, m, k in ((3, 4, 1), (4, 3, -1), (3, 3, 5), (3, 3, -5), (0, 2, 0), (2, 5, 3)):
        case(f"eye_k_{n}_{m}_{k}", "eye_k", [], lambda n=n, m=m, k=k: jnp.eye(n, m, k, jnp.float32),
             f"n={n} m={m} k={k} dtype=float32")
        case(f"tri_{n}_{m}_{k}", "tri", [], lambda n=n, m=m, k=k: jnp.tri(n, m, k, jnp.int32),
             f"n={n} m={m} k={k} dtype=int32")
    x = cube("float32")
    for k in (-2, -1, 0, 2, 10, -10):
        case(f"tril_k{k}", "tril", [x], lambda a, k=k: jnp.tril(a, k), f"k={k}")
        case(f"triu_k{k}", "triu", [x], lambda a, k=k: jnp.triu(a, k), f"k={k}")
    case("tril_weak_bad", "tril", [arr([1.0, 2.0], "float32")], lambda a: jnp.tril(a), "k=0",
         "JX_ERR_SHAPE")


# --------------------------------------------------------------- products

def product_cases():
    rng = np.random.default_rng(0)

    def rnd(shape, dt):
        if dt == "bool":
            return arr(rng.random(shape) < 0.5, dt)
        if dt in FLOATS:
            return arr(np.round(rng.standard_normal(shape) * 4) / 4, dt)
        lo = 0 if dt.startswith("u") else -5
        return arr(rng.integers(lo, 6, shape), dt)

    shapes = [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)),
              ((2, 1, 2, 3), (5, 3, 2)), ((4, 2, 3), (3, 1)), ((2, 0), (0, 3)),
              ((0, 2), (2, 3)), ((1, 3), (2, 3, 4))]
    for dt in DTYPES:
        for i, (s1, s2) in enumerate(shapes):
            if dt != "float32" and i not in (3, 4):
                continue
            case(f"matmul_{dt}_{i}", "matmul", [rnd(s1, dt), rnd(s2, dt)], jnp.matmul)
    case("matmul_int8_wrap", "matmul", [arr([[100, 100]], "int8"), arr([[2], [1]], "int8")],
         jnp.matmul)
    case("matmul_f16_acc", "matmul", [arr([[60000.0, 60000.0, -60000.0]], "float16"),
                                      arr([[1.0], [1.0], [1.0]], "float16")], jnp.matmul)
    case("matmul_promote", "matmul", [rnd((2, 3), "int8"), rnd((3, 2), "float16")], jnp.matmul)
    case("matmul_special", "matmul", [arr([[NAN, 1.0], [INF, 0.0], [1.0, 2.0]], "float32"),
                                      arr([[1.0, 0.0], [-INF, 1.0]], "float32")], jnp.matmul)
    case("matmul_mismatch", "matmul", [rnd((2, 3), "float32"), rnd((4, 2), "float32")],
         jnp.matmul, err="JX_ERR_SHAPE")
    case("matmul_batch_mismatch", "matmul", [rnd((2, 2, 3), "float32"),
                                             rnd((3, 3, 2), "float32")],
         jnp.matmul, err="JX_ERR_SHAPE")
    for i, (s1, s2) in enumerate([((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                                  ((2, 2, 3), (4, 3, 5)), ((), (2, 3)), ((2,), ())]):
        for dt in ("float32", "int32", "bool"):
            case(f"dot_{dt}_{i}", "dot", [rnd(s1, dt), rnd(s2, dt)], jnp.dot)
    for i, (s1, s2) in enumerate([((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,)),
                                  ((), (2, 3))]):
        case(f"inner_{i}", "inner", [rnd(s1, "float32"), rnd(s2, "float32")], jnp.inner)
    case("vdot", "vdot", [rnd((2, 3), "float32"), rnd((3, 2), "float32")], jnp.vdot)
    case("vdot_int8", "vdot", [rnd((4,), "int8"), rnd((2, 2), "int8")], jnp.vdot)
    for i, (s1, s2) in enumerate([((3,), (4,)), ((2, 2), (3,)), ((), (2,))]):
        case(f"outer_{i}", "outer", [rnd(s1, "float32"), rnd(s2, "float32")], jnp.outer)
    case("outer_bool", "outer", [rnd((3,), "bool"), rnd((2,), "bool")], jnp.outer)
    for n, s1, s2 in ((0, (2, 3), (4,)), (1, (2, 3), (3, 4)), (2, (2, 3, 4), (3, 4, 5)),
                      (3, (2, 3), (2, 3)) if False else (2, (2, 3), (2, 3))):
        case(f"tensordot_{n}_{len(s1)}", "tensordot", [rnd(s1, "float32"), rnd(s2, "float32")],
             lambda a, b, n=n: jnp.tensordot(a, b, n), f"n={n}")
    case("tensordot_f16", "tensordot", [rnd((2, 3), "float16"), rnd((3, 2), "bfloat16")],
         lambda a, b: jnp.tensordot(a, b, 1), "n=1")


# ---------------------------------------------------------------- printing

def print_cases():
    xs = [arr([[1.0, 2.0], [3.0, 4.0]], "float32"), arr(SPECIAL, "float32", (4, 4)),
          arr([1.5, -0.0, 0.1, 1e-5], "float32"), arr([1e7, 1.0], "float32"),
          arr([0.1, 1.5, -0.0, 65504.0, NAN], "float16"), arr([0.1, 1.5, -0.0, 1e10], "bfloat16"),
          arr([[1, -200], [30000, 4]], "int32"), arr([True, False, True], "bool"),
          arr([255, 0, 7], "uint8"), arr([-128, 127], "int8"), arr(1.5, "float32"),
          arr(1e-5, "float32"), arr(-0.0, "float32"), arr(7, "int32"), arr(True, "bool"),
          arr(0.1, "bfloat16"), arr(1000.0, "float16"), jnp.zeros((2, 0)),
          jnp.arange(2000, dtype=jnp.float32).reshape(2, 1000) / 7,
          jnp.arange(30, dtype=jnp.float32) * 1.1, jnp.arange(1100, dtype=jnp.int32),
          jnp.ones((2, 3, 2), jnp.bool_), arr([INF, -INF], "float32"), arr([NAN], "float32"),
          jnp.arange(24, dtype=jnp.float32).reshape(2, 3, 4) * 1e-6]
    for i, x in enumerate(xs):
        case(f"to_string_{i}", "to_string", [x], lambda a: text_array(str(a)))


def main():
    reduction_cases()
    arg_cases()
    movement_cases()
    creation_cases()
    product_cases()
    print_cases()
    golden_io.write(OUT, "# Generated by tools/golden_reduce_movement.py with jax %s, numpy %s "
                    "(jax_enable_x64 off). Format: tests/support/golden.h.\n"
                    % (jax.__version__, np.__version__), CASES, sep="\n")


if __name__ == "__main__":
    main()
