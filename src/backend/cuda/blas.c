/* blas.c -- matrix products on the GPU through cuBLAS and cuBLASLt (dlopen'ed on the
 * first product): one cuBLASLt matmul (a plan per shape, its algorithm chosen by timing)
 * or cublasGemmStridedBatchedEx call per GEMM routine, operands row-major (outer, n, m)
 * @ (outer, m, inner), transposed operands passed as flags, never copied. While a graph
 * is recorded, each of its branches has a workspace of its own (graph.c), none of them
 * the one products queued directly on the device's stream use. */
#include <dlfcn.h>
#include <float.h>
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
static int (*set_ws_fn)(cublasHandle_t, void *, size_t);
/* Workspaces of graph recordings, one a branch (graph.c: GEMMs of parallel branches run
 * at once, and a split-K product's partials in a shared workspace would mix), each
 * workspace_bytes, made on a branch's first product. Never `workspace`, the device
 * stream's: enqueue_lock keeps products from interleaving, not graph launches, and a
 * replay queued by another thread between the kernels of a product queued directly (its
 * split-K partials, then their reduction) would overwrite those partials with its own
 * product's (cuda_gemm_workspace_slot). Only the recording thread touches them (graph.c
 * records one graph at a time). */
static void *branch_workspace[CUDA_GRAPH_BRANCHES];

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
  int (*layout_create)(LtLayout *, int, uint64_t, uint64_t, int64_t);
  int (*layout_set)(LtLayout, int, const void *, size_t);
  int (*pref_create)(LtPref *);
  int (*pref_set)(LtPref, int, const void *, size_t);
  int (*pref_destroy)(LtPref);
  int (*heuristic)(LtHandle, LtDesc, LtLayout, LtLayout, LtLayout, LtLayout, LtPref, int, LtResult *, int *);
  int (*matmul)(LtHandle, LtDesc, const void *, const void *, LtLayout, const void *, LtLayout, const void *,
                const void *, LtLayout, void *, LtLayout, const LtAlgo *, void *, size_t, CUstream);
  LtHandle h;
} lt;
enum { LT_TRANSA = 3, LT_TRANSB = 4, LT_BATCH = 5, LT_STRIDE = 6, LT_PREF_WORKSPACE = 1 };

/* A planned product: descriptors and its algorithm, per shape (a training loop repeats a
 * handful of shapes). The algorithm is chosen by timing (gemm_tune), as XLA autotunes
 * its GEMMs: cuBLASLt's heuristic offers several, whose speed differs by up to a third on
 * the MLP's products, and cublasGemmEx's own choice is timed beside them (ex). */
typedef struct LtPlan {
  int64_t m, n, k, batch;
  int type, compute, ta, tb;
  LtDesc desc;
  LtLayout a, b, c;
  LtAlgo algo;
  bool ok;    /* algo is usable */
  bool ex;    /* timing chose cublasGemmEx over every cuBLASLt algorithm */
  bool tuned; /* timing was tried (not again); until then the heuristic's first, as for a
                 plan made while recording a graph */
} LtPlan;
/* Plans live as long as the process (a pointer handed out stays valid while its product
 * is queued by another thread); past LT_PLANS_MAX shapes products take cublasGemmEx. */
#define LT_PLANS_MAX 4096
static LtPlan **plans;
static int nplans, plans_cap;
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
/* One product is queued at a time: a cuBLAS(Lt) call may queue several kernels that
 * share the one workspace (split-K partials, then their reduction), and two threads'
 * calls interleaved on the stream would mix their partials. (A graph replay may still
 * land between them: recorded products never use that workspace, branch_workspace.) */
static pthread_mutex_t enqueue_lock = PTHREAD_MUTEX_INITIALIZER;

/* One product's operands, as cuda_gemm received them: column-major C (m, n) = op(A) @
 * op(B) with A = inputs[1], B = inputs[0] (the row-major product's C^T). */
typedef struct GemmCall {
  int type, compute;
  bool ta, tb; /* the row-major operands' transposes */
  int64_t M, N, K, B;
  const void *alpha, *beta, *a, *b;
  const void *c; /* beta's operand: out itself, or the routine's third input (axpby) */
  void *out;
} GemmCall;

static int launch_lt(const GemmCall *c, const LtPlan *p, const LtAlgo *algo, void *ws) {
  return lt.matmul(lt.h, p->desc, c->alpha, c->b, p->a, c->a, p->b, c->beta, c->c, p->c, c->out, p->c, algo,
                   ws, ws ? workspace_bytes : 0, cuda_stream());
}

int cuda_gemm_workspace_slot(bool recording, int branch) {
  if (!recording) return -1;
  return branch > 0 && branch < CUDA_GRAPH_BRANCHES ? branch : 0;
}

/* The workspace of the stream the calling thread issues on: the device stream's, or
 * while it records a graph its branch's (cuda_gemm_workspace_slot); NULL where none could
 * be made (products then run without one). */
static void *gemm_workspace(void) {
  int b = cuda_gemm_workspace_slot(cuda_graph_recording(), cuda_graph_branch());
  if (b < 0 || !workspace) return workspace;
  if (!branch_workspace[b] && !(branch_workspace[b] = cuda_alloc(workspace_bytes))) jx_clear_error();
  return branch_workspace[b];
}

static int launch_ex(const GemmCall *c, cublasHandle_t h) {
  return gemm(h, c->tb ? CUBLAS_OP_T : CUBLAS_OP_N, c->ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)c->N, (int)c->M,
              (int)c->K, c->alpha, c->b, c->type, (int)(c->tb ? c->K : c->N), (long long)(c->K * c->N), c->a,
              c->type, (int)(c->ta ? c->M : c->K), (long long)(c->M * c->K), c->beta, c->out, c->type, (int)c->N,
              (long long)(c->M * c->N), (int)c->B, c->compute, CUBLAS_GEMM_DEFAULT);
}

/* JAXC_CUDA_GEMM_TUNE=0: the heuristic's first algorithm, untimed (reproducible sums
 * from run to run, where timing may choose differently); read once */
static bool gemm_tune_on(void) {
  static int v = -1;
  return config_env_on(&v, "JAXC_CUDA_GEMM_TUNE");
}

#define TUNE_CANDIDATES 8
#define TUNE_REPS 3
#define TUNE_ROUNDS 3

/* Microseconds a launch of one candidate (algo, or cublasGemmEx where NULL) takes on the
 * device's stream: TUNE_REPS back to back between two events, so the host's time to
 * queue them is hidden; < 0 if it fails. */
static float time_candidate(const GemmCall *c, const LtPlan *p, const LtAlgo *algo, CUevent e0, CUevent e1) {
  const CudaDevice *d = cuda_device();
  CUstream s = cuda_stream();
#define LAUNCH() (algo ? launch_lt(c, p, algo, workspace) : launch_ex(c, handle))
  if (d->cu.cuEventRecord(e0, s) != 0) return -1;
  for (int i = 0; i < TUNE_REPS; i++)
    if (LAUNCH() != 0) return -1;
#undef LAUNCH
  float ms = 0;
  if (d->cu.cuEventRecord(e1, s) != 0 || d->cu.cuEventSynchronize(e1) != 0 || d->cu.cuEventElapsedTime(&ms, e0, e1) != 0)
    return -1;
  return ms * 1e3f / TUNE_REPS;
}

/* Chooses p's algorithm by timing: each of the heuristic's first TUNE_CANDIDATES that
 * fits the workspace, and cublasGemmEx where with_ex, on the call's own buffers (the
 * output is written again by the call that follows). Each is warmed up once (which loads
 * its kernels), then timed in TUNE_ROUNDS rounds that take the candidates in turn, its
 * best round kept: the clocks of a GPU at its power limit fall over the first hundreds
 * of milliseconds of an 8192^3 TF32 product (3 ms a launch), and candidates timed one
 * after another would favour the first (the TF32 product read 0.92x to 1.00x PyTorch's,
 * both cuBLAS, from run to run on the H100s). Under enqueue_lock. The heuristic's first
 * stays where timing cannot run. */
static void gemm_tune(LtPlan *p, const GemmCall *c, const LtResult *res, int nres, bool with_ex) {
  const CudaDevice *d = cuda_device();
  CUevent e0 = NULL, e1 = NULL;
  p->tuned = true;
  if (d->cu.cuEventCreate(&e0, 0) != 0 || d->cu.cuEventCreate(&e1, 0) != 0) {
    if (e0) d->cu.cuEventDestroy(e0);
    return;
  }
  /* candidate i < nres: res[i]; i == nres: cublasGemmEx */
  float us[TUNE_CANDIDATES + 1];
  int n = nres < TUNE_CANDIDATES ? nres : TUNE_CANDIDATES;
  for (int i = 0; i <= n; i++) {
    const LtAlgo *algo = i < n ? &res[i].algo : NULL;
    bool use = i < n ? res[i].workspace <= workspace_bytes : with_ex;
    us[i] = use && (algo ? launch_lt(c, p, algo, workspace) : launch_ex(c, handle)) == 0 ? FLT_MAX : -1;
  }
  for (int r = 0; r < TUNE_ROUNDS; r++)
    for (int i = 0; i <= n; i++) {
      if (us[i] < 0) continue;
      float t = time_candidate(c, p, i < n ? &res[i].algo : NULL, e0, e1);
      us[i] = t < 0 ? -1 : t < us[i] ? t : us[i];
    }
  float best = -1;
  for (int i = 0; i <= n; i++)
    if (us[i] >= 0 && us[i] < FLT_MAX && (best < 0 || us[i] < best)) {
      best = us[i], p->ex = i == n;
      if (i < n) p->algo = res[i].algo, p->ok = true;
    }
  d->cu.cuEventDestroy(e0), d->cu.cuEventDestroy(e1);
  if (config_debug_level() > 0)
    fprintf(stderr, "[jaxc] cuda gemm (%lld, %lld) x (%lld, %lld) batch %lld: %s, %.1f us (timed %d + %d, %d rounds)\n",
            (long long)c->M, (long long)c->K, (long long)c->K, (long long)c->N, (long long)c->B,
            p->ex ? "cublasGemmEx" : "cublasLt", best, n, with_ex, TUNE_ROUNDS);
  /* the failed candidates' errors are not the caller's */
  (void)d->cu.cuStreamSynchronize(cuda_stream());
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

/* p, where the product goes through cuBLASLt with p's algorithm; NULL where it takes
 * cublasGemmEx: no algorithm, timing chose cublasGemmEx, or (with_ex) not timed yet.
 * Under plan_lock (the flags are written under it). */
static const LtPlan *plan_use(const LtPlan *p, bool with_ex) {
  return p->ok && !p->ex && (p->tuned || !with_ex) ? p : NULL;
}

/* The plan for column-major C (m, n) = op(A) (m, k) @ op(B) (k, n), tuned on the call c
 * where may_time (not while recording a graph), where the product goes through cuBLASLt;
 * NULL where it takes cublasGemmEx (plan_use). with_ex: time cublasGemmEx beside
 * cuBLASLt's algorithms. */
static const LtPlan *lt_plan(const GemmCall *c, bool with_ex, bool may_time) {
  if (!lt.h) return NULL;
  int type = c->type, compute = c->compute, ta = c->tb, tb = c->ta;
  int64_t m = c->N, n = c->M, k = c->K, batch = c->B;
  bool tune = may_time && gemm_tune_on();
  pthread_mutex_lock(&plan_lock);
  LtPlan *p = NULL;
  for (int i = 0; i < nplans && !p; i++) {
    LtPlan *q = plans[i];
    if (q->m == m && q->n == n && q->k == k && q->batch == batch && q->type == type && q->compute == compute &&
        q->ta == ta && q->tb == tb)
      p = q;
  }
  if (p && (p->tuned || !tune || !p->desc)) {
    const LtPlan *use = plan_use(p, with_ex);
    pthread_mutex_unlock(&plan_lock);
    return use;
  }
  bool fresh = !p;
  if (fresh) {
    if (nplans == plans_cap && nplans < LT_PLANS_MAX) {
      int cap = plans_cap ? 2 * plans_cap : 64;
      LtPlan **more = realloc(plans, (size_t)cap * sizeof *more);
      if (more) plans = more, plans_cap = cap;
    }
    if (nplans == plans_cap || !(p = calloc(1, sizeof *p))) {
      pthread_mutex_unlock(&plan_lock);
      return NULL;
    }
    plans[nplans++] = p;
    *p = (LtPlan){.m = m, .n = n, .k = k, .batch = batch, .type = type, .compute = compute, .ta = ta, .tb = tb};
    int32_t b32 = (int32_t)batch;
    if (lt.desc_create(&p->desc, compute, CUDA_R_32F) == 0) {
      lt.desc_set(p->desc, LT_TRANSA, &ta, sizeof ta);
      lt.desc_set(p->desc, LT_TRANSB, &tb, sizeof tb);
      p->a = lt_layout(type, ta ? k : m, ta ? m : k, ta ? k : m, b32, m * k);
      p->b = lt_layout(type, tb ? n : k, tb ? k : n, tb ? n : k, b32, k * n);
      p->c = lt_layout(type, m, n, m, b32, m * n);
    } else {
      p->desc = NULL;
    }
  }
  LtPref pref = NULL;
  uint64_t ws = workspace_bytes;
  if (p->desc && p->a && p->b && p->c && lt.pref_create(&pref) == 0) {
    lt.pref_set(pref, LT_PREF_WORKSPACE, &ws, sizeof ws);
    LtResult res[TUNE_CANDIDATES];
    int nres = 0;
    if (lt.heuristic(lt.h, p->desc, p->a, p->b, p->c, p->c, pref, tune ? TUNE_CANDIDATES : 1, res, &nres) == 0 &&
        nres > 0 && fresh) { /* a plan in use keeps its algorithm until gemm_tune's choice */
      p->algo = res[0].algo;
      p->ok = true;
    }
    lt.pref_destroy(pref);
    if (tune && (nres > 1 || with_ex)) {
      pthread_mutex_lock(&enqueue_lock);
      gemm_tune(p, c, res, nres, with_ex);
      pthread_mutex_unlock(&enqueue_lock);
    } else {
      p->tuned = tune;
    }
  }
  const LtPlan *use = plan_use(p, with_ex);
  pthread_mutex_unlock(&plan_lock);
  return use;
}

/* Float32 products of fewer multiply-adds than this always go through cuBLASLt's planned
 * call, which costs less host time than cublasGemmStridedBatchedEx; larger ones time
 * cublasGemmEx beside it (2^30; JAXC_CUDA_LT_MAX_WORK overrides it, for measuring). */
static double lt_max_work(void) {
  static double v = 0;
  if (v == 0) {
    const char *e = getenv("JAXC_CUDA_LT_MAX_WORK");
    double w = e ? atof(e) : 0;
    v = w > 0 ? w : (double)(1 << 30);
  }
  return v;
}

static void load_lt(void) {
  char why[400];
  const char *names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", NULL};
  void *h = cuda_dlopen_any(names, why, sizeof why);
  if (!h) return;
#define L(field, sym) lt.field = (__typeof__(lt.field))dlsym(h, sym)
  L(create, "cublasLtCreate"), L(desc_create, "cublasLtMatmulDescCreate");
  L(desc_set, "cublasLtMatmulDescSetAttribute");
  L(layout_create, "cublasLtMatrixLayoutCreate"), L(layout_set, "cublasLtMatrixLayoutSetAttribute");
  L(pref_create, "cublasLtMatmulPreferenceCreate");
  L(pref_set, "cublasLtMatmulPreferenceSetAttribute"), L(pref_destroy, "cublasLtMatmulPreferenceDestroy");
  L(heuristic, "cublasLtMatmulAlgoGetHeuristic"), L(matmul, "cublasLtMatmul");
#undef L
  if (!lt.create || !lt.desc_create || !lt.desc_set || !lt.layout_create || !lt.layout_set || !lt.pref_create ||
      !lt.pref_set || !lt.pref_destroy || !lt.heuristic || !lt.matmul || lt.create(&lt.h) != 0)
    lt.h = NULL;
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
  set_ws_fn = set_ws;
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
  if (K == 0 && !r->axpby) { /* an empty sum: zeros (with axpby cuBLAS gives beta c) */
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
  /* scalars of the compute type; complex ones (re, im); axpby's (jit/lower.c's
   * fuse_gemm_update: out = alpha a @ b + beta c) */
  double al = r->axpby ? r->alpha : 1.0, be = r->axpby ? r->beta : 0.0;
  float alpha32[2] = {(float)al, 0.0f}, beta32[2] = {(float)be, 0.0f};
  double alpha64[2] = {al, 0.0}, beta64[2] = {be, 0.0};
  const void *alpha = compute == CUBLAS_COMPUTE_64F ? (const void *)alpha64 : alpha32;
  const void *beta = compute == CUBLAS_COMPUTE_64F ? (const void *)beta64 : beta32;
  /* Row-major C (M, N) is column-major C^T (N, M) = op(b)^T-as-stored @ op(a): cuBLAS
   * sees b first, with b's stored layout giving its leading dimension. */
  GemmCall c = {.type = type, .compute = compute, .ta = r->trans_a, .tb = r->trans_b, .M = M, .N = N, .K = K,
                .B = B, .alpha = alpha, .beta = beta, .a = inputs[0], .b = inputs[1],
                .c = r->axpby ? inputs[2] : out, .out = out};
  /* cuBLASLt with a plan cached per shape, its algorithm chosen by timing: half
   * precision and float32 (cublasGemmEx picked pre-Hopper kernels for half precision;
   * large float32 products time cublasGemmEx beside cuBLASLt). Timing needs the device's
   * stream: a plan first made while recording a graph takes the heuristic's first. */
  bool small = (double)M * (double)N * (double)K * (double)B < lt_max_work();
  if (type == CUDA_R_16BF || type == CUDA_R_16F || type == CUDA_R_32F) {
    bool with_ex = type == CUDA_R_32F && !small;
    const LtPlan *p = with_ex && !gemm_tune_on() ? NULL : lt_plan(&c, with_ex, !cuda_graph_recording());
    if (p) {
      pthread_mutex_lock(&enqueue_lock);
      int st = launch_lt(&c, p, &p->algo, gemm_workspace());
      pthread_mutex_unlock(&enqueue_lock);
      if (st == 0) return JX_OK;
    }
  }
  cublasHandle_t h = handle;
  if (cuda_stream() != cuda_device()->stream) { /* recording a graph (graph.c), on its branch's workspace */
    void *ws = gemm_workspace();
    if (!capture_handle || set_stream_fn(capture_handle, cuda_stream()) != 0 ||
        (set_ws_fn && set_ws_fn(capture_handle, ws, ws ? workspace_bytes : 0) != 0)) {
      error_set(JX_ERR_DEVICE, "cuda: no cuBLAS handle to record a matrix product in a graph");
      return JX_ERR_DEVICE;
    }
    h = capture_handle;
  }
  if (r->axpby) { /* cublasGemmEx's C is its output: c copied there first */
    const CudaDevice *d = cuda_device();
    jx_status s = cuda_check(d->cu.cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)out, (CUdeviceptr)(uintptr_t)inputs[2],
                                                     routine_out_nbytes(r, 0), cuda_stream()),
                             "cuMemcpyDtoDAsync");
    if (s != JX_OK) return s;
  }
  pthread_mutex_lock(&enqueue_lock);
  int st = launch_ex(&c, h);
  pthread_mutex_unlock(&enqueue_lock);
  if (st != 0) {
    error_set(JX_ERR_DEVICE, "cuda: cublasGemmStridedBatchedEx failed (cublasStatus %d) for "
              "%s (%lld, %lld) @ (%lld, %lld), batch %lld", st, jx_dtype_name(r->dtype),
              (long long)M, (long long)K, (long long)K, (long long)N, (long long)B);
    return JX_ERR_DEVICE;
  }
  return JX_OK;
}
