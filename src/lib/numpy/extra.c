/* extra.c -- more of jax.numpy (NaN-aware and order statistics, averages, closeness
 * tests, differences, diagonals and small constructors), composed only from public jx_
 * functions so every one of them traces under grad, vmap and jit. Formulas follow
 * jax/_src/numpy (reductions.py, lax_numpy.py, ufuncs.py) step by step. */
#include <math.h>
#include <string.h>

#include "lib/numpy/np.h"

/* Closes the function's scope keeping only r. */
static jx_array *ret(jx_array *r) {
  jx_scope_end(1, &r);
  return r;
}

/* True (with JX_ERR_VALUE naming fn unless an error is pending) when x is NULL. */
static bool null_in(const char *fn, const void *x) {
  if (x) return false;
  if (jx_last_status() == JX_OK) error_set(JX_ERR_VALUE, "%s: an input is NULL", fn);
  return true;
}

static bool is_float(const jx_array *x) { return dtype_is_floating(x->dtype); }

/* Canonical axis in [0, ndim) or JX_ERR_SHAPE naming fn. */
static bool norm_axis(const char *fn, int *axis, int ndim) {
  if (*axis < -ndim || *axis >= ndim) {
    error_set(JX_ERR_SHAPE, "%s: axis %d is out of bounds for an array of rank %d", fn, *axis,
              ndim);
    return false;
  }
  if (*axis < 0) *axis += ndim;
  return true;
}

/* where(isnan(x), v, x) for float x (v weak: x's dtype kept). */
static jx_array *nan_fill(jx_array *x, double v) {
  return jx_where(jx_isnan(x), jx_scalar(v), x);
}

/* ------------------------------------------------------------ NaN-aware */

jx_array *jx_nansum(jx_array *x, int naxes, const int *axes, bool keepdims) {
  if (null_in("jx_nansum", x)) return NULL;
  if (!is_float(x)) return jx_sum(x, naxes, axes, keepdims);
  jx_scope_begin();
  return ret(jx_sum(nan_fill(x, 0), naxes, axes, keepdims));
}

jx_array *jx_nanprod(jx_array *x, int naxes, const int *axes, bool keepdims) {
  if (null_in("jx_nanprod", x)) return NULL;
  if (!is_float(x)) return jx_prod(x, naxes, axes, keepdims);
  jx_scope_begin();
  return ret(jx_prod(nan_fill(x, 1), naxes, axes, keepdims));
}

/* _nan_reduction(..., nan_if_all_nan=True): NaNs become the identity; all-NaN gives NaN. */
static jx_array *nan_maxmin(const char *fn, bool is_max, jx_array *x, int naxes,
                            const int *axes, bool keepdims) {
  if (null_in(fn, x)) return NULL;
  if (!is_float(x))
    return is_max ? jx_max(x, naxes, axes, keepdims) : jx_min(x, naxes, axes, keepdims);
  jx_scope_begin();
  jx_array *f = nan_fill(x, is_max ? -INFINITY : INFINITY);
  jx_array *r = is_max ? jx_max(f, naxes, axes, keepdims) : jx_min(f, naxes, axes, keepdims);
  jx_array *all = jx_all(jx_isnan(x), naxes, axes, keepdims);
  return ret(jx_where(all, jx_scalar(NAN), r));
}

jx_array *jx_nanmax(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return nan_maxmin("jx_nanmax", true, x, naxes, axes, keepdims);
}

jx_array *jx_nanmin(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return nan_maxmin("jx_nanmin", false, x, naxes, axes, keepdims);
}

/* nansum / count of non-NaN elements (converted to x's dtype), as reductions.nanmean. */
static jx_array *nanmean_f(jx_array *x, int naxes, const int *axes, bool keepdims) {
  jx_array *cnt = jx_sum(jx_logical_not(jx_isnan(x)), naxes, axes, keepdims);
  jx_array *s = jx_sum(nan_fill(x, 0), naxes, axes, keepdims);
  return jx_divide(s, jx_astype(cnt, x ? x->dtype : JX_FLOAT32));
}

jx_array *jx_nanmean(jx_array *x, int naxes, const int *axes, bool keepdims) {
  if (null_in("jx_nanmean", x)) return NULL;
  if (!is_float(x)) return jx_mean(x, naxes, axes, keepdims);
  jx_scope_begin();
  return ret(nanmean_f(x, naxes, axes, keepdims));
}

/* reductions.nanvar: computed in float32 for 16-bit floats (to_inexact_dtype for ints);
 * a divisor count - ddof <= 0 gives NaN. */
static jx_array *nanvar_impl(jx_array *x, int naxes, const int *axes, int64_t ddof,
                             bool keepdims) {
  jx_dtype out = dtype_real_part(dtype_to_inexact(x->dtype));
  jx_dtype comp = (out == JX_FLOAT16 || out == JX_BFLOAT16) ? JX_FLOAT32 : out;
  jx_array *a = jx_astype(x, comp);
  jx_array *m = nanmean_f(a, naxes, axes, true);
  jx_array *c = jx_where(jx_isnan(a), jx_scalar(0), jx_subtract(a, m));
  jx_array *norm = jx_subtract(jx_sum(jx_logical_not(jx_isnan(a)), naxes, axes, keepdims),
                               jx_scalar_int(ddof));
  jx_array *mask = jx_less_equal(norm, jx_scalar_int(0));
  jx_array *r = jx_where(mask, jx_scalar(NAN), jx_sum(jx_multiply(c, c), naxes, axes, keepdims));
  jx_array *div = jx_astype(jx_where(mask, jx_scalar_int(1), norm), comp);
  return jx_astype(jx_divide(r, div), out);
}

jx_array *jx_nanvar(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims) {
  if (null_in("jx_nanvar", x)) return NULL;
  jx_scope_begin();
  return ret(nanvar_impl(x, naxes, axes, ddof, keepdims));
}

jx_array *jx_nanstd(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims) {
  if (null_in("jx_nanstd", x)) return NULL;
  jx_scope_begin();
  return ret(jx_sqrt(nanvar_impl(x, naxes, axes, ddof, keepdims)));
}

/* lax_numpy.nanargmax: NaNs become -inf (+inf); an all-NaN slice gives -1. */
static jx_array *nan_arg(const char *fn, bool is_max, jx_array *x, int axis, bool keepdims) {
  if (null_in(fn, x)) return NULL;
  if (!is_float(x)) return is_max ? jx_argmax(x, axis, keepdims) : jx_argmin(x, axis, keepdims);
  jx_scope_begin();
  jx_array *m = jx_isnan(x);
  jx_array *f = jx_where(m, jx_scalar(is_max ? -INFINITY : INFINITY), x);
  jx_array *r = is_max ? jx_argmax(f, axis, keepdims) : jx_argmin(f, axis, keepdims);
  jx_array *all = axis == JX_AXIS_NONE ? jx_all(m, 0, NULL, keepdims)
                                       : jx_all(m, 1, &axis, keepdims);
  return ret(jx_where(all, jx_scalar_int(-1), r));
}

jx_array *jx_nanargmax(jx_array *x, int axis, bool keepdims) {
  return nan_arg("jx_nanargmax", true, x, axis, keepdims);
}

jx_array *jx_nanargmin(jx_array *x, int axis, bool keepdims) {
  return nan_arg("jx_nanargmin", false, x, axis, keepdims);
}

jx_array *jx_nancumsum(jx_array *x, int axis) {
  if (null_in("jx_nancumsum", x)) return NULL;
  if (!is_float(x)) return jx_cumsum(x, axis);
  jx_scope_begin();
  return ret(jx_cumsum(nan_fill(x, 0), axis));
}

jx_array *jx_nancumprod(jx_array *x, int axis) {
  if (null_in("jx_nancumprod", x)) return NULL;
  if (!is_float(x)) return jx_cumprod(x, axis);
  jx_scope_begin();
  return ret(jx_cumprod(nan_fill(x, 1), axis));
}

/* ------------------------------------------------------------ statistics */

jx_array *jx_amax(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return jx_max(x, naxes, axes, keepdims);
}

jx_array *jx_amin(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return jx_min(x, naxes, axes, keepdims);
}

jx_array *jx_ptp(jx_array *x, int naxes, const int *axes, bool keepdims) {
  if (null_in("jx_ptp", x)) return NULL;
  jx_scope_begin();
  return ret(jx_subtract(jx_max(x, naxes, axes, keepdims), jx_min(x, naxes, axes, keepdims)));
}

jx_array *jx_count_nonzero(jx_array *x, int naxes, const int *axes, bool keepdims) {
  if (null_in("jx_count_nonzero", x)) return NULL;
  jx_scope_begin();
  return ret(jx_sum(jx_astype(x, JX_BOOL), naxes, axes, keepdims));
}

/* reductions.average: weights promote with x to an inexact dtype; weights of another
 * shape must be 1-d along the single reduced axis. */
jx_array *jx_average(jx_array *x, jx_array *weights, int naxes, const int *axes,
                     bool keepdims) {
  const char *fn = "jx_average";
  if (null_in(fn, x)) return NULL;
  if (!weights) return jx_mean(x, naxes, axes, keepdims);
  jx_array *pair[2] = {x, weights};
  bool weak;
  jx_dtype dt = np_result_type(2, pair, &weak);
  if (!dtype_is_floating(dt)) dt = dtype_to_inexact(dt); /* promote_dtypes_inexact */
  bool same = x->ndim == weights->ndim &&
              !memcmp(x->shape, weights->shape, sizeof(int64_t) * (size_t)x->ndim);
  int ax = axes && naxes == 1 ? axes[0] : 0;
  if (!same && (!axes || naxes != 1 || weights->ndim != 1 || !norm_axis(fn, &ax, x->ndim) ||
                weights->shape[0] != x->shape[ax])) {
    char a[64], b[64];
    if (jx_last_status() == JX_OK)
      error_set(JX_ERR_SHAPE, "%s: weights %s do not fit x %s (1-d weights need one axis)", fn,
                np_shape_str(a, weights), np_shape_str(b, x));
    return NULL;
  }
  jx_scope_begin();
  jx_array *xa = jx_astype(x, dt), *w = jx_astype(weights, dt);
  if (!same) {
    int64_t s[JX_MAX_NDIM];
    for (int d = 0; d < x->ndim; d++) s[d] = d == ax ? x->shape[d] : 1;
    w = jx_reshape(w, x->ndim, s);
  }
  jx_array *num = jx_sum(jx_multiply(xa, w), naxes, axes, keepdims);
  return ret(jx_divide(num, jx_sum(w, naxes, axes, keepdims)));
}

/* reductions._quantile (median: method "midpoint"): x is made inexact, NaN anywhere in a
 * slice makes the whole slice NaN, sorted along the axis; q (rank <= 1, made inexact)
 * indexes it at q * (n - 1) between the neighbours lo = floor, hi = ceil: "linear"
 * interpolates in q's dtype, "lower" / "higher" take one, "nearest" lo when the weight
 * of hi is <= 0.5 (JAX's rule, not NumPy's round-half-even), "midpoint" averages them.
 * The result is converted to x's inexact dtype (whatever q's dtype or weakness, as jax
 * 0.10.2 gives). Result shape q.shape + reduced shape. Complex x or q: JX_ERR_DTYPE, as
 * JAX raises. */
static jx_array *quantile_impl(const char *fn, jx_array *x, jx_array *q, int axis,
                               bool keepdims, jx_quantile_method method) {
  if (null_in(fn, x) || null_in(fn, q)) return NULL;
  if (dtype_is_complex(x->dtype) || dtype_is_complex(q->dtype)) { /* JAX: ValueError */
    error_set(JX_ERR_DTYPE, "%s: complex input is not supported (got %s), as in JAX: quantiles "
              "of complex values are poorly defined", fn, jx_dtype_name((dtype_is_complex(x->dtype) ? x : q)->dtype));
    return NULL;
  }
  if ((unsigned)method > JX_QUANTILE_NEAREST) {
    error_set(JX_ERR_VALUE, "%s: unknown method %d", fn, (int)method);
    return NULL;
  }
  if (q->ndim > 1) {
    error_set(JX_ERR_SHAPE, "%s: q must have rank <= 1, got rank %d", fn, q->ndim);
    return NULL;
  }
  int nd0 = x->ndim;
  int64_t kshape[JX_MAX_NDIM];
  jx_scope_begin();
  jx_array *a = np_to_inexact(x);
  if (axis == JX_AXIS_NONE) {
    for (int d = 0; d < nd0; d++) kshape[d] = 1;
    a = jx_ravel(a);
    axis = 0;
  } else {
    if (!norm_axis(fn, &axis, nd0)) return ret(NULL);
    for (int d = 0; d < nd0; d++) kshape[d] = d == axis ? 1 : x->shape[d];
  }
  if (!a) return ret(NULL);
  int64_t n = a->shape[axis];
  if (n == 0) {
    error_set(JX_ERR_VALUE, "%s: empty reduction axis", fn);
    return ret(NULL);
  }
  a = jx_where(jx_any(jx_isnan(a), 1, &axis, true), jx_scalar(NAN), a);
  a = jx_moveaxis(jx_sort(a, axis, false), axis, -1); /* (rest..., n) */
  jx_dtype out_dtype = a ? a->dtype : JX_FLOAT32;
  jx_array *qf = np_to_inexact(q);
  jx_array *qq = jx_multiply(qf, jx_scalar((double)(n - 1)));
  jx_array *lo = jx_floor(qq), *hi = jx_ceil(qq);
  jx_array *hw = jx_subtract(qq, lo), *lw = jx_subtract(jx_scalar(1), hw);
  jx_array *nm1 = jx_scalar((double)(n - 1)), *zero = jx_scalar(0);
  lo = jx_astype(jx_clip(lo, zero, nm1), JX_INT32);
  hi = jx_astype(jx_clip(hi, zero, nm1), JX_INT32);
  /* take along the last axis: (rest..., q...) -> (q..., rest...) */
  int rnd = a ? a->ndim - 1 : 0;
  jx_array *lv = jx_take(a, lo, -1), *hv = jx_take(a, hi, -1);
  if (q->ndim == 1) {
    lv = jx_moveaxis(lv, -1, 0);
    hv = jx_moveaxis(hv, -1, 0);
    int64_t ws[JX_MAX_NDIM + 1];
    ws[0] = q->shape[0];
    for (int d = 0; d < rnd; d++) ws[d + 1] = 1;
    lw = jx_reshape(lw, rnd + 1, ws);
    hw = jx_reshape(hw, rnd + 1, ws);
  }
  jx_array *r;
  if (method == JX_QUANTILE_MIDPOINT)
    r = jx_multiply(jx_add(lv, hv), jx_scalar(0.5));
  else if (method == JX_QUANTILE_LOWER)
    r = lv;
  else if (method == JX_QUANTILE_HIGHER)
    r = hv;
  else if (method == JX_QUANTILE_NEAREST)
    r = jx_where(jx_less_equal(hw, jx_scalar(0.5)), lv, hv);
  else {
    jx_dtype qd = qf ? qf->dtype : JX_FLOAT32;
    r = jx_add(jx_multiply(jx_astype(lv, qd), lw), jx_multiply(jx_astype(hv, qd), hw));
  }
  if (r && (r->dtype != out_dtype || r->weak)) r = np_convert(r, out_dtype, false);
  if (keepdims && r) {
    int64_t s[JX_MAX_NDIM + 1];
    int k = 0;
    if (q->ndim == 1) s[k++] = q->shape[0];
    for (int d = 0; d < nd0; d++) s[k++] = kshape[d];
    r = jx_reshape(r, k, s);
  }
  return ret(r);
}

jx_array *jx_quantile(jx_array *x, jx_array *q, int axis, bool keepdims) {
  return quantile_impl("jx_quantile", x, q, axis, keepdims, JX_QUANTILE_LINEAR);
}

jx_array *jx_quantile_with_method(jx_array *x, jx_array *q, int axis, jx_quantile_method method,
                                  bool keepdims) {
  return quantile_impl("jx_quantile_with_method", x, q, axis, keepdims, method);
}

static jx_array *percentile(const char *fn, jx_array *x, jx_array *q, int axis, jx_quantile_method method,
                            bool keepdims) {
  if (null_in(fn, x) || null_in(fn, q)) return NULL;
  jx_scope_begin();
  jx_array *qq = jx_true_divide(q, jx_scalar(100.0));
  return ret(quantile_impl(fn, x, qq, axis, keepdims, method));
}

jx_array *jx_percentile(jx_array *x, jx_array *q, int axis, bool keepdims) {
  return percentile("jx_percentile", x, q, axis, JX_QUANTILE_LINEAR, keepdims);
}

jx_array *jx_percentile_with_method(jx_array *x, jx_array *q, int axis, jx_quantile_method method,
                                    bool keepdims) {
  return percentile("jx_percentile_with_method", x, q, axis, method, keepdims);
}

jx_array *jx_median(jx_array *x, int axis, bool keepdims) {
  if (null_in("jx_median", x)) return NULL;
  jx_scope_begin();
  return ret(quantile_impl("jx_median", x, jx_scalar(0.5), axis, keepdims, JX_QUANTILE_MIDPOINT));
}

/* ------------------------------------------------------------ differences */

/* x[1:] - x[:-1] along axis (not_equal for bool), n times. */
jx_array *jx_diff(jx_array *x, int n, int axis) {
  const char *fn = "jx_diff";
  if (null_in(fn, x)) return NULL;
  if (n < 0) {
    error_set(JX_ERR_VALUE, "%s: order must be non-negative but got %d", fn, n);
    return NULL;
  }
  if (x->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: requires input that is at least one dimensional", fn);
    return NULL;
  }
  if (!norm_axis(fn, &axis, x->ndim)) return NULL;
  jx_scope_begin();
  jx_array *a = jx_ref(x);
  /* once the axis is empty, further differences change nothing (not dtype either): an
   * order of INT_MAX stops there instead of taking hours */
  for (int i = 0; i < n && a && a->shape[axis] > 0; i++) {
    int64_t st[JX_MAX_NDIM], sp[JX_MAX_NDIM], st2[JX_MAX_NDIM], sp2[JX_MAX_NDIM];
    for (int d = 0; d < a->ndim; d++) st[d] = sp[d] = st2[d] = sp2[d] = JX_SLICE_END;
    st[axis] = 1;
    sp2[axis] = a->shape[axis] > 0 ? a->shape[axis] - 1 : 0;
    jx_array *hi = jx_slice(a, a->ndim, st, sp, NULL), *lo = jx_slice(a, a->ndim, st2, sp2, NULL);
    a = a->dtype == JX_BOOL ? jx_not_equal(hi, lo) : jx_subtract(hi, lo);
  }
  return ret(a);
}

/* jnp.ediff1d(x) without to_begin/to_end: diff of the flattened array. */
jx_array *jx_ediff1d(jx_array *x) {
  if (null_in("jx_ediff1d", x)) return NULL;
  jx_scope_begin();
  return ret(jx_diff(jx_ravel(x), 1, 0));
}

/* jnp.trapezoid(y, x, dx, axis): 0.5 * sum(d * (y[1:] + y[:-1])) with d = diff(x) (x
 * 1-d along axis, or of y's shape) or the scalar dx when x is NULL. */
jx_array *jx_trapezoid(jx_array *y, jx_array *x, double dx, int axis) {
  const char *fn = "jx_trapezoid";
  if (null_in(fn, y)) return NULL;
  if (y->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: y must be at least 1-d", fn);
    return NULL;
  }
  if (!norm_axis(fn, &axis, y->ndim)) return NULL;
  jx_scope_begin();
  jx_array *yy = jx_moveaxis(np_to_inexact(y), axis, -1);
  jx_array *d;
  if (x) {
    jx_array *xx = x->ndim == 1 ? jx_ref(x) : jx_moveaxis(x, axis, -1);
    d = jx_diff(xx, 1, -1);
  } else {
    d = jx_scalar(dx);
  }
  int64_t n = y->shape[axis];
  int64_t st[JX_MAX_NDIM], sp[JX_MAX_NDIM], st2[JX_MAX_NDIM], sp2[JX_MAX_NDIM];
  int nd = y->ndim;
  for (int i = 0; i < nd; i++) st[i] = sp[i] = st2[i] = sp2[i] = JX_SLICE_END;
  st[nd - 1] = 1;
  sp2[nd - 1] = n > 0 ? n - 1 : 0;
  jx_array *s = jx_add(jx_slice(yy, nd, st, sp, NULL), jx_slice(yy, nd, st2, sp2, NULL));
  return ret(jx_multiply(jx_scalar(0.5), jx_sum(jx_multiply(d, s), 1, (int[]){-1}, false)));
}

/* ------------------------------------------------------------ comparisons */

/* lax_numpy.isclose: |a - b| <= atol + rtol |b| for inexact dtypes, with infinities equal
 * only to themselves and NaN to nothing (unless equal_nan); ints and bool: a == b. */
jx_array *jx_isclose(jx_array *a, jx_array *b, double rtol, double atol, bool equal_nan) {
  const char *fn = "jx_isclose";
  if (null_in(fn, a) || null_in(fn, b)) return NULL;
  jx_scope_begin();
  jx_array *p[2];
  if (!np_prepare(fn, 2, (jx_array *const[]){a, b}, p)) return ret(NULL);
  /* jnp.isclose (jax 0.10): promote_args_inexact -- integers compare as floats too --
   * then a == b, or b finite and |a - b| <= atol + rtol |b| */
  jx_array *x = np_to_inexact(p[0]), *y = np_to_inexact(p[1]);
  if (!x || !y) return ret(NULL);
  jx_dtype rd = dtype_real_part(x->dtype);
  jx_array *in_range = jx_less_equal(jx_abs(jx_subtract(x, y)),
                                     jx_add(jx_scalar_of(atol, rd), jx_multiply(jx_scalar_of(rtol, rd), jx_abs(y))));
  jx_array *out = jx_logical_or(jx_equal(x, y), jx_logical_and(jx_isfinite(y), in_range));
  if (equal_nan) out = jx_logical_or(out, jx_logical_and(jx_isnan(x), jx_isnan(y)));
  return ret(out);
}

jx_array *jx_allclose(jx_array *a, jx_array *b, double rtol, double atol, bool equal_nan) {
  if (null_in("jx_allclose", a) || null_in("jx_allclose", b)) return NULL;
  jx_scope_begin();
  return ret(jx_all(jx_isclose(a, b, rtol, atol, equal_nan), 0, NULL, false));
}

/* jnp.array_equal: false (a 0-d bool) for different shapes, else all(a == b), NaNs
 * matching each other when equal_nan. */
jx_array *jx_array_equal(jx_array *a, jx_array *b, bool equal_nan) {
  if (null_in("jx_array_equal", a) || null_in("jx_array_equal", b)) return NULL;
  if (a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim))
    return jx_scalar_of(0, JX_BOOL);
  jx_scope_begin();
  jx_array *eq = jx_equal(a, b);
  if (equal_nan) eq = jx_logical_or(eq, jx_logical_and(jx_isnan(a), jx_isnan(b)));
  return ret(jx_all(eq, 0, NULL, false));
}

/* jnp.array_equiv: false when the shapes do not broadcast, else all(a == b). */
jx_array *jx_array_equiv(jx_array *a, jx_array *b) {
  if (null_in("jx_array_equiv", a) || null_in("jx_array_equiv", b)) return NULL;
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 1; i <= nd; i++) {
    int64_t da = i <= a->ndim ? a->shape[a->ndim - i] : 1, db = i <= b->ndim ? b->shape[b->ndim - i] : 1;
    if (da != db && da != 1 && db != 1) return jx_scalar_of(0, JX_BOOL);
  }
  jx_scope_begin();
  return ret(jx_all(jx_equal(a, b), 0, NULL, false));
}

jx_array *jx_isposinf(jx_array *x) {
  if (null_in("jx_isposinf", x)) return NULL;
  jx_scope_begin();
  if (!is_float(x)) return ret(jx_zeros(x->ndim, x->shape, JX_BOOL));
  return ret(jx_equal(x, jx_scalar(INFINITY)));
}

jx_array *jx_isneginf(jx_array *x) {
  if (null_in("jx_isneginf", x)) return NULL;
  jx_scope_begin();
  if (!is_float(x)) return ret(jx_zeros(x->ndim, x->shape, JX_BOOL));
  return ret(jx_equal(x, jx_scalar(-INFINITY)));
}

/* ------------------------------------------------------------ elementwise */

jx_array *jx_degrees(jx_array *x) { return jx_rad2deg(x); }
jx_array *jx_radians(jx_array *x) { return jx_deg2rad(x); }
jx_array *jx_fabs(jx_array *x) {
  if (null_in("jx_fabs", x)) return NULL;
  jx_scope_begin();
  return ret(jx_abs(np_to_inexact(x)));
}

/* ufuncs.sinc: sin(pi x) / (pi x), 1 at 0. Its constants are lax._const's (np_lax_const):
 * the result is strong unless x is a weak scalar, as JAX's. */
jx_array *jx_sinc(jx_array *x) {
  if (null_in("jx_sinc", x)) return NULL;
  jx_scope_begin();
  jx_array *xf = np_to_inexact(x);
  jx_array *z = jx_equal(xf, jx_scalar(0)), *one = np_lax_const(xf, 1);
  jx_array *px = jx_where(z, one, jx_multiply(np_lax_const(xf, M_PI), xf));
  return ret(jx_where(z, one, jx_divide(jx_sin(px), px)));
}

/* ufuncs.heaviside: 0 for x1 < 0, x2 at 0, 1 above (inexact dtypes); NaN x1 stays NaN.
 * x1 and x2 promote without broadcasting and 0 and 1 are lax._const(x1, ..): strong
 * unless x1 is a weak scalar, as JAX's. */
jx_array *jx_heaviside(jx_array *x1, jx_array *x2) {
  if (null_in("jx_heaviside", x1) || null_in("jx_heaviside", x2)) return NULL;
  jx_scope_begin();
  jx_array *a = np_to_inexact(x1), *b = np_to_inexact(x2);
  jx_array *p[2];
  if (!np_promote("jx_heaviside", 2, (jx_array *const[]){a, b}, p)) return ret(NULL);
  if (dtype_is_complex(p[0]->dtype)) { /* JAX's lax.lt refuses complex (jx_less orders it) */
    error_set(JX_ERR_DTYPE, "jx_heaviside: complex %s has no sign to step on (JAX raises too)",
              jx_dtype_name(p[0]->dtype));
    return ret(NULL);
  }
  jx_array *zero = np_lax_const(p[0], 0);
  return ret(jx_where(jx_less(p[0], zero), zero,
                      jx_where(jx_greater(p[0], zero), np_lax_const(p[0], 1),
                               jx_where(jx_isnan(p[0]), p[0], p[1]))));
}

/* ufuncs.float_power: power computed in the promoted inexact dtype. */
jx_array *jx_float_power(jx_array *x, jx_array *y) {
  if (null_in("jx_float_power", x) || null_in("jx_float_power", y)) return NULL;
  jx_scope_begin();
  return ret(jx_power(np_to_inexact(x), np_to_inexact(y)));
}

/* ufuncs.logaddexp2: max + log1p(2^-|x-y|) / ln 2 (x + y where the difference is NaN);
 * complex: np_logaddexp_complex. */
jx_array *jx_logaddexp2(jx_array *x, jx_array *y) {
  if (null_in("jx_logaddexp2", x) || null_in("jx_logaddexp2", y)) return NULL;
  jx_scope_begin();
  jx_array *p[2];
  jx_array *a = np_to_inexact(x), *b = np_to_inexact(y);
  if (!np_prepare("jx_logaddexp2", 2, (jx_array *const[]){a, b}, p)) return ret(NULL);
  if (dtype_is_complex(p[0]->dtype)) return ret(np_logaddexp_complex("jx_logaddexp2", p[0], p[1], true));
  jx_array *m = jx_maximum(p[0], p[1]), *d = jx_subtract(p[0], p[1]);
  /* lax_other.logaddexp2: amax + (1 / ln 2) * log1p(2^-|d|), the factor lax._const(amax)
   * (strong unless a weak scalar, as JAX's result) */
  jx_array *r = jx_add(m, jx_multiply(np_lax_const(m, 1 / M_LN2), jx_log1p(jx_exp2(jx_negative(jx_abs(d))))));
  return ret(jx_where(jx_isnan(d), jx_add(p[0], p[1]), r));
}

/* jnp.divmod: out[0] = floor_divide, out[1] = remainder. */
jx_status jx_divmod(jx_array *x, jx_array *y, jx_array **out) {
  if (np_null_arg("jx_divmod", out, "out")) return jx_last_status();
  out[0] = jx_floor_divide(x, y);
  out[1] = jx_remainder(x, y);
  if (out[0] && out[1]) return JX_OK;
  jx_free(out[0]), jx_free(out[1]);
  out[0] = out[1] = NULL;
  return jx_last_status() ? jx_last_status() : JX_ERR_VALUE;
}

/* jnp.modf: out[0] = x - trunc(x), out[1] = trunc(x) (inexact dtypes). */
jx_status jx_modf(jx_array *x, jx_array **out) {
  if (np_null_arg("jx_modf", out, "out")) return jx_last_status();
  out[0] = out[1] = NULL;
  if (null_in("jx_modf", x)) return jx_last_status();
  jx_scope_begin();
  jx_array *xf = np_to_inexact(x);
  jx_array *w = jx_trunc(xf), *f = jx_subtract(xf, w);
  jx_array *keep[2] = {f, w};
  jx_scope_end(2, keep);
  if (f && w) {
    out[0] = f, out[1] = w;
    return JX_OK;
  }
  jx_free(f), jx_free(w);
  return jx_last_status();
}

/* jnp.nan_to_num(x, nan, posinf, neginf): posinf/neginf NAN mean the dtype's max/min
 * (JAX's None). Complex inputs: each part on its own, as JAX. Other non-float inputs are
 * returned unchanged. */
jx_array *jx_nan_to_num(jx_array *x, double nan, double posinf, double neginf) {
  if (null_in("jx_nan_to_num", x)) return NULL;
  if (dtype_is_complex(x->dtype)) {
    jx_scope_begin();
    return ret(jx_complex(jx_nan_to_num(jx_real(x), nan, posinf, neginf),
                          jx_nan_to_num(jx_imag(x), nan, posinf, neginf)));
  }
  if (!is_float(x)) return jx_ref(x);
  if (isnan(posinf)) posinf = dtype_max_value(x->dtype);
  if (isnan(neginf)) neginf = dtype_min_value(x->dtype);
  jx_scope_begin();
  /* asarray(value, dtype=x.dtype): strong, so the result is (weak x included), as JAX;
   * the infinities are looked for after NaNs are replaced, as JAX does (nan=inf gives
   * posinf) */
  jx_dtype d = x->dtype;
  jx_array *r = jx_where(jx_isnan(x), np_constant(nan, d), x);
  r = jx_where(jx_equal(r, jx_scalar(INFINITY)), np_constant(posinf, d), r);
  return ret(jx_where(jx_equal(r, jx_scalar(-INFINITY)), np_constant(neginf, d), r));
}

/* ------------------------------------------------------------ movement */

static jx_array *atleast(jx_array *x, int n) {
  if (null_in("jx_atleast_nd", x)) return NULL;
  if (x->ndim >= n) return jx_ref(x);
  int64_t s[3] = {1, 1, 1};
  if (x->ndim == 1 && n == 2) s[1] = x->shape[0];
  if (x->ndim == 1 && n == 3) s[1] = x->shape[0];
  if (x->ndim == 2) s[0] = x->shape[0], s[1] = x->shape[1];
  return jx_reshape(x, n, s);
}

jx_array *jx_atleast_1d(jx_array *x) { return atleast(x, 1); }
jx_array *jx_atleast_2d(jx_array *x) { return atleast(x, 2); }
jx_array *jx_atleast_3d(jx_array *x) { return atleast(x, 3); }

/* Applies f to each of n arrays, then concatenates along axis. */
static jx_array *stack_with(int n, jx_array *const *xs, jx_array *(*f)(jx_array *), int axis) {
  if (n < 1 || n > 4096 || !xs) {
    error_set(JX_ERR_VALUE, "jx_hstack/vstack/dstack: need 1..4096 arrays, got %d", n);
    return NULL;
  }
  jx_scope_begin();
  jx_array *tmp[4096];
  for (int i = 0; i < n; i++) tmp[i] = f ? f(xs[i]) : xs[i];
  return ret(jx_concatenate(n, tmp, axis));
}

/* jnp.hstack: concatenate along axis 1, or 0 for 1-d (0-d become 1-d). */
jx_array *jx_hstack(int n, jx_array *const *xs) {
  if (n >= 1 && xs && xs[0] && xs[0]->ndim <= 1) return stack_with(n, xs, jx_atleast_1d, 0);
  return stack_with(n, xs, jx_atleast_1d, 1);
}
jx_array *jx_vstack(int n, jx_array *const *xs) { return stack_with(n, xs, jx_atleast_2d, 0); }
jx_array *jx_dstack(int n, jx_array *const *xs) { return stack_with(n, xs, jx_atleast_3d, 2); }

static jx_array *as_column(jx_array *x) {
  if (!x || x->ndim >= 2) return jx_ref(x);
  return jx_reshape(x, 2, (int64_t[]){x->ndim ? x->shape[0] : 1, 1});
}
/* jnp.column_stack: 1-d arrays become columns, then concatenate along axis 1. */
jx_array *jx_column_stack(int n, jx_array *const *xs) { return stack_with(n, xs, as_column, 1); }

jx_array *jx_flipud(jx_array *x) {
  if (null_in("jx_flipud", x)) return NULL;
  return jx_flip(x, 1, (int[]){0});
}

jx_array *jx_fliplr(jx_array *x) {
  if (null_in("jx_fliplr", x)) return NULL;
  if (x->ndim < 2) {
    error_set(JX_ERR_SHAPE, "jx_fliplr: requires an array of rank >= 2, got %d", x->ndim);
    return NULL;
  }
  return jx_flip(x, 1, (int[]){1});
}

/* jnp.rot90(x, k, axes=(a0, a1)): k quarter turns from a0 towards a1. */
jx_array *jx_rot90(jx_array *x, int k, int a0, int a1) {
  const char *fn = "jx_rot90";
  if (null_in(fn, x)) return NULL;
  if (x->ndim < 2 || !norm_axis(fn, &a0, x->ndim) || !norm_axis(fn, &a1, x->ndim) || a0 == a1) {
    if (jx_last_status() == JX_OK)
      error_set(JX_ERR_SHAPE, "%s: needs two distinct axes of an array of rank >= 2", fn);
    return NULL;
  }
  k = ((k % 4) + 4) % 4;
  if (k == 0) return jx_ref(x);
  jx_scope_begin();
  if (k == 2) return ret(jx_flip(x, 2, (int[]){a0, a1}));
  if (k == 1) return ret(jx_swapaxes(jx_flip(x, 1, &a1), a0, a1));
  return ret(jx_flip(jx_swapaxes(x, a0, a1), 1, &a1));
}

/* jnp.append(arr, values, axis): JX_AXIS_NONE flattens both. */
jx_array *jx_append(jx_array *arr, jx_array *values, int axis) {
  if (null_in("jx_append", arr) || null_in("jx_append", values)) return NULL;
  jx_scope_begin();
  if (axis == JX_AXIS_NONE)
    return ret(jx_concatenate(2, (jx_array *[]){jx_ravel(arr), jx_ravel(values)}, 0));
  return ret(jx_concatenate(2, (jx_array *const[]){arr, values}, axis));
}

/* jnp.resize(a, new_shape): the flattened a repeated cyclically (zeros if a is empty). */
jx_array *jx_resize(jx_array *a, int ndim, const int64_t *shape) {
  const char *fn = "jx_resize";
  if (null_in(fn, a)) return NULL;
  for (int d = 0; ndim >= 0 && ndim <= JX_MAX_NDIM && shape && d < ndim; d++)
    if (shape[d] < 0) { /* JAX's ValueError, before array_check_shape's JX_ERR_SHAPE */
      error_set(JX_ERR_VALUE, "%s: all elements of new_shape must be non-negative", fn);
      return NULL;
    }
  if (!array_check_shape(fn, ndim, shape)) return NULL;
  int64_t size = shape_numel(ndim, shape);
  if (a->ndim >= 0 && jx_size(a) == 0) return jx_zeros(ndim, shape, a->dtype);
  jx_scope_begin();
  int64_t n = jx_size(a), reps = (size + n - 1) / n;
  jx_array *t = jx_tile(jx_ravel(a), 1, &reps);
  t = jx_slice(t, 1, (int64_t[]){0}, &size, NULL);
  return ret(jx_reshape(t, ndim, shape));
}
