/* test_random_more.c -- jax.random's gamma family, rademacher, poisson, binomial,
 * categorical with shape and the distributions of random_dist.c (weibull_min, rayleigh,
 * maxwell, pareto, wald, geometric, generalized_normal, ball, orthogonal (within 1e-5:
 * LAPACK's QR); geometric bit for bit, the
 * rest within the same ulps: those using pow or gamma differ in a few last bits, float64
 * ones inherit normal's few-ulp float64 error) (src/lib/random_gamma.c, random_discrete.c,
 * random_dist.c) against JAX goldens
 * (tests/golden/random_more.txt, tools/golden_random_more.py) on the default device:
 * integer-valued samplers and rademacher bit for bit; the gamma family within a few
 * float32 ulps (XLA's rsqrt estimate and glibc's powf round differently from jaxc's in
 * the last bit for some parameters; include/jaxc/random.h), with the count of elements
 * equal bit for bit printed. Then jit equals eager, vmap over keys equals a loop, and
 * bad input. Every case ends with no live arrays (TEST_RUN). */
#include <stdint.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

static jx_dtype param_dtype(const GoldenCase *c, jx_dtype d) {
  bool weak;
  const char *s = golden_param(c, "dtype");
  if (s) golden_parse_dtype(s, &d, &weak);
  return d;
}

/* A float of dtype d as an integer in the values' order (neighbours differ by 1). */
static int64_t ordered(double v, jx_dtype d) {
  uint64_t bits, sign;
  if (d == JX_FLOAT64) {
    memcpy(&bits, &v, 8);
    sign = 1ull << 63;
  } else if (d == JX_FLOAT32) {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    bits = b, sign = 1u << 31;
  } else {
    bits = d == JX_FLOAT16 ? dtype_f32_to_f16((float)v) : dtype_f32_to_bf16((float)v);
    sign = 1u << 15;
  }
  return bits & sign ? -(int64_t)(bits & (sign - 1)) : (int64_t)bits;
}

static int64_t n_values, n_exact, worst_ulps;

/* got vs want within max_ulps of want's dtype (NaN == NaN). */
static void compare_ulps(const char *ctx, jx_array *got, const GoldenArray *want,
                         int64_t max_ulps) {
  if (!got) {
    test_fail(__FILE__, __LINE__, "%s: NULL result (%s)", ctx, jx_last_error());
    return;
  }
  jx_dtype wd = dtype_canonicalize(want->dtype);
  bool same = jx_dtype_of(got) == wd && jx_ndim(got) == want->ndim;
  for (int d = 0; same && d < want->ndim; d++) same = jx_shape(got)[d] == want->shape[d];
  CHECK_MSG(same, "%s: dtype %s or shape differs", ctx, jx_dtype_name(jx_dtype_of(got)));
  if (!same) return;
  double *g = test_read_f64(got);
  int64_t bad = 0;
  for (int64_t i = 0; i < want->size; i++) {
    double w = want->f[i], v = g[i];
    n_values++;
    if ((isnan(w) && isnan(v)) || w == v) {
      n_exact++;
      continue;
    }
    int64_t u = isnan(w) || isnan(v) || isinf(w) || isinf(v)
                    ? INT64_MAX
                    : llabs(ordered(v, wd) - ordered(w, wd));
    if (u > worst_ulps) worst_ulps = u;
    if (u > max_ulps && bad++ < 3)
      test_fail(__FILE__, __LINE__, "%s: element %lld: got %.9g, want %.9g (%lld ulps)", ctx,
                (long long)i, v, w, (long long)u);
  }
  test_checks++;
  free(g);
}

static jx_array *call_case(const GoldenCase *c, jx_array *const *in) {
  int64_t shape[JX_MAX_NDIM];
  int nd = golden_param_shape(c, "shape", shape);
  const int64_t *sh = nd < 0 ? NULL : shape;
  jx_dtype dt = param_dtype(c, JX_FLOAT32);
  const char *f = c->fn;
  jx_array *key = in[0];
  if (!strcmp(f, "gamma")) return jx_random_gamma(key, in[1], nd, sh, dt);
  if (!strcmp(f, "loggamma")) return jx_random_loggamma(key, in[1], nd, sh, dt);
  if (!strcmp(f, "beta")) return jx_random_beta(key, in[1], in[2], nd, sh, dt);
  if (!strcmp(f, "dirichlet")) return jx_random_dirichlet(key, in[1], nd, sh, dt);
  if (!strcmp(f, "t")) return jx_random_t(key, in[1], nd, sh, dt);
  if (!strcmp(f, "chisquare")) return jx_random_chisquare(key, in[1], nd, sh, dt);
  if (!strcmp(f, "rademacher")) return jx_random_rademacher(key, nd, sh, dt);
  if (!strcmp(f, "poisson")) return jx_random_poisson(key, in[1], nd, sh, param_dtype(c, JX_INT32));
  if (!strcmp(f, "binomial")) return jx_random_binomial(key, in[1], in[2], nd, sh, dt);
  if (!strcmp(f, "weibull_min")) return jx_random_weibull_min(key, in[1], in[2], nd, sh, dt);
  if (!strcmp(f, "rayleigh")) return jx_random_rayleigh(key, in[1], nd, sh, dt);
  if (!strcmp(f, "maxwell")) return jx_random_maxwell(key, nd, sh, dt);
  if (!strcmp(f, "pareto")) return jx_random_pareto(key, in[1], nd, sh, dt);
  if (!strcmp(f, "wald")) return jx_random_wald(key, in[1], nd, sh, dt);
  if (!strcmp(f, "geometric")) return jx_random_geometric(key, in[1], nd, sh, param_dtype(c, JX_INT32));
  if (!strcmp(f, "generalized_normal"))
    return jx_random_generalized_normal(key, atof(golden_param(c, "p")), nd, sh, dt);
  if (!strcmp(f, "ball"))
    return jx_random_ball(key, golden_param_int(c, "d", 0), atof(golden_param(c, "p")), nd, sh, dt);
  if (!strcmp(f, "orthogonal"))
    return jx_random_orthogonal(key, golden_param_int(c, "n", 0), nd, sh, dt, golden_param_int(c, "m", -1));
  if (!strcmp(f, "categorical_shape"))
    return jx_random_categorical_shape(key, in[1], (int)golden_param_int(c, "axis", -1), nd, sh,
                                       golden_param_int(c, "replace", 1) != 0);
  test_fail(__FILE__, __LINE__, "unknown golden function %s", f);
  return NULL;
}

static bool is_exact(const char *f) {
  return !strcmp(f, "rademacher") || !strcmp(f, "poisson") || !strcmp(f, "binomial") ||
         !strcmp(f, "geometric") ||
         !strcmp(f, "categorical_shape");
}

static void test_golden(void) {
  CHECK_MSG(cases != NULL, "cannot load random_more.txt (run tools/golden_random_more.py)");
  n_values = n_exact = worst_ulps = 0;
  for (int i = 0; i < ncases; i++) {
    if (!test_shard_mine()) continue;
    const GoldenCase *c = &cases[i];
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_config_enable_x64(golden_param_int(c, "x64", 0) != 0);
    jx_scope_begin();
    jx_array *in[4] = {NULL};
    for (int k = 0; k < c->nin && k < 4; k++) in[k] = golden_to_array(&c->in[k]);
    jx_array *got = call_case(c, in);
    if (c->err) {
      golden_check_err(ctx, c, got);
      CHECK_MSG(strstr(jx_last_error(), "jx_random_") != NULL, "%s: message %s", ctx,
                jx_last_error());
    } else if (!strcmp(c->fn, "orthogonal")) {
      /* LAPACK's QR through jaxc, not XLA's: ~1 in 3 elements a few float32 ulps off */
      golden_compare(ctx, got, &c->out[0], 1e-5, 1e-5);
    } else if (is_exact(c->fn)) {
      golden_compare(ctx, got, &c->out[0], 0, 0);
    } else {
      /* bfloat16: a float32 ulp off before rounding can move it one bfloat16 ulp */
      /* float64: normal's erf_inv is a few float64 ulps off JAX's, which wald's
       * cancellation (x = mean + ... - ...) magnifies */
      compare_ulps(ctx, got, &c->out[0], jx_dtype_of(got) == JX_FLOAT32 ? 16 : jx_dtype_of(got) == JX_FLOAT64 ? 256 : 1);
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
    jx_config_enable_x64(false);
  }
  printf("%d golden cases; float samples: %lld of %lld bit for bit, worst %lld ulps\n", ncases,
         (long long)n_exact, (long long)n_values, (long long)worst_ulps);
}

/* ------------------------------------------------------ transformations */

static jx_array *alpha3(void) {
  float v[3] = {0.4f, 2.0f, 9.0f};
  return jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){3});
}

static jx_status gamma_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_random_gamma(in[0], in[1], -1, NULL, JX_FLOAT32);
  return out[0] ? JX_OK : jx_last_status();
}

static void expect_same(const char *ctx, jx_array *a, jx_array *b) {
  CHECK_MSG(a && b, "%s: NULL (%s)", ctx, jx_last_error());
  if (!a || !b) return;
  CHECK(jx_size(a) == jx_size(b) && jx_dtype_of(a) == jx_dtype_of(b));
  size_t n = (size_t)jx_size(a) * jx_dtype_itemsize(jx_dtype_of(a));
  char *x = malloc(n + 1), *y = malloc(n + 1);
  CHECK(jx_read(a, x, n) == JX_OK && jx_read(b, y, n) == JX_OK);
  CHECK_MSG(memcmp(x, y, n) == 0, "%s: values differ", ctx);
  free(x);
  free(y);
}

/* jit(gamma) equals eager gamma; vmap over a batch of keys equals a loop over them. */
static void test_transforms(void) {
  jx_scope_begin();
  jx_array *key = jx_random_key(5), *a = alpha3();
  jx_array *eager = jx_random_gamma(key, a, -1, NULL, JX_FLOAT32);
  jx_fn *f = jx_fn_new("gamma", 2, 1, gamma_fn, NULL);
  jx_fn *jf = jx_jit(f), *vf = jx_vmap(f, (int[]){0, JX_NOT_MAPPED}, NULL);
  jx_array *out[1] = {NULL};
  CHECK(jx_call(jf, (jx_array *[]){key, a}, out) == JX_OK);
  expect_same("jit(gamma)", eager, out[0]);
  jx_array *keys = jx_random_split(key, 3);
  CHECK(jx_call(vf, (jx_array *[]){keys, a}, out) == JX_OK);
  for (int64_t i = 0; i < 3 && out[0]; i++) {
    jx_array *idx = jx_scalar_int(i);
    jx_array *ki = jx_take(keys, idx, 0), *row = jx_take(out[0], idx, 0);
    expect_same("vmap(gamma) row", jx_random_gamma(ki, a, -1, NULL, JX_FLOAT32), row);
  }
  jx_fn_free(f);
  jx_fn_free(jf);
  jx_fn_free(vf);
  jx_scope_end(0, NULL);
}

/* Bad input: each a clear error naming the function. */
/* Zero-size event axes give empty samples (JAX 0.10.2: dirichlet of alpha (0,) -> (0,),
 * of (2, 0) -> (2, 0); multivariate_normal of mean (0,), cov (0, 0) -> (0,)), and a
 * covariance that is not positive definite NaN samples throughout (JAX:
 * multivariate_normal(PRNGKey(99), zeros(2), [[1, 2], [2, 1]]) -> [nan nan]: its
 * cholesky fails the whole matrix). */
static void test_edge_parameters(void) {
  jx_scope_begin();
  jx_array *key = jx_random_key(0);
  jx_array *d0 = jx_random_dirichlet(key, jx_zeros(1, (int64_t[]){0}, JX_FLOAT32), -1, NULL, JX_FLOAT32);
  CHECK(d0 && jx_ndim(d0) == 1 && jx_shape(d0)[0] == 0);
  jx_array *d1 = jx_random_dirichlet(key, jx_zeros(2, (int64_t[]){2, 0}, JX_FLOAT32), -1, NULL, JX_FLOAT32);
  CHECK(d1 && jx_ndim(d1) == 2 && jx_shape(d1)[0] == 2 && jx_shape(d1)[1] == 0);
  jx_array *m0 = jx_random_multivariate_normal(key, jx_zeros(1, (int64_t[]){0}, JX_FLOAT32),
                                               jx_zeros(2, (int64_t[]){0, 0}, JX_FLOAT32), -1, NULL, JX_FLOAT32);
  CHECK(m0 && jx_ndim(m0) == 1 && jx_shape(m0)[0] == 0);
  jx_array *cov = jx_array_from((float[]){1, 2, 2, 1}, JX_FLOAT32, 2, (int64_t[]){2, 2});
  jx_array *bad = jx_random_multivariate_normal(jx_random_key(99), jx_zeros(1, (int64_t[]){2}, JX_FLOAT32), cov, -1,
                                                NULL, JX_FLOAT32);
  float v[2] = {0, 0};
  CHECK(bad && jx_read(bad, v, sizeof v) == JX_OK && isnan(v[0]) && isnan(v[1]));
  /* a batch of a good and a bad covariance: only the bad one's samples are NaN */
  jx_array *covs = jx_stack(2, (jx_array *[]){jx_eye(2, JX_FLOAT32), cov}, 0);
  jx_array *two = jx_random_multivariate_normal(key, jx_zeros(1, (int64_t[]){2}, JX_FLOAT32), covs, -1, NULL,
                                                JX_FLOAT32);
  float w[4] = {0};
  CHECK(two && jx_read(two, w, sizeof w) == JX_OK && isfinite(w[0]) && isfinite(w[1]) && isnan(w[2]) && isnan(w[3]));
  jx_scope_end(0, NULL);
}

static void test_errors(void) {
  jx_scope_begin();
  jx_array *key = jx_random_key(0), *a = alpha3();
  jx_array *ones2 = jx_ones(1, (int64_t[]){2}, JX_FLOAT32), *one = jx_scalar(1.0);
#define EXPECT_ERR(call, want)                                                              \
  do {                                                                                      \
    jx_clear_error();                                                                       \
    jx_array *r_ = (call);                                                                  \
    CHECK_MSG(r_ == NULL && jx_last_status() == (want), "%s: got %s (%s)", #call,           \
              jx_status_name(jx_last_status()), jx_last_error());                           \
    CHECK_MSG(strstr(jx_last_error(), "jx_random_") != NULL, "%s: %s", #call, jx_last_error()); \
  } while (0)
  EXPECT_ERR(jx_random_gamma(key, a, -1, NULL, JX_INT32), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_gamma(key, NULL, -1, NULL, JX_FLOAT32), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_gamma(NULL, a, -1, NULL, JX_FLOAT32), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_gamma(a, a, -1, NULL, JX_FLOAT32), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_loggamma(key, a, 1, (int64_t[]){4}, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_beta(key, a, ones2, -1, NULL, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_dirichlet(key, one, -1, NULL, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_t(key, a, 1, NULL, JX_FLOAT32), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_chisquare(key, a, 2, (int64_t[]){2, -1}, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_rademacher(key, 1, (int64_t[]){3}, JX_BOOL), JX_ERR_DTYPE);
  /* more samples than the 2^32 counters of one word: named by the function called */
  EXPECT_ERR(jx_random_uniform(key, 2, (int64_t[]){1 << 20, (1 << 12) + 1}, JX_FLOAT32, 0, 1), JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "jx_random_uniform: samples of 4296015872 elements (more than 2^32)");
  EXPECT_ERR(jx_random_poisson(key, a, -1, NULL, JX_FLOAT32), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_poisson(key, a, 1, (int64_t[]){2}, JX_INT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_poisson(key, NULL, -1, NULL, JX_INT32), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_binomial(key, a, a, -1, NULL, JX_INT32), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_binomial(key, a, ones2, -1, NULL, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_categorical_shape(key, one, -1, -1, NULL, true), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_categorical_shape(key, a, 1, -1, NULL, true), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_categorical_shape(key, a, 0, 1, (int64_t[]){4}, false), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_categorical_shape(key, jx_arange(0, 3, 1, JX_INT32), 0, -1, NULL, true),
             JX_ERR_DTYPE);
  /* random_dist.c */
  EXPECT_ERR(jx_random_weibull_min(key, one, NULL, 0, NULL, JX_FLOAT32), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_weibull_min(key, one, one, -1, NULL, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_weibull_min(key, a, ones2, 0, NULL, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_rayleigh(NULL, one, -1, NULL, JX_FLOAT32), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_rayleigh(key, a, 1, (int64_t[]){2}, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_maxwell(key, 1, (int64_t[]){3}, JX_INT32), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_maxwell(key, -1, NULL, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_pareto(key, one, 1, (int64_t[]){3}, JX_BOOL), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_wald(key, NULL, -1, NULL, JX_FLOAT32), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_geometric(key, one, 1, (int64_t[]){3}, JX_FLOAT32), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_generalized_normal(key, 2.0, 1, (int64_t[]){-3}, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_generalized_normal(a, 2.0, 1, (int64_t[]){3}, JX_FLOAT32), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_ball(key, -1, 2.0, 0, NULL, JX_FLOAT32), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_ball(key, 3, 2.0, 0, NULL, JX_INT8), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_orthogonal(key, -2, 0, NULL, JX_FLOAT32, -1), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_orthogonal(key, 3, 0, NULL, JX_INT32, -1), JX_ERR_DTYPE);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

int main(void) {
  cases = golden_load("random_more.txt", &ncases);
  TEST_RUN_SPLIT(test_golden);
  TEST_RUN(test_transforms);
  TEST_RUN(test_errors);
  TEST_RUN(test_edge_parameters);
  golden_free(cases, ncases);
  return test_finish();
}
