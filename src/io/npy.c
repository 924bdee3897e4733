/* npy.c -- NumPy's .npy format (numpy.lib.format): "\x93NUMPY", version major/minor,
 * a little-endian header length (2 bytes in 1.0, 4 bytes in 2.0 and 3.0), a Python dict
 * literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
 * spaces and a newline, then the raw data. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/io.h"

/* numpy refuses headers above 10 kB by default; we allow more but stay bounded. */
#define NPY_MAX_HEADER (1u << 20)

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* descr type letter + item size -> dtype (bfloat16 has no NumPy descr). */
static const struct {
  char kind;
  int size;
  jx_dtype dtype;
} npy_types[] = {
    {'b', 1, JX_BOOL},    {'i', 1, JX_INT8},    {'u', 1, JX_UINT8},   {'i', 2, JX_INT16},
    {'u', 2, JX_UINT16},  {'i', 4, JX_INT32},   {'u', 4, JX_UINT32},  {'i', 8, JX_INT64},
    {'u', 8, JX_UINT64},  {'f', 2, JX_FLOAT16}, {'f', 4, JX_FLOAT32}, {'f', 8, JX_FLOAT64},
    {'c', 8, JX_COMPLEX64}, {'c', 16, JX_COMPLEX128}, /* (re, im) pairs */
};
#define NPY_NTYPES (int)(sizeof npy_types / sizeof npy_types[0])

/* ---------------------------------------------- the header's Python literal */

typedef struct Lit {
  const char *s;
  size_t len, pos;
} Lit;

static void lit_ws(Lit *p) {
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                             p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
    p->pos++;
}

static bool lit_eat(Lit *p, char c) {
  lit_ws(p);
  if (p->pos < p->len && p->s[p->pos] == c) {
    p->pos++;
    return true;
  }
  return false;
}

/* A quoted string without escapes, copied into buf (cap bytes). */
static bool lit_string(Lit *p, char *buf, size_t cap) {
  lit_ws(p);
  if (p->pos >= p->len || (p->s[p->pos] != '\'' && p->s[p->pos] != '"')) return false;
  char q = p->s[p->pos++];
  size_t n = 0;
  while (p->pos < p->len && p->s[p->pos] != q) {
    if (p->s[p->pos] == '\\' || n + 1 >= cap) return false;
    buf[n++] = p->s[p->pos++];
  }
  if (p->pos >= p->len) return false;
  p->pos++;
  buf[n] = '\0';
  return true;
}

static bool lit_word(Lit *p, const char *w) {
  lit_ws(p);
  size_t n = strlen(w);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return false;
  p->pos += n;
  return true;
}

/* A non-negative Python int (an "L" suffix, written by Python 2, is accepted). */
static bool lit_int(Lit *p, int64_t *out) {
  lit_ws(p);
  size_t start = p->pos;
  int64_t v = 0;
  while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
    int d = p->s[p->pos++] - '0';
    if (v > (INT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (p->pos == start) return false;
  if (p->pos < p->len && p->s[p->pos] == 'L') p->pos++;
  *out = v;
  return true;
}

typedef struct NpyHeader {
  char descr[16];
  bool fortran;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
} NpyHeader;

/* Parses the dict literal; on failure returns a message describing what is wrong and
 * sets *unsupported when the header is valid but asks for what jaxc lacks. */
static const char *npy_parse_header(const char *text, size_t len, NpyHeader *h,
                                    bool *unsupported) {
  *unsupported = false;
  Lit p = {text, len, 0};
  bool seen_descr = false, seen_fortran = false, seen_shape = false;
  if (!lit_eat(&p, '{')) return "the header is not a dict literal ('{' expected)";
  while (!lit_eat(&p, '}')) {
    char key[32];
    if (!lit_string(&p, key, sizeof key)) return "a quoted key is expected in the header dict";
    if (!lit_eat(&p, ':')) return "':' expected after a key in the header dict";
    if (strcmp(key, "descr") == 0 && !seen_descr) {
      seen_descr = true;
      lit_ws(&p);
      if (p.pos < p.len && p.s[p.pos] == '[') {
        *unsupported = true;
        return "structured dtypes (a list descr) are not supported";
      }
      if (!lit_string(&p, h->descr, sizeof h->descr)) return "'descr' is not a short string";
    } else if (strcmp(key, "fortran_order") == 0 && !seen_fortran) {
      seen_fortran = true;
      if (lit_word(&p, "True")) h->fortran = true;
      else if (lit_word(&p, "False")) h->fortran = false;
      else return "'fortran_order' is not True or False";
    } else if (strcmp(key, "shape") == 0 && !seen_shape) {
      seen_shape = true;
      if (!lit_eat(&p, '(')) return "'shape' is not a tuple";
      h->ndim = 0;
      while (!lit_eat(&p, ')')) {
        int64_t d;
        if (!lit_int(&p, &d)) return "'shape' holds something other than non-negative ints";
        if (h->ndim == JX_MAX_NDIM) {
          *unsupported = true;
          return "'shape' has more dimensions than jaxc supports";
        }
        h->shape[h->ndim++] = d;
        if (!lit_eat(&p, ',')) {
          if (!lit_eat(&p, ')')) return "',' or ')' expected in 'shape'";
          if (h->ndim == 1) return "'shape' (n) is not a tuple: (n,) expected";
          break;
        }
      }
    } else {
      return "the header dict has a key other than 'descr', 'fortran_order' and 'shape', "
             "or one twice";
    }
    if (!lit_eat(&p, ',')) {
      if (!lit_eat(&p, '}')) return "',' or '}' expected in the header dict";
      break;
    }
  }
  lit_ws(&p);
  if (p.pos != p.len) return "unexpected text after the header dict";
  if (!seen_descr || !seen_fortran || !seen_shape)
    return "the header dict lacks 'descr', 'fortran_order' or 'shape'";
  return NULL;
}

/* ---------------------------------------------------------------- reading */

static jx_array *npy_read(IoReader *r) {
  unsigned char pre[12];
  if (!io_read_exact(r, pre, 8, "magic and version")) return NULL;
  if (memcmp(pre, npy_magic, 6) != 0) {
    io_fail(JX_ERR_IO, r->fn, r->name, "bad magic: a .npy file starts with \\x93NUMPY");
    return NULL;
  }
  int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0) {
    io_fail(JX_ERR_IO, r->fn, r->name, "unknown format version %d.%d (1.0, 2.0, 3.0 known)",
            major, minor);
    return NULL;
  }
  size_t lensize = major == 1 ? 2 : 4;
  if (!io_read_exact(r, pre + 8, lensize, "header length")) return NULL;
  uint32_t hlen = 0;
  for (size_t i = lensize; i-- > 0;) hlen = hlen << 8 | pre[8 + i];
  if (hlen > NPY_MAX_HEADER) {
    io_fail(JX_ERR_IO, r->fn, r->name, "header length %u exceeds the limit of %u bytes", hlen,
            NPY_MAX_HEADER);
    return NULL;
  }
  char *text = io_read_alloc(r, hlen, "header");
  if (!text) return NULL;
  NpyHeader h = {0};
  bool unsupported;
  const char *why = npy_parse_header(text, hlen, &h, &unsupported);
  free(text);
  if (why) {
    io_fail(unsupported ? JX_ERR_UNSUPPORTED : JX_ERR_IO, r->fn, r->name, "%s", why);
    return NULL;
  }
  /* descr: byte order ('<' little, '>' big, '|' not applicable, '=' native), kind, size. */
  const char *d = h.descr;
  char order = d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=' ? *d++ : '=';
  char kind = d[0];
  char *end = NULL;
  long size = kind ? strtol(d + 1, &end, 10) : 0;
  int t = 0;
  if (kind && end && *end == '\0' && end != d + 1)
    while (t < NPY_NTYPES && !(npy_types[t].kind == kind && npy_types[t].size == size)) t++;
  else
    t = NPY_NTYPES;
  if (t == NPY_NTYPES) {
    io_fail(JX_ERR_UNSUPPORTED, r->fn, r->name, "dtype '%s' is not supported (bool, int, uint "
            "and float of 1-8 bytes and complex of 8 or 16 are)", h.descr);
    return NULL;
  }
  jx_dtype dtype = npy_types[t].dtype;
  size_t itemsize = (size_t)npy_types[t].size;
  int64_t nbytes = io_nbytes(h.ndim, h.shape, itemsize);
  if (nbytes < 0 || (uint64_t)nbytes > SIZE_MAX) {
    char sb[ERROR_SHAPE_BUF];
    io_fail(JX_ERR_IO, r->fn, r->name, "shape %s of '%s' overflows",
            error_shape_str(sb, h.ndim, h.shape), h.descr);
    return NULL;
  }
  void *data = io_read_alloc(r, (size_t)nbytes, "data");
  if (!data) return NULL;
  if (!io_expect_end(r)) {
    free(data);
    return NULL;
  }
  int64_t n = nbytes / (int64_t)itemsize;
  bool file_little = order == '<' || (order != '>' && io_host_little_endian());
  if (file_little != io_host_little_endian()) /* complex: each part swaps on its own */
    io_swap_bytes(data, kind == 'c' ? 2 * n : n, kind == 'c' ? itemsize / 2 : itemsize);
  if (dtype == JX_BOOL) io_normalize_bool(data, n);
  if (!h.fortran) {
    jx_array *a = jx_array_from(data, dtype, h.ndim, h.shape);
    free(data);
    return a;
  }
  /* Fortran order: the data is the C-order array of the reversed shape, transposed. */
  int64_t rev[JX_MAX_NDIM];
  for (int i = 0; i < h.ndim; i++) rev[i] = h.shape[h.ndim - 1 - i];
  jx_array *c = jx_array_from(data, dtype, h.ndim, rev);
  free(data);
  jx_array *a = jx_transpose(c, NULL);
  jx_free(c);
  return a;
}

jx_array *jx_io_load_npy(const char *path) {
  if (!path) {
    error_set(JX_ERR_VALUE, "jx_io_load_npy: path is NULL");
    return NULL;
  }
  IoReader r;
  if (!io_reader_open_file(&r, "jx_io_load_npy", path)) return NULL;
  jx_array *a = npy_read(&r);
  io_reader_close(&r);
  return a;
}

jx_array *npy_load_memory(const char *name, const void *data, size_t len) {
  IoReader r;
  jx_array *a = NULL;
  if (io_reader_open_memory(&r, "jx_io_load_npy", name, data, len)) a = npy_read(&r);
  io_reader_close(&r);
  return a;
}

/* ---------------------------------------------------------------- writing */

jx_status jx_io_save_npy(const char *path, jx_array *a) {
  static const char fn[] = "jx_io_save_npy";
  if (!path || !a) {
    if (error_pending()) return jx_last_status();
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, path ? "the array" : "path");
    return JX_ERR_VALUE;
  }
  jx_dtype dtype = jx_dtype_of(a);
  int t = 0;
  while (t < NPY_NTYPES && npy_types[t].dtype != dtype) t++;
  if (t == NPY_NTYPES) {
    error_set(JX_ERR_UNSUPPORTED, "%s: %s: NumPy has no dtype for %s", fn, path,
              jx_dtype_name(dtype));
    return JX_ERR_UNSUPPORTED;
  }
  /* The header dict exactly as numpy writes it: "(3,)" for 1-d, "()" for 0-d. */
  char header[64 + JX_MAX_NDIM * 24];
  int len = snprintf(header, sizeof header, "{'descr': '%c%c%d', 'fortran_order': False, "
                     "'shape': (", npy_types[t].size == 1 ? '|' : '<', npy_types[t].kind,
                     npy_types[t].size);
  for (int i = 0; i < jx_ndim(a); i++)
    len += snprintf(header + len, sizeof header - (size_t)len, i ? ", %lld" : "%lld",
                    (long long)jx_shape(a)[i]);
  len += snprintf(header + len, sizeof header - (size_t)len, "%s), }",
                  jx_ndim(a) == 1 ? "," : "");
  /* Pad with spaces and a final newline so that the data starts 64-byte aligned. */
  size_t total = 10 + (size_t)len + 1;
  size_t padded = (total + 63) / 64 * 64;
  unsigned char out[12 + sizeof header + 64];
  memcpy(out, npy_magic, 6);
  out[6] = 1;
  out[7] = 0;
  size_t hlen = padded - 10;
  out[8] = (unsigned char)hlen;
  out[9] = (unsigned char)(hlen >> 8);
  memcpy(out + 10, header, (size_t)len);
  memset(out + 10 + len, ' ', padded - total);
  out[padded - 1] = '\n';
  size_t nbytes;
  void *data = io_array_bytes(fn, a, &nbytes);
  if (!data) return jx_last_status();
  if (!io_host_little_endian()) { /* complex: part by part */
    size_t unit = (size_t)npy_types[t].size / (npy_types[t].kind == 'c' ? 2 : 1);
    io_swap_bytes(data, (int64_t)(nbytes / unit), unit);
  }
  IoWriter w;
  jx_status s = io_writer_open(&w, fn, path, false);
  if (s == JX_OK) {
    if (io_write(&w, out, padded)) io_write(&w, data, nbytes);
    s = io_writer_close(&w);
  }
  free(data);
  return s;
}
