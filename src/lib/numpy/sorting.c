/* sorting.c -- jnp.sort and jnp.argsort on the sort/argsort primitives: JAX's total
 * order (-0.0 == 0.0, NaN of either sign after +inf), stable, with JAX's descending
 * conventions (sort: reverse of the ascending sort, so NaNs come first; argsort: ties
 * still in input order). */
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"
#include "lib/numpy/np.h"

/* Flattens for axis == JX_AXIS_NONE; normalizes the axis otherwise. */
static jx_array *sort_operand(const char *fn, jx_array *x, int *axis) {
  if (*axis == JX_AXIS_NONE) {
    int64_t n = shape_numel(x->ndim, x->shape);
    *axis = 0;
    return prim_reshape(x, 1, &n);
  }
  if (x->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: cannot sort a 0-d array along axis %d", fn, *axis);
    return NULL;
  }
  if (!array_normalize_axis(fn, axis, x->ndim)) return NULL;
  return jx_ref(x);
}

static bool null_args(const char *fn, int n, jx_array *const *xs) {
  for (int i = 0; i < n; i++)
    if (!xs[i]) {
      if (!jx_last_status()) error_set(JX_ERR_VALUE, "%s: NULL argument %d", fn, i);
      return true;
    }
  return false;
}

jx_array *jx_sort(jx_array *x, int axis, bool descending) {
  if (null_args("jx_sort", 1, &x)) return NULL;
  jx_scope_begin();
  jx_array *a = sort_operand("jx_sort", x, &axis), *r = a ? prim_sort(a, axis) : NULL;
  if (r && descending) {
    bool mask[JX_MAX_NDIM] = {false};
    mask[axis] = true;
    r = prim_rev(r, mask);
  }
  jx_scope_end(r ? 1 : 0, &r);
  return r;
}

jx_array *jx_argsort(jx_array *x, int axis, bool descending) {
  if (null_args("jx_argsort", 1, &x)) return NULL;
  jx_scope_begin();
  jx_array *a = sort_operand("jx_argsort", x, &axis), *r = NULL;
  if (a) {
    /* int32 positions with x64 off, the default int (int64) with it on, as JAX */
    jx_dtype it = dtype_default_int();
    bool mask[JX_MAX_NDIM] = {false};
    mask[axis] = true;
    if (!descending) {
      r = prim_argsort(a, axis, it);
    } else {
      /* stable descending: sort the reversed array, map positions back, reverse */
      jx_array *pos = prim_argsort(prim_rev(a, mask), axis, it);
      jx_array *last = pos ? np_constant((double)(a->shape[axis] - 1), it) : NULL;
      jx_array *lb = last ? np_broadcast_to("jx_argsort", last, pos->ndim, pos->shape) : NULL;
      r = lb ? prim_rev(prim_binary(PRIM_sub, lb, pos), mask) : NULL;
    }
  }
  jx_scope_end(r ? 1 : 0, &r);
  return r;
}

/* ---------------------------------------------- lexsort, top_k, searchsorted, unique */

static jx_array *bshape(double v, jx_dtype d, int nd, const int64_t *shape) {
  jx_array *c = np_constant(v, d);
  int none[1] = {0};
  if (!c || nd == 0) return c;
  return prim_broadcast_in_dim(c, nd, shape, none);
}


/* Least significant key first: each pass stably re-sorts the permutation by one key. */
jx_array *jx_lexsort(int n, jx_array *const *keys, int axis) {
  const char *fn = "jx_lexsort";
  if (n < 1) {
    error_set(JX_ERR_VALUE, "%s: need at least one key, got %d", fn, n);
    return NULL;
  }
  if (np_null_arg(fn, keys, "keys")) return NULL;
  if (null_args(fn, n, keys)) return NULL;
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  for (int k = 1; k < n; k++)
    if (keys[k]->ndim != keys[0]->ndim ||
        memcmp(keys[k]->shape, keys[0]->shape, sizeof(int64_t) * (size_t)keys[0]->ndim)) {
      error_set(JX_ERR_SHAPE, "%s: all keys need the same shape, got %s and %s", fn,
                array_describe(b0, keys[0]), array_describe(b1, keys[k]));
      return NULL;
    }
  if (keys[0]->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: keys must be at least 1-d, got %s", fn,
              array_describe(b0, keys[0]));
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, keys[0]->ndim)) return NULL;
  jx_scope_begin();
  jx_array *perm = prim_iota(dtype_default_int(), keys[0]->ndim, keys[0]->shape, axis);
  for (int k = 0; k < n && perm; k++) {
    jx_array *kk = jx_take_along_axis(keys[k], perm, axis, JX_INDEX_CLIP);
    jx_array *p = kk ? jx_argsort(jx_stop_gradient(kk), axis, false) : NULL;
    perm = p ? jx_take_along_axis(perm, p, axis, JX_INDEX_CLIP) : NULL;
  }
  jx_scope_end(perm ? 1 : 0, &perm);
  return perm;
}

/* An integer key whose order is the IEEE total order of float x (what lax.top_k sorts
 * by): the bits, with the magnitude bits of negatives flipped. Ints pass through. */
static jx_array *total_order_key(jx_array *x) {
  if (dtype_is_bool(x->dtype)) return prim_convert(x, JX_INT32, false);
  if (!dtype_is_floating(x->dtype)) return jx_ref(x);
  int bits = dtype_bits(x->dtype);
  jx_dtype it = bits == 16 ? JX_INT16 : bits == 32 ? JX_INT32 : JX_INT64;
  jx_array *b = prim_bitcast(prim_convert(x, x->dtype, false), it);
  if (!b) return NULL;
  double mag = bits == 16 ? 32767.0 : bits == 32 ? 2147483647.0 : 9223372036854775807.0;
  jx_array *m = bshape(mag, it, b->ndim, b->shape);
  if (bits == 64 && m) { /* 2^63 - 1 is not a double: build it as ~(1 << 63) */
    jx_array *one = bshape(1, it, b->ndim, b->shape);
    m = prim_unary(PRIM_not, prim_binary(PRIM_shift_left, one, bshape(63, it, b->ndim, b->shape)));
  }
  return prim_select(prim_binary(PRIM_lt, b, bshape(0, it, b->ndim, b->shape)),
                     prim_binary(PRIM_xor, b, m), b);
}

jx_status jx_top_k(jx_array *x, int64_t k, jx_array **values, jx_array **indices) {
  const char *fn = "jx_top_k";
  if (values) *values = NULL;
  if (indices) *indices = NULL;
  if (null_args(fn, 1, &x)) return jx_last_status();
  char b[ARRAY_DESCRIBE_BUF];
  if (x->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: x must be at least 1-d, got %s", fn, array_describe(b, x));
    return JX_ERR_SHAPE;
  }
  int64_t n = x->shape[x->ndim - 1];
  if (k < 0 || k > n) {
    error_set(JX_ERR_VALUE, "%s: k = %lld must be in [0, %lld] for x %s", fn, (long long)k,
              (long long)n, array_describe(b, x));
    return JX_ERR_VALUE;
  }
  jx_scope_begin();
  jx_array *key = total_order_key(x);
  jx_array *order = key ? jx_argsort(key, -1, true) : NULL; /* stable: lower index first */
  jx_array *out[2] = {NULL, NULL};
  if (order) {
    int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM], step[JX_MAX_NDIM];
    for (int d = 0; d < x->ndim; d++) stop[d] = x->shape[d], step[d] = 1;
    stop[x->ndim - 1] = k;
    jx_array *ix = prim_convert(prim_slice(order, start, stop, step), JX_INT32, false);
    out[0] = ix ? jx_take_along_axis(x, ix, -1, JX_INDEX_CLIP) : NULL;
    out[1] = ix;
  }
  jx_status st = out[0] && out[1] ? JX_OK : jx_last_status();
  if (st != JX_OK) out[0] = out[1] = NULL;
  jx_scope_end(st == JX_OK ? 2 : 0, out);
  if (st != JX_OK) return st;
  if (values) *values = out[0]; else jx_free(out[0]);
  if (indices) *indices = out[1]; else jx_free(out[1]);
  return JX_OK;
}

/* a < b in jnp.sort's order (-0.0 == 0.0, NaN after everything; complex by the real
 * part, then the imaginary part, as lax.sort's keys). */
static jx_array *sort_lt(jx_array *a, jx_array *b) {
  if (a && b && dtype_is_complex(a->dtype)) {
    jx_array *ra = prim_unary(PRIM_real, a), *rb = prim_unary(PRIM_real, b);
    jx_array *lt = sort_lt(ra, rb), *gt = sort_lt(rb, ra);
    jx_array *eq = prim_binary(PRIM_and, prim_unary(PRIM_not, lt), prim_unary(PRIM_not, gt));
    return prim_binary(PRIM_or, lt, prim_binary(PRIM_and, eq, sort_lt(prim_unary(PRIM_imag, a),
                                                                      prim_unary(PRIM_imag, b))));
  }
  jx_array *lt = prim_binary(PRIM_lt, a, b);
  if (!lt || !dtype_is_floating(a->dtype)) return lt;
  return prim_binary(PRIM_or, lt, prim_binary(PRIM_and, prim_unary(PRIM_not,
                     prim_unary(PRIM_is_nan, a)), prim_unary(PRIM_is_nan, b)));
}

/* jnp.searchsorted's default method ('scan'): every query v bisects [low, high) of a in
 * ceil(log2(n + 1)) steps, each one gather of a[mid] and one comparison -- O(len(v) log n)
 * work and O(len(v)) memory. (Counting a < v over all pairs held a len(v) x n table
 * eagerly: n = 20k took 3.8 GB.) The steps are unrolled, so vmap, jit and grad see only
 * primitives. Left: the first i with !(a[i] < v); right: the first i with v < a[i]. */
static jx_array *bisect(jx_array *a, jx_array *v, bool side_right, const jx_array *like) {
  int64_t n = a->shape[0];
  int levels = 0;
  while (levels < 63 && (INT64_C(1) << levels) < n + 1) levels++;
  /* int32 positions (n < 2^31 below): mid = low + (high - low) / 2 cannot overflow */
  jx_array *low = np_broadcast_to_like("jx_searchsorted", np_constant(0, JX_INT32), v->ndim,
                                       v->shape, like);
  jx_array *high = np_broadcast_to_like("jx_searchsorted", np_constant((double)n, JX_INT32),
                                        v->ndim, v->shape, like);
  jx_array *one = np_broadcast_to_like("jx_searchsorted", np_constant(1, JX_INT32), v->ndim,
                                       v->shape, like);
  for (int k = 0; k < levels && low && high; k++) {
    jx_array *mid = prim_binary(PRIM_add, low, prim_binary(PRIM_shift_right,
                                prim_binary(PRIM_sub, high, low), one));
    jx_array *am = prim_gather(a, mid, 0); /* v's shape; mid == n (done) is clamped */
    jx_array *left = side_right ? sort_lt(v, am) : prim_unary(PRIM_not, sort_lt(am, v));
    jx_array *nlow = prim_select(left, low, mid), *nhigh = prim_select(left, mid, high);
    low = nlow, high = nhigh;
  }
  return high;
}

jx_status jx_searchsorted(jx_array *a, jx_array *v, bool side_right, jx_array **out) {
  const char *fn = "jx_searchsorted";
  if (!out) {
    error_set(JX_ERR_VALUE, "%s: NULL out", fn);
    return JX_ERR_VALUE;
  }
  *out = NULL;
  if (null_args(fn, 2, (jx_array *[]){a, v})) return jx_last_status();
  char b[ARRAY_DESCRIBE_BUF];
  if (a->ndim != 1) {
    error_set(JX_ERR_SHAPE, "%s: a must be 1-d, got %s", fn, array_describe(b, a));
    return JX_ERR_SHAPE;
  }
  if (a->shape[0] > INT32_MAX) {
    error_set(JX_ERR_UNSUPPORTED, "%s: a %s is longer than int32 positions reach", fn,
              array_describe(b, a));
    return JX_ERR_UNSUPPORTED;
  }
  jx_scope_begin();
  jx_array *pr[2] = {NULL, NULL}, *r = NULL;
  if (np_promote(fn, 2, (jx_array *[]){a, v}, pr))
    r = bisect(pr[0], pr[1], side_right, np_top_tracer(2, (jx_array *[]){a, v}));
  jx_status st = r ? JX_OK : jx_last_status();
  jx_scope_end(r ? 1 : 0, &r);
  *out = r;
  return st;
}

/* a[sorter] (JAX's indexing: wrap once, clamp), then jx_searchsorted. */
jx_status jx_searchsorted_with_sorter(jx_array *a, jx_array *v, bool side_right, jx_array *sorter,
                                      jx_array **out) {
  const char *fn = "jx_searchsorted_with_sorter";
  if (!out) {
    error_set(JX_ERR_VALUE, "%s: NULL out", fn);
    return JX_ERR_VALUE;
  }
  *out = NULL;
  if (!sorter) return jx_searchsorted(a, v, side_right, out);
  if (null_args(fn, 2, (jx_array *[]){a, v})) return jx_last_status();
  char b[ARRAY_DESCRIBE_BUF];
  if (!dtype_is_integer(sorter->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: sorter must be integers, got %s", fn, array_describe(b, sorter));
    return JX_ERR_DTYPE;
  }
  if (sorter->ndim != 1) {
    error_set(JX_ERR_SHAPE, "%s: sorter must be 1-d, got %s", fn, array_describe(b, sorter));
    return JX_ERR_SHAPE;
  }
  if (a->ndim != 1) {
    error_set(JX_ERR_SHAPE, "%s: a must be 1-d, got %s", fn, array_describe(b, a));
    return JX_ERR_SHAPE;
  }
  if (a->shape[0] == 0 && sorter->shape[0] > 0) {
    error_set(JX_ERR_SHAPE, "%s: sorter %s gathers from an empty a", fn, array_describe(b, sorter));
    return JX_ERR_SHAPE;
  }
  jx_scope_begin();
  /* a[sorter] itself (not take_along_axis): JAX's indexing takes int64 indices to int32
   * after wrapping negatives once, so extreme int64 entries land where JAX's do */
  jx_array *as = a->shape[0] == 0 ? jx_ref(a) : jx_getitem(a, 1, (jx_index[]){jx_idx_array(sorter)});
  jx_array *r = NULL;
  jx_status st = as ? jx_searchsorted(as, v, side_right, &r) : jx_last_status();
  jx_scope_end(r ? 1 : 0, &r);
  *out = r;
  return st;
}

/* Positions along a 1-d axis as a (rows, cols) comparison: count_i(cum[i] <= u) for u in
 * [0, len). */
static jx_array *count_le(jx_array *cum, int64_t len) {
  int64_t n = cum->shape[0], s[2] = {len, n};
  jx_dtype it = cum->dtype;
  jx_array *u = prim_iota(it, 2, s, 0);
  jx_array *le = prim_unary(PRIM_not, prim_binary(PRIM_lt, u, prim_broadcast_in_dim(cum, 2, s, (int[]){1})));
  return prim_reduce(PRIM_reduce_sum, prim_convert(le, it, false), (bool[]){false, true});
}

/* The unique rows of s (n, m): the rows of the input sorted lexicographically (n >= 1),
 * perm their input positions. r[0] values (size, m) -- padded with fill (size, m) where
 * given, else with the first row --, r[1] indices, r[2] inverse (n,), r[3] counts; size
 * < 0: the count, read from the data (concrete only). Rows are equal when no column
 * differs, NaN equal to NaN (JAX's equal_nan=True). */
static bool unique_rows(const char *fn, jx_array *s, jx_array *perm, int64_t size,
                        jx_array *fill, jx_array **r) {
  int64_t n = s->shape[0], m = s->shape[1];
  jx_dtype it = dtype_default_int();
  int64_t one = 1, nm1 = n - 1, st1 = 1;
  jx_array *ne = NULL;
  if (n > 1) {
    int64_t lo[2] = {1, 0}, hi[2] = {n, m}, lo0[2] = {0, 0}, hi0[2] = {n - 1, m}, st[2] = {1, 1};
    jx_array *s1 = prim_slice(s, lo, hi, st), *s0 = prim_slice(s, lo0, hi0, st);
    ne = prim_binary(PRIM_ne, s1, s0);
    if (dtype_is_floating(s->dtype))
      ne = prim_binary(PRIM_and, ne, prim_unary(PRIM_not,
                       prim_binary(PRIM_and, prim_unary(PRIM_is_nan, s1),
                                   prim_unary(PRIM_is_nan, s0))));
    ne = m == 1 ? prim_reshape(ne, 1, &nm1) : prim_reduce(PRIM_reduce_or, ne, (bool[]){false, true});
  }
  jx_array *first = bshape(1, JX_BOOL, 1, &one);
  jx_array *mask = ne ? prim_concatenate(2, (jx_array *[]){first, ne}, 0) : first;
  jx_array *cum = mask ? jx_cumsum(prim_convert(mask, it, false), 0) : NULL;
  if (!cum) return false;
  if (size < 0) {
    jx_array *tot = prim_slice(cum, &nm1, &n, &st1);
    int32_t t32 = -1;
    if (!tot || jx_read(prim_convert(tot, JX_INT32, false), &t32, sizeof t32) != JX_OK)
      t32 = -1;
    if (t32 < 0) {
      jx_clear_error();
      error_set(JX_ERR_VALUE, "%s: without a static size the unique count must be "
                "concrete; pass size >= 0 under jit/vmap/grad", fn);
      return false;
    }
    size = t32;
  }
  /* P[u] = position of the (u+1)-th unique row, n past the last */
  jx_array *P = count_le(cum, size + 1);
  int64_t zz = 0, sz = size, vs[2] = {size, m};
  jx_array *Pu = prim_slice(P, &zz, &sz, &st1), *Pn = prim_slice(P, &one, (int64_t[]){size + 1}, &st1);
  jx_array *real = prim_binary(PRIM_lt, Pu, bshape((double)n, it, 1, &sz));
  jx_array *ind = prim_select(real, Pu, bshape(0, it, 1, &sz));
  jx_array *val = prim_gather(s, ind, 0);
  if (fill && val && real)
    val = prim_select(prim_broadcast_in_dim(real, 2, vs, (int[]){0}), val, fill);
  r[0] = val;
  r[1] = prim_gather(perm, ind, 0);
  r[3] = prim_binary(PRIM_sub, Pn, prim_select(real, Pu, bshape((double)n, it, 1, &sz)));
  jx_array *im = prim_binary(PRIM_sub, cum, bshape(1, it, 1, &n));
  r[2] = prim_scatter_add(bshape(0, it, 1, &n), prim_convert(perm, it, false), im, 0);
  return r[0] && r[1] && r[2] && r[3];
}

/* Hands r[0..3] (or nothing, on failure) to the requested outputs. */
static jx_status unique_finish(bool ok, jx_array **r, jx_array **const *outs) {
  for (int i = 0; i < 4; i++) ok = ok && r[i];
  jx_status st = ok ? JX_OK : jx_last_status();
  if (!ok) r[0] = r[1] = r[2] = r[3] = NULL;
  jx_scope_end(ok ? 4 : 0, r);
  if (!ok) return st ? st : JX_ERR_VALUE;
  for (int i = 0; i < 4; i++) {
    if (outs[i]) *outs[i] = r[i];
    else jx_free(r[i]);
  }
  return JX_OK;
}

jx_status jx_unique(jx_array *x, int64_t size, jx_array *fill_value, jx_array **values,
                    jx_array **indices, jx_array **inverse, jx_array **counts) {
  const char *fn = "jx_unique";
  jx_array **outs[4] = {values, indices, inverse, counts};
  for (int i = 0; i < 4; i++)
    if (outs[i]) *outs[i] = NULL;
  if (null_args(fn, 1, &x)) return jx_last_status();
  int64_t n = shape_numel(x->ndim, x->shape);
  jx_dtype it = dtype_default_int();
  if (size < 0 && np_top_tracer(1, &x)) { /* JAX: concrete_or_error, even for an empty x */
    error_set(JX_ERR_VALUE, "%s: without a static size the unique count must be concrete; "
              "pass size >= 0 under jit/vmap/grad", fn);
    return JX_ERR_VALUE;
  }
  if (n == 0 && size > 0 && !fill_value) {
    error_set(JX_ERR_VALUE, "%s: for an empty x with size %lld a fill_value is needed", fn,
              (long long)size);
    return JX_ERR_VALUE;
  }
  jx_scope_begin();
  jx_array *r[4] = {NULL, NULL, NULL, NULL};
  bool ok = true;
  jx_array *xf = prim_reshape(x, 1, &n);
  if (n == 0) {
    int64_t sz = size < 0 ? 0 : size, zero = 0;
    r[0] = sz ? np_broadcast_to(fn, np_convert(fill_value, x->dtype, x->weak), 1, &sz)
              : jx_ref(xf);
    r[1] = bshape(0, it, 1, &zero);
    r[2] = bshape(0, it, x->ndim, x->shape);
    r[3] = bshape(0, it, 1, &zero);
  } else {
    jx_array *s = jx_sort(xf, 0, false), *perm = jx_argsort(xf, 0, false), *fill = NULL;
    int64_t sz = size, s2[2] = {n, 1};
    if (fill_value && size >= 0)
      fill = np_broadcast_to(fn, np_convert(fill_value, x->dtype, x->weak), 1, &sz);
    ok = s && perm && (!fill_value || size < 0 || fill) &&
         unique_rows(fn, prim_reshape(s, 2, s2), perm, size, fill ? prim_reshape(fill, 2, (int64_t[]){size, 1}) : NULL, r);
    if (ok) {
      r[0] = prim_reshape(r[0], 1, &r[0]->shape[0]);
      r[2] = prim_reshape(r[2], x->ndim, x->shape);
    }
  }
  return unique_finish(ok, r, outs);
}

jx_status jx_unique_axis(jx_array *x, int axis, int64_t size, jx_array *fill_value,
                         jx_array **values, jx_array **indices, jx_array **inverse,
                         jx_array **counts) {
  const char *fn = "jx_unique_axis";
  if (axis == JX_AXIS_NONE) return jx_unique(x, size, fill_value, values, indices, inverse, counts);
  jx_array **outs[4] = {values, indices, inverse, counts};
  for (int i = 0; i < 4; i++)
    if (outs[i]) *outs[i] = NULL;
  if (null_args(fn, 1, &x)) return jx_last_status();
  if (x->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: axis %d is out of bounds for a 0-d array", fn, axis);
    return JX_ERR_SHAPE;
  }
  if (!array_normalize_axis(fn, &axis, x->ndim)) return jx_last_status();
  int64_t n = x->shape[axis], m = 1, rest[JX_MAX_NDIM];
  int nr = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != axis) rest[nr++] = x->shape[d], m *= x->shape[d];
  if (m > INT32_MAX) {
    error_set(JX_ERR_UNSUPPORTED, "%s: slices of %lld elements are more than lexsort's keys", fn,
              (long long)m);
    return JX_ERR_UNSUPPORTED;
  }
  if (size < 0 && np_top_tracer(1, &x)) { /* JAX: concrete_or_error on the input */
    error_set(JX_ERR_VALUE, "%s: without a static size x must be concrete; pass size >= 0 "
              "under jit/vmap/grad", fn);
    return JX_ERR_VALUE;
  }
  if (n == 0 && size > 0 && !fill_value) {
    error_set(JX_ERR_VALUE, "%s: for an empty axis with size %lld a fill_value is needed", fn,
              (long long)size);
    return JX_ERR_VALUE;
  }
  jx_dtype it = dtype_default_int();
  jx_scope_begin();
  jx_array *r[4] = {NULL, NULL, NULL, NULL}, *mv = jx_moveaxis(x, axis, 0);
  int64_t vshape[JX_MAX_NDIM], zero = 0, one = 1;
  bool ok = mv != NULL;
  /* the values (k, rest...) with k rows of fill_value */
  jx_array *fill = NULL;
  int64_t k = size < 0 ? (n == 0 ? 0 : 1) : size;
  vshape[0] = k;
  memcpy(vshape + 1, rest, sizeof(int64_t) * (size_t)nr);
  if (ok && fill_value && size >= 0) {
    fill = np_broadcast_to(fn, np_convert(fill_value, x->dtype, x->weak), nr + 1, vshape);
    ok = fill != NULL;
  }
  if (!ok) {
  } else if (n == 0) { /* as JAX: the fill, else x itself; empty indices, inverse, counts */
    r[0] = fill && size > 0 ? jx_ref(fill) : jx_ref(mv);
    r[1] = bshape(0, it, 1, &zero), r[2] = bshape(0, it, 1, &zero), r[3] = bshape(0, it, 1, &zero);
  } else if (m == 0) { /* empty rows, all equal: JAX's one row (size rows with a fill) */
    vshape[0] = fill ? size : 1;
    r[0] = bshape(0, x->dtype, nr + 1, vshape);
    if (r[0] && x->weak) r[0] = np_convert(r[0], x->dtype, true);
    r[1] = bshape(0, it, 1, &one), r[2] = bshape(0, it, 1, &n), r[3] = bshape((double)n, it, 1, &one);
  } else {
    int64_t s2[2] = {n, m};
    jx_array *rows = prim_reshape(mv, 2, s2);
    /* lexsort's last key is primary: the columns last to first, column 0 primary */
    jx_array **cols = calloc((size_t)m, sizeof *cols);
    ok = cols != NULL;
    for (int64_t j = 0; ok && j < m; j++) {
      int64_t lo[2] = {0, m - 1 - j}, hi[2] = {n, m - j}, st[2] = {1, 1};
      cols[j] = prim_reshape(prim_slice(rows, lo, hi, st), 1, &n);
      ok = cols[j] != NULL;
    }
    jx_array *perm = ok ? jx_lexsort((int)m, cols, 0) : NULL;
    free(cols);
    ok = ok && perm && unique_rows(fn, prim_gather(rows, perm, 0), perm, size,
                                   fill ? prim_reshape(fill, 2, (int64_t[]){size, m}) : NULL, r);
    if (ok) {
      vshape[0] = r[0]->shape[0];
      r[0] = prim_reshape(r[0], nr + 1, vshape);
    }
  }
  if (ok && r[0]) r[0] = jx_moveaxis(r[0], 0, axis);
  return unique_finish(ok, r, outs);
}
