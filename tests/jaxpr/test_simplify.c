/* test_simplify.c -- the jaxpr passes: CSE merges repeated equations, DCE drops unused
 * ones, and the result still typechecks and evaluates to the same values. */
#include <stdlib.h>

#include "jaxpr/jaxpr.h"
#include "test.h"
#include "transform/transform.h"

static jx_status twice_sin(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *a = jx_sin(in[0]), *b = jx_sin(in[0]); /* the same equation twice */
  jx_cos(in[0]);                                    /* dead */
  out[0] = jx_add(a, b);
  return JX_OK;
}

static void test_cse_dce(void) {
  jx_fn *f = jx_fn_new("twice_sin", 1, 1, twice_sin, NULL);
  jx_array *x = jx_arange(0, 3, 1, JX_FLOAT32);
  Trace *t = stage_begin();
  jx_scope_begin();
  Aval a = prim_aval_of(x);
  jx_array *in = stage_new_input(t, &a), *out = NULL;
  CHECK_EQ_INT(jx_call(f, &in, &out), JX_OK);
  Jaxpr *j = stage_end(t, 1, &out);
  jx_scope_end(0, NULL);
  CHECK(j != NULL);
  if (j) {
    CHECK_EQ_INT(j->neqns, 4);
    CHECK_EQ_INT(jaxpr_simplify(j), JX_OK);
    char *text = jaxpr_print(j);
    CHECK_STR(text, "{ lambda ; a:f32[3]. let\n    b:f32[3] = sin a\n    c:f32[3] = add b b\n  in (c,) }");
    free(text);
    jx_array *y = NULL, *want = NULL;
    CHECK_EQ_INT(jaxpr_eval(j, &x, &y), JX_OK);
    CHECK_EQ_INT(jx_call(f, &x, &want), JX_OK);
    float got[3], exp[3];
    jx_read(y, got, sizeof got);
    jx_read(want, exp, sizeof exp);
    for (int i = 0; i < 3; i++) CHECK(got[i] == exp[i]);
    jx_free(y), jx_free(want);
    jaxpr_free(j);
  }
  jx_free(x);
  jx_fn_free(f);
}

static jx_status sin_fn(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sin(in[0]);
  return JX_OK;
}

/* Two calls of one jitted function with separately traced (equal, distinct) jaxprs:
 * CSE compares the jit equations' jaxprs by structure and keeps one. */
static jx_status twice_jit(void *ctx, jx_array *const *in, jx_array **out) {
  jx_fn *const *g = ctx;
  jx_array *a, *b;
  jx_call(g[0], in, &a);
  jx_call(g[1], in, &b);
  out[0] = jx_add(a, b);
  return JX_OK;
}

static void test_cse_calls(void) {
  jx_fn *s = jx_fn_new("g", 1, 1, sin_fn, NULL);
  jx_fn *g[2] = {jx_jit(s), jx_jit(s)};
  jx_fn *f = jx_fn_new("twice_jit", 1, 1, twice_jit, g);
  jx_array *x = jx_arange(0, 3, 1, JX_FLOAT32);
  Trace *t = stage_begin();
  jx_scope_begin();
  Aval a = prim_aval_of(x);
  jx_array *in = stage_new_input(t, &a), *out = NULL;
  CHECK_EQ_INT(jx_call(f, &in, &out), JX_OK);
  Jaxpr *j = stage_end(t, 1, &out);
  jx_scope_end(0, NULL);
  CHECK(j != NULL);
  if (j) {
    CHECK_EQ_INT(j->neqns, 3);
    CHECK(j->eqns[0].params.jaxpr != j->eqns[1].params.jaxpr); /* two traces */
    CHECK(jaxpr_equal(j->eqns[0].params.jaxpr, j->eqns[1].params.jaxpr));
    CHECK(jaxpr_hash(j->eqns[0].params.jaxpr) == jaxpr_hash(j->eqns[1].params.jaxpr));
    CHECK_EQ_INT(jaxpr_simplify(j), JX_OK);
    CHECK_EQ_INT(j->neqns, 2);
    CHECK_EQ_INT(jaxpr_check(j), JX_OK);
    /* inlining leaves the call's body */
    CHECK(jaxpr_inline_calls(j));
    char *text = jaxpr_print(j);
    CHECK_STR(text, "{ lambda ; a:f32[3]. let\n    b:f32[3] = sin a\n    c:f32[3] = add b b\n  in (c,) }");
    free(text);
    CHECK_EQ_INT(jaxpr_check(j), JX_OK);
    jaxpr_free(j);
  }
  jx_free(x);
  jx_fn_free(f), jx_fn_free(g[0]), jx_fn_free(g[1]), jx_fn_free(s);
}

/* jaxpr_check rejects a jit equation whose jaxpr disagrees with its operands. */
static void test_check_calls(void) {
  jx_fn *s = jx_fn_new("g", 1, 1, sin_fn, NULL), *g = jx_jit(s);
  jx_array *x = jx_arange(0, 3, 1, JX_FLOAT32);
  Trace *t = stage_begin();
  jx_scope_begin();
  Aval a = prim_aval_of(x);
  jx_array *in = stage_new_input(t, &a), *out = NULL;
  CHECK_EQ_INT(jx_call(g, &in, &out), JX_OK);
  Jaxpr *j = stage_end(t, 1, &out);
  jx_scope_end(0, NULL);
  if (j) {
    CHECK_EQ_INT(j->neqns, 1);
    CHECK_EQ_INT(jaxpr_check(j), JX_OK);
    Jaxpr *sub = j->eqns[0].params.jaxpr;
    sub->vars[sub->invars[0]].shape[0] = 4; /* the sub-jaxpr no longer takes f32[3] */
    CHECK(jaxpr_check(j) != JX_OK);
    jx_clear_error();
    sub->vars[sub->invars[0]].shape[0] = 3;
    sub->vars[sub->outvars[0]].dtype = JX_INT32; /* its sin no longer types */
    CHECK(jaxpr_check(j) != JX_OK);
    jx_clear_error();
    jaxpr_free(j);
  }
  jx_free(x);
  jx_fn_free(g), jx_fn_free(s);
}

int main(void) {
  TEST_RUN(test_cse_dce);
  TEST_RUN(test_cse_calls);
  TEST_RUN(test_check_calls);
  return test_finish();
}
