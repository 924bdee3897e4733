/* linalg.c -- the linear-algebra primitives (lax.linalg's cholesky_p, triangular_solve_p,
 * lu_p, qr_p, eigh_p, svd_p, eig_p, tridiagonal_solve_p): their shape rules (jax/_src/lax/linalg.py), their
 * routines (ir/alu.h: ROUTINE_CHOLESKY ..), and their binders. Every operand is a
 * stack of matrices: leading dims are batch dims and the routine sees them flattened. */
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"
#include "trace/prim.h"

bool prim_is_linalg(Prim p) { return p >= PRIM_cholesky && p <= PRIM_tridiagonal_solve; }

int prim_linalg_nout(Prim p, const PrimParams *pp) {
  switch (p) {
  case PRIM_lu: return 3;
  case PRIM_qr: case PRIM_eigh: return 2;
  case PRIM_svd: return pp->flags & LINALG_COMPUTE_UV ? 3 : 1;
  case PRIM_eig: return 1 + !!(pp->flags & LINALG_COMPUTE_LEFT) + !!(pp->flags & LINALG_COMPUTE_RIGHT);
  default: return 1;
  }
}

static void shape_text(char *buf, size_t n, const Aval *a) {
  size_t k = (size_t)snprintf(buf, n, "%s[", jx_dtype_name(a->dtype));
  for (int d = 0; d < a->ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, d ? ",%lld" : "%lld", (long long)a->shape[d]);
  if (k < n) snprintf(buf + k, n - k, "]");
}

static bool bad(jx_status s, Prim p, const char *what, const Aval *a, const Aval *b) {
  char x[160], y[160] = "";
  shape_text(x, sizeof x, a);
  if (b) shape_text(y, sizeof y, b);
  error_set(s, "%s: %s (got %s%s%s)", prim_name(p), what, x, b ? " and " : "", y);
  return false;
}

/* A float32/float64/complex64/complex128 stack of matrices (square if asked). */
static bool check_matrix(Prim p, const Aval *a, bool square) {
  if (a->ndim < 2) return bad(JX_ERR_SHAPE, p, "needs an array of rank >= 2", a, NULL);
  if (a->dtype != JX_FLOAT32 && a->dtype != JX_FLOAT64 && a->dtype != JX_COMPLEX64 && a->dtype != JX_COMPLEX128)
    return bad(JX_ERR_DTYPE, p, "needs float32, float64, complex64 or complex128 matrices", a, NULL);
  if (square && a->shape[a->ndim - 1] != a->shape[a->ndim - 2])
    return bad(JX_ERR_SHAPE, p, "needs square matrices", a, NULL);
  return true;
}

/* out: a's batch dims followed by rows x cols (cols < 0: a vector of rows). */
static Aval batched(const Aval *a, jx_dtype dtype, int64_t rows, int64_t cols) {
  Aval o = *a;
  o.dtype = dtype;
  o.weak = dtype == a->dtype && a->weak;
  o.ndim = a->ndim - 2;
  o.shape[o.ndim++] = rows;
  if (cols >= 0) o.shape[o.ndim++] = cols;
  return o;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* tridiagonal_solve: dl, d, du (..., m) of one float dtype and b (..., m, n) with the
 * same batch dims (jax/_src/lax/linalg.py: _tridiagonal_solve_shape_rule). */
static bool tridiagonal_abstract_eval(Prim p, const Aval *in, Aval *out) {
  const Aval *b = &in[3];
  if (!check_matrix(p, b, false)) return false;
  for (int i = 0; i < 3; i++) {
    if (in[i].dtype != b->dtype) return bad(JX_ERR_DTYPE, p, "dl, d, du and b must have one dtype", &in[i], b);
    if (in[i].ndim != b->ndim - 1 || memcmp(in[i].shape, b->shape, (size_t)in[i].ndim * sizeof(int64_t)) != 0)
      return bad(JX_ERR_SHAPE, p, "dl, d and du must have shape b.shape[:-1]", &in[i], b);
  }
  out[0] = *b;
  out[0].weak = in[0].weak && in[1].weak && in[2].weak && b->weak;
  return true;
}

bool prim_linalg_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  int want = p == PRIM_triangular_solve ? 2 : p == PRIM_tridiagonal_solve ? 4 : 1;
  if (nin != want) {
    error_set(JX_ERR_VALUE, "%s: %d operands (expected %d)", prim_name(p), nin, want);
    return false;
  }
  if (p == PRIM_tridiagonal_solve) return tridiagonal_abstract_eval(p, in, out);
  const Aval *a = &in[0];
  bool square = p == PRIM_cholesky || p == PRIM_triangular_solve || p == PRIM_eigh || p == PRIM_eig;
  if (!check_matrix(p, a, square)) return false;
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = min64(m, n);
  bool full = pp->flags & LINALG_FULL_MATRICES;
  switch (p) {
  case PRIM_cholesky: out[0] = *a; return true;
  case PRIM_triangular_solve: {
    const Aval *b = &in[1];
    if (!check_matrix(p, b, false)) return false;
    if (b->dtype != a->dtype) return bad(JX_ERR_DTYPE, p, "a and b must have one dtype", a, b);
    if (b->ndim != a->ndim || memcmp(a->shape, b->shape, (size_t)(a->ndim - 2) * sizeof(int64_t)) != 0)
      return bad(JX_ERR_SHAPE, p, "a and b must have equal batch dimensions", a, b);
    int64_t common = b->shape[b->ndim - (pp->flags & LINALG_LEFT_SIDE ? 2 : 1)];
    if (common != n) return bad(JX_ERR_SHAPE, p, "incompatible shapes", a, b);
    out[0] = *b;
    out[0].weak = a->weak && b->weak;
    return true;
  }
  case PRIM_lu:
    out[0] = *a;
    out[1] = batched(a, JX_INT32, k, -1);
    out[2] = batched(a, JX_INT32, m, -1);
    return true;
  case PRIM_qr:
    out[0] = batched(a, a->dtype, m, full ? m : k);
    out[1] = batched(a, a->dtype, full ? m : k, n);
    return true;
  case PRIM_eigh: /* eigenvalues are real */
    out[0] = *a;
    out[1] = batched(a, dtype_real_part(a->dtype), n, -1);
    return true;
  case PRIM_eig: { /* everything complex, also for real input */
    jx_dtype c = dtype_to_complex(a->dtype);
    int o = 0;
    out[o++] = batched(a, c, n, -1);
    if (pp->flags & LINALG_COMPUTE_LEFT) out[o++] = batched(a, c, n, n);
    if (pp->flags & LINALG_COMPUTE_RIGHT) out[o++] = batched(a, c, n, n);
    return true;
  }
  case PRIM_svd:
    out[0] = batched(a, dtype_real_part(a->dtype), k, -1);
    if (pp->flags & LINALG_COMPUTE_UV) {
      out[1] = batched(a, a->dtype, m, full ? m : k);
      out[2] = batched(a, a->dtype, full ? n : k, n);
    }
    return true;
  default: break;
  }
  error_set(JX_ERR_INTERNAL, "%s is not a linear-algebra primitive", prim_name(p));
  return false;
}

void prim_linalg_routine(Prim p, const Aval *in, const PrimParams *pp, Routine *r) {
  const Aval *x = p == PRIM_triangular_solve ? &in[1] : p == PRIM_tridiagonal_solve ? &in[3] : &in[0];
  static const RoutineOp ops[] = {[PRIM_cholesky - PRIM_cholesky] = ROUTINE_CHOLESKY,
                                  [PRIM_triangular_solve - PRIM_cholesky] = ROUTINE_TRIANGULAR_SOLVE,
                                  [PRIM_lu - PRIM_cholesky] = ROUTINE_LU,
                                  [PRIM_qr - PRIM_cholesky] = ROUTINE_QR,
                                  [PRIM_eigh - PRIM_cholesky] = ROUTINE_EIGH,
                                  [PRIM_svd - PRIM_cholesky] = ROUTINE_SVD,
                                  [PRIM_eig - PRIM_cholesky] = ROUTINE_EIG,
                                  [PRIM_tridiagonal_solve - PRIM_cholesky] = ROUTINE_TRIDIAGONAL_SOLVE};
  int nin = p == PRIM_triangular_solve ? 2 : p == PRIM_tridiagonal_solve ? 4 : 1;
  *r = (Routine){.op = ops[p - PRIM_cholesky], .nin = nin,
                 .nout = prim_linalg_nout(p, pp), .dtype = in[0].dtype,
                 .outer = shape_numel(x->ndim - 2, x->shape), .n = x->shape[x->ndim - 2],
                 .m = x->shape[x->ndim - 1], .inner = 1, .flags = pp->flags};
  for (int i = 0; i < r->nin; i++) r->dtypes[i] = in[i].dtype;
}

/* ------------------------------------------------------------ binders */

jx_array *prim_cholesky(jx_array *a) { return prim_bind(PRIM_cholesky, 1, &a, &(PrimParams){0}); }

jx_array *prim_triangular_solve(jx_array *a, jx_array *b, unsigned flags) {
  return prim_bind(PRIM_triangular_solve, 2, (jx_array *[]){a, b}, &(PrimParams){.flags = flags});
}

jx_status prim_lu(jx_array *a, jx_array **out) {
  return prim_bind_n(PRIM_lu, 1, &a, &(PrimParams){0}, 3, out);
}

jx_status prim_qr(jx_array *a, unsigned flags, jx_array **out) {
  return prim_bind_n(PRIM_qr, 1, &a, &(PrimParams){.flags = flags & LINALG_FULL_MATRICES}, 2, out);
}

jx_status prim_eigh(jx_array *a, unsigned flags, jx_array **out) {
  return prim_bind_n(PRIM_eigh, 1, &a, &(PrimParams){.flags = flags & (LINALG_LOWER | LINALG_UNSORTED)}, 2, out);
}

jx_array *prim_tridiagonal_solve(jx_array *dl, jx_array *d, jx_array *du, jx_array *b) {
  return prim_bind(PRIM_tridiagonal_solve, 4, (jx_array *[]){dl, d, du, b}, &(PrimParams){0});
}

jx_status prim_eig(jx_array *a, unsigned flags, jx_array **out) {
  PrimParams pp = {.flags = flags & (LINALG_COMPUTE_LEFT | LINALG_COMPUTE_RIGHT)};
  return prim_bind_n(PRIM_eig, 1, &a, &pp, prim_linalg_nout(PRIM_eig, &pp), out);
}

jx_status prim_svd(jx_array *a, unsigned flags, jx_array **out) {
  PrimParams pp = {.flags = flags & (LINALG_FULL_MATRICES | LINALG_COMPUTE_UV)};
  return prim_bind_n(PRIM_svd, 1, &a, &pp, prim_linalg_nout(PRIM_svd, &pp), out);
}
