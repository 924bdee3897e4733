/* elementwise.c -- jax.numpy's elementwise functions (ufuncs), jnp.where / clip and the
 * dtype conversions astype / bitcast, built only from primitives. Each function follows
 * the formula of its jax.numpy source (jax/_src/numpy/ufuncs.py, lax_numpy.py,
 * lax/other.py) step by step, so values, dtypes and weak types match JAX's, NaN, inf
 * and -0 included. */
#include <math.h>
#include <string.h>

#include "lib/numpy/np.h"

/* ---------------------------------------------------------------- temporaries */

/* Intermediates of one public function. Every array a function creates goes through
 * tmp(); done() drops them all except the result, so a failure anywhere leaves nothing
 * behind. Primitives pass NULL through, so formulas are written straight and checked
 * once, at the end. */
enum { TMP_MAX = 128 };
typedef struct Tmp {
  int n;
  jx_array *a[TMP_MAX];
} Tmp;

static jx_array *tmp(Tmp *t, jx_array *a) {
  if (!a) return NULL;
  if (!JX_CHECK(t->n < TMP_MAX)) return a; /* leaks one array; only a bug gets here */
  t->a[t->n++] = a;
  return a;
}

/* Releases the temporaries and returns `out` as a new reference: ownership of the
 * temporary it names passes to the caller; an input (not a temporary) gets a new
 * reference, as jnp.asarray returns its argument. */
static jx_array *done(Tmp *t, jx_array *out) {
  bool owned = false;
  for (int i = t->n - 1; i >= 0 && out; i--)
    if (t->a[i] == out) {
      t->a[i] = NULL;
      owned = true;
      break;
    }
  for (int i = 0; i < t->n; i++) jx_free(t->a[i]);
  t->n = 0;
  return out && !owned ? jx_ref(out) : out;
}

/* NULL arguments: return NULL, recording JX_ERR_VALUE only if no error is pending
 * (a NULL usually comes from an earlier failed call, whose error is kept). */
static bool check_args(const char *fn, int n, jx_array *const *in) {
  for (int i = 0; i < n; i++)
    if (!in[i]) {
      error_set(JX_ERR_VALUE, "%s: argument %d is NULL", fn, i + 1);
      return false;
    }
  return np_no_float0(fn, n, in);
}

static void dtype_error(const char *fn, jx_dtype d, const char *expected) {
  error_set(JX_ERR_DTYPE, "%s: dtype %s is not supported (expected %s)", fn,
            jx_dtype_name(d), expected);
}

/* ------------------------------------------------------ tracked primitive calls */

static jx_array *un(Tmp *t, Prim p, jx_array *x) { return tmp(t, prim_unary(p, x)); }
static jx_array *bin(Tmp *t, Prim p, jx_array *x, jx_array *y) {
  return tmp(t, prim_binary(p, x, y));
}
static jx_array *cvt(Tmp *t, jx_array *x, jx_dtype d, bool weak) {
  return tmp(t, np_convert(x, d, weak));
}

/* lax.select_n: the result is weak iff both cases are (lax's _select_weak_type_rule:
 * the predicate does not count). */
static jx_array *sel(Tmp *t, jx_array *c, jx_array *x, jx_array *y) {
  jx_array *r = tmp(t, prim_select(c, x, y));
  if (r && r->weak != (x->weak && y->weak)) r = cvt(t, r, r->dtype, x->weak && y->weak);
  return r;
}

/* Weak type of a constant made like x (JAX has three kinds). */
typedef enum Like {
  STRONG, /* _constant_like, NumPy constants: strong */
  FULL,   /* lax.full_like / _ones / _zeros, and Python scalars in jnp ops: x's weak */
  CONST   /* lax._const (_lax_const in ufuncs.py): weak only for a weak 0-d x
           * (dtypes.is_weakly_typed_scalar), else strong */
} Like;

/* A constant v of x's dtype and shape, with the weak type `kind` gives. */
static jx_array *like(Tmp *t, jx_array *x, double v, Like kind) {
  if (!x) return NULL;
  bool weak = x->weak && (kind == FULL || (kind == CONST && x->ndim == 0));
  jx_array *c = cvt(t, tmp(t, np_constant(v, x->dtype)), x->dtype, weak);
  return tmp(t, np_broadcast_to("full_like", c, x->ndim, x->shape));
}

/* A strong bool array of x's shape filled with v (lax.full_like(x, v, bool)). */
static jx_array *bool_like(Tmp *t, jx_array *x, bool v) {
  jx_array *c = tmp(t, np_constant(v, JX_BOOL));
  return tmp(t, np_broadcast_to("full_like", c, x->ndim, x->shape));
}

/* Shorthands used by the formulas. */
static jx_array *add(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_add, x, y); }
static jx_array *sub(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_sub, x, y); }
static jx_array *mul(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_mul, x, y); }
static jx_array *dv(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_div, x, y); }
static jx_array *lt(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_lt, x, y); }
static jx_array *eq(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_eq, x, y); }
static jx_array *ne(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_ne, x, y); }
static jx_array *and_(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_and, x, y); }
static jx_array *or_(Tmp *t, jx_array *x, jx_array *y) { return bin(t, PRIM_or, x, y); }
/* x == v and x != v against a constant of x's dtype (a predicate: weakness moot). */
static jx_array *eqc(Tmp *t, jx_array *x, double v) {
  return eq(t, x, like(t, x, v, STRONG));
}
static jx_array *nec(Tmp *t, jx_array *x, double v) {
  return ne(t, x, like(t, x, v, STRONG));
}

/* ------------------------------------------------------------ promotion */

typedef enum Promo {
  PROMO_ANY,     /* promote_args: the common dtype */
  PROMO_NUMERIC, /* promote_args_numeric: bool becomes the default int */
  PROMO_INEXACT  /* promote_args_inexact: bool / ints become a float (dtype_to_inexact) */
} Promo;

static jx_dtype promo_dtype(jx_dtype d, Promo k) {
  if (k == PROMO_NUMERIC && d == JX_BOOL) return dtype_default_int();
  if (k == PROMO_INEXACT) return dtype_to_inexact(d);
  return d;
}

/* Promotes n operands (jnp.result_type, weak types included, then the Promo rule) and
 * broadcasts them (NumPy rules). Shapes are checked first, as JAX does. */
static bool prep(Tmp *t, const char *fn, int n, jx_array *const *in, Promo k,
                 jx_array **out) {
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  if (!check_args(fn, n, in) || !np_broadcast_shapes(fn, n, in, &ndim, shape)) return false;
  bool weak;
  jx_dtype d = promo_dtype(np_result_type(n, in, &weak), k);
  bool ok = true;
  const jx_array *like = np_top_tracer(n, in);
  for (int i = 0; i < n; i++) {
    jx_array *x = in[i];
    if (x->dtype == d && x->weak == weak && x->ndim == ndim &&
        (ndim == 0 || memcmp(x->shape, shape, (size_t)ndim * sizeof(int64_t)) == 0)) {
      out[i] = x; /* as it is: borrowed from the caller (np_convert and the broadcast would
                   * each take and drop a reference: a quarter of a cached eager add) */
      continue;
    }
    out[i] = tmp(t, np_broadcast_to_like(fn, cvt(t, x, d, weak), ndim, shape, like));
    ok = ok && out[i];
  }
  return ok;
}

static bool prep2(Tmp *t, const char *fn, jx_array *x, jx_array *y, Promo k,
                  jx_array **a, jx_array **b) {
  jx_array *in[2] = {x, y}, *out[2];
  if (!prep(t, fn, 2, in, k, out)) return false;
  *a = out[0];
  *b = out[1];
  return true;
}

/* Unary promotion: promote_args (k = ANY) keeps x; NUMERIC/INEXACT convert it. */
static jx_array *prep1(Tmp *t, const char *fn, jx_array *x, Promo k) {
  if (!check_args(fn, 1, &x)) return NULL;
  return cvt(t, x, promo_dtype(x->dtype, k), x->weak);
}

static bool is_int(jx_dtype d) { return dtype_is_integer(d); }
static bool is_float(jx_dtype d) { return dtype_is_floating(d); }

/* ==================================================== binary arithmetic */

/* jnp.add: bool adds as logical or (ufuncs.py add). */
static jx_array *add_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_ANY, &a, &b)) return done(&t, NULL);
  return done(&t, bin(&t, a->dtype == JX_BOOL ? PRIM_or : PRIM_add, a, b));
}

/* jnp.subtract: lax.sub rejects bool (TypeError in JAX). */
static jx_array *subtract_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_ANY, &a, &b)) return done(&t, NULL);
  if (a->dtype == JX_BOOL) {
    dtype_error(fn, JX_BOOL, "a numeric dtype; use jx_logical_xor for bool");
    return done(&t, NULL);
  }
  return done(&t, sub(&t, a, b));
}

/* jnp.multiply: bool multiplies as logical and. */
static jx_array *multiply_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_ANY, &a, &b)) return done(&t, NULL);
  return done(&t, bin(&t, a->dtype == JX_BOOL ? PRIM_and : PRIM_mul, a, b));
}

/* jnp.true_divide: promote_args_inexact then lax.div. */
static jx_array *divide_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_INEXACT, &a, &b)) return done(&t, NULL);
  return done(&t, dv(&t, a, b));
}

/* lax.round(x) with its default RoundingMethod.AWAY_FROM_ZERO, from the half-to-even
 * primitive: ties (|x - trunc(x)| == 0.5, an exact difference) step away from zero. */
static jx_array *round_away(Tmp *t, jx_array *x) {
  jx_array *tr = un(t, PRIM_trunc, x);
  jx_array *tie = eqc(t, un(t, PRIM_abs, sub(t, x, tr)), 0.5);
  return sel(t, tie, add(t, tr, un(t, PRIM_sign, x)), un(t, PRIM_round, x));
}

/* ufuncs.py _float_divmod (after CPython's float_divmod):
 *   mod = rem(x, y); div = (y == 0 ? x : x - mod) / y
 *   where mod != 0 and sign(y) != sign(mod): mod += y, div -= 1
 *   return round(div), mod */
static jx_array *float_floor_divide(Tmp *t, jx_array *x, jx_array *y) {
  jx_array *mod = bin(t, PRIM_rem, x, y);
  jx_array *xc = sel(t, eqc(t, y, 0), x, sub(t, x, mod));
  jx_array *div = dv(t, xc, y);
  jx_array *ind = and_(t, nec(t, mod, 0),
                       ne(t, un(t, PRIM_sign, y), un(t, PRIM_sign, mod)));
  /* (mod itself is not needed here.) `div - 1.0`: a Python float keeps div's dtype
   * and weak type. */
  div = sel(t, ind, sub(t, div, like(t, div, 1.0, FULL)), div);
  return round_away(t, div);
}

/* True (JX_ERR_DTYPE naming fn) when a is complex: floor_divide, remainder and fmod
 * take real operands only, as JAX raises TypeError. */
static bool refuse_complex(const char *fn, const jx_array *a) {
  if (!dtype_is_complex(a->dtype)) return false;
  error_set(JX_ERR_DTYPE, "%s: complex operands are not supported (got %s), as in JAX", fn,
            jx_dtype_name(a->dtype));
  return true;
}

/* jnp.floor_divide: unsigned -> lax.div; signed -> truncated quotient minus one where
 * the signs differ and the remainder is nonzero; floats -> _float_divmod. Integer
 * division by zero is XLA's (x / 0 = -1), then the same fix-up, as in JAX. */
static jx_array *floor_divide_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_NUMERIC, &a, &b)) return done(&t, NULL);
  if (refuse_complex(fn, a)) return done(&t, NULL);
  if (dtype_is_unsigned(a->dtype)) return done(&t, dv(&t, a, b));
  if (is_int(a->dtype)) {
    jx_array *q = dv(&t, a, b);
    jx_array *fix = and_(&t, ne(&t, un(&t, PRIM_sign, a), un(&t, PRIM_sign, b)),
                         nec(&t, bin(&t, PRIM_rem, a, b), 0));
    return done(&t, sel(&t, fix, sub(&t, q, like(&t, q, 1, FULL)), q));
  }
  return done(&t, float_floor_divide(&t, a, b));
}

/* jnp.remainder (ufuncs.py): integer divisors of 0 become 1 (so x % 0 = 0); then
 * trunc_mod = rem(x, y), plus y where trunc_mod != 0 and its sign differs from y's. */
static jx_array *remainder_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_NUMERIC, &a, &b)) return done(&t, NULL);
  if (refuse_complex(fn, a)) return done(&t, NULL);
  if (is_int(b->dtype)) b = sel(&t, eqc(&t, b, 0), like(&t, b, 1, FULL), b);
  jx_array *zero = like(&t, a, 0, STRONG);
  jx_array *m = bin(&t, PRIM_rem, a, b);
  jx_array *plus = and_(&t, ne(&t, lt(&t, m, zero), lt(&t, b, zero)), ne(&t, m, zero));
  return done(&t, sel(&t, plus, add(&t, m, b), m));
}

/* jnp.fmod: lax.rem (C fmod, sign of x); when x and y promote to an integer dtype
 * (not bool), divisors of 0 become 1 first. */
static jx_array *fmod_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_NUMERIC, &a, &b)) return done(&t, NULL);
  if (refuse_complex(fn, a)) return done(&t, NULL);
  jx_array *in[2] = {x, y};
  if (is_int(np_result_type(2, in, NULL)))
    b = sel(&t, eqc(&t, b, 0), like(&t, b, 1, FULL), b);
  return done(&t, bin(&t, PRIM_rem, a, b));
}

/* lax.integer_pow(x, n) (lax.py _integer_pow): binary exponentiation, squaring only
 * while bits remain; n < 0 gives 1 / x**|n|; n == 0 gives ones. */
static jx_array *integer_pow(Tmp *t, jx_array *x, int64_t n) {
  if (n == 0) return like(t, x, 1, FULL);
  uint64_t m = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
  jx_array *acc = NULL;
  while (m > 0) {
    if (m & 1) acc = acc ? mul(t, acc, x) : x;
    m >>= 1;
    if (m > 0) x = mul(t, x, x);
  }
  return n < 0 ? dv(t, like(t, acc, 1, FULL), acc) : acc;
}

/* ufuncs.py _pow_int_int: 6 steps of binary exponentiation over the low 6 bits of y
 * (more would overflow for any |x| > 1); acc starts at 0 for 0 ** (y != 0). Negative
 * exponents therefore use their two's-complement low bits, as in JAX. lax shifts y
 * logically; arithmetic shifts agree on the 6 bits read. */
static jx_array *pow_int_int(Tmp *t, jx_array *x, jx_array *y) {
  jx_array *zero = like(t, y, 0, STRONG), *one = like(t, y, 1, STRONG);
  jx_array *acc = sel(t, and_(t, eq(t, x, zero), ne(t, y, zero)), zero, one);
  for (int i = 0; i < 6; i++) {
    acc = sel(t, nec(t, and_(t, y, one), 0), mul(t, acc, x), acc);
    x = mul(t, x, x);
    y = bin(t, PRIM_shift_right, y, one);
  }
  return acc;
}

/* Reads a concrete 0-d integer/bool array (JAX: core.is_concrete + operator.index). */
static bool concrete_int(jx_array *y, int64_t *n) {
  if (y->ndim != 0 || y->tracer || !y->buf) return false;
  if (!is_int(y->dtype) && y->dtype != JX_BOOL) return false;
  union {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
  } v;
  if (jx_read(y, &v, jx_dtype_itemsize(y->dtype)) != JX_OK) return false;
  switch (y->dtype) {
  case JX_BOOL:
  case JX_UINT8: *n = v.u8; break;
  case JX_INT8: *n = v.i8; break;
  case JX_INT16: *n = v.i16; break;
  case JX_UINT16: *n = v.u16; break;
  case JX_INT32: *n = v.i32; break;
  case JX_UINT32: *n = v.u32; break;
  case JX_INT64: *n = v.i64; break;
  default: *n = (int64_t)v.u64; break;
  }
  return true;
}

/* jnp.power (ufuncs.py power / _power), case by case:
 *  1. y a concrete integer scalar: lax.integer_pow(x, y) with x promoted alone to a
 *     numeric dtype (so the result dtype is x's); integer x with y < 0 is an error;
 *  2. both promote to bool/int: _pow_int_int;
 *  3. float x with integer y: lax.pow(x, y) in x's dtype with y kept integer (its JVP
 *     is then 0 where y == 0, as JAX's), no promotion;
 *  4. otherwise lax.pow on the promoted operands. */
static jx_array *power_(const char *fn, jx_array *x, jx_array *y) {
  jx_array *in[2] = {x, y};
  if (!check_args(fn, 2, in)) return NULL;
  Tmp t = {0};
  int64_t n;
  if (concrete_int(y, &n)) {
    jx_array *a = prep1(&t, fn, x, PROMO_NUMERIC);
    if (a && n < 0 && is_int(a->dtype)) {
      error_set(JX_ERR_DTYPE, "%s: integers cannot be raised to negative powers (%s ** %lld)",
                fn, jx_dtype_name(a->dtype), (long long)n);
      return done(&t, NULL);
    }
    return done(&t, a ? integer_pow(&t, a, n) : NULL);
  }
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_NUMERIC, &a, &b)) return done(&t, NULL);
  if (is_int(a->dtype)) return done(&t, pow_int_int(&t, a, b));
  if (is_float(x->dtype) && is_int(y->dtype)) {
    int ndim = a->ndim;
    bool w = x->weak && y->weak;
    jx_array *xa = tmp(&t, np_broadcast_to(fn, cvt(&t, x, x->dtype, w), ndim, a->shape));
    jx_array *yb = tmp(&t, np_broadcast_to(fn, y, ndim, a->shape)); /* stays integer */
    return done(&t, bin(&t, PRIM_pow, xa, yb));
  }
  return done(&t, bin(&t, PRIM_pow, a, b));
}

typedef enum Cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } Cmp;
static jx_array *cmp_(Tmp *t, Cmp c, jx_array *a, jx_array *b);
static jx_array *order_(Tmp *t, Cmp c, jx_array *a, jx_array *b);

/* jnp.maximum / minimum: lax.max / min (NaN-propagating). Complex: lexicographic on
 * (re, im), as lax.max's complex lowering (_minmax_complex_lowering): pick x where
 * select(re(x) == re(y), im(x) > im(y), re(x) > re(y)) (< for min), else y -- so a
 * NaN part makes the comparison false and y wins. */
static jx_array *maxmin_(const char *fn, Prim p, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_ANY, &a, &b)) return done(&t, NULL);
  if (!dtype_is_complex(a->dtype)) return done(&t, bin(&t, p, a, b));
  return done(&t, sel(&t, order_(&t, p == PRIM_max ? CMP_GT : CMP_LT, a, b), a, b));
}
static jx_array *maximum_(const char *fn, jx_array *x, jx_array *y) {
  return maxmin_(fn, PRIM_max, x, y);
}
static jx_array *minimum_(const char *fn, jx_array *x, jx_array *y) {
  return maxmin_(fn, PRIM_min, x, y);
}

/* jnp.fmax / fmin (lax_numpy.py): where(x > y | isnan(y), x, y) and the same with <:
 * a NaN operand yields the other one; ties (-0 vs +0) yield y. Complex: > and < order
 * lexicographically, isnan is either part's. */
static jx_array *fmaxmin_(const char *fn, bool is_max, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_ANY, &a, &b)) return done(&t, NULL);
  jx_array *better = order_(&t, is_max ? CMP_GT : CMP_LT, a, b);
  return done(&t, sel(&t, or_(&t, better, ne(&t, b, b)), a, b));
}
static jx_array *fmax_(const char *fn, jx_array *x, jx_array *y) {
  return fmaxmin_(fn, true, x, y);
}
static jx_array *fmin_(const char *fn, jx_array *x, jx_array *y) {
  return fmaxmin_(fn, false, x, y);
}

/* jnp.arctan2(y, x): lax.atan2 on inexact operands. */
static jx_array *arctan2_(const char *fn, jx_array *y, jx_array *x) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, y, x, PROMO_INEXACT, &a, &b)) return done(&t, NULL);
  return done(&t, bin(&t, PRIM_atan2, a, b));
}

/* jnp.hypot (ufuncs.py): with a = max(|x|,|y|), b = min(|x|,|y|):
 * a == 0 ? a : a * sqrt(1 + (b / a)**2), and inf wherever either input is +-inf
 * (even against NaN). */
static jx_array *hypot_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_INEXACT, &a, &b)) return done(&t, NULL);
  a = un(&t, PRIM_abs, a);
  b = un(&t, PRIM_abs, b);
  jx_array *inf = or_(&t, eqc(&t, a, INFINITY), eqc(&t, b, INFINITY));
  jx_array *hi = bin(&t, PRIM_max, a, b), *lo = bin(&t, PRIM_min, a, b);
  jx_array *zero = eqc(&t, hi, 0);
  jx_array *r = dv(&t, lo, sel(&t, zero, like(&t, hi, 1, FULL), hi));
  jx_array *sq = mul(&t, r, r);
  jx_array *s = add(&t, like(&t, sq, 1, FULL), sq);
  jx_array *h = sel(&t, zero, hi, mul(&t, hi, un(&t, PRIM_sqrt, s)));
  return done(&t, sel(&t, inf, like(&t, h, INFINITY, CONST), h));
}

/* jnp.logaddexp (lax/other.py logaddexp): max(x, y) + log1p(exp(-|x - y|)), and x + y
 * where x - y is NaN (a NaN input, or infinities of the same sign). -|x - y| is written
 * min(x, y) - max(x, y) (the same value): with max/min splitting ties 0.5/0.5, the
 * derivative at x == y is 0.5 for each operand, as JAX's custom JVP gives. */
static jx_array *logaddexp_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_INEXACT, &a, &b)) return done(&t, NULL);
  if (dtype_is_complex(a->dtype)) return done(&t, tmp(&t, np_logaddexp_complex(fn, a, b, false)));
  jx_array *amax = bin(&t, PRIM_max, a, b);
  jx_array *amin = bin(&t, PRIM_min, a, b);
  jx_array *delta = sub(&t, a, b);
  jx_array *soft = un(&t, PRIM_log1p, un(&t, PRIM_exp, sub(&t, amin, amax)));
  return done(&t, sel(&t, ne(&t, delta, delta), add(&t, a, b), add(&t, amax, soft)));
}

/* lax_other.logaddexp / logaddexp2 of complex a, b (one dtype): amax = the
 * lexicographic max, out = amax + log1p(exp(a + b - 2 amax)) (base 2: amax + log1p(2^(a
 * + b - 2 amax)) / ln 2, 2^z by jx_exp2), the imaginary part wrapped into [-pi, pi)
 * (base 2: pi / ln 2) as _wrap_between: rem(im + p, 2p), plus 2p where negative, minus
 * p. The constants are lax._const's, in the part dtype. */
jx_array *np_logaddexp_complex(const char *fn, jx_array *a, jx_array *b, bool base2) {
  Tmp t = {0};
  jx_array *amax = tmp(&t, maxmin_(fn, PRIM_max, a, b));
  jx_array *delta = sub(&t, add(&t, a, b), mul(&t, amax, like(&t, amax, 2, CONST)));
  jx_array *soft = base2 ? mul(&t, like(&t, amax, 1 / M_LN2, CONST), un(&t, PRIM_log1p, tmp(&t, jx_exp2(delta))))
                         : un(&t, PRIM_log1p, un(&t, PRIM_exp, delta));
  jx_array *out = add(&t, amax, soft), *im = un(&t, PRIM_imag, out);
  double period = base2 ? M_PI / M_LN2 : M_PI;
  jx_array *p = like(&t, im, period, CONST), *p2 = like(&t, im, 2 * period, CONST);
  jx_array *rem = bin(&t, PRIM_rem, add(&t, im, p), p2);
  rem = sel(&t, lt(&t, rem, like(&t, rem, 0, CONST)), add(&t, rem, p2), rem);
  return done(&t, bin(&t, PRIM_complex, un(&t, PRIM_real, out), sub(&t, rem, p)));
}

/* jnp.signbit for floats (ufuncs.py): the sign bit of the same-width integer,
 * (bitcast(x) >> (bits - 1)) converted to bool. */
static jx_array *float_signbit(Tmp *t, jx_array *x) {
  jx_dtype it = dtype_bits(x->dtype) == 16 ? JX_INT16
              : dtype_bits(x->dtype) == 32 ? JX_INT32 : JX_INT64;
  jx_array *bits = tmp(t, prim_bitcast(x, it));
  jx_array *s = bin(t, PRIM_shift_right, bits, like(t, bits, dtype_bits(it) - 1, STRONG));
  return cvt(t, s, JX_BOOL, false);
}

/* jnp.copysign: where(signbit(y), -|x|, |x|) on inexact operands. */
static jx_array *copysign_(const char *fn, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_INEXACT, &a, &b)) return done(&t, NULL);
  jx_array *m = un(&t, PRIM_abs, a);
  return done(&t, sel(&t, float_signbit(&t, b), un(&t, PRIM_neg, m), m));
}

/* ============================================================ comparisons */


/* lax has no le/ge primitive here: le(x, y) = lt(x, y) | eq(x, y), which is false
 * whenever a NaN is involved, as IEEE <= is; gt/ge swap the operands. */
static jx_array *cmp_(Tmp *t, Cmp c, jx_array *a, jx_array *b) {
  switch (c) {
  case CMP_EQ: return eq(t, a, b);
  case CMP_NE: return ne(t, a, b);
  case CMP_LT: return lt(t, a, b);
  case CMP_GT: return lt(t, b, a);
  case CMP_LE: return or_(t, lt(t, a, b), eq(t, a, b));
  case CMP_GE: return or_(t, lt(t, b, a), eq(t, a, b));
  }
  return NULL;
}
/* cmp_ with complex operands of the order comparisons compared lexicographically on
 * (re, im), as JAX's _comparison_op: select(re(a) == re(b), op(im(a), im(b)), op(re(a),
 * re(b))). */
static jx_array *order_(Tmp *t, Cmp c, jx_array *a, jx_array *b) {
  if (!a || !b || c == CMP_EQ || c == CMP_NE || !dtype_is_complex(a->dtype)) return cmp_(t, c, a, b);
  jx_array *ra = un(t, PRIM_real, a), *rb = un(t, PRIM_real, b);
  return sel(t, eq(t, ra, rb), cmp_(t, c, un(t, PRIM_imag, a), un(t, PRIM_imag, b)), cmp_(t, c, ra, rb));
}
static jx_array *compare_(const char *fn, Cmp c, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_ANY, &a, &b)) return done(&t, NULL);
  return done(&t, order_(&t, c, a, b));
}

/* ============================================================== logical */

/* ufuncs.py _to_bool: x != lax._const(x, 0). */
static jx_array *to_bool(Tmp *t, jx_array *x) {
  if (!x || x->dtype == JX_BOOL) return x;
  return ne(t, x, like(t, x, 0, CONST));
}

/* jnp.logical_and / or / xor: promote_args, then each operand != 0, then the bitwise
 * op on bools. */
static jx_array *logical_(const char *fn, Prim p, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_ANY, &a, &b)) return done(&t, NULL);
  return done(&t, bin(&t, p, to_bool(&t, a), to_bool(&t, b)));
}

/* ============================================================== bitwise */

static bool int_or_bool(const char *fn, jx_dtype d) {
  if (is_int(d) || d == JX_BOOL) return true;
  dtype_error(fn, d, "bool or integer");
  return false;
}

/* jnp.bitwise_and / or / xor: lax's, which accept bool and integers only. */
static jx_array *bitwise_(const char *fn, Prim p, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_ANY, &a, &b) || !int_or_bool(fn, a->dtype))
    return done(&t, NULL);
  return done(&t, bin(&t, p, a, b));
}

/* jnp.left_shift / right_shift: promote_args_numeric (bool -> int); right_shift is
 * arithmetic for signed, logical for unsigned (the primitive's rule); counts outside
 * [0, bits) give 0, or -1 for negative values shifted right (lax semantics). */
static jx_array *shift_(const char *fn, Prim p, jx_array *x, jx_array *y) {
  Tmp t = {0};
  jx_array *a, *b;
  if (!prep2(&t, fn, x, y, PROMO_NUMERIC, &a, &b)) return done(&t, NULL);
  if (!is_int(a->dtype)) {
    dtype_error(fn, a->dtype, "integer");
    return done(&t, NULL);
  }
  return done(&t, bin(&t, p, a, b));
}

/* ======================================================== public binary ops */

#define BINARY(name, impl)                                                     \
  jx_array *jx_##name(jx_array *x, jx_array *y) { return impl("jx_" #name, x, y); }
#define BINARY_P(name, impl, arg)                                              \
  jx_array *jx_##name(jx_array *x, jx_array *y) { return impl("jx_" #name, arg, x, y); }

BINARY(add, add_)
BINARY(subtract, subtract_)
BINARY(sub, subtract_)
BINARY(multiply, multiply_)
BINARY(mul, multiply_)
BINARY(divide, divide_)
BINARY(div, divide_)
BINARY(true_divide, divide_)
BINARY(floor_divide, floor_divide_)
BINARY(remainder, remainder_)
BINARY(mod, remainder_)
BINARY(fmod, fmod_)
BINARY(power, power_)
BINARY(maximum, maximum_)
BINARY(minimum, minimum_)
BINARY(fmax, fmax_)
BINARY(fmin, fmin_)
BINARY(hypot, hypot_)
BINARY(logaddexp, logaddexp_)
BINARY(copysign, copysign_)
BINARY_P(equal, compare_, CMP_EQ)
BINARY_P(not_equal, compare_, CMP_NE)
BINARY_P(less, compare_, CMP_LT)
BINARY_P(less_equal, compare_, CMP_LE)
BINARY_P(greater, compare_, CMP_GT)
BINARY_P(greater_equal, compare_, CMP_GE)
BINARY_P(logical_and, logical_, PRIM_and)
BINARY_P(logical_or, logical_, PRIM_or)
BINARY_P(logical_xor, logical_, PRIM_xor)
BINARY_P(bitwise_and, bitwise_, PRIM_and)
BINARY_P(bitwise_or, bitwise_, PRIM_or)
BINARY_P(bitwise_xor, bitwise_, PRIM_xor)
BINARY_P(left_shift, shift_, PRIM_shift_left)
BINARY_P(right_shift, shift_, PRIM_shift_right)

jx_array *jx_arctan2(jx_array *y, jx_array *x) { return arctan2_("jx_arctan2", y, x); }

/* ============================================================ unary ops */

/* A transcendental ufunc: promote_args_inexact, then one primitive. */
static jx_array *inexact_unary(const char *fn, Prim p, jx_array *x) {
  Tmp t = {0};
  return done(&t, un(&t, p, prep1(&t, fn, x, PROMO_INEXACT)));
}

#define INEXACT_UNARY(name, prim)                                              \
  jx_array *jx_##name(jx_array *x) { return inexact_unary("jx_" #name, PRIM_##prim, x); }

INEXACT_UNARY(exp, exp)
INEXACT_UNARY(expm1, expm1)
INEXACT_UNARY(log, log)
INEXACT_UNARY(log1p, log1p)
INEXACT_UNARY(sqrt, sqrt)
INEXACT_UNARY(rsqrt, rsqrt)
INEXACT_UNARY(cbrt, cbrt)
INEXACT_UNARY(sin, sin)
INEXACT_UNARY(cos, cos)
INEXACT_UNARY(tan, tan)
INEXACT_UNARY(arcsin, asin)
INEXACT_UNARY(arccos, acos)
INEXACT_UNARY(arctan, atan)
INEXACT_UNARY(sinh, sinh)
INEXACT_UNARY(cosh, cosh)
INEXACT_UNARY(tanh, tanh)
INEXACT_UNARY(arcsinh, asinh)
INEXACT_UNARY(arccosh, acosh)
INEXACT_UNARY(arctanh, atanh)

/* jnp.exp2: the exp2 primitive; complex x: exp(log(2) x) with log(2) a complex constant
 * (lax.exp2's lowering, whose primitive takes complex operands). */
jx_array *jx_exp2(jx_array *x) {
  Tmp t = {0};
  jx_array *a = prep1(&t, "jx_exp2", x, PROMO_INEXACT);
  if (!a || !dtype_is_complex(a->dtype)) return done(&t, un(&t, PRIM_exp2, a));
  return done(&t, un(&t, PRIM_exp, mul(&t, like(&t, a, 0.6931471805599453, FULL), a)));
}

/* jnp.log2 (ufuncs.py): log(x) / log(2), the constant computed in x's dtype (complex x:
 * the real and imaginary parts of log(x) each divided by the real log(2), as JAX). log(2) is
 * taken of a 0-d 2 and then broadcast: the log of a full-shape 2 was evaluated eagerly
 * into an array of x's size, which jit captured as a constant input (a 2^22 log2 read
 * two 16 MB arrays: 1.5x the time of log). */
jx_array *jx_log2(jx_array *x) {
  Tmp t = {0};
  jx_array *a = prep1(&t, "jx_log2", x, PROMO_INEXACT);
  if (!a) return done(&t, NULL);
  jx_array *r = un(&t, PRIM_log, a);
  bool cplx = dtype_is_complex(a->dtype);
  jx_array *re = cplx ? un(&t, PRIM_real, r) : r; /* complex: each part over log(2), as JAX */
  if (!re) return done(&t, NULL);
  jx_array *two = cvt(&t, tmp(&t, np_constant(2, re->dtype)), re->dtype, false);
  jx_array *ln2 = un(&t, PRIM_log, two);
  ln2 = ln2 ? tmp(&t, np_broadcast_to("full_like", ln2, re->ndim, re->shape)) : NULL;
  if (!cplx) return done(&t, dv(&t, r, ln2));
  return done(&t, bin(&t, PRIM_complex, dv(&t, re, ln2), dv(&t, un(&t, PRIM_imag, r), ln2)));
}

/* jnp.log10 (ufuncs.py): log(x) * 0.4342944819032518 (1 / log(10) as a NumPy
 * constant of x's dtype, hence a strong result). */
jx_array *jx_log10(jx_array *x) {
  Tmp t = {0};
  jx_array *a = prep1(&t, "jx_log10", x, PROMO_INEXACT);
  jx_array *r = un(&t, PRIM_log, a);
  if (!r || !dtype_is_complex(r->dtype)) return done(&t, mul(&t, r, like(&t, a, 0.4342944819032518, STRONG)));
  /* complex: each part scaled, as JAX (a complex product would turn log(0)'s -inf + 0j
   * into -inf + nanj) */
  jx_array *re = un(&t, PRIM_real, r), *im = un(&t, PRIM_imag, r);
  jx_array *k = like(&t, re, 0.4342944819032518, STRONG);
  return done(&t, bin(&t, PRIM_complex, mul(&t, re, k), mul(&t, im, k)));
}

/* jnp.deg2rad / rad2deg: multiply by pi/180 or 180/pi (double constants rounded to x's
 * dtype; lax._const keeps x's weak type). */
static jx_array *scale_(const char *fn, jx_array *x, double k) {
  Tmp t = {0};
  jx_array *a = prep1(&t, fn, x, PROMO_INEXACT);
  return done(&t, mul(&t, a, like(&t, a, k, CONST)));
}
jx_array *jx_deg2rad(jx_array *x) {
  return scale_("jx_deg2rad", x, 0.017453292519943295); /* np.pi / 180 */
}
jx_array *jx_rad2deg(jx_array *x) {
  return scale_("jx_rad2deg", x, 57.29577951308232); /* 180 / np.pi */
}

/* jnp.negative: lax.neg (bool rejected; unsigned wraps). */
jx_array *jx_negative(jx_array *x) {
  if (!check_args("jx_negative", 1, &x)) return NULL;
  if (x->dtype == JX_BOOL) {
    dtype_error("jx_negative", JX_BOOL, "a numeric dtype; use jx_logical_not for bool");
    return NULL;
  }
  return prim_unary(PRIM_neg, x);
}

/* jnp.positive: lax.asarray, i.e. x itself. */
jx_array *jx_positive(jx_array *x) {
  if (!check_args("jx_positive", 1, &x)) return NULL;
  return jx_ref(x);
}

/* jnp.absolute: bool and unsigned are returned as they are; else lax.abs (which wraps
 * the most negative integer onto itself). */
static jx_array *abs_(const char *fn, jx_array *x) {
  if (!check_args(fn, 1, &x)) return NULL;
  if (x->dtype == JX_BOOL || dtype_is_unsigned(x->dtype)) return jx_ref(x);
  return prim_unary(PRIM_abs, x);
}
jx_array *jx_abs(jx_array *x) { return abs_("jx_abs", x); }
jx_array *jx_absolute(jx_array *x) { return abs_("jx_absolute", x); }

/* jnp.sign: lax.sign; bool rejected (JAX's TypeError). */
jx_array *jx_sign(jx_array *x) {
  if (!check_args("jx_sign", 1, &x)) return NULL;
  if (x->dtype == JX_BOOL) {
    dtype_error("jx_sign", JX_BOOL, "a numeric dtype");
    return NULL;
  }
  return prim_unary(PRIM_sign, x);
}

/* jnp.square: promote_dtypes_numeric (bool -> int), then x * x; a complex a + bi as
 * (a - b)(a + b) + 2ab i, as chlo.square (JAX's square primitive) computes it, which
 * keeps the real part's cancellation exact: (1e20 + 1e20i)^2 = 0 + inf i in complex64,
 * where a^2 - b^2 is inf - inf. */
jx_array *jx_square(jx_array *x) {
  Tmp t = {0};
  jx_array *a = prep1(&t, "jx_square", x, PROMO_NUMERIC);
  if (!a || !dtype_is_complex(a->dtype)) return done(&t, a ? mul(&t, a, a) : NULL);
  jx_array *re = un(&t, PRIM_real, a), *im = un(&t, PRIM_imag, a);
  jx_array *r = mul(&t, sub(&t, re, im), add(&t, re, im));
  jx_array *i = mul(&t, mul(&t, re, im), like(&t, re, 2, FULL));
  return done(&t, bin(&t, PRIM_complex, r, i));
}

/* jnp.reciprocal: promote_dtypes_inexact, then lax.integer_pow(x, -1) = 1 / x. */
jx_array *jx_reciprocal(jx_array *x) {
  Tmp t = {0};
  jx_array *a = prep1(&t, "jx_reciprocal", x, PROMO_INEXACT);
  return done(&t, a ? integer_pow(&t, a, -1) : NULL);
}

/* jnp.floor / ceil / trunc: integers and bool are returned as they are. jnp.trunc is
 * where(x < 0, ceil(x), floor(x)), which equals the trunc primitive everywhere
 * (-0.0, NaN and inf included). */
static jx_array *rounding_(const char *fn, Prim p, jx_array *x) {
  if (!check_args(fn, 1, &x)) return NULL;
  if (dtype_is_complex(x->dtype)) { /* JAX: rounding is not defined on complex */
    dtype_error(fn, x->dtype, "a real dtype");
    return NULL;
  }
  if (!is_float(x->dtype)) return jx_ref(x);
  return prim_unary(p, x);
}
jx_array *jx_floor(jx_array *x) { return rounding_("jx_floor", PRIM_floor, x); }
jx_array *jx_ceil(jx_array *x) { return rounding_("jx_ceil", PRIM_ceil, x); }
jx_array *jx_trunc(jx_array *x) { return rounding_("jx_trunc", PRIM_trunc, x); }

/* jnp.round(x, decimals=0): half to even; integers unchanged; complex x: each part
 * rounded (lax.complex of the rounded parts, as JAX); bool rejected (JAX raises: bool
 * has no finfo). */
jx_array *jx_round(jx_array *x) {
  if (!check_args("jx_round", 1, &x)) return NULL;
  if (x->dtype == JX_BOOL) {
    dtype_error("jx_round", JX_BOOL, "a numeric dtype");
    return NULL;
  }
  if (dtype_is_complex(x->dtype)) {
    Tmp t = {0};
    return done(&t, bin(&t, PRIM_complex, un(&t, PRIM_round, un(&t, PRIM_real, x)),
                        un(&t, PRIM_round, un(&t, PRIM_imag, x))));
  }
  return rounding_("jx_round", PRIM_round, x);
}

/* jnp.rint: half to even; bool and integers convert to the default float, strongly
 * typed (lax.convert_element_type's default weak_type=False). */
jx_array *jx_rint(jx_array *x) {
  if (!check_args("jx_rint", 1, &x)) return NULL;
  if (dtype_is_complex(x->dtype)) return prim_binary(PRIM_complex, prim_unary(PRIM_round, prim_unary(PRIM_real, x)),
                                                     prim_unary(PRIM_round, prim_unary(PRIM_imag, x)));
  if (!is_float(x->dtype)) return prim_convert(x, dtype_default_float(), false);
  return prim_unary(PRIM_round, x);
}

/* jnp.isnan: x != x (false for every integer and bool). */
jx_array *jx_isnan(jx_array *x) {
  if (!check_args("jx_isnan", 1, &x)) return NULL;
  return prim_binary(PRIM_ne, x, x);
}

/* jnp.isinf: |x| == inf for floats (against a strong constant: strong result); false
 * elsewhere. */
jx_array *jx_isinf(jx_array *x) {
  if (!check_args("jx_isinf", 1, &x)) return NULL;
  Tmp t = {0};
  if (dtype_is_complex(x->dtype)) return prim_unary(PRIM_is_inf, x); /* either part */
  if (!is_float(x->dtype)) return done(&t, bool_like(&t, x, false));
  return done(&t, eqc(&t, un(&t, PRIM_abs, x), INFINITY));
}

/* jnp.isfinite: lax.is_finite for floats, written |x| < inf (false for NaN and inf;
 * weak type kept); true elsewhere. */
jx_array *jx_isfinite(jx_array *x) {
  if (!check_args("jx_isfinite", 1, &x)) return NULL;
  Tmp t = {0};
  if (dtype_is_complex(x->dtype)) { /* both parts finite */
    jx_array *re = un(&t, PRIM_real, x), *im = un(&t, PRIM_imag, x);
    return done(&t, and_(&t, lt(&t, un(&t, PRIM_abs, re), like(&t, re, INFINITY, FULL)),
                         lt(&t, un(&t, PRIM_abs, im), like(&t, im, INFINITY, FULL))));
  }
  if (!is_float(x->dtype)) return done(&t, bool_like(&t, x, true));
  return done(&t, lt(&t, un(&t, PRIM_abs, x), like(&t, x, INFINITY, FULL)));
}

/* jnp.signbit: x < 0 for integers, false for bool, the sign bit for floats (so
 * signbit(-0.0) and signbit(-nan) are true). Always strong. */
jx_array *jx_signbit(jx_array *x) {
  if (!check_args("jx_signbit", 1, &x)) return NULL;
  if (dtype_is_complex(x->dtype)) {
    dtype_error("jx_signbit", x->dtype, "a real dtype");
    return NULL;
  }
  Tmp t = {0};
  if (x->dtype == JX_BOOL) return done(&t, bool_like(&t, x, false));
  if (is_int(x->dtype)) return done(&t, lt(&t, x, like(&t, x, 0, STRONG)));
  return done(&t, float_signbit(&t, x));
}

/* jnp.logical_not: not(x != 0). */
jx_array *jx_logical_not(jx_array *x) {
  if (!check_args("jx_logical_not", 1, &x)) return NULL;
  Tmp t = {0};
  return done(&t, un(&t, PRIM_not, to_bool(&t, x)));
}

/* jnp.bitwise_not / invert: lax.bitwise_not on bool and integers. */
static jx_array *bitwise_not_(const char *fn, jx_array *x) {
  if (!check_args(fn, 1, &x) || !int_or_bool(fn, x->dtype)) return NULL;
  return prim_unary(PRIM_not, x);
}
jx_array *jx_bitwise_not(jx_array *x) { return bitwise_not_("jx_bitwise_not", x); }
jx_array *jx_invert(jx_array *x) { return bitwise_not_("jx_invert", x); }

/* ================================================== where, clip, conversions */

/* jnp.where(cond, x, y) (numpy/util.py _where): cond != 0 unless bool; x and y
 * promote together (not with cond); all three broadcast; lax.select. */
jx_array *jx_where(jx_array *cond, jx_array *x, jx_array *y) {
  const char *fn = "jx_where";
  jx_array *in[3] = {cond, x, y};
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  if (!check_args(fn, 3, in) || !np_broadcast_shapes(fn, 3, in, &ndim, shape)) return NULL;
  Tmp t = {0};
  bool weak;
  jx_dtype d = np_result_type(2, in + 1, &weak);
  const jx_array *like = np_top_tracer(3, in);
  jx_array *c = tmp(&t, np_broadcast_to_like(fn, to_bool(&t, cond), ndim, shape, like));
  jx_array *a = tmp(&t, np_broadcast_to_like(fn, cvt(&t, x, d, weak), ndim, shape, like));
  jx_array *b = tmp(&t, np_broadcast_to_like(fn, cvt(&t, y, d, weak), ndim, shape, like));
  return done(&t, c && a && b ? sel(&t, c, a, b) : NULL);
}

/* jnp.clip(x, lo, hi) (lax_numpy.py): maximum(lo, x) then minimum(hi, x), so NaN in x
 * or a bound propagates and lo > hi gives hi. */
jx_array *jx_clip(jx_array *x, jx_array *lo, jx_array *hi) {
  const char *fn = "jx_clip";
  if (!check_args(fn, 1, &x)) return NULL;
  jx_array *ops[3] = {x, lo, hi};
  for (int i = 0; i < 3; i++)
    if (ops[i] && dtype_is_complex(ops[i]->dtype)) { /* JAX raises ValueError too */
      error_set(JX_ERR_DTYPE, "%s: complex values have no ordering and cannot be clipped (got %s); clip the real "
                "part or the absolute value", fn, jx_dtype_name(ops[i]->dtype));
      return NULL;
    }
  Tmp t = {0};
  jx_array *r = x;
  if (lo) r = tmp(&t, maximum_(fn, lo, r));
  if (hi && r) r = tmp(&t, minimum_(fn, hi, r));
  return done(&t, r);
}

/* jnp.astype / lax.convert_element_type: strong result of the canonical dtype. */
jx_array *jx_astype(jx_array *x, jx_dtype dtype) {
  if (!check_args("jx_astype", 1, &x)) return NULL;
  if (!dtype_is_valid(dtype)) {
    char b[DTYPE_INVALID_BUF];
    error_set(JX_ERR_DTYPE, "jx_astype: invalid dtype %s", dtype_invalid_str(dtype, b));
    return NULL;
  }
  return np_convert(x, dtype_canonicalize(dtype), false);
}

/* lax.bitcast_convert_type between equal itemsizes; bool only to bool (JAX rejects
 * bool otherwise). The result is strong. */
jx_array *jx_bitcast(jx_array *x, jx_dtype dtype) {
  if (!check_args("jx_bitcast", 1, &x)) return NULL;
  if (!dtype_is_valid(dtype)) {
    char b[DTYPE_INVALID_BUF];
    error_set(JX_ERR_DTYPE, "jx_bitcast: invalid dtype %s", dtype_invalid_str(dtype, b));
    return NULL;
  }
  jx_dtype d = dtype_canonicalize(dtype);
  if ((x->dtype == JX_BOOL) != (d == JX_BOOL) ||
      jx_dtype_itemsize(x->dtype) != jx_dtype_itemsize(d)) {
    error_set(JX_ERR_DTYPE, "jx_bitcast: cannot bitcast %s to %s (itemsizes must match; "
              "bool only to bool)", jx_dtype_name(x->dtype), jx_dtype_name(d));
    return NULL;
  }
  Tmp t = {0};
  return done(&t, cvt(&t, tmp(&t, prim_bitcast(x, d)), d, false));
}
