/* kernels.c -- generated kernels on the cuda device: prepare renders a Kernel with the
 * CUDA framing (src/render/cuda.c), compiles it through NVRTC (nvrtc.c, cached in memory
 * and on disk) and keeps the function behind a structural cache, so a repeated eager op
 * costs a hash lookup and a launch; prepare_batch compiles a jit program's kernels as
 * one translation unit (one NVRTC run); dispatch launches on the stream with the
 * kernel's plan. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "render/cuda.h"

#define KERNELS_MAX 16384 /* structural entries before the table is emptied */
#define THREADS 256

typedef struct CudaExe {
  CUfunction fn;
  CUmodule mod; /* the module (a batch's kernels share one) */
  int per_sm; /* resident blocks of THREADS a multiprocessor (the occupancy calculator) */
  RenderCudaPlan plan;
  char name[RENDER_NAME_MAX];
} CudaExe;

/* The full structure of a kernel (expressions are hash-consed: pointer equality is
 * structural equality). */
typedef struct KeyPart {
  const AluExp *exp, *epilogue, *pre_exp;
  int nextra;
  const AluExp *extra[KERNEL_MAX_OUTS - 1];
  jx_dtype extra_dtypes[KERNEL_MAX_OUTS - 1];
  int64_t size, rsize;
  AluValue identity, pre_identity;
  int nargs;
  jx_dtype dtype, rdtype, pre_dtype;
  AluOp rop, pre_op;
  bool has_reduction, has_pre, has_row_out;
  const AluExp *row_exp;
  jx_dtype row_dtype;
  jx_dtype arg_dtypes[KERNEL_MAX_ARGS];
} KeyPart;

/* A kernel's identity: its own fields and its group epilogue's (Kernel.post; zeros
 * without one). */
typedef struct KernelKey {
  KeyPart main, post;
  bool has_post;
} KernelKey;

typedef struct Entry {
  KernelKey key;
  uint64_t hash;
  CudaExe *exe;
} Entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Entry *table; /* open addressing, cap a power of two */
static size_t cap, count;

static void part_of(const Kernel *k, KeyPart *key) {
  key->exp = k->exp;
  key->nextra = k->nextra;
  for (int o = 0; o < k->nextra; o++) key->extra[o] = k->extra[o], key->extra_dtypes[o] = k->extra_dtypes[o];
  key->size = k->size;
  key->nargs = k->nargs;
  key->dtype = k->dtype;
  memcpy(key->arg_dtypes, k->arg_dtypes, (size_t)k->nargs * sizeof k->arg_dtypes[0]);
  if ((key->has_reduction = k->has_reduction)) {
    key->epilogue = k->reduction.epilogue;
    key->rsize = k->reduction.size;
    key->identity = k->reduction.identity;
    key->rdtype = k->reduction.dtype;
    key->rop = k->reduction.op;
  }
  if ((key->has_row_out = k->has_row_out)) key->row_exp = k->row_exp, key->row_dtype = k->row_dtype;
  if ((key->has_pre = k->has_pre)) {
    key->pre_exp = k->pre_exp;
    key->pre_identity = k->pre.identity;
    key->pre_dtype = k->pre.dtype;
    key->pre_op = k->pre.op;
  }
}

static void key_of(const Kernel *k, KernelKey *key) {
  memset(key, 0, sizeof *key); /* padding too: keys are compared with memcmp */
  part_of(k, &key->main);
  if ((key->has_post = k->post != NULL)) part_of(k->post, &key->post);
}

/* 8 bytes a step (the key is hashed at every dispatch: a byte-wise FNV over its ~400
 * bytes cost most of a microsecond of a launch's host time). */
static uint64_t key_hash(const KernelKey *key) {
  const unsigned char *p = (const unsigned char *)key;
  uint64_t h = 0xcbf29ce484222325ull ^ key->has_post, w;
  size_t i = 0, n = key->has_post ? sizeof *key : sizeof key->main; /* the post's zeros: no part */
  for (; i + 8 <= n; i += 8) {
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static CudaExe *lookup_locked(const KernelKey *key, uint64_t h) {
  if (!cap) return NULL;
  for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
    if (!table[i].exe) return NULL;
    if (table[i].hash == h && memcmp(&table[i].key, key, sizeof *key) == 0) return table[i].exe;
  }
}

static void insert_locked(const KernelKey *key, uint64_t h, CudaExe *exe) {
  if (count + 1 > cap / 2) {
    size_t ncap = cap ? cap * 2 : 1024;
    if (count >= KERNELS_MAX) ncap = cap, count = 0; /* start over (executables stay alive) */
    Entry *nt = calloc(ncap, sizeof *nt);
    if (!nt) return;
    for (size_t i = 0; count && i < cap; i++)
      if (table[i].exe)
        for (size_t j = table[i].hash & (ncap - 1);; j = (j + 1) & (ncap - 1))
          if (!nt[j].exe) {
            nt[j] = table[i];
            break;
          }
    free(table);
    table = nt, cap = ncap;
  }
  for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
    if (!table[i].exe) {
      table[i] = (Entry){.key = *key, .hash = h, .exe = exe};
      count++;
      return;
    }
}

/* Prelude + the kernels' texts, one translation unit. */
static char *unit(char *const *texts, int n, size_t *len) {
  size_t plen = *render_cuda.prelude_len, total = plen + 2; /* newline, NUL */
  for (int i = 0; i < n; i++) total += strlen(texts[i]) + 1;
  char *s = malloc(total);
  if (!s) return NULL;
  memcpy(s, render_cuda.prelude, plen);
  size_t at = plen;
  s[at++] = '\n';
  for (int i = 0; i < n; i++) {
    size_t l = strlen(texts[i]);
    memcpy(s + at, texts[i], l);
    at += l;
    s[at++] = '\n';
  }
  s[at] = 0;
  *len = at;
  return s;
}

/* Renders, compiles and loads kernels ks[0..n) (misses of the structural cache) as one
 * unit, inserting them in the cache. */
static jx_status build(const Kernel *const *ks, int n, CudaExe **exes) {
  char **texts = calloc((size_t)n, sizeof *texts);
  CudaExe *all = calloc((size_t)n, sizeof *all);
  jx_status s = texts && all ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "cuda: out of memory rendering %d kernels", n);
  int nt = 0;
  for (int i = 0; s == JX_OK && i < n; i++) {
    all[i].plan = render_cuda_plan(ks[i]);
    char *t = render_kernel(&render_cuda, ks[i], all[i].name);
    if (!t) {
      s = jx_last_status();
      break;
    }
    bool dup = false; /* the same kernel twice in a program: one definition */
    for (int j = 0; j < i && !dup; j++) dup = strcmp(all[j].name, all[i].name) == 0;
    if (dup) free(t);
    else texts[nt++] = t;
    if (config_debug_level() >= 4 && !dup) fprintf(stderr, "jaxc cuda kernel:\n%s\n", t);
  }
  size_t len = 0;
  char *src = s == JX_OK ? unit(texts, nt, &len) : NULL;
  if (s == JX_OK && !src) s = JX_ERR_OOM, error_set(s, "cuda: out of memory");
  CUmodule mod = NULL;
  if (s == JX_OK) s = cuda_compile(src, len, &mod);
  const CudaDevice *d = cuda_device();
  for (int i = 0; s == JX_OK && i < n; i++) {
    all[i].mod = mod;
    s = cuda_check(d->cu.cuModuleGetFunction(&all[i].fn, mod, all[i].name), "cuModuleGetFunction");
    if (s == JX_OK && (d->cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&all[i].per_sm, all[i].fn, THREADS, 0) != 0 ||
                       all[i].per_sm < 1))
      all[i].per_sm = 1;
  }
  if (s == JX_OK) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++) {
      KernelKey key;
      key_of(ks[i], &key);
      uint64_t h = key_hash(&key);
      CudaExe *old = lookup_locked(&key, h);
      exes[i] = old ? old : &all[i];
      if (!old) insert_locked(&key, h, &all[i]);
    }
    pthread_mutex_unlock(&lock);
  } else free(all); /* nothing refers to them */
  for (int i = 0; i < nt; i++) free(texts[i]);
  free(texts), free(src);
  return s;
}

jx_status cuda_prepare(const Kernel *k, void **exe) {
  jx_status s = cuda_init();
  if (s != JX_OK) return s;
  KernelKey key;
  key_of(k, &key);
  uint64_t h = key_hash(&key);
  pthread_mutex_lock(&lock);
  CudaExe *e = lookup_locked(&key, h);
  pthread_mutex_unlock(&lock);
  if (!e) {
    if ((s = build(&k, 1, &e)) != JX_OK) return s;
  }
  *exe = e;
  return JX_OK;
}

const void *cuda_exe_module(const void *exe) { return exe ? ((const CudaExe *)exe)->mod : NULL; }

jx_status cuda_prepare_batch(const Kernel *const *ks, int n) {
  jx_status s = cuda_init();
  if (s != JX_OK || n == 0) return s;
  const Kernel **miss = malloc((size_t)n * sizeof *miss);
  CudaExe **exes = malloc((size_t)n * sizeof *exes);
  int nm = 0;
  if (!miss || !exes) {
    free(miss), free(exes);
    error_set(JX_ERR_OOM, "cuda: out of memory");
    return JX_ERR_OOM;
  }
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n; i++) {
    KernelKey key;
    key_of(ks[i], &key);
    if (!lookup_locked(&key, key_hash(&key))) miss[nm++] = ks[i];
  }
  pthread_mutex_unlock(&lock);
  if (nm) s = build(miss, nm, exes);
  free(miss), free(exes);
  return s;
}

/* Waves of resident blocks a split row reduction takes: 4 (JAXC_CUDA_SPLIT_WAVES=1..8
 * tries others, measuring). Smaller blocks of rows are handed out as SMs free up, so no
 * SM idles at the end: argmax of 2^28 float32 (256 rows of 2^20, 4 -> 16 blocks a row)
 * 0.2619 -> 0.2552 ms on an H200 (3 runs each, waves 2: 0.2589; 3: 0.2633, rows not
 * split in powers of two), sum of 2^28 unchanged (0.2437 -> 0.2430). */
#define SPLIT_WAVES_DEFAULT 4
static int split_waves(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_SPLIT_WAVES", SPLIT_WAVES_DEFAULT, 1, 8);
}

/* Rows a row lane of a grouped column reduction takes at least: 16 (JAXC_CUDA_COL_ROWS =
 * 1..256 tries others, measuring). More rows a block, fewer
 * partials for the last block to combine: each lane holds G sums, and a block's 32 G
 * outputs' partials are read by its 256 threads. */
static int col_rows(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_COL_ROWS", 16, 1, 256);
}

static unsigned clamp_blocks(int64_t want, int64_t most) {
  return (unsigned)(want < 1 ? 1 : want > most ? most : want);
}

jx_status cuda_dispatch(void *exe_, const Kernel *k, void *const *inputs, void *const *outs) {
  const CudaExe *exe = exe_;
  const CudaDevice *d = cuda_device();
  cuda_make_current();
  struct { void *p[64]; } in;
  struct { void *p[4]; } out;
  memset(&in, 0, sizeof in), memset(&out, 0, sizeof out);
  for (int i = 0; i < k->nargs; i++) in.p[i] = inputs[i];
  for (int o = 0; o < kernel_nouts(k); o++) out.p[o] = outs[o];
  char *scratch = NULL;
  CUstream stream = cuda_stream();
  const RenderCudaPlan *p = &exe->plan;
  /* grid-stride loops: 16 blocks a multiprocessor (one wave of resident blocks ran the
   * 2^28 chain at 3.26 TB/s on an H200, against 3.54 with these); vectorized
   * elementwise kernels: a block for every 256 x nvec vectors (3.66 TB/s) */
  int64_t sms = d->sm_count, many = sms * 16;
  unsigned gx = 1, gy = 1;
  switch (p->kind) {
  case CUDA_ELEMENTWISE: /* vectors: the whole work in one step of the loop; tiles: a block a tile */
    if (p->tile_b) gx = clamp_blocks(((k->size / p->tile_b + 31) / 32) * ((p->tile_b + 31) / 32), INT32_MAX);
    else if (p->vec > 1) gx = clamp_blocks((k->size / p->vec + (int64_t)THREADS * p->nvec - 1) / (THREADS * p->nvec), INT32_MAX);
    else gx = clamp_blocks((k->size + THREADS - 1) / THREADS, many);
    break;
  case CUDA_THREAD_ROW: gx = clamp_blocks((k->size + THREADS - 1) / THREADS, many); break;
  case CUDA_WARP_ROW: {
    int64_t warps = k->size / ((int64_t)p->group * p->rows);
    gx = clamp_blocks((warps + THREADS / 32 - 1) / (THREADS / 32), 65535);
    break;
  }
  case CUDA_BLOCK_ROW: gx = clamp_blocks(k->size, 65535); break;
  case CUDA_COLUMNS: {
    /* 32 outputs (groups of p->group) a block; the rows over one wave of resident blocks,
     * 64 rows a block at least (8 a thread; grouped, col_rows() a thread) */
    int64_t R = k->reduction.size, want, most = R / ((p->group > 1 ? col_rows() : 8) * RENDER_CUDA_COL_LANES);
    int64_t groups = k->size / p->group;
    gx = clamp_blocks((groups + RENDER_CUDA_COL_OUTS - 1) / RENDER_CUDA_COL_OUTS, RENDER_CUDA_SPLIT_ROWS);
    want = sms * exe->per_sm / gx;
    gy = clamp_blocks(want < most ? want : most, 65535);
    if (gy >= 8) gy &= ~3u; /* the last block's 16-byte loads of 4 partials (columns_combine) */
    if (!(scratch = cuda_alloc((size_t)k->size * gy * 16))) return jx_last_status();
    break;
  }
  }
  if (p->split) {
    /* whole waves of the blocks that are resident at once (the occupancy calculator's,
     * for this kernel's registers; split_waves() of them), so no partial, mostly idle
     * wave finishes the tail (256 rows x 5 blocks was 1.2 waves of 8 a multiprocessor) */
    int64_t R = k->reduction.size, want = sms * exe->per_sm * split_waves() / k->size, most = R / 8192;
    gy = clamp_blocks(want < most ? want : most, 65535);
    /* partials: up to complex128 */
    if (!(scratch = cuda_alloc((size_t)k->size * gy * 16))) return jx_last_status();
  }
  void *args[] = {&in, &out, &scratch};
  jx_status s = cuda_check(d->cu.cuLaunchKernel(exe->fn, gx, gy, 1, THREADS, 1, 1, 0, stream, args, NULL),
                           exe->name);
  cuda_free(scratch); /* stream-ordered: the next user runs after this kernel (or, while a
                       * graph is recorded, the graph keeps it) */
  if (config_debug_level() >= 1)
    fprintf(stderr, "jaxc cuda: launch %s grid (%u, %u) x %d\n", exe->name, gx, gy, THREADS);
  return s;
}
