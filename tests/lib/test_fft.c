/* test_fft.c -- jax.numpy.fft (src/lib/fft.c): JAX goldens (tools/golden_fft.py) for the
 * sample frequencies and shifts, on each backend. */
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

/* Comma-separated ints of param key ("none" or absent: returns -1). */
static int iparams(const GoldenCase *c, const char *key, int *v) {
  const char *p = golden_param(c, key);
  if (!p || !strcmp(p, "none")) return -1;
  int n = 0;
  while (*p && n < JX_MAX_NDIM) {
    char *end;
    v[n++] = (int)strtol(p, &end, 10);
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

static jx_dtype dparam(const GoldenCase *c) {
  jx_dtype d = JX_FLOAT32;
  bool weak;
  const char *s = golden_param(c, "dtype");
  if (s) golden_parse_dtype(s, &d, &weak);
  return d;
}

/* Runs the function a case names; returns its result count (0: failed, -1: not a
 * function of this test). */
static int call_case(const GoldenCase *c, jx_array *const *in, jx_array **out) {
  const char *fn = c->fn;
  int axes[JX_MAX_NDIM], na = iparams(c, "axes", axes);
  if (!strcmp(fn, "fftfreq") || !strcmp(fn, "rfftfreq")) {
    int64_t n = golden_param_int(c, "n", 0);
    double d = atof(golden_param(c, "d"));
    out[0] = fn[0] == 'f' ? jx_fft_fftfreq(n, d, dparam(c)) : jx_fft_rfftfreq(n, d, dparam(c));
    return out[0] ? 1 : 0;
  }
  if (!strcmp(fn, "fftshift")) return (out[0] = jx_fft_fftshift(in[0], na < 0 ? 0 : na, na < 0 ? NULL : axes)) ? 1 : 0;
  if (!strcmp(fn, "ifftshift")) return (out[0] = jx_fft_ifftshift(in[0], na < 0 ? 0 : na, na < 0 ? NULL : axes)) ? 1 : 0;
  return -1;
}

static void test_golden(void) {
  CHECK(cases != NULL);
  int ran = 0;
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    if (golden_param(c, "cin") || golden_param(c, "cout")) continue; /* complex: later */
    bool x64 = golden_param_int(c, "x64", 0);
    jx_config_enable_x64(x64);
    jx_scope_begin();
    jx_array *in[4] = {NULL}, *out[4] = {NULL};
    for (int k = 0; k < c->nin; k++) in[k] = golden_to_array(&c->in[k]);
    int n = call_case(c, in, out);
    if (n < 0) {
      jx_scope_end(0, NULL);
      jx_config_enable_x64(false);
      continue;
    }
    ran++;
    if (c->err != JX_OK) {
      CHECK_MSG(n == 0 && jx_last_status() == c->err, "%s: expected status %d, got %d (%s)", c->name, (int)c->err,
                (int)jx_last_status(), jx_last_error());
      jx_clear_error();
    } else {
      CHECK_MSG(n == c->nout, "%s: %d results (%s)", c->name, n, jx_last_error());
      for (int k = 0; k < n && k < c->nout; k++) golden_compare(c->name, out[k], &c->out[k], 1e-6, 1e-6);
      jx_clear_error();
    }
    jx_scope_end(0, NULL);
    jx_config_enable_x64(false);
  }
  CHECK(ran > 50);
}

int main(void) {
  cases = golden_load("fft.txt", &ncases);
  TEST_RUN(test_golden);
  golden_free(cases, ncases);
  return test_finish();
}
