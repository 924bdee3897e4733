/* special_prims.c -- lax's special-function primitives (lgamma, digamma, polygamma,
 * zeta, igamma, igammac, igamma_grad_a, random_gamma_grad, bessel_i0e, bessel_i1e) as
 * special_call equations: the function's expansion into primitives, the algorithm
 * XLA lowers it with (xla/hlo/builder/lib/math.cc, stablehlo's chlo decompositions, and
 * jax/_src/lax/special.py for igamma), traced once per call into a closed jaxpr, and
 * JAX's JVP rule (jax/_src/lax/special.py) attached. So jit fuses the expansion into one
 * kernel, vmap batches it, and grad uses JAX's rule, not the derivative of the
 * expansion. Where XLA runs a while loop (igamma's series and continued fraction),
 * the loop is unrolled a fixed number of times (IGAMMA_ITERS). Operands are float32 or
 * float64 of one shape (special.c promotes, broadcasts and upcasts half floats). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "lib/special.h"
#include "transform/transform.h"

/* ---------------------------------------------------------- arithmetic */
/* Elementwise ops on operands of one shape and dtype; NULL propagates. Constants are
 * shaped like their operand (broadcast views) and weak iff it is. */

static jx_array *C(jx_array *like, double v) { return like ? tx_full_like(like, v) : NULL; }
static jx_array *add(jx_array *a, jx_array *b) { return prim_binary(PRIM_add, a, b); }
static jx_array *sub(jx_array *a, jx_array *b) { return prim_binary(PRIM_sub, a, b); }
static jx_array *mul(jx_array *a, jx_array *b) { return prim_binary(PRIM_mul, a, b); }
static jx_array *dv(jx_array *a, jx_array *b) { return prim_binary(PRIM_div, a, b); }
static jx_array *addc(jx_array *a, double v) { return add(a, C(a, v)); }
static jx_array *mulc(jx_array *a, double v) { return mul(a, C(a, v)); }
static jx_array *neg(jx_array *a) { return prim_unary(PRIM_neg, a); }
static jx_array *fabs_(jx_array *a) { return prim_unary(PRIM_abs, a); }
static jx_array *log_(jx_array *a) { return prim_unary(PRIM_log, a); }
static jx_array *log1p_(jx_array *a) { return prim_unary(PRIM_log1p, a); }
static jx_array *exp_(jx_array *a) { return prim_unary(PRIM_exp, a); }
static jx_array *floor_(jx_array *a) { return prim_unary(PRIM_floor, a); }
static jx_array *sqrt_(jx_array *a) { return prim_unary(PRIM_sqrt, a); }
static jx_array *lt(jx_array *a, jx_array *b) { return prim_binary(PRIM_lt, a, b); }
static jx_array *gt(jx_array *a, jx_array *b) { return prim_binary(PRIM_lt, b, a); }
static jx_array *eq(jx_array *a, jx_array *b) { return prim_binary(PRIM_eq, a, b); }
static jx_array *ne(jx_array *a, jx_array *b) { return prim_binary(PRIM_ne, a, b); }
static jx_array *or_(jx_array *a, jx_array *b) { return prim_binary(PRIM_or, a, b); }
static jx_array *and_(jx_array *a, jx_array *b) { return prim_binary(PRIM_and, a, b); }
static jx_array *not_(jx_array *a) { return prim_unary(PRIM_not, a); }
/* a <= b, false with NaN (as lax.le) */
static jx_array *le(jx_array *a, jx_array *b) { return or_(lt(a, b), eq(a, b)); }
static jx_array *ltc(jx_array *a, double v) { return lt(a, C(a, v)); }
static jx_array *gtc(jx_array *a, double v) { return gt(a, C(a, v)); }
static jx_array *lec(jx_array *a, double v) { return le(a, C(a, v)); }
static jx_array *eqc(jx_array *a, double v) { return eq(a, C(a, v)); }
static jx_array *sel(jx_array *c, jx_array *a, jx_array *b) { return prim_select(c, a, b); }
static jx_array *selc(jx_array *c, double v, jx_array *b) { return sel(c, C(b, v), b); }
static jx_array *isnan_(jx_array *a) { return prim_unary(PRIM_is_nan, a); }
static jx_array *isinf_(jx_array *a) { return prim_unary(PRIM_is_inf, a); }
static jx_array *isfinite_(jx_array *a) { return not_(or_(isnan_(a), isinf_(a))); }
static bool is64(jx_array *a) { return a && a->dtype == JX_FLOAT64; }
static double eps_of(jx_array *a) { return is64(a) ? 2.220446049250313e-16 : 1.1920928955078125e-07; }
static double max_of(jx_array *a) { return is64(a) ? 1.7976931348623157e308 : 3.4028234663852886e38; }

/* Tangent arithmetic with symbolic zeros (NULL), as in transform/jvp.c. */
static jx_array *tmul(jx_array *t, jx_array *k) { return t ? mul(t, k) : NULL; }
static jx_array *tadd(jx_array *a, jx_array *b) { return !a ? b : !b ? a : add(a, b); }

/* --------------------------------------------------- the custom call */

typedef struct CallCtx {
  const SpecialRule *rule;
  Jaxpr *jaxpr;
} CallCtx;
static jx_status run_call(void *ctx, jx_array *const *in, jx_array **out) {
  const CallCtx *cc = ctx;
  return prim_special_call(cc->rule, cc->jaxpr, cc->jaxpr->nin, in, out);
}

/* Traces impl on abstract inputs of in's types into a closed jaxpr named rule->name and
 * binds it as one special_call equation with `rule`. param reaches impl. */
jx_status special_custom_call(const SpecialRule *rule, int nin, jx_array *const *in, int nout,
                              jx_array **out, SpecialImpl impl, int param) {
  for (int o = 0; o < nout; o++) out[o] = NULL;
  for (int i = 0; i < nin; i++)
    if (!in[i]) return jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_VALUE;
  Trace *t = stage_begin();
  if (!t) return jx_last_status();
  jx_scope_begin();
  jx_array *ins[SPECIAL_MAX_ARGS] = {NULL}, *outs[SPECIAL_MAX_ARGS] = {NULL};
  bool ok = nin <= SPECIAL_MAX_ARGS && nout <= SPECIAL_MAX_ARGS;
  for (int i = 0; ok && i < nin; i++) {
    Aval a = prim_aval_of(in[i]);
    ok = (ins[i] = stage_new_input(t, &a)) != NULL;
  }
  ok = ok && impl(ins, outs, param);
  for (int o = 0; ok && o < nout; o++) ok = outs[o] != NULL;
  Jaxpr *j = stage_end(t, ok ? nout : 0, outs);
  jx_scope_end(0, NULL);
  if (!ok || !j) {
    jaxpr_free(j);
    return jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_INTERNAL;
  }
  j->name = strdup(rule->name);
  jx_status s = jaxpr_simplify(j);
  bool traced = false;
  for (int i = 0; i < nin; i++) traced |= in[i]->tracer != NULL;
  if (s == JX_OK && traced) {
    s = prim_special_call(rule, j, nin, in, out);
  } else if (s == JX_OK) {
    /* Concrete operands: the call runs as one jitted program (one fused kernel for
     * most functions) rather than equation by equation. */
    CallCtx cc = {rule, j};
    jx_fn *f = jx_fn_new(rule->name, nin, nout, run_call, &cc);
    jx_fn *jf = f ? jx_jit(f) : NULL;
    s = jf ? jx_call(jf, in, out) : jx_last_status();
    jx_fn_free(jf), jx_fn_free(f);
  }
  jaxpr_free(j);
  return s;
}

/* XLA computes the lax special functions of float16/bfloat16 in float32. */
static bool half(jx_array *x) { return x && (x->dtype == JX_FLOAT16 || x->dtype == JX_BFLOAT16); }
static jx_array *up(jx_array *x) { return half(x) ? prim_convert(x, JX_FLOAT32, x->weak) : jx_ref(x); }
static jx_array *down(jx_array *r, jx_array *like) {
  if (!r || !half(like)) return r;
  jx_array *d = prim_convert(r, like->dtype, like->weak);
  jx_free(r);
  return d;
}
static jx_array *call1(const SpecialRule *rule, jx_array *x, SpecialImpl impl) {
  jx_array *r = NULL, *u = up(x);
  if (u) special_custom_call(rule, 1, &u, 1, &r, impl, 0);
  jx_free(u);
  return down(r, x);
}
static jx_array *call2(const SpecialRule *rule, jx_array *x, jx_array *y, SpecialImpl impl, int param) {
  jx_array *r = NULL, *u = up(x), *v = up(y);
  if (u && v) special_custom_call(rule, 2, (jx_array *[]){u, v}, 1, &r, impl, param);
  jx_free(u), jx_free(v);
  return down(r, x);
}

/* A rule for functions JAX gives no derivative (igamma_grad_a, random_gamma_grad). */
static jx_status no_rule(const char *name) {
  error_set(JX_ERR_UNSUPPORTED, "jvp: differentiation rule for '%s' not implemented (as in JAX)", name);
  return JX_ERR_UNSUPPORTED;
}

/* ------------------------------------------------------ lgamma, digamma */
/* Lanczos' approximation with g = 7 and 9 coefficients (the ones XLA's Lgamma and
 * Digamma use, from Paul Godfrey's tables), reflection for x < 0.5. */
const double special_lanczos_g = 7.0;
const double special_lanczos_base = 0.99999999999980993227684700473478;
const double special_lanczos[8] = {676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                                  771.3234287776530788486528258894,   -176.61502916214059906584551354,
                                  12.507343278686904814458936853,     -0.13857109526572011689554707,
                                  9.984369578019570859563e-6,         1.50563273514931155834e-7};

static bool impl_lgamma(jx_array *const *in, jx_array **out, int param) {
  jx_array *x = in[0];
  jx_array *reflect = ltc(x, 0.5);
  jx_array *z = sel(reflect, neg(x), addc(x, -1));
  jx_array *sum = C(x, special_lanczos_base);
  for (int i = 0; i < 8; i++) sum = add(sum, dv(C(x, special_lanczos[i]), addc(z, i + 1)));
  double gh = special_lanczos_g + 0.5;
  jx_array *t = addc(z, gh);
  jx_array *log_t = addc(log1p_(mulc(z, 1 / gh)), log(gh));
  /* log y = log sqrt(2 pi) + (z + 1/2 - t / log t) log t + log sum */
  jx_array *log_y = add(addc(mul(sub(addc(z, 0.5), dv(t, log_t)), log_t), 0.91893853320467274178), log_(sum));
  /* reflection: log(pi) - log|sin(pi x)| - log y, on the fractional part of |x| folded
   * into [0, 1/2] (sin(pi x) is exact there) */
  jx_array *ax = fabs_(x), *frac = sub(ax, floor_(ax));
  jx_array *reduced = sel(gtc(frac, 0.5), sub(C(x, 1), frac), frac);
  jx_array *denom = log_(prim_unary(PRIM_sin, mulc(reduced, M_PI)));
  jx_array *reflection = sel(isfinite_(denom), sub(sub(C(x, log(M_PI)), denom), log_y), neg(denom));
  jx_array *r = sel(reflect, reflection, log_y);
  out[0] = selc(isinf_(x), INFINITY, r); /* lgamma(+-inf) = +inf */
  return out[0] != NULL;
}

static bool impl_digamma(jx_array *const *in, jx_array **out, int param) {
  jx_array *x = in[0];
  jx_array *reflect = ltc(x, 0.5);
  jx_array *z = sel(reflect, neg(x), addc(x, -1));
  jx_array *num = C(x, 0), *den = C(x, special_lanczos_base);
  for (int i = 0; i < 8; i++) {
    jx_array *zi = addc(z, i + 1);
    num = sub(num, dv(C(x, special_lanczos[i]), mul(zi, zi)));
    den = add(den, dv(C(x, special_lanczos[i]), zi));
  }
  double gh = special_lanczos_g + 0.5;
  jx_array *t = addc(z, gh);
  jx_array *log_t = addc(log1p_(mulc(z, 1 / gh)), log(gh));
  jx_array *y = sub(add(log_t, dv(num, den)), dv(C(x, special_lanczos_g), t));
  /* reflection: psi(1 - x) - pi / tan(pi x), with x shifted by an integer to keep the
   * argument of sin/cos small */
  jx_array *reduced = add(x, fabs_(floor_(addc(x, 0.5))));
  jx_array *px = mulc(reduced, M_PI);
  jx_array *reflection = sub(y, dv(mulc(prim_unary(PRIM_cos, px), M_PI), prim_unary(PRIM_sin, px)));
  jx_array *r = sel(reflect, reflection, y);
  /* poles at 0 and the negative integers */
  out[0] = selc(and_(lec(x, 0), eq(x, floor_(x))), NAN, r);
  return out[0] != NULL;
}

static jx_status jvp_lgamma(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                            jx_array **ty) {
  ty[0] = tmul(t[0], special_digamma(x[0]));
  return JX_OK;
}
static jx_status jvp_digamma(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                             jx_array **ty) {
  ty[0] = tmul(t[0], special_polygamma(C(x[0], 1), x[0]));
  return JX_OK;
}
static const SpecialRule LGAMMA = {"lgamma", jvp_lgamma};
static const SpecialRule DIGAMMA = {"digamma", jvp_digamma};

jx_array *special_lgamma(jx_array *x) { return call1(&LGAMMA, x, impl_lgamma); }

jx_array *special_digamma(jx_array *x) { return call1(&DIGAMMA, x, impl_digamma); }

/* ---------------------------------------------------------------- zeta */
/* Hurwitz zeta by Euler-Maclaurin summation as Cephes' zeta.c and XLA's Zeta: ten terms
 * of the series, then the integral and twelve Bernoulli corrections (Horner's rule over
 * (2k)!/B2k), with XLA's domain: NaN for x < 1, and for q <= 0 unless x is an integer;
 * at the poles (integer q <= 0) +inf for even integer x, else NaN; x == 1 gives +inf. */
static const double ZETA_A[12] = {12.0,
                                  -720.0,
                                  30240.0,
                                  -1209600.0,
                                  47900160.0,
                                  -1.8924375803183791606e9,
                                  7.47242496e10,
                                  -2.950130727918164224e12,
                                  1.1646782814350067249e14,
                                  -4.5979787224074726105e15,
                                  1.8152105401943546773e17,
                                  -7.1661652561756670113e18};

static bool impl_zeta(jx_array *const *in, jx_array **out, int param) {
  jx_array *x = in[0], *q = in[1];
  jx_array *mx = neg(x);
  jx_array *a = q, *sum = prim_binary(PRIM_pow, q, mx);
  for (int i = 0; i < 9; i++) {
    a = addc(a, 1);
    sum = add(sum, prim_binary(PRIM_pow, a, mx));
  }
  a = addc(a, 1);
  jx_array *b = prim_binary(PRIM_pow, a, mx); /* a^-x */
  jx_array *s = add(sum, dv(mul(b, a), addc(x, -1)));
  jx_array *inv_a2 = dv(C(a, 1), mul(a, a));
  /* sum_j x (x+1) ... (x+2j) a^(-2j-1) / A[j] = x / a (1/A0 + (x+1)(x+2)/a^2 (1/A1 + ...)) */
  jx_array *h = C(x, 0);
  for (int j = 11; j >= 1; j--) {
    jx_array *f = mul(addc(x, 2 * j - 1), addc(x, 2 * j));
    h = mul(mul(f, inv_a2), addc(h, 1 / ZETA_A[j]));
  }
  jx_array *corr = mul(dv(x, a), addc(h, 1 / ZETA_A[0]));
  s = add(s, mul(b, addc(corr, 0.5)));
  /* converged before the tail: the partial sum alone */
  s = sel(lt(fabs_(b), mulc(fabs_(sum), eps_of(x))), sum, s);
  s = selc(ltc(x, 1), NAN, s);
  jx_array *x_int = eq(x, floor_(x));
  s = selc(and_(lec(q, 0), not_(x_int)), NAN, s);
  jx_array *at_pole = and_(lec(q, 0), eq(q, floor_(q)));
  jx_array *x_even = and_(x_int, eqc(prim_binary(PRIM_rem, x, C(x, 2)), 0));
  s = sel(at_pole, sel(x_even, C(x, INFINITY), C(x, NAN)), s);
  out[0] = selc(eqc(x, 1), INFINITY, s);
  return out[0] != NULL;
}

/* JAX differentiates zeta through a series expansion (Johansson 2015, formula (5);
 * jax/_src/scipy/special.py _zeta_series_expansion): N = M = 8 terms for float32, 16 for
 * float64. */
static const double BERNOULLI_COEFS[12] = {12,
                                           -720,
                                           30240,
                                           -1209600,
                                           47900160,
                                           -1307674368000.0 / 691,
                                           74724249600,
                                           -10670622842880000.0 / 3617,
                                           5109094217170944000.0 / 43867,
                                           -802857662698291200000.0 / 174611,
                                           14101100039391805440000.0 / 77683,
                                           -1693824136731743669452800000.0 / 236364091};

static jx_status zeta_series(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *s = in[0], *a = in[1];
  int n = is64(a) ? 16 : 8, m = n;
  if (m > 12) m = 12; /* the coefficient table's length (M <= len in JAX) */
  jx_array *S = C(a, 0);
  for (int k = 0; k < n; k++) S = add(S, prim_binary(PRIM_pow, addc(a, k), neg(s)));
  jx_array *aN = addc(a, n);
  jx_array *I = dv(prim_binary(PRIM_pow, aN, sub(C(s, 1), s)), addc(s, -1));
  jx_array *T0 = prim_binary(PRIM_pow, aN, neg(s));
  /* T1_j = prod_{i <= 2j} (s + i) / (a + N), clipped to the dtype's max, over coefs */
  jx_array *prod = NULL, *T1 = C(a, 0);
  for (int i = 0; i < 2 * m; i++) {
    jx_array *r = dv(addc(s, i), aN);
    prod = prod ? mul(prod, r) : r;
    if (i % 2 == 0) {
      jx_array *clipped = prim_binary(PRIM_min, prod, C(prod, max_of(a)));
      T1 = add(T1, mulc(clipped, 1 / BERNOULLI_COEFS[i / 2]));
    }
  }
  jx_array *T = mul(T0, addc(T1, 0.5));
  out[0] = add(add(S, I), T);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status jvp_zeta(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                          jx_array **ty) {
  jx_fn *f = jx_fn_new("zeta_series", 2, 1, zeta_series, NULL);
  jx_array *tz[2] = {t[0] ? t[0] : C(x[0], 0), t[1] ? t[1] : C(x[1], 0)}, *p = NULL;
  jx_status s = f ? jx_jvp(f, x, tz, &p, ty) : jx_last_status();
  jx_fn_free(f);
  jx_free(p);
  return s;
}
static const SpecialRule ZETA = {"zeta", jvp_zeta};
jx_array *special_zeta(jx_array *x, jx_array *q) { return call2(&ZETA, x, q, impl_zeta, 0); }

/* ----------------------------------------------------------- polygamma */
/* chlo.polygamma's decomposition: digamma for n == 0, else (-1)^(n+1) n! zeta(n+1, x);
 * NaN unless n is a non-negative integer. */
static bool impl_polygamma(jx_array *const *in, jx_array **out, int param) {
  jx_array *n = in[0], *x = in[1];
  jx_array *np1 = addc(n, 1);
  jx_array *sign = addc(mulc(prim_binary(PRIM_rem, n, C(n, 2)), 2), -1);
  jx_array *r = mul(mul(sign, exp_(special_lgamma(np1))), special_zeta(np1, x));
  r = sel(eqc(n, 0), special_digamma(x), r);
  out[0] = selc(or_(ne(n, floor_(n)), ltc(n, 0)), NAN, r);
  return out[0] != NULL;
}
static jx_status jvp_polygamma(int nin, jx_array *const *x, jx_array *const *t, int nout,
                               jx_array *const *y, jx_array **ty) {
  if (t[0]) {
    error_set(JX_ERR_VALUE, "jx_special_polygamma: gradient with respect to n is not supported");
    return JX_ERR_VALUE;
  }
  ty[0] = tmul(t[1], special_polygamma(addc(x[0], 1), x[1]));
  return JX_OK;
}
static const SpecialRule POLYGAMMA = {"polygamma", jvp_polygamma};
jx_array *special_polygamma(jx_array *n, jx_array *x) { return call2(&POLYGAMMA, n, x, impl_polygamma, 0); }

/* ---------------------------------------------------------- igamma */
/* jax/_src/lax/special.py (ported there from XLA's math.cc): the regularized lower
 * incomplete gamma P(a, x) by its power series where x < 1 or x <= a, else 1 - Q by
 * Legendre's continued fraction; modes VALUE, DERIVATIVE (dP/da) and SAMPLE_DERIVATIVE
 * (the implicit derivative of a gamma sample). JAX runs each as a while loop until the
 * term is below eps (at most 2000 steps), freezing converged lanes; here both are
 * unrolled IGAMMA_ITERS times for every lane and both selected from at the end (so jit
 * fuses them into one kernel). Past convergence further steps change a lane by less
 * than an ulp (series terms keep shrinking, convergents keep converging), so results
 * agree with JAX's to a few ulps while a lane converges within the unrolled steps
 * (a <~ 100 in float32, <~ 300 in float64); beyond, they lose accuracy. */
enum { VALUE, DERIVATIVE, SAMPLE_DERIVATIVE };
#define IGAMMA_ITERS_F32 64
#define IGAMMA_ITERS_F64 128

static jx_array *igamma_series(jx_array *ax, jx_array *x, jx_array *a, int mode) {
  jx_array *r = a, *c = C(a, 1), *ans = C(a, 1), *dc_da = C(a, 0), *dans_da = C(a, 0);
  int iters = is64(a) ? IGAMMA_ITERS_F64 : IGAMMA_ITERS_F32;
  for (int k = 0; k < iters && ans; k++) {
    r = addc(r, 1);
    jx_array *x_r = dv(x, r);
    if (mode != VALUE) {
      dc_da = sub(mul(dc_da, x_r), dv(mul(c, x), mul(r, r)));
      dans_da = add(dans_da, dc_da);
    }
    c = mul(c, x_r);
    ans = add(ans, c);
  }
  if (mode == VALUE) return dv(mul(ans, ax), a);
  jx_array *dlogax_da = sub(log_(x), special_digamma(addc(a, 1)));
  jx_array *inner = add(mul(ans, dlogax_da), dans_da);
  if (mode == DERIVATIVE) return dv(mul(ax, inner), a);
  return dv(mul(neg(inner), x), a);
}

static jx_array *igammac_cf(jx_array *ax, jx_array *x, jx_array *a, int mode) {
  double eps = eps_of(a);
  jx_array *y = sub(C(a, 1), a), *z = addc(add(x, y), 1), *c = C(x, 0);
  jx_array *pkm2 = C(x, 1), *qkm2 = x, *pkm1 = addc(x, 1), *qkm1 = mul(z, x);
  jx_array *ans = dv(pkm1, qkm1);
  jx_array *dpkm2 = C(x, 0), *dqkm2 = C(x, 0), *dpkm1 = C(x, 0), *dqkm1 = neg(x);
  jx_array *dans_da = dv(sub(dpkm1, mul(ans, dqkm1)), qkm1);
  int iters = is64(a) ? IGAMMA_ITERS_F64 : IGAMMA_ITERS_F32;
  for (int k = 0; k < iters && ans; k++) {
    c = addc(c, 1), y = addc(y, 1), z = addc(z, 2);
    jx_array *yc = mul(y, c);
    jx_array *pk = sub(mul(pkm1, z), mul(pkm2, yc));
    jx_array *qk = sub(mul(qkm1, z), mul(qkm2, yc));
    jx_array *nz = ne(qk, C(qk, 0));
    ans = sel(nz, dv(pk, qk), ans);
    jx_array *dpk = NULL, *dqk = NULL;
    if (mode != VALUE) {
      dpk = add(sub(sub(mul(dpkm1, z), pkm1), mul(dpkm2, yc)), mul(pkm2, c));
      dqk = add(sub(sub(mul(dqkm1, z), qkm1), mul(dqkm2, yc)), mul(qkm2, c));
      dans_da = sel(nz, dv(sub(dpk, mul(ans, dqk)), qk), dans_da);
    }
    /* shift, rescaling every p, q (and derivative) by eps once |pk| > 1/eps */
    jx_array *rescale = gt(fabs_(pk), C(pk, 1 / eps));
#define RESCALE(v) sel(rescale, mulc(v, eps), v)
    pkm2 = RESCALE(pkm1), pkm1 = RESCALE(pk), qkm2 = RESCALE(qkm1), qkm1 = RESCALE(qk);
    if (mode != VALUE) dpkm2 = RESCALE(dpkm1), dqkm2 = RESCALE(dqkm1), dpkm1 = RESCALE(dpk), dqkm1 = RESCALE(dqk);
#undef RESCALE
  }
  if (mode == VALUE) return mul(ans, ax);
  jx_array *dlogax_da = sub(log_(x), special_digamma(a));
  jx_array *inner = add(mul(ans, dlogax_da), dans_da);
  if (mode == DERIVATIVE) return mul(ax, inner);
  return neg(mul(inner, x));
}

/* exp(a log x - x - lgamma(a)) and whether it underflows (JAX's `ax`, `underflow`) */
static jx_array *igamma_ax(jx_array *a, jx_array *x, jx_array **underflow) {
  jx_array *lax_ = sub(sub(mul(a, log_(x)), x), special_lgamma(a));
  *underflow = lt(lax_, C(lax_, -log(max_of(a))));
  return exp_(lax_);
}

static bool impl_igamma(jx_array *const *in, jx_array **out, int param) {
  jx_array *a = in[0], *x = in[1], *underflow = NULL;
  jx_array *is_nan = or_(isnan_(a), isnan_(x));
  jx_array *x_inf = eqc(x, INFINITY), *a_zero = eqc(a, 0), *x_zero = eqc(x, 0);
  jx_array *domain = or_(or_(ltc(x, 0), ltc(a, 0)), or_(and_(a_zero, x_zero), is_nan));
  jx_array *use_cf = and_(not_(ltc(x, 1)), gt(x, a));
  jx_array *ax = igamma_ax(a, x, &underflow);
  jx_array *cf = igammac_cf(ax, x, a, VALUE);
  jx_array *series = igamma_series(ax, x, a, VALUE);
  jx_array *r = sel(use_cf, sub(C(a, 1), cf), series);
  /* where ax underflows JAX leaves the loops disabled: 1 - 0 * (the fraction's first
   * term) or 0 * (the series' first term), not the iterations' inf / inf * 0 = NaN
   * (gammainc(1, 1e8) in float32) */
  r = sel(underflow, selc(use_cf, 1, C(a, 0)), r);
  r = selc(x_zero, 0, r);
  r = selc(x_inf, 1, r);
  out[0] = selc(domain, NAN, r);
  return out[0] != NULL;
}

static bool impl_igammac(jx_array *const *in, jx_array **out, int param) {
  jx_array *a = in[0], *x = in[1], *underflow = NULL;
  jx_array *is_nan = or_(isnan_(a), isnan_(x));
  jx_array *x_inf = eqc(x, INFINITY), *a_zero = eqc(a, 0), *x_zero = eqc(x, 0);
  jx_array *domain = or_(or_(ltc(x, 0), ltc(a, 0)), or_(and_(a_zero, x_zero), is_nan));
  jx_array *use_series = or_(ltc(x, 1), lt(x, a));
  jx_array *ax = igamma_ax(a, x, &underflow);
  jx_array *series = igamma_series(ax, x, a, VALUE);
  jx_array *cf = igammac_cf(ax, x, a, VALUE);
  jx_array *r = sel(use_series, sub(C(a, 1), series), cf);
  r = sel(underflow, selc(use_series, 1, C(a, 0)), r); /* the loops disabled, as impl_igamma */
  r = selc(or_(x_inf, a_zero), 0, r);
  out[0] = selc(domain, NAN, r);
  return out[0] != NULL;
}

/* igamma_grad_a (mode DERIVATIVE) and random_gamma_grad (SAMPLE_DERIVATIVE) */
static bool impl_igamma_deriv(jx_array *const *in, jx_array **out, int mode) {
  jx_array *a = in[0], *x = in[1], *underflow = NULL;
  jx_array *is_nan = or_(isnan_(a), isnan_(x));
  jx_array *x_zero = eqc(x, 0);
  jx_array *domain = or_(ltc(x, 0), lec(a, 0));
  jx_array *use_cf = and_(gtc(x, 1), gt(x, a));
  jx_array *ax = igamma_ax(a, x, &underflow);
  jx_array *cf = igammac_cf(ax, x, a, mode);
  jx_array *series = igamma_series(ax, x, a, mode);
  jx_array *r = sel(use_cf, neg(cf), series);
  r = selc(x_zero, 0, r);
  out[0] = selc(or_(domain, is_nan), NAN, r);
  return out[0] != NULL;
}

/* d/dx P(a, x) = exp(-x + (a - 1) log x - lgamma(a)) (JAX's igamma_gradx) */
static jx_array *igamma_gradx(jx_array *a, jx_array *x) {
  return exp_(sub(add(neg(x), mul(addc(a, -1), log_(x))), special_lgamma(a)));
}
static jx_status jvp_igamma(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                            jx_array **ty) {
  jx_array *da = t[0] ? tmul(t[0], special_igamma_grad_a(x[0], x[1])) : NULL;
  jx_array *dx = t[1] ? tmul(t[1], igamma_gradx(x[0], x[1])) : NULL;
  ty[0] = tadd(da, dx);
  return JX_OK;
}
static jx_status jvp_igammac(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                             jx_array **ty) {
  jx_status s = jvp_igamma(nin, x, t, nout, y, ty);
  if (ty[0]) ty[0] = neg(ty[0]);
  return s;
}
static jx_status jvp_igamma_grad_a(int nin, jx_array *const *x, jx_array *const *t, int nout,
                                   jx_array *const *y, jx_array **ty) {
  return no_rule("igamma_grad_a");
}
static jx_status jvp_random_gamma_grad(int nin, jx_array *const *x, jx_array *const *t, int nout,
                                       jx_array *const *y, jx_array **ty) {
  return no_rule("random_gamma_grad");
}
static const SpecialRule IGAMMA = {"igamma", jvp_igamma};
static const SpecialRule IGAMMAC = {"igammac", jvp_igammac};
static const SpecialRule IGAMMA_GRAD_A = {"igamma_grad_a", jvp_igamma_grad_a};
static const SpecialRule RANDOM_GAMMA_GRAD = {"random_gamma_grad", jvp_random_gamma_grad};

jx_array *special_igamma(jx_array *a, jx_array *x) { return call2(&IGAMMA, a, x, impl_igamma, 0); }
jx_array *special_igammac(jx_array *a, jx_array *x) { return call2(&IGAMMAC, a, x, impl_igammac, 0); }
jx_array *special_igamma_grad_a(jx_array *a, jx_array *x) {
  return call2(&IGAMMA_GRAD_A, a, x, impl_igamma_deriv, DERIVATIVE);
}
jx_array *special_random_gamma_grad(jx_array *a, jx_array *x) {
  return call2(&RANDOM_GAMMA_GRAD, a, x, impl_igamma_deriv, SAMPLE_DERIVATIVE);
}

/* ------------------------------------------------------ bessel_i0e, i1e */
/* Cephes' i0e.c / i1e.c (as JAX's _i0e_impl32/64 and XLA's BesselI1e): Chebyshev
 * expansions of exp(-x) I(x) on [0, 8] in x/2 - 2, and of exp(-x) sqrt(x) I(x) beyond
 * in 32/x - 2; float32 uses the last 18/7 (i0e) and 17/7 (i1e) coefficients. */
static const double I0E_A[30] = {
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12,  -1.72682629144155570723E-11,
    9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8,  6.04699502254191894932E-8,   -2.67079385394061173391E-7,
    1.11738753912010371815E-6,   -4.41673835845875056359E-6,  1.64484480707288970893E-5,
    -5.75419501008210370398E-5,  1.88502885095841655729E-4,   -5.76375574538582365885E-4,
    1.63947561694133579842E-3,   -4.32430999505057594430E-3,  1.05464603945949983183E-2,
    -2.37374148058994688156E-2,  4.93052842396707084878E-2,   -9.49010970480476444210E-2,
    1.71620901522208775349E-1,   -3.04682672343198398683E-1,  6.76795274409476084995E-1};
static const double I0E_B[25] = {
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
    7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
    3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
    2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
    8.04490411014108831608E-1};
static const double I1E_A[29] = {
    2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
    3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
    9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
    -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
    4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
    -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
    2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
    -1.76416518357834055153E-1,  2.52587186443633654823E-1};
static const double I1E_B[25] = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
    3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};

/* Clenshaw's recurrence for a Chebyshev series (Cephes' chbevl) over the last n
 * coefficients of c[0 .. len) */
static jx_array *chbevl(jx_array *y, const double *c, int len, int n) {
  jx_array *b0 = C(y, 0), *b1 = C(y, 0), *b2 = C(y, 0);
  for (int i = len - n; i < len; i++) {
    b2 = b1, b1 = b0;
    b0 = addc(sub(mul(y, b1), b2), c[i]);
  }
  return mulc(sub(b0, b2), 0.5);
}

static bool impl_i0e(jx_array *const *in, jx_array **out, int param) {
  jx_array *x = fabs_(in[0]);
  bool d = is64(x);
  jx_array *small = chbevl(addc(mulc(x, 0.5), -2), I0E_A, 30, d ? 30 : 18);
  jx_array *large = dv(chbevl(addc(dv(C(x, 32), x), -2), I0E_B, 25, d ? 25 : 7), sqrt_(x));
  out[0] = sel(lec(x, 8), small, large);
  return out[0] != NULL;
}
static bool impl_i1e(jx_array *const *in, jx_array **out, int param) {
  jx_array *x = in[0], *z = fabs_(x);
  bool d = is64(x);
  jx_array *small = mul(chbevl(addc(mulc(z, 0.5), -2), I1E_A, 29, d ? 29 : 17), z);
  jx_array *large = dv(chbevl(addc(dv(C(z, 32), z), -2), I1E_B, 25, d ? 25 : 7), sqrt_(z));
  jx_array *r = sel(lec(z, 8), small, large);
  out[0] = sel(ltc(x, 0), neg(r), r);
  return out[0] != NULL;
}
static jx_status jvp_i0e(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                         jx_array **ty) {
  /* g (i1e(x) - sign(x) i0e(x)) */
  ty[0] = tmul(t[0], sub(special_i1e(x[0]), mul(prim_unary(PRIM_sign, x[0]), y[0])));
  return JX_OK;
}
static jx_status jvp_i1e(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                         jx_array **ty) {
  /* i0e(x) - y (sign(x) + 1/x), 1/2 at |x| <= eps (JAX's _bessel_i1e_jvp) */
  jx_array *xx = x[0], *not_tiny = gt(fabs_(xx), C(xx, eps_of(xx)));
  jx_array *safe = sel(not_tiny, xx, C(xx, eps_of(xx)));
  jx_array *d = sub(special_i0e(safe), mul(y[0], add(prim_unary(PRIM_sign, safe), dv(C(safe, 1), safe))));
  ty[0] = tmul(t[0], sel(not_tiny, d, C(xx, 0.5)));
  return JX_OK;
}
static const SpecialRule I0E = {"bessel_i0e", jvp_i0e};
static const SpecialRule I1E = {"bessel_i1e", jvp_i1e};
jx_array *special_i0e(jx_array *x) { return call1(&I0E, x, impl_i0e); }
jx_array *special_i1e(jx_array *x) { return call1(&I1E, x, impl_i1e); }

/* ------------------------------------------------------------ erf_inv */
jx_array *random_erf_inv(jx_array *x, bool exact); /* lib/random.h (whose inline helpers
                                                      would clash with this file's) */
/* lax.erf_inv: XLA's expansion (random.c's erf_inv), with JAX's JVP
 * sqrt(pi) / 2 exp(erf_inv(x)^2) t. */
static bool impl_erf_inv(jx_array *const *in, jx_array **out, int param) {
  out[0] = random_erf_inv(in[0], false);
  return out[0] != NULL;
}
static jx_status jvp_erf_inv(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                             jx_array **ty) {
  ty[0] = tmul(t[0], mulc(exp_(mul(y[0], y[0])), sqrt(M_PI) / 2));
  return JX_OK;
}
static const SpecialRule ERF_INV = {"erf_inv", jvp_erf_inv};
jx_array *special_erf_inv(jx_array *x) {
  jx_array *r = NULL;
  special_custom_call(&ERF_INV, 1, &x, 1, &r, impl_erf_inv, 0);
  return r;
}

/* ---------------------------------------------------------- betainc */
/* lax.betainc, the regularized incomplete beta function I_x(a, b), as JAX computes it
 * (jax/_src/lax/special.py regularized_incomplete_beta_impl, ported there from XLA's
 * math.cc): the continued fraction of DLMF 8.17.22 (partial numerators 8.17.23)
 * evaluated by the modified Lentz-Thompson-Barnett algorithm, on (b, a, 1 - x) when x >=
 * (a + 1) / (a + b + 2) (8.17.4), scaled by x^a (1 - x)^b / (a B(a, b)). As JAX's, the
 * fraction is one while loop over the whole array that stops when every lane's step
 * ratio is within eps / 2 of 1, at most 200 steps in float32 and 600 in float64. */
enum { BETAINC_IT, BETAINC_UNCONVERGED, BETAINC_C, BETAINC_D, BETAINC_H, BETAINC_A, BETAINC_B, BETAINC_X,
       BETAINC_NCARRY };

static jx_status betainc_cond(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *it = in[BETAINC_IT];
  out[0] = and_(lt(it, C(it, is64(in[BETAINC_X]) ? 600 : 200)), in[BETAINC_UNCONVERGED]);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status betainc_body(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *it = in[BETAINC_IT], *a = in[BETAINC_A], *b = in[BETAINC_B], *x = in[BETAINC_X];
  /* the partial numerator of step `it` (>= 1): 1 at step 1, then DLMF 8.17.23's d_{2m+1}
   * (even steps, -(a+b) x / (a+1) for m == 0) and d_{2m} (odd steps), m = (it - 1) // 2 */
  jx_array *itb = prim_broadcast_in_dim(it, x->ndim, x->shape, NULL);
  jx_array *m_int = dv(addc(itb, -1), C(itb, 2)); /* it >= 1: truncation is floor */
  jx_array *m = prim_convert(m_int, x->dtype, false);
  jx_array *a2m = add(a, mulc(m, 2)), *one = C(a, 1);
  jx_array *zero_num = dv(mul(neg(add(a, b)), x), add(a, one));
  jx_array *even_num = sel(eqc(m_int, 0), zero_num,
                           dv(mul(mul(neg(add(a, m)), add(add(a, b), m)), x), mul(a2m, add(a2m, one))));
  jx_array *odd_num = dv(mul(mul(m, sub(b, m)), x), mul(sub(a2m, one), a2m));
  jx_array *num = sel(eqc(itb, 1), C(x, 1),
                      sel(eqc(prim_binary(PRIM_rem, itb, C(itb, 2)), 0), even_num, odd_num));
  jx_array *den = C(x, 1); /* the partial denominators: 1 after step 0 */
  double small = eps_of(x) / 2;
  jx_array *c = add(den, dv(num, in[BETAINC_C]));
  c = sel(ltc(fabs_(c), small), C(c, small), c);
  jx_array *d = add(den, mul(num, in[BETAINC_D]));
  d = sel(ltc(fabs_(d), small), C(d, small), d);
  d = dv(C(d, 1), d);
  jx_array *delta = mul(c, d);
  out[BETAINC_IT] = addc(it, 1);
  out[BETAINC_C] = c, out[BETAINC_D] = d, out[BETAINC_H] = mul(in[BETAINC_H], delta);
  bool all[JX_MAX_NDIM];
  for (int i = 0; i < JX_MAX_NDIM; i++) all[i] = true;
  jx_array *dist = fabs_(addc(delta, -1)), *tol = C(delta, small);
  jx_array *far = or_(lt(tol, dist), eq(dist, tol)); /* dist >= tol (a NaN lane has converged) */
  out[BETAINC_UNCONVERGED] = far && far->ndim ? prim_reduce(PRIM_reduce_or, far, all) : far;
  for (int i = BETAINC_A; i < BETAINC_NCARRY; i++) out[i] = jx_ref(in[i]);
  for (int i = 0; i < BETAINC_NCARRY; i++)
    if (!out[i]) return jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_INTERNAL;
  return JX_OK;
}

static bool impl_betainc(jx_array *const *in, jx_array **out, int param) {
  jx_array *a = in[0], *b = in[1], *x = in[2];
  bool f64 = is64(x);
  jx_array *a_zero = or_(eqc(a, 0), eqc(b, INFINITY)), *b_zero = or_(eqc(b, 0), eqc(a, INFINITY));
  jx_array *x_zero = eqc(x, 0), *x_one = eqc(x, 1);
  jx_array *is_nan = or_(or_(isnan_(a), isnan_(b)), isnan_(x));
  jx_array *is_zero = or_(and_(b_zero, not_(x_one)), and_(a_zero, x_zero));
  jx_array *is_one = or_(and_(a_zero, not_(x_zero)), and_(b_zero, x_one));
  jx_array *domain = or_(or_(or_(ltc(a, 0), ltc(b, 0)), ltc(x, 0)), gtc(x, 1));
  domain = or_(domain, or_(and_(a_zero, b_zero), is_nan));
  jx_array *rapid = lt(x, dv(addc(a, 1), addc(add(a, b), 2)));
  jx_array *a1 = sel(rapid, a, b), *b1 = sel(rapid, b, a), *x1 = sel(rapid, x, sub(C(x, 1), x));
  double small = eps_of(x) / 2;
  jx_array *h0 = C(x1, small); /* step 0's partial denominator is 0: h = small */
  jx_array *init[BETAINC_NCARRY] = {jx_scalar_of(1, JX_INT32), jx_scalar_of(1, JX_BOOL), h0, C(x1, 0), h0,
                                    a1, b1, x1};
  jx_array *carry[BETAINC_NCARRY] = {NULL};
  jx_fn *cf = jx_fn_new("betainc_cond", BETAINC_NCARRY, 1, betainc_cond, NULL);
  jx_fn *bf = jx_fn_new("betainc_body", BETAINC_NCARRY, BETAINC_NCARRY, betainc_body, NULL);
  jx_status s = cf && bf ? jx_lax_while_loop(cf, bf, BETAINC_NCARRY, init, carry) : jx_last_status();
  jx_fn_free(cf), jx_fn_free(bf);
  if (s != JX_OK) return false;
  jx_array *fraction = carry[BETAINC_H];
  for (int i = 0; i < BETAINC_NCARRY; i++)
    if (i != BETAINC_H) jx_free(carry[i]);
  /* a B(a, b) -> Gamma(b) / Gamma(a + b) as a -> 0 (a Gamma(a) = Gamma(a + 1) -> 1) */
  jx_array *lbeta_small_a = sub(special_lgamma(b1), special_lgamma(add(a1, b1)));
  jx_array *lbeta = add(special_lgamma(a1), lbeta_small_a);
  jx_array *log1m = log1p_(neg(x1));
  jx_array *factor = sel(ltc(a1, f64 ? 2 * 2.2250738585072014e-308 : 2 * 1.1754943508222875e-38),
                         exp_(sub(mul(log1m, b1), lbeta_small_a)),
                         dv(exp_(sub(add(mul(log_(x1), a1), mul(log1m, b1)), lbeta)), a1));
  jx_array *r = mul(fraction, factor);
  r = sel(rapid, r, sub(C(r, 1), r));
  r = selc(is_zero, 0, r);
  r = selc(is_one, 1, r);
  out[0] = selc(domain, NAN, r);
  return out[0] != NULL;
}

/* JAX's JVP: t_x x^(a-1) (1 - x)^(b-1) / B(a, b); none in a or b (JAX's ValueError). */
static jx_status jvp_betainc(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                             jx_array **ty) {
  if (t[0] || t[1]) {
    error_set(JX_ERR_VALUE, "jx_special_betainc: gradient with respect to a and b is not supported (as in JAX)");
    return JX_ERR_VALUE;
  }
  jx_array *a = x[0], *b = x[1], *xx = x[2];
  jx_array *lbeta = sub(add(special_lgamma(a), special_lgamma(b)), special_lgamma(add(a, b)));
  jx_array *dx = exp_(sub(add(mul(addc(b, -1), log1p_(neg(xx))), mul(addc(a, -1), log_(xx))), lbeta));
  ty[0] = tmul(t[2], dx);
  return ty[0] || !t[2] ? JX_OK : jx_last_status();
}
static const SpecialRule BETAINC = {"regularized_incomplete_beta", jvp_betainc};
jx_array *special_betainc(jx_array *a, jx_array *b, jx_array *x) {
  jx_array *r = NULL, *u[3] = {up(a), up(b), up(x)};
  if (u[0] && u[1] && u[2]) special_custom_call(&BETAINC, 3, u, 1, &r, impl_betainc, 0);
  jx_free(u[0]), jx_free(u[1]), jx_free(u[2]);
  return down(r, a);
}
