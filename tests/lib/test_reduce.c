/* test_reduce.c -- jnp reductions (sum ... argmin, src/lib/numpy/reduce.c) against JAX
 * goldens (tests/golden/reduce_movement.txt, tools/golden_reduce_movement.py), their
 * dtype rules in x64 mode, and their errors: NULL inputs, bad and repeated axes, empty
 * reductions without an identity. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "golden.h"
#include "jaxc/fft.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

/* Param `key` as an int list ("0,-1"; "none" -> JX_AXIS_NONE); false when absent. */
static bool param_list(const GoldenCase *c, const char *key, int *out, int *n) {
  const char *s = golden_param(c, key);
  *n = 0;
  if (!s) return false;
  while (*s && *n < JX_MAX_NDIM) {
    char *end = (char *)s + 4;
    int v = strncmp(s, "none", 4) == 0 ? JX_AXIS_NONE : (int)strtol(s, &end, 10);
    if (end == s) break;
    out[(*n)++] = v;
    s = *end == ',' ? end + 1 : end;
  }
  return true;
}

static const char *const REDUCTIONS[] = {"sum", "prod", "max", "min", "mean", "var", "std",
                                         "any", "all", "argmax", "argmin", NULL};

static bool is_reduction(const char *fn) {
  for (int i = 0; REDUCTIONS[i]; i++)
    if (!strcmp(fn, REDUCTIONS[i])) return true;
  return false;
}

/* Runs one reduction case on x. */
static jx_array *call_reduce(const GoldenCase *c, jx_array *x) {
  int axes[JX_MAX_NDIM], n, axis[JX_MAX_NDIM], na;
  const int *ax = param_list(c, "axes", axes, &n) ? axes : NULL;
  bool kd = golden_param_int(c, "keepdims", 0) != 0;
  int64_t ddof = golden_param_int(c, "ddof", 0);
  param_list(c, "axis", axis, &na);
  const char *f = c->fn;
  if (!strcmp(f, "sum")) return jx_sum(x, n, ax, kd);
  if (!strcmp(f, "prod")) return jx_prod(x, n, ax, kd);
  if (!strcmp(f, "max")) return jx_max(x, n, ax, kd);
  if (!strcmp(f, "min")) return jx_min(x, n, ax, kd);
  if (!strcmp(f, "mean")) return jx_mean(x, n, ax, kd);
  if (!strcmp(f, "var")) return jx_var(x, n, ax, ddof, kd);
  if (!strcmp(f, "std")) return jx_std(x, n, ax, ddof, kd);
  if (!strcmp(f, "any")) return jx_any(x, n, ax, kd);
  if (!strcmp(f, "all")) return jx_all(x, n, ax, kd);
  if (!strcmp(f, "argmax")) return jx_argmax(x, na ? axis[0] : JX_AXIS_NONE, kd);
  return jx_argmin(x, na ? axis[0] : JX_AXIS_NONE, kd);
}

/* Accumulating reductions may differ from XLA in the order of additions: a few ulps of
 * the result dtype. max/min/any/all/argmax are exact. */
static void tolerance(const GoldenCase *c, jx_dtype d, double *rtol, double *atol) {
  bool exact = !strcmp(c->fn, "max") || !strcmp(c->fn, "min") || !strcmp(c->fn, "any") ||
               !strcmp(c->fn, "all") || !strncmp(c->fn, "arg", 3);
  *rtol = *atol = 0;
  if (exact) return;
  if (d == JX_FLOAT32) *rtol = 4e-6, *atol = 1e-6;
  if (d == JX_FLOAT16) *rtol = 2e-3, *atol = 1e-3;
  if (d == JX_BFLOAT16) *rtol = 1.6e-2, *atol = 1e-2;
}

static void test_golden_reductions(void) {
  int run = 0;
  CHECK_MSG(cases != NULL, "cannot load reduce_movement.txt (run tools/golden_reduce_movement.py)");
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    if (!is_reduction(c->fn)) continue;
    run++;
    jx_scope_begin();
    jx_array *got = call_reduce(c, golden_to_array(&c->in[0]));
    double rtol = 0, atol = 0;
    if (!c->err) tolerance(c, c->out[0].dtype, &rtol, &atol);
    golden_check(ctx, c, got, rtol, atol);
    jx_clear_error();
    jx_scope_end(0, NULL);
  }
  CHECK_MSG(run > 400, "only %d reduction cases ran", run);
  printf("%d golden reduction cases\n", run);
}

/* ------------------------------------------------------------ bad inputs */

static jx_array *matrix(void) {
  float d[6] = {1, 2, 3, 4, 5, 6};
  return jx_array_from(d, JX_FLOAT32, 2, (int64_t[]){2, 3});
}

static void test_null_inputs(void) {
  CHECK(jx_sum(NULL, 0, NULL, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_sum");
  CHECK(jx_argmax(NULL, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_argmax");
  /* A chain keeps the first error. */
  jx_array *x = matrix();
  CHECK(jx_mean(jx_max(x, 1, (int[]){5}, false), 0, NULL, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_max");
  jx_free(x);
}

static void test_bad_axes(void) {
  jx_array *x = matrix();
  CHECK(jx_sum(x, 1, (int[]){2}, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_sum: axis 2");
  CHECK(jx_prod(x, 1, (int[]){-3}, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_prod: axis -3");
  CHECK(jx_var(x, 2, (int[]){0, -2}, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "repeated axis");
  CHECK(jx_mean(x, -1, (int[]){0}, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_mean");
  CHECK(jx_argmin(x, 2, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_argmin");
  /* axes == NULL reduces everything whatever naxes says. */
  jx_array *s = jx_sum(x, 7, NULL, false);
  CHECK_NEAR(jx_item(s), 21.0, 0);
  jx_free(s);
  jx_free(x);
}

static void test_empty(void) {
  jx_array *e = jx_zeros(2, (int64_t[]){0, 3}, JX_FLOAT32);
  CHECK(jx_max(e, 1, (int[]){0}, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_max: zero-size array (0,3)");
  CHECK(jx_min(e, 0, NULL, true) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_min");
  CHECK(jx_argmax(e, JX_AXIS_NONE, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_argmax: attempt to get argmax of an empty sequence");
  jx_array *m = jx_max(e, 1, (int[]){1}, true); /* an empty result is fine */
  CHECK(m && jx_ndim(m) == 2 && jx_shape(m)[0] == 0 && jx_shape(m)[1] == 1);
  jx_array *s = jx_sum(e, 0, NULL, false);
  CHECK(s && jx_item(s) == 0.0);
  jx_free(m), jx_free(s), jx_free(e);
}

/* Reductions read views (broadcast, transposed, flipped, strided) through the shape
 * tracker: results equal those of the contiguous copy. */
static void test_views(void) {
  float row[4] = {1, -2, 3.5f, 8};
  jx_array *r = jx_array_from(row, JX_FLOAT32, 1, (int64_t[]){4});
  jx_array *b = jx_broadcast_to(r, 2, (int64_t[]){3, 4});          /* (3,4) */
  jx_array *t = jx_transpose(b, NULL);                              /* (4,3) */
  jx_array *f = jx_slice(t, 1, (int64_t[]){JX_SLICE_END}, (int64_t[]){JX_SLICE_END},
                         (int64_t[]){-2});                          /* rows 3, 1 */
  jx_array *s0 = jx_sum(t, 1, (int[]){1}, false), *s1 = jx_max(f, 1, (int[]){0}, true);
  jx_array *a = jx_argmin(t, JX_AXIS_NONE, false), *m = jx_mean(b, 0, NULL, false);
  double *v0 = test_read_f64(s0), *v1 = test_read_f64(s1);
  CHECK(v0 && v0[0] == 3 && v0[1] == -6 && v0[2] == 10.5 && v0[3] == 24);
  CHECK(v1 && jx_ndim(s1) == 2 && jx_shape(s1)[0] == 1 && v1[0] == 8 && v1[2] == 8);
  CHECK_NEAR(jx_item(a), 3, 0);
  CHECK_NEAR(jx_item(m), 2.625, 0);
  free(v0), free(v1);
  jx_free(r), jx_free(b), jx_free(t), jx_free(f), jx_free(s0), jx_free(s1), jx_free(a);
  jx_free(m);
}

/* With x64 on, the default int and float are 64-bit (jax_enable_x64); an integer
 * becomes a float by its width (dtypes.to_inexact_dtype, JAX 0.10: float32 up to 32
 * bits, float64 for int64), checked against jax 0.10.2 with x64 on: jnp.mean(int8) and
 * jnp.sin(int32) are float32, x / x of int32 float32, jnp.fft.fft(int32) complex64,
 * jnp.mean(int64) float64. */
static void test_x64_dtypes(void) {
  jx_config_enable_x64(true);
  int8_t d[4] = {1, -2, 3, 4};
  jx_array *x = jx_array_from(d, JX_INT8, 1, (int64_t[]){4});
  jx_array *s = jx_sum(x, 0, NULL, false), *m = jx_mean(x, 0, NULL, false);
  jx_array *a = jx_argmax(x, 0, false);
  CHECK_EQ_INT(jx_dtype_of(s), JX_INT64);
  CHECK_EQ_INT(jx_dtype_of(m), JX_FLOAT32);
  CHECK_EQ_INT(jx_dtype_of(a), JX_INT64);
  CHECK_NEAR(jx_item(s), 6, 0);
  CHECK_NEAR(jx_item(m), 1.5, 0);
  CHECK_NEAR(jx_item(a), 3, 0);
  jx_free(x), jx_free(s), jx_free(m), jx_free(a);
  jx_scope_begin();
  int32_t d32[4] = {1, -2, 3, 4};
  int64_t d64[4] = {1, -2, 3, 4};
  jx_array *i32 = jx_array_from(d32, JX_INT32, 1, (int64_t[]){4}), *i64 = jx_array_from(d64, JX_INT64, 1, (int64_t[]){4});
  jx_array *b = jx_greater(i32, jx_scalar(0));
  CHECK_EQ_INT(jx_dtype_of(jx_sin(i32)), JX_FLOAT32);
  CHECK_EQ_INT(jx_dtype_of(jx_sin(b)), JX_FLOAT32);
  CHECK_EQ_INT(jx_dtype_of(jx_true_divide(i32, i32)), JX_FLOAT32);
  CHECK_EQ_INT(jx_dtype_of(jx_fft_fft(i32, -1, -1, NULL)), JX_COMPLEX64);
  CHECK_EQ_INT(jx_dtype_of(jx_sin(i64)), JX_FLOAT64);
  CHECK_EQ_INT(jx_dtype_of(jx_mean(i64, 0, NULL, false)), JX_FLOAT64);
  CHECK_EQ_INT(jx_dtype_of(jx_fft_fft(i64, -1, -1, NULL)), JX_COMPLEX128);
  CHECK_NEAR(jx_item(jx_sum(jx_sin(i32), 0, NULL, false)), sinf(1) + sinf(-2) + sinf(3) + sinf(4), 1e-6);
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

/* jnp.mean multiplies the sum by XLA's reciprocal of the count (its algebraic
 * simplifier's rewrite of the division by a constant): rows of 7 whose sums (s / 8) are
 * exact in any order, where s * (1/7) and s / 7 round apart; expected bits from jax
 * 0.10.2's jnp.mean on the CPU (float32: sums 3, 6, 9, 11 eighths; float64: 5, 9, 10,
 * 13 eighths). Eager and jitted. */
static jx_status mean_rows(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_mean(in[0], 1, (int[]){1}, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_mean_reciprocal(void) {
  static const double s32[4] = {3, 6, 9, 11}, s64[4] = {5, 9, 10, 13};
  static const uint32_t want32[4] = {0x3d5b6db8, 0x3ddb6db8, 0x3e24924a, 0x3e492493};
  static const uint64_t want64[4] = {0x3fb6db6db6db6db6, 0x3fc4924924924924,
                                     0x3fc6db6db6db6db6, 0x3fcdb6db6db6db6d};
  jx_fn *f = jx_fn_new("mean_rows", 1, 1, mean_rows, NULL);
  jx_fn *jf = jx_jit(f);
  for (int x64 = 0; x64 < 2; x64++) {
    jx_config_enable_x64(x64);
    jx_scope_begin();
    double v[4][7] = {{0}};
    for (int i = 0; i < 4; i++) v[i][3] = (x64 ? s64[i] : s32[i]) / 8;
    jx_array *x = jx_astype(jx_array_from(v, JX_FLOAT64, 2, (int64_t[]){4, 7}),
                            x64 ? JX_FLOAT64 : JX_FLOAT32);
    for (int jit = 0; jit < 2; jit++) {
      jx_array *m = NULL;
      if (jit) CHECK(jx_call(jf, &x, &m) == JX_OK);
      else m = jx_mean(x, 1, (int[]){1}, false);
      uint64_t got[4] = {0};
      uint32_t got32[4] = {0};
      CHECK(jx_read(m, x64 ? (void *)got : (void *)got32, x64 ? 32 : 16) == JX_OK);
      for (int i = 0; i < 4; i++) {
        uint64_t g = x64 ? got[i] : got32[i], w = x64 ? want64[i] : want32[i];
        CHECK_MSG(g == w, "x64 %d jit %d row %d: 0x%llx, JAX 0x%llx", x64, jit, i,
                  (unsigned long long)g, (unsigned long long)w);
      }
    }
    jx_scope_end(0, NULL);
  }
  jx_config_enable_x64(false);
  jx_fn_free(jf), jx_fn_free(f);
}

/* jitted argmax/argmin (one pass over packed (value, index) keys, src/lib/numpy/reduce.c)
 * against eager (max, then the first index of it) on data with ties, NaNs, -0/+0 and
 * infinities, every axis, float32/float16/bfloat16/int32/uint8/int16/bool. */
typedef struct ArgCtx {
  bool is_max;
  int axis;
} ArgCtx;

static jx_status arg_fn(void *ctx, jx_array *const *in, jx_array **out) {
  const ArgCtx *c = ctx;
  out[0] = c->is_max ? jx_argmax(in[0], c->axis, false) : jx_argmin(in[0], c->axis, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_jit_argmax(void) {
  const int64_t shape[2] = {37, 61};
  float v[37 * 61];
  unsigned seed = 7;
  for (int i = 0; i < 37 * 61; i++) {
    seed = seed * 1664525u + 1013904223u;
    int r = (int)(seed >> 24) % 13;
    v[i] = r == 0 ? NAN : r == 1 ? -0.0f : r == 2 ? 0.0f : r == 3 ? INFINITY : r == 4 ? -INFINITY : (float)(r % 5) - 2.0f;
  }
  /* some rows without NaN, one all -inf, one all NaN */
  for (int j = 0; j < 61; j++) {
    if (v[5 * 61 + j] != v[5 * 61 + j]) v[5 * 61 + j] = 1.0f;
    v[9 * 61 + j] = -INFINITY;
    v[11 * 61 + j] = NAN;
  }
  jx_dtype dts[] = {JX_FLOAT32, JX_FLOAT16, JX_BFLOAT16, JX_INT32, JX_UINT8, JX_INT16, JX_BOOL};
  int ncase = 0;
  for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
    jx_scope_begin();
    jx_array *x = jx_array_from(v, JX_FLOAT32, 2, shape);
    if (dts[di] != JX_FLOAT32) {
      /* integers: no NaN/inf (their conversion is implementation-defined) */
      if (!(dts[di] == JX_FLOAT16 || dts[di] == JX_BFLOAT16))
        x = jx_where(jx_isfinite(x), x, jx_full(2, shape, 3.0, JX_FLOAT32));
      if (dts[di] == JX_UINT8) x = jx_abs(x);
      x = jx_astype(x, dts[di]);
    }
    for (int is_max = 0; is_max < 2; is_max++)
      for (int axis = -1; axis < 2; axis++) {
        ArgCtx c = {is_max, axis < 0 ? JX_AXIS_NONE : axis};
        jx_fn *f = jx_fn_new("arg", 1, 1, arg_fn, &c);
        jx_fn *jf = jx_jit(f);
        jx_array *want = NULL, *got = NULL;
        CHECK(jx_call(f, &x, &want) == JX_OK);
        CHECK(jx_call(jf, &x, &got) == JX_OK);
        CHECK_MSG(want && got && jx_size(want) == jx_size(got) && jx_dtype_of(want) == jx_dtype_of(got),
                  "%s axis %d dtype %d: %s", is_max ? "argmax" : "argmin", axis, (int)dts[di], jx_last_error());
        if (want && got && jx_size(want) == jx_size(got)) {
          int32_t a[64], b[64];
          jx_read(want, a, sizeof(int32_t) * (size_t)jx_size(want));
          jx_read(got, b, sizeof(int32_t) * (size_t)jx_size(got));
          for (int64_t i = 0; i < jx_size(want); i++)
            CHECK_MSG(a[i] == b[i], "%s axis %d dtype %d [%lld]: eager %d, jit %d", is_max ? "argmax" : "argmin",
                      axis, (int)dts[di], (long long)i, a[i], b[i]);
        }
        jx_free(want), jx_free(got);
        jx_fn_free(jf), jx_fn_free(f);
        ncase++;
      }
    jx_scope_end(0, NULL);
  }
  CHECK(ncase == 42);
  CHECK(jx_live_arrays() == 0);
}

int main(void) {
  cases = golden_load("reduce_movement.txt", &ncases);
  TEST_RUN(test_golden_reductions);
  TEST_RUN(test_null_inputs);
  TEST_RUN(test_bad_axes);
  TEST_RUN(test_empty);
  TEST_RUN(test_views);
  TEST_RUN(test_x64_dtypes);
  TEST_RUN(test_mean_reciprocal);
  TEST_RUN(test_jit_argmax);
  golden_free(cases, ncases);
  return test_finish();
}
