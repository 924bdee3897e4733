/* test_fn.c -- jx_fn lifetimes and jx_call: implicit scopes, borrowed outputs, errors. */
#include "test.h"

static jx_status sum_exp(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_sum(jx_exp(in[0]), 0, NULL, false);
  out[1] = in[0]; /* a borrowed input passed through */
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status forgets_output(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  (void)in;
  (void)out;
  return JX_OK;
}

static jx_status fails(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_add(in[0], jx_zeros(1, (int64_t[]){7}, JX_FLOAT32));
  return out[0] ? JX_OK : jx_last_status();
}

/* float(x) inside jit: a JAX user's ConcretizationTypeError, reported by the call made */
static jx_status item_of(void *ctx, jx_array *const *in, jx_array **out) {
  double re, im;
  if (ctx) (void)jx_item_complex(in[0], &re, &im);
  else (void)jx_item(in[0]);
  out[0] = jx_ref(in[0]);
  return jx_last_status();
}

static void test_item_under_jit(void) {
  jx_array *x = jx_scalar_of(2, JX_FLOAT32), *out[1];
  jx_fn *f = jx_fn_new("item_of", 1, 1, item_of, NULL), *jf = jx_jit(f);
  CHECK_EQ_INT(jx_call(jf, &x, out), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_item: float32[] is a tracer inside a transformation");
  jx_fn *g = jx_fn_new("item_complex_of", 1, 1, item_of, (void *)1), *jg = jx_jit(g);
  CHECK_EQ_INT(jx_call(jg, &x, out), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_item_complex: float32[] is a tracer inside a transformation");
  jx_free(x);
  jx_fn_free(f), jx_fn_free(jf), jx_fn_free(g), jx_fn_free(jg);
}

static void test_call(void) {
  int64_t fns = jx_live_fns();
  jx_fn *f = jx_fn_new("sum_exp", 1, 2, sum_exp, NULL);
  CHECK(f != NULL);
  CHECK_STR(jx_fn_name(f), "sum_exp");
  CHECK_EQ_INT(jx_fn_nin(f), 1);
  CHECK_EQ_INT(jx_fn_nout(f), 2);
  jx_array *x = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  int64_t live = jx_live_arrays();
  jx_array *out[2];
  CHECK_EQ_INT(jx_call(f, (jx_array *[]){x}, out), JX_OK);
  CHECK(jx_item(out[0]) == 3.0);
  CHECK(out[1] == x);
  CHECK_EQ_INT(jx_live_arrays(), live + 1); /* only the sum survives; x is shared */
  jx_free(out[0]);
  jx_free(out[1]);
  jx_free(x);
  CHECK_EQ_INT(jx_live_fns(), fns + 1);
  CHECK(jx_fn_ref(f) == f);
  jx_fn_free(f);
  jx_fn_free(f);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

static void test_call_errors(void) {
  CHECK(jx_fn_new("bad", 1, 0, sum_exp, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_fn_new(bad)");
  jx_fn *g = jx_fn_new("forgets", 1, 1, forgets_output, NULL);
  jx_array *x = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  jx_array *out[1];
  CHECK_EQ_INT(jx_call(g, (jx_array *[]){x}, out), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "output 0 was not set");
  CHECK(out[0] == NULL);
  jx_fn *h = jx_fn_new("fails", 1, 1, fails, NULL);
  CHECK_EQ_INT(jx_call(h, (jx_array *[]){x}, out), JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "(7,)");
  CHECK_EQ_INT(jx_call(h, (jx_array *[]){NULL}, out), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "input 0 is NULL");
  CHECK_EQ_INT(jx_call(NULL, NULL, out), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_call");
  jx_free(x);
  jx_fn_free(g);
  jx_fn_free(h);
}

int main(void) {
  TEST_RUN(test_call);
  TEST_RUN(test_call_errors);
  TEST_RUN(test_item_under_jit);
  return test_finish();
}
