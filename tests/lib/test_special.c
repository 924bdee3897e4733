/* test_special.c -- jax.scipy.special (src/lib/special.c, special_prims.c) against JAX
 * goldens (tools/golden_special.py -> tests/golden/special.txt): values over the domain
 * edges in float32, float64 (x64 cases), float16 and integer arguments, broadcasting and
 * weak scalars, gradients (first and second order) through JAX's custom JVP rules, each
 * case run eagerly and under jit; vmap against a loop, make_jaxpr naming the custom
 * calls, and bad input with clear errors. Leaks are checked by TEST_RUN.
 *
 * Tolerances (relative, per dtype): float32 values 4e-6 (a few ulps: the expansions are
 * XLA's, evaluated with other rounding of fused multiply-adds and libm/libmvec), 1e-4
 * where a difference of two nearly equal terms loses digits (gammainc/gammaincc/betaln/
 * zeta and gradients of the incomplete gamma function), 2e-5 for betainc (its prefactor
 * exp(a log x + b log1p(-x) - lbeta) turns lgamma's few ulps into relative error);
 * float64 1e-12 (betainc 1e-10, the same amplification); float16 2e-3. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "jit/jit.h"
#include "test.h"

typedef struct Spec {
  const GoldenCase *c;
} Spec;

static int list_axes(const GoldenCase *c, int *axes) {
  const char *s = golden_param(c, "axes");
  int n = 0;
  while (s && *s && n < JX_MAX_NDIM) {
    char *end;
    axes[n++] = (int)strtol(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* Calls the function named name on x; returns the number of outputs. */
static int apply(const GoldenCase *c, const char *name, jx_array *const *x, jx_array **out) {
  int ax[JX_MAX_NDIM], nax = list_axes(c, ax);
  const int *axes = golden_param(c, "axes") ? ax : NULL;
  bool kd = golden_param_int(c, "keepdims", 0);
#define U(n, e) if (!strcmp(name, n)) return out[0] = (e), 1
  U("erf", jx_special_erf(x[0]));
  U("erfc", jx_special_erfc(x[0]));
  U("erfinv", jx_special_erfinv(x[0]));
  U("ndtr", jx_special_ndtr(x[0]));
  U("ndtri", jx_special_ndtri(x[0]));
  U("log_ndtr", jx_special_log_ndtr(x[0], (int)golden_param_int(c, "series_order", 3)));
  U("logit", jx_special_logit(x[0]));
  U("expit", jx_special_expit(x[0]));
  U("entr", jx_special_entr(x[0]));
  U("gammaln", jx_special_gammaln(x[0]));
  U("digamma", jx_special_digamma(x[0]));
  U("i0e", jx_special_i0e(x[0]));
  U("i1e", jx_special_i1e(x[0]));
  U("xlogy", jx_special_xlogy(x[0], x[1]));
  U("xlog1py", jx_special_xlog1py(x[0], x[1]));
  U("betaln", jx_special_betaln(x[0], x[1]));
  U("gammainc", jx_special_gammainc(x[0], x[1]));
  U("gammaincc", jx_special_gammaincc(x[0], x[1]));
  U("zeta", jx_special_zeta(x[0], x[1]));
  U("polygamma", jx_special_polygamma(x[0], x[1]));
  U("betainc", jx_special_betainc(x[0], x[1], x[2]));
  U("logsumexp", jx_special_logsumexp(x[0], nax, axes, c->nin > 1 ? x[1] : NULL, kd, NULL, NULL));
  U("logsumexp_where", jx_special_logsumexp(x[0], nax, axes, NULL, kd, x[1], NULL));
  U("softmax", jx_special_softmax(x[0], nax, axes));
  if (!strcmp(name, "logsumexp_sign")) {
    out[0] = jx_special_logsumexp(x[0], nax, axes, x[1], kd, NULL, &out[1]);
    return 2;
  }
  if (!strcmp(name, "logsumexp_grad")) { /* the function grad_logsumexp differentiates */
    jx_array *b = jx_add(jx_abs(x[1]), jx_scalar(0.5));
    out[0] = jx_special_logsumexp(x[0], nax, axes, b, false, NULL, NULL);
    jx_free(b);
    return 1;
  }
#undef U
  return 0;
}

static jx_status f_value(void *ctx, jx_array *const *x, jx_array **out) {
  const GoldenCase *c = ctx;
  int n = apply(c, c->fn, x, out);
  return n ? (out[0] ? JX_OK : jx_last_status()) : JX_ERR_VALUE;
}
/* sum(f(x)) for grad_<f> cases */
static jx_status f_sum(void *ctx, jx_array *const *x, jx_array **out) {
  const GoldenCase *c = ctx;
  const char *name = strchr(c->fn, '_') + 1; /* grad_<f>, grad2_<f> */
  if (!strcmp(name, "logsumexp")) name = "logsumexp_grad";
  jx_array *r[2] = {NULL, NULL};
  if (!apply(c, name, x, r)) return JX_ERR_VALUE;
  out[0] = jx_sum(r[0], 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}
/* sum(grad(sum(f))(x)) for grad2_<f> cases */
static jx_status f_grad_sum(void *ctx, jx_array *const *x, jx_array **out) {
  jx_fn *s = jx_fn_new("sum", 1, 1, f_sum, ctx);
  jx_fn *g = jx_grad(s, 1, (int[]){0});
  jx_array *r[1] = {NULL};
  jx_status st = jx_call(g, x, r);
  out[0] = st == JX_OK ? jx_sum(r[0], 0, NULL, false) : NULL;
  jx_fn_free(g), jx_fn_free(s);
  return st;
}

static jx_fn *make(GoldenCase *c) {
  int argnum = (int)golden_param_int(c, "argnum", 0);
  if (!strncmp(c->fn, "grad2_", 6)) {
    jx_fn *h = jx_fn_new("grad_sum", 1, 1, f_grad_sum, c);
    jx_fn *g = jx_grad(h, 1, (int[]){0});
    jx_fn_free(h);
    return g;
  }
  if (!strncmp(c->fn, "grad_", 5)) {
    jx_fn *s = jx_fn_new("sum", c->nin, 1, f_sum, c);
    jx_fn *g = jx_grad(s, 1, (int[]){argnum});
    jx_fn_free(s);
    return g;
  }
  return jx_fn_new(c->fn, c->nin, !strcmp(c->fn, "logsumexp_sign") ? 2 : 1, f_value, c);
}

static double rtol_for(const GoldenCase *c, jx_dtype d) {
  if (d == JX_FLOAT64) return strstr(c->fn, "betainc") ? 1e-10 : 1e-12;
  if (d == JX_FLOAT16) return 2e-3;
  if (d == JX_BFLOAT16) return 1.6e-2;
  const char *f = c->fn;
  if (strstr(f, "gammainc") || strstr(f, "betaln") || strstr(f, "zeta") || strstr(f, "polygamma")) return 1e-4;
  if (strstr(f, "betainc")) return 2e-5; /* lgamma's few ulps, amplified by exp(... - lbeta) */
  return 4e-6;
}

static void test_goldens(void) {
  int n = 0;
  GoldenCase *cases = golden_load("special.txt", &n);
  CHECK_MSG(cases != NULL, "cannot load special.txt (run tools/golden_special.py)");
  int run = 0;
  for (int k = 0; cases && k < n; k++) {
    if (!test_shard_mine()) continue;
    GoldenCase *c = &cases[k];
    bool x64 = golden_param_int(c, "x64", 0);
    jx_config_enable_x64(x64);
    jx_fn *f = make(c);
    CHECK_MSG(f != NULL, "%s: no function %s", c->name, c->fn);
    if (!f) continue;
    jx_fn *jf = jx_jit(f);
    jx_array *in[4] = {NULL}, *out[2] = {NULL};
    for (int i = 0; i < c->nin; i++) in[i] = golden_to_array(&c->in[i]);
    for (int mode = 0; mode < 2; mode++) {
      char ctx[160];
      snprintf(ctx, sizeof ctx, "%s (line %d, %s)", c->name, c->line, mode ? "jit" : "eager");
      jx_status s = jx_call(mode ? jf : f, in, out);
      if (c->err != JX_OK) {
        CHECK_MSG(s == c->err, "%s: expected %s, got %s (%s)", ctx, jx_status_name(c->err), jx_status_name(s),
                  jx_last_error());
      } else {
        CHECK_MSG(s == JX_OK, "%s: %s", ctx, jx_last_error());
        /* fused into kernels, not evaluated equation by equation (the unrolled igamma
         * series of gammainc/gammaincc and their derivatives included) */
        if (mode && s == JX_OK && !strstr(c->fn, "betainc")) /* (betainc: a while loop, run in pieces) */
          CHECK_MSG(jit_program_for(jf, in) != NULL, "%s: no compiled program", ctx);
        for (int o = 0; s == JX_OK && o < c->nout; o++) {
          double rtol = rtol_for(c, c->out[o].dtype);
          golden_compare(ctx, out[o], &c->out[o], rtol, rtol * 0.25);
        }
      }
      jx_clear_error();
      for (int o = 0; o < 2; o++) jx_free(out[o]), out[o] = NULL;
    }
    for (int i = 0; i < c->nin; i++) jx_free(in[i]);
    jx_fn_free(jf), jx_fn_free(f);
    run++;
  }
  jx_config_enable_x64(false);
  golden_free(cases, n);
  printf("%d golden special cases\n", run);
}

/* vmap(f) over rows equals f on each row; grad(vmap) equals the per-row grads. */
static jx_status f_gammainc(void *ctx, jx_array *const *x, jx_array **o) {
  o[0] = jx_special_gammainc(x[0], x[1]);
  return o[0] ? JX_OK : jx_last_status();
}
static jx_status f_zeta(void *ctx, jx_array *const *x, jx_array **o) {
  o[0] = jx_special_zeta(x[0], x[1]);
  return o[0] ? JX_OK : jx_last_status();
}
static void test_vmap(void) {
  float a[6] = {0.5f, 2.0f, 3.0f, 9.0f, 1.5f, 4.0f}, x[6] = {0.3f, 3.0f, 1.0f, 12.0f, 2.5f, 0.5f};
  jx_fn *fs[2] = {jx_fn_new("gammainc", 2, 1, f_gammainc, NULL), jx_fn_new("zeta", 2, 1, f_zeta, NULL)};
  for (int k = 0; k < 2; k++) {
    jx_scope_begin();
    jx_array *A = jx_array_from(a, JX_FLOAT32, 2, (int64_t[]){2, 3});
    jx_array *X = jx_add(jx_array_from(x, JX_FLOAT32, 2, (int64_t[]){2, 3}), jx_scalar(k));
    jx_fn *v = jx_vmap(fs[k], (int[]){0, 0}, (int[]){0});
    jx_fn *jv = jx_jit(v);
    jx_array *r[1], *rj[1];
    CHECK(jx_call(v, (jx_array *[]){A, X}, r) == JX_OK);
    CHECK(jx_call(jv, (jx_array *[]){A, X}, rj) == JX_OK);
    jx_array *whole[1];
    CHECK(jx_call(fs[k], (jx_array *[]){A, X}, whole) == JX_OK);
    double *got = test_read_f64(r[0]), *gotj = test_read_f64(rj[0]), *want = test_read_f64(whole[0]);
    for (int i = 0; got && gotj && want && i < 6; i++) {
      CHECK_NEAR(got[i], want[i], 1e-6 + 1e-6 * fabs(want[i]));
      CHECK_NEAR(gotj[i], want[i], 1e-5 * fabs(want[i]) + 1e-6);
    }
    free(got), free(gotj), free(want);
    jx_free(r[0]), jx_free(rj[0]), jx_free(whole[0]);
    jx_fn_free(jv), jx_fn_free(v);
    jx_scope_end(0, NULL);
  }
  jx_fn_free(fs[0]), jx_fn_free(fs[1]);
}

/* The lax functions are single special_call equations named as JAX's primitives. */
static jx_status f_gammaln(void *ctx, jx_array *const *x, jx_array **o) {
  o[0] = jx_special_gammaln(x[0]);
  return o[0] ? JX_OK : jx_last_status();
}
static void test_make_jaxpr(void) {
  jx_fn *f = jx_fn_new("gammaln", 1, 1, f_gammaln, NULL);
  jx_array *x = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  char *text = jx_make_jaxpr(f, &x);
  CHECK_MSG(text && strstr(text, "special_call[") && strstr(text, "name=lgamma"), "%s", text ? text : "NULL");
  free(text);
  jx_free(x);
  jx_fn_free(f);
}

/* A second derivative of gammainc in a needs igamma_grad_a's derivative, which JAX does
 * not define either. */
static jx_status f_dgammainc_da(void *ctx, jx_array *const *x, jx_array **o) {
  jx_fn *s = jx_fn_new("gammainc", 2, 1, f_gammainc, NULL);
  jx_fn *g = jx_grad(s, 1, (int[]){0});
  jx_status st = jx_call(g, x, o);
  jx_fn_free(g), jx_fn_free(s);
  return st;
}
/* gammainc / gammaincc where a x^a e^-x / Gamma(a) underflows: JAX 0.10.2 leaves its
 * loops disabled there (gammainc(1, 1e8) = 1, gammaincc(1, 1e8) = 0, gammainc(3, 1e10)
 * = 1, gammainc(100, 1) = 0 in float32; gammainc(1, 1e19) = 1 in float64), where the
 * iterations overflowed to NaN. */
static void test_igamma_underflow(void) {
  jx_scope_begin();
  const double a[4] = {1, 1, 3, 100}, x[4] = {1e8, 1e8, 1e10, 1};
  const double want[4] = {1, 0, 1, 0};
  for (int i = 0; i < 4; i++) {
    jx_array *av = jx_scalar_of(a[i], JX_FLOAT32), *xv = jx_scalar_of(x[i], JX_FLOAT32);
    jx_array *r = i == 1 ? jx_special_gammaincc(av, xv) : jx_special_gammainc(av, xv);
    CHECK_MSG(r && jx_item(r) == want[i], "case %d: %g", i, r ? jx_item(r) : -1.0);
  }
  jx_config_enable_x64(true);
  jx_array *r = jx_special_gammainc(jx_scalar_of(1, JX_FLOAT64), jx_scalar_of(1e19, JX_FLOAT64));
  CHECK(r && jx_item(r) == 1);
  jx_config_enable_x64(false);
  jx_scope_end(0, NULL);
}

static void test_bad_inputs(void) {
  jx_array *x = jx_ones(1, (int64_t[]){3}, JX_FLOAT32), *y = jx_ones(1, (int64_t[]){2}, JX_FLOAT32);
  jx_array *i = jx_ones(1, (int64_t[]){3}, JX_INT32);
  CHECK(jx_special_gammaln(NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_special_gammaln");
  CHECK(jx_special_xlogy(x, y) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_special_xlogy");
  CHECK(jx_special_polygamma(x, x) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_special_polygamma: argument n must be of integer type");
  CHECK(jx_special_zeta(x, NULL) == NULL);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "Riemann zeta");
  CHECK(jx_special_log_ndtr(x, 31) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "series_order");
  CHECK(jx_special_ndtr(i) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_special_ndtr: x.dtype=int32");
  jx_array *s = NULL;
  CHECK(jx_special_logsumexp(NULL, 0, NULL, NULL, false, NULL, &s) == NULL && s == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_special_logsumexp");
  jx_fn *g = jx_fn_new("dgammainc_da", 2, 1, f_dgammainc_da, NULL);
  jx_fn *gg = jx_grad(g, 1, (int[]){0});
  jx_array *o[1] = {NULL};
  jx_array *a0 = jx_scalar(2.0), *x0 = jx_scalar(1.5);
  CHECK(jx_call(gg, (jx_array *[]){a0, x0}, o) == JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "igamma_grad_a");
  jx_free(a0), jx_free(x0);
  jx_fn_free(gg), jx_fn_free(g);
  jx_free(x), jx_free(y), jx_free(i);
}

/* betainc: no derivative in a or b (JAX's ValueError); NULL and mismatched shapes;
 * vmap (the while loop's any-lane predicate batched) and make_jaxpr's name. */
static jx_status f_betainc(void *ctx, jx_array *const *x, jx_array **o) {
  o[0] = jx_special_betainc(x[0], x[1], x[2]);
  return o[0] ? JX_OK : jx_last_status();
}
static void test_betainc(void) {
  jx_scope_begin();
  jx_fn *f = jx_fn_new("betainc", 3, 1, f_betainc, NULL);
  jx_array *a = jx_array_from((float[]){0.5f, 2, 30, 3, 1, 4}, JX_FLOAT32, 2, (int64_t[]){2, 3});
  jx_array *b = jx_array_from((float[]){1.5f, 9, 40, 2, 1, 0.5f}, JX_FLOAT32, 2, (int64_t[]){2, 3});
  jx_array *x = jx_array_from((float[]){0.3f, 0.2f, 0.45f, 0.7f, 0.5f, 0.99f}, JX_FLOAT32, 2, (int64_t[]){2, 3});
  jx_fn *ga = jx_grad(f, 1, (int[]){0});
  jx_array *o[1] = {NULL};
  jx_array *s3[3] = {jx_scalar(2.0), jx_scalar(3.0), jx_scalar(0.4)};
  CHECK(jx_call(ga, s3, o) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "with respect to a and b");
  CHECK(jx_special_betainc(a, NULL, x) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_special_betainc");
  CHECK(jx_special_betainc(a, b, jx_ones(1, (int64_t[]){2}, JX_FLOAT32)) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_special_betainc");
  jx_fn *v = jx_vmap(f, (int[]){0, 0, 0}, (int[]){0});
  jx_array *r[1] = {NULL}, *whole[1] = {NULL};
  CHECK(jx_call(v, (jx_array *[]){a, b, x}, r) == JX_OK);
  CHECK(jx_call(f, (jx_array *[]){a, b, x}, whole) == JX_OK);
  double *got = r[0] ? test_read_f64(r[0]) : NULL, *want = whole[0] ? test_read_f64(whole[0]) : NULL;
  /* (not bit for bit: lgamma(70) ~ 230 in a = 30, b = 40's prefactor carries 1.5e-5 per ulp,
   * and the batched loop's kernels round its log otherwise) */
  for (int i = 0; got && want && i < 6; i++) CHECK_NEAR(got[i], want[i], 3e-5 * fabs(want[i]) + 1e-7);
  free(got), free(want);
  char *text = jx_make_jaxpr(f, (jx_array *[]){a, b, x});
  CHECK_MSG(text && strstr(text, "name=regularized_incomplete_beta"), "%s", text ? text : "NULL");
  free(text);
  jx_free(r[0]), jx_free(whole[0]);
  jx_fn_free(v), jx_fn_free(ga), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

int main(void) {
  TEST_RUN_SPLIT(test_goldens);
  TEST_RUN(test_betainc);
  TEST_RUN(test_vmap);
  TEST_RUN(test_make_jaxpr);
  TEST_RUN(test_bad_inputs);
  TEST_RUN(test_igamma_underflow);
  return test_finish();
}
