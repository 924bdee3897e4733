/* test_products.c -- jnp matmul, dot, vdot, inner, outer, tensordot
 * (src/lib/numpy/products.c) against JAX goldens (tests/golden/reduce_movement.txt,
 * tools/golden_reduce_movement.py) and their shape errors, whose messages name both
 * operand shapes. */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

/* Runs a product case; *known is false when c->fn is not a product. */
static jx_array *call_product(const GoldenCase *c, jx_array *x, jx_array *y, bool *known) {
  const char *f = c->fn;
  *known = true;
  if (!strcmp(f, "matmul")) return jx_matmul(x, y);
  if (!strcmp(f, "dot")) return jx_dot(x, y);
  if (!strcmp(f, "vdot")) return jx_vdot(x, y);
  if (!strcmp(f, "inner")) return jx_inner(x, y);
  if (!strcmp(f, "outer")) return jx_outer(x, y);
  if (!strcmp(f, "tensordot")) return jx_tensordot(x, y, (int)golden_param_int(c, "n", 0));
  *known = false;
  return NULL;
}

/* Sums of products: the order of additions may differ from XLA's. */
static void tolerance(jx_dtype d, double *rtol, double *atol) {
  *rtol = *atol = 0;
  if (d == JX_FLOAT32) *rtol = 4e-6, *atol = 1e-6;
  if (d == JX_FLOAT16) *rtol = 2e-3, *atol = 1e-3;
  if (d == JX_BFLOAT16) *rtol = 1.6e-2, *atol = 1e-2;
}

static void test_golden_products(void) {
  int run = 0;
  CHECK_MSG(cases != NULL, "cannot load reduce_movement.txt (run tools/golden_reduce_movement.py)");
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    if (c->nin != 2) continue;
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_scope_begin();
    bool known;
    jx_array *got = call_product(c, golden_to_array(&c->in[0]), golden_to_array(&c->in[1]),
                                 &known);
    if (known) {
      run++;
      double rtol = 0, atol = 0;
      if (!c->err) tolerance(c->out[0].dtype, &rtol, &atol);
      golden_check(ctx, c, got, rtol, atol);
    }
    jx_clear_error();
    jx_scope_end(0, NULL);
  }
  CHECK_MSG(run > 50, "only %d product cases ran", run);
  printf("%d golden product cases\n", run);
}

/* ------------------------------------------------------------ bad inputs */

static jx_array *ones(int ndim, const int64_t *shape) { return jx_ones(ndim, shape, JX_FLOAT32); }

static void test_shape_errors(void) {
  jx_array *a = ones(2, (int64_t[]){2, 3}), *b = ones(2, (int64_t[]){4, 2});
  jx_array *v = ones(1, (int64_t[]){4}), *s = jx_scalar(2.0);
  jx_array *c = ones(3, (int64_t[]){3, 3, 2}), *d = ones(3, (int64_t[]){2, 2, 3});
  CHECK(jx_matmul(a, b) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_matmul: shapes (2,3) and (4,2) are incompatible");
  CHECK(jx_matmul(a, v) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_matmul: shapes (2,3) and (4,)");
  CHECK(jx_matmul(d, c) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_matmul: shapes (2,2,3) and (3,3,2) are incompatible: batch");
  CHECK(jx_matmul(s, a) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "at least 1-d");
  CHECK(jx_matmul(a, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_matmul: y is NULL");
  CHECK(jx_dot(a, b) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_dot: shapes (2,3) and (4,2)");
  CHECK(jx_inner(a, b) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_inner: shapes (2,3) and (4,2)");
  CHECK(jx_vdot(a, v) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_vdot: shapes (2,3) and (4,) are incompatible: sizes differ");
  CHECK(jx_tensordot(a, b, 3) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_tensordot");
  CHECK(jx_tensordot(a, b, 1) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_tensordot: shapes (2,3) and (4,2)");
  CHECK(jx_tensordot(a, b, -1) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_tensordot");
  CHECK(jx_outer(NULL, a) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_outer: x is NULL");
  jx_free(a), jx_free(b), jx_free(v), jx_free(s), jx_free(c), jx_free(d);
}

/* Weak scalars multiply like Python scalars in jnp.dot: the array's dtype wins. */
static void test_weak_scalar(void) {
  jx_array *a = jx_ones(1, (int64_t[]){3}, JX_FLOAT16), *s = jx_scalar(2.0);
  jx_array *r = jx_dot(s, a);
  CHECK(r && jx_dtype_of(r) == JX_FLOAT16 && !jx_is_weak(r) && jx_shape(r)[0] == 3);
  jx_free(a), jx_free(s), jx_free(r);
}

int main(void) {
  cases = golden_load("reduce_movement.txt", &ncases);
  TEST_RUN(test_golden_products);
  TEST_RUN(test_shape_errors);
  TEST_RUN(test_weak_scalar);
  golden_free(cases, ncases);
  return test_finish();
}
