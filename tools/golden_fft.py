#!/usr/bin/env python3
"""golden_fft.py -- writes two golden files (format: tests/support/golden.h):
tests/golden/fft_engine.txt: numpy.fft's results (pocketfft, float64) for the FFT
  routine (src/backend/fft.c) on raw buffers: FFT, IFFT, RFFT and IRFFT over 1 to 3
  trailing axes of a batch, lengths 1, 2, primes, powers of two and mixed radices.
  Complex arrays are float64 (re, im) pairs, C order. Params: type (lax.FftType
  number), outer, lens (comma separated fft_lengths).
tests/golden/fft.txt: jax.numpy.fft and lax.fft (jax_enable_x64 off unless x64=1):
  every function with n / s, axes and norm, 0-size inputs, errors, gradients (jax.grad,
  jvp) and vmap. A complex array is written as two float lines, its real then its
  imaginary part; params cin / cout list which inputs / outputs are complex (indices
  into the complex-aware list, comma separated).
Run:  python3 tools/golden_fft.py"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)

OUT = golden_io.path("fft_engine.txt")
OUT_JAX = golden_io.path("fft.txt")
rng = np.random.RandomState(15)
FFT, IFFT, RFFT, IRFFT = 0, 1, 2, 3


def flat(a):
    a = np.asarray(a)
    if np.iscomplexobj(a):
        a = np.stack([a.real, a.imag], axis=-1)
    return a.astype(np.float64).ravel()


def line(tag, a):
    v = flat(a)
    return f"{tag} float64 1 {v.size} : " + " ".join(repr(float(x)) for x in v)


def engine_cases():
    out = []

    def add(typ, outer, lens):
        lens = tuple(lens)
        axes = tuple(range(1, len(lens) + 1))
        shape = (outer,) + lens
        if typ in (FFT, IFFT):
            x = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
            y = np.fft.fftn(x, axes=axes) if typ == FFT else np.fft.ifftn(x, axes=axes)
        elif typ == RFFT:
            x = rng.uniform(-1, 1, shape)
            y = np.fft.rfftn(x, axes=axes)
        else:
            half = shape[:-1] + (lens[-1] // 2 + 1,)
            x = rng.uniform(-1, 1, half) + 1j * rng.uniform(-1, 1, half)
            y = np.fft.irfftn(x, s=lens, axes=axes)
        name = f"t{typ}_o{outer}_" + "x".join(map(str, lens))
        out.append("\n".join([f"case {name} engine type={typ} outer={outer} "
                               f"lens={','.join(map(str, lens))}", line("in", x), line("out", y),
                               "end"]))

    one_d = [1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 30, 31, 64, 97, 100, 101, 210, 256, 1009]
    for typ in (FFT, IFFT, RFFT, IRFFT):
        for n in one_d:
            add(typ, 1, [n])
        for outer, n in ((3, 5), (4, 8), (2, 101), (7, 12), (0, 8)):
            add(typ, outer, [n])
        for lens in ((1, 1), (2, 3), (4, 4), (5, 12), (17, 8), (6, 7), (2, 3, 4), (3, 5, 7), (4, 1, 6)):
            add(typ, 2, lens)
    return out


# ------------------------------------------------------------------ jax goldens

def fmt_any(tag, a):
    """Lines for a (complex arrays: real part, imaginary part) and whether complex."""
    a = np.asarray(a)
    if np.iscomplexobj(a):
        return [golden_io.fmt_array(tag, a.real), golden_io.fmt_array(tag, a.imag)], True
    return [golden_io.fmt_array(tag, a)], False


JCASES, JNAMES = [], set()


def jcase(name, fn, ins, call, params="", err=None, x64=False):
    assert name not in JNAMES, name
    JNAMES.add(name)
    jax.config.update("jax_enable_x64", x64)
    try:
        body, cin = [], []
        for i, a in enumerate(ins):
            ls, c = fmt_any("in", a)
            body += ls
            if c:
                cin.append(str(i))
        try:
            out = call(*ins)
        except (TypeError, ValueError, IndexError) as e:
            assert err, f"{name}: JAX raised {e!r}"
            body.append(f"err {err}")
            cout = []
        else:
            assert not err, f"{name}: JAX did not raise"
            cout = []
            for i, o in enumerate(out if isinstance(out, (list, tuple)) else [out]):
                ls, c = fmt_any("out", o)
                body += ls
                if c:
                    cout.append(str(i))
    finally:
        jax.config.update("jax_enable_x64", False)
    p = params
    if x64:
        p += " x64=1"
    if cin:
        p += " cin=" + ",".join(cin)
    if cout:
        p += " cout=" + ",".join(cout)
    JCASES.append("\n".join([f"case {name} {fn} {p.strip()}".rstrip()] + body + ["end"]))


jrng = np.random.RandomState(1515)


def rreal(shape, dtype=np.float32):
    return (np.round(jrng.uniform(-2, 2, shape) * 16) / 16).astype(dtype)


def rcplx(shape, dtype=np.complex64):
    return (rreal(shape, np.float64) + 1j * rreal(shape, np.float64)).astype(dtype)


def opt(v):
    return "none" if v is None else (",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v))


NORMS = [None, "backward", "ortho", "forward"]


def freq_cases():
    for n in (0, 1, 2, 5, 8, 9, -1):
        for d in (1.0, 0.1, 2.5):
            for fn in ("fftfreq", "rfftfreq"):
                f = getattr(jnp.fft, fn)
                jcase(f"{fn}_{n}_{d}", fn, [], lambda f=f, n=n, d=d: f(n, d), f"n={n} d={d!r} dtype=float32")
    jcase("fftfreq_f64", "fftfreq", [], lambda: jnp.fft.fftfreq(7, 0.3, dtype=jnp.float64),
          "n=7 d=0.3 dtype=float64", x64=True)
    jcase("rfftfreq_f64", "rfftfreq", [], lambda: jnp.fft.rfftfreq(10, 0.3, dtype=jnp.float64),
          "n=10 d=0.3 dtype=float64", x64=True)
    jcase("fftfreq_i32", "fftfreq", [], lambda: jnp.fft.fftfreq(6, 0.5, dtype=jnp.int32), "n=6 d=0.5 dtype=int32")
    for shape in ((5,), (4, 6), (3, 4, 5), ()):
        x = rreal(shape)
        for axes in (None, (0,), (-1,), (0, 2)):
            if shape == () and axes is not None:
                continue
            if axes and max(a if a >= 0 else a + len(shape) for a in axes) >= len(shape):
                continue
            for fn in ("fftshift", "ifftshift"):
                f = getattr(jnp.fft, fn)
                jcase(f"{fn}_{'x'.join(map(str, shape))}_{opt(axes)}", fn, [x],
                      lambda x, f=f, axes=axes: f(x, axes), f"axes={opt(axes)}")
    xc = rcplx((3, 4))
    jcase("fftshift_c64", "fftshift", [xc], lambda x: jnp.fft.fftshift(x), "axes=none")
    jcase("fftshift_bad_axis", "fftshift", [rreal((3, 4))], lambda x: jnp.fft.fftshift(x, (2,)), "axes=2",
          err="JX_ERR_SHAPE")


def transform_cases():
    # 1-D: fft ifft rfft irfft hfft ihfft
    ones = {"fft": jnp.fft.fft, "ifft": jnp.fft.ifft, "rfft": jnp.fft.rfft, "irfft": jnp.fft.irfft,
            "hfft": jnp.fft.hfft, "ihfft": jnp.fft.ihfft}
    real_in = {"rfft", "ihfft"}
    for fn, f in ones.items():
        for shape, n, axis in (((8,), None, -1), ((3, 5), None, -1), ((3, 5), 4, -1), ((3, 5), 7, 0),
                               ((4, 6), None, 0), ((1,), None, -1), ((2,), None, -1), ((13,), None, -1),
                               ((2, 12), 9, 1), ((2, 3, 10), None, 1)):
            x = rreal(shape) if fn in real_in else rcplx(shape)
            for norm in NORMS if shape == (3, 5) and n is None else [None]:
                name = f"{fn}_{'x'.join(map(str, shape))}_n{opt(n)}_a{axis}_{norm}"
                jcase(name, fn, [x], lambda x, f=f, n=n, axis=axis, norm=norm: f(x, n, axis, norm),
                      f"n={opt(n)} axis={axis} norm={opt(norm)}")
        # real input to the complex transforms, ints, float64
        if fn not in real_in:
            jcase(f"{fn}_real_in", fn, [rreal((6,))], lambda x, f=f: f(x), "n=none axis=-1 norm=none")
        jcase(f"{fn}_int_in", fn, [np.arange(6, dtype=np.int32)], lambda x, f=f: f(x), "n=none axis=-1 norm=none")
        x64 = rreal((2, 9), np.float64) if fn in real_in else rcplx((2, 9), np.complex128)
        jcase(f"{fn}_x64", fn, [x64], lambda x, f=f: f(x, None, -1, "ortho"), "n=none axis=-1 norm=ortho", x64=True)
        for norm in NORMS[1:]:
            jcase(f"{fn}_x64_{norm}", fn, [x64], lambda x, f=f, norm=norm: f(x, 5, 0, norm),
                  f"n=5 axis=0 norm={norm}", x64=True)
        # errors and 0-size
        jcase(f"{fn}_bad_axis", fn, [rcplx((3, 4))], lambda x, f=f: f(x, None, 2), "n=none axis=2 norm=none",
              err="JX_ERR_SHAPE")
        jcase(f"{fn}_n0", fn, [rcplx((3, 4))], lambda x, f=f: f(x, 0), "n=0 axis=-1 norm=none", err="JX_ERR_VALUE")
        jcase(f"{fn}_bad_norm", fn, [rcplx((3, 4))], lambda x, f=f: f(x, None, -1, "sideways"),
              "n=none axis=-1 norm=sideways", err="JX_ERR_VALUE")
        jcase(f"{fn}_empty_batch", fn, [rcplx((0, 4)) if fn not in real_in else rreal((0, 4))],
              lambda x, f=f: f(x), "n=none axis=-1 norm=none")
    # 2-D and N-D
    twos = {"fft2": jnp.fft.fft2, "ifft2": jnp.fft.ifft2, "rfft2": jnp.fft.rfft2, "irfft2": jnp.fft.irfft2}
    ns = {"fftn": jnp.fft.fftn, "ifftn": jnp.fft.ifftn, "rfftn": jnp.fft.rfftn, "irfftn": jnp.fft.irfftn}
    for fn, f in list(twos.items()) + list(ns.items()):
        rin = fn.startswith("rfft")
        two = fn in twos
        configs = [((4, 6), None, None), ((3, 4, 6), None, None), ((3, 4, 6), (3, 5), None),
                   ((3, 4, 6), (5, 8), (0, 2)), ((3, 4, 6), None, (-1, 0)), ((2, 3, 4), None, (1, 2))]
        if not two:
            configs += [((2, 3, 4, 5), None, None), ((2, 3, 4, 5), (3, 3, 4, 6), None), ((3, 4, 5), (4,), None),
                        ((3, 4, 5), None, (0,)), ((2, 3, 2, 3, 2), None, None), ((3, 4, 6), None, (0, 2, 1))]
        for shape, s_, axes in configs:
            x = rreal(shape) if rin else rcplx(shape)
            for norm in NORMS if (shape == (4, 6) and s_ is None) else [None]:
                name = f"{fn}_{'x'.join(map(str, shape))}_s{opt(s_)}_a{opt(axes)}_{norm}"
                if two:
                    call = (lambda x, f=f, s_=s_, axes=axes, norm=norm:
                            f(x, s_, axes if axes is not None else (-2, -1), norm))
                else:
                    call = lambda x, f=f, s_=s_, axes=axes, norm=norm: f(x, s_, axes, norm)
                jcase(name, fn, [x], call, f"s={opt(s_)} axes={opt(axes)} norm={opt(norm)}")
        jcase(f"{fn}_rep_axes", fn, [rcplx((3, 4))], lambda x, f=f: f(x, None, (0, 0)), "s=none axes=0,0 norm=none",
              err="JX_ERR_VALUE")
        jcase(f"{fn}_s_axes_len", fn, [rcplx((3, 4))], lambda x, f=f: f(x, (3,), (0, 1)),
              "s=3 axes=0,1 norm=none", err="JX_ERR_VALUE")
        jcase(f"{fn}_bad_axis", fn, [rcplx((3, 4))], lambda x, f=f: f(x, None, (0, 5)), "s=none axes=0,5 norm=none",
              err="JX_ERR_SHAPE")
    jcase("fft2_one_axis", "fft2", [rcplx((3, 4))], lambda x: jnp.fft.fft2(x, None, (0,)), "s=none axes=0 norm=none",
          err="JX_ERR_VALUE")
    # lax.fft
    for typ, shape, lens in (("FFT", (2, 8), (8,)), ("IFFT", (2, 3, 5), (3, 5)), ("RFFT", (2, 6), (6,)),
                             ("IRFFT", (2, 4), (6,)), ("RFFT", (2, 3, 4, 5), (3, 4, 5)),
                             ("IRFFT", (3, 4, 3), (3, 4, 5)), ("FFT", (2, 3, 4, 5), (3, 4, 5))):
        x = rreal(shape) if typ == "RFFT" else rcplx(shape)
        jcase(f"lax_{typ}_{'x'.join(map(str, shape))}", "lax_fft", [x],
              lambda x, typ=typ, lens=lens: lax.fft(x, typ, lens), f"type={typ} lens={opt(lens)}")
    jcase("lax_RFFT_bad_len", "lax_fft", [rreal((2, 6))], lambda x: lax.fft(x, "RFFT", (5,)), "type=RFFT lens=5",
          err="JX_ERR_SHAPE")


def grad_cases():
    """Float64 gradients of real losses through the transforms: real inputs (jax.grad) and
    complex inputs (jax.grad: JAX's conjugate convention), jvp, and vmap."""
    def loss(f, w1, w2):
        def g(x):
            y = f(x)
            cut = tuple(slice(d) for d in y.shape)
            if jnp.iscomplexobj(y):
                return jnp.sum(jnp.real(y) * w1[cut]) + jnp.sum(jnp.imag(y) * w2[cut])
            return jnp.sum(y * w1[cut])
        return g

    w1, w2 = rreal((3, 12), np.float64), rreal((3, 12), np.float64)
    fns = {
        "fft": lambda x: jnp.fft.fft(x, 8, -1, "ortho"),
        "ifft": lambda x: jnp.fft.ifft(x, 6),
        "rfft": lambda x: jnp.fft.rfft(x, 10),
        "irfft": lambda x: jnp.fft.irfft(x, 7),
        "hfft": lambda x: jnp.fft.hfft(x, 6, -1, "forward"),
        "ihfft": lambda x: jnp.fft.ihfft(x),
        "fft2": lambda x: jnp.fft.fft2(x, (2, 5)),
        "irfft2": lambda x: jnp.fft.irfft2(x, (3, 8)),
        "rfftn": lambda x: jnp.fft.rfftn(x, None, (0, 1), "ortho"),
        "irfft_even": lambda x: jnp.fft.irfft(x, 8),
        "rfft_odd": lambda x: jnp.fft.rfft(x, 7, -1, "forward"),
    }
    for name, f in fns.items():
        xr = rreal((3, 6), np.float64)
        jcase(f"grad_{name}_real", "grad", [xr, w1, w2], lambda x, a, b, f=f: jax.grad(loss(f, a, b))(x),
              f"f={name}", x64=True)
        if name not in ("rfft", "ihfft", "rfftn", "rfft_odd"):
            xc = rcplx((3, 6), np.complex128)
            jcase(f"grad_{name}_cplx", "grad", [xc, w1, w2], lambda x, a, b, f=f: jax.grad(loss(f, a, b))(x),
                  f"f={name}", x64=True)
            jcase(f"jvp_{name}", "jvp", [xc, rcplx((3, 6), np.complex128)],
                  lambda x, t, f=f: jax.jvp(f, (x,), (t,)), f"f={name}", x64=True)
        jcase(f"vmap_{name}", "vmap", [rreal((2, 3, 6), np.float64)], lambda x, f=f: jax.vmap(f, 1, 0)(x),
              f"f={name}", x64=True)


def main():
    golden_io.write(OUT, "# Generated by tools/golden_fft.py with numpy %s -- do not edit.\n"
                    "# Format: tests/support/golden.h. FFT routine on raw buffers; complex as "
                    "(re, im) pairs.\n\n" % np.__version__, engine_cases())
    freq_cases()
    transform_cases()
    grad_cases()
    golden_io.write(OUT_JAX, "# Generated by tools/golden_fft.py with jax %s, numpy %s -- do not "
                    "edit.\n# Format: tests/support/golden.h; complex arrays as real and "
                    "imaginary lines (params cin, cout).\n\n" % (jax.__version__, np.__version__),
                    JCASES)


if __name__ == "__main__":
    main()
