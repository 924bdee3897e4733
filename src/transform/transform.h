/* transform.h -- shared helpers of the transformations (src/transform): constants
 * built from primitives, and the staging trace that records Jaxprs. */
#ifndef JAXC_TRANSFORM_TRANSFORM_H
#define JAXC_TRANSFORM_TRANSFORM_H

#include "core/array.h"
#include "jaxpr/jaxpr.h"
#include "trace/trace.h"

/* An array of `aval` filled with value (a broadcast view of one scalar: no copy).
 * Weak iff aval->weak. */
jx_array *tx_full(const Aval *aval, double value);
jx_array *tx_zeros(const Aval *aval);
/* tx_full with x's aval. */
jx_array *tx_full_like(jx_array *x, double value);

/* take_along_axis(x, perm, axis) for perm of x's shape with entries in [0, n): built
 * from a gather on the flattened array (used by sort's JVP). */
jx_array *tx_take_along(jx_array *x, jx_array *perm, int axis);

/* Validates f and argnums (NULL: {0}; negative count from the end; no repeats) for the
 * differentiating transformation `fn` and returns a malloc'd normalized copy of
 * *nargnums entries; NULL with JX_ERR_VALUE naming fn otherwise. */
int *tx_argnums(const char *fn, jx_fn *f, int *nargnums, const int *argnums);

/* The staging trace: records every primitive applied to its tracers into a Jaxpr.
 * Values from lower levels become constants of the jaxpr (JAX's closed-over consts). */
Trace *stage_begin(void);
/* A primitive without operands (iota) recorded in the jaxpr that `like` is staged into,
 * when `like` is a tracer of a staging trace (JAX stages every primitive under jit;
 * jaxc runs operand-less ones eagerly, which would make an iota of a jitted argmax a
 * constant read from memory). NULL otherwise (the caller binds it as usual). */
jx_array *stage_bind_nullary(const jx_array *like, Prim p, const PrimParams *pp);
/* Primitive p (one output, at most 4 operands) recorded in the jaxpr that `like` is staged
 * into, whatever its operands are (constants become the jaxpr's): a broadcast of a
 * scalar constant stays a broadcast there rather than a materialized array. NULL when
 * `like` is not a staging tracer (the caller binds p as usual). */
jx_array *stage_bind_like(const jx_array *like, Prim p, int nin, jx_array *const *in, const PrimParams *pp);
/* A primitive without operands recorded in the innermost jaxpr this thread is staging
 * (axis_index inside a transformed shard_map's body: trace/collective.h); NULL if none. */
jx_array *stage_bind_nullary_top(Prim p, const PrimParams *pp);
/* A new input of the jaxpr being staged. */
jx_array *stage_new_input(Trace *t, const Aval *aval);
/* Ends staging: outs become the outputs (non-tracers become constants), pops t and
 * returns the jaxpr (NULL on error). */
Jaxpr *stage_end(Trace *t, int nout, jx_array *const *outs);
/* f traced on abstract inputs of in[0 .. jx_fn_nin(f))'s types into a closed jaxpr
 * named after f and simplified, for the library call `fn` (lax.cond's branches,
 * custom_jvp/custom_vjp/checkpoint's function). A jaxpr closing over a tracer of an
 * enclosing transformation is refused with JX_ERR_UNSUPPORTED, telling the user to pass
 * that value as an `noun` ("operand", "argument") instead. NULL with the error set. */
Jaxpr *stage_trace_closed(const char *fn, jx_fn *f, jx_array *const *in, const char *noun);
/* stage_trace_closed with JAX's closure conversion instead of the refusal: the values f
 * closes over that enclosing transformations trace become the jaxpr's leading inputs,
 * *consts[0 .. *nconsts) (references held; stage_consts_free), so the caller binds its
 * primitive on (consts..., in...) and every transformation sees them (jax.checkpoint,
 * lax.cond). Constants that are not tracers stay constants. NULL with the error set. */
Jaxpr *stage_trace_closure(const char *fn, jx_fn *f, jx_array *const *in, int *nconsts, jx_array ***consts);
/* Moves j's constants that are tracers to the front of its inputs (in the order of its
 * constvars): *consts[0 .. *nconsts) receives them with the jaxpr's references (NULL and
 * 0 when there are none). false on OOM. */
bool stage_hoist_tracer_consts(const char *fn, Jaxpr *j, int *nconsts, jx_array ***consts);
/* Drops the references of consts[0 .. n) and frees the array. */
void stage_consts_free(int n, jx_array **consts);

/* sub batched (vmap.c): staged from inputs of the batched avals (bd[i] their batch
 * axes, JX_NOT_MAPPED: unbatched), every result batched along axis 0 with `size`
 * entries; named vmap(name). NULL with the error set on failure. */
Jaxpr *vmap_jaxpr(const Jaxpr *sub, const Aval *avals, const int *bd, int64_t size);

/* True if primitive p has a batching rule; else *absent says why (vmap.c). */
bool vmap_has_rule(Prim p, const char **absent);

#endif
