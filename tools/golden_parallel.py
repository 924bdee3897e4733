#!/usr/bin/env python3
"""golden_parallel.py -- writes tests/golden/parallel.txt: JAX's results for jaxc's
shard_map, pmap and collectives (src/trace/collective.c, src/trace/shard_map.c) on 1,
2, 3 and 4 CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=4, set here):
psum, pmean, pmax, pmin, all_gather, psum_scatter, ppermute, all_to_all (tiled and
not), axis_index; grad through each linear collective inside shard_map (check_vma=False,
JAX's pmap-style rules: psum transposes to psum), jvp, vmap inside shard_map, a 2x2
mesh, and pmap. Read by tests/trace/test_shard_map.c, which rebuilds each function
from the case's name and params. Format: tests/support/golden.h.

Run:  python3 tools/golden_parallel.py  (jax_enable_x64 off)
"""
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)
OUT = golden_io.path("parallel.txt")
RNG = np.random.RandomState(18)


CASES = []


def case(name, fn, params, args, outs):
  CASES.append(golden_io.case_text(name, fn, params, args, outs))


def rand(*shape):
  return jnp.asarray(np.round(RNG.uniform(-2, 2, size=shape) * 16) / 16, jnp.float32)


def mesh1(n):
  return Mesh(np.array(jax.devices()[:n]), ("x",))


def smap(f, mesh, i, o):
  return jax.shard_map(f, mesh=mesh, in_specs=i, out_specs=o, check_vma=False)


# The collective applied to each device's block, by name (the C test mirrors this table).
def collective(op, p):
  ax = p.get("axis", 0)
  tiled = bool(p.get("tiled", 0))
  if op == "psum":
    return lambda a: lax.psum(a, "x")
  if op == "pmean":
    return lambda a: lax.pmean(a, "x")
  if op == "pmax":
    return lambda a: lax.pmax(a, "x")
  if op == "pmin":
    return lambda a: lax.pmin(a, "x")
  if op == "all_gather":
    return lambda a: lax.all_gather(a, "x", axis=ax, tiled=tiled)
  if op == "psum_scatter":
    return lambda a: lax.psum_scatter(a, "x", scatter_dimension=ax, tiled=tiled)
  if op == "ppermute":  # shift by `shift`; with partial=1 the last device sends nothing
    n, sh = p["n"], p.get("shift", 1)
    pairs = [(i, (i + sh) % n) for i in range(n - p.get("partial", 0))]
    return lambda a: lax.ppermute(a, "x", pairs)
  if op == "all_to_all":
    return lambda a: lax.all_to_all(a, "x", ax, p.get("axis2", 0), tiled=tiled)
  if op == "axis_index":
    return lambda a: jnp.reshape(lax.axis_index("x"), (1,)) + 0 * a.sum().astype(jnp.int32)
  raise ValueError(op)


def local_shape(op, p):
  n = p["n"]
  if op == "psum_scatter":
    return (n * 2, 3) if p.get("tiled") else (n, 3)
  if op == "all_to_all":
    if p.get("tiled"):
      return (n * 2, 3) if p.get("axis", 0) == 0 else (3, n * 2)
    return (n, 3) if p.get("axis", 0) == 0 else (3, n)
  return (2, 3)


def add_collectives():
  for n in (1, 2, 3, 4):
    specs = [("psum", {}), ("pmean", {}), ("pmax", {}), ("pmin", {}),
             ("all_gather", {"axis": 0}), ("all_gather", {"axis": 1}),
             ("all_gather", {"axis": 0, "tiled": 1}), ("all_gather", {"axis": 1, "tiled": 1}),
             ("psum_scatter", {"axis": 0}), ("psum_scatter", {"axis": 0, "tiled": 1}),
             ("ppermute", {"shift": 1}), ("ppermute", {"shift": n - 1, "partial": 1}),
             ("all_to_all", {"axis": 0, "axis2": 1}), ("all_to_all", {"axis": 0, "axis2": 1, "tiled": 1}),
             ("all_to_all", {"axis": 1, "axis2": 0, "tiled": 1}), ("axis_index", {})]
    for k, (op, extra) in enumerate(specs):
      p = dict(extra, n=n)
      ls = local_shape(op, p)
      x = rand(n * ls[0], *ls[1:])
      y = smap(collective(op, p), mesh1(n), P("x"), P("x"))(x)
      case(f"{op}_{n}_{k}", op, p, [x], [y])


# grad of sum(sin(L(a)) * w) inside shard_map, for each linear collective L; w is the
# replicated weight of L(a)'s block shape, so gradients reach every device.
def add_grads():
  for n in (2, 3, 4):
    for op, extra in [("psum", {}), ("all_gather", {"axis": 0}), ("psum_scatter", {"axis": 0, "tiled": 1}),
                      ("ppermute", {"shift": 1}), ("all_to_all", {"axis": 0, "axis2": 1, "tiled": 1}),
                      ("pmean", {})]:
      p = dict(extra, n=n)
      ls = local_shape(op, p)
      x = rand(n * ls[0], *ls[1:])
      L = collective(op, p)

      def g(a, L=L):
        return jax.grad(lambda b: jnp.sum(jnp.sin(L(b)) * jnp.cos(L(b) + 1.0)))(a)

      y = smap(g, mesh1(n), P("x"), P("x"))(x)
      case(f"grad_{op}_{n}", "grad_" + op, p, [x], [y])

      def fj(a, L=L):  # jvp with tangent cos(a)
        _, t = jax.jvp(lambda b: jnp.sin(L(b)), (a,), (jnp.cos(a),))
        return t

      y = smap(fj, mesh1(n), P("x"), P("x"))(x)
      case(f"jvp_{op}_{n}", "jvp_" + op, p, [x], [y])


# vmap over the rows of each device's block, inside shard_map.
def add_vmaps():
  for n in (2, 4):
    for op, extra in [("psum", {}), ("all_gather", {"axis": 0}), ("all_gather", {"axis": 0, "tiled": 1}),
                      ("ppermute", {"shift": 1}), ("psum_scatter", {"axis": 0, "tiled": 1}),
                      ("all_to_all", {"axis": 0, "axis2": 0, "tiled": 1})]:
      p = dict(extra, n=n)
      x = rand(n * 3, 2 * n)  # rows of 2n: psum_scatter / all_to_all split them
      y = smap(jax.vmap(collective(op, p)), mesh1(n), P("x"), P("x"))(x)
      case(f"vmap_{op}_{n}_{len(CASES)}", "vmap_" + op, p, [x], [y])


def add_mesh2d():
  m = Mesh(np.array(jax.devices()).reshape(2, 2), ("x", "y"))
  x = rand(4, 6)
  for ax in ("x", "y"):
    y = smap(lambda a, ax=ax: lax.psum(a, ax), m, P("x", "y"), P("x", "y"))(x)
    case(f"mesh2d_psum_{ax}", "mesh2d_psum", {"over": ax}, [x], [y])
    y = smap(lambda a, ax=ax: lax.all_gather(a, ax, axis=0, tiled=True), m, P("x", "y"), P("x", "y"))(x)
    case(f"mesh2d_all_gather_{ax}", "mesh2d_all_gather", {"over": ax}, [x], [y])
  # a replicated input and output: the row sums of x's blocks over both axes
  w = rand(3)
  y = smap(lambda a, w: lax.psum(lax.psum(jnp.sum(a * w[0]), "x"), "y")[None], m,
           (P("x", "y"), P()), P())(x, w)
  case("mesh2d_psum_both", "mesh2d_psum_both", {}, [x, w], [y])


def add_pmap():
  for n in (1, 2, 3, 4):
    x = rand(n, 3)
    y = jax.pmap(lambda a: a * lax.psum(a, "i"), axis_name="i", devices=jax.devices()[:n])(x)
    case(f"pmap_{n}", "pmap", {"n": n}, [x], [y])
  x, w = rand(3, 4), rand(3)
  y = jax.pmap(lambda a, w: lax.pmean(a * w, "i"), axis_name="i", in_axes=(1, None),
               devices=jax.devices()[:4])(x, w)
  case("pmap_axes", "pmap_axes", {"n": 4}, [x, w], [y])


def main():
  add_collectives()
  add_grads()
  add_vmaps()
  add_mesh2d()
  add_pmap()
  golden_io.write(OUT, f"# Generated by tools/golden_parallel.py with jax {jax.__version__} -- "
                  "do not edit.\n# Format: tests/support/golden.h.\n\n", CASES)


if __name__ == "__main__":
  main()
