/* fuzz_idx.c -- libFuzzer harness for the IDX reader (jx_io_read_idx's parser through its
 * from-memory entry point); fuzz_common.h lists what is checked on every input. */
#include "fuzz_common.h"

static Outcome read_idx(const char *name, const uint8_t *data, size_t size) {
  jx_array *a = idx_read_memory(name, data, size);
  if (!a) return (Outcome){jx_last_status(), 0};
  return (Outcome){JX_OK, fuzz_hash_array(14695981039346656037u, a)};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_run(data, size, read_idx);
}
