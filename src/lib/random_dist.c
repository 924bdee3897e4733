/* random_dist.c -- jax.random's distributions built on the basic samplers: weibull_min,
 * rayleigh, maxwell, pareto, wald, geometric, generalized_normal and ball. Each follows
 * jax/_src/random/core.py (JAX 0.10.2: _weibull_min, _rayleigh, _maxwell, _pareto,
 * _wald, _geometric, _generalized_normal, _ball) key split for key split and operation
 * for operation, run under jit through random_cache.c as JAX's jitted samplers are. */
#include "lib/random.h"

#include <math.h>
#include <string.h>

typedef enum Dist { D_WEIBULL, D_RAYLEIGH, D_MAXWELL, D_PARETO, D_WALD, D_GEOMETRIC, D_GENNORM, D_BALL } Dist;

/* A call's static arguments (random_cache.c's key, compared by dist_eq). shape: the
 * sample shape (weibull_min: the uniform's, before broadcasting with the parameters;
 * ball: the batch shape). */
typedef struct DistCall {
  Dist d;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  jx_dtype dtype;  /* the result's */
  jx_dtype fdtype; /* the float dtype computed in (geometric: p's) */
  double p;        /* generalized_normal's and ball's p */
  int64_t dim;     /* ball's d */
} DistCall;

static bool dist_eq(const void *pa, const void *pb) {
  const DistCall *a = pa, *b = pb;
  return a->d == b->d && a->ndim == b->ndim && a->dtype == b->dtype && a->fdtype == b->fdtype &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0 &&
         memcmp(&a->p, &b->p, sizeof a->p) == 0 && a->dim == b->dim;
}

static jx_array *mul(jx_array *a, jx_array *b) { return op2(PRIM_mul, a, b); }
static jx_array *add(jx_array *a, jx_array *b) { return op2(PRIM_add, a, b); }
static jx_array *dvd(jx_array *a, jx_array *b) { return op2(PRIM_div, a, b); }
static jx_array *neg(jx_array *a) { return a ? prim_unary(PRIM_neg, a) : NULL; }
/* a * b + c with one rounding where XLA's CPU backend contracts it (float32, float64:
 * LLVM fuses an fmul of one use into the fadd/fsub that consumes it), else unfused. */
static jx_array *fma_x(jx_array *a, jx_array *b, jx_array *c) {
  if (a && (a->dtype == JX_FLOAT32 || a->dtype == JX_FLOAT64)) return random_fma32(a, b, c);
  return add(mul(a, b), c);
}
static jx_array *sum_last(jx_array *x) { return x ? jx_sum(x, 1, (int[]){-1}, false) : NULL; }

/* core._generalized_normal: k0, k1 = split(key); rademacher(k1) * gamma(k0, 1/p) ** (1/p),
 * p a weak float of dtype (a traced argument of JAX's jitted function, so 1/p is
 * rounded to dtype). */
static jx_array *gennorm(jx_array *key, double p, int ndim, const int64_t *shape, jx_dtype dtype) {
  jx_array *k0, *k1;
  random_split2(key, &k0, &k1);
  jx_array *inv = dvd(np_constant(1.0, dtype), np_constant(p, dtype));
  jx_array *g = jx_random_gamma(k0, inv, ndim, shape, dtype);
  jx_array *r = jx_random_rademacher(k1, ndim, shape, dtype);
  return mul(r, op2(PRIM_pow, g, inv));
}

static jx_status dist_impl(void *ctx, jx_array *const *in, jx_array **out) {
  const DistCall *c = ctx;
  jx_array *key = in[0];
  jx_dtype dt = c->fdtype;
  switch (c->d) {
  case D_WEIBULL: { /* power(-log1p(-u), 1/concentration) * scale; in: scale, concentration */
    jx_array *u = random_uniform(key, c->ndim, c->shape, dt, 0.0, 1.0, true);
    jx_array *x = neg(random_log1p(neg(u)));
    jx_array *inv = dvd(cst(in[2], 1.0), in[2]);
    if (x && in[1]) x = bcast(x, in[1]->ndim, in[1]->shape);
    out[0] = mul(op2(PRIM_pow, x, inv), in[1]);
    break;
  }
  case D_RAYLEIGH: { /* scale * sqrt(log(u) * -2) */
    jx_array *u = random_uniform(key, c->ndim, c->shape, dt, 0.0, 1.0, true);
    out[0] = mul(in[1], prim_unary(PRIM_sqrt, mul(random_log(u), cst(u, -2.0))));
    break;
  }
  case D_MAXWELL: { /* jnp.linalg.norm(normal(shape + (3,)), axis=-1) */
    int64_t s[JX_MAX_NDIM];
    if (c->ndim) memcpy(s, c->shape, (size_t)c->ndim * sizeof(int64_t));
    s[c->ndim] = 3;
    jx_array *n = random_normal(key, c->ndim + 1, s, dt);
    /* XLA's reduce, unrolled: acc = x0^2 + x1^2, then acc + x2^2, each add contracted
     * with the product that is its first operand (LLVM's DAG combiner):
     * fma(x2, x2, fma(x0, x0, x1 x1)) -- all of 400 samples of 40 keys as JAX's */
    jx_array *v[3];
    for (int i = 0; i < 3; i++) {
      int64_t st[JX_MAX_NDIM + 1] = {0}, sp[JX_MAX_NDIM + 1], one[JX_MAX_NDIM + 1];
      for (int d = 0; d <= c->ndim; d++) sp[d] = s[d], one[d] = 1;
      st[c->ndim] = i, sp[c->ndim] = i + 1;
      jx_array *sl = n ? prim_slice(n, st, sp, one) : NULL;
      v[i] = sl ? prim_reshape(sl, c->ndim, c->shape) : NULL;
    }
    jx_array *ss = fma_x(v[2], v[2], fma_x(v[0], v[0], mul(v[1], v[1])));
    out[0] = ss ? prim_unary(PRIM_sqrt, ss) : NULL;
    break;
  }
  case D_PARETO: { /* exp(exponential(key) / b) */
    jx_array *e = random_exponential(key, c->ndim, c->shape, dt);
    jx_array *q = dvd(e, in[1]);
    out[0] = random_exp(q);
    break;
  }
  case D_WALD: { /* Michael, Schucany and Haas (1976), as core._wald */
    jx_array *k1, *k2;
    random_split2(key, &k1, &k2);
    jx_array *mean = in[1];
    jx_array *v = random_normal(k1, c->ndim, c->shape, dt);
    jx_array *z = random_uniform(k2, c->ndim, c->shape, dt, 0.0, 1.0, true);
    jx_array *y = mul(v, v), *y_sq = mul(y, y), *mean_sq = mul(mean, mean);
    /* the contractions of jaxlib 0.10's LLVM IR for _wald (XLA_FLAGS=--xla_dump_to):
     * 4 mean y + mean^2 y^2 -> fma(4 mean, y, mean^2 y^2); a - mean/2 sqrt_term ->
     * fma(-(mean/2), sqrt_term, a) (x cancels: this one matters); mean + mean^2 y / 2
     * is mean + (mean^2 y) * 0.5, exact either way */
    jx_array *sqrt_term = prim_unary(PRIM_sqrt, fma_x(mul(cst(mean, 4.0), mean), y, mul(mean_sq, y_sq)));
    jx_array *a = add(mean, mul(mul(mean_sq, y), cst(mean, 0.5)));
    jx_array *x = fma_x(neg(mul(mean, cst(mean, 0.5))), sqrt_term, a);
    jx_array *bound = dvd(mean, add(mean, x)); /* lax.le: false with NaN */
    jx_array *le = op2(PRIM_or, op2(PRIM_lt, z, bound), op2(PRIM_eq, z, bound));
    out[0] = sel(le, x, dvd(mean_sq, x));
    break;
  }
  case D_GEOMETRIC: { /* floor(log(u') / log1p(-p)) + 1, u' = u with 0 -> 1 */
    jx_array *u = random_uniform(key, c->ndim, c->shape, dt, 0.0, 1.0, true);
    u = sel(op2(PRIM_eq, u, cst(u, 0.0)), cst(u, 1.0), u);
    jx_array *g = dvd(random_log(u), random_log1p(neg(in[1])));
    g = g ? add(prim_unary(PRIM_floor, g), cst(g, 1.0)) : NULL;
    out[0] = g ? prim_convert(g, c->dtype, false) : NULL;
    break;
  }
  case D_GENNORM: out[0] = gennorm(key, c->p, c->ndim, c->shape, dt); break;
  case D_BALL: { /* g / (sum(|g| ** p, -1) + e) ** (1/p), g generalized normal (..., d) */
    jx_array *k1, *k2;
    random_split2(key, &k1, &k2);
    int64_t s[JX_MAX_NDIM];
    if (c->ndim) memcpy(s, c->shape, (size_t)c->ndim * sizeof(int64_t));
    s[c->ndim] = c->dim;
    jx_array *g = gennorm(k1, c->p, c->ndim + 1, s, dt);
    jx_array *e = random_exponential(k2, c->ndim, c->shape, dt);
    jx_array *pc = np_constant(c->p, dt);
    jx_array *a = g ? op2(PRIM_pow, prim_unary(PRIM_abs, g), pc) : NULL;
    jx_array *r = op2(PRIM_pow, add(sum_last(a), e), dvd(np_constant(1.0, dt), pc));
    out[0] = r ? jx_divide(g, jx_expand_dims(r, -1)) : NULL;
    break;
  }
  }
  return out[0] ? JX_OK : jx_last_status();
}

/* Checks the key, dtype (float unless `integer`) and parameters, converts the
 * parameters to the computing dtype broadcast to the result shape, and runs the
 * sampler under jit. ndim < 0 (shape=None) only where allow_none. */
static jx_array *dist_entry(const char *fn, DistCall *call, jx_array *key, int np, jx_array *const *ps,
                            int ndim, const int64_t *shape, jx_dtype dtype, bool allow_none) {
  if (!random_check_key(fn, key, false)) return NULL;
  if (call->d == D_GEOMETRIC) {
    if (!dtype_is_valid(dtype) || !dtype_is_integer(dtype)) {
      error_set(JX_ERR_DTYPE, "%s: dtype must be an integer dtype, got %s", fn,
                dtype_is_valid(dtype) ? jx_dtype_name(dtype) : "an invalid dtype");
      return NULL;
    }
    dtype = dtype_canonicalize(dtype);
  } else if (!random_check_float(fn, &dtype)) {
    return NULL;
  }
  for (int i = 0; i < np; i++)
    if (np_null_arg(fn, ps[i], "a parameter")) return NULL;
  if (ndim < 0 && !allow_none) {
    error_set(JX_ERR_SHAPE, "%s: shape must be given (ndim >= 0), got ndim %d", fn, ndim);
    return NULL;
  }
  int nd = 0;
  int64_t s[JX_MAX_NDIM];
  if (call->d == D_WEIBULL) { /* the uniform has `shape`; the parameters broadcast with it */
    if (!random_check_shape(fn, ndim, &shape)) return NULL;
    jx_scope_begin();
    jx_array *stand = prim_broadcast_in_dim(np_constant(0, JX_FLOAT32), ndim, shape, NULL);
    bool ok = stand && np_broadcast_shapes(fn, 3, (jx_array *[]){stand, ps[0], ps[1]}, &nd, s);
    jx_scope_end(0, NULL);
    if (!ok) return NULL;
  } else if (!random_result_shape(fn, ndim, shape, np, ps, &nd, s)) {
    return NULL;
  }
  if ((call->d == D_MAXWELL || call->d == D_BALL) && nd + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: result rank exceeds %d", fn, JX_MAX_NDIM);
    return NULL;
  }
  call->dtype = dtype;
  if (call->d == D_GEOMETRIC) { /* promote_dtypes_inexact(p) */
    jx_dtype pd = jx_dtype_of(ps[0]);
    call->fdtype = dtype_is_floating(pd) ? pd : dtype_canonicalize(JX_FLOAT64);
  } else {
    call->fdtype = dtype;
  }
  if (call->d == D_WEIBULL) {
    call->ndim = ndim;
    if (ndim) memcpy(call->shape, shape, (size_t)ndim * sizeof(int64_t));
  } else {
    call->ndim = nd;
    if (nd) memcpy(call->shape, s, (size_t)nd * sizeof(int64_t));
  }
  jx_scope_begin();
  jx_array *in[3] = {key, NULL, NULL};
  for (int i = 0; i < np; i++) {
    jx_array *cv = prim_convert(ps[i], call->fdtype, false);
    in[1 + i] = cv ? bcast(cv, nd, s) : NULL;
  }
  int64_t size = call->d == D_BALL ? (call->dim > 0 ? call->dim : 1) : 1;
  for (int d = 0; d < nd; d++) size *= s[d];
  return scope_return(random_cached_call(fn, dist_impl, dist_eq, call, sizeof *call, 1 + np, in, size));
}

jx_array *jx_random_weibull_min(jx_array *key, jx_array *scale, jx_array *concentration, int ndim,
                                const int64_t *shape, jx_dtype dtype) {
  DistCall call = {.d = D_WEIBULL};
  return dist_entry("jx_random_weibull_min", &call, key, 2, (jx_array *[]){scale, concentration}, ndim,
                    shape, dtype, false);
}
jx_array *jx_random_rayleigh(jx_array *key, jx_array *scale, int ndim, const int64_t *shape, jx_dtype dtype) {
  DistCall call = {.d = D_RAYLEIGH};
  return dist_entry("jx_random_rayleigh", &call, key, 1, &scale, ndim, shape, dtype, true);
}
jx_array *jx_random_maxwell(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  DistCall call = {.d = D_MAXWELL};
  return dist_entry("jx_random_maxwell", &call, key, 0, NULL, ndim, shape, dtype, false);
}
jx_array *jx_random_pareto(jx_array *key, jx_array *b, int ndim, const int64_t *shape, jx_dtype dtype) {
  DistCall call = {.d = D_PARETO};
  return dist_entry("jx_random_pareto", &call, key, 1, &b, ndim, shape, dtype, true);
}
jx_array *jx_random_wald(jx_array *key, jx_array *mean, int ndim, const int64_t *shape, jx_dtype dtype) {
  DistCall call = {.d = D_WALD};
  return dist_entry("jx_random_wald", &call, key, 1, &mean, ndim, shape, dtype, true);
}
jx_array *jx_random_geometric(jx_array *key, jx_array *p, int ndim, const int64_t *shape, jx_dtype dtype) {
  DistCall call = {.d = D_GEOMETRIC};
  return dist_entry("jx_random_geometric", &call, key, 1, &p, ndim, shape, dtype, true);
}
jx_array *jx_random_generalized_normal(jx_array *key, double p, int ndim, const int64_t *shape,
                                       jx_dtype dtype) {
  DistCall call = {.d = D_GENNORM, .p = p};
  return dist_entry("jx_random_generalized_normal", &call, key, 0, NULL, ndim, shape, dtype, false);
}
jx_array *jx_random_ball(jx_array *key, int64_t d, double p, int ndim, const int64_t *shape, jx_dtype dtype) {
  if (d < 0) {
    error_set(JX_ERR_SHAPE, "jx_random_ball: d must be >= 0, got %lld", (long long)d);
    return NULL;
  }
  DistCall call = {.d = D_BALL, .p = p, .dim = d};
  return dist_entry("jx_random_ball", &call, key, 0, NULL, ndim, shape, dtype, false);
}

/* core._orthogonal: z = normal(key, shape + (max(n, m), min(n, m))); q, r = qr(z);
 * q * sign(diag(r)) over the columns (Mezzadri 2007), transposed when n < m. Not cached:
 * the normal is (jx_random_normal), the QR is LAPACK's. */
jx_array *jx_random_orthogonal(jx_array *key, int64_t n, int ndim, const int64_t *shape, jx_dtype dtype,
                               int64_t m) {
  const char *fn = "jx_random_orthogonal";
  if (m < 0) m = n;
  if (!random_check_key(fn, key, false) || !random_check_float(fn, &dtype)) return NULL;
  if (ndim < 0) {
    error_set(JX_ERR_SHAPE, "%s: shape must be given (ndim >= 0), got ndim %d", fn, ndim);
    return NULL;
  }
  if (!random_check_shape(fn, ndim, &shape)) return NULL;
  if (n < 0 || ndim + 2 > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: n = %lld (>= 0) with %d batch dims (at most %d)", fn, (long long)n, ndim,
              JX_MAX_NDIM - 2);
    return NULL;
  }
  jx_scope_begin();
  int64_t s[JX_MAX_NDIM];
  if (ndim) memcpy(s, shape, (size_t)ndim * sizeof(int64_t));
  s[ndim] = n > m ? n : m, s[ndim + 1] = n < m ? n : m;
  jx_array *z = jx_random_normal(key, ndim + 2, s, dtype), *qr[2] = {NULL, NULL};
  if (!z || jx_linalg_qr(z, "reduced", qr) != JX_OK) return scope_return(NULL);
  jx_array *d = jx_diagonal(qr[1], 0, -2, -1);
  jx_array *x = d ? jx_multiply(qr[0], jx_expand_dims(jx_sign(d), -2)) : NULL;
  return scope_return(x && n < m ? jx_swapaxes(x, -1, -2) : x);
}
