/* array.h -- the jx_array struct: refcount, scope bookkeeping, dtype, shape, and either
 * a device buffer seen through a shape tracker (concrete arrays) or a tracer. */
#ifndef JAXC_CORE_ARRAY_H
#define JAXC_CORE_ARRAY_H

#include "jaxc.h"
#include "core/buffer.h"
#include "core/shape.h"

/* jx_array.magic: ARRAY_MAGIC_LIVE while the array holds references; poisoned to
 * ARRAY_MAGIC_DEAD when the last one is dropped, so a use after that (over-release)
 * is caught by the checks (JAXC_CHECKS) instead of corrupting memory. */
#define ARRAY_MAGIC_LIVE 0x6a786172u /* "jxar" */
#define ARRAY_MAGIC_DEAD 0xdeadbeefu

struct jx_array {
  uint32_t magic;
  int64_t refcount; /* references held by the user, scopes and the library */
  /* Scope bookkeeping, updated together by compare-and-swap (array.c): an array may
   * sit in several threads' scopes at once (a jitted function's constants). */
  union {
    struct {
      int32_t nscope; /* entries for this array in open scopes' lists */
      int32_t nskip;  /* of those, entries whose reference was already dropped */
    };
    uint64_t scope_word;
  };
  jx_dtype dtype;
  bool weak;        /* JAX weak type (Python scalar semantics) */
  bool committed;   /* put on its device by jx_device_put (JAX's committed arrays):
                       computations run there and never move it (realize_device) */
  bool internal;    /* the library's own (array_internal_begin): counted by
                       array_internal_live, not jx_live_arrays */
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  Buffer *buf;      /* concrete arrays: the data ... */
  ShapeTracker *st; /* ... and how the logical shape maps onto it */
  struct Tracer *tracer; /* non-NULL for tracers (then buf and st are NULL) */
  struct ArrayShards *shards; /* sharded arrays (trace/sharding.c): the shards on their
                                 devices, next to the whole value in buf; else NULL */
};

/* The common head of a sharded array's shard list: how to release it. */
typedef struct ArrayShards {
  void (*release)(struct ArrayShards *s);
} ArrayShards;

/* The common head of every tracer payload: its trace level, and how to release it. */
typedef struct Tracer {
  struct Trace *trace;
  void (*release)(struct Tracer *t);
} Tracer;

/* References the library holds internally (inside tracers, jaxprs, closures): not
 * registered with any scope. */
jx_array *array_retain(jx_array *a);
void array_drop(jx_array *a);

/* Arrays of the library's own caches (random_samplers.c keeps jitted samplers, whose
 * jaxprs hold constants): arrays created on this thread between array_internal_begin
 * and array_internal_end (they nest) are internal -- counted by array_internal_live
 * instead of jx_live_arrays -- so that what a cache keeps across calls does not read as
 * the user's leak, while every array the user makes or is handed still counts. A
 * result made in that span and handed to the user goes through array_claim, which
 * moves it to the user's count: the array itself when nothing else holds it, else (a
 * cache's constant returned as is) a new array on the same buffer, a's reference
 * dropped. jx_fns made in the span are internal likewise (fn.c, jx_live_fns). */
void array_internal_begin(void);
void array_internal_end(void);
bool array_internal_active(void);
int64_t array_internal_live(void);
jx_array *array_claim(jx_array *a);

/* Failure injection for tests (the Lua way): the n-th array created from now on, on
 * this thread, fails with JX_ERR_OOM (n = 0: the next one); n < 0 turns it off.
 * Returns the countdown left before the call (< 0 if none was armed or it fired). */
int64_t array_fail_after(int64_t n);

/* JAXC_CHECKS builds: aborts naming `what` (the API function) and the object when a
 * released handle is used again. Quarantines freed structs so the poisoned magic field
 * stays readable for a while. */
void array_check_live(const char *what, const jx_array *a);
/* free(p), delayed in JAXC_CHECKS builds (released arrays and functions). */
void array_quarantine(void *p);

/* A new tracer array with the given aval fields, owning `t`. */
jx_array *array_new_tracer(Tracer *t, jx_dtype dtype, bool weak, int ndim,
                           const int64_t *shape);

/* A new concrete array owning one reference to buf and taking ownership of st; the
 * new reference is registered with the innermost open scope. On failure (NULL) buf's
 * reference is still consumed and st freed. */
jx_array *array_new(Buffer *buf, ShapeTracker *st, jx_dtype dtype, bool weak);
/* A new contiguous array copied from host data of shape/dtype on the default backend. */
jx_array *array_from_host(const void *data, jx_dtype dtype, bool weak, int ndim,
                          const int64_t *shape);
/* A new float0 array of the given shape (jax.dtypes.float0: holds no data; its buffer
 * is empty), registered with the innermost open scope. */
jx_array *array_float0(int ndim, const int64_t *shape);
/* Validates a user shape for `fn`: ndim in range, dims >= 0, product fits int64. */
bool array_check_shape(const char *fn, int ndim, const int64_t *shape);
/* Normalizes axis for rank ndim (negative counts from the end); false + JX_ERR_SHAPE
 * naming fn if out of range. */
bool array_normalize_axis(const char *fn, int *axis, int ndim);
/* Normalizes an axis list into a sorted bool mask of ndim entries; axes == NULL marks
 * every axis. Repeated or out-of-range axes: false + JX_ERR_SHAPE. */
bool array_axes_mask(const char *fn, int naxes, const int *axes, int ndim, bool *mask);
/* Formats an array's type as JAX spells an abstract value -- "float32[2,3]", "int32[]"
 * for a 0-d array -- into buf (ARRAY_DESCRIBE_BUF bytes); every error message that names
 * a type uses it. */
const char *array_type_str(char *buf, jx_dtype dtype, int ndim, const int64_t *shape);
/* array_type_str of a's type; "NULL" for NULL. */
const char *array_describe(char *buf, const jx_array *a);
#define ARRAY_DESCRIBE_BUF (JX_MAX_NDIM * 21 + 24)

#endif
