/* jaxc/random.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * jax.random (threefry2x32, bit-identical to JAX). */
#ifndef JAXC_RANDOM_H
#define JAXC_RANDOM_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/random.h>"
#endif

/* --------------------------------------------------------------- random */
/* jax.random with JAX's default PRNG (threefry2x32, jax_threefry_partitionable on, as
 * in current JAX): same key, same shape, same dtype give the same bits as JAX. Keys are
 * JAX's raw (legacy) keys: uint32 arrays of shape (2,), as jax.random.PRNGKey returns.
 * To draw with a batch of keys, map over them with jx_vmap (jx_random_split,
 * jx_random_fold_in and jx_random_bits also take a batch (..., 2) directly). Every
 * function is built from primitives: it works under jx_jit and jx_vmap.
 * Common errors: a NULL key or argument is JX_ERR_VALUE; a key that is not uint32 is
 * JX_ERR_DTYPE and one not of shape (2,) JX_ERR_SHAPE; shapes as for jx_zeros (ndim in
 * [0, JX_MAX_NDIM], dims >= 0; shape may be NULL when ndim is 0); a dtype of the wrong
 * kind is JX_ERR_DTYPE. dtype is canonicalized first (x64 off: float64 -> float32,
 * int64 -> int32, uint64 -> uint32), exactly as JAX does: JX_FLOAT64 is JAX's default
 * dtype=float (float32 unless x64 is on). Messages name the function.
 * Accuracy against JAX on the CPU (tests/lib/test_random.c): keys, bits, uniform (float64 too),
 * randint, bernoulli, categorical, permutation, choice and, in float32/bfloat16/float16,
 * normal, gumbel, exponential, laplace, logistic and truncated_normal are bit for bit
 * (jaxc repeats XLA's float32 log/log1p and fused multiply-adds); cauchy is within 4
 * ulp (tan: libmvec's tanf where the cpu's kernel vectorizes, docs/api.md), float64 samplers within a few float64 ulps, multivariate_normal within a
 * few float32 ulps (LAPACK's Cholesky orders its sums differently).
 * uniform, bernoulli, randint, normal, gumbel, exponential, laplace, logistic, cauchy,
 * truncated_normal, categorical, permutation, choice, multivariate_normal, gamma,
 * loggamma, beta, dirichlet, t, chisquare, poisson, binomial, weibull_min, rayleigh,
 * maxwell, pareto, wald, geometric, generalized_normal and ball jit themselves, as
 * JAX's do: with a concrete key and operands the jitted sampler is kept for its
 * (sampler, shape, dtype, bounds, operands' shapes and dtypes, axis, flags) --
 * a bounded LRU cache, thread-safe, whose arrays jx_live_arrays does not count, emptied
 * by jx_clear_caches -- so a repeated call costs one program run; with a tracer key or
 * operand (inside the user's jit, vmap, grad) the sampler is inlined. */

/* jax.random.PRNGKey(seed): [seed >> 32, seed & 0xFFFFFFFF]. With x64 off JAX first
 * converts the seed to int32, so the key is [0, seed mod 2^32]. */
jx_array *jx_random_key(uint64_t seed);
/* jax.random.split(key, num): num new keys, shape (num, 2) (key batch (..., 2):
 * (..., num, 2)). num < 0: JX_ERR_SHAPE. */
jx_array *jx_random_split(jx_array *key, int64_t num);
/* jax.random.fold_in(key, data): a new key (same shape as key) mixing in data. */
jx_array *jx_random_fold_in(jx_array *key, uint32_t data);
/* jax.random.PRNGKey(seed) for a seed array (JAX's _threefry_seed): seed is a 0-d
 * integer array of any integer dtype, possibly traced, so jx_jit and jx_vmap over it
 * work (vmap over seeds (n,) gives keys (n, 2)). Key [seed >> 32 (logical; 0 for
 * dtypes of 32 bits or fewer), seed converted to uint32 (sign-extended, low word)].
 * Errors: NULL seed JX_ERR_VALUE; bool/float seed JX_ERR_DTYPE; seed not 0-d
 * JX_ERR_SHAPE (JAX's TypeError: map over a batch instead). */
jx_array *jx_random_key_from(jx_array *seed);
/* jax.random.fold_in(key, data) with data a 0-d integer array (possibly traced),
 * converted to uint32 with wrap-around as jnp.asarray(data, 'uint32'). Key batch
 * (..., 2) as jx_random_fold_in. Errors as jx_random_key_from for data. */
jx_array *jx_random_fold_in_from(jx_array *key, jx_array *data);
/* jax.extend.random.threefry_2x32(key, count): the raw Threefry-2x32 hash (20 rounds)
 * of count (uint32, any shape) under key (uint32 (2,)); result uint32 of count's shape,
 * bit for bit JAX's: the flattened count padded with one 0 when its size is odd, split
 * into halves hashed as word pairs, the padding dropped. Errors: key as above; count
 * NULL JX_ERR_VALUE, not uint32 JX_ERR_DTYPE. */
jx_array *jx_random_threefry_2x32(jx_array *key, jx_array *count);
/* jax.random.bits(key, shape, dtype): uniform bits; dtype uint8/uint16/uint32/uint64
 * (others: JX_ERR_DTYPE). Key batch (..., 2): result (...) + shape. At most 2^32
 * elements (JX_ERR_UNSUPPORTED). */
jx_array *jx_random_bits(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* jax.random.uniform(key, shape, dtype, minval, maxval): floats in [minval, maxval)
 * from random mantissa bits (bfloat16 uses 8 random bits, 7 of them kept). float dtypes
 * only. As in JAX, minval >= maxval is not an error: the result is then minval
 * (max(minval, u * (maxval - minval) + minval)); NaN bounds give NaN. The bits are
 * those of JAX's eager call (under jax.jit with constant bounds whose difference rounds
 * to exactly 1, XLA reassociates the arithmetic and the last bit can differ). */
jx_array *jx_random_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                            double minval, double maxval);
/* jax.random.normal(key, shape, dtype): sqrt(2) * erf_inv(u), u uniform in
 * [nextafter(-1, 0), 1), with XLA's erf_inv approximation (not Box-Muller). */
jx_array *jx_random_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* jax.random.randint(key, shape, minval, maxval, dtype): integers in [minval, maxval)
 * by JAX's modulus method on two split keys (dtypes under 32 bits sample in int32 with
 * the bounds clipped to the dtype; maxval may be dtype max + 1). maxval <= minval gives
 * minval. Integer dtypes only (JX_ERR_DTYPE); bounds outside the default int dtype
 * (int32 with x64 off) are JX_ERR_VALUE, as JAX raises OverflowError. */
jx_array *jx_random_randint(jx_array *key, int ndim, const int64_t *shape, int64_t minval,
                            int64_t maxval, jx_dtype dtype);
/* jax.random.bernoulli(key, p, shape): bool array, uniform(default float) < p. */
jx_array *jx_random_bernoulli(jx_array *key, double p, int ndim, const int64_t *shape);
/* jax.random.categorical(key, logits, axis): argmax over `axis` of logits + Gumbel
 * noise; the default int dtype, shape logits.shape without `axis`. logits must be
 * float (JX_ERR_DTYPE) with at least one axis; a bad axis is JX_ERR_SHAPE. */
jx_array *jx_random_categorical(jx_array *key, jx_array *logits, int axis);
/* jax.random.gumbel / exponential / laplace / logistic / cauchy(key, shape, dtype),
 * float dtypes: -log(-log(u)) (JAX's default mode "low"), -log1p(-u),
 * sign(u) * log1p(-|u|), log(u) - log1p(-u), tan(pi * (u - 0.5)), with u uniform over
 * JAX's ranges. */
jx_array *jx_random_gumbel(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_random_exponential(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_random_laplace(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_random_logistic(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_random_cauchy(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* jax.random.truncated_normal(key, lower, upper, shape, dtype): normal values in the
 * open interval (lower, upper) (infinite bounds allowed), by inverting the CDF between
 * erf(lower / sqrt 2) and erf(upper / sqrt 2). */
jx_array *jx_random_truncated_normal(jx_array *key, double lower, double upper, int ndim,
                                     const int64_t *shape, jx_dtype dtype);
/* jax.random.permutation(key, x, axis, independent): x shuffled along `axis` (whole
 * slices move together unless `independent`, which shuffles each 1-d slice on its
 * own), by JAX's rounds of sorting by random keys; x == NULL permutes range(n) (the
 * default int dtype). JX_ERR_SHAPE for a 0-d x or a bad axis, JX_ERR_VALUE for n < 0. */
jx_array *jx_random_permutation(jx_array *key, jx_array *x, int64_t n, int axis,
                                bool independent);
/* jax.random.choice(key, a, shape, replace, p) along axis 0: samples of a (ndim >= 1;
 * result shape + a.shape[1:], a's dtype), or of range(n) when a is NULL (default int
 * dtype). p (NULL: uniform) is a 1-d array of a.shape[0] (or n) weights, not
 * necessarily normalized (JX_ERR_SHAPE otherwise). With replacement: inverse CDF of p;
 * without: the head of a permutation, or with p the Gumbel top-k trick. With no draws
 * the result is zeros of `shape`, as JAX's. JX_ERR_VALUE for an empty population or,
 * without replacement, more draws than items. */
jx_array *jx_random_choice(jx_array *key, jx_array *a, int64_t n, int ndim,
                           const int64_t *shape, bool replace, jx_array *p);
/* jax.random.multivariate_normal(key, mean, cov, shape, dtype, method='cholesky'):
 * mean + L z with L the lower Cholesky factor of cov and z standard normal of `dtype`
 * (float; JAX's default is mean's dtype). mean (..., n) and cov (..., n, n) positive
 * definite (else NaNs) are promoted to a float dtype together; ndim < 0 means
 * shape=None (the broadcast of the batch shapes of mean and cov). Result shape: shape +
 * (n,); dtype: that of mean + L z. Shape mismatches: JX_ERR_SHAPE; n > 256:
 * JX_ERR_UNSUPPORTED (the factorization is unrolled). */
jx_array *jx_random_multivariate_normal(jx_array *key, jx_array *mean, jx_array *cov, int ndim,
                                        const int64_t *shape, jx_dtype dtype);

/* ------------------------------------------------ gamma and its family */
/* Parameters (a, b, df, alpha) are arrays of any real dtype, converted to `dtype` (a
 * float dtype, canonicalized; else JX_ERR_DTYPE) and broadcast to the result shape.
 * shape: ndim >= 0 gives it (it must be the broadcast of itself with every parameter's
 * shape, JX_ERR_SHAPE otherwise, as JAX's _check_shape); ndim < 0 is shape=None, the
 * broadcast of the parameters' shapes. A NULL parameter is JX_ERR_VALUE.
 * Algorithm (jax/_src/random/core.py): _gamma_one per element -- Marsaglia and Tsang's
 * rejection method (ACM TOMS 26(3), 2000) as a while loop over fresh normals and
 * uniforms, alpha < 1 boosted to alpha + 1 and multiplied by u^(1/alpha) (loggamma:
 * added log(u)/alpha) -- mapped with vmap over split(key, size) keys, so each element
 * sees the keys JAX's element sees. Bits (tests/lib/test_random_more.c, goldens from
 * tools/golden_random_more.py): float32 samples equal JAX's on this machine's CPU except
 * where XLA's float32 rsqrt (the rsqrtss estimate + one Newton step: its last bit
 * depends on the CPU model) and glibc's powf (alpha < 1; jaxc's pow is rounded from
 * float64 on the interpreter, libmvec on cpu) round differently from jaxc's: such
 * elements are within a few float32 ulps; samples below 2^-126 stay subnormal where
 * JAX's CPU flushes them to 0 (the math wins). Under jx_vmap or jx_jit of the caller the
 * fused kernels differ, so samples may move by an ulp or two (still within JAX's
 * tolerance above). float64/float16/bfloat16 compute with the primitives (within a few
 * ulps of JAX's). Derivatives w.r.t. the parameters are JAX's
 * implicit reparameterization (random_gamma_p's JVP): d sample / d a =
 * lax.random_gamma_grad(a, sample) = -(dP(a, x)/da) / p(a, x) at x = sample (loggamma:
 * divided by exp(sample)), not the derivative of the rejection loop; beta, dirichlet,
 * t and chisquare differentiate through it (jax.grad goldens in
 * tests/lib/test_random_keys.c agree within 1e-5 relative).
 * Cost: a batched while loop whose trips are those of the slowest element (each trip
 * draws a normal and a uniform for every element); run under jx_jit internally. */
/* jax.random.gamma(key, a, shape, dtype): Gamma(a, 1) samples (a > 0; a <= 0 or NaN
 * gives NaN or 0, as JAX). */
jx_array *jx_random_gamma(jx_array *key, jx_array *a, int ndim, const int64_t *shape,
                          jx_dtype dtype);
/* jax.random.loggamma(key, a, shape, dtype): log of Gamma(a) samples, computed in log
 * space (accurate for small a, where gamma underflows to 0). */
jx_array *jx_random_loggamma(jx_array *key, jx_array *a, int ndim, const int64_t *shape,
                             jx_dtype dtype);
/* jax.random.beta(key, a, b, shape, dtype): Beta(a, b) from two loggamma draws on
 * split(key) (ga / (ga + gb) after subtracting their max). */
jx_array *jx_random_beta(jx_array *key, jx_array *a, jx_array *b, int ndim, const int64_t *shape,
                         jx_dtype dtype);
/* jax.random.dirichlet(key, alpha, shape, dtype): alpha (..., k) (ndim >= 1, else
 * JX_ERR_SHAPE); shape is the batch shape (broadcast with alpha.shape[:-1]; ndim < 0:
 * alpha.shape[:-1]); result shape + (k,): softmax over the last axis of loggamma draws. */
jx_array *jx_random_dirichlet(jx_array *key, jx_array *alpha, int ndim, const int64_t *shape,
                              jx_dtype dtype);
/* jax.random.t(key, df, shape, dtype): Student's t, normal(k1) * sqrt((df/2) /
 * gamma(k2, df/2)) with k1, k2 = split(key). */
jx_array *jx_random_t(jx_array *key, jx_array *df, int ndim, const int64_t *shape, jx_dtype dtype);
/* jax.random.chisquare(key, df, shape, dtype): 2 exp(loggamma(key, df / 2)). */
jx_array *jx_random_chisquare(jx_array *key, jx_array *df, int ndim, const int64_t *shape,
                              jx_dtype dtype);
/* jax.random.rademacher(key, shape, dtype): -1 or +1 with equal probability, as
 * 2 * bernoulli(key, 0.5, shape) - 1 in `dtype` (any numeric dtype; bool:
 * JX_ERR_DTYPE). Bit for bit. */
jx_array *jx_random_rademacher(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);

/* ------------------------------------------------- counts and categories */
/* jax.random.poisson(key, lam, shape, dtype): Poisson(lam) counts of an integer dtype
 * (JX_ERR_DTYPE otherwise; canonicalized: int32 with x64 off). lam: any real array,
 * broadcast to shape (ndim < 0: lam's shape; JX_ERR_SHAPE if it does not broadcast)
 * and converted to float32, as JAX. Algorithm (core.py _poisson): Knuth's product of
 * uniforms for lam < 10 (or NaN: -1), Hormann's transformed rejection (PTRS) above;
 * each is one while loop over the whole array (each trip draws a uniform array for
 * every element until all are done), lam == 0 gives 0. Bit for bit as JAX's (goldens,
 * 100 keys of lam mixing values below and above 10 among them). The rejection loop's
 * acceptance test compares against lgamma(k + 1), and since JAX's loop re-draws
 * accepted elements until every element is accepted, one test falling the other way
 * changes the trip count and with it every element's count; so that lgamma is XLA's
 * own rounding (random_discrete.c lgamma_xla32: with jaxc's jx_special_gammaln, 6 of
 * those 100 keys differed -- JAX runs lam < 10 through that loop too, at a stand-in lam
 * of 1e5 where the test is ill-conditioned in float32). */
jx_array *jx_random_poisson(jx_array *key, jx_array *lam, int ndim, const int64_t *shape,
                            jx_dtype dtype);
/* jax.random.binomial(key, n, p, shape, dtype): Binomial(n, p) counts as floats of
 * `dtype` (a float dtype; JX_ERR_DTYPE otherwise). n and p: real arrays broadcast to
 * shape (ndim < 0: their broadcast); computed in p's float dtype (ints: the default
 * float). core.py _binomial: n floored; inversion (geometric waiting times) where
 * n min(p, 1-p) <= 10, else BTRS (Kachitvichyanukul-Schmeiser / Hormann 1993);
 * p > 1/2 samples n - Binomial(n, 1-p). NaN or negative n, NaN or out-of-range p give
 * NaN; n = inf gives inf. Bit for bit as JAX's (goldens). */
jx_array *jx_random_binomial(jx_array *key, jx_array *n, jx_array *p, int ndim,
                             const int64_t *shape, jx_dtype dtype);
/* jax.random.categorical(key, logits, axis, shape, replace): as jx_random_categorical,
 * with JAX's `shape` (ndim < 0: None, the batch shape logits.shape without axis) and
 * `replace`. shape must end with a broadcast of the batch shape (JX_ERR_SHAPE; without
 * replacement the batch shape itself); its leading dims are
 * independent draws: with replacement argmax(gumbel(shape + (n,) at axis) + logits),
 * without the top prod(leading dims) of logits + gumbel along axis (Gumbel top-k; more
 * than the number of categories is JX_ERR_VALUE). Default int dtype; bit for bit. */
jx_array *jx_random_categorical_shape(jx_array *key, jx_array *logits, int axis, int ndim,
                                      const int64_t *shape, bool replace);

/* ------------------------------------------- distributions built on them */
/* jax.random's distributions of JAX 0.10.2's jax/_src/random/core.py, each built as its
 * _<name> function is (same key splits, same draws, same arithmetic), jitted and cached
 * as the samplers above. dtype: a float dtype (geometric: an integer dtype), else
 * JX_ERR_DTYPE; canonicalized. Parameter arrays (any real dtype; NULL: JX_ERR_VALUE)
 * are converted to dtype first (JAX converts them with astype / convert_element_type,
 * or promotes them with the sample: the same for float32 arrays and Python floats).
 * Shapes: for those with a parameter array (rayleigh, pareto, wald, geometric) as the
 * gamma family: ndim < 0 is shape=None (the parameters' broadcast), else shape must be
 * the broadcast of itself with the parameters (JX_ERR_SHAPE); the others require
 * ndim >= 0 (JAX's default shape is ()). Accuracy against JAX on the CPU
 * (tests/lib/test_random_more.c, goldens from tools/golden_random_more.py): see each. */
/* jax.random.weibull_min(key, scale, concentration, shape, dtype):
 * power(-log1p(-u), 1 / concentration) * scale with u = uniform(key, shape) -- u has
 * `shape` and the result the broadcast of shape, scale's and concentration's shapes
 * (JX_ERR_SHAPE if they do not broadcast). pow is jaxc's, not XLA's: within a few
 * float32 ulps of JAX's. */
jx_array *jx_random_weibull_min(jx_array *key, jx_array *scale, jx_array *concentration, int ndim,
                                const int64_t *shape, jx_dtype dtype);
/* jax.random.rayleigh(key, scale, shape, dtype): scale * sqrt(-2 log(u)), u uniform in
 * [0, 1). */
jx_array *jx_random_rayleigh(jx_array *key, jx_array *scale, int ndim, const int64_t *shape,
                             jx_dtype dtype);
/* jax.random.maxwell(key, shape, dtype): the norm of normal(key, shape + (3,)) along its
 * last axis (sqrt of the sum of squares). */
jx_array *jx_random_maxwell(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* jax.random.pareto(key, b, shape, dtype): exp(exponential(key, shape) / b). exp is
 * jaxc's: within a few float32 ulps of JAX's. */
jx_array *jx_random_pareto(jx_array *key, jx_array *b, int ndim, const int64_t *shape,
                           jx_dtype dtype);
/* jax.random.wald(key, mean, shape, dtype): inverse Gaussian (Michael, Schucany and Haas
 * 1976) from v = normal(k1), z = uniform(k2) with k1, k2 = split(key): y = v^2,
 * x = mean + mean^2 y / 2 - mean / 2 sqrt(4 mean y + mean^2 y^2), then x where
 * z <= mean / (mean + x), else mean^2 / x. */
jx_array *jx_random_wald(jx_array *key, jx_array *mean, int ndim, const int64_t *shape,
                         jx_dtype dtype);
/* jax.random.geometric(key, p, shape, dtype): trials to the first success,
 * floor(log(u) / log1p(-p)) + 1 (u uniform in [0, 1), 0 replaced by 1) converted to
 * dtype, an integer dtype (JX_ERR_DTYPE otherwise; int32 with x64 off). Computed in p's
 * float dtype (an integer p: the default float), as JAX's promote_dtypes_inexact. */
jx_array *jx_random_geometric(jx_array *key, jx_array *p, int ndim, const int64_t *shape,
                              jx_dtype dtype);
/* jax.random.generalized_normal(key, p, shape, dtype): density ~ exp(-|x|^p):
 * rademacher(k1) * gamma(k0, 1/p) ** (1/p) with k0, k1 = split(key), 1/p rounded to
 * dtype (p is a traced weak float in JAX). Accuracy: that of jx_random_gamma (a few
 * float32 ulps) and pow. */
jx_array *jx_random_generalized_normal(jx_array *key, double p, int ndim, const int64_t *shape,
                                       jx_dtype dtype);
/* jax.random.ball(key, d, p, shape, dtype): uniform in the unit Lp ball of dimension d
 * (d < 0: JX_ERR_SHAPE), result shape + (d,): g / (sum(|g|^p, -1) + e)^(1/p) with
 * g = generalized_normal(k1, p, shape + (d,)) and e = exponential(k2, shape), k1, k2 =
 * split(key). |g|^p is lax.pow (JAX's p=2 default is a Python int, which JAX squares
 * with integer_pow; the two agree except in rare last bits). */
jx_array *jx_random_ball(jx_array *key, int64_t d, double p, int ndim, const int64_t *shape,
                         jx_dtype dtype);
/* jax.random.orthogonal(key, n, shape, dtype, m): a uniform sample of O(n) (m < 0 is
 * None: m = n), or semi-orthogonal for m != n; result shape + (n, m). As core._orthogonal:
 * q * sign(diag(r)) from the QR of z = normal(key, shape + (max(n, m), min(n, m))),
 * transposed when n < m. z is bit for bit JAX's, but the QR is LAPACK's through jaxc
 * (its rounding is not XLA's): within ~1e-6 of JAX's in float32, not bit for bit.
 * n < 0: JX_ERR_SHAPE. */
jx_array *jx_random_orthogonal(jx_array *key, int64_t n, int ndim, const int64_t *shape, jx_dtype dtype,
                               int64_t m);

#endif /* JAXC_RANDOM_H */
