/* eager.c -- a primitive on concrete arrays runs as a one-equation program: the lowering
 * rules jit uses (trace/lower.c) turn it, over its operands' views, into kernel and
 * routine steps, which are prepared (compiled, or set up for the interpreter) once per
 * signature. A cached call hashes its signature, finds the program and dispatches it:
 * no expression is built, simplified or looked up per call (issue 10: a cached eager op
 * costs a few microseconds).
 *
 * The signature (the key): primitive, params, each operand's dtype and view (its shape
 * tracker: shape, strides, offset, mask), the device. Weak types take no part (abstract
 * evaluation decides the results'). Entries are immutable once made and reference
 * counted (the table holds one reference, each running call another), so a call never
 * holds the table's lock while it runs and an entry evicted meanwhile lives until the
 * call ends. At most eager_max entries are kept; the oldest goes first. The table is
 * emptied at exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "trace/lower.h"
#include "trace/trace.h"

#define EAGER_BUCKETS 1024
#define EAGER_MAX_DEFAULT 4096

typedef struct EagerEntry {
  uint64_t hash;
  Prim prim;
  int nin, nout;
  PrimParams params;
  const Backend *be;
  jx_dtype *dtypes;         /* [nin] */
  ShapeTracker **sts;       /* [nin] operand views */
  Program *program;
  const Backend **exec;     /* [nsteps] the device a kernel step runs on (interp for small
                               kernels on host memory) ... */
  void **exe;               /* ... and its prepared executable (owned by that device) */
  int refs;                 /* atomic: the table's + running calls' */
  struct EagerEntry *next;  /* bucket chain */
  struct EagerEntry *newer; /* insertion order, for eviction */
} EagerEntry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static EagerEntry *buckets[EAGER_BUCKETS];
static EagerEntry *oldest, *newest;
static int nentries, eager_max = EAGER_MAX_DEFAULT;
static EagerStats stats;

/* ------------------------------------------------------------------ keys */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_i64s(uint64_t h, int n, const int64_t *v) {
  for (int i = 0; i < n; i++) h = mix(h, (uint64_t)v[i]);
  return h;
}

static uint64_t mix_ints(uint64_t h, int n, const int *v) {
  for (int i = 0; i < n; i++) h = mix(h, (uint64_t)(uint32_t)v[i]);
  return h;
}

/* The fields of the kernel-building primitives' params (the used prefix of each array;
 * prim_params_equal compares them all, so equal params hash alike). */
static uint64_t params_hash(uint64_t h, const PrimParams *pp, int ndim0) {
  uint64_t bits;
  memcpy(&bits, &pp->value, sizeof bits);
  h = mix(h, (uint64_t)pp->dtype << 1 | pp->weak);
  h = mix_ints(h, pp->naxes > 0 && pp->naxes <= JX_MAX_NDIM ? pp->naxes : 0, pp->axes);
  h = mix_i64s(mix(h, (uint64_t)pp->ndim), pp->ndim > 0 && pp->ndim <= JX_MAX_NDIM ? pp->ndim : 0, pp->shape);
  h = mix_i64s(h, ndim0, pp->start);
  h = mix_i64s(h, ndim0, pp->stop);
  h = mix_i64s(h, ndim0, pp->step);
  h = mix(mix(h, bits), (uint64_t)(uint32_t)pp->axis << 32 | pp->flags);
  int nc = pp->ncontract > 0 && pp->ncontract <= JX_MAX_NDIM ? pp->ncontract : 0;
  int nb = pp->nbatch > 0 && pp->nbatch <= JX_MAX_NDIM ? pp->nbatch : 0;
  h = mix_ints(mix_ints(mix(h, (uint64_t)nc << 8 | (uint64_t)nb), nc, pp->lhs_contract), nc, pp->rhs_contract);
  return mix_ints(mix_ints(h, nb, pp->lhs_batch), nb, pp->rhs_batch);
}

static uint64_t view_hash(uint64_t h, const ShapeTracker *st) {
  h = mix(h, (uint64_t)st->nviews);
  for (int i = 0; i < st->nviews; i++) {
    const View *v = &st->views[i];
    h = mix(h, (uint64_t)v->ndim << 1 | v->masked);
    h = mix(h, (uint64_t)v->offset);
    h = mix_i64s(mix_i64s(h, v->ndim, v->shape), v->ndim, v->strides);
    if (v->masked) h = mix_i64s(mix_i64s(h, v->ndim, v->mask_lo), v->ndim, v->mask_hi);
  }
  return h;
}

static uint64_t key_hash(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                         const Backend *be) {
  uint64_t h = mix((uint64_t)p << 32 | (uint64_t)nin << 8 | (uint64_t)nout, (uint64_t)(uintptr_t)be);
  h = params_hash(h, pp, nin ? in[0]->ndim : 0);
  for (int i = 0; i < nin; i++) h = view_hash(mix(h, (uint64_t)in[i]->dtype), in[i]->st);
  return h;
}

static bool key_equal(const EagerEntry *e, uint64_t h, Prim p, int nin, jx_array *const *in,
                      const PrimParams *pp, int nout, const Backend *be) {
  if (e->hash != h || e->prim != p || e->nin != nin || e->nout != nout || e->be != be) return false;
  for (int i = 0; i < nin; i++)
    if (e->dtypes[i] != in[i]->dtype || !shape_equal(e->sts[i], in[i]->st)) return false;
  return prim_params_equal(p, &e->params, pp);
}

/* ----------------------------------------------------------------- table */

static void entry_free(EagerEntry *e) {
  if (!e) return;
  for (int i = 0; e->sts && i < e->nin; i++) shape_free(e->sts[i]);
  lower_program_free(e->program);
  free(e->sts), free(e->dtypes), free(e->exec), free(e->exe);
  free(e);
}

static void entry_release(EagerEntry *e) {
  if (e && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) entry_free(e);
}

/* Unlinks the oldest entry (under lock); the caller releases the table's reference. */
static EagerEntry *unlink_oldest(void) {
  EagerEntry *e = oldest;
  EagerEntry **b = &buckets[e->hash % EAGER_BUCKETS];
  while (*b != e) b = &(*b)->next;
  *b = e->next;
  oldest = e->newer;
  if (!oldest) newest = NULL;
  nentries--;
  stats.evictions++;
  return e;
}

/* A new reference to the entry of this signature, or NULL. */
static EagerEntry *lookup(uint64_t h, Prim p, int nin, jx_array *const *in, const PrimParams *pp,
                          int nout, const Backend *be) {
  pthread_mutex_lock(&lock);
  EagerEntry *e = buckets[h % EAGER_BUCKETS];
  while (e && !key_equal(e, h, p, nin, in, pp, nout, be)) e = e->next;
  if (e) {
    __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
    stats.hits++;
  } else {
    stats.misses++;
  }
  pthread_mutex_unlock(&lock);
  return e;
}

/* Inserts e (holding one reference for the caller) unless another thread inserted the
 * same signature first: then e is freed and that entry returned (referenced). */
static EagerEntry *insert(EagerEntry *e) {
  EagerEntry *evicted[8];
  int nev = 0;
  pthread_mutex_lock(&lock);
  for (EagerEntry *o = buckets[e->hash % EAGER_BUCKETS]; o; o = o->next)
    if (o->hash == e->hash && o->prim == e->prim && o->nin == e->nin && o->nout == e->nout &&
        o->be == e->be && prim_params_equal(e->prim, &o->params, &e->params)) {
      bool same = true;
      for (int i = 0; same && i < e->nin; i++)
        same = o->dtypes[i] == e->dtypes[i] && shape_equal(o->sts[i], e->sts[i]);
      if (!same) continue;
      __atomic_add_fetch(&o->refs, 1, __ATOMIC_ACQ_REL);
      pthread_mutex_unlock(&lock);
      entry_free(e);
      return o;
    }
  while (nentries >= eager_max && oldest && nev < 8) evicted[nev++] = unlink_oldest();
  e->refs = 2; /* the table's and the caller's */
  e->next = buckets[e->hash % EAGER_BUCKETS];
  buckets[e->hash % EAGER_BUCKETS] = e;
  e->newer = NULL;
  if (newest) newest->newer = e;
  else oldest = e;
  newest = e;
  nentries++;
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < nev; i++) entry_release(evicted[i]);
  return e;
}

EagerStats eager_cache_stats(void) {
  pthread_mutex_lock(&lock);
  EagerStats s = stats;
  s.entries = nentries;
  pthread_mutex_unlock(&lock);
  return s;
}

void eager_cache_set_max(int n) {
  EagerEntry *evicted = NULL; /* chained through newer */
  pthread_mutex_lock(&lock);
  eager_max = n > 0 ? n : EAGER_MAX_DEFAULT;
  while (nentries > eager_max) {
    EagerEntry *e = unlink_oldest();
    e->newer = evicted;
    evicted = e;
  }
  pthread_mutex_unlock(&lock);
  while (evicted) {
    EagerEntry *next = evicted->newer;
    entry_release(evicted);
    evicted = next;
  }
}

void eager_cache_clear(void) {
  EagerEntry *dropped = NULL; /* chained through newer */
  pthread_mutex_lock(&lock);
  while (oldest) {
    EagerEntry *e = unlink_oldest();
    stats.evictions--; /* dropped, not evicted */
    e->newer = dropped;
    dropped = e;
  }
  pthread_mutex_unlock(&lock);
  while (dropped) {
    EagerEntry *next = dropped->newer;
    entry_release(dropped);
    dropped = next;
  }
}

/* The table is emptied when the process exits (entries hold no arrays or buffers, only
 * programs: this keeps leak checkers' reports to what the program itself leaked). */
__attribute__((destructor)) static void eager_exit(void) { eager_cache_clear(); }

/* ------------------------------------------------------------ lowering */

/* The one-equation program of p on operands in[] (their views) for device be, its
 * kernels prepared. NULL with the error set. */
static EagerEntry *build(uint64_t h, Prim p, int nin, jx_array *const *in, const PrimParams *pp,
                         int nout, const Aval *avals, const Backend *be) {
  EagerEntry *e = calloc(1, sizeof *e);
  Program *prog = calloc(1, sizeof *prog);
  Lazy small[8], *ins = nin <= 8 ? small : calloc((size_t)nin, sizeof *ins);
  Lazy *inp_small[8], **inp = nin <= 8 ? inp_small : calloc((size_t)nin, sizeof *inp);
  Lazy outs[ROUTINE_MAX_OPERANDS];
  memset(outs, 0, sizeof outs);
  if (e) {
    e->nin = nin; /* entry_free frees the views copied so far */
    e->dtypes = calloc((size_t)(nin ? nin : 1), sizeof *e->dtypes);
    e->sts = calloc((size_t)(nin ? nin : 1), sizeof *e->sts);
  }
  bool ok = e && prog && ins && inp && e->dtypes && e->sts && nout <= ROUTINE_MAX_OPERANDS;
  if (!ok && nout > ROUTINE_MAX_OPERANDS)
    error_set(JX_ERR_UNSUPPORTED, "%s: %d results (at most %d)", prim_name(p), nout, ROUTINE_MAX_OPERANDS);
  else if (!ok)
    error_set(JX_ERR_OOM, "%s: out of memory", prim_name(p));
  Lower L = lower_settings(prog, be);
  L.dot_gemm = be && be->eager_dot_gemm; /* one product alone: nothing to fuse it with */
  int nlazy = 0;
  for (int i = 0; ok && i < nin; i++, nlazy++) {
    ins[i] = (Lazy){.slot = lower_new_slot(&L, SLOT_INPUT, i), .st = shape_copy(in[i]->st),
                    .aval = prim_aval_of(in[i])};
    inp[i] = &ins[i];
    e->dtypes[i] = in[i]->dtype;
    e->sts[i] = shape_copy(in[i]->st);
    ok = ins[i].slot >= 0 && ins[i].st && e->sts[i];
  }
  LowerRule rule = lower_rule(p);
  if (ok && !rule) {
    error_set(JX_ERR_INTERNAL, "%s: no lowering rule for eager evaluation", prim_name(p));
    ok = false;
  }
  ok = ok && rule(&L, p, pp, nin, inp, nout, outs, avals);
  /* results: buffers of their own; expressions of one shape (threefry's two words) are
   * computed by one kernel of several outputs */
  bool group = ok && nout > 1 && nout <= KERNEL_MAX_OUTS;
  for (int o = 0; group && o < nout; o++)
    group = outs[o].slot < 0 && outs[o].aval.ndim == outs[0].aval.ndim &&
            memcmp(outs[o].aval.shape, outs[0].aval.shape, (size_t)outs[0].aval.ndim * 8) == 0;
  if (group) {
    Lazy *gp[KERNEL_MAX_OUTS];
    for (int o = 0; o < nout; o++) gp[o] = &outs[o];
    ok = lower_realize_group(&L, nout, gp);
  }
  for (int o = 0; ok && !group && o < nout; o++)
    if (outs[o].slot < 0) ok = lower_realize(&L, &outs[o]);
  if (ok) {
    prog->outs = calloc(nout > 0 ? (size_t)nout : 1, sizeof *prog->outs);
    prog->nout = nout;
    ok = prog->outs != NULL;
  }
  for (int o = 0; ok && o < nout; o++) {
    prog->outs[o] = (ProgramOutput){.slot = outs[o].slot, .st = shape_copy(outs[o].st), .aval = avals[o]};
    ok = prog->outs[o].st != NULL;
  }
  ok = ok && lower_program_check(prog, "eager") == JX_OK;
  /* each kernel prepared once: small ones on host memory run in the interpreter
   * (compiling costs milliseconds, interpreting them microseconds) */
  if (ok) {
    e->exec = calloc((size_t)(prog->nsteps ? prog->nsteps : 1), sizeof *e->exec);
    e->exe = calloc((size_t)(prog->nsteps ? prog->nsteps : 1), sizeof *e->exe);
    ok = e->exec && e->exe;
  }
  int debug = config_debug_level();
  for (int s = 0; ok && s < prog->nsteps; s++) {
    const Step *st = &prog->steps[s];
    if (st->is_routine) continue;
    const Kernel *k = &st->kernel;
    if (debug >= 3) {
      char *text = kernel_print(k);
      fprintf(stderr, "[jaxc] kernel:\n%s\n", text ? text : "(out of memory)");
      free(text);
    }
    int64_t work = k->size * (k->has_reduction ? (k->reduction.size ? k->reduction.size : 1) : 1);
    e->exec[s] = be->host_memory && work <= BACKEND_EAGER_INTERP_MAX ? &backend_interp : be;
    ok = e->exec[s]->prepare(e->exec[s], k, &e->exe[s]) == JX_OK;
  }
  for (int i = 0; i < nlazy; i++) shape_free(ins[i].st);
  for (int o = 0; o < nout && o < ROUTINE_MAX_OPERANDS; o++) shape_free(outs[o].st);
  if (ins != small) free(ins);
  if (inp != inp_small) free(inp);
  if (!ok) {
    if (!jx_last_status()) error_set(JX_ERR_OOM, "%s: out of memory", prim_name(p));
    if (e) e->program = prog;
    else lower_program_free(prog);
    entry_free(e);
    return NULL;
  }
  e->hash = h, e->prim = p, e->nin = nin, e->nout = nout, e->params = *pp, e->be = be;
  e->program = prog;
  return e;
}

/* ------------------------------------------------------------------ run */

/* Runs e's program on in[] (the operands' buffers; views are part of the program) into
 * out[] (avals: the results'). */
static jx_status exec_program(const EagerEntry *e, jx_array *const *in, const Aval *avals,
                              jx_array **out) {
  const Program *p = e->program;
  Buffer *small[16], **bufs = p->nslots <= 16 ? small : calloc((size_t)p->nslots, sizeof *bufs);
  if (!bufs) {
    error_set(JX_ERR_OOM, "%s: out of memory", prim_name(e->prim));
    return JX_ERR_OOM;
  }
  for (int s = 0; s < p->nslots; s++) bufs[s] = p->kinds[s] == SLOT_INPUT ? in[p->index[s]]->buf : NULL;
  jx_status s = JX_OK;
  for (int k = 0; k < p->nsteps && s == JX_OK; k++) {
    const Step *st = &p->steps[k];
    Buffer *args[KERNEL_MAX_ARGS > ROUTINE_MAX_OPERANDS ? KERNEL_MAX_ARGS : ROUTINE_MAX_OPERANDS];
    Buffer *outs[KERNEL_MAX_OUTS > ROUTINE_MAX_OPERANDS ? KERNEL_MAX_OUTS : ROUTINE_MAX_OPERANDS] = {NULL};
    for (int a = 0; a < step_nargs(st); a++) args[a] = bufs[st->args[a]];
    if (st->is_routine) {
      s = backend_run_routine(e->be, &st->routine, args, outs);
    } else {
      const Kernel *kn = &st->kernel;
      void *mems[KERNEL_MAX_ARGS], *omem[KERNEL_MAX_OUTS];
      for (int o = 0; o < st->nout && s == JX_OK; o++) {
        jx_dtype d = o ? kn->extra_dtypes[o - 1] : kn->dtype;
        outs[o] = buffer_new(e->be, (size_t)kn->size * jx_dtype_itemsize(d));
        if (!outs[o]) s = jx_last_status() ? jx_last_status() : JX_ERR_OOM;
        else omem[o] = outs[o]->mem;
      }
      for (int a = 0; a < kn->nargs; a++) mems[a] = args[a]->mem;
      if (s == JX_OK && kn->size > 0) s = e->exec[k]->dispatch(e->exec[k], e->exe[k], kn, mems, omem);
    }
    for (int o = 0; o < st->nout; o++) bufs[st->outs[o]] = outs[o];
  }
  for (int o = 0; o < p->nout; o++) {
    out[o] = NULL;
    if (s != JX_OK) continue;
    const ProgramOutput *po = &p->outs[o];
    out[o] = array_new(buffer_ref(bufs[po->slot]), shape_copy(po->st), avals[o].dtype, avals[o].weak);
    if (!out[o]) s = jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  }
  if (s != JX_OK)
    for (int o = 0; o < p->nout; o++) jx_free(out[o]), out[o] = NULL;
  for (int t = 0; t < p->nslots; t++)
    if (p->kinds[t] == SLOT_TEMP) buffer_free(bufs[t]);
  if (bufs != small) free(bufs);
  return s;
}

jx_status eager_apply(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                      const Aval *avals, jx_array **out) {
  for (int o = 0; o < nout; o++) out[o] = NULL;
  const Backend *be = nin ? in[0]->buf->backend : backend_default();
  uint64_t h = key_hash(p, nin, in, pp, nout, be);
  EagerEntry *e = lookup(h, p, nin, in, pp, nout, be);
  if (!e) {
    uint64_t mark = error_mark(); /* an older, unread error must not fail this op */
    e = build(h, p, nin, in, pp, nout, avals, be);
    if (e && error_since(mark)) {
      entry_free(e);
      e = NULL;
    }
    if (!e) return jx_last_status() ? jx_last_status() : JX_ERR_OOM;
    e = insert(e);
  }
  jx_status s = exec_program(e, in, avals, out);
  entry_release(e);
  return s;
}
