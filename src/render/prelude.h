/* prelude.h -- the portable part of every generated kernel's prelude: the scalar helpers
 * emit.c's op table names (jx_add_i32, jx_fmin_f32, jx_cvt_i8_f32, ...), embedded at
 * build time after a target part (prelude_c.h for the cpu backend) that provides
 * JX_FN, the fixed-width integer types, memcpy, fabs/fabsf/sqrt, INFINITY and
 * jx_exp_f32/jx_exp_f64. Plain C that CUDA C also compiles (no builtins, no pragmas).
 *
 * Every helper reproduces src/ir/eval.c exactly: integers wrap (signed arithmetic goes
 * through unsigned types, so there is no undefined behaviour), x/0 = -1 and x%0 = x,
 * shifts by out-of-range counts give 0 (or -1), float->int casts saturate with NaN -> 0,
 * float16/bfloat16 values live in float and are rounded back after every inexact op.
 * Helpers are branch-light so loops over them vectorize. */

/* ---------------------------------------------------------------- bits */

JX_FN uint32_t jx_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
JX_FN float jx_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
JX_FN uint64_t jx_f64_bits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
JX_FN double jx_bits_f64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

/* ------------------------------------------------------- 16-bit floats */

/* IEEE binary16 -> float32: exact. Subnormals are man * 2^-24, exact in float. */
JX_FN float jx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return jx_bits_f32(sign | 0x7f800000u | man << 13); /* inf, NaN */
  if (exp == 0) return jx_bits_f32(sign | jx_f32_bits((float)man * 0x1p-24f));
  return jx_bits_f32(sign | (exp + 112) << 23 | man << 13);
}

/* float32 -> binary16, round to nearest even; NaN keeps its top payload bits, quieted
 * (the same bits as dtype_f32_to_f16 in src/core/dtype.c). */
JX_FN uint16_t jx_f32_to_f16(float f) {
  uint32_t x = jx_f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u)
    return (uint16_t)(x == 0x7f800000u ? sign | 0x7c00 : sign | 0x7e00 | ((x >> 13) & 0x3ff));
  int e = (int)(x >> 23) - 112; /* float16 biased exponent */
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  uint32_t man = (x & 0x7fffffu) | 0x800000u, h;
  int shift = 13;
  if (e <= 0) {
    shift = 14 - e;
    if (shift > 24) return (uint16_t)sign;
    h = man >> shift;
  } else {
    h = (uint32_t)e << 10 | ((man >> 13) & 0x3ff);
  }
  uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
  h += rem > half || (rem == half && (h & 1));
  return (uint16_t)(sign | h);
}

JX_FN float jx_bf16_to_f32(uint16_t h) { return jx_bits_f32((uint32_t)h << 16); }

JX_FN uint16_t jx_f32_to_bf16(float f) {
  uint32_t x = jx_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* NaN */
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

/* double -> float rounding to odd (truncate, set the last bit if inexact): rounding the
 * result again to a format with >= 2 fewer significand bits is then correct (Boldo &
 * Melquiond 2008). eval.c rounds doubles to f16/bf16 this way. */
JX_FN float jx_f64_to_f32_odd(double d) {
  float f = (float)d;
  if (d != d || (double)f == d || fabs(d) == (double)INFINITY || fabsf(f) == INFINITY)
    return f;
  uint32_t u = jx_f32_bits(f);
  if (fabs((double)f) > fabs(d)) u -= 1; /* one step toward zero (f is nonzero) */
  return jx_bits_f32(u | 1);
}

/* Values of f16/bf16 dtypes are floats holding a representable value. */
JX_FN float jx_rnd_f16(float x) { return jx_f16_to_f32(jx_f32_to_f16(x)); }
JX_FN float jx_rnd_bf16(float x) { return jx_bf16_to_f32(jx_f32_to_bf16(x)); }
JX_FN float jx_rnd_f16_f64(double x) { return jx_rnd_f16(jx_f64_to_f32_odd(x)); }
JX_FN float jx_rnd_bf16_f64(double x) { return jx_rnd_bf16(jx_f64_to_f32_odd(x)); }

/* ---------------------------------------------------------------- floats */

/* MIN/MAX: NaN propagates (a quiet NaN, as eval.c); min(-0,+0) = -0, max(-0,+0) = +0.
 * For equal operands the bits are OR-ed (min) or AND-ed (max), which only matters for
 * zeros of different signs. `a < b ? a : b` first: x86's minps/maxps exactly, then
 * the two fix-ups (5 vector instructions instead of 11: a row max of 4096 x 1024
 * floats, 1.2 -> 1.05 ms on one thread). */
#define JX_FLOAT_OPS(S, F, U, TOBITS, FROMBITS, QNAN)                                   \
  JX_FN F jx_fmin_##S(F a, F b) {                                                      \
    F m = a < b ? a : b;                                                               \
    m = a == b ? FROMBITS(TOBITS(a) | TOBITS(b)) : m;                                  \
    return a != a || b != b ? FROMBITS(QNAN) : m;                                      \
  }                                                                                    \
  JX_FN F jx_fmax_##S(F a, F b) {                                                      \
    F m = a > b ? a : b;                                                               \
    m = a == b ? FROMBITS(TOBITS(a) & TOBITS(b)) : m;                                  \
    return a != a || b != b ? FROMBITS(QNAN) : m;                                      \
  }                                                                                    \
  JX_FN F jx_fsign_##S(F x) { return x > 0 ? (F)1 : x < 0 ? (F)-1 : x; }
/* max/min with a constant c that is not NaN (and, for max, not -0; for min, not +0):
 * then equal operands are c itself and one compare decides (x NaN: x, a NaN). */
#define JX_FLOAT_CONST_OPS(S, F)                                                          \
  JX_FN F jx_fmaxc_##S(F x, F c) { return x > c || x != x ? x : c; }                   \
  JX_FN F jx_fminc_##S(F x, F c) { return x < c || x != x ? x : c; }
JX_FLOAT_CONST_OPS(f32, float)
JX_FLOAT_CONST_OPS(f64, double)
#undef JX_FLOAT_CONST_OPS
JX_FLOAT_OPS(f32, float, uint32_t, jx_f32_bits, jx_bits_f32, 0x7fc00000u)
JX_FLOAT_OPS(f64, double, uint64_t, jx_f64_bits, jx_bits_f64, 0x7ff8000000000000ull)
#undef JX_FLOAT_OPS

/* Order keys for row MAX/MIN reductions (render/c.c, render_row_lanes): a float's bits,
 * negative ones with the magnitude bits flipped, as a signed integer, so integer order
 * is float order with -0 < +0; a NaN maps to the integer maximum (for max) or minimum
 * (for min), which no other float reaches, and back to the quiet NaN. The max (min) of
 * the keys is then the key of the fold of jx_fmax (jx_fmin) over the same values in any
 * order, bit for bit; one integer compare per step instead of jx_fmax's five
 * instructions (a 4096 x 1024 row max in L2: 0.37 -> 0.17 ms on one thread). */
#define JX_FLOAT_KEYS(S, F, U, I, TOBITS, FROMBITS, QNAN, SH, IMAX)                        \
  JX_FN I jx_fkey_##S(F x) {                                                           \
    U b = TOBITS(x);                                                                   \
    return (I)(b ^ (((U)0 - (b >> SH)) & (U)IMAX));                                    \
  }                                                                                    \
  JX_FN I jx_fkeymax_##S(F x) { return x != x ? (I)IMAX : jx_fkey_##S(x); }            \
  JX_FN I jx_fkeymin_##S(F x) { return x != x ? -(I)IMAX - 1 : jx_fkey_##S(x); }       \
  JX_FN I jx_kmax_##S(I a, I b) { return a > b ? a : b; }                              \
  JX_FN I jx_kmin_##S(I a, I b) { return a < b ? a : b; }                              \
  JX_FN F jx_funkey_##S(I k) {                                                         \
    U u = (U)k;                                                                        \
    return k == (I)IMAX || k == -(I)IMAX - 1 ? FROMBITS(QNAN)                          \
                                             : FROMBITS(u ^ (((U)0 - (u >> SH)) & (U)IMAX)); \
  }
JX_FLOAT_KEYS(f32, float, uint32_t, int32_t, jx_f32_bits, jx_bits_f32, 0x7fc00000u, 31, 0x7fffffff)
JX_FLOAT_KEYS(f64, double, uint64_t, int64_t, jx_f64_bits, jx_bits_f64, 0x7ff8000000000000ull, 63,
              0x7fffffffffffffffll)
#undef JX_FLOAT_KEYS

/* RSQRT: 1/sqrt. eval.c computes it in double and rounds once; float32 here is two
 * float roundings (sqrt, then the division: within 1 ulp of eval.c, and 8x the
 * throughput of double square roots: 0.25 vs 1.9 ns per element); 16-bit floats keep the
 * double form, which rounds to their format exactly as eval.c. */
JX_FN double jx_rsqrt_f64(double x) { return 1.0 / sqrt(x); }
JX_FN float jx_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }
JX_FN float jx_rsqrt_f16(float x) { return jx_rnd_f16_f64(1.0 / sqrt((double)x)); }
JX_FN float jx_rsqrt_bf16(float x) { return jx_rnd_bf16_f64(1.0 / sqrt((double)x)); }

/* Saturating float -> int, NaN -> 0 (XLA's convert). F is float or double; HI is
 * 2^(bits-1) (signed) or 2^bits (unsigned), exact in F. */
#define JX_CVT_SIGNED(TS, T, TMIN, TMAX, FS, F, HI)                                     \
  JX_FN T jx_cvt_##TS##_##FS(F x) {                                                    \
    return x != x ? (T)0 : x >= (F)HI ? TMAX : x < -(F)HI ? TMIN : (T)x;               \
  }
#define JX_CVT_UNSIGNED(TS, T, TMAX, FS, F, HI)                                         \
  JX_FN T jx_cvt_##TS##_##FS(F x) {                                                    \
    return x != x || x <= (F)-1 ? (T)0 : x >= (F)HI ? TMAX : x < 0 ? (T)0 : (T)x;      \
  }
#define JX_CVT_ALL(FS, F)                                                               \
  JX_CVT_SIGNED(i8, int8_t, INT8_MIN, INT8_MAX, FS, F, 0x1p7)                          \
  JX_CVT_SIGNED(i16, int16_t, INT16_MIN, INT16_MAX, FS, F, 0x1p15)                     \
  JX_CVT_SIGNED(i32, int32_t, INT32_MIN, INT32_MAX, FS, F, 0x1p31)                     \
  JX_CVT_SIGNED(i64, int64_t, INT64_MIN, INT64_MAX, FS, F, 0x1p63)                     \
  JX_CVT_UNSIGNED(u8, uint8_t, UINT8_MAX, FS, F, 0x1p8)                                \
  JX_CVT_UNSIGNED(u16, uint16_t, UINT16_MAX, FS, F, 0x1p16)                            \
  JX_CVT_UNSIGNED(u32, uint32_t, UINT32_MAX, FS, F, 0x1p32)                            \
  JX_CVT_UNSIGNED(u64, uint64_t, UINT64_MAX, FS, F, 0x1p64)
JX_CVT_ALL(f32, float)
JX_CVT_ALL(f64, double)
#undef JX_CVT_ALL
#undef JX_CVT_SIGNED
#undef JX_CVT_UNSIGNED

/* -------------------------------------------------------------- integers */

/* x**y by squaring, wrapping; a negative signed exponent gives 0 except for bases 1
 * and -1 (XLA's integer pow). base and e are the operands widened to 64 bits. */
JX_FN uint64_t jx_ipow(uint64_t base, uint64_t e, int is_signed) {
  if (is_signed && (int64_t)e < 0)
    return (int64_t)base == 1 ? 1 : (int64_t)base == -1 ? ((e & 1) ? (uint64_t)-1 : 1) : 0;
  uint64_t r = 1;
  for (; e; e >>= 1, base *= base)
    if (e & 1) r *= base;
  return r;
}

/* W is the unsigned type arithmetic wraps in (at least unsigned int, so narrow types
 * never promote to a signed int that could overflow). */
#define JX_SIGNED_OPS(S, T, W, BITS)                                                    \
  JX_FN T jx_add_##S(T a, T b) { return (T)((W)a + (W)b); }                            \
  JX_FN T jx_sub_##S(T a, T b) { return (T)((W)a - (W)b); }                            \
  JX_FN T jx_mul_##S(T a, T b) { return (T)((W)a * (W)b); }                            \
  JX_FN T jx_neg_##S(T a) { return (T)((W)0 - (W)a); }                                 \
  JX_FN T jx_abs_##S(T a) { return a < 0 ? jx_neg_##S(a) : a; }                        \
  JX_FN T jx_sign_##S(T a) { return (T)((a > 0) - (a < 0)); }                          \
  JX_FN T jx_min_##S(T a, T b) { return a < b ? a : b; }                                \
  JX_FN T jx_max_##S(T a, T b) { return a > b ? a : b; }                                \
  JX_FN T jx_div_##S(T a, T b) { /* x/0 = -1, INT_MIN/-1 = INT_MIN */                  \
    T q = (T)(a / (b == 0 || b == -1 ? (T)1 : b));                                     \
    return b == 0 ? (T)-1 : b == -1 ? jx_neg_##S(a) : q;                               \
  }                                                                                    \
  JX_FN T jx_mod_##S(T a, T b) { /* x%0 = x, sign of x */                              \
    T r = (T)(a % (b == 0 || b == -1 ? (T)1 : b));                                     \
    return b == 0 ? a : b == -1 ? (T)0 : r;                                            \
  }                                                                                    \
  JX_FN T jx_shl_##S(T a, T b) { return b < 0 || b >= BITS ? (T)0 : (T)((W)a << b); }  \
  JX_FN T jx_shr_##S(T a, T b) { /* arithmetic; out-of-range counts fill the sign */   \
    if (b < 0 || b >= BITS) return a < 0 ? (T)-1 : (T)0;                               \
    return (T)(a < 0 ? ~(~a >> b) : a >> b);                                           \
  }                                                                                    \
  JX_FN T jx_pow_##S(T a, T b) {                                                       \
    return (T)jx_ipow((uint64_t)(int64_t)a, (uint64_t)(int64_t)b, 1);                  \
  }
#define JX_UNSIGNED_OPS(S, T, W, BITS)                                                  \
  JX_FN T jx_add_##S(T a, T b) { return (T)((W)a + (W)b); }                            \
  JX_FN T jx_sub_##S(T a, T b) { return (T)((W)a - (W)b); }                            \
  JX_FN T jx_mul_##S(T a, T b) { return (T)((W)a * (W)b); }                            \
  JX_FN T jx_neg_##S(T a) { return (T)((W)0 - (W)a); }                                 \
  JX_FN T jx_abs_##S(T a) { return a; }                                                \
  JX_FN T jx_sign_##S(T a) { return (T)(a != 0); }                                     \
  JX_FN T jx_min_##S(T a, T b) { return a < b ? a : b; }                                \
  JX_FN T jx_max_##S(T a, T b) { return a > b ? a : b; }                                \
  JX_FN T jx_div_##S(T a, T b) { /* x/0 = all ones */                                  \
    T q = (T)(a / (b ? b : (T)1));                                                     \
    return b ? q : (T)~(W)0;                                                           \
  }                                                                                    \
  JX_FN T jx_mod_##S(T a, T b) {                                                       \
    T r = (T)(a % (b ? b : (T)1));                                                     \
    return b ? r : a;                                                                  \
  }                                                                                    \
  JX_FN T jx_shl_##S(T a, T b) { return b >= BITS ? (T)0 : (T)((W)a << b); }          \
  JX_FN T jx_shr_##S(T a, T b) { return b >= BITS ? (T)0 : (T)(a >> b); }              \
  JX_FN T jx_pow_##S(T a, T b) { return (T)jx_ipow((uint64_t)a, (uint64_t)b, 0); }
JX_SIGNED_OPS(i8, int8_t, uint32_t, 8)
JX_SIGNED_OPS(i16, int16_t, uint32_t, 16)
JX_SIGNED_OPS(i32, int32_t, uint32_t, 32)
JX_SIGNED_OPS(i64, int64_t, uint64_t, 64)
JX_UNSIGNED_OPS(u8, uint8_t, uint32_t, 8)
JX_UNSIGNED_OPS(u16, uint16_t, uint32_t, 16)
JX_UNSIGNED_OPS(u32, uint32_t, uint32_t, 32)
JX_UNSIGNED_OPS(u64, uint64_t, uint64_t, 64)
#undef JX_SIGNED_OPS
#undef JX_UNSIGNED_OPS

/* ---------------------------------------------------------------- random */

/* Threefry-2x32, 20 rounds (Random123; JAX's threefry2x32), as in eval.c: the two
 * output words packed hi:lo into a uint64. Straight-line (rounds and key injections
 * unrolled by hand), so kernels compiled with light optimization (cpu.c's
 * COMPILE_OPT_LIGHT, -O1) keep constant rotations and vectorize: a loop over a table of
 * rotations took 2.0 us for a kernel of 128 uniform samples at -O1, 0.2 at -O3. */
#define JX_TF_ROUND(r) (x0 += x1, x1 = (x1 << (r)) | (x1 >> (32 - (r))), x1 ^= x0)
#define JX_TF_EVEN() (JX_TF_ROUND(13), JX_TF_ROUND(15), JX_TF_ROUND(26), JX_TF_ROUND(6))
#define JX_TF_ODD() (JX_TF_ROUND(17), JX_TF_ROUND(29), JX_TF_ROUND(16), JX_TF_ROUND(24))
JX_FN uint64_t jx_threefry2x32(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1) {
  const uint32_t k2 = k0 ^ k1 ^ 0x1BD11BDAu;
  uint32_t x0 = c0 + k0, x1 = c1 + k1;
  JX_TF_EVEN();
  x0 += k1, x1 += k2 + 1u;
  JX_TF_ODD();
  x0 += k2, x1 += k0 + 2u;
  JX_TF_EVEN();
  x0 += k0, x1 += k1 + 3u;
  JX_TF_ODD();
  x0 += k1, x1 += k2 + 4u;
  JX_TF_EVEN();
  x0 += k2, x1 += k0 + 5u;
  return ((uint64_t)x0 << 32) | x1;
}
#undef JX_TF_EVEN
#undef JX_TF_ODD
#undef JX_TF_ROUND

/* ---------------------------------------------------------------- complex */

/* complex64 / complex128 values: NumPy's interleaved (re, im) layout. Only the ops the
 * kernel IR keeps complex live here (src/ir/complex.c); everything else arrives
 * expanded into real operations on .re and .im. Products are (ac - bd) + (ad + bc)i
 * with no special cases, as XLA on the CPU computes them (LLVM contracts its elemental
 * IR: fma(a, c, -bd) + fma(b, c, ad)i, each product and fma rounded once; checked bit
 * for bit against jax 0.10.2 over 10^5 complex64 products, where (ac - bd) rounded
 * twice differed in a third) and eval.c does; every other + - * rounds on its own
 * (JX_ADD_RN ...: a target whose compiler would contract a * b + c into a fused
 * multiply-add defines them, as prelude_cuda.h does). JX_COMPLEX_TARGET(S, T) adds a
 * target's own helpers for the two types (the CUDA framing's warp shuffles). */
#ifndef JX_ADD_RN
#define JX_ADD_RN(a, b) ((a) + (b))
#define JX_SUB_RN(a, b) ((a) - (b))
#define JX_MUL_RN(a, b) ((a) * (b))
#endif
#ifndef JX_COMPLEX_TARGET
#define JX_COMPLEX_TARGET(S, T)
#endif
typedef struct jx_c64 { float re, im; } jx_c64;
typedef struct jx_c128 { double re, im; } jx_c128;
JX_FN jx_c64 jx_mk_c64(float re, float im) { jx_c64 z; z.re = re; z.im = im; return z; }
JX_FN jx_c128 jx_mk_c128(double re, double im) { jx_c128 z; z.re = re; z.im = im; return z; }
#define JX_COMPLEX_OPS(S, T)                                                               \
  JX_FN jx_##S jx_add_##S(jx_##S a, jx_##S b) {                                             \
    return jx_mk_##S(JX_ADD_RN(a.re, b.re), JX_ADD_RN(a.im, b.im));                         \
  }                                                                                         \
  JX_FN jx_##S jx_sub_##S(jx_##S a, jx_##S b) {                                             \
    return jx_mk_##S(JX_SUB_RN(a.re, b.re), JX_SUB_RN(a.im, b.im));                         \
  }                                                                                         \
  JX_FN jx_##S jx_neg_##S(jx_##S a) { return jx_mk_##S(-a.re, -a.im); }                      \
  JX_FN jx_##S jx_mul_##S(jx_##S a, jx_##S b) {                                             \
    T bd = JX_MUL_RN(a.im, b.im), ad = JX_MUL_RN(a.re, b.im);                               \
    return jx_mk_##S(FMA(a.re, b.re, -bd), FMA(a.im, b.re, ad));                             \
  }                                                                                         \
  JX_FN uint8_t jx_eq_##S(jx_##S a, jx_##S b) { return a.re == b.re && a.im == b.im; }      \
  JX_FN uint8_t jx_ne_##S(jx_##S a, jx_##S b) { return !(a.re == b.re && a.im == b.im); }   \
  JX_COMPLEX_TARGET(S, T)
#define FMA fmaf
JX_COMPLEX_OPS(c64, float)
#undef FMA
#define FMA fma
JX_COMPLEX_OPS(c128, double)
#undef FMA
#undef JX_COMPLEX_OPS
