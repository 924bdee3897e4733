/* stats.c -- jax.scipy.stats (jx_scipy_stats_*): each function the expression of
 * jax/_src/scipy/stats/<dist>.py, written with the same operations in the same order
 * (rounding follows JAX's), on jax.numpy's functions and jax.scipy.special's. Arguments
 * promote as promote_args_inexact; a NULL loc/scale is JAX's default (a weak Python int). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

#define MAX_ARGS 5
#define REQUIRED NAN /* a parameter without a default */

/* lax._const(x, v): a 0-d constant of x's dtype, weak iff x is a weak scalar. */
static jx_array *K(jx_array *x, double v) { return x ? np_lax_const(x, v) : NULL; }
/* A Python float in a jnp expression: a weak scalar. */
static jx_array *py(double v) { return jx_scalar(v); }
static jx_array *add(jx_array *a, jx_array *b) { return jx_add(a, b); }
static jx_array *sub(jx_array *a, jx_array *b) { return jx_subtract(a, b); }
static jx_array *mul(jx_array *a, jx_array *b) { return jx_multiply(a, b); }
static jx_array *dv(jx_array *a, jx_array *b) { return jx_divide(a, b); }
static jx_array *neg(jx_array *a) { return jx_negative(a); }
static jx_array *or_(jx_array *a, jx_array *b) { return jx_logical_or(a, b); }
static jx_array *where(jx_array *c, jx_array *a, jx_array *b) { return jx_where(c, a, b); }
/* jnp.where(cond, -np.inf, x) */
static jx_array *ninf_where(jx_array *c, jx_array *x) { return where(c, py(-INFINITY), x); }

/* promote_args_inexact(fn, *in) into a[0 .. n): a NULL in[i] is its default dflt[i] (a weak
 * int), or JX_ERR_VALUE when dflt[i] is REQUIRED. */
static bool args(const char *fn, int n, jx_array *const *in, const char *const *names, const double *dflt,
                 jx_array **a) {
  jx_array *full[MAX_ARGS];
  for (int i = 0; i < n; i++) {
    if (!in[i] && isnan(dflt[i])) return !np_null_arg(fn, NULL, names[i]);
    full[i] = in[i] ? in[i] : jx_scalar_int((int64_t)dflt[i]);
  }
  jx_array *p[MAX_ARGS];
  if (!np_prepare(fn, n, full, p)) return false;
  for (int i = 0; i < n; i++) a[i] = np_to_inexact(p[i]);
  for (int i = 0; i < n; i++)
    if (!a[i]) return false;
  return true;
}

typedef jx_array *(*Impl)(jx_array *const *a);

/* Runs impl on the promoted arguments in a scope of its own. */
static jx_array *run(const char *fn, int n, jx_array *const *in, const char *const *names, const double *dflt,
                     Impl impl) {
  jx_scope_begin();
  jx_array *a[MAX_ARGS] = {NULL};
  if (!args(fn, n, in, names, dflt, a)) return np_scope_return(NULL);
  return np_scope_return(impl(a));
}

/* Distributions with (x, loc, scale), (x, shape, loc, scale), ... and their defaults. */
static const char *const N_LS[] = {"x", "loc", "scale"};
static const double D_LS[] = {REQUIRED, 0, 1};
static const char *const N_Q_LS[] = {"q", "loc", "scale"};
#define LS(name, impl)                                                                      \
  jx_array *jx_scipy_stats_##name(jx_array *x, jx_array *loc, jx_array *scale) {                   \
    return run("jx_scipy_stats_" #name, 3, (jx_array *[]){x, loc, scale}, N_LS, D_LS, impl);      \
  }
#define Q_LS(name, impl)                                                                            \
  jx_array *jx_scipy_stats_##name(jx_array *q, jx_array *loc, jx_array *scale) {                   \
    return run("jx_scipy_stats_" #name, 3, (jx_array *[]){q, loc, scale}, N_Q_LS, D_LS, impl);    \
  }
/* (x, p1, loc, scale) with p1 required */
static const double D_1LS[] = {REQUIRED, REQUIRED, 0, 1};
#define P1_LS(name, p1, impl)                                                                       \
  jx_array *jx_scipy_stats_##name(jx_array *x, jx_array *p1, jx_array *loc, jx_array *scale) {     \
    static const char *const names[] = {"x", #p1, "loc", "scale"};                                  \
    return run("jx_scipy_stats_" #name, 4, (jx_array *[]){x, p1, loc, scale}, names, D_1LS, impl); \
  }

/* ------------------------------------------------------------------ norm */

static jx_array *norm_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *loc = a[1], *scale = a[2];
  jx_array *scale_sqrd = jx_square(scale);
  jx_array *log_normalizer = jx_log(mul(K(x, 2 * M_PI), scale_sqrd));
  jx_array *quadratic = dv(jx_square(sub(x, loc)), scale_sqrd);
  return dv(add(log_normalizer, quadratic), K(x, -2));
}
static jx_array *norm_pdf(jx_array *const *a) { return jx_exp(norm_logpdf(a)); }
static jx_array *norm_cdf(jx_array *const *a) { return jx_special_ndtr(dv(sub(a[0], a[1]), a[2])); }
static jx_array *norm_logcdf(jx_array *const *a) { return jx_special_log_ndtr(dv(sub(a[0], a[1]), a[2]), 3); }
static jx_array *norm_sf(jx_array *const *a) { return norm_cdf((jx_array *[]){neg(a[0]), neg(a[1]), a[2]}); }
static jx_array *norm_logsf(jx_array *const *a) { return norm_logcdf((jx_array *[]){neg(a[0]), neg(a[1]), a[2]}); }
LS(norm_logpdf, norm_logpdf)
LS(norm_pdf, norm_pdf)
LS(norm_cdf, norm_cdf)
LS(norm_logcdf, norm_logcdf)
LS(norm_sf, norm_sf)
LS(norm_logsf, norm_logsf)

/* ppf: jnp.asarray(ndtri(q) * scale + loc, float) -- no promote_args in JAX: jnp's
 * promotion, then the default float dtype. */
static jx_array *norm_ppf(const char *fn, jx_array *q, jx_array *loc, jx_array *scale, bool isf) {
  if (np_null_arg(fn, q, "q")) return NULL;
  jx_scope_begin();
  if (isf) q = sub(K(q, 1), q);
  jx_array *r = add(mul(jx_special_ndtri(q), scale ? scale : jx_scalar_int(1)), loc ? loc : jx_scalar_int(0));
  return np_scope_return(r ? np_convert(r, dtype_default_float(), false) : NULL);
}
jx_array *jx_scipy_stats_norm_ppf(jx_array *q, jx_array *loc, jx_array *scale) {
  return norm_ppf("jx_scipy_stats_norm_ppf", q, loc, scale, false);
}
jx_array *jx_scipy_stats_norm_isf(jx_array *q, jx_array *loc, jx_array *scale) {
  return norm_ppf("jx_scipy_stats_norm_isf", q, loc, scale, true);
}

/* --------------------------------------------------------------- uniform */

static jx_array *uniform_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *loc = a[1], *scale = a[2];
  jx_array *log_probs = neg(jx_log(scale));
  return ninf_where(or_(jx_greater(x, add(loc, scale)), jx_less(x, loc)), log_probs);
}
static jx_array *uniform_pdf(jx_array *const *a) { return jx_exp(uniform_logpdf(a)); }
/* jnp.select([x < loc, x > loc + scale, loc <= x <= loc + scale], [0, 1, (x - loc) / scale]) */
static jx_array *uniform_cdf(jx_array *const *a) {
  jx_array *x = a[0], *loc = a[1], *scale = a[2];
  jx_array *zero = np_constant(0, x->dtype), *one = np_constant(1, x->dtype), *hi = add(loc, scale);
  jx_array *inside = jx_logical_and(jx_greater_equal(x, loc), jx_less_equal(x, hi));
  jx_array *r = where(inside, dv(sub(x, loc), scale), jx_zeros_like(x));
  return where(jx_less(x, loc), zero, where(jx_greater(x, hi), one, r));
}
/* jnp.isnan(q) | (q < 0) | (q > 1) */
static jx_array *bad_prob(jx_array *q) {
  return or_(or_(jx_isnan(q), jx_less(q, jx_scalar_int(0))), jx_greater(q, jx_scalar_int(1)));
}
static jx_array *uniform_ppf(jx_array *const *a) {
  return where(bad_prob(a[0]), py(NAN), add(a[1], mul(a[2], a[0])));
}
LS(uniform_logpdf, uniform_logpdf)
LS(uniform_pdf, uniform_pdf)
LS(uniform_cdf, uniform_cdf)
Q_LS(uniform_ppf, uniform_ppf)

/* ----------------------------------------------------------------- expon */

static jx_array *expon_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *loc = a[1], *scale = a[2];
  jx_array *log_probs = neg(add(dv(sub(x, loc), scale), jx_log(scale)));
  return ninf_where(jx_less(x, loc), log_probs);
}
static jx_array *expon_pdf(jx_array *const *a) { return jx_exp(expon_logpdf(a)); }
static jx_array *expon_cdf(jx_array *const *a) {
  jx_array *neg_scaled_x = dv(sub(a[1], a[0]), a[2]);
  return where(jx_less(a[0], a[1]), jx_zeros_like(neg_scaled_x), neg(jx_expm1(neg_scaled_x)));
}
static jx_array *expon_logsf(jx_array *const *a) {
  jx_array *neg_scaled_x = dv(sub(a[1], a[0]), a[2]);
  return where(jx_less(a[0], a[1]), jx_zeros_like(neg_scaled_x), neg_scaled_x);
}
static jx_array *expon_sf(jx_array *const *a) { return jx_exp(expon_logsf(a)); }
static jx_array *expon_logcdf(jx_array *const *a) { return jx_log1p(neg(expon_sf(a))); }
static jx_array *expon_ppf(jx_array *const *a) {
  return where(bad_prob(a[0]), py(NAN), sub(a[1], mul(a[2], jx_log1p(neg(a[0])))));
}
LS(expon_logpdf, expon_logpdf)
LS(expon_pdf, expon_pdf)
LS(expon_cdf, expon_cdf)
LS(expon_logcdf, expon_logcdf)
LS(expon_sf, expon_sf)
LS(expon_logsf, expon_logsf)
Q_LS(expon_ppf, expon_ppf)

/* --------------------------------------------------------------- laplace */

static jx_array *laplace_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *loc = a[1], *scale = a[2];
  jx_array *linear_term = dv(jx_abs(sub(x, loc)), scale);
  return neg(add(linear_term, jx_log(mul(K(x, 2), scale))));
}
static jx_array *laplace_pdf(jx_array *const *a) { return jx_exp(laplace_logpdf(a)); }
static jx_array *laplace_cdf(jx_array *const *a) {
  jx_array *x = a[0], *half = K(x, 0.5);
  jx_array *diff = dv(sub(x, a[1]), a[2]);
  return where(jx_less_equal(diff, K(x, 0)), mul(half, jx_exp(diff)), sub(K(x, 1), mul(half, jx_exp(neg(diff)))));
}
LS(laplace_logpdf, laplace_logpdf)
LS(laplace_pdf, laplace_pdf)
LS(laplace_cdf, laplace_cdf)

/* -------------------------------------------------------------- logistic */

static jx_array *logistic_logpdf(jx_array *const *a) {
  jx_array *x = dv(sub(a[0], a[1]), a[2]);
  jx_array *two = K(x, 2), *half_x = dv(x, two);
  return sub(mul(neg(two), jx_logaddexp(half_x, neg(half_x))), jx_log(a[2]));
}
static jx_array *logistic_pdf(jx_array *const *a) { return jx_exp(logistic_logpdf(a)); }
static jx_array *logistic_cdf(jx_array *const *a) { return jx_special_expit(dv(sub(a[0], a[1]), a[2])); }
static jx_array *logistic_sf(jx_array *const *a) { return jx_special_expit(neg(dv(sub(a[0], a[1]), a[2]))); }
static jx_array *logistic_ppf(jx_array *const *a) { return add(mul(jx_special_logit(a[0]), a[2]), a[1]); }
static jx_array *logistic_isf(jx_array *const *a) { return add(mul(neg(jx_special_logit(a[0])), a[2]), a[1]); }
LS(logistic_logpdf, logistic_logpdf)
LS(logistic_pdf, logistic_pdf)
LS(logistic_cdf, logistic_cdf)
LS(logistic_sf, logistic_sf)
Q_LS(logistic_ppf, logistic_ppf)
Q_LS(logistic_isf, logistic_isf)

/* ---------------------------------------------------------------- cauchy */

static jx_array *cauchy_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *scaled_x = dv(sub(x, a[1]), a[2]);
  jx_array *normalize_term = jx_log(mul(K(x, M_PI), a[2]));
  return neg(add(normalize_term, jx_log1p(mul(scaled_x, scaled_x))));
}
static jx_array *cauchy_pdf(jx_array *const *a) { return jx_exp(cauchy_logpdf(a)); }
static jx_array *cauchy_cdf(jx_array *const *a) {
  jx_array *x = a[0], *scaled_x = dv(sub(x, a[1]), a[2]);
  return add(K(x, 0.5), mul(dv(K(x, 1), K(x, M_PI)), jx_arctan(scaled_x)));
}
static jx_array *cauchy_logcdf(jx_array *const *a) { return jx_log(cauchy_cdf(a)); }
static jx_array *cauchy_sf(jx_array *const *a) { return cauchy_cdf((jx_array *[]){neg(a[0]), neg(a[1]), a[2]}); }
static jx_array *cauchy_logsf(jx_array *const *a) { return cauchy_logcdf((jx_array *[]){neg(a[0]), neg(a[1]), a[2]}); }
static jx_array *cauchy_ppf(jx_array *const *a) {
  jx_array *q = a[0];
  jx_array *unscaled = jx_tan(sub(mul(K(q, M_PI), q), K(q, M_PI / 2)));
  return add(mul(unscaled, a[2]), a[1]);
}
static jx_array *cauchy_isf(jx_array *const *a) {
  jx_array *q = a[0];
  jx_array *unscaled = jx_tan(sub(K(q, M_PI / 2), mul(K(q, M_PI), q)));
  return add(mul(unscaled, a[2]), a[1]);
}
LS(cauchy_logpdf, cauchy_logpdf)
LS(cauchy_pdf, cauchy_pdf)
LS(cauchy_cdf, cauchy_cdf)
LS(cauchy_logcdf, cauchy_logcdf)
LS(cauchy_sf, cauchy_sf)
LS(cauchy_logsf, cauchy_logsf)
Q_LS(cauchy_ppf, cauchy_ppf)
Q_LS(cauchy_isf, cauchy_isf)

/* --------------------------------------------------------------------- t */

static jx_array *t_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *df = a[1], *loc = a[2], *scale = a[3];
  jx_array *two = K(x, 2);
  jx_array *scaled_x = dv(sub(x, loc), scale);
  jx_array *df_over_two = dv(df, two);
  jx_array *df_plus_one_over_two = add(df_over_two, K(x, 0.5));
  jx_array *normalize_term_const = mul(mul(scale, scale), K(x, M_PI));
  jx_array *normalize_term_tmp = dv(jx_log(mul(normalize_term_const, df)), two);
  jx_array *normalize_term =
      sub(add(jx_special_gammaln(df_over_two), normalize_term_tmp), jx_special_gammaln(df_plus_one_over_two));
  jx_array *quadratic = dv(mul(scaled_x, scaled_x), df);
  return neg(add(normalize_term, mul(df_plus_one_over_two, jx_log1p(quadratic))));
}
static jx_array *t_pdf(jx_array *const *a) { return jx_exp(t_logpdf(a)); }
P1_LS(t_logpdf, df, t_logpdf)
P1_LS(t_pdf, df, t_pdf)

/* ----------------------------------------------------------------- gamma */

static jx_array *gamma_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *sh = a[1], *loc = a[2], *scale = a[3];
  jx_array *ok = jx_greater_equal(x, loc), *one = K(x, 1);
  jx_array *y = where(ok, dv(sub(x, loc), scale), one);
  jx_array *log_linear_term = sub(jx_special_xlogy(sub(sh, one), y), y);
  jx_array *shape_terms = add(jx_special_gammaln(sh), jx_log(scale));
  return where(ok, sub(log_linear_term, shape_terms), py(-INFINITY));
}
static jx_array *gamma_pdf(jx_array *const *a) { return jx_exp(gamma_logpdf(a)); }
/* lax.clamp(0, y, inf) */
static jx_array *clamp0(jx_array *y) { return jx_clip(y, K(y, 0), K(y, INFINITY)); }
static jx_array *gamma_cdf(jx_array *const *a) {
  return jx_special_gammainc(a[1], clamp0(dv(sub(a[0], a[2]), a[3])));
}
static jx_array *gamma_logcdf(jx_array *const *a) { return jx_log(gamma_cdf(a)); }
static jx_array *gamma_sf(jx_array *const *a) {
  jx_array *y = dv(sub(a[0], a[2]), a[3]);
  return where(jx_less(y, K(y, 0)), jx_scalar_int(1), jx_special_gammaincc(a[1], y));
}
static jx_array *gamma_logsf(jx_array *const *a) { return jx_log(gamma_sf(a)); }
P1_LS(gamma_logpdf, a, gamma_logpdf)
P1_LS(gamma_pdf, a, gamma_pdf)
P1_LS(gamma_cdf, a, gamma_cdf)
P1_LS(gamma_logcdf, a, gamma_logcdf)
P1_LS(gamma_sf, a, gamma_sf)
P1_LS(gamma_logsf, a, gamma_logsf)

/* ------------------------------------------------------------------ chi2 */

static jx_array *chi2_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *df = a[1], *loc = a[2], *scale = a[3];
  jx_array *one = K(x, 1), *two = K(x, 2);
  jx_array *y = dv(sub(x, loc), scale);
  jx_array *df_on_two = dv(df, two);
  jx_array *kernel = sub(mul(sub(df_on_two, one), jx_log(y)), dv(y, two));
  jx_array *nrml_cnst = neg(add(jx_special_gammaln(df_on_two), dv(mul(jx_log(two), df), two)));
  jx_array *log_probs = add(sub(nrml_cnst, jx_log(scale)), kernel);
  return ninf_where(jx_less(x, loc), log_probs);
}
static jx_array *chi2_pdf(jx_array *const *a) { return jx_exp(chi2_logpdf(a)); }
static jx_array *chi2_y(jx_array *const *a) { return clamp0(dv(sub(a[0], a[2]), mul(a[3], K(a[3], 2)))); }
static jx_array *chi2_cdf(jx_array *const *a) { return jx_special_gammainc(dv(a[1], K(a[3], 2)), chi2_y(a)); }
static jx_array *chi2_sf(jx_array *const *a) { return jx_special_gammaincc(dv(a[1], K(a[3], 2)), chi2_y(a)); }
static jx_array *chi2_logcdf(jx_array *const *a) { return jx_log(chi2_cdf(a)); }
static jx_array *chi2_logsf(jx_array *const *a) { return jx_log(chi2_sf(a)); }
P1_LS(chi2_logpdf, df, chi2_logpdf)
P1_LS(chi2_pdf, df, chi2_pdf)
P1_LS(chi2_cdf, df, chi2_cdf)
P1_LS(chi2_logcdf, df, chi2_logcdf)
P1_LS(chi2_sf, df, chi2_sf)
P1_LS(chi2_logsf, df, chi2_logsf)

/* ------------------------------------------------------------------ beta */

static jx_array *beta_logpdf(jx_array *const *a) {
  jx_array *x = a[0], *pa = a[1], *pb = a[2], *loc = a[3], *scale = a[4];
  jx_array *one = K(x, 1), *zero = K(pa, 0);
  jx_array *shape_term = neg(jx_special_betaln(pa, pb));
  jx_array *y = dv(sub(x, loc), scale);
  jx_array *log_linear_term = add(jx_special_xlogy(sub(pa, one), y), jx_special_xlog1py(sub(pb, one), neg(y)));
  jx_array *log_probs = sub(add(shape_term, log_linear_term), jx_log(scale));
  jx_array *result = ninf_where(or_(jx_greater(x, add(loc, scale)), jx_less(x, loc)), log_probs);
  jx_array *bad = or_(or_(jx_less_equal(pa, zero), jx_less_equal(pb, zero)), jx_less_equal(scale, zero));
  return where(bad, py(NAN), result);
}
static jx_array *beta_pdf(jx_array *const *a) { return jx_exp(beta_logpdf(a)); }
/* cdf: betainc(a, b, clamp(0, (x - loc) / scale, 1)); sf: betainc(b, a, 1 - that) */
static jx_array *beta_y(jx_array *const *a) {
  jx_array *y = dv(sub(a[0], a[3]), a[4]);
  return jx_clip(y, K(y, 0), K(y, 1));
}
static jx_array *beta_cdf(jx_array *const *a) { return jx_special_betainc(a[1], a[2], beta_y(a)); }
static jx_array *beta_logcdf(jx_array *const *a) { return jx_log(beta_cdf(a)); }
static jx_array *beta_sf(jx_array *const *a) {
  jx_array *y = beta_y(a);
  return jx_special_betainc(a[2], a[1], sub(K(y, 1), y));
}
static jx_array *beta_logsf(jx_array *const *a) { return jx_log(beta_sf(a)); }
static const char *const N_BETA[] = {"x", "a", "b", "loc", "scale"};
static const double D_BETA[] = {REQUIRED, REQUIRED, REQUIRED, 0, 1};
#define BETA(name, impl)                                                                                   \
  jx_array *jx_scipy_stats_##name(jx_array *x, jx_array *a, jx_array *b, jx_array *loc, jx_array *scale) { \
    return run("jx_scipy_stats_" #name, 5, (jx_array *[]){x, a, b, loc, scale}, N_BETA, D_BETA, impl);     \
  }
BETA(beta_logpdf, beta_logpdf)
BETA(beta_pdf, beta_pdf)
BETA(beta_cdf, beta_cdf)
BETA(beta_logcdf, beta_logcdf)
BETA(beta_sf, beta_sf)
BETA(beta_logsf, beta_logsf)

/* --------------------------------------------------------------- poisson */

static jx_array *poisson_logpmf(jx_array *const *a) {
  jx_array *k = a[0], *mu = a[1], *zero = K(k, 0);
  jx_array *x = sub(k, a[2]);
  jx_array *log_probs = sub(sub(jx_special_xlogy(x, mu), jx_special_gammaln(add(x, jx_scalar_int(1)))), mu);
  return ninf_where(or_(jx_less(x, zero), jx_not_equal(jx_round(k), k)), log_probs);
}
static jx_array *poisson_pmf(jx_array *const *a) { return jx_exp(poisson_logpmf(a)); }
static jx_array *poisson_cdf(jx_array *const *a) {
  jx_array *k = a[0], *zero = K(k, 0), *x = sub(k, a[2]);
  jx_array *p = jx_special_gammaincc(jx_floor(add(jx_scalar_int(1), x)), a[1]);
  return where(jx_less(x, zero), zero, p);
}
static const char *const N_POIS[] = {"k", "mu", "loc"};
static const double D_POIS[] = {REQUIRED, REQUIRED, 0};
#define POIS(name, impl)                                                                   \
  jx_array *jx_scipy_stats_##name(jx_array *k, jx_array *mu, jx_array *loc) {             \
    return run("jx_scipy_stats_" #name, 3, (jx_array *[]){k, mu, loc}, N_POIS, D_POIS, impl); \
  }
POIS(poisson_logpmf, poisson_logpmf)
POIS(poisson_pmf, poisson_pmf)
POIS(poisson_cdf, poisson_cdf)

/* ------------------------------------------------------------- bernoulli */

static jx_array *bernoulli_logpmf(jx_array *const *a) {
  jx_array *k = a[0], *p = a[1], *zero = K(k, 0), *one = K(k, 1);
  jx_array *x = sub(k, a[2]);
  jx_array *log_probs = add(jx_special_xlogy(x, p), jx_special_xlog1py(sub(one, x), neg(p)));
  return ninf_where(or_(jx_less(x, zero), jx_greater(x, one)), log_probs);
}
static jx_array *bernoulli_pmf(jx_array *const *a) { return jx_exp(bernoulli_logpmf(a)); }
/* isnan(k) | isnan(p) | (p < 0) | (p > 1) */
static jx_array *bernoulli_bad(jx_array *k, jx_array *p, jx_array *zero, jx_array *one) {
  return or_(or_(or_(jx_isnan(k), jx_isnan(p)), jx_less(p, zero)), jx_greater(p, one));
}
/* jnp.select([bad, k < 0, 0 <= k < 1, k >= 1], [nan, 0, 1 - p, 1]) (default 0) */
static jx_array *bernoulli_cdf(jx_array *const *a) {
  jx_array *k = a[0], *p = a[1], *zero = K(k, 0), *one = K(k, 1);
  jx_array *r = where(jx_greater_equal(k, one), one, jx_zeros_like(k));
  r = where(jx_logical_and(jx_greater_equal(k, zero), jx_less(k, one)), sub(one, p), r);
  r = where(jx_less(k, zero), zero, r);
  return where(bernoulli_bad(k, p, zero, one), py(NAN), r);
}
static jx_array *bernoulli_ppf(jx_array *const *a) {
  jx_array *q = a[0], *p = a[1], *zero = K(q, 0), *one = K(q, 1);
  jx_array *bad = or_(or_(bernoulli_bad(q, p, zero, one), jx_less(q, zero)), jx_greater(q, one));
  return where(bad, py(NAN), where(jx_less_equal(q, sub(one, p)), zero, one));
}
static const char *const N_BERN[] = {"k", "p", "loc"};
static const double D_BERN[] = {REQUIRED, REQUIRED, 0};
jx_array *jx_scipy_stats_bernoulli_logpmf(jx_array *k, jx_array *p, jx_array *loc) {
  return run("jx_scipy_stats_bernoulli_logpmf", 3, (jx_array *[]){k, p, loc}, N_BERN, D_BERN, bernoulli_logpmf);
}
jx_array *jx_scipy_stats_bernoulli_pmf(jx_array *k, jx_array *p, jx_array *loc) {
  return run("jx_scipy_stats_bernoulli_pmf", 3, (jx_array *[]){k, p, loc}, N_BERN, D_BERN, bernoulli_pmf);
}
jx_array *jx_scipy_stats_bernoulli_cdf(jx_array *k, jx_array *p) {
  return run("jx_scipy_stats_bernoulli_cdf", 2, (jx_array *[]){k, p}, N_BERN, D_BERN, bernoulli_cdf);
}
jx_array *jx_scipy_stats_bernoulli_ppf(jx_array *q, jx_array *p) {
  static const char *const names[] = {"q", "p"};
  return run("jx_scipy_stats_bernoulli_ppf", 2, (jx_array *[]){q, p}, names, D_BERN, bernoulli_ppf);
}

/* ----------------------------------------------------------------- binom */

static jx_array *binom_logpmf(jx_array *const *a) {
  jx_array *k = a[0], *n = a[1], *p = a[2], *loc = a[3], *one = jx_scalar_int(1);
  jx_array *y = sub(k, loc), *zero = K(y, 0);
  jx_array *comb_term = sub(jx_special_gammaln(add(n, one)),
                            add(jx_special_gammaln(add(y, one)), jx_special_gammaln(add(sub(n, y), one))));
  jx_array *log_linear_term = add(jx_special_xlogy(y, p), jx_special_xlog1py(sub(n, y), neg(p)));
  jx_array *log_probs = add(comb_term, log_linear_term);
  jx_array *y_n_cond = or_(jx_logical_and(jx_equal(y, zero), jx_equal(n, zero)), jx_equal(log_linear_term, zero));
  log_probs = where(y_n_cond, py(0.0), log_probs);
  jx_array *inside = jx_logical_and(jx_greater_equal(k, loc), jx_less(k, add(add(loc, n), one)));
  return where(inside, log_probs, py(-INFINITY));
}
static jx_array *binom_pmf(jx_array *const *a) { return jx_exp(binom_logpmf(a)); }
static const char *const N_BINOM[] = {"k", "n", "p", "loc"};
static const double D_BINOM[] = {REQUIRED, REQUIRED, REQUIRED, 0};
jx_array *jx_scipy_stats_binom_logpmf(jx_array *k, jx_array *n, jx_array *p, jx_array *loc) {
  return run("jx_scipy_stats_binom_logpmf", 4, (jx_array *[]){k, n, p, loc}, N_BINOM, D_BINOM, binom_logpmf);
}
jx_array *jx_scipy_stats_binom_pmf(jx_array *k, jx_array *n, jx_array *p, jx_array *loc) {
  return run("jx_scipy_stats_binom_pmf", 4, (jx_array *[]){k, n, p, loc}, N_BINOM, D_BINOM, binom_pmf);
}

/* ------------------------------------------------------------- dirichlet */

/* promote_dtypes_inexact(x, alpha) (no broadcasting) into p[0], p[1]. */
static bool promote_inexact(const char *fn, int n, jx_array *const *in, jx_array **p) {
  jx_array *q[3];
  if (!np_promote(fn, n, in, q)) return false;
  for (int i = 0; i < n; i++) p[i] = np_to_inexact(q[i]), jx_free(q[i]);
  for (int i = 0; i < n; i++)
    if (!p[i]) return false;
  return true;
}

static jx_array *dirichlet_logpdf(const char *fn, jx_array *x_in, jx_array *alpha_in, bool pdf) {
  if (np_null_arg(fn, x_in, "x") || np_null_arg(fn, alpha_in, "alpha")) return NULL;
  jx_scope_begin();
  jx_array *p[2];
  if (!promote_inexact(fn, 2, (jx_array *[]){x_in, alpha_in}, p)) return np_scope_return(NULL);
  jx_array *x = p[0], *alpha = p[1];
  char b1[64], b2[64];
  if (alpha->ndim != 1) {
    error_set(JX_ERR_SHAPE, "%s: `alpha` must be one-dimensional; got alpha.shape=%s", fn, np_shape_str(b1, alpha));
    return np_scope_return(NULL);
  }
  int64_t na = alpha->shape[0];
  if (x->ndim == 0 || (x->shape[0] != na && x->shape[0] != na - 1)) {
    error_set(JX_ERR_SHAPE, "%s: `x` must have either the same number of entries as `alpha` or one entry fewer; "
              "got x.shape=%s, alpha.shape=%s", fn, np_shape_str(b1, x), np_shape_str(b2, alpha));
    return np_scope_return(NULL);
  }
  jx_array *one = K(x, 1);
  if (x->shape[0] != na) x = jx_concatenate(2, (jx_array *[]){x, sub(one, jx_sum(x, 1, (int[]){0}, true))}, 0);
  jx_array *normalize_term = sub(jx_sum(jx_special_gammaln(alpha), 0, NULL, false),
                                 jx_special_gammaln(jx_sum(alpha, 0, NULL, false)));
  if (x && x->ndim > 1) {
    int64_t s[JX_MAX_NDIM];
    s[0] = na;
    for (int i = 1; i < x->ndim; i++) s[i] = 1;
    alpha = jx_reshape(alpha, x->ndim, s);
  }
  jx_array *log_probs =
      sub(jx_sum(jx_special_xlogy(sub(alpha, one), x), 1, (int[]){0}, false), normalize_term);
  /* _is_simplex: all(x > 0, axis=0) & (abs(sum(x, 0) - 1) < 1e-6) */
  jx_array *x_sum = jx_sum(x, 1, (int[]){0}, false);
  jx_array *simplex = jx_logical_and(jx_all(jx_greater(x, jx_scalar_int(0)), 1, (int[]){0}, false),
                                     jx_less(jx_abs(sub(x_sum, jx_scalar_int(1))), py(1e-6)));
  jx_array *r = ninf_where(jx_logical_not(simplex), log_probs);
  return np_scope_return(pdf ? jx_exp(r) : r);
}
jx_array *jx_scipy_stats_dirichlet_logpdf(jx_array *x, jx_array *alpha) {
  return dirichlet_logpdf("jx_scipy_stats_dirichlet_logpdf", x, alpha, false);
}
jx_array *jx_scipy_stats_dirichlet_pdf(jx_array *x, jx_array *alpha) {
  return dirichlet_logpdf("jx_scipy_stats_dirichlet_pdf", x, alpha, true);
}

/* --------------------------------------------------- multivariate_normal */

static jx_array *mvn_logpdf(const char *fn, jx_array *x_in, jx_array *mean_in, jx_array *cov_in, bool pdf) {
  if (np_null_arg(fn, x_in, "x") || np_null_arg(fn, mean_in, "mean") || np_null_arg(fn, cov_in, "cov"))
    return NULL;
  jx_scope_begin();
  jx_array *p[3];
  if (!promote_inexact(fn, 3, (jx_array *[]){x_in, mean_in, cov_in}, p)) return np_scope_return(NULL);
  jx_array *x = p[0], *mean = p[1], *cov = p[2], *r;
  jx_array *log_2pi = jx_log(py(2 * M_PI)); /* jnp.log(2 * np.pi): a weak float */
  if (mean->ndim == 0) {
    r = sub(dv(mul(py(-0.5), jx_square(sub(x, mean))), cov), mul(py(0.5), add(log_2pi, jx_log(cov))));
    return np_scope_return(pdf ? jx_exp(r) : r);
  }
  int64_t n = mean->shape[mean->ndim - 1];
  jx_array *y = sub(x, mean);
  if (cov->ndim == 0) {
    jx_array *yy = jx_sum(mul(y, y), 1, (int[]){-1}, false);
    r = sub(dv(mul(py(-0.5), yy), cov), mul(py((double)n / 2), add(log_2pi, jx_log(cov))));
    return np_scope_return(pdf ? jx_exp(r) : r);
  }
  if (cov->ndim < 2 || cov->shape[cov->ndim - 1] != n || cov->shape[cov->ndim - 2] != n) {
    char b1[64], b2[64];
    error_set(JX_ERR_SHAPE, "%s: incompatible shapes: mean.shape=%s needs cov of shape (..., %lld, %lld), got %s", fn,
              np_shape_str(b1, mean), (long long)n, (long long)n, np_shape_str(b2, cov));
    return np_scope_return(NULL);
  }
  jx_array *L = jx_lax_linalg_cholesky(cov, true);
  if (!y || !L) return np_scope_return(NULL);
  if (y->ndim == 0 || y->shape[y->ndim - 1] != n) {
    char b1[64], b2[64];
    error_set(JX_ERR_SHAPE, "%s: x - mean of shape %s does not end in the %lld entries of cov %s", fn,
              np_shape_str(b1, y), (long long)n, np_shape_str(b2, cov));
    return np_scope_return(NULL);
  }
  /* jnp.vectorize(triangular_solve, signature='(n,n),(n)->(n)'): broadcast the batch dims */
  int yb = y->ndim - 1, lb = L->ndim - 2, nb = yb > lb ? yb : lb;
  int64_t batch[JX_MAX_NDIM + 2];
  for (int i = 0; i < nb; i++) {
    int64_t dy = i - (nb - yb) >= 0 ? y->shape[i - (nb - yb)] : 1, dl = i - (nb - lb) >= 0 ? L->shape[i - (nb - lb)] : 1;
    if (dy != dl && dy != 1 && dl != 1) {
      char b1[64], b2[64];
      error_set(JX_ERR_SHAPE, "%s: batch dims of x - mean %s and cov %s do not broadcast", fn, np_shape_str(b1, y),
                np_shape_str(b2, cov));
      return np_scope_return(NULL);
    }
    batch[i] = dy == 1 ? dl : dy;
  }
  batch[nb] = n, batch[nb + 1] = n;
  jx_array *Lb = jx_broadcast_to(L, nb + 2, batch);
  batch[nb + 1] = 1;
  jx_array *yb_ = jx_broadcast_to(jx_expand_dims(y, -1), nb + 2, batch);
  jx_array *sol = jx_lax_linalg_triangular_solve(Lb, yb_, true, true, false, false, false);
  jx_array *z = sol ? jx_reshape(sol, nb + 1, batch) : NULL;
  jx_array *zz = jx_sum(mul(z, z), 1, (int[]){-1}, false);
  jx_array *logdet = jx_sum(jx_log(jx_diagonal(L, 0, -1, -2)), 1, (int[]){-1}, false);
  r = sub(sub(mul(py(-0.5), zz), mul(py((double)n / 2), log_2pi)), logdet);
  return np_scope_return(pdf ? jx_exp(r) : r);
}
jx_array *jx_scipy_stats_multivariate_normal_logpdf(jx_array *x, jx_array *mean, jx_array *cov) {
  return mvn_logpdf("jx_scipy_stats_multivariate_normal_logpdf", x, mean, cov, false);
}
jx_array *jx_scipy_stats_multivariate_normal_pdf(jx_array *x, jx_array *mean, jx_array *cov) {
  return mvn_logpdf("jx_scipy_stats_multivariate_normal_pdf", x, mean, cov, true);
}
