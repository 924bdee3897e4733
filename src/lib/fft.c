/* fft.c -- jax.numpy.fft and lax.fft (jax/_src/numpy/fft.py, jax/_src/lax/fft.py):
 * sample frequencies, shifts, and the transforms on the fft primitive (trace/fft.c). */
#include <math.h>
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
  *work = dtype_real_part(dtype_to_inexact(*dtype)); /* finfo: complex64 -> float32 */
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

/* ------------------------------------------------------------ transforms */

/* JAX's norm strings; NULL is Python's None (no scaling at all, as "backward"). */
enum { NORM_NONE, NORM_BACKWARD, NORM_ORTHO, NORM_FORWARD };

static bool parse_norm(const char *fn, const char *norm, int *out) {
  if (!norm) *out = NORM_NONE;
  else if (!strcmp(norm, "backward")) *out = NORM_BACKWARD;
  else if (!strcmp(norm, "ortho")) *out = NORM_ORTHO;
  else if (!strcmp(norm, "forward")) *out = NORM_FORWARD;
  else {
    error_set(JX_ERR_VALUE, "%s: invalid norm value %s; should be \"backward\", \"ortho\" or \"forward\"", fn, norm);
    return false;
  }
  return true;
}

/* jnp.moveaxis(x, src, dst) for n axes (NumPy's order: the others keep their order,
 * then each source goes to its destination, destinations ascending). */
static jx_array *move_axes(jx_array *x, int n, const int *src, const int *dst) {
  if (!x) return NULL;
  int nd = x->ndim, order[JX_MAX_NDIM], k = 0, idx[JX_MAX_NDIM];
  bool moved[JX_MAX_NDIM] = {false};
  for (int i = 0; i < n; i++) moved[src[i]] = true, idx[i] = i;
  for (int d = 0; d < nd; d++)
    if (!moved[d]) order[k++] = d;
  for (int i = 1; i < n; i++) /* by destination, ascending */
    for (int j = i; j > 0 && dst[idx[j]] < dst[idx[j - 1]]; j--) {
      int t = idx[j];
      idx[j] = idx[j - 1], idx[j - 1] = t;
    }
  for (int i = 0; i < n; i++) {
    int at = dst[idx[i]];
    memmove(order + at + 1, order + at, (size_t)(k - at) * sizeof *order);
    order[at] = src[idx[i]], k++;
  }
  return jx_transpose(x, order);
}

/* lax.fft on the trailing ns axes; more than 3 as JAX's _fft_core_nd (3-D or 2-D
 * transforms of the minor axes, the rest by recursion with the axes moved). */
static jx_array *fft_nd(jx_array *x, unsigned type, int ns, const int64_t *s) {
  if (!x || ns == 0) return x;
  if (ns <= FFT_MAX_RANK) return prim_fft(x, type, ns, s);
  int n = ns == 4 ? 2 : 3, nd = x->ndim, src[JX_MAX_NDIM], dst[JX_MAX_NDIM], m = ns - n;
  for (int i = 0; i < m; i++) src[i] = nd - ns + i, dst[i] = nd - ns + n + i;
  if (type == FFT_TYPE_RFFT || type == FFT_TYPE_FFT) {
    x = move_axes(prim_fft(x, type, n, s + m), m, src, dst);
    return move_axes(fft_nd(x, FFT_TYPE_FFT, m, s), m, dst, src);
  }
  x = move_axes(fft_nd(move_axes(x, m, src, dst), FFT_TYPE_IFFT, m, s), m, dst, src);
  return x ? prim_fft(x, type, n, s + m) : NULL;
}

/* jnp.fft's _fft_core: a over `axes` (NULL: the last ns, or all) with sizes s (NULL:
 * a's; IRFFT: 2*(m-1) on the last), scaled for norm. `inverse`: the function's name
 * starts with "i" (JAX picks the norm's direction by the name). */
static jx_array *fft_core(const char *fn, unsigned type, bool inverse, jx_array *a, int ns, const int64_t *s,
                          int naxes, const int *axes, const char *norm) {
  int nrm;
  if (np_null_arg(fn, a, "a") || (ns > 0 && np_null_arg(fn, s, "s")) || (naxes > 0 && np_null_arg(fn, axes, "axes")) ||
      !parse_norm(fn, norm, &nrm))
    return NULL;
  if (s && (ns < 0 || ns > JX_MAX_NDIM)) {
    error_set(JX_ERR_VALUE, "%s: %d sizes in s (expected 0 to %d)", fn, ns, JX_MAX_NDIM);
    return NULL;
  }
  for (int i = 0; s && i < ns; i++)
    if (s[i] <= 0) {
      error_set(JX_ERR_VALUE, "%s: shape should be positive (s[%d] = %lld)", fn, i, (long long)s[i]);
      return NULL;
    }
  if (s && axes && ns != naxes) {
    error_set(JX_ERR_VALUE, "%s: shape and axes have different lengths (%d and %d)", fn, ns, naxes);
    return NULL;
  }
  int nd = a->ndim, ax[JX_MAX_NDIM], k;
  if (axes) {
    if (naxes < 0 || naxes > nd) {
      error_set(JX_ERR_SHAPE, "%s: %d axes for an array of rank %d", fn, naxes, nd);
      return NULL;
    }
    k = naxes;
    for (int i = 0; i < k; i++) {
      ax[i] = axes[i];
      if (!array_normalize_axis(fn, &ax[i], nd)) return NULL;
    }
  } else {
    k = s ? ns : nd;
    if (k > nd) {
      error_set(JX_ERR_SHAPE, "%s: %d sizes in s for an array of rank %d", fn, k, nd);
      return NULL;
    }
    for (int i = 0; i < k; i++) ax[i] = nd - k + i;
  }
  for (int i = 0; i < k; i++)
    for (int j = 0; j < i; j++)
      if (ax[i] == ax[j]) {
        error_set(JX_ERR_VALUE, "%s does not support repeated axes (axis %d)", fn, ax[i]);
        return NULL;
      }
  if (type == FFT_TYPE_RFFT && dtype_is_complex(a->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: only real valued inputs are supported (got %s)", fn, jx_dtype_name(a->dtype));
    return NULL;
  }
  jx_scope_begin();
  jx_array *x = np_to_inexact(a); /* lax.fft's conversion: RFFT a float, others complex */
  if (x && type != FFT_TYPE_RFFT) x = np_convert(x, dtype_canonicalize(dtype_to_complex(x->dtype)), x->weak);
  int end[JX_MAX_NDIM];
  for (int i = 0; i < k; i++) end[i] = nd - k + i;
  if (axes) x = move_axes(x, k, ax, end); /* XLA transforms the innermost axes */
  int64_t len[JX_MAX_NDIM];
  if (x && s) {
    int64_t want[JX_MAX_NDIM], start[JX_MAX_NDIM] = {0}, pad[2 * JX_MAX_NDIM] = {0};
    memcpy(want, x->shape, sizeof want);
    for (int i = 0; i < k; i++) want[end[i]] = len[i] = s[i];
    if (type == FFT_TYPE_IRFFT) want[nd - 1] = want[nd - 1] / 2 + 1;
    int64_t stop[JX_MAX_NDIM];
    bool crop = false, grow = false;
    for (int d = 0; d < nd; d++) {
      stop[d] = want[d] < x->shape[d] ? want[d] : x->shape[d];
      crop |= stop[d] != x->shape[d];
      pad[2 * d + 1] = want[d] - stop[d];
      grow |= pad[2 * d + 1] != 0;
    }
    if (crop) x = jx_slice(x, nd, start, stop, NULL);
    if (grow) x = jx_pad(x, pad, 0.0);
  } else if (x) {
    for (int i = 0; i < k; i++) len[i] = x->shape[end[i]];
    if (type == FFT_TYPE_IRFFT && k > 0 && len[k - 1] == 0) {
      /* no bins: an empty output, as JAX gives (NumPy rejects n = -2); the transform of
       * length 0 takes its one bin (0//2+1), a zero */
      int64_t pad[2 * JX_MAX_NDIM] = {0};
      pad[2 * (nd - 1) + 1] = 1;
      x = jx_pad(x, pad, 0.0);
    } else if (type == FFT_TYPE_IRFFT && k > 0) {
      len[k - 1] = 2 * (len[k - 1] - 1);
    }
  }
  if (x && type == FFT_TYPE_RFFT && k > 0 && len[k - 1] == 0) {
    error_set(JX_ERR_VALUE, "%s: invalid number of FFT data points (0) along axis %d", fn, axes ? ax[k - 1] : nd - 1);
    x = NULL;
  }
  x = fft_nd(x, type, k, len);
  if (x && (nrm == NORM_ORTHO || nrm == NORM_FORWARD)) {
    double total = 1;
    for (int i = 0; i < k; i++) total *= (double)len[i];
    double f = nrm == NORM_ORTHO ? sqrt(total) : total;
    if (!inverse) f = 1.0 / f;
    x = jx_multiply(x, np_constant(f, dtype_real_part(x->dtype)));
  }
  if (axes) x = move_axes(x, k, end, ax);
  return np_scope_return(x);
}

/* One axis (`n` sizes it; JX_FFT_N_NONE keeps a's). */
static jx_array *fft_1d(const char *fn, unsigned type, bool inverse, jx_array *a, int64_t n, int axis,
                        const char *norm) {
  if (n != JX_FFT_N_NONE && n <= 0) {
    error_set(JX_ERR_VALUE, "%s: invalid number of FFT data points (n = %lld); shape should be positive", fn,
              (long long)n);
    return NULL;
  }
  return fft_core(fn, type, inverse, a, n == JX_FFT_N_NONE ? 0 : 1, n == JX_FFT_N_NONE ? NULL : &n, 1, &axis, norm);
}

jx_array *jx_fft_fft(jx_array *a, int64_t n, int axis, const char *norm) {
  return fft_1d("jx_fft_fft", FFT_TYPE_FFT, false, a, n, axis, norm);
}
jx_array *jx_fft_ifft(jx_array *a, int64_t n, int axis, const char *norm) {
  return fft_1d("jx_fft_ifft", FFT_TYPE_IFFT, true, a, n, axis, norm);
}
jx_array *jx_fft_rfft(jx_array *a, int64_t n, int axis, const char *norm) {
  return fft_1d("jx_fft_rfft", FFT_TYPE_RFFT, false, a, n, axis, norm);
}
jx_array *jx_fft_irfft(jx_array *a, int64_t n, int axis, const char *norm) {
  return fft_1d("jx_fft_irfft", FFT_TYPE_IRFFT, true, a, n, axis, norm);
}

/* The size of a along axis (JX_ERR_SHAPE when out of range); -1 on failure. */
static int64_t axis_size(const char *fn, jx_array *a, int axis) {
  if (np_null_arg(fn, a, "a") || !array_normalize_axis(fn, &axis, a->ndim)) return -1;
  return a->shape[axis];
}

jx_array *jx_fft_hfft(jx_array *a, int64_t n, int axis, const char *norm) {
  const char *fn = "jx_fft_hfft";
  int64_t m = axis_size(fn, a, axis);
  if (m < 0) return NULL;
  int64_t nn = n == JX_FFT_N_NONE ? (m - 1) * 2 : n;
  jx_scope_begin();
  jx_array *r = fft_1d(fn, FFT_TYPE_IRFFT, false, jx_conj(a), n, axis, norm);
  return np_scope_return(r ? jx_multiply(r, jx_scalar_int(nn)) : NULL);
}

jx_array *jx_fft_ihfft(jx_array *a, int64_t n, int axis, const char *norm) {
  const char *fn = "jx_fft_ihfft";
  int64_t m = axis_size(fn, a, axis);
  if (m < 0) return NULL;
  int64_t nn = n == JX_FFT_N_NONE ? m : n;
  jx_scope_begin();
  jx_array *r = fft_1d(fn, FFT_TYPE_RFFT, true, a, n, axis, norm);
  return np_scope_return(r ? jx_multiply(jx_conj(r), jx_scalar(1.0 / (double)nn)) : NULL);
}

/* The 2-D transforms: axes NULL means (-2, -1); exactly two axes. */
static jx_array *fft_2d(const char *fn, unsigned type, bool inverse, jx_array *a, int ns, const int64_t *s,
                        int naxes, const int *axes, const char *norm) {
  static const int last2[2] = {-2, -1};
  if (!axes) naxes = 2, axes = last2;
  if (naxes != 2) {
    error_set(JX_ERR_VALUE, "%s only supports 2 axes (got %d)", fn, naxes);
    return NULL;
  }
  return fft_core(fn, type, inverse, a, ns, s, naxes, axes, norm);
}

jx_array *jx_fft_fft2(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm) {
  return fft_2d("jx_fft_fft2", FFT_TYPE_FFT, false, a, ns, s, naxes, axes, norm);
}
jx_array *jx_fft_ifft2(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm) {
  return fft_2d("jx_fft_ifft2", FFT_TYPE_IFFT, true, a, ns, s, naxes, axes, norm);
}
jx_array *jx_fft_rfft2(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm) {
  return fft_2d("jx_fft_rfft2", FFT_TYPE_RFFT, false, a, ns, s, naxes, axes, norm);
}
jx_array *jx_fft_irfft2(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm) {
  return fft_2d("jx_fft_irfft2", FFT_TYPE_IRFFT, true, a, ns, s, naxes, axes, norm);
}

jx_array *jx_fft_fftn(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm) {
  return fft_core("jx_fft_fftn", FFT_TYPE_FFT, false, a, ns, s, naxes, axes, norm);
}
jx_array *jx_fft_ifftn(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm) {
  return fft_core("jx_fft_ifftn", FFT_TYPE_IFFT, true, a, ns, s, naxes, axes, norm);
}
jx_array *jx_fft_rfftn(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm) {
  return fft_core("jx_fft_rfftn", FFT_TYPE_RFFT, false, a, ns, s, naxes, axes, norm);
}
jx_array *jx_fft_irfftn(jx_array *a, int ns, const int64_t *s, int naxes, const int *axes, const char *norm) {
  return fft_core("jx_fft_irfftn", FFT_TYPE_IRFFT, true, a, ns, s, naxes, axes, norm);
}

/* lax.fft(x, fft_type, fft_lengths): x converted as JAX's wrapper does (RFFT: to a
 * float, others: to complex); no lengths returns the converted x. */
jx_array *jx_lax_fft(jx_array *x, jx_fft_type fft_type, int nlens, const int64_t *fft_lengths) {
  const char *fn = "jx_lax_fft";
  if (np_null_arg(fn, x, "x") || (nlens > 0 && np_null_arg(fn, fft_lengths, "fft_lengths"))) return NULL;
  if ((unsigned)fft_type > FFT_TYPE_IRFFT) {
    error_set(JX_ERR_VALUE, "%s: unknown fft_type %d", fn, (int)fft_type);
    return NULL;
  }
  if (fft_type == JX_FFT_RFFT && dtype_is_complex(x->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: only real valued inputs supported for rfft (got %s)", fn, jx_dtype_name(x->dtype));
    return NULL;
  }
  jx_scope_begin();
  jx_array *y = np_to_inexact(x);
  if (y && fft_type != JX_FFT_RFFT) y = np_convert(y, dtype_canonicalize(dtype_to_complex(y->dtype)), y->weak);
  if (y && nlens > 0) y = prim_fft(y, (unsigned)fft_type, nlens, fft_lengths);
  return np_scope_return(y);
}
