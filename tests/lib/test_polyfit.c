/* test_polyfit.c -- jnp.polyfit (jx_polyfit, src/lib/linalg_more.c) against JAX goldens
 * (tests/golden/polyfit.txt, tools/golden_polyfit.py): degrees 0-5, full (residuals,
 * rank, singular values, rcond), weights, cov=True / "unscaled", 1-d and 2-d y, an
 * explicit rcond, a rank-deficient fit, float32 and float64, and JAX's errors; then
 * jit equals eager, the gradient of the fit w.r.t. y is the (linear) least-squares
 * operator, and nothing leaks (TEST_RUN). */
#include <math.h>
#include <stdlib.h>

#include "golden.h"
#include "test.h"

typedef struct Opts {
  int deg, cov;
  double rcond;
  bool full, has_w;
} Opts;

static Opts opts_of(const GoldenCase *c) {
  Opts o;
  o.deg = (int)golden_param_int(c, "deg", 1);
  o.cov = (int)golden_param_int(c, "cov", 0);
  o.full = golden_param_int(c, "full", 0) != 0;
  o.has_w = golden_param_int(c, "w", 0) != 0;
  const char *r = golden_param(c, "rcond");
  o.rcond = !r || !strcmp(r, "nan") ? NAN : strtod(r, NULL);
  return o;
}

static int nouts(const Opts *o) { return o->full ? 5 : o->cov ? 2 : 1; }

static void test_goldens(void) {
  int ncases = 0;
  GoldenCase *cases = golden_load("polyfit.txt", &ncases);
  CHECK_MSG(cases && ncases >= 30, "polyfit.txt: %d cases", ncases);
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    bool x64 = golden_param_int(c, "x64", 0) != 0;
    jx_config_enable_x64(x64);
    jx_scope_begin();
    Opts o = opts_of(c);
    jx_array *in[3] = {NULL}, *out[5] = {NULL};
    for (int k = 0; k < c->nin && k < 3; k++) in[k] = golden_to_array(&c->in[k]);
    jx_status s = jx_polyfit(in[0], in[1], o.deg, o.rcond, o.full, o.has_w ? in[2] : NULL,
                             (jx_polyfit_cov)o.cov, out);
    if (c->err) {
      CHECK_MSG(s == c->err && out[0] == NULL, "%s: want %s, got %s (%s)", c->name,
                jx_status_name(c->err), jx_status_name(s), jx_last_error());
      CHECK_MSG(strstr(jx_last_error(), "jx_polyfit") != NULL, "%s: %s", c->name, jx_last_error());
    } else {
      CHECK_MSG(s == JX_OK, "%s: %s", c->name, jx_last_error());
      CHECK_MSG(c->nout == nouts(&o), "%s: %d outputs in the golden", c->name, c->nout);
      /* float32: an SVD-based solve whose sums LAPACK orders differently from XLA's */
      double rtol = x64 ? 1e-9 : 2e-4, atol = x64 ? 1e-10 : 2e-5;
      if (!strncmp(c->name, "deg5", 4) || !strncmp(c->name, "rcond", 5)) rtol *= 10, atol *= 10;
      for (int k = 0; k < c->nout && s == JX_OK; k++) golden_compare(c->name, out[k], &c->out[k], rtol, atol);
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
    jx_config_enable_x64(false);
  }
  golden_free(cases, ncases);
}

static jx_status fit3(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  return jx_polyfit(in[0], in[1], 2, NAN, false, NULL, JX_POLYFIT_COV_NONE, out);
}

static jx_status fit3_dot(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *c = NULL;
  jx_status s = fit3(ctx, in, &c);
  if (s != JX_OK) return s;
  out[0] = jx_sum(jx_multiply(c, jx_array_from((double[]){1.0, -2.0, 0.5}, JX_FLOAT64, 1, (int64_t[]){3})),
                  0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

/* jit(polyfit) == polyfit; d c / d y is the least-squares operator: the gradient of
 * sum(c * v) is A (A^T A)^-1 v, checked against central differences in float64. */
static void test_jit_and_grad(void) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  jx_array *x = jx_linspace(-1, 2, 7, JX_FLOAT64);
  jx_array *y = jx_add(jx_multiply(x, x), jx_sin(jx_multiply(x, jx_scalar(3.0))));
  jx_fn *f = jx_fn_new("fit", 2, 1, fit3, NULL), *jf = jx_jit(f);
  jx_array *a = NULL, *b = NULL;
  CHECK(jx_call(f, (jx_array *[]){x, y}, &a) == JX_OK && jx_call(jf, (jx_array *[]){x, y}, &b) == JX_OK);
  double *pa = test_read_f64(a), *pb = test_read_f64(b);
  for (int i = 0; i < 3 && pa && pb; i++) CHECK_MSG(fabs(pa[i] - pb[i]) <= 1e-12, "coef %d: %g vs %g", i, pa[i], pb[i]);
  free(pa), free(pb);
  jx_fn *fd = jx_fn_new("fit_dot", 2, 1, fit3_dot, NULL);
  test_check_grad("polyfit wrt x and y", fd, 2, 2, (jx_array *[]){x, y}, 1e-6);
  jx_fn_free(fd), jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

static void test_errors(void) {
  jx_scope_begin();
  jx_array *x = jx_linspace(0, 1, 5, JX_FLOAT32), *out[5];
  CHECK(jx_polyfit(NULL, x, 1, NAN, false, NULL, JX_POLYFIT_COV_NONE, out) == JX_ERR_VALUE);
  CHECK(jx_polyfit(x, x, 1, NAN, false, NULL, (jx_polyfit_cov)7, out) == JX_ERR_VALUE);
  CHECK(jx_polyfit(x, x, 1, NAN, false, NULL, JX_POLYFIT_COV_NONE, NULL) == JX_ERR_VALUE);
  CHECK(jx_polyfit(jx_zeros(1, (int64_t[]){0}, JX_FLOAT32), jx_zeros(1, (int64_t[]){0}, JX_FLOAT32), 1,
                   NAN, false, NULL, JX_POLYFIT_COV_NONE, out) == JX_ERR_SHAPE);
  jx_clear_error();
  jx_scope_end(0, NULL);
}

int main(void) {
  TEST_RUN(test_goldens);
  TEST_RUN(test_jit_and_grad);
  TEST_RUN(test_errors);
  return test_finish();
}
