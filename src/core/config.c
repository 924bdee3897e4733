/* config.c -- reads jaxc's environment variables (see config.h for the list). */
#include "core/config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

int config_debug_level(void) {
  static int level = -1; /* atomic: read on first use by whichever thread comes first */
  int l = __atomic_load_n(&level, __ATOMIC_RELAXED);
  if (l < 0) {
    const char *s = getenv("JAXC_DEBUG");
    l = s ? atoi(s) : 0;
    if (l < 0) l = 0;
    __atomic_store_n(&level, l, __ATOMIC_RELAXED);
  }
  return l;
}

const char *config_cc(void) {
  const char *s = getenv("CC");
  return s && *s ? s : NULL;
}

bool config_cache_dir(char *buf, size_t n) {
  const char *s = getenv("JAXC_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int len;
  if (s && *s) len = snprintf(buf, n, "%s", s);
  else if (xdg && *xdg) len = snprintf(buf, n, "%s/jaxc", xdg);
  else if (home && *home) len = snprintf(buf, n, "%s/.cache/jaxc", home);
  else return false;
  return len > 0 && (size_t)len < n;
}

const char *config_tmp_dir(void) {
  const char *s = getenv("TMPDIR");
  return s && *s ? s : "/tmp";
}

int config_cpu_cores(void) {
  /* read once: glibc's sysconf reads /sys on every call, and every OpenBLAS product asks
   * (routine_gemm_fixed_blocks) */
  static int cached = 0;
  int n = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (n == 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    n = cores > 0 ? (int)cores : 1;
    __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
  }
  return n;
}

int config_num_threads(void) {
  const char *s = getenv("JAXC_NUM_THREADS");
  int n = s ? atoi(s) : 0;
  return n > 0 ? n : config_cpu_cores();
}

int config_cpu_devices(int max) {
  const char *s = getenv("JAXC_CPU_DEVICES");
  char *end = NULL;
  long n = s ? strtol(s, &end, 10) : 0;
  return s && end != s && *end == 0 && n >= 1 && n <= max ? (int)n : 1;
}

double config_compile_timeout(void) {
  const char *s = getenv("JAXC_COMPILE_TIMEOUT");
  char *end = NULL;
  double t = s ? strtod(s, &end) : 0;
  return s && end != s && t > 0 && t < 1e9 ? t : 300;
}

const char *config_device(void) {
  const char *s = getenv("JAXC_DEVICE");
  return s && *s ? s : NULL;
}

static struct {
  pthread_mutex_t lock;
  FILE *file;
  char path[1024]; /* the JAXC_TRACE value it was opened (or failed to open) for */
  int error;       /* errno of the failed open or write, 0 if none */
  bool any;        /* an event written (the next one needs a comma) */
} trace = {.lock = PTHREAD_MUTEX_INITIALIZER};

jx_status config_trace_event(const char *name, const char *category, double start_us,
                             double dur_us, const char *args_json) {
  const char *path = getenv("JAXC_TRACE");
  if (!path || !*path) return JX_OK;
  pthread_mutex_lock(&trace.lock);
  if (strcmp(path, trace.path) != 0) { /* first use, or JAXC_TRACE changed */
    if (trace.file) fclose(trace.file);
    snprintf(trace.path, sizeof trace.path, "%s", path);
    trace.any = false;
    trace.error = 0;
    trace.file = fopen(path, "w");
    if (!trace.file) trace.error = errno ? errno : EIO;
  }
  static _Thread_local int tid;
  static int next_tid; /* guarded by trace.lock */
  if (!tid) tid = ++next_tid;
  if (trace.file && !trace.error) {
    /* "[\n" ev "\n]\n" at first; later ones overwrite the "\n]\n" with ",\n" ev "\n]\n" */
    if (trace.any) fseek(trace.file, -3, SEEK_END);
    int n = fprintf(trace.file,
                    "%s{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
                    "\"pid\":1,\"tid\":%d,\"args\":{%s}}\n]\n",
                    trace.any ? ",\n" : "[\n", name, category, start_us, dur_us, tid,
                    args_json ? args_json : "");
    if (n < 0 || fflush(trace.file) != 0) trace.error = errno ? errno : EIO;
    trace.any = true;
  }
  int err = trace.error;
  pthread_mutex_unlock(&trace.lock);
  if (!err) return JX_OK;
  error_set(JX_ERR_IO, "JAXC_TRACE: cannot write the trace file %s: %s", path, strerror(err));
  return JX_ERR_IO;
}

bool config_trace_enabled(void) {
  const char *s = getenv("JAXC_TRACE");
  return s && *s;
}

/* -1: not set yet (read the environment); 0: full float32; 1: TF32 allowed. */
static atomic_int matmul_tf32 = -1;

/* 1 for the names that allow TF32, 0 for those that forbid it, -1 for others. */
static int precision_tf32(const char *s) {
  static const char *const fast[] = {"default", "fastest", "bfloat16", "high", "tensorfloat32", "bfloat16_3x"};
  static const char *const full[] = {"highest", "float32"};
  for (size_t i = 0; i < sizeof fast / sizeof fast[0]; i++)
    if (strcmp(s, fast[i]) == 0) return 1;
  for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
    if (strcmp(s, full[i]) == 0) return 0;
  return -1;
}

static int cuda_graphs = -1; /* atomic: -1 until read from the environment */

bool config_cuda_graphs(void) {
  int v = __atomic_load_n(&cuda_graphs, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *s = getenv("JAXC_CUDA_GRAPHS");
    v = s && strcmp(s, "0") == 0 ? 0 : 1;
    __atomic_store_n(&cuda_graphs, v, __ATOMIC_RELAXED);
  }
  return v == 1;
}

void config_set_cuda_graphs(bool on) { __atomic_store_n(&cuda_graphs, on ? 1 : 0, __ATOMIC_RELAXED); }

/* A lowering limit overridden by the environment or a test: *cell is -2 until `env` was
 * read, -1 for the backend's value, else the override (clamped to [0, 64]). */
static int lowering_limit(int *cell, const char *env, int backend_value) {
  int v = __atomic_load_n(cell, __ATOMIC_RELAXED);
  if (v == -2) {
    const char *s = getenv(env);
    v = s && *s ? atoi(s) : -1;
    v = v < -1 ? -1 : v > 64 ? 64 : v;
    __atomic_store_n(cell, v, __ATOMIC_RELAXED);
  }
  return v >= 0 ? v : backend_value;
}

static int dot_unroll = -2, dot_rows = -2, gemm_update = -2, dot_cols = -2, recompute = -2, k_major = -2; /* atomic (lowering_limit) */

/* What a config_set_* call set: v clamped to [-1, hi] (-1: the backend's again). */
static void set_lowering(int *cell, int v, int hi) {
  __atomic_store_n(cell, v < -1 ? -1 : v > hi ? hi : v, __ATOMIC_RELAXED);
}

int config_dot_unroll_max_k(int backend_value) {
  return lowering_limit(&dot_unroll, "JAXC_DOT_UNROLL_MAX_K", backend_value);
}

void config_set_dot_unroll_max_k(int k) { set_lowering(&dot_unroll, k, 64); }

int config_dot_rows_max_n(int backend_value) {
  return lowering_limit(&dot_rows, "JAXC_DOT_ROWS_MAX_N", backend_value);
}

void config_set_dot_rows_max_n(int n) { set_lowering(&dot_rows, n, 64); }

int config_gemm_update(int backend_value) {
  return lowering_limit(&gemm_update, "JAXC_GEMM_UPDATE", backend_value);
}

void config_set_gemm_update(int on) { set_lowering(&gemm_update, on, 1); }

int config_env_setting(int *cache, const char *name, int def, int lo, int hi) {
  int v = __atomic_load_n(cache, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *e = getenv(name);
    int w = e ? atoi(e) : def;
    v = w >= lo && w <= hi ? w : def;
    __atomic_store_n(cache, v, __ATOMIC_RELAXED);
  }
  return v;
}

bool config_env_on(int *cache, const char *name) {
  int v = __atomic_load_n(cache, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *e = getenv(name);
    v = !(e && strcmp(e, "0") == 0);
    __atomic_store_n(cache, v, __ATOMIC_RELAXED);
  }
  return v;
}

int config_dot_cols(int backend_value) { return lowering_limit(&dot_cols, "JAXC_DOT_COLS", backend_value); }

int config_recompute_ops(int backend_value) {
  int v = lowering_limit(&recompute, "JAXC_RECOMPUTE_OPS", backend_value);
  return v > 0 ? v : 2;
}

void config_set_recompute_ops(int n) { set_lowering(&recompute, n, 64); }

int config_gemm_k_major(int backend_value) { return lowering_limit(&k_major, "JAXC_GEMM_K_MAJOR", backend_value); }

void config_set_gemm_k_major(int on) { set_lowering(&k_major, on, 1); }

void config_set_dot_cols(int on) { set_lowering(&dot_cols, on, 1); }

bool config_matmul_tf32(void) {
  int v = atomic_load(&matmul_tf32);
  if (v < 0) {
    const char *s = getenv("JAXC_DEFAULT_MATMUL_PRECISION");
    v = s && *s && precision_tf32(s) == 0 ? 0 : 1;
    atomic_store(&matmul_tf32, v);
  }
  return v == 1;
}

jx_status jx_config_default_matmul_precision(const char *precision) {
  int v = precision ? precision_tf32(precision) : -1;
  if (v < 0) {
    error_set(JX_ERR_VALUE, "jx_config_default_matmul_precision: unknown precision \"%s\" (expected "
              "default, high, highest, bfloat16, tensorfloat32 or float32)", precision ? precision : "(null)");
    return JX_ERR_VALUE;
  }
  atomic_store(&matmul_tf32, v);
  return JX_OK;
}
