/* nn.c -- jax.nn: activations, softmax / log_softmax / logsumexp with `where` masks,
 * one_hot, standardize and dot_product_attention, written with jx_ operations only, so
 * every function works under jx_grad, jx_vmap and jx_jit. Formulas follow
 * jax/_src/nn/functions.py and jax/_src/ops/special.py (logsumexp).
 *
 * Derivatives. Where JAX defines a custom JVP (relu, relu6, logaddexp inside softplus,
 * softmax) or relies on a primitive with its own rule (lax.logistic), the formulas below
 * are arranged so that ordinary differentiation of the primitives yields JAX's
 * derivative and stays finite at large inputs:
 *  - relu-style kinks: where(x in the open linear region, x, stop_gradient(value)); the
 *    value is JAX's exactly (NaN stays NaN) and the slope is 0 at the kinks;
 *  - sigmoid/softplus: both branches of a `where` are evaluated on exp(-|x|) <= 1, so
 *    neither branch overflows and reverse mode never multiplies a zero cotangent by inf;
 *  - softmax/log_softmax/logsumexp: the shift by the max is a stop_gradient constant,
 *    which leaves the (shift-invariant) derivative exact. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

/* Every public function runs in its own scope: temporaries die at its end, only the
 * result survives (a NULL result is fine). */
/* Python scalars: weakly typed, so they take the other operand's dtype. */
static jx_array *wf(double v) { return jx_scalar(v); }
static jx_array *wi(int64_t v) { return jx_scalar_int(v); }

/* lax.logistic (and so sigmoid, silu, glu) accepts only floating dtypes. */
static bool need_float(const char *fn, jx_array *x) {
  if (dtype_is_floating(x->dtype)) return true;
  error_set(JX_ERR_DTYPE, "%s: logistic does not accept dtype %s (expected a floating dtype)",
            fn, jx_dtype_name(x->dtype));
  return false;
}

/* ============================================================ activations */

/* jax.nn.relu: maximum(x, 0), with JAX's custom JVP select(x > 0, g, 0). */
static jx_array *relu_(jx_array *x) {
  jx_array *value = jx_maximum(x, wi(0));
  return jx_where(jx_greater(x, wi(0)), x, jx_stop_gradient(value));
}

/* jax.nn.relu6: minimum(maximum(x, 0), 6.), custom JVP select(0 < x < 6, g, 0). */
static jx_array *relu6_(jx_array *x) {
  jx_array *value = jx_minimum(jx_maximum(x, wi(0)), wf(6.0));
  jx_array *linear = jx_logical_and(jx_greater(x, wi(0)), jx_less(x, wf(6.0)));
  return jx_where(linear, x, jx_stop_gradient(value));
}

/* jax.nn.sigmoid = lax.logistic: 1 / (1 + exp(-x)) (JAX's value for x >= 0). For x < 0
 * the same quantity is z / (1 + z) with z = exp(x), so both branches use
 * z = exp(-|x|) <= 1: d/dx is z / (1 + z)^2 = y (1 - y) everywhere, never inf / inf.
 * One division of the selected numerator (the same values as selecting between
 * 1 / (1 + z) and z / (1 + z), at half the divisions: 0.35 -> 0.25 ns per element). */
static jx_array *sigmoid_(jx_array *x) {
  jx_array *pos = jx_greater_equal(x, wi(0));
  jx_array *z = jx_exp(jx_where(pos, jx_negative(x), x)); /* exp(-|x|) */
  return jx_divide(jx_where(pos, wf(1.0), z), jx_add(wf(1.0), z));
}

/* jax.nn.softplus = jnp.logaddexp(x, 0) = max(x, 0) + log1p(exp(-|x|)), rearranged as
 * where(x > 0, x + s, s) with s = log1p(exp(-|x|)): the same values (NaN and +-inf
 * included), and derivative sigmoid(x) -- 1/2 at 0, as JAX's custom JVP gives. */
static jx_array *softplus_(jx_array *x) {
  x = np_to_inexact(x);
  jx_array *pos = jx_greater(x, wi(0));
  jx_array *s = jx_log1p(jx_exp(jx_where(pos, jx_negative(x), x)));
  return jx_where(pos, jx_add(x, s), s);
}

/* jax.nn.sparse_plus: where(x <= -1, 0, where(x >= 1, x, (x + 1)**2 / 4)). */
static jx_array *sparse_plus_(jx_array *x) {
  jx_array *mid = jx_divide(jx_power(jx_add(x, wf(1.0)), wi(2)), wi(4));
  return jx_where(jx_less_equal(x, wf(-1.0)), wf(0.0),
                  jx_where(jx_greater_equal(x, wf(1.0)), x, mid));
}

/* jax.nn.soft_sign: x / (|x| + 1). */
static jx_array *soft_sign_(jx_array *x) { return jx_divide(x, jx_add(jx_abs(x), wi(1))); }

/* jax.nn.silu: x * sigmoid(x). */
static jx_array *silu_(jx_array *x) { return jx_multiply(x, sigmoid_(x)); }

/* jax.nn.log_sigmoid: -softplus(-x). */
static jx_array *log_sigmoid_(jx_array *x) {
  return jx_negative(softplus_(jx_negative(np_to_inexact(x))));
}

/* jax.nn.hard_sigmoid: relu6(x + 3.) / 6., as XLA computes it: its algebraic simplifier
 * turns a division by a constant into a multiplication by the constant's reciprocal
 * (rounded to the dtype), in eager calls and under jit alike, so the bits are JAX's
 * (the correctly rounded quotient was 1 ulp off in about a third of float32 inputs).
 * bfloat16 is computed in float32 on XLA's CPU before that rewrite: the reciprocal is
 * float32's and the product is rounded to bfloat16 once. */
static jx_array *hard_sigmoid_(jx_array *x) {
  jx_array *r = relu6_(jx_add(x, wf(3.0)));
  if (r && jx_dtype_of(r) == JX_BFLOAT16)
    return jx_astype(jx_multiply(jx_astype(r, JX_FLOAT32), wf(1.0 / 6.0)), JX_BFLOAT16);
  return jx_multiply(r, wf(1.0 / 6.0));
}

/* jax.nn.hard_silu: x * hard_sigmoid(x). */
static jx_array *hard_silu_(jx_array *x) { return jx_multiply(x, hard_sigmoid_(x)); }

/* jax.nn.hard_tanh: where(x > 1, 1, where(x < -1, -1, x)). */
static jx_array *hard_tanh_(jx_array *x) {
  return jx_where(jx_greater(x, wi(1)), wi(1),
                  jx_where(jx_less(x, wi(-1)), wi(-1), x));
}

/* jax.nn.elu: where(x > 0, x, alpha * expm1(where(x > 0, 0., x))). */
static jx_array *elu_(jx_array *x, double alpha) {
  jx_array *pos = jx_greater(x, wi(0));
  jx_array *neg = jx_multiply(wf(alpha), jx_expm1(jx_where(pos, wf(0.0), x)));
  return jx_where(pos, x, neg);
}

/* jax.nn.celu: maximum(x, 0.) + alpha * expm1(minimum(x, 0.) / alpha). */
static jx_array *celu_(jx_array *x, double alpha) {
  jx_array *neg = jx_expm1(jx_divide(jx_minimum(x, wf(0.0)), wf(alpha)));
  return jx_add(jx_maximum(x, wf(0.0)), jx_multiply(wf(alpha), neg));
}

/* jax.nn.selu: scale * elu(x, alpha) with the constants of Klambauer et al. */
static jx_array *selu_(jx_array *x) {
  const double alpha = 1.6732632423543772848170429916717;
  const double scale = 1.0507009873554804934193349852946;
  return jx_multiply(wf(scale), elu_(x, alpha));
}

/* jax.nn.gelu. approximate: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)));
 * exact: 0.5 * x * erfc(-x * sqrt(1/2)). The constants are strong scalars of x's dtype
 * (np.float32(...) in JAX). */
static jx_array *gelu_(jx_array *x, bool approximate) {
  x = np_to_inexact(x);
  if (!x) return NULL;
  jx_dtype dt = jx_dtype_of(x);
  if (approximate) {
    jx_array *c = jx_scalar_of(sqrt(2.0 / M_PI), dt);
    jx_array *inner = jx_add(x, jx_multiply(wf(0.044715), jx_power(x, wi(3))));
    jx_array *cdf = jx_multiply(wf(0.5), jx_add(wf(1.0), jx_tanh(jx_multiply(c, inner))));
    return jx_multiply(x, cdf);
  }
  jx_array *c = jx_scalar_of(sqrt(0.5), dt);
  jx_array *arg = jx_multiply(jx_negative(x), c);
  jx_array *erfc = arg ? prim_unary(PRIM_erfc, arg) : NULL; /* no public jx_erfc yet */
  return jx_multiply(jx_multiply(wf(0.5), x), erfc);
}

/* jax.nn.squareplus: (x + sqrt(x**2 + b)) / 2. */
static jx_array *squareplus_(jx_array *x, double b) {
  return jx_divide(jx_add(x, jx_sqrt(jx_add(jx_square(x), wf(b)))), wi(2));
}

/* jax.nn.mish: x * tanh(softplus(x)). */
static jx_array *mish_(jx_array *x) { return jx_multiply(x, jx_tanh(softplus_(x))); }

/* jax.nn.leaky_relu: where(x >= 0, x, negative_slope * x). */
static jx_array *leaky_relu_(jx_array *x, double slope) {
  return jx_where(jx_greater_equal(x, wi(0)), x, jx_multiply(wf(slope), x));
}

/* The public wrappers: argument checks, then the formula in a scope. */
#define ACTIVATION(name, needs_float)                                          \
  jx_array *jx_nn_##name(jx_array *x) {                                        \
    if (np_null_arg("jx_nn_" #name, x, "x")) return NULL;                         \
    if ((needs_float) && !need_float("jx_nn_" #name, x)) return NULL;          \
    jx_scope_begin();                                                          \
    return np_scope_return(name##_(x));                                           \
  }
#define ACTIVATION_P(name, type, param)                                        \
  jx_array *jx_nn_##name(jx_array *x, type param) {                            \
    if (np_null_arg("jx_nn_" #name, x, "x")) return NULL;                         \
    jx_scope_begin();                                                          \
    return np_scope_return(name##_(x, param));                                    \
  }

ACTIVATION(relu, false)
ACTIVATION(relu6, false)
ACTIVATION(sigmoid, true)
ACTIVATION(softplus, false)
ACTIVATION(sparse_plus, false)
ACTIVATION(soft_sign, false)
ACTIVATION(silu, true)
ACTIVATION(log_sigmoid, false)
ACTIVATION(hard_sigmoid, false)
ACTIVATION(hard_silu, false)
ACTIVATION(hard_tanh, false)
ACTIVATION(selu, false)
ACTIVATION(mish, false)
ACTIVATION_P(elu, double, alpha)
ACTIVATION_P(celu, double, alpha)
ACTIVATION_P(gelu, bool, approximate)
ACTIVATION_P(squareplus, double, b)
ACTIVATION_P(leaky_relu, double, negative_slope)

jx_array *jx_nn_swish(jx_array *x) {
  if (np_null_arg("jx_nn_swish", x, "x")) return NULL;
  if (!need_float("jx_nn_swish", x)) return NULL;
  jx_scope_begin();
  return np_scope_return(silu_(x));
}

jx_array *jx_nn_hard_swish(jx_array *x) {
  if (np_null_arg("jx_nn_hard_swish", x, "x")) return NULL;
  jx_scope_begin();
  return np_scope_return(hard_silu_(x));
}

jx_array *jx_nn_identity(jx_array *x) {
  if (np_null_arg("jx_nn_identity", x, "x")) return NULL;
  return jx_ref(x);
}

/* jax.nn.glu: x1 * sigmoid(x2) with x1, x2 the halves of x along axis. */
jx_array *jx_nn_glu(jx_array *x, int axis) {
  const char *fn = "jx_nn_glu";
  if (np_null_arg(fn, x, "x") || !need_float(fn, x)) return NULL;
  if (!array_normalize_axis(fn, &axis, x->ndim)) return NULL;
  if (x->shape[axis] % 2 != 0) {
    char b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: axis %d of shape %s has odd size %lld (must split in two)",
              fn, axis, error_shape_str(b, x->ndim, x->shape), (long long)x->shape[axis]);
    return NULL;
  }
  jx_scope_begin();
  jx_array *half[2] = {NULL, NULL};
  jx_split(x, 2, axis, half);
  return np_scope_return(jx_multiply(half[0], half[1] ? sigmoid_(half[1]) : NULL));
}

/* ================================================== softmax and friends */

/* The reduction over (naxes, axes) of x: validated once, used by every helper below. */
typedef struct Red {
  int naxes;
  int axes[JX_MAX_NDIM];
  int64_t count;               /* elements per reduction */
  int64_t kshape[JX_MAX_NDIM]; /* keepdims shape */
} Red;

static bool red_setup(const char *fn, jx_array *x, int naxes, const int *axes, Red *r) {
  bool mask[JX_MAX_NDIM];
  if (!array_axes_mask(fn, naxes, axes, x->ndim, mask)) return false;
  r->naxes = 0;
  r->count = 1;
  for (int d = 0; d < x->ndim; d++) {
    r->kshape[d] = mask[d] ? 1 : x->shape[d];
    if (mask[d]) r->axes[r->naxes++] = d, r->count *= x->shape[d];
  }
  return true;
}

/* Whether m (named `what`) broadcasts to x's shape; JX_ERR_SHAPE naming fn otherwise. */
static bool broadcasts_to(const char *fn, const char *what, jx_array *m, jx_array *x) {
  bool ok = m->ndim <= x->ndim;
  for (int d = 0; ok && d < m->ndim; d++) {
    int64_t md = m->shape[m->ndim - 1 - d], xd = x->shape[x->ndim - 1 - d];
    ok = md == 1 || md == xd;
  }
  if (!ok) {
    char a[ERROR_SHAPE_BUF], b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: %s of shape %s does not broadcast to x's shape %s", fn, what,
              error_shape_str(a, m->ndim, m->shape), error_shape_str(b, x->ndim, x->shape));
  }
  return ok;
}

/* The `where` mask as bool broadcast to x's shape; NULL stays NULL. */
static bool prepare_where(const char *fn, jx_array *x, jx_array *where, jx_array **out) {
  *out = NULL;
  if (!where) return true;
  if (!broadcasts_to(fn, "where", where, x)) return false;
  *out = jx_broadcast_to(jx_astype(where, JX_BOOL), x->ndim, x->shape);
  return *out != NULL;
}

/* jnp.max(x, axes, where=where, initial=-inf, keepdims=True). */
static jx_array *max_initial(jx_array *x, const Red *r, jx_array *where) {
  if (where) x = jx_where(where, x, wf(-INFINITY));
  if (!x) return NULL;
  if (r->count == 0) return jx_full(x->ndim, r->kshape, -INFINITY, x->dtype);
  return jx_max(x, r->naxes, r->axes, true); /* the -inf initial changes nothing else */
}

/* jnp.sum(x, axes, where=where, keepdims=True). */
static jx_array *sum_where(jx_array *x, const Red *r, jx_array *where) {
  if (where) x = jx_where(where, x, wi(0));
  return jx_sum(x, r->naxes, r->axes, true);
}

/* Common argument handling: x floating (ints become the default float, as jnp.exp
 * does), axes validated, where prepared. */
static bool softmax_args(const char *fn, jx_array **x, int naxes, const int *axes,
                         jx_array *where, Red *r, jx_array **w) {
  if (np_null_arg(fn, *x, "x")) return false;
  if (!red_setup(fn, *x, naxes, axes, r)) return false;
  if (!prepare_where(fn, *x, where, w)) return false;
  *x = np_to_inexact(*x);
  return *x != NULL;
}

/* jax.nn.softmax (the custom-JVP _softmax): exp(x - max) / sum(exp(x - max)), zero
 * where masked. The max is a stop_gradient constant: softmax is shift-invariant, so
 * the derivative is JAX's rule y * (t - sum(y * t)). The division is a multiplication
 * by 1 / sum, as XLA computes it (its algebraic simplifier turns A / broadcast(B) into
 * A * broadcast(1 / B); `jax.jit(jax.nn.softmax).lower(x).compile().as_text()` on the
 * CPU shows divide(1, reduce_sum) then multiply): the same bits as JAX on the CPU, at
 * most 1 ulp from the correctly rounded quotient (tests/lib/test_nn.c), and one
 * division per row instead of per element (the fused cpu kernel's last pass was bound
 * by the vector division: 4096 x 1024 on one thread 0.60 -> 0.53 ns per element).
 * bfloat16 is computed in float32 on XLA's CPU: exp(x - max) and its sum are bfloat16
 * values, but the reciprocal is float32's and the product is rounded to bfloat16 once
 * (rounding 1 / sum to bfloat16 first put 27% of the probabilities of a (64, 256) input
 * 1 bfloat16 ulp off JAX's). float16 takes JAX's bits with the float16 reciprocal. */
jx_array *jx_nn_softmax(jx_array *x, int naxes, const int *axes, jx_array *where) {
  jx_scope_begin();
  Red r;
  jx_array *w;
  if (!softmax_args("jx_nn_softmax", &x, naxes, axes, where, &r, &w)) return np_scope_return(NULL);
  jx_array *x_max = jx_stop_gradient(max_initial(x, &r, w));
  jx_array *x_safe = w ? jx_where(w, x, wf(-INFINITY)) : x;
  jx_array *u = jx_exp(jx_subtract(x_safe, x_max));
  jx_array *s = sum_where(u, &r, w), *y;
  if (u && u->dtype == JX_BFLOAT16) /* as hard_sigmoid: float32's reciprocal, one rounding */
    y = jx_astype(jx_multiply(jx_astype(u, JX_FLOAT32), jx_divide(wf(1), jx_astype(s, JX_FLOAT32))),
                  JX_BFLOAT16);
  else
    y = jx_multiply(u, jx_divide(wf(1), s));
  return np_scope_return(w ? jx_where(w, y, wi(0)) : y);
}

/* jax.nn.log_softmax: shifted - log(sum(exp(shifted))), shifted = x - stop_gradient(max);
 * -inf where masked. For bfloat16 the exps enter the sum's float32 accumulation without
 * being rounded to bfloat16, as XLA's CPU compiles JAX's function (its conversion pair
 * f32 -> bf16 -> f32 folded away); the sum and its log are rounded as usual. Rounding the
 * exps too put 2% of a (64, 256) input's results 1 bfloat16 ulp off JAX's. */
jx_array *jx_nn_log_softmax(jx_array *x, int naxes, const int *axes, jx_array *where) {
  jx_scope_begin();
  Red r;
  jx_array *w;
  if (!softmax_args("jx_nn_log_softmax", &x, naxes, axes, where, &r, &w))
    return np_scope_return(NULL);
  jx_array *x_max = max_initial(x, &r, w);
  jx_array *x_safe = w ? jx_where(w, x, wf(-INFINITY)) : x;
  jx_array *shifted = jx_subtract(x_safe, jx_stop_gradient(x_max));
  jx_array *lse;
  if (shifted && shifted->dtype == JX_BFLOAT16) /* XLA's CPU feeds jnp.sum's float32 */
    lse = jx_log(jx_astype(sum_where(jx_exp(jx_astype(shifted, JX_FLOAT32)), &r, w), JX_BFLOAT16));
  else /* accumulation the exps unrounded (bfloat16 only; float16 rounds them) */
    lse = jx_log(sum_where(jx_exp(shifted), &r, w));
  jx_array *y = jx_subtract(shifted, lse);
  return np_scope_return(w ? jx_where(w, y, wf(-INFINITY)) : y);
}

/* jax.nn.logsumexp (jax/_src/ops/special.py): log(sum(b * exp(x - m))) + m with
 * m = stop_gradient(max, or 0 where the max is not finite); with b, a negative sum
 * gives NaN. b must broadcast to x's shape. */
jx_array *jx_nn_logsumexp(jx_array *x, int naxes, const int *axes, jx_array *b,
                          bool keepdims, jx_array *where) {
  const char *fn = "jx_nn_logsumexp";
  jx_scope_begin();
  Red r;
  jx_array *w, *bb = NULL;
  if (!softmax_args(fn, &x, naxes, axes, where, &r, &w)) return np_scope_return(NULL);
  if (w) x = jx_where(w, x, wi(0));
  if (b) {
    jx_array *xb[2];
    if (!broadcasts_to(fn, "b", b, x)) return np_scope_return(NULL);
    if (!np_promote(fn, 2, (jx_array *[]){x, np_to_inexact(b)}, xb)) return np_scope_return(NULL);
    bb = jx_broadcast_to(xb[1], x->ndim, x->shape);
    x = jx_where(jx_not_equal(bb, wi(0)), xb[0], wf(-INFINITY));
  }
  jx_array *amax = max_initial(x, &r, w);
  amax = jx_stop_gradient(jx_where(jx_isfinite(amax), amax, wi(0)));
  jx_array *e = jx_exp(jx_subtract(x, amax));
  if (bb) e = jx_multiply(e, bb);
  jx_array *sumexp = sum_where(e, &r, w);
  jx_array *out = jx_add(jx_log(jx_abs(sumexp)), amax);
  if (bb) out = jx_where(jx_less(jx_sign(sumexp), wi(0)), wf(NAN), out);
  if (out && !keepdims) out = jx_squeeze(out, r.naxes, r.axes);
  return np_scope_return(out);
}

/* ============================================================ one_hot */

/* jax.nn.one_hot(x, num_classes, dtype=dtype, axis=axis): (x[..., None] == iota) cast
 * to dtype, the class axis inserted at `axis` of the result. */
jx_array *jx_nn_one_hot(jx_array *x, int64_t num_classes, jx_dtype dtype, int axis) {
  const char *fn = "jx_nn_one_hot";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (num_classes < 0) {
    error_set(JX_ERR_VALUE, "%s: num_classes must be >= 0, got %lld", fn, (long long)num_classes);
    return NULL;
  }
  if (dtype_is_bool(x->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: indices must be integers (or floats), got bool", fn);
    return NULL;
  }
  if (!dtype_is_valid(dtype)) {
    error_set(JX_ERR_DTYPE, "%s: invalid dtype %d", fn, (int)dtype);
    return NULL;
  }
  if (x->ndim + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: result rank %d exceeds %d", fn, x->ndim + 1, JX_MAX_NDIM);
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, x->ndim + 1)) return NULL;
  jx_scope_begin();
  int64_t shape[JX_MAX_NDIM];
  for (int d = 0; d <= x->ndim; d++) shape[d] = d == axis ? num_classes : 1;
  /* the classes in x's dtype (a complex x: its real dtype's, converted: no complex iota) */
  jx_dtype cd = dtype_is_complex(x->dtype) ? dtype_real_part(x->dtype) : x->dtype;
  jx_array *iota = jx_reshape(jx_astype(jx_arange(0, (double)num_classes, 1, cd), x->dtype), x->ndim + 1, shape);
  jx_array *hit = jx_equal(jx_expand_dims(x, axis), iota);
  return np_scope_return(jx_astype(hit, dtype));
}

/* ========================================================= standardize */

/* jnp.mean(x, axes, keepdims=True, where=w) for inexact x: float16/bfloat16 are summed
 * in float32 and the result cast back, as jnp's _mean does. */
static jx_array *mean_where(jx_array *x, const Red *r, jx_array *w) {
  if (!w) return jx_mean(x, r->naxes, r->axes, true);
  jx_dtype dt = jx_dtype_of(x);
  jx_dtype ct = dt == JX_FLOAT16 || dt == JX_BFLOAT16 ? JX_FLOAT32 : dt;
  jx_array *num = sum_where(jx_astype(x, ct), r, w);
  jx_array *den = jx_sum(jx_astype(w, ct), r->naxes, r->axes, true);
  return jx_astype(jx_divide(num, den), dt);
}

/* jax.nn.standardize(x, axis, mean, variance, epsilon, where), algorithm "fast":
 * (x - mean) * rsqrt(variance + epsilon) with variance = max(mean(x^2) - mean^2, 0).
 * For bfloat16, x^2 enters mean's float32 sum unrounded, as XLA's CPU compiles JAX's
 * jitted function (as log_softmax's exps); rounding it put 230 of a (64, 256) input's
 * 16384 results 1 bfloat16 ulp off JAX's. */
jx_array *jx_nn_standardize(jx_array *x, int naxes, const int *axes, jx_array *mean,
                            jx_array *variance, double epsilon, jx_array *where) {
  const char *fn = "jx_nn_standardize";
  if (np_null_arg(fn, x, "x")) return NULL;
  jx_scope_begin();
  Red r;
  jx_array *w;
  if (!red_setup(fn, x, naxes, axes, &r) || !prepare_where(fn, x, where, &w) ||
      (mean && !broadcasts_to(fn, "mean", mean, x)) ||
      (variance && !broadcasts_to(fn, "variance", variance, x)))
    return np_scope_return(NULL);
  x = np_to_inexact(x);
  if (!mean) mean = mean_where(x, &r, w);
  if (!variance) {
    jx_array *msq = x && x->dtype == JX_BFLOAT16 /* squares enter the sum unrounded */
                        ? jx_astype(mean_where(jx_square(jx_astype(x, JX_FLOAT32)), &r, w), JX_BFLOAT16)
                        : mean_where(jx_square(x), &r, w);
    variance = jx_subtract(msq, jx_square(mean));
    variance = jx_maximum(wi(0), variance); /* jnp.clip(variance, 0) */
  }
  jx_array *y = jx_multiply(jx_subtract(x, mean), jx_rsqrt(jx_add(variance, wf(epsilon))));
  return np_scope_return(y);
}

/* ============================================================ attention */

/* Pads a's shape with leading 1s to rank 4 (JAX's _ensure_4d); NULL passes through. */
static jx_array *ensure_4d(jx_array *a) {
  if (!a || a->ndim >= 4) return a;
  int64_t shape[4] = {1, 1, 1, 1};
  int pad = 4 - a->ndim;
  for (int d = 0; d < a->ndim; d++) shape[pad + d] = a->shape[d];
  return jx_reshape(a, 4, shape);
}

/* bias / mask of shape (tB, tN, tT, tS), each 1 or (B, N, T, S), as (tB, K|1, G|1, tT, tS)
 * to broadcast against the grouped logits (B, K, G, T, S). */
static jx_array *to_grouped(const char *fn, const char *what, jx_array *t, const int64_t *bnts,
                            int64_t K, int64_t G) {
  if (!t) return NULL;
  for (int d = 0; d < 4; d++)
    if (t->shape[d] != 1 && t->shape[d] != bnts[d]) {
      char a[ERROR_SHAPE_BUF], b[ERROR_SHAPE_BUF];
      error_set(JX_ERR_SHAPE, "%s: %s shape %s does not broadcast to (B, N, T, S) = %s", fn,
                what, error_shape_str(a, 4, t->shape), error_shape_str(b, 4, bnts));
      return NULL;
    }
  int64_t s[5] = {t->shape[0], 1, 1, t->shape[2], t->shape[3]};
  if (t->shape[1] != 1) s[1] = K, s[2] = G;
  return jx_reshape(t, 5, s);
}

/* jax.nn.dot_product_attention, implementation "xla" (_dot_product_attention_xla and
 * _dot_product_attention_core): grouped-query layout, logits in promote(q, float32),
 * masked logits set to -0.7 * finfo.max (capped at float32's), softmax in float32,
 * probabilities cast to key's dtype. */
jx_array *jx_nn_dot_product_attention(jx_array *query, jx_array *key, jx_array *value,
                                      jx_array *bias, jx_array *mask, double scale,
                                      bool is_causal) {
  const char *fn = "jx_nn_dot_product_attention";
  if (np_null_arg(fn, query, "query") || np_null_arg(fn, key, "key") || np_null_arg(fn, value, "value"))
    return NULL;
  char a[ERROR_SHAPE_BUF], b[ERROR_SHAPE_BUF];
  const jx_array *in[3] = {query, key, value};
  const char *names[3] = {"query", "key", "value"};
  for (int i = 0; i < 3; i++)
    if (in[i]->ndim != 3 && in[i]->ndim != 4) {
      error_set(JX_ERR_SHAPE, "%s: %s must be (B, T, N, H) or (T, N, H), got shape %s", fn,
                names[i], error_shape_str(a, in[i]->ndim, in[i]->shape));
      return NULL;
    }
  if (!dtype_is_floating(key->dtype) || query->dtype != key->dtype ||
      value->dtype != key->dtype) {
    error_set(JX_ERR_DTYPE, "%s: query, key and value must share one floating dtype, got %s, %s, %s",
              fn, jx_dtype_name(query->dtype), jx_dtype_name(key->dtype),
              jx_dtype_name(value->dtype));
    return NULL;
  }
  if (mask && !dtype_is_bool(mask->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: mask must be bool, got %s", fn, jx_dtype_name(mask->dtype));
    return NULL;
  }
  if ((bias && bias->ndim > 4) || (mask && mask->ndim > 4)) {
    jx_array *t = bias && bias->ndim > 4 ? bias : mask;
    error_set(JX_ERR_SHAPE, "%s: %s must have rank <= 4, got shape %s", fn,
              t == bias ? "bias" : "mask", error_shape_str(a, t->ndim, t->shape));
    return NULL;
  }
  jx_scope_begin();
  jx_array *q = ensure_4d(query), *k = ensure_4d(key), *v = ensure_4d(value);
  if (!q || !k || !v) return np_scope_return(NULL);
  const int64_t B = k->shape[0], S = k->shape[1], K = k->shape[2], H = k->shape[3];
  const int64_t T = q->shape[1], N = q->shape[2];
  if (memcmp(v->shape, k->shape, sizeof(int64_t) * 4) != 0 || q->shape[0] != B ||
      q->shape[3] != H) {
    error_set(JX_ERR_SHAPE,
              "%s: key %s and value %s must be equal (B, S, K, H), query %s must be (B, T, N, H)",
              fn, error_shape_str(a, 4, k->shape), error_shape_str(b, 4, v->shape),
              error_shape_str((char[ERROR_SHAPE_BUF]){0}, 4, q->shape));
    return np_scope_return(NULL);
  }
  if (K == 0 || N % K != 0) {
    error_set(JX_ERR_SHAPE,
              "%s: the number of query heads must be a multiple of key/value heads, got %lld vs %lld",
              fn, (long long)N, (long long)K);
    return np_scope_return(NULL);
  }
  const int64_t G = N / K;
  const int64_t bnts[4] = {B, N, T, S};
  jx_array *bias5 = bias ? to_grouped(fn, "bias", ensure_4d(bias), bnts, K, G) : NULL;
  jx_array *mask5 = mask ? to_grouped(fn, "mask", ensure_4d(mask), bnts, K, G) : NULL;
  if ((bias && !bias5) || (mask && !mask5)) return np_scope_return(NULL);

  bool weak;
  jx_dtype ldt = jx_promote_types(q->dtype, false, JX_FLOAT32, false, &weak);
  if (scale == 0) scale = 1.0 / sqrt((double)H);
  /* logits (B, K, G, T, S) = q (B, K, G, T, H) @ k (B, K, 1, H, S) */
  jx_array *qg = jx_transpose(jx_reshape(q, 5, (int64_t[]){B, T, K, G, H}), (int[]){0, 2, 3, 1, 4});
  jx_array *kg = jx_expand_dims(jx_transpose(k, (int[]){0, 2, 3, 1}), 2);
  jx_array *logits = jx_matmul(jx_astype(qg, ldt), jx_astype(kg, ldt));
  logits = jx_multiply(logits, jx_scalar_of(scale, ldt));
  if (bias5) logits = jx_astype(jx_add(logits, bias5), ldt);
  jx_array *keep = mask5;
  if (is_causal) {
    jx_array *causal = jx_tri(T, S, 0, JX_BOOL); /* (T, S) */
    keep = keep ? jx_logical_and(keep, causal) : causal;
  }
  if (keep) {
    double big = ldt == JX_FLOAT64 ? 3.4028234663852886e38 : dtype_max_value(ldt);
    logits = jx_where(keep, logits, jx_scalar_of(-0.7 * big, ldt));
  }
  jx_array *probs = jx_astype(jx_nn_softmax(jx_astype(logits, JX_FLOAT32), 1, (int[]){-1}, NULL),
                              k->dtype);
  /* encoded (B, K, G, T, H) = probs (B, K, G, T, S) @ v (B, K, 1, S, H) */
  jx_array *vg = jx_expand_dims(jx_transpose(v, (int[]){0, 2, 1, 3}), 2);
  jx_array *enc = jx_transpose(jx_matmul(probs, vg), (int[]){0, 3, 1, 2, 4});
  return np_scope_return(jx_reshape(enc, query->ndim, query->shape));
}

/* ========================================================= initializers */

/* jax.nn.initializers (jax/_src/nn/initializers.py): a draw from jx_random_* times
 * constants that are strong scalars of dtype (jnp.array(c, dtype)), as in JAX. */

static bool init_dtype(const char *fn, jx_dtype *dtype) {
  if (dtype_is_valid(*dtype) && dtype_is_floating(*dtype)) {
    *dtype = dtype_canonicalize(*dtype);
    return true;
  }
  error_set(JX_ERR_DTYPE, "%s: dtype must be floating, got %s", fn,
            dtype_is_valid(*dtype) ? jx_dtype_name(*dtype) : "an invalid dtype");
  return false;
}

jx_array *jx_nn_init_constant(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                              double value) {
  if (!init_dtype("jx_nn_init_constant", &dtype)) return NULL;
  return jx_full(ndim, shape, value, dtype);
}

jx_array *jx_nn_init_zeros(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  if (!init_dtype("jx_nn_init_zeros", &dtype)) return NULL;
  return jx_zeros(ndim, shape, dtype);
}

jx_array *jx_nn_init_ones(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  if (!init_dtype("jx_nn_init_ones", &dtype)) return NULL;
  return jx_ones(ndim, shape, dtype);
}

/* random(...) * jnp.array(c, dtype) */
static jx_array *scaled(jx_array *draw, double c, jx_dtype dtype) {
  return jx_multiply(draw, jx_scalar_of(c, dtype));
}

jx_array *jx_nn_init_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                             double scale) {
  if (!init_dtype("jx_nn_init_uniform", &dtype)) return NULL;
  jx_scope_begin();
  return np_scope_return(scaled(jx_random_uniform(key, ndim, shape, dtype, 0, 1), scale, dtype));
}

jx_array *jx_nn_init_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                            double stddev) {
  if (!init_dtype("jx_nn_init_normal", &dtype)) return NULL;
  jx_scope_begin();
  return np_scope_return(scaled(jx_random_normal(key, ndim, shape, dtype), stddev, dtype));
}

jx_array *jx_nn_init_truncated_normal(jx_array *key, int ndim, const int64_t *shape,
                                      jx_dtype dtype, double stddev, double lower,
                                      double upper) {
  if (!init_dtype("jx_nn_init_truncated_normal", &dtype)) return NULL;
  jx_scope_begin();
  jx_array *t = jx_random_truncated_normal(key, lower, upper, ndim, shape, dtype);
  return np_scope_return(scaled(t, stddev, dtype));
}

/* _compute_fans with integer in/out axes and no batch axis. */
static bool compute_fans(const char *fn, int ndim, const int64_t *shape, int in_axis,
                         int out_axis, double *fan_in, double *fan_out) {
  if (ndim <= 1 && in_axis == -2) {
    error_set(JX_ERR_SHAPE,
              "%s: can't compute input and output sizes of a %d-dimensional weights tensor "
              "with the default in_axis (-2); it must be at least 2-d", fn, ndim);
    return false;
  }
  if (!array_normalize_axis(fn, &in_axis, ndim) || !array_normalize_axis(fn, &out_axis, ndim))
    return false;
  double total = 1;
  for (int d = 0; d < ndim; d++) total *= (double)shape[d];
  double in = (double)shape[in_axis], out = (double)shape[out_axis];
  if (in == 0 || out == 0) {
    error_set(JX_ERR_VALUE, "%s: zero fan (in_axis size %g, out_axis size %g)", fn, in, out);
    return false;
  }
  double receptive = total / in / out;
  *fan_in = in * receptive, *fan_out = out * receptive;
  return true;
}

static jx_array *variance_scaling(const char *fn, jx_array *key, int ndim, const int64_t *shape,
                                  jx_dtype dtype, double scale, jx_nn_fan_mode mode,
                                  jx_nn_distribution distribution, int in_axis, int out_axis) {
  if (!init_dtype(fn, &dtype)) return NULL;
  if (!array_check_shape(fn, ndim, shape)) return NULL;
  double fan_in, fan_out, den;
  if (!compute_fans(fn, ndim, shape, in_axis, out_axis, &fan_in, &fan_out)) return NULL;
  switch (mode) {
  case JX_NN_FAN_IN: den = fan_in; break;
  case JX_NN_FAN_OUT: den = fan_out; break;
  case JX_NN_FAN_AVG: den = (fan_in + fan_out) / 2; break;
  case JX_NN_FAN_GEO_AVG: den = sqrt(fan_in * fan_out); break;
  default:
    error_set(JX_ERR_VALUE, "%s: invalid mode %d for variance scaling", fn, (int)mode);
    return NULL;
  }
  if (distribution != JX_NN_TRUNCATED_NORMAL && distribution != JX_NN_NORMAL &&
      distribution != JX_NN_UNIFORM) {
    error_set(JX_ERR_VALUE, "%s: invalid distribution %d for variance scaling", fn,
              (int)distribution);
    return NULL;
  }
  jx_scope_begin();
  jx_array *variance = jx_scalar_of(scale / den, dtype);
  jx_array *r;
  if (distribution == JX_NN_TRUNCATED_NORMAL) {
    jx_array *stddev = jx_divide(jx_sqrt(variance), jx_scalar_of(0.87962566103423978, dtype));
    r = jx_multiply(jx_random_truncated_normal(key, -2, 2, ndim, shape, dtype), stddev);
  } else if (distribution == JX_NN_NORMAL) {
    r = jx_multiply(jx_random_normal(key, ndim, shape, dtype), jx_sqrt(variance));
  } else {
    r = jx_multiply(jx_random_uniform(key, ndim, shape, dtype, -1, 1),
                    jx_sqrt(jx_multiply(wi(3), variance)));
  }
  return np_scope_return(r);
}

jx_array *jx_nn_init_variance_scaling(jx_array *key, int ndim, const int64_t *shape,
                                      jx_dtype dtype, double scale, jx_nn_fan_mode mode,
                                      jx_nn_distribution distribution, int in_axis,
                                      int out_axis) {
  return variance_scaling("jx_nn_init_variance_scaling", key, ndim, shape, dtype, scale, mode,
                          distribution, in_axis, out_axis);
}

#define NAMED_INIT(name, scale, mode, dist)                                                  \
  jx_array *jx_nn_init_##name(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) { \
    return variance_scaling("jx_nn_init_" #name, key, ndim, shape, dtype, scale, mode, dist, -2, \
                            -1);                                                              \
  }
NAMED_INIT(glorot_uniform, 1.0, JX_NN_FAN_AVG, JX_NN_UNIFORM)
NAMED_INIT(glorot_normal, 1.0, JX_NN_FAN_AVG, JX_NN_TRUNCATED_NORMAL)
NAMED_INIT(he_uniform, 2.0, JX_NN_FAN_IN, JX_NN_UNIFORM)
NAMED_INIT(he_normal, 2.0, JX_NN_FAN_IN, JX_NN_TRUNCATED_NORMAL)
NAMED_INIT(lecun_uniform, 1.0, JX_NN_FAN_IN, JX_NN_UNIFORM)
NAMED_INIT(lecun_normal, 1.0, JX_NN_FAN_IN, JX_NN_TRUNCATED_NORMAL)

/* jax.nn.initializers.orthogonal(scale, column_axis): a normal (n_rows, n_cols) draw --
 * (n_cols, n_rows) when n_rows < n_cols -- and the Q of its QR decomposition with R's
 * diagonal made positive (JAX multiplies Q by sign(diag(R))), which is exactly what
 * Gram-Schmidt produces. Q is computed on the host in float64 with classical
 * Gram-Schmidt applied twice per column (CGS2, orthogonal to working precision), then
 * rounded to dtype; JAX's LAPACK float32 QR agrees to a few float32 ulps. The key must
 * be concrete (JX_ERR_VALUE for a tracer, e.g. under jit). */
static void gram_schmidt(double *a, int64_t rows, int64_t cols) { /* columns of a, in place */
  for (int64_t j = 0; j < cols; j++) {
    for (int pass = 0; pass < 2; pass++)
      for (int64_t k = 0; k < j; k++) {
        double dot = 0;
        for (int64_t i = 0; i < rows; i++) dot += a[i * cols + k] * a[i * cols + j];
        for (int64_t i = 0; i < rows; i++) a[i * cols + j] -= dot * a[i * cols + k];
      }
    double nrm = 0;
    for (int64_t i = 0; i < rows; i++) nrm += a[i * cols + j] * a[i * cols + j];
    nrm = sqrt(nrm);
    for (int64_t i = 0; i < rows; i++) a[i * cols + j] = nrm > 0 ? a[i * cols + j] / nrm : 0;
  }
}

jx_array *jx_nn_init_orthogonal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                                double scale, int column_axis) {
  const char *fn = "jx_nn_init_orthogonal";
  if (!init_dtype(fn, &dtype) || np_null_arg(fn, key, "key") || !array_check_shape(fn, ndim, shape))
    return NULL;
  if (ndim < 2) {
    error_set(JX_ERR_SHAPE, "%s: orthogonal initializers need at least 2 dimensions, got %d", fn, ndim);
    return NULL;
  }
  if (!array_normalize_axis(fn, &column_axis, ndim)) return NULL;
  if (key->tracer) {
    error_set(JX_ERR_VALUE, "%s: the key must be concrete (the QR runs on the host)", fn);
    return NULL;
  }
  int64_t n_cols = shape[column_axis], total = shape_numel(ndim, shape);
  int64_t n_rows = n_cols ? total / n_cols : 0;
  bool wide = n_rows < n_cols;
  int64_t r = wide ? n_cols : n_rows, c = wide ? n_rows : n_cols;
  jx_scope_begin();
  jx_array *a = jx_astype(jx_random_normal(key, 2, (int64_t[]){r, c}, dtype), JX_FLOAT32);
  size_t cells = (size_t)(r * c > 0 ? r * c : 1);
  float *f = malloc(cells * sizeof *f);
  double *q = malloc(cells * sizeof *q);
  jx_array *out = NULL;
  if (a && f && q && jx_read(a, f, (size_t)(r * c) * sizeof *f) == JX_OK) {
    for (int64_t i = 0; i < r * c; i++) q[i] = f[i];
    gram_schmidt(q, r, c);
    /* Q (r, c), transposed when wide, is laid out as shape minus the column axis, then
     * the column axis last: (n_rows, n_cols) in C order */
    for (int64_t i = 0; i < n_rows; i++)
      for (int64_t j = 0; j < n_cols; j++) f[i * n_cols + j] = (float)(scale * (wide ? q[j * c + i] : q[i * c + j]));
    int64_t rest[JX_MAX_NDIM];
    int k = 0;
    for (int d = 0; d < ndim; d++)
      if (d != column_axis) rest[k++] = shape[d];
    rest[k++] = n_cols;
    jx_array *m = jx_astype(jx_array_from(f, JX_FLOAT32, ndim, rest), dtype);
    out = jx_moveaxis(m, -1, column_axis);
  }
  free(f), free(q);
  return np_scope_return(out);
}
