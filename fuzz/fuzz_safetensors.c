/* fuzz_safetensors.c -- libFuzzer harness for the safetensors reader and its JSON parser
 * (jx_io_load_safetensors through its from-memory entry point); fuzz_common.h lists what
 * is checked on every input. On success the names must be distinct C strings and every
 * array must be readable. */
#include "fuzz_common.h"

static Outcome read_st(const char *name, const uint8_t *data, size_t size) {
  int n = -1;
  char **names = NULL;
  jx_array **arrays = NULL;
  jx_status s = safetensors_load_memory(name, data, size, &n, &names, &arrays);
  if (s != JX_OK) {
    if (n != 0 || names || arrays) abort(); /* outputs are cleared on failure */
    return (Outcome){s, 0};
  }
  if (n < 0 || (n > 0 && (!names || !arrays))) abort();
  uint64_t h = 14695981039346656037u;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0) abort();
    h = fuzz_hash(h, names[i], strlen(names[i]) + 1);
    h = fuzz_hash_array(h, arrays[i]);
  }
  jx_io_free_names(n, names);
  free(arrays);
  return (Outcome){JX_OK, h};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_run(data, size, read_st);
}
