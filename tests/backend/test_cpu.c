/* test_cpu.c -- the cpu backend (generated C) against the interpreter: every IR op and
 * cast on every dtype over edge inputs, reductions, random fused DAGs, the caches, compile
 * errors, the thread pool and SIMD. Skips, passing, when no C compiler is found.
 *
 * Inputs include NaN, +-inf, -0, INT_MIN, zero divisors, shift counts 40 and -1 and all
 * float16/bfloat16 patterns. Results must match bit for bit (NaNs of any payload are
 * equal), or, for libm functions, within the per-op ulp bounds that tools/ulp_check.c
 * measured. To keep compiles few (each is ~50 ms), ops are tested in banks: one kernel computes op s of the bank on the inputs
 * at j, for gidx = s * per + j. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/cpu/cpu.h"
#include "core/dtype.h"
#include "ir/alu.h"
#include "render/render.h"
#include "test.h"

static char cache_dir[512]; /* JAXC_CACHE_DIR of this run */
static bool own_cache_dir;  /* created here, removed at the end */

/* ------------------------------------------------------------------ random */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int rnd_int(int n) { return (int)(rnd() % (uint64_t)n); }
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

/* ------------------------------------------------------------------ values */

static const jx_dtype all_dtypes[] = {JX_BOOL,  JX_INT8,   JX_UINT8,    JX_INT16, JX_UINT16,
                                      JX_INT32, JX_UINT32, JX_INT64,    JX_UINT64, JX_FLOAT16,
                                      JX_BFLOAT16, JX_FLOAT32, JX_FLOAT64};
#define NDTYPES ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

static bool is_float(jx_dtype d) { return dtype_is_floating(d); }

static const double float_edges[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 0.1, -0.7, 3.14159265358979,
    100.0, -100.0, 1e-3, 40.0, 7.0, 127.9, -128.5, 255.5, 65504.0, 70000.0, 1e10, -1e10,
    2147483648.0, -2147483649.0, 4294967296.0, 9.3e18, -9.3e18, 2e19, 1e30, 1e-30, 1e-40,
    5e-324, 1.7976931348623157e308, 3.4028234663852886e38, INFINITY, -INFINITY, NAN};
static const int64_t int_edges[] = {
    0, 1, -1, 2, -2, 3, -3, 7, 8, 40, -40, 63, 64, 100, -100, 127, -128, 255, 256, 32767,
    -32768, 65535, INT32_MAX, INT32_MIN, (int64_t)UINT32_MAX, INT64_MAX, INT64_MIN,
    0x123456789ll, -0x7edcba987ll};

/* Edge values of d (normalized to d), at most cap. */
static int edge_values(jx_dtype d, AluValue *out, int cap) {
  int n = 0;
  if (d == JX_BOOL) {
    out[n++] = (AluValue){.i = 0};
    out[n++] = (AluValue){.i = 1};
  } else if (is_float(d)) {
    for (size_t i = 0; i < sizeof float_edges / sizeof *float_edges && n < cap; i++)
      out[n++] = alu_normalize(d, (AluValue){.f = float_edges[i]});
  } else {
    for (size_t i = 0; i < sizeof int_edges / sizeof *int_edges && n < cap; i++)
      out[n++] = alu_normalize(d, (AluValue){.u = (uint64_t)int_edges[i]});
  }
  return n;
}

/* A random value of d: an edge value, or random bits (floats: never a signaling NaN,
 * which the interpreter's double representation would quiet). */
static AluValue random_value(jx_dtype d) {
  AluValue e[64];
  if (rnd_int(3) == 0) return e[rnd_int(edge_values(d, e, 64))];
  if (d == JX_BOOL) return (AluValue){.i = rnd_int(2)};
  if (!is_float(d)) return alu_normalize(d, (AluValue){.u = rnd() >> rnd_int(64)});
  if (rnd_int(2)) return alu_normalize(d, (AluValue){.f = (rnd_unit() * 2 - 1) * 10});
  uint64_t b = rnd();
  AluValue v;
  switch (d) {
  case JX_FLOAT16: v.f = dtype_f16_to_f32((uint16_t)b); break;
  case JX_BFLOAT16: v.f = dtype_bf16_to_f32((uint16_t)b); break;
  case JX_FLOAT32: {
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, 4);
    v.f = f;
    break;
  }
  default: memcpy(&v.f, &b, 8); break;
  }
  if (isnan(v.f)) v.f = NAN;
  return v;
}

static void *buffer_of(jx_dtype d, const AluValue *v, int64_t n) {
  void *b = calloc((size_t)(n ? n : 1), jx_dtype_itemsize(d));
  for (int64_t i = 0; i < n; i++) alu_store(b, d, i, v[i]);
  return b;
}

/* ---------------------------------------------------------------- comparing */

static uint64_t elem_bits(const void *buf, jx_dtype d, int64_t i) {
  size_t s = jx_dtype_itemsize(d);
  uint64_t u = 0;
  memcpy(&u, (const char *)buf + (size_t)i * s, s); /* little-endian hosts */
  return u;
}

static bool bits_nan(jx_dtype d, uint64_t b) {
  switch (d) {
  case JX_FLOAT16: return (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
  case JX_BFLOAT16: return (b & 0x7f80) == 0x7f80 && (b & 0x7f);
  case JX_FLOAT32: return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffff);
  case JX_FLOAT64:
    return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull);
  default: return false;
  }
}

/* Distance in units in the last place (of d's own format). */
static uint64_t ulp_distance(jx_dtype d, uint64_t a, uint64_t b) {
  int bits = (int)jx_dtype_itemsize(d) * 8;
  uint64_t sign = 1ull << (bits - 1);
  int64_t oa = (a & sign) ? -(int64_t)(a & (sign - 1)) : (int64_t)a;
  int64_t ob = (b & sign) ? -(int64_t)(b & (sign - 1)) : (int64_t)b;
  return oa > ob ? (uint64_t)(oa - ob) : (uint64_t)(ob - oa);
}

static double as_double(const void *buf, jx_dtype d, int64_t i) {
  AluValue v = alu_load(buf, d, i);
  return is_float(d) ? v.f : dtype_is_unsigned(d) ? (double)v.u : (double)v.i;
}

/* Tolerance (ulps) and a label for element i of a kernel's output. */
typedef struct Judge {
  int (*ulps)(int64_t i, const void *ctx);
  const char *(*label)(int64_t i, const void *ctx);
  const void *ctx;
} Judge;

static bool run_on(const Backend *be, const Kernel *k, void *const *in, void *out) {
  void *exe = NULL;
  if (be->prepare(be, k, &exe) != JX_OK) return false;
  return k->size == 0 || be->dispatch(be, exe, k, in, (void *[]){out}) == JX_OK;
}

/* Runs k on both backends and compares; returns the number of mismatches (the first
 * few are reported). in[i] holds the inputs. */
static int64_t compare(const char *what, const Kernel *k, void *const *in, const Judge *j) {
  size_t bytes = (size_t)(k->size ? k->size : 1) * jx_dtype_itemsize(k->dtype);
  void *want = calloc(1, bytes), *got = calloc(1, bytes);
  int64_t bad = 0;
  if (kernel_check(k) != JX_OK) {
    char *t = kernel_print(k);
    CHECK_MSG(false, "%s: kernel_check: %s\n%s", what, jx_last_error(), t ? t : "");
    free(t);
    jx_clear_error();
    bad = 1;
  } else if (!run_on(&backend_interp, k, in, want) || !run_on(&backend_cpu, k, in, got)) {
    CHECK_MSG(false, "%s: %s", what, jx_last_error());
    jx_clear_error();
    bad = 1;
  } else {
    for (int64_t i = 0; i < k->size; i++) {
      uint64_t a = elem_bits(want, k->dtype, i), b = elem_bits(got, k->dtype, i);
      if (a == b) continue;
      if (is_float(k->dtype)) {
        if (bits_nan(k->dtype, a) && bits_nan(k->dtype, b)) continue;
        int ulps = j && j->ulps ? j->ulps(i, j->ctx) : 0;
        if (ulps && !bits_nan(k->dtype, a) && !bits_nan(k->dtype, b) &&
            ulp_distance(k->dtype, a, b) <= (uint64_t)ulps)
          continue;
      }
      if (bad++ < 6) {
        char *t = bad == 1 && k->size < 5000 ? kernel_print(k) : NULL;
        test_fail(__FILE__, __LINE__,
                  "%s [%s] %s element %lld: interp %.17g (0x%llx), cpu %.17g (0x%llx)%s%s", what,
                  j && j->label ? j->label(i, j->ctx) : "", dtype_short_name(k->dtype),
                  (long long)i, as_double(want, k->dtype, i), (unsigned long long)a,
                  as_double(got, k->dtype, i), (unsigned long long)b, t ? "\n" : "", t ? t : "");
        free(t);
      }
    }
    test_checks++;
  }
  free(want);
  free(got);
  return bad;
}

/* --------------------------------------------------------------- op banks */

static bool libm_op(AluOp op) {
  switch (op) {
  case ALU_SIN: case ALU_COS: case ALU_TAN: case ALU_ASIN: case ALU_ACOS: case ALU_ATAN:
  case ALU_SINH: case ALU_COSH: case ALU_TANH: case ALU_ASINH: case ALU_ACOSH:
  case ALU_ATANH: case ALU_EXP: case ALU_EXP2: case ALU_EXPM1: case ALU_LOG: case ALU_LOG2:
  case ALU_LOG1P: case ALU_CBRT: case ALU_ERF: case ALU_ERFC: case ALU_POW: case ALU_ATAN2:
  case ALU_RSQRT:
    return true;
  default:
    return false;
  }
}

typedef struct Bank {
  AluOp ops[ALU_NUM_OPS];
  int nops;
  int64_t per;   /* elements per op */
  jx_dtype src;  /* operand dtype */
} Bank;

/* The most ulps a cpu result may differ from the interpreter's (correctly rounded up to
 * double libm's error) for libm ops: the maxima of tools/ulp_check.c over every float32
 * (docs/api.md) and over 2^24 float64 samples, for glibc's libmvec and jaxc's own float32
 * forms (prelude_c.h: tanh, erf, erfc, exp on AVX-512); exp2/pow also cover glibc's scalar
 * functions, which kernels call for loop tails shorter than 8. A 16-bit float is computed in float32 and rounded
 * once, so it may land one ulp of its format away. */
static const uint8_t ulps_f32[ALU_NUM_OPS] = {
    [ALU_EXP] = 3, [ALU_EXP2] = 2, [ALU_EXPM1] = 2, [ALU_LOG] = 4, [ALU_LOG2] = 2,
    [ALU_LOG1P] = 2, [ALU_TANH] = 5, [ALU_SIN] = 2, [ALU_COS] = 2, [ALU_TAN] = 4,
    [ALU_ASIN] = 3, [ALU_ACOS] = 2, [ALU_ATAN] = 2, [ALU_SINH] = 2, [ALU_COSH] = 2,
    [ALU_ASINH] = 2, [ALU_ACOSH] = 3, [ALU_ATANH] = 2, [ALU_ERF] = 6, [ALU_ERFC] = 7,
    [ALU_CBRT] = 3, [ALU_RSQRT] = 1, [ALU_POW] = 2, [ALU_ATAN2] = 3,
};
static const uint8_t ulps_f64[ALU_NUM_OPS] = {
    [ALU_EXP] = 3, [ALU_EXP2] = 1, [ALU_EXPM1] = 2, [ALU_LOG] = 1, [ALU_LOG2] = 2,
    [ALU_LOG1P] = 2, [ALU_TANH] = 1, [ALU_SIN] = 3, [ALU_COS] = 4, [ALU_TAN] = 3,
    [ALU_ASIN] = 3, [ALU_ACOS] = 2, [ALU_ATAN] = 3, [ALU_SINH] = 2, [ALU_COSH] = 2,
    [ALU_ASINH] = 1, [ALU_ACOSH] = 2, [ALU_ATANH] = 1, [ALU_ERF] = 3, [ALU_ERFC] = 2,
    [ALU_CBRT] = 2, [ALU_RSQRT] = 1, [ALU_POW] = 1, [ALU_ATAN2] = 2,
};
static int op_ulps(AluOp op, jx_dtype d) {
  if (!libm_op(op)) return 0;
  if (d == JX_FLOAT64) return ulps_f64[op];
  if (d == JX_FLOAT32) return ulps_f32[op];
  return 1;
}

static int bank_ulps(int64_t i, const void *ctx) {
  const Bank *b = ctx;
  return op_ulps(b->ops[i / b->per], b->src);
}
static const char *bank_label(int64_t i, const void *ctx) {
  const Bank *b = ctx;
  return alu_op_name(b->ops[i / b->per]);
}

/* The node op(x...), or NULL when op does not accept these operands. */
static const AluExp *try_op(AluOp op, const AluExp *const *x) {
  const AluExp *e = NULL;
  switch (alu_op_group(op)) {
  case ALU_GROUP_BINARY: case ALU_GROUP_COMPARE: e = alu_binary(op, x[0], x[1]); break;
  case ALU_GROUP_UNARY: case ALU_GROUP_UNARY_PRED: e = alu_unary(op, x[0]); break;
  default: return NULL;
  }
  char buf[160];
  if (!e || alu_node_error(e, buf, sizeof buf)) {
    jx_clear_error();
    return NULL;
  }
  return e;
}

/* out[s * per + j] = ops[s](in0[j], in1[j]): a chain of WHEREs on s = gidx / per. */
static const AluExp *bank_exp(Bank *b, const AluExp *const *x, const AluExp *sel) {
  const AluExp *exp = NULL;
  for (int s = b->nops - 1; s >= 0; s--) {
    const AluExp *node = try_op(b->ops[s], x);
    exp = exp ? alu_where(alu_binary(ALU_CMPEQ, sel, alu_const_int(JX_INT64, s)), node, exp)
              : node;
  }
  return exp;
}

/* Runs every op of `group` (BINARY, COMPARE, UNARY or UNARY_PRED) on dtype d. */
static void run_bank(jx_dtype d, AluGroup group) {
  Bank b = {.src = d};
  const AluExp *probe = alu_global(0, d, alu_special("gidx", 1));
  const AluExp *px[2] = {probe, alu_global(1, d, alu_special("gidx", 1))};
  for (int op = 0; op < ALU_NUM_OPS; op++)
    if (alu_op_group((AluOp)op) == group && try_op((AluOp)op, px)) b.ops[b.nops++] = (AluOp)op;
  if (!b.nops) return;
  bool binary = group == ALU_GROUP_BINARY || group == ALU_GROUP_COMPARE;
  /* Operands: all pairs of edge values plus random ones (binary); edge values, random
   * values and, for 16-bit floats, a third of all bit patterns (unary). */
  AluValue edges[64];
  int ne = edge_values(d, edges, 64);
  int64_t nrand = binary ? (is_float(d) ? 1000 : 300) : (is_float(d) ? 3000 : 200);
  int64_t nall = !binary && (d == JX_FLOAT16 || d == JX_BFLOAT16) ? 65536 / 3 : 0;
  b.per = (binary ? (int64_t)ne * ne : ne) + nrand + nall;
  AluValue *x0 = malloc((size_t)b.per * sizeof *x0), *x1 = malloc((size_t)b.per * sizeof *x1);
  int64_t n = 0;
  if (binary) {
    for (int i = 0; i < ne; i++)
      for (int k = 0; k < ne; k++) x0[n] = edges[i], x1[n++] = edges[k];
  } else {
    for (int i = 0; i < ne; i++) x0[n] = x1[n] = edges[i], n++;
  }
  for (int64_t i = 0; i < nall; i++) {
    uint16_t h = (uint16_t)(i * 3 + 1);
    x0[n].f = d == JX_FLOAT16 ? dtype_f16_to_f32(h) : dtype_bf16_to_f32(h);
    if (isnan(x0[n].f)) x0[n].f = NAN;
    x1[n] = x0[n];
    n++;
  }
  while (n < b.per) x0[n] = random_value(d), x1[n++] = random_value(d);
  int64_t size = b.per * b.nops;
  const AluExp *g = alu_special("gidx", size);
  const AluExp *j = alu_binary(ALU_MOD, g, alu_const_int(JX_INT64, b.per));
  const AluExp *sel = alu_binary(ALU_DIV, g, alu_const_int(JX_INT64, b.per));
  const AluExp *x[2] = {alu_global(0, d, j), alu_global(1, d, j)};
  Kernel k = {.nargs = 2, .arg_dtypes = {d, d}, .size = size, .exp = bank_exp(&b, x, sel)};
  k.dtype = k.exp->dtype;
  void *in[2] = {buffer_of(d, x0, b.per), buffer_of(d, x1, b.per)};
  char what[64];
  static const char *const kinds[] = {[ALU_GROUP_BINARY] = "binary",
                                      [ALU_GROUP_COMPARE] = "compare",
                                      [ALU_GROUP_UNARY] = "unary",
                                      [ALU_GROUP_UNARY_PRED] = "predicate"};
  snprintf(what, sizeof what, "%s ops on %s", kinds[group], dtype_short_name(d));
  Judge judge = {bank_ulps, bank_label, &b};
  compare(what, &k, in, &judge);
  free(in[0]);
  free(in[1]);
  free(x0);
  free(x1);
}

/* Subnormal results are kept, not flushed (JAX on the CPU flushes float32 subnormals to
 * zero: there jnp.exp(-100.) is 0.0; here it is 3.78e-44 on both backends, as IEEE and
 * libm give). Also subnormal inputs: tanh/sinh/asinh/atan of x ~ x, log finite. 67
 * elements run the 16-lane main loop, the 8-lane epilogue and the scalar tail. */
static bool subnormal_in(jx_dtype d, double v) {
  return d == JX_FLOAT32 ? fpclassify((float)v) == FP_SUBNORMAL : fpclassify(v) == FP_SUBNORMAL;
}

static void test_subnormals(void) {
  static const AluOp ops[] = {ALU_EXP, ALU_TANH, ALU_SINH, ALU_ASINH, ALU_ATAN, ALU_LOG, ALU_SIN,
                              ALU_EXPM1, ALU_ERF};
  enum { N = 67 };
  for (int di = 0; di < 2; di++) {
    jx_dtype d = di ? JX_FLOAT64 : JX_FLOAT32;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      AluValue x[N];
      for (int i = 0; i < N; i++) {
        double sub = d == JX_FLOAT32 ? 0x1p-140 : 0x1p-1060; /* subnormal inputs */
        double e = d == JX_FLOAT32 ? -100.0 : -720.0;          /* exp: subnormal results */
        x[i].f = ops[o] == ALU_EXP ? e - 0.37 * (i % 7) : sub * (1 + i % 5) * (i % 2 ? -1 : 1);
        if (ops[o] == ALU_LOG) x[i].f = fabs(x[i].f);
      }
      void *in = buffer_of(d, x, N);
      const AluExp *g = alu_special("gidx", N);
      Kernel k = {.nargs = 1, .arg_dtypes = {d}, .size = N, .dtype = d,
                  .exp = alu_unary(ops[o], alu_global(0, d, g))};
      size_t bytes = (size_t)N * jx_dtype_itemsize(d);
      void *want = calloc(1, bytes), *got = calloc(1, bytes);
      CHECK(run_on(&backend_interp, &k, (void *[]){in}, want));
      CHECK(run_on(&backend_cpu, &k, (void *[]){in}, got));
      for (int i = 0; i < N; i++) {
        double a = as_double(want, d, i), b = as_double(got, d, i);
        if (ops[o] != ALU_LOG && ops[o] != ALU_ERF) {
          CHECK_MSG(a != 0 && subnormal_in(d, a), "%s interp %s(%g) = %g",
                    dtype_short_name(d), alu_op_name(ops[o]), x[i].f, a);
          CHECK_MSG(b != 0 && subnormal_in(d, b), "%s cpu %s(%g) = %g, interp %g",
                    dtype_short_name(d), alu_op_name(ops[o]), x[i].f, b, a);
        }
        uint64_t ua = elem_bits(want, d, i), ub = elem_bits(got, d, i);
        CHECK_MSG(ulp_distance(d, ua, ub) <= (uint64_t)op_ulps(ops[o], d),
                  "%s %s(%g): interp %g, cpu %g", dtype_short_name(d), alu_op_name(ops[o]), x[i].f,
                  a, b);
      }
      if (d == JX_FLOAT32 && ops[o] == ALU_EXP) /* expf(-100) = 3.78350585e-44 (0x1bp-149) */
        CHECK(((float *)got)[0] == 0x1bp-149f && ((float *)want)[0] == 0x1bp-149f);
      free(want), free(got), free(in);
    }
  }
}

/* Runs kernel `fast` on the interpreter (its direct loop, where it takes one) and again
 * with an extra output (the general path: the node rows); every element's bits must
 * agree. */
static void check_interp_fast(const Kernel *fast, void *const *in, const char *what) {
  jx_dtype d = fast->dtype;
  Kernel rows = *fast;
  rows.nextra = 1, rows.extra[0] = alu_unary(ALU_NEG, fast->exp), rows.extra_dtypes[0] = d;
  size_t bytes = (size_t)fast->size * jx_dtype_itemsize(d);
  void *got = calloc(1, bytes), *want = calloc(1, bytes), *extra = calloc(1, bytes);
  void *ef = NULL, *er = NULL;
  CHECK(backend_interp.prepare(&backend_interp, fast, &ef) == JX_OK &&
        backend_interp.dispatch(&backend_interp, ef, fast, in, (void *[]){got}) == JX_OK);
  CHECK(backend_interp.prepare(&backend_interp, &rows, &er) == JX_OK &&
        backend_interp.dispatch(&backend_interp, er, &rows, in, (void *[]){want, extra}) == JX_OK);
  for (int i = 0; i < fast->size; i++)
    CHECK_MSG(elem_bits(got, d, i) == elem_bits(want, d, i), "%s %s element %d: %llx vs %llx", dtype_short_name(d),
              what, i, (unsigned long long)elem_bits(got, d, i), (unsigned long long)elem_bits(want, d, i));
  free(got), free(want), free(extra);
}

/* The interpreter's direct loop for out = in0 op in1 (interp.c, binary_fast_op: + - *
 * and float /, float32/float64/int32/int64) gives the bits of its node rows: the same
 * kernel with an extra output (the rows' path) over NaNs with payloads, infinities,
 * signed zeros, subnormals, the largest values and integer overflow. */
static void test_interp_binary_fast(void) {
  static const jx_dtype ds[] = {JX_FLOAT32, JX_FLOAT64, JX_INT32, JX_INT64};
  static const AluOp ops[] = {ALU_ADD, ALU_SUB, ALU_MUL, ALU_DIV};
  enum { NV = 12, N = NV * NV };
  for (size_t di = 0; di < sizeof ds / sizeof *ds; di++) {
    jx_dtype d = ds[di];
    bool flt = d == JX_FLOAT32 || d == JX_FLOAT64;
    AluValue v[NV], a[N], b[N];
    if (flt) {
      const double big = d == JX_FLOAT32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
      const double sub = d == JX_FLOAT32 ? 0x1p-149 : 0x1p-1074;
      const double fv[NV] = {0.0, -0.0, 1.5, -3.25, INFINITY, -INFINITY, NAN, -NAN, big, -big, sub, 1e-3};
      for (int i = 0; i < NV; i++) v[i].f = fv[i];
    } else {
      const int64_t lo = d == JX_INT32 ? INT32_MIN : INT64_MIN, hi = d == JX_INT32 ? INT32_MAX : INT64_MAX;
      const int64_t iv[NV] = {0, 1, -1, 7, -13, hi, lo, hi - 1, lo + 1, 65536, -65537, 123456789};
      for (int i = 0; i < NV; i++) v[i].i = iv[i];
    }
    for (int i = 0; i < NV; i++)
      for (int j = 0; j < NV; j++) a[i * NV + j] = v[i], b[i * NV + j] = v[j];
    void *in[2] = {buffer_of(d, a, N), buffer_of(d, b, N)};
    if (flt) { /* a NaN with a payload in each */
      uint64_t q = d == JX_FLOAT32 ? 0x7fc12345u : 0x7ff8000012345678ull;
      memcpy(in[0], &q, jx_dtype_itemsize(d));
      memcpy((char *)in[1] + jx_dtype_itemsize(d), &q, jx_dtype_itemsize(d));
    }
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
      if (ops[o] == ALU_DIV && !flt) continue;
      const AluExp *g = alu_special("gidx", N);
      const AluExp *e = alu_binary(ops[o], alu_global(0, d, g), alu_global(1, d, g));
      Kernel fast = {.nargs = 2, .arg_dtypes = {d, d}, .size = N, .dtype = d, .exp = e};
      check_interp_fast(&fast, in, alu_op_name(ops[o]));
    }
    free(in[0]), free(in[1]);
  }
}

/* The interpreter's direct loop for out = f(in0) (interp.c unary_fast_fn): the same bits
 * as the node rows (the kernel with an extra output takes the general path) for every
 * special value, a NaN with a payload included, and for each op it takes. */
static void test_interp_unary_fast(void) {
  static const jx_dtype ds[] = {JX_FLOAT32, JX_FLOAT64};
  static const AluOp ops[] = {ALU_NEG, ALU_ABS, ALU_SIN, ALU_COS, ALU_TAN, ALU_TANH, ALU_EXP,
                              ALU_EXP2, ALU_EXPM1, ALU_LOG, ALU_LOG2, ALU_LOG1P, ALU_SQRT, ALU_ERF};
  enum { N = 16 };
  for (size_t di = 0; di < sizeof ds / sizeof *ds; di++) {
    jx_dtype d = ds[di];
    const double big = d == JX_FLOAT32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
    const double sub = d == JX_FLOAT32 ? 0x1p-149 : 0x1p-1074;
    const double fv[N] = {0.0, -0.0, 1.5, -3.25, INFINITY, -INFINITY, NAN, -NAN, big, -big, sub, 1e-3, 88.5, -103.9, 0.7, 1e6};
    AluValue a[N];
    for (int i = 0; i < N; i++) a[i].f = fv[i];
    void *in[1] = {buffer_of(d, a, N)};
    uint64_t q = d == JX_FLOAT32 ? 0x7fc12345u : 0x7ff8000012345678ull; /* a NaN with a payload */
    memcpy(in[0], &q, jx_dtype_itemsize(d));
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
      const AluExp *e = alu_unary(ops[o], alu_global(0, d, alu_special("gidx", N)));
      Kernel fast = {.nargs = 1, .arg_dtypes = {d}, .size = N, .dtype = d, .exp = e};
      check_interp_fast(&fast, in, alu_op_name(ops[o]));
    }
    free(in[0]);
  }
}

static void test_binary_ops(void) {
  for (int i = 0; i < NDTYPES; i++) run_bank(all_dtypes[i], ALU_GROUP_BINARY);
}
static void test_compare_ops(void) {
  for (int i = 0; i < NDTYPES; i++) run_bank(all_dtypes[i], ALU_GROUP_COMPARE);
}
static void test_unary_ops(void) {
  for (int i = 0; i < NDTYPES; i++) {
    run_bank(all_dtypes[i], ALU_GROUP_UNARY);
    run_bank(all_dtypes[i], ALU_GROUP_UNARY_PRED);
  }
}

/* ----------------------------------------------------- casts, bitcasts, ... */

typedef struct CastBank {
  jx_dtype src[NDTYPES];
  int n;
  int64_t per;
} CastBank;

static const char *cast_label(int64_t i, const void *ctx) {
  const CastBank *c = ctx;
  return dtype_short_name(c->src[i / c->per]);
}

/* For each target dtype, one kernel: CAST (or BITCAST) from every source dtype. */
static void run_casts(bool bitcast) {
  int64_t per = 65536 + 200; /* 16-bit floats: every pattern; others: edges + random */
  void *in[NDTYPES];
  for (int s = 0; s < NDTYPES; s++) {
    jx_dtype d = all_dtypes[s];
    AluValue *v = malloc((size_t)per * sizeof *v), edges[64];
    int ne = edge_values(d, edges, 64);
    for (int64_t i = 0; i < per; i++) {
      if (i < ne) v[i] = edges[i];
      else if ((d == JX_FLOAT16 || d == JX_BFLOAT16) && i - ne < 65536) {
        uint16_t h = (uint16_t)(i - ne);
        v[i].f = d == JX_FLOAT16 ? dtype_f16_to_f32(h) : dtype_bf16_to_f32(h);
        if (isnan(v[i].f)) v[i].f = NAN;
      } else {
        v[i] = random_value(d);
      }
    }
    in[s] = buffer_of(d, v, per);
    free(v);
  }
  for (int t = 0; t < NDTYPES; t++) {
    jx_dtype to = all_dtypes[t];
    CastBank c = {.per = per};
    int args[NDTYPES];
    for (int s = 0; s < NDTYPES; s++) {
      jx_dtype from = all_dtypes[s];
      if (bitcast && (from == JX_BOOL || to == JX_BOOL || from == to ||
                      dtype_bits(from) != dtype_bits(to)))
        continue;
      args[c.n] = s;
      c.src[c.n++] = from;
    }
    if (!c.n) continue;
    int64_t size = per * c.n;
    const AluExp *g = alu_special("gidx", size);
    const AluExp *j = alu_binary(ALU_MOD, g, alu_const_int(JX_INT64, per));
    const AluExp *sel = alu_binary(ALU_DIV, g, alu_const_int(JX_INT64, per));
    Kernel k = {.nargs = c.n, .size = size, .dtype = to};
    void *kin[NDTYPES];
    for (int s = c.n - 1; s >= 0; s--) {
      k.arg_dtypes[s] = c.src[s];
      kin[s] = in[args[s]];
      const AluExp *x = alu_global(s, c.src[s], j);
      const AluExp *node = bitcast ? alu_bitcast(x, to) : alu_cast(x, to);
      k.exp = k.exp ? alu_where(alu_binary(ALU_CMPEQ, sel, alu_const_int(JX_INT64, s)), node, k.exp)
                    : node;
    }
    char what[64];
    snprintf(what, sizeof what, "%s to %s", bitcast ? "bitcast" : "cast", dtype_short_name(to));
    Judge judge = {NULL, cast_label, &c};
    compare(what, &k, kin, &judge);
  }
  for (int s = 0; s < NDTYPES; s++) free(in[s]);
}

static void test_casts(void) { run_casts(false); }
static void test_bitcasts(void) { run_casts(true); }

static void test_where_threefry(void) {
  int64_t n = 3000;
  AluValue *c = malloc((size_t)n * sizeof *c), *a = malloc((size_t)n * sizeof *a),
           *b = malloc((size_t)n * sizeof *b);
  for (int t = 0; t < NDTYPES; t++) {
    jx_dtype d = all_dtypes[t];
    for (int64_t i = 0; i < n; i++)
      c[i].i = rnd_int(2), a[i] = random_value(d), b[i] = random_value(d);
    const AluExp *g = alu_special("gidx", n);
    Kernel k = {.nargs = 3, .arg_dtypes = {JX_BOOL, d, d}, .size = n, .dtype = d};
    k.exp = alu_where(alu_global(0, JX_BOOL, g), alu_global(1, d, g), alu_global(2, d, g));
    void *in[3] = {buffer_of(JX_BOOL, c, n), buffer_of(d, a, n), buffer_of(d, b, n)};
    compare("where", &k, in, NULL);
    for (int i = 0; i < 3; i++) free(in[i]);
  }
  /* Threefry on random keys and counters (known answers are in tests/ir/test_alu.c). */
  const AluExp *g = alu_special("gidx", n), *x[4];
  void *in[4];
  for (int i = 0; i < 4; i++) {
    for (int64_t e = 0; e < n; e++) a[e].u = (uint32_t)rnd();
    in[i] = buffer_of(JX_UINT32, a, n);
    x[i] = alu_global(i, JX_UINT32, g);
  }
  Kernel k = {.nargs = 4, .arg_dtypes = {JX_UINT32, JX_UINT32, JX_UINT32, JX_UINT32},
              .size = n, .dtype = JX_UINT64, .exp = alu_threefry2x32(x[0], x[1], x[2], x[3])};
  compare("threefry2x32", &k, in, NULL);
  for (int i = 0; i < 4; i++) free(in[i]);
  free(a), free(b), free(c);
}

/* --------------------------------------------------------------- reductions */

static AluValue identity_of(AluOp op, jx_dtype d) {
  bool fl = is_float(d);
  switch (op) {
  case ALU_ADD: case ALU_OR: return alu_normalize(d, fl ? (AluValue){.f = 0} : (AluValue){.u = 0});
  case ALU_MUL: return alu_normalize(d, fl ? (AluValue){.f = 1} : (AluValue){.u = 1});
  case ALU_AND: return alu_normalize(d, (AluValue){.i = d == JX_BOOL ? 1 : -1});
  case ALU_MAX:
    if (fl) return (AluValue){.f = -INFINITY};
    return dtype_is_unsigned(d) || d == JX_BOOL ? (AluValue){.u = 0}
           : alu_normalize(d, (AluValue){.u = 1ull << (dtype_bits(d) - 1)});
  default: /* MIN */
    if (fl) return (AluValue){.f = INFINITY};
    if (d == JX_BOOL) return (AluValue){.i = 1};
    if (dtype_is_unsigned(d)) return alu_normalize(d, (AluValue){.u = UINT64_MAX});
    return alu_normalize(d, (AluValue){.u = (1ull << (dtype_bits(d) - 1)) - 1});
  }
}

/* A reduction of op over x (size outputs x rsize), rows contiguous or (transposed)
 * columns, with an optional epilogue mixing acc with a second input at gidx. */
static void run_reduction(AluOp op, jx_dtype d, int64_t size, int64_t rsize, bool transposed,
                          bool epilogue) {
  int64_t total = size * rsize;
  AluValue *x = malloc((size_t)(total ? total : 1) * sizeof *x);
  AluValue *y = malloc((size_t)(size ? size : 1) * sizeof *y);
  bool small = op == ALU_MUL && !is_float(d); /* keep integer products from all wrapping */
  for (int64_t i = 0; i < total; i++)
    x[i] = small ? alu_normalize(d, (AluValue){.u = (uint64_t)(rnd_int(5) - 2)}) : random_value(d);
  if (op == ALU_ADD && is_float(d) && rnd_int(2)) /* mostly finite sums */
    for (int64_t i = 0; i < total; i++)
      x[i] = alu_normalize(d, (AluValue){.f = (rnd_unit() * 2 - 1) * 100});
  for (int64_t i = 0; i < size; i++) y[i] = random_value(d);
  const AluExp *g = alu_special("gidx", size), *r = alu_special("ridx", rsize);
  const AluExp *idx =
      transposed ? alu_binary(ALU_ADD, alu_binary(ALU_MUL, r, alu_const_int(JX_INT64, size)), g)
                 : alu_binary(ALU_ADD, alu_binary(ALU_MUL, g, alu_const_int(JX_INT64, rsize)), r);
  Kernel k = {.nargs = 2, .arg_dtypes = {d, d}, .size = size, .dtype = d, .has_reduction = true};
  k.exp = alu_global(0, d, idx);
  k.reduction = (Reduction){.op = op, .dtype = d, .size = rsize, .identity = identity_of(op, d)};
  if (epilogue) { /* out = f32(acc < y[gidx] ? acc : y[gidx]) */
    const AluExp *acc = alu_variable("acc", d), *yv = alu_global(1, d, g);
    k.reduction.epilogue =
        alu_cast(alu_where(alu_binary(ALU_CMPLT, acc, yv), acc, yv), JX_FLOAT32);
    k.dtype = JX_FLOAT32;
  }
  void *in[2] = {buffer_of(d, x, total), buffer_of(d, y, size)};
  char what[96];
  snprintf(what, sizeof what, "reduce %s %s %lldx%lld%s%s", alu_op_name(op), dtype_short_name(d),
           (long long)size, (long long)rsize, transposed ? " transposed" : "",
           epilogue ? " with epilogue" : "");
  compare(what, &k, in, NULL);
  free(in[0]), free(in[1]), free(x), free(y);
}

static void test_reductions(void) {
  static const AluOp ops[] = {ALU_ADD, ALU_MUL, ALU_MIN, ALU_MAX, ALU_AND, ALU_OR};
  static const int64_t shapes[][2] = {{1, 1000}, {37, 13}, {100, 1}, {16, 16}, {17, 33}, {3, 0}};
  int n = 0;
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
    for (int t = 0; t < NDTYPES; t++) {
      jx_dtype d = all_dtypes[t];
      const AluExp *acc = alu_variable("acc", d);
      if (!try_op(ops[o], (const AluExp *[]){acc, acc})) continue;
      const int64_t *s = shapes[n % 6];
      run_reduction(ops[o], d, s[0], s[1], n % 3 == 1, n % 2 == 0);
      n++;
    }
  /* Every shape, both layouts, float32 sums (the common case). */
  for (int s = 0; s < 6; s++)
    for (int tr = 0; tr < 2; tr++)
      run_reduction(ALU_ADD, JX_FLOAT32, shapes[s][0], shapes[s][1], tr, s % 2);
}

/* Float row MAX/MIN as the cpu renders them with order keys (render/c.c render_row_lanes,
 * prelude.h JX_FLOAT_KEYS): rows of +-0 only, -0 only, negatives with a zero, a NaN of
 * either sign, +-inf, and ordinary values, at lengths that take the 64-lane loop with
 * and without a tail and the 16-lane one, as plain reductions and as the first phase of
 * a two-phase one (softmax's max); bit for bit against the interpreter. */
static AluValue key_edge_value(int64_t row, int64_t i, int64_t R) {
  double v = (rnd_unit() * 2 - 1) * 1e3;
  switch (row % 7) {
  case 0: return (AluValue){.f = v};
  case 1: return (AluValue){.f = rnd_int(2) ? 0.0 : -0.0};
  case 2: return (AluValue){.f = i == R / 2 ? -0.0 : -fabs(v) - 1};
  case 3: return (AluValue){.f = i == R - 1 ? (rnd_int(2) ? NAN : -NAN) : v};
  case 4: return (AluValue){.f = rnd_int(2) ? INFINITY : -INFINITY};
  case 5: return (AluValue){.f = i == 0 ? -NAN : -INFINITY};
  default: return (AluValue){.f = i % 3 ? -0.0 : -fabs(v)};
  }
}

static void test_row_minmax_keys(void) {
  static const int64_t lens[] = {1024, 1000, 64, 100, 13, 1};
  static const jx_dtype dts[] = {JX_FLOAT32, JX_FLOAT64};
  for (int di = 0; di < 2; di++)
    for (int li = 0; li < 6; li++)
      for (int two = 0; two < 2; two++)
        for (int mx = 0; mx < 2; mx++) {
          jx_dtype d = dts[di];
          int64_t R = lens[li], size = 21, total = size * R;
          AluValue *x = malloc((size_t)total * sizeof *x);
          for (int64_t g = 0; g < size; g++)
            for (int64_t i = 0; i < R; i++) x[g * R + i] = alu_normalize(d, key_edge_value(g, i, R));
          void *in[1] = {buffer_of(d, x, total)};
          const AluExp *gi = alu_special("gidx", size), *ri = alu_special("ridx", R);
          const AluExp *xv = alu_global(0, d, alu_binary(ALU_ADD, alu_binary(ALU_MUL, gi, alu_const_int(JX_INT64, R)), ri));
          AluOp op = mx ? ALU_MAX : ALU_MIN;
          Kernel k = {.nargs = 1, .arg_dtypes = {d}, .size = size, .dtype = d, .has_reduction = true};
          if (two) { /* max (min) of the row, then the sum of x - it; out = that max (min) */
            k.has_pre = true;
            k.pre = (Reduction){.op = op, .dtype = d, .size = R, .identity = identity_of(op, d)};
            k.pre_exp = xv;
            k.exp = alu_binary(ALU_SUB, xv, alu_variable("pre", d));
            k.reduction = (Reduction){.op = ALU_ADD, .dtype = d, .size = R, .identity = identity_of(ALU_ADD, d),
                                      .epilogue = alu_variable("pre", d)};
          } else {
            k.exp = xv;
            k.reduction = (Reduction){.op = op, .dtype = d, .size = R, .identity = identity_of(op, d)};
          }
          char what[96];
          snprintf(what, sizeof what, "row %s %s 21x%lld%s", alu_op_name(op), dtype_short_name(d),
                   (long long)R, two ? " (first phase)" : "");
          CHECK_MSG(compare(what, &k, in, NULL) == 0, "%s", what);
          free(in[0]);
          free(x);
        }
}

/* ------------------------------------------------------------ random DAGs */

typedef struct Gen {
  bool approx;   /* continuous float ops only (libm results compared with a tolerance) */
  int nin;
  jx_dtype in_dt[4];
  const AluExp *idx[4];
  const AluExp *pool[64];
  int npool;
} Gen;

static jx_dtype random_dtype(bool approx) {
  if (approx) return rnd_int(2) ? JX_FLOAT32 : JX_FLOAT64;
  return all_dtypes[rnd_int(NDTYPES)];
}

static const AluExp *gen(Gen *g, jx_dtype d, int depth);

static const AluExp *gen_leaf(Gen *g, jx_dtype d) {
  int k = rnd_int(g->nin + 1);
  if (k == g->nin) {
    AluValue v = random_value(d);
    if (g->approx) v = alu_normalize(d, (AluValue){.f = (rnd_unit() * 2 - 1) * 2});
    return alu_const(d, v);
  }
  const AluExp *x = alu_global(k, g->in_dt[k], g->idx[k]);
  return x->dtype == d ? x : alu_cast(x, d);
}

static const AluExp *gen_approx(Gen *g, jx_dtype d, int depth) {
  static const AluOp unary[] = {ALU_SIN, ALU_COS, ALU_TANH, ALU_ATAN, ALU_ERF, ALU_EXP, ALU_LOG1P,
                                ALU_SQRT, ALU_CBRT, ALU_NEG};
  static const AluOp binary[] = {ALU_ADD, ALU_SUB, ALU_MUL, ALU_MAX, ALU_MIN};
  if (depth <= 0 || rnd_int(5) == 0) return gen_leaf(g, d);
  if (rnd_int(2)) {
    AluOp op = unary[rnd_int(sizeof unary / sizeof *unary)];
    const AluExp *x = gen_approx(g, d, depth - 1);
    if (op == ALU_EXP) x = alu_unary(ALU_TANH, x);                           /* bounded */
    if (op == ALU_LOG1P || op == ALU_SQRT) x = alu_unary(ALU_ABS, x);        /* in domain */
    return alu_unary(op, x);
  }
  AluOp op = binary[rnd_int(sizeof binary / sizeof *binary)];
  const AluExp *a = gen_approx(g, d, depth - 1), *b = gen_approx(g, d, depth - 1);
  if (op == ALU_MUL) a = alu_unary(ALU_TANH, a); /* keep magnitudes moderate */
  return alu_binary(op, a, b);
}

static const AluExp *gen(Gen *g, jx_dtype d, int depth) {
  static const AluOp unary[] = {ALU_NEG, ALU_ABS, ALU_SIGN, ALU_NOT, ALU_FLOOR, ALU_CEIL,
                                ALU_ROUND, ALU_TRUNC, ALU_SQRT, ALU_RSQRT, ALU_RECIPROCAL};
  static const AluOp binary[] = {ALU_ADD, ALU_SUB, ALU_MUL, ALU_DIV, ALU_MOD, ALU_MIN, ALU_MAX,
                                 ALU_AND, ALU_OR, ALU_XOR, ALU_SHL, ALU_SHR, ALU_POW};
  if (g->approx) return gen_approx(g, d, depth);
  if (depth <= 0 || rnd_int(6) == 0) return gen_leaf(g, d);
  if (g->npool && rnd_int(5) == 0) { /* share a node: a DAG, not a tree */
    const AluExp *p = g->pool[rnd_int(g->npool)];
    if (p->dtype == d) return p;
  }
  const AluExp *e = NULL;
  for (int tries = 0; tries < 4 && !e; tries++) {
    int kind = rnd_int(10);
    if (kind < 3) {
      const AluExp *x = gen(g, d, depth - 1);
      AluOp op = unary[rnd_int(sizeof unary / sizeof *unary)];
      /* float32 rsqrt is 1/sqrtf, two roundings: within 1 ulp (prelude.h), compared
       * exactly here (drawn once the RNG moved: multi-output kernel #33 missed by 1 ulp) */
      if (op == ALU_RSQRT && d == JX_FLOAT32) continue;
      e = try_op(op, &x);
    } else if (kind < 7) {
      AluOp op = binary[rnd_int(sizeof binary / sizeof *binary)];
      if (op == ALU_POW && is_float(d)) continue; /* libm: compared exactly here */
      const AluExp *x[2] = {gen(g, d, depth - 1), gen(g, d, depth - 1)};
      e = try_op(op, x);
    } else if (kind < 8) {
      jx_dtype t = random_dtype(false);
      AluOp cmp = (AluOp[]){ALU_CMPLT, ALU_CMPNE, ALU_CMPEQ}[rnd_int(3)];
      const AluExp *c = alu_binary(cmp, gen(g, t, depth - 1), gen(g, t, depth - 1));
      e = alu_where(c, gen(g, d, depth - 1), gen(g, d, depth - 1));
    } else if (kind < 9) {
      e = alu_cast(gen(g, random_dtype(false), depth - 1), d);
    } else if (d != JX_BOOL) {
      jx_dtype same[NDTYPES];
      int n = 0;
      for (int i = 0; i < NDTYPES; i++)
        if (all_dtypes[i] != JX_BOOL && dtype_bits(all_dtypes[i]) == dtype_bits(d))
          same[n++] = all_dtypes[i];
      e = alu_bitcast(gen(g, same[rnd_int(n)], depth - 1), d);
    }
  }
  if (!e) e = gen_leaf(g, d);
  if (g->npool < 64) g->pool[g->npool++] = e;
  return e;
}

/* Index of an input broadcast over a virtual shape dims[0..nd): each dimension of the
 * input is the full one, broadcast (size 1) or flipped; the index is the flat position
 * (DIV/MOD chains over the flat loop index, as views make). Returns the input size. */
static int64_t broadcast_index(const AluExp *flat, int nd, const int64_t *dims,
                               const AluExp **index) {
  int64_t stride_out = 1, stride_in = 1;
  const AluExp *idx = alu_const_int(JX_INT64, 0);
  for (int i = nd - 1; i >= 0; i--) {
    const AluExp *q =
        stride_out == 1 ? flat : alu_binary(ALU_DIV, flat, alu_const_int(JX_INT64, stride_out));
    const AluExp *di = i == 0 ? q : alu_binary(ALU_MOD, q, alu_const_int(JX_INT64, dims[i]));
    stride_out *= dims[i];
    int mode = rnd_int(3);
    if (mode == 0) continue; /* broadcast */
    if (mode == 2) di = alu_binary(ALU_SUB, alu_const_int(JX_INT64, dims[i] - 1), di);
    idx = alu_binary(ALU_ADD, idx, alu_binary(ALU_MUL, di, alu_const_int(JX_INT64, stride_in)));
    stride_in *= dims[i];
  }
  *index = idx;
  return stride_in;
}

static void run_random_dag(int trial, bool approx) {
  Gen g = {.approx = approx, .nin = 1 + rnd_int(4)};
  int nd = 1 + rnd_int(4);
  int64_t dims[5], size = 1;
  for (int i = 0; i < nd; i++) size *= dims[i] = 1 + rnd_int(9);
  bool reduce = rnd_int(3) == 0;
  int64_t rsize = reduce ? rnd_int(rnd_int(2) ? 12 : 48) : 1;
  const AluExp *gidx = alu_special("gidx", size), *flat = gidx;
  if (reduce) {
    dims[nd++] = rsize;
    flat = alu_binary(ALU_ADD, alu_binary(ALU_MUL, gidx, alu_const_int(JX_INT64, rsize)),
                      alu_special("ridx", rsize));
  }
  void *in[4];
  for (int k = 0; k < g.nin; k++) {
    g.in_dt[k] = random_dtype(approx);
    int64_t n = broadcast_index(flat, nd, dims, &g.idx[k]);
    AluValue *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
      v[i] = approx ? alu_normalize(g.in_dt[k], (AluValue){.f = (rnd_unit() * 2 - 1) * 2})
                    : random_value(g.in_dt[k]);
    in[k] = buffer_of(g.in_dt[k], v, n);
    free(v);
  }
  jx_dtype d = random_dtype(approx);
  Kernel k = {.nargs = g.nin, .size = size, .exp = gen(&g, d, 2 + rnd_int(4))};
  for (int i = 0; i < g.nin; i++) k.arg_dtypes[i] = g.in_dt[i];
  k.dtype = d;
  if (reduce) {
    static const AluOp ops[] = {ALU_ADD, ALU_MUL, ALU_MIN, ALU_MAX, ALU_AND, ALU_OR};
    const AluExp *acc = alu_variable("acc", d);
    AluOp op = ALU_MAX;
    for (int tries = 0; tries < 8; tries++) {
      AluOp o = ops[rnd_int(approx ? 4 : 6)];
      if (approx && o == ALU_MUL) continue;
      if (try_op(o, (const AluExp *[]){acc, acc})) {
        op = o;
        break;
      }
    }
    k.has_reduction = true;
    k.reduction = (Reduction){.op = op, .dtype = d, .size = rsize, .identity = identity_of(op, d)};
    int epi = rnd_int(3);
    if (epi == 1 && !approx) {
      k.dtype = random_dtype(false);
      k.reduction.epilogue = alu_cast(acc, k.dtype);
    } else if (epi == 2) {
      Gen ge = g; /* an expression of acc (inputs are not indexed by gidx alone) */
      ge.nin = 0;
      ge.npool = 0;
      const AluExp *e = gen(&ge, d, 2);
      AluOp cmb = is_float(d) || d == JX_BOOL ? ALU_MAX : ALU_ADD;
      k.reduction.epilogue = alu_binary(cmb, acc, e);
    }
  }
  if (rnd_int(2)) { /* as the eager path does */
    k.exp = alu_simplify(k.exp);
    if (k.has_reduction && k.reduction.epilogue)
      k.reduction.epilogue = alu_simplify(k.reduction.epilogue);
  }
  char what[64];
  snprintf(what, sizeof what, "random %s DAG #%d", approx ? "float" : "exact", trial);
  if (!approx) {
    compare(what, &k, in, NULL);
  } else { /* libm differs by ulps, which later ops may magnify: relative tolerance */
    size_t bytes = (size_t)size * jx_dtype_itemsize(k.dtype);
    void *want = calloc(1, bytes + 8), *got = calloc(1, bytes + 8);
    if (run_on(&backend_interp, &k, in, want) && run_on(&backend_cpu, &k, in, got)) {
      double tol = k.dtype == JX_FLOAT64 ? 1e-12 : 1e-4;
      for (int64_t i = 0; i < size; i++) {
        double a = as_double(want, k.dtype, i), b = as_double(got, k.dtype, i);
        CHECK_MSG(a == b || (isnan(a) && isnan(b)) || fabs(a - b) <= tol * (1 + fabs(a)),
                  "%s element %lld: interp %.17g, cpu %.17g", what, (long long)i, a, b);
      }
    } else {
      CHECK_MSG(false, "%s: %s", what, jx_last_error());
      jx_clear_error();
    }
    free(want), free(got);
  }
  for (int i = 0; i < g.nin; i++) free(in[i]);
}

/* Elementwise kernels with several outputs (horizontal fusion): random expressions over
 * shared inputs, every output compared bit for bit with the interpreter's (which runs
 * each output as a kernel of its own), with and without thread chunks. */
static void test_multi_output(void) {
  for (int t = 0; t < 40; t++) {
    int64_t old = cpu_set_min_work(t % 2 ? 64 : 1 << 15);
    Gen g = {.nin = 1 + rnd_int(4)};
    int64_t size = 1 + rnd_int(3000);
    const AluExp *gidx = alu_special("gidx", size);
    void *in[4];
    for (int k = 0; k < g.nin; k++) {
      g.in_dt[k] = random_dtype(false);
      g.idx[k] = gidx;
      AluValue *v = malloc((size_t)size * sizeof *v);
      for (int64_t i = 0; i < size; i++) v[i] = random_value(g.in_dt[k]);
      in[k] = buffer_of(g.in_dt[k], v, size);
      free(v);
    }
    Kernel k = {.nargs = g.nin, .size = size, .dtype = random_dtype(false)};
    for (int i = 0; i < g.nin; i++) k.arg_dtypes[i] = g.in_dt[i];
    k.exp = gen(&g, k.dtype, 1 + rnd_int(4));
    k.nextra = 1 + rnd_int(KERNEL_MAX_OUTS - 1);
    for (int o = 0; o < k.nextra; o++) {
      k.extra_dtypes[o] = random_dtype(false);
      k.extra[o] = gen(&g, k.extra_dtypes[o], 1 + rnd_int(4));
    }
    CHECK_EQ_INT(kernel_check(&k), JX_OK);
    void *want[KERNEL_MAX_OUTS], *got[KERNEL_MAX_OUTS];
    for (int o = 0; o <= k.nextra; o++) {
      size_t bytes = (size_t)size * jx_dtype_itemsize(o ? k.extra_dtypes[o - 1] : k.dtype);
      want[o] = calloc(1, bytes), got[o] = calloc(1, bytes);
    }
    void *ei = NULL, *ec = NULL;
    bool ran = backend_interp.prepare(&backend_interp, &k, &ei) == JX_OK &&
               backend_interp.dispatch(&backend_interp, ei, &k, in, want) == JX_OK &&
               backend_cpu.prepare(&backend_cpu, &k, &ec) == JX_OK && backend_cpu.dispatch(&backend_cpu, ec, &k, in, got) == JX_OK;
    CHECK_MSG(ran, "multi-output kernel #%d: %s", t, jx_last_error());
    for (int o = 0; ran && o <= k.nextra; o++) {
      jx_dtype d = o ? k.extra_dtypes[o - 1] : k.dtype;
      int64_t bad = 0;
      for (int64_t i = 0; i < size; i++) {
        uint64_t a = elem_bits(want[o], d, i), b = elem_bits(got[o], d, i);
        if (a != b && !(is_float(d) && bits_nan(d, a) && bits_nan(d, b))) bad++;
      }
      CHECK_MSG(bad == 0, "multi-output kernel #%d, output %d: %lld mismatches", t, o, (long long)bad);
    }
    for (int o = 0; o <= k.nextra; o++) free(want[o]), free(got[o]);
    for (int i = 0; i < g.nin; i++) free(in[i]);
    cpu_set_min_work(old);
  }
}

/* Two-phase reductions (softmax's max then sum of exp(x - max), fused by jit): random
 * first and second phases over rows or columns of shared inputs, an epilogue and an
 * extra output of pre, compared with the interpreter bit for bit (float phases of
 * continuous ops: within a tolerance, as the random float DAGs). */
static void test_two_phase_reductions(void) {
  static const AluOp ops[] = {ALU_ADD, ALU_MAX, ALU_MIN, ALU_MUL};
  for (int t = 0; t < 48; t++) {
    int64_t old = cpu_set_min_work(t % 2 ? 64 : 1 << 15);
    bool approx = t % 3 == 0;
    Gen g = {.approx = approx, .nin = 1 + rnd_int(3)};
    int64_t size = 1 + rnd_int(70), R = 1 + rnd_int(t % 4 == 1 ? 8 : 70);
    bool tr = rnd_int(2);
    const AluExp *gi = alu_special("gidx", size), *ri = alu_special("ridx", R);
    const AluExp *rows = alu_binary(ALU_ADD, alu_binary(ALU_MUL, gi, alu_const_int(JX_INT64, R)), ri);
    const AluExp *cols = alu_binary(ALU_ADD, alu_binary(ALU_MUL, ri, alu_const_int(JX_INT64, size)), gi);
    void *in[4];
    for (int k = 0; k < g.nin; k++) {
      g.in_dt[k] = approx ? JX_FLOAT32 : random_dtype(false);
      g.idx[k] = tr ? cols : rows;
      AluValue *v = malloc((size_t)(size * R) * sizeof *v);
      for (int64_t i = 0; i < size * R; i++)
        v[i] = approx ? alu_normalize(JX_FLOAT32, (AluValue){.f = (rnd_unit() * 2 - 1) * 2})
                      : random_value(g.in_dt[k]);
      in[k] = buffer_of(g.in_dt[k], v, size * R);
      free(v);
    }
    jx_dtype d = approx ? JX_FLOAT32 : random_dtype(false);
    AluOp op1 = ops[rnd_int(approx ? 3 : 4)], op2 = ops[rnd_int(approx ? 3 : 4)];
    const AluExp *a = alu_variable("acc", d);
    if (!try_op(op1, (const AluExp *[]){a, a})) op1 = ALU_MAX;
    if (!try_op(op2, (const AluExp *[]){a, a})) op2 = ALU_MAX;
    Kernel k = {.nargs = g.nin, .size = size, .dtype = d, .has_reduction = true, .has_pre = true};
    for (int i = 0; i < g.nin; i++) k.arg_dtypes[i] = g.in_dt[i];
    k.pre = (Reduction){.op = op1, .dtype = d, .size = R, .identity = identity_of(op1, d)};
    k.pre_exp = gen(&g, d, 1 + rnd_int(3));
    const AluExp *pre = alu_variable("pre", d), *x = gen(&g, d, 1 + rnd_int(3));
    k.exp = approx ? alu_unary(ALU_EXP, alu_binary(ALU_SUB, x, pre))
                   : alu_binary(rnd_int(2) ? ALU_MAX : ALU_MIN, x, pre);
    k.reduction = (Reduction){.op = op2, .dtype = d, .size = R, .identity = identity_of(op2, d)};
    if (rnd_int(2)) k.reduction.epilogue = alu_binary(ALU_MAX, alu_variable("acc", d), pre);
    k.nextra = 1;
    k.extra[0] = alu_cast(pre, JX_FLOAT64);
    k.extra_dtypes[0] = JX_FLOAT64;
    CHECK_MSG(kernel_check(&k) == JX_OK, "two-phase #%d: %s", t, jx_last_error());
    void *want[2], *got[2];
    for (int o = 0; o < 2; o++) {
      size_t bytes = (size_t)size * jx_dtype_itemsize(o ? JX_FLOAT64 : d);
      want[o] = calloc(1, bytes), got[o] = calloc(1, bytes);
    }
    void *ei = NULL, *ec = NULL;
    bool ran = backend_interp.prepare(&backend_interp, &k, &ei) == JX_OK &&
               backend_interp.dispatch(&backend_interp, ei, &k, in, want) == JX_OK &&
               backend_cpu.prepare(&backend_cpu, &k, &ec) == JX_OK && backend_cpu.dispatch(&backend_cpu, ec, &k, in, got) == JX_OK;
    CHECK_MSG(ran, "two-phase #%d: %s", t, jx_last_error());
    for (int o = 0; ran && o < 2; o++) {
      jx_dtype od = o ? JX_FLOAT64 : d;
      int64_t bad = 0;
      for (int64_t i = 0; i < size; i++) {
        uint64_t u = elem_bits(want[o], od, i), v = elem_bits(got[o], od, i);
        if (u == v || (is_float(od) && bits_nan(od, u) && bits_nan(od, v))) continue;
        double p = as_double(want[o], od, i), q = as_double(got[o], od, i);
        if (approx && fabs(p - q) <= 1e-4 * (1 + fabs(p))) continue;
        bad++;
      }
      CHECK_MSG(bad == 0, "two-phase #%d (%s then %s, %s, %lldx%lld%s), output %d: %lld mismatches",
                t, alu_op_name(op1), alu_op_name(op2), dtype_short_name(d), (long long)size,
                (long long)R, tr ? " columns" : "", o, (long long)bad);
    }
    for (int o = 0; o < 2; o++) free(want[o]), free(got[o]);
    for (int i = 0; i < g.nin; i++) free(in[i]);
    cpu_set_min_work(old);
  }
}

/* Odd trials split kernels over the pool threads in small chunks, so that loop nests
 * (render.c) start and end inside their blocks. */
static void test_random_dags(void) {
  for (int t = 0; t < 160; t++) {
    int64_t old = cpu_set_min_work(t % 2 ? 64 : 1 << 15);
    run_random_dag(t, false);
    cpu_set_min_work(old);
  }
}
static void test_random_float_dags(void) {
  for (int t = 0; t < 40; t++) {
    int64_t old = cpu_set_min_work(t % 2 ? 64 : 1 << 15);
    run_random_dag(t, true);
    cpu_set_min_work(old);
  }
}

/* ------------------------------------------------------------ the machinery */

/* out = in0 * c + 1 (f32), for a c no other test uses: a kernel not compiled yet. */
static Kernel fresh_kernel(int64_t n, float c) {
  const AluExp *g = alu_special("gidx", n);
  Kernel k = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = n, .dtype = JX_FLOAT32};
  k.exp = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_global(0, JX_FLOAT32, g),
                                         alu_const_float(JX_FLOAT32, c)),
                     alu_const_float(JX_FLOAT32, 1));
  return k;
}

static float *iota(int64_t n) {
  float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
  for (int64_t i = 0; i < n; i++) x[i] = (float)i * 0.25f - 3;
  return x;
}

/* cpu buffers: 64-byte aligned, every byte of nbytes rounded up to 64 writable (ASan
 * checks the ends), freed through the device whatever the size (a wrong block start
 * below the buffer is an invalid free) */
static void test_buffers(void) {
  static const size_t sizes[] = {0, 1, 15, 16, 63, 64, 65, 200, 960, 961, 1024, 4097, 70000, 1 << 20};
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      Buffer *b = buffer_new(&backend_cpu, sizes[i]);
      CHECK_MSG(b && ((uintptr_t)b->mem & 63) == 0, "buffer of %zu bytes at %p", sizes[i], b ? b->mem : NULL);
      if (!b) continue;
      size_t n = sizes[i] ? (sizes[i] + 63) / 64 * 64 : 64;
      memset(b->mem, 0xa5, n);
      buffer_free(b);
    }
  backend_cpu.free(&backend_cpu, NULL);
}

static void test_memory_cache(void) {
  Kernel k = fresh_kernel(100, 1.0625f);
  CpuStats s0 = cpu_stats();
  void *e1 = NULL, *e2 = NULL;
  CHECK(backend_cpu.prepare(&backend_cpu, &k, &e1) == JX_OK);
  CpuStats s1 = cpu_stats(); /* compiled, or found on disk (JAXC_CACHE_DIR set by the user) */
  CHECK_EQ_INT(s1.compiles + s1.disk_hits, s0.compiles + s0.disk_hits + 1);
  Kernel k2 = fresh_kernel(100, 1.0625f); /* equal structure, built again */
  CHECK(backend_cpu.prepare(&backend_cpu, &k2, &e2) == JX_OK);
  CpuStats s2 = cpu_stats();
  CHECK(e1 == e2);
  CHECK_EQ_INT(s2.compiles, s1.compiles);
  CHECK_EQ_INT(s2.memory_hits, s1.memory_hits + 1);
  float *x = iota(100);
  void *in[1] = {x};
  compare("memory cache", &k, in, NULL);
  free(x);
}

/* The cache files of a compiled executable: <dir>/<name>-<key>.c and .so. */
static bool cache_files(const void *exe, char *c_path, char *so_path, size_t n) {
  const char *src = cpu_source_path(exe);
  if (!src || strncmp(src, cache_dir, strlen(cache_dir)) != 0) return false;
  snprintf(c_path, n, "%s", src);
  snprintf(so_path, n + 8, "%.*s.so", (int)strlen(src) - 2, src);
  return access(c_path, R_OK) == 0;
}

static void test_disk_cache(void) {
  Kernel k = fresh_kernel(77, 1.125f);
  void *exe = NULL;
  CHECK(backend_cpu.prepare(&backend_cpu, &k, &exe) == JX_OK);
  char c_path[1024], so_path[1100];
  CHECK(cache_files(exe, c_path, so_path, sizeof c_path));
  CHECK(access(so_path, R_OK) == 0);
  /* A new process would start with empty memory caches: reuse from disk. */
  cpu_reset();
  CpuStats s0 = cpu_stats();
  CHECK(backend_cpu.prepare(&backend_cpu, &k, &exe) == JX_OK);
  CpuStats s1 = cpu_stats();
  CHECK_EQ_INT(s1.compiles, s0.compiles);
  CHECK_EQ_INT(s1.disk_hits, s0.disk_hits + 1);
  /* A stored source that differs (even by a byte) is not trusted: compile again. */
  FILE *f = fopen(c_path, "ab");
  if (f) fputs(" ", f), fclose(f);
  cpu_reset();
  CHECK(backend_cpu.prepare(&backend_cpu, &k, &exe) == JX_OK);
  CpuStats s2 = cpu_stats();
  CHECK_EQ_INT(s2.compiles, s1.compiles + 1);
  CHECK_EQ_INT(s2.disk_hits, s1.disk_hits);
  float *x = iota(77);
  void *in[1] = {x};
  compare("disk cache", &k, in, NULL);
  free(x);
}

/* Whether the cached source at path records `flags` in its header. */
static bool source_has_flags(const char *path, const char *flags) {
  char head[1024] = {0};
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  size_t n = fread(head, 1, sizeof head - 1, f);
  fclose(f);
  head[n] = 0;
  char want[300];
  snprintf(want, sizeof want, " * flags: %s\n", flags);
  return strstr(head, want) != NULL;
}

/* A jit program's kernels compile in translation units by optimization class: small
 * kernels (work < 2^15) with light flags, the others with -O3, units compiled on several
 * threads; each unit is reused from the disk cache afterwards, and every kernel computes
 * what the interpreter does. */
static void test_batch_units(void) {
  enum { NSMALL = 12, NBIG = 3, N = NSMALL + NBIG };
  Kernel ks[N];
  const Kernel *kp[N];
  for (int i = 0; i < N; i++) {
    ks[i] = fresh_kernel(i < NSMALL ? 100 + i : (1 << 16) + i, 1.375f + 0.0625f * (float)i);
    kp[i] = &ks[i];
  }
  CpuStats s0 = cpu_stats();
  CHECK(backend_cpu.prepare_batch(&backend_cpu, kp, N) == JX_OK);
  CpuStats s1 = cpu_stats();
  int64_t units = s1.compiles + s1.disk_hits - s0.compiles - s0.disk_hits;
  CHECK(units >= 2 && units <= N); /* one class per unit at least */
  char c_path[1024], so_path[1100];
  float *x = iota((1 << 16) + N);
  void *in[1] = {x};
  for (int i = 0; i < N; i++) {
    void *exe = NULL;
    CHECK(backend_cpu.prepare(&backend_cpu, &ks[i], &exe) == JX_OK); /* a memory hit now */
    CHECK(cache_files(exe, c_path, so_path, sizeof c_path));
    CHECK_MSG(source_has_flags(c_path, compile_flags(i < NSMALL ? COMPILE_OPT_LIGHT : COMPILE_OPT_FULL)),
              "kernel %d (size %lld) in %s with the wrong flags", i, (long long)ks[i].size, c_path);
    compare("batch unit", &ks[i], in, NULL);
  }
  CpuStats s2 = cpu_stats();
  /* A new process: every unit from the disk cache, nothing compiled. */
  cpu_reset();
  CHECK(backend_cpu.prepare_batch(&backend_cpu, kp, N) == JX_OK);
  CpuStats s3 = cpu_stats();
  CHECK_EQ_INT(s3.compiles, s2.compiles);
  CHECK_EQ_INT(s3.disk_hits, s2.disk_hits + units);
  for (int i = 0; i < N; i++) compare("batch unit from disk", &ks[i], in, NULL);
  free(x);
}

/* Reductions of moderate work (2^15..2^18 element-iterations): a small matmul's, whose
 * element gathers through index arithmetic (out[g] = sum_r a[(g/10)*128 + r] * b[g%10 +
 * r*10], 13 operations: the CNN step's), compiles light; a plain row sum keeps -O3. */
static void test_reduction_classes(void) {
  const AluExp *g = alu_special("gidx", 1280), *r = alu_special("ridx", 128);
  const AluExp *ia = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_binary(ALU_DIV, g, alu_const_int(JX_INT64, 10)),
                                                    alu_const_int(JX_INT64, 128)), r);
  const AluExp *ib = alu_binary(ALU_ADD, alu_binary(ALU_MOD, g, alu_const_int(JX_INT64, 10)),
                                alu_binary(ALU_MUL, r, alu_const_int(JX_INT64, 10)));
  Kernel mm = {.nargs = 2, .arg_dtypes = {JX_FLOAT32, JX_FLOAT32}, .size = 1280, .dtype = JX_FLOAT32,
               .has_reduction = true};
  mm.exp = alu_binary(ALU_MUL, alu_global(0, JX_FLOAT32, ia), alu_global(1, JX_FLOAT32, ib));
  mm.reduction = (Reduction){.op = ALU_ADD, .dtype = JX_FLOAT32, .size = 128, .identity = {.f = 0}};
  const AluExp *g2 = alu_special("gidx", 512), *r2 = alu_special("ridx", 128);
  Kernel sum = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = 512, .dtype = JX_FLOAT32,
                .has_reduction = true};
  sum.exp = alu_global(0, JX_FLOAT32, alu_binary(ALU_ADD, alu_binary(ALU_MUL, g2, alu_const_int(JX_INT64, 128)), r2));
  sum.reduction = (Reduction){.op = ALU_ADD, .dtype = JX_FLOAT32, .size = 128, .identity = {.f = 0}};
  const Kernel *ks[2] = {&mm, &sum};
  CHECK(backend_cpu.prepare_batch(&backend_cpu, ks, 2) == JX_OK);
  CompileOpt want[2] = {COMPILE_OPT_LIGHT, COMPILE_OPT_FULL};
  float *a = malloc(1280 * 128 * sizeof *a), *b = malloc(1280 * sizeof *b);
  for (int i = 0; i < 1280 * 128; i++) a[i] = (float)(i * 7 % 17) * 0.125f - 1; /* no rnd(): the random tests after keep their inputs */
  for (int i = 0; i < 1280; i++) b[i] = (float)(i * 5 % 9) * 0.25f - 1;
  for (int i = 0; i < 2; i++) {
    void *exe = NULL;
    char c_path[1024], so_path[1100];
    CHECK(backend_cpu.prepare(&backend_cpu, ks[i], &exe) == JX_OK);
    CHECK(cache_files(exe, c_path, so_path, sizeof c_path));
    CHECK_MSG(source_has_flags(c_path, compile_flags(want[i])), "reduction %d in %s with the wrong flags", i, c_path);
    compare(i ? "row sum" : "small matmul", ks[i], (void *[]){a, b}, NULL);
  }
  free(a), free(b);
}

/* Kernels whose bodies are equal -- out = in0 * c + 1 at three sizes: the loop bounds are
 * the thread pool's range -- share one compiled function: a batch compiles the body once,
 * at the stronger optimization either kernel asks for (the big one's -O3), and a later
 * kernel of that body finds it in memory. */
static void test_shared_bodies(void) {
  Kernel ks[3] = {fresh_kernel(1 << 16, 3.1875f), fresh_kernel(300, 3.1875f), fresh_kernel(7, 3.1875f)};
  const Kernel *kp[2] = {&ks[1], &ks[0]};
  CpuStats s0 = cpu_stats();
  CHECK(backend_cpu.prepare_batch(&backend_cpu, kp, 2) == JX_OK);
  CpuStats s1 = cpu_stats();
  CHECK_EQ_INT(s1.compiles + s1.disk_hits, s0.compiles + s0.disk_hits + 1); /* one unit */
  void *exe[3] = {NULL};
  char c_path[3][1024], so_path[1100];
  for (int i = 0; i < 3; i++) {
    CHECK(backend_cpu.prepare(&backend_cpu, &ks[i], &exe[i]) == JX_OK);
    CHECK(cache_files(exe[i], c_path[i], so_path, sizeof c_path[i]));
  }
  CpuStats s2 = cpu_stats();
  CHECK_EQ_INT(s2.compiles + s2.disk_hits, s1.compiles + s1.disk_hits); /* ks[2] too */
  CHECK_EQ_INT(s2.memory_hits, s1.memory_hits + 3);
  CHECK(strcmp(c_path[0], c_path[1]) == 0 && strcmp(c_path[0], c_path[2]) == 0);
  CHECK(source_has_flags(c_path[0], compile_flags(COMPILE_OPT_FULL)));
  float *x = iota(1 << 16);
  void *in[1] = {x};
  for (int i = 0; i < 3; i++) compare("shared body", &ks[i], in, NULL);
  free(x);
}

/* A kernel that repeats element 0 of its input (the copy of a broadcast view) runs a
 * built-in fill, compiling nothing, for elements of every width. */
static void test_builtin_fill(void) {
  static const jx_dtype ds[] = {JX_BOOL,    JX_INT16,     JX_FLOAT16,   JX_FLOAT32,
                                JX_FLOAT64, JX_COMPLEX64, JX_COMPLEX128};
  unsigned char src[16];
  for (int b = 0; b < 16; b++) src[b] = (unsigned char)(0x3b + 7 * b);
  src[0] = 1; /* a valid bool */
  for (size_t t = 0; t < sizeof ds / sizeof *ds; t++) {
    jx_dtype d = ds[t];
    size_t w = jx_dtype_itemsize(d);
    int64_t n = 1000 + (int64_t)t;
    Kernel k = {.nargs = 1, .arg_dtypes = {d}, .size = n, .dtype = d};
    k.exp = alu_global(0, d, alu_const_int(JX_INT64, 0));
    CHECK(kernel_check(&k) == JX_OK);
    unsigned char *got = malloc((size_t)n * w);
    CpuStats s0 = cpu_stats();
    CHECK(run_on(&backend_cpu, &k, (void *[]){src}, got));
    CpuStats s1 = cpu_stats();
    CHECK_EQ_INT(s1.compiles + s1.disk_hits + s1.fallbacks, s0.compiles + s0.disk_hits + s0.fallbacks);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += memcmp(got + (size_t)i * w, src, w) != 0;
    CHECK_MSG(bad == 0, "fill of %s: %lld elements differ", dtype_short_name(d), (long long)bad);
    free(got);
  }
}

static void with_env(const char *name, const char *value) {
  if (value) setenv(name, value, 1);
  else unsetenv(name);
  cpu_reset();
}

static void test_compile_error(void) {
  const char *old = getenv("CC");
  char *saved = old ? strdup(old) : NULL;
  with_env("CC", "/bin/false");
  CHECK(cpu_has_compiler());
  Kernel k = fresh_kernel(5, 1.25f);
  void *exe = NULL;
  CHECK(backend_cpu.prepare(&backend_cpu, &k, &exe) == JX_ERR_COMPILE);
  const char *msg = jx_last_error();
  CHECK_MSG(strstr(msg, cache_dir) && strstr(msg, ".c"), "message lacks the source path: %s", msg);
  CHECK_MSG(strstr(msg, "failed with exit status 1 (") != NULL, "message lacks the exit status: %s", msg);
  const char *at = strstr(msg, "kept at ");
  if (at) { /* the named file exists and holds the kernel */
    char path[1024];
    snprintf(path, sizeof path, "%s", at + 8);
    path[strcspn(path, ";")] = 0;
    CHECK_MSG(access(path, R_OK) == 0, "no source at %s", path);
  }
  CHECK(jx_last_status() == JX_ERR_COMPILE);
  jx_clear_error();
  with_env("CC", saved);
  free(saved);
}

static void test_no_compiler(void) {
  const char *old = getenv("CC");
  char *saved = old ? strdup(old) : NULL;
  with_env("CC", "/nonexistent/jaxc-test-cc");
  CHECK(!cpu_has_compiler());
  CpuStats s0 = cpu_stats();
  Kernel k = fresh_kernel(50, 1.375f);
  float *x = iota(50);
  void *in[1] = {x};
  CHECK_EQ_INT(compare("no compiler", &k, in, NULL), 0);
  CHECK_EQ_INT(cpu_stats().fallbacks, s0.fallbacks + 1);
  CHECK_EQ_INT(cpu_stats().compiles, s0.compiles);
  free(x);
  with_env("CC", saved);
  free(saved);
  CHECK(cpu_has_compiler());
}

static void test_thread_pool(void) {
  with_env("JAXC_NUM_THREADS", "5");
  CHECK_EQ_INT(pool_threads(), 5);
  int64_t old = cpu_set_min_work(64);
  static const int64_t sizes[] = {1, 63, 64, 65, 127, 128, 129, 320, 321, 1000, 4097, 100003};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    int64_t n = sizes[s];
    Kernel k = fresh_kernel(n, 0.75f);
    float *x = iota(n * 3);
    void *in[1] = {x};
    char what[48];
    snprintf(what, sizeof what, "threads, size %lld", (long long)n);
    compare(what, &k, in, NULL);
    /* a reduction over rows of 3 */
    const AluExp *g = alu_special("gidx", n), *r = alu_special("ridx", 3);
    Kernel kr = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = n, .dtype = JX_FLOAT32,
                 .has_reduction = true};
    kr.exp = alu_global(0, JX_FLOAT32,
                        alu_binary(ALU_ADD, alu_binary(ALU_MUL, g, alu_const_int(JX_INT64, 3)), r));
    kr.reduction = (Reduction){.op = ALU_ADD, .dtype = JX_FLOAT32, .size = 3, .identity = {.f = 0}};
    snprintf(what, sizeof what, "threads, reduction size %lld", (long long)n);
    compare(what, &kr, in, NULL);
    /* column sums of a (3, n) array: contiguous lanes, blocks of 256 shifted back */
    kr.exp = alu_global(0, JX_FLOAT32,
                        alu_binary(ALU_ADD, alu_binary(ALU_MUL, r, alu_const_int(JX_INT64, n)), g));
    snprintf(what, sizeof what, "threads, column reduction size %lld", (long long)n);
    compare(what, &kr, in, NULL);
    free(x);
  }
  /* rows of >= 1024 with enough rows for CHUNKS_PER_THREAD chunks a thread (cpu.c: chunk
   * boundaries at multiples of 64 rows), and a row count that is no multiple of 64 */
  for (int64_t n = 2560; n <= 2600; n += 40) {
    const int64_t R = 1024;
    float *x = iota(n * R);
    void *in[1] = {x};
    const AluExp *g = alu_special("gidx", n), *r = alu_special("ridx", R);
    Kernel kr = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = n, .dtype = JX_FLOAT32,
                 .has_reduction = true};
    kr.exp = alu_global(0, JX_FLOAT32,
                        alu_binary(ALU_ADD, alu_binary(ALU_MUL, g, alu_const_int(JX_INT64, R)), r));
    kr.reduction = (Reduction){.op = ALU_ADD, .dtype = JX_FLOAT32, .size = R, .identity = {.f = 0}};
    char what[64];
    snprintf(what, sizeof what, "threads, %lld rows of %lld", (long long)n, (long long)R);
    compare(what, &kr, in, NULL);
    free(x);
  }
  cpu_set_min_work(old);
  with_env("JAXC_NUM_THREADS", NULL);
}

/* Threads dispatching at once (one gets the pool, the others run inline), sharing
 * kernels and compiling new ones. */
typedef struct Worker {
  int id;
  int64_t bad;
} Worker;

static void *worker_main(void *arg) {
  Worker *w = arg;
  for (int it = 0; it < 20; it++) {
    int64_t n = 3000 + 1000 * (it % 3);
    Kernel k = fresh_kernel(n, it % 2 ? 0.5f : 2.5f + (float)w->id); /* shared and private */
    float *x = iota(n), *want = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
    void *in[1] = {x};
    if (!run_on(&backend_interp, &k, in, want) || !run_on(&backend_cpu, &k, in, got)) w->bad++;
    else w->bad += memcmp(want, got, (size_t)n * 4) != 0;
    free(x), free(want), free(got);
  }
  return NULL;
}

static void test_concurrent_dispatch(void) {
  with_env("JAXC_NUM_THREADS", "3");
  int64_t old = cpu_set_min_work(256);
  pthread_t t[4];
  Worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (Worker){.id = i};
    pthread_create(&t[i], NULL, worker_main, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    CHECK_EQ_INT(w[i].bad, 0);
  }
  cpu_set_min_work(old);
  with_env("JAXC_NUM_THREADS", NULL);
}

/* An op the target has no format for (float math on an int: the checker rejects it)
 * is an error, not a crash or wrong code. */
static void test_render_errors(void) {
  const AluExp *g = alu_special("gidx", 8);
  Kernel k = {.nargs = 1, .arg_dtypes = {JX_INT32}, .size = 8, .dtype = JX_INT32};
  k.exp = alu_unary(ALU_SIN, alu_global(0, JX_INT32, g));
  void *exe = NULL;
  CHECK(backend_cpu.prepare(&backend_cpu, &k, &exe) == JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "SIN");
}

/* objdump of a compiled kernel shows packed SIMD float arithmetic: (v)addps, (v)mulps,
 * (v)maxps, ... on xmm/ymm/zmm registers. The instructions seen are appended to `seen`. */
static bool has_packed_simd(const char *so, const char *fn, char *seen, size_t cap) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "objdump -d --no-show-raw-insn '%s' 2>/dev/null", so);
  FILE *p = popen(cmd, "r");
  if (!p) return false;
  char line[512];
  bool in_fn = false, packed = false;
  while (fgets(line, sizeof line, p)) {
    if (strchr(line, '<') && strstr(line, ">:")) in_fn = strstr(line, fn) != NULL;
    char *tab = strchr(line, '\t');
    if (!in_fn || !tab) continue;
    char op[32] = "";
    sscanf(tab + 1, "%31s", op);
    const char *m = op[0] == 'v' ? op + 1 : op;
    static const char *const arith[] = {"addps", "mulps", "maxps", "minps", "subps", "sqrtps"};
    for (size_t i = 0; i < sizeof arith / sizeof *arith; i++)
      if (strcmp(m, arith[i]) == 0 && strstr(tab, "mm")) {
        char reg[8] = "";
        const char *r = strstr(tab, "mm");
        snprintf(reg, sizeof reg, "%.3s", r - 1);
        if (!strstr(seen, op) && strlen(seen) + strlen(op) + 8 < cap)
          strcat(strcat(strcat(strcat(seen, " "), op), "/"), reg);
        packed = true;
      }
  }
  pclose(p);
  return packed;
}

static void test_simd(void) {
#if defined(__x86_64__)
  if (system("objdump --version >/dev/null 2>&1") != 0) {
    printf("note: objdump not found; SIMD check skipped\n");
    return;
  }
  Kernel k = fresh_kernel(65536, 1.5f); /* above RENDER_COLD_WORK: compiled at -O3 */
  const AluExp *g = alu_special("gidx", 64), *r = alu_special("ridx", 512);
  Kernel kr = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = 64, .dtype = JX_FLOAT32,
               .has_reduction = true}; /* column sums of a (512, 64) array */
  kr.exp = alu_global(0, JX_FLOAT32,
                      alu_binary(ALU_ADD, alu_binary(ALU_MUL, r, alu_const_int(JX_INT64, 64)), g));
  kr.reduction = (Reduction){.op = ALU_ADD, .dtype = JX_FLOAT32, .size = 512, .identity = {.f = 0}};
  Kernel *ks[2] = {&k, &kr};
  for (int i = 0; i < 2; i++) {
    void *exe;
    CHECK(backend_cpu.prepare(&backend_cpu, ks[i], &exe) == JX_OK);
    char c_path[1024], so_path[1100], name[RENDER_NAME_MAX];
    free(render_kernel(&render_c, ks[i], name));
    CHECK(cache_files(exe, c_path, so_path, sizeof c_path));
    char seen[256] = "";
    CHECK_MSG(has_packed_simd(so_path, name, seen, sizeof seen),
              "%s: no packed SIMD float ops in %s", name, so_path);
    printf("simd: %s:%s\n", name, seen);
  }
#endif
}

/* ------------------------------------------------------------- public API */

static void test_public_api(void) {
  float xs[6] = {1, -2, 3.5f, 0, -0.0f, 7}, ys[6] = {0.5f, 2, -1, 4, 3, -8};
  int64_t shape[2] = {2, 3};
  float got[2][11]; /* z (2,3), sum over axis 1 (2,), max over axis 0 (3,) */
  const char *devices[2] = {"interp", "cpu"};
  for (int d = 0; d < 2; d++) {
    CHECK(jx_default_device(devices[d]) == JX_OK);
    jx_scope_begin();
    jx_array *x = jx_array_from(xs, JX_FLOAT32, 2, shape);
    jx_array *y = jx_array_from(ys, JX_FLOAT32, 2, shape);
    CHECK_STR(jx_device_of(x), devices[d]);
    jx_array *z = jx_add(jx_mul(x, y), jx_exp(x));
    jx_array *s = jx_sum(z, 1, (int[]){1}, false);
    jx_array *m = jx_max(z, 1, (int[]){0}, false);
    CHECK_STR(jx_device_of(s), devices[d]);
    CHECK(jx_read(z, got[d], 6 * sizeof(float)) == JX_OK);
    CHECK(jx_read(s, got[d] + 6, 2 * sizeof(float)) == JX_OK);
    CHECK(jx_read(m, got[d] + 8, 3 * sizeof(float)) == JX_OK);
    jx_scope_end(0, NULL);
  }
  for (int i = 0; i < 11; i++) CHECK_MSG(memcmp(&got[0][i], &got[1][i], 4) == 0 ||
                                         fabsf(got[0][i] - got[1][i]) <= 2e-7f * fabsf(got[0][i]),
                                         "element %d: interp %g, cpu %g", i, got[0][i], got[1][i]);
  CHECK(jx_default_device("interp") == JX_OK);
}

static void test_names(void) {
  Kernel k = fresh_kernel(1000, 2.0f);
  char n1[RENDER_NAME_MAX], n2[RENDER_NAME_MAX];
  char *t1 = render_kernel(&render_c, &k, n1), *t2 = render_kernel(&render_c, &k, n2);
  CHECK(t1 && t2 && strcmp(t1, t2) == 0);
  CHECK_STR(n1, n2);
  CHECK_MSG(strncmp(n1, "k_add_mul_1000_", 15) == 0, "name %s", n1);
  CHECK(t1 && strstr(t1, "restrict") && strstr(t1, n1));
  free(t1), free(t2);
  CHECK(render_prelude_len() > 1000 && strstr(render_prelude(), "jx_add_i32"));
}

/* ------------------------------------------------------------------- main */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0; /* keep going: remove what can be removed */
}

int main(void) {
  if (!cpu_has_compiler()) {
    printf("note: no C compiler found; cpu backend tests skipped\n");
    return 0;
  }
  const char *env = getenv("JAXC_CACHE_DIR");
  if (env && *env) {
    snprintf(cache_dir, sizeof cache_dir, "%s", env);
  } else { /* a private cache, removed at the end */
    const char *tmp = getenv("TMPDIR");
    snprintf(cache_dir, sizeof cache_dir, "%s/jaxc-test-cpu-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(cache_dir)) {
      printf("cannot create a cache directory\n");
      return 1;
    }
    own_cache_dir = true;
    setenv("JAXC_CACHE_DIR", cache_dir, 1);
  }
  cpu_reset();
  TEST_RUN(test_names);
  TEST_RUN(test_buffers);
  TEST_RUN(test_memory_cache);
  TEST_RUN(test_disk_cache);
  TEST_RUN(test_batch_units);
  TEST_RUN(test_shared_bodies);
  TEST_RUN(test_reduction_classes);
  TEST_RUN(test_builtin_fill);
  TEST_RUN(test_compile_error);
  TEST_RUN(test_no_compiler);
  TEST_RUN(test_binary_ops);
  TEST_RUN(test_interp_binary_fast);
  TEST_RUN(test_interp_unary_fast);
  TEST_RUN(test_compare_ops);
  TEST_RUN(test_unary_ops);
  TEST_RUN(test_subnormals);
  TEST_RUN(test_casts);
  TEST_RUN(test_bitcasts);
  TEST_RUN(test_where_threefry);
  TEST_RUN(test_reductions);
  TEST_RUN(test_row_minmax_keys);
  TEST_RUN(test_random_dags);
  TEST_RUN(test_random_float_dags);
  TEST_RUN(test_multi_output);
  TEST_RUN(test_two_phase_reductions);
  TEST_RUN(test_thread_pool);
  TEST_RUN(test_concurrent_dispatch);
  TEST_RUN(test_render_errors);
  TEST_RUN(test_simd);
  TEST_RUN(test_public_api);
  CpuStats s = cpu_stats();
  printf("cpu: %lld compiles, %lld disk hits, %lld memory hits, %lld launches\n",
         (long long)s.compiles, (long long)s.disk_hits, (long long)s.memory_hits,
         (long long)s.launches);
  if (own_cache_dir) nftw(cache_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return test_finish();
}
