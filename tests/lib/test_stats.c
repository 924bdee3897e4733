/* test_stats.c -- jax.scipy.stats (src/lib/stats.c) and jnp.convolve / jnp.correlate /
 * jax.scipy.signal (src/lib/signal.c) against JAX goldens (tools/golden_stats.py ->
 * tests/golden/stats.txt): values over the supports' edges in float32 and float64 (x64
 * cases), default and given loc/scale, broadcasting, integer and complex arguments,
 * every mode and method of the convolutions, gradients (grad_: d sum(f) / d arg,
 * gradsq_: d sum(f^2) / d arg), vmap cases, and JAX's errors. Every case runs eagerly
 * and under jit; then NULL arguments and bad strings, and leaks (TEST_RUN).
 *
 * Tolerances (relative, with an absolute part for sums that cancel): float32 4e-6 (a few
 * ulps: same expressions, libm/libmvec and fused multiply-adds rounding otherwise);
 * 3e-5 where the value goes through an incomplete gamma function (gamma/chi2 cdf/sf,
 * poisson.cdf: XLA's series and continued fractions evaluated in another order) or a
 * float32 Cholesky solve (multivariate_normal); pdf/pmf values are exp of the logs,
 * which turns an absolute error e of the log into a relative one: the log's tolerance
 * times max(1, |log|). Convolutions: sums of products, compared with an absolute part of
 * rtol * max|want| (a sum that cancels to near 0 keeps its absolute error; FFT results
 * differ from JAX's by pocketfft's rounding vs ducc's). float64: 1e-12 (FFT and incomplete
 * gamma 1e-10). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "golden.h"
#include "test.h"

typedef jx_array *(*F2)(jx_array *, jx_array *);
typedef jx_array *(*F3)(jx_array *, jx_array *, jx_array *);
typedef jx_array *(*F4)(jx_array *, jx_array *, jx_array *, jx_array *);
typedef jx_array *(*F5)(jx_array *, jx_array *, jx_array *, jx_array *, jx_array *);
typedef void (*Any)(void);

/* The jax.scipy.stats functions by golden name, with their number of parameters. */
static const struct Stat {
  const char *name;
  int arity;
  Any f;
} STATS[] = {
#define S(n, a) {#n, a, (Any)jx_scipy_stats_##n}
    S(norm_logpdf, 3), S(norm_pdf, 3), S(norm_cdf, 3), S(norm_logcdf, 3), S(norm_sf, 3), S(norm_logsf, 3),
    S(norm_ppf, 3), S(norm_isf, 3), S(uniform_logpdf, 3), S(uniform_pdf, 3), S(uniform_cdf, 3),
    S(uniform_ppf, 3), S(expon_logpdf, 3), S(expon_pdf, 3), S(expon_cdf, 3), S(expon_logcdf, 3),
    S(expon_sf, 3), S(expon_logsf, 3), S(expon_ppf, 3), S(laplace_logpdf, 3), S(laplace_pdf, 3),
    S(laplace_cdf, 3), S(logistic_logpdf, 3), S(logistic_pdf, 3), S(logistic_cdf, 3), S(logistic_sf, 3),
    S(logistic_ppf, 3), S(logistic_isf, 3), S(cauchy_logpdf, 3), S(cauchy_pdf, 3), S(cauchy_cdf, 3),
    S(cauchy_logcdf, 3), S(cauchy_sf, 3), S(cauchy_logsf, 3), S(cauchy_ppf, 3), S(cauchy_isf, 3),
    S(t_logpdf, 4), S(t_pdf, 4), S(gamma_logpdf, 4), S(gamma_pdf, 4), S(gamma_cdf, 4), S(gamma_logcdf, 4),
    S(gamma_sf, 4), S(gamma_logsf, 4), S(chi2_logpdf, 4), S(chi2_pdf, 4), S(chi2_cdf, 4), S(chi2_logcdf, 4),
    S(chi2_sf, 4), S(chi2_logsf, 4), S(beta_logpdf, 5), S(beta_pdf, 5), S(beta_cdf, 5), S(beta_logcdf, 5),
    S(beta_sf, 5), S(beta_logsf, 5), S(poisson_logpmf, 3),
    S(poisson_pmf, 3), S(poisson_cdf, 3), S(bernoulli_logpmf, 3), S(bernoulli_pmf, 3), S(bernoulli_cdf, 2),
    S(bernoulli_ppf, 2), S(binom_logpmf, 4), S(binom_pmf, 4), S(dirichlet_logpdf, 2), S(dirichlet_pdf, 2),
    S(multivariate_normal_logpdf, 3), S(multivariate_normal_pdf, 3),
#undef S
};

/* "a,b" ints into v; returns the count */
static int int_list(const char *s, int *v) {
  int n = 0;
  while (s && *s && n < JX_MAX_NDIM) {
    char *end;
    v[n++] = (int)strtol(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* Calls the function named name on x[0 .. nin) (missing parameters NULL); NULL with the
 * error set, or when name is unknown (then *known = false). */
static jx_array *apply(const GoldenCase *c, const char *name, int nin, jx_array *const *x, bool *known) {
  jx_array *a[5] = {NULL};
  for (int i = 0; i < nin && i < 5; i++) a[i] = x[i];
  const char *mode = golden_param(c, "mode"), *method = golden_param(c, "method");
  *known = true;
  for (size_t k = 0; k < sizeof STATS / sizeof *STATS; k++) {
    const struct Stat *s = &STATS[k];
    if (strcmp(name, s->name)) continue;
    switch (s->arity) {
    case 2: return ((F2)s->f)(a[0], a[1]);
    case 3: return ((F3)s->f)(a[0], a[1], a[2]);
    case 4: return ((F4)s->f)(a[0], a[1], a[2], a[3]);
    default: return ((F5)s->f)(a[0], a[1], a[2], a[3], a[4]);
    }
  }
  if (!strcmp(name, "convolve")) return jx_convolve(a[0], a[1], mode);
  if (!strcmp(name, "correlate")) return jx_correlate(a[0], a[1], mode);
  if (!strcmp(name, "signal_convolve")) return jx_scipy_signal_convolve(a[0], a[1], mode, method);
  if (!strcmp(name, "signal_correlate")) return jx_scipy_signal_correlate(a[0], a[1], mode, method);
  if (!strcmp(name, "convolve2d")) return jx_scipy_signal_convolve2d(a[0], a[1], mode);
  if (!strcmp(name, "correlate2d")) return jx_scipy_signal_correlate2d(a[0], a[1], mode);
  if (!strcmp(name, "fftconvolve")) {
    int axes[JX_MAX_NDIM], n = int_list(golden_param(c, "axes"), axes);
    return jx_scipy_signal_fftconvolve(a[0], a[1], mode, n, golden_param(c, "axes") ? axes : NULL);
  }
  *known = false;
  return NULL;
}

/* The case's function: fn (values), grad_<f>, gradsq_<f>, vmap_<f>, vmap_grad_<f>. */
typedef struct Ctx {
  const GoldenCase *c;
  const char *name; /* the function under the transformation */
  bool square;      /* gradsq_: sum(f^2) */
  int nin;
} Ctx;

static jx_status f_value(void *ctx, jx_array *const *x, jx_array **out) {
  Ctx *k = ctx;
  bool known;
  out[0] = apply(k->c, k->name, k->nin, x, &known);
  return !known ? JX_ERR_VALUE : out[0] ? JX_OK : jx_last_status();
}
static jx_status f_sum(void *ctx, jx_array *const *x, jx_array **out) {
  Ctx *k = ctx;
  bool known;
  jx_array *r = apply(k->c, k->name, k->nin, x, &known);
  out[0] = jx_sum(k->square ? jx_multiply(r, r) : r, 0, NULL, false);
  return !known ? JX_ERR_VALUE : out[0] ? JX_OK : jx_last_status();
}

static jx_fn *make(Ctx *k) {
  const GoldenCase *c = k->c;
  const char *f = c->fn;
  bool vmap = !strncmp(f, "vmap_", 5);
  if (vmap) f += 5;
  k->square = !strncmp(f, "gradsq_", 7);
  bool grad = k->square || !strncmp(f, "grad_", 5);
  k->name = grad ? strchr(f, '_') + 1 : f;
  jx_fn *base = jx_fn_new(k->name, k->nin, 1, grad ? f_sum : f_value, k), *r = base;
  if (grad) {
    int argnum = (int)golden_param_int(c, "argnum", 0);
    r = jx_grad(base, 1, &argnum);
    jx_fn_free(base);
  }
  if (vmap) {
    const char *s = golden_param(c, "in_axes");
    int in_axes[8];
    for (int i = 0; i < k->nin && s; i++) {
      in_axes[i] = *s == 'n' ? JX_NOT_MAPPED : (int)strtol(s, NULL, 10);
      s = strchr(s, ',');
      s = s ? s + 1 : NULL;
    }
    jx_fn *v = jx_vmap(r, in_axes, (int[]){0});
    jx_fn_free(r);
    r = v;
  }
  return r;
}

static bool has(const char *s, const char *part) { return strstr(s, part) != NULL; }

static double rtol_for(const GoldenCase *c, jx_dtype d) {
  const char *f = c->fn;
  bool incgamma = (has(f, "gamma_") || has(f, "chi2_")) && !has(f, "logpdf") && !has(f, "_pdf");
  incgamma |= has(f, "poisson_cdf");
  bool fft = has(f, "fftconvolve") || (golden_param(c, "method") && !strcmp(golden_param(c, "method"), "fft"));
  bool betainc = has(f, "beta_") && !has(f, "pdf");
  if (d == JX_FLOAT64 || d == JX_COMPLEX128) return incgamma || fft || betainc ? 1e-10 : 1e-12;
  if (incgamma) return 3e-5;
  if (has(f, "multivariate_normal")) return 3e-5;
  if (has(f, "beta_") && !has(f, "pdf")) return 2e-5; /* betainc: lgamma's ulps through exp */
  return 4e-6;
}

/* max |want| over the case's first output (for the absolute part of convolutions) */
static double max_abs(const GoldenArray *g) {
  double m = 0;
  int64_t n = g->size * (dtype_is_complex(g->dtype) ? 2 : 1);
  for (int64_t i = 0; i < n; i++)
    if (isfinite(g->f[i]) && fabs(g->f[i]) > m) m = fabs(g->f[i]);
  return m;
}

/* pdf/pmf = exp(log): an absolute error e of the log is a relative one of the value;
 * allow the log's relative tolerance times the log's size (up to 1000). */
static double exp_scale(const GoldenCase *c, const GoldenArray *want) {
  if (!(has(c->fn, "pdf") || has(c->fn, "pmf")) || has(c->fn, "log") || !strncmp(c->fn, "grad", 4)) return 1;
  double m = 1;
  for (int64_t i = 0; i < want->size; i++)
    if (want->f[i] > 0 && isfinite(want->f[i])) m = fmax(m, fmin(1000, fabs(log(want->f[i]))));
  return m;
}

static void test_goldens(void) {
  int n = 0;
  GoldenCase *cases = golden_load("stats.txt", &n);
  CHECK_MSG(cases != NULL, "cannot load stats.txt (run tools/golden_stats.py)");
  int run = 0;
  for (int i = 0; cases && i < n; i++) {
    if (!test_shard_mine()) continue;
    GoldenCase *c = &cases[i];
    jx_config_enable_x64(golden_param_int(c, "x64", 0));
    Ctx k = {.c = c, .nin = c->nin};
    jx_fn *f = make(&k);
    jx_array *in[8] = {NULL};
    for (int j = 0; j < c->nin; j++) in[j] = golden_to_array(&c->in[j]);
    double rtol = 0, atol = 0;
    if (c->err == JX_OK) {
      rtol = rtol_for(c, c->out[0].dtype) * exp_scale(c, &c->out[0]);
      bool conv = has(c->fn, "conv") || has(c->fn, "correlate");
      atol = conv ? rtol * max_abs(&c->out[0]) : rtol * 0.25;
    }
    int modes = golden_param_int(c, "jit", 1) ? 2 : 1; /* jit=0: eager only (see golden_stats.py) */
    for (int mode = 0; mode < modes; mode++) {
      char ctx[200];
      snprintf(ctx, sizeof ctx, "%s (line %d, %s)", c->name, c->line, mode ? "jit" : "eager");
      jx_fn *g = mode ? jx_jit(f) : jx_fn_ref(f);
      jx_array *out[1] = {NULL};
      jx_status s = jx_call(g, in, out);
      if (c->err != JX_OK) {
        CHECK_MSG(s == c->err, "%s: expected %s, got %s (%s)", ctx, jx_status_name(c->err), jx_status_name(s),
                  jx_last_error());
      } else {
        CHECK_MSG(s == JX_OK, "%s: %s", ctx, jx_last_error());
        if (s == JX_OK) golden_compare(ctx, out[0], &c->out[0], rtol, atol);
      }
      jx_clear_error();
      jx_free(out[0]);
      jx_fn_free(g);
    }
    for (int j = 0; j < c->nin; j++) jx_free(in[j]);
    jx_fn_free(f);
    run++;
  }
  jx_config_enable_x64(false);
  golden_free(cases, n);
  printf("%d golden stats/signal cases\n", run);
}

/* NULL arguments, bad strings and shapes, with messages naming the function. */
static void test_bad_inputs(void) {
  jx_scope_begin();
  jx_array *x = jx_ones(1, (int64_t[]){3}, JX_FLOAT32), *m = jx_ones(2, (int64_t[]){2, 2}, JX_FLOAT32);
  CHECK(jx_scipy_stats_norm_logpdf(NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scipy_stats_norm_logpdf: x is NULL");
  CHECK(jx_scipy_stats_gamma_logpdf(x, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scipy_stats_gamma_logpdf: a is NULL");
  CHECK(jx_scipy_stats_beta_pdf(x, x, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scipy_stats_beta_pdf: b is NULL");
  CHECK(jx_scipy_stats_binom_logpmf(x, x, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scipy_stats_binom_logpmf: p is NULL");
  CHECK(jx_scipy_stats_multivariate_normal_logpdf(x, x, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "cov is NULL");
  CHECK(jx_scipy_stats_norm_ppf(NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scipy_stats_norm_ppf: q is NULL");
  CHECK(jx_scipy_stats_dirichlet_logpdf(x, m) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "`alpha` must be one-dimensional");
  CHECK(jx_convolve(NULL, x, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_convolve: a is NULL");
  CHECK(jx_correlate(x, m, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_correlate: only 1-dimensional inputs");
  CHECK(jx_convolve(x, x, "Full") == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "mode must be one of ['full', 'same', 'valid'], got 'Full'");
  CHECK(jx_scipy_signal_convolve(m, m, NULL, "FFT") == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "got method='FFT'");
  CHECK(jx_scipy_signal_correlate(m, NULL, NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scipy_signal_correlate: in2 is NULL");
  CHECK(jx_scipy_signal_convolve2d(x, x, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "only 2-dimensional inputs");
  CHECK(jx_scipy_signal_fftconvolve(m, x, NULL, 0, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "same dimensionality");
  CHECK(jx_scipy_signal_fftconvolve(m, m, NULL, 1, (int[]){2}) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_scipy_signal_fftconvolve");
  CHECK(jx_scipy_signal_fftconvolve(m, m, NULL, 1, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "axes is NULL");
  jx_scope_end(0, NULL);
}

/* The direct and FFT methods agree on a longer signal (a 1-d filter of 200 points). */
static void test_fft_vs_direct(void) {
  jx_scope_begin();
  jx_array *x = jx_sin(jx_arange(0, 200, 1, JX_FLOAT32)), *k = jx_linspace(-1, 1, 17, JX_FLOAT32);
  for (int m = 0; m < 3; m++) {
    const char *mode = (const char *[]){"full", "same", "valid"}[m];
    jx_array *d = jx_scipy_signal_convolve(x, k, mode, "direct"), *f = jx_scipy_signal_convolve(x, k, mode, "fft");
    jx_array *np_ = jx_convolve(x, k, mode);
    CHECK(d && f && np_ && jx_size(d) == jx_size(f) && jx_size(d) == jx_size(np_));
    double *a = test_read_f64(d), *b = test_read_f64(f), *c = test_read_f64(np_);
    for (int64_t i = 0; a && b && c && i < jx_size(d); i++) {
      CHECK_NEAR(a[i], b[i], 2e-5);
      CHECK_NEAR(a[i], c[i], 1e-6);
    }
    free(a), free(b), free(c);
  }
  jx_scope_end(0, NULL);
}

int main(void) {
  TEST_RUN_SPLIT(test_goldens);
  TEST_RUN(test_bad_inputs);
  TEST_RUN(test_fft_vs_direct);
  return test_finish();
}
