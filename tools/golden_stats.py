#!/usr/bin/env python3
"""golden_stats.py -- writes tests/golden/stats.txt: JAX's jax.scipy.stats results for jaxc's
jx_scipy_stats_* (src/lib/stats.c) and jnp.convolve / jnp.correlate / jax.scipy.signal for
jx_convolve, jx_correlate, jx_scipy_signal_* (src/lib/signal.c): values over the supports'
edges (out of support, 0, +-inf, NaN, invalid parameters), default and given loc/scale,
broadcasting, integer arguments, float32 and float64 (param x64=1), complex convolutions,
every mode and method, gradients (fn "grad_<name>": d sum(f(args)) / d args[argnum]; the
signal functions' "gradsq_<name>": d sum(f(args)^2) / d args[argnum]), vmap ("vmap_<name>",
in_axes param: comma list, "n" for None) and errors (JAX's ValueError/TypeError). Read by
tests/lib/test_stats.c, which runs each case eagerly and under jit. Inputs are given in
JAX's parameter order; parameters not given are left to their defaults (NULL in C).
Format: tests/support/golden.h.

Run:  python3 tools/golden_stats.py"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.scipy import stats as st  # noqa: E402
from jax.scipy import signal as sg  # noqa: E402
import golden_io  # noqa: E402
import golden_reduce_movement as g  # noqa: E402

g.CASES.clear()
NAN, INF = float("nan"), float("inf")
OUT = golden_io.path("stats.txt")


def arr(values, dtype, shape=None):
    if dtype.startswith("int"):
        a = jnp.asarray(np.array(values, np.int64), dtype=dtype)
    elif dtype.startswith("complex"):
        a = jnp.asarray(np.array(values, np.complex128), dtype=dtype)
    else:
        a = jnp.asarray(np.array(values, np.float64), dtype=dtype)
    return a.reshape(shape) if shape is not None else a


def both(name, fn, ins_f, call, params="", dtypes=("float32", "float64")):
    """The case in float32 and (x64 on) float64: ins_f(dtype) builds the inputs."""
    for dt in dtypes:
        if dt == "float64":
            with jax.enable_x64(True):
                g.case(f"{name}_f64", fn, ins_f(dt), call, (params + " x64=1").strip())
        else:
            g.case(f"{name}_f32", fn, ins_f(dt), call, params)


X = [-INF, -3.5, -1.0, -0.0, 0.0, 0.3, 1.0, 2.5, 10.0, 40.0, INF, NAN]
XPOS = [-1.0, -0.0, 0.0, 1e-3, 0.3, 1.0, 2.5, 10.0, 60.0, INF, NAN]
PROB = [0.0, 1e-6, 0.01, 0.25, 0.5, 0.9, 0.999, 1.0, -0.1, 1.5, NAN]
LOC = [[1.5], [-2.0]]      # (2, 1): broadcasts against x (n,)
SCALE = [2.0, 0.5, 1.0]    # (3,)

# ------------------------------------------------------- loc/scale families
LS_FUNCS = {
    "norm": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "uniform": ["logpdf", "pdf", "cdf"],
    "expon": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "laplace": ["logpdf", "pdf", "cdf"],
    "logistic": ["logpdf", "pdf", "cdf", "sf"],
    "cauchy": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
}
Q_FUNCS = {"norm": ["ppf", "isf"], "uniform": ["ppf"], "expon": ["ppf"], "logistic": ["ppf", "isf"],
           "cauchy": ["ppf", "isf"]}
for dist, fns in LS_FUNCS.items():
    mod = getattr(st, dist)
    for f in fns:
        fun = getattr(mod, f)
        name = f"{dist}_{f}"
        both(f"{name}_x", name, lambda dt: [arr(X, dt)], fun)
        both(f"{name}_ls", name, lambda dt: [arr([0.3, -1.0, 2.5], dt), arr(LOC, dt), arr(SCALE, dt)], fun)
        g.case(f"{name}_loc", name, [arr([0.3, -1.0, 2.5, 7.0], "float32"), arr(1.5, "float32")], fun)
        g.case(f"{name}_int", name, [arr([[-2, 0], [1, 3]], "int32")], fun)
    for f in Q_FUNCS.get(dist, []):
        fun = getattr(mod, f)
        name = f"{dist}_{f}"
        both(f"{name}_q", name, lambda dt: [arr(PROB, dt)], fun)
        both(f"{name}_ls", name, lambda dt: [arr([0.1, 0.5, 0.8], dt), arr(LOC, dt), arr(SCALE, dt)], fun)
# uniform/expon scale edge: negative scale, zero scale
g.case("uniform_logpdf_badscale", "uniform_logpdf", [arr([0.5, -0.5], "float32"), arr(0.0, "float32"),
                                                    arr([-1.0, 0.0], "float32")], st.uniform.logpdf)
# Python scalars: weakly typed arguments give a weak result (ppf: jnp.asarray(..., float), strong)
g.case("norm_logpdf_weak", "norm_logpdf", [1.0], st.norm.logpdf)
g.case("expon_cdf_weak", "expon_cdf", [2.0, 0.5], st.expon.cdf)
g.case("norm_ppf_weak", "norm_ppf", [0.3], st.norm.ppf)
g.case("gamma_logpdf_weak_int", "gamma_logpdf", [arr([1.0, 2.0], "float16"), 2], st.gamma.logpdf)
g.case("norm_cdf_f16", "norm_cdf", [arr([0.5, 1.0], "float16")], st.norm.cdf, err="JX_ERR_DTYPE")
g.case("norm_logpdf_bcast_err", "norm_logpdf", [arr([1.0, 2.0], "float32"), arr([1.0, 2.0, 3.0], "float32")],
       st.norm.logpdf, err="JX_ERR_SHAPE")

# --------------------------------------------------- shape-parameter families
both("t_logpdf_x", "t_logpdf", lambda dt: [arr(X, dt), arr(3.0, dt)], st.t.logpdf)
both("t_logpdf_df", "t_logpdf", lambda dt: [arr([0.5, -2.0, 4.0], dt), arr([[0.5], [1.0], [30.0], [1e3]], dt),
                                            arr(0.5, dt), arr(2.0, dt)], st.t.logpdf)
both("t_pdf", "t_pdf", lambda dt: [arr(X, dt), arr(2.5, dt)], st.t.pdf)
# The incomplete gamma function's unrolled series make gamma/chi2 cdf/sf and poisson.cdf
# cases cost ~0.2 s each to trace: few of them, most eager only (jit=0; test_special runs
# gammainc/gammaincc under jit).
for f in ["logpdf", "pdf"]:
    fun = getattr(st.gamma, f)
    both(f"gamma_{f}_x", f"gamma_{f}", lambda dt: [arr(XPOS, dt), arr(2.5, dt)], fun)
    both(f"gamma_{f}_a", f"gamma_{f}", lambda dt: [arr([0.0, 0.5, 3.0], dt), arr([[0.5], [1.0], [7.0]], dt),
                                                   arr(-0.5, dt), arr(1.5, dt)], fun)
    fun = getattr(st.chi2, f)
    both(f"chi2_{f}_x", f"chi2_{f}", lambda dt: [arr(XPOS, dt), arr(3.0, dt)], fun)
    both(f"chi2_{f}_df", f"chi2_{f}", lambda dt: [arr([0.0, 0.5, 3.0], dt), arr([[1.0], [2.0], [9.0]], dt),
                                                  arr(0.2, dt), arr(2.0, dt)], fun)
for f in ["cdf", "logcdf", "sf", "logsf"]:
    fun = getattr(st.gamma, f)
    g.case(f"gamma_{f}_x_f32", f"gamma_{f}", [arr(XPOS, "float32"), arr(2.5, "float32")], fun,
           "" if f in ("cdf", "sf") else "jit=0")
    both(f"gamma_{f}_a", f"gamma_{f}", lambda dt: [arr([0.0, 0.5, 3.0], dt), arr([[0.5], [1.0], [7.0]], dt),
                                                   arr(-0.5, dt), arr(1.5, dt)], fun, "jit=0",
         ("float64",) if f in ("cdf", "sf") else ("float32",))
    fun = getattr(st.chi2, f)
    g.case(f"chi2_{f}_x_f32", f"chi2_{f}", [arr(XPOS, "float32"), arr(3.0, "float32")], fun, "jit=0")
    if f in ("cdf", "sf"):
        both(f"chi2_{f}_df", f"chi2_{f}", lambda dt: [arr([0.0, 0.5, 3.0], dt), arr([[1.0], [2.0], [9.0]], dt),
                                                      arr(0.2, dt), arr(2.0, dt)], fun, "jit=0", ("float32",))
BX = [-0.1, 0.0, 1e-3, 0.2, 0.5, 0.9, 1.0, 1.2, NAN]
for f in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
    fun = getattr(st.beta, f)
    both(f"beta_{f}_x", f"beta_{f}", lambda dt: [arr(BX, dt), arr(2.0, dt), arr(3.0, dt)], fun)
    both(f"beta_{f}_ab", f"beta_{f}", lambda dt: [arr([0.0, 0.3, 1.0], dt), arr([[0.5], [1.0], [-1.0]], dt),
                                                  arr([[0.5], [4.0], [2.0]], dt)], fun)
    g.case(f"beta_{f}_ls", f"beta_{f}", [arr([0.5, 1.5, 3.5], "float32"), arr(2.0, "float32"), arr(2.0, "float32"),
                                         arr(1.0, "float32"), arr([2.0, 2.0, -1.0], "float32")], fun)

# ---------------------------------------------------------------- discrete
K = [-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 7.0, 30.0, NAN]
for f in ["logpmf", "pmf", "cdf"]:
    fun = getattr(st.poisson, f)
    cheap = f != "cdf"
    both(f"poisson_{f}", f"poisson_{f}", lambda dt: [arr(K, dt), arr(3.0, dt)], fun, "",
         ("float32", "float64") if cheap else ("float32",))
    both(f"poisson_{f}_loc", f"poisson_{f}", lambda dt: [arr([0.0, 1.0, 4.0], dt), arr([[0.0], [0.5], [12.0]], dt),
                                                         arr(1.0, dt)], fun, "" if cheap else "jit=0",
         ("float32", "float64") if cheap else ("float64",))
    if cheap:
        g.case(f"poisson_{f}_int", f"poisson_{f}", [arr([0, 1, 5], "int32"), arr(2, "int32")], fun)
for f in ["logpmf", "pmf"]:
    fun = getattr(st.bernoulli, f)
    both(f"bernoulli_{f}", f"bernoulli_{f}", lambda dt: [arr([-1.0, 0.0, 0.5, 1.0, 2.0, NAN], dt),
                                                         arr([[0.0], [0.3], [1.0]], dt)], fun)
    g.case(f"bernoulli_{f}_loc", f"bernoulli_{f}", [arr([0.0, 1.0, 2.0], "float32"), arr(0.3, "float32"),
                                                    arr(1.0, "float32")], fun)
    fun = getattr(st.binom, f)
    both(f"binom_{f}", f"binom_{f}", lambda dt: [arr([-1.0, 0.0, 1.0, 2.0, 5.0, 6.0, 2.5], dt), arr(5.0, dt),
                                                 arr([[0.0], [0.4], [1.0]], dt)], fun)
    both(f"binom_{f}_n0", f"binom_{f}", lambda dt: [arr([0.0, 1.0, 3.0], dt), arr([0.0, 0.0, 40.0], dt),
                                                    arr(0.7, dt), arr(0.0, dt)], fun)
both("bernoulli_cdf", "bernoulli_cdf", lambda dt: [arr([-1.0, 0.0, 0.5, 1.0, 2.0, NAN], dt),
                                                   arr([[-0.1], [0.3], [1.0], [NAN]], dt)], st.bernoulli.cdf)
both("bernoulli_ppf", "bernoulli_ppf", lambda dt: [arr([-0.1, 0.0, 0.5, 0.7, 0.71, 1.0, NAN], dt),
                                                   arr([[0.3], [1.2]], dt)], st.bernoulli.ppf)

# ---------------------------------------------------- dirichlet, multivariate normal
DX = [[0.2, 0.5, 0.0, 0.3, 0.25], [0.3, 0.25, 0.4, 0.3, 0.25], [0.5, 0.25, 0.6, 0.5, 0.5]]
for f in ["logpdf", "pdf"]:
    fun = getattr(st.dirichlet, f)
    both(f"dirichlet_{f}", f"dirichlet_{f}", lambda dt: [arr(DX, dt), arr([1.5, 2.0, 0.7], dt)], fun)
    both(f"dirichlet_{f}_km1", f"dirichlet_{f}", lambda dt: [arr(DX[:2], dt), arr([1.5, 2.0, 3.0], dt)], fun)
    g.case(f"dirichlet_{f}_1d", f"dirichlet_{f}", [arr([0.2, 0.8], "float32"), arr([2.0, 3.0], "float32")], fun)
g.case("dirichlet_logpdf_alpha2d", "dirichlet_logpdf", [arr(DX, "float32"), arr([[1.0, 2.0, 3.0]], "float32")],
       st.dirichlet.logpdf, err="JX_ERR_SHAPE")
g.case("dirichlet_logpdf_badk", "dirichlet_logpdf", [arr([0.5, 0.5], "float32"), arr([1.0, 2.0, 3.0, 4.0], "float32")],
       st.dirichlet.logpdf, err="JX_ERR_SHAPE")
COV = [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]
MX = [[0.1, 0.2, 0.3], [1.0, -1.0, 0.5], [-2.0, 0.0, 3.0], [0.0, 0.0, 0.0]]
for f in ["logpdf", "pdf"]:
    fun = getattr(st.multivariate_normal, f)
    both(f"mvn_{f}", f"multivariate_normal_{f}", lambda dt: [arr(MX, dt), arr([0.0, 0.5, -0.5], dt), arr(COV, dt)], fun)
    both(f"mvn_{f}_1", f"multivariate_normal_{f}", lambda dt: [arr([0.5, -1.0, 2.0], dt), arr([0.0, 0.5, -0.5], dt),
                                                               arr(COV, dt)], fun)
    both(f"mvn_{f}_scalar", f"multivariate_normal_{f}", lambda dt: [arr([0.5, -1.0, 2.0], dt), arr(0.5, dt),
                                                                    arr(2.0, dt)], fun)
    both(f"mvn_{f}_scov", f"multivariate_normal_{f}", lambda dt: [arr(MX, dt), arr([0.0, 0.5, -0.5], dt),
                                                                  arr(1.5, dt)], fun)
BCOV = [COV, [[1.0, 0.0, 0.0], [0.0, 4.0, 1.0], [0.0, 1.0, 1.0]]]
both("mvn_logpdf_batch", "multivariate_normal_logpdf", lambda dt: [arr(MX[:2], dt), arr([0.0, 0.5, -0.5], dt),
                                                                   arr(BCOV, dt)], st.multivariate_normal.logpdf)
g.case("mvn_logpdf_int", "multivariate_normal_logpdf", [arr([1, 2], "int32"), arr([0, 1], "int32"),
                                                        arr([[2, 1], [1, 2]], "int32")], st.multivariate_normal.logpdf)
g.case("mvn_logpdf_badcov", "multivariate_normal_logpdf", [arr(MX, "float32"), arr([0.0, 0.5, -0.5], "float32"),
                                                           arr([1.0, 2.0, 3.0], "float32")],
       st.multivariate_normal.logpdf, err="JX_ERR_SHAPE")

# --------------------------------------------------------------- gradients
GRADS = [
    ("norm_logpdf", st.norm.logpdf, [[-1.0, 0.3, 2.0], [0.5], [1.5]]),
    ("norm_logcdf", st.norm.logcdf, [[-30.0, -1.0, 0.3, 4.0]]),
    ("norm_ppf", st.norm.ppf, [[0.01, 0.3, 0.9]]),
    ("t_logpdf", st.t.logpdf, [[-1.0, 0.3, 2.0], [3.0], [0.5], [1.5]]),
    ("gamma_logpdf", st.gamma.logpdf, [[0.5, 1.0, 3.0], [2.5], [0.0], [1.5]]),
    ("beta_logpdf", st.beta.logpdf, [[0.2, 0.5, 0.7], [2.0], [3.0]]),
    ("cauchy_logpdf", st.cauchy.logpdf, [[-1.0, 0.3, 2.0], [0.5], [1.5]]),
    ("logistic_logpdf", st.logistic.logpdf, [[-1.0, 0.3, 2.0], [0.5], [1.5]]),
    ("poisson_logpmf", st.poisson.logpmf, [[0.0, 2.0, 5.0], [3.0]]),
    ("binom_logpmf", st.binom.logpmf, [[0.0, 2.0, 5.0], [5.0], [0.4]]),
    ("dirichlet_logpdf", st.dirichlet.logpdf, [DX, [1.5, 2.0, 0.7]]),
    ("multivariate_normal_logpdf", st.multivariate_normal.logpdf, [MX, [0.0, 0.5, -0.5], COV]),
]
for name, fun, ins in GRADS:
    for argnum in range(len(ins)):
        gf = jax.grad(lambda *a, fun=fun: jnp.sum(fun(*a)), argnums=argnum)
        both(f"grad_{name}_{argnum}", f"grad_{name}", lambda dt, ins=ins: [arr(v, dt) for v in ins], gf,
             f"argnum={argnum}")

for argnum in (0, 1):
    g.case(f"grad_gamma_cdf_{argnum}_f32", "grad_gamma_cdf", [arr([0.5, 1.0, 3.0], "float32"), arr([2.5], "float32")],
           jax.grad(lambda *a: jnp.sum(st.gamma.cdf(*a)), argnums=argnum), f"argnum={argnum}" + (" jit=0" if argnum else ""))

# ------------------------------------------------- jnp.convolve / correlate
A5, V3 = [1.0, 2.0, -1.0, 0.5, 3.0], [2.0, -1.0, 0.5]
for op, fun in (("convolve", jnp.convolve), ("correlate", jnp.correlate)):
    for mode in ("full", "same", "valid"):
        call = lambda a, v, fun=fun, mode=mode: fun(a, v, mode=mode)
        both(f"{op}_{mode}", op, lambda dt: [arr(A5, dt), arr(V3, dt)], call, f"mode={mode}")
        g.case(f"{op}_{mode}_swap", op, [arr(V3, "float32"), arr(A5 + [4.0], "float32")], call, f"mode={mode}")
        g.case(f"{op}_{mode}_c64", op, [arr([3 + 1j, 2, 4 - 3j, 1j], "complex64"), arr([1, 2 - 3j, 4 + 5j], "complex64")],
               call, f"mode={mode}")
        g.case(f"{op}_{mode}_cswap", op, [arr([1, 2 - 3j], "complex64"), arr([3 + 1j, 2, 4 - 3j, 1j], "complex64")],
               call, f"mode={mode}")
    g.case(f"{op}_default", op, [arr(A5, "float32"), arr(V3, "float32")], fun)
    g.case(f"{op}_int", op, [arr([1, 2, 3, 4], "int32"), arr([1, -1], "int32")], fun)
    g.case(f"{op}_mixed", op, [arr([1, 2, 3, 4], "int32"), arr([0.5, -1.0], "float32")], fun)
    g.case(f"{op}_one", op, [arr([2.0], "float32"), arr(V3, "float32")], lambda a, v, fun=fun: fun(a, v, mode="same"),
           "mode=same")
    g.case(f"{op}_2d_err", op, [arr([[1.0, 2.0]], "float32"), arr(V3, "float32")], fun, err="JX_ERR_SHAPE")
    g.case(f"{op}_empty_err", op, [arr([], "float32"), arr(V3, "float32")], fun, err="JX_ERR_SHAPE")
    g.case(f"{op}_mode_err", op, [arr(A5, "float32"), arr(V3, "float32")],
           lambda a, v, fun=fun: fun(a, v, mode="bogus"), "mode=bogus", err="JX_ERR_VALUE")

# ------------------------------------------------------ jax.scipy.signal
M45 = np.arange(20.0).reshape(4, 5) * 0.25 - 2.0
K23 = [[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]
C33 = np.array([[1 + 1j, 2, 0], [0, 1 - 2j, 3j], [2, -1, 1]])
C22 = np.array([[1j, 2], [1 - 1j, -1]])
for op, fun in (("signal_convolve", sg.convolve), ("signal_correlate", sg.correlate)):
    for method in ("direct", "fft"):
        for mode in ("full", "same", "valid"):
            call = lambda a, b, fun=fun, mode=mode, method=method: fun(a, b, mode=mode, method=method)
            ps = f"mode={mode} method={method}"
            both(f"{op}_{method}_{mode}", op, lambda dt: [arr(M45, dt), arr(K23, dt)], call, ps)
            g.case(f"{op}_{method}_{mode}_swap", op, [arr(K23, "float32"), arr(M45, "float32")], call, ps)
            g.case(f"{op}_{method}_{mode}_1d", op, [arr(A5, "float32"), arr(V3, "float32")], call, ps)
            g.case(f"{op}_{method}_{mode}_3d", op, [arr(np.arange(24.0).reshape(2, 3, 4) * 0.5, "float32"),
                                                    arr([[[1.0, -1.0]], [[0.5, 2.0]]], "float32")], call, ps)
            g.case(f"{op}_{method}_{mode}_c64", op, [arr(C33, "complex64"), arr(C22, "complex64")], call, ps)
    g.case(f"{op}_default", op, [arr(M45, "float32"), arr(K23, "float32")], fun)
    g.case(f"{op}_int", op, [arr([[1, 2], [3, 4]], "int32"), arr([[1, -1]], "int32")], fun)
    g.case(f"{op}_order_err", op, [arr(np.ones((3, 2)), "float32"), arr(np.ones((2, 3)), "float32")], fun,
           err="JX_ERR_SHAPE")
    g.case(f"{op}_ndim_err", op, [arr(M45, "float32"), arr(A5, "float32")], fun, err="JX_ERR_SHAPE")
    g.case(f"{op}_empty_err", op, [arr(np.ones((2, 0)), "float32"), arr(np.ones((1, 0)), "float32")], fun,
           err="JX_ERR_SHAPE")
    g.case(f"{op}_mode_err", op, [arr(M45, "float32"), arr(K23, "float32")],
           lambda a, b, fun=fun: fun(a, b, mode="bogus"), "mode=bogus", err="JX_ERR_VALUE")
    g.case(f"{op}_method_err", op, [arr(M45, "float32"), arr(K23, "float32")],
           lambda a, b, fun=fun: fun(a, b, method="bogus"), "method=bogus", err="JX_ERR_VALUE")
for op, fun in (("convolve2d", sg.convolve2d), ("correlate2d", sg.correlate2d)):
    for mode in ("full", "same", "valid"):
        call = lambda a, b, fun=fun, mode=mode: fun(a, b, mode=mode)
        both(f"{op}_{mode}", op, lambda dt: [arr(M45, dt), arr(K23, dt)], call, f"mode={mode}")
        g.case(f"{op}_{mode}_swap", op, [arr(K23, "float32"), arr(M45, "float32")], call, f"mode={mode}")
        g.case(f"{op}_{mode}_same_shape", op, [arr(K23, "float32"), arr(M45[:2, :3], "float32")], call, f"mode={mode}")
        g.case(f"{op}_{mode}_c64", op, [arr(C33, "complex64"), arr(C22, "complex64")], call, f"mode={mode}")
        g.case(f"{op}_{mode}_cswap", op, [arr(C22, "complex64"), arr(C33, "complex64")], call, f"mode={mode}")
    g.case(f"{op}_ndim_err", op, [arr(A5, "float32"), arr(V3, "float32")], fun, err="JX_ERR_SHAPE")
    g.case(f"{op}_mode_err", op, [arr(M45, "float32"), arr(K23, "float32")],
           lambda a, b, fun=fun: fun(a, b, mode="bogus"), "mode=bogus", err="JX_ERR_VALUE")
B28 = np.arange(16.0).reshape(2, 8) * 0.3 - 1.0
for mode in ("full", "same", "valid"):
    call = lambda a, b, mode=mode: sg.fftconvolve(a, b, mode=mode)
    both(f"fftconvolve_{mode}", "fftconvolve", lambda dt: [arr(M45, dt), arr(K23, dt)], call, f"mode={mode}")
    g.case(f"fftconvolve_{mode}_axes", "fftconvolve", [arr(B28, "float32"), arr([[1.0, 2.0, -1.0], [0.5, 0.5, 3.0]], "float32")],
           lambda a, b, mode=mode: sg.fftconvolve(a, b, mode=mode, axes=(1,)), f"mode={mode} axes=1")
    g.case(f"fftconvolve_{mode}_axesneg_swap", "fftconvolve", [arr([[1.0, 2.0, -1.0], [0.5, 0.5, 3.0]], "float32"), arr(B28, "float32")],
           lambda a, b, mode=mode: sg.fftconvolve(a, b, mode=mode, axes=-1), f"mode={mode} axes=-1")
    g.case(f"fftconvolve_{mode}_ones", "fftconvolve", [arr([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32"),
                                                             arr([[-1.5]], "float32")], call, f"mode={mode}")
g.case("fftconvolve_axes_err", "fftconvolve", [arr(B28, "float32"), arr(np.ones((3, 3)), "float32")],
       lambda a, b: sg.fftconvolve(a, b, axes=1), "axes=1", err="JX_ERR_SHAPE")
g.case("fftconvolve_valid_err", "fftconvolve", [arr(np.ones((3, 2)), "float32"), arr(np.ones((2, 3)), "float32")],
       lambda a, b: sg.fftconvolve(a, b, mode="valid"), "mode=valid", err="JX_ERR_SHAPE")

# gradients of the convolutions: d sum(f(a, b)^2) / d a, b
for op, fun, ps in (("convolve", jnp.convolve, "mode=full"), ("correlate", jnp.correlate, "mode=same"),
                    ("signal_convolve", lambda a, b: sg.convolve(a, b, mode="same"), "mode=same"),
                    ("signal_correlate", lambda a, b: sg.correlate(a, b, mode="valid", method="fft"),
                     "mode=valid method=fft"),
                    ("correlate2d", sg.correlate2d, "mode=full"),
                    ("fftconvolve", sg.fftconvolve, "mode=full")):
    if ps == "mode=same" and op == "correlate":
        fun = lambda a, b: jnp.correlate(a, b, mode="same")
    ins = [A5, V3] if op in ("convolve", "correlate") else [M45, K23]
    for argnum in (0, 1):
        gf = jax.grad(lambda a, b, fun=fun: jnp.sum(jnp.square(fun(a, b))), argnums=argnum)
        both(f"gradsq_{op}_{argnum}", f"gradsq_{op}", lambda dt, ins=ins: [arr(v, dt) for v in ins], gf,
             f"argnum={argnum} {ps}")

# vmap
g.case("vmap_convolve", "vmap_convolve", [arr(np.arange(15.0).reshape(3, 5), "float32"), arr(np.arange(9.0).reshape(3, 3) - 4, "float32")],
       jax.vmap(lambda a, v: jnp.convolve(a, v, mode="same")), "mode=same in_axes=0,0")
g.case("vmap_norm_logpdf", "vmap_norm_logpdf", [arr(np.arange(6.0).reshape(2, 3), "float32"), arr([0.5, -1.0], "float32"),
                                                arr(2.0, "float32")],
       jax.vmap(st.norm.logpdf, in_axes=(0, 0, None)), "in_axes=0,0,n")
g.case("vmap_grad_gamma_logpdf", "vmap_grad_gamma_logpdf", [arr([[0.5, 1.0], [2.0, 3.0]], "float32"), arr([2.5, 0.7], "float32")],
       jax.vmap(jax.grad(lambda x, a: jnp.sum(st.gamma.logpdf(x, a)), argnums=1)), "in_axes=0,0 argnum=1")

golden_io.write(OUT, "# Generated by tools/golden_stats.py -- do not edit.\n", g.CASES, sep="\n")
