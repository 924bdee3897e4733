/* test_gemm.c -- the GEMM routine's kernels against a plain loop: jaxc's own cache-blocked,
 * register-tiled kernel (backend/gemm.c, used without OpenBLAS or with JAXC_BLAS=0) and,
 * where jaxc was built with it, OpenBLAS. Random shapes cross every blocking edge (the
 * 6-row / 16- or 8-column register tile, 32 or 16 columns with AVX-512, KC = 256, MC = 96,
 * NC = 1024), with transposed operands, batches and sub-blocks (as the cpu backend's
 * threads compute them), in float32 and float64, for each kernel ISA the CPU has
 * (gemm_set_isa_cap: baseline, AVX2, AVX-512); then dot_general through jit and eagerly
 * with the kernel selected, and the products the GELU MLP step takes to jaxc's own kernel
 * ahead of OpenBLAS. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/gemm.h"
#include "ir/alu.h"
#include "test.h"
#include "trace/prim.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int64_t rnd_int(int64_t n) { return (int64_t)(rnd() % (uint64_t)n); }
static double rnd_val(void) { return (double)(rnd() >> 11) * 0x1p-53 * 2.0 - 1.0; }

/* A size that often sits on a blocking edge. */
static int64_t rnd_size(int64_t tile) {
  static const int64_t edges[] = {1, 2, 5, 6, 7, 8, 9, 15, 16, 17, 33, 95, 96, 97, 101};
  switch (rnd_int(4)) {
  case 0: return edges[rnd_int((int64_t)(sizeof edges / sizeof edges[0]))];
  case 1: return tile * (1 + rnd_int(3)) + rnd_int(3) - 1;
  default: return 1 + rnd_int(70);
  }
}

/* Element (i, j) of op(x) for a (rows, cols) operand stored transposed when t. */
static double at(const void *x, bool f32, bool t, int64_t rows, int64_t cols, int64_t i, int64_t j) {
  int64_t idx = t ? j * rows + i : i * cols + j;
  return f32 ? ((const float *)x)[idx] : ((const double *)x)[idx];
}

static int64_t sample_step = 1; /* check every sample_step-th row and column (large cases) */

/* Runs one GEMM routine block with the kernel chosen by blas, checks the block against a
 * long double loop within the bound of a K-term dot product (K+2 roundings of the
 * absolute sum) and every element outside the block untouched. */
static void check_case(bool f32, bool blas, int64_t B, int64_t M, int64_t K, int64_t N, bool ta,
                       bool tb, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  size_t es = f32 ? 4 : 8;
  void *a = malloc((size_t)(B * M * K) * es + 8), *b = malloc((size_t)(B * K * N) * es + 8);
  void *c = malloc((size_t)(B * M * N) * es + 8);
  for (int64_t i = 0; i < B * M * K; i++)
    f32 ? (void)(((float *)a)[i] = (float)rnd_val()) : (void)(((double *)a)[i] = rnd_val());
  for (int64_t i = 0; i < B * K * N; i++)
    f32 ? (void)(((float *)b)[i] = (float)rnd_val()) : (void)(((double *)b)[i] = rnd_val());
  for (int64_t i = 0; i < B * M * N; i++) f32 ? (void)(((float *)c)[i] = 1234.5f) : (void)(((double *)c)[i] = 1234.5);
  Routine r = {.op = ROUTINE_GEMM, .nin = 2, .nout = 1, .dtype = f32 ? JX_FLOAT32 : JX_FLOAT64,
               .outer = B, .n = M, .m = K, .inner = N, .trans_a = ta, .trans_b = tb};
  routine_gemm_set_blas(blas);
  CHECK_EQ_INT(routine_gemm_block(&r, (void *[]){a, b}, c, i0, i1, j0, j1), JX_OK);
  double eps = f32 ? FLT_EPSILON : DBL_EPSILON;
  int bad = 0;
  for (int64_t q = 0; q < B && bad < 3; q++)
    for (int64_t i = 0; i < M && bad < 3; i += sample_step)
      for (int64_t j = 0; j < N && bad < 3; j += sample_step) {
        double got = f32 ? ((float *)c)[(q * M + i) * N + j] : ((double *)c)[(q * M + i) * N + j];
        if (i < i0 || i >= i1 || j < j0 || j >= j1) {
          if (got != 1234.5) bad++, test_fail(__FILE__, __LINE__, "gemm wrote outside its block at [%lld,%lld,%lld]",
                                              (long long)q, (long long)i, (long long)j);
          continue;
        }
        long double acc = 0, mag = 0;
        const char *qa = (const char *)a + (size_t)(q * M * K) * es, *qb = (const char *)b + (size_t)(q * K * N) * es;
        for (int64_t k = 0; k < K; k++) {
          long double p = (long double)at(qa, f32, ta, M, K, i, k) * at(qb, f32, tb, K, N, k, j);
          acc += p, mag += fabsl(p);
        }
        double tol = (double)(K + 2) * eps * (double)mag + 1e-300;
        test_checks++;
        if (!(fabs(got - (double)acc) <= tol))
          bad++, test_fail(__FILE__, __LINE__,
                           "%s gemm (%s) B=%lld M=%lld K=%lld N=%lld ta=%d tb=%d block [%lld,%lld)x[%lld,%lld): "
                           "[%lld,%lld,%lld] = %.17g, want %.17g (tol %g)",
                           f32 ? "float32" : "float64", blas ? "blas" : "own", (long long)B, (long long)M,
                           (long long)K, (long long)N, ta, tb, (long long)i0, (long long)i1, (long long)j0,
                           (long long)j1, (long long)q, (long long)i, (long long)j, got, (double)acc, tol);
      }
  free(a), free(b), free(c);
}

static void test_random_shapes(void) {
  bool prev = routine_gemm_blas();
  int cap = gemm_set_isa_cap(2);
  for (int t = 0; t < 240; t++) {
    bool f32 = t % 2 == 0, ta = rnd_int(2), tb = rnd_int(2);
    gemm_set_isa_cap(t / 2 % 3); /* AVX-512, AVX2, baseline in turn (as far as the CPU has them) */
    int64_t M = rnd_size(6), N = rnd_size((f32 ? 16 : 8) << rnd_int(2)), K = rnd_size(rnd_int(3) ? 16 : 256);
    int64_t B = rnd_int(4) ? 1 : 1 + rnd_int(3);
    int64_t i0 = 0, i1 = M, j0 = 0, j1 = N;
    if (rnd_int(3) == 0) { /* a sub-block, as one thread's share */
      i0 = rnd_int(M), i1 = i0 + 1 + rnd_int(M - i0);
      j0 = rnd_int(N), j1 = j0 + 1 + rnd_int(N - j0);
    }
    check_case(f32, false, B, M, K, N, ta, tb, i0, i1, j0, j1);
    check_case(f32, true, B, M, K, N, ta, tb, i0, i1, j0, j1); /* OpenBLAS where built with it */
  }
  gemm_set_isa_cap(cap);
  routine_gemm_set_blas(prev);
}

/* The blocking edges one at a time: K past KC (two and three k panels), M past MC, N past
 * NC (1024; 2048 before), K = 0 (zeros), single rows and columns. */
static void test_blocking_edges(void) {
  bool prev = routine_gemm_blas();
  static const int64_t shapes[][3] = {{7, 257, 17}, {13, 513, 9}, {97, 31, 35}, {193, 40, 33},
                                      {3, 5, 2100}, {2, 300, 4097}, {5, 0, 7}, {1, 1, 1},
                                      {1, 600, 1}, {200, 1, 200}};
  int cap = gemm_set_isa_cap(2);
  for (int isa = 2; isa >= 0; isa--) {
    gemm_set_isa_cap(isa);
    for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
      for (int v = 0; v < 16; v++) /* float32 or 64, a or b transposed, 1 or 2 batch entries */
        check_case(v & 1, false, 1 + (v >> 3), shapes[s][0], shapes[s][1], shapes[s][2], v & 2, v & 4, 0,
                   shapes[s][0], 0, shapes[s][2]);
  }
  gemm_set_isa_cap(cap);
  routine_gemm_set_blas(prev);
}

/* dot_general through the GEMM routine with jaxc's own kernel, eager and jit, batched with
 * a transposed operand, float32 and float64, against the plain loop. */
static jx_status batched_product(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = prim_dot_general(in[0], in[1], 1, (int[]){1}, (int[]){2}, 1, (int[]){0}, (int[]){0});
  return out[0] ? JX_OK : jx_last_status();
}

static void test_dot_general_own_kernel(void) {
  bool prev = routine_gemm_blas(), x64 = jx_config_x64_enabled();
  routine_gemm_set_blas(false);
  jx_config_enable_x64(true); /* float64 stays float64 */
  for (int d = 0; d < 2; d++) {
    bool f32 = d == 0;
    jx_dtype dt = f32 ? JX_FLOAT32 : JX_FLOAT64;
    size_t es = f32 ? 4 : 8;
    int64_t B = 2, M = 70, K = 131, N = 45; /* x: (B, K, M); y: (B, N, K) */
    void *xd = malloc((size_t)(B * K * M) * es), *yd = malloc((size_t)(B * N * K) * es);
    for (int64_t i = 0; i < B * K * M; i++) f32 ? (void)(((float *)xd)[i] = (float)rnd_val()) : (void)(((double *)xd)[i] = rnd_val());
    for (int64_t i = 0; i < B * N * K; i++) f32 ? (void)(((float *)yd)[i] = (float)rnd_val()) : (void)(((double *)yd)[i] = rnd_val());
    jx_scope_begin();
    jx_array *x = jx_array_from(xd, dt, 3, (int64_t[]){B, K, M}), *y = jx_array_from(yd, dt, 3, (int64_t[]){B, N, K});
    jx_fn *f = jx_fn_new("batched_product", 2, 1, batched_product, NULL), *jf = jx_jit(f);
    jx_array *z = NULL, *zj = NULL;
    CHECK_EQ_INT(jx_call(f, (jx_array *[]){x, y}, &z), JX_OK);
    CHECK_EQ_INT(jx_call(jf, (jx_array *[]){x, y}, &zj), JX_OK);
    double *got = z ? test_read_f64(z) : NULL, *gotj = zj ? test_read_f64(zj) : NULL;
    CHECK(got && gotj);
    CHECK(z && jx_dtype_of(z) == dt);
    double eps = f32 ? FLT_EPSILON : DBL_EPSILON;
    for (int64_t b = 0; got && gotj && b < B; b++)
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          long double acc = 0, mag = 0;
          for (int64_t k = 0; k < K; k++) {
            long double p = (long double)at((const char *)xd + (size_t)(b * K * M) * es, f32, true, M, K, i, k) *
                            at((const char *)yd + (size_t)(b * N * K) * es, f32, true, K, N, k, j);
            acc += p, mag += fabsl(p);
          }
          double tol = (double)(K + 2) * eps * (double)mag;
          CHECK_NEAR(got[(b * M + i) * N + j], (double)acc, tol);
          CHECK_NEAR(gotj[(b * M + i) * N + j], (double)acc, tol);
        }
    free(got), free(gotj), free(xd), free(yd);
    jx_fn_free(jf), jx_fn_free(f);
    jx_scope_end(0, NULL);
  }
  jx_config_enable_x64(x64);
  routine_gemm_set_blas(prev);
}

/* jnp.matmul of two operands */
static jx_status plain_product(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_matmul(in[0], in[1]);
  return out[0] ? JX_OK : jx_last_status();
}

/* A product's bits do not depend on the cpu's threads and equal the interpreter's, with
 * the default kernel choice (OpenBLAS without AVX-512: its sgemm rounds a call's rows
 * differently as they change, so routine_gemm_fixed_blocks splits by the shape and cores;
 * helper-73 found 893 of 8,320 elements of 130 x 64 x 130 differing on two threads).
 * Eager and jitted, 1, 2 and 3 threads, float32 and float64. */
static void test_threads_bitwise(void) {
  static const int64_t shapes[][3] = {{130, 64, 130}, {257, 64, 129}, {33, 500, 700}, {8, 300, 2000}, {64, 1000, 64}};
  int threads0 = pool_threads();
  bool x64 = jx_config_x64_enabled();
  jx_config_enable_x64(true);
  for (int d = 0; d < 2; d++)
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
      int64_t M = shapes[c][0], K = shapes[c][1], N = shapes[c][2];
      jx_dtype dt = d ? JX_FLOAT64 : JX_FLOAT32;
      size_t es = d ? 8 : 4;
      jx_scope_begin();
      void *xd = malloc((size_t)(M * K) * es), *yd = malloc((size_t)(K * N) * es);
      for (int64_t i = 0; i < M * K; i++) d ? (void)(((double *)xd)[i] = rnd_val()) : (void)(((float *)xd)[i] = (float)rnd_val());
      for (int64_t i = 0; i < K * N; i++) d ? (void)(((double *)yd)[i] = rnd_val()) : (void)(((float *)yd)[i] = (float)rnd_val());
      /* committed to the cpu: the test is about its threads (under JAXC_DEVICE=cuda the
       * default device's cuBLAS products round otherwise) */
      jx_array *x = jx_device_put(jx_array_from(xd, dt, 2, (int64_t[]){M, K}), "cpu");
      jx_array *y = jx_device_put(jx_array_from(yd, dt, 2, (int64_t[]){K, N}), "cpu");
      jx_fn *f = jx_fn_new("product", 2, 1, plain_product, NULL), *jf = jx_jit(f);
      jx_array *want = jx_matmul(jx_device_put(x, "interp"), jx_device_put(y, "interp"));
      size_t nb = (size_t)(M * N) * es;
      char *w = malloc(nb), *g = malloc(nb);
      CHECK(want && jx_read(want, w, nb) == JX_OK);
      for (int t = 1; t <= 3; t++) {
        pool_configure(t);
        jx_array *z[2] = {jx_matmul(x, y), NULL};
        CHECK_EQ_INT(jx_call(jf, (jx_array *[]){x, y}, &z[1]), JX_OK);
        for (int k = 0; k < 2; k++)
          CHECK_MSG(z[k] && jx_read(z[k], g, nb) == JX_OK && memcmp(g, w, nb) == 0,
                    "%s %lld x %lld x %lld, %d threads, %s: differs from the interpreter", jx_dtype_name(dt),
                    (long long)M, (long long)K, (long long)N, t, k ? "jit" : "eager");
      }
      pool_configure(threads0);
      free(w), free(g), free(xd), free(yd);
      jx_fn_free(jf), jx_fn_free(f);
      jx_scope_end(0, NULL);
    }
  jx_config_enable_x64(x64);
}

/* The GELU MLP step's products (B = 256, 1024 -> 4096 -> 1024: forward, and the
 * backward's transposed ones), which routine_gemm_block gives to jaxc's own kernel ahead
 * of OpenBLAS where the CPU has AVX-512 (gemm_own_faster), in blocks as two threads
 * split them; with BLAS on, so whichever kernel the default picks is checked. Sampled
 * rows and columns keep the long double loop short. */
static void test_mlp_shapes(void) {
  bool prev = routine_gemm_blas();
  static const int64_t shapes[][5] = {/* M, K, N, ta, tb */
                                      {256, 1024, 4096, 0, 0}, {256, 4096, 1024, 0, 0}, {256, 1024, 4096, 0, 1},
                                      {4096, 256, 1024, 1, 0}, {1024, 256, 4096, 1, 0}, {64, 256, 64, 0, 0}};
  for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
    const int64_t *p = shapes[s];
    bool rows = p[0] >= p[2];
    int64_t half = (rows ? p[0] : p[2]) / 2 / 16 * 16;
    /* the second thread's block: rows [half, M) or columns [half, N) */
    sample_step = 37;
    check_case(true, true, 1, p[0], p[1], p[2], p[3], p[4], rows ? half : 0, p[0], rows ? 0 : half, p[2]);
  }
  sample_step = 1;
  routine_gemm_set_blas(prev);
}

/* gemm_sub: c -= op(a) @ op(b) on sub-matrices of larger arrays (leading dimensions past
 * the block), for each ISA, against a long double loop; elements outside c's block keep
 * their values. */
static void test_gemm_sub(void) {
  for (int cap = 0; cap <= 2; cap++) {
    int old = gemm_set_isa_cap(cap);
    for (int t = 0; t < 24; t++) {
      bool f32 = t % 2 == 0, ta = rnd_int(2), tb = rnd_int(2);
      int64_t M = rnd_size(6), N = rnd_size(32), K = t < 4 ? 256 + rnd_int(40) : rnd_size(16);
      int64_t lda = (ta ? M : K) + rnd_int(5), ldb = (tb ? K : N) + rnd_int(5), ldc = N + rnd_int(5);
      int64_t na = (ta ? K : M) * lda, nb = (tb ? N : K) * ldb, nc = M * ldc;
      size_t es = f32 ? 4 : 8;
      void *a = malloc((size_t)na * es), *b = malloc((size_t)nb * es), *c = malloc((size_t)nc * es);
      double *c0 = malloc((size_t)nc * sizeof *c0);
      for (int64_t i = 0; i < na; i++) f32 ? (void)(((float *)a)[i] = (float)rnd_val()) : (void)(((double *)a)[i] = rnd_val());
      for (int64_t i = 0; i < nb; i++) f32 ? (void)(((float *)b)[i] = (float)rnd_val()) : (void)(((double *)b)[i] = rnd_val());
      for (int64_t i = 0; i < nc; i++) {
        c0[i] = f32 ? (double)(float)rnd_val() : rnd_val();
        f32 ? (void)(((float *)c)[i] = (float)c0[i]) : (void)(((double *)c)[i] = c0[i]);
      }
      bool ok = f32 ? gemm_sub_f32(a, lda, ta, b, ldb, tb, c, ldc, M, N, K)
                    : gemm_sub_f64(a, lda, ta, b, ldb, tb, c, ldc, M, N, K);
      CHECK(ok);
      double eps = f32 ? FLT_EPSILON : DBL_EPSILON, worst = 0;
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < ldc; j++) {
          double got = f32 ? ((float *)c)[i * ldc + j] : ((double *)c)[i * ldc + j];
          if (j >= N) {
            CHECK_MSG(got == c0[i * ldc + j], "gemm_sub wrote outside c at (%lld, %lld)", (long long)i, (long long)j);
            continue;
          }
          long double want = c0[i * ldc + j], mag = fabsl(want);
          for (int64_t k = 0; k < K; k++) {
            double x = f32 ? ((float *)a)[ta ? k * lda + i : i * lda + k] : ((double *)a)[ta ? k * lda + i : i * lda + k];
            double y = f32 ? ((float *)b)[tb ? j * ldb + k : k * ldb + j] : ((double *)b)[tb ? j * ldb + k : k * ldb + j];
            want -= (long double)x * y, mag += fabsl((long double)x * y);
          }
          double e = (double)(fabsl((long double)got - want) / ((double)(K + 2) * eps * (double)mag + 1e-300));
          if (e > worst) worst = e;
        }
      CHECK_MSG(worst <= 1, "gemm_sub %s cap %d %lldx%lldx%lld ta %d tb %d: error %g of the bound", f32 ? "f32" : "f64",
                cap, (long long)M, (long long)N, (long long)K, ta, tb, worst);
      free(a), free(b), free(c), free(c0);
    }
    gemm_set_isa_cap(old);
  }
}

int main(void) {
  TEST_RUN(test_mlp_shapes);
  TEST_RUN(test_random_shapes);
  TEST_RUN(test_blocking_edges);
  TEST_RUN(test_gemm_sub);
  TEST_RUN(test_dot_general_own_kernel);
  TEST_RUN(test_threads_bitwise);
  return test_finish();
}
