/* custom.h -- rules of the custom-derivative primitives (transform/custom.c): entries of
 * the tables in jvp.c and transpose.c (batching rules live in vmap.c, which owns the
 * batch trace). */
#ifndef JAXC_TRANSFORM_CUSTOM_H
#define JAXC_TRANSFORM_CUSTOM_H

#include "transform/transform.h"

/* JVP rules with several results (jvp.c's JvpRuleN). */
jx_status custom_jvp_custom_jvp_call(int nin, jx_array *const *x, jx_array *const *t,
                                     const PrimParams *pp, int nout, jx_array **y, jx_array **ty);
jx_status custom_jvp_custom_vjp_call(int nin, jx_array *const *x, jx_array *const *t,
                                     const PrimParams *pp, int nout, jx_array **y, jx_array **ty);
/* custom_vjp_call applied to linear values, transposed by bwd when it has no residuals
 * (transpose.c's TransposeRuleN; JX_ERR_UNSUPPORTED with residuals). */
bool custom_transpose_custom_vjp_call(jx_array *const *cts, int nin, jx_array *const *x,
                                      const bool *lin, const Aval *in, const PrimParams *pp,
                                      jx_array **out);
/* custom_lin's transpose (transpose.c's TransposeRuleN): bwd on the residuals and the
 * cotangents. */
bool custom_transpose_custom_lin(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                                 const Aval *in, const PrimParams *pp, jx_array **out);
/* Checks that the values a user rule gave have the wanted avals (weak types aside);
 * false with JX_ERR_SHAPE / JX_ERR_DTYPE naming `what`, the index, both types and the
 * rule. */
bool custom_check_types(const char *what, const char *rule, const char *kind, int n,
                        jx_array *const *got, const Aval *want, const char *want_what);

#endif
