/* fuzz_idx.c -- libFuzzer harness for the IDX reader (jx_io_read_idx's parser, through
 * its from-memory entry point). Checks the contract on every input: either an array
 * comes back, or NULL with JX_ERR_IO (JX_ERR_OOM for allocation failures) and a
 * message naming the input; and no array is left alive. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live = jx_live_arrays();
  jx_clear_error();
  jx_array *a = idx_read_memory("fuzz-input.idx", data, size);
  if (a) {
    /* Touch every element: the array must really hold its declared size. */
    size_t nbytes = (size_t)jx_size(a) * jx_dtype_itemsize(jx_dtype_of(a));
    void *buf = malloc(nbytes ? nbytes : 1);
    if (!buf || jx_read(a, buf, nbytes) != JX_OK) abort();
    free(buf);
    jx_free(a);
  } else {
    jx_status s = jx_last_status();
    if (s != JX_ERR_IO && s != JX_ERR_OOM) {
      fprintf(stderr, "unexpected status %s: %s\n", jx_status_name(s), jx_last_error());
      abort();
    }
    if (!strstr(jx_last_error(), "fuzz-input.idx")) {
      fprintf(stderr, "message does not name the input: %s\n", jx_last_error());
      abort();
    }
  }
  jx_clear_error();
  if (jx_live_arrays() != live) {
    fprintf(stderr, "leaked %lld arrays\n", (long long)(jx_live_arrays() - live));
    abort();
  }
  return 0;
}
