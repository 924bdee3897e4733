/* loops.h -- the transformation rules of the loop primitives (while, scan): JVP,
 * batching and transposition, each referenced by its transformation's rule table. */
#ifndef JAXC_TRANSFORM_LOOPS_H
#define JAXC_TRANSFORM_LOOPS_H

#include "transform/transform.h"

/* JVP rules (jvp.c's JvpRuleN): primal results y and tangents ty (NULL: zero). */
jx_status loops_jvp_while(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                          int nout, jx_array **y, jx_array **ty);
jx_status loops_jvp_scan(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                         int nout, jx_array **y, jx_array **ty);
/* Batching rules (vmap.c's BatchRule): every result batched along the returned axis. */
int loops_batch_while(Prim p, int nin, jx_array *const *x, const int *bd, const PrimParams *pp,
                      jx_array **y);
int loops_batch_scan(Prim p, int nin, jx_array *const *x, const int *bd, const PrimParams *pp,
                     jx_array **y);
/* Transpose rules (transpose.c's TransposeRuleN): cotangents of the linear operands. */
bool loops_transpose_while(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                           const Aval *in, const PrimParams *pp, jx_array **ct_in);
bool loops_transpose_scan(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                          const Aval *in, const PrimParams *pp, jx_array **ct_in);
/* jit's pass over the scans of j (loops_hoist.c): each product in a scan body that
 * reads only xs and consts is computed for every trip before the loop (one batched
 * product) and read by the body as one more x. Returns j, or a new jaxpr replacing it
 * (j released); never fails (on any error j is kept as it was). */
Jaxpr *loops_hoist_scans(Jaxpr *j);

#endif
