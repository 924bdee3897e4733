/* histogram.c -- jnp.histogram_bin_edges, histogram, histogram2d and histogramdd, written
 * with jx_ operations as jax/_src/numpy/lax_numpy.py writes them (searchsorted into the
 * edges, then a scatter-add or a bincount), so each is differentiable in the weights,
 * batchable and jittable. */
#include <math.h>
#include <string.h>

#include "lib/numpy/np.h"

static jx_array *wf(double v) { return jx_scalar(v); }
static jx_array *wi(int64_t v) { return jx_scalar_int(v); }

/* x[i] of a 1-d x (i < 0 counts from the end) as a 0-d array */
static jx_array *at(jx_array *x, int64_t i) {
  int64_t n = x->shape[0];
  if (i < 0) i += n;
  return jx_squeeze(jx_slice(x, 1, (int64_t[]){i}, (int64_t[]){i + 1}, (int64_t[]){1}), 1, (int[]){0});
}

/* jnp.histogram_bin_edges(a, bins, range): bins + 1 equally spaced edges over range
 * (NULL: [min(a), max(a)]), widened by 1/2 on both sides when the range is empty. */
jx_array *jx_histogram_bin_edges(jx_array *a, int64_t bins, const double *range) {
  const char *fn = "jx_histogram_bin_edges";
  if (np_null_arg(fn, a, "a")) return NULL;
  if (bins < 0) { /* JAX: IndexError from linspace's empty result */
    error_set(JX_ERR_VALUE, "%s: bins must be non-negative, got %lld", fn, (long long)bins);
    return NULL;
  }
  jx_scope_begin();
  jx_array *v = np_to_inexact(a);
  if (!v) return np_scope_return(NULL);
  jx_dtype d = v->dtype;
  jx_array *lo, *hi;
  if (range) {
    lo = jx_astype(wf(range[0]), d), hi = jx_astype(wf(range[1]), d);
  } else {
    lo = jx_min(v, 0, NULL, false), hi = jx_max(v, 0, NULL, false);
  }
  jx_array *empty = jx_equal(jx_subtract(hi, lo), wi(0));
  lo = jx_where(empty, jx_subtract(lo, wf(0.5)), lo);
  hi = jx_where(empty, jx_add(hi, wf(0.5)), hi);
  /* jnp.linspace of the (traced) ends: the same XLA kernel as jx_linspace's (complex:
   * the real and imaginary parts apart) */
  jx_dtype rd = dtype_real_part(d);
  if (!dtype_is_complex(d))
    return np_scope_return(np_linspace(jx_astype(lo, rd), jx_astype(hi, rd), bins + 1, rd));
  return np_scope_return(jx_complex(np_linspace(jx_real(lo), jx_real(hi), bins + 1, rd),
                                    np_linspace(jx_imag(lo), jx_imag(hi), bins + 1, rd)));
}

/* jnp.histogram_bin_edges(a, bins) for an array of edges: bins as a's inexact dtype. */
jx_array *jx_histogram_bin_edges_array(jx_array *a, jx_array *bins) {
  const char *fn = "jx_histogram_bin_edges_array";
  if (np_null_arg(fn, a, "a") || np_null_arg(fn, bins, "bins")) return NULL;
  if (bins->ndim != 1) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_SHAPE, "%s: bins must be a 1-d array of edges, got %s", fn, array_describe(b, bins));
    return NULL;
  }
  jx_scope_begin();
  jx_array *v = np_to_inexact(a);
  return np_scope_return(v ? np_convert(bins, v->dtype, false) : NULL);
}

/* The edges of a histogram: the given 1-d array (at least one edge) in v's dtype, else
 * bins equal-width bins over range. */
static jx_array *edges_for(const char *fn, jx_array *v, jx_array *edges, int64_t bins, const double *range) {
  if (!edges) return jx_histogram_bin_edges(v, bins, range);
  if (edges->ndim != 1 || edges->shape[0] == 0) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_SHAPE, "%s: bin edges must be a non-empty 1-d array, got %s", fn,
              array_describe(b, edges));
    return NULL;
  }
  return jx_histogram_bin_edges_array(v, edges);
}

/* jnp.histogram(a, bins, range, weights, density): counts per bin (the last bin closed),
 * by scatter-adding the weights (NULL: ones) at searchsorted positions; with density,
 * counts / widths / total. out[0] counts (nedges - 1,), out[1] edges (nedges,). */
static jx_status histogram_impl(const char *fn, jx_array *a, jx_array *edges_in, int64_t bins,
                                const double *range, jx_array *weights, bool density, jx_array **out) {
  if (!out) {
    error_set(JX_ERR_VALUE, "%s: out is NULL", fn);
    return JX_ERR_VALUE;
  }
  out[0] = out[1] = NULL;
  if (np_null_arg(fn, a, "a")) return jx_last_status();
  if (weights && (weights->ndim != a->ndim ||
                  memcmp(weights->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim) != 0)) {
    error_set(JX_ERR_SHAPE, "%s: weights should have the same shape as a", fn);
    return JX_ERR_SHAPE;
  }
  jx_scope_begin();
  jx_array *v = a, *w;
  if (weights) { /* promote_dtypes_inexact: int32 a with float16 weights is float16 */
    jx_array *p[2];
    if (!np_promote(fn, 2, (jx_array *[]){a, weights}, p)) return np_scope_return(NULL), jx_last_status();
    v = np_to_inexact(p[0]), w = np_to_inexact(p[1]);
  } else {
    v = np_to_inexact(a);
    w = v ? jx_ones_like(v) : NULL;
  }
  jx_array *edges = v ? edges_for(fn, v, edges_in, bins, range) : NULL, *idx = NULL;
  if (!edges || jx_searchsorted(edges, v, true, &idx) != JX_OK) return np_scope_return(NULL), jx_last_status();
  int64_t ne = edges->shape[0];
  idx = jx_where(jx_equal(v, at(edges, -1)), jx_astype(wi(ne - 1), idx->dtype), idx);
  jx_array *flat_idx = jx_ravel(idx), *flat_w = jx_ravel(w);
  jx_array *counts = jx_at_add(jx_zeros(1, &ne, w->dtype), flat_idx, flat_w, 0, JX_INDEX_FILL);
  counts = jx_slice(counts, 1, (int64_t[]){1}, (int64_t[]){JX_SLICE_END}, (int64_t[]){1});
  if (density && counts) {
    jx_array *widths = jx_diff(edges, 1, 0);
    counts = jx_divide(jx_divide(counts, widths), jx_sum(counts, 0, NULL, false));
  }
  jx_array *r[2] = {counts, edges};
  if (!counts) return np_scope_return(NULL), jx_last_status();
  jx_scope_end(2, r);
  out[0] = r[0], out[1] = r[1];
  return JX_OK;
}

jx_status jx_histogram(jx_array *a, int64_t bins, const double *range, jx_array *weights, bool density,
                       jx_array **out) {
  return histogram_impl("jx_histogram", a, NULL, bins, range, weights, density, out);
}

jx_status jx_histogram_edges(jx_array *a, jx_array *bins, jx_array *weights, bool density, jx_array **out) {
  const char *fn = "jx_histogram_edges";
  if (!bins) {
    if (out) out[0] = out[1] = NULL;
    if (!jx_last_status()) error_set(JX_ERR_VALUE, "%s: bins is NULL", fn);
    return jx_last_status();
  }
  return histogram_impl(fn, a, bins, 0, NULL, weights, density, out);
}

/* jnp.histogramdd (lax_numpy.histogramdd): per dimension i the edges and
 * searchsorted(edges, x_i, 'right') - (x_i == edges[-1]); the positions clipped into
 * [0, nedges_i] and raveled over the (nedges_i + 1)-sized grid count in a bincount, whose
 * outer cells (out of range on some axis) are sliced off. */
jx_status jx_histogramdd(jx_array *sample, const int64_t *bins, jx_array *const *edges, const double *range,
                         jx_array *weights, bool density, jx_array **out) {
  const char *fn = "jx_histogramdd";
  if (!out) {
    error_set(JX_ERR_VALUE, "%s: out is NULL", fn);
    return JX_ERR_VALUE;
  }
  out[0] = NULL;
  if (np_null_arg(fn, sample, "sample")) return jx_last_status();
  char b[ARRAY_DESCRIBE_BUF];
  if (sample->ndim != 2 || sample->shape[1] < 1 || sample->shape[1] > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: sample must be (N, D) with 1 <= D <= %d, got %s", fn, JX_MAX_NDIM,
              array_describe(b, sample));
    return JX_ERR_SHAPE;
  }
  int64_t n = sample->shape[0];
  int D = (int)sample->shape[1];
  for (int i = 0; i <= D; i++) out[i] = NULL;
  if (weights && (weights->ndim != 1 || weights->shape[0] != n)) {
    error_set(JX_ERR_SHAPE, "%s: should have one weight for each sample: weights %s, sample %s", fn,
              array_describe(b, weights), array_describe(b, sample));
    return JX_ERR_SHAPE;
  }
  jx_scope_begin();
  jx_array *s = np_to_inexact(sample), *w = NULL, *r[1 + JX_MAX_NDIM] = {NULL};
  if (weights) {
    jx_array *p[2];
    if (!np_promote(fn, 2, (jx_array *[]){sample, weights}, p)) return np_scope_return(NULL), jx_last_status();
    s = np_to_inexact(p[0]), w = np_to_inexact(p[1]);
  }
  jx_dtype it = dtype_default_int();
  int64_t nb[JX_MAX_NDIM], total = 1;
  jx_array *xy = NULL;
  for (int i = 0; s && i < D; i++) {
    jx_array *col = jx_squeeze(jx_slice(s, 2, (int64_t[]){0, i}, (int64_t[]){n, i + 1}, (int64_t[]){1, 1}), 1, (int[]){1});
    bool data_range = !range || (isnan(range[2 * i]) && isnan(range[2 * i + 1]));
    jx_array *e = col ? edges_for(fn, col, edges ? edges[i] : NULL, bins ? bins[i] : 10,
                                  data_range ? NULL : range + 2 * i) : NULL, *idx = NULL;
    if (!e || jx_searchsorted(e, col, true, &idx) != JX_OK) return np_scope_return(NULL), jx_last_status();
    r[1 + i] = e;
    nb[i] = e->shape[0] + 1;
    idx = jx_where(jx_equal(col, at(e, -1)), jx_subtract(idx, wi(1)), idx);
    idx = jx_clip(jx_astype(idx, it), wi(0), wi(nb[i] - 1)); /* ravel_multi_index(mode='clip') */
    if ((double)total * (double)nb[i] > dtype_max_value(it)) {
      error_set(JX_ERR_UNSUPPORTED, "%s: %lld x %lld histogram cells are more than %s indexes", fn,
                (long long)total, (long long)nb[i], jx_dtype_name(it));
      return np_scope_return(NULL), JX_ERR_UNSUPPORTED;
    }
    total *= nb[i];
    xy = xy ? jx_add(jx_multiply(xy, wi(nb[i])), idx) : idx;
  }
  jx_array *hist = xy ? jx_bincount(xy, w, 0, total) : NULL;
  hist = jx_reshape(hist, D, nb);
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM], st[JX_MAX_NDIM];
  for (int i = 0; i < D; i++) lo[i] = 1, hi[i] = nb[i] - 1, st[i] = 1;
  hist = jx_slice(hist, D, lo, hi, st);
  if (density && hist) {
    hist = jx_astype(hist, s->dtype);
    hist = jx_divide(hist, jx_sum(hist, 0, NULL, false));
    for (int i = 0; i < D; i++) {
      int64_t shp[JX_MAX_NDIM];
      for (int k = 0; k < D; k++) shp[k] = k == i ? nb[i] - 2 : 1;
      hist = jx_divide(hist, jx_reshape(jx_diff(r[1 + i], 1, 0), D, shp));
    }
  }
  r[0] = hist;
  if (!hist) return np_scope_return(NULL), jx_last_status();
  jx_scope_end(1 + D, r);
  for (int i = 0; i <= D; i++) out[i] = r[i];
  return JX_OK;
}

/* jnp.histogram2d(x, y, ...): histogramdd of the (N, 2) sample stack([x, y], -1). */
jx_status jx_histogram2d(jx_array *x, jx_array *y, const int64_t *bins, jx_array *const *edges,
                         const double *range, jx_array *weights, bool density, jx_array **out) {
  const char *fn = "jx_histogram2d";
  if (!out) {
    error_set(JX_ERR_VALUE, "%s: out is NULL", fn);
    return JX_ERR_VALUE;
  }
  out[0] = out[1] = out[2] = NULL;
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, y, "y")) return jx_last_status();
  if (x->ndim != 1 || y->ndim != 1 || x->shape[0] != y->shape[0]) {
    char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_SHAPE, "%s: x and y must be 1-d of one length, got %s and %s", fn,
              array_describe(b0, x), array_describe(b1, y));
    return JX_ERR_SHAPE;
  }
  jx_scope_begin();
  jx_array *sample = jx_stack(2, (jx_array *[]){x, y}, 1);
  jx_array *r[3] = {NULL, NULL, NULL};
  jx_status st = sample ? jx_histogramdd(sample, bins, edges, range, weights, density, r) : jx_last_status();
  jx_scope_end(st == JX_OK ? 3 : 0, r);
  if (st == JX_OK) out[0] = r[0], out[1] = r[1], out[2] = r[2];
  return st;
}
