/* sharding.h -- meshes, NamedShardings and sharded arrays (jaxc/sharding.h), shared by
 * the trace layer's shard_map and collectives. */
#ifndef JAXC_TRACE_SHARDING_H
#define JAXC_TRACE_SHARDING_H

#include "backend/backend.h"
#include "core/array.h"
#include "trace/prim.h"

#define MESH_NAME_MAX 32

struct jx_mesh {
  int64_t refcount;
  int ndim;
  int64_t shape[JX_MESH_MAX_AXES];
  char names[JX_MESH_MAX_AXES][MESH_NAME_MAX];
  int64_t size;                                   /* prod(shape) */
  const Backend *devices[BACKEND_MAX_CPU_DEVICES]; /* C order over the grid */
};

/* A PartitionSpec over mesh: entry d splits dimension d over mesh axes axes[d][0 ..
 * naxes[d]) (major first); dimensions past nspec are replicated. */
struct jx_sharding {
  int64_t refcount;
  jx_mesh *mesh;
  int nspec;
  int naxes[JX_MAX_NDIM];
  int axes[JX_MAX_NDIM][JX_MESH_MAX_AXES];
  char text[JX_MAX_NDIM * (JX_MESH_MAX_AXES * (MESH_NAME_MAX + 4) + 8) + 32]; /* as JAX prints it */
};

/* The index of the mesh axis named `name`, -1 if none. */
int mesh_axis_index(const jx_mesh *m, const char *name);
/* Grid coordinates (m->ndim of them) of the device at flat index `flat`. */
void mesh_coords(const jx_mesh *m, int64_t flat, int64_t *coords);
/* "'x', 'y'" into buf (for messages). */
const char *mesh_axes_text(const jx_mesh *m, char *buf, size_t n);

/* True if a and b lay arrays out alike: the same mesh, the same axes per dimension
 * (missing trailing entries are None). */
bool sharding_equal(const jx_sharding *a, const jx_sharding *b);
/* The number of blocks dimension dim is split into. */
int64_t sharding_pieces(const jx_sharding *s, int dim);
/* false + JX_ERR_SHAPE naming fn when s does not fit an array of this shape (more spec
 * entries than dims, a dim not divisible by its number of blocks). */
bool sharding_check(const char *fn, const jx_sharding *s, int ndim, const int64_t *shape);
/* The block [start, stop) of the whole array (shape) that mesh device `dev` holds. */
void sharding_block(const jx_sharding *s, int64_t dev, int ndim, const int64_t *shape,
                    int64_t *start, int64_t *stop);
/* True for the first copy of each block: the device's coordinates along every mesh axis
 * the spec does not name are 0. */
bool sharding_is_primary(const jx_sharding *s, int64_t dev);
/* a's blocks as new references shards[0 .. mesh size), each on its device (a's own
 * shards when a already has this sharding). On failure none is left. */
jx_status sharding_split(const char *fn, jx_array *a, jx_sharding *s, jx_array **shards);
/* A sharded array of the given whole shape from its blocks (one per mesh device; the
 * primary copies are gathered into the whole value on the mesh's first device). The
 * shards are retained, not consumed. NULL on failure. */
jx_array *sharding_assemble(const char *fn, jx_sharding *s, jx_array *const *shards, int ndim,
                            const int64_t *shape);
/* Shard i of a sharded array (borrowed), NULL for others. */
jx_array *sharding_shard(const jx_array *a, int i);
/* s with a replicated dimension inserted in front (P(None, *s)): a new reference. */
jx_sharding *sharding_prepend_none(const jx_sharding *s);

/* ------------------------------------------- shard_map (trace/shard_map.c) */
/* The shard_map primitive's parameters (PrimParams.shard): the mesh and one
 * PartitionSpec per operand and result. Interned: equal specs (same mesh contents, same
 * axes per dimension) share one object that lives as long as the process, so equations
 * compare and hash them by address. */
typedef struct ShardSpec {
  jx_mesh *mesh;
  int nin, nout;
  jx_sharding **in, **out; /* references held */
} ShardSpec;
/* The interned spec (NULL + JX_ERR_OOM). The shardings are borrowed. */
const ShardSpec *shard_spec_intern(jx_mesh *mesh, int nin, jx_sharding *const *in, int nout,
                                   jx_sharding *const *out);
/* The block aval of a whole aval laid out by s (false + JX_ERR_SHAPE naming fn when s
 * does not fit), and the whole aval of a block. */
bool shard_block_aval(const char *fn, const jx_sharding *s, const Aval *whole, Aval *block);
bool shard_whole_aval(const char *fn, const jx_sharding *s, const Aval *block, Aval *whole);
/* Runs f (sp->nin inputs, sp->nout outputs) once per device of sp's mesh, each in its own
 * thread on its blocks of in[] with the mesh's axes bound, and assembles out[] (new
 * references) by sp->out. Errors name `fn` and f. */
jx_status shard_map_run(const char *fn, const ShardSpec *sp, jx_fn *f, jx_array *const *in,
                        jx_array **out);
/* Binds the shard_map primitive: body (a closed jaxpr over the blocks) over the mesh. */
jx_status prim_shard_map(const ShardSpec *sp, struct Jaxpr *body, int nin, jx_array *const *in,
                         jx_array **out);
bool shard_map_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
jx_status shard_map_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                         jx_array **out);

#endif
