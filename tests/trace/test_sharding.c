/* test_sharding.c -- several cpu devices in one process (jx_config_cpu_devices, XLA's
 * forced host device count), meshes, NamedSharding from PartitionSpec text (printed as
 * JAX prints it), jx_device_put_sharded: each device's block against the definition,
 * replicated copies, gathering back, ordinary operations on a sharded array; bad input
 * (mesh too large, duplicate or malformed names, unknown axes, shard sizes that do not
 * divide): clear errors; no leaks (test_run). */
#include <stdlib.h>
#include <string.h>

#include "test.h"

static jx_array *iota2(int64_t r, int64_t c) {
  float v[256];
  for (int64_t i = 0; i < r * c; i++) v[i] = (float)i;
  return jx_array_from(v, JX_FLOAT32, 2, (int64_t[]){r, c});
}

static void check_iota_block(jx_array *s, int64_t cols, int64_t r0, int64_t r1, int64_t c0,
                             int64_t c1, const char *what) {
  CHECK_MSG(s != NULL, "%s: NULL (%s)", what, jx_last_error());
  if (!s) return;
  CHECK_EQ_INT(jx_ndim(s), 2);
  CHECK_EQ_INT(jx_shape(s)[0], r1 - r0);
  CHECK_EQ_INT(jx_shape(s)[1], c1 - c0);
  float got[256];
  CHECK(jx_read(s, got, (size_t)jx_size(s) * sizeof(float)) == JX_OK);
  for (int64_t r = r0; r < r1; r++)
    for (int64_t c = c0; c < c1; c++)
      CHECK_MSG(got[(r - r0) * (c1 - c0) + (c - c0)] == (float)(r * cols + c), "%s[%lld,%lld]",
                what, (long long)r, (long long)c);
}

static void test_cpu_devices(void) {
  const char *const *d = jx_devices();
  int n = 0, ncpu = 0;
  for (; d[n]; n++) ncpu += strncmp(d[n], "cpu", 3) == 0;
  CHECK_EQ_INT(ncpu, 4);
  CHECK_STR(d[1], "cpu");
  CHECK_STR(d[2], "cpu:1");
  CHECK_STR(d[4], "cpu:3");
  CHECK_EQ_INT(jx_device_count("cpu"), 4);
  CHECK_EQ_INT(jx_device_count("interp"), 1);
  CHECK_EQ_INT(jx_device_count("tpu"), 0);
  CHECK(jx_config_cpu_devices(4) == JX_OK); /* the same count is fine */
  CHECK(jx_config_cpu_devices(2) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "already has 4 cpu devices");
  CHECK(jx_config_cpu_devices(0) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "expected 1 to 64");
  jx_scope_begin();
  jx_array *x = iota2(2, 3);
  jx_array *x3 = jx_device_put(x, "cpu:3");
  CHECK_STR(jx_device_of(x3), "cpu:3");
  check_iota_block(x3, 3, 0, 2, 0, 3, "put on cpu:3");
  CHECK_STR(jx_device_of(jx_device_put(x, "cpu:0")), "cpu");
  /* committed arrays compute on their device; two devices in one op: an error */
  jx_array *y = jx_add(x3, jx_scalar(1.0));
  CHECK_STR(jx_device_of(y), "cpu:3");
  CHECK(jx_add(x3, jx_device_put(x, "cpu:1")) == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "cpu:1");
  CHECK(jx_device_put(x, "cpu:4") == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "this process has 4 cpu devices, cpu:0 to cpu:3");
  CHECK(jx_device_put(x, "cpu:01") == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "unknown device \"cpu:01\"");
  jx_scope_end(0, NULL);
}

static void test_mesh(void) {
  jx_mesh *m = jx_mesh_new(2, (int64_t[]){2, 2}, (const char *[]){"x", "y"}, NULL);
  CHECK(m != NULL);
  CHECK_EQ_INT(jx_mesh_ndim(m), 2);
  CHECK_EQ_INT(jx_mesh_size(m), 4);
  CHECK_EQ_INT(jx_mesh_axis_size(m, "y"), 2);
  CHECK_EQ_INT(jx_mesh_axis_size(m, "z"), -1);
  CHECK_STR(jx_mesh_axis_name(m, 1), "y");
  CHECK(jx_mesh_axis_name(m, 2) == NULL);
  CHECK_STR(jx_mesh_device(m, 0), "cpu");
  CHECK_STR(jx_mesh_device(m, 3), "cpu:3");
  jx_mesh_free(m);
  /* explicit devices, in any order */
  m = jx_mesh_new(1, (int64_t[]){2}, (const char *[]){"i"}, (const char *[]){"cpu:2", "cpu:1"});
  CHECK(m != NULL);
  CHECK_STR(jx_mesh_device(m, 0), "cpu:2");
  jx_mesh_free(m);
  /* bad input */
  CHECK(jx_mesh_new(1, (int64_t[]){8}, (const char *[]){"x"}, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "the process has 4 cpu devices");
  CHECK(jx_mesh_new(2, (int64_t[]){2, 2}, (const char *[]){"x", "x"}, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "axis name \"x\" is used twice");
  CHECK(jx_mesh_new(1, (int64_t[]){2}, (const char *[]){"2x"}, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "is not an identifier");
  CHECK(jx_mesh_new(1, (int64_t[]){0}, (const char *[]){"x"}, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "axis 0 has size 0");
  CHECK(jx_mesh_new(0, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "a mesh has 1 to 8 axes");
  CHECK(jx_mesh_new(1, (int64_t[]){2}, (const char *[]){"x"}, (const char *[]){"cpu:1", "cpu:1"}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "device cpu:1 is listed twice");
  CHECK(jx_mesh_new(1, (int64_t[]){2}, (const char *[]){"x"}, (const char *[]){"cpu", "gpu:7"}) == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "unknown device \"gpu:7\"");
}

static void test_spec(void) {
  jx_mesh *m = jx_mesh_new(2, (int64_t[]){2, 2}, (const char *[]){"x", "y"}, NULL);
  static const struct {
    const char *spec, *printed;
  } ok[] = {
      {"x", "P('x',)"},
      {"x, None", "P('x', None)"},
      {" None ,y ", "P(None, 'y')"},
      {"(x, y)", "P(('x', 'y'),)"},
      {"(y,x), None", "P(('y', 'x'), None)"},
      {"", "P()"},
      {"()", "P(None,)"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    jx_sharding *s = jx_named_sharding(m, ok[i].spec);
    CHECK_MSG(s != NULL, "%s: %s", ok[i].spec, jx_last_error());
    CHECK_STR(jx_sharding_spec(s), ok[i].printed);
    CHECK(jx_sharding_mesh(s) == m);
    jx_sharding_free(s);
  }
  static const struct {
    const char *spec, *needle;
  } bad[] = {
      {"z", "names axis 'z', which the mesh does not have (its axes: 'x', 'y')"},
      {"x, x", "uses mesh axis 'x' twice"},
      {"(x, y), y", "uses mesh axis 'y' twice"},
      {"x,", "malformed PartitionSpec"},
      {"(x", "malformed PartitionSpec"},
      {"x y", "malformed PartitionSpec"},
      {"'x'", "malformed PartitionSpec"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(jx_named_sharding(m, bad[i].spec) == NULL);
    CHECK_ERROR(JX_ERR_VALUE, bad[i].needle);
  }
  CHECK(jx_named_sharding(NULL, "x") == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "mesh is NULL");
  jx_mesh_free(m);
}

/* jax.device_put(x, NamedSharding(mesh, P(...))) on a 2x2 mesh, x = arange(48).reshape(8,
 * 6): each device's block by the definition. */
static void test_put_sharded(void) {
  jx_scope_begin();
  jx_mesh *m = jx_mesh_new(2, (int64_t[]){2, 2}, (const char *[]){"x", "y"}, NULL);
  jx_array *x = iota2(8, 6);
  jx_sharding *s = jx_named_sharding(m, "x, y");
  jx_array *a = jx_device_put_sharded(x, s);
  CHECK(a != NULL);
  CHECK(jx_sharding_of(a) == s);
  CHECK(jx_sharding_of(x) == NULL);
  CHECK_EQ_INT(jx_num_shards(a), 4);
  CHECK_EQ_INT(jx_num_shards(x), 1);
  for (int i = 0; i < 4; i++) {
    jx_array *sh = jx_shard(a, i);
    CHECK_STR(jx_device_of(sh), jx_mesh_device(m, i));
    int64_t r = i / 2, c = i % 2;
    check_iota_block(sh, 6, r * 4, r * 4 + 4, c * 3, c * 3 + 3, "P('x','y') block");
  }
  check_iota_block(a, 6, 0, 8, 0, 6, "whole value read back");
  CHECK(jx_shard(a, 4) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "shard 4 of an array with 4 shards");
  CHECK(jx_shard(x, 0) == x);
  /* putting it again with the same sharding: the same array */
  CHECK(jx_device_put_sharded(a, s) == a);
  /* ordinary operations use the whole value and give unsharded arrays */
  jx_array *b = jx_multiply(a, jx_scalar(1.0));
  CHECK(jx_sharding_of(b) == NULL);
  check_iota_block(b, 6, 0, 8, 0, 6, "a * 1");
  jx_array *back = jx_device_put(a, "cpu:2");
  CHECK_STR(jx_device_of(back), "cpu:2");
  check_iota_block(back, 6, 0, 8, 0, 6, "gathered onto cpu:2");
  jx_sharding_free(s);

  /* rows over x, replicated over y: devices (i, 0) and (i, 1) hold equal copies */
  s = jx_named_sharding(m, "x");
  a = jx_device_put_sharded(x, s);
  for (int i = 0; i < 4; i++)
    check_iota_block(jx_shard(a, i), 6, (i / 2) * 4, (i / 2) * 4 + 4, 0, 6, "P('x') block");
  jx_sharding_free(s);
  /* columns over (y, x): y major */
  s = jx_named_sharding(m, "None, (y, x)");
  jx_array *x8 = iota2(2, 8);
  a = jx_device_put_sharded(x8, s);
  for (int i = 0; i < 4; i++) {
    int64_t cx = i / 2, cy = i % 2, piece = cy * 2 + cx;
    check_iota_block(jx_shard(a, i), 8, 0, 2, piece * 2, piece * 2 + 2, "P(None, ('y','x')) block");
  }
  check_iota_block(a, 8, 0, 2, 0, 8, "P(None, ('y','x')) whole");
  jx_sharding_free(s);
  /* fully replicated */
  s = jx_named_sharding(m, "");
  a = jx_device_put_sharded(x, s);
  for (int i = 0; i < 4; i++) check_iota_block(jx_shard(a, i), 6, 0, 8, 0, 6, "P() copy");
  jx_sharding_free(s);

  /* bad input */
  s = jx_named_sharding(m, "(x, y)");
  CHECK(jx_device_put_sharded(iota2(6, 2), s) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "splits dimension 0 into 4 shards, but its size 6 is not divisible by 4");
  jx_sharding_free(s);
  s = jx_named_sharding(m, "x, None, y");
  CHECK(jx_device_put_sharded(x, s) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "has 3 entries, more than the array's 2 dimensions");
  CHECK(jx_device_put_sharded(NULL, s) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "array is NULL");
  jx_sharding_free(s);
  jx_mesh_free(m);
  jx_scope_end(0, NULL);
}

/* A mesh of one device, and a mesh of devices not starting at cpu:0. */
static void test_small_meshes(void) {
  jx_scope_begin();
  jx_mesh *m = jx_mesh_new(1, (int64_t[]){1}, (const char *[]){"i"}, (const char *[]){"cpu:3"});
  jx_sharding *s = jx_named_sharding(m, "i");
  jx_array *a = jx_device_put_sharded(iota2(3, 2), s);
  CHECK_STR(jx_device_of(a), "cpu:3");
  check_iota_block(jx_shard(a, 0), 2, 0, 3, 0, 2, "one-device mesh");
  jx_sharding_free(s);
  jx_mesh_free(m);
  m = jx_mesh_new(1, (int64_t[]){3}, (const char *[]){"i"}, (const char *[]){"cpu:1", "cpu:2", "cpu:3"});
  s = jx_named_sharding(m, "None, i");
  a = jx_device_put_sharded(iota2(2, 9), s);
  CHECK_STR(jx_device_of(a), "cpu:1");
  for (int i = 0; i < 3; i++) {
    jx_array *sh = jx_shard(a, i);
    CHECK_STR(jx_device_of(sh), jx_mesh_device(m, i));
    check_iota_block(sh, 9, 0, 2, i * 3, i * 3 + 3, "3-device mesh block");
  }
  jx_sharding_free(s);
  jx_mesh_free(m);
  jx_scope_end(0, NULL);
}

int main(void) {
  if (jx_config_cpu_devices(4) != JX_OK) return 1;
  TEST_RUN(test_cpu_devices);
  TEST_RUN(test_mesh);
  TEST_RUN(test_spec);
  TEST_RUN(test_put_sharded);
  TEST_RUN(test_small_meshes);
  return test_finish();
}
