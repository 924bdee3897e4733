/* test_cuda.c -- the cuda backend's runtime: without a driver, asking for "cuda" is a
 * clear JX_ERR_DEVICE and the device is not listed; with a GPU, copies round-trip, the
 * caching allocator reuses blocks, and cuBLAS products (every dtype, batched,
 * transposed operands, TF32 vs full float32) match the host reference, and fused
 * kernels (softmax in one kernel, one-pass argmax, divisions by literals) match the
 * interpreter on the same inputs. */
#include <math.h>
#include <stdlib.h>

#include "backend/cuda/cuda.h"
#include "backend/lapack.h"
#include "core/array.h"
#include "core/config.h"
#include "core/dtype.h"
#include "ir/alu.h"
#include "jit/jit.h"
#include "test.h"

static bool have_gpu;

static uint64_t rng = 0x243f6a8885a308d3ull;
static double rnd_unit(void) { /* splitmix64, in [-1, 1) */
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-52 - 1.0;
}

static void test_size_classes(void) {
  size_t prev = 0;
  for (size_t n = 0; n < ((size_t)1 << 34); n = n < 4096 ? n + 1 : n + n / 7 + 1) {
    size_t c = cuda_alloc_class(n);
    CHECK_MSG(c >= n && c >= prev, "class of %zu is %zu (previous %zu)", n, c, prev);
    CHECK_MSG(c % 512 == 0, "class of %zu is %zu, not a multiple of 512", n, c);
    CHECK_MSG(n < 4096 || c - n <= n / 4, "class of %zu is %zu: more than 25%% waste", n, c);
    CHECK_EQ_INT(cuda_alloc_class(c), c); /* a class is its own class */
    prev = c;
  }
}

/* Products queued directly share the device stream's cuBLAS workspace; a recorded graph's
 * take their branch's, never that one: a replay queued by another thread may land
 * between the two kernels of a split-K product queued directly (enqueue_lock orders
 * products, not graph launches), and its product would overwrite that product's partials
 * (test_jit_graphs's test_threads: the step-by-step first call's dW1). Each branch's is
 * its own (parallel branches run their products at once). */
static void test_gemm_workspaces(void) {
  for (int b = 0; b < CUDA_GRAPH_BRANCHES; b++) {
    CHECK_EQ_INT(cuda_gemm_workspace_slot(false, b), -1);
    int slot = cuda_gemm_workspace_slot(true, b);
    CHECK_MSG(slot >= 0 && slot < CUDA_GRAPH_BRANCHES, "branch %d records on workspace %d", b, slot);
    for (int c = 0; c < b; c++) CHECK(cuda_gemm_workspace_slot(true, c) != slot);
  }
}

static void test_unavailable(void) {
  if (have_gpu) return;
  CHECK(jx_default_device("cuda") == JX_ERR_DEVICE);
  CHECK_ERROR(JX_ERR_DEVICE, "jx_default_device: device \"cuda\" is not available");
  jx_array *x = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  CHECK(jx_device_put(x, "cuda") == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "jx_device_put: device \"cuda\" is not available");
  jx_free(x);
  for (const char *const *d = jx_devices(); *d; d++) CHECK(strcmp(*d, "cuda") != 0);
  CHECK(jx_last_status() == JX_OK); /* listing devices leaves no error behind */
  /* The device stays the cpu. */
  x = jx_ones(1, (int64_t[]){2}, JX_FLOAT32);
  CHECK_STR(jx_device_of(x), "cpu");
  jx_free(x);
}

static void test_listed(void) {
  if (!have_gpu) return;
  bool found = false;
  for (const char *const *d = jx_devices(); *d; d++) found |= strcmp(*d, "cuda") == 0;
  CHECK(found);
  const CudaDevice *dev = cuda_device();
  CHECK(dev && dev->cc_major >= 5 && dev->sm_count > 0);
  printf("cuda device: %s (sm_%d%d, %d SMs)\n", dev->name, dev->cc_major, dev->cc_minor, dev->sm_count);
}

static void test_copy_round_trip(void) {
  if (!have_gpu) return;
  for (int64_t n = 0; n <= 3000001; n = n * 10 + 1) {
    int32_t *a = malloc((size_t)(n + 1) * 4), *b = malloc((size_t)(n + 1) * 4);
    for (int64_t i = 0; i < n; i++) a[i] = (int32_t)(i * 2654435761u);
    jx_array *h = jx_array_from(a, JX_INT32, 1, &n);
    jx_array *d = jx_device_put(h, "cuda");
    CHECK_STR(jx_device_of(d), "cuda");
    jx_array *back = jx_device_put(d, "cpu");
    CHECK(jx_block_until_ready(d) == JX_OK);
    CHECK(jx_read(d, b, (size_t)n * 4) == JX_OK);
    CHECK(n == 0 || memcmp(a, b, (size_t)n * 4) == 0);
    memset(b, 0, (size_t)n * 4);
    CHECK(jx_read(back, b, (size_t)n * 4) == JX_OK);
    CHECK(n == 0 || memcmp(a, b, (size_t)n * 4) == 0);
    jx_free(h), jx_free(d), jx_free(back);
    free(a), free(b);
  }
}

static void test_allocator_reuse(void) {
  if (!have_gpu) return;
  void *p = cuda_alloc(1000);
  CHECK(p != NULL);
  CudaAllocStats s0 = cuda_alloc_stats();
  cuda_free(p);
  void *q = cuda_alloc(700); /* the same 1024-byte class */
  CudaAllocStats s1 = cuda_alloc_stats();
  CHECK(q == p);
  CHECK_EQ_INT(s1.reuses, s0.reuses + 1);
  CHECK_EQ_INT(s1.driver_allocs, s0.driver_allocs);
  void *r = cuda_alloc(1000); /* a second live block of the class: a new one */
  CHECK(r != NULL && r != q);
  cuda_free(q), cuda_free(r);
  CHECK(cuda_alloc_stats().cached >= 2048);
  cuda_empty_cache();
  CHECK_EQ_INT(cuda_alloc_stats().cached, 0);
  /* An impossible request is an out-of-memory error, after the cache was released. */
  void *huge = cuda_alloc((size_t)1 << 50);
  CHECK(huge == NULL);
  CHECK_ERROR(JX_ERR_OOM, "cuMemAlloc");
}

/* One GEMM routine on the device against routine_run_host on the same float64 data
 * rounded to dtype; max |diff| / (1 + max |ref|) within tol. */
static double check_gemm(jx_dtype dtype, int64_t B, int64_t M, int64_t K, int64_t N, bool ta, bool tb,
                         double tol) {
  jx_scope_begin();
  double rel = INFINITY;
  int64_t na = B * M * K, nb = B * K * N, nc = B * M * N;
  double *a = malloc((size_t)na * 8), *b = malloc((size_t)nb * 8), *ref = malloc((size_t)nc * 8);
  for (int64_t i = 0; i < na; i++) a[i] = rnd_unit();
  for (int64_t i = 0; i < nb; i++) b[i] = rnd_unit();
  jx_array *ah = jx_astype(jx_array_from(a, JX_FLOAT64, 1, &na), dtype);
  jx_array *bh = jx_astype(jx_array_from(b, JX_FLOAT64, 1, &nb), dtype);
  jx_array *a64 = jx_astype(ah, JX_FLOAT64), *b64 = jx_astype(bh, JX_FLOAT64);
  jx_read(a64, a, (size_t)na * 8), jx_read(b64, b, (size_t)nb * 8); /* rounded to dtype */
  Routine r = {.op = ROUTINE_GEMM, .nin = 2, .nout = 1, .dtype = JX_FLOAT64, .outer = B, .n = M,
               .m = K, .inner = N, .trans_a = ta, .trans_b = tb};
  CHECK(routine_run_host(&r, (void *[]){a, b}, (void *[]){ref}) == JX_OK);
  jx_array *ad = jx_device_put(ah, "cuda"), *bd = jx_device_put(bh, "cuda");
  r.dtype = dtype;
  Buffer *out = NULL;
  CHECK(ad && bd && backend_run_routine(&backend_cuda, &r, (Buffer *[]){ad->buf, bd->buf}, &out) == JX_OK);
  if (out) {
    jx_array *c = array_new(out, shape_contiguous(1, &nc), dtype, false);
    double *got = test_read_f64(jx_device_put(c, "cpu"));
    double err = 0, mag = 0;
    for (int64_t i = 0; got && i < nc; i++) {
      double e = fabs(got[i] - ref[i]);
      err = isnan(e) ? INFINITY : e > err ? e : err;
      mag = fabs(ref[i]) > mag ? fabs(ref[i]) : mag;
    }
    CHECK_MSG(got && err <= tol * (1 + mag), "%s gemm B=%lld M=%lld K=%lld N=%lld ta=%d tb=%d: error %g (max %g)",
              jx_dtype_name(dtype), (long long)B, (long long)M, (long long)K, (long long)N, ta, tb, err, mag);
    rel = err / (1 + mag);
    free(got);
  }
  jx_scope_end(0, NULL);
  free(a), free(b), free(ref);
  return rel;
}

static void test_gemm(void) {
  if (!have_gpu) return;
  jx_config_enable_x64(true);
  static const int64_t shapes[][4] = {{1, 1, 1, 1}, {1, 7, 5, 3}, {3, 33, 65, 17}, {2, 128, 256, 64}, {1, 0, 4, 5}, {2, 4, 0, 3}};
  jx_config_default_matmul_precision("highest");
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int t = 0; t < 4; t++) {
      const int64_t *d = shapes[s];
      check_gemm(JX_FLOAT64, d[0], d[1], d[2], d[3], t & 1, t & 2, 1e-13);
      check_gemm(JX_FLOAT32, d[0], d[1], d[2], d[3], t & 1, t & 2, 1e-5);
      check_gemm(JX_BFLOAT16, d[0], d[1], d[2], d[3], t & 1, t & 2, 2e-2);
      check_gemm(JX_FLOAT16, d[0], d[1], d[2], d[3], t & 1, t & 2, 4e-3);
    }
  /* TF32 (JAX's default precision on GPUs): inputs rounded to 10 mantissa bits. Too
   * inexact for full float32's tolerance at K = 1024, within TF32's. */
  jx_config_default_matmul_precision("default");
  double tf32 = check_gemm(JX_FLOAT32, 1, 256, 1024, 256, false, false, 5e-3);
  CHECK_MSG(tf32 > 1e-5, "TF32 error %g: as exact as float32, TF32 was not used", tf32);
  jx_config_default_matmul_precision("highest");
  jx_config_enable_x64(false);
}

/* Device buffer of n elements of d holding host bytes. */
static Buffer *upload(const void *host, size_t nbytes) {
  Buffer *b = buffer_new(&backend_cuda, nbytes);
  if (b && backend_cuda.copy_in(&backend_cuda, b->mem, host, nbytes) != JX_OK) buffer_free(b), b = NULL;
  return b;
}

/* Runs routine r on the device and on the host over the same inputs; outputs must agree
 * byte for byte. */
static void check_routine_exact(const Routine *r, void *const *host_in, const size_t *in_bytes, const char *what) {
  Buffer *in[ROUTINE_MAX_OPERANDS] = {0}, *out[ROUTINE_MAX_OPERANDS] = {0};
  void *ref[ROUTINE_MAX_OPERANDS] = {0};
  for (int i = 0; i < r->nin; i++) CHECK((in[i] = upload(host_in[i], in_bytes[i])) != NULL);
  for (int o = 0; o < r->nout; o++) ref[o] = calloc(1, routine_out_nbytes(r, o) + 1);
  CHECK(routine_run_host(r, host_in, ref) == JX_OK);
  jx_status s = backend_run_routine(&backend_cuda, r, in, out);
  CHECK_MSG(s == JX_OK, "%s: %s", what, jx_last_error());
  for (int o = 0; s == JX_OK && o < r->nout; o++) {
    size_t nb = routine_out_nbytes(r, o);
    unsigned char *got = malloc(nb + 1);
    CHECK(backend_cuda.copy_out(&backend_cuda, got, out[o]->mem, nb) == JX_OK);
    CHECK_MSG(memcmp(got, ref[o], nb) == 0, "%s: output %d differs from the host", what, o);
    free(got);
  }
  jx_clear_error();
  for (int i = 0; i < r->nin; i++) buffer_free(in[i]);
  for (int o = 0; o < r->nout; o++) buffer_free(out[o]), free(ref[o]);
}

static void test_sort(void) {
  if (!have_gpu) return;
  static const jx_dtype dtypes[] = {JX_FLOAT32, JX_FLOAT64, JX_FLOAT16, JX_BFLOAT16, JX_INT32, JX_UINT32,
                                    JX_INT64, JX_UINT64, JX_INT8, JX_UINT8, JX_INT16, JX_BOOL};
  static const double edges[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, -NAN, 2.5, -7.0, 3.0, 1e30};
  static const int64_t shapes[][3] = {{1, 1, 1}, {1, 17, 1}, {3, 100, 1}, {2, 33, 5}, {1, 1 << 16, 1}, {7, 9, 300}, {1, 0, 3}};
  for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++)
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
      jx_dtype d = dtypes[t];
      Routine r = {.op = ROUTINE_SORT, .nin = 2, .nout = 2, .dtype = d, .outer = shapes[sh][0],
                   .n = shapes[sh][1], .inner = shapes[sh][2]};
      r.dtypes[0] = d, r.dtypes[1] = JX_INT32;
      int64_t total = r.outer * r.n * r.inner;
      size_t item = jx_dtype_itemsize(d);
      unsigned char *x = malloc((size_t)total * item + 1);
      int32_t *pos = malloc((size_t)total * 4 + 1);
      for (int64_t i = 0; i < total; i++) {
        double v = i % 3 == 0 ? edges[(i / 3) % 12] : floor(rnd_unit() * 50);
        AluValue av = dtype_is_floating(d) ? (AluValue){.f = v} : (AluValue){.i = isfinite(v) ? (int64_t)v : 5};
        if (d == JX_BOOL) av.i = av.i & 1;
        alu_store(x, d, i, alu_normalize(d, av));
        pos[i] = (int32_t)i;
      }
      char what[128];
      snprintf(what, sizeof what, "sort %s (%lld, %lld, %lld)", jx_dtype_name(d), (long long)r.outer,
               (long long)r.n, (long long)r.inner);
      check_routine_exact(&r, (void *[]){x, pos}, (size_t[]){(size_t)total * item, (size_t)total * 4}, what);
      r.nin = r.nout = 1; /* jnp.sort: one operand (its own bits ride along as values) */
      check_routine_exact(&r, (void *[]){x}, (size_t[]){(size_t)total * item}, what);
      free(x), free(pos);
    }
}

static void test_scatter_add(void) {
  if (!have_gpu) return;
  static const jx_dtype dtypes[] = {JX_FLOAT32, JX_FLOAT64, JX_FLOAT16, JX_BFLOAT16, JX_INT32,
                                    JX_UINT32, JX_INT64, JX_INT8, JX_UINT8, JX_INT16, JX_BOOL};
  for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
    jx_dtype d = dtypes[t];
    /* small integers: every order of additions gives the same float sum */
    Routine r = {.op = ROUTINE_SCATTER_ADD, .nin = 3, .nout = 1, .dtype = d, .index_dtype = JX_INT32,
                 .outer = 3, .n = 10, .inner = 7, .m = 40};
    size_t item = jx_dtype_itemsize(d);
    int64_t nx = r.outer * r.n * r.inner, nu = r.outer * r.m * r.inner;
    unsigned char *x = malloc((size_t)nx * item), *u = malloc((size_t)nu * item);
    int32_t idx[40];
    for (int k = 0; k < 40; k++) idx[k] = k % 13 - 2; /* out of range both ways: clamped */
    for (int64_t i = 0; i < nx; i++) alu_store(x, d, i, alu_normalize(d, (AluValue){.i = i % 3}));
    for (int64_t i = 0; i < nu; i++) alu_store(u, d, i, alu_normalize(d, (AluValue){.i = i % 2}));
    if (dtype_is_floating(d)) {
      for (int64_t i = 0; i < nx; i++) alu_store(x, d, i, (AluValue){.f = (double)(i % 3)});
      for (int64_t i = 0; i < nu; i++) alu_store(u, d, i, (AluValue){.f = (double)(i % 2)});
    }
    char what[64];
    snprintf(what, sizeof what, "scatter_add %s", jx_dtype_name(d));
    check_routine_exact(&r, (void *[]){x, idx, u}, (size_t[]){(size_t)nx * item, sizeof idx, (size_t)nu * item}, what);
    free(x), free(u);
  }
}

/* ------------------------------------------------- cuSOLVER against LAPACK (host) */

/* Runs routine r on the device (solver.c) and on the host over the same inputs; the
 * outputs listed in `cmp` must agree within tol of each output's largest magnitude
 * (NaN where the host has NaN). Returns the device outputs (host copies, caller frees). */
static void check_solver(const Routine *r, void *const *host_in, const size_t *in_bytes, unsigned cmp, double tol,
                         const char *what, void **dev_out) {
  Buffer *in[ROUTINE_MAX_OPERANDS] = {0}, *out[ROUTINE_MAX_OPERANDS] = {0};
  void *ref[ROUTINE_MAX_OPERANDS] = {0};
  CHECK(cuda_solver_has(r));
  for (int i = 0; i < r->nin; i++) CHECK((in[i] = upload(host_in[i], in_bytes[i])) != NULL);
  for (int o = 0; o < r->nout; o++) ref[o] = calloc(1, routine_out_nbytes(r, o) + 8);
  CHECK(routine_run_host(r, host_in, ref) == JX_OK);
  jx_status s = backend_run_routine(&backend_cuda, r, in, out);
  CHECK_MSG(s == JX_OK, "%s: %s", what, jx_last_error());
  bool f64 = r->dtype == JX_FLOAT64;
  for (int o = 0; s == JX_OK && o < r->nout; o++) {
    size_t nb = routine_out_nbytes(r, o);
    unsigned char *got = malloc(nb + 8);
    CHECK(backend_cuda.copy_out(&backend_cuda, got, out[o]->mem, nb) == JX_OK);
    if (cmp >> o & 1) {
      bool ints = lapack_out_dtype(r, o) == JX_INT32;
      int64_t n = (int64_t)(nb / (ints ? 4 : f64 ? 8 : 4));
      double scale = 0;
      for (int64_t i = 0; i < n && !ints; i++) {
        double w = f64 ? ((double *)ref[o])[i] : ((float *)ref[o])[i];
        if (isfinite(w)) scale = fmax(scale, fabs(w));
      }
      int bad = 0;
      for (int64_t i = 0; i < n && bad < 3; i++) {
        bool ok;
        if (ints) ok = ((int32_t *)got)[i] == ((int32_t *)ref[o])[i];
        else {
          double g = f64 ? ((double *)got)[i] : ((float *)got)[i], w = f64 ? ((double *)ref[o])[i] : ((float *)ref[o])[i];
          ok = isnan(w) ? isnan(g) : fabs(g - w) <= tol * (scale > 1 ? scale : 1);
        }
        if (!ok) {
          bad++;
          CHECK_MSG(false, "%s: output %d element %lld differs from LAPACK's", what, o, (long long)i);
        }
      }
    }
    if (dev_out) dev_out[o] = got;
    else free(got);
  }
  jx_clear_error();
  for (int i = 0; i < r->nin; i++) buffer_free(in[i]);
  for (int o = 0; o < r->nout; o++) buffer_free(out[o]), free(ref[o]);
}

static void test_solver(void) {
  if (!have_gpu) return;
  for (int f64 = 0; f64 < 2; f64++) {
    jx_dtype d = f64 ? JX_FLOAT64 : JX_FLOAT32;
    size_t isz = f64 ? 8 : 4;
    double tol = f64 ? 1e-10 : 2e-4;
    int64_t B = 3, n = 37, m = 11;
    /* symmetric positive definite entries (a a^T + n I), the second not definite, the
     * third with a NaN */
    double *a = malloc((size_t)(B * n * n) * 8), *g = malloc((size_t)(n * n) * 8);
    for (int64_t b = 0; b < B; b++) {
      for (int64_t i = 0; i < n * n; i++) g[i] = rnd_unit();
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          double v = 0;
          for (int64_t k = 0; k < n; k++) v += g[i * n + k] * g[j * n + k];
          a[b * n * n + i * n + j] = v + (i == j ? n : 0) - (b == 1 && i == j && i == 20 ? 1e4 : 0);
        }
    }
    a[2 * n * n + 5 * n + 3] = a[2 * n * n + 3 * n + 5] = NAN;
    void *ah = malloc((size_t)(B * n * n) * isz);
    for (int64_t i = 0; i < B * n * n; i++) alu_store(ah, d, i, (AluValue){.f = a[i]});
    char what[96];
    snprintf(what, sizeof what, "cholesky %s", jx_dtype_name(d));
    Routine ch = {.op = ROUTINE_CHOLESKY, .nin = 1, .nout = 1, .dtype = d, .outer = B, .n = n, .m = n};
    ch.dtypes[0] = d;
    check_solver(&ch, (void *[]){ah}, (size_t[]){(size_t)(B * n * n) * isz}, 1, tol, what, NULL);
    /* eigh of the finite entries (lower and upper halves): eigenvalues as LAPACK's,
     * eigenvectors orthonormal with a v = v w */
    for (int lower = 0; lower < 2; lower++) {
      Routine eh = {.op = ROUTINE_EIGH, .nin = 1, .nout = 2, .dtype = d, .outer = 2, .n = n, .m = n,
                    .flags = lower ? LINALG_LOWER : 0};
      eh.dtypes[0] = d;
      void *outs[2] = {0};
      snprintf(what, sizeof what, "eigh %s lower=%d", jx_dtype_name(d), lower);
      check_solver(&eh, (void *[]){ah}, (size_t[]){(size_t)(2 * n * n) * isz}, 2, tol, what, outs);
      double worst = 0;
      for (int64_t b = 0; outs[0] && outs[1] && b < 2; b++)
        for (int64_t i = 0; i < n; i++)
          for (int64_t k = 0; k < n; k++) { /* (a v)[i][k] - v[i][k] w[k] */
            double av = 0;
            for (int64_t j = 0; j < n; j++)
              av += a[b * n * n + i * n + j] * alu_load(outs[0], d, b * n * n + j * n + k).f;
            worst = fmax(worst, fabs(av - alu_load(outs[0], d, b * n * n + i * n + k).f * alu_load(outs[1], d, b * n + k).f));
          }
      CHECK_MSG(worst < (f64 ? 1e-9 : 1e-2) * n, "%s: |a v - v w| = %g", what, worst);
      free(outs[0]), free(outs[1]);
    }
    /* lu of (B, n, m) and (B, m, n): pivots and permutations exact, factors close */
    for (int wide = 0; wide < 2; wide++) {
      int64_t r0 = wide ? m : n, c0 = wide ? n : m;
      Routine l = {.op = ROUTINE_LU, .nin = 1, .nout = 3, .dtype = d, .outer = B, .n = r0, .m = c0};
      l.dtypes[0] = d;
      void *x = malloc((size_t)(B * r0 * c0) * isz);
      for (int64_t i = 0; i < B * r0 * c0; i++) alu_store(x, d, i, (AluValue){.f = rnd_unit()});
      snprintf(what, sizeof what, "lu %s (%lld, %lld)", jx_dtype_name(d), (long long)r0, (long long)c0);
      check_solver(&l, (void *[]){x}, (size_t[]){(size_t)(B * r0 * c0) * isz}, 7, tol, what, NULL);
      free(x);
    }
    /* triangular_solve, every flag combination, both sides */
    for (unsigned flags = 0; flags < 32; flags++) {
      if (flags & LINALG_CONJUGATE_A) continue;
      bool left = flags & LINALG_LEFT_SIDE;
      int64_t k = left ? n : m;
      void *t = malloc((size_t)(B * k * k) * isz), *rhs = malloc((size_t)(B * n * m) * isz);
      for (int64_t i = 0; i < B * k * k; i++) /* well conditioned: a dominant diagonal */
        alu_store(t, d, i, (AluValue){.f = (i % (k * k)) % (k + 1) == 0 ? 4.0 + rnd_unit() : rnd_unit() / (double)k});
      for (int64_t i = 0; i < B * n * m; i++) alu_store(rhs, d, i, (AluValue){.f = rnd_unit()});
      Routine ts = {.op = ROUTINE_TRIANGULAR_SOLVE, .nin = 2, .nout = 1, .dtype = d, .outer = B, .n = n, .m = m,
                    .flags = flags};
      ts.dtypes[0] = ts.dtypes[1] = d;
      snprintf(what, sizeof what, "triangular_solve %s flags %u", jx_dtype_name(d), flags);
      check_solver(&ts, (void *[]){t, rhs}, (size_t[]){(size_t)(B * k * k) * isz, (size_t)(B * n * m) * isz}, 1, tol,
                   what, NULL);
      free(t), free(rhs);
    }
    free(a), free(g), free(ah);
  }
}

/* ------------------------------------------------------ cuFFT against pocketfft */

static void test_fft(void) {
  if (!have_gpu) return;
  static const int64_t shapes[][4] = {{1, 8}, {1, 1000}, {1, 97}, {2, 12, 10}, {2, 7, 33}, {3, 4, 6, 10}, {3, 5, 3, 7}};
  static const int ranks[] = {1, 1, 1, 2, 2, 3, 3};
  int cases = 0;
  for (int f64 = 0; f64 < 2; f64++)
    for (size_t sh = 0; sh < sizeof ranks / sizeof ranks[0]; sh++)
      for (unsigned kind = 0; kind < 4; kind++) {
        Routine r = {.op = ROUTINE_FFT, .nin = 1, .nout = 1, .dtype = f64 ? JX_FLOAT64 : JX_FLOAT32, .outer = 3,
                     .flags = kind, .fft_rank = ranks[sh]};
        int64_t total = r.outer, last = shapes[sh][ranks[sh]];
        for (int d = 0; d < ranks[sh]; d++) r.fft_lens[d] = shapes[sh][1 + d], total *= r.fft_lens[d];
        r.dtypes[0] = r.dtype;
        /* input scalars: complex (interleaved) except RFFT's; IRFFT's complex side halved */
        int64_t nin = kind == FFT_TYPE_RFFT ? total : kind == FFT_TYPE_IRFFT ? total / last * (last / 2 + 1) * 2 : 2 * total;
        size_t isz = f64 ? 8 : 4;
        void *x = malloc((size_t)nin * isz);
        for (int64_t i = 0; i < nin; i++) alu_store(x, r.dtype, i, (AluValue){.f = rnd_unit()});
        char what[96];
        snprintf(what, sizeof what, "fft kind %u rank %d (%lld..) %s", kind, ranks[sh], (long long)shapes[sh][1],
                 jx_dtype_name(r.dtype));
        Buffer *in = upload(x, (size_t)nin * isz), *out = NULL;
        size_t nb = routine_out_nbytes(&r, 0);
        void *ref = malloc(nb + 8), *got = malloc(nb + 8);
        CHECK(routine_run_host(&r, (void *[]){x}, (void *[]){ref}) == JX_OK);
        jx_status s = backend_run_routine(&backend_cuda, &r, &in, &out);
        CHECK_MSG(s == JX_OK, "%s: %s", what, jx_last_error());
        if (s == JX_OK) {
          CHECK(backend_cuda.copy_out(&backend_cuda, got, out->mem, nb) == JX_OK);
          int64_t n = (int64_t)(nb / isz);
          double scale = 0, worst = 0;
          for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(alu_load(ref, r.dtype, i).f));
          for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs(alu_load(got, r.dtype, i).f - alu_load(ref, r.dtype, i).f));
          CHECK_MSG(worst <= (f64 ? 1e-12 : 2e-6) * fmax(scale, 1), "%s: largest difference %g (scale %g)", what, worst, scale);
          cases++;
        }
        jx_clear_error();
        buffer_free(in), buffer_free(out);
        free(x), free(ref), free(got);
      }
  CHECK(cases == 56);
}

/* ------------------------------------------- fused kernels against the interpreter */

typedef enum { F_SOFTMAX, F_LOG_SOFTMAX, F_DIV, F_ARGMAX, F_ARGMIN } FusedKind;

static jx_status fused_fn(void *ctx, jx_array *const *in, jx_array **out) {
  FusedKind k = *(const FusedKind *)ctx;
  jx_array *x = in[0];
  switch (k) {
  case F_SOFTMAX: out[0] = jx_nn_softmax(x, 1, (int[]){-1}, NULL); break;
  case F_LOG_SOFTMAX: out[0] = jx_nn_log_softmax(x, 1, (int[]){-1}, NULL); break;
  case F_DIV: /* divisions by literals (jx_div_c_f32) and by a power of two */
    out[0] = jx_add(jx_add(jx_div(x, jx_scalar(3.0)), jx_div(x, jx_scalar(-0.1))),
                    jx_add(jx_div(x, jx_scalar(7e-30)), jx_div(x, jx_scalar(0.25))));
    break;
  case F_ARGMAX: out[0] = jx_argmax(x, -1, false); break;
  case F_ARGMIN: out[0] = jx_argmin(x, 0, false); break;
  }
  return out[0] ? JX_OK : jx_last_status();
}

/* A jitted function on cuda and on interp over the same float32 input: every element
 * within rtol (0: bit for bit, NaN matching NaN). Returns the cuda program's kernels. */
static int check_fused(FusedKind kind, const float *v, int ndim, const int64_t *shape, double rtol, const char *what) {
  jx_fn *f = jx_fn_new(what, 1, 1, fused_fn, &kind);
  jx_fn *jf = jx_jit(f);
  jx_array *xh = jx_array_from(v, JX_FLOAT32, ndim, shape), *xc = jx_device_put(xh, "cuda");
  jx_free(xh);
  jx_array *xi = jx_device_put(xc, "interp");
  jx_array *gc = NULL, *gi = NULL;
  CHECK_MSG(jx_call(jf, &xc, &gc) == JX_OK && jx_call(jf, &xi, &gi) == JX_OK, "%s: %s", what, jx_last_error());
  int nk = xc ? jit_program_nkernels(jit_program_for(jf, &xc)) : -1;
  if (gc && gi) {
    CHECK_STR(jx_device_of(gc), "cuda");
    int64_t n = jx_size(gi);
    bool ints = jx_dtype_of(gi) == JX_INT32;
    float *a = malloc((size_t)n * 4 + 4), *b = malloc((size_t)n * 4 + 4);
    CHECK(jx_read(gc, a, (size_t)n * 4) == JX_OK && jx_read(gi, b, (size_t)n * 4) == JX_OK);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; i++) {
      bool ok;
      if (ints || rtol == 0) ok = memcmp(&a[i], &b[i], 4) == 0 || (isnan(a[i]) && isnan(b[i]));
      else /* log_softmax: relative to max(|value|, 1) (values near 0 are differences) */
        ok = a[i] == b[i] || (isnan(a[i]) && isnan(b[i])) ||
             fabs((double)a[i] - b[i]) <= rtol * fmax(fabs((double)b[i]), kind == F_LOG_SOFTMAX ? 1.0 : 1e-30);
      if (!ok) {
        bad++;
        if (ints) CHECK_MSG(false, "%s [%lld]: cuda %d, interp %d", what, (long long)i, ((int32_t *)a)[i], ((int32_t *)b)[i]);
        else CHECK_MSG(false, "%s [%lld]: cuda %.9g, interp %.9g", what, (long long)i, a[i], b[i]);
      }
    }
    free(a), free(b);
  }
  jx_free(gc), jx_free(gi), jx_free(xc), jx_free(xi);
  jx_fn_free(jf), jx_fn_free(f);
  jx_clear_error();
  return nk;
}

static void test_fused_vs_interp(void) {
  if (!have_gpu) return;
  /* softmax / log_softmax rows: block rows (16-byte vectors and not), warp rows, thread rows */
  static const int64_t shapes[][2] = {{256, 4096}, {300, 1000}, {1000, 40}, {4096, 3}, {128, 10}, {2, 70000}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    int64_t n = shapes[i][0] * shapes[i][1];
    float *v = malloc((size_t)n * 4);
    for (int64_t j = 0; j < n; j++) v[j] = (float)(rnd_unit() * 20.0);
    if (n > 7) v[7] = -INFINITY; /* exp(-inf - max) = 0 */
    char what[96];
    snprintf(what, sizeof what, "softmax (%lld, %lld)", (long long)shapes[i][0], (long long)shapes[i][1]);
    int nk = check_fused(F_SOFTMAX, v, 2, shapes[i], 4e-6, what);
    /* one kernel where the rows fuse (jit/lower.c: fuse_two_phase for rows of 16 or
     * more, then fuse_row_output) */
    if (shapes[i][1] >= 16 && shapes[i][1] <= 65536 && (shapes[i][0] >= 128 || n <= 65536))
      CHECK_MSG(nk == 1, "%s: %d kernels", what, nk);
    snprintf(what, sizeof what, "log_softmax (%lld, %lld)", (long long)shapes[i][0], (long long)shapes[i][1]);
    check_fused(F_LOG_SOFTMAX, v, 2, shapes[i], 4e-6, what);
    snprintf(what, sizeof what, "argmax (%lld, %lld)", (long long)shapes[i][0], (long long)shapes[i][1]);
    for (int64_t j = 0; j < n; j += 97) v[j] = 5.0f; /* ties */
    if (n > 1000) v[n / 2] = NAN;
    check_fused(F_ARGMAX, v, 2, shapes[i], 0, what);
    snprintf(what, sizeof what, "argmin (%lld, %lld)", (long long)shapes[i][0], (long long)shapes[i][1]);
    check_fused(F_ARGMIN, v, 2, shapes[i], 0, what);
    free(v);
  }
  /* divisions by literals: correctly rounded as on the interpreter, bit for bit, over
   * random bits (every exponent: subnormals, huge, inf, NaN) and signed zeros */
  int64_t n = 1 << 20;
  uint32_t *u = malloc((size_t)n * 4);
  for (int64_t j = 0; j < n; j++) u[j] = (uint32_t)((rnd_unit() + 1) * 2147483648.0);
  u[0] = 0, u[1] = 0x80000000u, u[2] = 0x7f800000u, u[3] = 0x00000001u, u[4] = 0x7f7fffffu;
  check_fused(F_DIV, (const float *)u, 1, &n, 0, "division by literals");
  /* a full argmax of 2^22 (the split two-stage reduction) */
  n = 1 << 22;
  float *w = malloc((size_t)n * 4);
  for (int64_t j = 0; j < n; j++) w[j] = (float)rnd_unit();
  w[n - 5] = 2.0f, w[12345] = 2.0f;
  check_fused(F_ARGMAX, w, 1, &n, 0, "argmax 2^22");
  free(u), free(w);
  CHECK(jx_live_arrays() == 0);
}

static void test_precision_names(void) {
  CHECK(jx_config_default_matmul_precision("tensorfloat32") == JX_OK);
  CHECK(config_matmul_tf32());
  CHECK(jx_config_default_matmul_precision("float32") == JX_OK);
  CHECK(!config_matmul_tf32());
  CHECK(jx_config_default_matmul_precision("fast") == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "unknown precision \"fast\"");
  CHECK(!config_matmul_tf32()); /* unchanged */
}

int main(void) {
  have_gpu = jx_default_device("cuda") == JX_OK;
  if (!have_gpu) printf("no GPU: %s\n", jx_last_error());
  jx_clear_error();
  jx_default_device("cpu");
  TEST_RUN(test_size_classes);
  TEST_RUN(test_gemm_workspaces);
  TEST_RUN(test_unavailable);
  TEST_RUN(test_listed);
  TEST_RUN(test_copy_round_trip);
  TEST_RUN(test_allocator_reuse);
  TEST_RUN(test_gemm);
  TEST_RUN(test_sort);
  TEST_RUN(test_scatter_add);
  TEST_RUN(test_precision_names);
  TEST_RUN(test_fused_vs_interp);
  TEST_RUN(test_solver);
  TEST_RUN(test_fft);
  return test_finish();
}
