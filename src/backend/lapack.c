/* lapack.c -- the linear-algebra routines on LAPACKE (column-major calls, so LAPACKE
 * never transposes behind our back) and CBLAS, for float32, float64, complex64 and
 * complex128 (LAPACK's s, d, c and z routines): row-major jaxc matrices are passed as
 * their column-major transposes where the algorithm allows it (potrf, syevd/heevd on
 * symmetric/Hermitian input; gesdd of a^T gives v and u^T directly) and copied
 * transposed where it does not (getrf, geqrf, geev). Failures follow JAX on CPU:
 * cholesky, eigh, svd and eig give NaNs for the batch entries LAPACK reports as failed;
 * lu of a singular matrix is returned as LAPACK computes it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gemm.h"
#include "backend/jacobi.h"
#include "backend/lapack.h"
#include "backend/smallqr.h"
#include "core/dtype.h"
#include "core/error.h"

#ifdef JAXC_HAVE_LAPACKE
#include <cblas.h>
#include <lapacke.h>
#endif

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Columns of u and rows of vt (svd), columns of q (qr). */
static int64_t svd_ku(const Routine *r) { return r->flags & LINALG_FULL_MATRICES ? r->n : min64(r->n, r->m); }
static int64_t svd_kv(const Routine *r) { return r->flags & LINALG_FULL_MATRICES ? r->m : min64(r->n, r->m); }

jx_dtype lapack_out_dtype(const Routine *r, int o) {
  if (r->op == ROUTINE_LU && o > 0) return JX_INT32;
  if ((r->op == ROUTINE_EIGH && o == 1) || (r->op == ROUTINE_SVD && o == 0)) return dtype_real_part(r->dtype);
  if (r->op == ROUTINE_EIG) return dtype_to_complex(r->dtype);
  return r->dtype;
}

int64_t lapack_out_numel(const Routine *r, int o) {
  int64_t n = r->n, m = r->m, k = min64(n, m), per = 0;
  switch (r->op) {
  case ROUTINE_CHOLESKY: per = n * n; break;
  case ROUTINE_TRIANGULAR_SOLVE: per = n * m; break;
  case ROUTINE_LU: per = o == 0 ? n * m : o == 1 ? k : n; break;
  case ROUTINE_QR: per = o == 0 ? n * svd_ku(r) : svd_ku(r) * m; break;
  case ROUTINE_EIGH: per = o == 0 ? n * n : n; break;
  case ROUTINE_SVD: per = o == 0 ? k : o == 1 ? n * svd_ku(r) : svd_kv(r) * m; break;
  case ROUTINE_EIG: per = o == 0 ? n : n * n; break;
  case ROUTINE_TRIDIAGONAL_SOLVE: per = n * m; break;
  default: break;
  }
  return r->outer * per;
}

#ifdef JAXC_HAVE_LAPACKE

/* ------------------------------------------------------------ helpers */

/* LAPACK's type letter: s, d, c, z. */
typedef enum Kind { KIND_S, KIND_D, KIND_C, KIND_Z } Kind;

/* One call's context: the routine, its kind, element bytes (esz; a complex element is
 * two reals of rsz bytes) and scratch memory reused by every batch entry of the run:
 * a batch of small problems allocates once and queries LAPACK's workspace sizes once
 * (every entry has the same shape), where LAPACKE's high-level calls would query and
 * malloc/free per entry. */
typedef struct Ctx {
  const Routine *r;
  Kind kind;
  bool cplx, f64; /* complex; the real part is double */
  size_t esz, rsz;
  char *scratch;
  size_t cap;
  int64_t lwork, lrwork, liwork; /* queried workspace sizes (elements); -1 before */
  FftParallelFor par;            /* lapack_run_threads: a backend's threads (NULL: this one) */
  int nthreads;
} Ctx;

/* The four LAPACKE variants of one routine (real and complex names may differ); every
 * pointer argument is passed as void * or char *, which converts to each variant's
 * element type. */
#define LAPACKE4(c, s, d, cc, z, ...)                                                            \
  ((c)->kind == KIND_S   ? LAPACKE_##s(__VA_ARGS__)                                              \
   : (c)->kind == KIND_D ? LAPACKE_##d(__VA_ARGS__)                                              \
   : (c)->kind == KIND_C ? LAPACKE_##cc(__VA_ARGS__)                                             \
                         : LAPACKE_##z(__VA_ARGS__))

/* dst (cols x rows, row-major) = src (rows x cols, row-major) transposed: also the
 * column-major copy of src. Typed loops in 8 x 8 tiles, each written a dst row at a
 * time (contiguous stores, strided loads): 32 x 32 tiles stored along the source rows,
 * 4 KB apart at n = 1024, evicted each other from L1 (float32 n = 1024: 14.3 ms vs
 * 0.47 ms, 53% of solve_1024's time; a per-element memcpy of a run-time size cost ~10 ns
 * an element). */
#define TRANSPOSE_TILE 8
#define TRANSPOSE_TYPED(T)                                                                         \
  do {                                                                                             \
    T *d = dst;                                                                                    \
    const T *s = src;                                                                              \
    for (int64_t i0 = 0; i0 < rows; i0 += TRANSPOSE_TILE)                                          \
      for (int64_t j0 = 0; j0 < cols; j0 += TRANSPOSE_TILE) {                                      \
        int64_t i1 = min64(i0 + TRANSPOSE_TILE, rows), j1 = min64(j0 + TRANSPOSE_TILE, cols);      \
        for (int64_t j = j0; j < j1; j++)                                                          \
          for (int64_t i = i0; i < i1; i++) d[j * rows + i] = s[i * lds + j];                      \
      }                                                                                            \
  } while (0)
typedef struct Pair64 {
  uint64_t a, b;
} Pair64;
/* The same with src's rows lds elements apart. */
static void transpose_ld(void *dst, const void *src, int64_t rows, int64_t cols, int64_t lds, size_t esz) {
  if (esz == 16) TRANSPOSE_TYPED(Pair64);
  else if (esz == 8) TRANSPOSE_TYPED(uint64_t);
  else TRANSPOSE_TYPED(uint32_t);
}
static void transpose_into(void *dst, const void *src, int64_t rows, int64_t cols, size_t esz) {
  transpose_ld(dst, src, rows, cols, cols, esz);
}

static void set_real(const Ctx *c, void *p, int64_t i, double v) {
  if (c->f64) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}

/* n elements of NaN (both parts of a complex element). */
static void fill_nan(const Ctx *c, void *p, int64_t n) {
  for (int64_t i = 0; i < n * (c->cplx ? 2 : 1); i++) set_real(c, p, i, NAN);
}

static void fill_eye(const Ctx *c, void *p, int64_t n) {
  memset(p, 0, (size_t)(n * n) * c->esz);
  for (int64_t i = 0; i < n; i++) set_real(c, p, (i * n + i) * (c->cplx ? 2 : 1), 1);
}

/* Negates the imaginary parts of n complex elements (nothing for real ones). */
static void conj_in_place(const Ctx *c, void *p, int64_t n) {
  if (!c->cplx) return;
  for (int64_t i = 0; i < n; i++)
    if (c->f64) ((double *)p)[2 * i + 1] = -((double *)p)[2 * i + 1];
    else ((float *)p)[2 * i + 1] = -((float *)p)[2 * i + 1];
}

/* Whether element i's real part is NaN (a NaN pivot in potrf). */
static bool is_nan_at(const Ctx *c, const void *p, int64_t i) {
  int64_t k = i * (c->cplx ? 2 : 1);
  return c->f64 ? isnan(((const double *)p)[k]) : isnan(((const float *)p)[k]);
}

static int ld(int64_t n) { return n > 1 ? (int)n : 1; }

/* Batch entry b of operand p with `per` elements of esz bytes per entry. */
static char *entry(void *p, int64_t b, int64_t per, size_t esz) { return (char *)p + (size_t)(b * per) * esz; }

static jx_status oom(const Routine *r) {
  error_set(JX_ERR_OOM, "%s: out of memory for LAPACK scratch (%lld x %lld)", routine_name(r->op),
            (long long)r->n, (long long)r->m);
  return JX_ERR_OOM;
}

#define SCRATCH_ALIGN 64
static size_t align_up(size_t n) { return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN; }

/* Carves nb buffers of bytes[i] each out of c's scratch (grown if needed) into bufs[i];
 * false when out of memory. */
static bool scratch_get(Ctx *c, int nb, const size_t *bytes, char **bufs) {
  size_t total = 0;
  for (int i = 0; i < nb; i++) total += align_up(bytes[i] ? bytes[i] : 1);
  if (total > c->cap) {
    free(c->scratch);
    c->scratch = aligned_alloc(SCRATCH_ALIGN, total);
    c->cap = c->scratch ? total : 0;
    if (!c->scratch) return false;
  }
  char *q = c->scratch;
  for (int i = 0; i < nb; i++) bufs[i] = q, q += align_up(bytes[i] ? bytes[i] : 1);
  return true;
}

/* A workspace query's answer (the real part of work[0] after lwork = -1), rounded up:
 * a float32 answer above 2^24 may have been rounded down. */
static int64_t query_size(const Ctx *c, const void *w) {
  double v = c->f64 ? *(const double *)w : (double)*(const float *)w * (1 + 0x1p-22);
  return (int64_t)ceil(v) + 1;
}

/* ------------------------------------------------------------ routines */

typedef jx_status RoutineFn(Ctx *c, void *const *in, void *const *out, int64_t b);

/* Cholesky of small real matrices in place on the row-major lower half, right-looking:
 * per column j the pivot, the column below it scaled by its reciprocal (as LAPACK's
 * potf2) and copied to a contiguous buffer, then each row's trailing entries updated by
 * one axpy with that buffer (contiguous, so it vectorizes; the dot-product form ran its
 * serial reductions at ~1 multiply-add per cycle). Fails as potf2 does: a pivot that is
 * not > 0 (or NaN) stops with info = its 1-based index. At -O3 (the axpys vectorize).
 * The cholesky routine over 1000 16 x 16 matrices, one thread, load 5: 0.35 ms against
 * 0.60 ms with OpenBLAS's potrf (~0.6 us a call: buffer allocation and dispatch); at
 * 32 x 32 the two were even (2.3-2.6 ms), so OpenBLAS keeps n > 16. */
#define CHOL_SMALL_MAX 16
#define CHOL_SMALL(T, SQRT)                                                                        \
  __attribute__((optimize("O3"))) static int chol_small_##T(T *a, int64_t n) {                    \
    T col[CHOL_SMALL_MAX];                                                                         \
    for (int64_t j = 0; j < n; j++) {                                                              \
      T d = a[j * n + j];                                                                          \
      if (!(d > 0)) return (int)j + 1;                                                             \
      d = SQRT(d);                                                                                 \
      a[j * n + j] = d;                                                                            \
      T r = 1 / d;                                                                                 \
      for (int64_t k = j + 1; k < n; k++) col[k] = a[k * n + j] *= r;                              \
      for (int64_t i = j + 1; i < n; i++) {                                                        \
        T t = col[i], *ri = a + i * n;                                                             \
        for (int64_t k = j + 1; k <= i; k++) ri[k] -= t * col[k];                                  \
      }                                                                                            \
    }                                                                                              \
    return 0;                                                                                      \
  }
CHOL_SMALL(float, sqrtf)
CHOL_SMALL(double, sqrt)

static jx_status cholesky(Ctx *c, void *const *in, void *const *out, int64_t b) {
  int64_t n = c->r->n;
  size_t esz = c->esz;
  char *l = entry(out[0], b, n * n, esz);
  memcpy(l, entry(in[0], b, n * n, esz), (size_t)(n * n) * esz);
  if (n == 0) return JX_OK;
  /* the row-major lower half is the column-major upper half: U^H U = conj(a) there, so
   * U^T (read back row-major) is the lower L with L L^H = a */
  int info;
  if (n <= CHOL_SMALL_MAX && c->kind == KIND_S) info = chol_small_float((float *)l, n);
  else if (n <= CHOL_SMALL_MAX && c->kind == KIND_D) info = chol_small_double((double *)l, n);
  else
    info = LAPACKE4(c, spotrf_work, dpotrf_work, cpotrf_work, zpotrf_work, LAPACK_COL_MAJOR, 'U', (int)n,
                    (void *)l, (int)n);
  /* reference LAPACK reports a NaN pivot as a failure; OpenBLAS's potrf does not, but a
   * NaN anywhere in the lower half reaches its row's diagonal */
  for (int64_t i = 0; info == 0 && i < n; i++)
    if (is_nan_at(c, l, i * n + i)) info = (int)i + 1;
  if (info != 0) fill_nan(c, l, n * n); /* NaN below, zeros above: JAX's tril of NaNs */
  for (int64_t i = 0; i + 1 < n; i++) memset(l + (size_t)(i * n + i + 1) * esz, 0, (size_t)(n - i - 1) * esz);
  return JX_OK;
}

/* Independent parts of one triangular_solve entry: b's columns (left side: a x = b) or
 * rows (right side: x a = b). */
static int64_t trsm_parts(const Routine *r) { return r->flags & LINALG_LEFT_SIDE ? r->m : r->n; }

/* The blocked triangular solve (real kinds, where jaxc's GEMM has AVX-512 tiles: it runs
 * 1.5-2x OpenBLAS-Haswell's kernels, and OpenBLAS's trsm on one thread reached ~50
 * GFLOP/s at n = 1024): diagonal blocks of TRSM_NB by trsm, every off-diagonal block by
 * gemm_sub (right-looking: after a block of x is solved, the blocks it feeds are updated
 * in one product). Decided on the whole problem (k >= TRSM_BLOCKED_MIN with at least
 * TRSM_BLOCKED_MIN_RHS right-hand sides), never on a part, so that the cpu's parts and
 * the interpreter's single call take the same path and round alike. */
#define TRSM_NB 128
#define TRSM_BLOCKED_MIN 256
#define TRSM_BLOCKED_MIN_RHS 16
static bool trsm_blocked(const Ctx *c) {
  const Routine *r = c->r;
  bool left = r->flags & LINALG_LEFT_SIDE;
  int64_t k = left ? r->n : r->m, rhs = left ? r->m : r->n;
  return (c->kind == KIND_S || c->kind == KIND_D) && gemm_avx512() && k >= TRSM_BLOCKED_MIN &&
         rhs >= TRSM_BLOCKED_MIN_RHS && k <= INT32_MAX && rhs <= INT32_MAX;
}

/* trsm on (rows x cols) of x (leading dimension ldx) with the diagonal block of a at
 * (d, d) (leading dimension lda). */
static void trsm_call(const Ctx *c, enum CBLAS_SIDE side, enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE tr,
                      enum CBLAS_DIAG diag, int64_t rows, int64_t cols, const char *a, int64_t lda,
                      char *x, int64_t ldx) {
  static const double one_d[2] = {1, 0};
  static const float one_f[2] = {1, 0};
  int ri = (int)rows, ci = (int)cols, ka = (int)lda, mi = (int)ldx;
  switch (c->kind) {
  case KIND_S: cblas_strsm(CblasRowMajor, side, uplo, tr, diag, ri, ci, 1.0f, (const float *)a, ka, (float *)x, mi); break;
  case KIND_D: cblas_dtrsm(CblasRowMajor, side, uplo, tr, diag, ri, ci, 1.0, (const double *)a, ka, (double *)x, mi); break;
  case KIND_C: cblas_ctrsm(CblasRowMajor, side, uplo, tr, diag, ri, ci, one_f, a, ka, x, mi); break;
  case KIND_Z: cblas_ztrsm(CblasRowMajor, side, uplo, tr, diag, ri, ci, one_d, a, ka, x, mi); break;
  }
}

/* c (M x N, ldc) -= op(a) @ op(b) on jaxc's GEMM (element offsets into the typed arrays). */
static bool trsm_update(const Ctx *c, const char *a, int64_t lda, bool ta, const char *b, int64_t ldb, bool tb,
                        char *out, int64_t ldc, int64_t M, int64_t N, int64_t K) {
  if (M <= 0 || N <= 0 || K <= 0) return true;
  if (c->kind == KIND_S)
    return gemm_sub_f32((const float *)a, lda, ta, (const float *)b, ldb, tb, (float *)out, ldc, M, N, K);
  return gemm_sub_f64((const double *)a, lda, ta, (const double *)b, ldb, tb, (double *)out, ldc, M, N, K);
}

/* op(a) x = b (left) or x op(a) = b (right) in place on x (rows x cols, leading dimension
 * m), a (k x k, leading dimension k), in blocks of TRSM_NB. op(a) is lower triangular
 * where lower != trans: the left side then runs forward over row blocks of x, the right
 * side backward over column blocks (x's column j depends on the columns after it). */
static bool trsm_blocked_run(const Ctx *c, bool left, bool trans, enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE tr,
                             enum CBLAS_DIAG diag, const char *a, int64_t k, char *x, int64_t rows, int64_t cols,
                             int64_t m) {
  size_t esz = c->esz;
  bool eff_lower = (uplo == CblasLower) != trans, forward = left ? eff_lower : !eff_lower;
  int64_t nblk = (k + TRSM_NB - 1) / TRSM_NB;
  for (int64_t s = 0; s < nblk; s++) {
    int64_t bi = forward ? s : nblk - 1 - s, i0 = bi * TRSM_NB, i1 = min64(i0 + TRSM_NB, k), nb = i1 - i0;
    int64_t r0 = forward ? i1 : 0, r1 = forward ? k : i0; /* the blocks this one feeds */
    const char *ad = a + (size_t)(i0 * k + i0) * esz;
    bool ok;
    if (left) {
      trsm_call(c, CblasLeft, uplo, tr, diag, nb, cols, ad, k, x + (size_t)(i0 * m) * esz, m);
      /* x[r0:r1, :] -= op(a)[r0:r1, i0:i1] @ x[i0:i1, :] */
      const char *ab = a + (size_t)(trans ? i0 * k + r0 : r0 * k + i0) * esz;
      ok = trsm_update(c, ab, k, trans, x + (size_t)(i0 * m) * esz, m, false, x + (size_t)(r0 * m) * esz, m,
                       r1 - r0, cols, nb);
    } else {
      trsm_call(c, CblasRight, uplo, tr, diag, rows, nb, ad, k, x + (size_t)i0 * esz, m);
      /* x[:, r0:r1] -= x[:, i0:i1] @ op(a)[i0:i1, r0:r1] */
      const char *ab = a + (size_t)(trans ? r0 * k + i0 : i0 * k + r0) * esz;
      ok = trsm_update(c, x + (size_t)i0 * esz, m, false, ab, k, trans, x + (size_t)r0 * esz, m, rows, r1 - r0,
                       nb);
    }
    if (!ok) return false;
  }
  return true;
}

/* trsm of parts [p0, p1) of entry b (columns or rows of x, as trsm_parts); conjugate_a
 * without transpose_a (no CBLAS flag) solves with a conjugated copy. */
static jx_status triangular_solve_part(Ctx *c, void *const *in, void *const *out, int64_t b, int64_t p0, int64_t p1) {
  const Routine *r = c->r;
  int64_t n = r->n, m = r->m;
  size_t esz = c->esz;
  bool left = r->flags & LINALG_LEFT_SIDE, trans = r->flags & LINALG_TRANSPOSE_A;
  bool conj = c->cplx && (r->flags & LINALG_CONJUGATE_A);
  int64_t k = left ? n : m;
  const char *a = entry(in[0], b, k * k, esz);
  char *x = entry(out[0], b, n * m, esz);
  const char *bb = entry(in[1], b, n * m, esz);
  int64_t rows = left ? n : p1 - p0, cols = left ? p1 - p0 : m; /* the block of x solved here */
  size_t off = (size_t)(left ? p0 : p0 * m) * esz;
  x += off, bb += off;
  if (cols == m) memcpy(x, bb, (size_t)(rows * m) * esz);
  else
    for (int64_t i = 0; i < rows; i++) memcpy(x + (size_t)(i * m) * esz, bb + (size_t)(i * m) * esz, (size_t)cols * esz);
  if (rows == 0 || cols == 0) return JX_OK;
  if (conj && !trans) {
    char *ac;
    if (!scratch_get(c, 1, (size_t[]){(size_t)(k * k) * esz}, &ac)) return oom(r);
    memcpy(ac, a, (size_t)(k * k) * esz);
    conj_in_place(c, ac, k * k);
    a = ac;
  }
  enum CBLAS_SIDE side = left ? CblasLeft : CblasRight;
  enum CBLAS_UPLO uplo = r->flags & LINALG_LOWER ? CblasLower : CblasUpper;
  enum CBLAS_TRANSPOSE tr = !trans ? CblasNoTrans : conj ? CblasConjTrans : CblasTrans;
  enum CBLAS_DIAG diag = r->flags & LINALG_UNIT_DIAGONAL ? CblasUnit : CblasNonUnit;
  if (trsm_blocked(c)) {
    if (!trsm_blocked_run(c, left, trans, uplo, tr, diag, a, k, x, rows, cols, m)) return oom(r);
    return JX_OK;
  }
  trsm_call(c, side, uplo, tr, diag, rows, cols, a, k, x, m);
  return JX_OK;
}

static jx_status triangular_solve(Ctx *c, void *const *in, void *const *out, int64_t b) {
  return triangular_solve_part(c, in, out, b, 0, trsm_parts(c->r));
}

/* gtsv on copies (it overwrites its operands): LAPACK's dl and du are the n-1
 * off-diagonals, JAX's dl[1..n) and du[0..n-1); gtsv's right-hand sides are
 * column-major, so b goes in transposed and x comes out transposed back. A singular
 * system (info > 0) gives NaNs, as JAX on CPU. */
static jx_status tridiagonal_solve(Ctx *c, void *const *in, void *const *out, int64_t b) {
  int64_t n = c->r->n, m = c->r->m;
  size_t esz = c->esz;
  char *x = entry(out[0], b, n * m, esz);
  if (n == 0 || m == 0) return JX_OK;
  char *w;
  if (!scratch_get(c, 1, (size_t[]){(size_t)(3 * n + n * m) * esz}, &w)) return oom(c->r);
  char *dl = w, *d = w + (size_t)n * esz, *du = w + (size_t)(2 * n) * esz, *bt = w + (size_t)(3 * n) * esz;
  memcpy(dl, entry(in[0], b, n, esz), (size_t)n * esz);
  memcpy(d, entry(in[1], b, n, esz), (size_t)n * esz);
  memcpy(du, entry(in[2], b, n, esz), (size_t)n * esz);
  transpose_into(bt, entry(in[3], b, n * m, esz), n, m, esz);
  lapack_int info = LAPACKE4(c, sgtsv_work, dgtsv_work, cgtsv_work, zgtsv_work, LAPACK_COL_MAJOR, (lapack_int)n,
                             (lapack_int)m, (void *)(dl + esz), (void *)d, (void *)du, (void *)bt, (lapack_int)n);
  if (info != 0) fill_nan(c, bt, n * m);
  transpose_into(x, bt, m, n, esz);
  return JX_OK;
}

/* The blocked LU (real kinds where jaxc's GEMM has AVX-512 tiles, from min(n, m) >=
 * LU_BLOCKED_MIN): LAPACK's right-looking getrf with jaxc's GEMM for the trailing update,
 * on the column-major copy w (n x m, leading dimension n). Per block of LU_NB columns:
 * getrf of the panel below the diagonal (OpenBLAS, one thread), then for every trailing
 * column, independently (spread over the backend's threads when lapack_run_threads
 * gives them): the panel's row swaps, the trsm with the panel's unit lower triangle and
 * the GEMM update of the rows below. The swaps of later panels reach the earlier columns
 * at the end, a column at a time. Each column's arithmetic does not depend on how the
 * columns are split, so the cpu's threads and the interpreter round alike. OpenBLAS's
 * getrf on one thread ran 1024^2 float32 in 12.5 ms (57 GFLOP/s, load 3); its threaded
 * getrf needs an idle second core (cpu.c's others_idle). */
#define LU_NB 128
#define LU_BLOCKED_MIN 256
static bool lu_blocked(const Ctx *c) {
  const Routine *r = c->r;
  return (c->kind == KIND_S || c->kind == KIND_D) && gemm_avx512() && min64(r->n, r->m) >= LU_BLOCKED_MIN &&
         r->n <= INT32_MAX && r->m <= INT32_MAX;
}

/* Rows i <-> ipiv[i] - 1 of one column, for i in [i0, i1) in order (typed: a memcpy of
 * a run-time size per element was 15% of the time). */
static void lu_swaps(const Ctx *c, char *col, int64_t i0, int64_t i1, const lapack_int *ipiv) {
  if (c->kind == KIND_S) {
    float *x = (float *)col;
    for (int64_t i = i0; i < i1; i++) {
      int64_t p = ipiv[i] - 1;
      float t = x[i];
      x[i] = x[p], x[p] = t;
    }
  } else {
    double *x = (double *)col;
    for (int64_t i = i0; i < i1; i++) {
      int64_t p = ipiv[i] - 1;
      double t = x[i];
      x[i] = x[p], x[p] = t;
    }
  }
}

typedef struct LuStep {
  const Ctx *c;
  char *w;
  int64_t n, j, jb, c0; /* rows, the panel's first column and width, the first trailing column */
  const lapack_int *ipiv; /* 1-based global pivots (rows j..j+jb are the panel's) */
  _Atomic int failed;
} LuStep;

/* Trailing columns [c0 + t0, c0 + t1): swaps, trsm with the panel's L11, update below. */
static void lu_step_cols(void *ctx, int64_t t0, int64_t t1) {
  LuStep *st = ctx;
  const Ctx *c = st->c;
  size_t esz = c->esz;
  int64_t n = st->n, j = st->j, jb = st->jb, cols = t1 - t0;
  char *col0 = st->w + (size_t)((st->c0 + t0) * n) * esz;
  for (int64_t q = 0; q < cols; q++) lu_swaps(c, col0 + (size_t)(q * n) * esz, j, j + jb, st->ipiv);
  const char *l11 = st->w + (size_t)(j * n + j) * esz;
  if (c->kind == KIND_S)
    cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, (int)jb, (int)cols, 1.0f,
                (const float *)l11, (int)n, (float *)(col0 + (size_t)j * esz), (int)n);
  else
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, (int)jb, (int)cols, 1.0,
                (const double *)l11, (int)n, (double *)(col0 + (size_t)j * esz), (int)n);
  /* a22 -= a21 a12 (column-major), as row-major a22^T -= a12^T a21^T */
  int64_t below = n - j - jb;
  if (below > 0 && !trsm_update(c, col0 + (size_t)j * esz, n, false, st->w + (size_t)(j * n + j + jb) * esz, n, false,
                                col0 + (size_t)(j + jb) * esz, n, cols, below, jb))
    st->failed = 1;
}

/* Runs fn over [0, total) on the backend's threads (chunks taken in turn) or here. */
static void lu_for(const Ctx *c, void (*fn)(void *, int64_t, int64_t), void *ctx, int64_t total) {
  if (total <= 0) return;
  int64_t chunks = c->par && c->nthreads >= 2 ? min64((int64_t)c->nthreads * 4, total / 16) : 1;
  if (chunks >= 2) c->par(fn, ctx, total, (int)chunks, 16);
  else fn(ctx, 0, total);
}

/* Later panels' swaps on earlier columns: column q (in panel block q / LU_NB) takes the
 * swaps of rows from the next block's first row on. */
typedef struct LuBack {
  const Ctx *c;
  char *w;
  int64_t n, k;
  const lapack_int *ipiv;
} LuBack;
static void lu_back_cols(void *ctx, int64_t q0, int64_t q1) {
  LuBack *bk = ctx;
  size_t esz = bk->c->esz;
  for (int64_t q = q0; q < q1; q++) {
    lu_swaps(bk->c, bk->w + (size_t)(q * bk->n) * esz, (q / LU_NB + 1) * LU_NB, bk->k, bk->ipiv);
  }
}

static bool lu_blocked_run(const Ctx *c, char *w, int64_t n, int64_t m, lapack_int *ipiv) {
  int64_t k = min64(n, m);
  for (int64_t j = 0; j < k; j += LU_NB) {
    int64_t jb = min64(LU_NB, k - j);
    char *panel = w + (size_t)(j * n + j) * c->esz;
    if (c->kind == KIND_S) LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, (int)(n - j), (int)jb, (float *)panel, (int)n, ipiv + j);
    else LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, (int)(n - j), (int)jb, (double *)panel, (int)n, ipiv + j);
    for (int64_t i = j; i < j + jb; i++) ipiv[i] += (lapack_int)j;
    LuStep st = {c, w, n, j, jb, j + jb, ipiv, 0};
    lu_for(c, lu_step_cols, &st, m - j - jb);
    if (st.failed) return false;
  }
  LuBack bk = {c, w, n, k, ipiv};
  lu_for(c, lu_back_cols, &bk, k);
  return true;
}

/* perm (the identity on entry) permuted by the k 0-based row swaps piv. */
static void lu_perm(const int32_t *piv, int64_t k, int32_t *perm) {
  for (int64_t i = 0; i < k; i++) {
    int32_t t = perm[i];
    perm[i] = perm[piv[i]];
    perm[piv[i]] = t;
  }
}

static jx_status lu(Ctx *c, void *const *in, void *const *out, int64_t b) {
  int64_t n = c->r->n, m = c->r->m, k = min64(n, m);
  size_t esz = c->esz;
  char *luo = entry(out[0], b, n * m, esz);
  int32_t *piv = (int32_t *)out[1] + b * k, *perm = (int32_t *)out[2] + b * n;
  for (int64_t i = 0; i < n; i++) perm[i] = (int32_t)i;
  if (k == 0) return JX_OK;
  char *buf[2];
  if (!scratch_get(c, 2, (size_t[]){(size_t)(n * m) * esz, (size_t)k * sizeof(lapack_int)}, buf)) return oom(c->r);
  char *w = buf[0];
  lapack_int *ipiv = (lapack_int *)buf[1];
  transpose_into(w, entry(in[0], b, n * m, esz), n, m, esz); /* column-major n x m */
  if (lu_blocked(c)) {
    if (!lu_blocked_run(c, w, n, m, ipiv)) return oom(c->r);
  } else
    LAPACKE4(c, sgetrf_work, dgetrf_work, cgetrf_work, zgetrf_work, LAPACK_COL_MAJOR, (int)n, (int)m, (void *)w, ld(n),
             ipiv);
  transpose_into(luo, w, m, n, esz);
  for (int64_t i = 0; i < k; i++) piv[i] = (int32_t)(ipiv[i] - 1);
  lu_perm(piv, k, perm);
  return JX_OK;
}

/* Entries [b0, b1) of lu by smallqr.c (float32, n, m <= SMALLQR_MAX), 16 at a time; an
 * entry it leaves (a non-finite input) goes to lu, the LAPACK path. */
static bool smalllu_fits(const Ctx *c) {
  const Routine *r = c->r;
  return r->op == ROUTINE_LU && c->kind == KIND_S && r->n >= 1 && r->m >= 1 && r->n <= SMALLQR_MAX &&
         r->m <= SMALLQR_MAX && jacobi_available();
}
static jx_status smalllu_batch(Ctx *c, void *const *in, void *const *out, int64_t b0, int64_t b1) {
  int64_t n = c->r->n, m = c->r->m, k = min64(n, m);
  jx_status s = JX_OK;
  for (int64_t b = b0; b < b1 && s == JX_OK; b += 16) {
    int cnt = (int)min64(16, b1 - b);
    int32_t *piv = (int32_t *)out[1] + b * k;
    uint32_t left = smallqr_lu_f32((const float *)in[0] + b * n * m, cnt, n, m, (float *)out[0] + b * n * m, piv);
    for (int l = 0; l < cnt && s == JX_OK; l++) {
      if (left >> l & 1) s = lu(c, in, out, b + l);
      else {
        int32_t *perm = (int32_t *)out[2] + (b + l) * n;
        for (int64_t i = 0; i < n; i++) perm[i] = (int32_t)i;
        lu_perm(piv + l * k, k, perm);
      }
    }
  }
  return s;
}

/* QR of small matrices as the LQ factorization of the column-major view of a, a^T
 * (m x n): gelqf + orglq (unglq) on a copy of a with no transposes (a^T = L Q' gives
 * a = Q'^T L^T: q = Q'^T is Q' read row-major, r = L^T is L's upper part read
 * row-major). On a batch of 16 x 16 matrices (OpenBLAS 0.3.21, one thread) LAPACK's
 * time is that of geqrf + orgqr (3.7 ms per 1000 both), while the transposes and the
 * strided copy of r took 13% of qr's perf samples; from n = 256 geqrf + orgqr is
 * faster (1.1 vs 1.5 ms at 256). */
#define QR_LQ_MAX_N 64
static jx_status qr_lq(Ctx *c, void *const *in, void *const *out, int64_t b) {
  const Routine *r = c->r;
  int64_t n = r->n, m = r->m, k = min64(n, m), kq = svd_ku(r), ldx = m > kq ? m : kq;
  size_t esz = c->esz;
  char *q = entry(out[0], b, n * kq, esz), *ro = entry(out[1], b, kq * m, esz);
  const char *a = entry(in[0], b, n * m, esz);
  if (c->lwork < 0) { /* the larger of gelqf's and orglq's optimal workspaces */
    double w1[2] = {0, 0}, w2[2] = {0, 0};
    LAPACKE4(c, sgelqf_work, dgelqf_work, cgelqf_work, zgelqf_work, LAPACK_COL_MAJOR, (int)m, (int)n, NULL, (int)ldx,
             NULL, (void *)w1, -1);
    LAPACKE4(c, sorglq_work, dorglq_work, cunglq_work, zunglq_work, LAPACK_COL_MAJOR, (int)kq, (int)n, (int)k, NULL,
             (int)ldx, NULL, (void *)w2, -1);
    int64_t a1 = query_size(c, w1), a2 = query_size(c, w2);
    c->lwork = a1 > a2 ? a1 : a2;
  }
  char *buf[3];
  if (!scratch_get(c, 3, (size_t[]){(size_t)(ldx * n) * esz, (size_t)k * esz, (size_t)c->lwork * esz}, buf))
    return oom(r);
  char *x = buf[0], *tau = buf[1], *work = buf[2];
  int lw = (int)c->lwork;
  if (ldx == m) memcpy(x, a, (size_t)(n * m) * esz);
  else
    for (int64_t j = 0; j < n; j++) memcpy(x + (size_t)(j * ldx) * esz, a + (size_t)(j * m) * esz, (size_t)m * esz);
  int info = LAPACKE4(c, sgelqf_work, dgelqf_work, cgelqf_work, zgelqf_work, LAPACK_COL_MAJOR, (int)m, (int)n,
                      (void *)x, (int)ldx, (void *)tau, (void *)work, lw);
  for (int64_t i = 0; i < k; i++) /* r[i, i..m) = L[i..m, i], contiguous in column i of x */
    memcpy(ro + (size_t)(i * m + i) * esz, x + (size_t)(i * ldx + i) * esz, (size_t)(m - i) * esz);
  if (info == 0)
    info = LAPACKE4(c, sorglq_work, dorglq_work, cunglq_work, zunglq_work, LAPACK_COL_MAJOR, (int)kq, (int)n, (int)k,
                    (void *)x, (int)ldx, (void *)tau, (void *)work, lw);
  if (ldx == kq) memcpy(q, x, (size_t)(n * kq) * esz);
  else
    for (int64_t j = 0; j < n; j++) memcpy(q + (size_t)(j * kq) * esz, x + (size_t)(j * ldx) * esz, (size_t)kq * esz);
  if (info != 0) fill_nan(c, q, n * kq), fill_nan(c, ro, kq * m);
  return JX_OK;
}

/* r (kq x m, row-major, zeroed beforehand) = the upper triangle of the first kq rows of
 * the column-major w (n x m): a tiled typed transpose (a memcpy per element cost ~10 ns
 * an element), then the part below the diagonal cleared. */
static void qr_copy_r(const Ctx *c, char *ro, const char *w, int64_t n, int64_t m, int64_t kq) {
  int64_t rows = min64(kq, n);
  size_t esz = c->esz;
  transpose_ld(ro, w, m, rows, n, esz);
  for (int64_t i = 1; i < rows; i++) memset(ro + (size_t)(i * m) * esz, 0, (size_t)min64(i, m) * esz);
}

/* The blocked QR (real kinds where jaxc's GEMM has AVX-512 tiles, min(n, m) >=
 * QR_BLOCKED_MIN): LAPACK's geqrf and orgqr with the block reflectors applied by jaxc's
 * GEMM instead of larfb (OpenBLAS-Haswell's sgemm and reference larfb's scalar loops
 * were 38% of geqrf + orgqr's perf samples at n = 256). Per block of QR_NB columns:
 * geqr2 on the panel and larft for its T (LAPACK), then every trailing column,
 * independently (spread over the backend's threads where lapack_run_threads gives
 * them): C -= V (T^T (V^T C)). q: the block reflectors applied to the identity, last
 * block first (each to the columns from its own on, as orgqr). */
#define QR_NB 32
#define QR_BLOCKED_MIN 256
static bool qr_blocked(const Ctx *c) {
  const Routine *r = c->r;
  return (c->kind == KIND_S || c->kind == KIND_D) && gemm_avx512() && min64(r->n, r->m) >= QR_BLOCKED_MIN &&
         r->n <= INT32_MAX && r->m <= INT32_MAX;
}

/* Column-major C (M x N, ldc) -= op(A) op(B) (op(A) M x K, op(B) K x N): gemm_sub on
 * the row-major views, C^T -= op(B)^T op(A)^T. */
static bool cm_sub(const Ctx *c, char *C, int64_t ldc, const char *A, int64_t lda, bool ta, const char *B,
                   int64_t ldb, bool tb, int64_t M, int64_t N, int64_t K) {
  return trsm_update(c, B, ldb, tb, A, lda, ta, C, ldc, N, M, K);
}

typedef struct QrApply {
  const Ctx *c;
  const char *v;   /* (rows, jb) column-major, leading dimension rows: unit lower trapezoid */
  const char *t;   /* (jb, jb) column-major, leading dimension ldt: upper triangular */
  char *cm;        /* C: (rows, cols) column-major, leading dimension ldc */
  int64_t ldc, rows, jb, ldt;
  bool trans;      /* H^T = I - V T^T V^T (geqrf's update) or H = I - V T V^T (orgqr) */
  _Atomic int failed;
} QrApply;

/* Columns [c0, c1) of C := H^T C or H C. */
static void qr_apply_cols(void *ctx, int64_t c0, int64_t c1) {
  QrApply *q = ctx;
  const Ctx *c = q->c;
  size_t esz = c->esz;
  int64_t cols = c1 - c0, jb = q->jb;
  char *y = calloc((size_t)(2 * jb * cols), esz), *z = y ? y + (size_t)(jb * cols) * esz : NULL;
  char *cc = q->cm + (size_t)(c0 * q->ldc) * esz;
  /* y = -V^T C, z = -op(T) y = op(T) V^T C, C -= V z */
  if (!y || !cm_sub(c, y, jb, q->v, q->rows, true, cc, q->ldc, false, jb, cols, q->rows) ||
      !cm_sub(c, z, jb, q->t, q->ldt, q->trans, y, jb, false, jb, cols, jb) ||
      !cm_sub(c, cc, q->ldc, q->v, q->rows, false, z, jb, false, q->rows, cols, jb))
    q->failed = 1;
  free(y);
}

/* v (rows x jb, leading dimension rows) = the panel's reflectors (below the diagonal of
 * the column-major panel, leading dimension ld) with their unit diagonal and zeros above. */
static void qr_dense_v(const Ctx *c, char *v, const char *panel, int64_t ld, int64_t rows, int64_t jb) {
  size_t esz = c->esz;
  for (int64_t i = 0; i < jb; i++) {
    char *col = v + (size_t)(i * rows) * esz;
    memset(col, 0, (size_t)i * esz);
    set_real(c, col, i, 1);
    memcpy(col + (size_t)(i + 1) * esz, panel + (size_t)(i * ld + i + 1) * esz, (size_t)(rows - i - 1) * esz);
  }
}

/* w (n x m column-major) -> the reflectors below its diagonal and r above; qm (n x kq
 * column-major) = q. false when out of memory. */
static bool qr_blocked_run(Ctx *c, char *w, char *qm, int64_t n, int64_t m, int64_t kq) {
  int64_t k = min64(n, m);
  size_t esz = c->esz;
  char *buf[4];
  if (!scratch_get(c, 4, (size_t[]){(size_t)k * esz, (size_t)(QR_NB * k) * esz, (size_t)(n * QR_NB) * esz,
                                     (size_t)QR_NB * esz}, buf))
    return false;
  char *tau = buf[0], *tall = buf[1], *v = buf[2], *work = buf[3];
  memset(tall, 0, (size_t)(QR_NB * k) * esz); /* larft writes T's upper triangle only: the GEMMs read it whole */
  for (int64_t j = 0; j < k; j += QR_NB) {
    int64_t jb = min64(QR_NB, k - j), rows = n - j;
    char *panel = w + (size_t)(j * n + j) * esz, *t = tall + (size_t)(j * QR_NB) * esz;
    char *tj = tau + (size_t)j * esz;
    if (c->kind == KIND_S) {
      LAPACKE_sgeqr2_work(LAPACK_COL_MAJOR, (int)rows, (int)jb, (float *)panel, (int)n, (float *)tj, (float *)work);
      LAPACKE_slarft_work(LAPACK_COL_MAJOR, 'F', 'C', (int)rows, (int)jb, (float *)panel, (int)n, (float *)tj,
                          (float *)t, QR_NB);
    } else {
      LAPACKE_dgeqr2_work(LAPACK_COL_MAJOR, (int)rows, (int)jb, (double *)panel, (int)n, (double *)tj, (double *)work);
      LAPACKE_dlarft_work(LAPACK_COL_MAJOR, 'F', 'C', (int)rows, (int)jb, (double *)panel, (int)n, (double *)tj,
                          (double *)t, QR_NB);
    }
    if (j + jb >= m) continue;
    qr_dense_v(c, v, panel, n, rows, jb);
    QrApply qa = {c, v, t, w + (size_t)((j + jb) * n + j) * esz, n, rows, jb, QR_NB, true, 0};
    lu_for(c, qr_apply_cols, &qa, m - j - jb);
    if (qa.failed) return false;
  }
  memset(qm, 0, (size_t)(n * kq) * esz);
  for (int64_t i = 0; i < kq; i++) set_real(c, qm, i * n + i, 1);
  for (int64_t j = (k - 1) / QR_NB * QR_NB; j >= 0; j -= QR_NB) {
    int64_t jb = min64(QR_NB, k - j), rows = n - j;
    qr_dense_v(c, v, w + (size_t)(j * n + j) * esz, n, rows, jb);
    QrApply qa = {c, v, tall + (size_t)(j * QR_NB) * esz, qm + (size_t)(j * n + j) * esz, n, rows, jb, QR_NB, false, 0};
    lu_for(c, qr_apply_cols, &qa, kq - j);
    if (qa.failed) return false;
  }
  return true;
}

/* geqrf + orgqr (ungqr for complex dtypes) on a column-major copy (qr_lq for small
 * matrices, qr_blocked_run for large real ones). */
static jx_status qr(Ctx *c, void *const *in, void *const *out, int64_t b) {
  const Routine *r = c->r;
  int64_t n = r->n, m = r->m, k = min64(n, m), kq = svd_ku(r), wc = m > kq ? m : kq;
  size_t esz = c->esz;
  char *q = entry(out[0], b, n * kq, esz), *ro = entry(out[1], b, kq * m, esz);
  memset(ro, 0, (size_t)(kq * m) * esz);
  if (k == 0) { /* q: the identity (complete) or empty */
    if (kq == n) fill_eye(c, q, n);
    return JX_OK;
  }
  if (n <= QR_LQ_MAX_N && m <= QR_LQ_MAX_N) return qr_lq(c, in, out, b);
  if (qr_blocked(c)) {
    char *bw[2];
    if (!scratch_get(c, 2, (size_t[]){(size_t)(n * m) * esz, (size_t)(n * kq) * esz}, bw)) return oom(r);
    /* qr_blocked_run's own scratch comes after: carve it from a second context */
    Ctx c2 = *c;
    c2.scratch = NULL, c2.cap = 0;
    transpose_into(bw[0], entry(in[0], b, n * m, esz), n, m, esz);
    bool ok = qr_blocked_run(&c2, bw[0], bw[1], n, m, kq);
    free(c2.scratch);
    if (!ok) return oom(r);
    qr_copy_r(c, ro, bw[0], n, m, kq);
    transpose_into(q, bw[1], kq, n, esz);
    return JX_OK;
  }
  if (c->lwork < 0) { /* the larger of geqrf's and orgqr's optimal workspaces */
    double w1[2] = {0, 0}, w2[2] = {0, 0};
    LAPACKE4(c, sgeqrf_work, dgeqrf_work, cgeqrf_work, zgeqrf_work, LAPACK_COL_MAJOR, (int)n, (int)m, NULL, (int)n,
             NULL, (void *)w1, -1);
    LAPACKE4(c, sorgqr_work, dorgqr_work, cungqr_work, zungqr_work, LAPACK_COL_MAJOR, (int)n, (int)kq, (int)k, NULL,
             (int)n, NULL, (void *)w2, -1);
    int64_t a1 = query_size(c, w1), a2 = query_size(c, w2);
    c->lwork = a1 > a2 ? a1 : a2;
  }
  char *buf[3];
  if (!scratch_get(c, 3, (size_t[]){(size_t)(n * wc) * esz, (size_t)k * esz, (size_t)c->lwork * esz}, buf))
    return oom(r);
  char *w = buf[0], *tau = buf[1], *work = buf[2];
  int lw = (int)c->lwork;
  transpose_into(w, entry(in[0], b, n * m, esz), n, m, esz); /* column-major n x m, lda n */
  int info = LAPACKE4(c, sgeqrf_work, dgeqrf_work, cgeqrf_work, zgeqrf_work, LAPACK_COL_MAJOR, (int)n, (int)m,
                      (void *)w, (int)n, (void *)tau, (void *)work, lw);
  qr_copy_r(c, ro, w, n, m, kq);
  if (info == 0)
    info = LAPACKE4(c, sorgqr_work, dorgqr_work, cungqr_work, zungqr_work, LAPACK_COL_MAJOR, (int)n, (int)kq, (int)k,
                    (void *)w, (int)n, (void *)tau, (void *)work, lw);
  transpose_into(q, w, kq, n, esz);
  if (info != 0) fill_nan(c, q, n * kq), fill_nan(c, ro, kq * m);
  return JX_OK;
}

/* syevd's steps with its back-transformation on jaxc's GEMM (real kinds where the GEMM has
 * AVX-512 tiles, n >= EIGH_BLOCKED_MIN): sytrd (A = Q T Q^T, LAPACK), stedc (T = Z D Z^T,
 * LAPACK), then v = Q Z by Q's block reflectors of EIGH_NB(n) columns, last block first,
 * each applied to every column of Z (spread over the backend's threads where
 * lapack_run_threads gives them) instead of ormtr (larfb on OpenBLAS-Haswell's sgemm:
 * ormtr took 45 of syevd's 92 ms at n = 1024, one thread). */
/* Block reflectors of 32 columns below n = 512, of 64 from there (eigh's threaded
 * back-transformation): at 256, 32 ran 1.98-2.03 ms against 64's 2.06-2.07; at 1024 (two
 * threads) 51.8-52.5 against 47.1-47.6 ms. */
#define EIGH_NB(n) ((n) >= EIGH_THREADS_MIN_N ? 64 : 32)
#define EIGH_BLOCKED_MIN 256
#define EIGH_THREADS_MIN_N 512
static bool eigh_blocked(const Ctx *c) {
  const Routine *r = c->r;
  return (c->kind == KIND_S || c->kind == KIND_D) && gemm_avx512() && r->n >= EIGH_BLOCKED_MIN && r->n <= INT32_MAX / 2;
}

static bool apply_q_left(Ctx *c, const char *x, int64_t n, int64_t k, int64_t off, bool rowwise, const char *tau,
                         char *z, char *t, char *vd, int64_t nb);

static jx_status eigh_split(Ctx *c, void *const *in, void *const *out, int64_t b) {
  int64_t n = c->r->n, k = n - 1;
  size_t esz = c->esz;
  char *v = entry(out[0], b, n * n, esz), *w = entry(out[1], b, n, c->rsz);
  int ni = (int)n;
  bool s32 = c->kind == KIND_S;
  if (c->lwork < 0) { /* the larger of sytrd's and stedc's workspaces */
    double q1[2] = {0, 0}, q2[2] = {0, 0};
    lapack_int iq = 0;
    if (s32) {
      LAPACKE_ssytrd_work(LAPACK_COL_MAJOR, 'L', ni, NULL, ni, NULL, NULL, NULL, (float *)q1, -1);
      LAPACKE_sstedc_work(LAPACK_COL_MAJOR, 'I', ni, NULL, NULL, NULL, ni, (float *)q2, -1, &iq, -1);
    } else {
      LAPACKE_dsytrd_work(LAPACK_COL_MAJOR, 'L', ni, NULL, ni, NULL, NULL, NULL, q1, -1);
      LAPACKE_dstedc_work(LAPACK_COL_MAJOR, 'I', ni, NULL, NULL, NULL, ni, q2, -1, &iq, -1);
    }
    int64_t a1 = query_size(c, q1), a2 = query_size(c, q2);
    c->lwork = a1 > a2 ? a1 : a2;
    c->liwork = iq + 1;
  }
  /* a (n x n column-major), z (n x n), e, tau, T (nb^2), V (n x nb), work, iwork */
  int64_t nb = EIGH_NB(n);
  char *buf[8];
  if (!scratch_get(c, 8, (size_t[]){(size_t)(n * n) * esz, (size_t)(n * n) * esz, (size_t)n * esz, (size_t)n * esz,
                                     (size_t)(nb * nb) * esz, (size_t)(n * nb) * esz,
                                     (size_t)c->lwork * esz, (size_t)c->liwork * sizeof(lapack_int)}, buf))
    return oom(c->r);
  char *a = buf[0], *z = buf[1], *e = buf[2], *tau = buf[3], *t = buf[4], *vd = buf[5], *work = buf[6];
  lapack_int *iw = (lapack_int *)buf[7];
  int lw = (int)c->lwork, liw = (int)c->liwork, info;
  /* the lower triangle the routine reads, as the column-major lower triangle: row-major
   * a's upper half is already there; its lower half is after a transpose */
  const char *src = entry(in[0], b, n * n, esz);
  if (c->r->flags & LINALG_LOWER) transpose_into(a, src, n, n, esz);
  else memcpy(a, src, (size_t)(n * n) * esz);
  if (s32) {
    LAPACKE_ssytrd_work(LAPACK_COL_MAJOR, 'L', ni, (float *)a, ni, (float *)w, (float *)e, (float *)tau, (float *)work, lw);
    info = LAPACKE_sstedc_work(LAPACK_COL_MAJOR, 'I', ni, (float *)w, (float *)e, (float *)z, ni, (float *)work, lw, iw, liw);
  } else {
    LAPACKE_dsytrd_work(LAPACK_COL_MAJOR, 'L', ni, (double *)a, ni, (double *)w, (double *)e, (double *)tau, (double *)work, lw);
    info = LAPACKE_dstedc_work(LAPACK_COL_MAJOR, 'I', ni, (double *)w, (double *)e, (double *)z, ni, (double *)work, lw, iw, liw);
  }
  /* a NaN input: stedc may return info 0 with NaN eigenvalues and partly NaN vectors
   * (syevd's NaN case gave NaNs throughout, as the failure JAX reports) */
  for (int64_t i = 0; i < n && info == 0; i++)
    if (is_nan_at(c, w, i)) info = -1;
  if (info != 0) {
    fill_nan(c, v, n * n);
    for (int64_t i = 0; i < n; i++) set_real(c, w, i, NAN);
    return JX_OK;
  }
  /* Q = H(1) ... H(n-1): the reflectors below a's subdiagonal, a QR-like set on the
   * (n-1) x (n-1) block from row 1, applied to z's rows 1.. */
  if (!apply_q_left(c, a, n, k, 1, false, tau, z, t, vd, nb)) return oom(c->r);
  transpose_into(v, z, n, n, esz); /* eigenvectors: columns of the column-major z */
  return JX_OK;
}

/* syevd / heevd. The column-major view of row-major a is a^T = conj(a) for Hermitian a,
 * whose eigenvectors are conj(v): transposed back and conjugated. */
static jx_status eigh(Ctx *c, void *const *in, void *const *out, int64_t b) {
  int64_t n = c->r->n;
  size_t esz = c->esz;
  char *v = entry(out[0], b, n * n, esz), *w = entry(out[1], b, n, c->rsz);
  if (n == 0) return JX_OK;
  if (eigh_blocked(c)) return eigh_split(c, in, out, b);
  /* the row-major lower half is the column-major upper half */
  char uplo = c->r->flags & LINALG_LOWER ? 'U' : 'L';
  if (c->lwork < 0) {
    double wq[2] = {0, 0}, rq = 0;
    lapack_int iq = 0;
    int ni = (int)n;
    switch (c->kind) {
    case KIND_S: LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', uplo, ni, NULL, ni, NULL, (float *)wq, -1, &iq, -1); break;
    case KIND_D: LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', uplo, ni, NULL, ni, NULL, wq, -1, &iq, -1); break;
    case KIND_C: LAPACKE_cheevd_work(LAPACK_COL_MAJOR, 'V', uplo, ni, NULL, ni, NULL, (void *)wq, -1, (float *)&rq, -1, &iq, -1); break;
    case KIND_Z: LAPACKE_zheevd_work(LAPACK_COL_MAJOR, 'V', uplo, ni, NULL, ni, NULL, (void *)wq, -1, &rq, -1, &iq, -1); break;
    }
    c->lrwork = c->cplx ? query_size(c, &rq) : 1;
    c->lwork = query_size(c, wq);
    c->liwork = iq + 1;
  }
  char *buf[4];
  if (!scratch_get(c, 4, (size_t[]){(size_t)(n * n) * esz, (size_t)c->lwork * esz, (size_t)c->lrwork * c->rsz,
                                     (size_t)c->liwork * sizeof(lapack_int)}, buf))
    return oom(c->r);
  char *a = buf[0];
  memcpy(a, entry(in[0], b, n * n, esz), (size_t)(n * n) * esz);
  int info, lw = (int)c->lwork, lrw = (int)c->lrwork, liw = (int)c->liwork;
  lapack_int *iw = (lapack_int *)buf[3];
  switch (c->kind) {
  case KIND_S: info = LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', uplo, (int)n, (float *)a, (int)n, (float *)w, (float *)buf[1], lw, iw, liw); break;
  case KIND_D: info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', uplo, (int)n, (double *)a, (int)n, (double *)w, (double *)buf[1], lw, iw, liw); break;
  case KIND_C: info = LAPACKE_cheevd_work(LAPACK_COL_MAJOR, 'V', uplo, (int)n, (void *)a, (int)n, (float *)w, (void *)buf[1], lw, (float *)buf[2], lrw, iw, liw); break;
  default: info = LAPACKE_zheevd_work(LAPACK_COL_MAJOR, 'V', uplo, (int)n, (void *)a, (int)n, (double *)w, (void *)buf[1], lw, (double *)buf[2], lrw, iw, liw); break;
  }
  transpose_into(v, a, n, n, esz); /* eigenvectors: columns of the column-major a */
  conj_in_place(c, v, n * n);
  /* a NaN input: OpenBLAS's syevd (without AVX-512: the path above takes n >= 256 there)
   * may return info 0 with NaN eigenvalues and partly NaN vectors: NaNs throughout, as
   * eigh_split */
  for (int64_t i = 0; i < n && info == 0; i++) /* (w is real for every kind) */
    if (c->f64 ? isnan(((const double *)w)[i]) : isnan(((const float *)w)[i])) info = -1;
  if (info != 0) {
    fill_nan(c, v, n * n);
    for (int64_t i = 0; i < n; i++) set_real(c, w, i, NAN);
  }
  return JX_OK;
}

/* Q's or P's block reflectors (k of them, QR-like from element (off_r, off_c) of the
 * column-major x, n x n, leading dimension n: stored in columns below the diagonal, or
 * with rowwise in rows right of it, gebrd's P) applied to the rows from off_r of the
 * column-major z (n x n), last block first: z := Q z. t (nb x nb) and vd (n x nb) are
 * scratch. false when out of memory. */
static bool apply_q_left(Ctx *c, const char *x, int64_t n, int64_t k, int64_t off, bool rowwise, const char *tau,
                         char *z, char *t, char *vd, int64_t nb) {
  size_t esz = c->esz;
  bool s32 = c->kind == KIND_S;
  const char *p = x + (size_t)(rowwise ? off * n : off) * esz; /* the reflectors' block (0, 0) */
  for (int64_t j = (k - 1) / nb * nb; j >= 0; j -= nb) {
    int64_t jb = min64(nb, k - j), rows = n - off - j;
    const char *pj = p + (size_t)(j * n + j) * esz;
    memset(t, 0, (size_t)(nb * nb) * esz);
    char sv = rowwise ? 'R' : 'C';
    if (s32)
      LAPACKE_slarft_work(LAPACK_COL_MAJOR, 'F', sv, (int)rows, (int)jb, (const float *)pj, (int)n,
                          (const float *)(tau + (size_t)j * esz), (float *)t, (int)nb);
    else
      LAPACKE_dlarft_work(LAPACK_COL_MAJOR, 'F', sv, (int)rows, (int)jb, (const double *)pj, (int)n,
                          (const double *)(tau + (size_t)j * esz), (double *)t, (int)nb);
    if (!rowwise) qr_dense_v(c, vd, pj, n, rows, jb);
    else /* vd[r, i] = the reflector i's component r: pj[i, r] (unit at r = i, zeros before) */
      for (int64_t i = 0; i < jb; i++) {
        char *col = vd + (size_t)(i * rows) * esz;
        memset(col, 0, (size_t)i * esz);
        set_real(c, col, i, 1);
        for (int64_t r = i + 1; r < rows; r++) memcpy(col + (size_t)r * esz, pj + (size_t)(r * n + i) * esz, esz);
      }
    QrApply qa = {c, vd, t, z + (size_t)(off + j) * esz, n, rows, jb, nb, false, 0};
    lu_for(c, qr_apply_cols, &qa, n);
    if (qa.failed) return false;
  }
  return true;
}

/* gesdd's steps for a square real matrix with its back-transformations on jaxc's GEMM
 * (compute_uv, n >= SVD_BLOCKED_MIN, AVX-512): gebrd (B = Q Bd P^T, LAPACK) of the
 * column-major view B = a^T, bdsdc (Bd = Ub S Vb^T, LAPACK), then U' = Q Ub and
 * V' = P Vb by block reflectors (apply_q_left) instead of ormbr (larfb on OpenBLAS's
 * sgemm). a = V' S U'^T: u = V' and vt = U'^T, as svd's mapping below. */
#define SVD_BLOCKED_MIN 256
/* 32-column block reflectors: svd_256 3.98-4.01 ms against 64's 4.08-4.14, svd_1024
 * 148-149 against 156-185 ms (alternated, load ~2.5) */
#define SVD_NB 32
static bool svd_blocked(const Ctx *c) {
  const Routine *r = c->r;
  return (c->kind == KIND_S || c->kind == KIND_D) && gemm_avx512() && r->n == r->m && r->n >= SVD_BLOCKED_MIN &&
         r->n <= INT32_MAX / 4 && (r->flags & LINALG_COMPUTE_UV);
}

static jx_status svd_split(Ctx *c, void *const *in, void *const *out, int64_t b) {
  int64_t n = c->r->n;
  size_t esz = c->esz;
  int ni = (int)n;
  bool s32 = c->kind == KIND_S;
  char *s = entry(out[0], b, n, c->rsz), *u = entry(out[1], b, n * n, esz), *vt = entry(out[2], b, n * n, esz);
  if (c->lwork < 0) { /* the larger of gebrd's and bdsdc's (3 n^2 + 4 n) workspaces */
    double q1[2] = {0, 0};
    if (s32) LAPACKE_sgebrd_work(LAPACK_COL_MAJOR, ni, ni, NULL, ni, NULL, NULL, NULL, NULL, (float *)q1, -1);
    else LAPACKE_dgebrd_work(LAPACK_COL_MAJOR, ni, ni, NULL, ni, NULL, NULL, NULL, NULL, q1, -1);
    int64_t a1 = query_size(c, q1), a2 = 3 * n * n + 4 * n;
    c->lwork = a1 > a2 ? a1 : a2;
  }
  /* x (n x n), w (n x n), e, tauq, taup, t (SVD_NB^2), vd (n x SVD_NB), work, iwork (8 n) */
  char *buf[9];
  if (!scratch_get(c, 9, (size_t[]){(size_t)(n * n) * esz, (size_t)(n * n) * esz, (size_t)n * esz, (size_t)n * esz,
                                     (size_t)n * esz, (size_t)(SVD_NB * SVD_NB) * esz,
                                     (size_t)(n * SVD_NB) * esz, (size_t)c->lwork * esz,
                                     (size_t)(8 * n) * sizeof(lapack_int)}, buf))
    return oom(c->r);
  char *x = buf[0], *w = buf[1], *e = buf[2], *tq = buf[3], *tp = buf[4], *t = buf[5], *vd = buf[6], *work = buf[7];
  lapack_int *iw = (lapack_int *)buf[8];
  int lw = (int)c->lwork, info;
  memcpy(x, entry(in[0], b, n * n, esz), (size_t)(n * n) * esz);
  /* bdsdc: Ub into vt's memory (column-major: U' read row-major is U'^T = vt), Vb^T into w */
  if (s32) {
    LAPACKE_sgebrd_work(LAPACK_COL_MAJOR, ni, ni, (float *)x, ni, (float *)s, (float *)e, (float *)tq, (float *)tp,
                        (float *)work, lw);
    info = LAPACKE_sbdsdc_work(LAPACK_COL_MAJOR, 'U', 'I', ni, (float *)s, (float *)e, (float *)vt, ni, (float *)w, ni,
                               NULL, NULL, (float *)work, iw);
  } else {
    LAPACKE_dgebrd_work(LAPACK_COL_MAJOR, ni, ni, (double *)x, ni, (double *)s, (double *)e, (double *)tq,
                        (double *)tp, (double *)work, lw);
    info = LAPACKE_dbdsdc_work(LAPACK_COL_MAJOR, 'U', 'I', ni, (double *)s, (double *)e, (double *)vt, ni, (double *)w,
                               ni, NULL, NULL, (double *)work, iw);
  }
  for (int64_t i = 0; i < n && info == 0; i++)
    if (is_nan_at(c, s, i)) info = -1;
  if (info != 0) {
    for (int64_t i = 0; i < n; i++) set_real(c, s, i, NAN);
    fill_nan(c, u, n * n), fill_nan(c, vt, n * n);
    return JX_OK;
  }
  /* U' = Q Ub in place; Vb = (Vb^T)^T into u's memory, V' = P Vb there (P's n - 1
   * reflectors act on rows 1..), and u = V' row-major: a transpose of the column-major V' */
  transpose_into(u, w, n, n, esz);
  if (!apply_q_left(c, x, n, n, 0, false, tq, vt, t, vd, SVD_NB) ||
      !apply_q_left(c, x, n, n - 1, 1, true, tp, u, t, vd, SVD_NB))
    return oom(c->r);
  memcpy(w, u, (size_t)(n * n) * esz);
  transpose_into(u, w, n, n, esz);
  return JX_OK;
}

/* gesdd of the column-major view of a (that is a^T, m x n): a^T = U' S V'^H, so
 * a = conj(V') S U'^T: u = conj(V') is V'^H read column-major, vh = U'^T is U' read
 * column-major, both written in place without copies. */
static jx_status svd(Ctx *c, void *const *in, void *const *out, int64_t b) {
  const Routine *r = c->r;
  int64_t n = r->n, m = r->m, k = min64(n, m), ku = svd_ku(r), kv = svd_kv(r), mx = n > m ? n : m;
  size_t esz = c->esz;
  bool uv = r->flags & LINALG_COMPUTE_UV;
  char *s = entry(out[0], b, k, c->rsz);
  char *u = uv ? entry(out[1], b, n * ku, esz) : NULL, *vt = uv ? entry(out[2], b, kv * m, esz) : NULL;
  if (k == 0) {
    if (uv && ku == n) fill_eye(c, u, n);
    if (uv && kv == m) fill_eye(c, vt, m);
    return JX_OK;
  }
  if (svd_blocked(c)) return svd_split(c, in, out, b);
  char job = !uv ? 'N' : r->flags & LINALG_FULL_MATRICES ? 'A' : 'S';
  /* column-major m x n: U' is m x kv (ld m) -> vt; V'^H is ku x n (ld ku) -> u */
  int ldu = ld(m), ldvt = ld(ku);
  double dummy[2];
  void *uo = uv ? (void *)vt : (void *)dummy, *vo = uv ? (void *)u : (void *)dummy;
  if (!uv) ldu = ldvt = 1;
  /* cgesdd's rwork (LAPACK 3.7+'s bound, which covers older ones) */
  int64_t lrw = c->cplx ? (5 * k * k + 7 * k > 2 * mx * k + 2 * k * k + k ? 5 * k * k + 7 * k : 2 * mx * k + 2 * k * k + k) : 1;
  if (c->lwork < 0) {
    double wq[2] = {0, 0};
    double rq[4] = {0, 0, 0, 0}; /* dummies: a query writes no more than element 0 */
    lapack_int iq[4] = {0, 0, 0, 0};
    int mi = (int)m, ni = (int)n;
    switch (c->kind) {
    case KIND_S: LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, job, mi, ni, NULL, mi, NULL, NULL, ldu, NULL, ldvt, (float *)wq, -1, iq); break;
    case KIND_D: LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, job, mi, ni, NULL, mi, NULL, NULL, ldu, NULL, ldvt, wq, -1, iq); break;
    case KIND_C: LAPACKE_cgesdd_work(LAPACK_COL_MAJOR, job, mi, ni, NULL, mi, NULL, NULL, ldu, NULL, ldvt, (void *)wq, -1, (float *)rq, iq); break;
    case KIND_Z: LAPACKE_zgesdd_work(LAPACK_COL_MAJOR, job, mi, ni, NULL, mi, NULL, NULL, ldu, NULL, ldvt, (void *)wq, -1, rq, iq); break;
    }
    c->lwork = query_size(c, wq);
  }
  char *buf[4];
  if (!scratch_get(c, 4, (size_t[]){(size_t)(n * m) * esz, (size_t)c->lwork * esz, (size_t)lrw * c->rsz,
                                     (size_t)(8 * k) * sizeof(lapack_int)}, buf))
    return oom(r);
  char *a = buf[0];
  memcpy(a, entry(in[0], b, n * m, esz), (size_t)(n * m) * esz);
  int info, lw = (int)c->lwork;
  lapack_int *iw = (lapack_int *)buf[3];
  switch (c->kind) {
  case KIND_S: info = LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, job, (int)m, (int)n, (float *)a, (int)m, (float *)s, uo, ldu, vo, ldvt, (float *)buf[1], lw, iw); break;
  case KIND_D: info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, job, (int)m, (int)n, (double *)a, (int)m, (double *)s, uo, ldu, vo, ldvt, (double *)buf[1], lw, iw); break;
  case KIND_C: info = LAPACKE_cgesdd_work(LAPACK_COL_MAJOR, job, (int)m, (int)n, (void *)a, (int)m, (float *)s, uo, ldu, vo, ldvt, (void *)buf[1], lw, (float *)buf[2], iw); break;
  default: info = LAPACKE_zgesdd_work(LAPACK_COL_MAJOR, job, (int)m, (int)n, (void *)a, (int)m, (double *)s, uo, ldu, vo, ldvt, (void *)buf[1], lw, (double *)buf[2], iw); break;
  }
  if (info != 0) {
    for (int64_t i = 0; i < k; i++) set_real(c, s, i, NAN);
    if (uv) fill_nan(c, u, n * ku), fill_nan(c, vt, kv * m);
  }
  return JX_OK;
}

/* Real geev's eigenvectors (column-major n x n, ld n) as complex row-major columns:
 * a complex pair (wi[j] > 0) is v[:, j] +- i v[:, j+1]. dst has complex elements of
 * twice the real size. */
static void unpack_real_vectors(const Ctx *c, char *dst, const char *src, const char *wi, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    double im = c->f64 ? ((const double *)wi)[j] : ((const float *)wi)[j];
    bool pair = im > 0 && j + 1 < n;
    for (int64_t i = 0; i < n; i++) {
      double re = c->f64 ? ((const double *)src)[j * n + i] : ((const float *)src)[j * n + i];
      double ip = !pair ? 0 : c->f64 ? ((const double *)src)[(j + 1) * n + i] : ((const float *)src)[(j + 1) * n + i];
      int64_t o = 2 * (i * n + j);
      set_real(c, dst, o, re), set_real(c, dst, o + 1, ip);
      if (pair) set_real(c, dst, o + 2, re), set_real(c, dst, o + 3, -ip);
    }
    if (pair) j++;
  }
}

/* geev on a column-major copy: w (complex), and the left/right eigenvectors asked for
 * as complex columns (LAPACK's normalization: unit 2-norm, largest component real).
 * Failure (info > 0): NaNs. */
static jx_status eig(Ctx *c, void *const *in, void *const *out, int64_t b) {
  const Routine *r = c->r;
  int64_t n = r->n;
  bool left = r->flags & LINALG_COMPUTE_LEFT, right = r->flags & LINALG_COMPUTE_RIGHT;
  size_t esz = c->esz, cesz = c->cplx ? esz : 2 * esz; /* the outputs' element size */
  char *w = entry(out[0], b, n, cesz);
  char *vlo = left ? entry(out[1], b, n * n, cesz) : NULL, *vro = right ? entry(out[left ? 2 : 1], b, n * n, cesz) : NULL;
  if (n == 0) return JX_OK;
  char jl = left ? 'V' : 'N', jr = right ? 'V' : 'N';
  if (c->lwork < 0) {
    /* the complex query writes rwork[0] (LAPACK 3.10's ?trevc3 reports its size) */
    double wq[2] = {0, 0}, rq[4] = {0, 0, 0, 0};
    int ni = (int)n;
    switch (c->kind) {
    case KIND_S: LAPACKE_sgeev_work(LAPACK_COL_MAJOR, jl, jr, ni, NULL, ni, NULL, NULL, NULL, ni, NULL, ni, (float *)wq, -1); break;
    case KIND_D: LAPACKE_dgeev_work(LAPACK_COL_MAJOR, jl, jr, ni, NULL, ni, NULL, NULL, NULL, ni, NULL, ni, wq, -1); break;
    case KIND_C: LAPACKE_cgeev_work(LAPACK_COL_MAJOR, jl, jr, ni, NULL, ni, NULL, NULL, ni, NULL, ni, (void *)wq, -1, (float *)rq); break;
    case KIND_Z: LAPACKE_zgeev_work(LAPACK_COL_MAJOR, jl, jr, ni, NULL, ni, NULL, NULL, ni, NULL, ni, (void *)wq, -1, rq); break;
    }
    c->lwork = query_size(c, wq);
  }
  /* a, wr/w, wi/rwork, vl, vr, work */
  char *buf[6];
  if (!scratch_get(c, 6, (size_t[]){(size_t)(n * n) * esz, (size_t)n * esz, (size_t)(2 * n) * c->rsz,
                                     (size_t)(n * n) * esz, (size_t)(n * n) * esz, (size_t)c->lwork * esz}, buf))
    return oom(r);
  char *a = buf[0], *vl = buf[3], *vr = buf[4];
  transpose_into(a, entry(in[0], b, n * n, esz), n, n, esz);
  int info = 0, lw = (int)c->lwork, ni = (int)n;
  /* a NaN makes LAPACK 3.11's gebal reject the matrix (info < 0, a message on stderr):
   * NaN results without the call */
  for (int64_t i = 0; i < n * n * (c->cplx ? 2 : 1) && info == 0; i++)
    if (c->f64 ? isnan(((double *)a)[i]) : isnan(((float *)a)[i])) info = -1;
  if (info == 0) switch (c->kind) {
  case KIND_S: info = LAPACKE_sgeev_work(LAPACK_COL_MAJOR, jl, jr, ni, (float *)a, ni, (float *)buf[1], (float *)buf[2], (float *)vl, ni, (float *)vr, ni, (float *)buf[5], lw); break;
  case KIND_D: info = LAPACKE_dgeev_work(LAPACK_COL_MAJOR, jl, jr, ni, (double *)a, ni, (double *)buf[1], (double *)buf[2], (double *)vl, ni, (double *)vr, ni, (double *)buf[5], lw); break;
  case KIND_C: info = LAPACKE_cgeev_work(LAPACK_COL_MAJOR, jl, jr, ni, (void *)a, ni, (void *)buf[1], (void *)vl, ni, (void *)vr, ni, (void *)buf[5], lw, (float *)buf[2]); break;
  default: info = LAPACKE_zgeev_work(LAPACK_COL_MAJOR, jl, jr, ni, (void *)a, ni, (void *)buf[1], (void *)vl, ni, (void *)vr, ni, (void *)buf[5], lw, (double *)buf[2]); break;
  }
  Ctx cc = *c; /* the complex outputs' view */
  cc.cplx = true, cc.esz = cesz;
  if (info != 0) {
    fill_nan(&cc, w, n);
    if (left) fill_nan(&cc, vlo, n * n);
    if (right) fill_nan(&cc, vro, n * n);
    return JX_OK;
  }
  if (c->cplx) {
    memcpy(w, buf[1], (size_t)n * esz);
    if (left) transpose_into(vlo, vl, n, n, esz);
    if (right) transpose_into(vro, vr, n, n, esz);
    return JX_OK;
  }
  for (int64_t i = 0; i < n; i++) { /* w = wr + i wi */
    set_real(c, w, 2 * i, c->f64 ? ((double *)buf[1])[i] : ((float *)buf[1])[i]);
    set_real(c, w, 2 * i + 1, c->f64 ? ((double *)buf[2])[i] : ((float *)buf[2])[i]);
  }
  if (left) unpack_real_vectors(c, vlo, vl, buf[2], n);
  if (right) unpack_real_vectors(c, vro, vr, buf[2], n);
  return JX_OK;
}

/* c for routine r, or the error of a dtype or size LAPACK cannot take. */
static jx_status lapack_ctx(const Routine *r, Ctx *c) {
  static const Kind kinds[] = {[JX_FLOAT32] = KIND_S, [JX_FLOAT64] = KIND_D, [JX_COMPLEX64] = KIND_C,
                               [JX_COMPLEX128] = KIND_Z};
  jx_dtype dt = r->dtype;
  if (dt != JX_FLOAT32 && dt != JX_FLOAT64 && dt != JX_COMPLEX64 && dt != JX_COMPLEX128) {
    error_set(JX_ERR_DTYPE, "%s: LAPACK routines take float32, float64, complex64 or complex128, got %s",
              routine_name(r->op), jx_dtype_name(dt));
    return JX_ERR_DTYPE;
  }
  if (r->n > INT32_MAX / 2 || r->m > INT32_MAX / 2 || r->n * r->m > INT32_MAX) {
    error_set(JX_ERR_UNSUPPORTED, "%s: a %lld x %lld matrix exceeds LAPACK's 32-bit sizes",
              routine_name(r->op), (long long)r->n, (long long)r->m);
    return JX_ERR_UNSUPPORTED;
  }
  *c = (Ctx){.r = r, .kind = kinds[dt], .cplx = dtype_is_complex(dt), .f64 = dt == JX_FLOAT64 || dt == JX_COMPLEX128,
             .esz = jx_dtype_itemsize(dt), .lwork = -1, .lrwork = -1, .liwork = -1};
  c->rsz = c->f64 ? 8 : 4;
  return JX_OK;
}

int64_t lapack_parts(const Routine *r) { return r->op == ROUTINE_TRIANGULAR_SOLVE ? trsm_parts(r) : 1; }

jx_status lapack_run_parts(const Routine *r, void *const *in, void *const *out, int64_t b, int64_t p0, int64_t p1) {
  if (r->op != ROUTINE_TRIANGULAR_SOLVE) {
    if (p0 == 0 && p1 == 1) return lapack_run(r, in, out, b, b + 1);
    error_set(JX_ERR_INTERNAL, "lapack: %s has no independent parts", routine_name(r->op));
    return JX_ERR_INTERNAL;
  }
  Ctx c;
  jx_status s = lapack_ctx(r, &c);
  if (s == JX_OK) s = triangular_solve_part(&c, in, out, b, p0, p1);
  free(c.scratch);
  return s;
}

/* Whether eigh / svd of r runs on jacobi.c's kernels: float32, square, 1 <= n <=
 * JACOBI_MAX_N, on an AVX-512 CPU. Decided on the routine, never on a batch range, so
 * that the cpu's chunks and the interpreter's single call take the same path. Measured
 * (one thread, 1000 matrices of a a^T + n I, load ~2): n = 16 eigh 2.8 ms against
 * OpenBLAS 0.3.21's ssyevd 13.3 ms, svd 3.2 against sgesdd 25.4; n = 24 8.3 / 32.2 and
 * 10.4 / 61.0; n = 32 25.4 / 50.6 and 69.4 / 79.1. */
static bool jacobi_fits(const Ctx *c) {
  const Routine *r = c->r;
  return (r->op == ROUTINE_EIGH || r->op == ROUTINE_SVD) && c->kind == KIND_S && r->n == r->m && r->n >= 1 &&
         r->n <= JACOBI_MAX_N && jacobi_available();
}

/* Entries [b0, b1) of eigh / svd by jacobi.c, JACOBI_LANES at a time; an entry the
 * kernel leaves (a non-finite input, a rank-deficient svd, no convergence) goes to
 * fn, the LAPACK path. */
static jx_status jacobi_batch(Ctx *c, RoutineFn *fn, void *const *in, void *const *out, int64_t b0, int64_t b1) {
  const Routine *r = c->r;
  int n = (int)r->n;
  size_t nn = (size_t)n * (size_t)n;
  bool uv = r->flags & LINALG_COMPUTE_UV;
  jx_status s = JX_OK;
  for (int64_t b = b0; b < b1 && s == JX_OK; b += JACOBI_LANES) {
    int cnt = (int)min64(JACOBI_LANES, b1 - b);
    const float *a = (const float *)in[0] + (size_t)b * nn;
    uint32_t left;
    if (r->op == ROUTINE_EIGH)
      left = jacobi_eigh_f32(a, cnt, n, r->flags & LINALG_LOWER, (float *)out[0] + (size_t)b * nn,
                             (float *)out[1] + (size_t)b * (size_t)n);
    else
      left = jacobi_svd_f32(a, cnt, n, uv, (float *)out[0] + (size_t)b * (size_t)n,
                            uv ? (float *)out[1] + (size_t)b * nn : NULL, uv ? (float *)out[2] + (size_t)b * nn : NULL);
    for (int l = 0; l < cnt && s == JX_OK; l++)
      if (left >> l & 1) s = fn(c, in, out, b + l);
  }
  return s;
}

/* Whether qr of r runs on smallqr.c's kernel: float32, 1 <= n, m <= SMALLQR_MAX, on an
 * AVX-512 CPU (decided on the routine, as jacobi_fits). */
static bool smallqr_fits(const Ctx *c) {
  const Routine *r = c->r;
  return r->op == ROUTINE_QR && c->kind == KIND_S && r->n >= 1 && r->m >= 1 && r->n <= SMALLQR_MAX &&
         r->m <= SMALLQR_MAX && jacobi_available();
}

/* Entries [b0, b1) of qr by smallqr.c, 16 at a time; an entry it leaves (a non-finite
 * input) goes to fn, the LAPACK path. */
static jx_status smallqr_batch(Ctx *c, RoutineFn *fn, void *const *in, void *const *out, int64_t b0, int64_t b1) {
  const Routine *r = c->r;
  int64_t n = r->n, m = r->m, kq = svd_ku(r);
  jx_status s = JX_OK;
  for (int64_t b = b0; b < b1 && s == JX_OK; b += 16) {
    int cnt = (int)min64(16, b1 - b);
    uint32_t left = smallqr_f32((const float *)in[0] + b * n * m, cnt, n, m, r->flags & LINALG_FULL_MATRICES,
                                (float *)out[0] + b * n * kq, (float *)out[1] + b * kq * m);
    for (int l = 0; l < cnt && s == JX_OK; l++)
      if (left >> l & 1) s = fn(c, in, out, b + l);
  }
  return s;
}

static jx_status run_threads(const Routine *r, void *const *in, void *const *out, int64_t b0, int64_t b1,
                             FftParallelFor par, int nthreads) {
  RoutineFn *fn = NULL;
  Ctx c;
  jx_status s = lapack_ctx(r, &c);
  if (s != JX_OK) return s;
  c.par = par, c.nthreads = nthreads;
  switch (r->op) {
  case ROUTINE_CHOLESKY: fn = cholesky; break;
  case ROUTINE_TRIANGULAR_SOLVE: fn = triangular_solve; break;
  case ROUTINE_LU: fn = lu; break;
  case ROUTINE_QR: fn = qr; break;
  case ROUTINE_EIGH: fn = eigh; break;
  case ROUTINE_SVD: fn = svd; break;
  case ROUTINE_EIG: fn = eig; break;
  case ROUTINE_TRIDIAGONAL_SOLVE: fn = tridiagonal_solve; break;
  default:
    error_set(JX_ERR_INTERNAL, "lapack: %s is not a linear-algebra routine", routine_name(r->op));
    return JX_ERR_INTERNAL;
  }
  if (jacobi_fits(&c)) s = jacobi_batch(&c, fn, in, out, b0, b1);
  else if (smallqr_fits(&c)) s = smallqr_batch(&c, fn, in, out, b0, b1);
  else if (smalllu_fits(&c)) s = smalllu_batch(&c, in, out, b0, b1);
  else
    for (int64_t b = b0; b < b1 && s == JX_OK; b++) s = fn(&c, in, out, b);
  free(c.scratch);
  return s;
}

jx_status lapack_run(const Routine *r, void *const *in, void *const *out, int64_t b0, int64_t b1) {
  return run_threads(r, in, out, b0, b1, NULL, 1);
}

bool lapack_threads_help(const Routine *r) {
  if (r->dtype != JX_FLOAT32 && r->dtype != JX_FLOAT64) return false;
  Ctx c = {.r = r, .kind = r->dtype == JX_FLOAT32 ? KIND_S : KIND_D};
  /* eigh from n = 512 (EIGH_THREADS_MIN_N): at 256 its back-transformation split over 2
   * threads ran no faster (2.6-3.1 vs 2.5-2.7 ms, load 2); svd's stays on one thread (at
   * 1024, load 3.9, the pool's split measured 192-259 ms against 180-255) */
  return r->op == ROUTINE_LU    ? lu_blocked(&c)
         : r->op == ROUTINE_QR  ? qr_blocked(&c)
                                : r->op == ROUTINE_EIGH && r->n >= EIGH_THREADS_MIN_N && eigh_blocked(&c);
}

jx_status lapack_run_threads(const Routine *r, void *const *in, void *const *out, FftParallelFor par, int nthreads) {
  return run_threads(r, in, out, 0, r->outer, par, nthreads);
}

#else

int64_t lapack_parts(const Routine *r) { (void)r; return 1; }

jx_status lapack_run_parts(const Routine *r, void *const *in, void *const *out, int64_t b, int64_t p0, int64_t p1) {
  (void)p0, (void)p1;
  return lapack_run(r, in, out, b, b + 1);
}

bool lapack_threads_help(const Routine *r) {
  (void)r;
  return false;
}

jx_status lapack_run_threads(const Routine *r, void *const *in, void *const *out, FftParallelFor par, int nthreads) {
  (void)par, (void)nthreads;
  return lapack_run(r, in, out, 0, r->outer);
}

jx_status lapack_run(const Routine *r, void *const *in, void *const *out, int64_t b0, int64_t b1) {
  (void)in, (void)out, (void)b0, (void)b1;
  error_set(JX_ERR_UNSUPPORTED, "%s: jaxc was built without LAPACKE (install liblapacke-dev)",
            routine_name(r->op));
  return JX_ERR_UNSUPPORTED;
}

#endif
