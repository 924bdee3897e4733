/* bench_gpu.c -- jaxc's side of the GPU benchmark (bench/gpu/run.sh runs it next to
 * bench/gpu/peers.py, JAX and PyTorch on the same GPU, and prints ratios). Each workload
 * prints "name value unit": the median over 7 timed loops of `reps` calls after a
 * warm-up (compilation excluded), each loop ended by jx_block_until_ready, divided by
 * reps. Public API only; everything on JAXC_DEVICE (run with JAXC_DEVICE=cuda). */
#define _GNU_SOURCE
#include <jaxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die_if_error(const char *what) {
  if (jx_last_status() != JX_OK) {
    fprintf(stderr, "bench_gpu %s: %s\n", what, jx_last_error());
    exit(1);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Seconds per call of f: median of 7 loops of reps calls (outputs of the last call of a
 * loop waited for; earlier ones are freed as they come, as a training loop would). */
static double host_last; /* host time per call of time_fn's last loop (until the calls returned) */
static double time_fn(jx_fn *f, jx_array *const *in, int reps) {
  int nout = jx_fn_nout(f);
  jx_array *out[8];
  jx_call(f, in, out); /* warm-up: trace, compile, allocate */
  for (int o = 0; o < nout; o++) jx_block_until_ready(out[o]), jx_free(out[o]);
  die_if_error("warm-up");
  double ts[7];
  for (int t = 0; t < 7; t++) {
    double t0 = now();
    for (int r = 0; r < reps; r++) {
      jx_call(f, in, out);
      if (r == reps - 1) host_last = (now() - t0) / reps, jx_block_until_ready(out[0]);
      for (int o = 0; o < nout; o++) jx_free(out[o]);
    }
    ts[t] = (now() - t0) / reps;
  }
  die_if_error("call");
  qsort(ts, 7, sizeof ts[0], cmp_double);
  return ts[3];
}

static jx_array *rand_arr(int ndim, const int64_t *shape, unsigned seed, jx_dtype d) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
  }
  jx_array *a = jx_array_from(v, JX_FLOAT32, ndim, shape);
  free(v);
  if (d != JX_FLOAT32) {
    jx_array *b = jx_astype(a, d);
    jx_free(a);
    a = b;
  }
  return a;
}

static jx_status matmul_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_matmul(in[0], in[1]);
  return JX_OK;
}

/* tanh(1.5x + 0.25) * exp(-x*x) + sqrt(|x| + 1) - x/3 */
static jx_status chain_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *x = in[0];
  jx_array *a = jx_tanh(jx_add(jx_mul(x, jx_scalar(1.5)), jx_scalar(0.25)));
  jx_array *b = jx_exp(jx_negative(jx_mul(x, x)));
  jx_array *c = jx_sqrt(jx_add(jx_abs(x), jx_scalar(1.0)));
  out[0] = jx_sub(jx_add(jx_mul(a, b), c), jx_div(x, jx_scalar(3.0)));
  return JX_OK;
}

static jx_status softmax_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_nn_softmax(in[0], 1, (int[]){-1}, NULL);
  return JX_OK;
}

static jx_status transpose_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_multiply(jx_transpose(in[0], NULL), jx_scalar(2.0));
  return JX_OK;
}

static jx_status sum_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(in[0], 0, NULL, false);
  return JX_OK;
}

static jx_status argmax_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_argmax(in[0], 0, false);
  return JX_OK;
}

static jx_status sort_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sort(in[0], 0, false);
  return JX_OK;
}

/* MLP 784-512-10, ReLU, softmax cross-entropy with one-hot labels; SGD step. */
static jx_status mlp_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *w1 = in[0], *b1 = in[1], *w2 = in[2], *b2 = in[3], *x = in[4], *y = in[5];
  jx_array *h = jx_nn_relu(jx_add(jx_matmul(x, w1), b1));
  jx_array *logits = jx_add(jx_matmul(h, w2), b2);
  jx_array *logp = jx_nn_log_softmax(logits, 1, (int[]){-1}, NULL);
  out[0] = jx_negative(jx_mean(jx_sum(jx_mul(logp, y), 1, (int[]){1}, false), 0, NULL, false));
  return JX_OK;
}

static jx_fn *mlp_grad;
static jx_status mlp_step(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *res[5];
  jx_status s = jx_call(mlp_grad, in, res);
  if (s != JX_OK) return s;
  out[4] = res[0];
  for (int i = 0; i < 4; i++) out[i] = jx_sub(in[i], jx_mul(res[1 + i], jx_scalar(0.01)));
  return JX_OK;
}

/* only: "" (every workload) or a comma-separated list of names' substrings */
static bool want(const char *only, const char *name) {
  if (!*only) return true;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", only);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (strstr(name, t)) return true;
  return false;
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : "";
  jx_scope_begin();
  const char *dev = jx_device_of(jx_scalar(0.0));
  printf("device %s\n", dev);
  if (want(only, "matmul")) {
    static const struct { const char *name, *precision; jx_dtype d; } mm[] = {
        {"matmul_8192_bf16", "default", JX_BFLOAT16},
        {"matmul_8192_tf32", "default", JX_FLOAT32},
        {"matmul_8192_f32", "highest", JX_FLOAT32}};
    for (int i = 0; i < 3; i++) {
      int64_t n = 8192;
      jx_config_default_matmul_precision(mm[i].precision);
      jx_array *a = rand_arr(2, (int64_t[]){n, n}, 1, mm[i].d), *b = rand_arr(2, (int64_t[]){n, n}, 2, mm[i].d);
      jx_fn *f = jx_fn_new("matmul", 2, 1, matmul_fn, NULL);
      double t = time_fn(f, (jx_array *[]){a, b}, mm[i].d == JX_BFLOAT16 ? 20 : 5);
      printf("%s %.1f TFLOP/s\n", mm[i].name, 2.0 * n * n * n / t / 1e12);
      fflush(stdout);
      jx_fn_free(f), jx_free(a), jx_free(b);
    }
    jx_config_default_matmul_precision("default");
  }
  if (want(only, "chain")) {
    int64_t n = (int64_t)1 << 28;
    jx_array *x = rand_arr(1, &n, 3, JX_FLOAT32);
    jx_fn *c = jx_jit(jx_fn_new("chain", 1, 1, chain_fn, NULL));
    double t = time_fn(c, &x, 10);
    printf("chain_2^28 %.3f TB/s\n", 8.0 * n / t / 1e12);
    fflush(stdout);
    jx_fn_free(c), jx_free(x);
  }
  if (want(only, "softmax")) {
    jx_array *x = rand_arr(2, (int64_t[]){4096, 4096}, 4, JX_FLOAT32);
    jx_fn *f = jx_jit(jx_fn_new("softmax", 1, 1, softmax_fn, NULL));
    printf("softmax_4096x4096 %.4f ms\n", time_fn(f, &x, 20) * 1e3);
    fflush(stdout);
    jx_fn_free(f), jx_free(x);
  }
  if (want(only, "transpose")) { /* x.T * 2: bytes read + written a second */
    jx_array *x = rand_arr(2, (int64_t[]){8192, 8192}, 7, JX_FLOAT32);
    jx_fn *f = jx_jit(jx_fn_new("transpose", 1, 1, transpose_fn, NULL));
    printf("transpose_8192 %.3f TB/s\n", 8.0 * 8192 * 8192 / time_fn(f, &x, 20) / 1e12);
    fflush(stdout);
    jx_fn_free(f), jx_free(x);
  }
  if (want(only, "sum") || want(only, "argmax")) {
    int64_t n = (int64_t)1 << 28;
    jx_array *x = rand_arr(1, &n, 5, JX_FLOAT32);
    jx_fn *s = jx_jit(jx_fn_new("sum", 1, 1, sum_fn, NULL));
    jx_fn *am = jx_jit(jx_fn_new("argmax", 1, 1, argmax_fn, NULL));
    if (want(only, "sum")) printf("sum_2^28 %.4f ms\n", time_fn(s, &x, 10) * 1e3);
    if (want(only, "argmax")) printf("argmax_2^28 %.4f ms\n", time_fn(am, &x, 10) * 1e3);
    fflush(stdout);
    jx_fn_free(s), jx_fn_free(am), jx_free(x);
  }
  if (want(only, "sort")) {
    int64_t n = (int64_t)1 << 27;
    jx_array *x = rand_arr(1, &n, 6, JX_FLOAT32);
    jx_fn *f = jx_fn_new("sort", 1, 1, sort_fn, NULL);
    printf("sort_2^27 %.4f ms\n", time_fn(f, &x, 5) * 1e3);
    fflush(stdout);
    jx_fn_free(f), jx_free(x);
  }
  if (want(only, "mlp")) {
    mlp_grad = jx_value_and_grad(jx_fn_new("mlp_loss", 6, 1, mlp_loss, NULL), 4, (int[]){0, 1, 2, 3});
    jx_fn *step = jx_jit(jx_fn_new("mlp_step", 6, 5, mlp_step, NULL));
    /* JAXC_BENCH_MLP_BATCH=n: that batch alone (profiling one step's kernels) */
    const char *only_b = getenv("JAXC_BENCH_MLP_BATCH");
    int64_t b0 = only_b ? atoll(only_b) : 128, b1 = only_b ? b0 : 4096;
    for (int64_t batch = b0; batch <= b1; batch *= 32) {
      /* the biases as materialized zeros, as JAX's jnp.zeros are: jx_zeros is a broadcast
       * view, which every call would first copy contiguous (two small kernels launched
       * before the graph, k_copy_512 and k_copy_10 in ncu), where a training loop passes
       * the previous step's (contiguous) outputs */
      static const float zeros[512];
      jx_array *in[6] = {rand_arr(2, (int64_t[]){784, 512}, 6, JX_FLOAT32),
                         jx_array_from(zeros, JX_FLOAT32, 1, (int64_t[]){512}),
                         rand_arr(2, (int64_t[]){512, 10}, 7, JX_FLOAT32),
                         jx_array_from(zeros, JX_FLOAT32, 1, (int64_t[]){10}),
                         rand_arr(2, (int64_t[]){batch, 784}, 8, JX_FLOAT32), NULL};
      float *y = calloc((size_t)batch * 10, sizeof *y);
      for (int64_t i = 0; i < batch; i++) y[i * 10 + i % 10] = 1.0f;
      in[5] = jx_array_from(y, JX_FLOAT32, 2, (int64_t[]){batch, 10});
      free(y);
      printf("mlp_step_b%lld %.4f ms\n", (long long)batch, time_fn(step, in, 100) * 1e3);
      printf("(host time per step %.4f ms)\n", host_last * 1e3);
      fflush(stdout);
      for (int i = 0; i < 6; i++) jx_free(in[i]);
    }
  }
  if (want(only, "eager")) {
    jx_array *a = rand_arr(1, (int64_t[]){1000}, 9, JX_FLOAT32), *b = rand_arr(1, (int64_t[]){1000}, 10, JX_FLOAT32);
    for (int i = 0; i < 100; i++) jx_free(jx_add(a, b)); /* warm the caches */
    jx_block_until_ready(a);
    int reps = 20000;
    double t0 = now();
    for (int i = 0; i < reps; i++) jx_free(jx_add(a, b));
    double host = (now() - t0) / reps;
    jx_block_until_ready(a);
    printf("eager_add_1000 %.2f us\n", host * 1e6);
  }
  die_if_error("end");
  jx_scope_end(0, NULL);
  return 0;
}
