/* test_products.c -- jnp matmul, dot, vdot, inner, outer, tensordot
 * (src/lib/numpy/products.c) against JAX goldens (tests/golden/reduce_movement.txt,
 * tools/golden_reduce_movement.py) and their shape errors, whose messages name both
 * operand shapes. */
#include <math.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"
#include "golden.h"
#include "jaxc/lax.h"
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

/* Eager products on the cpu device of LOWER_EAGER_GEMM_MIN_WORK (512) multiply-adds or
 * more run as the GEMM routine (counted by cpu_stats), smaller ones as kernels; both
 * against the same product on the interpreter device (its kernel, accumulated in
 * float64): transposed operands, batch dims first and in the middle, two contracting
 * dims, matrix-vector, float64. */
static void test_eager_gemm(void) {
  jx_config_enable_x64(true); /* for the float64 case */
  jx_scope_begin();
  if (strcmp(jx_device_of(jx_zeros(0, NULL, JX_FLOAT32)), "cpu")) { /* the cpu device's rule */
    jx_scope_end(0, NULL);
    jx_config_enable_x64(false);
    return;
  }
  uint32_t seed = 7;
  static const struct {
    int nx, ny;
    int64_t xs[3], ys[3];
    int nc, lc[2], rc[2], nb, lb[1], rb[1];
    jx_dtype dt;
  } prods[] = {
      {2, 2, {16, 16}, {16, 16}, 1, {1}, {0}, 0, {0}, {0}, JX_FLOAT32},        /* x @ y */
      {2, 2, {24, 16}, {24, 8}, 1, {0}, {0}, 0, {0}, {0}, JX_FLOAT32},         /* x^T @ y */
      {2, 2, {16, 24}, {8, 24}, 1, {1}, {1}, 0, {0}, {0}, JX_FLOAT32},         /* x @ y^T */
      {3, 3, {4, 8, 16}, {4, 16, 5}, 1, {2}, {1}, 1, {0}, {0}, JX_FLOAT32},    /* batched */
      {3, 3, {8, 3, 16}, {16, 3, 6}, 1, {2}, {0}, 1, {1}, {1}, JX_FLOAT32},    /* batch in the middle */
      {3, 3, {6, 8, 8}, {8, 8, 5}, 2, {1, 2}, {0, 1}, 0, {0}, {0}, JX_FLOAT32}, /* two contracting dims */
      {2, 1, {64, 64}, {64}, 1, {1}, {0}, 0, {0}, {0}, JX_FLOAT32},           /* matrix @ vector */
      {1, 2, {64}, {64, 48}, 1, {0}, {0}, 0, {0}, {0}, JX_FLOAT32},           /* vector @ matrix */
      {2, 2, {12, 20}, {20, 9}, 1, {1}, {0}, 0, {0}, {0}, JX_FLOAT64},
      {2, 2, {4, 4}, {4, 4}, 1, {1}, {0}, 0, {0}, {0}, JX_FLOAT32}, /* 64 multiply-adds: a kernel */
  };
  for (size_t c = 0; c < sizeof prods / sizeof prods[0]; c++) {
    jx_array *x = jx_astype(test_randn(&seed, prods[c].nx, prods[c].xs), prods[c].dt);
    jx_array *y = jx_astype(test_randn(&seed, prods[c].ny, prods[c].ys), prods[c].dt);
    int64_t before = cpu_stats().gemms;
    jx_array *r = jx_lax_dot_general(x, y, prods[c].nc, prods[c].lc, prods[c].rc, prods[c].nb, prods[c].lb, prods[c].rb);
    bool gemm = cpu_stats().gemms > before;
    jx_array *ri = jx_lax_dot_general(jx_device_put(x, "interp"), jx_device_put(y, "interp"), prods[c].nc, prods[c].lc,
                                      prods[c].rc, prods[c].nb, prods[c].lb, prods[c].rb);
    CHECK_MSG(r && ri, "case %zu: %s", c, jx_last_error());
    if (!r || !ri) continue;
    CHECK_MSG(gemm == (c + 1 < sizeof prods / sizeof prods[0]), "case %zu: %s", c, gemm ? "a GEMM" : "no GEMM");
    jx_array *d = jx_max(jx_abs(jx_subtract(jx_astype(r, JX_FLOAT64), jx_astype(jx_device_put(ri, "cpu"), JX_FLOAT64))),
                         0, NULL, false);
    double tol = prods[c].dt == JX_FLOAT64 ? 1e-12 : 2e-5;
    CHECK_MSG(d && jx_item(d) <= tol, "case %zu: cpu and interp differ by %g", c, d ? jx_item(d) : NAN);
  }
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

int main(void) {
  cases = golden_load("reduce_movement.txt", &ncases);
  TEST_RUN(test_golden_products);
  TEST_RUN(test_shape_errors);
  TEST_RUN(test_weak_scalar);
  TEST_RUN(test_eager_gemm);
  golden_free(cases, ncases);
  return test_finish();
}
