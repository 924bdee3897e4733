/* buffer.c -- the reference count of device buffers (buffer.h). */
#include "core/buffer.h"

Buffer *buffer_ref(Buffer *b) {
  if (b) __atomic_add_fetch(&b->refcount, 1, __ATOMIC_RELAXED);
  return b;
}

void buffer_free(Buffer *b) {
  if (!b || __atomic_sub_fetch(&b->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  b->release(b);
}
