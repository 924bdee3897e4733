/* test_fft.c -- jax.numpy.fft and lax.fft (src/lib/fft.c on the fft primitive): JAX
 * goldens (tools/golden_fft.py) for every function and norm mode, 0-size inputs and
 * errors, eager and under jit; float64 gradients (grad, jvp) and vmap against JAX;
 * round trips and Parseval's identity; make_jaxpr text. */
#include <math.h>
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

static int64_t nparam(const GoldenCase *c) {
  const char *p = golden_param(c, "n");
  return !p || !strcmp(p, "none") ? JX_FFT_N_NONE : atoll(p);
}

static const char *normparam(const GoldenCase *c) {
  const char *p = golden_param(c, "norm");
  return !p || !strcmp(p, "none") ? NULL : p;
}

typedef jx_array *(*Fft1)(jx_array *, int64_t, int, const char *);
typedef jx_array *(*FftN)(jx_array *, int, const int64_t *, int, const int *, const char *);
static const struct { const char *name; Fft1 f; } ones[] = {
    {"fft", jx_fft_fft}, {"ifft", jx_fft_ifft}, {"rfft", jx_fft_rfft},
    {"irfft", jx_fft_irfft}, {"hfft", jx_fft_hfft}, {"ihfft", jx_fft_ihfft}};
static const struct { const char *name; FftN f; } manys[] = {
    {"fft2", jx_fft_fft2}, {"ifft2", jx_fft_ifft2}, {"rfft2", jx_fft_rfft2}, {"irfft2", jx_fft_irfft2},
    {"fftn", jx_fft_fftn}, {"ifftn", jx_fft_ifftn}, {"rfftn", jx_fft_rfftn}, {"irfftn", jx_fft_irfftn}};

/* The functions tools/golden_fft.py differentiates and batches (grad_cases). */
static jx_array *named_f(const char *f, jx_array *x) {
  if (!strcmp(f, "fft")) return jx_fft_fft(x, 8, -1, "ortho");
  if (!strcmp(f, "ifft")) return jx_fft_ifft(x, 6, -1, NULL);
  if (!strcmp(f, "rfft")) return jx_fft_rfft(x, 10, -1, NULL);
  if (!strcmp(f, "irfft")) return jx_fft_irfft(x, 7, -1, NULL);
  if (!strcmp(f, "hfft")) return jx_fft_hfft(x, 6, -1, "forward");
  if (!strcmp(f, "ihfft")) return jx_fft_ihfft(x, JX_FFT_N_NONE, -1, NULL);
  if (!strcmp(f, "fft2")) return jx_fft_fft2(x, 2, (int64_t[]){2, 5}, 0, NULL, NULL);
  if (!strcmp(f, "irfft2")) return jx_fft_irfft2(x, 2, (int64_t[]){3, 8}, 0, NULL, NULL);
  if (!strcmp(f, "rfftn")) return jx_fft_rfftn(x, 0, NULL, 2, (int[]){0, 1}, "ortho");
  if (!strcmp(f, "irfft_even")) return jx_fft_irfft(x, 8, -1, NULL);
  if (!strcmp(f, "rfft_odd")) return jx_fft_rfft(x, 7, -1, "forward");
  return NULL;
}

static jx_status f_impl(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = named_f(ctx, in[0]);
  return out[0] ? JX_OK : jx_last_status();
}

/* sum(real(y) * w1 + imag(y) * w2) over y = f(x) (w cut to y's shape); real y: sum(y * w1). */
static jx_status loss_impl(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *y = named_f(ctx, in[0]);
  if (!y) return jx_last_status();
  int64_t start[JX_MAX_NDIM] = {0};
  jx_array *w1 = jx_slice(in[1], jx_ndim(y), start, jx_shape(y), NULL);
  jx_array *w2 = jx_slice(in[2], jx_ndim(y), start, jx_shape(y), NULL);
  bool cpx = jx_dtype_of(y) == JX_COMPLEX64 || jx_dtype_of(y) == JX_COMPLEX128;
  jx_array *l = cpx ? jx_add(jx_sum(jx_mul(jx_real(y), w1), 0, NULL, false), jx_sum(jx_mul(jx_imag(y), w2), 0, NULL, false))
                    : jx_sum(jx_mul(y, w1), 0, NULL, false);
  out[0] = l;
  return l ? JX_OK : jx_last_status();
}

/* Runs the function a case names; returns its result count (0: failed, -1: not a
 * function of this test). */
static int call_case(const GoldenCase *c, jx_array *const *in, jx_array **out) {
  const char *fn = c->fn;
  int axes[JX_MAX_NDIM], na = iparams(c, "axes", axes);
  for (size_t k = 0; k < sizeof ones / sizeof ones[0]; k++)
    if (!strcmp(fn, ones[k].name))
      return (out[0] = ones[k].f(in[0], nparam(c), (int)golden_param_int(c, "axis", -1), normparam(c))) ? 1 : 0;
  for (size_t k = 0; k < sizeof manys / sizeof manys[0]; k++)
    if (!strcmp(fn, manys[k].name)) {
      int sv[JX_MAX_NDIM], ns = iparams(c, "s", sv);
      int64_t s64[JX_MAX_NDIM];
      for (int i = 0; i < ns; i++) s64[i] = sv[i];
      return (out[0] = manys[k].f(in[0], ns < 0 ? 0 : ns, ns < 0 ? NULL : s64, na < 0 ? 0 : na, na < 0 ? NULL : axes,
                                  normparam(c))) ? 1 : 0;
    }
  if (!strcmp(fn, "lax_fft")) {
    static const char *const types[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    int t = 0, lv[JX_MAX_NDIM], nl = iparams(c, "lens", lv);
    while (t < 4 && strcmp(types[t], golden_param(c, "type"))) t++;
    int64_t l64[JX_MAX_NDIM];
    for (int i = 0; i < nl; i++) l64[i] = lv[i];
    return (out[0] = jx_lax_fft(in[0], (jx_fft_type)t, nl, l64)) ? 1 : 0;
  }
  if (!strcmp(fn, "grad") || !strcmp(fn, "vmap") || !strcmp(fn, "jvp")) {
    char *f = (char *)golden_param(c, "f");
    jx_fn *g = jx_fn_new(f, fn[0] == 'g' ? 3 : 1, 1, fn[0] == 'g' ? loss_impl : f_impl, f), *h;
    int n = 0;
    if (fn[0] == 'g') {
      h = jx_grad(g, 1, (int[]){0});
      n = h && jx_call(h, in, out) == JX_OK ? 1 : 0;
    } else if (fn[0] == 'v') {
      h = jx_vmap(g, (int[]){1}, (int[]){0});
      n = h && jx_call(h, in, out) == JX_OK ? 1 : 0;
    } else {
      h = NULL;
      n = jx_jvp(g, &in[0], &in[1], &out[0], &out[1]) == JX_OK ? 2 : 0;
    }
    jx_fn_free(h), jx_fn_free(g);
    return n;
  }
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

/* True when index i is listed in param key (comma separated). */
static bool listed(const GoldenCase *c, const char *key, int i) {
  int v[JX_MAX_NDIM], n = iparams(c, key, v);
  for (int k = 0; k < n; k++)
    if (v[k] == i) return true;
  return false;
}

/* The case's inputs: complex ones (param cin) from their real and imaginary lines. */
static int case_inputs(const GoldenCase *c, jx_array **in) {
  int n = 0;
  for (int k = 0; k < c->nin; n++) {
    if (listed(c, "cin", n)) {
      in[n] = jx_complex(golden_to_array(&c->in[k]), golden_to_array(&c->in[k + 1]));
      k += 2;
    } else {
      in[n] = golden_to_array(&c->in[k]);
      k += 1;
    }
  }
  return n;
}

/* Compares results with the case's outputs (complex ones part by part). */
static void compare_outputs(const char *what, const GoldenCase *c, int n, jx_array **out, double tol) {
  int line = 0;
  for (int k = 0; k < n; k++) {
    if (line >= c->nout) {
      test_fail(__FILE__, __LINE__, "%s: more results than the golden has", what);
      return;
    }
    if (listed(c, "cout", k)) {
      CHECK_MSG(out[k] && (jx_dtype_of(out[k]) == JX_COMPLEX64 || jx_dtype_of(out[k]) == JX_COMPLEX128),
                "%s: result %d should be complex (got %s)", what, k, out[k] ? jx_dtype_name(jx_dtype_of(out[k])) : "NULL");
      golden_compare(what, jx_real(out[k]), &c->out[line], tol, tol);
      golden_compare(what, jx_imag(out[k]), &c->out[line + 1], tol, tol);
      line += 2;
    } else {
      golden_compare(what, out[k], &c->out[line], tol, tol);
      line += 1;
    }
  }
  CHECK_MSG(line == c->nout, "%s: %d golden outputs, %d compared", what, c->nout, line);
}

static jx_status case_impl(void *ctx, jx_array *const *in, jx_array **out) {
  return call_case(ctx, in, out) > 0 ? JX_OK : (jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL);
}

static void test_golden(void) {
  CHECK(cases != NULL);
  int ran = 0;
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    bool x64 = golden_param_int(c, "x64", 0);
    double tol = x64 ? 1e-9 : 2e-5;
    jx_config_enable_x64(x64);
    jx_scope_begin();
    jx_array *in[4] = {NULL}, *out[4] = {NULL};
    int nin = case_inputs(c, in);
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
      CHECK_MSG(n > 0, "%s: failed (%s)", c->name, jx_last_error());
      if (n > 0) compare_outputs(c->name, c, n, out, tol);
      jx_clear_error();
      /* the same under jit (one routine step); grad/vmap/jvp jit their own way */
      bool plain = strcmp(c->fn, "grad") && strcmp(c->fn, "vmap") && strcmp(c->fn, "jvp") && nin > 0;
      if (plain && n == 1) {
        jx_fn *f = jx_fn_new(c->name, nin, 1, case_impl, (void *)c), *j = jx_jit(f);
        jx_array *jo[1] = {NULL};
        char what[160];
        snprintf(what, sizeof what, "%s (jit)", c->name);
        CHECK_MSG(jx_call(j, in, jo) == JX_OK, "%s: %s", what, jx_last_error());
        if (jo[0]) compare_outputs(what, c, 1, jo, tol);
        jx_clear_error();
        jx_fn_free(j), jx_fn_free(f);
      }
    }
    jx_scope_end(0, NULL);
    jx_config_enable_x64(false);
  }
  CHECK(ran > 300);
}

/* ifft(fft(x)) == x, irfft(rfft(x), n) == x for even and odd n, and Parseval:
 * sum |x|^2 == sum |fft(x)|^2 / n (prime, power of two, mixed radix). */
static void test_identities(void) {
  jx_config_enable_x64(true);
  int64_t lens[] = {1, 2, 7, 64, 97, 360};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    jx_scope_begin();
    int64_t n = lens[i], shape[2] = {3, n};
    jx_array *key = jx_random_key(42 + (int)i);
    jx_array *re = jx_random_normal(key, 2, shape, JX_FLOAT64), *im = jx_random_uniform(key, 2, shape, JX_FLOAT64, -1, 1);
    jx_array *x = jx_complex(re, im);
    jx_array *back = jx_fft_ifft(jx_fft_fft(x, JX_FFT_N_NONE, -1, NULL), JX_FFT_N_NONE, -1, NULL);
    double err = jx_item(jx_max(jx_abs(jx_sub(back, x)), 0, NULL, false));
    CHECK_MSG(err < 1e-12, "ifft(fft(x)) n=%lld: error %g", (long long)n, err);
    jx_array *rb = jx_fft_irfft(jx_fft_rfft(re, JX_FFT_N_NONE, -1, "ortho"), n, -1, "ortho");
    err = jx_item(jx_max(jx_abs(jx_sub(rb, re)), 0, NULL, false));
    CHECK_MSG(err < 1e-12, "irfft(rfft(x)) n=%lld: error %g", (long long)n, err);
    double e_x = jx_item(jx_sum(jx_square(jx_abs(x)), 0, NULL, false));
    double e_y = jx_item(jx_sum(jx_square(jx_abs(jx_fft_fft(x, JX_FFT_N_NONE, -1, "ortho"))), 0, NULL, false));
    CHECK_MSG(fabs(e_x - e_y) <= 1e-12 * e_x, "Parseval n=%lld: %.17g vs %.17g", (long long)n, e_x, e_y);
    jx_scope_end(0, NULL);
  }
  jx_config_enable_x64(false);
}

static jx_status fft2_impl(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_fft_rfft2(in[0], 0, NULL, 0, NULL, "ortho");
  return out[0] ? JX_OK : jx_last_status();
}

static void test_jaxpr(void) {
  jx_fn *f = jx_fn_new("f", 1, 1, fft2_impl, NULL);
  jx_array *x = jx_zeros(2, (int64_t[]){3, 4}, JX_FLOAT32);
  char *text = jx_make_jaxpr(f, &x);
  CHECK_MSG(text && strstr(text, "fft[fft_lengths=(3, 4) fft_type=2]"), "jaxpr: %s", text ? text : jx_last_error());
  free(text);
  jx_free(x);
  jx_fn_free(f);
}

static void check_shape(jx_array *r, int64_t d0, int64_t d1, jx_dtype dt, const char *what) {
  CHECK_MSG(r && jx_ndim(r) == 2 && jx_shape(r)[0] == d0 && jx_shape(r)[1] == d1 && jx_dtype_of(r) == dt,
            "%s: %s", what, r ? "wrong shape or dtype" : jx_last_error());
}

/* Transforms over empty axes, as jax 0.10.2 (x64 on): the complex ones and the inverse
 * real ones give empty results (irfft of 0 bins: (3, 0)); a real forward transform of 0
 * points has no n//2+1 bins -- JAX fails to lower it, NumPy raises "Invalid number of FFT
 * data points (0)" -- an error here (it gave one uninitialized bin). */
static void test_empty(void) {
  jx_config_enable_x64(true);
  jx_scope_begin();
  jx_array *r30 = jx_zeros(2, (int64_t[]){3, 0}, JX_FLOAT64), *c30 = jx_zeros(2, (int64_t[]){3, 0}, JX_COMPLEX128);
  jx_array *r04 = jx_zeros(2, (int64_t[]){0, 4}, JX_FLOAT64), *c04 = jx_zeros(2, (int64_t[]){0, 4}, JX_COMPLEX128);
  check_shape(jx_fft_fft(r30, JX_FFT_N_NONE, -1, NULL), 3, 0, JX_COMPLEX128, "fft (3, 0)");
  check_shape(jx_fft_ifft(r30, JX_FFT_N_NONE, -1, NULL), 3, 0, JX_COMPLEX128, "ifft (3, 0)");
  check_shape(jx_fft_irfft(c30, JX_FFT_N_NONE, -1, NULL), 3, 0, JX_FLOAT64, "irfft (3, 0)");
  check_shape(jx_fft_irfftn(c30, 0, NULL, 0, NULL, NULL), 3, 0, JX_FLOAT64, "irfftn (3, 0)");
  check_shape(jx_fft_hfft(c30, JX_FFT_N_NONE, -1, NULL), 3, 0, JX_FLOAT64, "hfft (3, 0)");
  check_shape(jx_fft_irfft(jx_zeros(2, (int64_t[]){3, 1}, JX_COMPLEX128), JX_FFT_N_NONE, -1, NULL), 3, 0,
              JX_FLOAT64, "irfft (3, 1)");
  check_shape(jx_fft_fft(r04, JX_FFT_N_NONE, -1, NULL), 0, 4, JX_COMPLEX128, "fft (0, 4)");
  check_shape(jx_fft_rfft(r04, JX_FFT_N_NONE, -1, NULL), 0, 3, JX_COMPLEX128, "rfft (0, 4)");
  check_shape(jx_fft_irfft(c04, JX_FFT_N_NONE, -1, NULL), 0, 6, JX_FLOAT64, "irfft (0, 4)");
  CHECK(jx_fft_rfft(r30, JX_FFT_N_NONE, -1, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_fft_rfft: invalid number of FFT data points (0) along axis 1");
  CHECK(jx_fft_rfftn(jx_zeros(2, (int64_t[]){2, 0}, JX_FLOAT64), 0, NULL, 0, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_fft_rfftn: invalid number of FFT data points (0) along axis 1");
  CHECK(jx_fft_ihfft(r30, JX_FFT_N_NONE, 1, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_fft_ihfft: invalid number of FFT data points (0)");
  CHECK(jx_lax_fft(r30, JX_FFT_RFFT, 1, (int64_t[]){0}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "fft: RFFT needs a positive last fft_length");
  jx_scope_end(0, NULL);
  jx_config_enable_x64(false);
}

int main(void) {
  cases = golden_load("fft.txt", &ncases);
  TEST_RUN(test_golden);
  TEST_RUN(test_identities);
  TEST_RUN(test_jaxpr);
  TEST_RUN(test_empty);
  golden_free(cases, ncases);
  return test_finish();
}
