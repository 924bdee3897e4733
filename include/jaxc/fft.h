/* jaxc/fft.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * Discrete Fourier transforms: jax.numpy.fft. */
#ifndef JAXC_FFT_H
#define JAXC_FFT_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/fft.h>"
#endif

/* ------------------------------------------------------------ jax.numpy.fft */
/* Sample frequencies and shifts (src/lib/fft.c; jax/_src/numpy/fft.py). */

/* jnp.fft.fftfreq(n, d, dtype): [0, 1, ..., ceil(n/2)-1, -floor(n/2), ..., -1] / (d*n),
 * computed in dtype as JAX does (((i + n//2) % n - n//2) / (d*n)); a non-float dtype
 * computes in the default float and converts. 64-bit dtypes follow the x64 mode.
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
