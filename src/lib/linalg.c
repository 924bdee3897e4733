/* linalg.c -- lax.linalg, jax.numpy.linalg and jax.scipy.linalg over the linear-algebra
 * primitives (trace/linalg.c): factorizations, solves, determinants. Semantics follow
 * jax/_src/lax/linalg.py, jax/_src/numpy/linalg.py and jax/_src/scipy/linalg.py;
 * every function takes leading batch dims. */
#include <math.h>
#include <string.h>

#include "lib/linalg.h"
#include "lib/special.h"

/* ------------------------------------------------------------ helpers */

static jx_array *mT(jx_array *x) { return x ? jx_swapaxes(x, -1, -2) : NULL; }
static bool is_cplx(jx_array *x) { return x && dtype_is_complex(x->dtype); }
/* JAX's _H: the conjugate transpose (the transpose for real x). */
static jx_array *mH(jx_array *x) { return is_cplx(x) ? jx_conj(mT(x)) : mT(x); }

/* A float operand of rank >= 2 (square if asked): bool/int promote to the default
 * float (promote_dtypes_inexact); JX_ERR_SHAPE naming fn otherwise. */
jx_array *linalg_matrix_arg(const char *fn, jx_array *a, bool square) {
  if (np_null_arg(fn, a, "a")) return NULL;
  char b[ERROR_SHAPE_BUF];
  if (a->ndim < 2) {
    error_set(JX_ERR_SHAPE, "%s: needs an array of rank >= 2, got shape %s", fn, np_shape_str(b, a));
    return NULL;
  }
  if (square && a->shape[a->ndim - 1] != a->shape[a->ndim - 2]) {
    error_set(JX_ERR_SHAPE, "%s: needs square matrices, got shape %s", fn, np_shape_str(b, a));
    return NULL;
  }
  return np_to_inexact(a);
}

/* A lax.linalg operand that must be a stack of square matrices, checked before any
 * arithmetic on it (symmetrize_input's x + x^H would otherwise report jx_add's broadcast
 * error): JX_ERR_SHAPE naming fn. Dtypes are left to the primitive (lax takes inexact
 * dtypes only, without promotion). */
static bool lax_square_arg(const char *fn, jx_array *x) {
  char b[ERROR_SHAPE_BUF];
  if (x->ndim < 2) {
    error_set(JX_ERR_SHAPE, "%s: needs an array of rank >= 2, got shape %s", fn, np_shape_str(b, x));
    return false;
  }
  if (x->shape[x->ndim - 1] != x->shape[x->ndim - 2]) {
    error_set(JX_ERR_SHAPE, "%s: needs square matrices, got shape %s", fn, np_shape_str(b, x));
    return false;
  }
  return true;
}

/* Ends the caller's scope keeping the n results (NULL ones are fine) and returns the
 * status: JX_OK when every result exists. */
jx_status linalg_return_n(int n, jx_array **out) {
  jx_status s = JX_OK;
  for (int i = 0; i < n; i++)
    if (!out[i]) s = jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
  if (s != JX_OK)
    for (int i = 0; i < n; i++) out[i] = NULL;
  jx_scope_end(s == JX_OK ? n : 0, out);
  return s;
}

/* x broadcast to the batch dims `bshape` (nb of them) followed by its last `keep` dims. */
static jx_array *broadcast_batch(const char *fn, jx_array *x, int nb, const int64_t *bshape, int keep) {
  if (!x) return NULL;
  int64_t sh[JX_MAX_NDIM];
  if (nb + keep > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: rank %d exceeds JX_MAX_NDIM", fn, nb + keep);
    return NULL;
  }
  memcpy(sh, bshape, (size_t)nb * sizeof *sh);
  memcpy(sh + nb, x->shape + x->ndim - keep, (size_t)keep * sizeof *sh);
  return np_broadcast_to(fn, x, nb + keep, sh);
}

/* The broadcast of the batch dims of n arrays: all but the last keep[i] dims of x[i]. */
static bool batch_shape_n(const char *fn, int n, jx_array *const *x, const int *keep, int *nb, int64_t *shape) {
  *nb = 0;
  for (int i = 0; i < n; i++)
    if (x[i]->ndim - keep[i] > *nb) *nb = x[i]->ndim - keep[i];
  int from[JX_MAX_NDIM]; /* which array fixed each dim (-1: none yet) */
  for (int d = 0; d < *nb; d++) shape[d] = 1, from[d] = -1;
  for (int i = 0; i < n; i++) {
    int nd = x[i]->ndim - keep[i], off = *nb - nd;
    for (int d = 0; d < nd; d++) {
      int64_t v = x[i]->shape[d];
      if (v == 1) continue;
      if (shape[off + d] != 1 && shape[off + d] != v) {
        char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
        error_set(JX_ERR_SHAPE, "%s: batch dimensions of %s and %s do not broadcast", fn,
                  np_shape_str(b0, x[from[off + d]]), np_shape_str(b1, x[i]));
        return false;
      }
      shape[off + d] = v, from[off + d] = i;
    }
  }
  return true;
}

/* The broadcast of the batch dims (all but the last ka / kb) of a and b. */
static bool batch_shape(const char *fn, jx_array *a, int ka, jx_array *b, int kb, int *nb, int64_t *shape) {
  return batch_shape_n(fn, 2, (jx_array *[]){a, b}, (int[]){ka, kb}, nb, shape);
}

/* The diagonal of the last two dims of square x: (..., n). */
static jx_array *diag_of(jx_array *x) {
  if (!x) return NULL;
  jx_array *eye = jx_eye(x->shape[x->ndim - 1], x->dtype);
  return jx_sum(jx_multiply(x, eye), 1, (int[]){-1}, false);
}

/* x[..., start[0]:stop[0], ..., start[n-1]:stop[n-1]] over its last n axes. */
static jx_array *slice_last(jx_array *x, int n, const int64_t *start, const int64_t *stop) {
  if (!x) return NULL;
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) lo[d] = 0, hi[d] = JX_SLICE_END;
  for (int i = 0; i < n; i++) lo[x->ndim - n + i] = start[i], hi[x->ndim - n + i] = stop[i];
  return jx_slice(x, x->ndim, lo, hi, NULL);
}

/* ------------------------------------------------------------ lax.linalg */

jx_array *jx_lax_linalg_cholesky(jx_array *x, bool symmetrize_input) {
  const char *fn = "jx_lax_linalg_cholesky";
  if (np_null_arg(fn, x, "x") || !lax_square_arg(fn, x)) return NULL;
  jx_scope_begin();
  jx_array *a = x;
  if (symmetrize_input) a = jx_divide(jx_add(x, mH(x)), jx_scalar(2));
  return np_scope_return(prim_cholesky(a));
}

jx_array *jx_lax_linalg_triangular_solve(jx_array *a, jx_array *b, bool left_side, bool lower, bool transpose_a,
                                         bool conjugate_a, bool unit_diagonal) {
  const char *fn = "jx_lax_linalg_triangular_solve";
  if (np_null_arg(fn, a, "a") || np_null_arg(fn, b, "b")) return NULL;
  jx_scope_begin();
  unsigned f = (left_side ? LINALG_LEFT_SIDE : 0) | (lower ? LINALG_LOWER : 0) |
               (transpose_a ? LINALG_TRANSPOSE_A : 0) | (unit_diagonal ? LINALG_UNIT_DIAGONAL : 0) |
               (conjugate_a && is_cplx(a) ? LINALG_CONJUGATE_A : 0); /* real: conjugation is the identity */
  bool singleton = b->ndim == a->ndim - 1; /* a vector b, as JAX */
  jx_array *bb = singleton ? jx_expand_dims(b, left_side ? -1 : -2) : b;
  jx_array *r = prim_triangular_solve(a, bb, f);
  if (r && singleton) r = jx_squeeze(r, 1, (int[]){left_side ? -1 : -2});
  return np_scope_return(r);
}

jx_array *jx_lax_linalg_tridiagonal_solve(jx_array *dl, jx_array *d, jx_array *du, jx_array *b) {
  const char *fn = "jx_lax_linalg_tridiagonal_solve";
  if (np_null_arg(fn, dl, "dl") || np_null_arg(fn, d, "d") || np_null_arg(fn, du, "du") || np_null_arg(fn, b, "b"))
    return NULL;
  return prim_tridiagonal_solve(dl, d, du, b);
}

jx_status jx_lax_linalg_lu(jx_array *x, jx_array **out) {
  if (np_null_arg("jx_lax_linalg_lu", out, "out")) return JX_ERR_VALUE;
  out[0] = out[1] = out[2] = NULL;
  if (np_null_arg("jx_lax_linalg_lu", x, "x")) return JX_ERR_VALUE;
  jx_scope_begin();
  if (prim_lu(x, out) != JX_OK) out[0] = NULL;
  return linalg_return_n(3, out);
}

/* lax.linalg._lu_solve_core with batch dims: b (..., m, n) with lu's batch dims. */
static jx_array *lu_solve_core(jx_array *lu, jx_array *perm, jx_array *b, int trans) {
  if (!lu || !perm || !b) return NULL;
  int64_t sh[JX_MAX_NDIM];
  memcpy(sh, b->shape, (size_t)b->ndim * sizeof *sh);
  if (trans == 0) {
    jx_array *idx = jx_broadcast_to(jx_expand_dims(perm, -1), b->ndim, sh);
    jx_array *x = jx_take_along_axis(b, idx, -2, JX_INDEX_PROMISE_IN_BOUNDS);
    x = prim_triangular_solve(lu, x, LINALG_LEFT_SIDE | LINALG_LOWER | LINALG_UNIT_DIAGONAL);
    return prim_triangular_solve(lu, x, LINALG_LEFT_SIDE);
  }
  unsigned t = LINALG_LEFT_SIDE | LINALG_TRANSPOSE_A | (trans == 2 && is_cplx(lu) ? LINALG_CONJUGATE_A : 0);
  jx_array *x = prim_triangular_solve(lu, b, t);
  x = prim_triangular_solve(lu, x, t | LINALG_LOWER | LINALG_UNIT_DIAGONAL);
  jx_array *inv = jx_argsort(perm, -1, false);
  jx_array *idx = inv ? jx_broadcast_to(jx_expand_dims(inv, -1), b->ndim, sh) : NULL;
  return jx_take_along_axis(x, idx, -2, JX_INDEX_PROMISE_IN_BOUNDS);
}

/* lu_solve with every batch dim (of lu, perm and b) broadcast, as lax.linalg's
 * _lu_solve; b is a (batch of) vector(s) when vec, else of (m, k) matrices. */
static jx_array *lu_solve_bcast(const char *fn, jx_array *lu, jx_array *perm, jx_array *b, int trans, bool vec) {
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  if (lu->ndim < 2 || lu->shape[lu->ndim - 1] != lu->shape[lu->ndim - 2]) {
    error_set(JX_ERR_SHAPE, "%s: the LU factor must be square, got shape %s", fn, np_shape_str(b0, lu));
    return NULL;
  }
  if (b->ndim < 1) {
    error_set(JX_ERR_SHAPE, "%s: b must have rank >= 1, got shape %s", fn, np_shape_str(b0, b));
    return NULL;
  }
  if (trans < 0 || trans > 2) {
    error_set(JX_ERR_VALUE, "%s: trans must be 0, 1 or 2, got %d", fn, trans);
    return NULL;
  }
  int64_t m = lu->shape[lu->ndim - 1];
  if ((vec ? b->shape[b->ndim - 1] : b->ndim >= 2 ? b->shape[b->ndim - 2] : -1) != m) {
    error_set(JX_ERR_SHAPE, "%s: shapes %s and %s do not match (b needs %lld rows)", fn, np_shape_str(b0, lu),
              np_shape_str(b1, b), (long long)m);
    return NULL;
  }
  jx_array *bm = vec ? jx_expand_dims(b, -1) : b;
  int nb;
  int64_t bs[JX_MAX_NDIM];
  if (!bm || !batch_shape_n(fn, 3, (jx_array *[]){lu, perm, bm}, (int[]){2, 1, 2}, &nb, bs)) return NULL;
  jx_array *x = lu_solve_core(broadcast_batch(fn, lu, nb, bs, 2), broadcast_batch(fn, perm, nb, bs, 1),
                              broadcast_batch(fn, bm, nb, bs, 2), trans);
  return x && vec ? jx_squeeze(x, 1, (int[]){-1}) : x;
}

jx_array *jx_lax_linalg_lu_solve(jx_array *lu, jx_array *permutation, jx_array *b, int trans) {
  const char *fn = "jx_lax_linalg_lu_solve";
  if (np_null_arg(fn, lu, "lu") || np_null_arg(fn, permutation, "permutation") || np_null_arg(fn, b, "b"))
    return NULL;
  jx_scope_begin();
  /* NumPy's solve broadcasting: b is a (batch of) vector(s) when it has one dim less */
  bool vec = lu->ndim == b->ndim + 1;
  return np_scope_return(lu_solve_bcast(fn, lu, permutation, b, trans, vec));
}

/* lax.linalg.lu_pivots_to_permutation: the swaps applied in order to iota(m). Built
 * from k selects (pivots are data, so the loop is over positions, not values). */
static jx_array *pivots_to_permutation(jx_array *piv, int64_t m) {
  if (!piv) return NULL;
  int64_t k = piv->shape[piv->ndim - 1], sh[JX_MAX_NDIM];
  memcpy(sh, piv->shape, (size_t)piv->ndim * sizeof *sh);
  sh[piv->ndim - 1] = m;
  jx_array *iota = jx_arange(0, (double)m, 1, JX_INT32);
  jx_array *perm = jx_broadcast_to(iota, piv->ndim, sh);
  for (int64_t i = 0; i < k && perm; i++) {
    jx_array *j = slice_last(piv, 1, (int64_t[]){i}, (int64_t[]){i + 1}); /* (..., 1) */
    jx_array *pi = slice_last(perm, 1, (int64_t[]){i}, (int64_t[]){i + 1});
    jx_array *pj = jx_take_along_axis(perm, j, -1, JX_INDEX_CLIP);
    jx_array *at_i = jx_equal(iota, jx_scalar_int(i)), *at_j = jx_equal(iota, j);
    perm = jx_where(at_i, pj, jx_where(at_j, pi, perm));
  }
  return perm;
}

/* ------------------------------------------------------------ jax.numpy.linalg */

jx_array *jx_linalg_cholesky(jx_array *a, bool upper) {
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg("jx_linalg_cholesky", a, true);
  jx_array *l = x ? jx_lax_linalg_cholesky(x, true) : NULL;
  return np_scope_return(upper ? mH(l) : l);
}

jx_array *jx_linalg_solve(jx_array *a, jx_array *b) {
  const char *fn = "jx_linalg_solve";
  if (np_null_arg(fn, b, "b")) return NULL;
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, true), *p[2];
  if (!x || !np_promote(fn, 2, (jx_array *[]){x, b}, p)) return np_scope_return(NULL);
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  int64_t m = x->shape[x->ndim - 1];
  bool vec = p[1]->ndim == 1; /* NumPy 2: only a 1-d b is a vector */
  if (p[1]->ndim == 0 || (vec ? p[1]->shape[0] : p[1]->shape[p[1]->ndim - 2]) != m) {
    error_set(JX_ERR_SHAPE, "%s: shapes %s and %s do not match: b needs %lld rows", fn, np_shape_str(b0, a),
              np_shape_str(b1, b), (long long)m);
    return np_scope_return(NULL);
  }
  jx_array *bm = vec ? jx_expand_dims(p[1], -1) : p[1];
  int nb;
  int64_t bs[JX_MAX_NDIM];
  if (!batch_shape(fn, p[0], 2, bm, 2, &nb, bs)) return np_scope_return(NULL);
  jx_array *ab = broadcast_batch(fn, p[0], nb, bs, 2), *f[3];
  if (!ab || prim_lu(ab, f) != JX_OK) return np_scope_return(NULL);
  jx_array *r = lu_solve_core(f[0], f[2], broadcast_batch(fn, bm, nb, bs, 2), 0);
  return np_scope_return(r && vec ? jx_squeeze(r, 1, (int[]){-1}) : r);
}

jx_array *jx_linalg_inv(jx_array *a) {
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg("jx_linalg_inv", a, true);
  if (!x) return np_scope_return(NULL);
  jx_array *eye = jx_eye(x->shape[x->ndim - 1], x->dtype);
  return np_scope_return(jx_linalg_solve(x, jx_broadcast_to(eye, x->ndim, x->shape)));
}

/* jnp.linalg.slogdet through LU of a square float/complex x: sign from the pivots'
 * parity and the diagonal's signs, log|det| as the sum of log|u_ii|; a zero on the
 * diagonal gives (0, -inf). */
static jx_status slogdet_core(jx_array *x, jx_array **sign, jx_array **logdet) {
  jx_array *f[3];
  if (prim_lu(x, f) != JX_OK) return jx_last_status();
  int64_t n = x->shape[x->ndim - 1];
  jx_array *d = diag_of(f[0]);
  jx_array *zero = jx_zeros(0, NULL, x->dtype);
  jx_array *is_zero = jx_any(jx_equal(d, zero), 1, (int[]){-1}, false);
  jx_array *parity = jx_count_nonzero(jx_not_equal(f[1], jx_arange(0, (double)n, 1, JX_INT32)), 1, (int[]){-1}, false);
  jx_array *phase = NULL; /* complex: the product of the diagonal's phases */
  if (is_cplx(x)) phase = jx_prod(jx_divide(d, jx_astype(jx_abs(d), x->dtype)), 1, (int[]){-1}, false);
  else parity = jx_add(parity, jx_count_nonzero(jx_less(d, zero), 1, (int[]){-1}, false));
  jx_array *odd = jx_equal(jx_remainder(parity, jx_scalar_int(2)), jx_scalar_int(1));
  jx_array *one = jx_ones(0, NULL, x->dtype);
  jx_array *sg = jx_where(odd, jx_negative(one), one);
  if (phase) sg = jx_multiply(phase, sg);
  sg = jx_where(is_zero, zero, sg);
  jx_dtype rd = dtype_real_part(x->dtype);
  jx_array *ld = jx_where(is_zero, jx_full(0, NULL, -INFINITY, rd), jx_sum(jx_log(jx_abs(d)), 1, (int[]){-1}, false));
  /* a NaN in a: sign and log|det| NaN (nan + nanj for complex a). JAX's closed forms for
   * n <= 2 give that; its LU path for n >= 3 gives sign +-1 (real a) or even (0, -inf)
   * (complex a with a NaN pivot): the math wins, a NaN determinant has no sign. */
  jx_array *has_nan = jx_any(jx_isnan(x), 2, (int[]){-2, -1}, false);
  jx_array *nan = jx_full(0, NULL, NAN, rd);
  sg = jx_where(has_nan, is_cplx(x) ? jx_complex(nan, nan) : nan, sg);
  ld = jx_where(has_nan, nan, ld);
  *sign = sg, *logdet = ld;
  return sg && ld ? JX_OK : jx_last_status();
}

jx_status jx_linalg_slogdet(jx_array *a, jx_array **sign, jx_array **logabsdet) {
  const char *fn = "jx_linalg_slogdet";
  if (np_null_arg(fn, sign, "sign") || np_null_arg(fn, logabsdet, "logabsdet")) return JX_ERR_VALUE;
  jx_scope_begin();
  jx_array *out[2] = {NULL, NULL}, *x = linalg_matrix_arg(fn, a, true);
  if (x) slogdet_core(x, &out[0], &out[1]);
  jx_status s = linalg_return_n(2, out);
  *sign = out[0], *logabsdet = out[1];
  return s;
}

/* JAX's _cofactor_solve(a, b) for a square a (..., n, n) with n >= 2 and b of a's
 * shape: adj(a) b, defined for singular a too. With the LU p a = l u (partial
 * pivoting) and the partial determinants pdet = cumprod(diag(u)) * sign(p), det(a) b'
 * with b' = a^-1 b is u^-1 l^-1 p b with u's last diagonal entry replaced by
 * 1 / pdet[n-2] and every row but the last of l^-1 p b scaled by det(a) -- finite
 * when only u's last pivot is zero (rank n - 1). Where rank(a) < n - 1, the replaced
 * u is singular (a solve gives inf/NaN) and adj(a) = 0: zeros. */
static jx_array *cofactor_solve_core(jx_array *a, jx_array *b) {
  jx_array *f[3];
  if (!a || !b || prim_lu(a, f) != JX_OK) return NULL;
  int64_t n = a->shape[a->ndim - 1];
  jx_dtype dt = a->dtype;
  jx_array *d = jx_diagonal(f[0], 0, -2, -1); /* (..., n) */
  jx_array *parity = jx_count_nonzero(jx_not_equal(f[1], jx_arange(0, (double)n, 1, JX_INT32)), 1, (int[]){-1}, false);
  jx_array *odd = jx_astype(jx_remainder(parity, jx_scalar_int(2)), dt);
  jx_array *psign = jx_subtract(jx_ones(0, NULL, dt), jx_multiply(jx_full(0, NULL, 2, dt), odd)); /* (...) */
  jx_array *pdet = jx_multiply(jx_cumprod(d, -1), jx_expand_dims(psign, -1)); /* (..., n) */
  jx_array *det = jx_expand_dims(jx_take(pdet, jx_scalar_int(n - 1), -1), -1);  /* (..., 1) */
  jx_array *pn2 = jx_take(pdet, jx_scalar_int(n - 2), -1);
  jx_array *row = jx_expand_dims(jx_arange(0, (double)n, 1, JX_INT32), -1); /* (n, 1) */
  jx_array *last_row = jx_equal(row, jx_scalar_int(n - 1));
  jx_array *corner = jx_logical_and(last_row, jx_equal(jx_arange(0, (double)n, 1, JX_INT32), jx_scalar_int(n - 1)));
  jx_array *u = jx_where(corner, jx_expand_dims(jx_expand_dims(jx_reciprocal(pn2), -1), -1), f[0]);
  /* the rank filter: u's solve of ones is not finite where rank(a) < n - 1 */
  int64_t sh[JX_MAX_NDIM];
  memcpy(sh, a->shape, (size_t)a->ndim * sizeof *sh);
  sh[a->ndim - 1] = 1;
  jx_array *probe = prim_triangular_solve(u, jx_ones(a->ndim, sh, dt), LINALG_LEFT_SIDE);
  jx_array *bad = probe ? jx_any(jx_logical_not(jx_isfinite(probe)), 2, (int[]){-2, -1}, true) : NULL;
  jx_array *zero = jx_zeros(0, NULL, dt);
  jx_array *x = jx_where(bad, zero, b);
  jx_array *idx = jx_broadcast_to(jx_expand_dims(f[2], -1), b->ndim, b->shape);
  x = jx_take_along_axis(x, idx, -2, JX_INDEX_PROMISE_IN_BOUNDS); /* p b */
  x = x ? prim_triangular_solve(f[0], x, LINALG_LEFT_SIDE | LINALG_LOWER | LINALG_UNIT_DIAGONAL) : NULL;
  x = jx_multiply(x, jx_where(last_row, jx_ones(0, NULL, dt), jx_expand_dims(det, -1)));
  x = x && u ? prim_triangular_solve(u, x, LINALG_LEFT_SIDE) : NULL;
  return jx_where(bad, zero, x);
}

/* adj(a) b for any square a: cofactor_solve_core needs the zero pivot of a rank n - 1
 * matrix to come last, which partial pivoting does not promise (JAX assumes it: its
 * derivative of det at [[1,2,3,4],[2,4,6,8],[1,0,1,0],[0,1,1,1]] is 0, not the nonzero
 * cofactor matrix). Moving a's column k to the end, k the first zero pivot of a's LU
 * (n - 1 if none), makes it so: the first k elimination steps are unchanged, the
 * Schur complement of the other columns has full column rank, so the zero pivot comes
 * last. With that column permutation q, adj(a q) = adj(q) adj(a) = det(q) q^T adj(a),
 * so tr(adj(a) b) = det(q) tr(adj(a q) (b q)), det(q) = (-1)^(n-1-k) (a cycle of
 * n - k columns). Returns the trace (...). */
static jx_array *cofactor_trace(jx_array *a, jx_array *b) {
  int64_t n = a->shape[a->ndim - 1];
  if (n <= 1) return jx_trace(b, 0, -2, -1); /* adj of a 1x1 matrix is [[1]] */
  jx_array *f[3];
  if (prim_lu(jx_stop_gradient(a), f) != JX_OK) return NULL;
  jx_array *is0 = jx_equal(jx_diagonal(f[0], 0, -2, -1), jx_zeros(0, NULL, a->dtype)); /* (..., n) */
  jx_array *k = jx_where(jx_any(is0, 1, (int[]){-1}, true), jx_argmax(jx_astype(is0, JX_INT32), -1, true),
                         jx_scalar_int(n - 1)); /* (..., 1) */
  jx_array *j = jx_arange(0, (double)n, 1, JX_INT32);
  jx_array *src = jx_where(jx_less(j, k), j, jx_where(jx_less(j, jx_scalar_int(n - 1)), jx_add(j, jx_scalar_int(1)), k));
  jx_array *idx = src ? jx_broadcast_to(jx_expand_dims(jx_astype(src, JX_INT32), -2), a->ndim, a->shape) : NULL;
  jx_array *aq = jx_take_along_axis(a, idx, -1, JX_INDEX_PROMISE_IN_BOUNDS);
  jx_array *bq = jx_take_along_axis(b, idx, -1, JX_INDEX_PROMISE_IN_BOUNDS);
  jx_array *odd = jx_remainder(jx_subtract(jx_scalar_int(n - 1), jx_squeeze(k, 1, (int[]){-1})), jx_scalar_int(2));
  jx_array *qsign = jx_subtract(jx_ones(0, NULL, a->dtype), jx_multiply(jx_full(0, NULL, 2, a->dtype), jx_astype(odd, a->dtype)));
  return jx_multiply(qsign, jx_trace(cofactor_solve_core(aq, bq), 0, -2, -1));
}

/* det's JVP (JAX's _det_jvp): d det(a) = tr(adj(a) da), defined at singular a too
 * (sign * exp(log|det|) has derivative 0 or NaN there). */
static jx_status jvp_det(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                         jx_array **ty) {
  (void)nin, (void)nout, (void)y;
  ty[0] = t[0] ? cofactor_trace(x[0], t[0]) : NULL;
  return !t[0] || ty[0] ? JX_OK : jx_last_status();
}
static const SpecialRule DET_RULE = {"det", jvp_det};

/* det's value, as before the rule: sign * exp(log|det|) of slogdet's LU. */
static bool impl_det(jx_array *const *in, jx_array **out, int param) {
  (void)param;
  jx_array *sg = NULL, *ld = NULL;
  if (slogdet_core(in[0], &sg, &ld) != JX_OK) return false;
  out[0] = jx_multiply(sg, jx_exp(ld));
  return out[0] != NULL;
}

jx_array *jx_linalg_det(jx_array *a) {
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg("jx_linalg_det", a, true), *r = NULL;
  if (x) special_custom_call(&DET_RULE, 1, &x, 1, &r, impl_det, 0);
  return np_scope_return(r);
}

/* ------------------------------------------------------------ jax.scipy.linalg */

/* jax.scipy.linalg's solve_triangular and lu_solve map jnp.vectorize over the batch
 * dims with the core signature (n,n),(n)->(n) when b is 1-d, or has one dim less than a
 * and a's last dim (JAX 0.10.2 deprecates the latter), else (n,n),(n,k)->(n,k). */
static bool scipy_rhs_vector(jx_array *a, jx_array *b) {
  return b->ndim == 1 || (a->ndim == b->ndim + 1 && b->ndim >= 1 && a->shape[a->ndim - 1] == b->shape[b->ndim - 1]);
}

jx_array *jx_scipy_linalg_cholesky(jx_array *a, bool lower) {
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg("jx_scipy_linalg_cholesky", a, true);
  jx_array *l = x ? jx_lax_linalg_cholesky(lower ? x : mH(x), false) : NULL;
  return np_scope_return(lower ? l : mH(l));
}

jx_array *jx_scipy_linalg_cho_factor(jx_array *a, bool lower) {
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg("jx_scipy_linalg_cho_factor", a, true);
  return np_scope_return(x ? jx_scipy_linalg_cholesky(x, lower) : NULL);
}

jx_array *jx_scipy_linalg_cho_solve(jx_array *c, bool lower, jx_array *b) {
  const char *fn = "jx_scipy_linalg_cho_solve";
  if (np_null_arg(fn, b, "b")) return NULL;
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, c, true), *p[2];
  if (!x || !np_promote(fn, 2, (jx_array *[]){x, b}, p)) return np_scope_return(NULL);
  int64_t m = x->shape[x->ndim - 1];
  bool ok = (p[1]->ndim == x->ndim || p[1]->ndim == x->ndim - 1) && p[1]->ndim >= 1 &&
            p[1]->shape[x->ndim - 2] == m;
  if (!ok) {
    char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: needs c=[..., m, m] and b=[..., m, k] or [..., m]; got %s and %s", fn,
              np_shape_str(b0, c), np_shape_str(b1, b));
    return np_scope_return(NULL);
  }
  jx_array *r = jx_lax_linalg_triangular_solve(p[0], p[1], true, lower, !lower, !lower, false);
  r = jx_lax_linalg_triangular_solve(p[0], r, true, lower, lower, lower, false);
  return np_scope_return(r);
}

jx_array *jx_scipy_linalg_solve_triangular(jx_array *a, jx_array *b, int trans, bool lower, bool unit_diagonal) {
  const char *fn = "jx_scipy_linalg_solve_triangular";
  if (np_null_arg(fn, b, "b")) return NULL;
  if (trans < 0 || trans > 2) {
    error_set(JX_ERR_VALUE, "%s: trans must be 0 (N), 1 (T) or 2 (C), got %d", fn, trans);
    return NULL;
  }
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, true), *p[2];
  if (!x || !np_promote(fn, 2, (jx_array *[]){x, b}, p)) return np_scope_return(NULL);
  bool vec = scipy_rhs_vector(p[0], p[1]);
  jx_array *bm = vec ? jx_expand_dims(p[1], -1) : p[1];
  int64_t n = p[0]->shape[p[0]->ndim - 1];
  if (bm && (bm->ndim < 2 || bm->shape[bm->ndim - 2] != n)) {
    char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: shapes %s and %s do not match (b needs %lld rows)", fn, np_shape_str(b0, a),
              np_shape_str(b1, b), (long long)n);
    return np_scope_return(NULL);
  }
  int nb;
  int64_t bs[JX_MAX_NDIM];
  if (!bm || !batch_shape(fn, p[0], 2, bm, 2, &nb, bs)) return np_scope_return(NULL);
  jx_array *ab = broadcast_batch(fn, p[0], nb, bs, 2), *bb = broadcast_batch(fn, bm, nb, bs, 2);
  unsigned f = LINALG_LEFT_SIDE | (lower ? LINALG_LOWER : 0) | (trans ? LINALG_TRANSPOSE_A : 0) |
               (trans == 2 && is_cplx(p[0]) ? LINALG_CONJUGATE_A : 0) | (unit_diagonal ? LINALG_UNIT_DIAGONAL : 0);
  jx_array *r = ab && bb ? prim_triangular_solve(ab, bb, f) : NULL;
  return np_scope_return(r && vec ? jx_squeeze(r, 1, (int[]){-1}) : r);
}

jx_status jx_scipy_linalg_lu_factor(jx_array *a, jx_array **lu, jx_array **piv) {
  const char *fn = "jx_scipy_linalg_lu_factor";
  if (np_null_arg(fn, lu, "lu") || np_null_arg(fn, piv, "piv")) return JX_ERR_VALUE;
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, false), *f[3] = {NULL, NULL, NULL};
  if (x && prim_lu(x, f) != JX_OK) f[0] = NULL;
  jx_status s = linalg_return_n(2, f);
  *lu = f[0], *piv = f[1];
  return s;
}

jx_array *jx_scipy_linalg_lu_solve(jx_array *lu, jx_array *piv, jx_array *b, int trans) {
  const char *fn = "jx_scipy_linalg_lu_solve";
  if (np_null_arg(fn, lu, "lu") || np_null_arg(fn, piv, "piv") || np_null_arg(fn, b, "b")) return NULL;
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, lu, true), *p[2];
  if (!x || !np_promote(fn, 2, (jx_array *[]){x, b}, p)) return np_scope_return(NULL);
  jx_array *perm = pivots_to_permutation(piv, x->shape[x->ndim - 1]);
  return np_scope_return(perm ? lu_solve_bcast(fn, p[0], perm, p[1], trans, scipy_rhs_vector(p[0], p[1])) : NULL);
}

jx_status jx_scipy_linalg_lu(jx_array *a, bool permute_l, jx_array **out) {
  const char *fn = "jx_scipy_linalg_lu";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  out[0] = out[1] = out[2] = NULL;
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, false), *f[3];
  if (!x || prim_lu(x, f) != JX_OK) return linalg_return_n(permute_l ? 2 : 3, out);
  int64_t m = x->shape[x->ndim - 2], n = x->shape[x->ndim - 1], k = m < n ? m : n;
  /* l = tril(lu[..., :, :k], -1) + eye(m, k); u = triu(lu[..., :k, :]) */
  jx_array *lk = slice_last(f[0], 2, (int64_t[]){0, 0}, (int64_t[]){m, k});
  jx_array *l = jx_add(jx_tril(lk, -1), jx_eye_k(m, k, 0, x->dtype));
  jx_array *u = jx_triu(slice_last(f[0], 2, (int64_t[]){0, 0}, (int64_t[]){k, n}), 0);
  /* p: the permutation matrix with a = p l u, i.e. p[perm[i], i] = 1; real for complex
   * a, as JAX's */
  jx_array *iota = jx_arange(0, (double)m, 1, JX_INT32);
  jx_array *pm = jx_astype(jx_equal(jx_expand_dims(f[2], -2), jx_expand_dims(iota, -1)), dtype_real_part(x->dtype));
  if (permute_l) {
    out[0] = jx_matmul(pm, l), out[1] = u;
    return linalg_return_n(2, out);
  }
  out[0] = pm, out[1] = l, out[2] = u;
  return linalg_return_n(3, out);
}

/* ------------------------------------------------------------ qr, eigh, svd */

jx_status jx_lax_linalg_qr(jx_array *x, bool full_matrices, jx_array **out) {
  if (np_null_arg("jx_lax_linalg_qr", out, "out")) return JX_ERR_VALUE;
  out[0] = out[1] = NULL;
  if (np_null_arg("jx_lax_linalg_qr", x, "x")) return JX_ERR_VALUE;
  jx_scope_begin();
  if (prim_qr(x, full_matrices ? LINALG_FULL_MATRICES : 0, out) != JX_OK) out[0] = NULL;
  return linalg_return_n(2, out);
}

jx_status jx_lax_linalg_eigh(jx_array *x, bool lower, bool symmetrize_input, bool sort_eigenvalues,
                             jx_array **out) {
  const char *fn = "jx_lax_linalg_eigh";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  out[0] = out[1] = NULL;
  if (np_null_arg(fn, x, "x")) return JX_ERR_VALUE;
  if (!lax_square_arg(fn, x)) return JX_ERR_SHAPE;
  jx_scope_begin();
  jx_array *a = x;
  if (symmetrize_input) a = jx_divide(jx_add(x, mH(x)), jx_scalar(2));
  unsigned flags = (lower ? LINALG_LOWER : 0) | (sort_eigenvalues ? 0 : LINALG_UNSORTED);
  if (!a || prim_eigh(a, flags, out) != JX_OK) out[0] = NULL;
  return linalg_return_n(2, out);
}

jx_status jx_lax_linalg_svd(jx_array *x, bool full_matrices, bool compute_uv, jx_array **out) {
  if (np_null_arg("jx_lax_linalg_svd", out, "out")) return JX_ERR_VALUE;
  int n = compute_uv ? 3 : 1;
  for (int i = 0; i < n; i++) out[i] = NULL;
  if (np_null_arg("jx_lax_linalg_svd", x, "x")) return JX_ERR_VALUE;
  jx_scope_begin();
  jx_array *r[3] = {NULL, NULL, NULL};
  unsigned f = (full_matrices ? LINALG_FULL_MATRICES : 0) | (compute_uv ? LINALG_COMPUTE_UV : 0);
  if (prim_svd(x, f, r) == JX_OK) {
    if (compute_uv) out[0] = r[1], out[1] = r[0], out[2] = r[2]; /* (u, s, vt) as JAX */
    else out[0] = r[0];
  }
  return linalg_return_n(n, out);
}

jx_status jx_linalg_qr(jx_array *a, const char *mode, jx_array **out) {
  const char *fn = "jx_linalg_qr";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  if (!mode) mode = "reduced";
  bool r_only = !strcmp(mode, "r"), complete = !strcmp(mode, "complete");
  out[0] = NULL;
  if (!r_only) out[1] = NULL;
  if (!r_only && !complete && strcmp(mode, "reduced") != 0) {
    error_set(JX_ERR_VALUE, "%s: unsupported mode \"%s\" (reduced, complete or r)", fn, mode);
    return JX_ERR_VALUE;
  }
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, false), *f[2] = {NULL, NULL};
  if (x && prim_qr(x, complete ? LINALG_FULL_MATRICES : 0, f) == JX_OK) {
    if (r_only) out[0] = f[1];
    else out[0] = f[0], out[1] = f[1];
  }
  return linalg_return_n(r_only ? 1 : 2, out);
}

/* UPLO: NULL or "L" reads the lower half, "U" the upper (after symmetrize_input). */
static bool uplo_lower(const char *fn, const char *uplo, bool *lower) {
  if (!uplo || !strcmp(uplo, "L")) return *lower = true;
  if (!strcmp(uplo, "U")) return !(*lower = false);
  error_set(JX_ERR_VALUE, "%s: UPLO must be \"L\" or \"U\", got \"%s\"", fn, uplo);
  return false;
}

jx_status jx_linalg_eigh(jx_array *a, const char *UPLO, bool symmetrize_input, jx_array **out) {
  const char *fn = "jx_linalg_eigh";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  out[0] = out[1] = NULL;
  bool lower;
  if (!uplo_lower(fn, UPLO, &lower)) return JX_ERR_VALUE;
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, true), *r[2] = {NULL, NULL};
  if (x && jx_lax_linalg_eigh(x, lower, symmetrize_input, true, r) == JX_OK) out[0] = r[1], out[1] = r[0];
  return linalg_return_n(2, out);
}

jx_array *jx_linalg_eigvalsh(jx_array *a, const char *UPLO) {
  jx_scope_begin();
  jx_array *r[2] = {NULL, NULL};
  jx_linalg_eigh(a, UPLO, true, r);
  return np_scope_return(r[0]);
}

jx_status jx_linalg_svd(jx_array *a, bool full_matrices, bool compute_uv, jx_array **out) {
  const char *fn = "jx_linalg_svd";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  int n = compute_uv ? 3 : 1;
  for (int i = 0; i < n; i++) out[i] = NULL;
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, false);
  if (x) jx_lax_linalg_svd(x, full_matrices, compute_uv, out);
  return linalg_return_n(n, out);
}

jx_array *jx_linalg_svdvals(jx_array *a) {
  jx_scope_begin();
  jx_array *s = NULL;
  jx_linalg_svd(a, false, false, &s);
  return np_scope_return(s);
}

/* ------------------------------------------------------------ eig */

jx_status jx_lax_linalg_eig(jx_array *x, bool compute_left_eigenvectors, bool compute_right_eigenvectors,
                            jx_array **out) {
  const char *fn = "jx_lax_linalg_eig";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  int n = 1 + compute_left_eigenvectors + compute_right_eigenvectors;
  for (int i = 0; i < n; i++) out[i] = NULL;
  if (np_null_arg(fn, x, "x")) return JX_ERR_VALUE;
  if (!lax_square_arg(fn, x)) return JX_ERR_SHAPE;
  jx_scope_begin();
  unsigned f = (compute_left_eigenvectors ? LINALG_COMPUTE_LEFT : 0) |
               (compute_right_eigenvectors ? LINALG_COMPUTE_RIGHT : 0);
  if (prim_eig(x, f, out) != JX_OK) out[0] = NULL;
  return linalg_return_n(n, out);
}

jx_status jx_linalg_eig(jx_array *a, jx_array **out) {
  const char *fn = "jx_linalg_eig";
  if (np_null_arg(fn, out, "out")) return JX_ERR_VALUE;
  out[0] = out[1] = NULL;
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg(fn, a, true);
  if (x) jx_lax_linalg_eig(x, false, true, out);
  return linalg_return_n(2, out);
}

jx_array *jx_linalg_eigvals(jx_array *a) {
  jx_scope_begin();
  jx_array *x = linalg_matrix_arg("jx_linalg_eigvals", a, true), *w = NULL;
  if (x) jx_lax_linalg_eig(x, false, false, &w);
  return np_scope_return(w);
}
