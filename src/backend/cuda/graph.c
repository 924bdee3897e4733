/* graph.c -- CUDA graphs: a jitted program's launches recorded once by stream capture
 * (on a capture stream of the recording thread, so other threads' work on the device's
 * stream is never caught in it) and replayed with one cuGraphLaunch on the device's
 * stream, so a small training step costs one launch instead of one per kernel and
 * cuBLAS call. What a graph reads and writes is fixed at recording: jit/replay.c replays
 * it only for calls whose buffers have the same addresses. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "core/config.h"
#include "core/error.h"

enum {
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
  CU_STREAM_NON_BLOCKING_ = 1,
  CU_EVENT_DISABLE_TIMING_ = 2,
  CU_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY_ = 8
};

typedef struct CudaGraph {
  CUgraphExec exec;
  void **kept; /* device memory freed by recorded steps (scratch): the replays use it */
  int nkept, cap;
  bool broken; /* a block could not be kept: the recording is discarded */
  /* branches (cuda_graph_step): per step its branch and the event recorded after it */
  CUevent *events;
  int *branch_of;
  int nsteps, steps_cap, prev; /* prev: the step issued last (-1: none) */
  int tail[CUDA_GRAPH_BRANCHES];    /* the last step on each branch (-1: unused so far) */
  CUevent start;               /* recorded on the first branch at the beginning */
  /* modules whose tickets steps took (cuda_graph_step) and the branch each went on */
  const void **tmods;
  int *tbranch;
  int ntm, tmcap;
} CudaGraph;

/* One recording at a time: the capture stream and blas.c's capture handle are shared. */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static CUstream capture_stream;
static CUstream branch_streams[CUDA_GRAPH_BRANCHES]; /* [0] is capture_stream */
static _Thread_local CudaGraph *recording;
static _Thread_local int current_branch;
static CudaGraphStats stats; /* atomic fields */

bool cuda_graph_recording(void) { return recording != NULL; }

int cuda_graph_branch(void) { return recording ? current_branch : 0; }

CUstream cuda_stream(void) { return recording ? branch_streams[current_branch] : cuda_device()->stream; }

/* JAXC_CUDA_GRAPH_PRIORITY=1: the critical path first (cuda_graph_step; off: it made
 * the MLP step slower on an H100, bench/RESULTS.md 2026-12-06 14:00) */
static bool priority_on(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_GRAPH_PRIORITY", 0, 0, 1) == 1;
}

/* A capture stream: with priority_on, the first at the device's greatest priority, the
 * others at its least. */
static jx_status branch_stream_create(const CudaDevice *d, int b, CUstream *out) {
  if (!priority_on()) return cuda_check(d->cu.cuStreamCreate(out, CU_STREAM_NON_BLOCKING_), "cuStreamCreate");
  int least = 0, greatest = 0;
  jx_status s = cuda_check(d->cu.cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
  if (s == JX_OK)
    s = cuda_check(d->cu.cuStreamCreateWithPriority(out, CU_STREAM_NON_BLOCKING_, b == 0 ? greatest : least),
                   "cuStreamCreateWithPriority");
  return s;
}

/* JAXC_CUDA_GRAPH_BRANCHES (1..CUDA_GRAPH_BRANCHES, default CUDA_GRAPH_BRANCHES), read once */
static int branches(void) {
  static int n;
  int v = __atomic_load_n(&n, __ATOMIC_RELAXED);
  if (!v) {
    const char *e = getenv("JAXC_CUDA_GRAPH_BRANCHES");
    v = e && *e ? atoi(e) : CUDA_GRAPH_BRANCHES;
    v = v < 1 ? 1 : v > CUDA_GRAPH_BRANCHES ? CUDA_GRAPH_BRANCHES : v;
    __atomic_store_n(&n, v, __ATOMIC_RELAXED);
  }
  return v;
}

CudaGraphStats cuda_graph_stats(void) {
  CudaGraphStats s;
  s.captures = __atomic_load_n(&stats.captures, __ATOMIC_RELAXED);
  s.launches = __atomic_load_n(&stats.launches, __ATOMIC_RELAXED);
  return s;
}

bool cuda_graph_routine_ok(const Routine *r) {
  /* GEMM (cuBLAS/cuBLASLt), sort and scatter-add only queue kernels and copies; the
   * solvers wait for the stream (info words, pivots), FFT plans are bound to the
   * device's stream, and the host linear algebra copies through host memory */
  return r->op == ROUTINE_GEMM || r->op == ROUTINE_SORT || r->op == ROUTINE_SCATTER_ADD;
}

jx_status cuda_graph_begin(void) {
  jx_status s = cuda_init();
  if (s != JX_OK) return s;
  cuda_make_current();
  const CudaDevice *d = cuda_device();
  CudaGraph *g = calloc(1, sizeof *g);
  if (!g) {
    error_set(JX_ERR_OOM, "cuda: out of host memory for a graph");
    return JX_ERR_OOM;
  }
  pthread_mutex_lock(&capture_lock);
  if (!capture_stream) s = branch_stream_create(d, 0, &capture_stream);
  branch_streams[0] = capture_stream;
  for (int b = 1; b < branches() && s == JX_OK; b++)
    if (!branch_streams[b]) s = branch_stream_create(d, b, &branch_streams[b]);
  g->prev = -1;
  for (int b = 0; b < CUDA_GRAPH_BRANCHES; b++) g->tail[b] = -1;
  /* relaxed: a recorded step may still allocate (cuMemAlloc when the cache is empty) */
  if (s == JX_OK)
    s = cuda_check(d->cu.cuStreamBeginCapture(capture_stream, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  if (s != JX_OK) {
    pthread_mutex_unlock(&capture_lock);
    free(g);
    return s;
  }
  recording = g;
  current_branch = 0;
  if (branches() > 1) { /* the start every other branch joins the capture from */
    s = cuda_check(d->cu.cuEventCreate(&g->start, CU_EVENT_DISABLE_TIMING_), "cuEventCreate");
    if (s == JX_OK) s = cuda_check(d->cu.cuEventRecord(g->start, capture_stream), "cuEventRecord");
    if (s != JX_OK) g->broken = true; /* discarded at cuda_graph_end */
  }
  return JX_OK;
}

/* Records the event after step prev on its branch. */
static jx_status close_prev(CudaGraph *g) {
  if (g->prev < 0 || g->events[g->prev]) return JX_OK;
  const CudaDevice *d = cuda_device();
  jx_status s = cuda_check(d->cu.cuEventCreate(&g->events[g->prev], CU_EVENT_DISABLE_TIMING_), "cuEventCreate");
  if (s == JX_OK)
    s = cuda_check(d->cu.cuEventRecord(g->events[g->prev], branch_streams[g->branch_of[g->prev]]), "cuEventRecord");
  return s;
}

/* *b: the branch steps taking module mod's tickets went on; where none has yet, *b (>= 0)
 * becomes it. False on out-of-memory (error set). */
static bool tickets_branch(CudaGraph *g, const void *mod, int *b) {
  for (int i = 0; i < g->ntm; i++)
    if (g->tmods[i] == mod) return *b = g->tbranch[i], true;
  if (g->ntm == g->tmcap) {
    int cap = g->tmcap ? 2 * g->tmcap : 8;
    const void **m = realloc(g->tmods, (size_t)cap * sizeof *m);
    if (m) g->tmods = m;
    int *br = m ? realloc(g->tbranch, (size_t)cap * sizeof *br) : NULL;
    if (!br) {
      error_set(JX_ERR_OOM, "cuda: out of host memory recording a graph");
      return false;
    }
    g->tbranch = br, g->tmcap = cap;
  }
  g->tmods[g->ntm] = mod, g->tbranch[g->ntm++] = *b;
  return true;
}

jx_status cuda_graph_step(int step, int ndeps, const int *deps, bool serial, bool critical, const void *tickets) {
  CudaGraph *g = recording;
  if (!g || branches() < 2 || g->broken) return JX_OK;
  const CudaDevice *d = cuda_device();
  if (step < 0 || step < g->nsteps) {
    error_set(JX_ERR_INTERNAL, "cuda: graph step %d out of order", step);
    return JX_ERR_INTERNAL;
  }
  if (step >= g->steps_cap) {
    int cap = g->steps_cap ? 2 * g->steps_cap : 64;
    while (cap <= step) cap *= 2;
    CUevent *ev = realloc(g->events, (size_t)cap * sizeof *ev);
    if (ev) g->events = ev;
    int *br = ev ? realloc(g->branch_of, (size_t)cap * sizeof *br) : NULL;
    if (!ev || !br) {
      error_set(JX_ERR_OOM, "cuda: out of host memory recording a graph");
      return JX_ERR_OOM;
    }
    g->branch_of = br;
    memset(g->events + g->steps_cap, 0, (size_t)(cap - g->steps_cap) * sizeof *ev);
    g->steps_cap = cap;
  }
  for (int k = g->nsteps; k < step; k++) g->branch_of[k] = -1, g->events[k] = NULL; /* skipped */
  jx_status s = close_prev(g);
  if (s != JX_OK) return s;
  /* the branch: the first for serial routines (and, with priorities, for the critical
   * path, which the others then leave to it); else that of a dependency this step
   * directly follows (the latest such), else the one idle longest */
  bool prio = priority_on();
  int b = -1, first = prio ? 1 : 0;
  if (serial || (prio && critical)) b = 0;
  for (int i = 0; i < ndeps && b < 0; i++) {
    int dep = deps[i], db = dep >= 0 && dep < step ? g->branch_of[dep] : -1;
    if (db >= first && g->tail[db] == dep) b = db;
  }
  if (b < 0) {
    b = first;
    for (int c = first + 1; c < branches(); c++)
      if (g->tail[c] < g->tail[b]) b = c;
  }
  /* the branch of the module's earlier steps, else this one becomes it */
  if (tickets && !tickets_branch(g, tickets, &b)) return JX_ERR_OOM;
  if (g->tail[b] < 0 && b > 0)
    s = cuda_check(d->cu.cuStreamWaitEvent(branch_streams[b], g->start, 0), "cuStreamWaitEvent");
  for (int i = 0; i < ndeps && s == JX_OK; i++) {
    int dep = deps[i];
    if (dep < 0 || dep >= step || g->branch_of[dep] < 0 || g->branch_of[dep] == b || !g->events[dep]) continue;
    s = cuda_check(d->cu.cuStreamWaitEvent(branch_streams[b], g->events[dep], 0), "cuStreamWaitEvent");
  }
  if (s != JX_OK) return s;
  g->branch_of[step] = b, g->tail[b] = step, g->prev = step, g->nsteps = step + 1;
  current_branch = b;
  return JX_OK;
}

/* Joins every other branch into the first before the capture ends. */
static jx_status join_branches(CudaGraph *g) {
  const CudaDevice *d = cuda_device();
  jx_status s = close_prev(g);
  for (int b = 1; b < CUDA_GRAPH_BRANCHES && s == JX_OK; b++) {
    if (g->tail[b] < 0) continue;
    CUevent e = g->events[g->tail[b]];
    if (e) s = cuda_check(d->cu.cuStreamWaitEvent(capture_stream, e, 0), "cuStreamWaitEvent");
  }
  current_branch = 0;
  return s;
}

static void free_events(CudaGraph *g) {
  const CudaDevice *d = cuda_device();
  for (int k = 0; k < g->nsteps; k++)
    if (g->events[k]) d->cu.cuEventDestroy(g->events[k]);
  if (g->start) d->cu.cuEventDestroy(g->start);
  free(g->events), free(g->branch_of), free(g->tmods), free(g->tbranch);
  g->tmods = NULL, g->tbranch = NULL, g->ntm = g->tmcap = 0;
  g->events = NULL, g->branch_of = NULL, g->start = NULL, g->nsteps = g->steps_cap = 0;
}

jx_status cuda_graph_end(void **exec) {
  *exec = NULL;
  CudaGraph *g = recording;
  if (!g) {
    error_set(JX_ERR_INTERNAL, "cuda: cuda_graph_end without cuda_graph_begin");
    return JX_ERR_INTERNAL;
  }
  const CudaDevice *d = cuda_device();
  jx_status sj = g->start ? join_branches(g) : JX_OK;
  recording = NULL;
  current_branch = 0;
  CUgraph graph = NULL;
  jx_status s = cuda_check(d->cu.cuStreamEndCapture(capture_stream, &graph), "cuStreamEndCapture");
  pthread_mutex_unlock(&capture_lock);
  free_events(g);
  if (s == JX_OK && sj != JX_OK) s = sj;
  if (s == JX_OK && g->broken) {
    error_set(JX_ERR_OOM, "cuda: out of host memory recording a graph");
    s = JX_ERR_OOM;
  }
  /* with priorities, kernel nodes run at their capture streams' (cuda_graph_step) */
  unsigned long long flags = priority_on() && branches() > 1 ? CU_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY_ : 0;
  if (s == JX_OK) s = cuda_check(d->cu.cuGraphInstantiateWithFlags(&g->exec, graph, flags), "cuGraphInstantiate");
  if (graph) d->cu.cuGraphDestroy(graph); /* the executable is independent of it */
  if (s != JX_OK) {
    cuda_graph_release(g);
    return s;
  }
  __atomic_add_fetch(&stats.captures, 1, __ATOMIC_RELAXED);
  *exec = g;
  return JX_OK;
}

jx_status cuda_graph_launch(void *exec) {
  CudaGraph *g = exec;
  const CudaDevice *d = cuda_device();
  cuda_make_current();
  __atomic_add_fetch(&stats.launches, 1, __ATOMIC_RELAXED);
  return cuda_check(d->cu.cuGraphLaunch(g->exec, d->stream), "cuGraphLaunch");
}

void cuda_graph_release(void *exec) {
  CudaGraph *g = exec;
  if (!g) return;
  /* a launch still queued finishes first (the driver frees an executable in flight on
   * completion); the kept blocks' next users are queued after it on the stream */
  if (g->exec) cuda_device()->cu.cuGraphExecDestroy(g->exec);
  for (int i = 0; i < g->nkept; i++) cuda_free(g->kept[i]);
  free(g->kept);
  free(g);
}

bool cuda_graph_keep(void *mem) {
  CudaGraph *g = recording;
  if (!g) return false;
  if (g->nkept == g->cap) {
    int cap = g->cap ? 2 * g->cap : 8;
    void **k = realloc(g->kept, (size_t)cap * sizeof *k);
    if (!k) {
      g->broken = true; /* mem goes back to the allocator; the graph is never used */
      return false;
    }
    g->kept = k, g->cap = cap;
  }
  g->kept[g->nkept++] = mem;
  return true;
}
