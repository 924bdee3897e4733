/* test_associative_scan.c -- lax.associative_scan (src/lib/loops.c) against JAX goldens
 * (tools/golden_associative_scan.py -> tests/golden/associative_scan.txt): cumulative
 * sums (float32, int32), maxima, 2x2 matrix products (order matters), a two-element
 * linear recurrence and logical or, lengths 0..9 and 33, reverse, several axes; the
 * recurrence's gradient; each eagerly and under jit; against lax.cumsum; bad input
 * with clear errors. Leaks are checked by TEST_RUN. */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

static jx_status f_add(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_add(x[0], x[1]); return JX_OK; }
static jx_status f_max(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_maximum(x[0], x[1]); return JX_OK; }
static jx_status f_matmul(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_matmul(x[0], x[1]); return JX_OK; }
static jx_status f_or(void *c, jx_array *const *x, jx_array **o) { (void)c; o[0] = jx_bitwise_or(x[0], x[1]); return JX_OK; }
/* ((a1, b1), (a2, b2)) -> (a1 a2, a2 b1 + b2): inputs a1, b1, a2, b2 */
static jx_status f_affine(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_multiply(x[0], x[2]);
  o[1] = jx_add(jx_multiply(x[2], x[1]), x[3]);
  return JX_OK;
}

typedef struct Scan {
  jx_fn *combine;
  int n;
  bool reverse;
  int axis;
} Scan;

static jx_status run_scan(void *ctx, jx_array *const *in, jx_array **out) {
  const Scan *s = ctx;
  return jx_lax_associative_scan(s->combine, s->n, in, s->reverse, s->axis, out);
}
/* sum(sin(scan(affine)(a, b)[1])) */
static jx_status affine_loss(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *r[2];
  jx_status s = run_scan(ctx, in, r);
  out[0] = s == JX_OK ? jx_sum(jx_sin(r[1]), 0, NULL, false) : NULL;
  return s;
}

static jx_fn *combine_fn(const char *name, int *n) {
  *n = 1;
  if (!strcmp(name, "add")) return jx_fn_new("add", 2, 1, f_add, NULL);
  if (!strcmp(name, "max")) return jx_fn_new("max", 2, 1, f_max, NULL);
  if (!strcmp(name, "matmul")) return jx_fn_new("matmul", 2, 1, f_matmul, NULL);
  if (!strcmp(name, "or")) return jx_fn_new("or", 2, 1, f_or, NULL);
  *n = 2;
  if (!strcmp(name, "affine") || !strcmp(name, "grad_affine")) return jx_fn_new("affine", 4, 2, f_affine, NULL);
  return NULL;
}

static void test_goldens(void) {
  int n = 0;
  GoldenCase *cases = golden_load("associative_scan.txt", &n);
  CHECK(cases != NULL);
  for (int k = 0; cases && k < n; k++) {
    GoldenCase *c = &cases[k];
    Scan s = {.reverse = golden_param_int(c, "reverse", 0), .axis = (int)golden_param_int(c, "axis", 0)};
    s.combine = combine_fn(c->fn, &s.n);
    CHECK_MSG(s.combine != NULL, "%s: no function %s", c->name, c->fn);
    if (!s.combine) continue;
    bool grad = !strncmp(c->fn, "grad_", 5);
    jx_fn *f = grad ? jx_fn_new("affine_loss", 2, 1, affine_loss, &s) : jx_fn_new(c->name, s.n, s.n, run_scan, &s);
    if (grad) {
      jx_fn *g = jx_grad(f, 2, (int[]){0, 1});
      jx_fn_free(f);
      f = g;
    }
    golden_check_eager_jit(c, f, 2e-6, 2e-6);
    jx_fn_free(f), jx_fn_free(s.combine);
  }
  golden_free(cases, n);
}

/* An associative scan with addition is a cumulative sum (lax.cumsum), for lengths
 * around powers of two along each axis of a 3-d array. */
static void test_vs_cumsum(void) {
  jx_fn *add = jx_fn_new("add", 2, 1, f_add, NULL);
  for (int64_t len = 1; len <= 17; len += 4)
    for (int axis = 0; axis < 3; axis++)
      for (int rev = 0; rev < 2; rev++) {
        jx_scope_begin();
        int64_t shape[3] = {2, 3, 2};
        shape[axis] = len;
        int64_t numel = shape[0] * shape[1] * shape[2];
        jx_array *x = jx_arange(0, (double)numel, 1, JX_INT32), *r = NULL;
        x = jx_reshape(jx_subtract(jx_remainder(x, jx_scalar_int(7)), jx_scalar_int(3)), 3, shape);
        CHECK_MSG(jx_lax_associative_scan(add, 1, &x, rev, axis - 3, &r) == JX_OK, "%s", jx_last_error());
        jx_array *want = jx_lax_cumsum(x, axis, rev);
        CHECK_MSG(r && want && jx_item(jx_all(jx_equal(r, want), 0, NULL, false)) == 1,
                  "len %lld axis %d reverse %d", (long long)len, axis, rev);
        jx_scope_end(0, NULL);
      }
  jx_fn_free(add);
}

static jx_status f_shrink(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_sum(jx_add(x[0], x[1]), 0, NULL, false);
  return JX_OK;
}

static void test_errors(void) {
  jx_array *a = jx_ones(1, (int64_t[]){5}, JX_FLOAT32), *b = jx_ones(1, (int64_t[]){4}, JX_FLOAT32), *out[2] = {NULL};
  jx_fn *add = jx_fn_new("add", 2, 1, f_add, NULL), *aff = jx_fn_new("affine", 4, 2, f_affine, NULL);
  jx_fn *shrink = jx_fn_new("shrink", 2, 1, f_shrink, NULL);
  CHECK(jx_lax_associative_scan(aff, 2, (jx_array *[]){a, b}, false, 0, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_lax_associative_scan: every elems must have the same length along axis 0: "
                            "elems 0 is float32[5], elems 1 is float32[4]");
  CHECK(jx_lax_associative_scan(add, 2, (jx_array *[]){a, a}, false, 0, out) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "fn add takes 2 inputs and gives 1 outputs; with 2 elems (at most 16) it must take 4 and give 2");
  CHECK(jx_lax_associative_scan(add, 1, &a, false, 1, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "axis 1 is out of range for elems 0, float32[5]");
  CHECK(jx_lax_associative_scan(shrink, 1, &a, false, 0, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "fn shrink gives float32[] for element 0 combining operands of float32[2] (it must "
                            "keep their shape and dtype)");
  CHECK(out[0] == NULL);
  jx_fn_free(add), jx_fn_free(aff), jx_fn_free(shrink);
  jx_free(a), jx_free(b);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_goldens);
  TEST_RUN(test_vs_cumsum);
  TEST_RUN(test_errors);
  CHECK_EQ_INT(jx_live_fns(), fns);
  return test_finish();
}
