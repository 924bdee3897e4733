/* fuzz_common.h -- what every harness checks, for a reader given as a function from
 * bytes to an outcome (status + a hash of the arrays it returned):
 *  - a failure is JX_ERR_IO, JX_ERR_UNSUPPORTED or JX_ERR_OOM with a message naming the
 *    input, never a crash (ASan/UBSan abort on memory errors and undefined behavior);
 *  - the same bytes gzip-compressed give the same outcome (status and array contents),
 *    and every strict prefix of that gzip stream fails;
 *  - no array outlives the call (jx_live_arrays), and LeakSanitizer sees no leak. */
#ifndef JAXC_FUZZ_COMMON_H
#define JAXC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Outcome {
  jx_status status;
  uint64_t hash; /* FNV-1a over dtype, shape and bytes of every array returned */
} Outcome;

static uint64_t fuzz_hash(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211u;
  return h;
}

/* Hashes a (reading all its elements: they must all be there) and frees it. */
static uint64_t fuzz_hash_array(uint64_t h, jx_array *a) {
  jx_dtype d = jx_dtype_of(a);
  int nd = jx_ndim(a);
  h = fuzz_hash(h, &d, sizeof d);
  h = fuzz_hash(h, &nd, sizeof nd);
  h = fuzz_hash(h, jx_shape(a), (size_t)nd * sizeof(int64_t));
  size_t nbytes = (size_t)jx_size(a) * jx_dtype_itemsize(d);
  void *buf = malloc(nbytes ? nbytes : 1);
  if (!buf || jx_read(a, buf, nbytes) != JX_OK) abort();
  h = fuzz_hash(h, buf, nbytes);
  free(buf);
  jx_free(a);
  return h;
}

/* Checks the error contract after a failed read of input `name`. */
static void fuzz_check_error(const char *name, jx_status s) {
  if (s != JX_ERR_IO && s != JX_ERR_UNSUPPORTED && s != JX_ERR_OOM) {
    fprintf(stderr, "unexpected status %s: %s\n", jx_status_name(s), jx_last_error());
    abort();
  }
  if (jx_last_status() != s || !strstr(jx_last_error(), name)) {
    fprintf(stderr, "status %s, but the message does not name %s: %s\n", jx_status_name(s),
            name, jx_last_error());
    abort();
  }
}

typedef Outcome (*FuzzRead)(const char *name, const uint8_t *data, size_t size);

static Outcome fuzz_read_checked(FuzzRead read, const char *name, const uint8_t *data,
                                 size_t size) {
  jx_clear_error();
  Outcome o = read(name, data, size);
  if (o.status != JX_OK) fuzz_check_error(name, o.status);
  jx_clear_error();
  return o;
}

static int fuzz_run(const uint8_t *data, size_t size, FuzzRead read) {
  int64_t live = jx_live_arrays();
  Outcome plain = fuzz_read_checked(read, "fuzz-input", data, size);
  /* Inputs that are gzip already would be decompressed once more than their wrapped
   * copy: compare only the others. */
  bool is_gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (!is_gzip && size <= (1u << 16)) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) abort();
    size_t cap = deflateBound(&z, (uLong)size) + 32;
    unsigned char *gz = malloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = gz;
    z.avail_out = (uInt)cap;
    if (!gz || deflate(&z, Z_FINISH) != Z_STREAM_END) abort();
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    Outcome wrapped = fuzz_read_checked(read, "fuzz-input.gz", gz, len);
    if (wrapped.status != plain.status || wrapped.hash != plain.hash) {
      fprintf(stderr, "gzip-wrapped input: %s, plain: %s\n", jx_status_name(wrapped.status),
              jx_status_name(plain.status));
      abort();
    }
    /* A strict prefix (cut chosen from the input's hash) must fail. */
    size_t cut = (size_t)(fuzz_hash(14695981039346656037u, data, size) % len);
    Outcome cutoff = fuzz_read_checked(read, "fuzz-input-cut.gz", gz, cut);
    if (cutoff.status == JX_OK) {
      fprintf(stderr, "a gzip stream cut at %zu of %zu bytes was accepted\n", cut, len);
      abort();
    }
    free(gz);
  }
  if (jx_live_arrays() != live) {
    fprintf(stderr, "leaked %lld arrays\n", (long long)(jx_live_arrays() - live));
    abort();
  }
  return 0;
}

#endif
