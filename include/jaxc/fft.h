/* jaxc/fft.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * Discrete Fourier transforms: jax.numpy.fft. */
#ifndef JAXC_FFT_H
#define JAXC_FFT_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/fft.h>"
#endif

/* ------------------------------------------------------------ jax.numpy.fft */
/* The transforms (src/lib/fft.c, jax/_src/numpy/fft.py) are built on one primitive,
 * lax.fft (below), computed on the CPU by pocketfft (third_party/pocketfft, BSD-3, the
 * library NumPy uses): O(n log n) for every length, primes included (Bluestein), batches
 * and the lines of multi-dimensional transforms spread over the cpu backend's threads.
 * Inputs convert as in JAX: bool/int -> float32 (int64/uint64 -> float64), then to complex
 * (complex64, or complex128 for float64 with x64 on) for every transform but the real
 * ones (rfft*, ihfft: float input, complex output; irfft*, hfft: complex input, float
 * output). Differentiable (linear: JVP and transpose are JAX's, RFFT/IRFFT's
 * transposes included), batchable (vmap moves the batch to the front), jittable (one
 * routine step). On the cuda device the primitive runs through cuFFT (opened with dlopen
 * on first use; src/backend/cuda/cufft.c), one cached batched plan per shape.
 *
 * Parameters, as JAX's keywords: `n` sizes the transformed axis (the result's length
 * for irfft/hfft; the input is cropped or zero-padded), JX_FFT_N_NONE keeps a's (irfft
 * and hfft: 2*(m-1)); `s` (ns sizes, NULL: None) the same per axis; `axes` (naxes
 * axes, NULL: None -- all axes, or the last ns when s is given; for the 2-D functions
 * (-2, -1)); `norm` NULL (None), "backward" (scale the inverse by 1/N), "ortho"
 * (1/sqrt(N) both ways) or "forward" (1/N on the forward transform).
 * Errors: JX_ERR_VALUE for n or s entries <= 0, an unknown norm, repeated axes, s and
 * axes of different lengths, 2-D functions given other than 2 axes; JX_ERR_SHAPE for an
 * axis out of range (or more sizes than dims); JX_ERR_DTYPE for complex input to the
 * real forward transforms. Empty inputs give empty results (irfft of 0 bins: 0 points,
 * as JAX), except a real forward transform (rfft*, ihfft) over an axis of 0 points:
 * JX_ERR_VALUE, as NumPy (JAX fails to lower it). */

/* `n` left to the input (Python's None). */
#define JX_FFT_N_NONE (-1)

/* jnp.fft.fft / ifft: the complex DFT along `axis` (ifft scaled by 1/n). */
jx_array *jx_fft_fft(jx_array *a, int64_t n, int axis, const char *norm);
jx_array *jx_fft_ifft(jx_array *a, int64_t n, int axis, const char *norm);
/* jnp.fft.rfft: the DFT of real input, n//2+1 bins. irfft: its inverse, real output of
 * length n (imaginary parts of the zero and Nyquist bins ignored). */
jx_array *jx_fft_rfft(jx_array *a, int64_t n, int axis, const char *norm);
jx_array *jx_fft_irfft(jx_array *a, int64_t n, int axis, const char *norm);
/* jnp.fft.hfft: the real FFT of a Hermitian-symmetric signal given by its first half
 * (irfft(conj(a)) * n). ihfft: its inverse (conj(rfft(a)) / n). */
jx_array *jx_fft_hfft(jx_array *a, int64_t n, int axis, const char *norm);
jx_array *jx_fft_ihfft(jx_array *a, int64_t n, int axis, const char *norm);
/* jnp.fft.fft2 / ifft2 / rfft2 / irfft2: over two axes (NULL: the last two). */
jx_array *jx_fft_fft2(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm);
jx_array *jx_fft_ifft2(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm);
jx_array *jx_fft_rfft2(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm);
jx_array *jx_fft_irfft2(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm);
/* jnp.fft.fftn / ifftn / rfftn / irfftn: over any axes (more than 3 as JAX: repeated
 * transforms of at most 3 axes; rfftn's real axis is the last of axes). */
jx_array *jx_fft_fftn(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm);
jx_array *jx_fft_ifftn(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm);
jx_array *jx_fft_rfftn(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm);
jx_array *jx_fft_irfftn(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm);

/* lax.FftType. */
typedef enum jx_fft_type { JX_FFT_FFT = 0, JX_FFT_IFFT = 1, JX_FFT_RFFT = 2, JX_FFT_IRFFT = 3 } jx_fft_type;
/* lax.fft(x, fft_type, fft_lengths): the transform over the trailing nlens (1 to 3)
 * axes, whose sizes must equal fft_lengths (IRFFT: the last is fft_lengths[-1]//2+1);
 * x converts first (RFFT: to a float, else to complex). nlens == 0 returns the
 * converted x. IFFT/IRFFT are scaled by 1/prod(fft_lengths). JX_ERR_SHAPE for minor
 * dims that do not match, JX_ERR_DTYPE for complex RFFT input, JX_ERR_VALUE for more
 * than 3 lengths or an unknown type. */
jx_array *jx_lax_fft(jx_array *x, jx_fft_type fft_type, int nlens, const int64_t *fft_lengths);

/* Sample frequencies and shifts. */

/* jnp.fft.fftfreq(n, d, dtype): [0, 1, ..., ceil(n/2)-1, -floor(n/2), ..., -1] / (d*n),
 * computed in dtype as JAX does (((i + n//2) % n - n//2) / (d*n)); a non-float dtype
 * computes in float32 (float64 for int64: to_inexact_dtype) and converts. 64-bit dtypes follow the x64 mode.
 * n <= 0 gives an empty array (as JAX's arange). JX_ERR_DTYPE for an invalid dtype. */
jx_array *jx_fft_fftfreq(int64_t n, double d, jx_dtype dtype);
/* jnp.fft.rfftfreq(n, d, dtype): [0, 1, ..., n//2] / (d*n) (n//2 + 1 values), in
 * dtype. Errors as jx_fft_fftfreq. */
jx_array *jx_fft_rfftfreq(int64_t n, double d, jx_dtype dtype);
/* jnp.fft.fftshift(x, axes): rolls each of the axes by shape[axis] // 2 (the zero
 * frequency to the center); axes == NULL shifts every axis. JX_ERR_SHAPE for an axis
 * out of range. */
jx_array *jx_fft_fftshift(jx_array *x, int naxes, const int *axes);
/* jnp.fft.ifftshift(x, axes): the inverse, rolling by -(shape[axis] // 2). */
jx_array *jx_fft_ifftshift(jx_array *x, int naxes, const int *axes);

#endif
