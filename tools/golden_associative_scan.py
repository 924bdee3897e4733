#!/usr/bin/env python3
"""golden_associative_scan.py -- writes tests/golden/associative_scan.txt: JAX's
lax.associative_scan (read by tests/lib/test_associative_scan.c, which runs each case
eagerly and under jit). The combining functions the C test defines, by name:
  add:    (a, b) -> a + b                      (cumsum; float32 and int32)
  max:    (a, b) -> maximum(a, b)
  matmul: (a, b) -> a @ b on (..., 2, 2)       (not commutative: order matters)
  affine: ((a1, b1), (a2, b2)) -> (a1 a2, a2 b1 + b2)   (the linear recurrence
          x_t = a_t x_{t-1} + b_t, two elems)
  or:     (a, b) -> a | b on bool
for lengths 0..9 and 33, reverse or not, axis 0, 1 and -1; and grad_affine, the
gradient of sum(sin(scan(affine)[1])) with respect to both elems. Format:
tests/support/golden.h.

Run:  python3 tools/golden_associative_scan.py  (jax_enable_x64 off)
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)
OUT = golden_io.path("associative_scan.txt")
RNG = np.random.RandomState(5)


FNS = {
    "add": (1, lambda a, b: a + b),
    "max": (1, jnp.maximum),
    "matmul": (1, lambda a, b: a @ b),
    "affine": (2, lambda x, y: (x[0] * y[0], y[0] * x[1] + y[1])),
    "or": (1, lambda a, b: a | b),
}

CASES = []


def case(name, fn, params, args, outs):
  CASES.append(golden_io.case_text(name, fn, params, args, outs))


def scan(fn, elems, reverse, axis):
  n, f = FNS[fn]
  if n == 1:
    return [lax.associative_scan(f, elems[0], reverse=reverse, axis=axis)]
  return list(lax.associative_scan(f, tuple(elems), reverse=reverse, axis=axis))


def run(fn, elems, reverse=False, axis=0):
  outs = scan(fn, [jnp.asarray(e) for e in elems], reverse, axis)
  name = f"{fn}_{'x'.join(str(d) for d in elems[0].shape) or 'scalar'}_ax{axis}{'_rev' if reverse else ''}"
  case(name, fn, {"reverse": int(reverse), "axis": axis}, elems, outs)


for n in list(range(0, 10)) + [33]:
  for rev in (False, True):
    run("add", [RNG.randn(n).astype(np.float32)], rev)
    run("affine", [RNG.uniform(0.5, 1.1, n).astype(np.float32), RNG.randn(n).astype(np.float32)], rev)
run("add", [RNG.randint(-50, 50, (4, 7)).astype(np.int32)], False, 1)
run("add", [RNG.randint(-50, 50, (4, 7)).astype(np.int32)], True, 1)
run("add", [RNG.randint(-50, 50, (4, 7)).astype(np.int32)], False, -1)  # JAX 0.10.2 rejects a negative axis with reverse (lax.rev)
run("max", [RNG.randn(3, 6, 2).astype(np.float32)], False, 1)
run("max", [RNG.randn(5, 3).astype(np.float32)], True, 0)
for n in (1, 2, 5, 8):
  for rev in (False, True):
    run("matmul", [RNG.randn(n, 2, 2).astype(np.float32)], rev)
run("or", [RNG.rand(9) < 0.2], False)
run("or", [RNG.rand(2, 9) < 0.2], True, 1)


def affine_loss(a, b):
  return jnp.sum(jnp.sin(lax.associative_scan(FNS["affine"][1], (a, b))[1]))


for n in (1, 6, 9):
  a = RNG.uniform(0.5, 1.1, n).astype(np.float32)
  b = RNG.randn(n).astype(np.float32)
  ga, gb = jax.grad(affine_loss, argnums=(0, 1))(a, b)
  case(f"grad_affine_{n}", "grad_affine", {}, [a, b], [ga, gb])

golden_io.write(OUT, "# Written by tools/golden_associative_scan.py (JAX " + jax.__version__ +
               "); do not edit.\n", CASES)
