/* linalg.h -- differentiation rules of the linear-algebra primitives (transform/linalg.c),
 * entries of the tables in jvp.c and transpose.c. */
#ifndef JAXC_TRANSFORM_LINALG_H
#define JAXC_TRANSFORM_LINALG_H

#include "transform/transform.h"

/* JVP rules with several results (jvp.c's JvpRuleN): primal results y and tangents ty
 * (NULL: zero) from primals x and tangents t (NULL: zero). */
#define LINALG_JVP(name)                                                                        \
  jx_status linalg_jvp_##name(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp, \
                              int nout, jx_array **y, jx_array **ty)
LINALG_JVP(cholesky);
LINALG_JVP(triangular_solve);
LINALG_JVP(lu);
LINALG_JVP(qr);
LINALG_JVP(eigh);
LINALG_JVP(svd);
LINALG_JVP(eig);
LINALG_JVP(tridiagonal_solve);
#undef LINALG_JVP

/* triangular_solve's transpose in b (transpose.c's TransposeRule). */
bool linalg_transpose_triangular_solve(jx_array *ct, int nin, jx_array *const *x, const bool *linear,
                                       const Aval *in, const PrimParams *pp, jx_array **ct_in);

/* tridiagonal_solve's transpose in b (linear in b only). */
bool linalg_transpose_tridiagonal_solve(jx_array *ct, int nin, jx_array *const *x, const bool *linear,
                                        const Aval *in, const PrimParams *pp, jx_array **ct_in);

#endif
