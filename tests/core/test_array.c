/* test_array.c -- lifetimes (refcounts, scopes, early frees, keep), the sticky error
 * contract, argument checks at the array boundary, introspection and readback. */
#include <stdint.h>
#include <stdlib.h>

#include "test.h"

static jx_array *vec3(float a, float b, float c) {
  float d[3] = {a, b, c};
  return jx_array_from(d, JX_FLOAT32, 1, (int64_t[]){3});
}

static void test_ref_free(void) {
  int64_t live = jx_live_arrays();
  jx_array *a = vec3(1, 2, 3);
  CHECK_EQ_INT(jx_live_arrays(), live + 1);
  CHECK(jx_ref(a) == a);
  jx_free(a);
  CHECK_EQ_INT(jx_live_arrays(), live + 1);
  jx_free(a);
  CHECK_EQ_INT(jx_live_arrays(), live);
  jx_free(NULL);
  CHECK(jx_ref(NULL) == NULL);
}

static void test_scope_releases(void) {
  int64_t live = jx_live_arrays();
  jx_scope_begin();
  jx_array *a = vec3(1, 2, 3);
  jx_array *b = jx_ref(a);
  (void)b;
  vec3(4, 5, 6);
  CHECK_EQ_INT(jx_live_arrays(), live + 2);
  CHECK_EQ_INT(jx_scope_end(0, NULL), JX_OK);
  CHECK_EQ_INT(jx_live_arrays(), live);
}

static void test_scope_keep_and_early_free(void) {
  int64_t live = jx_live_arrays();
  jx_scope_begin();
  jx_array *keep = vec3(1, 2, 3);
  jx_array *early = vec3(4, 5, 6);
  jx_free(early); /* the scope must skip it */
  CHECK_EQ_INT(jx_live_arrays(), live + 1);
  jx_scope_begin();
  jx_array *inner = vec3(7, 8, 9);
  CHECK_EQ_INT(jx_scope_end(1, &inner), JX_OK); /* handed to the outer scope */
  CHECK_EQ_INT(jx_live_arrays(), live + 2);
  CHECK_EQ_INT(jx_scope_end(1, &keep), JX_OK);
  CHECK_EQ_INT(jx_live_arrays(), live + 1); /* inner released by the outer scope */
  float out[3];
  CHECK_EQ_INT(jx_read(keep, out, sizeof out), JX_OK);
  CHECK(out[0] == 1 && out[2] == 3);
  jx_free(keep);
  CHECK_EQ_INT(jx_live_arrays(), live);
}

static void test_scope_end_without_begin(void) {
  CHECK_EQ_INT(jx_scope_end(0, NULL), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scope_end");
}

static void test_sticky_error(void) {
  jx_array *a = jx_zeros(2, (int64_t[]){2, 3}, JX_FLOAT32);
  jx_array *b = jx_zeros(1, (int64_t[]){4}, JX_FLOAT32);
  jx_array *c = jx_add(a, b);
  CHECK(c == NULL);
  CHECK_EQ_INT(jx_last_status(), JX_ERR_SHAPE);
  /* a later failure keeps the first message */
  jx_array *d = jx_exp(c);
  CHECK(d == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "(2,3)");
  CHECK_EQ_INT(jx_last_status(), JX_OK);
  CHECK_STR(jx_last_error(), "");
  jx_free(a);
  jx_free(b);
}

static void test_bad_shapes(void) {
  CHECK(jx_zeros(-1, NULL, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "ndim");
  CHECK(jx_zeros(2, (int64_t[]){3, -2}, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "(3,-2)");
  CHECK(jx_zeros(3, (int64_t[]){INT64_MAX / 2, 4, 4}, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "overflows");
  CHECK(jx_array_from(NULL, JX_FLOAT32, 1, (int64_t[]){2}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_array_from");
  CHECK(jx_array_from(NULL, (jx_dtype)99, 1, (int64_t[]){2}) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_array_from");
  jx_array *e = jx_array_from(NULL, JX_FLOAT32, 2, (int64_t[]){0, 3});
  CHECK(e != NULL);
  CHECK_EQ_INT(jx_size(e), 0);
  jx_free(e);
}

static void test_introspection(void) {
  jx_array *a = jx_zeros(2, (int64_t[]){2, 3}, JX_INT16);
  CHECK_EQ_INT(jx_ndim(a), 2);
  CHECK_EQ_INT(jx_shape(a)[1], 3);
  CHECK_EQ_INT(jx_size(a), 6);
  CHECK_EQ_INT(jx_dtype_of(a), JX_INT16);
  CHECK(!jx_is_weak(a));
  const char *dev = getenv("JAXC_DEVICE");
  CHECK_STR(jx_device_of(a), dev && *dev ? dev : "cpu");
  jx_array *s = jx_scalar(2.5);
  CHECK(jx_is_weak(s));
  CHECK_EQ_INT(jx_dtype_of(s), jx_config_x64_enabled() ? JX_FLOAT64 : JX_FLOAT32);
  CHECK(jx_item(s) == 2.5);
  CHECK(isnan(jx_item(a)));
  CHECK_ERROR(JX_ERR_SHAPE, "jx_item");
  int16_t buf[6];
  CHECK_EQ_INT(jx_read(a, buf, 5), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "needs 12 bytes");
  CHECK(jx_scalar_int(INT64_C(1) << 40) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "int32");
  jx_free(a);
  jx_free(s);
}

static void test_x64_canonicalization(void) {
  double d[2] = {1.5, -2.25};
  jx_array *a = jx_array_from(d, JX_FLOAT64, 1, (int64_t[]){2});
  CHECK_EQ_INT(jx_dtype_of(a), JX_FLOAT32);
  float f[2];
  CHECK_EQ_INT(jx_read(a, f, sizeof f), JX_OK);
  CHECK(f[0] == 1.5f && f[1] == -2.25f);
  jx_config_enable_x64(true);
  jx_array *b = jx_array_from(d, JX_FLOAT64, 1, (int64_t[]){2});
  CHECK_EQ_INT(jx_dtype_of(b), JX_FLOAT64);
  jx_array *c = jx_scalar_int(INT64_C(1) << 40);
  CHECK(c && jx_item(c) == (double)(INT64_C(1) << 40));
  jx_config_enable_x64(false);
  jx_free(a);
  jx_free(b);
  jx_free(c);
}

static void test_devices(void) {
  const char *const *devs = jx_devices();
  CHECK_STR(devs[0], "interp");
  CHECK_EQ_INT(jx_default_device("nope"), JX_ERR_DEVICE);
  CHECK_ERROR(JX_ERR_DEVICE, "nope");
  jx_array *a = jx_ones(1, (int64_t[]){2}, JX_FLOAT32);
  jx_array *b = jx_device_put(a, "interp");
  CHECK(b != NULL);
  CHECK(jx_device_put(a, "tpu") == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "tpu");
  jx_free(a);
  jx_free(b);
}

int main(void) {
  TEST_RUN(test_ref_free);
  TEST_RUN(test_scope_releases);
  TEST_RUN(test_scope_keep_and_early_free);
  TEST_RUN(test_scope_end_without_begin);
  TEST_RUN(test_sticky_error);
  TEST_RUN(test_bad_shapes);
  TEST_RUN(test_introspection);
  TEST_RUN(test_x64_canonicalization);
  TEST_RUN(test_devices);
  return test_finish();
}
