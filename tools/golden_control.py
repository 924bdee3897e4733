#!/usr/bin/env python3
"""golden_control.py -- writes tests/golden/control.txt: JAX's results for jaxc's
control flow (src/lib/control.c): lax.switch / lax.cond values, grad, jvp and vmap
(batched and unbatched index), out-of-range indices (clamped), branches closing over
traced values (also inside a scan) and over a constant. Read by
tests/lib/test_control.c, which runs each case eagerly and under jit. Also
tests/golden/loops.txt for src/lib/loops.c (read by tests/lib/test_loops.c):
while_loop, fori_loop, scan (forward and reverse), map -- values, jvp, grad, vmap
(a batched while predicate: lanes with different trip counts); the bounded while's
gradient against JAX's gradient of the same loop as fori_loop (JAX cannot
reverse-differentiate while_loop). Format: tests/support/golden.h.

Run:  python3 tools/golden_control.py  (jax_enable_x64 off)
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)
OUT = golden_io.path("control.txt")
RNG = np.random.RandomState(16)


CASES = []


def case(name, fn, args, outs):
  CASES.append(golden_io.case_text(name, fn, None, args, outs))


# The branches the C test defines (tests/lib/test_control.c, same order).
BRANCHES = [lambda x, y: jnp.sin(x) * y,
            lambda x, y: jnp.cos(x) + y,
            lambda x, y: x * x * y]


def switch3(i, x, y):
  return lax.switch(i, BRANCHES, x, y)


def cond2(p, x, y):  # true: sin(x) * y, false: cos(x) + y
  return lax.cond(p, BRANCHES[0], BRANCHES[1], x, y)


def loss(i, x, y):
  return jnp.sum(switch3(i, x, y))


def rand(*shape):
  return jnp.asarray(np.round(RNG.uniform(-2, 2, size=shape) * 16) / 16, jnp.float32)


# Branches closing over traced values (JAX's closure conversion: the union of the
# branches' closed-over values becomes leading operands of the cond, taken by every
# branch); tests/lib/test_control.c defines the same functions, w and v reached through
# the C branches' ctx.
CONST = jnp.asarray([0.5, -1.25, 2.0], jnp.float32)  # a constant, not traced


def cond_closure(p, w, x):  # true: sin(x * w), false: cos(x)
  return lax.cond(p, lambda x: jnp.sin(x * w), jnp.cos, x)


def switch_closure(i, w, v, x):  # sin(x * w), x + v, x * w * v
  return lax.switch(i, [lambda x: jnp.sin(x * w), lambda x: x + v, lambda x: x * w * v], x)


def scan_cond(w, xs):  # a cond closing over w inside a scan body, under grad
  def body(c, x):
    c = lax.cond(x > 0, lambda c: jnp.sin(c * w), lambda c: c * 0.5 + w, c)
    return c, c * x
  c, ys = lax.scan(body, jnp.float32(1.0), xs)
  return c + jnp.sum(ys)


def closure_cases():
  rng = np.random.RandomState(17)  # its own draws: loops_cases' inputs stay as they were
  rand = lambda *shape: jnp.asarray(np.round(rng.uniform(-2, 2, size=shape) * 16) / 16, jnp.float32)
  w, v, x = rand(3), rand(3), rand(3)
  for b in (True, False):
    p = jnp.bool_(b)
    case(f"grad_cond_closure_{int(b)}", "grad_cond_closure", [p, w, x],
         list(jax.grad(lambda p, w, x: jnp.sum(cond_closure(p, w, x)), (1, 2))(p, w, x)))
  tw, tv, tx = rand(3), rand(3), rand(3)
  for k in (0, 1, 2):
    i = jnp.int32(k)
    case(f"switch_closure_{k}", "switch_closure", [i, w, v, x], [switch_closure(i, w, v, x)])
    case(f"grad_switch_closure_{k}", "grad_switch_closure", [i, w, v, x],
         list(jax.grad(lambda i, w, v, x: jnp.sum(switch_closure(i, w, v, x)), (1, 2, 3))(i, w, v, x)))
    p, t = jax.jvp(lambda w, v, x: switch_closure(i, w, v, x), (w, v, x), (tw, tv, tx))
    case(f"jvp_switch_closure_{k}", "jvp_switch_closure", [i, w, v, x, tw, tv, tx], [p, t])
  idx, ws = jnp.asarray([2, 0, 1, 0], jnp.int32), rand(4, 3)
  case("vmap_switch_closure_batched_index", "vmap_switch_closure_i", [idx, ws, v, x],
       [jax.vmap(switch_closure, (0, 0, None, None))(idx, ws, v, x)])
  case("vmap_switch_closure_unbatched_index", "vmap_switch_closure_w", [jnp.int32(2), ws, v, x],
       [jax.vmap(switch_closure, (None, 0, None, None))(jnp.int32(2), ws, v, x)])
  xs = jnp.asarray([0.5, -1.0, 2.0, -0.25], jnp.float32)
  ws0 = jnp.float32(0.75)
  case("grad_scan_cond", "grad_scan_cond", [ws0, xs], list(jax.grad(scan_cond, (0, 1))(ws0, xs)))
  case("grad_cond_const", "grad_cond_const", [jnp.bool_(True), x],
       [jax.grad(lambda p, x: jnp.sum(lax.cond(p, lambda x: x * CONST, jnp.sin, x)), 1)(jnp.bool_(True), x)])


LOOPS_OUT = os.path.join(os.path.dirname(OUT), "loops.txt")


def while_body(x):  # carry (i, y) -> (i + 1, sin(y) * x + 0.5 * y); x closed over
  return lambda c: (c[0] + 1, jnp.sin(c[1]) * x + 0.5 * c[1])


def while_f(x, n):
  return lax.while_loop(lambda c: c[0] < n, while_body(x), (jnp.int32(0), x))


def fori_f(x):  # y * x + i, 4 trips from y = x
  return lax.fori_loop(0, 4, lambda i, y: y * x + i.astype(jnp.float32), x)


def scan_f(c0, xs, w, reverse=False):
  return lax.scan(lambda c, x: (c * 0.5 + jnp.sin(x) * w, c * x), c0, xs, reverse=reverse)


def scan_loss(c0, xs, w):
  c, ys = scan_f(c0, xs, w)
  return jnp.sum(c) + jnp.sum(ys * ys)


def loops_cases():
  global CASES
  saved, CASES = CASES, []
  x = rand(3)
  for n in (0, 1, 3, 6):
    ni = jnp.int32(n)
    case(f"while_{n}", "while", [x, ni], list(while_f(x, ni)))
    tx = rand(3)
    p, t = jax.jvp(lambda x: while_f(x, ni)[1], (x,), (tx,))
    case(f"jvp_while_{n}", "jvp_while", [x, ni, tx], [p, t])
    # JAX's gradient of the same loop written with static trips (a scan)
    g = jax.grad(lambda x: jnp.sum(lax.fori_loop(0, n, lambda i, y: while_body(x)((i, y))[1], x)))(x)
    case(f"grad_while_bounded_{n}", "grad_while_bounded", [x, ni], [g])
  xs4, ns = rand(4, 3), jnp.asarray([0, 5, 2, 3], jnp.int32)
  case("vmap_while", "vmap_while", [xs4, ns], list(jax.vmap(while_f)(xs4, ns)))
  case("grad_vmap_while_bounded", "grad_vmap_while_bounded", [xs4, ns],
       [jax.grad(lambda xs: jnp.sum(jax.vmap(lambda x, n: lax.fori_loop(
           0, 5, lambda i, y: jnp.where(i < n, while_body(x)((i, y))[1], y), x))(xs, ns)))(xs4)])
  case("fori", "fori", [x], [fori_f(x)])
  case("grad_fori", "grad_fori", [x], [jax.grad(lambda x: jnp.sum(fori_f(x)))(x)])
  c0, xs, w = rand(3), rand(5, 3), rand(3)
  case("scan", "scan", [c0, xs, w], list(scan_f(c0, xs, w)))
  case("scan_reverse", "scan_reverse", [c0, xs, w], list(scan_f(c0, xs, w, True)))
  case("grad_scan", "grad_scan", [c0, xs, w], list(jax.grad(scan_loss, (0, 1, 2))(c0, xs, w)))
  tc, txs, tw = rand(3), rand(5, 3), rand(3)
  p, t = jax.jvp(scan_f, (c0, xs, w), (tc, txs, tw))
  case("jvp_scan", "jvp_scan", [c0, xs, w, tc, txs, tw], list(p) + list(t))
  xb = rand(2, 5, 3)
  case("vmap_scan", "vmap_scan", [c0, xb, w], list(jax.vmap(scan_f, (None, 0, None))(c0, xb, w)))
  case("grad_vmap_scan", "grad_vmap_scan", [c0, xb, w],
       list(jax.grad(lambda c0, xb, w: jnp.sum(jax.vmap(scan_f, (None, 0, None))(c0, xb, w)[1]), (0, 1, 2))(
           c0, xb, w)))
  case("map", "map", [xs], [lax.map(lambda x: jnp.sin(x) * 2.0 + x, xs)])
  loops, CASES = CASES, saved
  return loops


def write(path, cases):
  golden_io.write(path, "# Generated by tools/golden_control.py with jax %s -- do not edit.\n"
                  "# Format: tests/support/golden.h.\n\n" % jax.__version__, cases)


def main():
  x, y = rand(3), rand(3)
  for k in (-1, 0, 1, 2, 5):
    i = jnp.int32(k)
    case(f"switch3_{k}", "switch3", [i, x, y], [switch3(i, x, y)])
    case(f"grad_switch3_{k}", "grad_switch3", [i, x, y], list(jax.grad(loss, (1, 2))(i, x, y)))
    tx, ty = rand(3), rand(3)
    p, t = jax.jvp(lambda x, y: switch3(i, x, y), (x, y), (tx, ty))
    case(f"jvp_switch3_{k}", "jvp_switch3", [i, x, y, tx, ty], [p, t])
  for b in (True, False):
    p = jnp.bool_(b)
    case(f"cond2_{int(b)}", "cond2", [p, x, y], [cond2(p, x, y)])
    case(f"grad_cond2_{int(b)}", "grad_cond2", [p, x, y],
         list(jax.grad(lambda p, x, y: jnp.sum(cond2(p, x, y)), (1, 2))(p, x, y)))
  idx = jnp.asarray([2, 0, 1, 7], jnp.int32)
  xs = rand(4, 3)
  case("vmap_switch3_batched_index", "vmap_switch3_i",
       [idx, xs, y], [jax.vmap(switch3, (0, 0, None))(idx, xs, y)])
  case("vmap_switch3_unbatched_index", "vmap_switch3_x",
       [jnp.int32(1), xs, y], [jax.vmap(switch3, (None, 0, None))(jnp.int32(1), xs, y)])
  case("grad_vmap_switch3", "grad_vmap_switch3", [idx, xs, y],
       list(jax.grad(lambda i, x, y: jnp.sum(jax.vmap(switch3, (0, 0, None))(i, x, y)), (1, 2))(idx, xs, y)))
  closure_cases()
  write(OUT, CASES)
  write(LOOPS_OUT, loops_cases())


if __name__ == "__main__":
  main()
