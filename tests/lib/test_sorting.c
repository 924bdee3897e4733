/* test_sorting.c -- jnp.sort / argsort against JAX (values printed by JAX 0.10 for the
 * same inputs), gradients through the permutation, vmap and jit of the routines, and
 * scatter_add through gather's transpose. */
#include <stdlib.h>

#include "test.h"

static const float special[9] = {3.0f, -0.0f, NAN, 0.0f, -INFINITY, 1.0f, -NAN, INFINITY, 1.0f};

static void test_sort_total_order(void) {
  jx_scope_begin();
  jx_array *x = jx_array_from(special, JX_FLOAT32, 1, (int64_t[]){9});
  float got[9];
  CHECK_EQ_INT(jx_read(jx_sort(x, 0, false), got, sizeof got), JX_OK);
  /* JAX: [-inf -0. 0. 1. 1. 3. inf nan nan] */
  CHECK(got[0] == -INFINITY && got[1] == 0 && signbit(got[1]) && got[2] == 0 && !signbit(got[2]));
  CHECK(got[3] == 1 && got[4] == 1 && got[5] == 3 && got[6] == INFINITY && isnan(got[7]) && isnan(got[8]));
  int32_t idx[9];
  static const int32_t asc[9] = {4, 1, 3, 5, 8, 0, 7, 2, 6}, desc[9] = {2, 6, 7, 0, 5, 8, 1, 3, 4};
  CHECK_EQ_INT(jx_read(jx_argsort(x, 0, false), idx, sizeof idx), JX_OK);
  for (int i = 0; i < 9; i++) CHECK_EQ_INT(idx[i], asc[i]);
  CHECK_EQ_INT(jx_read(jx_argsort(x, 0, true), idx, sizeof idx), JX_OK);
  for (int i = 0; i < 9; i++) CHECK_EQ_INT(idx[i], desc[i]);
  CHECK_EQ_INT(jx_read(jx_sort(x, -1, true), got, sizeof got), JX_OK);
  CHECK(isnan(got[0]) && isnan(got[1]) && got[2] == INFINITY && got[8] == -INFINITY);
  jx_scope_end(0, NULL);
}

static void test_sort_axes_and_ints(void) {
  jx_scope_begin();
  int32_t v[6] = {5, -1, 3, 2, 2, -7};
  jx_array *x = jx_array_from(v, JX_INT32, 2, (int64_t[]){2, 3});
  int32_t got[6];
  CHECK_EQ_INT(jx_read(jx_sort(x, 0, false), got, sizeof got), JX_OK);
  static const int32_t want0[6] = {2, -1, -7, 5, 2, 3};
  for (int i = 0; i < 6; i++) CHECK_EQ_INT(got[i], want0[i]);
  CHECK_EQ_INT(jx_read(jx_sort(x, JX_AXIS_NONE, false), got, sizeof got), JX_OK);
  static const int32_t flat[6] = {-7, -1, 2, 2, 3, 5};
  for (int i = 0; i < 6; i++) CHECK_EQ_INT(got[i], flat[i]);
  jx_array *e = jx_zeros(2, (int64_t[]){2, 0}, JX_FLOAT32);
  jx_array *se = jx_sort(e, 1, false);
  CHECK(se && jx_size(se) == 0);
  CHECK(jx_sort(x, 2, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_sort");
  CHECK(jx_argsort(jx_scalar(1.0), 0, false) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_argsort");
  jx_scope_end(0, NULL);
}

static jx_status weighted_sort(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_mul(jx_sort(in[0], 0, false), jx_arange(0, 4, 1, JX_FLOAT32)), 0, NULL, false);
  return JX_OK;
}

static void test_sort_grad_jit_vmap(void) {
  jx_scope_begin();
  float v[4] = {3, 1, 2, 0.5f};
  jx_array *x = jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){4});
  jx_fn *f = jx_fn_new("weighted_sort", 1, 1, weighted_sort, NULL);
  jx_fn *g = jx_grad(f, 1, NULL), *jg = jx_jit(g);
  jx_array *d, *dj;
  CHECK_EQ_INT(jx_call(g, &x, &d), JX_OK);
  CHECK_EQ_INT(jx_call(jg, &x, &dj), JX_OK);
  float got[4], gotj[4];
  static const float want[4] = {3, 1, 2, 0}; /* JAX: [3. 1. 2. 0.] */
  CHECK_EQ_INT(jx_read(d, got, sizeof got), JX_OK);
  CHECK_EQ_INT(jx_read(dj, gotj, sizeof gotj), JX_OK);
  for (int i = 0; i < 4; i++) CHECK(got[i] == want[i] && gotj[i] == want[i]);
  /* vmap of grad over a batch of rows equals each row's grad */
  float rows[8] = {3, 1, 2, 0.5f, -1, 4, 0, 2};
  jx_array *xs = jx_array_from(rows, JX_FLOAT32, 2, (int64_t[]){2, 4});
  jx_fn *vg = jx_vmap(g, NULL, NULL);
  jx_array *ds;
  CHECK_EQ_INT(jx_call(vg, &xs, &ds), JX_OK);
  float gs[8];
  static const float wants[8] = {3, 1, 2, 0, 0, 3, 1, 2};
  CHECK_EQ_INT(jx_read(ds, gs, sizeof gs), JX_OK);
  for (int i = 0; i < 8; i++) CHECK_MSG(gs[i] == wants[i], "row grad %d: %g", i, gs[i]);
  jx_fn_free(vg), jx_fn_free(jg), jx_fn_free(g), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

static jx_status take_sum(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *idx = jx_array_from((int32_t[]){0, 2, 2, 9}, JX_INT32, 1, (int64_t[]){4});
  out[0] = jx_sum(jx_square(jx_take(in[0], idx, 0)), 0, NULL, false);
  return JX_OK;
}

static void test_gather_transpose_is_scatter_add(void) {
  jx_scope_begin();
  float v[3] = {1, 2, 3};
  jx_array *x = jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){3});
  jx_fn *f = jx_fn_new("take_sum", 1, 1, take_sum, NULL), *g = jx_grad(f, 1, NULL);
  jx_array *d;
  CHECK_EQ_INT(jx_call(g, &x, &d), JX_OK);
  float got[3];
  CHECK_EQ_INT(jx_read(d, got, sizeof got), JX_OK);
  /* index 9 is out of bounds: jnp.take's fill mode gives it no gradient */
  CHECK(got[0] == 2 && got[1] == 0 && got[2] == 12);
  jx_fn_free(g), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_sort_total_order);
  TEST_RUN(test_sort_axes_and_ints);
  TEST_RUN(test_sort_grad_jit_vmap);
  TEST_RUN(test_gather_transpose_is_scatter_add);
  CHECK_EQ_INT(jx_live_fns(), fns);
  return test_finish();
}
