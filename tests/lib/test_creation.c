/* test_creation.c -- jnp constructors (src/lib/numpy/creation.c: full, zeros, ones,
 * *_like, arange, linspace, eye, tri, tril, triu) against JAX goldens
 * (tests/golden/reduce_movement.txt, tools/golden_reduce_movement.py) and their errors:
 * negative and overflowing shapes, bad dtypes, bad ranges. */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

/* Param `key` as an int64 list ("2,3"); empty for "" or an absent key. */
static int param_list(const GoldenCase *c, const char *key, int64_t *out) {
  const char *s = golden_param(c, key);
  int n = 0;
  while (s && *s && n < JX_MAX_NDIM) {
    char *end;
    out[n++] = strtoll(s, &end, 10);
    if (end == s) break;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

static double param_f(const GoldenCase *c, const char *key) {
  const char *s = golden_param(c, key);
  return s ? strtod(s, NULL) : 0;
}

static jx_dtype param_dtype(const GoldenCase *c) {
  jx_dtype d = JX_FLOAT32;
  bool weak;
  const char *s = golden_param(c, "dtype");
  if (s) golden_parse_dtype(s, &d, &weak);
  return d;
}

/* Runs a creation case; *known is false when c->fn is not a constructor. */
static jx_array *call_creation(const GoldenCase *c, jx_array *x, bool *known) {
  int64_t s[JX_MAX_NDIM];
  int n = param_list(c, "shape", s);
  const char *f = c->fn;
  jx_dtype d = param_dtype(c);
  long long k = golden_param_int(c, "k", 0);
  *known = true;
  if (!strcmp(f, "full")) return jx_full(n, s, param_f(c, "value"), d);
  if (!strcmp(f, "zeros")) return jx_zeros(n, s, d);
  if (!strcmp(f, "ones")) return jx_ones(n, s, d);
  if (!strcmp(f, "zeros_like")) return jx_zeros_like(x);
  if (!strcmp(f, "ones_like")) return jx_ones_like(x);
  if (!strcmp(f, "full_like")) return jx_full_like(x, param_f(c, "value"));
  if (!strcmp(f, "arange"))
    return jx_arange(param_f(c, "start"), param_f(c, "stop"), param_f(c, "step"), d);
  if (!strcmp(f, "linspace"))
    return jx_linspace(param_f(c, "start"), param_f(c, "stop"), golden_param_int(c, "num", 0), d);
  if (!strcmp(f, "eye")) return jx_eye(golden_param_int(c, "n", 0), d);
  if (!strcmp(f, "eye_k"))
    return jx_eye_k(golden_param_int(c, "n", 0), golden_param_int(c, "m", 0), k, d);
  if (!strcmp(f, "tri"))
    return jx_tri(golden_param_int(c, "n", 0), golden_param_int(c, "m", 0), k, d);
  if (!strcmp(f, "tril")) return jx_tril(x, k);
  if (!strcmp(f, "triu")) return jx_triu(x, k);
  *known = false;
  return NULL;
}

/* arange computes in floating point: XLA may contract a multiply and an add into an
 * FMA, which moves a float32 result by about an ulp of |start| + n |step|. Everything
 * else is exact -- linspace too: jx_linspace contracts where XLA's CPU code does. */
static void tolerance(const GoldenCase *c, jx_dtype d, double *rtol, double *atol) {
  *rtol = *atol = 0;
  if (strcmp(c->fn, "arange")) return;
  double mag = fabs(param_f(c, "start")) + fabs(param_f(c, "step")) * c->out[0].size;
  if (d == JX_FLOAT32) *rtol = 2.4e-7, *atol = 2.4e-7 * mag;
}

static void test_golden_creation(void) {
  int run = 0;
  CHECK_MSG(cases != NULL, "cannot load reduce_movement.txt (run tools/golden_reduce_movement.py)");
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_scope_begin();
    jx_array *x = c->nin ? golden_to_array(&c->in[0]) : NULL;
    bool known;
    jx_config_enable_x64(golden_param_int(c, "x64", 0));
    jx_array *got = call_creation(c, x, &known);
    if (known) {
      run++;
      double rtol = 0, atol = 0;
      if (!c->err) tolerance(c, c->out[0].dtype, &rtol, &atol);
      golden_check(ctx, c, got, rtol, atol);
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
    jx_config_enable_x64(false);
  }
  CHECK_MSG(run > 100, "only %d creation cases ran", run);
  printf("%d golden creation cases\n", run);
}

/* ------------------------------------------------------------ bad inputs */

static void test_shape_errors(void) {
  CHECK(jx_full(2, (int64_t[]){2, -1}, 1, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_full: negative dimension in shape (2,-1)");
  CHECK(jx_zeros(3, (int64_t[]){INT64_MAX, 2, 2}, JX_INT8) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_zeros: the size of shape (9223372036854775807,2,2)");
  CHECK(jx_ones(17, (int64_t[17]){0}, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_ones: ndim 17");
  CHECK(jx_ones(-1, NULL, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_ones");
  CHECK(jx_full(2, NULL, 0, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_full: shape is NULL");
  CHECK(jx_full(1, (int64_t[]){2}, 0, (jx_dtype)99) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_full: invalid dtype 99");
  CHECK(jx_eye(-3, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_eye: negative dimension in shape (-3,-3)");
  CHECK(jx_tri(INT64_MAX, 4, 0, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_tri");
  CHECK(jx_zeros_like(NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_zeros_like");
  CHECK(jx_triu(NULL, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_triu");
  jx_array *v = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  CHECK(jx_tril(v, 0) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_tril: input must be at least 2-d, got shape (3,)");
  jx_free(v);
  /* A 0-d full and an empty one are fine. */
  jx_array *s = jx_full(0, NULL, 2.5, JX_FLOAT32), *e = jx_ones(2, (int64_t[]){0, 5}, JX_BOOL);
  CHECK(s && jx_item(s) == 2.5 && jx_ndim(s) == 0);
  CHECK(e && jx_size(e) == 0 && jx_shape(e)[1] == 5);
  jx_free(s), jx_free(e);
}

static void test_range_errors(void) {
  CHECK(jx_arange(0, 10, 0, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_arange");
  CHECK(jx_arange(0, INFINITY, 1, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_arange");
  CHECK(jx_arange(NAN, 1, 1, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_arange");
  CHECK(jx_arange(0, 1e300, 1e-300, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_arange");
  CHECK(jx_arange(0, 3, 1, JX_BOOL) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_arange: dtype bool");
  CHECK(jx_linspace(0, 1, -1, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_linspace: number of samples -1");
  /* x64 requests canonicalize with x64 off. */
  jx_array *a = jx_arange(0, 4, 1, JX_INT64), *b = jx_zeros(1, (int64_t[]){2}, JX_FLOAT64);
  CHECK_EQ_INT(jx_dtype_of(a), JX_INT32);
  CHECK_EQ_INT(jx_dtype_of(b), JX_FLOAT32);
  jx_free(a), jx_free(b);
}

/* Integer fill values as jax 0.10.2: a whole number converts as an int and wraps
 * (jnp.full((), 300, int8) is 44, -1 into uint8 255; jx_pad did, jx_full, full_like and
 * take's fill saturated to 127 / 0), other values as floats (2.7 -> 2, 300.5 -> 127);
 * jnp.asarray(300, int8) is JAX's OverflowError. */
static void test_integer_fills(void) {
  jx_scope_begin();
  CHECK(jx_item(jx_full(0, NULL, 300, JX_INT8)) == 44);
  CHECK(jx_item(jx_full(0, NULL, -1, JX_UINT8)) == 255);
  CHECK(jx_item(jx_full(0, NULL, 2.7, JX_INT8)) == 2);
  CHECK(jx_item(jx_full(0, NULL, 300.5, JX_INT8)) == 127);
  CHECK(jx_item(jx_full(0, NULL, -70000, JX_INT16)) == -4464);
  CHECK(jx_item(jx_min(jx_full_like(jx_zeros(1, (int64_t[]){2}, JX_INT8), 300), 0, NULL, false)) == 44);
  jx_array *t = jx_take_fill(jx_zeros(1, (int64_t[]){3}, JX_INT8), jx_array_from((int32_t[]){5}, JX_INT32, 1, (int64_t[]){1}),
                             0, 300);
  CHECK(t && jx_item(jx_sum(t, 0, NULL, false)) == 44);
  CHECK(jx_scalar_of(300, JX_INT8) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scalar_of: 300 is out of bounds for int8");
  CHECK(jx_item(jx_scalar_of(2.7, JX_INT8)) == 2);
  jx_scope_end(0, NULL);
}

/* jnp.linspace(-3.3, 7.1, 7, endpoint=False) bit for bit (float32 words from JAX 0.10.2),
 * num 0 / 1, endpoint=True unchanged, and num < 0. */
static void test_linspace_endpoint(void) {
  static const uint32_t want[7] = {3226678067u, 3219667587u, 3198696064u, 1066671429u,
                                   1076438164u, 1082400067u, 1085515836u};
  jx_scope_begin();
  jx_array *r = jx_linspace_endpoint(-3.3, 7.1, 7, false, JX_FLOAT32);
  uint32_t got[7] = {0};
  CHECK(r && jx_read(r, got, sizeof got) == JX_OK);
  for (int i = 0; i < 7; i++) CHECK_MSG(got[i] == want[i], "element %d: %u != %u", i, got[i], want[i]);
  jx_array *one = jx_linspace_endpoint(2.5, 9, 1, false, JX_FLOAT32);
  float v = 0;
  CHECK(one && jx_shape(one)[0] == 1 && jx_read(one, &v, 4) == JX_OK && v == 2.5f);
  jx_array *zero = jx_linspace_endpoint(0, 1, 0, false, JX_FLOAT32);
  CHECK(zero && jx_shape(zero)[0] == 0);
  jx_array *e = jx_linspace_endpoint(0, 1, 5, true, JX_FLOAT32);
  float ev[5] = {0};
  CHECK(e && jx_read(e, ev, sizeof ev) == JX_OK && ev[4] == 1.0f && ev[2] == 0.5f);
  CHECK(jx_linspace_endpoint(0, 1, -1, false, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_linspace_endpoint: number of samples -1 must be non-negative");
  jx_scope_end(0, NULL);
}

int main(void) {
  cases = golden_load("reduce_movement.txt", &ncases);
  TEST_RUN(test_golden_creation);
  TEST_RUN(test_shape_errors);
  TEST_RUN(test_linspace_endpoint);
  TEST_RUN(test_range_errors);
  golden_free(cases, ncases);
  TEST_RUN(test_integer_fills);
  return test_finish();
}
