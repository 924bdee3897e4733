/* fuzz_npy.c -- libFuzzer harness for the .npy reader (jx_io_load_npy's parser through its
 * from-memory entry point); fuzz_common.h lists what is checked on every input. */
#include "fuzz_common.h"

static Outcome read_npy(const char *name, const uint8_t *data, size_t size) {
  jx_array *a = npy_load_memory(name, data, size);
  if (!a) return (Outcome){jx_last_status(), 0};
  return (Outcome){JX_OK, fuzz_hash_array(14695981039346656037u, a)};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_run(data, size, read_npy);
}
