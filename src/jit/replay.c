/* replay.c -- repeated calls of a jitted program replayed as one recorded device graph
 * (Backend.graph_*: CUDA graphs on cuda), so a small training step is not bound by the
 * host's cost of launching each kernel and library call.
 *
 * A recording fixes every address its steps read and write. Its temporaries (step
 * outputs that are not program outputs) are its own: allocated and freed while it is
 * recorded, which hands them to the recording (Backend.graph_*), the planned reuse of a
 * temporary after its last use kept. A call allocates only its outputs, then looks for
 * a recording made with the same input, constant and output addresses: found, it is
 * replayed; else the steps are recorded into a new one, which is then launched. A
 * benchmark's repeated call repeats one address set; a training loop, whose parameters
 * come back in buffers earlier calls freed, cycles through a few (2 to 6 in the tests:
 * the allocator hands out a size class's blocks newest first), hence REPLAY_EXECS
 * recordings a program (each holds its temporaries); a program whose addresses never
 * repeat stops recording after REPLAY_GIVE_UP recordings that were never replayed. The
 * first call runs step by step (it compiled the kernels), as do programs with a routine
 * that cannot be recorded (graph_routine_ok), programs of one step (one launch either
 * way), and every call while JAXC_DEBUG (per-step timings) or JAXC_TRACE is on or
 * JAXC_CUDA_GRAPHS=0. Threads: a program's recordings are launched under its lock (a
 * recording is never launched from two threads at once); calls of different threads
 * have different inputs or outputs, so each finds its own recordings. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "jit/jit.h"

#define REPLAY_EXECS 8   /* recordings kept per program, least recently used evicted */
#define REPLAY_GIVE_UP 16 /* recordings, none replayed yet, after which a program stops */

typedef struct ReplayExec {
  void *exec;  /* the backend's recording (NULL: free entry) */
  void **key;  /* what a call must match: the addresses of the input, constant and
                  output slots, in slot order */
  void **ptrs; /* every step's args then outputs, as recorded (temporaries: the
                  recording's own) */
  int nkey, nptrs;
  uint64_t hash, used;
} ReplayExec;

struct JitReplay {
  pthread_mutex_t lock; /* guards everything below and the launches of the recordings */
  const Backend *be;
  int64_t calls, records, replays;
  int eligible;         /* -1: not yet checked against the program */
  bool *escapes;        /* per slot: a program output (its buffer outlives the call) */
  bool off;             /* stopped recording: step by step from now on */
  uint64_t tick;
  ReplayExec ex[REPLAY_EXECS];
};

JitReplay *jit_replay_new(const Backend *be) {
  if (!be->graph_begin) return NULL;
  JitReplay *r = calloc(1, sizeof *r);
  if (!r) return NULL; /* then calls run step by step */
  pthread_mutex_init(&r->lock, NULL);
  r->be = be;
  r->eligible = -1;
  return r;
}

static void exec_release(const Backend *be, ReplayExec *e) {
  if (e->exec) be->graph_release(be, e->exec);
  free(e->key), free(e->ptrs);
  *e = (ReplayExec){0};
}

void jit_replay_free(JitReplay *r) {
  if (!r) return;
  for (int i = 0; i < REPLAY_EXECS; i++) exec_release(r->be, &r->ex[i]);
  pthread_mutex_destroy(&r->lock);
  free(r->escapes);
  free(r);
}

JitReplayStats jit_replay_stats(const JitReplay *r) {
  JitReplayStats s = {0};
  if (!r) return s;
  pthread_mutex_lock((pthread_mutex_t *)&r->lock);
  s.records = r->records, s.replays = r->replays, s.off = r->off;
  pthread_mutex_unlock((pthread_mutex_t *)&r->lock);
  return s;
}

/* Under r->lock, once: whether p may be recorded, and which slots escape. */
static bool check_program(JitReplay *r, const Program *p) {
  const Backend *be = r->be;
  if (p->nsteps < 2) return false;
  for (int k = 0; k < p->nsteps; k++)
    if (p->steps[k].is_routine && !be->graph_routine_ok(be, &p->steps[k].routine)) return false;
  if (!(r->escapes = calloc((size_t)(p->nslots ? p->nslots : 1), sizeof *r->escapes))) return false;
  for (int o = 0; o < p->nout; o++) r->escapes[p->outs[o].slot] = true;
  return true;
}

/* Bytes of step st's output o (as backend_run_outs and backend_run_routine allocate). */
static size_t out_nbytes(const Step *st, int o) {
  if (st->is_routine) return routine_out_nbytes(&st->routine, o);
  return (size_t)kernel_out_elems(&st->kernel, o) * jx_dtype_itemsize(kernel_out_dtype(&st->kernel, o));
}

/* The steps' temporaries (outputs that do not escape) into bufs, a temporary past its
 * last use reused for a later one of its size as run.c's frees and the allocator would
 * (freed ones go to pool), and ptrs: every step's args then outputs. */
static jx_status alloc_temps(const JitReplay *r, const Program *p, Buffer **bufs, void **ptrs, Buffer **pool,
                             int *npool) {
  int n = 0;
  for (int k = 0; k < p->nsteps; k++) {
    const Step *st = &p->steps[k];
    for (int a = 0; a < step_nargs(st); a++) ptrs[n++] = bufs[st->args[a]]->mem;
    for (int o = 0; o < st->nout; o++) {
      int slot = st->outs[o];
      if (!r->escapes[slot]) {
        size_t nb = out_nbytes(st, o);
        Buffer *b = NULL;
        for (int i = 0; i < *npool && !b; i++)
          if (pool[i]->nbytes == nb) b = pool[i], pool[i] = pool[--*npool];
        if (!b && !(b = buffer_new(r->be, nb))) return jx_last_status();
        bufs[slot] = b;
      }
      ptrs[n++] = bufs[slot]->mem;
    }
    for (int f = 0; f < st->nfree; f++) {
      pool[(*npool)++] = bufs[st->frees[f]];
      bufs[st->frees[f]] = NULL;
    }
  }
  return JX_OK;
}

/* Frees the temporaries alloc_temps made (those still in bufs and the pool). */
static void free_temps(const JitReplay *r, const Program *p, Buffer **bufs, Buffer **pool, int *npool) {
  for (int slot = 0; slot < p->nslots; slot++)
    if (p->kinds[slot] == SLOT_TEMP && !r->escapes[slot] && bufs[slot]) buffer_free(bufs[slot]), bufs[slot] = NULL;
  for (int i = 0; i < *npool; i++) buffer_free(pool[i]);
  *npool = 0;
}

/* The earlier steps that step k (its args and outputs at ptrs + at[k]) depends on, into
 * deps (at most k): the last writer of each address it reads or writes, and the readers
 * of an address it writes since that address's last writer (temporaries are reused
 * after their last use: alloc_temps). */
static int step_deps(const Program *p, void *const *all, const int *at, int k, int *deps) {
  const Step *st = &p->steps[k];
  int na = step_nargs(st), n = 0;
  void *const *mine = all + at[k];
  for (int j = k - 1; j >= 0; j--) {
    const Step *sj = &p->steps[j];
    int ja = step_nargs(sj);
    void *const *theirs = all + at[j];
    bool dep = false;
    /* j writes what k reads or writes; j reads what k writes */
    for (int o = 0; o < sj->nout && !dep; o++)
      for (int i = 0; i < na + st->nout && !dep; i++) dep = theirs[ja + o] == mine[i];
    for (int a = 0; a < ja && !dep; a++)
      for (int o = 0; o < st->nout && !dep; o++) dep = theirs[a] == mine[na + o];
    if (dep) deps[n++] = j;
  }
  return n;
}

/* A step's estimated cost, for finding the critical path (jit_critical_path): a
 * kernel's elements times its reduction's length, a product's multiply-adds over 32
 * (tensor cores: the MLP step's 4096 x 784 x 512 GEMM took 20 us on an H100 where its
 * 4096 x 512 x 10 rows kernel took 10), another routine's output bytes. A heuristic:
 * only the order of paths' sums matters. */
static double step_cost(const Step *st) {
  if (!st->is_routine) {
    const Kernel *k = &st->kernel;
    return (double)k->size * (k->has_reduction && k->reduction.size > 1 ? (double)k->reduction.size : 1.0);
  }
  const Routine *r = &st->routine;
  if (r->op == ROUTINE_GEMM) return (double)r->outer * (double)r->n * (double)r->m * (double)r->inner / 32.0;
  double b = 0;
  for (int o = 0; o < r->nout; o++) b += (double)routine_out_nbytes(r, o);
  return b;
}

void jit_critical_path(int n, const double *cost, const int *at, const int *deps, bool *critical) {
  for (int k = 0; k < n; k++) critical[k] = false;
  double *head = malloc((size_t)(n > 0 ? n : 1) * sizeof *head); /* the longest path ending with k */
  if (!head) return; /* no priorities then: every step alike */
  int last = -1;
  for (int k = 0; k < n; k++) {
    double h = 0;
    for (int i = at[k]; i < at[k + 1]; i++) h = head[deps[i]] > h ? head[deps[i]] : h;
    head[k] = h + cost[k];
    if (head[k] > 0 && (last < 0 || head[k] > head[last])) last = k;
  }
  /* back from the end of the longest path, through the dependency each step waited for
   * longest (the first of equals: one path, so equal independent chains stay parallel) */
  for (int k = last; k >= 0;) {
    critical[k] = true;
    int next = -1;
    for (int i = at[k]; i < at[k + 1]; i++)
      if (next < 0 || head[deps[i]] > head[next]) next = deps[i];
    k = next;
  }
  free(head);
}

/* The dependencies of every step (step_deps) into *deps, step k's at (*deps)[at[k] ..
 * at[k + 1]), and which steps lie on the critical path (jit_critical_path) into
 * critical. False on out-of-memory (error set). */
static bool all_deps(const Program *p, void *const *all, const int *ptr_at, int *at, int **deps, bool *critical) {
  int n = p->nsteps, cap = 4 * n + 16, total = 0;
  int *d = malloc((size_t)cap * sizeof *d), *one = malloc((size_t)n * sizeof *one);
  double *cost = malloc((size_t)n * sizeof *cost);
  for (int k = 0; k < n && d && one && cost; k++) {
    int m = step_deps(p, all, ptr_at, k, one);
    if (total + m > cap) {
      while (total + m > cap) cap *= 2;
      int *g = realloc(d, (size_t)cap * sizeof *d);
      if (!g) free(d);
      d = g;
      if (!d) break;
    }
    at[k] = total;
    memcpy(d + total, one, (size_t)m * sizeof *one);
    total += m;
    cost[k] = step_cost(&p->steps[k]);
  }
  bool ok = d && one && cost;
  if (ok) {
    at[n] = total;
    jit_critical_path(n, cost, at, d, critical);
    *deps = d;
  } else {
    free(d);
    error_set(JX_ERR_OOM, "jit: out of memory");
  }
  free(one), free(cost);
  return ok;
}

/* Queues every step on the addresses ptrs (per step: args, then outputs) -- recorded
 * between graph_begin and graph_end (with each step's dependencies and whether it is on
 * the critical path, where the backend takes them: Backend.graph_step), else run. */
static jx_status issue(const Program *p, const Backend *be, void *const *ptrs, bool recording) {
  jx_status s = JX_OK;
  int *ptr_at = NULL, *at = NULL, *deps = NULL;
  bool *critical = NULL;
  if (recording && be->graph_step && p->nsteps > 1) {
    int n = p->nsteps;
    ptr_at = malloc((size_t)n * sizeof *ptr_at), at = malloc((size_t)(n + 1) * sizeof *at);
    critical = malloc((size_t)n * sizeof *critical);
    if (ptr_at && at && critical) {
      for (int k = 0, m = 0; k < n; k++) ptr_at[k] = m, m += step_nargs(&p->steps[k]) + p->steps[k].nout;
      if (!all_deps(p, ptrs, ptr_at, at, &deps, critical)) s = JX_ERR_OOM;
    } else {
      error_set(JX_ERR_OOM, "jit: out of memory");
      s = JX_ERR_OOM;
    }
    if (s != JX_OK) {
      free(ptr_at), free(at), free(critical);
      return s;
    }
  }
  for (int k = 0; k < p->nsteps && s == JX_OK; k++) {
    const Step *st = &p->steps[k];
    int nargs = step_nargs(st);
    void *const *args = ptrs, *const *outs = ptrs + nargs;
    ptrs += nargs + st->nout;
    if (deps && (s = be->graph_step(be, k, at[k + 1] - at[k], deps + at[k], critical[k],
                                 st->is_routine ? &st->routine : NULL, st->is_routine ? NULL : &st->kernel)) != JX_OK)
      break;
    if (st->is_routine) {
      s = be->routine(be, &st->routine, args, outs);
      continue;
    }
    void *exe = NULL;
    s = be->prepare(be, &st->kernel, &exe);
    if (s == JX_OK && st->kernel.size > 0) s = be->dispatch(be, exe, &st->kernel, args, outs);
  }
  free(ptr_at), free(at), free(deps), free(critical);
  return s;
}

static uint64_t hash_ptrs(void *const *ptrs, int n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < n; i++) h = (h ^ (uint64_t)(uintptr_t)ptrs[i]) * 0x100000001b3ull;
  return h;
}

/* Under r->lock: the recording for this key (launched), else a new one (recorded, with
 * temporaries of its own, kept and launched); where recording fails, the steps run
 * directly and r stops recording. */
static jx_status launch_locked(JitReplay *r, const Program *p, Buffer **bufs, void **key, int nkey, int nptrs) {
  const Backend *be = r->be;
  uint64_t h = hash_ptrs(key, nkey);
  for (int i = 0; i < REPLAY_EXECS; i++) {
    ReplayExec *e = &r->ex[i];
    if (e->exec && e->hash == h && e->nkey == nkey && memcmp(e->key, key, (size_t)nkey * sizeof *key) == 0) {
      e->used = ++r->tick;
      r->replays++;
      return be->graph_launch(be, e->exec);
    }
  }
  void **ptrs = malloc((size_t)(nptrs ? nptrs : 1) * sizeof *ptrs);
  Buffer **pool = malloc((size_t)(p->nslots ? p->nslots : 1) * sizeof *pool); /* freed temporaries */
  void **kcopy = malloc((size_t)(nkey ? nkey : 1) * sizeof *kcopy);
  int npool = 0;
  if (!ptrs || !pool || !kcopy) {
    free(ptrs), free(pool), free(kcopy);
    error_set(JX_ERR_OOM, "jit: out of memory");
    return JX_ERR_OOM;
  }
  /* Record. The temporaries are allocated and freed while recording, so they belong to
   * the recording (Backend.graph_*). A failure here (a step the driver will not record)
   * is not the caller's: set aside, and the steps run directly. */
  ErrorSaved saved = error_stash();
  void *exec = NULL;
  jx_status s = be->graph_begin(be);
  if (s == JX_OK) {
    jx_status si = alloc_temps(r, p, bufs, ptrs, pool, &npool);
    if (si == JX_OK) si = issue(p, be, ptrs, true);
    free_temps(r, p, bufs, pool, &npool);
    s = be->graph_end(be, &exec);
    if (si != JX_OK && exec) be->graph_release(be, exec), exec = NULL;
    if (s == JX_OK) s = si;
  }
  r->records++;
  if (s != JX_OK || !exec) {
    r->off = true;
    jx_clear_error();
    error_unstash(&saved);
    s = alloc_temps(r, p, bufs, ptrs, pool, &npool);
    if (s == JX_OK) s = issue(p, be, ptrs, false);
    free_temps(r, p, bufs, pool, &npool); /* stream-ordered after the steps */
    free(ptrs), free(pool), free(kcopy);
    return s;
  }
  free(pool);
  s = be->graph_launch(be, exec);
  if (s != JX_OK) { /* not kept */
    be->graph_release(be, exec);
    free(ptrs), free(kcopy);
    error_unstash(&saved);
    return s;
  }
  memcpy(kcopy, key, (size_t)nkey * sizeof *key);
  ReplayExec *slot = &r->ex[0];
  for (int i = 0; i < REPLAY_EXECS; i++)
    if (!r->ex[i].exec || r->ex[i].used < slot->used) slot = &r->ex[i];
  exec_release(be, slot);
  *slot = (ReplayExec){.exec = exec, .key = kcopy, .ptrs = ptrs, .nkey = nkey, .nptrs = nptrs, .hash = h,
                       .used = ++r->tick};
  if (r->records >= REPLAY_GIVE_UP && r->replays == 0) r->off = true;
  error_unstash(&saved);
  return JX_OK;
}

bool jit_replay_steps(JitReplay *r, const Program *p, Buffer **bufs, jx_status *status) {
  if (!r || !config_cuda_graphs() || config_debug_level() >= 1 || config_trace_enabled()) return false;
  pthread_mutex_lock(&r->lock);
  if (r->eligible < 0) r->eligible = check_program(r, p);
  bool go = r->eligible && !r->off && r->calls++ > 0; /* the first call runs step by step */
  pthread_mutex_unlock(&r->lock);
  if (!go) return false;
  const Backend *be = r->be;
  int nptrs = 0;
  for (int k = 0; k < p->nsteps; k++) nptrs += step_nargs(&p->steps[k]) + p->steps[k].nout;
  /* this call's outputs (in step order), then the key: every input, constant and
   * output slot's address */
  void **key = malloc((size_t)(p->nslots ? p->nslots : 1) * sizeof *key);
  int nkey = 0;
  jx_status s = key ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "jit: out of memory");
  for (int k = 0; k < p->nsteps && s == JX_OK; k++) {
    const Step *st = &p->steps[k];
    for (int o = 0; o < st->nout && s == JX_OK; o++)
      if (r->escapes[st->outs[o]] && !(bufs[st->outs[o]] = buffer_new(be, out_nbytes(st, o)))) s = jx_last_status();
  }
  for (int slot = 0; slot < p->nslots && s == JX_OK; slot++)
    if (p->kinds[slot] != SLOT_TEMP || r->escapes[slot]) key[nkey++] = bufs[slot] ? bufs[slot]->mem : NULL;
  if (s == JX_OK) {
    pthread_mutex_lock(&r->lock);
    s = launch_locked(r, p, bufs, key, nkey, nptrs);
    pthread_mutex_unlock(&r->lock);
  }
  free(key);
  *status = s;
  return true;
}
