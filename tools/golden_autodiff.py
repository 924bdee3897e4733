#!/usr/bin/env python3
"""golden_autodiff.py -- writes tests/golden/autodiff.txt: JAX's derivatives of a table
of functions, read by tests/transform/test_autodiff.c. Format: tests/support/golden.h.

Run:  pip install jax numpy;  python3 tools/golden_autodiff.py

Each case names a function of the table FUNCS below (the C test has a function of the
same name in its own table, computing the same thing with jx_ calls) and a mode:
  grad   inputs x...; outputs jax.grad(sum(f(x...)), argnums=all)
  jvp    inputs x..., t...; outputs f(x) and its tangent (jax.jvp)
  vjp    inputs x..., c; outputs the pullback of c (jax.vjp), one per input
  hvp    inputs x..., t...; outputs jax.jvp(grad(sum f), x, t)'s tangents: H t
         (forward over reverse)
  nth    param order=k; input x; output d_k where d_0 = f and d_k = grad(sum(d_{k-1})):
         the k-th derivative of an elementwise f, elementwise (reverse over reverse ...)
  jac    input x; output jax.jacrev(f)(x), of shape f(x).shape + x.shape (the C test
         builds it from the vjp of every basis cotangent)
  vag    value_and_grad(f, argnums=(0, 1), has_aux=True): outputs value, aux, grads
  gaux   grad(f, argnums=(0, 1), has_aux=True): outputs grads, aux
Table cases draw inputs at random in each function's domain (away from kinks and
singularities) and use float64 (param x64=1); a few cases repeat in float32 (x64 off).
Edge cases pin JAX's conventions at kinks: d|x|/dx = 1 at 0, ties of maximum/minimum
split 0.5/0.5, max/min reductions average over ties, d sqrt/dx = inf at 0, NaN leaking
through where, stop_gradient, take's out-of-bounds fill, and the like.
"""
import os
import sys
import zlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

OUT = golden_io.path("autodiff.txt")
NAN, INF = float("nan"), float("inf")

# ------------------------------------------------------------ the function table
# name -> (f, input specs). A spec is (shape, lo, hi, sym): values uniform in [lo, hi],
# or with sym a magnitude in [lo, hi] and a random sign (keeps away from 0). The C test
# (tests/transform/test_autodiff.c, table `ops`) uses the same names, shapes and domains
# for its numeric checks.
FUNCS = {}


def reg(name, f, *specs):
  assert name not in FUNCS, name
  FUNCS[name] = (f, specs)


def S(*shape, lo=-2.0, hi=2.0, sym=False):
  return (tuple(shape), lo, hi, sym)


M23 = dict(lo=-2.0, hi=2.0)
# unary elementwise, shape (2, 3)
for name, f, kw in [
    ("sin", jnp.sin, M23), ("cos", jnp.cos, M23), ("tan", jnp.tan, dict(lo=-1.2, hi=1.2)),
    ("arcsin", jnp.arcsin, dict(lo=-0.8, hi=0.8)), ("arccos", jnp.arccos, dict(lo=-0.8, hi=0.8)),
    ("arctan", jnp.arctan, M23), ("sinh", jnp.sinh, M23), ("cosh", jnp.cosh, M23),
    ("tanh", jnp.tanh, M23), ("arcsinh", jnp.arcsinh, M23),
    ("arccosh", jnp.arccosh, dict(lo=1.2, hi=3.0)),
    ("arctanh", jnp.arctanh, dict(lo=-0.8, hi=0.8)), ("exp", jnp.exp, M23),
    ("exp2", jnp.exp2, M23), ("expm1", jnp.expm1, M23), ("log", jnp.log, dict(lo=0.5, hi=3.0)),
    ("log2", jnp.log2, dict(lo=0.5, hi=3.0)), ("log10", jnp.log10, dict(lo=0.5, hi=3.0)),
    ("log1p", jnp.log1p, dict(lo=-0.5, hi=2.0)), ("sqrt", jnp.sqrt, dict(lo=0.5, hi=3.0)),
    ("rsqrt", lax.rsqrt, dict(lo=0.5, hi=3.0)), ("cbrt", jnp.cbrt, dict(lo=0.5, hi=3.0, sym=True)),
    ("square", jnp.square, M23), ("reciprocal", jnp.reciprocal, dict(lo=0.5, hi=2.0, sym=True)),
    ("abs", jnp.abs, dict(lo=0.3, hi=2.0, sym=True)), ("negative", jnp.negative, M23),
]:
  reg(name, f, S(2, 3, **kw))

reg("positive", jnp.positive, S(2, 3))
reg("deg2rad", jnp.deg2rad, S(2, 3))
reg("rad2deg", jnp.rad2deg, S(2, 3))
reg("power_int3", lambda x: jnp.power(x, 3), S(2, 3))
reg("power_intm2", lambda x: jnp.power(x, -2), S(2, 3, lo=0.5, hi=2.0, sym=True))

# binary elementwise
reg("add", jnp.add, S(2, 3), S(2, 3))
reg("subtract", jnp.subtract, S(2, 3), S(2, 3))
reg("multiply", jnp.multiply, S(2, 3), S(2, 3))
reg("divide", jnp.divide, S(2, 3), S(2, 3, lo=0.5, hi=2.0, sym=True))
reg("power", jnp.power, S(2, 3, lo=0.5, hi=2.0), S(2, 3, lo=-2.0, hi=2.0))
reg("maximum", jnp.maximum, S(2, 3), S(2, 3))
reg("minimum", jnp.minimum, S(2, 3), S(2, 3))
reg("arctan2", jnp.arctan2, S(2, 3, lo=0.3, hi=2.0, sym=True), S(2, 3, lo=0.3, hi=2.0, sym=True))
reg("hypot", jnp.hypot, S(2, 3, lo=0.3, hi=2.0, sym=True), S(2, 3, lo=0.3, hi=2.0, sym=True))
reg("logaddexp", jnp.logaddexp, S(2, 3), S(2, 3))
reg("remainder", jnp.remainder, S(2, 3, lo=-5.0, hi=5.0), S(2, 3, lo=0.7, hi=1.3, sym=True))
reg("fmax", jnp.fmax, S(2, 3), S(2, 3))
reg("fmin", jnp.fmin, S(2, 3), S(2, 3))
reg("fmod", jnp.fmod, S(2, 3, lo=-5.0, hi=5.0), S(2, 3, lo=0.7, hi=1.3, sym=True))
reg("copysign", jnp.copysign, S(2, 3), S(2, 3, lo=0.3, hi=2.0, sym=True))
reg("add_bcast", jnp.add, S(2, 3), S(3))
reg("multiply_bcast", jnp.multiply, S(2, 1), S(1, 3))
reg("divide_scalar", jnp.divide, S(2, 3), S(lo=0.5, hi=2.0))
reg("power_const", lambda x: jnp.power(x, 2.5), S(2, 3, lo=0.5, hi=2.0))
reg("where", lambda x, y: jnp.where(x > 0, x * y, jnp.sin(y)), S(2, 3, lo=0.2, hi=2.0, sym=True),
    S(2, 3))
reg("where_bcast", lambda x, y: jnp.where(x > 0, x, y), S(2, 1, lo=0.2, hi=2.0, sym=True),
    S(1, 3))
reg("clip", lambda x: jnp.clip(x, -0.5, 0.5), S(2, 3, lo=-1.0, hi=1.0))
reg("clip_lo", lambda x, lo: jnp.clip(x, lo, None), S(2, 3, lo=-1.5, hi=1.5), S(3, lo=-1.0, hi=-0.6))
reg("clip3", jnp.clip, S(2, 3, lo=-1.5, hi=1.5), S(2, 3, lo=-1.0, hi=-0.6), S(2, 3, lo=0.6, hi=1.0))

# reductions, shape (3, 4)
reg("sum_all", jnp.sum, S(3, 4))
reg("sum_ax1", lambda x: jnp.sum(x, axis=1), S(3, 4))
reg("sum_ax0_keep", lambda x: jnp.sum(x, axis=0, keepdims=True), S(3, 4))
reg("prod_all", jnp.prod, S(3, 4, lo=0.5, hi=1.5, sym=True))
reg("prod_ax1", lambda x: jnp.prod(x, axis=1), S(3, 4, lo=0.5, hi=1.5, sym=True))
reg("max_all", jnp.max, S(3, 4))
reg("max_ax0", lambda x: jnp.max(x, axis=0), S(3, 4))
reg("min_all", jnp.min, S(3, 4))
reg("min_ax1_keep", lambda x: jnp.min(x, axis=1, keepdims=True), S(3, 4))
reg("mean_all", jnp.mean, S(3, 4))
reg("mean_ax1", lambda x: jnp.mean(x, axis=1), S(3, 4))
reg("var_all", jnp.var, S(3, 4))
reg("var_ax0_ddof1", lambda x: jnp.var(x, axis=0, ddof=1), S(3, 4))
reg("std_all", jnp.std, S(3, 4))
reg("std_ax1", lambda x: jnp.std(x, axis=1), S(3, 4))

# movement
reg("reshape", lambda x: jnp.reshape(x, (3, 2)), S(2, 3))
reg("reshape_m1", lambda x: jnp.reshape(x, (-1, 4)), S(2, 3, 4))
reg("transpose", jnp.transpose, S(2, 3))
reg("transpose_perm", lambda x: jnp.transpose(x, (2, 0, 1)), S(2, 3, 4))
reg("broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3)), S(3))
reg("broadcast_to_ones", lambda x: jnp.broadcast_to(x, (4, 2, 3)), S(2, 1))
reg("expand_dims", lambda x: jnp.expand_dims(x, 1), S(2, 3))
reg("squeeze", jnp.squeeze, S(2, 1, 3))
reg("squeeze_ax", lambda x: jnp.squeeze(x, axis=1), S(2, 1, 3))
reg("concatenate", lambda x, y: jnp.concatenate([x, y], axis=1), S(2, 3), S(2, 2))
reg("stack", lambda x, y: jnp.stack([x, y], axis=1), S(2, 3), S(2, 3))
reg("pad", lambda x: jnp.pad(x, ((1, 2), (0, 1)), constant_values=5.0), S(2, 3))
reg("flip", lambda x: jnp.flip(x, axis=1), S(2, 3))
reg("flip_all", jnp.flip, S(2, 3))
reg("roll", lambda x: jnp.roll(x, 2, axis=1), S(2, 3))
reg("roll_none", lambda x: jnp.roll(x, -1), S(2, 3))
reg("tile", lambda x: jnp.tile(x, (2, 1)), S(2, 3))
reg("tile_more", lambda x: jnp.tile(x, (2, 1, 2)), S(2, 3))
reg("repeat", lambda x: jnp.repeat(x, 2, axis=0), S(2, 3))
reg("repeat_none", lambda x: jnp.repeat(x, 3), S(2, 3))
reg("slice_steps", lambda x: x[1:5:2, ::3], S(5, 6))
reg("slice_neg", lambda x: x[::-1, 4:0:-2], S(5, 6))
reg("slice_neg2", lambda x: x[3::-2, -2:], S(5, 6))
reg("ravel", jnp.ravel, S(2, 3))
reg("swapaxes", lambda x: jnp.swapaxes(x, 0, 2), S(2, 3, 4))
reg("moveaxis", lambda x: jnp.moveaxis(x, 0, -1), S(2, 3, 4))
reg("split", lambda x: jnp.split(x, 3, axis=1)[1], S(2, 6))
reg("split_indices", lambda x: jnp.split(x, [1, 4], axis=1)[2], S(2, 6))
reg("tril", lambda x: jnp.tril(x, -1), S(3, 4))
reg("triu", lambda x: jnp.triu(x, 1), S(3, 4))
reg("sort", lambda x: jnp.sort(x, axis=1), S(3, 4))
reg("sort_desc_flat", lambda x: jnp.sort(x, axis=None, descending=True), S(3, 4))
reg("take", lambda x: jnp.take(x, jnp.array([[2, 0], [1, 1]]), axis=1), S(2, 3))
reg("take_none", lambda x: jnp.take(x, jnp.array([5, -1, 0, 3, 3])), S(2, 3))

# products
reg("matmul", jnp.matmul, S(2, 3), S(3, 4))
reg("matmul_batch", jnp.matmul, S(2, 2, 3), S(3, 4))
reg("matmul_vec", jnp.matmul, S(3), S(3, 4))
reg("matmul_vecr", jnp.matmul, S(2, 3), S(3))
reg("matmul_bb", jnp.matmul, S(2, 1, 2, 3), S(3, 3, 2))
reg("dot", jnp.dot, S(2, 3), S(3))
reg("dot_vec", jnp.dot, S(3), S(3))
reg("dot_mat", jnp.dot, S(2, 3), S(3, 2))
reg("tensordot1", lambda x, y: jnp.tensordot(x, y, axes=1), S(2, 3), S(3, 4))
reg("tensordot2", lambda x, y: jnp.tensordot(x, y, axes=2), S(2, 3, 4), S(3, 4, 2))
reg("tensordot0", lambda x, y: jnp.tensordot(x, y, axes=0), S(2), S(3))
reg("outer", jnp.outer, S(3), S(4))
reg("vdot", jnp.vdot, S(2, 3), S(2, 3))
reg("inner", jnp.inner, S(2, 3), S(4, 3))

# compositions
reg("logsumexp", lambda x: jnp.log(jnp.sum(jnp.exp(x))), S(2, 3))
reg("mlp", lambda x, w: jnp.tanh(x @ w), S(2, 3), S(3, 4))
reg("astype_f32", lambda x: jnp.sin(x).astype(jnp.float32), S(2, 3))

# edge-only functions (no random domain: inputs are given per case)
EDGE = {
    "inv": lambda x: 1.0 / x,
    "maximum0": lambda x: jnp.maximum(x, 0.0),
    "where_sqrt": lambda x: jnp.where(x > 0, jnp.sqrt(x), 0.0),
    "stop_mul": lambda x: lax.stop_gradient(x) * x,
    "stop_only": lambda x: lax.stop_gradient(x) * 2.0,
    "floor": jnp.floor,
    "clip1": lambda x: jnp.clip(x, -1.0, 1.0),
    "take_oob": lambda x: jnp.take(x, jnp.array([0, 5, -1, -4])),
    "norm": lambda x: jnp.sqrt(jnp.sum(x * x)),
    "scale2": lambda x: x * 2.0,
    "mul0": lambda x: x * 0.0,
    "power2": lambda x: jnp.power(x, 2.0),
    "nonsquare": lambda x: jnp.stack([jnp.sin(x[0]) * x[1], x[2] ** 2 + x[0]]),
    "vag_aux": lambda x, y: (jnp.sum(jnp.sin(x) * y), x * y),
}

# ------------------------------------------------------------------ formatting


CASES = []
NAMES = set()


def case(name, fn, mode, ins, outs, params=""):
  assert name not in NAMES, name
  NAMES.add(name)
  x64 = any(str(a.dtype) == "float64" for a in ins)
  p = f"mode={mode}" + (" x64=1" if x64 else "") + (f" {params}" if params else "")
  CASES.append(golden_io.case_text(name, fn, p, ins, outs))


def arr(values, dtype="float64"):
  return jnp.asarray(np.asarray(values, dtype=np.float64), dtype=dtype)


def rng_for(name):
  return np.random.default_rng(zlib.crc32(name.encode()))


def draw(rng, spec, dtype):
  shape, lo, hi, sym = spec
  v = rng.uniform(lo, hi, size=shape)
  if sym:
    v = v * rng.choice([-1.0, 1.0], size=shape)
  return arr(v, dtype)


def like(rng, a):
  return arr(rng.uniform(-1.0, 1.0, size=np.shape(a)), a.dtype)


def summed(f):
  return lambda *a: jnp.sum(f(*a))


def all_args(n):
  return tuple(range(n))

# ------------------------------------------------------------------ modes


def run_mode(name, fn_name, f, mode, x, rng, params=""):
  n = len(x)
  if mode == "grad":
    outs = jax.grad(summed(f), argnums=all_args(n))(*x)
    case(name, fn_name, mode, x, outs, params)
  elif mode == "jvp":
    t = [like(rng, a) for a in x]
    y, ty = jax.jvp(f, tuple(x), tuple(t))
    case(name, fn_name, mode, list(x) + t, [y, ty], params)
  elif mode == "vjp":
    y, pb = jax.vjp(f, *x)
    c = like(rng, y)
    case(name, fn_name, mode, list(x) + [c], pb(c), params)
  elif mode == "hvp":
    t = [like(rng, a) for a in x]
    g = jax.grad(summed(f), argnums=all_args(n))
    _, ht = jax.jvp(g, tuple(x), tuple(t))
    case(name, fn_name, mode, list(x) + t, ht, params)
  else:
    raise ValueError(mode)


def nth(f, k):
  d = f
  for _ in range(k):
    d = jax.grad(summed(d))
  return d


def table_cases():
  jax.config.update("jax_enable_x64", True)
  for name, (f, specs) in FUNCS.items():
    for mode in ("grad", "jvp", "vjp", "hvp"):
      rng = rng_for(name + mode)
      x = [draw(rng, s, "float64") for s in specs]
      run_mode(f"{name}_{mode}", name, f, mode, x, rng)
  # second and third derivatives of the unary elementwise functions (reverse over
  # reverse), at the points of their grad case
  for name, (f, specs) in FUNCS.items():
    if len(specs) != 1 or specs[0][0] != (2, 3) or name in ("clip", "astype_f32"):
      continue
    for k in (2, 3):
      rng = rng_for(name + "nth")
      x = draw(rng, specs[0], "float64")
      case(f"{name}_d{k}", name, "nth", [x], [nth(f, k)(x)], f"order={k}")
  # float32 repeats (x64 off): every dtype of the computation is float32
  jax.config.update("jax_enable_x64", False)
  for name in ("sin", "tanh", "exp", "log1p", "divide", "matmul", "max_ax0", "std_ax1",
               "mlp", "logsumexp", "slice_neg", "take"):
    f, specs = FUNCS[name]
    for mode in ("grad", "jvp", "vjp", "hvp"):
      rng = rng_for(name + mode + "f32")
      x = [draw(rng, s, "float32") for s in specs]
      run_mode(f"{name}_{mode}_f32", name, f, mode, x, rng)


def edge_cases():
  jax.config.update("jax_enable_x64", True)
  E, F = EDGE, {k: v[0] for k, v in FUNCS.items()}

  def grad(name, fn, *x):
    f = E.get(fn) or F[fn]
    case(name, fn, "grad", list(x), jax.grad(summed(f), argnums=all_args(len(x)))(*x))

  def jvp(name, fn, x, t):
    f = E.get(fn) or F[fn]
    y, ty = jax.jvp(f, tuple(x), tuple(t))
    case(name, fn, "jvp", list(x) + list(t), [y, ty])

  grad("abs_at_zero", "abs", arr([0.0, -0.0, 1.0, -2.0]))
  case("abs_d2_at_zero", "abs", "nth", [arr([0.0, 1.0])], [nth(jnp.abs, 2)(arr([0.0, 1.0]))],
       "order=2")
  grad("maximum_tie", "maximum", arr([1.0, 2.0, -1.0]), arr([1.0, 3.0, -1.0]))
  grad("minimum_tie", "minimum", arr([1.0, 2.0, -1.0]), arr([1.0, 3.0, -1.0]))
  jvp("maximum_tie_jvp", "maximum", [arr([1.0, 2.0]), arr([1.0, 3.0])],
      [arr([1.0, 1.0]), arr([3.0, 5.0])])
  grad("maximum0_at_zero", "maximum0", arr([0.0, 1.0, -1.0]))  # relu as maximum: 0.5 at 0
  grad("max_all_ties", "max_all", arr([[1.0, 3.0, 3.0, 0.0], [3.0, -1.0, 2.0, 0.5],
                                       [0.0, 0.0, 1.0, 2.0]]))
  grad("max_ax0_ties", "max_ax0", arr([[1.0, 3.0, 3.0, 0.0], [1.0, -1.0, 3.0, 0.5],
                                       [0.0, 3.0, 3.0, 2.0]]))
  grad("min_all_ties", "min_all", arr([[1.0, 0.0, 3.0, 0.0], [0.0, 4.0, 2.0, 5.0],
                                       [1.0, 2.0, 3.0, 4.0]]))
  jvp("max_all_ties_jvp", "max_all",
      [arr([[1.0, 3.0, 3.0, 0.0], [3.0, -1.0, 2.0, 0.5], [0.0, 0.0, 1.0, 2.0]])],
      [arr([[1.0, 2.0, 4.0, 8.0], [16.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]])])
  grad("sqrt_at_zero", "sqrt", arr([0.0, 4.0]))
  grad("cbrt_at_zero", "cbrt", arr([0.0, 8.0]))
  grad("where_sqrt_nan", "where_sqrt", arr([-1.0, 0.0, 4.0]))  # NaN leaks through where
  jvp("where_sqrt_nan_jvp", "where_sqrt", [arr([-1.0, 0.0, 4.0])], [arr([1.0, 1.0, 1.0])])
  grad("stop_mul", "stop_mul", arr([1.5, -2.0]))
  grad("stop_only", "stop_only", arr([1.5, -2.0]))
  grad("floor_zero", "floor", arr([1.5, -0.5]))
  grad("clip_at_bounds", "clip1", arr([-1.0, 1.0, 0.0, 2.0, -3.0]))
  jvp("take_oob_jvp", "take_oob", [arr([1.0, 2.0, 3.0])], [arr([1.0, 10.0, 100.0])])
  grad("take_oob_grad", "take_oob", arr([1.0, 2.0, 3.0]))
  grad("prod_one_zero", "prod_all", arr([[0.0, 2.0, 3.0, 1.0], [1.0, 1.0, 1.0, 1.0],
                                         [1.0, 1.0, 1.0, 2.0]]))
  grad("prod_two_zeros", "prod_all", arr([[0.0, 2.0, 3.0, 1.0], [1.0, 0.0, 1.0, 1.0],
                                          [1.0, 1.0, 1.0, 2.0]]))
  grad("std_constant_nan", "std_all", arr(np.ones((3, 4))))
  grad("norm_at_zero_nan", "norm", arr([0.0, 0.0]))
  grad("log_at_zero", "log", arr([[0.0, 1.0, 2.0], [0.5, 4.0, 8.0]]))
  grad("arctan2_origin_nan", "arctan2", arr([0.0, 1.0]), arr([0.0, 1.0]))
  grad("hypot_origin", "hypot", arr([0.0, 3.0]), arr([0.0, 4.0]))
  grad("logaddexp_tie", "logaddexp", arr([1.0, 2.0]), arr([1.0, 3.0]))
  # lax.pow with a float exponent: d/dx = y * x**(y-1), NaN at x = y = 0 (0 * inf)
  grad("power_at_zero", "power", arr([0.0, 0.0, 2.0]), arr([0.0, 2.0, 0.0]))
  # constants have zero tangents even when the primal is not finite
  jvp("scale2_inf_jvp", "scale2", [arr([INF, 1.0])], [arr([1.0, 1.0])])
  jvp("mul0_inf_jvp", "mul0", [arr([INF, 1.0])], [arr([1.0, 1.0])])
  grad("mul0_inf_grad", "mul0", arr([INF, 1.0]))
  # x ** 2.0 (a float constant exponent) at negative x
  jvp("power2_neg_jvp", "power2", [arr([-1.5, 2.0])], [arr([1.0, 1.0])])
  grad("power2_neg_grad", "power2", arr([-1.5, 2.0]))
  x = arr([-1.5, 2.0])
  _, ht = jax.jvp(jax.grad(summed(E["power2"])), (x,), (arr([1.0, 1.0]),))
  case("power2_neg_hvp", "power2", "hvp", [x, arr([1.0, 1.0])], [ht])
  # higher order: the sixth derivative of 1/x is 720 / x**7
  x = arr([2.0, 1.0, -0.5, 3.0])
  case("inv_d6", "inv", "nth", [x], [nth(E["inv"], 6)(x)], "order=6")
  case("sin_d5", "sin", "nth", [x], [nth(jnp.sin, 5)(x)], "order=5")
  case("exp_d4", "exp", "nth", [x], [nth(jnp.exp, 4)(x)], "order=4")
  case("tanh_d4", "tanh", "nth", [x], [nth(jnp.tanh, 4)(x)], "order=4")
  case("logaddexp_sum_d2", "logsumexp", "nth", [x], [nth(F["logsumexp"], 2)(x)], "order=2")
  # jacobians of non-square functions through vjp with each basis cotangent
  x = arr([0.5, -1.5, 2.0])
  case("nonsquare_jac", "nonsquare", "jac", [x], [jax.jacrev(E["nonsquare"])(x)])
  x = arr(rng_for("jac").uniform(-1, 1, (3, 4)))
  case("sum_ax1_jac", "sum_ax1", "jac", [x], [jax.jacrev(F["sum_ax1"])(x)])
  case("slice_steps_jac", "slice_steps", "jac", [arr(np.arange(30.0).reshape(5, 6))],
       [jax.jacrev(F["slice_steps"])(arr(np.arange(30.0).reshape(5, 6)))])
  case("pad_jac", "pad", "jac", [x[:2, :3]], [jax.jacrev(F["pad"])(x[:2, :3])])
  # value_and_grad / grad with argnums (0, 1) and has_aux
  x, y = arr([0.5, -1.0, 2.0]), arr([1.5, 2.0, -0.5])
  (v, aux), (gx, gy) = jax.value_and_grad(E["vag_aux"], argnums=(0, 1), has_aux=True)(x, y)
  case("vag_aux", "vag_aux", "vag", [x, y], [v, aux, gx, gy])
  (gx, gy), aux = jax.grad(E["vag_aux"], argnums=(0, 1), has_aux=True)(x, y)
  case("gaux", "vag_aux", "gaux", [x, y], [gx, gy, aux])
  # float32 edge repeats
  jax.config.update("jax_enable_x64", False)
  x = arr([2.0, 1.0, -0.5, 3.0], "float32")
  case("inv_d6_f32", "inv", "nth", [x], [nth(E["inv"], 6)(x)], "order=6")
  x = arr([-1.0, 0.0, 4.0], "float32")
  case("where_sqrt_nan_f32", "where_sqrt", "grad", [x], [jax.grad(summed(E["where_sqrt"]))(x)])


def main():
  table_cases()
  edge_cases()
  golden_io.write(OUT, "# Generated by tools/golden_autodiff.py with jax %s, numpy %s. Cases with "
                  "x64=1 ran with jax_enable_x64 on. Format: tests/support/golden.h.\n"
                  % (jax.__version__, np.__version__), CASES, sep="\n")


if __name__ == "__main__":
  sys.exit(main())
