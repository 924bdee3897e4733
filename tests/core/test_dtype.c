/* test_dtype.c -- dtype properties, the x64 switch, promotion against JAX goldens
 * (tests/golden/promotion.txt, written by tools/golden_promotion.py) and the
 * float16/bfloat16 conversions (exhaustive round trips, nearest-even checks). */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "test.h"

/* Runs first, before anything can read the switch: the env var sets the initial mode,
 * and jx_config_enable_x64 overrides it either way. */
static void test_x64_env_and_override(void) {
  CHECK(jx_config_x64_enabled());
  CHECK(dtype_x64());
  jx_config_enable_x64(false);
  CHECK(!jx_config_x64_enabled());
  jx_config_enable_x64(true);
  CHECK(jx_config_x64_enabled());
  jx_config_enable_x64(false);
}

static void test_names_and_sizes(void) {
  static const struct {
    jx_dtype d;
    const char *name, *short_name;
    size_t size;
  } cases[] = {
    {JX_BOOL, "bool", "bool", 1},       {JX_INT8, "int8", "i8", 1},
    {JX_UINT8, "uint8", "u8", 1},       {JX_INT16, "int16", "i16", 2},
    {JX_UINT16, "uint16", "u16", 2},    {JX_INT32, "int32", "i32", 4},
    {JX_UINT32, "uint32", "u32", 4},    {JX_INT64, "int64", "i64", 8},
    {JX_UINT64, "uint64", "u64", 8},    {JX_FLOAT16, "float16", "f16", 2},
    {JX_BFLOAT16, "bfloat16", "bf16", 2}, {JX_FLOAT32, "float32", "f32", 4},
    {JX_FLOAT64, "float64", "f64", 8},  {JX_COMPLEX64, "complex64", "c64", 8},
    {JX_COMPLEX128, "complex128", "c128", 16},
  };
  CHECK_EQ_INT(sizeof cases / sizeof cases[0], JX_NUM_DTYPES);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_STR(jx_dtype_name(cases[i].d), cases[i].name);
    CHECK_STR(dtype_short_name(cases[i].d), cases[i].short_name);
    CHECK_EQ_INT(jx_dtype_itemsize(cases[i].d), cases[i].size);
    CHECK_EQ_INT(dtype_bits(cases[i].d), 8 * cases[i].size);
    CHECK(dtype_is_valid(cases[i].d));
  }
  CHECK(jx_dtype_name(JX_NUM_DTYPES) == NULL);
  CHECK(jx_dtype_name((jx_dtype)-1) == NULL);
  CHECK_EQ_INT(jx_dtype_itemsize(JX_NUM_DTYPES), 0);
  CHECK(!dtype_is_valid(JX_NUM_DTYPES));
  CHECK(!dtype_is_valid((jx_dtype)-1));
}

static void test_classification(void) {
  CHECK(dtype_is_bool(JX_BOOL) && !dtype_is_integer(JX_BOOL) && !dtype_is_floating(JX_BOOL));
  CHECK(!dtype_is_signed(JX_BOOL) && !dtype_is_unsigned(JX_BOOL));
  for (jx_dtype d = JX_INT8; d <= JX_UINT64; d++) {
    CHECK(dtype_is_integer(d) && !dtype_is_floating(d) && !dtype_is_bool(d));
    bool is_u = d == JX_UINT8 || d == JX_UINT16 || d == JX_UINT32 || d == JX_UINT64;
    CHECK_EQ_INT(dtype_is_unsigned(d), is_u);
    CHECK_EQ_INT(dtype_is_signed(d), !is_u);
  }
  for (jx_dtype d = JX_FLOAT16; d <= JX_FLOAT64; d++)
    CHECK(dtype_is_floating(d) && dtype_is_signed(d) && !dtype_is_integer(d) &&
          dtype_is_inexact(d) && !dtype_is_complex(d));
  /* complex is inexact but not floating (no order): code paths for real floats never
   * take it silently */
  for (jx_dtype d = JX_COMPLEX64; d <= JX_COMPLEX128; d++)
    CHECK(dtype_is_complex(d) && dtype_is_inexact(d) && !dtype_is_floating(d) &&
          !dtype_is_integer(d));
  CHECK_EQ_INT(dtype_real_part(JX_COMPLEX64), JX_FLOAT32);
  CHECK_EQ_INT(dtype_real_part(JX_COMPLEX128), JX_FLOAT64);
  CHECK_EQ_INT(dtype_real_part(JX_FLOAT16), JX_FLOAT16);
  CHECK_EQ_INT(dtype_to_complex(JX_FLOAT64), JX_COMPLEX128);
  CHECK_EQ_INT(dtype_to_complex(JX_FLOAT32), JX_COMPLEX64);
}

static void test_canonicalize(void) {
  jx_config_enable_x64(false);
  CHECK_EQ_INT(dtype_canonicalize(JX_INT64), JX_INT32);
  CHECK_EQ_INT(dtype_canonicalize(JX_UINT64), JX_UINT32);
  CHECK_EQ_INT(dtype_canonicalize(JX_FLOAT64), JX_FLOAT32);
  CHECK_EQ_INT(dtype_canonicalize(JX_COMPLEX128), JX_COMPLEX64);
  for (jx_dtype d = JX_BOOL; d < JX_NUM_DTYPES; d++)
    if (d != JX_INT64 && d != JX_UINT64 && d != JX_FLOAT64 && d != JX_COMPLEX128)
      CHECK_EQ_INT(dtype_canonicalize(d), d);
  CHECK_EQ_INT(dtype_default_int(), JX_INT32);
  CHECK_EQ_INT(dtype_default_uint(), JX_UINT32);
  CHECK_EQ_INT(dtype_default_float(), JX_FLOAT32);
  jx_config_enable_x64(true);
  for (jx_dtype d = JX_BOOL; d < JX_NUM_DTYPES; d++) CHECK_EQ_INT(dtype_canonicalize(d), d);
  CHECK_EQ_INT(dtype_default_int(), JX_INT64);
  CHECK_EQ_INT(dtype_default_uint(), JX_UINT64);
  CHECK_EQ_INT(dtype_default_float(), JX_FLOAT64);
  jx_config_enable_x64(false);
}

static void test_min_max(void) {
  CHECK(dtype_min_value(JX_BOOL) == 0 && dtype_max_value(JX_BOOL) == 1);
  CHECK(dtype_min_value(JX_INT8) == -128 && dtype_max_value(JX_INT8) == 127);
  CHECK(dtype_min_value(JX_UINT8) == 0 && dtype_max_value(JX_UINT8) == 255);
  CHECK(dtype_min_value(JX_INT16) == -32768 && dtype_max_value(JX_UINT16) == 65535);
  CHECK(dtype_min_value(JX_INT32) == -2147483648.0 && dtype_max_value(JX_INT32) == 2147483647.0);
  CHECK(dtype_max_value(JX_UINT32) == 4294967295.0);
  CHECK(dtype_min_value(JX_INT64) == -9223372036854775808.0);
  CHECK(dtype_max_value(JX_INT64) == 9223372036854775808.0);  /* 2^63 - 1 rounds up */
  CHECK(dtype_max_value(JX_UINT64) == 18446744073709551616.0); /* 2^64 - 1 rounds up */
  CHECK(dtype_max_value(JX_FLOAT16) == 65504.0 && dtype_min_value(JX_FLOAT16) == -65504.0);
  CHECK(dtype_max_value(JX_BFLOAT16) == 3.3895313892515355e38);
  CHECK(dtype_min_value(JX_BFLOAT16) == -3.3895313892515355e38);
  CHECK(dtype_max_value(JX_FLOAT32) == FLT_MAX && dtype_min_value(JX_FLOAT32) == -FLT_MAX);
  CHECK(dtype_max_value(JX_FLOAT64) == DBL_MAX && dtype_min_value(JX_FLOAT64) == -DBL_MAX);
  /* The 16-bit maxima are the largest finite encodings. */
  CHECK(dtype_f16_to_f32(0x7bff) == dtype_max_value(JX_FLOAT16));
  CHECK(dtype_bf16_to_f32(0x7f7f) == dtype_max_value(JX_BFLOAT16));
}

static jx_dtype dtype_from_name(const char *name) {
  for (jx_dtype d = JX_BOOL; d < JX_NUM_DTYPES; d++)
    if (strcmp(jx_dtype_name(d), name) == 0) return d;
  return JX_NUM_DTYPES;
}

/* Every line of the golden file: jx_promote_types must give JAX's dtype and weakness. */
static void test_promotion_golden(void) {
  const char *path = JAXC_GOLDEN_DIR "/promotion.txt";
  FILE *f = fopen(path, "r");
  CHECK_MSG(f != NULL, "cannot open %s (run tools/golden_promotion.py)", path);
  if (!f) return;
  char line[256];
  int cases[2] = {0, 0}, lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (line[0] == '#' || line[0] == '\n') continue;
    int x64, aw, bw, rw;
    char an[16], bn[16], rn[16];
    if (sscanf(line, "%d %15s %d %15s %d %15s %d", &x64, an, &aw, bn, &bw, rn, &rw) != 7) {
      CHECK_MSG(0, "%s:%d: malformed line", path, lineno);
      continue;
    }
    jx_dtype a = dtype_from_name(an), b = dtype_from_name(bn), r = dtype_from_name(rn);
    CHECK_MSG(a != JX_NUM_DTYPES && b != JX_NUM_DTYPES && r != JX_NUM_DTYPES && (x64 & ~1) == 0,
              "%s:%d: unknown dtype or mode", path, lineno);
    jx_config_enable_x64(x64 != 0);
    bool weak = !rw;
    jx_dtype got = jx_promote_types(a, aw != 0, b, bw != 0, &weak);
    CHECK_MSG(got == r && weak == (rw != 0),
              "x64=%d promote(%s%s, %s%s): got %s%s, JAX gives %s%s", x64, an,
              aw ? " weak" : "", bn, bw ? " weak" : "", jx_dtype_name(got) ? jx_dtype_name(got) : "?",
              weak ? " weak" : "", rn, rw ? " weak" : "");
    cases[x64 & 1]++;
  }
  fclose(f);
  jx_config_enable_x64(false);
  /* 30 operands with x64 on, 26 with it off (no weak 64-bit arrays): all pairs; the
   * complex64/complex128 operands add 371 cases (JAX's complex promotion entries). */
  CHECK_EQ_INT(cases[0], 26 * 26);
  CHECK_EQ_INT(cases[1], 30 * 30);
}

/* A few cases written out, so the rules stay readable next to the golden file. */
static void test_promotion_examples(void) {
  bool w = true;
  jx_config_enable_x64(false);
  CHECK_EQ_INT(jx_promote_types(JX_INT8, false, JX_UINT8, false, &w), JX_INT16);
  CHECK(!w);
  CHECK_EQ_INT(jx_promote_types(JX_INT32, true, JX_INT32, true, &w), JX_INT32); /* 1 + 1 */
  CHECK(w);
  CHECK_EQ_INT(jx_promote_types(JX_INT8, false, JX_INT32, true, &w), JX_INT8); /* x + 1 */
  CHECK(!w);
  CHECK_EQ_INT(jx_promote_types(JX_BFLOAT16, false, JX_FLOAT32, true, &w), JX_BFLOAT16);
  CHECK(!w);
  CHECK_EQ_INT(jx_promote_types(JX_INT32, false, JX_FLOAT32, true, &w), JX_FLOAT32);
  CHECK(w); /* int32 array + 1.0: the bound is the weak float node */
  CHECK_EQ_INT(jx_promote_types(JX_BOOL, false, JX_FLOAT32, true, &w), JX_FLOAT32);
  CHECK(w);
  CHECK_EQ_INT(jx_promote_types(JX_FLOAT16, false, JX_BFLOAT16, false, &w), JX_FLOAT32);
  CHECK_EQ_INT(jx_promote_types(JX_UINT32, false, JX_INT32, false, &w), JX_INT32);
  CHECK(!w);
  jx_config_enable_x64(true);
  CHECK_EQ_INT(jx_promote_types(JX_UINT32, false, JX_INT32, false, &w), JX_INT64);
  CHECK_EQ_INT(jx_promote_types(JX_UINT64, false, JX_INT8, false, &w), JX_FLOAT64);
  CHECK(w); /* the bound of u64 and i64 is JAX's weak float node */
  CHECK_EQ_INT(jx_promote_types(JX_INT64, true, JX_FLOAT64, true, &w), JX_FLOAT64);
  CHECK(w);
  jx_config_enable_x64(false);
  /* Explicit 64-bit dtypes are canonicalized first, as JAX's dtype() does. */
  CHECK_EQ_INT(jx_promote_types(JX_UINT64, false, JX_INT8, false, &w), JX_INT32);
  CHECK(!w);
  CHECK_EQ_INT(jx_promote_types(JX_FLOAT64, false, JX_INT64, false, NULL), JX_FLOAT32);
  CHECK_EQ_INT(jx_promote_types(JX_NUM_DTYPES, false, JX_INT8, false, &w), JX_NUM_DTYPES);
}

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

/* Every float16 is exact in float32: f16 -> f32 -> f16 is the identity, except that a
 * NaN comes back as a (quiet) NaN of the same sign. Also checks monotonicity. */
static void test_f16_round_trip(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float f = dtype_f16_to_f32((uint16_t)h);
    uint16_t back = dtype_f32_to_f16(f);
    bool is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (is_nan) {
      if (!isnan(f) || (back & 0x7c00) != 0x7c00 || !(back & 0x3ff) || (back & 0x8000) != (h & 0x8000))
        bad++;
    } else if (back != h) {
      bad++;
    }
    /* Positive encodings increase in value; subnormals and 2^-14 line up. */
    if (h > 0 && h < 0x7c00 && !(dtype_f16_to_f32((uint16_t)(h - 1)) < f)) bad++;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(dtype_f16_to_f32(0x0001) == ldexpf(1, -24));
  CHECK(dtype_f16_to_f32(0x0400) == ldexpf(1, -14));
  CHECK(dtype_f16_to_f32(0x3c00) == 1.0f);
  CHECK(dtype_f16_to_f32(0xc000) == -2.0f);
  CHECK(isinf(dtype_f16_to_f32(0x7c00)) && dtype_f16_to_f32(0xfc00) < 0);
  CHECK(f32_bits(dtype_f16_to_f32(0x8000)) == 0x80000000u);
}

static void test_bf16_round_trip(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float f = dtype_bf16_to_f32((uint16_t)h);
    uint16_t back = dtype_f32_to_bf16(f);
    bool is_nan = (h & 0x7f80) == 0x7f80 && (h & 0x7f);
    if (is_nan) {
      if (!isnan(f) || (back & 0x7f80) != 0x7f80 || !(back & 0x7f) || (back & 0x8000) != (h & 0x8000))
        bad++;
    } else if (back != h) {
      bad++;
    }
  }
  CHECK_EQ_INT(bad, 0);
}

/* Nearest-even by brute force: for a spread of float32 inputs, the chosen 16-bit value
 * must be no farther than its neighbours, on a tie the even one; inputs at or past the
 * midpoint above the largest finite value go to inf (that tie is even too: the largest
 * finite encoding is odd). Returns the number of wrong answers. */
static int check_nearest(uint16_t (*to16)(float), float (*from16)(uint16_t), uint16_t inf16) {
  double maxf = from16((uint16_t)(inf16 - 1)), below = from16((uint16_t)(inf16 - 2));
  double overflow = maxf + (maxf - below) / 2;
  int bad = 0;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 65521) {
    float x = bits_f32((uint32_t)u);
    if (isnan(x)) continue;
    uint16_t h = to16(x), mag = h & 0x7fff;
    if ((h & 0x8000) != ((u >> 16) & 0x8000)) bad++; /* sign kept, zeros included */
    if (fabs((double)x) >= overflow) {
      bad += mag != inf16;
      continue;
    }
    if (mag >= inf16) {
      bad++;
      continue;
    }
    double d = fabs((double)x - (double)from16(h));
    for (int m = (int)mag - 1; m <= (int)mag + 1; m += 2) {
      if (m < 0 || m >= inf16) continue;
      double dn = fabs((double)x - (double)from16((uint16_t)((h & 0x8000) | m)));
      if (dn < d || (dn == d && (h & 1))) bad++;
    }
  }
  return bad;
}

/* Every rounding boundary exactly: the midpoint of two neighbouring finite 16-bit
 * values is exact in float32 (12 or 9 significant bits); it must go to the even one,
 * and the floats just either side of it to the nearer one. */
static int check_midpoints(uint16_t (*to16)(float), float (*from16)(uint16_t), uint16_t inf16) {
  int bad = 0;
  for (uint32_t sign = 0; sign <= 0x8000; sign += 0x8000) {
    for (uint32_t m = 0; m < inf16; m++) {
      uint16_t lo = (uint16_t)(sign | m), hi = (uint16_t)(sign | (m + 1));
      double lo_v = from16(lo);
      /* Past the largest finite value the next step up is one more ulp (2^16 for
       * float16), which encodes as inf: halfway there, ties go to inf (even). */
      double hi_v = m + 1 == inf16 ? lo_v + (lo_v - from16((uint16_t)(lo - 1))) : from16(hi);
      float mid = (float)((lo_v + hi_v) / 2);
      bad += (double)mid != (lo_v + hi_v) / 2; /* exact, or the test means nothing */
      bad += to16(mid) != ((m & 1) ? hi : lo);
      float toward0 = nextafterf(mid, 0), away = nextafterf(mid, sign ? -INFINITY : INFINITY);
      bad += to16(toward0) != lo;
      bad += to16(away) != hi;
    }
  }
  return bad;
}

static void test_nearest_even_sweep(void) {
  CHECK_EQ_INT(check_midpoints(dtype_f32_to_f16, dtype_f16_to_f32, 0x7c00), 0);
  CHECK_EQ_INT(check_midpoints(dtype_f32_to_bf16, dtype_bf16_to_f32, 0x7f80), 0);
  CHECK_EQ_INT(check_nearest(dtype_f32_to_f16, dtype_f16_to_f32, 0x7c00), 0);
  CHECK_EQ_INT(check_nearest(dtype_f32_to_bf16, dtype_bf16_to_f32, 0x7f80), 0);
}

static void test_ties_to_even(void) {
  /* float16: spacing at 1 is 2^-10. */
  CHECK_EQ_INT(dtype_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);     /* tie -> even 1.0 */
  CHECK_EQ_INT(dtype_f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02); /* tie -> even up */
  CHECK_EQ_INT(dtype_f32_to_f16(nextafterf(1.0f + ldexpf(1, -11), 2)), 0x3c01);
  CHECK_EQ_INT(dtype_f32_to_f16(65504.0f), 0x7bff);
  CHECK_EQ_INT(dtype_f32_to_f16(65519.0f), 0x7bff);
  CHECK_EQ_INT(dtype_f32_to_f16(65520.0f), 0x7c00); /* tie with 2^16 -> even = inf */
  CHECK_EQ_INT(dtype_f32_to_f16(-1e10f), 0xfc00);
  CHECK_EQ_INT(dtype_f32_to_f16(ldexpf(1, -25)), 0x0000);     /* tie -> even 0 */
  CHECK_EQ_INT(dtype_f32_to_f16(-ldexpf(1, -25)), 0x8000);
  CHECK_EQ_INT(dtype_f32_to_f16(nextafterf(ldexpf(1, -25), 1)), 0x0001);
  CHECK_EQ_INT(dtype_f32_to_f16(3 * ldexpf(1, -25)), 0x0002); /* tie 1|2 -> 2 */
  CHECK_EQ_INT(dtype_f32_to_f16(5 * ldexpf(1, -25)), 0x0002); /* tie 2|3 -> 2 */
  CHECK_EQ_INT(dtype_f32_to_f16(ldexpf(1, -14) - ldexpf(1, -25)), 0x0400); /* carry to normal */
  CHECK_EQ_INT(dtype_f32_to_f16(FLT_MIN), 0x0000);
  CHECK_EQ_INT(dtype_f32_to_f16(bits_f32(1)), 0x0000); /* float32 subnormal */
  /* bfloat16: spacing at 1 is 2^-7. */
  CHECK_EQ_INT(dtype_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);
  CHECK_EQ_INT(dtype_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82);
  CHECK_EQ_INT(dtype_f32_to_bf16(nextafterf(1.0f + ldexpf(1, -8), 2)), 0x3f81);
  CHECK_EQ_INT(dtype_f32_to_bf16(FLT_MAX), 0x7f80); /* past bf16's max midpoint */
  CHECK_EQ_INT(dtype_f32_to_bf16(-INFINITY), 0xff80);
  CHECK_EQ_INT(dtype_f32_to_bf16(bits_f32(0x00008000)), 0x0000); /* subnormal tie -> 0 */
  CHECK_EQ_INT(dtype_f32_to_bf16(bits_f32(0x00018000)), 0x0002); /* tie 1|2 -> 2 */
}

static void test_nan(void) {
  /* A NaN whose payload lives only in the low bits must not truncate to inf. */
  uint16_t b = dtype_f32_to_bf16(bits_f32(0x7f800001));
  CHECK((b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0);
  b = dtype_f32_to_bf16(bits_f32(0xff800001));
  CHECK((b & 0xff80) == 0xff80 && (b & 0x7f) != 0);
  uint16_t h = dtype_f32_to_f16(bits_f32(0x7f800001));
  CHECK((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0);
  h = dtype_f32_to_f16(-NAN);
  CHECK((h & 0xfc00) == 0xfc00 && (h & 0x3ff) != 0);
  CHECK(isnan(dtype_f16_to_f32(0x7e00)) && isnan(dtype_bf16_to_f32(0x7fc0)));
  CHECK(isnan(dtype_f16_to_f32(0x7c01)) && isnan(dtype_bf16_to_f32(0x7f81)));
  CHECK_EQ_INT(dtype_f32_to_f16(NAN) & 0x7fff, 0x7e00);
  CHECK_EQ_INT(dtype_f32_to_bf16(NAN) & 0x7fff, 0x7fc0);
}

int main(void) {
  setenv("JAXC_ENABLE_X64", "True", 1); /* before the switch is first read */
  TEST_RUN(test_x64_env_and_override);
  TEST_RUN(test_names_and_sizes);
  TEST_RUN(test_classification);
  TEST_RUN(test_canonicalize);
  TEST_RUN(test_min_max);
  TEST_RUN(test_promotion_golden);
  TEST_RUN(test_promotion_examples);
  TEST_RUN(test_f16_round_trip);
  TEST_RUN(test_bf16_round_trip);
  TEST_RUN(test_nearest_even_sweep);
  TEST_RUN(test_ties_to_even);
  TEST_RUN(test_nan);
  return test_finish();
}
