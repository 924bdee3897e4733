/* io.c -- byte streams for the file formats: plain or gzip input from a file or memory
 * (read incrementally, so declared sizes are never trusted for allocation), plain or
 * gzip output, and byte-order helpers. */
#include "io/io.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define IO_CHUNK (64 * 1024)

jx_status io_fail(jx_status status, const char *fn, const char *path, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  error_set(status, "%s: %s: %s", fn, path, msg);
  return status;
}

/* ------------------------------------------------------------- reading */

/* Makes more raw (compressed or plain) input available in r->in. false at the end of
 * the source or on a read error (recorded). */
static bool raw_fill(IoReader *r) {
  if (r->in_avail > 0) return true;
  if (r->raw_eof) return false;
  if (r->mem) {
    r->in = r->mem + r->mem_pos;
    r->in_avail = r->mem_len - r->mem_pos;
    r->mem_pos = r->mem_len;
    r->raw_eof = true;
    return r->in_avail > 0;
  }
  size_t got = fread(r->inbuf, 1, IO_CHUNK, r->file);
  if (got < IO_CHUNK) {
    if (ferror(r->file)) {
      r->status = io_fail(JX_ERR_IO, r->fn, r->name, "read error: %s", strerror(errno));
      r->raw_eof = true;
      return false;
    }
    r->raw_eof = true;
  }
  r->in = r->inbuf;
  r->in_avail = got;
  return got > 0;
}

/* Decides plain or gzip from the first two bytes. */
static bool reader_start(IoReader *r) {
  r->status = JX_OK;
  r->pos = 0;
  raw_fill(r);
  if (r->status != JX_OK) return false;
  /* A file whose first raw chunk holds a single byte is too short to be gzip. */
  if (r->in_avail >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
    memset(&r->z, 0, sizeof r->z);
    int rc = inflateInit2(&r->z, 15 + 16); /* gzip wrapper only, checks the CRC */
    if (rc != Z_OK) {
      r->status = io_fail(rc == Z_MEM_ERROR ? JX_ERR_OOM : JX_ERR_INTERNAL, r->fn, r->name,
                          "inflateInit2 failed (%d)", rc);
      return false;
    }
    r->gzip = true;
    r->z_live = true;
  }
  return true;
}

bool io_reader_open_file(IoReader *r, const char *fn, const char *path) {
  memset(r, 0, sizeof *r);
  r->fn = fn;
  r->name = path;
  r->file = fopen(path, "rb");
  if (!r->file) {
    r->status = io_fail(JX_ERR_IO, fn, path, "cannot open: %s", strerror(errno));
    return false;
  }
  r->inbuf = malloc(IO_CHUNK);
  if (!r->inbuf) {
    r->status = io_fail(JX_ERR_OOM, fn, path, "out of memory");
    io_reader_close(r);
    return false;
  }
  if (!reader_start(r)) {
    io_reader_close(r);
    return false;
  }
  return true;
}

bool io_reader_open_memory(IoReader *r, const char *fn, const char *name, const void *data,
                           size_t len) {
  memset(r, 0, sizeof *r);
  r->fn = fn;
  r->name = name;
  static const unsigned char empty[1] = {0};
  r->mem = data ? data : empty;
  r->mem_len = data ? len : 0;
  return reader_start(r);
}

void io_reader_close(IoReader *r) {
  if (r->z_live) inflateEnd(&r->z);
  if (r->file) fclose(r->file);
  free(r->inbuf);
  r->z_live = false;
  r->file = NULL;
  r->inbuf = NULL;
}

static size_t read_plain(IoReader *r, unsigned char *dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (r->in_avail == 0 && r->file && !r->raw_eof && n - got >= IO_CHUNK) {
      /* Large reads go straight into dst. */
      size_t want = n - got;
      size_t k = fread(dst + got, 1, want, r->file);
      got += k;
      if (k < want) { /* short: end of file or error */
        if (ferror(r->file))
          r->status = io_fail(JX_ERR_IO, r->fn, r->name, "read error: %s", strerror(errno));
        r->raw_eof = true;
        break;
      }
      continue;
    }
    if (!raw_fill(r)) break;
    size_t k = n - got < r->in_avail ? n - got : r->in_avail;
    memcpy(dst + got, r->in, k);
    r->in += k;
    r->in_avail -= k;
    got += k;
  }
  return got;
}

static size_t read_gzip(IoReader *r, unsigned char *dst, size_t n) {
  size_t got = 0;
  while (got < n && !r->z_end && r->status == JX_OK) {
    if (r->z.avail_in == 0) {
      if (!raw_fill(r) && r->status != JX_OK) break;
      /* zlib counts input in uInt: hand it at most UINT_MAX bytes at a time. */
      uInt k = r->in_avail > UINT_MAX ? UINT_MAX : (uInt)r->in_avail;
      r->z.next_in = (Bytef *)r->in;
      r->z.avail_in = k;
      r->in += k;
      r->in_avail -= k;
    }
    size_t want = n - got > UINT_MAX ? UINT_MAX : n - got;
    r->z.next_out = dst + got;
    r->z.avail_out = (uInt)want;
    uInt had_in = r->z.avail_in;
    int rc = inflate(&r->z, Z_NO_FLUSH);
    got += want - r->z.avail_out;
    if (r->z.avail_out < want) r->z_member = false;
    if (rc == Z_STREAM_END) {
      /* Another member may follow (gzip files may be concatenated). */
      if (r->z.avail_in == 0 && !raw_fill(r)) {
        if (r->status == JX_OK) r->z_end = true;
        break;
      }
      inflateReset(&r->z);
      r->z_member = true;
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && had_in == 0 && r->z.avail_in == 0 && r->in_avail == 0 &&
        r->raw_eof) {
      r->status = io_fail(JX_ERR_IO, r->fn, r->name,
                          "gzip data truncated (the compressed stream ends early, after %llu "
                          "decompressed bytes)", (unsigned long long)(r->pos + got));
      break;
    }
    if (rc == Z_BUF_ERROR) continue; /* no progress possible yet: feed more input */
    if (rc == Z_MEM_ERROR)
      r->status = io_fail(JX_ERR_OOM, r->fn, r->name, "out of memory in zlib");
    else if (r->z_member)
      r->status = io_fail(JX_ERR_IO, r->fn, r->name,
                          "corrupt gzip data: what follows the compressed stream (after %llu "
                          "decompressed bytes) is not another gzip member (%s)",
                          (unsigned long long)(r->pos + got), r->z.msg ? r->z.msg : "invalid");
    else
      r->status = io_fail(JX_ERR_IO, r->fn, r->name,
                          "corrupt gzip data (%s) after %llu decompressed bytes",
                          r->z.msg ? r->z.msg : "invalid stream",
                          (unsigned long long)(r->pos + got));
  }
  return got;
}

size_t io_read(IoReader *r, void *dst, size_t n) {
  if (r->status != JX_OK || n == 0) return 0;
  size_t got = r->gzip ? read_gzip(r, dst, n) : read_plain(r, dst, n);
  r->pos += got;
  return got;
}

bool io_read_exact(IoReader *r, void *dst, size_t n, const char *what) {
  uint64_t before = r->pos;
  size_t got = io_read(r, dst, n);
  if (got == n) return true;
  if (r->status == JX_OK)
    r->status = io_fail(JX_ERR_IO, r->fn, r->name,
                        "truncated %s: expected %zu bytes at offset %llu, the data ends after "
                        "%zu", what, n, (unsigned long long)before, got);
  return false;
}

void *io_read_alloc(IoReader *r, size_t n, const char *what) {
  uint64_t before = r->pos;
  size_t cap = n < (1u << 20) ? n : (1u << 20);
  unsigned char *buf = malloc(cap ? cap : 1);
  size_t got = 0;
  while (buf) {
    got += io_read(r, buf + got, cap - got);
    if (got == n) return buf;
    if (got < cap || r->status != JX_OK) break; /* the data ended before n bytes */
    size_t ncap = cap > n / 2 ? n : cap * 2;
    unsigned char *nb = realloc(buf, ncap);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap = ncap;
  }
  if (!buf && r->status == JX_OK)
    r->status = io_fail(JX_ERR_OOM, r->fn, r->name, "out of memory reading %zu bytes of %s", n,
                        what);
  else if (r->status == JX_OK)
    r->status = io_fail(JX_ERR_IO, r->fn, r->name,
                        "truncated %s: expected %zu bytes at offset %llu, the data ends after "
                        "%zu", what, n, (unsigned long long)before, got);
  free(buf);
  return NULL;
}

bool io_expect_end(IoReader *r) {
  unsigned char extra[256];
  uint64_t at = r->pos;
  size_t got = io_read(r, extra, sizeof extra);
  if (r->status != JX_OK) return false;
  if (got == 0) return true;
  r->status = io_fail(JX_ERR_IO, r->fn, r->name,
                      "unexpected trailing data after the %llu bytes the header accounts for",
                      (unsigned long long)at);
  return false;
}

/* ------------------------------------------------------------- writing */

jx_status io_writer_open(IoWriter *w, const char *fn, const char *path, bool gzip) {
  memset(w, 0, sizeof *w);
  w->fn = fn;
  w->path = path;
  errno = 0;
  if (gzip) w->gz = gzopen(path, "wb");
  else w->file = fopen(path, "wb");
  if (!w->gz && !w->file) {
    return io_fail(errno == ENOMEM ? JX_ERR_OOM : JX_ERR_IO, fn, path,
                   "cannot open for writing: %s", errno ? strerror(errno) : "unknown error");
  }
  return JX_OK;
}

bool io_write(IoWriter *w, const void *data, size_t n) {
  if (w->status != JX_OK) return false;
  const unsigned char *p = data;
  while (n > 0) {
    size_t k = n > (1u << 30) ? (1u << 30) : n;
    bool ok;
    if (w->gz) ok = gzwrite(w->gz, p, (unsigned)k) == (int)k;
    else ok = fwrite(p, 1, k, w->file) == k;
    if (!ok) {
      int e = errno;
      w->status = io_fail(JX_ERR_IO, w->fn, w->path, "write failed: %s",
                          e ? strerror(e) : "unknown error");
      return false;
    }
    p += k;
    n -= k;
  }
  return true;
}

jx_status io_writer_close(IoWriter *w) {
  errno = 0;
  if (w->gz && gzclose(w->gz) != Z_OK && w->status == JX_OK)
    w->status = io_fail(JX_ERR_IO, w->fn, w->path, "closing the gzip stream failed: %s",
                        errno ? strerror(errno) : "zlib error");
  if (w->file && fclose(w->file) != 0 && w->status == JX_OK)
    w->status = io_fail(JX_ERR_IO, w->fn, w->path, "closing failed: %s", strerror(errno));
  w->gz = NULL;
  w->file = NULL;
  if (w->status != JX_OK) remove(w->path); /* never leave a half-written file behind */
  return w->status;
}

void io_writer_fail(IoWriter *w, jx_status status) {
  if (w->status == JX_OK) w->status = status;
}

/* ------------------------------------------------------------- helpers */

bool io_host_little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

void io_swap_bytes(void *data, int64_t n, size_t itemsize) {
  if (itemsize < 2) return;
  unsigned char *p = data;
  for (int64_t i = 0; i < n; i++, p += itemsize)
    for (size_t a = 0, b = itemsize - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

void io_normalize_bool(void *data, int64_t n) {
  unsigned char *p = data;
  for (int64_t i = 0; i < n; i++) p[i] = p[i] != 0;
}

void *io_array_bytes(const char *fn, jx_array *a, size_t *nbytes) {
  *nbytes = (size_t)jx_size(a) * jx_dtype_itemsize(jx_dtype_of(a));
  void *buf = malloc(*nbytes ? *nbytes : 1);
  if (!buf) {
    error_set(JX_ERR_OOM, "%s: out of memory copying %zu bytes", fn, *nbytes);
    return NULL;
  }
  if (jx_read(a, buf, *nbytes) != JX_OK) {
    free(buf);
    return NULL;
  }
  return buf;
}

int64_t io_nbytes(int ndim, const int64_t *shape, size_t itemsize) {
  /* The product of the nonzero dims must fit too: strides are computed from it even
   * when a zero dim makes the array empty. */
  int64_t n = (int64_t)itemsize;
  bool empty = false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return -1;
    if (shape[i] == 0) {
      empty = true;
      continue;
    }
    if (n > INT64_MAX / shape[i]) return -1;
    n *= shape[i];
  }
  return empty ? 0 : n;
}
