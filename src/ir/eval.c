/* eval.c -- the scalar semantics of every kernel-IR op (alu.def), shared by the
 * reference interpreter and the constant folder, plus loads/stores of buffer elements.
 * Integers wrap to their width; floats are computed in double and rounded once to the
 * dtype, which for + - * / sqrt gives the same bits as computing in the dtype. */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "ir/alu.h"

/* ---------------------------------------------------------------- rounding */

/* double -> float rounding to odd: truncate toward zero, and set the last bit when the
 * result is inexact. Rounding that float to a format with at least 2 fewer significand
 * bits (f16: 11, bf16: 8, vs 24) then rounds correctly from the double (Boldo &
 * Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
 * rounding to odd", IEEE TC 2008), avoiding double rounding. */
static float round_to_odd_f32(double d) {
  float f = (float)d;
  if (isnan(d) || isinf(d) || isinf(f) || (double)f == d) return f;
  if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
  uint32_t u;
  memcpy(&u, &f, 4);
  u |= 1;
  memcpy(&f, &u, 4);
  return f;
}

static double round_f16(double d) {
  return dtype_f16_to_f32(dtype_f32_to_f16(round_to_odd_f32(d)));
}
static double round_bf16(double d) {
  return dtype_bf16_to_f32(dtype_f32_to_bf16(round_to_odd_f32(d)));
}

AluValue alu_normalize(jx_dtype dtype, AluValue v) {
  AluValue r;
  switch (dtype) {
  case JX_BOOL: r.i = v.i != 0; break;
  case JX_INT8: r.i = (int8_t)(uint8_t)v.u; break; /* modular (two's complement) */
  case JX_UINT8: r.u = (uint8_t)v.u; break;
  case JX_INT16: r.i = (int16_t)(uint16_t)v.u; break;
  case JX_UINT16: r.u = (uint16_t)v.u; break;
  case JX_INT32: r.i = (int32_t)(uint32_t)v.u; break;
  case JX_UINT32: r.u = (uint32_t)v.u; break;
  case JX_INT64: r.i = v.i; break;
  case JX_UINT64: r.u = v.u; break;
  case JX_FLOAT16: r.f = round_f16(v.f); break;
  case JX_BFLOAT16: r.f = round_bf16(v.f); break;
  case JX_FLOAT32: r.f = (float)v.f; break;
  case JX_COMPLEX64: r.c.re = (float)v.c.re, r.c.im = (float)v.c.im; break;
  case JX_COMPLEX128: r.c.re = v.c.re, r.c.im = v.c.im; break;
  default: r.f = v.f; break;
  }
  return r;
}

/* ------------------------------------------------------------------- casts */

/* The common dtypes answered inline: the interpreter asks per element. */
static bool is_float(jx_dtype d) {
  return d == JX_FLOAT32 || d == JX_FLOAT64 || (d != JX_INT64 && d != JX_INT32 && dtype_is_floating(d));
}
static bool is_unsigned(jx_dtype d) {
  return d != JX_INT64 && d != JX_INT32 && d != JX_FLOAT32 && d != JX_BOOL && dtype_is_unsigned(d);
}

/* float -> int: saturating, NaN -> 0 (XLA's convert, like LLVM fptosi.sat). */
static AluValue float_to_int(jx_dtype to, double x) {
  AluValue r = {.u = 0};
  if (isnan(x)) return r;
  int bits = dtype_bits(to);
  if (is_unsigned(to)) {
    double top = ldexp(1.0, bits); /* 2^bits */
    if (x <= -1.0) r.u = 0;
    else if (x >= top) r.u = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    else r.u = (uint64_t)trunc(x < 0 ? 0.0 : x);
  } else {
    double top = ldexp(1.0, bits - 1); /* 2^(bits-1) */
    if (x >= top) r.i = (int64_t)((1ull << (bits - 1)) - 1);
    else if (x < -top) r.i = bits == 64 ? INT64_MIN : -(int64_t)(1ull << (bits - 1));
    else r.i = (int64_t)trunc(x);
  }
  return r;
}

static AluValue cast_value(jx_dtype to, jx_dtype from, AluValue v) {
  AluValue r = {.c = {0, 0}};
  if (dtype_is_complex(from)) { /* complex -> real drops the imaginary part (JAX) */
    if (dtype_is_complex(to)) return alu_normalize(to, v);
    if (to == JX_BOOL) {
      r.i = v.c.re != 0.0 || v.c.im != 0.0;
      return r;
    }
    return cast_value(to, dtype_real_part(from), (AluValue){.f = v.c.re});
  }
  if (dtype_is_complex(to)) { /* real -> complex: the part's cast, +0 imaginary */
    r.c.re = cast_value(dtype_real_part(to), from, v).f;
    r.c.im = 0.0;
    return r;
  }
  if (is_float(from)) {
    if (to == JX_BOOL) r.i = v.f != 0.0; /* NaN is true, as bool(nan) */
    else if (is_float(to)) r.f = v.f;
    else return float_to_int(to, v.f);
    return alu_normalize(to, r);
  }
  bool u = is_unsigned(from);
  if (to == JX_BOOL) {
    r.i = v.u != 0;
  } else if (to == JX_FLOAT32) { /* direct conversion: correctly rounded */
    r.f = u ? (double)(float)v.u : (double)(float)v.i;
    return r;
  } else if (is_float(to)) {
    r.f = u ? (double)v.u : (double)v.i;
  } else {
    r.u = v.u; /* two's complement bits; normalize wraps to the target width */
  }
  return alu_normalize(to, r);
}

/* The raw bits of a value of dtype d (zero-extended to 64). */
static uint64_t value_bits(jx_dtype d, AluValue v) {
  switch (d) {
  case JX_FLOAT16: return dtype_f32_to_f16((float)v.f);
  case JX_BFLOAT16: return dtype_f32_to_bf16((float)v.f);
  case JX_FLOAT32: {
    float f = (float)v.f;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  case JX_FLOAT64: return v.u;
  default: {
    int bits = dtype_bits(d);
    return bits == 64 ? v.u : v.u & ((1ull << bits) - 1);
  }
  }
}

static AluValue from_bits(jx_dtype d, uint64_t b) {
  AluValue r;
  switch (d) {
  case JX_FLOAT16: r.f = dtype_f16_to_f32((uint16_t)b); return r;
  case JX_BFLOAT16: r.f = dtype_bf16_to_f32((uint16_t)b); return r;
  case JX_FLOAT32: {
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, 4);
    r.f = f;
    return r;
  }
  case JX_FLOAT64: r.u = b; return r;
  default: r.u = b; return alu_normalize(d, r);
  }
}

/* ---------------------------------------------------------------- threefry */

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as
 * 1, 2, 3", SC'11; Random123's threefry2x32_R(20)), following JAX's
 * _threefry2x32_lowering (jax/_src/random/threefry2x32.py): rotations
 * {13,15,26,6},{17,29,16,24}, key schedule ks2 = k0 ^ k1 ^ 0x1BD11BDA, injection
 * every 4 rounds of ks[(i+1)%3], ks[(i+2)%3] + i + 1. */
static uint64_t threefry2x32(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1) {
  static const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
  for (int i = 0; i < 5; i++) {
    for (int r = 0; r < 4; r++) {
      x0 += x1;
      x1 = rotl32(x1, rot[i % 2][r]);
      x1 ^= x0;
    }
    x0 += ks[(i + 1) % 3];
    x1 += ks[(i + 2) % 3] + (uint32_t)(i + 1);
  }
  return ((uint64_t)x0 << 32) | x1;
}

/* ---------------------------------------------------------------- integers */

/* x**y by squaring, wrapping; a negative exponent gives 0 except for bases 1 and -1
 * (XLA's integer pow). */
static uint64_t int_pow(uint64_t base, int64_t e, bool is_signed) {
  if (is_signed && e < 0) {
    if ((int64_t)base == 1) return 1;
    if ((int64_t)base == -1) return (e & 1) ? (uint64_t)-1 : 1;
    return 0;
  }
  uint64_t r = 1, n = (uint64_t)e;
  while (n) {
    if (n & 1) r *= base;
    base *= base;
    n >>= 1;
  }
  return r;
}

static AluValue eval_int_binary(AluOp op, jx_dtype d, AluValue a, AluValue b) {
  bool s = !is_unsigned(d); /* bool behaves as a signed 0/1 */
  int bits = op == ALU_SHL || op == ALU_SHR ? dtype_bits(d) : 0;
  AluValue r = {.u = 0};
  switch (op) {
  case ALU_ADD: r.u = a.u + b.u; break;
  case ALU_SUB: r.u = a.u - b.u; break;
  case ALU_MUL: r.u = a.u * b.u; break;
  case ALU_DIV:
    if (s) {
      if (b.i == 0) r.i = -1;
      else if (b.i == -1) r.u = 0 - a.u; /* INT_MIN / -1 wraps to INT_MIN */
      else r.i = a.i / b.i;
    } else {
      r.u = b.u == 0 ? UINT64_MAX : a.u / b.u;
    }
    break;
  case ALU_MOD:
    if (s) r.i = b.i == 0 ? a.i : b.i == -1 ? 0 : a.i % b.i;
    else r.u = b.u == 0 ? a.u : a.u % b.u;
    break;
  case ALU_MIN: r = (s ? a.i < b.i : a.u < b.u) ? a : b; break;
  case ALU_MAX: r = (s ? a.i > b.i : a.u > b.u) ? a : b; break;
  case ALU_POW: r.u = int_pow(a.u, b.i, s); break;
  case ALU_AND: r.u = a.u & b.u; break;
  case ALU_OR: r.u = a.u | b.u; break;
  case ALU_XOR: r.u = a.u ^ b.u; break;
  case ALU_SHL:
    if (s ? (b.i < 0 || b.i >= bits) : b.u >= (uint64_t)bits) r.u = 0;
    else r.u = a.u << b.u;
    break;
  case ALU_SHR:
    if (s) {
      if (b.i < 0 || b.i >= bits) r.i = a.i < 0 ? -1 : 0;
      else r.i = a.i < 0 ? ~(~a.i >> b.i) : a.i >> b.i; /* arithmetic, portably */
    } else {
      r.u = b.u >= (uint64_t)bits ? 0 : a.u >> b.u;
    }
    break;
  default: break;
  }
  return alu_normalize(d, r);
}

static AluValue eval_int_unary(AluOp op, jx_dtype d, AluValue a) {
  AluValue r = a;
  bool s = !is_unsigned(d);
  switch (op) {
  case ALU_NEG: r.u = 0 - a.u; break;
  case ALU_NOT: r.u = d == JX_BOOL ? (uint64_t)!a.i : ~a.u; break;
  case ALU_ABS: r.u = s && a.i < 0 ? 0 - a.u : a.u; break;
  case ALU_SIGN: r.i = s ? (a.i > 0) - (a.i < 0) : a.u != 0; break;
  case ALU_FLOOR: case ALU_CEIL: case ALU_ROUND: case ALU_TRUNC: break;
  default: { /* float math on an int (the checker rejects it): via double, saturating */
    double x = s ? (double)a.i : (double)a.u;
    AluValue f = alu_eval_op(op, JX_FLOAT64, JX_FLOAT64, &(AluValue){.f = x});
    return cast_value(d, JX_FLOAT64, f);
  }
  }
  return alu_normalize(d, r);
}

/* ------------------------------------------------------------------ floats */

/* Half to even, keeping the sign of zero (rint without depending on the rounding mode). */
static double round_half_even(double x) {
  if (!isfinite(x)) return x;
  double f = floor(x), diff = x - f, r;
  if (diff > 0.5) r = f + 1.0;
  else if (diff < 0.5) r = f;
  else r = fmod(f, 2.0) == 0.0 ? f : f + 1.0;
  return r == 0.0 ? copysign(0.0, x) : r;
}

static double eval_float_unary(AluOp op, double x) {
  switch (op) {
  case ALU_NEG: return -x;
  case ALU_ABS: return fabs(x);
  case ALU_SIGN: return isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : x;
  case ALU_SIN: return sin(x);
  case ALU_COS: return cos(x);
  case ALU_TAN: return tan(x);
  case ALU_ASIN: return asin(x);
  case ALU_ACOS: return acos(x);
  case ALU_ATAN: return atan(x);
  case ALU_SINH: return sinh(x);
  case ALU_COSH: return cosh(x);
  case ALU_TANH: return tanh(x);
  case ALU_ASINH: return asinh(x);
  case ALU_ACOSH: return acosh(x);
  case ALU_ATANH: return atanh(x);
  case ALU_EXP: return exp(x);
  case ALU_EXP2: return exp2(x);
  case ALU_EXPM1: return expm1(x);
  case ALU_LOG: return log(x);
  case ALU_LOG2: return log2(x);
  case ALU_LOG1P: return log1p(x);
  case ALU_SQRT: return sqrt(x);
  case ALU_RSQRT: return 1.0 / sqrt(x);
  case ALU_CBRT: return cbrt(x);
  case ALU_RECIPROCAL: return 1.0 / x;
  case ALU_FLOOR: return floor(x);
  case ALU_CEIL: return ceil(x);
  case ALU_ROUND: return round_half_even(x);
  case ALU_TRUNC: return trunc(x);
  case ALU_ERF: return erf(x);
  case ALU_ERFC: return erfc(x);
  default: return NAN;
  }
}

static double eval_float_binary(AluOp op, double a, double b) {
  switch (op) {
  case ALU_ADD: return a + b;
  case ALU_SUB: return a - b;
  case ALU_MUL: return a * b;
  case ALU_DIV: return a / b;
  case ALU_MOD: return fmod(a, b);
  case ALU_MIN: /* NaN propagates; min(-0, +0) = -0 */
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
  case ALU_MAX: /* max(-0, +0) = +0 */
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
  case ALU_POW: return pow(a, b);
  case ALU_ATAN2: return atan2(a, b);
  default: return NAN;
  }
}

/* ----------------------------------------------------------------- complex */

/* The ops the IR evaluates natively on complex values (alu_complex_native), each part
 * rounded to the part's dtype after every real operation, as the C renderer's
 * float code computes them (no contraction into FMAs, except the two of a product,
 * as XLA's: src/render/prelude.h). */
static AluValue eval_complex(AluOp op, jx_dtype d, const AluValue *args) {
  jx_dtype p = dtype_real_part(d);
  AluValue a = args[0], b = op == ALU_NEG ? a : args[1], r = {.c = {0, 0}};
#define RND(x) alu_normalize(p, (AluValue){.f = (x)}).f
  switch (op) {
  case ALU_ADD: r.c.re = a.c.re + b.c.re, r.c.im = a.c.im + b.c.im; break;
  case ALU_SUB: r.c.re = a.c.re - b.c.re, r.c.im = a.c.im - b.c.im; break;
  case ALU_NEG: r.c.re = -a.c.re, r.c.im = -a.c.im; break;
  case ALU_MUL: /* fma(a, c, -bd) + fma(b, c, ad)i, as XLA's CPU: no special cases */
    if (p == JX_FLOAT32) {
      r.c.re = fmaf((float)a.c.re, (float)b.c.re, -(float)RND(a.c.im * b.c.im));
      r.c.im = fmaf((float)a.c.im, (float)b.c.re, (float)RND(a.c.re * b.c.im));
    } else {
      r.c.re = fma(a.c.re, b.c.re, -(a.c.im * b.c.im));
      r.c.im = fma(a.c.im, b.c.re, a.c.re * b.c.im);
    }
    break;
  default: r.c.re = r.c.im = NAN; break;
  }
#undef RND
  return alu_normalize(d, r);
}

/* ----------------------------------------------------------------- dispatch */

AluValue alu_eval_op(AluOp op, jx_dtype dtype, jx_dtype src_dtype, const AluValue *args) {
  AluValue r = {.u = 0};
  switch (alu_op_group(op)) {
  case ALU_GROUP_BINARY:
    if (dtype_is_complex(dtype)) return eval_complex(op, dtype, args);
    if (is_float(dtype)) r.f = eval_float_binary(op, args[0].f, args[1].f);
    else return eval_int_binary(op, dtype, args[0], args[1]);
    return alu_normalize(dtype, r);
  case ALU_GROUP_COMPARE: {
    AluValue a = args[0], b = args[1];
    int lt, eq;
    if (dtype_is_complex(src_dtype))
      lt = 0, eq = a.c.re == b.c.re && a.c.im == b.c.im; /* only == and != are defined */
    else if (is_float(src_dtype)) lt = a.f < b.f, eq = a.f == b.f;
    else if (is_unsigned(src_dtype)) lt = a.u < b.u, eq = a.u == b.u;
    else lt = a.i < b.i, eq = a.i == b.i;
    r.i = op == ALU_CMPLT ? lt : op == ALU_CMPEQ ? eq : !eq; /* NaN: only != holds */
    return r;
  }
  case ALU_GROUP_UNARY:
    if (dtype_is_complex(dtype)) return eval_complex(op, dtype, args);
    if (!is_float(dtype)) return eval_int_unary(op, dtype, args[0]);
    r.f = eval_float_unary(op, args[0].f);
    return alu_normalize(dtype, r);
  case ALU_GROUP_UNARY_PRED:
    if (is_float(src_dtype)) /* != 0: glibc's isinf returns -1 for -inf */
      r.i = (op == ALU_ISNAN ? isnan(args[0].f) : isinf(args[0].f)) != 0;
    return r;
  default:
    break;
  }
  switch (op) {
  case ALU_CAST: return cast_value(dtype, src_dtype, args[0]);
  case ALU_BITCAST: return from_bits(dtype, value_bits(src_dtype, args[0]));
  case ALU_WHERE: return args[0].i ? args[1] : args[2];
  case ALU_FMA:
    r.f = dtype == JX_FLOAT32 ? (double)fmaf((float)args[0].f, (float)args[1].f, (float)args[2].f)
                              : fma(args[0].f, args[1].f, args[2].f);
    return r;
  case ALU_REAL: r.f = args[0].c.re; return r;
  case ALU_IMAG: r.f = args[0].c.im; return r;
  case ALU_COMPLEX: r.c.re = args[0].f, r.c.im = args[1].f; return alu_normalize(dtype, r);
  case ALU_THREEFRY2X32:
    r.u = threefry2x32((uint32_t)args[0].u, (uint32_t)args[1].u, (uint32_t)args[2].u,
                       (uint32_t)args[3].u);
    return r;
  default: /* leaves and loads are not scalar functions; the interpreter binds them */
    return r;
  }
}

/* ------------------------------------------------------------ loads, stores */

AluValue alu_load(const void *buf, jx_dtype dtype, int64_t i) {
  AluValue r;
  switch (dtype) {
  case JX_BOOL: r.i = ((const uint8_t *)buf)[i] != 0; break;
  case JX_INT8: r.i = ((const int8_t *)buf)[i]; break;
  case JX_UINT8: r.u = ((const uint8_t *)buf)[i]; break;
  case JX_INT16: r.i = ((const int16_t *)buf)[i]; break;
  case JX_UINT16: r.u = ((const uint16_t *)buf)[i]; break;
  case JX_INT32: r.i = ((const int32_t *)buf)[i]; break;
  case JX_UINT32: r.u = ((const uint32_t *)buf)[i]; break;
  case JX_INT64: r.i = ((const int64_t *)buf)[i]; break;
  case JX_UINT64: r.u = ((const uint64_t *)buf)[i]; break;
  case JX_FLOAT16: r.f = dtype_f16_to_f32(((const uint16_t *)buf)[i]); break;
  case JX_BFLOAT16: r.f = dtype_bf16_to_f32(((const uint16_t *)buf)[i]); break;
  case JX_FLOAT32: r.f = ((const float *)buf)[i]; break;
  case JX_COMPLEX64:
    r.c.re = ((const float *)buf)[2 * i], r.c.im = ((const float *)buf)[2 * i + 1];
    break;
  case JX_COMPLEX128:
    r.c.re = ((const double *)buf)[2 * i], r.c.im = ((const double *)buf)[2 * i + 1];
    break;
  default: r.f = ((const double *)buf)[i]; break;
  }
  return r;
}

void alu_store(void *buf, jx_dtype dtype, int64_t i, AluValue v) {
  switch (dtype) {
  case JX_BOOL: ((uint8_t *)buf)[i] = v.i != 0; break;
  case JX_INT8: ((int8_t *)buf)[i] = (int8_t)v.i; break;
  case JX_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v.u; break;
  case JX_INT16: ((int16_t *)buf)[i] = (int16_t)v.i; break;
  case JX_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v.u; break;
  case JX_INT32: ((int32_t *)buf)[i] = (int32_t)v.i; break;
  case JX_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v.u; break;
  case JX_INT64: ((int64_t *)buf)[i] = v.i; break;
  case JX_UINT64: ((uint64_t *)buf)[i] = v.u; break;
  case JX_FLOAT16: ((uint16_t *)buf)[i] = dtype_f32_to_f16(round_to_odd_f32(v.f)); break;
  case JX_BFLOAT16: ((uint16_t *)buf)[i] = dtype_f32_to_bf16(round_to_odd_f32(v.f)); break;
  case JX_FLOAT32: ((float *)buf)[i] = (float)v.f; break;
  case JX_COMPLEX64:
    ((float *)buf)[2 * i] = (float)v.c.re, ((float *)buf)[2 * i + 1] = (float)v.c.im;
    break;
  case JX_COMPLEX128:
    ((double *)buf)[2 * i] = v.c.re, ((double *)buf)[2 * i + 1] = v.c.im;
    break;
  default: ((double *)buf)[i] = v.f; break;
  }
}

bool alu_reduce_in_lanes(AluOp op, jx_dtype dtype, int64_t size) {
  return dtype_is_inexact(dtype) && (op == ALU_ADD || op == ALU_MUL) && size >= ALU_REDUCE_LANES;
}

AluValue alu_reduce_combine_lanes(AluOp op, jx_dtype dtype, AluValue *lane) {
  for (int h = ALU_REDUCE_LANES / 2; h >= 1; h /= 2)
    for (int l = 0; l < h; l++) {
      AluValue args[2] = {lane[l], lane[l + h]};
      lane[l] = alu_eval_op(op, dtype, dtype, args);
    }
  return lane[0];
}

AluValue alu_reduce_identity(AluOp op, jx_dtype d) {
  bool fl = dtype_is_floating(d);
  if (dtype_is_complex(d)) /* sum and prod only */
    return (AluValue){.c = {op == ALU_MUL ? 1.0 : 0.0, 0.0}};
  switch (op) {
  case ALU_MUL:
    return fl ? alu_normalize(d, (AluValue){.f = 1.0}) : alu_normalize(d, (AluValue){.i = 1});
  case ALU_AND:
    return d == JX_UINT64 ? (AluValue){.u = UINT64_MAX}
                          : alu_normalize(d, (AluValue){.i = dtype_is_bool(d) ? 1 : -1});
  case ALU_MAX:
    if (fl) return (AluValue){.f = -INFINITY};
    if (dtype_is_unsigned(d) || dtype_is_bool(d)) return alu_normalize(d, (AluValue){.i = 0});
    return (AluValue){.i = d == JX_INT64 ? INT64_MIN : (int64_t)dtype_min_value(d)};
  case ALU_MIN:
    if (fl) return (AluValue){.f = INFINITY};
    if (d == JX_UINT64) return (AluValue){.u = UINT64_MAX};
    if (d == JX_INT64) return (AluValue){.i = INT64_MAX};
    if (dtype_is_bool(d)) return (AluValue){.i = 1};
    if (dtype_is_unsigned(d)) return (AluValue){.u = (uint64_t)dtype_max_value(d)};
    return (AluValue){.i = (int64_t)dtype_max_value(d)};
  default: /* ADD, OR, XOR */
    return fl ? (AluValue){.f = 0.0} : alu_normalize(d, (AluValue){.i = 0});
  }
}
