/* nonzero.c -- jnp.nonzero / flatnonzero / argwhere with a static `size`, and
 * jnp.partition / argpartition (jax/_src/numpy/lax_numpy.py): built from cumsum,
 * searchsorted and top_k, so they trace under jit and vmap when size is given. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "lib/numpy/np.h"

static jx_array *wi(int64_t v) { return jx_scalar_int(v); }

/* jnp.nonzero(a, size=size, fill_value=fill): per dimension, the coordinates of the
 * nonzero elements in C order, truncated or padded to `size` (padding: 0, or fill). The
 * k-th flat index is the count of positions whose running count of nonzeros is <= k
 * (searchsorted right into the cumsum, as JAX's bincount/cumsum). size < 0: the count
 * read from the data (concrete a only). An empty a gives zeros whatever fill_value, as
 * JAX's (lax_numpy.nonzero returns zeros(size) early for arr.size == 0). */
jx_status jx_nonzero(jx_array *a, int64_t size, const int64_t *fill_value, jx_array **out) {
  const char *fn = "jx_nonzero";
  if (!out) {
    error_set(JX_ERR_VALUE, "%s: out is NULL", fn);
    return JX_ERR_VALUE;
  }
  if (np_null_arg(fn, a, "a")) return JX_ERR_VALUE;
  for (int d = 0; d < a->ndim; d++) out[d] = NULL;
  if (a->ndim == 0) {
    error_set(JX_ERR_VALUE, "%s: calling nonzero on 0d arrays is not allowed (use atleast_1d)", fn);
    return JX_ERR_VALUE;
  }
  if (jx_size(a) == 0) fill_value = NULL;
  jx_scope_begin();
  jx_array *mask = jx_ravel(dtype_is_bool(a->dtype) ? a : jx_not_equal(a, wi(0)));
  jx_array *count = jx_sum(jx_astype(mask, JX_INT32), 0, NULL, false);
  if (size < 0) {
    if (a->tracer) {
      error_set(JX_ERR_VALUE, "%s: size must be given (>= 0) under a transformation", fn);
      return np_scope_return(NULL), JX_ERR_VALUE;
    }
    size = count ? (int64_t)jx_item(count) : 0;
  }
  jx_dtype it = jx_config_x64_enabled() ? JX_INT64 : JX_INT32;
  jx_array *c = jx_cumsum(jx_astype(mask, JX_INT32), 0), *flat = NULL;
  jx_array *k = jx_arange(0, (double)size, 1, JX_INT32);
  if (!c || !k || jx_searchsorted(c, k, true, &flat) != JX_OK) return np_scope_return(NULL), jx_last_status();
  flat = jx_astype(flat, it);
  jx_array *pad = jx_greater_equal(k, count);
  jx_array *r[JX_MAX_NDIM];
  int64_t stride = 1;
  for (int d = a->ndim - 1; d >= 0; d--) {
    jx_array *coord = a->shape[d] ? jx_remainder(jx_floor_divide(flat, jx_astype(wi(stride), it)),
                                                 jx_astype(wi(a->shape[d]), it))
                                  : jx_zeros_like(flat);
    if (fill_value) coord = jx_where(pad, jx_astype(wi(fill_value[d]), it), coord);
    r[d] = coord;
    stride *= a->shape[d] ? a->shape[d] : 1;
  }
  for (int d = 0; d < a->ndim; d++)
    if (!r[d]) return np_scope_return(NULL), jx_last_status();
  jx_scope_end(a->ndim, r);
  for (int d = 0; d < a->ndim; d++) out[d] = r[d];
  return JX_OK;
}

/* jnp.flatnonzero(a, size, fill_value): nonzero of the flattened a. */
jx_array *jx_flatnonzero(jx_array *a, int64_t size, const int64_t *fill_value) {
  if (np_null_arg("jx_flatnonzero", a, "a")) return NULL;
  jx_scope_begin();
  jx_array *r = NULL;
  jx_nonzero(jx_ravel(a), size, fill_value, &r);
  return np_scope_return(r);
}

/* jnp.argwhere(a, size, fill_value): (size, ndim) coordinates of the nonzero elements
 * (a 0-d a counts as 1-d; its result has 0 columns). */
jx_array *jx_argwhere(jx_array *a, int64_t size, const int64_t *fill_value) {
  if (np_null_arg("jx_argwhere", a, "a")) return NULL;
  jx_scope_begin();
  jx_array *v = jx_atleast_1d(a), *cols[JX_MAX_NDIM];
  if (!v || jx_nonzero(v, size, fill_value, cols) != JX_OK) return np_scope_return(NULL);
  jx_array *r = jx_stack(v->ndim, cols, 1);
  if (r && a->ndim == 0) r = jx_slice(r, 2, (int64_t[]){0, 0}, (int64_t[]){JX_SLICE_END, 0}, (int64_t[]){1, 1});
  return np_scope_return(r);
}

/* x with axis moved to the end (and back). */
static jx_array *to_last(jx_array *x, int axis) { return jx_moveaxis(x, axis, -1); }

static bool part_args(const char *fn, jx_array *a, int64_t *kth, int *axis) {
  if (np_null_arg(fn, a, "a")) return false;
  if (a->ndim == 0 || *axis < -a->ndim || *axis >= a->ndim) {
    error_set(JX_ERR_SHAPE, "%s: axis %d out of range for rank %d", fn, *axis, a->ndim);
    return false;
  }
  if (*axis < 0) *axis += a->ndim;
  int64_t n = a->shape[*axis];
  if (*kth < -n || *kth >= n) {
    error_set(JX_ERR_VALUE, "%s: kth %lld out of range for axis of size %lld", fn, (long long)*kth, (long long)n);
    return false;
  }
  if (*kth < 0) *kth += n;
  if (dtype_is_unsigned(a->dtype) || dtype_is_bool(a->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: unsigned and bool arrays are not supported yet", fn);
    return false;
  }
  return true;
}

/* jnp.partition(a, kth, axis): along axis, the kth + 1 smallest in ascending order
 * (so position kth holds the kth smallest), then the others in descending order --
 * JAX's -top_k(-a, kth + 1) and top_k(a, n - kth - 1). Signed and float dtypes. */
jx_array *jx_partition(jx_array *a, int64_t kth, int axis) {
  const char *fn = "jx_partition";
  if (!part_args(fn, a, &kth, &axis)) return NULL;
  jx_scope_begin();
  jx_array *x = to_last(a, axis), *bottom = NULL, *top = NULL;
  if (!x) return np_scope_return(NULL); /* (float0 has no ops) */
  int64_t n = x->shape[x->ndim - 1];
  if (jx_top_k(jx_negative(x), kth + 1, &bottom, NULL) != JX_OK) return np_scope_return(NULL);
  if (jx_top_k(x, n - kth - 1, &top, NULL) != JX_OK) return np_scope_return(NULL);
  jx_array *r = jx_concatenate(2, (jx_array *[]){jx_negative(bottom), top}, -1);
  return np_scope_return(jx_moveaxis(r, -1, axis));
}

/* jnp.argpartition(a, kth, axis): the positions partition takes its values from
 * (JAX's: the bottom from top_k(-a), the rest from top_k of a 0/1 proxy marking the
 * bottom positions 0, so duplicates are never taken twice). int32. */
jx_array *jx_argpartition(jx_array *a, int64_t kth, int axis) {
  const char *fn = "jx_argpartition";
  if (!part_args(fn, a, &kth, &axis)) return NULL;
  jx_scope_begin();
  jx_array *x = to_last(a, axis), *bottom = NULL, *top = NULL;
  if (!x) return np_scope_return(NULL); /* (float0 has no ops) */
  int64_t n = x->shape[x->ndim - 1];
  if (jx_top_k(jx_negative(x), kth + 1, NULL, &bottom) != JX_OK) return np_scope_return(NULL);
  jx_array *taken = jx_sum(jx_nn_one_hot(bottom, n, JX_FLOAT32, -1), 1, (int[]){-2}, false);
  jx_array *proxy = jx_subtract(jx_scalar(1.0), taken);
  if (jx_top_k(proxy, n - kth - 1, NULL, &top) != JX_OK) return np_scope_return(NULL);
  jx_array *r = jx_concatenate(2, (jx_array *[]){bottom, top}, -1);
  return np_scope_return(jx_moveaxis(r, -1, axis));
}
