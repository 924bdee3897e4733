/* cuda.c -- the CUDA C framing of kernels (render_cuda) for the cuda backend, on the
 * portable emitter (emit.h). A kernel is one __global__ function whose launch shape
 * follows its plan (render_cuda_plan, shared with the backend that launches it):
 *   elementwise   grid-stride loop over the outputs; with 16-byte vectors (uint4 loads
 *                 and stores, 4 elements of 4 bytes a thread) where every output and
 *                 the contiguous inputs are 4-byte and the size divides;
 *   thread rows   one thread per output, ridx in order (short reductions, and
 *                 reductions whose neighbouring outputs are neighbours in memory:
 *                 column sums read coalesced across threads); float sums in the
 *                 interpreter's 16 lanes, so they match it bit for bit;
 *   warp rows     one warp per output (reductions of up to 512): lanes stride over
 *                 ridx, then a butterfly of shuffles;
 *   block rows    one block of 256 per output: warps, then shared memory; a full
 *                 reduction (few outputs, long rows) splits each row over gridDim.y
 *                 blocks that leave partials in scratch, the last block to finish
 *                 (an atomic ticket) combining them in order -- two stages, one launch;
 *   columns      column reductions of fewer outputs: 32 neighbouring outputs a block,
 *                one a lane (coalesced), its 8 warps over the rows of the block's
 *                chunk, the chunks over gridDim.y blocks combined as split rows are.
 * Two-phase kernels (has_pre) reduce the first phase the same way and broadcast it.
 * Complex kernels (prelude.h's jx_c64/jx_c128 structs) take the same plans: 8 or 16
 * bytes an element, their loads are never 16-byte vectors; their warp shuffles and the
 * split reduction's volatile reads of partials go part by part (prelude_cuda.h).
 * Tree orders round floats differently from the interpreter: docs/kernels.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "render/cuda.h"
#include "render/cuda_group.h"
#include "render/emit.h"

static bool cuda_frame(const RenderLang *lang, const Kernel *k, Buf *body, int *nlocals);

/* Float functions evaluated in double and rounded once ($T is float for float32/16 and
 * bfloat16, double for float64): CUDA's float versions are 1-4 ulp off (sinf 2, erff 2,
 * powf 4 ...), its double ones within 1-2 ulp of double, so the rounded result is the
 * correctly rounded float nearly always -- what the cpu's libm gives. FP64 is cheap on
 * the GPUs this targets (H100/H200: half the FP32 rate). exp, tanh, sqrt stay in float
 * (2, 2, 0 ulp), where bandwidth-bound chains spend their arithmetic. */
#define D1(op, fn) {ALU_##op, "(($T)" fn "((double)$0))", NULL}
static const RenderOverride cuda_overrides[] = {
    D1(SIN, "sin"), D1(COS, "cos"), D1(TAN, "tan"), D1(ASIN, "asin"), D1(ACOS, "acos"),
    D1(ATAN, "atan"), D1(SINH, "sinh"), D1(COSH, "cosh"), D1(ASINH, "asinh"), D1(ACOSH, "acosh"),
    D1(ATANH, "atanh"), D1(EXP2, "exp2"), D1(EXPM1, "expm1"), D1(LOG, "log"), D1(LOG2, "log2"),
    D1(LOG1P, "log1p"), D1(CBRT, "cbrt"), D1(ERF, "erf"), D1(ERFC, "erfc"),
    {ALU_TANH, "tanh$f($0)", NULL}, /* CUDA's (the cpu prelude has its own jx_tanh_f32) */
    {ALU_POW, "(($T)pow((double)$0, (double)$1))", NULL},
    /* float + - * that the compiler never contracts into a fused multiply-add: kernels
     * round as the interpreter and the cpu backend (-ffp-contract=off) do, while CUDA's
     * own functions keep their FMAs */
    {ALU_ADD, "jx_add_rn($0, $1)", NULL},
    {ALU_SUB, "jx_sub_rn($0, $1)", NULL},
    {ALU_MUL, "jx_mul_rn($0, $1)", NULL},
    {ALU_ATAN2, "(($T)atan2((double)$0, (double)$1))", NULL},
    {0, NULL, NULL},
};
#undef D1

/* Generated at build time from prelude_cuda.h + prelude.h (CMakeLists.txt). */
extern const char render_prelude_cuda_text[];
extern const size_t render_prelude_cuda_text_len;

const RenderLang render_cuda = {
    .name = "cuda",
    .fn_prefix = "extern \"C\" __global__ __launch_bounds__(256) ",
    .params = "(const JxIn in, const JxOut out, char *__restrict__ scratch)",
    .restrict_kw = "__restrict__",
    .overrides = cuda_overrides,
    .frame = cuda_frame,
    .global_index = "((int64_t)blockIdx.x * blockDim.x + threadIdx.x)",
    .shared_fmt = "__shared__ $T $N[$K];",
    .barrier = "__syncthreads();",
    .warp_shuffle_fmt = "__shfl_xor_sync(0xffffffffu, $0, $1)",
    .warp_size = 32,
    .div_const_f32 = "jx_div_c_f32($0, $1, 1.0f / $1)",
    .prelude = render_prelude_cuda_text,
    .prelude_len = &render_prelude_cuda_text_len,
};

/* ------------------------------------------------------------------ plans */

/* The stride of `var` in the first load of e that depends on it (the other loop index
 * `other` fixed at other_at): 1 when consecutive values of var read consecutive
 * elements. Found by substituting constants (the constructors fold them), not by the
 * simplifier. 0 if no load depends on var or the difference is not a constant. */
static int64_t load_stride(const AluExp *e, const char *var, const char *other, int64_t other_at) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  int64_t stride = 0;
  const AluExp *oc = alu_const_int(JX_INT64, other_at);
  for (int64_t i = 0; order && i < n; i++) {
    const AluExp *x = order[i];
    if (x->op != ALU_GLOBAL_INDEX) continue;
    const AluExp *idx = alu_substitute(x->src[0], other, oc);
    const AluExp *a = alu_substitute(idx, var, alu_const_int(JX_INT64, 1));
    const AluExp *b = alu_substitute(idx, var, alu_const_int(JX_INT64, 2));
    if (!a || !b || a == b) continue; /* does not depend on var */
    stride = a->op == ALU_CONST && b->op == ALU_CONST ? b->value.i - a->value.i : 0;
    break;
  }
  free(order);
  return stride;
}

/* Whether e loads input `arg` only at exactly gidx (a contiguous stream). */
static bool loads_only_at_gidx(const AluExp *e, int64_t arg, const AluExp *gidx, bool *any) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  bool ok = order != NULL;
  for (int64_t i = 0; order && i < n; i++) {
    const AluExp *x = order[i];
    if (x->op == ALU_GLOBAL_INDEX && x->arg == arg) {
      *any = true;
      if (x->src[0] != gidx) ok = false;
    }
  }
  free(order);
  return ok;
}

/* Whether e is a provable multiple of 4 (an int64 index: constants, products with one,
 * sums of them). */
static bool multiple_of_4(const AluExp *e) {
  switch (e->op) {
  case ALU_CONST: return e->value.i % 4 == 0;
  case ALU_MUL: return multiple_of_4(e->src[0]) || multiple_of_4(e->src[1]);
  case ALU_ADD: return multiple_of_4(e->src[0]) && multiple_of_4(e->src[1]);
  default: return false;
  }
}

/* How an index of an elementwise kernel varies over a vector's 4 outputs gidx = 4q + j
 * (j = 0..3): the same for all four (UNIFORM), base + j with the base a multiple of 4
 * (CONTIG), or otherwise. Exact for nonnegative operands: with 4 | d, (4q + j) / d =
 * 4q / d and (4q + j) % d = 4q % d + j. */
typedef enum { IDX_OTHER, IDX_UNIFORM, IDX_CONTIG } IdxClass;
static IdxClass idx_class(const AluExp *e, const AluExp *gidx) {
  if (e == gidx) return IDX_CONTIG;
  if (e->op == ALU_CONST) return IDX_UNIFORM;
  if (e->op == ALU_SPECIAL || e->op == ALU_VARIABLE || e->nsrc == 0) return IDX_OTHER;
  if (e->op == ALU_GLOBAL_INDEX) return idx_class(e->src[0], gidx) == IDX_UNIFORM ? IDX_UNIFORM : IDX_OTHER;
  IdxClass c[4];
  bool uniform = true;
  for (int i = 0; i < e->nsrc; i++) uniform &= (c[i] = idx_class(e->src[i], gidx)) == IDX_UNIFORM;
  if (uniform) return IDX_UNIFORM;
  if (e->op == ALU_ADD && c[0] != c[1] && c[0] != IDX_OTHER && c[1] != IDX_OTHER)
    return multiple_of_4(e->src[c[0] == IDX_UNIFORM ? 0 : 1]) ? IDX_CONTIG : IDX_OTHER;
  const AluExp *d = e->nsrc == 2 ? e->src[1] : NULL;
  if ((e->op == ALU_DIV || e->op == ALU_MOD) && c[0] == IDX_CONTIG && e->src[0]->lo >= 0 && d->op == ALU_CONST &&
      d->value.i > 0 && d->value.i % 4 == 0)
    return e->op == ALU_DIV ? IDX_UNIFORM : IDX_CONTIG;
  return IDX_OTHER;
}

/* The loads of a vectorized elementwise kernel's outputs other than its 16-byte vector
 * inputs at gidx (`vec`): distinct nodes in nodes[0..*n) (at most cap) and how each is
 * read a vector: once for its 4 outputs (UNIFORM: a bias, g[m, k] of a product), one
 * 16-byte load (CONTIG, 4-byte inputs: w[k, n..n+3]), or one load an output (OTHER). */
static bool group_loads(const Kernel *k, uint64_t vec, const AluExp **nodes, IdxClass *cls, int *n, int cap) {
  const AluExp *gidx = alu_special("gidx", k->size);
  *n = 0;
  for (int o = 0; o <= k->nextra; o++) {
    int64_t m;
    const AluExp **order = alu_toposort(o ? k->extra[o - 1] : k->exp, &m);
    if (!order) return false;
    for (int64_t i = 0; i < m; i++) {
      const AluExp *x = order[i];
      if (x->op != ALU_GLOBAL_INDEX || (x->arg < 64 && (vec >> x->arg & 1) && x->src[0] == gidx)) continue;
      bool seen = false;
      for (int j = 0; j < *n && !seen; j++) seen = nodes[j] == x;
      if (seen) continue;
      if (*n == cap) {
        free(order);
        return false;
      }
      IdxClass c = idx_class(x->src[0], gidx);
      if (c == IDX_CONTIG && jx_dtype_itemsize(k->arg_dtypes[x->arg]) != 4) c = IDX_OTHER;
      nodes[*n] = x, cls[(*n)++] = c;
    }
    free(order);
  }
  return true;
}

/* Whether every load of e that depends on ridx reads a 4-byte input at base + ridx, base
 * independent of ridx and a multiple of 4 elements (so 16-byte vectors along the row stay
 * aligned), one base an input across every call: the row gidx * R + ridx of a reduction,
 * or the (gidx / N) * K + ridx of a product's rows (trace/lower.c, lower_dot_rows). Their
 * inputs' bits are added to *mask and their bases set in bases[arg]. `later`: also an
 * index (b + ridx) + c, where b + ridx + c simplifies to it. */
bool cuda_row_loads_based_at(const AluExp *e, const Kernel *k, uint64_t *mask, const AluExp **bases, bool later) {
  int64_t n;
  const AluExp *ridx = alu_special("ridx", k->reduction.size), *zero = alu_const_int(JX_INT64, 0);
  const AluExp *one = alu_const_int(JX_INT64, 1);
  const AluExp **order = alu_toposort(e, &n);
  bool ok = order != NULL;
  for (int64_t i = 0; ok && i < n; i++) {
    const AluExp *x = order[i], *idx = x->src[0], *base = NULL;
    if (x->op != ALU_GLOBAL_INDEX || alu_substitute(idx, "ridx", one) == alu_substitute(idx, "ridx", zero)) continue;
    if (idx == ridx) base = zero;
    else if (idx->op == ALU_ADD && (idx->src[0] == ridx || idx->src[1] == ridx))
      base = idx->src[idx->src[0] == ridx ? 1 : 0];
    else if (later) { /* a constant after ridx, (b + ridx) + c: the simplifier's order for
                       * a grouped warp row's later rows (group_classes), base b + c */
      const AluExp *b0 = alu_simplify(alu_substitute(idx, "ridx", zero));
      if (b0 && alu_simplify(alu_binary(ALU_ADD, b0, ridx)) == idx) base = b0;
    }
    ok = base && alu_substitute(base, "ridx", one) == base && multiple_of_4(base) && x->arg < 64 &&
         jx_dtype_itemsize(k->arg_dtypes[x->arg]) == 4 && (!(*mask >> x->arg & 1) || bases[x->arg] == base);
    if (ok) *mask |= 1ull << x->arg, bases[x->arg] = base;
  }
  free(order);
  return ok;
}

bool cuda_row_loads_based(const AluExp *e, const Kernel *k, uint64_t *mask, const AluExp **bases) {
  return cuda_row_loads_based_at(e, k, mask, bases, false);
}

/* Whether every load of e that depends on ridx reads a 4-byte input at the row's
 * contiguous index (gidx * R + ridx as lowering builds it, or ridx alone for one row);
 * those inputs' bits are added to *mask. */
static bool row_loads_contiguous(const AluExp *e, const Kernel *k, uint64_t *mask) {
  int64_t R = k->reduction.size, N = k->size, n;
  const AluExp *ridx = alu_special("ridx", R);
  const AluExp *row = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_special("gidx", N), alu_const_int(JX_INT64, R)), ridx);
  const AluExp *row_s = alu_simplify(row); /* as jit/lower.c's fuse_row_output leaves it */
  const AluExp *one = alu_const_int(JX_INT64, 1), *two = alu_const_int(JX_INT64, 2);
  const AluExp **order = alu_toposort(e, &n);
  bool ok = order != NULL;
  for (int64_t i = 0; ok && i < n; i++) {
    const AluExp *x = order[i];
    if (x->op != ALU_GLOBAL_INDEX) continue;
    if (alu_substitute(x->src[0], "ridx", one) == alu_substitute(x->src[0], "ridx", two)) continue;
    ok = (x->src[0] == row || x->src[0] == row_s || (N == 1 && x->src[0] == ridx)) && x->arg < 64 &&
         jx_dtype_itemsize(k->arg_dtypes[x->arg]) == 4;
    if (ok) *mask |= 1ull << x->arg;
  }
  free(order);
  return ok;
}

/* 16-byte vectors a thread of a vectorized elementwise kernel: 4 (the 2^28 chain of
 * bench/gpu, jaxc's kernel on an H200: 4.137 TB/s against 4.036 with 3 and 3.927 with 2;
 * 3.53 with 1 and 3.77 with a grid-stride loop in bench/gpu/ceilings.cu): the chain's
 * transcendentals keep the issue slots busy, and more loads of a thread in flight hide
 * the memory latency between them. JAXC_CUDA_EW_V=1..4 tries others. */
/* Whether e0 and e1 read a same element along the row: a load depending on ridx found
 * in both (nodes are hash-consed, so the same node). */
static bool shares_row_load(const AluExp *e0, const AluExp *e1) {
  int64_t n0, n1;
  const AluExp **a = alu_toposort(e0, &n0), **c = a ? alu_toposort(e1, &n1) : NULL;
  const AluExp *zero = alu_const_int(JX_INT64, 0), *one = alu_const_int(JX_INT64, 1);
  bool found = false;
  for (int64_t i = 0; c && i < n0 && !found; i++) {
    const AluExp *x = a[i];
    if (x->op != ALU_GLOBAL_INDEX || alu_substitute(x->src[0], "ridx", one) == alu_substitute(x->src[0], "ridx", zero))
      continue;
    for (int64_t q = 0; q < n1 && !found; q++) found = c[q] == x;
  }
  free((void *)a), free((void *)c);
  return found;
}

/* Grouped columns: where G consecutive outputs (gidx = G w + j) read a row element in
 * common and consecutive w consecutive elements -- a product x^T @ y with x (K, M) rows
 * (trace/lower.c, lower_dot_cols: out[m, n] = sum_k x[k, m] y[k, n]) -- a lane computes
 * the G outputs of its w, x[k, w] read once for them and coalesced across the warp's
 * lanes, y[k, j] the same for every lane. The largest such G <= RENDER_CUDA_ROW_GROUP_MAX
 * dividing the outputs with fewer than 16384 groups (a block for every 32); 1 if none.
 * Accumulators of at most 8 bytes (the shared memory of 8 x 32 G of them). Off by
 * default: JAXC_CUDA_COL_GROUP=1 turns it on (with JAXC_DOT_COLS=1, the MLP's dW2 =
 * relu(x W1 + b1)^T @ g as one such kernel; on an H100, 2026-12-06, the step took
 * 0.0319 / 0.0990 ms at batch 128 / 4096 so against 0.0331 / 0.0980 without). */
static int column_group(const Kernel *k) {
  static int on = -1;
  int most = config_env_setting(&on, "JAXC_CUDA_COL_GROUP", 0, 0, 1) ? cuda_row_group_cap() : 1;
  if (jx_dtype_itemsize(k->reduction.dtype) > 8) return 1;
  for (int G = most; G >= 2; G--) {
    if (k->size % G || k->size / G >= 16384) continue;
    const AluExp *e0 = cuda_grouped_exp(k->exp, k->size, G, 0), *e1 = e0 ? cuda_grouped_exp(k->exp, k->size, G, G - 1) : NULL;
    if (e1 && shares_row_load(e0, e1) && load_stride(e0, "jx_w", "ridx", 1) == 1) return G;
  }
  return 1;
}

static int vec_per_thread(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_EW_V", 4, 1, 4);
}

/* ---------------------------------------------------------- transposed tiles */

/* The flat index load x reads for output g, or -1 where it is no constant (an index read
 * from memory or computed from a uniform value) */
static int64_t load_index_at(const AluExp *x, int64_t g) {
  const AluExp *c = alu_substitute(x->src[0], "gidx", alu_const_int(JX_INT64, g));
  c = c ? alu_simplify(c) : NULL;
  return c && c->op == ALU_CONST ? c->value.i : -1;
}

/* Whether load x reads the outputs' [A, B] view (A = N / B) transposed: contiguous along
 * A, at least 32 elements apart along B, at a few probed outputs within a 32 x 32 tile */
static bool load_transposed(const AluExp *x, int64_t N, int64_t B) {
  int64_t A = N / B;
  static const int64_t probe[][2] = {{0, 0}, {1, 5}, {17, 30}, {30, 1}};
  for (int q = 0; q < 4; q++) {
    int64_t a = probe[q][0] % A, b = probe[q][1] % B;
    if (a + 1 >= A || b + 1 >= B) return false;
    int64_t i0 = load_index_at(x, a * B + b), ia = load_index_at(x, (a + 1) * B + b), ib = load_index_at(x, a * B + b + 1);
    if (i0 < 0 || ia < 0 || ib < 0 || ia != i0 + 1 || (ib > i0 ? ib - i0 : i0 - ib) < 32) return false;
  }
  return true;
}

/* The loads of k (its outputs' expressions) that read the [A, B] view transposed, up to
 * cap (load_transposed; nodes are hash-consed, each once); their count. */
static int transposed_loads(const Kernel *k, int64_t B, const AluExp **loads, int cap) {
  int n = 0;
  for (int o = 0; o <= k->nextra; o++) {
    int64_t m;
    const AluExp **order = alu_toposort(o ? k->extra[o - 1] : k->exp, &m);
    for (int64_t i = 0; order && i < m; i++) {
      const AluExp *x = order[i];
      if (x->op != ALU_GLOBAL_INDEX || dtype_is_complex(x->dtype) || !load_transposed(x, k->size, B)) continue;
      bool seen = false;
      for (int j = 0; j < n; j++) seen |= loads[j] == x;
      if (!seen && n < cap) loads[n++] = x;
      else if (!seen) n = cap + 1;
    }
    free(order);
  }
  return n;
}

/* JAXC_CUDA_TILE=0: no transposed tiles (measuring) */
static bool tiles_on(void) {
  static int v = -1;
  return config_env_on(&v, "JAXC_CUDA_TILE");
}

/* B where an elementwise kernel reads loads transposed from its outputs' [A, B] view --
 * a materialized transpose x.T, the batched ones of attention heads -- else 0. Read
 * through each thread's output, such a load is 4 or 8 bytes from each of 32 sectors a
 * warp (a 12.8 MB transpose of the MLP's x took longer than its 19 us GEMM on an H100);
 * a block's 32 x 32 tile instead reads them along A into shared memory and writes the
 * outputs along B, both coalesced. B is a divisor the index takes of gidx (gidx / B,
 * gidx % B), 32 or more, with A = N / B 32 or more; at most RENDER_CUDA_TILE_LOADS such
 * loads. */
static int64_t transpose_tile(const Kernel *k) {
  if (!tiles_on() || k->has_reduction || k->size < 1024) return 0;
  int64_t best = 0;
  for (int o = 0; o <= k->nextra && !best; o++) {
    int64_t m;
    const AluExp **order = alu_toposort(o ? k->extra[o - 1] : k->exp, &m);
    for (int64_t i = 0; order && i < m && !best; i++) {
      const AluExp *x = order[i];
      if ((x->op != ALU_DIV && x->op != ALU_MOD) || x->src[0]->op != ALU_SPECIAL || strcmp(x->src[0]->name, "gidx") != 0 ||
          x->src[1]->op != ALU_CONST)
        continue;
      int64_t B = x->src[1]->value.i;
      const AluExp *loads[RENDER_CUDA_TILE_LOADS];
      if (B >= 32 && k->size % B == 0 && k->size / B >= 32) {
        int n = transposed_loads(k, B, loads, RENDER_CUDA_TILE_LOADS);
        if (n >= 1 && n <= RENDER_CUDA_TILE_LOADS) best = B;
      }
    }
    free(order);
  }
  return best;
}

/* JAXC_CUDA_EW_FILL=n: the blocks a vectorized elementwise kernel's grid keeps at least
 * by taking fewer vectors a thread (RENDER_CUDA_EW_FILL_BLOCKS; 0: none, measuring) */
/* Cache hints of vectorized elementwise kernels' streams (JAXC_CUDA_EW_HINT, measuring):
 * bit 0 loads with ld.global.cs (__ldcs, evict-first) instead of ld.global.nc (__ldg),
 * bit 1 stores with st.global.cs (__stcs); default 0, plain. */
static int ew_hint(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_EW_HINT", 0, 0, 3);
}

static int ew_fill_blocks(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_EW_FILL", RENDER_CUDA_EW_FILL_BLOCKS, 0, 1 << 20);
}

/* Rows of at most this many elements take a thread each (CUDA_THREAD_ROW; longer ones a
 * warp or a block). JAXC_CUDA_THREAD_ROW_MAX=1..64 tries others (measuring): the MLP
 * step's loss rows of 10 run a warp a row, 22 of its 32 lanes idle. */
#define THREAD_ROW_MAX_DEFAULT 8
static int thread_row_max(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_THREAD_ROW_MAX", THREAD_ROW_MAX_DEFAULT, 1, 64);
}

RenderCudaPlan render_cuda_plan(const Kernel *k) {
  RenderCudaPlan p = {.kind = CUDA_ELEMENTWISE, .threads = 256, .vec = 1, .vec_inputs = 0, .group = 1, .rows = 1};
  if (!k->has_reduction) {
    if ((p.tile_b = transpose_tile(k)) != 0) return p;
    /* 16-byte vectors: every output 4 bytes wide, size a multiple of 4, and at least one
     * 4-byte input read exactly at gidx (those become uint4 loads). */
    bool outs4 = jx_dtype_itemsize(k->dtype) == 4 && k->size % 4 == 0 && k->size >= 1024;
    for (int o = 0; o < k->nextra; o++) outs4 &= jx_dtype_itemsize(k->extra_dtypes[o]) == 4;
    if (!outs4) return p;
    const AluExp *gidx = alu_special("gidx", k->size);
    for (int i = 0; i < k->nargs && i < 64; i++) {
      if (jx_dtype_itemsize(k->arg_dtypes[i]) != 4) continue;
      bool any = false, ok = loads_only_at_gidx(k->exp, i, gidx, &any);
      for (int o = 0; o < k->nextra; o++) ok &= loads_only_at_gidx(k->extra[o], i, gidx, &any);
      if (ok && any) p.vec_inputs |= 1ull << i;
    }
    /* Other loads are read once a vector where they are the same for its 4 outputs or 4
     * contiguous elements (group_loads); any other is read 4 times, 16 bytes apart across
     * the warp: 4 L1 wavefronts where one thread an output takes 1. A few such (a strided
     * read) cost less than the 16-byte vectors gain; many do not: the MLP's relu backward
     * fused with its 10-term g @ W2^T (22 loads an output) took 18.5 us with each read 4
     * times, 11.6 us scalar, on an H100 (ncu). At most 3 such loads a vectorized kernel. */
    const AluExp *nodes[RENDER_CUDA_EW_MAX_GROUP_LOADS];
    IdxClass cls[RENDER_CUDA_EW_MAX_GROUP_LOADS];
    int nl = 0, nother = 0;
    bool grouped = p.vec_inputs && group_loads(k, p.vec_inputs, nodes, cls, &nl, RENDER_CUDA_EW_MAX_GROUP_LOADS);
    for (int i = 0; i < nl; i++) nother += cls[i] == IDX_OTHER;
    if (grouped && nother <= RENDER_CUDA_EW_MAX_SCALAR_LOADS) p.vec = 4, p.nvec = vec_per_thread();
    else p.vec_inputs = 0;
    /* many loads a vector already keep enough in flight; several vectors of them a
     * thread would hold hundreds of registers (the relu backward's 10 + 10 of g and w) */
    if (p.vec == 4 && nl > 8) p.nvec = 1;
    /* a wave of resident blocks at least (132 multiprocessors x 8 blocks of 256 on an
     * H100/H200): 1.6M outputs as 392 blocks of 4 vectors a thread, 3 blocks a
     * multiprocessor, left the Fashion-MNIST CNN's pooling gradient latency-bound (16 us,
     * 30% of the memory bandwidth) */
    while (p.vec == 4 && p.nvec > 1 && k->size / 4 / (p.threads * p.nvec) < ew_fill_blocks()) p.nvec /= 2;
    return p;
  }
  const Reduction *r = &k->reduction;
  int64_t R = r->size, N = k->size;
  int64_t rs = load_stride(k->exp, "ridx", "gidx", N > 2 ? 1 : 0);
  int64_t gs = load_stride(k->exp, "gidx", "ridx", R > 2 ? 1 : 0);
  bool row_contig = rs == 1 || (rs == 0 && gs != 1);
  /* a thread per output reads coalesced across outputs (column sums), but needs enough
   * outputs to fill the GPU; otherwise warps or blocks over each row, uncoalesced */
  if (R <= thread_row_max() || (!row_contig && gs == 1 && N >= 16384)) p.kind = CUDA_THREAD_ROW;
  /* fewer column outputs: 32 a block, coalesced, the rows over 8 warps and split over
   * blocks (the MLP's bias gradients, 4096 x 512 and 4096 x 10 column sums, took 14 and
   * 8.6 us as uncoalesced block rows on an H200) */
  else if (!row_contig && gs == 1 && R >= 256 && !k->has_pre && !k->has_row_out) {
    p.kind = CUDA_COLUMNS;
    p.group = column_group(k);
  }
  else if (R <= 512 && N >= 64) {
    p.kind = CUDA_WARP_ROW;
    /* 16-byte loads along rows of 128+ (a multiple of 4): a warp's row in one or two
     * rounds of loads in flight, where a lane's element at a time took 16 dependent
     * rounds (an MLP's h @ W2 as 40960 rows of 512: 14 us on an H100, latency-bound) */
    const AluExp *bases[64];
    uint64_t mask = 0;
    if (R % 4 == 0 && R >= 128 && cuda_row_loads_based(k->exp, k, &mask, bases) &&
        (!k->has_pre || cuda_row_loads_based(k->pre_exp, k, &mask, bases)) && mask)
      p.vec_inputs = mask;
    if (p.vec_inputs && !k->has_pre && !k->has_row_out) p.group = cuda_warp_row_group(k, p.vec_inputs);
    if (p.group > 1) p.rows = cuda_warp_row_rows(k, p.group, p.vec_inputs);
  } else {
    p.kind = CUDA_BLOCK_ROW;
    /* few long rows: each row over gridDim.y blocks (the jit's first stage of a full
     * reduction has 16-256 rows of 2^15+) */
    p.split = !k->has_pre && !k->has_row_out && N <= RENDER_CUDA_SPLIT_ROWS && R >= 32768;
    /* 16-byte loads along rows whose length is a multiple of 4: four times the bytes in
     * flight a thread (the chain of dependent steps stays per element) */
    const AluExp *bases[64];
    uint64_t mask = 0;
    if (R % 4 == 0 && R >= 1024 && cuda_row_loads_based(k->exp, k, &mask, bases) &&
        (!k->has_pre || cuda_row_loads_based(k->pre_exp, k, &mask, bases)) && mask)
      p.vec_inputs = mask;
  }
  return p;
}

bool render_cuda_uses_tickets(const Kernel *k) {
  RenderCudaPlan p = render_cuda_plan(k);
  return p.split || p.kind == CUDA_COLUMNS;
}

/* ------------------------------------------------------------------ helpers */


/* Appends the stores out_o[at] = value of output o, for values v[0..nextra]. */
static void store_outputs(Buf *b, const Kernel *k, const char *indent, const char *at, char *const *v) {
  for (int o = 0; o <= k->nextra; o++) {
    buf_printf(b, "%sout%d[%s] = ", indent, o, at);
    emit_store(b, o ? k->extra_dtypes[o - 1] : k->dtype, v[o]);
    buf_str(b, ";\n");
  }
}

/* The values of every output of an elementwise kernel, as statements + value texts. */
static bool elementwise_values(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals, const char *indent,
                               const AluExp *const *roots, char **v) {
  EmitPart p = {.lang = lang, .out = b, .indent = indent, .nlocals = nlocals};
  return emit_parts(&p, roots, 1 + k->nextra, v);
}

static void free_values(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]), v[i] = NULL;
}

/* e with node `from` replaced by `to` (sources before users, so each node once). */
const AluExp *cuda_replace_node(const AluExp *e, const AluExp *from, const AluExp *to) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  if (!order) return NULL;
  AluMap m;
  alu_map_init(&m);
  const AluExp *result = e;
  for (int64_t i = 0; i < n; i++) {
    const AluExp *x = order[i], *r = x;
    if (x == from) r = to;
    else if (x->nsrc) {
      const AluExp *src[4];
      bool changed = false;
      for (int s = 0; s < x->nsrc; s++) {
        const void *v = NULL;
        src[s] = alu_map_get(&m, x->src[s], &v) ? v : x->src[s];
        changed |= src[s] != x->src[s];
      }
      if (changed) r = alu_make(x->op, x->dtype, x->nsrc, src, x->value, x->arg, x->name);
    }
    if (r != x) alu_map_put(&m, x, r);
    if (i == n - 1) result = r;
  }
  alu_map_free(&m);
  free(order);
  return result;
}

/* Replaces each load of a vectorized input at gidx by VARIABLE xv<i>. */
static const AluExp *vector_loads(const AluExp *e, uint64_t inputs, const AluExp *gidx, const Kernel *k) {
  for (int i = 0; i < k->nargs && i < 64; i++) {
    if (!(inputs >> i & 1)) continue;
    char name[16];
    snprintf(name, sizeof name, "xv%d", i);
    const AluExp *ld = alu_global(i, k->arg_dtypes[i], gidx);
    e = cuda_replace_node(e, ld, alu_variable(name, k->arg_dtypes[i]));
  }
  return e;
}

/* Uniform values: the nodes of an elementwise kernel that depend on no index (the
 * learning rate of an Adam step from its step count: a cosine and three powers in
 * double) are computed once a thread before the loop, as const jx_u<i>, not once an
 * element: the Fashion-MNIST CNN's Adam update of its 3136 x 128 weights took 17.5 us
 * with them per element (an H100). Their loads read at constant indices, readable in
 * every buffer (the backends allocate 64 bytes at least). *h gets k with those nodes
 * replaced by VARIABLEs; the plan stays k's. */
static bool uniform_node(const AluExp *x, AluMap *m) {
  if (x->op == ALU_SPECIAL || x->op == ALU_VARIABLE) return false;
  if (x->op == ALU_CONST) return true;
  const void *v;
  if (alu_map_get(m, x, &v)) return v != NULL;
  bool u = true;
  for (int i = 0; i < x->nsrc && u; i++) u = uniform_node(x->src[i], m);
  alu_map_put(m, x, u ? (const void *)1 : NULL);
  return u;
}

#define HOIST_MAX 32

static bool hoist_uniform(const RenderLang *lang, const Kernel *k, Kernel *h, Buf *b, int *nlocals) {
  *h = *k;
  const AluExp **roots[KERNEL_MAX_OUTS] = {&h->exp};
  for (int o = 0; o < k->nextra; o++) roots[1 + o] = &h->extra[o];
  const AluExp *hoist[HOIST_MAX];
  int n = 0;
  AluMap m;
  alu_map_init(&m);
  bool ok = true;
  for (int r = 0; r <= k->nextra && ok; r++) {
    int64_t cnt;
    const AluExp **order = alu_toposort(*roots[r], &cnt);
    ok = order != NULL;
    for (int64_t i = 0; ok && i < cnt; i++) {
      /* the uniform nodes that an index-dependent node reads, and a uniform output */
      const AluExp *x = order[i], *cand[4];
      int nc = 0;
      if (!uniform_node(x, &m))
        for (int s = 0; s < x->nsrc; s++) cand[nc++] = x->src[s];
      else if (i == cnt - 1) cand[nc++] = x;
      for (int c = 0; c < nc; c++) {
        bool seen = cand[c]->op == ALU_CONST || !uniform_node(cand[c], &m);
        for (int j = 0; j < n && !seen; j++) seen = hoist[j] == cand[c];
        if (!seen && n < HOIST_MAX) hoist[n++] = cand[c];
      }
    }
    free((void *)order);
  }
  alu_map_free(&m);
  if (!ok || !n) return ok;
  char *v[HOIST_MAX] = {0};
  EmitPart p = {.lang = lang, .out = b, .indent = "  ", .nlocals = nlocals};
  ok = emit_parts(&p, hoist, n, v);
  for (int j = 0; j < n && ok; j++) {
    char name[16];
    snprintf(name, sizeof name, "jx_u%d", j);
    buf_printf(b, "  const %s %s = %s;\n", ctype_of(hoist[j]->dtype), name, v[j]);
    const AluExp *var = alu_variable(name, hoist[j]->dtype);
    for (int r = 0; r <= k->nextra && ok; r++) ok = var && (*roots[r] = cuda_replace_node(*roots[r], hoist[j], var)) != NULL;
  }
  free_values(v, n);
  if (!ok && jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
  return ok && !b->oom;
}

/* An elementwise kernel through transposed tiles (plan tile_b = B, transpose_tile):
 * block x takes tiles of 32 x 32 outputs of the [A, B] view in turn; its 32 x 8 threads
 * first read each transposed load's 32 x 32 elements with consecutive threads along A
 * into jx_tl<l> ([b][a], a pad column: no bank conflicts either way), then compute the
 * outputs with consecutive threads along B, those loads read from the tile (VARIABLE
 * jx_tv<l>). Each output's value is computed as the plain kernel computes it. */
static bool render_tiled(const RenderLang *lang, const Kernel *k, int64_t B, const AluExp *const *loads, int nt, Buf *b,
                         int *nlocals) {
  int64_t A = k->size / B, tb = (B + 31) / 32, tiles = ((A + 31) / 32) * tb;
  const AluExp *roots[KERNEL_MAX_OUTS];
  char *v[KERNEL_MAX_OUTS] = {0};
  bool ok = true;
  /* gidx = jx_a B + jx_b, simplified: the x^T's (gidx % B) A + gidx / B becomes jx_b A + jx_a */
  const AluExp *at = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_special("jx_a", A), alu_const_int(JX_INT64, B)),
                                alu_special("jx_b", B));
  const AluExp *tl[RENDER_CUDA_TILE_LOADS];
  for (int l = 0; l < nt && ok; l++) {
    tl[l] = alu_substitute(loads[l], "gidx", at);
    ok = (tl[l] = tl[l] ? alu_simplify(tl[l]) : NULL) != NULL;
  }
  for (int o = 0; o <= k->nextra && ok; o++) {
    roots[o] = o ? k->extra[o - 1] : k->exp;
    for (int l = 0; l < nt && roots[o]; l++) {
      char name[16];
      snprintf(name, sizeof name, "jx_tv%d", l);
      roots[o] = cuda_replace_node(roots[o], loads[l], alu_variable(name, loads[l]->dtype));
    }
    if (roots[o]) roots[o] = alu_substitute(roots[o], "gidx", at);
    ok = roots[o] && (roots[o] = alu_simplify(roots[o])) != NULL;
  }
  for (int l = 0; l < nt; l++) buf_printf(b, "  __shared__ %s jx_tl%d[32][33];\n", ctype_of(loads[l]->dtype), l);
  buf_str(b, "  const int jx_tx = threadIdx.x & 31, jx_ty = threadIdx.x >> 5;\n");
  buf_printf(b, "  for (int64_t jx_tile = blockIdx.x; jx_tile < %lldLL; jx_tile += gridDim.x) {\n", (long long)tiles);
  buf_printf(b, "    const int64_t jx_a0 = (jx_tile / %lldLL) * 32, jx_b0 = (jx_tile %% %lldLL) * 32;\n", (long long)tb,
             (long long)tb);
  buf_str(b, "    #pragma unroll\n    for (int jx_i = 0; jx_i < 32; jx_i += 8) {\n");
  buf_str(b, "      const int64_t jx_a = jx_a0 + jx_tx, jx_b = jx_b0 + jx_ty + jx_i;\n");
  buf_printf(b, "      if (jx_a < %lldLL && jx_b < %lldLL) {\n        const int64_t gidx = jx_a * %lldLL + jx_b;\n"
                "        (void)gidx;\n", (long long)A, (long long)B, (long long)B);
  EmitPart pl = {.lang = lang, .out = b, .indent = "        ", .nlocals = nlocals};
  for (int l = 0; l < nt && ok; l++) {
    char *lv = emit_part(&pl, tl[l]);
    ok = lv != NULL;
    if (ok) buf_printf(b, "        jx_tl%d[jx_ty + jx_i][jx_tx] = %s;\n", l, lv);
    free(lv);
  }
  buf_str(b, "      }\n    }\n    __syncthreads();\n");
  buf_str(b, "    #pragma unroll\n    for (int jx_i = 0; jx_i < 32; jx_i += 8) {\n");
  buf_str(b, "      const int64_t jx_a = jx_a0 + jx_ty + jx_i, jx_b = jx_b0 + jx_tx;\n");
  buf_printf(b, "      if (jx_a < %lldLL && jx_b < %lldLL) {\n        const int64_t gidx = jx_a * %lldLL + jx_b;\n",
             (long long)A, (long long)B, (long long)B);
  for (int l = 0; l < nt; l++)
    buf_printf(b, "        const %s jx_tv%d = jx_tl%d[jx_tx][jx_ty + jx_i];\n", ctype_of(loads[l]->dtype), l, l);
  ok = ok && elementwise_values(lang, k, b, nlocals, "        ", roots, v);
  if (ok) store_outputs(b, k, "        ", "gidx", v);
  free_values(v, 1 + k->nextra);
  buf_str(b, "      }\n    }\n    __syncthreads();\n  }\n");
  if (!ok && jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
  return ok && !b->oom;
}

static bool render_elementwise(const RenderLang *lang, const Kernel *kin, Buf *b, int *nlocals) {
  RenderCudaPlan plan = render_cuda_plan(kin);
  Kernel hk;
  if (!hoist_uniform(lang, kin, &hk, b, nlocals)) return false;
  if (plan.tile_b) { /* (the plain loop where hoisting left no transposed load) */
    const AluExp *loads[RENDER_CUDA_TILE_LOADS];
    int nt = transposed_loads(&hk, plan.tile_b, loads, RENDER_CUDA_TILE_LOADS);
    if (nt >= 1 && nt <= RENDER_CUDA_TILE_LOADS) return render_tiled(lang, &hk, plan.tile_b, loads, nt, b, nlocals);
  }
  if (plan.vec == 1 && !render_cuda_narrow_indices(&hk)) return false;
  const Kernel *k = &hk;
  const AluExp *roots[KERNEL_MAX_OUTS];
  roots[0] = k->exp;
  for (int o = 0; o < k->nextra; o++) roots[1 + o] = k->extra[o];
  char *v[KERNEL_MAX_OUTS] = {0};
  bool ok = true;
  buf_str(b, "  const int64_t jx_stride = (int64_t)gridDim.x * blockDim.x;\n");
  if (plan.vec == 1) {
    buf_printf(b, "  for (int64_t gidx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; gidx < %lldLL; "
                  "gidx += jx_stride) {\n", (long long)k->size);
    ok = elementwise_values(lang, k, b, nlocals, "    ", roots, v);
    if (ok) store_outputs(b, k, "    ", "gidx", v);
    free_values(v, 1 + k->nextra);
    buf_str(b, "  }\n");
    return ok;
  }
  /* 4 elements a vector, nvec vectors a thread blockDim apart: every uint4 load of a
   * thread first (in flight together), with the loads read once a vector (xg<l>_<w>:
   * a value, or 4 from a uint4), then the values, then the uint4 stores */
  const AluExp *gidx = alu_special("gidx", k->size);
  const AluExp *vroots[KERNEL_MAX_OUTS];
  const AluExp *nodes[RENDER_CUDA_EW_MAX_GROUP_LOADS];
  IdxClass cls[RENDER_CUDA_EW_MAX_GROUP_LOADS];
  int nl = 0;
  if (!group_loads(k, plan.vec_inputs, nodes, cls, &nl, RENDER_CUDA_EW_MAX_GROUP_LOADS)) {
    if (jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
    return false;
  }
  for (int o = 0; o <= k->nextra; o++) {
    vroots[o] = vector_loads(roots[o], plan.vec_inputs, gidx, k);
    for (int l = 0; l < nl && vroots[o]; l++) {
      if (cls[l] == IDX_OTHER) continue;
      char name[16];
      snprintf(name, sizeof name, "xg%d", l);
      vroots[o] = cuda_replace_node(vroots[o], nodes[l], alu_variable(name, nodes[l]->dtype));
    }
    if (!vroots[o]) {
      if (jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
      return false;
    }
  }
  int nv = plan.nvec;
  long long n4 = (long long)(k->size / 4);
  const char *ld = ew_hint() & 1 ? "__ldcs" : "__ldg";
  buf_printf(b, "  for (int64_t jx_t0 = (int64_t)blockIdx.x * blockDim.x * %d + threadIdx.x; jx_t0 < %lldLL; "
                "jx_t0 += jx_stride * %d) {\n", nv, n4, nv);
  for (int w = 0; w < nv; w++) {
    buf_printf(b, "    const int64_t jx_t%d_ = jx_t0 + %d * (int64_t)blockDim.x;\n", w, w);
    for (int i = 0; i < k->nargs && i < 64; i++)
      if (plan.vec_inputs >> i & 1)
        buf_printf(b, "    %s xa%d_%d[4];\n    if (jx_t%d_ < %lldLL) { const uint4 u = %s((const uint4 *)in%d + jx_t%d_); "
                      "memcpy(xa%d_%d, &u, 16); }\n", emit_types[k->arg_dtypes[i]].elem, i, w, w, n4, ld, i, w, i, w);
    for (int l = 0; l < nl && ok; l++) {
      if (cls[l] == IDX_OTHER) continue;
      const AluExp *x = nodes[l];
      bool contig = cls[l] == IDX_CONTIG;
      buf_printf(b, "    %s xg%d_%d%s;\n    if (jx_t%d_ < %lldLL) {\n      const int64_t gidx = jx_t%d_ * 4;\n"
                    "      (void)gidx;\n", contig ? emit_types[x->dtype].elem : ctype_of(x->dtype), l, w,
                 contig ? "[4]" : "", w, n4, w);
      EmitPart pg = {.lang = lang, .out = b, .indent = "      ", .nlocals = nlocals};
      char *gv = emit_part(&pg, contig ? x->src[0] : x);
      ok = gv != NULL;
      if (ok && contig)
        buf_printf(b, "      const uint4 u = %s((const uint4 *)(in%lld + (%s)));\n      memcpy(xg%d_%d, &u, 16);\n",
                   ld, (long long)x->arg, gv, l, w);
      else if (ok) buf_printf(b, "      xg%d_%d = %s;\n", l, w, gv);
      buf_str(b, "    }\n");
      free(gv);
    }
  }
  for (int w = 0; w < nv && ok; w++) {
    buf_printf(b, "    if (jx_t%d_ < %lldLL) {\n", w, n4);
    for (int o = 0; o <= k->nextra; o++)
      buf_printf(b, "      %s ya%d[4];\n", emit_types[o ? k->extra_dtypes[o - 1] : k->dtype].elem, o);
    for (int j = 0; j < 4 && ok; j++) {
      buf_printf(b, "      {\n        const int64_t gidx = jx_t%d_ * 4 + %d;\n        (void)gidx;\n", w, j);
      for (int i = 0; i < k->nargs && i < 64; i++)
        if (plan.vec_inputs >> i & 1)
          buf_printf(b, "        const %s xv%d = xa%d_%d[%d];\n", ctype_of(k->arg_dtypes[i]), i, i, w, j);
      for (int l = 0; l < nl; l++) {
        if (cls[l] == IDX_UNIFORM) buf_printf(b, "        const %s xg%d = xg%d_%d;\n", ctype_of(nodes[l]->dtype), l, l, w);
        else if (cls[l] == IDX_CONTIG)
          buf_printf(b, "        const %s xg%d = xg%d_%d[%d];\n", ctype_of(nodes[l]->dtype), l, l, w, j);
      }
      ok = elementwise_values(lang, k, b, nlocals, "        ", vroots, v);
      if (ok)
        for (int o = 0; o <= k->nextra; o++) {
          buf_printf(b, "        ya%d[%d] = ", o, j);
          emit_store(b, o ? k->extra_dtypes[o - 1] : k->dtype, v[o]);
          buf_str(b, ";\n");
        }
      free_values(v, 1 + k->nextra);
      buf_str(b, "      }\n");
    }
    for (int o = 0; o <= k->nextra; o++)
      buf_printf(b, ew_hint() & 2 ? "      { uint4 u; memcpy(&u, ya%d, 16); __stcs((uint4 *)out%d + jx_t%d_, u); }\n"
                                  : "      { uint4 u; memcpy(&u, ya%d, 16); ((uint4 *)out%d)[jx_t%d_] = u; }\n", o, o, w);
    buf_str(b, "    }\n");
  }
  buf_str(b, "  }\n");
  return ok;
}

/* ------------------------------------------------------------------ reductions */

/* Texts of one reduction: the statements computing the reduced value (`body`, using
 * gidx and ridx), the step acc = op(acc, value) for its accumulator, the step
 * jx_acc2 = op(jx_acc2, jx_other) that combines partial results, and the identity. */
typedef struct Red {
  Buf body, step, comb, ident;
  const Reduction *r;
} Red;

static bool red_init(Red *t, const RenderLang *lang, int *nlocals, const Reduction *r, const AluExp *exp,
                     const char *indent, const char *acc, const char *comb_acc) {
  *t = (Red){.r = r};
  EmitPart p = {.lang = lang, .out = &t->body, .indent = indent, .nlocals = nlocals};
  char *v = emit_part(&p, exp);
  bool ok = v && emit_step(&p, &t->step, r, acc, v) && emit_step(&p, &t->comb, r, comb_acc, "jx_other");
  free(v);
  emit_const(&t->ident, r->dtype, r->identity);
  return ok && !t->body.oom && !t->step.oom && !t->comb.oom && !t->ident.oom;
}

static void red_free(Red *t) { free(t->body.s), free(t->step.s), free(t->comb.s), free(t->ident.s); }

/* acc (declared by the caller) = the reduction over ridx = first, first + step, ... < end. */
static void red_loop(Buf *b, const Red *t, const char *indent, const char *acc, const char *first,
                     const char *step, const char *end) {
  buf_printf(b, "%s%s = %s;\n", indent, acc, t->ident.s);
  /* unrolled: several loads of a thread in flight (the steps stay in order) */
  buf_printf(b, "%s#pragma unroll 4\n%sfor (int64_t ridx = %s; ridx < %s; ridx += %s) {\n", indent, indent, first, end, step);
  buf_str(b, t->body.s ? t->body.s : "");
  buf_printf(b, "%s  %s = %s;\n%s}\n", indent, acc, t->step.s, indent);
}

/* red_loop over 16-byte vectors: ridx = first, first + 4 step, ... < end (first and
 * end multiples of 4), 4 elements a step from uint4 loads of the inputs in `vec` at
 * jx_rb<i> + ridx (their row bases, declared by the caller; the body reads them as xv<i>). The loads of RED_VEC_AHEAD steps are issued
 * before any of them is reduced, so that many 16-byte loads of a thread are in flight
 * (a plain unrolled loop kept one: each unrolled step's bound check stopped the
 * compiler from hoisting the next load; argmax of 2^28 ran at 78% of DRAM bandwidth);
 * the elements are still reduced in the same order. */
#define RED_VEC_AHEAD_DEFAULT 4
/* JAXC_CUDA_RED_AHEAD=1..8 tries other depths (measuring; part of the kernel's source) */
static int red_vec_ahead(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_RED_AHEAD", RED_VEC_AHEAD_DEFAULT, 1, 8);
}
#define RED_VEC_AHEAD red_vec_ahead()
static void red_loop_vec(Buf *b, const Red *t, const Kernel *k, uint64_t vec, const char *indent, const char *acc,
                         const char *first, const char *step, const char *end) {
  buf_printf(b, "%s%s = %s;\n", indent, acc, t->ident.s);
  buf_printf(b, "%sfor (int64_t jx_r4 = %s; jx_r4 < %s; jx_r4 += %d * (int64_t)(%s)) {\n", indent, first, end,
             4 * RED_VEC_AHEAD, step);
  for (int a = 0; a < RED_VEC_AHEAD; a++)
    for (int i = 0; i < k->nargs && i < 64; i++)
      if (vec >> i & 1)
        buf_printf(b, "%s  %s xa%d_%d[4];\n%s  if (jx_r4 + %d * (int64_t)(%s) < %s) { const uint4 u = "
                      "__ldg((const uint4 *)(in%d + jx_rb%d + jx_r4 + %d * (int64_t)(%s))); memcpy(xa%d_%d, &u, 16); }\n",
                   indent, emit_types[k->arg_dtypes[i]].elem, i, a, indent, 4 * a, step, end, i, i, 4 * a, step, i, a);
  for (int a = 0; a < RED_VEC_AHEAD; a++) {
    buf_printf(b, "%s  if (jx_r4 + %d * (int64_t)(%s) < %s) {\n", indent, 4 * a, step, end);
    buf_printf(b, "%s    #pragma unroll\n%s    for (int jx_j = 0; jx_j < 4; jx_j++) {\n", indent, indent);
    buf_printf(b, "%s      const int64_t ridx = jx_r4 + %d * (int64_t)(%s) + jx_j;\n%s      (void)ridx;\n", indent,
               4 * a, step, indent);
    for (int i = 0; i < k->nargs && i < 64; i++)
      if (vec >> i & 1)
        buf_printf(b, "%s      const %s xv%d = xa%d_%d[jx_j];\n", indent, emit_types[k->arg_dtypes[i]].ctype, i, i, a);
    buf_str(b, t->body.s ? t->body.s : "");
    buf_printf(b, "%s      %s = %s;\n%s    }\n%s  }\n", indent, acc, t->step.s, indent, indent);
  }
  buf_printf(b, "%s}\n", indent);
}

/* e with each load of a row-vectorized input (at the row's contiguous index) replaced
 * by VARIABLE xv<i>. */
static const AluExp *row_vector_loads(const AluExp *e, const Kernel *k, uint64_t vec) {
  int64_t R = k->reduction.size, N = k->size;
  const AluExp *ridx = alu_special("ridx", R);
  const AluExp *row = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_special("gidx", N), alu_const_int(JX_INT64, R)), ridx);
  for (int i = 0; e && i < k->nargs && i < 64; i++) {
    if (!(vec >> i & 1)) continue;
    char name[16];
    snprintf(name, sizeof name, "xv%d", i);
    const AluExp *v = alu_variable(name, k->arg_dtypes[i]);
    e = cuda_replace_node(e, alu_global(i, k->arg_dtypes[i], row), v);
    const AluExp *row_s = alu_simplify(row);
    if (e && row_s && row_s != row) e = cuda_replace_node(e, alu_global(i, k->arg_dtypes[i], row_s), v);
    if (e && N == 1) e = cuda_replace_node(e, alu_global(i, k->arg_dtypes[i], ridx), v);
  }
  return e;
}

static const AluExp *based_vector_loads(const AluExp *e, const Kernel *k, uint64_t vec) {
  return cuda_grouped_vector_loads(e, k, &(GroupClasses){.all = vec}, 0, 0);
}

/* acc = the whole row reduced by this thread in the interpreter's order: 16 lanes
 * combined as a tree for float sums/products of 16 or more (the step was rendered for
 * "lane[l]" and the combination for "lane[l]" with "jx_other"), else ridx in order. */
static void red_serial(Buf *b, const Red *t, const char *indent, const char *acc, int64_t R, bool lanes) {
  char end[32];
  snprintf(end, sizeof end, "%lldLL", (long long)R);
  if (!lanes) {
    red_loop(b, t, indent, acc, "0", "1", end);
    return;
  }
  const char *ct = ctype_of(t->r->dtype);
  buf_printf(b, "%s{\n%s  %s lane[16];\n", indent, indent, ct);
  buf_printf(b, "%s  #pragma unroll\n%s  for (int l = 0; l < 16; l++) lane[l] = %s;\n", indent, indent, t->ident.s);
  buf_printf(b, "%s  for (int64_t jx_base = 0; jx_base < %s; jx_base += 16) {\n", indent, end);
  buf_printf(b, "%s    #pragma unroll\n%s    for (int l = 0; l < 16; l++) {\n", indent, indent);
  buf_printf(b, "%s      const int64_t ridx = jx_base + l;\n%s      if (ridx < %s) {\n", indent, indent, end);
  buf_str(b, t->body.s ? t->body.s : "");
  buf_printf(b, "%s        lane[l] = %s;\n%s      }\n%s    }\n%s  }\n", indent, t->step.s, indent, indent, indent);
  buf_printf(b, "%s  #pragma unroll\n%s  for (int h = 8; h > 0; h /= 2) {\n", indent, indent);
  buf_printf(b, "%s    #pragma unroll\n%s    for (int l = 0; l < h; l++) {\n", indent, indent);
  buf_printf(b, "%s      const %s jx_other = lane[l + h];\n%s      lane[l] = %s;\n", indent, ct, indent, t->comb.s);
  buf_printf(b, "%s    }\n%s  }\n%s  %s = lane[0];\n%s}\n", indent, indent, indent, acc, indent);
}

/* Stores out<obase> = epilogue(acc) and the further epilogues at gidx into out<obase + 1> .. */
bool cuda_red_store_at(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals, const char *indent,
                         const char *accv, int obase) {
  buf_printf(b, "%sconst %s acc = %s;\n", indent, ctype_of(k->reduction.dtype), accv);
  for (int o = 0; o <= k->nextra; o++) {
    const AluExp *x = o ? k->extra[o - 1] : k->reduction.epilogue;
    char *e;
    if (x) {
      EmitPart pe = {.lang = lang, .out = b, .indent = indent, .nlocals = nlocals};
      e = emit_part(&pe, x);
    } else e = strdup("acc");
    if (!e) {
      if (jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
      return false;
    }
    buf_printf(b, "%sout%d[gidx] = ", indent, obase + o);
    emit_store(b, o ? k->extra_dtypes[o - 1] : k->dtype, e);
    buf_str(b, ";\n");
    free(e);
  }
  return true;
}

/* Stores out0 = epilogue(acc) and the further epilogues at gidx. */
bool cuda_red_store(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals, const char *indent,
                      const char *accv) {
  return cuda_red_store_at(lang, k, b, nlocals, indent, accv, 0);
}

/* A butterfly over the warp's lanes: every lane ends with the warp's total in acc. */
static void warp_combine(Buf *b, const Red *t, const char *indent, const char *acc) {
  const char *ct = ctype_of(t->r->dtype);
  buf_printf(b, "%sfor (int o = 16; o > 0; o /= 2) {\n", indent);
  buf_printf(b, "%s  const %s jx_other = __shfl_xor_sync(0xffffffffu, %s, o);\n", indent, ct, acc);
  buf_printf(b, "%s  %s = %s;\n%s}\n", indent, acc, t->comb.s, indent);
}

/* Block-wide: warps, then warp 0 over the warps' totals in shared `sh`; every thread
 * ends with the block's total in acc (through sh[0]). Ends with a barrier. */
static void block_combine(Buf *b, const Red *t, const char *indent, const char *acc, const char *sh) {
  warp_combine(b, t, indent, acc);
  buf_printf(b, "%sif ((threadIdx.x & 31) == 0) %s[threadIdx.x >> 5] = %s;\n", indent, sh, acc);
  buf_printf(b, "%s__syncthreads();\n%sif (threadIdx.x < 32) {\n", indent, indent);
  buf_printf(b, "%s  %s = threadIdx.x < (blockDim.x >> 5) ? %s[threadIdx.x] : %s;\n", indent, acc, sh, t->ident.s);
  char in2[64];
  snprintf(in2, sizeof in2, "%s  ", indent);
  warp_combine(b, t, in2, acc);
  buf_printf(b, "%s  if (threadIdx.x == 0) %s[0] = %s;\n%s}\n", indent, sh, acc, indent);
  buf_printf(b, "%s__syncthreads();\n%s%s = %s[0];\n%s__syncthreads();\n", indent, indent, acc, sh, indent);
}

/* The row output (ir/alu.h, Kernel.has_row_out), inside the row loop after the row's
 * reduction, where every thread of the row's block, warp or thread holds it in jx_acc:
 * row_exp at every ridx of the row, the row's threads striding over it -- 4 elements a
 * step through 16-byte loads and stores where the row is contiguous 4-byte data. */
static bool row_output(const RenderLang *lang, const Kernel *k, const RenderCudaPlan *plan, Buf *b, int *nlocals) {
  int64_t R = k->reduction.size;
  int ro = 1 + k->nextra;
  const char *rt = emit_types[k->row_dtype].elem;
  uint64_t mask = 0;
  bool vec = plan->kind == CUDA_BLOCK_ROW && R % 4 == 0 && jx_dtype_itemsize(k->row_dtype) == 4 &&
             row_loads_contiguous(k->row_exp, k, &mask);
  const AluExp *e = vec ? row_vector_loads(k->row_exp, k, mask) : k->row_exp;
  if (!e) {
    if (jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
    return false;
  }
  Buf body = {0};
  EmitPart p = {.lang = lang, .out = &body, .indent = vec ? "        " : "      ", .nlocals = nlocals};
  char *v = emit_part(&p, e);
  if (!v || body.oom) {
    free(v), free(body.s);
    if (jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
    return false;
  }
  buf_printf(b, "    {\n      %s *%s jx_rowout = (%s *)out[%d] + gidx * %lldLL;\n", rt, lang->restrict_kw, rt, ro,
             (long long)R);
  buf_printf(b, "      const %s acc = jx_acc;\n      (void)acc;\n", ctype_of(k->reduction.dtype));
  if (vec) {
    buf_printf(b, "      for (int64_t jx_r4 = 4 * (int64_t)threadIdx.x; jx_r4 < %lldLL; jx_r4 += 4 * (int64_t)blockDim.x) {\n",
               (long long)R);
    for (int i = 0; i < k->nargs && i < 64; i++)
      if (mask >> i & 1)
        buf_printf(b, "        %s xa%d[4];\n        { const uint4 u = __ldg((const uint4 *)(in%d + gidx * %lldLL + jx_r4)); "
                      "memcpy(xa%d, &u, 16); }\n", emit_types[k->arg_dtypes[i]].elem, i, i, (long long)R, i);
    buf_printf(b, "        %s yr[4];\n        #pragma unroll\n        for (int jx_j = 0; jx_j < 4; jx_j++) {\n", rt);
    buf_str(b, "          const int64_t ridx = jx_r4 + jx_j;\n          (void)ridx;\n");
    for (int i = 0; i < k->nargs && i < 64; i++)
      if (mask >> i & 1)
        buf_printf(b, "          const %s xv%d = xa%d[jx_j];\n", ctype_of(k->arg_dtypes[i]), i, i);
    buf_str(b, body.s ? body.s : "");
    buf_str(b, "          yr[jx_j] = ");
    emit_store(b, k->row_dtype, v);
    buf_str(b, ";\n        }\n        { uint4 u; memcpy(&u, yr, 16); *(uint4 *)(jx_rowout + jx_r4) = u; }\n      }\n");
  } else {
    const char *first = plan->kind == CUDA_BLOCK_ROW ? "threadIdx.x" : plan->kind == CUDA_WARP_ROW ? "jx_lane" : "0";
    const char *step = plan->kind == CUDA_BLOCK_ROW ? "blockDim.x" : plan->kind == CUDA_WARP_ROW ? "32" : "1";
    buf_printf(b, "      for (int64_t ridx = %s; ridx < %lldLL; ridx += %s) {\n", first, (long long)R, step);
    buf_str(b, body.s ? body.s : "");
    buf_str(b, "        jx_rowout[ridx] = ");
    emit_store(b, k->row_dtype, v);
    buf_str(b, ";\n      }\n");
  }
  buf_str(b, "    }\n");
  free(v), free(body.s);
  return !b->oom;
}

/* CUDA_COLUMNS: output gidx = blockIdx.x * 32 + lane, this block's chunk of rows over
 * its 8 warps (warp w: rows r0 + w, r0 + w + 8, ... in order); the warps' sums combined
 * in warp order through shared memory, the block's partial left in scratch; the block
 * taking its column group's last ticket combines the partials (columns_combine). Two
 * stages, one launch, deterministic (the order depends on gridDim.y alone). */
/* The opening of a column reduction's kernel: shared jx_csh[8][width + 1] and jx_last,
 * the partials in scratch, this thread's column lane and row lane, `first` (its output,
 * or its group) = 32 blockIdx.x + lane, and its block's chunk of the R rows [jx_r0, jx_r1). */
static void columns_prologue(Buf *b, const char *ct, int width, const char *first, long long R) {
  const int C = RENDER_CUDA_COL_OUTS, L = RENDER_CUDA_COL_LANES;
  buf_printf(b, "  __shared__ %s jx_csh[%d][%d];\n  __shared__ bool jx_last;\n", ct, L, width + 1);
  buf_printf(b, "  %s *jx_parts = (%s *)scratch;\n", ct, ct);
  buf_printf(b, "  const int jx_col = threadIdx.x %% %d, jx_rl = threadIdx.x / %d;\n", C, C);
  buf_printf(b, "  const int64_t %s = (int64_t)blockIdx.x * %d + jx_col;\n", first, C);
  buf_printf(b, "  const int64_t jx_chunk = (%lldLL + gridDim.y - 1) / gridDim.y;\n", R);
  buf_str(b, "  const int64_t jx_r0 = blockIdx.y * jx_chunk;\n");
  buf_printf(b, "  const int64_t jx_r1 = jx_r0 + jx_chunk < %lldLL ? jx_r0 + jx_chunk : %lldLL;\n", R, R);
}

/* The combine of a column reduction's last block: its `per` outputs (from blockIdx.x *
 * per) 32 at a time, each output's gridDim.y partials (at gidx * gridDim.y + chunk) over
 * 8 sub-lanes (sub-lane s: chunks s, s + 8, ... in order; with 4-byte accumulators and
 * gridDim.y a multiple of 4, 16-byte loads of chunks 4s..4s+3, 4s+32..), then the 8
 * sub-lanes' sums in order through jx_csh. Opens the block in which threads 0..31 hold
 * their output's total in jx_acc at gidx (< N): the caller stores it, then calls
 * columns_combine_end. One thread an output reading its chunks one after another took
 * 61 us for 32 outputs of 1056 chunks (the Fashion-MNIST CNN's first bias gradient, an
 * H100): an L2 round trip every 8 chunks. */
static void columns_combine(Buf *b, jx_dtype acc, const char *comb, const char *ident, int per, long long N) {
  const char *ct = ctype_of(acc);
  const int L = RENDER_CUDA_COL_LANES, C = RENDER_CUDA_COL_OUTS;
  buf_printf(b, "  for (int jx_o0 = 0; jx_o0 < %d; jx_o0 += %d) {\n", per, C);
  buf_printf(b, "    const int jx_c = threadIdx.x / %d, jx_s = threadIdx.x %% %d;\n", L, L);
  buf_printf(b, "    const int64_t jx_g = (int64_t)blockIdx.x * %d + jx_o0 + jx_c;\n", per);
  buf_printf(b, "    %s jx_acc = %s;\n    if (jx_g < %lldLL) {\n", ct, ident, N);
  buf_printf(b, "      const %s *jx_p = jx_parts + jx_g * gridDim.y;\n", ct);
  if (jx_dtype_itemsize(acc) == 4) {
    buf_str(b, "      if ((gridDim.y & 3u) == 0) {\n        #pragma unroll 8\n");
    buf_printf(b, "        for (unsigned jx_i = 4 * jx_s; jx_i < gridDim.y; jx_i += %d) {\n", 4 * L);
    buf_printf(b, "          const uint4 jx_u = __ldcg((const uint4 *)(jx_p + jx_i));\n          %s jx_v[4];\n", ct);
    buf_str(b, "          memcpy(jx_v, &jx_u, 16);\n          #pragma unroll\n");
    buf_printf(b, "          for (int jx_q = 0; jx_q < 4; jx_q++) { const %s jx_other = jx_v[jx_q]; jx_acc = %s; }\n", ct,
               comb);
    buf_str(b, "        }\n      } else\n");
  }
  buf_printf(b, "      {\n        #pragma unroll 8\n        for (unsigned jx_i = jx_s; jx_i < gridDim.y; jx_i += %d) {\n", L);
  buf_printf(b, "          const %s jx_other = jx_cgload(jx_p + jx_i);\n          jx_acc = %s;\n        }\n      }\n", ct,
             comb);
  buf_str(b, "    }\n    __syncthreads();\n    jx_csh[jx_s][jx_c] = jx_acc;\n    __syncthreads();\n");
  buf_printf(b, "    const int64_t gidx = (int64_t)blockIdx.x * %d + jx_o0 + threadIdx.x;\n", per);
  buf_printf(b, "    if (threadIdx.x < %d && gidx < %lldLL) {\n      jx_acc = jx_csh[0][threadIdx.x];\n", C, N);
  buf_printf(b, "      for (int jx_i = 1; jx_i < %d; jx_i++) {\n", L);
  buf_printf(b, "        const %s jx_other = jx_csh[jx_i][threadIdx.x];\n        jx_acc = %s;\n      }\n", ct, comb);
}

static void columns_combine_end(Buf *b) { buf_str(b, "    }\n  }\n"); }

/* CUDA_COLUMNS grouped (plan group G > 1, column_group): lane jx_col of block x holds
 * the G outputs gidx = G jx_w + j of group jx_w = 32 x + jx_col, emitted together so the
 * element they share (x[k, w]) is read once a row; the 8 row lanes and the chunks over
 * gridDim.y blocks as in render_columns, the partials of each output at gidx *
 * gridDim.y + chunk; the block taking the last ticket combines its 32 G outputs'
 * partials (columns_combine). */
static bool render_columns_group(const RenderLang *lang, const Kernel *k, const RenderCudaPlan *plan, Buf *b,
                                 int *nlocals) {
  const Reduction *r = &k->reduction;
  const char *ct = ctype_of(r->dtype);
  int G = plan->group;
  long long R = (long long)r->size, N = (long long)k->size, W = N / G;
  const int C = RENDER_CUDA_COL_OUTS, L = RENDER_CUDA_COL_LANES;
  const AluExp *roots[RENDER_CUDA_ROW_GROUP_MAX] = {0};
  char *v[RENDER_CUDA_ROW_GROUP_MAX] = {0};
  Buf body = {0}, steps = {0}, combs = {0}, ident = {0}, comb1 = {0};
  bool ok = true;
  for (int j = 0; j < G && ok; j++) ok = (roots[j] = cuda_grouped_exp(k->exp, N, G, j)) != NULL;
  EmitPart p = {.lang = lang, .out = &body, .indent = "      ", .nlocals = nlocals};
  ok = ok && emit_parts(&p, roots, G, v);
  for (int j = 0; j < G && ok; j++) {
    char acc[24];
    snprintf(acc, sizeof acc, "jx_acc%d", j);
    Buf st = {0}, cb = {0};
    ok = emit_step(&p, &st, r, acc, v[j]) && emit_step(&p, &cb, r, acc, "jx_other");
    buf_printf(&steps, "      %s = %s;\n", acc, st.s ? st.s : "");
    buf_printf(&combs, "      { const %s jx_other = jx_csh[jx_i][jx_col * %d + %d]; %s = %s; }\n", ct, G, j, acc,
               cb.s ? cb.s : "");
    free(st.s), free(cb.s);
  }
  ok = ok && emit_step(&p, &comb1, r, "jx_acc", "jx_other");
  emit_const(&ident, r->dtype, r->identity);
  ok = ok && !body.oom && !steps.oom && !combs.oom && !ident.oom && !comb1.oom;
  if (ok) {
    columns_prologue(b, ct, C * G, "jx_w", R);
    for (int j = 0; j < G; j++) buf_printf(b, "  %s jx_acc%d = %s;\n", ct, j, ident.s);
    buf_printf(b, "  if (jx_w < %lldLL) {\n", W);
    buf_printf(b, "    #pragma unroll 4\n    for (int64_t ridx = jx_r0 + jx_rl; ridx < jx_r1; ridx += %d) {\n", L);
    buf_str(b, body.s ? body.s : "");
    buf_str(b, steps.s);
    buf_str(b, "    }\n  }\n");
    for (int j = 0; j < G; j++) buf_printf(b, "  jx_csh[jx_rl][jx_col * %d + %d] = jx_acc%d;\n", G, j, j);
    buf_str(b, "  __syncthreads();\n  if (jx_rl == 0) {\n");
    buf_printf(b, "    for (int jx_i = 1; jx_i < %d; jx_i++) {\n", L);
    buf_str(b, combs.s);
    buf_printf(b, "    }\n    if (jx_w < %lldLL) {\n", W);
    for (int j = 0; j < G; j++)
      buf_printf(b, "      jx_parts[(jx_w * %d + %d) * gridDim.y + blockIdx.y] = jx_acc%d;\n", G, j, j);
    buf_str(b, "    }\n    __threadfence();\n  }\n  __syncthreads();\n");
    buf_str(b, "  if (threadIdx.x == 0) jx_last = atomicAdd(&jx_split_tickets[blockIdx.x], 1u) == gridDim.y - 1;\n");
    buf_str(b, "  __syncthreads();\n  if (!jx_last) return;\n  __threadfence();\n");
    buf_str(b, "  if (threadIdx.x == 0) jx_split_tickets[blockIdx.x] = 0u;\n");
    columns_combine(b, r->dtype, comb1.s, ident.s, C * G, N);
    ok = cuda_red_store(lang, k, b, nlocals, "      ", "jx_acc");
    columns_combine_end(b);
  } else if (jx_last_status() == JX_OK)
    error_set(JX_ERR_OOM, "render: out of memory");
  for (int j = 0; j < G; j++) free(v[j]);
  free(body.s), free(steps.s), free(combs.s), free(ident.s), free(comb1.s);
  return ok && !b->oom;
}

static bool render_columns(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals, const Red *t) {
  const char *ct = ctype_of(k->reduction.dtype);
  long long R = (long long)k->reduction.size, N = (long long)k->size;
  const int C = RENDER_CUDA_COL_OUTS, L = RENDER_CUDA_COL_LANES;
  columns_prologue(b, ct, C, "gidx", R);
  buf_printf(b, "  %s jx_acc = %s;\n", ct, t->ident.s);
  buf_printf(b, "  if (gidx < %lldLL) {\n", N);
  char step[16];
  snprintf(step, sizeof step, "%d", L);
  red_loop(b, t, "    ", "jx_acc", "jx_r0 + jx_rl", step, "jx_r1");
  buf_str(b, "  }\n  jx_csh[jx_rl][jx_col] = jx_acc;\n  __syncthreads();\n");
  buf_printf(b, "  if (jx_rl == 0) {\n    for (int jx_i = 1; jx_i < %d; jx_i++) {\n", L);
  buf_printf(b, "      const %s jx_other = jx_csh[jx_i][jx_col];\n      jx_acc = %s;\n    }\n", ct, t->comb.s);
  buf_printf(b, "    if (gidx < %lldLL) jx_parts[gidx * gridDim.y + blockIdx.y] = jx_acc;\n", N);
  buf_str(b, "    __threadfence();\n  }\n  __syncthreads();\n");
  buf_str(b, "  if (threadIdx.x == 0) jx_last = atomicAdd(&jx_split_tickets[blockIdx.x], 1u) == gridDim.y - 1;\n");
  buf_str(b, "  __syncthreads();\n  if (!jx_last) return;\n  __threadfence();\n");
  buf_str(b, "  if (threadIdx.x == 0) jx_split_tickets[blockIdx.x] = 0u;\n");
  columns_combine(b, k->reduction.dtype, t->comb.s, t->ident.s, C, N);
  bool ok = cuda_red_store(lang, k, b, nlocals, "      ", "jx_acc");
  columns_combine_end(b);
  return ok && !b->oom;
}

static bool render_reduction(const RenderLang *lang, const Kernel *kin, Buf *b, int *nlocals) {
  RenderCudaPlan plan = render_cuda_plan(kin);
  /* int32 indices (render_cuda_narrow_indices) where the plan reads no structure of them and the
   * digits of the flat index are many: a thread's rows (the CNN's 2 x 2 max pools) */
  Kernel nk = *kin;
  const Kernel *k = kin;
  if (plan.kind == CUDA_THREAD_ROW && !kin->has_pre && !kin->has_row_out && !kin->post) {
    if (!render_cuda_narrow_indices(&nk)) return false;
    k = &nk;
  }
  if (k->post && !(plan.kind == CUDA_WARP_ROW && plan.group == k->post->reduction.size && !k->reduction.epilogue &&
                   !k->nextra && k->reduction.dtype == k->dtype)) {
    error_set(JX_ERR_UNSUPPORTED, "render: a group epilogue over %lld outputs where the kernel computes %d together",
              (long long)k->post->reduction.size, plan.kind == CUDA_WARP_ROW ? plan.group : 1);
    return false;
  }
  if (plan.kind == CUDA_WARP_ROW && plan.group > 1) return cuda_render_warp_group(lang, k, &plan, b, nlocals);
  const Reduction *r = &k->reduction;
  int64_t R = r->size, N = k->size;
  const char *ct = ctype_of(r->dtype);
  bool serial = plan.kind == CUDA_THREAD_ROW;
  bool lanes = serial && alu_reduce_in_lanes(r->op, r->dtype, R);
  bool plan_lanes = k->has_pre && serial && alu_reduce_in_lanes(k->pre.op, k->pre.dtype, R);
  const char *ind = "    ";
  Red main, pre = {0};
  uint64_t vec = plan.kind == CUDA_BLOCK_ROW || plan.kind == CUDA_WARP_ROW ? plan.vec_inputs : 0;
  const AluExp *bases[64] = {0};
  uint64_t based = 0;
  if (vec) {
    cuda_row_loads_based(k->exp, k, &based, bases);
    if (k->has_pre) cuda_row_loads_based(k->pre_exp, k, &based, bases);
  }
  const AluExp *exp = vec ? based_vector_loads(k->exp, k, vec) : k->exp;
  const AluExp *pre_exp = vec && k->has_pre ? based_vector_loads(k->pre_exp, k, vec) : k->pre_exp;
  if (!exp || (k->has_pre && !pre_exp)) {
    if (jx_last_status() == JX_OK) error_set(JX_ERR_OOM, "render: out of memory");
    return false;
  }
  bool ok = red_init(&main, lang, nlocals, r, exp, vec ? "        " : "      ", lanes ? "lane[l]" : "jx_acc",
                     lanes ? "lane[l]" : "jx_acc");
  if (ok && k->has_pre)
    ok = red_init(&pre, lang, nlocals, &k->pre, pre_exp, vec ? "        " : "      ", plan_lanes ? "lane[l]" : "jx_pacc",
                  plan_lanes ? "lane[l]" : "jx_pacc");
  if (!ok) {
    red_free(&main), red_free(&pre);
    return false;
  }
  if (plan.kind == CUDA_COLUMNS) {
    ok = plan.group > 1 ? render_columns_group(lang, k, &plan, b, nlocals) : render_columns(lang, k, b, nlocals, &main);
    red_free(&main), red_free(&pre);
    return ok;
  }
  char end[32];
  snprintf(end, sizeof end, "%lldLL", (long long)R);
  if (plan.kind == CUDA_BLOCK_ROW) {
    buf_printf(b, "  __shared__ %s jx_sh[32];\n", ct);
    if (k->has_pre) buf_printf(b, "  __shared__ %s jx_psh[32];\n", ctype_of(k->pre.dtype));
  }
  if (plan.kind == CUDA_WARP_ROW) buf_str(b, "  const int jx_lane = threadIdx.x & 31;\n");
  if (plan.split) {
    if (vec) /* chunks of whole vectors */
      buf_printf(b, "  const int64_t jx_chunk = ((%s + gridDim.y - 1) / gridDim.y + 3) & ~(int64_t)3;\n", end);
    else
      buf_printf(b, "  const int64_t jx_chunk = (%s + gridDim.y - 1) / gridDim.y;\n", end);
    buf_printf(b, "  const int64_t jx_r0 = blockIdx.y * jx_chunk;\n");
    buf_printf(b, "  const int64_t jx_r1 = jx_r0 + jx_chunk < %s ? jx_r0 + jx_chunk : %s;\n", end, end);
    buf_str(b, "  unsigned *jx_tickets = jx_split_tickets;\n");
    buf_printf(b, "  %s *jx_parts = (%s *)scratch;\n", ct, ct);
    buf_str(b, "  __shared__ bool jx_last;\n");
  }
  /* the row loop: gidx is the output this thread, warp or block works on */
  if (serial)
    buf_printf(b, "  for (int64_t gidx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; gidx < %lldLL; "
                  "gidx += (int64_t)gridDim.x * blockDim.x) {\n", (long long)N);
  else if (plan.kind == CUDA_WARP_ROW)
    buf_printf(b, "  for (int64_t gidx = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); "
                  "gidx < %lldLL; gidx += (int64_t)gridDim.x * (blockDim.x >> 5)) {\n", (long long)N);
  else
    buf_printf(b, "  for (int64_t gidx = blockIdx.x; gidx < %lldLL; gidx += gridDim.x) {\n", (long long)N);
  buf_printf(b, "%s%s jx_acc;\n", ind, ct);
  /* the row bases of the vector loads' inputs */
  for (int i = 0; i < k->nargs && i < 64 && ok; i++) {
    if (!(vec >> i & 1)) continue;
    EmitPart pb = {.lang = lang, .out = b, .indent = ind, .nlocals = nlocals};
    char *v = bases[i] ? emit_part(&pb, bases[i]) : NULL;
    if (v) buf_printf(b, "%sconst int64_t jx_rb%d = %s;\n", ind, i, v);
    else ok = false;
    free(v);
  }
  if (!ok) {
    if (jx_last_status() == JX_OK) error_set(JX_ERR_INTERNAL, "render: no row base for a vector load");
    red_free(&main), red_free(&pre);
    return false;
  }
  if (k->has_pre) {
    buf_printf(b, "%s%s jx_pacc;\n", ind, ctype_of(k->pre.dtype));
    if (serial) red_serial(b, &pre, ind, "jx_pacc", R, plan_lanes);
    else if (plan.kind == CUDA_WARP_ROW) {
      if (vec) red_loop_vec(b, &pre, k, vec, ind, "jx_pacc", "4 * (int64_t)jx_lane", "32", end);
      else red_loop(b, &pre, ind, "jx_pacc", "jx_lane", "32", end);
      warp_combine(b, &pre, ind, "jx_pacc");
    } else {
      if (vec) red_loop_vec(b, &pre, k, vec, ind, "jx_pacc", "4 * (int64_t)threadIdx.x", "blockDim.x", end);
      else red_loop(b, &pre, ind, "jx_pacc", "threadIdx.x", "blockDim.x", end);
      block_combine(b, &pre, ind, "jx_pacc", "jx_psh");
    }
    buf_printf(b, "%sconst %s pre = jx_pacc;\n", ind, ctype_of(k->pre.dtype));
  }
  const char *store_if = "";
  if (serial) red_serial(b, &main, ind, "jx_acc", R, lanes);
  else if (plan.kind == CUDA_WARP_ROW) {
    if (vec) red_loop_vec(b, &main, k, vec, ind, "jx_acc", "4 * (int64_t)jx_lane", "32", end);
    else red_loop(b, &main, ind, "jx_acc", "jx_lane", "32", end);
    warp_combine(b, &main, ind, "jx_acc");
    store_if = "jx_lane == 0";
  } else if (!plan.split) {
    if (vec) red_loop_vec(b, &main, k, vec, ind, "jx_acc", "4 * (int64_t)threadIdx.x", "blockDim.x", end);
    else red_loop(b, &main, ind, "jx_acc", "threadIdx.x", "blockDim.x", end);
    block_combine(b, &main, ind, "jx_acc", "jx_sh");
    store_if = "threadIdx.x == 0";
  } else {
    /* this block's chunk; thread 0 leaves the partial and takes a ticket; the block
     * that takes the last ticket combines the row's partials in chunk order */
    if (vec) red_loop_vec(b, &main, k, vec, ind, "jx_acc", "jx_r0 + 4 * (int64_t)threadIdx.x", "blockDim.x", "jx_r1");
    else red_loop(b, &main, ind, "jx_acc", "jx_r0 + threadIdx.x", "blockDim.x", "jx_r1");
    block_combine(b, &main, ind, "jx_acc", "jx_sh");
    buf_printf(b, "%sif (threadIdx.x == 0) {\n", ind);
    buf_printf(b, "%s  jx_parts[gidx * gridDim.y + blockIdx.y] = jx_acc;\n", ind);
    buf_printf(b, "%s  __threadfence();\n", ind);
    buf_printf(b, "%s  jx_last = atomicAdd(&jx_tickets[gidx], 1u) == gridDim.y - 1;\n%s}\n", ind, ind);
    buf_printf(b, "%s__syncthreads();\n%sif (!jx_last) continue;\n%s__threadfence();\n", ind, ind, ind);
    buf_printf(b, "%sjx_acc = %s;\n", ind, main.ident.s);
    buf_printf(b, "%sfor (unsigned jx_i = threadIdx.x; jx_i < gridDim.y; jx_i += blockDim.x) {\n", ind);
    buf_printf(b, "%s  const %s jx_other = jx_vload((volatile %s *)jx_parts + gidx * gridDim.y + jx_i);\n", ind, ct, ct);
    buf_printf(b, "%s  jx_acc = %s;\n%s}\n", ind, main.comb.s, ind);
    block_combine(b, &main, ind, "jx_acc", "jx_sh");
    buf_printf(b, "%sif (threadIdx.x == 0) jx_tickets[gidx] = 0u;\n", ind);
    store_if = "threadIdx.x == 0";
  }
  if (*store_if) buf_printf(b, "%sif (%s) {\n", ind, store_if);
  else buf_printf(b, "%s{\n", ind);
  ok = cuda_red_store(lang, k, b, nlocals, "      ", "jx_acc");
  buf_printf(b, "%s}\n", ind);
  if (ok && k->has_row_out) ok = row_output(lang, k, &plan, b, nlocals);
  buf_str(b, "  }\n");
  red_free(&main), red_free(&pre);
  return ok;
}

static bool cuda_frame(const RenderLang *lang, const Kernel *k, Buf *body, int *nlocals) {
  emit_args(body, lang, k);
  return k->has_reduction ? render_reduction(lang, k, body, nlocals) : render_elementwise(lang, k, body, nlocals);
}
