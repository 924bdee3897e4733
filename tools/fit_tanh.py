"""fit_tanh.py -- the coefficients of jx_tanh_f32 (src/render/prelude_c.h): tanh(a)/a ~
P(s)/Q(s), s = a^2, on a in [0, X], Q(0) = 1, fitted to minimize the relative error by
iteratively reweighted linear least squares (the linearized P - f Q weighted by 1/Q of the
previous step, and Lawson weights that push towards the minimax), against mpmath's tanh at
Chebyshev nodes -- fit_erf.py's method. Prints the relative error in exact arithmetic and
with the coefficients rounded to float32, then the coefficients, highest degree first
(Horner order). Not part of the build.

Usage: python3 tools/fit_tanh.py M N X    (jaxc: 4 4 9.02)
"""
import sys

import mpmath
import numpy as np

mpmath.mp.dps = 30
m, n, X = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
N = 4000
k = np.arange(N)
x = np.concatenate([[1e-4], X * (0.5 - 0.5 * np.cos(np.pi * (k + 0.5) / N))])
s = x * x
f = np.array([float(mpmath.tanh(mpmath.mpf(v)) / v) for v in x])
w = 1 / np.abs(f)
Qp = np.ones_like(s)
lw = np.ones_like(s)
for it in range(60):
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
pf, qf = p.astype(np.float32).astype(np.float64), q.astype(np.float32).astype(np.float64)
err32 = (np.polyval(pf[::-1], s) / np.polyval(qf[::-1], s) - f) / f
print("max relative error", np.abs(err).max(), "with float32 coefficients", np.abs(err32).max())
print("P", " ".join("%.9e" % v for v in p[::-1].astype(np.float32)))
print("Q", " ".join("%.9e" % v for v in q[::-1].astype(np.float32)))
