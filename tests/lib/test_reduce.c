/* test_reduce.c -- jnp reductions (sum ... argmin, src/lib/numpy/reduce.c) against JAX
 * goldens (tests/golden/reduce_movement.txt, tools/golden_reduce_movement.py), their
 * dtype rules in x64 mode, and their errors: NULL inputs, bad and repeated axes, empty
 * reductions without an identity. */
#include <limits.h>
#include <stdlib.h>

#include "golden.h"
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
    if (c->err) {
      CHECK_MSG(got == NULL && jx_last_status() == c->err, "%s: expected %s, got %s (%s)", ctx,
                jx_status_name(c->err), jx_status_name(jx_last_status()), jx_last_error());
    } else {
      double rtol, atol;
      tolerance(c, c->out[0].dtype, &rtol, &atol);
      golden_compare(ctx, got, &c->out[0], rtol, atol);
    }
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

/* With x64 on, the default int and float are 64-bit (jax_enable_x64). */
static void test_x64_dtypes(void) {
  jx_config_enable_x64(true);
  int8_t d[4] = {1, -2, 3, 4};
  jx_array *x = jx_array_from(d, JX_INT8, 1, (int64_t[]){4});
  jx_array *s = jx_sum(x, 0, NULL, false), *m = jx_mean(x, 0, NULL, false);
  jx_array *a = jx_argmax(x, 0, false);
  CHECK_EQ_INT(jx_dtype_of(s), JX_INT64);
  CHECK_EQ_INT(jx_dtype_of(m), JX_FLOAT64);
  CHECK_EQ_INT(jx_dtype_of(a), JX_INT64);
  CHECK_NEAR(jx_item(s), 6, 0);
  CHECK_NEAR(jx_item(m), 1.5, 0);
  CHECK_NEAR(jx_item(a), 3, 0);
  jx_free(x), jx_free(s), jx_free(m), jx_free(a);
  jx_config_enable_x64(false);
}

int main(void) {
  cases = golden_load("reduce_movement.txt", &ncases);
  TEST_RUN(test_golden_reductions);
  TEST_RUN(test_null_inputs);
  TEST_RUN(test_bad_axes);
  TEST_RUN(test_empty);
  TEST_RUN(test_views);
  TEST_RUN(test_x64_dtypes);
  golden_free(cases, ncases);
  return test_finish();
}
