/* random_cache.c -- jax.random's samplers jitted once and kept across calls (JAX jits
 * its samplers; a jit cache keeps their programs). random_cached_call runs a sampler's
 * body under jit: a call with the same body, static arguments (compared by the caller's
 * eq) and operands' shapes and dtypes as an earlier one reuses its jitted function, whose
 * own cache holds the traced jaxpr and the compiled program (per device, weak types and
 * x64 mode), so a repeated small call costs a program run, not a trace and a lowering
 * (~0.6 ms for normal, ~3 ms for gamma's while loops).
 * Bounded: at most `max_entries` functions (default SAMPLER_CACHE_MAX) and
 * `max_elements` elements in all (default SAMPLER_CACHE_ELEMENTS: a program may keep
 * buffers of its sample's size, cuda's recorded graphs), least recently used evicted; a
 * larger call is jitted for itself alone.
 * What the functions hold (their jaxprs' constants) is the library's: made and run
 * inside array_internal_begin spans, not counted by jx_live_arrays / jx_live_fns.
 * Threads: the slots are guarded by `lock`, held only to look up, insert and evict; a
 * caller runs its own reference to the function (fn_retain) outside it, so an entry
 * evicted meanwhile is freed by its last user. Two threads missing on one key both build
 * a function; the second to insert uses the first's. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/random.h"
#include "trace/trace.h"

#define SAMPLER_CACHE_MAX 64
#define SAMPLER_CACHE_ELEMENTS ((int64_t)1 << 24)

/* One cached call's key: its body, static arguments and operands' avals. */
typedef struct CallKey {
  RandomImpl impl;
  RandomCallEq eq;
  const void *ctx; /* a copy, owned by the slot's function (its ctx) */
  int nin;
  int ndim[RANDOM_CACHED_MAX_IN];
  int64_t shape[RANDOM_CACHED_MAX_IN][JX_MAX_NDIM];
  jx_dtype dtype[RANDOM_CACHED_MAX_IN];
} CallKey;

typedef struct SamplerSlot {
  CallKey key;  /* key.impl NULL: a free slot */
  jx_fn *jf;    /* jit(impl on key.ctx): the cache's reference (fn_retain) */
  int64_t size; /* the elements it accounts for */
  uint64_t used; /* tick of the last use */
} SamplerSlot;

static struct {
  pthread_mutex_t lock; /* guards everything below */
  SamplerSlot slots[SAMPLER_CACHE_MAX];
  int max_entries, entries;       /* max_entries 0: SAMPLER_CACHE_MAX */
  int64_t max_elements, elements; /* max_elements (atomic) 0: SAMPLER_CACHE_ELEMENTS */
  int64_t hits, misses, evictions;
  uint64_t tick;
} sampler_cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int64_t cache_max_elements(void) {
  int64_t m = __atomic_load_n(&sampler_cache.max_elements, __ATOMIC_RELAXED);
  return m > 0 ? m : SAMPLER_CACHE_ELEMENTS;
}

static bool key_eq(const CallKey *a, const CallKey *b) {
  if (a->impl != b->impl || a->eq != b->eq || a->nin != b->nin) return false;
  for (int i = 0; i < a->nin; i++)
    if (a->ndim[i] != b->ndim[i] || a->dtype[i] != b->dtype[i] ||
        memcmp(a->shape[i], b->shape[i], (size_t)a->ndim[i] * sizeof(int64_t)) != 0)
      return false;
  return a->eq(a->ctx, b->ctx);
}

/* The slot holding k's function, or NULL. Called with the lock held. */
static SamplerSlot *slot_find_locked(const CallKey *k) {
  for (int i = 0; i < SAMPLER_CACHE_MAX; i++)
    if (sampler_cache.slots[i].key.impl && key_eq(&sampler_cache.slots[i].key, k)) return &sampler_cache.slots[i];
  return NULL;
}

/* Empties the least recently used slot, its function moved to *evicted (released by the
 * caller after unlocking). Called with the lock held and at least one entry. */
static void slot_evict_locked(jx_fn **evicted) {
  SamplerSlot *lru = NULL;
  for (int i = 0; i < SAMPLER_CACHE_MAX; i++) {
    SamplerSlot *sl = &sampler_cache.slots[i];
    if (sl->key.impl && (!lru || sl->used < lru->used)) lru = sl;
  }
  *evicted = lru->jf;
  sampler_cache.entries--;
  sampler_cache.elements -= lru->size;
  sampler_cache.evictions++;
  *lru = (SamplerSlot){0};
}

/* k's cached function with a reference for the caller (fn_release it), or NULL. */
static jx_fn *cache_lookup(const CallKey *k) {
  pthread_mutex_lock(&sampler_cache.lock);
  SamplerSlot *sl = slot_find_locked(k);
  jx_fn *jf = sl ? fn_retain(sl->jf) : NULL;
  if (sl) sl->used = ++sampler_cache.tick, sampler_cache.hits++;
  pthread_mutex_unlock(&sampler_cache.lock);
  return jf;
}

/* Caches jf (the caller's reference, kept by the caller) under *k (whose ctx is jf's) for
 * `size` elements, evicting down to the bounds; a function another thread cached for
 * the same key meanwhile is returned instead (with a reference for the caller) and jf
 * released. */
static jx_fn *cache_insert(jx_fn *jf, const CallKey *k, int64_t size) {
  jx_fn *evicted[SAMPLER_CACHE_MAX];
  int nevicted = 0;
  pthread_mutex_lock(&sampler_cache.lock);
  SamplerSlot *sl = slot_find_locked(k);
  jx_fn *other = sl ? fn_retain(sl->jf) : NULL;
  if (!sl) {
    int max = sampler_cache.max_entries > 0 ? sampler_cache.max_entries : SAMPLER_CACHE_MAX;
    while (sampler_cache.entries > 0 &&
           (sampler_cache.entries >= max || sampler_cache.elements + size > cache_max_elements()))
      slot_evict_locked(&evicted[nevicted++]);
    for (int i = 0; !sl && i < SAMPLER_CACHE_MAX; i++)
      if (!sampler_cache.slots[i].key.impl) sl = &sampler_cache.slots[i];
    *sl = (SamplerSlot){.key = *k, .jf = fn_retain(jf), .size = size, .used = ++sampler_cache.tick};
    sampler_cache.entries++;
    sampler_cache.elements += size;
  }
  sampler_cache.misses++;
  pthread_mutex_unlock(&sampler_cache.lock);
  for (int i = 0; i < nevicted; i++) fn_release(evicted[i]);
  if (!other) return jf;
  fn_release(jf);
  return other;
}

RandomSamplerCacheStats random_sampler_cache_stats(void) {
  pthread_mutex_lock(&sampler_cache.lock);
  RandomSamplerCacheStats st = {sampler_cache.hits, sampler_cache.misses, sampler_cache.evictions,
                                sampler_cache.entries, sampler_cache.elements};
  pthread_mutex_unlock(&sampler_cache.lock);
  return st;
}

/* Evicts the least recently used entries until at most n are left, holding at most
 * `elements` elements. */
static void cache_shrink(int n, int64_t elements) {
  jx_fn *evicted[SAMPLER_CACHE_MAX];
  int nevicted = 0;
  pthread_mutex_lock(&sampler_cache.lock);
  while (sampler_cache.entries > n || sampler_cache.elements > elements) slot_evict_locked(&evicted[nevicted++]);
  pthread_mutex_unlock(&sampler_cache.lock);
  for (int i = 0; i < nevicted; i++) fn_release(evicted[i]);
}

void random_sampler_cache_set_bounds(int max_entries, int64_t max_elements) {
  if (max_entries <= 0 || max_entries > SAMPLER_CACHE_MAX) max_entries = SAMPLER_CACHE_MAX;
  pthread_mutex_lock(&sampler_cache.lock);
  sampler_cache.max_entries = max_entries;
  __atomic_store_n(&sampler_cache.max_elements, max_elements > 0 ? max_elements : 0, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&sampler_cache.lock);
  cache_shrink(max_entries, cache_max_elements());
}

void random_sampler_cache_clear(void) { cache_shrink(0, 0); }

/* A new jit(impl on a copy of ctx) named fn, with one reference that no function scope
 * holds (the caller's own); *copy: that copy, alive as long as the function. NULL with
 * the error set. */
static jx_fn *sampler_jit(const char *fn, RandomImpl impl, const void *ctx, size_t ctx_size, int nin,
                          const void **copy) {
  void *c = malloc(ctx_size ? ctx_size : 1);
  if (!c) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  memcpy(c, ctx, ctx_size);
  *copy = c;
  jx_fn *f = jx_fn_new_with_free(fn, nin, 1, impl, c, free);
  if (!f) {
    free(c);
    return NULL;
  }
  /* the caller's reference: no open function scope's (jx_fn_free takes theirs out) */
  jx_fn *jf = jx_jit(f), *held = fn_retain(jf);
  jx_fn_free(jf);
  jx_fn_free(f);
  return held;
}

jx_array *random_cached_call(const char *fn, RandomImpl impl, RandomCallEq eq, const void *ctx, size_t ctx_size,
                             int nin, jx_array *const *in, int64_t size) {
  for (int i = 0; i < nin; i++)
    if (!in[i]) return NULL; /* an operand's preparation failed, its error set */
  CallKey k = {.impl = impl, .eq = eq, .ctx = ctx, .nin = nin};
  bool cached = nin <= RANDOM_CACHED_MAX_IN && size <= cache_max_elements();
  for (int i = 0; i < nin; i++) {
    cached &= in[i]->tracer == NULL;
    if (i >= RANDOM_CACHED_MAX_IN) continue;
    k.ndim[i] = in[i]->ndim;
    k.dtype[i] = in[i]->dtype;
    memcpy(k.shape[i], in[i]->shape, (size_t)in[i]->ndim * sizeof(int64_t));
  }
  jx_array *out = NULL;
  if (!cached) {
    /* under a transformation: a fresh jit, inlined into the caller's trace */
    jx_fn *f = jx_fn_new(fn, nin, 1, impl, (void *)ctx);
    jx_fn *jf = jx_jit(f);
    if (jf && jx_call(jf, in, &out) != JX_OK) out = NULL;
    jx_fn_free(jf);
    jx_fn_free(f);
    return out;
  }
  array_internal_begin(); /* what the function keeps is the cache's, not the caller's */
  jx_fn *jf = cache_lookup(&k);
  if (!jf && (jf = sampler_jit(fn, impl, ctx, ctx_size, nin, &k.ctx))) jf = cache_insert(jf, &k, size);
  if (jf && jx_call(jf, in, &out) != JX_OK) out = NULL;
  array_internal_end();
  fn_release(jf);
  return array_claim(out);
}
