/* jaxc/stats.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * Probability distributions: jax.scipy.stats. */
#ifndef JAXC_STATS_H
#define JAXC_STATS_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/stats.h>"
#endif

/* ------------------------------------------------------------ stats */
/* jax.scipy.stats.<dist>.<fn> is jx_scipy_stats_<dist>_<fn> (src/lib/stats.c), each the
 * expression of jax/_src/scipy/stats/<dist>.py written with the same operations in the
 * same order, on jax.scipy.special's functions (jx_special_*: gammaln, betaln, xlogy,
 * xlog1py, ndtr, ndtri, log_ndtr, gammainc, gammaincc, logit, expit).
 *
 * Arguments are arrays in JAX's parameter order; loc and scale (and every other
 * parameter that has a default in JAX) may be NULL, meaning JAX's default (loc 0, scale
 * 1: weakly typed Python ints, so they never change the result dtype). All arguments
 * promote together as JAX's promote_args_inexact (bool/int -> float32, int64 -> float64
 * with x64 on) and broadcast (NumPy rules); the result has the promoted float dtype and
 * the broadcast shape. Out of the support the functions return what JAX's expressions
 * give: -inf for logpdf/logpmf (0 for pdf/pmf), NaN for invalid parameters only where
 * JAX checks them (beta, bernoulli.cdf/ppf, uniform/expon.ppf); elsewhere invalid
 * parameters (scale <= 0, ...) give whatever the formula gives (NaN or +-inf), as in
 * JAX. Every function is differentiable (JAX's gradients: by composition, through the
 * special functions' JVP rules), batchable and jittable.
 * Errors: JX_ERR_VALUE for a required argument that is NULL; JX_ERR_SHAPE for
 * arguments that do not broadcast (and as stated); JX_ERR_DTYPE for complex arguments
 * where JAX's functions reject them (those built on ndtr/ndtri/log_ndtr: float32 or
 * float64 only, as JAX's TypeError). Accuracy: tests/lib/test_stats.c bounds the
 * difference from JAX's results (tests/golden/stats.txt). */

/* norm (the normal distribution). logpdf: -(log(2 pi scale^2) + (x - loc)^2 / scale^2) / 2;
 * cdf ndtr(z), logcdf log_ndtr(z) with z = (x - loc) / scale; sf and logsf the same at
 * -x, -loc; ppf(q) ndtri(q) * scale + loc, isf(q) ppf(1 - q). */
jx_array *jx_scipy_stats_norm_logpdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_norm_pdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_norm_cdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_norm_logcdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_norm_sf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_norm_logsf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_norm_ppf(jx_array *q, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_norm_isf(jx_array *q, jx_array *loc, jx_array *scale);

/* multivariate_normal.logpdf / pdf(x, mean, cov): mean (..., n) and cov (..., n, n) (a
 * positive definite matrix; batch dims broadcast with x's (..., n)): through
 * cov's Cholesky factor L, y = L^-1 (x - mean), -|y|^2 / 2 - n log(2 pi) / 2 -
 * sum(log(diag L)). A 0-d cov is a multiple of the identity; a 0-d mean makes x
 * univariate (-(x - mean)^2 / (2 cov) - (log(2 pi) + log(cov)) / 2). mean and cov are
 * required (JX_ERR_VALUE when NULL); JX_ERR_SHAPE when cov is neither 0-d nor (..., n, n).
 * A cov that is not positive definite gives NaN, as JAX's Cholesky. */
jx_array *jx_scipy_stats_multivariate_normal_logpdf(jx_array *x, jx_array *mean, jx_array *cov);
jx_array *jx_scipy_stats_multivariate_normal_pdf(jx_array *x, jx_array *mean, jx_array *cov);

/* uniform on [loc, loc + scale]: logpdf -log(scale) inside, -inf outside; cdf 0 / (x -
 * loc) / scale / 1; ppf loc + scale q, NaN for q outside [0, 1] or NaN. */
jx_array *jx_scipy_stats_uniform_logpdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_uniform_pdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_uniform_cdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_uniform_ppf(jx_array *q, jx_array *loc, jx_array *scale);

/* expon: logpdf -(x - loc) / scale - log(scale) for x >= loc, -inf below; cdf
 * -expm1((loc - x) / scale); logsf (loc - x) / scale (0 below loc); logcdf log1p(-sf);
 * ppf loc - scale log1p(-q), NaN for q outside [0, 1]. */
jx_array *jx_scipy_stats_expon_logpdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_expon_pdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_expon_cdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_expon_logcdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_expon_sf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_expon_logsf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_expon_ppf(jx_array *q, jx_array *loc, jx_array *scale);

/* laplace: logpdf -(|x - loc| / scale + log(2 scale)); cdf exp(z) / 2 for z <= 0, else
 * 1 - exp(-z) / 2 (JAX has no other laplace functions). */
jx_array *jx_scipy_stats_laplace_logpdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_laplace_pdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_laplace_cdf(jx_array *x, jx_array *loc, jx_array *scale);

/* logistic: logpdf -2 logaddexp(z/2, -z/2) - log(scale); cdf expit(z), sf expit(-z);
 * ppf logit(q) scale + loc, isf -logit(q) scale + loc. */
jx_array *jx_scipy_stats_logistic_logpdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_logistic_pdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_logistic_cdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_logistic_sf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_logistic_ppf(jx_array *q, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_logistic_isf(jx_array *q, jx_array *loc, jx_array *scale);

/* cauchy: logpdf -(log(pi scale) + log1p(z^2)); cdf 1/2 + arctan(z) / pi, logcdf its log;
 * sf and logsf at -x, -loc; ppf tan(pi q - pi/2) scale + loc, isf tan(pi/2 - pi q) scale +
 * loc. */
jx_array *jx_scipy_stats_cauchy_logpdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_cauchy_pdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_cauchy_cdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_cauchy_logcdf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_cauchy_sf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_cauchy_logsf(jx_array *x, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_cauchy_ppf(jx_array *q, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_cauchy_isf(jx_array *q, jx_array *loc, jx_array *scale);

/* t (Student's, df degrees of freedom; df required): logpdf -(lgamma(df/2) +
 * log(pi scale^2 df) / 2 - lgamma(df/2 + 1/2) + (df + 1)/2 log1p(z^2 / df)). JAX has only
 * logpdf and pdf. */
jx_array *jx_scipy_stats_t_logpdf(jx_array *x, jx_array *df, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_t_pdf(jx_array *x, jx_array *df, jx_array *loc, jx_array *scale);

/* gamma (shape a, required): logpdf xlogy(a - 1, y) - y - gammaln(a) - log(scale), y = (x -
 * loc) / scale, -inf below loc; cdf gammainc(a, clamp(y, 0, inf)), logcdf its log; sf
 * gammaincc(a, y) (1 below loc), logsf its log. */
jx_array *jx_scipy_stats_gamma_logpdf(jx_array *x, jx_array *a, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_gamma_pdf(jx_array *x, jx_array *a, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_gamma_cdf(jx_array *x, jx_array *a, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_gamma_logcdf(jx_array *x, jx_array *a, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_gamma_sf(jx_array *x, jx_array *a, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_gamma_logsf(jx_array *x, jx_array *a, jx_array *loc, jx_array *scale);

/* chi2 (df required): logpdf (df/2 - 1) log(y) - y/2 - lgamma(df/2) - df log(2)/2 -
 * log(scale), -inf below loc; cdf gammainc(df/2, clamp(y/2, 0, inf)), sf gammaincc, and
 * their logs. */
jx_array *jx_scipy_stats_chi2_logpdf(jx_array *x, jx_array *df, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_chi2_pdf(jx_array *x, jx_array *df, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_chi2_cdf(jx_array *x, jx_array *df, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_chi2_logcdf(jx_array *x, jx_array *df, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_chi2_sf(jx_array *x, jx_array *df, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_chi2_logsf(jx_array *x, jx_array *df, jx_array *loc, jx_array *scale);

/* beta (a, b required): logpdf xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) -
 * log(scale), -inf outside [loc, loc + scale], NaN where a, b or scale <= 0; cdf
 * betainc(a, b, clamp((x - loc) / scale, 0, 1)) (jx_special_betainc), sf betainc(b, a,
 * 1 - that), logcdf / logsf their logs (JAX's: no NaN for invalid a, b, scale beyond
 * betainc's own). */
jx_array *jx_scipy_stats_beta_logpdf(jx_array *x, jx_array *a, jx_array *b, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_beta_pdf(jx_array *x, jx_array *a, jx_array *b, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_beta_cdf(jx_array *x, jx_array *a, jx_array *b, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_beta_logcdf(jx_array *x, jx_array *a, jx_array *b, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_beta_sf(jx_array *x, jx_array *a, jx_array *b, jx_array *loc, jx_array *scale);
jx_array *jx_scipy_stats_beta_logsf(jx_array *x, jx_array *a, jx_array *b, jx_array *loc, jx_array *scale);

/* poisson (mu required): logpmf xlogy(k - loc, mu) - gammaln(k - loc + 1) - mu, -inf for
 * k < loc or non-integral k; cdf gammaincc(floor(1 + k - loc), mu), 0 below loc. */
jx_array *jx_scipy_stats_poisson_logpmf(jx_array *k, jx_array *mu, jx_array *loc);
jx_array *jx_scipy_stats_poisson_pmf(jx_array *k, jx_array *mu, jx_array *loc);
jx_array *jx_scipy_stats_poisson_cdf(jx_array *k, jx_array *mu, jx_array *loc);

/* bernoulli (p required): logpmf xlogy(k - loc, p) + xlog1py(1 - (k - loc), -p), -inf for
 * k - loc outside [0, 1]; cdf(k, p) and ppf(q, p) (no loc in JAX) NaN for p outside [0,
 * 1] or NaN inputs. */
jx_array *jx_scipy_stats_bernoulli_logpmf(jx_array *k, jx_array *p, jx_array *loc);
jx_array *jx_scipy_stats_bernoulli_pmf(jx_array *k, jx_array *p, jx_array *loc);
jx_array *jx_scipy_stats_bernoulli_cdf(jx_array *k, jx_array *p);
jx_array *jx_scipy_stats_bernoulli_ppf(jx_array *q, jx_array *p);

/* binom (n, p required): logpmf gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1) +
 * xlogy(y, p) + xlog1py(n - y, -p) with y = k - loc (0 where y == n == 0 or where the
 * last two terms sum to 0), -inf outside loc <= k < loc + n + 1. */
jx_array *jx_scipy_stats_binom_logpmf(jx_array *k, jx_array *n, jx_array *p, jx_array *loc);
jx_array *jx_scipy_stats_binom_pmf(jx_array *k, jx_array *n, jx_array *p, jx_array *loc);

/* dirichlet.logpdf / pdf(x, alpha): alpha (K,) 1-d (JX_ERR_SHAPE otherwise), x (K, ...)
 * or (K - 1, ...) (the last coordinate 1 - sum then appended; JX_ERR_SHAPE for other
 * leading sizes): sum_i xlogy(alpha_i - 1, x_i) - (sum gammaln(alpha) -
 * gammaln(sum alpha)), over axis 0; -inf where x is not on the simplex (every x_i > 0
 * and |sum x - 1| < 1e-6). Result shape x.shape[1:]. */
jx_array *jx_scipy_stats_dirichlet_logpdf(jx_array *x, jx_array *alpha);
jx_array *jx_scipy_stats_dirichlet_pdf(jx_array *x, jx_array *alpha);

#endif
