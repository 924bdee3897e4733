/* random_gamma.c -- jax.random's gamma family: gamma and loggamma (Marsaglia and Tsang's
 * rejection method, one while loop per element as JAX's _gamma_one, mapped with vmap
 * over the per-element keys), and what JAX builds on them: beta, dirichlet, t and
 * chisquare; plus rademacher. Each follows jax/_src/random/core.py (_gamma_one,
 * _gamma_impl, _beta, _dirichlet, _t, _chisquare, _rademacher) key split for key split
 * and operation for operation, with XLA's CPU arithmetic where jaxc has it (random.c:
 * fused multiply-adds, float32 log). Reference: G. Marsaglia and W. W. Tsang, "A simple
 * method for generating gamma variables", ACM TOMS 26(3), 2000. */
#include "lib/random.h"
#include "lib/special.h"

#include <string.h>

/* ------------------------------------------------------------- helpers */

/* Key i of jax.random.split(key, n) for a key (2,): hash(key, (0, i)). */
static void split_n(jx_array *key, int n, jx_array **out) {
  jx_array *ks = jx_random_split(key, n);
  for (int i = 0; i < n; i++) {
    int64_t start[2] = {i, 0}, stop[2] = {i + 1, 2}, step[2] = {1, 1}, two = 2;
    jx_array *row = ks ? prim_slice(ks, start, stop, step) : NULL;
    out[i] = row ? prim_reshape(row, 1, &two) : NULL;
  }
}

/* lax.sub(one, lax.mul(a, b)) etc. in the sampler's dtype. */
static jx_array *mul(jx_array *a, jx_array *b) { return op2(PRIM_mul, a, b); }
static jx_array *add(jx_array *a, jx_array *b) { return op2(PRIM_add, a, b); }
static jx_array *sub(jx_array *a, jx_array *b) { return op2(PRIM_sub, a, b); }
/* lax.le / lax.ge: false with NaN (so a NaN parameter ends the loops). */
static jx_array *le(jx_array *a, jx_array *b) {
  return op2(PRIM_or, op2(PRIM_lt, a, b), op2(PRIM_eq, a, b));
}
static jx_array *ge(jx_array *a, jx_array *b) { return le(b, a); }

/* The result shape of a sampler with parameter arrays ps: `shape` when ndim >= 0 (it
 * must be the broadcast of itself with every parameter's shape, JAX's _check_shape),
 * else the broadcast of the parameters' shapes (shape=None). */
bool random_result_shape(const char *fn, int ndim, const int64_t *shape, int np,
                         jx_array *const *ps, int *nout, int64_t *out) {
  for (int i = 0; i < np; i++)
    if (!ps[i]) {
      error_set(JX_ERR_VALUE, "%s: parameter %d is NULL", fn, i);
      return false;
    }
  if (ndim < 0) return np_broadcast_shapes(fn, np, ps, nout, out);
  if (!random_check_shape(fn, ndim, &shape)) return false;
  for (int i = 0; i < np; i++) {
    bool ok = ps[i]->ndim <= ndim;
    for (int d = 0; ok && d < ps[i]->ndim; d++) {
      int64_t p = ps[i]->shape[ps[i]->ndim - 1 - d];
      ok = p == 1 || p == shape[ndim - 1 - d];
    }
    if (!ok) {
      char b1[ERROR_SHAPE_BUF], b2[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_SHAPE,
                "%s: shape %s must be the broadcast of itself with the parameters' shapes, "
                "got a parameter %s",
                fn, error_shape_str(b1, ndim, shape), array_describe(b2, ps[i]));
      return false;
    }
  }
  *nout = ndim;
  if (ndim) memcpy(out, shape, (size_t)ndim * sizeof(int64_t));
  return true;
}

/* A parameter converted to dtype (lax.convert_element_type) and broadcast to shape. */
static jx_array *param(jx_array *p, jx_dtype dtype, int ndim, const int64_t *shape) {
  jx_array *c = prim_convert(p, dtype, false);
  return c ? bcast(c, ndim, shape) : NULL;
}

/* ------------------------------------------------------------ _gamma_one */

/* What the loop bodies close over: d = alpha - 1/3 and c = 1/(3 sqrt(d)). */
typedef struct GammaCtx {
  jx_array *d, *c;
  jx_dtype dtype;
} GammaCtx;

/* v = 1 + x * c, contracted into one fused multiply-add on float32 as XLA does. */
static jx_array *one_plus(jx_array *x, jx_array *c) {
  if (x && x->dtype == JX_FLOAT32) return random_fma32(x, c, cst(x, 1.0));
  return add(cst(x, 1.0), mul(x, c));
}

/* Inner loop: while v <= 0: key, subkey = split(key); x = normal(subkey); v = 1 + x c. */
static jx_status inner_cond(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = le(in[2], cst(in[2], 0.0));
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status inner_body(void *ctx, jx_array *const *in, jx_array **out) {
  const GammaCtx *g = ctx;
  jx_array *sub_key;
  random_split2(in[0], &out[0], &sub_key);
  out[1] = random_normal(sub_key, 0, NULL, g->dtype);
  out[2] = one_plus(out[1], g->c);
  return out[0] && out[1] && out[2] ? JX_OK : jx_last_status();
}

/* Outer loop while the squeeze test and the log test both hold (the initial carry
 * (key, 0, 1, 2) passes them): U >= 1 - 0.0331 X^2 and
 * log U >= X / 2 + d (1 - V + log V). */
static jx_status outer_cond(void *ctx, jx_array *const *in, jx_array **out) {
  const GammaCtx *g = ctx;
  jx_array *X = in[1], *V = in[2], *U = in[3];
  jx_array *one = cst(X, 1.0);
  jx_array *c1 = ge(U, sub(one, mul(cst(X, 0.0331), mul(X, X))));
  jx_array *rhs = add(mul(X, cst(X, 0.5)), mul(g->d, add(sub(one, V), random_log(V))));
  out[0] = op2(PRIM_and, c1, ge(random_log(U), rhs));
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status outer_body(void *ctx, jx_array *const *in, jx_array **out) {
  const GammaCtx *g = ctx;
  jx_array *k[3];
  split_n(in[0], 3, k);
  jx_array *zero = cst(in[1], 0.0);
  jx_array *init[3] = {k[1], zero, cst(zero, -1.0)}, *res[3] = {NULL, NULL, NULL};
  jx_fn *cf = jx_fn_new("gamma_inner_cond", 3, 1, inner_cond, NULL);
  jx_fn *bf = jx_fn_new("gamma_inner_body", 3, 3, inner_body, (void *)g);
  jx_status s = cf && bf && k[1] ? jx_lax_while_loop(cf, bf, 3, init, res) : jx_last_status();
  jx_fn_free(cf);
  jx_fn_free(bf);
  if (s != JX_OK) return s;
  out[0] = k[0];
  out[1] = mul(res[1], res[1]);
  out[2] = mul(mul(res[2], res[2]), res[2]);
  out[3] = random_uniform(k[2], 0, NULL, g->dtype, 0.0, 1.0, true);
  return out[0] && out[1] && out[2] && out[3] ? JX_OK : jx_last_status();
}

/* 1 / (3 sqrt(d)). XLA rewrites the division as (1/3) * rsqrt(d) and on x86 computes a
 * float32 rsqrt from the rsqrtss estimate and one Newton step, whose last bit depends on
 * the CPU's estimate table; here rsqrt is rounded from float64, so c (and the sample)
 * can differ from JAX's by an ulp or two for some alphas (documented in random.h). */
static jx_array *gamma_c(jx_array *d) {
  jx_array *third = cst(d, 1.0 / 3.0);
  if (!d || d->dtype == JX_FLOAT64) return mul(third, prim_unary(PRIM_rsqrt, d));
  jx_array *r = prim_unary(PRIM_rsqrt, prim_convert(d, JX_FLOAT64, false));
  return mul(third, r ? prim_convert(r, d->dtype, false) : NULL);
}

/* _gamma_one(key, alpha, log_space): in = key (2,), alpha (); out = one sample. */
static jx_status gamma_one(void *ctx, jx_array *const *in, jx_array **out) {
  bool log_space = ctx != NULL;
  jx_array *key = in[0], *alpha = in[1];
  jx_array *one = cst(alpha, 1.0), *zero = cst(alpha, 0.0);
  /* alpha < 1 is boosted to alpha + 1: Gamma(alpha) = Gamma(alpha + 1) U^(1/alpha). */
  jx_array *boost_mask = ge(alpha, one);
  jx_array *a = sel(boost_mask, alpha, add(alpha, one));
  GammaCtx g = {sub(a, cst(alpha, 1.0 / 3.0)), NULL, alpha->dtype};
  g.c = gamma_c(g.d);
  jx_array *k, *subkey;
  random_split2(key, &k, &subkey);
  jx_array *init[4] = {k, zero, one, cst(alpha, 2.0)}, *res[4] = {NULL, NULL, NULL, NULL};
  jx_fn *cf = jx_fn_new("gamma_cond", 4, 1, outer_cond, &g);
  jx_fn *bf = jx_fn_new("gamma_body", 4, 4, outer_body, &g);
  jx_status s =
      cf && bf && g.c && k ? jx_lax_while_loop(cf, bf, 4, init, res) : jx_last_status();
  jx_fn_free(cf);
  jx_fn_free(bf);
  if (s != JX_OK) return s;
  jx_array *V = res[2], *inv_alpha = op2(PRIM_div, one, alpha);
  if (log_space) {
    /* log Gamma(alpha + 1) + log(U) / alpha, log U = -exponential (= log1p(-u)) */
    jx_array *ls = prim_unary(PRIM_neg, random_exponential(subkey, 0, NULL, alpha->dtype));
    jx_array *no_boost = op2(PRIM_or, boost_mask, op2(PRIM_eq, ls, zero));
    jx_array *log_boost = sel(no_boost, zero, mul(ls, inv_alpha));
    out[0] = add(add(random_log(g.d), random_log(V)), log_boost);
  } else {
    jx_array *u = random_uniform(subkey, 0, NULL, alpha->dtype, 0.0, 1.0, true);
    jx_array *boost = sel(boost_mask, one, op2(PRIM_pow, sub(one, u), inv_alpha));
    out[0] = mul(mul(g.d, V), boost);
  }
  return out[0] ? JX_OK : jx_last_status();
}

/* _gamma_impl: one key per element (split(key, size)), _gamma_one mapped over keys and
 * alphas with vmap (a batched while loop: every lane runs until all are accepted, each
 * keeping its own accepted value), reshaped to a's shape. in = key, a (dtype, final
 * shape, size > 0); param: log_space. */
static bool impl_gamma(jx_array *const *in, jx_array **out, int log_space) {
  jx_array *key = in[0], *a = in[1];
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  jx_array *keys = jx_random_split(key, n);
  jx_array *alphas = prim_reshape(a, 1, &n);
  jx_fn *f = jx_fn_new(log_space ? "loggamma_one" : "gamma_one", 2, 1, gamma_one,
                       log_space ? (void *)1 : NULL);
  jx_fn *vf = f ? jx_vmap(f, (int[]){0, 0}, (int[]){0}) : NULL;
  jx_array *r = NULL;
  if (vf && keys && alphas && jx_call(vf, (jx_array *[]){keys, alphas}, &r) != JX_OK) r = NULL;
  jx_fn_free(vf);
  jx_fn_free(f);
  out[0] = r ? prim_reshape(r, a->ndim, a->shape) : NULL;
  jx_free(r);
  return out[0] != NULL;
}

/* random_gamma_p's JVP (core.py): tangent * _gamma_grad(sample, a), the implicit
 * reparameterization derivative d sample / d a = -(dP(a, x)/da) / p(a, x) at x = sample
 * (lax.random_gamma_grad). In log space d log(x) = dx / x, with x = exp(sample) and a 0
 * from underflow replaced by the dtype's tiny as JAX does. */
static jx_status jvp_gamma_common(jx_array *const *x, jx_array *const *t, jx_array *const *y,
                                  jx_array **ty, bool log_space) {
  ty[0] = NULL;
  if (!t[1]) return JX_OK;
  jx_array *a = x[1], *s = y[0], *g;
  if (log_space) {
    jx_array *e = prim_unary(PRIM_exp, s);
    e = sel(op2(PRIM_eq, e, cst(e, 0.0)), cst(e, random_tiny(a->dtype)), e);
    g = op2(PRIM_div, special_random_gamma_grad(a, e), e);
  } else {
    g = special_random_gamma_grad(a, s);
  }
  ty[0] = mul(t[1], g);
  return ty[0] ? JX_OK : jx_last_status();
}
static jx_status jvp_gamma(int nin, jx_array *const *x, jx_array *const *t, int nout,
                           jx_array *const *y, jx_array **ty) {
  return jvp_gamma_common(x, t, y, ty, false);
}
static jx_status jvp_loggamma(int nin, jx_array *const *x, jx_array *const *t, int nout,
                              jx_array *const *y, jx_array **ty) {
  return jvp_gamma_common(x, t, y, ty, true);
}
static const SpecialRule GAMMA_RULE = {"random_gamma", jvp_gamma};
static const SpecialRule LOGGAMMA_RULE = {"random_loggamma", jvp_loggamma};

/* random_gamma_p: the sampler as one special_call equation differentiated by JAX's rule
 * (not through the rejection loop). a: dtype, final shape. */
static jx_array *gamma_impl(jx_array *key, jx_array *a, bool log_space) {
  if (!key || !a) return NULL;
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  if (n == 0) return np_full(0.0, a->dtype, a->ndim, a->shape);
  jx_array *out = NULL;
  if (special_custom_call(log_space ? &LOGGAMMA_RULE : &GAMMA_RULE, 2, (jx_array *[]){key, a}, 1,
                          &out, impl_gamma, log_space) != JX_OK)
    return NULL;
  return out;
}

/* ---------------------------------------------------------- public entry */

typedef enum Family { F_GAMMA, F_LOGGAMMA, F_BETA, F_DIRICHLET, F_T, F_CHISQUARE } Family;

/* A call's static arguments: the jitted sampler's context, compared by family_eq in
 * random_cache.c's key. */
typedef struct FamilyCall {
  Family f;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  jx_dtype dtype;
} FamilyCall;

static bool family_eq(const void *pa, const void *pb) {
  const FamilyCall *a = pa, *b = pb;
  return a->f == b->f && a->ndim == b->ndim && a->dtype == b->dtype &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

static jx_array *softmax_last(jx_array *x) {
  return x ? jx_nn_softmax(x, 1, (int[]){-1}, NULL) : NULL;
}

/* The samplers' bodies, on parameters already converted and broadcast (in[1], in[2]). */
static jx_status family_impl(void *ctx, jx_array *const *in, jx_array **out) {
  const FamilyCall *c = ctx;
  jx_array *key = in[0], *p = in[1];
  switch (c->f) {
  case F_GAMMA: out[0] = gamma_impl(key, p, false); break;
  case F_LOGGAMMA: out[0] = gamma_impl(key, p, true); break;
  case F_DIRICHLET: out[0] = softmax_last(gamma_impl(key, p, true)); break;
  case F_BETA: { /* gamma_a / (gamma_a + gamma_b) from log-space samples */
    jx_array *ka, *kb;
    random_split2(key, &ka, &kb);
    jx_array *la = gamma_impl(ka, p, true), *lb = gamma_impl(kb, in[2], true);
    jx_array *m = op2(PRIM_max, la, lb);
    jx_array *ga = prim_unary(PRIM_exp, sub(la, m)), *gb = prim_unary(PRIM_exp, sub(lb, m));
    out[0] = op2(PRIM_div, ga, add(ga, gb));
    break;
  }
  case F_T: { /* n * sqrt((df / 2) / gamma(df / 2)) */
    jx_array *kn, *kg;
    random_split2(key, &kn, &kg);
    jx_array *n = random_normal(kn, c->ndim, c->shape, c->dtype);
    jx_array *half = op2(PRIM_div, p, cst(p, 2.0));
    jx_array *g = gamma_impl(kg, half, false);
    out[0] = mul(n, prim_unary(PRIM_sqrt, op2(PRIM_div, half, g)));
    break;
  }
  case F_CHISQUARE: { /* 2 exp(loggamma(df / 2)) */
    jx_array *half = op2(PRIM_div, p, cst(p, 2.0));
    out[0] = mul(prim_unary(PRIM_exp, gamma_impl(key, half, true)), cst(p, 2.0));
    break;
  }
  }
  return out[0] ? JX_OK : jx_last_status();
}

/* Checks, converts and broadcasts the parameters, then runs the sampler under jit (as
 * JAX does: its samplers are jitted), kept across calls by random_cached_call, so the
 * loop bodies compile once. */
static jx_array *family_entry(const char *fn, Family f, jx_array *key, int np, jx_array *const *ps,
                              int ndim, const int64_t *shape, jx_dtype dtype) {
  if (!random_check_key(fn, key, false) || !random_check_float(fn, &dtype)) return NULL;
  for (int i = 0; i < np; i++)
    if (np_null_arg(fn, ps[i], "a parameter")) return NULL;
  int nd;
  int64_t s[JX_MAX_NDIM];
  if (f == F_DIRICHLET) {
    /* alpha (..., k); shape is the batch shape, the result shape + (k,) */
    char b[ARRAY_DESCRIBE_BUF];
    if (ps[0]->ndim < 1) {
      error_set(JX_ERR_SHAPE, "%s: alpha must have at least one axis, got %s", fn,
                array_describe(b, ps[0]));
      return NULL;
    }
    jx_scope_begin();
    /* a stand-in of shape alpha.shape[:-1] (zeros: alpha may have no elements, k = 0) */
    jx_array *batch = prim_broadcast_in_dim(np_constant(0, JX_FLOAT32), ps[0]->ndim - 1, ps[0]->shape, NULL);
    bool ok = batch && random_result_shape(fn, ndim, shape, 1, &batch, &nd, s);
    jx_scope_end(0, NULL);
    if (!ok) return NULL;
    if (nd + 1 > JX_MAX_NDIM) {
      error_set(JX_ERR_SHAPE, "%s: result rank exceeds %d", fn, JX_MAX_NDIM);
      return NULL;
    }
    s[nd++] = ps[0]->shape[ps[0]->ndim - 1];
  } else if (!random_result_shape(fn, ndim, shape, np, ps, &nd, s)) {
    return NULL;
  }
  jx_scope_begin();
  jx_array *in[3] = {key, NULL, NULL};
  for (int i = 0; i < np; i++) in[1 + i] = param(ps[i], dtype, nd, s);
  FamilyCall call = {.f = f, .ndim = nd, .dtype = dtype};
  memcpy(call.shape, s, (size_t)nd * sizeof(int64_t));
  int64_t size = 1;
  for (int d = 0; d < nd; d++) size *= s[d];
  return scope_return(random_cached_call(fn, family_impl, family_eq, &call, sizeof call, 1 + np, in, size));
}

jx_array *jx_random_gamma(jx_array *key, jx_array *a, int ndim, const int64_t *shape,
                          jx_dtype dtype) {
  return family_entry("jx_random_gamma", F_GAMMA, key, 1, &a, ndim, shape, dtype);
}
jx_array *jx_random_loggamma(jx_array *key, jx_array *a, int ndim, const int64_t *shape,
                             jx_dtype dtype) {
  return family_entry("jx_random_loggamma", F_LOGGAMMA, key, 1, &a, ndim, shape, dtype);
}
jx_array *jx_random_beta(jx_array *key, jx_array *a, jx_array *b, int ndim, const int64_t *shape,
                         jx_dtype dtype) {
  return family_entry("jx_random_beta", F_BETA, key, 2, (jx_array *[]){a, b}, ndim, shape, dtype);
}
jx_array *jx_random_dirichlet(jx_array *key, jx_array *alpha, int ndim, const int64_t *shape,
                              jx_dtype dtype) {
  return family_entry("jx_random_dirichlet", F_DIRICHLET, key, 1, &alpha, ndim, shape, dtype);
}
jx_array *jx_random_t(jx_array *key, jx_array *df, int ndim, const int64_t *shape, jx_dtype dtype) {
  return family_entry("jx_random_t", F_T, key, 1, &df, ndim, shape, dtype);
}
jx_array *jx_random_chisquare(jx_array *key, jx_array *df, int ndim, const int64_t *shape,
                              jx_dtype dtype) {
  return family_entry("jx_random_chisquare", F_CHISQUARE, key, 1, &df, ndim, shape, dtype);
}

jx_array *jx_random_rademacher(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  /* core._rademacher: (2 * bernoulli(key, 0.5, shape).astype(dtype) - 1).astype(dtype) */
  const char *fn = "jx_random_rademacher";
  if (!random_check_key(fn, key, false) || !random_check_shape(fn, ndim, &shape)) return NULL;
  if (!dtype_is_valid(dtype) || dtype == JX_BOOL) {
    error_set(JX_ERR_DTYPE, "%s: dtype must be a numeric dtype, got %s", fn,
              dtype_is_valid(dtype) ? jx_dtype_name(dtype) : "an invalid dtype");
    return NULL;
  }
  dtype = dtype_canonicalize(dtype);
  jx_scope_begin();
  jx_array *b = jx_random_bernoulli(key, 0.5, ndim, shape);
  jx_array *x = b ? prim_convert(b, dtype, false) : NULL;
  return scope_return(x ? opc(PRIM_sub, opc(PRIM_mul, x, 2.0), 1.0) : NULL);
}
