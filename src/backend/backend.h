/* backend.h -- the backend interface: a small table of functions every device
 * implements (interp, the reference; cpu, native code; cuda planned), and refcounted
 * device buffers (freed host buffers are cached for reuse by size). */
#ifndef JAXC_BACKEND_BACKEND_H
#define JAXC_BACKEND_BACKEND_H

#include "jaxc.h"
#include "core/buffer.h"
#include "ir/alu.h"
#include "ir/loop.h"

typedef struct Backend Backend;

/* One device. Every entry gets the device itself (`be`, whose ctx holds its state: a
 * CUDA context and stream; NULL for interp and cpu), as ggml_backend_i does. */
struct Backend {
  const char *name;
  void *ctx;
  /* Optional: readies the device on first use (loads its libraries). JX_OK, or
   * JX_ERR_DEVICE with a message naming what is missing where it cannot run here;
   * such devices are not listed by jx_devices. */
  jx_status (*init)(const Backend *be);
  /* Device memory of nbytes (nbytes may be 0). NULL on failure. */
  void *(*alloc)(const Backend *be, size_t nbytes);
  /* Releases memory from alloc (NULL is fine). */
  void (*free)(const Backend *be, void *mem);
  /* Host -> device and device -> host copies of nbytes. */
  jx_status (*copy_in)(const Backend *be, void *mem, const void *host, size_t nbytes);
  jx_status (*copy_out)(const Backend *be, void *host, const void *mem, size_t nbytes);
  /* Compiles (or looks up) a kernel; *exe is owned by the backend's cache. */
  jx_status (*prepare)(const Backend *be, const Kernel *k, void **exe);
  /* Optional: compiles many kernels at once ahead of their prepare (a jit program's
   * kernels in one translation unit). NULL: prepare compiles them one by one. */
  jx_status (*prepare_batch)(const Backend *be, const Kernel *const *ks, int n);
  /* Runs a prepared kernel: inputs[i] are k->nargs device buffers; outs[0] has k->size
   * elements of k->dtype, outs[1 + i] k->size of k->extra_dtypes[i]. */
  jx_status (*dispatch)(const Backend *be, void *exe, const Kernel *k, void *const *inputs,
                        void *const *outs);
  /* Runs a routine (ir/alu.h): r->nin inputs, r->nout outputs; NULL means the
   * backend's buffers are host memory and routines run on the host (routine_run_host). */
  jx_status (*routine)(const Backend *be, const Routine *r, void *const *inputs,
                       void *const *outs);
  /* True if buffers are ordinary host memory (the interpreter may run on them). */
  bool host_memory;
  /* True where arithmetic, transcendental functions included, costs little next to
   * memory traffic (GPUs): jit recomputes a cheap shared value such as exp(x - max) in
   * each consumer instead of writing it to memory and reading it back (jit/lower.c,
   * maybe_share). */
  bool cheap_recompute;
  /* With cheap_recompute: the most operations (a transcendental function counting one) a
   * shared value may take to be recomputed by each consumer; 0 means 2 (softmax's
   * exp(x - max)). 3 recomputes a biased softmax's exp(l + b - max), which lets its max
   * and sum be one two-phase kernel (cuda: measured in the MLP step; JAXC_RECOMPUTE_OPS
   * overrides it). */
  int recompute_ops;
  /* The most elements a float dot_general may contract to be lowered as one elementwise
   * expression (trace/kexp.c, kexp_dot_unrolled) rather than a GEMM routine or a
   * reduction kernel; 0: never. The expression fuses into its consumers: on a GPU the
   * gradient g @ W^T of a 10-class output layer (K = 10) and the relu backward after it
   * become one kernel writing the (batch, 512) result once, where a GEMM with K = 10
   * runs at a fraction of the memory bandwidth (an MLP step's 7.5 us cuBLAS kernel). */
  int dot_unroll_max_k;
  /* The most output columns N (past dot_unroll_max_k's K) a float dot_general may have to
   * be lowered as a reduction kernel over K, one output a row, rather than a GEMM routine
   * (trace/lower.c, lower_dot_rows); 0: never. The product's left operand must already
   * be rows of K contiguous elements; the right one is stored transposed (N, K) first.
   * On a GPU an MLP's logits h @ W2 (4096 x 512 @ 512 x 10) ran as a split-K cuBLAS
   * GEMM of 12.6 us (two kernels, tiles padded from N = 10 to 64). */
  int dot_rows_max_n;
  /* 1 where jit folds an elementwise update W + c * G of a GEMM's result G (an SGD step's
   * W - lr * dW) into the GEMM (routine axpby: out = c (a @ b) + W), so the update costs
   * no kernel of its own (jit/lower.c, fuse_gemm_update); 0: never. */
  int gemm_update;
  /* 1 where a product with at most dot_rows_max_n output columns whose left operand x'
   * (M, K) is stored transposed -- x (K, M) rows, as in a weight gradient h^T @ g -- is
   * one reduction kernel over K whose outputs' G = N columns share x[k, m] (the cuda
   * framing's grouped columns) instead of a GEMM routine; a cheap lazy x is recomputed
   * there (trace/lower.c, lower_dot_cols); 0: never. */
  int dot_cols;
  /* 1 where a large float GEMM whose left operand is a program input read transposed
   * (x^T @ dh: a first layer's weight gradient) stores that operand transposed first,
   * K-major: on an H100 the MLP's dW1 took 26.3 us so against 29.6-29.9 (every
   * candidate split-K) with x^T read as a flag, the transpose running beside the
   * forward pass (JAXC_GEMM_K_MAJOR); 0: never (everywhere: in the step on an H100,
   * 2026-12-06, the strided transpose made it 0.1261 ms against 0.0974-0.0984). */
  int gemm_k_major;
  /* True where an eager float32/float64 dot_general (trace/eager.c: one product, nothing
   * to fuse it with) of at least LOWER_EAGER_GEMM_MIN_WORK multiply-adds runs as the
   * GEMM routine rather than as a kernel: a small kernel runs in the interpreter's node
   * loop (cpu: a 16x16x16 product 43 us, 64x64 @ 64x1 23 us, against 2.0 and 5.7 us
   * through jaxc's GEMM). */
  bool eager_dot_gemm;
  /* True where jit makes a select between loads of one input one load at the selected
   * index (jit/lower.c, select_loads: im2col's 9 taps read one element an output, not 9;
   * JAXC_SELECT_LOADS=0 turns it off). cuda only: on the cpu, where the C compiler may
   * vectorize the separate loads, it is not measured. */
  bool select_loads;
  /* True where kernels may have a row output (ir/alu.h, Kernel.has_row_out): jit then
   * fuses an elementwise consumer of a row reduction into it (softmax in one kernel). */
  bool row_outputs;
  /* Optional: the outputs of reduction kernel k that one unit of its launch computes
   * together (cuda: a grouped warp row's G, render/cuda.c), 1 for none. Where G > 1, jit
   * moves a reduction over each group of G of k's outputs (a log-softmax over a row of
   * 10 logits) into k's kernel as its group epilogue (ir/alu.h, Kernel.post), which the
   * backend's kernels then support. */
  int (*row_group)(const Kernel *k);
  /* Optional: compiles a whole loop (ir/loop.h) whose kernels were prepared into one
   * executable owned by the caller (release_loop). JX_ERR_UNSUPPORTED where it cannot:
   * jit then runs the trips from the host. */
  jx_status (*prepare_loop)(const Backend *be, const LoopPlan *l, void **exe);
  /* Runs it on the slot table (l->nslots device pointers, exchanged as it runs: the
   * carries' final buffers end in their slots); length: a scan's trips, a while's
   * bound (< 0: none). *trips gets the trips taken. */
  jx_status (*run_loop)(const Backend *be, void *exe, const LoopPlan *l, void **slots, int64_t length,
                        int64_t *trips);
  void (*release_loop)(const Backend *be, void *exe);
  /* Optional (cuda: CUDA graphs): recording a jitted program's work for replay in one
   * call (jit/replay.c). Between graph_begin and graph_end the calling thread's
   * dispatches and routines are recorded, not run; graph_end gives the instantiated
   * recording (*exec, NULL with the error set on failure); graph_launch queues a replay
   * like a dispatch (never from two threads at once for one exec); graph_release frees
   * it (replays already queued finish). Memory freed (Backend.free) by the recording
   * thread while it records belongs to the recording from then on (jit's temporaries,
   * a kernel's scratch) and is freed by graph_release. graph_routine_ok: whether
   * routine r may be recorded (it only queues device work: no host waits or host-side
   * steps). */
  jx_status (*graph_begin)(const Backend *be);
  jx_status (*graph_end)(const Backend *be, void **exec);
  jx_status (*graph_launch)(const Backend *be, void *exec);
  void (*graph_release)(const Backend *be, void *exec);
  bool (*graph_routine_ok)(const Backend *be, const Routine *r);
  /* Optional, while recording: step `step` (in issue order) comes next and depends on
   * the earlier steps deps[0..ndeps) (jit/replay.c: it reads what they wrote, or writes
   * what they read or wrote); `critical`: it lies on the recording's critical path (the
   * longest chain of dependent steps by an estimated cost: jit_critical_path);
   * `routine`: the step's routine, else `kernel` its kernel (the other NULL). The backend
   * may then run independent steps concurrently in the recording (cuda: graph branches;
   * the critical path's at a higher priority with JAXC_CUDA_GRAPH_PRIORITY=1). */
  jx_status (*graph_step)(const Backend *be, int step, int ndeps, const int *deps, bool critical,
                          const Routine *routine, const Kernel *kernel);
  /* Waits for every dispatched kernel. */
  jx_status (*synchronize)(const Backend *be);
};

/* Allocates a buffer (core/buffer.h: buffer_ref, buffer_free) on the backend; NULL +
 * JX_ERR_OOM on failure. */
Buffer *buffer_new(const Backend *be, size_t nbytes);

/* Registry (one table in backend.c, in jx_devices' order). backend_get returns NULL for
 * unknown names; backend_find also for a device that cannot run here, and then sets
 * JX_ERR_DEVICE naming `fn` and why. */
const Backend *backend_get(const char *name);
const Backend *backend_find(const char *fn, const char *name);
const Backend *backend_default(void);
void backend_set_default(const Backend *be);

/* Compiles (via be->prepare) and runs a kernel into a new buffer of k->size elements.
 * NULL (with the error set) on failure. With `eager`, kernels of at most
 * BACKEND_EAGER_INTERP_MAX iterations on a host-memory backend run in the interpreter
 * instead: compiling costs tens of milliseconds, interpreting them microseconds. */
Buffer *backend_run(const Backend *be, const Kernel *k, Buffer *const *inputs, bool eager);
/* The same for a kernel with 1 + k->nargs outputs: new buffers in outs[0 ..]; on
 * failure none is left allocated. */
jx_status backend_run_outs(const Backend *be, const Kernel *k, Buffer *const *inputs, bool eager,
                           Buffer **outs);
#define BACKEND_EAGER_INTERP_MAX 4096

/* Runs a routine on r->nin inputs into r->nout new buffers outs[] (of
 * routine_out_nbytes each); on failure none is left allocated (error set). */
jx_status backend_run_routine(const Backend *be, const Routine *r, Buffer *const *inputs,
                              Buffer **outs);

/* A copy of buffer b on device `to` (through host memory); NULL with JX_ERR_DEVICE
 * naming both devices (or JX_ERR_OOM) on failure. */
Buffer *backend_transfer(Buffer *b, const Backend *to);

extern const Backend backend_interp;

/* The cpu devices of the process (jx_config_cpu_devices): their number (fixed on the
 * first call), device i ("cpu" for 0, else "cpu:i"; NULL out of range), and a device's
 * index among them (0 for every other device). */
#define BACKEND_MAX_CPU_DEVICES 64
int backend_cpu_count(void);
const Backend *backend_cpu_device(int i);
int backend_device_id(const Backend *be);

#endif
