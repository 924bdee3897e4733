/* random_discrete.c -- jax.random's counting samplers and categorical with a sample
 * shape: poisson (Knuth's multiplication method below lam = 10, Hormann's transformed
 * rejection above), binomial (inversion of geometric waiting times for n p <= 10, else
 * Kachitvichyanukul and Schmeiser's BTRS) and categorical(shape, replace). Each follows
 * jax/_src/random/core.py (_poisson_knuth, _poisson_rejection, _poisson,
 * _binomial_inversion, _btrs, _stirling_approx_tail, _binomial, _categorical): the same
 * whole-array while loops (every element advances until all are done), the same key
 * splits and arithmetic, with XLA's float32 log (random.c), lgamma (lgamma_xla32) and
 * contracted multiply-adds.
 * References: W. Hormann, "The transformed rejection method for generating Poisson
 * random variables", Insurance: Mathematics and Economics 12(1), 1993; V. Kachitvichyanukul
 * and B. Schmeiser / W. Hormann, "The generation of binomial random variates", J. Stat.
 * Comput. Simul. 46, 1993. */
#include "lib/random.h"
#include "lib/special.h"

#include <math.h>
#include <string.h>

static jx_array *add(jx_array *a, jx_array *b) { return op2(PRIM_add, a, b); }
static jx_array *sub(jx_array *a, jx_array *b) { return op2(PRIM_sub, a, b); }
static jx_array *mul(jx_array *a, jx_array *b) { return op2(PRIM_mul, a, b); }
static jx_array *dvd(jx_array *a, jx_array *b) { return op2(PRIM_div, a, b); }
static jx_array *le(jx_array *a, jx_array *b) {
  return op2(PRIM_or, op2(PRIM_lt, a, b), op2(PRIM_eq, a, b));
}
static jx_array *gt(jx_array *a, jx_array *b) { return op2(PRIM_lt, b, a); }
static jx_array *lnot(jx_array *a) { return a ? prim_unary(PRIM_not, a) : NULL; }
static jx_array *land(jx_array *a, jx_array *b) { return op2(PRIM_and, a, b); }
static jx_array *lor(jx_array *a, jx_array *b) { return op2(PRIM_or, a, b); }
static jx_array *any(jx_array *b) { return b ? jx_any(b, 0, NULL, false) : NULL; }
static jx_array *isnan_(jx_array *x) { return x ? prim_unary(PRIM_is_nan, x) : NULL; }

/* Keys i of split(key, 3) for a key (2,). */
static void split3(jx_array *key, jx_array **k) {
  jx_array *ks = jx_random_split(key, 3);
  for (int i = 0; i < 3; i++) {
    int64_t start[2] = {i, 0}, stop[2] = {i + 1, 2}, step[2] = {1, 1}, two = 2;
    jx_array *row = ks ? prim_slice(ks, start, stop, step) : NULL;
    k[i] = row ? prim_reshape(row, 1, &two) : NULL;
  }
}

/* Runs lax.while_loop(cond, body, carry) with callbacks closing over ctx. */
static bool loop(const char *name, jx_fn_impl cond, jx_fn_impl body, void *ctx, int n,
                 jx_array **carry, jx_array **out) {
  for (int i = 0; i < n; i++)
    if (!carry[i]) return false;
  jx_fn *cf = jx_fn_new(name, n, 1, cond, ctx), *bf = jx_fn_new(name, n, n, body, ctx);
  jx_status s = cf && bf ? jx_lax_while_loop(cf, bf, n, carry, out) : jx_last_status();
  jx_fn_free(cf);
  jx_fn_free(bf);
  return s == JX_OK;
}

/* What loop bodies close over; unused fields stay NULL. */
typedef struct Ctx {
  int ndim;
  const int64_t *shape;
  jx_array *lam, *log_lam, *a, *b, *inv_alpha, *v_r; /* poisson */
  jx_array *count, *prob, *l1mp, *c, *r, *alpha, *m; /* binomial (+ a, b, v_r) */
} Ctx;

static jx_status finish(int n, jx_array **out) {
  for (int i = 0; i < n; i++)
    if (!out[i]) return jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_INTERNAL;
  return JX_OK;
}

static jx_array *i_plus_1(jx_array *i) { return add(i, np_constant(1, i ? i->dtype : JX_INT32)); }

/* ------------------------------------------------------------- poisson */

/* Knuth: (i, k, rng, log_prod) while any(log_prod > -lam). */
static jx_status knuth_cond(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  out[0] = any(gt(in[3], prim_unary(PRIM_neg, c->lam)));
  return finish(1, out);
}

static jx_status knuth_body(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  jx_array *rng, *sub_key;
  random_split2(in[2], &rng, &sub_key);
  jx_array *k = in[1];
  out[0] = i_plus_1(in[0]);
  out[1] = sel(gt(in[3], prim_unary(PRIM_neg, c->lam)), add(k, np_constant(1, k->dtype)), k);
  out[2] = rng;
  jx_array *u = random_uniform(sub_key, c->ndim, c->shape, JX_FLOAT32, 0.0, 1.0, true);
  out[3] = add(in[3], random_log(u));
  return finish(4, out);
}

/* Transformed rejection: (i, k_out, accepted, key) while any(~accepted). */
static jx_status rej_cond(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = any(lnot(in[2]));
  return finish(1, out);
}

/* lgamma of float32 x >= 0.5 (no reflection: other x give garbage) as XLA computes it on
 * the CPU under jit (JAX's samplers are jitted): special_prims.c's impl_lgamma with XLA's
 * log1p (random_log1p_f32) and the multiply-add (...) log t + log sqrt(2 pi) contracted
 * (random_fma32). Measured: equal to jax.jit(lax.lgamma) on every integer 1..200,000 and
 * 6,000 floats around 1e5, where special_lgamma (libm's log1p, two roundings) differs on
 * a third of them -- enough to flip poisson's acceptance tests. */
static jx_array *lgamma_xla32(jx_array *x) {
  jx_array *z = opc(PRIM_add, x, -1.0);
  jx_array *sum = cst(x, special_lanczos_base);
  for (int i = 0; i < 8; i++) sum = add(sum, dvd(cst(x, special_lanczos[i]), opc(PRIM_add, z, i + 1)));
  double gh = special_lanczos_g + 0.5;
  jx_array *t = opc(PRIM_add, z, gh);
  jx_array *log_t = opc(PRIM_add, random_log1p_f32(opc(PRIM_mul, z, 1 / gh)), log(gh));
  jx_array *a = sub(opc(PRIM_add, z, 0.5), dvd(t, log_t));
  jx_array *log_y = random_fma32(a, log_t, cst(x, 0.91893853320467274178));
  return add(log_y, random_log(sum));
}

static jx_status rej_body(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  jx_array *k3[3];
  split3(in[3], k3);
  jx_array *lam = c->lam;
  jx_array *u = opc(PRIM_sub, random_uniform(k3[1], c->ndim, c->shape, lam->dtype, 0, 1, true), 0.5);
  jx_array *v = random_uniform(k3[2], c->ndim, c->shape, lam->dtype, 0, 1, true);
  jx_array *us = sub(cst(u, 0.5), u ? prim_unary(PRIM_abs, u) : NULL);
  jx_array *two_a = mul(cst(c->a, 2.0), c->a);
  jx_array *k = add(add(mul(add(dvd(two_a, us), c->b), u), lam), cst(lam, 0.43));
  k = k ? prim_unary(PRIM_floor, k) : NULL;
  jx_array *s = random_log(dvd(mul(v, c->inv_alpha), add(dvd(c->a, mul(us, us)), c->b)));
  /* -lam + k log lam contracted as XLA does (one rounding), minus XLA's lgamma(k + 1)
   * (k < 0 is rejected whatever t is) */
  jx_array *t = sub(random_fma32(k, c->log_lam, prim_unary(PRIM_neg, lam)), lgamma_xla32(opc(PRIM_add, k, 1.0)));
  jx_array *accept1 = land(le(cst(us, 0.07), us), le(v, c->v_r));
  jx_array *reject =
      lor(op2(PRIM_lt, k, cst(k, 0.0)), land(op2(PRIM_lt, us, cst(us, 0.013)), gt(v, us)));
  jx_array *accept = lor(accept1, land(lnot(reject), le(s, t)));
  out[0] = i_plus_1(in[0]);
  out[1] = sel(accept, k, in[1]);
  out[2] = lor(in[2], accept);
  out[3] = k3[0];
  return finish(4, out);
}

/* _poisson on lam (float32, the result shape); result of `dtype` (integer). */
static jx_array *poisson_impl(jx_array *key, jx_array *lam, jx_dtype dtype) {
  int nd = lam->ndim;
  const int64_t *sh = lam->shape;
  jx_array *use_knuth = lor(isnan_(lam), op2(PRIM_lt, lam, cst(lam, 10.0)));
  jx_array *lam_k = sel(use_knuth, lam, cst(lam, 0.0));
  jx_array *lam_r = sel(use_knuth, cst(lam, 1e5), lam);
  jx_array *zero_i = np_constant(0, JX_INT32);
  /* Knuth */
  Ctx ck = {.ndim = nd, .shape = sh, .lam = lam_k};
  jx_array *kc[4] = {zero_i, np_full(0, dtype, nd, sh), key, np_full(0, JX_FLOAT32, nd, sh)};
  jx_array *ko[4] = {NULL};
  if (!loop("poisson_knuth", knuth_cond, knuth_body, &ck, 4, kc, ko)) return NULL;
  jx_array *knuth = sub(ko[1], np_constant(1, dtype));
  /* transformed rejection */
  Ctx cr = {.ndim = nd, .shape = sh, .lam = lam_r, .log_lam = random_log(lam_r)};
  cr.b = add(cst(lam, 0.931), mul(cst(lam, 2.53), prim_unary(PRIM_sqrt, lam_r)));
  cr.a = add(cst(lam, -0.059), mul(cst(lam, 0.02483), cr.b));
  cr.inv_alpha = add(cst(lam, 1.1239), dvd(cst(lam, 1.1328), sub(cr.b, cst(lam, 3.4))));
  cr.v_r = sub(cst(lam, 0.9277), dvd(cst(lam, 3.6224), sub(cr.b, cst(lam, 2.0))));
  jx_array *rc[4] = {zero_i, np_full(-1, lam->dtype, nd, sh), np_full(0, JX_BOOL, nd, sh), key};
  jx_array *ro[4] = {NULL};
  if (!cr.a || !cr.inv_alpha || !cr.v_r || !cr.log_lam ||
      !loop("poisson_rejection", rej_cond, rej_body, &cr, 4, rc, ro))
    return NULL;
  jx_array *rej = prim_convert(ro[1], dtype, false);
  jx_array *r = sel(use_knuth, knuth, rej);
  return sel(op2(PRIM_eq, lam, cst(lam, 0.0)), np_constant(0, dtype), r);
}

/* ------------------------------------------------------------ binomial */

/* Inversion: (i, num_geom, geom_sum, key) while any(geom_sum <= count). */
static jx_status inv_cond(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  out[0] = any(le(in[2], c->count));
  return finish(1, out);
}

static jx_status inv_body(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  jx_array *sub_key, *key;
  random_split2(in[3], &sub_key, &key); /* subkey, key = split(key) */
  jx_array *n = in[1];
  out[0] = i_plus_1(in[0]);
  out[1] = sel(le(in[2], c->count), add(n, cst(n, 1.0)), n);
  jx_array *u = random_uniform(sub_key, c->ndim, c->shape, c->prob->dtype, 0, 1, true);
  jx_array *geom = dvd(random_log(u), c->l1mp);
  out[2] = add(in[2], geom ? prim_unary(PRIM_ceil, geom) : NULL);
  out[3] = key;
  return finish(4, out);
}

/* _stirling_approx_tail(k): the table for k <= 9, else 1/12 - (1/360 - 1/1260/(k+1)^2)
 * /(k+1)^2 over (k+1) -- with k clamped to [0, 9] first, as JAX computes it. */
static const double STIRLING[10] = {
    0.0810614667953272,  0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
    0.0166446911898211,  0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
    0.00925546218271273, 0.00833056343336287};

static jx_array *stirling_tail(jx_array *k) {
  if (!k) return NULL;
  jx_array *use_table = le(k, cst(k, 9.0));
  jx_array *kc = op2(PRIM_min, op2(PRIM_max, k, cst(k, 0.0)), cst(k, 9.0));
  jx_array *k1 = opc(PRIM_add, kc, 1.0);
  jx_array *kp1sq = mul(k1, k1);
  jx_array *approx = dvd(sub(cst(k, 1.0 / 12), dvd(sub(cst(k, 1.0 / 360), dvd(cst(k, 1.0 / 1260), kp1sq)), kp1sq)), k1);
  /* stirling_tail_vals[int32(floor(kc))] */
  jx_array *idx = kc ? prim_convert(prim_unary(PRIM_floor, kc), JX_INT32, false) : NULL;
  jx_array *table = cst(k, STIRLING[9]);
  for (int i = 8; i >= 0; i--)
    table = sel(op2(PRIM_eq, idx, np_constant(i, JX_INT32)), cst(k, STIRLING[i]), table);
  return sel(use_table, table, approx);
}

/* BTRS: (i, k_out, accepted, key) while any(~accepted). */
static jx_status btrs_body(void *ctx, jx_array *const *in, jx_array **out) {
  const Ctx *c = ctx;
  jx_array *k3[3];
  split3(in[3], k3);
  jx_dtype dt = c->prob->dtype;
  jx_array *u = random_uniform(k3[1], c->ndim, c->shape, dt, 0, 1, true);
  jx_array *v = random_uniform(k3[2], c->ndim, c->shape, dt, 0, 1, true);
  u = opc(PRIM_sub, u, 0.5);
  jx_array *us = sub(cst(u, 0.5), u ? prim_unary(PRIM_abs, u) : NULL);
  jx_array *accept1 = land(le(cst(us, 0.07), us), le(v, c->v_r));
  jx_array *k = add(mul(add(dvd(mul(cst(c->a, 2.0), c->a), us), c->b), u), c->c);
  k = k ? prim_unary(PRIM_floor, k) : NULL;
  jx_array *n = c->count, *m = c->m, *r = c->r;
  jx_array *reject = lor(op2(PRIM_lt, k, cst(k, 0.0)), gt(k, n));
  v = random_log(dvd(mul(v, c->alpha), add(dvd(c->a, mul(us, us)), c->b)));
  jx_array *n_m_1 = opc(PRIM_add, sub(n, m), 1.0), *n_k_1 = opc(PRIM_add, sub(n, k), 1.0);
  jx_array *ub = mul(opc(PRIM_add, m, 0.5), random_log(dvd(opc(PRIM_add, m, 1.0), mul(r, n_m_1))));
  ub = add(ub, mul(opc(PRIM_add, n, 1.0), random_log(dvd(n_m_1, n_k_1))));
  ub = add(ub, mul(opc(PRIM_add, k, 0.5), random_log(dvd(mul(r, n_k_1), opc(PRIM_add, k, 1.0)))));
  ub = add(ub, stirling_tail(m));
  ub = add(ub, stirling_tail(sub(n, m)));
  ub = sub(ub, stirling_tail(k));
  ub = sub(ub, stirling_tail(sub(n, k)));
  jx_array *accept = lor(accept1, land(lnot(reject), le(v, ub)));
  out[0] = i_plus_1(in[0]);
  out[1] = sel(accept, k, in[1]);
  out[2] = lor(in[2], accept);
  out[3] = k3[0];
  return finish(4, out);
}

/* _binomial on count and prob (prob's float dtype, both of the result shape). */
static jx_array *binomial_impl(jx_array *key, jx_array *count, jx_array *prob, jx_dtype dtype) {
  int nd = prob->ndim;
  const int64_t *sh = prob->shape;
  jx_array *p_lt_half = op2(PRIM_lt, prob, cst(prob, 0.5));
  jx_array *q = sel(p_lt_half, prob, sub(cst(prob, 1.0), prob));
  jx_array *count_nan_or_neg = lor(isnan_(count), op2(PRIM_lt, count, cst(count, 0.0)));
  jx_array *count_inf = count ? prim_unary(PRIM_is_inf, count) : NULL;
  jx_array *q_is_nan = isnan_(q), *q_l_0 = op2(PRIM_lt, q, cst(q, 0.0));
  q = sel(lor(q_is_nan, q_l_0), cst(q, 0.01), q);
  jx_array *use_inv = lor(count_nan_or_neg, le(mul(count, q), cst(q, 10.0)));
  count = count ? prim_unary(PRIM_floor, count) : NULL;
  jx_array *count_inv = sel(use_inv, count, cst(count, 0.0));
  jx_array *count_btrs = sel(use_inv, cst(count, 1e4), count);
  jx_array *q_btrs = sel(use_inv, cst(q, 0.5), q);
  jx_array *zero_i = np_constant(0, JX_INT32);
  jx_dtype pd = prob->dtype;
  /* inversion */
  Ctx ci = {.ndim = nd, .shape = sh, .count = count_inv, .prob = q};
  ci.l1mp = random_log1p(q ? prim_unary(PRIM_neg, q) : NULL);
  jx_array *ic[4] = {zero_i, np_full(0, pd, nd, sh), np_full(0, pd, nd, sh), key};
  jx_array *io[4] = {NULL};
  if (!ci.l1mp || !loop("binomial_inversion", inv_cond, inv_body, &ci, 4, ic, io)) return NULL;
  jx_array *inv = prim_convert(sub(io[1], cst(io[1], 1.0)), dtype, false);
  /* BTRS */
  Ctx cb = {.ndim = nd, .shape = sh, .count = count_btrs, .prob = q_btrs};
  jx_array *n = count_btrs, *p = q_btrs, *one = cst(p, 1.0);
  jx_array *stddev = prim_unary(PRIM_sqrt, mul(mul(n, p), sub(one, p)));
  cb.b = add(cst(p, 1.15), mul(cst(p, 2.53), stddev));
  cb.a = add(add(cst(p, -0.0873), mul(cst(p, 0.0248), cb.b)), mul(cst(p, 0.01), p));
  cb.c = add(mul(n, p), cst(p, 0.5));
  cb.v_r = sub(cst(p, 0.92), dvd(cst(p, 4.2), cb.b));
  cb.r = dvd(p, sub(one, p));
  cb.alpha = mul(add(cst(p, 2.83), dvd(cst(p, 5.1), cb.b)), stddev);
  jx_array *m = mul(opc(PRIM_add, n, 1.0), p);
  cb.m = m ? prim_unary(PRIM_floor, m) : NULL;
  jx_array *bc[4] = {zero_i, np_full(-1, pd, nd, sh), np_full(0, JX_BOOL, nd, sh), key};
  jx_array *bo[4] = {NULL};
  if (!cb.a || !cb.c || !cb.v_r || !cb.r || !cb.alpha || !cb.m ||
      !loop("binomial_btrs", rej_cond, btrs_body, &cb, 4, bc, bo))
    return NULL;
  jx_array *btrs = prim_convert(bo[1], dtype, false);
  jx_array *samples = sel(use_inv, inv, btrs);
  jx_array *invalid = lor(lor(q_l_0, q_is_nan), count_nan_or_neg);
  samples = sel(invalid, np_constant(NAN, dtype), samples);
  samples = sel(land(count_inf, lnot(invalid)), np_constant(INFINITY, dtype), samples);
  jx_array *keep = lor(lor(lor(p_lt_half, count_nan_or_neg), q_is_nan), count_inf);
  jx_array *cd = count ? prim_convert(count, dtype, false) : NULL;
  return sel(keep, samples, sub(cd, samples));
}

/* ---------------------------------------------------------- entry points */

/* A call's static arguments: the jitted sampler's context, compared by count_eq in
 * random_cache.c's key. */
typedef struct CountCall {
  bool binomial;
  jx_dtype dtype;
} CountCall;

static bool count_eq(const void *pa, const void *pb) {
  const CountCall *a = pa, *b = pb;
  return a->binomial == b->binomial && a->dtype == b->dtype;
}

static jx_status count_impl(void *ctx, jx_array *const *in, jx_array **out) {
  const CountCall *c = ctx;
  out[0] = c->binomial ? binomial_impl(in[0], in[1], in[2], c->dtype)
                       : poisson_impl(in[0], in[1], c->dtype);
  return finish(1, out);
}

/* The result shape (as random_gamma.c's): shape if ndim >= 0 (each parameter must
 * broadcast to it), else the broadcast of the parameters. */
static bool count_shape(const char *fn, int ndim, const int64_t *shape, int np, jx_array *const *ps,
                        int *nd, int64_t *s) {
  for (int i = 0; i < np; i++)
    if (np_null_arg(fn, ps[i], "a parameter")) return false;
  if (ndim < 0) return np_broadcast_shapes(fn, np, ps, nd, s);
  if (!random_check_shape(fn, ndim, &shape)) return false;
  *nd = ndim;
  if (ndim) memcpy(s, shape, (size_t)ndim * sizeof(int64_t));
  return true;
}

/* The sampler under jit (as JAX's), kept across calls by random_cached_call: in[1] holds
 * the result's shape. */
static jx_array *run_jit(const char *fn, CountCall *call, int nin, jx_array **in) {
  return random_cached_call(fn, count_impl, count_eq, call, sizeof *call, nin, in, in[1] ? jx_size(in[1]) : 0);
}

jx_array *jx_random_poisson(jx_array *key, jx_array *lam, int ndim, const int64_t *shape,
                            jx_dtype dtype) {
  const char *fn = "jx_random_poisson";
  if (!random_check_key(fn, key, false)) return NULL;
  if (!dtype_is_valid(dtype) || !dtype_is_integer(dtype)) {
    error_set(JX_ERR_DTYPE, "%s: dtype must be an integer dtype, got %s", fn,
              dtype_is_valid(dtype) ? jx_dtype_name(dtype) : "an invalid dtype");
    return NULL;
  }
  int nd;
  int64_t s[JX_MAX_NDIM];
  if (!count_shape(fn, ndim, shape, 1, &lam, &nd, s)) return NULL;
  jx_scope_begin();
  /* jnp.broadcast_to(lam, shape) then float32, as JAX (JX_ERR_SHAPE if it cannot) */
  jx_array *l = np_broadcast_to(fn, lam, nd, s);
  CountCall call = {false, dtype_canonicalize(dtype)};
  jx_array *in[2] = {key, l ? prim_convert(l, JX_FLOAT32, false) : NULL};
  return scope_return(run_jit(fn, &call, 2, in));
}

jx_array *jx_random_binomial(jx_array *key, jx_array *n, jx_array *p, int ndim,
                             const int64_t *shape, jx_dtype dtype) {
  const char *fn = "jx_random_binomial";
  if (!random_check_key(fn, key, false) || !random_check_float(fn, &dtype)) return NULL;
  int nd;
  int64_t s[JX_MAX_NDIM];
  if (!count_shape(fn, ndim, shape, 2, (jx_array *[]){n, p}, &nd, s)) return NULL;
  jx_scope_begin();
  jx_array *pf = np_to_inexact(p); /* promote_dtypes_inexact(prob) */
  jx_array *pb = pf ? np_broadcast_to(fn, prim_convert(pf, pf->dtype, false), nd, s) : NULL;
  jx_array *nb = pb ? np_broadcast_to(fn, prim_convert(n, pb->dtype, false), nd, s) : NULL;
  CountCall call = {true, dtype};
  jx_array *in[3] = {key, nb, pb};
  return scope_return(run_jit(fn, &call, 3, in));
}

/* categorical_shape's static arguments (axis normalized, shape checked), compared by
 * categorical_eq in random_cache.c's key. */
typedef struct CategoricalCall {
  int axis, ndim;
  int64_t shape[JX_MAX_NDIM];
  bool replace;
} CategoricalCall;

static bool categorical_eq(const void *pa, const void *pb) {
  const CategoricalCall *a = pa, *b = pb;
  return a->axis == b->axis && a->ndim == b->ndim && a->replace == b->replace &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* The sampler under jit: in[0] the key, in[1] the logits. */
static jx_status categorical_impl(void *ctx, jx_array *const *in, jx_array **out) {
  const CategoricalCall *c = ctx;
  jx_array *key = in[0], *logits = in[1];
  int axis = c->axis, ndim = c->ndim, nb = logits->ndim - 1, np = ndim - nb;
  const int64_t *shape = c->shape;
  int64_t k = 1;
  for (int d = 0; d < np; d++) k *= shape[d];
  jx_scope_begin();
  if (c->replace) {
    int64_t gs[JX_MAX_NDIM];
    /* gumbel of shape prefix + shape's batch part with the category axis inserted */
    memcpy(gs, shape, (size_t)ndim * sizeof(int64_t));
    memmove(gs + np + axis + 1, gs + np + axis, (size_t)(nb - axis) * sizeof(int64_t));
    gs[np + axis] = logits->shape[axis];
    jx_array *l = logits;
    for (int d = 0; d < np && l; d++) l = jx_expand_dims(l, 0);
    jx_array *g = random_gumbel(key, ndim + 1, gs, logits->dtype);
    out[0] = scope_return(jx_argmax(jx_add(g, l), np + axis, false));
    return out[0] ? JX_OK : jx_last_status();
  }
  jx_array *l = add(logits, random_gumbel(key, logits->ndim, logits->shape, logits->dtype));
  jx_array *vals = NULL, *idx = NULL;
  l = l ? jx_moveaxis(l, axis, -1) : NULL;
  if (!l || jx_top_k(l, k, &vals, &idx) != JX_OK) {
    scope_return(NULL);
    return jx_last_status();
  }
  /* indices (batch..., k) -> (k, batch...) -> shape */
  jx_array *t = jx_moveaxis(idx, -1, 0);
  out[0] = scope_return(t ? jx_reshape(t, ndim, shape) : NULL);
  return out[0] ? JX_OK : jx_last_status();
}

jx_array *jx_random_categorical_shape(jx_array *key, jx_array *logits, int axis, int ndim,
                                      const int64_t *shape, bool replace) {
  /* core._categorical: the batch shape is logits.shape without `axis`; shape (ndim < 0:
   * the batch shape) must end with it, its head is the prefix of independent draws.
   * replace: argmax(gumbel(prefix + logits' shape) + logits); else the top
   * prod(prefix) of logits + gumbel(logits.shape) along axis (Gumbel top-k), moved to
   * the front and reshaped to shape. */
  const char *fn = "jx_random_categorical_shape";
  if (!random_check_key(fn, key, false) || np_null_arg(fn, logits, "logits")) return NULL;
  char b[ARRAY_DESCRIBE_BUF];
  if (!dtype_is_floating(logits->dtype) || logits->ndim == 0) {
    error_set(dtype_is_floating(logits->dtype) ? JX_ERR_SHAPE : JX_ERR_DTYPE,
              "%s: logits must be floating point with at least one axis, got %s", fn,
              array_describe(b, logits));
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, logits->ndim)) return NULL;
  int nb = 0;
  int64_t batch[JX_MAX_NDIM];
  for (int d = 0; d < logits->ndim; d++)
    if (d != axis) batch[nb++] = logits->shape[d];
  if (ndim < 0) {
    ndim = nb;
    shape = batch;
  } else if (!random_check_shape(fn, ndim, &shape)) {
    return NULL;
  }
  /* JAX's _check_shape: broadcast(shape, batch) == shape; without replacement the
   * top-k indices are reshaped to shape, so its tail must be the batch shape itself. */
  bool ok = ndim >= nb;
  for (int i = 0; ok && i < nb; i++) {
    int64_t s = shape[ndim - nb + i];
    ok = s == batch[i] || (replace && batch[i] == 1);
  }
  if (!ok) {
    char b1[ERROR_SHAPE_BUF], b2[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: shape %s must end with (a broadcast of) the batch shape %s of logits %s", fn,
              error_shape_str(b1, ndim, shape), error_shape_str(b2, nb, batch),
              array_describe(b, logits));
    return NULL;
  }
  int np = ndim - nb;
  int64_t k = 1;
  for (int d = 0; d < np; d++) k *= shape[d];
  if (!replace && k > logits->shape[axis]) {
    error_set(JX_ERR_VALUE,
              "%s: number of samples without replacement (%lld) cannot exceed the number of "
              "categories (%lld)",
              fn, (long long)k, (long long)logits->shape[axis]);
    return NULL;
  }
  if (ndim + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: result rank exceeds %d", fn, JX_MAX_NDIM);
    return NULL;
  }
  CategoricalCall call = {.axis = axis, .ndim = ndim, .replace = replace};
  memcpy(call.shape, shape, (size_t)ndim * sizeof(int64_t));
  int64_t size = jx_size(logits) * (k > 0 ? k : 1);
  return random_cached_call(fn, categorical_impl, categorical_eq, &call, sizeof call, 2, (jx_array *[]){key, logits},
                            size);
}
