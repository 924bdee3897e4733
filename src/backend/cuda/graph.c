/* graph.c -- CUDA graphs: a jitted program's launches recorded once by stream capture
 * (on a capture stream of the recording thread, so other threads' work on the device's
 * stream is never caught in it) and replayed with one cuGraphLaunch on the device's
 * stream, so a small training step costs one launch instead of one per kernel and
 * cuBLAS call. What a graph reads and writes is fixed at recording: jit/replay.c replays
 * it only for calls whose buffers have the same addresses. */
#include <pthread.h>
#include <stdlib.h>

#include "backend/cuda/cuda.h"
#include "core/error.h"

enum { CU_STREAM_CAPTURE_MODE_RELAXED = 2, CU_STREAM_NON_BLOCKING_ = 1 };

typedef struct CudaGraph {
  CUgraphExec exec;
  void **kept; /* device memory freed by recorded steps (scratch): the replays use it */
  int nkept, cap;
  bool broken; /* a block could not be kept: the recording is discarded */
} CudaGraph;

/* One recording at a time: the capture stream and blas.c's capture handle are shared. */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static CUstream capture_stream;
static _Thread_local CudaGraph *recording;
static CudaGraphStats stats; /* atomic fields */

bool cuda_graph_recording(void) { return recording != NULL; }

CUstream cuda_stream(void) { return recording ? capture_stream : cuda_device()->stream; }

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
  if (!capture_stream)
    s = cuda_check(d->cu.cuStreamCreate(&capture_stream, CU_STREAM_NON_BLOCKING_), "cuStreamCreate");
  /* relaxed: a recorded step may still allocate (cuMemAlloc when the cache is empty) */
  if (s == JX_OK)
    s = cuda_check(d->cu.cuStreamBeginCapture(capture_stream, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  if (s != JX_OK) {
    pthread_mutex_unlock(&capture_lock);
    free(g);
    return s;
  }
  recording = g;
  return JX_OK;
}

jx_status cuda_graph_end(void **exec) {
  *exec = NULL;
  CudaGraph *g = recording;
  if (!g) {
    error_set(JX_ERR_INTERNAL, "cuda: cuda_graph_end without cuda_graph_begin");
    return JX_ERR_INTERNAL;
  }
  const CudaDevice *d = cuda_device();
  recording = NULL;
  CUgraph graph = NULL;
  jx_status s = cuda_check(d->cu.cuStreamEndCapture(capture_stream, &graph), "cuStreamEndCapture");
  pthread_mutex_unlock(&capture_lock);
  if (s == JX_OK && g->broken) {
    error_set(JX_ERR_OOM, "cuda: out of host memory recording a graph");
    s = JX_ERR_OOM;
  }
  if (s == JX_OK) s = cuda_check(d->cu.cuGraphInstantiateWithFlags(&g->exec, graph, 0), "cuGraphInstantiate");
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
