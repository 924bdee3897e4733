/* np.h -- helpers shared by the jax.numpy implementations in src/lib/numpy: JAX type
 * promotion and NumPy broadcasting of operands, built only from primitives (prim.h).
 * `fn` is the public function name used in error messages ("jx_add"). All return
 * new references; on failure they return NULL/false with the sticky error set and
 * leave no references behind. */
#ifndef JAXC_LIB_NUMPY_NP_H
#define JAXC_LIB_NUMPY_NP_H

#include "jaxc.h"
#include "core/array.h"
#include "core/dtype.h"
#include "core/error.h"
#include "trace/prim.h"

/* jnp.result_type of n arrays (weak types included) -> dtype, *weak. */
jx_dtype np_result_type(int n, jx_array *const *xs, bool *weak);
/* Converts x to dtype (weak flag as given); a new reference to x if nothing changes. */
jx_array *np_convert(jx_array *x, jx_dtype dtype, bool weak);
/* Promotes n arrays to their common dtype: out[i] new references. */
bool np_promote(const char *fn, int n, jx_array *const *in, jx_array **out);
/* False + JX_ERR_DTYPE naming fn when one of in[0..n) is float0 (no operation takes one;
 * prim_bind refuses them too, naming the primitive). */
bool np_no_float0(const char *fn, int n, jx_array *const *in);
/* NumPy broadcast of n shapes; JX_ERR_SHAPE naming fn and the shapes otherwise. */
bool np_broadcast_shapes(const char *fn, int n, jx_array *const *in, int *ndim,
                         int64_t *shape);
/* Broadcasts x (NumPy rules, trailing alignment) to shape; a new ref if unchanged. */
jx_array *np_broadcast_to(const char *fn, jx_array *x, int ndim, const int64_t *shape);
/* np_broadcast_to of an operand of an operation whose operands include `like`: where x
 * is concrete and like a staging tracer (under jit), the broadcast is staged with like,
 * as JAX stages every operation under jit -- a scalar against a traced array stays a
 * broadcast_in_dim of a 0-d constant in the jaxpr (one value in the kernel), not a
 * full-size constant evaluated while tracing (jx_random_normal of n x n float32 held 25
 * bytes a sample at its peak from 326 of them). */
jx_array *np_broadcast_to_like(const char *fn, jx_array *x, int ndim, const int64_t *shape, const jx_array *like);
/* The one of in[0..n) whose tracer's trace is the highest (NULL: none is a tracer). */
const jx_array *np_top_tracer(int n, jx_array *const *in);
/* Promote then broadcast n operands together (what every NumPy ufunc does first). */
bool np_prepare(const char *fn, int n, jx_array *const *in, jx_array **out);
/* Inexact operand: bool/int inputs become the default float dtype (weakness kept). */
jx_array *np_to_inexact(jx_array *x);
/* jnp.linspace(start, stop, num) of 0-d start and stop of the real floating dtype cd
 * (num >= 1), as XLA's CPU backend computes it (creation.c). */
jx_array *np_linspace(jx_array *start, jx_array *stop, int64_t num, jx_dtype cd);
/* A 0-d array of `dtype` holding value (strong), broadcast later by the caller. */
jx_array *np_constant(double value, jx_dtype dtype);
/* lax._const(x, value), the constants inside JAX's jnp functions: a 0-d array of x's
 * dtype, weakly typed iff x is a weakly typed scalar (0-d), so an n-d weak x combined
 * with it gives a strong result (jnp.sinc of a weak float32 vector is float32, of a weak
 * scalar weak), as dtypes.is_weakly_typed_scalar decides in JAX. */
jx_array *np_lax_const(const jx_array *x, double value);
/* jnp.logaddexp (base2: logaddexp2) of complex a, b of one dtype and shape, as
 * lax_other's complex branch (elementwise.c). */
jx_array *np_logaddexp_complex(const char *fn, jx_array *a, jx_array *b, bool base2);
/* Ends the scope the caller opened, handing r (NULL allowed) to the enclosing one. */
jx_array *np_scope_return(jx_array *r);
/* True (and JX_ERR_VALUE "fn: what is NULL") when x is NULL. */
bool np_null_arg(const char *fn, const void *x, const char *what);
/* A 0-d constant of dtype broadcast (a view) to shape. */
jx_array *np_full(double value, jx_dtype dtype, int ndim, const int64_t *shape);
/* Python's slice.indices for an axis of size n (movement.c): the slice's element count
 * and, in *first, its first index; JX_SLICE_END is an omitted bound; step != 0. */
int64_t movement_slice_adjust(int64_t n, int64_t start, int64_t stop, int64_t step,
                              int64_t *first);
/* Shape as "(2,3)" for messages. */
const char *np_shape_str(char *buf, const jx_array *x);

#endif
