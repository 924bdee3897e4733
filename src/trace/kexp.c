/* kexp.c -- kernel expressions shared by eager evaluation and jit lowering (kexp.h). */
#include "trace/kexp.h"

#include <math.h>
#include <string.h>

#include "core/dtype.h"

static const AluExp *i64(int64_t v) { return alu_const_int(JX_INT64, v); }

void kexp_view_index(const ShapeTracker *st, const AluExp *const *idx, const AluExp **index,
                     const AluExp **valid) {
  const AluExp *raw;
  shape_to_exp_dims(st, idx, &raw, valid);
  *index = alu_where(*valid, raw, i64(0));
}

const AluExp *kexp_masked(const AluExp *valid, const AluExp *value) {
  if (!value) return NULL;
  jx_dtype d = value->dtype;
  const AluExp *zero = dtype_is_inexact(d) ? alu_const_float(d, 0.0) : alu_const_int(d, 0);
  return alu_where(valid, value, zero);
}

const AluExp *kexp_binary(Prim p, const AluExp *a, const AluExp *b) {
  if (a && b && a->dtype != b->dtype && p == PRIM_pow) b = alu_cast(b, a->dtype);
  return alu_binary(prim_alu_op(p), a, b);
}

const AluExp *kexp_concatenate(int n, const int64_t *lens, int axis, int ndim,
                               const AluExp *const *idx, KexpLoad load, void *ctx) {
  const AluExp *pos = idx[axis], *e = NULL;
  int64_t offset = 0;
  for (int i = 0; i < n; i++) {
    const AluExp *after = alu_unary(ALU_NOT, alu_binary(ALU_CMPLT, pos, i64(offset)));
    const AluExp *inside =
        alu_binary(ALU_AND, after, alu_binary(ALU_CMPLT, pos, i64(offset + lens[i])));
    const AluExp *sub[JX_MAX_NDIM];
    memcpy(sub, idx, (size_t)ndim * sizeof *sub);
    sub[axis] = alu_where(inside, alu_binary(ALU_SUB, pos, i64(offset)), i64(0));
    const AluExp *v = load(ctx, i, sub);
    e = e ? alu_where(after, v, e) : v;
    offset += lens[i];
  }
  return e;
}

const AluExp *kexp_gather(int xndim, int64_t n, int indndim, int axis, const AluExp *const *idx,
                          KexpLoad load, void *ctx) {
  const AluExp *pos = alu_cast(load(ctx, 1, idx + axis), JX_INT64), *xi[JX_MAX_NDIM];
  pos = alu_binary(ALU_MAX, alu_binary(ALU_MIN, pos, i64(n - 1)), i64(0));
  for (int d = 0; d < axis; d++) xi[d] = idx[d];
  xi[axis] = pos;
  for (int d = axis + 1; d < xndim; d++) xi[d] = idx[d - 1 + indndim];
  return load(ctx, 0, xi);
}

const AluExp *kexp_pad_fill(const AluExp *padded, int ndim, const int64_t *lo, const int64_t *len,
                            double value, jx_dtype dtype, const AluExp *const *idx) {
  const AluExp *inside = NULL;
  for (int d = 0; d < ndim; d++) {
    const AluExp *in_d =
        alu_binary(ALU_AND, alu_unary(ALU_NOT, alu_binary(ALU_CMPLT, idx[d], i64(lo[d]))),
                   alu_binary(ALU_CMPLT, idx[d], i64(lo[d] + len[d])));
    inside = inside ? alu_binary(ALU_AND, inside, in_d) : in_d;
  }
  const AluExp *fill = dtype_is_inexact(dtype) ? alu_const_float(dtype, value)
                                                : alu_const_int(dtype, (int64_t)value);
  return inside ? alu_where(inside, padded, fill) : padded;
}

bool kexp_pad_needs_fill(double value) { return !(value == 0.0 && !signbit(value)); }

void kexp_dot(const PrimParams *pp, const Aval *x, const Aval *y, jx_dtype dt, int ndim,
              const int64_t *shape, KexpLoad load, void *ctx, Kernel *k) {
  bool xu[JX_MAX_NDIM] = {false}, yu[JX_MAX_NDIM] = {false};
  for (int i = 0; i < pp->ncontract; i++) xu[pp->lhs_contract[i]] = yu[pp->rhs_contract[i]] = true;
  for (int i = 0; i < pp->nbatch; i++) xu[pp->lhs_batch[i]] = yu[pp->rhs_batch[i]] = true;
  int xfree[JX_MAX_NDIM], yfree[JX_MAX_NDIM], nxf = 0, nyf = 0;
  for (int d = 0; d < x->ndim; d++)
    if (!xu[d]) xfree[nxf++] = d;
  for (int d = 0; d < y->ndim; d++)
    if (!yu[d]) yfree[nyf++] = d;
  int64_t cshape[JX_MAX_NDIM], R = 1, size = shape_numel(ndim, shape);
  for (int i = 0; i < pp->ncontract; i++) R *= (cshape[i] = x->shape[pp->lhs_contract[i]]);
  const AluExp *oi[JX_MAX_NDIM], *ci[JX_MAX_NDIM], *xi[JX_MAX_NDIM], *yi[JX_MAX_NDIM];
  shape_unflatten(alu_special("gidx", size), ndim, shape, oi);
  shape_unflatten(alu_special("ridx", R), pp->ncontract, cshape, ci);
  for (int i = 0; i < pp->nbatch; i++) xi[pp->lhs_batch[i]] = yi[pp->rhs_batch[i]] = oi[i];
  for (int i = 0; i < pp->ncontract; i++) xi[pp->lhs_contract[i]] = yi[pp->rhs_contract[i]] = ci[i];
  for (int i = 0; i < nxf; i++) xi[xfree[i]] = oi[pp->nbatch + i];
  for (int i = 0; i < nyf; i++) yi[yfree[i]] = oi[pp->nbatch + nxf + i];
  jx_dtype acc = dt == JX_FLOAT16 || dt == JX_BFLOAT16 ? JX_FLOAT32 : dt;
  AluOp mul = dt == JX_BOOL ? ALU_AND : ALU_MUL, add = dt == JX_BOOL ? ALU_OR : ALU_ADD;
  k->size = size;
  k->dtype = dt;
  k->has_reduction = R > 0;
  k->reduction = (Reduction){.op = add, .dtype = acc, .size = R, .identity = alu_reduce_identity(add, acc)};
  k->reduction.epilogue = acc != dt ? alu_cast(alu_variable("acc", acc), dt) : NULL;
  k->exp = R > 0 ? alu_binary(mul, alu_cast(load(ctx, 0, xi), acc), alu_cast(load(ctx, 1, yi), acc))
                 : alu_const(dt, alu_reduce_identity(add, dt));
}

const AluExp *kexp_elementwise(Prim p, const PrimParams *pp, const AluExp *const *v) {
  switch (p) { /* complex parts: their own IR ops (ir/complex.c) */
  case PRIM_real: return alu_real(v[0]);
  case PRIM_imag: return alu_imag(v[0]);
  case PRIM_conj: return alu_complex(alu_real(v[0]), alu_unary(ALU_NEG, alu_imag(v[0])));
  case PRIM_complex: return alu_complex(v[0], v[1]);
  case PRIM_fma: return alu_fma(v[0], v[1], v[2]);
  default: break;
  }
  switch (prim_kind(p)) {
  case PRIM_KIND_UNARY:
  case PRIM_KIND_UNARY_PRED: return alu_unary(prim_alu_op(p), v[0]);
  case PRIM_KIND_BINARY:
  case PRIM_KIND_COMPARE: return kexp_binary(p, v[0], v[1]);
  case PRIM_KIND_SELECT: return alu_where(v[0], v[1], v[2]);
  case PRIM_KIND_CONVERT: return alu_cast(v[0], pp->dtype);
  case PRIM_KIND_BITCAST: /* to its own dtype: the value (the IR has no bool bitcast) */
    return v[0] && v[0]->dtype == pp->dtype ? v[0] : alu_bitcast(v[0], pp->dtype);
  default: return NULL;
  }
}

jx_status kexp_routine(Prim p, const PrimParams *pp, int nin, const Aval *in, int nout, Routine *r) {
  if (prim_is_linalg(p)) { /* matrices with leading batch dims (trace/linalg.c) */
    prim_linalg_routine(p, in, pp, r);
    return routine_check(r);
  }
  if (p == PRIM_fft) { /* trailing transformed axes, leading batch (trace/fft.c) */
    prim_fft_routine(in, pp, r);
    return routine_check(r);
  }
  const Aval *x = &in[0];
  int axis = pp->axis;
  *r = (Routine){.nin = nin, .nout = nout, .dtype = x->dtype, .outer = shape_numel(axis, x->shape),
                 .n = x->shape[axis], .inner = shape_numel(x->ndim - axis - 1, x->shape + axis + 1)};
  r->op = p == PRIM_sort ? ROUTINE_SORT : ROUTINE_SCATTER_ADD;
  jx_status s = routine_check(r);
  if (s != JX_OK) return s;
  for (int i = 0; i < nin; i++) r->dtypes[i] = in[i].dtype;
  if (p == PRIM_scatter_add) {
    r->index_dtype = in[1].dtype;
    r->m = shape_numel(in[1].ndim, in[1].shape);
  }
  return JX_OK;
}
