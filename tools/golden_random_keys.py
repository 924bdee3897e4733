#!/usr/bin/env python3
"""golden_random_keys.py -- writes tests/golden/random_keys.txt for jaxc's traced-key
functions and the gamma family's derivatives (issue 11, item 3):
  - jax.random.PRNGKey of a seed *array* (every integer dtype, negative values), also
    under jit and vmap (jx_random_key_from);
  - jax.random.fold_in with data arrays, also under vmap (jx_random_fold_in_from);
  - jax.extend.random.threefry_2x32(key, count) for even, odd and empty counts
    (jx_random_threefry_2x32);
  - jax.grad through jax.random.gamma / loggamma / beta / dirichlet / t / chisquare
    (JAX's implicit reparameterization, lax.random_gamma_grad).
Format: tests/support/golden.h, conventions of golden_random.py (case params; x64=1
marks cases computed with jax_enable_x64 on).

Run:  pip install jax numpy;  python3 tools/golden_random_keys.py   (about a minute).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_io  # noqa: E402
import golden_random as G  # noqa: E402  (sets JAX_PLATFORMS=cpu, x64 off)
from golden_random import case, jax, jnp, np, random  # noqa: E402
import jax.extend.random as xrandom  # noqa: E402

OUT = golden_io.path("random_keys.txt")


def x64(on):
  jax.config.update("jax_enable_x64", on)


def key_cases():
  x64(False)
  for dt, vals in (("int32", [0, 1, -1, 42, 2**31 - 1, -2**31]), ("uint32", [0, 2**32 - 1, 7]),
                   ("int8", [-1, 100]), ("uint8", [255]), ("int16", [-300]),
                   ("uint16", [65535])):
    for v in vals:
      s = jnp.asarray(v, dt)
      case(f"key_from_{dt}_{v}", "key_from", [s], lambda s=s: random.PRNGKey(s))
  s = jnp.asarray(12345, "int32")
  case("key_from_jit", "key_from_jit", [s], lambda: jax.jit(random.PRNGKey)(s))
  seeds = jnp.asarray([0, 1, -1, 99, 2**31 - 1], "int32")
  case("key_from_vmap", "key_from_vmap", [seeds], lambda: jax.vmap(random.PRNGKey)(seeds))
  x64(True)
  for dt, vals in (("int64", [-1, 2**40 + 3, 2**63 - 1, -2**63]),
                   ("uint64", [2**64 - 1, 0x123456789ABCDEF])):
    for v in vals:
      s = jnp.asarray(np.array(v, dtype=dt))
      case(f"key_from_{dt}_{v}", "key_from", [s], lambda s=s: random.PRNGKey(s), {"x64": 1})
  x64(False)
  f = jnp.asarray(1.5, "float32")
  case("key_from_float", "key_from", [f], lambda: random.PRNGKey(f), err={TypeError: "JX_ERR_DTYPE"})
  v = jnp.asarray([1, 2], "int32")
  case("key_from_vector", "key_from", [v], lambda: random.PRNGKey(v),
       err={TypeError: "JX_ERR_SHAPE"})


def fold_cases():
  x64(False)
  for kn, k in G.keys()[:3]:
    for dt, vals in (("int32", [0, -1, 7, -2**31]), ("uint32", [2**32 - 1, 99]), ("int8", [-5]),
                     ("uint16", [40000])):
      for v in vals:
        d = jnp.asarray(v, dt)
        case(f"fold_in_from_{kn}_{dt}_{v}", "fold_in_from", [k, d],
             lambda k=k, d=d: random.fold_in(k, d))
    ds = jnp.asarray([0, 3, -1, 1000], "int32")
    case(f"fold_in_from_{kn}_vmap", "fold_in_from_vmap", [k, ds],
         lambda k=k: jax.vmap(lambda d: random.fold_in(k, d))(ds))
    ks = random.split(k, 3)
    d3 = jnp.asarray([5, 6, 7], "uint32")
    case(f"fold_in_from_{kn}_vmap_both", "fold_in_from_vmap_both", [ks, d3],
         lambda ks=ks: jax.vmap(random.fold_in)(ks, d3))
  x64(True)
  d = jnp.asarray(np.int64(2**40 + 9))
  k = random.PRNGKey(3)
  case("fold_in_from_int64", "fold_in_from", [k, d], lambda: random.fold_in(k, d), {"x64": 1})
  x64(False)


def threefry_cases():
  x64(False)
  rng = np.random.RandomState(0)
  for kn, k in G.keys()[:4]:
    for shape in ((), (0,), (1,), (2,), (3,), (5,), (2, 3), (3, 3), (4, 4), (2, 0, 3)):
      c = jnp.asarray(rng.randint(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32))
      case(f"threefry_{kn}_{G.sname(shape)}", "threefry_2x32", [k, c],
           lambda k=k, c=c: xrandom.threefry_2x32(k, c))
  c = jnp.arange(7, dtype="uint32")
  case("threefry_iota7", "threefry_2x32", [random.PRNGKey(0), c],
       lambda: xrandom.threefry_2x32(random.PRNGKey(0), c))
  c = jnp.arange(4, dtype="int32")
  case("threefry_int32", "threefry_2x32", [random.PRNGKey(0), c],
       lambda: xrandom.threefry_2x32(random.PRNGKey(0), c), err={TypeError: "JX_ERR_DTYPE"})


def f32(v):
  return jnp.asarray(v, jnp.float32)


def grad_cases():
  x64(False)
  a6 = f32([0.3, 1.0, 2.5, 7.0, 0.05, 30.0])
  for kn, k in (("s0", random.PRNGKey(0)), ("s42", random.PRNGKey(42))):
    case(f"grad_gamma_{kn}", "grad_gamma", [k, a6],
         lambda k=k: jax.grad(lambda a: random.gamma(k, a).sum())(a6))
    case(f"grad_loggamma_{kn}", "grad_loggamma", [k, a6],
         lambda k=k: jax.grad(lambda a: random.loggamma(k, a).sum())(a6))
    s = f32(2.5)
    case(f"grad_gamma_{kn}_shape", "grad_gamma", [k, s],
         lambda k=k: jax.grad(lambda a: random.gamma(k, a, (2, 3)).sum())(s), {"shape": "(2,3)"})
    a3, b3 = f32([0.7, 3.0, 12.0]), f32([2.0, 0.4, 5.0])
    case(f"grad_beta_{kn}", "grad_beta", [k, a3, b3],
         lambda k=k: jax.grad(lambda a, b: random.beta(k, a, b).sum(), argnums=(0, 1))(a3, b3))
    al = f32([[0.5, 1.0, 2.0], [3.0, 0.2, 1.0]])
    w = f32([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
    case(f"grad_dirichlet_{kn}", "grad_dirichlet", [k, al, w],
         lambda k=k: jax.grad(lambda a: (w * random.dirichlet(k, a)).sum())(al))
    df = f32([1.0, 2.5, 10.0, 0.8])
    case(f"grad_t_{kn}", "grad_t", [k, df],
         lambda k=k: jax.grad(lambda d: random.t(k, d).sum())(df))
    case(f"grad_chisquare_{kn}", "grad_chisquare", [k, df],
         lambda k=k: jax.grad(lambda d: random.chisquare(k, d).sum())(df))
  k = random.PRNGKey(3)
  big = f32(np.linspace(0.02, 40.0, 32))
  case("grad_gamma_many", "grad_gamma", [k, big],
       lambda: jax.grad(lambda a: random.gamma(k, a).sum())(big))
  case("grad_loggamma_many", "grad_loggamma", [k, big],
       lambda: jax.grad(lambda a: random.loggamma(k, a).sum())(big))
  # vmap over keys of the gradient, and the gradient of a vmapped sampler
  ks = random.split(k, 3)
  a2 = f32([0.6, 4.0])
  case("grad_gamma_vmap_keys", "grad_gamma_vmap", [ks, a2],
       lambda: jax.vmap(lambda kk: jax.grad(lambda a: random.gamma(kk, a).sum())(a2))(ks))
  x64(True)
  a = jnp.asarray([0.3, 1.0, 2.5, 7.0, 0.05, 30.0], jnp.float64)
  case("grad_gamma_f64", "grad_gamma", [k, a],
       lambda: jax.grad(lambda a: random.gamma(k, a, dtype=jnp.float64).sum())(a),
       {"x64": 1, "dtype": "float64"})
  x64(False)


def main():
  key_cases()
  fold_cases()
  threefry_cases()
  grad_cases()
  golden_io.write(OUT, "# Generated by tools/golden_random_keys.py with jax %s, numpy %s "
                  "(partitionable threefry; x64=1 cases with jax_enable_x64 on). "
                  "Format: tests/support/golden.h.\n" % (jax.__version__, np.__version__),
                  G.CASES, sep="\n")


if __name__ == "__main__":
  sys.exit(main())
