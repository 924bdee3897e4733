/* shard_map.h -- the transformation rules of the shard_map primitive (JVP, batching,
 * transposition; transform/shard_map.c), referenced by each transformation's table. */
#ifndef JAXC_TRANSFORM_SHARD_MAP_H
#define JAXC_TRANSFORM_SHARD_MAP_H

#include "transform/transform.h"

/* JVP rule (jvp.c's JvpRuleN): primal results y and tangents ty (NULL: zero). */
jx_status shard_map_jvp(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                        int nout, jx_array **y, jx_array **ty);
/* Batching rule (vmap.c's BatchRule): every result batched along axis 0. */
int shard_map_batch(Prim p, int nin, jx_array *const *x, const int *bd, const PrimParams *pp,
                    jx_array **y);
/* Transpose rule (transpose.c's TransposeRuleN): cotangents of the linear operands. */
bool shard_map_transpose(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                         const Aval *in, const PrimParams *pp, jx_array **ct_in);

#endif
