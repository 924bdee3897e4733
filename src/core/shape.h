/* shape.h -- the shape tracker: how an array's logical shape maps onto its buffer.
 * A ShapeTracker is a stack of Views (tinygrad's design). Each View maps an index over
 * its shape to a linear offset = offset + sum(idx[d] * strides[d]), valid only where
 * mask_lo[d] <= idx[d] < mask_hi[d] (padding); that offset, read as a flat C-order index
 * over the shape of the view below it, feeds the next view down. views[nviews-1] is the
 * outermost (its shape is the array's shape); views[0] addresses the buffer.
 * Movement ops return new trackers and never copy data; they merge into the top view
 * when they can and push a new view only when they must (a reshape of a non-mergeable
 * view). Trackers are immutable values owned by the caller (shape_free). Their lowering
 * to kernel-IR index expressions is ir/shape.h. */
#ifndef JAXC_CORE_SHAPE_H
#define JAXC_CORE_SHAPE_H

#include <stdbool.h>

#include "jaxc.h"

typedef struct View {
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  int64_t strides[JX_MAX_NDIM]; /* 0 for broadcast dims; negative for flips */
  int64_t offset;
  bool masked;                  /* false: every index valid */
  int64_t mask_lo[JX_MAX_NDIM];
  int64_t mask_hi[JX_MAX_NDIM];
} View;

typedef struct ShapeTracker {
  int nviews;
  View views[]; /* nviews entries */
} ShapeTracker;

/* Contiguous C-order tracker. NULL (JX_ERR_OOM) on allocation failure. */
ShapeTracker *shape_contiguous(int ndim, const int64_t *shape);
ShapeTracker *shape_copy(const ShapeTracker *st);
void shape_free(ShapeTracker *st);
int shape_ndim(const ShapeTracker *st);
const int64_t *shape_dims(const ShapeTracker *st);
/* Product of dims (the caller has checked it fits int64). */
int64_t shape_numel(int ndim, const int64_t *shape);
/* Product of dims, or -1 if any dim is negative or the product overflows int64. */
int64_t shape_numel_checked(int ndim, const int64_t *shape);
/* True if the tracker is a single unmasked view with C-order strides and offset 0. */
bool shape_is_contiguous(const ShapeTracker *st);
/* Structural equality of two trackers (views are canonical, so equal views map every
 * index the same way); usable in cache keys. */
bool shape_equal(const ShapeTracker *a, const ShapeTracker *b);

/* Movement. Arguments are validated by the caller (sizes match, perm is a
 * permutation, ranges within bounds); these only fail on OOM (NULL). */
ShapeTracker *shape_reshape(const ShapeTracker *st, int ndim, const int64_t *shape);
ShapeTracker *shape_permute(const ShapeTracker *st, const int *perm);
/* Same ndim; every dim either equal or 1 in st, broadcast (stride 0) to shape. */
ShapeTracker *shape_expand(const ShapeTracker *st, const int64_t *shape);
/* Adds lo[d] elements before and hi[d] after each dim (lo, hi >= 0), masked invalid. */
ShapeTracker *shape_pad(const ShapeTracker *st, const int64_t *lo, const int64_t *hi);
/* Keeps [start[d], stop[d]) of each dim (0 <= start <= stop <= dim). */
ShapeTracker *shape_shrink(const ShapeTracker *st, const int64_t *start, const int64_t *stop);
/* Takes every step[d]-th element of each dim (step != 0); a negative step walks the dim
 * backwards starting from its last element (so step -1 is a flip). */
ShapeTracker *shape_stride(const ShapeTracker *st, const int64_t *step);

/* For the lowering of views to index expressions (src/ir/shape.c). */
/* One dim, or a run of dims merged into one, seen through its valid range: for index j
 * in [lo, hi) the run adds j*stride to the offset. */
typedef struct ShapeDim {
  int64_t size, stride, lo, hi;
} ShapeDim;
/* Mask range [lo, hi) of dim d of v, the whole dim when unmasked. */
void shape_view_range(const View *v, int d, int64_t *lo, int64_t *hi);
/* True if v's mask leaves no valid element. */
bool shape_view_empty(const View *v);
/* Merges `in` (inner) into *out (outer) when the pair is one dim with a single valid
 * range, adding to *extra the offset correction of the merged stride (shape.c). */
bool shape_dim_merge(ShapeDim *out, const ShapeDim *in, int64_t *extra);

/* Debug text, e.g. "View(shape=(2,3), strides=(3,1), offset=0, mask=None)". malloc'd. */
char *shape_print(const ShapeTracker *st);

#endif
