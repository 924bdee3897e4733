"""jax_erf_ulp.py -- the maximum ulp error of JAX's float32 erf on the CPU (XLA's own
expansion, jax.jit(jax.lax.erf)) over every non-negative finite float32, against float64
scipy.special.erf rounded once to float32 (the correctly rounded result in practice; the
same reference as tools/ulp_check.c's interpreter). erf is odd and XLA's form is too, so
the negative half is the mirror image. XLA flushes subnormal inputs and results to zero;
those inputs are counted apart. Peer measurement for docs/api.md's erf row (issue 11);
not part of the test suite. Takes about 6 minutes on one core of the 2-core VM.

Usage: python3 tools/jax_erf_ulp.py
"""
import numpy as np
import jax
import scipy.special as sp

f = jax.jit(jax.lax.erf)


def key(b):  # float32 bit patterns -> integers ordered as the floats
    b = b.astype(np.int64)
    return np.where(b & 0x80000000, -(b & 0x7fffffff), b)


worst = (0,)
flushed = 0
hist = np.zeros(64, np.int64)
CH = 1 << 24
stop = 0x7f800000  # +inf's bit pattern
for lo in range(0, stop, CH):
    bits = np.arange(lo, min(lo + CH, stop), dtype=np.uint32)
    x = bits.view(np.float32)
    got = np.asarray(f(x))
    ref = sp.erf(x.astype(np.float64)).astype(np.float32)
    d = np.abs(key(got.view(np.uint32)) - key(ref.view(np.uint32)))
    tiny = np.float32(1.1754944e-38)  # smallest normal float32
    apart = (x < tiny) | (np.abs(ref) < tiny)  # subnormal input or result
    flushed += int(np.sum(apart & (got == 0) & (ref != 0)))
    d = np.where(apart, 0, d)
    i = int(np.argmax(d))
    if d[i] > worst[0]:
        worst = (int(d[i]), float(x[i]), float(got[i]), float(ref[i]))
    hist += np.bincount(np.minimum(d, 63), minlength=64)
print("JAX erf float32, normal inputs and results: max ulp %d at x = %.9g (got %.9g, want %.9g)" % worst)
print("inputs per ulp distance:", {k: int(v) for k, v in enumerate(hist) if v})
print("subnormal inputs or results flushed to 0:", flushed)
