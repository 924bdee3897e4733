/* jit.c -- jx_jit: traces the function once per input signature (dtypes, weak types,
 * shapes, x64 mode, device) into a Jaxpr, lowers it into a Program of fused kernels
 * compiled for that device, and runs that on later calls. Under another transformation (tracer inputs) the cached Jaxpr
 * is evaluated primitive by primitive instead, which composes with every trace. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "jit/jit.h"
#include "render/render.h"
#include "trace/trace.h"
#include "transform/loops.h"
#include "transform/transform.h"

/* Signatures cached per jitted function; the oldest is dropped past this. */
#define JIT_CACHE_MAX 32

/* Threads: one jitted function may be called from any number of threads at once (as in
 * JAX). The cache list is guarded by the function's mutex, held only to look up, insert
 * and evict -- never while tracing, compiling or running. Each entry is reference-counted:
 * the list holds one reference and every call using it holds another, so an entry
 * evicted while another thread runs its program is freed by the last user. Two threads
 * missing on the same signature both trace it; the second to insert adopts the first's
 * entry and frees its own (JAX also may trace twice under a race). */
typedef struct Entry {
  Aval *avals;     /* the full key: one aval per input ... */
  bool x64;        /* ... the x64 mode ... */
  const Backend *device; /* ... and the device the program is compiled for and runs on */
  Jaxpr *jaxpr;
  Jaxpr *traced;   /* the jaxpr before inlining when it holds custom rules (custom_jvp,
                      custom_vjp, checkpoint): what transformations of the call see */
  Program *program; /* NULL: evaluate the jaxpr (lowering unsupported) ... */
  JitSegments *segments; /* ... as compiled pieces (segment.c), or (NULL) equation by
                            equation */
  JitReplay *replay; /* the program's recorded device graphs (replay.c); NULL: none */
  Aval *out_float0; /* [nout] when some outputs are float0 (their dtype JX_FLOAT0, their
                       shape): made anew on each call, not in the jaxpr; else NULL */
  bool transient;   /* the jaxpr closes over an outer tracer: valid for this call only,
                       evaluated and never cached */
  int refcount;     /* atomic: the cache's reference + one per call using the entry */
  struct Entry *next; /* guarded by Jit.lock */
} Entry;

typedef struct Jit {
  jx_fn *f;
  pthread_mutex_t lock; /* guards entries, nentries and traces */
  Entry *entries;
  int nentries;
  int64_t traces; /* how many times f was traced (tests read it) */
} Jit;

static void entry_free(Entry *e) {
  jaxpr_free(e->jaxpr);
  jaxpr_free(e->traced);
  jit_replay_free(e->replay);
  jit_program_free(e->program);
  jit_segments_free(e->segments);
  free(e->avals);
  free(e->out_float0);
  free(e);
}

static void entry_release(Entry *e) {
  if (e && __atomic_sub_fetch(&e->refcount, 1, __ATOMIC_ACQ_REL) == 0) entry_free(e);
}

static void jit_free(void *ctx) {
  Jit *J = ctx;
  for (Entry *e = J->entries, *n; e; e = n) n = e->next, entry_release(e);
  fn_release(J->f);
  pthread_mutex_destroy(&J->lock);
  free(J);
}

static bool aval_eq(const Aval *a, const Aval *b) {
  return a->dtype == b->dtype && a->weak == b->weak && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

static bool entry_matches(const Entry *e, int nin, const Aval *avals, bool x64,
                          const Backend *device) {
  bool hit = e->x64 == x64 && (!device || e->device == device);
  for (int i = 0; hit && i < nin; i++) hit = aval_eq(&avals[i], &e->avals[i]);
  return hit;
}

/* The entry for these avals on `device` (NULL: any device, for traced calls, which use
 * only the jaxpr), moved to the front (most recently used first). Called with J->lock
 * held; the caller takes its own reference. */
static Entry *lookup_locked(Jit *J, int nin, const Aval *avals, bool x64, const Backend *device) {
  Entry *prev = NULL;
  for (Entry *e = J->entries; e; prev = e, e = e->next) {
    if (!entry_matches(e, nin, avals, x64, device)) continue;
    if (prev) {
      prev->next = e->next;
      e->next = J->entries;
      J->entries = e;
    }
    return e;
  }
  return NULL;
}

/* lookup_locked under the lock, with a reference for the caller (entry_release it). */
static Entry *lookup(Jit *J, int nin, const Aval *avals, bool x64, const Backend *device) {
  pthread_mutex_lock(&J->lock);
  Entry *e = lookup_locked(J, nin, avals, x64, device);
  if (e) __atomic_add_fetch(&e->refcount, 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&J->lock);
  return e;
}

/* Puts e (holding one reference, the caller's) at the front of the cache, unless another
 * thread cached the same signature meanwhile: then e is freed and that entry returned.
 * Either way the caller holds a reference to what is returned. Evicts past the bound;
 * an evicted entry lives on until its last user releases it. */
static Entry *insert(Jit *J, Entry *e, int nin) {
  Entry *evicted = NULL;
  pthread_mutex_lock(&J->lock);
  Entry *old = lookup_locked(J, nin, e->avals, e->x64, e->device);
  if (old) {
    __atomic_add_fetch(&old->refcount, 1, __ATOMIC_RELAXED);
  } else {
    __atomic_add_fetch(&e->refcount, 1, __ATOMIC_RELAXED); /* the cache's reference */
    e->next = J->entries;
    J->entries = e;
    if (++J->nentries > JIT_CACHE_MAX) { /* drop the least recently used */
      Entry *p = J->entries;
      while (p->next && p->next->next) p = p->next;
      evicted = p->next;
      p->next = NULL;
      J->nentries--;
    }
  }
  pthread_mutex_unlock(&J->lock);
  entry_release(evicted);
  if (!old) return e;
  entry_release(e);
  return old;
}

/* float0 values (jax.dtypes.float0, the tangents of ints) hold no data, so they stay
 * out of the jaxpr: a float0 input is traced as a fresh float0 array of its shape (a
 * constant: its shape is in the cache key) and is not a jaxpr input; a float0 output
 * is recorded by shape (*out_float0) and made anew on each call. */
static bool any_float0(int n, jx_array *const *xs) {
  for (int i = 0; i < n; i++)
    if (xs[i]->dtype == JX_FLOAT0) return true;
  return false;
}

/* The jaxpr to lower (calls inlined) and, when inlining loses custom rules, *traced
 * the jaxpr as traced (else NULL); *out_float0 as in Entry. */
static Jaxpr *trace(Jit *J, int nin, jx_array *const *in, Jaxpr **traced, Aval **out_float0) {
  *traced = NULL;
  *out_float0 = NULL;
  int nout = jx_fn_nout(J->f);
  Trace *t = stage_begin();
  if (!t) return NULL;
  jx_scope_begin();
  jx_array **ins = calloc((size_t)nin + 1, sizeof *ins), **outs = calloc((size_t)nout, sizeof *outs);
  jx_array **staged = calloc((size_t)nout + 1, sizeof *staged);
  bool ok = ins && outs && staged;
  for (int i = 0; ok && i < nin; i++) {
    Aval a = prim_aval_of(in[i]);
    ins[i] = a.dtype == JX_FLOAT0 ? array_float0(a.ndim, a.shape) : stage_new_input(t, &a);
    ok = ins[i] != NULL;
  }
  ok = ok && jx_call(J->f, ins, outs) == JX_OK;
  int nstaged = 0;
  for (int o = 0; ok && o < nout; o++) {
    if (outs[o]->dtype != JX_FLOAT0) {
      staged[nstaged++] = outs[o];
      continue;
    }
    if (!*out_float0 && !(*out_float0 = calloc((size_t)nout, sizeof **out_float0))) {
      error_set(JX_ERR_OOM, "jx_jit: out of memory");
      ok = false;
    }
    if (ok) (*out_float0)[o] = prim_aval_of(outs[o]);
  }
  Jaxpr *j = stage_end(t, ok ? nstaged : 0, staged);
  for (int o = 0; ok && o < nout; o++) jx_free(outs[o]);
  jx_scope_end(0, NULL);
  free(ins), free(outs), free(staged);
  if (!ok) free(*out_float0), *out_float0 = NULL;
  if (ok && j && !(j->name = strdup(jx_fn_name(J->f)))) ok = false;
  /* the checker runs on every traced jaxpr, and after each simplification pass; calls
   * of other jitted functions are inlined first (the program is lowered as a whole) */
  if (!ok || jaxpr_check(j) != JX_OK) {
    jaxpr_free(j);
    free(*out_float0), *out_float0 = NULL;
    return NULL;
  }
  if (jaxpr_has_custom_rules(j)) {
    *traced = j;
    if (jaxpr_simplify(j) != JX_OK || !(j = jaxpr_inlined_copy(j))) {
      jaxpr_free(*traced), *traced = NULL;
      free(*out_float0), *out_float0 = NULL;
      return NULL;
    }
  }
  if (!jaxpr_inline_calls(j) || jaxpr_simplify(j) != JX_OK) {
    jaxpr_free(j), jaxpr_free(*traced), *traced = NULL;
    free(*out_float0), *out_float0 = NULL;
    return NULL;
  }
  j = loops_hoist_scans(j); /* products of xs out of scan bodies: batched before the loop */
  pthread_mutex_lock(&J->lock);
  J->traces++;
  pthread_mutex_unlock(&J->lock);
  return j;
}

static bool has_tracer_consts(const Jaxpr *j) {
  for (int c = 0; c < j->nconst; c++)
    if (j->consts[c]->tracer) return true;
  return false;
}

/* Compiles all of a program's kernels together (one translation unit on cpu). */
static bool prepare_program(const Program *p, const Backend *be) {
  if (!be->prepare_batch || p->nsteps == 0) return true;
  const Kernel **ks = malloc((size_t)p->nsteps * sizeof *ks);
  if (!ks) {
    error_set(JX_ERR_OOM, "jx_jit: out of memory");
    return false;
  }
  int n = 0;
  for (int s = 0; s < p->nsteps; s++)
    if (!p->steps[s].is_routine) ks[n++] = &p->steps[s].kernel;
  jx_status st = be->prepare_batch(be, ks, n);
  free(ks);
  return st == JX_OK;
}

/* Names each kernel step as the cpu backend names its function, so a JAXC_TRACE event
 * says which kernel ran (a name that cannot be rendered is left out). */
static void name_steps(Program *p) {
  for (int k = 0; k < p->nsteps; k++) {
    if (p->steps[k].is_routine) continue;
    char name[RENDER_NAME_MAX];
    char *src = render_kernel(&render_c, &p->steps[k].kernel, name);
    if (src) p->steps[k].name = strdup(name);
    else jx_clear_error();
    free(src);
  }
}

/* Traces, lowers and compiles a cache entry for in's signature on be into *entry (one
 * reference, the caller's). When the jaxpr closes over an outer tracer it is valid for
 * this call only: the entry is transient (evaluated, not compiled nor cached). */
static jx_status build_entry(Jit *J, int nin, jx_array *const *in, const Aval *avals, bool x64,
                             const Backend *be, Entry **entry) {
  *entry = NULL;
  Aval *f0 = NULL;
  Jaxpr *tj = NULL, *j = trace(J, nin, in, &tj, &f0);
  if (!j) return jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
  if (config_debug_level() >= 2) {
    char *text = jaxpr_print(j);
    fprintf(stderr, "[jaxc] jit(%s) jaxpr:\n%s\n", jx_fn_name(J->f), text ? text : "?");
    free(text);
  }
  Entry *e = calloc(1, sizeof *e);
  Aval *copy = e ? calloc((size_t)nin + 1, sizeof *copy) : NULL;
  if (!copy) {
    free(e), free(f0);
    jaxpr_free(j), jaxpr_free(tj);
    error_set(JX_ERR_OOM, "jx_jit: out of memory");
    return JX_ERR_OOM;
  }
  memcpy(copy, avals, (size_t)nin * sizeof *copy);
  *e = (Entry){.avals = copy, .x64 = x64, .device = be, .jaxpr = j, .traced = tj,
               .out_float0 = f0, .transient = has_tracer_consts(j), .refcount = 1};
  if (e->transient) {
    *entry = e;
    return JX_OK;
  }
  ErrorSaved older = error_stash(); /* an unread error of the caller's stays first */
  e->program = jit_lower(j, be);
  if (!e->program) {
    if (jx_last_status() != JX_ERR_UNSUPPORTED) {
      jx_status s = jx_last_status();
      error_unstash(&older);
      entry_free(e);
      return s;
    }
    /* unsupported fusion: the jaxpr runs as compiled pieces, or equation by equation
     * (jit_segments_new sets no error but on running out of memory) */
    e->segments = jit_segments_new(j);
    if (config_debug_level() >= 1)
      fprintf(stderr, "[jaxc] jit(%s): %s (%s)\n", jx_fn_name(J->f),
              e->segments ? "runs as compiled pieces" : "evaluated equation by equation", jx_last_error());
    jx_clear_error();
  }
  if (e->program && config_trace_enabled()) name_steps(e->program);
  error_unstash(&older);
  if (e->program && !prepare_program(e->program, be)) {
    entry_free(e);
    return jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
  }
  if (e->program) e->replay = jit_replay_new(be);
  if (e->program && config_debug_level() >= 3) {
    char *text = jit_program_print(e->program);
    fprintf(stderr, "[jaxc] jit(%s) program:\n%s\n", jx_fn_name(J->f), text ? text : "?");
    free(text);
  }
  *entry = e;
  return JX_OK;
}

/* Runs entry e on in (float0 inputs already left out: nin jaxpr inputs) into out (the
 * jaxpr's outputs). */
static jx_status run_entry(Entry *e, const Backend *be, bool traced, bool committed, int nin,
                           jx_array *const *in, jx_array **out) {
  if (e->transient) return jaxpr_eval(e->traced ? e->traced : e->jaxpr, in, out);
  if (traced) {
    /* Under a transformation the call stays one equation holding the jaxpr (JAX's
     * pjit): staged as such, or transformed by the call's rules. */
    return prim_call(e->traced ? e->traced : e->jaxpr, nin, in, out);
  }
  jx_array *const *args = in; /* every input on be: uncommitted ones copied there */
  if (!realize_args(be, nin, in, &args)) return jx_last_status();
  jx_status s = e->program    ? jit_run_replay(e->program, e->jaxpr, be, e->replay, args, out)
               : e->segments ? jit_segments_eval(e->segments, e->jaxpr, args, out)
                             : jaxpr_eval(e->jaxpr, args, out);
  realize_args_free(nin, in, args);
  for (int o = 0; s == JX_OK && committed && o < e->jaxpr->nout; o++) out[o]->committed = true;
  return s;
}

/* run_entry for f's inputs and outputs: float0 ones are left out of the jaxpr's. */
static jx_status run_entry_float0(Entry *e, const Backend *be, bool traced, bool committed,
                                  int nin, int nout, jx_array *const *in, jx_array **out) {
  if (!e->out_float0 && !any_float0(nin, in))
    return run_entry(e, be, traced, committed, nin, in, out);
  jx_array **cin = calloc((size_t)nin + 1, sizeof *cin), **cout = calloc((size_t)nout + 1, sizeof *cout);
  jx_status s = cin && cout ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "jx_jit: out of memory");
  int cn = 0;
  for (int i = 0; s == JX_OK && i < nin; i++)
    if (in[i]->dtype != JX_FLOAT0) cin[cn++] = in[i];
  if (s == JX_OK) s = run_entry(e, be, traced, committed, cn, cin, cout);
  for (int o = 0, k = 0; s == JX_OK && o < nout; o++) {
    const Aval *a = e->out_float0 ? &e->out_float0[o] : NULL;
    out[o] = a && a->dtype == JX_FLOAT0 ? array_float0(a->ndim, a->shape) : cout[k++];
    if (!out[o]) s = jx_last_status();
  }
  free(cin), free(cout);
  return s;
}

static jx_status jit_impl(void *ctx, jx_array *const *in, jx_array **out) {
  Jit *J = ctx;
  int nin = jx_fn_nin(J->f);
  bool traced = false;
  for (int i = 0; i < nin; i++) traced |= in[i]->tracer != NULL;
  /* the device: the inputs' by the committed-device rule (realize_device) */
  bool committed = false;
  const Backend *be = realize_device(jx_fn_name(J->f), nin, in, &committed);
  if (!be) return jx_last_status();
  Aval stack_avals[8], *avals = nin <= 8 ? stack_avals : malloc((size_t)nin * sizeof *avals);
  if (!avals) {
    error_set(JX_ERR_OOM, "jx_jit: out of memory");
    return JX_ERR_OOM;
  }
  for (int i = 0; i < nin; i++) avals[i] = prim_aval_of(in[i]);
  bool x64 = dtype_x64();
  Entry *e = lookup(J, nin, avals, x64, traced ? NULL : be);
  if (!e) {
    jx_status s = build_entry(J, nin, in, avals, x64, be, &e);
    if (!e) {
      if (avals != stack_avals) free(avals);
      return s;
    }
    if (!e->transient) e = insert(J, e, nin);
  }
  if (avals != stack_avals) free(avals);
  jx_status s = run_entry_float0(e, be, traced, committed, nin, jx_fn_nout(J->f), in, out);
  entry_release(e);
  return s;
}

/* ------------------------------------------- loop bodies and cond branches */

/* Programs compiled for a control primitive's sub-jaxpr, one per device and x64 mode,
 * cached on the jaxpr (Jaxpr.compiled) so a loop body is lowered and compiled once and
 * each trip only launches its kernels. program NULL: lowering unsupported (nested
 * loops, calls): the runner declines and the equations are bound one by one.
 * Threads: a body jaxpr is shared by every thread running the jitted function that
 * holds it. The list only grows at its head and its nodes are immutable once
 * published, so readers walk it from an acquire load without a lock; inserting happens
 * under compiled_lock (compiling outside it), and a thread that finds its signature
 * inserted meanwhile adopts that node and frees its own. */
typedef struct Compiled {
  const Backend *device;
  bool x64;
  Jaxpr *lowered; /* j with its calls inlined (special_call, jit, custom rules), which
                     program and segments were built from; NULL: j itself */
  Program *program;
  JitSegments *segments; /* program NULL: the jaxpr as compiled pieces (NULL: none) */
  JitLoop *loop; /* loop.c's loop with this program as its body (atomic; NULL: none yet) */
  struct Compiled *next;
} Compiled;

static pthread_mutex_t compiled_lock = PTHREAD_MUTEX_INITIALIZER;

static void compiled_free(void *p) {
  for (Compiled *c = p, *n; c; c = n) {
    n = c->next;
    jit_loop_free(c->loop), jit_program_free(c->program), jit_segments_free(c->segments);
    jaxpr_free(c->lowered), free(c);
  }
}

static Compiled *compiled_find(Compiled *c, const Backend *be, bool x64) {
  while (c && (c->device != be || c->x64 != x64)) c = c->next;
  return c;
}

/* Publishes c (compiled for its device and mode) on j, or returns the node another
 * thread published for the same key meanwhile (c is then freed). */
static Compiled *compiled_insert(const Jaxpr *j, Compiled *c) {
  Jaxpr *m = (Jaxpr *)j; /* the cache is not part of the jaxpr's value */
  pthread_mutex_lock(&compiled_lock);
  Compiled *head = __atomic_load_n(&m->compiled, __ATOMIC_ACQUIRE);
  Compiled *old = compiled_find(head, c->device, c->x64);
  if (!old) {
    c->next = head;
    if (!head) m->compiled_free = compiled_free; /* written once, before the first node */
    __atomic_store_n(&m->compiled, c, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&compiled_lock);
  if (!old) return c;
  jit_program_free(c->program), jit_segments_free(c->segments), jaxpr_free(c->lowered), free(c);
  return old;
}

/* j's node for be and the current x64 mode, lowered and compiled at first use; NULL
 * where j holds someone else's cache or memory ran out. */
static Compiled *compiled_get(const Jaxpr *j, const Backend *be) {
  Compiled *head = __atomic_load_n(&((Jaxpr *)j)->compiled, __ATOMIC_ACQUIRE);
  if (head && j->compiled_free != compiled_free) return NULL; /* someone else's cache */
  bool x64 = dtype_x64();
  Compiled *c = compiled_find(head, be, x64);
  if (c) return c;
  ErrorSaved older = error_stash();
  /* calls (a special function's special_call, a nested jit) lowered inlined, as jit
   * lowers its own jaxpr (a sub-jaxpr keeps them for transformations' rules) */
  Jaxpr *inl = jaxpr_has_calls(j) ? jaxpr_inlined_copy((Jaxpr *)j) : NULL;
  if (inl && jaxpr_simplify(inl) != JX_OK) jaxpr_free(inl), inl = NULL;
  const Jaxpr *lj = inl ? inl : j;
  Program *p = jaxpr_has_calls(lj) ? NULL : jit_lower(lj, be);
  if (p && !prepare_program(p, be)) jit_program_free(p), p = NULL;
  jx_clear_error(); /* a body that does not lower is evaluated instead: in pieces ... */
  JitSegments *sg = p ? NULL : jit_segments_new(lj);
  jx_clear_error(); /* ... or equation by equation */
  if (!p && !sg) jaxpr_free(inl), inl = NULL;
  c = calloc(1, sizeof *c);
  if (c) {
    *c = (Compiled){.device = be, .x64 = x64, .lowered = inl, .program = p, .segments = sg};
    c = compiled_insert(j, c);
  } else {
    jit_program_free(p), jit_segments_free(sg), jaxpr_free(inl);
  }
  error_unstash(&older);
  return c;
}

const Program *jit_sub_program(const Jaxpr *j, const Backend *be, JitLoop ***loop, const Jaxpr **lowered) {
  Compiled *c = compiled_get(j, be);
  if (loop) *loop = c ? &c->loop : NULL;
  if (lowered) *lowered = c && c->lowered ? c->lowered : j;
  return c ? c->program : NULL;
}

static jx_status run_compiled(const Jaxpr *j, jx_array *const *in, jx_array **out, bool *declined) {
  *declined = true;
  bool committed = false;
  const Backend *be = realize_device("jit", j->nin, in, &committed);
  if (!be) {
    *declined = false;
    return jx_last_status();
  }
  Compiled *c = compiled_get(j, be);
  if (!c || (!c->program && !c->segments)) return JX_OK;
  *declined = false;
  const Jaxpr *lj = c->lowered ? c->lowered : j; /* the program's constants are its */
  jx_status s;
  if (c->program) {
    jx_array *const *args = in;
    if (!realize_args(be, j->nin, in, &args)) return jx_last_status();
    s = jit_run(c->program, lj, be, args, out);
    realize_args_free(j->nin, in, args);
  } else {
    s = jit_segments_eval(c->segments, lj, in, out); /* each piece picks be again */
  }
  for (int o = 0; s == JX_OK && committed && o < j->nout; o++) out[o]->committed = true;
  return s;
}

jx_status jit_run_sub(const Jaxpr *j, jx_array *const *in, jx_array **out, bool *compiled) {
  bool declined;
  jx_status s = run_compiled(j, in, out, &declined);
  if (compiled) *compiled = !declined;
  return declined ? prim_eval_jaxpr(j, in, out) : s;
}

const Program *jit_program_for(jx_fn *jf, jx_array *const *in) {
  Jit *J = fn_ctx(jf, jit_impl);
  bool committed;
  const Backend *be = J ? realize_device("jit_program_for", jx_fn_nin(J->f), in, &committed) : NULL;
  int nin = J ? jx_fn_nin(J->f) : 0;
  Aval *avals = be ? calloc((size_t)nin + 1, sizeof *avals) : NULL;
  for (int i = 0; avals && i < nin; i++) avals[i] = prim_aval_of(in[i]);
  Entry *e = avals ? lookup(J, nin, avals, dtype_x64(), be) : NULL;
  free(avals);
  const Program *p = e ? e->program : NULL; /* valid while the entry stays cached */
  entry_release(e);
  return p;
}

const Jaxpr *jit_jaxpr_for(jx_fn *jf, jx_array *const *in) {
  Jit *J = fn_ctx(jf, jit_impl);
  bool committed;
  const Backend *be = J ? realize_device("jit_jaxpr_for", jx_fn_nin(J->f), in, &committed) : NULL;
  int nin = J ? jx_fn_nin(J->f) : 0;
  Aval *avals = be ? calloc((size_t)nin + 1, sizeof *avals) : NULL;
  for (int i = 0; avals && i < nin; i++) avals[i] = prim_aval_of(in[i]);
  Entry *e = avals ? lookup(J, nin, avals, dtype_x64(), be) : NULL;
  free(avals);
  const Jaxpr *j = e ? e->jaxpr : NULL; /* valid while the entry stays cached */
  entry_release(e);
  return j;
}

const JitReplay *jit_replay_for(jx_fn *jf, jx_array *const *in) {
  Jit *J = fn_ctx(jf, jit_impl);
  bool committed;
  const Backend *be = J ? realize_device("jit_replay_for", jx_fn_nin(J->f), in, &committed) : NULL;
  int nin = J ? jx_fn_nin(J->f) : 0;
  Aval *avals = be ? calloc((size_t)nin + 1, sizeof *avals) : NULL;
  for (int i = 0; avals && i < nin; i++) avals[i] = prim_aval_of(in[i]);
  Entry *e = avals ? lookup(J, nin, avals, dtype_x64(), be) : NULL;
  free(avals);
  const JitReplay *r = e ? e->replay : NULL; /* valid while the entry stays cached */
  entry_release(e);
  return r;
}

jx_fn *jx_jit(jx_fn *f) {
  if (!f) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "jx_jit: the function is NULL");
    return NULL;
  }
  Jit *J = calloc(1, sizeof *J);
  if (!J) {
    error_set(JX_ERR_OOM, "jx_jit: out of memory");
    return NULL;
  }
  J->f = fn_retain(f);
  pthread_mutex_init(&J->lock, NULL);
  control_set_runner(run_compiled); /* loop bodies and branches run compiled too ... */
  control_set_loop_runner(jit_loop_run); /* ... and whole loops where the device can */
  char name[256];
  snprintf(name, sizeof name, "jit(%s)", jx_fn_name(f));
  jx_fn *r = jx_fn_new_with_free(name, jx_fn_nin(f), jx_fn_nout(f), jit_impl, J, jit_free);
  if (!r) jit_free(J);
  return r;
}
