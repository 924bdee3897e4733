/* c.c -- the C framing of kernels for the cpu backend: a thread of the pool computes
 * the outputs [start, end) of a kernel, in flat loops, loop nests over the digits of
 * the output index (16/256-lane blocks that compilers vectorize, JX_IVDEP) and
 * reductions in ir/alu.h's order. Expressions come from the portable emitter (emit.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "render/emit.h"

static bool c_frame(const RenderLang *lang, const Kernel *k, Buf *body, int *nlocals);

/* Generated at build time from prelude_c.h + prelude.h (CMakeLists.txt, jaxc_embed). */
extern const char render_prelude_c_text[];
extern const size_t render_prelude_c_text_len;

const RenderLang render_c = {
    .name = "c",
    .fn_prefix = "",
    .params = "(void *const *in, void *const *out, int64_t start, int64_t end)",
    .restrict_kw = "restrict",
    .overrides = NULL,
    .frame = c_frame,
    .global_index = NULL, /* loops over [start, end) */
    .prelude = render_prelude_c_text,
    .prelude_len = &render_prelude_c_text_len,
};

/* Outputs of one reduction block: accumulators kept side by side so the loop over them
 * vectorizes (each output still accumulates ridx = 0, 1, ... in order). When the loads
 * of neighbouring outputs are neighbours (column sums), wide blocks stream through
 * memory; otherwise (row sums) a block of 16 becomes 16 independent scalar chains.
 * Measured on AVX-512, sum over a (512, 4096) f32 array: columns 2.0 ms with 16 lanes,
 * 0.24 ms with 256; rows 0.7 ms with 16 unrolled lanes, 1.2-1.6 ms as a lane loop. */
#define REDUCE_BLOCK 16
#define REDUCE_BLOCK_WIDE 256

static void render_store(Buf *b, const Kernel *k, const char *indent, const char *value) {
  buf_printf(b, "%sout0[gidx] = ", indent);
  emit_store(b, k->dtype, value);
  buf_str(b, ";\n");
}

/* ------------------------------------------------------------ loop nests */

/* Kernels address their operands through div/mod of the flat output index gidx by the
 * shape's suffix products ((gidx / 448) % 14 is a row of a (B, 14, 14, 32) image). A
 * nest turns those digits into loop variables: gidx = go*B + i[n-1]*s[n-1] + ... + i0,
 * with s[0] = 1 < s[1] < ... < s[n] = B each dividing the next and i[k] in
 * [0, s[k+1]/s[k]). After substitution the simplifier folds every div/mod by an s[k]
 * into the loop variables, and the innermost loop reads contiguous or strided operands
 * that compilers vectorize (a div and a mod per element defeat them). */
#define NEST_MAX 6

typedef struct Nest {
  int n;                   /* loop variables below the block index go (0: no nest) */
  int64_t s[NEST_MAX + 1]; /* strides; s[n] is the block B */
} Nest;

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Divisors D of gidx in e (gidx / D, gidx % D, and D*b from (gidx / D) % b), up to cap. */
static int gidx_divisors(const AluExp *e, int64_t *ds, int cap) {
  int64_t n;
  int nd = 0;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n && nd + 2 <= cap; i++) {
    const AluExp *x = order[i];
    if ((x->op != ALU_DIV && x->op != ALU_MOD) || x->src[1]->op != ALU_CONST) continue;
    const AluExp *y = x->src[0];
    int64_t d = x->src[1]->value.i;
    if (y->op == ALU_SPECIAL && strcmp(y->name, "gidx") == 0) {
      ds[nd++] = d;
    } else if (x->op == ALU_MOD && y->op == ALU_DIV && y->src[1]->op == ALU_CONST &&
               y->src[0]->op == ALU_SPECIAL && strcmp(y->src[0]->name, "gidx") == 0) {
      int64_t a = y->src[1]->value.i, ab;
      if (a > 0 && d > 0 && !__builtin_mul_overflow(a, d, &ab)) ds[nd++] = ab;
    }
  }
  free((void *)order);
  return nd;
}

/* The nest of e over size outputs: a divisibility chain of its gidx divisors, cut at
 * the largest stride that leaves at least 16 blocks (the partial blocks at the ends
 * of a thread's [start, end) run in the flat loop). n = 0 when e has no divisor. With
 * `lanes`, s[1] (the innermost extent) must be at most `lanes`. */
static Nest find_nest(const AluExp *e, const AluExp *e2, int64_t size, int64_t lanes) {
  int64_t ds[64];
  int nd = gidx_divisors(e, ds, 32);
  if (e2) nd += gidx_divisors(e2, ds + nd, 32);
  qsort(ds, (size_t)nd, sizeof ds[0], cmp_i64);
  Nest nest = {.n = 0, .s = {1}};
  for (int i = 0; i < nd && nest.n < NEST_MAX; i++) {
    int64_t d = ds[i], last = nest.s[nest.n];
    if (d <= last || d % last != 0 || size / d < 16) continue;
    if (lanes && nest.n == 0 && d > lanes) break;
    nest.s[++nest.n] = d;
  }
  return nest;
}

/* e with gidx = go*B + sum i<k>*s[k] (loop variables as SPECIALs), simplified. */
static const AluExp *nest_rewrite(const AluExp *e, const Nest *nest, int64_t size) {
  if (!e) return NULL;
  int64_t B = nest->s[nest->n];
  const AluExp *g = alu_binary(ALU_MUL, alu_special("go", (size + B - 1) / B),
                               alu_const_int(JX_INT64, B));
  static const char *const names[NEST_MAX] = {"i0", "i1", "i2", "i3", "i4", "i5"};
  for (int k = nest->n - 1; k >= 0; k--) {
    const AluExp *ik = alu_special(names[k], nest->s[k + 1] / nest->s[k]);
    g = alu_binary(ALU_ADD, g, k ? alu_binary(ALU_MUL, ik, alu_const_int(JX_INT64, nest->s[k])) : ik);
  }
  return alu_simplify(alu_substitute(e, "gidx", g));
}

/* Indentation for loop depth d (0: the kernel body's). */
static const char *pad(int d) {
  static const char spaces[] = "                                            ";
  int n = 2 + 2 * d;
  return n < (int)sizeof spaces ? spaces + sizeof spaces - 1 - n : spaces;
}

/* Opens the block loop over whole blocks in [head_end, row_end); returns depth 1. */
static int nest_open_block(Buf *b, const Nest *nest) {
  int64_t B = nest->s[nest->n];
  buf_printf(b, "  for (int64_t go = head_end / %lldLL; go < row_end / %lldLL; go++) {\n",
             (long long)B, (long long)B);
  return 1;
}

/* Opens the loops of i[hi] .. i[lo] (none if hi < lo) at depth d; returns the new depth. */
static int nest_open_loops(Buf *b, const Nest *nest, int hi, int lo, int d) {
  for (int k = hi; k >= lo; k--, d++)
    buf_printf(b, k == 0 ? "%sJX_IVDEP\n%sfor (int64_t i%d = 0; i%d < %lldLL; i%d++) {\n"
                         : "%s%sfor (int64_t i%d = 0; i%d < %lldLL; i%d++) {\n", pad(d), k == 0 ? pad(d) : "", k, k,
               (long long)(nest->s[k + 1] / nest->s[k]), k);
  return d;
}

/* Declares gx (this iteration's gidx) from the loop variables. */
static void nest_gx(Buf *b, const Nest *nest, const char *indent) {
  buf_printf(b, "%sconst int64_t gx = go * %lldLL", indent, (long long)nest->s[nest->n]);
  for (int k = nest->n - 1; k >= 0; k--)
    buf_printf(b, k ? " + i%d * %lldLL" : " + i%d", k, (long long)nest->s[k]);
  buf_str(b, ";\n");
}

/* Closes loops from depth d down to depth `to`. */
static void nest_close(Buf *b, int d, int to) {
  while (d > to) buf_printf(b, "%s}\n", pad(--d));
}

/* The loop variable worth splitting: the innermost i[k], k >= 1, of at most 16
 * iterations that e compares with constants (a concatenation's select chain, as in an
 * im2col's kernel position, or the borders of a padded image). -1 if none. */
static int nest_specialize(const AluExp *e, const Nest *nest) {
  int64_t n;
  int best = -1;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n; i++) {
    const AluExp *x = order[i];
    if (alu_op_group(x->op) != ALU_GROUP_COMPARE) continue;
    for (int side = 0; side < 2; side++) {
      const AluExp *v = x->src[side], *c = x->src[1 - side];
      if (v->op != ALU_SPECIAL || c->op != ALU_CONST || v->name[0] != 'i') continue;
      int k = atoi(v->name + 1);
      if (k >= 1 && k < nest->n && nest->s[k + 1] / nest->s[k] <= 16 && (best < 0 || k < best))
        best = k;
    }
  }
  free((void *)order);
  return best;
}

/* The ranges of loop variable `var` (extent n) over which every comparison of var with
 * a constant in e has one value: breakpoints bp[0] = 0 < ... < bp[nb] = n. */
static int split_points(const AluExp *e, const char *var, int64_t n, int64_t *bp) {
  int64_t m, pts[64];
  int np = 0;
  const AluExp **order = alu_toposort(e, &m);
  for (int64_t i = 0; order && i < m && np + 2 <= 64; i++) {
    const AluExp *x = order[i];
    if (alu_op_group(x->op) != ALU_GROUP_COMPARE) continue;
    for (int side = 0; side < 2; side++) {
      const AluExp *v = x->src[side], *c = x->src[1 - side];
      if (v->op != ALU_SPECIAL || c->op != ALU_CONST || strcmp(v->name, var) != 0) continue;
      int64_t k = c->value.i; /* var < k: k; k < var: k + 1; var == k, var != k: both */
      if (x->op == ALU_CMPLT) pts[np++] = side == 0 ? k : k + 1;
      else pts[np++] = k, pts[np++] = k + 1;
    }
  }
  free((void *)order);
  pts[np++] = 0;
  pts[np++] = n;
  qsort(pts, (size_t)np, sizeof pts[0], cmp_i64);
  int nb = 0;
  for (int i = 0; i < np; i++)
    if (pts[i] >= 0 && pts[i] <= n && (nb == 0 || pts[i] != bp[nb - 1])) bp[nb++] = pts[i];
  return nb - 1; /* ranges */
}

/* The [start, end) split into a head and a tail of partial blocks (flat loops) and
 * whole blocks of B between them: declares head_end and row_end. */
static void nest_bounds(Buf *b, int64_t B) {
  buf_printf(b, "  int64_t row_end = end - end %% %lldLL;\n", (long long)B);
  buf_printf(b, "  int64_t head_end = (start + %lldLL - 1) / %lldLL * %lldLL;\n", (long long)B,
             (long long)B, (long long)B);
  buf_str(b, "  if (head_end > end) head_end = end;\n");
  buf_str(b, "  if (row_end < head_end) row_end = head_end;\n");
}

/* Whether a SPECIAL named var occurs in e. */
static bool mentions(const AluExp *e, const char *var) {
  int64_t n;
  bool found = false;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n && !found; i++)
    found = order[i]->op == ALU_SPECIAL && strcmp(order[i]->name, var) == 0;
  free((void *)order);
  return found;
}

/* e with node `from` replaced by `to` (nodes are hash-consed: pointer identity). */
static const AluExp *replace_node(const AluExp *e, const AluExp *from, const AluExp *to,
                                  AluMap *memo) {
  if (e == from) return to;
  if (!e->nsrc) return e;
  const void *hit;
  if (alu_map_get(memo, e, &hit)) return hit;
  const AluExp *src[4];
  for (int i = 0; i < e->nsrc; i++)
    if (!(src[i] = replace_node(e->src[i], from, to, memo))) return NULL;
  const AluExp *r = alu_make(e->op, e->dtype, e->nsrc, src, e->value, e->arg, e->name);
  if (r) alu_map_put(memo, e, r);
  return r;
}

/* The conditions of e's guarded loads (in[c ? i : 0]) that do not involve var, up to
 * cap: loop invariants of the loop over var. */
static int invariant_guards(const AluExp *e, const char *var, const AluExp **g, int cap) {
  int64_t n;
  int ng = 0;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n && ng < cap; i++) {
    if (!emit_guarded_load(order[i])) continue;
    const AluExp *c = order[i]->src[0]->src[0];
    bool seen = false;
    for (int j = 0; j < ng; j++) seen |= g[j] == c;
    if (!seen && !mentions(c, var)) g[ng++] = c;
  }
  free((void *)order);
  return ng;
}

/* The innermost loop (over i0) of a nest block at depth d, storing out0[gx] = e. When
 * e reads padding under conditions that are invariant in i0 (the borders of an image),
 * the loop is unswitched: where they all hold, a copy with plain loads (which
 * vectorizes); elsewhere the guarded form. */
static bool render_inner(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                         const Nest *nest, const AluExp *e, int d, int64_t lo, int64_t len) {
  const AluExp *guards[8], *fast = e;
  int ng = invariant_guards(e, len ? "j0" : "i0", guards, 8);
  for (int i = 0; i < ng && fast; i++) {
    AluMap memo;
    alu_map_init(&memo);
    fast = replace_node(fast, guards[i], alu_const_int(JX_BOOL, 1), &memo);
    alu_map_free(&memo);
  }
  fast = ng && fast ? alu_simplify(fast) : NULL;
  if (ng && !fast) return false;
  int path = 0;
  if (ng) { /* the guards' locals first, then the test */
    EmitPart pc = {.lang = lang, .out = b, .indent = pad(d), .nlocals = nlocals};
    Buf cond = {0};
    for (int i = 0; i < ng; i++) {
      char *t = emit_part(&pc, guards[i]);
      if (!t) {
        free(cond.s);
        return false;
      }
      buf_printf(&cond, " && %s", t);
      free(t);
    }
    buf_printf(b, "%sif (1%s) {\n", pad(d), cond.s ? cond.s : "");
    b->oom |= cond.oom;
    free(cond.s);
    d++;
  } else {
    path = 1;
  }
  for (; path < 2; path++) {
    if (ng && path == 1) buf_printf(b, "%s} else {\n", pad(d - 1));
    int di = d;
    if (len) { /* one range of i0 (render_inner_split) */
      buf_printf(b, "%sJX_IVDEP\n%sfor (int64_t j0 = 0; j0 < %lldLL; j0++) {\n", pad(di), pad(di), (long long)len);
      buf_printf(b, "%s  const int64_t i0 = %lldLL + j0;\n", pad(di), (long long)lo);
      di++;
    } else {
      di = nest_open_loops(b, nest, 0, 0, d);
    }
    nest_gx(b, nest, pad(di));
    EmitPart q = {.lang = lang, .out = b, .indent = pad(di), .nlocals = nlocals};
    char *w = emit_part(&q, path == 0 ? fast : e);
    if (!w) return false;
    buf_printf(b, "%sout0[gx] = ", pad(di));
    emit_store(b, k->dtype, w);
    buf_str(b, ";\n");
    free(w);
    nest_close(b, di, d);
  }
  if (ng) buf_printf(b, "%s}\n", pad(d - 1));
  return true;
}

/* The innermost loop, split where e compares i0 with constants (a concatenation along
 * the last axis, as the gradients of its slices are summed: the LSTM's four gates) into
 * ranges over which each comparison has one value: there the selects fold and the loop
 * vectorizes, where the whole row's loop ran a select chain and guarded loads per
 * element. At most 16 ranges; otherwise (or with no such comparison) one loop. */
static bool render_inner_split(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                               const Nest *nest, const AluExp *e, int d) {
  int64_t bp[66];
  int ranges = split_points(e, "i0", nest->s[1] / nest->s[0], bp);
  if (ranges <= 1 || ranges > 16) return render_inner(lang, k, b, nlocals, nest, e, d, 0, 0);
  for (int c = 0; c < ranges; c++) {
    int64_t lo = bp[c], len = bp[c + 1] - bp[c];
    const AluExp *at = alu_binary(ALU_ADD, alu_special("j0", len), alu_const_int(JX_INT64, lo));
    const AluExp *ec = at ? alu_simplify(alu_substitute(e, "i0", at)) : NULL;
    if (!ec || !render_inner(lang, k, b, nlocals, nest, ec, d, lo, len)) return false;
  }
  return true;
}

/* The whole blocks of an elementwise nest: out0[gx] = nested (a specialized loop
 * variable, if any, unrolled into one copy of the inner loops per value). */
static bool render_nest_body(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                             const Nest *nest, const AluExp *nested) {
  int sp = nest_specialize(nested, nest);
  int d = nest_open_block(b, nest);
  d = nest_open_loops(b, nest, nest->n - 1, sp >= 0 ? sp + 1 : 1, d);
  int64_t bp[66];
  char name[16];
  snprintf(name, sizeof name, "i%d", sp);
  int ranges = sp >= 0 ? split_points(nested, name, nest->s[sp + 1] / nest->s[sp], bp) : 1;
  for (int c = 0; c < ranges; c++) {
    int dc = d;
    const AluExp *e = nested;
    if (sp >= 0) { /* i = lo + j, j in [0, hi - lo): the comparisons fold */
      int64_t lo = bp[c], len = bp[c + 1] - bp[c];
      const AluExp *j = alu_special("j", len);
      e = alu_simplify(alu_substitute(
          nested, name, len == 1 ? alu_const_int(JX_INT64, lo)
                                 : alu_binary(ALU_ADD, j, alu_const_int(JX_INT64, lo))));
      if (!e) return false;
      buf_printf(b, "%sfor (int64_t j%d = 0; j%d < %lldLL; j%d++) { /* %s in [%lld, %lld) */\n",
                 pad(dc), sp, sp, (long long)len, sp, name, (long long)lo, (long long)bp[c + 1]);
      buf_printf(b, "%s  const int64_t %s = %lldLL + j%d;\n", pad(dc), name, (long long)lo, sp);
      if (len > 1) {
        char jn[16];
        snprintf(jn, sizeof jn, "j%d", sp);
        e = alu_substitute(e, "j", alu_special(jn, len));
        if (!e) return false;
      }
      dc = nest_open_loops(b, nest, sp - 1, 1, dc + 1);
    }
    if (!render_inner_split(lang, k, b, nlocals, nest, e, dc)) return false;
    nest_close(b, dc, d);
  }
  nest_close(b, d, 0);
  return true;
}

/* One loop over [start, end), or -- when the kernel's indices are digits of gidx -- a
 * nest (see Nest) over whole blocks, with the partial blocks at both ends in the flat
 * loop. Both compute exactly the same values. */
static bool render_elementwise(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals) {
  if (k->nextra) { /* several outputs: one flat loop storing each */
    const AluExp *roots[KERNEL_MAX_OUTS] = {k->exp};
    char *v[KERNEL_MAX_OUTS] = {0};
    for (int o = 0; o < k->nextra; o++) roots[1 + o] = k->extra[o];
    EmitPart p = {.lang = lang, .out = b, .indent = "    ", .nlocals = nlocals};
    buf_str(b, "  JX_IVDEP\n  for (int64_t gidx = start; gidx < end; gidx++) {\n");
    if (!emit_parts(&p, roots, 1 + k->nextra, v)) return false;
    for (int o = 0; o <= k->nextra; o++) {
      jx_dtype d = o ? k->extra_dtypes[o - 1] : k->dtype;
      buf_printf(b, "    out%d[gidx] = ", o);
      emit_store(b, d, v[o]);
      buf_str(b, ";\n");
      free(v[o]);
    }
    buf_str(b, "  }\n");
    return true;
  }
  Nest nest = find_nest(k->exp, NULL, k->size, 0);
  const AluExp *nested = nest.n ? nest_rewrite(k->exp, &nest, k->size) : NULL;
  EmitPart p = {.lang = lang, .out = b, .indent = "    ", .nlocals = nlocals};
  if (!nested) {
    buf_str(b, "  JX_IVDEP\n  for (int64_t gidx = start; gidx < end; gidx++) {\n");
    char *v = emit_part(&p, k->exp);
    if (!v) return false;
    render_store(b, k, "    ", v);
    free(v);
    buf_str(b, "  }\n");
    return true;
  }
  nest_bounds(b, nest.s[nest.n]);
  for (int part = 0; part < 2; part++) {
    buf_str(b, part == 0 ? "  JX_IVDEP\n  for (int64_t gidx = start; gidx < head_end; gidx++) {\n"
                         : "  JX_IVDEP\n  for (int64_t gidx = row_end; gidx < end; gidx++) {\n");
    char *v = emit_part(&p, k->exp);
    if (!v) return false;
    render_store(b, k, "    ", v);
    free(v);
    buf_str(b, "  }\n");
    if (part == 0 && !render_nest_body(lang, k, b, nlocals, &nest, nested)) return false;
  }
  return true;
}

/* Whether every load below e reads the same or the next element when loop variable
 * `var` (of range n) steps by one (by simplifying the difference of the two index
 * expressions). */
static bool lanes_contiguous(const AluExp *e, const char *var, int64_t n) {
  int64_t count;
  const AluExp **order = alu_toposort(e, &count);
  if (!order) return false;
  const AluExp *v1 = alu_binary(ALU_ADD, alu_special(var, n), alu_const_int(JX_INT64, 1));
  bool ok = v1 != NULL;
  for (int64_t i = 0; i < count && ok; i++) {
    if (order[i]->op != ALU_GLOBAL_INDEX) continue;
    const AluExp *idx = order[i]->src[0];
    const AluExp *d = alu_simplify(alu_binary(ALU_SUB, alu_substitute(idx, var, v1), idx));
    ok = d && d->op == ALU_CONST && (d->value.i == 0 || d->value.i == 1);
  }
  free((void *)order);
  return ok;
}

/* The texts a reduction block needs: the loaded value's statements (`body`), the
 * accumulator step and the identity. */
typedef struct RedText {
  Buf body, step, ident;
  char *value; /* the loaded value's text */
} RedText;

static bool red_text(EmitPart *p, const Reduction *r, const AluExp *exp, const char *acc,
                     RedText *t) {
  *t = (RedText){0};
  p->out = &t->body;
  t->value = emit_part(p, exp);
  bool ok = t->value && emit_step(p, &t->step, r, acc, t->value);
  emit_const(&t->ident, r->dtype, r->identity);
  return ok && !t->body.oom && !t->step.oom && !t->ident.oom;
}

static void red_text_free(RedText *t) {
  free(t->body.s);
  free(t->step.s);
  free(t->ident.s);
  free(t->value);
}


/* A row output (ir/alu.h, Kernel.has_row_out), after the row's reduced value is stored:
 * out[at * R + ridx] = row_exp for ridx = 0 .. R - 1, one vector loop while the row is
 * still in cache (the lanes and flat forms reduce LANES_ROW_BLOCK or REDUCE_BLOCK rows
 * of a block first: 8 rows of 1024 floats are 32 KB). `acc` is the reduced value before
 * the epilogue, `pre` already this output's first phase (render_reduction). Softmax's
 * exp(x - max) / sum is its sum's row output: one kernel, the input read from memory
 * once, instead of max, exp, sum and division kernels. */
static bool render_row_out(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                           const char *indent, const char *at) {
  if (!k->has_row_out) return true;
  char in2[64];
  snprintf(in2, sizeof in2, "%s  ", indent);
  buf_printf(b, "%sJX_IVDEP\n%sfor (int64_t ridx = 0; ridx < %lldLL; ridx++) {\n", indent, indent,
             (long long)k->reduction.size);
  EmitPart pe = {.lang = lang, .out = b, .indent = in2, .nlocals = nlocals};
  char *e = emit_part(&pe, k->row_exp);
  if (!e) return false;
  buf_printf(b, "%sout%d[%s * %lldLL + ridx] = ", in2, 1 + k->nextra, at, (long long)k->reduction.size);
  emit_store(b, k->row_dtype, e);
  buf_printf(b, ";\n%s}\n", indent);
  free(e);
  return true;
}

/* The stores of a block: out0[gidx] = epilogue(acc) (gidx named by `at`), then a row
 * output's row. */
static bool render_red_store(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                             const AluExp *epilogue, const char *indent, const char *at,
                             const char *acc) {
  buf_printf(b, "%sconst %s acc = %s;\n", indent, emit_types[k->reduction.dtype].ctype, acc);
  for (int o = 0; o <= k->nextra; o++) { /* out0 = epilogue(acc); further epilogues */
    const AluExp *x = o ? k->extra[o - 1] : epilogue;
    jx_dtype d = o ? k->extra_dtypes[o - 1] : k->dtype;
    char *e;
    if (x) {
      EmitPart pe = {.lang = lang, .out = b, .indent = indent, .nlocals = nlocals};
      e = emit_part(&pe, x);
    } else {
      e = strdup("acc");
      if (!e) error_set(JX_ERR_OOM, "render: out of memory");
    }
    if (!e) return false;
    buf_printf(b, "%sout%d[%s] = ", indent, o, at);
    emit_store(b, d, e);
    buf_str(b, ";\n");
    free(e);
  }
  return render_row_out(lang, k, b, nlocals, indent, at);
}

/* Whether a reduction's result does not depend on its order: all but floating sums and
 * products (integer wrap-around arithmetic, min/max with NaN and signed zeros as
 * prelude.h defines them, bitwise ops). */
static bool order_free(const Reduction *r) {
  return !(dtype_is_inexact(r->dtype) && (r->op == ALU_ADD || r->op == ALU_MUL));
}

/* One output's reduction in lanes: `ct lane[ALU_REDUCE_LANES]` set to the identity, then
 * each ridx accumulated into lane[ridx % 16] -- whole blocks of 16 as a vector loop, then
 * the rest. t holds red_text's texts for the accumulator "lane[l]". With `fold` (the
 * combination of "lane[l]" and "lane[l + h]"), for ops whose result does not depend on
 * the order (render_reduction's order_free), rows of at least ROW_WIDE_LANES accumulate
 * in ROW_WIDE_LANES lanes instead -- four independent vector chains, since a max's
 * select chain is latency-bound in one (a 4096 x 1024 row max: 1.19 -> 0.4 ms) -- then
 * fold to 16. `stores` (the row output's element at ridx, or NULL): t's body stores each
 * value there (render_red_lanes); then the whole blocks only store, and a second loop
 * over the stored row (in L1) accumulates -- the same order, so the same bits. With
 * the accumulation in the store loop, its lanes lived on the stack across the vector
 * exp call (the vector ABI clobbers every vector register), a store-forwarding chain per
 * 16 elements, which bounds the loop once the exp is fast (prelude_c.h's jx_expf: 13
 * instructions per 16 lanes). 4096 x 1024 softmax, bench/before_after.sh x8 interleaved:
 * 0.70 -> 0.60 ms on 2 threads; one thread 1.43 -> 1.28-1.35 ms (rowk15 measured
 * 1.04-1.11x with libmvec's slower expf). `stores` may also be a row buffer of the
 * kernel's own (render_red_lanes' ROW_BUF). The second loop runs where `sum_if` holds
 * (NULL: always). A float32/float64 MAX or MIN with `fold` and no `stores` accumulates
 * order keys of the values instead (prelude.h, JX_FLOAT_KEYS: one integer max per step,
 * not jx_fmax's five instructions) in `klane`, folded to 16 and turned back into the
 * floats `lane`: the same bits as the float fold. `value` names t's loaded value (r is
 * the reduction). */
#define ROW_WIDE_LANES 64
static void render_row_lanes(Buf *b, const char *ct, int64_t R, const RedText *t,
                             const char *fold, const char *stores, const char *sum_if,
                             const char *after, const Reduction *r, const char *value) {
  const int64_t L = fold && R >= ROW_WIDE_LANES ? ROW_WIDE_LANES : ALU_REDUCE_LANES, R16 = R - R % L;
  const char *body = t->body.s ? t->body.s : "";
  bool keyed = fold && !stores && value && (r->op == ALU_MAX || r->op == ALU_MIN) &&
               (r->dtype == JX_FLOAT32 || r->dtype == JX_FLOAT64);
  const char *sfx = r->dtype == JX_FLOAT64 ? "f64" : "f32", *kt = r->dtype == JX_FLOAT64 ? "int64_t" : "int32_t";
  const char *mm = r->op == ALU_MAX ? "max" : "min";
  Buf step = {0};
  if (keyed) buf_printf(&step, "jx_k%s_%s(klane[l], jx_fkey%s_%s(%s))", mm, sfx, mm, sfx, value);
  keyed = keyed && step.s && !step.oom;
  const char *st = keyed ? step.s : t->step.s, *acc = keyed ? "klane" : "lane";
  if (keyed) {
    buf_printf(b, "      %s klane[%lld];\n", kt, (long long)L);
    buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) klane[l] = jx_fkey%s_%s(%s);\n", (long long)L, mm,
               sfx, t->ident.s);
  } else {
    buf_printf(b, "      %s lane[%lld];\n", ct, (long long)L);
    buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) lane[l] = %s;\n", (long long)L, t->ident.s);
  }
  if (R16) {
    buf_printf(b, "      for (int64_t r0 = 0; r0 < %lldLL; r0 += %lld) {\n", (long long)R16, (long long)L);
    /* JX_IVDEP where a row output is stored here (softmax's exp): it never aliases the
     * inputs, and without it GCC versioned the loop on the distance between the two (one
     * thread of the 4096 x 1024 softmax: 0.58-0.61 -> 0.50-0.55 ns per element, best of
     * 41, load 7). Not on the other loops: the 64-lane max of the same kernel got slower. */
    buf_str(b, stores ? "        JX_IVDEP JX_VECTOR_LOOP\n" : "        JX_VECTOR_LOOP\n");
    buf_printf(b, "        for (int64_t l = 0; l < %lld; l++) {\n", (long long)L);
    buf_str(b, "          const int64_t ridx = r0 + l;\n");
    buf_str(b, body);
    if (!stores) buf_printf(b, "          %s[l] = %s;\n", acc, st);
    buf_str(b, "        }\n");
    if (after) buf_str(b, after);
    buf_str(b, "      }\n");
    if (stores) { /* the sum of the stored row, read back (see above) */
      if (sum_if) buf_printf(b, "      if (%s)\n", sum_if);
      buf_printf(b, "        for (int64_t r0 = 0; r0 < %lldLL; r0 += %lld) {\n", (long long)R16, (long long)L);
      buf_str(b, "          JX_VECTOR_LOOP\n");
      buf_printf(b, "          for (int64_t l = 0; l < %lld; l++) {\n", (long long)L);
      buf_str(b, "            const int64_t ridx = r0 + l;\n");
      buf_printf(b, "            const %s kv = %s;\n", ct, stores);
      buf_printf(b, "            lane[l] = %s;\n          }\n        }\n", t->step.s);
    }
  }
  if (R > R16) {
    buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) {\n", (long long)(R - R16));
    buf_printf(b, "        const int64_t ridx = %lldLL + l;\n", (long long)R16);
    buf_str(b, body);
    buf_printf(b, "        %s[l] = %s;\n      }\n", acc, st);
  }
  if (keyed) {
    if (L > ALU_REDUCE_LANES) {
      buf_printf(b, "      for (int64_t h = %lld; h >= %lld; h /= 2)\n", (long long)L / 2,
                 (long long)ALU_REDUCE_LANES);
      buf_printf(b, "        for (int64_t l = 0; l < h; l++) klane[l] = jx_k%s_%s(klane[l], klane[l + h]);\n",
                 mm, sfx);
    }
    buf_printf(b, "      %s lane[%lld];\n", ct, (long long)ALU_REDUCE_LANES);
    buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) lane[l] = jx_funkey_%s(klane[l]);\n",
               (long long)ALU_REDUCE_LANES, sfx);
  } else if (L > ALU_REDUCE_LANES) {
    buf_printf(b, "      for (int64_t h = %lld; h >= %lld; h /= 2)\n", (long long)L / 2,
               (long long)ALU_REDUCE_LANES);
    buf_printf(b, "        for (int64_t l = 0; l < h; l++) lane[l] = %s;\n", fold);
  }
  free(step.s);
}

/* A two-phase reduction's first phase for the block of w outputs at gb: pres[j] = the
 * reduction of pre_exp for output gb + j, in ir/alu.h's order (lanes; in order for
 * floating sums and products of fewer than ALU_REDUCE_LANES elements). */
static bool render_pre_block(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                             int64_t w) {
  const Reduction *q = &k->pre;
  const int64_t L = ALU_REDUCE_LANES, R = q->size;
  bool ordered = dtype_is_inexact(q->dtype) && (q->op == ALU_ADD || q->op == ALU_MUL) && R < L;
  const char *ct = emit_types[q->dtype].ctype;
  EmitPart p = {.lang = lang, .indent = "          ", .nlocals = nlocals};
  RedText t;
  Buf comb = {0};
  bool ok = red_text(&p, q, k->pre_exp, ordered ? "a" : "lane[l]", &t) &&
            emit_step(&p, &comb, q, "lane[l]", "lane[l + h]") && !comb.oom;
  if (ok) {
    buf_printf(b, "    %s pres[%lld];\n", ct, (long long)w);
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
    buf_str(b, "      const int64_t gidx = gb + j;\n");
    if (ordered) {
      buf_printf(b, "      %s a = %s;\n", ct, t.ident.s);
      buf_printf(b, "      for (int64_t ridx = 0; ridx < %lldLL; ridx++) {\n", (long long)R);
      buf_str(b, t.body.s ? t.body.s : "");
      buf_printf(b, "          a = %s;\n      }\n      pres[j] = a;\n", t.step.s);
    } else {
      render_row_lanes(b, ct, R, &t, order_free(q) ? comb.s : NULL, NULL, NULL, NULL, q, t.value);
      buf_printf(b, "      for (int64_t h = %lld; h >= 1; h /= 2)\n", (long long)L / 2);
      buf_printf(b, "        for (int64_t l = 0; l < h; l++) lane[l] = %s;\n", comb.s);
      buf_str(b, "      pres[j] = lane[0];\n");
    }
    buf_str(b, "    }\n");
  }
  red_text_free(&t);
  free(comb.s);
  return ok;
}

/* Outputs [lo, hi) (C expressions) in blocks of W = REDUCE_BLOCK(_WIDE) (or size, if
 * smaller): the block's W accumulators are updated together for each ridx, a loop over
 * j with a constant trip count that vectorizes while each output keeps the
 * interpreter's order ridx = 0, 1, ... A last partial block is shifted back to end
 * inside [0, hi); its lanes outside [g0, hi) are computed again (reads stay in bounds)
 * but not stored. */
static bool render_red_flat(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                            const char *lo, const char *hi) {
  const Reduction *r = &k->reduction;
  bool wide = lanes_contiguous(k->exp, "gidx", k->size);
  int64_t w = wide ? REDUCE_BLOCK_WIDE : REDUCE_BLOCK;
  if (k->size < w) w = k->size > 0 ? k->size : 1;
  EmitPart p = {.lang = lang, .indent = "        ", .nlocals = nlocals};
  RedText t;
  bool ok = red_text(&p, r, k->exp, "accs[j]", &t);
  if (ok) {
    buf_printf(b, "  for (int64_t g0 = %s; g0 < %s; g0 += %lld) {\n", lo, hi, (long long)w);
    buf_printf(b, "    const int64_t gb = g0 + %lld <= %s ? g0 : %s >= %lld ? %s - %lld : 0;\n",
               (long long)w, hi, hi, (long long)w, hi, (long long)w);
    if (k->has_pre && !render_pre_block(lang, k, b, nlocals, w)) ok = false;
    buf_printf(b, "    %s accs[%lld];\n", emit_types[r->dtype].ctype, (long long)w);
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) accs[j] = %s;\n", (long long)w, t.ident.s);
    buf_printf(b, "    for (int64_t ridx = 0; ridx < %lld; ridx++) {\n", (long long)r->size);
    /* Contiguous lanes stay a loop, which vectorizes (GCC would unroll a short one
     * completely first); strided lanes unroll into independent chains. */
    if (wide) buf_str(b, "      JX_VECTOR_LOOP\n");
    buf_printf(b, "      for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
    buf_str(b, "        const int64_t gidx = gb + j;\n");
    buf_str(b, t.body.s ? t.body.s : "");
    buf_printf(b, "        accs[j] = %s;\n", t.step.s);
    buf_str(b, "      }\n    }\n");
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
    buf_str(b, "      const int64_t gidx = gb + j;\n");
    buf_printf(b, "      if (gidx < g0 || gidx >= %s) continue;\n", hi);
    ok = render_red_store(lang, k, b, nlocals, r->epilogue, "      ", "gidx", "accs[j]") && ok;
    buf_str(b, "    }\n  }\n");
  }
  red_text_free(&t);
  return ok;
}

/* A two-phase row reduction's prefetch of the next block (render_red_lanes): the first
 * phase of rows gidx + w reads memory (a 4096 x 1024 row max runs at DRAM speed) while
 * the second phase of row gidx computes (softmax's and log-softmax's exp), so each
 * whole block of 16 lanes of the second phase fetches the 16 elements at ridx = r0 of
 * row gidx + w for every load of the first phase whose index steps by one along ridx
 * and reads no other load. The pf text goes after the lanes loop, inside the r0 loop;
 * an empty pf where no load qualifies. Prefetches change no result. One thread of the
 * 4096 x 1024 max + sum of exp (the log-softmax cross-entropy's first kernel): 2.0-2.2
 * -> 1.6-1.7 ms, best of 30, load ~1. */
static bool render_next_rows(EmitPart *p, const Kernel *k, int64_t w, Buf *pf) {
  const int64_t R = k->pre.size;
  if (R < ALU_REDUCE_LANES || !lanes_contiguous(k->pre_exp, "ridx", R)) return true;
  int64_t count;
  const AluExp **order = alu_toposort(k->pre_exp, &count);
  if (!order) return false;
  const AluExp *next = alu_binary(ALU_ADD, alu_special("gidx", k->size), alu_const_int(JX_INT64, w));
  const AluExp *r0 = alu_variable("r0", JX_INT64);
  bool ok = next && r0;
  EmitPart q = *p;
  q.indent = "          ";
  for (int64_t i = 0; i < count && ok; i++) {
    if (order[i]->op != ALU_GLOBAL_INDEX) continue;
    const AluExp *idx = order[i]->src[0];
    int64_t n;
    const AluExp **sub = alu_toposort(idx, &n);
    bool plain = sub != NULL;
    for (int64_t j = 0; plain && j < n; j++) plain = sub[j]->op != ALU_GLOBAL_INDEX;
    free((void *)sub);
    if (!plain) continue;
    const AluExp *at = alu_simplify(alu_substitute(alu_substitute(idx, "gidx", next), "ridx", r0));
    Buf body = {0};
    q.out = &body;
    char *text = at ? emit_part(&q, at) : NULL;
    if (!text) ok = false;
    else {
      if (!pf->s) buf_printf(pf, "        if (gidx + %lld < %lldLL) {\n", (long long)w, (long long)k->size);
      buf_str(pf, body.s ? body.s : "");
      buf_printf(pf, "          JX_PREFETCH(&in%lld[%s]);\n", (long long)order[i]->arg, text);
    }
    free(text);
    free(body.s);
  }
  free((void *)order);
  if (ok && pf->s) buf_str(pf, "        }\n");
  return ok && !pf->oom;
}

/* Outputs [lo, hi) of a reduction in lane order (ir/alu.h: floating sums and products
 * of at least ALU_REDUCE_LANES elements): each output has ALU_REDUCE_LANES accumulators,
 * lane l taking ridx = l, l + 16, ..., combined as a tree at the end. Row sums (loads
 * contiguous in ridx) vectorize over the lanes, column sums (contiguous in gidx) over a
 * block of outputs with the lanes as an outer loop; other layouts run W independent
 * chains per lane. Blocks as in render_red_flat. */
#define LANES_ROW_BLOCK 8
#define LANES_COL_BLOCK 64
#define ROW_BUF 16384

/* Whether e calls a vector math function (the prelude's exp or libm by name, emit.c's op
 * table) on a value that varies along the row (ridx < R): such a call stays in the row
 * loop and clobbers every vector register there. A call on the row's own values only
 * (xent's log of the row sum) is hoisted out of it: no split (it made that kernel
 * 0.33 -> 0.38-0.43 ms). */
static bool calls_vector_math(const AluExp *e, int64_t R) {
  int64_t count;
  const AluExp **order = alu_toposort(e, &count);
  const AluExp *v1 = alu_binary(ALU_ADD, alu_special("ridx", R), alu_const_int(JX_INT64, 1));
  bool any = false;
  for (int64_t i = 0; order && i < count && !any; i++) switch (order[i]->op) {
    case ALU_EXP: case ALU_EXP2: case ALU_EXPM1: case ALU_LOG: case ALU_LOG2: case ALU_LOG1P:
    case ALU_SIN: case ALU_COS: case ALU_TAN: case ALU_ASIN: case ALU_ACOS: case ALU_ATAN:
    case ALU_SINH: case ALU_COSH: case ALU_TANH: case ALU_ASINH: case ALU_ACOSH: case ALU_ATANH:
    case ALU_ERFC: case ALU_CBRT: case ALU_POW: case ALU_ATAN2:
      any = !v1 || alu_substitute(order[i], "ridx", v1) != order[i];
      break;
    default:
      break;
    }
  free((void *)order);
  return any;
}
static bool render_red_lanes(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals,
                             const char *lo, const char *hi) {
  const Reduction *r = &k->reduction;
  const int64_t L = ALU_REDUCE_LANES, R = r->size, R16 = R - R % L;
  bool row = lanes_contiguous(k->exp, "ridx", R);
  bool col = !row && lanes_contiguous(k->exp, "gidx", k->size);
  int64_t w = row ? LANES_ROW_BLOCK : col ? LANES_COL_BLOCK : REDUCE_BLOCK;
  if (k->size < w) w = k->size > 0 ? k->size : 1;
  const char *acc = col ? "accs[l][j]" : "accs[j][l]";
  EmitPart p = {.lang = lang, .indent = "        ", .nlocals = nlocals};
  RedText t;
  Buf comb = {0};
  /* a row accumulates into a local vector of lanes, which compilers keep in a register */
  Buf fold = {0};
  bool ok = red_text(&p, r, k->exp, row ? "lane[l]" : acc, &t) &&
            emit_step(&p, &comb, r, col ? "accs[l][j]" : "accs[j][l]",
                        col ? "accs[l + h][j]" : "accs[j][l + h]") && !comb.oom &&
            (!row || !order_free(r) || (emit_step(&p, &fold, r, "lane[l]", "lane[l + h]") && !fold.oom));
  const char *ct = emit_types[r->dtype].ctype, *body = t.body.s ? t.body.s : "";
  /* A row output that recomputes the reduced value (softmax: exp(x - max) in its sum and
   * in exp(x - max) / sum) reads it back instead: the lanes loop stores each value in
   * the row output's own row (in cache: render_row_out follows at once), and the row
   * output's expression loads it -- one exp per element, not two. Only where the stored
   * value reads back exactly (a float32/float64 row output of the value's dtype). */
  Kernel kr;
  RedText tk = {0}; /* t with the value kept: body + `kv = value; row[ridx] = kv`, step on kv */
  char at[64];
  if (ok && row && k->has_row_out && k->row_dtype == k->exp->dtype &&
      (k->row_dtype == JX_FLOAT32 || k->row_dtype == JX_FLOAT64)) {
    snprintf(at, sizeof at, "out%d[gidx * %lldLL + ridx]", 1 + k->nextra, (long long)R);
    AluMap memo;
    alu_map_init(&memo);
    const AluExp *v = alu_variable(at, k->row_dtype), *e = v ? replace_node(k->row_exp, k->exp, v, &memo) : NULL;
    alu_map_free(&memo);
    if (!e) ok = false;
    else if (e != k->row_exp) {
      kr = *k, kr.row_exp = e, k = &kr;
      buf_str(&tk.body, t.body.s ? t.body.s : "");
      /* only the rows this block stores (keep_row): a shifted last block recomputes rows
       * that are done, or another thread's */
      buf_printf(&tk.body, "          const %s kv = %s;\n          if (keep_row) %s = kv;\n", ct, t.value, at);
      buf_str(&tk.ident, t.ident.s);
      ok = emit_step(&p, &tk.step, r, "lane[l]", "kv") && !tk.body.oom && !tk.step.oom && !tk.ident.oom;
    }
  }
  /* A row sum without a row output whose value calls vector math (xent's sum of
   * exp(x - max); float32/float64) gets the same split through a row buffer on the
   * stack (ROW_BUF bytes at most): the vector calls store, a second loop sums from L1 in registers -- the same
   * order, so the same bits. The buffer is read through a restrict pointer; from the
   * array itself GCC kept the lanes in memory across that loop. xent's first kernel
   * (4096 x 1024, the generated kernel in a harness, best of 40, interleaved): one
   * thread 1.10-1.16 -> 0.94 ms, two 0.62 -> 0.53 ms. */
  bool kbuf = false;
  if (ok && row && !tk.step.s && !fold.s && (r->dtype == JX_FLOAT32 || r->dtype == JX_FLOAT64) &&
      R >= 2 * L && R * (int64_t)jx_dtype_itemsize(r->dtype) <= ROW_BUF && calls_vector_math(k->exp, R)) {
    buf_str(&tk.body, t.body.s ? t.body.s : "");
    buf_printf(&tk.body, "          const %s kv = %s;\n          kb[ridx] = kv;\n", ct, t.value);
    buf_str(&tk.ident, t.ident.s);
    ok = emit_step(&p, &tk.step, r, "lane[l]", "kv") && !tk.body.oom && !tk.step.oom && !tk.ident.oom;
    snprintf(at, sizeof at, "kb[ridx]");
    kbuf = true;
  }
  Buf pf = {0};
  if (ok && row && k->has_pre && !render_next_rows(&p, k, w, &pf)) ok = false;
  if (ok) {
    buf_printf(b, "  for (int64_t g0 = %s; g0 < %s; g0 += %lld) {\n", lo, hi, (long long)w);
    buf_printf(b, "    const int64_t gb = g0 + %lld <= %s ? g0 : %s >= %lld ? %s - %lld : 0;\n",
               (long long)w, hi, hi, (long long)w, hi, (long long)w);
    if (k->has_pre && !render_pre_block(lang, k, b, nlocals, w)) ok = false;
    if (col) buf_printf(b, "    %s accs[%lld][%lld];\n", ct, (long long)L, (long long)w);
    else buf_printf(b, "    %s accs[%lld][%lld];\n", ct, (long long)w, (long long)L);
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++)\n", (long long)w);
    buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) %s = %s;\n", (long long)L, acc, t.ident.s);
    if (row) {
      buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
      buf_str(b, "      const int64_t gidx = gb + j;\n");
      if (tk.step.s && !kbuf) buf_printf(b, "      const int keep_row = gidx >= g0 && gidx < %s;\n", hi);
      if (kbuf) buf_printf(b, "      %s kbuf[%lld];\n      %s *restrict kb = kbuf;\n", ct, (long long)R, ct);
      render_row_lanes(b, ct, R, tk.step.s ? &tk : &t, fold.s, tk.step.s ? at : NULL,
                       tk.step.s && !kbuf ? "keep_row" : NULL, pf.s, r, tk.step.s ? "kv" : t.value);
      buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) accs[j][l] = lane[l];\n    }\n", (long long)L);
    }
    for (int part = 0; part < 2 && !row; part++) { /* whole blocks of L, then the rest */
      int64_t lanes = part == 0 ? L : R - R16;
      if (part == 0 && R16 == 0) continue;
      if (part == 1 && lanes == 0) break;
      if (part == 0) buf_printf(b, "    for (int64_t r0 = 0; r0 < %lldLL; r0 += %lld) {\n", (long long)R16, (long long)L);
      else buf_printf(b, "    {\n      const int64_t r0 = %lldLL;\n", (long long)R16);
      buf_printf(b, "      for (int64_t l = 0; l < %lld; l++) {\n", (long long)lanes);
      buf_str(b, "        const int64_t ridx = r0 + l;\n");
      if (col) buf_str(b, "        JX_VECTOR_LOOP\n");
      buf_printf(b, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
      buf_str(b, "          const int64_t gidx = gb + j;\n");
      buf_str(b, body);
      buf_printf(b, "          %s = %s;\n", acc, t.step.s);
      buf_str(b, "        }\n      }\n    }\n");
    }
    buf_printf(b, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)w);
    buf_str(b, "      const int64_t gidx = gb + j;\n");
    buf_printf(b, "      if (gidx < g0 || gidx >= %s) continue;\n", hi);
    buf_printf(b, "      for (int64_t h = %lld; h >= 1; h /= 2)\n", (long long)L / 2);
    buf_printf(b, "        for (int64_t l = 0; l < h; l++) %s = %s;\n", acc, comb.s);
    ok = render_red_store(lang, k, b, nlocals, r->epilogue, "      ", "gidx",
                          col ? "accs[0][j]" : "accs[j][0]") && ok;
    buf_str(b, "    }\n  }\n");
  }
  red_text_free(&t);
  red_text_free(&tk);
  free(comb.s);
  free(fold.s);
  free(pf.s);
  return ok;
}

/* A reduction: in lanes (render_red_lanes) where its order or layout calls for them;
 * else, when its indices are digits of gidx, whole blocks as a loop nest (Nest) whose
 * innermost extent n0 = s[1] is split into lane blocks of W outputs (as in the flat
 * form, the last one shifted back), partial blocks at the ends in the flat form; else
 * the flat form. */
static bool render_reduction(const RenderLang *lang, const Kernel *k, Buf *b, int *nlocals) {
  const Reduction *r = &k->reduction;
  Kernel kk = *k;
  if (k->has_pre) { /* VARIABLE pre -> this output's first-phase value, pres[j] */
    const AluExp *pv = alu_variable("pres[j]", k->pre.dtype);
    kk.exp = alu_substitute(k->exp, "pre", pv);
    if (r->epilogue) kk.reduction.epilogue = alu_substitute(r->epilogue, "pre", pv);
    for (int o = 0; o < k->nextra; o++) kk.extra[o] = alu_substitute(k->extra[o], "pre", pv);
    if (k->has_row_out) kk.row_exp = alu_substitute(k->row_exp, "pre", pv);
  }
  /* Lane order where the IR asks for it, and for row reductions by ops whose result
   * does not depend on the order (all others: integer wrap-around arithmetic, min/max,
   * bitwise), where the lanes are what vectorizes. */
  bool free_order = order_free(r);
  if (alu_reduce_in_lanes(r->op, r->dtype, r->size) ||
      (free_order && r->size >= ALU_REDUCE_LANES && lanes_contiguous(kk.exp, "ridx", r->size)))
    return render_red_lanes(lang, &kk, b, nlocals, "start", "end");
  /* first phases, further outputs and row outputs have no nest form */
  if (k->has_pre || k->nextra || k->has_row_out) return render_red_flat(lang, &kk, b, nlocals, "start", "end");
  Nest nest = find_nest(k->exp, r->epilogue, k->size, REDUCE_BLOCK_WIDE);
  const AluExp *exp = nest.n ? nest_rewrite(k->exp, &nest, k->size) : NULL;
  const AluExp *epi = exp && r->epilogue ? nest_rewrite(r->epilogue, &nest, k->size) : NULL;
  if (!exp || (r->epilogue && !epi)) return render_red_flat(lang, k, b, nlocals, "start", "end");
  int64_t n0 = nest.s[1];
  bool wide = lanes_contiguous(exp, "i0", n0);
  int64_t w = wide ? REDUCE_BLOCK_WIDE : REDUCE_BLOCK;
  if (n0 < w) w = n0;
  nest_bounds(b, nest.s[nest.n]);
  if (!render_red_flat(lang, k, b, nlocals, "start", "head_end")) return false;
  int depth = nest_open_loops(b, &nest, nest.n - 1, 1, nest_open_block(b, &nest));
  const char *in = pad(depth);
  EmitPart p = {.lang = lang, .indent = "        ", .nlocals = nlocals};
  RedText t;
  bool ok = red_text(&p, r, exp, "accs[j]", &t);
  if (ok) {
    buf_printf(b, "%sfor (int64_t j0 = 0; j0 < %lldLL; j0 += %lld) {\n", in, (long long)n0,
               (long long)w);
    buf_printf(b, "%s  const int64_t jb = j0 + %lld <= %lldLL ? j0 : %lldLL - %lld;\n", in,
               (long long)w, (long long)n0, (long long)n0, (long long)w);
    buf_printf(b, "%s  %s accs[%lld];\n", in, emit_types[r->dtype].ctype, (long long)w);
    buf_printf(b, "%s  for (int64_t j = 0; j < %lld; j++) accs[j] = %s;\n", in, (long long)w,
               t.ident.s);
    buf_printf(b, "%s  for (int64_t ridx = 0; ridx < %lld; ridx++) {\n", in, (long long)r->size);
    if (wide) buf_printf(b, "%s    JX_VECTOR_LOOP\n", in);
    buf_printf(b, "%s    for (int64_t j = 0; j < %lld; j++) {\n", in, (long long)w);
    buf_printf(b, "%s      const int64_t i0 = jb + j;\n", in);
    buf_str(b, t.body.s ? t.body.s : "");
    buf_printf(b, "%s      accs[j] = %s;\n", in, t.step.s);
    buf_printf(b, "%s    }\n%s  }\n", in, in);
    buf_printf(b, "%s  for (int64_t j = 0; j < %lld; j++) {\n", in, (long long)w);
    buf_printf(b, "%s    const int64_t i0 = jb + j;\n", in);
    buf_printf(b, "%s    if (i0 < j0) continue;\n", in);
    nest_gx(b, &nest, pad(depth + 2));
    ok = render_red_store(lang, k, b, nlocals, epi, pad(depth + 2), "gx", "accs[j]");
    buf_printf(b, "%s  }\n%s}\n", in, in);
    nest_close(b, depth, 0);
  }
  red_text_free(&t);
  return ok && render_red_flat(lang, k, b, nlocals, "row_end", "end");
}

/* The body of render_c's function: the inputs and outputs as typed pointers, then the
 * loops over [start, end). */
static bool c_frame(const RenderLang *lang, const Kernel *k, Buf *body, int *nlocals) {
  if (k->post) { /* (only for backends with Backend.row_group) */
    error_set(JX_ERR_UNSUPPORTED, "render: a C kernel has no group epilogue (Kernel.post)");
    return false;
  }
  emit_args(body, lang, k);
  if (k->has_row_out) /* the last output */
    buf_printf(body, "  %s *%s out%d = (%s *)out[%d];\n", emit_types[k->row_dtype].elem, lang->restrict_kw,
               1 + k->nextra, emit_types[k->row_dtype].elem, 1 + k->nextra);
  return k->has_reduction ? render_reduction(lang, k, body, nlocals)
                          : render_elementwise(lang, k, body, nlocals);
}
