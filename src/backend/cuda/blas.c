/* blas.c -- matrix products on the GPU through cuBLAS (dlopen'ed on the first product):
 * one cublasGemmStridedBatchedEx call per GEMM routine, operands row-major (outer, n, m)
 * @ (outer, m, inner), transposed operands passed as flags, never copied. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "core/config.h"
#include "core/error.h"

/* cuBLAS / library_types.h values used here. */
enum { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_C_32F = 4, CUDA_C_64F = 5, CUDA_R_16BF = 14 };
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_64F = 70, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };
#define CUBLAS_GEMM_DEFAULT (-1)

typedef struct cublasContext *cublasHandle_t;
typedef int (*GemmFn)(cublasHandle_t, int, int, int, int, int, const void *, const void *, int,
                      int, long long, const void *, int, int, long long, const void *, void *, int,
                      int, long long, int, int, int);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cublasHandle_t handle;
/* a second handle for graph recordings (graph.c: one thread records at a time), on the
 * capture stream, so the shared handle's stream never changes under another thread */
static cublasHandle_t capture_handle;
static int (*set_stream_fn)(cublasHandle_t, CUstream);
static GemmFn gemm;
static char load_error[512];
static void *workspace;
static size_t workspace_bytes;

/* cuBLASLt, for float16/bfloat16: cublasGemmEx's heuristics picked pre-Hopper kernels
 * for them (345 TFLOP/s on an H200 at 8192^3 bf16, half of PyTorch's cublasLt). */
typedef struct LtOpaque *LtHandle, *LtDesc, *LtLayout, *LtPref;
typedef struct LtAlgo { uint64_t data[8]; } LtAlgo;
typedef struct LtResult {
  LtAlgo algo;
  size_t workspace;
  int state;
  float waves;
  int reserved[4];
} LtResult;
static struct {
  int (*create)(LtHandle *);
  int (*desc_create)(LtDesc *, int, int);
  int (*desc_set)(LtDesc, int, const void *, size_t);
  int (*desc_destroy)(LtDesc);
  int (*layout_create)(LtLayout *, int, uint64_t, uint64_t, int64_t);
  int (*layout_set)(LtLayout, int, const void *, size_t);
  int (*layout_destroy)(LtLayout);
  int (*pref_create)(LtPref *);
  int (*pref_set)(LtPref, int, const void *, size_t);
  int (*pref_destroy)(LtPref);
  int (*heuristic)(LtHandle, LtDesc, LtLayout, LtLayout, LtLayout, LtLayout, LtPref, int, LtResult *, int *);
  int (*matmul)(LtHandle, LtDesc, const void *, const void *, LtLayout, const void *, LtLayout, const void *,
                const void *, LtLayout, void *, LtLayout, const LtAlgo *, void *, size_t, CUstream);
  LtHandle h;
} lt;
enum { LT_TRANSA = 3, LT_TRANSB = 4, LT_BATCH = 5, LT_STRIDE = 6, LT_PREF_WORKSPACE = 1 };

/* A planned product: descriptors and the heuristic's algorithm, per shape (a training
 * loop repeats a handful of shapes). */
typedef struct LtPlan {
  int64_t m, n, k, batch;
  int type, compute, ta, tb;
  LtDesc desc;
  LtLayout a, b, c;
  LtAlgo algo;
  bool ok;
} LtPlan;
#define LT_PLANS 64
static LtPlan plans[LT_PLANS];
static int nplans;
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
/* One product is queued at a time: a cuBLAS(Lt) call may queue several kernels that
 * share the one workspace (split-K partials, then their reduction), and two threads'
 * calls interleaved on the stream would mix their partials. */
static pthread_mutex_t enqueue_lock = PTHREAD_MUTEX_INITIALIZER;

static void load_lt(void) {
  char why[400];
  const char *names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", NULL};
  void *h = cuda_dlopen_any(names, why, sizeof why);
  if (!h) return;
#define L(field, sym) lt.field = (__typeof__(lt.field))dlsym(h, sym)
  L(create, "cublasLtCreate"), L(desc_create, "cublasLtMatmulDescCreate");
  L(desc_set, "cublasLtMatmulDescSetAttribute"), L(desc_destroy, "cublasLtMatmulDescDestroy");
  L(layout_create, "cublasLtMatrixLayoutCreate"), L(layout_set, "cublasLtMatrixLayoutSetAttribute");
  L(layout_destroy, "cublasLtMatrixLayoutDestroy"), L(pref_create, "cublasLtMatmulPreferenceCreate");
  L(pref_set, "cublasLtMatmulPreferenceSetAttribute"), L(pref_destroy, "cublasLtMatmulPreferenceDestroy");
  L(heuristic, "cublasLtMatmulAlgoGetHeuristic"), L(matmul, "cublasLtMatmul");
#undef L
  if (!lt.create || !lt.desc_create || !lt.desc_set || !lt.desc_destroy || !lt.layout_create || !lt.layout_set ||
      !lt.layout_destroy || !lt.pref_create ||
      !lt.pref_set || !lt.pref_destroy || !lt.heuristic || !lt.matmul || lt.create(&lt.h) != 0)
    lt.h = NULL;
}

static LtLayout lt_layout(int type, uint64_t rows, uint64_t cols, int64_t ld, int32_t batch, int64_t stride) {
  LtLayout l = NULL;
  if (lt.layout_create(&l, type, rows, cols, ld) != 0) return NULL;
  if (batch > 1) {
    lt.layout_set(l, LT_BATCH, &batch, sizeof batch);
    lt.layout_set(l, LT_STRIDE, &stride, sizeof stride);
  }
  return l;
}

/* The plan for column-major C (m, n) = op(A) (m, k) @ op(B) (k, n); NULL if cuBLASLt
 * has no algorithm for it (the caller uses cublasGemmEx). */
static const LtPlan *lt_plan(int type, int compute, int ta, int tb, int64_t m, int64_t n, int64_t k, int64_t batch) {
  if (!lt.h) return NULL;
  pthread_mutex_lock(&plan_lock);
  for (int i = 0; i < nplans; i++) {
    LtPlan *p = &plans[i];
    if (p->m == m && p->n == n && p->k == k && p->batch == batch && p->type == type && p->compute == compute &&
        p->ta == ta && p->tb == tb) {
      pthread_mutex_unlock(&plan_lock);
      return p->ok ? p : NULL;
    }
  }
  LtPlan *p = &plans[nplans < LT_PLANS ? nplans++ : (nplans = 1, 0)];
  if (p->desc) lt.desc_destroy(p->desc); /* a replaced plan's descriptors */
  if (p->a) lt.layout_destroy(p->a);
  if (p->b) lt.layout_destroy(p->b);
  if (p->c) lt.layout_destroy(p->c);
  *p = (LtPlan){.m = m, .n = n, .k = k, .batch = batch, .type = type, .compute = compute, .ta = ta, .tb = tb};
  int32_t b32 = (int32_t)batch;
  if (lt.desc_create(&p->desc, compute, CUDA_R_32F) == 0) {
    lt.desc_set(p->desc, LT_TRANSA, &ta, sizeof ta);
    lt.desc_set(p->desc, LT_TRANSB, &tb, sizeof tb);
    p->a = lt_layout(type, ta ? k : m, ta ? m : k, ta ? k : m, b32, m * k);
    p->b = lt_layout(type, tb ? n : k, tb ? k : n, tb ? n : k, b32, k * n);
    p->c = lt_layout(type, m, n, m, b32, m * n);
    LtPref pref = NULL;
    uint64_t ws = workspace_bytes;
    if (p->a && p->b && p->c && lt.pref_create(&pref) == 0) {
      lt.pref_set(pref, LT_PREF_WORKSPACE, &ws, sizeof ws);
      LtResult r;
      int nres = 0;
      if (lt.heuristic(lt.h, p->desc, p->a, p->b, p->c, p->c, pref, 1, &r, &nres) == 0 && nres > 0) {
        p->algo = r.algo;
        p->ok = true;
      }
      lt.pref_destroy(pref);
    }
  }
  pthread_mutex_unlock(&plan_lock);
  return p->ok ? p : NULL;
}

/* Float32 products of fewer multiply-adds than this go through cuBLASLt's planned call
 * (2^30; JAXC_CUDA_LT_MAX_WORK overrides it, for measuring). */
static double lt_max_work(void) {
  static double v = 0;
  if (v == 0) {
    const char *e = getenv("JAXC_CUDA_LT_MAX_WORK");
    double w = e ? atof(e) : 0;
    v = w > 0 ? w : (double)(1 << 30);
  }
  return v;
}

static void load_once(void) {
  char why[400];
  const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
  void *h = cuda_dlopen_any(names, why, sizeof why);
  if (!h) {
    snprintf(load_error, sizeof load_error, "cuda: matrix products need cuBLAS, but "
             "libcublas.so.13 (or .12) was not found (%s)", why);
    return;
  }
  int (*create)(cublasHandle_t *) = (int (*)(cublasHandle_t *))dlsym(h, "cublasCreate_v2");
  int (*set_stream)(cublasHandle_t, CUstream) = (int (*)(cublasHandle_t, CUstream))dlsym(h, "cublasSetStream_v2");
  gemm = (GemmFn)dlsym(h, "cublasGemmStridedBatchedEx");
  int st = -1;
  if (!create || !set_stream || !gemm) {
    snprintf(load_error, sizeof load_error, "cuda: libcublas lacks cublasCreate_v2, "
             "cublasSetStream_v2 or cublasGemmStridedBatchedEx");
    gemm = NULL;
    return;
  }
  cuda_make_current();
  /* a workspace, as PyTorch gives cuBLAS (32 MiB on Hopper): without one, cuBLAS leaves
   * out the kernels that need it and bfloat16 products ran at half speed */
  int (*set_ws)(cublasHandle_t, void *, size_t) = (int (*)(cublasHandle_t, void *, size_t))dlsym(h, "cublasSetWorkspace_v2");
  size_t ws_bytes = (size_t)32 << 20;
  void *ws = cuda_alloc(ws_bytes);
  if (!ws) jx_clear_error(); /* run without one */
  workspace = ws, workspace_bytes = ws ? ws_bytes : 0;
  if ((st = create(&handle)) != 0 || (st = set_stream(handle, cuda_device()->stream)) != 0 ||
      (ws && (st = set_ws(handle, ws, ws_bytes)) != 0)) {
    snprintf(load_error, sizeof load_error, "cuda: cublasCreate failed (cublasStatus %d)", st);
    gemm = NULL;
  }
  if (gemm && ((st = create(&capture_handle)) != 0 || (ws && (st = set_ws(capture_handle, ws, ws_bytes)) != 0)))
    capture_handle = NULL; /* then products are not recorded (cuda_gemm declines) */
  set_stream_fn = set_stream;
  load_lt();
}

jx_status cuda_gemm(const Routine *r, void *const *inputs, void *out) {
  int64_t M = r->n, K = r->m, N = r->inner, B = r->outer;
  if (M == 0 || N == 0 || B == 0) return JX_OK;
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || B > INT32_MAX) {
    error_set(JX_ERR_UNSUPPORTED, "cuda: matrix product of %lld x %lld x %lld (batch %lld) "
              "exceeds cuBLAS's 32-bit sizes", (long long)M, (long long)K, (long long)N, (long long)B);
    return JX_ERR_UNSUPPORTED;
  }
  if (K == 0) { /* an empty sum: zeros */
    const CudaDevice *d = cuda_device();
    return cuda_check(d->cu.cuMemsetD8Async((CUdeviceptr)(uintptr_t)out, 0, routine_out_nbytes(r, 0), cuda_stream()),
                      "cuMemsetD8Async");
  }
  pthread_once(&once, load_once);
  if (!gemm) {
    error_set(JX_ERR_DEVICE, "%s", load_error);
    return JX_ERR_DEVICE;
  }
  cuda_make_current();
  int type, compute;
  switch (r->dtype) {
  case JX_FLOAT32:
    type = CUDA_R_32F;
    compute = config_matmul_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    break;
  case JX_FLOAT64: type = CUDA_R_64F, compute = CUBLAS_COMPUTE_64F; break;
  case JX_BFLOAT16: type = CUDA_R_16BF, compute = CUBLAS_COMPUTE_32F; break;
  case JX_FLOAT16: type = CUDA_R_16F, compute = CUBLAS_COMPUTE_32F; break;
  case JX_COMPLEX64: type = CUDA_C_32F, compute = CUBLAS_COMPUTE_32F; break; /* cgemm */
  case JX_COMPLEX128: type = CUDA_C_64F, compute = CUBLAS_COMPUTE_64F; break;
  default:
    error_set(JX_ERR_UNSUPPORTED, "cuda: no matrix product for dtype %s", jx_dtype_name(r->dtype));
    return JX_ERR_UNSUPPORTED;
  }
  /* scalars of the compute type; complex ones (re, im) */
  float alpha32[2] = {1.0f, 0.0f}, beta32[2] = {0.0f, 0.0f};
  double alpha64[2] = {1.0, 0.0}, beta64[2] = {0.0, 0.0};
  const void *alpha = compute == CUBLAS_COMPUTE_64F ? (const void *)alpha64 : alpha32;
  const void *beta = compute == CUBLAS_COMPUTE_64F ? (const void *)beta64 : beta32;
  /* Row-major C (M, N) is column-major C^T (N, M) = op(b)^T-as-stored @ op(a): cuBLAS
   * sees b first, with b's stored layout giving its leading dimension. */
  bool ta = r->trans_a, tb = r->trans_b;
  /* cuBLASLt with a plan cached per shape: half precision always (cublasGemmEx picked
   * pre-Hopper kernels for them), float32 for small products, where the planned call
   * costs less host time than cublasGemmStridedBatchedEx (a training step's GEMMs) */
  bool small = (double)M * (double)N * (double)K * (double)B < lt_max_work();
  if (type == CUDA_R_16BF || type == CUDA_R_16F || (type == CUDA_R_32F && small)) {
    const LtPlan *p = lt_plan(type, compute, tb, ta, N, M, K, B);
    if (p) {
      pthread_mutex_lock(&enqueue_lock);
      int st = lt.matmul(lt.h, p->desc, alpha, inputs[1], p->a, inputs[0], p->b, beta, out, p->c, out, p->c,
                         &p->algo, workspace, workspace_bytes, cuda_stream());
      pthread_mutex_unlock(&enqueue_lock);
      if (st == 0) return JX_OK;
    }
  }
  cublasHandle_t h = handle;
  if (cuda_stream() != cuda_device()->stream) { /* recording a graph (graph.c) */
    if (!capture_handle || set_stream_fn(capture_handle, cuda_stream()) != 0) {
      error_set(JX_ERR_DEVICE, "cuda: no cuBLAS handle to record a matrix product in a graph");
      return JX_ERR_DEVICE;
    }
    h = capture_handle;
  }
  pthread_mutex_lock(&enqueue_lock);
  int st = gemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M,
                (int)K, alpha, inputs[1], type, (int)(tb ? K : N), (long long)(K * N), inputs[0], type,
                (int)(ta ? M : K), (long long)(M * K), beta, out, type, (int)N, (long long)(M * N), (int)B,
                compute, CUBLAS_GEMM_DEFAULT);
  pthread_mutex_unlock(&enqueue_lock);
  if (st != 0) {
    error_set(JX_ERR_DEVICE, "cuda: cublasGemmStridedBatchedEx failed (cublasStatus %d) for "
              "%s (%lld, %lld) @ (%lld, %lld), batch %lld", st, jx_dtype_name(r->dtype),
              (long long)M, (long long)K, (long long)K, (long long)N, (long long)B);
    return JX_ERR_DEVICE;
  }
  return JX_OK;
}
