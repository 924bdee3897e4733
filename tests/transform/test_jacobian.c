/* test_jacobian.c -- jacfwd, jacrev and hessian against central differences in float64
 * for a non-square function of two array inputs, their output layout (y.shape +
 * x.shape, o-major over argnums), and errors. */
#include <stdlib.h>

#include "test.h"

/* f(x[3], w[2,3]) = (w @ sin(x) [2], sum(x * x * x) []) */
static jx_status f_impl(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_matmul(in[1], jx_sin(in[0]));
  out[1] = jx_sum(jx_mul(jx_mul(in[0], in[0]), in[0]), 0, NULL, false);
  return JX_OK;
}

static double eval_out(jx_fn *f, jx_array *x, jx_array *w, int o, int64_t k) {
  jx_array *out[2];
  jx_call(f, (jx_array *[]){x, w}, out);
  double *v = test_read_f64(out[o]), r = v[k];
  free(v);
  jx_free(out[0]), jx_free(out[1]);
  return r;
}

/* d out[o][k] / d in[a][i] by central differences */
static double numeric(jx_fn *f, double *xv, double *wv, int o, int64_t k, int a, int64_t i) {
  double *p = a == 0 ? xv : wv, keep = p[i], h = 1e-6, r[2];
  for (int s = 0; s < 2; s++) {
    p[i] = keep + (s ? -h : h);
    jx_array *x = jx_array_from(xv, JX_FLOAT64, 1, (int64_t[]){3});
    jx_array *w = jx_array_from(wv, JX_FLOAT64, 2, (int64_t[]){2, 3});
    r[s] = eval_out(f, x, w, o, k);
    jx_free(x), jx_free(w);
  }
  p[i] = keep;
  return (r[0] - r[1]) / (2 * h);
}

static void test_jacobians(void) {
  jx_config_enable_x64(true);
  double xv[3] = {0.3, -1.1, 2.0}, wv[6] = {1, 2, -1, 0.5, 0, 3};
  jx_array *x = jx_array_from(xv, JX_FLOAT64, 1, (int64_t[]){3});
  jx_array *w = jx_array_from(wv, JX_FLOAT64, 2, (int64_t[]){2, 3});
  jx_fn *f = jx_fn_new("f", 2, 2, f_impl, NULL);
  jx_fn *jf = jx_jacfwd(f, 2, (int[]){0, 1}), *jr = jx_jacrev(f, 2, (int[]){0, 1});
  jx_array *a[4], *b[4];
  CHECK_EQ_INT(jx_call(jf, (jx_array *[]){x, w}, a), JX_OK);
  CHECK_EQ_INT(jx_call(jr, (jx_array *[]){x, w}, b), JX_OK);
  /* shapes: J[o][a] = y_o.shape + x_a.shape */
  static const int nd[4] = {2, 3, 1, 2};
  static const int64_t sizes[4] = {6, 12, 3, 6};
  for (int m = 0; m < 4; m++) {
    CHECK_EQ_INT(jx_ndim(a[m]), nd[m]);
    CHECK_EQ_INT(jx_size(a[m]), sizes[m]);
    double *va = test_read_f64(a[m]), *vb = test_read_f64(b[m]);
    int o = m / 2, arg = m % 2;
    int64_t nout = o == 0 ? 2 : 1, nin = arg == 0 ? 3 : 6;
    for (int64_t k = 0; k < nout; k++)
      for (int64_t i = 0; i < nin; i++) {
        double want = numeric(f, xv, wv, o, k, arg, i);
        CHECK_NEAR(va[k * nin + i], want, 1e-6 * (1 + fabs(want)));
        CHECK_NEAR(vb[k * nin + i], want, 1e-6 * (1 + fabs(want)));
      }
    free(va), free(vb);
    jx_free(a[m]), jx_free(b[m]);
  }
  jx_fn_free(jf), jx_fn_free(jr), jx_fn_free(f);
  jx_free(x), jx_free(w);
  jx_config_enable_x64(false);
}

static jx_status cube_sum(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_mul(jx_sin(in[0]), jx_square(in[0])), 0, NULL, false);
  return JX_OK;
}

static void test_hessian(void) {
  jx_config_enable_x64(true);
  double xv[3] = {0.5, -0.25, 1.5};
  jx_array *x = jx_array_from(xv, JX_FLOAT64, 1, (int64_t[]){3});
  jx_fn *f = jx_fn_new("s", 1, 1, cube_sum, NULL), *h = jx_hessian(f, 1, NULL);
  jx_array *H;
  CHECK_EQ_INT(jx_call(h, &x, &H), JX_OK);
  CHECK_EQ_INT(jx_ndim(H), 2);
  double *v = test_read_f64(H);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      /* d2/dx2 of sin(x) x^2 = (2 - x^2) sin x + 4 x cos x on the diagonal, 0 elsewhere */
      double t = xv[i], want = i == j ? (2 - t * t) * sin(t) + 4 * t * cos(t) : 0.0;
      CHECK_NEAR(v[i * 3 + j], want, 1e-12);
    }
  free(v);
  jx_free(H), jx_free(x);
  jx_fn_free(h), jx_fn_free(f);
  jx_config_enable_x64(false);
}

static void test_errors(void) {
  jx_fn *f = jx_fn_new("s", 1, 1, cube_sum, NULL);
  CHECK(jx_jacfwd(f, 1, (int[]){3}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_jacfwd");
  CHECK(jx_jacrev(NULL, 0, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_jacrev");
  CHECK(jx_hessian(NULL, 0, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_hessian: the function is NULL");
  jx_fn *j = jx_jacfwd(f, 0, NULL);
  jx_array *i = jx_arange(0, 3, 1, JX_INT32), *o;
  CHECK_EQ_INT(jx_call(j, &i, &o), JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_jacfwd");
  jx_free(i);
  jx_fn_free(j), jx_fn_free(f);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_jacobians);
  TEST_RUN(test_hessian);
  TEST_RUN(test_errors);
  CHECK_EQ_INT(jx_live_fns(), fns);
  return test_finish();
}
