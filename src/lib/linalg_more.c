/* linalg_more.c -- jax.numpy.linalg beyond factorizations: norms, condition numbers,
 * pseudo-inverse, least squares, rank, matrix powers, chained products and the small
 * array-API helpers (cross, vecdot, diagonal, trace, matrix_transpose), plus jnp.kron,
 * jnp.diagonal and jnp.trace. Semantics from jax/_src/numpy/linalg.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/linalg.h"

static int axis_of(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

static double eps_of(jx_dtype d) { return d == JX_FLOAT64 ? 2.220446049250313e-16 : 1.1920928955078125e-07; }

/* ------------------------------------------------------------ diagonal, trace */

jx_array *jx_diagonal(jx_array *a, int64_t offset, int axis1, int axis2) {
  const char *fn = "jx_diagonal";
  if (np_null_arg(fn, a, "a")) return NULL;
  char b[ERROR_SHAPE_BUF];
  if (a->ndim < 2) {
    error_set(JX_ERR_SHAPE, "%s: needs an array of rank >= 2, got shape %s", fn, np_shape_str(b, a));
    return NULL;
  }
  int a1 = axis_of(axis1, a->ndim), a2 = axis_of(axis2, a->ndim);
  if (a1 < 0 || a1 >= a->ndim || a2 < 0 || a2 >= a->ndim || a1 == a2) {
    error_set(JX_ERR_SHAPE, "%s: axes %d and %d are invalid for shape %s", fn, axis1, axis2, np_shape_str(b, a));
    return NULL;
  }
  jx_scope_begin();
  /* move the two axes last, flatten them, and take every (m + 1)-th element */
  int perm[JX_MAX_NDIM], k = 0;
  for (int d = 0; d < a->ndim; d++)
    if (d != a1 && d != a2) perm[k++] = d;
  perm[k++] = a1, perm[k++] = a2;
  jx_array *x = jx_transpose(a, perm);
  if (!x) return np_scope_return(NULL); /* (float0 has no ops) */
  int64_t n = a->shape[a1], m = a->shape[a2];
  /* past either edge the diagonal is empty: clamped so that nothing below overflows
   * (offset INT64_MIN, or -2^62 times m) */
  if (offset > m) offset = m;
  if (offset < -n) offset = -n;
  int64_t size = offset >= 0 ? (n < m - offset ? n : m - offset) : (n + offset < m ? n + offset : m);
  if (size < 0) size = 0;
  int64_t sh[JX_MAX_NDIM];
  memcpy(sh, x->shape, (size_t)(x->ndim - 2) * sizeof *sh);
  sh[x->ndim - 2] = n * m;
  jx_array *flat = jx_reshape(x, x->ndim - 1, sh);
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM], st[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim - 1; d++) lo[d] = 0, hi[d] = JX_SLICE_END, st[d] = 1;
  int64_t start = offset >= 0 ? offset : -offset * m;
  lo[x->ndim - 2] = size ? start : 0;
  hi[x->ndim - 2] = size ? start + (size - 1) * (m + 1) + 1 : 0;
  st[x->ndim - 2] = m + 1;
  return np_scope_return(flat ? jx_slice(flat, x->ndim - 1, lo, hi, st) : NULL);
}

jx_array *jx_trace(jx_array *a, int64_t offset, int axis1, int axis2) {
  jx_scope_begin();
  jx_array *d = jx_diagonal(a, offset, axis1, axis2);
  return np_scope_return(d ? jx_sum(d, 1, (int[]){-1}, false) : NULL);
}

jx_array *jx_linalg_diagonal(jx_array *x, int64_t offset) { return jx_diagonal(x, offset, -2, -1); }
jx_array *jx_linalg_trace(jx_array *x, int64_t offset) { return jx_trace(x, offset, -2, -1); }

jx_array *jx_linalg_matrix_transpose(jx_array *x) {
  if (np_null_arg("jx_linalg_matrix_transpose", x, "x")) return NULL;
  if (x->ndim < 2) {
    char b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "jx_linalg_matrix_transpose: needs rank >= 2, got shape %s", np_shape_str(b, x));
    return NULL;
  }
  return jx_swapaxes(x, -1, -2);
}

/* ------------------------------------------------------------ products */

jx_array *jx_linalg_outer(jx_array *x1, jx_array *x2) {
  const char *fn = "jx_linalg_outer";
  if (np_null_arg(fn, x1, "x1") || np_null_arg(fn, x2, "x2")) return NULL;
  if (x1->ndim != 1 || x2->ndim != 1) {
    char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: needs 1-d arrays, got shapes %s and %s", fn, np_shape_str(b0, x1),
              np_shape_str(b1, x2));
    return NULL;
  }
  return jx_outer(x1, x2);
}

jx_array *jx_linalg_tensordot(jx_array *x1, jx_array *x2, int axes) { return jx_tensordot(x1, x2, axes); }

jx_array *jx_linalg_vecdot(jx_array *x1, jx_array *x2, int axis) {
  const char *fn = "jx_linalg_vecdot";
  if (np_null_arg(fn, x1, "x1") || np_null_arg(fn, x2, "x2")) return NULL;
  int a1 = axis_of(axis, x1->ndim), a2 = axis_of(axis, x2->ndim);
  if (a1 < 0 || a1 >= x1->ndim || a2 < 0 || a2 >= x2->ndim || x1->shape[a1] != x2->shape[a2]) {
    char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: axis %d of shapes %s and %s must exist and match", fn, axis, np_shape_str(b0, x1),
              np_shape_str(b1, x2));
    return NULL;
  }
  jx_scope_begin();
  jx_array *c1 = dtype_is_complex(x1->dtype) ? jx_conj(x1) : x1; /* vdot's conjugate */
  jx_array *p = jx_multiply(jx_moveaxis(c1, a1, -1), jx_moveaxis(x2, a2, -1));
  return np_scope_return(jx_sum(p, 1, (int[]){-1}, false));
}

/* jnp.linalg.cross: both operands have 3 elements along axis; other dims broadcast. */
jx_array *jx_linalg_cross(jx_array *x1, jx_array *x2, int axis) {
  const char *fn = "jx_linalg_cross";
  if (np_null_arg(fn, x1, "x1") || np_null_arg(fn, x2, "x2")) return NULL;
  int a1 = axis_of(axis, x1->ndim), a2 = axis_of(axis, x2->ndim);
  if (a1 < 0 || a1 >= x1->ndim || a2 < 0 || a2 >= x2->ndim || x1->shape[a1] != 3 || x2->shape[a2] != 3) {
    char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: axis %d must have 3 elements in both operands, got shapes %s and %s", fn, axis,
              np_shape_str(b0, x1), np_shape_str(b1, x2));
    return NULL;
  }
  jx_scope_begin();
  jx_array *p[2];
  if (!np_promote(fn, 2, (jx_array *[]){jx_moveaxis(x1, a1, -1), jx_moveaxis(x2, a2, -1)}, p))
    return np_scope_return(NULL);
  jx_array *a[3], *b[3];
  for (int i = 0; i < 3; i++) {
    a[i] = jx_take(p[0], jx_scalar_int(i), -1);
    b[i] = jx_take(p[1], jx_scalar_int(i), -1);
  }
  jx_array *c[3] = {jx_subtract(jx_multiply(a[1], b[2]), jx_multiply(a[2], b[1])),
                    jx_subtract(jx_multiply(a[2], b[0]), jx_multiply(a[0], b[2])),
                    jx_subtract(jx_multiply(a[0], b[1]), jx_multiply(a[1], b[0]))};
  jx_array *r = c[0] && c[1] && c[2] ? jx_stack(3, c, -1) : NULL;
  return np_scope_return(r ? jx_moveaxis(r, -1, axis_of(axis, r->ndim)) : NULL);
}

jx_array *jx_kron(jx_array *a, jx_array *b) {
  const char *fn = "jx_kron";
  if (np_null_arg(fn, a, "a") || np_null_arg(fn, b, "b")) return NULL;
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  if (2 * nd > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: rank %d needs %d dims, above JX_MAX_NDIM", fn, nd, 2 * nd);
    return NULL;
  }
  jx_scope_begin();
  int64_t sa[2 * JX_MAX_NDIM], sb[2 * JX_MAX_NDIM], so[JX_MAX_NDIM];
  for (int d = 0; d < nd; d++) {
    int64_t x = d < nd - a->ndim ? 1 : a->shape[d - (nd - a->ndim)];
    int64_t y = d < nd - b->ndim ? 1 : b->shape[d - (nd - b->ndim)];
    sa[2 * d] = x, sa[2 * d + 1] = 1; /* a's dims interleaved with ones */
    sb[2 * d] = 1, sb[2 * d + 1] = y;
    so[d] = x * y;
  }
  jx_array *r = jx_multiply(jx_reshape(a, 2 * nd, sa), jx_reshape(b, 2 * nd, sb));
  return np_scope_return(r ? jx_reshape(r, nd, so) : NULL);
}

jx_array *jx_linalg_matrix_power(jx_array *a, int64_t n) {
  const char *fn = "jx_linalg_matrix_power";
  if (np_null_arg(fn, a, "a")) return NULL;
  char b[ERROR_SHAPE_BUF];
  if (a->ndim < 2 || a->shape[a->ndim - 1] != a->shape[a->ndim - 2]) {
    error_set(JX_ERR_SHAPE, "%s: needs square matrices, got shape %s", fn, np_shape_str(b, a));
    return NULL;
  }
  jx_scope_begin();
  if (n == 0)
    return np_scope_return(jx_broadcast_to(jx_eye(a->shape[a->ndim - 1], a->dtype), a->ndim, a->shape));
  jx_array *x = a;
  if (n < 0) x = jx_linalg_inv(a), n = -n;
  if (n == 1) return np_scope_return(jx_ref(x));
  if (n == 2) return np_scope_return(jx_matmul(x, x));
  if (n == 3) return np_scope_return(jx_matmul(jx_matmul(x, x), x));
  jx_array *z = NULL, *result = NULL; /* binary decomposition, as JAX */
  while (n > 0 && x) {
    z = z ? jx_matmul(z, z) : x;
    if (n % 2) result = result ? jx_matmul(result, z) : z;
    n /= 2;
  }
  return np_scope_return(result ? jx_ref(result) : NULL);
}

/* jnp.linalg.tensorsolve(a, b, axes): with axes, those axes of a move to the end in
 * ascending order (JAX's moveaxis(a, axes, len(axes) * (a.ndim - 1,)) inserts them so,
 * whatever order axes lists them in); then a's leading b.ndim dims must equal b's shape,
 * x's shape is a's remaining dims, and x = solve(a as (b.size, x.size), ravel(b)). */
jx_array *jx_linalg_tensorsolve(jx_array *a, jx_array *b, int naxes, const int *axes) {
  const char *fn = "jx_linalg_tensorsolve";
  if (np_null_arg(fn, a, "a") || np_null_arg(fn, b, "b")) return NULL;
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  int nd = a->ndim, perm[JX_MAX_NDIM], np_ = 0;
  bool moved[JX_MAX_NDIM] = {false};
  if (axes) {
    for (int i = 0; i < naxes; i++) {
      int ax = axis_of(axes[i], nd);
      if (ax < 0 || ax >= nd || moved[ax]) {
        error_set(JX_ERR_SHAPE, "%s: axes[%d] = %d is out of range or repeated for a of shape %s", fn, i, axes[i],
                  np_shape_str(b0, a));
        return NULL;
      }
      moved[ax] = true;
    }
  }
  for (int i = 0; i < nd; i++)
    if (!moved[i]) perm[np_++] = i;
  for (int i = 0; i < nd; i++)
    if (moved[i]) perm[np_++] = i;
  int64_t sh[JX_MAX_NDIM], xsize = 1;
  for (int i = 0; i < nd; i++) sh[i] = a->shape[perm[i]];
  bool ok = b->ndim <= nd;
  for (int i = 0; ok && i < b->ndim; i++) ok = sh[i] == b->shape[i];
  if (!ok) {
    error_set(JX_ERR_SHAPE, "%s: after moving axes to the end, a's leading dims must equal b's shape: a %s, b %s", fn,
              np_shape_str(b0, a), np_shape_str(b1, b));
    return NULL;
  }
  for (int i = b->ndim; i < nd; i++) xsize *= sh[i];
  if (jx_size(b) != xsize) {
    error_set(JX_ERR_SHAPE, "%s: needs prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]), got a %s (axes moved) and b %s",
              fn, np_shape_str(b0, a), np_shape_str(b1, b));
    return NULL;
  }
  jx_scope_begin();
  jx_array *x = axes ? jx_transpose(a, perm) : a;
  jx_array *r = jx_linalg_solve(jx_reshape(x, 2, (int64_t[]){jx_size(b), xsize}), jx_ravel(b));
  return np_scope_return(r ? jx_reshape(r, nd - b->ndim, sh + b->ndim) : NULL);
}

/* jnp.linalg.tensorinv(a, ind): inv of a as (prod(a.shape[:ind]), prod(a.shape[ind:])),
 * reshaped to a.shape[ind:] + a.shape[:ind]. */
jx_array *jx_linalg_tensorinv(jx_array *a, int ind) {
  const char *fn = "jx_linalg_tensorinv";
  if (np_null_arg(fn, a, "a")) return NULL;
  char b0[ERROR_SHAPE_BUF];
  if (ind <= 0) {
    error_set(JX_ERR_VALUE, "%s: ind must be a positive integer, got %d", fn, ind);
    return NULL;
  }
  int64_t m = 1, n = 1, sh[JX_MAX_NDIM];
  for (int i = 0; i < a->ndim; i++) *(i < ind ? &m : &n) *= a->shape[i];
  if (ind > a->ndim || m != n) {
    error_set(JX_ERR_SHAPE, "%s: the product of the first %d dims must equal that of the others, got shape %s", fn,
              ind, np_shape_str(b0, a));
    return NULL;
  }
  int k = 0;
  for (int i = ind; i < a->ndim; i++) sh[k++] = a->shape[i];
  for (int i = 0; i < ind; i++) sh[k++] = a->shape[i];
  jx_scope_begin();
  jx_array *r = jx_linalg_inv(jx_reshape(a, 2, (int64_t[]){m, n}));
  return np_scope_return(r ? jx_reshape(r, a->ndim, sh) : NULL);
}

/* jnp.linalg.multi_dot: the product in the order of fewest scalar multiplications
 * (the matrix-chain dynamic program); a 1-d first (last) operand is a row (column). */
jx_array *jx_linalg_multi_dot(int n, jx_array *const *arrays) {
  const char *fn = "jx_linalg_multi_dot";
  if (n < 2) {
    error_set(JX_ERR_VALUE, "%s: needs at least two arrays, got %d", fn, n);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (np_null_arg(fn, arrays[i], "an array")) return NULL;
  for (int i = 0; i < n; i++) {
    int want = (i == 0 || i == n - 1) ? arrays[i]->ndim : 2;
    if (arrays[i]->ndim != 2 && !((i == 0 || i == n - 1) && want == 1)) {
      char b[ERROR_SHAPE_BUF];
      error_set(JX_ERR_SHAPE, "%s: array %d must be 2-d (the first and last may be 1-d), got shape %s", fn, i,
                np_shape_str(b, arrays[i]));
      return NULL;
    }
  }
  if (n == 2) return jx_matmul(arrays[0], arrays[1]);
  jx_scope_begin();
  jx_array **m = malloc((size_t)n * sizeof *m);
  int64_t *dims = malloc((size_t)(n + 1) * sizeof *dims);
  double *cost = malloc((size_t)(n * n) * sizeof *cost);
  int *split = malloc((size_t)(n * n) * sizeof *split);
  jx_array *r = NULL;
  if (!m || !dims || !cost || !split) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    goto done;
  }
  for (int i = 0; i < n; i++) m[i] = arrays[i];
  if (m[0]->ndim == 1) m[0] = jx_expand_dims(m[0], 0);
  if (m[n - 1]->ndim == 1) m[n - 1] = jx_expand_dims(m[n - 1], 1);
  for (int i = 0; i < n; i++) {
    if (!m[i]) goto done;
    dims[i] = m[i]->shape[0];
  }
  dims[n] = m[n - 1]->shape[1];
  for (int i = 0; i < n; i++) cost[i * n + i] = 0;
  for (int len = 1; len < n; len++)
    for (int i = 0; i + len < n; i++) {
      int j = i + len;
      cost[i * n + j] = INFINITY;
      for (int k = i; k < j; k++) {
        double c = cost[i * n + k] + cost[(k + 1) * n + j] + (double)dims[i] * (double)dims[k + 1] * (double)dims[j + 1];
        if (c < cost[i * n + j]) cost[i * n + j] = c, split[i * n + j] = k;
      }
    }
  /* evaluate the chosen parenthesization with an explicit stack of ranges */
  {
    jx_array **val = calloc((size_t)(n * n), sizeof *val);
    int (*stack)[3] = malloc((size_t)(4 * n) * sizeof *stack), top = 0;
    if (!val || !stack) {
      free(val), free(stack);
      error_set(JX_ERR_OOM, "%s: out of memory", fn);
      goto done;
    }
    stack[top][0] = 0, stack[top][1] = n - 1, stack[top++][2] = 0;
    while (top > 0) {
      int i = stack[top - 1][0], j = stack[top - 1][1], state = stack[top - 1][2];
      if (i == j) {
        val[i * n + j] = m[i];
        top--;
      } else if (state == 0) {
        int k = split[i * n + j];
        stack[top - 1][2] = 1;
        stack[top][0] = i, stack[top][1] = k, stack[top++][2] = 0;
        stack[top][0] = k + 1, stack[top][1] = j, stack[top++][2] = 0;
      } else {
        int k = split[i * n + j];
        val[i * n + j] = jx_matmul(val[i * n + k], val[(k + 1) * n + j]);
        top--;
      }
    }
    r = val[n - 1];
    free(val), free(stack);
  }
  if (r && arrays[0]->ndim == 1) r = jx_squeeze(r, 1, (int[]){0});
  if (r && arrays[n - 1]->ndim == 1) r = jx_squeeze(r, 1, (int[]){-1});
done:
  free(m), free(dims), free(cost), free(split);
  return np_scope_return(r);
}

/* ------------------------------------------------------------ norms */

/* Parsed ord: NONE (None), FRO, NUC, or a number (inf and -inf included). */
typedef enum { ORD_NONE, ORD_FRO, ORD_NUC, ORD_NUM } OrdKind;

static bool parse_ord(const char *fn, const char *ord, OrdKind *kind, double *p) {
  *p = 0;
  if (!ord) return *kind = ORD_NONE, true;
  if (!strcmp(ord, "fro") || !strcmp(ord, "f")) return *kind = ORD_FRO, true;
  if (!strcmp(ord, "nuc")) return *kind = ORD_NUC, true;
  char *end;
  *p = strtod(ord, &end);
  if (end != ord && *end == '\0') return *kind = ORD_NUM, true;
  error_set(JX_ERR_VALUE, "%s: invalid ord \"%s\" (a number, \"inf\", \"-inf\", \"fro\" or \"nuc\")", fn, ord);
  return false;
}

/* |x|^2 elementwise: real(x * conj(x)) for complex x, as JAX's norms. */
static jx_array *abs2(jx_array *x) {
  if (x && dtype_is_complex(x->dtype)) return jx_real(jx_multiply(x, jx_conj(x)));
  return jx_multiply(x, x);
}

/* jnp.amax(x, axes, initial=0) of x >= 0 (or NaN): the max, and 0 where the reduced axes
 * are empty -- as JAX's norms of ord inf, 1 and 2 (the sum of an empty x has the shape
 * and is 0). */
static jx_array *amax0(jx_array *x, int naxes, const int *axes, bool keepdims) {
  if (!x) return NULL;
  for (int i = 0; i < naxes; i++)
    if (x->shape[axes[i] < 0 ? axes[i] + x->ndim : axes[i]] == 0) return jx_sum(x, naxes, axes, keepdims);
  return jx_max(x, naxes, axes, keepdims);
}

static jx_array *vector_norm_impl(const char *fn, jx_array *x, double ord, int naxes, const int *axes, bool keepdims) {
  jx_dtype rd = dtype_real_part(x->dtype); /* norms of complex arrays are real */
  if (ord == 2) return jx_sqrt(jx_sum(abs2(x), naxes, axes, keepdims));
  if (ord == INFINITY) return amax0(jx_abs(x), naxes, axes, keepdims);
  if (ord == -INFINITY) return jx_min(jx_abs(x), naxes, axes, keepdims);
  if (ord == 0) return jx_astype(jx_sum(jx_not_equal(x, jx_zeros(0, NULL, x->dtype)), naxes, axes, keepdims), rd);
  if (ord == 1) return jx_sum(jx_abs(x), naxes, axes, keepdims);
  jx_array *o = jx_full(0, NULL, ord, rd), *oi = jx_full(0, NULL, 1.0 / ord, rd);
  return jx_power(jx_sum(jx_power(jx_abs(x), o), naxes, axes, keepdims), oi);
}

jx_array *jx_linalg_norm(jx_array *x, const char *ord, int naxes, const int *axes, bool keepdims) {
  const char *fn = "jx_linalg_norm";
  if (np_null_arg(fn, x, "x")) return NULL;
  OrdKind kind;
  double p;
  if (!parse_ord(fn, ord, &kind, &p)) return NULL;
  jx_scope_begin();
  jx_array *a = np_to_inexact(x), *r = NULL;
  char b[ERROR_SHAPE_BUF];
  int ax[JX_MAX_NDIM], nd = a ? a->ndim : 0;
  if (!a) return np_scope_return(NULL);
  if (!axes) {
    if (kind == ORD_NONE) return np_scope_return(jx_sqrt(jx_sum(abs2(a), 0, NULL, keepdims)));
    naxes = nd;
    for (int d = 0; d < nd && d < JX_MAX_NDIM; d++) ax[d] = d;
  } else {
    for (int i = 0; i < naxes && i < JX_MAX_NDIM; i++) ax[i] = axis_of(axes[i], nd);
  }
  for (int i = 0; i < naxes; i++)
    if (ax[i] < 0 || ax[i] >= nd) {
      error_set(JX_ERR_SHAPE, "%s: axis %d out of range for shape %s", fn, axes ? axes[i] : i, np_shape_str(b, a));
      return np_scope_return(NULL);
    }
  if (naxes == 1) {
    if (kind == ORD_FRO || kind == ORD_NUC) {
      error_set(JX_ERR_VALUE, "%s: invalid ord \"%s\" for a vector norm", fn, ord);
      return np_scope_return(NULL);
    }
    return np_scope_return(vector_norm_impl(fn, a, kind == ORD_NONE ? 2 : p, 1, ax, keepdims));
  }
  if (naxes == 2 && ax[0] == ax[1]) {
    error_set(JX_ERR_VALUE, "%s: duplicate value in 'axis': (%d, %d)", fn, axes[0], axes[1]);
    return np_scope_return(NULL);
  }
  if (naxes != 2) {
    error_set(JX_ERR_SHAPE, "%s: improper number of axes (%d) for norm of shape %s: one axis for a vector norm, "
              "two for a matrix norm", fn, naxes, np_shape_str(b, a));
    return np_scope_return(NULL);
  }
  int row = ax[0], col = ax[1];
  if (kind == ORD_NONE || kind == ORD_FRO) {
    r = jx_sqrt(jx_sum(abs2(a), 2, ax, keepdims));
  } else if (kind == ORD_NUM && (p == 1 || p == -1)) {
    if (!keepdims && col > row) col--;
    jx_array *s = jx_sum(jx_abs(a), 1, &row, keepdims);
    r = p == 1 ? amax0(s, 1, &col, keepdims) : jx_min(s, 1, &col, keepdims);
  } else if (kind == ORD_NUM && (p == INFINITY || p == -INFINITY)) {
    if (!keepdims && row > col) row--;
    jx_array *s = jx_sum(jx_abs(a), 1, &col, keepdims);
    r = p > 0 ? amax0(s, 1, &row, keepdims) : jx_min(s, 1, &row, keepdims);
  } else if (kind == ORD_NUC || (kind == ORD_NUM && (p == 2 || p == -2))) {
    jx_array *m = jx_moveaxis(jx_moveaxis(a, row, -1), col < row ? col : col - 1, -1);
    m = jx_swapaxes(m, -1, -2); /* (..., row, col) */
    jx_array *s = jx_linalg_svdvals(m);
    int last = -1;
    r = kind == ORD_NUC ? jx_sum(s, 1, &last, false) : p == 2 ? amax0(s, 1, &last, false) : jx_min(s, 1, &last, false);
    if (r && keepdims) {
      int lo = row < col ? row : col, hi = row < col ? col : row;
      r = jx_expand_dims(jx_expand_dims(r, lo), hi);
    }
  } else {
    error_set(JX_ERR_VALUE, "%s: invalid order \"%s\" for a matrix norm", fn, ord);
  }
  return np_scope_return(r);
}

jx_array *jx_linalg_vector_norm(jx_array *x, double ord, int naxes, const int *axes, bool keepdims) {
  const char *fn = "jx_linalg_vector_norm";
  if (np_null_arg(fn, x, "x")) return NULL;
  jx_scope_begin();
  jx_array *a = np_to_inexact(x), *r;
  if (!a) return np_scope_return(NULL);
  if (!axes) {
    r = vector_norm_impl(fn, jx_ravel(a), ord, 1, (int[]){0}, false);
    for (int d = 0; keepdims && r && d < a->ndim; d++) r = jx_expand_dims(r, 0);
    return np_scope_return(r);
  }
  int ax[JX_MAX_NDIM];
  for (int i = 0; i < naxes && i < JX_MAX_NDIM; i++) {
    ax[i] = axis_of(axes[i], a->ndim);
    if (ax[i] < 0 || ax[i] >= a->ndim) {
      error_set(JX_ERR_SHAPE, "%s: axis %d out of range for rank %d", fn, axes[i], a->ndim);
      return np_scope_return(NULL);
    }
  }
  return np_scope_return(vector_norm_impl(fn, a, ord, naxes, ax, keepdims));
}

jx_array *jx_linalg_matrix_norm(jx_array *x, const char *ord, bool keepdims) {
  return jx_linalg_norm(x, ord ? ord : "fro", 2, (int[]){-2, -1}, keepdims);
}

jx_array *jx_linalg_cond(jx_array *x, const char *p) {
  const char *fn = "jx_linalg_cond";
  OrdKind kind;
  double pv;
  if (!parse_ord(fn, p, &kind, &pv)) return NULL;
  jx_scope_begin();
  jx_array *a = linalg_matrix_arg(fn, x, false), *r = NULL;
  if (!a) return np_scope_return(NULL);
  char b[ERROR_SHAPE_BUF];
  if (a->shape[a->ndim - 1] == 0 || a->shape[a->ndim - 2] == 0) {
    error_set(JX_ERR_SHAPE, "%s: input must not be empty, got shape %s", fn, np_shape_str(b, a));
    return np_scope_return(NULL);
  }
  int64_t k = a->shape[a->ndim - 1] < a->shape[a->ndim - 2] ? a->shape[a->ndim - 1] : a->shape[a->ndim - 2];
  if (kind == ORD_NONE || (kind == ORD_NUM && (pv == 2 || pv == -2))) {
    jx_array *s = jx_linalg_svdvals(a);
    jx_array *first = jx_take(s, jx_scalar_int(0), -1), *last = jx_take(s, jx_scalar_int(k - 1), -1);
    if (kind == ORD_NONE || pv == 2) return np_scope_return(jx_divide(first, last));
    r = jx_divide(last, first);
  } else {
    if (a->shape[a->ndim - 1] != a->shape[a->ndim - 2]) {
      error_set(JX_ERR_SHAPE, "%s: for p=%s the matrices must be square, got shape %s", fn, p, np_shape_str(b, a));
      return np_scope_return(NULL);
    }
    int ax[2] = {-2, -1};
    r = jx_multiply(jx_linalg_norm(a, p, 2, ax, false), jx_linalg_norm(jx_linalg_inv(a), p, 2, ax, false));
  }
  /* NaN becomes inf where the input has no NaN */
  jx_array *clean = jx_logical_not(jx_any(jx_isnan(a), 2, (int[]){-2, -1}, false));
  return np_scope_return(jx_where(jx_logical_and(jx_isnan(r), clean), jx_full(0, NULL, INFINITY, dtype_real_part(a->dtype)), r));
}

/* ------------------------------------------------------------ pinv, lstsq, rank */

/* The conjugate transpose of x's last two dims (x's transpose when real). */
static jx_array *adjoint(jx_array *x) {
  jx_array *t = jx_swapaxes(x, -1, -2);
  return x && dtype_is_complex(x->dtype) ? jx_conj(t) : t;
}

jx_array *jx_linalg_pinv(jx_array *a, double rtol) {
  const char *fn = "jx_linalg_pinv";
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, false);
  if (!x) return np_scope_return(NULL);
  int64_t m = x->shape[x->ndim - 2], n = x->shape[x->ndim - 1];
  if (m == 0 || n == 0) {
    int64_t sh[JX_MAX_NDIM];
    memcpy(sh, x->shape, (size_t)x->ndim * sizeof *sh);
    sh[x->ndim - 2] = n, sh[x->ndim - 1] = m;
    return np_scope_return(jx_zeros(x->ndim, sh, x->dtype));
  }
  jx_dtype rd = dtype_real_part(x->dtype); /* singular values are real */
  if (isnan(rtol)) rtol = 10.0 * (double)(m > n ? m : n) * eps_of(rd);
  jx_array *u[3];
  if (jx_linalg_svd(x, false, true, u) != JX_OK) return np_scope_return(NULL);
  jx_array *s = u[1];
  jx_array *cutoff = jx_multiply(jx_full(0, NULL, rtol, rd), jx_take(s, jx_scalar_int(0), -1));
  jx_array *keep = jx_greater(s, jx_expand_dims(cutoff, -1));
  jx_array *sk = jx_where(keep, s, jx_full(0, NULL, INFINITY, rd));
  /* vh^H (u^H / s[:, None]) */
  jx_array *sk1 = jx_expand_dims(sk, -1);
  jx_array *us = dtype_is_complex(x->dtype) ? jx_multiply(adjoint(u[0]), jx_astype(jx_reciprocal(sk1), x->dtype))
                                            : jx_divide(adjoint(u[0]), sk1); /* 1/inf = 0 in the real part */
  jx_array *r = jx_matmul(adjoint(u[2]), us);
  return np_scope_return(r);
}

jx_array *jx_linalg_matrix_rank(jx_array *M, double rtol) {
  const char *fn = "jx_linalg_matrix_rank";
  if (np_null_arg(fn, M, "M")) return NULL;
  jx_scope_begin();
  jx_array *x = np_to_inexact(M);
  if (!x) return np_scope_return(NULL);
  if (x->ndim < 2)
    return np_scope_return(jx_astype(jx_any(jx_not_equal(x, jx_zeros(0, NULL, x->dtype)), 0, NULL, false), JX_INT32));
  jx_array *s = jx_linalg_svdvals(x), *tol;
  if (!s) return np_scope_return(NULL);
  int64_t mx = x->shape[x->ndim - 1] > x->shape[x->ndim - 2] ? x->shape[x->ndim - 1] : x->shape[x->ndim - 2];
  jx_dtype rd = dtype_real_part(x->dtype);
  if (isnan(rtol)) tol = jx_multiply(jx_max(s, 1, (int[]){-1}, false), jx_full(0, NULL, (double)mx * eps_of(rd), rd));
  else tol = jx_full(0, NULL, rtol, rd);
  return np_scope_return(jx_sum(jx_greater(s, jx_expand_dims(tol, -1)), 1, (int[]){-1}, false));
}

jx_status jx_linalg_lstsq(jx_array *a, jx_array *b, double rcond, jx_array **out) {
  const char *fn = "jx_linalg_lstsq";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  for (int i = 0; i < 4; i++) out[i] = NULL;
  if (np_null_arg(fn, a, "a") || np_null_arg(fn, b, "b")) return JX_ERR_VALUE;
  jx_scope_begin();
  jx_array *p[2];
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  if (!np_promote(fn, 2, (jx_array *[]){np_to_inexact(a), b}, p)) return linalg_return_n(4, out);
  jx_array *A = p[0], *B = p[1];
  if (A->ndim != 2 || B->ndim < 1 || B->ndim > 2 || A->shape[0] != B->shape[0]) {
    error_set(JX_ERR_SHAPE, "%s: needs a 2-d a and a 1-d or 2-d b with equal leading dims, got %s and %s", fn,
              np_shape_str(b0, A), np_shape_str(b1, B));
    return linalg_return_n(4, out);
  }
  bool vec = B->ndim == 1;
  if (vec) B = jx_expand_dims(B, 1);
  int64_t m = A->shape[0], n = A->shape[1];
  jx_dtype rd = dtype_real_part(A->dtype); /* s and the residuals are real */
  jx_array *x, *s, *rank;
  if (m == 0 || n == 0) {
    s = jx_zeros(1, (int64_t[]){0}, rd);
    rank = jx_astype(jx_scalar_int(0), dtype_default_int()); /* sum(mask)'s dtype, as the other branch */
    x = jx_zeros(2, (int64_t[]){n, B->shape[1]}, A->dtype);
  } else {
    if (isnan(rcond)) rcond = eps_of(rd) * (double)(m > n ? m : n);
    else if (rcond < 0) rcond = eps_of(rd);
    jx_array *u[3];
    if (jx_linalg_svd(A, false, true, u) != JX_OK) return linalg_return_n(4, out);
    s = u[1];
    /* JAX's mask: zero singular values are dropped whatever rcond is (rcond 0, or an
     * all-zero a, where rcond * s[0] is 0) */
    jx_array *cut = jx_multiply(jx_full(0, NULL, rcond, rd), jx_take(s, jx_scalar_int(0), 0));
    jx_array *mask = jx_logical_and(jx_greater(s, jx_zeros(0, NULL, rd)), jx_greater_equal(s, cut));
    rank = jx_sum(mask, 0, NULL, false);
    jx_array *safe = jx_where(mask, s, jx_ones(0, NULL, rd));
    jx_array *sinv = jx_expand_dims(jx_where(mask, jx_reciprocal(safe), jx_zeros(0, NULL, rd)), 1);
    jx_array *utb = jx_matmul(adjoint(u[0]), B);
    x = jx_matmul(adjoint(u[2]), jx_multiply(jx_astype(sinv, A->dtype), utb));
  }
  jx_array *d = x ? jx_subtract(B, jx_matmul(A, x)) : NULL;
  jx_array *resid = d ? jx_sum(abs2(d), 1, (int[]){0}, false) : NULL;
  if (vec && x) x = jx_ravel(x);
  out[0] = x, out[1] = resid, out[2] = rank, out[3] = s;
  return linalg_return_n(4, out);
}

/* ------------------------------------------------------------------ expm */
/* jax.scipy.linalg.expm: scaling and squaring with a Pade approximant chosen by the
 * 1-norm (N. J. Higham, "The scaling and squaring method for the matrix exponential
 * revisited", SIAM J. Matrix Anal. Appl. 26(4), 2005: the coefficients b_k of the
 * [m/m] approximants and the thresholds theta_m; the float32 set and the choice
 * through lax.switch as jax/_src/scipy/linalg.py makes it). The choice of order and the
 * number of squarings are values of the input, so everything runs through lax.switch /
 * lax.cond and stays traceable (jit, grad, vmap). */

static const double pade_coef[5][14] = {
    {120., 60., 12., 1.},
    {30240., 15120., 3360., 420., 30., 1.},
    {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.},
    {17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.},
    {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
     10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.},
};
static const int pade_order[5] = {3, 5, 7, 9, 13};

/* c0 * X0 + c1 * X1 + ... (n terms, NULL-safe through the ops) */
static jx_array *lincomb(int n, const double *c, jx_array *const *x) {
  jx_array *r = jx_multiply(jx_scalar(c[0]), x[0]);
  for (int i = 1; i < n; i++) r = jx_add(r, jx_multiply(jx_scalar(c[i]), x[i]));
  return r;
}

/* One lax.switch branch: (U, V) of the Pade approximant of order pade_order[ctx]; the
 * approximant is (V + U) / (V - U). */
static jx_status expm_pade(void *ctx, jx_array *const *in, jx_array **out) {
  int which = (int)(intptr_t)ctx, m = pade_order[which];
  const double *b = pade_coef[which];
  jx_array *a = in[0];
  jx_array *id = jx_eye(a->shape[a->ndim - 1], a->dtype), *a2 = jx_matmul(a, a);
  if (m == 13) {
    jx_array *a4 = jx_matmul(a2, a2), *a6 = jx_matmul(a4, a2);
    jx_array *hi_u = jx_matmul(a6, lincomb(3, (double[]){b[13], b[11], b[9]}, (jx_array *[]){a6, a4, a2}));
    jx_array *lo_u = lincomb(4, (double[]){b[7], b[5], b[3], b[1]}, (jx_array *[]){a6, a4, a2, id});
    out[0] = jx_matmul(a, jx_add(hi_u, lo_u));
    jx_array *hi_v = jx_matmul(a6, lincomb(3, (double[]){b[12], b[10], b[8]}, (jx_array *[]){a6, a4, a2}));
    out[1] = jx_add(hi_v, lincomb(4, (double[]){b[6], b[4], b[2], b[0]}, (jx_array *[]){a6, a4, a2, id}));
  } else {
    jx_array *pw[5] = {id, a2}; /* pw[k] = a^(2k) */
    int top = m / 2;            /* highest even power / 2 */
    for (int k = 2; k <= top; k++) pw[k] = jx_matmul(pw[k - 1], a2);
    jx_array *terms[5];
    double cu[5], cv[5];
    for (int k = top, i = 0; k >= 0; k--, i++) terms[i] = pw[k], cu[i] = b[2 * k + 1], cv[i] = b[2 * k];
    out[0] = jx_matmul(a, lincomb(top + 1, cu, terms));
    out[1] = lincomb(top + 1, cv, terms);
  }
  return out[0] && out[1] ? JX_OK : jx_last_status();
}

static jx_status expm_square(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_matmul(in[0], in[0]);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status expm_identity(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_ref(in[0]);
  return JX_OK;
}

typedef struct {
  int max_squarings;
  bool upper_triangular;
} ExpmOptions;

/* cond's true branch when more than max_squarings squarings are needed: NaNs (JAX). */
static jx_status expm_nan(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_full_like(in[0], NAN);
  return out[0] ? JX_OK : jx_last_status();
}

/* cond's false branch: R = Q^-1 P, squared n_squarings times (operands A, P, Q, s). */
static jx_status expm_finish(void *ctx, jx_array *const *in, jx_array **out) {
  const ExpmOptions *o = ctx;
  jx_array *p = in[1], *q = in[2], *s = in[3];
  jx_array *r = o->upper_triangular ? jx_scipy_linalg_solve_triangular(q, p, 0, false, false)
                                    : jx_linalg_solve(q, p);
  jx_fn *sq = jx_fn_new("expm_square", 1, 1, expm_square, NULL);
  jx_fn *id = jx_fn_new("expm_identity", 1, 1, expm_identity, NULL);
  jx_status st = r && sq && id ? JX_OK : jx_last_status();
  /* JAX scans max_squarings steps of cond(i < n_squarings, square, identity) */
  for (int i = 0; i < o->max_squarings && st == JX_OK; i++) {
    jx_array *next[1];
    st = jx_lax_cond(jx_less(jx_scalar_of(i, s->dtype), s), sq, id, 1, &r, next);
    r = next[0];
  }
  jx_fn_free(sq), jx_fn_free(id);
  out[0] = st == JX_OK ? r : NULL;
  return st;
}

/* expm of one (n, n) matrix of an inexact dtype: ctx is the ExpmOptions. */
static jx_status expm_matrix(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *a = in[0];
  bool f64 = a->dtype == JX_FLOAT64 || a->dtype == JX_COMPLEX128; /* JAX's _calc_P_Q */
  jx_array *l1 = jx_linalg_norm(a, "1", 0, NULL, false);
  jx_array *s = jx_maximum(jx_scalar(0), jx_floor(jx_log2(jx_divide(l1, jx_scalar(f64 ? 5.371920351148152
                                                                                        : 3.925724783138660)))));
  jx_array *scaled = jx_divide(a, jx_exp2(s));
  const double th64[4] = {1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                          2.097847961257068e+000};
  const double th32[2] = {4.258730016922831e-001, 1.880152677804762e+000};
  int nth = f64 ? 4 : 2;
  jx_array *idx = jx_scalar_of(0, JX_INT32); /* jnp.digitize: how many thresholds <= |A|_1 */
  for (int i = 0; i < nth; i++)
    idx = jx_add(idx, jx_astype(jx_greater_equal(l1, jx_scalar(f64 ? th64[i] : th32[i])), JX_INT32));
  jx_fn *br[5] = {NULL};
  for (int i = 0; i <= nth; i++) br[i] = jx_fn_new("expm_pade", 1, 2, expm_pade, (void *)(intptr_t)i);
  jx_array *uv[2] = {NULL, NULL};
  jx_status st = jx_lax_switch(idx, nth + 1, br, 1, &scaled, uv);
  for (int i = 0; i <= nth; i++) jx_fn_free(br[i]);
  if (st != JX_OK) return st;
  jx_array *p = jx_add(uv[0], uv[1]), *q = jx_subtract(uv[1], uv[0]);
  jx_fn *nan_fn = jx_fn_new("expm_nan", 4, 1, expm_nan, NULL);
  jx_fn *fin = jx_fn_new("expm_finish", 4, 1, expm_finish, ctx);
  const ExpmOptions *o = ctx;
  st = jx_lax_cond(jx_greater(s, jx_scalar(o->max_squarings)), nan_fn, fin, 4, (jx_array *[]){a, p, q, s}, out);
  jx_fn_free(nan_fn), jx_fn_free(fin);
  return st;
}

jx_array *jx_scipy_linalg_expm(jx_array *a, bool upper_triangular, int max_squarings) {
  const char *fn = "jx_scipy_linalg_expm";
  if (np_null_arg(fn, a, "a")) return NULL;
  char b[ERROR_SHAPE_BUF];
  if (a->ndim < 2 || a->shape[a->ndim - 1] != a->shape[a->ndim - 2]) {
    error_set(JX_ERR_SHAPE, "%s: expected a (batched) square matrix, got shape %s", fn, np_shape_str(b, a));
    return NULL;
  }
  if (max_squarings < 0) {
    error_set(JX_ERR_VALUE, "%s: max_squarings must be >= 0, got %d", fn, max_squarings);
    return NULL;
  }
  jx_scope_begin();
  jx_array *x = np_to_inexact(a);
  if (x && (x->dtype == JX_FLOAT16 || x->dtype == JX_BFLOAT16)) { /* JAX: TypeError */
    error_set(JX_ERR_DTYPE, "%s: dtype %s is not supported (float32, float64, complex64 or complex128)", fn,
              jx_dtype_name(x->dtype));
    x = NULL;
  }
  if (!x) return np_scope_return(NULL);
  int64_t n = a->shape[a->ndim - 1], batch = 1;
  for (int d = 0; d < a->ndim - 2; d++) batch *= a->shape[d];
  ExpmOptions opts = {max_squarings, upper_triangular};
  jx_fn *f = jx_fn_new("expm", 1, 1, expm_matrix, &opts);
  jx_array *r[1] = {NULL};
  if (batch == 0 || n == 0) {
    r[0] = jx_ref(x);
  } else if (a->ndim == 2) {
    if (jx_call(f, &x, r) != JX_OK) r[0] = NULL;
  } else { /* jnp.vectorize over the batch dims, as JAX */
    jx_fn *vf = jx_vmap(f, NULL, NULL);
    jx_array *flat = jx_reshape(x, 3, (int64_t[]){batch, n, n});
    if (!flat || jx_call(vf, &flat, r) != JX_OK) r[0] = NULL;
    r[0] = r[0] ? jx_reshape(r[0], a->ndim, a->shape) : NULL;
    jx_fn_free(vf);
  }
  jx_fn_free(f);
  return np_scope_return(r[0]);
}

/* --------------------------------------------------------------- polyfit */
/* jnp.polyfit (jax/_src/numpy/polynomial.py): the Vandermonde matrix of x (highest
 * power first), rows weighted by w, columns scaled to unit norm, solved by lstsq with
 * rcond (NAN: len(x) * eps), the coefficients unscaled. full: also (residuals, rank,
 * singular values, rcond); cov: the coefficients' covariance inv(A^T A) / outer(scale,
 * scale), times residuals / (len(x) - order) unless cov is "unscaled". */
jx_status jx_polyfit(jx_array *x, jx_array *y, int deg, double rcond, bool full, jx_array *w,
                     jx_polyfit_cov cov, jx_array **out) {
  const char *fn = "jx_polyfit";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  int nout = full ? 5 : cov != JX_POLYFIT_COV_NONE ? 2 : 1; /* only those slots are touched */
  for (int i = 0; i < nout; i++) out[i] = NULL;
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, y, "y")) return JX_ERR_VALUE;
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  jx_status bad = JX_OK;
  if (deg < 0) {
    error_set(bad = JX_ERR_VALUE, "%s: expected deg >= 0, got %d", fn, deg);
  } else if (cov != JX_POLYFIT_COV_NONE && cov != JX_POLYFIT_COV_SCALED &&
             cov != JX_POLYFIT_COV_UNSCALED) {
    error_set(bad = JX_ERR_VALUE, "%s: cov must be a jx_polyfit_cov, got %d", fn, (int)cov);
  } else if (x->ndim != 1 || x->shape[0] == 0) {
    error_set(bad = JX_ERR_SHAPE, "%s: expected a non-empty 1-d x, got shape %s", fn, np_shape_str(b0, x));
  } else if (y->ndim < 1 || y->ndim > 2 || y->shape[0] != x->shape[0]) {
    error_set(bad = JX_ERR_SHAPE, "%s: expected a 1-d or 2-d y as long as x, got shapes %s and %s", fn,
              np_shape_str(b0, x), np_shape_str(b1, y));
  } else if (w && (w->ndim != 1 || w->shape[0] != y->shape[0])) {
    error_set(bad = JX_ERR_SHAPE, "%s: expected a 1-d w as long as y, got shapes %s and %s", fn,
              np_shape_str(b0, w), np_shape_str(b1, y));
  }
  if (bad != JX_OK) return bad;
  int64_t n = x->shape[0], order = (int64_t)deg + 1;
  if (cov == JX_POLYFIT_COV_SCALED && !full && n <= order) {
    error_set(JX_ERR_VALUE, "%s: the number of data points (%lld) must exceed order (%lld) to scale "
              "the covariance matrix", fn, (long long)n, (long long)order);
    return JX_ERR_VALUE;
  }
  jx_scope_begin();
  jx_array *xi = np_to_inexact(x);
  if (isnan(rcond)) rcond = (double)n * eps_of(xi ? dtype_real_part(xi->dtype) : JX_FLOAT32);
  /* vander(x, order): x[:, None] ** (order - 1 - j) */
  jx_array *pw = jx_subtract(jx_scalar_int(order - 1), jx_arange(0, (double)order, 1, JX_INT32));
  jx_array *lhs = jx_power(jx_expand_dims(x, 1), pw), *rhs = y;
  if (w) {
    jx_array *wc = jx_expand_dims(np_to_inexact(w), 1);
    lhs = jx_multiply(lhs, wc);
    rhs = jx_multiply(rhs, rhs->ndim == 2 ? wc : jx_squeeze(wc, 1, (int[]){1}));
  }
  jx_array *scale = jx_sqrt(jx_sum(jx_multiply(lhs, lhs), 1, (int[]){0}, false));
  lhs = jx_divide(lhs, jx_expand_dims(scale, 0));
  jx_array *ls[4] = {NULL};
  if (!lhs || !rhs || jx_linalg_lstsq(lhs, rhs, rcond, ls) != JX_OK) return linalg_return_n(nout, out);
  /* c / scale along the coefficient axis (axis 0 of c (order,) or (order, k)) */
  jx_array *c = jx_divide(ls[0], ls[0]->ndim == 2 ? jx_expand_dims(scale, 1) : scale);
  out[0] = c;
  if (full) {
    out[1] = ls[1], out[2] = ls[2], out[3] = ls[3];
    out[4] = jx_scalar(rcond); /* lax.asarray(rcond): a weak float */
    return linalg_return_n(5, out);
  }
  if (cov != JX_POLYFIT_COV_NONE) {
    jx_array *vbase = jx_divide(jx_linalg_inv(jx_matmul(jx_linalg_matrix_transpose(lhs), lhs)), jx_outer(scale, scale));
    jx_array *fac = cov == JX_POLYFIT_COV_UNSCALED
                        ? jx_ones(1, (int64_t[]){1}, ls[1] ? ls[1]->dtype : JX_FLOAT32)
                        : jx_divide(ls[1], jx_scalar_int(n - order));
    if (y->ndim == 1)
      out[1] = jx_multiply(vbase, jx_expand_dims(jx_atleast_1d(fac), 0));
    else
      out[1] = jx_multiply(jx_expand_dims(vbase, 2), jx_expand_dims(jx_expand_dims(jx_atleast_1d(fac), 0), 0));
    return linalg_return_n(2, out);
  }
  return linalg_return_n(1, out);
}
