/* cpu.c -- the cpu backend's function table: prepare renders a kernel to C and loads it
 * (compile.c) behind two in-memory caches; dispatch runs it on the thread pool (pool.c).
 * Without a C compiler, kernels run on the interpreter. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/cpu/cpu.h"
#include "backend/fft.h"
#include "backend/lapack.h"
#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "render/render.h"

/* Caches: `kernels` maps a kernel's full structure (hash-consed expression pointers,
 * sizes, dtypes, reduction) to its executable, so a repeated eager op skips rendering;
 * `sources` maps rendered source text to its executable (the translation unit is the
 * fixed prelude + that text): for a kernel its body (kernel_body), so kernels that differ
 * only in name and IR comment -- one elementwise update at several sizes, whose loop
 * bounds are the thread pool's range -- share one compiled function; for a loop the whole
 * text. Both are bounded. Executables themselves are never
 * freed and their shared objects never closed: callers may hold them (the backend
 * interface has no release), and they are small. */
#define KERNELS_MAX 8192           /* structural entries before the table is emptied */
#define SOURCES_MAX 4096           /* source entries ... */
#define SOURCES_MAX_BYTES (64 << 20) /* ... and bytes of source text kept */
#define ALIGN_ELEMS 256 /* chunk boundaries: multiples of the reduction blocks */

typedef struct CpuExe {
  CpuKernelFn fn;       /* NULL when running on the interpreter */
  void *interp;         /* the interpreter's program, without a compiler */
  char name[RENDER_NAME_MAX];
  char *source_path;    /* the generated source kept on disk (malloc'd) */
  struct CpuExe *all;   /* every executable, for the lifetime of the process */
} CpuExe;

typedef struct KernelEntry {
  Kernel key; /* compared with kernel_equal (ir/kernel.c): the full structure */
  uint64_t hash;
  CpuExe *exe;
} KernelEntry;

typedef struct SourceEntry {
  char *text;
  size_t len;
  uint64_t hash;
  CpuExe *exe;
  struct SourceEntry *next;    /* bucket chain */
  struct SourceEntry *younger; /* insertion order, for eviction */
} SourceEntry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;         /* caches, stats */
static pthread_mutex_t compile_lock = PTHREAD_MUTEX_INITIALIZER; /* one compile at a time */
static bool configured;
static bool warned_no_compiler;
static int64_t min_work = 1 << 15;
/* A kernel with enough work runs as up to CHUNKS_PER_THREAD chunks per pool thread, which
 * the threads take in turn (pool.c): a thread sharing its core with another process then
 * does fewer chunks instead of the kernel waiting for its fixed half. With one chunk per
 * thread the 4096 x 1024 softmax went from 1.25 ms quiet to 2.33 ms under some load,
 * where JAX (whose runtime splits work finer) went from 1.12-1.19 to 1.52. Every output
 * is computed the same way whatever the chunking, so results do not change. */
#define CHUNKS_PER_THREAD 8
static CpuStats stats;
static CpuExe *all_exes;

static KernelEntry *kernels; /* open addressing; cap a power of two */
static size_t kernels_cap, kernels_count;

#define SOURCE_BUCKETS 4096
static SourceEntry *sources[SOURCE_BUCKETS];
static SourceEntry *oldest, *youngest;
static size_t sources_count, sources_bytes;

/* ------------------------------------------------------------ configuration */

static void configure_locked(void) {
  compile_configure();
  pool_configure(config_num_threads());
  configured = true;
}

static void ensure_configured(void) {
  pthread_mutex_lock(&lock);
  if (!configured) configure_locked();
  pthread_mutex_unlock(&lock);
}

const char *cpu_source_path(const void *exe) {
  return exe ? ((const CpuExe *)exe)->source_path : NULL;
}

bool cpu_has_compiler(void) {
  ensure_configured();
  return compile_available();
}

CpuStats cpu_stats(void) {
  pthread_mutex_lock(&lock);
  CpuStats s = stats;
  pthread_mutex_unlock(&lock);
  return s;
}

int64_t cpu_set_min_work(int64_t work) {
  pthread_mutex_lock(&lock);
  int64_t old = min_work;
  min_work = work < 1 ? 1 : work;
  pthread_mutex_unlock(&lock);
  return old;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* ------------------------------------------------------------------- caches */

static CpuExe *kernels_get(const Kernel *key, uint64_t h) {
  if (!kernels_cap) return NULL;
  for (size_t i = h & (kernels_cap - 1);; i = (i + 1) & (kernels_cap - 1)) {
    KernelEntry *e = &kernels[i];
    if (!e->exe) return NULL;
    if (e->hash == h && kernel_equal(&e->key, key)) return e->exe;
  }
}

static void kernels_put(const Kernel *key, uint64_t h, CpuExe *exe) {
  if (kernels_count >= KERNELS_MAX) { /* bounded: start over (entries are rebuilt) */
    if (kernels) memset(kernels, 0, kernels_cap * sizeof *kernels);
    kernels_count = 0;
  }
  if ((kernels_count + 1) * 2 > kernels_cap) {
    size_t cap = kernels_cap ? kernels_cap * 2 : 256;
    KernelEntry *t = calloc(cap, sizeof *t);
    if (!t) return; /* only a missed cache entry */
    for (size_t i = 0; i < kernels_cap; i++) {
      if (!kernels[i].exe) continue;
      size_t j = kernels[i].hash & (cap - 1);
      while (t[j].exe) j = (j + 1) & (cap - 1);
      t[j] = kernels[i];
    }
    free(kernels);
    kernels = t;
    kernels_cap = cap;
  }
  size_t i = h & (kernels_cap - 1);
  while (kernels[i].exe) i = (i + 1) & (kernels_cap - 1);
  kernels[i] = (KernelEntry){.key = *key, .hash = h, .exe = exe};
  kernels_count++;
}

static uint64_t text_hash(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

/* The part of a kernel's rendered text (render_kernel) that decides its code: what
 * follows the signature line `void NAME(...) {`. Everything before it is the IR comment
 * and the name. The whole text where the signature is not found. */
static const char *kernel_body(const char *text, const char *name) {
  char sig[RENDER_NAME_MAX + 8];
  snprintf(sig, sizeof sig, "void %s(", name);
  const char *p = strstr(text, sig);
  const char *nl = p ? strchr(p, '\n') : NULL;
  return nl ? nl + 1 : text;
}

static CpuExe *sources_get(const char *text, size_t len, uint64_t h) {
  for (SourceEntry *e = sources[h % SOURCE_BUCKETS]; e; e = e->next)
    if (e->hash == h && e->len == len && memcmp(e->text, text, len) == 0) return e->exe;
  return NULL;
}

static void sources_evict_oldest(void) {
  SourceEntry *e = oldest;
  SourceEntry **p = &sources[e->hash % SOURCE_BUCKETS];
  while (*p != e) p = &(*p)->next;
  *p = e->next;
  oldest = e->younger;
  if (!oldest) youngest = NULL;
  sources_count--;
  sources_bytes -= e->len;
  free(e->text);
  free(e);
}

static void sources_put(const char *text, size_t len, uint64_t h, CpuExe *exe) {
  SourceEntry *e = malloc(sizeof *e);
  char *copy = malloc(len + 1);
  if (!e || !copy) {
    free(e);
    free(copy);
    return;
  }
  memcpy(copy, text, len + 1);
  *e = (SourceEntry){.text = copy, .len = len, .hash = h, .exe = exe};
  while (oldest && (sources_count >= SOURCES_MAX || sources_bytes + len > SOURCES_MAX_BYTES))
    sources_evict_oldest();
  e->next = sources[h % SOURCE_BUCKETS];
  sources[h % SOURCE_BUCKETS] = e;
  if (youngest) youngest->younger = e;
  else oldest = e;
  youngest = e;
  sources_count++;
  sources_bytes += len;
}

static CpuExe *exe_new(const char *name) {
  CpuExe *x = calloc(1, sizeof *x);
  if (!x) {
    error_set(JX_ERR_OOM, "cpu: out of memory preparing a kernel");
    return NULL;
  }
  snprintf(x->name, sizeof x->name, "%s", name);
  x->all = all_exes; /* under lock */
  all_exes = x;
  return x;
}

/* An executable named `name` running x's function (a kernel of the same body). Under
 * lock; NULL when out of memory. */
static CpuExe *exe_alias(const CpuExe *x, const char *name) {
  if (strcmp(x->name, name) == 0) return (CpuExe *)x;
  CpuExe *a = exe_new(name);
  if (!a) return NULL;
  a->fn = x->fn;
  a->source_path = x->source_path ? strdup(x->source_path) : NULL;
  return a;
}

void cpu_reset(void) {
  pthread_mutex_lock(&compile_lock);
  pthread_mutex_lock(&lock);
  configure_locked();
  warned_no_compiler = false;
  if (kernels) memset(kernels, 0, kernels_cap * sizeof *kernels);
  kernels_count = 0;
  while (oldest) sources_evict_oldest();
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&compile_lock);
}

/* ------------------------------------------------------------------ backend */

/* 64-byte aligned memory in whole 64-byte lines, carved from malloc(n + 64) with the
 * block's start kept in the 8 bytes below (malloc's blocks are 16-aligned: 16 to 64 bytes
 * lie below). Not aligned_alloc: glibc's memalign never takes from the per-thread cache
 * (tcache), so each small buffer cost a trip through the bins (cached eager add: ~400 of
 * its ~6,600 instructions to allocate, as many to free). */
static void *cpu_alloc(const Backend *be, size_t nbytes) {
  (void)be;
  if (nbytes > SIZE_MAX - 128) return NULL;
  size_t n = nbytes ? (nbytes + 63) / 64 * 64 : 64;
  char *raw = malloc(n + 64);
  if (!raw) return NULL;
  char *mem = (char *)(((uintptr_t)raw + 64) & ~(uintptr_t)63);
  memcpy(mem - sizeof raw, &raw, sizeof raw);
  return mem;
}
static void cpu_free(const Backend *be, void *mem) {
  (void)be;
  if (!mem) return;
  void *raw;
  memcpy(&raw, (char *)mem - sizeof raw, sizeof raw);
  free(raw);
}
static jx_status cpu_copy_in(const Backend *be, void *mem, const void *host, size_t n) {
  if (n) memcpy(mem, host, n);
  return JX_OK;
}
static jx_status cpu_copy_out(const Backend *be, void *host, const void *mem, size_t n) {
  if (n) memcpy(host, mem, n);
  return JX_OK;
}
static jx_status cpu_synchronize(const Backend *be) { return JX_OK; }

/* Without a compiler: the interpreter's program, wrapped. */
static jx_status prepare_interp(const Kernel *k, uint64_t h, void **exe) {
  if (config_debug_level() >= 1 &&
      !__atomic_exchange_n(&warned_no_compiler, true, __ATOMIC_RELAXED)) {
    if (config_cc())
      fprintf(stderr, "[jaxc] warning: the C compiler CC=%s was not found: the cpu device "
              "runs kernels on the interpreter\n", config_cc());
    else
      fprintf(stderr, "[jaxc] warning: no C compiler (cc, gcc, clang) on PATH: the cpu "
              "device runs kernels on the interpreter\n");
  }
  void *p = NULL;
  jx_status st = backend_interp.prepare(&backend_interp, k, &p);
  if (st != JX_OK) return st;
  pthread_mutex_lock(&lock);
  CpuExe *x = exe_new("interp");
  if (x) {
    x->interp = p;
    kernels_put(k, h, x);
    stats.fallbacks++;
  }
  pthread_mutex_unlock(&lock);
  *exe = x;
  return x ? JX_OK : JX_ERR_OOM;
}

/* A kernel's work in element-iterations (outputs times reduction length), saturating. */
static int64_t kernel_work(const Kernel *k) {
  int64_t per = k->has_reduction && k->reduction.size > 1 ? k->reduction.size : 1;
  return k->size > INT64_MAX / per ? INT64_MAX : k->size * per;
}

/* Operations per element of an expression: its distinct nodes, a threefry block (about
 * 100 integer operations, vectorized only at -O3) counting as 64. */
static int64_t exp_ops(const AluExp *e) {
  if (!e) return 0;
  bool had_error = error_pending();
  int64_t n = 0, ops = 0;
  const AluExp **v = alu_toposort(e, &n);
  if (!v) { /* only an estimate: out of memory means "large", and is not this call's error */
    if (!had_error) jx_clear_error();
    return INT32_MAX;
  }
  for (int64_t i = 0; i < n; i++) ops += v[i]->op == ALU_THREEFRY2X32 ? 64 : 1;
  free(v);
  return ops;
}

/* Kernels whose work times operations per element is below this compile with light
 * optimization (COMPILE_OPT_LIGHT): -O3 costs ~30 ms of compile per kernel, and -O1 with
 * the vectorizer runs such kernels (a few thousand elements, a handful of operations
 * each) as fast, within 0.1-0.3 us per call. Kernels with much per-element work (random
 * bits, rounding emulation: 2560 elements of 20+ operations ran 1.5-17x slower at -O1
 * or -O2) stay at -O3. bench/RESULTS.md (issue 11 item 5) has the measurements.
 * Reductions of moderate work (below KERNEL_LIGHT_RED_WORK element-iterations) whose
 * element is a gather of some index arithmetic (KERNEL_LIGHT_RED_OPS operations or more,
 * short of a threefry block's 64) compile light too: -O3 unrolls their accumulator tiles
 * completely, copying that arithmetic 160-256 times -- the Fashion-MNIST CNN step's three
 * small matmul reductions (1280x128, 16384x10; 13 operations) took 130-250 ms of compiler
 * CPU each at -O3, 30-50 ms light -- for 20-70 us per call of run time. Plain sums and
 * dot products over rows (6 operations: the MLP's bias gradients, 1.7 vs 3.0 us at
 * 256x128) keep -O3. */
#define KERNEL_LIGHT_OPS (1 << 15)
#define KERNEL_LIGHT_RED_WORK (1 << 18)
#define KERNEL_LIGHT_RED_OPS 12
static CompileOpt kernel_opt(const Kernel *k) {
  int64_t work = kernel_work(k);
  bool moderate_red = k->has_reduction && work < KERNEL_LIGHT_RED_WORK;
  if (work >= KERNEL_LIGHT_OPS && !moderate_red) return COMPILE_OPT_FULL;
  int64_t ops = exp_ops(k->exp) + (k->has_pre ? exp_ops(k->pre_exp) : 0);
  for (int o = 0; o < k->nextra; o++) ops += exp_ops(k->extra[o]);
  if (k->has_reduction) ops += exp_ops(k->reduction.epilogue);
  if (moderate_red && work >= KERNEL_LIGHT_OPS)
    return ops >= KERNEL_LIGHT_RED_OPS && ops < 64 ? COMPILE_OPT_LIGHT : COMPILE_OPT_FULL;
  return ops < KERNEL_LIGHT_OPS / (work > 0 ? work : 1) ? COMPILE_OPT_LIGHT : COMPILE_OPT_FULL;
}

/* JAXC_DEBUG=4: a kernel's C source, eager (compile_source) or batched (cpu_prepare_batch) */
static void print_source(const char *name, const char *text) {
  fprintf(stderr, "[jaxc] cpu: source of %s (after the prelude, src/render/prelude.h):\n%s\n", name, text);
}

/* Compiles (or loads from the disk cache) one rendered source after the prelude and
 * publishes it in the source cache under key[0..klen) (hash kh: the kernel's body, or the
 * whole text). Called with compile_lock held and lock not held. */
static jx_status compile_source(const char *name, const char *text, size_t len, const char *key,
                                size_t klen, uint64_t kh, CompileOpt opt, CpuExe **out) {
  int debug = config_debug_level();
  if (debug >= 4) print_source(name, text);
  size_t plen = render_prelude_len();
  char *tu = malloc(plen + len + 2);
  if (!tu) {
    error_set(JX_ERR_OOM, "cpu: out of memory compiling %s", name);
    return JX_ERR_OOM;
  }
  memcpy(tu, render_prelude(), plen);
  tu[plen] = '\n';
  memcpy(tu + plen + 1, text, len + 1);
  CpuKernelFn fn = NULL;
  bool compiled = false;
  static char path[COMPILE_PATH_MAX]; /* under compile_lock */
  double t0 = now_us();
  jx_status st = compile_load(tu, plen + 1 + len, name, opt, &fn, &compiled, path);
  double ms = (now_us() - t0) * 1e-3;
  free(tu);
  CpuExe *x = NULL;
  pthread_mutex_lock(&lock);
  stats.compiles += compiled;
  stats.disk_hits += st == JX_OK && !compiled;
  if (st == JX_OK && (x = exe_new(name)) != NULL) {
    x->fn = fn;
    x->source_path = strdup(path);
    sources_put(key, klen, kh, x);
  } else if (st == JX_OK) {
    st = JX_ERR_OOM;
  }
  pthread_mutex_unlock(&lock);
  if (debug >= 1 && st == JX_OK)
    fprintf(stderr, "[jaxc] cpu: %s %s in %.1f ms (%s)\n", compiled ? "compiled" : "loaded cached",
            name, ms, path);
  *out = x;
  return st;
}

/* Renders, then finds or builds the object for that source. */
static jx_status prepare_compiled(const Kernel *k, uint64_t h, void **exe) {
  char name[RENDER_NAME_MAX];
  char *text = render_kernel(&render_c, k, name);
  if (!text) return jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_INTERNAL;
  size_t len = strlen(text);
  const char *body = kernel_body(text, name);
  size_t blen = len - (size_t)(body - text);
  uint64_t th = text_hash(body, blen);
  pthread_mutex_lock(&compile_lock);
  pthread_mutex_lock(&lock);
  CpuExe *x = sources_get(body, blen, th);
  bool oom = false;
  if (x) {
    stats.memory_hits++;
    x = exe_alias(x, name); /* the same code under this kernel's name */
    if (x) kernels_put(k, h, x);
    else oom = true;
  }
  pthread_mutex_unlock(&lock);
  jx_status st = oom ? JX_ERR_OOM : JX_OK;
  if (!x && !oom) {
    st = compile_source(name, text, len, body, blen, th, kernel_opt(k), &x);
    if (st == JX_OK) {
      pthread_mutex_lock(&lock);
      kernels_put(k, h, x);
      pthread_mutex_unlock(&lock);
    }
  }
  pthread_mutex_unlock(&compile_lock);
  free(text);
  *exe = x;
  return st;
}

static void empty_kernel(void *const *in, void *const *out, int64_t start, int64_t end) {
  (void)in, (void)out, (void)start, (void)end;
}

/* Built-in broadcasts: out[i] = in0[0] for elements of 1, 2, 4, 8 or 16 bytes. */
#define FILL_KERNEL(BYTES, T)                                                             \
  static void fill_##BYTES(void *const *in, void *const *out, int64_t start, int64_t end) { \
    T v;                                                                                  \
    memcpy(&v, in[0], sizeof v);                                                          \
    T *o = out[0];                                                                        \
    for (int64_t i = start; i < end; i++) o[i] = v;                                       \
  }
typedef struct Bytes16 { uint64_t lo, hi; } Bytes16;
FILL_KERNEL(1, uint8_t)
FILL_KERNEL(2, uint16_t)
FILL_KERNEL(4, uint32_t)
FILL_KERNEL(8, uint64_t)
FILL_KERNEL(16, Bytes16)
#undef FILL_KERNEL

/* A kernel that only repeats element 0 of its input (`GLOBAL_INDEX #a 0`, same dtype, no
 * reduction or second output): the copy making a broadcast view contiguous -- the zeros
 * of an optimizer's state are broadcast scalars, copied on a jit program's first call.
 * It runs a built-in fill instead of a compiled function, which cost a compiler run of
 * its own (45-50 ms of the Fashion-MNIST MLP step's first call). NULL for others. */
static CpuExe *builtin_kernel(const Kernel *k) {
  static CpuExe fills[5] = {{.fn = fill_1, .name = "k_fill_1"}, {.fn = fill_2, .name = "k_fill_2"},
                            {.fn = fill_4, .name = "k_fill_4"}, {.fn = fill_8, .name = "k_fill_8"},
                            {.fn = fill_16, .name = "k_fill_16"}};
  const AluExp *e = k->exp;
  if (k->has_reduction || k->has_pre || k->nextra || k->has_row_out || k->nargs != 1 ||
      e->op != ALU_GLOBAL_INDEX || e->arg != 0 || e->dtype != k->dtype ||
      k->arg_dtypes[0] != k->dtype || e->src[0]->op != ALU_CONST || e->src[0]->value.i != 0)
    return NULL;
  switch ((dtype_bits(k->dtype) + 7) / 8) {
  case 1: return &fills[0];
  case 2: return &fills[1];
  case 4: return &fills[2];
  case 8: return &fills[3];
  case 16: return &fills[4];
  default: return NULL;
  }
}

static jx_status cpu_prepare(const Backend *be, const Kernel *k, void **exe) {
  static CpuExe empty = {.fn = empty_kernel, .name = "k_empty"};
  if (k->size == 0) { /* nothing to compute: no compile for empty arrays */
    *exe = &empty;
    return JX_OK;
  }
  if ((*exe = builtin_kernel(k)) != NULL) return JX_OK;
  ensure_configured();
  uint64_t h = kernel_hash(k);
  pthread_mutex_lock(&lock);
  CpuExe *x = kernels_get(k, h);
  if (x) stats.memory_hits++;
  pthread_mutex_unlock(&lock);
  if (x) {
    *exe = x;
    return JX_OK;
  }
  if (!compile_available()) return prepare_interp(k, h, exe);
  return prepare_compiled(k, h, exe);
}

typedef struct Launch {
  CpuKernelFn fn;
  void *const *in;
  void *const *out;
} Launch;

/* One translation unit of a batch: kernels pick[first..first+count) of texts, compiled
 * with optimization `opt`. */
typedef struct CompileJob {
  int first, count;
  CompileOpt opt;
  size_t cost; /* estimated compile cost (see batch_plan) */
  const int *pick;
  char **texts;
  const uint64_t *ths;
  const char **names;
  CpuKernelFn *fns;
  jx_status status;
  bool compiled;
  char path[COMPILE_PATH_MAX];
  char error[512]; /* the failure's message, moved to the caller's thread */
} CompileJob;

static void *compile_job(void *arg) {
  CompileJob *J = arg;
  size_t total = render_prelude_len() + 2;
  for (int j = 0; j < J->count; j++) total += strlen(J->texts[J->pick[J->first + j]]) + 1;
  char *tu = malloc(total), unit[RENDER_NAME_MAX + 32];
  if (!tu) {
    J->status = JX_ERR_OOM;
    snprintf(J->error, sizeof J->error, "cpu: out of memory compiling %d kernels", J->count);
    return NULL;
  }
  size_t at = render_prelude_len();
  memcpy(tu, render_prelude(), at);
  tu[at++] = '\n';
  uint64_t uh = 1469598103934665603ull;
  for (int j = 0; j < J->count; j++) {
    int i = J->pick[J->first + j];
    size_t len = strlen(J->texts[i]);
    memcpy(tu + at, J->texts[i], len);
    at += len;
    tu[at++] = '\n';
    uh = (uh ^ J->ths[i]) * 1099511628211ull;
  }
  tu[at] = 0;
  snprintf(unit, sizeof unit, "prog%d_%08x", J->count, (unsigned)(uh & 0xffffffffu));
  J->status = compile_load_many(tu, at, unit, J->opt, J->count, J->names, J->fns, &J->compiled,
                                J->path);
  if (J->status != JX_OK) { /* errors are per thread: carry the message over */
    snprintf(J->error, sizeof J->error, "%s", jx_last_error());
    jx_clear_error();
  }
  free(tu);
  return NULL;
}

/* The compile threads of a batch take jobs in order (largest first) until none is left. */
typedef struct JobQueue {
  CompileJob *jobs;
  int njobs;
  int next; /* atomic */
} JobQueue;

static void *job_worker(void *arg) {
  JobQueue *q = arg;
  for (int j; (j = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED)) < q->njobs;)
    compile_job(&q->jobs[j]);
  return NULL;
}

/* A kernel of a batch with its estimated compile cost (balancing translation units). */
typedef struct SizedPick {
  size_t len;
  int pick;
} SizedPick;

static int cmp_size_desc(const void *a, const void *b) {
  const SizedPick *x = a, *y = b;
  if (x->len != y->len) return x->len < y->len ? 1 : -1;
  return (x->pick > y->pick) - (x->pick < y->pick);
}

static int cmp_job_cost_desc(const void *a, const void *b) {
  const CompileJob *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
  return (x->first > y->first) - (x->first < y->first);
}

/* Compile-cost model of a batch, in source bytes at light optimization (GCC 12 on this
 * machine, per translation unit: -O3 takes ~3x the time of -O1 -ftree-vectorize per
 * kernel byte, and each unit pays ~13 KB worth of fixed cost -- the process, the
 * prelude, the assembler and the linker). */
#define COST_FULL_PER_BYTE 3
#define COST_UNIT 13000

/* Splits the m kernels pick[0..m) into translation units: per optimization class, as
 * many units as keep each unit's kernels worth at least 3 units' fixed cost (at most
 * `threads`), kernels dealt largest first to the least loaded unit of their class.
 * Reorders pick (and name_ptrs) so that each unit's kernels are contiguous; fills jobs
 * (capacity COMPILE_OPT_COUNT * threads) and returns how many, or 0 when out of memory. */
static int batch_plan(int m, int *pick, char **texts, const CompileOpt *opts,
                      const char (*names)[RENDER_NAME_MAX], const char **name_ptrs, int threads,
                      CompileJob *jobs) {
  SizedPick *by = malloc((size_t)m * sizeof *by);
  int *unit_of = malloc((size_t)m * sizeof *unit_of), *sorted = malloc((size_t)m * sizeof *sorted);
  int njobs = 0;
  for (int c = 0; by && unit_of && sorted && c < COMPILE_OPT_COUNT; c++) {
    int n = 0;
    size_t total = 0, weight = c == COMPILE_OPT_FULL ? COST_FULL_PER_BYTE : 1;
    for (int j = 0; j < m; j++)
      if (opts[pick[j]] == (CompileOpt)c) {
        by[n++] = (SizedPick){strlen(texts[pick[j]]) * weight, j};
        total += by[n - 1].len;
      }
    if (!n) continue;
    int units = (int)(total / (3 * COST_UNIT));
    units = units > threads ? threads : units > n ? n : units < 1 ? 1 : units;
    qsort(by, (size_t)n, sizeof *by, cmp_size_desc);
    int base = njobs;
    for (int u = 0; u < units; u++) jobs[njobs++] = (CompileJob){.opt = (CompileOpt)c, .cost = COST_UNIT};
    for (int j = 0; j < n; j++) { /* largest first, to the least loaded unit */
      int best = base;
      for (int u = base + 1; u < njobs; u++)
        if (jobs[u].cost < jobs[best].cost) best = u;
      jobs[best].cost += by[j].len;
      jobs[best].count++;
      unit_of[by[j].pick] = best;
    }
  }
  if (!by || !unit_of || !sorted) njobs = 0;
  else { /* each unit's kernels contiguous, units in job order */
    for (int u = 0, at = 0; u < njobs; u++) {
      jobs[u].first = at;
      at += jobs[u].count;
      jobs[u].count = 0;
    }
    for (int j = 0; j < m; j++) {
      CompileJob *J = &jobs[unit_of[j]];
      sorted[J->first + J->count++] = pick[j];
    }
    for (int j = 0; j < m; j++) {
      pick[j] = sorted[j];
      name_ptrs[j] = names[pick[j]];
    }
  }
  free(by), free(unit_of), free(sorted);
  return njobs;
}

/* Compiles every kernel of ks that is not cached yet, in a few translation units
 * (batch_plan) compiled at once: one compiler run per unit, so the prelude is parsed once
 * per unit, not once per kernel. Kernels it cannot batch are left for cpu_prepare. */
static jx_status cpu_prepare_batch(const Backend *be, const Kernel *const *ks, int n) {
  ensure_configured();
  if (!compile_available() || n <= 0) return JX_OK;
  int *same = calloc((size_t)n, sizeof *same); /* an earlier kernel of the same source */
  CpuExe **exes = calloc((size_t)n, sizeof *exes);
  uint64_t *hs = calloc((size_t)n, sizeof *hs), *ths = calloc((size_t)n, sizeof *ths);
  char **texts = calloc((size_t)n, sizeof *texts), (*names)[RENDER_NAME_MAX] = calloc((size_t)n, RENDER_NAME_MAX);
  const char **name_ptrs = calloc((size_t)n, sizeof *name_ptrs);
  const char **bodies = calloc((size_t)n, sizeof *bodies); /* kernel_body of texts[i] */
  CompileOpt *opts = calloc((size_t)n, sizeof *opts);
  CpuKernelFn *fns = calloc((size_t)n, sizeof *fns);
  int *pick = calloc((size_t)n, sizeof *pick);
  jx_status st = JX_OK;
  if (!same || !exes || !hs || !ths || !texts || !names || !name_ptrs || !bodies || !opts ||
      !fns || !pick) {
    st = JX_ERR_OOM;
    error_set(st, "cpu: out of memory preparing %d kernels", n);
    goto done;
  }
  pthread_mutex_lock(&compile_lock);
  int m = 0;
  for (int i = 0; i < n; i++) {
    same[i] = -1;
    if (ks[i]->size == 0 || builtin_kernel(ks[i])) continue;
    hs[i] = kernel_hash(ks[i]);
    pthread_mutex_lock(&lock);
    bool cached = kernels_get(ks[i], hs[i]) != NULL;
    pthread_mutex_unlock(&lock);
    if (cached) continue;
    texts[i] = render_kernel(&render_c, ks[i], names[i]);
    if (!texts[i]) continue; /* cpu_prepare reports it */
    bodies[i] = kernel_body(texts[i], names[i]);
    size_t len = strlen(bodies[i]);
    ths[i] = text_hash(bodies[i], len);
    opts[i] = kernel_opt(ks[i]);
    pthread_mutex_lock(&lock);
    CpuExe *x = sources_get(bodies[i], len, ths[i]);
    if (x && (x = exe_alias(x, names[i])) != NULL) kernels_put(ks[i], hs[i], x);
    pthread_mutex_unlock(&lock);
    /* The same body twice compiles once (text equality; the MLP step's Adam updates are
     * one body at six sizes), at the stronger optimization either asks for. Another
     * kernel with the same name (names end in a 32-bit hash of the body) cannot share
     * the unit: cpu_prepare compiles it in a unit of its own. */
    bool clash = false;
    for (int j = 0; j < m && same[i] < 0 && !clash; j++) {
      int o = pick[j];
      if (ths[o] == ths[i] && strcmp(bodies[o], bodies[i]) == 0) {
        same[i] = o;
        if (opts[i] == COMPILE_OPT_FULL) opts[o] = COMPILE_OPT_FULL;
      } else {
        clash = strcmp(names[o], names[i]) == 0;
      }
    }
    if (x || clash || same[i] >= 0) continue;
    pick[m] = i;
    name_ptrs[m++] = names[i];
  }
  if (config_debug_level() >= 4)
    for (int j = 0; j < m; j++) print_source(names[pick[j]], texts[pick[j]]);
  if (m > 0) {
    /* Translation units by optimization class, compiled on up to `threads` threads at
     * once (the calling thread and helpers taking units largest first): compile time is
     * most of a jit's first call, and the machine has the cores. */
    int threads = compile_ready() ? pool_threads() : 1;
    if (threads < 1) threads = 1;
    CompileJob *jobs = calloc((size_t)COMPILE_OPT_COUNT * (size_t)threads, sizeof *jobs);
    int njobs = jobs ? batch_plan(m, pick, texts, opts, (const char (*)[RENDER_NAME_MAX])names,
                                  name_ptrs, threads, jobs) : 0;
    if (!njobs) {
      free(jobs);
      st = JX_ERR_OOM;
      error_set(st, "cpu: out of memory preparing %d kernels", n);
      pthread_mutex_unlock(&compile_lock);
      goto done;
    }
    int *job_of = calloc((size_t)m, sizeof *job_of); /* the unit of each kernel slot */
    for (int u = 0; job_of && u < njobs; u++) {
      jobs[u].pick = pick, jobs[u].texts = texts, jobs[u].ths = ths;
      jobs[u].names = name_ptrs + jobs[u].first, jobs[u].fns = fns + jobs[u].first;
    }
    qsort(jobs, (size_t)njobs, sizeof *jobs, cmp_job_cost_desc);
    for (int u = 0; job_of && u < njobs; u++)
      for (int j = 0; j < jobs[u].count; j++) job_of[jobs[u].first + j] = u;
    double t0 = now_us();
    JobQueue q = {jobs, job_of ? njobs : 0, 0};
    int nhelpers = (threads < njobs ? threads : njobs) - 1, started = 0;
    pthread_t tids[64];
    if (nhelpers > 64) nhelpers = 64;
    while (started < nhelpers && pthread_create(&tids[started], NULL, job_worker, &q) == 0) started++;
    job_worker(&q);
    for (int t = 0; t < started; t++) pthread_join(tids[t], NULL);
    pthread_mutex_lock(&lock);
    if (!job_of) {
      st = JX_ERR_OOM;
      error_set(st, "cpu: out of memory preparing %d kernels", n);
    }
    for (int u = 0; st == JX_OK && u < njobs; u++) {
      if (jobs[u].status != JX_OK) st = jobs[u].status;
      stats.compiles += jobs[u].compiled;
      stats.disk_hits += jobs[u].status == JX_OK && !jobs[u].compiled;
    }
    for (int j = 0; st == JX_OK && j < m; j++) {
      int i = pick[j];
      CpuExe *x = exe_new(names[i]);
      if (!x) {
        st = JX_ERR_OOM;
        break;
      }
      x->fn = fns[j];
      x->source_path = strdup(jobs[job_of[j]].path);
      sources_put(bodies[i], strlen(bodies[i]), ths[i], x);
      kernels_put(ks[i], hs[i], x);
      exes[i] = x;
    }
    for (int i = 0; st == JX_OK && i < n; i++) {
      if (same[i] < 0 || !exes[same[i]]) continue;
      CpuExe *x = exe_alias(exes[same[i]], names[i]);
      if (x) kernels_put(ks[i], hs[i], x);
      else st = JX_ERR_OOM;
    }
    pthread_mutex_unlock(&lock);
    if (st != JX_OK && !error_pending()) {
      for (int u = 0; u < njobs; u++)
        if (jobs[u].status != JX_OK) {
          error_set(jobs[u].status, "%s", jobs[u].error);
          break;
        }
    }
    if (config_debug_level() >= 1 && st == JX_OK) {
      int nfull = 0;
      for (int u = 0; u < njobs; u++) nfull += jobs[u].opt == COMPILE_OPT_FULL;
      fprintf(stderr, "[jaxc] cpu: %d kernels in %d translation unit(s) (%d at -O3) on %d "
              "thread(s) in %.1f ms (%s)\n", m, njobs, nfull, started + 1,
              (now_us() - t0) * 1e-3, jobs[0].path);
    }
    free(job_of);
    free(jobs);
  }
  pthread_mutex_unlock(&compile_lock);
done:
  for (int i = 0; texts && i < n; i++) free(texts[i]);
  free(same), free(exes), free(hs), free(ths), free(texts), free(names), free(name_ptrs);
  free(bodies), free(opts), free(fns), free(pick);
  return st;
}

static void launch_chunk(void *ctx, int64_t start, int64_t end) {
  const Launch *l = ctx;
  l->fn(l->in, l->out, start, end);
}

static jx_status cpu_dispatch(const Backend *be, void *exe, const Kernel *k, void *const *inputs,
                              void *const *out) {
  CpuExe *x = exe;
  if (!x->fn) return backend_interp.dispatch(&backend_interp, x->interp, k, inputs, out);
  int debug = config_debug_level();
  double t0 = debug >= 1 ? now_us() : 0;
  /* Work in element-iterations, saturating; small kernels stay on this thread. */
  int64_t per = k->has_reduction && k->reduction.size > 1 ? k->reduction.size : 1;
  int64_t work = kernel_work(k);
  /* chunks start at multiples of the blocks of outputs, except for long reductions
   * with few outputs (a two-stage reduction's first stage: 128 partial sums) */
  int64_t align = per >= 1024 ? 1 : ALIGN_ELEMS;
  int threads = pool_threads();
  int64_t cap = threads; /* chunks */
  if (threads > 1 && (per < 1024 || k->size >= 64LL * threads * CHUNKS_PER_THREAD)) {
    cap = (int64_t)threads * CHUNKS_PER_THREAD;
    if (per >= 1024) align = 64; /* whole row/column blocks (render/c.c): no recomputed rows */
  }
  int64_t chunks = work / min_work, most = (k->size + align - 1) / align;
  if (chunks > cap) chunks = cap;
  if (chunks > most) chunks = most;
  if (chunks <= 1) {
    x->fn(inputs, out, 0, k->size);
  } else {
    Launch l = {x->fn, inputs, out};
    pool_run(launch_chunk, &l, k->size, (int)chunks, align);
  }
  __atomic_add_fetch(&stats.launches, 1, __ATOMIC_RELAXED);
  if (debug >= 1)
    fprintf(stderr, "[jaxc] cpu: %s size=%" PRId64 " threads=%" PRId64 " chunks=%" PRId64 " %.1f us\n",
            x->name, k->size, chunks < 1 ? (int64_t)1 : chunks < threads ? chunks : threads,
            chunks < 1 ? (int64_t)1 : chunks, now_us() - t0);
  return JX_OK;
}

/* OpenBLAS runs single-threaded (routine_blas_single_threaded) under the cpu backend:
 * its GEMMs are split over the backend's own pool instead, so that two sets of threads
 * never compete for the cores (OpenBLAS's workers spin after each call); cpu_linalg
 * widens it around large LAPACK calls. Weak: other BLAS libraries have no such call. */
extern void openblas_set_num_threads(int n) __attribute__((weak));

typedef struct GemmJob {
  const Routine *r;
  void *const *in;
  void *out;
  bool by_rows;
  int64_t nblocks; /* gemm_fixed_chunk's */
} GemmJob;

static void gemm_chunk(void *ctx, int64_t start, int64_t end) {
  const GemmJob *g = ctx;
  if (g->by_rows) routine_gemm_block(g->r, g->in, g->out, start, end, 0, g->r->inner);
  else routine_gemm_block(g->r, g->in, g->out, 0, g->r->n, start, end);
}

/* blocks [start, end) of routine_gemm_fixed_blocks's split (GemmJob.nblocks of them) */
static void gemm_fixed_chunk(void *ctx, int64_t start, int64_t end) {
  const GemmJob *g = ctx;
  routine_gemm_fixed_run(g->r, g->in, g->out, g->by_rows, g->nblocks, start, end);
}

/* A batch of linear-algebra problems: LINALG_CHUNKS_PER_THREAD chunks of batch entries
 * per thread, taken in turn, so that a descheduled thread holds up one small chunk
 * rather than half the batch (a loaded machine; each chunk allocates its scratch once).
 * A single problem runs on one thread up to n = 2047: OpenBLAS's threaded LAPACK
 * synchronizes once per panel, and on a shared machine each sync waits for a descheduled thread
 * (measured, 2 cores at load 16: getrf 256 0.3 ms on one thread vs 50 ms on two,
 * geqrf+orgqr 256 1.3 vs 7.7 ms; getrf 1024 66 ms on one thread, while five runs on
 * two were unfinished after 6 minutes; at nice -20 among nice-10 builds, load 7:
 * getrf 512 1.2 ms on one thread vs 20 ms on two). Larger problems run
 * on OpenBLAS's own threads for the call's duration, from n = 512 when no other task
 * is runnable at the call (others_idle), from n = 2048 always. A single triangular
 * solve with many right-hand sides is split in blocks of columns (rows) taken in turn
 * like a batch's chunks, each on one OpenBLAS thread. */
typedef struct LinalgJob {
  const Routine *r;
  void *const *in;
  void *const *out;
  _Atomic int failed;
} LinalgJob;

static void linalg_chunk(void *ctx, int64_t start, int64_t end) {
  LinalgJob *g = ctx;
  if (lapack_run(g->r, g->in, g->out, start, end) != JX_OK) g->failed = 1;
}

/* Parts [start, end) of the single problem (lapack_parts). */
static void linalg_parts_chunk(void *ctx, int64_t start, int64_t end) {
  LinalgJob *g = ctx;
  if (lapack_run_parts(g->r, g->in, g->out, 0, start, end) != JX_OK) g->failed = 1;
}

#define LINALG_THREADED_MIN_N 2048
#define LINALG_IDLE_THREADED_MIN_N 512
/* Runnable tasks: machine-wide (/proc/loadavg's R of "0.52 1.32 1.72 R/T last_pid"),
 * or this process's threads (state R in /proc/self/task/<tid>/stat); -1 where they
 * cannot be read. */
static long running_machine(void) {
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  ssize_t len = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (len <= 0) return -1;
  buf[len] = 0;
  long running = -1;
  return sscanf(buf, "%*s %*s %*s %ld/", &running) == 1 ? running : -1;
}
static long running_self(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  long running = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) continue;
    buf[len] = 0;
    const char *paren = strrchr(buf, ')'); /* "tid (comm) S ...": comm may hold spaces */
    if (paren && paren[1] == ' ' && paren[2] == 'R') running++;
  }
  closedir(d);
  return running;
}
/* Whether no other process has a runnable task right now: OpenBLAS's threads then have
 * idle CPUs to run on (this process's own threads, such as OpenBLAS's workers still
 * spinning after a call, do not count). */
static bool others_idle(void) {
  long all = running_machine(), self = all >= 0 ? running_self() : -1;
  return all >= 0 && self >= 1 && all - self <= 0;
}
#define LINALG_CHUNKS_PER_THREAD 8
#define LINALG_MIN_PART 32
#define LINALG_SPLIT_MIN_FLOPS (1 << 21)
static jx_status cpu_linalg(const Routine *r, void *const *inputs, void *const *outs) {
  int64_t chunks = pool_threads() * LINALG_CHUNKS_PER_THREAD;
  if (pool_threads() < 2) chunks = 1;
  if (chunks > r->outer) chunks = r->outer;
  if (chunks >= 2) {
    LinalgJob g = {r, inputs, outs, 0};
    pool_run(linalg_chunk, &g, r->outer, (int)chunks, 1);
    if (!g.failed) return JX_OK;
    return lapack_run(r, inputs, outs, 0, r->outer); /* again on this thread: its error */
  }
  /* a single triangular solve with many right-hand sides (inv's): column (row) blocks
   * of at least LINALG_MIN_PART, in turn, each on one OpenBLAS thread */
  int64_t parts = lapack_parts(r), k = r->flags & LINALG_LEFT_SIDE ? r->n : r->m;
  int64_t most = parts / LINALG_MIN_PART;
  chunks = pool_threads() * LINALG_CHUNKS_PER_THREAD / 2;
  if (chunks > most) chunks = most;
  if (r->outer == 1 && pool_threads() >= 2 && chunks >= 2 && (double)k * (double)k * (double)parts >= LINALG_SPLIT_MIN_FLOPS) {
    LinalgJob g = {r, inputs, outs, 0};
    pool_run(linalg_parts_chunk, &g, parts, (int)chunks, 16);
    if (!g.failed) return JX_OK;
    return lapack_run(r, inputs, outs, 0, r->outer);
  }
  /* the blocked LU and QR: their trailing updates on the pool (jaxc's GEMM), never
   * OpenBLAS's threads; eigh's back-transformation on the pool too, its LAPACK steps
   * (sytrd, stedc) on OpenBLAS's threads where those are wide */
  bool help = r->outer == 1 && pool_threads() >= 2 && lapack_threads_help(r);
  if (help && r->op != ROUTINE_EIGH) return lapack_run_threads(r, inputs, outs, pool_run, pool_threads());
  int64_t big = r->n > r->m ? r->n : r->m;
  bool wide = openblas_set_num_threads && pool_threads() >= 2 &&
              (big >= LINALG_THREADED_MIN_N ||
               (big >= LINALG_IDLE_THREADED_MIN_N && r->op != ROUTINE_TRIANGULAR_SOLVE &&
                r->op != ROUTINE_TRIDIAGONAL_SOLVE && others_idle()));
  if (wide) openblas_set_num_threads(pool_threads());
  jx_status s = help ? lapack_run_threads(r, inputs, outs, pool_run, pool_threads()) : lapack_run(r, inputs, outs, 0, r->outer);
  if (wide) openblas_set_num_threads(1);
  return s;
}

/* GEMMs of at least GEMM_MIN_FLOPS split the larger of the output's rows and columns
 * (in multiples of 16) into one block per thread (measured: four per thread run 10%
 * slower at n = 256..1024); other routines run on the host. */
#define GEMM_MIN_FLOPS (1 << 21)
static jx_status cpu_routine(const Backend *be, const Routine *r, void *const *inputs, void *const *outs) {
  routine_blas_single_threaded();
  if (ROUTINE_IS_LINALG(r->op)) return cpu_linalg(r, inputs, outs);
  if (r->op == ROUTINE_FFT) return fft_run(r, inputs[0], outs[0], pool_run, pool_threads());
  if (r->op != ROUTINE_GEMM) return routine_run_host(r, inputs, outs);
  __atomic_add_fetch(&stats.gemms, 1, __ATOMIC_RELAXED);
  bool by_rows;
  int64_t nb = routine_gemm_fixed_blocks(r, &by_rows); /* OpenBLAS: the shape's blocks */
  if (nb == 1 || (nb > 1 && pool_threads() < 2)) return routine_run_host(r, inputs, outs);
  if (nb > 1) {
    GemmJob g = {r, inputs, outs[0], by_rows, nb};
    pool_run(gemm_fixed_chunk, &g, nb, pool_threads() < nb ? pool_threads() : (int)nb, 1);
    return JX_OK;
  }
  double flops = 2.0 * (double)r->outer * (double)r->n * (double)r->inner * (double)r->m;
  int64_t n = by_rows ? r->n : r->inner;
  int64_t chunks = pool_threads(), most = n / 16;
  if (chunks > most) chunks = most;
  if (flops < GEMM_MIN_FLOPS || chunks < 2) return routine_run_host(r, inputs, outs);
  GemmJob g = {r, inputs, outs[0], by_rows, 0};
  pool_run(gemm_chunk, &g, n, (int)chunks, 16);
  return JX_OK;
}

/* ------------------------------------------------------------------ loops */

/* A compiled loop (render_loop_c): the generated function, shared through the source
 * cache, and this plan's step executables for the steps it hands back to the host. */
typedef int64_t (*LoopFn)(void **s, int64_t length, int (*host)(void *, int), void *ctx);
typedef struct CpuLoop {
  LoopFn fn;
  CpuExe **steps; /* kernel steps' executables (NULL for routines) */
} CpuLoop;

typedef struct LoopRun {
  const Backend *be;
  const CpuLoop *loop;
  const LoopPlan *plan;
  void **slots;
  jx_status status;
} LoopRun;

/* Step k of a running loop, called from the generated function: a kernel worth the
 * thread pool, or a routine. Nonzero stops the loop (status kept). */
static int loop_host(void *ctx, int k) {
  LoopRun *r = ctx;
  const LoopStep *st = &r->plan->steps[k];
  void *in[KERNEL_MAX_ARGS > ROUTINE_MAX_OPERANDS ? KERNEL_MAX_ARGS : ROUTINE_MAX_OPERANDS];
  void *out[KERNEL_MAX_OUTS > ROUTINE_MAX_OPERANDS ? KERNEL_MAX_OUTS : ROUTINE_MAX_OPERANDS];
  for (int a = 0; a < st->nargs; a++) in[a] = r->slots[st->args[a]];
  for (int o = 0; o < st->nout; o++) out[o] = r->slots[st->outs[o]];
  r->status = st->kernel ? cpu_dispatch(r->be, r->loop->steps[k], st->kernel, in, out)
                         : cpu_routine(r->be, st->routine, in, out);
  return r->status != JX_OK;
}

static void cpu_release_loop(const Backend *be, void *exe) {
  CpuLoop *l = exe;
  if (l) free(l->steps);
  free(l);
}

static jx_status cpu_prepare_loop(const Backend *be, const LoopPlan *l, void **exe) {
  *exe = NULL;
  ensure_configured();
  if (!compile_available()) {
    error_set(JX_ERR_UNSUPPORTED, "cpu: no C compiler for a compiled loop");
    return JX_ERR_UNSUPPORTED;
  }
  CpuLoop *cl = calloc(1, sizeof *cl);
  bool *inline_call = calloc((size_t)l->nsteps + 1, sizeof *inline_call);
  if (cl) cl->steps = calloc((size_t)l->nsteps + 1, sizeof *cl->steps);
  if (!cl || !cl->steps || !inline_call) {
    cpu_release_loop(be, cl), free(inline_call);
    error_set(JX_ERR_OOM, "cpu: out of memory preparing a loop");
    return JX_ERR_OOM;
  }
  jx_status st = JX_OK;
  pthread_mutex_lock(&lock);
  int64_t least = min_work;
  pthread_mutex_unlock(&lock);
  for (int k = 0; k < l->nsteps && st == JX_OK; k++) {
    const Kernel *kk = l->steps[k].kernel;
    if (!kk) continue;
    void *x = NULL;
    st = cpu_prepare(be, kk, &x);
    cl->steps[k] = x;
    int64_t per = kk->has_reduction && kk->reduction.size > 1 ? kk->reduction.size : 1;
    /* small kernels run inside the generated function; others on the pool, as dispatch */
    inline_call[k] = st == JX_OK && cl->steps[k]->fn && kk->size > 0 && kk->size <= least / per;
  }
  char name[RENDER_NAME_MAX];
  char *text = st == JX_OK ? render_loop_c(l, inline_call, name) : NULL;
  free(inline_call);
  if (st == JX_OK && !text) st = jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
  if (st != JX_OK) {
    cpu_release_loop(be, cl);
    return st;
  }
  size_t len = strlen(text);
  uint64_t th = text_hash(text, len);
  pthread_mutex_lock(&compile_lock);
  pthread_mutex_lock(&lock);
  CpuExe *x = sources_get(text, len, th);
  if (x) stats.memory_hits++;
  pthread_mutex_unlock(&lock);
  if (!x) st = compile_source(name, text, len, text, len, th, COMPILE_OPT_FULL, &x);
  pthread_mutex_unlock(&compile_lock);
  free(text);
  if (st != JX_OK) {
    cpu_release_loop(be, cl);
    return st;
  }
  cl->fn = (LoopFn)(void (*)(void))x->fn; /* the object's symbol is the loop function */
  *exe = cl;
  return JX_OK;
}

static jx_status cpu_run_loop(const Backend *be, void *exe, const LoopPlan *l, void **slots, int64_t length,
                              int64_t *trips) {
  LoopRun r = {.be = be, .loop = exe, .plan = l, .slots = slots, .status = JX_OK};
  int64_t n = r.loop->fn(slots, length, loop_host, &r);
  *trips = n < 0 ? 0 : n;
  return n < 0 ? (r.status != JX_OK ? r.status : JX_ERR_INTERNAL) : JX_OK;
}

const Backend backend_cpu = {
    .prepare_loop = cpu_prepare_loop,
    .run_loop = cpu_run_loop,
    .release_loop = cpu_release_loop,
    .prepare_batch = cpu_prepare_batch,
    .host_memory = true,
    /* softmax's exp(x - max) recomputed by its sum and its division, which then are one
     * two-phase kernel (max, sum) with the division as its row output (render/c.c): one
     * read of the input from memory instead of three, and no 16 MB temporary at 4096 x
     * 1024 (bench/RESULTS.md, issue 11) */
    .cheap_recompute = true,
    .row_outputs = true,
    .eager_dot_gemm = true,
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_in = cpu_copy_in,
    .copy_out = cpu_copy_out,
    .prepare = cpu_prepare,
    .dispatch = cpu_dispatch,
    .routine = cpu_routine,
    .synchronize = cpu_synchronize,
};
