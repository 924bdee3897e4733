/* shape.c (ir) -- the shape tracker's lowering of views (core/shape.h) to kernel IR:
 * the int64 index and bool validity AluExps that kernels use to read an array through
 * its views, following tinygrad's view.py (expr_idxs/expr_node). */
#include "ir/shape.h"

static const AluExp *i64(int64_t v) { return alu_const_int(JX_INT64, v); }

static bool is_const(const AluExp *e, int64_t v) {
  return e && e->op == ALU_CONST && e->value.i == v;
}

/* Builders that skip the trivial cases (+0, *1, *0, AND true) so expressions stay small
 * before simplification, and that pass NULL (OOM) through to the result. */
static const AluExp *add(const AluExp *a, const AluExp *b) {
  if (is_const(a, 0)) return b;
  if (is_const(b, 0)) return a;
  return alu_binary(ALU_ADD, a, b);
}

static const AluExp *mul(const AluExp *a, int64_t k) {
  if (!a || k == 1) return a;
  return k == 0 ? i64(0) : alu_binary(ALU_MUL, a, i64(k));
}

static const AluExp *and_(const AluExp *a, const AluExp *b) {
  if (is_const(a, 1)) return b;
  if (is_const(b, 1)) return a;
  return alu_binary(ALU_AND, a, b);
}

/* ANDs into `valid` the tests that can fail for index x of a dim of size n with valid
 * range [lo, hi), as CMPLT (x >= lo is lo-1 < x). */
static const AluExp *range_valid(const AluExp *valid, const AluExp *x, int64_t lo, int64_t hi,
                                 int64_t n) {
  if (lo > 0) valid = and_(valid, alu_binary(ALU_CMPLT, i64(lo - 1), x));
  if (hi < n) valid = and_(valid, alu_binary(ALU_CMPLT, x, i64(hi)));
  return valid;
}

/* One view applied to `flat`, a C-order index over its shape: returns the linear
 * offset and ANDs the mask test into *valid. Dims are merged first (shape_dim_merge), so a
 * contiguous view is one dim of stride 1 and its offset is flat itself: no div/mod
 * chain for the simplifier to cancel. The outermost dim needs no mod since
 * flat < numel wherever the element is valid, and an unmasked stride-0 dim needs no
 * index at all. Offsets computed where *valid is false are meaningless (they may lie
 * outside the buffer): readers must test valid before loading. */
static const AluExp *view_exp(const View *v, const AluExp *flat, const AluExp **valid) {
  if (shape_view_empty(v) || shape_numel(v->ndim, v->shape) == 0) {
    *valid = alu_const_int(JX_BOOL, 0);
    return i64(0);
  }
  ShapeDim dims[JX_MAX_NDIM];
  int n = 0;
  int64_t offset = v->offset;
  for (int d = 0; d < v->ndim; d++) {
    if (v->shape[d] == 1) continue;
    ShapeDim x = {v->shape[d], v->strides[d], 0, v->shape[d]};
    shape_view_range(v, d, &x.lo, &x.hi);
    if (n == 0 || !shape_dim_merge(&dims[n - 1], &x, &offset)) dims[n++] = x;
  }
  const AluExp *sum = i64(0);
  int64_t r = 1; /* product of the sizes of the dims inside dims[t] */
  for (int t = n - 1; t >= 0; t--) {
    const ShapeDim *x = &dims[t];
    if (x->stride != 0 || x->lo != 0 || x->hi != x->size) {
      const AluExp *idx = r == 1 ? flat : alu_binary(ALU_DIV, flat, i64(r));
      if (t > 0) idx = alu_binary(ALU_MOD, idx, i64(x->size));
      sum = add(sum, mul(idx, x->stride));
      *valid = range_valid(*valid, idx, x->lo, x->hi, x->size);
    }
    r *= x->size;
  }
  return add(sum, i64(offset));
}

/* Feeds `index`, the offset produced by views[top], down through the views below it,
 * and simplifies. On OOM both results are NULL (the error is set). */
static void lower_views(const ShapeTracker *st, int top, const AluExp *index,
                        const AluExp *valid, const AluExp **index_out,
                        const AluExp **valid_out) {
  for (int i = top - 1; i >= 0; i--) index = view_exp(&st->views[i], index, &valid);
  index = index ? alu_simplify(index) : NULL;
  valid = valid ? alu_simplify(valid) : NULL;
  *index_out = index && valid ? index : NULL;
  *valid_out = index && valid ? valid : NULL;
}

void shape_to_exp(const ShapeTracker *st, const AluExp *flat, const AluExp **index,
                  const AluExp **valid) {
  const AluExp *v = alu_const_int(JX_BOOL, 1);
  const AluExp *x = view_exp(&st->views[st->nviews - 1], flat, &v);
  lower_views(st, st->nviews - 1, x, v, index, valid);
}

void shape_to_exp_dims(const ShapeTracker *st, const AluExp *const *idx, const AluExp **index,
                       const AluExp **valid) {
  const View *top = &st->views[st->nviews - 1];
  const AluExp *x = i64(top->offset), *v = alu_const_int(JX_BOOL, 1);
  if (shape_view_empty(top)) {
    v = alu_const_int(JX_BOOL, 0);
  } else {
    for (int d = 0; d < top->ndim; d++) {
      int64_t lo, hi;
      shape_view_range(top, d, &lo, &hi);
      x = add(x, mul(idx[d], top->strides[d]));
      v = range_valid(v, idx[d], lo, hi, top->shape[d]);
    }
  }
  lower_views(st, st->nviews - 1, x, v, index, valid);
}


void shape_unflatten(const AluExp *flat, int ndim, const int64_t *shape, const AluExp **idx) {
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    const AluExp *q =
        stride == 1 ? flat : alu_binary(ALU_DIV, flat, alu_const_int(JX_INT64, stride));
    idx[d] = d == 0 ? q : alu_binary(ALU_MOD, q, alu_const_int(JX_INT64, shape[d]));
    stride *= shape[d] ? shape[d] : 1;
  }
}
