/* emit.c -- the portable expression emitter (emit.h): C types per dtype (emit_types),
 * format strings per op (op_fmt; a RenderLang overrides entries), constants, and a
 * kernel part's DAG rendered as locals. The loop framing is per target (c.c). */
#include "render/emit.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"

/* A single-use expression longer than this gets its own local, for readability. */
#define INLINE_MAX 80

/* ------------------------------------------------------------ dtype table */

/* DT(elem, ctype, sfx, wide, load, store, bits, from_bits, round, round64) */
#define DT(e, c, s, w, l, st, b, fb, r, r64)                                             \
  {.elem = e, .ctype = c, .sfx = s, .wide = w, .load = l, .store = st, .bits = b,        \
   .from_bits = fb, .round = r, .round64 = r64}
const EmitType emit_types[JX_NUM_DTYPES] = {
    [JX_BOOL] = DT("uint8_t", "uint8_t", "u8", "uint32_t", "($0 != 0)", "$0", NULL, NULL,
                   NULL, NULL),
    [JX_INT8] = DT("int8_t", "int8_t", "i8", "uint32_t", "$0", "$0", "(uint8_t)$0",
                   "(int8_t)$0", NULL, NULL),
    [JX_UINT8] = DT("uint8_t", "uint8_t", "u8", "uint32_t", "$0", "$0", "$0", "$0", NULL, NULL),
    [JX_INT16] = DT("int16_t", "int16_t", "i16", "uint32_t", "$0", "$0", "(uint16_t)$0",
                    "(int16_t)$0", NULL, NULL),
    [JX_UINT16] = DT("uint16_t", "uint16_t", "u16", "uint32_t", "$0", "$0", "$0", "$0", NULL,
                     NULL),
    [JX_INT32] = DT("int32_t", "int32_t", "i32", "uint32_t", "$0", "$0", "(uint32_t)$0",
                    "(int32_t)$0", NULL, NULL),
    [JX_UINT32] = DT("uint32_t", "uint32_t", "u32", "uint32_t", "$0", "$0", "$0", "$0", NULL,
                     NULL),
    [JX_INT64] = DT("int64_t", "int64_t", "i64", "uint64_t", "$0", "$0", "(uint64_t)$0",
                    "(int64_t)$0", NULL, NULL),
    [JX_UINT64] = DT("uint64_t", "uint64_t", "u64", "uint64_t", "$0", "$0", "$0", "$0", NULL,
                     NULL),
    [JX_FLOAT16] = DT("uint16_t", "float", "f32", NULL, "jx_f16_to_f32($0)",
                      "jx_f32_to_f16($0)", "jx_f32_to_f16($0)", "jx_f16_to_f32($0)",
                      "jx_rnd_f16($0)", "jx_rnd_f16_f64($0)"),
    [JX_BFLOAT16] = DT("uint16_t", "float", "f32", NULL, "jx_bf16_to_f32($0)",
                       "jx_f32_to_bf16($0)", "jx_f32_to_bf16($0)", "jx_bf16_to_f32($0)",
                       "jx_rnd_bf16($0)", "jx_rnd_bf16_f64($0)"),
    [JX_FLOAT32] = DT("float", "float", "f32", NULL, "$0", "$0", "jx_f32_bits($0)",
                      "jx_bits_f32($0)", NULL, "(float)$0"),
    [JX_FLOAT64] = DT("double", "double", "f64", NULL, "$0", "$0", "jx_f64_bits($0)",
                      "jx_bits_f64($0)", NULL, "$0"),
    /* complex: structs of two parts (prelude.h), laid out as NumPy's interleaved pairs */
    [JX_COMPLEX64] = DT("jx_c64", "jx_c64", "c64", NULL, "$0", "$0", NULL, NULL, NULL, NULL),
    [JX_COMPLEX128] = DT("jx_c128", "jx_c128", "c128", NULL, "$0", "$0", NULL, NULL, NULL,
                         NULL),
};
#undef DT

static bool is_float(jx_dtype d) { return dtype_is_floating(d); }

/* --------------------------------------------------------------- op table */

enum {
  EXACT = 1,   /* on f16/bf16 values the float result is already representable */
  ROUNDED = 2, /* the helper returns a value of the dtype (it rounds itself) */
};

/* Per-op formats. Placeholders: $0..$3 operands, $T compute type, $S helper suffix of
 * the compute type, $D the dtype's own suffix (f16, bf16, ...), $W the wide unsigned
 * type, $f the libm suffix ("f" for float, "" for double). Each operand appears once,
 * so operands may be inlined expressions. */
typedef struct OpFmt {
  const char *flt;   /* floating dtypes, computed in float or double */
  const char *ints;  /* integers and bool: always defined (wrapping helpers) */
  const char *plain; /* integers, when the intervals prove the C operator is defined
                        (no signed overflow, no x/0 or INT_MIN/-1, shift in range) */
  const char *bools; /* bool, when it differs from ints */
  const char *cpx;   /* complex dtypes (the natively complex ops: ir/complex.c) */
  int flags;
} OpFmt;

static const OpFmt op_fmt[ALU_NUM_OPS] = {
    [ALU_ADD] = {.flt = "($0 + $1)", .ints = "jx_add_$S($0, $1)", .plain = "($0 + $1)", .cpx = "jx_add_$S($0, $1)"},
    [ALU_SUB] = {.flt = "($0 - $1)", .ints = "jx_sub_$S($0, $1)", .plain = "($0 - $1)", .cpx = "jx_sub_$S($0, $1)"},
    [ALU_MUL] = {.flt = "($0 * $1)", .ints = "jx_mul_$S($0, $1)", .plain = "($0 * $1)", .cpx = "jx_mul_$S($0, $1)"},
    [ALU_DIV] = {.flt = "($0 / $1)", .ints = "jx_div_$S($0, $1)", .plain = "($0 / $1)"},
    [ALU_MOD] = {.flt = "fmod$f($0, $1)", .ints = "jx_mod_$S($0, $1)", .plain = "($0 % $1)",
                 .flags = EXACT},
    [ALU_MIN] = {.flt = "jx_fmin_$S($0, $1)", .ints = "jx_min_$S($0, $1)", .flags = EXACT},
    [ALU_MAX] = {.flt = "jx_fmax_$S($0, $1)", .ints = "jx_max_$S($0, $1)", .flags = EXACT},
    [ALU_POW] = {.flt = "pow$f($0, $1)", .ints = "jx_pow_$S($0, $1)"},
    [ALU_ATAN2] = {.flt = "atan2$f($0, $1)"},
    [ALU_AND] = {.ints = "($0 & $1)"},
    [ALU_OR] = {.ints = "($0 | $1)"},
    [ALU_XOR] = {.ints = "($0 ^ $1)"},
    [ALU_SHL] = {.ints = "jx_shl_$S($0, $1)", .plain = "(($W)$0 << $1)"},
    [ALU_SHR] = {.ints = "jx_shr_$S($0, $1)", .plain = "($0 >> $1)"},
    [ALU_CMPLT] = {.flt = "($0 < $1)", .ints = "($0 < $1)"},
    [ALU_CMPNE] = {.flt = "($0 != $1)", .ints = "($0 != $1)", .cpx = "jx_ne_$S($0, $1)"},
    [ALU_CMPEQ] = {.flt = "($0 == $1)", .ints = "($0 == $1)", .cpx = "jx_eq_$S($0, $1)"},
    [ALU_NEG] = {.flt = "(-$0)", .ints = "jx_neg_$S($0)", .plain = "(-$0)", .flags = EXACT, .cpx = "jx_neg_$S($0)"},
    [ALU_NOT] = {.ints = "(~$0)", .bools = "($0 ^ 1)"},
    [ALU_ABS] = {.flt = "fabs$f($0)", .ints = "jx_abs_$S($0)", .flags = EXACT},
    [ALU_SIGN] = {.flt = "jx_fsign_$S($0)", .ints = "jx_sign_$S($0)", .flags = EXACT},
    [ALU_SIN] = {.flt = "sin$f($0)"},
    [ALU_COS] = {.flt = "cos$f($0)"},
    [ALU_TAN] = {.flt = "tan$f($0)"},
    [ALU_ASIN] = {.flt = "asin$f($0)"},
    [ALU_ACOS] = {.flt = "acos$f($0)"},
    [ALU_ATAN] = {.flt = "atan$f($0)"},
    [ALU_SINH] = {.flt = "sinh$f($0)"},
    [ALU_COSH] = {.flt = "cosh$f($0)"},
    [ALU_TANH] = {.flt = "jx_tanh_$S($0)"}, /* f32: a rational form without a call (prelude_c.h) */
    [ALU_ASINH] = {.flt = "asinh$f($0)"},
    [ALU_ACOSH] = {.flt = "acosh$f($0)"},
    [ALU_ATANH] = {.flt = "atanh$f($0)"},
    [ALU_EXP] = {.flt = "jx_exp_$S($0)"}, /* f32: a vectorizable polynomial (prelude.h) */
    [ALU_EXP2] = {.flt = "exp2$f($0)"},
    [ALU_EXPM1] = {.flt = "expm1$f($0)"},
    [ALU_LOG] = {.flt = "log$f($0)"},
    [ALU_LOG2] = {.flt = "log2$f($0)"},
    [ALU_LOG1P] = {.flt = "log1p$f($0)"},
    [ALU_SQRT] = {.flt = "sqrt$f($0)"},
    [ALU_RSQRT] = {.flt = "jx_rsqrt_$D($0)", .flags = ROUNDED},
    [ALU_CBRT] = {.flt = "cbrt$f($0)"},
    [ALU_RECIPROCAL] = {.flt = "(1 / $0)"},
    [ALU_FLOOR] = {.flt = "floor$f($0)", .flags = EXACT},
    [ALU_CEIL] = {.flt = "ceil$f($0)", .flags = EXACT},
    [ALU_ROUND] = {.flt = "rint$f($0)", .flags = EXACT}, /* half to even: the default mode */
    [ALU_TRUNC] = {.flt = "trunc$f($0)", .flags = EXACT},
    [ALU_ERF] = {.flt = "jx_erf_$S($0)"},   /* f32: a vectorizable form (prelude_c.h) */
    [ALU_ERFC] = {.flt = "jx_erfc_$S($0)"}, /* f32: a vectorizable form (prelude_c.h) */
    [ALU_ISNAN] = {.flt = "(isnan($0) != 0)"},
    [ALU_ISINF] = {.flt = "(isinf($0) != 0)"},
    [ALU_WHERE] = {.flt = "($0 ? $1 : $2)", .ints = "($0 ? $1 : $2)", .flags = EXACT, .cpx = "($0 ? $1 : $2)"},
    [ALU_FMA] = {.flt = "fma$f($0, $1, $2)", .flags = EXACT},
    [ALU_THREEFRY2X32] = {.ints = "jx_threefry2x32($0, $1, $2, $3)"},
};

/* The format of op for operands of dtype d under lang, or NULL. */
static const char *op_format(const RenderLang *lang, AluOp op, jx_dtype d, bool plain) {
  for (const RenderOverride *o = lang->overrides; o && (o->fmt_float || o->fmt_int); o++)
    if (o->op == op) {
      const char *f = is_float(d) ? o->fmt_float : o->fmt_int;
      if (f) return f;
    }
  const OpFmt *f = &op_fmt[op];
  if (dtype_is_complex(d)) return f->cpx;
  if (is_float(d)) return f->flt;
  if (d == JX_BOOL && f->bools) return f->bools;
  return plain && f->plain ? f->plain : f->ints;
}

/* Expands a format: operands ops[0..3], dtype placeholders from d. */
static void expand(Buf *b, const char *fmt, const char *const *ops, jx_dtype d) {
  const EmitType *c = &emit_types[d];
  for (const char *p = fmt; *p; p++) {
    if (*p != '$' || !p[1]) {
      buf_add(b, p, 1);
      continue;
    }
    char t = *++p;
    if (t >= '0' && t <= '3') buf_str(b, ops[t - '0']);
    else if (t == 'T') buf_str(b, c->ctype);
    else if (t == 'S') buf_str(b, c->sfx);
    else if (t == 'D') buf_str(b, dtype_short_name(d));
    else if (t == 'W') buf_str(b, c->wide ? c->wide : "?");
    else if (t == 'f') buf_str(b, d == JX_FLOAT64 ? "" : "f");
    else buf_add(b, p - 1, 2);
  }
}

static void expand1(Buf *b, const char *fmt, const char *op0, jx_dtype d) {
  const char *ops[4] = {op0, "", "", ""};
  expand(b, fmt, ops, d);
}

void emit_store(Buf *b, jx_dtype d, const char *value) { expand1(b, emit_types[d].store, value, d); }

/* ------------------------------------------------------ plain integer ops */

static bool full_range(const AluExp *e) {
  int bits = dtype_bits(e->dtype);
  if (e->dtype == JX_INT64 || e->dtype == JX_UINT64)
    return e->lo == INT64_MIN && e->hi == INT64_MAX;
  if (dtype_is_unsigned(e->dtype)) return e->lo == 0 && e->hi == (int64_t)((1ull << bits) - 1);
  return e->lo == -(int64_t)(1ull << (bits - 1)) && e->hi == (int64_t)((1ull << (bits - 1)) - 1);
}

/* Whether the known interval of e lies in [lo, hi] (u64 intervals above INT64_MAX are
 * unknown and stored as the full int64 range, which never passes). */
static bool within(const AluExp *e, int64_t lo, int64_t hi) {
  if (!dtype_is_integer(e->dtype) && e->dtype != JX_BOOL) return false;
  return e->lo >= lo && e->hi <= hi && !(e->lo == INT64_MIN && e->hi == INT64_MAX);
}

/* Whether the C operator on the compute type is defined and gives the wrapped result
 * (after a cast to the dtype for narrow types, which promote to int). */
static bool plain_ok(const AluExp *e) {
  jx_dtype d = e->dtype;
  int bits = dtype_bits(d);
  bool u = dtype_is_unsigned(d);
  switch (e->op) {
  case ALU_ADD: case ALU_SUB: case ALU_MUL: case ALU_NEG:
    if (u && bits >= 32) return true;             /* unsigned arithmetic wraps */
    if (bits < 32) return !(e->op == ALU_MUL && d == JX_UINT16); /* fits in int */
    return !full_range(e); /* the interval fit the dtype: no overflow happened */
  case ALU_DIV: case ALU_MOD:
    return within(e->src[1], 1, INT64_MAX) || (!u && within(e->src[1], INT64_MIN, -2));
  case ALU_SHL:
    return within(e->src[1], 0, bits - 1);
  case ALU_SHR:
    return within(e->src[1], 0, bits - 1) && (u || within(e->src[0], 0, INT64_MAX));
  default:
    return false;
  }
}

/* -------------------------------------------------------------- constants */

/* A float literal reading back exactly x: the shortest decimal that does (checked with
 * strtof for float literals, as the compiler reads them), or, when the C locale's
 * number format is not in effect, an exact hex literal built without printf. */
static void float_literal(char *out, size_t n, double x, bool dbl) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(out, n, "%.*g", prec, x);
    if (dbl ? strtod(out, NULL) == x : strtof(out, NULL) == (float)x) break;
  }
  if (!strpbrk(out, ".en")) strncat(out, ".0", n - strlen(out) - 1);
  if (strspn(out, "0123456789.e+-") == strlen(out) &&
      (dbl ? strtod(out, NULL) == x : strtof(out, NULL) == (float)x))
    return;
  int e;
  double m = frexp(fabs(x), &e); /* |x| = m * 2^e, m in [0.5, 1) */
  snprintf(out, n, "%s0x%" PRIx64 "p%d", x < 0 ? "-" : "", (uint64_t)ldexp(m, 53), e - 53);
}

void emit_const(Buf *b, jx_dtype d, AluValue v) {
  switch (d) {
  case JX_BOOL: buf_str(b, v.i ? "1" : "0"); return;
  case JX_INT8: case JX_INT16: buf_printf(b, "((%s)%" PRId64 ")", emit_types[d].ctype, v.i); return;
  case JX_UINT8: case JX_UINT16: buf_printf(b, "((%s)%" PRIu64 "u)", emit_types[d].ctype, v.u); return;
  case JX_INT32:
    if (v.i == INT32_MIN) buf_str(b, "INT32_MIN");
    else buf_printf(b, v.i < 0 ? "(%" PRId64 ")" : "%" PRId64, v.i);
    return;
  case JX_UINT32: buf_printf(b, "%" PRIu64 "u", v.u); return;
  case JX_INT64: /* small values as int literals: operands of 64-bit ops promote */
    if (v.i >= INT32_MIN && v.i <= INT32_MAX)
      buf_printf(b, v.i < 0 ? "(%" PRId64 ")" : "%" PRId64, v.i);
    else if (v.i == INT64_MIN) buf_str(b, "INT64_MIN");
    else buf_printf(b, "INT64_C(%" PRId64 ")", v.i);
    return;
  case JX_UINT64:
    if (v.u <= UINT32_MAX) buf_printf(b, "%" PRIu64 "u", v.u);
    else buf_printf(b, "UINT64_C(%" PRIu64 ")", v.u);
    return;
  case JX_COMPLEX64:
  case JX_COMPLEX128: {
    jx_dtype p = dtype_real_part(d);
    buf_printf(b, "jx_mk_%s(", dtype_short_name(d));
    emit_const(b, p, (AluValue){.f = v.c.re});
    buf_str(b, ", ");
    emit_const(b, p, (AluValue){.f = v.c.im});
    buf_str(b, ")");
    return;
  }
  default: break;
  }
  bool dbl = d == JX_FLOAT64;
  double x = dbl ? v.f : (double)(float)v.f;
  if (isnan(x)) {
    if (dbl) {
      buf_printf(b, "jx_bits_f64(UINT64_C(0x%016" PRIx64 "))", v.u);
    } else {
      float f = (float)v.f;
      uint32_t u;
      memcpy(&u, &f, 4);
      buf_printf(b, "jx_bits_f32(0x%08" PRIx32 "u)", u);
    }
  } else if (isinf(x)) {
    buf_printf(b, dbl ? "(%sHUGE_VAL)" : "(%sHUGE_VALF)", x < 0 ? "-" : "");
  } else { /* negative literals in parentheses: "(-$0)" must not become "--" */
    char t[48];
    float_literal(t, sizeof t, x, dbl);
    bool neg = signbit(x);
    buf_printf(b, "%s%s%s%s", neg ? "(" : "", t, dbl ? "" : "f", neg ? ")" : "");
  }
}

/* -------------------------------------------------------------- expressions */

static void render_cast(Buf *b, const AluExp *e, const char *x) {
  jx_dtype to = e->dtype, from = e->src[0]->dtype;
  const EmitType *t = &emit_types[to];
  if (to == from) {
    buf_str(b, x);
  } else if (dtype_is_complex(from) || dtype_is_complex(to)) {
    /* complex -> complex part by part; complex -> real: the real part's cast (JAX drops
     * the imaginary part); complex -> bool: either part nonzero; real -> complex: the
     * part's cast and +0 (eval.c's cast_value) */
    jx_dtype fp = dtype_real_part(from), tp = dtype_real_part(to);
    AluExp pe = {.op = ALU_CAST, .dtype = tp, .nsrc = 1};
    AluExp src = {.op = ALU_VARIABLE, .dtype = fp};
    pe.src[0] = &src;
    Buf re = {0}, im = {0}, xr = {0}, xi = {0};
    if (dtype_is_complex(from)) {
      buf_printf(&xr, "(%s).re", x);
      buf_printf(&xi, "(%s).im", x);
    } else {
      buf_str(&xr, x);
    }
    if (to == JX_BOOL && dtype_is_complex(from)) {
      buf_printf(b, "(%s != 0 || %s != 0)", xr.s ? xr.s : "", xi.s ? xi.s : "");
    } else {
      render_cast(&re, &pe, xr.s ? xr.s : "");
      if (dtype_is_complex(to)) {
        if (dtype_is_complex(from)) render_cast(&im, &pe, xi.s ? xi.s : "");
        else emit_const(&im, tp, (AluValue){.f = 0.0});
        buf_printf(b, "jx_mk_%s(%s, %s)", dtype_short_name(to), re.s ? re.s : "", im.s ? im.s : "");
      } else {
        buf_str(b, re.s ? re.s : "");
      }
    }
    b->oom |= re.oom || im.oom || xr.oom || xi.oom;
    free(re.s), free(im.s), free(xr.s), free(xi.s);
  } else if (to == JX_BOOL) {
    buf_printf(b, "(%s != 0)", x);
  } else if (is_float(from) && is_float(to)) {
    if (to == JX_FLOAT64) buf_printf(b, "(double)%s", x);
    else if (from == JX_FLOAT64) expand1(b, t->round64, x, to); /* via round to odd */
    else if (to == JX_FLOAT32) buf_str(b, x);                  /* f16/bf16 are exact */
    else expand1(b, t->round, x, to);
  } else if (is_float(from)) { /* saturating, NaN -> 0 */
    buf_printf(b, "jx_cvt_%s_%s(%s)", dtype_short_name(to), from == JX_FLOAT64 ? "f64" : "f32", x);
  } else if (to == JX_FLOAT32 || to == JX_FLOAT64) {
    buf_printf(b, "(%s)%s", t->ctype, x); /* correctly rounded */
  } else if (is_float(to)) { /* f16/bf16: through double, as eval.c */
    Buf inner = {0};
    buf_printf(&inner, "(double)%s", x);
    expand1(b, t->round64, inner.s ? inner.s : "", to);
    b->oom |= inner.oom;
    free(inner.s);
  } else {
    buf_printf(b, "((%s)%s)", t->ctype, x); /* int -> int wraps */
  }
}

static void render_bitcast(Buf *b, const AluExp *e, const char *x) {
  if (e->src[0]->dtype == e->dtype) { /* bool to bool (bool has no bits format) */
    buf_str(b, x);
    return;
  }
  Buf bits = {0};
  expand1(&bits, emit_types[e->src[0]->dtype].bits, x, e->src[0]->dtype);
  expand1(b, emit_types[e->dtype].from_bits, bits.s ? bits.s : "", e->dtype);
  b->oom |= bits.oom;
  free(bits.s);
}

/* The expression of node e given its operands' texts; NULL format -> failure. */
static bool render_node(EmitPart *p, Buf *b, const AluExp *e, const char *const *ops,
                        bool allow_plain) {
  jx_dtype d = e->dtype;
  switch (e->op) {
  case ALU_CONST: emit_const(b, d, e->value); return true;
  case ALU_SPECIAL:
  case ALU_VARIABLE: buf_str(b, e->name); return true;
  case ALU_GLOBAL_INDEX: { /* in bounds: kernels guard their indices */
    Buf elem = {0};
    buf_printf(&elem, "in%lld[%s]", (long long)e->arg, ops[0]);
    expand1(b, emit_types[d].load, elem.s ? elem.s : "", d);
    b->oom |= elem.oom;
    free(elem.s);
    return true;
  }
  case ALU_CAST: render_cast(b, e, ops[0]); return true;
  case ALU_BITCAST: render_bitcast(b, e, ops[0]); return true;
  case ALU_REAL: buf_printf(b, "(%s).re", ops[0]); return true;
  case ALU_IMAG: buf_printf(b, "(%s).im", ops[0]); return true;
  case ALU_COMPLEX: buf_printf(b, "jx_mk_%s(%s, %s)", dtype_short_name(d), ops[0], ops[1]); return true;
  default: break;
  }
  /* float32 division by a finite non-zero literal, where the target has a form for it
   * (cuda: a multiply by the rounded reciprocal and one correction step, prelude_cuda.h) */
  if (e->op == ALU_DIV && d == JX_FLOAT32 && p->lang->div_const_f32 && e->src[1]->op == ALU_CONST &&
      isfinite(e->src[1]->value.f) && e->src[1]->value.f != 0) {
    expand(b, p->lang->div_const_f32, ops, d);
    return true;
  }
  /* float max/min with a constant operand: one compare (prelude.h, jx_fmaxc) */
  if ((e->op == ALU_MAX || e->op == ALU_MIN) && (d == JX_FLOAT32 || d == JX_FLOAT64)) {
    int c = e->src[1]->op == ALU_CONST ? 1 : e->src[0]->op == ALU_CONST ? 0 : -1;
    double v = c >= 0 ? e->src[c]->value.f : 0;
    bool zero_ok = v != 0 || (e->op == ALU_MAX ? !signbit(v) : signbit(v));
    if (c >= 0 && !isnan(v) && zero_ok) {
      buf_printf(b, "jx_f%sc_%s(%s, %s)", e->op == ALU_MAX ? "max" : "min", emit_types[d].sfx,
                 ops[1 - c], ops[c]);
      return true;
    }
  }
  /* Operand dtype decides the format (compares and ISNAN return bool). */
  jx_dtype sd = e->op == ALU_WHERE ? e->src[1]->dtype : e->nsrc ? e->src[0]->dtype : d;
  bool plain = allow_plain && !is_float(sd) && !dtype_is_complex(sd) && plain_ok(e);
  const char *fmt = op_format(p->lang, e->op, sd, plain);
  if (!fmt) {
    error_set(JX_ERR_UNSUPPORTED, "render: no %s format for %s on %s", p->lang->name,
              alu_op_name(e->op), dtype_short_name(sd));
    return false;
  }
  AluGroup g = alu_op_group(e->op);
  bool to_bool = g == ALU_GROUP_COMPARE || g == ALU_GROUP_UNARY_PRED;
  if (is_float(d) && emit_types[d].round && !(op_fmt[e->op].flags & (EXACT | ROUNDED))) {
    Buf v = {0}; /* f16/bf16: computed in float, rounded back after every op */
    expand(&v, fmt, ops, sd);
    expand1(b, emit_types[d].round, v.s ? v.s : "", d);
    b->oom |= v.oom;
    free(v.s);
  } else if (!is_float(d) && !to_bool && d != JX_BOOL && strncmp(fmt, "jx_", 3) != 0 &&
             (dtype_bits(d) < 32 || strstr(fmt, "$W"))) {
    /* Narrow integers promote to int in C: cast back to wrap (and keep the type). */
    buf_printf(b, "((%s)", emit_types[d].ctype);
    expand(b, fmt, ops, sd);
    buf_str(b, ")");
  } else {
    expand(b, fmt, ops, sd);
  }
  return true;
}

/* in[valid ? i : 0]: see emit.h. */
bool emit_guarded_load(const AluExp *e) {
  if (e->op != ALU_GLOBAL_INDEX || e->src[0]->op != ALU_WHERE) return false;
  const AluExp *z = e->src[0]->src[2];
  return z->op == ALU_CONST && z->value.i == 0;
}

/* Every node below the roots once, in one topological order; a node used twice (or
 * long, or a guarded load) becomes a local. */
bool emit_parts(EmitPart *p, const AluExp *const *roots, int nroots, char **results) {
  /* the nodes below every root, in one topological order (each root's order, less the
   * nodes already listed) */
  int64_t n = 0, cap = 0;
  const AluExp **order = NULL;
  AluMap index;
  alu_map_init(&index);
  int *uses = NULL;
  char **text = NULL;
  bool ok = false;
  for (int r = 0; r < nroots; r++) {
    int64_t m;
    const AluExp **o = alu_toposort(roots[r], &m);
    if (!o) goto oom;
    for (int64_t i = 0; i < m; i++) {
      if (alu_map_get(&index, o[i], NULL)) continue;
      if (n == cap) {
        cap = cap ? cap * 2 : 64;
        const AluExp **g = realloc((void *)order, (size_t)cap * sizeof *g);
        if (!g) {
          free((void *)o);
          goto oom;
        }
        order = g;
      }
      if (!alu_map_put(&index, o[i], (const void *)(intptr_t)n)) {
        free((void *)o);
        goto oom;
      }
      order[n++] = o[i];
    }
    free((void *)o);
  }
  uses = calloc((size_t)(n ? n : 1), sizeof *uses);
  text = calloc((size_t)(n ? n : 1), sizeof *text);
  if (!uses || !text) goto oom;
  for (int64_t i = 0; i < n; i++)
    for (int s = 0; s < order[i]->nsrc; s++) {
      const void *j;
      alu_map_get(&index, order[i]->src[s], &j);
      uses[(intptr_t)j]++;
    }
  for (int r = 0; r < nroots; r++) { /* a root read by another output is shared */
    const void *j;
    alu_map_get(&index, roots[r], &j);
    uses[(intptr_t)j]++;
  }
  for (int64_t i = 0; i < n; i++) {
    const AluExp *e = order[i];
    const char *ops[4] = {"", "", "", ""};
    for (int s = 0; s < e->nsrc; s++) {
      const void *j;
      alu_map_get(&index, e->src[s], &j);
      ops[s] = text[(intptr_t)j];
    }
    Buf b = {0};
    if (!render_node(p, &b, e, ops, true)) {
      free(b.s);
      goto fail;
    }
    char *t = buf_take(&b);
    if (!t) goto oom;
    bool leaf = e->nsrc == 0, last = i + 1 == n && nroots == 1;
    if (!leaf && !last && (uses[i] > 1 || strlen(t) > INLINE_MAX || emit_guarded_load(e))) {
      int v = (*p->nlocals)++;
      buf_printf(p->out, "%sconst %s v%d = %s;\n", p->indent, emit_types[e->dtype].ctype, v, t);
      free(t);
      char name[24];
      snprintf(name, sizeof name, "v%d", v);
      t = strdup(name);
      if (!t) goto oom;
    }
    text[i] = t;
  }
  for (int r = 0; r < nroots; r++) {
    const void *j;
    alu_map_get(&index, roots[r], &j);
    results[r] = strdup(text[(intptr_t)j]);
    if (!results[r]) {
      while (r-- > 0) free(results[r]);
      goto oom;
    }
  }
  ok = true;
  goto done;
oom:
  error_set(JX_ERR_OOM, "render: out of memory");
fail:
done:
  for (int64_t i = 0; text && i < n; i++) free(text[i]);
  free(text);
  free(uses);
  alu_map_free(&index);
  free((void *)order);
  return ok;
}

char *emit_part(EmitPart *p, const AluExp *root) {
  char *result = NULL;
  return emit_parts(p, &root, 1, &result) ? result : NULL;
}

/* ------------------------------------------------------------------ names */

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

/* Appends the lowercase names of the value ops below e (not index arithmetic), each
 * once, up to 3 in all. */
static void name_ops(const AluExp *e, char *ops, size_t cap, int *count) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  if (!order) return;
  AluMap index_only; /* nodes reached only through a load's index */
  alu_map_init(&index_only);
  for (int64_t i = 0; i < n; i++)
    if (order[i]->op == ALU_GLOBAL_INDEX) alu_map_put(&index_only, order[i]->src[0], NULL);
  for (int64_t i = n - 1; i >= 0 && *count < 3; i--) {
    const AluExp *x = order[i];
    if (!x->nsrc || x->op == ALU_GLOBAL_INDEX || alu_map_get(&index_only, x, NULL)) {
      for (int s = 0; s < x->nsrc; s++) alu_map_put(&index_only, x->src[s], NULL);
      continue;
    }
    char lower[24];
    const char *nm = alu_op_name(x->op);
    size_t k = 0;
    for (; nm[k] && k + 1 < sizeof lower; k++) lower[k] = (char)(nm[k] | 0x20);
    lower[k] = 0;
    char probe[32];
    snprintf(probe, sizeof probe, "_%s_", lower);
    char padded[64];
    snprintf(padded, sizeof padded, "_%s_", ops);
    if (strstr(padded, probe)) continue;
    if (strlen(ops) + k + 2 > cap) break;
    if (*ops) strcat(ops, "_");
    strcat(ops, lower);
    (*count)++;
  }
  alu_map_free(&index_only);
  free((void *)order);
}

static const char *reduce_name(const Reduction *r) {
  switch (r->op) {
  case ALU_ADD: return "sum";
  case ALU_MUL: return "prod";
  case ALU_MAX: return "max";
  case ALU_MIN: return "min";
  case ALU_AND: return r->dtype == JX_BOOL ? "all" : "and";
  case ALU_OR: return r->dtype == JX_BOOL ? "any" : "or";
  default: return "reduce";
  }
}

void emit_kernel_name(const Kernel *k, const char *body, char name[RENDER_NAME_MAX]) {
  char ops[32] = "";
  int count = 0;
  if (k->has_reduction) {
    snprintf(ops, sizeof ops, "%s", reduce_name(&k->reduction));
    count = 1;
    if (k->reduction.epilogue) name_ops(k->reduction.epilogue, ops, sizeof ops, &count);
  }
  name_ops(k->exp, ops, sizeof ops, &count);
  if (!*ops) snprintf(ops, sizeof ops, "copy");
  char size[48];
  if (k->has_reduction)
    snprintf(size, sizeof size, "%lldx%lld", (long long)k->size, (long long)k->reduction.size);
  else
    snprintf(size, sizeof size, "%lld", (long long)k->size);
  uint32_t h = (uint32_t)fnv1a(body, strlen(body));
  snprintf(name, RENDER_NAME_MAX, "k_%s_%s_%08x", ops, size, h);
}

/* ---------------------------------------------------------------- kernels */

/* The accumulator step acc = op(acc, x) as text (rounded for f16/bf16). */
bool emit_step(EmitPart *p, Buf *b, const Reduction *r, const char *acc, const char *x) {
  AluExp probe = {.op = r->op, .dtype = r->dtype, .nsrc = 2};
  const AluExp *leaf = alu_variable("acc", r->dtype);
  if (!leaf) return false;
  probe.src[0] = probe.src[1] = leaf;
  const char *ops[4] = {acc, x, "", ""};
  return render_node(p, b, &probe, ops, false); /* nothing known: wrapping forms */
}

void emit_args(Buf *b, const RenderLang *lang, const Kernel *k) {
  for (int i = 0; i < k->nargs; i++)
    buf_printf(b, "  const %s *%s in%d = (const %s *)in[%d];\n", emit_types[k->arg_dtypes[i]].elem,
               lang->restrict_kw, i, emit_types[k->arg_dtypes[i]].elem, i);
  if (!k->nargs) buf_str(b, "  (void)in;\n");
  /* a row output is the framing's to declare; a group epilogue's outputs follow */
  for (int o = 0; o < kernel_nouts(k); o++) {
    if (k->has_row_out && o == 1 + k->nextra) continue;
    jx_dtype d = kernel_out_dtype(k, o);
    buf_printf(b, "  %s *%s out%d = (%s *)out[%d];\n", emit_types[d].elem, lang->restrict_kw, o,
               emit_types[d].elem, o);
  }
}


/* ------------------------------------------------ hooks of parallel framings */

/* Expands a hook's format: $T the compute type of d, $N name, $K count, $0/$1 ops. */
static void expand_hook(Buf *b, const char *fmt, jx_dtype d, const char *name, int64_t count,
                        const char *op0, const char *op1) {
  for (const char *p = fmt; *p; p++) {
    if (*p != '$' || !p[1]) {
      buf_add(b, p, 1);
      continue;
    }
    char t = *++p;
    if (t == 'T') buf_str(b, emit_types[d].ctype);
    else if (t == 'N') buf_str(b, name);
    else if (t == 'K') buf_printf(b, "%lld", (long long)count);
    else if (t == '0') buf_str(b, op0);
    else if (t == '1') buf_str(b, op1);
    else buf_add(b, p - 1, 2);
  }
}

bool emit_shared(Buf *b, const RenderLang *lang, const char *indent, jx_dtype d,
                 const char *name, int64_t count) {
  if (!lang->shared_fmt) {
    error_set(JX_ERR_UNSUPPORTED, "render: target %s has no shared memory", lang->name);
    return false;
  }
  buf_str(b, indent);
  expand_hook(b, lang->shared_fmt, d, name, count, "", "");
  buf_str(b, "\n");
  return true;
}

bool emit_barrier(Buf *b, const RenderLang *lang, const char *indent) {
  if (!lang->barrier) {
    error_set(JX_ERR_UNSUPPORTED, "render: target %s has no block barrier", lang->name);
    return false;
  }
  buf_printf(b, "%s%s\n", indent, lang->barrier);
  return true;
}

bool emit_warp_reduce(EmitPart *p, Buf *b, const Reduction *r, const char *acc) {
  const RenderLang *lang = p->lang;
  if (!lang->warp_shuffle_fmt || lang->warp_size < 2) {
    error_set(JX_ERR_UNSUPPORTED, "render: target %s has no warp shuffle", lang->name);
    return false;
  }
  Buf other = {0}, step = {0};
  expand_hook(&other, lang->warp_shuffle_fmt, r->dtype, "", 0, acc, "o");
  bool ok = !other.oom && emit_step(p, &step, r, acc, other.s) && !step.oom;
  if (ok)
    buf_printf(b, "%sfor (int o = %d; o > 0; o /= 2) %s = %s;\n", p->indent, lang->warp_size / 2,
               acc, step.s);
  free(other.s);
  free(step.s);
  if (!ok && jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
  return ok;
}
