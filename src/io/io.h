/* io.h -- shared pieces of the file readers and writers (IDX, safetensors, npy):
 * byte streams that read plain or gzip data from a file or from memory without ever
 * trusting a declared size, output streams, byte-order helpers, and the from-memory
 * entry points the fuzz harnesses (fuzz/) call. */
#ifndef JAXC_IO_IO_H
#define JAXC_IO_IO_H

#include <stdio.h>
#include <zlib.h>

#include "jaxc.h"

/* Records `status` with the message "fn: path: <fmt>" (sticky first error) and
 * returns status. */
jx_status io_fail(jx_status status, const char *fn, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------- reading */

/* A byte source: a file or a memory block, decompressed on the fly when it starts
 * with the gzip magic (1f 8b; concatenated members are read as one stream).
 * Errors (unreadable file, corrupt or truncated gzip data) are recorded through
 * io_fail naming fn and name, and kept in `status` (later reads return nothing). */
typedef struct IoReader {
  const char *fn;   /* the public function, for messages */
  const char *name; /* the path (or a label for memory input) */
  FILE *file;
  const unsigned char *mem; /* memory input, or NULL */
  size_t mem_len, mem_pos;
  unsigned char *inbuf;     /* file input: raw bytes read ahead */
  const unsigned char *in;  /* raw bytes not consumed yet ... */
  size_t in_avail;          /* ... and how many */
  bool raw_eof;             /* the raw source has nothing more */
  bool gzip;
  bool z_live;              /* z was initialized (inflateEnd needed) */
  bool z_end;               /* the last gzip member ended and no input follows */
  bool z_member;            /* a further member started and has produced nothing yet */
  z_stream z;
  jx_status status;         /* the first failure, or JX_OK */
  uint64_t pos;             /* (decompressed) bytes delivered so far */
} IoReader;

/* Opens path for reading. false (JX_ERR_IO naming the path and errno's reason, also in
 * r->status) if it cannot be opened; nothing to close then. */
bool io_reader_open_file(IoReader *r, const char *fn, const char *path);
/* Reads from len bytes at data (not copied: they must outlive the reader). */
bool io_reader_open_memory(IoReader *r, const char *fn, const char *name, const void *data,
                           size_t len);
void io_reader_close(IoReader *r);
/* Reads up to n bytes; fewer means the end of the data or an error (r->status). */
size_t io_read(IoReader *r, void *dst, size_t n);
/* Reads exactly n bytes; on a short read records "truncated <what>" (or the read error)
 * and returns false. */
bool io_read_exact(IoReader *r, void *dst, size_t n, const char *what);
/* Reads exactly n bytes into a new malloc'd block (at least 1 byte). The block grows
 * with the data actually read, so a huge declared n on a short file costs no more
 * memory than the file holds. NULL (truncated / OOM / read error recorded) on failure. */
void *io_read_alloc(IoReader *r, size_t n, const char *what);
/* Succeeds when no data follows (for gzip this also checks the CRC); otherwise records
 * "trailing data" and returns false. */
bool io_expect_end(IoReader *r);

/* ------------------------------------------------------------- writing */

/* An output file, gzip-compressed or plain. A failed writer removes its file on close. */
typedef struct IoWriter {
  const char *fn, *path;
  FILE *file;
  gzFile gz;
  jx_status status; /* first failure */
} IoWriter;

/* JX_OK, or the error recorded (then nothing is open and close is not needed). */
jx_status io_writer_open(IoWriter *w, const char *fn, const char *path, bool gzip);
/* false after any failure (recorded in w->status); later writes do nothing. */
bool io_write(IoWriter *w, const void *data, size_t n);
/* Marks the output failed (the caller recorded why): close then removes the file. */
void io_writer_fail(IoWriter *w, jx_status status);
/* Closes the file; returns JX_OK, or the first error (the file is then removed). */
jx_status io_writer_close(IoWriter *w);

/* ------------------------------------------------------------- helpers */

bool io_host_little_endian(void);
/* Reverses the byte order of n elements of `itemsize` bytes in place. */
void io_swap_bytes(void *data, int64_t n, size_t itemsize);
/* Sets every nonzero byte to 1 (bool data read from a file may hold other values). */
void io_normalize_bool(void *data, int64_t n);
/* Copies a's elements (C order) into a new malloc'd block of *nbytes bytes (at least
 * 1 byte allocated). NULL with the error recorded (through jx_read) on failure. */
void *io_array_bytes(const char *fn, jx_array *a, size_t *nbytes);
/* The byte size of a shape, or -1 for a negative dim or when the product of itemsize
 * and the nonzero dims overflows int64 (so that strides fit too). */
int64_t io_nbytes(int ndim, const int64_t *shape, size_t itemsize);

/* ----------------------------------------- from-memory entry points (fuzz/) */
/* Same behavior as the public file readers, on a memory block; `name` stands for the
 * path in messages. */
jx_array *idx_read_memory(const char *name, const void *data, size_t len);
jx_status safetensors_load_memory(const char *name, const void *data, size_t len, int *n,
                                  char ***names, jx_array ***arrays);
jx_array *npy_load_memory(const char *name, const void *data, size_t len);

#endif
