/* routines.c -- host implementations of the routines (ir/alu.h): stable sorting in
 * JAX's total order (-0.0 == 0.0; NaN of either sign after +inf; ties keep input order)
 * and scatter-add with clamped indices (the transpose of gather). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "backend/fft.h"
#include "backend/gemm.h"
#include "backend/lapack.h"
#include "ir/alu.h"

#ifdef JAXC_HAVE_CBLAS
#include <cblas.h>
#endif

const char *routine_name(RoutineOp op) {
  static const char *const names[] = {
      [ROUTINE_SORT] = "sort", [ROUTINE_SCATTER_ADD] = "scatter_add", [ROUTINE_GEMM] = "gemm",
      [ROUTINE_CHOLESKY] = "cholesky", [ROUTINE_TRIANGULAR_SOLVE] = "triangular_solve",
      [ROUTINE_LU] = "lu", [ROUTINE_QR] = "qr", [ROUTINE_EIGH] = "eigh", [ROUTINE_SVD] = "svd",
      [ROUTINE_EIG] = "eig", [ROUTINE_TRIDIAGONAL_SOLVE] = "tridiagonal_solve", [ROUTINE_FFT] = "fft"};
  return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

jx_status routine_check(const Routine *r) {
  if (r->nin < 1 || r->nout < 1 || r->nin > ROUTINE_MAX_OPERANDS || r->nout > ROUTINE_MAX_OPERANDS) {
    error_set(JX_ERR_UNSUPPORTED, "%s: %d inputs and %d outputs (a routine has 1 to %d of each)",
              routine_name(r->op), r->nin, r->nout, ROUTINE_MAX_OPERANDS);
    return JX_ERR_UNSUPPORTED;
  }
  if (r->op == ROUTINE_GEMM && r->nin != (r->axpby ? 3 : 2)) {
    error_set(JX_ERR_UNSUPPORTED, "gemm: %d inputs (%d%s)", r->nin, r->axpby ? 3 : 2, r->axpby ? " with axpby" : "");
    return JX_ERR_UNSUPPORTED;
  }
  if (r->op == ROUTINE_GEMM && r->axpby && (dtype_is_complex(r->dtype) || !dtype_is_floating(r->dtype))) {
    error_set(JX_ERR_UNSUPPORTED, "gemm: axpby of %s (real floats only)", jx_dtype_name(r->dtype));
    return JX_ERR_UNSUPPORTED;
  }
  return JX_OK;
}

size_t routine_out_nbytes(const Routine *r, int o) {
  if (ROUTINE_IS_LINALG(r->op)) return (size_t)lapack_out_numel(r, o) * jx_dtype_itemsize(lapack_out_dtype(r, o));
  if (r->op == ROUTINE_FFT) return (size_t)fft_out_numel(r) * jx_dtype_itemsize(r->dtype);
  jx_dtype d = r->op == ROUTINE_SORT ? r->dtypes[o] : r->dtype;
  return (size_t)(r->outer * r->n * r->inner) * jx_dtype_itemsize(d);
}

typedef struct Key {
  AluValue v;
  int64_t pos;
} Key;

/* a < b in JAX's total order for dtype d (strict; equal keys keep input order). */
static bool key_less(jx_dtype d, const AluValue *a, const AluValue *b) {
  if (dtype_is_complex(d)) { /* lexicographic on (re, im), each in the float order (JAX) */
    AluValue ar = {.f = a->c.re}, br = {.f = b->c.re}, ai = {.f = a->c.im}, bi = {.f = b->c.im};
    jx_dtype p = dtype_real_part(d);
    if (key_less(p, &ar, &br)) return true;
    if (key_less(p, &br, &ar)) return false;
    return key_less(p, &ai, &bi);
  }
  if (dtype_is_floating(d)) {
    bool an = isnan(a->f), bn = isnan(b->f);
    if (an || bn) return !an && bn;
    return a->f < b->f; /* -0.0 < 0.0 is false: they tie */
  }
  if (dtype_is_unsigned(d)) return a->u < b->u;
  return a->i < b->i;
}

/* Stable merge sort of keys[0..n) with scratch tmp. */
static void merge_sort(jx_dtype d, Key *keys, Key *tmp, int64_t n) {
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = key_less(d, &keys[j].v, &keys[i].v) ? keys[j++] : keys[i++];
      while (i < mid) tmp[k++] = keys[i++];
      while (j < hi) tmp[k++] = keys[j++];
    }
    memcpy(keys, tmp, (size_t)n * sizeof *keys);
  }
}

/* Sorts operand 0 along n (stable) and permutes every operand the same way. */
static jx_status run_sort(const Routine *r, void *const *in, void *const *out) {
  int64_t n = r->n;
  Key *keys = malloc((size_t)(n ? n : 1) * sizeof *keys), *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
  if (!keys || !tmp) {
    free(keys), free(tmp);
    error_set(JX_ERR_OOM, "%s: out of memory for %lld keys", routine_name(r->op), (long long)n);
    return JX_ERR_OOM;
  }
  for (int64_t o = 0; o < r->outer; o++)
    for (int64_t i = 0; i < r->inner; i++) {
      int64_t base = o * n * r->inner + i;
      for (int64_t k = 0; k < n; k++) keys[k] = (Key){alu_load(in[0], r->dtypes[0], base + k * r->inner), k};
      merge_sort(r->dtypes[0], keys, tmp, n);
      for (int x = 0; x < r->nin; x++) {
        size_t item = jx_dtype_itemsize(r->dtypes[x]);
        for (int64_t k = 0; k < n; k++)
          memcpy((char *)out[x] + (size_t)(base + k * r->inner) * item,
                 (const char *)in[x] + (size_t)(base + keys[k].pos * r->inner) * item, item);
      }
    }
  free(keys), free(tmp);
  return JX_OK;
}

static jx_status run_scatter_add(const Routine *r, void *const *in, void *out) {
  size_t item = jx_dtype_itemsize(r->dtype);
  memcpy(out, in[0], (size_t)(r->outer * r->n * r->inner) * item);
  for (int64_t k = 0; k < r->m; k++) {
    AluValue iv = alu_load(in[1], r->index_dtype, k);
    int64_t j = dtype_is_unsigned(r->index_dtype) ? (iv.u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)iv.u) : iv.i;
    j = j < 0 ? 0 : j >= r->n ? r->n - 1 : j;
    for (int64_t o = 0; o < r->outer; o++)
      for (int64_t i = 0; i < r->inner; i++) {
        int64_t dst = (o * r->n + j) * r->inner + i, src = (o * r->m + k) * r->inner + i;
        AluValue args[2] = {alu_load(out, r->dtype, dst), alu_load(in[2], r->dtype, src)};
        alu_store(out, r->dtype, dst, alu_eval_op(r->dtype == JX_BOOL ? ALU_OR : ALU_ADD, r->dtype, r->dtype, args));
      }
  }
  return JX_OK;
}

/* Whether GEMM routines call CBLAS: built with OpenBLAS and not turned off by JAXC_BLAS=0
 * in the environment (read once) or routine_gemm_set_blas. 2: JAXC_BLAS=always, CBLAS
 * even where jaxc's own kernel measured faster (gemm_own_faster; bench/run.py's OpenBLAS
 * rows). */
static int gemm_blas = -1;

static int gemm_blas_mode(void) {
#ifdef JAXC_HAVE_CBLAS
  int b = __atomic_load_n(&gemm_blas, __ATOMIC_RELAXED);
  if (b < 0) {
    const char *e = getenv("JAXC_BLAS");
    b = !(e && (!strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "OFF")));
    if (e && !strcmp(e, "always")) b = 2;
    __atomic_store_n(&gemm_blas, b, __ATOMIC_RELAXED);
  }
  return b;
#else
  return 0;
#endif
}

bool routine_gemm_blas(void) { return gemm_blas_mode() != 0; }

void routine_gemm_set_blas(bool on) { __atomic_store_n(&gemm_blas, on ? 1 : 0, __ATOMIC_RELAXED); }

/* float16/bfloat16 on the host: float32 copies of the operands (exact), the float32
 * product of the block, rounded once into out -- XLA's CPU result. The float32 result
 * buffer is the whole output's size but only the block's pages are touched. */
static jx_status gemm_block_half(const Routine *r, void *const *inputs, void *out, int64_t i0, int64_t i1,
                                 int64_t j0, int64_t j1) {
  int64_t M = r->n, K = r->m, N = r->inner, na = r->outer * M * K, nb = r->outer * K * N;
  bool bf = r->dtype == JX_BFLOAT16;
  float *a = malloc((size_t)(na ? na : 1) * sizeof *a), *b = malloc((size_t)(nb ? nb : 1) * sizeof *b);
  int64_t nc = r->outer * M * N;
  float *c = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *c);
  if (!a || !b || !c) {
    free(a), free(b), free(c);
    error_set(JX_ERR_OOM, "gemm: out of memory for float32 copies of %s operands", jx_dtype_name(r->dtype));
    return JX_ERR_OOM;
  }
  const uint16_t *ha = inputs[0], *hb = inputs[1];
  for (int64_t i = 0; i < na; i++) a[i] = bf ? dtype_bf16_to_f32(ha[i]) : dtype_f16_to_f32(ha[i]);
  for (int64_t i = 0; i < nb; i++) b[i] = bf ? dtype_bf16_to_f32(hb[i]) : dtype_f16_to_f32(hb[i]);
  Routine r32 = *r;
  r32.dtype = JX_FLOAT32;
  jx_status s = routine_gemm_block(&r32, (void *const[]){a, b}, c, i0, i1, j0, j1);
  uint16_t *hc = out;
  for (int64_t o = 0; s == JX_OK && o < r->outer; o++)
    for (int64_t i = i0; i < i1; i++)
      for (int64_t j = j0; j < j1; j++) {
        int64_t at = (o * M + i) * N + j;
        hc[at] = bf ? dtype_f32_to_bf16(c[at]) : dtype_f32_to_f16(c[at]);
      }
  free(a), free(b), free(c);
  return s;
}

/* Whether jaxc's own GEMM (backend/gemm.c) beats OpenBLAS on an m x n x k product: with
 * AVX-512 register tiles, from 64 x 64 and 2^20 multiply-adds. Decided on the whole
 * product, not a thread's block, so that every block (and the interpreter) takes the
 * same kernel and rounds alike.
 * Measured on one thread (process CPU time, AMD EPYC Zen 5, OPENBLAS_CORETYPE=Haswell,
 * 2026-12-02): float32 1.3-1.9x OpenBLAS at 128^3..1024^3 and at the GELU MLP's
 * 256 x 4096 x 1024 products and their transposed backward products (145-210 vs
 * 107-113 GFLOP/s), float64 1.3-1.8x; below 64 columns (N = 10: 0.54x) or at 64^3 in
 * float64 (0.61x) OpenBLAS is faster. Without AVX-512 (AVX2 tiles) OpenBLAS is faster
 * everywhere (0.6-0.95x), so it keeps those. */
static bool gemm_own_faster(jx_dtype dt, int64_t m, int64_t n, int64_t k, bool tb) {
  if (dt != JX_FLOAT32 && dt != JX_FLOAT64) return false;
  if (!gemm_avx512()) return false;
  /* float32 products the kernel reads in place (gemm_direct) from 64 columns: the loops'
   * products, 64^3 (fori_loop) 4.3-5.6 vs 9.8-13.5 us and 32 x 256 x 1024 (an LSTM step)
   * 370-406 vs 518-626 us (one thread, load 17) */
  if (dt == JX_FLOAT32 && n >= 64 && gemm_direct(m, n, k, tb, sizeof(float))) return true;
  return m >= 64 && n >= 64 && (double)m * (double)n * (double)k >= (double)(1 << 20);
}

/* Whether an M x N x K product of dtype (a half dtype: its float32 product) runs on
 * CBLAS in gemm_block_product. */
static bool gemm_on_blas(jx_dtype dt, int64_t M, int64_t N, int64_t K, bool tb) {
#ifdef JAXC_HAVE_CBLAS
  if (dt == JX_FLOAT16 || dt == JX_BFLOAT16) dt = JX_FLOAT32;
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) return false;
  int mode = gemm_blas_mode();
  if (dt == JX_COMPLEX64 || dt == JX_COMPLEX128) return true; /* cgemm / zgemm */
  return (dt == JX_FLOAT32 || dt == JX_FLOAT64) && (mode == 2 || (mode == 1 && !gemm_own_faster(dt, M, N, K, tb)));
#else
  (void)dt, (void)M, (void)N, (void)K, (void)tb;
  return false;
#endif
}

/* OpenBLAS's sgemm sums an element differently as a call's rows change (Zen, OpenBLAS
 * 0.3.21, one thread: a 130 x 130 x 64 product as rows 0-63 and 64-129 differs from the
 * whole in 893 of its 8,320 elements; 2,238 of 33,153 at 257 x 64 x 129), so its
 * products split into as many blocks as the machine has cores -- not the threads
 * JAXC_NUM_THREADS gives the pool -- at most one per 16 rows (or columns) and
 * GEMM_FIXED_BLOCKS, from GEMM_FIXED_MIN_FLOPS (below: one block). That is the split
 * two threads made before on the 2-core VM (the same speed there: each block packs the
 * other operand again, and fixed blocks of 64 or 128 cost the 1024^3 and GELU MLP
 * products 6-14%). Block boundaries are multiples of 16. */
#define GEMM_FIXED_BLOCKS 64
#define GEMM_FIXED_MIN_FLOPS (1 << 21)
int64_t routine_gemm_fixed_blocks(const Routine *r, bool *by_rows) {
  *by_rows = r->n >= r->inner;
  if (!gemm_on_blas(r->dtype, r->n, r->inner, r->m, r->trans_b)) return 0;
  double flops = 2.0 * (double)r->outer * (double)r->n * (double)r->inner * (double)r->m;
  int64_t n = *by_rows ? r->n : r->inner, nb = n / 16;
  if (flops < GEMM_FIXED_MIN_FLOPS || nb < 1) return 1;
  if (nb > config_cpu_cores()) nb = config_cpu_cores();
  return nb > GEMM_FIXED_BLOCKS ? GEMM_FIXED_BLOCKS : nb;
}

/* Block b of nblocks: rows (or columns) [*lo, *hi), whole 16s, the last block the rest. */
static void gemm_block_range(const Routine *r, bool by_rows, int64_t nblocks, int64_t b, int64_t *lo, int64_t *hi) {
  int64_t n = by_rows ? r->n : r->inner;
  int64_t per = (n / nblocks + 15) / 16 * 16;
  *lo = b * per < n ? b * per : n;
  *hi = b == nblocks - 1 ? n : ((b + 1) * per < n ? (b + 1) * per : n);
}

jx_status routine_gemm_fixed_run(const Routine *r, void *const *inputs, void *out, bool by_rows,
                                 int64_t nblocks, int64_t b0, int64_t b1) {
  jx_status s = JX_OK;
  for (int64_t b = b0; b < b1 && s == JX_OK; b++) {
    int64_t lo, hi;
    gemm_block_range(r, by_rows, nblocks, b, &lo, &hi);
    s = by_rows ? routine_gemm_block(r, inputs, out, lo, hi, 0, r->inner)
                : routine_gemm_block(r, inputs, out, 0, r->n, lo, hi);
  }
  return s;
}

/* Rows [i0, i1) and columns [j0, j1) of out[b] = op(a[b]) @ op(bm[b]) for each batch
 * entry; row-major; op transposes the operands stored transposed (trans_a: a is (K, M);
 * trans_b: bm is (N, K)). A block reads its operands in place (leading dimensions of
 * the whole matrices), so blocks can run on separate threads. float32/float64 run on
 * CBLAS (routine_gemm_blas) or else on jaxc's own tiled kernel (backend/gemm.c), which
 * is also taken where it measured faster (gemm_own_faster). */
static jx_status gemm_block_product(const Routine *r, void *const *inputs, void *out, int64_t i0, int64_t i1,
                                    int64_t j0, int64_t j1);

jx_status routine_gemm_block(const Routine *r, void *const *inputs, void *out, int64_t i0,
                             int64_t i1, int64_t j0, int64_t j1) {
  jx_status s = gemm_block_product(r, inputs, out, i0, i1, j0, j1);
  if (s != JX_OK || !r->axpby) return s;
  /* out = alpha (a @ b) + beta c over the block, each element rounded once from float64
   * (float32/float64/half: alu_load widens, alu_store rounds) */
  int64_t M = r->n, N = r->inner;
  for (int64_t b = 0; b < r->outer; b++)
    for (int64_t i = i0; i < i1; i++)
      for (int64_t j = j0; j < j1; j++) {
        int64_t at = b * M * N + i * N + j;
        AluValue p = alu_load(out, r->dtype, at), c = alu_load(inputs[2], r->dtype, at);
        alu_store(out, r->dtype, at, (AluValue){.f = r->alpha * p.f + r->beta * c.f});
      }
  return JX_OK;
}

static jx_status gemm_block_product(const Routine *r, void *const *inputs, void *out, int64_t i0, int64_t i1,
                                    int64_t j0, int64_t j1) {
  if (r->dtype == JX_FLOAT16 || r->dtype == JX_BFLOAT16) return gemm_block_half(r, inputs, out, i0, i1, j0, j1);
  const void *a = inputs[0], *bm = inputs[1];
  int64_t M = r->n, K = r->m, N = r->inner, bm_rows = i1 - i0, bn = j1 - j0;
  bool ta = r->trans_a, tb = r->trans_b;
  if (bm_rows <= 0 || bn <= 0) return JX_OK;
#ifdef JAXC_HAVE_CBLAS
  bool blas = gemm_on_blas(r->dtype, M, N, K, tb);
#endif
  for (int64_t b = 0; b < r->outer; b++) {
    int64_t ao = b * M * K + (ta ? i0 : i0 * K), bo = b * K * N + (tb ? j0 * K : j0);
    int64_t co = b * M * N + i0 * N + j0;
#ifdef JAXC_HAVE_CBLAS
    if (blas && M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX &&
        (r->dtype == JX_FLOAT32 || r->dtype == JX_FLOAT64)) {
      int lda = (int)(ta ? M : (K ? K : 1)), ldb = (int)(tb ? (K ? K : 1) : N);
      enum CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans, opb = tb ? CblasTrans : CblasNoTrans;
      if (r->dtype == JX_FLOAT32)
        cblas_sgemm(CblasRowMajor, opa, opb, (int)bm_rows, (int)bn, (int)K, 1.0f,
                    (const float *)a + ao, lda, (const float *)bm + bo, ldb, 0.0f,
                    (float *)out + co, (int)N);
      else
        cblas_dgemm(CblasRowMajor, opa, opb, (int)bm_rows, (int)bn, (int)K, 1.0,
                    (const double *)a + ao, lda, (const double *)bm + bo, ldb, 0.0,
                    (double *)out + co, (int)N);
      continue;
    }
    if (M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX &&
        (r->dtype == JX_COMPLEX64 || r->dtype == JX_COMPLEX128)) { /* cgemm / zgemm */
      int lda = (int)(ta ? M : (K ? K : 1)), ldb = (int)(tb ? (K ? K : 1) : N);
      enum CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans, opb = tb ? CblasTrans : CblasNoTrans;
      if (r->dtype == JX_COMPLEX64) {
        const float one[2] = {1, 0}, zero[2] = {0, 0};
        cblas_cgemm(CblasRowMajor, opa, opb, (int)bm_rows, (int)bn, (int)K, one,
                    (const float *)a + 2 * ao, lda, (const float *)bm + 2 * bo, ldb, zero,
                    (float *)out + 2 * co, (int)N);
      } else {
        const double one[2] = {1, 0}, zero[2] = {0, 0};
        cblas_zgemm(CblasRowMajor, opa, opb, (int)bm_rows, (int)bn, (int)K, one,
                    (const double *)a + 2 * ao, lda, (const double *)bm + 2 * bo, ldb, zero,
                    (double *)out + 2 * co, (int)N);
      }
      continue;
    }
#endif
    if (dtype_is_complex(r->dtype)) { /* reference loop (no BLAS), k ascending */
      for (int64_t i = 0; i < bm_rows; i++)
        for (int64_t j = 0; j < bn; j++) {
          AluValue acc = alu_reduce_identity(ALU_ADD, r->dtype);
          for (int64_t k = 0; k < K; k++) {
            AluValue ab[2] = {alu_load(a, r->dtype, ao + (ta ? k * M + i : i * K + k)),
                              alu_load(bm, r->dtype, bo + (tb ? j * K + k : k * N + j))};
            AluValue sum[2] = {acc, alu_eval_op(ALU_MUL, r->dtype, r->dtype, ab)};
            acc = alu_eval_op(ALU_ADD, r->dtype, r->dtype, sum);
          }
          alu_store(out, r->dtype, co + i * N + j, acc);
        }
      continue;
    }
    int64_t ab = b * M * K, bb = b * K * N, cb = b * M * N;
    bool ok = true;
    if (r->dtype == JX_FLOAT32)
      ok = gemm_f32((const float *)a + ab, (const float *)bm + bb, (float *)out + cb, M, N, K, ta, tb,
                    i0, i1, j0, j1);
    else if (r->dtype == JX_FLOAT64)
      ok = gemm_f64((const double *)a + ab, (const double *)bm + bb, (double *)out + cb, M, N, K, ta,
                    tb, i0, i1, j0, j1);
    else {
      error_set(JX_ERR_UNSUPPORTED, "gemm: dtype %s on the host (float32 and float64 only)",
                jx_dtype_name(r->dtype));
      return JX_ERR_UNSUPPORTED;
    }
    if (!ok) {
      error_set(JX_ERR_OOM, "gemm: out of memory for the packed panels (%lld x %lld x %lld)",
                (long long)M, (long long)K, (long long)N);
      return JX_ERR_OOM;
    }
  }
  return JX_OK;
}

/* Weak: other BLAS libraries have no such call. The interpreter calls it too: its first
 * product, made before any cpu routine had run, used OpenBLAS's default threads and
 * differed from every later one (2,713 of 16,900 elements of a float32 130 x 64 x 130
 * product; tests/backend/test_gemm.c test_threads_bitwise under JAXC_DEVICE=interp). */
extern void openblas_set_num_threads(int n) __attribute__((weak));
static void openblas_single(void) { openblas_set_num_threads(1); }
void routine_blas_single_threaded(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  if (openblas_set_num_threads) pthread_once(&once, openblas_single);
}

jx_status routine_run_host(const Routine *r, void *const *inputs, void *const *outs) {
  routine_blas_single_threaded();
  switch (r->op) {
  case ROUTINE_SORT: return run_sort(r, inputs, outs);
  case ROUTINE_SCATTER_ADD:
    if (r->n == 0) return JX_OK; /* nothing to add into: out is empty */
    return run_scatter_add(r, inputs, outs[0]);
  case ROUTINE_GEMM: {
    bool by_rows;
    int64_t nb = routine_gemm_fixed_blocks(r, &by_rows);
    if (nb > 1) return routine_gemm_fixed_run(r, inputs, outs[0], by_rows, nb, 0, nb);
    return routine_gemm_block(r, inputs, outs[0], 0, r->n, 0, r->inner);
  }
  case ROUTINE_CHOLESKY: case ROUTINE_TRIANGULAR_SOLVE: case ROUTINE_LU: case ROUTINE_QR:
  case ROUTINE_EIGH: case ROUTINE_SVD: case ROUTINE_EIG: case ROUTINE_TRIDIAGONAL_SOLVE:
    return lapack_run(r, inputs, outs, 0, r->outer);
  case ROUTINE_FFT: return fft_run(r, inputs[0], outs[0], NULL, 1);
  }
  error_set(JX_ERR_INTERNAL, "unknown routine %d", (int)r->op);
  return JX_ERR_INTERNAL;
}
