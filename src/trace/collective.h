/* collective.h -- the named mesh axes a thread runs under (jx_shard_map / jx_pmap give
 * each device thread one frame per mesh axis) and the communicators that carry the
 * collectives between the devices of an axis (trace/collective.c). */
#ifndef JAXC_TRACE_COLLECTIVE_H
#define JAXC_TRACE_COLLECTIVE_H

#include "trace/sharding.h"
#include "trace/trace.h"

/* A communicator among `size` participants (the devices along one mesh axis that share
 * their other coordinates). The engine between cpu devices of one process is shared
 * memory: participants post host pointers, meet at a barrier, read each other's data
 * and meet again before the data may go. */
typedef struct Comm Comm;
/* A communicator for n participants (NULL + JX_ERR_OOM). */
Comm *comm_new(int n);
/* A communicator whose participants are the processes of the MPI job (one device each;
 * mpi_init first). Collectives over it are MPI_Allgather calls; abort is a no-op there. */
Comm *comm_new_mpi(void);
void comm_free(Comm *c);
/* Wakes every participant waiting in c with JX_ERR_VALUE ("another device failed"), and
 * every later call too: a device whose function failed never reaches the next barrier. */
void comm_abort(Comm *c);

/* One named axis of the thread's current mesh: its size, this device's index along it,
 * the communicator of its group, and the device (results of collectives live there). */
typedef struct AxisFrame {
  const char *name;
  int size, index;
  Comm *comm;
  const Backend *device;
  /* While a transformed shard_map's body is traced or transformed (comm NULL): axis_index
   * has no operand to be staged by, so prim_bind records it with stage() in the innermost
   * jaxpr being staged (transform/stage.c's stage_bind_nullary_top); NULL: none. */
  jx_array *(*stage)(Prim p, const PrimParams *pp);
} AxisFrame;

/* The thread's axis environment: n frames (n <= JX_MESH_MAX_AXES), replacing any that
 * was set, or none (n = 0). jx_shard_map sets it in each device thread. */
void collective_set_axes(int n, const AxisFrame *frames);
/* Copies the thread's axis environment into frames (JX_MESH_MAX_AXES of room); returns
 * how many frames it has. */
int collective_get_axes(AxisFrame *frames);
/* The frame of axis `name` for `fn`'s messages: NULL + JX_ERR_VALUE ("unbound axis name",
 * as JAX's NameError) when the thread runs under no such axis. */
const AxisFrame *collective_axis(const char *fn, const char *name);

/* Binds the collectives (primitives.def) on the axis `name` (interned here). */
jx_array *prim_psum(jx_array *x, const char *name);
jx_array *prim_pmax(jx_array *x, const char *name);
jx_array *prim_pmin(jx_array *x, const char *name);
jx_array *prim_all_gather(jx_array *x, const char *name, int axis, bool tiled);
jx_array *prim_psum_scatter(jx_array *x, const char *name, int axis, bool tiled);
/* perm: npairs (source, destination) pairs of indices along the axis. */
jx_array *prim_ppermute(jx_array *x, const char *name, int npairs, const int (*perm)[2]);
jx_array *prim_all_to_all(jx_array *x, const char *name, int split_axis, int concat_axis,
                          bool tiled);
jx_array *prim_axis_index(const char *name);
/* Binds collective p with the params of an existing equation (transformation rules). */
jx_array *prim_collective_like(Prim p, jx_array *x, const PrimParams *pp);

/* axis_index bound where its axis has no communicator but a stage hook (a shard_map's
 * body being traced or transformed): the staged result in *out, true; false otherwise. */
bool collective_stage_nullary(Prim p, const PrimParams *pp, jx_array **out);

/* Abstract evaluation and eager evaluation of the collectives. */
bool collective_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
jx_status collective_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                          jx_array **out);

#endif
