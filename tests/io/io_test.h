/* io_test.h -- helpers shared by the tests of src/io: a scratch directory, writing raw
 * and gzip bytes to files, the fixtures folder, and a check that a failed call left the
 * expected status with a message naming both the path and what is wrong. */
#ifndef JAXC_TEST_IO_H
#define JAXC_TEST_IO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "test.h"

/* tests/io/fixtures, next to tests/golden. */
#define IO_FIXTURES JAXC_GOLDEN_DIR "/../io/fixtures"

static char io_tmpdir[256];

/* Creates the scratch directory (once) and returns dir/name in a static buffer ring. */
static inline const char *io_tmp(const char *name) {
  static char bufs[8][512];
  static int next;
  if (!io_tmpdir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(io_tmpdir, sizeof io_tmpdir, "%s/jaxc-io-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(io_tmpdir)) {
      perror("mkdtemp");
      exit(1);
    }
  }
  char *b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "%s/%s", io_tmpdir, name);
  return b;
}

/* Removes the scratch directory and what the tests left in it. */
static inline void io_tmp_cleanup(void) {
  if (!io_tmpdir[0]) return;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", io_tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", io_tmpdir);
}

static inline void io_write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

/* gzip-compresses data into a malloc'd block (a complete .gz file image). */
static inline unsigned char *io_gzip(const void *data, size_t n, size_t *outlen) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) exit(1);
  size_t cap = deflateBound(&z, (uLong)n) + 64;
  unsigned char *out = malloc(cap);
  z.next_in = (Bytef *)data;
  z.avail_in = (uInt)n;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) exit(1);
  *outlen = cap - z.avail_out;
  deflateEnd(&z);
  return out;
}

static inline void io_write_gz(const char *path, const void *data, size_t n) {
  size_t len = 0;
  unsigned char *gz = io_gzip(data, n, &len);
  io_write_file(path, gz, len);
  free(gz);
}

/* Reads a whole file into a malloc'd block. */
static inline unsigned char *io_slurp(const char *path, size_t *n) {
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  unsigned char *b = malloc(cap);
  size_t k;
  while ((k = fread(b + len, 1, cap - len, f)) > 0) {
    len += k;
    if (len == cap) b = realloc(b, cap *= 2);
  }
  fclose(f);
  *n = len;
  return b;
}

static inline bool io_exists(const char *path) { return access(path, F_OK) == 0; }

/* a's raw elements (C order) in a malloc'd block; NULL for NULL. */
static inline void *io_raw(jx_array *a, size_t *nbytes) {
  *nbytes = 0;
  if (!a) return NULL;
  *nbytes = (size_t)jx_size(a) * jx_dtype_itemsize(jx_dtype_of(a));
  void *b = malloc(*nbytes ? *nbytes : 1);
  if (jx_read(a, b, *nbytes) != JX_OK) {
    free(b);
    return NULL;
  }
  return b;
}

/* a's elements as doubles, converted exactly from the raw bytes (test_read_f64 goes
 * through float32 when x64 is off). float16/bfloat16 are not handled (compare raw). */
static inline double *io_values(jx_array *a) {
  size_t nbytes;
  unsigned char *raw = io_raw(a, &nbytes);
  if (!raw) return NULL;
  int64_t n = jx_size(a);
  double *out = malloc(n ? (size_t)n * sizeof *out : 1);
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *p = raw + (size_t)i * jx_dtype_itemsize(jx_dtype_of(a));
    switch (jx_dtype_of(a)) {
      case JX_BOOL: out[i] = *p; break;
      case JX_UINT8: out[i] = *p; break;
      case JX_INT8: out[i] = *(const int8_t *)p; break;
#define IO_CASE(D, T) case D: { T v; memcpy(&v, p, sizeof v); out[i] = (double)v; break; }
      IO_CASE(JX_INT16, int16_t)
      IO_CASE(JX_UINT16, uint16_t)
      IO_CASE(JX_INT32, int32_t)
      IO_CASE(JX_UINT32, uint32_t)
      IO_CASE(JX_INT64, int64_t)
      IO_CASE(JX_UINT64, uint64_t)
      IO_CASE(JX_FLOAT32, float)
      IO_CASE(JX_FLOAT64, double)
#undef IO_CASE
      default: out[i] = NAN; break;
    }
  }
  free(raw);
  return out;
}

/* The pending error must be `status` and name both `path` and `what`; clears it. */
#define CHECK_IO_ERROR(status, path, what)                                           \
  do {                                                                              \
    CHECK_MSG(strstr(jx_last_error(), (path)) != NULL, "message \"%s\" lacks the path %s", \
              jx_last_error(), (path));                                             \
    CHECK_ERROR((status), (what));                                                  \
  } while (0)

#endif
