/* linalg.c -- differentiation rules of the linear-algebra primitives, as JAX derives them
 * (jax/_src/lax/linalg.py: _cholesky_jvp_rule, _triangular_solve_jvp_rule_a and
 * _triangular_solve_transpose_rule, _lu_jvp_rule, qr_jvp_rule, _eigh_jvp_rule,
 * _svd_jvp_rule, eig_jvp_rule (eigenvalues), _tridiagonal_solve_jvp_rule and
 * _tridiagonal_solve_transpose_rule), written with primitives only so that they compose
 * with every other transformation; complex operands use the conjugate transposes (_H)
 * where JAX does. Matrices are the last two dims; leading dims are batch dims. */
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/linalg.h"

/* ------------------------------------------------------------ helpers */

static int rows_of(jx_array *x) { return (int)x->shape[x->ndim - 2]; }
static int cols_of(jx_array *x) { return (int)x->shape[x->ndim - 1]; }

static jx_array *add(jx_array *a, jx_array *b) { return prim_binary(PRIM_add, a, b); }
static jx_array *sub(jx_array *a, jx_array *b) { return prim_binary(PRIM_sub, a, b); }
static jx_array *mul(jx_array *a, jx_array *b) { return prim_binary(PRIM_mul, a, b); }
static jx_array *dv(jx_array *a, jx_array *b) { return prim_binary(PRIM_div, a, b); }
static jx_array *tadd(jx_array *a, jx_array *b) { return !a ? b : !b ? a : add(a, b); }

/* x with its last two dims swapped (JAX's _T). */
static jx_array *mT(jx_array *x) {
  if (!x) return NULL;
  int perm[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) perm[d] = d;
  perm[x->ndim - 2] = x->ndim - 1, perm[x->ndim - 1] = x->ndim - 2;
  return prim_transpose(x, perm);
}

static bool cplx(jx_array *x) { return x && dtype_is_complex(x->dtype); }

/* conj(x) for complex x; x itself for real x. */
static jx_array *cj(jx_array *x) { return cplx(x) ? prim_unary(PRIM_conj, x) : x; }

/* JAX's _H: the conjugate transpose of the last two dims. */
static jx_array *mH(jx_array *x) { return cj(mT(x)); }

/* real(x) for complex x; x itself otherwise. */
static jx_array *re(jx_array *x) { return cplx(x) ? prim_unary(PRIM_real, x) : x; }

/* x converted to like's dtype (a real factor of a complex product). */
static jx_array *as_dtype_of(jx_array *x, jx_array *like) {
  return x && like && x->dtype != like->dtype ? prim_convert(x, like->dtype, x->weak) : x;
}

/* Batched matrix product a @ b (equal batch dims). */
static jx_array *mm(jx_array *a, jx_array *b) {
  if (!a || !b) return NULL;
  int nb = a->ndim - 2, batch[JX_MAX_NDIM];
  for (int d = 0; d < nb; d++) batch[d] = d;
  return prim_dot_general(a, b, 1, (int[]){a->ndim - 1}, (int[]){b->ndim - 2}, nb, batch, batch);
}

/* A constant of x's dtype and the given batch dims + (rows, cols), weak like x. */
static jx_array *full_shaped(jx_array *x, int64_t rows, int64_t cols, double v) {
  Aval a = prim_aval_of(x);
  a.shape[a.ndim - 2] = rows, a.shape[a.ndim - 1] = cols;
  return tx_full(&a, v);
}

/* Bool mask of x's shape: true where column - row <= k (lower) or >= k (upper). */
static jx_array *tri_mask(jx_array *x, int k, bool lower) {
  if (!x) return NULL;
  int64_t n = rows_of(x), m = cols_of(x), sh[2] = {n, m};
  jx_array *r = prim_iota(JX_INT32, 2, sh, 0), *c = prim_iota(JX_INT32, 2, sh, 1);
  jx_array *d = prim_binary(PRIM_sub, c, r);
  Aval ia = {.dtype = JX_INT32, .ndim = 2, .shape = {n, m}};
  jx_array *mask = lower ? prim_binary(PRIM_lt, d, tx_full(&ia, k + 1)) : prim_binary(PRIM_lt, tx_full(&ia, k - 1), d);
  int bd[2] = {x->ndim - 2, x->ndim - 1};
  return mask ? prim_broadcast_in_dim(mask, x->ndim, x->shape, bd) : NULL;
}

/* JAX's _tril(x, k) and _triu(x, k). */
static jx_array *tril(jx_array *x, int k) { return x ? prim_select(tri_mask(x, k, true), x, tx_full_like(x, 0)) : NULL; }
static jx_array *triu(jx_array *x, int k) { return x ? prim_select(tri_mask(x, k, false), x, tx_full_like(x, 0)) : NULL; }

/* The identity of x's batch dims + (rows, cols) shape and dtype. */
static jx_array *eye_shaped(jx_array *x, int64_t rows, int64_t cols) {
  jx_array *z = full_shaped(x, rows, cols, 0);
  if (!z) return NULL;
  jx_array *on = prim_binary(PRIM_eq, prim_iota(JX_INT32, 2, (int64_t[]){rows, cols}, 0),
                             prim_iota(JX_INT32, 2, (int64_t[]){rows, cols}, 1));
  int bd[2] = {z->ndim - 2, z->ndim - 1};
  return on ? prim_convert(prim_broadcast_in_dim(on, z->ndim, z->shape, bd), x->dtype, x->weak) : NULL;
}

/* The diagonal of square x: (..., n). */
static jx_array *diag_of(jx_array *x) {
  if (!x) return NULL;
  bool mask[JX_MAX_NDIM] = {false};
  mask[x->ndim - 1] = true;
  return prim_reduce(PRIM_reduce_sum, mul(x, eye_shaped(x, rows_of(x), cols_of(x))), mask);
}

/* v (..., k) broadcast to (..., rows, k) (as a row: along the last axis) or to
 * (..., k, cols) (as a column). */
static jx_array *as_rows(jx_array *v, int64_t rows) {
  if (!v) return NULL;
  int64_t sh[JX_MAX_NDIM];
  int bd[JX_MAX_NDIM], nb = v->ndim - 1;
  for (int d = 0; d < nb; d++) sh[d] = v->shape[d], bd[d] = d;
  sh[nb] = rows, sh[nb + 1] = v->shape[nb];
  bd[nb] = nb + 1;
  return prim_broadcast_in_dim(v, v->ndim + 1, sh, bd);
}
static jx_array *as_cols(jx_array *v, int64_t cols) {
  if (!v) return NULL;
  int64_t sh[JX_MAX_NDIM];
  int bd[JX_MAX_NDIM], nb = v->ndim - 1;
  for (int d = 0; d < nb; d++) sh[d] = v->shape[d], bd[d] = d;
  sh[nb] = v->shape[nb], sh[nb + 1] = cols;
  bd[nb] = nb;
  return prim_broadcast_in_dim(v, v->ndim + 1, sh, bd);
}

/* x[..., r0:r1, c0:c1]. */
static jx_array *block(jx_array *x, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  if (!x) return NULL;
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM], step[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) stop[d] = x->shape[d], step[d] = 1;
  start[x->ndim - 2] = r0, stop[x->ndim - 2] = r1, start[x->ndim - 1] = c0, stop[x->ndim - 1] = c1;
  return prim_slice(x, start, stop, step);
}

/* x padded with zeros after its last two dims to (rows, cols), before them by (r0, c0). */
static jx_array *pad_to(jx_array *x, int64_t r0, int64_t c0, int64_t rows, int64_t cols) {
  if (!x) return NULL;
  int64_t lo[JX_MAX_NDIM] = {0}, hi[JX_MAX_NDIM] = {0};
  lo[x->ndim - 2] = r0, lo[x->ndim - 1] = c0;
  hi[x->ndim - 2] = rows - r0 - rows_of(x), hi[x->ndim - 1] = cols - c0 - cols_of(x);
  return prim_pad(x, lo, hi, 0.0);
}

static jx_status status_of(jx_array *const *ys, int n) {
  for (int i = 0; i < n; i++)
    if (!ys[i]) return jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
  return JX_OK;
}

/* The permutation matrix P (..., n, n) of a permutation perm (..., n) int32, in dtype:
 * P[i][j] = (perm[i] == j), so that P @ x = x[perm] (LU's P A = L U). */
static jx_array *perm_matrix(jx_array *perm, jx_dtype dtype) {
  if (!perm) return NULL;
  int64_t psh[JX_MAX_NDIM];
  int pbd[JX_MAX_NDIM];
  for (int d = 0; d < perm->ndim; d++) psh[d] = perm->shape[d], pbd[d] = d;
  psh[perm->ndim] = perm->shape[perm->ndim - 1];
  jx_array *pm = prim_broadcast_in_dim(perm, perm->ndim + 1, psh, pbd);
  jx_array *io = pm ? prim_iota(JX_INT32, perm->ndim + 1, psh, perm->ndim) : NULL;
  return io ? prim_convert(prim_binary(PRIM_eq, pm, io), dtype, false) : NULL;
}

/* ------------------------------------------------------------ JVP rules */

/* Forward-mode rule of https://arxiv.org/pdf/1602.07527.pdf: L_dot = L phi(L^-1 dA L^-T)
 * with phi = the lower triangle, diagonal halved. */
static jx_status jvp_cholesky(jx_array *const *x, jx_array *const *t, const PrimParams *pp, jx_array **y,
                              jx_array **ty) {
  jx_array *L = y[0] = prim_cholesky(x[0]);
  jx_array *tmp = prim_triangular_solve(L, t[0], LINALG_TRANSPOSE_A | LINALG_CONJUGATE_A | LINALG_LOWER);
  jx_array *inner = prim_triangular_solve(L, tmp, LINALG_LEFT_SIDE | LINALG_LOWER);
  jx_array *phi = inner ? dv(tril(inner, 0), add(tx_full_like(inner, 1), eye_shaped(inner, rows_of(inner), cols_of(inner))))
                        : NULL;
  ty[0] = mm(L, phi);
  return status_of(ty, 1);
}

/* d(op(a)^-1 b) = op(a)^-1 (db - d op(a) x), ordered as JAX does by cost. */
static jx_status jvp_triangular_solve(jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                                      jx_array **y, jx_array **ty) {
  unsigned f = pp->flags;
  jx_array *a = x[0], *ans = y[0] = prim_triangular_solve(a, x[1], f);
  if (!ans) return jx_last_status();
  jx_array *db = t[1] ? prim_triangular_solve(a, t[1], f) : NULL, *da = NULL;
  if (t[0]) {
    int k = f & LINALG_UNIT_DIAGONAL ? 1 : 0;
    jx_array *g = f & LINALG_LOWER ? tril(t[0], -k) : triu(t[0], k);
    g = prim_unary(PRIM_neg, g);
    if (f & LINALG_TRANSPOSE_A) g = mT(g);
    if (f & LINALG_CONJUGATE_A) g = cj(g);
    int64_t m = rows_of(ans), n = cols_of(ans);
    if (f & LINALG_LEFT_SIDE)
      da = m > n ? prim_triangular_solve(a, mm(g, ans), f) : mm(prim_triangular_solve(a, g, f), ans);
    else
      da = m < n ? prim_triangular_solve(a, mm(ans, g), f) : mm(ans, prim_triangular_solve(a, g, f));
    if (!da) return jx_last_status();
  }
  if (t[1] && !db) return jx_last_status();
  ty[0] = tadd(db, da);
  return ty[0] ? JX_OK : jx_last_status();
}

/* De Hoog, Anderssen and Lukas: with P A = L U, inv(L) P dA inv(U) = X gives
 * L_dot = L tril(X, -1), U_dot = triu(X) U; lu_dot = L_dot + U_dot. */
static jx_status jvp_lu(jx_array *const *x, jx_array *const *t, const PrimParams *pp, jx_array **y,
                        jx_array **ty) {
  jx_status s = prim_lu(x[0], y);
  if (s != JX_OK) return s;
  jx_array *lu = y[0], *perm = y[2], *a_dot = t[0];
  int64_t m = rows_of(lu), n = cols_of(lu), k = m < n ? m : n;
  jx_array *l = add(pad_to(tril(block(lu, 0, m, 0, k), -1), 0, 0, m, m), eye_shaped(lu, m, m));
  jx_array *u_eye = n > k ? pad_to(eye_shaped(lu, n - k, n - k), k, k, n, n) : NULL;
  jx_array *u = tadd(pad_to(triu(block(lu, 0, k, 0, n), 0), 0, 0, n, n), u_eye);
  /* P a_dot = a_dot[perm] as a product with the permutation matrix (batched) */
  jx_array *P = perm_matrix(perm, lu->dtype);
  jx_array *la = prim_triangular_solve(l, mm(P, a_dot), LINALG_LEFT_SIDE | LINALG_LOWER | LINALG_UNIT_DIAGONAL);
  jx_array *lau = prim_triangular_solve(u, la, 0);
  ty[0] = add(mm(l, tril(lau, -1)), mm(triu(lau, 0), u));
  ty[1] = ty[2] = NULL; /* integer results: zero tangents */
  return ty[0] ? JX_OK : jx_last_status();
}

/* j-towns.github.io/papers/qr-derivative.pdf, for m >= n (q: m x n, r: n x n); complex
 * inputs add JAX's correction of the diagonal. */
static void thin_qr_jvp(jx_array *q, jx_array *r, jx_array *dx, jx_array **dq, jx_array **dr) {
  jx_array *dx_rinv = prim_triangular_solve(r, dx, 0);
  jx_array *qt_dx_rinv = mm(mH(q), dx_rinv);
  jx_array *low = tril(qt_dx_rinv, -1);
  jx_array *dO = low ? sub(low, mH(low)) : NULL;
  if (dO && cplx(dO)) {
    jx_array *imag_part = sub(qt_dx_rinv, as_dtype_of(re(qt_dx_rinv), qt_dx_rinv));
    dO = add(dO, mul(eye_shaped(dO, rows_of(dO), cols_of(dO)), imag_part));
  }
  *dq = dO ? add(mm(q, sub(dO, qt_dx_rinv)), dx_rinv) : NULL;
  *dr = dO ? mm(sub(qt_dx_rinv, dO), r) : NULL;
}

static jx_status jvp_qr(jx_array *const *x, jx_array *const *t, const PrimParams *pp, jx_array **y,
                        jx_array **ty) {
  jx_status s = prim_qr(x[0], pp->flags, y);
  if (s != JX_OK) return s;
  jx_array *q = y[0], *r = y[1], *dx = t[0];
  int64_t m = rows_of(x[0]), n = cols_of(x[0]);
  bool full = pp->flags & LINALG_FULL_MATRICES;
  if (m < n) { /* wide: X = [X1 X2], R = [R1 R2]; dR2 = dQ^T X2 + Q^T dX2 */
    jx_array *dq, *dr1;
    thin_qr_jvp(q, block(r, 0, m, 0, m), block(dx, 0, m, 0, m), &dq, &dr1);
    jx_array *dr2 = add(mm(mH(dq), block(x[0], 0, m, m, n)), mm(mH(q), block(dx, 0, m, m, n)));
    ty[0] = dq;
    ty[1] = dr1 && dr2 ? prim_concatenate(2, (jx_array *[]){dr1, dr2}, dr1->ndim - 1) : NULL;
    return status_of(ty, 2);
  }
  if (!full || m == n) {
    thin_qr_jvp(q, r, dx, &ty[0], &ty[1]);
    return status_of(ty, 2);
  }
  /* complete q of a tall x (arXiv:2409.13374, eqs. 32-33, as JAX): the thin rule for
   * the first n columns; the last p = m - n from Z = Q_pn (Q_nn - I)^-1 */
  int64_t p = m - n;
  jx_array *q_mn = block(q, 0, m, 0, n), *dq_mn, *dr_nn;
  thin_qr_jvp(q_mn, block(r, 0, n, 0, n), dx, &dq_mn, &dr_nn);
  jx_array *q_nn = block(q_mn, 0, n, 0, n), *q_pn = block(q_mn, n, m, 0, n), *q_mp = block(q, 0, m, n, m);
  jx_array *dq_nn = block(dq_mn, 0, n, 0, n), *dq_pn = block(dq_mn, n, m, 0, n), *f[3] = {NULL, NULL, NULL};
  /* z_pn^H = (Q_nn - I)^-H Q_pn^H: with P A = L U, A^H = U^H L^H P */
  jx_array *A = q_nn ? sub(q_nn, eye_shaped(q_nn, n, n)) : NULL;
  if (!A || prim_lu(A, f) != JX_OK) return jx_last_status();
  unsigned th = LINALG_LEFT_SIDE | LINALG_TRANSPOSE_A | (cplx(A) ? LINALG_CONJUGATE_A : 0);
  jx_array *zh = prim_triangular_solve(f[0], mH(q_pn), th);
  zh = prim_triangular_solve(f[0], zh, th | LINALG_LOWER | LINALG_UNIT_DIAGONAL);
  zh = mm(mT(perm_matrix(f[2], A->dtype)), zh); /* n x p */
  jx_array *z = mH(zh);
  jx_array *dq_mp = sub(mm(dq_mn, zh), mm(add(q_mn, mm(q_mp, z)), mH(sub(dq_pn, mm(z, dq_nn)))));
  ty[0] = dq_mn && dq_mp ? prim_concatenate(2, (jx_array *[]){dq_mn, dq_mp}, dq_mn->ndim - 1) : NULL;
  jx_array *zr = dr_nn ? full_shaped(dr_nn, p, n, 0) : NULL;
  ty[1] = zr ? prim_concatenate(2, (jx_array *[]){dr_nn, zr}, dr_nn->ndim - 2) : NULL;
  return status_of(ty, 2);
}

/* Nondegenerate perturbation theory: with V^H dA V = S, dw = real(diag(S)) and
 * dv = V (F * S), F[i][j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it (repeated
 * eigenvalues give infinities, as in JAX). */
static jx_status jvp_eigh(jx_array *const *x, jx_array *const *t, const PrimParams *pp, jx_array **y,
                          jx_array **ty) {
  jx_array *sym = dv(add(x[0], mH(x[0])), tx_full_like(x[0], 2));
  jx_status s = sym ? prim_eigh(sym, pp->flags, y) : jx_last_status();
  if (s != JX_OK) return s;
  jx_array *v = y[0], *w = as_dtype_of(y[1], v);
  int64_t n = rows_of(v);
  jx_array *eye = eye_shaped(v, n, n);
  jx_array *F = sub(prim_unary(PRIM_reciprocal, sub(add(eye, as_rows(w, n)), as_cols(w, n))), eye);
  jx_array *S = mm(mm(mH(v), t[0]), v);
  ty[0] = mm(v, mul(F, S));
  ty[1] = re(diag_of(S));
  return status_of(ty, 2);
}

static jx_status jvp_svd(jx_array *const *x, jx_array *const *t, const PrimParams *pp, jx_array **y,
                         jx_array **ty) {
  jx_array *A = x[0], *dA = t[0], *r[3];
  int64_t m = rows_of(A), n = cols_of(A);
  bool uv = pp->flags & LINALG_COMPUTE_UV;
  if (uv && (pp->flags & LINALG_FULL_MATRICES) && m != n) {
    error_set(JX_ERR_UNSUPPORTED, "jvp of svd: full_matrices=True for a non-square %lld x %lld matrix is not "
              "implemented (as in JAX)", (long long)m, (long long)n);
    return JX_ERR_UNSUPPORTED;
  }
  jx_status st = prim_svd(A, LINALG_COMPUTE_UV, r);
  if (st != JX_OK) return st;
  jx_array *s = r[0], *U = r[1], *Vt = r[2], *Ut = mH(U), *V = mH(Vt);
  int64_t k = s->shape[s->ndim - 1];
  jx_array *dS = mm(mm(Ut, dA), V);
  y[0] = s, ty[0] = diag_of(re(dS));
  if (!uv) return status_of(ty, 1);
  y[1] = U, y[2] = Vt;
  jx_array *srow = as_rows(s, k), *scol = as_cols(s, k);
  jx_array *diffs = mul(add(srow, scol), sub(srow, scol));
  jx_array *eye = eye_shaped(srow, k, k);
  jx_array *F = as_dtype_of(sub(prim_unary(PRIM_reciprocal, add(diffs, eye)), eye), dS);
  jx_array *dSS = mul(as_dtype_of(srow, dS), dS), *SdS = mul(as_dtype_of(scol, dS), dS);
  jx_array *szero = prim_convert(prim_binary(PRIM_eq, s, tx_full_like(s, 0)), s->dtype, s->weak);
  jx_array *sinv = sub(prim_unary(PRIM_reciprocal, add(s, szero)), szero);
  jx_array *sinv_mat = as_dtype_of(mul(as_rows(sinv, k), eye), dS);
  jx_array *dUdV_diag = mul(mul(tx_full_like(dS, 0.5), sub(dS, mH(dS))), sinv_mat);
  jx_array *dU = mm(U, add(mul(F, add(dSS, mH(dSS))), dUdV_diag));
  jx_array *dV = mm(V, mul(F, add(SdS, mH(SdS))));
  if (m > n) {
    jx_array *dAV = mm(dA, V);
    dU = add(dU, dv(sub(dAV, mm(U, mm(Ut, dAV))), as_dtype_of(as_rows(s, m), dAV)));
  }
  if (n > m) {
    jx_array *dAHU = mm(mH(dA), U);
    dV = add(dV, dv(sub(dAHU, mm(V, mm(Vt, dAHU))), as_dtype_of(as_rows(s, n), dAHU)));
  }
  ty[1] = dU, ty[2] = mH(dV);
  return status_of(ty, 3);
}

/* Eigenvalues only (JAX's eig_jvp_rule without eigenvector derivatives): with
 * A V = V diag(w), dw = diag(V^-1 dA V), V^-1 dA by LU. Eigenvector derivatives are
 * JX_ERR_UNSUPPORTED, as JAX's default (enable_eigvec_derivs=False). */
static jx_status jvp_eig(jx_array *const *x, jx_array *const *t, const PrimParams *pp, jx_array **y,
                         jx_array **ty) {
  if (pp->flags & (LINALG_COMPUTE_LEFT | LINALG_COMPUTE_RIGHT)) {
    error_set(JX_ERR_UNSUPPORTED, "jvp of eig: derivatives of non-symmetric eigenvectors are not implemented "
              "(as JAX without enable_eigvec_derivs); differentiate the eigenvalues (eigvals)");
    return JX_ERR_UNSUPPORTED;
  }
  jx_array *r[2];
  jx_status s = prim_eig(x[0], LINALG_COMPUTE_RIGHT, r);
  if (s != JX_OK) return s;
  jx_array *w = r[0], *vr = r[1], *da = as_dtype_of(t[0], vr), *f[3];
  y[0] = w;
  if ((s = prim_lu(vr, f)) != JX_OK) return s;
  jx_array *lu = f[0], *perm = f[2];
  jx_array *P = perm_matrix(perm, vr->dtype); /* P da = da[perm] */
  jx_array *z = prim_triangular_solve(lu, mm(P, da), LINALG_LEFT_SIDE | LINALG_LOWER | LINALG_UNIT_DIAGONAL);
  z = prim_triangular_solve(lu, z, LINALG_LEFT_SIDE); /* V^-1 dA */
  bool mask[JX_MAX_NDIM] = {false};
  if (z) mask[z->ndim - 1] = true;
  ty[0] = z ? prim_reduce(PRIM_reduce_sum, mul(z, mT(vr)), mask) : NULL;
  return status_of(ty, 1);
}

/* The table entries (transform/linalg.h): a symbolic-zero tangent of the matrix
 * operand is materialized (jvp only calls a rule when some tangent is nonzero). */
#define JVP_ENTRY(name)                                                                        \
  jx_status linalg_jvp_##name(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp, \
                              int nout, jx_array **y, jx_array **ty) {                         \
    (void)nin, (void)nout;                                                                     \
    jx_array *tm[1] = {t[0] ? t[0] : tx_full_like(x[0], 0)};                                   \
    return jvp_##name(x, tm, pp, y, ty);                                                       \
  }
JVP_ENTRY(cholesky)
JVP_ENTRY(lu)
JVP_ENTRY(qr)
JVP_ENTRY(eigh)
JVP_ENTRY(svd)
JVP_ENTRY(eig)

jx_status linalg_jvp_triangular_solve(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                                      int nout, jx_array **y, jx_array **ty) {
  (void)nin, (void)nout;
  return jvp_triangular_solve(x, t, pp, y, ty);
}

/* ------------------------------------------------------------ transpose */

/* triangular_solve is linear in b: its transpose solves with op(a) transposed. */
bool linalg_transpose_triangular_solve(jx_array *ct, int nin, jx_array *const *x, const bool *linear,
                                       const Aval *in, const PrimParams *pp, jx_array **ct_in) {
  (void)nin, (void)in;
  if (linear[0]) {
    error_set(JX_ERR_INTERNAL, "transpose: triangular_solve is not linear in a");
    return false;
  }
  ct_in[0] = NULL;
  ct_in[1] = prim_triangular_solve(x[0], ct, pp->flags ^ LINALG_TRANSPOSE_A);
  return ct_in[1] != NULL;
}

/* ------------------------------------------------------------ tridiagonal_solve */

/* x[..., lo:hi] along `axis`. */
static jx_array *slice_axis(jx_array *x, int axis, int64_t lo, int64_t hi) {
  if (!x) return NULL;
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM], step[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) stop[d] = x->shape[d], step[d] = 1;
  start[axis] = lo, stop[axis] = hi;
  return prim_slice(x, start, stop, step);
}

/* x padded with zeros along `axis`: lo before, hi after. */
static jx_array *pad_axis(jx_array *x, int axis, int64_t lo, int64_t hi) {
  if (!x) return NULL;
  int64_t l[JX_MAX_NDIM] = {0}, h[JX_MAX_NDIM] = {0};
  l[axis] = lo, h[axis] = hi;
  return prim_pad(x, l, h, 0.0);
}

/* A diagonal v (..., m) broadcast over the columns of b (..., m, n). */
static jx_array *per_row(jx_array *v, jx_array *b) {
  if (!v || !b) return NULL;
  int bd[JX_MAX_NDIM];
  for (int d = 0; d < v->ndim; d++) bd[d] = d;
  return prim_broadcast_in_dim(v, b->ndim, b->shape, bd);
}

/* The tridiagonal matrix (dl, d, du) times b (JAX's _tridiagonal_product): row i is
 * dl[i] b[i-1] + d[i] b[i] + du[i] b[i+1]. NULL diagonals are zero. */
static jx_array *tridiagonal_product(jx_array *dl, jx_array *d, jx_array *du, jx_array *b) {
  int r = b->ndim - 2, v = b->ndim - 2; /* the row axis of b, the length axis of a diagonal */
  int64_t m = b->shape[r];
  jx_array *y = d ? mul(per_row(d, b), b) : NULL;
  if (m > 1 && du)
    y = tadd(y, pad_axis(mul(per_row(slice_axis(du, v, 0, m - 1), slice_axis(b, r, 0, m - 1)), slice_axis(b, r, 1, m)),
                         r, 0, 1));
  if (m > 1 && dl)
    y = tadd(y, pad_axis(mul(per_row(slice_axis(dl, v, 1, m), slice_axis(b, r, 1, m)), slice_axis(b, r, 0, m - 1)),
                         r, 1, 0));
  return y ? y : tx_full_like(b, 0);
}

/* x = A^-1 b; dx = A^-1 (db - dA x). */
jx_status linalg_jvp_tridiagonal_solve(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                                       int nout, jx_array **y, jx_array **ty) {
  (void)nin, (void)nout, (void)pp;
  jx_array *ans = y[0] = prim_tridiagonal_solve(x[0], x[1], x[2], x[3]);
  if (!ans) return jx_last_status();
  jx_array *rhs = t[3];
  if (t[0] || t[1] || t[2]) {
    jx_array *dax = tridiagonal_product(t[0], t[1], t[2], ans);
    rhs = rhs ? sub(rhs, dax) : prim_unary(PRIM_neg, dax);
  }
  ty[0] = rhs ? prim_tridiagonal_solve(x[0], x[1], x[2], rhs) : NULL;
  return rhs && !ty[0] ? jx_last_status() : JX_OK;
}

/* The transpose of (dl, d, du) is (du shifted down, d, dl shifted up). */
bool linalg_transpose_tridiagonal_solve(jx_array *ct, int nin, jx_array *const *x, const bool *linear,
                                        const Aval *in, const PrimParams *pp, jx_array **ct_in) {
  (void)nin, (void)in, (void)pp;
  if (linear[0] || linear[1] || linear[2]) {
    error_set(JX_ERR_INTERNAL, "transpose: tridiagonal_solve is linear in b only");
    return false;
  }
  ct_in[0] = ct_in[1] = ct_in[2] = NULL;
  int v = x[0]->ndim - 1;
  int64_t m = x[0]->shape[v];
  jx_array *dl_t = m > 0 ? pad_axis(slice_axis(x[2], v, 0, m - 1), v, 1, 0) : x[2];
  jx_array *du_t = m > 0 ? pad_axis(slice_axis(x[0], v, 1, m), v, 0, 1) : x[0];
  ct_in[3] = prim_tridiagonal_solve(dl_t, x[1], du_t, ct);
  return ct_in[3] != NULL;
}
