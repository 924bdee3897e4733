#!/usr/bin/env python3
"""golden_custom.py -- writes tests/golden/custom.txt: JAX's results for jaxc's custom
derivatives and checkpoint (src/lib/custom.c): custom_jvp (log1pexp's stable
derivative, a rule calling the function itself, nondiff_argnums), custom_vjp
(clip_gradient, residuals, a bwd that is not the derivative), under grad, jvp, vmap
and their compositions; checkpoint of functions closing over traced values (inside a
scan, under grad, jvp and vmap) and over a constant. Read by tests/lib/test_custom.c, which runs each case eagerly
and under jit. Format: tests/support/golden.h.

Run:  python3 tools/golden_custom.py  (jax_enable_x64 off)
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)
OUT = golden_io.path("custom.txt")
RNG = np.random.RandomState(16)


CASES = []


def case(name, fn, args, outs):
  CASES.append(golden_io.case_text(name, fn, None, args, outs))



# ---- custom_jvp (JAX's docs: "Custom derivative rules for JAX-transformable Python
# functions"); tests/lib/test_custom.c defines the same functions.
@jax.custom_jvp
def log1pexp(x):
  return jnp.log1p(jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
  x, = primals
  t, = tangents
  return log1pexp(x), t * (1. - 1. / (1. + jnp.exp(x)))


@jax.custom_jvp
def f_sin(x, y):
  return jnp.sin(x) * y


@f_sin.defjvp
def f_sin_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  return f_sin(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot


# nondiff_argnums: k is static in JAX (a Python float), an array operand in C.
K = 3.0


@jax.custom_jvp
def scaled_tanh(x):
  return K * jnp.tanh(x)


@scaled_tanh.defjvp
def scaled_tanh_jvp(primals, tangents):  # deliberately not the true derivative
  x, = primals
  t, = tangents
  return scaled_tanh(x), K * 2.0 * t * x


# ---- custom_vjp
@jax.custom_vjp
def clip_gradient(lo, hi, x):
  return x


def clip_gradient_fwd(lo, hi, x):
  return x, (lo, hi)


def clip_gradient_bwd(res, g):
  lo, hi = res
  return (jnp.zeros_like(lo), jnp.zeros_like(hi), jnp.clip(g, lo, hi))


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


@jax.custom_vjp
def g_sin(x, y):
  return jnp.sin(x) * y


def g_sin_fwd(x, y):
  return jnp.sin(x) * y, (jnp.cos(x), jnp.sin(x), y)


def g_sin_bwd(res, g):
  cos_x, sin_x, y = res
  return (cos_x * g * y, sin_x * g)


g_sin.defvjp(g_sin_fwd, g_sin_bwd)


@jax.custom_vjp
def square_wrong(x):  # bwd is not the derivative: proves bwd is what grad runs
  return x * x


def square_wrong_fwd(x):
  return x * x, x


def square_wrong_bwd(x, g):
  return (10.0 * x * g,)


square_wrong.defvjp(square_wrong_fwd, square_wrong_bwd)


# ---- checkpoint: a 3-layer tanh MLP, each layer checkpointed with a policy; the values
# and gradients equal the plain function's (tests/lib/test_checkpoint.c).
POLICIES = {"nothing": jax.checkpoint_policies.nothing_saveable,
            "everything": jax.checkpoint_policies.everything_saveable,
            "dots": jax.checkpoint_policies.dots_saveable,
            "dots_no_batch": jax.checkpoint_policies.dots_with_no_batch_dims_saveable}


def layer(w, h):
  return jnp.tanh(h @ w)


def mlp(policy, w1, w2, w3, x):
  f = layer if policy is None else jax.checkpoint(layer, policy=POLICIES[policy])
  return jnp.sum(f(w3, f(w2, f(w1, x))) ** 2)


def rand(*shape):
  return jnp.asarray(np.round(RNG.uniform(-2, 2, size=shape) * 16) / 16, jnp.float32)


# ---- checkpoint of functions closing over traced values (JAX's closure conversion:
# the values become leading operands of the remat equation); tests/lib/test_checkpoint.c
# defines the same functions, w reached through the C function's ctx.
NOTHING = jax.checkpoint_policies.nothing_saveable
CONST = jnp.asarray([0.5, -1.25, 2.0, 0.75], jnp.float32)  # a constant, not traced


def scan_remat(w, xs):  # the remat-inside-scan pattern: w closed over by the scan body
  body = jax.checkpoint(lambda c, x: (jnp.sin(c * w + x), jnp.cos(c)), policy=NOTHING)
  c, ys = lax.scan(body, jnp.float32(1.0), xs)
  return c + jnp.sum(ys)


def remat_closure(w, x):  # checkpoint(x -> sin(x * w) * w)(x), w closed over
  return jax.checkpoint(lambda x: jnp.sin(x * w) * w, policy=NOTHING)(x)


def remat_const(x):  # checkpoint(x -> sin(x * CONST))(x): CONST is no tracer
  return jax.checkpoint(lambda x: jnp.sin(x * CONST), policy=NOTHING)(x)


def closure_cases():
  w, xs = jnp.float32(2.0), jnp.asarray([0.3, -0.7, 1.1], jnp.float32)
  case("scan_remat", "scan_remat", [w, xs], [scan_remat(w, xs)])
  case("grad_scan_remat", "grad_scan_remat", [w, xs], list(jax.grad(scan_remat, (0, 1))(w, xs)))
  x = jnp.asarray([0.25, -0.5, 1.5, 3.0], jnp.float32)
  tw, tx = jnp.float32(-0.5), jnp.asarray([1.0, 0.5, -2.0, 0.25], jnp.float32)
  p, t = jax.jvp(remat_closure, (w, x), (tw, tx))
  case("jvp_remat_closure", "jvp_remat_closure", [w, x, tw, tx], [p, t])
  loss = lambda w, x: jnp.sum(remat_closure(w, x))
  case("grad_remat_closure", "grad_remat_closure", [w, x], list(jax.grad(loss, (0, 1))(w, x)))
  case("grad_grad_remat_closure", "grad_grad_remat_closure", [w, x],
       [jax.grad(jax.grad(loss))(w, x)])
  ws = jnp.asarray([0.5, -1.0, 2.0], jnp.float32)
  case("vmap_remat_closure", "vmap_remat_closure", [ws, x],
       [jax.vmap(remat_closure, (0, None))(ws, x)])
  case("vmap_grad_remat_closure", "vmap_grad_remat_closure", [ws, x],
       list(jax.vmap(jax.grad(loss, (0, 1)), (0, None))(ws, x)))
  case("grad_remat_const", "grad_remat_const", [x], [jax.grad(lambda x: jnp.sum(remat_const(x)))(x)])


def sumf(f, *nums):
  return jax.grad(lambda *a: jnp.sum(f(*a)), nums if len(nums) > 1 else nums[0])


def main():
  x, y = rand(5), rand(5)
  xs = jnp.asarray([100.0, 0.0, -3.0, 5.0, 0.5], jnp.float32)
  case("log1pexp", "log1pexp", [x], [log1pexp(x)])
  case("grad_log1pexp", "grad_log1pexp", [xs], [sumf(log1pexp, 0)(xs)])
  case("vmap_grad_log1pexp", "vmap_grad_log1pexp", [xs], [jax.vmap(jax.grad(log1pexp))(xs)])
  case("grad_vmap_log1pexp", "grad_vmap_log1pexp", [xs], [sumf(jax.vmap(log1pexp), 0)(xs)])
  tx = rand(5)
  p, t = jax.jvp(log1pexp, (xs,), (tx,))
  case("jvp_log1pexp", "jvp_log1pexp", [xs, tx], [p, t])
  case("f_sin", "f_sin", [x, y], [f_sin(x, y)])
  case("grad_f_sin", "grad_f_sin", [x, y], list(sumf(f_sin, 0, 1)(x, y)))
  case("grad_grad_f_sin", "grad_grad_f_sin", [x, y],
       [sumf(lambda x, y: sumf(f_sin, 0)(x, y), 0)(x, y)])
  ys = rand(4, 5)
  case("grad_vmap_f_sin", "grad_vmap_f_sin", [x, ys],
       list(sumf(jax.vmap(f_sin, (None, 0)), 0, 1)(x, ys)))
  k = jnp.float32(K)
  case("scaled_tanh", "scaled_tanh", [k, x], [scaled_tanh(x)])
  case("grad_scaled_tanh", "grad_scaled_tanh", [k, x], [sumf(scaled_tanh, 0)(x)])
  lo, hi = jnp.float32(-0.75), jnp.float32(0.75)
  ts = jnp.linspace(0., 10., 16, dtype=jnp.float32)
  clip_sin = lambda lo, hi, x: clip_gradient(lo, hi, jnp.sin(x) * 3.0)
  case("clip_gradient", "clip_gradient", [lo, hi, ts], [clip_sin(lo, hi, ts)])
  case("grad_clip_gradient", "grad_clip_gradient", [lo, hi, ts], [sumf(clip_sin, 2)(lo, hi, ts)])
  case("vmap_grad_clip_gradient", "vmap_grad_clip_gradient", [lo, hi, ts],
       [jax.vmap(jax.grad(clip_sin, 2), (None, None, 0))(lo, hi, ts)])
  case("g_sin", "g_sin", [x, y], [g_sin(x, y)])
  case("grad_g_sin", "grad_g_sin", [x, y], list(sumf(g_sin, 0, 1)(x, y)))
  case("grad_vmap_g_sin", "grad_vmap_g_sin", [x, ys],
       list(sumf(jax.vmap(g_sin, (None, 0)), 0, 1)(x, ys)))
  case("grad_square_wrong", "grad_square_wrong", [x], [sumf(square_wrong, 0)(x)])
  w1, w2, w3, xb = rand(5, 6) * 0.5, rand(6, 6) * 0.5, rand(6, 3) * 0.5, rand(4, 5)
  case("mlp", "mlp", [w1, w2, w3, xb], [mlp(None, w1, w2, w3, xb)])
  for pol in POLICIES:
    case(f"grad_mlp_{pol}", f"grad_mlp_{pol}", [w1, w2, w3, xb],
         list(jax.grad(lambda *a: mlp(pol, *a), (0, 1, 2, 3))(w1, w2, w3, xb)))
  xs3 = rand(3, 4, 5)
  case("vmap_grad_mlp_nothing", "vmap_grad_mlp_nothing", [w1, w2, w3, xs3],
       [jax.vmap(jax.grad(lambda *a: mlp("nothing", *a)), (None, None, None, 0))(w1, w2, w3, xs3)])
  closure_cases()
  golden_io.write(OUT, "# Generated by tools/golden_custom.py with jax %s -- do not edit.\n"
                  "# Format: tests/support/golden.h.\n\n" % jax.__version__, CASES)


if __name__ == "__main__":
  main()
