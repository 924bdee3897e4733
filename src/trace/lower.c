/* lower.c -- the per-primitive lowering rules (lower.h), one table shared by eager
 * evaluation (one-equation programs, trace/eager.c) and jit (jit/lower.c, which walks a
 * jaxpr, decides what to materialize and runs the fusion passes). */
#include "trace/lower.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "trace/kexp.h"

static const AluExp *i64(int64_t v) { return alu_const_int(JX_INT64, v); }
static const AluExp *idx_var(void) { return alu_variable("idx", JX_INT64); }

int lower_new_slot(Lower *L, SlotKind kind, int index) {
  Program *p = L->p;
  int n = p->nslots + 1;
  SlotKind *k = realloc(p->kinds, (size_t)n * sizeof *k);
  if (k) p->kinds = k;
  int *ix = k ? realloc(p->index, (size_t)n * sizeof *ix) : NULL;
  if (!ix) {
    error_set(JX_ERR_OOM, "lowering: out of memory");
    return -1;
  }
  p->index = ix;
  p->kinds[p->nslots] = kind;
  p->index[p->nslots] = index;
  return p->nslots++;
}

/* The value of lazy v at per-dim indices idx (of v's shape), with slot loads as
 * GLOBAL_INDEX(slot). Reads in padding give 0. */
const AluExp *lower_load(const Lazy *v, const AluExp *const *idx) {
  const AluExp *index, *valid;
  kexp_view_index(v->st, idx, &index, &valid);
  const AluExp *x = v->slot >= 0 ? alu_global(v->slot, v->aval.dtype, index)
                                 : alu_substitute(v->src, "idx", index);
  return kexp_masked(valid, x);
}

/* KexpLoad over an equation's operands (ctx: Lazy *const *) */
static const AluExp *load_operand(void *ctx, int i, const AluExp *const *idx) {
  Lazy *const *in = ctx;
  return lower_load(in[i], idx);
}

static const AluExp *lazy_load_flat(const Lazy *v, const AluExp *flat) {
  const AluExp *idx[JX_MAX_NDIM];
  shape_unflatten(flat, v->aval.ndim, v->aval.shape, idx);
  return lower_load(v, idx);
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

int lower_push_step(Lower *L, const Step *st, const int *args, int nargs, int nout) {
  Program *p = L->p;
  int first = -1;
  for (int o = 0; o < nout; o++) {
    int s = lower_new_slot(L, SLOT_TEMP, -1);
    if (s < 0) return -1;
    if (o == 0) first = s;
  }
  Step *steps = realloc(p->steps, (size_t)(p->nsteps + 1) * sizeof *steps);
  int *sargs = steps ? malloc((size_t)(nargs ? nargs : 1) * sizeof *sargs) : NULL;
  int *outs = sargs ? malloc((size_t)nout * sizeof *outs) : NULL;
  if (steps) p->steps = steps;
  if (!outs) {
    free(sargs);
    error_set(JX_ERR_OOM, "lowering: out of memory");
    return -1;
  }
  memcpy(sargs, args, (size_t)nargs * sizeof *sargs);
  for (int o = 0; o < nout; o++) outs[o] = first + o;
  steps[p->nsteps] = *st;
  steps[p->nsteps].args = sargs;
  steps[p->nsteps].nout = nout;
  steps[p->nsteps].outs = outs;
  p->nsteps++;
  return first;
}

static int push_step(Lower *L, const Step *st, const int *args, int nargs) {
  return lower_push_step(L, st, args, nargs, 1);
}

/* Counts the distinct slots e loads into distinct[0 .. *nd) (at most cap). */
static void count_slots(const AluExp *e, int *distinct, int *nd, int cap) {
  int64_t n = 0;
  const AluExp **nodes = e ? alu_toposort(e, &n) : NULL;
  for (int64_t i = 0; nodes && i < n; i++)
    if (nodes[i]->op == ALU_GLOBAL_INDEX) {
      int d = 0;
      while (d < *nd && distinct[d] != nodes[i]->arg) d++;
      if (d == *nd && *nd < cap) distinct[(*nd)++] = (int)nodes[i]->arg;
    }
  free(nodes);
}

int lower_emit(Lower *L, Kernel *k) {
  int args[KERNEL_MAX_ARGS], nargs = 0;
  /* remap can only see KERNEL_MAX_ARGS distinct slots; count first */
  int distinct[4 * KERNEL_MAX_ARGS], nd = 0;
  count_slots(k->exp, distinct, &nd, 4 * KERNEL_MAX_ARGS);
  for (int o = 0; o < k->nextra; o++) count_slots(k->extra[o], distinct, &nd, 4 * KERNEL_MAX_ARGS);
  if (nd > KERNEL_MAX_ARGS) {
    error_set(JX_ERR_UNSUPPORTED, "jit: a fused kernel reads %d buffers (max %d)", nd, KERNEL_MAX_ARGS);
    return -1;
  }
  AluMap memo;
  alu_map_init(&memo);
  k->exp = alu_simplify(remap(k->exp, &memo, args, &nargs, k->arg_dtypes));
  for (int o = 0; o < k->nextra; o++)
    k->extra[o] = alu_simplify(remap(k->extra[o], &memo, args, &nargs, k->arg_dtypes));
  alu_map_free(&memo);
  if (k->has_reduction && k->reduction.epilogue)
    k->reduction.epilogue = alu_simplify(k->reduction.epilogue);
  k->nargs = nargs;
  return lower_push_step(L, &(Step){.kernel = *k}, args, nargs, 1 + k->nextra);
}

bool lower_realize(Lower *L, Lazy *v) {
  if (v->slot >= 0 && shape_is_contiguous(v->st)) return true;
  int64_t n = shape_numel(v->aval.ndim, v->aval.shape);
  Kernel k = {.size = n, .dtype = v->aval.dtype};
  k.exp = lazy_load_flat(v, alu_special("gidx", n));
  int s = lower_emit(L, &k);
  if (s < 0) return false;
  shape_free(v->st);
  v->slot = s;
  v->src = NULL;
  v->st = shape_contiguous(v->aval.ndim, v->aval.shape);
  return v->st != NULL;
}

bool lower_realize_group(Lower *L, int n, Lazy *const *vs) {
  if (n == 1) return lower_realize(L, vs[0]);
  int64_t size = shape_numel(vs[0]->aval.ndim, vs[0]->aval.shape);
  const AluExp *gidx = alu_special("gidx", size);
  Kernel k = {.size = size, .dtype = vs[0]->aval.dtype, .nextra = n - 1};
  k.exp = lazy_load_flat(vs[0], gidx);
  for (int o = 1; o < n; o++) {
    k.extra[o - 1] = lazy_load_flat(vs[o], gidx);
    k.extra_dtypes[o - 1] = vs[o]->aval.dtype;
    if (!k.extra[o - 1]) k.exp = NULL;
  }
  if (!k.exp) return false;
  int s = lower_emit(L, &k);
  if (s < 0) return false;
  for (int o = 0; o < n; o++) {
    shape_free(vs[o]->st);
    vs[o]->slot = s + o;
    vs[o]->src = NULL;
    vs[o]->st = shape_contiguous(vs[o]->aval.ndim, vs[o]->aval.shape);
    if (!vs[o]->st) return false;
  }
  return true;
}

/* ------------------------------------------------------------ per primitive */

/* Both words of threefry2x32: two results, one expression per word. */
static bool lower_threefry(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                           int nout, Lazy *out, const Aval *av) {
  const AluExp *idx[JX_MAX_NDIM], *v[4];
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  for (int i = 0; i < 4; i++) v[i] = lower_load(in[i], idx);
  return set_exp(&out[0], alu_threefry_word(v[0], v[1], v[2], v[3], 0), av) &&
         set_exp(&out[1], alu_threefry_word(v[0], v[1], v[2], v[3], 1), av);
}

static bool lower_elementwise(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                              int nout, Lazy *out, const Aval *av) {
  const AluExp *idx[JX_MAX_NDIM], *v[4];
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  for (int i = 0; i < nin; i++) v[i] = lower_load(in[i], idx);
  return set_exp(out, kexp_elementwise(prim, pp, v), av);
}

static bool lower_movement(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                           int nout, Lazy *out, const Aval *av) {
  Lazy *x = in[0];
  ShapeTracker *st = NULL;
  *out = *x;
  out->aval = *av;
  switch (prim) {
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
  if (prim == PRIM_pad && kexp_pad_needs_fill(pp->value)) {
    /* another padding value: where(inside, x, value) as an expression */
    const AluExp *idx[JX_MAX_NDIM];
    shape_unflatten(idx_var(), av->ndim, av->shape, idx);
    const AluExp *e = kexp_pad_fill(lower_load(out, idx), av->ndim, pp->start, x->aval.shape,
                                    pp->value, av->dtype, idx);
    shape_free(out->st);
    return set_exp(out, e, av);
  }
  return true;
}

static bool lower_reduce(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                         int nout, Lazy *out, const Aval *av) {
  Lazy *x = in[0];
  bool mask[JX_MAX_NDIM] = {false};
  for (int i = 0; i < pp->naxes; i++) mask[pp->axes[i]] = true;
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
  AluOp op = prim_alu_op(prim);
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
  k.exp = R1 > 0 ? lower_load(x, idx) : alu_const(dt, id);
  int s = lower_emit(L, &k);
  if (s >= 0 && P) {
    const AluExp *flat2 = alu_binary(ALU_ADD, alu_binary(ALU_MUL, alu_special("gidx", size), i64(P)),
                                     alu_special("ridx", P));
    Kernel k2 = {.size = size, .dtype = dt, .has_reduction = true};
    k2.reduction = (Reduction){.op = op, .dtype = dt, .identity = id, .size = P};
    k2.exp = alu_global(s, dt, flat2);
    s = lower_emit(L, &k2);
  }
  if (s < 0) return false;
  *out = (Lazy){.slot = s, .aval = *av, .st = shape_contiguous(av->ndim, av->shape)};
  return out->st != NULL;
}

/* v viewed permuted by perm and reshaped to (B, R, C): *t, a copy of v with that view
 * (owned by the caller; NULL view when it cannot be formed). */
static void view3(const Lazy *v, const int *perm, int64_t B, int64_t R, int64_t C, Lazy *t) {
  *t = *v;
  ShapeTracker *p = shape_permute(v->st, perm);
  t->st = p ? shape_reshape(p, 3, (int64_t[]){B, R, C}) : NULL;
  shape_free(p);
  t->aval.ndim = 3;
  t->aval.shape[0] = B, t->aval.shape[1] = R, t->aval.shape[2] = C;
}

Lower lower_settings(Program *p, const Backend *be) {
  return (Lower){.p = p, .cheap_recompute = be && be->cheap_recompute,
                 .recompute_ops = config_recompute_ops(be ? be->recompute_ops : 0),
                 .dot_unroll_max_k = config_dot_unroll_max_k(be ? be->dot_unroll_max_k : 0),
                 .dot_rows_max_n = config_dot_rows_max_n(be ? be->dot_rows_max_n : 0),
                 .dot_cols = config_dot_cols(be ? be->dot_cols : 0) > 0,
                 .gemm_k_major = config_gemm_k_major(be ? be->gemm_k_major : 0) > 0};
}

/* A GEMM operand: v permuted by perm and reshaped to (B, R, C). If v is a buffer that
 * already holds it transposed -- (B, C, R) contiguous, as gradients' x^T are -- that
 * buffer is used with *trans set, unless it is a program input and `canonical` asks for
 * (B, R, C) stored (Lower.gemm_k_major); otherwise the canonical layout is
 * materialized. */
static int gemm_operand(Lower *L, Lazy *v, const int *perm, int64_t B, int64_t R, int64_t C,
                        int nlead, bool canonical, bool *trans) {
  *trans = false;
  /* a computed operand is stored in its own layout (its kernel writes and reads in
   * order), the product then reading it transposed where it needs (a product's rows
   * kernel left the MLP's relu(h) lazy: stored for dW2 = h^T @ g as h^T, its kernel
   * wrote across rows) */
  if (v->slot < 0 && !lower_realize(L, v)) return -1;
  if (v->slot >= 0 && !(canonical && L->p->kinds[v->slot] == SLOT_INPUT)) {
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
  Lazy t;
  view3(v, perm, B, R, C, &t);
  bool ok = t.st && lower_realize(L, &t);
  shape_free(t.st);
  return ok ? t.slot : -1;
}

/* A large float product: a GEMM routine on canonical operand layouts. */
static bool lower_gemm(Lower *L, const PrimParams *pp, Lazy *x, Lazy *y, Lazy *out, const Aval *av) {
  DotLayout D;
  prim_dot_layout(pp, &x->aval, &y->aval, &D);
  bool ta, tb;
  int nb = pp->nbatch;
  /* the left operand K-major (Lower.gemm_k_major): float32 products of 2^28+
   * multiply-adds, where cuBLAS's TF32 kernels run */
  bool k_major = L->gemm_k_major && av->dtype == JX_FLOAT32 && (double)D.B * D.M * D.N * D.K >= (double)(1 << 28);
  int a0 = gemm_operand(L, x, D.xperm, D.B, D.M, D.K, nb, k_major, &ta);
  int a1 = a0 >= 0 ? gemm_operand(L, y, D.yperm, D.B, D.K, D.N, nb, false, &tb) : -1;
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

/* A float product contracting few elements (K <= the backend's dot_unroll_max_k) as one
 * elementwise expression over the canonical views x' (B, M, K) and y' (B, K, N):
 * out[b, m, n] = x'[b, m, 0] * y'[b, 0, n] + ... in ascending k from +0 (the order of
 * the reduction kernel kexp_dot makes; float16/bfloat16 accumulate in float32). It
 * fuses into its consumers like any elementwise value. y' is materialized contiguous
 * when it is not (a transposed weight: W^T of a (512, 10) W, 20 KB): consecutive
 * outputs then read consecutive elements of it -- read through the transposed view,
 * each warp's load of y touched ten cache lines and the fused g @ W2^T + relu backward
 * of an MLP step took 35 us on an H100 (its cuBLAS product alone 9 us). Computed
 * operands are stored first: every element of them is read by many outputs. */
static bool lower_dot_unrolled(Lower *L, const PrimParams *pp, Lazy *x, Lazy *y, Lazy *out, const Aval *av) {
  DotLayout D;
  prim_dot_layout(pp, &x->aval, &y->aval, &D);
  if ((x->slot < 0 && !lower_realize(L, x)) || (y->slot < 0 && !lower_realize(L, y))) return false;
  Lazy xv, yv;
  view3(x, D.xperm, D.B, D.M, D.K, &xv);
  view3(y, D.yperm, D.B, D.K, D.N, &yv);
  bool ok = xv.st && yv.st && (shape_is_contiguous(yv.st) || lower_realize(L, &yv));
  const AluExp *sum = NULL;
  if (ok) {
    const AluExp *o[3];
    shape_unflatten(idx_var(), 3, (int64_t[]){D.B, D.M, D.N}, o);
    jx_dtype dt = av->dtype, acc = dt == JX_FLOAT16 || dt == JX_BFLOAT16 ? JX_FLOAT32 : dt;
    sum = alu_const(acc, alu_reduce_identity(ALU_ADD, acc));
    for (int64_t k = 0; k < D.K; k++) {
      const AluExp *xi[3] = {o[0], o[1], i64(k)}, *yi[3] = {o[0], i64(k), o[2]};
      sum = alu_binary(ALU_ADD, sum, alu_binary(ALU_MUL, alu_cast(lower_load(&xv, xi), acc), alu_cast(lower_load(&yv, yi), acc)));
    }
    if (acc != dt) sum = alu_cast(sum, dt);
  }
  shape_free(xv.st), shape_free(yv.st);
  return ok && set_exp(out, sum, av);
}

/* JAXC_DOT_ROWS_INLINE=0: a product's rows kernel reads its left operand stored (measuring) */
static bool rows_inline_on(void) {
  static int v = -1;
  return config_env_on(&v, "JAXC_DOT_ROWS_INLINE");
}

/* Whether x is a lazy value cheap enough to recompute in a product's rows kernel (a
 * biased relu: a few adds, compares, selects and max of loads; no division or
 * transcendental function), so the kernel reads x's sources instead of x stored: it then
 * waits only for them (the MLP's h @ W2 for x @ W1, not for the relu kernel, which still
 * stores h for dW2 on another graph branch). */
static bool rows_operand_inline(const Lazy *x) {
  if (x->slot >= 0 || !x->src) return false;
  int64_t n, ops = 0;
  const AluExp **order = alu_toposort(x->src, &n);
  bool ok = order != NULL;
  for (int64_t i = 0; ok && i < n; i++) {
    const AluExp *e = order[i];
    if (e->op == ALU_CONST || e->op == ALU_SPECIAL || e->op == ALU_VARIABLE || e->op == ALU_GLOBAL_INDEX ||
        e->dtype == JX_INT64)
      continue;
    switch (e->op) {
    case ALU_ADD: case ALU_SUB: case ALU_MUL: case ALU_MIN: case ALU_MAX: case ALU_CMPLT: case ALU_CMPNE:
    case ALU_CMPEQ: case ALU_NEG: case ALU_WHERE: case ALU_CAST: case ALU_NOT: case ALU_AND: case ALU_OR:
      ops++;
      break;
    default:
      ok = false;
    }
  }
  free((void *)order);
  return ok && ops <= 8;
}

bool lower_dot_rows_inlines(const Lower *L, const PrimParams *pp, const Lazy *x, const Lazy *y, const Aval *av) {
  if (!(av->dtype == JX_FLOAT32 || av->dtype == JX_FLOAT64 || av->dtype == JX_FLOAT16 || av->dtype == JX_BFLOAT16))
    return false;
  DotLayout D;
  prim_dot_layout(pp, &x->aval, &y->aval, &D);
  return D.K > L->dot_unroll_max_k && D.B * D.M * D.N > 0 && D.N <= L->dot_rows_max_n && rows_inline_on() &&
         rows_operand_inline(x);
}

/* A rows or columns product's layout and canonical views x' (B, M, K) and y' (B, K, N)
 * (owned by the caller), a lazy x left lazy where the kernel recomputes it
 * (rows_operand_inline), else stored; *fallback cleared. False on error. */
static bool dot_views(Lower *L, const PrimParams *pp, Lazy *x, Lazy *y, DotLayout *D, Lazy *xv, Lazy *yv,
                      bool *fallback) {
  prim_dot_layout(pp, &x->aval, &y->aval, D);
  *fallback = false;
  if (x->slot < 0 && !(rows_inline_on() && rows_operand_inline(x)) && !lower_realize(L, x)) return false;
  view3(x, D->xperm, D->B, D->M, D->K, xv);
  view3(y, D->yperm, D->B, D->K, D->N, yv);
  return true;
}

/* The reduction kernel over K of a product's views xv (B, M, K) and yv -- (B, N, K) where
 * y_nk, else (B, K, N): out[b, m, n] = sum_k xv[b, m, k] * yv[b, n, k] (or yv[b, k, n]),
 * float16/bfloat16 accumulated in float32 (kexp_dot's rule) -- emitted where ok, into
 * *out. The views are freed. */
static bool dot_reduction(Lower *L, const DotLayout *D, bool ok, Lazy *xv, Lazy *yv, bool y_nk, Lazy *out,
                          const Aval *av) {
  int s = -1;
  if (ok) {
    const AluExp *o[3], *gidx = alu_special("gidx", D->B * D->M * D->N), *r = alu_special("ridx", D->K);
    shape_unflatten(gidx, 3, (int64_t[]){D->B, D->M, D->N}, o);
    jx_dtype dt = av->dtype, acc = dt == JX_FLOAT16 || dt == JX_BFLOAT16 ? JX_FLOAT32 : dt;
    const AluExp *xi[3] = {o[0], o[1], r}, *yi[3] = {o[0], y_nk ? o[2] : r, y_nk ? r : o[2]};
    Kernel k = {.size = D->B * D->M * D->N, .dtype = dt, .has_reduction = true};
    k.reduction = (Reduction){.op = ALU_ADD, .dtype = acc, .size = D->K, .identity = alu_reduce_identity(ALU_ADD, acc)};
    k.reduction.epilogue = acc != dt ? alu_cast(alu_variable("acc", acc), dt) : NULL;
    k.exp = alu_binary(ALU_MUL, alu_cast(lower_load(xv, xi), acc), alu_cast(lower_load(yv, yi), acc));
    s = lower_emit(L, &k);
  }
  shape_free(xv->st), shape_free(yv->st);
  if (s < 0) return false;
  *out = (Lazy){.slot = s, .aval = *av, .st = shape_contiguous(av->ndim, av->shape)};
  return out->st != NULL;
}

/* A float product with few output columns (N <= the backend's dot_rows_max_n) whose left
 * operand is rows of K contiguous elements, as a reduction kernel of one output a row:
 * out[b, m, n] = sum_k x'[b, m, k] * y^T[b, n, k], y^T (B, N, K) stored contiguous first
 * (a weight's 20 KB), so a row reads two contiguous streams; the outputs of one x row are
 * neighbours, so its rows are read from cache after the first. Float16/bfloat16
 * accumulate in float32 (kexp_dot's rule). False with *fallback set where x' is not
 * contiguous rows (the GEMM routine takes transposed operands as flags). */
static bool lower_dot_rows(Lower *L, const PrimParams *pp, Lazy *x, Lazy *y, Lazy *out, const Aval *av,
                           bool *fallback) {
  DotLayout D;
  Lazy xv, yv;
  if (!dot_views(L, pp, x, y, &D, &xv, &yv, fallback)) return false;
  ShapeTracker *t = yv.st ? shape_permute(yv.st, (int[]){0, 2, 1}) : NULL;
  shape_free(yv.st);
  yv.st = t;
  yv.aval.shape[1] = D.N, yv.aval.shape[2] = D.K;
  bool ok = false;
  if (!xv.st || !shape_is_contiguous(xv.st) || !yv.st) *fallback = true;
  else ok = lower_realize(L, &yv);
  return dot_reduction(L, &D, ok, &xv, &yv, true, out, av);
}

/* A float product with few output columns (N <= the backend's dot_rows_max_n, with
 * Backend.dot_cols) whose left operand x' (B, M, K) is x stored transposed -- x (B, K, M)
 * rows of M, as a weight gradient's h^T -- as one reduction kernel over K:
 * out[b, m, n] = sum_k x[b, k, m] * y'[b, k, n], y' (B, K, N) stored contiguous first
 * where it is not. The N outputs of one m read x[b, k, m] in common, and neighbouring m
 * neighbouring elements: the cuda framing computes them together (grouped columns: a
 * lane an m, its N sums in registers, the rows over warps and blocks). A cheap lazy x
 * (the MLP's relu(x @ W1 + b1), rows_operand_inline) is recomputed in the kernel, so h is
 * not stored for dW2 = h^T @ g: on an H100 that product was a split-K cuBLAS GEMM of 12.7
 * us (two kernels) after a 6.6 us kernel storing h. Float16/bfloat16 accumulate in
 * float32. False with *fallback set where x' is not so. */
static bool lower_dot_cols(Lower *L, const PrimParams *pp, Lazy *x, Lazy *y, Lazy *out, const Aval *av,
                           bool *fallback) {
  DotLayout D;
  Lazy xv, yv;
  if (!dot_views(L, pp, x, y, &D, &xv, &yv, fallback)) return false;
  ShapeTracker *xt = xv.st ? shape_permute(xv.st, (int[]){0, 2, 1}) : NULL;
  bool ok = false;
  if (!xt || !shape_is_contiguous(xt) || !yv.st || D.M < 32) *fallback = true;
  else ok = shape_is_contiguous(yv.st) || lower_realize(L, &yv);
  shape_free(xt);
  return dot_reduction(L, &D, ok, &xv, &yv, false, out, av);
}

static bool lower_dot(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                      int nout, Lazy *out, const Aval *av) {
  Lazy *x = in[0], *y = in[1];
  if (av->dtype == JX_FLOAT32 || av->dtype == JX_FLOAT64 || av->dtype == JX_FLOAT16 || av->dtype == JX_BFLOAT16 ||
      dtype_is_complex(av->dtype)) {
    DotLayout D;
    prim_dot_layout(pp, &x->aval, &y->aval, &D);
    if (L->dot_gemm && (double)D.B * (double)D.M * (double)D.N * (double)D.K >= LOWER_EAGER_GEMM_MIN_WORK &&
        (av->dtype == JX_FLOAT32 || av->dtype == JX_FLOAT64))
      return lower_gemm(L, pp, x, y, out, av);
    if (D.K > 0 && D.K <= L->dot_unroll_max_k && !dtype_is_complex(av->dtype)) return lower_dot_unrolled(L, pp, x, y, out, av);
    if (D.K > 0 && D.B * D.M * D.N > 0 && D.N <= L->dot_rows_max_n && !dtype_is_complex(av->dtype)) {
      bool fallback;
      if (lower_dot_rows(L, pp, x, y, out, av, &fallback)) return true;
      if (!fallback) return false;
      if (L->dot_cols && lower_dot_cols(L, pp, x, y, out, av, &fallback)) return true;
      if (!fallback) return false;
    }
    if ((double)D.M * (double)D.N * (double)D.K >= ROUTINE_GEMM_MIN_WORK) return lower_gemm(L, pp, x, y, out, av);
  }
  Lazy *ops[2] = {x, y};
  Kernel k = {0};
  kexp_dot(pp, &x->aval, &y->aval, av->dtype, av->ndim, av->shape, load_operand, ops, &k);
  int s = lower_emit(L, &k);
  if (s < 0) return false;
  *out = (Lazy){.slot = s, .aval = *av, .st = shape_contiguous(av->ndim, av->shape)};
  return out->st != NULL;
}

static bool lower_routine(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                          int nout, Lazy *out, const Aval *av) {
  Step st = {.is_routine = true};
  Aval avals[ROUTINE_MAX_OPERANDS] = {{0}};
  for (int i = 0; i < nin && i < ROUTINE_MAX_OPERANDS; i++) avals[i] = in[i]->aval;
  if (kexp_routine(prim, pp, nin, avals, nout, &st.routine) != JX_OK) return false;
  int args[ROUTINE_MAX_OPERANDS];
  for (int i = 0; i < nin; i++) {
    if (!lower_realize(L, in[i])) return false; /* routines read contiguous buffers */
    args[i] = in[i]->slot;
  }
  int s = lower_push_step(L, &st, args, nin, nout);
  if (s < 0) return false;
  for (int o = 0; o < nout; o++) {
    const Aval *oav = &av[o];
    out[o] = (Lazy){.slot = s + o, .aval = *oav, .st = shape_contiguous(oav->ndim, oav->shape)};
    if (!out[o].st) return false;
  }
  return true;
}

static bool lower_concatenate(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                              int nout, Lazy *out, const Aval *av) {
  const AluExp *idx[JX_MAX_NDIM];
  int64_t lens[KERNEL_MAX_ARGS];
  if (nin > KERNEL_MAX_ARGS) {
    error_set(JX_ERR_UNSUPPORTED, "concatenate: more than %d operands", KERNEL_MAX_ARGS);
    return false;
  }
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  for (int i = 0; i < nin; i++) lens[i] = in[i]->aval.shape[pp->axis];
  return set_exp(out, kexp_concatenate(nin, lens, pp->axis, av->ndim, idx, load_operand,
                                       (void *)in), av);
}

static bool lower_gather(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                         int nout, Lazy *out, const Aval *av) {
  Lazy *x = in[0], *ind = in[1];
  const AluExp *idx[JX_MAX_NDIM];
  Lazy *ops[2] = {x, ind};
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  int axis = pp->axis;
  return set_exp(out, kexp_gather(x->aval.ndim, x->aval.shape[axis], ind->aval.ndim, axis, idx,
                                  load_operand, ops), av);
}

static bool lower_iota(Lower *L, Prim prim, const PrimParams *pp, int nin, Lazy *const *in,
                       int nout, Lazy *out, const Aval *av) {
  const AluExp *idx[JX_MAX_NDIM];
  shape_unflatten(idx_var(), av->ndim, av->shape, idx);
  return set_exp(out, alu_cast(idx[pp->axis], pp->dtype), av);
}

/* The cost of recomputing e: its arithmetic (nodes other than constants, loads and
 * int64 index arithmetic), transcendental functions counting 8. */
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
    [PRIM_fma] = lower_elementwise,
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
    [PRIM_eig] = lower_routine,
    [PRIM_tridiagonal_solve] = lower_routine,
    [PRIM_fft] = lower_routine,
    [PRIM_threefry2x32] = lower_threefry,
};
static const char *const lower_absent[PRIM_NUM] = {
    [PRIM_jit] = "calls are inlined before lowering (jaxpr_inline_calls)",
    [PRIM_special_call] = "calls are inlined before lowering (jaxpr_inline_calls)",
    [PRIM_cond] = "not fused yet: jit runs a jaxpr holding a cond equation in pieces (jit/segment.c)",
    [PRIM_custom_jvp_call] = "inlined before lowering (jaxpr_inline_calls): the primal program",
    [PRIM_custom_vjp_call] = "inlined before lowering (jaxpr_inline_calls): the primal program",
    [PRIM_checkpoint] = "inlined before lowering (jaxpr_inline_calls)",
    [PRIM_debug_print] = "a host effect: jit runs a jaxpr holding debug_print in pieces (jit/segment.c), in order",
    [PRIM_custom_lin] = "has no value (forward mode through custom_vjp): its eval rule reports the error",
    [PRIM_while] = "not fused yet: jit runs a jaxpr holding a while equation in pieces (jit/segment.c)",
    [PRIM_scan] = "not fused yet: jit runs a jaxpr holding a scan equation in pieces (jit/segment.c)",
    [PRIM_psum] = "a collective between device threads: jit runs a jaxpr holding it in pieces (jit/segment.c)",
    [PRIM_pmax] = "a collective between device threads: jit runs a jaxpr holding it in pieces (jit/segment.c)",
    [PRIM_pmin] = "a collective between device threads: jit runs a jaxpr holding it in pieces (jit/segment.c)",
    [PRIM_all_gather] = "a collective between device threads: jit runs a jaxpr holding it in pieces (jit/segment.c)",
    [PRIM_psum_scatter] = "a collective between device threads: jit runs a jaxpr holding it in pieces (jit/segment.c)",
    [PRIM_ppermute] = "a collective between device threads: jit runs a jaxpr holding it in pieces (jit/segment.c)",
    [PRIM_all_to_all] = "a collective between device threads: jit runs a jaxpr holding it in pieces (jit/segment.c)",
    [PRIM_axis_index] = "a collective between device threads: jit runs a jaxpr holding it in pieces (jit/segment.c)",
    [PRIM_shard_map] = "runs its body on a thread per device: jit runs a jaxpr holding it in pieces (jit/segment.c)",
};

LowerRule lower_rule(Prim p) { return (unsigned)p < PRIM_NUM ? lower_rules[p] : NULL; }

bool lower_has_rule(Prim p, const char **why) {
  if ((unsigned)p >= PRIM_NUM) return false;
  if (why) *why = lower_absent[p];
  return lower_rules[p] != NULL;
}

void lower_program_free(Program *p) {
  if (!p) return;
  for (int s = 0; s < p->nsteps; s++) {
    free(p->steps[s].args), free(p->steps[s].outs), free(p->steps[s].frees), free(p->steps[s].name);
    if (!p->steps[s].is_routine) free(p->steps[s].kernel.post);
  }
  for (int o = 0; p->outs && o < p->nout; o++) shape_free(p->outs[o].st);
  free(p->steps), free(p->kinds), free(p->index), free(p->outs);
  free(p);
}

jx_status lower_program_check(const Program *p, const char *pass) {
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
