/* test_devices.c -- devices in dispatch: jx_devices, jx_device_put between interp and
 * cpu (contiguous arrays and views), JAX's committed-device rule in eager ops and in
 * jit (committed arrays on different devices: JX_ERR_DEVICE naming both; uncommitted
 * arrays follow), one jit cache entry per device, closed-over arrays from another
 * device, and no leaks (test_run checks jx_live_arrays). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static jx_array *iota_f32(int64_t rows, int64_t cols, float scale) {
  float v[64];
  for (int64_t i = 0; i < rows * cols; i++) v[i] = (float)i * scale - 3.0f;
  return jx_array_from(v, JX_FLOAT32, 2, (int64_t[]){rows, cols});
}

static void check_values(jx_array *a, const float *want, int64_t n, const char *what) {
  CHECK_MSG(a != NULL, "%s: NULL (%s)", what, jx_last_error());
  if (!a) return;
  CHECK_EQ_INT(jx_size(a), n);
  float got[64];
  CHECK(jx_read(a, got, (size_t)n * sizeof(float)) == JX_OK);
  for (int64_t i = 0; i < n; i++)
    CHECK_MSG(got[i] == want[i], "%s[%lld]: %g vs %g", what, (long long)i, got[i], want[i]);
}

static void test_list(void) {
  const char *const *d = jx_devices();
  CHECK(d && d[0] && d[1]);
  CHECK_STR(d[0], "interp");
  CHECK_STR(d[1], "cpu");
  int n = 0;
  while (d[n]) n++;
  CHECK(n >= 2);
  CHECK(jx_devices() == d); /* one list for the process */
  CHECK(jx_default_device("tpu") == JX_ERR_DEVICE);
  CHECK_ERROR(JX_ERR_DEVICE, "unknown device \"tpu\"");
  /* a NULL name is a bad argument, not an unknown device */
  CHECK(jx_default_device(NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_default_device: the device name is NULL");
}

static void test_put(void) {
  jx_array *x = iota_f32(3, 4, 0.5f); /* default device: cpu, uncommitted */
  float want[12], want_t[12];
  for (int i = 0; i < 12; i++) want[i] = (float)i * 0.5f - 3.0f;
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 3; c++) want_t[r * 3 + c] = want[c * 4 + r];
  CHECK_STR(jx_device_of(x), "cpu");
  jx_array *xi = jx_device_put(x, "interp");
  CHECK_STR(jx_device_of(xi), "interp");
  check_values(xi, want, 12, "put to interp");
  jx_array *back = jx_device_put(xi, "cpu");
  CHECK_STR(jx_device_of(back), "cpu");
  check_values(back, want, 12, "put back to cpu");
  /* a view (transpose) moves as its logical contents */
  jx_array *t = jx_transpose(x, NULL);
  jx_array *ti = jx_device_put(t, "interp");
  CHECK_STR(jx_device_of(ti), "interp");
  check_values(ti, want_t, 12, "transposed view on interp");
  CHECK_EQ_INT(jx_shape(ti)[0], 4);
  /* the same device: the same values, now committed */
  jx_array *same = jx_device_put(x, "cpu");
  CHECK_STR(jx_device_of(same), "cpu");
  check_values(same, want, 12, "put on its own device");
  CHECK(jx_device_put(x, "nope") == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "jx_device_put: unknown device \"nope\"");
  CHECK(jx_device_put(x, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_device_put: the device name is NULL");
  CHECK(jx_device_put(NULL, "cpu") == NULL);
  jx_clear_error();
  /* waiting on NULL with no earlier error: a message, not a bare status */
  CHECK(jx_block_until_ready(NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_block_until_ready: the array is NULL");
  jx_free(x), jx_free(xi), jx_free(back), jx_free(t), jx_free(ti), jx_free(same);
}

static void test_committed(void) {
  jx_scope_begin();
  jx_array *x = iota_f32(2, 3, 1.0f), *y = iota_f32(2, 3, 0.25f);
  float sum[6];
  for (int i = 0; i < 6; i++) sum[i] = ((float)i - 3.0f) + ((float)i * 0.25f - 3.0f);
  jx_array *xi = jx_device_put(x, "interp"), *yc = jx_device_put(y, "cpu");
  /* committed to interp and to cpu: no implicit move, an error naming both */
  CHECK(jx_add(xi, yc) == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "add: arrays committed to different devices: float32[2,3] on "
                             "interp and float32[2,3] on cpu");
  /* an uncommitted array follows the committed one, and the result is committed */
  jx_array *s = jx_add(y, xi);
  CHECK_STR(jx_device_of(s), "interp");
  check_values(s, sum, 6, "uncommitted + committed");
  CHECK(jx_multiply(s, yc) == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "committed to different devices");
  jx_array *r = jx_sum(s, 1, (int[]){1}, false); /* reductions, views keep the device */
  CHECK_STR(jx_device_of(r), "interp");
  CHECK_STR(jx_device_of(jx_reshape(s, 1, (int64_t[]){6})), "interp");
  CHECK(jx_add(r, jx_sum(yc, 1, (int[]){1}, false)) == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "on interp and float32[2] on cpu");
  /* uncommitted arrays on different devices: the first one's device, uncommitted */
  CHECK(jx_default_device("interp") == JX_OK);
  jx_array *yi = iota_f32(2, 3, 0.25f);
  CHECK_STR(jx_device_of(yi), "interp");
  jx_array *u = jx_add(x, yi);
  CHECK_STR(jx_device_of(u), "cpu");
  check_values(u, sum, 6, "uncommitted on two devices");
  jx_array *u2 = jx_add(u, xi); /* uncommitted: follows xi to interp */
  CHECK_STR(jx_device_of(u2), "interp");
  CHECK(jx_default_device("cpu") == JX_OK);
  jx_scope_end(0, NULL);
}

static int ncalls;

static jx_status affine(void *ctx, jx_array *const *in, jx_array **out) {
  ncalls++;
  jx_array *c = ctx; /* a closed-over array (a constant of the trace) */
  out[0] = jx_add(jx_multiply(in[0], in[1]), c ? c : jx_scalar(1.0));
  return JX_OK;
}

static void test_jit(void) {
  jx_scope_begin();
  jx_array *x = iota_f32(2, 3, 1.0f), *y = iota_f32(2, 3, 0.25f);
  float want[6];
  for (int i = 0; i < 6; i++) want[i] = ((float)i - 3.0f) * ((float)i * 0.25f - 3.0f) + 1.0f;
  jx_fn *f = jx_fn_new("affine", 2, 1, affine, NULL);
  jx_fn *jf = jx_jit(f);
  ncalls = 0;
  jx_array *out = NULL;
  CHECK(jx_call(jf, (jx_array *[]){x, y}, &out) == JX_OK);
  CHECK_STR(jx_device_of(out), "cpu");
  check_values(out, want, 6, "jit on cpu");
  CHECK_EQ_INT(ncalls, 1);
  /* the same signature on interp: a second entry, compiled for and run on interp */
  jx_array *xi = jx_device_put(x, "interp"), *yi = jx_device_put(y, "interp");
  jx_array *oi = NULL;
  CHECK(jx_call(jf, (jx_array *[]){xi, yi}, &oi) == JX_OK);
  CHECK_STR(jx_device_of(oi), "interp");
  check_values(oi, want, 6, "jit on interp");
  CHECK_EQ_INT(ncalls, 2);
  /* both entries stay cached: no third trace */
  jx_array *o2 = NULL, *o3 = NULL;
  CHECK(jx_call(jf, (jx_array *[]){x, y}, &o2) == JX_OK);
  CHECK(jx_call(jf, (jx_array *[]){xi, yi}, &o3) == JX_OK);
  CHECK_EQ_INT(ncalls, 2);
  CHECK_STR(jx_device_of(o2), "cpu");
  CHECK_STR(jx_device_of(o3), "interp");
  /* an uncommitted input follows the committed one (on interp, result committed) */
  jx_array *o4 = NULL;
  CHECK(jx_call(jf, (jx_array *[]){x, yi}, &o4) == JX_OK);
  CHECK_STR(jx_device_of(o4), "interp");
  check_values(o4, want, 6, "jit, uncommitted follows");
  CHECK_EQ_INT(ncalls, 2);
  CHECK(jx_add(o4, jx_device_put(x, "cpu")) == NULL);
  CHECK_ERROR(JX_ERR_DEVICE, "committed to different devices");
  /* committed to different devices */
  jx_array *o5 = NULL;
  CHECK(jx_call(jf, (jx_array *[]){xi, jx_device_put(y, "cpu")}, &o5) == JX_ERR_DEVICE);
  CHECK_ERROR(JX_ERR_DEVICE, "affine: arrays committed to different devices");
  /* a constant closed over on interp, inputs on cpu: copied for the cpu program */
  jx_array *c = jx_device_put(jx_full(2, (int64_t[]){2, 3}, 1.0, JX_FLOAT32), "interp");
  jx_fn *g = jx_fn_new("affine_c", 2, 1, affine, c);
  jx_fn *jg = jx_jit(g);
  jx_array *o6 = NULL;
  CHECK(jx_call(jg, (jx_array *[]){x, y}, &o6) == JX_OK);
  CHECK_STR(jx_device_of(o6), "cpu");
  check_values(o6, want, 6, "jit with a constant from interp");
  jx_fn_free(jg), jx_fn_free(g), jx_fn_free(jf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* JAXC_DEVICE naming no device: the process says so on stderr and runs on the cpu
 * (a child process of this program, which the parent runs with the name set) */
static void test_env_typo(void) {
  char self[4096], cmd[4300], out[1024] = {0};
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return; /* no /proc: not checked */
  self[n] = 0;
  snprintf(cmd, sizeof cmd, "JAXC_DEVICE=cdua JAXC_TEST_ENV_CHILD=1 '%s' 2>&1", self);
  FILE *p = popen(cmd, "r");
  CHECK(p != NULL);
  if (!p) return;
  size_t got = fread(out, 1, sizeof out - 1, p);
  out[got] = 0;
  int rc = pclose(p);
  CHECK_MSG(rc == 0, "child exited %d: %s", rc, out);
  CHECK_MSG(strstr(out, "jaxc: JAXC_DEVICE: unknown device \"cdua\"; using cpu") != NULL, "child said: %s", out);
  CHECK_MSG(strstr(out, "child device cpu") != NULL, "child said: %s", out);
}

int main(void) {
  if (getenv("JAXC_TEST_ENV_CHILD")) { /* test_env_typo's child: the default device's name */
    jx_array *x = jx_array_from((float[]){1}, JX_FLOAT32, 0, NULL);
    printf("child device %s\n", x ? jx_device_of(x) : "?");
    jx_free(x);
    return x ? 0 : 1;
  }
  TEST_RUN(test_env_typo);
  /* the cases name devices themselves (the _interp run of this test repeats them) */
  if (jx_default_device("cpu") != JX_OK) return 1;
  TEST_RUN(test_list);
  TEST_RUN(test_put);
  TEST_RUN(test_committed);
  TEST_RUN(test_jit);
  return test_finish();
}
