#!/usr/bin/env python3
"""bench/run.py -- runs jaxc's benchmarks (bench_jaxc) and the same workloads in NumPy
and JAX on CPU in one session on one machine, and prints ratios (higher = jaxc better).

    pip install jax numpy optax && python3 bench/run.py [--build build] [--only NAME] [--md FILE]
                                                       [--repeat N]

NAME: random (the jax.random samplers, large and per call), fft (issue 15: complex64 fft of 2^20, rfft of 2^22 float32, fft2 of 1024x1024, a
prime length 1,000,003, a 4096 x 1024 batch), linalg, matmul, chain, softmax, reduce, mlp, eager, transc (every transcendental function
on 2^22 float32; fn_NAME for one), tchain (the issue-11 chain tanh(1.5x+0.25)*exp(-x*x) +
sqrt(|x|+1) - x/3 and the copy roofline at 2^22 and 1e7), nnops (layer norm, log-softmax
cross-entropy), gelu_mlp, loops (issue 16: an LSTM with hidden 256, batch 32, 1000 steps
through lax.scan, forward and forward+grad; a while_loop of 100,000 scalar Newton
iterations; a fori_loop of a 64x64 matmul 10,000 times), linalg (issue 14: cholesky,
solve, inv, qr, eigh, svd at n = 256, 1024 and a 1000x16x16 batch), linalg_batch (the
batch rows alone, best of 20 each), or fm (the Fashion-MNIST MLP
and CNN training steps of examples/fashion_mnist.c against the same models in JAX +
optax).

Times are best-of-N after a warm-up (compile excluded, except the *_compile rows, which
measure cold compiles: each jaxc run gets an empty JAXC_CACHE_DIR). The whole comparison
runs --repeat times (default 3), alternating jaxc and the peers, and each system's best
value is kept: the shared machine's load swings by 2x between runs."""
import argparse, os, platform, subprocess, sys, tempfile, time

import numpy as np


def per_call(f, reps):
    """Seconds a call of f: 100 warm-up calls, then the best of 3 loops of reps calls."""
    for _ in range(100):
        f()
    t = 1e30
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        t = min(t, (time.perf_counter() - t0) / reps)
    return t


def best(f, reps):
    f()
    t = 1e30
    for _ in range(reps):
        t0 = time.perf_counter(); f(); t = min(t, time.perf_counter() - t0)
    return t


# Timed steps of the Fashion-MNIST rows, per model, for jaxc and JAX alike: the MLP step
# takes 2-4 ms, so best-of-10 moved by 20-30% between runs; the CNN step takes 35-160 ms.
FM_BENCH_STEPS = {"mlp": 100, "cnn": 20}


def peers(only):
    import jax, jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    res = {}
    def want(name): return not only or only in name
    block = lambda x: jax.block_until_ready(x)
    rng = np.random.default_rng(0)
    if only == "fft":  # issue 15: numpy.fft (pocketfft) and jax.numpy.fft on CPU
        c = lambda *s: (rng.random(s, dtype=np.float32) - 0.5 + 1j * (rng.random(s, dtype=np.float32) - 0.5)).astype(np.complex64)
        cases = {"fft_c64_2^20": (c(1 << 20), np.fft.fft, jnp.fft.fft),
                 "rfft_f32_2^22": (rng.random(1 << 22, dtype=np.float32) - 0.5, np.fft.rfft, jnp.fft.rfft),
                 "fft2_c64_1024x1024": (c(1024, 1024), np.fft.fft2, jnp.fft.fft2),
                 "fft_c64_prime_1000003": (c(1000003), np.fft.fft, jnp.fft.fft),
                 "fft_c64_batch_4096x1024": (c(4096, 1024), np.fft.fft, jnp.fft.fft)}
        for name, (x, nf, jf) in cases.items():
            jx_, jj = jnp.asarray(x), jax.jit(jf)
            res[name] = {"numpy": best(lambda: nf(x), 5) * 1e3, "jax": best(lambda: block(jj(jx_)), 5) * 1e3}
        return res
    if only in ("linalg", "linalg_batch"):  # issue 14: numpy/scipy (LAPACK) and jax on CPU, float32
        import scipy.linalg as sl
        ops = {"cholesky": (np.linalg.cholesky, jnp.linalg.cholesky),
               "solve": (np.linalg.solve, jnp.linalg.solve), "inv": (np.linalg.inv, jnp.linalg.inv),
               # q, as bench_jaxc.c returns: r alone lets XLA drop JAX's orgqr
               "qr": (lambda a: np.linalg.qr(a)[0], lambda a: jnp.linalg.qr(a)[0]),
               "eigh": (lambda a: np.linalg.eigh(a)[0], lambda a: jnp.linalg.eigh(a)[0]),
               "svd": (lambda a: np.linalg.svd(a, full_matrices=False)[1],
                       lambda a: jnp.linalg.svd(a, full_matrices=False)[1])}
        sizes = ((1000, 16),) if only == "linalg_batch" else ((1, 256), (1, 1024), (1000, 16))
        for B, n in sizes:
            a = rng.random((B, n, n), dtype=np.float32) - 0.5
            spd = (a @ a.transpose(0, 2, 1) + n * np.eye(n, dtype=np.float32)).astype(np.float32)
            rhs = rng.random((B, n, 1), dtype=np.float32) - 0.5
            if B == 1: spd, rhs = spd[0], rhs[0]
            js, jr = jnp.asarray(spd), jnp.asarray(rhs)
            reps = 20 if only == "linalg_batch" else 3 if n >= 1024 else 5
            for op, (nf, jf) in ops.items():
                name = f"{op}_{n}" if B == 1 else f"{op}_{B}x{n}x{n}"
                args = (spd, rhs) if op == "solve" else (spd,)
                jargs = (js, jr) if op == "solve" else (js,)
                jj = jax.jit(jf)
                res[name] = {"numpy": best(lambda: nf(*args), reps) * 1e3,
                             "jax": best(lambda: block(jj(*jargs)), reps) * 1e3}
        return res
    if want("loops"):  # issue 16: the workloads of bench_jaxc.c's bench_loops
        from jax import lax
        T, B, H = 1000, 32, 256
        W, U = (jnp.asarray((rng.random((H, 4 * H), dtype=np.float32) - 0.5) * 0.1) for _ in range(2))
        bb = jnp.zeros(4 * H, jnp.float32)
        xs = jnp.asarray(rng.random((T, B, H), dtype=np.float32) - 0.5)
        h0 = c0 = jnp.zeros((B, H), jnp.float32)
        def lstm_loss(W, U, b, xs, h0, c0):
            def cell(carry, x):
                h, c = carry
                z = x @ W + h @ U + b
                i, f, g, o = (z[:, k * H:(k + 1) * H] for k in range(4))
                c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
                h = jax.nn.sigmoid(o) * jnp.tanh(c)
                return (h, c), h
            _, ys = lax.scan(cell, (h0, c0), xs)
            return jnp.mean(ys * ys)
        fwd = jax.jit(lstm_loss)
        vg = jax.jit(jax.value_and_grad(lstm_loss, (0, 1, 2)))
        res["lstm_fwd_T1000"] = {"jax": best(lambda: block(fwd(W, U, bb, xs, h0, c0)), 3) * 1e3}
        res["lstm_fwd_grad_T1000"] = {"jax": best(lambda: block(vg(W, U, bb, xs, h0, c0)), 3) * 1e3}
        def newton(a):
            return lax.while_loop(lambda c: c[0] < 100000, lambda c: (c[0] + 1, (c[1] + a / c[1]) * 0.5),
                                  (jnp.int32(0), a))[1]
        nw = jax.jit(newton)
        a = jnp.float32(2.0)
        res["newton_while_1e5"] = {"jax": best(lambda: block(nw(a)), 3) * 1e3}
        m0 = jnp.asarray(rng.random((64, 64), dtype=np.float32) - 0.5)
        am = jnp.asarray((rng.random((64, 64), dtype=np.float32) - 0.5) * 0.3)
        fm = jax.jit(lambda m, a: lax.fori_loop(0, 10000, lambda i, m: jnp.tanh(m @ a), m))
        res["fori_matmul64_1e4"] = {"jax": best(lambda: block(fm(m0, am)), 3) * 1e3}
        cb = jax.jit(lambda x: jnp.tanh(lax.cond(jnp.sum(x) > 0, jnp.sin, jnp.cos, x * 3)) + x * x)
        for n in (1024, 100000):  # a cond between other operations, us a call
            xc = jnp.asarray(rng.random(n, dtype=np.float32) - 0.5)
            res[f"cond_between_{n}"] = {"jax": per_call(lambda: block(cb(xc)), 1000) * 1e6}
    for n in (256, 512, 1024, 2048):
        if not want("matmul"): break
        a = rng.random((n, n), dtype=np.float32) - 0.5; b = rng.random((n, n), dtype=np.float32) - 0.5
        reps = 3 if n >= 2048 else 5
        res[f"matmul_{n}"] = {"numpy": 2 * n**3 / best(lambda: a @ b, reps) / 1e9}
        ja, jb = jnp.asarray(a), jnp.asarray(b); mm = jax.jit(lambda x, y: x @ y)
        res[f"matmul_{n}"]["jax"] = 2 * n**3 / best(lambda: block(mm(ja, jb)), reps) / 1e9
    def chain(x, m):
        y = x * 1.5 + 0.25; y = m.maximum(y, 0.0); y = y - x; y = y * y; y = y + 1.0
        y = m.sqrt(y) * 0.5; y = m.minimum(y, 3.0); return y + x
    for n in (1000000, 10000000):
        if not want("chain"): break
        x = (rng.random(n, dtype=np.float32) - 0.5); jx = jnp.asarray(x)
        jc = jax.jit(lambda v: chain(v, jnp))
        res[f"chain_{n}"] = {"numpy": 8 * n / best(lambda: chain(x, np), 10) / 1e9,
                             "jax": 8 * n / best(lambda: block(jc(jx)), 10) / 1e9}
        out = np.empty_like(x)
        res[f"copy_{n}"] = {"numpy": 8 * n / best(lambda: np.add(x, 1.0, out=out), 10) / 1e9}
    if want("transc") or only.startswith("fn_"):
        import scipy.special as sps
        from jax import lax
        n = 1 << 22
        base = rng.random(n, dtype=np.float32) - 0.5; base2 = rng.random(n, dtype=np.float32) - 0.5
        dom = {"ANY": base * 4, "POS": np.abs(base) * 4 + 0.05, "GE1": np.abs(base) * 4 + 1,
               "UNIT": base * 1.9}
        yv = base2 * 4
        sig = lambda v: 1 / (1 + np.exp(-v))
        gelu_np = lambda v: 0.5 * v * (1 + sps.erf(v / np.sqrt(2)).astype(np.float32))
        gelu_t = lambda v: 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v**3)))
        # name: (domain, jax function, numpy function); same table as bench_jaxc.c
        fns = {"exp": ("ANY", jnp.exp, np.exp), "exp2": ("ANY", jnp.exp2, np.exp2),
               "expm1": ("ANY", jnp.expm1, np.expm1), "log": ("POS", jnp.log, np.log),
               "log2": ("POS", jnp.log2, np.log2), "log1p": ("POS", jnp.log1p, np.log1p),
               "tanh": ("ANY", jnp.tanh, np.tanh), "logistic": ("ANY", jax.nn.sigmoid, sig),
               "sin": ("ANY", jnp.sin, np.sin), "cos": ("ANY", jnp.cos, np.cos),
               "tan": ("ANY", jnp.tan, np.tan), "asin": ("UNIT", jnp.arcsin, np.arcsin),
               "acos": ("UNIT", jnp.arccos, np.arccos), "atan": ("ANY", jnp.arctan, np.arctan),
               "sinh": ("ANY", jnp.sinh, np.sinh), "cosh": ("ANY", jnp.cosh, np.cosh),
               "asinh": ("ANY", jnp.arcsinh, np.arcsinh), "acosh": ("GE1", jnp.arccosh, np.arccosh),
               "atanh": ("UNIT", jnp.arctanh, np.arctanh), "erf": ("ANY", lax.erf, sps.erf),
               "erfc": ("ANY", lax.erfc, sps.erfc), "erf_inv": ("UNIT", lax.erf_inv, sps.erfinv),
               "cbrt": ("ANY", jnp.cbrt, np.cbrt), "rsqrt": ("POS", lax.rsqrt, lambda v: 1 / np.sqrt(v)),
               "pow": ("POS", jnp.power, np.power), "atan2": ("ANY", jnp.arctan2, np.arctan2),
               "gelu_erf": ("ANY", lambda v: jax.nn.gelu(v, approximate=False), gelu_np),
               "gelu_tanh": ("ANY", jax.nn.gelu, gelu_t)}
        for name, (d, jf, nf) in fns.items():
            if only.startswith("fn_") and only != "fn_" + name: continue
            x = dom[d]; jx_ = jnp.asarray(x); jy = jnp.asarray(yv)
            two = name in ("pow", "atan2")
            jfn = jax.jit(jf)
            res[f"fn_{name}"] = {
                "numpy": best((lambda: nf(x, yv)) if two else (lambda: nf(x)), 5) * 1e3,
                "jax": best((lambda: block(jfn(jx_, jy))) if two else (lambda: block(jfn(jx_))), 10) * 1e3}
    if want("tchain"):
        def tchain(x, m):
            return m.tanh(1.5 * x + 0.25) * m.exp(-x * x) + m.sqrt(m.abs(x) + 1) - x / 3
        jt = jax.jit(lambda v: tchain(v, jnp))
        for n in (1 << 22, 10000000):
            x = (rng.random(n, dtype=np.float32) - 0.5) * 4; jx_ = jnp.asarray(x)
            res[f"tchain_{n}"] = {"numpy": 8 * n / best(lambda: tchain(x, np), 5) / 1e9,
                                  "jax": 8 * n / best(lambda: block(jt(jx_)), 10) / 1e9}
            out = np.empty_like(x)
            res[f"tcopy_{n}"] = {"numpy": 8 * n / best(lambda: np.add(x, 1.0, out=out), 10) / 1e9}
    if want("nnops"):
        x = (rng.random((4096, 1024), dtype=np.float32) - 0.5) * 8; jx_ = jnp.asarray(x)
        g = rng.random(1024, dtype=np.float32) + 0.5; b = rng.random(1024, dtype=np.float32) - 0.5
        def ln(v, gg, bb, m):
            mu = v.mean(-1, keepdims=True); var = ((v - mu) ** 2).mean(-1, keepdims=True)
            return (v - mu) / m.sqrt(var + 1e-5) * gg + bb
        jln = jax.jit(lambda v, gg, bb: ln(v, gg, bb, jnp))
        res["layernorm_4096x1024"] = {"numpy": best(lambda: ln(x, g, b, np), 5) * 1e3,
                                      "jax": best(lambda: block(jln(jx_, g, b)), 10) * 1e3}
        y = np.zeros((4096, 1024), np.float32); y[np.arange(4096), (np.arange(4096) * 7) % 1024] = 1
        def xent_np(v):
            m = v.max(-1, keepdims=True); lse = np.log(np.exp(v - m).sum(-1, keepdims=True)) + m
            return -np.mean(np.sum((v - lse) * y, -1))
        jxe = jax.jit(lambda v, yy: -jnp.mean(jnp.sum(jax.nn.log_softmax(v) * yy, -1)))
        jyy = jnp.asarray(y)
        res["xent_4096x1024"] = {"numpy": best(lambda: xent_np(x), 5) * 1e3,
                                 "jax": best(lambda: block(jxe(jx_, jyy)), 10) * 1e3}
    if want("gelu_mlp"):
        p = [jnp.asarray((rng.random((1024, 4096), dtype=np.float32) - 0.5) * 0.06), jnp.zeros(4096),
             jnp.asarray((rng.random((4096, 1024), dtype=np.float32) - 0.5) * 0.03), jnp.zeros(1024)]
        x = jnp.asarray(rng.random((256, 1024), dtype=np.float32) - 0.5)
        y = jnp.asarray(rng.random((256, 1024), dtype=np.float32) - 0.5)
        def gl(w1, b1, w2, b2, x, y):
            d = jax.nn.gelu(x @ w1 + b1) @ w2 + b2 - y; return jnp.mean(d * d)
        vg = jax.jit(jax.value_and_grad(gl, argnums=(0, 1, 2, 3)))
        res["gelu_mlp_fwd_bwd"] = {"jax": best(lambda: block(vg(*p, x, y)), 10) * 1e3}
    if want("softmax"):
        x = rng.random((4096, 1024), dtype=np.float32); jx = jnp.asarray(x)
        def np_softmax(v):
            e = np.exp(v - v.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)
        js = jax.jit(lambda v: jax.nn.softmax(v, axis=-1))
        res["softmax_4096x1024"] = {"numpy": best(lambda: np_softmax(x), 10) * 1e3,
                                    "jax": best(lambda: block(js(jx)), 10) * 1e3}
    if want("random"):  # jax.random's samplers (jitted inside JAX); NumPy's Generator
        k, s = jax.random.key(0), (2048, 2048)
        res["random_normal_2048x2048"] = {
            "numpy": best(lambda: rng.standard_normal(s, dtype=np.float32), 10) * 1e3,
            "jax": best(lambda: block(jax.random.normal(k, s)), 10) * 1e3}
        res["random_gumbel_2048x2048"] = {
            "numpy": best(lambda: rng.gumbel(size=s).astype(np.float32), 10) * 1e3,
            "jax": best(lambda: block(jax.random.gumbel(k, s)), 10) * 1e3}
        res["random_truncated_normal_2048x2048"] = {
            "jax": best(lambda: block(jax.random.truncated_normal(k, -2.0, 2.0, s)), 10) * 1e3}
        w = jnp.asarray(rng.random(100000, dtype=np.float32) + 0.5)  # bench_jaxc.c: weights in [0.5, 1.5)
        res["random_choice_p_1e5"] = {
            "jax": best(lambda: block(jax.random.choice(k, 100000, (100000,), True, w)), 10) * 1e3}
        # small samples, per call (bench_jaxc.c's bench_small_samplers)
        for name, f, n in (("random_normal_128_call", jax.random.normal, 128),
                           ("random_normal_3_call", jax.random.normal, 3),
                           ("random_gumbel_128_call", jax.random.gumbel, 128),
                           ("random_uniform_128_call", jax.random.uniform, 128),
                           ("random_bernoulli_128_call", lambda k, s: jax.random.bernoulli(k, 0.5, s), 128),
                           ("random_randint_128_call", lambda k, s: jax.random.randint(k, s, 0, 10), 128),
                           ("random_permutation_128_call", lambda k, s: jax.random.permutation(k, s[0]), 128),
                           ("random_categorical_8x10_call",
                            lambda k, s: jax.random.categorical(k, jnp.zeros((8, s[0] // 8))), 80),
                           ("random_choice_128_10_call",
                            lambda k, s: jax.random.choice(k, s[0], (10,), replace=False), 128),
                           ("random_gamma_128_call", lambda k, s: jax.random.gamma(k, 2.5, s), 128),
                           ("random_poisson_128_call", lambda k, s: jax.random.poisson(k, 3.0, s), 128),
                           ("random_beta_128_call", lambda k, s: jax.random.beta(k, 2.0, 3.0, s), 128)):
            res[name] = {"jax": per_call(lambda: block(f(k, (n,))), 2000) * 1e6}
    if want("cumsum"):  # jit(jnp.cumsum), jit(lax.cumsum(reverse=True)) of 1e6 float32
        x = rng.random(1000000, dtype=np.float32); jx = jnp.asarray(x)
        fc = jax.jit(jnp.cumsum); fr = jax.jit(lambda v: jax.lax.cumsum(v, 0, reverse=True))
        res["cumsum_1e6"] = {"numpy": best(lambda: np.cumsum(x), 10) * 1e3,
                             "jax": best(lambda: block(fc(jx)), 10) * 1e3}
        res["cumsum_rev_1e6"] = {"numpy": best(lambda: np.cumsum(x[::-1])[::-1], 10) * 1e3,
                                 "jax": best(lambda: block(fr(jx)), 10) * 1e3}
    if want("reduce"):
        x = rng.random(10000000, dtype=np.float32); jx = jnp.asarray(x)
        s, am = jax.jit(jnp.sum), jax.jit(jnp.argmax)
        res["sum_1e7"] = {"numpy": best(lambda: x.sum(), 10) * 1e3, "jax": best(lambda: block(s(jx)), 10) * 1e3}
        res["argmax_1e7"] = {"numpy": best(lambda: x.argmax(), 10) * 1e3, "jax": best(lambda: block(am(jx)), 10) * 1e3}
    if want("mlp"):
        p = [jnp.asarray(rng.random((784, 512), dtype=np.float32) - 0.5), jnp.zeros(512),
             jnp.asarray(rng.random((512, 10), dtype=np.float32) - 0.5), jnp.zeros(10)]
        x = jnp.asarray(rng.random((128, 784), dtype=np.float32) - 0.5)
        y = jax.nn.one_hot(jnp.arange(128) % 10, 10)
        def loss(w1, b1, w2, b2, x, y):
            h = jax.nn.relu(x @ w1 + b1); logits = h @ w2 + b2
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=1))
        vg = jax.value_and_grad(loss, argnums=(0, 1, 2, 3))
        @jax.jit
        def step(w1, b1, w2, b2, x, y):
            l, g = vg(w1, b1, w2, b2, x, y)
            return [a - 0.01 * b for a, b in zip((w1, b1, w2, b2), g)] + [l]
        t0 = time.perf_counter(); block(step(*p, x, y)); tc = time.perf_counter() - t0
        res["jit_compile_mlp_step"] = {"jax": tc * 1e3}
        res["mlp_step"] = {"jax": best(lambda: block(step(*p, x, y)), 20) * 1e3}
    if want("fm"):
        import optax
        B = 128
        x = jnp.asarray(rng.random((B, 784), dtype=np.float32)); y = jnp.arange(B) % 10
        def dense_init(k, i, o):
            return [jax.random.normal(k, (i, o)) * np.sqrt(2.0 / i), jnp.zeros(o)]
        keys = jax.random.split(jax.random.key(0), 8)
        mlp = dense_init(keys[0], 784, 512) + dense_init(keys[1], 512, 256) + dense_init(keys[2], 256, 10)
        def mlp_fwd(p, x):
            h = jax.nn.relu(x @ p[0] + p[1]); h = jax.nn.relu(h @ p[2] + p[3]); return h @ p[4] + p[5]
        cnn = [jax.random.normal(keys[3], (3, 3, 1, 32)) * np.sqrt(2 / 9), jnp.zeros(32),
               jax.random.normal(keys[4], (3, 3, 32, 64)) * np.sqrt(2 / 288), jnp.zeros(64)] + \
              dense_init(keys[5], 3136, 128) + dense_init(keys[6], 128, 10)
        def conv_block(x, w, b):
            c = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            r = jax.nn.relu(c + b)
            return jax.lax.reduce_window(r, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        def cnn_fwd(p, x):
            h = conv_block(conv_block(x.reshape(-1, 28, 28, 1), p[0], p[1]), p[2], p[3]).reshape(x.shape[0], -1)
            h = jax.nn.relu(h @ p[4] + p[5]); return h @ p[6] + p[7]
        for name, fwd, params in (("mlp", mlp_fwd, mlp), ("cnn", cnn_fwd, cnn)):
            # as examples/fashion_mnist.c: Adam on a cosine-decayed learning rate
            opt = optax.adam(optax.cosine_decay_schedule(1e-3, 10000)); st = opt.init(params)
            def loss(p, x, y, fwd=fwd):
                return optax.softmax_cross_entropy_with_integer_labels(fwd(p, x), y).mean()
            @jax.jit
            def step(p, s, x, y, opt=opt, loss=loss):
                l, g = jax.value_and_grad(loss)(p, x, y)
                u, s = opt.update(g, s, p)
                return optax.apply_updates(p, u), s, l
            t0 = time.perf_counter(); jax.block_until_ready(step(params, st, x, y))
            res[f"fm_{name}_compile"] = {"jax": (time.perf_counter() - t0) * 1e3}
            res[f"fm_{name}_step"] = {"jax": best(lambda: jax.block_until_ready(step(params, st, x, y)),
                                                  FM_BENCH_STEPS[name]) * 1e3}
    if want("eager"):  # cached eager ops, per call (bench_jaxc.c's bench_eager)
        a = rng.random(16, dtype=np.float32); b = rng.random(16, dtype=np.float32)
        m = rng.random((4, 4), dtype=np.float32); c4 = rng.random(4, dtype=np.float32)
        m16 = rng.random((16, 16), dtype=np.float32)
        m64 = rng.random((64, 64), dtype=np.float32); v64 = rng.random(64, dtype=np.float32)
        ja, jb, jm, jc4 = jnp.asarray(a), jnp.asarray(b), jnp.asarray(m), jnp.asarray(c4)
        jm16, jm64, jv64 = jnp.asarray(m16), jnp.asarray(m64), jnp.asarray(v64)
        ops = {"eager_add_16": (lambda: np.add(a, b), lambda: jnp.add(ja, jb)),
               "eager_exp_16": (lambda: np.exp(a), lambda: jnp.exp(ja)),
               "eager_sum_16": (lambda: np.sum(a), lambda: jnp.sum(ja)),
               "eager_reshape_add_4x4": (lambda: np.add(a.reshape(4, 4), c4),
                                         lambda: jnp.add(ja.reshape(4, 4), jc4)),
               "eager_matmul_4x4": (lambda: np.matmul(m, m), lambda: jnp.matmul(jm, jm)),
               "eager_matmul_16x16": (lambda: np.matmul(m16, m16), lambda: jnp.matmul(jm16, jm16)),
               "eager_matvec_64": (lambda: np.matmul(m64, v64), lambda: jnp.matmul(jm64, jv64))}
        for name, (nf, jf) in ops.items():
            res[name] = {"numpy": per_call(nf, 20000) * 1e6,
                         "jax": per_call(lambda: block(jf()), 2000) * 1e6}
    return res


# For these units a smaller number is better (times); ratios are then peer / jaxc.
LOWER_IS_BETTER = ("ms", "us")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--only", default="")
    ap.add_argument("--md", default="")
    ap.add_argument("--repeat", type=int, default=3,
                    help="alternate jaxc and the peers this many times; keep each one's best")
    args = ap.parse_args()
    exe = os.path.join(args.build, "jaxc_bench")
    runs = []  # (command, extra environment, row-name prefix to rename)
    if not args.only or args.only != "fm":
        runs.append(([exe, args.only], {}, None))
    if not args.only or args.only in ("matmul", "matmul_own"):
        # issue 11 item 6: jaxc's own GEMM kernel (JAXC_BLAS=0) next to jaxc on OpenBLAS
        # (JAXC_BLAS=always: the default takes the own kernel where it measured faster), on
        # the thread pool and on one thread (where process CPU time is the compute time)
        runs.append(([exe, "matmul"], {"JAXC_BLAS": "0"}, ("matmul_", "matmul_own_")))
        runs.append(([exe, "matmul"], {"JAXC_BLAS": "always"}, ("matmul_", "matmul_blas_")))
        runs.append(([exe, "matmul"], {"JAXC_BLAS": "always", "JAXC_NUM_THREADS": "1"},
                     ("matmul_", "matmul_blas_1t_")))
        runs.append(([exe, "matmul"], {"JAXC_BLAS": "0", "JAXC_NUM_THREADS": "1"},
                     ("matmul_", "matmul_own_1t_")))
    if not args.only or args.only in ("fm", "fm_mlp", "fm_cnn"):
        fm = os.path.join(args.build, "jaxc_fashion_mnist")
        for model in ("mlp", "cnn"):  # FM_BENCH_STEPS: best of many 2-4 ms MLP steps (10 was noise-level)
            runs.append(([fm, "--model", model, "--bench", str(FM_BENCH_STEPS[model]), "--limit", "1000"], {}, None))
    def keep_best(table, name, value, unit):
        old = table.get(name)
        better = (lambda a, b: a < b) if unit in LOWER_IS_BETTER else (lambda a, b: a > b)
        if old is None or better(value, old[0]): table[name] = (value, unit)
    ours, best_peers = {}, {}
    units = {}
    for _ in range(max(1, args.repeat)):
        for cmd, extra, rename in runs:
            # a fresh kernel cache per run: the compile rows measure cold compiles, as JAX's do
            with tempfile.TemporaryDirectory() as cache:
                out = subprocess.run(cmd, capture_output=True, text=True,
                                     env={**os.environ, "JAXC_CACHE_DIR": cache, **extra})
            if out.returncode != 0:
                sys.exit(f"{cmd[0]} failed: {out.stderr}")
            for line in out.stdout.splitlines():
                parts = line.split()
                if len(parts) == 3 and rename:
                    if not parts[0].startswith(rename[0]): continue
                    parts[0] = rename[1] + parts[0][len(rename[0]):]
                if len(parts) == 3:
                    keep_best(ours, parts[0], float(parts[1]), parts[2])
                    units[parts[0]] = parts[2]
        for name, vals in peers(args.only).items():
            for peer, v in vals.items():
                keep_best(best_peers, (name, peer), v, units.get(name, ""))
    theirs = {}
    for (name, peer), (v, _) in best_peers.items():
        theirs.setdefault(name, {})[peer] = v
    rows = []
    for name, (v, unit) in ours.items():
        peer_name = name.replace("matmul_own_", "matmul_").replace("matmul_blas_", "matmul_")
        p = theirs.get(peer_name, {}) if "_cpu_" not in name and "_1t_" not in name else {}
        def ratio(peer):
            if peer not in p: return "-"
            r = p[peer] / v if unit in LOWER_IS_BETTER else v / p[peer]
            return f"{r:.2f}x"
        fmt = lambda x: f"{x:.2f}" if x is not None else "-"
        rows.append(f"| {name} | {unit} | {v:.2f} | {fmt(p.get('numpy'))} | {fmt(p.get('jax'))} "
                    f"| {ratio('numpy')} | {ratio('jax')} |")
    import jax
    head = (f"Machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores; "
            f"numpy {np.__version__}, jax {jax.__version__}; command: python3 bench/run.py"
            + (f" --only {args.only}" if args.only else "")
            + f" (best of {max(1, args.repeat)} alternating runs per system)\n\n"
            "| benchmark | unit | jaxc | numpy | jax | vs numpy | vs jax |\n|---|---|---|---|---|---|---|")
    table = head + "\n" + "\n".join(rows)
    own = [(k, v) for k, (v, _) in ours.items() if k.startswith("matmul_own_")]
    if own:  # issue 11 item 6: own kernel / OpenBLAS, both inside jaxc, same run
        env = os.environ.get("OPENBLAS_CORETYPE")
        table += ("\n\njaxc's own GEMM kernel (JAXC_BLAS=0) vs jaxc on OpenBLAS (JAXC_BLAS=always)"
                  + (f" (OPENBLAS_CORETYPE={env})" if env else "") + ", float32 n x n, GFLOP/s:\n\n"
                  "| row (1t: one thread; cpu: per process CPU second) | own kernel | OpenBLAS | numpy | own / OpenBLAS |\n|---|---|---|---|---|")
        for k, v in own:
            n = k[len("matmul_own_"):]
            blas = ours.get("matmul_blas_" + n, (None,))[0]
            nump = theirs.get("matmul_" + n, {}).get("numpy") if "_" not in n else None
            table += (f"\n| {n} | {v:.2f} | {blas:.2f} | " + (f"{nump:.2f}" if nump else "-")
                      + f" | {v / blas:.2f}x |" if blas else f"\n| {n} | {v:.2f} | - | - | - |")
    print(table)
    print("(ratios > 1 mean jaxc is faster / achieves more)")
    if args.md:
        with open(args.md, "a") as f:
            f.write(f"\n### {time.strftime('%Y-%m-%d %H:%M')}\n\n{table}\n")


if __name__ == "__main__":
    main()
