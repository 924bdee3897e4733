/* jvp.h -- the forward-mode (JVP) trace level, used by jx_jvp, linearize and jacfwd. */
#ifndef JAXC_TRANSFORM_JVP_H
#define JAXC_TRANSFORM_JVP_H

#include "transform/transform.h"

/* Pushes a JVP level (pop it with trace_pop). */
Trace *jvp_begin(void);
/* A JVP tracer of t with the given primal and tangent (both retained). */
jx_array *jvp_tracer(Trace *t, jx_array *primal, jx_array *tangent);
/* Primal and tangent of x at level t (borrowed); for values not of t, tangent = NULL. */
void jvp_unpack(Trace *t, jx_array *x, jx_array **primal, jx_array **tangent);
/* x itself when concrete, or the concrete primal under any number of JVP levels (JAX's
 * core.is_concrete / to_concrete_value see through JVPTracers); NULL for any other
 * tracer. Borrowed. */
jx_array *jvp_concrete_value(jx_array *x);
/* The JVP jaxpr of sub: inputs (primals, the tangents with t[i] non-NULL), outputs every
 * result's tangent (zeros instantiated), simplified; named jvp(name). NULL + error. */
Jaxpr *jvp_jaxpr(const Jaxpr *sub, jx_array *const *t);
/* True if primitive p has a JVP rule; else *absent (if non-NULL) says why, or is NULL
 * when the rule is simply missing. */
bool jvp_has_rule(Prim p, const char **absent);

#endif
