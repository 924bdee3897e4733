/* cuda.c -- the cuda backend's function table: buffers from the caching allocator
 * (alloc.c), generated kernels (kernels.c), copies and library calls queued on the
 * device's one stream (driver.c), GEMM routines through cuBLAS (blas.c), cholesky,
 * eigh, lu, triangular_solve, qr and svd through cuSOLVER/cuBLAS (solver.c, all four float
 * and complex dtypes), fft through cuFFT
 * (cufft.c), sort and scatter-add (routines.c). Everything is asynchronous except copy_out and
 * synchronize, which wait for the stream. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "backend/lapack.h"
#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "render/cuda.h"

static CudaStats stats;

CudaStats cuda_stats(void) { return stats; }

static jx_status dev_init(const Backend *be) { return cuda_init(); }
static void *dev_alloc(const Backend *be, size_t nbytes) { return cuda_alloc(nbytes); }
static void dev_free(const Backend *be, void *mem) { cuda_free(mem); }

static CUdeviceptr ptr(const void *mem) { return (CUdeviceptr)(uintptr_t)mem; }

static jx_status copy_in(const Backend *be, void *mem, const void *host, size_t nbytes) {
  if (nbytes == 0) return JX_OK;
  jx_status s = cuda_init();
  if (s != JX_OK) return s;
  cuda_make_current();
  const CudaDevice *d = cuda_device();
  /* From pageable memory the driver stages the bytes before returning, so `host` may
   * be reused at once; the transfer itself is ordered on the stream. */
  return cuda_check(d->cu.cuMemcpyHtoDAsync(ptr(mem), host, nbytes, d->stream), "cuMemcpyHtoDAsync");
}

static jx_status copy_out(const Backend *be, void *host, const void *mem, size_t nbytes) {
  if (nbytes == 0) return JX_OK;
  jx_status s = cuda_init();
  if (s != JX_OK) return s;
  cuda_make_current();
  const CudaDevice *d = cuda_device();
  s = cuda_check(d->cu.cuMemcpyDtoHAsync(host, ptr(mem), nbytes, d->stream), "cuMemcpyDtoHAsync");
  if (s == JX_OK) s = cuda_check(d->cu.cuStreamSynchronize(d->stream), "cuStreamSynchronize");
  __atomic_add_fetch(&stats.syncs, 1, __ATOMIC_RELAXED);
  return s;
}

static jx_status synchronize(const Backend *be) {
  const CudaDevice *d = cuda_device();
  if (!d) return cuda_init();
  cuda_make_current();
  __atomic_add_fetch(&stats.syncs, 1, __ATOMIC_RELAXED);
  return cuda_check(d->cu.cuStreamSynchronize(d->stream), "cuStreamSynchronize");
}

static jx_status prepare(const Backend *be, const Kernel *k, void **exe) {
  return cuda_prepare(k, exe);
}

static jx_status prepare_batch(const Backend *be, const Kernel *const *ks, int n) {
  return cuda_prepare_batch(ks, n);
}

static jx_status dispatch(const Backend *be, void *exe, const Kernel *k, void *const *inputs,
                          void *const *outs) {
  __atomic_add_fetch(&stats.launches, 1, __ATOMIC_RELAXED);
  return cuda_dispatch(exe, k, inputs, outs);
}

/* Elements of a linear-algebra routine's input i (ir/alu.h: a (outer, n, m); for
 * triangular_solve a (outer, k, k) with k = n or m by the side, then b (outer, n, m);
 * for tridiagonal_solve dl, d, du (outer, n), then b (outer, n, m)). */
static int64_t linalg_in_numel(const Routine *r, int i) {
  if (r->op == ROUTINE_TRIDIAGONAL_SOLVE && i < 3) return r->outer * r->n; /* dl, d, du */
  if (r->op == ROUTINE_TRIANGULAR_SOLVE && i == 0) {
    int64_t k = r->flags & LINALG_LEFT_SIDE ? r->n : r->m;
    return r->outer * k * k;
  }
  return r->outer * r->n * r->m;
}

/* Bytes of a routine's input i: sort's operands and scatter-add's (x (outer, n, inner),
 * idx (m), upd (outer, m, inner)) or a linear-algebra routine's. */
static size_t host_in_nbytes(const Routine *r, int i) {
  if (r->op == ROUTINE_SORT) return (size_t)(r->outer * r->n * r->inner) * jx_dtype_itemsize(r->dtypes[i]);
  if (r->op == ROUTINE_SCATTER_ADD)
    return i == 1 ? (size_t)r->m * jx_dtype_itemsize(r->index_dtype)
                  : (size_t)(r->outer * (i ? r->m : r->n) * r->inner) * jx_dtype_itemsize(r->dtype);
  return (size_t)linalg_in_numel(r, i) * jx_dtype_itemsize(r->dtypes[i]);
}

/* The routines without a device version (solver.c has cholesky, eigh, lu,
 * triangular_solve, qr and svd; routines.c sorts and scatter-adds real and integer
 * dtypes): their operands are copied to host memory, the host routine runs there (LAPACK
 * or backend/routines.c, as on the cpu), and the results are copied back -- the one
 * documented trip through the host, logged with JAXC_DEBUG=1: tridiagonal_solve, eig,
 * empty qr/svd, complex sort and scatter-add. */
static jx_status routine_on_host(const Backend *be, const Routine *r, void *const *inputs, void *const *outs) {
  if (config_debug_level() >= 1)
    fprintf(stderr, "jaxc cuda: %s of %s (%lld x %lld x %lld) runs on the host, operands copied "
            "through host memory\n", routine_name(r->op), jx_dtype_name(r->dtype), (long long)r->outer,
            (long long)r->n, (long long)r->m);
  void *hin[ROUTINE_MAX_OPERANDS] = {0}, *hout[ROUTINE_MAX_OPERANDS] = {0};
  jx_status s = JX_OK;
  for (int i = 0; s == JX_OK && i < r->nin; i++) {
    size_t nb = host_in_nbytes(r, i);
    if (!(hin[i] = malloc(nb ? nb : 1))) s = JX_ERR_OOM;
    else s = copy_out(be, hin[i], inputs[i], nb);
  }
  for (int o = 0; s == JX_OK && o < r->nout; o++) {
    size_t nb = routine_out_nbytes(r, o);
    if (!(hout[o] = malloc(nb ? nb : 1))) s = JX_ERR_OOM;
  }
  if (s == JX_ERR_OOM) error_set(s, "cuda: out of host memory for %s's operands", routine_name(r->op));
  if (s == JX_OK) s = routine_run_host(r, hin, hout);
  for (int o = 0; s == JX_OK && o < r->nout; o++) s = copy_in(be, outs[o], hout[o], routine_out_nbytes(r, o));
  for (int i = 0; i < ROUTINE_MAX_OPERANDS; i++) free(hin[i]), free(hout[i]);
  return s;
}

static jx_status routine(const Backend *be, const Routine *r, void *const *inputs, void *const *outs) {
  jx_status s = cuda_init();
  if (s != JX_OK) return s;
  if (r->op == ROUTINE_GEMM) {
    __atomic_add_fetch(&stats.gemms, 1, __ATOMIC_RELAXED);
    return cuda_gemm(r, inputs, outs[0]);
  }
  if (r->op == ROUTINE_SORT)
    return dtype_is_complex(r->dtypes[0]) ? routine_on_host(be, r, inputs, outs) : cuda_sort(r, inputs, outs);
  if (r->op == ROUTINE_FFT) return cuda_fft(r, inputs, outs);
  if (r->op == ROUTINE_SCATTER_ADD)
    return r->n == 0 ? JX_OK
           : dtype_is_complex(r->dtype) ? routine_on_host(be, r, inputs, outs)
                                        : cuda_scatter_add(r, inputs, outs[0]);
  if (ROUTINE_IS_LINALG(r->op)) return cuda_solver_has(r) ? cuda_solver(r, inputs, outs) : routine_on_host(be, r, inputs, outs);
  error_set(JX_ERR_UNSUPPORTED, "cuda: routine %s has no device version", routine_name(r->op));
  return JX_ERR_UNSUPPORTED;
}

static jx_status graph_begin(const Backend *be) { return cuda_graph_begin(); }
static jx_status graph_end(const Backend *be, void **exec) { return cuda_graph_end(exec); }
static jx_status graph_launch(const Backend *be, void *exec) { return cuda_graph_launch(exec); }
static void graph_release(const Backend *be, void *exec) { cuda_graph_release(exec); }
static bool graph_routine_ok(const Backend *be, const Routine *r) { return cuda_graph_routine_ok(r); }
static jx_status graph_step(const Backend *be, int step, int ndeps, const int *deps, bool critical,
                            const Routine *routine, const Kernel *kernel) {
  /* GEMMs on any branch (blas.c: a workspace and handle state per branch); the other
   * routines on the first. Kernels that take their module's tickets
   * (render_cuda_uses_tickets) go where the recording's other steps of that module went
   * (cuda_graph_step): two of them on parallel branches would share the tickets. */
  const void *tickets = NULL;
  bool serial = routine && routine->op != ROUTINE_GEMM;
  if (!routine && kernel && render_cuda_uses_tickets(kernel)) {
    void *exe = NULL;
    jx_status s = cuda_prepare(kernel, &exe); /* cached: issue() prepares it next anyway */
    if (s != JX_OK) return s;
    tickets = cuda_exe_module(exe);
  }
  return cuda_graph_step(step, ndeps, deps, serial, critical, tickets);
}

/* Backend.row_group: the outputs a grouped warp row computes together (render/cuda.c),
 * where they are the sums themselves in float32/float64 (no epilogue: a group epilogue
 * reads the stored values from the sums' registers). JAXC_CUDA_GROUP_POST=0 turns group
 * epilogues off (measuring). */
static int row_group(const Kernel *k) {
  static int on = -1;
  if (!config_env_setting(&on, "JAXC_CUDA_GROUP_POST", 1, 0, 1) || (k->dtype != JX_FLOAT32 && k->dtype != JX_FLOAT64) ||
      !k->has_reduction || k->reduction.epilogue || k->reduction.dtype != k->dtype || k->nextra)
    return 1;
  RenderCudaPlan p = render_cuda_plan(k);
  return p.kind == CUDA_WARP_ROW ? p.group : 1;
}

const Backend backend_cuda = {
    .name = "cuda",
    .init = dev_init,
    .alloc = dev_alloc,
    .free = dev_free,
    .copy_in = copy_in,
    .copy_out = copy_out,
    .prepare = prepare,
    .prepare_batch = prepare_batch,
    .dispatch = dispatch,
    .routine = routine,
    .host_memory = false,
    .cheap_recompute = true,
    /* a biased softmax's exp(l + b - max) recomputed: the MLP step on an H100 (2026-12-06
     * 13:10, bench_gpu mlp) 0.0316 / 0.0962 ms at batch 128 / 4096 against 0.0331 /
     * 0.0980 at 2 */
    .recompute_ops = 3,
    .dot_unroll_max_k = 16,
    .dot_rows_max_n = 16,
    .gemm_update = 1,
    .row_outputs = true,
    .row_group = row_group,
    .select_loads = true,
    .graph_begin = graph_begin,
    .graph_end = graph_end,
    .graph_launch = graph_launch,
    .graph_release = graph_release,
    .graph_routine_ok = graph_routine_ok,
    .graph_step = graph_step,
    .synchronize = synchronize,
};
