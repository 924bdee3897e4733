#!/usr/bin/env python3
"""golden_nn.py -- writes tests/golden/nn.txt: JAX's jax.nn results for jaxc's jx_nn_*
(src/lib/nn.c): every activation over special values (NaN, +-inf, -0.0, kinks, large
|x|) in float32, float16, bfloat16 and int32, with its first and second derivatives
(jax.grad of a sum); softmax, log_softmax and logsumexp over axis lists with `where`
masks and their gradients; one_hot; standardize; dot_product_attention with bias, mask,
causal masking, grouped heads and its gradients. Format: see tests/support/golden.h.

Run:  pip install jax numpy;  python3 tools/golden_nn.py  (jax_enable_x64 off)

Case functions and their inputs (params on the case line):
  <act>           in x                      p=<scalar parameter> (elu alpha, gelu
                                             approximate, glu axis, ...)
  grad_<act>      in x; out d sum(f(x)) / dx
  grad2_<act>     in x; out d/dx sum(d/dx sum f)  (the diagonal second derivative)
  softmax, log_softmax     in x [where]     axes=<list|none> where=0/1
  logsumexp                in x [b] [where] axes=.. keepdims=0/1 b=0/1 where=0/1
  grad_<softmax-like>      in x c [b] [where]: d/dx sum(where(mask, f(x) * c, 0))
  one_hot         in x                      n= dtype= axis=
  standardize     in x [mean] [variance] [where]  axes=.. eps=.. mean=0/1 var=0/1 where=0/1
  grad_standardize  in x c [where]: d/dx sum(standardize(x) * c)
  attention       in q k v [bias] [mask]    bias=0/1 mask=0/1 causal=0/1 scale=<float|0>
  init            in key (uint32[2]); out the initializer's array. init=<name> shape=<d,d,..>
                  dtype= and the factory's parameters (scale, stddev, lower, upper, mode,
                  distribution, in_axis, out_axis, value)
  grad_attention  in q k v c [bias] [mask]: d sum(out * c) / d(q, k, v[, bias])
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)

OUT = golden_io.path("nn.txt")
NAN, INF = float("nan"), float("inf")
RNG = np.random.default_rng(20240607)


CASES, NAMES = [], set()


def case(name, fn, ins, outs, **params):
  """ins: arrays; outs: arrays, or a string (an `err` status)."""
  assert name not in NAMES, name
  NAMES.add(name)
  err = outs if isinstance(outs, str) else None
  CASES.append(golden_io.case_text(name, fn, params, ins, [] if err else outs, err))


def arr(values, dtype, shape=None):
  x = jnp.asarray(np.array(values, dtype=np.float64 if "float" in dtype else None),
                  dtype=jnp.dtype(dtype))
  return x.reshape(shape) if shape is not None else x


def rand(shape, lo=-3.0, hi=3.0, dtype="float32"):
  return jnp.asarray(RNG.uniform(lo, hi, size=shape), dtype=jnp.dtype(dtype))


def axes_param(axes):
  if axes is None:
    return "none"
  if isinstance(axes, int):
    axes = (axes,)
  return ",".join(str(a) for a in axes)


# ----------------------------------------------------------------- activations

# name -> (function of x, parameter value written as p=, or None)
ACTS = {
    "relu": (jax.nn.relu, None),
    "relu6": (jax.nn.relu6, None),
    "sigmoid": (jax.nn.sigmoid, None),
    "softplus": (jax.nn.softplus, None),
    "sparse_plus": (jax.nn.sparse_plus, None),
    "soft_sign": (jax.nn.soft_sign, None),
    "silu": (jax.nn.silu, None),
    "swish": (jax.nn.swish, None),
    "log_sigmoid": (jax.nn.log_sigmoid, None),
    "hard_sigmoid": (jax.nn.hard_sigmoid, None),
    "hard_silu": (jax.nn.hard_silu, None),
    "hard_swish": (jax.nn.hard_swish, None),
    "hard_tanh": (jax.nn.hard_tanh, None),
    "selu": (jax.nn.selu, None),
    "mish": (jax.nn.mish, None),
    "identity": (jax.nn.identity, None),
    "leaky_relu": (lambda x: jax.nn.leaky_relu(x, 0.01), 0.01),
    "leaky_relu_0.2": (lambda x: jax.nn.leaky_relu(x, 0.2), 0.2),
    "elu": (lambda x: jax.nn.elu(x, 1.0), 1.0),
    "elu_0.5": (lambda x: jax.nn.elu(x, 0.5), 0.5),
    "celu": (lambda x: jax.nn.celu(x, 1.0), 1.0),
    "celu_2": (lambda x: jax.nn.celu(x, 2.0), 2.0),
    "gelu": (lambda x: jax.nn.gelu(x, approximate=True), 1),
    "gelu_exact": (lambda x: jax.nn.gelu(x, approximate=False), 0),
    "squareplus": (lambda x: jax.nn.squareplus(x, 4.0), 4.0),
    "squareplus_1": (lambda x: jax.nn.squareplus(x, 1.0), 1.0),
}

# Parameter variants -> the jaxc function they call.
VARIANT_OF = {"leaky_relu_0.2": "leaky_relu", "elu_0.5": "elu", "celu_2": "celu",
              "gelu_exact": "gelu", "squareplus_1": "squareplus"}

SPECIAL = [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 5.9, 6.0,
           6.1, -6.0, 10.0, -10.0, 20.0, -20.0, 50.0, -50.0, 87.0, -87.0, 100.0, -100.0,
           1e4, -1e4, 1e-3, -1e-3, 0.1, -0.7, 1e30, -1e30]
SPECIAL_16 = [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 6.0,
              -6.0, 10.0, -10.0, 20.0, -20.0, 0.1, -0.7, 1000.0, -1000.0]
INTS = [0, 1, -1, 2, -2, 3, -3, 5, 6, 7, -7, 100, -100]


def activation_cases():
  for name, (f, p) in ACTS.items():
    fn = VARIANT_OF.get(name, name)
    params = {} if p is None else {"p": p}
    xs = arr(SPECIAL, "float32")
    case(f"{name}_f32", fn, [xs], [f(xs)], **params)
    xr = rand((64,), -8.0, 8.0)
    case(f"{name}_f32_rand", fn, [xr], [f(xr)], **params)
    for dt in ("float16", "bfloat16"):
      x16 = arr(SPECIAL_16, dt)
      case(f"{name}_{dt}", fn, [x16], [f(x16)], **params)
      if name.startswith("hard_"):  # exact (hard_sigmoid's reciprocal multiply)
        x16r = xr.astype(dt)
        case(f"{name}_{dt}_rand", fn, [x16r], [f(x16r)], **params)
    xi = arr(INTS, "int32")
    try:
      out = [f(xi)]
    except TypeError:
      out = "JX_ERR_DTYPE"
    case(f"{name}_i32", fn, [xi], out, **params)
    x2 = rand((2, 3), -4.0, 4.0)
    case(f"{name}_2d", fn, [x2], [f(x2)], **params)
    # Derivatives (float32): at the special values and at random points.
    g = jax.grad(lambda x: jnp.sum(f(x)))
    g2 = jax.grad(lambda x: jnp.sum(g(x)))
    case(f"grad_{name}_f32", f"grad_{fn}", [xs], [g(xs)], **params)
    case(f"grad_{name}_f32_rand", f"grad_{fn}", [xr], [g(xr)], **params)
    xf = arr([v for v in SPECIAL if abs(v) < 1e29 and v == v], "float32")
    case(f"grad2_{name}_f32", f"grad2_{fn}", [xf], [g2(xf)], **params)
    case(f"grad2_{name}_f32_rand", f"grad2_{fn}", [xr], [g2(xr)], **params)


def glu_cases():
  for shape, axis in (((2, 6), -1), ((4, 3), 0), ((2, 4, 2), 1)):
    x = rand(shape)
    tag = "x".join(map(str, shape))
    case(f"glu_{tag}_ax{axis}", "glu", [x], [jax.nn.glu(x, axis)], axis=axis)
    g = jax.grad(lambda x: jnp.sum(jax.nn.glu(x, axis) * jnp.arange(1.0, 1.0 + x.size // 2)
                                   .reshape(jax.nn.glu(x, axis).shape)))
    case(f"grad_glu_{tag}_ax{axis}", "grad_glu", [x], [g(x)], axis=axis)
  xs = arr([NAN, INF, -INF, 0.0, 100.0, -100.0, 1.0, -0.0], "float32", (2, 4))
  case("glu_special", "glu", [xs], [jax.nn.glu(xs, -1)], axis=-1)
  case("glu_odd", "glu", [rand((2, 3))], "JX_ERR_SHAPE", axis=-1)


# ------------------------------------------------------- softmax and friends

def softmax_cases():
  x35 = rand((3, 5), -4.0, 4.0)
  big = arr([[1e30, -1e30, 0.0, 5.0, 88.0], [-INF, 1.0, 2.0, -INF, 3.0],
             [100.0, 100.0, 100.0, -100.0, 0.0]], "float32")
  special = arr([[INF, 1.0, 2.0, 3.0, 4.0], [NAN, 1.0, 2.0, 3.0, 4.0],
                 [-INF, -INF, -INF, -INF, -INF]], "float32")
  x234 = rand((2, 3, 4), -5.0, 5.0)
  mask35 = arr(RNG.uniform(size=(3, 5)) > 0.35, "bool").at[2].set(False).at[0, 1].set(True)
  mask5 = arr([True, False, True, True, False], "bool")
  inputs = [("x35", x35), ("big", big), ("special", special), ("x234", x234)]
  axes_list = [-1, 0, None, (0, 1), (-1, 0)]
  for fname, f in (("softmax", jax.nn.softmax), ("log_softmax", jax.nn.log_softmax)):
    for tag, x in inputs:
      for ax in axes_list:
        if x.ndim == 2 and isinstance(ax, tuple) and len(ax) > 2:
          continue
        at = axes_param(ax).replace(",", "_").replace("-", "m")
        case(f"{fname}_{tag}_ax{at}", fname, [x], [f(x, axis=ax)], axes=axes_param(ax), where=0)
    # where masks (full shape; broadcast row; fully masked row).
    for mtag, m in (("m35", mask35), ("m5", mask5)):
      for ax in (-1, 0, None):
        at = axes_param(ax).replace("-", "m")
        for tag, x in (("x35", x35), ("big", big)):
          case(f"{fname}_{tag}_{mtag}_ax{at}", fname, [x, m], [f(x, axis=ax, where=m)],
               axes=axes_param(ax), where=1)
    # Gradients: d/dx sum(where(mask, f(x) * c, 0)).
    c35 = rand((3, 5), -1.0, 1.0)
    for tag, x in (("x35", x35), ("big", big), ("special", special)):
      for ax in (-1, 0, None):
        at = axes_param(ax).replace("-", "m")
        g = jax.grad(lambda x: jnp.sum(f(x, axis=ax) * c35))
        case(f"grad_{fname}_{tag}_ax{at}", f"grad_{fname}", [x, c35], [g(x)],
             axes=axes_param(ax), where=0)
        for mtag, m in (("m35", mask35), ("m5", mask5)):
          g = jax.grad(lambda x: jnp.sum(jnp.where(m, f(x, axis=ax, where=m) * c35, 0.0)))
          case(f"grad_{fname}_{tag}_{mtag}_ax{at}", f"grad_{fname}", [x, c35, m], [g(x)],
               axes=axes_param(ax), where=1)
  # Integer input, empty axis, float16.
  xi = arr([[1, 2, 3], [-4, 0, 4]], "int32")
  xe = jnp.zeros((3, 0), jnp.float32)
  xh = arr([[1.0, 2.0, 3.0], [-4.0, 0.0, 1000.0]], "float16")
  for fname, f in (("softmax", jax.nn.softmax), ("log_softmax", jax.nn.log_softmax)):
    case(f"{fname}_i32", fname, [xi], [f(xi)], axes="-1", where=0)
    case(f"{fname}_empty", fname, [xe], [f(xe)], axes="-1", where=0)
    case(f"{fname}_empty_ax0", fname, [xe], [f(xe, axis=0)], axes="0", where=0)
    case(f"{fname}_f16", fname, [xh], [f(xh)], axes="-1", where=0)
    case(f"{fname}_badaxis", fname, [x35], "JX_ERR_SHAPE", axes="2", where=0)
    case(f"{fname}_badmask", fname, [x35, arr([True, False, True], "bool")], "JX_ERR_SHAPE",
         axes="-1", where=1)

  lse = jax.nn.logsumexp
  bpos = rand((3, 5), 0.1, 2.0)
  bmix = arr([[1.0, -1.0, 0.0, 2.0, 0.5], [-1.0, -1.0, 0.0, 0.0, -2.0],
              [0.0, 0.0, 0.0, 0.0, 0.0]], "float32")
  for tag, x in inputs:
    for ax in axes_list:
      for kd in (0, 1):
        at = axes_param(ax).replace(",", "_").replace("-", "m")
        case(f"logsumexp_{tag}_ax{at}_kd{kd}", "logsumexp", [x], [lse(x, axis=ax, keepdims=bool(kd))],
             axes=axes_param(ax), keepdims=kd, b=0, where=0)
  for btag, b in (("bpos", bpos), ("bmix", bmix), ("b5", arr([1.0, 2.0, 0.0, 1.0, -0.5], "float32"))):
    for ax in (-1, 0, None):
      at = axes_param(ax).replace("-", "m")
      for tag, x in (("x35", x35), ("big", big)):
        case(f"logsumexp_{tag}_{btag}_ax{at}", "logsumexp", [x, b], [lse(x, axis=ax, b=b)],
             axes=axes_param(ax), keepdims=0, b=1, where=0)
  for mtag, m in (("m35", mask35), ("m5", mask5)):
    for ax in (-1, 0, None):
      at = axes_param(ax).replace("-", "m")
      for tag, x in (("x35", x35), ("big", big), ("special", special)):
        case(f"logsumexp_{tag}_{mtag}_ax{at}", "logsumexp", [x, m], [lse(x, axis=ax, where=m)],
             axes=axes_param(ax), keepdims=0, b=0, where=1)
  case("logsumexp_i32", "logsumexp", [xi], [lse(xi, axis=-1)], axes="-1", keepdims=0, b=0,
       where=0)
  case("logsumexp_empty", "logsumexp", [xe], [lse(xe, axis=-1)], axes="-1", keepdims=0, b=0,
       where=0)
  case("logsumexp_f16", "logsumexp", [xh], [lse(xh, axis=-1)], axes="-1", keepdims=0, b=0,
       where=0)
  case("logsumexp_badb", "logsumexp", [x35, rand((2, 5))], "JX_ERR_SHAPE", axes="-1",
       keepdims=0, b=1, where=0)
  # Gradients of sum(lse * c): finite even for huge inputs.
  c3 = rand((3,), -1.0, 1.0)
  for tag, x in (("x35", x35), ("big", big), ("special", special)):
    g = jax.grad(lambda x: jnp.sum(lse(x, axis=-1) * c3))
    case(f"grad_logsumexp_{tag}", "grad_logsumexp", [x, c3], [g(x)], axes="-1", keepdims=0,
         b=0, where=0)
    g = jax.grad(lambda x: jnp.sum(lse(x, axis=-1, b=bpos) * c3))
    case(f"grad_logsumexp_{tag}_bpos", "grad_logsumexp", [x, c3, bpos], [g(x)], axes="-1",
         keepdims=0, b=1, where=0)
    g = jax.grad(lambda x: jnp.sum(lse(x, axis=-1, where=mask35) * c3))
    case(f"grad_logsumexp_{tag}_m35", "grad_logsumexp", [x, c3, mask35], [g(x)], axes="-1",
         keepdims=0, b=0, where=1)
  c1 = arr(0.75, "float32")
  g = jax.grad(lambda x: jnp.sum(lse(x) * c1))
  case("grad_logsumexp_all", "grad_logsumexp", [x234, c1], [g(x234)], axes="none",
       keepdims=0, b=0, where=0)


# ------------------------------------------------------------ one_hot, standardize

def one_hot_cases():
  x = arr([0, 2, -1, 3, 1, 5], "int32")
  for n in (0, 1, 3, 4):
    for dt in ("float32", "int32", "bool", "bfloat16"):
      case(f"one_hot_n{n}_{dt}", "one_hot", [x], [jax.nn.one_hot(x, n, dtype=jnp.dtype(dt))],
           n=n, dtype=dt, axis=-1)
  x2 = arr([[0, 1, 2], [2, 1, 0]], "int32")
  for axis in (-1, 0, 1, 2, -3):
    case(f"one_hot_2d_ax{axis}".replace("-", "m"), "one_hot", [x2],
         [jax.nn.one_hot(x2, 3, axis=axis)], n=3, dtype="float32", axis=axis)
  case("one_hot_u8", "one_hot", [arr([0, 1, 255], "uint8")],
       [jax.nn.one_hot(arr([0, 1, 255], "uint8"), 3)], n=3, dtype="float32", axis=-1)
  case("one_hot_scalar", "one_hot", [arr(2, "int32")], [jax.nn.one_hot(arr(2, "int32"), 4)],
       n=4, dtype="float32", axis=-1)
  case("one_hot_badaxis", "one_hot", [x2], "JX_ERR_SHAPE", n=3, dtype="float32", axis=3)
  case("one_hot_negn", "one_hot", [x2], "JX_ERR_VALUE", n=-1, dtype="float32", axis=-1)


def standardize_cases():
  x = rand((4, 6), -3.0, 5.0)
  x3 = rand((2, 3, 4), -2.0, 2.0)
  for tag, xx in (("x46", x), ("x234", x3)):
    for ax in (-1, 0, None, (0, 1)):
      at = axes_param(ax).replace(",", "_").replace("-", "m")
      for eps in (1e-5, 0.1):
        case(f"standardize_{tag}_ax{at}_eps{eps}", "standardize", [xx],
             [jax.nn.standardize(xx, axis=ax, epsilon=eps)], axes=axes_param(ax), eps=eps,
             mean=0, var=0, where=0)
  m = arr(RNG.uniform(size=(4, 6)) > 0.3, "bool")
  case("standardize_where", "standardize", [x, m], [jax.nn.standardize(x, axis=-1, where=m)],
       axes="-1", eps=1e-5, mean=0, var=0, where=1)
  mean = rand((4, 1), -1.0, 1.0)
  var = rand((4, 1), 0.5, 2.0)
  case("standardize_mean", "standardize", [x, mean],
       [jax.nn.standardize(x, axis=-1, mean=mean)], axes="-1", eps=1e-5, mean=1, var=0,
       where=0)
  case("standardize_mean_var", "standardize", [x, mean, var],
       [jax.nn.standardize(x, axis=-1, mean=mean, variance=var)], axes="-1", eps=1e-5,
       mean=1, var=1, where=0)
  const = jnp.ones((2, 3), jnp.float32) * 3.0
  case("standardize_const", "standardize", [const], [jax.nn.standardize(const)], axes="-1",
       eps=1e-5, mean=0, var=0, where=0)
  xi = arr([[1, 2, 3], [4, 6, 8]], "int32")
  case("standardize_i32", "standardize", [xi], [jax.nn.standardize(xi)], axes="-1", eps=1e-5,
       mean=0, var=0, where=0)
  c = rand((4, 6), -1.0, 1.0)
  for ax in (-1, 0, None):
    at = axes_param(ax).replace("-", "m")
    g = jax.grad(lambda x: jnp.sum(jax.nn.standardize(x, axis=ax) * c))
    case(f"grad_standardize_ax{at}", "grad_standardize", [x, c], [g(x)], axes=axes_param(ax),
         eps=1e-5, mean=0, var=0, where=0)
  g = jax.grad(lambda x: jnp.sum(jax.nn.standardize(x, axis=-1, where=m) * c))
  case("grad_standardize_where", "grad_standardize", [x, c, m], [g(x)], axes="-1", eps=1e-5,
       mean=0, var=0, where=1)


# ------------------------------------------------------------------ attention

def attention_cases():
  dpa = jax.nn.dot_product_attention

  def run(name, q, k, v, bias=None, mask=None, causal=False, scale=None, grad=True):
    params = dict(bias=int(bias is not None), mask=int(mask is not None), causal=int(causal),
                  scale=0 if scale is None else scale)
    extra = [a for a in (bias, mask) if a is not None]
    out = dpa(q, k, v, bias=bias, mask=mask, is_causal=causal, scale=scale)
    case(f"attention_{name}", "attention", [q, k, v] + extra, [out], **params)
    if grad and q.dtype == jnp.float32:
      c = rand(out.shape, -1.0, 1.0)
      g = jax.grad(lambda q, k, v, bias: jnp.sum(dpa(q, k, v, bias=bias, mask=mask,
                                                      is_causal=causal, scale=scale) * c),
                   argnums=(0, 1, 2) if bias is None else (0, 1, 2, 3))
      case(f"grad_attention_{name}", "grad_attention", [q, k, v, c] + extra,
           list(g(q, k, v, bias)), **params)

  B, T, S, N, H = 2, 3, 4, 2, 3
  q, k, v = rand((B, T, N, H)), rand((B, S, N, H)), rand((B, S, N, H))
  run("basic", q, k, v)
  run("scale", q, k, v, scale=0.3)
  run("bias", q, k, v, bias=rand((B, N, T, S)))
  run("bias_bcast", q, k, v, bias=rand((1, 1, T, S)))
  run("bias_head", q, k, v, bias=rand((1, N, 1, S)))
  mask = arr(RNG.uniform(size=(B, 1, T, S)) > 0.3, "bool")
  mask = mask.at[0, 0, 1].set(False)  # one fully masked row
  run("mask", q, k, v, mask=mask)
  run("causal", q, k, v, causal=True)
  run("causal_mask_bias", q, k, v, bias=rand((B, N, T, S)), mask=mask, causal=True)
  qs = rand((B, S, N, H))
  run("causal_square", qs, k, v, causal=True)
  # Grouped-query attention: 4 query heads over 2 key/value heads; 1 kv head.
  q4 = rand((B, T, 4, H))
  run("gqa", q4, k, v, bias=rand((B, 4, T, S)), causal=True)
  k1, v1 = rand((B, S, 1, H)), rand((B, S, 1, H))
  run("mqa", q4, k1, v1, mask=arr(RNG.uniform(size=(1, 4, T, S)) > 0.2, "bool"))
  # Rank 3 (no batch), bias of rank 2.
  run("rank3", q[0], k[0], v[0], bias=rand((T, S)))
  # Half precision.
  for dt in ("float16", "bfloat16"):
    run(f"{dt}", q.astype(dt), k.astype(dt), v.astype(dt), causal=True, grad=False)
  # Errors.
  case("attention_bad_heads", "attention", [rand((B, T, 3, H)), k, v], "JX_ERR_SHAPE",
       bias=0, mask=0, causal=0, scale=0)
  case("attention_bad_h", "attention", [rand((B, T, N, 5)), k, v], "JX_ERR_SHAPE",
       bias=0, mask=0, causal=0, scale=0)
  case("attention_bad_dtype", "attention", [q, k, v.astype("float16")], "JX_ERR_DTYPE",
       bias=0, mask=0, causal=0, scale=0)
  case("attention_bad_mask", "attention", [q, k, v, rand((B, N, T, S))], "JX_ERR_DTYPE",
       bias=0, mask=1, causal=0, scale=0)
  case("attention_bad_bias", "attention", [q, k, v, rand((B, N, T, 3))], "JX_ERR_SHAPE",
       bias=1, mask=0, causal=0, scale=0)


# --------------------------------------------------------------- initializers

def initializer_cases():
  ini = jax.nn.initializers

  def run(name, initializer, key, shape, dtype, **params):
    shape_p = ",".join(map(str, shape)) if shape else "scalar"
    try:
      out = [initializer(key, shape, jnp.dtype(dtype))]
    except ValueError as e:  # JAX raises ValueError for both
      out = "JX_ERR_DTYPE" if "dtype" in str(e) else "JX_ERR_SHAPE"
    case(f"init_{name}", "init", [key], out, shape=shape_p, dtype=dtype, **params)

  k0, k1, k2 = jax.random.PRNGKey(0), jax.random.PRNGKey(42), jax.random.PRNGKey(2024)
  run("zeros", ini.zeros, k0, (2, 3), "float32", init="zeros")
  run("ones_bf16", ini.ones, k0, (4,), "bfloat16", init="ones")
  run("constant", ini.constant(-1.5), k0, (3, 2), "float32", init="constant", value=-1.5)
  run("uniform", ini.uniform(0.5), k1, (3, 4), "float32", init="uniform", scale=0.5)
  run("uniform_default", ini.uniform(), k2, (2, 5), "float32", init="uniform", scale=0.01)
  run("uniform_f16", ini.uniform(2.0), k1, (6,), "float16", init="uniform", scale=2.0)
  run("normal", ini.normal(2.0), k1, (5,), "float32", init="normal", stddev=2.0)
  run("normal_2d", ini.normal(0.01), k0, (3, 7), "float32", init="normal", stddev=0.01)
  run("normal_bf16", ini.normal(1.0), k2, (2, 3), "bfloat16", init="normal", stddev=1.0)
  run("truncated_normal", ini.truncated_normal(0.3, lower=-1.0, upper=2.0), k1, (4, 4),
      "float32", init="truncated_normal", stddev=0.3, lower=-1.0, upper=2.0)
  run("truncated_normal_default", ini.truncated_normal(), k0, (10,), "float32",
      init="truncated_normal", stddev=0.01, lower=-2.0, upper=2.0)
  for mode in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
    for dist in ("truncated_normal", "normal", "uniform"):
      for shape, ia, oa in (((4, 6), -2, -1), ((3, 4, 5), 0, 2), ((2, 3, 5, 7), 1, -1)):
        tag = "x".join(map(str, shape))
        run(f"vs_{mode}_{dist}_{tag}", ini.variance_scaling(0.7, mode, dist, ia, oa), k2,
            shape, "float32", init="variance_scaling", scale=0.7, mode=mode,
            distribution=dist, in_axis=ia, out_axis=oa)
  for name in ("glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform",
               "lecun_normal"):
    for shape, key in (((4, 6), k1), ((3, 3, 2, 8), k0)):
      tag = "x".join(map(str, shape))
      run(f"{name}_{tag}", getattr(ini, name)(), key, shape, "float32", init=name)
    run(f"{name}_1d", getattr(ini, name)(), k0, (5,), "float32", init=name)
  run("glorot_uniform_bf16", ini.glorot_uniform(), k1, (8, 4), "bfloat16", init="glorot_uniform")
  run("he_normal_int", ini.he_normal(), k1, (8, 4), "int32", init="he_normal")


def softmax_16bit_cases():
  # Random rows in 16-bit floats, compared bit for bit (test_nn.c: names ending _exact):
  # XLA's CPU computes bfloat16's softmax division in float32 (one rounding), float16's
  # with a float16 reciprocal, and feeds log_softmax's bfloat16 exps (standardize's
  # squares) to the float32 sum unrounded. Its own RNG, so the cases above keep their values.
  rng = np.random.default_rng(90)
  x = jnp.asarray(rng.standard_normal((16, 64)) * 3, jnp.float32)
  for dt in ("bfloat16", "float16"):
    xd = x.astype(dt)
    case(f"softmax_{dt}_rand_exact", "softmax", [xd], [jax.nn.softmax(xd, axis=-1)], axes="-1",
         where=0)
  for dt in ("bfloat16", "float16"):
    xd = x.astype(dt)
    case(f"log_softmax_{dt}_rand_exact", "log_softmax", [xd], [jax.nn.log_softmax(xd, axis=-1)],
         axes="-1", where=0)
    case(f"standardize_{dt}_rand_exact", "standardize", [xd], [jax.nn.standardize(xd, axis=-1)],
         axes="-1", eps=1e-5, mean=0, var=0, where=0)


def main():
  activation_cases()
  glu_cases()
  softmax_cases()
  one_hot_cases()
  standardize_cases()
  attention_cases()
  initializer_cases()
  softmax_16bit_cases()
  golden_io.write(OUT, "# Generated by tools/golden_nn.py with jax %s. Do not edit.\n"
                  "# Format: tests/support/golden.h. Case functions: see the script's "
                  "docstring.\n\n" % jax.__version__, CASES, sep="\n")


if __name__ == "__main__":
  main()
