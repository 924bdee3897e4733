/* test_numpy_extra.c -- the functions of src/lib/numpy/extra.c against JAX goldens
 * (tests/golden/numpy_extra.txt, tools/golden_numpy_extra.py) and their bad inputs.
 * Tolerance: a few ulps of the result dtype (sums may add in another order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "jaxc/fft.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

static int list(const GoldenCase *c, const char *key, int64_t *out) {
  const char *s = golden_param(c, key);
  int n = 0;
  while (s && *s && n < JX_MAX_NDIM) {
    char *end;
    out[n++] = strncmp(s, "none", 4) == 0 ? (end = (char *)s + 4, JX_AXIS_NONE)
                                           : strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* Runs case c on its inputs; fills out[0..1]; returns the number of outputs. */
static int call(const GoldenCase *c, jx_array **in, jx_array **out) {
  int64_t l[JX_MAX_NDIM];
  int ax[JX_MAX_NDIM], n = list(c, "axes", l);
  for (int i = 0; i < n; i++) ax[i] = (int)l[i];
  const int *axes = golden_param(c, "axes") ? ax : NULL;
  bool kd = golden_param_int(c, "keepdims", 0);
  int64_t ddof = golden_param_int(c, "ddof", 0);
  int axis = list(c, "axis", l) ? (int)l[0] : 0;
  bool en = golden_param_int(c, "equal_nan", 0);
  const char *f = c->fn;
  jx_array *x = in[0], *y = c->nin > 1 ? in[1] : NULL;
  out[1] = NULL;
#define R(name, expr) if (!strcmp(f, name)) return out[0] = (expr), 1
  R("nansum", jx_nansum(x, n, axes, kd));
  R("nanprod", jx_nanprod(x, n, axes, kd));
  R("nanmax", jx_nanmax(x, n, axes, kd));
  R("nanmin", jx_nanmin(x, n, axes, kd));
  R("nanmean", jx_nanmean(x, n, axes, kd));
  R("ptp", jx_ptp(x, n, axes, kd));
  R("count_nonzero", jx_count_nonzero(x, n, axes, kd));
  R("amax", jx_amax(x, n, axes, kd));
  R("amin", jx_amin(x, n, axes, kd));
  R("nanvar", jx_nanvar(x, n, axes, ddof, kd));
  R("nanstd", jx_nanstd(x, n, axes, ddof, kd));
  R("nanargmax", jx_nanargmax(x, axis, false));
  R("nanargmin", jx_nanargmin(x, axis, false));
  R("nancumsum", jx_nancumsum(x, axis));
  R("nancumprod", jx_nancumprod(x, axis));
  R("average", jx_average(x, y, n, axes, kd));
  R("quantile", jx_quantile(x, y, axis, kd));
  R("percentile", jx_percentile(x, y, axis, kd));
  R("median", jx_median(x, axis, kd));
  R("diff", jx_diff(x, (int)golden_param_int(c, "n", 1), axis));
  R("ediff1d", jx_ediff1d(x));
  R("trapezoid", jx_trapezoid(x, y, atof(golden_param(c, "dx") ? golden_param(c, "dx") : "1"), axis));
  R("isclose", jx_isclose(x, y, 1e-5, 1e-8, en));
  R("allclose", jx_allclose(x, y, 1e-5, 1e-8, en));
  R("array_equal", jx_array_equal(x, y, en));
  R("array_equiv", jx_array_equiv(x, y));
  R("isposinf", jx_isposinf(x));
  R("isneginf", jx_isneginf(x));
  R("degrees", jx_degrees(x));
  R("radians", jx_radians(x));
  R("fabs", jx_fabs(x));
  R("sinc", jx_sinc(x));
  R("conj", jx_conj(x));
  R("real", jx_real(x));
  R("imag", jx_imag(x));
  R("nan_to_num", jx_nan_to_num(x, 0, NAN, NAN));
  R("atleast_1d", jx_atleast_1d(x));
  R("atleast_2d", jx_atleast_2d(x));
  R("atleast_3d", jx_atleast_3d(x));
  R("flipud", jx_flipud(x));
  R("fliplr", jx_fliplr(x));
  R("heaviside", jx_heaviside(x, y));
  R("float_power", jx_float_power(x, y));
  R("logaddexp2", jx_logaddexp2(x, y));
  R("hstack", jx_hstack(c->nin, in));
  R("vstack", jx_vstack(c->nin, in));
  R("dstack", jx_dstack(c->nin, in));
  R("column_stack", jx_column_stack(c->nin, in));
  R("append", jx_append(x, y, axis));
  R("rot90", jx_rot90(x, (int)golden_param_int(c, "k", 1), (int)golden_param_int(c, "a0", 0),
                      (int)golden_param_int(c, "a1", 1)));
  if (!strcmp(f, "resize")) {
    int k = list(c, "shape", l);
    out[0] = jx_resize(x, k, l);
    return 1;
  }
  if (!strcmp(f, "divmod")) return jx_divmod(x, y, out), 2;
  if (!strcmp(f, "modf")) return jx_modf(x, out), 2;
#undef R
  test_fail(__FILE__, __LINE__, "unknown function %s", f);
  return 0;
}

static void test_golden(void) {
  CHECK_MSG(cases != NULL, "cannot load numpy_extra.txt (run tools/golden_numpy_extra.py)");
  int run = 0;
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_scope_begin();
    jx_array *in[8], *out[2] = {NULL, NULL};
    for (int k = 0; k < c->nin && k < 8; k++) in[k] = golden_to_array(&c->in[k]);
    int nout = call(c, in, out);
    for (int o = 0; o < nout && o < c->nout; o++) {
      jx_dtype d = c->out[o].dtype;
      double rtol = d == JX_FLOAT16 ? 2e-3 : d == JX_BFLOAT16 ? 1.6e-2 : 4e-6;
      double atol = d == JX_FLOAT16 ? 1e-3 : 1e-6;
      if (d != JX_FLOAT32 && d != JX_FLOAT16 && d != JX_BFLOAT16 && d != JX_FLOAT64) rtol = atol = 0;
      golden_compare(ctx, out[o], &c->out[o], rtol, atol);
    }
    run++;
    jx_clear_error();
    jx_scope_end(0, NULL);
  }
  printf("%d golden numpy_extra cases\n", run);
}

/* quantile / percentile result dtypes and values as jax 0.10.2 gives them: x's inexact
 * dtype whatever q's dtype or weakness, the interpolation in q's dtype
 * (quantile([1,7,3,2,9,4] f32, float16(0.3)) is 2.5: 2.499 rounded in float16). */
/* isclose of integers compares them as floats (jax 0.10.2: isclose([10, 1000], [11,
 * 1009], rtol=0.01) is [False, True], allclose([10], [11], rtol=0.5) True); infinities
 * and NaNs as JAX's formula */
static void test_isclose_ints(void) {
  jx_scope_begin();
  jx_array *r = jx_isclose(jx_array_from((int32_t[]){10, 1000}, JX_INT32, 1, (int64_t[]){2}),
                           jx_array_from((int32_t[]){11, 1009}, JX_INT32, 1, (int64_t[]){2}), 0.01, 1e-8, false);
  bool v[4] = {true, false};
  CHECK(r && jx_dtype_of(r) == JX_BOOL && jx_read(r, v, 2) == JX_OK && !v[0] && v[1]);
  r = jx_allclose(jx_array_from((int32_t[]){10}, JX_INT32, 1, (int64_t[]){1}), jx_array_from((int32_t[]){11}, JX_INT32, 1, (int64_t[]){1}),
                  0.5, 1e-8, false);
  CHECK(r && jx_item(r) == 1);
  float a[4] = {INFINITY, INFINITY, NAN, 1e30f}, b[4] = {INFINITY, -INFINITY, NAN, INFINITY};
  jx_array *fa = jx_array_from(a, JX_FLOAT32, 1, (int64_t[]){4}), *fb = jx_array_from(b, JX_FLOAT32, 1, (int64_t[]){4});
  r = jx_isclose(fa, fb, 1e-5, 1e-8, false);
  CHECK(r && jx_read(r, v, 4) == JX_OK && v[0] && !v[1] && !v[2] && !v[3]);
  r = jx_isclose(fa, fb, 1e-5, 1e-8, true);
  CHECK(r && jx_read(r, v, 4) == JX_OK && v[0] && !v[1] && v[2] && !v[3]);
  jx_scope_end(0, NULL);
}

/* Complex dtypes where an integer becomes a float by width (dtype_to_inexact) must take
 * the real part for what computes in reals, as JAX's finfo and var do: fftfreq and
 * linspace with a complex64 dtype (complex64 results), nanvar of complex64 (float32) */
static void test_complex_dtypes(void) {
  jx_scope_begin();
  jx_array *f = jx_fft_fftfreq(4, 1.0, JX_COMPLEX64), *g = jx_fft_rfftfreq(4, 1.0, JX_COMPLEX64);
  CHECK_MSG(f && g && jx_dtype_of(f) == JX_COMPLEX64 && jx_dtype_of(g) == JX_COMPLEX64, "fftfreq: %s", jx_last_error());
  jx_array *l = jx_linspace(0, 1, 5, JX_COMPLEX64);
  float v[10] = {0};
  CHECK_MSG(l && jx_dtype_of(l) == JX_COMPLEX64 && jx_read(l, v, sizeof v) == JX_OK && v[2] == 0.25f && v[3] == 0,
            "linspace: %s", jx_last_error());
  jx_array *c = jx_complex(jx_arange(0, 3, 1, JX_FLOAT32), jx_ones(1, (int64_t[]){3}, JX_FLOAT32));
  jx_array *nv = jx_nanvar(c, 0, NULL, 0, false);
  CHECK(nv && jx_dtype_of(nv) == JX_FLOAT32);
  jx_scope_end(0, NULL);
}

static void test_quantile_dtypes(void) {
  jx_scope_begin();
  float v[6] = {1, 7, 3, 2, 9, 4};
  int32_t iv[6] = {1, 7, 3, 2, 9, 4};
  jx_array *x32 = jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){6}), *x16 = jx_astype(x32, JX_FLOAT16);
  jx_array *xi = jx_array_from(iv, JX_INT32, 1, (int64_t[]){6});
  jx_array *q32 = jx_full(0, NULL, 0.3, JX_FLOAT32), *q16 = jx_astype(q32, JX_FLOAT16), *qw = jx_scalar(0.3);
  static const jx_dtype want[3] = {JX_FLOAT16, JX_FLOAT32, JX_FLOAT32};
  jx_array *xs[3] = {x16, x32, xi}, *qs[3] = {q32, q16, qw};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      jx_array *r = jx_quantile(xs[a], qs[b], 0, false);
      CHECK_MSG(r && jx_dtype_of(r) == want[a] && jx_item(r) == 2.5, "quantile x %d q %d: %s %g", a, b,
                r ? jx_dtype_name(jx_dtype_of(r)) : jx_last_error(), r ? jx_item(r) : 0);
    }
  jx_array *p = jx_percentile(jx_astype(x32, JX_BFLOAT16), jx_full(0, NULL, 30, JX_FLOAT32), 0, false);
  CHECK(p && jx_dtype_of(p) == JX_BFLOAT16 && jx_item(p) == 2.5);
  jx_scope_end(0, NULL);
}

static void test_bad_inputs(void) {
  float d[6] = {1, 2, 3, 4, 5, 6};
  jx_array *x = jx_array_from(d, JX_FLOAT32, 2, (int64_t[]){2, 3});
  jx_array *q2 = jx_zeros(2, (int64_t[]){1, 1}, JX_FLOAT32);
  CHECK(jx_nanmean(NULL, 0, NULL, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_nanmean");
  CHECK(jx_quantile(x, q2, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_quantile: q must have rank <= 1");
  CHECK(jx_diff(x, -1, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_diff");
  CHECK(jx_diff(x, 1, 2) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_diff: axis 2");
  CHECK(jx_rot90(x, 1, 0, 0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_rot90");
  CHECK(jx_average(x, q2, 1, (int[]){1}, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_average");
  CHECK(jx_resize(x, 1, (int64_t[]){-2}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_resize");
  jx_array *out[2];
  CHECK(jx_modf(NULL, out) == JX_ERR_VALUE && out[0] == NULL);
  jx_clear_error();
  jx_free(x), jx_free(q2);
}

int main(void) {
  cases = golden_load("numpy_extra.txt", &ncases);
  TEST_RUN(test_golden);
  TEST_RUN(test_quantile_dtypes);
  TEST_RUN(test_isclose_ints);
  TEST_RUN(test_complex_dtypes);
  TEST_RUN(test_bad_inputs);
  golden_free(cases, ncases);
  return test_finish();
}
