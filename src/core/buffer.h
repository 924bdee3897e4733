/* buffer.h -- a refcounted device allocation, as arrays hold it. The core knows only
 * its lifetime; the device behind `backend` (src/backend, which creates buffers with
 * buffer_new) fills it and says through `release` how its memory goes back. */
#ifndef JAXC_CORE_BUFFER_H
#define JAXC_CORE_BUFFER_H

#include <stddef.h>
#include <stdint.h>

typedef struct Backend Backend; /* src/backend/backend.h */
typedef struct Buffer Buffer;

struct Buffer {
  const Backend *backend;
  int64_t refcount;
  size_t nbytes;
  void *mem;
  void (*release)(Buffer *b); /* at the last reference: frees mem and b itself */
};

/* Counts a new buffer's bytes as live (buffer_new calls it; buffer_free's last
 * reference uncounts them): jx_live_buffer_bytes / jx_peak_buffer_bytes. */
void buffer_track_new(Buffer *b);
/* Adds a reference (NULL is fine) and returns b. */
Buffer *buffer_ref(Buffer *b);
/* Drops a reference (NULL is fine); the last one calls b->release. */
void buffer_free(Buffer *b);

/* n zeroed bytes from malloc (NULL on failure), for the small structs every eager op
 * creates and drops (an array, a shape tracker). Not calloc: glibc's calloc bypasses the
 * per-thread cache (tcache) that malloc and free take (cached eager add: ~700 of its
 * ~6,300 instructions), and the compiler turns malloc + memset in one function into
 * calloc, so the memset goes through a pointer it cannot see through. */
void *mem_zalloc(size_t n);

#endif
