/* shape.h (ir) -- the shape tracker's lowering of views to kernel-IR index
 * expressions (the tracker itself is core/shape.h). */
#ifndef JAXC_IR_SHAPE_H
#define JAXC_IR_SHAPE_H

#include "core/shape.h"
#include "ir/alu.h"

/* Index expressions: given `flat`, an int64 AluExp indexing the tracker's logical shape
 * in C order, sets *index to the element index into the buffer and *valid to a bool
 * AluExp that is false where the element lies in padding (constant true when the
 * tracker has no masks). Both simplified. Where valid is false the index is meaningless
 * (possibly outside the buffer), so a load must be guarded by valid. Both NULL on OOM. */
void shape_to_exp(const ShapeTracker *st, const AluExp *flat, const AluExp **index,
                  const AluExp **valid);
/* Same, from one int64 index expression per logical dim. */
void shape_to_exp_dims(const ShapeTracker *st, const AluExp *const *idx, const AluExp **index,
                       const AluExp **valid);

/* Splits a flat C-order int64 index over shape into one index expression per dim
 * (div/mod by suffix products; the outermost dim gets no mod). */
void shape_unflatten(const AluExp *flat, int ndim, const int64_t *shape, const AluExp **idx);

#endif
