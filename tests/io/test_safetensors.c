/* test_safetensors.c -- the safetensors reader and writer (src/io/safetensors.c) and its
 * JSON parser: round trips of every dtype, files written by Python's safetensors library
 * (tests/io/fixtures, made by tools/io_fixtures.py), name escaping, ownership under
 * scopes, and malformed headers and offsets (status + message naming path and problem). */
#include "io_test.h"

/* The value tools/io_fixtures.py's sample() puts at element i of n, as raw bits for
 * integer dtypes (little-endian host assumed by memcpy) or a double for floats. */
static uint64_t sample_int_bits(int bits, int64_t i) {
  int shift = bits - 9 > 0 ? bits - 9 : 0;
  uint64_t v = ((uint64_t)(i * 37 % 251) << shift) + 3 * (uint64_t)i;
  return bits == 64 ? v : v & ((UINT64_C(1) << bits) - 1);
}
static double sample_float(int64_t i, int64_t n) { return ((double)i - (double)n / 2) * 0.75; }

/* Expected raw bytes of sample(dtype, shape) with n elements (float16: via float32). */
static void *sample_raw(jx_dtype d, int64_t n) {
  size_t item = jx_dtype_itemsize(d);
  unsigned char *b = malloc(n ? (size_t)n * item : 1);
  for (int64_t i = 0; i < n; i++) {
    unsigned char *p = b + (size_t)i * item;
    if (d == JX_BOOL) {
      *p = i % 3 == 0;
    } else if (d == JX_FLOAT32) {
      float f = (float)sample_float(i, n);
      memcpy(p, &f, 4);
    } else if (d == JX_FLOAT64) {
      double f = sample_float(i, n);
      memcpy(p, &f, 8);
    } else if (d == JX_FLOAT16) {
      /* The sample values (multiples of 0.75 up to 2.25) are exact in float16. */
      float f = (float)sample_float(i, n);
      uint32_t u;
      memcpy(&u, &f, 4);
      uint16_t h = f == 0 ? (uint16_t)(u >> 16 & 0x8000)
                          : (uint16_t)((u >> 16 & 0x8000) | (((u >> 23 & 0xff) - 112) << 10) |
                                       (u >> 13 & 0x3ff));
      memcpy(p, &h, 2);
    } else {
      uint64_t v = sample_int_bits((int)item * 8, i);
      memcpy(p, &v, item); /* little-endian: the low bytes */
    }
  }
  return b;
}

static const jx_dtype all_dtypes[] = {JX_BOOL,   JX_INT8,   JX_UINT8,   JX_INT16,   JX_UINT16,
                                      JX_INT32,  JX_UINT32, JX_INT64,   JX_UINT64,  JX_FLOAT16,
                                      JX_BFLOAT16, JX_FLOAT32, JX_FLOAT64};
#define NDT (int)(sizeof all_dtypes / sizeof all_dtypes[0])

static int find_name(int n, char **names, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

static void free_loaded(int n, char **names, jx_array **arrays) {
  for (int i = 0; i < n; i++) jx_free(arrays[i]);
  free(arrays);
  jx_io_free_names(n, names);
}

/* Every dtype, several shapes, one file; names, order, dtypes, shapes and bytes survive. */
static void test_round_trip(void) {
  jx_config_enable_x64(true);
  const int64_t shapes[4][3] = {{2, 3, 0}, {5, 0, 0}, {0, 0, 0}, {0, 4, 0}};
  const int ndims[4] = {2, 1, 0, 2};
  jx_array *arrays[NDT * 4];
  char namebuf[NDT * 4][32];
  const char *names[NDT * 4];
  int n = 0;
  for (int d = 0; d < NDT; d++)
    for (int s = 0; s < 4; s++) {
      int64_t cnt = 1;
      for (int k = 0; k < ndims[s]; k++) cnt *= shapes[s][k];
      void *raw = sample_raw(all_dtypes[d] == JX_BFLOAT16 ? JX_UINT16 : all_dtypes[d], cnt);
      arrays[n] = jx_array_from(raw, all_dtypes[d], ndims[s], shapes[s]);
      free(raw);
      snprintf(namebuf[n], sizeof namebuf[n], "%s/%d", jx_dtype_name(all_dtypes[d]), s);
      names[n] = namebuf[n];
      n++;
    }
  const char *p = io_tmp("rt.safetensors");
  CHECK_EQ_INT(jx_io_save_safetensors(p, n, names, arrays), JX_OK);
  /* Layout: header padded so data starts 8-aligned; every tensor aligned to its item. */
  size_t flen;
  unsigned char *file = io_slurp(p, &flen);
  uint64_t hlen = 0;
  CHECK(file && flen >= 8);
  for (int i = 7; file && flen >= 8 && i >= 0; i--) hlen = hlen << 8 | file[i];
  CHECK_EQ_INT((8 + hlen) % 8, 0);
  free(file);
  int ln = 0;
  char **lnames = NULL;
  jx_array **larrays = NULL;
  CHECK_EQ_INT(jx_io_load_safetensors(p, &ln, &lnames, &larrays), JX_OK);
  CHECK_EQ_INT(ln, n);
  for (int i = 0; i < n && i < ln; i++) {
    CHECK_STR(lnames[i], names[i]); /* header order is the caller's order */
    CHECK_EQ_INT(jx_dtype_of(larrays[i]), jx_dtype_of(arrays[i]));
    CHECK_EQ_INT(jx_ndim(larrays[i]), jx_ndim(arrays[i]));
    for (int k = 0; k < jx_ndim(arrays[i]); k++)
      CHECK_EQ_INT(jx_shape(larrays[i])[k], jx_shape(arrays[i])[k]);
    size_t na = 0, nb = 0;
    void *a = io_raw(arrays[i], &na), *b = io_raw(larrays[i], &nb);
    CHECK_MSG(a && b && na == nb && memcmp(a, b, na) == 0, "%s: data differs", names[i]);
    free(a);
    free(b);
  }
  free_loaded(ln, lnames, larrays);
  for (int i = 0; i < n; i++) jx_free(arrays[i]);
  jx_config_enable_x64(false);
}

/* A file written by Python's safetensors (numpy API), with metadata and an escaped name. */
static void test_python_fixture(void) {
  for (int x64 = 1; x64 >= 0; x64--) {
    jx_config_enable_x64(x64);
    int n = 0;
    char **names = NULL;
    jx_array **arrays = NULL;
    const char *p = IO_FIXTURES "/all_dtypes.safetensors";
    CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &names, &arrays), JX_OK);
    CHECK_EQ_INT(n, 15); /* 12 dtypes + scalar + empty + the quoted name; no metadata */
    static const struct {
      const char *name;
      jx_dtype dtype;
    } want[] = {{"t_bool", JX_BOOL},     {"t_uint8", JX_UINT8},   {"t_int8", JX_INT8},
                {"t_int16", JX_INT16},   {"t_uint16", JX_UINT16}, {"t_int32", JX_INT32},
                {"t_uint32", JX_UINT32}, {"t_int64", JX_INT64},   {"t_uint64", JX_UINT64},
                {"t_float16", JX_FLOAT16}, {"t_float32", JX_FLOAT32}, {"t_float64", JX_FLOAT64}};
    for (int w = 0; w < 12; w++) {
      int i = find_name(n, names, want[w].name);
      CHECK_MSG(i >= 0, "%s missing", want[w].name);
      if (i < 0) continue;
      jx_array *a = arrays[i];
      CHECK(jx_ndim(a) == 2 && jx_shape(a)[0] == 2 && jx_shape(a)[1] == 3);
      bool wide = jx_dtype_itemsize(want[w].dtype) == 8;
      if (!x64 && wide) {
        /* x64 off: 64-bit data arrives as the 32-bit dtype, as with jnp.asarray. */
        CHECK_EQ_INT(jx_dtype_itemsize(jx_dtype_of(a)), 4);
        continue;
      }
      CHECK_EQ_INT(jx_dtype_of(a), want[w].dtype);
      size_t nb = 0;
      void *got = io_raw(a, &nb);
      void *exp = sample_raw(want[w].dtype, 6);
      CHECK_MSG(got && nb == 6 * jx_dtype_itemsize(want[w].dtype) && memcmp(got, exp, nb) == 0,
                "%s: values differ", want[w].name);
      free(got);
      free(exp);
    }
    int s = find_name(n, names, "scalar");
    CHECK(s >= 0 && jx_ndim(arrays[s]) == 0 && jx_item(arrays[s]) == 2.5);
    int e = find_name(n, names, "empty");
    CHECK(e >= 0 && jx_ndim(arrays[e]) == 2 && jx_shape(arrays[e])[0] == 0 &&
          jx_shape(arrays[e])[1] == 3);
    int q = find_name(n, names, "name with \"quotes\" and \xc3\xa9");
    CHECK(q >= 0 && jx_size(arrays[q]) == 2 && jx_dtype_of(arrays[q]) == JX_INT32);
    free_loaded(n, names, arrays);
  }
  jx_config_enable_x64(false);
  /* BF16, relabeled from raw uint16 bits by the generator. */
  int n = 0;
  char **names = NULL;
  jx_array **arrays = NULL;
  CHECK_EQ_INT(jx_io_load_safetensors(IO_FIXTURES "/bf16.safetensors", &n, &names, &arrays),
               JX_OK);
  CHECK_EQ_INT(n, 1);
  if (n == 1) {
    CHECK_EQ_INT(jx_dtype_of(arrays[0]), JX_BFLOAT16);
    jx_array *f = jx_astype(arrays[0], JX_FLOAT32);
    double *v = io_values(f);
    CHECK(v && v[0] == 1.0 && v[1] == -2.0 && v[2] == 0.5 && v[3] == 3.140625);
    free(v);
    jx_free(f);
  }
  free_loaded(n, names, arrays);
}

/* Names with characters JSON must escape, and non-ASCII, survive the round trip. */
static void test_names(void) {
  const char *names[] = {"quote\"back\\slash", "tab\tnewline\n\x01", "\xe2\x82\xac\xf0\x9f\x98\x80",
                         "", "layer.0/weight:0"};
  jx_array *arrays[5];
  for (int i = 0; i < 5; i++) arrays[i] = jx_full(1, (int64_t[]){i + 1}, i, JX_FLOAT32);
  const char *p = io_tmp("names.safetensors");
  CHECK_EQ_INT(jx_io_save_safetensors(p, 5, names, arrays), JX_OK);
  int n = 0;
  char **ln = NULL;
  jx_array **la = NULL;
  CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &ln, &la), JX_OK);
  CHECK_EQ_INT(n, 5);
  for (int i = 0; i < n; i++) {
    CHECK_STR(ln[i], names[i]);
    CHECK_EQ_INT(jx_size(la[i]), i + 1);
  }
  free_loaded(n, ln, la);
  for (int i = 0; i < 5; i++) jx_free(arrays[i]);
  /* The JSON parser decodes escapes a writer might use: \u with surrogate pairs, \/. */
  const char *hdr = "{\"a\\u00e9\\ud83d\\ude00\\/\\b\":{\"dtype\":\"U8\",\"shape\":[1],"
                    "\"data_offsets\":[0,1]},\"__metadata__\":{\"k\":\"v\"}}";
  size_t hl = strlen(hdr);
  unsigned char buf[256] = {0};
  buf[0] = (unsigned char)hl;
  memcpy(buf + 8, hdr, hl);
  buf[8 + hl] = 7;
  io_write_file(p, buf, 8 + hl + 1);
  CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &ln, &la), JX_OK);
  CHECK(n == 1 && strcmp(ln[0], "a\xc3\xa9\xf0\x9f\x98\x80/\b") == 0 && jx_item(la[0]) == 7);
  free_loaded(n, ln, la);
}

/* Loaded arrays follow the one ownership rule: a scope releases them. */
static void test_scope_ownership(void) {
  int64_t live = jx_live_arrays();
  jx_array *w = jx_ones(2, (int64_t[]){2, 2}, JX_FLOAT32);
  const char *p = io_tmp("scope.safetensors");
  CHECK_EQ_INT(jx_io_save_safetensors(p, 1, (const char *[]){"w"}, &w), JX_OK);
  jx_free(w);
  jx_scope_begin();
  int n;
  char **names;
  jx_array **arrays;
  CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &names, &arrays), JX_OK);
  CHECK_EQ_INT(jx_live_arrays(), live + 1);
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_arrays(), live);
  jx_io_free_names(n, names);
  free(arrays);
  /* An empty file: zero tensors, no lists. */
  CHECK_EQ_INT(jx_io_save_safetensors(p, 0, NULL, NULL), JX_OK);
  n = -1;
  CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &names, &arrays), JX_OK);
  CHECK(n == 0 && names == NULL && arrays == NULL);
}

/* Writes 8-byte length + header + data bytes and expects a load failure. */
static void expect_bad(const char *header, const void *data, size_t ndata, jx_status status,
                       const char *what) {
  static int k;
  char name[32];
  snprintf(name, sizeof name, "bad%d.safetensors", k++);
  const char *p = io_tmp(name);
  size_t hl = strlen(header);
  unsigned char *buf = malloc(8 + hl + ndata + 1);
  for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
  memcpy(buf + 8, header, hl);
  if (ndata) memcpy(buf + 8 + hl, data, ndata);
  io_write_file(p, buf, 8 + hl + ndata);
  free(buf);
  int n = 5;
  char **names = (char **)1;
  jx_array **arrays = (jx_array **)1;
  CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &names, &arrays), status);
  CHECK_MSG(n == 0 && names == NULL && arrays == NULL, "%s: outputs not cleared", header);
  CHECK_IO_ERROR(status, p, what);
}

static void test_malformed(void) {
  static const unsigned char z[64];
#define T(body) "{\"t\":{" body "}}"
  expect_bad("[]", z, 0, JX_ERR_IO, "does not start with '{'");
  expect_bad(" {}", z, 0, JX_ERR_IO, "does not start with '{'");
  expect_bad("{", z, 0, JX_ERR_IO, "malformed JSON header");
  expect_bad("{\"a\":1,}", z, 0, JX_ERR_IO, "object key expected");
  expect_bad("{\"a\":01}", z, 0, JX_ERR_IO, "leading zero");
  expect_bad("{\"a\":\"\\x\"}", z, 0, JX_ERR_IO, "invalid escape");
  expect_bad("{\"a\":\"\\ud800\"}", z, 0, JX_ERR_IO, "surrogate");
  expect_bad("{\"a\":\"\xff\"}", z, 0, JX_ERR_IO, "invalid UTF-8");
  expect_bad("{\"a\":\"\xc0\xaf\"}", z, 0, JX_ERR_IO, "invalid UTF-8"); /* overlong '/' */
  expect_bad("{\"a\":\"x\ny\"}", z, 0, JX_ERR_IO, "control character");
  expect_bad("{\"a\":tru}", z, 0, JX_ERR_IO, "invalid literal");
  expect_bad("{\"a\":1} x", z, 0, JX_ERR_IO, "unexpected data after");
  char deep[300] = "{\"a\":";
  for (int i = 0; i < 100; i++) strcat(deep, "[");
  expect_bad(deep, z, 0, JX_ERR_IO, "nesting too deep");
  expect_bad("{\"t\":5}", z, 0, JX_ERR_IO, "not an object");
  expect_bad(T("\"shape\":[1],\"data_offsets\":[0,4]"), z, 4, JX_ERR_IO, "lacks \"dtype\"");
  expect_bad(T("\"dtype\":\"F32\",\"data_offsets\":[0,4]"), z, 4, JX_ERR_IO, "lacks \"shape\"");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[1]"), z, 4, JX_ERR_IO, "lacks \"data_offsets\"");
  expect_bad(T("\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]"), z, 4, JX_ERR_IO,
             "not a string");
  expect_bad(T("\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]"), z, 4, JX_ERR_IO,
             "unknown dtype \"F33\"");
  expect_bad(T("\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]"), z, 1,
             JX_ERR_UNSUPPORTED, "F8_E4M3");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":3,\"data_offsets\":[0,4]"), z, 4, JX_ERR_IO,
             "not an array");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]"), z, 4, JX_ERR_IO,
             "not a non-negative integer");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]"), z, 4, JX_ERR_IO,
             "not a non-negative integer");
  expect_bad(T("\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"
               "\"data_offsets\":[0,1]"), z, 1, JX_ERR_UNSUPPORTED, "17 dimensions");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]"), z, 4, JX_ERR_IO,
             "not [begin, end]");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]"), z, 4, JX_ERR_IO,
             "end before they begin");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,1e30]"), z, 4, JX_ERR_IO,
             "not [begin, end]");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,99999999999999999999]"), z,
             4, JX_ERR_IO, "not [begin, end]");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]"), z, 4, JX_ERR_IO,
             "needs 8 bytes but data_offsets [0, 4] hold 4");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]"),
             z, 4, JX_ERR_IO, "overflows");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]"), z, 8, JX_ERR_IO,
             "leave a hole");
  expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
             "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", z, 8, JX_ERR_IO,
             "overlap");
  expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
             "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", z, 8, JX_ERR_IO,
             "appears twice");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]"), z, 10, JX_ERR_IO,
             "truncated data of tensor \"t\"");
  expect_bad(T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]"), z, 5, JX_ERR_IO,
             "trailing data");
  expect_bad("{\"__metadata__\":{\"k\":1}}", z, 0, JX_ERR_IO, "not a string");
  expect_bad("{\"__metadata__\":[]}", z, 0, JX_ERR_IO, "not an object");
  expect_bad("{\"a\\u0000b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", z, 1,
             JX_ERR_IO, "NUL");
#undef T
  /* The length prefix itself. */
  const char *p = io_tmp("short.safetensors");
  io_write_file(p, "\x02\0\0", 3);
  int n;
  char **names;
  jx_array **arrays;
  CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &names, &arrays), JX_ERR_IO);
  CHECK_IO_ERROR(JX_ERR_IO, p, "truncated header length");
  io_write_file(p, "\xff\xff\xff\xff\xff\xff\xff\xff{}", 10);
  CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &names, &arrays), JX_ERR_IO);
  CHECK_IO_ERROR(JX_ERR_IO, p, "exceeds the limit");
  io_write_file(p, "\x40\0\0\0\0\0\0\0{}", 10);
  CHECK_EQ_INT(jx_io_load_safetensors(p, &n, &names, &arrays), JX_ERR_IO);
  CHECK_IO_ERROR(JX_ERR_IO, p, "truncated JSON header");
  const char *missing = io_tmp("missing.safetensors");
  CHECK_EQ_INT(jx_io_load_safetensors(missing, &n, &names, &arrays), JX_ERR_IO);
  CHECK_IO_ERROR(JX_ERR_IO, missing, "cannot open");
  CHECK_EQ_INT(jx_io_load_safetensors(p, NULL, &names, &arrays), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "n is NULL");
}

static void test_save_errors(void) {
  jx_array *a = jx_ones(1, (int64_t[]){2}, JX_FLOAT32);
  jx_array *two[2] = {a, a};
  const char *p = io_tmp("save.safetensors");
  CHECK_EQ_INT(jx_io_save_safetensors(p, 2, (const char *[]){"x", "x"}, two), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "used twice");
  CHECK_EQ_INT(jx_io_save_safetensors(p, 1, (const char *[]){"__metadata__"}, two),
               JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "reserved");
  CHECK_EQ_INT(jx_io_save_safetensors(p, 1, (const char *[]){NULL}, two), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "names[0] is NULL");
  CHECK_EQ_INT(jx_io_save_safetensors(p, 1, (const char *[]){"\xff"}, two), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "UTF-8");
  CHECK_EQ_INT(jx_io_save_safetensors(p, 1, (const char *[]){"x"}, (jx_array *[]){NULL}),
               JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "arrays[0] is NULL");
  CHECK_EQ_INT(jx_io_save_safetensors(p, -1, NULL, NULL), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "negative");
  CHECK(!io_exists(p));
  const char *nodir = io_tmp("nope/x.safetensors");
  CHECK_EQ_INT(jx_io_save_safetensors(nodir, 1, (const char *[]){"x"}, two), JX_ERR_IO);
  CHECK_IO_ERROR(JX_ERR_IO, nodir, "cannot open for writing");
  jx_free(a);
}

int main(void) {
  TEST_RUN(test_round_trip);
  TEST_RUN(test_python_fixture);
  TEST_RUN(test_names);
  TEST_RUN(test_scope_ownership);
  TEST_RUN(test_malformed);
  TEST_RUN(test_save_errors);
  io_tmp_cleanup();
  return test_finish();
}
