/* backend.c -- device buffers, the backend registry and the common "run one kernel
 * into a fresh buffer" path every device shares. */
#include "backend/backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/cuda/cuda.h"
#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"

/* Freed host-memory buffers of at least BUFFER_CACHE_MIN bytes are kept (up to
 * BUFFER_CACHE_BYTES in all) and handed out again for the same size: a training loop
 * allocates the same sizes every step, and fresh pages from the OS cost a page fault
 * each (a 40 MB buffer: ~10,000 faults), more than the kernel that fills them. */
#define BUFFER_CACHE_SLOTS 64
#define BUFFER_CACHE_MIN (64 << 10)
#define BUFFER_CACHE_BYTES ((size_t)512 << 20)

typedef struct CachedMem {
  const Backend *be;
  size_t nbytes;
  void *mem;
} CachedMem;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static CachedMem cache[BUFFER_CACHE_SLOTS];
static int ncached;
static size_t cached_bytes;

static void *cache_take(const Backend *be, size_t nbytes) {
  void *mem = NULL;
  pthread_mutex_lock(&cache_lock);
  for (int i = ncached - 1; i >= 0; i--)
    if (cache[i].be == be && cache[i].nbytes == nbytes) {
      mem = cache[i].mem;
      cached_bytes -= nbytes;
      cache[i] = cache[--ncached];
      break;
    }
  pthread_mutex_unlock(&cache_lock);
  return mem;
}

/* true if kept; evicts the oldest entries to make room */
static bool cache_put(const Backend *be, size_t nbytes, void *mem) {
  if (!be->host_memory || nbytes < BUFFER_CACHE_MIN || nbytes > BUFFER_CACHE_BYTES) return false;
  CachedMem evicted[BUFFER_CACHE_SLOTS];
  int nev = 0;
  pthread_mutex_lock(&cache_lock);
  while (ncached > 0 && (ncached == BUFFER_CACHE_SLOTS || cached_bytes + nbytes > BUFFER_CACHE_BYTES)) {
    evicted[nev++] = cache[0];
    cached_bytes -= cache[0].nbytes;
    memmove(cache, cache + 1, (size_t)(--ncached) * sizeof cache[0]);
  }
  cache[ncached++] = (CachedMem){be, nbytes, mem};
  cached_bytes += nbytes;
  pthread_mutex_unlock(&cache_lock);
  for (int i = 0; i < nev; i++) evicted[i].be->free(evicted[i].be, evicted[i].mem);
  return true;
}

/* The last reference to b is gone: its memory to the cache or the device. */
static void buffer_release(Buffer *b) {
  if (!cache_put(b->backend, b->nbytes, b->mem)) b->backend->free(b->backend, b->mem);
  free(b);
}

Buffer *buffer_new(const Backend *be, size_t nbytes) {
  Buffer *b = malloc(sizeof *b);
  void *mem = b ? cache_take(be, nbytes) : NULL;
  if (b && !mem) mem = be->alloc(be, nbytes);
  if (!mem) {
    free(b);
    error_set(JX_ERR_OOM, "out of memory allocating %zu bytes on %s", nbytes, be->name);
    return NULL;
  }
  *b = (Buffer){.backend = be, .refcount = 1, .nbytes = nbytes, .mem = mem,
                .release = buffer_release};
  buffer_track_new(b);
  return b;
}


/* The devices, in the order jx_devices lists them: one table of function tables (each
 * carries its name and its init). The default is chosen in backend_default. */
static const Backend *const registry[] = {&backend_interp, &backend_cpu, &backend_cuda};
#define NUM_BACKENDS (sizeof registry / sizeof registry[0])
/* The default device: JAXC_DEVICE when it names one, else "cpu" (which runs kernels in
 * the interpreter when no C compiler is found). Read once, on first use by any thread
 * (pthread_once); jx_default_device replaces it atomically. */
static const Backend *default_backend; /* atomic */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

/* Several cpu devices in one process (XLA's --xla_force_host_platform_device_count):
 * "cpu" is device 0 (also named "cpu:0"); "cpu:1" .. "cpu:N-1" are copies of its function
 * table under their own names, so each buffer knows its device and committed arrays run
 * where they live. They share the thread pool and the kernel caches. The count is
 * JAXC_CPU_DEVICES or jx_config_cpu_devices, fixed once devices are first listed. */
static Backend cpu_devices[BACKEND_MAX_CPU_DEVICES];
static char cpu_names[BACKEND_MAX_CPU_DEVICES][16]; /* "cpu:N" (16: no truncation warning for an int) */
static pthread_mutex_t cpu_lock = PTHREAD_MUTEX_INITIALIZER;
static int cpu_count;     /* 0: not fixed yet */
static int cpu_requested; /* jx_config_cpu_devices, 0: JAXC_CPU_DEVICES */

static void cpu_devices_fix_locked(void) {
  if (cpu_count) return;
  int n = cpu_requested ? cpu_requested : config_cpu_devices(BACKEND_MAX_CPU_DEVICES);
  for (int i = 1; i < n; i++) {
    snprintf(cpu_names[i], sizeof cpu_names[i], "cpu:%d", i);
    cpu_devices[i] = backend_cpu;
    cpu_devices[i].name = cpu_names[i];
  }
  __atomic_store_n(&cpu_count, n, __ATOMIC_RELEASE);
}

int backend_cpu_count(void) {
  int n = __atomic_load_n(&cpu_count, __ATOMIC_ACQUIRE);
  if (n) return n;
  pthread_mutex_lock(&cpu_lock);
  cpu_devices_fix_locked();
  n = cpu_count;
  pthread_mutex_unlock(&cpu_lock);
  return n;
}

const Backend *backend_cpu_device(int i) {
  if (i < 0 || i >= backend_cpu_count()) return NULL;
  return i == 0 ? &backend_cpu : &cpu_devices[i];
}

int backend_device_id(const Backend *be) {
  if (be == &backend_cpu) return 0;
  if (be >= cpu_devices && be < cpu_devices + BACKEND_MAX_CPU_DEVICES) return (int)(be - cpu_devices);
  return 0;
}

jx_status jx_config_cpu_devices(int n) {
  if (n < 1 || n > BACKEND_MAX_CPU_DEVICES) {
    error_set(JX_ERR_VALUE, "jx_config_cpu_devices: %d cpu devices (expected 1 to %d)", n,
              BACKEND_MAX_CPU_DEVICES);
    return JX_ERR_VALUE;
  }
  pthread_mutex_lock(&cpu_lock);
  int fixed = cpu_count;
  if (!fixed) cpu_requested = n;
  pthread_mutex_unlock(&cpu_lock);
  if (fixed && fixed != n) {
    error_set(JX_ERR_VALUE, "jx_config_cpu_devices: the process already has %d cpu devices "
              "(the count is fixed when devices are first used; set it, or JAXC_CPU_DEVICES, "
              "before)", fixed);
    return JX_ERR_VALUE;
  }
  return JX_OK;
}

const Backend *backend_get(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < NUM_BACKENDS; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  if (strncmp(name, "cpu:", 4) == 0 && name[4] >= '0' && name[4] <= '9') {
    char *end = NULL;
    long i = strtol(name + 4, &end, 10);
    if (*end == 0 && (i == 0 || name[4] != '0') && i < BACKEND_MAX_CPU_DEVICES)
      return backend_cpu_device((int)i);
  }
  return NULL;
}

const Backend *backend_find(const char *fn, const char *name) {
  if (!name) {
    error_set(JX_ERR_VALUE, "%s: the device name is NULL", fn);
    return NULL;
  }
  const Backend *be = backend_get(name);
  if (!be) {
    if (strncmp(name, "cpu:", 4) == 0)
      error_set(JX_ERR_DEVICE, "%s: unknown device \"%s\" (this process has %d cpu devices, "
                "cpu:0 to cpu:%d; set JAXC_CPU_DEVICES or call jx_config_cpu_devices for more)",
                fn, name, backend_cpu_count(), backend_cpu_count() - 1);
    else
      error_set(JX_ERR_DEVICE, "%s: unknown device \"%s\"", fn, name);
    return NULL;
  }
  if (be->init && be->init(be) != JX_OK) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s", jx_last_error());
    jx_clear_error();
    error_set(JX_ERR_DEVICE, "%s: %s", fn, msg);
    return NULL;
  }
  return be;
}

static void choose_default(void) {
  const char *name = config_device();
  const Backend *be = backend_get(name);
  if (name && !be) {
    /* a name that is no device (a typo) is said, as JAX refuses an unknown platform;
     * the cpu runs */
    ErrorSaved older = error_stash();
    (void)backend_find("JAXC_DEVICE", name);
    fprintf(stderr, "jaxc: %s; using cpu\n", jx_last_error());
    jx_clear_error();
    error_unstash(&older);
  }
  if (be && be->init) {
    ErrorSaved older = error_stash(); /* the caller's unread error stays first */
    if (be->init(be) != JX_OK) {
      /* JAXC_DEVICE names a device that cannot run here: the cpu it is (tests of such a
       * device exit as skipped before they get here; see tests/support). */
      if (config_debug_level() >= 1) fprintf(stderr, "jaxc: %s; using cpu\n", jx_last_error());
      be = NULL;
    }
    jx_clear_error();
    error_unstash(&older);
  }
  const Backend *expected = NULL; /* jx_default_device called first wins */
  __atomic_compare_exchange_n(&default_backend, &expected, be ? be : &backend_cpu, false,
                              __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

const Backend *backend_default(void) {
  const Backend *be = __atomic_load_n(&default_backend, __ATOMIC_ACQUIRE);
  if (be) return be;
  pthread_once(&default_once, choose_default);
  return __atomic_load_n(&default_backend, __ATOMIC_ACQUIRE);
}
void backend_set_default(const Backend *be) { __atomic_store_n(&default_backend, be, __ATOMIC_RELEASE); }

jx_status backend_run_outs(const Backend *be, const Kernel *k, Buffer *const *inputs, bool eager,
                           Buffer **outs) {
  int nout = kernel_nouts(k);
  void *omem[KERNEL_MAX_OUTS];
  for (int o = 0; o < nout; o++) {
    outs[o] = buffer_new(be, (size_t)kernel_out_elems(k, o) * jx_dtype_itemsize(kernel_out_dtype(k, o)));
    if (!outs[o]) {
      while (o-- > 0) buffer_free(outs[o]), outs[o] = NULL;
      return jx_last_status();
    }
    omem[o] = outs[o]->mem;
  }
  void *exe = NULL;
  void *mems[KERNEL_MAX_ARGS];
  for (int i = 0; i < k->nargs; i++) mems[i] = inputs[i]->mem;
  int64_t work = k->size * (k->has_reduction ? (k->reduction.size ? k->reduction.size : 1) : 1);
  const Backend *exec = eager && be->host_memory && work <= BACKEND_EAGER_INTERP_MAX ? &backend_interp : be;
  jx_status s = exec->prepare(exec, k, &exe);
  if (s == JX_OK && k->size > 0) s = exec->dispatch(exec, exe, k, mems, omem);
  if (s != JX_OK)
    for (int o = 0; o < nout; o++) buffer_free(outs[o]), outs[o] = NULL;
  return s;
}

Buffer *backend_run(const Backend *be, const Kernel *k, Buffer *const *inputs, bool eager) {
  Buffer *outs[KERNEL_MAX_OUTS];
  if (backend_run_outs(be, k, inputs, eager, outs) != JX_OK) return NULL;
  for (int o = 1; o < kernel_nouts(k); o++) buffer_free(outs[o]); /* only the first is wanted */
  return outs[0];
}

jx_status backend_run_routine(const Backend *be, const Routine *r, Buffer *const *inputs,
                              Buffer **outs) {
  jx_status s = routine_check(r);
  if (s != JX_OK) return s;
  void *in_mem[ROUTINE_MAX_OPERANDS], *out_mem[ROUTINE_MAX_OPERANDS];
  for (int i = 0; i < r->nin; i++) in_mem[i] = inputs[i]->mem;
  for (int o = 0; o < r->nout; o++) outs[o] = NULL;
  for (int o = 0; o < r->nout && s == JX_OK; o++) {
    outs[o] = buffer_new(be, routine_out_nbytes(r, o));
    if (!outs[o]) s = jx_last_status();
    else out_mem[o] = outs[o]->mem;
  }
  if (s == JX_OK) s = be->routine ? be->routine(be, r, in_mem, out_mem) : routine_run_host(r, in_mem, out_mem);
  if (s != JX_OK)
    for (int o = 0; o < r->nout; o++) buffer_free(outs[o]), outs[o] = NULL;
  return s;
}

Buffer *backend_transfer(Buffer *b, const Backend *to) {
  const Backend *from = b->backend;
  void *tmp = malloc(b->nbytes ? b->nbytes : 1);
  Buffer *out = tmp ? buffer_new(to, b->nbytes) : NULL;
  if (!tmp) error_set(JX_ERR_OOM, "out of memory moving %zu bytes from %s to %s", b->nbytes,
                      from->name, to->name);
  jx_status s = out ? from->synchronize(from) : JX_ERR_OOM;
  if (s == JX_OK) s = from->copy_out(from, tmp, b->mem, b->nbytes);
  if (s == JX_OK) s = to->copy_in(to, out->mem, tmp, b->nbytes);
  free(tmp);
  if (s != JX_OK && out) {
    buffer_free(out);
    out = NULL;
    error_set(JX_ERR_DEVICE, "moving %zu bytes from device %s to device %s failed", b->nbytes,
              from->name, to->name);
  }
  return out;
}

/* ------------------------------------------------------------ public API */

/* Devices whose init fails (cuda without a driver) are left out; the cpu devices after
 * the first follow "cpu". */
static const char *device_names[NUM_BACKENDS + BACKEND_MAX_CPU_DEVICES];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static void list_devices(void) {
  int n = 0, ncpu = backend_cpu_count();
  bool pending = error_pending();
  for (size_t i = 0; i < NUM_BACKENDS; i++) {
    if (!registry[i]->init || registry[i]->init(registry[i]) == JX_OK)
      device_names[n++] = registry[i]->name;
    if (registry[i] == &backend_cpu)
      for (int c = 1; c < ncpu; c++) device_names[n++] = cpu_devices[c].name;
  }
  if (!pending) jx_clear_error(); /* a missing device is not an error of the caller */
}

const char *const *jx_devices(void) {
  pthread_once(&names_once, list_devices);
  return device_names;
}

int jx_device_count(const char *platform) {
  if (!platform) platform = backend_default()->name;
  if (strcmp(platform, "cpu") == 0 || strncmp(platform, "cpu:", 4) == 0) return backend_cpu_count();
  const Backend *be = backend_get(platform);
  if (!be) return 0;
  bool pending = error_pending();
  int n = !be->init || be->init(be) == JX_OK;
  if (!pending) jx_clear_error();
  return n;
}

jx_status jx_default_device(const char *name) {
  const Backend *be = backend_find("jx_default_device", name);
  if (!be) return jx_last_status();
  backend_set_default(be);
  return JX_OK;
}
