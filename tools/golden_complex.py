#!/usr/bin/env python3
"""golden_complex.py -- writes tests/golden/complex.txt: JAX's results for jaxc's complex
numbers (issue 15): arithmetic over special values (NaN, +-inf, -0.0, huge, tiny parts),
real/imag/conj/lax.complex/abs/angle, predicates, comparisons, casts, weak complex
scalars, reductions, matrix products (small: one kernel; large: BLAS cgemm/zgemm),
sorting, and elementwise transcendental functions. Format: tests/support/golden.h;
complex values are two numbers (re im) per element.

Run:  python3 tools/golden_complex.py   (needs jax + numpy). complex64 cases run with
jax_enable_x64 off, complex128 cases (param x64=1) in a second process with it on.
"""
import os
import subprocess
import sys
import warnings

import golden_io

os.environ.setdefault("JAX_PLATFORMS", "cpu")

OUT = golden_io.path("complex.txt")
NAN, INF = float("nan"), float("inf")


def run_mode(x64):
  import jax
  jax.config.update("jax_enable_x64", bool(x64))
  import jax.numpy as jnp
  import numpy as np
  from jax import lax
  warnings.simplefilter("ignore")

  cdt = "complex128" if x64 else "complex64"
  fdt = "float64" if x64 else "float32"
  huge = 1e300 if x64 else 3e38
  tiny = 1e-300 if x64 else 1e-30
  params = "x64=1" if x64 else ""
  sfx = "_x64" if x64 else ""

  lines = []

  def case(name, fn, args, call, extra=""):
    p = " ".join(x for x in (params, extra) if x)
    try:
      outs, err = [call(*args)], None
    except (TypeError, ValueError):
      outs, err = [], "JX_ERR_DTYPE"
    lines.append(golden_io.case_text(name + sfx, fn, p, args, outs, err))

  parts = [0.0, -0.0, 1.5, -2.0, 0.5, INF, -INF, NAN, huge, tiny]
  zs = [complex(a, b) for a in parts for b in parts]  # 100 values
  z = jnp.asarray(np.array(zs, dtype=cdt))
  p7 = [0.0, -0.0, 1.5, -2.0, INF, -INF, NAN]
  z7 = np.array([complex(a, b) for a in p7 for b in p7], dtype=cdt)  # 49 values
  za = jnp.asarray(np.repeat(z7, len(z7)))  # all pairs as two flat arrays
  zb = jnp.asarray(np.tile(z7, len(z7)))
  p4 = [0.0, -0.0, 1.5, -2.0, INF, NAN]
  z4 = np.array([complex(a, b) for a in p4 for b in p4], dtype=cdt)
  sa = jnp.asarray(np.repeat(z4, len(z4)))
  sb = jnp.asarray(np.tile(z4, len(z4)))

  # arithmetic and comparisons over all pairs
  for f in ["multiply", "divide"]:
    case(f"{f}_pairs", f, [za, zb], getattr(jnp, f))
  # products of values that round: XLA's fma(a, c, -bd) + fma(b, c, ad)i, bit for bit
  rng = np.random.RandomState(7)
  def rough(n):
    return jnp.asarray((rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(cdt))
  case("multiply_rounding", "multiply", [rough(400), rough(400)], jnp.multiply)
  for f in ["add", "subtract", "equal", "not_equal"]:
    case(f"{f}_pairs", f, [sa, sb], getattr(jnp, f))
  # unary functions over 100 values
  for f in ["negative", "real", "imag", "conj", "abs", "isnan", "isinf", "isfinite",
            "sign", "reciprocal", "angle"]:
    case(f"{f}_values", f, [z], getattr(jnp, f))
  # lax.complex from parts, and promotion of its parts
  re = jnp.asarray(np.array(parts, dtype=fdt))
  im = jnp.asarray(np.array(parts[::-1], dtype=fdt))
  case("complex_parts", "complex", [re, im], lax.complex)
  case("complex_int_parts", "complex", [jnp.arange(3), jnp.arange(3) - 1],
       lambda a, b: lax.complex(a.astype(fdt), b.astype(fdt)))
  # weak complex scalars and mixed promotion
  f32 = jnp.asarray(np.array([1.5, -2.0, 0.0], dtype=np.float32))
  i32 = jnp.asarray(np.array([1, -2, 3], dtype=np.int32))
  f16 = jnp.asarray(np.array([1.5, -2.0, 0.5], dtype=np.float16))
  c3 = jnp.asarray(np.array([1 + 2j, -3 - 0.5j, 0j], dtype=cdt))
  case("add_weak_complex_c", "add", [c3, 2.5 - 1j], jnp.add)
  case("add_weak_complex_f32", "add", [f32, 2.5 - 1j], jnp.add)
  case("mul_weak_complex_i32", "multiply", [i32, 0.5j], jnp.multiply)
  case("add_weak_complex_f16", "add", [f16, 1j], jnp.add)
  case("add_weak_float_c", "add", [c3, 0.25], jnp.add)
  case("mul_weak_int_c", "multiply", [c3, 3], jnp.multiply)
  case("add_f32_c", "add", [f32, c3], jnp.add)
  case("div_i32_c", "divide", [i32, c3], jnp.divide)
  case("sub_weak_weak", "subtract", [1 + 1j, 2.0], jnp.subtract)
  # casts: complex -> real drops the imaginary part
  cv = jnp.asarray(np.array([1.75 + 2j, -3.5 - 0.5j, 0j, complex(NAN, 1), complex(INF, -1),
                             complex(0, 5), 1e10 + 0j], dtype=cdt))
  for to in [fdt, "float16", "int32", "uint8", "bool", cdt]:
    case(f"astype_{to}", "astype", [cv], lambda x, to=to: x.astype(to), f"dtype={to}")
  for src in [f32, i32, f16, jnp.asarray([True, False])]:
    case(f"astype_from_{src.dtype}", "astype", [src], lambda x: x.astype(cdt), f"dtype={cdt}")
  if x64:
    case("astype_c64_c128", "astype", [jnp.asarray(np.array([1.1 + 2.2j], np.complex64))],
         lambda x: x.astype("complex128"), "dtype=complex128")
    case("astype_c128_c64", "astype", [jnp.asarray(np.array([1.1 + 2.2j], np.complex128))],
         lambda x: x.astype("complex64"), "dtype=complex64")
  # reductions
  rng = np.random.default_rng(15 + x64)
  m = (rng.standard_normal((4, 37)) + 1j * rng.standard_normal((4, 37))).astype(cdt)
  mj = jnp.asarray(m)
  for f in ["sum", "mean"]:
    case(f"{f}_all", f, [mj], getattr(jnp, f))
    case(f"{f}_axis1", f, [mj], lambda x, f=f: getattr(jnp, f)(x, axis=1), "axis=1")
  small = jnp.asarray(((rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))) * 0.7)
                      .astype(cdt))
  case("prod_axis1", "prod", [small], lambda x: jnp.prod(x, axis=1), "axis=1")
  case("prod_all", "prod", [small], jnp.prod)
  # matrix products: small (one fused kernel) and large (cgemm / zgemm)
  for (n, k, p) in [(3, 4, 2), (70, 80, 90)]:
    a = jnp.asarray((rng.standard_normal((n, k)) + 1j * rng.standard_normal((n, k))).astype(cdt))
    b = jnp.asarray((rng.standard_normal((k, p)) + 1j * rng.standard_normal((k, p))).astype(cdt))
    case(f"matmul_{n}x{k}x{p}", "matmul", [a, b], jnp.matmul)
  # sorting: lexicographic on (re, im), NaNs last
  sv = jnp.asarray(np.array([2 + 1j, 1 + 3j, 2 - 1j, complex(NAN, 0), 1 + 3j, complex(1, NAN),
                             -0.0 + 0j, 0 - 0.5j, complex(-INF, 2), complex(INF, -INF),
                             complex(NAN, NAN), 1 + 2j], dtype=cdt))
  case("sort", "sort", [sv], jnp.sort)

  # transcendental functions: a grid of ordinary values (|z| from 0.1 to ~4, every
  # quadrant, both axes), and the 100 special values for those whose formulas are
  # XLA's own (exp, log, sqrt, sin, cos, tanh...)
  g = [0.1, 0.7, 1.3, 2.9]
  grid = sorted({complex(s1 * x, s2 * y) for x in g for y in g for s1 in (1, -1)
                 for s2 in (1, -1)} | {complex(x, 0) for x in (0.3, -0.3, 2.5, -2.5)} |
                {complex(0, y) for y in (0.3, -0.3, 2.5, -2.5)}, key=lambda c: (c.real, c.imag))
  zg = jnp.asarray(np.array(grid, dtype=cdt))
  for f in ["exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan", "sinh", "cosh",
            "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]:
    case(f"{f}_grid", f, [zg], getattr(jnp, f))
  for f in ["exp", "log", "sqrt", "sin", "cos", "arcsin", "arccos", "arctan", "arcsinh",
            "arccosh", "arctanh"]:
    case(f"{f}_special", f, [z], getattr(jnp, f))
  # the inverse functions on and near their branch cuts (asin, acos, atanh: the real axis
  # beyond +-1; acosh: below 1; atan, asinh: the imaginary axis beyond +-i), signed zeros
  # on both sides, tiny and 1e-6 offsets, and huge/tiny arguments (JAX rescales there)
  on = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 3.0, -3.0, 1e10, -1e10]
  off = [0.0, -0.0, 1e-20, -1e-20, 1e-6, -1e-6]
  cut = [complex(a, b) for a in on for b in off] + [complex(b, a) for a in on for b in off]
  h, t = (1e300, 1e-300) if x64 else (1e30, 1e-30)
  cut += [complex(h, h), complex(h, -t), complex(-t, h), complex(t, t), complex(-h, 0.0),
          complex(0.0, -h), complex(-h, 1.0), complex(1.0, h), complex(t, -0.0),
          complex(-0.0, t), complex(0.999999, t), complex(1.000001, -t)]
  zc = jnp.asarray(np.array(cut, dtype=cdt))
  for f in ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]:
    case(f"{f}_cuts", f, [zc], getattr(jnp, f))
  zp = jnp.asarray(np.array(grid[::3], dtype=cdt))
  zq = jnp.asarray(np.array(grid[1::3][:len(grid[::3])], dtype=cdt))
  case("power_grid", "power", [zp, zq], jnp.power)
  case("power_zero_base", "power",
       [jnp.asarray(np.array([0j, 0j, 0j, 0j], dtype=cdt)),
        jnp.asarray(np.array([0j, 1 + 0j, 2 + 1j, -1 + 0j], dtype=cdt))], jnp.power)
  case("power_int", "power", [zg, 3], jnp.power)

  # autodiff: JAX's conventions. Real-valued functions of complex inputs: grad is the
  # conjugate-convention gradient; holomorphic=True: f'(z).
  zd = jnp.asarray(np.array([0.5 + 1j, -1.25 + 0.75j, 2 - 0.5j, -0.3 - 1.1j], dtype=cdt))
  for name, fn in GRAD_FNS(jnp, lax).items():
    case(f"grad_{name}", f"grad_{name}", [zd], jax.grad(fn))
  for name, fn in HOLO_FNS(jnp, lax).items():
    case(f"holo_grad_{name}", f"holo_grad_{name}", [zd[1]], jax.grad(fn, holomorphic=True))
    case(f"holo_jacfwd_{name}", f"holo_jacfwd_{name}", [zd[1]], jax.jacfwd(fn, holomorphic=True))
    case(f"holo_jacrev_{name}", f"holo_jacrev_{name}", [zd[1]], jax.jacrev(fn, holomorphic=True))
  # jvp (tangent 0.5 - 0.25j everywhere) and vjp (cotangent 1 + 2j) of each primitive
  tz = jnp.full_like(zd, 0.5 - 0.25j)
  # JAX's arccosh rule, rsqrt((z - 1)(z + 1)), takes the other branch where re z < 0; the
  # derivative of the principal branch (the math, which jaxc follows) is
  # 1 / (sqrt(z - 1) sqrt(z + 1)): the same function with that rule
  @jax.custom_jvp
  def arccosh(z):
    return jnp.arccosh(z)

  @arccosh.defjvp
  def _arccosh_jvp(primals, tangents):
    (z,), (t,) = primals, tangents
    return jnp.arccosh(z), t / (jnp.sqrt(z - 1) * jnp.sqrt(z + 1))

  for f in ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
            "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "reciprocal", "negative",
            "conj", "expm1", "log1p", "square"]:
    fn = arccosh if f == "arccosh" else getattr(jnp, f)
    case(f"jvp_{f}", f"jvp_{f}", [zd], lambda x, fn=fn: jax.jvp(fn, (x,), (tz,))[1])
    case(f"vjp_{f}", f"vjp_{f}", [zd],
         lambda x, fn=fn: jax.vjp(fn, x)[1](jnp.full_like(x, 1 + 2j))[0])
  for f in ["real", "imag", "abs", "angle"]:
    fn = getattr(jnp, f)
    case(f"jvp_{f}", f"jvp_{f}", [zd], lambda x, fn=fn: jax.jvp(fn, (x,), (tz,))[1])
    case(f"vjp_{f}", f"vjp_{f}", [zd],
         lambda x, fn=fn: jax.vjp(fn, x)[1](jnp.full_like(jnp.real(x), 1.5))[0])
  for f in ["multiply", "divide", "add", "subtract", "power"]:
    fn = getattr(jnp, f)
    case(f"vjp2_{f}", f"vjp2_{f}", [zd, zd[::-1]],
         lambda x, y, fn=fn: jax.vjp(fn, x, y)[1](jnp.full_like(x, 1 - 1j))[1])
  re_, im_ = jnp.real(zd), jnp.imag(zd)
  case("vjp_complex", "vjp_complex", [re_, im_],
       lambda a, b: jax.vjp(lax.complex, a, b)[1](jnp.full_like(zd, 0.5 + 2j))[1])
  # trial-linalg: vdot conjugates its first operand; exp2, log2, log10 and round of
  # complex (log2 / log10 scale the parts of log(z): log2(0) = -inf + 0j); iscomplex,
  # isreal, sort_complex
  va = jnp.asarray(np.array([[1 + 2j, -0.5 + 0.25j, 3 - 1j], [0.5j, -2 + 0j, 1.5 + 1.5j]], dtype=cdt))
  vb = jnp.asarray(np.array([[0.5 - 1j, 2 + 0j, -1 + 3j], [1 + 1j, 0.25 - 0.5j, -2j]], dtype=cdt))
  case("vdot_cc", "vdot", [va, vb], jnp.vdot)
  case("vdot_cf", "vdot", [va, jnp.real(vb)], jnp.vdot)
  case("vdot_fc", "vdot", [jnp.real(va), vb], jnp.vdot)
  zl = jnp.asarray(np.array([0j, complex(-0.0, 0.0), complex(0.0, -0.0), -1 + 0j, 2j, 1.5 - 2j,
                             complex(INF, 0), complex(NAN, 0), -3 - 0.5j, 0.01 + 100j], dtype=cdt))
  for f in ["exp2", "log2", "log10"]:
    case(f"{f}_values", f, [zl], getattr(jnp, f))
    case(f"{f}_grid", f, [zg], getattr(jnp, f))
  zr = jnp.asarray(np.array([0.5 + 1.5j, 2.5 - 0.5j, -1.5 + 2.5j, -0.5 - 0.5j, 1.25 + 3.7j,
                             complex(NAN, 2.5), complex(INF, -1.5), -0.0 + 0.4j], dtype=cdt))
  case("round_values", "round", [zr], jnp.round)
  case("round_decimals", "round_decimals", [zr * 1.01], lambda x: jnp.round(x, 1), "decimals=1")
  for f in ["iscomplex", "isreal"]:
    case(f"{f}_values", f, [zl], getattr(jnp, f))
    case(f"{f}_real", f, [f32], getattr(jnp, f))
  case("sort_complex_c", "sort_complex", [sv], jnp.sort_complex)
  case("sort_complex_f", "sort_complex", [jnp.asarray(np.array([[3, -1, 2], [0.5, NAN, -4]], fdt))],
       jnp.sort_complex)
  case("sort_complex_i32", "sort_complex", [i32], jnp.sort_complex)
  # order: comparisons are lexicographic on (re, im) (jnp's _comparison_op), maximum /
  # minimum pick x where select(re equal, im order, re order) holds, else y (lax.max's
  # complex lowering; a NaN part picks y), max / min reduce lexicographically (NaN-free
  # inputs: with a NaN JAX's result depends on XLA's reduction order); clip and
  # heaviside refuse complex
  for f in ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum"]:
    case(f"{f}_pairs", f, [sa, sb], getattr(jnp, f))
  mo = jnp.asarray(np.array([[1 + 1j, 2 - 1j, 2 + 3j, -1 + 9j], [2 + 0.5j, 2 + 3j, complex(-INF, 1), 0j],
                             [0.5 - 2j, complex(0.5, INF), 0.5 + 2j, -0.0 + 1j]], dtype=cdt))
  for f in ["max", "min"]:
    case(f"{f}_all", f, [mo], getattr(jnp, f))
    case(f"{f}_axis0", f, [mo], lambda x, f=f: getattr(jnp, f)(x, axis=0), "axis=0")
    case(f"{f}_axis1", f, [mo], lambda x, f=f: getattr(jnp, f)(x, axis=1), "axis=1")
  case("clip_complex", "clip", [c3], lambda x: jnp.clip(x, -1, 1))
  case("heaviside_complex", "heaviside", [c3, c3], jnp.heaviside)
  # built on the order: fmax / fmin (where(x > y | isnan(y), x, y)), logaddexp /
  # logaddexp2 (lax_other's complex branch: the lexicographic max, the imaginary part
  # wrapped into [-pi, pi)), cummax / cummin (XLA's order: a NaN part loses to the next
  # element); quantiles and the integer-style divisions refuse complex
  for f in ["fmax", "fmin", "logaddexp", "logaddexp2"]:
    case(f"{f}_pairs", f, [sa, sb], getattr(jnp, f))
  la = jnp.asarray(np.array([1 + 2j, 3 - 1j, -2 + 0.5j, 0.5 + 3j, -1 - 3j, 2 + 2.5j, 1e3 + 1j], cdt))
  lb = jnp.asarray(np.array([2 + 0j, 3 + 1j, -2 - 0.5j, 0.5 - 3j, -1 + 3j, 4 - 2.5j, -1e3 + 2j], cdt))
  case("logaddexp_values", "logaddexp", [la, lb], jnp.logaddexp)
  case("logaddexp2_values", "logaddexp2", [la, lb], jnp.logaddexp2)
  cm = jnp.asarray(np.array([complex(-INF, -1), 1 + 2j, 1 + 3j, 0.5 + 9j, 1 + 1j, complex(NAN, 0),
                             2 - 1j, 2 + 3j, 0j, 2 + 3j, -1 + 0j] * 2, cdt))
  for f in ["cummax", "cummin"]:
    for rev in (False, True):
      case(f"{f}_complex{'_rev' if rev else ''}", f, [cm],
           lambda x, f=f, rev=rev: getattr(lax, f)(x, 0, reverse=rev), f"reverse={int(rev)}")
  for f, call in [("quantile", lambda x: jnp.quantile(x, 0.5)), ("median", jnp.median),
                  ("percentile", lambda x: jnp.percentile(x, 50)),
                  ("floor_divide", lambda x: jnp.floor_divide(x, x)),
                  ("remainder", lambda x: jnp.remainder(x, x)), ("fmod", lambda x: jnp.fmod(x, x))]:
    case(f"{f}_complex", f, [c3], call)
  return lines


def GRAD_FNS(jnp, lax):
  """Real-valued functions of one complex array (grad cases), by name."""
  return {
      "abs2": lambda z: jnp.sum(jnp.real(z * jnp.conj(z))),
      "abs": lambda z: jnp.sum(jnp.abs(z)),
      "real_exp_conj": lambda z: jnp.sum(jnp.real(jnp.exp(z) * jnp.conj(z))),
      "imag_log_real_sqrt": lambda z: jnp.sum(jnp.imag(jnp.log(z)) + jnp.real(jnp.sqrt(z))),
      "abs_sin_real_tan": lambda z: jnp.sum(jnp.abs(jnp.sin(z)) + jnp.real(jnp.tan(z))),
      "angle": lambda z: jnp.sum(jnp.angle(z)),
      "real_ratio": lambda z: jnp.real(jnp.sum(z * z / (z + 2))),
      "abs_matmul": lambda z: jnp.sum(jnp.abs(jnp.outer(z, jnp.conj(z)) @ z)),
      "mean_abs_tanh": lambda z: jnp.abs(jnp.mean(jnp.tanh(z) * jnp.cosh(z))),
  }


def HOLO_FNS(jnp, lax):
  """Holomorphic functions of a complex scalar (grad/jacfwd/jacrev holomorphic=True)."""
  return {
      "z2exp": lambda z: z * z * jnp.exp(z),
      "log_sin": lambda z: jnp.log(jnp.sin(z)) + 1 / z,
      "pow": lambda z: z ** (1.5 + 0.5j) + jnp.arctan(z),
  }


def main():
  if len(sys.argv) == 3 and sys.argv[1] == "--mode":
    print("\n".join(run_mode(int(sys.argv[2]))))
    return
  parts = []
  for x64 in (0, 1):
    out = subprocess.run([sys.executable, __file__, "--mode", str(x64)], check=True,
                         capture_output=True, text=True).stdout
    parts.append(out.strip())
  version = subprocess.run([sys.executable, "-c", "import jax; print(jax.__version__)"],
                           capture_output=True, text=True).stdout.strip()
  golden_io.write(OUT, "# Generated by tools/golden_complex.py (JAX %s). Do not edit.\n" % version,
                  parts, sep="\n")


if __name__ == "__main__":
  main()
