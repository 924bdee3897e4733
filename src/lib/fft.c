/* fft.c -- jax.numpy.fft (jax/_src/numpy/fft.py): sample frequencies and shifts. The
 * transforms are built on the fft primitive (trace/fft.c). */
#include <string.h>

#include "lib/numpy/np.h"

/* ------------------------------------------------------------ frequencies */

/* The dtype frequencies are computed in (JAX: finfo(to_inexact_dtype(dtype))). */
static bool freq_dtype(const char *fn, jx_dtype *dtype, jx_dtype *work) {
  if (!dtype_is_valid(*dtype)) {
    error_set(JX_ERR_DTYPE, "%s: invalid dtype %d", fn, (int)*dtype);
    return false;
  }
  *dtype = dtype_canonicalize(*dtype);
  *work = dtype_is_floating(*dtype) ? *dtype : dtype_default_float();
  return true;
}

jx_array *jx_fft_fftfreq(int64_t n, double d, jx_dtype dtype) {
  jx_dtype work;
  if (!freq_dtype("jx_fft_fftfreq", &dtype, &work)) return NULL;
  if (n < 0) n = 0; /* JAX: arange(n) is empty */
  jx_scope_begin();
  jx_array *i = jx_arange(0, (double)n, 1, work);
  jx_array *half = np_constant((double)(n / 2), work);
  jx_array *k = jx_subtract(jx_remainder(jx_add(i, half), np_constant((double)n, work)), half);
  jx_array *r = jx_divide(k, np_constant(d * (double)n, work));
  return np_scope_return(r ? np_convert(r, dtype, false) : NULL);
}

jx_array *jx_fft_rfftfreq(int64_t n, double d, jx_dtype dtype) {
  jx_dtype work;
  if (!freq_dtype("jx_fft_rfftfreq", &dtype, &work)) return NULL;
  jx_scope_begin();
  jx_array *k = jx_arange(0, n < 0 ? 0 : (double)(n / 2 + 1), 1, work);
  jx_array *r = jx_divide(k, np_constant(d * (double)n, work));
  return np_scope_return(r ? np_convert(r, dtype, false) : NULL);
}

/* ------------------------------------------------------------ shifts */

static jx_array *shift_impl(const char *fn, jx_array *x, int naxes, const int *axes, int sign) {
  if (np_null_arg(fn, x, "x") || (naxes > 0 && np_null_arg(fn, axes, "axes"))) return NULL;
  int all[JX_MAX_NDIM];
  if (!axes) {
    naxes = x->ndim;
    for (int d = 0; d < naxes; d++) all[d] = d;
    axes = all;
  }
  if (naxes < 0 || naxes > JX_MAX_NDIM) {
    error_set(JX_ERR_VALUE, "%s: %d axes (expected 0 to %d)", fn, naxes, JX_MAX_NDIM);
    return NULL;
  }
  int ax[JX_MAX_NDIM];
  for (int k = 0; k < naxes; k++) {
    ax[k] = axes[k];
    if (!array_normalize_axis(fn, &ax[k], x->ndim)) return NULL;
  }
  jx_scope_begin();
  jx_array *r = prim_reshape(x, x->ndim, x->shape); /* a new reference (no axes: x) */
  for (int k = 0; k < naxes && r; k++) r = jx_roll(r, sign * (x->shape[ax[k]] / 2), ax[k]);
  return np_scope_return(r);
}

jx_array *jx_fft_fftshift(jx_array *x, int naxes, const int *axes) {
  return shift_impl("jx_fft_fftshift", x, naxes, axes, 1);
}

jx_array *jx_fft_ifftshift(jx_array *x, int naxes, const int *axes) {
  return shift_impl("jx_fft_ifftshift", x, naxes, axes, -1);
}
