/* test_npy.c -- the .npy reader and writer (src/io/npy.c): round trips of every dtype
 * NumPy has, byte-identical output to numpy.save, files written by NumPy (big-endian,
 * Fortran order, format 2.0; tests/io/fixtures from tools/io_fixtures.py), gzip input,
 * and malformed headers (status + message naming the path and the problem). */
#include "io_test.h"

static const jx_dtype npy_dtypes[] = {JX_BOOL,  JX_INT8,   JX_UINT8,   JX_INT16,
                                      JX_UINT16, JX_INT32, JX_UINT32,  JX_INT64,
                                      JX_UINT64, JX_FLOAT16, JX_FLOAT32, JX_FLOAT64};

static void test_round_trip(void) {
  jx_config_enable_x64(true);
  const int64_t shapes[4][3] = {{2, 3, 4}, {5}, {0}, {0, 3}};
  const int ndims[4] = {3, 1, 0, 2};
  const char *p = io_tmp("rt.npy");
  for (size_t d = 0; d < sizeof npy_dtypes / sizeof npy_dtypes[0]; d++)
    for (int s = 0; s < 4; s++) {
      jx_scope_begin();
      jx_array *a = jx_astype(jx_reshape(jx_arange(0, 24, 1, JX_FLOAT64), 1, (int64_t[]){24}),
                              npy_dtypes[d]);
      /* Take the first elements in the wanted shape. */
      int64_t cnt = 1;
      for (int k = 0; k < ndims[s]; k++) cnt *= shapes[s][k];
      a = jx_reshape(jx_slice(a, 1, (int64_t[]){0}, (int64_t[]){cnt}, NULL), ndims[s], shapes[s]);
      CHECK_EQ_INT(jx_io_save_npy(p, a), JX_OK);
      jx_array *b = jx_io_load_npy(p);
      CHECK(b != NULL);
      if (b) {
        CHECK_EQ_INT(jx_dtype_of(b), npy_dtypes[d]);
        CHECK_EQ_INT(jx_ndim(b), ndims[s]);
        size_t na = 0, nb = 0;
        void *ra = io_raw(a, &na), *rb = io_raw(b, &nb);
        CHECK_MSG(ra && rb && na == nb && memcmp(ra, rb, na) == 0, "%s shape %d differs",
                  jx_dtype_name(npy_dtypes[d]), s);
        free(ra);
        free(rb);
      }
      jx_scope_end(0, NULL);
    }
  jx_config_enable_x64(false);
  jx_array *bf = jx_ones(1, (int64_t[]){2}, JX_BFLOAT16);
  CHECK_EQ_INT(jx_io_save_npy(p, bf), JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "bfloat16");
  jx_free(bf);
}

/* Our writer's bytes equal numpy.save's for the same array. */
static void test_matches_numpy(void) {
  float v[6] = {-2.25f, -1.5f, -0.75f, 0, 0.75f, 1.5f};
  jx_array *a = jx_array_from(v, JX_FLOAT32, 2, (int64_t[]){2, 3});
  const char *p = io_tmp("same.npy");
  CHECK_EQ_INT(jx_io_save_npy(p, a), JX_OK);
  size_t n1 = 0, n2 = 0;
  unsigned char *ours = io_slurp(p, &n1);
  unsigned char *theirs = io_slurp(IO_FIXTURES "/f32_2x3.npy", &n2);
  CHECK_MSG(ours && theirs && n1 == n2 && memcmp(ours, theirs, n1) == 0,
            "jx_io_save_npy output differs from numpy.save's (%zu vs %zu bytes)", n1, n2);
  free(ours);
  free(theirs);
  jx_array *b = jx_io_load_npy(IO_FIXTURES "/f32_2x3.npy");
  double *got = io_values(b);
  for (int i = 0; got && i < 6; i++) CHECK_EQ_INT(got[i] * 4, v[i] * 4);
  free(got);
  jx_free(a);
  jx_free(b);
}

static void test_numpy_fixtures(void) {
  /* Big-endian int64 (x64 on: exact; values from tools/io_fixtures.py's sample()). */
  jx_config_enable_x64(true);
  jx_array *a = jx_io_load_npy(IO_FIXTURES "/i64_be_4.npy");
  CHECK(a && jx_dtype_of(a) == JX_INT64 && jx_size(a) == 4);
  int64_t want[4], got[4];
  for (int i = 0; i < 4; i++)
    want[i] = (int64_t)(((uint64_t)(i * 37 % 251) << 55) + 3 * (uint64_t)i);
  CHECK(a && jx_read(a, got, sizeof got) == JX_OK && memcmp(got, want, sizeof got) == 0);
  jx_free(a);
  /* Fortran order: the logical array comes back, as a transposed view. */
  a = jx_io_load_npy(IO_FIXTURES "/f64_fortran_2x3.npy");
  CHECK(a && jx_dtype_of(a) == JX_FLOAT64 && jx_ndim(a) == 2 && jx_shape(a)[0] == 2 &&
        jx_shape(a)[1] == 3);
  double *v = io_values(a);
  const double wantf[6] = {-2.25, -1.5, -0.75, 0, 0.75, 1.5};
  for (int i = 0; v && i < 6; i++) CHECK_MSG(v[i] == wantf[i], "fortran [%d] %g", i, v[i]);
  free(v);
  jx_free(a);
  jx_config_enable_x64(false);
  /* Format 2.0 (4-byte header length). */
  a = jx_io_load_npy(IO_FIXTURES "/u8_v2_3.npy");
  v = io_values(a);
  CHECK(a && jx_dtype_of(a) == JX_UINT8 && v && v[0] == 0 && v[1] == 40 && v[2] == 80);
  free(v);
  jx_free(a);
  a = jx_io_load_npy(IO_FIXTURES "/bool_scalar.npy");
  CHECK(a && jx_dtype_of(a) == JX_BOOL && jx_ndim(a) == 0 && jx_item(a) == 1);
  jx_free(a);
  /* gzip-compressed input is recognized by content. */
  size_t n = 0;
  unsigned char *raw = io_slurp(IO_FIXTURES "/f32_2x3.npy", &n);
  const char *p = io_tmp("f.npy.gz");
  io_write_gz(p, raw, n);
  free(raw);
  a = jx_io_load_npy(p);
  CHECK(a && jx_size(a) == 6);
  jx_free(a);
}

/* A .npy image: magic, version, header padded to 64 bytes, then data. */
static void expect_bad_header(int major, const char *dict, size_t ndata, jx_status status,
                              const char *what) {
  static int k;
  char name[32];
  snprintf(name, sizeof name, "bad%d.npy", k++);
  const char *p = io_tmp(name);
  size_t dl = strlen(dict), pre = major == 1 ? 10 : 12;
  unsigned char buf[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
  buf[8] = (unsigned char)dl;
  buf[9] = (unsigned char)(dl >> 8);
  memcpy(buf + pre, dict, dl);
  io_write_file(p, buf, pre + dl + ndata);
  jx_array *a = jx_io_load_npy(p);
  CHECK_MSG(!a, "%s loaded", dict);
  jx_free(a);
  CHECK_IO_ERROR(status, p, what);
}

static void test_malformed(void) {
#define H(descr, fortran, shape) \
  "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }\n"
  expect_bad_header(1, H("<f4", "False", "(2,)"), 7, JX_ERR_IO, "truncated data");
  expect_bad_header(1, H("<f4", "False", "(2,)"), 9, JX_ERR_IO, "trailing data");
  expect_bad_header(1, H("<c4", "False", "(2,)"), 16, JX_ERR_UNSUPPORTED, "'<c4'");
  expect_bad_header(1, H("|O", "False", "(2,)"), 16, JX_ERR_UNSUPPORTED, "'|O'");
  expect_bad_header(1, H("<f4x", "False", "(2,)"), 8, JX_ERR_UNSUPPORTED, "'<f4x'");
  expect_bad_header(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                    4, JX_ERR_UNSUPPORTED, "structured");
  expect_bad_header(1, H("<f4", "false", "(2,)"), 8, JX_ERR_IO, "True or False");
  expect_bad_header(1, H("<f4", "False", "(2)"), 8, JX_ERR_IO, "(n,) expected");
  expect_bad_header(1, H("<f4", "False", "(-2,)"), 8, JX_ERR_IO, "non-negative");
  expect_bad_header(1, H("<f4", "False", "[2]"), 8, JX_ERR_IO, "not a tuple");
  expect_bad_header(1, H("<f4", "False", "(99999999999999999999,)"), 8, JX_ERR_IO,
                    "non-negative ints");
  expect_bad_header(1, H("<f8", "False", "(4294967296, 4294967296)"), 8, JX_ERR_IO, "overflows");
  expect_bad_header(1, H("<f4", "False", "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,)"), 4,
                    JX_ERR_UNSUPPORTED, "more dimensions");
  expect_bad_header(1, "{'descr': '<f4', 'shape': (1,), }", 4, JX_ERR_IO, "lacks");
  expect_bad_header(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4,
                    JX_ERR_IO, "other than");
  expect_bad_header(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                    "'shape': (1,)}", 4, JX_ERR_IO, "twice");
  expect_bad_header(1, "('descr', '<f4')", 4, JX_ERR_IO, "not a dict");
  expect_bad_header(1, H("<f4", "False", "(1,)") "junk", 4, JX_ERR_IO, "after the header");
  expect_bad_header(4, H("<f4", "False", "(1,)"), 4, JX_ERR_IO, "version 4.0");
  /* Format 2.0 with a 4-byte length beyond the limit. */
  const char *p = io_tmp("biglen.npy");
  io_write_file(p, "\x93NUMPY\x02\x00\xff\xff\xff\x7f{", 13);
  CHECK(jx_io_load_npy(p) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, p, "exceeds the limit");
  io_write_file(p, "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
  CHECK(jx_io_load_npy(p) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, p, "truncated header");
  io_write_file(p, "\x93NUMPX\x01\x00", 8);
  CHECK(jx_io_load_npy(p) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, p, "bad magic");
  io_write_file(p, "\x93NUM", 4);
  CHECK(jx_io_load_npy(p) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, p, "truncated magic");
  CHECK(jx_io_load_npy(NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "NULL");
  const char *nodir = io_tmp("no/dir.npy");
  jx_array *a = jx_ones(1, (int64_t[]){1}, JX_FLOAT32);
  CHECK_EQ_INT(jx_io_save_npy(nodir, a), JX_ERR_IO);
  CHECK_IO_ERROR(JX_ERR_IO, nodir, "cannot open for writing");
  jx_free(a);
#undef H
}

int main(void) {
  TEST_RUN(test_round_trip);
  TEST_RUN(test_matches_numpy);
  TEST_RUN(test_numpy_fixtures);
  TEST_RUN(test_malformed);
  io_tmp_cleanup();
  return test_finish();
}
