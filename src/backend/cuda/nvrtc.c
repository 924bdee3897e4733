/* nvrtc.c -- CUDA C source -> a loaded module: NVRTC (dlopen'ed on the first compile)
 * compiles for the device's own architecture (sm_90 on an H200) straight to a cubin,
 * cached in memory by the full source text and on disk under $JAXC_CACHE_DIR/cuda,
 * where a cubin is reused only when its stored key -- architecture, NVRTC version and
 * the full source -- matches byte for byte (the file name is just a hash of it). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/cuda/cuda.h"
#include "core/config.h"
#include "core/error.h"

typedef struct _nvrtcProgram *nvrtcProgram;
typedef struct Nvrtc {
  int (*Version)(int *, int *);
  int (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                       const char *const *);
  int (*DestroyProgram)(nvrtcProgram *);
  int (*CompileProgram)(nvrtcProgram, int, const char *const *);
  int (*GetCUBINSize)(nvrtcProgram, size_t *);
  int (*GetCUBIN)(nvrtcProgram, char *);
  int (*GetProgramLogSize)(nvrtcProgram, size_t *);
  int (*GetProgramLog)(nvrtcProgram, char *);
  const char *(*GetErrorString)(int);
} Nvrtc;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Nvrtc nv;
static bool nv_ok;
static char nv_error[512];
static char arch_opt[64]; /* --gpu-architecture=sm_90 */
static char key_head[160]; /* first line of every key: arch and NVRTC version */
static CudaCompileStats stats;

typedef struct Entry {
  char *text;
  size_t len;
  uint64_t hash;
  CUmodule mod;
  struct Entry *next;
} Entry;
#define BUCKETS 1024
static Entry *table[BUCKETS];

static uint64_t fnv(const char *s, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

static void load_once(void) {
  char why[400];
  const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
  void *h = cuda_dlopen_any(names, why, sizeof why);
  if (!h) {
    snprintf(nv_error, sizeof nv_error, "cuda: compiling kernels needs NVRTC, but libnvrtc.so.13 "
             "(or .12) was not found (%s)", why);
    return;
  }
  static const struct { const char *name; size_t off; } syms[] = {
#define S(f) {"nvrtc" #f, offsetof(Nvrtc, f)}
      S(Version), S(CreateProgram), S(DestroyProgram), S(CompileProgram), S(GetCUBINSize),
      S(GetCUBIN), S(GetProgramLogSize), S(GetProgramLog), S(GetErrorString),
#undef S
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *f = dlsym(h, syms[i].name);
    if (!f) {
      snprintf(nv_error, sizeof nv_error, "cuda: libnvrtc has no %s", syms[i].name);
      return;
    }
    memcpy((char *)&nv + syms[i].off, &f, sizeof f);
  }
  nv_ok = true;
}

/* The option and key line for compute capability cc (90 for sm_90). */
static void set_arch(int cc) {
  int major = 0, minor = 0;
  nv.Version(&major, &minor);
  snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=sm_%d", cc);
  snprintf(key_head, sizeof key_head, "// jaxc cuda kernel: sm_%d, NVRTC %d.%d\n", cc, major, minor);
}

/* The disk cache's directory ($JAXC_CACHE_DIR/cuda), created if needed; false if none. */
static bool cache_dir(char *buf, size_t n) {
  char base[3000];
  if (!config_cache_dir(base, sizeof base)) return false;
  mkdir(base, 0755);
  int len = snprintf(buf, n, "%s/cuda", base);
  if (len < 0 || (size_t)len >= n) return false;
  return mkdir(buf, 0755) == 0 || errno == EEXIST;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
      if (fread(buf, 1, (size_t)n, f) != (size_t)n) free(buf), buf = NULL;
      else buf[n] = 0, *len = (size_t)n;
    }
  }
  fclose(f);
  return buf;
}

/* Writes atomically (a temporary file renamed into place). */
static void write_file(const char *path, const void *data, size_t len) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return;
  bool ok = fwrite(data, 1, len, f) == len;
  ok &= fclose(f) == 0;
  if (ok) rename(tmp, path);
  else remove(tmp);
}

/* The cubin for `key` from the disk cache (malloc'd), or NULL. */
static char *disk_lookup(const char *dir, uint64_t h, const char *key, size_t klen, size_t *n) {
  char path[4096];
  size_t len = 0;
  snprintf(path, sizeof path, "%s/%016llx.key", dir, (unsigned long long)h);
  char *stored = read_file(path, &len);
  bool same = stored && len == klen && memcmp(stored, key, klen) == 0;
  free(stored);
  if (!same) return NULL;
  snprintf(path, sizeof path, "%s/%016llx.cubin", dir, (unsigned long long)h);
  return read_file(path, n);
}

static void disk_store(const char *dir, uint64_t h, const char *key, size_t klen, const char *cubin,
                       size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%016llx.cubin", dir, (unsigned long long)h);
  write_file(path, cubin, n);
  snprintf(path, sizeof path, "%s/%016llx.key", dir, (unsigned long long)h);
  write_file(path, key, klen); /* last: a key names a complete cubin */
}

/* Compiles key (the source, after its first line) with NVRTC: a malloc'd cubin. */
static char *nvrtc_compile(const char *key, size_t *n) {
  nvrtcProgram prog = NULL;
  int r = nv.CreateProgram(&prog, key, "jaxc_kernels.cu", 0, NULL, NULL);
  if (r != 0) {
    error_set(JX_ERR_COMPILE, "cuda: nvrtcCreateProgram failed: %s", nv.GetErrorString(r));
    return NULL;
  }
  const char *opts[] = {arch_opt, "--std=c++17", "--device-as-default-execution-space"};
  r = nv.CompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
  char *cubin = NULL;
  if (r != 0) {
    size_t loglen = 0;
    nv.GetProgramLogSize(prog, &loglen);
    char *log = malloc(loglen + 1);
    if (log) nv.GetProgramLog(prog, log), log[loglen] = 0;
    char dir[3072], path[4200] = "(not kept)";
    if (cache_dir(dir, sizeof dir)) {
      snprintf(path, sizeof path, "%s/failed_%016llx.cu", dir, (unsigned long long)fnv(key, strlen(key), 0xcbf29ce484222325ull));
      write_file(path, key, strlen(key));
    }
    error_set(JX_ERR_COMPILE, "cuda: NVRTC failed to compile %s (%s): %.1500s", path,
              nv.GetErrorString(r), log ? log : "");
    free(log);
  } else if (nv.GetCUBINSize(prog, n) == 0 && (cubin = malloc(*n ? *n : 1))) {
    if (nv.GetCUBIN(prog, cubin) != 0) free(cubin), cubin = NULL;
  }
  if (r == 0 && !cubin) error_set(JX_ERR_COMPILE, "cuda: NVRTC produced no cubin");
  nv.DestroyProgram(&prog);
  return cubin;
}

jx_status cuda_nvrtc_check(const char *source, int cc, size_t *cubin_bytes) {
  pthread_once(&once, load_once);
  if (!nv_ok) {
    error_set(JX_ERR_DEVICE, "%s", nv_error);
    return JX_ERR_DEVICE;
  }
  pthread_mutex_lock(&lock);
  set_arch(cc);
  size_t hlen = strlen(key_head), len = strlen(source);
  char *key = malloc(hlen + len + 1);
  char *cubin = NULL;
  if (key) {
    memcpy(key, key_head, hlen), memcpy(key + hlen, source, len + 1);
    cubin = nvrtc_compile(key, cubin_bytes);
  } else error_set(JX_ERR_OOM, "cuda: out of memory");
  arch_opt[0] = 0; /* the device's own is set again at the next cuda_compile */
  pthread_mutex_unlock(&lock);
  free(key), free(cubin);
  return cubin ? JX_OK : jx_last_status();
}

jx_status cuda_compile(const char *source, size_t len, CUmodule *mod) {
  jx_status s = cuda_init();
  if (s != JX_OK) return s;
  pthread_once(&once, load_once);
  if (!nv_ok) {
    error_set(JX_ERR_DEVICE, "%s", nv_error);
    return JX_ERR_DEVICE;
  }
  cuda_make_current();
  pthread_mutex_lock(&lock);
  if (!arch_opt[0]) set_arch(cuda_device()->cc_major * 10 + cuda_device()->cc_minor);
  pthread_mutex_unlock(&lock);
  size_t hlen = strlen(key_head), klen = hlen + len;
  uint64_t h = fnv(source, len, fnv(key_head, hlen, 0xcbf29ce484222325ull));
  pthread_mutex_lock(&lock);
  for (Entry *e = table[h % BUCKETS]; e; e = e->next)
    if (e->hash == h && e->len == len && memcmp(e->text, source, len) == 0) {
      *mod = e->mod;
      stats.memory_hits++;
      pthread_mutex_unlock(&lock);
      return JX_OK;
    }
  char *key = malloc(klen + 1);
  Entry *e = malloc(sizeof *e);
  char *text = malloc(len + 1);
  if (!key || !e || !text) {
    free(key), free(e), free(text);
    pthread_mutex_unlock(&lock);
    error_set(JX_ERR_OOM, "cuda: out of memory compiling a kernel");
    return JX_ERR_OOM;
  }
  memcpy(key, key_head, hlen), memcpy(key + hlen, source, len), key[klen] = 0;
  memcpy(text, source, len), text[len] = 0;
  char dir[3072];
  bool have_dir = cache_dir(dir, sizeof dir);
  size_t n = 0;
  char *cubin = have_dir ? disk_lookup(dir, h, key, klen, &n) : NULL;
  if (cubin) stats.disk_hits++;
  else {
    stats.compiles++;
    if ((cubin = nvrtc_compile(key, &n)) && have_dir) disk_store(dir, h, key, klen, cubin, n);
  }
  s = cubin ? cuda_check(cuda_device()->cu.cuModuleLoadData(mod, cubin), "cuModuleLoadData")
            : jx_last_status();
  if (s == JX_OK) {
    *e = (Entry){.text = text, .len = len, .hash = h, .mod = *mod, .next = table[h % BUCKETS]};
    table[h % BUCKETS] = e;
  } else free(e), free(text);
  pthread_mutex_unlock(&lock);
  free(cubin), free(key);
  return s;
}

CudaCompileStats cuda_compile_stats(void) {
  pthread_mutex_lock(&lock);
  CudaCompileStats s = stats;
  pthread_mutex_unlock(&lock);
  return s;
}
