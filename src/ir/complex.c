/* complex.c -- complex values in the kernel IR: which ops are native on complex
 * operands (ADD SUB MUL NEG CMPEQ CMPNE, plus CAST WHERE REAL IMAG COMPLEX and loads),
 * and the expansion of every other complex op into real operations on the parts.
 * The formulas are XLA's (xla/service/elemental_ir_emitter.cc, what JAX runs on the
 * CPU), including its special cases for infinities and NaN -- not C99 Annex G's.
 * The interpreter and the renderers evaluate the same expansion, so they agree. */
#include <math.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include "core/dtype.h"
#include "core/error.h"
#include "ir/alu.h"

bool alu_complex_native(AluOp op) {
  switch (op) {
  case ALU_ADD: case ALU_SUB: case ALU_MUL: case ALU_NEG: case ALU_CMPEQ: case ALU_CMPNE:
    return true;
  default:
    return false;
  }
}

/* ------------------------------------------------------------ real helpers */

typedef struct C {
  const AluExp *re, *im;
} C;

static jx_dtype part_of(const AluExp *x) { return x->dtype; }
static const AluExp *k(const AluExp *like, double v) { return alu_const_float(part_of(like), v); }
static const AluExp *add(const AluExp *a, const AluExp *b) { return alu_binary(ALU_ADD, a, b); }
static const AluExp *sub(const AluExp *a, const AluExp *b) { return alu_binary(ALU_SUB, a, b); }
static const AluExp *mul(const AluExp *a, const AluExp *b) { return alu_binary(ALU_MUL, a, b); }
static const AluExp *dvd(const AluExp *a, const AluExp *b) { return alu_binary(ALU_DIV, a, b); }
static const AluExp *neg(const AluExp *a) { return alu_unary(ALU_NEG, a); }
static const AluExp *fabs_(const AluExp *a) { return alu_unary(ALU_ABS, a); }
static const AluExp *lt(const AluExp *a, const AluExp *b) { return alu_binary(ALU_CMPLT, a, b); }
static const AluExp *eq(const AluExp *a, const AluExp *b) { return alu_binary(ALU_CMPEQ, a, b); }
static const AluExp *and_(const AluExp *a, const AluExp *b) { return alu_binary(ALU_AND, a, b); }
static const AluExp *or_(const AluExp *a, const AluExp *b) { return alu_binary(ALU_OR, a, b); }
static const AluExp *not_(const AluExp *a) { return alu_unary(ALU_NOT, a); }
static const AluExp *isnan_(const AluExp *a) { return alu_unary(ALU_ISNAN, a); }
static const AluExp *isinf_(const AluExp *a) { return alu_unary(ALU_ISINF, a); }
static const AluExp *isfinite_(const AluExp *a) { return not_(or_(isnan_(a), isinf_(a))); }
static const AluExp *sel(const AluExp *c, const AluExp *a, const AluExp *b) {
  return alu_where(c, a, b);
}
/* copysign(x, s): |x| with the sign of s (-0.0 counts as negative; NaN as positive). */
static const AluExp *copysign_(const AluExp *x, const AluExp *s) {
  const AluExp *z = k(s, 0.0);
  const AluExp *negative = or_(lt(s, z), and_(eq(s, z), lt(dvd(k(s, 1.0), s), z)));
  const AluExp *ax = fabs_(x);
  return sel(negative, neg(ax), ax);
}

static C parts(const AluExp *z) { return (C){alu_real(z), alu_imag(z)}; }
static const AluExp *make(C c) { return alu_complex(c.re, c.im); }
static C zsel(const AluExp *c, C a, C b) { return (C){sel(c, a.re, b.re), sel(c, a.im, b.im)}; }

/* ------------------------------------------------------------ formulas */

/* |z| as XLA: max * sqrt(1 + (min/max)^2), and min where that is NaN (0/0, inf/inf,
 * NaN parts). */
static const AluExp *cabs_(C z) {
  const AluExp *a = fabs_(z.re), *b = fabs_(z.im);
  const AluExp *mx = alu_binary(ALU_MAX, a, b), *mn = alu_binary(ALU_MIN, a, b);
  const AluExp *d = dvd(mn, mx);
  const AluExp *r = mul(mx, alu_unary(ALU_SQRT, add(k(d, 1.0), mul(d, d))));
  return sel(isnan_(r), mn, r);
}

/* (a + bi) / (c + di): Smith's algorithm with XLA's recovery of the NaN results for a
 * zero denominator, an infinite numerator and an infinite denominator. */
static C zdiv(C x, C y) {
  const AluExp *a = x.re, *b = x.im, *c = y.re, *d = y.im;
  const AluExp *zero = k(a, 0.0), *one = k(a, 1.0), *inf = k(a, INFINITY);
  const AluExp *c_lt_d = lt(fabs_(c), fabs_(d));
  /* |c| < |d|: t = c/d, den = c*t + d, ((a t + b) + (b t - a) i) / den */
  const AluExp *t1 = dvd(c, d), *den1 = add(mul(c, t1), d);
  C r1 = {dvd(add(mul(a, t1), b), den1), dvd(sub(mul(b, t1), a), den1)};
  /* else: t = d/c, den = d*t + c, ((b t + a) + (b - a t) i) / den */
  const AluExp *t2 = dvd(d, c), *den2 = add(mul(d, t2), c);
  C r2 = {dvd(add(mul(b, t2), a), den2), dvd(sub(b, mul(a, t2)), den2)};
  C r = zsel(c_lt_d, r1, r2);
  /* zero denominator (and not both numerator parts NaN): copysign(inf, c) * (a, b) */
  const AluExp *zero_den = and_(and_(eq(c, zero), eq(d, zero)), or_(not_(isnan_(a)), not_(isnan_(b))));
  const AluExp *sinf = copysign_(inf, c);
  C zr = {mul(sinf, a), mul(sinf, b)};
  /* infinite numerator, finite denominator */
  const AluExp *a_inf = isinf_(a), *b_inf = isinf_(b);
  const AluExp *inf_num = and_(or_(a_inf, b_inf), and_(isfinite_(c), isfinite_(d)));
  const AluExp *as = copysign_(sel(a_inf, one, zero), a), *bs = copysign_(sel(b_inf, one, zero), b);
  C ir = {mul(inf, add(mul(as, c), mul(bs, d))), mul(inf, sub(mul(bs, c), mul(as, d)))};
  /* finite numerator, infinite denominator */
  const AluExp *c_inf = isinf_(c), *d_inf = isinf_(d);
  const AluExp *inf_den = and_(or_(c_inf, d_inf), and_(isfinite_(a), isfinite_(b)));
  const AluExp *cs = copysign_(sel(c_inf, one, zero), c), *ds = copysign_(sel(d_inf, one, zero), d);
  C fr = {mul(zero, add(mul(a, cs), mul(b, ds))), mul(zero, sub(mul(b, cs), mul(a, ds)))};
  const AluExp *nan = and_(isnan_(r.re), isnan_(r.im));
  return zsel(nan, zsel(zero_den, zr, zsel(inf_num, ir, zsel(inf_den, fr, r))), r);
}

static const AluExp *u(AluOp op, const AluExp *a) { return alu_unary(op, a); }
static C zadd(C x, C y) { return (C){add(x.re, y.re), add(x.im, y.im)}; }
static C zreal(const AluExp *x, double v) { return (C){k(x, v), k(x, 0.0)}; }
static C times_i(C x) { return (C){neg(x.im), x.re}; }       /* i z */
static C times_neg_i(C x) { return (C){x.im, neg(x.re)}; }   /* -i z */

/* log z = log|z| + i atan2(im, re), log|z| = log(max) + log1p((min/max)^2) / 2 so that
 * |z| itself never overflows (JAX's log of 3e38 + 3e38i is finite). */
static C zlog(C z) {
  const AluExp *a = fabs_(z.re), *b = fabs_(z.im);
  const AluExp *mx = alu_binary(ALU_MAX, a, b), *mn = alu_binary(ALU_MIN, a, b);
  const AluExp *r = sel(eq(mx, k(mx, 0.0)), k(mx, 0.0), dvd(mn, mx));
  const AluExp *lr = add(u(ALU_LOG, mx), mul(k(mx, 0.5), u(ALU_LOG1P, mul(r, r))));
  lr = sel(isinf_(mx), k(mx, INFINITY), lr);
  return (C){lr, alu_binary(ALU_ATAN2, z.im, z.re)};
}

/* exp z = e^re (cos im + i sin im) (XLA's EmitExp for complex). */
static C zexp(C z) {
  const AluExp *e = u(ALU_EXP, z.re);
  /* a real argument stays real: exp(inf + 0i) = inf + 0i, not inf * sin(0) = NaN */
  return (C){mul(e, u(ALU_COS, z.im)), sel(eq(z.im, k(z.im, 0.0)), z.im, mul(e, u(ALU_SIN, z.im)))};
}

/* sqrt z without angles: t = sqrt((|a| + |z|) / 2); a >= 0: (t, b / 2t), a < 0:
 * (|b| / 2t, +-t by the sign of b, -0 counting as +0 as JAX's results do); |a| and |z|
 * halved before adding so that huge values do not overflow. Special values as JAX:
 * sqrt(0 + bi) = (0, b) for b = +-0, an infinite b gives (inf, b), a = +inf gives
 * (inf, copysign(0, b)) and a = -inf (0, +-inf), a NaN part (nan, nan). */
static C zsqrt(C z) {
  const AluExp *a = z.re, *b = z.im, *zero = k(a, 0.0), *half = k(a, 0.5), *inf = k(a, INFINITY);
  const AluExp *ax = fabs_(a), *ab = fabs_(b);
  /* t^2 = (|a| + |z|) / 2; above 1 as sqrt(|a|/4 + |z/4|) sqrt(2), which cannot overflow */
  const AluExp *q = k(a, 0.25);
  const AluExp *t_big = mul(u(ALU_SQRT, add(mul(ax, q), cabs_((C){mul(a, q), mul(b, q)}))),
                            k(a, 1.4142135623730951));
  const AluExp *t_small = u(ALU_SQRT, add(mul(ax, half), mul(cabs_(z), half)));
  const AluExp *t = sel(or_(lt(k(a, 1.0), ax), lt(k(a, 1.0), ab)), t_big, t_small);
  const AluExp *two_t = add(t, t);
  const AluExp *neg_b = lt(b, zero);
  C pos = {t, dvd(b, two_t)}, negc = {dvd(ab, two_t), sel(neg_b, neg(t), t)};
  C r = zsel(lt(a, zero), negc, pos);
  r = zsel(and_(eq(a, zero), eq(b, zero)), (C){zero, b}, r);
  r = zsel(eq(a, inf), (C){inf, sel(isnan_(b), b, dvd(b, inf))}, r);
  r = zsel(eq(a, k(a, -INFINITY)), (C){sel(isnan_(b), b, zero), sel(neg_b, neg(inf), inf)}, r);
  r = zsel(eq(ab, inf), (C){inf, b}, r);
  const AluExp *nan = k(a, NAN);
  return zsel(or_(isnan_(a), isnan_(b)), (C){nan, nan}, r); /* any NaN part: NaN */
}

/* x^y (XLA's EmitComplexPower): (a^2+b^2)^(c/2) e^(-d arg x) (cos q + i sin q),
 * q = c arg x + d/2 ln(a^2+b^2); 0^y = 0 for re y > 0 (and im y = 0), 0^0 = 1. */
static C zpow(C x, C y) {
  const AluExp *a = x.re, *b = x.im, *c = y.re, *d = y.im;
  const AluExp *zero = k(a, 0.0), *half = k(a, 0.5);
  const AluExp *aabb = add(mul(a, a), mul(b, b));
  const AluExp *arg = alu_binary(ALU_ATAN2, b, a);
  const AluExp *coeff = mul(alu_binary(ALU_POW, aabb, mul(half, c)), u(ALU_EXP, mul(neg(d), arg)));
  const AluExp *q = add(mul(c, arg), mul(mul(half, d), u(ALU_LOG, aabb)));
  C r = {mul(coeff, u(ALU_COS, q)), mul(coeff, u(ALU_SIN, q))};
  const AluExp *zero_base = and_(and_(eq(aabb, zero), eq(d, zero)), not_(lt(c, zero)));
  return zsel(zero_base, (C){sel(eq(c, zero), k(a, 1.0), zero), zero}, r);
}

/* sinh and cosh of a real value through expm1 (JAX's _sin_complex): 2 sinh b =
 * expm1(b) - expm1(-b), 2 cosh b = expm1(b) + expm1(-b) + 2. */
static void sinh_cosh(const AluExp *b, const AluExp **sh, const AluExp **ch) {
  const AluExp *e1 = u(ALU_EXPM1, b), *e2 = u(ALU_EXPM1, neg(b)), *h = k(b, 0.5);
  *sh = mul(sub(e1, e2), h);
  *ch = mul(add(add(e1, e2), k(b, 2.0)), h);
}

/* sin / cos as JAX lowers them for complex (lax._sin_complex, _cos_complex): with an
 * exact zero for the part that is sin(0) * inf when re is 0. */
static C zsin(C z) {
  const AluExp *sh, *ch;
  sinh_cosh(z.im, &sh, &ch);
  C r = {mul(u(ALU_SIN, z.re), ch), mul(u(ALU_COS, z.re), sh)};
  return zsel(eq(z.re, k(z.re, 0.0)), (C){k(z.re, 0.0), r.im}, r);
}
static C zcos(C z) {
  const AluExp *sh, *ch;
  sinh_cosh(z.im, &sh, &ch);
  C r = {mul(u(ALU_COS, z.re), ch), neg(mul(u(ALU_SIN, z.re), sh))};
  return zsel(eq(z.re, k(z.re, 0.0)), (C){r.re, k(z.re, 0.0)}, r);
}

/* tanh(a + bi) = (tanh a + i tan b) / (1 + i tanh a tan b) (XLA's EmitTanh), with C99's
 * special values (Annex G, ctanh) as JAX gives them: tanh(+-inf + bi) = +-1 + 0i for an
 * infinite or NaN b (0 with the sign of b), and a real argument stays real (tanh(NaN + 0i)
 * = NaN + 0i; the formula's tan b / (1 + ...) made both NaN). */
static C ztanh(C z) {
  const AluExp *ta = u(ALU_TANH, z.re), *tb = dvd(u(ALU_SIN, z.im), u(ALU_COS, z.im));
  C r = zdiv((C){ta, tb}, (C){k(ta, 1.0), mul(ta, tb)});
  r = zsel(and_(isinf_(z.re), not_(isfinite_(z.im))), (C){ta, copysign_(k(ta, 0.0), z.im)}, r);
  return zsel(eq(z.im, k(z.im, 0.0)), (C){ta, z.im}, r);
}
/* tan z = -i tanh(i z); sinh z = -i sin(i z), whose imaginary part keeps the sign of a
 * zero im z (sin's exact 0 for a zero real part would give -0: sinh(1 + 0i) = 1.175 + 0i,
 * as JAX and C99); cosh z = cos(i z). */
static C ztan(C z) { return times_neg_i(ztanh(times_i(z))); }
static C zsinh(C z) {
  C r = times_neg_i(zsin(times_i(z)));
  return (C){r.re, sel(eq(z.im, k(z.im, 0.0)), z.im, r.im)};
}
static C zcosh(C z) { return zcos(times_i(z)); }

/* Inverse functions as JAX computes them (chlo's decompositions, generated by the
 * functional_algorithms project, that XLA runs): accurate from tiny to huge arguments,
 * and JAX's values on the branch cuts, signed zeros included.
 *
 * asin and acos: Hull, Fairgrieve and Tang's algorithm (ACM TOMS 23(3), 1997) with the
 * approximation regions reduced to three for the real part and four for the imaginary
 * part. On x = |re|, y = |im|, with r = hypot(x + 1, y), s = hypot(x - 1, y) and
 * a = (r + s) / 2: asin = (atan2(re, q), +-log(a + sqrt(a^2 - 1))), acos = (atan2(q,
 * re), -+ the same), where q = sqrt(a^2 - x^2) computed without cancellation. The sign
 * of the imaginary part follows im < 0 -- so a -0 imaginary part counts as +0 (JAX's
 * asin(2 - 0i) = pi/2 + 1.317i, where NumPy gives pi/2 - 1.317i). */
static const AluExp *ge(const AluExp *a, const AluExp *b) { return or_(lt(b, a), eq(a, b)); }
static const AluExp *le(const AluExp *a, const AluExp *b) { return or_(lt(a, b), eq(a, b)); }

/* hypot(a, b) for a, b >= 0 (a may be negative: |a| is taken): max * sqrt(1 + (min /
 * max)^2), sqrt(2) max for equal parts, and max + max (min/max)^2 / 2 where the square
 * root rounds to 1 (keeps tiny contributions). */
static const AluExp *hypot_(const AluExp *a, const AluExp *b) {
  const AluExp *aa = fabs_(a), *one = k(b, 1.0);
  const AluExp *mx = alu_binary(ALU_MAX, aa, b), *mn = alu_binary(ALU_MIN, aa, b);
  const AluExp *q = dvd(mn, mx), *r = mul(q, q), *sqa = u(ALU_SQRT, add(one, r));
  const AluExp *tiny = and_(eq(sqa, one), lt(k(b, 0.0), r));
  return sel(eq(mx, mn), mul(k(b, 1.4142135623730951), mx),
             sel(tiny, add(mx, dvd(mul(mx, r), k(b, 2.0))), mul(mx, sqa)));
}

/* The parts of asin/acos shared by both: q (asin's real part is atan2(re, q), acos's
 * atan2(q, re)) and the unsigned imaginary part log(a + sqrt(a^2 - 1)). */
static void asin_acos_parts(C z, const AluExp **q_out, const AluExp **im_out) {
  bool f64 = part_of(z.re) == JX_FLOAT64;
  const AluExp *x = fabs_(z.re), *y = fabs_(z.im);
  const AluExp *one = k(x, 1.0), *half = k(x, 0.5), *zero = k(x, 0.0);
  const AluExp *safe_max = k(x, sqrt(f64 ? 1.7976931348623157e308 : 3.4028234663852886e38) / 8);
  const AluExp *safe_min = k(x, sqrt(f64 ? 2.2250738585072014e-308 : 1.1754943508222875e-38) * 4);
  const AluExp *xp1 = add(x, one), *xm1 = sub(x, one);
  const AluExp *r = hypot_(xp1, y), *s = hypot_(xm1, y);
  const AluExp *a = mul(half, add(r, s)), *half_apx = mul(half, add(a, x));
  const AluExp *yy = mul(y, y), *rpxp1 = add(r, xp1), *smxm1 = sub(s, xm1), *spxm1 = add(s, xm1);
  /* q = sqrt(a^2 - x^2) = sqrt((a + x)(a - x)), a - x without cancellation */
  const AluExp *q_le1 = u(ALU_SQRT, mul(half_apx, add(dvd(yy, rpxp1), smxm1)));
  const AluExp *q_gt1 = mul(y, u(ALU_SQRT, add(dvd(half_apx, rpxp1), dvd(half_apx, spxm1))));
  *q_out = sel(ge(alu_binary(ALU_MAX, x, y), safe_max), y, sel(le(x, one), q_le1, q_gt1));
  /* huge y (or x): log(2) + log(max) + log1p((x/y)^2) / 2 */
  const AluExp *opt = sel(lt(x, mul(safe_max, k(x, 1e12))), mul(safe_max, k(x, 1e-6)), mul(safe_max, k(x, 100.0)));
  const AluExp *y_big = ge(y, opt);
  const AluExp *mx = sel(y_big, y, x);
  const AluExp *xoy = sel(and_(y_big, not_(eq(y, k(x, INFINITY)))), dvd(x, y), zero);
  const AluExp *im_big = add(add(k(x, M_LN2), u(ALU_LOG, mx)), mul(half, u(ALU_LOG1P, mul(xoy, xoy))));
  /* tiny y below the cut (x < 1): y / sqrt((a - 1)(a + 1)); else log1p(a - 1 + sqrt(...)) */
  const AluExp *small = and_(lt(y, safe_min), lt(x, one));
  const AluExp *ap1 = add(a, one), *half_yy = mul(half, yy), *d1 = dvd(half_yy, rpxp1);
  const AluExp *am1 = sel(small, neg(dvd(mul(xp1, xm1), ap1)),
                          sel(ge(x, one), add(d1, mul(half, spxm1)),
                              sel(le(a, k(x, 1.5)), add(d1, dvd(half_yy, smxm1)), sub(a, one))));
  const AluExp *sq = u(ALU_SQRT, mul(am1, ap1));
  const AluExp *im_rest = sel(small, dvd(y, sq), u(ALU_LOG1P, add(am1, sq)));
  *im_out = sel(ge(mx, sel(y_big, opt, safe_max)), im_big, im_rest);
}

static C zasin(C z) {
  const AluExp *q, *im;
  asin_acos_parts(z, &q, &im);
  return (C){alu_binary(ALU_ATAN2, z.re, q), sel(lt(z.im, k(z.im, 0.0)), neg(im), im)};
}
static C zacos(C z) {
  const AluExp *q, *im;
  asin_acos_parts(z, &q, &im);
  return (C){alu_binary(ALU_ATAN2, q, z.re), sel(lt(z.im, k(z.im, 0.0)), im, neg(im))};
}
/* asinh z = -i asin(iz); acosh z = i acos(z) for im >= 0 (-0 included), else -i acos(z). */
static C zasinh(C z) { return times_neg_i(zasin(times_i(z))); }
static C zacosh(C z) {
  C a = zacos(z);
  return zsel(lt(z.im, k(z.im, 0.0)), times_neg_i(a), times_i(a));
}

/* atanh(x + iy) = (sign(x) log1p(4|x| / ((1 - |x|)^2 + y^2)) / 4,
 *                 atan2(2y, (1 - |x|)(1 + |x|) - y^2) / 2), sign(x) = -1 only for x < 0,
 * with 4|x| / (...) rescaled beyond 1/eps^2 (~ 1/|x| or 1/(|x|/y + y/|x|) / y, 0 for an
 * infinite part) and the imaginary part +-pi/2 by the sign of y there. atan z = -i
 * atanh(iz). */
static C zatanh(C z) {
  bool f64 = part_of(z.re) == JX_FLOAT64;
  const AluExp *x = z.re, *y = z.im, *ax = fabs_(x), *ay = fabs_(y);
  const AluExp *one = k(x, 1.0), *zero = k(x, 0.0);
  const double inv_negeps = f64 ? 9007199254740994.0 : 16777218.0; /* 2^53 + 2, 2^24 + 2 */
  const AluExp *safe_max = k(x, inv_negeps * inv_negeps);
  const AluExp *safe = and_(lt(ax, safe_max), lt(ay, safe_max));
  const AluExp *naxm1 = sub(one, ax), *y2 = mul(y, y);
  const AluExp *any_inf = or_(isinf_(x), isinf_(y));
  const AluExp *big = sel(lt(mul(ay, k(x, inv_negeps)), ax), dvd(one, ax),
                          sel(any_inf, zero, dvd(dvd(one, add(dvd(ax, y), dvd(y, ax))), y)));
  const AluExp *t = sel(safe, dvd(ax, add(mul(naxm1, naxm1), y2)), big);
  const AluExp *re = mul(mul(sel(ge(x, zero), one, k(x, -1.0)), u(ALU_LOG1P, mul(k(x, 4.0), t))), k(x, 0.25));
  const AluExp *im_safe = alu_binary(ALU_ATAN2, add(y, y), sub(mul(naxm1, add(one, ax)), y2));
  const AluExp *im = mul(sel(safe, im_safe, mul(sel(ge(y, zero), one, k(x, -1.0)), k(x, M_PI))), k(x, 0.5));
  return (C){re, im};
}
static C zatan(C z) { return times_neg_i(zatanh(times_i(z))); }

/* log1p z = log|1 + z| + i atan2(im, 1 + re). Where |1 + z|^2 lies in (1/2, 3/2) the real
 * part is log1p(s) / 2, s = |1 + z|^2 - 1 = 2x + y^2 + x^2 from the exact products (x^2 =
 * p + e by fma, Dekker's product): a tiny z keeps its relative accuracy (1 + 1e-20 is 1 in
 * float, and log(1 + z) gave 0), and on the circle |1 + z| = 1, where 2x cancels y^2, the
 * difference is exact (Sterbenz). Elsewhere log(1 + z) (zlog), which overflow and NaN
 * parts (s NaN) reach too. */
static C zlog1p(C z) {
  const AluExp *x = z.re, *y = z.im;
  const AluExp *xx = mul(x, x), *yy = mul(y, y);
  const AluExp *err = add(alu_fma(x, x, neg(xx)), alu_fma(y, y, neg(yy)));
  const AluExp *s = add(add(add(add(x, x), yy), xx), err);
  C l = zlog(zadd(zreal(x, 1.0), z));
  const AluExp *near = lt(fabs_(s), k(s, 0.5));
  return (C){sel(near, mul(k(s, 0.5), u(ALU_LOG1P, s)), l.re), l.im};
}

const AluExp *alu_complex_expand(AluOp op, const AluExp *a, const AluExp *b) {
  if (!a) return NULL;
  C x = parts(a);
  switch (op) {
  case ALU_DIV: return b ? make(zdiv(x, parts(b))) : NULL;
  case ALU_ABS: return cabs_(x);
  case ALU_ISNAN: return or_(isnan_(x.re), isnan_(x.im));
  case ALU_ISINF: return or_(isinf_(x.re), isinf_(x.im));
  case ALU_SIGN: { /* z / |z|, 0 at 0 (lax.sign) */
    const AluExp *m = cabs_(x);
    C r = {dvd(x.re, m), dvd(x.im, m)};
    return make(zsel(eq(m, k(m, 0.0)), (C){k(m, 0.0), k(m, 0.0)}, r));
  }
  case ALU_RECIPROCAL: return make(zdiv((C){k(x.re, 1.0), k(x.re, 0.0)}, x));
  case ALU_EXP: return make(zexp(x));
  case ALU_LOG: return make(zlog(x));
  case ALU_SQRT: return make(zsqrt(x));
  case ALU_RSQRT: return make(zdiv(zreal(x.re, 1.0), zsqrt(x)));
  case ALU_POW: return b ? make(zpow(x, parts(b))) : NULL;
  case ALU_SIN: return make(zsin(x));
  case ALU_COS: return make(zcos(x));
  case ALU_TAN: return make(ztan(x));
  case ALU_SINH: return make(zsinh(x));
  case ALU_COSH: return make(zcosh(x));
  case ALU_TANH: return make(ztanh(x));
  case ALU_ASIN: return make(zasin(x));
  case ALU_ACOS: return make(zacos(x));
  case ALU_ATAN: return make(zatan(x));
  case ALU_ASINH: return make(zasinh(x));
  case ALU_ACOSH: return make(zacosh(x));
  case ALU_ATANH: return make(zatanh(x));
  case ALU_EXPM1: { /* exp(z) - 1 with expm1 for the real part's small-|z| accuracy:
                       re = expm1(a) cos b + (cos b - 1) = expm1(a) cos b - 2 sin^2(b/2) */
    const AluExp *cb = u(ALU_COS, x.im), *sb2 = u(ALU_SIN, mul(x.im, k(x.im, 0.5)));
    const AluExp *em = u(ALU_EXPM1, x.re);
    /* a real argument stays real: expm1(inf + 0i) = inf + 0i, not inf * sin(0) = NaN */
    return alu_complex(sub(mul(em, cb), mul(k(cb, 2.0), mul(sb2, sb2))),
                       sel(eq(x.im, k(x.im, 0.0)), x.im, mul(u(ALU_EXP, x.re), u(ALU_SIN, x.im))));
  }
  case ALU_LOG1P: return make(zlog1p(x));
  default:
    error_set(JX_ERR_DTYPE, "kernel IR: %s is not defined on %s", alu_op_name(op),
              jx_dtype_name(a->dtype));
    return NULL;
  }
}
