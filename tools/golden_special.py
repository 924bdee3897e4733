#!/usr/bin/env python3
"""golden_special.py -- writes tests/golden/special.txt: JAX's jax.scipy.special results
for jaxc's jx_special_* (src/lib/special.c): values over each function's domain edges
(NaN, +-inf, poles, both tails), float32 and float64 (param x64=1), float16, integer
arguments, broadcasting, and gradients (fn "grad_<name>": d sum(f(args)) / d args[argnum]
for argnum given by param `argnum`). Read by tests/lib/test_special.c, which runs each case
eagerly and under jit. Format: tests/support/golden.h.

Run:  python3 tools/golden_special.py"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.scipy import special as sp  # noqa: E402
import golden_io  # noqa: E402
import golden_reduce_movement as g  # noqa: E402

g.CASES.clear()
NAN, INF = float("nan"), float("inf")


def arr(values, dtype):
    import numpy as np
    if dtype.startswith("int"):
        return jnp.asarray(np.array(values, np.int64), dtype=dtype)
    return jnp.asarray(np.array(values, np.float64), dtype=dtype)


g.arr = arr
OUT = golden_io.path("special.txt")

UNARY = {
    "erf": sp.erf, "erfc": sp.erfc, "erfinv": sp.erfinv, "ndtr": sp.ndtr, "ndtri": sp.ndtri,
    "log_ndtr": sp.log_ndtr, "logit": sp.logit, "expit": sp.expit, "entr": sp.entr,
    "gammaln": sp.gammaln, "digamma": sp.digamma, "i0e": sp.i0e, "i1e": sp.i1e,
}
BINARY = {
    "xlogy": sp.xlogy, "xlog1py": sp.xlog1py, "betaln": sp.betaln, "gammainc": sp.gammainc,
    "gammaincc": sp.gammaincc, "zeta": sp.zeta,
}
# Inputs per function: general values, then domain edges.
GEN = [-7.5, -3.2, -2.0, -1.0, -0.5, -0.1, -0.0, 0.0, 1e-6, 0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 8.0, 9.5, 20.0,
       50.0, 200.0, NAN, INF, -INF]
PROB = [0.0, 1e-30, 1e-10, 1e-4, 0.01, 0.1, 0.13, 0.2, 0.5, 0.8, 0.86, 0.9, 0.999, 0.9999999, 1.0,
        -0.1, 1.1, NAN]
TAIL = [-40.0, -25.0, -12.0, -10.5, -6.0, -3.0, -1.0, 0.0, 1.0, 4.0, 6.0, 9.0, 30.0, NAN, INF, -INF]
UIN = {"erf": GEN, "erfc": GEN + [-10.0, 10.0, 26.0], "erfinv": [-1.0, -0.999, -0.5, 0.0, 0.3, 0.99, 1.0, 1.5, NAN],
       "ndtr": TAIL, "ndtri": PROB, "log_ndtr": TAIL, "logit": PROB, "expit": GEN, "entr": GEN,
       "gammaln": GEN + [-100.5, 1e-30, 3e38], "digamma": GEN + [-100.5, 1e-30, 1e6], "i0e": GEN + [-1e4, 1e4],
       "i1e": GEN + [-1e4, 1e4]}
for fn, f in UNARY.items():
    for dt in ("float32", "float64"):
        x = g.arr(UIN[fn], dt) if dt == "float32" else None
        if dt == "float64":
            with jax.enable_x64(True):
                x = g.arr(UIN[fn], dt)
                g.case(f"{fn}_f64", fn, [x], f, "x64=1")
        else:
            g.case(f"{fn}_f32", fn, [x], f)
    h = g.arr([0.25, 0.5, 0.75, 1.5, 3.0], "float16")
    try:
        f(h)
        g.case(f"{fn}_f16", fn, [h], f)
    except TypeError:  # ndtr, ndtri, log_ndtr take float32/float64 only
        g.case(f"{fn}_f16", fn, [h], f, err="JX_ERR_DTYPE")
    i = g.arr([[1, 2], [3, 5]], "int32")
    try:
        f(i)
        g.case(f"{fn}_i32", fn, [i], f)
    except TypeError:
        g.case(f"{fn}_i32", fn, [i], f, err="JX_ERR_DTYPE")
for order in (0, 1, 5):
    g.case(f"log_ndtr_order{order}", "log_ndtr", [g.arr(TAIL, "float32")],
           lambda x, o=order: sp.log_ndtr(x, series_order=o), f"series_order={order}")

A = [0.5, 1.0, 2.0, 3.5, 10.0, 30.0, 0.1, 5.0, 0.0, 0.0, -1.0, 2.0, NAN, 1.0, 7.0, 60.0]
X = [0.3, 1.0, 5.0, 2.5, 12.0, 25.0, 1e-3, 5.0, 0.0, 1.0, 1.0, -1.0, 1.0, INF, 0.5, 55.0]
BIN_IN = {
    "xlogy": ([0.0, 0.0, 1.0, 2.0, -3.0, 0.0, 1.5, 0.0], [0.0, NAN, 1.0, 0.5, 4.0, -1.0, INF, 2.0]),
    "xlog1py": ([0.0, 0.0, 1.0, 2.0, -3.0, 0.0, 1.5, 0.0], [-1.0, NAN, 0.0, 0.5, 4.0, -2.0, INF, 2.0]),
    "betaln": ([0.5, 1.0, 2.0, 3.0, 10.0, 100.0, 1e-3, 7.9, 50.0, 4.0], [0.5, 2.0, 2.0, 9.0, 10.0, 0.5, 1e3, 8.1, 1e5, NAN]),
    "gammainc": (A, X), "gammaincc": (A, X),
    "zeta": ([0.5, 1.0, 2.0, 3.0, 2.0, 2.5, 4.0, 2.0, 1.5, 7.0, 20.0, 3.0, NAN],
             [1.0, 1.0, -1.0, -2.0, -1.5, -1.5, 0.0, 1.0, 2.5, 0.3, 1.0, 100.0, 1.0]),
}
for fn, f in BINARY.items():
    a, b = BIN_IN[fn]
    g.case(f"{fn}_f32", fn, [g.arr(a, "float32"), g.arr(b, "float32")], f)
    with jax.enable_x64(True):
        g.case(f"{fn}_f64", fn, [g.arr(a, "float64"), g.arr(b, "float64")], f, "x64=1")
    g.case(f"{fn}_bcast", fn, [g.arr([[1.0], [2.5]], "float32"), g.arr([0.5, 3.0, 4.0], "float32")], f)
    g.case(f"{fn}_weak", fn, [g.arr([1.0, 2.0, 3.0], "float16"), 2.0], f)
g.case("polygamma_f32", "polygamma", [g.arr([0, 1, 2, 3, 4, 1, 2, -1, 1, 0], "int32"),
                                      g.arr([2.5, 2.5, 2.5, 0.5, 7.0, -1.5, 1e-3, 1.0, NAN, -2.0], "float32")], sp.polygamma)
with jax.enable_x64(True):
    g.case("polygamma_f64", "polygamma", [g.arr([0, 1, 2, 3, 4, 1, 2, -1], "int32"),
                                          g.arr([2.5, 2.5, 2.5, 0.5, 7.0, -1.5, 1e-3, 1.0], "float64")],
           sp.polygamma, "x64=1")

# betainc(a, b, x): both branches of the symmetry relation, the a/b/x edges, large a and b
BA = [0.5, 1.0, 2.0, 5.0, 10.0, 0.1, 30.0, 2.0, 0.0, 3.0, 1e-30, 200.0, 2.0, -1.0, 2.0, NAN, INF, 1.0, 0.0, 4.0]
BB = [0.5, 1.0, 3.0, 2.0, 0.5, 0.1, 40.0, 2.0, 1.0, 0.0, 2.0, 300.0, 2.0, 1.0, 2.0, 1.0, 1.0, INF, 0.0, 20.0]
BX = [0.3, 0.5, 0.9, 0.2, 0.99, 0.5, 0.45, 0.0, 0.5, 0.5, 0.3, 0.4, 1.0, 0.5, 1.5, 0.5, 0.5, 0.5, 0.5, 0.01]
g.case("betainc_f32", "betainc", [g.arr(BA, "float32"), g.arr(BB, "float32"), g.arr(BX, "float32")], sp.betainc)
with jax.enable_x64(True):
    g.case("betainc_f64", "betainc", [g.arr(BA, "float64"), g.arr(BB, "float64"), g.arr(BX, "float64")],
           sp.betainc, "x64=1")
g.case("betainc_bcast", "betainc", [g.arr([[1.5], [4.0]], "float32"), 2.5, g.arr([0.1, 0.6, 0.95], "float32")],
       sp.betainc)
g.case("betainc_f16", "betainc", [g.arr([0.5, 2.0, 3.0], "float16"), g.arr([1.5, 2.0, 0.5], "float16"),
                                  g.arr([0.25, 0.5, 0.75], "float16")], sp.betainc)
gb = jax.grad(lambda a, b, x: jnp.sum(sp.betainc(a, b, x)), argnums=2)
g.case("grad_betainc", "grad_betainc", [g.arr([0.5, 2.0, 3.0], "float32"), g.arr([1.5, 9.0, 2.0], "float32"),
                                        g.arr([0.3, 0.2, 0.7], "float32")], gb, "argnum=2")

# logsumexp / softmax
M = g.arr([[1.0, 2.0, -INF, 0.5], [3.0, -1.0, 100.0, 0.0], [-INF, -INF, -INF, -INF]], "float32")
Bm = g.arr([[1.0, -2.0, 1.0, 0.5], [0.0, 1.0, 1.0, -1.0], [1.0, 1.0, 1.0, 1.0]], "float32")
W = g.arr([[1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 1]], "bool")
for ax in (None, 1, 0):
    axp = "" if ax is None else f"axes={ax}"
    g.case(f"logsumexp_{ax}", "logsumexp", [M], lambda x, ax=ax: sp.logsumexp(x, axis=ax), axp)
    g.case(f"logsumexp_b_{ax}", "logsumexp", [M, Bm], lambda x, b, ax=ax: sp.logsumexp(x, axis=ax, b=b), axp)
    g.case(f"logsumexp_sign_{ax}", "logsumexp_sign", [M, Bm],
           lambda x, b, ax=ax: sp.logsumexp(x, axis=ax, b=b, return_sign=True), axp)
    g.case(f"logsumexp_signk_{ax}", "logsumexp_sign", [M, Bm],
           lambda x, b, ax=ax: sp.logsumexp(x, axis=ax, b=b, return_sign=True, keepdims=True), axp + " keepdims=1")
    g.case(f"logsumexp_where_{ax}", "logsumexp_where", [M, W],
           lambda x, w, ax=ax: sp.logsumexp(x, axis=ax, where=w), axp)
    g.case(f"softmax_{ax}", "softmax", [M[:2]], lambda x, ax=ax: sp.softmax(x, axis=ax), axp)

# gradients: d sum(f(args)) / d args[argnum]
GRAD1 = {"erf": [-1.0, 0.3, 2.0], "erfc": [-1.0, 0.3, 2.0], "erfinv": [-0.9, 0.0, 0.5], "ndtr": [-3.0, 0.2, 4.0],
         "ndtri": [0.01, 0.5, 0.9], "log_ndtr": [-30.0, -3.0, 0.5, 7.0], "logit": [0.1, 0.5, 0.9],
         "expit": [-3.0, 0.0, 2.0], "entr": [0.0, 0.5, 2.0], "gammaln": [-2.5, 0.3, 1.0, 7.5],
         "digamma": [-2.5, 0.3, 1.0, 7.5], "i0e": [-3.0, 0.0, 0.5, 12.0], "i1e": [-3.0, 0.0, 0.5, 12.0]}
for fn, xs in GRAD1.items():
    f = UNARY[fn]
    g.case(f"grad_{fn}", f"grad_{fn}", [g.arr(xs, "float32")], jax.grad(lambda x, f=f: jnp.sum(f(x))), "argnum=0")
    with jax.enable_x64(True):
        g.case(f"grad_{fn}_f64", f"grad_{fn}", [g.arr(xs, "float64")], jax.grad(lambda x, f=f: jnp.sum(f(x))),
               "argnum=0 x64=1")
GRAD2 = {"xlogy": ([0.0, 1.0, 2.0], [1.0, 0.5, 3.0]), "xlog1py": ([0.0, 1.0, 2.0], [1.0, 0.5, 3.0]),
         "betaln": ([0.5, 2.0, 3.0], [1.5, 9.0, 20.0]), "gammainc": ([0.5, 2.0, 3.0, 9.0], [0.3, 3.0, 1.0, 12.0]),
         "gammaincc": ([0.5, 2.0, 3.0, 9.0], [0.3, 3.0, 1.0, 12.0]), "zeta": ([2.0, 3.5, 6.0], [1.0, 0.5, 4.0])}
for fn, (a, b) in GRAD2.items():
    f = BINARY[fn]
    for argnum in (0, 1):
        gf = jax.grad(lambda x, y, f=f: jnp.sum(f(x, y)), argnums=argnum)
        g.case(f"grad_{fn}_{argnum}", f"grad_{fn}", [g.arr(a, "float32"), g.arr(b, "float32")], gf, f"argnum={argnum}")
        with jax.enable_x64(True):
            g.case(f"grad_{fn}_{argnum}_f64", f"grad_{fn}", [g.arr(a, "float64"), g.arr(b, "float64")], gf,
                   f"argnum={argnum} x64=1")
g.case("grad_polygamma", "grad_polygamma", [g.arr([0, 1, 2], "int32"), g.arr([0.5, 2.0, 3.0], "float32")],
       jax.grad(lambda n, x: jnp.sum(sp.polygamma(n, x)), argnums=1), "argnum=1")
g.case("grad_logsumexp", "grad_logsumexp", [M[:2], Bm[:2]],
       jax.grad(lambda x, b: jnp.sum(sp.logsumexp(x, axis=1, b=jnp.abs(b) + 0.5))), "argnum=0 axes=1")
# second derivatives through the rules
g.case("grad2_gammaln", "grad2_gammaln", [g.arr([0.3, 1.0, 7.5], "float32")],
       jax.grad(lambda x: jnp.sum(jax.grad(lambda y: jnp.sum(sp.gammaln(y)))(x))), "argnum=0")
g.case("grad2_i0e", "grad2_i0e", [g.arr([-2.0, 0.5, 12.0], "float32")],
       jax.grad(lambda x: jnp.sum(jax.grad(lambda y: jnp.sum(sp.i0e(y)))(x))), "argnum=0")

golden_io.write(OUT, "# Generated by tools/golden_special.py -- do not edit.\n", g.CASES, sep="\n")
