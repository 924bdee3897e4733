/* test_idx.c -- the IDX reader and writer (src/io/idx.c): every type code, plain and
 * gzip, byte order, the writer's exact bytes, every kind of malformed, truncated or
 * corrupt file (status + a message naming the path and the problem), and the real
 * Fashion-MNIST files when the dataset-fashion-mnist package is installed. */
#include "io_test.h"

/* Big-endian IDX image of a 2x3 array of the given type code, from 6 doubles. */
static size_t idx_image(unsigned char *out, unsigned code, const double *v) {
  unsigned char *p = out;
  *p++ = 0, *p++ = 0, *p++ = (unsigned char)code, *p++ = 2;
  const uint32_t dims[2] = {2, 3};
  for (int i = 0; i < 2; i++)
    for (int b = 3; b >= 0; b--) *p++ = (unsigned char)(dims[i] >> (8 * b));
  for (int i = 0; i < 6; i++) {
    uint64_t bits = 0;
    int size = 0;
    switch (code) {
      case 0x08: bits = (uint8_t)v[i], size = 1; break;
      case 0x09: bits = (uint8_t)(int8_t)v[i], size = 1; break;
      case 0x0B: bits = (uint16_t)(int16_t)v[i], size = 2; break;
      case 0x0C: bits = (uint32_t)(int32_t)v[i], size = 4; break;
      case 0x0D: {
        float f = (float)v[i];
        uint32_t u;
        memcpy(&u, &f, 4);
        bits = u, size = 4;
        break;
      }
      case 0x0E: memcpy(&bits, &v[i], 8), size = 8; break;
    }
    for (int b = size - 1; b >= 0; b--) *p++ = (unsigned char)(bits >> (8 * b));
  }
  return (size_t)(p - out);
}

static const struct {
  unsigned code;
  jx_dtype dtype;
  double v[6];
} types[] = {
    {0x08, JX_UINT8, {0, 1, 127, 128, 200, 255}},
    {0x09, JX_INT8, {-128, -1, 0, 1, 100, 127}},
    {0x0B, JX_INT16, {-32768, -300, 0, 258, 4660, 32767}},
    {0x0C, JX_INT32, {-2147483648.0, -65536, 0, 16909060, 305419896, 2147483647}},
    {0x0D, JX_FLOAT32, {-1.5, 0, 0.1f, 3.25, 1e30, -7}},
    {0x0E, JX_FLOAT64, {-1.5, 0, 0.1, 3.141592653589793, 1e300, -7}},
};

static void check_values(jx_array *a, jx_dtype dtype, const double *v) {
  CHECK(a != NULL);
  if (!a) return;
  CHECK_EQ_INT(jx_dtype_of(a), dtype);
  CHECK_EQ_INT(jx_ndim(a), 2);
  CHECK_EQ_INT(jx_shape(a)[0], 2);
  CHECK_EQ_INT(jx_shape(a)[1], 3);
  double *got = io_values(a);
  for (int i = 0; got && i < 6; i++) {
    double want = dtype == JX_FLOAT32 ? (double)(float)v[i] : v[i];
    CHECK_MSG(got[i] == want, "%s element %d: %.17g != %.17g", jx_dtype_name(dtype), i, got[i],
              want);
  }
  free(got);
}

/* Every type code, plain and gzip; float64 in both x64 modes. */
static void test_read_every_type(void) {
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    unsigned char img[64];
    size_t n = idx_image(img, types[t].code, types[t].v);
    for (int x64 = 0; x64 < 2; x64++) {
      if (x64 && types[t].dtype != JX_FLOAT64) continue;
      jx_config_enable_x64(x64);
      jx_dtype want = types[t].dtype == JX_FLOAT64 && !x64 ? JX_FLOAT32 : types[t].dtype;
      const double *v = types[t].v;
      double rounded[6];
      if (want != types[t].dtype) {
        for (int i = 0; i < 6; i++) rounded[i] = (float)v[i];
        v = rounded;
      }
      const char *plain = io_tmp("t.idx"), *gz = io_tmp("t.idx.gz");
      io_write_file(plain, img, n);
      io_write_gz(gz, img, n);
      jx_array *a = jx_io_read_idx(plain);
      check_values(a, want, v);
      jx_array *b = jx_io_read_idx(gz);
      check_values(b, want, v);
      jx_free(a);
      jx_free(b);
    }
  }
  jx_config_enable_x64(false);
}

/* The writer produces exactly the reference bytes, and gzip output reads back. */
static void test_write_every_type(void) {
  jx_config_enable_x64(true);
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    unsigned char img[64];
    size_t n = idx_image(img, types[t].code, types[t].v);
    jx_scope_begin(); /* releases the arrays made in this iteration */
    jx_array *a = jx_astype(jx_array_from(types[t].v, JX_FLOAT64, 2, (int64_t[]){2, 3}),
                            types[t].dtype);
    const char *plain = io_tmp("w.idx"), *gz = io_tmp("w.idx.gz");
    CHECK_EQ_INT(jx_io_write_idx(plain, a, false), JX_OK);
    CHECK_EQ_INT(jx_io_write_idx(gz, a, true), JX_OK);
    size_t len = 0;
    unsigned char *bytes = io_slurp(plain, &len);
    CHECK_MSG(bytes && len == n && memcmp(bytes, img, n) == 0, "%s: written bytes differ",
              jx_dtype_name(types[t].dtype));
    free(bytes);
    bytes = io_slurp(gz, &len);
    CHECK(bytes && len > 2 && bytes[0] == 0x1f && bytes[1] == 0x8b);
    free(bytes);
    check_values(jx_io_read_idx(gz), types[t].dtype, types[t].v);
    jx_scope_end(0, NULL);
  }
  jx_config_enable_x64(false);
}

/* Shapes other than 2-d: a scalar (ndim 0), 1-d, 4-d, and an empty array. */
static void test_shapes(void) {
  const char *p = io_tmp("s.idx");
  io_write_file(p, (unsigned char[]){0, 0, 0x08, 0, 42}, 5);
  jx_array *s = jx_io_read_idx(p);
  CHECK(s && jx_ndim(s) == 0 && jx_item(s) == 42);
  jx_free(s);
  int64_t shape4[4] = {2, 1, 3, 2};
  jx_array *a = jx_arange(0, 12, 1, JX_INT32);
  jx_array *r = jx_reshape(a, 4, shape4);
  CHECK_EQ_INT(jx_io_write_idx(p, r, false), JX_OK);
  jx_array *b = jx_io_read_idx(p);
  CHECK(b && jx_ndim(b) == 4 && jx_shape(b)[2] == 3 && jx_dtype_of(b) == JX_INT32);
  double *v = io_values(b);
  for (int i = 0; v && i < 12; i++) CHECK_EQ_INT(v[i], i);
  free(v);
  jx_array *e = jx_zeros(2, (int64_t[]){0, 5}, JX_UINT8);
  CHECK_EQ_INT(jx_io_write_idx(p, e, true), JX_OK);
  jx_array *e2 = jx_io_read_idx(p);
  CHECK(e2 && jx_ndim(e2) == 2 && jx_shape(e2)[0] == 0 && jx_shape(e2)[1] == 5);
  jx_free(a);
  jx_free(r);
  jx_free(b);
  jx_free(e);
  jx_free(e2);
}

/* A file over 1 MiB: the reader's buffer growth, direct reads and multi-chunk gzip. */
static void test_large(void) {
  const int64_t shape[2] = {300, 1000};
  int32_t *v = malloc(300000 * sizeof *v);
  for (int i = 0; i < 300000; i++) v[i] = (int32_t)((int64_t)i * 7919 % 2000000011 - 1000000000);
  jx_array *a = jx_array_from(v, JX_INT32, 2, shape);
  const char *plain = io_tmp("big.idx"), *gz = io_tmp("big.idx.gz");
  CHECK_EQ_INT(jx_io_write_idx(plain, a, false), JX_OK);
  CHECK_EQ_INT(jx_io_write_idx(gz, a, true), JX_OK);
  for (int k = 0; k < 2; k++) {
    jx_array *b = jx_io_read_idx(k ? gz : plain);
    CHECK(b && jx_size(b) == 300000);
    int32_t *got = malloc(300000 * sizeof *got);
    CHECK_EQ_INT(jx_read(b, got, 300000 * sizeof *got), JX_OK);
    CHECK(memcmp(got, v, 300000 * sizeof *v) == 0);
    free(got);
    jx_free(b);
  }
  free(v);
  jx_free(a);
}

/* Concatenated gzip members read as one stream (as gzip -d does). */
static void test_gzip_members(void) {
  unsigned char img[64];
  size_t n = idx_image(img, 0x08, types[0].v);
  size_t l1 = 0, l2 = 0;
  unsigned char *g1 = io_gzip(img, 10, &l1), *g2 = io_gzip(img + 10, n - 10, &l2);
  unsigned char *both = malloc(l1 + l2);
  memcpy(both, g1, l1);
  memcpy(both + l1, g2, l2);
  const char *p = io_tmp("m.idx.gz");
  io_write_file(p, both, l1 + l2);
  jx_array *a = jx_io_read_idx(p);
  check_values(a, JX_UINT8, types[0].v);
  jx_free(a);
  free(g1);
  free(g2);
  free(both);
}

/* Writes bytes to a file and expects jx_io_read_idx to fail naming the path + what. */
static void expect_bad(const char *name, const void *bytes, size_t n, bool gzip, jx_status status,
                       const char *what) {
  const char *p = io_tmp(name);
  if (gzip) io_write_gz(p, bytes, n);
  else io_write_file(p, bytes, n);
  jx_array *a = jx_io_read_idx(p);
  CHECK_MSG(a == NULL, "%s: read succeeded", name);
  jx_free(a);
  CHECK_IO_ERROR(status, p, what);
}

static void test_malformed(void) {
  unsigned char img[64];
  size_t n = idx_image(img, 0x0C, types[3].v);
  for (int gz = 0; gz < 2; gz++) {
    const char *sfx = gz ? ".gz" : "";
    char name[64];
#define BAD(label, bytes, len, what)                                  \
  snprintf(name, sizeof name, "%s.idx%s", label, sfx);                \
  expect_bad(name, bytes, len, gz, JX_ERR_IO, what)
    BAD("empty", img, 0, "truncated header");
    BAD("short_magic", img, 3, "truncated header");
    BAD("bad_magic", ((unsigned char[]){1, 0, 8, 1, 0, 0, 0, 1, 0}), 9, "bad magic");
    BAD("text", "hello world", 11, "bad magic");
    BAD("bad_type", ((unsigned char[]){0, 0, 0x0A, 1, 0, 0, 0, 1, 0}), 9, "unknown type code 0x0a");
    BAD("short_dims", img, 9, "truncated header (dimensions)");
    BAD("short_data", img, n - 1, "truncated data");
    BAD("no_data", img, 12, "truncated data");
    BAD("negative", ((unsigned char[]){0, 0, 8, 1, 0x80, 0, 0, 1}), 8, "negative");
    /* 4 dims of 2^31-1 float64: 1.6e38 bytes. */
    BAD("overflow", ((unsigned char[]){0, 0, 0x0E, 4, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff,
                                       0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff}),
        20, "overflow");
    /* Overflow even with a zero dim: strides would not fit. */
    BAD("overflow0", ((unsigned char[]){0, 0, 0x0E, 4, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0x7f,
                                        0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff}),
        20, "overflow");
    /* Declares 2^31-1 x 2^31-1 uint8 (4.6e18 bytes) but holds 5: fails without
     * allocating what it claims. */
    BAD("huge", ((unsigned char[]){0, 0, 8, 2, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 1, 2,
                                   3, 4, 5}),
        17, "truncated data");
    unsigned char longer[80];
    memcpy(longer, img, n);
    longer[n] = 9;
    BAD("trailing", longer, n + 1, "trailing data");
#undef BAD
    /* a valid file of more dims than jaxc has: unsupported (io.h), as npy and safetensors */
    snprintf(name, sizeof name, "ndim.idx%s", sfx);
    expect_bad(name, ((unsigned char[]){0, 0, 8, 17, 0, 0, 0, 1}), 8, gz, JX_ERR_UNSUPPORTED, "17 dimensions");
  }
}

static void test_corrupt_gzip(void) {
  unsigned char img[64];
  size_t n = idx_image(img, 0x0D, types[4].v);
  size_t len = 0;
  unsigned char *gz = io_gzip(img, n, &len);
  unsigned char *bad = malloc(len + 16);
  const char *p = io_tmp("c.idx.gz");
  /* Cut at every length: each is an error (never a crash, never a success). */
  for (size_t cut = 2; cut < len; cut++) {
    io_write_file(p, gz, cut);
    jx_array *a = jx_io_read_idx(p);
    CHECK_MSG(a == NULL, "cut at %zu of %zu read", cut, len);
    jx_free(a);
    CHECK_MSG(strstr(jx_last_error(), p) && (strstr(jx_last_error(), "gzip") ||
                                             strstr(jx_last_error(), "truncated")),
              "cut %zu: %s", cut, jx_last_error());
    CHECK_ERROR(JX_ERR_IO, NULL);
  }
  io_write_file(p, gz, len - 3);
  CHECK(jx_io_read_idx(p) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, p, "gzip data truncated");
  /* A broken deflate block header. */
  memcpy(bad, gz, len);
  bad[10] ^= 0xff;
  io_write_file(p, bad, len);
  CHECK(jx_io_read_idx(p) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, p, "corrupt gzip data");
  /* A wrong CRC in the trailer. */
  memcpy(bad, gz, len);
  bad[len - 8] ^= 1;
  io_write_file(p, bad, len);
  CHECK(jx_io_read_idx(p) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, p, "incorrect data check");
  /* Garbage after the compressed stream. */
  memcpy(bad, gz, len);
  memcpy(bad + len, "garbage!", 8);
  io_write_file(p, bad, len + 8);
  CHECK(jx_io_read_idx(p) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, p, "is not another gzip member");
  free(gz);
  free(bad);
}

static void test_arguments(void) {
  const char *missing = io_tmp("does-not-exist.idx");
  CHECK(jx_io_read_idx(missing) == NULL);
  CHECK_IO_ERROR(JX_ERR_IO, missing, "cannot open");
  CHECK(jx_io_read_idx(NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "path is NULL");
  jx_array *b = jx_ones(1, (int64_t[]){3}, JX_BOOL);
  const char *p = io_tmp("bool.idx");
  CHECK_EQ_INT(jx_io_write_idx(p, b, false), JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "bool");
  CHECK(!io_exists(p));
  const char *nodir = io_tmp("no/such/dir/x.idx");
  jx_array *u = jx_ones(1, (int64_t[]){3}, JX_UINT8);
  CHECK_EQ_INT(jx_io_write_idx(nodir, u, false), JX_ERR_IO);
  CHECK_IO_ERROR(JX_ERR_IO, nodir, "cannot open for writing");
  CHECK_EQ_INT(jx_io_write_idx(p, NULL, false), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "NULL");
  jx_free(b);
  jx_free(u);
}

/* The real data set (Debian's dataset-fashion-mnist), or JAXC_FASHION_MNIST_DIR. */
static void test_fashion_mnist(void) {
  const char *dir = getenv("JAXC_FASHION_MNIST_DIR");
  if (!dir || !*dir) dir = "/usr/share/datasets/fashion-mnist";
  char path[4][512];
  const char *files[4] = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                          "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
  for (int i = 0; i < 4; i++) {
    snprintf(path[i], sizeof path[i], "%s/%s", dir, files[i]);
    if (!io_exists(path[i])) {
      printf("note: %s not found; skipping the Fashion-MNIST check "
             "(apt-get install dataset-fashion-mnist)\n", path[i]);
      return;
    }
  }
  for (int split = 0; split < 2; split++) {
    int64_t n = split ? 10000 : 60000;
    jx_array *images = jx_io_read_idx(path[2 * split]);
    jx_array *labels = jx_io_read_idx(path[2 * split + 1]);
    CHECK(images && labels);
    if (!images || !labels) {
      jx_free(images);
      jx_free(labels);
      return;
    }
    CHECK_EQ_INT(jx_dtype_of(images), JX_UINT8);
    CHECK_EQ_INT(jx_ndim(images), 3);
    CHECK(jx_shape(images)[0] == n && jx_shape(images)[1] == 28 && jx_shape(images)[2] == 28);
    CHECK_EQ_INT(jx_dtype_of(labels), JX_UINT8);
    CHECK(jx_ndim(labels) == 1 && jx_shape(labels)[0] == n);
    /* Fashion-MNIST is balanced: n/10 images of each of the 10 classes. */
    uint8_t *l = malloc((size_t)n);
    CHECK_EQ_INT(jx_read(labels, l, (size_t)n), JX_OK);
    int64_t count[256] = {0};
    for (int64_t i = 0; i < n; i++) count[l[i]]++;
    for (int c = 0; c < 10; c++) CHECK_EQ_INT(count[c], n / 10);
    free(l);
    /* Pixels span 0..255. */
    uint8_t *px = malloc((size_t)n * 784);
    CHECK_EQ_INT(jx_read(images, px, (size_t)n * 784), JX_OK);
    int lo = 255, hi = 0;
    for (int64_t i = 0; i < n * 784; i++) {
      if (px[i] < lo) lo = px[i];
      if (px[i] > hi) hi = px[i];
    }
    CHECK(lo == 0 && hi == 255);
    free(px);
    printf("note: read %s: %lld images of 28x28, labels balanced\n", path[2 * split],
           (long long)n);
    jx_free(images);
    jx_free(labels);
  }
}

int main(void) {
  TEST_RUN(test_read_every_type);
  TEST_RUN(test_write_every_type);
  TEST_RUN(test_shapes);
  TEST_RUN(test_large);
  TEST_RUN(test_gzip_members);
  TEST_RUN(test_malformed);
  TEST_RUN(test_corrupt_gzip);
  TEST_RUN(test_arguments);
  TEST_RUN(test_fashion_mnist);
  io_tmp_cleanup();
  return test_finish();
}
