/* lower.c -- Jaxpr -> Program: walks the equations with the per-primitive lowering rules
 * that eager evaluation uses too (trace/lower.c), deciding which values are
 * materialized (shared values, dot operands), then runs the fusion passes (two-phase
 * reductions, sibling kernels) and plans when temporaries are freed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "jit/jit.h"
#include "trace/kexp.h"

typedef struct JitLower {
  Lower base;            /* the program being built */
  const Jaxpr *j;
  Lazy *vals;            /* by jaxpr variable */
  int *sink;             /* by jaxpr variable: elementwise_sinks' result (NULL: none) */
} JitLower;

static const AluExp *i64(int64_t v) { return alu_const_int(JX_INT64, v); }

static int64_t value_ops(const AluExp *e, int64_t transcendental) {
  int64_t n, ops = 0;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n; i++) {
    const AluExp *x = order[i];
    if (!x->nsrc || x->dtype == JX_INT64 || x->op == ALU_GLOBAL_INDEX) continue;
    switch (x->op) {
    case ALU_EXP: case ALU_EXP2: case ALU_EXPM1: case ALU_LOG: case ALU_LOG2: case ALU_LOG1P:
    case ALU_SIN: case ALU_COS: case ALU_TAN: case ALU_ASIN: case ALU_ACOS: case ALU_ATAN:
    case ALU_SINH: case ALU_COSH: case ALU_TANH: case ALU_ASINH: case ALU_ACOSH: case ALU_ATANH:
    case ALU_POW: case ALU_ATAN2: case ALU_ERF: case ALU_ERFC: case ALU_CBRT:
      ops += transcendental;
      break;
    default:
      ops++;
    }
  }
  free((void *)order);
  return order ? ops : INT64_MAX;
}

/* A value read by several consumers is materialized once, unless it is a view of a
 * buffer or cheap to recompute: a few nodes, index arithmetic included, or a single
 * arithmetic operation on loads (x - mean is recomputed by the variance and the
 * normalization, which lets the variance fuse with the mean), never a transcendental
 * function (recomputing exp(x - max) made a 4096x1024 softmax 30% slower). A conv's
 * biased relu (two operations) is materialized: pooling reads it through strided
 * windows, and recomputing it there made the CNN step 30% slower. */
static bool maybe_share(JitLower *L, Lazy *v) {
  if (v->slot >= 0 || v->uses < 2) return true;
  int var = (int)(v - L->vals);
  if (L->sink && L->sink[var] != var) return true; /* every consumer ends in one kernel */
  int64_t ops = value_ops(v->src, 8);
  if ((alu_count(v->src) <= 6 && ops <= 6) || ops <= 1) return true;
  /* on a GPU two operations, a transcendental one included, cost less than a round
   * trip through memory: softmax's exp(x - max) is recomputed by its sum and its
   * division, which makes the max and the sum one two-phase kernel */
  if (L->base.cheap_recompute && value_ops(v->src, 1) <= L->base.recompute_ops && alu_count(v->src) <= 12) return true;
  return lower_realize(&L->base, v);
}

static bool is_elementwise(Prim p) {
  switch (prim_kind(p)) {
  case PRIM_KIND_UNARY: case PRIM_KIND_UNARY_PRED: case PRIM_KIND_BINARY: case PRIM_KIND_COMPARE:
  case PRIM_KIND_SELECT: case PRIM_KIND_CONVERT:
    return true;
  default:
    return false;
  }
}

/* Elementwise cones. sink[v] is the variable that every use of v flows into through
 * elementwise equations of v's shape alone (v itself when its uses go elsewhere: a
 * reduction, a movement, a dot, a program output, or two different sinks). A shared
 * value whose sink is another variable is inlined into its consumers instead of being
 * materialized: they all end in the one kernel computing the sink, where hash-consing
 * evaluates it once. lax.logistic's exp(-|x|) feeds both 1 + z and z / (1 + z): as a
 * buffer it cost a second kernel and 32 MB of traffic at 2^22 floats (2.4x slower).
 * Equations come in order, so walking them backwards finds each result's sink final. */
static int *elementwise_sinks(const Jaxpr *j) {
  int *sink = malloc((size_t)(j->nvars ? j->nvars : 1) * sizeof *sink);
  if (!sink) return NULL; /* the cones are an optimization: without them, materialize */
  for (int v = 0; v < j->nvars; v++) sink[v] = -1; /* no consumer seen yet */
  for (int o = 0; o < j->nout; o++) sink[j->outvars[o]] = j->outvars[o];
  for (int e = j->neqns - 1; e >= 0; e--) {
    const JaxprEqn *q = &j->eqns[e];
    int w = q->nout == 1 ? q->out[0] : -1, ws = w >= 0 && sink[w] >= 0 ? sink[w] : w;
    for (int i = 0; i < q->nin; i++) {
      int v = q->in[i], to = v;
      const Aval *a = &j->vars[v];
      if (w >= 0 && is_elementwise(q->prim) && j->vars[w].ndim == a->ndim &&
          !memcmp(j->vars[w].shape, a->shape, (size_t)a->ndim * sizeof *a->shape))
        to = ws;
      sink[v] = sink[v] < 0 || sink[v] == to ? to : v;
    }
  }
  for (int v = 0; v < j->nvars; v++)
    if (sink[v] < 0) sink[v] = v;
  return sink;
}

/* The value of a constant whose buffer holds one value (a literal such as the 0 of
 * relu's derivative, maybe broadcast, or a mean's divisor filled to its shape: up to
 * 4096 equal elements), as a CONST node: kernels compute with it instead of loading it
 * (which lets select chains vectorize, and a division by a literal divide by a known
 * number). A constant on device memory (cuda) holding at most 64 elements is read back
 * once here, at compile time. NULL for any other constant. */
static const AluExp *const_scalar(const jx_array *c) {
  const Buffer *b = c->buf;
  size_t item = jx_dtype_itemsize(c->dtype);
  if (!b || !b->mem || b->nbytes < item || b->nbytes > 4096 * item || b->nbytes % item) return NULL;
  const char *mem = b->mem;
  char host[64 * 8];
  if (!b->backend->host_memory) {
    if (b->nbytes > sizeof host || item > 8 || error_pending()) return NULL;
    if (b->backend->copy_out(b->backend, host, b->mem, b->nbytes) != JX_OK) {
      jx_clear_error(); /* the constant stays a buffer the kernels load */
      return NULL;
    }
    mem = host;
  }
  for (size_t off = item; off < b->nbytes; off += item)
    if (memcmp(mem + off, mem, item) != 0) return NULL;
  return alu_const(c->dtype, alu_load(mem, c->dtype, 0));
}

/* The rule table is trace/lower.c's (tests/transform/test_rules.c walks it). */
bool jit_has_lower_rule(Prim p, const char **why) { return lower_has_rule(p, why); }

static bool lower_eqn(JitLower *L, const JaxprEqn *q) {
  Lazy *small[8], **in = q->nin <= 8 ? small : malloc((size_t)q->nin * sizeof *in);
  Lazy outs[ROUTINE_MAX_OPERANDS];
  if (!in) {
    error_set(JX_ERR_OOM, "jit: out of memory");
    return false;
  }
  if (q->nout > ROUTINE_MAX_OPERANDS) {
    error_set(JX_ERR_UNSUPPORTED, "jit: %s with %d results (at most %d)", prim_name(q->prim), q->nout,
              ROUTINE_MAX_OPERANDS);
    if (in != small) free(in);
    return false;
  }
  bool ok = true;
  for (int i = 0; ok && i < q->nin; i++) {
    in[i] = &L->vals[q->in[i]];
    /* A matrix product reads a buffer: an operand with other consumers is materialized
     * once here rather than recomputed, so that a later product of its transpose (a
     * weight gradient, x^T @ ct) reads the same buffer transposed. */
    bool dot = prim_kind(q->prim) == PRIM_KIND_DOT;
    /* ...except a left operand that a product's rows kernel recomputes (trace/lower.c):
     * it stays lazy, and the consumer that needs it stored stores it */
    if (dot && i == 0 && q->nin == 2 && in[0]->slot < 0 &&
        lower_dot_rows_inlines(&L->base, &q->params, in[0], &L->vals[q->in[1]], &L->j->vars[q->out[0]]))
      continue;
    if (dot && in[i]->slot < 0 && in[i]->uses >= 2) ok = lower_realize(&L->base, in[i]);
    else ok = maybe_share(L, in[i]);
  }
  if (!ok) {
    if (in != small) free(in);
    return false;
  }
  Lazy *out = &outs[0];
  memset(outs, 0, sizeof outs);
  Aval avals[ROUTINE_MAX_OPERANDS];
  for (int o = 0; o < q->nout; o++) avals[o] = L->j->vars[q->out[o]];
  L->base.p->nkernels_fused_ops++;
  LowerRule rule = lower_rule(q->prim);
  if (rule) {
    ok = rule(&L->base, q->prim, &q->params, q->nin, in, q->nout, out, avals);
  } else {
    const char *why = NULL;
    lower_has_rule(q->prim, &why);
    error_set(JX_ERR_UNSUPPORTED, "jit: no lowering for %s (%s)", prim_name(q->prim), why ? why : "no rule");
    ok = false;
  }
  if (!ok && !error_pending()) error_set(JX_ERR_OOM, "jit: out of memory lowering %s", prim_name(q->prim));
  for (int o = 0; o < q->nout; o++) {
    Lazy *v = &L->vals[q->out[o]];
    int uses = v->uses;
    if (ok) *v = outs[o];
    else shape_free(outs[o].st);
    v->uses = uses;
  }
  if (in != small) free(in);
  return ok;
}

/* e with GLOBAL_INDEX args renumbered through map. */
static const AluExp *renumber(const AluExp *e, const int *map, AluMap *memo) {
  if (!e->nsrc && e->op != ALU_GLOBAL_INDEX) return e;
  const void *hit;
  if (alu_map_get(memo, e, &hit)) return hit;
  const AluExp *src[4];
  for (int i = 0; i < e->nsrc; i++)
    if (!(src[i] = renumber(e->src[i], map, memo))) return NULL;
  int64_t arg = e->op == ALU_GLOBAL_INDEX ? map[e->arg] : e->arg;
  const AluExp *r = alu_make(e->op, e->dtype, e->nsrc, src, e->value, arg, e->name);
  if (r) alu_map_put(memo, e, r);
  return r;
}

/* Whether e indexes its operands without div/mod (a flat loop suits it: no row loop or
 * nest is lost by fusing it with another kernel). */
static bool flat_indexing(const AluExp *e) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  bool flat = order != NULL;
  for (int64_t i = 0; flat && i < n; i++)
    flat = (order[i]->op != ALU_DIV && order[i]->op != ALU_MOD) || order[i]->dtype != JX_INT64;
  free((void *)order);
  return flat;
}

/* e with every load of kernel arg `arg` at index gidx replaced by `with`; NULL (and
 * *other set) if arg is also read at another index. */
static const AluExp *replace_row_loads(const AluExp *e, int64_t arg, const AluExp *gidx,
                                       const AluExp *with, AluMap *memo, bool *other) {
  if (e->op == ALU_GLOBAL_INDEX && e->arg == arg) {
    /* (gidx of one output folds to 0) */
    if (e->src[0] == gidx || (gidx->arg == 1 && e->src[0]->op == ALU_CONST && e->src[0]->value.i == 0)) return with;
    *other = true;
    return e;
  }
  if (!e->nsrc) return e;
  const void *hit;
  if (alu_map_get(memo, e, &hit)) return hit;
  const AluExp *src[4];
  for (int i = 0; i < e->nsrc; i++)
    if (!(src[i] = replace_row_loads(e->src[i], arg, gidx, with, memo, other))) return NULL;
  const AluExp *r = alu_make(e->op, e->dtype, e->nsrc, src, e->value, e->arg, e->name);
  if (r) alu_map_put(memo, e, r);
  return r;
}

/* Marks the kernel args (GLOBAL_INDEX args) used below e. */
static void mark_args(const AluExp *e, bool *used) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  for (int64_t i = 0; order && i < n; i++)
    if (order[i]->op == ALU_GLOBAL_INDEX) used[order[i]->arg] = true;
  free((void *)order);
}

/* Removes step j (its output slots now written by another step). */
static void remove_step(Program *p, int j) {
  free(p->steps[j].args);
  free(p->steps[j].outs);
  free(p->steps[j].frees);
  memmove(&p->steps[j], &p->steps[j + 1], (size_t)(p->nsteps - j - 1) * sizeof *p->steps);
  p->nsteps--;
}

/* Common kernels: a single-output elementwise kernel step identical to an earlier one --
 * the same expression (AluExps are hash-consed: the same node) over the same slots --
 * computes the same values, so its readers read the earlier step's output instead and
 * the step goes away. The MLP step transposed W2 twice, for the logits' rows kernel and
 * for the backward's unrolled g @ W2^T (trace/lower.c stores a product's transposed
 * operand contiguous for each product): two kernels of one. Slots written by one step
 * only, and not the program's outputs (each output keeps its own buffer). */
static void dedup_kernels(Program *p) {
  int *writes = calloc((size_t)(p->nslots ? p->nslots : 1), sizeof *writes);
  if (!writes) return; /* an optimization: nothing lost without it */
  for (int i = 0; i < p->nsteps; i++)
    for (int o = 0; o < p->steps[i].nout; o++) writes[p->steps[i].outs[o]]++;
  for (int j = 1; j < p->nsteps; j++) {
    const Step *b = &p->steps[j];
    const Kernel *kb = &b->kernel;
    if (b->is_routine || kb->has_reduction || kb->nextra || b->nout != 1 || writes[b->outs[0]] != 1) continue;
    bool is_out = false;
    for (int o = 0; o < p->nout; o++) is_out |= p->outs[o].slot == b->outs[0];
    if (is_out) continue;
    int same = -1;
    for (int i = 0; i < j && same < 0; i++) {
      const Step *a = &p->steps[i];
      const Kernel *ka = &a->kernel;
      if (!a->is_routine && !ka->has_reduction && !ka->nextra && a->nout == 1 && writes[a->outs[0]] == 1 &&
          ka->exp == kb->exp && ka->size == kb->size && ka->dtype == kb->dtype && ka->nargs == kb->nargs &&
          !memcmp(a->args, b->args, (size_t)ka->nargs * sizeof *a->args) &&
          !memcmp(ka->arg_dtypes, kb->arg_dtypes, (size_t)ka->nargs * sizeof *ka->arg_dtypes))
        same = i;
    }
    if (same < 0) continue;
    int from = b->outs[0], to = p->steps[same].outs[0];
    for (int k = j + 1; k < p->nsteps; k++)
      for (int a = 0; a < step_nargs(&p->steps[k]); a++)
        if (p->steps[k].args[a] == from) p->steps[k].args[a] = to;
    remove_step(p, j--);
  }
  free(writes);
}

/* Two-phase reductions (ir/alu.h): a reduction step b that reads, at its own output
 * index, the result of an earlier reduction step a over the same (outputs, reduction
 * size) -- the sum of (x - mean)^2 after the mean, of exp(x - max) after the max --
 * computes a's reduction itself as its first phase, and writes a's output as a second
 * output. a's step goes away when no step between them reads its result. */
/* min_row: the shortest rows fused (ALU_REDUCE_LANES on the host, 1 on a device). */
static bool fuse_two_phase(Program *p, int64_t min_row) {
  for (int jb = 0; jb < p->nsteps; jb++) {
    Step *b = &p->steps[jb];
    Kernel *kb = &b->kernel;
    if (b->is_routine || !kb->has_reduction || kb->has_pre || kb->nextra) continue;
    for (int x = 0; x < kb->nargs; x++) {
      int ja = jb - 1, s = b->args[x];
      while (ja >= 0 && p->steps[ja].outs[0] != s) ja--;
      if (ja < 0) continue;
      Step *a = &p->steps[ja];
      const Kernel *ka = &a->kernel;
      /* on the host, rows of at least ALU_REDUCE_LANES: the C renderer's two-phase form is
       * the flat one, which for short strided windows (2x2 pooling) is slower than the
       * loop nests the two separate kernels get; a device's warp or thread rows take any
       * (an MLP's log-softmax over 10 classes: its max and sum of exp in one kernel) */
      if (a->is_routine || !ka->has_reduction || ka->has_pre || ka->nextra || ka->size != kb->size ||
          ka->reduction.size != kb->reduction.size || kb->reduction.size < min_row)
        continue;
      bool between = false; /* a's result read in between: it must stay where it is */
      for (int k = ja + 1; k < jb && !between; k++) {
        const Step *st = &p->steps[k];
        for (int y = 0; y < step_nargs(st); y++) between |= st->args[y] == s;
      }
      if (between) continue;
      /* args: b's, then a's not already there; then only those still read */
      int uni[2 * KERNEL_MAX_ARGS], map_a[KERNEL_MAX_ARGS], nu = kb->nargs;
      jx_dtype udt[2 * KERNEL_MAX_ARGS];
      for (int y = 0; y < kb->nargs; y++) uni[y] = b->args[y], udt[y] = kb->arg_dtypes[y];
      for (int y = 0; y < ka->nargs; y++) {
        int z = 0;
        while (z < nu && uni[z] != a->args[y]) z++;
        if (z == nu) uni[nu] = a->args[y], udt[nu++] = ka->arg_dtypes[y];
        map_a[y] = z;
      }
      /* a's output value: its epilogue (a mean's division) applied to the first phase */
      const AluExp *gidx = alu_special("gidx", kb->size);
      const AluExp *pre = alu_variable("pre", ka->reduction.dtype), *val = pre;
      if (ka->reduction.epilogue) {
        AluMap m0;
        alu_map_init(&m0);
        val = renumber(alu_substitute(ka->reduction.epilogue, "acc", pre), map_a, &m0);
        alu_map_free(&m0);
        if (!val) return false;
      }
      bool other = false;
      AluMap m1, m2;
      alu_map_init(&m1), alu_map_init(&m2);
      const AluExp *exp = replace_row_loads(kb->exp, x, gidx, val, &m1, &other);
      const AluExp *epi = kb->reduction.epilogue
                              ? replace_row_loads(kb->reduction.epilogue, x, gidx, val, &m2, &other)
                              : NULL;
      alu_map_free(&m1), alu_map_free(&m2);
      if (other || !exp || (kb->reduction.epilogue && !epi)) continue;
      AluMap m3;
      alu_map_init(&m3);
      const AluExp *pre_exp = renumber(ka->exp, map_a, &m3);
      alu_map_free(&m3);
      if (!pre_exp) return false;
      bool used[2 * KERNEL_MAX_ARGS] = {false};
      mark_args(exp, used), mark_args(pre_exp, used), mark_args(val, used);
      if (epi) mark_args(epi, used);
      int compact[2 * KERNEL_MAX_ARGS], nargs = 0;
      for (int y = 0; y < nu; y++) compact[y] = used[y] ? nargs++ : -1;
      if (nargs > KERNEL_MAX_ARGS) continue;
      int *na = malloc((size_t)(nargs ? nargs : 1) * sizeof *na);
      if (!na) return false;
      Kernel k = *kb;
      for (int y = 0; y < nu; y++)
        if (compact[y] >= 0) na[compact[y]] = uni[y], k.arg_dtypes[compact[y]] = udt[y];
      AluMap m4;
      alu_map_init(&m4);
      k.exp = renumber(exp, compact, &m4);
      k.pre_exp = renumber(pre_exp, compact, &m4);
      k.reduction.epilogue = epi ? renumber(epi, compact, &m4) : NULL;
      const AluExp *val_c = renumber(val, compact, &m4);
      alu_map_free(&m4);
      k.nargs = nargs;
      k.has_pre = true;
      k.pre = ka->reduction;
      k.pre.epilogue = NULL;
      k.nextra = 1; /* a's output, written too */
      k.extra[0] = val_c;
      k.extra_dtypes[0] = ka->dtype;
      if (!k.exp || !k.pre_exp || !val_c || (epi && !k.reduction.epilogue)) {
        free(na);
        return false;
      }
      int *no = realloc(b->outs, 2 * sizeof *no);
      if (!no) {
        free(na);
        return false;
      }
      free(b->args);
      b->args = na;
      b->kernel = k;
      b->outs = no;
      b->outs[1] = s;
      b->nout = 2;
      remove_step(p, ja);
      jb--; /* b moved down one; look at it again (another first phase is not fused) */
      break;
    }
  }
  return true;
}

/* The step writing slot s; -1 for the program's inputs and constants. */
static int producer_of(const Program *p, int s) {
  for (int i = 0; i < p->nsteps; i++)
    for (int o = 0; o < p->steps[i].nout; o++)
      if (p->steps[i].outs[o] == s) return i;
  return -1;
}

/* Reductions as early as their inputs allow: each moves up to just after the last step
 * writing what it reads, past steps that neither write what it reads or writes nor read
 * what it writes. A reduction that waits on nothing of its neighbours' -- the MLP loss
 * gradient's sum of -y / n over each row, which reads only the labels -- then precedes
 * them, so that an elementwise step reading it and an earlier reduction (dlogits: the
 * sum of exp(x - max) too) can be that earlier reduction's row output (fuse_consumer),
 * one kernel fewer between the logits and the backward's products. */
static void hoist_reductions(Program *p) {
  for (int i = 1; i < p->nsteps; i++) {
    const Step *s = &p->steps[i];
    if (s->is_routine || !s->kernel.has_reduction) continue;
    int q = -1;
    for (int a = 0; a < step_nargs(s); a++) {
      int w = producer_of(p, s->args[a]);
      if (w > q) q = w;
    }
    int to = i;
    while (to > q + 1) { /* past step to - 1? */
      const Step *t = &p->steps[to - 1];
      bool clash = false;
      for (int o = 0; o < t->nout && !clash; o++) {
        for (int a = 0; a < step_nargs(s); a++) clash |= t->outs[o] == s->args[a];
        for (int w = 0; w < s->nout; w++) clash |= t->outs[o] == s->outs[w];
      }
      for (int a = 0; a < step_nargs(t) && !clash; a++)
        for (int w = 0; w < s->nout; w++) clash |= t->args[a] == s->outs[w];
      if (clash) break;
      to--;
    }
    if (to == i) continue;
    Step moved = p->steps[i];
    memmove(&p->steps[to + 1], &p->steps[to], (size_t)(i - to) * sizeof *p->steps);
    p->steps[to] = moved;
  }
}

/* Row outputs (row true; backends with row_outputs; ir/alu.h, Kernel.has_row_out): an
 * elementwise step b over size x R elements that reads a row reduction a's outputs only
 * at its own row (gidx / R) -- softmax's exp(x - max) / sum after the sums -- is
 * computed by a's kernel once each row is reduced, while the row is still in cache: one
 * kernel instead of two, the input read from memory once. Rows of at most 2^16
 * elements, and at least 128 of them unless the whole is small (a row is reduced by one
 * block at most).
 * Epilogues (row false; every backend): an elementwise step b over a reduction a's size
 * elements that reads a's outputs only at its own index -- an SGD update b - lr * db
 * after a bias gradient's column sum, a loss's -sum / n -- becomes a further output of
 * a's kernel (Kernel.extra), computed from the reduced values where they are stored: one
 * kernel instead of two. Reductions without a row output, at most KERNEL_MAX_OUTS
 * outputs in all.
 * a's outputs are still written. The fused step takes b's place where no step between
 * them reads a's outputs, else a's place where every other input of b is there by then
 * (the MLP's dlogits, a row output of the sum of exp(x - max) whose loss the loss total
 * reads in between). */
static bool fuse_consumer(Program *p, bool row) {
  for (int jb = 1; jb < p->nsteps; jb++) {
    Step *b = &p->steps[jb];
    const Kernel *kb = &b->kernel;
    if (b->is_routine || kb->has_reduction || kb->nextra || b->nout != 1) continue;
    for (int ja = jb - 1; ja >= 0; ja--) {
      Step *a = &p->steps[ja];
      const Kernel *ka = &a->kernel;
      bool reads = false, between = false;
      for (int x = 0; x < kb->nargs; x++)
        for (int o = 0; o < a->nout; o++) reads |= b->args[x] == a->outs[o];
      if (!reads) continue;
      for (int k = ja + 1; k < jb && !between; k++) {
        const Step *st = &p->steps[k];
        for (int y = 0; y < step_nargs(st); y++)
          for (int o = 0; o < a->nout; o++) between |= st->args[y] == a->outs[o];
      }
      bool at_a = between;
      for (int x = 0; x < kb->nargs && at_a; x++) {
        bool own = false;
        for (int o = 0; o < a->nout; o++) own |= b->args[x] == a->outs[o];
        at_a = own || producer_of(p, b->args[x]) < ja;
      }
      int64_t N = ka->size, R = ka->reduction.size;
      if ((between && !at_a) || a->is_routine || !ka->has_reduction || ka->has_row_out || ka->nextra > KERNEL_MAX_OUTS - 2 ||
          (row && (R < 2 || R > 65536 || N * R != kb->size || (N < 128 && N * R > 65536))) || (!row && N != kb->size))
        break; /* b reads the latest producer it depends on; an earlier one cannot fuse */
      /* args: b's, then a's not already there */
      int uni[2 * KERNEL_MAX_ARGS], map_a[KERNEL_MAX_ARGS], nu = kb->nargs;
      jx_dtype udt[2 * KERNEL_MAX_ARGS];
      for (int y = 0; y < kb->nargs; y++) uni[y] = b->args[y], udt[y] = kb->arg_dtypes[y];
      for (int y = 0; y < ka->nargs; y++) {
        int z = 0;
        while (z < nu && uni[z] != a->args[y]) z++;
        if (z == nu) uni[nu] = a->args[y], udt[nu++] = ka->arg_dtypes[y];
        map_a[y] = z;
      }
      /* b's expression in a's loop: its flat index is gidx * R + ridx (a row output) or
       * gidx; loads of a's outputs at the row become their values (acc: the reduced
       * value) */
      const AluExp *gidx = alu_special("gidx", N), *ridx = alu_special("ridx", R);
      const AluExp *e = row ? alu_simplify(alu_substitute(kb->exp, "gidx", alu_binary(ALU_ADD, alu_binary(ALU_MUL, gidx, i64(R)), ridx)))
                            : kb->exp;
      bool other = false;
      for (int x = 0; e && x < kb->nargs && !other; x++)
        for (int o = 0; o < a->nout; o++) {
          if (b->args[x] != a->outs[o]) continue;
          const AluExp *val = o ? ka->extra[o - 1] : ka->reduction.epilogue ? ka->reduction.epilogue
                                                                             : alu_variable("acc", ka->reduction.dtype);
          AluMap m0, m1;
          alu_map_init(&m0), alu_map_init(&m1);
          val = val ? renumber(val, map_a, &m0) : NULL;
          e = val ? replace_row_loads(e, x, gidx, val, &m1, &other) : NULL;
          alu_map_free(&m0), alu_map_free(&m1);
        }
      if (!e) return false;
      if (other) break;
      /* a's expressions in the union's numbering, then only the args still read */
      Kernel k = *ka;
      AluMap m2;
      alu_map_init(&m2);
      k.exp = renumber(ka->exp, map_a, &m2);
      if (k.has_pre) k.pre_exp = renumber(ka->pre_exp, map_a, &m2);
      if (ka->reduction.epilogue) k.reduction.epilogue = renumber(ka->reduction.epilogue, map_a, &m2);
      for (int o = 0; o < ka->nextra; o++) k.extra[o] = renumber(ka->extra[o], map_a, &m2);
      alu_map_free(&m2);
      bool used[2 * KERNEL_MAX_ARGS] = {false}, ok = k.exp && (!k.has_pre || k.pre_exp) &&
                                                     (!ka->reduction.epilogue || k.reduction.epilogue);
      for (int o = 0; o < ka->nextra; o++) ok = ok && k.extra[o];
      if (!ok) return false;
      mark_args(e, used), mark_args(k.exp, used);
      if (k.has_pre) mark_args(k.pre_exp, used);
      if (k.reduction.epilogue) mark_args(k.reduction.epilogue, used);
      for (int o = 0; o < k.nextra; o++) mark_args(k.extra[o], used);
      int compact[2 * KERNEL_MAX_ARGS], nargs = 0;
      for (int y = 0; y < nu; y++) compact[y] = used[y] ? nargs++ : -1;
      if (nargs > KERNEL_MAX_ARGS) break;
      int *na = malloc((size_t)(nargs ? nargs : 1) * sizeof *na);
      int *no = malloc((size_t)(a->nout + 1) * sizeof *no);
      if (!na || !no) {
        free(na), free(no);
        return false;
      }
      for (int y = 0; y < nu; y++)
        if (compact[y] >= 0) na[compact[y]] = uni[y], k.arg_dtypes[compact[y]] = udt[y];
      AluMap m3;
      alu_map_init(&m3);
      k.exp = renumber(k.exp, compact, &m3);
      if (k.has_pre) k.pre_exp = renumber(k.pre_exp, compact, &m3);
      if (k.reduction.epilogue) k.reduction.epilogue = renumber(k.reduction.epilogue, compact, &m3);
      for (int o = 0; o < k.nextra; o++) k.extra[o] = renumber(k.extra[o], compact, &m3);
      const AluExp *bexp = renumber(e, compact, &m3);
      alu_map_free(&m3);
      k.nargs = nargs;
      if (row) k.has_row_out = true, k.row_exp = bexp, k.row_dtype = kb->dtype;
      else k.extra[k.nextra] = bexp, k.extra_dtypes[k.nextra++] = kb->dtype;
      ok = k.exp && bexp && (!k.has_pre || k.pre_exp) && (!ka->reduction.epilogue || k.reduction.epilogue);
      for (int o = 0; o < k.nextra; o++) ok = ok && k.extra[o];
      if (!ok) {
        free(na), free(no);
        return false;
      }
      memcpy(no, a->outs, (size_t)a->nout * sizeof *no);
      no[a->nout] = b->outs[0];
      Step *at = at_a ? a : b;
      int nout = a->nout + 1;
      free(at->args), free(at->outs);
      at->kernel = k;
      at->args = na;
      at->outs = no;
      at->nout = nout;
      remove_step(p, at_a ? jb : ja);
      jb--; /* b gone, or moved down one */
      break;
    }
  }
  return true;
}

/* Argument of x when x loads it at exactly gidx (a contiguous value read in order); -1
 * otherwise. */
static int load_at(const AluExp *x, const AluExp *gidx) {
  return x->op == ALU_GLOBAL_INDEX && alu_simplify(x->src[0]) == gidx ? (int)x->arg : -1;
}

/* e = G or c * G (c a float literal, either side) with G a load at gidx: G's argument,
 * *c set (1 for G alone); -1 otherwise. */
static int scaled_load(const AluExp *e, const AluExp *gidx, double *c) {
  int a = load_at(e, gidx);
  if (a >= 0) {
    *c = 1;
    return a;
  }
  for (int s = 0; e->op == ALU_MUL && s < 2; s++) {
    const AluExp *k = e->src[s];
    if (k->op == ALU_CONST && dtype_is_floating(k->dtype) && !dtype_is_complex(k->dtype) &&
        (a = load_at(e->src[1 - s], gidx)) >= 0) {
      *c = k->value.f;
      return a;
    }
  }
  return -1;
}

/* A GEMM's result G whose one reader is an elementwise update W + c G or W - c G (an SGD
 * step's W - lr * dW) becomes the GEMM's own epilogue: the routine computes
 * out = (+-c) (a @ b) + W (axpby, cuBLASLt's D = alpha A B + beta C) into the update's
 * output, and the update kernel goes away -- a launch and a read and write of W and G
 * less, on the step's critical path after the weight gradient. W must be ready at the
 * GEMM (computed before it). Only where the backend asks (Backend.gemm_update). */
static bool fuse_gemm_update(Program *p) {
  int *producer = malloc((size_t)(p->nslots ? p->nslots : 1) * sizeof *producer);
  int *readers = calloc((size_t)(p->nslots ? p->nslots : 1), sizeof *readers);
  if (!producer || !readers) {
    free(producer), free(readers);
    return false;
  }
  for (int s = 0; s < p->nslots; s++) producer[s] = -1;
  for (int i = 0; i < p->nsteps; i++) {
    for (int o = 0; o < p->steps[i].nout; o++) producer[p->steps[i].outs[o]] = i;
    for (int a = 0; a < step_nargs(&p->steps[i]); a++) readers[p->steps[i].args[a]]++;
  }
  for (int o = 0; o < p->nout; o++) readers[p->outs[o].slot]++;
  bool ok = true;
  for (int j = 0; j < p->nsteps && ok; j++) {
    Step *k = &p->steps[j];
    const Kernel *kk = &k->kernel;
    if (k->is_routine || kk->has_reduction || kk->nextra || kk->has_row_out || kk->nargs != 2 ||
        !(kk->exp->op == ALU_ADD || kk->exp->op == ALU_SUB))
      continue;
    const AluExp *gidx = alu_special("gidx", kk->size);
    double c = 0, alpha = 0;
    int aw = -1, ag = -1;
    for (int side = 0; side < 2 && ag < 0; side++) { /* W first, or (ADD) second */
      if (side == 1 && kk->exp->op == ALU_SUB) break;
      const AluExp *w = kk->exp->src[side], *g = kk->exp->src[1 - side];
      aw = load_at(w, gidx), ag = aw >= 0 ? scaled_load(g, gidx, &c) : -1;
      int gp = ag >= 0 ? producer[k->args[ag]] : -1;
      if (ag == aw || gp < 0 || !p->steps[gp].is_routine) ag = -1; /* G: a routine's result */
    }
    if (aw < 0 || ag < 0) continue;
    alpha = kk->exp->op == ALU_SUB ? -c : c;
    int gs = k->args[ag], ws = k->args[aw], si = producer[gs];
    if (si < 0 || si >= j || readers[gs] != 1) continue;
    Step *s = &p->steps[si];
    Routine *r = &s->routine;
    if (!s->is_routine || r->op != ROUTINE_GEMM || r->axpby || r->dtype != kk->dtype || kk->arg_dtypes[aw] != kk->dtype ||
        kk->arg_dtypes[ag] != kk->dtype || dtype_is_complex(r->dtype) || r->outer * r->n * r->inner != kk->size ||
        producer[ws] >= si)
      continue;
    int *na = realloc(s->args, 3 * sizeof *na);
    if (!na) {
      ok = false;
      break;
    }
    s->args = na;
    s->args[2] = ws;
    r->nin = 3, r->axpby = true, r->alpha = alpha, r->beta = 1;
    s->outs[0] = k->outs[0];
    producer[k->outs[0]] = si, producer[gs] = -1;
    remove_step(p, j);
    for (int x = 0; x < p->nslots; x++)
      if (producer[x] > j) producer[x]--;
    j--;
  }
  free(producer), free(readers);
  if (!ok) error_set(JX_ERR_OOM, "jit: out of memory");
  return ok;
}

/* Horizontal fusion: an elementwise kernel step b joins an earlier one a of the same
 * size that reads one of the same buffers, when b reads nothing computed at or after a
 * (so it can run in a's place). The fused kernel reads the shared buffers once and
 * writes both outputs -- an optimizer update's new moments and new parameters all read
 * the gradient. Only flat-indexed kernels are fused (see flat_indexing). */
static bool fuse_siblings(Program *p) {
  int *producer = malloc((size_t)(p->nslots ? p->nslots : 1) * sizeof *producer);
  if (!producer) return false;
  for (int s = 0; s < p->nslots; s++) producer[s] = -1;
  for (int i = 0; i < p->nsteps; i++)
    for (int o = 0; o < p->steps[i].nout; o++) producer[p->steps[i].outs[o]] = i;
  for (int i = 0; i < p->nsteps; i++) {
    Step *a = &p->steps[i];
    if (a->is_routine || a->kernel.has_reduction || !flat_indexing(a->kernel.exp)) continue;
    for (int j = i + 1; j < p->nsteps; j++) {
      a = &p->steps[i];
      Step *b = &p->steps[j];
      Kernel *ka = &a->kernel, *kb = &b->kernel;
      if (b->is_routine || kb->has_reduction || kb->size != ka->size || kb->nextra ||
          ka->nextra + 1 > KERNEL_MAX_OUTS - 1 || !flat_indexing(kb->exp))
        continue;
      bool shares = false, ready = true;
      int map[KERNEL_MAX_ARGS], args[KERNEL_MAX_ARGS], nargs = ka->nargs;
      memcpy(args, a->args, (size_t)nargs * sizeof *args);
      for (int x = 0; x < kb->nargs && ready; x++) {
        int sl = b->args[x], y = 0;
        ready = producer[sl] < i;
        while (y < nargs && args[y] != sl) y++;
        shares |= y < ka->nargs;
        if (y == nargs) {
          if (nargs == KERNEL_MAX_ARGS) ready = false;
          else args[nargs++] = sl;
        }
        map[x] = y;
      }
      if (!ready || !shares) continue;
      AluMap memo;
      alu_map_init(&memo);
      const AluExp *e = renumber(kb->exp, map, &memo);
      alu_map_free(&memo);
      int *na = e ? realloc(a->args, (size_t)nargs * sizeof *na) : NULL;
      if (na) a->args = na;
      int *no = na ? realloc(a->outs, (size_t)(a->nout + 1) * sizeof *no) : NULL;
      if (!no) {
        free(producer);
        return false;
      }
      a->outs = no;
      a->args = na;
      memcpy(a->args, args, (size_t)nargs * sizeof *args);
      for (int x = 0; x < kb->nargs; x++) ka->arg_dtypes[map[x]] = kb->arg_dtypes[x];
      ka->nargs = nargs;
      ka->extra[ka->nextra] = e;
      ka->extra_dtypes[ka->nextra] = kb->dtype;
      ka->nextra++;
      a->outs[a->nout++] = b->outs[0];
      producer[b->outs[0]] = i;
      remove_step(p, j);
      for (int s = 0; s < p->nslots; s++)
        if (producer[s] > j) producer[s]--;
      j--;
    }
  }
  free(producer);
  return true;
}

/* Group epilogues (backends with row_group; ir/alu.h, Kernel.post): a reduction b over
 * rows of G that reads a reduction a's output only at its own row (gidx * G + ridx),
 * where the backend computes a's outputs G at a time -- the MLP's log-softmax and
 * dlogits over each row of 10 logits after the logits' grouped warp rows of h @ W2 --
 * runs in a's kernel once a group is reduced: one kernel and one dependency fewer on
 * the step's critical path, the logits never read back. a's output is still written
 * (the loss reads it). The fused step takes a's place, so every other input of b must
 * be there by then. */
static bool fuse_group_post(Program *p, const Backend *be) {
  if (!be || !be->row_group) return true;
  for (int jb = 1; jb < p->nsteps; jb++) {
    Step *b = &p->steps[jb];
    const Kernel *kb = &b->kernel;
    if (b->is_routine || !kb->has_reduction || kb->post || kb->reduction.size < 2) continue;
    int64_t G = kb->reduction.size;
    for (int ja = jb - 1; ja >= 0; ja--) {
      Step *a = &p->steps[ja];
      const Kernel *ka = &a->kernel;
      int xa = -1, nread = 0;
      for (int x = 0; x < kb->nargs; x++)
        for (int o = 0; o < a->nout; o++)
          if (b->args[x] == a->outs[o]) nread++, xa = o == 0 ? x : -1;
      if (!nread) continue;
      /* b reads the latest producer it depends on; an earlier one cannot fuse */
      if (nread != 1 || xa < 0 || a->is_routine || !ka->has_reduction || ka->has_row_out || ka->post ||
          ka->size != kb->size * G || kernel_nouts(ka) + kernel_nouts(kb) > KERNEL_MAX_OUTS || be->row_group(ka) != G)
        break;
      bool ready = true;
      for (int x = 0; x < kb->nargs && ready; x++) ready = x == xa || producer_of(p, b->args[x]) < ja;
      const AluExp *at = kernel_group_index(kb);
      if (!at) return false;
      if (!ready || !kernel_reads_only_at(kb, xa, at)) break;
      /* args: a's, then b's others not already there; the post's one more: a's output */
      int uni[2 * KERNEL_MAX_ARGS], map_b[KERNEL_MAX_ARGS], nu = ka->nargs;
      jx_dtype udt[2 * KERNEL_MAX_ARGS];
      for (int y = 0; y < ka->nargs; y++) uni[y] = a->args[y], udt[y] = ka->arg_dtypes[y];
      for (int y = 0; y < kb->nargs; y++) {
        if (y == xa) continue;
        int z = 0;
        while (z < nu && uni[z] != b->args[y]) z++;
        if (z == nu) uni[nu] = b->args[y], udt[nu++] = kb->arg_dtypes[y];
        map_b[y] = z;
      }
      if (nu + 1 > KERNEL_MAX_ARGS) break;
      map_b[xa] = nu;
      Kernel *q = malloc(sizeof *q);
      int *na = malloc((size_t)nu * sizeof *na), *no = malloc((size_t)(a->nout + b->nout) * sizeof *no);
      bool ok = q && na && no;
      if (ok) {
        *q = *kb;
        AluMap m;
        alu_map_init(&m);
        q->exp = renumber(kb->exp, map_b, &m);
        if (kb->has_pre) q->pre_exp = renumber(kb->pre_exp, map_b, &m);
        if (kb->reduction.epilogue) q->reduction.epilogue = renumber(kb->reduction.epilogue, map_b, &m);
        for (int o = 0; o < kb->nextra; o++) q->extra[o] = renumber(kb->extra[o], map_b, &m);
        if (kb->has_row_out) q->row_exp = renumber(kb->row_exp, map_b, &m);
        alu_map_free(&m);
        ok = q->exp && (!kb->has_pre || q->pre_exp) && (!kb->reduction.epilogue || q->reduction.epilogue) &&
             (!kb->has_row_out || q->row_exp);
        for (int o = 0; o < kb->nextra; o++) ok = ok && q->extra[o];
      }
      if (!ok) {
        free(q), free(na), free(no);
        return false;
      }
      q->nargs = nu + 1;
      memcpy(q->arg_dtypes, udt, (size_t)nu * sizeof *udt);
      q->arg_dtypes[nu] = ka->dtype;
      memcpy(na, uni, (size_t)nu * sizeof *na);
      memcpy(no, a->outs, (size_t)a->nout * sizeof *no);
      memcpy(no + a->nout, b->outs, (size_t)b->nout * sizeof *no);
      a->kernel.nargs = nu;
      memcpy(a->kernel.arg_dtypes, udt, (size_t)nu * sizeof *udt);
      a->kernel.post = q;
      free(a->args), free(a->outs);
      a->args = na, a->outs = no, a->nout += b->nout;
      remove_step(p, jb);
      jb--;
      break;
    }
  }
  return true;
}

/* Selected loads (backends with select_loads): a select between two loads of one input
 * -- where(c, x[i], x[j]), or masked, where(c, where(u, x[i], z), where(v, x[j], z)) with
 * z a constant (the zero of a padded view) -- is one load at the selected index,
 * where(c ? u : v, x[c ? i : j], z). A concatenation of shifted views (im2col's 9 taps
 * of a 3x3 convolution) then reads one element an output, not every piece's. The
 * indices were in bounds wherever the loads were (the backends load every branch), so
 * the selected one is too. Only where each side's load is read by that select alone
 * (uses: parents by node), so no load is left that still runs beside the new one. */
typedef struct SelLoad {
  const AluExp *load, *valid, *zero; /* valid, zero: NULL for a plain load */
} SelLoad;

static int64_t node_uses(AluMap *uses, const AluExp *e) {
  const void *v = NULL;
  return alu_map_get(uses, e, &v) ? (int64_t)(intptr_t)v : 0;
}

static bool sel_load(const AluExp *e, AluMap *uses, SelLoad *s) {
  if (e->op == ALU_GLOBAL_INDEX) {
    *s = (SelLoad){.load = e};
    return node_uses(uses, e) <= 1;
  }
  if (e->op != ALU_WHERE || e->src[1]->op != ALU_GLOBAL_INDEX || e->src[2]->op != ALU_CONST) return false;
  *s = (SelLoad){.load = e->src[1], .valid = e->src[0], .zero = e->src[2]};
  return node_uses(uses, e) <= 1 && node_uses(uses, e->src[1]) <= 1;
}

static const AluExp *select_loads_in(const AluExp *e, AluMap *uses, AluMap *memo) {
  if (!e->nsrc) return e;
  const void *hit;
  if (alu_map_get(memo, e, &hit)) return hit;
  const AluExp *src[4];
  for (int i = 0; i < e->nsrc; i++)
    if (!(src[i] = select_loads_in(e->src[i], uses, memo))) return NULL;
  const AluExp *r = alu_make(e->op, e->dtype, e->nsrc, src, e->value, e->arg, e->name);
  SelLoad a, b;
  if (r && r->op == ALU_WHERE && sel_load(r->src[1], uses, &a) && sel_load(r->src[2], uses, &b) &&
      a.load->arg == b.load->arg && a.load->dtype == b.load->dtype && (!a.zero || !b.zero || a.zero == b.zero)) {
    const AluExp *c = r->src[0], *yes = alu_const_int(JX_BOOL, 1);
    const AluExp *at = alu_where(c, a.load->src[0], b.load->src[0]);
    const AluExp *load = at ? alu_global(a.load->arg, a.load->dtype, at) : NULL;
    if (a.zero || b.zero) {
      const AluExp *valid = alu_where(c, a.valid ? a.valid : yes, b.valid ? b.valid : yes);
      r = valid && load ? alu_where(valid, load, a.zero ? a.zero : b.zero) : NULL;
    } else r = load;
  }
  if (r && !alu_map_put(memo, e, r)) return NULL;
  return r;
}

static bool count_uses(const AluExp *e, AluMap *uses) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  bool ok = order != NULL;
  for (int64_t i = 0; ok && i < n; i++)
    for (int k = 0; k < order[i]->nsrc && ok; k++)
      ok = alu_map_put(uses, order[i]->src[k], (const void *)(intptr_t)(node_uses(uses, order[i]->src[k]) + 1));
  free((void *)order);
  return ok;
}

/* The kernel's expressions (and its post's) rewritten by select_loads_in. */
static bool select_loads_kernel(Kernel *k) {
  const AluExp **roots[4 + KERNEL_MAX_OUTS] = {&k->exp};
  int n = 1;
  if (k->has_pre) roots[n++] = &k->pre_exp;
  if (k->has_reduction && k->reduction.epilogue) roots[n++] = &k->reduction.epilogue;
  for (int o = 0; o < k->nextra; o++) roots[n++] = &k->extra[o];
  if (k->has_row_out) roots[n++] = &k->row_exp;
  AluMap uses, memo;
  alu_map_init(&uses), alu_map_init(&memo);
  bool ok = true;
  /* a node several roots read (a value an extra output shares) counts once a root */
  for (int i = 0; i < n && ok; i++) ok = count_uses(*roots[i], &uses);
  for (int i = 0; i < n && ok; i++) {
    const AluExp *r = select_loads_in(*roots[i], &uses, &memo);
    if (r) *roots[i] = r;
    ok = r != NULL;
  }
  alu_map_free(&uses), alu_map_free(&memo);
  return ok && (!k->post || select_loads_kernel(k->post));
}

static bool select_loads(Program *p, const Backend *be) {
  static int on = -1;
  if (!be || !be->select_loads || !config_env_setting(&on, "JAXC_SELECT_LOADS", 1, 0, 1)) return true;
  for (int s = 0; s < p->nsteps; s++)
    if (!p->steps[s].is_routine && !select_loads_kernel(&p->steps[s].kernel)) return false;
  return true;
}

Program *jit_lower(const Jaxpr *j, const Backend *be) {
  Program *p = calloc(1, sizeof *p);
  JitLower L = {.base = lower_settings(p, be),
                .j = j,
                .vals = calloc((size_t)(j->nvars ? j->nvars : 1), sizeof(Lazy))};
  int *last_use = NULL; /* by slot: the last step reading it (-1: never) */
  bool ok = p && L.vals;
  /* uses per variable, so shared values are materialized once */
  for (int e = 0; ok && e < j->neqns; e++) /* consumers: distinct equations (y * y is one) */
    for (int i = 0; i < j->eqns[e].nin; i++) {
      bool seen = false;
      for (int k = 0; k < i; k++) seen |= j->eqns[e].in[k] == j->eqns[e].in[i];
      if (!seen) L.vals[j->eqns[e].in[i]].uses++;
    }
  for (int o = 0; ok && o < j->nout; o++) L.vals[j->outvars[o]].uses++;
  if (ok) L.sink = elementwise_sinks(j);
  for (int i = 0; ok && i < j->nin; i++) {
    Lazy *v = &L.vals[j->invars[i]];
    int uses = v->uses;
    v->aval = j->vars[j->invars[i]];
    v->slot = lower_new_slot(&L.base, SLOT_INPUT, i);
    v->st = shape_contiguous(v->aval.ndim, v->aval.shape); /* inputs are made contiguous */
    v->uses = uses;
    ok = v->slot >= 0 && v->st;
  }
  for (int c = 0; ok && c < j->nconst; c++) {
    Lazy *v = &L.vals[j->constvars[c]];
    int uses = v->uses;
    v->aval = j->vars[j->constvars[c]];
    const AluExp *value = const_scalar(j->consts[c]);
    v->slot = value ? -1 : lower_new_slot(&L.base, SLOT_CONST, c);
    v->src = value; /* a constant of the source's every index */
    v->src_ndim = v->aval.ndim;
    memcpy(v->src_shape, v->aval.shape, sizeof v->src_shape);
    v->st = shape_copy(j->consts[c]->st);
    v->uses = uses;
    ok = (value || v->slot >= 0) && v->st;
  }
  for (int e = 0; ok && e < j->neqns; e++) ok = lower_eqn(&L, &j->eqns[e]);
  if (ok) {
    p->outs = calloc((size_t)(j->nout ? j->nout : 1), sizeof *p->outs);
    p->nout = j->nout;
    ok = p->outs != NULL;
  }
  for (int o = 0; ok && o < j->nout; o++) {
    Lazy *v = &L.vals[j->outvars[o]];
    if (v->slot < 0) ok = lower_realize(&L.base, v); /* outputs that are views of buffers stay views */
    if (ok) {
      p->outs[o] = (ProgramOutput){.slot = v->slot, .st = shape_copy(v->st), .aval = v->aval};
      ok = p->outs[o].st != NULL;
    }
  }
  /* the passes; the IR checker runs after each (a check costs microseconds per program,
   * next to the milliseconds of compiling it) */
  ok = ok && jit_program_check(p, "lower") == JX_OK;
  if (ok) dedup_kernels(p);
  ok = ok && jit_program_check(p, "dedup_kernels") == JX_OK;
  ok = ok && fuse_two_phase(p, be && !be->host_memory ? 1 : ALU_REDUCE_LANES) &&
       jit_program_check(p, "fuse_two_phase") == JX_OK;
  if (ok && be && be->row_outputs) hoist_reductions(p);
  ok = ok && (!be || !be->row_outputs || (fuse_consumer(p, true) && jit_program_check(p, "fuse_row_output") == JX_OK));
  ok = ok && (!config_gemm_update(be ? be->gemm_update : 0) ||
              (fuse_gemm_update(p) && jit_program_check(p, "fuse_gemm_update") == JX_OK));
  ok = ok && fuse_consumer(p, false) && jit_program_check(p, "fuse_epilogue") == JX_OK;
  ok = ok && fuse_siblings(p) && jit_program_check(p, "fuse_siblings") == JX_OK;
  ok = ok && fuse_group_post(p, be) && jit_program_check(p, "fuse_group_post") == JX_OK;
  ok = ok && select_loads(p, be) && jit_program_check(p, "select_loads") == JX_OK;
  /* last uses (after fusion moved steps) */
  if (ok && !(last_use = malloc((size_t)(p->nslots ? p->nslots : 1) * sizeof *last_use))) ok = false;
  for (int s = 0; ok && s < p->nslots; s++) last_use[s] = -1;
  for (int k = 0; ok && k < p->nsteps; k++) {
    const Step *st = &p->steps[k];
    for (int a = 0; a < step_nargs(st); a++) last_use[st->args[a]] = k;
  }
  for (int o = 0; ok && o < j->nout; o++) last_use[p->outs[o].slot] = p->nsteps; /* live past the end */
  /* free temporaries at their last use */
  for (int s = 0; ok && s < p->nslots; s++) {
    int at = last_use[s];
    if (p->kinds[s] != SLOT_TEMP || at < 0 || at >= p->nsteps) continue;
    Step *st = &p->steps[at];
    int *f = realloc(st->frees, (size_t)(st->nfree + 1) * sizeof *f);
    if (!f) ok = false;
    else f[st->nfree++] = s, st->frees = f;
  }
  for (int v = 0; L.vals && v < j->nvars; v++) shape_free(L.vals[v].st);
  free(L.vals);
  free(L.sink);
  free(last_use);
  if (!ok) {
    if (!error_pending()) error_set(JX_ERR_OOM, "jit: out of memory");
    jit_program_free(p);
    return NULL;
  }
  return p;
}

void jit_program_free(Program *p) { lower_program_free(p); }

int jit_program_nsteps(const Program *p) { return p ? p->nsteps : 0; }

int jit_program_nkernels(const Program *p) {
  int n = 0;
  for (int s = 0; p && s < p->nsteps; s++) n += !p->steps[s].is_routine;
  return n;
}

int jit_program_nroutines(const Program *p) { return p ? p->nsteps - jit_program_nkernels(p) : 0; }

jx_status jit_program_check(const Program *p, const char *pass) { return lower_program_check(p, pass); }
