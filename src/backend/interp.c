/* interp.c -- the reference interpreter: evaluates kernels directly from the IR, one
 * chunk of iterations at a time, with the scalar semantics of alu_eval_op. It is slow
 * by design and simple enough to trust: every other backend is tested against it. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/dtype.h"
#include "core/error.h"

/* Iterations evaluated together: large enough to amortize the per-node dispatch. */
#define CHUNK 512

/* A prepared kernel: the DAG nodes of exp and the epilogue in topological order. */
typedef struct Program {
  Kernel key;                   /* compared with kernel_equal (ir/kernel.c) */
  uint64_t hash;                /* kernel_hash(&key): picks the bucket */
  int nnodes, nepi;             /* nodes[0..nnodes) for exp, then nepi for epilogue */
  const AluExp **nodes;
  int fast;                     /* binary_fast's op (an AluOp), or -1: the general path */
  double (*unary)(double);      /* unary_fast_fn's function, or NULL */
  struct Program *next;
} Program;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
#define BUCKETS 1024
static Program *cache[BUCKETS]; /* chained by hash */

static void *interp_alloc(const Backend *be, size_t nbytes) { return malloc(nbytes ? nbytes : 1); }
static void interp_free(const Backend *be, void *mem) { free(mem); }
static jx_status interp_copy_in(const Backend *be, void *mem, const void *host, size_t n) {
  if (n) memcpy(mem, host, n);
  return JX_OK;
}
static jx_status interp_copy_out(const Backend *be, void *host, const void *mem, size_t n) {
  if (n) memcpy(host, mem, n);
  return JX_OK;
}
static jx_status interp_synchronize(const Backend *be) { return JX_OK; }

/* Appends the nodes below e (post-order) that are not yet listed. */
static bool topo_visit(const AluExp *e, const AluExp ***list, int *n, int *cap) {
  for (int i = 0; i < *n; i++)
    if ((*list)[i] == e) return true;
  for (int s = 0; s < e->nsrc; s++)
    if (!topo_visit(e->src[s], list, n, cap)) return false;
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 32;
    const AluExp **l = realloc(*list, (size_t)*cap * sizeof *l);
    if (!l) return false;
    *list = l;
  }
  (*list)[(*n)++] = e;
  return true;
}

/* Kernels of one arithmetic op on two inputs read at gidx, of the output's dtype
 * (float32, float64, int32, int64): out = in0 op in1, the commonest cached eager op (an
 * add of 16 elements took ~1,100 instructions through the node rows). The op, or -1.
 * The same values as the node rows: float + - * / of two floats rounded once to float
 * is what rounding their double result to float gives (double has more than 2p + 2
 * bits), and integer + - * wrap as the rows' truncation does. */
static int binary_fast_op(const Kernel *k) {
  const AluExp *e = k->exp;
  if (k->has_reduction || k->has_pre || k->nextra || k->post || !e || e->nsrc != 2) return -1;
  jx_dtype d = k->dtype;
  bool flt = d == JX_FLOAT32 || d == JX_FLOAT64, itg = d == JX_INT32 || d == JX_INT64;
  if (!(((e->op == ALU_ADD || e->op == ALU_SUB || e->op == ALU_MUL) && (flt || itg)) || (e->op == ALU_DIV && flt)))
    return -1;
  for (int i = 0; i < 2; i++) {
    const AluExp *x = e->src[i];
    if (x->op != ALU_GLOBAL_INDEX || x->dtype != d || x->arg != i || x->src[0]->op != ALU_SPECIAL ||
        strcmp(x->src[0]->name, "gidx") != 0)
      return -1;
  }
  return e->dtype == d ? (int)e->op : -1;
}

static double neg_(double x) { return -x; }

/* Kernels out = f(in0) of one float op on an input read at gidx, float32 or float64 (an
 * exp of 16 elements through the node rows took most of a cached eager exp): the C
 * function ir/eval.c's eval_float_unary applies for op, or NULL. The same values as the
 * node rows: f of the input widened to double, rounded once to the output's dtype. */
static double (*unary_fast_fn(const Kernel *k))(double) {
  const AluExp *e = k->exp;
  if (k->has_reduction || k->has_pre || k->nextra || k->post || !e || e->nsrc != 1) return NULL;
  jx_dtype d = k->dtype;
  const AluExp *x = e->src[0];
  if ((d != JX_FLOAT32 && d != JX_FLOAT64) || e->dtype != d || x->op != ALU_GLOBAL_INDEX || x->dtype != d ||
      x->arg != 0 || x->src[0]->op != ALU_SPECIAL || strcmp(x->src[0]->name, "gidx") != 0)
    return NULL;
  switch (e->op) {
  case ALU_NEG: return neg_;
  case ALU_ABS: return fabs;
  case ALU_SIN: return sin;
  case ALU_COS: return cos;
  case ALU_TAN: return tan;
  case ALU_TANH: return tanh;
  case ALU_EXP: return exp;
  case ALU_EXP2: return exp2;
  case ALU_EXPM1: return expm1;
  case ALU_LOG: return log;
  case ALU_LOG2: return log2;
  case ALU_LOG1P: return log1p;
  case ALU_SQRT: return sqrt;
  case ALU_ERF: return erf;
  default: return NULL;
  }
}

#define BINARY_LOOP(T, U, n, a, b, o, op)                                                     \
  do {                                                                                        \
    const T *x_ = (const T *)(a), *y_ = (const T *)(b);                                       \
    T *z_ = (T *)(o);                                                                         \
    for (int64_t i_ = 0; i_ < (n); i_++) z_[i_] = (T)((U)x_[i_] op (U)y_[i_]);                \
  } while (0)

/* out = in0 op in1 over n elements of d (binary_fast_op's kernels) */
static void binary_fast(int op, jx_dtype d, int64_t n, const void *a, const void *b, void *out) {
#define BINARY_CASES(T, U)                                  \
  switch (op) {                                             \
  case ALU_ADD: BINARY_LOOP(T, U, n, a, b, out, +); break;  \
  case ALU_SUB: BINARY_LOOP(T, U, n, a, b, out, -); break;  \
  case ALU_MUL: BINARY_LOOP(T, U, n, a, b, out, *); break;  \
  default: BINARY_LOOP(T, U, n, a, b, out, /); break;       \
  }
  switch (d) {
  case JX_FLOAT32: BINARY_CASES(float, float); break;
  case JX_FLOAT64: BINARY_CASES(double, double); break;
  case JX_INT32: BINARY_CASES(int32_t, uint32_t); break;
  default: BINARY_CASES(int64_t, uint64_t); break;
  }
#undef BINARY_CASES
}
#undef BINARY_LOOP

static jx_status interp_prepare(const Backend *be, const Kernel *k, void **exe) {
  if (k->post) { /* (only for backends with Backend.row_group) */
    error_set(JX_ERR_UNSUPPORTED, "interp: a kernel with a group epilogue (Kernel.post): the interpreter computes no groups");
    return JX_ERR_UNSUPPORTED;
  }
  const AluExp *epi = k->has_reduction ? k->reduction.epilogue : NULL;
  uint64_t h = kernel_hash(k);
  Program **bucket = &cache[h % BUCKETS];
  pthread_mutex_lock(&cache_lock);
  for (Program *p = *bucket; p; p = p->next)
    if (p->hash == h && kernel_equal(&p->key, k)) {
      pthread_mutex_unlock(&cache_lock);
      *exe = p;
      return JX_OK;
    }
  Program *p = calloc(1, sizeof *p);
  int cap = 0;
  bool ok = p && topo_visit(k->exp, &p->nodes, &p->nnodes, &cap);
  if (ok && epi) {
    /* Epilogue nodes are evaluated separately, so list them after a marker count. */
    int before = p->nnodes;
    const AluExp **tail = NULL;
    int ntail = 0, tcap = 0;
    ok = topo_visit(epi, &tail, &ntail, &tcap);
    if (ok) {
      const AluExp **all = realloc(p->nodes, (size_t)(before + ntail) * sizeof *all);
      ok = all != NULL;
      if (ok) {
        memcpy(all + before, tail, (size_t)ntail * sizeof *all);
        p->nodes = all;
        p->nepi = ntail;
      }
    }
    free(tail);
  }
  if (!ok) {
    pthread_mutex_unlock(&cache_lock);
    if (p) free(p->nodes);
    free(p);
    error_set(JX_ERR_OOM, "interp: out of memory preparing a kernel");
    return JX_ERR_OOM;
  }
  p->key = *k;
  p->hash = h;
  p->fast = binary_fast_op(k);
  p->unary = unary_fast_fn(k);
  p->next = *bucket;
  *bucket = p;
  pthread_mutex_unlock(&cache_lock);
  *exe = p;
  return JX_OK;
}

/* Evaluation state of one chunk: a value row per node. */
typedef struct Chunk {
  int64_t n;               /* iterations in this chunk */
  const int64_t *gidx;     /* per iteration */
  const int64_t *ridx;     /* per iteration (reductions) */
  const AluValue *acc;     /* per iteration (epilogue) */
  const AluValue *pre;     /* per output (two-phase reductions) */
  void *const *inputs;
  AluValue *rows;          /* nnodes x stride */
  int64_t stride;          /* rows per node: CHUNK, or fewer for a small kernel */
} Chunk;

static int node_slot(const AluExp *const *nodes, int lo, int hi, const AluExp *e) {
  for (int i = lo; i < hi; i++)
    if (nodes[i] == e) return i;
  return -1;
}

/* The commonest element operations in loops of their own, giving what alu_eval_op gives
 * (ir/eval.c): int64 index arithmetic (+, -, * wrapping; / and % by a positive divisor,
 * truncating) and float32/float64 +, -, * (float32 rounded from the exact double
 * result). A cached eager op on a few elements spends most of its time evaluating
 * these one element at a time: a 4x4 matmul's index arithmetic is most of its nodes.
 * False: not one of them (alu_eval_op then takes each element). */
static bool eval_fast(const AluExp *e, const AluValue *const *src, AluValue *out, int64_t n) {
  if (e->nsrc != 2 || e->src[0]->dtype != e->dtype || e->src[1]->dtype != e->dtype) return false;
  const AluValue *a = src[0], *b = src[1];
  if (e->dtype == JX_INT64) {
    switch (e->op) {
    case ALU_ADD: for (int64_t j = 0; j < n; j++) out[j].u = a[j].u + b[j].u; return true;
    case ALU_SUB: for (int64_t j = 0; j < n; j++) out[j].u = a[j].u - b[j].u; return true;
    case ALU_MUL: for (int64_t j = 0; j < n; j++) out[j].u = a[j].u * b[j].u; return true;
    case ALU_DIV:
    case ALU_MOD:
      for (int64_t j = 0; j < n; j++)
        if (b[j].i > 0) out[j].i = e->op == ALU_DIV ? a[j].i / b[j].i : a[j].i % b[j].i;
        else out[j] = alu_eval_op(e->op, e->dtype, e->dtype, (AluValue[]){a[j], b[j]});
      return true;
    default: return false;
    }
  }
  if (e->dtype == JX_FLOAT32) {
    switch (e->op) {
    case ALU_ADD: for (int64_t j = 0; j < n; j++) out[j].f = (float)(a[j].f + b[j].f); return true;
    case ALU_SUB: for (int64_t j = 0; j < n; j++) out[j].f = (float)(a[j].f - b[j].f); return true;
    case ALU_MUL: for (int64_t j = 0; j < n; j++) out[j].f = (float)(a[j].f * b[j].f); return true;
    default: return false;
    }
  }
  if (e->dtype == JX_FLOAT64) {
    switch (e->op) {
    case ALU_ADD: for (int64_t j = 0; j < n; j++) out[j].f = a[j].f + b[j].f; return true;
    case ALU_SUB: for (int64_t j = 0; j < n; j++) out[j].f = a[j].f - b[j].f; return true;
    case ALU_MUL: for (int64_t j = 0; j < n; j++) out[j].f = a[j].f * b[j].f; return true;
    default: return false;
    }
  }
  return false;
}

/* One step of a reduction, acc op v: float32/float64 sums inline (as eval_fast),
 * alu_eval_op otherwise. */
static inline AluValue reduce_step(AluOp op, jx_dtype dtype, AluValue acc, AluValue v) {
  if (op == ALU_ADD && dtype == JX_FLOAT32) return (AluValue){.f = (float)(acc.f + v.f)};
  if (op == ALU_ADD && dtype == JX_FLOAT64) return (AluValue){.f = acc.f + v.f};
  return alu_eval_op(op, dtype, dtype, (AluValue[]){acc, v});
}

/* out[j] = element idx[j].i of buf, as alu_load reads it (the common dtypes in loops of
 * their own: alu_load's switch per element was a tenth of a cached eager add's
 * instructions). */
static void load_n(const void *buf, jx_dtype d, const AluValue *idx, AluValue *out, int64_t n) {
  switch (d) {
  case JX_FLOAT32:
    for (int64_t j = 0; j < n; j++) out[j].f = ((const float *)buf)[idx[j].i];
    return;
  case JX_FLOAT64:
    for (int64_t j = 0; j < n; j++) out[j].f = ((const double *)buf)[idx[j].i];
    return;
  case JX_INT32:
    for (int64_t j = 0; j < n; j++) out[j].i = ((const int32_t *)buf)[idx[j].i];
    return;
  case JX_INT64:
    for (int64_t j = 0; j < n; j++) out[j].i = ((const int64_t *)buf)[idx[j].i];
    return;
  default:
    for (int64_t j = 0; j < n; j++) out[j] = alu_load(buf, d, idx[j].i);
  }
}

/* buf[at + j] = v[j] for j < n, as alu_store writes them. */
static void store_n(void *buf, jx_dtype d, int64_t at, const AluValue *v, int64_t n) {
  switch (d) {
  case JX_FLOAT32:
    for (int64_t j = 0; j < n; j++) ((float *)buf)[at + j] = (float)v[j].f;
    return;
  case JX_FLOAT64:
    for (int64_t j = 0; j < n; j++) ((double *)buf)[at + j] = v[j].f;
    return;
  case JX_INT32:
    for (int64_t j = 0; j < n; j++) ((int32_t *)buf)[at + j] = (int32_t)v[j].i;
    return;
  case JX_INT64:
    for (int64_t j = 0; j < n; j++) ((int64_t *)buf)[at + j] = v[j].i;
    return;
  default:
    for (int64_t j = 0; j < n; j++) alu_store(buf, d, at + j, v[j]);
  }
}

/* Evaluates nodes[lo..hi) over the chunk. Sources of a node precede it in the list. */
static void eval_nodes(const AluExp *const *nodes, int lo, int hi, Chunk *c) {
  for (int i = lo; i < hi; i++) {
    const AluExp *e = nodes[i];
    AluValue *out = c->rows + (int64_t)i * c->stride;
    const AluValue *src[4] = {0};
    for (int s = 0; s < e->nsrc; s++)
      src[s] = c->rows + (int64_t)node_slot(nodes, lo, i, e->src[s]) * c->stride;
    switch (e->op) {
    case ALU_CONST:
      for (int64_t j = 0; j < c->n; j++) out[j] = e->value;
      break;
    case ALU_SPECIAL: {
      const int64_t *idx = strcmp(e->name, "ridx") == 0 ? c->ridx : c->gidx;
      for (int64_t j = 0; j < c->n; j++) out[j].i = idx[j];
      break;
    }
    case ALU_VARIABLE: /* the accumulator, or a two-phase reduction's first result */
      if (strcmp(e->name, "pre") == 0)
        for (int64_t j = 0; j < c->n; j++) out[j] = c->pre[c->gidx[j]];
      else
        for (int64_t j = 0; j < c->n; j++) out[j] = c->acc[j];
      break;
    case ALU_GLOBAL_INDEX:
      load_n(c->inputs[e->arg], e->dtype, src[0], out, c->n);
      break;
    default: {
      if (eval_fast(e, src, out, c->n)) break;
      jx_dtype sd = e->nsrc ? e->src[e->op == ALU_WHERE ? 1 : 0]->dtype : e->dtype;
      if (e->op == ALU_CAST || e->op == ALU_BITCAST) sd = e->src[0]->dtype;
      for (int64_t j = 0; j < c->n; j++) {
        AluValue args[4];
        for (int s = 0; s < e->nsrc; s++) args[s] = src[s][j];
        out[j] = alu_eval_op(e->op, e->dtype, sd, args);
      }
    }
    }
  }
}

static jx_status interp_run(Program *p, const Kernel *k, void *const *inputs, void *out,
                            const AluValue *pre);

/* Runs one output of a kernel (an elementwise kernel's extra outputs are evaluated as
 * kernels of their own: the oracle computes each output independently; so is a
 * two-phase reduction's first phase). */
static jx_status interp_dispatch_one(void *exe, const Kernel *k, void *const *inputs, void *out);

static jx_status interp_dispatch(const Backend *be, void *exe, const Kernel *k, void *const *inputs,
                                 void *const *outs) {
  jx_status s = interp_dispatch_one(exe, k, inputs, outs[0]);
  for (int o = 0; o < k->nextra && s == JX_OK; o++) {
    Kernel one = *k; /* an elementwise output, or a reduction's further epilogue */
    one.nextra = 0;
    if (k->has_reduction) {
      one.reduction.epilogue = k->extra[o];
    } else {
      one.exp = k->extra[o];
    }
    one.dtype = k->extra_dtypes[o];
    void *ex = NULL;
    s = interp_prepare(be, &one, &ex);
    if (s == JX_OK) s = interp_dispatch_one(ex, &one, inputs, outs[1 + o]);
  }
  return s;
}

static jx_status interp_dispatch_one(void *exe, const Kernel *k, void *const *inputs, void *out) {
  Program *p = exe;
  if (p->fast >= 0) {
    binary_fast(p->fast, k->dtype, k->size, inputs[0], inputs[1], out);
    return JX_OK;
  }
  if (p->unary && k->dtype == JX_FLOAT32) {
    const float *x = inputs[0];
    float *z = out;
    for (int64_t i = 0; i < k->size; i++) z[i] = (float)p->unary(x[i]);
    return JX_OK;
  }
  if (p->unary) {
    const double *x = inputs[0];
    double *z = out;
    for (int64_t i = 0; i < k->size; i++) z[i] = p->unary(x[i]);
    return JX_OK;
  }
  AluValue *pre = NULL;
  if (k->has_pre) { /* the first phase: a reduction of its own, into pre[gidx] */
    Kernel kp = *k;
    kp.has_pre = false;
    kp.nextra = 0;
    kp.exp = k->pre_exp;
    kp.reduction = k->pre;
    kp.reduction.epilogue = NULL;
    kp.dtype = k->pre.dtype;
    size_t item = jx_dtype_itemsize(kp.dtype);
    void *buf = malloc((size_t)(k->size ? k->size : 1) * item), *ex = NULL;
    pre = malloc((size_t)(k->size ? k->size : 1) * sizeof *pre);
    jx_status s = buf && pre ? interp_prepare(&backend_interp, &kp, &ex) : JX_ERR_OOM;
    if (s == JX_OK) s = interp_dispatch_one(ex, &kp, inputs, buf);
    for (int64_t g = 0; s == JX_OK && g < k->size; g++) pre[g] = alu_load(buf, kp.dtype, g);
    free(buf);
    if (s != JX_OK) {
      free(pre);
      if (s == JX_ERR_OOM) error_set(JX_ERR_OOM, "interp: out of memory running a kernel");
      return s;
    }
  }
  jx_status st = interp_run(p, k, inputs, out, pre);
  free(pre);
  return st;
}

static jx_status interp_run(Program *p, const Kernel *k, void *const *inputs, void *out,
                            const AluValue *pre) {
  int total = p->nnodes + p->nepi;
  int64_t R = k->has_reduction ? k->reduction.size : 1;
  /* rows for a chunk of iterations: CHUNK, or as many as a small kernel has (on the
   * stack when they fit: a cached eager op on a few elements spends no time in malloc) */
  int64_t iters = k->has_reduction ? k->size * R : k->size;
  int64_t stride = iters < k->size ? k->size : iters;
  if (stride > CHUNK) stride = CHUNK;
  if (stride < 1) stride = 1;
  AluValue rows_small[1024], acc_small[64];
  int64_t gidx_small[64], ridx_small[64];
  bool small = (int64_t)total * stride <= 1024 && stride <= 64 && k->size <= 64;
  AluValue *rows = small ? rows_small : malloc((size_t)total * (size_t)stride * sizeof *rows);
  int64_t *gidx = small ? gidx_small : malloc((size_t)stride * sizeof *gidx);
  int64_t *ridx = small ? ridx_small : malloc((size_t)stride * sizeof *ridx);
  AluValue *acc = NULL;
  if (k->has_reduction) acc = small ? acc_small : malloc((size_t)(k->size ? k->size : 1) * sizeof *acc);
  if (!rows || !gidx || !ridx || (k->has_reduction && !acc)) {
    if (!small) free(rows), free(gidx), free(ridx), free(acc);
    error_set(JX_ERR_OOM, "interp: out of memory running a kernel of %lld elements",
              (long long)k->size);
    return JX_ERR_OOM;
  }
  Chunk c = {.gidx = gidx, .ridx = ridx, .inputs = inputs, .rows = rows, .pre = pre, .stride = stride};
  const AluValue *result = rows + (int64_t)(p->nnodes - 1) * stride;
  if (!k->has_reduction) {
    for (int64_t g0 = 0; g0 < k->size; g0 += stride) {
      c.n = k->size - g0 < stride ? k->size - g0 : stride;
      for (int64_t j = 0; j < c.n; j++) gidx[j] = g0 + j, ridx[j] = 0;
      eval_nodes(p->nodes, 0, p->nnodes, &c);
      store_n(out, k->dtype, g0, result, c.n);
    }
  } else {
    /* Iterate over (gidx, ridx) pairs in order, accumulating left to right -- or, in
     * lane order (ir/alu.h), into the lanes of the current output, combined when the
     * pairs move on to the next output. */
    const Reduction *r = &k->reduction;
    for (int64_t g = 0; g < k->size; g++) acc[g] = r->identity;
    bool in_lanes = alu_reduce_in_lanes(r->op, r->dtype, R);
    AluValue lane[ALU_REDUCE_LANES];
    int64_t cur = -1; /* the output whose lanes are open */
    int64_t pairs = k->size * R; /* the caller checked this fits */
    for (int64_t p0 = 0; p0 < pairs; p0 += stride) {
      c.n = pairs - p0 < stride ? pairs - p0 : stride;
      for (int64_t j = 0; j < c.n; j++) gidx[j] = (p0 + j) / R, ridx[j] = (p0 + j) % R;
      eval_nodes(p->nodes, 0, p->nnodes, &c);
      for (int64_t j = 0; j < c.n; j++) {
        if (in_lanes) {
          if (gidx[j] != cur) {
            if (cur >= 0) acc[cur] = alu_reduce_combine_lanes(r->op, r->dtype, lane);
            cur = gidx[j];
            for (int l = 0; l < ALU_REDUCE_LANES; l++) lane[l] = r->identity;
          }
          AluValue *a = &lane[ridx[j] % ALU_REDUCE_LANES];
          *a = reduce_step(r->op, r->dtype, *a, result[j]);
          continue;
        }
        acc[gidx[j]] = reduce_step(r->op, r->dtype, acc[gidx[j]], result[j]);
      }
    }
    if (cur >= 0) acc[cur] = alu_reduce_combine_lanes(r->op, r->dtype, lane);
    if (!p->nepi) {
      store_n(out, k->dtype, 0, acc, k->size);
    } else {
      const AluValue *epi = rows + (int64_t)(total - 1) * stride;
      for (int64_t g0 = 0; g0 < k->size; g0 += stride) {
        c.n = k->size - g0 < stride ? k->size - g0 : stride;
        for (int64_t j = 0; j < c.n; j++) gidx[j] = g0 + j, ridx[j] = 0;
        c.acc = acc + g0;
        eval_nodes(p->nodes, p->nnodes, total, &c);
        store_n(out, k->dtype, g0, epi, c.n);
      }
    }
  }
  if (!small) free(rows), free(gidx), free(ridx), free(acc);
  return JX_OK;
}

const Backend backend_interp = {
    .name = "interp",
    .alloc = interp_alloc,
    .free = interp_free,
    .copy_in = interp_copy_in,
    .copy_out = interp_copy_out,
    .prepare = interp_prepare,
    .dispatch = interp_dispatch,
    .host_memory = true,
    .synchronize = interp_synchronize,
};
