/* lower.c -- Jaxpr -> Program. Every jaxpr variable becomes a Lazy value: a source
 * (a program slot holding a buffer, or a scalar expression of the flat index "idx" of
 * its contiguous shape) seen through a shape tracker. Movement primitives change only
 * the tracker; elementwise primitives build expressions; reductions and dot_general
 * emit kernels whose loads inline their producers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/dtype.h"
#include "core/error.h"
#include "jit/jit.h"
#include "trace/kexp.h"

typedef struct Lazy {
  int slot;              /* >= 0: the source is this slot's buffer */
  const AluExp *src;     /* else: value at VARIABLE "idx" over src_shape */
  int src_ndim;
  int64_t src_shape[JX_MAX_NDIM];
  ShapeTracker *st;      /* the view of the source that is this value */
  Aval aval;
  int uses;              /* consumers left (equations and outputs) */
} Lazy;

typedef struct Lower {
  const Jaxpr *j;
  Program *p;
  Lazy *vals;            /* by jaxpr variable */
  int *last_use;         /* by slot: last step reading it (-1: never) */
  bool cheap_recompute;  /* the device's (backend.h) */
} Lower;

static const AluExp *i64(int64_t v) { return alu_const_int(JX_INT64, v); }
static const AluExp *idx_var(void) { return alu_variable("idx", JX_INT64); }

static int new_slot(Lower *L, SlotKind kind, int index) {
  Program *p = L->p;
  int n = p->nslots + 1;
  SlotKind *k = realloc(p->kinds, (size_t)n * sizeof *k);
  if (k) p->kinds = k;
  int *ix = k ? realloc(p->index, (size_t)n * sizeof *ix) : NULL;
  if (ix) p->index = ix;
  int *lu = ix ? realloc(L->last_use, (size_t)n * sizeof *lu) : NULL;
  if (!lu) {
    error_set(JX_ERR_OOM, "jit: out of memory");
    return -1;
  }
  L->last_use = lu;
  p->kinds[p->nslots] = kind;
  p->index[p->nslots] = index;
  lu[p->nslots] = -1;
  return p->nslots++;
}

/* The value of lazy v at per-dim indices idx (of v's shape), with slot loads as
 * GLOBAL_INDEX(slot). Reads in padding give 0. */
static const AluExp *lazy_load(const Lazy *v, const AluExp *const *idx) {
  const AluExp *index, *valid;
  kexp_view_index(v->st, idx, &index, &valid);
  const AluExp *x = v->slot >= 0 ? alu_global(v->slot, v->aval.dtype, index)
                                 : alu_substitute(v->src, "idx", index);
  return kexp_masked(valid, x);
}

/* KexpLoad over an equation's operands (ctx: Lazy *const *) */
static const AluExp *load_operand(void *ctx, int i, const AluExp *const *idx) {
  Lazy *const *in = ctx;
  return lazy_load(in[i], idx);
}

static const AluExp *lazy_load_flat(const Lazy *v, const AluExp *flat) {
  const AluExp *idx[JX_MAX_NDIM];
  shape_unflatten(flat, v->aval.ndim, v->aval.shape, idx);
  return lazy_load(v, idx);
}

/* A lazy value computed by exp (over VARIABLE idx) with shape aval. */
static bool set_exp(Lazy *out, const AluExp *exp, const Aval *aval) {
  out->slot = -1;
  out->src = exp;
  out->aval = *aval;
  out->src_ndim = aval->ndim;
  memcpy(out->src_shape, aval->shape, sizeof out->src_shape);
  out->st = shape_contiguous(aval->ndim, aval->shape);
  return exp && out->st;
}

/* Renumbers GLOBAL_INDEX(slot) loads to kernel args 0..n-1; fills args with the slots. */
static const AluExp *remap(const AluExp *e, AluMap *memo, int *args, int *nargs,
                           jx_dtype *dtypes) {
  const void *hit;
  if (alu_map_get(memo, e, &hit)) return hit;
  const AluExp *src[4];
  for (int s = 0; s < e->nsrc; s++) src[s] = remap(e->src[s], memo, args, nargs, dtypes);
  int64_t arg = e->arg;
  if (e->op == ALU_GLOBAL_INDEX) {
    int a = 0;
    while (a < *nargs && args[a] != e->arg) a++;
    if (a == *nargs) dtypes[*nargs] = e->dtype, args[(*nargs)++] = (int)e->arg;
    arg = a;
  }
  const AluExp *r = alu_make(e->op, e->dtype, e->nsrc, src, e->value, arg, e->name);
  alu_map_put(memo, e, r);
  return r;
}

/* Appends a step reading `args` and writing nout new slots; returns the first (the
 * others follow it). */
static int push_step_n(Lower *L, const Step *st, const int *args, int nargs, int nout) {
  Program *p = L->p;
  int first = -1;
  for (int o = 0; o < nout; o++) {
    int s = new_slot(L, SLOT_TEMP, -1);
    if (s < 0) return -1;
    if (o == 0) first = s;
  }
  Step *steps = realloc(p->steps, (size_t)(p->nsteps + 1) * sizeof *steps);
  int *sargs = steps ? malloc((size_t)(nargs ? nargs : 1) * sizeof *sargs) : NULL;
  int *outs = sargs ? malloc((size_t)nout * sizeof *outs) : NULL;
  if (steps) p->steps = steps;
  if (!outs) {
    free(sargs);
    error_set(JX_ERR_OOM, "jit: out of memory");
    return -1;
  }
  memcpy(sargs, args, (size_t)nargs * sizeof *sargs);
  for (int o = 0; o < nout; o++) outs[o] = first + o;
  steps[p->nsteps] = *st;
  steps[p->nsteps].args = sargs;
  steps[p->nsteps].nout = nout;
  steps[p->nsteps].outs = outs;
  for (int a = 0; a < nargs; a++) L->last_use[args[a]] = p->nsteps;
  p->nsteps++;
  return first;
}

static int push_step(Lower *L, const Step *st, const int *args, int nargs) {
  return push_step_n(L, st, args, nargs, 1);
}

/* Emits a kernel (exp over SPECIAL gidx/ridx with slot loads) writing a new slot. */
static int emit(Lower *L, Kernel *k) {
  int args[KERNEL_MAX_ARGS], nargs = 0;
  AluMap memo;
  alu_map_init(&memo);
  /* remap can only see KERNEL_MAX_ARGS distinct slots; count first */
  int64_t n = 0;
  const AluExp **nodes = alu_toposort(k->exp, &n);
  int distinct[4 * KERNEL_MAX_ARGS], nd = 0;
  for (int64_t i = 0; nodes && i < n; i++)
    if (nodes[i]->op == ALU_GLOBAL_INDEX) {
      int d = 0;
      while (d < nd && distinct[d] != nodes[i]->arg) d++;
      if (d == nd && nd < 4 * KERNEL_MAX_ARGS) distinct[nd++] = (int)nodes[i]->arg;
    }
  free(nodes);
  if (nd > KERNEL_MAX_ARGS) {
    alu_map_free(&memo);
    error_set(JX_ERR_UNSUPPORTED, "jit: a fused kernel reads %d buffers (max %d)", nd, KERNEL_MAX_ARGS);
    return -1;
  }
  k->exp = alu_simplify(remap(k->exp, &memo, args, &nargs, k->arg_dtypes));
  alu_map_free(&memo);
  if (k->has_reduction && k->reduction.epilogue)
    k->reduction.epilogue = alu_simplify(k->reduction.epilogue);
  k->nargs = nargs;
  return push_step(L, &(Step){.kernel = *k}, args, nargs);
}

/* Materializes lazy v into a contiguous buffer slot (no-op if it already is one). */
static bool realize(Lower *L, Lazy *v) {
  if (v->slot >= 0 && shape_is_contiguous(v->st)) return true;
  int64_t n = shape_numel(v->aval.ndim, v->aval.shape);
  Kernel k = {.size = n, .dtype = v->aval.dtype};
  k.exp = lazy_load_flat(v, alu_special("gidx", n));
  int s = emit(L, &k);
  if (s < 0) return false;
  shape_free(v->st);
  v->slot = s;
  v->src = NULL;
  v->st = shape_contiguous(v->aval.ndim, v->aval.shape);
  return v->st != NULL;
}

/* ------------------------------------------------------------ per primitive */

/* Both words of threefry2x32: two results, one expression per word. */
static bool lower_threefry(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  const AluExp *idx[JX_MAX_NDIM], *v[4];
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  for (int i = 0; i < 4; i++) v[i] = lazy_load(in[i], idx);
  return set_exp(&out[0], alu_threefry_word(v[0], v[1], v[2], v[3], 0), av) &&
         set_exp(&out[1], alu_threefry_word(v[0], v[1], v[2], v[3], 1), av);
}

static bool lower_elementwise(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  const AluExp *idx[JX_MAX_NDIM], *v[4];
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  for (int i = 0; i < q->nin; i++) v[i] = lazy_load(in[i], idx);
  return set_exp(out, kexp_elementwise(q->prim, &q->params, v), av);
}

static bool lower_movement(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  Lazy *x = in[0];
  const PrimParams *pp = &q->params;
  ShapeTracker *st = NULL;
  *out = *x;
  out->aval = *av;
  switch (q->prim) {
  case PRIM_reshape: st = shape_reshape(x->st, pp->ndim, pp->shape); break;
  case PRIM_transpose: st = shape_permute(x->st, pp->axes); break;
  case PRIM_stop_gradient: st = shape_copy(x->st); break;
  case PRIM_broadcast_in_dim: {
    int64_t mid[JX_MAX_NDIM];
    for (int d = 0; d < pp->ndim; d++) mid[d] = 1;
    for (int i = 0; i < x->aval.ndim; i++) mid[pp->axes[i]] = x->aval.shape[i];
    ShapeTracker *r = shape_reshape(x->st, pp->ndim, mid);
    st = r ? shape_expand(r, pp->shape) : NULL;
    shape_free(r);
    break;
  }
  case PRIM_pad: st = shape_pad(x->st, pp->start, pp->stop); break;
  case PRIM_slice: {
    ShapeTracker *r = shape_shrink(x->st, pp->start, pp->stop);
    st = r ? shape_stride(r, pp->step) : NULL;
    shape_free(r);
    break;
  }
  case PRIM_rev: {
    int64_t step[JX_MAX_NDIM];
    for (int d = 0; d < x->aval.ndim; d++) step[d] = 1;
    for (int i = 0; i < pp->naxes; i++) step[pp->axes[i]] = -1;
    st = shape_stride(x->st, step);
    break;
  }
  default: break;
  }
  out->st = st;
  if (!st) return false;
  if (q->prim == PRIM_pad && kexp_pad_needs_fill(pp->value)) {
    /* another padding value: where(inside, x, value) as an expression */
    const AluExp *idx[JX_MAX_NDIM];
    shape_unflatten(idx_var(), av->ndim, av->shape, idx);
    const AluExp *e = kexp_pad_fill(lazy_load(out, idx), av->ndim, pp->start, x->aval.shape,
                                    pp->value, av->dtype, idx);
    shape_free(out->st);
    return set_exp(out, e, av);
  }
  return true;
}

static bool lower_reduce(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  Lazy *x = in[0];
  bool mask[JX_MAX_NDIM] = {false};
  for (int i = 0; i < q->params.naxes; i++) mask[q->params.axes[i]] = true;
  int perm[JX_MAX_NDIM], n = 0;
  int64_t R = 1, pshape[JX_MAX_NDIM];
  for (int d = 0; d < x->aval.ndim; d++)
    if (!mask[d]) perm[n++] = d;
  for (int d = 0; d < x->aval.ndim; d++)
    if (mask[d]) perm[n++] = d, R *= x->aval.shape[d];
  for (int d = 0; d < x->aval.ndim; d++) pshape[d] = x->aval.shape[perm[d]];
  if (R == 1) { /* reducing only size-1 axes is a reshape: a view, no kernel */
    *out = *x;
    out->aval = *av;
    out->st = shape_reshape(x->st, av->ndim, av->shape);
    return out->st != NULL;
  }
  /* two stages only when the reduced axes are the innermost ones (no permutation):
   * reductions over leading axes already read neighbouring elements per output */
  bool trailing = true;
  for (int d = 0; d < x->aval.ndim; d++) trailing &= perm[d] == d;
  int64_t size = shape_numel(av->ndim, av->shape), P = trailing ? kernel_reduce_lanes(size, R) : 0;
  AluOp op = prim_alu_op(q->prim);
  jx_dtype dt = av->dtype;
  AluValue id = alu_reduce_identity(op, dt);
  /* One stage: out[g] = reduce_r x[g * R + r]. Two stages: P contiguous segments per
   * output, part[g * P + p] = reduce_r x[(g * P + p) * (R / P) + r] over R / P (the same
   * kernel over size * P outputs: the threads split those), then out[g] = reduce_p
   * part[g * P + p]. */
  int64_t size1 = P ? size * P : size, R1 = P ? R / P : R;
  const AluExp *g = alu_special("gidx", size1), *r = alu_special("ridx", R1);
  const AluExp *flat = alu_binary(ALU_ADD, alu_binary(ALU_MUL, g, i64(R1)), r);
  const AluExp *ip[JX_MAX_NDIM], *idx[JX_MAX_NDIM];
  shape_unflatten(flat, x->aval.ndim, pshape, ip);
  for (int d = 0; d < x->aval.ndim; d++) idx[perm[d]] = ip[d];
  Kernel k = {.size = size1, .dtype = dt, .has_reduction = R1 > 0};
  k.reduction = (Reduction){.op = op, .dtype = dt, .identity = id, .size = R1};
  k.exp = R1 > 0 ? lazy_load(x, idx) : alu_const(dt, id);
  int s = emit(L, &k);
  if (s >= 0 && P) {
    const AluExp *flat2 = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_special("gidx", size), i64(P)),
                                     alu_special("ridx", P));
    Kernel k2 = {.size = size, .dtype = dt, .has_reduction = true};
    k2.reduction = (Reduction){.op = op, .dtype = dt, .identity = id, .size = P};
    k2.exp = alu_global(s, dt, flat2);
    s = emit(L, &k2);
  }
  if (s < 0) return false;
  *out = (Lazy){.slot = s, .aval = *av, .st = shape_contiguous(av->ndim, av->shape)};
  return out->st != NULL;
}

/* A GEMM operand: v permuted by perm and reshaped to (B, R, C). If v is a buffer that
 * already holds it transposed -- (B, C, R) contiguous, as gradients' x^T are -- that
 * buffer is used with *trans set; otherwise the canonical layout is materialized. */
static int gemm_operand(Lower *L, const Lazy *v, const int *perm, int64_t B, int64_t R, int64_t C,
                        int nlead, bool *trans) {
  *trans = false;
  if (v->slot >= 0) {
    /* the transposed order: batch dims, then the last C-dims, then the R-dims */
    int tperm[JX_MAX_NDIM], k = 0, nd = v->aval.ndim, nr = 0;
    int64_t rprod = 1;
    for (int d = nlead; d < nd && rprod < R; d++) rprod *= v->aval.shape[perm[d]], nr++;
    if (rprod == R) {
      for (int d = 0; d < nlead; d++) tperm[k++] = perm[d];
      for (int d = nlead + nr; d < nd; d++) tperm[k++] = perm[d];
      for (int d = nlead; d < nlead + nr; d++) tperm[k++] = perm[d];
      ShapeTracker *p = shape_permute(v->st, tperm);
      ShapeTracker *t = p ? shape_reshape(p, 3, (int64_t[]){B, C, R}) : NULL;
      bool direct = t && shape_is_contiguous(t);
      shape_free(p), shape_free(t);
      if (direct) {
        *trans = true;
        return v->slot;
      }
    }
  }
  Lazy t = *v;
  ShapeTracker *p = shape_permute(v->st, perm);
  t.st = p ? shape_reshape(p, 3, (int64_t[]){B, R, C}) : NULL;
  shape_free(p);
  t.aval.ndim = 3;
  t.aval.shape[0] = B, t.aval.shape[1] = R, t.aval.shape[2] = C;
  bool ok = t.st && realize(L, &t);
  shape_free(t.st);
  return ok ? t.slot : -1;
}

/* A large float product: a GEMM routine on canonical operand layouts. */
static bool lower_gemm(Lower *L, const JaxprEqn *q, Lazy *x, Lazy *y, Lazy *out, const Aval *av) {
  DotLayout D;
  prim_dot_layout(&q->params, &x->aval, &y->aval, &D);
  bool ta, tb;
  int nb = q->params.nbatch;
  int a0 = gemm_operand(L, x, D.xperm, D.B, D.M, D.K, nb, &ta);
  int a1 = a0 >= 0 ? gemm_operand(L, y, D.yperm, D.B, D.K, D.N, nb, &tb) : -1;
  int args[2] = {a0, a1};
  if (args[0] < 0 || args[1] < 0) return false;
  Step st = {.is_routine = true};
  st.routine = (Routine){.op = ROUTINE_GEMM, .nin = 2, .nout = 1, .dtype = av->dtype, .outer = D.B,
                         .n = D.M, .m = D.K, .inner = D.N, .trans_a = ta, .trans_b = tb};
  int s = push_step(L, &st, args, 2);
  if (s < 0) return false;
  *out = (Lazy){.slot = s, .aval = *av, .st = shape_contiguous(av->ndim, av->shape)};
  return out->st != NULL;
}

static bool lower_dot(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  Lazy *x = in[0], *y = in[1];
  const PrimParams *pp = &q->params;
  if (av->dtype == JX_FLOAT32 || av->dtype == JX_FLOAT64 || av->dtype == JX_FLOAT16 || av->dtype == JX_BFLOAT16 ||
      dtype_is_complex(av->dtype)) {
    DotLayout D;
    prim_dot_layout(pp, &x->aval, &y->aval, &D);
    if ((double)D.M * (double)D.N * (double)D.K >= ROUTINE_GEMM_MIN_WORK) return lower_gemm(L, q, x, y, out, av);
  }
  Lazy *ops[2] = {x, y};
  Kernel k = {0};
  kexp_dot(pp, &x->aval, &y->aval, av->dtype, av->ndim, av->shape, load_operand, ops, &k);
  int s = emit(L, &k);
  if (s < 0) return false;
  *out = (Lazy){.slot = s, .aval = *av, .st = shape_contiguous(av->ndim, av->shape)};
  return out->st != NULL;
}

static bool lower_routine(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  Step st = {.is_routine = true};
  Aval avals[ROUTINE_MAX_OPERANDS];
  for (int i = 0; i < q->nin && i < ROUTINE_MAX_OPERANDS; i++) avals[i] = in[i]->aval;
  if (kexp_routine(q->prim, &q->params, q->nin, avals, q->nout, &st.routine) != JX_OK) return false;
  int args[ROUTINE_MAX_OPERANDS];
  for (int i = 0; i < q->nin; i++) {
    if (!realize(L, in[i])) return false; /* routines read contiguous buffers */
    args[i] = in[i]->slot;
  }
  int s = push_step_n(L, &st, args, q->nin, q->nout);
  if (s < 0) return false;
  for (int o = 0; o < q->nout; o++) {
    const Aval *oav = &L->j->vars[q->out[o]];
    out[o] = (Lazy){.slot = s + o, .aval = *oav, .st = shape_contiguous(oav->ndim, oav->shape)};
    if (!out[o].st) return false;
  }
  return true;
}

static bool lower_concatenate(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  const AluExp *idx[JX_MAX_NDIM];
  int64_t lens[KERNEL_MAX_ARGS];
  if (q->nin > KERNEL_MAX_ARGS) {
    error_set(JX_ERR_UNSUPPORTED, "concatenate: more than %d operands", KERNEL_MAX_ARGS);
    return false;
  }
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  for (int i = 0; i < q->nin; i++) lens[i] = in[i]->aval.shape[q->params.axis];
  return set_exp(out, kexp_concatenate(q->nin, lens, q->params.axis, av->ndim, idx, load_operand,
                                       (void *)in), av);
}

static bool lower_gather(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  Lazy *x = in[0], *ind = in[1];
  const AluExp *idx[JX_MAX_NDIM];
  Lazy *ops[2] = {x, ind};
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  int axis = q->params.axis;
  return set_exp(out, kexp_gather(x->aval.ndim, x->aval.shape[axis], ind->aval.ndim, axis, idx,
                                  load_operand, ops), av);
}

static bool lower_iota(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av) {
  const AluExp *idx[JX_MAX_NDIM];
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  return set_exp(out, alu_cast(idx[q->params.axis], q->params.dtype), av);
}

/* The cost of recomputing e: its arithmetic (nodes other than constants, loads and
 * int64 index arithmetic), transcendental functions counting 8. */
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
static bool maybe_share(Lower *L, Lazy *v) {
  if (v->slot >= 0 || v->uses < 2) return true;
  int64_t ops = value_ops(v->src, 8);
  if ((alu_count(v->src) <= 6 && ops <= 6) || ops <= 1) return true;
  /* on a GPU two operations, a transcendental one included, cost less than a round
   * trip through memory: softmax's exp(x - max) is recomputed by its sum and its
   * division, which makes the max and the sum one two-phase kernel */
  if (L->cheap_recompute && value_ops(v->src, 1) <= 2 && alu_count(v->src) <= 12) return true;
  return realize(L, v);
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

/* The lowering rule of every primitive: one entry per primitive; a primitive without
 * one has its reason in lower_absent (tests/transform/test_rules.c walks both). */
typedef bool (*LowerRule)(Lower *L, const JaxprEqn *q, Lazy *const *in, Lazy *out, const Aval *av);
static const LowerRule lower_rules[PRIM_NUM] = {
    [PRIM_neg] = lower_elementwise,
    [PRIM_not] = lower_elementwise,
    [PRIM_abs] = lower_elementwise,
    [PRIM_sign] = lower_elementwise,
    [PRIM_sin] = lower_elementwise,
    [PRIM_cos] = lower_elementwise,
    [PRIM_tan] = lower_elementwise,
    [PRIM_asin] = lower_elementwise,
    [PRIM_acos] = lower_elementwise,
    [PRIM_atan] = lower_elementwise,
    [PRIM_sinh] = lower_elementwise,
    [PRIM_cosh] = lower_elementwise,
    [PRIM_tanh] = lower_elementwise,
    [PRIM_asinh] = lower_elementwise,
    [PRIM_acosh] = lower_elementwise,
    [PRIM_atanh] = lower_elementwise,
    [PRIM_exp] = lower_elementwise,
    [PRIM_exp2] = lower_elementwise,
    [PRIM_expm1] = lower_elementwise,
    [PRIM_log] = lower_elementwise,
    [PRIM_log2] = lower_elementwise,
    [PRIM_log1p] = lower_elementwise,
    [PRIM_sqrt] = lower_elementwise,
    [PRIM_rsqrt] = lower_elementwise,
    [PRIM_cbrt] = lower_elementwise,
    [PRIM_reciprocal] = lower_elementwise,
    [PRIM_floor] = lower_elementwise,
    [PRIM_ceil] = lower_elementwise,
    [PRIM_round] = lower_elementwise,
    [PRIM_trunc] = lower_elementwise,
    [PRIM_erf] = lower_elementwise,
    [PRIM_erfc] = lower_elementwise,
    [PRIM_is_nan] = lower_elementwise,
    [PRIM_is_inf] = lower_elementwise,
    [PRIM_add] = lower_elementwise,
    [PRIM_sub] = lower_elementwise,
    [PRIM_mul] = lower_elementwise,
    [PRIM_div] = lower_elementwise,
    [PRIM_rem] = lower_elementwise,
    [PRIM_pow] = lower_elementwise,
    [PRIM_max] = lower_elementwise,
    [PRIM_min] = lower_elementwise,
    [PRIM_atan2] = lower_elementwise,
    [PRIM_and] = lower_elementwise,
    [PRIM_or] = lower_elementwise,
    [PRIM_xor] = lower_elementwise,
    [PRIM_shift_left] = lower_elementwise,
    [PRIM_shift_right] = lower_elementwise,
    [PRIM_lt] = lower_elementwise,
    [PRIM_ne] = lower_elementwise,
    [PRIM_eq] = lower_elementwise,
    [PRIM_real] = lower_elementwise,
    [PRIM_imag] = lower_elementwise,
    [PRIM_conj] = lower_elementwise,
    [PRIM_complex] = lower_elementwise,
    [PRIM_select] = lower_elementwise,
    [PRIM_convert_element_type] = lower_elementwise,
    [PRIM_bitcast_convert_type] = lower_elementwise,
    [PRIM_reduce_sum] = lower_reduce,
    [PRIM_reduce_prod] = lower_reduce,
    [PRIM_reduce_max] = lower_reduce,
    [PRIM_reduce_min] = lower_reduce,
    [PRIM_reduce_and] = lower_reduce,
    [PRIM_reduce_or] = lower_reduce,
    [PRIM_reshape] = lower_movement,
    [PRIM_transpose] = lower_movement,
    [PRIM_broadcast_in_dim] = lower_movement,
    [PRIM_pad] = lower_movement,
    [PRIM_slice] = lower_movement,
    [PRIM_rev] = lower_movement,
    [PRIM_concatenate] = lower_concatenate,
    [PRIM_gather] = lower_gather,
    [PRIM_dot_general] = lower_dot,
    [PRIM_iota] = lower_iota,
    [PRIM_stop_gradient] = lower_movement,
    [PRIM_sort] = lower_routine,
    [PRIM_scatter_add] = lower_routine,
    [PRIM_cholesky] = lower_routine,
    [PRIM_triangular_solve] = lower_routine,
    [PRIM_lu] = lower_routine,
    [PRIM_qr] = lower_routine,
    [PRIM_eigh] = lower_routine,
    [PRIM_svd] = lower_routine,
    [PRIM_tridiagonal_solve] = lower_routine,
    [PRIM_fft] = lower_routine,
    [PRIM_threefry2x32] = lower_threefry,
};
static const char *const lower_absent[PRIM_NUM] = {
    [PRIM_jit] = "calls are inlined before lowering (jaxpr_inline_calls)",
    [PRIM_special_call] = "calls are inlined before lowering (jaxpr_inline_calls)",
    [PRIM_cond] = "not fused yet: jit evaluates a jaxpr holding a cond equation by equation",
    [PRIM_custom_jvp_call] = "inlined before lowering (jaxpr_inline_calls): the primal program",
    [PRIM_custom_vjp_call] = "inlined before lowering (jaxpr_inline_calls): the primal program",
    [PRIM_checkpoint] = "inlined before lowering (jaxpr_inline_calls)",
    [PRIM_debug_print] = "a host effect: jit evaluates a jaxpr holding debug_print equation by equation, in order",
    [PRIM_custom_lin] = "has no value (forward mode through custom_vjp): its eval rule reports the error",
    [PRIM_while] = "not fused yet: jit evaluates a jaxpr holding a while equation by equation",
    [PRIM_scan] = "not fused yet: jit evaluates a jaxpr holding a scan equation by equation",
};

bool jit_has_lower_rule(Prim p, const char **why) {
  if ((unsigned)p >= PRIM_NUM) return false;
  if (why) *why = lower_absent[p];
  return lower_rules[p] != NULL;
}

static bool lower_eqn(Lower *L, const JaxprEqn *q) {
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
    if (prim_kind(q->prim) == PRIM_KIND_DOT && in[i]->slot < 0 && in[i]->uses >= 2) ok = realize(L, in[i]);
    else ok = maybe_share(L, in[i]);
  }
  if (!ok) {
    if (in != small) free(in);
    return false;
  }
  Lazy *out = &outs[0];
  memset(outs, 0, sizeof outs);
  const Aval *av = &L->j->vars[q->out[0]];
  L->p->nkernels_fused_ops++;
  LowerRule rule = lower_rules[q->prim];
  if (rule) {
    ok = rule(L, q, in, out, av);
  } else {
    error_set(JX_ERR_UNSUPPORTED, "jit: no lowering for %s (%s)", prim_name(q->prim),
              lower_absent[q->prim] ? lower_absent[q->prim] : "no rule");
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
    if (e->src[0] == gidx) return with;
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

/* Two-phase reductions (ir/alu.h): a reduction step b that reads, at its own output
 * index, the result of an earlier reduction step a over the same (outputs, reduction
 * size) -- the sum of (x - mean)^2 after the mean, of exp(x - max) after the max --
 * computes a's reduction itself as its first phase, and writes a's output as a second
 * output. a's step goes away when no step between them reads its result. */
static bool fuse_two_phase(Program *p) {
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
      /* rows of at least ALU_REDUCE_LANES: the renderer's two-phase form is the flat one,
       * which for short strided windows (2x2 pooling) is slower than the loop nests the
       * two separate kernels get */
      if (a->is_routine || !ka->has_reduction || ka->has_pre || ka->nextra || ka->size != kb->size ||
          ka->reduction.size != kb->reduction.size || kb->reduction.size < ALU_REDUCE_LANES)
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

/* Row outputs (backends with row_outputs; ir/alu.h, Kernel.has_row_out): an
 * elementwise step b over size x R elements that reads a row reduction a's outputs only
 * at its own row (gidx / R) -- softmax's exp(x - max) / sum after the sums -- is
 * computed by a's kernel once each row is reduced, while the row is still in cache: one
 * kernel instead of two, the input read from memory once. a's outputs are still
 * written. Rows of at most 2^16 elements, and at least 128 of them unless the whole is
 * small (a row is reduced by one block at most). The fused step takes b's place, so no
 * step between them may read a's outputs. */
static bool fuse_row_output(Program *p) {
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
      int64_t N = ka->size, R = ka->reduction.size;
      if (between || a->is_routine || !ka->has_reduction || ka->has_row_out || ka->nextra > KERNEL_MAX_OUTS - 2 ||
          R < 2 || R > 65536 || N * R != kb->size || (N < 128 && N * R > 65536))
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
      /* b's expression in a's loop: its flat index is gidx * R + ridx; loads of a's
       * outputs at the row become their values (acc: the reduced value) */
      const AluExp *gidx = alu_special("gidx", N), *ridx = alu_special("ridx", R);
      const AluExp *e = alu_simplify(alu_substitute(kb->exp, "gidx", alu_binary(ALU_ADD, alu_binary(ALU_MUL, gidx, i64(R)), ridx)));
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
      k.row_exp = renumber(e, compact, &m3);
      alu_map_free(&m3);
      k.nargs = nargs;
      k.has_row_out = true;
      k.row_dtype = kb->dtype;
      ok = k.exp && k.row_exp && (!k.has_pre || k.pre_exp) && (!ka->reduction.epilogue || k.reduction.epilogue);
      for (int o = 0; o < k.nextra; o++) ok = ok && k.extra[o];
      if (!ok) {
        free(na), free(no);
        return false;
      }
      memcpy(no, a->outs, (size_t)a->nout * sizeof *no);
      no[a->nout] = b->outs[0];
      free(b->args), free(b->outs);
      b->kernel = k;
      b->args = na;
      b->outs = no;
      b->nout = a->nout + 1;
      remove_step(p, ja);
      jb--; /* b moved down one */
      break;
    }
  }
  return true;
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

Program *jit_lower(const Jaxpr *j, const Backend *be) {
  Program *p = calloc(1, sizeof *p);
  Lower L = {.j = j, .p = p, .vals = calloc((size_t)(j->nvars ? j->nvars : 1), sizeof(Lazy)),
             .cheap_recompute = be && be->cheap_recompute};
  bool ok = p && L.vals;
  /* uses per variable, so shared values are materialized once */
  for (int e = 0; ok && e < j->neqns; e++) /* consumers: distinct equations (y * y is one) */
    for (int i = 0; i < j->eqns[e].nin; i++) {
      bool seen = false;
      for (int k = 0; k < i; k++) seen |= j->eqns[e].in[k] == j->eqns[e].in[i];
      if (!seen) L.vals[j->eqns[e].in[i]].uses++;
    }
  for (int o = 0; ok && o < j->nout; o++) L.vals[j->outvars[o]].uses++;
  for (int i = 0; ok && i < j->nin; i++) {
    Lazy *v = &L.vals[j->invars[i]];
    int uses = v->uses;
    v->aval = j->vars[j->invars[i]];
    v->slot = new_slot(&L, SLOT_INPUT, i);
    v->st = shape_contiguous(v->aval.ndim, v->aval.shape); /* inputs are made contiguous */
    v->uses = uses;
    ok = v->slot >= 0 && v->st;
  }
  for (int c = 0; ok && c < j->nconst; c++) {
    Lazy *v = &L.vals[j->constvars[c]];
    int uses = v->uses;
    v->aval = j->vars[j->constvars[c]];
    const AluExp *value = const_scalar(j->consts[c]);
    v->slot = value ? -1 : new_slot(&L, SLOT_CONST, c);
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
    if (v->slot < 0) ok = realize(&L, v); /* outputs that are views of buffers stay views */
    if (ok) {
      p->outs[o] = (ProgramOutput){.slot = v->slot, .st = shape_copy(v->st), .aval = v->aval};
      ok = p->outs[o].st != NULL;
    }
  }
  /* the passes; the IR checker runs after each (a check costs microseconds per program,
   * next to the milliseconds of compiling it) */
  ok = ok && jit_program_check(p, "lower") == JX_OK;
  ok = ok && fuse_two_phase(p) && jit_program_check(p, "fuse_two_phase") == JX_OK;
  ok = ok && (!be || !be->row_outputs || (fuse_row_output(p) && jit_program_check(p, "fuse_row_output") == JX_OK));
  ok = ok && fuse_siblings(p) && jit_program_check(p, "fuse_siblings") == JX_OK;
  /* last uses (after fusion moved steps) */
  for (int s = 0; ok && s < p->nslots; s++) L.last_use[s] = -1;
  for (int k = 0; ok && k < p->nsteps; k++) {
    const Step *st = &p->steps[k];
    for (int a = 0; a < step_nargs(st); a++) L.last_use[st->args[a]] = k;
  }
  for (int o = 0; ok && o < j->nout; o++) L.last_use[p->outs[o].slot] = p->nsteps; /* live past the end */
  /* free temporaries at their last use */
  for (int s = 0; ok && s < p->nslots; s++) {
    int at = L.last_use[s];
    if (p->kinds[s] != SLOT_TEMP || at < 0 || at >= p->nsteps) continue;
    Step *st = &p->steps[at];
    int *f = realloc(st->frees, (size_t)(st->nfree + 1) * sizeof *f);
    if (!f) ok = false;
    else f[st->nfree++] = s, st->frees = f;
  }
  for (int v = 0; L.vals && v < j->nvars; v++) shape_free(L.vals[v].st);
  free(L.vals);
  free(L.last_use);
  if (!ok) {
    if (!error_pending()) error_set(JX_ERR_OOM, "jit: out of memory");
    jit_program_free(p);
    return NULL;
  }
  return p;
}

void jit_program_free(Program *p) {
  if (!p) return;
  for (int s = 0; s < p->nsteps; s++)
    free(p->steps[s].args), free(p->steps[s].outs), free(p->steps[s].frees), free(p->steps[s].name);
  for (int o = 0; p->outs && o < p->nout; o++) shape_free(p->outs[o].st);
  free(p->steps), free(p->kinds), free(p->index), free(p->outs);
  free(p);
}

int jit_program_nsteps(const Program *p) { return p ? p->nsteps : 0; }

int jit_program_nkernels(const Program *p) {
  int n = 0;
  for (int s = 0; p && s < p->nsteps; s++) n += !p->steps[s].is_routine;
  return n;
}

int jit_program_nroutines(const Program *p) { return p ? p->nsteps - jit_program_nkernels(p) : 0; }

jx_status jit_program_check(const Program *p, const char *pass) {
  for (int s = 0; s < p->nsteps; s++) {
    const Step *st = &p->steps[s];
    jx_status r = st->is_routine ? routine_check(&st->routine) : kernel_check(&st->kernel);
    if (r != JX_OK) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", jx_last_error());
      jx_clear_error();
      error_set(JX_ERR_INTERNAL, "jit: after pass %s, step %d of %d: %s", pass, s, p->nsteps, msg);
      return JX_ERR_INTERNAL;
    }
  }
  return JX_OK;
}
