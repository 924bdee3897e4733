/* cuda_group.c -- grouped warp rows of the CUDA framing (render/cuda.c): where the G
 * outputs of a row of a product's rows read one row of an input in common (the MLP's
 * logits relu(x @ W1 + b1) @ W2: x[m, :] for its 10 columns), one warp computes them
 * together, reading that row once; optionally several rows of them a warp
 * (RenderCudaPlan.rows); a group epilogue (Kernel.post: the log-softmax over each row)
 * computed from the group's values in the same kernel. docs/kernels.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "render/cuda_group.h"

/* e for output gidx = G jx_w + j (jx_w in [0, N / G)), simplified: the product's
 * x[gidx / 10, ridx] becomes x[jx_w, ridx] for every j when G = 10. */
const AluExp *cuda_grouped_exp(const AluExp *e, int64_t N, int G, int j) {
  const AluExp *w = alu_special("jx_w", N / G);
  const AluExp *at = alu_binary(ALU_ADD, alu_binary(ALU_MUL, w, alu_const_int(JX_INT64, G)), alu_const_int(JX_INT64, j));
  const AluExp *x = at ? alu_substitute(e, "gidx", at) : NULL;
  return x ? alu_simplify(x) : NULL;
}

/* Inputs (bits) whose row base (cuda_row_loads_based) is the same for the G outputs G w + j
 * of a group: read once a step for the group. 0 where a grouped output's loads are not
 * all based, on the same inputs as `vec`. */
static uint64_t grouped_shared(const Kernel *k, int G, uint64_t vec) {
  const AluExp *b0[64] = {0}, *bj[64] = {0};
  uint64_t shared = vec;
  for (int j = 0; j < G && shared; j++) {
    uint64_t m = 0;
    const AluExp *e = cuda_grouped_exp(k->exp, k->size, G, j);
    if (!e || !cuda_row_loads_based(e, k, &m, j ? bj : b0) || m != vec) return 0;
    for (int i = 0; j && i < 64; i++)
      if (shared >> i & 1 && b0[i] != bj[i]) shared &= ~(1ull << i);
  }
  return shared;
}

/* Grouped warp rows: where G consecutive outputs (gidx = G w + j) read the same row of
 * an input -- a product's rows (jit/lower.c, lower_dot_rows) read x[m, :] for each of the
 * product's N columns -- one warp computes the G outputs in one pass, reading the shared
 * row once (and computing what depends on it alone once: the MLP's relu(x @ W1 + b1) left
 * operand) where G warps read it G times. The MLP's h @ W2, 4096 x 10 outputs of 512,
 * took 10.5 us as one warp an output on an H100, bound by L1 traffic (each row read 10
 * times); a scalar grouped version, 12.8 us, by its latency (one element a lane a step).
 * The largest such G <= RENDER_CUDA_ROW_GROUP_MAX dividing the outputs, with some but not
 * all of the vector inputs shared; 1 if none. JAXC_CUDA_ROW_GROUP=n caps G (0: off;
 * measuring, part of the kernels' source). */
int cuda_row_group_cap(void) {
  static int cap = -1;
  return config_env_setting(&cap, "JAXC_CUDA_ROW_GROUP", RENDER_CUDA_ROW_GROUP_MAX, 0, RENDER_CUDA_ROW_GROUP_MAX);
}

int cuda_warp_row_group(const Kernel *k, uint64_t vec) {
  int most = cuda_row_group_cap();
  for (int G = most; G >= 2; G--) {
    if (k->size % G) continue;
    uint64_t sh = grouped_shared(k, G, vec);
    if (sh && sh != vec) return G;
  }
  return 1;
}

/* The classes of a grouped warp row's vector loads over rows (jx_rows of them) of G
 * outputs, gidx = G jx_rows w + G r + j (GroupClasses, cuda_group.h), each input's row
 * base and bases[o][i] that of output o = G r + j (cuda_row_loads_based). False where an
 * input is none of these or no input is col. */
static bool group_classes(const Kernel *k, int G, int rows, uint64_t vec, const AluExp *(*bases)[64],
                          GroupClasses *c) {
  int GT = G * rows;
  *c = (GroupClasses){0};
  for (int o = 0; o < GT; o++) {
    uint64_t m = 0;
    const AluExp *e = cuda_grouped_exp(k->exp, k->size, GT, o);
    if (!e || !cuda_row_loads_based_at(e, k, &m, bases[o], true) || m != vec) return false;
  }
  for (int i = 0; i < 64; i++) {
    if (!(vec >> i & 1)) continue;
    bool all = true, row = true, col = true;
    for (int o = 0; o < GT; o++) {
      all = all && bases[o][i] == bases[0][i];
      row = row && bases[o][i] == bases[o - o % G][i];
      col = col && bases[o][i] == bases[o % G][i];
    }
    if (all) c->all |= 1ull << i;
    else if (row && rows > 1) c->row |= 1ull << i;
    else if (col) c->col |= 1ull << i;
    else return false;
  }
  return (c->all | c->row) && c->col;
}

/* Rows of G outputs a grouped warp row computes together (RenderCudaPlan.rows): the
 * outputs' own rows (the MLP's w^T[j, :] of its logits relu(x W1 + b1) @ W2, 4096 rows of
 * 10) are read once for them all, where a warp a row read W2's 20 KB from L1 for each
 * row (10.6 us on an H100, 70% of the warps' cycles waiting on L1; XLA's Triton kernel
 * 4.8). The largest of 4 and 2 (JAXC_CUDA_ROW_GROUP_ROWS=n caps it) dividing the rows
 * that leaves RENDER_CUDA_ROW_GROUP_FILL_WARPS warps and whose loads class
 * (group_classes); 1 if none. Off by default (cap 1): the MLP step at batch 4096 read
 * 0.0886 ms with 2 rows a warp against 0.0884 with 1, 0.0921 with 4 (H100, 2026-12-06
 * 20:50, alternated in one call) -- the step's time lies in its GEMMs. */
#define RENDER_CUDA_ROW_GROUP_FILL_WARPS 1024
int cuda_warp_row_rows(const Kernel *k, int G, uint64_t vec) {
  static int cap = -1;
  int most = config_env_setting(&cap, "JAXC_CUDA_ROW_GROUP_ROWS", 1, 1, RENDER_CUDA_ROW_GROUP_ROWS_MAX);
  int64_t rows = k->size / G;
  const AluExp *(*bases)[64] = calloc((size_t)G * RENDER_CUDA_ROW_GROUP_ROWS_MAX, sizeof *bases);
  int found = 1;
  for (int RM = most >= 4 ? 4 : most; bases && RM >= 2 && found == 1; RM /= 2) {
    GroupClasses c;
    if (rows % RM == 0 && rows / RM >= RENDER_CUDA_ROW_GROUP_FILL_WARPS && group_classes(k, G, RM, vec, bases, &c))
      found = RM;
  }
  free(bases);
  return found;
}

/* e with each load of an input in vec that depends on ridx (at its row base + ridx,
 * cuda_row_loads_based) replaced by VARIABLE xv<i> -- in a grouped warp row's output G r + j
 * (group_classes), by xv<i> for the inputs of class all, xv<i>r<r> for class row and
 * xv<i>_<j> for class col (per_output's names). */
const AluExp *cuda_grouped_vector_loads(const AluExp *e, const Kernel *k, const GroupClasses *c, int r, int j) {
  int64_t n;
  const AluExp *zero = alu_const_int(JX_INT64, 0), *one = alu_const_int(JX_INT64, 1);
  const AluExp **order = e ? alu_toposort(e, &n) : NULL;
  uint64_t vec = c->all | c->row | c->col;
  if (!order) return NULL;
  for (int64_t i = 0; e && i < n; i++) {
    const AluExp *x = order[i];
    if (x->op != ALU_GLOBAL_INDEX || x->arg >= 64 || !(vec >> x->arg & 1) ||
        alu_substitute(x->src[0], "ridx", one) == alu_substitute(x->src[0], "ridx", zero))
      continue;
    char name[32];
    if (c->all >> x->arg & 1) snprintf(name, sizeof name, "xv%d", (int)x->arg);
    else if (c->row >> x->arg & 1) snprintf(name, sizeof name, "xv%dr%d", (int)x->arg, r);
    else snprintf(name, sizeof name, "xv%d_%d", (int)x->arg, j);
    e = cuda_replace_node(e, x, alu_variable(name, k->arg_dtypes[x->arg]));
  }
  free(order);
  return e;
}

/* Whether x depends on an input an output of the group reads alone (VARIABLE xv<i>_<j>,
 * cuda_grouped_vector_loads), memoized in m. */
static bool per_output(const AluExp *x, AluMap *m) {
  const void *v;
  if (alu_map_get(m, x, &v)) return v == (const void *)2;
  bool d = x->op == ALU_VARIABLE && strncmp(x->name, "xv", 2) == 0 && strchr(x->name, '_');
  for (int s = 0; s < x->nsrc && !d; s++) d = per_output(x->src[s], m);
  alu_map_put(m, x, d ? (const void *)2 : (const void *)1);
  return d;
}

#define WARP_GROUP_MAX_SHARED 16
/* One pass of a group epilogue's reduction r over the group: acc `acc` (declared
 * here) combined with e at ridx = 0 .. G-1, the group's values jx_g<ridx> read as jx_gv. */
static bool group_pass(const RenderLang *lang, Buf *b, int *nlocals, const Reduction *r, const AluExp *e,
                       const char *acc, int64_t G, jx_dtype gdt) {
  Buf id = {0};
  emit_const(&id, r->dtype, r->identity);
  buf_printf(b, "      %s %s = %s;\n", ctype_of(r->dtype), acc, id.s ? id.s : "0");
  bool ok = !id.oom;
  free(id.s);
  for (int64_t j = 0; j < G && ok; j++) {
    buf_printf(b, "      {\n        const int64_t ridx = %lld;\n        (void)ridx;\n", (long long)j);
    buf_printf(b, "        const %s jx_gv = jx_g%lld;\n", ctype_of(gdt), (long long)j);
    EmitPart pe = {.lang = lang, .out = b, .indent = "        ", .nlocals = nlocals};
    char *v = emit_part(&pe, e);
    Buf st = {0};
    ok = v && emit_step(&pe, &st, r, acc, v) && !st.oom;
    if (ok) buf_printf(b, "        %s = %s;\n      }\n", acc, st.s);
    free(v), free(st.s);
  }
  return ok;
}

/* The group epilogue (ir/alu.h, Kernel.post) of a grouped warp row's row `row` (text),
 * once its G outputs are reduced (every lane holding their values jx_g0 .. jx_g<G-1>):
 * the post's row gidx = row, its loads of the group's values (its last arg) those values (jx_gv).
 * Every lane runs its reductions over the group in order (ridx unrolled); lane 0 stores
 * its outputs (out<1 + k's extra ones> ..), lane j < G its row output's element j. */
static bool render_group_post(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals, const char *row) {
  const Kernel *q = k->post;
  int64_t G = q->reduction.size;
  /* its one load of the group's values (kernel_check: only at gidx * G + ridx; nodes are
   * hash-consed) */
  const AluExp *at = kernel_group_index(q), *load = at ? alu_global(k->nargs, k->dtype, at) : NULL;
  const AluExp *gv = alu_variable("jx_gv", k->dtype);
  Kernel qq = *q;
  bool ok = load && gv && G <= 32;
  if (ok) ok = (qq.exp = cuda_replace_node(q->exp, load, gv)) != NULL;
  if (ok && q->has_pre) ok = (qq.pre_exp = cuda_replace_node(q->pre_exp, load, gv)) != NULL;
  if (ok && q->has_row_out) ok = (qq.row_exp = cuda_replace_node(q->row_exp, load, gv)) != NULL;
  if (!ok) return false;
  int obase = 1 + k->nextra;
  buf_printf(b, "    {\n      const int64_t gidx = %s;\n      (void)gidx;\n", row);
  if (q->has_pre) {
    ok = group_pass(lang, b, nlocals, &q->pre, qq.pre_exp, "jx_pp", G, k->dtype);
    buf_printf(b, "      const %s pre = jx_pp;\n      (void)pre;\n", ctype_of(q->pre.dtype));
  }
  ok = ok && group_pass(lang, b, nlocals, &q->reduction, qq.exp, "jx_pa", G, k->dtype);
  buf_str(b, "      if (jx_lane == 0) {\n");
  ok = ok && cuda_red_store_at(lang, &qq, b, nlocals, "        ", "jx_pa", obase);
  buf_str(b, "      }\n");
  if (ok && q->has_row_out) {
    buf_printf(b, "      if (jx_lane < %lld) {\n        const %s acc = jx_pa;\n        (void)acc;\n", (long long)G,
               ctype_of(q->reduction.dtype));
    buf_str(b, "        const int64_t ridx = jx_lane;\n");
    buf_printf(b, "        const %s jx_gv = ", ctype_of(k->dtype));
    for (int64_t j = 0; j + 1 < G; j++) buf_printf(b, "jx_lane == %lld ? jx_g%lld : ", (long long)j, (long long)j);
    buf_printf(b, "jx_g%lld;\n", (long long)(G - 1));
    EmitPart pe = {.lang = lang, .out = b, .indent = "        ", .nlocals = nlocals};
    char *v = emit_part(&pe, qq.row_exp);
    ok = v != NULL;
    if (ok) {
      buf_printf(b, "        out%d[gidx * %lldLL + ridx] = ", obase + 1 + q->nextra, (long long)G);
      emit_store(b, q->row_dtype, v);
      buf_str(b, ";\n      }\n");
    }
    free(v);
  }
  buf_str(b, "    }\n");
  return ok && !b->oom;
}

/* outputs whose own loads a grouped warp row issues together (JAXC_CUDA_ROW_GROUP_LOADS
 * = 1..16 tries others, measuring) */
#define WARP_GROUP_LOADS_DEFAULT 5
static int warp_group_loads(void) {
  static int v = -1;
  return config_env_setting(&v, "JAXC_CUDA_ROW_GROUP_LOADS", WARP_GROUP_LOADS_DEFAULT, 1, RENDER_CUDA_ROW_GROUP_MAX);
}
/* CUDA_WARP_ROW grouped (plan group G > 1, 16-byte loads): warp jx_w computes outputs
 * gidx = G RM jx_w + G r + j, r < RM (plan rows), j < G, in one pass over the rows. Each
 * step a lane reads 4 elements of each input at its row base + ridx as a warp row does
 * (the same elements in the same order, so the same sums): the inputs of class all and
 * row (group_classes: a bias, x[m, :]) once for the outputs that share them, all of a row
 * of up to 512 ahead (128 RM elements at most a lane); the values computed from them
 * alone (the MLP's relu(x @ W1 + b1)) once a step for their row, into jx_s<n>_v[4]; then
 * each j in turn reads the col inputs' 4 elements (w^T[j, :], L1 hits) once for the RM
 * rows and adds their terms, warp_group_loads() outputs' 16-byte vectors live at a time:
 * all G of every step at once took 214 registers for the MLP's 10 (one block of 8 warps a
 * multiprocessor: 11 us on an H100, latency-bound). The lanes combine each output by the
 * same butterfly. */
bool cuda_render_warp_group(const RenderLang *lang, const Kernel *k, const RenderCudaPlan *plan, Buf *b,
                              int *nlocals) {
  const Reduction *r = &k->reduction;
  int G = plan->group, RM = plan->rows > 1 ? plan->rows : 1, GT = G * RM, nf = 0;
  int64_t R = r->size, N = k->size;
  uint64_t vec = plan->vec_inputs;
  int ahead = R / 128 < 4 ? (int)(R / 128) : 4;
  if (ahead > 1 && RM > 1) ahead = ahead / RM > 1 ? ahead / RM : 1;
  const char *ct = ctype_of(r->dtype);
  const AluExp **roots = calloc((size_t)GT, sizeof *roots), *(*bases)[64] = calloc((size_t)GT, sizeof *bases);
  const AluExp *front[WARP_GROUP_MAX_SHARED];
  char *fv[WARP_GROUP_MAX_SHARED] = {0};
  Buf ident = {0}, combs = {0}, rb = {0}, fbody = {0};
  GroupClasses c = {0};
  bool ok = roots && bases && ahead >= 1 && group_classes(k, G, RM, vec, bases, &c);
  uint64_t shared = c.all | c.row;
  for (int o = 0; o < GT && ok; o++)
    ok = (roots[o] = cuda_grouped_vector_loads(cuda_grouped_exp(k->exp, N, GT, o), k, &c, o / G, o % G)) != NULL;
  /* the shared values the outputs' own terms read (the frontier), and each output's
   * expression over them as VARIABLEs jx_s<n> */
  AluMap dep;
  alu_map_init(&dep);
  for (int o = 0; o < GT && ok; o++) {
    int64_t n;
    const AluExp **order = alu_toposort(roots[o], &n);
    ok = order != NULL;
    for (int64_t i = 0; ok && i < n; i++) {
      const AluExp *x = order[i];
      bool top = i == n - 1 && !per_output(x, &dep);
      for (int s = 0; ok && s < (top ? 1 : x->nsrc); s++) {
        const AluExp *y = top ? x : x->src[s];
        if ((!top && !per_output(x, &dep)) || per_output(y, &dep) || y->op == ALU_CONST) continue;
        int f = 0;
        while (f < nf && front[f] != y) f++;
        if (f == nf) ok = nf < WARP_GROUP_MAX_SHARED, front[nf < WARP_GROUP_MAX_SHARED ? nf++ : 0] = y;
      }
    }
    free(order);
  }
  alu_map_free(&dep);
  for (int o = 0; o < GT && ok; o++)
    for (int f = 0; f < nf && ok; f++) {
      char name[24];
      snprintf(name, sizeof name, "jx_s%d", f);
      ok = (roots[o] = cuda_replace_node(roots[o], front[f], alu_variable(name, front[f]->dtype))) != NULL;
    }
  EmitPart pf = {.lang = lang, .out = &fbody, .indent = "          ", .nlocals = nlocals};
  ok = ok && emit_parts(&pf, front, nf, fv);
  for (int o = 0; o < GT && ok; o++) {
    char acc[24];
    snprintf(acc, sizeof acc, "jx_acc%d", o);
    Buf cb = {0};
    ok = emit_step(&pf, &cb, r, acc, "jx_other");
    buf_printf(&combs, "      { const %s jx_other = __shfl_xor_sync(0xffffffffu, %s, o); %s = %s; }\n", ct, acc, acc,
               cb.s ? cb.s : "");
    free(cb.s);
  }
  /* the row bases: one for an input of class all, one a row (row), one a j (col) */
  EmitPart pb = {.lang = lang, .out = &rb, .indent = "    ", .nlocals = nlocals};
  for (int i = 0; i < k->nargs && i < 64 && ok; i++) {
    if (!(vec >> i & 1)) continue;
    bool all = c.all >> i & 1, row = c.row >> i & 1;
    for (int q = 0; q < (all ? 1 : row ? RM : G) && ok; q++) {
      char *bv = emit_part(&pb, bases[row ? q * G : q][i]);
      if (!bv) ok = false;
      else if (all) buf_printf(&rb, "    const int64_t jx_rb%d = %s;\n", i, bv);
      else if (row) buf_printf(&rb, "    const int64_t jx_rb%dr%d = %s;\n", i, q, bv);
      else buf_printf(&rb, "    const int64_t jx_rb%d_%d = %s;\n", i, q, bv);
      free(bv);
    }
  }
  emit_const(&ident, r->dtype, r->identity);
  ok = ok && !combs.oom && !ident.oom && !rb.oom && !fbody.oom;
  if (ok) {
    buf_str(b, "  const int jx_lane = threadIdx.x & 31;\n");
    buf_printf(b, "  for (int64_t jx_w = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); jx_w < %lldLL; "
                  "jx_w += (int64_t)gridDim.x * (blockDim.x >> 5)) {\n", (long long)(N / GT));
    for (int o = 0; o < GT; o++) buf_printf(b, "    %s jx_acc%d = %s;\n", ct, o, ident.s);
    buf_str(b, rb.s);
    buf_printf(b, "    for (int64_t jx_r4 = 4 * (int64_t)jx_lane; jx_r4 < %lldLL; jx_r4 += %d) {\n", (long long)R, 128 * ahead);
    /* the shared inputs' vectors of the step (xa<i>_<a>, xa<i>r<r>_<a>) */
    for (int a = 0; a < ahead; a++)
      for (int i = 0; i < k->nargs && i < 64; i++)
        for (int q = 0; q < ((c.row >> i & 1) ? RM : 1) && (shared >> i & 1); q++) {
          char suf[16] = "";
          if (c.row >> i & 1) snprintf(suf, sizeof suf, "r%d", q);
          buf_printf(b, "      %s xa%d%s_%d[4];\n      if (jx_r4 + %d < %lldLL) { const uint4 u = __ldg((const uint4 *)(in%d + "
                        "jx_rb%d%s + jx_r4 + %d)); memcpy(xa%d%s_%d, &u, 16); }\n",
                     emit_types[k->arg_dtypes[i]].elem, i, suf, a, 128 * a, (long long)R, i, i, suf, 128 * a, i, suf, a);
        }
    for (int a = 0; a < ahead && ok; a++) {
      buf_printf(b, "      if (jx_r4 + %d < %lldLL) {\n", 128 * a, (long long)R);
      /* the shared values of the step's 4 elements */
      for (int f = 0; f < nf; f++) buf_printf(b, "        %s jx_s%d_v[4];\n", ctype_of(front[f]->dtype), f);
      buf_str(b, "        #pragma unroll\n        for (int jx_j = 0; jx_j < 4; jx_j++) {\n");
      buf_printf(b, "          const int64_t ridx = jx_r4 + %d + jx_j;\n          (void)ridx;\n", 128 * a);
      for (int i = 0; i < k->nargs && i < 64; i++) {
        if (c.all >> i & 1) buf_printf(b, "          const %s xv%d = xa%d_%d[jx_j];\n", ctype_of(k->arg_dtypes[i]), i, i, a);
        for (int q = 0; q < RM && (c.row >> i & 1); q++)
          buf_printf(b, "          const %s xv%dr%d = xa%dr%d_%d[jx_j];\n", ctype_of(k->arg_dtypes[i]), i, q, i, q, a);
      }
      buf_str(b, fbody.s ? fbody.s : "");
      for (int f = 0; f < nf; f++) buf_printf(b, "          jx_s%d_v[jx_j] = %s;\n", f, fv[f]);
      buf_str(b, "        }\n");
      /* each j's own elements (read once for the RM rows) and its outputs' terms,
       * warp_group_loads() j at a time: their loads (plain loads, in order behind a
       * compiler barrier), then their terms. One output's load then its terms left one L1
       * round trip in flight a warp (10.6 us, 70% of the warps' cycles waiting on L1, H100
       * ncu); with no barrier NVVM hoisted all G x steps of loads to the top (214
       * registers) */
      for (int j0 = 0, nl = warp_group_loads(); j0 < G && ok; j0 += nl) {
        int j1 = j0 + nl < G ? j0 + nl : G;
        buf_str(b, "        {\n          asm volatile(\"\" ::: \"memory\");\n");
        for (int j = j0; j < j1; j++)
          for (int i = 0; i < k->nargs && i < 64; i++)
            if (c.col >> i & 1)
              buf_printf(b, "          %s xb%d_%d[4];\n          { const uint4 u = *((const uint4 *)(in%d + jx_rb%d_%d + "
                            "jx_r4 + %d)); memcpy(xb%d_%d, &u, 16); }\n",
                         emit_types[k->arg_dtypes[i]].elem, i, j, i, i, j, 128 * a, i, j);
        for (int j = j0; j < j1 && ok; j++) {
          buf_str(b, "          #pragma unroll\n          for (int jx_j = 0; jx_j < 4; jx_j++) {\n");
          buf_printf(b, "            const int64_t ridx = jx_r4 + %d + jx_j;\n            (void)ridx;\n", 128 * a);
          for (int i = 0; i < k->nargs && i < 64; i++)
            if (c.col >> i & 1)
              buf_printf(b, "            const %s xv%d_%d = xb%d_%d[jx_j];\n", ctype_of(k->arg_dtypes[i]), i, j, i, j);
          for (int q = 0; q < RM && ok; q++) {
            int o = q * G + j;
            buf_str(b, "            {\n");
            for (int f = 0; f < nf; f++)
              buf_printf(b, "              const %s jx_s%d = jx_s%d_v[jx_j];\n              (void)jx_s%d;\n",
                         ctype_of(front[f]->dtype), f, f, f);
            char acc[24];
            snprintf(acc, sizeof acc, "jx_acc%d", o);
            EmitPart pj = {.lang = lang, .out = b, .indent = "              ", .nlocals = nlocals};
            char *v = emit_part(&pj, roots[o]);
            Buf st = {0};
            ok = v && emit_step(&pj, &st, r, acc, v) && !st.oom;
            if (ok) buf_printf(b, "              %s = %s;\n            }\n", acc, st.s);
            free(v), free(st.s);
          }
          buf_str(b, "          }\n");
        }
        buf_str(b, "        }\n");
      }
      buf_str(b, "      }\n");
    }
    buf_str(b, "    }\n    for (int o = 16; o > 0; o /= 2) {\n");
    buf_str(b, combs.s);
    buf_str(b, "    }\n");
    buf_str(b, "    if (jx_lane == 0) {\n");
    for (int o = 0; o < GT && ok; o++) {
      char acc[24];
      snprintf(acc, sizeof acc, "jx_acc%d", o);
      buf_printf(b, "      {\n        const int64_t gidx = jx_w * %dLL + %d;\n", GT, o);
      ok = cuda_red_store(lang, k, b, nlocals, "        ", acc);
      buf_str(b, "      }\n");
    }
    buf_str(b, "    }\n");
    /* a group epilogue's values, row by row: the sums (no epilogue, the output's dtype:
     * Backend.row_group) */
    for (int q = 0; q < RM && ok && k->post; q++) {
      char row[48];
      snprintf(row, sizeof row, "jx_w * %dLL + %d", RM, q);
      buf_str(b, "    {\n");
      for (int j = 0; j < G; j++) buf_printf(b, "    const %s jx_g%d = jx_acc%d;\n", ctype_of(k->dtype), j, q * G + j);
      ok = render_group_post(lang, k, b, nlocals, row);
      buf_str(b, "    }\n");
    }
    buf_str(b, "  }\n");
  }
  if (!ok && jx_last_status() == JX_OK)
    error_set(combs.oom || ident.oom || rb.oom || fbody.oom || !roots || !bases ? JX_ERR_OOM : JX_ERR_INTERNAL,
              "render: grouped warp rows: %s",
              combs.oom || ident.oom || rb.oom || fbody.oom || !roots || !bases ? "out of memory" : "no group");
  for (int f = 0; f < nf; f++) free(fv[f]);
  free(ident.s), free(combs.s), free(rb.s), free(fbody.s);
  free(roots), free(bases);
  return ok && !b->oom;
}

