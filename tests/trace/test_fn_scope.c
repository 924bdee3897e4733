/* test_fn_scope.c -- function scopes (issue 12, defect 7): jx_jit(jx_vmap(jx_grad(f)))
 * written literally leaks nothing inside jx_fn_scope_begin/end; kept handles move to
 * the enclosing scope; early frees, jx_fn_ref and the library's own temporary
 * functions (random samplers, hessian) inside a scope stay balanced. */
#include "test.h"

static jx_status sq(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_mul(in[0], in[0]), 0, NULL, false);
  return JX_OK;
}

static jx_array *vec(int n) { return jx_arange(0, n, 1, JX_FLOAT32); }

/* grad(sum(x^2)) = 2x, summed: n(n-1) */
static double call_sum(jx_fn *fn, int n) {
  jx_scope_begin();
  jx_array *x = vec(n), *out[1] = {NULL};
  double r = jx_call(fn, &x, out) == JX_OK ? jx_item(jx_sum(out[0], 0, NULL, false)) : NAN;
  jx_scope_end(0, NULL);
  return r;
}

static void test_nested_literal(void) {
  int64_t fns = jx_live_fns();
  /* Without a scope the literal form leaves sq and grad(sq) alive and unreachable
   * after jx_fn_free(result) (issue 12); inside one, nothing is left. */
  jx_fn_scope_begin();
  jx_fn *step = jx_jit(jx_vmap(jx_grad(jx_fn_new("sq", 1, 1, sq, NULL), 0, NULL), NULL, NULL));
  CHECK_EQ_INT(jx_fn_scope_end(1, &step), JX_OK);
  CHECK_EQ_INT(jx_live_fns(), fns + 4); /* step holds the chain */
  jx_scope_begin();
  jx_array *x = jx_reshape(vec(6), 2, (int64_t[]){2, 3}), *out[1] = {NULL};
  CHECK_EQ_INT(jx_call(step, &x, out), JX_OK);
  CHECK(out[0] && jx_item(jx_sum(out[0], 0, NULL, false)) == 30);
  jx_scope_end(0, NULL);
  jx_fn_free(step);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

static void test_keep_nested_and_early_free(void) {
  int64_t fns = jx_live_fns();
  jx_fn_scope_begin();
  jx_fn *f = jx_fn_new("sq", 1, 1, sq, NULL);
  jx_fn_scope_begin();
  jx_fn *g = jx_grad(f, 0, NULL);
  jx_fn *h = jx_jit(g);
  jx_fn_free(g); /* early: the inner scope must not drop it again */
  CHECK_EQ_INT(jx_fn_scope_end(1, &h), JX_OK); /* h moves to the outer scope */
  CHECK(call_sum(h, 4) == 12);
  jx_fn *r = jx_fn_ref(f); /* a second, scoped reference */
  CHECK(r == f);
  jx_fn *keep = jx_jit(f);
  CHECK_EQ_INT(jx_fn_scope_end(1, &keep), JX_OK); /* f, r, g's chain, h released */
  CHECK_EQ_INT(jx_live_fns(), fns + 2);           /* keep = jit(f) and f */
  jx_scope_begin();
  jx_array *x = vec(3), *out[1];
  CHECK_EQ_INT(jx_call(keep, &x, out), JX_OK);
  CHECK(jx_item(out[0]) == 5);
  jx_scope_end(0, NULL);
  jx_fn_free(keep);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

/* Handles created before the scope are untouched; the library's temporary functions
 * inside a scope (samplers run through jit, hessian's jacrev) leave nothing behind. */
static void test_outside_handles_and_library_temporaries(void) {
  int64_t fns = jx_live_fns();
  jx_fn *f = jx_fn_new("sq", 1, 1, sq, NULL);
  jx_fn_scope_begin();
  jx_fn *hs = jx_hessian(f, 0, NULL);
  jx_scope_begin();
  jx_array *n = jx_random_normal(jx_random_key(0), 1, (int64_t[]){4}, JX_FLOAT32);
  CHECK(n != NULL);
  jx_array *x = vec(2), *out[1] = {NULL};
  CHECK_EQ_INT(jx_call(hs, &x, out), JX_OK);
  CHECK(out[0] && jx_item(jx_sum(out[0], 0, NULL, false)) == 4); /* 2 * I */
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_fn_scope_end(0, NULL), JX_OK);
  CHECK_EQ_INT(jx_live_fns(), fns + 1); /* only f */
  CHECK(call_sum(f, 3) == 5);
  jx_fn_free(f);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

static void test_scope_errors(void) {
  CHECK_EQ_INT(jx_fn_scope_end(0, NULL), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_fn_scope_end: no function scope is open");
  int64_t fns = jx_live_fns();
  jx_fn_scope_begin();
  jx_fn_new("sq", 1, 1, sq, NULL);
  CHECK_EQ_INT(jx_fn_scope_end(-1, NULL), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "keep has -1 entries");
  CHECK_EQ_INT(jx_live_fns(), fns); /* the scope still closed, keeping nothing */
}

int main(void) {
  TEST_RUN(test_nested_literal);
  TEST_RUN(test_keep_nested_and_early_free);
  TEST_RUN(test_outside_handles_and_library_temporaries);
  TEST_RUN(test_scope_errors);
  return test_finish();
}
