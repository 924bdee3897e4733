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

int main(void) {
  TEST_RUN(test_cse_dce);
  return test_finish();
}
