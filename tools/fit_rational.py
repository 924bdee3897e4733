"""fit_rational.py -- the coefficients of jaxc's own float32 erf and tanh (jx_erf_f32,
jx_tanh_f32 in src/render/prelude_c.h): F(x)/x ~ P(s)/Q(s), s = x^2, on x in [0, X], Q(0)
= 1, fitted to minimize the relative error by iteratively reweighted linear least
squares (the linearized P - f Q weighted by 1/Q of the previous step, and Lawson weights
that push towards the minimax), at Chebyshev nodes, against float64 scipy.special.erf
(erf) or mpmath's tanh (tanh). Prints the relative error in exact arithmetic and with the
coefficients rounded to float32, then P's and Q's coefficients, lowest degree first. Not
part of the build.

Usage: python3 tools/fit_rational.py erf M N X     (jaxc: erf 6 5 3.95)
       python3 tools/fit_rational.py tanh M N X    (jaxc: tanh 4 4 9.02)
"""
import sys

import numpy as np

func, m, n, X = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
N = 4000
k = np.arange(N)
x = np.concatenate([[1e-4], X * (0.5 - 0.5 * np.cos(np.pi * (k + 0.5) / N))])
s = x * x
if func == "erf":
    import scipy.special as sp
    f, iterations = sp.erf(x) / x, 40
elif func == "tanh":
    import mpmath
    mpmath.mp.dps = 30
    f, iterations = np.array([float(mpmath.tanh(mpmath.mpf(v)) / v) for v in x]), 60
else:
    sys.exit("fit_rational.py: FUNC is erf or tanh")
w = 1 / np.abs(f)
Qp = np.ones_like(s)
lw = np.ones_like(s)
for it in range(iterations):
    # unknowns p0..pm, q1..qn of P(s) - f Q(s) = 0 with q0 = 1
    A = np.hstack([np.vander(s, m + 1, increasing=True),
                   -(f[:, None] * np.vander(s, n + 1, increasing=True)[:, 1:])])
    ww = w / np.abs(Qp) * np.sqrt(lw)
    c, *_ = np.linalg.lstsq(A * ww[:, None], f * ww, rcond=None)
    p, q = c[:m + 1], np.concatenate([[1], c[m + 1:]])
    Q = np.polyval(q[::-1], s)
    err = (np.polyval(p[::-1], s) / Q - f) / f
    Qp = Q
    lw = lw * (np.abs(err) / np.abs(err).max() + 1e-3)
    lw /= lw.sum()
p32, q32 = p.astype(np.float32), q.astype(np.float32)
err32 = (np.polyval(p32[::-1].astype(np.float64), s) / np.polyval(q32[::-1].astype(np.float64), s) - f) / f
print("max relative error", np.abs(err).max(), "with float32 coefficients", np.abs(err32).max())
print("P", " ".join("%.9e" % v for v in p32))
print("Q", " ".join("%.9e" % v for v in q32))
