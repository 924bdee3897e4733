/* config.c -- reads jaxc's environment variables (see config.h for the list). */
#include "core/config.h"

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

int config_num_threads(void) {
  const char *s = getenv("JAXC_NUM_THREADS");
  int n = s ? atoi(s) : 0;
  if (n > 0) return n;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? (int)cores : 1;
}

const char *config_device(void) {
  const char *s = getenv("JAXC_DEVICE");
  return s && *s ? s : NULL;
}

void config_trace_event(const char *name, const char *category, double start_us, double dur_us,
                        int64_t elements) {
  static FILE *trace;
  static bool tried;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (!tried) {
    tried = true;
    const char *path = getenv("JAXC_TRACE");
    if (path && *path && (trace = fopen(path, "w"))) fputs("[\n", trace);
  }
  if (trace) {
    fprintf(trace,
            "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
            "\"pid\":1,\"tid\":1,\"args\":{\"elements\":%lld}},\n",
            name, category, start_us, dur_us, (long long)elements);
    fflush(trace);
  }
  pthread_mutex_unlock(&lock);
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
