/* signal.c -- jnp.convolve / jnp.correlate (jax/_src/numpy/lax_numpy.py, _conv) and
 * jax.scipy.signal's convolve, correlate, convolve2d, correlate2d and fftconvolve
 * (jax/_src/scipy/signal.py), composed as JAX composes them: the direct method is one
 * lax.conv_general_dilated of the inputs as (1, 1, spatial...) arrays with the kernel
 * flipped; the FFT method multiplies rfftn's (fftn's) and takes the centred slice. */
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

enum { MODE_FULL, MODE_SAME, MODE_VALID };

/* mode string (NULL: dflt) -> MODE_*; JX_ERR_VALUE naming fn otherwise. */
static bool parse_mode(const char *fn, const char *mode, int dflt, int *m) {
  if (!mode) return *m = dflt, true;
  if (!strcmp(mode, "full")) return *m = MODE_FULL, true;
  if (!strcmp(mode, "same")) return *m = MODE_SAME, true;
  if (!strcmp(mode, "valid")) return *m = MODE_VALID, true;
  error_set(JX_ERR_VALUE, "%s: mode must be one of ['full', 'same', 'valid'], got '%s'", fn, mode);
  return false;
}

/* promote_dtypes_inexact(x, y) into out[0], out[1] (new references). */
static bool promote_inexact(const char *fn, jx_array *x, jx_array *y, jx_array **out) {
  jx_array *p[2];
  if (!np_promote(fn, 2, (jx_array *[]){x, y}, p)) return false;
  out[0] = np_to_inexact(p[0]), out[1] = np_to_inexact(p[1]);
  jx_free(p[0]), jx_free(p[1]);
  return out[0] && out[1];
}

/* lax.conv_general_dilated(x[None, None], k[None, None], 1s, pads)[0, 0]: a correlation
 * of x with k (equal ndim, equal dtype). */
static jx_array *conv_nd(jx_array *x, jx_array *k, const int64_t *pads) {
  int n = x->ndim;
  int64_t sx[JX_MAX_NDIM + 2] = {1, 1}, sk[JX_MAX_NDIM + 2] = {1, 1};
  for (int i = 0; i < n; i++) sx[i + 2] = x->shape[i], sk[i + 2] = k->shape[i];
  jx_array *r = jx_lax_conv_general_dilated(jx_reshape(x, n + 2, sx), jx_reshape(k, n + 2, sk), n, NULL,
                                            JX_PADDING_EXPLICIT, pads, NULL);
  return r ? jx_reshape(r, n, r->shape + 2) : NULL;
}

/* jnp's _conv: op 'convolve' or 'correlate' of 1-d x and y. */
static jx_array *np_conv(const char *fn, jx_array *a, jx_array *v, const char *mode, int dflt, bool correlate) {
  if (np_null_arg(fn, a, "a") || np_null_arg(fn, v, "v")) return NULL;
  if (a->ndim != 1 || v->ndim != 1) {
    error_set(JX_ERR_SHAPE, "%s: only 1-dimensional inputs are supported, got a.ndim=%d and v.ndim=%d", fn,
              a->ndim, v->ndim);
    return NULL;
  }
  jx_scope_begin();
  jx_array *p[2];
  if (!promote_inexact(fn, a, v, p)) return np_scope_return(NULL);
  jx_array *x = p[0], *y = p[1];
  if (x->shape[0] == 0 || y->shape[0] == 0) {
    error_set(JX_ERR_SHAPE, "%s: inputs cannot be empty, got shapes (%lld,) and (%lld,)", fn,
              (long long)x->shape[0], (long long)y->shape[0]);
    return np_scope_return(NULL);
  }
  bool reverse = false;
  if (correlate) {
    y = jx_conj(y);
    if (x->shape[0] < y->shape[0]) {
      jx_array *t = x;
      x = y, y = t, reverse = true;
    }
  } else {
    if (x->shape[0] < y->shape[0]) {
      jx_array *t = x;
      x = y, y = t;
    }
    y = jx_flip(y, 0, NULL);
  }
  int m;
  if (!parse_mode(fn, mode, dflt, &m)) return np_scope_return(NULL);
  int64_t k = y->shape[0], pads[2] = {0, 0};
  if (m == MODE_SAME) pads[0] = k / 2, pads[1] = k - k / 2 - 1;
  if (m == MODE_FULL) pads[0] = pads[1] = k - 1;
  jx_array *r = conv_nd(x, y, pads);
  if (r && reverse) r = jx_flip(r, 0, NULL);
  return np_scope_return(r);
}

jx_array *jx_convolve(jx_array *a, jx_array *v, const char *mode) {
  return np_conv("jx_convolve", a, v, mode, MODE_FULL, false);
}
jx_array *jx_correlate(jx_array *a, jx_array *v, const char *mode) {
  return np_conv("jx_correlate", a, v, mode, MODE_VALID, true);
}

/* ------------------------------------------------------- jax.scipy.signal */

/* signal.py's _convolve_nd: the direct n-d convolution (already checked: non-NULL). */
static jx_array *convolve_nd(const char *fn, jx_array *in1, jx_array *in2, int m) {
  if (!in1 || !in2) return NULL; /* a failed flip or conj before: its error is set */
  if (in1->ndim != in2->ndim) {
    error_set(JX_ERR_SHAPE, "%s: in1 and in2 must have the same number of dimensions, got %d and %d", fn,
              in1->ndim, in2->ndim);
    return NULL;
  }
  char b1[64], b2[64];
  if (jx_size(in1) == 0 || jx_size(in2) == 0) {
    error_set(JX_ERR_SHAPE, "%s: zero-size arrays not supported in convolutions, got shapes %s and %s", fn,
              np_shape_str(b1, in1), np_shape_str(b2, in2));
    return NULL;
  }
  jx_scope_begin();
  jx_array *p[2];
  if (!promote_inexact(fn, in1, in2, p)) return np_scope_return(NULL);
  jx_array *x = p[0], *y = p[1];
  int n = x->ndim;
  bool no_swap = true, swap = true;
  for (int i = 0; i < n; i++) {
    no_swap &= x->shape[i] >= y->shape[i];
    swap &= x->shape[i] <= y->shape[i];
  }
  if (!no_swap && !swap) {
    error_set(JX_ERR_SHAPE, "%s: one input must be smaller than the other in every dimension, got shapes %s and %s",
              fn, np_shape_str(b1, x), np_shape_str(b2, y));
    return np_scope_return(NULL);
  }
  int64_t shape_o[JX_MAX_NDIM];
  for (int i = 0; i < n; i++) shape_o[i] = y->shape[i];
  if (swap) {
    jx_array *t = x;
    x = y, y = t;
  }
  int64_t pads[2 * JX_MAX_NDIM];
  for (int i = 0; i < n; i++) {
    int64_t s = y->shape[i], so = shape_o[i];
    pads[2 * i] = m == MODE_VALID ? 0 : m == MODE_FULL ? s - 1 : s - 1 - (so - 1) / 2;
    pads[2 * i + 1] = m == MODE_VALID ? 0 : m == MODE_FULL ? s - 1 : s - so + (so - 1) / 2;
  }
  return np_scope_return(conv_nd(x, jx_flip(y, 0, NULL), pads));
}

/* The FFT method over the axes marked in `on` (signal.py's _fftconvolve_unbatched, the
 * other axes mapped): x, y promoted, of equal ndim and equal sizes off the axes. */
static jx_array *fftconvolve(const char *fn, jx_array *x, jx_array *y, int m, const bool *on) {
  int n = x->ndim, axes[JX_MAX_NDIM], na = 0;
  int64_t full[JX_MAX_NDIM];
  for (int i = 0; i < n; i++)
    if (on[i]) axes[na] = i, full[na++] = x->shape[i] + y->shape[i] - 1;
  if (m == MODE_VALID) {
    bool no_swap = true, swap = true;
    for (int i = 0; i < n; i++)
      if (on[i]) no_swap &= x->shape[i] >= y->shape[i], swap &= x->shape[i] <= y->shape[i];
    if (!no_swap && !swap) {
      char b1[64], b2[64];
      error_set(JX_ERR_SHAPE, "%s: for 'valid' mode, one input must be at least as large as the other in every "
                "dimension, got shapes %s and %s", fn, np_shape_str(b1, x), np_shape_str(b2, y));
      return NULL;
    }
    if (swap) {
      jx_array *t = x;
      x = y, y = t;
    }
  }
  bool ones = true;
  for (int i = 0; i < n; i++)
    if (on[i]) ones &= x->shape[i] == 1 || y->shape[i] == 1;
  jx_array *conv;
  if (ones) {
    conv = jx_multiply(x, y);
  } else if (dtype_is_complex(x->dtype)) {
    jx_array *s1 = jx_fft_fftn(x, na, full, na, axes, NULL), *s2 = jx_fft_fftn(y, na, full, na, axes, NULL);
    conv = jx_fft_ifftn(jx_multiply(s1, s2), na, full, na, axes, NULL);
  } else {
    jx_array *s1 = jx_fft_rfftn(x, na, full, na, axes, NULL), *s2 = jx_fft_rfftn(y, na, full, na, axes, NULL);
    conv = jx_fft_irfftn(jx_multiply(s1, s2), na, full, na, axes, NULL);
  }
  if (!conv) return NULL;
  /* lax.dynamic_slice at (full - out) // 2 with the mode's extent */
  int64_t start[JX_MAX_NDIM], stop[JX_MAX_NDIM];
  for (int i = 0, k = 0; i < n; i++) {
    start[i] = 0, stop[i] = conv->shape[i];
    if (!on[i]) continue;
    int64_t f = full[k++];
    int64_t o = m == MODE_FULL ? f : m == MODE_SAME ? x->shape[i] : x->shape[i] - y->shape[i] + 1;
    start[i] = (f - o) / 2, stop[i] = start[i] + o;
  }
  return jx_slice(conv, n, start, stop, NULL);
}

jx_array *jx_scipy_signal_fftconvolve(jx_array *in1, jx_array *in2, const char *mode, int naxes,
                                      const int *axes) {
  const char *fn = "jx_scipy_signal_fftconvolve";
  if (np_null_arg(fn, in1, "in1") || np_null_arg(fn, in2, "in2") || (naxes > 0 && np_null_arg(fn, axes, "axes")))
    return NULL;
  jx_scope_begin();
  jx_array *p[2];
  if (!promote_inexact(fn, in1, in2, p)) return np_scope_return(NULL);
  jx_array *x = p[0], *y = p[1];
  if (x->ndim != y->ndim) {
    error_set(JX_ERR_SHAPE, "%s: in1 and in2 should have the same dimensionality, got %d and %d", fn, x->ndim,
              y->ndim);
    return np_scope_return(NULL);
  }
  int m;
  if (!parse_mode(fn, mode, MODE_FULL, &m)) return np_scope_return(NULL);
  bool on[JX_MAX_NDIM];
  for (int i = 0; i < x->ndim; i++) on[i] = axes == NULL;
  for (int k = 0; axes && k < naxes; k++) {
    int ax = axes[k];
    if (!array_normalize_axis(fn, &ax, x->ndim)) return np_scope_return(NULL);
    on[ax] = true;
  }
  for (int i = 0; i < x->ndim; i++)
    if (!on[i] && x->shape[i] != y->shape[i]) {
      char b1[64], b2[64];
      error_set(JX_ERR_SHAPE, "%s: mapped axes must have same shape; got in1.shape=%s in2.shape=%s", fn,
                np_shape_str(b1, x), np_shape_str(b2, y));
      return np_scope_return(NULL);
    }
  return np_scope_return(fftconvolve(fn, x, y, m, on));
}

/* signal.convolve's method argument: true for "fft"; JX_ERR_VALUE for unknown ones. */
static bool parse_method(const char *fn, const char *method, bool *fft) {
  *fft = method && !strcmp(method, "fft");
  if (!method || *fft || !strcmp(method, "direct") || !strcmp(method, "auto")) return true;
  error_set(JX_ERR_VALUE, "%s: got method='%s'; expected 'auto', 'fft', or 'direct'", fn, method);
  return false;
}

static jx_array *signal_convolve(const char *fn, jx_array *in1, jx_array *in2, const char *mode,
                                 const char *method) {
  bool fft;
  int m;
  if (np_null_arg(fn, in1, "in1") || np_null_arg(fn, in2, "in2") || !parse_method(fn, method, &fft)) return NULL;
  if (fft) return jx_scipy_signal_fftconvolve(in1, in2, mode, 0, NULL);
  return parse_mode(fn, mode, MODE_FULL, &m) ? convolve_nd(fn, in1, in2, m) : NULL;
}

jx_array *jx_scipy_signal_convolve(jx_array *in1, jx_array *in2, const char *mode, const char *method) {
  return signal_convolve("jx_scipy_signal_convolve", in1, in2, mode, method);
}

jx_array *jx_scipy_signal_correlate(jx_array *in1, jx_array *in2, const char *mode, const char *method) {
  const char *fn = "jx_scipy_signal_correlate";
  if (np_null_arg(fn, in1, "in1") || np_null_arg(fn, in2, "in2")) return NULL;
  jx_scope_begin();
  return np_scope_return(signal_convolve(fn, in1, jx_flip(jx_conj(in2), 0, NULL), mode, method));
}

static bool check_2d(const char *fn, jx_array *in1, jx_array *in2) {
  if (np_null_arg(fn, in1, "in1") || np_null_arg(fn, in2, "in2")) return false;
  if (in1->ndim == 2 && in2->ndim == 2) return true;
  error_set(JX_ERR_SHAPE, "%s: only 2-dimensional inputs are supported, got in1.ndim=%d and in2.ndim=%d", fn,
            in1->ndim, in2->ndim);
  return false;
}

jx_array *jx_scipy_signal_convolve2d(jx_array *in1, jx_array *in2, const char *mode) {
  const char *fn = "jx_scipy_signal_convolve2d";
  int m;
  if (!check_2d(fn, in1, in2) || !parse_mode(fn, mode, MODE_FULL, &m)) return NULL;
  return convolve_nd(fn, in1, in2, m);
}

/* signal.py's correlate2d: flips and conjugations chosen by mode and by which input is
 * the larger, exactly as JAX chooses them. */
jx_array *jx_scipy_signal_correlate2d(jx_array *in1, jx_array *in2, const char *mode) {
  const char *fn = "jx_scipy_signal_correlate2d";
  int m;
  if (!check_2d(fn, in1, in2) || !parse_mode(fn, mode, MODE_FULL, &m)) return NULL;
  bool swap = true, same_shape = true;
  for (int i = 0; i < 2; i++) {
    swap &= in1->shape[i] <= in2->shape[i];
    same_shape &= in1->shape[i] == in2->shape[i];
  }
  jx_scope_begin();
  jx_array *r;
  if (m == MODE_SAME || (m == MODE_VALID && !(swap && !same_shape)) || (m == MODE_FULL && !swap)) {
    r = jx_flip(convolve_nd(fn, jx_flip(in1, 0, NULL), jx_conj(in2), m), 0, NULL);
  } else {
    r = convolve_nd(fn, jx_flip(in2, 0, NULL), jx_conj(in1), m);
    if (m == MODE_FULL) r = jx_conj(r);
  }
  return np_scope_return(r);
}
