/* test_jit_dot_unrolled.c -- float products contracting few elements lowered as one fused
 * elementwise expression (trace/lower.c, lower_dot_unrolled; Backend.dot_unroll_max_k,
 * 16 on cuda, 0 on the cpu): with config_set_dot_unroll_max_k(16) every device runs
 * them, and each must give what the GEMM / reduction-kernel lowering gives (the oracle:
 * the same jitted function lowered with the setting at 0) -- K from 1 to 16, operands
 * transposed (a weight's W^T, materialized contiguous), batched, contracting two axes,
 * computed operands, float16/bfloat16, zero-size, and the MLP's g @ W2^T with
 * the relu backward fused into the one kernel. Products with few output columns
 * lowered as row reductions over K (lower_dot_rows; Backend.dot_rows_max_n, 16 on cuda,
 * 0 on the cpu) are checked the same way (test_rows). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "jit/jit.h"
#include "test.h"

static jx_array *randn(uint32_t *seed, int ndim, const int64_t *shape, jx_dtype dt) {
  jx_array *a = test_randn(seed, ndim, shape);
  if (dt != JX_FLOAT32) {
    jx_array *b = jx_astype(a, dt);
    jx_free(a);
    a = b;
  }
  return a;
}

typedef enum { PLAIN, TRANS_B, TRANS_A, BATCHED, TWO_AXES, COMPUTED, RELU_BWD, SHARED_RELU, SHARED_W } Case;
static const char *const case_names[] = {"plain",    "trans_b",  "trans_a",     "batched", "two_axes",
                                         "computed", "relu_bwd", "shared_relu", "shared_w"};

/* in[0], in[1] (and in[2]: the relu's input) -> the product for case *ctx */
static jx_status product(void *ctx, jx_array *const *in, jx_array **out) {
  Case c = *(const Case *)ctx;
  jx_array *x = in[0], *y = in[1];
  switch (c) {
  case PLAIN: case BATCHED: out[0] = jx_matmul(x, y); break;
  case TRANS_B: out[0] = jx_matmul(x, jx_swapaxes(y, 0, 1)); break;       /* x (M,K) @ y(N,K)^T */
  case TRANS_A: out[0] = jx_matmul(jx_swapaxes(x, 0, 1), y); break;       /* x(K,M)^T @ y (K,N) */
  case TWO_AXES: out[0] = jx_tensordot(x, y, 2); break;                   /* (M,K1,K2) . (K1,K2,N) */
  case COMPUTED: out[0] = jx_matmul(jx_tanh(x), jx_mul(y, y)); break;
  case SHARED_RELU: { /* h = relu(x + 0.5); h^T @ (h @ y): an MLP's relu read by its product's rows
                       (recomputed there) and stored for the weight gradient's GEMM */
    jx_array *h = jx_maximum(jx_add(x, jx_scalar(0.5)), jx_scalar(0.0));
    out[0] = jx_matmul(jx_swapaxes(h, 0, 1), jx_matmul(h, y));
    break;
  }
  case SHARED_W: /* (x @ W) @ W^T: W^T stored for the rows kernel and for the unrolled product */
    out[0] = jx_matmul(jx_matmul(x, y), jx_swapaxes(y, 0, 1));
    break;
  case RELU_BWD: /* where(h > 0, g @ W^T, 0) with W (N, K) */
    out[0] = jx_where(jx_greater(in[2], jx_scalar(0.0)), jx_matmul(x, jx_swapaxes(y, 0, 1)), jx_scalar(0.0));
    break;
  }
  return out[0] ? JX_OK : jx_last_status();
}

/* The jitted product with the unrolled lowering at `k` and the row lowering at `rows`
 * (0: off). */
static int last_kernels; /* kernel steps of run_with's last program */
static jx_array *run_with(Case c, int k, int rows, jx_array *const *in, int nin, int *routines) {
  config_set_dot_unroll_max_k(k);
  config_set_dot_rows_max_n(rows);
  Case *ctx = malloc(sizeof *ctx);
  *ctx = c;
  jx_fn *fn = jx_fn_new(case_names[c], nin, 1, product, ctx), *jf = jx_jit(fn);
  jx_array *out = NULL;
  CHECK_MSG(jx_call(jf, in, &out) == JX_OK, "%s (k %d): %s", case_names[c], k, jx_last_error());
  const Program *p = out ? jit_program_for(jf, in) : NULL;
  if (routines) *routines = p ? jit_program_nroutines(p) : -1;
  last_kernels = p ? jit_program_nkernels(p) : -1;
  jx_fn_free(jf), jx_fn_free(fn), free(ctx);
  config_set_dot_unroll_max_k(-1);
  config_set_dot_rows_max_n(-1);
  return out;
}

static jx_array *run(Case c, int k, jx_array *const *in, int nin, int *routines) {
  return run_with(c, k, 0, in, nin, routines);
}

static void check_close(jx_array *a, jx_array *b, double rel, const char *what) {
  CHECK_MSG(a && b && jx_size(a) == jx_size(b), "%s: sizes", what);
  if (!a || !b || jx_size(a) != jx_size(b)) return;
  int64_t n = jx_size(a);
  jx_array *a64 = jx_astype(a, JX_FLOAT32), *b64 = jx_astype(b, JX_FLOAT32);
  float *x = malloc((size_t)(n ? n : 1) * sizeof *x), *y = malloc((size_t)(n ? n : 1) * sizeof *y);
  CHECK(jx_read(a64, x, (size_t)n * sizeof *x) == JX_OK && jx_read(b64, y, (size_t)n * sizeof *y) == JX_OK);
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(x[i] - y[i]) <= rel * (1.0 + fabs(y[i])))) {
      if (bad++ < 3) CHECK_MSG(false, "%s[%lld]: %.9g vs %.9g", what, (long long)i, x[i], y[i]);
    }
  CHECK_MSG(bad == 0, "%s: %d of %lld differ", what, bad, (long long)n);
  free(x), free(y), jx_free(a64), jx_free(b64);
}

static double tolerance(jx_dtype dt) {
  return dt == JX_FLOAT32 ? 2e-5 : dt == JX_FLOAT16 ? 4e-3 : 3e-2;
}

static void one_case(Case c, int64_t M, int64_t K, int64_t N, jx_dtype dt) {
  uint32_t seed = (uint32_t)(c * 977 + K * 31 + M);
  jx_array *in[3] = {NULL, NULL, NULL};
  int nin = 2;
  switch (c) {
  case PLAIN: case COMPUTED: case SHARED_RELU: case SHARED_W:
    in[0] = randn(&seed, 2, (int64_t[]){M, K}, dt), in[1] = randn(&seed, 2, (int64_t[]){K, N}, dt);
    break;
  case TRANS_B: case RELU_BWD:
    in[0] = randn(&seed, 2, (int64_t[]){M, K}, dt), in[1] = randn(&seed, 2, (int64_t[]){N, K}, dt);
    if (c == RELU_BWD) in[2] = randn(&seed, 2, (int64_t[]){M, N}, dt), nin = 3;
    break;
  case TRANS_A: in[0] = randn(&seed, 2, (int64_t[]){K, M}, dt), in[1] = randn(&seed, 2, (int64_t[]){K, N}, dt); break;
  case BATCHED:
    in[0] = randn(&seed, 3, (int64_t[]){3, M, K}, dt), in[1] = randn(&seed, 3, (int64_t[]){3, K, N}, dt);
    break;
  case TWO_AXES: /* K = 2 x (K / 2) */
    in[0] = randn(&seed, 3, (int64_t[]){M, 2, K / 2}, dt), in[1] = randn(&seed, 3, (int64_t[]){2, K / 2, N}, dt);
    break;
  }
  char what[128];
  snprintf(what, sizeof what, "%s M=%lld K=%lld N=%lld %s", case_names[c], (long long)M, (long long)K, (long long)N,
           jx_dtype_name(dt));
  int r_ref = -1, r_new = -1;
  jx_array *ref = run(c, 0, in, nin, &r_ref), *got = run(c, 16, in, nin, &r_new);
  check_close(got, ref, tolerance(dt), what);
  /* unrolled: no GEMM routine left */
  CHECK_MSG(r_new == 0, "%s: %d routines with the unrolled lowering", what, r_new);
  jx_free(ref), jx_free(got);
  for (int i = 0; i < nin; i++) jx_free(in[i]);
}

static void test_shapes(void) {
  const int64_t ks[] = {1, 2, 3, 10, 16};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    one_case(PLAIN, 64, ks[i], 96, JX_FLOAT32);
    one_case(TRANS_B, 64, ks[i], 96, JX_FLOAT32);
    one_case(TRANS_A, 40, ks[i], 72, JX_FLOAT32);
    one_case(BATCHED, 17, ks[i], 33, JX_FLOAT32);
  }
  one_case(TWO_AXES, 48, 10, 80, JX_FLOAT32);
  one_case(COMPUTED, 64, 10, 96, JX_FLOAT32);
  one_case(RELU_BWD, 256, 10, 512, JX_FLOAT32);
}

static void test_dtypes(void) {
  one_case(TRANS_B, 64, 10, 96, JX_FLOAT16);
  one_case(TRANS_B, 64, 10, 96, JX_BFLOAT16);
}

/* Past dot_unroll_max_k the product stays a GEMM; zero-size outputs give zero-size. */
static void test_limits(void) {
  uint32_t seed = 5;
  jx_array *in[2] = {randn(&seed, 2, (int64_t[]){128, 17}, JX_FLOAT32), randn(&seed, 2, (int64_t[]){17, 256}, JX_FLOAT32)};
  int routines = -1;
  jx_array *out = run(PLAIN, 16, in, 2, &routines);
  CHECK_MSG(routines == 1, "K = 17 past the limit: %d routines", routines);
  jx_free(out), jx_free(in[0]), jx_free(in[1]);
  in[0] = randn(&seed, 2, (int64_t[]){0, 4}, JX_FLOAT32), in[1] = randn(&seed, 2, (int64_t[]){4, 8}, JX_FLOAT32);
  out = run(PLAIN, 16, in, 2, NULL);
  CHECK(out && jx_size(out) == 0 && jx_ndim(out) == 2);
  jx_free(out), jx_free(in[0]), jx_free(in[1]);
}

/* Few output columns as a row reduction over K (lower_dot_rows): the same as the GEMM /
 * reduction-kernel lowering, with no routine left where x's rows are contiguous (y
 * transposed or not, batched, computed x, float16/bfloat16, N from 1 to 16) and the GEMM
 * kept where they are not (x^T, as a weight gradient h^T @ g). */
static void rows_case(Case c, int64_t M, int64_t K, int64_t N, jx_dtype dt, int want_routines) {
  uint32_t seed = (uint32_t)(c * 131 + K * 7 + N);
  jx_array *in[2];
  switch (c) {
  case TRANS_B: in[0] = randn(&seed, 2, (int64_t[]){M, K}, dt), in[1] = randn(&seed, 2, (int64_t[]){N, K}, dt); break;
  case TRANS_A: in[0] = randn(&seed, 2, (int64_t[]){K, M}, dt), in[1] = randn(&seed, 2, (int64_t[]){K, N}, dt); break;
  case BATCHED:
    in[0] = randn(&seed, 3, (int64_t[]){3, M, K}, dt), in[1] = randn(&seed, 3, (int64_t[]){3, K, N}, dt);
    break;
  default: in[0] = randn(&seed, 2, (int64_t[]){M, K}, dt), in[1] = randn(&seed, 2, (int64_t[]){K, N}, dt); break;
  }
  char what[128];
  snprintf(what, sizeof what, "rows %s M=%lld K=%lld N=%lld %s", case_names[c], (long long)M, (long long)K,
           (long long)N, jx_dtype_name(dt));
  int r_ref = -1, r_new = -1;
  jx_array *ref = run_with(c, 0, 0, in, 2, &r_ref), *got = run_with(c, 0, 16, in, 2, &r_new);
  /* sums of K products of numbers in [-2, 2]: relative to their size sqrt(K) * 4 */
  check_close(got, ref, tolerance(dt) * 4.0 * sqrt((double)K), what);
  CHECK_MSG(r_new == want_routines, "%s: %d routines, expected %d", what, r_new, want_routines);
  jx_free(ref), jx_free(got), jx_free(in[0]), jx_free(in[1]);
}

static void test_rows(void) {
  const int64_t ns[] = {1, 3, 10, 16};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    rows_case(PLAIN, 300, 512, ns[i], JX_FLOAT32, 0);
    rows_case(TRANS_B, 130, 77, ns[i], JX_FLOAT32, 0);
  }
  rows_case(PLAIN, 64, 4100, 10, JX_FLOAT32, 0); /* rows longer than a warp's 512 */
  rows_case(BATCHED, 50, 96, 10, JX_FLOAT32, 0);
  rows_case(COMPUTED, 256, 200, 10, JX_FLOAT32, 0);
  rows_case(SHARED_RELU, 300, 512, 10, JX_FLOAT32, 1);
  rows_case(PLAIN, 256, 300, 10, JX_FLOAT16, 0);
  rows_case(PLAIN, 256, 300, 10, JX_BFLOAT16, 0);
  rows_case(TRANS_A, 512, 1024, 10, JX_FLOAT32, 1); /* x^T: the GEMM, operands as flags */
  rows_case(PLAIN, 256, 300, 17, JX_FLOAT32, 1);    /* past the limit */
}

/* Products whose left operand is stored transposed -- x^T of x (K, M) rows, a weight
 * gradient -- as one column-reduction kernel over K (trace/lower.c, lower_dot_cols;
 * Backend.dot_cols, off but for config_set_dot_cols / JAXC_DOT_COLS): the GEMM lowering is
 * the oracle. N from 1 to 16, float16/bfloat16, and the MLP's h^T @ g with h = relu(x +
 * 0.5) recomputed in the kernel (no routine, and h not stored: one step fewer). */
static void test_cols(void) {
  config_set_dot_cols(1);
  const int64_t ns[] = {1, 3, 10, 16};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) rows_case(TRANS_A, 512, 1024, ns[i], JX_FLOAT32, 0);
  rows_case(TRANS_A, 40, 300, 10, JX_FLOAT32, 0);
  rows_case(TRANS_A, 256, 300, 10, JX_FLOAT16, 0);
  rows_case(TRANS_A, 256, 300, 10, JX_BFLOAT16, 0);
  rows_case(SHARED_RELU, 300, 512, 10, JX_FLOAT32, 0);
  int k_cols = last_kernels;
  config_set_dot_cols(0);
  rows_case(SHARED_RELU, 300, 512, 10, JX_FLOAT32, 1);
  /* the column kernel in place of the GEMM routine and of the kernel storing h */
  CHECK_MSG(k_cols == last_kernels, "shared_relu: %d kernels with the column kernel, %d without", k_cols,
            last_kernels);
  config_set_dot_cols(-1);
}

/* A large float32 GEMM reading a program input transposed as its left operand (x^T @ dh,
 * a first layer's weight gradient) stores it K-major first where Backend.gemm_k_major
 * (config_set_gemm_k_major) asks: one transpose kernel more, the same product. */
static jx_status xt_dh(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_matmul(jx_swapaxes(in[0], 0, 1), in[1]);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_k_major(void) {
  uint32_t seed = 9;
  jx_array *in[2] = {randn(&seed, 2, (int64_t[]){1024, 512}, JX_FLOAT32), randn(&seed, 2, (int64_t[]){1024, 512}, JX_FLOAT32)};
  jx_array *res[2] = {NULL, NULL};
  int kernels[2] = {-1, -1}, routines[2] = {-1, -1};
  for (int on = 0; on < 2; on++) {
    config_set_gemm_k_major(on);
    jx_fn *fn = jx_fn_new("xt_dh", 2, 1, xt_dh, NULL), *jf = jx_jit(fn);
    CHECK_MSG(jx_call(jf, in, &res[on]) == JX_OK, "x^T @ dh (k-major %d): %s", on, jx_last_error());
    const Program *p = res[on] ? jit_program_for(jf, in) : NULL;
    kernels[on] = p ? jit_program_nkernels(p) : -1, routines[on] = p ? jit_program_nroutines(p) : -1;
    jx_fn_free(jf), jx_fn_free(fn);
  }
  config_set_gemm_k_major(-1);
  check_close(res[1], res[0], tolerance(JX_FLOAT32) * 4.0 * sqrt(1024.0), "x^T @ dh k-major");
  CHECK_MSG(routines[0] == 1 && routines[1] == 1 && kernels[1] == kernels[0] + 1,
            "x^T @ dh: %d / %d routines, %d / %d kernels", routines[0], routines[1], kernels[0], kernels[1]);
  jx_free(res[0]), jx_free(res[1]), jx_free(in[0]), jx_free(in[1]);
}

/* A kernel computed twice over the same inputs runs once (jit/lower.c, dedup_kernels):
 * (x @ W) @ W^T with the rows lowering (W^T stored for the rows kernel) and the unrolled
 * one (W^T stored for the elementwise product) transposes W in one kernel, not two: the
 * transpose, the rows kernel and the product's kernel. The oracle: both lowerings off. */
static void test_dedup(void) {
  uint32_t seed = 5;
  jx_array *in[2] = {randn(&seed, 2, (int64_t[]){200, 64}, JX_FLOAT32), randn(&seed, 2, (int64_t[]){64, 10}, JX_FLOAT32)};
  int r_new = -1;
  jx_array *ref = run_with(SHARED_W, 0, 0, in, 2, NULL), *got = run_with(SHARED_W, 16, 16, in, 2, &r_new);
  check_close(got, ref, tolerance(JX_FLOAT32) * 8.0, "shared_w");
  CHECK_MSG(r_new == 0 && last_kernels == 3, "shared_w: %d routines, %d kernels", r_new, last_kernels);
  jx_free(ref), jx_free(got), jx_free(in[0]), jx_free(in[1]);
}

/* An update of a GEMM's result folded into the GEMM (jit/lower.c, fuse_gemm_update;
 * Backend.gemm_update, on on cuda; config_set_gemm_update turns it on here): W - 0.1 (x^T @
 * g) (an SGD step's weight update, x^T as a flag), W + 2 (x @ y) written either way
 * round, and not where the product has a second reader. The oracle: the same jitted
 * function with the fold off. */
typedef enum { UPD_SGD, UPD_ADD, UPD_ADD_FLIPPED, UPD_SHARED } UpdCase;
static jx_status update_fn(void *ctx, jx_array *const *in, jx_array **out) {
  UpdCase c = *(const UpdCase *)ctx;
  jx_array *w = in[0], *x = in[1], *y = in[2];
  switch (c) {
  case UPD_SGD: out[0] = jx_subtract(w, jx_multiply(jx_scalar(0.1), jx_matmul(jx_swapaxes(x, 0, 1), y))); break;
  case UPD_ADD: out[0] = jx_add(w, jx_multiply(jx_matmul(jx_swapaxes(x, 0, 1), y), jx_scalar(2.0))); break;
  case UPD_ADD_FLIPPED: out[0] = jx_add(jx_matmul(jx_swapaxes(x, 0, 1), y), w); break;
  case UPD_SHARED: { /* the product read twice: stays a kernel of its own */
    jx_array *g = jx_matmul(jx_swapaxes(x, 0, 1), y);
    out[0] = jx_add(jx_subtract(w, g), jx_multiply(g, g));
    break;
  }
  }
  return out[0] ? JX_OK : jx_last_status();
}

static jx_array *run_update(UpdCase c, int on, jx_array *const *in, int *kernels, int *routines) {
  config_set_gemm_update(on);
  UpdCase *ctx = malloc(sizeof *ctx);
  *ctx = c;
  jx_fn *fn = jx_fn_new("update", 3, 1, update_fn, ctx), *jf = jx_jit(fn);
  jx_array *out = NULL;
  CHECK_MSG(jx_call(jf, in, &out) == JX_OK, "update %d (fold %d): %s", (int)c, on, jx_last_error());
  const Program *p = out ? jit_program_for(jf, in) : NULL;
  *kernels = p ? jit_program_nkernels(p) : -1;
  *routines = p ? jit_program_nroutines(p) : -1;
  jx_fn_free(jf), jx_fn_free(fn), free(ctx);
  config_set_gemm_update(-1);
  return out;
}

static void test_gemm_update(void) {
  const int64_t M = 96, K = 300, N = 80; /* W (M, N) = x (K, M)^T @ y (K, N): a GEMM */
  for (int c = UPD_SGD; c <= UPD_SHARED; c++) {
    uint32_t seed = (uint32_t)(11 + c);
    jx_array *in[3] = {randn(&seed, 2, (int64_t[]){M, N}, JX_FLOAT32), randn(&seed, 2, (int64_t[]){K, M}, JX_FLOAT32),
                       randn(&seed, 2, (int64_t[]){K, N}, JX_FLOAT32)};
    int k0, r0, k1, r1;
    jx_array *ref = run_update((UpdCase)c, 0, in, &k0, &r0), *got = run_update((UpdCase)c, 1, in, &k1, &r1);
    char what[64];
    snprintf(what, sizeof what, "gemm update case %d", c);
    check_close(got, ref, tolerance(JX_FLOAT32) * 4.0 * sqrt((double)K), what);
    CHECK_MSG(r0 == 1 && r1 == 1, "%s: %d / %d routines", what, r0, r1);
    int want = c == UPD_SHARED ? k0 : k0 - 1;
    CHECK_MSG(k1 == want, "%s: %d kernels folded, %d unfolded (expected %d)", what, k1, k0, want);
    jx_free(ref), jx_free(got);
    for (int i = 0; i < 3; i++) jx_free(in[i]);
  }
}

int main(void) {
  TEST_RUN(test_shapes);
  TEST_RUN(test_dtypes);
  TEST_RUN(test_limits);
  TEST_RUN(test_rows);
  TEST_RUN(test_gemm_update);
  TEST_RUN(test_dedup);
  TEST_RUN(test_cols);
  TEST_RUN(test_k_major);
  return test_finish();
}
