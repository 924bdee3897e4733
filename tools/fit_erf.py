"""fit_erf.py -- the coefficients of jx_erf_f32 (src/render/prelude_c.h): erf(x)/x ~
P(s)/Q(s), s = x^2, on x in [0, X], Q(0) = 1, fitted to minimize the relative error by
iteratively reweighted linear least squares (the linearized P - f Q weighted by 1/Q of the
previous step, and Lawson weights that push towards the minimax), against float64
scipy.special.erf at Chebyshev nodes. Prints the relative error in exact arithmetic and
the coefficients, lowest degree first. Not part of the build.

Usage: python3 tools/fit_erf.py M N X    (jaxc: 6 5 3.95)
"""
import sys
import numpy as np
import scipy.special as sp

m, n, X = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
N = 4000
k = np.arange(N)
x = np.concatenate([[1e-4], X * (0.5 - 0.5 * np.cos(np.pi * (k + 0.5) / N))])
s = x * x
f = sp.erf(x) / x
w = 1 / np.abs(f)
Qp = np.ones_like(s)
lw = np.ones_like(s)
for it in range(40):
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
print("max relative error", np.abs(err).max(), file=sys.stderr)
print("P", " ".join("%.9e" % v for v in p))
print("Q", " ".join("%.9e" % v for v in q))
