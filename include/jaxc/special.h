/* jaxc/special.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * jax.scipy.special (src/lib/special.c, special_prims.c). */
#ifndef JAXC_SPECIAL_H
#define JAXC_SPECIAL_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/special.h>"
#endif

/* ------------------------------------------------------------ special */
/* jax.scipy.special. Arguments are promoted as JAX's promote_args_inexact (JAX's type
 * promotion; bool and integer arrays become float32, int64 float64: to_inexact_dtype)
 * and broadcast
 * together (NumPy rules); the result has the promoted float dtype and the broadcast
 * shape. Every function is elementwise unless stated, differentiable with JAX's rule
 * (grad, jvp, vmap and jit compose with all of them), and written only in terms of
 * primitives. lgamma, digamma, polygamma, zeta, igamma(c) and the Bessel functions are
 * single special_call equations (make_jaxpr shows them by name) holding XLA's
 * expansion, float16/bfloat16 computed in float32 as XLA does; their JVP rules are
 * jax/_src/lax/special.py's. Errors: JX_ERR_VALUE for NULL arguments, JX_ERR_SHAPE
 * for shapes that do not broadcast; others as stated. Out-of-domain values give NaN
 * (or +-inf) as in JAX, never an error. Accuracy: tests/lib/test_special.c bounds the
 * difference from JAX's results (tests/golden/special.txt). */

/* scipy.special.erf / erfc / erfinv: lax.erf, lax.erfc, lax.erf_inv. */
jx_array *jx_special_erf(jx_array *x);
jx_array *jx_special_erfc(jx_array *x);
jx_array *jx_special_erfinv(jx_array *x);
/* ndtr(x): the standard normal CDF, 0.5 (1 + erf(x / sqrt 2)) near 0 and through erfc
 * in the tails (JAX's _ndtr). ndtr, ndtri and log_ndtr take float32 or float64 x only
 * (JX_ERR_DTYPE otherwise, as JAX's TypeError). */
jx_array *jx_special_ndtr(jx_array *x);
/* ndtri(p): its inverse (Cephes' rational approximations, as JAX's _ndtri); -inf at 0,
 * +inf at 1, NaN outside [0, 1]. */
jx_array *jx_special_ndtri(jx_array *p);
/* log_ndtr(x, series_order): log of ndtr, accurate in both tails (an asymptotic series
 * of series_order terms below -10 in float32, -20 in float64; JAX's default order is 3).
 * JVP: t exp(log_pdf(x) - log_ndtr(x)). Errors: JX_ERR_VALUE for series_order outside
 * [0, 30]. */
jx_array *jx_special_log_ndtr(jx_array *x, int series_order);
/* logit(x) = log(x / (1 - x)), JVP t / (x (1 - x)); expit(x) = 1 / (1 + exp(-x))
 * (jax.nn.sigmoid). */
jx_array *jx_special_logit(jx_array *x);
jx_array *jx_special_expit(jx_array *x);
/* xlogy(x, y) = x log(y), 0 where x == 0 unless y is NaN; xlog1py(x, y) = x log1p(y)
 * likewise. JVPs (JAX's): tx log(y) + ty x / y, and tx log1p(y) + ty x / (1 + y). */
jx_array *jx_special_xlogy(jx_array *x, jx_array *y);
jx_array *jx_special_xlog1py(jx_array *x, jx_array *y);
/* entr(x) = -x log(x) for x > 0, 0 at 0, -inf for x < 0 (JVP -t (log x + 1)). */
jx_array *jx_special_entr(jx_array *x);
/* gammaln(x) = log|Gamma(x)| (lax.lgamma: Lanczos, g = 7, reflection below 1/2; +inf at
 * the poles and +-inf). JVP: t digamma(x). */
jx_array *jx_special_gammaln(jx_array *x);
/* digamma(x) = d/dx log Gamma(x) (lax.digamma; NaN at 0 and the negative integers).
 * JVP: t polygamma(1, x). */
jx_array *jx_special_digamma(jx_array *x);
/* polygamma(n, x): the n-th derivative of digamma, (-1)^(n+1) n! zeta(n + 1, x) for
 * n >= 1 (lax.polygamma); NaN for negative n. n must have an integer dtype
 * (JX_ERR_DTYPE otherwise, as JAX's ValueError). JVP in x: t polygamma(n + 1, x). */
jx_array *jx_special_polygamma(jx_array *n, jx_array *x);
/* zeta(x, q): the Hurwitz zeta function sum_k (k + q)^-x (lax.zeta: Euler-Maclaurin, as
 * Cephes). NaN for x < 1; +inf at x == 1. q == NULL (the Riemann zeta function) is
 * JX_ERR_UNSUPPORTED, as in JAX. JVP (both arguments): JAX's, the derivative of the
 * series expansion of Johansson (2015), formula (5). */
jx_array *jx_special_zeta(jx_array *x, jx_array *q);
/* betaln(a, b) = log|B(a, b)| (JAX's, from scipy's cdflib: lgamma sums for max(a, b) < 8,
 * else lgamma(min) + algdiv). */
jx_array *jx_special_betaln(jx_array *a, jx_array *b);
/* gammainc(a, x) = P(a, x), gammaincc(a, x) = Q(a, x) = 1 - P: the regularized
 * incomplete gamma functions (lax.igamma / igammac: power series or continued fraction,
 * each unrolled 64 steps in float32 and 128 in float64 where JAX loops until converged,
 * so a lane whose a exceeds about 100 (float32) may be less accurate than JAX's). NaN
 * for a < 0, x < 0 or a == x == 0. JVP: t_x exp(-x + (a - 1) log x - lgamma(a)) and t_a
 * igamma_grad_a(a, x) (negated for gammaincc); the second derivative in a is
 * JX_ERR_UNSUPPORTED, as in JAX. */
jx_array *jx_special_gammainc(jx_array *a, jx_array *x);
jx_array *jx_special_gammaincc(jx_array *a, jx_array *x);
/* scipy.special.betainc(a, b, x): the regularized incomplete beta function I_x(a, b) =
 * B(x; a, b) / B(a, b) (lax.betainc, one special_call equation "regularized_incomplete_beta").
 * JAX's algorithm (jax/_src/lax/special.py, from XLA's math.cc): the continued fraction
 * of DLMF 8.17.22 by the modified Lentz method, on I_{1-x}(b, a) when x >= (a + 1) /
 * (a + b + 2) (DLMF 8.17.4), one while loop over the whole array until every element's
 * step ratio is within eps / 2 of 1 (at most 200 steps in float32, 600 in float64).
 * 0 at x == 0 (a > 0), 1 at x == 1 (b > 0); a == 0 or b == inf gives 1 for x > 0, b == 0
 * or a == inf gives 0 for x < 1; NaN for a < 0, b < 0, x outside [0, 1], a and b both
 * "zero" in that sense, or a NaN. float16/bfloat16 computed in float32. JVP in x:
 * x^(a-1) (1-x)^(b-1) / B(a, b); in a or b JX_ERR_VALUE, as JAX's ValueError. */
jx_array *jx_special_betainc(jx_array *a, jx_array *b, jx_array *x);
/* i0e(x) = exp(-|x|) I0(x), i1e(x) = exp(-|x|) I1(x): exponentially scaled modified
 * Bessel functions of the first kind (lax.bessel_i0e / i1e: Cephes' Chebyshev series).
 * JVPs: t (i1e(x) - sign(x) i0e(x)) and t (i0e(x) - i1e(x) (sign(x) + 1/x)), 1/2 at 0. */
jx_array *jx_special_i0e(jx_array *x);
jx_array *jx_special_i1e(jx_array *x);
/* logsumexp(a, axis, b, keepdims, return_sign, where): log(sum(b * exp(a))) over
 * (naxes, axes) (NULL = all), stable. sign == NULL: return_sign=False (a negative sum
 * gives NaN; as jx_nn_logsumexp). sign != NULL: return_sign=True -- returns
 * log|sum| and stores sign(sum) (-1, 0 or 1, same shape) in *sign (a new reference).
 * b (NULL = none) broadcasts with a; where (NULL = none) masks terms out. */
jx_array *jx_special_logsumexp(jx_array *a, int naxes, const int *axes, jx_array *b, bool keepdims,
                               jx_array *where, jx_array **sign);
/* softmax(x, axis): jax.nn.softmax over (naxes, axes) (NULL = all; scipy's default). */
jx_array *jx_special_softmax(jx_array *x, int naxes, const int *axes);

#endif
