/* movement.c -- jnp shape manipulation: reshape, transpose, broadcasting, concatenate,
 * stack, split, pad, flip, roll, tile, repeat, basic slicing and take. Built from the
 * movement, concatenate and gather primitives (views: nothing here copies data except
 * concatenate and gather). Semantics from jax/_src/numpy/lax_numpy.py and indexing.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

/* Every public function runs in its own scope: temporaries die at its end, only the
 * result survives (a NULL result is fine). */
/* JX_ERR_OOM for a result shape whose dims or size overflow int64 (over is set by the
 * caller's per-dim checks); otherwise validates it like any user shape. */
static bool check_result(const char *fn, const jx_array *x, int ndim, const int64_t *shape,
                         bool over) {
  char b[ERROR_SHAPE_BUF];
  if (over || shape_numel_checked(ndim, shape) < 0) {
    error_set(JX_ERR_OOM, "%s: the result of shape %s would have more than INT64_MAX "
              "elements", fn, error_shape_str(b, x->ndim, x->shape));
    return false;
  }
  return array_check_shape(fn, ndim, shape);
}

/* x[start:stop] along one axis (0 <= start <= stop <= dim). */
static jx_array *slice_axis(jx_array *x, int axis, int64_t start, int64_t stop) {
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM], st[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) lo[d] = 0, hi[d] = x->shape[d], st[d] = 1;
  lo[axis] = start;
  hi[axis] = stop;
  return prim_slice(x, lo, hi, st);
}

/* --------------------------------------------------------------- reshape */

/* Resolves a user shape with at most one -1 against size (lax_numpy.py
 * _compute_newshape): out gets the concrete shape. */
static bool resolve_shape(const char *fn, const jx_array *x, int ndim, const int64_t *shape,
                          int64_t *out) {
  if (ndim < 0 || ndim > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: ndim %d is outside [0, %d]", fn, ndim, JX_MAX_NDIM);
    return false;
  }
  if (ndim > 0 && np_null_arg(fn, shape, "shape")) return false;
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  int unknown = -1;
  for (int d = 0; d < ndim; d++) {
    out[d] = shape[d] == -1 ? 1 : shape[d];
    if (shape[d] < -1 || (shape[d] == -1 && unknown >= 0)) {
      error_set(JX_ERR_SHAPE, "%s: bad shape %s (dims must be >= 0, with at most one -1)",
                fn, error_shape_str(b0, ndim, shape));
      return false;
    }
    if (shape[d] == -1) unknown = d;
  }
  int64_t known = shape_numel_checked(ndim, out), size = jx_size(x);
  if (known < 0) {
    error_set(JX_ERR_SHAPE, "%s: cannot reshape array of shape %s into shape %s (its size "
              "overflows int64)", fn, error_shape_str(b0, x->ndim, x->shape),
              error_shape_str(b1, ndim, shape));
    return false;
  }
  if (unknown >= 0 && known > 0 && size % known == 0) out[unknown] = size / known;
  if ((unknown >= 0 && (known == 0 || size % known != 0)) ||
      (unknown < 0 && known != size)) {
    error_set(JX_ERR_SHAPE, "%s: cannot reshape array of shape %s (size %lld) into shape %s",
              fn, error_shape_str(b0, x->ndim, x->shape), (long long)size,
              error_shape_str(b1, ndim, shape));
    return false;
  }
  return true;
}

jx_array *jx_reshape(jx_array *x, int ndim, const int64_t *shape) {
  int64_t s[JX_MAX_NDIM] = {0};
  if (np_null_arg("jx_reshape", x, "x") || !resolve_shape("jx_reshape", x, ndim, shape, s))
    return NULL;
  return prim_reshape(x, ndim, s);
}

jx_array *jx_ravel(jx_array *x) {
  if (np_null_arg("jx_ravel", x, "x")) return NULL;
  int64_t n = jx_size(x);
  return prim_reshape(x, 1, &n);
}

/* ------------------------------------------------------------- permuting */

jx_array *jx_transpose(jx_array *x, const int *perm) {
  if (np_null_arg("jx_transpose", x, "x")) return NULL;
  int p[JX_MAX_NDIM];
  bool seen[JX_MAX_NDIM] = {false};
  for (int d = 0; d < x->ndim; d++) {
    p[d] = perm ? perm[d] : x->ndim - 1 - d;
    if (!array_normalize_axis("jx_transpose", &p[d], x->ndim)) return NULL;
    if (seen[p[d]]) {
      error_set(JX_ERR_SHAPE, "jx_transpose: axes are not a permutation (axis %d repeated)",
                perm[d]);
      return NULL;
    }
    seen[p[d]] = true;
  }
  return prim_transpose(x, p);
}

jx_array *jx_swapaxes(jx_array *x, int axis1, int axis2) {
  if (np_null_arg("jx_swapaxes", x, "x")) return NULL;
  if (!array_normalize_axis("jx_swapaxes", &axis1, x->ndim) ||
      !array_normalize_axis("jx_swapaxes", &axis2, x->ndim))
    return NULL;
  int p[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) p[d] = d;
  p[axis1] = axis2;
  p[axis2] = axis1;
  return prim_transpose(x, p);
}

jx_array *jx_moveaxis(jx_array *x, int source, int destination) {
  if (np_null_arg("jx_moveaxis", x, "x")) return NULL;
  if (!array_normalize_axis("jx_moveaxis", &source, x->ndim) ||
      !array_normalize_axis("jx_moveaxis", &destination, x->ndim))
    return NULL;
  int p[JX_MAX_NDIM], k = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != source) p[k++] = d;
  memmove(p + destination + 1, p + destination, (size_t)(x->ndim - 1 - destination) * sizeof(int));
  p[destination] = source;
  return prim_transpose(x, p);
}

/* ---------------------------------------------------------- broadcasting */

jx_array *jx_broadcast_to(jx_array *x, int ndim, const int64_t *shape) {
  const char *fn = "jx_broadcast_to";
  if (np_null_arg(fn, x, "x") || !array_check_shape(fn, ndim, shape)) return NULL;
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  int lead = ndim - x->ndim, bdims[JX_MAX_NDIM];
  bool ok = lead >= 0;
  for (int i = 0; ok && i < x->ndim; i++) {
    bdims[i] = lead + i;
    ok = x->shape[i] == shape[lead + i] || x->shape[i] == 1;
  }
  if (!ok) {
    error_set(JX_ERR_SHAPE, "%s: cannot broadcast shape %s to shape %s", fn,
              error_shape_str(b0, x->ndim, x->shape), error_shape_str(b1, ndim, shape));
    return NULL;
  }
  return prim_broadcast_in_dim(x, ndim, shape, bdims);
}

jx_array *jx_expand_dims(jx_array *x, int axis) {
  const char *fn = "jx_expand_dims";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (x->ndim >= JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: result rank would exceed %d", fn, JX_MAX_NDIM);
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, x->ndim + 1)) return NULL;
  int64_t s[JX_MAX_NDIM];
  for (int d = 0, k = 0; d <= x->ndim; d++) s[d] = d == axis ? 1 : x->shape[k++];
  return prim_reshape(x, x->ndim + 1, s);
}

jx_array *jx_squeeze(jx_array *x, int naxes, const int *axes) {
  const char *fn = "jx_squeeze";
  bool mask[JX_MAX_NDIM];
  if (np_null_arg(fn, x, "x") || !array_axes_mask(fn, naxes, axes, x->ndim, mask)) return NULL;
  int64_t s[JX_MAX_NDIM];
  int n = 0;
  for (int d = 0; d < x->ndim; d++) {
    if (axes && mask[d] && x->shape[d] != 1) {
      char b[ERROR_SHAPE_BUF];
      error_set(JX_ERR_SHAPE, "%s: cannot squeeze axis %d of shape %s: its size is not 1",
                fn, d, error_shape_str(b, x->ndim, x->shape));
      return NULL;
    }
    if (!(mask[d] && x->shape[d] == 1)) s[n++] = x->shape[d];
  }
  return prim_reshape(x, n, s);
}

/* ------------------------------------------------------- joining, splitting */

/* Validates n arrays for concatenation along axis (equal rank >= 1, equal dims except
 * axis) and normalizes axis. */
static bool check_concat(const char *fn, int n, jx_array *const *xs, int *axis) {
  if (n < 1 || !xs) {
    error_set(JX_ERR_VALUE, "%s: need at least one array to concatenate", fn);
    return false;
  }
  for (int i = 0; i < n; i++)
    if (np_null_arg(fn, xs[i], "an input array")) return false;
  if (xs[0]->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: zero-dimensional arrays cannot be concatenated", fn);
    return false;
  }
  if (!array_normalize_axis(fn, axis, xs[0]->ndim)) return false;
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    bool ok = xs[i]->ndim == xs[0]->ndim;
    for (int d = 0; ok && d < xs[0]->ndim; d++)
      ok = d == *axis || xs[i]->shape[d] == xs[0]->shape[d];
    if (ok && total > INT64_MAX - xs[i]->shape[*axis]) {
      error_set(JX_ERR_OOM, "%s: the length of the result along axis %d overflows int64", fn, *axis);
      return false;
    }
    if (!ok) {
      char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
      error_set(JX_ERR_SHAPE, "%s: shapes %s and %s do not match except along axis %d", fn,
                error_shape_str(b0, xs[0]->ndim, xs[0]->shape),
                error_shape_str(b1, xs[i]->ndim, xs[i]->shape), *axis);
      return false;
    }
    total += xs[i]->shape[*axis];
  }
  return true;
}

/* prim_concatenate takes at most KERNEL_MAX_ARGS operands: join groups of 32 first.
 * Overwrites p (entry m is written after group m*32 was read). */
static jx_array *concat_many(int n, jx_array **p, int axis) {
  while (n > 32) {
    int m = 0;
    for (int i = 0; i < n; i += 32) {
      int k = n - i < 32 ? n - i : 32;
      p[m++] = k == 1 ? p[i] : prim_concatenate(k, p + i, axis);
    }
    n = m;
  }
  return prim_concatenate(n, p, axis);
}

/* Promotes (JAX rules) then concatenates; call inside a scope. */
static jx_array *concat_impl(const char *fn, int n, jx_array *const *xs, int axis) {
  if (!check_concat(fn, n, xs, &axis)) return NULL;
  jx_array **p = malloc((size_t)n * sizeof *p);
  if (!p) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  jx_array *r = np_promote(fn, n, xs, p) ? concat_many(n, p, axis) : NULL;
  free(p);
  return r;
}

jx_array *jx_concatenate(int n, jx_array *const *xs, int axis) {
  jx_scope_begin();
  return np_scope_return(concat_impl("jx_concatenate", n, xs, axis));
}

jx_array *jx_stack(int n, jx_array *const *xs, int axis) {
  const char *fn = "jx_stack";
  if (n < 1 || !xs) {
    error_set(JX_ERR_VALUE, "%s: need at least one array to stack", fn);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (np_null_arg(fn, xs[i], "an input array")) return NULL;
  for (int i = 1; i < n; i++) {
    if (xs[i]->ndim != xs[0]->ndim ||
        memcmp(xs[i]->shape, xs[0]->shape, (size_t)xs[0]->ndim * sizeof(int64_t)) != 0) {
      char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
      error_set(JX_ERR_SHAPE, "%s: all input arrays must have the same shape: %s and %s",
                fn, error_shape_str(b0, xs[0]->ndim, xs[0]->shape),
                error_shape_str(b1, xs[i]->ndim, xs[i]->shape));
      return NULL;
    }
  }
  if (xs[0]->ndim >= JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: result rank would exceed %d", fn, JX_MAX_NDIM);
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, xs[0]->ndim + 1)) return NULL;
  jx_array **e = malloc((size_t)n * sizeof *e);
  if (!e) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  jx_scope_begin();
  for (int i = 0; i < n; i++) e[i] = jx_expand_dims(xs[i], axis);
  jx_array *r = concat_impl(fn, n, e, axis);
  free(e);
  return np_scope_return(r);
}

/* Pieces x[b[i]:b[i+1]] along axis for the npieces+1 boundaries b (validated: 0 = b[0]
 * <= ... <= b[npieces] = dim). */
static jx_status split_at(jx_array *x, int axis, int npieces, const int64_t *b, jx_array **out) {
  jx_scope_begin();
  bool ok = true;
  for (int i = 0; i < npieces; i++) ok = (out[i] = slice_axis(x, axis, b[i], b[i + 1])) && ok;
  if (!ok)
    for (int i = 0; i < npieces; i++) out[i] = NULL;
  jx_scope_end(npieces, out);
  return ok ? JX_OK : jx_last_status();
}

jx_status jx_split(jx_array *x, int64_t sections, int axis, jx_array **out) {
  const char *fn = "jx_split";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, out, "out")) return jx_last_status();
  if (!array_normalize_axis(fn, &axis, x->ndim)) return jx_last_status();
  int64_t dim = x->shape[axis];
  if (sections < 1 || sections > INT32_MAX || dim % sections != 0) {
    error_set(sections < 1 ? JX_ERR_VALUE : JX_ERR_SHAPE,
              "%s: %lld sections do not divide axis %d of size %lld equally", fn,
              (long long)sections, axis, (long long)dim);
    return jx_last_status();
  }
  int64_t *b = malloc((size_t)(sections + 1) * sizeof *b);
  if (!b) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return JX_ERR_OOM;
  }
  for (int64_t i = 0; i <= sections; i++) b[i] = i * (dim / sections);
  jx_status s = split_at(x, axis, (int)sections, b, out);
  free(b);
  return s;
}

jx_status jx_split_indices(jx_array *x, int nidx, const int64_t *indices, int axis,
                           jx_array **out) {
  const char *fn = "jx_split_indices";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, out, "out")) return jx_last_status();
  if (nidx < 0 || (nidx > 0 && !indices) || nidx == INT32_MAX) {
    error_set(JX_ERR_VALUE, "%s: bad index list (%d indices)", fn, nidx);
    return JX_ERR_VALUE;
  }
  if (!array_normalize_axis(fn, &axis, x->ndim)) return jx_last_status();
  int64_t *b = malloc((size_t)(nidx + 2) * sizeof *b);
  if (!b) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return JX_ERR_OOM;
  }
  b[0] = 0;
  b[nidx + 1] = x->shape[axis];
  for (int i = 0; i < nidx; i++) b[i + 1] = indices[i];
  /* As jnp.split: the pieces' sizes are the differences of [0, *indices, dim], which
   * lax.split requires to be non-negative. */
  for (int i = 0; i <= nidx; i++) {
    if (b[i] > b[i + 1] || b[i] < 0) {
      error_set(JX_ERR_SHAPE, "%s: indices must ascend within [0, %lld] (axis %d); got %lld "
                "after %lld", fn, (long long)x->shape[axis], axis, (long long)b[i + 1],
                (long long)b[i]);
      free(b);
      return JX_ERR_SHAPE;
    }
  }
  jx_status s = split_at(x, axis, nidx + 1, b, out);
  free(b);
  return s;
}

/* jnp.array_split(x, sections, axis): as jnp.split, but when sections does not divide the
 * axis the first dim % sections pieces get one element more (JAX's _split). */
jx_status jx_array_split(jx_array *x, int64_t sections, int axis, jx_array **out) {
  const char *fn = "jx_array_split";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, out, "out")) return jx_last_status();
  if (!array_normalize_axis(fn, &axis, x->ndim)) return jx_last_status();
  if (sections < 1 || sections > INT32_MAX - 1) {
    error_set(JX_ERR_VALUE, "%s: the number of sections must be positive, got %lld", fn, (long long)sections);
    return JX_ERR_VALUE;
  }
  int64_t dim = x->shape[axis], part = dim / sections, rest = dim % sections;
  int64_t *b = malloc((size_t)(sections + 1) * sizeof *b);
  if (!b) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return JX_ERR_OOM;
  }
  b[0] = 0;
  for (int64_t i = 0; i < sections; i++) b[i + 1] = b[i] + part + (i < rest);
  jx_status s = split_at(x, axis, (int)sections, b, out);
  free(b);
  return s;
}

/* jnp.meshgrid(*xs, sparse, indexing): n 1-d arrays to n grids of shape (len(x0), ...,
 * len(xn-1)) -- the first two lengths swapped for indexing "xy" -- each varying along
 * its own axis (sparse: that axis only, size 1 elsewhere). Each keeps its dtype. */
jx_status jx_meshgrid(int n, jx_array *const *xs, bool sparse, const char *indexing, jx_array **out) {
  const char *fn = "jx_meshgrid";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  if (n < 0 || n > JX_MAX_NDIM || (n > 0 && !xs)) {
    error_set(JX_ERR_VALUE, "%s: between 0 and %d arrays, got %d", fn, JX_MAX_NDIM, n);
    return JX_ERR_VALUE;
  }
  for (int i = 0; i < n; i++) out[i] = NULL;
  bool xy = !indexing || !strcmp(indexing, "xy");
  if (!xy && strcmp(indexing, "ij") != 0) {
    error_set(JX_ERR_VALUE, "%s: valid values for indexing are 'xy' and 'ij', got '%s'", fn, indexing);
    return JX_ERR_VALUE;
  }
  int64_t shape[JX_MAX_NDIM];
  for (int i = 0; i < n; i++) {
    if (np_null_arg(fn, xs[i], "an array")) return JX_ERR_VALUE;
    if (xs[i]->ndim != 1) {
      error_set(JX_ERR_SHAPE, "%s: arguments must be 1-d, got rank %d for argument %d", fn, xs[i]->ndim, i);
      return JX_ERR_SHAPE;
    }
  }
  /* axis of argument i: "xy" swaps the first two */
  int ax[JX_MAX_NDIM] = {0};
  for (int i = 0; i < n; i++) ax[i] = xy && n >= 2 && i < 2 ? 1 - i : i;
  for (int i = 0; i < n; i++) shape[ax[i]] = xs[i]->shape[0];
  jx_scope_begin();
  jx_array *r[JX_MAX_NDIM];
  bool ok = true;
  for (int i = 0; i < n; i++) {
    int64_t s[JX_MAX_NDIM];
    for (int d = 0; d < n; d++) s[d] = d == ax[i] ? shape[d] : 1;
    r[i] = jx_reshape(xs[i], n, s);
    if (!sparse) r[i] = jx_broadcast_to(r[i], n, shape);
    ok = r[i] && ok;
  }
  if (!ok) return np_scope_return(NULL), jx_last_status();
  jx_scope_end(n, r);
  for (int i = 0; i < n; i++) out[i] = r[i];
  return JX_OK;
}

/* ------------------------------------------------------ padding, flipping */

jx_array *jx_pad(jx_array *x, const int64_t *pad_width, double value) {
  const char *fn = "jx_pad";
  if (np_null_arg(fn, x, "x") || (x->ndim > 0 && np_null_arg(fn, pad_width, "pad_width")))
    return NULL;
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM], s[JX_MAX_NDIM];
  bool over = false;
  for (int d = 0; d < x->ndim; d++) {
    lo[d] = pad_width[2 * d];
    hi[d] = pad_width[2 * d + 1];
    if (lo[d] < 0 || hi[d] < 0) {
      error_set(JX_ERR_VALUE, "%s: negative pad width (%lld, %lld) for axis %d", fn,
                (long long)lo[d], (long long)hi[d], d);
      return NULL;
    }
    bool o = lo[d] > INT64_MAX - x->shape[d] || hi[d] > INT64_MAX - x->shape[d] - lo[d];
    s[d] = o ? 0 : x->shape[d] + lo[d] + hi[d];
    over |= o;
  }
  if (!check_result(fn, x, x->ndim, s, over)) return NULL;
  return prim_pad(x, lo, hi, value);
}

jx_array *jx_flip(jx_array *x, int naxes, const int *axes) {
  bool mask[JX_MAX_NDIM];
  if (np_null_arg("jx_flip", x, "x") || !array_axes_mask("jx_flip", naxes, axes, x->ndim, mask))
    return NULL;
  return prim_rev(x, mask);
}

/* jnp.roll: the last (shift mod n) elements move to the front: two slices and a
 * concatenate. JX_AXIS_NONE rolls the flattened array and restores the shape. */
static jx_array *roll_impl(jx_array *x, int64_t shift, int axis) {
  if (axis == JX_AXIS_NONE) {
    int64_t n = jx_size(x);
    jx_array *r = roll_impl(prim_reshape(x, 1, &n), shift, 0);
    return r ? prim_reshape(r, x->ndim, x->shape) : NULL;
  }
  if (!x || !array_normalize_axis("jx_roll", &axis, x->ndim)) return NULL;
  int64_t n = x->shape[axis];
  int64_t s = n ? ((shift % n) + n) % n : 0;
  if (s == 0) return prim_reshape(x, x->ndim, x->shape);
  jx_array *parts[2] = {slice_axis(x, axis, n - s, n), slice_axis(x, axis, 0, n - s)};
  return prim_concatenate(2, parts, axis);
}

jx_array *jx_roll(jx_array *x, int64_t shift, int axis) {
  if (np_null_arg("jx_roll", x, "x")) return NULL;
  jx_scope_begin();
  return np_scope_return(roll_impl(x, shift, axis));
}

/* ---------------------------------------------------------- tile, repeat */

/* Repeats whole axis `axis` r times: (..., d, ...) -> (..., r, d, ...) by a broadcast,
 * then merged to (..., r*d, ...). */
static jx_array *tile_axis(jx_array *x, int axis, int64_t r) {
  int64_t s[JX_MAX_NDIM];
  int bd[JX_MAX_NDIM];
  for (int d = 0, k = 0; d <= x->ndim; d++) {
    s[d] = d == axis ? r : x->shape[k];
    if (d != axis) bd[k] = d, k++;
  }
  jx_array *b = prim_broadcast_in_dim(x, x->ndim + 1, s, bd);
  int64_t m[JX_MAX_NDIM];
  memcpy(m, x->shape, sizeof m);
  m[axis] = r * x->shape[axis];
  return prim_reshape(b, x->ndim, m);
}

jx_array *jx_tile(jx_array *x, int nreps, const int64_t *reps) {
  const char *fn = "jx_tile";
  if (np_null_arg(fn, x, "x") || (nreps > 0 && np_null_arg(fn, reps, "reps"))) return NULL;
  if (nreps < 0 || nreps > JX_MAX_NDIM) {
    error_set(JX_ERR_VALUE, "%s: %d repetition counts (expected 0 to %d)", fn, nreps,
              JX_MAX_NDIM);
    return NULL;
  }
  int nd = nreps > x->ndim ? nreps : x->ndim;
  int64_t xs[JX_MAX_NDIM], rs[JX_MAX_NDIM], out[JX_MAX_NDIM];
  bool over = false;
  for (int d = 0; d < nd; d++) {
    xs[d] = d < nd - x->ndim ? 1 : x->shape[d - (nd - x->ndim)];
    rs[d] = d < nd - nreps ? 1 : reps[d - (nd - nreps)];
    if (rs[d] < 0) {
      error_set(JX_ERR_VALUE, "%s: negative repetition count %lld", fn, (long long)rs[d]);
      return NULL;
    }
    over |= xs[d] && rs[d] > INT64_MAX / xs[d];
    out[d] = over ? 0 : xs[d] * rs[d];
  }
  if (!check_result(fn, x, nd, out, over)) return NULL;
  for (int d = 0; d < nd && nd == JX_MAX_NDIM; d++) {
    if (rs[d] != 1) { /* tile_axis needs one spare dimension */
      error_set(JX_ERR_UNSUPPORTED, "%s: tiling a rank-%d array is not supported", fn, nd);
      return NULL;
    }
  }
  jx_scope_begin();
  jx_array *y = prim_reshape(x, nd, xs);
  for (int d = 0; d < nd && y; d++)
    if (rs[d] != 1) y = tile_axis(y, d, rs[d]);
  return np_scope_return(y);
}

/* jnp.repeat with a scalar count: (..., d, ...) -> (..., d, r, ...) -> (..., d*r, ...). */
jx_array *jx_repeat(jx_array *x, int64_t repeats, int axis) {
  const char *fn = "jx_repeat";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (repeats < 0) {
    error_set(JX_ERR_VALUE, "%s: negative repeat count %lld", fn, (long long)repeats);
    return NULL;
  }
  int64_t n = jx_size(x);
  if (x->ndim == 0) axis = JX_AXIS_NONE; /* JAX ravels a 0-d array whatever the axis */
  int nd = axis == JX_AXIS_NONE ? 1 : x->ndim;
  const int64_t *shape = axis == JX_AXIS_NONE ? &n : x->shape;
  if (axis == JX_AXIS_NONE) axis = 0;
  else if (!array_normalize_axis(fn, &axis, x->ndim)) return NULL;
  if (nd >= JX_MAX_NDIM) {
    error_set(JX_ERR_UNSUPPORTED, "%s: repeating a rank-%d array is not supported", fn, nd);
    return NULL;
  }
  int64_t s[JX_MAX_NDIM], out[JX_MAX_NDIM];
  int bd[JX_MAX_NDIM];
  for (int d = 0; d <= nd; d++) s[d] = d <= axis ? shape[d] : shape[d - 1];
  s[axis + 1] = repeats;
  for (int d = 0; d < nd; d++) bd[d] = d <= axis ? d : d + 1, out[d] = shape[d];
  bool over = shape[axis] && repeats > INT64_MAX / shape[axis];
  out[axis] = over ? 0 : shape[axis] * repeats;
  if (!check_result(fn, x, nd, out, over)) return NULL;
  jx_scope_begin();
  jx_array *b = prim_broadcast_in_dim(prim_reshape(x, nd, shape), nd + 1, s, bd);
  return np_scope_return(prim_reshape(b, nd, out));
}

/* ----------------------------------------------------------------- slicing */

/* Python's slice.indices (CPython PySlice_AdjustIndices) for one axis of size n:
 * first index and element count. JX_SLICE_END stands for an omitted bound. */
int64_t movement_slice_adjust(int64_t n, int64_t start, int64_t stop, int64_t step,
                              int64_t *first) {
  bool neg = step < 0;
  if (start == JX_SLICE_END) start = neg ? n - 1 : 0;
  else if (start < 0) start = start + n < 0 ? (neg ? -1 : 0) : start + n;
  else if (start >= n) start = neg ? n - 1 : n;
  if (stop == JX_SLICE_END) stop = neg ? -1 : n;
  else if (stop < 0) stop = stop + n < 0 ? (neg ? -1 : 0) : stop + n;
  else if (stop >= n) stop = neg ? n - 1 : n;
  *first = start;
  /* Counts in unsigned arithmetic: |step| may be 2^63. */
  uint64_t mag = neg ? 0 - (uint64_t)step : (uint64_t)step;
  uint64_t span = neg ? (uint64_t)(start - stop) : (uint64_t)(stop - start);
  if (neg ? stop >= start : start >= stop) return 0;
  return (int64_t)((span - 1) / mag + 1);
}

/* x[start:stop:step, ...] over the first nslice axes: axes with negative steps are
 * reversed (prim_rev) so every step becomes positive, then one strided prim_slice. */
jx_array *jx_slice(jx_array *x, int nslice, const int64_t *start, const int64_t *stop,
                   const int64_t *step) {
  const char *fn = "jx_slice";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (nslice < 0 || nslice > x->ndim) {
    error_set(JX_ERR_SHAPE, "%s: %d slices for an array of rank %d", fn, nslice, x->ndim);
    return NULL;
  }
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM], st[JX_MAX_NDIM];
  bool rev[JX_MAX_NDIM] = {false};
  for (int d = 0; d < x->ndim; d++) {
    int64_t n = x->shape[d], s = d < nslice && step ? step[d] : 1, first;
    if (s == 0) {
      error_set(JX_ERR_VALUE, "%s: slice step cannot be zero (axis %d)", fn, d);
      return NULL;
    }
    int64_t count = d < nslice ? movement_slice_adjust(n, start ? start[d] : JX_SLICE_END,
                                              stop ? stop[d] : JX_SLICE_END, s, &first)
                               : n;
    if (d >= nslice) first = 0;
    rev[d] = s < 0;
    uint64_t mag = s < 0 ? 0 - (uint64_t)s : (uint64_t)s;
    lo[d] = count ? (rev[d] ? n - 1 - first : first) : 0;
    /* stop = last index + 1 fits: the last index is < n. */
    /* A step longer than the axis takes one element (then step n, or 1 when n == 0). */
    st[d] = mag > (uint64_t)n ? (n ? n : 1) : (int64_t)mag;
    hi[d] = count ? lo[d] + (count - 1) * st[d] + 1 : 0;
  }
  jx_scope_begin();
  jx_array *y = prim_slice(prim_rev(x, rev), lo, hi, st);
  return np_scope_return(y);
}

/* -------------------------------------------------------------------- take */

/* jnp.take's default mode "fill" (indexing.py _take: FILL_OR_DROP): negative indices
 * in [-n, 0) wrap; any other index outside [0, n) yields the fill value: NaN for
 * floats, NaN + 0j for complex (JAX: nan+0.j), the most negative value for signed ints,
 * the largest for unsigned ints and true for bool. */
static double take_fill(jx_dtype d) {
  if (dtype_is_inexact(d)) return NAN;
  if (dtype_is_bool(d)) return 1;
  return dtype_is_unsigned(d) ? dtype_max_value(d) : dtype_min_value(d);
}

static jx_array *take_impl(const char *fn, jx_array *x, jx_array *idx, int axis) {
  if (axis == JX_AXIS_NONE) {
    int64_t n = jx_size(x);
    x = prim_reshape(x, 1, &n);
    axis = 0;
  } else if (!array_normalize_axis(fn, &axis, x->ndim)) {
    return NULL;
  }
  if (!x) return NULL;
  int64_t n = x->shape[axis], out[JX_MAX_NDIM];
  int nd = x->ndim - 1 + idx->ndim;
  if (nd > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: result rank %d exceeds %d", fn, nd, JX_MAX_NDIM);
    return NULL;
  }
  for (int d = 0; d < nd; d++)
    out[d] = d < axis ? x->shape[d]
             : d < axis + idx->ndim ? idx->shape[d - axis] : x->shape[d - idx->ndim + 1];
  if (n == 0 || jx_size(idx) == 0) {
    if (jx_size(idx) != 0) {
      error_set(JX_ERR_SHAPE, "%s: cannot do a non-empty take from an empty axis", fn);
      return NULL;
    }
    return np_full(0, x->dtype, nd, out);
  }
  /* Index arithmetic in at least 32 bits so that i + n cannot wrap. */
  jx_dtype it = idx->dtype;
  if (dtype_bits(it) < 32) it = dtype_default_int();
  jx_array *i = np_convert(idx, it, false);
  double nmax = fmin((double)n, dtype_max_value(it));
  jx_array *nn = np_full(nmax, it, idx->ndim, idx->shape);
  jx_array *valid = prim_binary(PRIM_lt, i, nn);
  if (dtype_is_signed(it)) {
    jx_array *zero = np_full(0, it, idx->ndim, idx->shape);
    i = prim_select(prim_binary(PRIM_lt, i, zero), prim_binary(PRIM_add, i, nn), i);
    valid = prim_binary(PRIM_and, prim_unary(PRIM_not, prim_binary(PRIM_lt, i, zero)),
                        prim_binary(PRIM_lt, i, nn));
  }
  jx_array *g = prim_gather(x, i, axis);
  int bd[JX_MAX_NDIM];
  for (int d = 0; d < idx->ndim; d++) bd[d] = axis + d;
  jx_array *vb = prim_broadcast_in_dim(valid, nd, out, bd);
  return prim_select(vb, g, np_full(take_fill(x->dtype), x->dtype, nd, out));
}

jx_array *jx_take(jx_array *x, jx_array *indices, int axis) {
  const char *fn = "jx_take";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, indices, "indices")) return NULL;
  if (!dtype_is_integer(indices->dtype)) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_DTYPE, "%s: indices must be integers, got %s", fn,
              array_describe(b, indices));
    return NULL;
  }
  jx_scope_begin();
  jx_array *r = take_impl(fn, x, indices, axis);
  return np_scope_return(np_convert(r, x->dtype, x->weak)); /* weak iff x is, as JAX */
}
