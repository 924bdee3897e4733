#!/usr/bin/env python3
"""golden_linalg.py -- writes tests/golden/linalg.txt: JAX's results for jax.lax.linalg,
jax.numpy.linalg and jax.scipy.linalg (src/lib/linalg.c): values over well-conditioned,
batched, singular, non-square, 0x0 / 1x1 and non-finite inputs, and gradients
(jax.grad of sum(f(x) * w), float64, param x64=1) of each differentiable function.
Only results LAPACK fixes uniquely are recorded (eigenvectors and singular vectors are
checked by identities in the C test, their signs being implementation-defined).
Complex cases (complex64/complex128: Hermitian cholesky and eigh, conjugating
triangular solves, lu/solve/inv/det/slogdet, qr, svd, norms, eig/eigvals, and float64/
complex128 gradients through real and imaginary parts) are written as (re im) pairs.
Format: tests/support/golden.h. Params: flags as 0/1.
Run:  python3 tools/golden_linalg.py"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402
import golden_reduce_movement as g  # noqa: E402

jax.config.update("jax_enable_x64", True)
g.CASES.clear()
OUT = golden_io.path("linalg.txt")
NAN, INF = float("nan"), float("inf")
rng = np.random.RandomState(14)


def rand(shape, dtype="float32"):
    return jnp.asarray(np.round(rng.uniform(-2, 2, shape) * 8) / 8, dtype=dtype)


def spd(shape, dtype="float32"):
    n = shape[-1]
    a = np.round(rng.uniform(-1, 1, shape) * 8) / 8
    a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return jnp.asarray(a, dtype=dtype)


def tri(shape, lower, dtype="float32"):
    a = np.round(rng.uniform(-1, 1, shape) * 8) / 8
    n = shape[-1]
    a = a + 3 * np.eye(n) * np.sign(rng.uniform(-1, 1, shape[:-2] + (1, n)) + 0.3)
    a = np.tril(a) if lower else np.triu(a)
    return jnp.asarray(a, dtype=dtype)


def case(name, fn, ins, call, params="", err=None):
    """g.case under JAX's default x64 mode (off), or with x64 on (param x64=1) when an
    input is 64-bit."""
    wide = any(np.dtype(x.dtype) in (np.float64, np.complex128) for x in ins)
    if wide and "x64=1" not in params:
        params = ("x64=1 " + params).strip()
    jax.config.update("jax_enable_x64", wide)
    try:
        g.case(name, fn, ins, call, params, err)
    finally:
        jax.config.update("jax_enable_x64", True)


F32, F64 = "float32", "float64"

# ------------------------------------------------------------------ cholesky
for nm, x in [("4", spd((4, 4))), ("b23", spd((2, 3, 3))), ("1", spd((1, 1))),
              ("0", jnp.zeros((0, 0), F32)), ("f64", spd((5, 5), F64)),
              ("notpd", jnp.asarray([[1.0, 2.0], [2.0, 1.0]], F32)),
              ("batchbad", jnp.stack([spd((3, 3)), -spd((3, 3))])),
              ("nan", jnp.asarray([[NAN, 0.0], [0.0, 1.0]], F32))]:
    for up in (0, 1):
        case(f"cholesky_{nm}_{up}", "linalg_cholesky", [x],
             lambda x, up=up: jnp.linalg.cholesky(x, upper=bool(up)), f"upper={up}")
ns = rand((4, 4)) + 6 * jnp.eye(4)
for low in (0, 1):
    case(f"scipy_cholesky_{low}", "scipy_cholesky", [ns], lambda x, low=low: jsl.cholesky(x, lower=bool(low)),
         f"lower={low}")
case("lax_cholesky_nosym", "lax_cholesky", [ns], lambda x: lax.linalg.cholesky(x, symmetrize_input=False),
     "symmetrize=0")
case("cholesky_int", "linalg_cholesky", [jnp.asarray([[4, 2], [2, 3]], "int32")],
     lambda x: jnp.linalg.cholesky(x), "upper=0")
case("cholesky_rank1", "linalg_cholesky", [jnp.ones((3,), F32)], jnp.linalg.cholesky, "upper=0", err="JX_ERR_SHAPE")
case("cholesky_nonsquare", "linalg_cholesky", [jnp.ones((2, 3), F32)], jnp.linalg.cholesky, "upper=0", err="JX_ERR_SHAPE")

# ------------------------------------------------------------------ triangular solve
for left in (0, 1):
    for low in (0, 1):
        for tr in (0, 1):
            for unit in (0, 1):
                a = tri((2, 4, 4), bool(low))
                b = rand((2, 4, 3) if left else (2, 3, 4))
                case(f"trsolve_{left}{low}{tr}{unit}", "lax_triangular_solve", [a, b],
                     lambda a, b, left=left, low=low, tr=tr, unit=unit: lax.linalg.triangular_solve(
                         a, b, left_side=bool(left), lower=bool(low), transpose_a=bool(tr),
                         unit_diagonal=bool(unit)),
                     f"left={left} lower={low} trans={tr} unit={unit}")
a = tri((4, 4), True)
case("trsolve_vec", "lax_triangular_solve", [a, rand((4,))],
     lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
     "left=1 lower=1 trans=0 unit=0")
case("trsolve_bad", "lax_triangular_solve", [a, rand((3, 2))],
     lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True), "left=1 lower=1 trans=0 unit=0",
     err="JX_ERR_SHAPE")
for trans in (0, 1, 2):
    for low in (0, 1):
        a = tri((3, 3), bool(low))
        case(f"solve_triangular_{trans}{low}", "scipy_solve_triangular", [a, rand((3, 2))],
             lambda a, b, trans=trans, low=low: jsl.solve_triangular(a, b, trans=trans, lower=bool(low)),
             f"trans={trans} lower={low} unit=0")
case("solve_triangular_vec", "scipy_solve_triangular", [tri((3, 3), False), rand((3,))],
     lambda a, b: jsl.solve_triangular(a, b), "trans=0 lower=0 unit=0")

# ------------------------------------------------------------------ lu
for nm, x in [("4", rand((4, 4))), ("35", rand((3, 5))), ("53", rand((5, 3))), ("b", rand((2, 4, 4))),
              ("sing", jnp.asarray([[1.0, 2.0], [2.0, 4.0]], F32)), ("1", rand((1, 1))),
              ("0", jnp.zeros((0, 0), F32)), ("f64", rand((4, 4), F64))]:
    case(f"lu_{nm}", "lax_lu", [x], lambda x: lax.linalg.lu(x))
    if x.ndim == 2:  # jax.scipy.linalg.lu takes one matrix
        case(f"scipy_lu_{nm}", "scipy_lu", [x], lambda x: jsl.lu(x), "permute_l=0")
case("scipy_lu_pl", "scipy_lu", [rand((4, 3))], lambda x: jsl.lu(x, permute_l=True), "permute_l=1")
a = rand((4, 4)) + 3 * jnp.eye(4)
for trans in (0, 1):
    case(f"lu_solve_{trans}", "scipy_lu_solve", [a, rand((4, 2))],
         lambda a, b, trans=trans: jsl.lu_solve(jsl.lu_factor(a), b, trans=trans), f"trans={trans}")
case("lu_solve_vec", "scipy_lu_solve", [a, rand((4,))], lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b),
     "trans=0")

# ------------------------------------------------------------------ solve, inv, det
for nm, a, b in [("vec", rand((4, 4)), rand((4,))), ("mat", rand((4, 4)), rand((4, 2))),
                 ("bvec", rand((2, 3, 3)), rand((3,))), ("bcast", rand((1, 3, 3)), rand((2, 3, 2))),
                 ("bcast2", rand((2, 1, 3, 3)), rand((3, 3, 1))),
                 ("int", jnp.asarray([[2, 1], [1, 3]], "int32"), jnp.asarray([1, 2], "int32")),
                 ("f64", rand((5, 5), F64), rand((5, 3), F64))]:
    case(f"solve_{nm}", "linalg_solve", [a, b], jnp.linalg.solve)
case("solve_bad", "linalg_solve", [rand((3, 3)), rand((4,))], jnp.linalg.solve, err="JX_ERR_SHAPE")
case("solve_nonsquare", "linalg_solve", [rand((3, 4)), rand((3,))], jnp.linalg.solve, err="JX_ERR_SHAPE")
for nm, x in [("4", rand((4, 4))), ("b", rand((3, 2, 2))), ("1", rand((1, 1))), ("f64", rand((6, 6), F64))]:
    case(f"inv_{nm}", "linalg_inv", [x], jnp.linalg.inv)
for nm, x in [("4", rand((4, 4))), ("2", rand((2, 2))), ("3", rand((3, 3))), ("b", rand((2, 3, 5, 5))),
              ("sing", jnp.asarray([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], F32)),
              ("0", jnp.zeros((0, 0), F32)), ("1", rand((1, 1))), ("int", jnp.asarray([[2, 1], [7, 3]], "int32")),
              ("neg", -jnp.eye(3, dtype=F32)), ("f64", rand((6, 6), F64)),
              ("inf", jnp.asarray([[INF, 1.0], [1.0, 1.0]], F32))]:
    case(f"det_{nm}", "linalg_det", [x], jnp.linalg.det)
    case(f"slogdet_{nm}", "linalg_slogdet", [x], lambda x: tuple(jnp.linalg.slogdet(x)))
case("det_rank1", "linalg_det", [rand((3,))], jnp.linalg.det, err="JX_ERR_SHAPE")
a = spd((3, 3))
for low in (0, 1):
    case(f"cho_solve_{low}", "scipy_cho_solve", [a, rand((3, 2))],
         lambda a, b, low=low: jsl.cho_solve(jsl.cho_factor(a, lower=bool(low)), b), f"lower={low}")
case("cho_solve_vec", "scipy_cho_solve", [a, rand((3,))], lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b),
     "lower=0")

# ------------------------------------------------------------------ qr, eigh, svd
for nm, x in [("44", rand((4, 4))), ("53", rand((5, 3))), ("35", rand((3, 5))), ("b", rand((2, 4, 3))),
              ("1", rand((1, 1))), ("f64", rand((4, 4), F64))]:
    for mode in ("reduced", "complete", "r"):
        case(f"qr_{nm}_{mode}", "linalg_qr", [x], lambda x, mode=mode: jnp.linalg.qr(x, mode=mode), f"mode={mode}")
    case(f"svdvals_{nm}", "linalg_svdvals", [x], jnp.linalg.svdvals)
for nm, x in [("4", spd((4, 4)) - 3 * jnp.eye(4)), ("b", rand((2, 3, 3))), ("1", rand((1, 1))),
              ("0", jnp.zeros((0, 0), F32)), ("f64", rand((5, 5), F64)), ("int", jnp.asarray([[2, 1], [1, 2]], "int32"))]:
    for uplo in ("L", "U"):
        case(f"eigvalsh_{nm}_{uplo}", "linalg_eigvalsh", [x], lambda x, uplo=uplo: jnp.linalg.eigvalsh(x, UPLO=uplo),
             f"uplo={uplo}")
case("eigh_nosym_U", "linalg_eigh_w", [rand((4, 4))],
     lambda x: jnp.linalg.eigh(x, UPLO="U", symmetrize_input=False)[0], "uplo=U sym=0")
case("eigh_nosym_L", "linalg_eigh_w", [rand((4, 4))],
     lambda x: jnp.linalg.eigh(x, UPLO="L", symmetrize_input=False)[0], "uplo=L sym=0")
case("svdvals_0", "linalg_svdvals", [jnp.zeros((0, 3), F32)], jnp.linalg.svdvals)
case("svdvals_nan", "linalg_svdvals", [jnp.asarray([[NAN, 1.0], [1.0, 1.0]], F32)], jnp.linalg.svdvals)
case("eigvalsh_nonsquare", "linalg_eigvalsh", [rand((2, 3))], jnp.linalg.eigvalsh, "uplo=L", err="JX_ERR_SHAPE")

# ------------------------------------------------------------------ norms, pinv, lstsq, products
V = jnp.asarray([3.0, -4.0, 0.0, 1.5, -0.5], F32)
for o in ["none", "2", "1", "0", "inf", "-inf", "3", "0.5"]:
    ordv = None if o == "none" else float(o)
    case(f"norm_vec_{o}", "linalg_norm", [V], lambda x, ordv=ordv: jnp.linalg.norm(x, ord=ordv), f"ord={o}")
M = rand((2, 3, 4))
for o in ["none", "fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf"]:
    ordv = None if o == "none" else o if o in ("fro", "nuc") else float(o)
    for kd in (0, 1):
        case(f"norm_mat_{o}_{kd}", "linalg_norm", [M],
             lambda x, ordv=ordv, kd=kd: jnp.linalg.norm(x, ord=ordv, axis=(1, 2), keepdims=bool(kd)),
             f"ord={o} axes=1,2 keepdims={kd}")
    case(f"norm_mat_{o}_swapped", "linalg_norm", [M],
         lambda x, ordv=ordv: jnp.linalg.norm(x, ord=ordv, axis=(2, 0)), f"ord={o} axes=2,0 keepdims=0")
case("norm_all", "linalg_norm", [M], lambda x: jnp.linalg.norm(x), "ord=none")
case("norm_axis1", "linalg_norm", [M], lambda x: jnp.linalg.norm(x, axis=1, keepdims=True), "ord=none axes=1 keepdims=1")
case("norm_int", "linalg_norm", [jnp.asarray([[3, 4], [0, 0]], "int32")], lambda x: jnp.linalg.norm(x), "ord=none")
for p in ["none", "2", "-2", "1", "inf", "fro", "nuc"]:
    pv = None if p == "none" else p if p in ("fro", "nuc") else float(p)
    case(f"cond_{p}", "linalg_cond", [rand((2, 3, 3))], lambda x, pv=pv: jnp.linalg.cond(x, pv), f"p={p}")
case("cond_sing", "linalg_cond", [jnp.asarray([[1.0, 2.0], [0.0, 0.0]], F32)], jnp.linalg.cond, "p=none")
for nm, x in [("44", rand((4, 4))), ("53", rand((5, 3))), ("b", rand((2, 3, 5))),
              ("rankdef", jnp.asarray([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]], F32))]:
    case(f"pinv_{nm}", "linalg_pinv", [x], jnp.linalg.pinv)
    case(f"matrix_rank_{nm}", "linalg_matrix_rank", [x], jnp.linalg.matrix_rank)
for nm, a, b in [("tall", rand((6, 3)), rand((6,))), ("wide", rand((3, 5)), rand((3, 2))),
                 ("def", jnp.asarray([[1.0, 2.0], [2.0, 4.0], [1.0, 2.0]], F32), rand((3,)))]:
    case(f"lstsq_{nm}", "linalg_lstsq", [a, b], lambda a, b: tuple(jnp.linalg.lstsq(a, b)))
for n in (0, 1, 2, 3, 5, 8, -1, -3):
    case(f"matrix_power_{n}", "linalg_matrix_power", [rand((2, 3, 3)) + 2 * jnp.eye(3)],
         lambda x, n=n: jnp.linalg.matrix_power(x, n), f"n={n}")
case("matrix_power_int", "linalg_matrix_power", [jnp.asarray([[1, 1], [1, 0]], "int32")],
     lambda x: jnp.linalg.matrix_power(x, 10), "n=10")
case("multi_dot_4", "linalg_multi_dot", [rand((10, 3)), rand((3, 8)), rand((8, 2)), rand((2, 6))],
     lambda *a: jnp.linalg.multi_dot(a))
case("multi_dot_vec", "linalg_multi_dot", [rand((4,)), rand((4, 5)), rand((5, 3)), rand((3,))],
     lambda *a: jnp.linalg.multi_dot(a))
case("cross", "linalg_cross", [rand((2, 3)), rand((3,))], jnp.linalg.cross, "axis=-1")
case("cross_axis0", "linalg_cross", [rand((3, 2)), rand((3, 2))], lambda a, b: jnp.linalg.cross(a, b, axis=0),
     "axis=0")
case("vecdot", "linalg_vecdot", [rand((2, 4)), rand((4,))], jnp.linalg.vecdot, "axis=-1")
case("kron", "kron", [rand((2, 3)), rand((2, 2))], jnp.kron)
case("kron_rank", "kron", [rand((3,)), rand((2, 2))], jnp.kron)
for k in (0, 1, -2, 5):
    case(f"diagonal_{k}", "diagonal", [rand((2, 3, 4))], lambda x, k=k: jnp.diagonal(x, k, 1, 2), f"offset={k}")
    case(f"trace_{k}", "trace", [rand((3, 4, 2))], lambda x, k=k: jnp.trace(x, k, 0, 1), f"offset={k} axis1=0 axis2=1")
case("trace_int", "trace", [jnp.asarray([[1, 2], [3, 4]], "int8")], jnp.trace, "offset=0")

# ------------------------------------------------------------------ gradients (float64)
def grad_case(name, fn, ins, f, params=""):
    """d/dx_i of sum(f(*x) * w) for a fixed weight w per output (float64)."""
    outs = f(*ins)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    ws = [jnp.asarray(np.round(rng.uniform(-1, 1, np.shape(o)) * 8) / 8, F64) for o in outs]

    def loss(*x):
        r = f(*x)
        r = r if isinstance(r, (list, tuple)) else [r]
        return sum(jnp.sum(o * w) for o, w in zip(r, ws) if jnp.issubdtype(o.dtype, jnp.floating))
    grads = jax.grad(loss, argnums=tuple(range(len(ins))))(*ins)
    case(name, fn, list(ins) + ws, lambda *a: grads, ("x64=1 " + params).strip())


grad_case("grad_cholesky", "linalg_cholesky", [spd((4, 4), F64)], jnp.linalg.cholesky, "upper=0")
grad_case("grad_cholesky_b", "linalg_cholesky", [spd((2, 3, 3), F64)], jnp.linalg.cholesky, "upper=0")
for left in (0, 1):
    for low in (0, 1):
        for tr in (0, 1):
            a = tri((3, 3), bool(low), F64)
            b = rand((3, 2) if left else (2, 3), F64)
            grad_case(f"grad_trsolve_{left}{low}{tr}", "lax_triangular_solve", [a, b],
                      lambda a, b, left=left, low=low, tr=tr: lax.linalg.triangular_solve(
                          a, b, left_side=bool(left), lower=bool(low), transpose_a=bool(tr)),
                      f"left={left} lower={low} trans={tr} unit=0")
grad_case("grad_lu", "lax_lu_lu", [rand((4, 4), F64)], lambda x: lax.linalg.lu(x)[0])
grad_case("grad_lu_35", "lax_lu_lu", [rand((3, 5), F64)], lambda x: lax.linalg.lu(x)[0])
grad_case("grad_lu_53", "lax_lu_lu", [rand((5, 3), F64)], lambda x: lax.linalg.lu(x)[0])
grad_case("grad_solve", "linalg_solve", [rand((4, 4), F64) + 3 * jnp.eye(4), rand((4, 2), F64)], jnp.linalg.solve)
grad_case("grad_solve_vec", "linalg_solve", [rand((2, 3, 3), F64) + 3 * jnp.eye(3), rand((3,), F64)],
          jnp.linalg.solve)
grad_case("grad_inv", "linalg_inv", [rand((4, 4), F64) + 3 * jnp.eye(4)], jnp.linalg.inv)
grad_case("grad_det", "linalg_det", [rand((4, 4), F64)], jnp.linalg.det)
grad_case("grad_det_b", "linalg_det", [rand((2, 5, 5), F64)], jnp.linalg.det)
grad_case("grad_slogdet", "linalg_slogdet_logdet", [rand((4, 4), F64)], lambda x: jnp.linalg.slogdet(x)[1])

grad_case("grad_qr", "linalg_qr", [rand((4, 4), F64)], lambda x: jnp.linalg.qr(x), "mode=reduced")
grad_case("grad_qr_53", "linalg_qr", [rand((5, 3), F64)], lambda x: jnp.linalg.qr(x), "mode=reduced")
grad_case("grad_qr_35", "linalg_qr", [rand((3, 5), F64)], lambda x: jnp.linalg.qr(x), "mode=reduced")
grad_case("grad_qr_b", "linalg_qr", [rand((2, 3, 3), F64)], lambda x: jnp.linalg.qr(x), "mode=reduced")
# eigenvector and singular-vector signs are arbitrary: losses of their squares
grad_case("grad_eigh", "linalg_eigh_sq", [rand((4, 4), F64)],
          lambda x: (jnp.linalg.eigh(x)[0], jnp.linalg.eigh(x)[1] ** 2))
grad_case("grad_eigh_b", "linalg_eigh_sq", [rand((2, 3, 3), F64)],
          lambda x: (jnp.linalg.eigh(x)[0], jnp.linalg.eigh(x)[1] ** 2))
for nm, shp in [("44", (4, 4)), ("53", (5, 3)), ("35", (3, 5)), ("b", (2, 3, 4))]:
    grad_case(f"grad_svd_{nm}", "linalg_svd_sq", [rand(shp, F64)],
              lambda x: (jnp.linalg.svd(x, full_matrices=False)[0] ** 2, jnp.linalg.svd(x, full_matrices=False)[1],
                         jnp.linalg.svd(x, full_matrices=False)[2] ** 2))
    grad_case(f"grad_svdvals_{nm}", "linalg_svdvals", [rand(shp, F64)], jnp.linalg.svdvals)

grad_case("grad_norm_nuc", "linalg_norm", [rand((3, 4), F64)], lambda x: jnp.linalg.norm(x, "nuc"), "ord=nuc")
grad_case("grad_norm_2", "linalg_norm", [rand((3, 4), F64)], lambda x: jnp.linalg.norm(x, 2), "ord=2")
grad_case("grad_pinv", "linalg_pinv", [rand((4, 3), F64)], jnp.linalg.pinv)
grad_case("grad_matrix_power", "linalg_matrix_power", [rand((3, 3), F64) + 2 * jnp.eye(3)],
          lambda x: jnp.linalg.matrix_power(x, -3), "n=-3")

# ------------------------------------------------------------------ expm (own generator: the
# cases above keep their inputs)
erng = np.random.RandomState(141)


def erand(shape, scale, dtype=F32):
    return jnp.asarray(np.round(erng.uniform(-1, 1, shape) * 16) / 16 * scale, dtype=dtype)


# 1-norms across every Pade order and into the squarings (float32: 3/5/7; float64: 3/5/7/9/13)
for dt in (F32, F64):
    for k, sc in enumerate([0.002, 0.05, 0.2, 0.6, 1.5, 4.0, 40.0]):
        case(f"expm_{dt}_{k}", "scipy_expm", [erand((4, 4), sc, dt)], jsl.expm, "upper=0 maxsq=16")
case("expm_batch", "scipy_expm", [erand((2, 3, 3, 3), 1.0)], jsl.expm, "upper=0 maxsq=16")
case("expm_upper", "scipy_expm", [jnp.triu(erand((4, 4), 2.0))],
     lambda x: jsl.expm(x, upper_triangular=True), "upper=1 maxsq=16")
case("expm_maxsq", "scipy_expm", [erand((3, 3), 500.0)], lambda x: jsl.expm(x, max_squarings=3), "upper=0 maxsq=3")
case("expm_1", "scipy_expm", [jnp.asarray([[1.5]], F32)], jsl.expm, "upper=0 maxsq=16")
case("expm_0", "scipy_expm", [jnp.zeros((0, 0), F32)], jsl.expm, "upper=0 maxsq=16")
case("expm_int", "scipy_expm", [jnp.asarray([[0, 1], [-1, 0]], "int32")], jsl.expm, "upper=0 maxsq=16")
case("expm_zero", "scipy_expm", [jnp.zeros((3, 3), F32)], jsl.expm, "upper=0 maxsq=16")
case("expm_rank1", "scipy_expm", [jnp.ones((3,), F32)], jsl.expm, "upper=0 maxsq=16", err="JX_ERR_SHAPE")
case("expm_nonsquare", "scipy_expm", [jnp.ones((2, 3), F32)], jsl.expm, "upper=0 maxsq=16", err="JX_ERR_SHAPE")
case("expm_f16", "scipy_expm", [jnp.ones((2, 2), "float16")], jsl.expm, "upper=0 maxsq=16", err="JX_ERR_DTYPE")

# ------------------------------------------------------------------ tridiagonal_solve
def tridiag(batch, m, n, dtype=F32):
    dl, du = erand(batch + (m,), 1.0, dtype), erand(batch + (m,), 1.0, dtype)
    d = erand(batch + (m,), 1.0, dtype) + 4 * jnp.sign(erand(batch + (m,), 1.0, dtype) + 0.03)
    return [dl, d, du, erand(batch + (m, n), 2.0, dtype)]


ts = lax.linalg.tridiagonal_solve
for nm, (bt, m, n) in {"5x2": ((), 5, 2), "b": ((2, 3), 4, 3), "1": ((), 1, 1), "0": ((), 0, 2),
                       "n0": ((), 3, 0), "big": ((), 40, 5)}.items():
    case(f"tridiag_{nm}", "lax_tridiagonal_solve", tridiag(bt, m, n), ts)
case("tridiag_f64", "lax_tridiagonal_solve", tridiag((), 6, 2, F64), ts)
case("tridiag_pivot", "lax_tridiagonal_solve",  # a zero leading diagonal needs the row swap
     [jnp.asarray([0, 1, 1], F32), jnp.asarray([0, 2, 3], F32), jnp.asarray([1, 1, 0], F32), erand((3, 2), 1.0)], ts)
case("tridiag_singular", "lax_tridiagonal_solve",
     [jnp.zeros((3,), F32), jnp.asarray([1, 0, 1], F32), jnp.zeros((3,), F32), jnp.ones((3, 2), F32)], ts)
t4 = tridiag((), 4, 2)
case("tridiag_dtype", "lax_tridiagonal_solve", [t4[0].astype("int32")] + t4[1:], ts, err="JX_ERR_DTYPE")
case("tridiag_shape", "lax_tridiagonal_solve", [t4[0][:3]] + t4[1:], ts, err="JX_ERR_SHAPE")
case("tridiag_rank", "lax_tridiagonal_solve", t4[:3] + [t4[3][:, 0]], ts, err="JX_ERR_SHAPE")
grad_case("grad_tridiag", "lax_tridiagonal_solve", tridiag((), 5, 3, F64), ts)
grad_case("grad_tridiag_b", "lax_tridiagonal_solve", tridiag((2,), 4, 2, F64), ts)
for k, sc in enumerate([0.1, 1.0, 8.0]):
    grad_case(f"grad_expm_{k}", "scipy_expm", [erand((3, 3), sc, F64)], jsl.expm, "upper=0 maxsq=16")


# ------------------------------------------------------------------ complex (own generator)
crng = np.random.RandomState(1414)
C64, C128 = "complex64", "complex128"


def crand(shape, dtype=C64):
    re_, im_ = (np.round(crng.uniform(-2, 2, shape) * 8) / 8 for _ in range(2))
    return jnp.asarray(re_ + 1j * im_, dtype=dtype)


def hpd(shape, dtype=C64):
    a = np.asarray(crand(shape, C128)) / 2
    n = shape[-1]
    return jnp.asarray(a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n), dtype=dtype)


def ctri(shape, lower, dtype=C64):
    a = np.asarray(crand(shape, C128)) / 2 + 3 * np.eye(shape[-1])
    return jnp.asarray(np.tril(a) if lower else np.triu(a), dtype=dtype)


for dt in (C64, C128):
    sfx = "c64" if dt == C64 else "c128"
    for up in (0, 1):
        case(f"cholesky_{sfx}_{up}", "linalg_cholesky", [hpd((2, 3, 3), dt)],
             lambda x, up=up: jnp.linalg.cholesky(x, upper=bool(up)), f"upper={up}")
    case(f"scipy_cholesky_{sfx}", "scipy_cholesky", [hpd((3, 3), dt)], lambda x: jsl.cholesky(x, lower=True),
         "lower=1")
    for left in (0, 1):
        for low in (0, 1):
            for tr, cj in ((0, 0), (1, 0), (1, 1), (0, 1)):
                a = ctri((2, 3, 3), bool(low), dt)
                b = crand((2, 3, 2) if left else (2, 2, 3), dt)
                case(f"trsolve_{sfx}_{left}{low}{tr}{cj}", "lax_triangular_solve", [a, b],
                     lambda a, b, left=left, low=low, tr=tr, cj=cj: lax.linalg.triangular_solve(
                         a, b, left_side=bool(left), lower=bool(low), transpose_a=bool(tr), conjugate_a=bool(cj)),
                     f"left={left} lower={low} trans={tr} conj={cj} unit=0")
    for trans in (0, 1, 2):
        case(f"solve_triangular_{sfx}_{trans}", "scipy_solve_triangular", [ctri((3, 3), True, dt), crand((3, 2), dt)],
             lambda a, b, trans=trans: jsl.solve_triangular(a, b, trans=trans, lower=True), f"trans={trans} lower=1 unit=0")
    for nm, x in [("4", crand((4, 4), dt)), ("35", crand((3, 5), dt)), ("b", crand((2, 3, 3), dt))]:
        case(f"lu_{sfx}_{nm}", "lax_lu", [x], lambda x: lax.linalg.lu(x))
    a = crand((4, 4), dt) + 3 * jnp.eye(4, dtype=dt)
    for trans in (0, 1, 2):
        case(f"lu_solve_{sfx}_{trans}", "scipy_lu_solve", [a, crand((4, 2), dt)],
             lambda a, b, trans=trans: jsl.lu_solve(jsl.lu_factor(a), b, trans=trans), f"trans={trans}")
    case(f"solve_{sfx}", "linalg_solve", [crand((2, 3, 3), dt), crand((2, 3, 2), dt)], jnp.linalg.solve)
    case(f"solve_{sfx}_vec", "linalg_solve", [crand((3, 3), dt), crand((3,), dt)], jnp.linalg.solve)
    case(f"inv_{sfx}", "linalg_inv", [crand((2, 4, 4), dt)], jnp.linalg.inv)
    for nm, x in [("4", crand((4, 4), dt)), ("b", crand((2, 3, 3), dt)),
                  ("sing", jnp.asarray([[1 + 1j, 2 + 2j], [1, 2]], dt)), ("1", crand((1, 1), dt))]:
        case(f"det_{sfx}_{nm}", "linalg_det", [x], jnp.linalg.det)
        case(f"slogdet_{sfx}_{nm}", "linalg_slogdet", [x], lambda x: tuple(jnp.linalg.slogdet(x)))
    case(f"cho_solve_{sfx}", "scipy_cho_solve", [hpd((3, 3), dt), crand((3, 2), dt)],
         lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=True), b), "lower=1")
    for nm, x in [("44", crand((4, 4), dt)), ("53", crand((5, 3), dt)), ("35", crand((3, 5), dt)),
                  ("b", crand((2, 3, 3), dt))]:
        for mode in ("reduced", "complete"):
            case(f"qr_{sfx}_{nm}_{mode}", "linalg_qr", [x], lambda x, mode=mode: jnp.linalg.qr(x, mode=mode),
                 f"mode={mode}")
        case(f"svdvals_{sfx}_{nm}", "linalg_svdvals", [x], jnp.linalg.svdvals)
    for uplo in ("L", "U"):
        case(f"eigvalsh_{sfx}_{uplo}", "linalg_eigvalsh", [hpd((2, 4, 4), dt) - 4 * jnp.eye(4, dtype=dt)],
             lambda x, uplo=uplo: jnp.linalg.eigvalsh(x, UPLO=uplo), f"uplo={uplo}")
    case(f"eigh_nosym_{sfx}", "linalg_eigh_w", [crand((4, 4), dt)],
         lambda x: jnp.linalg.eigh(x, UPLO="L", symmetrize_input=False)[0], "uplo=L sym=0")
    cv = crand((5,), dt)
    for o in ["none", "2", "1", "0", "inf", "-inf", "3"]:
        ordv = None if o == "none" else float(o)
        case(f"norm_{sfx}_vec_{o}", "linalg_norm", [cv], lambda x, ordv=ordv: jnp.linalg.norm(x, ord=ordv), f"ord={o}")
    cm = crand((2, 3, 4), dt)
    for o in ["fro", "nuc", "1", "2", "inf", "-2"]:
        ordv = o if o in ("fro", "nuc") else float(o)
        case(f"norm_{sfx}_mat_{o}", "linalg_norm", [cm], lambda x, ordv=ordv: jnp.linalg.norm(x, ord=ordv, axis=(1, 2)),
             f"ord={o} axes=1,2 keepdims=0")
    case(f"norm_{sfx}_all", "linalg_norm", [cm], lambda x: jnp.linalg.norm(x), "ord=none")
    case(f"pinv_{sfx}", "linalg_pinv", [crand((2, 4, 3), dt)], jnp.linalg.pinv)
    case(f"matrix_rank_{sfx}", "linalg_matrix_rank", [crand((3, 4), dt)], jnp.linalg.matrix_rank)
    case(f"cond_{sfx}", "linalg_cond", [crand((2, 3, 3), dt)], jnp.linalg.cond, "p=none")
    case(f"cond_{sfx}_fro", "linalg_cond", [crand((3, 3), dt)], lambda x: jnp.linalg.cond(x, "fro"), "p=fro")
    case(f"lstsq_{sfx}", "linalg_lstsq", [crand((5, 3), dt), crand((5, 2), dt)], lambda a, b: tuple(jnp.linalg.lstsq(a, b)))

# eig / eigvals: LAPACK geev's order is not sorted; the goldens sort (jnp.sort_complex's
# lexicographic order) and so does the C test
for nm, x in [("f32", rand((4, 4))), ("f64", rand((5, 5), F64)), ("b", rand((2, 3, 3))),
              ("rot", jnp.asarray([[0.0, -1.0], [1.0, 0.0]], F32)), ("1", rand((1, 1))),
              ("c64", crand((4, 4))), ("c128", crand((3, 3), C128)), ("int", jnp.asarray([[2, 1], [0, 3]], "int32")),
              ("sym", spd((3, 3)))]:
    case(f"eigvals_{nm}", "linalg_eigvals_sorted", [x], lambda x: jnp.sort(jnp.linalg.eigvals(x)))
case("eigvals_0", "linalg_eigvals_sorted", [jnp.zeros((0, 0), F32)], lambda x: jnp.sort(jnp.linalg.eigvals(x)))
case("eigvals_rank1", "linalg_eigvals_sorted", [jnp.ones((3,), F32)], jnp.linalg.eigvals, err="JX_ERR_SHAPE")
case("eigvals_nonsquare", "linalg_eigvals_sorted", [jnp.ones((2, 3), F32)], jnp.linalg.eigvals, err="JX_ERR_SHAPE")


def ri(f):
    """f's complex results as (real, imag) pairs: float gradients of complex functions."""
    def g_(*a):
        r = f(*a)
        r = r if isinstance(r, (list, tuple)) else [r]
        out = []
        for o in r:
            if jnp.iscomplexobj(o):
                out += [jnp.real(o), jnp.imag(o)]
            else:
                out.append(o)
        return tuple(out)
    return g_


grad_case("grad_cholesky_c", "linalg_cholesky_ri", [hpd((3, 3), C128)], ri(jnp.linalg.cholesky), "upper=0")
for left, low, tr, cj in ((1, 1, 0, 0), (1, 0, 1, 1), (0, 1, 1, 0), (0, 0, 0, 1)):
    a, b = ctri((3, 3), bool(low), C128), crand((3, 2) if left else (2, 3), C128)
    grad_case(f"grad_trsolve_c_{left}{low}{tr}{cj}", "lax_triangular_solve_ri", [a, b],
              ri(lambda a, b, left=left, low=low, tr=tr, cj=cj: lax.linalg.triangular_solve(
                  a, b, left_side=bool(left), lower=bool(low), transpose_a=bool(tr), conjugate_a=bool(cj))),
              f"left={left} lower={low} trans={tr} conj={cj} unit=0")
grad_case("grad_solve_c", "linalg_solve_ri", [crand((3, 3), C128) + 3 * jnp.eye(3), crand((3, 2), C128)],
          ri(jnp.linalg.solve))
grad_case("grad_inv_c", "linalg_inv_ri", [crand((3, 3), C128) + 3 * jnp.eye(3)], ri(jnp.linalg.inv))
grad_case("grad_det_c", "linalg_det_ri", [crand((3, 3), C128)], ri(jnp.linalg.det))
grad_case("grad_slogdet_c", "linalg_slogdet_logdet", [crand((3, 3), C128)], lambda x: jnp.linalg.slogdet(x)[1])
grad_case("grad_qr_c", "linalg_qr_ri", [crand((4, 3), C128)], ri(lambda x: jnp.linalg.qr(x)), "mode=reduced")
grad_case("grad_qr_c_wide", "linalg_qr_ri", [crand((2, 3), C128)], ri(lambda x: jnp.linalg.qr(x)), "mode=reduced")
grad_case("grad_qr_complete", "linalg_qr", [rand((5, 3), F64)], lambda x: jnp.linalg.qr(x, mode="complete"),
          "mode=complete")
grad_case("grad_qr_c_complete", "linalg_qr_ri", [crand((4, 2), C128)], ri(lambda x: jnp.linalg.qr(x, mode="complete")),
          "mode=complete")
grad_case("grad_eigvalsh_c", "linalg_eigvalsh", [hpd((3, 3), C128)], jnp.linalg.eigvalsh, "uplo=L")
grad_case("grad_eigh_c_sq", "linalg_eigh_abs2", [hpd((3, 3), C128)],
          lambda x: (jnp.linalg.eigh(x)[0], jnp.abs(jnp.linalg.eigh(x)[1]) ** 2))
for nm, shp in [("44", (3, 3)), ("53", (4, 2)), ("35", (2, 4))]:
    grad_case(f"grad_svdvals_c_{nm}", "linalg_svdvals", [crand(shp, C128)], jnp.linalg.svdvals)
    grad_case(f"grad_svd_c_{nm}", "linalg_svd_abs2", [crand(shp, C128)],
              lambda x: (jnp.abs(jnp.linalg.svd(x, full_matrices=False)[0]) ** 2,
                         jnp.linalg.svd(x, full_matrices=False)[1],
                         jnp.abs(jnp.linalg.svd(x, full_matrices=False)[2]) ** 2))
grad_case("grad_norm_c", "linalg_norm", [crand((3, 4), C128)], lambda x: jnp.linalg.norm(x), "ord=none")
grad_case("grad_norm_c_nuc", "linalg_norm", [crand((3, 4), C128)], lambda x: jnp.linalg.norm(x, "nuc"), "ord=nuc")
# eigenvalues' symmetric functions (geev's order is arbitrary): real and imaginary
# parts of sum(w^2) and sum(w^3)
def eig_sym(x):
    w = jnp.linalg.eigvals(x)
    s2, s3 = jnp.sum(w * w), jnp.sum(w * w * w)
    return (jnp.real(s2), jnp.imag(s2), jnp.real(s3), jnp.imag(s3))


grad_case("grad_eigvals", "linalg_eigvals_sym", [rand((4, 4), F64)], eig_sym)
grad_case("grad_eigvals_c", "linalg_eigvals_sym", [crand((3, 3), C128)], eig_sym)

# ------------------------------------------------------------------ issue 14 leftovers
# (own generator, appended last so the cases above keep their draws)
def rounded_rand(rng):
    """Arrays of multiples of 1/8 in [-2, 2] drawn from rng (complex: two draws)."""
    def rand(shape, dtype=F32):
        a = np.round(rng.uniform(-2, 2, shape) * 8) / 8
        if dtype.startswith("complex"):
            a = a + 1j * np.round(rng.uniform(-2, 2, shape) * 8) / 8
        return jnp.asarray(a, dtype=dtype)
    return rand


lrand = rounded_rand(np.random.RandomState(1416))


def lax_eigh_w_sq(x, lower, sym, sort):
    v, w = lax.linalg.eigh(x, lower=bool(lower), symmetrize_input=bool(sym), sort_eigenvalues=bool(sort))
    return w, jnp.abs(v) ** 2


# lax.linalg.eigh(sort_eigenvalues=False): JAX's CPU lowering ignores it (syevd/heevd
# return ascending eigenvalues), so the results equal the sorted call's.
for nm, x in [("4", lrand((4, 4))), ("b", lrand((2, 3, 3))), ("f64", lrand((5, 5), F64)),
              ("c64", lrand((3, 3), C64)), ("c128", lrand((4, 4), C128))]:
    for lower, sym, sort in ((1, 1, 0), (0, 1, 0), (1, 0, 0), (1, 1, 1)):
        case(f"lax_eigh_{nm}_{lower}{sym}{sort}", "lax_eigh_sq", [x],
             lambda x, lower=lower, sym=sym, sort=sort: lax_eigh_w_sq(x, lower, sym, sort),
             f"lower={lower} sym={sym} sort={sort}")
grad_case("grad_lax_eigh_nosort", "lax_eigh_sq", [lrand((4, 4), F64)],
          lambda x: lax_eigh_w_sq(x, 1, 1, 0), "lower=1 sym=1 sort=0")


# complex tridiagonal_solve (LAPACK cgtsv / zgtsv)
def ctridiag(batch, m, n, dtype=C64):
    dl, du = lrand(batch + (m,), dtype) / 2, lrand(batch + (m,), dtype) / 2
    d = lrand(batch + (m,), dtype) / 4 + 4 * jnp.sign(lrand(batch + (m,), F32) + 0.03)
    return [dl, d.astype(dtype), du, lrand(batch + (m, n), dtype)]


for nm, (bt, m, n, dt) in {"c64_5x2": ((), 5, 2, C64), "c64_b": ((2, 3), 4, 3, C64), "c64_1": ((), 1, 1, C64),
                           "c64_0": ((), 0, 2, C64), "c128_6x2": ((), 6, 2, C128),
                           "c128_big": ((), 30, 4, C128)}.items():
    case(f"tridiag_{nm}", "lax_tridiagonal_solve", ctridiag(bt, m, n, dt), ts)
case("tridiag_c64_pivot", "lax_tridiagonal_solve",  # a zero leading diagonal needs the row swap
     [jnp.asarray([0, 1j, 1], C64), jnp.asarray([0, 2 + 1j, 3], C64), jnp.asarray([1 - 1j, 1, 0], C64),
      lrand((3, 2), C64)], ts)
case("tridiag_c64_singular", "lax_tridiagonal_solve",
     [jnp.zeros((3,), C64), jnp.asarray([1, 0, 1j], C64), jnp.zeros((3,), C64), jnp.ones((3, 2), C64)], ts)
ct4 = ctridiag((), 4, 2)
case("tridiag_c64_mixed", "lax_tridiagonal_solve", [ct4[0].real] + ct4[1:], ts, err="JX_ERR_DTYPE")
grad_case("grad_tridiag_c", "lax_tridiagonal_solve_ri", ctridiag((), 5, 3, C128), ri(ts))
grad_case("grad_tridiag_c_b", "lax_tridiagonal_solve_ri", ctridiag((2,), 4, 2, C128), ri(ts))

# ------------------------------------------------------------------ user trial fixes
# (own generator, appended last so the cases above keep their draws)
urng = np.random.RandomState(1417)
urand = rounded_rand(urng)


# lstsq drops zero singular values whatever rcond is: mask = (s > 0) & (s >= rcond * s[0])
for nm, a, b, rc in [("zeros", jnp.zeros((2, 2), F32), jnp.ones((2,), F32), None),
                     ("zeros_rc0", jnp.zeros((2, 2), F32), jnp.ones((2,), F32), 0.0),
                     ("diag_rc0", jnp.asarray([[1.0, 0.0], [0.0, 0.0]], F32), jnp.ones((2,), F32), 0.0),
                     ("diag_f64", jnp.asarray([[1.0, 0.0], [0.0, 0.0]], F64), jnp.ones((2,), F64), None),
                     ("def_rc0", jnp.asarray([[3.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]], F64),
                      urand((3, 2), F64), 0.0),
                     ("neg_rc", urand((4, 3)), urand((4,)), -1.0)]:
    case(f"lstsq_{nm}", "linalg_lstsq", [a, b], lambda a, b, rc=rc: tuple(jnp.linalg.lstsq(a, b, rcond=rc)),
         "" if rc is None else f"rcond={rc}")
# vecdot conjugates x1 (sum(conj(x1) * x2)); batch dims broadcast
for dt in (C64, C128):
    case(f"vecdot_{dt}", "linalg_vecdot", [urand((2, 3), dt), urand((3,), dt)], jnp.linalg.vecdot, "axis=-1")
case("vecdot_mixed", "linalg_vecdot", [urand((3, 2), C64), urand((3, 1))],
     lambda a, b: jnp.linalg.vecdot(a, b, axis=0), "axis=0")
case("vecdot_mixed_real_x1", "linalg_vecdot", [urand((4,)), urand((4,), C64)], jnp.linalg.vecdot, "axis=-1")
# solve_triangular / lu_solve broadcast batch dims (jnp.vectorize's signatures
# (n,n),(n)->(n) for a 1-d b or a b of one dim less than a with a's last dim, else
# (n,n),(n,k)->(n,k))
for nm, ash, bsh in [("bcast_a", (2, 3, 3), (3, 2)), ("bcast_b", (3, 3), (4, 3, 2)), ("bvec", (2, 3, 3), (3,)),
                     ("bvec_batched", (2, 3, 3), (2, 3)), ("bcast_both", (2, 1, 3, 3), (3, 3, 1)),
                     ("bvec_bcast", (1, 3, 3), (4, 3))]:
    for trans in (0, 1):
        a = jnp.asarray(np.triu(np.asarray(urand(ash))) + 3 * np.eye(3), F32)
        case(f"solve_triangular_{nm}_{trans}", "scipy_solve_triangular", [a, urand(bsh)],
             lambda a, b, trans=trans: jsl.solve_triangular(a, b, trans=trans), f"trans={trans} lower=0 unit=0")
for nm, ash, bsh in [("bcast_a", (2, 3, 3), (3, 2)), ("bvec", (2, 3, 3), (3,)), ("bcast_b", (3, 3), (4, 3, 2)),
                     ("bcast_both", (2, 3, 3), (4, 1, 3, 2)), ("bvec_batched", (2, 3, 3), (2, 3))]:
    for trans in (0, 1):
        a = urand(ash) + 3 * jnp.eye(3)
        case(f"lu_solve_{nm}_{trans}", "scipy_lu_solve", [a, urand(bsh)],
             lambda a, b, trans=trans: jsl.lu_solve(jsl.lu_factor(a), b, trans=trans), f"trans={trans}")
case("solve_triangular_bcast_bad", "scipy_solve_triangular", [urand((2, 3, 3)) + 3 * jnp.eye(3), urand((3, 3))],
     lambda a, b: jsl.solve_triangular(a, b), "trans=0 lower=0 unit=0", err="JX_ERR_SHAPE")
case("solve_triangular_core_bad", "scipy_solve_triangular", [urand((3, 3)) + 3 * jnp.eye(3), urand((2, 5, 3))],
     lambda a, b: jsl.solve_triangular(a, b), "trans=0 lower=0 unit=0", err="JX_ERR_SHAPE")
case("lu_solve_bcast_bad", "scipy_lu_solve", [urand((2, 3, 3)) + 3 * jnp.eye(3), urand((3, 3))],
     lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), "trans=0", err="JX_ERR_SHAPE")
case("lu_solve_core_bad", "scipy_lu_solve", [urand((3, 3)) + 3 * jnp.eye(3), urand((4,))],
     lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), "trans=0", err="JX_ERR_SHAPE")


# slogdet / det of matrices holding NaN: sign and logabsdet NaN. JAX 0.10.2 gives that
# for n <= 2 (its closed forms) but sign +-1 (real) or 0 with logabsdet -inf (complex
# 4x4) through LU for n >= 3; the math (a NaN determinant has no sign) wins: NaN for
# every n, as the n <= 2 results.
def slogdet_nan(x):
    sign, ld = jnp.linalg.slogdet(x)
    bad = jnp.any(jnp.isnan(x), axis=(-2, -1))
    nan = jnp.asarray(complex(NAN, NAN) if jnp.iscomplexobj(sign) else NAN, sign.dtype)
    return jnp.where(bad, nan, sign), jnp.where(bad, NAN, ld)


def det_nan(x):
    sign, ld = slogdet_nan(x)
    return jnp.where(jnp.isnan(ld), sign, jnp.linalg.det(x))


for n in (1, 2, 3, 4):
    for dt in (F32, C64):
        for i in sorted({0, n - 1}):  # NaN on the first pivot, or below it
            x = np.eye(n, dtype=dt) * -1
            x[i, 0] = NAN
            sfx = f"{n}_{dt}_{i}"
            case(f"slogdet_nan_{sfx}", "linalg_slogdet", [jnp.asarray(x)], slogdet_nan)
            case(f"det_nan_{sfx}", "linalg_det", [jnp.asarray(x)], det_nan)
xb = np.array(urand((3, 4, 4)))
xb[1, 2, 3] = NAN
case("slogdet_nan_batch", "linalg_slogdet", [jnp.asarray(xb)], slogdet_nan)



rng = urng  # grad_case's weights too come from this section's generator


# det's derivative at singular matrices: the cofactor matrix (d det(a) = tr(adj(a) da)),
# for rank n-1 too, and zeros for rank < n-1. JAX's own rule (_cofactor_solve, n >= 4;
# the closed forms' derivatives for n = 2, 3) assumes partial pivoting leaves the zero
# pivot of a rank n-1 matrix last; rank3_4's LU has it at step 2, and JAX's gradient
# there is 0: for the cases in JAX_WRONG the math wins (cofactors from minors).
# Matrices whose LU has exact zero pivots (small integers), so the rank filter sees
# what JAX's does.
SING = [("sing2", [[1, 2], [2, 4]]), ("zero1", [[0]]), ("zero3", np.zeros((3, 3))),
        ("rank2_3", [[1, 2, 3], [2, 4, 6], [1, 0, 1]]),
        ("rank3_4", [[1, 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [0, 1, 1, 1]]),
        ("rank2_4", [[1, 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [2, 0, 2, 0]]),
        ("rank4_5", [[2, 1, 0, 1, 3], [1, 1, 1, 0, 2], [3, 2, 1, 1, 5], [0, 1, 2, 1, 1], [1, 0, 1, 2, 1]]),
        ("eye4", np.eye(4)), ("nonsing4", [[2, 1, 0, 1], [1, 3, 1, 0], [0, 1, 4, 1], [1, 0, 1, 5]]),
        ("zero_first_col", [[0, 1, 2], [0, 3, 1], [0, 1, 1]]), ("nilpotent", [[0, 1], [0, 0]]),
        ("rank3_4b", [[0, 1, 2, 1], [0, 2, 1, 1], [0, 1, 1, 3], [1, 1, 1, 1]])]
JAX_WRONG = {"rank3_4"}


def cofactors(a):
    """The cofactor matrix (the gradient of det) of one matrix, from minors."""
    a = np.asarray(a, complex)
    n = a.shape[-1]
    c = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            m = np.delete(np.delete(a, i, 0), j, 1)
            c[i, j] = (-1) ** (i + j) * (np.linalg.det(m) if n > 1 else 1)
    return np.round(c.real if np.isrealobj(a) or not np.any(c.imag) else c, 9)


def det_grad(nm):
    def f(x):
        if nm not in JAX_WRONG:
            return jax.grad(jnp.linalg.det)(x)
        return jnp.asarray(cofactors(x).real, x.dtype)
    return f


def det_jvp(nm):
    def f(a, t):
        y, ty = jax.jvp(jnp.linalg.det, (a,), (t,))
        if nm in JAX_WRONG:
            ty = jnp.asarray(np.sum(cofactors(a) * np.asarray(t)), ty.dtype)
        return y, ty
    return f


for nm, x in SING:
    for dt in (F64, F32):
        case(f"det_grad_{nm}_{dt}", "linalg_det_grad", [jnp.asarray(x, dt)], det_grad(nm))
    case(f"det_grad_{nm}_jit", "linalg_det_grad", [jnp.asarray(x, F64)], det_grad(nm), "jit=1")
    case(f"det_jvp_{nm}", "linalg_det_jvp", [jnp.asarray(x, F64), urand(np.shape(x), F64)], det_jvp(nm))
    ref = cofactors(x)
    if nm not in JAX_WRONG:  # everywhere else JAX's gradient is the cofactor matrix
        assert np.allclose(jax.grad(jnp.linalg.det)(jnp.asarray(x, F64)), ref, atol=1e-9), nm
    else:
        assert not np.allclose(jax.grad(jnp.linalg.det)(jnp.asarray(x, F64)), ref, atol=1e-9), nm
case("det_jvp_user", "linalg_det_jvp", [jnp.asarray([[1.0, 2.0], [2.0, 4.0]], F64), jnp.asarray([[1.0, 0.0], [0.0, 0.0]], F64)],
     lambda a, t: jax.jvp(jnp.linalg.det, (a,), (t,)))
# a batch of singular matrices under vmap (the rank filter is per matrix)
SBN = [4, 5, 7, 8, 11]
SB = jnp.asarray(np.stack([np.asarray(SING[i][1], float) for i in SBN]), F64)
SB_GRAD = np.stack([cofactors(SING[i][1]) for i in SBN])
case("det_grad_vmap", "linalg_det_grad", [SB], lambda x: jnp.asarray(SB_GRAD, F64), "vmap=1")
case("det_grad_vmap_f32", "linalg_det_grad", [SB.astype(F32)], lambda x: jnp.asarray(SB_GRAD, F32), "vmap=1")
# complex: jvp with complex tangents (math: sum(cofactors * t)), and gradients of the real
# and imaginary parts where JAX's rule holds
CS = np.asarray(SING[4][1], complex) * (1 + 0.5j)
CS[2] = CS[2] * (2 - 1j)
CS2 = np.asarray([[1 + 1j, 2 + 2j], [1, 2]])
CS3 = np.asarray(SING[3][1], complex) * 1j
CS5 = np.asarray(SING[6][1], complex) * (0.5 - 1j)
for nm, x in [("rank3_4", CS), ("sing2", CS2), ("rank2_3", CS3), ("rank4_5", CS5)]:
    for dt in (C128, C64):
        t = urand(np.shape(x), dt)
        ty = np.sum(cofactors(x) * np.asarray(t, complex))
        case(f"det_jvp_c_{nm}_{dt}", "linalg_det_jvp", [jnp.asarray(x, dt), t],
             lambda a, t, ty=ty: (jnp.linalg.det(a), jnp.asarray(ty, dt)))
    if nm != "rank3_4":
        grad_case(f"grad_det_c_{nm}", "linalg_det_ri", [jnp.asarray(x, C128)], ri(jnp.linalg.det))
# second derivatives keep working: hessians of det and log|det| at nonsingular matrices
# and at the identity
for nm, x in [("eye3", np.eye(3)), ("eye4", np.eye(4)), ("nonsing4", SING[8][1]),
              ("rand5", np.asarray(urand((5, 5), F64)) + 3 * np.eye(5))]:
    case(f"det_hessian_{nm}", "linalg_det_hessian", [jnp.asarray(x, F64)], jax.hessian(jnp.linalg.det))
    case(f"logdet_hessian_{nm}", "linalg_logdet_hessian", [jnp.asarray(x, F64)],
         jax.hessian(lambda a: jnp.linalg.slogdet(a)[1]))

# ------------------------------------------------------------------ trial-linalg
# (own generator, appended last so the cases above keep their draws)
trng = np.random.RandomState(1418)
rng = trng
trand = rounded_rand(trng)


def twell(shape, dtype=F32):
    """A well-conditioned (n, n) matrix reshaped to shape (prod of the leading dims n)."""
    n = int(np.sqrt(np.prod(shape)))
    return (trand((n, n), dtype) + 4 * jnp.eye(n, dtype=dtype)).reshape(shape)


# jnp.linalg.tensorsolve / tensorinv: axes move to the end in ascending order whatever
# order they are listed in (JAX's moveaxis with one repeated destination)
ts_ = jnp.linalg.tensorsolve
for nm, a, b, axes in [("f32", twell((2, 3, 6)), trand((2, 3)), None),
                       ("c64", twell((2, 3, 6), C64), trand((2, 3), C64), None),
                       ("f64", twell((6, 2, 3), F64), trand((6,), F64), None),
                       ("ax20", twell((2, 3, 3, 2)), trand((3, 2)), (2, 0)),
                       ("ax02", twell((2, 3, 3, 2)), trand((3, 2)), (0, 2)),
                       ("axneg", twell((6, 2, 3)), trand((6,)), (-2,)),
                       ("int", jnp.asarray([[2, 1], [1, 3]], "int32"), jnp.asarray([1, 2], "int32"), None),
                       ("mixed", twell((2, 2)), trand((2,), C64), None)]:
    case(f"tensorsolve_{nm}", "linalg_tensorsolve", [a, b], lambda a, b, axes=axes: ts_(a, b, axes),
         f"axes={'none' if axes is None else ','.join(map(str, axes))}")
case("tensorsolve_size", "linalg_tensorsolve", [trand((2, 3, 5)), trand((2, 3))], ts_, "axes=none",
     err="JX_ERR_SHAPE")
case("tensorsolve_lead", "linalg_tensorsolve", [trand((3, 2, 6)), trand((2, 3))], ts_, "axes=none",
     err="JX_ERR_SHAPE")
for nm, a, ind in [("2", twell((2, 3, 6)), 2), ("1", twell((6, 2, 3)), 1), ("c128", twell((4, 2, 2), C128), 1),
                   ("int", jnp.asarray([[2, 1], [1, 3]], "int32"), 1)]:
    case(f"tensorinv_{nm}", "linalg_tensorinv", [a], lambda a, ind=ind: jnp.linalg.tensorinv(a, ind), f"ind={ind}")
case("tensorinv_bad", "linalg_tensorinv", [trand((2, 3, 4))], jnp.linalg.tensorinv, "ind=2", err="JX_ERR_SHAPE")
case("tensorinv_ind0", "linalg_tensorinv", [twell((2, 2))], lambda a: jnp.linalg.tensorinv(a, 0), "ind=0",
     err="JX_ERR_VALUE")
grad_case("grad_tensorsolve", "linalg_tensorsolve", [twell((2, 3, 6), F64), trand((2, 3), F64)],
          lambda a, b: ts_(a, b), "axes=none")
grad_case("grad_tensorinv", "linalg_tensorinv", [twell((2, 2, 4), F64)], lambda a: jnp.linalg.tensorinv(a, 2),
          "ind=2")

golden_io.write(OUT, f"# Generated by tools/golden_linalg.py with jax {jax.__version__} -- do not edit.\n"
                "# Format: tests/support/golden.h. Params: flags as 0/1; x64=1 cases are float64 "
                "gradients.\n\n", g.CASES)
