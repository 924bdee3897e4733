/* test_random_keys.c -- jax.random with traced seeds and data, the raw hash, and the
 * gamma family's derivatives (src/lib/random.c, random_gamma.c) against JAX goldens
 * (tests/golden/random_keys.txt, tools/golden_random_keys.py) on the default device:
 * jx_random_key_from (eager, jit, vmap over seeds), jx_random_fold_in_from (eager, vmap
 * over data and over keys and data), jx_random_threefry_2x32 (even, odd, empty counts)
 * bit for bit; jax.grad through gamma, loggamma, beta, dirichlet, t and chisquare
 * (JAX's implicit derivative, lax.random_gamma_grad) within a relative tolerance (the
 * samples themselves can differ from JAX's by a few float32 ulps, include/jaxc/random.h).
 * Then the derivative against central differences of the inverse CDF, grad under jit,
 * and bad input. Every case ends with no live arrays (TEST_RUN). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

typedef struct Call {
  const char *fn;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  jx_dtype dtype;
} Call;

/* The sampler of a grad_* case: its sum (dirichlet: weighted by in[2]). */
static jx_status sampler_sum(void *ctx, jx_array *const *in, jx_array **out) {
  const Call *c = ctx;
  const char *f = c->fn + strlen("grad_");
  const int64_t *sh = c->ndim < 0 ? NULL : c->shape;
  jx_array *s = NULL;
  if (!strncmp(f, "gamma", 5)) s = jx_random_gamma(in[0], in[1], c->ndim, sh, c->dtype);
  else if (!strcmp(f, "loggamma")) s = jx_random_loggamma(in[0], in[1], c->ndim, sh, c->dtype);
  else if (!strcmp(f, "beta")) s = jx_random_beta(in[0], in[1], in[2], c->ndim, sh, c->dtype);
  else if (!strcmp(f, "dirichlet"))
    s = jx_multiply(in[2], jx_random_dirichlet(in[0], in[1], c->ndim, sh, c->dtype));
  else if (!strcmp(f, "t")) s = jx_random_t(in[0], in[1], c->ndim, sh, c->dtype);
  else if (!strcmp(f, "chisquare")) s = jx_random_chisquare(in[0], in[1], c->ndim, sh, c->dtype);
  out[0] = jx_sum(s, 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status key_from_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_random_key_from(in[0]);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status fold_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_random_fold_in_from(in[0], in[1]);
  return out[0] ? JX_OK : jx_last_status();
}

/* Runs a transformed f on in; out[0 .. nout) new references (NULL on error). */
static void run_fn(jx_fn *f, jx_array *const *in, jx_array **out) {
  if (!f || jx_call(f, in, out) != JX_OK) out[0] = out[1] = NULL;
  jx_fn_free(f);
}

static void call_case(const GoldenCase *c, jx_array *const *in, jx_array **out) {
  Call call = {c->fn, 0, {0}, JX_FLOAT32};
  call.ndim = golden_param_shape(c, "shape", call.shape);
  const char *dt = golden_param(c, "dtype");
  if (dt && !strcmp(dt, "float64")) call.dtype = JX_FLOAT64;
  const char *f = c->fn;
  out[0] = out[1] = NULL;
  if (!strcmp(f, "key_from")) {
    out[0] = jx_random_key_from(in[0]);
  } else if (!strcmp(f, "key_from_jit")) {
    jx_fn *k = jx_fn_new("key", 1, 1, key_from_fn, NULL);
    run_fn(jx_jit(k), in, out);
    jx_fn_free(k);
  } else if (!strcmp(f, "key_from_vmap")) {
    jx_fn *k = jx_fn_new("key", 1, 1, key_from_fn, NULL);
    run_fn(jx_vmap(k, (int[]){0}, NULL), in, out);
    jx_fn_free(k);
  } else if (!strcmp(f, "fold_in_from")) {
    out[0] = jx_random_fold_in_from(in[0], in[1]);
  } else if (!strcmp(f, "fold_in_from_vmap") || !strcmp(f, "fold_in_from_vmap_both")) {
    jx_fn *fold = jx_fn_new("fold", 2, 1, fold_fn, NULL);
    bool both = !strcmp(f, "fold_in_from_vmap_both");
    run_fn(jx_vmap(fold, (int[]){both ? 0 : JX_NOT_MAPPED, 0}, NULL), in, out);
    jx_fn_free(fold);
  } else if (!strcmp(f, "threefry_2x32")) {
    out[0] = jx_random_threefry_2x32(in[0], in[1]);
  } else if (!strcmp(f, "grad_gamma_vmap")) {
    jx_fn *s = jx_fn_new(f, 2, 1, sampler_sum, &call);
    jx_fn *g = jx_grad(s, 1, (int[]){1});
    run_fn(jx_vmap(g, (int[]){0, JX_NOT_MAPPED}, NULL), in, out);
    jx_fn_free(g);
    jx_fn_free(s);
  } else if (!strncmp(f, "grad_", 5)) {
    bool two = !strcmp(f, "grad_beta");
    int nin = c->nin;
    jx_fn *s = jx_fn_new(f, nin, 1, sampler_sum, &call);
    run_fn(jx_grad(s, two ? 2 : 1, (int[]){1, 2}), in, out);
    jx_fn_free(s);
  } else {
    test_fail(__FILE__, __LINE__, "unknown golden function %s", f);
  }
}

static double worst_rel;

static void test_golden(void) {
  CHECK_MSG(cases != NULL, "cannot load random_keys.txt (run tools/golden_random_keys.py)");
  worst_rel = 0;
  int ngrad = 0;
  for (int i = 0; i < ncases; i++) {
    if (!test_shard_mine()) continue;
    const GoldenCase *c = &cases[i];
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_config_enable_x64(golden_param_int(c, "x64", 0) != 0);
    jx_scope_begin();
    jx_array *in[4] = {NULL}, *out[2] = {NULL, NULL};
    for (int k = 0; k < c->nin && k < 4; k++) in[k] = golden_to_array(&c->in[k]);
    call_case(c, in, out);
    if (c->err) {
      golden_check_err(ctx, c, out[0]);
      CHECK_MSG(strstr(jx_last_error(), "jx_random_") != NULL, "%s: message %s", ctx,
                jx_last_error());
    } else if (!strncmp(c->fn, "grad_", 5)) {
      /* Relative 1e-4 (with atol 1e-7 for tiny derivatives): the samples are within a
       * few ulps of JAX's and the derivative is evaluated at them. */
      ngrad++;
      for (int o = 0; o < c->nout && o < 2; o++) {
        golden_compare(ctx, out[o], &c->out[o], 1e-4, 1e-7);
        double *g = out[o] ? test_read_f64(out[o]) : NULL;
        for (int64_t e = 0; g && e < c->out[o].size; e++) {
          double w = c->out[o].f[e], r = fabs(g[e] - w) / fmax(fabs(w), 1e-30);
          if (isfinite(r) && r > worst_rel) worst_rel = r;
        }
        free(g);
      }
    } else {
      golden_compare(ctx, out[0], &c->out[0], 0, 0);
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
    jx_config_enable_x64(false);
  }
  printf("%d golden cases (%d gradients, worst relative difference %.3g)\n", ncases, ngrad,
         worst_rel);
}

/* d sample / d a by central differences of the sampler itself is meaningless (the
 * rejection loop is piecewise constant in a); instead check the implicit derivative's
 * defining identity: for x = gamma(a), P(a, x) stays constant, so
 * dx/da = -(dP/da) / (dP/dx) with P = jax.scipy.special.gammainc, by differences in
 * float64. */
static jx_status gammainc_fn(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_special_gammainc(in[0], in[1]);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_implicit_identity(void) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  double av[5] = {0.4, 1.0, 3.5, 12.0, 0.08};
  jx_array *key = jx_random_key(17), *a = jx_array_from(av, JX_FLOAT64, 1, (int64_t[]){5});
  Call call = {"grad_gamma", -1, {0}, JX_FLOAT64};
  jx_fn *s = jx_fn_new("gamma_sum", 2, 1, sampler_sum, &call);
  jx_fn *g = jx_grad(s, 1, (int[]){1}), *jg = jx_jit(g);
  jx_array *ga = NULL, *gj = NULL;
  CHECK(jx_call(g, (jx_array *[]){key, a}, &ga) == JX_OK);
  CHECK(jx_call(jg, (jx_array *[]){key, a}, &gj) == JX_OK);
  jx_array *x = jx_random_gamma(key, a, -1, NULL, JX_FLOAT64);
  double *gv = test_read_f64(ga), *gjv = test_read_f64(gj), *xv = test_read_f64(x);
  jx_fn *P = jx_fn_new("gammainc", 2, 1, gammainc_fn, NULL);
  for (int i = 0; i < 5 && gv && xv; i++) {
    double h = 1e-6 * fmax(av[i], 1e-3), hx = 1e-6 * fmax(xv[i], 1e-300);
    double p[4];
    double args[4][2] = {{av[i] + h, xv[i]}, {av[i] - h, xv[i]}, {av[i], xv[i] + hx},
                         {av[i], xv[i] - hx}};
    for (int k = 0; k < 4; k++) {
      jx_array *r = NULL;
      CHECK(jx_call(P, (jx_array *[]){jx_full(0, NULL, args[k][0], JX_FLOAT64),
                                      jx_full(0, NULL, args[k][1], JX_FLOAT64)},
                    &r) == JX_OK);
      p[k] = r ? jx_item(r) : NAN;
    }
    double want = -((p[0] - p[1]) / (2 * h)) / ((p[2] - p[3]) / (2 * hx));
    CHECK_MSG(fabs(gv[i] - want) <= 1e-5 * fabs(want) + 1e-12, "a=%g: dx/da %.12g, want %.12g",
              av[i], gv[i], want);
    CHECK_MSG(gjv && gjv[i] == gv[i], "a=%g: jit(grad) %.17g != grad %.17g", av[i],
              gjv ? gjv[i] : NAN, gv[i]);
  }
  free(gv), free(gjv), free(xv);
  jx_fn_free(P), jx_fn_free(jg), jx_fn_free(g), jx_fn_free(s);
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

/* Bad input: each a clear error naming the function. */
static void test_errors(void) {
  jx_scope_begin();
  jx_array *key = jx_random_key(0), *i2 = jx_arange(0, 2, 1, JX_INT32);
  jx_array *f0 = jx_full(0, NULL, 1.0, JX_FLOAT32), *b0 = jx_full(0, NULL, 1.0, JX_BOOL);
  jx_array *i0 = jx_scalar_int(3);
#define EXPECT_ERR(call, want)                                                              \
  do {                                                                                      \
    jx_clear_error();                                                                       \
    jx_array *r_ = (call);                                                                  \
    CHECK_MSG(r_ == NULL && jx_last_status() == (want), "%s: got %s (%s)", #call,           \
              jx_status_name(jx_last_status()), jx_last_error());                           \
    CHECK_MSG(strstr(jx_last_error(), "jx_random_") != NULL, "%s: %s", #call, jx_last_error()); \
  } while (0)
  EXPECT_ERR(jx_random_key_from(NULL), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_key_from(f0), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_key_from(b0), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_key_from(i2), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_fold_in_from(key, NULL), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_fold_in_from(key, i2), JX_ERR_SHAPE);
  EXPECT_ERR(jx_random_fold_in_from(key, f0), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_fold_in_from(i0, i0), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_threefry_2x32(key, NULL), JX_ERR_VALUE);
  EXPECT_ERR(jx_random_threefry_2x32(key, i2), JX_ERR_DTYPE);
  EXPECT_ERR(jx_random_threefry_2x32(jx_random_split(key, 2), key), JX_ERR_SHAPE);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

int main(void) {
  cases = golden_load("random_keys.txt", &ncases);
  TEST_RUN_SPLIT(test_golden);
  TEST_RUN(test_implicit_identity);
  TEST_RUN(test_errors);
  golden_free(cases, ncases);
  return test_finish();
}
