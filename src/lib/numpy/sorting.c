/* sorting.c -- jnp.sort and jnp.argsort on the sort/argsort primitives: JAX's total
 * order (-0.0 == 0.0, NaN of either sign after +inf), stable, with JAX's descending
 * conventions (sort: reverse of the ascending sort, so NaNs come first; argsort: ties
 * still in input order). */
#include "lib/numpy/np.h"

/* Flattens for axis == JX_AXIS_NONE; normalizes the axis otherwise. */
static jx_array *sort_operand(const char *fn, jx_array *x, int *axis) {
  if (*axis == JX_AXIS_NONE) {
    int64_t n = shape_numel(x->ndim, x->shape);
    *axis = 0;
    return prim_reshape(x, 1, &n);
  }
  if (x->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: cannot sort a 0-d array along axis %d", fn, *axis);
    return NULL;
  }
  if (!array_normalize_axis(fn, axis, x->ndim)) return NULL;
  return jx_ref(x);
}

jx_array *jx_sort(jx_array *x, int axis, bool descending) {
  if (!x) return NULL;
  jx_scope_begin();
  jx_array *a = sort_operand("jx_sort", x, &axis), *r = a ? prim_sort(a, axis) : NULL;
  if (r && descending) {
    bool mask[JX_MAX_NDIM] = {false};
    mask[axis] = true;
    r = prim_rev(r, mask);
  }
  jx_scope_end(r ? 1 : 0, &r);
  return r;
}

jx_array *jx_argsort(jx_array *x, int axis, bool descending) {
  if (!x) return NULL;
  jx_scope_begin();
  jx_array *a = sort_operand("jx_argsort", x, &axis), *r = NULL;
  if (a) {
    /* int32 positions with x64 off, the default int (int64) with it on, as JAX */
    jx_dtype it = dtype_default_int();
    bool mask[JX_MAX_NDIM] = {false};
    mask[axis] = true;
    if (!descending) {
      r = prim_argsort(a, axis, it);
    } else {
      /* stable descending: sort the reversed array, map positions back, reverse */
      jx_array *pos = prim_argsort(prim_rev(a, mask), axis, it);
      jx_array *last = pos ? np_constant((double)(a->shape[axis] - 1), it) : NULL;
      jx_array *lb = last ? np_broadcast_to("jx_argsort", last, pos->ndim, pos->shape) : NULL;
      r = lb ? prim_rev(prim_binary(PRIM_sub, lb, pos), mask) : NULL;
    }
  }
  jx_scope_end(r ? 1 : 0, &r);
  return r;
}
