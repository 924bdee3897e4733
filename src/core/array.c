/* array.c -- jx_array lifetimes: reference counts, scopes (per thread), the live-array
 * count, introspection, and the argument checks every public entry point shares. */
#include "core/array.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"

static int64_t live_arrays; /* atomic: the user's (jx_live_arrays) ... */
static int64_t internal_arrays; /* atomic: ... and the library caches' (array_internal_live) */
static _Thread_local int internal_depth; /* open array_internal_begin spans */
static _Thread_local int64_t fail_countdown = -1;

int64_t array_fail_after(int64_t n) {
  int64_t left = fail_countdown;
  fail_countdown = n < 0 ? -1 : n;
  return left;
}

/* true when the armed failure fires now */
static bool inject_failure(void) {
  if (fail_countdown < 0) return false;
  return fail_countdown-- == 0;
}

/* ------------------------------------------------------------ checks */

#ifdef JAXC_CHECKS
/* Released structs wait here before free(), so that an over-release soon after reads
 * the poisoned magic (not reused memory). Oldest out first. */
#define QUARANTINE 4096
static void *quarantine[QUARANTINE];
static uint64_t quarantine_next; /* atomic */

void array_quarantine(void *p) {
  uint64_t i = __atomic_fetch_add(&quarantine_next, 1, __ATOMIC_RELAXED) % QUARANTINE;
  free(__atomic_exchange_n(&quarantine[i], p, __ATOMIC_ACQ_REL));
}

void array_check_live(const char *what, const jx_array *a) {
  uint32_t magic = __atomic_load_n(&a->magic, __ATOMIC_RELAXED);
  if (magic == ARRAY_MAGIC_LIVE) return;
  char b[ARRAY_DESCRIBE_BUF];
  fprintf(stderr, "jaxc: %s: %s at %p was already released (reference count reached zero: "
          "one jx_free too many, or a use after the last one)\n",
          what, magic == ARRAY_MAGIC_DEAD ? array_describe(b, a) : "array", (const void *)a);
  abort();
}
#else
void array_quarantine(void *p) { free(p); }
void array_check_live(const char *what, const jx_array *a) { (void)what, (void)a; }
#endif

/* ------------------------------------------------------------------ scopes */

/* jx_array's scope counts as one word (array.h). */
typedef union ScopeCounts {
  struct {
    int32_t nscope, nskip;
  } c;
  uint64_t w;
} ScopeCounts;
static ScopeCounts scope_counts_update(jx_array *a, int dscope, int dskip);

typedef struct Scope {
  jx_array **items;
  int64_t n, cap;
} Scope;

static _Thread_local Scope *scopes;
static _Thread_local int scope_depth, scope_cap;
/* A closed scope's item list of at most this many slots stays with its stack slot for
 * the next scope opened there (a cached eager op in its own scope: no malloc and free of
 * the list each time). Slots above scope_depth hold n == 0 and such a list or none. */
#define SCOPE_KEEP_CAP 1024

/* The scope stack is freed when its thread exits (a pthread key's destructor): a thread
 * that called into jaxc leaves nothing behind. */
static pthread_key_t scopes_key;
static pthread_once_t scopes_once = PTHREAD_ONCE_INIT;
static void scopes_free(void *p) {
  (void)p; /* the thread's own TLS, still valid while key destructors run */
  for (int d = 0; d < scope_cap; d++) free(scopes[d].items);
  free(scopes);
  scopes = NULL, scope_depth = scope_cap = 0;
}
static void scopes_key_create(void) { pthread_key_create(&scopes_key, scopes_free); }

static bool scope_push_item(Scope *s, jx_array *a) {
  if (s->n == s->cap) {
    int64_t cap = s->cap ? s->cap * 2 : 64;
    jx_array **items = realloc(s->items, (size_t)cap * sizeof *items);
    if (!items) return false;
    s->items = items;
    s->cap = cap;
  }
  s->items[s->n++] = a;
  scope_counts_update(a, 1, 0);
  return true;
}

/* nscope += dscope and nskip += dskip as one atomic step; returns the counts before.
 * dskip == 1 applies only while nscope > nskip (else nothing changes); dskip == -1
 * only while nskip > 0. */
static ScopeCounts scope_counts_update(jx_array *a, int dscope, int dskip) {
  ScopeCounts old, upd;
  old.w = __atomic_load_n(&a->scope_word, __ATOMIC_RELAXED);
  do {
    upd = old;
    upd.c.nscope += dscope;
    if ((dskip > 0 && old.c.nscope > old.c.nskip) || (dskip < 0 && old.c.nskip > 0)) upd.c.nskip += dskip;
  } while (!__atomic_compare_exchange_n(&a->scope_word, &old.w, upd.w, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  return old;
}

void jx_scope_begin(void) {
  if (scope_depth == scope_cap) {
    int cap = scope_cap ? scope_cap * 2 : 8;
    Scope *s = realloc(scopes, (size_t)cap * sizeof *s);
    if (!s) {
      error_set(JX_ERR_OOM, "jx_scope_begin: out of memory");
      return;
    }
    if (!scopes) {
      pthread_once(&scopes_once, scopes_key_create);
      pthread_setspecific(scopes_key, s); /* any non-NULL value: the destructor runs */
    }
    memset(s + scope_cap, 0, (size_t)(cap - scope_cap) * sizeof *s);
    scopes = s;
    scope_cap = cap;
  }
  scopes[scope_depth++].n = 0;
}

static void array_release(jx_array *a) {
  if (a->tracer) a->tracer->release(a->tracer);
  a->tracer = NULL;
  if (a->shards) a->shards->release(a->shards);
  a->shards = NULL;
  buffer_free(a->buf);
  shape_free(a->st);
  a->buf = NULL;
  a->st = NULL;
  __atomic_store_n(&a->magic, ARRAY_MAGIC_DEAD, __ATOMIC_RELAXED);
  __atomic_sub_fetch(a->internal ? &internal_arrays : &live_arrays, 1, __ATOMIC_RELAXED);
  /* The struct outlives its payload while scope entries still point at it. */
  if (__atomic_load_n(&a->scope_word, __ATOMIC_ACQUIRE) == 0) array_quarantine(a); /* nscope == nskip == 0 */
}

static void array_decref(jx_array *a) {
  if (__atomic_sub_fetch(&a->refcount, 1, __ATOMIC_ACQ_REL) == 0) array_release(a);
}

jx_status jx_scope_end(int n, jx_array *const *keep) {
  if (scope_depth == 0) {
    error_set(JX_ERR_VALUE, "jx_scope_end: no scope is open");
    return JX_ERR_VALUE;
  }
  jx_status status = JX_OK;
  if (n < 0 || (n > 0 && !keep)) { /* still closes the scope, keeping nothing */
    error_set(JX_ERR_VALUE, "jx_scope_end: keep has %d entries but is %s", n,
              keep ? "given" : "NULL");
    status = JX_ERR_VALUE;
    n = 0;
  }
  Scope s = scopes[--scope_depth];
  scopes[scope_depth] = (Scope){0}; /* a scope opened by a release below gets its own list */
  Scope *parent = scope_depth ? &scopes[scope_depth - 1] : NULL;
  bool *kept = n ? calloc((size_t)n, sizeof *kept) : NULL;
  for (int64_t i = 0; i < s.n; i++) {
    jx_array *a = s.items[i];
    ScopeCounts was = scope_counts_update(a, -1, -1);
    if (was.c.nskip > 0) { /* this reference was already dropped with jx_free */
      if (__atomic_load_n(&a->refcount, __ATOMIC_ACQUIRE) == 0 && was.c.nscope == 1) array_quarantine(a);
      continue;
    }
    int j = 0;
    while (j < n && (keep[j] != a || (kept && kept[j]))) j++;
    if (j < n) {
      if (kept) kept[j] = true;
      if (parent && !scope_push_item(parent, a)) status = JX_ERR_OOM, error_set(status, "jx_scope_end: out of memory");
      continue;
    }
    array_decref(a);
  }
  free(kept);
  Scope *slot = &scopes[scope_depth]; /* scopes may have moved */
  if (!slot->items && s.cap <= SCOPE_KEEP_CAP) *slot = (Scope){.items = s.items, .cap = s.cap};
  else free(s.items);
  return status;
}

/* ------------------------------------------------------------- lifetimes */

int64_t jx_live_arrays(void) { return __atomic_load_n(&live_arrays, __ATOMIC_RELAXED); }
int64_t array_internal_live(void) { return __atomic_load_n(&internal_arrays, __ATOMIC_RELAXED); }

void array_internal_begin(void) { internal_depth++; }
void array_internal_end(void) {
  if (internal_depth > 0) internal_depth--;
}
bool array_internal_active(void) { return internal_depth > 0; }

/* A new array's count: the library's inside an array_internal_begin span, else the user's. */
static void count_new(jx_array *a) {
  a->internal = internal_depth > 0;
  __atomic_add_fetch(a->internal ? &internal_arrays : &live_arrays, 1, __ATOMIC_RELAXED);
}

jx_array *array_claim(jx_array *a) {
  if (!a || !a->internal) return a;
  /* Only the caller holds a (its one reference): no other thread reads the flag until
   * the release that follows the caller's, ordered by the refcount's acq_rel. A tracer
   * or sharded array (never a cached sampler's result) is moved as it is. */
  if (__atomic_load_n(&a->refcount, __ATOMIC_ACQUIRE) == 1 || a->tracer || a->shards || !a->buf) {
    a->internal = false;
    __atomic_sub_fetch(&internal_arrays, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&live_arrays, 1, __ATOMIC_RELAXED);
    return a;
  }
  jx_array *b = array_new(buffer_ref(a->buf), shape_copy(a->st), a->dtype, a->weak);
  if (b) b->committed = a->committed;
  jx_free(a);
  return b;
}

jx_array *jx_ref(jx_array *a) {
  if (!a) return NULL;
  array_check_live("jx_ref", a);
  __atomic_add_fetch(&a->refcount, 1, __ATOMIC_RELAXED);
  if (scope_depth && !scope_push_item(&scopes[scope_depth - 1], a)) {
    error_set(JX_ERR_OOM, "jx_ref: out of memory");
    array_decref(a);
    return NULL;
  }
  return a;
}

jx_array *array_retain(jx_array *a) {
  if (a) __atomic_add_fetch(&a->refcount, 1, __ATOMIC_RELAXED);
  return a;
}

void array_drop(jx_array *a) {
  if (a) array_decref(a);
}

void jx_free(jx_array *a) {
  if (!a) return;
  array_check_live("jx_free", a);
  scope_counts_update(a, 0, 1); /* a scope entry's reference, if it has one left */
  array_decref(a);
}

jx_array *array_new(Buffer *buf, ShapeTracker *st, jx_dtype dtype, bool weak) {
  jx_array *a = buf && st && !inject_failure() ? mem_zalloc(sizeof(jx_array)) : NULL;
  if (!a) {
    buffer_free(buf);
    shape_free(st);
    error_set(JX_ERR_OOM, "out of memory creating an array");
    return NULL;
  }
  a->magic = ARRAY_MAGIC_LIVE;
  a->refcount = 1;
  a->dtype = dtype;
  a->weak = weak;
  a->ndim = shape_ndim(st);
  memcpy(a->shape, shape_dims(st), (size_t)a->ndim * sizeof(int64_t));
  a->buf = buf;
  a->st = st;
  count_new(a);
  if (scope_depth && !scope_push_item(&scopes[scope_depth - 1], a)) {
    error_set(JX_ERR_OOM, "out of memory creating an array");
    array_decref(a);
    return NULL;
  }
  return a;
}

jx_array *array_new_tracer(Tracer *t, jx_dtype dtype, bool weak, int ndim,
                           const int64_t *shape) {
  jx_array *a = t && !inject_failure() ? mem_zalloc(sizeof(jx_array)) : NULL;
  if (!a) {
    if (t) t->release(t);
    error_set(JX_ERR_OOM, "out of memory creating a tracer");
    return NULL;
  }
  a->magic = ARRAY_MAGIC_LIVE;
  a->refcount = 1;
  a->dtype = dtype;
  a->weak = weak;
  a->ndim = ndim;
  if (ndim) memcpy(a->shape, shape, (size_t)ndim * sizeof(int64_t));
  a->tracer = t;
  count_new(a);
  if (scope_depth && !scope_push_item(&scopes[scope_depth - 1], a)) {
    error_set(JX_ERR_OOM, "out of memory creating a tracer");
    array_decref(a);
    return NULL;
  }
  return a;
}

/* ---------------------------------------------------------- introspection */

/* NULL: records JX_ERR_VALUE (keeping an earlier error) and returns false. */
static bool introspect(const char *fn, const jx_array *a) {
  if (a) return true;
  error_set(JX_ERR_VALUE, "%s: the array is NULL", fn);
  return false;
}

int jx_ndim(const jx_array *a) { return introspect("jx_ndim", a) ? a->ndim : 0; }
const int64_t *jx_shape(const jx_array *a) { return a ? a->shape : NULL; }
int64_t jx_size(const jx_array *a) { return a ? shape_numel(a->ndim, a->shape) : 0; }
jx_dtype jx_dtype_of(const jx_array *a) { return introspect("jx_dtype_of", a) ? a->dtype : JX_FLOAT32; }
bool jx_is_weak(const jx_array *a) { return a && a->weak; }

/* ------------------------------------------------------- argument checks */

bool array_check_shape(const char *fn, int ndim, const int64_t *shape) {
  if (ndim < 0 || ndim > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: ndim %d is outside [0, %d]", fn, ndim, JX_MAX_NDIM);
    return false;
  }
  if (ndim > 0 && !shape) {
    error_set(JX_ERR_VALUE, "%s: shape is NULL for ndim %d", fn, ndim);
    return false;
  }
  char buf[ERROR_SHAPE_BUF];
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) {
      error_set(JX_ERR_SHAPE, "%s: negative dimension in shape %s", fn,
                error_shape_str(buf, ndim, shape));
      return false;
    }
  if (shape_numel_checked(ndim, shape) < 0) {
    error_set(JX_ERR_OOM, "%s: the size of shape %s overflows int64", fn,
              error_shape_str(buf, ndim, shape));
    return false;
  }
  return true;
}

bool array_normalize_axis(const char *fn, int *axis, int ndim) {
  int a = *axis;
  if (a < -ndim || a >= ndim) {
    error_set(JX_ERR_SHAPE, "%s: axis %d is out of bounds for an array of rank %d", fn, a,
              ndim);
    return false;
  }
  *axis = a < 0 ? a + ndim : a;
  return true;
}

bool array_axes_mask(const char *fn, int naxes, const int *axes, int ndim, bool *mask) {
  for (int d = 0; d < ndim; d++) mask[d] = axes == NULL;
  if (!axes) return true;
  if (naxes < 0) {
    error_set(JX_ERR_SHAPE, "%s: negative axis count %d", fn, naxes);
    return false;
  }
  for (int i = 0; i < naxes; i++) {
    int a = axes[i];
    if (!array_normalize_axis(fn, &a, ndim)) return false;
    if (mask[a]) {
      error_set(JX_ERR_SHAPE, "%s: repeated axis %d", fn, axes[i]);
      return false;
    }
    mask[a] = true;
  }
  return true;
}

const char *array_type_str(char *buf, jx_dtype dtype, int ndim, const int64_t *shape) {
  char dims[ERROR_SHAPE_BUF];
  error_shape_str(dims, ndim, shape);
  /* "(2,3)" -> "float32[2,3]" */
  size_t n = strlen(dims);
  dims[n - 1] = '\0';
  if (ndim == 1) dims[n - 2] = '\0';
  const char *name = jx_dtype_name(dtype);
  strcpy(buf, name ? name : "?");
  strcat(buf, "[");
  strcat(buf, dims + 1);
  strcat(buf, "]");
  return buf;
}

const char *array_describe(char *buf, const jx_array *a) {
  if (!a) return strcpy(buf, "NULL");
  return array_type_str(buf, a->dtype, a->ndim, a->shape);
}
