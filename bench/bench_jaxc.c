/* bench_jaxc.c -- jaxc's side of the benchmark suite (bench/run.py runs the peers and
 * prints ratios). Each workload prints one line "name value unit" with the best time
 * of several repetitions after a warm-up, so compile time is excluded (it is measured
 * separately as jit_compile). Only the public API is used. */
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
    fprintf(stderr, "bench %s: %s\n", what, jx_last_error());
    exit(1);
  }
}

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Best wall time of `reps` calls of f (after one warm-up call); *cpu (when not NULL) gets
 * the best process CPU time of one call (with JAXC_NUM_THREADS=1 the compute time, free of
 * the time slices a loaded machine takes away). */
static double best_time_cpu(jx_fn *f, jx_array *const *in, int reps, double *cpu) {
  int nout = jx_fn_nout(f);
  jx_array *out[8];
  double best = 1e30, best_cpu = 1e30;
  for (int r = 0; r <= reps; r++) {
    double t0 = now(), c0 = cpu_now();
    jx_call(f, in, out);
    for (int o = 0; o < nout; o++) jx_block_until_ready(out[o]);
    double t = now() - t0, c = cpu_now() - c0;
    for (int o = 0; o < nout; o++) jx_free(out[o]);
    if (r > 0 && t < best) best = t;
    if (r > 0 && c < best_cpu) best_cpu = c;
  }
  die_if_error("call");
  if (cpu) *cpu = best_cpu;
  return best;
}
static double best_time(jx_fn *f, jx_array *const *in, int reps) { return best_time_cpu(f, in, reps, NULL); }

static jx_array *rand_f32(int ndim, const int64_t *shape, unsigned seed) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  float *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
  }
  jx_array *a = jx_array_from(v, JX_FLOAT32, ndim, shape);
  free(v);
  return a;
}

/* ------------------------------------------------------------ workloads */

/* ---- loops (issue 16): an LSTM over lax.scan, Newton's method in a while_loop, a
 * fori_loop of matmuls. The same workloads as bench/run.py's peers. */
enum { LSTM_T = 1000, LSTM_B = 32, LSTM_H = 256 };

/* carry (h, c) (B, H), x (B, H); params (W (H, 4H), U (H, 4H), b (4H)) in ctx */
static jx_status lstm_cell(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array **p = ctx;
  jx_array *z = jx_add(jx_add(jx_matmul(in[2], p[0]), jx_matmul(in[0], p[1])), p[2]);
  jx_array *g[4];
  for (int k = 0; k < 4; k++)
    g[k] = jx_slice(z, 2, (int64_t[]){0, k * LSTM_H}, (int64_t[]){LSTM_B, (k + 1) * LSTM_H}, NULL);
  jx_array *c = jx_add(jx_mul(jx_nn_sigmoid(g[1]), in[1]), jx_mul(jx_nn_sigmoid(g[0]), jx_tanh(g[2])));
  jx_array *h = jx_mul(jx_nn_sigmoid(g[3]), jx_tanh(c));
  out[0] = h, out[1] = c, out[2] = h;
  return JX_OK;
}
/* (W, U, b, xs (T, B, H), h0, c0) -> mean(ys^2) */
static jx_status lstm_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *cell = jx_fn_new("lstm_cell", 3, 3, lstm_cell, (void *)in);
  jx_array *carry[2], *ys[1];
  jx_status s = jx_lax_scan(cell, 2, in + 4, 1, in + 3, -1, false, 1, carry, ys);
  jx_fn_free(cell);
  if (s != JX_OK) return s;
  out[0] = jx_mean(jx_mul(ys[0], ys[0]), 0, NULL, false);
  return JX_OK;
}
/* Newton's method for sqrt(a): carry (i, x), 100,000 trips */
static jx_status newton_cond(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_less(in[0], jx_scalar_int(100000));
  return JX_OK;
}
static jx_status newton_body(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(in[0], jx_scalar_int(1));
  out[1] = jx_mul(jx_add(in[1], jx_div(ctx, in[1])), jx_scalar(0.5));
  return JX_OK;
}
static jx_status newton_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *cf = jx_fn_new("cond", 2, 1, newton_cond, NULL), *bf = jx_fn_new("newton", 2, 2, newton_body, in[0]);
  jx_array *r[2];
  jx_status s = jx_lax_while_loop(cf, bf, 2, (jx_array *[]){jx_astype(jx_scalar_int(0), JX_INT32), in[0]}, r);
  jx_fn_free(cf), jx_fn_free(bf);
  out[0] = s == JX_OK ? r[1] : NULL;
  return s;
}
/* tanh(cond(sum(x) > 0, sin, cos, 3x)) + x * x: a cond between other operations (jit runs
 * the operations around it as compiled pieces, jit/segment.c) */
static jx_status cond_sin(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sin(in[0]);
  return JX_OK;
}
static jx_status cond_cos(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_cos(in[0]);
  return JX_OK;
}
static jx_status cond_between_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *t = jx_fn_new("sin", 1, 1, cond_sin, NULL), *e = jx_fn_new("cos", 1, 1, cond_cos, NULL);
  jx_array *p = jx_greater(jx_sum(in[0], 0, NULL, false), jx_scalar(0.0)), *r = NULL;
  jx_status s = jx_lax_cond(p, t, e, 1, (jx_array *[]){jx_mul(in[0], jx_scalar(3.0))}, &r);
  jx_fn_free(t), jx_fn_free(e);
  out[0] = s == JX_OK ? jx_add(jx_tanh(r), jx_mul(in[0], in[0])) : NULL;
  return s;
}
/* fori_loop(0, 10000, m -> tanh(m @ a)) on 64x64 */
static jx_status mm_body(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_tanh(jx_matmul(in[1], ctx));
  return JX_OK;
}
static jx_status fori_mm_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *bf = jx_fn_new("mm", 2, 1, mm_body, in[1]);
  jx_status s = jx_lax_fori_loop(jx_scalar_int(0), jx_scalar_int(10000), bf, 1, in, out);
  jx_fn_free(bf);
  return s;
}

static void bench_loops(void) {
  jx_array *in[6] = {jx_mul(rand_f32(2, (int64_t[]){LSTM_H, 4 * LSTM_H}, 21), jx_scalar(0.1)),
                     jx_mul(rand_f32(2, (int64_t[]){LSTM_H, 4 * LSTM_H}, 22), jx_scalar(0.1)),
                     jx_zeros(1, (int64_t[]){4 * LSTM_H}, JX_FLOAT32),
                     rand_f32(3, (int64_t[]){LSTM_T, LSTM_B, LSTM_H}, 23),
                     jx_zeros(2, (int64_t[]){LSTM_B, LSTM_H}, JX_FLOAT32),
                     jx_zeros(2, (int64_t[]){LSTM_B, LSTM_H}, JX_FLOAT32)};
  jx_fn *fwd = jx_jit(jx_fn_new("lstm", 6, 1, lstm_loss, NULL));
  printf("lstm_fwd_T1000 %.3f ms\n", best_time(fwd, in, 3) * 1e3);
  fflush(stdout);
  jx_fn *vg = jx_jit(jx_value_and_grad(jx_fn_new("lstm", 6, 1, lstm_loss, NULL), 3, (int[]){0, 1, 2}));
  printf("lstm_fwd_grad_T1000 %.3f ms\n", best_time(vg, in, 3) * 1e3);
  fflush(stdout);
  jx_array *a = jx_astype(jx_scalar(2.0), JX_FLOAT32);
  jx_fn *nw = jx_jit(jx_fn_new("newton", 1, 1, newton_fn, NULL));
  printf("newton_while_1e5 %.3f ms\n", best_time(nw, &a, 3) * 1e3);
  fflush(stdout);
  jx_array *mm[2] = {rand_f32(2, (int64_t[]){64, 64}, 24), jx_mul(rand_f32(2, (int64_t[]){64, 64}, 25), jx_scalar(0.3))};
  jx_fn *fm = jx_jit(jx_fn_new("fori_mm", 2, 1, fori_mm_fn, NULL));
  printf("fori_matmul64_1e4 %.3f ms\n", best_time(fm, mm, 3) * 1e3);
  fflush(stdout);
  jx_fn *cb = jx_jit(jx_fn_new("cond_between", 1, 1, cond_between_fn, NULL));
  for (int64_t n = 1024; n <= 100000; n = n == 1024 ? 100000 : n + 1) { /* a call, in us */
    jx_array *x = rand_f32(1, &n, 26);
    double t = 1e30;
    for (int r = 0; r < 4; r++) { /* r == 0: warm-up */
      double t0 = now();
      for (int i = 0; i < 1000; i++) {
        jx_array *o = NULL;
        jx_call(cb, &x, &o);
        jx_block_until_ready(o);
        jx_free(o);
      }
      if (r > 0 && (now() - t0) / 1000 < t) t = (now() - t0) / 1000;
    }
    printf("cond_between_%lld %.2f us\n", (long long)n, t * 1e6);
    fflush(stdout);
  }
}

static jx_status matmul_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_matmul(in[0], in[1]);
  return JX_OK;
}

/* 10 elementwise ops: what jit must fuse into one pass over memory. */
static jx_status chain_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *x = in[0];
  jx_array *y = jx_mul(x, jx_scalar(1.5));
  y = jx_add(y, jx_scalar(0.25));
  y = jx_maximum(y, jx_scalar(0.0));
  y = jx_sub(y, x);
  y = jx_mul(y, y);
  y = jx_add(y, jx_scalar(1.0));
  y = jx_sqrt(y);
  y = jx_mul(y, jx_scalar(0.5));
  y = jx_minimum(y, jx_scalar(3.0));
  out[0] = jx_add(y, x);
  return JX_OK;
}

static jx_status copy_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(in[0], jx_scalar(1.0)); /* one read, one write: the roofline */
  return JX_OK;
}

/* jax.random.normal of 2048 x 2048 float32 (called as it is, not under jit: the sampler
 * jits itself, as JAX's does). */
static jx_status normal_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_random_normal(in[0], 2, (int64_t[]){2048, 2048}, JX_FLOAT32);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status gumbel_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_random_gumbel(in[0], 2, (int64_t[]){2048, 2048}, JX_FLOAT32);
  return out[0] ? JX_OK : jx_last_status();
}
/* jax.random.choice(key, 100000, (100000,), replace=True, p=weights): the inverse CDF of
 * 1e5 weights (in[1]) searched by 1e5 draws */
static jx_status choice_p_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_random_choice(in[0], NULL, 100000, 1, (int64_t[]){100000}, true, in[1]);
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status truncated_normal_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_random_truncated_normal(in[0], -2.0, 2.0, 2, (int64_t[]){2048, 2048}, JX_FLOAT32);
  return out[0] ? JX_OK : jx_last_status();
}

/* jax.random.uniform(key, shape), bernoulli(key, 0.5, shape), randint(key, shape, 0, 10)
 * in the samplers' signature (bench_small_samplers) */
static jx_array *uniform01(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  return jx_random_uniform(key, ndim, shape, dtype, 0.0, 1.0);
}
static jx_array *bernoulli_half(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  (void)dtype;
  return jx_random_bernoulli(key, 0.5, ndim, shape);
}
static jx_array *randint10(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  (void)dtype;
  return jx_random_randint(key, ndim, shape, 0, 10, JX_INT32);
}

/* permutation(key, n), categorical(key, zeros(8, n / 8)), choice(key, n, (10,),
 * replace=False): the samplers of arrays (shape[0] = n). */
static jx_array *permutation_n(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  (void)ndim, (void)dtype;
  return jx_random_permutation(key, NULL, shape[0], 0, false);
}
static jx_array *categorical_8(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  (void)ndim;
  jx_array *logits = jx_zeros(2, (int64_t[]){8, shape[0] / 8}, dtype);
  jx_array *r = jx_random_categorical(key, logits, -1);
  jx_free(logits);
  return r;
}
static jx_array *choice_10(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  (void)ndim, (void)dtype;
  return jx_random_choice(key, NULL, shape[0], 1, (int64_t[]){10}, false, NULL);
}

/* gamma(key, 2.5, shape), poisson(key, 3.0, shape), beta(key, 2, 3, shape): the
 * samplers with rejection loops (their parameter made per call, as JAX converts a Python
 * float). */
static jx_array *gamma_25(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  jx_array *a = jx_full(0, NULL, 2.5, dtype), *r = jx_random_gamma(key, a, ndim, shape, dtype);
  jx_free(a);
  return r;
}
static jx_array *poisson_3(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  jx_array *lam = jx_full(0, NULL, 3.0, dtype), *r = jx_random_poisson(key, lam, ndim, shape, JX_INT32);
  jx_free(lam);
  return r;
}
static jx_array *beta_23(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  jx_array *a = jx_full(0, NULL, 2.0, dtype), *b = jx_full(0, NULL, 3.0, dtype);
  jx_array *r = jx_random_beta(key, a, b, ndim, shape, dtype);
  jx_free(a), jx_free(b);
  return r;
}

/* Small samples, per call: the fixed cost of a sampler call (argument checks, finding
 * or building its jitted function, one program run). JAXC_BENCH_SAMPLER_REPS calls
 * (default 10000) a batch, best of 3 batches after 100 warm-up calls. */
static void bench_small_samplers(jx_array *key) {
  const char *env = getenv("JAXC_BENCH_SAMPLER_REPS");
  int reps = env ? atoi(env) : 10000;
  static const struct {
    const char *name;
    jx_array *(*fn)(jx_array *, int, const int64_t *, jx_dtype);
    int64_t n;
  } rows[] = {{"random_normal_128_call", jx_random_normal, 128},
              {"random_normal_3_call", jx_random_normal, 3},
              {"random_gumbel_128_call", jx_random_gumbel, 128},
              {"random_uniform_128_call", uniform01, 128},
              {"random_bernoulli_128_call", bernoulli_half, 128},
              {"random_randint_128_call", randint10, 128},
              {"random_permutation_128_call", permutation_n, 128},
              {"random_categorical_8x10_call", categorical_8, 80},
              {"random_choice_128_10_call", choice_10, 128},
              {"random_gamma_128_call", gamma_25, 128},
              {"random_poisson_128_call", poisson_3, 128},
              {"random_beta_128_call", beta_23, 128}};
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    double best = 1e30;
    for (int r = 0; r < 4; r++) { /* r == 0: 100 warm-up calls */
      int n = r == 0 ? 100 : reps;
      double t0 = now();
      for (int i = 0; i < n; i++) jx_free(rows[k].fn(key, 1, &rows[k].n, JX_FLOAT32));
      double t = (now() - t0) / (n > 0 ? n : 1) * 1e6;
      if (r > 0 && t < best) best = t;
    }
    die_if_error(rows[k].name);
    printf("%s %.2f us\n", rows[k].name, best);
    fflush(stdout);
  }
}

/* jax.nn.softmax's peer (run.py's JAX row calls it). */
static jx_status softmax_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_nn_softmax(in[0], 1, (int[]){-1}, NULL);
  return JX_OK;
}

/* jnp.cumsum and lax.cumsum(reverse=True) of a vector (XLA's CPU order: lax.c xla_scan) */
static jx_status cumsum_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = ctx ? jx_lax_cumsum(in[0], 0, true) : jx_cumsum(in[0], 0);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status sum_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(in[0], 0, NULL, false);
  return JX_OK;
}

static jx_status argmax_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_argmax(in[0], 0, false);
  return JX_OK;
}

/* MLP 784-512-10, ReLU, softmax cross-entropy with one-hot labels. */
static jx_status mlp_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *w1 = in[0], *b1 = in[1], *w2 = in[2], *b2 = in[3], *x = in[4], *y = in[5];
  jx_array *h = jx_maximum(jx_add(jx_matmul(x, w1), b1), jx_scalar(0.0));
  jx_array *logits = jx_add(jx_matmul(h, w2), b2);
  jx_array *m = jx_max(logits, 1, (int[]){1}, true);
  jx_array *lse = jx_add(jx_log(jx_sum(jx_exp(jx_sub(logits, m)), 1, (int[]){1}, true)), m);
  jx_array *logp = jx_sub(logits, lse);
  out[0] = jx_negative(jx_mean(jx_sum(jx_mul(logp, y), 1, (int[]){1}, false), 0, NULL, false));
  return JX_OK;
}

static jx_fn *mlp_grad;
/* One SGD step: params -> new params and the loss. */
static jx_status mlp_step(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *res[5];
  jx_status s = jx_call(mlp_grad, in, res);
  if (s != JX_OK) return s;
  out[4] = res[0];
  for (int i = 0; i < 4; i++) out[i] = jx_sub(in[i], jx_mul(res[1 + i], jx_scalar(0.01)));
  return JX_OK;
}

/* Linear algebra (issue 14): one factorization or solve of an SPD float32 matrix (or
 * a batch of them), jitted. */
static jx_status linalg_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const char *op = ctx;
  jx_array *r[3] = {NULL, NULL, NULL};
  if (!strcmp(op, "cholesky")) r[0] = jx_linalg_cholesky(in[0], false);
  else if (!strcmp(op, "solve")) r[0] = jx_linalg_solve(in[0], in[1]);
  else if (!strcmp(op, "inv")) r[0] = jx_linalg_inv(in[0]);
  else if (!strcmp(op, "qr")) jx_linalg_qr(in[0], NULL, r), jx_free(r[1]);
  else if (!strcmp(op, "eigh")) jx_linalg_eigh(in[0], NULL, true, r), jx_free(r[1]);
  else if (!strcmp(op, "svd")) jx_linalg_svd(in[0], false, true, r), jx_free(r[0]), jx_free(r[2]), r[0] = r[1];
  out[0] = r[0];
  return r[0] ? JX_OK : jx_last_status();
}

/* The batched rows' baseline: the same B problems as B calls of the jitted single-matrix
 * function (inputs sliced beforehand), best of 3 passes over the batch. */
static void bench_linalg_loop(const char *const *ops, int64_t B, int64_t n, jx_array *spd, jx_array *rhs) {
  jx_array **a1 = malloc((size_t)B * sizeof *a1), **r1 = malloc((size_t)B * sizeof *r1);
  for (int64_t b = 0; b < B; b++) {
    a1[b] = jx_reshape(jx_slice(spd, 3, (int64_t[]){b, 0, 0}, (int64_t[]){b + 1, n, n}, NULL), 2, (int64_t[]){n, n});
    r1[b] = jx_reshape(jx_slice(rhs, 3, (int64_t[]){b, 0, 0}, (int64_t[]){b + 1, n, 1}, NULL), 2, (int64_t[]){n, 1});
    jx_block_until_ready(a1[b]), jx_block_until_ready(r1[b]);
  }
  for (int o = 0; o < 6; o++) {
    jx_fn *f = jx_jit(jx_fn_new(ops[o], 2, 1, linalg_fn, (void *)ops[o]));
    double best = 1e30;
    for (int rep = 0; rep <= 3; rep++) { /* pass 0 compiles */
      double t0 = now();
      for (int64_t b = 0; b < B; b++) {
        jx_array *out;
        jx_call(f, (jx_array *[]){a1[b], r1[b]}, &out);
        jx_block_until_ready(out);
        jx_free(out);
      }
      double t = now() - t0;
      if (rep > 0 && t < best) best = t;
    }
    die_if_error("linalg loop");
    printf("%s_loop_%lldx%lldx%lld %.3f ms\n", ops[o], (long long)B, (long long)n, (long long)n, best * 1e3);
    fflush(stdout);
    jx_fn_free(f);
  }
  for (int64_t b = 0; b < B; b++) jx_free(a1[b]), jx_free(r1[b]);
  free(a1), free(r1);
}

/* batch_only (`jaxc_bench linalg_batch`): the 1000x16x16 rows alone, best of 20 (a
 * batch takes ~1-100 ms, short enough for a loaded machine's time slices to decide a
 * best of 5). */
static void bench_linalg(bool batch_only) {
  static const char *ops[] = {"cholesky", "solve", "inv", "qr", "eigh", "svd"};
  int64_t sizes[3][3] = {{1, 256, 256}, {1, 1024, 1024}, {1000, 16, 16}};
  for (int s = batch_only ? 2 : 0; s < 3; s++) {
    int64_t B = sizes[s][0], n = sizes[s][1];
    jx_array *a = rand_f32(3, (int64_t[]){B, n, n}, 11 + s);
    jx_array *spd = jx_add(jx_matmul(a, jx_swapaxes(a, -1, -2)), jx_multiply(jx_eye(n, JX_FLOAT32), jx_scalar((double)n)));
    if (B == 1) spd = jx_reshape(spd, 2, (int64_t[]){n, n});
    jx_array *rhs = B == 1 ? rand_f32(2, (int64_t[]){n, 1}, 21) : rand_f32(3, (int64_t[]){B, n, 1}, 21);
    jx_block_until_ready(spd);
    for (int o = 0; o < 6; o++) {
      jx_fn *f = jx_jit(jx_fn_new(ops[o], 2, 1, linalg_fn, (void *)ops[o]));
      double t = best_time(f, (jx_array *[]){spd, rhs}, batch_only ? 20 : n >= 1024 ? 3 : 5);
      if (B == 1) printf("%s_%lld %.3f ms\n", ops[o], (long long)n, t * 1e3);
      else printf("%s_%lldx%lldx%lld %.3f ms\n", ops[o], (long long)B, (long long)n, (long long)n, t * 1e3);
      fflush(stdout);
      jx_fn_free(f);
    }
    if (B > 1 && !batch_only) bench_linalg_loop(ops, B, n, spd, rhs);
  }
}

/* FFT (issue 15): jnp.fft on complex64 / float32 inputs, jitted (one routine step). */
static jx_status fft_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const char *op = ctx;
  if (!strcmp(op, "rfft")) out[0] = jx_fft_rfft(in[0], JX_FFT_N_NONE, -1, NULL);
  else if (!strcmp(op, "fft2")) out[0] = jx_fft_fft2(in[0], 0, NULL, 0, NULL, NULL);
  else out[0] = jx_fft_fft(in[0], JX_FFT_N_NONE, -1, NULL);
  return out[0] ? JX_OK : jx_last_status();
}

static void bench_fft(void) {
  static const struct { const char *name, *op; int ndim; int64_t shape[2]; bool real; } rows[] = {
      {"fft_c64_2^20", "fft", 1, {1 << 20}, false},
      {"rfft_f32_2^22", "rfft", 1, {1 << 22}, true},
      {"fft2_c64_1024x1024", "fft2", 2, {1024, 1024}, false},
      {"fft_c64_prime_1000003", "fft", 1, {1000003}, false},
      {"fft_c64_batch_4096x1024", "fft", 2, {4096, 1024}, false}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    jx_array *re = rand_f32(rows[i].ndim, rows[i].shape, 31 + (int)i);
    jx_array *x = rows[i].real ? re : jx_complex(re, rand_f32(rows[i].ndim, rows[i].shape, 41 + (int)i));
    jx_block_until_ready(x);
    jx_fn *f = jx_jit(jx_fn_new(rows[i].op, 1, 1, fft_fn, (void *)rows[i].op));
    printf("%s %.3f ms\n", rows[i].name, best_time(f, &x, 5) * 1e3);
    fflush(stdout);
    jx_fn_free(f);
  }
}

/* ------------------------------------------------- transcendental functions */

/* Input domains (the peers in bench/run.py draw from the same ones): x uniform in
 * [-2, 2), positive [0.05, 2.05), at least one [1, 3), inside (-0.95, 0.95). */
typedef enum Domain { ANY, POS, GE1, UNIT } Domain;

static jx_array *lax_erf(jx_array *x) { return jx_lax_erf(x); }
static jx_array *lax_erfc(jx_array *x) { return jx_lax_erfc(x); }
static jx_array *lax_erf_inv(jx_array *x) { return jx_lax_erf_inv(x); }
static jx_array *gelu_exact(jx_array *x) { return jx_nn_gelu(x, false); }
static jx_array *gelu_tanh(jx_array *x) { return jx_nn_gelu(x, true); }

static const struct Transc {
  const char *name;
  Domain dom;
  jx_array *(*f1)(jx_array *);
  jx_array *(*f2)(jx_array *, jx_array *); /* f2(x, y), y in ANY */
} transc[] = {
    {"exp", ANY, jx_exp, NULL},          {"exp2", ANY, jx_exp2, NULL},       {"expm1", ANY, jx_expm1, NULL},
    {"log", POS, jx_log, NULL},          {"log2", POS, jx_log2, NULL},       {"log1p", POS, jx_log1p, NULL},
    {"tanh", ANY, jx_tanh, NULL},        {"logistic", ANY, jx_nn_sigmoid, NULL},
    {"sin", ANY, jx_sin, NULL},          {"cos", ANY, jx_cos, NULL},         {"tan", ANY, jx_tan, NULL},
    {"asin", UNIT, jx_arcsin, NULL},     {"acos", UNIT, jx_arccos, NULL},    {"atan", ANY, jx_arctan, NULL},
    {"sinh", ANY, jx_sinh, NULL},        {"cosh", ANY, jx_cosh, NULL},       {"asinh", ANY, jx_arcsinh, NULL},
    {"acosh", GE1, jx_arccosh, NULL},    {"atanh", UNIT, jx_arctanh, NULL},  {"erf", ANY, lax_erf, NULL},
    {"erfc", ANY, lax_erfc, NULL},       {"erf_inv", UNIT, lax_erf_inv, NULL},
    {"cbrt", ANY, jx_cbrt, NULL},        {"rsqrt", POS, jx_rsqrt, NULL},
    {"pow", POS, NULL, jx_power},  {"atan2", ANY, NULL, jx_arctan2},
    {"gelu_erf", ANY, gelu_exact, NULL}, {"gelu_tanh", ANY, gelu_tanh, NULL},
};

static jx_status transc_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const struct Transc *t = ctx;
  out[0] = t->f1 ? t->f1(in[0]) : t->f2(in[0], in[1]);
  return JX_OK;
}

/* x (uniform in [-0.5, 0.5)) mapped into a domain. */
static jx_array *in_domain(jx_array *x, Domain d) {
  switch (d) {
  case POS: return jx_add(jx_mul(jx_abs(x), jx_scalar(4.0)), jx_scalar(0.05));
  case GE1: return jx_add(jx_mul(jx_abs(x), jx_scalar(4.0)), jx_scalar(1.0));
  case UNIT: return jx_mul(x, jx_scalar(1.9));
  default: return jx_mul(x, jx_scalar(4.0));
  }
}

/* The chain: tanh(1.5x + 0.25) * exp(-x*x) + sqrt(|x| + 1) - x/3. */
static jx_status tchain_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *x = in[0];
  jx_array *a = jx_tanh(jx_add(jx_mul(x, jx_scalar(1.5)), jx_scalar(0.25)));
  jx_array *b = jx_exp(jx_negative(jx_mul(x, x)));
  jx_array *c = jx_sqrt(jx_add(jx_abs(x), jx_scalar(1.0)));
  out[0] = jx_sub(jx_add(jx_mul(a, b), c), jx_div(x, jx_scalar(3.0)));
  return JX_OK;
}

/* GELU MLP 1024-4096-1024 (tanh GELU, JAX's default), squared error against y. */
static jx_status gelu_mlp_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *w1 = in[0], *b1 = in[1], *w2 = in[2], *b2 = in[3], *x = in[4], *y = in[5];
  jx_array *h = jx_nn_gelu(jx_add(jx_matmul(x, w1), b1), true);
  jx_array *d = jx_sub(jx_add(jx_matmul(h, w2), b2), y);
  out[0] = jx_mean(jx_mul(d, d), 0, NULL, false);
  return JX_OK;
}

/* Layer norm over the last axis (flax's LayerNorm, eps 1e-5) with scale and bias. */
static jx_status layernorm_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *x = in[0];
  jx_array *m = jx_mean(x, 1, (int[]){-1}, true);
  jx_array *v = jx_var(x, 1, (int[]){-1}, 0, true);
  jx_array *n = jx_mul(jx_sub(x, m), jx_rsqrt(jx_add(v, jx_scalar(1e-5))));
  out[0] = jx_add(jx_mul(n, in[1]), in[2]);
  return JX_OK;
}

/* Mean softmax cross-entropy of logits (B, C) against one-hot labels (B, C). */
static jx_status xent_fn(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *lp = jx_nn_log_softmax(in[0], 1, (int[]){-1}, NULL);
  out[0] = jx_negative(jx_mean(jx_sum(jx_mul(lp, in[1]), 1, (int[]){-1}, false), 0, NULL, false));
  return JX_OK;
}

static void bench_transcendental(const char *only) {
  int64_t n = (int64_t)1 << 22;
  jx_array *base = rand_f32(1, &n, 11), *base2 = rand_f32(1, &n, 12);
  jx_array *y = in_domain(base2, ANY);
  for (size_t i = 0; i < sizeof transc / sizeof transc[0]; i++) {
    const struct Transc *t = &transc[i];
    if (*only && strcmp(only, "transc") && strcmp(only, t->name)) continue;
    jx_array *x = in_domain(base, t->dom);
    jx_fn *f = jx_jit(jx_fn_new(t->name, t->f1 ? 1 : 2, 1, transc_fn, (void *)t));
    printf("fn_%s %.3f ms\n", t->name, best_time(f, (jx_array *[]){x, y}, 10) * 1e3);
    fflush(stdout);
  }
}

/* Cached eager ops: the per-call overhead of small operations (issue 10 item 3). Each
 * loop is its own function so that callgrind can count one op's instructions:
 * valgrind --tool=callgrind --toggle-collect=eager_loop_add build/jaxc_bench eager
 * (instructions / JAXC_BENCH_EAGER_REPS, default 20000). */
typedef struct EagerArgs {
  jx_array *a, *b, *m, *c4, *m16, *m64, *v64;
} EagerArgs;
#define EAGER_LOOP(name, expr)                                          \
  __attribute__((noinline)) static void eager_loop_##name(const EagerArgs *e, int reps) { \
    for (int i = 0; i < reps; i++) {                                    \
      jx_scope_begin();                                                 \
      jx_array *r = (expr);                                             \
      (void)r;                                                          \
      jx_scope_end(0, NULL);                                            \
    }                                                                   \
  }
EAGER_LOOP(add, jx_add(e->a, e->b))
EAGER_LOOP(exp, jx_exp(e->a))
EAGER_LOOP(sum, jx_sum(e->a, 0, NULL, false))
EAGER_LOOP(bcast_add, jx_add(jx_reshape(e->a, 2, (int64_t[]){4, 4}), e->c4))
EAGER_LOOP(matmul, jx_matmul(e->m, e->m))
EAGER_LOOP(matmul16, jx_matmul(e->m16, e->m16))
EAGER_LOOP(matvec64, jx_matmul(e->m64, e->v64))

static void bench_eager(void) {
  EagerArgs e = {rand_f32(1, (int64_t[]){16}, 9),      rand_f32(1, (int64_t[]){16}, 10),
                 rand_f32(2, (int64_t[]){4, 4}, 11),    rand_f32(1, (int64_t[]){4}, 12),
                 rand_f32(2, (int64_t[]){16, 16}, 13),  rand_f32(2, (int64_t[]){64, 64}, 14),
                 rand_f32(1, (int64_t[]){64}, 15)};
  const char *env = getenv("JAXC_BENCH_EAGER_REPS");
  int reps = env ? atoi(env) : 20000;
  static const struct {
    const char *name;
    void (*loop)(const EagerArgs *, int);
  } ops[] = {{"eager_add_16", eager_loop_add},
             {"eager_exp_16", eager_loop_exp},
             {"eager_sum_16", eager_loop_sum},
             {"eager_reshape_add_4x4", eager_loop_bcast_add},
             {"eager_matmul_4x4", eager_loop_matmul},
             {"eager_matmul_16x16", eager_loop_matmul16},
             {"eager_matvec_64", eager_loop_matvec64}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    ops[k].loop(&e, 100); /* warm the caches */
    double best = 1e30;
    for (int r = 0; r < 3; r++) { /* best of 3 batches: the machine is shared */
      double t0 = now();
      ops[k].loop(&e, reps);
      double t = (now() - t0) / (reps > 0 ? reps : 1) * 1e6;
      if (t < best) best = t;
    }
    printf("%s %.2f us\n", ops[k].name, best);
    fflush(stdout);
  }
  die_if_error("eager");
  jx_free(e.a), jx_free(e.b), jx_free(e.m), jx_free(e.c4), jx_free(e.m16), jx_free(e.m64), jx_free(e.v64);
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : "";
  jx_scope_begin();
  if (*only && !strcmp(only, "fft")) {
    bench_fft();
    jx_scope_end(0, NULL);
    return 0;
  }
  if (*only && (strstr("linalg", only) || !strcmp(only, "linalg_batch"))) {
    bench_linalg(!strcmp(only, "linalg_batch"));
    jx_scope_end(0, NULL);
    return 0;
  }
  /* matmul */
  for (int64_t n = 256; n <= 2048; n *= 2) {
    if (*only && !strstr("matmul", only)) break;
    jx_array *a = rand_f32(2, (int64_t[]){n, n}, 1), *b = rand_f32(2, (int64_t[]){n, n}, 2);
    jx_fn *f = jx_jit(jx_fn_new("matmul", 2, 1, matmul_fn, NULL));
    double tc, t = best_time_cpu(f, (jx_array *[]){a, b}, n >= 2048 ? 3 : n >= 1024 ? 5 : 10, &tc);
    printf("matmul_%lld %.2f GFLOP/s\n", (long long)n, 2.0 * n * n * n / t / 1e9);
    printf("matmul_cpu_%lld %.2f GFLOP/s\n", (long long)n, 2.0 * n * n * n / tc / 1e9);
    fflush(stdout);
  }
  /* fused elementwise chain vs the copy roofline */
  for (int64_t n = 1000000; n <= 10000000; n *= 10) {
    if (*only && !strstr("chain", only)) break;
    jx_array *x = rand_f32(1, (int64_t[]){n}, 3);
    jx_fn *c = jx_jit(jx_fn_new("chain", 1, 1, chain_fn, NULL));
    jx_fn *cp = jx_jit(jx_fn_new("copy", 1, 1, copy_fn, NULL));
    double tc = best_time(c, &x, 10), tcp = best_time(cp, &x, 10);
    printf("chain_%lld %.2f GB/s\n", (long long)n, 8.0 * n / tc / 1e9);
    printf("copy_%lld %.2f GB/s\n", (long long)n, 8.0 * n / tcp / 1e9);
    fflush(stdout);
  }
  if (!*only || strstr("softmax", only)) {
    jx_array *x = rand_f32(2, (int64_t[]){4096, 1024}, 4);
    jx_fn *f = jx_jit(jx_fn_new("softmax", 1, 1, softmax_fn, NULL));
    printf("softmax_4096x1024 %.3f ms\n", best_time(f, &x, 10) * 1e3);
  }
  if (!*only || strstr("random", only)) {
    jx_array *key = jx_random_key(0);
    static const struct {
      const char *name;
      jx_status (*fn)(void *, jx_array *const *, jx_array **);
    } samplers[] = {{"random_normal_2048x2048", normal_fn},
                    {"random_gumbel_2048x2048", gumbel_fn},
                    {"random_truncated_normal_2048x2048", truncated_normal_fn}};
    for (size_t i = 0; i < sizeof samplers / sizeof *samplers; i++) {
      jx_fn *f = jx_fn_new(samplers[i].name, 1, 1, samplers[i].fn, NULL);
      printf("%s %.3f ms\n", samplers[i].name, best_time(f, &key, 10) * 1e3);
      jx_fn_free(f);
    }
    jx_array *weights = jx_add(rand_f32(1, (int64_t[]){100000}, 9), jx_scalar(1.0)); /* in [0.5, 1.5) */
    jx_fn *cp = jx_fn_new("random_choice_p_1e5", 2, 1, choice_p_fn, NULL);
    printf("random_choice_p_1e5 %.3f ms\n", best_time(cp, (jx_array *[]){key, weights}, 10) * 1e3);
    jx_fn_free(cp), jx_free(weights);
    bench_small_samplers(key);
  }
  if (!*only || strstr("cumsum", only)) {
    jx_array *x = rand_f32(1, (int64_t[]){1000000}, 11);
    jx_fn *f = jx_jit(jx_fn_new("cumsum", 1, 1, cumsum_fn, NULL));
    jx_fn *r = jx_jit(jx_fn_new("cumsum_rev", 1, 1, cumsum_fn, (void *)1));
    printf("cumsum_1e6 %.3f ms\n", best_time(f, &x, 10) * 1e3);
    printf("cumsum_rev_1e6 %.3f ms\n", best_time(r, &x, 10) * 1e3);
    jx_fn_free(f), jx_fn_free(r), jx_free(x);
  }
  if (!*only || strstr("reduce", only)) {
    jx_array *x = rand_f32(1, (int64_t[]){10000000}, 5);
    jx_fn *s = jx_jit(jx_fn_new("sum", 1, 1, sum_fn, NULL));
    jx_fn *am = jx_jit(jx_fn_new("argmax", 1, 1, argmax_fn, NULL));
    printf("sum_1e7 %.3f ms\n", best_time(s, &x, 10) * 1e3);
    printf("argmax_1e7 %.3f ms\n", best_time(am, &x, 10) * 1e3);
  }
  if (!*only || strstr("mlp", only)) {
    jx_array *in[6] = {rand_f32(2, (int64_t[]){784, 512}, 6), jx_zeros(1, (int64_t[]){512}, JX_FLOAT32),
                       rand_f32(2, (int64_t[]){512, 10}, 7), jx_zeros(1, (int64_t[]){10}, JX_FLOAT32),
                       rand_f32(2, (int64_t[]){128, 784}, 8), NULL};
    float *y = calloc(128 * 10, sizeof *y);
    for (int i = 0; i < 128; i++) y[i * 10 + i % 10] = 1.0f;
    in[5] = jx_array_from(y, JX_FLOAT32, 2, (int64_t[]){128, 10});
    free(y);
    mlp_grad = jx_value_and_grad(jx_fn_new("mlp_loss", 6, 1, mlp_loss, NULL), 4, (int[]){0, 1, 2, 3});
    jx_fn *step = jx_jit(jx_fn_new("mlp_step", 6, 5, mlp_step, NULL));
    double t0 = now();
    jx_array *out[5];
    jx_call(step, in, out);
    jx_block_until_ready(out[4]);
    printf("jit_compile_mlp_step %.1f ms\n", (now() - t0) * 1e3);
    for (int o = 0; o < 5; o++) jx_free(out[o]);
    printf("mlp_step %.3f ms\n", best_time(step, in, 20) * 1e3);
  }
  if (!*only || !strcmp(only, "transc") || strncmp(only, "fn_", 3) == 0)
    bench_transcendental(*only && strncmp(only, "fn_", 3) == 0 ? only + 3 : only);
  for (int k = 0; k < 2; k++) {
    if (*only && strcmp(only, "tchain")) break;
    int64_t n = k == 0 ? (int64_t)1 << 22 : 10000000;
    jx_array *x = jx_mul(rand_f32(1, (int64_t[]){n}, 13), jx_scalar(4.0));
    jx_fn *c = jx_jit(jx_fn_new("tchain", 1, 1, tchain_fn, NULL));
    jx_fn *cp = jx_jit(jx_fn_new("copy", 1, 1, copy_fn, NULL));
    double tc = best_time(c, &x, 10), tcp = best_time(cp, &x, 10);
    printf("tchain_%lld %.2f GB/s\n", (long long)n, 8.0 * n / tc / 1e9);
    printf("tcopy_%lld %.2f GB/s\n", (long long)n, 8.0 * n / tcp / 1e9);
    fflush(stdout);
  }
  if (!*only || !strcmp(only, "nnops")) {
    jx_array *x = jx_mul(rand_f32(2, (int64_t[]){4096, 1024}, 14), jx_scalar(8.0));
    jx_array *g = jx_add(rand_f32(1, (int64_t[]){1024}, 15), jx_scalar(1.0));
    jx_array *b = rand_f32(1, (int64_t[]){1024}, 16);
    jx_fn *ln = jx_jit(jx_fn_new("layernorm", 3, 1, layernorm_fn, NULL));
    printf("layernorm_4096x1024 %.3f ms\n", best_time(ln, (jx_array *[]){x, g, b}, 10) * 1e3);
    float *oh = calloc(4096 * 1024, sizeof *oh);
    for (int i = 0; i < 4096; i++) oh[(int64_t)i * 1024 + (i * 7) % 1024] = 1.0f;
    jx_array *labels = jx_array_from(oh, JX_FLOAT32, 2, (int64_t[]){4096, 1024});
    free(oh);
    jx_fn *xe = jx_jit(jx_fn_new("xent", 2, 1, xent_fn, NULL));
    printf("xent_4096x1024 %.3f ms\n", best_time(xe, (jx_array *[]){x, labels}, 10) * 1e3);
    fflush(stdout);
  }
  if (!*only || !strcmp(only, "gelu_mlp")) {
    jx_array *in[6] = {jx_mul(rand_f32(2, (int64_t[]){1024, 4096}, 17), jx_scalar(0.06)),
                       jx_zeros(1, (int64_t[]){4096}, JX_FLOAT32),
                       jx_mul(rand_f32(2, (int64_t[]){4096, 1024}, 18), jx_scalar(0.03)),
                       jx_zeros(1, (int64_t[]){1024}, JX_FLOAT32),
                       rand_f32(2, (int64_t[]){256, 1024}, 19), rand_f32(2, (int64_t[]){256, 1024}, 20)};
    jx_fn *vg = jx_jit(jx_value_and_grad(jx_fn_new("gelu_mlp", 6, 1, gelu_mlp_loss, NULL), 4,
                                         (int[]){0, 1, 2, 3}));
    printf("gelu_mlp_fwd_bwd %.3f ms\n", best_time(vg, in, 10) * 1e3);
    fflush(stdout);
  }
  if (!*only || !strcmp(only, "loops")) bench_loops();
  if (!*only || strstr("eager", only)) bench_eager();
  die_if_error("end");
  jx_scope_end(0, NULL);
  return 0;
}
