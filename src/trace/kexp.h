/* kexp.h -- kernel expressions shared by the eager eval rules (trace/impl.c) and jit's
 * lowering (jit/lower.c): the same primitive becomes the same AluExp whether it runs
 * alone or fused. Operands are read through a caller-supplied loader, so eager reads
 * buffers through views and jit reads buffers or inlines producers. */
#ifndef JAXC_TRACE_KEXP_H
#define JAXC_TRACE_KEXP_H

#include "ir/shape.h"
#include "ir/alu.h"
#include "trace/prim.h"

/* The value of operand `i` at per-dim indices idx (of that operand's shape). */
typedef const AluExp *(*KexpLoad)(void *ctx, int i, const AluExp *const *idx);

/* The index into the buffer under view st at per-dim indices idx, forced to 0 where the
 * element lies in padding (so no backend reads out of bounds), and that validity. */
void kexp_view_index(const ShapeTracker *st, const AluExp *const *idx, const AluExp **index,
                     const AluExp **valid);
/* where(valid, value, 0 of value's dtype): reads in padding give zero. */
const AluExp *kexp_masked(const AluExp *valid, const AluExp *value);

/* A binary or compare primitive on operand values a, b. pow's integer exponent (with a
 * floating base) is converted to the base's dtype first, as JAX's lowering does. */
const AluExp *kexp_binary(Prim p, const AluExp *a, const AluExp *b);

/* lax.concatenate of n operands along axis (lens[i] their sizes there) at output
 * indices idx: where(pos >= offset_i, x_i[pos - offset_i], <earlier operands>), each
 * load index kept inside its operand. */
const AluExp *kexp_concatenate(int n, const int64_t *lens, int axis, int ndim,
                               const AluExp *const *idx, KexpLoad load, void *ctx);
/* The gather primitive (operand 0: x of rank xndim with n = x.shape[axis]; operand 1:
 * indices of rank indndim) at output indices idx: x at the clamped index. */
const AluExp *kexp_gather(int xndim, int64_t n, int indndim, int axis, const AluExp *const *idx,
                          KexpLoad load, void *ctx);
/* dot_general(x, y) (operands 0 and 1 of equal dtype) as one reduction kernel: sets
 * k's size, dtype, exp and reduction for the result of `size` elements of dtype (shape
 * batch, lhs free, rhs free). float16/bfloat16 accumulate in float32 (as XLA); bool dots
 * are an or of ands. k->nargs is left to the caller. */
void kexp_dot(const PrimParams *pp, const Aval *x, const Aval *y, jx_dtype dtype, int ndim,
              const int64_t *shape, KexpLoad load, void *ctx, Kernel *k);
/* True when padding with `value` needs kexp_pad_fill: a view's padding reads +0.0. */
bool kexp_pad_needs_fill(double value);
/* lax.pad with a padding value other than +0: `padded` (the zero-padded view's value at
 * idx) where inside the operand (lo[d] <= idx[d] < lo[d] + len[d]), value elsewhere. */
const AluExp *kexp_pad_fill(const AluExp *padded, int ndim, const int64_t *lo, const int64_t *len,
                            double value, jx_dtype dtype, const AluExp *const *idx);

/* The value of an elementwise primitive p (kinds UNARY, UNARY_PRED, BINARY, COMPARE,
 * SELECT, CONVERT, BITCAST) on operand values v[]: the one rule eager eval and jit
 * lowering share. NULL for another kind. */
const AluExp *kexp_elementwise(Prim p, const PrimParams *pp, const AluExp *const *v);
/* The routine running primitive p (sort, scatter_add; PRIM_KIND_ROUTINE) on nin operands
 * of avals in[] with nout results, in r: the one primitive -> routine mapping eager eval
 * and jit lowering share. routine_check's status (a too-large operand count is
 * JX_ERR_UNSUPPORTED). */
jx_status kexp_routine(Prim p, const PrimParams *pp, int nin, const Aval *in, int nout, Routine *r);

#endif
