/* more.c -- jax.numpy functions a new user reaches for (issue 11): ldexp, frexp,
 * round(decimals), cumulative_sum/prod(include_initial), digitize, interp, unwrap,
 * polyval, polymul, and lax.div / lax.rem (histograms: histogram.c), written with jx_
 * operations as jax/_src/numpy/{ufuncs,lax_numpy,reductions,polynomial}.py writes them,
 * so each is differentiable, batchable and jittable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

static jx_array *wf(double v) { return jx_scalar(v); }
static jx_array *wi(int64_t v) { return jx_scalar_int(v); }

/* The dtype's (nmant, nexp, minexp) as numpy.finfo gives them, and its same-width int. */
static bool float_bits(jx_dtype d, int *nmant, int *nexp, int *minexp, jx_dtype *int_type) {
  switch (d) {
  case JX_FLOAT16: *nmant = 10, *nexp = 5, *minexp = -14, *int_type = JX_INT16; return true;
  case JX_BFLOAT16: *nmant = 7, *nexp = 8, *minexp = -126, *int_type = JX_INT16; return true;
  case JX_FLOAT32: *nmant = 23, *nexp = 8, *minexp = -126, *int_type = JX_INT32; return true;
  case JX_FLOAT64: *nmant = 52, *nexp = 11, *minexp = -1022, *int_type = JX_INT64; return true;
  default: return false;
  }
}

/* ------------------------------------------------------- frexp, ldexp */

/* jnp.frexp (JAX's _frexp): mantissa in [0.5, 1) by rewriting the exponent bits,
 * subnormals scaled by 2^nmant first; x itself (exponent 0) for 0, +-inf and NaN. */
jx_status jx_frexp(jx_array *x, jx_array **out) {
  const char *fn = "jx_frexp";
  if (!out) {
    error_set(JX_ERR_VALUE, "%s: out is NULL", fn);
    return JX_ERR_VALUE;
  }
  out[0] = out[1] = NULL;
  if (np_null_arg(fn, x, "x")) return JX_ERR_VALUE;
  jx_scope_begin();
  jx_array *v = np_to_inexact(x);
  int nmant, nexp, minexp;
  jx_dtype it;
  if (!v || !float_bits(v->dtype, &nmant, &nexp, &minexp, &it)) return np_scope_return(NULL), jx_last_status();
  bool x64 = it == JX_INT64;
  if (x64 && !jx_config_x64_enabled()) it = JX_INT32; /* unreachable: float64 needs x64 */
  double tiny = ldexp(1.0, minexp);
  int64_t mask = ((int64_t)1 << nexp) - 1, bias = 1 - minexp;
  jx_array *small = jx_less(jx_abs(v), wf(tiny));
  jx_array *x1 = jx_where(small, jx_multiply(v, wf(ldexp(1.0, nmant))), v);
  jx_array *x2 = jx_where(small, wi(-nmant), wi(0));
  x2 = jx_astype(x2, it);
  jx_array *bits = jx_bitcast(x1, it);
  jx_array *cnst_mask = jx_astype(wi(mask), it), *sh = jx_astype(wi(nmant), it);
  jx_array *e = jx_bitwise_and(jx_right_shift(bits, sh), cnst_mask);
  x2 = jx_add(x2, jx_astype(jx_subtract(e, jx_astype(wi(bias - 1), it)), it));
  /* clear the exponent field, set it to bias - 1 (a mantissa in [0.5, 1)) */
  jx_array *field = jx_left_shift(cnst_mask, sh);
  bits = jx_bitwise_and(bits, jx_bitwise_not(field));
  bits = jx_bitwise_or(bits, jx_left_shift(jx_astype(wi(bias - 1), it), sh));
  jx_array *m = jx_bitcast(bits, v->dtype);
  jx_array *keep = jx_logical_or(jx_logical_or(jx_isinf(v), jx_isnan(v)), jx_equal(v, wi(0)));
  x2 = jx_where(keep, jx_zeros_like(x2), x2);
  /* JAX's custom JVP of _frexp: dm/dx = 2^-e (the bit manipulation has no derivative):
   * m + (x - stop_gradient(x)) 2^-e, where x - stop_gradient(x) is exactly 0 */
  jx_array *ef = jx_astype(x2, v->dtype);
  jx_array *scale = jx_exp2(jx_negative(ef)); /* inf for the smallest subnormals: no term */
  jx_array *term = jx_multiply(jx_subtract(v, jx_stop_gradient(v)), scale);
  m = jx_add(m, jx_where(jx_isfinite(scale), term, jx_zeros_like(term)));
  jx_array *r[2] = {jx_where(keep, v, m), jx_astype(x2, JX_INT32)};
  if (!r[0] || !r[1]) return np_scope_return(NULL), jx_last_status();
  jx_scope_end(2, r);
  out[0] = r[0], out[1] = r[1];
  return JX_OK;
}

/* jnp.ldexp(x1, x2) = x1 * 2^x2 (JAX's: the exponent split off with frexp so that a
 * small x1 with a large x2 does not overflow early). x2 must be an integer array. */
jx_array *jx_ldexp(jx_array *x1, jx_array *x2) {
  const char *fn = "jx_ldexp";
  if (np_null_arg(fn, x1, "x1") || np_null_arg(fn, x2, "x2")) return NULL;
  if (dtype_is_floating(x2->dtype) || dtype_is_complex(x1->dtype) || dtype_is_complex(x2->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: not supported for input types (%s, %s): x1 must be real, x2 an integer", fn,
              jx_dtype_name(x1->dtype), jx_dtype_name(x2->dtype));
    return NULL;
  }
  jx_scope_begin();
  jx_array *p[2];
  if (!np_broadcast_shapes(fn, 2, (jx_array *[]){x1, x2}, &(int){0}, (int64_t[JX_MAX_NDIM]){0}))
    return np_scope_return(NULL);
  jx_array *a = np_to_inexact(x1);
  jx_array *b = a ? jx_astype(x2, a->dtype) : NULL;
  if (!np_prepare(fn, 2, (jx_array *[]){a, b}, p)) return np_scope_return(NULL);
  a = p[0], b = p[1];
  jx_array *fr[2];
  if (jx_frexp(a, fr) != JX_OK) return np_scope_return(NULL);
  jx_array *e = jx_add(jx_astype(fr[1], b->dtype), b);
  jx_array *pos = jx_greater(e, wi(0));
  jx_array *m = jx_where(pos, jx_multiply(fr[0], wi(2)), fr[0]);
  e = jx_where(pos, jx_subtract(e, wi(1)), e);
  jx_array *r = jx_multiply(m, jx_power(jx_astype(wi(2), m->dtype), e));
  return np_scope_return(jx_where(jx_logical_or(jx_isinf(a), jx_equal(a, wi(0))), a, r));
}

/* ------------------------------------------------------- round(decimals) */

/* jnp.round(a, decimals): floats scale by 10^decimals, round half to even and scale
 * back (float16 in float32, as JAX); integers are unchanged for decimals > 0, and
 * decimals < 0 is JX_ERR_UNSUPPORTED for them (JAX's NotImplementedError). */
jx_array *jx_round_decimals(jx_array *x, int decimals) {
  const char *fn = "jx_round_decimals";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (decimals == 0) return jx_round(x);
  jx_scope_begin();
  jx_dtype d = x->dtype;
  if (dtype_is_complex(d)) /* each part rounded, as JAX */
    return np_scope_return(jx_complex(jx_round_decimals(jx_real(x), decimals), jx_round_decimals(jx_imag(x), decimals)));
  if (!dtype_is_floating(d)) {
    if (decimals > 0) return np_scope_return(jx_ref(x));
    error_set(JX_ERR_UNSUPPORTED, "%s: integer round not implemented for decimals < 0 (as in JAX)", fn);
    return np_scope_return(NULL);
  }
  jx_array *v = d == JX_FLOAT16 ? jx_astype(x, JX_FLOAT32) : x;
  jx_array *factor = jx_astype(jx_scalar(pow(10.0, decimals)), v->dtype);
  jx_array *r = jx_divide(jx_lax_round(jx_multiply(v, factor), JX_ROUNDING_TO_NEAREST_EVEN), factor);
  return np_scope_return(d == JX_FLOAT16 ? jx_astype(r, d) : r);
}

/* ------------------------------------------------------- lax.div, lax.rem */

/* Operands of a lax binary op: equal dtypes unless one is weakly typed (JAX's lax
 * accepts Python scalars), shapes broadcast. */
/* bool 0, integer 1, real floating 2, complex 3 */
static int dtype_kind(jx_dtype d) {
  return dtype_is_complex(d) ? 3 : dtype_is_floating(d) ? 2 : dtype_is_bool(d) ? 0 : 1;
}

static bool lax_binary_args(const char *fn, jx_array *x, jx_array *y, jx_array **out) {
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, y, "y")) return false;
  /* a weakly typed operand of the other's kind (a scalar 2 with int8) takes its dtype,
   * where JAX requires equal dtypes; one of another kind (2.5 with int32) would change
   * the result's dtype: refused, as JAX */
  if (x->dtype != y->dtype && ((!jx_is_weak(x) && !jx_is_weak(y)) || dtype_kind(x->dtype) != dtype_kind(y->dtype))) {
    error_set(JX_ERR_DTYPE, "%s: requires arguments to have the same dtypes, got %s, %s", fn,
              jx_dtype_name(x->dtype), jx_dtype_name(y->dtype));
    return false;
  }
  return np_prepare(fn, 2, (jx_array *[]){x, y}, out);
}

/* lax.div: x / y with C's truncation for integers (x / 0 = -1, as XLA on CPU). */
jx_array *jx_lax_div(jx_array *x, jx_array *y) {
  jx_scope_begin();
  jx_array *p[2];
  if (!lax_binary_args("jx_lax_div", x, y, p)) return np_scope_return(NULL);
  if (dtype_is_bool(p[0]->dtype)) {
    error_set(JX_ERR_DTYPE, "jx_lax_div: bool operands are not supported");
    return np_scope_return(NULL);
  }
  return np_scope_return(prim_binary(PRIM_div, p[0], p[1]));
}
/* lax.rem: x - y * trunc(x / y), the sign of x (C's % and fmod); x % 0 = x for ints. */
jx_array *jx_lax_rem(jx_array *x, jx_array *y) {
  jx_scope_begin();
  jx_array *p[2];
  if (!lax_binary_args("jx_lax_rem", x, y, p)) return np_scope_return(NULL);
  if (dtype_is_bool(p[0]->dtype)) {
    error_set(JX_ERR_DTYPE, "jx_lax_rem: bool operands are not supported");
    return np_scope_return(NULL);
  }
  return np_scope_return(prim_binary(PRIM_rem, p[0], p[1]));
}

/* ------------------------------------------------------- cumulative_sum */

static jx_array *cumulative(const char *fn, jx_array *x, int axis, jx_dtype dtype, bool include_initial,
                            bool prod) {
  if (np_null_arg(fn, x, "x")) return NULL;
  if (x->ndim == 0) {
    error_set(JX_ERR_VALUE, "%s: the input must be non-scalar", fn);
    return NULL;
  }
  if (axis == JX_AXIS_NONE) {
    if (x->ndim > 1) {
      error_set(JX_ERR_VALUE, "%s: the input array has rank %d, however axis was not set to an explicit value", fn,
                x->ndim);
      return NULL;
    }
    axis = 0;
  }
  if (axis < -x->ndim || axis >= x->ndim) {
    error_set(JX_ERR_SHAPE, "%s: axis %d out of range for rank %d", fn, axis, x->ndim);
    return NULL;
  }
  if (axis < 0) axis += x->ndim;
  /* JAX's _cumulative_reduction: cumulative_sum promotes integers narrower than the
   * default int to it (promote_integers=True; cumulative_prod does not), a bool result
   * type accumulates in the default int, and dtype=bool converts x to bool first and
   * the result back to bool. */
  jx_dtype rt = dtype == JX_DTYPE_DEFAULT ? x->dtype : dtype_canonicalize(dtype);
  bool to_bool = dtype != JX_DTYPE_DEFAULT && rt == JX_BOOL;
  if ((dtype == JX_DTYPE_DEFAULT && !prod) || rt == JX_BOOL) {
    jx_dtype di = dtype_canonicalize(JX_INT64), du = dtype_canonicalize(JX_UINT64);
    if (rt == JX_BOOL || (dtype_is_signed(rt) && dtype_is_integer(rt) && jx_dtype_itemsize(rt) < jx_dtype_itemsize(di)))
      rt = di;
    else if (dtype_is_unsigned(rt) && jx_dtype_itemsize(rt) < jx_dtype_itemsize(du))
      rt = du;
  }
  jx_scope_begin();
  jx_array *v = to_bool && x->dtype != JX_BOOL ? jx_astype(x, JX_BOOL) : x;
  if (v && v->dtype != rt) v = jx_astype(v, rt);
  jx_array *out = prod ? jx_cumprod(v, axis) : jx_cumsum(v, axis);
  if (out && to_bool) out = jx_astype(out, JX_BOOL);
  if (out && include_initial) {
    int64_t shape[JX_MAX_NDIM];
    memcpy(shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    shape[axis] = 1;
    jx_array *init = jx_full(out->ndim, shape, prod ? 1 : 0, out->dtype);
    out = jx_concatenate(2, (jx_array *[]){init, out}, axis);
  }
  return np_scope_return(out);
}
jx_array *jx_cumulative_sum(jx_array *x, int axis, jx_dtype dtype, bool include_initial) {
  return cumulative("jx_cumulative_sum", x, axis, dtype, include_initial, false);
}
jx_array *jx_cumulative_prod(jx_array *x, int axis, jx_dtype dtype, bool include_initial) {
  return cumulative("jx_cumulative_prod", x, axis, dtype, include_initial, true);
}

/* ------------------------------------------------------- digitize, interp */

static bool one_d(const char *fn, const char *what, jx_array *a) {
  if (a->ndim == 1) return true;
  error_set(JX_ERR_SHAPE, "%s: %s must be a 1-dimensional array, got rank %d", fn, what, a->ndim);
  return false;
}

/* x[i] for a 0-d integer index array i (clamped, as gathers) or a Python int. */
static jx_array *at(jx_array *x, int64_t i) {
  int64_t n = x->shape[0];
  if (i < 0) i += n;
  return jx_squeeze(jx_slice(x, 1, (int64_t[]){i}, (int64_t[]){i + 1}, (int64_t[]){1}), 1, (int[]){0});
}

/* jnp.digitize(x, bins, right): searchsorted into increasing bins, or from the end of
 * decreasing ones (bins[-1] < bins[0]); int32 zeros for empty bins. */
jx_array *jx_digitize(jx_array *x, jx_array *bins, bool right) {
  const char *fn = "jx_digitize";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, bins, "bins") || !one_d(fn, "bins", bins)) return NULL;
  jx_scope_begin();
  int64_t n = bins->shape[0];
  if (n == 0) return np_scope_return(jx_astype(jx_zeros_like(x), JX_INT32));
  jx_array *fwd = NULL, *rev = NULL;
  if (jx_searchsorted(bins, x, !right, &fwd) != JX_OK) return np_scope_return(NULL);
  if (jx_searchsorted(jx_flip(bins, 1, (int[]){0}), x, !right, &rev) != JX_OK) return np_scope_return(NULL);
  jx_array *increasing = jx_greater_equal(at(bins, -1), at(bins, 0));
  jx_array *r = jx_where(increasing, fwd, jx_subtract(jx_astype(wi(n), fwd->dtype), rev));
  return np_scope_return(jx_astype(r, fwd->dtype));
}

/* jnp.interp(x, xp, fp, left, right) (JAX's _interp without period): linear between
 * the bracketing points (searchsorted right, clipped to [1, n-1]); a zero-width step
 * gives fp[i-1]; below xp[0] left (NULL: fp[0]), above xp[-1] right (NULL: fp[-1]). */
jx_array *jx_interp(jx_array *x, jx_array *xp, jx_array *fp, jx_array *left, jx_array *right) {
  const char *fn = "jx_interp";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, xp, "xp") || np_null_arg(fn, fp, "fp")) return NULL;
  if (xp->ndim != 1 || fp->ndim != 1 || xp->shape[0] != fp->shape[0]) {
    error_set(JX_ERR_SHAPE, "%s: xp and fp must be one-dimensional arrays of equal size", fn);
    return NULL;
  }
  if (xp->shape[0] == 0) {
    error_set(JX_ERR_SHAPE, "%s: xp and fp must not be empty", fn);
    return NULL;
  }
  jx_scope_begin();
  jx_array *p[2];
  if (!np_promote(fn, 2, (jx_array *[]){np_to_inexact(x), np_to_inexact(xp)}, p)) return np_scope_return(NULL);
  jx_array *xa = p[0], *xpa = p[1], *fpa = np_to_inexact(fp);
  int64_t n = xpa->shape[0];
  jx_array *i = NULL;
  if (jx_searchsorted(xpa, xa, true, &i) != JX_OK) return np_scope_return(NULL);
  i = jx_clip(i, wi(1), wi(n - 1)); /* n == 1: 0, and i - 1 = -1 wraps, as in JAX */
  jx_array *im1 = jx_subtract(i, wi(1));
  jx_array *fi = jx_take(fpa, i, 0), *fim1 = jx_take(fpa, im1, 0);
  jx_array *xi = jx_take(xpa, i, 0), *xim1 = jx_take(xpa, im1, 0);
  jx_array *df = jx_subtract(fi, fim1), *dx = jx_subtract(xi, xim1), *delta = jx_subtract(xa, xim1);
  /* np.spacing(finfo(dtype).eps) */
  double eps = xpa->dtype == JX_FLOAT64 ? ldexp(1.0, -104) : xpa->dtype == JX_FLOAT16 ? ldexp(1.0, -20)
             : xpa->dtype == JX_BFLOAT16 ? ldexp(1.0, -14) : ldexp(1.0, -46);
  jx_array *dx0 = jx_less_equal(jx_abs(dx), wf(eps));
  jx_array *f = jx_where(dx0, fim1, jx_add(fim1, jx_multiply(jx_divide(delta, jx_where(dx0, wi(1), dx)), df)));
  jx_array *l = left ? left : at(fpa, 0), *r = right ? right : at(fpa, -1);
  f = jx_where(jx_less(xa, at(xpa, 0)), l, f);
  f = jx_where(jx_greater(xa, at(xpa, -1)), r, f);
  return np_scope_return(f);
}

/* ------------------------------------------------------- bincount, select */

/* jnp.bincount(x, weights, minlength, length): zeros(length, weights' dtype (default int
 * without weights)).at[clip(x, 0)].add(weights, mode='drop') -- negative values count in
 * bin 0 and values >= length are dropped, as JAX's. length < 0 (None) reads
 * max(minlength, max(x) + 1) from the data: concrete x only. */
jx_array *jx_bincount(jx_array *x, jx_array *weights, int64_t minlength, int64_t length) {
  const char *fn = "jx_bincount";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (!dtype_is_integer(x->dtype) && !dtype_is_bool(x->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: x must have an integer type; got %s", fn, jx_dtype_name(x->dtype));
    return NULL;
  }
  if (x->ndim != 1) {
    error_set(JX_ERR_SHAPE, "%s: only 1-dimensional input supported (got rank %d)", fn, x->ndim);
    return NULL;
  }
  if (minlength < 0) {
    error_set(JX_ERR_VALUE, "%s: minlength must be non-negative, got %lld", fn, (long long)minlength);
    return NULL;
  }
  if (weights && (weights->ndim != 1 || weights->shape[0] != x->shape[0])) {
    error_set(JX_ERR_SHAPE, "%s: shape of weights must match shape of x (%lld)", fn, (long long)x->shape[0]);
    return NULL;
  }
  jx_scope_begin();
  jx_array *xi = dtype_is_bool(x->dtype) ? jx_astype(x, JX_INT32) : jx_ref(x);
  if (length < 0) {
    if (x->tracer) {
      error_set(JX_ERR_VALUE, "%s: length must be given (>= 0) under a transformation", fn);
      return np_scope_return(NULL);
    }
    length = minlength;
    if (x->shape[0] > 0) {
      double m = jx_item(jx_max(xi, 0, NULL, false));
      if (m + 1 > (double)length) length = (int64_t)m + 1;
    }
  }
  jx_dtype it = jx_config_x64_enabled() ? JX_INT64 : JX_INT32;
  jx_array *w = weights ? jx_ref(weights) : jx_astype(wi(1), it);
  if (!w) return np_scope_return(NULL);
  jx_array *bins = jx_zeros(1, &length, w->dtype);
  jx_array *idx = jx_maximum(xi, jx_zeros(0, NULL, xi ? xi->dtype : JX_INT32));
  return np_scope_return(jx_at_add(bins, idx, w, 0, JX_INDEX_FILL));
}

/* jnp.select(condlist, choicelist, default): JAX's argmax over [False, *conds] picks the
 * first true condition's choice (default where none is); the same as
 * where(c0, a0, where(c1, a1, ... default)), which promotes the choices and default
 * together (the promotion lattice is a join) and broadcasts everything. default NULL is
 * JAX's default 0 (a weak int). Conditions are converted to bool, as JAX's astype(bool). */
jx_array *jx_select(int n, jx_array *const *condlist, jx_array *const *choicelist, jx_array *default_) {
  const char *fn = "jx_select";
  if (n < 1 || !condlist || !choicelist) {
    error_set(JX_ERR_VALUE, "%s: condlist must be non-empty (got %d conditions)", fn, n);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (np_null_arg(fn, condlist[i], "a condition") || np_null_arg(fn, choicelist[i], "a choice")) return NULL;
  jx_scope_begin();
  jx_array *r = default_ ? jx_ref(default_) : wi(0);
  for (int i = n - 1; i >= 0 && r; i--) r = jx_where(condlist[i], choicelist[i], r);
  return np_scope_return(r);
}

/* ------------------------------------------------------- unwrap */

/* jnp.unwrap(p, discont, axis, period): jumps larger than discont (NAN: period / 2)
 * between neighbours along axis are corrected by multiples of period. */
jx_array *jx_unwrap(jx_array *p, double discont, int axis, double period) {
  const char *fn = "jx_unwrap";
  if (np_null_arg(fn, p, "p")) return NULL;
  if (p->ndim == 0 || axis < -p->ndim || axis >= p->ndim) {
    error_set(JX_ERR_SHAPE, "%s: axis %d out of range for rank %d", fn, axis, p->ndim);
    return NULL;
  }
  if (axis < 0) axis += p->ndim;
  if (p->shape[axis] == 0) return jx_ref(p);
  jx_scope_begin();
  jx_array *pa[2];
  /* period is a Python scalar in JAX: an int one keeps an integer p integer */
  bool int_period = !dtype_is_floating(p->dtype) && period == floor(period) && fabs(period) < 9e15;
  if (!np_promote(fn, 2, (jx_array *[]){p, int_period ? wi((int64_t)period) : wf(period)}, pa))
    return np_scope_return(NULL);
  jx_array *x = pa[0], *per = pa[1];
  bool is_int = !dtype_is_floating(x->dtype);
  jx_array *interval = is_int ? jx_floor_divide(per, wi(2)) : jx_divide(per, wi(2));
  jx_array *disc = isnan(discont) ? jx_divide(per, wi(2)) : wf(discont);
  jx_array *dd = jx_diff(x, 1, axis);
  jx_array *ddmod = jx_subtract(jx_remainder(jx_add(dd, interval), per), interval);
  ddmod = jx_where(jx_logical_and(jx_equal(ddmod, jx_negative(interval)), jx_greater(dd, wi(0))), interval, ddmod);
  jx_array *corr = jx_where(jx_less(jx_abs(dd), disc), wi(0), jx_subtract(ddmod, dd));
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM], step[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) stop[d] = x->shape[d], step[d] = 1;
  stop[axis] = 1;
  jx_array *head = jx_slice(x, x->ndim, start, stop, step);
  start[axis] = 1, stop[axis] = x->shape[axis];
  jx_array *tail = jx_slice(x, x->ndim, start, stop, step);
  jx_array *cs = jx_cumsum(corr, axis);
  jx_array *up = jx_add(tail, cs);
  return np_scope_return(jx_concatenate(2, (jx_array *[]){jx_astype(head, up ? up->dtype : x->dtype), up}, axis));
}

/* ------------------------------------------------------- polyval, polymul */

/* jnp.polyval(p, x): Horner's rule over the coefficients p[0] (highest power) ..
 * p[n-1], p and x promoted together (integers stay integers); result shape
 * broadcast(p.shape[1:], x.shape). */
jx_array *jx_polyval(jx_array *p, jx_array *x) {
  const char *fn = "jx_polyval";
  if (np_null_arg(fn, p, "p") || np_null_arg(fn, x, "x")) return NULL;
  if (p->ndim < 1) {
    error_set(JX_ERR_SHAPE, "%s: p must be at least 1-dimensional", fn);
    return NULL;
  }
  jx_scope_begin();
  jx_array *pr[2];
  if (!np_promote(fn, 2, (jx_array *[]){p, x}, pr)) return np_scope_return(NULL);
  jx_array *y = jx_zeros_like(jx_multiply(at(pr[0], 0), pr[1]));
  for (int64_t i = 0; y && i < p->shape[0]; i++) y = jx_add(jx_multiply(y, pr[1]), at(pr[0], i));
  /* JAX starts from full_like(x, 0, dtype=x.dtype), a strong array: the result is strong */
  return np_scope_return(y ? np_convert(y, y->dtype, false) : NULL);
}

/* jnp.polymul(a1, a2): the coefficients of the product, the full convolution of the two
 * 1-d coefficient arrays (promoted to an inexact dtype), length n1 + n2 - 1. */
jx_array *jx_polymul(jx_array *a1, jx_array *a2) {
  const char *fn = "jx_polymul";
  if (np_null_arg(fn, a1, "a1") || np_null_arg(fn, a2, "a2")) return NULL;
  if (a1->ndim > 1 || a2->ndim > 1) {
    error_set(JX_ERR_SHAPE, "%s: a1 and a2 must be 0-d or 1-d", fn);
    return NULL;
  }
  jx_scope_begin();
  jx_array *pr[2];
  if (!np_promote(fn, 2, (jx_array *[]){np_to_inexact(jx_atleast_1d(a1)), np_to_inexact(jx_atleast_1d(a2))}, pr))
    return np_scope_return(NULL);
  int64_t n1 = pr[0]->shape[0], n2 = pr[1]->shape[0];
  if (n1 == 0 || n2 == 0) {
    error_set(JX_ERR_VALUE, "%s: empty coefficient arrays", fn);
    return np_scope_return(NULL);
  }
  jx_array *acc = jx_zeros(1, (int64_t[]){n1 + n2 - 1}, pr[0]->dtype);
  for (int64_t i = 0; acc && i < n1; i++) {
    jx_array *term = jx_multiply(at(pr[0], i), pr[1]);
    acc = jx_add(acc, jx_pad(term, (int64_t[]){i, n1 - 1 - i}, 0));
  }
  return np_scope_return(acc);
}

/* ------------------------------------------------- reductions with where / initial */

/* x with masked-out elements replaced by v (x's dtype); where broadcasts to x. */
static jx_array *masked(const char *fn, jx_array *x, jx_array *where, jx_array *v) {
  if (!where) return x;
  jx_array *w = np_broadcast_to(fn, jx_astype(where, JX_BOOL), x->ndim, x->shape);
  return w ? jx_where(w, x, jx_astype(v, x->dtype)) : NULL;
}

/* jnp.sum / prod(x, axis, keepdims=, where=, initial=): masked elements count as the
 * identity; initial (NULL: none) joins every reduction. */
static jx_array *sum_prod(const char *fn, bool prod, jx_array *x, int naxes, const int *axes, bool keepdims,
                          jx_array *where, jx_array *initial) {
  if (np_null_arg(fn, x, "x")) return NULL;
  jx_scope_begin();
  jx_array *v = masked(fn, x, where, wi(prod ? 1 : 0));
  jx_array *r = prod ? jx_prod(v, naxes, axes, keepdims) : jx_sum(v, naxes, axes, keepdims);
  if (r && initial) r = jx_astype(prod ? jx_multiply(r, initial) : jx_add(r, initial), r->dtype);
  return np_scope_return(r);
}
jx_array *jx_sum_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where, jx_array *initial) {
  return sum_prod("jx_sum_where", false, x, naxes, axes, keepdims, where, initial);
}
jx_array *jx_prod_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where, jx_array *initial) {
  return sum_prod("jx_prod_where", true, x, naxes, axes, keepdims, where, initial);
}

/* jnp.max / min with where= (which needs initial=, as JAX: max has no identity) and
 * initial= (also for empty reductions). */
static jx_array *max_min(const char *fn, bool is_max, jx_array *x, int naxes, const int *axes, bool keepdims,
                         jx_array *where, jx_array *initial) {
  if (np_null_arg(fn, x, "x")) return NULL;
  if (where && !initial) {
    error_set(JX_ERR_VALUE, "%s: reduction operation '%s' does not have an identity, so to use a where mask one "
              "has to specify 'initial'", fn, is_max ? "max" : "min");
    return NULL;
  }
  jx_scope_begin();
  jx_array *v = masked(fn, x, where, initial);
  if (v && initial) {
    /* with initial, an empty reduction is allowed and gives initial */
    bool red[JX_MAX_NDIM] = {false}, empty = false;
    for (int i = 0; i < (axes ? naxes : v->ndim); i++) {
      int a = axes ? axes[i] : i;
      if (a < -v->ndim || a >= v->ndim) break; /* jx_max reports it */
      red[a < 0 ? a + v->ndim : a] = true;
    }
    for (int d = 0; d < v->ndim; d++) empty |= red[d] && v->shape[d] == 0;
    if (empty) {
      int64_t shape[JX_MAX_NDIM];
      int nd = 0;
      for (int d = 0; d < v->ndim; d++)
        if (!red[d]) shape[nd++] = v->shape[d];
        else if (keepdims) shape[nd++] = 1;
      return np_scope_return(jx_astype(jx_broadcast_to(initial, nd, shape), v->dtype));
    }
    jx_array *r = is_max ? jx_max(v, naxes, axes, keepdims) : jx_min(v, naxes, axes, keepdims);
    r = is_max ? jx_maximum(r, initial) : jx_minimum(r, initial);
    return np_scope_return(r ? jx_astype(r, v->dtype) : NULL);
  }
  return np_scope_return(is_max ? jx_max(v, naxes, axes, keepdims) : jx_min(v, naxes, axes, keepdims));
}
jx_array *jx_max_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where, jx_array *initial) {
  return max_min("jx_max_where", true, x, naxes, axes, keepdims, where, initial);
}
jx_array *jx_min_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where, jx_array *initial) {
  return max_min("jx_min_where", false, x, naxes, axes, keepdims, where, initial);
}

/* jnp.mean(x, axis, keepdims=, where=): sum over the kept elements / their count. */
jx_array *jx_mean_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where) {
  const char *fn = "jx_mean_where";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (!where) return jx_mean(x, naxes, axes, keepdims);
  jx_scope_begin();
  jx_array *m = jx_mean(x, naxes, axes, keepdims); /* for the result dtype */
  if (!m) return np_scope_return(NULL);
  jx_array *w = np_broadcast_to(fn, jx_astype(where, JX_BOOL), x->ndim, x->shape);
  jx_array *v = w ? jx_where(w, jx_astype(x, m->dtype), jx_astype(wi(0), m->dtype)) : NULL;
  jx_array *total = jx_sum(v, naxes, axes, keepdims);
  jx_array *count = jx_sum(jx_astype(w, m->dtype), naxes, axes, keepdims);
  return np_scope_return(jx_astype(jx_divide(total, count), m->dtype));
}

/* ------------------------------------------------- take with fill_value */

/* fill as a 0-d constant of r's dtype and weak type: integral fills wrap (uint8 -1 is
 * 255, int8 300 is 44), as JAX converts fill_value; complex ones are fill + 0j. */
static jx_array *fill_like(jx_array *r, double fill) {
  return np_convert(np_constant(fill, r->dtype), r->dtype, r->weak);
}

/* Where idx (any integer shape) is out of [-n, n), the result (whose dims rank0 ..
 * rank0 + idx.ndim are idx's) takes fill. */
static jx_array *fill_out_of_range(jx_array *r, jx_array *idx, int64_t n, int rank0, double fill) {
  if (!r) return NULL;
  jx_array *ok = jx_logical_and(jx_greater_equal(idx, wi(-n)), jx_less(idx, wi(n)));
  int64_t shape[JX_MAX_NDIM];
  int nd = 0;
  for (int d = 0; d < rank0; d++) shape[nd++] = 1;
  for (int d = 0; d < idx->ndim; d++) shape[nd++] = idx->shape[d];
  while (nd < r->ndim) shape[nd++] = 1;
  ok = jx_reshape(ok, nd, shape);
  return jx_where(ok, r, fill_like(r, fill));
}

/* jnp.take(x, indices, axis, mode="fill", fill_value=fill). */
jx_array *jx_take_fill(jx_array *x, jx_array *indices, int axis, double fill) {
  const char *fn = "jx_take_fill";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, indices, "indices")) return NULL;
  jx_scope_begin();
  jx_array *r = jx_take(x, indices, axis);
  if (!r) return np_scope_return(NULL);
  jx_array *xx = axis == JX_AXIS_NONE ? jx_ravel(x) : x;
  int ax = axis == JX_AXIS_NONE ? 0 : (axis < 0 ? axis + x->ndim : axis);
  return np_scope_return(fill_out_of_range(r, indices, xx->shape[ax], ax, fill));
}

/* jnp.take(x, indices, axis, mode): FILL is jx_take; CLIP (and PROMISE_IN_BOUNDS, which
 * jaxc clamps) clamp into [0, n) without wrapping negative indices first, as JAX's _take
 * (take(x, -1, mode="clip") is x[0]; only "fill" wraps them); WRAP takes indices mod n
 * (jnp.mod: the sign of n) in the indices' own dtype, as _take does. */
jx_array *jx_take_mode(jx_array *x, jx_array *indices, int axis, jx_index_mode mode) {
  const char *fn = "jx_take_mode";
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, indices, "indices")) return NULL;
  if (mode == JX_INDEX_FILL) return jx_take(x, indices, axis);
  if (mode != JX_INDEX_CLIP && mode != JX_INDEX_PROMISE_IN_BOUNDS && mode != JX_INDEX_WRAP) {
    error_set(JX_ERR_VALUE, "%s: unknown mode %d", fn, (int)mode);
    return NULL;
  }
  if (!dtype_is_integer(indices->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: indices must be integers, got %s", fn, jx_dtype_name(indices->dtype));
    return NULL;
  }
  jx_scope_begin();
  jx_array *xx = axis == JX_AXIS_NONE ? jx_ravel(x) : x;
  int ax = axis == JX_AXIS_NONE ? 0 : axis;
  if (!xx || !array_normalize_axis(fn, &ax, xx->ndim)) return np_scope_return(NULL);
  int64_t n = xx->shape[ax];
  if (n == 0 && jx_size(indices) > 0) {
    error_set(JX_ERR_SHAPE, "%s: cannot take from an empty axis", fn);
    return np_scope_return(NULL);
  }
  /* the bound in the indices' own dtype, saturated (uint8 indices into 300 rows: 255) */
  int bits = (int)jx_dtype_itemsize(indices->dtype) * 8 - (dtype_is_unsigned(indices->dtype) ? 0 : 1);
  double top = bits >= 63 ? 9.2e18 : ldexp(1.0, bits) - 1, hi = n > 0 ? (double)(n - 1) : 0;
  jx_dtype idt = indices->dtype;
  if (mode == JX_INDEX_WRAP) {
    if (n == 0) return np_scope_return(jx_take(xx, indices, ax)); /* empty indices */
    if ((double)n > top) { /* JAX: OverflowError from lax._const(indices, n) */
      error_set(JX_ERR_VALUE, "%s: mode wrap: axis size %lld does not fit the indices' dtype %s", fn,
                (long long)n, jx_dtype_name(idt));
      return np_scope_return(NULL);
    }
    jx_array *w = jx_remainder(indices, np_constant((double)n, idt));
    return np_scope_return(jx_take(xx, w, ax));
  }
  jx_array *i = jx_minimum(indices, np_constant(hi < top ? hi : top, idt));
  if (!dtype_is_unsigned(idt)) i = jx_maximum(i, np_constant(0, idt));
  return np_scope_return(jx_take(xx, i, ax));
}

/* jnp.take_along_axis(arr, indices, axis, mode="fill", fill_value=fill). */
jx_array *jx_take_along_axis_fill(jx_array *arr, jx_array *indices, int axis, double fill) {
  const char *fn = "jx_take_along_axis_fill";
  if (np_null_arg(fn, arr, "arr") || np_null_arg(fn, indices, "indices")) return NULL;
  jx_scope_begin();
  jx_array *r = jx_take_along_axis(arr, indices, axis, JX_INDEX_FILL);
  if (!r) return np_scope_return(NULL);
  jx_array *a = axis == JX_AXIS_NONE ? jx_ravel(arr) : arr;
  int ax = axis == JX_AXIS_NONE ? 0 : (axis < 0 ? axis + arr->ndim : axis);
  jx_array *ok = jx_logical_and(jx_greater_equal(indices, wi(-a->shape[ax])), jx_less(indices, wi(a->shape[ax])));
  return np_scope_return(jx_where(ok, r, fill_like(r, fill)));
}
