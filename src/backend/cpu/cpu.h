/* cpu.h -- the cpu backend: kernels rendered to C (src/render), compiled by the system
 * C compiler into shared objects that are cached in memory and on disk, loaded with
 * dlopen, and run on a thread pool. Internal to src/backend/cpu and its tests. */
#ifndef JAXC_BACKEND_CPU_CPU_H
#define JAXC_BACKEND_CPU_CPU_H

#include "backend/backend.h"

/* ------------------------------------------------------------------ cpu.c */

/* The device "cpu". Buffers are 64-byte aligned host memory (interchangeable with the
 * interpreter's). Without a C compiler it still works: prepare/dispatch fall back to
 * the interpreter (one warning at JAXC_DEBUG >= 1). Use backend_set_default(&backend_cpu)
 * or jx_default_device("cpu") to make it the default. */
extern const Backend backend_cpu;

/* Kernel signature of everything render_kernel emits. */
typedef void (*CpuKernelFn)(void *const *in, void *const *out, int64_t start, int64_t end);

/* Counters since process start (tests, JAXC_DEBUG). */
typedef struct CpuStats {
  int64_t compiles;    /* compiler runs, successful or not */
  int64_t disk_hits;   /* shared objects reused from the disk cache */
  int64_t memory_hits; /* prepares answered by the in-memory caches */
  int64_t fallbacks;   /* prepares sent to the interpreter (no compiler) */
  int64_t launches;    /* dispatches */
  int64_t gemms;       /* GEMM routines run */
} CpuStats;
CpuStats cpu_stats(void);

/* The generated source file kept on disk for an executable from backend_cpu.prepare
 * (NULL when it runs on the interpreter). */
const char *cpu_source_path(const void *exe);
/* Whether kernels are compiled (a C compiler was found). */
bool cpu_has_compiler(void);
/* Re-reads CC, JAXC_CACHE_DIR, TMPDIR and JAXC_NUM_THREADS and empties the in-memory
 * caches (tests; not safe while other threads use the backend). */
void cpu_reset(void);
/* Work (element-iterations: outputs x reduction size) below which a kernel runs on the
 * calling thread, and the least work per thread above it. Returns the previous value;
 * tests lower it to exercise the thread pool on small arrays. */
int64_t cpu_set_min_work(int64_t work);

/* -------------------------------------------------------------- compile.c */

/* Reads the compiler settings (CC or cc/gcc/clang on PATH, cache directory); called by
 * cpu.c at first use and by cpu_reset. */
void compile_configure(void);
/* Whether a compiler command was found (it may still fail). */
bool compile_available(void);
/* How hard the compiler optimizes a translation unit: FULL (-O3) for kernels whose work
 * matters, LIGHT (-O1 and the loop vectorizer: a third of the compile time) for small
 * ones. */
typedef enum CompileOpt { COMPILE_OPT_FULL, COMPILE_OPT_LIGHT, COMPILE_OPT_COUNT } CompileOpt;
/* The compiler command and the flags kernels of each class are compiled with. */
const char *compile_command(void);
const char *compile_flags(CompileOpt opt);
/* Makes a shared object for translation unit `source` and loads the function `name`
 * from it: reused from the disk cache when the stored source (which records compiler,
 * flags and CPU) matches byte for byte, else compiled. *compiled says whether the
 * compiler ran; path (COMPILE_PATH_MAX bytes) receives the source file's path.
 * JX_ERR_COMPILE when compiling fails (the message names the kept source file and
 * quotes the compiler's output), JX_ERR_IO when no cache directory is writable.
 * Not thread-safe: cpu.c serializes calls. */
#define COMPILE_PATH_MAX 4096
jx_status compile_load(const char *source, size_t len, const char *name, CompileOpt opt,
                       CpuKernelFn *fn, bool *compiled, char *path);
/* Initializes the compiler configuration, cache directory and version once, so that
 * compile_load_many may then run on several threads at a time. false: no compiler. */
bool compile_ready(void);
/* The same for a translation unit defining nfn kernels: one compile, one object (named
 * after `name`), the functions names[i] loaded into fns[i]. */
jx_status compile_load_many(const char *source, size_t len, const char *name, CompileOpt opt,
                            int nfn, const char *const *names, CpuKernelFn *fns, bool *compiled,
                            char *path);

/* ----------------------------------------------------------------- pool.c */

typedef void (*PoolFn)(void *ctx, int64_t start, int64_t end);
/* Sets the number of threads (including the caller) used from now on. */
void pool_configure(int nthreads);
int pool_threads(void);
/* Runs fn over [0, n) split into `nchunks` contiguous pieces whose inner boundaries are
 * multiples of `align`, on the pool's workers and the calling thread; returns when all
 * pieces are done. Runs inline when the pool is busy with another caller's job. */
void pool_run(PoolFn fn, void *ctx, int64_t n, int nchunks, int64_t align);

#endif
