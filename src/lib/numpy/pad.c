/* pad.c -- jnp.pad's modes other than a single constant (jax/_src/numpy/lax_numpy.py:
 * _pad_constant, _pad_wrap, _pad_symmetric_or_reflect, _pad_edge, _pad_linear_ramp,
 * _pad_stats, _pad_empty), composed axis by axis from slices, flips, repeats and
 * concatenations as JAX composes them, so they differentiate, batch and jit alike. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

/* x[start:stop] along axis (Python bounds: negative counts from the end, JX_SLICE_END
 * for an omitted stop) */
static jx_array *sl(jx_array *x, int axis, int64_t start, int64_t stop) {
  if (!x) return NULL;
  int64_t a[JX_MAX_NDIM], b[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) a[d] = b[d] = JX_SLICE_END;
  a[axis] = start;
  b[axis] = stop;
  return jx_slice(x, x->ndim, a, b, NULL);
}

static jx_array *cat3(jx_array *a, jx_array *x, jx_array *b, int axis) {
  return jx_concatenate(3, (jx_array *[]){a, x, b}, axis);
}

/* constant_values given per axis and side: one axis, one side at a time (JAX's loop) */
static jx_array *pad_constant(jx_array *x, int axis, int64_t lo, int64_t hi, const double *cv) {
  int64_t pw[2 * JX_MAX_NDIM] = {0};
  double v0 = cv ? cv[2 * axis] : 0, v1 = cv ? cv[2 * axis + 1] : 0;
  if (lo) pw[2 * axis] = lo, x = jx_pad(x, pw, v0), pw[2 * axis] = 0;
  if (hi) pw[2 * axis + 1] = hi, x = jx_pad(x, pw, v1);
  return x;
}

static jx_array *pad_wrap(jx_array *x, int axis, int64_t lo, int64_t hi) {
  int64_t n = x->shape[axis], reps = lo / n + hi / n + 1;
  if (reps > 4096) { /* tile rather than list the copies */
    int64_t r[JX_MAX_NDIM];
    for (int d = 0; d < x->ndim; d++) r[d] = d == axis ? reps : 1;
    jx_array *t = jx_tile(x, x->ndim, r);
    return cat3(sl(x, axis, n - lo % n, n), t, sl(x, axis, 0, hi % n), axis);
  }
  jx_array **parts = malloc((size_t)(reps + 2) * sizeof *parts);
  if (!parts) {
    error_set(JX_ERR_OOM, "jx_pad_with_mode: out of memory");
    return NULL;
  }
  int k = 0;
  parts[k++] = sl(x, axis, n - lo % n, n);
  for (int64_t i = 0; i < reps; i++) parts[k++] = x;
  parts[k++] = sl(x, axis, 0, hi % n);
  jx_array *r = jx_concatenate(k, parts, axis);
  free(parts);
  return r;
}

/* reflect (the edge not repeated) or symmetric (repeated), in chunks of at most the axis
 * size (less one for reflect) until the padding is done; odd: 2 * edge - reflection,
 * the edge moving outwards with each chunk */
static jx_array *pad_reflect(jx_array *x, int axis, int64_t pad, bool before, bool symmetric, bool odd) {
  int64_t n = x->shape[axis];
  int64_t offset = !symmetric && n > 1 ? 1 : 0;
  jx_array *edge = before ? sl(x, axis, 0, 1) : sl(x, axis, -1, JX_SLICE_END);
  while (pad > 0 && x) {
    int64_t cur = pad < n - offset ? pad : n - offset;
    pad -= cur;
    jx_array *r = before ? sl(x, axis, offset, offset + cur)
                         : sl(x, axis, -(cur + offset), symmetric || n == 1 ? JX_SLICE_END : -1);
    r = jx_flip(r, 1, &axis);
    if (odd) {
      r = jx_subtract(jx_multiply(np_lax_const(edge, 2), edge), r);
      if (n > 1) edge = before ? sl(r, axis, 0, 1) : sl(r, axis, -1, JX_SLICE_END);
    }
    x = before ? jx_concatenate(2, (jx_array *[]){r, x}, axis) : jx_concatenate(2, (jx_array *[]){x, r}, axis);
  }
  return x;
}

/* linspace(end, edge, num, endpoint=False) along axis in x's inexact dtype (JAX's
 * start * (1 - step) + stop * step, step = iota / num), floored for integer x */
static jx_array *ramp(jx_array *x, jx_array *edge, int axis, int64_t num, double end) {
  jx_dtype dt = x->dtype, ct = dtype_is_floating(dt) ? dt : (dt == JX_INT64 || dt == JX_UINT64 ? JX_FLOAT64 : JX_FLOAT32);
  int64_t s[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) s[d] = d == axis ? num : 1;
  jx_array *e = jx_astype(edge, ct), *start = jx_astype(jx_scalar(end), ct), *out;
  if (num == 1) { /* linspace's num == 1 branch: start alone (no 0 * edge: an inf edge stays out) */
    int64_t full[JX_MAX_NDIM];
    for (int d = 0; d < x->ndim; d++) full[d] = d == axis ? 1 : x->shape[d];
    out = jx_broadcast_to(start, x->ndim, full);
  } else {
    jx_array *step = jx_divide(jx_arange(0, (double)num, 1, ct), jx_astype(jx_scalar((double)num), ct));
    step = jx_reshape(step, x->ndim, s);
    out = jx_add(jx_multiply(start, jx_subtract(np_lax_const(step, 1), step)), jx_multiply(e, step));
  }
  if (!dtype_is_floating(dt)) out = jx_floor(out);
  return np_convert(out, dt, x->weak);
}

static jx_array *stat(jx_array *x, int axis, jx_pad_mode mode) {
  switch (mode) {
  case JX_PAD_MAXIMUM: return jx_max(x, 1, &axis, true);
  case JX_PAD_MINIMUM: return jx_min(x, 1, &axis, true);
  case JX_PAD_MEAN: return jx_mean(x, 1, &axis, true);
  default: return jx_median(x, axis, true);
  }
}

static jx_array *pad_stats(jx_array *x, int axis, int64_t lo, int64_t hi, jx_pad_mode mode,
                           const int64_t *stat_length) {
  jx_array *sb, *sa;
  if (!stat_length) {
    sb = sa = stat(x, axis, mode);
  } else {
    int64_t n = x->shape[axis], lb = stat_length[2 * axis], la = stat_length[2 * axis + 1];
    lb = lb < n ? lb : n;
    la = la < n ? la : n;
    sb = stat(sl(x, axis, 0, lb), axis, mode);
    sa = stat(sl(x, axis, n - la, n), axis, mode);
  }
  if (dtype_is_integer(x->dtype)) sb = jx_round(sb), sa = jx_round(sa);
  sb = np_convert(sb, x->dtype, x->weak);
  sa = np_convert(sa, x->dtype, x->weak);
  return cat3(jx_repeat(sb, lo, axis), x, jx_repeat(sa, hi, axis), axis);
}

static const char *const mode_names[] = {"constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp",
                                         "maximum", "minimum", "mean", "median", "empty"};

jx_array *jx_pad_with_mode(jx_array *x, const int64_t *pad_width, jx_pad_mode mode, const jx_pad_options *opts) {
  const char *fn = "jx_pad_with_mode";
  if (np_null_arg(fn, x, "x") || (x->ndim > 0 && np_null_arg(fn, pad_width, "pad_width"))) return NULL;
  if ((unsigned)mode > JX_PAD_EMPTY) {
    error_set(JX_ERR_VALUE, "%s: unknown mode %d", fn, (int)mode);
    return NULL;
  }
  const jx_pad_options none = {0};
  if (!opts) opts = &none;
  for (int d = 0; d < x->ndim; d++) {
    int64_t lo = pad_width[2 * d], hi = pad_width[2 * d + 1];
    if (lo < 0 || hi < 0 || lo > INT64_MAX / 4 - x->shape[d] || hi > INT64_MAX / 4 - x->shape[d] - lo) {
      error_set(JX_ERR_VALUE, "%s: bad pad width (%lld, %lld) for axis %d", fn, (long long)lo, (long long)hi, d);
      return NULL;
    }
    bool needs_data = mode == JX_PAD_EDGE || mode == JX_PAD_WRAP || mode == JX_PAD_REFLECT || mode == JX_PAD_SYMMETRIC;
    if (needs_data && x->shape[d] == 0 && (lo || hi)) {
      error_set(JX_ERR_VALUE, "%s: cannot apply '%s' padding to empty axis %d", fn, mode_names[mode], d);
      return NULL;
    }
    if (mode >= JX_PAD_MAXIMUM && mode <= JX_PAD_MEDIAN && opts->stat_length &&
        (opts->stat_length[2 * d] <= 0 || opts->stat_length[2 * d + 1] <= 0)) {
      error_set(JX_ERR_VALUE, "%s: stat_length of 0 yields no value for padding (axis %d)", fn, d);
      return NULL;
    }
  }
  if (x->ndim == 0) return jx_ref(x);
  jx_scope_begin();
  jx_array *r = x;
  for (int d = 0; d < x->ndim && r; d++) {
    int64_t lo = pad_width[2 * d], hi = pad_width[2 * d + 1];
    switch (mode) {
    case JX_PAD_CONSTANT: r = pad_constant(r, d, lo, hi, opts->constant_values); break;
    case JX_PAD_EMPTY: r = pad_constant(r, d, lo, hi, NULL); break; /* jnp.empty is zeros */
    case JX_PAD_EDGE:
      if (r->shape[d] == 0) break;
      r = cat3(jx_repeat(sl(r, d, 0, 1), lo, d), r, jx_repeat(sl(r, d, -1, JX_SLICE_END), hi, d), d);
      break;
    case JX_PAD_WRAP:
      if (r->shape[d] == 0) break;
      r = pad_wrap(r, d, lo, hi);
      break;
    case JX_PAD_REFLECT:
    case JX_PAD_SYMMETRIC:
      if (r->shape[d] == 0) break;
      r = pad_reflect(r, d, lo, true, mode == JX_PAD_SYMMETRIC, opts->reflect_odd);
      r = r ? pad_reflect(r, d, hi, false, mode == JX_PAD_SYMMETRIC, opts->reflect_odd) : NULL;
      break;
    case JX_PAD_LINEAR_RAMP: {
      double e0 = opts->end_values ? opts->end_values[2 * d] : 0, e1 = opts->end_values ? opts->end_values[2 * d + 1] : 0;
      jx_array *before = ramp(r, sl(r, d, 0, 1), d, lo, e0);
      jx_array *after = jx_flip(ramp(r, sl(r, d, -1, JX_SLICE_END), d, hi, e1), 1, &d);
      r = cat3(before, r, after, d);
      break;
    }
    default: r = pad_stats(r, d, lo, hi, mode, opts->stat_length); break;
    }
  }
  return np_scope_return(r == x ? jx_ref(x) : r);
}
