/* alloc.c -- the cuda backend's caching allocator. cuMemAlloc/cuMemFree cost
 * microseconds to milliseconds and cuMemFree synchronizes the device, while a training
 * step allocates and frees the same sizes every iteration; so freed blocks are kept on
 * per-size-class free lists and handed out again. Safe without waiting because all work
 * runs on one stream: a block's next user is queued after its last one.
 * Unlike JAX's default (preallocating 75% of the GPU) nothing is reserved up front;
 * the cache grows to the program's peak and is released when an allocation fails. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cuda/cuda.h"
#include "core/error.h"

#define CUDA_ERROR_OUT_OF_MEMORY 2
#define SMALL_MAX ((size_t)1 << 20)
#define SMALL_STEP 512
#define BUCKETS 4096

typedef struct Block {
  CUdeviceptr ptr;
  size_t size; /* the size class */
  struct Block *next;
} Block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Block *live[BUCKETS];     /* by pointer: blocks handed out */
static Block *free_lists[BUCKETS]; /* by size class: cached blocks, newest first */
static Block *spare;             /* unused Block records */
static CudaAllocStats stats;

size_t cuda_alloc_class(size_t n) {
  if (n <= SMALL_MAX) return n <= SMALL_STEP ? SMALL_STEP : (n + SMALL_STEP - 1) / SMALL_STEP * SMALL_STEP;
  size_t p = (size_t)1 << (63 - __builtin_clzll((unsigned long long)n)); /* p <= n < 2p */
  size_t step = p / 4;
  return (n + step - 1) / step * step;
}

static size_t hash_ptr(CUdeviceptr p) { return (size_t)((p >> 9) * 0x9e3779b97f4a7c15ull >> 52) % BUCKETS; }
static size_t hash_size(size_t s) { return (size_t)((s >> 9) * 0x9e3779b97f4a7c15ull >> 52) % BUCKETS; }

static Block *new_record(void) {
  Block *b = spare;
  if (b) spare = b->next;
  else b = malloc(sizeof *b);
  return b;
}

/* Takes a cached block of class `size` off its list (NULL if none). */
static Block *take_cached(size_t size) {
  for (Block **pp = &free_lists[hash_size(size)]; *pp; pp = &(*pp)->next)
    if ((*pp)->size == size) {
      Block *b = *pp;
      *pp = b->next;
      stats.cached -= size;
      return b;
    }
  return NULL;
}

/* Returns every cached block to the driver (after the stream drains, so that no queued
 * kernel still uses one). Called with the lock held. */
static void release_cached_locked(void) {
  const CudaDevice *d = cuda_device();
  if (!d) return;
  d->cu.cuStreamSynchronize(d->stream);
  for (int i = 0; i < BUCKETS; i++)
    while (free_lists[i]) {
      Block *b = free_lists[i];
      free_lists[i] = b->next;
      d->cu.cuMemFree(b->ptr);
      stats.cached -= b->size;
      b->next = spare, spare = b;
    }
}

void *cuda_alloc(size_t nbytes) {
  if (cuda_init() != JX_OK) return NULL;
  cuda_make_current();
  const CudaDevice *d = cuda_device();
  size_t size = cuda_alloc_class(nbytes);
  pthread_mutex_lock(&lock);
  /* while a graph is recorded (graph.c), its scratch is a new block: one taken off the
   * free lists would change the addresses the next calls are given, and they would
   * never match the recording's (jit/replay.c) */
  Block *b = cuda_graph_recording() ? NULL : take_cached(size);
  if (b) stats.reuses++;
  else if ((b = new_record())) {
    CUresult r = d->cu.cuMemAlloc(&b->ptr, size);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      stats.retries++;
      release_cached_locked();
      r = d->cu.cuMemAlloc(&b->ptr, size);
    }
    if (r != 0) {
      b->next = spare, spare = b;
      pthread_mutex_unlock(&lock);
      char what[96];
      snprintf(what, sizeof what, "cuMemAlloc of %zu bytes", size);
      cuda_check(r, what);
      return NULL;
    }
    b->size = size;
    stats.driver_allocs++;
  }
  if (!b) {
    pthread_mutex_unlock(&lock);
    error_set(JX_ERR_OOM, "cuda: out of host memory for an allocation record");
    return NULL;
  }
  size_t h = hash_ptr(b->ptr);
  b->next = live[h], live[h] = b;
  stats.in_use += size;
  pthread_mutex_unlock(&lock);
  return (void *)(uintptr_t)b->ptr;
}

void cuda_free(void *mem) {
  if (!mem || cuda_graph_keep(mem)) return;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)mem;
  pthread_mutex_lock(&lock);
  for (Block **pp = &live[hash_ptr(p)]; *pp; pp = &(*pp)->next)
    if ((*pp)->ptr == p) {
      Block *b = *pp;
      *pp = b->next;
      stats.in_use -= b->size;
      stats.cached += b->size;
      size_t h = hash_size(b->size);
      b->next = free_lists[h], free_lists[h] = b;
      break;
    }
  pthread_mutex_unlock(&lock);
}

void cuda_empty_cache(void) {
  pthread_mutex_lock(&lock);
  release_cached_locked();
  pthread_mutex_unlock(&lock);
}

CudaAllocStats cuda_alloc_stats(void) {
  pthread_mutex_lock(&lock);
  CudaAllocStats s = stats;
  pthread_mutex_unlock(&lock);
  return s;
}
