/* random.c -- jax.random on JAX's default PRNG, bit for bit: raw threefry2x32 keys
 * (uint32[2]); key derivation (seed, split, fold_in); random bits with the
 * partitionable counter layout (jax_threefry_partitionable, JAX's default); uniform
 * (the mantissa trick) and randint; and the float32 arithmetic of XLA's CPU backend
 * that the samplers (random_samplers.c) need to reproduce JAX's bits. Algorithms from
 * JAX's jax/_src/random/threefry2x32.py (threefry_seed, _threefry_split_foldlike,
 * _threefry_fold_in, _threefry_random_bits_partitionable), prng.py (iota_2x32_shape)
 * and core.py (_uniform, _randint). Built only from primitives, so every function
 * works under jit and vmap. */
#include "lib/random.h"
#include "transform/transform.h"

#include <math.h>
#include <string.h>

jx_array *random_uconst(uint64_t v, jx_dtype dtype) {
  /* A 0-d integer constant of exactly `dtype` from its bits. array_from_host follows
   * the x64 mode, so with x64 off a 64-bit one (for float64 bit tricks) is built from
   * its two 32-bit halves. */
  size_t n = jx_dtype_itemsize(dtype);
  if (n == 8 && !dtype_x64()) {
    jx_array *hi = prim_convert(random_uconst(v >> 32, JX_UINT32), JX_UINT64, false);
    jx_array *lo = prim_convert(random_uconst(v & 0xFFFFFFFFu, JX_UINT32), JX_UINT64, false);
    jx_array *r = op2(
        PRIM_or,
        op2(PRIM_shift_left, hi, prim_convert(random_uconst(32, JX_UINT32), JX_UINT64, false)), lo);
    return r && dtype != JX_UINT64 ? prim_bitcast(r, dtype) : r;
  }
  union {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
  } u;
  switch (n) {
  case 1: u.u8 = (uint8_t)v; break;
  case 2: u.u16 = (uint16_t)v; break;
  case 4: u.u32 = (uint32_t)v; break;
  default: u.u64 = v; break;
  }
  return array_from_host(&u, dtype, false, 0, NULL);
}

static jx_dtype uint_dtype(int bits) {
  return bits == 8 ? JX_UINT8 : bits == 16 ? JX_UINT16 : bits == 32 ? JX_UINT32 : JX_UINT64;
}

/* jnp.finfo facts: mantissa bits and the smallest normal (float64 only with x64). */
int random_nmant(jx_dtype d) {
  switch (d) {
  case JX_FLOAT16: return 10;
  case JX_BFLOAT16: return 7;
  case JX_FLOAT64: return 52;
  default: return 23;
  }
}

double random_tiny(jx_dtype d) {
  switch (d) {
  case JX_FLOAT16: return ldexp(1.0, -14);
  case JX_FLOAT64: return ldexp(1.0, -1022);
  default: return ldexp(1.0, -126); /* float32, bfloat16 */
  }
}

/* A float32 constant from its bit pattern. */
static jx_array *f32_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return np_constant(f, JX_FLOAT32);
}

/* ------------------------------------------------------ XLA's CPU arithmetic */
/* JAX's samplers run on XLA, whose CPU backend (i) contracts a float32 multiply feeding
 * an add into one fused multiply-add (LLVM's DAG combiner, on FMA hardware: the
 * product of the add's first operand when both are products) and (ii) computes
 * float32 log and log1p with its own polynomials (Eigen's plog_float; Cephes' rational
 * log1p for |x| < sqrt(2) - 1), reading subnormals as zero. To give JAX's bits, the
 * float32 (and bfloat16, computed in float32) samplers use the same arithmetic here,
 * from primitives. Constants and the operation order below come from the LLVM IR that
 * jaxlib 0.10 emits (XLA_FLAGS=--xla_dump_to); tools/golden_random.py checks them.
 * fma32 is the fma primitive (jaxc's own), one instruction on the cpu and the GPU. */

/* a * b + c rounded once, for float32 arrays (0-d operands broadcast): the fma
 * primitive (C's fmaf; until 2026-12-06 an emulation in float64 with the sum rounded
 * to odd, Boldo & Melquiond 2008, which took a 2048 x 2048 normal sample 248 ms). */
jx_array *random_fma32(jx_array *a, jx_array *b, jx_array *c) {
  if (!a || !b || !c) return NULL;
  /* 0-d operands broadcast to the others' shape (staged with them under jit) */
  jx_array *in[3] = {a, b, c};
  const jx_array *full = a->ndim ? a : b->ndim ? b : c;
  const jx_array *like = np_top_tracer(3, in);
  for (int i = 0; i < 3; i++)
    if (in[i]->ndim == 0 && full->ndim > 0)
      in[i] = np_broadcast_to_like("jx_random", in[i], full->ndim, full->shape, like);
  return in[0] && in[1] && in[2] ? prim_fma(in[0], in[1], in[2]) : NULL;
}

/* Eigen's plog_float as XLA's CPU backend compiles it (float32): x = m * 2^e with m in
 * [sqrt(1/2), sqrt(2)), log(m) by a degree-8 polynomial in m - 1, plus e * log(2) in
 * two parts. 0 (and subnormals) -> -inf, +inf -> +inf, negative or NaN -> NaN. */
static const uint32_t LOG_P[9] = {0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF,
                                  0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA};

static jx_array *log_f32(jx_array *x) {
  if (!x) return NULL;
  jx_array *minn = f32_bits(0x00800000);
  jx_array *x1 = sel(op2(PRIM_lt, minn, x), x, minn);
  jx_array *b = x1 ? prim_bitcast(x1, JX_UINT32) : NULL;
  jx_array *eb = op2(PRIM_shift_right, b, random_uconst(23, JX_UINT32));
  eb = eb ? op2(PRIM_sub, prim_convert(eb, JX_INT32, false), np_constant(127, JX_INT32)) : NULL;
  jx_array *e = eb ? opc(PRIM_add, prim_convert(eb, JX_FLOAT32, false), 1.0) : NULL;
  jx_array *mb = op2(PRIM_or, op2(PRIM_and, b, random_uconst(0x807FFFFF, JX_UINT32)),
                     random_uconst(0x3F000000, JX_UINT32));
  jx_array *m = mb ? prim_bitcast(mb, JX_FLOAT32) : NULL;
  jx_array *mask = op2(PRIM_lt, m, f32_bits(0x3F3504F3));
  jx_array *x2 = op2(PRIM_add, opc(PRIM_add, m, -1.0), sel(mask, m, cst(m, 0.0)));
  jx_array *e2 = op2(PRIM_sub, e, sel(mask, cst(e, 1.0), cst(e, 0.0)));
  jx_array *x2s = op2(PRIM_mul, x2, x2), *x3 = op2(PRIM_mul, x2s, x2);
  jx_array *y = random_fma32(x2, f32_bits(LOG_P[0]), f32_bits(LOG_P[1]));
  jx_array *y1 = random_fma32(x2, f32_bits(LOG_P[3]), f32_bits(LOG_P[4]));
  jx_array *y2 = random_fma32(x2, f32_bits(LOG_P[6]), f32_bits(LOG_P[7]));
  y = random_fma32(y, x2, f32_bits(LOG_P[2]));
  y1 = random_fma32(y1, x2, f32_bits(LOG_P[5]));
  y2 = random_fma32(y2, x2, f32_bits(LOG_P[8]));
  y = random_fma32(y, x3, y1);
  y = random_fma32(y, x3, y2);
  y = random_fma32(y, x3, op2(PRIM_mul, f32_bits(0xB95E8083), e2));
  jx_array *r = op2(PRIM_add, op2(PRIM_sub, x2, opc(PRIM_mul, x2s, 0.5)), y);
  r = op2(PRIM_add, r, op2(PRIM_mul, f32_bits(0x3F318000), e2)); /* exact product */
  jx_array *zero = op2(PRIM_lt, prim_unary(PRIM_abs, x), minn);
  jx_array *invalid = prim_unary(PRIM_not, op2(PRIM_lt, cst(x, 0.0), x));
  r = sel(invalid, cst(x, NAN), r);
  r = sel(op2(PRIM_eq, x, cst(x, INFINITY)), cst(x, INFINITY), r);
  return sel(zero, cst(x, -INFINITY), r);
}

/* XLA's log1p (float32): log(1 + x) for |x| >= sqrt(2) - 1, else Cephes' rational
 * approximation x - x^2/2 + x^3 P(x) / Q(x). */
static const uint32_t LOG1P_Q[6] = {0x417101AD, 0x42A6185B, 0x435DC32D,
                                    0x439A8CA3, 0x43586D8A, 0x42707982};
static const uint32_t LOG1P_P[6] = {0x3EFF40C5, 0x40D284FA, 0x41EF4B9C,
                                    0x4273CC76, 0x426473AD, 0x41A05101};

jx_array *random_log1p_f32(jx_array *x) {
  if (!x) return NULL;
  jx_array *big = log_f32(opc(PRIM_add, x, 1.0));
  jx_array *x2 = op2(PRIM_mul, x, x);
  jx_array *q = op2(PRIM_add, x, f32_bits(LOG1P_Q[0]));
  for (int i = 1; i < 6; i++) q = random_fma32(q, x, f32_bits(LOG1P_Q[i]));
  jx_array *p = random_fma32(np_constant(4.527e-05, JX_FLOAT32), x, f32_bits(LOG1P_P[0]));
  for (int i = 1; i < 6; i++) p = random_fma32(p, x, f32_bits(LOG1P_P[i]));
  jx_array *t = op2(PRIM_mul, op2(PRIM_mul, x, x2), op2(PRIM_div, p, q));
  jx_array *small = op2(PRIM_add, x, random_fma32(x2, cst(x, -0.5), t));
  return sel(op2(PRIM_lt, prim_unary(PRIM_abs, x), f32_bits(0x3ED413CD)), small, big);
}

/* log / log1p as JAX computes them on the CPU: XLA's float32 versions for float32 and
 * bfloat16 (converted to float32 and back, as XLA does); float16 and float64 call the
 * C library there, as the primitives do here. */
static jx_array *via_f32(jx_array *(*f)(jx_array *), Prim p, jx_array *x) {
  if (!x) return NULL;
  if (x->dtype == JX_FLOAT32) return f(x);
  if (x->dtype != JX_BFLOAT16) return prim_unary(p, x);
  jx_array *r = f(prim_convert(x, JX_FLOAT32, false));
  return r ? prim_convert(r, JX_BFLOAT16, false) : NULL;
}
/* XLA's float32 exp on the CPU (its Cephes-style exp_f32, as jaxlib 0.10's optimized
 * LLVM IR shows it, with LLVM's contractions): x clamped to [-87.8, 88.8] (NaN passes),
 * n = floor(x log2(e) + 1/2) clamped to [-127, 127], r = x - n ln2 in two parts
 * (0.693359375 and -2.12194440e-4), exp(r) = 1 + r + r^2 (1/2 + r P(r)) with a
 * degree-4 P, times 2^n built in the exponent bits (so exp(-87.8) and below is 0). */
static const uint32_t EXP_P[5] = {0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA};

static jx_array *exp_f32(jx_array *x) {
  if (!x) return NULL;
  jx_array *lo = np_constant(-87.8f, JX_FLOAT32), *hi = np_constant(88.8f, JX_FLOAT32);
  x = sel(op2(PRIM_lt, x, lo), lo, x);
  x = sel(op2(PRIM_lt, hi, x), hi, x);
  jx_array *n = random_fma32(x, f32_bits(0x3FB8AA3B), cst(x, 0.5));
  n = n ? prim_unary(PRIM_floor, n) : NULL;
  n = sel(op2(PRIM_lt, n, cst(x, -127.0)), cst(x, -127.0), n);
  n = sel(op2(PRIM_lt, cst(x, 127.0), n), cst(x, 127.0), n);
  jx_array *nn = n ? prim_unary(PRIM_neg, n) : NULL;
  jx_array *r = random_fma32(nn, f32_bits(0x3F318000), x);
  r = random_fma32(nn, f32_bits(0xB95E8083), r);
  jx_array *z = op2(PRIM_mul, r, r);
  jx_array *y = random_fma32(r, f32_bits(EXP_P[0]), f32_bits(EXP_P[1]));
  for (int i = 2; i < 5; i++) y = random_fma32(y, r, f32_bits(EXP_P[i]));
  y = random_fma32(y, r, cst(x, 0.5));
  y = opc(PRIM_add, random_fma32(y, z, r), 1.0);
  jx_array *e = n ? prim_convert(n, JX_INT32, false) : NULL;
  e = e ? op2(PRIM_add, op2(PRIM_shift_left, e, np_constant(23, JX_INT32)), np_constant(0x3F800000, JX_INT32)) : NULL;
  return op2(PRIM_mul, y, e ? prim_bitcast(e, JX_FLOAT32) : NULL);
}

jx_array *random_exp(jx_array *x) { return via_f32(exp_f32, PRIM_exp, x); }
jx_array *random_log(jx_array *x) { return via_f32(log_f32, PRIM_log, x); }
jx_array *random_log1p(jx_array *x) { return via_f32(random_log1p_f32, PRIM_log1p, x); }

/* --------------------------------------------------------- validation */

bool random_check_key(const char *fn, jx_array *key, bool batched) {
  if (!key) {
    error_set(JX_ERR_VALUE, "%s: key is NULL", fn);
    return false;
  }
  array_check_live(fn, key); /* an abort naming a released key */
  char b[ARRAY_DESCRIBE_BUF];
  if (key->dtype != JX_UINT32) {
    error_set(JX_ERR_DTYPE, "%s: key must be a uint32 array of shape (2,) (jx_random_key), got %s",
              fn, array_describe(b, key));
    return false;
  }
  bool ok = key->ndim >= 1 && key->shape[key->ndim - 1] == 2 && (batched || key->ndim == 1);
  if (!ok) {
    error_set(JX_ERR_SHAPE, "%s: key must have shape %s, got %s", fn,
              batched ? "(..., 2)" : "(2,) (map over a batch of keys with jx_vmap)",
              array_describe(b, key));
    return false;
  }
  return true;
}

bool random_check_float(const char *fn, jx_dtype *dtype) {
  if (!dtype_is_valid(*dtype) || !dtype_is_floating(*dtype)) {
    error_set(JX_ERR_DTYPE, "%s: dtype must be a float dtype, got %s", fn,
              dtype_is_valid(*dtype) ? jx_dtype_name(*dtype) : "an invalid dtype");
    return false;
  }
  *dtype = dtype_canonicalize(*dtype);
  return true;
}

bool random_check_shape(const char *fn, int ndim, const int64_t **shape) {
  static const int64_t none[1] = {0};
  if (ndim > 0 && !*shape) {
    error_set(JX_ERR_VALUE, "%s: shape is NULL with ndim %d", fn, ndim);
    return false;
  }
  if (!*shape) *shape = none; /* ndim 0: helpers below never see NULL */
  if (!array_check_shape(fn, ndim, *shape)) return false;
  int64_t size = 1; /* (array_check_shape bounds the product) */
  for (int d = 0; d < ndim; d++) size *= (*shape)[d];
  if (size > ((int64_t)1 << 32)) { /* counters() counts in one uint32 word */
    error_set(JX_ERR_UNSUPPORTED, "%s: samples of %lld elements (more than 2^32)", fn, (long long)size);
    return false;
  }
  return true;
}

/* ------------------------------------------------------------ hashing */

static void key_words(jx_array *key, jx_array **k0, jx_array **k1) {
  /* key (..., 2) -> its two words, each of shape key.shape[:-1]. A NULL key (a failed
   * step before) gives NULL words, which every caller propagates. */
  *k0 = *k1 = NULL;
  if (!key) return;
  int nd = key->ndim;
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM], step[JX_MAX_NDIM];
  for (int d = 0; d < nd; d++) stop[d] = key->shape[d], step[d] = 1;
  for (int w = 0; w < 2; w++) {
    start[nd - 1] = w;
    stop[nd - 1] = w + 1;
    jx_array *s = prim_slice(key, start, stop, step);
    jx_array *r = s ? prim_reshape(s, nd - 1, key->shape) : NULL;
    *(w == 0 ? k0 : k1) = r;
  }
}

/* threefry2x32 of the counts (c0, c1) (shape C) under the keys (k0, k1) (batch shape
 * B): the words X0 and X1 (JAX's threefry2x32_p outputs), each of shape B + C. */
static bool hash(jx_array *k0, jx_array *k1, jx_array *c0, jx_array *c1, jx_array **x0,
                 jx_array **x1) {
  *x0 = *x1 = NULL;
  if (!k0 || !k1 || !c0 || !c1) return false;
  int nb = k0->ndim, nc = c0->ndim, nd = nb + nc;
  if (nd > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "jx_random: keys of rank %d and samples of rank %d exceed %d dims", nb,
              nc, JX_MAX_NDIM);
    return false;
  }
  int64_t shape[JX_MAX_NDIM];
  int kd[JX_MAX_NDIM], cd[JX_MAX_NDIM];
  for (int d = 0; d < nb; d++) shape[d] = k0->shape[d], kd[d] = d;
  for (int d = 0; d < nc; d++) shape[nb + d] = c0->shape[d], cd[d] = nb + d;
  jx_array *K0 = nc ? prim_broadcast_in_dim(k0, nd, shape, kd) : k0;
  jx_array *K1 = nc ? prim_broadcast_in_dim(k1, nd, shape, kd) : k1;
  jx_array *C0 = nb ? prim_broadcast_in_dim(c0, nd, shape, cd) : c0;
  jx_array *C1 = nb ? prim_broadcast_in_dim(c1, nd, shape, cd) : c1;
  jx_array *x[2] = {NULL, NULL};
  prim_threefry2x32(K0, K1, C0, C1, x);
  *x0 = x[0], *x1 = x[1];
  return *x0 && *x1;
}

/* prng.iota_2x32_shape: the C-order index of every element of `shape` as a 64-bit
 * count split into (hi, lo) uint32 words. Sizes up to 2^32 (hi == 0). Under jit (like a
 * staging tracer: the key) the iota and the zeros are staged with it, as JAX stages them,
 * not evaluated into constants of the sample's size. */
static bool counters(int ndim, const int64_t *shape, const jx_array *like, jx_array **hi, jx_array **lo) {
  *hi = *lo = NULL;
  int64_t size = 1;
  for (int d = 0; d < ndim; d++) size *= shape[d];
  if (size > ((int64_t)1 << 32)) {
    error_set(JX_ERR_UNSUPPORTED, "jx_random: samples of %lld elements (more than 2^32)",
              (long long)size);
    return false;
  }
  PrimParams pp = {.dtype = JX_UINT32, .ndim = 1, .shape = {size}, .axis = 0};
  jx_array *i = stage_bind_nullary(like, PRIM_iota, &pp);
  if (!i) i = prim_iota(JX_UINT32, 1, &size, 0);
  *lo = i ? prim_reshape(i, ndim, shape) : NULL;
  *hi = np_broadcast_to_like("jx_random", random_uconst(0, JX_UINT32), ndim, shape, like);
  return *hi && *lo;
}

/* Words of `key` (..., 2) packed back: x0, x1 of shape B + C -> B + C + (2,). */
static jx_array *stack_words(jx_array *x0, jx_array *x1) {
  if (!x0 || !x1) return NULL;
  int nd = x0->ndim;
  int64_t shape[JX_MAX_NDIM + 1];
  memcpy(shape, x0->shape, (size_t)nd * sizeof(int64_t));
  shape[nd] = 1;
  jx_array *parts[2] = {prim_reshape(x0, nd + 1, shape), prim_reshape(x1, nd + 1, shape)};
  if (!parts[0] || !parts[1]) return NULL;
  return prim_concatenate(2, parts, nd);
}

static jx_array *bits_words(jx_array *k0, jx_array *k1, int bit_width, int ndim,
                            const int64_t *shape) {
  /* _threefry_random_bits_partitionable: one hash per element, counts = its index. */
  jx_array *hi, *lo, *x0, *x1;
  if (!counters(ndim, shape, k0, &hi, &lo) || !hash(k0, k1, hi, lo, &x0, &x1))
    return NULL;
  if (bit_width == 64) {
    jx_array *h = prim_convert(x0, JX_UINT64, false), *l = prim_convert(x1, JX_UINT64, false);
    return op2(PRIM_or, op2(PRIM_shift_left, h, random_uconst(32, JX_UINT64)), l);
  }
  jx_array *x = prim_binary(PRIM_xor, x0, x1);
  return bit_width == 32 ? x : prim_convert(x, uint_dtype(bit_width), false);
}

jx_array *random_bits(jx_array *key, int bit_width, int ndim, const int64_t *shape) {
  jx_array *k0, *k1;
  key_words(key, &k0, &k1);
  return bits_words(k0, k1, bit_width, ndim, shape);
}

void random_split2(jx_array *key, jx_array **a, jx_array **b) {
  /* _threefry_split_foldlike with shape (2,): key i is hash(key, (0, i)). */
  jx_array *k0, *k1, *x0, *x1;
  key_words(key, &k0, &k1);
  *a = *b = NULL;
  for (int i = 0; i < 2; i++) {
    jx_array *c0 = random_uconst(0, JX_UINT32), *c1 = random_uconst((uint64_t)i, JX_UINT32);
    if (!hash(k0, k1, c0, c1, &x0, &x1)) return;
    *(i == 0 ? a : b) = stack_words(x0, x1);
  }
}

/* ---------------------------------------------------------------- keys */

jx_array *jx_random_key(uint64_t seed) {
  /* threefry_seed: (seed >> 32, seed & 0xFFFFFFFF). With x64 off JAX first converts
   * the seed to int32, so the high word is 0 and only the low 32 bits count. */
  uint32_t words[2] = {dtype_x64() ? (uint32_t)(seed >> 32) : 0u, (uint32_t)seed};
  int64_t two = 2;
  return array_from_host(words, JX_UINT32, false, 1, &two);
}

jx_array *jx_random_split(jx_array *key, int64_t num) {
  const char *fn = "jx_random_split";
  if (!random_check_key(fn, key, true)) return NULL;
  if (num < 0) {
    error_set(JX_ERR_SHAPE, "%s: num must be >= 0, got %lld", fn, (long long)num);
    return NULL;
  }
  if (key->ndim + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: key batch of rank %d leaves no room for the split axis", fn,
              key->ndim - 1);
    return NULL;
  }
  jx_scope_begin();
  jx_array *k0, *k1, *hi, *lo, *x0, *x1;
  key_words(key, &k0, &k1);
  if (!counters(1, &num, k0, &hi, &lo) || !hash(k0, k1, hi, lo, &x0, &x1))
    return scope_return(NULL);
  return scope_return(stack_words(x0, x1));
}

jx_array *jx_random_fold_in(jx_array *key, uint32_t data) {
  /* _threefry_fold_in: threefry_2x32(key, threefry_seed(data)), i.e. one hash of the
   * counts (0, data) whose two words are the new key. */
  if (!random_check_key("jx_random_fold_in", key, true)) return NULL;
  jx_scope_begin();
  jx_array *k0, *k1, *x0, *x1;
  key_words(key, &k0, &k1);
  jx_array *c0 = random_uconst(0, JX_UINT32), *c1 = random_uconst(data, JX_UINT32);
  if (!hash(k0, k1, c0, c1, &x0, &x1)) return scope_return(NULL);
  return scope_return(stack_words(x0, x1));
}

/* An integer array argument that must be 0-d (JAX refuses arrays: "use jax.vmap for
 * batching"); bool and floats are refused as JAX's TypeError. */
static bool check_int_scalar(const char *fn, const char *what, jx_array *x) {
  if (!x) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, what);
    return false;
  }
  char b[ARRAY_DESCRIBE_BUF];
  if (!dtype_is_integer(x->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: %s must be an integer array, got %s", fn, what,
              array_describe(b, x));
    return false;
  }
  if (x->ndim != 0) {
    error_set(JX_ERR_SHAPE, "%s: %s must be a scalar (map over a batch with jx_vmap), got %s", fn,
              what, array_describe(b, x));
    return false;
  }
  return true;
}

jx_array *jx_random_key_from(jx_array *seed) {
  /* _threefry_seed: k1 = shift_right_logical(seed, 32) (0 for seeds of 32 bits or
   * fewer), k2 = seed & 0xFFFFFFFF under standard promotion, i.e. the seed converted to
   * uint32 (sign-extended, then its low word); both as uint32, concatenated. */
  if (!check_int_scalar("jx_random_key_from", "seed", seed)) return NULL;
  jx_scope_begin();
  jx_array *hi;
  if (jx_dtype_itemsize(seed->dtype) == 8) {
    jx_array *u = seed->dtype == JX_UINT64 ? seed : prim_bitcast(seed, JX_UINT64);
    hi = prim_convert(op2(PRIM_shift_right, u, random_uconst(32, JX_UINT64)), JX_UINT32, false);
  } else {
    hi = random_uconst(0, JX_UINT32);
  }
  jx_array *lo = prim_convert(seed, JX_UINT32, false);
  return scope_return(stack_words(hi, lo));
}

jx_array *jx_random_fold_in_from(jx_array *key, jx_array *data) {
  /* random.fold_in: jnp.asarray(data, 'uint32') (wrapping), then _threefry_fold_in. */
  const char *fn = "jx_random_fold_in_from";
  if (!random_check_key(fn, key, true) || !check_int_scalar(fn, "data", data)) return NULL;
  jx_scope_begin();
  jx_array *k0, *k1, *x0, *x1;
  key_words(key, &k0, &k1);
  jx_array *c0 = random_uconst(0, JX_UINT32), *c1 = prim_convert(data, JX_UINT32, false);
  if (!hash(k0, k1, c0, c1, &x0, &x1)) return scope_return(NULL);
  return scope_return(stack_words(x0, x1));
}

jx_array *jx_random_threefry_2x32(jx_array *key, jx_array *count) {
  /* threefry2x32.threefry_2x32: the flattened count (padded with one 0 when its size is
   * odd) split into halves x0, x1; threefry2x32_p(key[0], key[1], x0, x1); the two
   * output halves concatenated, the padding dropped, reshaped to count's shape. */
  const char *fn = "jx_random_threefry_2x32";
  if (!random_check_key(fn, key, false)) return NULL;
  if (np_null_arg(fn, count, "count")) return NULL;
  if (count->dtype != JX_UINT32) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_DTYPE, "%s: count must be a uint32 array, got %s", fn,
              array_describe(b, count));
    return NULL;
  }
  int64_t n = 1;
  for (int d = 0; d < count->ndim; d++) n *= count->shape[d];
  if (n == 0) return jx_ref(count);
  jx_scope_begin();
  jx_array *flat = prim_reshape(count, 1, &n);
  int64_t m = n + (n & 1), half = m / 2, one = 1;
  if (n & 1) {
    jx_array *parts[2] = {flat, prim_reshape(random_uconst(0, JX_UINT32), 1, &one)};
    flat = parts[0] && parts[1] ? prim_concatenate(2, parts, 0) : NULL;
  }
  jx_array *k0, *k1, *x[2] = {NULL, NULL};
  key_words(key, &k0, &k1);
  int64_t st = 1, a0 = 0, a1 = half, b1 = m;
  jx_array *h0 = flat ? prim_slice(flat, &a0, &a1, &st) : NULL;
  jx_array *h1 = flat ? prim_slice(flat, &a1, &b1, &st) : NULL;
  if (!hash(k0, k1, h0, h1, &x[0], &x[1])) return scope_return(NULL);
  jx_array *out = prim_concatenate(2, x, 0);
  if (out && (n & 1)) out = prim_slice(out, &a0, &n, &st);
  return scope_return(out ? prim_reshape(out, count->ndim, count->shape) : NULL);
}

jx_array *jx_random_bits(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  const char *fn = "jx_random_bits";
  if (!random_check_key(fn, key, true) || !random_check_shape(fn, ndim, &shape)) return NULL;
  if (!dtype_is_valid(dtype) || !dtype_is_unsigned(dtype)) {
    error_set(JX_ERR_DTYPE, "%s: dtype must be an unsigned int dtype, got %s", fn,
              dtype_is_valid(dtype) ? jx_dtype_name(dtype) : "an invalid dtype");
    return NULL;
  }
  dtype = dtype_canonicalize(dtype);
  jx_scope_begin();
  return scope_return(random_bits(key, dtype_bits(dtype), ndim, shape));
}

/* ------------------------------------------------------------- uniform */

/* Random floats in [1, 2) of `dtype`: random mantissa bits under the exponent of 1.0
 * (core._uniform's bit trick; types with fewer than 8 mantissa bits, bfloat16, draw 8
 * bits and keep the top ones). */
static jx_array *one_to_two(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype) {
  int nbits = dtype_bits(dtype), nmant = random_nmant(dtype);
  int rng_bits = nmant < 8 ? 8 : nbits;
  jx_dtype udt = uint_dtype(nbits);
  jx_array *bits = random_bits(key, rng_bits, ndim, shape);
  if (bits && rng_bits != nbits) bits = prim_convert(bits, udt, false);
  jx_array *one = np_constant(1.0, dtype);
  jx_array *fb = op2(PRIM_shift_right, bits, random_uconst((uint64_t)(rng_bits - nmant), udt));
  fb = op2(PRIM_or, fb, one ? prim_bitcast(one, udt) : NULL);
  return fb ? prim_bitcast(fb, dtype) : NULL;
}

/* core._uniform with bounds given as arrays of `dtype` (0-d or broadcastable to shape):
 * max(minval, (f - 1) * (maxval - minval) + minval), the multiply-add fused on float32
 * and float64 as XLA does (float64 too: unfused, a quarter to half of a float64
 * uniform(-2, 3) sample was 1 ulp off JAX's), unless the caller knows the product is exact (then fusing changes
 * nothing and the emulated fma is skipped). */
static jx_array *uniform_between(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                                 jx_array *minval, jx_array *maxval, bool exact_product) {
  jx_array *floats = opc(PRIM_sub, one_to_two(key, ndim, shape, dtype), 1.0);
  /* staged with the bits under jit */
  jx_array *lo = np_broadcast_to_like("jx_random", minval, ndim, shape, floats);
  jx_array *hi = np_broadcast_to_like("jx_random", maxval, ndim, shape, floats);
  jx_array *span = op2(PRIM_sub, hi, lo);
  jx_array *r = (dtype == JX_FLOAT32 || dtype == JX_FLOAT64) && !exact_product
                    ? random_fma32(floats, span, lo)
                    : op2(PRIM_add, op2(PRIM_mul, floats, span), lo);
  return op2(PRIM_max, lo, r);
}

jx_array *random_uniform_between(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                                 jx_array *minval, jx_array *maxval) {
  return uniform_between(key, ndim, shape, dtype, minval, maxval, false);
}

/* v rounded to dtype (float), as a double: what np_constant stores. NaN on error. */
static double host_round(double v, jx_dtype dtype) {
  jx_array *c = np_constant(v, dtype);
  union {
    uint16_t u16;
    float f32;
    double f64;
  } u;
  size_t n = jx_dtype_itemsize(dtype);
  if (!c || jx_read(c, &u, n) != JX_OK) return NAN;
  if (dtype == JX_FLOAT16) return dtype_f16_to_f32(u.u16);
  if (dtype == JX_BFLOAT16) return dtype_bf16_to_f32(u.u16);
  return n == 4 ? u.f32 : u.f64;
}

/* uniform with bounds given as doubles. `folded`: the bounds are constants of JAX's
 * program (the samplers' fixed ranges; jax.random.uniform's own bounds are arguments
 * of its jit, so not there), which XLA's algebraic simplifier rewrites: when
 * maxval - minval rounds to exactly 1, (f - 1) * 1 + minval becomes f + (minval - 1)
 * with the constant folded (rounded) first. For float16 and the range (tiny, 1) of
 * gumbel and logistic, that drops tiny altogether. */
jx_array *random_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                         double minval, double maxval, bool folded) {
  double lo = host_round(minval, dtype), hi = host_round(maxval, dtype);
  if (folded && host_round(hi - lo, dtype) == 1.0) {
    jx_array *fold = np_constant(host_round(-1.0 + lo, dtype), dtype);
    jx_array *u = op2(PRIM_add, one_to_two(key, ndim, shape, dtype), fold);
    return op2(PRIM_max, np_constant(lo, dtype), u);
  }
  /* f - 1 has at most nmant significant bits, so its product with a span that is 0 or
   * a power of two (0 to 1, the normal's -1 to 1, ...) is exact. The span is the
   * rounded difference of the rounded bounds, as the primitives compute it. */
  double d = hi - lo, bb = d - hi;
  bool d_exact = (hi - (d - bb)) + (-lo - bb) == 0; /* TwoSum error of hi - lo */
  int e;
  double span = host_round(d, dtype);
  bool pow2 = d_exact && (span == 0 || fabs(frexp(span, &e)) == 0.5);
  return uniform_between(key, ndim, shape, dtype, np_constant(minval, dtype),
                         np_constant(maxval, dtype), pow2);
}


/* ------------------------------------------------------------- randint */

/* Clamps v into [lo, hi]. */
static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

jx_array *random_randint(const char *fn, jx_array *key, int ndim, const int64_t *shape,
                         int64_t minval, int64_t maxval, jx_dtype dtype) {
  /* core.randint + _randint. The bounds are Python ints: arrays of the default int
   * dtype (OverflowError outside it). Types under 32 bits sample in int32 with bounds
   * clipped to the type (maxval up to max + 1). Then: two keys from a split give
   * `higher` and `lower` bits; offset = ((higher % span) * (2^nbits % span) + lower %
   * span) % span in unsigned arithmetic, span = maxval - minval (1 when maxval <=
   * minval, + 1 when maxval is beyond the type). The bounds are static here, so the
   * scalar part of that arithmetic runs on the host, exactly as XLA would. */
  bool x64 = dtype_x64();
  int64_t imin = x64 ? INT64_MIN : INT32_MIN, imax = x64 ? INT64_MAX : INT32_MAX;
  if (minval < imin || minval > imax || maxval < imin || maxval > imax) {
    error_set(JX_ERR_VALUE, "%s: bounds [%lld, %lld) overflow the default int dtype %s", fn,
              (long long)minval, (long long)maxval, x64 ? "int64" : "int32");
    return NULL;
  }
  int bits = dtype_bits(dtype);
  jx_dtype sdt = dtype;      /* dtype sampled in */
  int mbits = x64 ? 64 : 32; /* bits of the bounds' (signed) dtype */
  int64_t mn = minval, mx = maxval;
  if (bits < 32) {
    int64_t tmin = (int64_t)dtype_min_value(dtype), tmax = (int64_t)dtype_max_value(dtype);
    mn = clamp64((int32_t)(uint32_t)(uint64_t)mn, tmin, tmax); /* astype(int32) wraps */
    mx = clamp64((int32_t)(uint32_t)(uint64_t)mx, tmin, tmax + 1);
    sdt = JX_INT32;
    mbits = 32;
    bits = 32;
  }
  bool sgn = dtype_is_signed(sdt);
  uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  uint64_t smax = sgn ? mask >> 1 : mask; /* the sampled type's max, as unsigned */
  int64_t smin = sgn ? -(int64_t)(mask >> 1) - 1 : 0;
  int64_t mmax = mbits == 64 ? INT64_MAX : INT32_MAX;
  int64_t mmin = mbits == 64 ? INT64_MIN : INT32_MIN;
  bool out_of_range = (uint64_t)mmax > smax && mx > (int64_t)smax;
  int64_t lo_c = smin > mmin ? smin : mmin;
  int64_t hi_c = smax < (uint64_t)mmax ? (int64_t)smax : mmax;
  mn = clamp64(mn, lo_c, hi_c);
  mx = clamp64(mx, lo_c, hi_c);
  uint64_t span = ((uint64_t)mx - (uint64_t)mn) & mask;
  if (mx <= mn) span = 1;
  if (out_of_range && mx > mn) span = (span + 1) & mask;
  jx_dtype udt = uint_dtype(bits);

  jx_array *ka, *kb;
  random_split2(key, &ka, &kb);
  jx_array *higher = random_bits(ka, bits, ndim, shape);
  jx_array *lower = random_bits(kb, bits, ndim, shape);
  jx_array *offset;
  if (span == 0) { /* the full range: XLA's x % 0 == x leaves `lower` itself */
    offset = lower;
  } else {
    uint64_t mult = (((uint64_t)1 << (bits / 2)) % span);
    mult = ((mult * mult) & mask) % span;
    jx_array *sp = random_uconst(span, udt), *mu = random_uconst(mult, udt);
    offset = op2(PRIM_add, op2(PRIM_mul, op2(PRIM_rem, higher, sp), mu), op2(PRIM_rem, lower, sp));
    offset = op2(PRIM_rem, offset, sp);
  }
  jx_array *r = op2(PRIM_add, random_uconst((uint64_t)mn, sdt),
                    offset ? prim_convert(offset, sdt, false) : NULL);
  return r && sdt != dtype ? prim_convert(r, dtype, false) : r;
}

