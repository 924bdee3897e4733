/* random_samplers.c -- jax.random's samplers on top of random.c's bits and uniform:
 * normal (erf_inv), gumbel, exponential, laplace, logistic, cauchy, truncated_normal,
 * bernoulli, categorical, permutation, choice and multivariate_normal, each following
 * jax/_src/random/core.py (_normal_real, _gumbel, _exponential, _laplace, _logistic,
 * _cauchy, _truncated_normal, _bernoulli, _categorical, _shuffle, choice,
 * _multivariate_normal) operation for operation, with XLA's CPU arithmetic where the
 * last bit depends on it. */
#include "lib/random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* -------------------------------------------------------------- erf_inv */

/* lax.erf_inv as XLA lowers it (chlo.erf_inv, stablehlo's ChloLegalizeToStablehlo):
 * Giles' single-precision approximation ("Approximating the erfinv function", GPU
 * Computing Gems, 2011): w = -log1p(-x*x); a degree-8 polynomial in w - 2.5 (w < 5) or
 * sqrt(w) - 3; times x; +-1 map to +-inf. float16/bfloat16 are computed in float32. */
static const float ERFINV32_LO[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                     -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                     -0.00417768164f,  0.246640727f,    1.50140941f};
static const float ERFINV32_HI[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                     -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                     0.00943887047f,   1.00167406f,     2.83297682f};

/* Giles' double-precision version: three ranges of w (< 6.25, < 16, >= 16), polynomials
 * of degree 22, 18 and 16 in w - 3.125, sqrt(w) - 3.25 and sqrt(w) - 5. */
static const double ERFINV64_A[23] = {
    -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,
    1.115787767802518096e-17,   -1.333171662854620906e-16,  2.0972767875968561637e-17,
    6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693,     1.6536545626831027356};
static const double ERFINV64_B[19] = {
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617,   1.0052589676941592334,
    3.0838856104922207635};
static const double ERFINV64_C[17] = {
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
    2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
    7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977,      4.8499064014085844221};

/* exact: XLA's log1p and fused multiply-adds emulated bit for bit (random.normal must
 * match JAX's bits); otherwise the log1p primitive and plain multiply-adds, which fuse
 * into one vector kernel (lax.erf_inv: within a few ulps of JAX's). */
static jx_array *erf_inv32(jx_array *x, bool exact) {
  jx_array *mx2 = op2(PRIM_mul, x, prim_unary(PRIM_neg, x));
  jx_array *w = prim_unary(PRIM_neg, exact ? random_log1p_f32(mx2) : prim_unary(PRIM_log1p, mx2));
  jx_array *lt = op2(PRIM_lt, w, cst(w, 5.0));
  w = sel(lt, opc(PRIM_sub, w, 2.5), opc(PRIM_sub, prim_unary(PRIM_sqrt, w), 3.0));
  jx_array *p = NULL;
  for (int i = 0; i < 9; i++) {
    jx_array *c = sel(lt, cst(x, ERFINV32_LO[i]), cst(x, ERFINV32_HI[i]));
    p = i == 0 ? c : exact ? random_fma32(p, w, c) : op2(PRIM_add, op2(PRIM_mul, p, w), c);
  }
  jx_array *r = op2(PRIM_mul, p, x);
  jx_array *at_one = op2(PRIM_eq, prim_unary(PRIM_abs, x), cst(x, 1.0));
  return sel(at_one, op2(PRIM_mul, x, cst(x, INFINITY)), r);
}

static jx_array *erf_inv64(jx_array *x) {
  jx_array *w =
      prim_unary(PRIM_neg, prim_unary(PRIM_log1p, op2(PRIM_mul, x, prim_unary(PRIM_neg, x))));
  jx_array *lt625 = op2(PRIM_lt, w, cst(w, 6.25)), *lt16 = op2(PRIM_lt, w, cst(w, 16.0));
  jx_array *sq = prim_unary(PRIM_sqrt, w);
  w = sel(lt625, opc(PRIM_sub, w, 3.125), op2(PRIM_sub, sq, sel(lt16, cst(w, 3.25), cst(w, 5.0))));
  /* Coefficient i of the polynomial in use; the longer ones start earlier, so the
   * shorter ones only take part from their own first coefficient on (the selects
   * below keep p unchanged until then). */
  jx_array *p = NULL;
  for (int i = 0; i < 23; i++) {
    jx_array *c = cst(x, ERFINV64_A[i]);
    if (i < 19) c = sel(lt625, c, cst(x, ERFINV64_B[i]));
    if (i < 17) c = sel(lt16, c, cst(x, ERFINV64_C[i]));
    if (i == 0) {
      p = c;
      continue;
    }
    jx_array *next = op2(PRIM_add, c, op2(PRIM_mul, p, w));
    p = i < 17 ? next : sel(i < 19 ? lt16 : lt625, next, p);
  }
  jx_array *r = op2(PRIM_mul, p, x);
  jx_array *at_one = op2(PRIM_eq, prim_unary(PRIM_abs, x), cst(x, 1.0));
  return sel(at_one, op2(PRIM_mul, x, cst(x, INFINITY)), r);
}

jx_array *random_erf_inv(jx_array *x, bool exact) {
  if (!x) return NULL;
  if (x->dtype == JX_FLOAT64) return erf_inv64(x);
  if (x->dtype == JX_FLOAT32) return erf_inv32(x, exact);
  jx_array *r = erf_inv32(prim_convert(x, JX_FLOAT32, false), exact);
  return r ? prim_convert(r, x->dtype, false) : NULL;
}

/* ------------------------------------------------------------- samplers */

/* core._normal_real: sqrt(2) * erf_inv(u), u uniform in [nextafter(-1, 0), 1). */
jx_array *random_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  double lo = -1.0 + ldexp(1.0, -(random_nmant(dtype) + 1));
  jx_array *u = random_uniform(key, ndim, shape, dtype, lo, 1.0, true);
  return op2(PRIM_mul, np_constant(sqrt(2.0), dtype), random_erf_inv(u, true));
}

/* core._gumbel, mode "low" (JAX's default): -log(-log(u)), u uniform in [tiny, 1). */
jx_array *random_gumbel(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  jx_array *u = random_uniform(key, ndim, shape, dtype, random_tiny(dtype), 1.0, true);
  jx_array *l = random_log(u);
  return prim_unary(PRIM_neg, random_log(l ? prim_unary(PRIM_neg, l) : NULL));
}

/* core._exponential: -log1p(-u), u uniform in [0, 1). */
jx_array *random_exponential(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  jx_array *u = random_uniform(key, ndim, shape, dtype, 0.0, 1.0, true);
  return prim_unary(PRIM_neg, random_log1p(u ? prim_unary(PRIM_neg, u) : NULL));
}

typedef enum Sampler {
  S_NORMAL,
  S_GUMBEL,
  S_EXPONENTIAL,
  S_LAPLACE,
  S_LOGISTIC,
  S_CAUCHY,
  S_TRUNCATED_NORMAL,
  S_UNIFORM,   /* jx_random_uniform: [lower, upper) */
  S_BERNOULLI, /* jx_random_bernoulli: p in lower */
  S_RANDINT,   /* jx_random_randint: [imin, imax) */
  /* samplers of arrays (SampleCall.nargs operands after the key) */
  S_PERMUTATION,        /* jx_random_permutation: x (nargs 1) or arange(n) */
  S_CATEGORICAL,        /* jx_random_categorical: logits */
  S_CHOICE,             /* jx_random_choice: a and/or p, or neither */
  S_MULTIVARIATE_NORMAL /* jx_random_multivariate_normal: mean and cov */
} Sampler;

static jx_array *nextafter_const(double v, jx_dtype dtype, bool up);

/* core._truncated_normal: u uniform in [erf(lower/sqrt2), erf(upper/sqrt2)),
 * sqrt2 * erf_inv(u), clipped to the open interval (lower, upper). */
/* XLA's float32 erf on the CPU, which JAX's truncated_normal applies to its two bounds:
 * Eigen's rational interpolant x P(x^2) / Q(x^2) (odd degree 9 over even degree 12),
 * evaluated with fused multiply-adds, and +-1 from |x| >= 3.832506856900711 (erf^-1 of
 * 1 - ulp/2). Coefficients and evaluation order from xla/codegen/intrinsic/erf.cc
 * (EmitErfF32, OpenXLA 2025). jaxc's own erf (src/render/prelude_c.h) is more accurate,
 * so the bounds would round differently (erf(3.5355339) 0.99999940 vs XLA's 0.99999946)
 * and every sample with them. */
static float xla_erf_f32(float x) {
  if (fabsf(x) >= 3.832506856900711f) return copysignf(1.0f, x);
  float x2 = x * x;
  float p = fmaf(x2, 0.00022905065861350646f, 0.0034082910107109506f);
  p = fmaf(x2, p, 0.050955695062380861f);
  p = fmaf(x2, p, 0.18520832239976145f);
  p = fmaf(x2, p, 1.128379143519084f);
  p = x * p;
  float q = fmaf(x2, -1.1791602954361697e-7f, 0.000023547966471313185f);
  q = fmaf(x2, q, 0.0010179625278914885f);
  q = fmaf(x2, q, 0.014070470171167667f);
  q = fmaf(x2, q, 0.11098505178285362f);
  q = fmaf(x2, q, 0.49746925110067538f);
  q = fmaf(x2, q, 1.0f);
  return p / q;
}

/* erf(bound / sqrt2) in dtype: for float32 XLA's value (xla_erf_f32 of the bound times
 * float32 1/sqrt2: XLA's algebraic simplifier turns the division by the constant into
 * that product); otherwise jaxc's erf in dtype. */
static jx_array *erf_of_bound(double bound, jx_array *sqrt2, jx_dtype dtype) {
  if (dtype == JX_FLOAT32) return np_constant(xla_erf_f32((float)bound * (1.0f / (float)sqrt(2.0))), dtype);
  return prim_unary(PRIM_erf, op2(PRIM_div, np_constant(bound, dtype), sqrt2));
}

static jx_array *truncated_normal(jx_array *key, double lower, double upper, int ndim, const int64_t *shape,
                                  jx_dtype dtype) {
  jx_array *sqrt2 = np_constant(sqrt(2.0), dtype);
  jx_array *a = erf_of_bound(lower, sqrt2, dtype), *b = erf_of_bound(upper, sqrt2, dtype);
  jx_array *u = random_uniform_between(key, ndim, shape, dtype, a, b);
  jx_array *out = op2(PRIM_mul, sqrt2, random_erf_inv(u, true));
  out = op2(PRIM_max, nextafter_const(lower, dtype, true), out);
  return op2(PRIM_min, nextafter_const(upper, dtype, false), out);
}

static jx_array *sample(Sampler s, jx_array *key, int ndim, const int64_t *shape, jx_dtype d) {
  int nm = random_nmant(d);
  jx_array *u;
  switch (s) {
  case S_NORMAL: return random_normal(key, ndim, shape, d);
  case S_GUMBEL: return random_gumbel(key, ndim, shape, d);
  case S_EXPONENTIAL: return random_exponential(key, ndim, shape, d);
  case S_LAPLACE: /* core._laplace: sign(u) * log1p(-|u|), u in [-1 + epsneg, 1) */
    u = random_uniform(key, ndim, shape, d, -1.0 + ldexp(1.0, -(nm + 1)), 1.0, true);
    return op2(PRIM_mul, prim_unary(PRIM_sign, u),
               random_log1p(prim_unary(PRIM_neg, prim_unary(PRIM_abs, u))));
  case S_LOGISTIC: /* core._logistic: log(u) - log1p(-u), u in [tiny, 1) */
    u = random_uniform(key, ndim, shape, d, random_tiny(d), 1.0, true);
    return op2(PRIM_sub, random_log(u), random_log1p(prim_unary(PRIM_neg, u)));
  case S_CAUCHY: /* core._cauchy: tan(pi * (u - 0.5)), u in [eps, 1) */
    u = random_uniform(key, ndim, shape, d, ldexp(1.0, -nm), 1.0, true);
    return prim_unary(PRIM_tan, op2(PRIM_mul, cst(u, M_PI), opc(PRIM_sub, u, 0.5)));
  case S_TRUNCATED_NORMAL:
  case S_UNIFORM:
  case S_BERNOULLI:
  case S_RANDINT:
  case S_PERMUTATION:
  case S_CATEGORICAL:
  case S_CHOICE:
  case S_MULTIVARIATE_NORMAL: break; /* their bounds or operands: sample_impl */
  }
  return NULL;
}

/* One sampler call's static arguments: the jitted sampler's context and part of its key
 * in random_cache.c (compared by call_eq). */
typedef struct SampleCall {
  Sampler s;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  jx_dtype dtype;
  double lower, upper; /* S_TRUNCATED_NORMAL's and S_UNIFORM's bounds, S_BERNOULLI's p in
                          lower (0 for the others) */
  int64_t imin, imax;  /* S_RANDINT's bounds (0 for the others) */
  /* The samplers of arrays (random_cached_call compares their operands' avals): */
  int nargs;   /* operands after the key: at most 2 */
  int axis;    /* S_PERMUTATION's and S_CATEGORICAL's axis */
  bool flag;   /* S_PERMUTATION's independent, S_CHOICE's replace */
  bool has_a;  /* S_CHOICE: the first operand is a (else p, or none) */
  int64_t n;   /* S_PERMUTATION's and S_CHOICE's population without an array */
} SampleCall;

static jx_array *permutation_impl(const SampleCall *c, jx_array *key, jx_array *const *args);
static jx_array *choice_impl(const SampleCall *c, jx_array *key, jx_array *const *args);
static jx_array *multivariate_normal_impl(const SampleCall *c, jx_array *key, jx_array *const *args);

/* random_cached_call's eq: the same static arguments (the bounds by their bits). */
static bool call_eq(const void *pa, const void *pb) {
  const SampleCall *a = pa, *b = pb;
  return a->s == b->s && a->ndim == b->ndim && a->dtype == b->dtype &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0 &&
         memcmp(&a->lower, &b->lower, sizeof a->lower) == 0 && memcmp(&a->upper, &b->upper, sizeof a->upper) == 0 &&
         a->imin == b->imin && a->imax == b->imax && a->nargs == b->nargs && a->axis == b->axis &&
         a->flag == b->flag && a->has_a == b->has_a && a->n == b->n;
}

static jx_status sample_impl(void *ctx, jx_array *const *in, jx_array **out) {
  const SampleCall *c = ctx;
  jx_array *key = in[0];
  switch (c->s) {
  case S_TRUNCATED_NORMAL: out[0] = truncated_normal(key, c->lower, c->upper, c->ndim, c->shape, c->dtype); break;
  case S_UNIFORM: out[0] = random_uniform(key, c->ndim, c->shape, c->dtype, c->lower, c->upper, false); break;
  case S_BERNOULLI: /* core._bernoulli, mode "low": uniform(shape, dtype of p) < p */
    out[0] = op2(PRIM_lt, random_uniform(key, c->ndim, c->shape, c->dtype, 0.0, 1.0, true), np_constant(c->lower, c->dtype));
    break;
  case S_RANDINT:
    out[0] = random_randint("jx_random_randint", key, c->ndim, c->shape, c->imin, c->imax, c->dtype);
    break;
  case S_PERMUTATION: out[0] = permutation_impl(c, key, in + 1); break;
  case S_CATEGORICAL: /* core._categorical, replace=True, shape=None: argmax(gumbel + logits) */
    out[0] = jx_argmax(op2(PRIM_add, random_gumbel(key, in[1]->ndim, in[1]->shape, in[1]->dtype), in[1]), c->axis,
                       false);
    break;
  case S_CHOICE: out[0] = choice_impl(c, key, in + 1); break;
  case S_MULTIVARIATE_NORMAL: out[0] = multivariate_normal_impl(c, key, in + 1); break;
  default: out[0] = sample(c->s, key, c->ndim, c->shape, c->dtype);
  }
  return out[0] ? JX_OK : jx_last_status();
}

/* The samplers are chains of dozens of elementwise primitives (erf_inv alone is a long
 * polynomial): run them through jit (random_cache.c keeps the jitted function), so they
 * fuse into a few kernels instead of materializing every intermediate (a (784, 512)
 * normal would otherwise hold ~1 GiB of temporaries until the call returns).
 * in: the key, then call->nargs operands; shape: the call's (call->ndim) sample shape;
 * size: the elements the cache accounts for. */
static jx_array *cached_sample(const char *fn, SampleCall *call, jx_array *const *in, const int64_t *shape,
                               int64_t size) {
  if (call->ndim && shape) memcpy(call->shape, shape, (size_t)call->ndim * sizeof(int64_t));
  return random_cached_call(fn, sample_impl, call_eq, call, sizeof *call, 1 + call->nargs, in, size);
}

/* cached_sample of a sampler of the key alone, its sample of `shape`. */
static jx_array *cached_key_sample(const char *fn, SampleCall *call, jx_array *key, const int64_t *shape) {
  int64_t size = 1;
  for (int d = 0; d < call->ndim; d++) size *= shape[d];
  return cached_sample(fn, call, &key, shape, size);
}

static jx_array *sampler_entry_between(const char *fn, Sampler s, jx_array *key, int ndim, const int64_t *shape,
                                       jx_dtype dtype, double lower, double upper) {
  if (!random_check_key(fn, key, false) || !random_check_shape(fn, ndim, &shape) ||
      !random_check_float(fn, &dtype))
    return NULL;
  SampleCall call = {.s = s, .ndim = ndim, .dtype = dtype, .lower = lower, .upper = upper};
  return cached_key_sample(fn, &call, key, shape);
}

static jx_array *sampler_entry(const char *fn, Sampler s, jx_array *key, int ndim,
                               const int64_t *shape, jx_dtype dtype) {
  return sampler_entry_between(fn, s, key, ndim, shape, dtype, 0, 0);
}

jx_array *jx_random_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  return sampler_entry("jx_random_normal", S_NORMAL, key, ndim, shape, dtype);
}
jx_array *jx_random_gumbel(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  return sampler_entry("jx_random_gumbel", S_GUMBEL, key, ndim, shape, dtype);
}
jx_array *jx_random_exponential(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  return sampler_entry("jx_random_exponential", S_EXPONENTIAL, key, ndim, shape, dtype);
}
jx_array *jx_random_laplace(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  return sampler_entry("jx_random_laplace", S_LAPLACE, key, ndim, shape, dtype);
}
jx_array *jx_random_logistic(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  return sampler_entry("jx_random_logistic", S_LOGISTIC, key, ndim, shape, dtype);
}
jx_array *jx_random_cauchy(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  return sampler_entry("jx_random_cauchy", S_CAUCHY, key, ndim, shape, dtype);
}

/* lax.nextafter(v, +-inf) of the constant v rounded to dtype, as a 0-d array: the next
 * bit pattern away from (up) or towards -inf; zeros step to the smallest subnormal, NaN
 * and the infinity in the direction of travel stay. */
static jx_array *nextafter_const(double v, jx_dtype dtype, bool up) {
  jx_array *c = np_constant(v, dtype);
  size_t n = jx_dtype_itemsize(dtype);
  uint64_t bits = 0;
  union {
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
  } u;
  if (!c || jx_read(c, &u, n) != JX_OK) return NULL;
  bits = n == 2 ? u.u16 : n == 4 ? u.u32 : u.u64;
  uint64_t sign = (uint64_t)1 << (8 * n - 1), mag = bits & (sign - 1);
  int e_bits = dtype == JX_FLOAT16 ? 5 : dtype == JX_FLOAT64 ? 11 : 8;
  uint64_t inf = ((((uint64_t)1 << e_bits) - 1) << (8 * n - 1 - e_bits));
  bool neg = (bits & sign) != 0;
  if (mag > inf || (mag == inf && neg != up)) return c; /* NaN; +inf going up; -inf down */
  if (mag == 0)
    bits = up ? 1 : (sign | 1);
  else
    bits = (neg == up) ? bits - 1 : bits + 1;
  return random_uconst(bits, dtype);
}

jx_array *jx_random_truncated_normal(jx_array *key, double lower, double upper, int ndim,
                                     const int64_t *shape, jx_dtype dtype) {
  /* through jit as the other samplers (it ran op by op: 70-125 ms for 2048 x 2048) */
  return sampler_entry_between("jx_random_truncated_normal", S_TRUNCATED_NORMAL, key, ndim, shape, dtype, lower,
                               upper);
}

jx_array *jx_random_bernoulli(jx_array *key, double p, int ndim, const int64_t *shape) {
  /* core._bernoulli (sample_impl); a C double is a Python float, so the dtype is the
   * default float. Through the sampler cache, as the other samplers. */
  const char *fn = "jx_random_bernoulli";
  if (!random_check_key(fn, key, false) || !random_check_shape(fn, ndim, &shape)) return NULL;
  SampleCall call = {.s = S_BERNOULLI, .ndim = ndim, .dtype = dtype_default_float(), .lower = p};
  return cached_key_sample(fn, &call, key, shape);
}

jx_array *jx_random_categorical(jx_array *key, jx_array *logits, int axis) {
  /* core._categorical with replace=True, shape=None: argmax(gumbel + logits, axis). */
  const char *fn = "jx_random_categorical";
  if (!random_check_key(fn, key, false)) return NULL;
  if (!logits) {
    error_set(JX_ERR_VALUE, "%s: logits is NULL", fn);
    return NULL;
  }
  char b[ARRAY_DESCRIBE_BUF];
  if (!dtype_is_floating(logits->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: logits must be floating point, got %s", fn,
              array_describe(b, logits));
    return NULL;
  }
  if (logits->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: logits must have at least one axis, got %s", fn,
              array_describe(b, logits));
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, logits->ndim)) return NULL;
  SampleCall call = {.s = S_CATEGORICAL, .nargs = 1, .axis = axis};
  return cached_sample(fn, &call, (jx_array *[]){key, logits}, NULL, jx_size(logits));
}

/* --------------------------------------------------------------- choice */

/* jnp.searchsorted(sorted, r, side='left') for ascending `sorted` (n,): the number of
 * elements below each r, as the default int dtype; shape r.shape. JAX's default method
 * ('scan'): ceil(log2(n + 1)) halvings of [low, high) with go_left = r <= sorted[mid],
 * the answer high -- O(r.size log n) (comparing every r with every element took 2.4 s
 * for 100000 draws over 100000 weights; JAX: 20 ms). */
static jx_array *count_below(jx_array *sorted, jx_array *r) {
  if (!sorted || !r) return NULL;
  int64_t n = sorted->shape[0];
  int levels = 0;
  while (levels < 64 && ((uint64_t)1 << levels) < (uint64_t)n + 1) levels++;
  jx_dtype it = dtype_default_int();
  jx_array *low = jx_zeros(r->ndim, r->shape, it), *high = jx_full(r->ndim, r->shape, (double)n, it);
  for (int l = 0; l < levels && low && high; l++) {
    /* low + (high - low) / 2: the floor of the midpoint without overflow */
    jx_array *mid = jx_add(low, jx_right_shift(jx_subtract(high, low), jx_scalar_int(1)));
    jx_array *go_left = jx_less_equal(r, jx_take(sorted, mid, 0));
    low = jx_where(go_left, low, mid);
    high = jx_where(go_left, mid, high);
  }
  return high;
}

/* An arange(n) of the default int dtype (jnp.arange(n)); JX_ERR_VALUE beyond it. */
static jx_array *arange_int(const char *fn, int64_t n) {
  jx_dtype d = dtype_default_int();
  if ((double)n > dtype_max_value(d)) { /* (as doubles: int64's max is 2^63 there) */
    error_set(JX_ERR_VALUE, "%s: %lld items overflow the default int dtype %s", fn, (long long)n,
              jx_dtype_name(d));
    return NULL;
  }
  return prim_iota(d, 1, &n, 0);
}

/* core._shuffle: ceil(3 ln(size) / ln(2^32 - 1)) rounds of a stable sort of x along
 * `axis` by fresh random uint32 keys (key, subkey = split(key) each round). */
static jx_array *shuffle(jx_array *key, jx_array *x, int axis) {
  if (!key || !x) return NULL;
  int64_t size = 1;
  for (int d = 0; d < x->ndim; d++) size *= x->shape[d];
  int rounds = (int)ceil(3.0 * log((double)(size > 1 ? size : 1)) / log(4294967295.0));
  for (int r = 0; r < rounds && x; r++) {
    jx_array *next, *sub;
    random_split2(key, &next, &sub);
    key = next;
    jx_array *sort_keys = sub ? random_bits(sub, 32, x->ndim, x->shape) : NULL;
    jx_array *order = sort_keys ? jx_argsort(sort_keys, axis, false) : NULL;
    x = order ? jx_take_along_axis(x, order, axis, JX_INDEX_CLIP) : NULL;
  }
  return x;
}

/* core._permutation on an array (ndim >= 1, axis normalized). */
static jx_array *permute(const char *fn, jx_array *key, jx_array *x, int axis, bool independent) {
  if (independent || x->ndim == 1) return shuffle(key, x, axis);
  jx_array *ind = shuffle(key, arange_int(fn, x->shape[axis]), 0);
  return ind ? jx_take(x, ind, axis) : NULL;
}

jx_array *jx_random_permutation(jx_array *key, jx_array *x, int64_t n, int axis, bool independent) {
  const char *fn = "jx_random_permutation";
  if (!random_check_key(fn, key, false)) return NULL;
  char b[ARRAY_DESCRIBE_BUF];
  if (x && x->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: x must have at least one axis, got %s (pass n instead)", fn,
              array_describe(b, x));
    return NULL;
  }
  if (!x && n < 0) {
    error_set(JX_ERR_VALUE, "%s: n must be >= 0, got %lld", fn, (long long)n);
    return NULL;
  }
  if (x && !array_normalize_axis(fn, &axis, x->ndim)) return NULL;
  if (!x && (double)n > dtype_max_value(dtype_default_int())) return arange_int(fn, n); /* its error */
  SampleCall call = {.s = S_PERMUTATION, .nargs = x ? 1 : 0, .axis = axis, .flag = independent, .n = n,
                     .dtype = dtype_default_int()}; /* the dtype of arange(n), which x64 mode decides */
  return cached_sample(fn, &call, (jx_array *[]){key, x}, NULL, x ? jx_size(x) : n);
}

static jx_array *permutation_impl(const SampleCall *c, jx_array *key, jx_array *const *args) {
  const char *fn = "jx_random_permutation";
  return c->nargs ? permute(fn, key, args[0], c->axis, c->flag) : shuffle(key, arange_int(fn, c->n), 0);
}

jx_array *jx_random_choice(jx_array *key, jx_array *a, int64_t n, int ndim, const int64_t *shape,
                           bool replace, jx_array *p) {
  /* core.choice along axis 0. With replacement: randint indices, or with p the inverse
   * CDF searchsorted(cumsum(p), total * (1 - uniform)). Without: the first draws of a
   * permutation, or with p the top draws of gumbel + log(p) (Gumbel top-k). */
  const char *fn = "jx_random_choice";
  if (!random_check_key(fn, key, false) || !random_check_shape(fn, ndim, &shape)) return NULL;
  char b[ARRAY_DESCRIBE_BUF];
  if (a && a->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: a must have at least one axis, got %s (pass n instead)", fn,
              array_describe(b, a));
    return NULL;
  }
  int64_t n_in = a ? a->shape[0] : n, draws = 1;
  for (int d = 0; d < ndim; d++) draws *= shape[d];
  if (draws == 0) /* JAX returns zeros of `shape` (not followed by a's other axes) */
    return jx_zeros(ndim, shape, a ? a->dtype : dtype_default_int());
  if (n_in <= 0) {
    error_set(JX_ERR_VALUE, "%s: a must be greater than 0 unless no samples are taken, got %lld",
              fn, (long long)n_in);
    return NULL;
  }
  if (!replace && draws > n_in) {
    error_set(JX_ERR_VALUE,
              "%s: cannot take a larger sample (size %lld) than population (size %lld) "
              "when replace=false",
              fn, (long long)draws, (long long)n_in);
    return NULL;
  }
  if (p && (p->ndim != 1 || p->shape[0] != n_in)) {
    error_set(JX_ERR_SHAPE, "%s: p must be NULL or of shape (%lld,) like a's first axis, got %s",
              fn, (long long)n_in, array_describe(b, p));
    return NULL;
  }
  if (a && ndim + a->ndim - 1 > JX_MAX_NDIM) { /* the result: shape + a.shape[1:] */
    error_set(JX_ERR_SHAPE, "%s: result rank exceeds %d", fn, JX_MAX_NDIM);
    return NULL;
  }
  SampleCall call = {.s = S_CHOICE, .ndim = ndim, .nargs = (a != NULL) + (p != NULL), .flag = replace,
                     .has_a = a != NULL, .n = n_in};
  jx_array *in[3] = {key, a ? a : p, p};
  return cached_sample(fn, &call, in, shape, draws > n_in ? draws : n_in);
}

static jx_array *choice_impl(const SampleCall *c, jx_array *key, jx_array *const *args) {
  const char *fn = "jx_random_choice";
  jx_array *a = c->has_a ? args[0] : NULL, *p = c->nargs > c->has_a ? args[c->has_a] : NULL;
  int ndim = c->ndim;
  const int64_t *shape = c->shape;
  int64_t n_in = c->n, draws = 1;
  for (int d = 0; d < ndim; d++) draws *= shape[d];
  int rnd = 0; /* result shape: shape + a.shape[1:] */
  int64_t rshape[JX_MAX_NDIM];
  for (int d = 0; d < ndim; d++) rshape[rnd++] = shape[d];
  for (int d = 1; a && d < a->ndim; d++) rshape[rnd++] = a->shape[d];
  jx_scope_begin();
  jx_array *ind, *pf = p ? np_to_inexact(p) : NULL;
  int64_t start = 0, one = 1;
  if (c->flag && !p) {
    ind = random_randint(fn, key, ndim, shape, 0, n_in, dtype_default_int());
  } else if (c->flag) {
    jx_array *cum = pf ? jx_lax_cumsum(pf, 0, false) /* XLA's CPU rounding, as JAX */ : NULL;
    int64_t last = n_in - 1;
    jx_array *total = cum ? prim_reshape(prim_slice(cum, &last, &n_in, &one), 0, NULL) : NULL;
    jx_array *u = cum ? random_uniform(key, ndim, shape, cum->dtype, 0.0, 1.0, true) : NULL;
    jx_array *r = op2(PRIM_mul, total, op2(PRIM_sub, cst(u, 1.0), u));
    ind = count_below(cum, r);
  } else if (!p) { /* permutation(key, a or n)[:draws], reshaped below */
    jx_array *perm = a ? permute(fn, key, a, 0, false) : shuffle(key, arange_int(fn, n_in), 0);
    jx_array *firsts = NULL;
    if (perm) {
      int64_t s[JX_MAX_NDIM] = {0}, e[JX_MAX_NDIM], st[JX_MAX_NDIM];
      for (int d = 0; d < perm->ndim; d++) e[d] = perm->shape[d], st[d] = 1;
      e[0] = draws;
      firsts = prim_slice(perm, s, e, st);
    }
    return scope_return(firsts ? jx_reshape(firsts, rnd, rshape) : NULL);
  } else { /* lax.top_k(gumbel + log(p), draws): the stable descending order's head */
    jx_array *g = pf ? op2(PRIM_add, random_gumbel(key, 1, &n_in, pf->dtype), random_log(pf)) : NULL;
    jx_array *order = g ? jx_argsort(g, 0, true) : NULL;
    ind = order ? prim_slice(order, &start, &draws, &one) : NULL;
    ind = ind ? jx_reshape(ind, ndim, shape) : NULL;
  }
  return scope_return(a && ind ? jx_take(a, ind, 0) : ind);
}

/* ---------------------------------------------------- multivariate_normal */

/* The lower Cholesky factor of every (n, n) matrix of A (..., n, n), column by column
 * as LAPACK's unblocked potf2 does: l_jj = sqrt(a_jj - sum_k l_jk^2), then
 * l_ij = (a_ij - sum_k l_ik l_jk) * (1 / l_jj). Not positive definite: NaNs. O(n^2)
 * operations on (..., n) vectors; meant for the small n of a covariance. */
static jx_array *cholesky(jx_array *A) {
  int nd = A->ndim, nv = nd - 1; /* a column is a vector of shape (..., n): rank nv */
  int64_t n = A->shape[nd - 1];
  if (n == 0) return prim_reshape(A, nd, A->shape); /* (..., 0, 0): nothing to factor */
  int64_t vshape[JX_MAX_NDIM], step[JX_MAX_NDIM];
  memcpy(vshape, A->shape, (size_t)nv * sizeof(int64_t));
  for (int d = 0; d < nd; d++) step[d] = 1;
  jx_array **cols = calloc((size_t)n, sizeof(jx_array *));
  if (!cols) {
    error_set(JX_ERR_OOM, "jx_random_multivariate_normal: out of memory");
    return NULL;
  }
  jx_array *iota = prim_iota(JX_INT32, 1, &n, 0);
  bool ok = true;
  for (int64_t j = 0; ok && j < n; j++) {
    /* A[..., :, j] and, for a column vector v, its element j as (..., 1). */
    int64_t s[JX_MAX_NDIM] = {0}, e[JX_MAX_NDIM], vs[JX_MAX_NDIM] = {0}, ve[JX_MAX_NDIM];
    memcpy(e, A->shape, (size_t)nd * sizeof(int64_t));
    s[nd - 1] = j, e[nd - 1] = j + 1;
    memcpy(ve, vshape, (size_t)nv * sizeof(int64_t));
    vs[nv - 1] = j, ve[nv - 1] = j + 1;
    jx_array *c = prim_reshape(prim_slice(A, s, e, step), nv, vshape);
    jx_array *dot = NULL;
    for (int64_t k = 0; k < j; k++) {
      jx_array *ljk = bcast(prim_slice(cols[k], vs, ve, step), nv, vshape);
      jx_array *t = op2(PRIM_mul, cols[k], ljk);
      dot = k == 0 ? t : op2(PRIM_add, dot, t);
    }
    if (dot) c = op2(PRIM_sub, c, dot);
    jx_array *d = c ? prim_unary(PRIM_sqrt, prim_slice(c, vs, ve, step)) : NULL; /* (..., 1) */
    jx_array *jc = np_constant((double)j, JX_INT32);
    jx_array *is_below = bcast(op2(PRIM_lt, jc, iota), nv, vshape);
    jx_array *is_diag = bcast(op2(PRIM_eq, iota, jc), nv, vshape);
    jx_array *rd = d ? bcast(prim_unary(PRIM_reciprocal, d), nv, vshape) : NULL;
    cols[j] = sel(is_below, op2(PRIM_mul, c, rd),
                  sel(is_diag, d ? bcast(d, nv, vshape) : NULL, cst(c, 0.0)));
    ok = cols[j] != NULL;
  }
  /* L[..., i, j] = cols[j][..., i]: each column becomes (..., n, 1), then concatenate. */
  int64_t cshape[JX_MAX_NDIM];
  memcpy(cshape, vshape, (size_t)nv * sizeof(int64_t));
  cshape[nv] = 1;
  for (int64_t j = 0; ok && j < n; j++) ok = (cols[j] = prim_reshape(cols[j], nd, cshape)) != NULL;
  jx_array *L = ok ? prim_concatenate((int)n, cols, nd - 1) : NULL;
  free(cols);
  /* A factorization that fails (a matrix not positive definite: a NaN pivot) is NaN
   * throughout, as JAX's cholesky gives it (LAPACK's potrf fails the whole matrix), not
   * NaN from the failing column on: no finite-looking samples from it. */
  bool mask[JX_MAX_NDIM] = {false};
  mask[nd - 2] = mask[nd - 1] = true;
  int bdims[JX_MAX_NDIM];
  for (int d = 0; d < nd - 2; d++) bdims[d] = d;
  jx_array *bad = L ? prim_reduce(PRIM_reduce_or, op2(PRIM_ne, L, L), mask) : NULL;
  bad = bad ? prim_broadcast_in_dim(bad, nd, L->shape, bdims) : NULL;
  return bad ? sel(bad, cst(L, NAN), L) : NULL;
}

/* Broadcast of two shapes (NumPy rules) into out; false if they do not broadcast. */
static bool broadcast2(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                       int64_t *out) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int64_t x = i < n - na ? 1 : a[i - (n - na)], y = i < n - nb ? 1 : b[i - (n - nb)];
    if (x != y && x != 1 && y != 1) return false;
    out[i] = x == 1 ? y : x;
  }
  *nout = n;
  return true;
}

jx_array *jx_random_multivariate_normal(jx_array *key, jx_array *mean, jx_array *cov, int ndim,
                                        const int64_t *shape, jx_dtype dtype) {
  /* core._multivariate_normal with method='cholesky':
   * mean + einsum('...ij,...j->...i', cholesky(cov), normal(shape + (n,))). */
  const char *fn = "jx_random_multivariate_normal";
  if (!random_check_key(fn, key, false) || (ndim >= 0 && !random_check_shape(fn, ndim, &shape)) ||
      !random_check_float(fn, &dtype))
    return NULL;
  if (!mean || !cov) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, mean ? "cov" : "mean");
    return NULL;
  }
  char b1[ARRAY_DESCRIBE_BUF], b2[ARRAY_DESCRIBE_BUF];
  int64_t n = mean->ndim >= 1 ? mean->shape[mean->ndim - 1] : -1;
  if (mean->ndim < 1 || cov->ndim < 2 || cov->shape[cov->ndim - 1] != n ||
      cov->shape[cov->ndim - 2] != n) {
    error_set(JX_ERR_SHAPE, "%s: needs mean (..., n) and cov (..., n, n), got %s and %s", fn,
              array_describe(b1, mean), array_describe(b2, cov));
    return NULL;
  }
  if (n > 256) { /* cholesky() unrolls O(n^2) operations */
    error_set(JX_ERR_UNSUPPORTED,
              "%s: covariance of size %lld; the unrolled Cholesky takes n <= 256", fn,
              (long long)n);
    return NULL;
  }
  int nb, ns;
  int64_t batch[JX_MAX_NDIM], s[JX_MAX_NDIM + 1];
  if (!broadcast2(mean->ndim - 1, mean->shape, cov->ndim - 2, cov->shape, &nb, batch)) {
    error_set(JX_ERR_SHAPE, "%s: batch shapes of mean %s and cov %s do not broadcast", fn,
              array_describe(b1, mean), array_describe(b2, cov));
    return NULL;
  }
  if (ndim < 0) {
    ns = nb;
    memcpy(s, batch, (size_t)nb * sizeof(int64_t));
  } else {
    int nr;
    int64_t r[JX_MAX_NDIM];
    bool same = broadcast2(ndim, shape, nb, batch, &nr, r) && nr == ndim &&
                (ndim == 0 || memcmp(r, shape, (size_t)ndim * sizeof(int64_t)) == 0);
    if (!same) {
      char b3[ERROR_SHAPE_BUF];
      error_set(JX_ERR_SHAPE,
                "%s: shape %s must be the broadcast of itself with the batch "
                "shapes of mean %s and cov %s",
                fn, error_shape_str(b3, ndim, shape), array_describe(b1, mean),
                array_describe(b2, cov));
      return NULL;
    }
    ns = ndim;
    if (ndim) memcpy(s, shape, (size_t)ndim * sizeof(int64_t));
  }
  if (ns + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: result rank %d exceeds %d", fn, ns + 1, JX_MAX_NDIM);
    return NULL;
  }
  s[ns] = n;
  SampleCall call = {.s = S_MULTIVARIATE_NORMAL, .ndim = ns + 1, .dtype = dtype, .nargs = 2};
  int64_t size = n;
  for (int d = 0; d < ns; d++) size *= s[d];
  return cached_sample(fn, &call, (jx_array *[]){key, mean, cov}, s, size > jx_size(cov) ? size : jx_size(cov));
}

/* mean + factor @ z, z of the call's shape (the batch shape and n). */
static jx_array *multivariate_normal_impl(const SampleCall *c, jx_array *key, jx_array *const *args) {
  jx_array *mean = args[0], *cov = args[1];
  jx_scope_begin();
  /* promote_dtypes_inexact(mean, cov) */
  bool weak;
  jx_dtype pd = np_result_type(2, (jx_array *[]){mean, cov}, &weak);
  if (!dtype_is_floating(pd)) pd = dtype_to_inexact(pd);
  jx_array *m = np_convert(mean, pd, weak), *cv = np_convert(cov, pd, weak);
  jx_array *factor = cv ? cholesky(cv) : NULL;
  jx_array *z = random_normal(key, c->ndim, c->shape, c->dtype);
  jx_array *fz = jx_matmul(factor, z ? jx_expand_dims(z, -1) : NULL);
  return scope_return(jx_add(m, fz ? jx_squeeze(fz, 1, (int[]){-1}) : NULL));
}

jx_array *jx_random_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype, double minval,
                            double maxval) {
  /* through the sampler cache (random_uniform, sample_impl): a dropout mask's uniform of a
   * few hundred elements ran as a dozen eager ops, ~80 us a call */
  return sampler_entry_between("jx_random_uniform", S_UNIFORM, key, ndim, shape, dtype, minval, maxval);
}

jx_array *jx_random_randint(jx_array *key, int ndim, const int64_t *shape, int64_t minval, int64_t maxval,
                            jx_dtype dtype) {
  const char *fn = "jx_random_randint";
  if (!random_check_key(fn, key, false) || !random_check_shape(fn, ndim, &shape)) return NULL;
  if (!dtype_is_valid(dtype) || !dtype_is_integer(dtype)) {
    error_set(JX_ERR_DTYPE, "%s: dtype must be an integer dtype, got %s", fn,
              dtype_is_valid(dtype) ? jx_dtype_name(dtype) : "an invalid dtype");
    return NULL;
  }
  SampleCall call = {.s = S_RANDINT, .ndim = ndim, .dtype = dtype_canonicalize(dtype), .imin = minval, .imax = maxval};
  return cached_key_sample(fn, &call, key, shape);
}
