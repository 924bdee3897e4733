/* solver.c -- dense linear algebra on the GPU: cholesky, eigh and lu through cuSOLVER's
 * dense API (potrf, syevd/heevd, getrf), triangular_solve through cuBLAS's trsm, qr
 * through geqrf + orgqr/ungqr and svd through gesvdj (Jacobi; gesvdjBatched for
 * matrices of at most 32 x 32, the whole batch in one call), in float32, float64,
 * complex64 and complex128 (s, d, c, z), all opened with dlopen on first use and queued
 * on the device's stream. jaxc's matrices are row-major, the libraries column-major: a
 * row-major matrix is its column-major transpose, which potrf, syevd, trsm and gesvdj
 * take as it is (the triangle or the side and the triangle flipped, the factors
 * swapped, conjugated where a Hermitian matrix's transpose is its conjugate, as LAPACK
 * on the host: backend/lapack.c); getrf and geqrf need the matrix itself, transposed on
 * the device (cublas<t>geam; for qr one index kernel over the whole batch, as every
 * rearrangement of qr's and svd's factors). Failures follow JAX (and the host): a failed
 * cholesky gives NaNs below the diagonal (zeros above), a failed eigh or svd NaNs, for
 * that batch entry. Batch entries run one call each, except gesvdjBatched's.
 * tridiagonal_solve and eig stay on the host path (cuda.c). */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "core/dtype.h"
#include "core/error.h"

typedef struct SolverCtx *SolverHandle;
typedef struct cublasContext *BlasHandle;
typedef struct gesvdjInfo *GesvdjInfo;
enum { FILL_LOWER = 0, FILL_UPPER = 1, OP_N = 0, OP_T = 1, OP_C = 2, SIDE_LEFT = 0, SIDE_RIGHT = 1 };
enum { DIAG_NON_UNIT = 0, DIAG_UNIT = 1, EIG_VECTOR = 1 };

/* The entry points of float32, float64, complex64 and complex128 ([0..3]: s, d, c, z). */
static struct {
  SolverHandle h;
  BlasHandle bh;
  int (*potrf_size[4])(SolverHandle, int, int, void *, int, int *);
  int (*potrf[4])(SolverHandle, int, int, void *, int, void *, int, int *);
  int (*syevd_size[4])(SolverHandle, int, int, int, const void *, int, const void *, int *);
  int (*syevd[4])(SolverHandle, int, int, int, void *, int, void *, void *, int, int *);
  int (*getrf_size[4])(SolverHandle, int, int, void *, int, int *);
  int (*getrf[4])(SolverHandle, int, int, void *, int, void *, int *, int *);
  int (*trsm[4])(BlasHandle, int, int, int, int, int, int, const void *, const void *, int, void *, int);
  int (*geam[4])(BlasHandle, int, int, int, int, const void *, const void *, int, const void *, const void *,
                 int, void *, int);
  int (*geqrf_size[4])(SolverHandle, int, int, void *, int, int *);
  int (*geqrf[4])(SolverHandle, int, int, void *, int, void *, void *, int, int *);
  int (*orgqr_size[4])(SolverHandle, int, int, int, const void *, int, const void *, int *);
  int (*orgqr[4])(SolverHandle, int, int, int, void *, int, const void *, void *, int, int *);
  int (*gesvdj_size[4])(SolverHandle, int, int, int, int, const void *, int, const void *, const void *, int,
                        const void *, int, int *, GesvdjInfo);
  int (*gesvdj[4])(SolverHandle, int, int, int, int, void *, int, void *, void *, int, void *, int, void *, int,
                   int *, GesvdjInfo);
  int (*gesvdjb_size[4])(SolverHandle, int, int, int, const void *, int, const void *, const void *, int,
                         const void *, int, int *, GesvdjInfo, int);
  int (*gesvdjb[4])(SolverHandle, int, int, int, void *, int, void *, void *, int, void *, int, void *, int, int *,
                    GesvdjInfo, int);
  int (*gesvdj_create)(GesvdjInfo *);
  int (*gesvdj_destroy)(GesvdjInfo);
  int (*gesvdj_sort)(GesvdjInfo, int);
  char error[512];
} S;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  char why[400];
  const char *sn[] = {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so.13", "libcusolver.so", NULL};
  const char *bn[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
  void *sl = cuda_dlopen_any(sn, why, sizeof why);
  if (!sl) {
    snprintf(S.error, sizeof S.error, "cuda: linear algebra needs cuSOLVER, but libcusolver.so.12 (or .11) "
             "was not found (%s)", why);
    return;
  }
  void *bl = cuda_dlopen_any(bn, why, sizeof why);
  if (!bl) {
    snprintf(S.error, sizeof S.error, "cuda: linear algebra needs cuBLAS (%s)", why);
    return;
  }
  int (*create)(SolverHandle *) = (int (*)(SolverHandle *))dlsym(sl, "cusolverDnCreate");
  int (*set_stream)(SolverHandle, CUstream) = (int (*)(SolverHandle, CUstream))dlsym(sl, "cusolverDnSetStream");
  int (*bcreate)(BlasHandle *) = (int (*)(BlasHandle *))dlsym(bl, "cublasCreate_v2");
  int (*bset_stream)(BlasHandle, CUstream) = (int (*)(BlasHandle, CUstream))dlsym(bl, "cublasSetStream_v2");
  /* name: a format of the type letter and the real/complex infix (sy/he, or/un) */
#define L4(field, lib, name, rin, cin)                                                             \
  for (int t = 0; t < 4; t++) {                                                                    \
    char sym[64];                                                                                  \
    snprintf(sym, sizeof sym, name, "SDCZ"[t], t < 2 ? rin : cin);                                 \
    S.field[t] = (__typeof__(S.field[t]))dlsym(lib, sym);                                          \
  }
  L4(potrf_size, sl, "cusolverDn%cpotrf_bufferSize%s", "", "");
  L4(potrf, sl, "cusolverDn%cpotrf%s", "", "");
  L4(syevd_size, sl, "cusolverDn%c%sevd_bufferSize", "sy", "he");
  L4(syevd, sl, "cusolverDn%c%sevd", "sy", "he");
  L4(getrf_size, sl, "cusolverDn%cgetrf_bufferSize%s", "", "");
  L4(getrf, sl, "cusolverDn%cgetrf%s", "", "");
  L4(trsm, bl, "cublas%ctrsm_v2%s", "", "");
  L4(geam, bl, "cublas%cgeam%s", "", "");
  L4(geqrf_size, sl, "cusolverDn%cgeqrf_bufferSize%s", "", "");
  L4(geqrf, sl, "cusolverDn%cgeqrf%s", "", "");
  L4(orgqr_size, sl, "cusolverDn%c%sgqr_bufferSize", "or", "un");
  L4(orgqr, sl, "cusolverDn%c%sgqr", "or", "un");
  L4(gesvdj_size, sl, "cusolverDn%cgesvdj_bufferSize%s", "", "");
  L4(gesvdj, sl, "cusolverDn%cgesvdj%s", "", "");
  L4(gesvdjb_size, sl, "cusolverDn%cgesvdjBatched_bufferSize%s", "", "");
  L4(gesvdjb, sl, "cusolverDn%cgesvdjBatched%s", "", "");
#undef L4
  S.gesvdj_create = (int (*)(GesvdjInfo *))dlsym(sl, "cusolverDnCreateGesvdjInfo");
  S.gesvdj_destroy = (int (*)(GesvdjInfo))dlsym(sl, "cusolverDnDestroyGesvdjInfo");
  S.gesvdj_sort = (int (*)(GesvdjInfo, int))dlsym(sl, "cusolverDnXgesvdjSetSortEig");
  bool all = create && set_stream && bcreate && bset_stream && S.gesvdj_create && S.gesvdj_destroy && S.gesvdj_sort;
  for (int t = 0; t < 4; t++)
    all = all && S.potrf_size[t] && S.potrf[t] && S.syevd_size[t] && S.syevd[t] && S.getrf_size[t] &&
          S.getrf[t] && S.trsm[t] && S.geam[t] && S.geqrf_size[t] && S.geqrf[t] && S.orgqr_size[t] && S.orgqr[t] && S.gesvdj_size[t] &&
          S.gesvdj[t] && S.gesvdjb_size[t] && S.gesvdjb[t];
  if (!all) {
    snprintf(S.error, sizeof S.error, "cuda: libcusolver or libcublas lacks an entry point jaxc calls");
    return;
  }
  cuda_make_current();
  CUstream st = cuda_device()->stream;
  int e;
  if ((e = create(&S.h)) != 0 || (e = set_stream(S.h, st)) != 0 || (e = bcreate(&S.bh)) != 0 ||
      (e = bset_stream(S.bh, st)) != 0) {
    snprintf(S.error, sizeof S.error, "cuda: creating the cuSOLVER/cuBLAS handles failed (status %d)", e);
    S.h = NULL;
  }
}

static jx_status lib_fail(const Routine *r, const char *call, int status) {
  error_set(JX_ERR_DEVICE, "cuda: %s failed (status %d) in %s of %lld x %lld", call, status,
            routine_name(r->op), (long long)r->n, (long long)r->m);
  return JX_ERR_DEVICE;
}

static char *at(void *p, int64_t elems, size_t isz) { return (char *)p + (size_t)elems * isz; }

static jx_status copy_d2d(void *dst, const void *src, size_t nbytes) {
  const CudaDevice *d = cuda_device();
  if (!nbytes) return JX_OK;
  return cuda_check(d->cu.cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, nbytes,
                                            d->stream), "cuMemcpyDtoDAsync");
}

/* Runs an elementwise kernel out[gidx] = e over `size` elements of dtype d on the
 * stream (the fix-ups after a factorization). */
static jx_status run_kernel(const AluExp *e, int nargs, const jx_dtype *dts, jx_dtype d, int64_t size,
                            void *const *in, void *out) {
  if (!e) return jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  Kernel k = {.nargs = nargs, .size = size, .dtype = d, .exp = e};
  memcpy(k.arg_dtypes, dts, (size_t)nargs * sizeof *dts);
  void *exe = NULL;
  jx_status s = cuda_prepare(&k, &exe);
  return s == JX_OK ? cuda_dispatch(exe, &k, in, (void *const[]){out}) : s;
}

/* Index arithmetic of the rearranging kernels (int64). */
static const AluExp *ic(int64_t v) { return alu_const_int(JX_INT64, v); }
static const AluExp *idiv(const AluExp *a, int64_t v) { return alu_binary(ALU_DIV, a, ic(v)); }
static const AluExp *imod(const AluExp *a, int64_t v) { return alu_binary(ALU_MOD, a, ic(v)); }
static const AluExp *iaxpy(const AluExp *a, int64_t v, const AluExp *b) {
  return alu_binary(ALU_ADD, alu_binary(ALU_MUL, a, ic(v)), b);
}
/* A constant of dtype d (complex: re + im i). */
static const AluExp *dconst(jx_dtype d, double re, double im) {
  if (!dtype_is_complex(d)) return alu_const_float(d, re);
  jx_dtype p = dtype_real_part(d);
  return alu_complex(alu_const_float(p, re), alu_const_float(p, im));
}
static const AluExp *conj_(const AluExp *x) {
  return dtype_is_complex(x->dtype) ? alu_complex(alu_real(x), alu_unary(ALU_NEG, alu_imag(x))) : x;
}
/* (b, i, j) of element g of a (B, rows, cols) row-major output. */
typedef struct Bij {
  const AluExp *b, *i, *j;
} Bij;
static Bij bij(int64_t B, int64_t rows, int64_t cols) {
  const AluExp *g = alu_special("gidx", B * rows * cols), *rc = imod(g, rows * cols);
  return (Bij){idiv(g, rows * cols), idiv(rc, cols), imod(rc, cols)};
}

/* The batch entries' info words (device int32) copied to the host: whether any failed. */
static jx_status read_infos(const int32_t *dev, int32_t *host, int64_t n) {
  const CudaDevice *d = cuda_device();
  jx_status s = cuda_check(d->cu.cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)dev, (size_t)n * 4, d->stream),
                           "cuMemcpyDtoHAsync");
  return s == JX_OK ? cuda_check(d->cu.cuStreamSynchronize(d->stream), "cuStreamSynchronize") : s;
}

/* cholesky: potrf on a copy (the row-major lower half is the column-major upper
 * half), then zeros above the diagonal and NaN on and below it where the entry failed
 * (info != 0, or a NaN on its last diagonal element, which any NaN pivot reaches). */
static jx_status cholesky(const Routine *r, void *const *in, void *const *out, int t, size_t isz) {
  int64_t n = r->n, B = r->outer, nn = n * n;
  jx_dtype d = r->dtype;
  if (nn == 0 || B == 0) return JX_OK;
  void *w = cuda_alloc((size_t)(B * nn) * isz);
  int32_t *info = cuda_alloc((size_t)B * 4);
  jx_status s = w && info ? copy_d2d(w, in[0], (size_t)(B * nn) * isz) : jx_last_status();
  int lwork = 0, st = 0;
  if (s == JX_OK && (st = S.potrf_size[t](S.h, FILL_UPPER, (int)n, w, (int)n, &lwork)) != 0)
    s = lib_fail(r, "potrf_bufferSize", st);
  void *work = s == JX_OK ? cuda_alloc((size_t)(lwork > 0 ? lwork : 1) * isz) : NULL;
  if (s == JX_OK && !work) s = jx_last_status();
  for (int64_t b = 0; s == JX_OK && b < B; b++)
    if ((st = S.potrf[t](S.h, FILL_UPPER, (int)n, at(w, b * nn, isz), (int)n, work, lwork, info + b)) != 0)
      s = lib_fail(r, "potrf", st);
  if (s == JX_OK) {
    /* out[g] = col > row ? 0 : bad(entry) ? NaN : w[g], g = (b, row, col): JAX's tril of
     * NaNs for a failed entry */
    const AluExp *g = alu_special("gidx", B * nn);
    const AluExp *bb = alu_binary(ALU_DIV, g, alu_const_int(JX_INT64, nn));
    const AluExp *rc = alu_binary(ALU_MOD, g, alu_const_int(JX_INT64, nn));
    const AluExp *row = alu_binary(ALU_DIV, rc, alu_const_int(JX_INT64, n));
    const AluExp *col = alu_binary(ALU_MOD, rc, alu_const_int(JX_INT64, n));
    const AluExp *last = alu_global(0, d, alu_binary(ALU_ADD, alu_binary(ALU_MUL, bb, alu_const_int(JX_INT64, nn)),
                                                      alu_const_int(JX_INT64, nn - 1)));
    const AluExp *bad = alu_binary(ALU_OR, alu_binary(ALU_CMPNE, alu_global(1, JX_INT32, bb), alu_const_int(JX_INT32, 0)),
                                   alu_binary(ALU_CMPNE, last, last));
    const AluExp *e = alu_where(alu_binary(ALU_CMPLT, row, col), dconst(d, 0, 0),
                                alu_where(bad, dconst(d, NAN, NAN), alu_global(0, d, g)));
    s = run_kernel(e, 2, (jx_dtype[]){d, JX_INT32}, d, B * nn, (void *const[]){w, info}, out[0]);
  }
  cuda_free(work), cuda_free(w), cuda_free(info);
  return s;
}

/* triangular_solve: row-major op(a) x = b (left) is column-major x^T op(a)^T = b^T, and
 * a read column-major is a^T: the side and the triangle flip, the transpose stays
 * (op(a)^T is a^T as stored, a = (a^T)^T, or conj(a) = (a^T)^H for a^H). op(a) =
 * conj(a) needs conj(a^T), which cuBLAS has no operation for: a conjugated copy. */
static jx_status triangular_solve(const Routine *r, void *const *in, void *const *out, int t, size_t isz) {
  int64_t n = r->n, m = r->m, B = r->outer;
  bool left = r->flags & LINALG_LEFT_SIDE, cpx = t >= 2, ta = r->flags & LINALG_TRANSPOSE_A;
  bool conj = cpx && (r->flags & LINALG_CONJUGATE_A);
  int64_t k = left ? n : m;
  jx_status s = copy_d2d(out[0], in[1], (size_t)(B * n * m) * isz);
  if (s != JX_OK || n == 0 || m == 0) return s;
  int side = left ? SIDE_RIGHT : SIDE_LEFT, uplo = r->flags & LINALG_LOWER ? FILL_UPPER : FILL_LOWER;
  int trans = ta ? (conj ? OP_C : OP_T) : OP_N, diag = r->flags & LINALG_UNIT_DIAGONAL ? DIAG_UNIT : DIAG_NON_UNIT;
  const void *a = in[0];
  void *ac = NULL;
  if (conj && !ta) { /* conj(a) */
    jx_dtype d = r->dtype;
    if (!(ac = cuda_alloc((size_t)(B * k * k) * isz))) return jx_last_status();
    s = run_kernel(conj_(alu_global(0, d, alu_special("gidx", B * k * k))), 1, &d, d, B * k * k, in, ac);
    a = ac;
  }
  float one32[2] = {1, 0};
  double one64[2] = {1, 0};
  const void *one = t == 1 || t == 3 ? (const void *)one64 : one32;
  for (int64_t b = 0; s == JX_OK && b < B; b++) {
    int st = S.trsm[t](S.bh, side, uplo, trans, diag, (int)m, (int)n, one, at((void *)a, b * k * k, isz), (int)k,
                       at(out[0], b * n * m, isz), (int)m);
    if (st != 0) s = lib_fail(r, "trsm", st);
  }
  cuda_free(ac);
  return s;
}

/* dst (cols x rows, row-major) = src (rows x cols, row-major) transposed (op OP_T), or
 * conjugate-transposed (OP_C), on the device. */
static jx_status transpose(const Routine *r, int t, int op, const void *src, void *dst, int64_t rows, int64_t cols) {
  float one32[2] = {1, 0}, zero32[2] = {0, 0};
  double one64[2] = {1, 0}, zero64[2] = {0, 0};
  bool dbl = t == 1 || t == 3;
  /* column-major: src is (cols x rows) ld cols; dst = op(src) is (rows x cols) ld rows */
  int st = S.geam[t](S.bh, op, OP_N, (int)rows, (int)cols, dbl ? (const void *)one64 : one32, src, (int)cols,
                     dbl ? (const void *)zero64 : zero32, dst, (int)rows, dst, (int)rows);
  return st ? lib_fail(r, "geam", st) : JX_OK;
}

/* eigh: syevd/heevd on a copy (symmetric: the row-major lower half is the column-major
 * upper half; Hermitian: the column-major view is conj(a), whose eigenvectors are
 * conj(v)); the eigenvectors are the columns of the column-major result, transposed
 * (conjugate-transposed) into row-major v; a failed entry gives NaNs (checked on the
 * host: one wait). */
static jx_status eigh(const Routine *r, void *const *in, void *const *out, int t, size_t isz) {
  int64_t n = r->n, B = r->outer, nn = n * n;
  if (nn == 0 || B == 0) return JX_OK;
  jx_dtype d = r->dtype, rd = dtype_real_part(d);
  size_t rsz = jx_dtype_itemsize(rd);
  int uplo = r->flags & LINALG_LOWER ? FILL_UPPER : FILL_LOWER;
  void *a = cuda_alloc((size_t)(B * nn) * isz);
  int32_t *info = cuda_alloc((size_t)B * 4);
  jx_status s = a && info ? copy_d2d(a, in[0], (size_t)(B * nn) * isz) : jx_last_status();
  int lwork = 0, st = 0;
  if (s == JX_OK && (st = S.syevd_size[t](S.h, EIG_VECTOR, uplo, (int)n, a, (int)n, out[1], &lwork)) != 0)
    s = lib_fail(r, "syevd_bufferSize", st);
  void *work = s == JX_OK ? cuda_alloc((size_t)(lwork > 0 ? lwork : 1) * isz) : NULL;
  if (s == JX_OK && !work) s = jx_last_status();
  for (int64_t b = 0; s == JX_OK && b < B; b++)
    if ((st = S.syevd[t](S.h, EIG_VECTOR, uplo, (int)n, at(a, b * nn, isz), (int)n, at(out[1], b * n, rsz), work,
                         lwork, info + b)) != 0)
      s = lib_fail(r, t < 2 ? "syevd" : "heevd", st);
  for (int64_t b = 0; s == JX_OK && b < B; b++)
    s = transpose(r, t, t < 2 ? OP_T : OP_C, at(a, b * nn, isz), at(out[0], b * nn, isz), n, n);
  int32_t *hinfo = s == JX_OK ? malloc((size_t)B * 4) : NULL;
  if (s == JX_OK && !hinfo) s = JX_ERR_OOM, error_set(s, "cuda: eigh: out of memory");
  if (s == JX_OK) s = read_infos(info, hinfo, B);
  const CudaDevice *dev = cuda_device();
  for (int64_t b = 0; s == JX_OK && b < B; b++)
    if (hinfo[b] != 0) { /* NaNs: float32 words 0x7fc00000; float64 by a kernel */
      if (rd == JX_FLOAT32) {
        s = cuda_check(dev->cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)at(out[0], b * nn, isz), 0x7fc00000u,
                                                (size_t)nn * (isz / 4), dev->stream), "cuMemsetD32Async");
        if (s == JX_OK) s = cuda_check(dev->cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)at(out[1], b * n, rsz), 0x7fc00000u, (size_t)n, dev->stream), "cuMemsetD32Async");
      } else {
        s = run_kernel(dconst(d, NAN, NAN), 0, NULL, d, nn, NULL, at(out[0], b * nn, isz));
        if (s == JX_OK) s = run_kernel(alu_const_float(rd, NAN), 0, NULL, rd, n, NULL, at(out[1], b * n, rsz));
      }
    }
  free(hinfo);
  cuda_free(work), cuda_free(a), cuda_free(info);
  return s;
}

/* lu: getrf on the column-major copy (the transpose, by geam), transposed back into
 * lu; the pivots (1-based, per entry) are read on the host, where the permutation is
 * built from them as on the host path, and written back 0-based (one wait). */
static jx_status lu(const Routine *r, void *const *in, void *const *out, int t, size_t isz) {
  int64_t n = r->n, m = r->m, B = r->outer, k = n < m ? n : m, nm = n * m;
  if (B == 0) return JX_OK;
  int32_t *piv = malloc((size_t)(B * (k + 1)) * 4), *perm = malloc((size_t)(B * (n + 1)) * 4);
  void *w = nm ? cuda_alloc((size_t)(B * nm) * isz) : NULL;
  int32_t *dpiv = cuda_alloc((size_t)(B * (k + 1)) * 4), *info = cuda_alloc((size_t)B * 4);
  jx_status s = piv && perm && dpiv && info && (w || !nm) ? JX_OK : jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  if (s == JX_ERR_OOM && !jx_last_status()) error_set(s, "cuda: lu: out of memory");
  int lwork = 0, st = 0;
  void *work = NULL;
  if (s == JX_OK && k > 0) {
    if ((st = S.getrf_size[t](S.h, (int)n, (int)m, w, (int)n, &lwork)) != 0) s = lib_fail(r, "getrf_bufferSize", st);
    if (s == JX_OK && !(work = cuda_alloc((size_t)(lwork > 0 ? lwork : 1) * isz))) s = jx_last_status();
    for (int64_t b = 0; s == JX_OK && b < B; b++) {
      s = transpose(r, t, OP_T, at(in[0], b * nm, isz), at(w, b * nm, isz), n, m); /* column-major n x m */
      if (s == JX_OK && (st = S.getrf[t](S.h, (int)n, (int)m, at(w, b * nm, isz), (int)n, work, dpiv + b * k, info + b)) != 0)
        s = lib_fail(r, "getrf", st);
      if (s == JX_OK) s = transpose(r, t, OP_T, at(w, b * nm, isz), at(out[0], b * nm, isz), m, n);
    }
    if (s == JX_OK) s = read_infos(dpiv, piv, B * k);
  }
  for (int64_t b = 0; s == JX_OK && b < B; b++) {
    int32_t *p = piv + b * k, *q = perm + b * n;
    for (int64_t i = 0; i < n; i++) q[i] = (int32_t)i;
    for (int64_t i = 0; i < k; i++) {
      p[i] -= 1;
      int32_t x = q[i];
      q[i] = q[p[i]], q[p[i]] = x;
    }
  }
  const CudaDevice *d = cuda_device();
  if (s == JX_OK && k > 0)
    s = cuda_check(d->cu.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)out[1], piv, (size_t)(B * k) * 4, d->stream), "cuMemcpyHtoDAsync");
  if (s == JX_OK && n > 0)
    s = cuda_check(d->cu.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)out[2], perm, (size_t)(B * n) * 4, d->stream), "cuMemcpyHtoDAsync");
  /* the host buffers are staged by the driver before HtoD returns (pageable memory) */
  free(piv), free(perm);
  cuda_free(work), cuda_free(w), cuda_free(dpiv), cuda_free(info);
  return s;
}

/* ------------------------------------------------------------ qr and svd */

/* Whether entry b's a[b, 0, 0] has a real part of -0.0 (a of (B, n, m), input 0). */
static const AluExp *negative_zero_corner(jx_dtype d, const AluExp *b, int64_t nm) {
  const AluExp *x = alu_global(0, d, alu_binary(ALU_MUL, b, ic(nm)));
  if (dtype_is_complex(d)) x = alu_real(x);
  const AluExp *zero = alu_const_float(x->dtype, 0.0);
  return alu_binary(ALU_AND, alu_binary(ALU_CMPEQ, x, zero),
                    alu_binary(ALU_CMPLT, alu_binary(ALU_DIV, alu_const_float(x->dtype, 1.0), x), zero));
}

/* qr: a column-major copy w (one index kernel for the batch), geqrf on each entry; r is
 * w's upper triangle (kq x m), q is orgqr/ungqr's n x kq result from w's reflectors
 * (the first m of kq columns), both read back row-major by index kernels. Empty
 * matrices stay on the host path (cuda_solver_has).
 * LAPACK's first reflector takes beta = -sign(alpha) |x| with the sign of a[0, 0] -0.0
 * negative (gfortran's SIGN), cuSOLVER's positive: where a[0, 0] is -0.0, row 0 of a is
 * negated first (D a, D = diag(-1, 1, ..)), whose factors both libraries agree on, and
 * a = (D q' D)(D r') gives LAPACK's q and r -- what JAX's goldens hold. */
static jx_status qr(const Routine *r, void *const *in, void *const *out, int t, size_t isz) {
  int64_t n = r->n, m = r->m, B = r->outer, k = n < m ? n : m, nm = n * m;
  int64_t kq = r->flags & LINALG_FULL_MATRICES ? n : k, nq = n * kq;
  jx_dtype d = r->dtype;
  void *w = cuda_alloc((size_t)(B * nm) * isz), *qc = cuda_alloc((size_t)(B * nq) * isz);
  void *tau = cuda_alloc((size_t)(B * k) * isz);
  int32_t *info = cuda_alloc((size_t)B * 4);
  jx_status s = w && qc && tau && info ? JX_OK : jx_last_status();
  if (s == JX_OK) { /* w[b, j, i] = (D a)[b, i, j] */
    Bij x = bij(B, m, n);
    const AluExp *e = alu_global(0, d, iaxpy(x.b, nm, iaxpy(x.j, m, x.i)));
    const AluExp *flip = alu_binary(ALU_AND, negative_zero_corner(d, x.b, nm), alu_binary(ALU_CMPEQ, x.j, ic(0)));
    s = run_kernel(alu_where(flip, alu_unary(ALU_NEG, e), e), 1, &d, d, B * nm, in, w);
  }
  int lw1 = 0, lw2 = 0, st = 0;
  if (s == JX_OK && (st = S.geqrf_size[t](S.h, (int)n, (int)m, w, (int)n, &lw1)) != 0) s = lib_fail(r, "geqrf_bufferSize", st);
  if (s == JX_OK && (st = S.orgqr_size[t](S.h, (int)n, (int)kq, (int)k, qc, (int)n, tau, &lw2)) != 0)
    s = lib_fail(r, "orgqr_bufferSize", st);
  int lwork = lw1 > lw2 ? lw1 : lw2;
  void *work = s == JX_OK ? cuda_alloc((size_t)(lwork > 0 ? lwork : 1) * isz) : NULL;
  if (s == JX_OK && !work) s = jx_last_status();
  for (int64_t b = 0; s == JX_OK && b < B; b++)
    if ((st = S.geqrf[t](S.h, (int)n, (int)m, at(w, b * nm, isz), (int)n, at(tau, b * k, isz), work, lwork, info + b)) != 0)
      s = lib_fail(r, "geqrf", st);
  if (s == JX_OK) { /* r[b, i, j] = i <= j ? (D w^T)[b, i, j] : 0 */
    Bij x = bij(B, kq, m);
    const AluExp *v = alu_global(1, d, iaxpy(x.b, nm, iaxpy(x.j, n, x.i)));
    const AluExp *flip = alu_binary(ALU_AND, negative_zero_corner(d, x.b, nm), alu_binary(ALU_CMPEQ, x.i, ic(0)));
    const AluExp *e = alu_where(alu_binary(ALU_CMPLT, x.j, x.i), dconst(d, 0, 0), alu_where(flip, alu_unary(ALU_NEG, v), v));
    s = run_kernel(e, 2, (jx_dtype[]){d, d}, d, B * kq * m, (void *const[]){in[0], w}, out[1]);
  }
  if (s == JX_OK) { /* qc[b, j, i] = j < m ? w[b, j, i] : 0 (column-major n x kq; index clamped) */
    Bij x = bij(B, kq, n);
    const AluExp *jc = alu_binary(ALU_MIN, x.i, ic(m - 1));
    const AluExp *e = alu_where(alu_binary(ALU_CMPLT, x.i, ic(m)), alu_global(0, d, iaxpy(x.b, nm, iaxpy(jc, n, x.j))),
                                dconst(d, 0, 0));
    s = run_kernel(e, 1, &d, d, B * nq, (void *const[]){w}, qc);
  }
  for (int64_t b = 0; s == JX_OK && b < B; b++)
    if ((st = S.orgqr[t](S.h, (int)n, (int)kq, (int)k, at(qc, b * nq, isz), (int)n, at(tau, b * k, isz), work, lwork,
                         info + b)) != 0)
      s = lib_fail(r, t < 2 ? "orgqr" : "ungqr", st);
  if (s == JX_OK) { /* q[b, i, j] = (D qc^T D)[b, i, j] */
    Bij x = bij(B, n, kq);
    const AluExp *e = alu_global(1, d, iaxpy(x.b, nq, iaxpy(x.j, n, x.i)));
    const AluExp *one_edge = alu_binary(ALU_CMPNE, alu_binary(ALU_CMPEQ, x.i, ic(0)), alu_binary(ALU_CMPEQ, x.j, ic(0)));
    const AluExp *flip = alu_binary(ALU_AND, negative_zero_corner(d, x.b, nm), one_edge);
    s = run_kernel(alu_where(flip, alu_unary(ALU_NEG, e), e), 2, (jx_dtype[]){d, d}, d, B * nq,
                   (void *const[]){in[0], qc}, out[0]);
  }
  cuda_free(work), cuda_free(w), cuda_free(qc), cuda_free(tau), cuda_free(info);
  return s;
}

/* Whether batch entry b failed: info (input 1) or the NaN flag (input 2) nonzero. */
static const AluExp *bad_entry(const AluExp *b) {
  const AluExp *z = alu_const_int(JX_INT32, 0);
  return alu_binary(ALU_OR, alu_binary(ALU_CMPNE, alu_global(1, JX_INT32, b), z),
                    alu_binary(ALU_CMPNE, alu_global(2, JX_INT32, b), z));
}

/* flag[b] = 1 where entry b of a (B, len) holds a NaN (in either part), else 0: one
 * reduction kernel (max over each entry). */
static jx_status nan_flags(jx_dtype d, void *a, int64_t B, int64_t len, int32_t *flag) {
  const AluExp *x = alu_global(0, d, iaxpy(alu_special("gidx", B), len, alu_special("ridx", len)));
  const AluExp *nan = dtype_is_complex(d) ? alu_binary(ALU_OR, alu_unary(ALU_ISNAN, alu_real(x)), alu_unary(ALU_ISNAN, alu_imag(x)))
                                          : alu_unary(ALU_ISNAN, x);
  if (!nan) return jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  Kernel k = {.nargs = 1, .size = B, .dtype = JX_INT32, .exp = alu_cast(nan, JX_INT32), .has_reduction = true};
  k.arg_dtypes[0] = d;
  k.reduction = (Reduction){.op = ALU_MAX, .dtype = JX_INT32, .identity = alu_reduce_identity(ALU_MAX, JX_INT32), .size = len};
  void *exe = NULL;
  jx_status s = cuda_prepare(&k, &exe);
  return s == JX_OK ? cuda_dispatch(exe, &k, (void *const[]){a}, (void *const[]){flag}) : s;
}

/* svd: gesvdj of the column-major view of each entry (a^T, m x n): a^T = U' S V'^H, so
 * a = conj(V') S U'^T -- u = conj(V') read row-major (an index kernel), vt = U'^T, which
 * is U' itself read row-major. Matrices of at most 32 x 32 go through one
 * gesvdjBatched call for the whole batch (full U', V'), a batch of one too, so a vmapped
 * svd and a loop over its entries get the same signs; larger ones one gesvdj each
 * (economy U', V' unless full_matrices). The singular values come sorted (descending);
 * an entry whose info is nonzero (no convergence) or that holds a NaN (gesvdjBatched
 * returns finite values for some of those) is NaN in s, u and vt, as LAPACK's on the
 * host, selected by the index kernels, so nothing waits for the host. */
static jx_status svd(const Routine *r, void *const *in, void *const *out, int t, size_t isz) {
  int64_t n = r->n, m = r->m, B = r->outer, k = n < m ? n : m, nm = n * m;
  bool full = r->flags & LINALG_FULL_MATRICES, uv = r->flags & LINALG_COMPUTE_UV;
  bool batched = n <= 32 && m <= 32; /* one entry too: vmap and a loop agree */
  int64_t ku = full ? n : k, kv = full ? m : k;
  int64_t ucols = batched || full ? m : k, vcols = batched || full ? n : k; /* of U' (m x .), V' (n x .) */
  jx_dtype d = r->dtype, rd = dtype_real_part(d);
  size_t rsz = jx_dtype_itemsize(rd);
  void *w = cuda_alloc((size_t)(B * nm) * isz), *sv = cuda_alloc((size_t)(B * k) * rsz);
  void *U = cuda_alloc((size_t)(B * m * ucols) * isz), *V = cuda_alloc((size_t)(B * n * vcols) * isz);
  int32_t *info = cuda_alloc((size_t)B * 4), *flag = cuda_alloc((size_t)B * 4);
  jx_status s = w && sv && U && V && info && flag ? copy_d2d(w, in[0], (size_t)(B * nm) * isz) : jx_last_status();
  if (s == JX_OK) s = nan_flags(d, in[0], B, nm, flag);
  GesvdjInfo params = NULL;
  int st = 0, lwork = 0, jobz = uv ? EIG_VECTOR : 0, econ = !full;
  if (s == JX_OK && ((st = S.gesvdj_create(&params)) != 0 || (st = S.gesvdj_sort(params, 1)) != 0))
    s = lib_fail(r, "gesvdj parameters", st);
  if (s == JX_OK) {
    st = batched ? S.gesvdjb_size[t](S.h, jobz, (int)m, (int)n, w, (int)m, sv, U, (int)m, V, (int)n, &lwork, params, (int)B)
                 : S.gesvdj_size[t](S.h, jobz, econ, (int)m, (int)n, w, (int)m, sv, U, (int)m, V, (int)n, &lwork, params);
    if (st) s = lib_fail(r, "gesvdj_bufferSize", st);
  }
  void *work = s == JX_OK ? cuda_alloc((size_t)(lwork > 0 ? lwork : 1) * isz) : NULL;
  if (s == JX_OK && !work) s = jx_last_status();
  if (s == JX_OK && batched &&
      (st = S.gesvdjb[t](S.h, jobz, (int)m, (int)n, w, (int)m, sv, U, (int)m, V, (int)n, work, lwork, info, params, (int)B)))
    s = lib_fail(r, "gesvdjBatched", st);
  for (int64_t b = 0; s == JX_OK && !batched && b < B; b++)
    if ((st = S.gesvdj[t](S.h, jobz, econ, (int)m, (int)n, at(w, b * nm, isz), (int)m, at(sv, b * k, rsz),
                          at(U, b * m * ucols, isz), (int)m, at(V, b * n * vcols, isz), (int)n, work, lwork, info + b,
                          params)) != 0)
      s = lib_fail(r, "gesvdj", st);
  const jx_dtype dts[3] = {d, JX_INT32, JX_INT32}, rdts[3] = {rd, JX_INT32, JX_INT32};
  if (s == JX_OK) { /* s[b, i] = bad(b) ? NaN : S[b, i] */
    const AluExp *g = alu_special("gidx", B * k);
    const AluExp *e = alu_where(bad_entry(idiv(g, k)), alu_const_float(rd, NAN), alu_global(0, rd, g));
    s = run_kernel(e, 3, rdts, rd, B * k, (void *const[]){sv, info, flag}, out[0]);
  }
  if (s == JX_OK && uv) { /* u[b, i, j] = conj(V'[b, j, i]) */
    Bij x = bij(B, n, ku);
    const AluExp *v = conj_(alu_global(0, d, iaxpy(x.b, n * vcols, iaxpy(x.j, n, x.i))));
    s = run_kernel(alu_where(bad_entry(x.b), dconst(d, NAN, NAN), v), 3, dts, d, B * n * ku,
                   (void *const[]){V, info, flag}, out[1]);
  }
  if (s == JX_OK && uv) { /* vt[b, i, j] = U'[b, i, j] (row i of vt is column i of U') */
    Bij x = bij(B, kv, m);
    const AluExp *v = alu_global(0, d, iaxpy(x.b, m * ucols, iaxpy(x.i, m, x.j)));
    s = run_kernel(alu_where(bad_entry(x.b), dconst(d, NAN, NAN), v), 3, dts, d, B * kv * m,
                   (void *const[]){U, info, flag}, out[2]);
  }
  if (params) S.gesvdj_destroy(params);
  cuda_free(work), cuda_free(w), cuda_free(sv), cuda_free(U), cuda_free(V), cuda_free(info), cuda_free(flag);
  return s;
}

bool cuda_solver_has(const Routine *r) {
  bool typed = r->dtype == JX_FLOAT32 || r->dtype == JX_FLOAT64 || r->dtype == JX_COMPLEX64 || r->dtype == JX_COMPLEX128;
  if (r->op == ROUTINE_QR || r->op == ROUTINE_SVD) /* empty ones: the host path's identities */
    return typed && r->n > 0 && r->m > 0 && r->outer > 0;
  return typed &&
         (r->op == ROUTINE_CHOLESKY || r->op == ROUTINE_TRIANGULAR_SOLVE || r->op == ROUTINE_EIGH || r->op == ROUTINE_LU);
}

jx_status cuda_solver(const Routine *r, void *const *inputs, void *const *outs) {
  if (r->n > INT32_MAX / 2 || r->m > INT32_MAX / 2 || r->n * r->m > INT32_MAX) {
    error_set(JX_ERR_UNSUPPORTED, "%s: a %lld x %lld matrix exceeds cuSOLVER's 32-bit sizes", routine_name(r->op),
              (long long)r->n, (long long)r->m);
    return JX_ERR_UNSUPPORTED;
  }
  pthread_once(&once, load);
  if (!S.h) {
    error_set(JX_ERR_DEVICE, "%s", S.error);
    return JX_ERR_DEVICE;
  }
  cuda_make_current();
  int t = r->dtype == JX_FLOAT32 ? 0 : r->dtype == JX_FLOAT64 ? 1 : r->dtype == JX_COMPLEX64 ? 2 : 3;
  size_t isz = jx_dtype_itemsize(r->dtype);
  switch (r->op) {
  case ROUTINE_QR: return qr(r, inputs, outs, t, isz);
  case ROUTINE_SVD: return svd(r, inputs, outs, t, isz);
  case ROUTINE_CHOLESKY: return cholesky(r, inputs, outs, t, isz);
  case ROUTINE_TRIANGULAR_SOLVE: return triangular_solve(r, inputs, outs, t, isz);
  case ROUTINE_EIGH: return eigh(r, inputs, outs, t, isz);
  case ROUTINE_LU: return lu(r, inputs, outs, t, isz);
  default: break;
  }
  error_set(JX_ERR_INTERNAL, "cuda: %s has no cuSOLVER version", routine_name(r->op));
  return JX_ERR_INTERNAL;
}
