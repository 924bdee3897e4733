/* test_alu.c -- the kernel IR: hash-consing, constructor folding, the scalar semantics
 * of every op (table-driven, with the edge cases), threefry known answers from JAX,
 * the simplifier (randomized against a reference evaluator, plus the view chains it
 * must collapse), the printer, the checker and thread-safe interning. */
#include <float.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "ir/alu.h"
#include "test.h"

static const AluExp *ci(int64_t v) { return alu_const_int(JX_INT64, v); }
static const AluExp *add(const AluExp *a, const AluExp *b) { return alu_binary(ALU_ADD, a, b); }
static const AluExp *mul(const AluExp *a, const AluExp *b) { return alu_binary(ALU_MUL, a, b); }
static const AluExp *idiv(const AluExp *a, const AluExp *b) { return alu_binary(ALU_DIV, a, b); }
static const AluExp *imod(const AluExp *a, const AluExp *b) { return alu_binary(ALU_MOD, a, b); }

/* ------------------------------------------------------------ hash-consing */

static void test_hash_consing(void) {
  const AluExp *x = alu_special("gidx", 24), *x2 = alu_special("gidx", 24);
  CHECK(x && x == x2);
  CHECK(alu_special("gidx", 25) != x);
  CHECK(alu_special("ridx", 24) != x);
  char name[8] = "gidx"; /* names are compared by contents, not address */
  CHECK(alu_special(name, 24) == x);
  CHECK_EQ_INT(x->lo, 0);
  CHECK_EQ_INT(x->hi, 23);
  const AluExp *e1 = add(mul(x, ci(4)), ci(1)), *e2 = add(mul(x, ci(4)), ci(1));
  CHECK(e1 == e2);
  CHECK(add(ci(1), x) == add(x, ci(1))); /* constants go right in commutative ops */
  CHECK(alu_const_float(JX_FLOAT32, 0.0) != alu_const_float(JX_FLOAT32, -0.0));
  CHECK(alu_const_float(JX_FLOAT32, 0.1) == alu_const_float(JX_FLOAT32, (float)0.1));
  CHECK(alu_const_int(JX_INT32, 5) != alu_const_int(JX_INT64, 5));
  CHECK(alu_const_int(JX_UINT8, 300) == alu_const_int(JX_UINT8, 44)); /* wraps */
  CHECK(alu_variable("acc", JX_FLOAT32) == alu_variable("acc", JX_FLOAT32));
  CHECK(alu_variable("acc", JX_FLOAT32) != alu_variable("acc", JX_FLOAT64));
  CHECK(e1->hash == e2->hash && e1->id > x->id);
  CHECK_EQ_INT(alu_count(e1), 5); /* x, 4, x*4, 1, x*4+1 */
  CHECK(alu_unary(ALU_NEG, NULL) == NULL && add(x, NULL) == NULL);
}

/* -------------------------------------------------------- constructor folding */

static void test_folding(void) {
  const AluExp *x = alu_special("gidx", 24);
  const AluExp *f = alu_global(0, JX_FLOAT32, x), *i = alu_global(1, JX_INT32, x);
  CHECK(add(ci(2), ci(3)) == ci(5));
  CHECK(add(x, ci(0)) == x && mul(x, ci(1)) == x && mul(x, ci(0)) == ci(0));
  CHECK(idiv(x, ci(1)) == x && imod(x, ci(1)) == ci(0) && imod(x, ci(-1)) == ci(0));
  CHECK(alu_binary(ALU_SUB, i, i) == alu_const_int(JX_INT32, 0));
  /* floats: only exact identities */
  CHECK(mul(f, alu_const_float(JX_FLOAT32, 1.0)) == f);
  CHECK(add(f, alu_const_float(JX_FLOAT32, -0.0)) == f);
  CHECK(add(f, alu_const_float(JX_FLOAT32, 0.0)) != f); /* -0.0 + 0.0 = +0.0 */
  CHECK(alu_binary(ALU_SUB, f, alu_const_float(JX_FLOAT32, 0.0)) == f);
  CHECK(mul(f, alu_const_float(JX_FLOAT32, 0.0))->op == ALU_MUL); /* NaN*0, inf*0 */
  CHECK(alu_binary(ALU_SUB, f, f)->op == ALU_SUB);                 /* inf - inf */
  CHECK(alu_binary(ALU_CMPNE, f, f)->op == ALU_CMPNE);             /* NaN != NaN */
  CHECK(alu_binary(ALU_CMPLT, f, f) == alu_const_int(JX_BOOL, 0));
  CHECK(alu_binary(ALU_MAX, f, f) == f);
  /* where, casts, nots */
  const AluExp *t = alu_const_int(JX_BOOL, 1), *fa = alu_const_int(JX_BOOL, 0);
  const AluExp *c = alu_binary(ALU_CMPLT, i, alu_const_int(JX_INT32, 3));
  CHECK(alu_where(t, f, alu_const_float(JX_FLOAT32, 2)) == f);
  CHECK(alu_where(fa, f, alu_const_float(JX_FLOAT32, 2)) == alu_const_float(JX_FLOAT32, 2));
  CHECK(alu_where(c, f, f) == f);
  CHECK(alu_where(c, t, fa) == c);
  CHECK(alu_where(c, fa, t) == alu_unary(ALU_NOT, c));
  CHECK(alu_unary(ALU_NOT, alu_unary(ALU_NOT, c)) == c);
  CHECK(alu_cast(f, JX_FLOAT32) == f);
  CHECK(alu_cast(alu_cast(i, JX_INT64), JX_INT32) == i);       /* widening is exact */
  CHECK(alu_cast(alu_cast(i, JX_INT8), JX_INT32)->op == ALU_CAST); /* narrowing is not */
  CHECK(alu_cast(alu_cast(i, JX_FLOAT64), JX_INT32) == i);
  CHECK(alu_cast(alu_cast(i, JX_FLOAT32), JX_INT32) != i); /* 2^24 + 1 */
  CHECK(alu_cast(alu_const_float(JX_FLOAT32, 1e10), JX_INT32) ==
        alu_const_int(JX_INT32, INT32_MAX));
  CHECK(alu_binary(ALU_AND, c, t) == c && alu_binary(ALU_AND, c, fa) == fa);
  CHECK(alu_binary(ALU_OR, c, fa) == c && alu_binary(ALU_OR, c, t) == t);
  /* intervals decide comparisons and fold point intervals */
  CHECK(alu_binary(ALU_CMPLT, x, ci(24)) == t);
  CHECK(alu_binary(ALU_CMPLT, x, ci(0)) == fa);
  CHECK(alu_binary(ALU_CMPLT, x, ci(23))->op == ALU_CMPLT);
  CHECK(idiv(x, ci(24)) == ci(0));
  CHECK(alu_binary(ALU_CMPEQ, x, ci(-1)) == fa);
  const AluExp *y = add(mul(x, ci(3)), ci(-5));
  CHECK_EQ_INT(y->lo, -5);
  CHECK_EQ_INT(y->hi, 64);
  CHECK_EQ_INT(imod(y, ci(7))->lo, -5);
  CHECK_EQ_INT(imod(y, ci(7))->hi, 6);
  CHECK_EQ_INT(idiv(y, ci(-2))->lo, -32);
  CHECK_EQ_INT(idiv(y, ci(-2))->hi, 2);
  /* a node that may wrap gets the whole range of its dtype */
  const AluExp *big = mul(x, ci(INT64_MAX / 4));
  CHECK(big->lo == INT64_MIN && big->hi == INT64_MAX);
  CHECK(alu_cast(alu_special("gidx", 300), JX_INT8)->lo == -128);
  CHECK_EQ_INT(alu_cast(x, JX_INT8)->hi, 23);
  CHECK_EQ_INT(alu_cast(imod(x, ci(100)), JX_INT8)->hi, 23);
}

/* ------------------------------------------------------------ op semantics */

typedef struct {
  AluOp op;
  jx_dtype dt, src;
  AluValue a, b, want;
  int line;
} Case;

#define VI(x) ((AluValue){.i = (int64_t)(x)})
#define VU(x) ((AluValue){.u = (uint64_t)(x)})
#define VF(x) ((AluValue){.f = (double)(x)})
/* the same as brace initializers, for the static table */
#define TI(x) {.i = (int64_t)(x)}
#define TU(x) {.u = (uint64_t)(x)}
#define TF(x) {.f = (double)(x)}
/* binary/compare: CI(op, result dtype, operand dtype, a, b, want) */
#define CI(op, dt, sd, a, b, w) {ALU_##op, JX_##dt, JX_##sd, TI(a), TI(b), TI(w), __LINE__}
#define CU(op, dt, sd, a, b, w) {ALU_##op, JX_##dt, JX_##sd, TU(a), TU(b), TU(w), __LINE__}
#define CF(op, dt, a, b, w) {ALU_##op, JX_##dt, JX_##dt, TF(a), TF(b), TF(w), __LINE__}
#define CFB(op, sd, a, b, w) {ALU_##op, JX_BOOL, JX_##sd, TF(a), TF(b), TI(w), __LINE__}
/* unary and casts: value in the source's representation */
#define UF(op, dt, a, w) {ALU_##op, JX_##dt, JX_##dt, TF(a), TF(0), TF(w), __LINE__}
#define UI(op, dt, a, w) {ALU_##op, JX_##dt, JX_##dt, TI(a), TI(0), TI(w), __LINE__}
#define CAST(to, from, a, w) {ALU_CAST, JX_##to, JX_##from, a, TI(0), w, __LINE__}
#define BITC(to, from, a, w) {ALU_BITCAST, JX_##to, JX_##from, a, TI(0), w, __LINE__}

#define F16_TIE (1.0 + 1.0 / 2048) /* halfway between 1 and 1 + 2^-10 */

static const Case cases[] = {
    /* ints wrap to their width */
    CI(ADD, INT32, INT32, INT32_MAX, 1, INT32_MIN),
    CI(ADD, INT8, INT8, 127, 1, -128),
    CU(ADD, UINT8, UINT8, 250, 10, 4),
    CU(SUB, UINT32, UINT32, 3, 5, 4294967294u),
    CI(MUL, INT32, INT32, 65536, 65536, 0),
    CI(MUL, INT64, INT64, INT64_MAX, 2, -2),
    /* truncating division; x/0 = -1 (unsigned: all ones); INT_MIN/-1 = INT_MIN */
    CI(DIV, INT32, INT32, 7, 2, 3),
    CI(DIV, INT32, INT32, -7, 2, -3),
    CI(DIV, INT32, INT32, 7, -2, -3),
    CI(DIV, INT32, INT32, -7, -2, 3),
    CI(DIV, INT32, INT32, 5, 0, -1),
    CI(DIV, INT32, INT32, INT32_MIN, -1, INT32_MIN),
    CI(DIV, INT64, INT64, INT64_MIN, -1, INT64_MIN),
    CI(DIV, INT8, INT8, -128, -1, -128),
    CU(DIV, UINT8, UINT8, 5, 0, 255),
    CU(DIV, UINT64, UINT64, 5, 0, UINT64_MAX),
    CU(DIV, UINT32, UINT32, 4294967295u, 2, 2147483647u),
    /* C remainder: sign of x; x % 0 = x */
    CI(MOD, INT32, INT32, -7, 3, -1),
    CI(MOD, INT32, INT32, 7, -3, 1),
    CI(MOD, INT32, INT32, -7, -3, -1),
    CI(MOD, INT32, INT32, 9, 0, 9),
    CI(MOD, INT64, INT64, INT64_MIN, -1, 0),
    CU(MOD, UINT16, UINT16, 65535, 0, 65535),
    CU(MOD, UINT32, UINT32, 4294967295u, 10, 5),
    /* shifts with out-of-range counts */
    CI(SHL, INT32, INT32, 1, 40, 0),
    CI(SHL, INT32, INT32, 1, -1, 0),
    CI(SHL, INT32, INT32, 1, 31, INT32_MIN),
    CI(SHL, INT32, INT32, 3, 32, 0),
    CU(SHL, UINT8, UINT8, 0x81, 1, 2),
    CI(SHR, INT32, INT32, -8, 1, -4),
    CI(SHR, INT32, INT32, -8, 40, -1),
    CI(SHR, INT32, INT32, -8, -3, -1),
    CI(SHR, INT32, INT32, 8, 40, 0),
    CI(SHR, INT64, INT64, INT64_MIN, 63, -1),
    CU(SHR, UINT32, UINT32, 0x80000000u, 31, 1),
    CU(SHR, UINT32, UINT32, 0x80000000u, 40, 0),
    CU(SHR, UINT8, UINT8, 0x80, 7, 1),
    /* min/max, bitwise */
    CI(MIN, INT32, INT32, -3, 2, -3),
    CU(MAX, UINT32, UINT32, 0xFFFFFFFFu, 1, 0xFFFFFFFFu),
    CU(MIN, UINT64, UINT64, UINT64_MAX, 1, 1),
    CI(AND, INT32, INT32, -1, 0x0F0F, 0x0F0F),
    CI(OR, INT8, INT8, 0x70, 0x0F, 0x7F),
    CI(XOR, INT16, INT16, -1, 1, -2),
    CI(AND, BOOL, BOOL, 1, 0, 0),
    CI(OR, BOOL, BOOL, 1, 0, 1),
    CI(XOR, BOOL, BOOL, 1, 1, 0),
    CI(MIN, BOOL, BOOL, 1, 0, 0),
    /* integer pow by squaring; negative exponents */
    CI(POW, INT32, INT32, 3, 4, 81),
    CI(POW, INT32, INT32, 2, 31, INT32_MIN),
    CI(POW, INT32, INT32, 2, 32, 0),
    CI(POW, INT32, INT32, 2, -1, 0),
    CI(POW, INT32, INT32, 1, -5, 1),
    CI(POW, INT32, INT32, -1, -3, -1),
    CI(POW, INT32, INT32, -1, -4, 1),
    CI(POW, INT32, INT32, 0, 0, 1),
    CI(POW, INT64, INT64, -3, 3, -27),
    CI(POW, INT64, INT64, 3, 40, 12157665459056928801ull), /* exact: 3^40 < 2^64 */
    CU(POW, UINT8, UINT8, 2, 8, 0),
    /* compares */
    CI(CMPLT, BOOL, INT32, -1, 1, 1),
    CU(CMPLT, BOOL, UINT32, 0xFFFFFFFFu, 1, 0),
    CI(CMPEQ, BOOL, INT64, 5, 5, 1),
    CI(CMPNE, BOOL, BOOL, 1, 0, 1),
    CFB(CMPLT, FLOAT32, NAN, 1, 0),
    CFB(CMPLT, FLOAT32, 1, NAN, 0),
    CFB(CMPNE, FLOAT32, NAN, NAN, 1),
    CFB(CMPEQ, FLOAT64, NAN, NAN, 0),
    CFB(CMPEQ, FLOAT64, -0.0, 0.0, 1),
    CFB(CMPLT, FLOAT64, -0.0, 0.0, 0),
    CFB(CMPLT, FLOAT64, -INFINITY, -DBL_MAX, 1),
    /* float arithmetic: computed in double, rounded once to the dtype */
    CF(ADD, FLOAT32, 0.1f, 0.2f, 0.1f + 0.2f),
    CF(MUL, FLOAT32, 1e30f, 1e30f, INFINITY),
    CF(DIV, FLOAT32, 1.0f, 3.0f, 1.0f / 3.0f),
    CF(DIV, FLOAT64, 1, 0.0, INFINITY),
    CF(DIV, FLOAT64, -1, 0.0, -INFINITY),
    CF(DIV, FLOAT64, 1, -0.0, -INFINITY),
    CF(DIV, FLOAT64, 0.0, 0.0, NAN),
    CF(ADD, FLOAT64, INFINITY, -INFINITY, NAN),
    CF(ADD, FLOAT64, -0.0, 0.0, 0.0),
    CF(ADD, FLOAT64, -0.0, -0.0, -0.0),
    CF(MOD, FLOAT64, -7, 3, -1),
    CF(MOD, FLOAT64, 5.5, INFINITY, 5.5),
    CF(MOD, FLOAT64, 5, 0, NAN),
    CF(ADD, FLOAT16, 1, 1.0 / 2048, 1),                  /* tie to even */
    CF(ADD, FLOAT16, 1, 3.0 / 2048, 1 + 1.0 / 512),      /* tie to even, up */
    CF(ADD, FLOAT16, 65504, 15, 65504),
    CF(ADD, FLOAT16, 65504, 16, INFINITY),               /* 65520 rounds to inf */
    CF(MUL, FLOAT16, 1.0 / 16384, 1.0 / 1024, 1.0 / 16777216), /* subnormal */
    CF(ADD, BFLOAT16, 1, 1.0 / 256, 1),
    CF(ADD, BFLOAT16, 1, 3.0 / 256, 1 + 1.0 / 64),
    CF(MIN, FLOAT32, -0.0, 0.0, -0.0),
    CF(MIN, FLOAT32, 0.0, -0.0, -0.0),
    CF(MAX, FLOAT32, -0.0, 0.0, 0.0),
    CF(MAX, FLOAT32, 0.0, -0.0, 0.0),
    CF(MIN, FLOAT64, NAN, 1, NAN),
    CF(MIN, FLOAT64, 1, NAN, NAN),
    CF(MAX, FLOAT64, NAN, INFINITY, NAN),
    CF(MAX, FLOAT64, -INFINITY, 3, 3),
    CF(POW, FLOAT64, 2, 0.5, 1.4142135623730951),
    CF(POW, FLOAT64, 0, -1, INFINITY),
    CF(POW, FLOAT64, NAN, 0, 1),
    CF(ATAN2, FLOAT64, 0.0, -0.0, 3.141592653589793),
    CF(ATAN2, FLOAT64, -0.0, -0.0, -3.141592653589793),
    /* unary: ints */
    UI(NEG, INT8, -128, -128),
    UI(NEG, INT32, 5, -5),
    UI(ABS, INT32, INT32_MIN, INT32_MIN),
    UI(ABS, INT64, -7, 7),
    UI(NOT, INT32, 0, -1),
    UI(NOT, BOOL, 1, 0),
    UI(NOT, BOOL, 0, 1),
    UI(SIGN, INT32, -5, -1),
    UI(SIGN, INT32, 0, 0),
    UI(SIGN, INT64, 9, 1),
    {ALU_NEG, JX_UINT8, JX_UINT8, TU(1), TU(0), TU(255), __LINE__},
    {ALU_NOT, JX_UINT16, JX_UINT16, TU(0), TU(0), TU(65535), __LINE__},
    {ALU_SIGN, JX_UINT32, JX_UINT32, TU(7), TU(0), TU(1), __LINE__},
    /* unary: floats */
    UF(NEG, FLOAT32, 0.0, -0.0),
    UF(ABS, FLOAT32, -0.0, 0.0),
    UF(SIGN, FLOAT32, -0.0, -0.0),
    UF(SIGN, FLOAT32, 0.0, 0.0),
    UF(SIGN, FLOAT32, NAN, NAN),
    UF(SIGN, FLOAT32, -3, -1),
    UF(SIGN, FLOAT64, INFINITY, 1),
    UF(ROUND, FLOAT32, 0.5, 0.0),
    UF(ROUND, FLOAT32, 1.5, 2.0),
    UF(ROUND, FLOAT32, 2.5, 2.0),
    UF(ROUND, FLOAT32, -0.5, -0.0),
    UF(ROUND, FLOAT32, -1.5, -2.0),
    UF(ROUND, FLOAT32, -0.3, -0.0),
    UF(ROUND, FLOAT64, 2.5000000000000004, 3.0),
    UF(ROUND, FLOAT64, 4503599627370497.0, 4503599627370497.0),
    UF(ROUND, FLOAT64, -INFINITY, -INFINITY),
    UF(ROUND, FLOAT64, NAN, NAN),
    UF(FLOOR, FLOAT32, -0.5, -1.0),
    UF(CEIL, FLOAT32, -0.5, -0.0),
    UF(TRUNC, FLOAT32, -2.7, -2.0),
    UF(SQRT, FLOAT32, -1, NAN),
    UF(SQRT, FLOAT32, -0.0, -0.0),
    UF(SQRT, FLOAT32, 2, 1.41421353816986083984375), /* sqrtf(2) */
    UF(RSQRT, FLOAT32, 4, 0.5),
    UF(RSQRT, FLOAT32, 0.0, INFINITY),
    UF(RECIPROCAL, FLOAT32, -0.0, -INFINITY),
    UF(RECIPROCAL, FLOAT64, 4, 0.25),
    UF(EXP, FLOAT64, 0, 1),
    UF(EXP, FLOAT32, -INFINITY, 0),
    UF(EXP, FLOAT32, 100, INFINITY),
    UF(EXP2, FLOAT64, 10, 1024),
    UF(EXPM1, FLOAT64, 1e-20, 1e-20),
    UF(LOG, FLOAT64, 0, -INFINITY),
    UF(LOG, FLOAT64, -1, NAN),
    UF(LOG2, FLOAT64, 8, 3),
    UF(LOG1P, FLOAT64, -1, -INFINITY),
    UF(LOG1P, FLOAT64, 1e-20, 1e-20),
    UF(CBRT, FLOAT64, -8, -2), /* glibc's cbrt(-27) is 1 ulp off */
    UF(SIN, FLOAT64, -0.0, -0.0),
    UF(COS, FLOAT64, 0, 1),
    UF(TAN, FLOAT64, 0, 0),
    UF(ASIN, FLOAT64, 2, NAN),
    UF(ACOS, FLOAT64, 1, 0),
    UF(ATAN, FLOAT64, INFINITY, 1.5707963267948966),
    UF(SINH, FLOAT64, 0, 0),
    UF(COSH, FLOAT64, 0, 1),
    UF(TANH, FLOAT64, INFINITY, 1),
    UF(TANH, FLOAT32, -0.0, -0.0),
    UF(ASINH, FLOAT64, 0, 0),
    UF(ACOSH, FLOAT64, 1, 0),
    UF(ATANH, FLOAT64, 1, INFINITY),
    UF(ERF, FLOAT64, INFINITY, 1),
    UF(ERF, FLOAT64, -0.0, -0.0),
    UF(ERFC, FLOAT64, 0, 1),
    UF(ERFC, FLOAT64, -INFINITY, 2),
    {ALU_ISNAN, JX_BOOL, JX_FLOAT32, TF(NAN), TI(0), TI(1), __LINE__},
    {ALU_ISNAN, JX_BOOL, JX_FLOAT32, TF(INFINITY), TI(0), TI(0), __LINE__},
    {ALU_ISINF, JX_BOOL, JX_FLOAT64, TF(-INFINITY), TI(0), TI(1), __LINE__},
    {ALU_ISINF, JX_BOOL, JX_FLOAT64, TF(NAN), TI(0), TI(0), __LINE__},
    /* casts: float -> int saturates, NaN -> 0 */
    CAST(INT32, FLOAT32, TF(1e10), TI(INT32_MAX)),
    CAST(INT32, FLOAT32, TF(-1e10), TI(INT32_MIN)),
    CAST(INT32, FLOAT32, TF(NAN), TI(0)),
    CAST(INT32, FLOAT32, TF(INFINITY), TI(INT32_MAX)),
    CAST(INT32, FLOAT64, TF(-2147483648.9), TI(INT32_MIN)),
    CAST(INT32, FLOAT64, TF(-2147483649.0), TI(INT32_MIN)),
    CAST(INT32, FLOAT64, TF(3.9), TI(3)),
    CAST(INT32, FLOAT64, TF(-3.9), TI(-3)),
    CAST(INT8, FLOAT64, TF(-200), TI(-128)),
    CAST(UINT8, FLOAT64, TF(-5), TU(0)),
    CAST(UINT8, FLOAT64, TF(-0.9), TU(0)),
    CAST(UINT8, FLOAT64, TF(300), TU(255)),
    CAST(UINT8, FLOAT64, TF(255.9), TU(255)),
    CAST(INT64, FLOAT64, TF(9.3e18), TI(INT64_MAX)),
    CAST(INT64, FLOAT64, TF(-9.3e18), TI(INT64_MIN)),
    CAST(INT64, FLOAT64, TF(-9223372036854775808.0), TI(INT64_MIN)),
    CAST(UINT64, FLOAT64, TF(1e20), TU(UINT64_MAX)),
    CAST(UINT64, FLOAT64, TF(18446744073709549568.0), TU(18446744073709549568ull)),
    CAST(UINT32, FLOAT32, TF(NAN), TU(0)),
    /* -> bool is x != 0; bool -> number is 0/1 */
    CAST(BOOL, FLOAT32, TF(NAN), TI(1)),
    CAST(BOOL, FLOAT32, TF(-0.0), TI(0)),
    CAST(BOOL, FLOAT64, TF(0.25), TI(1)),
    CAST(BOOL, INT32, TI(-2), TI(1)),
    CAST(BOOL, UINT64, TU(1ull << 63), TI(1)),
    CAST(FLOAT32, BOOL, TI(1), TF(1.0)),
    CAST(INT32, BOOL, TI(1), TI(1)),
    /* int -> int wraps */
    CAST(INT8, INT32, TI(300), TI(44)),
    CAST(INT8, INT32, TI(200), TI(-56)),
    CAST(UINT32, INT32, TI(-1), TU(4294967295u)),
    CAST(INT64, UINT32, TU(4294967295u), TI(4294967295ll)),
    CAST(INT32, UINT64, TU(UINT64_MAX), TI(-1)),
    CAST(UINT64, INT8, TI(-1), TU(UINT64_MAX)),
    /* int -> float rounds to nearest even */
    CAST(FLOAT32, INT32, TI(16777217), TF(16777216.0)),
    CAST(FLOAT32, INT64, TI((1ll << 53) + 1), TF(9007199254740992.0)),
    CAST(FLOAT64, UINT64, TU(UINT64_MAX), TF(18446744073709551616.0)),
    CAST(FLOAT16, INT32, TI(2049), TF(2048)),
    CAST(FLOAT16, INT32, TI(70000), TF(INFINITY)),
    CAST(BFLOAT16, INT32, TI(257), TF(256)),
    /* float -> float, including the double-rounding trap: 1 + 2^-11 + 2^-40 is above
     * the f16 tie, though rounding it to f32 first would land exactly on the tie */
    CAST(FLOAT16, FLOAT64, TF(F16_TIE + 0x1p-40), TF(1 + 1.0 / 1024)),
    CAST(FLOAT16, FLOAT64, TF(F16_TIE), TF(1)),
    CAST(FLOAT16, FLOAT64, TF(1e-8), TF(0)),
    CAST(FLOAT16, FLOAT64, TF(-1e-8), TF(-0.0)),
    CAST(FLOAT16, FLOAT32, TF(NAN), TF(NAN)),
    CAST(BFLOAT16, FLOAT64, TF(1 + 1.0 / 256 + 0x1p-40), TF(1 + 1.0 / 128)),
    CAST(FLOAT32, FLOAT64, TF(1e300), TF(INFINITY)),
    CAST(FLOAT32, FLOAT64, TF(0.1), TF((float)0.1)),
    CAST(FLOAT64, FLOAT16, TF(65504), TF(65504)),
    /* bitcasts */
    BITC(UINT32, FLOAT32, TF(1.0), TU(0x3f800000u)),
    BITC(INT32, FLOAT32, TF(-0.0), TI(INT32_MIN)),
    BITC(FLOAT16, UINT16, TU(0x3c00), TF(1.0)),
    BITC(UINT16, BFLOAT16, TF(-2.0), TU(0xc000)),
    BITC(INT64, FLOAT64, TF(-0.0), TI(INT64_MIN)),
    BITC(FLOAT32, UINT32, TU(0x7f800000u), TF(INFINITY)),
    BITC(INT8, UINT8, TU(255), TI(-1)),
};

static bool same_value(jx_dtype d, AluValue a, AluValue b) {
  if (dtype_is_floating(d))
    return (isnan(a.f) && isnan(b.f)) || (a.f == b.f && signbit(a.f) == signbit(b.f));
  return a.u == b.u;
}

static void test_op_semantics(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const Case *c = &cases[i];
    /* operands are given loosely; normalize them as a kernel would see them */
    AluValue args[2] = {alu_normalize(c->src, c->a), alu_normalize(c->src, c->b)};
    if (c->op == ALU_SHL || c->op == ALU_SHR) args[1] = c->b;
    AluValue want = alu_normalize(c->dt, c->want);
    AluValue got = alu_eval_op(c->op, c->dt, c->src, args);
    CHECK_MSG(same_value(c->dt, got, want),
              "line %d: %s %s: got 0x%llx (%.17g), want 0x%llx (%.17g)", c->line,
              alu_op_name(c->op), dtype_short_name(c->dt), (unsigned long long)got.u, got.f,
              (unsigned long long)want.u, want.f);
    /* the constant folder must agree with the evaluator */
    const AluExp *s[2] = {alu_const(c->src, args[0]), alu_const(c->src, args[1])};
    if (c->op == ALU_SHL || c->op == ALU_SHR) s[1] = alu_const(c->src, c->b);
    const AluExp *e = alu_make(c->op, c->dt, alu_op_arity(c->op), s, (AluValue){0}, 0, NULL);
    CHECK_MSG(e && e->op == ALU_CONST && same_value(c->dt, e->value, want),
              "line %d: folding %s", c->line, alu_op_name(c->op));
  }
  /* transcendental results round once from double to the dtype */
  for (double x = -3; x <= 3; x += 0.37) {
    AluValue a = {.f = (float)x};
    CHECK(alu_eval_op(ALU_EXP, JX_FLOAT32, JX_FLOAT32, &a).f == (float)exp((float)x));
    CHECK(alu_eval_op(ALU_ERF, JX_FLOAT64, JX_FLOAT64, &a).f == erf((float)x));
    CHECK(alu_eval_op(ALU_ERFC, JX_FLOAT32, JX_FLOAT32, &a).f == (float)erfc((float)x));
  }
  /* WHERE picks; the result is already normalized */
  AluValue w[3] = {VI(1), VF(2.5), VF(-1)};
  CHECK(alu_eval_op(ALU_WHERE, JX_FLOAT32, JX_BOOL, w).f == 2.5);
  w[0] = VI(0);
  CHECK(alu_eval_op(ALU_WHERE, JX_FLOAT32, JX_BOOL, w).f == -1);
}

/* Threefry-2x32 known answers. Produced with JAX 0.10.2 by
 *   from jax._src.random.threefry2x32 import threefry2x32_p
 *   o0, o1 = threefry2x32_p.bind(*[jnp.array([v], jnp.uint32) for v in (k0, k1, c0, c1)])
 * and packed as (o0 << 32) | o1. The first three are also Random123's kat_vectors for
 * threefry2x32_20. */
static void test_threefry(void) {
  static const struct {
    uint32_t k0, k1, c0, c1;
    uint64_t want;
  } kat[] = {
      {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x6b20015999ba4efeull},
      {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x1cb996fcbb002be7ull},
      {0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u, 0xc4923a9c483df7a0ull},
      {0x00000000u, 0x0000002au, 0x00000000u, 0x00000001u, 0x03d7b32dadd083f4ull},
      {0x00000000u, 0x0000002au, 0x00000005u, 0x00000007u, 0xb2f09ad1a763eafbull},
      {0x075bcd15u, 0x3ade68b1u, 0xdeadbeefu, 0xcafebabeu, 0x87de2b7b312dc012ull},
  };
  for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
    AluValue a[4] = {VU(kat[i].k0), VU(kat[i].k1), VU(kat[i].c0), VU(kat[i].c1)};
    AluValue r = alu_eval_op(ALU_THREEFRY2X32, JX_UINT64, JX_UINT32, a);
    CHECK_MSG(r.u == kat[i].want, "threefry case %zu: got %016llx", i, (unsigned long long)r.u);
    const AluExp *e = alu_threefry2x32(
        alu_const(JX_UINT32, a[0]), alu_const(JX_UINT32, a[1]), alu_const(JX_UINT32, a[2]),
        alu_const(JX_UINT32, a[3]));
    CHECK(e && e->op == ALU_CONST && e->value.u == kat[i].want);
  }
}

/* FMA rounds once: (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 exactly, where the float32
 * product rounds to 1 + 2^-11 and the separate sum gives 0; the same in float64 with
 * 2^-27 (2^-54); the constant folder agrees; other dtypes are refused by the checker. */
static void test_fma(void) {
  AluValue a32[3] = {{.f = 1 + 0x1p-12}, {.f = 1 + 0x1p-12}, {.f = -(1 + 0x1p-11)}};
  CHECK(alu_eval_op(ALU_FMA, JX_FLOAT32, JX_FLOAT32, a32).f == 0x1p-24);
  CHECK(alu_eval_op(ALU_ADD, JX_FLOAT32, JX_FLOAT32, (AluValue[]){alu_eval_op(ALU_MUL, JX_FLOAT32, JX_FLOAT32, a32), a32[2]}).f == 0);
  AluValue a64[3] = {{.f = 1 + 0x1p-27}, {.f = 1 + 0x1p-27}, {.f = -(1 + 0x1p-26)}};
  CHECK(alu_eval_op(ALU_FMA, JX_FLOAT64, JX_FLOAT64, a64).f == 0x1p-54);
  const AluExp *e = alu_fma(alu_const(JX_FLOAT32, a32[0]), alu_const(JX_FLOAT32, a32[1]), alu_const(JX_FLOAT32, a32[2]));
  CHECK(e && e->op == ALU_CONST && e->value.f == 0x1p-24);
  const AluExp *x = alu_global(0, JX_FLOAT32, alu_special("gidx", 8));
  jx_dtype f32[1] = {JX_FLOAT32};
  CHECK(alu_check(alu_fma(x, x, x), 1, f32) == JX_OK);
  const AluExp *h = alu_const_float(JX_FLOAT16, 1);
  CHECK(alu_check(alu_fma(h, h, h), 0, NULL) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "fma of f16");
}

static void test_load_store(void) {
  unsigned char buf[64];
  const struct {
    jx_dtype d;
    AluValue v;
  } vals[] = {{JX_BOOL, VI(1)},          {JX_INT8, VI(-5)},     {JX_UINT8, VU(250)},
              {JX_INT16, VI(-30000)},    {JX_UINT16, VU(65535)}, {JX_INT32, VI(INT32_MIN)},
              {JX_UINT32, VU(4000000000u)}, {JX_INT64, VI(INT64_MIN)},
              {JX_UINT64, VU(UINT64_MAX)}, {JX_FLOAT16, VF(-1.5)}, {JX_BFLOAT16, VF(3.0)},
              {JX_FLOAT32, VF(0.1f)},    {JX_FLOAT64, VF(-0.0)}};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    memset(buf, 0xAB, sizeof buf);
    alu_store(buf, vals[i].d, 3, vals[i].v);
    CHECK_MSG(same_value(vals[i].d, alu_load(buf, vals[i].d, 3), vals[i].v), "dtype %s",
              dtype_short_name(vals[i].d));
    CHECK(buf[0] == 0xAB); /* element 3 only */
  }
  uint16_t h = 0x3c00;
  CHECK(alu_load(&h, JX_FLOAT16, 0).f == 1.0);
  uint8_t b = 7; /* any nonzero byte reads as true */
  CHECK(alu_load(&b, JX_BOOL, 0).i == 1);
}

/* -------------------------------------------------------------- simplifier */

typedef struct {
  const char *name;
  AluValue value;
} Binding;

/* Reference evaluation of an AluExp over integer loop indices (recursive; the test
 * expressions are small). */
static AluValue eval_exp(const AluExp *e, const Binding *b, int nb) {
  if (e->op == ALU_CONST) return e->value;
  if (e->op == ALU_SPECIAL || e->op == ALU_VARIABLE) {
    for (int i = 0; i < nb; i++)
      if (strcmp(b[i].name, e->name) == 0) return b[i].value;
    return VI(0);
  }
  AluValue a[4];
  for (int i = 0; i < e->nsrc; i++) a[i] = eval_exp(e->src[i], b, nb);
  return alu_eval_op(e->op, e->dtype, e->src[0]->dtype, a);
}

/* A random expression, kept as a test-side tree so its value does not depend on the
 * constructors' rewrites: the tree is evaluated directly, then built, then simplified. */
typedef struct TNode {
  int kind; /* 0: variable, 1: constant, 2: op */
  int var;
  int64_t c;
  AluOp op;
  const struct TNode *a, *b, *cnd;
} TNode;

static TNode pool[1 << 16];
static int pool_n;
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ull;
}
static int64_t rint_in(int64_t lo, int64_t hi) {
  return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

#define NVARS 3
static const char *var_names[NVARS] = {"a", "b", "c"};
static int64_t var_range[NVARS];

static int64_t rand_const(void) {
  static const int64_t nice[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, -1, -2, -3, -4, -6, 0, 5, 7};
  int r = (int)(rnd() % 20);
  if (r < 14) return nice[rnd() % (sizeof nice / sizeof nice[0])];
  if (r < 18) return rint_in(-30, 30);
  /* provoke wrap-around in 64 and in 32 bits (narrower dtypes wrap at every size) */
  return (rnd() & 1 ? 1 : -1) * ((int64_t)1 << (r == 18 ? 61 : 29)) + rint_in(-3, 3);
}

static const TNode *tnew(TNode n) {
  pool[pool_n] = n;
  return &pool[pool_n++];
}

static const TNode *tconst(int64_t c) { return tnew((TNode){.kind = 1, .c = c}); }
static const TNode *tvar(void) { return tnew((TNode){.kind = 0, .var = (int)(rnd() % NVARS)}); }
static const TNode *top(AluOp op, const TNode *a, const TNode *b) {
  return tnew((TNode){.kind = 2, .op = op, .a = a, .b = b});
}
static int64_t nice_pos(void) {
  static const int64_t k[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 24};
  return k[rnd() % (sizeof k / sizeof k[0])];
}

/* What views produce: sums of ((v / a) % b) * stride + offset, then more / and %. */
static const TNode *rand_view(void) {
  const TNode *sum = NULL;
  for (int t = (int)rint_in(1, 3); t > 0; t--) {
    const TNode *x = tvar();
    if (rnd() % 2) x = top(ALU_DIV, x, tconst(nice_pos()));
    if (rnd() % 2) x = top(ALU_MOD, x, tconst(nice_pos()));
    if (rnd() % 3) x = top(ALU_MUL, x, tconst(rnd() % 5 ? nice_pos() : -nice_pos()));
    sum = sum ? top(ALU_ADD, sum, x) : x;
  }
  if (rnd() % 2) sum = top(ALU_ADD, sum, tconst(rint_in(-12, 12)));
  for (int t = (int)rint_in(0, 2); t > 0; t--)
    sum = top(rnd() % 2 ? ALU_DIV : ALU_MOD, sum, tconst(rnd() % 6 ? nice_pos() : -nice_pos()));
  return sum;
}

static const TNode *rand_tree(int depth) {
  int r = (int)(rnd() % 16);
  if (depth == 0 || r < 2) return rnd() % 4 == 0 ? tconst(rand_const()) : tvar();
  if (r < 6) return rand_view();
  static const AluOp ops[] = {ALU_ADD, ALU_ADD, ALU_SUB, ALU_MUL, ALU_MUL, ALU_DIV, ALU_DIV,
                              ALU_DIV, ALU_MOD, ALU_MOD, ALU_MOD, ALU_MIN, ALU_MAX, ALU_NEG,
                              ALU_WHERE, ALU_ADD};
  AluOp op = ops[rnd() % (sizeof ops / sizeof ops[0])];
  TNode n = {.kind = 2, .op = op};
  n.a = rand_tree(depth - 1);
  if (op == ALU_NEG) return tnew(n);
  bool const_rhs = op == ALU_DIV || op == ALU_MOD || op == ALU_MUL ? rnd() % 8 != 0 : rnd() % 2;
  n.b = const_rhs ? tconst(rand_const()) : rand_tree(depth - 1);
  if (op == ALU_WHERE) { /* where(x < k, a, b) or where(k < x, ...) or (x == k) */
    TNode cmp = {.kind = 2, .op = rnd() % 3 == 0 ? ALU_CMPEQ : ALU_CMPLT};
    const TNode *x = rand_tree(depth - 1), *k = tconst(rint_in(-10, 30));
    bool flip = rnd() & 1;
    cmp.a = flip ? k : x;
    cmp.b = flip ? x : k;
    n.cnd = tnew(cmp);
  }
  return tnew(n);
}

static AluValue teval(const TNode *t, const int64_t *vals, jx_dtype d) {
  if (t->kind == 0) return VI(vals[t->var]);
  if (t->kind == 1) return alu_normalize(d, VI(t->c));
  AluValue a[3] = {teval(t->a, vals, d)};
  if (t->op == ALU_NEG) return alu_eval_op(ALU_NEG, d, d, a);
  a[1] = teval(t->b, vals, d);
  if (t->op == ALU_WHERE) {
    AluValue c[2] = {teval(t->cnd->a, vals, d), teval(t->cnd->b, vals, d)};
    AluValue w[3] = {alu_eval_op(t->cnd->op, JX_BOOL, d, c), a[0], a[1]};
    return alu_eval_op(ALU_WHERE, d, JX_BOOL, w);
  }
  return alu_eval_op(t->op, d, d, a);
}

static const AluExp *tbuild(const TNode *t, jx_dtype d) {
  if (t->kind == 0) {
    const AluExp *v = alu_special(var_names[t->var], var_range[t->var]);
    return d == JX_INT64 ? v : alu_cast(v, d);
  }
  if (t->kind == 1) return alu_const_int(d, t->c);
  const AluExp *a = tbuild(t->a, d);
  if (t->op == ALU_NEG) return alu_unary(ALU_NEG, a);
  const AluExp *b = tbuild(t->b, d);
  if (t->op == ALU_WHERE)
    return alu_where(alu_binary(t->cnd->op, tbuild(t->cnd->a, d), tbuild(t->cnd->b, d)), a, b);
  return alu_binary(t->op, a, b);
}

static void check_random_exprs(jx_dtype d, int count) {
  int bad = 0;
  for (int iter = 0; iter < count && bad < 5; iter++) {
    pool_n = 0;
    for (int v = 0; v < NVARS; v++) var_range[v] = rint_in(1, v == 0 ? 30 : 7);
    const TNode *t = rand_tree((int)rint_in(1, 5));
    const AluExp *e = tbuild(t, d), *s = alu_simplify(e);
    if (!e || !s) {
      CHECK_MSG(false, "construction failed: %s", jx_last_error());
      return;
    }
    CHECK(alu_check(s, 0, NULL) == JX_OK);
    CHECK_MSG(alu_simplify(s) == s, "simplify is not idempotent (iteration %d)", iter);
    int64_t vals[NVARS];
    for (vals[0] = 0; vals[0] < var_range[0]; vals[0]++)
      for (vals[1] = 0; vals[1] < var_range[1]; vals[1]++)
        for (vals[2] = 0; vals[2] < var_range[2]; vals[2]++) {
          Binding b[NVARS];
          for (int v = 0; v < NVARS; v++) b[v] = (Binding){var_names[v], VI(vals[v])};
          AluValue want = teval(t, vals, d), got_e = eval_exp(e, b, NVARS),
                   got_s = eval_exp(s, b, NVARS);
          if (got_e.u == want.u && got_s.u == want.u) continue;
          char *pe = alu_print(e), *ps = alu_print(s);
          CHECK_MSG(false,
                    "%s iteration %d at a=%lld b=%lld c=%lld (ranges %lld %lld %lld): want %lld, "
                    "built %lld, simplified %lld\nbuilt:\n%ssimplified:\n%s",
                    dtype_short_name(d), iter, (long long)vals[0], (long long)vals[1],
                    (long long)vals[2], (long long)var_range[0], (long long)var_range[1],
                    (long long)var_range[2], (long long)want.i, (long long)got_e.i,
                    (long long)got_s.i, pe, ps);
          free(pe);
          free(ps);
          bad++;
          goto next;
        }
  next:;
  }
}

static const AluExp *S(const AluExp *e) { return alu_simplify(e); }

/* Flattened (outer, inner) index pairs: (k*a + b + c0) / c and % c, and a digit
 * ((k*a + b) / c) % m, with b of small range -- the forms the reduction lowering
 * builds -- agree with the built tree everywhere, and the split form fires. */
static void test_simplify_flattened_pairs(void) {
  const AluExp *g = alu_special("gidx", 6272), *r = alu_special("ridx", 4);
  CHECK(S(idiv(add(mul(g, ci(4)), r), ci(128))) == S(idiv(g, ci(32))));
  CHECK(S(imod(idiv(add(mul(g, ci(4)), r), ci(128)), ci(14))) ==
        S(imod(idiv(g, ci(32)), ci(14))));
  for (int iter = 0; iter < 3000; iter++) {
    int64_t na = rint_in(1, 40), nb = rint_in(1, 12), k = rint_in(1, 12) * rint_in(1, 4);
    int64_t c = rint_in(1, 8) * rint_in(1, 16), m = rint_in(1, 9), c0 = rint_in(-3, 12);
    const AluExp *a = alu_special("a", na), *b = alu_special("b", nb);
    const AluExp *x = add(add(mul(a, ci(k)), b), ci(c0));
    const AluExp *es[3] = {idiv(x, ci(c)), imod(x, ci(c)), imod(idiv(x, ci(c)), ci(m))};
    for (int f = 0; f < 3; f++) {
      const AluExp *e = es[f], *sx = S(e);
      for (int64_t va = 0; va < na; va++)
        for (int64_t vb = 0; vb < nb; vb++) {
          Binding bd[2] = {{"a", VI(va)}, {"b", VI(vb)}};
          if (eval_exp(e, bd, 2).i == eval_exp(sx, bd, 2).i) continue;
          CHECK_MSG(false, "form %d k=%lld c=%lld m=%lld c0=%lld at a=%lld b=%lld", f,
                    (long long)k, (long long)c, (long long)m, (long long)c0, (long long)va,
                    (long long)vb);
          return;
        }
    }
  }
}

static void test_simplify_random(void) {
  const char *env = getenv("JAXC_TEST_ITERS");
  int n = env ? atoi(env) : 4000;
  check_random_exprs(JX_INT64, n);
  check_random_exprs(JX_INT32, n / 4);
  check_random_exprs(JX_INT8, n / 4);
  check_random_exprs(JX_UINT32, n / 4);
}

#define CHECK_RET(c) (test_checks++, (c) ? true : (test_fail(__FILE__, __LINE__, "%s", #c), false))
/* Floats and bools: the constructors' rewrites must be exact for NaN, +-0 and +-inf.
 * Random expressions over two f32 variables and one bool are built (folding and
 * rewriting on), simplified, and compared with the tree evaluated op by op. */
typedef struct FNode {
  AluOp op; /* ALU_VARIABLE / ALU_CONST for leaves */
  jx_dtype dt;
  int var;
  double c;
  const struct FNode *s[3];
} FNode;
static FNode fpool[4096];
static int fpool_n;
static const double fspecial[] = {0.0, -0.0, 1.0, -1.0, 0.5, 3.0, INFINITY, -INFINITY, NAN};
#define NFSPECIAL (sizeof fspecial / sizeof fspecial[0])

static const FNode *fnew(FNode n) {
  fpool[fpool_n] = n;
  return &fpool[fpool_n++];
}

static const FNode *rand_ftree(int depth, jx_dtype dt) {
  if (depth == 0 || rnd() % 5 == 0) {
    if (dt == JX_BOOL) {
      if (rnd() % 3 == 0) return fnew((FNode){ALU_CONST, JX_BOOL, 0, (double)(rnd() & 1), {0}});
      return fnew((FNode){ALU_VARIABLE, JX_BOOL, 2, 0, {0}});
    }
    if (rnd() % 3 == 0) return fnew((FNode){ALU_CONST, dt, 0, fspecial[rnd() % NFSPECIAL], {0}});
    return fnew((FNode){ALU_VARIABLE, dt, (int)(rnd() % 2), 0, {0}});
  }
  if (dt == JX_BOOL) {
    static const AluOp bops[] = {ALU_AND, ALU_OR, ALU_XOR, ALU_NOT, ALU_CMPLT, ALU_CMPNE,
                                 ALU_CMPEQ, ALU_ISNAN, ALU_WHERE, ALU_CMPNE, ALU_CMPEQ};
    AluOp op = bops[rnd() % (sizeof bops / sizeof bops[0])];
    FNode n = {op, JX_BOOL, 0, 0, {0}};
    jx_dtype sd = op == ALU_CMPLT || op == ALU_ISNAN || rnd() % 2 ? JX_FLOAT32 : JX_BOOL;
    if (op == ALU_AND || op == ALU_OR || op == ALU_XOR || op == ALU_NOT || op == ALU_WHERE)
      sd = JX_BOOL;
    int ar = alu_op_arity(op);
    for (int i = 0; i < ar; i++)
      n.s[i] = rand_ftree(depth - 1, op == ALU_WHERE && i == 0 ? JX_BOOL : sd);
    return fnew(n);
  }
  static const AluOp fops[] = {ALU_ADD, ALU_SUB, ALU_MUL, ALU_DIV, ALU_MIN, ALU_MAX, ALU_NEG,
                               ALU_ABS, ALU_FLOOR, ALU_ROUND, ALU_WHERE, ALU_CAST, ALU_MOD,
                               ALU_SIGN, ALU_SQRT};
  AluOp op = fops[rnd() % (sizeof fops / sizeof fops[0])];
  FNode n = {op, dt, 0, 0, {0}};
  if (op == ALU_CAST) { /* through f64, f16 or i32 and back */
    static const jx_dtype mids[] = {JX_FLOAT64, JX_FLOAT16, JX_INT32, JX_BOOL};
    jx_dtype mid = mids[rnd() % 4];
    FNode inner = {ALU_CAST, mid, 0, 0, {rand_ftree(depth - 1, dt)}};
    n.s[0] = fnew(inner);
    return fnew(n);
  }
  int ar = alu_op_arity(op);
  for (int i = 0; i < ar; i++)
    n.s[i] = rand_ftree(depth - 1, op == ALU_WHERE && i == 0 ? JX_BOOL : dt);
  return fnew(n);
}

static AluValue feval(const FNode *t, const AluValue *vars) {
  if (t->op == ALU_VARIABLE) return vars[t->var];
  if (t->op == ALU_CONST)
    return t->dt == JX_BOOL ? VI(t->c != 0) : alu_normalize(t->dt, VF(t->c));
  AluValue a[3];
  int ar = alu_op_arity(t->op);
  for (int i = 0; i < ar; i++) a[i] = feval(t->s[i], vars);
  return alu_eval_op(t->op, t->dt, t->s[0]->dt, a);
}

static const char *fvar_names[3] = {"p", "q", "flag"};

static const AluExp *fbuild(const FNode *t) {
  if (t->op == ALU_VARIABLE) return alu_variable(fvar_names[t->var], t->dt);
  if (t->op == ALU_CONST)
    return t->dt == JX_BOOL ? alu_const_int(JX_BOOL, t->c != 0) : alu_const_float(t->dt, t->c);
  const AluExp *s[3] = {0};
  int ar = alu_op_arity(t->op);
  for (int i = 0; i < ar; i++) s[i] = fbuild(t->s[i]);
  return alu_make(t->op, t->dt, ar, s, VI(0), 0, NULL);
}

static void test_float_rewrites_random(void) {
  int bad = 0;
  int n = getenv("JAXC_TEST_ITERS") ? atoi(getenv("JAXC_TEST_ITERS")) : 3000;
  for (int iter = 0; iter < n && bad < 5; iter++) {
    fpool_n = 0;
    const FNode *t = rand_ftree((int)rint_in(1, 5), rnd() % 4 ? JX_FLOAT32 : JX_BOOL);
    const AluExp *e = fbuild(t), *s = alu_simplify(e);
    CHECK(e && s && alu_check(s, 0, NULL) == JX_OK);
    if (!e || !s) return;
    for (size_t i = 0; i < NFSPECIAL * NFSPECIAL * 2; i++) {
      AluValue vars[3] = {VF(fspecial[i % NFSPECIAL]), VF(fspecial[(i / NFSPECIAL) % NFSPECIAL]),
                          VI(i / (NFSPECIAL * NFSPECIAL))};
      Binding b[3] = {{"p", vars[0]}, {"q", vars[1]}, {"flag", vars[2]}};
      AluValue want = feval(t, vars), got = eval_exp(e, b, 3), got_s = eval_exp(s, b, 3);
      if (same_value(t->dt, want, got) && same_value(t->dt, want, got_s)) continue;
      char *pe = alu_print(e), *ps = alu_print(s);
      CHECK_MSG(false, "iteration %d, p=%g q=%g flag=%d: want %.17g/%lld got %.17g/%lld, "
                "simplified %.17g/%lld\n%s=>\n%s", iter, vars[0].f, vars[1].f, (int)vars[2].i,
                want.f, (long long)want.i, got.f, (long long)got.i, got_s.f, (long long)got_s.i,
                pe, ps);
      free(pe);
      free(ps);
      bad++;
      break;
    }
  }
}


/* Checks that e and its simplification agree on x in [0, n) (one variable "gidx"). */
static bool agrees(const AluExp *e, int64_t n) {
  const AluExp *s = S(e);
  for (int64_t x = 0; x < n; x++) {
    Binding b = {"gidx", VI(x)};
    if (eval_exp(e, &b, 1).u != eval_exp(s, &b, 1).u) return false;
  }
  return true;
}

static void test_simplify_views(void) {
  const AluExp *x = alu_special("gidx", 24);
  const AluExp *k3 = ci(3), *k4 = ci(4), *k6 = ci(6), *k12 = ci(12);
  /* (6,4) -> flat: (x//4)*4 + x%4 == x */
  CHECK(S(add(mul(idiv(x, k4), k4), imod(x, k4))) == x);
  /* (2,3,4) -> flat, with either form of the middle index */
  const AluExp *mid1 = imod(idiv(x, k4), k3), *mid2 = idiv(imod(x, k12), k4);
  CHECK(S(add(add(mul(idiv(x, k12), k12), mul(mid1, k4)), imod(x, k4))) == x);
  CHECK(S(add(add(mul(idiv(x, k12), k12), mul(mid2, k4)), imod(x, k4))) == x);
  CHECK(S(mid2) == S(mid1));
  /* (x % 12) as a sum of its digits */
  CHECK(S(add(mul(mid1, k4), imod(x, k4))) == imod(x, k12));
  /* x - (x//4)*4 == x % 4 */
  CHECK(S(alu_binary(ALU_SUB, x, mul(idiv(x, k4), k4))) == imod(x, k4));
  /* ((x//6) % 4) for x < 24 is x//6; for x < 48 it stays a mod */
  CHECK(S(imod(idiv(x, k6), k4)) == idiv(x, k6));
  const AluExp *x48 = alu_special("gidx", 48);
  CHECK(S(imod(idiv(x48, k6), k4)) == imod(idiv(x48, k6), k4));
  CHECK(agrees(imod(idiv(x48, k6), k4), 48));
  /* (x*3 + 1) // 3 == x; (x*3 + 1) % 3 == 1 */
  CHECK(S(idiv(add(mul(x, k3), ci(1)), k3)) == x);
  CHECK(S(imod(add(mul(x, k3), ci(1)), k3)) == ci(1));
  /* ((x*6 + y*2 + z) // 6) % 4 with y < 3, z < 2 */
  const AluExp *y = alu_special("y", 3), *z = alu_special("z", 2), *w = alu_special("w", 10);
  const AluExp *flat = add(add(mul(w, k6), mul(y, ci(2))), z);
  CHECK(S(imod(idiv(flat, k6), k4)) == imod(w, k4));
  if (!CHECK_RET(S(imod(flat, k6)) == add(mul(y, ci(2)), z))) {
    char *p = alu_print(S(imod(flat, k6)));
    fprintf(stderr, "%s", p);
    free(p);
  }
  CHECK(S(idiv(imod(flat, k6), ci(2))) == y);
  /* basic identities */
  CHECK(S(idiv(x, ci(1))) == x && S(imod(x, ci(1))) == ci(0));
  CHECK(S(imod(x, ci(24))) == x && S(imod(x, ci(100))) == x);
  CHECK(S(idiv(x, ci(24))) == ci(0));
  CHECK(S(idiv(idiv(x, k4), k3)) == idiv(x, k12));
  CHECK(S(imod(imod(x, k12), k4)) == imod(x, k4));
  CHECK(S(imod(x48, ci(-5))) == imod(x48, ci(5)));
  /* negative values: rules must respect truncation */
  const AluExp *neg = alu_binary(ALU_SUB, x, ci(5)); /* [-5, 18] */
  CHECK(agrees(idiv(neg, ci(2)), 24));
  CHECK(agrees(imod(neg, ci(4)), 24));
  CHECK(agrees(idiv(add(mul(neg, k4), ci(3)), k4), 24));
  CHECK(S(idiv(add(mul(neg, k4), ci(3)), k4)) != neg); /* x = -1: (-4+3)/4 = 0 */
  const AluExp *nonpos = alu_binary(ALU_SUB, ci(-1), x); /* [-24, -1] */
  CHECK(S(idiv(add(mul(nonpos, k4), ci(-3)), k4)) == S(nonpos));
  CHECK(S(idiv(add(mul(nonpos, k4), ci(3)), k4)) == S(add(nonpos, ci(1))));
  /* gcd: (x*4 + 8) // 6 == (x*2 + 4) // 3 */
  CHECK(S(idiv(add(mul(x, k4), ci(8)), k6)) == S(idiv(add(mul(x, ci(2)), ci(4)), k3)));
  /* comparisons */
  CHECK(S(alu_binary(ALU_CMPLT, add(x, ci(10)), ci(5))) == alu_const_int(JX_BOOL, 0));
  CHECK(S(alu_binary(ALU_CMPLT, add(x48, ci(-3)), ci(5))) ==
        alu_binary(ALU_CMPLT, x48, ci(8)));
  CHECK(S(alu_binary(ALU_CMPLT, mul(x48, k4), ci(10))) == alu_binary(ALU_CMPLT, x48, k3));
  CHECK(S(alu_binary(ALU_CMPEQ, mul(x48, k4), ci(10))) == alu_const_int(JX_BOOL, 0));
  CHECK(S(alu_binary(ALU_MIN, x, ci(30))) == x && S(alu_binary(ALU_MAX, x, ci(-1))) == x);
  /* a padded view's validity mask folds when the index is in range */
  const AluExp *valid = alu_binary(ALU_AND, alu_unary(ALU_NOT, alu_binary(ALU_CMPLT, x, ci(0))),
                                   alu_binary(ALU_CMPLT, x, ci(24)));
  CHECK(S(valid) == alu_const_int(JX_BOOL, 1));
  /* floats are left alone: never x*0 -> 0 */
  const AluExp *f = alu_global(0, JX_FLOAT32, x);
  const AluExp *fz = mul(f, alu_const_float(JX_FLOAT32, 0.0));
  CHECK(S(fz) == fz);
  /* substitute */
  const AluExp *e = add(mul(idiv(x, k4), k4), imod(x, k4));
  CHECK(alu_substitute(e, "gidx", ci(13)) == ci(13));
  CHECK(alu_substitute(e, "nope", ci(13)) == e);
  const AluExp *acc = alu_variable("acc", JX_FLOAT32);
  CHECK(alu_substitute(add(acc, f), "acc", f) == add(f, f));
}

/* ------------------------------------------------------- printer, checker */

static void test_print(void) {
  const AluExp *x = alu_special("gidx", 24);
  const AluExp *idx = imod(idiv(x, ci(4)), ci(3));
  const AluExp *ld = alu_global(0, JX_FLOAT32, idx);
  const AluExp *e = add(mul(ld, ld), alu_const_float(JX_FLOAT32, 1.0));
  char *s = alu_print(e);
  CHECK_STR(s, "%0 = DIV i64 @gidx<24> 4\n"
               "%1 = MOD i64 %0 3\n"
               "%2 = GLOBAL_INDEX f32 #0 %1\n"
               "%3 = MUL f32 %2 %2\n"
               "%4 = ADD f32 %3 1.0\n"
               "return %4\n");
  free(s);
  s = alu_print(alu_const_float(JX_FLOAT32, 0.1));
  CHECK_STR(s, "return 0.1\n");
  free(s);
  s = alu_print(alu_const_float(JX_FLOAT64, -0.0));
  CHECK_STR(s, "return -0.0\n");
  free(s);
  s = alu_print(alu_binary(ALU_CMPLT, alu_global(1, JX_UINT8, x), alu_const_int(JX_UINT8, 200)));
  CHECK_STR(s, "%0 = GLOBAL_INDEX u8 #1 @gidx<24>\n%1 = CMPLT bool %0 200\nreturn %1\n");
  free(s);

  Kernel k = {.nargs = 1, .arg_dtypes = {JX_FLOAT32}, .size = 4, .dtype = JX_FLOAT32};
  const AluExp *g = alu_special("gidx", 4), *r = alu_special("ridx", 6);
  k.exp = alu_global(0, JX_FLOAT32, add(mul(g, ci(6)), r));
  k.has_reduction = true;
  k.reduction = (Reduction){ALU_ADD, JX_FLOAT32, VF(0.0), 6,
                            mul(alu_variable("acc", JX_FLOAT32),
                                alu_const_float(JX_FLOAT32, 1.0 / 6))};
  CHECK(kernel_check(&k) == JX_OK);
  s = kernel_print(&k);
  CHECK_STR(s, "kernel size=4 dtype=f32 args=(f32)\n"
               "  %0 = MUL i64 @gidx<4> 6\n"
               "  %1 = ADD i64 %0 @ridx<6>\n"
               "  %2 = GLOBAL_INDEX f32 #0 %1\n"
               "  return %2\n"
               "reduce ADD f32 identity=0.0 size=6\n"
               "epilogue\n"
               "  %0 = MUL f32 $acc:f32 0.16666667\n"
               "  return %0\n");
  free(s);
}

static void test_check(void) {
  const AluExp *x = alu_special("gidx", 8);
  jx_dtype types[2] = {JX_FLOAT32, JX_INT32};
  const AluExp *ok = add(alu_global(0, JX_FLOAT32, x), alu_cast(alu_global(1, JX_INT32, x),
                                                                  JX_FLOAT32));
  CHECK(alu_check(ok, 2, types) == JX_OK);
  CHECK(alu_check(ok, 1, types) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "input #1 but the kernel has 1 inputs");
  jx_dtype wrong[2] = {JX_FLOAT32, JX_INT64};
  CHECK(alu_check(ok, 2, wrong) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "loads input #1 as i32 but it is i64");
  /* ill-typed nodes are built as given (unrewritten) and reported */
  const AluExp *s[3] = {alu_const_int(JX_INT32, 0), ci(1)};
  const AluExp *bad = alu_make(ALU_ADD, JX_INT32, 2, s, VI(0), 0, NULL);
  CHECK(bad && bad->op == ALU_ADD);
  CHECK(alu_check(add(bad, bad), 0, NULL) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "%0 = ADD i32: sources have dtypes i32 and i64, expected equal");
  const AluExp *fsrc = alu_const_float(JX_FLOAT32, 2);
  CHECK(alu_check(alu_make(ALU_SHL, JX_FLOAT32, 2, (const AluExp *[]){fsrc, fsrc}, VI(0), 0,
                           NULL), 0, NULL) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "dtype f32 not accepted");
  CHECK(alu_check(alu_make(ALU_SIN, JX_INT32, 1, s, VI(0), 0, NULL), 0, NULL) ==
        JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "SIN");
  CHECK(alu_check(alu_make(ALU_WHERE, JX_INT32, 3, (const AluExp *[]){s[0], s[0], s[0]}, VI(0),
                           0, NULL), 0, NULL) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "condition dtype i32, expected bool");
  CHECK(alu_check(alu_make(ALU_NEG, JX_FLOAT32, 2, s, VI(0), 0, NULL), 0, NULL) ==
        JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "2 sources, expected 1");
  CHECK(alu_check(alu_global(0, JX_FLOAT32, alu_const_int(JX_INT32, 0)), 1, NULL) ==
        JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "index dtype i32, expected i64");
  CHECK(alu_check(alu_make(ALU_CONST, JX_BOOL, 0, NULL, VI(1), 0, NULL), 0, NULL) == JX_OK);

  /* kernels: loop ranges, bound variables */
  Kernel k = {.nargs = 2, .arg_dtypes = {JX_FLOAT32, JX_INT32}, .size = 8, .dtype = JX_FLOAT32};
  k.exp = ok;
  CHECK(kernel_check(&k) == JX_OK);
  k.size = 9;
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "loop index gidx has range 8, expected 9");
  k.size = 8;
  k.dtype = JX_FLOAT64;
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "exp has dtype f32, expected f64");
  k.dtype = JX_FLOAT32;
  k.exp = add(ok, alu_cast(alu_special("ridx", 3), JX_FLOAT32));
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "loop index ridx, which is not bound");
  k.has_reduction = true;
  k.reduction = (Reduction){ALU_MAX, JX_FLOAT32, VF(-INFINITY), 3, NULL};
  CHECK(kernel_check(&k) == JX_OK);
  k.reduction.size = 4;
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "ridx has range 3, expected 4");
  k.reduction.size = 3;
  k.reduction.epilogue = alu_cast(alu_variable("acc", JX_FLOAT64), JX_FLOAT32);
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "epilogue reads acc as f64");
  k.reduction.epilogue = alu_variable("acc", JX_FLOAT32);
  CHECK(kernel_check(&k) == JX_OK);
  k.reduction.epilogue = add(alu_variable("acc", JX_FLOAT32), alu_cast(alu_special("ridx", 3),
                                                                       JX_FLOAT32));
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "epilogue uses loop index ridx");
  k.reduction.epilogue = NULL;
  k.reduction.op = ALU_AND;
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "reduction AND over f32");
  k.reduction.op = ALU_SUB;
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "reduction op SUB");
  k.reduction.op = ALU_MAX;
  k.exp = add(ok, alu_variable("acc", JX_FLOAT32));
  CHECK(kernel_check(&k) == JX_ERR_INTERNAL);
  CHECK_ERROR(JX_ERR_INTERNAL, "exp uses unbound variable acc");
}

/* ------------------------------------------------------------ concurrency */

#define NTHREADS 8
#define NEXPRS 32
static const AluExp *thread_out[NTHREADS][NEXPRS];

static void *build_many(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int i = 0; i < NEXPRS; i++) {
    char name[16];
    snprintf(name, sizeof name, "v%d", i % 7);
    const AluExp *v = alu_special(name, 100 + i);
    const AluExp *e = v;
    for (int j = 0; j < 20; j++) e = add(mul(e, ci(j + 2)), alu_binary(ALU_MIN, v, ci(j)));
    thread_out[t][i] = alu_simplify(e);
  }
  return NULL;
}

static void test_threads(void) {
  pthread_t th[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) pthread_create(&th[t], NULL, build_many, (void *)(intptr_t)t);
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  for (int t = 1; t < NTHREADS; t++)
    for (int i = 0; i < NEXPRS; i++)
      CHECK(thread_out[t][i] && thread_out[t][i] == thread_out[0][i]);
}

int main(void) {
  TEST_RUN(test_hash_consing);
  TEST_RUN(test_folding);
  TEST_RUN(test_op_semantics);
  TEST_RUN(test_threefry);
  TEST_RUN(test_fma);
  TEST_RUN(test_load_store);
  TEST_RUN(test_simplify_views);
  TEST_RUN(test_simplify_random);
  TEST_RUN(test_simplify_flattened_pairs);
  TEST_RUN(test_float_rewrites_random);
  TEST_RUN(test_print);
  TEST_RUN(test_check);
  TEST_RUN(test_threads);
  return test_finish();
}
