/* jaxc/nn.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * jax.nn: activations, attention, and jax.nn.initializers. */
#ifndef JAXC_NN_H
#define JAXC_NN_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/nn.h>"
#endif

/* ------------------------------------------------------------------ nn */
/* jax.nn (src/lib/nn.c), built from jx_ operations: every function works under jx_grad,
 * jx_vmap and jx_jit, and its derivative is JAX's (custom JVPs included: relu'(0) = 0,
 * relu6'(0) = relu6'(6) = 0, softplus'(0) = sigmoid(0); sigmoid, softplus, log_sigmoid,
 * logsumexp, softmax and log_softmax have finite gradients at large |x|).
 * Activations are elementwise and keep x's shape. Integer inputs follow JAX: relu,
 * hard_tanh and identity keep them; sigmoid, silu/swish and glu reject them
 * (JX_ERR_DTYPE, as lax.logistic does); the others compute in float32 (float64 for
 * int64: promote_dtypes_inexact).
 * Scalar parameters are Python floats in JAX (weakly typed: x's dtype is kept).
 * NULL x: JX_ERR_VALUE (or the pending error). */
jx_array *jx_nn_relu(jx_array *x);          /* max(x, 0) */
jx_array *jx_nn_relu6(jx_array *x);         /* min(max(x, 0), 6) */
/* sigmoid: 1 / (1 + exp(-x)), JAX's bits for x >= 0; for x < 0 exp(x) / (1 + exp(x))
 * (one exp of -|x| for both, derivative y (1 - y) without inf / inf), as accurate as
 * XLA's 1 / (1 + exp(-x)) (mean 0.59 against 0.53 ulp, max 3.3 against 3.4 on
 * [-20, 0]) but about 45% of negative float32 inputs 1 ulp off JAX's value (23% in
 * bfloat16 and float16; silu likewise); below -88.7 it keeps the subnormal result where
 * XLA's exp(-x) overflows to 0. */
jx_array *jx_nn_sigmoid(jx_array *x);
jx_array *jx_nn_softplus(jx_array *x);      /* log(1 + exp(x)) = logaddexp(x, 0) */
jx_array *jx_nn_sparse_plus(jx_array *x);   /* 0 | (x+1)^2/4 | x on (-inf,-1] (-1,1) [1,inf) */
jx_array *jx_nn_soft_sign(jx_array *x);     /* x / (|x| + 1) */
jx_array *jx_nn_silu(jx_array *x);          /* x * sigmoid(x) */
jx_array *jx_nn_swish(jx_array *x);         /* alias of jx_nn_silu */
jx_array *jx_nn_log_sigmoid(jx_array *x);   /* -softplus(-x) */
jx_array *jx_nn_leaky_relu(jx_array *x, double negative_slope); /* JAX default 0.01 */
jx_array *jx_nn_hard_sigmoid(jx_array *x);  /* relu6(x + 3) * (1/6), XLA's form */
jx_array *jx_nn_hard_silu(jx_array *x);     /* x * hard_sigmoid(x) */
jx_array *jx_nn_hard_swish(jx_array *x);    /* alias of jx_nn_hard_silu */
jx_array *jx_nn_hard_tanh(jx_array *x);     /* clip(x, -1, 1) */
jx_array *jx_nn_elu(jx_array *x, double alpha);  /* x > 0 ? x : alpha (exp(x) - 1); JAX 1.0 */
jx_array *jx_nn_celu(jx_array *x, double alpha); /* max(x,0) + alpha expm1(min(x,0)/alpha) */
jx_array *jx_nn_selu(jx_array *x);          /* 1.0507... * elu(x, 1.6732...) */
/* gelu: approximate (JAX's default true): the tanh form; false: 0.5 x erfc(-x / sqrt 2). */
jx_array *jx_nn_gelu(jx_array *x, bool approximate);
/* glu: x1 * sigmoid(x2) with x split in two halves along axis (JAX default -1).
 * JX_ERR_SHAPE for a bad axis or an odd size. */
jx_array *jx_nn_glu(jx_array *x, int axis);
jx_array *jx_nn_squareplus(jx_array *x, double b); /* (x + sqrt(x^2 + b)) / 2; JAX b = 4 */
jx_array *jx_nn_mish(jx_array *x);          /* x * tanh(softplus(x)) */
jx_array *jx_nn_identity(jx_array *x);      /* x (a new reference) */

/* jax.nn.softmax / log_softmax(x, axis, where) over (naxes, axes) (NULL = all axes, as
 * in jx_sum; JAX's default is {-1}); stable (shifted by the max). `where` (NULL = none)
 * is a mask broadcastable to x (any dtype, nonzero = true): masked elements are left
 * out of the max and the sum and give 0 (softmax) or -inf (log_softmax); a fully
 * masked slice gives 0 / -inf everywhere. Integer x computes in float32 (int64: float64).
 * softmax is exp(x - max) * (1 / sum): the reciprocal multiply XLA makes of JAX's
 * division (so JAX's CPU bits), within 1 ulp of the correctly rounded quotient.
 * bfloat16 follows XLA's CPU too: softmax's reciprocal and product in float32 (one
 * rounding), log_softmax's exps summed in float32 unrounded (so standardize's squares).
 * Errors: JX_ERR_SHAPE for bad or repeated axes or a mask that does not broadcast. */
jx_array *jx_nn_softmax(jx_array *x, int naxes, const int *axes, jx_array *where);
jx_array *jx_nn_log_softmax(jx_array *x, int naxes, const int *axes, jx_array *where);
/* jax.nn.logsumexp(x, axis, b, keepdims, where): log(sum(b * exp(x))) over (naxes,
 * axes), stable, with gradient softmax(x) even where exp(x) overflows. b (NULL = none)
 * scales the terms and must broadcast to x (JX_ERR_SHAPE); a negative sum gives NaN.
 * `where` as in jx_nn_softmax; a fully masked (or empty) slice gives -inf. */
jx_array *jx_nn_logsumexp(jx_array *x, int naxes, const int *axes, jx_array *b,
                          bool keepdims, jx_array *where);
/* jax.nn.one_hot(x, num_classes, dtype, axis): x == class, cast to dtype, with the
 * class axis of size num_classes inserted at `axis` of the result (JAX default -1).
 * Out-of-range indices give all zeros. Errors: JX_ERR_VALUE for num_classes < 0,
 * JX_ERR_DTYPE for bool x, JX_ERR_SHAPE for a bad axis. */
jx_array *jx_nn_one_hot(jx_array *x, int64_t num_classes, jx_dtype dtype, int axis);
/* jax.nn.standardize(x, axis, mean, variance, epsilon, where) with JAX's default
 * algorithm "fast": (x - mean) * rsqrt(variance + epsilon), mean = mean(x) and variance =
 * max(mean(x^2) - mean^2, 0) over (naxes, axes) with keepdims, each computed only when
 * its argument is NULL (given ones must broadcast to x's shape). `where` (NULL = none)
 * restricts the means to the masked elements. JAX's default epsilon is 1e-5. */
jx_array *jx_nn_standardize(jx_array *x, int naxes, const int *axes, jx_array *mean,
                            jx_array *variance, double epsilon, jx_array *where);
/* jax.nn.dot_product_attention(query, key, value, bias, mask, scale=, is_causal=), the
 * "xla" implementation: softmax(scale * Q K^T + bias, masked) V per head.
 * Shapes: query (B, T, N, H); key, value (B, S, K, H) with N a multiple of K (grouped-
 * query attention); rank-3 inputs drop B. bias and mask (NULL = none) have rank <= 4,
 * broadcasting to (B, N, T, S); mask is bool (true = attend). scale == 0 means JAX's
 * default 1/sqrt(H). is_causal keeps key s <= query t. Masked logits become
 * -0.7 * float32 max, as in JAX (a fully masked row attends uniformly). Logits are
 * computed in promote(dtype, float32), the softmax in float32, the result in the
 * inputs' dtype, shaped like query. Errors: JX_ERR_SHAPE for mismatched shapes,
 * JX_ERR_DTYPE for differing or non-float dtypes or a non-bool mask. */
jx_array *jx_nn_dot_product_attention(jx_array *query, jx_array *key, jx_array *value,
                                      jx_array *bias, jx_array *mask, double scale,
                                      bool is_causal);

/* ------------------------------------------------------- nn.initializers */
/* jax.nn.initializers (src/lib/nn.c): init(key, shape, dtype) of each initializer, with
 * the factory's parameters as trailing arguments, drawing with jx_random_* exactly as
 * JAX does (same bits for the same key). key is a jx_random_key (unused, may be NULL,
 * for zeros/ones/constant); dtype must be floating (JX_ERR_DTYPE); shape errors as for
 * jx_zeros. delta_orthogonal is not provided yet. */
jx_array *jx_nn_init_zeros(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* orthogonal(scale, column_axis): scale * Q of the QR of a normal draw (JAX's recipe,
 * R's diagonal made positive), reshaped so column_axis holds the columns. ndim >= 2
 * (JX_ERR_SHAPE); the key must be concrete (JX_ERR_VALUE under jit/vmap/grad): the QR
 * runs on the host in float64 (Gram-Schmidt twice), so values agree with JAX's LAPACK
 * float32 QR to a few ulps. */
jx_array *jx_nn_init_orthogonal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                                double scale, int column_axis);
jx_array *jx_nn_init_ones(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_constant(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                              double value);
/* uniform(scale): U[0, scale); normal(stddev); truncated_normal(stddev, lower, upper):
 * stddev * a standard normal truncated to (lower, upper). JAX's defaults: scale 0.01,
 * stddev 0.01, lower -2, upper 2. */
jx_array *jx_nn_init_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                             double scale);
jx_array *jx_nn_init_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                            double stddev);
jx_array *jx_nn_init_truncated_normal(jx_array *key, int ndim, const int64_t *shape,
                                      jx_dtype dtype, double stddev, double lower,
                                      double upper);
/* variance_scaling(scale, mode, distribution, in_axis, out_axis): variance = scale / n
 * with n the fan in, fan out, their mean or their geometric mean, where fan_in =
 * shape[in_axis] * receptive field and fan_out = shape[out_axis] * receptive field
 * (receptive field: the product of the other dims). Distributions: truncated normal in
 * (-2, 2) scaled to that variance, normal, or uniform in [-sqrt(3 variance),
 * sqrt(3 variance)). Errors: JX_ERR_SHAPE for a bad axis (JAX's default in_axis -2
 * needs ndim >= 2), JX_ERR_VALUE for a zero fan or a bad mode/distribution. */
typedef enum jx_nn_fan_mode {
  JX_NN_FAN_IN,
  JX_NN_FAN_OUT,
  JX_NN_FAN_AVG,
  JX_NN_FAN_GEO_AVG
} jx_nn_fan_mode;
typedef enum jx_nn_distribution {
  JX_NN_TRUNCATED_NORMAL,
  JX_NN_NORMAL,
  JX_NN_UNIFORM
} jx_nn_distribution;
jx_array *jx_nn_init_variance_scaling(jx_array *key, int ndim, const int64_t *shape,
                                      jx_dtype dtype, double scale, jx_nn_fan_mode mode,
                                      jx_nn_distribution distribution, int in_axis,
                                      int out_axis);
/* The named variance-scaling initializers with JAX's default axes (in -2, out -1):
 * glorot (xavier) = (1, fan_avg), he (kaiming) = (2, fan_in), lecun = (1, fan_in);
 * _uniform uses the uniform distribution, _normal the truncated normal. */
jx_array *jx_nn_init_glorot_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_glorot_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_he_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_he_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_lecun_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *jx_nn_init_lecun_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);

#endif /* JAXC_NN_H */
