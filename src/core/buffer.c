/* buffer.c -- the reference count of device buffers (buffer.h). */
#include "core/buffer.h"

#include <stdlib.h>
#include <string.h>

#include "jaxc.h"

/* Bytes of live buffers and the most alive at once since the last reset (atomics:
 * buffers are created and released on any thread). */
static int64_t live_bytes, peak_bytes;

void buffer_track_new(Buffer *b) {
  int64_t now = __atomic_add_fetch(&live_bytes, (int64_t)b->nbytes, __ATOMIC_RELAXED);
  int64_t peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
  while (now > peak && !__atomic_compare_exchange_n(&peak_bytes, &peak, now, true, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
  }
}

int64_t jx_live_buffer_bytes(void) { return __atomic_load_n(&live_bytes, __ATOMIC_RELAXED); }
int64_t jx_peak_buffer_bytes(void) { return __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED); }
void jx_reset_peak_buffer_bytes(void) {
  __atomic_store_n(&peak_bytes, __atomic_load_n(&live_bytes, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

Buffer *buffer_ref(Buffer *b) {
  if (b) __atomic_add_fetch(&b->refcount, 1, __ATOMIC_RELAXED);
  return b;
}

void buffer_free(Buffer *b) {
  if (!b || __atomic_sub_fetch(&b->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  __atomic_sub_fetch(&live_bytes, (int64_t)b->nbytes, __ATOMIC_RELAXED);
  b->release(b);
}

static void *(*volatile zero_fill)(void *, int, size_t) = memset;

void *mem_zalloc(size_t n) {
  void *p = malloc(n);
  if (p) zero_fill(p, 0, n);
  return p;
}
