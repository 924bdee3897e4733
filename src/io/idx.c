/* idx.c -- the IDX format of MNIST / Fashion-MNIST (yann.lecun.com/exdb/mnist): a
 * 4-byte magic 00 00 <type code> <ndim>, ndim big-endian int32 dims, then the elements,
 * big-endian, C order. Files may be gzip-compressed (detected by content). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/io.h"

/* Type codes of the format, and the dtypes they map to. */
static const struct {
  unsigned char code;
  jx_dtype dtype;
} idx_types[] = {
    {0x08, JX_UINT8}, {0x09, JX_INT8},    {0x0B, JX_INT16},
    {0x0C, JX_INT32}, {0x0D, JX_FLOAT32}, {0x0E, JX_FLOAT64},
};
#define IDX_NTYPES (int)(sizeof idx_types / sizeof idx_types[0])

static jx_array *idx_read(IoReader *r) {
  unsigned char magic[4];
  if (!io_read_exact(r, magic, 4, "header (magic number)")) return NULL;
  if (magic[0] != 0 || magic[1] != 0) {
    io_fail(JX_ERR_IO, r->fn, r->name,
            "bad magic number %02x %02x %02x %02x: an IDX file starts with 00 00 <type> "
            "<ndim>", magic[0], magic[1], magic[2], magic[3]);
    return NULL;
  }
  int t = 0;
  while (t < IDX_NTYPES && idx_types[t].code != magic[2]) t++;
  if (t == IDX_NTYPES) {
    io_fail(JX_ERR_IO, r->fn, r->name,
            "unknown type code 0x%02x (expected 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C "
            "int32, 0x0D float32 or 0x0E float64)", magic[2]);
    return NULL;
  }
  jx_dtype dtype = idx_types[t].dtype;
  int ndim = magic[3];
  if (ndim > JX_MAX_NDIM) {
    io_fail(JX_ERR_UNSUPPORTED, r->fn, r->name, "%d dimensions, more than the %d jaxc supports", ndim,
            JX_MAX_NDIM);
    return NULL;
  }
  unsigned char dims[4 * JX_MAX_NDIM];
  if (!io_read_exact(r, dims, 4 * (size_t)ndim, "header (dimensions)")) return NULL;
  int64_t shape[JX_MAX_NDIM];
  for (int i = 0; i < ndim; i++) {
    uint32_t d = (uint32_t)dims[4 * i] << 24 | (uint32_t)dims[4 * i + 1] << 16 |
                 (uint32_t)dims[4 * i + 2] << 8 | dims[4 * i + 3];
    if (d > INT32_MAX) {
      io_fail(JX_ERR_IO, r->fn, r->name, "dimension %d is negative (%d)", i, (int32_t)d);
      return NULL;
    }
    shape[i] = d;
  }
  size_t itemsize = jx_dtype_itemsize(dtype);
  int64_t nbytes = io_nbytes(ndim, shape, itemsize);
  char sb[ERROR_SHAPE_BUF];
  if (nbytes < 0 || (uint64_t)nbytes > SIZE_MAX) {
    io_fail(JX_ERR_IO, r->fn, r->name, "dimensions %s of %s overflow the addressable size",
            error_shape_str(sb, ndim, shape), jx_dtype_name(dtype));
    return NULL;
  }
  /* Grows with the bytes actually present: a header claiming terabytes fails as
   * truncated after reading what the file holds. */
  void *data = io_read_alloc(r, (size_t)nbytes, "data");
  if (!data) return NULL;
  if (!io_expect_end(r)) {
    free(data);
    return NULL;
  }
  int64_t n = nbytes / (int64_t)itemsize;
  if (io_host_little_endian()) io_swap_bytes(data, n, itemsize);
  jx_array *a = jx_array_from(data, dtype, ndim, shape);
  free(data);
  return a;
}

jx_array *jx_io_read_idx(const char *path) {
  if (!path) {
    error_set(JX_ERR_VALUE, "jx_io_read_idx: path is NULL");
    return NULL;
  }
  IoReader r;
  if (!io_reader_open_file(&r, "jx_io_read_idx", path)) return NULL;
  jx_array *a = idx_read(&r);
  io_reader_close(&r);
  return a;
}

jx_array *idx_read_memory(const char *name, const void *data, size_t len) {
  IoReader r;
  if (!io_reader_open_memory(&r, "jx_io_read_idx", name, data, len)) return NULL;
  jx_array *a = idx_read(&r);
  io_reader_close(&r);
  return a;
}

jx_status jx_io_write_idx(const char *path, jx_array *a, bool gzip) {
  static const char fn[] = "jx_io_write_idx";
  if (!path || !a) {
    if (error_pending()) return jx_last_status();
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, path ? "the array" : "path");
    return JX_ERR_VALUE;
  }
  jx_dtype dtype = jx_dtype_of(a);
  int t = 0;
  while (t < IDX_NTYPES && idx_types[t].dtype != dtype) t++;
  if (t == IDX_NTYPES) {
    error_set(JX_ERR_DTYPE, "%s: %s: IDX has no type code for %s (uint8, int8, int16, int32, "
              "float32 and float64 only)", fn, path, jx_dtype_name(dtype));
    return JX_ERR_DTYPE;
  }
  int ndim = jx_ndim(a);
  const int64_t *shape = jx_shape(a);
  unsigned char header[4 + 4 * JX_MAX_NDIM] = {0, 0, idx_types[t].code, (unsigned char)ndim};
  for (int i = 0; i < ndim; i++) {
    if (shape[i] > INT32_MAX) {
      char sb[ERROR_SHAPE_BUF];
      error_set(JX_ERR_SHAPE, "%s: %s: dimension %d of %s does not fit IDX's int32", fn, path,
                i, error_shape_str(sb, ndim, shape));
      return JX_ERR_SHAPE;
    }
    uint32_t d = (uint32_t)shape[i];
    header[4 + 4 * i] = (unsigned char)(d >> 24);
    header[5 + 4 * i] = (unsigned char)(d >> 16);
    header[6 + 4 * i] = (unsigned char)(d >> 8);
    header[7 + 4 * i] = (unsigned char)d;
  }
  size_t nbytes;
  void *data = io_array_bytes(fn, a, &nbytes);
  if (!data) return jx_last_status();
  size_t itemsize = jx_dtype_itemsize(dtype);
  if (io_host_little_endian()) io_swap_bytes(data, (int64_t)(nbytes / itemsize), itemsize);
  IoWriter w;
  jx_status s = io_writer_open(&w, fn, path, gzip);
  if (s == JX_OK) {
    if (io_write(&w, header, 4 + 4 * (size_t)ndim)) io_write(&w, data, nbytes);
    s = io_writer_close(&w);
  }
  free(data);
  return s;
}
