/* reduce.c -- jnp reductions: sum, prod, max, min, mean, var, std, any, all, argmax,
 * argmin, built from the reduce_* primitives. Dtype rules follow JAX's
 * jax/_src/numpy/reductions.py (_reduction, _promote_integer_dtype, _upcast_f16, _mean,
 * _var) and lax_numpy.py (_argmax). */
#include <math.h>
#include <string.h>

#include "lib/numpy/np.h"
#include "transform/transform.h"

/* Every public function runs in its own scope: temporaries die at its end, only the
 * result survives (a NULL result is fine). */
/* The reduced axes of x: mask, the number of elements per output element, and the
 * keepdims shape (reduced dims set to 1). */
typedef struct Red {
  bool mask[JX_MAX_NDIM];
  bool any;                   /* some axis is reduced */
  int64_t count;              /* product of the reduced dims */
  int64_t kshape[JX_MAX_NDIM]; /* keepdims shape, rank x->ndim */
} Red;

static bool red_setup(const char *fn, jx_array *x, int naxes, const int *axes, Red *r) {
  if (np_null_arg(fn, x, "x")) return false;
  if (!array_axes_mask(fn, naxes, axes, x->ndim, r->mask)) return false;
  r->any = false;
  r->count = 1;
  for (int d = 0; d < x->ndim; d++) {
    r->kshape[d] = r->mask[d] ? 1 : x->shape[d];
    if (r->mask[d]) {
      r->any = true;
      r->count *= x->shape[d]; /* a divisor of the array's size: no overflow */
    }
  }
  return true;
}

/* Reduces x (already in the computation dtype) with p over r's axes; restores the
 * reduced axes as size 1 when keepdims. */
static jx_array *red_apply(Prim p, jx_array *x, const Red *r, bool keepdims) {
  if (!x) return NULL;
  jx_array *y = r->any ? prim_reduce(p, x, r->mask) : jx_ref(x);
  if (y && keepdims && r->any) y = prim_reshape(y, x->ndim, r->kshape);
  return y;
}

/* JAX's _promote_integer_dtype: bool and ints narrower than the default int (uint)
 * accumulate in the default int (uint). */
static jx_dtype promote_integer(jx_dtype d) {
  if (dtype_is_bool(d)) return dtype_default_int();
  if (dtype_is_unsigned(d))
    return dtype_bits(d) < dtype_bits(dtype_default_uint()) ? dtype_default_uint() : d;
  if (dtype_is_integer(d))
    return dtype_bits(d) < dtype_bits(dtype_default_int()) ? dtype_default_int() : d;
  return d;
}

/* JAX's _upcast_f16: half-precision floats are computed in float32. */
static jx_dtype upcast_f16(jx_dtype d) {
  return d == JX_FLOAT16 || d == JX_BFLOAT16 ? JX_FLOAT32 : d;
}

/* dtypes.to_inexact_dtype (dtype.h) */
static jx_dtype to_inexact(jx_dtype d) { return dtype_to_inexact(d); }

/* sum/prod: result dtype promote_integer(x); float16/bfloat16 accumulate in float32
 * and are rounded back (reductions.py: upcast_f16_for_computation when dtype=None). */
static jx_array *sum_prod(const char *fn, Prim p, jx_array *x, int naxes, const int *axes,
                          bool keepdims) {
  Red r;
  if (!red_setup(fn, x, naxes, axes, &r)) return NULL;
  jx_scope_begin();
  jx_dtype out = promote_integer(x->dtype), comp = upcast_f16(out);
  jx_array *y = red_apply(p, np_convert(x, comp, false), &r, keepdims);
  return np_scope_return(y ? np_convert(y, out, false) : NULL);
}

jx_array *jx_sum(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return sum_prod("jx_sum", PRIM_reduce_sum, x, naxes, axes, keepdims);
}

jx_array *jx_prod(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return sum_prod("jx_prod", PRIM_reduce_prod, x, naxes, axes, keepdims);
}

/* max/min keep the dtype and have no identity: an empty reduced axis is an error, as
 * JAX raises "zero-size array to reduction operation max which has no identity".
 * Complex x: lexicographic on (re, im). */
static jx_array *max_min(const char *fn, bool is_max, jx_array *x, int naxes,
                         const int *axes, bool keepdims) {
  Red r;
  if (!red_setup(fn, x, naxes, axes, &r)) return NULL;
  for (int d = 0; d < x->ndim; d++) {
    if (r.mask[d] && x->shape[d] == 0) {
      char b[ERROR_SHAPE_BUF];
      error_set(JX_ERR_VALUE,
                "%s: zero-size array %s to reduction operation %s which has no identity "
                "(axis %d)",
                fn, error_shape_str(b, x->ndim, x->shape), is_max ? "max" : "min", d);
      return NULL;
    }
  }
  Prim p = is_max ? PRIM_reduce_max : PRIM_reduce_min;
  if (dtype_is_bool(x->dtype)) p = is_max ? PRIM_reduce_or : PRIM_reduce_and;
  jx_scope_begin();
  if (dtype_is_complex(x->dtype)) {
    /* lexicographic on (re, im), as XLA's complex reduce_max: the extreme real part,
     * then the extreme imaginary part among the elements that hold it. A NaN part
     * makes the result NaN + NaN i (JAX's then depends on XLA's reduction order). */
    jx_array *re = prim_unary(PRIM_real, x), *im = prim_unary(PRIM_imag, x);
    jx_array *mr = red_apply(p, re, &r, true);
    jx_array *far = np_constant(is_max ? -INFINITY : INFINITY, re ? re->dtype : JX_FLOAT32);
    jx_array *on = mr ? jx_equal(re, mr) : NULL;
    jx_array *mi = red_apply(p, jx_where(on, im, far), &r, keepdims);
    jx_array *nan = jx_any(jx_isnan(x), naxes, axes, keepdims);
    jx_array *res = jx_complex(keepdims ? mr : red_apply(p, re, &r, false), mi);
    return np_scope_return(jx_where(nan, jx_scalar_complex_of(NAN, NAN, x->dtype), res));
  }
  return np_scope_return(red_apply(p, np_convert(x, x->dtype, false), &r, keepdims));
}

jx_array *jx_max(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return max_min("jx_max", true, x, naxes, axes, keepdims);
}

jx_array *jx_min(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return max_min("jx_min", false, x, naxes, axes, keepdims);
}

/* any/all: x != 0 (NaN is true), then or/and. */
static jx_array *any_all(const char *fn, bool is_any, jx_array *x, int naxes,
                         const int *axes, bool keepdims) {
  Red r;
  if (!red_setup(fn, x, naxes, axes, &r)) return NULL;
  jx_scope_begin();
  jx_array *b = np_convert(x, JX_BOOL, false);
  return np_scope_return(red_apply(is_any ? PRIM_reduce_or : PRIM_reduce_and, b, &r, keepdims));
}

jx_array *jx_any(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return any_all("jx_any", true, x, naxes, axes, keepdims);
}

jx_array *jx_all(jx_array *x, int naxes, const int *axes, bool keepdims) {
  return any_all("jx_all", false, x, naxes, axes, keepdims);
}

/* sum(xc) / count in xc's dtype (reductions.py _mean: the count is converted to the
 * computation dtype), for real floats as XLA computes it: the count is a constant of
 * JAX's program and XLA's algebraic simplifier turns A / constant into
 * A * (1 / constant), the reciprocal rounded to the dtype, eagerly and under jit alike
 * (the correctly rounded quotient was 1 ulp off jnp.mean in about half of the float32
 * means of 7 elements). An empty reduction gives 0 * inf = NaN, as JAX's 0/0. */
static jx_array *mean_of(jx_array *xc, const Red *r, bool keepdims) {
  jx_array *s = red_apply(PRIM_reduce_sum, xc, r, keepdims);
  if (!s) return NULL;
  if (s->dtype == JX_FLOAT32 || s->dtype == JX_FLOAT64) { /* (float16: summed in float32) */
    /* 1 / count computed in the dtype, from the count rounded to it, as XLA does */
    double inv = s->dtype == JX_FLOAT32 ? (double)(1.0f / (float)r->count)
                                        : 1.0 / (double)r->count;
    return prim_binary(PRIM_mul, s, np_full(inv, s->dtype, s->ndim, s->shape));
  }
  jx_array *n = np_full((double)r->count, s->dtype, s->ndim, s->shape);
  return prim_binary(PRIM_div, s, n);
}

/* jnp.mean: result dtype to_inexact(x); float16/bfloat16 accumulate in float32. */
jx_array *jx_mean(jx_array *x, int naxes, const int *axes, bool keepdims) {
  Red r;
  if (!red_setup("jx_mean", x, naxes, axes, &r)) return NULL;
  jx_scope_begin();
  jx_dtype out = to_inexact(x->dtype), comp = upcast_f16(out);
  jx_array *m = mean_of(np_convert(x, comp, false), &r, keepdims);
  return np_scope_return(m ? np_convert(m, out, false) : NULL);
}

/* Two passes, as reductions.py _var: mean (kept dims), squared deviations, their sum
 * divided by count - ddof; a divisor <= 0 gives NaN. Ints give the default float;
 * float16/bfloat16 are computed in float32 and rounded back. */
static jx_array *var_impl(const char *fn, jx_array *x, int naxes, const int *axes,
                          int64_t ddof, bool keepdims) {
  Red r;
  if (!red_setup(fn, x, naxes, axes, &r)) return NULL;
  jx_dtype out = to_inexact(x->dtype), comp = upcast_f16(out);
  jx_array *xc = np_convert(x, comp, false);
  jx_array *m = mean_of(xc, &r, true);
  if (!m) return NULL;
  int all[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) all[d] = d;
  jx_array *mb = prim_broadcast_in_dim(m, x->ndim, x->shape, all);
  jx_array *c = prim_binary(PRIM_sub, xc, mb);
  jx_array *sq = prim_binary(PRIM_mul, c, c);
  if (c && dtype_is_complex(c->dtype)) { /* |c|^2 = real(c conj(c)): a real variance */
    sq = prim_unary(PRIM_real, prim_binary(PRIM_mul, c, prim_unary(PRIM_conj, c)));
    out = comp = dtype_real_part(comp);
  }
  jx_array *s = red_apply(PRIM_reduce_sum, sq, &r, keepdims);
  if (!s) return NULL;
  double norm = (double)r.count - (double)ddof;
  jx_array *v = norm > 0 ? prim_binary(PRIM_div, s, np_full(norm, comp, s->ndim, s->shape))
                         : np_full(NAN, comp, s->ndim, s->shape);
  return v ? np_convert(v, out, false) : NULL;
}

jx_array *jx_var(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims) {
  jx_scope_begin();
  return np_scope_return(var_impl("jx_var", x, naxes, axes, ddof, keepdims));
}

jx_array *jx_std(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims) {
  jx_scope_begin();
  jx_array *v = var_impl("jx_std", x, naxes, axes, ddof, keepdims);
  return np_scope_return(v ? prim_unary(PRIM_sqrt, v) : NULL);
}

/* A jitted argmax/argmin in one pass (one reduction instead of a max and then a search
 * for its first index): each element becomes the 64-bit key (order(x) << 32) | ~index,
 * order(x) an unsigned 32-bit number that grows with x (argmax) or with -x (argmin),
 * every NaN the largest key and -0 equal to +0, so the greatest key is lax.argmax's
 * answer -- the first NaN, else the first extreme value -- and its index is ~key's low
 * 32 bits. v is 32 bits wide at most (bool/small ints/half floats converted first), the
 * axis shorter than 2^31; iota is the staged index along the axis. NULL with no error
 * when v does not qualify. */
static jx_array *arg_packed(bool is_max, jx_array *v, jx_array *iota, const bool *mask) {
  jx_dtype d = v->dtype;
  bool flt = d == JX_FLOAT32 || d == JX_FLOAT16 || d == JX_BFLOAT16;
  if (!flt && d != JX_INT32 && d != JX_UINT32 && d != JX_INT16 && d != JX_INT8 && d != JX_UINT16 && d != JX_UINT8)
    return NULL;
  const int n = v->ndim;
  const int64_t *sh = v->shape;
  jx_array *u;
  if (flt) {
    jx_array *f = d == JX_FLOAT32 ? v : prim_convert(v, JX_FLOAT32, false);
    jx_array *zero = np_full(0.0, JX_FLOAT32, n, sh);
    f = prim_select(prim_binary(PRIM_eq, f, zero), zero, f); /* -0 -> +0 */
    /* IEEE order as unsigned order: b ^ ((b >> 31) | INT32_MIN) with b the bits as int32
     * and >> arithmetic, so ~b where the sign is set and b | 2^31 where not -- a shift
     * and one three-input logic instruction on the GPU (the select of ~u and u | 2^31 on
     * f < 0 took four; the loop of argmax over 2^28 float32 issues on half its cycles) */
    jx_array *b = prim_bitcast(f, JX_INT32);
    jx_array *sign = prim_binary(PRIM_shift_right, b, np_full(31.0, JX_INT32, n, sh));
    u = prim_binary(PRIM_xor, b, prim_binary(PRIM_or, sign, np_full(-2147483648.0, JX_INT32, n, sh)));
    u = prim_bitcast(u, JX_UINT32);
    if (!is_max) u = prim_unary(PRIM_not, u);
    u = prim_select(prim_binary(PRIM_ne, f, f), np_full(4294967295.0, JX_UINT32, n, sh), u);
  } else if (d == JX_UINT32 || d == JX_UINT16 || d == JX_UINT8) {
    u = prim_convert(v, JX_UINT32, false);
    if (!is_max) u = prim_unary(PRIM_not, u);
  } else { /* signed: flip the sign bit */
    u = prim_bitcast(prim_convert(v, JX_INT32, false), JX_UINT32);
    u = prim_binary(PRIM_xor, u, np_full(2147483648.0, JX_UINT32, n, sh));
    if (!is_max) u = prim_unary(PRIM_not, u);
  }
  jx_array *lo = prim_unary(PRIM_not, prim_bitcast(prim_convert(iota, JX_INT32, false), JX_UINT32));
  /* 32 as uint64 (no uint64 literal without x64): converted as a scalar, then broadcast
   * (a view: the kernel sees a literal, not an array as large as v) */
  jx_array *k32 = prim_broadcast_in_dim(prim_convert(np_constant(32.0, JX_UINT32), JX_UINT64, false), n, sh, NULL);
  jx_array *key = prim_binary(PRIM_or, prim_binary(PRIM_shift_left, prim_convert(u, JX_UINT64, false), k32),
                              prim_convert(lo, JX_UINT64, false));
  jx_array *best = prim_reduce(PRIM_reduce_max, key, mask);
  jx_array *idx = best ? prim_unary(PRIM_not, prim_convert(best, JX_UINT32, false)) : NULL;
  return idx ? prim_convert(idx, iota->dtype, false) : NULL;
}

/* argmax/argmin as lax.argmax: m = reduce_max (NaN-propagating), hit = (x == m) or
 * isnan(x), so the first NaN wins when there is one; the index is the smallest iota
 * among the hits (first occurrence). JX_AXIS_NONE flattens x first. */
static jx_array *arg_impl(const char *fn, bool is_max, jx_array *x, int axis, bool keepdims) {
  if (np_null_arg(fn, x, "x")) return NULL;
  jx_array *v = x;
  int ax = axis;
  if (axis == JX_AXIS_NONE) {
    int64_t n = jx_size(x);
    v = prim_reshape(x, 1, &n);
    ax = 0;
    if (!v) return NULL;
  } else if (!array_normalize_axis(fn, &ax, x->ndim)) {
    return NULL;
  }
  if (v->shape[ax] == 0) {
    char b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_VALUE, "%s: attempt to get %s of an empty sequence (shape %s, axis %d)",
              fn, is_max ? "argmax" : "argmin", error_shape_str(b, x->ndim, x->shape), axis);
    return NULL;
  }
  if (dtype_is_bool(v->dtype)) v = np_convert(v, JX_INT32, false);
  if (v && dtype_is_complex(v->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: complex %s has no order here (JAX's argmax/argmin of "
              "complex is not supported)", fn, jx_dtype_name(v->dtype));
    return NULL;
  }
  bool mask[JX_MAX_NDIM] = {false};
  mask[ax] = true;
  int keep[JX_MAX_NDIM], k = 0;
  for (int d = 0; d < v->ndim; d++)
    if (d != ax) keep[k++] = d;
  jx_dtype it = dtype_default_int();
  /* under jit, the iota is staged: the kernel computes the index instead of loading a
   * materialized iota as large as x */
  PrimParams ip = {.dtype = it, .ndim = v->ndim, .axis = ax};
  memcpy(ip.shape, v->shape, (size_t)v->ndim * sizeof v->shape[0]);
  jx_array *iota = stage_bind_nullary(v, PRIM_iota, &ip);
  jx_array *r = NULL;
  /* staged (under jit): one pass over a packed (value, index) key */
  if (iota && v->shape[ax] < INT32_MAX) {
    r = arg_packed(is_max, v, iota, mask);
    if (!r && error_pending()) return NULL;
  }
  if (!r) {
    jx_array *m = prim_reduce(is_max ? PRIM_reduce_max : PRIM_reduce_min, v, mask);
    jx_array *hit = prim_binary(PRIM_eq, v, prim_broadcast_in_dim(m, v->ndim, v->shape, keep));
    if (dtype_is_floating(v->dtype)) hit = prim_binary(PRIM_or, hit, prim_binary(PRIM_ne, v, v));
    if (!iota) iota = prim_iota(it, v->ndim, v->shape, ax);
    jx_array *none = np_full((double)v->shape[ax], it, v->ndim, v->shape);
    r = prim_reduce(PRIM_reduce_min, prim_select(hit, iota, none), mask);
  }
  if (r && keepdims) {
    int64_t ks[JX_MAX_NDIM];
    for (int d = 0; d < x->ndim; d++) ks[d] = (axis == JX_AXIS_NONE || d == ax) ? 1 : x->shape[d];
    r = prim_reshape(r, x->ndim, ks);
  }
  return r;
}

jx_array *jx_argmax(jx_array *x, int axis, bool keepdims) {
  jx_scope_begin();
  return np_scope_return(arg_impl("jx_argmax", true, x, axis, keepdims));
}

jx_array *jx_argmin(jx_array *x, int axis, bool keepdims) {
  jx_scope_begin();
  return np_scope_return(arg_impl("jx_argmin", false, x, axis, keepdims));
}

/* ------------------------------------------------------------ cov, corrcoef */

/* A 1-d weights array of n entries (fn names errors; JAX raises RuntimeError). */
static bool check_weights(const char *fn, const char *what, jx_array *w, int64_t n) {
  char b[ARRAY_DESCRIBE_BUF];
  if (w->ndim > 1) {
    error_set(JX_ERR_SHAPE, "%s: cannot handle multidimensional %s, got %s", fn, what, array_describe(b, w));
    return false;
  }
  if (w->ndim == 0 || w->shape[0] != n) {
    error_set(JX_ERR_SHAPE, "%s: %s %s does not match the %lld observations", fn, what, array_describe(b, w),
              (long long)n);
    return false;
  }
  return true;
}

/* lax_numpy.cov, step for step: X = atleast_2d(m) (transposed unless rowvar), y's
 * variables appended as rows; the weighted mean removed; dot(X, (X w)^T) / f. */
static jx_array *cov_impl(const char *fn, jx_array *m, jx_array *y, bool rowvar, bool bias, const int64_t *ddof_p,
                          jx_array *fweights, jx_array *aweights) {
  if (np_null_arg(fn, m, "m")) return NULL;
  char b[ARRAY_DESCRIBE_BUF];
  jx_array *X, *Y = NULL;
  if (y) {
    /* util.promote_args_inexact also promotes the shapes: m's and y's must broadcast */
    jx_array *pr[2];
    int bnd;
    int64_t bs[JX_MAX_NDIM];
    if (!np_broadcast_shapes(fn, 2, (jx_array *[]){m, y}, &bnd, bs)) return NULL;
    if (!np_promote(fn, 2, (jx_array *[]){m, y}, pr)) return NULL;
    X = np_to_inexact(pr[0]), Y = np_to_inexact(pr[1]);
    if (Y && Y->ndim > 2) {
      error_set(JX_ERR_VALUE, "%s: y has more than 2 dimensions (%s)", fn, array_describe(b, y));
      return NULL;
    }
  } else {
    X = np_to_inexact(m);
  }
  if (!X) return NULL;
  if (m->ndim > 2) {
    error_set(JX_ERR_VALUE, "%s: m has more than 2 dimensions (%s)", fn, array_describe(b, m));
    return NULL;
  }
  int m_ndim = m->ndim;
  X = jx_atleast_2d(X);
  if (X && !rowvar && m_ndim != 1) X = jx_transpose(X, NULL);
  if (!X) return NULL;
  if (X->shape[0] == 0) return jx_zeros(2, (int64_t[]){0, 0}, dtype_canonicalize(JX_FLOAT64));
  if (Y) {
    Y = jx_atleast_2d(Y);
    if (Y && !rowvar && Y->shape[0] != 1) Y = jx_transpose(Y, NULL);
    X = Y ? jx_concatenate(2, (jx_array *[]){X, Y}, 0) : NULL;
    if (!X) return NULL;
  }
  int64_t nvar = X->shape[0], nobs = X->shape[1];
  if (nobs == 0) {
    int64_t s[2] = {nvar, nvar};
    return jx_full(nvar == 1 ? 0 : 2, s, NAN, X->dtype);
  }
  int64_t ddof = ddof_p ? *ddof_p : bias ? 0 : 1;
  jx_array *w = NULL, *aw = NULL;
  if (fweights) {
    if (!check_weights(fn, "fweights", fweights, nobs)) return NULL;
    if (!dtype_is_integer(fweights->dtype)) {
      error_set(JX_ERR_DTYPE, "%s: fweights must be integer, got %s", fn, array_describe(b, fweights));
      return NULL;
    }
    w = jx_abs(fweights);
  }
  if (aweights) {
    if (!check_weights(fn, "aweights", aweights, nobs)) return NULL;
    aw = jx_abs(aweights);
    w = w ? jx_multiply(w, aw) : aw;
  }
  jx_array *avg, *f;
  if (!w) {
    avg = jx_mean(X, 1, (int[]){1}, false);
    f = jx_scalar((double)(nobs - ddof));
  } else {
    /* jnp.average(X, axis=1, weights=w, returned=True): X and w promoted together */
    jx_array *pr[2];
    if (!np_promote(fn, 2, (jx_array *[]){X, w}, pr)) return NULL;
    jx_array *wa = np_to_inexact(pr[1]);
    X = np_to_inexact(pr[0]);
    jx_array *wrow = wa ? jx_reshape(wa, 2, (int64_t[]){1, nobs}) : NULL;
    jx_array *w_sum = jx_sum(wa, 0, NULL, false);
    avg = jx_divide(jx_sum(jx_multiply(X, wrow), 1, (int[]){1}, false), w_sum);
    if (ddof == 0)
      f = w_sum;
    else if (!aweights)
      f = jx_subtract(w_sum, jx_scalar((double)ddof));
    else
      f = jx_subtract(w_sum, jx_divide(jx_multiply(jx_scalar((double)ddof), jx_sum(jx_multiply(w, aw), 0, NULL, false)),
                                       w_sum));
  }
  X = jx_subtract(X, jx_expand_dims(avg, 1));
  jx_array *XT = w ? jx_multiply(X, jx_reshape(w, 2, (int64_t[]){1, nobs})) : X;
  XT = XT ? jx_transpose(XT, NULL) : NULL;
  jx_array *c = jx_true_divide(jx_dot(X, XT), f);
  return c ? jx_squeeze(c, 0, NULL) : NULL;
}

jx_array *jx_cov(jx_array *m, jx_array *y, bool rowvar, bool bias, const int64_t *ddof, jx_array *fweights,
                 jx_array *aweights) {
  jx_scope_begin();
  return np_scope_return(cov_impl("jx_cov", m, y, rowvar, bias, ddof, fweights, aweights));
}

jx_array *jx_corrcoef(jx_array *x, jx_array *y, bool rowvar) {
  jx_scope_begin();
  jx_array *c = cov_impl("jx_corrcoef", x, y, rowvar, false, NULL, NULL, NULL);
  if (!c) return np_scope_return(NULL);
  if (c->ndim == 0) return np_scope_return(jx_divide(c, c)); /* nan for nan, inf and 0 */
  jx_array *sd = jx_sqrt(jx_diagonal(c, 0, 0, 1));
  c = jx_divide(jx_divide(c, jx_expand_dims(sd, 1)), jx_expand_dims(sd, 0));
  return np_scope_return(c ? jx_clip(c, jx_scalar(-1.0), jx_scalar(1.0)) : NULL);
}
