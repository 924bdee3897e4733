/* dtype.c -- dtype properties, the x64 switch, JAX's type promotion with weak types,
 * and float16/bfloat16 <-> float32 conversion. Promotion reproduces jax/_src/dtypes.py
 * (JAX 0.10): the lattice, its least upper bound, and jnp's promote_dtypes on top of it. */
#include "core/dtype.h"

#include <ctype.h>
#include <float.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ properties */

typedef struct dtype_info {
  const char *name;  /* NumPy name */
  const char *short_name;
  int bits;
  char kind;         /* NumPy kind: 'b' bool, 'i' signed, 'u' unsigned, 'f' floating,
                        'c' complex */
  double min, max;   /* finite range; 64-bit integer bounds round to the nearest double */
} dtype_info;

static const dtype_info infos[JX_NUM_DTYPES] = {
  [JX_BOOL]     = {"bool", "bool", 8, 'b', 0, 1},
  [JX_INT8]     = {"int8", "i8", 8, 'i', INT8_MIN, INT8_MAX},
  [JX_UINT8]    = {"uint8", "u8", 8, 'u', 0, UINT8_MAX},
  [JX_INT16]    = {"int16", "i16", 16, 'i', INT16_MIN, INT16_MAX},
  [JX_UINT16]   = {"uint16", "u16", 16, 'u', 0, UINT16_MAX},
  [JX_INT32]    = {"int32", "i32", 32, 'i', INT32_MIN, INT32_MAX},
  [JX_UINT32]   = {"uint32", "u32", 32, 'u', 0, UINT32_MAX},
  [JX_INT64]    = {"int64", "i64", 64, 'i', (double)INT64_MIN, (double)INT64_MAX},
  [JX_UINT64]   = {"uint64", "u64", 64, 'u', 0, (double)UINT64_MAX},
  /* finfo(float16).max = (2 - 2^-10) * 2^15; finfo(bfloat16).max = (2 - 2^-7) * 2^127. */
  [JX_FLOAT16]  = {"float16", "f16", 16, 'f', -65504.0, 65504.0},
  [JX_BFLOAT16] = {"bfloat16", "bf16", 16, 'f', -3.3895313892515355e38, 3.3895313892515355e38},
  [JX_FLOAT32]  = {"float32", "f32", 32, 'f', -FLT_MAX, FLT_MAX},
  [JX_FLOAT64]  = {"float64", "f64", 64, 'f', -DBL_MAX, DBL_MAX},
  /* complex: the range of each part */
  [JX_COMPLEX64]  = {"complex64", "c64", 64, 'c', -FLT_MAX, FLT_MAX},
  [JX_COMPLEX128] = {"complex128", "c128", 128, 'c', -DBL_MAX, DBL_MAX},
};

bool dtype_is_valid(jx_dtype d) { return (unsigned)d < JX_NUM_DTYPES; }
static char kind(jx_dtype d) { return dtype_is_valid(d) ? infos[d].kind : 0; }
bool dtype_is_bool(jx_dtype d) { return kind(d) == 'b'; }
bool dtype_is_integer(jx_dtype d) { return kind(d) == 'i' || kind(d) == 'u'; }
bool dtype_is_signed(jx_dtype d) { return kind(d) == 'i' || kind(d) == 'f'; }
bool dtype_is_unsigned(jx_dtype d) { return kind(d) == 'u'; }
bool dtype_is_floating(jx_dtype d) { return kind(d) == 'f'; }
bool dtype_is_complex(jx_dtype d) { return kind(d) == 'c'; }
bool dtype_is_inexact(jx_dtype d) { return kind(d) == 'f' || kind(d) == 'c'; }
jx_dtype dtype_real_part(jx_dtype d) {
  return d == JX_COMPLEX64 ? JX_FLOAT32 : d == JX_COMPLEX128 ? JX_FLOAT64 : d;
}
jx_dtype dtype_to_complex(jx_dtype d) {
  if (dtype_is_complex(d)) return d;
  return d == JX_FLOAT64 ? JX_COMPLEX128 : JX_COMPLEX64;
}
int dtype_bits(jx_dtype d) { return dtype_is_valid(d) ? infos[d].bits : 0; }
const char *dtype_short_name(jx_dtype d) {
  return dtype_is_valid(d) ? infos[d].short_name : d == JX_FLOAT0 ? "float0" : NULL; /* JAX: float0[] */
}
double dtype_min_value(jx_dtype d) { return dtype_is_valid(d) ? infos[d].min : 0; }
double dtype_max_value(jx_dtype d) { return dtype_is_valid(d) ? infos[d].max : 0; }

const char *jx_dtype_name(jx_dtype d) {
  return dtype_is_valid(d) ? infos[d].name : d == JX_FLOAT0 ? "float0" : NULL;
}
size_t jx_dtype_itemsize(jx_dtype d) { return dtype_is_valid(d) ? (size_t)infos[d].bits / 8 : 0; }

const char *dtype_invalid_str(jx_dtype d, char *buf) {
  if (d == JX_FLOAT0) return "float0 (it holds no values; jx_zeros makes float0 arrays)";
  snprintf(buf, DTYPE_INVALID_BUF, "%d", (int)d);
  return buf;
}

/* ------------------------------------------------------------ x64 switch */

/* -1: not read yet; 0/1 afterwards. Atomic so that a first use racing on several threads
 * is benign: every racer reads the same environment, and an explicit
 * jx_config_enable_x64 always wins over the lazy read. */
static atomic_int x64_state = -1;

/* JAX parses boolean env flags with strtobool: y/yes/t/true/on/1 are true. */
static bool env_truthy(const char *s) {
  static const char *const on[] = {"1", "y", "yes", "t", "true", "on"};
  if (!s) return false;
  for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
    const char *a = s, *b = on[i];
    while (*a && *b && tolower((unsigned char)*a) == *b) a++, b++;
    if (!*a && !*b) return true;
  }
  return false;
}

bool dtype_x64(void) {
  int s = atomic_load(&x64_state);
  if (s < 0) {
    int expected = -1;
    int from_env = env_truthy(getenv("JAXC_ENABLE_X64")) ? 1 : 0;
    atomic_compare_exchange_strong(&x64_state, &expected, from_env);
    s = atomic_load(&x64_state);
  }
  return s == 1;
}

void jx_config_enable_x64(bool enable) { atomic_store(&x64_state, enable ? 1 : 0); }
bool jx_config_x64_enabled(void) { return dtype_x64(); }

jx_dtype dtype_canonicalize(jx_dtype d) {
  if (dtype_x64()) return d;
  switch (d) {
  case JX_INT64: return JX_INT32;
  case JX_UINT64: return JX_UINT32;
  case JX_FLOAT64: return JX_FLOAT32;
  case JX_COMPLEX128: return JX_COMPLEX64;
  default: return d;
  }
}

jx_dtype dtype_default_int(void) { return dtype_x64() ? JX_INT64 : JX_INT32; }
jx_dtype dtype_default_uint(void) { return dtype_x64() ? JX_UINT64 : JX_UINT32; }
jx_dtype dtype_default_float(void) { return dtype_x64() ? JX_FLOAT64 : JX_FLOAT32; }
jx_dtype dtype_default_complex(void) { return dtype_x64() ? JX_COMPLEX128 : JX_COMPLEX64; }
jx_dtype dtype_to_inexact(jx_dtype d) {
  if (dtype_is_inexact(d)) return d;
  return d == JX_INT64 || d == JX_UINT64 ? dtype_canonicalize(JX_FLOAT64) : JX_FLOAT32;
}

/* ------------------------------------------------------------ promotion */

/* Lattice nodes: the 15 dtypes (same numbering as jx_dtype) plus JAX's three weak
 * categories, i_ (a Python int), f_ (a Python float) and c_ (a Python complex).
 * float8s and int2/int4 of JAX's lattice are left out: none of them is a common upper
 * bound of two of these nodes, so they never change a least upper bound here. */
enum { NODE_I = JX_NUM_DTYPES, NODE_F, NODE_C, NUM_NODES };
#define BIT(n) (1u << (n))

/* Immediate successors, from _type_promotion_lattice (non-strict). With x64 off JAX
 * replaces u32 -> i64 by u32 -> i32 so that no promotion forms a 64-bit type; for these
 * dtypes that gives what canonicalizing int64 -> int32 would, but we mirror JAX. */
static uint32_t successors(int n, bool x64) {
  switch (n) {
  case JX_BOOL:     return BIT(NODE_I);
  case NODE_I:      return BIT(JX_UINT8) | BIT(JX_INT8);
  case JX_UINT8:    return BIT(JX_INT16) | BIT(JX_UINT16);
  case JX_UINT16:   return BIT(JX_INT32) | BIT(JX_UINT32);
  case JX_UINT32:   return BIT(x64 ? JX_INT64 : JX_INT32) | BIT(JX_UINT64);
  case JX_UINT64:   return BIT(NODE_F);
  case JX_INT8:     return BIT(JX_INT16);
  case JX_INT16:    return BIT(JX_INT32);
  case JX_INT32:    return BIT(JX_INT64);
  case JX_INT64:    return BIT(NODE_F);
  case NODE_F:      return BIT(JX_BFLOAT16) | BIT(JX_FLOAT16) | BIT(NODE_C);
  case JX_BFLOAT16: return BIT(JX_FLOAT32);
  case JX_FLOAT16:  return BIT(JX_FLOAT32);
  case JX_FLOAT32:  return BIT(JX_FLOAT64) | BIT(JX_COMPLEX64);
  case JX_FLOAT64:  return BIT(JX_COMPLEX128);
  case NODE_C:      return BIT(JX_COMPLEX64);
  case JX_COMPLEX64: return BIT(JX_COMPLEX128);
  default:          return 0; /* complex128 is the top */
  }
}

/* UB(n): n and everything above it (transitive closure of successors). */
static uint32_t upper_bounds(int n, bool x64) {
  uint32_t ub = BIT(n), frontier = BIT(n);
  while (frontier) {
    uint32_t next = 0;
    for (int m = 0; m < NUM_NODES; m++)
      if (frontier & BIT(m)) next |= successors(m, x64);
    frontier = next & ~ub;
    ub |= next;
  }
  return ub;
}

/* _least_upper_bound: the common upper bound c whose own UB holds all common bounds.
 * The lattice is a true lattice on these nodes, so exactly one such c exists. */
static int least_upper_bound(int a, int b, bool x64) {
  uint32_t cub = upper_bounds(a, x64) & upper_bounds(b, x64);
  for (int c = 0; c < NUM_NODES; c++)
    if ((cub & BIT(c)) && (upper_bounds(c, x64) & cub) == cub) return c;
  return -1; /* unreachable: complex128 bounds everything */
}

/* _jax_type: a weak operand stands for its Python type; weak bool stays bool. */
static int node_of(jx_dtype d, bool weak) {
  if (!weak || d == JX_BOOL) return (int)d;
  return dtype_is_complex(d) ? NODE_C : dtype_is_floating(d) ? NODE_F : NODE_I;
}

/* Mirrors jnp's promote_dtypes (lattice_result_type, then canonicalize_dtype):
 * - inputs are canonicalized first, as dtypes.dtype() does to explicit 64-bit dtypes;
 * - equal dtypes, not both weak: that dtype, strong;
 * - both weak: the bound of their strong dtypes, weak unless bool. This is what an
 *   operation produces (weak int8 + weak int8 = weak int8). jnp.result_type differs
 *   here only for weak operands of non-default dtypes: it reports the default dtype of
 *   the result's kind (weak int32); no Python scalar can reach that case;
 * - otherwise: the bound of the nodes; weak iff it is i_ or f_, which stand for the
 *   default int / float dtype. */
jx_dtype dtype_promote(jx_dtype a, bool a_weak, jx_dtype b, bool b_weak, bool *weak_out) {
  bool weak = false;
  jx_dtype r;
  if (!dtype_is_valid(a) || !dtype_is_valid(b)) {
    r = JX_NUM_DTYPES; /* callers validate; an invalid result is easy to spot */
  } else {
    bool x64 = dtype_x64();
    a = dtype_canonicalize(a);
    b = dtype_canonicalize(b);
    if (a == b && !(a_weak && b_weak)) {
      r = a;
    } else {
      int n;
      if (a_weak && b_weak) {
        n = least_upper_bound((int)a, (int)b, x64);
        weak = n != JX_BOOL;
      } else {
        n = least_upper_bound(node_of(a, a_weak), node_of(b, b_weak), x64);
        weak = n == NODE_I || n == NODE_F || n == NODE_C;
      }
      /* dtype(i_) / dtype(f_) / dtype(c_): the default dtypes (uint64 + int8 = weak
       * float64). */
      r = n == NODE_I   ? dtype_default_int()
          : n == NODE_F ? dtype_default_float()
          : n == NODE_C ? dtype_default_complex()
                        : (jx_dtype)n;
    }
    r = dtype_canonicalize(r);
  }
  if (weak_out) *weak_out = weak;
  return r;
}

jx_dtype jx_promote_types(jx_dtype a, bool a_weak, jx_dtype b, bool b_weak, bool *weak_out) {
  return dtype_promote(a, a_weak, b, b_weak, weak_out);
}

/* ------------------------------------------------------------ 16-bit floats */

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Every float16 is exact
 * in float32, so this direction never rounds. */
float dtype_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000 | (man << 13)); /* inf, NaN payload */
  if (exp == 0) {
    if (man == 0) return bits_f32(sign);
    /* Subnormal man * 2^-24: shift the leading 1 up to the hidden-bit position. */
    int e = -1;
    do {
      man <<= 1;
      e++;
    } while (!(man & 0x400));
    return bits_f32(sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13);
  }
  return bits_f32(sign | (exp + 127 - 15) << 23 | man << 13);
}

/* Rounds to nearest, ties to even, in one place for normals and subnormals: keep the
 * top bits of the 24-bit significand and look at what is shifted out. A carry out of
 * the mantissa correctly bumps the exponent (up to infinity at 65520 and above). */
uint16_t dtype_f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000) {
    if (x == 0x7f800000) return sign | 0x7c00;
    /* NaN: keep the top payload bits and force the quiet bit, so it cannot become inf. */
    return (uint16_t)(sign | 0x7e00 | ((x >> 13) & 0x3ff));
  }
  int e = (int)(x >> 23) - 127 + 15;        /* float16 biased exponent */
  if (e >= 31) return sign | 0x7c00;        /* overflow */
  uint32_t man = (x & 0x7fffff) | 0x800000; /* 24-bit significand (hidden bit set) */
  int shift = 13;                           /* normals keep 11 of 24 bits */
  uint32_t h;
  if (e <= 0) {
    /* Subnormal result: value / 2^-24 = man * 2^(e - 14). */
    shift = 14 - e;
    if (shift > 24) return sign; /* below half the smallest subnormal: rounds to 0 */
    h = man >> shift;
  } else {
    h = (uint32_t)e << 10 | ((man >> 13) & 0x3ff);
  }
  uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

/* bfloat16 is the top half of a float32: widening is a shift. */
float dtype_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t dtype_f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  /* NaN: truncating could clear every payload bit and make inf; set the quiet bit. */
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  /* Ties to even: add 0x7fff plus the lowest kept bit; carries overflow to inf. */
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}
