#!/usr/bin/env python3
"""golden_random.py -- writes tests/golden/random.txt: jax.random's outputs (default
threefry2x32 PRNG, jax_threefry_partitionable on, raw uint32 keys) for jaxc's
jx_random_* functions over several keys, shapes ((), (0,), (3,), (2,5), (7,3,2): odd
sizes exercise the counter layout), dtypes (float32/float16/bfloat16, every unsigned
and signed int width) and parameters, including bounds whose span rounds to 1 (XLA
reassociates those), permutations long enough for two sorting rounds, and choice with
and without replacement. Format: see tests/support/golden.h.

Run:  pip install jax numpy;  python3 tools/golden_random.py   (about 3 minutes: every
case compiles). Goldens come from JAX on the CPU: the samplers' last bits depend on
XLA's CPU arithmetic (fused multiply-adds, its own float32 log), which jaxc repeats.

Every case's first input is the key (uint32, shape (2,)). Scalar parameters travel as
case params: shape=(2,5) (shape=() is a scalar, shape=none is None), dtype=float16,
minval=-2.5, ... Cases marked x64=1 were computed with jax_enable_x64 on (64-bit
bits/uniform/normal/randint, and 64-bit seeds); all others with it off.
"""
import os
import sys
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import random  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)
warnings.filterwarnings("ignore", message="Explicitly requested dtype")
assert jax.config.jax_threefry_partitionable, "goldens assume partitionable threefry"

OUT = golden_io.path("random.txt")

SHAPES = [(), (0,), (3,), (2, 5), (7, 3, 2)]
FLOATS = ["float32", "float16", "bfloat16"]
SEEDS = [0, 42, 4294967295]


def keys():
  """Raw keys: from seeds, and two with both words busy (a split and a fold_in)."""
  ks = [("s%d" % s, random.PRNGKey(s)) for s in SEEDS]
  ks.append(("split", random.split(random.PRNGKey(7), 3)[2]))
  ks.append(("fold", random.fold_in(random.PRNGKey(2024), 99)))
  return ks


# ------------------------------------------------------------------ formatting

def fmt_shape(shape):
  return "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


CASES = []
NAMES = set()


def case(name, fn, inputs, call, params=None, err=None):
  """Runs call() under JAX and records the inputs, params and output (or `err` if
  JAX raises one of the exception types listed in err: {type: "JX_ERR_..."})."""
  assert name not in NAMES, name
  NAMES.add(name)
  status = None
  try:
    out = call()
    outs = out if isinstance(out, tuple) else (out,)
  except Exception as e:  # noqa: BLE001
    status = next((s for t, s in (err or {}).items() if isinstance(e, t)), None)
    if status is None:
      raise
    outs = ()
  CASES.append(golden_io.case_text(name, fn, params, inputs, outs, status))


def sname(shape):
  return "x".join(str(d) for d in shape) if shape else "scalar"


# -------------------------------------------------------------------- cases

def key_cases(x64):
  seeds = [0, 1, 42, 2**31 - 1, 2**31, 2**32 - 1, 2**32 + 5, 123456789, 2**40 + 3]
  if x64:
    seeds += [2**63 - 1, 0x123456789ABCDEF]
  for s in seeds:
    p = {"seed": s}
    if x64:
      p["x64"] = 1
    case(f"key_{s}" + ("_x64" if x64 else ""), "key", [], lambda s=s: random.PRNGKey(s), p)


def split_fold_cases():
  for kn, k in keys():
    for num in (0, 1, 2, 3, 5):
      case(f"split_{kn}_{num}", "split", [k], lambda k=k, n=num: random.split(k, n),
           {"num": num})
    for data in (0, 1, 7, 2**31, 2**32 - 1):
      case(f"fold_in_{kn}_{data}", "fold_in", [k],
           lambda k=k, d=data: random.fold_in(k, np.uint32(d)), {"data": data})


def bits_cases():
  for kn, k in keys():
    for shape in SHAPES:
      for dt in ("uint8", "uint16", "uint32", "uint64"):
        case(f"bits_{kn}_{sname(shape)}_{dt}", "bits", [k],
             lambda k=k, s=shape, d=dt: random.bits(k, s, jnp.dtype(d)),
             {"shape": fmt_shape(shape), "dtype": dt})


SIMPLE = {
    "normal": random.normal,
    "gumbel": random.gumbel,
    "exponential": random.exponential,
    "laplace": random.laplace,
    "logistic": random.logistic,
    "cauchy": random.cauchy,
}


def uniform_cases():
  for kn, k in keys():
    for shape in SHAPES:
      for dt in FLOATS + ["float64"]:
        case(f"uniform_{kn}_{sname(shape)}_{dt}", "uniform", [k],
             lambda k=k, s=shape, d=dt: random.uniform(k, s, jnp.dtype(d)),
             {"shape": fmt_shape(shape), "dtype": dt, "minval": 0.0, "maxval": 1.0})
  # Ranges, including minval == maxval and minval > maxval (JAX returns minval).
  k = random.PRNGKey(3)
  # Spans that round to exactly 1 meet XLA's reassociation of (f - 1) * 1 + minval.
  for lo, hi in ((-2.5, 3.0), (10.0, 10.5), (5.0, 5.0), (3.0, 1.0), (-1e30, 1e30),
                 (0.1, 0.7), (0.25, 1.25), (-0.75, 0.25), (6.103515625e-05, 1.0),
                 (0.0001, 1.0001)):
    for dt in FLOATS:
      case(f"uniform_range_{lo}_{hi}_{dt}", "uniform", [k],
           lambda lo=lo, hi=hi, d=dt: random.uniform(k, (2, 5), jnp.dtype(d), lo, hi),
           {"shape": "(2,5)", "dtype": dt, "minval": lo, "maxval": hi})


def sampler_cases():
  for name, f in SIMPLE.items():
    for kn, k in keys():
      for shape in SHAPES:
        for dt in FLOATS:
          case(f"{name}_{kn}_{sname(shape)}_{dt}", name, [k],
               lambda f=f, k=k, s=shape, d=dt: f(k, s, jnp.dtype(d)),
               {"shape": fmt_shape(shape), "dtype": dt})
    # A larger sample reaches the tails (normal's w >= 5 branch, ...).
    case(f"{name}_big", name, [random.PRNGKey(11)],
         lambda f=f: f(random.PRNGKey(11), (500,)), {"shape": "(500,)", "dtype": "float32"})


def truncated_normal_cases():
  k = random.PRNGKey(5)
  for lo, hi in ((-1.0, 1.0), (-2.0, 0.5), (0.5, 3.0), (-3.0, -2.5),
                 (-float("inf"), float("inf")), (1.0, float("inf"))):
    for dt in FLOATS:
      for shape in ((), (3,), (2, 5)):
        case(f"truncated_normal_{lo}_{hi}_{dt}_{sname(shape)}", "truncated_normal", [k],
             lambda lo=lo, hi=hi, d=dt, s=shape:
             random.truncated_normal(k, lo, hi, s, jnp.dtype(d)),
             {"lower": lo, "upper": hi, "shape": fmt_shape(shape), "dtype": dt})
  # float32 bounds whose erf XLA's expansion rounds differently from a correctly rounded
  # erf (compared bit for bit), the far tail among them
  for lo, hi in ((-1.5, 1.5), (3.0, 4.0), (0.25, 0.75), (-6.0, -5.0)):
    case(f"truncated_normal_{lo}_{hi}_float32_200", "truncated_normal", [k],
         lambda lo=lo, hi=hi: random.truncated_normal(k, lo, hi, (200,), jnp.float32),
         {"lower": lo, "upper": hi, "shape": "(200,)", "dtype": "float32"})


def randint_cases():
  k = random.PRNGKey(9)
  ranges = [(0, 10), (-5, 5), (0, 1), (5, 5), (7, 3), (-100, 100), (0, 256),
            (-128, 128), (-2**31, 2**31 - 1), (0, 2**31 - 1), (0, 65536), (-7, 2**20)]
  for dt in ("int32", "int8", "uint8", "int16", "uint16", "uint32", "int64"):
    for lo, hi in ranges:
      for shape in ((3,), (2, 5)):
        case(f"randint_{dt}_{lo}_{hi}_{sname(shape)}", "randint", [k],
             lambda lo=lo, hi=hi, d=dt, s=shape: random.randint(k, s, lo, hi, jnp.dtype(d)),
             {"shape": fmt_shape(shape), "minval": lo, "maxval": hi, "dtype": dt})
  for kn, kk in keys():
    for shape in SHAPES:
      case(f"randint_{kn}_{sname(shape)}", "randint", [kk],
           lambda kk=kk, s=shape: random.randint(kk, s, -1000, 1000),
           {"shape": fmt_shape(shape), "minval": -1000, "maxval": 1000, "dtype": "int32"})
  # Bounds outside int32 with x64 off: JAX raises OverflowError.
  case("randint_overflow", "randint", [k],
       lambda: random.randint(k, (3,), 0, 2**33), {"shape": "(3,)", "minval": 0,
                                                   "maxval": 2**33, "dtype": "int32"},
       err={OverflowError: "JX_ERR_VALUE"})


def bernoulli_cases():
  for kn, k in keys():
    for p in (0.0, 0.3, 0.5, 1.0):
      for shape in SHAPES:
        case(f"bernoulli_{kn}_{p}_{sname(shape)}", "bernoulli", [k],
             lambda k=k, p=p, s=shape: random.bernoulli(k, p, s),
             {"p": p, "shape": fmt_shape(shape)})


def categorical_cases():
  k = random.PRNGKey(13)
  rng = np.random.default_rng(1)
  for shape, axes in (((5,), (0, -1)), ((3, 4), (0, 1, -1)), ((2, 3, 4), (0, 1, 2)),
                      ((4, 1), (0, 1))):
    for dt in FLOATS:
      logits = jnp.asarray(rng.normal(size=shape) * 2, dtype=jnp.dtype(dt))
      for ax in axes:
        case(f"categorical_{sname(shape)}_{dt}_{ax}", "categorical", [k, logits],
             lambda lg=logits, a=ax: random.categorical(k, lg, a), {"axis": ax})
  # -inf logits are never drawn.
  lg = jnp.asarray([[-np.inf, 0.0, -np.inf], [1.0, -np.inf, 2.0]], jnp.float32)
  case("categorical_neg_inf", "categorical", [k, lg],
       lambda: random.categorical(k, lg, -1), {"axis": -1})


def choice_cases():
  k = random.PRNGKey(17)
  for n in (1, 5, 100):
    for shape in ((), (3,), (2, 4), (0,)):
      case(f"choice_n{n}_{sname(shape)}", "choice", [k],
           lambda n=n, s=shape: random.choice(k, n, s),
           {"n": n, "shape": fmt_shape(shape), "replace": 1})
  a = jnp.asarray([10.5, -2.0, 3.25, 7.0], jnp.float32)
  case("choice_a1d", "choice", [k, a], lambda: random.choice(k, a, (2, 3)),
       {"shape": "(2,3)", "replace": 1})
  a2 = jnp.arange(12, dtype=jnp.int32).reshape(4, 3)
  case("choice_a2d", "choice", [k, a2], lambda: random.choice(k, a2, (5,)),
       {"shape": "(5,)", "replace": 1})
  p = jnp.asarray([0.1, 0.2, 0.3, 0.4], jnp.float32)
  case("choice_p", "choice", [k, a, p], lambda: random.choice(k, a, (3, 3), p=p),
       {"shape": "(3,3)", "replace": 1})
  p0 = jnp.asarray([0.0, 0.5, 0.0, 0.5, 0.0], jnp.float32)
  case("choice_p_zero", "choice", [k, p0], lambda: random.choice(k, 5, (20,), p=p0),
       {"n": 5, "shape": "(20,)", "replace": 1})
  p16 = jnp.asarray(np.random.default_rng(2).random(16), jnp.float32)
  case("choice_p16", "choice", [k, p16], lambda: random.choice(k, 16, (40,), p=p16),
       {"n": 16, "shape": "(40,)", "replace": 1})


def permutation_cases():
  k = random.PRNGKey(23)
  # 2000 elements take two sorting rounds (ceil(3 ln n / ln(2^32 - 1)) = 2).
  for n in (0, 1, 5, 100, 2000):
    case(f"permutation_n{n}", "permutation", [k], lambda n=n: random.permutation(k, n),
         {"n": n})
  x1 = jnp.asarray([1.5, -2.0, 3.0, 4.25, 0.0, 7.0], jnp.float32)
  case("permutation_x1", "permutation", [k, x1], lambda: random.permutation(k, x1),
       {"axis": 0, "independent": 0})
  x2 = jnp.arange(20, dtype=jnp.int32).reshape(4, 5)
  for ax in (0, 1, -1):
    for ind in (0, 1):
      case(f"permutation_x2_{ax}_{ind}", "permutation", [k, x2],
           lambda ax=ax, ind=ind: random.permutation(k, x2, ax, bool(ind)),
           {"axis": ax, "independent": ind})
  x3 = jnp.arange(2 * 3 * 700, dtype=jnp.float32).reshape(2, 3, 700)
  case("permutation_x3_independent", "permutation", [k, x3],
       lambda: random.permutation(k, x3, 2, True), {"axis": 2, "independent": 1})


def choice_noreplace_cases():
  k = random.PRNGKey(29)
  for n, shape in ((5, (3,)), (5, (5,)), (10, (2, 2)), (1, (1,))):
    case(f"choice_norep_n{n}_{sname(shape)}", "choice", [k],
         lambda n=n, s=shape: random.choice(k, n, s, replace=False),
         {"n": n, "shape": fmt_shape(shape), "replace": 0})
  a = jnp.asarray([10.5, -2.0, 3.25, 7.0, 1.0], jnp.float32)
  case("choice_norep_a1d", "choice", [k, a], lambda: random.choice(k, a, (2, 2), replace=False),
       {"shape": "(2,2)", "replace": 0})
  a2 = jnp.arange(12, dtype=jnp.int32).reshape(4, 3)
  case("choice_norep_a2d", "choice", [k, a2], lambda: random.choice(k, a2, (3,), replace=False),
       {"shape": "(3,)", "replace": 0})
  p = jnp.asarray([0.1, 0.2, 0.3, 0.4, 0.0], jnp.float32)
  case("choice_norep_p", "choice", [k, a, p],
       lambda: random.choice(k, a, (4,), replace=False, p=p), {"shape": "(4,)", "replace": 0})
  p7 = jnp.asarray(np.random.default_rng(3).random(7), jnp.float32)
  case("choice_norep_p7", "choice", [k, p7],
       lambda: random.choice(k, 7, (2, 3), replace=False, p=p7),
       {"n": 7, "shape": "(2,3)", "replace": 0})
  case("choice_norep_too_many", "choice", [k], lambda: random.choice(k, 3, (4,), replace=False),
       {"n": 3, "shape": "(4,)", "replace": 0}, err={ValueError: "JX_ERR_VALUE"})


def multivariate_normal_cases():
  k = random.PRNGKey(19)
  mean = jnp.asarray([1.0, -2.0, 0.5], jnp.float32)
  cov = jnp.asarray([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], jnp.float32)
  case("mvn_basic", "multivariate_normal", [k, mean, cov],
       lambda: random.multivariate_normal(k, mean, cov), {"shape": "none"})
  case("mvn_shape", "multivariate_normal", [k, mean, cov],
       lambda: random.multivariate_normal(k, mean, cov, (4,)), {"shape": "(4,)"})
  means = jnp.asarray([[0.0, 0.0, 0.0], [5.0, 6.0, 7.0]], jnp.float32)
  case("mvn_batch", "multivariate_normal", [k, means, cov],
       lambda: random.multivariate_normal(k, means, cov), {"shape": "none"})
  case("mvn_batch_shape", "multivariate_normal", [k, means, cov],
       lambda: random.multivariate_normal(k, means, cov, (3, 2)), {"shape": "(3,2)"})
  m1 = jnp.asarray([0.5], jnp.float32)
  c1 = jnp.asarray([[4.0]], jnp.float32)
  case("mvn_1d", "multivariate_normal", [k, m1, c1],
       lambda: random.multivariate_normal(k, m1, c1, (5,)), {"shape": "(5,)"})


def x64_cases():
  jax.config.update("jax_enable_x64", True)
  key_cases(True)
  k = random.PRNGKey(0x0123456789)
  for shape in ((3,), (2, 5)):
    s = sname(shape)
    case(f"x64_bits_uint64_{s}", "bits", [k], lambda s=shape: random.bits(k, s, jnp.uint64),
         {"shape": fmt_shape(shape), "dtype": "uint64", "x64": 1})
    case(f"x64_uniform_float64_{s}", "uniform", [k],
         lambda s=shape: random.uniform(k, s, jnp.float64),
         {"shape": fmt_shape(shape), "dtype": "float64", "minval": 0.0, "maxval": 1.0,
          "x64": 1})
    # float64 uniform with a span that is not a power of two: XLA fuses the
    # (f - 1) * span + minval into one fma in float64 too
    case(f"x64_uniform_float64_range_{s}", "uniform", [k],
         lambda s=shape: random.uniform(k, s, jnp.float64, -2.0, 3.0),
         {"shape": fmt_shape(shape), "dtype": "float64", "minval": -2.0, "maxval": 3.0,
          "x64": 1})
    case(f"x64_normal_float64_{s}", "normal", [k],
         lambda s=shape: random.normal(k, s, jnp.float64),
         {"shape": fmt_shape(shape), "dtype": "float64", "x64": 1})
    case(f"x64_randint_int64_{s}", "randint", [k],
         lambda s=shape: random.randint(k, s, -2**40, 2**50, jnp.int64),
         {"shape": fmt_shape(shape), "minval": -2**40, "maxval": 2**50, "dtype": "int64",
          "x64": 1})
  # arange(n) of the default int (int64 with x64 on)
  k = random.PRNGKey(23)
  case("x64_permutation_n10", "permutation", [k], lambda: random.permutation(k, 10),
       {"n": 10, "x64": 1})
  case("x64_choice_norep_n10", "choice", [k], lambda: random.choice(k, 10, (4,), replace=False),
       {"n": 10, "shape": "(4,)", "replace": 0, "x64": 1})
  jax.config.update("jax_enable_x64", False)


def main():
  key_cases(False)
  split_fold_cases()
  bits_cases()
  uniform_cases()
  sampler_cases()
  truncated_normal_cases()
  randint_cases()
  bernoulli_cases()
  categorical_cases()
  choice_cases()
  permutation_cases()
  choice_noreplace_cases()
  multivariate_normal_cases()
  x64_cases()
  golden_io.write(OUT, "# Generated by tools/golden_random.py with jax %s, numpy %s "
                  "(jax_enable_x64 off unless x64=1; partitionable threefry). "
                  "Format: tests/support/golden.h.\n" % (jax.__version__, np.__version__),
                  CASES, sep="\n")


if __name__ == "__main__":
  sys.exit(main())
