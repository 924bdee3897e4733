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
  const AluExp *zero = dtype_is_floating(d) ? alu_const_float(d, 0.0) : alu_const_int(d, 0);
  return alu_where(valid, value, zero);
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
  const AluExp *fill = dtype_is_floating(dtype) ? alu_const_float(dtype, value)
                                                : alu_const_int(dtype, (int64_t)value);
  return inside ? alu_where(inside, padded, fill) : padded;
}

bool kexp_pad_needs_fill(double value) { return !(value == 0.0 && !signbit(value)); }
