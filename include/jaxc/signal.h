/* jaxc/signal.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * Convolutions of arrays: jnp.convolve / jnp.correlate and jax.scipy.signal. */
#ifndef JAXC_SIGNAL_H
#define JAXC_SIGNAL_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/signal.h>"
#endif

/* ------------------------------------------------------------ signal */
/* src/lib/signal.c, composed as jax/_src/numpy/lax_numpy.py (_conv) and
 * jax/_src/scipy/signal.py compose them: the direct method is one lax.conv_general_dilated
 * (jx_lax_conv_general_dilated: the kernel flipped, batch and feature dims of size 1,
 * explicit padding per mode), the FFT method rfftn/irfftn (fftn/ifftn for complex input)
 * over the full extent s1 + s2 - 1 of each axis, then the mode's centred slice.
 * Inputs promote together as JAX's promote_dtypes_inexact (bool/int -> float32, int64
 * -> float64 with x64 on; complex kept); the result has that dtype. Differentiable,
 * batchable and jittable through the primitives (the convolution's and the FFT's
 * rules). JAX's `precision` keyword is not taken: products follow the process-wide
 * jx_config_default_matmul_precision (full float32 on the cpu backend).
 *
 * `mode` is "full" (every partial overlap: s1 + s2 - 1 per axis), "same" (the size of the
 * first input, centred on the full result) or "valid" (full overlaps only: |s1 - s2| + 1);
 * NULL is JAX's default for the function. Errors: JX_ERR_VALUE for NULL arrays, an
 * unknown mode or method string; JX_ERR_SHAPE where JAX raises ValueError about shapes
 * (wrong ndim, empty inputs, inputs not ordered in size in every dimension where the
 * function needs it, mapped axes of different sizes). */

/* jnp.convolve(a, v, mode='full'): sum_j a[k - j] v[j] of 1-d a and v (the shorter is the
 * kernel: the arguments swap when len(v) > len(a), as NumPy's). "same" has
 * max(len(a), len(v)) points. */
jx_array *jx_convolve(jx_array *a, jx_array *v, const char *mode);
/* jnp.correlate(a, v, mode='valid'): sum_n a[n + k] conj(v[n]) of 1-d a and v (the
 * kernel conjugated for complex input; when len(v) > len(a) the arguments swap and the
 * result is reversed, as NumPy's). */
jx_array *jx_correlate(jx_array *a, jx_array *v, const char *mode);

/* jax.scipy.signal.convolve(in1, in2, mode='full', method='auto'): the n-d convolution
 * of two arrays of equal ndim. method "auto" or "direct" (NULL: "auto", which is direct
 * in JAX too): lax.conv_general_dilated, one input at least as large as the other in
 * every dimension (swapped when in1 is the smaller; "same" keeps in1's shape);
 * "fft": jx_scipy_signal_fftconvolve. Zero-size inputs are JX_ERR_SHAPE (direct). */
jx_array *jx_scipy_signal_convolve(jx_array *in1, jx_array *in2, const char *mode, const char *method);
/* jax.scipy.signal.correlate(in1, in2, mode='full', method='auto'): convolve(in1,
 * flip(conj(in2))). */
jx_array *jx_scipy_signal_correlate(jx_array *in1, jx_array *in2, const char *mode, const char *method);
/* jax.scipy.signal.convolve2d / correlate2d(in1, in2, mode='full'): 2-d inputs only
 * (JX_ERR_SHAPE otherwise), the direct method. JAX supports only boundary='fill' with
 * fillvalue=0 (NotImplementedError otherwise), so those parameters are not taken.
 * correlate2d follows JAX's case analysis (flips and conjugations per mode and order of
 * sizes; its "full" result for a larger in2 is conjugated, as JAX's). */
jx_array *jx_scipy_signal_convolve2d(jx_array *in1, jx_array *in2, const char *mode);
jx_array *jx_scipy_signal_correlate2d(jx_array *in1, jx_array *in2, const char *mode);
/* jax.scipy.signal.fftconvolve(in1, in2, mode='full', axes=None): the convolution by
 * FFTs over (naxes, axes) (NULL: every axis); the other axes are mapped (vmapped in
 * JAX) and must have equal sizes. "valid" swaps the inputs when in1 is the smaller
 * (JX_ERR_SHAPE when neither is at least as large in every transformed axis); where
 * every transformed axis has size 1 in one input the result is the product in1 * in2. */
jx_array *jx_scipy_signal_fftconvolve(jx_array *in1, jx_array *in2, const char *mode, int naxes,
                                      const int *axes);

#endif
