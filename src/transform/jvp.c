/* jvp.c -- forward-mode differentiation as an interpreter-stack level (autodidax's
 * JVPTrace): each tracer carries a primal and a tangent; a table of per-primitive rules
 * computes the output tangent from primitives, so rules compose with every other level.
 * Tangents are always materialized (zeros for constants); outputs of non-float dtype
 * get zero tangents without a rule (JAX's float0). Conventions follow JAX's rules in
 * jax/_src/lax/lax.py: d|x|/dx = 1 at 0, max/min ties split 0.5/0.5, reduce_max/min
 * average the tangent over tied elements, d sqrt(x)/dx = inf at 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/jvp.h"
#include "transform/custom.h"
#include "transform/linalg.h"
#include "transform/loops.h"
#include "transform/shard_map.h"
#include "trace/collective.h"

typedef struct JvpTracer {
  Tracer base;
  jx_array *primal, *tangent; /* held with array_retain */
} JvpTracer;

/* Tangent of the output from primals x, tangents t and the primal output y. Runs in
 * a scope: temporaries need no freeing. */
typedef jx_array *(*JvpRule)(int nin, jx_array *const *x, jx_array *const *t, jx_array *y,
                             const PrimParams *pp);
/* For primitives with several results: the nout primal results y and their tangents ty
 * (NULL: a symbolic zero) from primals x and tangents t (NULL: zero), computed together
 * (a call's JVP is one call of the JVP jaxpr). Runs in a scope like JvpRule. */
typedef jx_status (*JvpRuleN)(int nin, jx_array *const *x, jx_array *const *t,
                              const PrimParams *pp, int nout, jx_array **y, jx_array **ty);

/* ------------------------------------------------------ arithmetic helpers */

static jx_array *add(jx_array *a, jx_array *b) { return prim_binary(PRIM_add, a, b); }
static jx_array *sub(jx_array *a, jx_array *b) { return prim_binary(PRIM_sub, a, b); }
static jx_array *mul(jx_array *a, jx_array *b) { return prim_binary(PRIM_mul, a, b); }
static jx_array *dv(jx_array *a, jx_array *b) { return prim_binary(PRIM_div, a, b); }
static jx_array *neg(jx_array *a) { return prim_unary(PRIM_neg, a); }
static jx_array *c(jx_array *like, double v) { return tx_full_like(like, v); }
static jx_array *sq(jx_array *a) { return mul(a, a); }
static jx_array *sel(jx_array *p, jx_array *a, jx_array *b) { return prim_select(p, a, b); }

/* Tangent arithmetic with symbolic zeros (JAX's ad_util.Zero): NULL is a zero tangent,
 * so a constant operand contributes no term -- no inf * 0 = NaN. Operands are
 * evaluated in order, one statement each, so staged jaxprs are deterministic. */
static jx_array *tmul(jx_array *t, jx_array *k) { return t ? mul(t, k) : NULL; }
static jx_array *tdiv(jx_array *t, jx_array *k) { return t ? dv(t, k) : NULL; }
static jx_array *tadd(jx_array *a, jx_array *b) { return !a ? b : !b ? a : add(a, b); }
static jx_array *tsub(jx_array *a, jx_array *b) { return !b ? a : !a ? neg(b) : sub(a, b); }
/* A materialized tangent (zeros for a symbolic zero) shaped like x. */
static jx_array *tfull(jx_array *t, jx_array *x) { return t ? t : c(x, 0); }

/* ------------------------------------------------------------ the rules */

/* Unary rules: tangent t[0] (non-NULL: jvp_process skips all-zero tangents). */
static jx_array *jvp_neg(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return neg(t[0]);
}
static jx_array *jvp_abs(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  if (dtype_is_complex(x[0]->dtype)) {
    /* JAX's _abs_jvp_rule: real(t * conj(x) / |x|), |x| = 0 replaced by 1 */
    jx_array *ay = prim_convert(y, x[0]->dtype, y->weak);
    jx_array *den = sel(prim_binary(PRIM_eq, ay, c(ay, 0)), c(ay, 1), ay);
    return prim_unary(PRIM_real, mul(t[0], dv(prim_unary(PRIM_conj, x[0]), den)));
  }
  /* select(x >= 0, t, -t): slope 1 at 0, as JAX */
  jx_array *negative = prim_binary(PRIM_lt, x[0], c(x[0], 0));
  jx_array *nt = neg(t[0]);
  return sel(negative, nt, t[0]);
}
static jx_array *jvp_zero(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return NULL;
}
/* t * k(x, y) for the elementwise unary rules below */
#define UNARY_RULE(name, k)                                                              \
  static jx_array *jvp_##name(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, \
                              const PrimParams *pp) {                                   \
    jx_array *a = x[0];                                                                 \
    (void)a;                                                                            \
    jx_array *slope = (k);                                                              \
    return mul(t[0], slope);                                                            \
  }
UNARY_RULE(sin, prim_unary(PRIM_cos, a))
UNARY_RULE(cos, neg(prim_unary(PRIM_sin, a)))
UNARY_RULE(tan, add(c(y, 1), sq(y)))
UNARY_RULE(asin, prim_unary(PRIM_rsqrt, sub(c(a, 1), sq(a))))
UNARY_RULE(acos, neg(prim_unary(PRIM_rsqrt, sub(c(a, 1), sq(a)))))
UNARY_RULE(atan, prim_unary(PRIM_reciprocal, add(c(a, 1), sq(a))))
UNARY_RULE(sinh, prim_unary(PRIM_cosh, a))
UNARY_RULE(cosh, prim_unary(PRIM_sinh, a))
UNARY_RULE(tanh, sub(c(y, 1), sq(y)))
UNARY_RULE(asinh, prim_unary(PRIM_rsqrt, add(sq(a), c(a, 1))))
/* 1 / sqrt((x - 1)(x + 1)): JAX's form, accurate near 1. For complex x 1 / (sqrt(x - 1)
 * sqrt(x + 1)), the derivative of acosh's principal branch: JAX's single square root of
 * the product takes the other branch where re x < 0 (minus the derivative there). */
UNARY_RULE(acosh, dtype_is_complex(a->dtype)
                      ? prim_unary(PRIM_reciprocal, mul(prim_unary(PRIM_sqrt, sub(a, c(a, 1))),
                                                        prim_unary(PRIM_sqrt, add(a, c(a, 1)))))
                      : prim_unary(PRIM_rsqrt, mul(sub(a, c(a, 1)), add(a, c(a, 1)))))
UNARY_RULE(atanh, prim_unary(PRIM_reciprocal, sub(c(a, 1), sq(a))))
UNARY_RULE(exp, y)
UNARY_RULE(exp2, mul(y, c(y, M_LN2)))
UNARY_RULE(expm1, add(y, c(y, 1)))
UNARY_RULE(log, prim_unary(PRIM_reciprocal, a))
UNARY_RULE(log2, prim_unary(PRIM_reciprocal, mul(a, c(a, M_LN2))))
UNARY_RULE(log1p, prim_unary(PRIM_reciprocal, add(a, c(a, 1))))
UNARY_RULE(sqrt, prim_unary(PRIM_reciprocal, mul(y, c(y, 2)))) /* inf at 0, as JAX */
UNARY_RULE(rsqrt, mul(dv(y, a), c(y, -0.5)))
UNARY_RULE(cbrt, dv(c(y, 1.0 / 3.0), sq(y)))
UNARY_RULE(reciprocal, neg(sq(y)))
UNARY_RULE(erf, mul(c(a, 2.0 / sqrt(M_PI)), prim_unary(PRIM_exp, neg(sq(a)))))
UNARY_RULE(erfc, mul(c(a, -2.0 / sqrt(M_PI)), prim_unary(PRIM_exp, neg(sq(a)))))
#undef UNARY_RULE

static jx_array *jvp_add(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return tadd(t[0], t[1]);
}
static jx_array *jvp_sub(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return tsub(t[0], t[1]);
}
static jx_array *jvp_mul(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  jx_array *a = tmul(t[0], x[1]);
  jx_array *b = t[1] ? mul(x[0], t[1]) : NULL;
  return tadd(a, b);
}
static jx_array *jvp_div(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  jx_array *a = tdiv(t[0], x[1]);
  jx_array *b = t[1] ? mul(t[1], dv(y, x[1])) : NULL;
  return tsub(a, b);
}
static jx_array *jvp_rem(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* x - y * trunc(x / y) */
  jx_array *b = t[1] ? mul(t[1], prim_unary(PRIM_trunc, dv(x[0], x[1]))) : NULL;
  return tsub(t[0], b);
}
static jx_array *jvp_pow(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* JAX (_pow_jvp_lhs): d/dx = b * x^(b-1), for an integer exponent b (converted to
   * x's dtype) where(b == 0, 0, where(b == 0, 1, b) * x^(b-1)), so 0**0 has slope 0
   * rather than 0 * inf = NaN; d/db = log(where(x == 0, 1, x)) * y */
  jx_array *a = NULL, *b = NULL, *e = x[1];
  if (t[0]) {
    bool int_exponent = dtype_is_integer(e->dtype);
    if (int_exponent) e = prim_convert(e, x[0]->dtype, false);
    jx_array *em1 = sub(e, c(e, 1));
    jx_array *slope;
    if (int_exponent) {
      jx_array *zero = prim_binary(PRIM_eq, e, c(e, 0));
      slope = mul(sel(zero, c(e, 1), e), prim_binary(PRIM_pow, x[0], em1));
      slope = sel(zero, c(e, 0), slope);
    } else {
      slope = mul(e, prim_binary(PRIM_pow, x[0], em1));
    }
    a = mul(t[0], slope);
  }
  if (t[1]) {
    jx_array *zero = prim_binary(PRIM_eq, x[0], c(x[0], 0));
    jx_array *safe = sel(zero, c(x[0], 1), x[0]);
    jx_array *slope = mul(prim_unary(PRIM_log, safe), y);
    b = mul(t[1], slope);
  }
  return tadd(a, b);
}
/* max/min: the tangent of the winner; ties split 0.5/0.5 (JAX). */
static jx_array *minmax(jx_array *const *x, jx_array *const *t, bool is_max) {
  jx_array *a = x[0], *b = x[1];
  jx_array *wins = is_max ? prim_binary(PRIM_lt, b, a) : prim_binary(PRIM_lt, a, b);
  jx_array *tie = prim_binary(PRIM_eq, a, b);
  jx_array *half = sel(tie, c(a, 0.5), c(a, 0));
  jx_array *wa = sel(wins, c(a, 1), half);
  jx_array *ta = tmul(t[0], wa);
  jx_array *tb = t[1] ? mul(t[1], sub(c(a, 1), wa)) : NULL;
  return tadd(ta, tb);
}
static jx_array *jvp_max(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return minmax(x, t, true);
}
static jx_array *jvp_min(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return minmax(x, t, false);
}
static jx_array *jvp_atan2(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* atan2(a, b): (ta * b - tb * a) / (a^2 + b^2) */
  jx_array *den = add(sq(x[0]), sq(x[1]));
  jx_array *ta = t[0] ? mul(t[0], dv(x[1], den)) : NULL;
  jx_array *tb = t[1] ? mul(t[1], dv(x[0], den)) : NULL;
  return tsub(ta, tb);
}
static jx_array *jvp_select(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  if (!t[1] && !t[2]) return NULL;
  jx_array *a = tfull(t[1], x[1]);
  jx_array *b = tfull(t[2], x[2]);
  return sel(x[0], a, b);
}
/* d(a b + c) = da b + a db + dc (plain products and sums: the tangent need not be
 * rounded once) */
static jx_array *jvp_fma(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  jx_array *a = tmul(t[0], x[1]);
  jx_array *b = t[1] ? mul(x[0], t[1]) : NULL;
  return tadd(tadd(a, b), t[2]);
}
static jx_array *jvp_convert(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  if (!dtype_is_inexact(x[0]->dtype)) return NULL;
  return prim_convert(t[0], pp->dtype, pp->weak);
}
/* Linear primitives of one operand: the tangent goes through the same primitive. */
static jx_array *jvp_linear1(Prim p, jx_array *const *t, const PrimParams *pp) {
  return prim_bind(p, 1, t, pp);
}
static jx_array *jvp_real(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_real, t, pp);
}
static jx_array *jvp_imag(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_imag, t, pp);
}
static jx_array *jvp_conj(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_conj, t, pp);
}
static jx_array *jvp_complex(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return prim_binary(PRIM_complex, tfull(t[0], x[0]), tfull(t[1], x[1]));
}
static jx_array *jvp_fft(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_fft, t, pp); /* linear (JAX: ad.deflinear2) */
}
static jx_array *jvp_reduce_sum(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_reduce_sum, t, pp);
}
/* Broadcasts a reduction's result back over the reduced axes of x. */
static jx_array *unreduce(jx_array *r, jx_array *x, const PrimParams *pp) {
  bool mask[JX_MAX_NDIM] = {false};
  int bdims[JX_MAX_NDIM], n = 0;
  for (int i = 0; i < pp->naxes; i++) mask[pp->axes[i]] = true;
  for (int d = 0; d < x->ndim; d++)
    if (!mask[d]) bdims[n++] = d;
  return prim_broadcast_in_dim(r, x->ndim, x->shape, bdims);
}
static jx_array *jvp_reduce_minmax(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* average the tangent over the elements equal to the result (JAX's location trick) */
  jx_array *at = prim_binary(PRIM_eq, x[0], unreduce(y, x[0], pp));
  jx_array *loc = prim_convert(at, x[0]->dtype, false);
  jx_array *cnt = prim_bind(PRIM_reduce_sum, 1, &loc, pp);
  jx_array *w = dv(loc, unreduce(cnt, x[0], pp));
  jx_array *tw = mul(t[0], w);
  return prim_bind(PRIM_reduce_sum, 1, &tw, pp);
}
static jx_array *jvp_reduce_prod(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* sum_i t_i * prod_{j != i} x_j, the products from primals only (exact with zeros):
   * move the reduced axes last and flatten them to n, build (.., n, n) holding x with
   * ones on the diagonal, take the product over the last axis; then the tangent part
   * is a (linear) sum of t times those products. */
  jx_array *a = x[0];
  bool mask[JX_MAX_NDIM] = {false};
  for (int i = 0; i < pp->naxes; i++) mask[pp->axes[i]] = true;
  int perm[JX_MAX_NDIM] = {0}, k = 0;
  int64_t keep_shape[JX_MAX_NDIM + 2], n = 1;
  for (int d = 0; d < a->ndim; d++)
    if (!mask[d]) keep_shape[k] = a->shape[d], perm[k++] = d;
  int nkeep = k;
  for (int d = 0; d < a->ndim; d++)
    if (mask[d]) perm[k++] = d, n *= a->shape[d];
  if (nkeep + 2 > JX_MAX_NDIM) {
    error_set(JX_ERR_UNSUPPORTED, "reduce_prod: jvp needs rank %d > %d", nkeep + 2, JX_MAX_NDIM);
    return NULL;
  }
  keep_shape[nkeep] = n;
  jx_array *xs = prim_reshape(prim_transpose(a, perm), nkeep + 1, keep_shape);
  jx_array *ts = prim_reshape(prim_transpose(t[0], perm), nkeep + 1, keep_shape);
  int64_t sq_shape[JX_MAX_NDIM + 2];
  memcpy(sq_shape, keep_shape, sizeof(int64_t) * (size_t)(nkeep + 1));
  sq_shape[nkeep + 1] = n;
  int bd[JX_MAX_NDIM];
  for (int d = 0; d < nkeep; d++) bd[d] = d;
  bd[nkeep] = nkeep + 1; /* element j along the last axis */
  jx_array *xb = prim_broadcast_in_dim(xs, nkeep + 2, sq_shape, bd);
  jx_array *i = prim_iota(JX_INT32, nkeep + 2, sq_shape, nkeep);
  jx_array *j = prim_iota(JX_INT32, nkeep + 2, sq_shape, nkeep + 1);
  jx_array *m = sel(prim_binary(PRIM_eq, i, j), c(xb, 1), xb);
  bool last[JX_MAX_NDIM] = {false}, mid[JX_MAX_NDIM] = {false};
  last[nkeep + 1] = true;
  mid[nkeep] = true;
  jx_array *others = prim_reduce(PRIM_reduce_prod, m, last); /* (.., n) */
  return prim_reduce(PRIM_reduce_sum, mul(ts, others), mid);
}
static jx_array *jvp_reshape(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_reshape, t, pp);
}
static jx_array *jvp_transpose(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_transpose, t, pp);
}
static jx_array *jvp_broadcast(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_broadcast_in_dim, t, pp);
}
static jx_array *jvp_pad(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  PrimParams zero = *pp;
  zero.value = 0.0; /* the padding value is a constant */
  return jvp_linear1(PRIM_pad, t, &zero);
}
static jx_array *jvp_slice(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_slice, t, pp);
}
static jx_array *jvp_rev(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear1(PRIM_rev, t, pp);
}
static jx_array *jvp_concatenate(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  jx_array **ts = malloc((size_t)nin * sizeof *ts), *r = NULL;
  if (!ts) {
    error_set(JX_ERR_OOM, "jvp: out of memory");
    return NULL;
  }
  for (int i = 0; i < nin; i++) ts[i] = tfull(t[i], x[i]);
  r = prim_bind(PRIM_concatenate, nin, ts, pp);
  free(ts);
  return r;
}
static jx_array *jvp_gather(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return t[0] ? prim_bind(PRIM_gather, 2, (jx_array *[]){t[0], x[1]}, pp) : NULL;
}
static jx_array *jvp_dot_general(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  jx_array *a = t[0] ? prim_bind(PRIM_dot_general, 2, (jx_array *[]){t[0], x[1]}, pp) : NULL;
  jx_array *b = t[1] ? prim_bind(PRIM_dot_general, 2, (jx_array *[]){x[0], t[1]}, pp) : NULL;
  return tadd(a, b);
}
/* sort's results are its operands permuted by one sort of the first; the sort of
 * (x..., iota) gives that permutation, which carries every tangent (JAX's rule). */
static jx_status jvp_sort(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                          int nout, jx_array **y, jx_array **ty) {
  int axis = pp->axis;
  jx_dtype it = x[0]->shape[axis] > INT32_MAX ? JX_INT64 : JX_INT32;
  jx_array **ops = malloc((size_t)(nin + 1) * sizeof *ops), **res = malloc((size_t)(nin + 1) * sizeof *res);
  jx_status s = ops && res ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "jvp: out of memory");
  for (int i = 0; s == JX_OK && i < nin; i++) ops[i] = x[i];
  if (s == JX_OK && !(ops[nin] = prim_iota(it, x[0]->ndim, x[0]->shape, axis))) s = jx_last_status();
  if (s == JX_OK) s = prim_sort_n(nin + 1, ops, axis, res);
  for (int o = 0; s == JX_OK && o < nout; o++) {
    y[o] = res[o];
    ty[o] = t[o] ? tx_take_along(t[o], res[nin], axis) : NULL;
    if (t[o] && !ty[o]) s = jx_last_status();
  }
  free(ops), free(res);
  return s;
}

/* A call's JVP: the primal results from the call itself, the tangents from a second
 * call of its JVP jaxpr -- staged from (primals, nonzero tangents) to the tangents and
 * simplified (primal work the tangents do not need is dropped). Two calls rather than
 * one (JAX's partial evaluation of pjit): under linearize the primal call runs on
 * known values and only the tangent call is staged, linear in the tangents, with the
 * primal values it needs recomputed from known inputs when it is transposed. */
/* The JVP jaxpr of sub: inputs (primals, the tangents with t[i] non-NULL), outputs
 * every result's tangent (zeros instantiated), simplified; named jvp(name). */
Jaxpr *jvp_jaxpr(const Jaxpr *sub, jx_array *const *t) {
  int nin = sub->nin, nout = sub->nout;
  jx_array **in = calloc((size_t)(nin + 1), sizeof *in), **outs = calloc((size_t)(nout + 1), sizeof *outs);
  jx_status s = in && outs ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "jvp: out of memory");
  Trace *st = s == JX_OK ? stage_begin() : NULL, *jt = st ? jvp_begin() : NULL;
  if (s == JX_OK && !jt) s = jx_last_status();
  for (int i = 0; s == JX_OK && i < nin; i++) { /* primal inputs, then tangent inputs */
    Aval a = sub->vars[sub->invars[i]];
    if (!(in[i] = stage_new_input(st, &a))) s = jx_last_status();
  }
  for (int i = 0; s == JX_OK && i < nin; i++) {
    jx_array *tan = NULL;
    Aval a = sub->vars[sub->invars[i]];
    if (t[i] && !(tan = stage_new_input(st, &a))) s = jx_last_status();
    jx_array *p = in[i];
    if (s == JX_OK && !(in[i] = jvp_tracer(jt, p, tan))) s = jx_last_status();
  }
  if (s == JX_OK) s = prim_eval_jaxpr(sub, in, outs);
  for (int o = 0; s == JX_OK && o < nout; o++) {
    jx_array *p, *tn;
    jvp_unpack(jt, outs[o], &p, &tn);
    outs[o] = tn ? tn : tx_full_like(p, 0.0);
    if (!outs[o]) s = jx_last_status();
  }
  if (jt) trace_pop(jt);
  Jaxpr *J = st ? stage_end(st, s == JX_OK ? nout : 0, outs) : NULL;
  if (s == JX_OK && !J) s = jx_last_status();
  if (s == JX_OK) s = jaxpr_simplify(J);
  if (s == JX_OK) {
    const char *name = sub->name ? sub->name : "<lambda>";
    J->name = malloc(strlen(name) + 8);
    if (J->name) strcat(strcpy(J->name, "jvp("), name), strcat(J->name, ")");
  }
  free(in), free(outs);
  if (s != JX_OK) jaxpr_free(J), J = NULL;
  return J;
}

/* The operands of a JVP jaxpr call: the primals, then the non-NULL tangents. */
static int jvp_args(int nin, jx_array *const *x, jx_array *const *t, jx_array **args) {
  int n = 0;
  for (int i = 0; i < nin; i++) args[n++] = x[i];
  for (int i = 0; i < nin; i++)
    if (t[i]) args[n++] = t[i];
  return n;
}

static jx_status jvp_call(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                          int nout, jx_array **y, jx_array **ty) {
  Jaxpr *sub = pp->jaxpr;
  jx_array **args = calloc((size_t)(2 * nin + 1), sizeof *args);
  if (!args) {
    error_set(JX_ERR_OOM, "jvp: out of memory");
    return JX_ERR_OOM;
  }
  jx_status s = prim_call(sub, nin, x, y);
  Jaxpr *J = s == JX_OK ? jvp_jaxpr(sub, t) : NULL;
  if (s == JX_OK && !J) s = jx_last_status();
  if (s == JX_OK) s = prim_call(J, jvp_args(nin, x, t, args), args, ty);
  for (int o = 0; s == JX_OK && o < nout; o++)
    if (!dtype_is_inexact(y[o]->dtype)) ty[o] = NULL;
  jaxpr_free(J);
  free(args);
  return s;
}

/* special_call's JVP (JAX's custom_jvp): the primal call stays one special_call
 * (so higher derivatives use the rule again), the tangents come from its rule. */
static jx_status jvp_special(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                            int nout, jx_array **y, jx_array **ty) {
  uint64_t mark = error_mark();
  jx_status s = prim_special_call(pp->rule, pp->jaxpr, nin, x, y);
  if (s == JX_OK) s = pp->rule->jvp(nin, x, t, nout, y, ty);
  if (s == JX_OK && error_since(mark) && jx_last_status() != JX_OK) s = jx_last_status(); /* a rule's op failed */
  for (int o = 0; s == JX_OK && o < nout; o++) /* complex results keep theirs (det's) */
    if (!dtype_is_inexact(y[o]->dtype)) ty[o] = NULL;
  return s;
}

/* cond's JVP (JAX's _cond_jvp): the primal cond, and a cond of the branches' JVP
 * jaxprs (one tangent pattern for all) on the same index -- a second cond rather than
 * one, like a call's JVP, so linearize stages only the tangent cond. */
static jx_status jvp_cond(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                          int nout, jx_array **y, jx_array **ty) {
  int n = pp->nbranches;
  jx_array **args = calloc((size_t)(2 * nin + 1), sizeof *args);
  if (!args) {
    error_set(JX_ERR_OOM, "jvp: out of memory");
    return JX_ERR_OOM;
  }
  jx_status s = prim_cond(n, pp->branches, x[0], nin - 1, x + 1, y);
  Jaxpr *J[PRIM_MAX_BRANCHES] = {NULL};
  for (int b = 0; s == JX_OK && b < n; b++)
    if (!(J[b] = jvp_jaxpr(pp->branches[b], t + 1))) s = jx_last_status();
  if (s == JX_OK) s = prim_cond(n, J, x[0], jvp_args(nin - 1, x + 1, t + 1, args), args, ty);
  for (int o = 0; s == JX_OK && o < nout; o++)
    if (!dtype_is_inexact(y[o]->dtype)) ty[o] = NULL;
  for (int b = 0; b < n; b++) jaxpr_free(J[b]);
  free(args);
  return s;
}

/* checkpoint (JAX's remat JVP + partial evaluation, jax/_src/ad_checkpoint.py): the
 * primal results, and the values the policy saves, from a checkpoint of the program
 * on the primals; the tangents from a checkpoint of its JVP jaxpr on (primals, saved
 * values, tangents), in which every other primal value is recomputed. Under linearize
 * the second call is staged with only the primals and the saved values as residuals;
 * transposing it recomputes the rest (transpose_partial evaluates the known part
 * first). nothing_saveable saves nothing; everything_saveable every equation's result
 * the tangents use; dots_saveable dot_general results (dots_with_no_batch_dims_saveable:
 * those without batch dimensions). */
static bool policy_saves(unsigned policy, const JaxprEqn *q) {
  switch (policy) {
  case PRIM_CHECKPOINT_EVERYTHING: return true;
  case PRIM_CHECKPOINT_DOTS: return q->prim == PRIM_dot_general;
  case PRIM_CHECKPOINT_DOTS_NO_BATCH: return q->prim == PRIM_dot_general && q->params.nbatch == 0;
  default: return false;
  }
}

/* Evaluates sub on `in` by binding each equation. For equations with save[e], their
 * results are appended to res_out (when non-NULL) and, at JVP level jt with res_in,
 * their primal values are replaced by res_in's (the tangents kept). out: sub's
 * outputs. References belong to the caller's scope. */
static jx_status eval_saving(const Jaxpr *sub, jx_array *const *in, const bool *save, Trace *jt,
                             jx_array *const *res_in, jx_array **res_out, jx_array **out) {
  int most = 1;
  for (int e = 0; e < sub->neqns; e++)
    if (sub->eqns[e].nin + sub->eqns[e].nout > most) most = sub->eqns[e].nin + sub->eqns[e].nout;
  jx_array **env = calloc((size_t)sub->nvars + 1, sizeof *env);
  jx_array **args = calloc((size_t)most, sizeof *args);
  if (!env || !args) {
    free(env), free(args);
    error_set(JX_ERR_OOM, "checkpoint: out of memory");
    return JX_ERR_OOM;
  }
  for (int c = 0; c < sub->nconst; c++) env[sub->constvars[c]] = sub->consts[c];
  for (int i = 0; i < sub->nin; i++) env[sub->invars[i]] = in[i];
  jx_status s = JX_OK;
  int k = 0;
  for (int e = 0; s == JX_OK && e < sub->neqns; e++) {
    const JaxprEqn *q = &sub->eqns[e];
    jx_array **res = args + q->nin;
    for (int i = 0; i < q->nin; i++) args[i] = env[q->in[i]];
    s = prim_bind_n(q->prim, q->nin, args, &q->params, q->nout, res);
    for (int o = 0; s == JX_OK && o < q->nout; o++) {
      if (save[e]) {
        if (res_out) res_out[k] = res[o];
        if (res_in) {
          jx_array *p, *tn;
          jvp_unpack(jt, res[o], &p, &tn);
          if (!(res[o] = jvp_tracer(jt, res_in[k], tn))) s = jx_last_status();
        }
        k++;
      }
      env[q->out[o]] = res[o];
    }
  }
  for (int o = 0; s == JX_OK && o < sub->nout; o++) out[o] = env[sub->outvars[o]];
  free(env), free(args);
  return s;
}

/* The JVP jaxpr of sub with the saved values as inputs: (primals, saved, nonzero
 * tangents) -> every output's tangent; simplified, named jvp(name). */
static Jaxpr *jvp_jaxpr_saving(const Jaxpr *sub, const bool *save, int nres, const Aval *res_avals,
                               jx_array *const *t) {
  int nin = sub->nin, nout = sub->nout;
  jx_array **in = calloc((size_t)(nin + 1), sizeof *in), **outs = calloc((size_t)(nout + 1), sizeof *outs);
  jx_array **res = calloc((size_t)(nres + 1), sizeof *res);
  jx_status s = in && outs && res ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "jvp: out of memory");
  Trace *st = s == JX_OK ? stage_begin() : NULL, *jt = NULL;
  if (s == JX_OK && !st) s = jx_last_status();
  for (int i = 0; s == JX_OK && i < nin; i++)
    if (!(in[i] = stage_new_input(st, &sub->vars[sub->invars[i]]))) s = jx_last_status();
  for (int r = 0; s == JX_OK && r < nres; r++)
    if (!(res[r] = stage_new_input(st, &res_avals[r]))) s = jx_last_status();
  if (s == JX_OK && !(jt = jvp_begin())) s = jx_last_status();
  for (int i = 0; s == JX_OK && i < nin; i++) {
    jx_array *tan = NULL;
    if (t[i] && !(tan = stage_new_input(st, &sub->vars[sub->invars[i]]))) s = jx_last_status();
    if (s == JX_OK && !(in[i] = jvp_tracer(jt, in[i], tan))) s = jx_last_status();
  }
  if (s == JX_OK) s = eval_saving(sub, in, save, jt, res, NULL, outs);
  for (int o = 0; s == JX_OK && o < nout; o++) {
    jx_array *p, *tn;
    jvp_unpack(jt, outs[o], &p, &tn);
    if (!(outs[o] = tn ? tn : tx_full_like(p, 0.0))) s = jx_last_status();
  }
  if (jt) trace_pop(jt);
  Jaxpr *J = st ? stage_end(st, s == JX_OK ? nout : 0, outs) : NULL;
  if (s == JX_OK && !J) s = jx_last_status();
  if (s == JX_OK) s = jaxpr_simplify(J);
  if (s == JX_OK) {
    const char *name = sub->name ? sub->name : "<lambda>";
    if ((J->name = malloc(strlen(name) + 8))) strcat(strcat(strcpy(J->name, "jvp("), name), ")");
  }
  free(in), free(outs), free(res);
  if (s != JX_OK) jaxpr_free(J), J = NULL;
  return J;
}

/* sub with the saved values as extra outputs: x -> (outputs, saved). */
static Jaxpr *primal_saving(const Jaxpr *sub, const bool *save, int nres) {
  int nin = sub->nin, nout = sub->nout;
  jx_array **in = calloc((size_t)(nin + 1), sizeof *in), **outs = calloc((size_t)(nout + nres + 1), sizeof *outs);
  jx_status s = in && outs ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "checkpoint: out of memory");
  Trace *st = s == JX_OK ? stage_begin() : NULL;
  if (s == JX_OK && !st) s = jx_last_status();
  for (int i = 0; s == JX_OK && i < nin; i++)
    if (!(in[i] = stage_new_input(st, &sub->vars[sub->invars[i]]))) s = jx_last_status();
  if (s == JX_OK) s = eval_saving(sub, in, save, NULL, NULL, outs + nout, outs);
  Jaxpr *J = st ? stage_end(st, s == JX_OK ? nout + nres : 0, outs) : NULL;
  if (s == JX_OK && !J) s = jx_last_status();
  if (s == JX_OK && sub->name && !(J->name = strdup(sub->name))) s = JX_ERR_OOM;
  free(in), free(outs);
  if (s != JX_OK) jaxpr_free(J), J = NULL;
  return J;
}

static jx_status jvp_checkpoint(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                                int nout, jx_array **y, jx_array **ty) {
  Jaxpr *sub = pp->jaxpr, *J = NULL, *P = NULL;
  int ne = sub->neqns, nres = 0;
  bool *save = calloc((size_t)ne + 1, 1);
  Aval *ravals = NULL;
  jx_array **args = NULL, **pres = NULL;
  jx_status s = save ? JX_OK : JX_ERR_OOM;
  for (int e = 0; s == JX_OK && e < ne; e++)
    if ((save[e] = policy_saves(pp->flags, &sub->eqns[e]))) nres += sub->eqns[e].nout;
  /* Two passes: the JVP jaxpr with every value the policy allows saved shows which of
   * them the tangents use; only those are saved. */
  for (int pass = 0; s == JX_OK && pass < 2; pass++) {
    free(ravals);
    ravals = malloc((size_t)(nres + 1) * sizeof *ravals);
    if (!ravals) {
      s = JX_ERR_OOM;
      break;
    }
    for (int e = 0, k = 0; e < ne; e++)
      for (int o = 0; save[e] && o < sub->eqns[e].nout; o++) ravals[k++] = sub->vars[sub->eqns[e].out[o]];
    jaxpr_free(J);
    if (!(J = jvp_jaxpr_saving(sub, save, nres, ravals, t))) s = jx_last_status();
    if (s != JX_OK || pass == 1 || nres == 0) break;
    bool *used = calloc((size_t)J->nvars + 1, 1);
    if (!used) {
      s = JX_ERR_OOM;
      break;
    }
    for (int e = 0; e < J->neqns; e++)
      for (int i = 0; i < J->eqns[e].nin; i++) used[J->eqns[e].in[i]] = true;
    for (int o = 0; o < J->nout; o++) used[J->outvars[o]] = true;
    int k = 0, kept = 0;
    for (int e = 0; e < ne; e++) {
      if (!save[e]) continue;
      bool any = false;
      for (int o = 0; o < sub->eqns[e].nout; o++) any |= used[J->invars[nin + k + o]];
      k += sub->eqns[e].nout;
      save[e] = any;
      if (any) kept += sub->eqns[e].nout;
    }
    free(used);
    bool same = kept == nres;
    nres = kept;
    if (same) break; /* J is already the one */
  }
  if (s == JX_OK && nres > 0) {
    P = primal_saving(sub, save, nres);
    pres = calloc((size_t)(nout + nres + 1), sizeof *pres);
    if (!P || !pres) s = jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  }
  args = s == JX_OK ? calloc((size_t)(2 * nin + nres + 1), sizeof *args) : NULL;
  if (s == JX_OK && !args) s = JX_ERR_OOM;
  if (s == JX_OK && nres == 0) s = prim_checkpoint(sub, pp->flags, nin, x, y);
  if (s == JX_OK && nres > 0) {
    s = prim_checkpoint(P, pp->flags, nin, x, pres);
    for (int o = 0; s == JX_OK && o < nout; o++) y[o] = pres[o];
  }
  if (s == JX_OK) { /* (primals, saved, nonzero tangents) */
    int n = 0;
    for (int i = 0; i < nin; i++) args[n++] = x[i];
    for (int r = 0; r < nres; r++) args[n++] = pres[nout + r];
    for (int i = 0; i < nin; i++)
      if (t[i]) args[n++] = t[i];
    s = prim_checkpoint(J, pp->flags, n, args, ty);
  }
  for (int o = 0; s == JX_OK && o < nout; o++)
    if (!dtype_is_floating(y[o]->dtype)) ty[o] = NULL;
  if (s == JX_ERR_OOM && !error_pending()) error_set(s, "checkpoint: out of memory");
  jaxpr_free(J), jaxpr_free(P);
  free(save), free(ravals), free(args), free(pres);
  return s;
}

static jx_array *jvp_scatter_add(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  if (!t[0] && !t[2]) return NULL;
  jx_array *a = tfull(t[0], x[0]);
  jx_array *b = tfull(t[2], x[2]);
  return prim_scatter_add(a, x[1], b, pp->axis);
}

/* Collectives: psum, all_gather, psum_scatter, ppermute and all_to_all are linear (the
 * same collective of the tangent, as JAX's deflinear2); pmax and pmin have no rule in
 * JAX either (NotImplementedError), so differentiating them is an error here too. */
#define JVP_COLLECTIVE(name)                                                                  \
  static jx_array *jvp_##name(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, \
                              const PrimParams *pp) {                                       \
    return prim_collective_like(PRIM_##name, t[0], pp);                                     \
  }
JVP_COLLECTIVE(psum)
JVP_COLLECTIVE(all_gather)
JVP_COLLECTIVE(psum_scatter)
JVP_COLLECTIVE(ppermute)
JVP_COLLECTIVE(all_to_all)
static jx_array *jvp_pmax(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  error_set(JX_ERR_UNSUPPORTED, "Differentiation rule for 'pmax' not implemented (as in JAX)");
  return NULL;
}
static jx_array *jvp_pmin(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  error_set(JX_ERR_UNSUPPORTED, "Differentiation rule for 'pmin' not implemented (as in JAX)");
  return NULL;
}

/* One line per primitive. Absent on purpose: rules for primitives whose outputs are
 * never floating (comparisons, not/and/or/xor, shifts, reduce_and/or, is_nan/is_inf,
 * bitcast to ints): jvp_process gives them zero tangents. iota has no operands. */
static const struct {
  JvpRule one;    /* primitives with one result */
  JvpRuleN many;  /* primitives with several: primal and tangent results together */
} jvp_rules[PRIM_NUM] = {
    [PRIM_neg] = {jvp_neg},           [PRIM_abs] = {jvp_abs},
    [PRIM_sign] = {jvp_zero},         [PRIM_sin] = {jvp_sin},
    [PRIM_cos] = {jvp_cos},           [PRIM_tan] = {jvp_tan},
    [PRIM_asin] = {jvp_asin},         [PRIM_acos] = {jvp_acos},
    [PRIM_atan] = {jvp_atan},         [PRIM_sinh] = {jvp_sinh},
    [PRIM_cosh] = {jvp_cosh},         [PRIM_tanh] = {jvp_tanh},
    [PRIM_asinh] = {jvp_asinh},       [PRIM_acosh] = {jvp_acosh},
    [PRIM_atanh] = {jvp_atanh},       [PRIM_exp] = {jvp_exp},
    [PRIM_exp2] = {jvp_exp2},         [PRIM_expm1] = {jvp_expm1},
    [PRIM_log] = {jvp_log},           [PRIM_log2] = {jvp_log2},
    [PRIM_log1p] = {jvp_log1p},       [PRIM_sqrt] = {jvp_sqrt},
    [PRIM_rsqrt] = {jvp_rsqrt},       [PRIM_cbrt] = {jvp_cbrt},
    [PRIM_reciprocal] = {jvp_reciprocal},
    [PRIM_floor] = {jvp_zero},        [PRIM_ceil] = {jvp_zero},
    [PRIM_round] = {jvp_zero},        [PRIM_trunc] = {jvp_zero},
    [PRIM_erf] = {jvp_erf},           [PRIM_erfc] = {jvp_erfc},
    [PRIM_add] = {jvp_add},           [PRIM_sub] = {jvp_sub},
    [PRIM_mul] = {jvp_mul},           [PRIM_div] = {jvp_div},
    [PRIM_rem] = {jvp_rem},           [PRIM_pow] = {jvp_pow},
    [PRIM_max] = {jvp_max},           [PRIM_min] = {jvp_min},
    [PRIM_atan2] = {jvp_atan2},       [PRIM_select] = {jvp_select},
    [PRIM_fma] = {jvp_fma},
    [PRIM_real] = {jvp_real},         [PRIM_imag] = {jvp_imag},
    [PRIM_conj] = {jvp_conj},         [PRIM_complex] = {jvp_complex},
    [PRIM_convert_element_type] = {jvp_convert},
    [PRIM_bitcast_convert_type] = {jvp_zero},
    [PRIM_reduce_sum] = {jvp_reduce_sum},
    [PRIM_reduce_prod] = {jvp_reduce_prod},
    [PRIM_reduce_max] = {jvp_reduce_minmax},
    [PRIM_reduce_min] = {jvp_reduce_minmax},
    [PRIM_reshape] = {jvp_reshape},   [PRIM_transpose] = {jvp_transpose},
    [PRIM_broadcast_in_dim] = {jvp_broadcast},
    [PRIM_pad] = {jvp_pad},           [PRIM_slice] = {jvp_slice},
    [PRIM_rev] = {jvp_rev},           [PRIM_concatenate] = {jvp_concatenate},
    [PRIM_gather] = {jvp_gather},     [PRIM_dot_general] = {jvp_dot_general},
    [PRIM_stop_gradient] = {jvp_zero},
    [PRIM_sort] = {.many = jvp_sort},         [PRIM_scatter_add] = {jvp_scatter_add},
    [PRIM_jit] = {.many = jvp_call},
    [PRIM_special_call] = {.many = jvp_special},
    [PRIM_cholesky] = {.many = linalg_jvp_cholesky},
    [PRIM_triangular_solve] = {.many = linalg_jvp_triangular_solve},
    [PRIM_lu] = {.many = linalg_jvp_lu},   [PRIM_qr] = {.many = linalg_jvp_qr},
    [PRIM_eigh] = {.many = linalg_jvp_eigh}, [PRIM_svd] = {.many = linalg_jvp_svd},
    [PRIM_eig] = {.many = linalg_jvp_eig},
    [PRIM_tridiagonal_solve] = {.many = linalg_jvp_tridiagonal_solve},
    [PRIM_fft] = {jvp_fft},
    [PRIM_cond] = {.many = jvp_cond},
    [PRIM_custom_jvp_call] = {.many = custom_jvp_custom_jvp_call}, /* transform/custom.c */
    [PRIM_custom_vjp_call] = {.many = custom_jvp_custom_vjp_call},
    [PRIM_checkpoint] = {.many = jvp_checkpoint},
    [PRIM_while] = {.many = loops_jvp_while},
    [PRIM_scan] = {.many = loops_jvp_scan},
    [PRIM_psum] = {jvp_psum},             [PRIM_all_gather] = {jvp_all_gather},
    [PRIM_psum_scatter] = {jvp_psum_scatter}, [PRIM_ppermute] = {jvp_ppermute},
    [PRIM_all_to_all] = {jvp_all_to_all},
    [PRIM_pmax] = {jvp_pmax},             [PRIM_pmin] = {jvp_pmin},
    [PRIM_shard_map] = {.many = shard_map_jvp}, /* transform/shard_map.c */
};

/* Primitives without a JVP rule, and why (the rule-table test reads this). */
static const char *const jvp_absent[PRIM_NUM] = {
    [PRIM_not] = "integer/bool output: zero tangent",
    [PRIM_is_nan] = "bool output: zero tangent",
    [PRIM_is_inf] = "bool output: zero tangent",
    [PRIM_and] = "integer/bool output: zero tangent",
    [PRIM_or] = "integer/bool output: zero tangent",
    [PRIM_xor] = "integer/bool output: zero tangent",
    [PRIM_shift_left] = "integer output: zero tangent",
    [PRIM_shift_right] = "integer output: zero tangent",
    [PRIM_lt] = "bool output: zero tangent",
    [PRIM_ne] = "bool output: zero tangent",
    [PRIM_eq] = "bool output: zero tangent",
    [PRIM_reduce_and] = "bool output: zero tangent",
    [PRIM_reduce_or] = "bool output: zero tangent",
    [PRIM_threefry2x32] = "uint32 output: zero tangent",
    [PRIM_iota] = "no operands: never applied to a JVP tracer",
    [PRIM_axis_index] = "no operands: never applied to a JVP tracer",
    [PRIM_debug_print] = "no results: prints the primals (as JAX)",
    [PRIM_custom_lin] = "its tangents are linear functions known only to reverse mode: "
                        "forward mode through a custom_vjp is an error (its eval rule says so)",
};

bool jvp_has_rule(Prim p, const char **absent) {
  if (absent) *absent = (unsigned)p < PRIM_NUM ? jvp_absent[p] : NULL;
  return (unsigned)p < PRIM_NUM && (jvp_rules[p].one || jvp_rules[p].many);
}

/* ------------------------------------------------------------- the trace */

static void jvp_release_tracer(Tracer *tr) {
  JvpTracer *j = (JvpTracer *)tr;
  array_drop(j->primal);
  array_drop(j->tangent);
  trace_unref(tr->trace);
  free(j);
}

jx_array *jvp_tracer(Trace *t, jx_array *primal, jx_array *tangent) {
  JvpTracer *j = malloc(sizeof *j);
  if (!j) {
    error_set(JX_ERR_OOM, "out of memory in jvp");
    return NULL;
  }
  *j = (JvpTracer){.base = {.trace = trace_ref(t), .release = jvp_release_tracer},
                   .primal = array_retain(primal), .tangent = array_retain(tangent)};
  /* tangent may be NULL: a symbolic zero */
  return array_new_tracer(&j->base, primal->dtype, primal->weak, primal->ndim, primal->shape);
}

void jvp_unpack(Trace *t, jx_array *x, jx_array **primal, jx_array **tangent) {
  if (trace_owns(t, x)) {
    JvpTracer *j = (JvpTracer *)x->tracer;
    *primal = j->primal;
    *tangent = j->tangent;
  } else {
    *primal = x;
    *tangent = NULL;
  }
}

static const TraceType jvp_type;

jx_array *jvp_concrete_value(jx_array *x) {
  while (x && x->tracer) {
    Trace *t = trace_of(x);
    if (!t || t->type != &jvp_type) return NULL;
    x = ((JvpTracer *)x->tracer)->primal;
  }
  return x;
}

static jx_status jvp_process(Trace *t, Prim p, int nin, jx_array *const *in,
                             const PrimParams *pp, int nout, const Aval *avals, jx_array **out) {
  jx_array **x = malloc((size_t)(2 * nin + 2 * nout + 1) * sizeof *x);
  if (!x) {
    error_set(JX_ERR_OOM, "out of memory in jvp");
    return JX_ERR_OOM;
  }
  jx_array **tx = x + nin, **y = tx + nin, **ty = y + nout;
  bool any = false;
  jx_scope_begin();
  for (int i = 0; i < nin; i++) {
    jvp_unpack(t, in[i], &x[i], &tx[i]);
    any |= tx[i] != NULL;
  }
  for (int o = 0; o < nout; o++) y[o] = ty[o] = NULL;
  bool floating = false;
  for (int o = 0; o < nout; o++) floating |= dtype_is_inexact(avals[o].dtype);
  jx_status s = JX_OK;
  /* Outputs that are not floating, and outputs of operands whose tangents are all
   * symbolic zeros, get a symbolic-zero tangent without a rule. */
  if (any && floating && !jvp_rules[p].one && !jvp_rules[p].many) {
    error_set(JX_ERR_UNSUPPORTED, "jvp: primitive %s has no differentiation rule", prim_name(p));
    s = JX_ERR_UNSUPPORTED;
  } else if (any && floating && jvp_rules[p].many) {
    s = jvp_rules[p].many(nin, x, tx, pp, nout, y, ty);
  } else {
    s = prim_bind_n(p, nin, x, pp, nout, y);
    if (s == JX_OK && any && floating) {
      ty[0] = jvp_rules[p].one(nin, x, tx, y[0], pp);
      if (!ty[0] && error_pending()) s = jx_last_status();
    }
  }
  for (int o = 0; s == JX_OK && o < nout; o++) {
    if (ty[o] && !dtype_is_inexact(avals[o].dtype)) ty[o] = NULL;
    if (!(out[o] = jvp_tracer(t, y[o], ty[o]))) s = jx_last_status();
  }
  if (s != JX_OK)
    for (int o = 0; o < nout; o++) jx_free(out[o]), out[o] = NULL;
  jx_scope_end(s == JX_OK ? nout : 0, out); /* the results move to the caller's scope */
  free(x);
  return s;
}

static const TraceType jvp_type = {.name = "jvp", .process = jvp_process};

Trace *jvp_begin(void) { return trace_push(&jvp_type, NULL); }
