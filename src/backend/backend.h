/* backend.h -- the backend interface: a small table of functions every device
 * implements (interp, the reference; cpu, native code; cuda planned), and refcounted
 * device buffers (freed host buffers are cached for reuse by size). */
#ifndef JAXC_BACKEND_BACKEND_H
#define JAXC_BACKEND_BACKEND_H

#include "jaxc.h"
#include "ir/alu.h"

typedef struct Backend Backend;

struct Backend {
  const char *name;
  /* Optional: readies the device on first use (loads its libraries). JX_OK, or
   * JX_ERR_DEVICE with a message naming what is missing where it cannot run here. */
  jx_status (*init)(void);
  /* Device memory of nbytes (nbytes may be 0). NULL on failure. */
  void *(*alloc)(size_t nbytes);
  /* Releases memory from alloc (NULL is fine). */
  void (*free)(void *mem);
  /* Host -> device and device -> host copies of nbytes. */
  jx_status (*copy_in)(void *mem, const void *host, size_t nbytes);
  jx_status (*copy_out)(void *host, const void *mem, size_t nbytes);
  /* Compiles (or looks up) a kernel; *exe is owned by the backend's cache. */
  jx_status (*prepare)(const Kernel *k, void **exe);
  /* Optional: compiles many kernels at once ahead of their prepare (a jit program's
   * kernels in one translation unit). NULL: prepare compiles them one by one. */
  jx_status (*prepare_batch)(const Kernel *const *ks, int n);
  /* Runs a prepared kernel: inputs[i] are k->nargs device buffers; outs[0] has k->size
   * elements of k->dtype, outs[1 + i] k->size of k->extra_dtypes[i]. */
  jx_status (*dispatch)(void *exe, const Kernel *k, void *const *inputs, void *const *outs);
  /* Runs a routine (ir/alu.h): r->nin inputs, r->nout outputs; NULL means the
   * backend's buffers are host memory and routines run on the host (routine_run_host). */
  jx_status (*routine)(const Routine *r, void *const *inputs, void *const *outs);
  /* True if buffers are ordinary host memory (the interpreter may run on them). */
  bool host_memory;
  /* True if GEMM routines also take float16/bfloat16 (accumulating in float32, as
   * cuBLAS and JAX on GPUs do); otherwise only float32/float64 products are routines. */
  bool gemm_half;
  /* Waits for every dispatched kernel. */
  jx_status (*synchronize)(void);
};

/* A refcounted device allocation. */
typedef struct Buffer {
  const Backend *backend;
  int64_t refcount;
  size_t nbytes;
  void *mem;
} Buffer;

/* Allocates a buffer on the backend; NULL + JX_ERR_OOM on failure. */
Buffer *buffer_new(const Backend *be, size_t nbytes);
Buffer *buffer_ref(Buffer *b);
void buffer_free(Buffer *b);

/* Registry. backend_get returns NULL for unknown names; backend_find also for a device
 * that cannot run here, and then sets JX_ERR_DEVICE naming `fn` and why. */
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

extern const Backend backend_interp;

#endif
