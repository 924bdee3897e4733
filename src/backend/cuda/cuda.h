/* cuda.h -- the cuda backend: NVIDIA GPUs through the CUDA driver API, NVRTC and cuBLAS,
 * all opened with dlopen on first use, so jaxc builds and runs without them (asking for
 * "cuda" then fails with JX_ERR_DEVICE naming the missing piece). Internal to
 * src/backend/cuda and its tests.
 *
 * One device (ordinal 0, its primary context) and one stream: every copy, kernel and
 * library call is queued on that stream in program order, so buffers may be reused as
 * soon as they are freed (the next user is ordered after the last one) and the host
 * waits only in copy_out and synchronize. */
#ifndef JAXC_BACKEND_CUDA_CUDA_H
#define JAXC_BACKEND_CUDA_CUDA_H

#include <stdint.h>

#include "backend/backend.h"

/* The device "cuda". Buffers are device pointers (host_memory is false). */
extern const Backend backend_cuda;

/* ------------------------------------------------------------- driver.c */

/* The subset of the driver API jaxc calls, declared here so that no CUDA header is
 * needed to build (types as in cuda.h; every function returns a CUresult, 0 = success). */
typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

typedef struct CudaDriver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(int *, int);
  CUresult (*cuDeviceGetName)(char *, int, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, int);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamCreateWithPriority)(CUstream *, unsigned, int);
  CUresult (*cuCtxGetStreamPriorityRange)(int *, int *);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
  /* graphs (graph.c): stream capture, instantiation, replay */
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
} CudaDriver;

/* The state of the one device, filled by cuda_init. */
typedef struct CudaDevice {
  CudaDriver cu;
  CUcontext ctx;
  CUstream stream;
  int ordinal;
  int cc_major, cc_minor; /* compute capability (9, 0 on an H100/H200) */
  int sm_count;
  int max_smem_optin;     /* bytes of shared memory a block may opt in to */
  char name[128];         /* "NVIDIA H200" */
  int driver_version;     /* 13000 for CUDA 13.0 */
} CudaDevice;

/* Loads libcuda.so.1, initializes device 0 and creates the stream, once (thread-safe).
 * JX_OK, or JX_ERR_DEVICE with a message naming what is missing (the library, a symbol,
 * a device) -- the same status and message on every later call. */
jx_status cuda_init(void);
/* The device after a successful cuda_init (NULL before or after a failure). */
const CudaDevice *cuda_device(void);
/* Makes the device's context current on the calling thread (cheap after the first call
 * on a thread). */
void cuda_make_current(void);
/* Checks a driver call: JX_OK, or sets JX_ERR_DEVICE "<what>: <CUDA error name>:
 * <description>" (JX_ERR_OOM for CUDA_ERROR_OUT_OF_MEMORY) and returns it. */
jx_status cuda_check(CUresult r, const char *what);
/* Opens the first of `names` that dlopen finds, trying each also under $CUDA_HOME/lib64,
 * $CUDA_PATH/lib64 and /usr/local/cuda/lib64. NULL when none (why: in `why`). */
void *cuda_dlopen_any(const char *const *names, char *why, size_t nwhy);

/* The stream the calling thread queues work on: the device's one stream, or while the
 * thread records a graph (graph.c), its capture stream. Every copy, launch and library
 * call of the backend goes through it. */
CUstream cuda_stream(void);

/* -------------------------------------------------------------- graph.c */

/* CUDA graphs for jit (backend.h, graph_*): the launches a thread makes between
 * cuda_graph_begin and cuda_graph_end are recorded (stream capture on a capture stream
 * of its own, relaxed mode) instead of run, and instantiated into an executable that
 * cuda_graph_launch replays on the device's stream. Device memory freed while
 * recording (jit's temporaries, a reduction's scratch, a sort's temporaries) stays with
 * the executable -- the replays write it -- and goes back to the allocator with it;
 * memory allocated while recording is a new block, never one off the free lists (the
 * addresses later calls are given stay those of the calls before).
 * Captures are serialized by a lock (one capture stream, one cuBLAS handle on it). */
jx_status cuda_graph_begin(void);
/* Ends the recording; *exec (a CudaGraph *) on success, NULL with the error set (the
 * recording is discarded) on failure. */
jx_status cuda_graph_end(void **exec);
jx_status cuda_graph_launch(void *exec);
void cuda_graph_release(void *exec);
/* Whether routine r may be recorded: it only queues work on the stream (no host waits,
 * no host-side steps). */
bool cuda_graph_routine_ok(const Routine *r);
/* While recording: keeps mem (freed by a recorded step) for the graph instead of
 * returning it to the allocator; false when the thread is not recording. */
bool cuda_graph_keep(void *mem);
/* While recording: step `step` of the recording (0, 1, ... in issue order) comes next;
 * it depends on the earlier steps deps[0..ndeps) (it reads what they wrote, or writes
 * what they read or wrote). The step goes on one of CUDA_GRAPH_BRANCHES capture streams --
 * the branch of a dependency it directly follows, else the least recently used one --
 * after event waits on its dependencies on other branches, so independent steps (an
 * optimizer's parameter updates, a bias gradient beside a weight gradient's GEMM)
 * become parallel branches of the graph. `serial` steps (routines other than GEMM: CUB's
 * sort and scatter-add) stay on the first branch; GEMMs take a branch as kernels do,
 * each branch with its own cuBLAS workspace (blas.c). `tickets`: the module whose
 * jx_split_tickets the step's kernel takes (render_cuda_uses_tickets; NULL: none) --
 * every step of the recording with the same module goes on the branch the first one took,
 * so no two of them run at once (a module holds a program's batch of kernels, and they
 * share its tickets). JAXC_CUDA_GRAPH_BRANCHES=1 keeps every step on one stream.
 * With JAXC_CUDA_GRAPH_PRIORITY=1 (a measuring switch, off by default), `critical`
 * steps (on the recording's critical path: jit_critical_path) go on the first branch,
 * whose stream has the device's greatest priority, the others on the rest, at the
 * least, and the graph is instantiated with CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY
 * (kernel nodes keep their capture stream's priority), so where both have blocks waiting
 * the critical path's are scheduled first (the MLP step at batch 4096: x @ W1, the
 * logits, the loss rows, dh and dW1 ahead of the h store, dW2 and the bias gradients).
 * Measured on an H100 (2026-12-06 14:00, three runs each) it made that step slower:
 * 0.0337-0.0371 / 0.0973-0.0998 ms at batch 128 / 4096 against 0.0317-0.0319 /
 * 0.0964-0.0976 without (the side steps, left to three streams, finish later). */
jx_status cuda_graph_step(int step, int ndeps, const int *deps, bool serial, bool critical, const void *tickets);
/* Whether the calling thread is recording a graph. */
bool cuda_graph_recording(void);
/* Capture streams a recording may spread over (JAXC_CUDA_GRAPH_BRANCHES: at most this) */
#define CUDA_GRAPH_BRANCHES 4
/* The branch (0 .. CUDA_GRAPH_BRANCHES-1) the calling thread's recording issues on now;
 * 0 when it is not recording. */
int cuda_graph_branch(void);
/* Graphs instantiated and replayed since process start (tests). */
typedef struct CudaGraphStats {
  int64_t captures, launches;
} CudaGraphStats;
CudaGraphStats cuda_graph_stats(void);

/* -------------------------------------------------------------- alloc.c */

/* The caching allocator. Sizes are rounded up to a size class (multiples of 512 bytes
 * up to 1 MiB, then four classes per power of two); a freed block goes to its class's
 * free list and is handed out again for that class. Nothing is preallocated. When the
 * driver reports out of memory, every cached block is released and the allocation is
 * tried once more. */
void *cuda_alloc(size_t nbytes);      /* NULL + error (JX_ERR_OOM / JX_ERR_DEVICE) */
void cuda_free(void *mem);            /* NULL is fine */
size_t cuda_alloc_class(size_t nbytes); /* the size class of a request */
/* Releases every cached block to the driver. */
void cuda_empty_cache(void);
typedef struct CudaAllocStats {
  int64_t driver_allocs; /* cuMemAlloc calls that succeeded */
  int64_t reuses;        /* requests served from a free list */
  int64_t retries;       /* out-of-memory retries after releasing the cache */
  size_t in_use, cached; /* bytes in live blocks / on free lists (by class size) */
} CudaAllocStats;
CudaAllocStats cuda_alloc_stats(void);

/* -------------------------------------------------------------- nvrtc.c */

/* CUDA C source -> a module loaded in the device's context: from the in-memory cache
 * (full source text), the disk cache (architecture + NVRTC version + full source, byte
 * for byte) or NVRTC (--gpu-architecture=sm_XY, the device's own). JX_ERR_COMPILE with
 * NVRTC's log and the kept source's path; JX_ERR_DEVICE when NVRTC is missing. Modules
 * are never unloaded (callers keep their functions). */
jx_status cuda_compile(const char *source, size_t len, CUmodule *mod);
/* Compiles source (a whole translation unit) with NVRTC for compute capability cc (90)
 * and discards the cubin: tests of the CUDA renderer on machines without a GPU.
 * JX_ERR_DEVICE when NVRTC is missing, JX_ERR_COMPILE with its log. */
jx_status cuda_nvrtc_check(const char *source, int cc, size_t *cubin_bytes);
typedef struct CudaCompileStats {
  int64_t compiles, disk_hits, memory_hits;
} CudaCompileStats;
CudaCompileStats cuda_compile_stats(void);

/* ------------------------------------------------------------ kernels.c */

/* Backend entry points for generated kernels (see backend.h): the CUDA framing
 * (render/cuda.h), NVRTC, a structural cache; launches on the stream. */
jx_status cuda_prepare(const Kernel *k, void **exe);
/* The module holding a prepared kernel (cuda_prepare's exe): a batch's kernels share one,
 * and with it the module's split tickets (prelude_cuda.h). */
const void *cuda_exe_module(const void *exe);
jx_status cuda_prepare_batch(const Kernel *const *ks, int n);
jx_status cuda_dispatch(void *exe, const Kernel *k, void *const *inputs, void *const *outs);

/* --------------------------------------------------------------- blas.c */

/* Runs a ROUTINE_GEMM (float32 -- as TF32 when the matmul precision allows it --,
 * float64, bfloat16, float16; batched; transposes as flags) through cuBLAS on the
 * stream. JX_ERR_DEVICE naming libcublas when it cannot be loaded. */
jx_status cuda_gemm(const Routine *r, void *const *inputs, void *out);
/* Which cuBLAS workspace a product uses: -1, the device stream's (not recording), else
 * the recording's branch's (0 .. CUDA_GRAPH_BRANCHES-1) -- never the device stream's,
 * which a product queued directly by another thread may be using across a replay of the
 * graph (blas.c, branch_workspace). */
int cuda_gemm_workspace_slot(bool recording, int branch);

/* ------------------------------------------------------------- solver.c */

/* Whether routine r runs through cuSOLVER/cuBLAS on the device: cholesky (potrf), eigh
 * (syevd), lu (getrf) and triangular_solve (trsm), float32 and float64; the others go
 * through the host (cuda.c). */
bool cuda_solver_has(const Routine *r);
/* Runs such a routine on the stream (eigh and lu wait for the stream once: failure
 * words, pivots). JX_ERR_DEVICE naming libcusolver when it cannot be loaded. */
jx_status cuda_solver(const Routine *r, void *const *inputs, void *const *outs);

/* -------------------------------------------------------------- cufft.c */

/* ROUTINE_FFT (lax.fft's FFT, IFFT, RFFT, IRFFT over 1-3 trailing axes, float32 or
 * float64 precision, interleaved complex) through cuFFT on the stream, plans cached per
 * shape. JX_ERR_DEVICE naming libcufft when it cannot be loaded. */
jx_status cuda_fft(const Routine *r, void *const *inputs, void *const *outs);

/* ----------------------------------------------------------- routines.c */

/* ROUTINE_SORT and ROUTINE_SCATTER_ADD on the stream, through
 * libjaxc_cuda_routines.so (routines.cu; JX_ERR_UNSUPPORTED naming it when missing). */
jx_status cuda_sort(const Routine *r, void *const *inputs, void *const *outs);
jx_status cuda_scatter_add(const Routine *r, void *const *inputs, void *out);

/* --------------------------------------------------------------- nccl.c */

/* Collectives between cuda devices through NCCL (libnccl.so.2 by dlopen): one
 * communicator per process, over the processes of the MPI job when jx_distributed_
 * initialize ran (bootstrapped through MPI_Allgather of process 0's ncclUniqueId), else
 * over this process alone; calls queue on the stream. */
enum { CUDA_NCCL_SUM = 0, CUDA_NCCL_MAX = 2, CUDA_NCCL_MIN = 3 }; /* ncclRedOp_t */
/* Creates the communicator once; JX_OK when it spans nranks processes with this one at
 * `rank`. JX_ERR_DEVICE naming `fn` and what is missing (libnccl.so.2 and where to find
 * it, a symbol, NCCL's error) otherwise, the same on every later call. */
jx_status cuda_nccl_ready(const char *fn, int nranks, int rank);
/* NCCL's version (e.g. 22703 for 2.27.3) once loaded, else 0. */
int cuda_nccl_version(void);
/* True if NCCL reduces (op) or moves dtype dt (complex: sums only, as two reals). */
bool cuda_nccl_supports(jx_dtype dt, int op);
/* ncclAllReduce / ncclAllGather / ncclReduceScatter of `count` elements of dt per rank
 * (all_gather: sent per rank; reduce_scatter: received per rank) on device pointers. */
jx_status cuda_nccl_all_reduce(const char *fn, const void *send, void *recv, size_t count, jx_dtype dt, int op);
jx_status cuda_nccl_all_gather(const char *fn, const void *send, void *recv, size_t count, jx_dtype dt);
jx_status cuda_nccl_reduce_scatter(const char *fn, const void *send, void *recv, size_t count, jx_dtype dt);

/* --------------------------------------------------------------- cuda.c */

/* Counters since process start (tests, JAXC_DEBUG). */
typedef struct CudaStats {
  int64_t launches;  /* kernels launched */
  int64_t gemms;     /* cuBLAS calls */
  int64_t syncs;     /* host waits on the stream */
} CudaStats;
CudaStats cuda_stats(void);

#endif
