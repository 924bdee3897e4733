/* special.c -- jax.scipy.special (jx_special_*): argument promotion as JAX's
 * promote_args_inexact (NumPy broadcasting, bool/int to the default float), float16 and
 * bfloat16 computed in float32 where XLA upcasts, and the functions themselves, composed
 * as jax/_src/scipy/special.py composes them: from lax's special functions
 * (special_prims.c) or from primitives, with JAX's custom JVPs (logit, xlogy, xlog1py,
 * entr's xlogx, log_ndtr) as special_call equations. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"
#include "lib/special.h"
#include "transform/transform.h"

static jx_array *C(jx_array *like, double v) { return like ? tx_full_like(like, v) : NULL; }
static jx_array *add(jx_array *a, jx_array *b) { return prim_binary(PRIM_add, a, b); }
static jx_array *sub(jx_array *a, jx_array *b) { return prim_binary(PRIM_sub, a, b); }
static jx_array *mul(jx_array *a, jx_array *b) { return prim_binary(PRIM_mul, a, b); }
static jx_array *dv(jx_array *a, jx_array *b) { return prim_binary(PRIM_div, a, b); }
static jx_array *addc(jx_array *a, double v) { return add(a, C(a, v)); }
static jx_array *mulc(jx_array *a, double v) { return mul(a, C(a, v)); }
static jx_array *neg(jx_array *a) { return prim_unary(PRIM_neg, a); }
static jx_array *log_(jx_array *a) { return prim_unary(PRIM_log, a); }
static jx_array *lt(jx_array *a, jx_array *b) { return prim_binary(PRIM_lt, a, b); }
static jx_array *ltc(jx_array *a, double v) { return lt(a, C(a, v)); }
static jx_array *gtc(jx_array *a, double v) { return lt(C(a, v), a); }
static jx_array *sel(jx_array *c, jx_array *a, jx_array *b) { return prim_select(c, a, b); }
static jx_array *tmul(jx_array *t, jx_array *k) { return t ? mul(t, k) : NULL; }
static jx_array *tadd(jx_array *a, jx_array *b) { return !a ? b : !b ? a : add(a, b); }
static bool is64(jx_array *a) { return a && a->dtype == JX_FLOAT64; }

/* ---------------------------------------------------------- arguments */

/* promote_args_inexact + broadcast: out[0 .. n) float arrays of one dtype and shape;
 * half floats become float32 when `upcast` (*orig gets the dtype to return). */
static bool args(const char *fn, int n, jx_array *const *in, jx_array **out, bool upcast, jx_dtype *orig) {
  static const char *const names[] = {"first argument", "second argument", "third argument"};
  for (int i = 0; i < n; i++)
    if (np_null_arg(fn, in[i], names[i])) return false;
  jx_array *p[SPECIAL_MAX_ARGS];
  if (!np_prepare(fn, n, in, p)) return false;
  for (int i = 0; i < n; i++) out[i] = np_to_inexact(p[i]);
  for (int i = 0; i < n; i++)
    if (!out[i]) return false;
  *orig = out[0]->dtype;
  if (upcast && (*orig == JX_FLOAT16 || *orig == JX_BFLOAT16))
    for (int i = 0; i < n; i++) out[i] = np_convert(out[i], JX_FLOAT32, out[i]->weak);
  for (int i = 0; i < n; i++)
    if (!out[i]) return false;
  return true;
}

/* Back to the dtype the arguments promoted to. */
static jx_array *finish(jx_array *r, jx_dtype orig) {
  if (r && r->dtype != orig) r = np_convert(r, orig, r->weak);
  return np_scope_return(r);
}

/* ndtr, ndtri and log_ndtr take float32/float64 only (JAX's TypeError). */
static bool f32_or_f64(const char *fn, jx_array *x) {
  if (!x || x->dtype == JX_FLOAT32 || x->dtype == JX_FLOAT64) return true;
  error_set(JX_ERR_DTYPE, "%s: x.dtype=%s is not supported (float32 or float64)", fn, jx_dtype_name(x->dtype));
  return false;
}

typedef jx_array *(*Fn1)(jx_array *);
typedef jx_array *(*Fn2)(jx_array *, jx_array *);

static jx_array *unary(const char *fn, jx_array *x, Fn1 f, bool upcast) {
  jx_scope_begin();
  jx_array *a[1];
  jx_dtype d;
  if (!args(fn, 1, &x, a, upcast, &d)) return np_scope_return(NULL);
  return finish(f(a[0]), d);
}
static jx_array *binary(const char *fn, jx_array *x, jx_array *y, Fn2 f, bool upcast) {
  jx_scope_begin();
  jx_array *a[2];
  jx_dtype d;
  if (!args(fn, 2, (jx_array *[]){x, y}, a, upcast, &d)) return np_scope_return(NULL);
  return finish(f(a[0], a[1]), d);
}

/* ------------------------------------------------- the lax functions */

jx_array *jx_special_gammaln(jx_array *x) { return unary("jx_special_gammaln", x, special_lgamma, true); }
jx_array *jx_special_digamma(jx_array *x) { return unary("jx_special_digamma", x, special_digamma, true); }
jx_array *jx_special_i0e(jx_array *x) { return unary("jx_special_i0e", x, special_i0e, true); }
jx_array *jx_special_i1e(jx_array *x) { return unary("jx_special_i1e", x, special_i1e, true); }
jx_array *jx_special_gammainc(jx_array *a, jx_array *x) {
  return binary("jx_special_gammainc", a, x, special_igamma, true);
}
jx_array *jx_special_gammaincc(jx_array *a, jx_array *x) {
  return binary("jx_special_gammaincc", a, x, special_igammac, true);
}
jx_array *jx_special_betainc(jx_array *a, jx_array *b, jx_array *x) {
  const char *fn = "jx_special_betainc";
  jx_scope_begin();
  jx_array *p[3];
  jx_dtype d;
  if (!args(fn, 3, (jx_array *[]){a, b, x}, p, true, &d)) return np_scope_return(NULL);
  return finish(special_betainc(p[0], p[1], p[2]), d);
}
jx_array *jx_special_zeta(jx_array *x, jx_array *q) {
  if (!q && x) {
    error_set(JX_ERR_UNSUPPORTED, "jx_special_zeta: Riemann zeta function not implemented; pass q != NULL "
              "to compute the Hurwitz zeta function (as JAX)");
    return NULL;
  }
  return binary("jx_special_zeta", x, q, special_zeta, true);
}
jx_array *jx_special_polygamma(jx_array *n, jx_array *x) {
  if (n && !dtype_is_integer(n->dtype)) {
    error_set(JX_ERR_DTYPE, "jx_special_polygamma: argument n must be of integer type, got %s",
              jx_dtype_name(n->dtype));
    return NULL;
  }
  return binary("jx_special_polygamma", n, x, special_polygamma, true);
}

/* ------------------------------------------------------- erf family */

static jx_array *erf_(jx_array *x) { return prim_unary(PRIM_erf, x); }
static jx_array *erfc_(jx_array *x) { return prim_unary(PRIM_erfc, x); }
static jx_array *erfinv_(jx_array *x) { return jx_lax_erf_inv(x); }
jx_array *jx_special_erf(jx_array *x) { return unary("jx_special_erf", x, erf_, false); }
jx_array *jx_special_erfc(jx_array *x) { return unary("jx_special_erfc", x, erfc_, false); }
jx_array *jx_special_erfinv(jx_array *x) { return unary("jx_special_erfinv", x, erfinv_, false); }

/* ndtr (JAX's _ndtr): 0.5 (1 + erf(x / sqrt 2)) near 0, else from erfc of |x| / sqrt 2. */
static jx_array *ndtr_(jx_array *x) {
  double h = 0.5 * sqrt(2.0);
  jx_array *w = mulc(x, h), *z = prim_unary(PRIM_abs, w);
  jx_array *y = sel(ltc(z, h), addc(erf_(w), 1), sel(gtc(w, 0), sub(C(z, 2), erfc_(z)), erfc_(z)));
  return mulc(y, 0.5);
}
jx_array *jx_special_ndtr(jx_array *x) {
  return f32_or_f64("jx_special_ndtr", x) ? unary("jx_special_ndtr", x, ndtr_, false) : NULL;
}

/* Horner's rule over c[0 .. n) (highest power first, as jnp.polyval). */
static jx_array *polyval(const double *c, int n, jx_array *x) {
  jx_array *r = C(x, c[0]);
  for (int i = 1; i < n; i++) r = addc(mul(r, x), c[i]);
  return r;
}

/* ndtri (JAX's _ndtri, from Cephes' ndtri.c): rational approximations in three ranges. */
static const double NDTRI_P0[5] = {-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
                                   1.39312609387279679503E1, -1.23916583867381258016E0};
static const double NDTRI_Q0[9] = {1.0,
                                   1.95448858338141759834E0,
                                   4.67627912898881538453E0,
                                   8.63602421390890590575E1,
                                   -2.25462687854119370527E2,
                                   2.00260212380060660359E2,
                                   -8.20372256168333339912E1,
                                   1.59056225126211695515E1,
                                   -1.18331621121330003142E0};
static const double NDTRI_P1[9] = {4.05544892305962419923E0,   3.15251094599893866154E1,  5.71628192246421288162E1,
                                   4.40805073893200834700E1,   1.46849561928858024014E1,  2.18663306850790267539E0,
                                   -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4};
static const double NDTRI_Q1[9] = {1.0,
                                   1.57799883256466749731E1,
                                   4.53907635128879210584E1,
                                   4.13172038254672030440E1,
                                   1.50425385692907503408E1,
                                   2.50464946208309415979E0,
                                   -1.42182922854787788574E-1,
                                   -3.80806407691578277194E-2,
                                   -9.33259480895457427372E-4};
static const double NDTRI_P2[9] = {3.23774891776946035970E0,  6.91522889068984211695E0,  3.93881025292474443415E0,
                                   1.33303460815807542389E0,  2.01485389549179081538E-1, 1.23716634817820021358E-2,
                                   3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9};
static const double NDTRI_Q2[9] = {1.0,
                                   6.02427039364742014255E0,
                                   3.67983563856160859403E0,
                                   1.37702099489081330271E0,
                                   2.16236993594496635890E-1,
                                   1.34204006088543189037E-2,
                                   3.28014464682127739104E-4,
                                   2.89247864745380683936E-6,
                                   6.79019408009981274425E-9};

static jx_array *ndtri_(jx_array *p) {
  /* constants rounded to p's dtype first, as JAX builds them with dtype(...) */
  double big = -expm1(-2.0), small = exp(-2.0);
  if (!is64(p)) big = (float)big, small = (float)small;
  jx_array *mcp = sel(gtc(p, big), sub(C(p, 1), p), p);
  jx_array *s = sel(prim_binary(PRIM_eq, mcp, C(mcp, 0)), C(mcp, 0.5), mcp);
  jx_array *w = addc(s, -0.5), *ww = mul(w, w);
  jx_array *x_big = add(w, mul(mul(w, ww), dv(polyval(NDTRI_P0, 5, ww), polyval(NDTRI_Q0, 9, ww))));
  x_big = mulc(x_big, -sqrt(2.0 * M_PI));
  jx_array *z = prim_unary(PRIM_sqrt, mulc(log_(s), -2.0));
  jx_array *first = sub(z, dv(log_(z), z));
  jx_array *iz = dv(C(z, 1), z);
  jx_array *second_small = dv(dv(polyval(NDTRI_P2, 9, iz), polyval(NDTRI_Q2, 9, iz)), z);
  jx_array *second_other = dv(dv(polyval(NDTRI_P1, 9, iz), polyval(NDTRI_Q1, 9, iz)), z);
  jx_array *x = sel(gtc(s, small), x_big, sel(ltc(z, 8.0), sub(first, second_other), sub(first, second_small)));
  x = sel(gtc(p, is64(p) ? 1 - exp(-2.0) : (float)(1 - exp(-2.0))), x, neg(x));
  x = sel(prim_binary(PRIM_eq, p, C(p, 0)), C(p, -INFINITY), sel(prim_binary(PRIM_eq, p, C(p, 1)), C(p, INFINITY), x));
  return x;
}
jx_array *jx_special_ndtri(jx_array *p) {
  return f32_or_f64("jx_special_ndtri", p) ? unary("jx_special_ndtri", p, ndtri_, false) : NULL;
}

/* log_ndtr (JAX's custom-JVP log_ndtr): log(ndtr(x)) in the middle, -ndtr(-x) above
 * `upper`, and the asymptotic series of `series_order` terms below `lower`. */
static bool impl_log_ndtr(jx_array *const *in, jx_array **out, int order) {
  jx_array *x = in[0];
  double lower = is64(x) ? -20 : -10, upper = is64(x) ? 8 : 5;
  jx_array *above = gtc(x, upper);
  jx_array *arg = sel(above, neg(x), prim_binary(PRIM_max, x, C(x, lower)));
  jx_array *nd = ndtr_(arg);
  /* _log_ndtr_lower on min(x, lower): log_scale + log(series) */
  jx_array *xl = prim_binary(PRIM_min, x, C(x, lower)), *x2 = mul(xl, xl);
  jx_array *log_scale = sub(sub(mulc(x2, -0.5), log_(neg(xl))), C(xl, 0.5 * log(2 * M_PI)));
  jx_array *series = C(xl, 1);
  if (order > 0) {
    jx_array *even = C(xl, 0), *odd = C(xl, 0), *x2n = x2;
    double dfact = 1; /* (2n - 1)!! */
    for (int n = 1; n <= order; n++) {
      if (n > 1) dfact *= 2 * n - 1;
      jx_array *y = dv(C(xl, dfact), x2n);
      if (n % 2) odd = add(odd, y);
      else even = add(even, y);
      x2n = mul(x2n, x2);
    }
    series = sub(add(C(xl, 1), even), odd);
  }
  jx_array *low = add(log_scale, log_(series));
  out[0] = sel(above, neg(nd), sel(gtc(x, lower), log_(nd), low));
  return out[0] != NULL;
}
static jx_status jvp_log_ndtr(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                              jx_array **ty) {
  /* t exp(norm_logpdf(x) - log_ndtr(x)) */
  jx_array *logpdf = sub(mulc(mul(x[0], x[0]), -0.5), C(x[0], log(sqrt(2 * M_PI))));
  ty[0] = tmul(t[0], prim_unary(PRIM_exp, sub(logpdf, y[0])));
  return JX_OK;
}
static const SpecialRule LOG_NDTR = {"log_ndtr", jvp_log_ndtr};

jx_array *jx_special_log_ndtr(jx_array *x, int series_order) {
  const char *fn = "jx_special_log_ndtr";
  if (series_order < 0 || series_order > 30) {
    error_set(JX_ERR_VALUE, "%s: series_order must be in [0, 30], got %d", fn, series_order);
    return NULL;
  }
  if (!f32_or_f64(fn, x)) return NULL;
  jx_scope_begin();
  jx_array *a[1], *r = NULL;
  jx_dtype d;
  if (!args(fn, 1, &x, a, false, &d)) return np_scope_return(NULL);
  special_custom_call(&LOG_NDTR, 1, a, 1, &r, impl_log_ndtr, series_order);
  return np_scope_return(r);
}

/* ------------------------------------------------ logit, xlogy, entr */

static bool impl_logit(jx_array *const *in, jx_array **out, int param) {
  jx_array *x = in[0];
  out[0] = log_(dv(x, sub(C(x, 1), x)));
  return out[0] != NULL;
}
static jx_status jvp_logit(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                           jx_array **ty) {
  ty[0] = t[0] ? dv(t[0], mul(x[0], sub(C(x[0], 1), x[0]))) : NULL;
  return JX_OK;
}
static const SpecialRule LOGIT = {"logit", jvp_logit};
static jx_array *logit_(jx_array *x) {
  jx_array *r = NULL;
  special_custom_call(&LOGIT, 1, &x, 1, &r, impl_logit, 0);
  return r;
}
jx_array *jx_special_logit(jx_array *x) { return unary("jx_special_logit", x, logit_, false); }
jx_array *jx_special_expit(jx_array *x) { return unary("jx_special_expit", x, jx_nn_sigmoid, false); }

/* where(x != 0 | isnan(y), x * log(y) [log1p], 0) */
static bool impl_xlogy(jx_array *const *in, jx_array **out, int log1p) {
  jx_array *x = in[0], *y = in[1];
  jx_array *ok = prim_binary(PRIM_or, prim_binary(PRIM_ne, x, C(x, 0)), prim_unary(PRIM_is_nan, y));
  out[0] = sel(ok, mul(x, prim_unary(log1p ? PRIM_log1p : PRIM_log, y)), C(x, 0));
  return out[0] != NULL;
}
static jx_status jvp_xlogy(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                           jx_array **ty) {
  ty[0] = tadd(tmul(t[0], log_(x[1])), tmul(t[1], dv(x[0], x[1])));
  return JX_OK;
}
static jx_status jvp_xlog1py(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                             jx_array **ty) {
  ty[0] = tadd(tmul(t[0], prim_unary(PRIM_log1p, x[1])), tmul(t[1], dv(x[0], addc(x[1], 1))));
  return JX_OK;
}
static const SpecialRule XLOGY = {"xlogy", jvp_xlogy};
static const SpecialRule XLOG1PY = {"xlog1py", jvp_xlog1py};
static jx_array *xlogy_(jx_array *x, jx_array *y) {
  jx_array *r = NULL;
  special_custom_call(&XLOGY, 2, (jx_array *[]){x, y}, 1, &r, impl_xlogy, 0);
  return r;
}
static jx_array *xlog1py_(jx_array *x, jx_array *y) {
  jx_array *r = NULL;
  special_custom_call(&XLOG1PY, 2, (jx_array *[]){x, y}, 1, &r, impl_xlogy, 1);
  return r;
}
jx_array *jx_special_xlogy(jx_array *x, jx_array *y) { return binary("jx_special_xlogy", x, y, xlogy_, false); }
jx_array *jx_special_xlog1py(jx_array *x, jx_array *y) {
  return binary("jx_special_xlog1py", x, y, xlog1py_, false);
}

/* entr: -xlogx(x) for x >= 0, -inf below; xlogx has JAX's custom JVP t (log x + 1). */
static bool impl_xlogx(jx_array *const *in, jx_array **out, int param) {
  out[0] = xlogy_(in[0], in[0]);
  return out[0] != NULL;
}
static jx_status jvp_xlogx(int nin, jx_array *const *x, jx_array *const *t, int nout, jx_array *const *y,
                           jx_array **ty) {
  ty[0] = tmul(t[0], addc(log_(x[0]), 1));
  return JX_OK;
}
static const SpecialRule XLOGX = {"_xlogx", jvp_xlogx};
static jx_array *entr_(jx_array *x) {
  jx_array *r = NULL;
  special_custom_call(&XLOGX, 1, &x, 1, &r, impl_xlogx, 0);
  return sel(ltc(x, 0), C(x, -INFINITY), neg(r));
}
jx_array *jx_special_entr(jx_array *x) { return unary("jx_special_entr", x, entr_, false); }

/* ------------------------------------------------------------ betaln */
/* jax/_src/third_party/scipy/betaln.py (from scipy's cdflib betaln.f / algdiv.f):
 * a <= b after sorting; lgamma(a) + lgamma(b) - lgamma(a + b) for b < 8, else
 * lgamma(a) + algdiv(a, b) (a series for log(Gamma(b) / Gamma(a + b))). */
static jx_array *algdiv(jx_array *a, jx_array *b) {
  static const double c[6] = {0.833333333333333e-01,  -0.277777777760991e-02, 0.793650666825390e-03,
                              -0.595202931351870e-03, 0.837308034031215e-03,  -0.165322962780713e-02};
  jx_array *h = dv(a, b);
  jx_array *x = dv(h, addc(h, 1));
  jx_array *d = add(b, addc(a, -0.5));
  jx_array *x2 = mul(x, x);
  jx_array *s3 = addc(add(x, x2), 1);
  jx_array *s5 = addc(add(x, mul(x2, s3)), 1);
  jx_array *s7 = addc(add(x, mul(x2, s5)), 1);
  jx_array *s9 = addc(add(x, mul(x2, s7)), 1);
  jx_array *s11 = addc(add(x, mul(x2, s9)), 1);
  jx_array *ib = dv(C(b, 1), b), *t = mul(ib, ib);
  jx_array *w = add(mulc(mul(s11, t), c[5]), mulc(s9, c[4]));
  w = add(mul(w, t), mulc(s7, c[3]));
  w = add(mul(w, t), mulc(s5, c[2]));
  w = add(mul(w, t), mulc(s3, c[1]));
  w = addc(mul(w, t), c[0]);
  w = mul(w, dv(x, b));
  jx_array *u = mul(d, prim_unary(PRIM_log1p, dv(a, b)));
  jx_array *v = mul(a, addc(log_(b), -1));
  jx_array *u_le_v = prim_binary(PRIM_or, lt(u, v), prim_binary(PRIM_eq, u, v));
  return sel(u_le_v, sub(sub(w, v), u), sub(sub(w, u), v));
}
static jx_array *betaln_(jx_array *a0, jx_array *b0) {
  jx_array *a = prim_binary(PRIM_min, a0, b0), *b = prim_binary(PRIM_max, a0, b0);
  jx_array *lga = special_lgamma(a);
  jx_array *small_b = add(lga, sub(special_lgamma(b), special_lgamma(add(a, b))));
  jx_array *large_b = add(lga, algdiv(a, b));
  return sel(ltc(b, 8), small_b, large_b);
}
jx_array *jx_special_betaln(jx_array *a, jx_array *b) { return binary("jx_special_betaln", a, b, betaln_, false); }

/* ------------------------------------------------ logsumexp, softmax */

jx_array *jx_special_logsumexp(jx_array *a, int naxes, const int *axes, jx_array *b, bool keepdims,
                               jx_array *where, jx_array **sign) {
  const char *fn = "jx_special_logsumexp";
  if (!sign) return jx_nn_logsumexp(a, naxes, axes, b, keepdims, where);
  *sign = NULL;
  if (np_null_arg(fn, a, "a")) return NULL;
  /* return_sign: log|sum(b exp(a))| and sign(sum(b exp(a))) (jax/_src/ops/special.py) */
  jx_scope_begin();
  jx_array *x = np_to_inexact(a);
  if (where) x = jx_where(where, x, jx_scalar_int(0));
  jx_array *bb = NULL;
  if (b) {
    jx_array *p[2];
    if (!np_prepare(fn, 2, (jx_array *[]){x, np_to_inexact(b)}, p)) return np_scope_return(NULL);
    x = p[0], bb = p[1];
    x = jx_where(jx_not_equal(bb, jx_scalar_int(0)), x, jx_scalar(-INFINITY));
  }
  jx_array *masked = where ? jx_where(where, x, jx_scalar(-INFINITY)) : x;
  jx_array *amax = jx_max(masked, naxes, axes, true);
  if (!amax) return np_scope_return(NULL);
  amax = jx_stop_gradient(jx_where(jx_isfinite(amax), amax, jx_scalar_int(0)));
  jx_array *e = jx_exp(jx_subtract(x, amax));
  if (bb) e = jx_multiply(e, bb);
  if (where) e = jx_where(where, e, jx_scalar_int(0));
  jx_array *sumexp = jx_sum(e, naxes, axes, true);
  jx_array *s = jx_sign(sumexp);
  jx_array *out = jx_add(jx_log(jx_abs(sumexp)), amax);
  if (!keepdims && out) {
    int ax[JX_MAX_NDIM], n = 0;
    if (!axes)
      for (int d = 0; d < out->ndim; d++) ax[n++] = d;
    else
      for (int i = 0; i < naxes; i++) ax[n++] = axes[i];
    out = jx_squeeze(out, n, ax);
    s = jx_squeeze(s, n, ax);
  }
  if (!out || !s) return np_scope_return(NULL);
  jx_array *keep[2] = {out, s};
  jx_scope_end(2, keep);
  *sign = s;
  return out;
}

jx_array *jx_special_softmax(jx_array *x, int naxes, const int *axes) {
  return jx_nn_softmax(x, naxes, axes, NULL);
}
