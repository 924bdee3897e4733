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

typedef struct JvpTracer {
  Tracer base;
  jx_array *primal, *tangent; /* held with array_retain */
} JvpTracer;

/* Tangent of the output from primals x, tangents t and the primal output y. Runs in
 * a scope: temporaries need no freeing. */
typedef jx_array *(*JvpRule)(int nin, jx_array *const *x, jx_array *const *t, jx_array *y,
                             const PrimParams *pp);

/* ------------------------------------------------------ arithmetic helpers */

static jx_array *add(jx_array *a, jx_array *b) { return prim_binary(PRIM_add, a, b); }
static jx_array *sub(jx_array *a, jx_array *b) { return prim_binary(PRIM_sub, a, b); }
static jx_array *mul(jx_array *a, jx_array *b) { return prim_binary(PRIM_mul, a, b); }
static jx_array *dv(jx_array *a, jx_array *b) { return prim_binary(PRIM_div, a, b); }
static jx_array *neg(jx_array *a) { return prim_unary(PRIM_neg, a); }
static jx_array *c(jx_array *like, double v) { return tx_full_like(like, v); }
static jx_array *sq(jx_array *a) { return mul(a, a); }
static jx_array *sel(jx_array *p, jx_array *a, jx_array *b) { return prim_select(p, a, b); }

/* ------------------------------------------------------------ the rules */

static jx_array *jvp_neg(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return neg(t[0]);
}
static jx_array *jvp_abs(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* select(x >= 0, t, -t): slope 1 at 0, as JAX */
  return sel(prim_binary(PRIM_lt, x[0], c(x[0], 0)), neg(t[0]), t[0]);
}
static jx_array *jvp_zero(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return c(y, 0);
}
static jx_array *jvp_sin(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], prim_unary(PRIM_cos, x[0]));
}
static jx_array *jvp_cos(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], neg(prim_unary(PRIM_sin, x[0])));
}
static jx_array *jvp_tan(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], add(c(y, 1), sq(y)));
}
static jx_array *jvp_asin(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], prim_unary(PRIM_rsqrt, sub(c(x[0], 1), sq(x[0]))));
}
static jx_array *jvp_acos(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return neg(mul(t[0], prim_unary(PRIM_rsqrt, sub(c(x[0], 1), sq(x[0])))));
}
static jx_array *jvp_atan(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return dv(t[0], add(c(x[0], 1), sq(x[0])));
}
static jx_array *jvp_sinh(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], prim_unary(PRIM_cosh, x[0]));
}
static jx_array *jvp_cosh(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], prim_unary(PRIM_sinh, x[0]));
}
static jx_array *jvp_tanh(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], sub(c(y, 1), sq(y)));
}
static jx_array *jvp_asinh(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], prim_unary(PRIM_rsqrt, add(sq(x[0]), c(x[0], 1))));
}
static jx_array *jvp_acosh(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* 1 / sqrt((x - 1)(x + 1)): JAX's form, accurate near 1 */
  jx_array *one = c(x[0], 1);
  return mul(t[0], prim_unary(PRIM_rsqrt, mul(sub(x[0], one), add(x[0], one))));
}
static jx_array *jvp_atanh(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return dv(t[0], sub(c(x[0], 1), sq(x[0])));
}
static jx_array *jvp_exp(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], y);
}
static jx_array *jvp_exp2(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], mul(y, c(y, M_LN2)));
}
static jx_array *jvp_expm1(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], add(y, c(y, 1)));
}
static jx_array *jvp_log(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return dv(t[0], x[0]);
}
static jx_array *jvp_log2(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return dv(t[0], mul(x[0], c(x[0], M_LN2)));
}
static jx_array *jvp_log1p(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return dv(t[0], add(x[0], c(x[0], 1)));
}
static jx_array *jvp_sqrt(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return dv(t[0], mul(y, c(y, 2))); /* inf at 0, as JAX */
}
static jx_array *jvp_rsqrt(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], mul(dv(y, x[0]), c(y, -0.5)));
}
static jx_array *jvp_cbrt(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], dv(c(y, 1.0 / 3.0), sq(y)));
}
static jx_array *jvp_reciprocal(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], neg(sq(y)));
}
static jx_array *jvp_erf(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], mul(c(x[0], 2.0 / sqrt(M_PI)), prim_unary(PRIM_exp, neg(sq(x[0])))));
}
static jx_array *jvp_erfc(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return mul(t[0], mul(c(x[0], -2.0 / sqrt(M_PI)), prim_unary(PRIM_exp, neg(sq(x[0])))));
}
static jx_array *jvp_add(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return add(t[0], t[1]);
}
static jx_array *jvp_sub(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return sub(t[0], t[1]);
}
static jx_array *jvp_mul(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return add(mul(t[0], x[1]), mul(x[0], t[1]));
}
static jx_array *jvp_div(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return sub(dv(t[0], x[1]), mul(t[1], dv(y, x[1])));
}
static jx_array *jvp_rem(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* x - y * trunc(x / y) */
  return sub(t[0], mul(t[1], prim_unary(PRIM_trunc, dv(x[0], x[1]))));
}
static jx_array *jvp_pow(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* JAX: d/dx = where(b == 0, 0, b * x^(b-1)); d/db = log(where(x == 0, 1, x)) * y */
  jx_array *b = x[1], *zero = c(b, 0);
  jx_array *dx = sel(prim_binary(PRIM_eq, b, zero), zero,
                     mul(b, prim_binary(PRIM_pow, x[0], sub(b, c(b, 1)))));
  jx_array *safe = sel(prim_binary(PRIM_eq, x[0], c(x[0], 0)), c(x[0], 1), x[0]);
  return add(mul(t[0], dx), mul(t[1], mul(prim_unary(PRIM_log, safe), y)));
}
/* max/min: the tangent of the winner; ties split 0.5/0.5 (JAX). */
static jx_array *minmax(jx_array *const *x, jx_array *const *t, bool is_max) {
  jx_array *a = x[0], *b = x[1];
  jx_array *wins = is_max ? prim_binary(PRIM_lt, b, a) : prim_binary(PRIM_lt, a, b);
  jx_array *tie = prim_binary(PRIM_eq, a, b);
  jx_array *wa = sel(wins, c(a, 1), sel(tie, c(a, 0.5), c(a, 0)));
  return add(mul(t[0], wa), mul(t[1], sub(c(a, 1), wa)));
}
static jx_array *jvp_max(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return minmax(x, t, true);
}
static jx_array *jvp_min(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return minmax(x, t, false);
}
static jx_array *jvp_atan2(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* atan2(a, b): (ta * b - tb * a) / (a^2 + b^2) */
  return dv(sub(mul(t[0], x[1]), mul(t[1], x[0])), add(sq(x[0]), sq(x[1])));
}
static jx_array *jvp_select(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return sel(x[0], t[1], t[2]);
}
static jx_array *jvp_convert(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  if (!dtype_is_floating(x[0]->dtype)) return c(y, 0);
  return prim_convert(t[0], pp->dtype, pp->weak);
}
/* Linear primitives: the tangent goes through the same primitive. */
static jx_array *jvp_linear(Prim p, jx_array *const *t, int nin, const PrimParams *pp) {
  return prim_bind(p, nin, t, pp);
}
static jx_array *jvp_reduce_sum(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear(PRIM_reduce_sum, t, 1, pp);
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
  jx_array *loc = prim_convert(prim_binary(PRIM_eq, x[0], unreduce(y, x[0], pp)), x[0]->dtype, false);
  jx_array *num = prim_bind(PRIM_reduce_sum, 1, (jx_array *[]){mul(t[0], loc)}, pp);
  jx_array *cnt = prim_bind(PRIM_reduce_sum, 1, (jx_array *[]){loc}, pp);
  return dv(num, cnt);
}
static jx_array *jvp_reduce_prod(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  /* sum_i t_i * prod_{j != i} x_j, computed without division so zeros are exact:
   * move the reduced axes last and flatten them to n, build (.., n, n) with t on the
   * diagonal and x elsewhere, take the product over the last axis, sum the rest. */
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
  keep_shape[nkeep] = n;
  jx_array *xs = prim_reshape(prim_transpose(a, perm), nkeep + 1, keep_shape);
  jx_array *ts = prim_reshape(prim_transpose(t[0], perm), nkeep + 1, keep_shape);
  int64_t sq_shape[JX_MAX_NDIM + 2];
  memcpy(sq_shape, keep_shape, sizeof(int64_t) * (size_t)(nkeep + 1));
  sq_shape[nkeep + 1] = n;
  if (nkeep + 2 > JX_MAX_NDIM) {
    error_set(JX_ERR_UNSUPPORTED, "reduce_prod: jvp needs rank %d > %d", nkeep + 2, JX_MAX_NDIM);
    return NULL;
  }
  int bd[JX_MAX_NDIM];
  for (int d = 0; d < nkeep; d++) bd[d] = d;
  bd[nkeep] = nkeep + 1; /* element j along the last axis */
  jx_array *xb = prim_broadcast_in_dim(xs, nkeep + 2, sq_shape, bd);
  jx_array *tb = prim_broadcast_in_dim(ts, nkeep + 2, sq_shape, bd);
  jx_array *i = prim_iota(JX_INT32, nkeep + 2, sq_shape, nkeep);
  jx_array *j = prim_iota(JX_INT32, nkeep + 2, sq_shape, nkeep + 1);
  jx_array *m = sel(prim_binary(PRIM_eq, i, j), tb, xb);
  bool last[JX_MAX_NDIM] = {false}, mid[JX_MAX_NDIM] = {false};
  last[nkeep + 1] = true;
  mid[nkeep] = true;
  return prim_reduce(PRIM_reduce_sum, prim_reduce(PRIM_reduce_prod, m, last), mid);
}
static jx_array *jvp_reshape(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear(PRIM_reshape, t, 1, pp);
}
static jx_array *jvp_transpose(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear(PRIM_transpose, t, 1, pp);
}
static jx_array *jvp_broadcast(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear(PRIM_broadcast_in_dim, t, 1, pp);
}
static jx_array *jvp_pad(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  PrimParams zero = *pp;
  zero.value = 0.0; /* the padding value is a constant */
  return jvp_linear(PRIM_pad, t, 1, &zero);
}
static jx_array *jvp_slice(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear(PRIM_slice, t, 1, pp);
}
static jx_array *jvp_rev(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear(PRIM_rev, t, 1, pp);
}
static jx_array *jvp_concatenate(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return jvp_linear(PRIM_concatenate, t, nin, pp);
}
static jx_array *jvp_gather(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return prim_bind(PRIM_gather, 2, (jx_array *[]){t[0], x[1]}, pp);
}
static jx_array *jvp_dot_general(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return add(prim_bind(PRIM_dot_general, 2, (jx_array *[]){t[0], x[1]}, pp),
             prim_bind(PRIM_dot_general, 2, (jx_array *[]){x[0], t[1]}, pp));
}

static jx_array *jvp_sort(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  jx_dtype it = x[0]->shape[pp->axis] > INT32_MAX ? JX_INT64 : JX_INT32;
  return tx_take_along(t[0], prim_argsort(x[0], pp->axis, it), pp->axis);
}
static jx_array *jvp_scatter_add(int nin, jx_array *const *x, jx_array *const *t, jx_array *y, const PrimParams *pp) {
  return prim_scatter_add(t[0], x[1], t[2], pp->axis);
}

/* One line per primitive. Absent on purpose: rules for primitives whose outputs are
 * never floating (comparisons, not/and/or/xor, shifts, reduce_and/or, is_nan/is_inf,
 * bitcast to ints): jvp_process gives them zero tangents. iota has no operands. */
static const JvpRule jvp_rules[PRIM_NUM] = {
    [PRIM_neg] = jvp_neg,           [PRIM_abs] = jvp_abs,
    [PRIM_sign] = jvp_zero,         [PRIM_sin] = jvp_sin,
    [PRIM_cos] = jvp_cos,           [PRIM_tan] = jvp_tan,
    [PRIM_asin] = jvp_asin,         [PRIM_acos] = jvp_acos,
    [PRIM_atan] = jvp_atan,         [PRIM_sinh] = jvp_sinh,
    [PRIM_cosh] = jvp_cosh,         [PRIM_tanh] = jvp_tanh,
    [PRIM_asinh] = jvp_asinh,       [PRIM_acosh] = jvp_acosh,
    [PRIM_atanh] = jvp_atanh,       [PRIM_exp] = jvp_exp,
    [PRIM_exp2] = jvp_exp2,         [PRIM_expm1] = jvp_expm1,
    [PRIM_log] = jvp_log,           [PRIM_log2] = jvp_log2,
    [PRIM_log1p] = jvp_log1p,       [PRIM_sqrt] = jvp_sqrt,
    [PRIM_rsqrt] = jvp_rsqrt,       [PRIM_cbrt] = jvp_cbrt,
    [PRIM_reciprocal] = jvp_reciprocal,
    [PRIM_floor] = jvp_zero,        [PRIM_ceil] = jvp_zero,
    [PRIM_round] = jvp_zero,        [PRIM_trunc] = jvp_zero,
    [PRIM_erf] = jvp_erf,           [PRIM_erfc] = jvp_erfc,
    [PRIM_add] = jvp_add,           [PRIM_sub] = jvp_sub,
    [PRIM_mul] = jvp_mul,           [PRIM_div] = jvp_div,
    [PRIM_rem] = jvp_rem,           [PRIM_pow] = jvp_pow,
    [PRIM_max] = jvp_max,           [PRIM_min] = jvp_min,
    [PRIM_atan2] = jvp_atan2,       [PRIM_select] = jvp_select,
    [PRIM_convert_element_type] = jvp_convert,
    [PRIM_bitcast_convert_type] = jvp_zero,
    [PRIM_reduce_sum] = jvp_reduce_sum,
    [PRIM_reduce_prod] = jvp_reduce_prod,
    [PRIM_reduce_max] = jvp_reduce_minmax,
    [PRIM_reduce_min] = jvp_reduce_minmax,
    [PRIM_reshape] = jvp_reshape,   [PRIM_transpose] = jvp_transpose,
    [PRIM_broadcast_in_dim] = jvp_broadcast,
    [PRIM_pad] = jvp_pad,           [PRIM_slice] = jvp_slice,
    [PRIM_rev] = jvp_rev,           [PRIM_concatenate] = jvp_concatenate,
    [PRIM_gather] = jvp_gather,     [PRIM_dot_general] = jvp_dot_general,
    [PRIM_stop_gradient] = jvp_zero,
    [PRIM_sort] = jvp_sort,         [PRIM_scatter_add] = jvp_scatter_add,
};

bool jvp_has_rule(Prim p) { return jvp_rules[p] != NULL; }

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

static jx_array *jvp_process(Trace *t, Prim p, int nin, jx_array *const *in,
                             const PrimParams *pp, const Aval *out) {
  jx_array *x[KERNEL_MAX_ARGS], *tx[KERNEL_MAX_ARGS];
  jx_scope_begin();
  for (int i = 0; i < nin; i++) {
    jvp_unpack(t, in[i], &x[i], &tx[i]);
    if (!tx[i]) tx[i] = tx_full_like(in[i], 0.0);
  }
  jx_array *y = prim_bind(p, nin, x, pp), *ty = NULL;
  if (y) {
    if (!dtype_is_floating(out->dtype)) {
      ty = tx_full_like(y, 0.0);
    } else if (!jvp_rules[p]) {
      error_set(JX_ERR_UNSUPPORTED, "jvp: primitive %s has no differentiation rule", prim_name(p));
    } else {
      ty = jvp_rules[p](nin, x, tx, y, pp);
    }
  }
  jx_array *r = y && ty ? jvp_tracer(t, y, ty) : NULL;
  jx_scope_end(r ? 1 : 0, &r); /* r moves to the caller's scope */
  return r;
}

static const TraceType jvp_type = {.name = "jvp", .process = jvp_process};

Trace *jvp_begin(void) { return trace_push(&jvp_type, NULL); }
