/* test_elementwise.c -- jax.numpy elementwise functions against JAX goldens
 * (tests/golden/elementwise.txt, from tools/golden_elementwise.py): values, dtypes and
 * weak types of every case, then bad inputs (NULL, shapes, dtypes) and lifetimes.
 *
 * Tolerances, in ulps of the result dtype (|got - want| <= ulps * eps * |want| + atol).
 * EXACT: 0 ulps, bit for bit with the sign of zero: results of IEEE-exact operations
 *   (+ - * sqrt, comparisons, rounding, integer and bitwise ops, conversions).
 * NEAR: 1 ulp: formulas with a float division. XLA rewrites x / broadcast(y) into
 *   x * (1 / y) (one extra rounding), and may keep float32 precision between the
 *   steps of a float16/bfloat16 chain.
 * APPROX: 4 ulps for float32, 2 for float16/bfloat16 (computed in float32, rounded
 *   once): transcendental functions, whose XLA implementations are not correctly
 *   rounded. WIDE: 32 ulps (float32) for XLA's sinh, cosh, exp2 and pow, which lose
 *   several ulps for large arguments. APPROX and WIDE also accept an absolute error of
 *   two units of the smallest normal (float16: of the smallest subnormal), because XLA
 *   flushes subnormal intermediates to zero (arcsin(2e-38) comes out 0). */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

typedef jx_array *(*Unary)(jx_array *);
typedef jx_array *(*Binary)(jx_array *, jx_array *);

/* Accuracy class of a function (see the tolerances above). */
typedef enum Acc { EXACT, NEAR, APPROX, WIDE } Acc;

typedef struct UnaryOp {
  const char *name;
  Unary fn;
  Acc acc;
} UnaryOp;

typedef struct BinaryOp {
  const char *name;
  Binary fn;
  Acc acc;
} BinaryOp;

static const UnaryOp unary_ops[] = {
    {"negative", jx_negative, EXACT},     {"positive", jx_positive, EXACT},
    {"abs", jx_abs, EXACT},               {"absolute", jx_absolute, EXACT},
    {"sign", jx_sign, EXACT},             {"exp", jx_exp, APPROX},
    {"exp2", jx_exp2, WIDE},            {"expm1", jx_expm1, APPROX},
    {"log", jx_log, APPROX},              {"log2", jx_log2, APPROX},
    {"log10", jx_log10, APPROX},          {"log1p", jx_log1p, APPROX},
    {"sqrt", jx_sqrt, EXACT},             {"rsqrt", jx_rsqrt, APPROX},
    {"cbrt", jx_cbrt, APPROX},            {"square", jx_square, EXACT},
    {"reciprocal", jx_reciprocal, EXACT}, {"sin", jx_sin, APPROX},
    {"cos", jx_cos, APPROX},              {"tan", jx_tan, APPROX},
    {"arcsin", jx_arcsin, APPROX},        {"arccos", jx_arccos, APPROX},
    {"arctan", jx_arctan, APPROX},        {"sinh", jx_sinh, WIDE},
    {"cosh", jx_cosh, WIDE},            {"tanh", jx_tanh, APPROX},
    {"arcsinh", jx_arcsinh, APPROX},      {"arccosh", jx_arccosh, APPROX},
    {"arctanh", jx_arctanh, APPROX},      {"floor", jx_floor, EXACT},
    {"ceil", jx_ceil, EXACT},             {"trunc", jx_trunc, EXACT},
    {"round", jx_round, EXACT},           {"rint", jx_rint, EXACT},
    {"isnan", jx_isnan, EXACT},           {"isinf", jx_isinf, EXACT},
    {"isfinite", jx_isfinite, EXACT},     {"signbit", jx_signbit, EXACT},
    {"deg2rad", jx_deg2rad, EXACT},       {"rad2deg", jx_rad2deg, EXACT},
    {"logical_not", jx_logical_not, EXACT}, {"bitwise_not", jx_bitwise_not, EXACT},
    {"invert", jx_invert, EXACT},
};

static const BinaryOp binary_ops[] = {
    {"add", jx_add, EXACT},
    {"subtract", jx_subtract, EXACT},
    {"multiply", jx_multiply, EXACT},
    {"divide", jx_divide, NEAR},
    {"true_divide", jx_true_divide, NEAR},
    {"floor_divide", jx_floor_divide, NEAR},
    {"remainder", jx_remainder, NEAR},
    {"mod", jx_mod, NEAR},
    {"fmod", jx_fmod, EXACT},
    {"power", jx_power, WIDE},
    {"maximum", jx_maximum, EXACT},
    {"minimum", jx_minimum, EXACT},
    {"fmax", jx_fmax, EXACT},
    {"fmin", jx_fmin, EXACT},
    {"arctan2", jx_arctan2, APPROX},
    {"hypot", jx_hypot, NEAR},
    {"logaddexp", jx_logaddexp, APPROX},
    {"copysign", jx_copysign, EXACT},
    {"equal", jx_equal, EXACT},
    {"not_equal", jx_not_equal, EXACT},
    {"less", jx_less, EXACT},
    {"less_equal", jx_less_equal, EXACT},
    {"greater", jx_greater, EXACT},
    {"greater_equal", jx_greater_equal, EXACT},
    {"logical_and", jx_logical_and, EXACT},
    {"logical_or", jx_logical_or, EXACT},
    {"logical_xor", jx_logical_xor, EXACT},
    {"bitwise_and", jx_bitwise_and, EXACT},
    {"bitwise_or", jx_bitwise_or, EXACT},
    {"bitwise_xor", jx_bitwise_xor, EXACT},
    {"left_shift", jx_left_shift, EXACT},
    {"right_shift", jx_right_shift, EXACT},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const UnaryOp *find_unary(const char *name) {
  for (int i = 0; i < COUNT(unary_ops); i++)
    if (strcmp(unary_ops[i].name, name) == 0) return &unary_ops[i];
  return NULL;
}

static const BinaryOp *find_binary(const char *name) {
  for (int i = 0; i < COUNT(binary_ops); i++)
    if (strcmp(binary_ops[i].name, name) == 0) return &binary_ops[i];
  return NULL;
}

static double eps_of(jx_dtype d) {
  switch (d) {
  case JX_FLOAT16: return 0x1p-10;
  case JX_BFLOAT16: return 0x1p-7;
  case JX_FLOAT64: return 0x1p-52;
  default: return 0x1p-23;
  }
}

static void tolerance(Acc acc, jx_dtype d, double *rtol, double *atol) {
  bool half = d == JX_FLOAT16 || d == JX_BFLOAT16;
  static const double ulps32[] = {[EXACT] = 0, [NEAR] = 1, [APPROX] = 4, [WIDE] = 32};
  static const double ulps16[] = {[EXACT] = 0, [NEAR] = 1, [APPROX] = 2, [WIDE] = 2};
  *rtol = (half ? ulps16 : ulps32)[acc] * eps_of(d);
  double tiny = d == JX_FLOAT16 ? 0x1p-24 : d == JX_FLOAT64 ? 0x1p-1022 : 0x1p-126;
  *atol = acc >= APPROX ? 2 * tiny : 0;
}

static jx_dtype parse_param_dtype(const GoldenCase *c) {
  jx_dtype d = JX_NUM_DTYPES;
  bool weak;
  const char *s = golden_param(c, "dtype");
  if (!s || !golden_parse_dtype(s, &d, &weak)) return JX_NUM_DTYPES;
  return d;
}

/* ------------------------------------------------------------ golden cases */

static const GoldenCase *g_case;
static int g_counts[2]; /* cases run, cases with an expected error */

/* Calls the function of case c on its inputs. *acc gets its accuracy class. */
static jx_array *call_case(const GoldenCase *c, jx_array **in, Acc *acc, bool *known) {
  const UnaryOp *u = find_unary(c->fn);
  const BinaryOp *b = find_binary(c->fn);
  *known = true;
  *acc = EXACT;
  if (u && c->nin == 1) {
    *acc = u->acc;
    return u->fn(in[0]);
  }
  if (b && c->nin == 2) {
    *acc = b->acc;
    return b->fn(in[0], in[1]);
  }
  if (strcmp(c->fn, "where") == 0 && c->nin == 3) return jx_where(in[0], in[1], in[2]);
  if (strcmp(c->fn, "clip") == 0) {
    bool lo = !golden_param_int(c, "nolo", 0), hi = !golden_param_int(c, "nohi", 0);
    if (c->nin == 1 + lo + hi)
      return jx_clip(in[0], lo ? in[1] : NULL, hi ? in[1 + lo] : NULL);
  }
  if (strcmp(c->fn, "astype") == 0 && c->nin == 1)
    return jx_astype(in[0], parse_param_dtype(c));
  if (strcmp(c->fn, "bitcast") == 0 && c->nin == 1)
    return jx_bitcast(in[0], parse_param_dtype(c));
  *known = false;
  return NULL;
}

static void run_golden_case(void) {
  const GoldenCase *c = g_case;
  jx_array *in[8] = {0};
  CHECK(c->nin <= 8);
  for (int i = 0; i < c->nin && i < 8; i++) {
    in[i] = golden_to_array(&c->in[i]);
    CHECK_MSG(in[i], "%s: input %d: %s", c->name, i, jx_last_error());
  }
  Acc acc;
  bool known;
  jx_array *out = call_case(c, in, &acc, &known);
  CHECK_MSG(known, "%s (line %d): no jaxc function for '%s' with %d inputs", c->name,
            c->line, c->fn, c->nin);
  g_counts[0]++;
  if (!known) {
  } else if (c->err != JX_OK) {
    g_counts[1]++;
    CHECK_MSG(!out, "%s: expected %s, got an array", c->name, jx_status_name(c->err));
    CHECK_MSG(jx_last_status() == c->err, "%s: expected %s, got %s (%s)", c->name,
              jx_status_name(c->err), jx_status_name(jx_last_status()), jx_last_error());
    jx_clear_error();
  } else {
    double rtol, atol;
    tolerance(acc, c->out[0].dtype, &rtol, &atol);
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    golden_compare(ctx, out, &c->out[0], rtol, atol);
    jx_clear_error();
  }
  jx_free(out);
  for (int i = 0; i < c->nin && i < 8; i++) jx_free(in[i]);
}

/* ------------------------------------------------------------- bad inputs */

static jx_array *f32(int ndim, const int64_t *shape) {
  return jx_full(ndim, shape, 1.5, JX_FLOAT32);
}

/* NULL in: NULL out, JX_ERR_VALUE when nothing failed before, else the first error. */
static void test_null_arguments(void) {
  jx_array *x = f32(1, (int64_t[]){3});
  for (int i = 0; i < COUNT(binary_ops); i++) {
    CHECK(binary_ops[i].fn(NULL, x) == NULL);
    CHECK_ERROR(JX_ERR_VALUE, "NULL");
    CHECK(binary_ops[i].fn(x, NULL) == NULL);
    CHECK_ERROR(JX_ERR_VALUE, NULL);
  }
  for (int i = 0; i < COUNT(unary_ops); i++) {
    CHECK(unary_ops[i].fn(NULL) == NULL);
    CHECK_ERROR(JX_ERR_VALUE, NULL);
  }
  CHECK(jx_where(x, NULL, x) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_where");
  CHECK(jx_clip(NULL, x, x) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_clip");
  CHECK(jx_astype(NULL, JX_INT8) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_astype");
  CHECK(jx_bitcast(NULL, JX_INT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_bitcast");
  jx_free(x);
}

/* A failed call in a chain: every later op returns NULL and the first error stays. */
static void test_chain_keeps_first_error(void) {
  jx_array *a = f32(2, (int64_t[]){2, 3}), *b = f32(1, (int64_t[]){4});
  jx_scope_begin();
  jx_array *r = jx_exp(jx_multiply(jx_add(a, b), a));
  r = jx_where(jx_less(r, a), r, jx_sqrt(r));
  CHECK(r == NULL);
  jx_scope_end(0, NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_add: shapes (2,3) and (4,) do not broadcast");
  jx_free(a);
  jx_free(b);
}

static void test_shapes_do_not_broadcast(void) {
  jx_array *a = f32(2, (int64_t[]){2, 3}), *b = f32(1, (int64_t[]){4});
  for (int i = 0; i < COUNT(binary_ops); i++) {
    jx_array *x = a, *y = b;
    jx_array *ia = NULL, *ib = NULL;
    if (strstr(binary_ops[i].name, "bitwise") || strstr(binary_ops[i].name, "shift")) {
      x = ia = jx_astype(a, JX_INT32); /* shape errors come first anyway */
      y = ib = jx_astype(b, JX_INT32);
    }
    CHECK(binary_ops[i].fn(x, y) == NULL);
    char needle[96];
    snprintf(needle, sizeof needle, "jx_%s: shapes (2,3) and (4,) do not broadcast",
             binary_ops[i].name);
    CHECK_ERROR(JX_ERR_SHAPE, needle);
    jx_free(ia);
    jx_free(ib);
  }
  jx_array *c = f32(2, (int64_t[]){3, 1});
  CHECK(jx_where(c, a, b) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_where: shapes (3,1), (2,3) and (4,) do not broadcast");
  CHECK(jx_clip(a, b, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_clip: shapes (4,) and (2,3) do not broadcast");
  /* (2,0) against (3,): 0 does not broadcast against 3. */
  jx_array *e = f32(2, (int64_t[]){2, 0}), *t = f32(1, (int64_t[]){3});
  CHECK(jx_add(e, t) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_add: shapes (2,0) and (3,) do not broadcast");
  jx_free(a);
  jx_free(b);
  jx_free(c);
  jx_free(e);
  jx_free(t);
}

static void test_bad_dtypes(void) {
  jx_array *x = f32(1, (int64_t[]){3});
  jx_array *i = jx_full(1, (int64_t[]){3}, 2, JX_INT32);
  jx_array *bo = jx_full(1, (int64_t[]){3}, 1, JX_BOOL);
  Binary bitwise[] = {jx_bitwise_and, jx_bitwise_or, jx_bitwise_xor};
  const char *names[] = {"jx_bitwise_and", "jx_bitwise_or", "jx_bitwise_xor"};
  for (int k = 0; k < 3; k++) {
    char needle[96];
    snprintf(needle, sizeof needle, "%s: dtype float32", names[k]);
    CHECK(bitwise[k](x, i) == NULL);
    CHECK_ERROR(JX_ERR_DTYPE, needle);
    jx_array *ok = bitwise[k](i, bo); /* bool and int mix: int32 */
    CHECK(ok && jx_dtype_of(ok) == JX_INT32);
    jx_free(ok);
  }
  CHECK(jx_left_shift(i, x) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_left_shift: dtype float32");
  CHECK(jx_right_shift(x, i) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_right_shift: dtype float32");
  CHECK(jx_bitwise_not(x) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_bitwise_not: dtype float32");
  CHECK(jx_invert(x) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_invert: dtype float32");
  CHECK(jx_subtract(bo, bo) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_subtract: dtype bool");
  CHECK(jx_negative(bo) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_negative: dtype bool");
  jx_array *m1 = jx_scalar_int(-1);
  CHECK(jx_power(i, m1) == NULL);
  jx_free(m1);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_power: integers cannot be raised to negative powers");
  CHECK(jx_astype(x, (jx_dtype)99) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_astype: invalid dtype");
  CHECK(jx_bitcast(x, JX_INT8) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_bitcast: cannot bitcast float32 to int8");
  CHECK(jx_bitcast(bo, JX_INT8) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_bitcast: cannot bitcast bool to int8");
  jx_free(x);
  jx_free(i);
  jx_free(bo);
}

/* Empty operands through a chain of ops, with broadcasting against (1,) and (). */
static void test_zero_size(void) {
  jx_array *e = f32(2, (int64_t[]){2, 0});
  jx_array *one = f32(1, (int64_t[]){1});
  jx_scope_begin();
  jx_array *s = jx_scalar(2.0);
  jx_array *r = jx_where(jx_less(e, s), jx_hypot(e, one), jx_floor_divide(s, e));
  r = jx_clip(jx_astype(r, JX_BFLOAT16), one, NULL);
  CHECK(r && jx_ndim(r) == 2 && jx_shape(r)[0] == 2 && jx_shape(r)[1] == 0);
  CHECK(r && jx_dtype_of(r) == JX_FLOAT32 && jx_size(r) == 0);
  float dummy;
  CHECK(jx_read(r, &dummy, 0) == JX_OK);
  jx_scope_end(0, NULL);
  jx_free(e);
  jx_free(one);
}

/* Results that just return (a new reference to) their input still own a reference. */
static void test_identity_results(void) {
  jx_array *u = jx_full(1, (int64_t[]){2}, 3, JX_UINT8);
  jx_array *r[6] = {jx_abs(u), jx_positive(u), jx_floor(u), jx_round(u),
                    jx_clip(u, NULL, NULL), jx_astype(u, JX_UINT8)};
  for (int k = 0; k < 6; k++) {
    CHECK(r[k] != NULL);
    jx_free(r[k]);
  }
  uint8_t v[2];
  CHECK(jx_read(u, v, 2) == JX_OK && v[0] == 3 && v[1] == 3);
  jx_free(u);
}

/* Weak scalars: results follow JAX (weak iff all operands are). */
static void test_weak_types(void) {
  jx_scope_begin();
  jx_array *w = jx_scalar(2.0), *wi = jx_scalar_int(3);
  jx_array *h = jx_full(1, (int64_t[]){2}, 1, JX_FLOAT16);
  jx_array *i8 = jx_full(1, (int64_t[]){2}, 1, JX_INT8);
  CHECK(jx_is_weak(jx_add(w, wi)) && jx_dtype_of(jx_add(w, wi)) == JX_FLOAT32);
  CHECK(!jx_is_weak(jx_add(w, h)) && jx_dtype_of(jx_add(w, h)) == JX_FLOAT16);
  CHECK(jx_dtype_of(jx_multiply(i8, wi)) == JX_INT8);
  CHECK(jx_dtype_of(jx_divide(i8, wi)) == JX_FLOAT32);
  CHECK(jx_is_weak(jx_exp(wi)) && jx_dtype_of(jx_exp(wi)) == JX_FLOAT32);
  CHECK(!jx_is_weak(jx_astype(w, JX_FLOAT32)));
  CHECK(jx_is_weak(jx_where(jx_less(h, w), w, wi)));
  jx_scope_end(0, NULL);
}

int main(void) {
  int n = 0;
  GoldenCase *cases = golden_load("elementwise.txt", &n);
  CHECK_MSG(cases != NULL, "cannot load elementwise.txt");
  for (int i = 0; i < n; i++) {
    g_case = &cases[i];
    test_run(cases[i].name, run_golden_case);
  }
  printf("golden: %d cases (%d expecting errors)\n", g_counts[0], g_counts[1]);
  golden_free(cases, n);
  TEST_RUN(test_null_arguments);
  TEST_RUN(test_chain_keeps_first_error);
  TEST_RUN(test_shapes_do_not_broadcast);
  TEST_RUN(test_bad_dtypes);
  TEST_RUN(test_zero_size);
  TEST_RUN(test_identity_results);
  TEST_RUN(test_weak_types);
  return test_finish();
}
