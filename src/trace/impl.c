/* impl.c -- eval rules: how each primitive runs on concrete arrays. Movement
 * primitives return views (a new shape tracker over the same buffer); everything else
 * builds one Kernel -- an AluExp over the inputs' views -- and runs it on the backend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "trace/kexp.h"
#include "trace/trace.h"

/* ----------------------------------------------------------- kernel help */

static const AluExp *idx_const(int64_t v) { return alu_const_int(JX_INT64, v); }

/* Value of input `arg` (array a) at the element whose per-dim indices are idx. Reads in
 * padding give 0; the load index is forced in bounds there so no backend reads out of
 * its buffer. */
static const AluExp *load_dims(const jx_array *a, int arg, const AluExp *const *idx) {
  const AluExp *index, *valid;
  kexp_view_index(a->st, idx, &index, &valid);
  return kexp_masked(valid, alu_global(arg, a->dtype, index));
}

/* KexpLoad over kernel inputs: operand i is in[i], kernel arg i */
static const AluExp *load_operand(void *ctx, int i, const AluExp *const *idx) {
  jx_array *const *in = ctx;
  return load_dims(in[i], i, idx);
}

static const AluExp *load_flat(const jx_array *a, int arg, const AluExp *flat) {
  const AluExp *idx[JX_MAX_NDIM];
  shape_unflatten(flat, a->ndim, a->shape, idx);
  return load_dims(a, arg, idx);
}

/* Runs kernel k (inputs in[0..nargs)) into 1 + k->nextra new contiguous arrays of
 * shape in out[]. */
static jx_status run_kernel_outs(Kernel *k, jx_array *const *in, int ndim, const int64_t *shape,
                                 bool weak, jx_array **out) {
  int nout = 1 + k->nextra;
  for (int o = 0; o < nout; o++) out[o] = NULL;
  if (!k->exp) return jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  uint64_t mark = error_mark(); /* an older, unread error must not fail this kernel */
  for (int i = 0; i < k->nargs; i++) k->arg_dtypes[i] = in[i]->dtype;
  k->exp = alu_simplify(k->exp);
  for (int o = 0; o < k->nextra; o++) k->extra[o] = alu_simplify(k->extra[o]);
  if (k->has_reduction && k->reduction.epilogue)
    k->reduction.epilogue = alu_simplify(k->reduction.epilogue);
  if (!k->exp || error_since(mark)) return jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  if (config_debug_level() >= 3) {
    char *text = kernel_print(k);
    fprintf(stderr, "[jaxc] kernel:\n%s\n", text ? text : "(out of memory)");
    free(text);
  }
  const Backend *be = in && k->nargs ? in[0]->buf->backend : backend_default();
  Buffer *bufs[KERNEL_MAX_ARGS], *obufs[KERNEL_MAX_OUTS];
  for (int i = 0; i < k->nargs; i++) bufs[i] = in[i]->buf;
  jx_status s = backend_run_outs(be, k, bufs, true, obufs);
  for (int o = 0; s == JX_OK && o < nout; o++) {
    jx_dtype d = o ? k->extra_dtypes[o - 1] : k->dtype;
    out[o] = array_new(obufs[o], shape_contiguous(ndim, shape), d, weak);
    if (!out[o]) {
      s = jx_last_status();
      for (int x = o + 1; x < nout; x++) buffer_free(obufs[x]);
    }
  }
  if (s != JX_OK)
    for (int o = 0; o < nout; o++) jx_free(out[o]), out[o] = NULL;
  return s;
}

/* Runs kernel k (one output) into a new contiguous array of shape. */
static jx_array *run_kernel(Kernel *k, jx_array *const *in, int ndim, const int64_t *shape,
                            bool weak) {
  jx_array *out[KERNEL_MAX_OUTS];
  k->nextra = 0;
  return run_kernel_outs(k, in, ndim, shape, weak, out) == JX_OK ? out[0] : NULL;
}

static bool all_weak(int nin, jx_array *const *in) {
  for (int i = 0; i < nin; i++)
    if (!in[i]->weak) return false;
  return nin > 0;
}

/* ------------------------------------------------------------ elementwise */

static jx_array *impl_elementwise(Prim p, int nin, jx_array *const *in,
                                  const PrimParams *pp) {
  const jx_array *x = in[0];
  int64_t n = shape_numel(x->ndim, x->shape);
  const AluExp *gidx = alu_special("gidx", n);
  const AluExp *v[4];
  for (int i = 0; i < nin; i++) v[i] = load_flat(in[i], i, gidx);
  Kernel k = {.nargs = nin, .size = n, .exp = kexp_elementwise(p, pp, v)};
  if (!k.exp) return NULL;
  k.dtype = k.exp->dtype;
  return run_kernel(&k, in, x->ndim, x->shape, false); /* impl_apply sets the weak type */
}

/* Both words of threefry2x32 from one kernel with two outputs. */
static jx_status impl_threefry(jx_array *const *in, jx_array **out) {
  const jx_array *x = in[0];
  int64_t n = shape_numel(x->ndim, x->shape);
  const AluExp *gidx = alu_special("gidx", n), *v[4];
  for (int i = 0; i < 4; i++) v[i] = load_flat(in[i], i, gidx);
  Kernel k = {.nargs = 4, .size = n, .dtype = JX_UINT32, .nextra = 1, .extra_dtypes = {JX_UINT32}};
  k.exp = alu_threefry_word(v[0], v[1], v[2], v[3], 0);
  k.extra[0] = alu_threefry_word(v[0], v[1], v[2], v[3], 1);
  if (!k.extra[0]) k.exp = NULL;
  return run_kernel_outs(&k, in, x->ndim, x->shape, all_weak(4, in), out);
}

static jx_array *impl_convert(jx_array *x, const PrimParams *pp) {
  if (!dtype_is_valid(pp->dtype)) {
    error_set(JX_ERR_DTYPE, "convert_element_type: invalid dtype %d", (int)pp->dtype);
    return NULL;
  }
  if (x->dtype == pp->dtype) { /* a view: only the weak type may change */
    jx_array *y = array_new(buffer_ref(x->buf), shape_copy(x->st), x->dtype, pp->weak);
    return y;
  }
  return impl_elementwise(PRIM_convert_element_type, 1, &x, pp);
}

static jx_array *impl_bitcast(jx_array *x, const PrimParams *pp) {
  char b[ARRAY_DESCRIBE_BUF];
  if (!dtype_is_valid(pp->dtype) || jx_dtype_itemsize(pp->dtype) != jx_dtype_itemsize(x->dtype)) {
    error_set(JX_ERR_DTYPE, "bitcast_convert_type: cannot bitcast %s to %s (itemsizes differ)",
              array_describe(b, x), dtype_is_valid(pp->dtype) ? jx_dtype_name(pp->dtype) : "?");
    return NULL;
  }
  return impl_elementwise(PRIM_bitcast_convert_type, 1, &x, pp);
}

/* ------------------------------------------------------------- reductions */

static jx_array *impl_reduce(Prim p, jx_array *x, const PrimParams *pp) {
  bool mask[JX_MAX_NDIM] = {false};
  for (int i = 0; i < pp->naxes; i++) {
    if (pp->axes[i] < 0 || pp->axes[i] >= x->ndim || mask[pp->axes[i]]) {
      error_set(JX_ERR_SHAPE, "%s: bad axis %d for rank %d", prim_name(p), pp->axes[i],
                x->ndim);
      return NULL;
    }
    mask[pp->axes[i]] = true;
  }
  int perm[JX_MAX_NDIM], nkeep = 0, n = 0;
  int64_t out_shape[JX_MAX_NDIM], R = 1;
  for (int d = 0; d < x->ndim; d++)
    if (!mask[d]) perm[n++] = d, out_shape[nkeep++] = x->shape[d];
  for (int d = 0; d < x->ndim; d++)
    if (mask[d]) perm[n++] = d, R *= x->shape[d];
  int64_t size = shape_numel(nkeep, out_shape);
  AluOp op = prim_alu_op(p);
  /* Large reductions over the innermost axes run in two stages, as jit lowers them
   * (kernel_reduce_lanes): P partials per output, then their reduction. */
  bool trailing = true;
  for (int d = 0; d < x->ndim; d++) trailing &= perm[d] == d;
  int64_t P = trailing ? kernel_reduce_lanes(size, R) : 0;
  if (P) {
    int64_t shape1[] = {size * P};
    const AluExp *g = alu_special("gidx", size * P), *r = alu_special("ridx", R / P);
    Kernel k1 = {.nargs = 1, .size = size * P, .dtype = x->dtype, .has_reduction = true};
    k1.exp = load_flat(x, 0, alu_binary(ALU_ADD, alu_binary(ALU_MUL, g, idx_const(R / P)), r));
    k1.reduction = (Reduction){.op = op, .dtype = x->dtype, .size = R / P,
                               .identity = alu_reduce_identity(op, x->dtype)};
    jx_array *part = run_kernel(&k1, &x, 1, shape1, x->weak);
    if (!part) return NULL;
    g = alu_special("gidx", size), r = alu_special("ridx", P);
    Kernel k2 = {.nargs = 1, .size = size, .dtype = x->dtype, .has_reduction = true};
    k2.exp = load_flat(part, 0, alu_binary(ALU_ADD, alu_binary(ALU_MUL, g, idx_const(P)), r));
    k2.reduction = (Reduction){.op = op, .dtype = x->dtype, .size = P,
                               .identity = alu_reduce_identity(op, x->dtype)};
    jx_array *out = run_kernel(&k2, &part, nkeep, out_shape, x->weak);
    jx_free(part);
    return out;
  }
  /* Index the permuted view as (kept..., reduced...) = gidx * R + ridx. */
  const AluExp *gidx = alu_special("gidx", size), *ridx = alu_special("ridx", R);
  const AluExp *flat = alu_binary(ALU_ADD, alu_binary(ALU_MUL, gidx, idx_const(R)), ridx);
  const AluExp *idx_perm[JX_MAX_NDIM], *idx[JX_MAX_NDIM];
  int64_t pshape[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) pshape[d] = x->shape[perm[d]];
  shape_unflatten(flat, x->ndim, pshape, idx_perm);
  for (int d = 0; d < x->ndim; d++) idx[perm[d]] = idx_perm[d];
  Kernel k = {.nargs = 1, .size = size, .dtype = x->dtype, .has_reduction = true};
  k.exp = load_dims(x, 0, idx);
  k.reduction = (Reduction){.op = op, .dtype = x->dtype, .size = R,
                            .identity = alu_reduce_identity(op, x->dtype)};
  if (R == 0) { /* nothing to reduce: the identity everywhere */
    k.has_reduction = false;
    k.exp = alu_const(x->dtype, k.reduction.identity);
    k.nargs = 0;
  }
  return run_kernel(&k, &x, nkeep, out_shape, x->weak);
}

/* --------------------------------------------------------------- movement */

static jx_array *view_of(jx_array *x, ShapeTracker *st) {
  if (!st) return NULL;
  return array_new(buffer_ref(x->buf), st, x->dtype, x->weak);
}

static jx_array *impl_reshape(jx_array *x, const PrimParams *pp) {
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  if (!array_check_shape("reshape", pp->ndim, pp->shape)) return NULL;
  if (shape_numel(pp->ndim, pp->shape) != shape_numel(x->ndim, x->shape)) {
    error_set(JX_ERR_SHAPE, "reshape: cannot reshape %s into %s",
              error_shape_str(b0, x->ndim, x->shape), error_shape_str(b1, pp->ndim, pp->shape));
    return NULL;
  }
  return view_of(x, shape_reshape(x->st, pp->ndim, pp->shape));
}

static jx_array *impl_transpose(jx_array *x, const PrimParams *pp) {
  bool seen[JX_MAX_NDIM] = {false};
  for (int d = 0; d < x->ndim; d++) {
    int a = pp->axes[d];
    if (a < 0 || a >= x->ndim || seen[a]) {
      error_set(JX_ERR_SHAPE, "transpose: axes are not a permutation of rank %d", x->ndim);
      return NULL;
    }
    seen[a] = true;
  }
  return view_of(x, shape_permute(x->st, pp->axes));
}

static jx_array *impl_broadcast_in_dim(jx_array *x, const PrimParams *pp) {
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  int64_t mid[JX_MAX_NDIM];
  for (int d = 0; d < pp->ndim; d++) mid[d] = 1;
  bool ok = array_check_shape("broadcast_in_dim", pp->ndim, pp->shape) && pp->naxes == x->ndim;
  for (int i = 0; ok && i < x->ndim; i++) {
    int d = pp->axes[i];
    ok = d >= 0 && d < pp->ndim && (i == 0 || d > pp->axes[i - 1]) &&
         (x->shape[i] == pp->shape[d] || x->shape[i] == 1);
    if (ok) mid[d] = x->shape[i];
  }
  if (!ok) {
    error_set(JX_ERR_SHAPE, "broadcast_in_dim: cannot broadcast %s to %s",
              error_shape_str(b0, x->ndim, x->shape), error_shape_str(b1, pp->ndim, pp->shape));
    return NULL;
  }
  ShapeTracker *st = shape_reshape(x->st, pp->ndim, mid);
  ShapeTracker *st2 = st ? shape_expand(st, pp->shape) : NULL;
  shape_free(st);
  return view_of(x, st2);
}

static jx_array *impl_pad(jx_array *x, const PrimParams *pp) {
  int64_t shape[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) {
    if (pp->start[d] < 0 || pp->stop[d] < 0) {
      error_set(JX_ERR_SHAPE, "pad: negative padding on axis %d", d);
      return NULL;
    }
    shape[d] = x->shape[d] + pp->start[d] + pp->stop[d];
  }
  if (!array_check_shape("pad", x->ndim, shape)) return NULL;
  jx_array *v = view_of(x, shape_pad(x->st, pp->start, pp->stop));
  if (!v || !kexp_pad_needs_fill(pp->value)) return v; /* reads as +0: a view */
  /* Another padding value needs a kernel: where(inside, x, value). */
  int64_t n = shape_numel(x->ndim, shape);
  const AluExp *idx[JX_MAX_NDIM];
  shape_unflatten(alu_special("gidx", n), x->ndim, shape, idx);
  Kernel k = {.nargs = 1, .size = n, .dtype = x->dtype};
  k.exp = kexp_pad_fill(load_dims(v, 0, idx), x->ndim, pp->start, x->shape, pp->value, x->dtype, idx);
  jx_array *out = run_kernel(&k, &v, x->ndim, shape, x->weak);
  jx_free(v);
  return out;
}

static jx_array *impl_slice(jx_array *x, const PrimParams *pp) {
  int64_t step[JX_MAX_NDIM];
  bool strided = false;
  for (int d = 0; d < x->ndim; d++) {
    if (pp->start[d] < 0 || pp->start[d] > pp->stop[d] || pp->stop[d] > x->shape[d] ||
        pp->step[d] < 1) {
      error_set(JX_ERR_SHAPE, "slice: bad bounds [%lld:%lld:%lld] for axis %d of size %lld",
                (long long)pp->start[d], (long long)pp->stop[d], (long long)pp->step[d], d,
                (long long)x->shape[d]);
      return NULL;
    }
    step[d] = pp->step[d];
    strided |= step[d] != 1;
  }
  ShapeTracker *st = shape_shrink(x->st, pp->start, pp->stop);
  if (st && strided) {
    ShapeTracker *s2 = shape_stride(st, step);
    shape_free(st);
    st = s2;
  }
  return view_of(x, st);
}

static jx_array *impl_rev(jx_array *x, const PrimParams *pp) {
  int64_t step[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) step[d] = 1;
  for (int i = 0; i < pp->naxes; i++) {
    if (pp->axes[i] < 0 || pp->axes[i] >= x->ndim) {
      error_set(JX_ERR_SHAPE, "rev: bad axis %d for rank %d", pp->axes[i], x->ndim);
      return NULL;
    }
    step[pp->axes[i]] = -1;
  }
  return view_of(x, shape_stride(x->st, step));
}

/* ------------------------------------------------- concatenate and gather */

static jx_array *impl_concatenate(int n, jx_array *const *in, const PrimParams *pp) {
  const jx_array *x = in[0];
  int axis = pp->axis;
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  if (axis < 0 || axis >= x->ndim) {
    error_set(JX_ERR_SHAPE, "concatenate: axis %d out of range for rank %d", axis, x->ndim);
    return NULL;
  }
  if (n > KERNEL_MAX_ARGS) {
    error_set(JX_ERR_UNSUPPORTED, "concatenate: more than %d operands", KERNEL_MAX_ARGS);
    return NULL;
  }
  int64_t shape[JX_MAX_NDIM];
  memcpy(shape, x->shape, sizeof shape);
  shape[axis] = 0;
  for (int i = 0; i < n; i++) {
    bool ok = in[i]->ndim == x->ndim && in[i]->dtype == x->dtype;
    for (int d = 0; ok && d < x->ndim; d++) ok = d == axis || in[i]->shape[d] == x->shape[d];
    if (!ok) {
      error_set(JX_ERR_SHAPE, "concatenate: operands %s and %s differ off axis %d",
                array_describe(b0, x), array_describe(b1, in[i]), axis);
      return NULL;
    }
    shape[axis] += in[i]->shape[axis];
  }
  if (!array_check_shape("concatenate", x->ndim, shape)) return NULL;
  int64_t size = shape_numel(x->ndim, shape);
  const AluExp *gidx = alu_special("gidx", size), *idx[JX_MAX_NDIM];
  shape_unflatten(gidx, x->ndim, shape, idx);
  int64_t lens[KERNEL_MAX_ARGS];
  for (int i = 0; i < n; i++) lens[i] = in[i]->shape[axis];
  const AluExp *exp = kexp_concatenate(n, lens, axis, x->ndim, idx, load_operand, (void *)in);
  Kernel k = {.nargs = n, .size = size, .dtype = x->dtype, .exp = exp};
  return run_kernel(&k, in, x->ndim, shape, all_weak(n, in));
}

static jx_array *impl_gather(jx_array *x, jx_array *ind, const PrimParams *pp) {
  int axis = pp->axis;
  char b0[ARRAY_DESCRIBE_BUF];
  if (axis < 0 || axis >= x->ndim || x->ndim - 1 + ind->ndim > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "gather: axis %d out of range for %s", axis, array_describe(b0, x));
    return NULL;
  }
  if (!dtype_is_integer(ind->dtype)) {
    error_set(JX_ERR_DTYPE, "gather: indices must be integers, got %s", array_describe(b0, ind));
    return NULL;
  }
  if (x->shape[axis] == 0 && shape_numel(ind->ndim, ind->shape) > 0) {
    error_set(JX_ERR_SHAPE, "gather: cannot index into an empty axis of %s", array_describe(b0, x));
    return NULL;
  }
  int64_t shape[JX_MAX_NDIM];
  int ndim = 0;
  for (int d = 0; d < axis; d++) shape[ndim++] = x->shape[d];
  for (int d = 0; d < ind->ndim; d++) shape[ndim++] = ind->shape[d];
  for (int d = axis + 1; d < x->ndim; d++) shape[ndim++] = x->shape[d];
  if (!array_check_shape("gather", ndim, shape)) return NULL;
  int64_t size = shape_numel(ndim, shape);
  const AluExp *idx[JX_MAX_NDIM];
  shape_unflatten(alu_special("gidx", size), ndim, shape, idx);
  jx_array *ops[2] = {x, ind};
  Kernel k = {.nargs = 2, .size = size, .dtype = x->dtype};
  k.exp = kexp_gather(x->ndim, x->shape[axis], ind->ndim, axis, idx, load_operand, ops);
  return run_kernel(&k, ops, ndim, shape, x->weak);
}

/* ------------------------------------------------------------ dot_general */

static bool dims_valid(int n, const int *dims, int ndim, bool *used) {
  for (int i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= ndim || used[dims[i]]) return false;
    used[dims[i]] = true;
  }
  return true;
}

/* Large float products run as a GEMM routine on canonical layouts (float16/bfloat16
 * ones too: cuBLAS's half-precision kernels on cuda, else float32
 * BLAS on converted copies inside the routine, routine_gemm_block). */
static jx_array *dot_as_gemm(jx_array *x, jx_array *y, const PrimParams *pp, const Aval *out) {
  Aval xa = prim_aval_of(x), ya = prim_aval_of(y);
  DotLayout L;
  prim_dot_layout(pp, &xa, &ya, &L);
  jx_scope_begin();
  jx_array *a = prim_reshape(prim_transpose(x, L.xperm), 3, (int64_t[]){L.B, L.M, L.K});
  jx_array *b = prim_reshape(prim_transpose(y, L.yperm), 3, (int64_t[]){L.B, L.K, L.N});
  jx_array *ac = impl_contiguous(a), *bc = impl_contiguous(b), *r = NULL;
  if (ac && bc) {
    Routine rt = {.op = ROUTINE_GEMM, .nin = 2, .nout = 1, .dtype = x->dtype, .outer = L.B,
                  .n = L.M, .m = L.K, .inner = L.N};
    Buffer *buf = NULL;
    if (backend_run_routine(ac->buf->backend, &rt, (Buffer *[]){ac->buf, bc->buf}, &buf) == JX_OK)
      r = array_new(buf, shape_contiguous(out->ndim, out->shape), out->dtype, out->weak);
  }
  jx_scope_end(r ? 1 : 0, &r);
  return r;
}

bool impl_use_gemm(jx_dtype dtype, const PrimParams *pp, const jx_array *x, const jx_array *y) {
  bool half = dtype == JX_FLOAT16 || dtype == JX_BFLOAT16;
  if (dtype != JX_FLOAT32 && dtype != JX_FLOAT64 && !dtype_is_complex(dtype) && !half) return false;
  Aval xa = prim_aval_of(x), ya = prim_aval_of(y);
  DotLayout L;
  prim_dot_layout(pp, &xa, &ya, &L);
  return (double)L.M * (double)L.N * (double)L.K >= ROUTINE_GEMM_MIN_WORK;
}

static jx_array *impl_dot_general(jx_array *x, jx_array *y, const PrimParams *pp) {
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  bool xu[JX_MAX_NDIM] = {false}, yu[JX_MAX_NDIM] = {false};
  bool ok = x->dtype == y->dtype && dims_valid(pp->ncontract, pp->lhs_contract, x->ndim, xu) &&
            dims_valid(pp->nbatch, pp->lhs_batch, x->ndim, xu) &&
            dims_valid(pp->ncontract, pp->rhs_contract, y->ndim, yu) &&
            dims_valid(pp->nbatch, pp->rhs_batch, y->ndim, yu);
  for (int i = 0; ok && i < pp->ncontract; i++)
    ok = x->shape[pp->lhs_contract[i]] == y->shape[pp->rhs_contract[i]];
  for (int i = 0; ok && i < pp->nbatch; i++)
    ok = x->shape[pp->lhs_batch[i]] == y->shape[pp->rhs_batch[i]];
  if (!ok) {
    error_set(x->dtype == y->dtype ? JX_ERR_SHAPE : JX_ERR_DTYPE,
              "dot_general: operands %s and %s do not match the dimension numbers",
              array_describe(b0, x), array_describe(b1, y));
    return NULL;
  }
  /* Output dims: batch, lhs free, rhs free. */
  int64_t shape[JX_MAX_NDIM];
  int ndim = 0, xfree[JX_MAX_NDIM], yfree[JX_MAX_NDIM], nxf = 0, nyf = 0;
  for (int i = 0; i < pp->nbatch; i++) shape[ndim++] = x->shape[pp->lhs_batch[i]];
  for (int d = 0; d < x->ndim; d++)
    if (!xu[d]) xfree[nxf++] = d;
  for (int d = 0; d < y->ndim; d++)
    if (!yu[d]) yfree[nyf++] = d;
  if (pp->nbatch + nxf + nyf > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "dot_general: result rank exceeds %d", JX_MAX_NDIM);
    return NULL;
  }
  for (int i = 0; i < nxf; i++) shape[ndim++] = x->shape[xfree[i]];
  for (int i = 0; i < nyf; i++) shape[ndim++] = y->shape[yfree[i]];
  if (!array_check_shape("dot_general", ndim, shape)) return NULL;
  jx_array *ops[2] = {x, y};
  Aval xa = prim_aval_of(x), ya = prim_aval_of(y);
  Kernel k = {.nargs = 2};
  kexp_dot(pp, &xa, &ya, x->dtype, ndim, shape, load_operand, ops, &k);
  if (!k.has_reduction) k.nargs = 0;
  return run_kernel(&k, ops, ndim, shape, x->weak && y->weak);
}

static jx_array *impl_iota(const PrimParams *pp) {
  if (!dtype_is_valid(pp->dtype) || pp->axis < 0 || pp->axis >= pp->ndim) {
    error_set(JX_ERR_SHAPE, "iota: dimension %d out of range for rank %d", pp->axis, pp->ndim);
    return NULL;
  }
  int64_t size = shape_numel(pp->ndim, pp->shape);
  const AluExp *idx[JX_MAX_NDIM];
  shape_unflatten(alu_special("gidx", size), pp->ndim, pp->shape, idx);
  Kernel k = {.nargs = 0, .size = size, .dtype = pp->dtype, .exp = alu_cast(idx[pp->axis], pp->dtype)};
  return run_kernel(&k, NULL, pp->ndim, pp->shape, false);
}

/* --------------------------------------------------------------- routines */

static jx_status impl_routine(Prim p, int nin, jx_array *const *in, const PrimParams *pp,
                              int nout, jx_array **out) {
  Routine r;
  Aval av[ROUTINE_MAX_OPERANDS] = {0};
  for (int i = 0; i < nin && i < ROUTINE_MAX_OPERANDS; i++) av[i] = prim_aval_of(in[i]);
  jx_status s = kexp_routine(p, pp, nin, av, nout, &r);
  if (s != JX_OK) return s;
  jx_array *c[ROUTINE_MAX_OPERANDS] = {NULL};
  Buffer *bufs[ROUTINE_MAX_OPERANDS], *obufs[ROUTINE_MAX_OPERANDS];
  for (int i = 0; i < nin && s == JX_OK; i++) {
    c[i] = impl_contiguous(in[i]);
    if (!c[i]) s = jx_last_status();
    else bufs[i] = c[i]->buf;
  }
  if (s == JX_OK) s = backend_run_routine(c[0]->buf->backend, &r, bufs, obufs);
  for (int o = 0; o < nout && s == JX_OK; o++) {
    const jx_array *x = in[p == PRIM_sort ? o : 0];
    bool weak = p == PRIM_sort ? x->weak : in[0]->weak && in[2]->weak;
    out[o] = array_new(obufs[o], shape_contiguous(x->ndim, x->shape), x->dtype, weak);
    if (!out[o]) {
      s = jx_last_status();
      for (int k = o + 1; k < nout; k++) buffer_free(obufs[k]);
    }
  }
  for (int i = 0; i < nin; i++) jx_free(c[i]);
  return s;
}

/* A linear-algebra primitive: its routine on contiguous operands; the results take
 * the avals abstract evaluation gave (trace/linalg.c). */
static jx_status impl_linalg(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                             const Aval *avals, jx_array **out) {
  if (nin > ROUTINE_MAX_OPERANDS) {
    error_set(JX_ERR_VALUE, "%s: %d operands (at most %d)", prim_name(p), nin, ROUTINE_MAX_OPERANDS);
    return JX_ERR_VALUE;
  }
  Aval ins[ROUTINE_MAX_OPERANDS] = {{0}};
  for (int i = 0; i < nin; i++) ins[i] = prim_aval_of(in[i]);
  Routine r;
  jx_status s = kexp_routine(p, pp, nin, ins, nout, &r); /* linalg or fft */
  jx_array *c[ROUTINE_MAX_OPERANDS] = {NULL};
  Buffer *bufs[ROUTINE_MAX_OPERANDS], *obufs[ROUTINE_MAX_OPERANDS];
  for (int i = 0; i < nin && s == JX_OK; i++) {
    c[i] = impl_contiguous(in[i]);
    if (!c[i]) s = jx_last_status();
    else bufs[i] = c[i]->buf;
  }
  for (int i = 1; i < nin && s == JX_OK; i++)
    if (c[i]->buf->backend != c[0]->buf->backend) {
      error_set(JX_ERR_DEVICE, "%s: operands on different devices (%s, %s)", prim_name(p),
                c[0]->buf->backend->name, c[i]->buf->backend->name);
      s = JX_ERR_DEVICE;
    }
  if (s == JX_OK) s = backend_run_routine(c[0]->buf->backend, &r, bufs, obufs);
  for (int o = 0; o < nout && s == JX_OK; o++) {
    out[o] = array_new(obufs[o], shape_contiguous(avals[o].ndim, avals[o].shape), avals[o].dtype, avals[o].weak);
    if (!out[o]) {
      s = jx_last_status();
      for (int k = o + 1; k < nout; k++) buffer_free(obufs[k]);
      for (int k = 0; k < o; k++) jx_free(out[k]), out[k] = NULL;
    }
  }
  for (int i = 0; i < nin; i++) jx_free(c[i]);
  return s;
}

/* ------------------------------------------------------------- dispatch */

/* The eval rule of every primitive (autodidax's impl_rules): one entry per primitive,
 * a uniform signature (avals: the results' avals from abstract evaluation);
 * tests/transform/test_rules.c fails on a missing one. */
typedef jx_status (*ImplRule)(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                              const Aval *avals, jx_array **out);

static jx_status one(jx_array *r, jx_array **out) {
  out[0] = r;
  return r ? JX_OK : jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
}

#define RULE(name, expr)                                                                    \
  static jx_status name(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout, \
                        const Aval *avals, jx_array **out) {                                \
    return one(expr, out);                                                                  \
  }
RULE(rule_elementwise, impl_elementwise(p, nin, in, pp))
RULE(rule_convert, impl_convert(in[0], pp))
RULE(rule_bitcast, impl_bitcast(in[0], pp))
RULE(rule_reduce, impl_reduce(p, in[0], pp))
RULE(rule_reshape, impl_reshape(in[0], pp))
RULE(rule_transpose, impl_transpose(in[0], pp))
RULE(rule_broadcast_in_dim, impl_broadcast_in_dim(in[0], pp))
RULE(rule_pad, impl_pad(in[0], pp))
RULE(rule_slice, impl_slice(in[0], pp))
RULE(rule_rev, impl_rev(in[0], pp))
RULE(rule_stop_gradient, view_of(in[0], shape_copy(in[0]->st)))
RULE(rule_concatenate, impl_concatenate(nin, in, pp))
RULE(rule_gather, impl_gather(in[0], in[1], pp))
RULE(rule_iota, impl_iota(pp))
RULE(rule_dot_general, impl_use_gemm(in[0]->dtype, pp, in[0], in[1])
                           ? dot_as_gemm(in[0], in[1], pp, &avals[0])
                           : impl_dot_general(in[0], in[1], pp))
#undef RULE

static jx_status rule_threefry(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                               const Aval *avals, jx_array **out) {
  return impl_threefry(in, out);
}

static jx_status rule_routine(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                              const Aval *avals, jx_array **out) {
  return impl_routine(p, nin, in, pp, nout, out);
}

static jx_status rule_linalg(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                             const Aval *avals, jx_array **out) {
  return impl_linalg(p, nin, in, pp, nout, avals, out);
}

static jx_status rule_call(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                           const Aval *avals, jx_array **out) {
  return prim_eval_jaxpr(pp->jaxpr, in, out);
}

/* cond, while, scan (trace/control.c) */
static jx_status rule_cond(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                           const Aval *avals, jx_array **out) {
  return control_impl(p, nin, in, pp, nout, out);
}

static jx_status rule_custom(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                             const Aval *avals, jx_array **out) {
  return custom_impl(p, nin, in, pp, nout, out);
}

static jx_status rule_debug_print(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                                  const Aval *avals, jx_array **out) {
  return debug_impl(nin, in, pp);
}

static const ImplRule impl_rules[PRIM_NUM] = {
    [PRIM_neg] = rule_elementwise,
    [PRIM_not] = rule_elementwise,
    [PRIM_abs] = rule_elementwise,
    [PRIM_sign] = rule_elementwise,
    [PRIM_sin] = rule_elementwise,
    [PRIM_cos] = rule_elementwise,
    [PRIM_tan] = rule_elementwise,
    [PRIM_asin] = rule_elementwise,
    [PRIM_acos] = rule_elementwise,
    [PRIM_atan] = rule_elementwise,
    [PRIM_sinh] = rule_elementwise,
    [PRIM_cosh] = rule_elementwise,
    [PRIM_tanh] = rule_elementwise,
    [PRIM_asinh] = rule_elementwise,
    [PRIM_acosh] = rule_elementwise,
    [PRIM_atanh] = rule_elementwise,
    [PRIM_exp] = rule_elementwise,
    [PRIM_exp2] = rule_elementwise,
    [PRIM_expm1] = rule_elementwise,
    [PRIM_log] = rule_elementwise,
    [PRIM_log2] = rule_elementwise,
    [PRIM_log1p] = rule_elementwise,
    [PRIM_sqrt] = rule_elementwise,
    [PRIM_rsqrt] = rule_elementwise,
    [PRIM_cbrt] = rule_elementwise,
    [PRIM_reciprocal] = rule_elementwise,
    [PRIM_floor] = rule_elementwise,
    [PRIM_ceil] = rule_elementwise,
    [PRIM_round] = rule_elementwise,
    [PRIM_trunc] = rule_elementwise,
    [PRIM_erf] = rule_elementwise,
    [PRIM_erfc] = rule_elementwise,
    [PRIM_is_nan] = rule_elementwise,
    [PRIM_is_inf] = rule_elementwise,
    [PRIM_add] = rule_elementwise,
    [PRIM_sub] = rule_elementwise,
    [PRIM_mul] = rule_elementwise,
    [PRIM_div] = rule_elementwise,
    [PRIM_rem] = rule_elementwise,
    [PRIM_pow] = rule_elementwise,
    [PRIM_max] = rule_elementwise,
    [PRIM_min] = rule_elementwise,
    [PRIM_atan2] = rule_elementwise,
    [PRIM_and] = rule_elementwise,
    [PRIM_or] = rule_elementwise,
    [PRIM_xor] = rule_elementwise,
    [PRIM_shift_left] = rule_elementwise,
    [PRIM_shift_right] = rule_elementwise,
    [PRIM_lt] = rule_elementwise,
    [PRIM_ne] = rule_elementwise,
    [PRIM_eq] = rule_elementwise,
    [PRIM_real] = rule_elementwise,
    [PRIM_imag] = rule_elementwise,
    [PRIM_conj] = rule_elementwise,
    [PRIM_complex] = rule_elementwise,
    [PRIM_select] = rule_elementwise,
    [PRIM_convert_element_type] = rule_convert,
    [PRIM_bitcast_convert_type] = rule_bitcast,
    [PRIM_reduce_sum] = rule_reduce,
    [PRIM_reduce_prod] = rule_reduce,
    [PRIM_reduce_max] = rule_reduce,
    [PRIM_reduce_min] = rule_reduce,
    [PRIM_reduce_and] = rule_reduce,
    [PRIM_reduce_or] = rule_reduce,
    [PRIM_reshape] = rule_reshape,
    [PRIM_transpose] = rule_transpose,
    [PRIM_broadcast_in_dim] = rule_broadcast_in_dim,
    [PRIM_pad] = rule_pad,
    [PRIM_slice] = rule_slice,
    [PRIM_rev] = rule_rev,
    [PRIM_concatenate] = rule_concatenate,
    [PRIM_gather] = rule_gather,
    [PRIM_dot_general] = rule_dot_general,
    [PRIM_iota] = rule_iota,
    [PRIM_stop_gradient] = rule_stop_gradient,
    [PRIM_sort] = rule_routine,
    [PRIM_scatter_add] = rule_routine,
    [PRIM_cholesky] = rule_linalg,
    [PRIM_triangular_solve] = rule_linalg,
    [PRIM_lu] = rule_linalg,
    [PRIM_qr] = rule_linalg,
    [PRIM_eigh] = rule_linalg,
    [PRIM_svd] = rule_linalg,
    [PRIM_tridiagonal_solve] = rule_linalg,
    [PRIM_fft] = rule_linalg,
    [PRIM_threefry2x32] = rule_threefry,
    [PRIM_jit] = rule_call,
    [PRIM_special_call] = rule_call,
    [PRIM_cond] = rule_cond,
    [PRIM_custom_jvp_call] = rule_custom,
    [PRIM_custom_vjp_call] = rule_custom,
    [PRIM_custom_lin] = rule_custom,
    [PRIM_checkpoint] = rule_custom,
    [PRIM_debug_print] = rule_debug_print,
    [PRIM_while] = rule_cond,
    [PRIM_scan] = rule_cond,
};

bool impl_has_rule(Prim p) { return (unsigned)p < PRIM_NUM && impl_rules[p] != NULL; }

jx_status impl_apply(Prim p, int nin, jx_array *const *given, const PrimParams *pp, int nout,
                     const Aval *avals, jx_array **out) {
  if (!impl_has_rule(p)) {
    error_set(JX_ERR_INTERNAL, "no eval rule for primitive %s", prim_name(p));
    return JX_ERR_INTERNAL;
  }
  /* one device for every input (JAX's committed-device rule); uncommitted inputs
   * elsewhere are copied there */
  bool committed;
  const Backend *be = realize_device(prim_name(p), nin, given, &committed);
  jx_array *const *in = given;
  if (!be || !realize_args(be, nin, given, &in)) return jx_last_status();
  jx_status s = impl_rules[p](p, nin, in, pp, nout, avals, out);
  /* abstract evaluation decides the weak type */
  for (int o = 0; s == JX_OK && o < nout; o++) {
    out[o]->weak = avals[o].weak;
    out[o]->committed |= committed;
  }
  realize_args_free(nin, given, in);
  return s;
}

jx_array *impl_contiguous(jx_array *a) {
  if (!a) return NULL;
  if (shape_is_contiguous(a->st)) return jx_ref(a);
  int64_t n = shape_numel(a->ndim, a->shape);
  Kernel k = {.nargs = 1, .size = n, .dtype = a->dtype,
              .exp = load_flat(a, 0, alu_special("gidx", n))};
  return run_kernel(&k, &a, a->ndim, a->shape, a->weak);
}
