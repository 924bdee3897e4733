/* render.c -- renders a Kernel as C-family source through three tables: C types per
 * dtype (dtype_c), format strings per op (op_fmt; a RenderLang overrides entries), and
 * the loop framing (elementwise, or a reduction in the interpreter's order). */
#include "render/render.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"

const RenderLang render_c = {
    .name = "c", .fn_prefix = "", .restrict_kw = "restrict", .overrides = NULL};

/* Outputs of one reduction block: accumulators kept side by side so the loop over them
 * vectorizes (each output still accumulates ridx = 0, 1, ... in order). When the loads
 * of neighbouring outputs are neighbours (column sums), wide blocks stream through
 * memory; otherwise (row sums) a block of 16 becomes 16 independent scalar chains.
 * Measured on AVX-512, sum over a (512, 4096) f32 array: columns 2.0 ms with 16 lanes,
 * 0.24 ms with 256; rows 0.7 ms with 16 unrolled lanes, 1.2-1.6 ms as a lane loop. */
#define REDUCE_BLOCK 16
#define REDUCE_BLOCK_WIDE 256
/* A single-use expression longer than this gets its own local, for readability. */
#define INLINE_MAX 80

/* ------------------------------------------------------------ text buffer */

typedef struct Buf {
  char *s;
  size_t len, cap;
  bool oom;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + n + 1 > cap) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

static void buf_str(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(Buf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    buf_add(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->oom = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  buf_add(b, big, (size_t)n);
  free(big);
}

/* Takes the text (the buffer is reset); NULL if it ran out of memory. */
static char *buf_take(Buf *b) {
  char *s = b->oom ? NULL : b->s;
  if (b->oom) free(b->s);
  if (!s && !b->oom) s = calloc(1, 1);
  *b = (Buf){0};
  return s;
}

/* ------------------------------------------------------------ dtype table */

/* How values of a dtype live in generated code. Formats take the operand as $0. */
typedef struct DtypeC {
  const char *elem;      /* buffer element type */
  const char *ctype;     /* type values are computed in (f16/bf16: float) */
  const char *sfx;       /* suffix of the prelude helpers for ctype: jx_add_i32 */
  const char *wide;      /* unsigned type integer arithmetic wraps in */
  const char *load;      /* buffer element -> value */
  const char *store;     /* value -> buffer element */
  const char *bits;      /* value -> unsigned bits of the same width (BITCAST) */
  const char *from_bits; /* unsigned bits -> value */
  const char *round;     /* float result -> value of the dtype (f16/bf16 only) */
  const char *round64;   /* double -> value of the dtype (floats only) */
} DtypeC;

/* DT(elem, ctype, sfx, wide, load, store, bits, from_bits, round, round64) */
#define DT(e, c, s, w, l, st, b, fb, r, r64)                                             \
  {.elem = e, .ctype = c, .sfx = s, .wide = w, .load = l, .store = st, .bits = b,        \
   .from_bits = fb, .round = r, .round64 = r64}
static const DtypeC dtype_c[JX_NUM_DTYPES] = {
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
  int flags;
} OpFmt;

static const OpFmt op_fmt[ALU_NUM_OPS] = {
    [ALU_ADD] = {.flt = "($0 + $1)", .ints = "jx_add_$S($0, $1)", .plain = "($0 + $1)"},
    [ALU_SUB] = {.flt = "($0 - $1)", .ints = "jx_sub_$S($0, $1)", .plain = "($0 - $1)"},
    [ALU_MUL] = {.flt = "($0 * $1)", .ints = "jx_mul_$S($0, $1)", .plain = "($0 * $1)"},
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
    [ALU_CMPNE] = {.flt = "($0 != $1)", .ints = "($0 != $1)"},
    [ALU_CMPEQ] = {.flt = "($0 == $1)", .ints = "($0 == $1)"},
    [ALU_NEG] = {.flt = "(-$0)", .ints = "jx_neg_$S($0)", .plain = "(-$0)", .flags = EXACT},
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
    [ALU_TANH] = {.flt = "tanh$f($0)"},
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
    [ALU_ERF] = {.flt = "erf$f($0)"},
    [ALU_ERFC] = {.flt = "erfc$f($0)"},
    [ALU_ISNAN] = {.flt = "(isnan($0) != 0)"},
    [ALU_ISINF] = {.flt = "(isinf($0) != 0)"},
    [ALU_WHERE] = {.flt = "($0 ? $1 : $2)", .ints = "($0 ? $1 : $2)", .flags = EXACT},
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
  if (is_float(d)) return f->flt;
  if (d == JX_BOOL && f->bools) return f->bools;
  return plain && f->plain ? f->plain : f->ints;
}

/* Expands a format: operands ops[0..3], dtype placeholders from d. */
static void expand(Buf *b, const char *fmt, const char *const *ops, jx_dtype d) {
  const DtypeC *c = &dtype_c[d];
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

static void render_const(Buf *b, jx_dtype d, AluValue v) {
  switch (d) {
  case JX_BOOL: buf_str(b, v.i ? "1" : "0"); return;
  case JX_INT8: case JX_INT16: buf_printf(b, "((%s)%" PRId64 ")", dtype_c[d].ctype, v.i); return;
  case JX_UINT8: case JX_UINT16: buf_printf(b, "((%s)%" PRIu64 "u)", dtype_c[d].ctype, v.u); return;
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

/* One part of a kernel (its exp or its epilogue) rendered as statements into `out`
 * (each line prefixed by `indent`); the value of the root is returned as text. */
typedef struct Part {
  const RenderLang *lang;
  Buf *out;
  const char *indent;
  int *nlocals; /* counter shared by the parts of a kernel: v0, v1, ... */
} Part;

static void render_cast(Buf *b, const AluExp *e, const char *x) {
  jx_dtype to = e->dtype, from = e->src[0]->dtype;
  const DtypeC *t = &dtype_c[to];
  if (to == from) {
    buf_str(b, x);
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
  Buf bits = {0};
  expand1(&bits, dtype_c[e->src[0]->dtype].bits, x, e->src[0]->dtype);
  expand1(b, dtype_c[e->dtype].from_bits, bits.s ? bits.s : "", e->dtype);
  b->oom |= bits.oom;
  free(bits.s);
}

/* The expression of node e given its operands' texts; NULL format -> failure. */
static bool render_node(Part *p, Buf *b, const AluExp *e, const char *const *ops,
                        bool allow_plain) {
  jx_dtype d = e->dtype;
  switch (e->op) {
  case ALU_CONST: render_const(b, d, e->value); return true;
  case ALU_SPECIAL:
  case ALU_VARIABLE: buf_str(b, e->name); return true;
  case ALU_GLOBAL_INDEX: { /* in bounds: kernels guard their indices */
    Buf elem = {0};
    buf_printf(&elem, "in%lld[%s]", (long long)e->arg, ops[0]);
    expand1(b, dtype_c[d].load, elem.s ? elem.s : "", d);
    b->oom |= elem.oom;
    free(elem.s);
    return true;
  }
  case ALU_CAST: render_cast(b, e, ops[0]); return true;
  case ALU_BITCAST: render_bitcast(b, e, ops[0]); return true;
  default: break;
  }
  /* float max/min with a constant operand: one compare (prelude.h, jx_fmaxc) */
  if ((e->op == ALU_MAX || e->op == ALU_MIN) && (d == JX_FLOAT32 || d == JX_FLOAT64)) {
    int c = e->src[1]->op == ALU_CONST ? 1 : e->src[0]->op == ALU_CONST ? 0 : -1;
    double v = c >= 0 ? e->src[c]->value.f : 0;
    bool zero_ok = v != 0 || (e->op == ALU_MAX ? !signbit(v) : signbit(v));
    if (c >= 0 && !isnan(v) && zero_ok) {
      buf_printf(b, "jx_f%sc_%s(%s, %s)", e->op == ALU_MAX ? "max" : "min", dtype_c[d].sfx,
                 ops[1 - c], ops[c]);
      return true;
    }
  }
  /* Operand dtype decides the format (compares and ISNAN return bool). */
  jx_dtype sd = e->op == ALU_WHERE ? e->src[1]->dtype : e->nsrc ? e->src[0]->dtype : d;
  bool plain = allow_plain && !is_float(sd) && plain_ok(e);
  const char *fmt = op_format(p->lang, e->op, sd, plain);
  if (!fmt) {
    error_set(JX_ERR_UNSUPPORTED, "render: no %s format for %s on %s", p->lang->name,
              alu_op_name(e->op), dtype_short_name(sd));
    return false;
  }
  AluGroup g = alu_op_group(e->op);
  bool to_bool = g == ALU_GROUP_COMPARE || g == ALU_GROUP_UNARY_PRED;
  if (is_float(d) && dtype_c[d].round && !(op_fmt[e->op].flags & (EXACT | ROUNDED))) {
    Buf v = {0}; /* f16/bf16: computed in float, rounded back after every op */
    expand(&v, fmt, ops, sd);
    expand1(b, dtype_c[d].round, v.s ? v.s : "", d);
    b->oom |= v.oom;
    free(v.s);
  } else if (!is_float(d) && !to_bool && d != JX_BOOL && strncmp(fmt, "jx_", 3) != 0 &&
             (dtype_bits(d) < 32 || strstr(fmt, "$W"))) {
    /* Narrow integers promote to int in C: cast back to wrap (and keep the type). */
    buf_printf(b, "((%s)", dtype_c[d].ctype);
    expand(b, fmt, ops, sd);
    buf_str(b, ")");
  } else {
    expand(b, fmt, ops, sd);
  }
  return true;
}

/* A load whose index is guarded, in[valid ? i : 0] (the form of reads in padding,
 * where the value is then discarded): it becomes a local, read whether or not it is
 * used, so a select over it compiles to a blend and vectorizes. Element 0 is always
 * readable: backends allocate at least 64 bytes per buffer (cpu_alloc). */
static bool guarded_load(const AluExp *e) {
  if (e->op != ALU_GLOBAL_INDEX || e->src[0]->op != ALU_WHERE) return false;
  const AluExp *z = e->src[0]->src[2];
  return z->op == ALU_CONST && z->value.i == 0;
}

/* Renders the DAGs below roots[0..nroots) (the outputs of one kernel, which share
 * their nodes); results[r] gets the malloc'd text of root r's value (false: failed,
 * error set). Shared nodes (and long expressions) become locals, in topological order. */
static bool render_parts(Part *p, const AluExp *const *roots, int nroots, char **results) {
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
    if (!leaf && !last && (uses[i] > 1 || strlen(t) > INLINE_MAX || guarded_load(e))) {
      int v = (*p->nlocals)++;
      buf_printf(p->out, "%sconst %s v%d = %s;\n", p->indent, dtype_c[e->dtype].ctype, v, t);
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

/* Renders the DAG below root; returns the malloc'd text of its value (NULL: failed,
 * error set). Shared nodes (and long expressions) become locals, in topological order. */
static char *render_part(Part *p, const AluExp *root) {
  char *result = NULL;
  return render_parts(p, &root, 1, &result) ? result : NULL;
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

static void kernel_name(const Kernel *k, const char *body, char *name) {
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

/* ---------------------------------------------------------------- framing */

/* The accumulator step acc = op(acc, x) as text (rounded for f16/bf16). */
static bool render_step(Part *p, Buf *b, const Reduction *r, const char *acc, const char *x) {
  AluExp probe = {.op = r->op, .dtype = r->dtype, .nsrc = 2};
  const AluExp *leaf = alu_variable("acc", r->dtype);
  if (!leaf) return false;
  probe.src[0] = probe.src[1] = leaf;
  const char *ops[4] = {acc, x, "", ""};
  return render_node(p, b, &probe, ops, false); /* nothing known: wrapping forms */
}

static void render_args(Buf *b, const RenderLang *lang, const Kernel *k) {
  for (int i = 0; i < k->nargs; i++)
    buf_printf(b, "  const %s *%s in%d = (const %s *)in[%d];\n", dtype_c[k->arg_dtypes[i]].elem,
               lang->restrict_kw, i, dtype_c[k->arg_dtypes[i]].elem, i);
  if (!k->nargs) buf_str(b, "  (void)in;\n");
  for (int o = 0; o <= k->nextra; o++) {
    jx_dtype d = o ? k->extra_dtypes[o - 1] : k->dtype;
    buf_printf(b, "  %s *%s out%d = (%s *)out[%d];\n", dtype_c[d].elem, lang->restrict_kw, o,
               dtype_c[d].elem, o);
  }
}

static void render_store(Buf *b, const Kernel *k, const char *indent, const char *value) {
  buf_printf(b, "%sout0[gidx] = ", indent);
  expand1(b, dtype_c[k->dtype].store, value, k->dtype);
  buf_str(b, ";\n");
}

/* ------------------------------------------------------------ loop nests */

/* Kernels address their operands through div/mod of the flat output index gidx by the
 * shape's suffix products ((gidx / 448) % 14 is a row of a (B, 14, 14, 32) image). A
 * nest turns those digits into loop variables: gidx = go*B + i[n-1]*s[n-1] + ... + i0,
 * with s[0] = 1 < s[1] < ... < s[n] = B each dividing the next and i[k] in
 * [0, s[k+1]/s[k]). After substitution the simplifier folds every div/mod by an s[k]
 * into the loop variables, and the innermost loop reads contiguous or strided operands
 * that compilers vectorize (a div and a mod per element defeat them). */
#define NEST_MAX 6

typedef struct Nest {
  int n;                   /* loop variables below the block index go (0: no nest) */
  int64_t s[NEST_MAX + 1]; /* strides; s[n] is the block B */
} Nest;

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Divisors D of gidx in e (gidx / D, gidx % D, and D*b from (gidx / D) % b), up to cap. */
static int gidx_divisors(const AluExp *e, int64_t *ds, int cap) {
  int64_t n;
  int nd = 0;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n && nd + 2 <= cap; i++) {
    const AluExp *x = order[i];
    if ((x->op != ALU_DIV && x->op != ALU_MOD) || x->src[1]->op != ALU_CONST) continue;
    const AluExp *y = x->src[0];
    int64_t d = x->src[1]->value.i;
    if (y->op == ALU_SPECIAL && strcmp(y->name, "gidx") == 0) {
      ds[nd++] = d;
    } else if (x->op == ALU_MOD && y->op == ALU_DIV && y->src[1]->op == ALU_CONST &&
               y->src[0]->op == ALU_SPECIAL && strcmp(y->src[0]->name, "gidx") == 0) {
      int64_t a = y->src[1]->value.i, ab;
      if (a > 0 && d > 0 && !__builtin_mul_overflow(a, d, &ab)) ds[nd++] = ab;
    }
  }
  free((void *)order);
  return nd;
}

/* The nest of e over size outputs: a divisibility chain of its gidx divisors, cut at
 * the largest stride that leaves at least 16 blocks (the partial blocks at the ends
 * of a thread's [start, end) run in the flat loop). n = 0 when e has no divisor. With
 * `lanes`, s[1] (the innermost extent) must be at most `lanes`. */
static Nest find_nest(const AluExp *e, const AluExp *e2, int64_t size, int64_t lanes) {
  int64_t ds[64];
  int nd = gidx_divisors(e, ds, 32);
  if (e2) nd += gidx_divisors(e2, ds + nd, 32);
  qsort(ds, (size_t)nd, sizeof ds[0], cmp_i64);
  Nest nest = {.n = 0, .s = {1}};
  for (int i = 0; i < nd && nest.n < NEST_MAX; i++) {
    int64_t d = ds[i], last = nest.s[nest.n];
    if (d <= last || d % last != 0 || size / d < 16) continue;
    if (lanes && nest.n == 0 && d > lanes) break;
    nest.s[++nest.n] = d;
  }
  return nest;
}

/* e with gidx = go*B + sum i<k>*s[k] (loop variables as SPECIALs), simplified. */
static const AluExp *nest_rewrite(const AluExp *e, const Nest *nest, int64_t size) {
  if (!e) return NULL;
  int64_t B = nest->s[nest->n];
  const AluExp *g = alu_binary(ALU_MUL, alu_special("go", (size + B - 1) / B),
                               alu_const_int(JX_INT64, B));
  static const char *const names[NEST_MAX] = {"i0", "i1", "i2", "i3", "i4", "i5"};
  for (int k = nest->n - 1; k >= 0; k--) {
    const AluExp *ik = alu_special(names[k], nest->s[k + 1] / nest->s[k]);
    g = alu_binary(ALU_ADD, g, k ? alu_binary(ALU_MUL, ik, alu_const_int(JX_INT64, nest->s[k])) : ik);
  }
  return alu_simplify(alu_substitute(e, "gidx", g));
}

/* Indentation for loop depth d (0: the kernel body's). */
static const char *pad(int d) {
  static const char spaces[] = "                                            ";
  int n = 2 + 2 * d;
  return n < (int)sizeof spaces ? spaces + sizeof spaces - 1 - n : spaces;
}

/* Opens the block loop over whole blocks in [head_end, row_end); returns depth 1. */
static int nest_open_block(Buf *b, const Nest *nest) {
  int64_t B = nest->s[nest->n];
  buf_printf(b, "  for (int64_t go = head_end / %lldLL; go < row_end / %lldLL; go++) {\n",
             (long long)B, (long long)B);
  return 1;
}

/* Opens the loops of i[hi] .. i[lo] (none if hi < lo) at depth d; returns the new depth. */
static int nest_open_loops(Buf *b, const Nest *nest, int hi, int lo, int d) {
  for (int k = hi; k >= lo; k--, d++)
    buf_printf(b, k == 0 ? "%sJX_IVDEP\n%sfor (int64_t i%d = 0; i%d < %lldLL; i%d++) {\n"
                         : "%s%sfor (int64_t i%d = 0; i%d < %lldLL; i%d++) {\n", pad(d), k == 0 ? pad(d) : "", k, k,
               (long long)(nest->s[k + 1] / nest->s[k]), k);
  return d;
}

/* Declares gx (this iteration's gidx) from the loop variables. */
static void nest_gx(Buf *b, const Nest *nest, const char *indent) {
  buf_printf(b, "%sconst int64_t gx = go * %lldLL", indent, (long long)nest->s[nest->n]);
  for (int k = nest->n - 1; k >= 0; k--)
    buf_printf(b, k ? " + i%d * %lldLL" : " + i%d", k, (long long)nest->s[k]);
  buf_str(b, ";\n");
}

/* Closes loops from depth d down to depth `to`. */
static void nest_close(Buf *b, int d, int to) {
  while (d > to) buf_printf(b, "%s}\n", pad(--d));
}

/* The loop variable worth splitting: the innermost i[k], k >= 1, of at most 16
 * iterations that e compares with constants (a concatenation's select chain, as in an
 * im2col's kernel position, or the borders of a padded image). -1 if none. */
static int nest_specialize(const AluExp *e, const Nest *nest) {
  int64_t n;
  int best = -1;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n; i++) {
    const AluExp *x = order[i];
    if (alu_op_group(x->op) != ALU_GROUP_COMPARE) continue;
    for (int side = 0; side < 2; side++) {
      const AluExp *v = x->src[side], *c = x->src[1 - side];
      if (v->op != ALU_SPECIAL || c->op != ALU_CONST || v->name[0] != 'i') continue;
      int k = atoi(v->name + 1);
      if (k >= 1 && k < nest->n && nest->s[k + 1] / nest->s[k] <= 16 && (best < 0 || k < best))
        best = k;
    }
  }
  free((void *)order);
  return best;
}

/* The ranges of loop variable `var` (extent n) over which every comparison of var with
 * a constant in e has one value: breakpoints bp[0] = 0 < ... < bp[nb] = n. */
static int split_points(const AluExp *e, const char *var, int64_t n, int64_t *bp) {
  int64_t m, pts[64];
  int np = 0;
  const AluExp **order = alu_toposort(e, &m);
  for (int64_t i = 0; order && i < m && np + 2 <= 64; i++) {
    const AluExp *x = order[i];
    if (alu_op_group(x->op) != ALU_GROUP_COMPARE) continue;
    for (int side = 0; side < 2; side++) {
      const AluExp *v = x->src[side], *c = x->src[1 - side];
      if (v->op != ALU_SPECIAL || c->op != ALU_CONST || strcmp(v->name, var) != 0) continue;
      int64_t k = c->value.i; /* var < k: k; k < var: k + 1; var == k, var != k: both */
      if (x->op == ALU_CMPLT) pts[np++] = side == 0 ? k : k + 1;
      else pts[np++] = k, pts[np++] = k + 1;
    }
  }
  free((void *)order);
  pts[np++] = 0;
  pts[np++] = n;
  qsort(pts, (size_t)np, sizeof pts[0], cmp_i64);
  int nb = 0;
  for (int i = 0; i < np; i++)
    if (pts[i] >= 0 && pts[i] <= n && (nb == 0 || pts[i] != bp[nb - 1])) bp[nb++] = pts[i];
  return nb - 1; /* ranges */
}

/* The [start, end) split into a head and a tail of partial blocks (flat loops) and
 * whole blocks of B between them: declares head_end and row_end. */
static void nest_bounds(Buf *b, int64_t B) {
  buf_printf(b, "  int64_t row_end = end - end %% %lldLL;\n", (long long)B);
  buf_printf(b, "  int64_t head_end = (start + %lldLL - 1) / %lldLL * %lldLL;\n", (long long)B,
             (long long)B, (long long)B);
  buf_str(b, "  if (head_end > end) head_end = end;\n");
  buf_str(b, "  if (row_end < head_end) row_end = head_end;\n");
}

/* Whether a SPECIAL named var occurs in e. */
static bool mentions(const AluExp *e, const char *var) {
  int64_t n;
  bool found = false;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n && !found; i++)
    found = order[i]->op == ALU_SPECIAL && strcmp(order[i]->name, var) == 0;
  free((void *)order);
  return found;
}

/* e with node `from` replaced by `to` (nodes are hash-consed: pointer identity). */
static const AluExp *replace_node(const AluExp *e, const AluExp *from, const AluExp *to,
                                  AluMap *memo) {
  if (e == from) return to;
  if (!e->nsrc) return e;
  const void *hit;
  if (alu_map_get(memo, e, &hit)) return hit;
  const AluExp *src[4];
  for (int i = 0; i < e->nsrc; i++)
    if (!(src[i] = replace_node(e->src[i], from, to, memo))) return NULL;
  const AluExp *r = alu_make(e->op, e->dtype, e->nsrc, src, e->value, e->arg, e->name);
  if (r) alu_map_put(memo, e, r);
  return r;
}

/* The conditions of e's guarded loads (in[c ? i : 0]) that do not involve var, up to
 * cap: loop invariants of the loop over var. */
static int invariant_guards(const AluExp *e, const char *var, const AluExp **g, int cap) {
  int64_t n;
  int ng = 0;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n && ng < cap; i++) {
    if (!guarded_load(order[i])) continue;
    const AluExp *c = order[i]->src[0]->src[0];
    bool seen = false;
    for (int j = 0; j < ng; j++) seen |= g[j] == c;
    if (!seen && !mentions(c, var)) g[ng++] = c;
  }
  free((void *)order);
  return ng;
}

/* The innermost loop (over i0) of a nest block at depth d, storing out0[gx] = e. When
 * e reads padding under conditions that are invariant in i0 (the borders of an image),
 * the loop is unswitched: where they all hold, a copy with plain loads (which
 * vectorizes); elsewhere the guarded form. */
static bool render_inner(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                         const Nest *nest, const AluExp *e, int d) {
  const AluExp *guards[8], *fast = e;
  int ng = invariant_guards(e, "i0", guards, 8);
  for (int i = 0; i < ng && fast; i++) {
    AluMap memo;
    alu_map_init(&memo);
    fast = replace_node(fast, guards[i], alu_const_int(JX_BOOL, 1), &memo);
    alu_map_free(&memo);
  }
  fast = ng && fast ? alu_simplify(fast) : NULL;
  if (ng && !fast) return false;
  int path = 0;
  if (ng) { /* the guards' locals first, then the test */
    Part pc = {.lang = lang, .out = b, .indent = pad(d), .nlocals = nlocals};
    Buf cond = {0};
    for (int i = 0; i < ng; i++) {
      char *t = render_part(&pc, guards[i]);
      if (!t) {
        free(cond.s);
        return false;
      }
      buf_printf(&cond, " && %s", t);
      free(t);
    }
    buf_printf(b, "%sif (1%s) {\n", pad(d), cond.s ? cond.s : "");
    b->oom |= cond.oom;
    free(cond.s);
    d++;
  } else {
    path = 1;
  }
  for (; path < 2; path++) {
    if (ng && path == 1) buf_printf(b, "%s} else {\n", pad(d - 1));
    int di = nest_open_loops(b, nest, 0, 0, d);
    nest_gx(b, nest, pad(di));
    Part q = {.lang = lang, .out = b, .indent = pad(di), .nlocals = nlocals};
    char *w = render_part(&q, path == 0 ? fast : e);
    if (!w) return false;
    buf_printf(b, "%sout0[gx] = ", pad(di));
    expand1(b, dtype_c[k->dtype].store, w, k->dtype);
    buf_str(b, ";\n");
    free(w);
    nest_close(b, di, d);
  }
  if (ng) buf_printf(b, "%s}\n", pad(d - 1));
  return true;
}

/* The whole blocks of an elementwise nest: out0[gx] = nested (a specialized loop
 * variable, if any, unrolled into one copy of the inner loops per value). */
static bool render_nest_body(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                             const Nest *nest, const AluExp *nested) {
  int sp = nest_specialize(nested, nest);
  int d = nest_open_block(b, nest);
  d = nest_open_loops(b, nest, nest->n - 1, sp >= 0 ? sp + 1 : 1, d);
  int64_t bp[66];
  char name[16];
  snprintf(name, sizeof name, "i%d", sp);
  int ranges = sp >= 0 ? split_points(nested, name, nest->s[sp + 1] / nest->s[sp], bp) : 1;
  for (int c = 0; c < ranges; c++) {
    int dc = d;
    const AluExp *e = nested;
    if (sp >= 0) { /* i = lo + j, j in [0, hi - lo): the comparisons fold */
      int64_t lo = bp[c], len = bp[c + 1] - bp[c];
      const AluExp *j = alu_special("j", len);
      e = alu_simplify(alu_substitute(
          nested, name, len == 1 ? alu_const_int(JX_INT64, lo)
                                 : alu_binary(ALU_ADD, j, alu_const_int(JX_INT64, lo))));
      if (!e) return false;
      buf_printf(b, "%sfor (int64_t j%d = 0; j%d < %lldLL; j%d++) { /* %s in [%lld, %lld) */\n",
                 pad(dc), sp, sp, (long long)len, sp, name, (long long)lo, (long long)bp[c + 1]);
      buf_printf(b, "%s  const int64_t %s = %lldLL + j%d;\n", pad(dc), name, (long long)lo, sp);
      if (len > 1) {
        char jn[16];
        snprintf(jn, sizeof jn, "j%d", sp);
        e = alu_substitute(e, "j", alu_special(jn, len));
        if (!e) return false;
      }
      dc = nest_open_loops(b, nest, sp - 1, 1, dc + 1);
    }
    if (!render_inner(lang, k, b, nlocals, nest, e, dc)) return false;
    nest_close(b, dc, d);
  }
  nest_close(b, d, 0);
  return true;
}

/* One loop over [start, end), or -- when the kernel's indices are digits of gidx -- a
 * nest (see Nest) over whole blocks, with the partial blocks at both ends in the flat
 * loop. Both compute exactly the same values. */
static bool render_elementwise(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals) {
  if (k->nextra) { /* several outputs: one flat loop storing each */
    const AluExp *roots[KERNEL_MAX_OUTS] = {k->exp};
    char *v[KERNEL_MAX_OUTS] = {0};
    for (int o = 0; o < k->nextra; o++) roots[1 + o] = k->extra[o];
    Part p = {.lang = lang, .out = b, .indent = "    ", .nlocals = nlocals};
    buf_str(b, "  JX_IVDEP\n  for (int64_t gidx = start; gidx < end; gidx++) {\n");
    if (!render_parts(&p, roots, 1 + k->nextra, v)) return false;
    for (int o = 0; o <= k->nextra; o++) {
      jx_dtype d = o ? k->extra_dtypes[o - 1] : k->dtype;
      buf_printf(b, "    out%d[gidx] = ", o);
      expand1(b, dtype_c[d].store, v[o], d);
      buf_str(b, ";\n");
      free(v[o]);
    }
    buf_str(b, "  }\n");
    return true;
  }
  Nest nest = find_nest(k->exp, NULL, k->size, 0);
  const AluExp *nested = nest.n ? nest_rewrite(k->exp, &nest, k->size) : NULL;
  Part p = {.lang = lang, .out = b, .indent = "    ", .nlocals = nlocals};
  if (!nested) {
    buf_str(b, "  JX_IVDEP\n  for (int64_t gidx = start; gidx < end; gidx++) {\n");
    char *v = render_part(&p, k->exp);
    if (!v) return false;
    render_store(b, k, "    ", v);
    free(v);
    buf_str(b, "  }\n");
    return true;
  }
  nest_bounds(b, nest.s[nest.n]);
  for (int part = 0; part < 2; part++) {
    buf_str(b, part == 0 ? "  JX_IVDEP\n  for (int64_t gidx = start; gidx < head_end; gidx++) {\n"
                         : "  JX_IVDEP\n  for (int64_t gidx = row_end; gidx < end; gidx++) {\n");
    char *v = render_part(&p, k->exp);
    if (!v) return false;
    render_store(b, k, "    ", v);
    free(v);
    buf_str(b, "  }\n");
    if (part == 0 && !render_nest_body(lang, k, b, nlocals, &nest, nested)) return false;
  }
  return true;
}

/* Whether every load below e reads the same or the next element when loop variable
 * `var` (of range n) steps by one (by simplifying the difference of the two index
 * expressions). */
static bool lanes_contiguous(const AluExp *e, const char *var, int64_t n) {
  int64_t count;
  const AluExp **order = alu_toposort(e, &count);
  if (!order) return false;
  const AluExp *v1 = alu_binary(ALU_ADD, alu_special(var, n), alu_const_int(JX_INT64, 1));
  bool ok = v1 != NULL;
  for (int64_t i = 0; i < count && ok; i++) {
    if (order[i]->op != ALU_GLOBAL_INDEX) continue;
    const AluExp *idx = order[i]->src[0];
    const AluExp *d = alu_simplify(alu_binary(ALU_SUB, alu_substitute(idx, var, v1), idx));
    ok = d && d->op == ALU_CONST && (d->value.i == 0 || d->value.i == 1);
  }
  free((void *)order);
  return ok;
}

/* The texts a reduction block needs: the loaded value's statements (`body`), the
 * accumulator step and the identity. */
typedef struct RedText {
  Buf body, step, ident;
} RedText;

static bool red_text(Part *p, const Reduction *r, const AluExp *exp, const char *acc,
                     RedText *t) {
  *t = (RedText){0};
  p->out = &t->body;
  char *v = render_part(p, exp);
  bool ok = v && render_step(p, &t->step, r, acc, v);
  free(v);
  render_const(&t->ident, r->dtype, r->identity);
  return ok && !t->body.oom && !t->step.oom && !t->ident.oom;
}

static void red_text_free(RedText *t) {
  free(t->body.s);
  free(t->step.s);
  free(t->ident.s);
}

/* The stores of a block: out0[gidx] = epilogue(acc) (gidx named by `at`). */
static bool render_red_store(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                             const AluExp *epilogue, const char *indent, const char *at,
                             const char *acc) {
  buf_printf(b, "%sconst %s acc = %s;\n", indent, dtype_c[k->reduction.dtype].ctype, acc);
  for (int o = 0; o <= k->nextra; o++) { /* out0 = epilogue(acc); further epilogues */
    const AluExp *x = o ? k->extra[o - 1] : epilogue;
    jx_dtype d = o ? k->extra_dtypes[o - 1] : k->dtype;
    char *e;
    if (x) {
      Part pe = {.lang = lang, .out = b, .indent = indent, .nlocals = nlocals};
      e = render_part(&pe, x);
    } else {
      e = strdup("acc");
      if (!e) error_set(JX_ERR_OOM, "render: out of memory");
    }
    if (!e) return false;
    buf_printf(b, "%sout%d[%s] = ", indent, o, at);
    expand1(b, dtype_c[d].store, e, d);
    buf_str(b, ";\n");
    free(e);
  }
  return true;
}

/* One output's reduction in lanes: `ct lane[ALU_REDUCE_LANES]` set to the identity, then
 * each ridx accumulated into lane[ridx % 16] -- whole blocks of 16 as a vector loop, then
 * the rest. t holds red_text's texts for the accumulator "lane[l]". */
static void render_row_lanes(Buf *b, const char *ct, int64_t R, const RedText *t) {
  const int64_t L = ALU_REDUCE_LANES, R16 = R - R % L;
  const char *body = t->body.s ? t->body.s : "";
  buf_printf(b, "      %s lane[%lld];\n", ct, (long long)L);
  buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) lane[l] = %s;\n", (long long)L, t->ident.s);
  if (R16) {
    buf_printf(b, "      for (int64_t r0 = 0; r0 < %lldLL; r0 += %lld) {\n", (long long)R16, (long long)L);
    buf_str(b, "        JX_VECTOR_LOOP\n");
    buf_printf(b, "        for (int64_t l = 0; l < %lld; l++) {\n", (long long)L);
    buf_str(b, "          const int64_t ridx = r0 + l;\n");
    buf_str(b, body);
    buf_printf(b, "          lane[l] = %s;\n        }\n      }\n", t->step.s);
  }
  if (R > R16) {
    buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) {\n", (long long)(R - R16));
    buf_printf(b, "        const int64_t ridx = %lldLL + l;\n", (long long)R16);
    buf_str(b, body);
    buf_printf(b, "        lane[l] = %s;\n      }\n", t->step.s);
  }
}

/* A two-phase reduction's first phase for the block of w outputs at gb: pres[j] = the
 * reduction of pre_exp for output gb + j, in ir/alu.h's order (lanes; in order for
 * floating sums and products of fewer than ALU_REDUCE_LANES elements). */
static bool render_pre_block(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                             int64_t w) {
  const Reduction *q = &k->pre;
  const int64_t L = ALU_REDUCE_LANES, R = q->size;
  bool ordered = dtype_is_floating(q->dtype) && (q->op == ALU_ADD || q->op == ALU_MUL) && R < L;
  const char *ct = dtype_c[q->dtype].ctype;
  Part p = {.lang = lang, .indent = "          ", .nlocals = nlocals};
  RedText t;
  Buf comb = {0};
  bool ok = red_text(&p, q, k->pre_exp, ordered ? "a" : "lane[l]", &t) &&
            render_step(&p, &comb, q, "lane[l]", "lane[l + h]") && !comb.oom;
  if (ok) {
    buf_printf(b, "    %s pres[%lld];\n", ct, (long long)w);
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
    buf_str(b, "      const int64_t gidx = gb + j;\n");
    if (ordered) {
      buf_printf(b, "      %s a = %s;\n", ct, t.ident.s);
      buf_printf(b, "      for (int64_t ridx = 0; ridx < %lldLL; ridx++) {\n", (long long)R);
      buf_str(b, t.body.s ? t.body.s : "");
      buf_printf(b, "          a = %s;\n      }\n      pres[j] = a;\n", t.step.s);
    } else {
      render_row_lanes(b, ct, R, &t);
      buf_printf(b, "      for (int64_t h = %lld; h >= 1; h /= 2)\n", (long long)L / 2);
      buf_printf(b, "        for (int64_t l = 0; l < h; l++) lane[l] = %s;\n", comb.s);
      buf_str(b, "      pres[j] = lane[0];\n");
    }
    buf_str(b, "    }\n");
  }
  red_text_free(&t);
  free(comb.s);
  return ok;
}

/* Outputs [lo, hi) (C expressions) in blocks of W = REDUCE_BLOCK(_WIDE) (or size, if
 * smaller): the block's W accumulators are updated together for each ridx, a loop over
 * j with a constant trip count that vectorizes while each output keeps the
 * interpreter's order ridx = 0, 1, ... A last partial block is shifted back to end
 * inside [0, hi); its lanes outside [g0, hi) are computed again (reads stay in bounds)
 * but not stored. */
static bool render_red_flat(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                            const char *lo, const char *hi) {
  const Reduction *r = &k->reduction;
  bool wide = lanes_contiguous(k->exp, "gidx", k->size);
  int64_t w = wide ? REDUCE_BLOCK_WIDE : REDUCE_BLOCK;
  if (k->size < w) w = k->size > 0 ? k->size : 1;
  Part p = {.lang = lang, .indent = "        ", .nlocals = nlocals};
  RedText t;
  bool ok = red_text(&p, r, k->exp, "accs[j]", &t);
  if (ok) {
    buf_printf(b, "  for (int64_t g0 = %s; g0 < %s; g0 += %lld) {\n", lo, hi, (long long)w);
    buf_printf(b, "    const int64_t gb = g0 + %lld <= %s ? g0 : %s >= %lld ? %s - %lld : 0;\n",
               (long long)w, hi, hi, (long long)w, hi, (long long)w);
    if (k->has_pre && !render_pre_block(lang, k, b, nlocals, w)) ok = false;
    buf_printf(b, "    %s accs[%lld];\n", dtype_c[r->dtype].ctype, (long long)w);
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) accs[j] = %s;\n", (long long)w, t.ident.s);
    buf_printf(b, "    for (int64_t ridx = 0; ridx < %lld; ridx++) {\n", (long long)r->size);
    /* Contiguous lanes stay a loop, which vectorizes (GCC would unroll a short one
     * completely first); strided lanes unroll into independent chains. */
    if (wide) buf_str(b, "      JX_VECTOR_LOOP\n");
    buf_printf(b, "      for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
    buf_str(b, "        const int64_t gidx = gb + j;\n");
    buf_str(b, t.body.s ? t.body.s : "");
    buf_printf(b, "        accs[j] = %s;\n", t.step.s);
    buf_str(b, "      }\n    }\n");
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
    buf_str(b, "      const int64_t gidx = gb + j;\n");
    buf_printf(b, "      if (gidx < g0 || gidx >= %s) continue;\n", hi);
    ok = render_red_store(lang, k, b, nlocals, r->epilogue, "      ", "gidx", "accs[j]") && ok;
    buf_str(b, "    }\n  }\n");
  }
  red_text_free(&t);
  return ok;
}

/* Outputs [lo, hi) of a reduction in lane order (ir/alu.h: floating sums and products
 * of at least ALU_REDUCE_LANES elements): each output has ALU_REDUCE_LANES accumulators,
 * lane l taking ridx = l, l + 16, ..., combined as a tree at the end. Row sums (loads
 * contiguous in ridx) vectorize over the lanes, column sums (contiguous in gidx) over a
 * block of outputs with the lanes as an outer loop; other layouts run W independent
 * chains per lane. Blocks as in render_red_flat. */
#define LANES_ROW_BLOCK 8
#define LANES_COL_BLOCK 64
static bool render_red_lanes(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                             const char *lo, const char *hi) {
  const Reduction *r = &k->reduction;
  const int64_t L = ALU_REDUCE_LANES, R = r->size, R16 = R - R % L;
  bool row = lanes_contiguous(k->exp, "ridx", R);
  bool col = !row && lanes_contiguous(k->exp, "gidx", k->size);
  int64_t w = row ? LANES_ROW_BLOCK : col ? LANES_COL_BLOCK : REDUCE_BLOCK;
  if (k->size < w) w = k->size > 0 ? k->size : 1;
  const char *acc = col ? "accs[l][j]" : "accs[j][l]";
  Part p = {.lang = lang, .indent = "        ", .nlocals = nlocals};
  RedText t;
  Buf comb = {0};
  /* a row accumulates into a local vector of lanes, which compilers keep in a register */
  bool ok = red_text(&p, r, k->exp, row ? "lane[l]" : acc, &t) &&
            render_step(&p, &comb, r, col ? "accs[l][j]" : "accs[j][l]",
                        col ? "accs[l + h][j]" : "accs[j][l + h]") && !comb.oom;
  const char *ct = dtype_c[r->dtype].ctype, *body = t.body.s ? t.body.s : "";
  if (ok) {
    buf_printf(b, "  for (int64_t g0 = %s; g0 < %s; g0 += %lld) {\n", lo, hi, (long long)w);
    buf_printf(b, "    const int64_t gb = g0 + %lld <= %s ? g0 : %s >= %lld ? %s - %lld : 0;\n",
               (long long)w, hi, hi, (long long)w, hi, (long long)w);
    if (k->has_pre && !render_pre_block(lang, k, b, nlocals, w)) ok = false;
    if (col) buf_printf(b, "    %s accs[%lld][%lld];\n", ct, (long long)L, (long long)w);
    else buf_printf(b, "    %s accs[%lld][%lld];\n", ct, (long long)w, (long long)L);
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++)\n", (long long)w);
    buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) %s = %s;\n", (long long)L, acc, t.ident.s);
    if (row) {
      buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
      buf_str(b, "      const int64_t gidx = gb + j;\n");
      render_row_lanes(b, ct, R, &t);
      buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) accs[j][l] = lane[l];\n    }\n", (long long)L);
    }
    for (int part = 0; part < 2 && !row; part++) { /* whole blocks of L, then the rest */
      int64_t lanes = part == 0 ? L : R - R16;
      if (part == 0 && R16 == 0) continue;
      if (part == 1 && lanes == 0) break;
      if (part == 0) buf_printf(b, "    for (int64_t r0 = 0; r0 < %lldLL; r0 += %lld) {\n", (long long)R16, (long long)L);
      else buf_printf(b, "    {\n      const int64_t r0 = %lldLL;\n", (long long)R16);
      buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) {\n", (long long)lanes);
      buf_str(b, "        const int64_t ridx = r0 + l;\n");
      if (col) buf_str(b, "        JX_VECTOR_LOOP\n");
      buf_printf(b, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
      buf_str(b, "          const int64_t gidx = gb + j;\n");
      buf_str(b, body);
      buf_printf(b, "          %s = %s;\n", acc, t.step.s);
      buf_str(b, "        }\n      }\n    }\n");
    }
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
    buf_str(b, "      const int64_t gidx = gb + j;\n");
    buf_printf(b, "      if (gidx < g0 || gidx >= %s) continue;\n", hi);
    buf_printf(b, "      for (int64_t h = %lld; h >= 1; h /= 2)\n", (long long)L / 2);
    buf_printf(b, "        for (int64_t l = 0; l < h; l++) %s = %s;\n", acc, comb.s);
    ok = render_red_store(lang, k, b, nlocals, r->epilogue, "      ", "gidx",
                          col ? "accs[0][j]" : "accs[j][0]") && ok;
    buf_str(b, "    }\n  }\n");
  }
  red_text_free(&t);
  free(comb.s);
  return ok;
}

/* A reduction: in lanes (render_red_lanes) where its order or layout calls for them;
 * else, when its indices are digits of gidx, whole blocks as a loop nest (Nest) whose
 * innermost extent n0 = s[1] is split into lane blocks of W outputs (as in the flat
 * form, the last one shifted back), partial blocks at the ends in the flat form; else
 * the flat form. */
static bool render_reduction(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals) {
  const Reduction *r = &k->reduction;
  Kernel kk = *k;
  if (k->has_pre) { /* VARIABLE pre -> this output's first-phase value, pres[j] */
    const AluExp *pv = alu_variable("pres[j]", k->pre.dtype);
    kk.exp = alu_substitute(k->exp, "pre", pv);
    if (r->epilogue) kk.reduction.epilogue = alu_substitute(r->epilogue, "pre", pv);
    for (int o = 0; o < k->nextra; o++) kk.extra[o] = alu_substitute(k->extra[o], "pre", pv);
  }
  /* Lane order where the IR asks for it, and for row reductions by ops whose result
   * does not depend on the order (all others: integer wrap-around arithmetic, min/max,
   * bitwise), where the lanes are what vectorizes. */
  bool order_free = !(dtype_is_floating(r->dtype) && (r->op == ALU_ADD || r->op == ALU_MUL));
  if (alu_reduce_in_lanes(r->op, r->dtype, r->size) ||
      (order_free && r->size >= ALU_REDUCE_LANES && lanes_contiguous(kk.exp, "ridx", r->size)))
    return render_red_lanes(lang, &kk, b, nlocals, "start", "end");
  /* first phases and further outputs have no nest form */
  if (k->has_pre || k->nextra) return render_red_flat(lang, &kk, b, nlocals, "start", "end");
  Nest nest = find_nest(k->exp, r->epilogue, k->size, REDUCE_BLOCK_WIDE);
  const AluExp *exp = nest.n ? nest_rewrite(k->exp, &nest, k->size) : NULL;
  const AluExp *epi = exp && r->epilogue ? nest_rewrite(r->epilogue, &nest, k->size) : NULL;
  if (!exp || (r->epilogue && !epi)) return render_red_flat(lang, k, b, nlocals, "start", "end");
  int64_t n0 = nest.s[1];
  bool wide = lanes_contiguous(exp, "i0", n0);
  int64_t w = wide ? REDUCE_BLOCK_WIDE : REDUCE_BLOCK;
  if (n0 < w) w = n0;
  nest_bounds(b, nest.s[nest.n]);
  if (!render_red_flat(lang, k, b, nlocals, "start", "head_end")) return false;
  int depth = nest_open_loops(b, &nest, nest.n - 1, 1, nest_open_block(b, &nest));
  const char *in = pad(depth);
  Part p = {.lang = lang, .indent = "        ", .nlocals = nlocals};
  RedText t;
  bool ok = red_text(&p, r, exp, "accs[j]", &t);
  if (ok) {
    buf_printf(b, "%sfor (int64_t j0 = 0; j0 < %lldLL; j0 += %lld) {\n", in, (long long)n0,
               (long long)w);
    buf_printf(b, "%s  const int64_t jb = j0 + %lld <= %lldLL ? j0 : %lldLL - %lld;\n", in,
               (long long)w, (long long)n0, (long long)n0, (long long)w);
    buf_printf(b, "%s  %s accs[%lld];\n", in, dtype_c[r->dtype].ctype, (long long)w);
    buf_printf(b, "%s  for (int64_t j = 0; j < %lld; j++) accs[j] = %s;\n", in, (long long)w,
               t.ident.s);
    buf_printf(b, "%s  for (int64_t ridx = 0; ridx < %lld; ridx++) {\n", in, (long long)r->size);
    if (wide) buf_printf(b, "%s    JX_VECTOR_LOOP\n", in);
    buf_printf(b, "%s    for (int64_t j = 0; j < %lld; j++) {\n", in, (long long)w);
    buf_printf(b, "%s      const int64_t i0 = jb + j;\n", in);
    buf_str(b, t.body.s ? t.body.s : "");
    buf_printf(b, "%s      accs[j] = %s;\n", in, t.step.s);
    buf_printf(b, "%s    }\n%s  }\n", in, in);
    buf_printf(b, "%s  for (int64_t j = 0; j < %lld; j++) {\n", in, (long long)w);
    buf_printf(b, "%s    const int64_t i0 = jb + j;\n", in);
    buf_printf(b, "%s    if (i0 < j0) continue;\n", in);
    nest_gx(b, &nest, pad(depth + 2));
    ok = render_red_store(lang, k, b, nlocals, epi, pad(depth + 2), "gx", "accs[j]");
    buf_printf(b, "%s  }\n%s}\n", in, in);
    nest_close(b, depth, 0);
  }
  red_text_free(&t);
  return ok && render_red_flat(lang, k, b, nlocals, "row_end", "end");
}

char *render_kernel(const RenderLang *lang, const Kernel *k, char name[RENDER_NAME_MAX]) {
  if (!k || !k->exp || k->nargs < 0 || k->nargs > KERNEL_MAX_ARGS) {
    error_set(JX_ERR_INTERNAL, "render_kernel: invalid kernel");
    return NULL;
  }
  Buf body = {0};
  int nlocals = 0;
  render_args(&body, lang, k);
  bool ok = k->has_reduction ? render_reduction(lang, k, &body, &nlocals)
                             : render_elementwise(lang, k, &body, &nlocals);
  buf_str(&body, "}\n");
  char *text = buf_take(&body);
  if (!ok || !text) {
    free(text);
    if (ok) error_set(JX_ERR_OOM, "render: out of memory");
    return NULL;
  }
  kernel_name(k, text, name);
  Buf full = {0};
  char *printed = kernel_print(k); /* the IR, as a comment above the function */
  if (printed) {
    buf_str(&full, "/*\n");
    for (char *line = printed, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
      nl = strchr(line, '\n');
      size_t len = nl ? (size_t)(nl - line) : strlen(line);
      buf_str(&full, " * ");
      for (size_t c = 0; c < len; c++) /* never close the comment early */
        buf_add(&full, line[c] == '*' && c + 1 < len && line[c + 1] == '/' ? "+" : line + c, 1);
      buf_str(&full, "\n");
      if (!nl) break;
    }
    buf_str(&full, " */\n");
    free(printed);
  }
  buf_printf(&full, "%svoid %s(void *const *in, void *const *out, int64_t start, int64_t end) {\n",
             lang->fn_prefix, name);
  buf_str(&full, text);
  free(text);
  char *result = buf_take(&full);
  if (!result) error_set(JX_ERR_OOM, "render: out of memory");
  return result;
}

/* --------------------------------------------------------------- prelude */

/* Generated at build time from prelude.h (CMakeLists.txt, jaxc_embed). */
extern const char render_prelude_text[];
extern const size_t render_prelude_text_len;

const char *render_prelude(void) { return render_prelude_text; }
size_t render_prelude_len(void) { return render_prelude_text_len; }
