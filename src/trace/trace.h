/* trace.h -- internals shared by the trace layer: the eval (impl) rules that run a
 * primitive on concrete arrays, and helpers to build kernels over array views. */
#ifndef JAXC_TRACE_TRACE_H
#define JAXC_TRACE_TRACE_H

#include "backend/backend.h"
#include "core/array.h"
#include "trace/prim.h"

/* Runs primitive p on concrete arrays (validated by prim_bind_n; avals[0 .. nout) are
 * the results' avals from abstract evaluation): out[] new references. */
jx_status impl_apply(Prim p, int nin, jx_array *const *in, const PrimParams *params, int nout,
                     const Aval *avals, jx_array **out);

/* True if p has an eval rule (every primitive should: a test walks them). */
bool impl_has_rule(Prim p);

/* control.c: runs a closed sub-jaxpr of a control primitive (a loop body or cond, a
 * branch) on concrete inputs. jit registers a runner that compiles it once into a
 * program (cached on the jaxpr) and runs that; without one, or where it declines
 * (*declined set: lowering unsupported), its equations are bound one by one. */
typedef jx_status (*ControlRunner)(const Jaxpr *j, jx_array *const *in, jx_array **out, bool *declined);
void control_set_runner(ControlRunner r);
/* A runner for a whole while or scan equation on concrete inputs (jit registers one
 * that compiles the loop into one function where the device can); *declined: not run,
 * the trips then run here. */
typedef jx_status (*LoopRunner)(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                                jx_array **out, bool *declined);
void control_set_loop_runner(LoopRunner r);

/* control.c: cond's abstract evaluation, result count and eager evaluation. */
bool control_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
int control_nout(Prim p, const PrimParams *pp);
jx_status control_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                       jx_array **out);

/* custom.c: abstract and eager evaluation of custom_jvp_call, custom_vjp_call,
 * custom_lin and checkpoint. */
bool custom_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
jx_status custom_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                      jx_array **out);
/* debug.c: an interned copy of s (compared by pointer, immortal; NULL + JX_ERR_OOM). */
const char *debug_intern(const char *s);
/* debug.c: debug_print's abstract evaluation (no results) and evaluation (prints). */
bool debug_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
jx_status debug_impl(int nin, jx_array *const *in, const PrimParams *pp);

/* eager.c: runs p (a primitive with a lowering rule, trace/lower.c) on concrete arrays
 * in[] (validated; all on one device) as a one-equation program, cached per signature
 * (primitive, params, operand dtypes and views, device): out[0 .. nout) new arrays of
 * avals[]. */
jx_status eager_apply(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                      const Aval *avals, jx_array **out);
/* The eager program cache, for tests: lookups that found a program (hits) or built one
 * (misses), entries evicted past the bound, entries held now. */
typedef struct EagerStats {
  int64_t hits, misses, evictions;
  int entries;
} EagerStats;
EagerStats eager_cache_stats(void);
/* Bounds the cache to n entries (n <= 0: the default, 4096), evicting the oldest. */
void eager_cache_set_max(int n);
/* Drops every entry (running calls keep theirs until they end). */
void eager_cache_clear(void);

/* The device a computation on in[0 .. nin) runs on, by JAX's committed-device rule:
 * arrays put on a device with jx_device_put are committed to it, every other array
 * (created on the default device, or computed from uncommitted arrays only) follows.
 * Committed inputs on different devices: NULL with JX_ERR_DEVICE naming fn, both arrays
 * and both devices. Else the committed inputs' device, or the first concrete input's,
 * or (none) the default device; *committed says whether results are committed to it.
 * Tracers are skipped. */
const Backend *realize_device(const char *fn, int nin, jx_array *const *in, bool *committed);

/* in[0 .. nin) on device be: *args is `in` itself when every input is there already,
 * else a malloc'd array holding new references (copies on be for inputs elsewhere, in
 * uncommitted arrays) to release with realize_args_free. false with the error set. */
bool realize_args(const Backend *be, int nin, jx_array *const *in, jx_array *const **args);
void realize_args_free(int nin, jx_array *const *in, jx_array *const *args);

/* A contiguous copy of `a` (a new reference to `a` itself if already contiguous and
 * dense in its buffer). */
jx_array *impl_contiguous(jx_array *a);

/* ------------------------------------------------------ interpreter stack */

typedef struct Trace Trace;

/* A kind of trace level (eval is implicit at the bottom; jvp, vmap, staging...). */
typedef struct TraceType {
  const char *name;
  /* Applies p where at least one input is a tracer of t (the highest level among the
   * inputs). Other inputs belong to lower levels or are concrete; avals[0 .. nout) are
   * the results' avals from abstract evaluation. Fills out[0 .. nout) with new
   * references (on failure the caller frees any it set). */
  jx_status (*process)(Trace *t, Prim p, int nin, jx_array *const *in, const PrimParams *pp,
                       int nout, const Aval *avals, jx_array **out);
  /* Releases the trace's data when its last reference goes. */
  void (*release)(void *data);
} TraceType;

struct Trace {
  const TraceType *type;
  int level;      /* position on the stack: higher levels process first */
  bool active;    /* false once popped: its tracers have escaped */
  int64_t refcount;
  void *data;
};

/* Pushes a new level of the given type (owning data) on this thread's stack. */
Trace *trace_push(const TraceType *type, void *data);
/* Pops t (which must be the top) and drops the stack's reference. */
void trace_pop(Trace *t);
Trace *trace_ref(Trace *t);
void trace_unref(Trace *t);
/* The trace of a tracer array (NULL for concrete arrays). */
Trace *trace_of(const jx_array *a);
/* True if `a` is a tracer of t. */
bool trace_owns(const Trace *t, const jx_array *a);
/* Current depth of this thread's stack. */
int trace_depth(void);

/* f's context if f runs `impl` (a transformation recognizing its own functions, e.g.
 * jit's programs for tests), else NULL. */
void *fn_ctx(const jx_fn *f, jx_fn_impl impl);

/* References to a jx_fn the library holds internally (a transformation's reference to
 * the function it wraps): never registered with a function scope (jx_fn_scope_begin),
 * unlike the public jx_fn_ref. fn_release drops one such reference. */
jx_fn *fn_retain(jx_fn *f);
void fn_release(jx_fn *f);
/* jx_fns made inside array_internal_begin spans (core/array.h) and alive now: a library
 * cache's, not counted by jx_live_fns. */
int64_t fn_internal_live(void);

#endif
