/* transpose.h -- reverse mode: transposing linear jaxprs. */
#ifndef JAXC_TRANSFORM_TRANSPOSE_H
#define JAXC_TRANSFORM_TRANSPOSE_H

#include "transform/transform.h"

/* Given cotangents of j's outputs, computes cotangents of its inputs (new references,
 * zeros where an input does not reach an output). j must be linear in its inputs. */
jx_status transpose_jaxpr(const Jaxpr *j, jx_array *const *ct_out, jx_array **ct_in);
/* transpose_jaxpr where only the inputs with linear[i] are linear: the others are
 * known[i] (values of lower levels). ct_in[i] is set for the linear inputs, NULL for
 * the others. */
jx_status transpose_partial(const Jaxpr *j, const bool *linear, jx_array *const *known,
                            jx_array *const *ct_out, jx_array **ct_in);
/* True if p has a transpose rule; else *absent says why. */
bool transpose_has_rule(Prim p, const char **absent);

#endif
