/* lapack.c -- the linear-algebra routines on LAPACKE (column-major calls, so LAPACKE
 * never transposes behind our back) and CBLAS: row-major jaxc matrices are passed as
 * their column-major transposes where the algorithm allows it (potrf, syevd on
 * symmetric input; gesdd of a^T gives v and u^T directly) and copied transposed where
 * it does not (getrf, geqrf). Failures follow JAX on CPU: cholesky, eigh and svd give
 * NaNs for the batch entries LAPACK reports as failed; lu of a singular matrix is
 * returned as LAPACK computes it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/lapack.h"
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
  return r->op == ROUTINE_LU && o > 0 ? JX_INT32 : r->dtype;
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
  case ROUTINE_TRIDIAGONAL_SOLVE: per = n * m; break;
  default: break;
  }
  return r->outer * per;
}

#ifdef JAXC_HAVE_LAPACKE

/* ------------------------------------------------------------ helpers */

/* dst (cols x rows, row-major) = src (rows x cols, row-major) transposed: also the
 * column-major copy of src. Typed loops in 32 x 32 tiles (a per-element memcpy of a
 * run-time size cost ~10 ns an element at n = 1024). */
#define TRANSPOSE_TILE 32
#define TRANSPOSE_TYPED(T)                                                                         \
  do {                                                                                             \
    T *d = dst;                                                                                    \
    const T *s = src;                                                                              \
    for (int64_t i0 = 0; i0 < rows; i0 += TRANSPOSE_TILE)                                          \
      for (int64_t j0 = 0; j0 < cols; j0 += TRANSPOSE_TILE) {                                      \
        int64_t i1 = min64(i0 + TRANSPOSE_TILE, rows), j1 = min64(j0 + TRANSPOSE_TILE, cols);      \
        for (int64_t i = i0; i < i1; i++)                                                          \
          for (int64_t j = j0; j < j1; j++) d[j * rows + i] = s[i * cols + j];                     \
      }                                                                                            \
  } while (0)
static void transpose_into(void *dst, const void *src, int64_t rows, int64_t cols, size_t isz) {
  if (isz == 8) TRANSPOSE_TYPED(double);
  else TRANSPOSE_TYPED(float);
}

static void fill_nan(void *p, int64_t n, bool f64) {
  for (int64_t i = 0; i < n; i++)
    if (f64) ((double *)p)[i] = NAN;
    else ((float *)p)[i] = NAN;
}

static void fill_eye(void *p, int64_t n, bool f64) {
  memset(p, 0, (size_t)(n * n) * (f64 ? 8 : 4));
  for (int64_t i = 0; i < n; i++)
    if (f64) ((double *)p)[i * n + i] = 1;
    else ((float *)p)[i * n + i] = 1;
}

static int ld(int64_t n) { return n > 1 ? (int)n : 1; }

/* Batch entry b of operand p with `per` elements per entry. */
static char *entry(void *p, int64_t b, int64_t per, size_t isz) { return (char *)p + (size_t)(b * per) * isz; }

static jx_status oom(const Routine *r) {
  error_set(JX_ERR_OOM, "%s: out of memory for LAPACK scratch (%lld x %lld)", routine_name(r->op),
            (long long)r->n, (long long)r->m);
  return JX_ERR_OOM;
}

/* Scratch memory of one lapack_run call (one chunk of a batch), reused by every batch
 * entry: a batch of small problems allocates once and queries LAPACK's workspace sizes
 * once (every entry has the same shape), where LAPACKE's high-level calls would query
 * and malloc/free per entry. */
typedef struct Scratch {
  char *p;
  size_t cap;
  int64_t lwork, liwork; /* queried workspace sizes (elements); -1 before the query */
} Scratch;

#define SCRATCH_ALIGN 64
static size_t align_up(size_t n) { return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN; }

/* Carves nb buffers of bytes[i] each out of sc (grown if needed) into bufs[i]; false
 * when out of memory. */
static bool scratch_get(Scratch *sc, int nb, const size_t *bytes, char **bufs) {
  size_t total = 0;
  for (int i = 0; i < nb; i++) total += align_up(bytes[i] ? bytes[i] : 1);
  if (total > sc->cap) {
    free(sc->p);
    sc->p = aligned_alloc(SCRATCH_ALIGN, total);
    sc->cap = sc->p ? total : 0;
    if (!sc->p) return false;
  }
  char *q = sc->p;
  for (int i = 0; i < nb; i++) bufs[i] = q, q += align_up(bytes[i] ? bytes[i] : 1);
  return true;
}

/* A workspace query's answer (work[0] after lwork = -1), rounded up: a float32 answer
 * above 2^24 may have been rounded down. */
static int64_t query_size(const void *w, bool f64) {
  double v = f64 ? *(const double *)w : (double)*(const float *)w * (1 + 0x1p-22);
  return (int64_t)ceil(v) + 1;
}

/* ------------------------------------------------------------ routines */

typedef jx_status RoutineFn(const Routine *r, void *const *in, void *const *out, int64_t b, bool f64, size_t isz,
                            Scratch *sc);

static jx_status cholesky(const Routine *r, void *const *in, void *const *out, int64_t b, bool f64, size_t isz,
                          Scratch *sc) {
  (void)sc;
  int64_t n = r->n;
  char *l = entry(out[0], b, n * n, isz);
  memcpy(l, entry(in[0], b, n * n, isz), (size_t)(n * n) * isz);
  if (n == 0) return JX_OK;
  /* the row-major lower half is the column-major upper half: U^T = L */
  int info = f64 ? LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', (int)n, (double *)l, (int)n)
                 : LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'U', (int)n, (float *)l, (int)n);
  /* reference LAPACK reports a NaN pivot as a failure; OpenBLAS's potrf does not, but a
   * NaN anywhere in the lower half reaches its row's diagonal */
  for (int64_t i = 0; info == 0 && i < n; i++)
    if (f64 ? isnan(((double *)l)[i * n + i]) : isnan(((float *)l)[i * n + i])) info = (int)i + 1;
  if (info != 0) fill_nan(l, n * n, f64); /* NaN below, zeros above: JAX's tril of NaNs */
  for (int64_t i = 0; i + 1 < n; i++) memset(l + (size_t)(i * n + i + 1) * isz, 0, (size_t)(n - i - 1) * isz);
  return JX_OK;
}

static jx_status triangular_solve(const Routine *r, void *const *in, void *const *out, int64_t b, bool f64,
                                  size_t isz, Scratch *sc) {
  (void)sc;
  int64_t n = r->n, m = r->m;
  bool left = r->flags & LINALG_LEFT_SIDE;
  int64_t k = left ? n : m;
  const char *a = entry(in[0], b, k * k, isz);
  char *x = entry(out[0], b, n * m, isz);
  memcpy(x, entry(in[1], b, n * m, isz), (size_t)(n * m) * isz);
  if (n == 0 || m == 0) return JX_OK;
  enum CBLAS_SIDE side = left ? CblasLeft : CblasRight;
  enum CBLAS_UPLO uplo = r->flags & LINALG_LOWER ? CblasLower : CblasUpper;
  enum CBLAS_TRANSPOSE tr = r->flags & LINALG_TRANSPOSE_A ? CblasTrans : CblasNoTrans;
  enum CBLAS_DIAG diag = r->flags & LINALG_UNIT_DIAGONAL ? CblasUnit : CblasNonUnit;
  if (f64) cblas_dtrsm(CblasRowMajor, side, uplo, tr, diag, (int)n, (int)m, 1.0, (const double *)a, (int)k, (double *)x, (int)m);
  else cblas_strsm(CblasRowMajor, side, uplo, tr, diag, (int)n, (int)m, 1.0f, (const float *)a, (int)k, (float *)x, (int)m);
  return JX_OK;
}

/* gtsv on copies (it overwrites its operands): LAPACK's dl and du are the n-1
 * off-diagonals, JAX's dl[1..n) and du[0..n-1); gtsv's right-hand sides are
 * column-major, so b goes in transposed and x comes out transposed back. A singular
 * system (info > 0) gives NaNs, as JAX on CPU. */
static jx_status tridiagonal_solve(const Routine *r, void *const *in, void *const *out, int64_t b, bool f64,
                                   size_t isz, Scratch *sc) {
  int64_t n = r->n, m = r->m;
  char *x = entry(out[0], b, n * m, isz);
  if (n == 0 || m == 0) return JX_OK;
  char *w;
  if (!scratch_get(sc, 1, (size_t[]){(size_t)(3 * n + n * m) * isz}, &w)) return oom(r);
  char *dl = w, *d = w + (size_t)n * isz, *du = w + (size_t)(2 * n) * isz, *bt = w + (size_t)(3 * n) * isz;
  memcpy(dl, entry(in[0], b, n, isz), (size_t)n * isz);
  memcpy(d, entry(in[1], b, n, isz), (size_t)n * isz);
  memcpy(du, entry(in[2], b, n, isz), (size_t)n * isz);
  transpose_into(bt, entry(in[3], b, n * m, isz), n, m, isz);
  lapack_int info = f64 ? LAPACKE_dgtsv_work(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)m, (double *)dl + 1,
                                            (double *)d, (double *)du, (double *)bt, (lapack_int)n)
                        : LAPACKE_sgtsv_work(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)m, (float *)dl + 1,
                                            (float *)d, (float *)du, (float *)bt, (lapack_int)n);
  if (info != 0) fill_nan(bt, n * m, f64);
  transpose_into(x, bt, m, n, isz);
  return JX_OK;
}

static jx_status lu(const Routine *r, void *const *in, void *const *out, int64_t b, bool f64, size_t isz,
                    Scratch *sc) {
  int64_t n = r->n, m = r->m, k = min64(n, m);
  char *luo = entry(out[0], b, n * m, isz);
  int32_t *piv = (int32_t *)out[1] + b * k, *perm = (int32_t *)out[2] + b * n;
  for (int64_t i = 0; i < n; i++) perm[i] = (int32_t)i;
  if (k == 0) return JX_OK;
  char *buf[2];
  if (!scratch_get(sc, 2, (size_t[]){(size_t)(n * m) * isz, (size_t)k * sizeof(lapack_int)}, buf)) return oom(r);
  char *w = buf[0];
  lapack_int *ipiv = (lapack_int *)buf[1];
  transpose_into(w, entry(in[0], b, n * m, isz), n, m, isz); /* column-major n x m */
  if (f64) LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, (int)n, (int)m, (double *)w, ld(n), ipiv);
  else LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, (int)n, (int)m, (float *)w, ld(n), ipiv);
  transpose_into(luo, w, m, n, isz);
  for (int64_t i = 0; i < k; i++) {
    piv[i] = (int32_t)(ipiv[i] - 1);
    int32_t t = perm[i];
    perm[i] = perm[piv[i]];
    perm[piv[i]] = t;
  }
  return JX_OK;
}

static jx_status qr(const Routine *r, void *const *in, void *const *out, int64_t b, bool f64, size_t isz,
                    Scratch *sc) {
  int64_t n = r->n, m = r->m, k = min64(n, m), kq = svd_ku(r), wc = m > kq ? m : kq;
  char *q = entry(out[0], b, n * kq, isz), *ro = entry(out[1], b, kq * m, isz);
  memset(ro, 0, (size_t)(kq * m) * isz);
  if (k == 0) { /* q: the identity (complete) or empty */
    if (kq == n) fill_eye(q, n, f64);
    return JX_OK;
  }
  if (sc->lwork < 0) { /* the larger of geqrf's and orgqr's optimal workspaces */
    double w1 = 0, w2 = 0;
    if (f64) {
      LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (int)n, (int)m, NULL, (int)n, NULL, &w1, -1);
      LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, (int)n, (int)kq, (int)k, NULL, (int)n, NULL, &w2, -1);
    } else {
      float f1 = 0, f2 = 0;
      LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, (int)n, (int)m, NULL, (int)n, NULL, &f1, -1);
      LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, (int)n, (int)kq, (int)k, NULL, (int)n, NULL, &f2, -1);
      w1 = f1, w2 = f2;
    }
    sc->lwork = query_size(&(double){w1 > w2 ? w1 : w2}, true);
  }
  char *buf[3];
  if (!scratch_get(sc, 3, (size_t[]){(size_t)(n * wc) * isz, (size_t)k * isz, (size_t)sc->lwork * isz}, buf))
    return oom(r);
  char *w = buf[0], *tau = buf[1], *work = buf[2];
  int lw = (int)sc->lwork;
  transpose_into(w, entry(in[0], b, n * m, isz), n, m, isz); /* column-major n x m, lda n */
  int info = f64 ? LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (int)n, (int)m, (double *)w, (int)n, (double *)tau,
                                       (double *)work, lw)
                 : LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, (int)n, (int)m, (float *)w, (int)n, (float *)tau,
                                       (float *)work, lw);
  for (int64_t i = 0; i < kq && i < n; i++) /* r: the upper triangle of w */
    for (int64_t j = i; j < m; j++) memcpy(ro + (size_t)(i * m + j) * isz, w + (size_t)(j * n + i) * isz, isz);
  if (info == 0)
    info = f64 ? LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, (int)n, (int)kq, (int)k, (double *)w, (int)n, (double *)tau,
                                     (double *)work, lw)
               : LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, (int)n, (int)kq, (int)k, (float *)w, (int)n, (float *)tau,
                                     (float *)work, lw);
  transpose_into(q, w, kq, n, isz);
  if (info != 0) fill_nan(q, n * kq, f64), fill_nan(ro, kq * m, f64);
  return JX_OK;
}

static jx_status eigh(const Routine *r, void *const *in, void *const *out, int64_t b, bool f64, size_t isz,
                      Scratch *sc) {
  int64_t n = r->n;
  char *v = entry(out[0], b, n * n, isz), *w = entry(out[1], b, n, isz);
  if (n == 0) return JX_OK;
  /* symmetric: the row-major lower half is the column-major upper half */
  char uplo = r->flags & LINALG_LOWER ? 'U' : 'L';
  if (sc->lwork < 0) {
    double wq = 0;
    float fq = 0;
    lapack_int iq = 0;
    if (f64) LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', uplo, (int)n, NULL, (int)n, NULL, &wq, -1, &iq, -1);
    else LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', uplo, (int)n, NULL, (int)n, NULL, &fq, -1, &iq, -1);
    sc->lwork = f64 ? query_size(&wq, true) : query_size(&fq, false);
    sc->liwork = iq + 1;
  }
  char *buf[3];
  if (!scratch_get(sc, 3, (size_t[]){(size_t)(n * n) * isz, (size_t)sc->lwork * isz,
                                      (size_t)sc->liwork * sizeof(lapack_int)}, buf))
    return oom(r);
  char *a = buf[0];
  memcpy(a, entry(in[0], b, n * n, isz), (size_t)(n * n) * isz);
  int info = f64 ? LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', uplo, (int)n, (double *)a, (int)n, (double *)w,
                                       (double *)buf[1], (int)sc->lwork, (lapack_int *)buf[2], (int)sc->liwork)
                 : LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', uplo, (int)n, (float *)a, (int)n, (float *)w,
                                       (float *)buf[1], (int)sc->lwork, (lapack_int *)buf[2], (int)sc->liwork);
  transpose_into(v, a, n, n, isz); /* eigenvectors: columns of the column-major a */
  if (info != 0) fill_nan(v, n * n, f64), fill_nan(w, n, f64);
  return JX_OK;
}

/* gesdd of the column-major view of a (that is a^T, m x n): a^T = U' S V'^T, so
 * a = V' S U'^T: u = V' is V'^T read column-major, vt = U'^T is U' read column-major,
 * both written in place without copies. */
static jx_status svd(const Routine *r, void *const *in, void *const *out, int64_t b, bool f64, size_t isz,
                     Scratch *sc) {
  int64_t n = r->n, m = r->m, k = min64(n, m), ku = svd_ku(r), kv = svd_kv(r);
  bool uv = r->flags & LINALG_COMPUTE_UV;
  char *s = entry(out[0], b, k, isz);
  char *u = uv ? entry(out[1], b, n * ku, isz) : NULL, *vt = uv ? entry(out[2], b, kv * m, isz) : NULL;
  if (k == 0) {
    if (uv && ku == n) fill_eye(u, n, f64);
    if (uv && kv == m) fill_eye(vt, m, f64);
    return JX_OK;
  }
  char job = !uv ? 'N' : r->flags & LINALG_FULL_MATRICES ? 'A' : 'S';
  /* column-major m x n: U' is m x kv (ld m) -> vt; V'^T is ku x n (ld ku) -> u */
  int ldu = ld(m), ldvt = ld(ku);
  double d1;
  float f1;
  void *uo = uv ? (void *)vt : (f64 ? (void *)&d1 : (void *)&f1);
  void *vo = uv ? (void *)u : (f64 ? (void *)&d1 : (void *)&f1);
  if (!uv) ldu = ldvt = 1;
  if (sc->lwork < 0) {
    double wq = 0;
    float fq = 0;
    if (f64) LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, job, (int)m, (int)n, NULL, (int)m, NULL, NULL, ldu, NULL, ldvt, &wq, -1, NULL);
    else LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, job, (int)m, (int)n, NULL, (int)m, NULL, NULL, ldu, NULL, ldvt, &fq, -1, NULL);
    sc->lwork = f64 ? query_size(&wq, true) : query_size(&fq, false);
  }
  char *buf[3];
  if (!scratch_get(sc, 3, (size_t[]){(size_t)(n * m) * isz, (size_t)sc->lwork * isz, (size_t)(8 * k) * sizeof(lapack_int)},
                   buf))
    return oom(r);
  char *a = buf[0];
  memcpy(a, entry(in[0], b, n * m, isz), (size_t)(n * m) * isz);
  int info = f64 ? LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, job, (int)m, (int)n, (double *)a, (int)m, (double *)s,
                                       (double *)uo, ldu, (double *)vo, ldvt, (double *)buf[1], (int)sc->lwork,
                                       (lapack_int *)buf[2])
                 : LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, job, (int)m, (int)n, (float *)a, (int)m, (float *)s,
                                       (float *)uo, ldu, (float *)vo, ldvt, (float *)buf[1], (int)sc->lwork,
                                       (lapack_int *)buf[2]);
  if (info != 0) {
    fill_nan(s, k, f64);
    if (uv) fill_nan(u, n * ku, f64), fill_nan(vt, kv * m, f64);
  }
  return JX_OK;
}

jx_status lapack_run(const Routine *r, void *const *in, void *const *out, int64_t b0, int64_t b1) {
  if (r->dtype != JX_FLOAT32 && r->dtype != JX_FLOAT64) {
    error_set(JX_ERR_DTYPE, "%s: LAPACK routines take float32 or float64, got %s", routine_name(r->op),
              jx_dtype_name(r->dtype));
    return JX_ERR_DTYPE;
  }
  if (r->n > INT32_MAX / 2 || r->m > INT32_MAX / 2 || r->n * r->m > INT32_MAX) {
    error_set(JX_ERR_UNSUPPORTED, "%s: a %lld x %lld matrix exceeds LAPACK's 32-bit sizes",
              routine_name(r->op), (long long)r->n, (long long)r->m);
    return JX_ERR_UNSUPPORTED;
  }
  bool f64 = r->dtype == JX_FLOAT64;
  size_t isz = f64 ? 8 : 4;
  RoutineFn *fn = NULL;
  switch (r->op) {
  case ROUTINE_CHOLESKY: fn = cholesky; break;
  case ROUTINE_TRIANGULAR_SOLVE: fn = triangular_solve; break;
  case ROUTINE_LU: fn = lu; break;
  case ROUTINE_QR: fn = qr; break;
  case ROUTINE_EIGH: fn = eigh; break;
  case ROUTINE_SVD: fn = svd; break;
  case ROUTINE_TRIDIAGONAL_SOLVE: fn = tridiagonal_solve; break;
  default:
    error_set(JX_ERR_INTERNAL, "lapack: %s is not a linear-algebra routine", routine_name(r->op));
    return JX_ERR_INTERNAL;
  }
  Scratch sc = {.lwork = -1, .liwork = -1};
  jx_status s = JX_OK;
  for (int64_t b = b0; b < b1 && s == JX_OK; b++) s = fn(r, in, out, b, f64, isz, &sc);
  free(sc.p);
  return s;
}

#else

jx_status lapack_run(const Routine *r, void *const *in, void *const *out, int64_t b0, int64_t b1) {
  (void)in, (void)out, (void)b0, (void)b1;
  error_set(JX_ERR_UNSUPPORTED, "%s: jaxc was built without LAPACKE (install liblapacke-dev)",
            routine_name(r->op));
  return JX_ERR_UNSUPPORTED;
}

#endif
