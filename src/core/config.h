/* config.h -- the environment variables jaxc reads, all in one place:
 *   JAXC_DEBUG=1..4   1: kernel launches and timings; 2: jaxprs; 3: kernel IR; 4: source
 *   JAXC_ENABLE_X64   jax_enable_x64 (read in dtype.c through config_env_flag)
 *   JAXC_CACHE_DIR    compiled-kernel cache (default $XDG_CACHE_HOME/jaxc, ~/.cache/jaxc)
 *   JAXC_NUM_THREADS  cpu backend threads (default: online cores)
 *   JAXC_TRACE        a Chrome/Perfetto trace file of kernel launches (jit programs)
 *   JAXC_COMPILE_TIMEOUT  seconds a C compiler may run (default 300)
 *   JAXC_DEVICE       the default device ("cpu" unless set; tests run with "interp" too)
 *   JAXC_DEFAULT_MATMUL_PRECISION  jax_default_matmul_precision (TF32 on cuda or not)
 *   JAXC_CUDA_GRAPHS  0: jitted programs on cuda launch step by step, never as a
 *                     replayed CUDA graph (default 1; to compare)
 *   JAXC_CPU_DEVICES  number of cpu devices in the process (XLA's
 *                     --xla_force_host_platform_device_count; default 1)
 *   CC, TMPDIR        the C compiler for generated kernels; scratch space */
#ifndef JAXC_CORE_CONFIG_H
#define JAXC_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jaxc.h"

/* JAXC_DEBUG as an integer (0 if unset or not a number), read once. */
int config_debug_level(void);

/* The following read the environment on every call (the cpu backend reads them once,
 * and again when tests ask it to). */
/* $CC (a command, possibly with arguments), or NULL when unset or empty. */
const char *config_cc(void);
/* The compiled-kernel cache directory: JAXC_CACHE_DIR, else $XDG_CACHE_HOME/jaxc, else
 * $HOME/.cache/jaxc, written to buf. false when none can be formed (or it is too long). */
bool config_cache_dir(char *buf, size_t n);
/* $TMPDIR, else "/tmp". */
const char *config_tmp_dir(void);
/* Appends one complete event ("ph":"X", microseconds; args_json an object's members,
 * e.g. "\"elements\":4") to the JAXC_TRACE file, in the Chrome trace JSON-array format:
 * the file is a valid JSON array after every event (the closing bracket is rewritten).
 * The file is opened on the first event (again when JAXC_TRACE changes); one that cannot
 * be written is JX_ERR_IO naming it, on every traced call. JX_OK when unset. */
jx_status config_trace_event(const char *name, const char *category, double start_us,
                             double dur_us, const char *args_json);
/* True when JAXC_TRACE names a file. */
bool config_trace_enabled(void);
/* JAXC_COMPILE_TIMEOUT (seconds, > 0), else 300: the longest a C compiler may run
 * before it is killed and the compile fails. */
double config_compile_timeout(void);
/* JAXC_DEVICE, or NULL when unset or empty. */
const char *config_device(void);
/* Whether float32 matrix products may use TF32 (jx_config_default_matmul_precision,
 * else JAXC_DEFAULT_MATMUL_PRECISION, else "default": yes). */
bool config_matmul_tf32(void);
/* Whether repeated calls of a jitted program may replay a recorded device graph
 * (JAXC_CUDA_GRAPHS, default yes; config_set_cuda_graphs overrides it, for tests). */
bool config_cuda_graphs(void);
void config_set_cuda_graphs(bool on);
/* The most elements a float dot_general may contract to be lowered as one fused
 * elementwise expression (Backend.dot_unroll_max_k, trace/lower.c): backend_value, or
 * JAXC_DOT_UNROLL_MAX_K (0..64) when set, or what config_set_dot_unroll_max_k set (-1:
 * the backend's again; tests run the expression on the cpu this way). Programs already
 * lowered keep theirs. */
int config_dot_unroll_max_k(int backend_value);
void config_set_dot_unroll_max_k(int k);
/* The most output columns N a float dot_general may have to be lowered as a row
 * reduction over K (Backend.dot_rows_max_n, trace/lower.c's lower_dot_rows):
 * backend_value, or JAXC_DOT_ROWS_MAX_N (0..64) when set, or what
 * config_set_dot_rows_max_n set (-1: the backend's again). */
int config_dot_rows_max_n(int backend_value);
void config_set_dot_rows_max_n(int n);
/* Whether jit folds an update W + c * (a @ b) into its GEMM (Backend.gemm_update,
 * jit/lower.c's fuse_gemm_update): backend_value, or JAXC_GEMM_UPDATE (0/1) when set, or
 * what config_set_gemm_update set (-1: the backend's again). */
int config_gemm_update(int backend_value);
void config_set_gemm_update(int on);
/* Whether a product with few output columns whose left operand is stored transposed
 * (x^T of x rows: a weight gradient h^T @ g) is one column-reduction kernel over K
 * (Backend.dot_cols, trace/lower.c's lower_dot_cols): backend_value, or JAXC_DOT_COLS
 * (0/1) when set, or what config_set_dot_cols set (-1: the backend's again). */
int config_dot_cols(int backend_value);
void config_set_dot_cols(int on);
/* The most operations of a shared value jit recomputes in each consumer on backends with
 * cheap_recompute (Backend.recompute_ops, jit/lower.c's maybe_share): backend_value, or
 * JAXC_RECOMPUTE_OPS when set, or what config_set_recompute_ops set (-1: the backend's
 * again); 2 where that is 0. */
int config_recompute_ops(int backend_value);
void config_set_recompute_ops(int n);
/* Whether a large float GEMM stores a program input it reads transposed as its left
 * operand K-major first (Backend.gemm_k_major, trace/lower.c's lower_gemm):
 * backend_value, or JAXC_GEMM_K_MAJOR (0/1) when set, or what config_set_gemm_k_major
 * set (-1: the backend's again). */
int config_gemm_k_major(int backend_value);
void config_set_gemm_k_major(int on);
/* A measuring setting (JAXC_CUDA_EW_V and the like): the environment variable `name` as
 * an int in [lo, hi], def where unset or out of range, read once into *cache (-1 until
 * then; relaxed atomics, so threads may ask at once). */
int config_env_setting(int *cache, const char *name, int def, int lo, int hi);
/* A measuring switch that is on unless the environment variable `name` is "0" (as
 * JAXC_CUDA_GEMM_TUNE), read once into *cache (-1 until then; relaxed atomics). */
bool config_env_on(int *cache, const char *name);
/* JAXC_CPU_DEVICES if an integer in [1, max], else 1. */
int config_cpu_devices(int max);
/* JAXC_NUM_THREADS if a positive integer, else the number of online cores (>= 1). */
int config_num_threads(void);
/* The machine's online cores (sysconf, read once), whatever JAXC_NUM_THREADS says. */
int config_cpu_cores(void);

#endif
