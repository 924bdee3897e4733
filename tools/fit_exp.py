#!/usr/bin/env python3
"""fit_exp.py -- the polynomial of jaxc's own float32 exp (src/render/prelude_c.h, jx_expf):
e^r ~ 1 + r + r^2 Q(r) on |r| <= ln2/2 (a little wider, for the reduction's rounding),
Q of degree DEG (default 4), fitted to minimize the relative error of e^r by iteratively
reweighted least squares at Chebyshev nodes (close to minimax). Prints the coefficients
(c0 + c1 r + ...) rounded to float32 and the relative error in exact arithmetic with them.
  python3 tools/fit_exp.py [DEG]"""
import sys

import numpy as np

deg = int(sys.argv[1]) if len(sys.argv) > 1 else 4
L = np.log(2) / 2 * 1.0005
N = 4000
r = np.cos(np.pi * (np.arange(N) + 0.5) / N) * L
f = (np.expm1(r) - r) / r**2
w = r**2 / np.exp(r)  # error of 1 + r + r^2 Q relative to e^r
A = np.vander(r, deg + 1, increasing=True) * w[:, None]
ww = np.ones(N)
for _ in range(200):
    c, *_ = np.linalg.lstsq(A * ww[:, None], f * w * ww, rcond=None)
    ww = ww * np.abs(A @ c - f * w) ** 0.5 + 1e-300
    ww /= ww.max()
c32 = c.astype(np.float32).astype(np.float64)
rr = np.linspace(-L, L, 200001)
err = (1 + rr + rr**2 * np.polyval(c32[::-1], rr)) / np.exp(rr) - 1
print("Q coefficients (float32):", ", ".join("%.9e" % x for x in c32))
print("max relative error: %.3g (2^%.2f)" % (np.abs(err).max(), np.log2(np.abs(err).max())))
