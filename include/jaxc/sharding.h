/* jaxc/sharding.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * Several devices: jax.sharding's Mesh, NamedSharding and PartitionSpec, and arrays whose
 * shards live on several devices (src/trace/sharding.c). On the CPU a process has
 * JAXC_CPU_DEVICES devices ("cpu", "cpu:1", ...; jx_config_cpu_devices), XLA's
 * --xla_force_host_platform_device_count. */
#ifndef JAXC_SHARDING_H
#define JAXC_SHARDING_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/sharding.h>"
#endif

/* A logical grid of devices with named axes (jax.sharding.Mesh). Refcounted. */
typedef struct jx_mesh jx_mesh;
/* How an array is laid out over a mesh (jax.sharding.NamedSharding). Refcounted. */
typedef struct jx_sharding jx_sharding;

/* Most axes of a mesh. */
#define JX_MESH_MAX_AXES 8

/* Sets the number of cpu devices of the process (1 .. 64): XLA's
 * --xla_force_host_platform_device_count, also read from JAXC_CPU_DEVICES. Device 0 is
 * "cpu" (also "cpu:0"), the others "cpu:1" ... They share the kernel caches and the
 * thread pool; each array lives on one of them. The count is fixed the first time devices
 * are used (jx_devices, jx_device_count, a "cpu:N" name, a mesh): JX_ERR_VALUE for a
 * count out of range, or a different count after that. */
jx_status jx_config_cpu_devices(int n);
/* jax.device_count(backend): the number of devices of a platform ("cpu" counts every
 * cpu device, "interp" and "cuda" 1 where they run here, 0 where not or for an unknown
 * name); NULL: the default device's platform. */
int jx_device_count(const char *platform);

/* jax.sharding.Mesh(devices.reshape(shape), axis_names): a grid of ndim (1 ..
 * JX_MESH_MAX_AXES) axes, shape[i] >= 1 devices along axis i, named axis_names[i]
 * (distinct identifiers: a letter or '_' then letters, digits, '_'). devices: the
 * prod(shape) device names in C order over the grid (each once); NULL takes the first
 * prod(shape) cpu devices (jax.make_mesh). Errors (NULL): JX_ERR_SHAPE for a bad ndim,
 * a size < 1, or more devices than the process has (the message says how to get more);
 * JX_ERR_VALUE for a missing, repeated or malformed axis name, or a device listed twice;
 * JX_ERR_DEVICE for an unknown or unavailable device. Free with jx_mesh_free. */
jx_mesh *jx_mesh_new(int ndim, const int64_t *shape, const char *const *axis_names,
                     const char *const *devices);
/* Adds a reference to m and returns it (NULL for NULL). */
jx_mesh *jx_mesh_ref(jx_mesh *m);
/* Drops a reference (NULL is fine). */
void jx_mesh_free(jx_mesh *m);
/* mesh.devices.ndim, and mesh.shape[axis]: the size of a named axis (-1 if the mesh has
 * no such axis); mesh.devices.size. */
int jx_mesh_ndim(const jx_mesh *m);
int64_t jx_mesh_axis_size(const jx_mesh *m, const char *axis_name);
int64_t jx_mesh_size(const jx_mesh *m);
/* mesh.axis_names[i] (NULL out of range), and the name of the device at flat index i of
 * the grid (C order; NULL out of range). Owned by the mesh. */
const char *jx_mesh_axis_name(const jx_mesh *m, int i);
const char *jx_mesh_device(const jx_mesh *m, int64_t i);

/* NamedSharding(mesh, PartitionSpec(...)) with the spec written as text, one entry per
 * array dimension from the first, separated by commas: `None` (replicated along it), an
 * axis name (split over that mesh axis), or a parenthesized tuple of axis names
 * `(x, y)` (split over both, x major). Dimensions past the spec are replicated, and so is
 * the array along every mesh axis the spec does not name; "" is P(). Examples: "batch",
 * "None, model", "(data, model), None". Errors (NULL): JX_ERR_VALUE for a malformed spec,
 * an axis the mesh does not have (the message lists the mesh's axes), or an axis used
 * twice (JAX's DuplicateSpecError); NULL mesh or spec: JX_ERR_VALUE. The sharding holds a
 * reference to the mesh. Free with jx_sharding_free. */
jx_sharding *jx_named_sharding(jx_mesh *mesh, const char *spec);
/* Adds a reference (NULL for NULL) / drops one (NULL is fine). */
jx_sharding *jx_sharding_ref(jx_sharding *s);
void jx_sharding_free(jx_sharding *s);
/* The sharding's mesh (borrowed: valid while s is), and its spec as JAX prints it
 * ("P('x', None)"; owned by s). */
jx_mesh *jx_sharding_mesh(const jx_sharding *s);
const char *jx_sharding_spec(const jx_sharding *s);

/* jax.device_put(a, NamedSharding): a sharded copy of `a`. Each device of the mesh holds
 * its shard (a.addressable_shards): along a dimension split over axes of total size n,
 * device with grid coordinates c holds the block c (mixed radix over the spec's axes) of
 * dim/n elements; along mesh axes the spec does not name, devices hold equal copies.
 * The result also keeps the whole value on the mesh's first device, where ordinary
 * operations on it run (committed there; their results are unsharded arrays) -- JAX
 * partitions those operations over the shards (GSPMD) instead; jaxc partitions work only
 * inside jx_shard_map / jx_pmap. jx_read and jx_device_put(x, device) read the whole
 * value back. Errors (NULL): JX_ERR_SHAPE when the spec has more entries than `a` has
 * dimensions, or a dimension is not divisible by its number of shards (JAX's "global
 * size of its dimension 0 should be divisible by 4"); JX_ERR_VALUE for a tracer (a
 * transformation's abstract value cannot be placed). NULL for NULL arguments. */
jx_array *jx_device_put_sharded(jx_array *a, jx_sharding *s);
/* a.sharding: the sharding of a sharded array (borrowed: valid while a is), NULL for an
 * array on one device (and for NULL). */
jx_sharding *jx_sharding_of(const jx_array *a);
/* len(a.addressable_shards): the number of shards (the mesh's size) of a sharded array,
 * 1 for an array on one device, 0 for NULL. */
int jx_num_shards(const jx_array *a);
/* a.addressable_shards[i].data: shard i (the shard on mesh device i, C order over the
 * grid), a new reference on that device; for an array on one device, i = 0 gives `a`
 * itself. JX_ERR_VALUE for i out of range (NULL). */
jx_array *jx_shard(jx_array *a, int i);

/* jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=..., check_vma=False): a function
 * that runs f once per device of the mesh, each call on that device's blocks of the inputs
 * (in_specs[i]: input i's PartitionSpec text, as jx_named_sharding; NULL or "" = P(),
 * every device gets the whole input), in a thread of its own, with the mesh's axis names
 * bound for the collectives (jx_lax_psum, ...). Output o of every device is one block of a
 * sharded result laid out by out_specs[o]: its shape is the block's times the number of
 * blocks along each spec'd dimension; along mesh axes out_specs[o] does not name, the
 * devices' values are taken to be equal and the first device's copy is the value (JAX
 * checks this with check_vma; jaxc does not). Inputs already sharded with an equal layout
 * are used as they are; others are split (and copied to the devices) first. Collectives
 * differentiate with JAX's rules for check_vma=False (psum's transpose is psum).
 * jit inside f works (a jaxpr holding collectives runs equation by equation). grad, jvp,
 * vmap and jit OF the shard_map work too (JAX's shard_map_p rules for check_vma=False:
 * an output replicated over mesh axes its spec does not name gets its cotangent divided
 * by their size, a replicated input's cotangent is psum'd over them): called with
 * tracers, f is traced over the blocks into a jaxpr and the shard_map primitive is bound
 * (a collective there over a value depending on no input: JX_ERR_UNSUPPORTED). Errors: NULL arguments or
 * a spec list missing (JX_ERR_VALUE), a bad spec (as jx_named_sharding) when made; when
 * called: an input whose dimensions do not divide (JX_ERR_SHAPE, as
 * jx_device_put_sharded), devices returning outputs of different shapes (JX_ERR_SHAPE),
 * and f's own errors, reported as "jx_shard_map(f) on device cpu:1: <f's message>" for
 * the first device that failed (the others stop at their next collective). The result
 * holds references to f and mesh. */
jx_fn *jx_shard_map(jx_fn *f, jx_mesh *mesh, const char *const *in_specs,
                    const char *const *out_specs);
/* jax.pmap(f, axis_name, in_axes, out_axes): f mapped over axis in_axes[i] of each
 * input (JX_NOT_MAPPED: every device gets the whole input; in_axes NULL: all 0), one
 * device per index, on the first N cpu devices (N = the mapped size), with axis_name
 * bound for the collectives; results stacked along out_axes[o] (NULL: all 0). A
 * shard_map over a one-axis mesh. Errors (JX_ERR_SHAPE): mapped axes of different sizes,
 * an axis out of range, more indices than cpu devices (JAX: "requires N devices"); no
 * mapped input: JX_ERR_VALUE. */
jx_fn *jx_pmap(jx_fn *f, const char *axis_name, const int *in_axes, const int *out_axes);

/* ------------------------------------------------- several processes (MPI) */
/* jax.distributed.initialize() for processes started by mpirun: opens Open MPI's
 * libmpi.so.40 with dlopen (jaxc builds and runs without it) and initializes MPI
 * (MPI_THREAD_MULTIPLE asked, MPI_THREAD_SERIALIZED at least). Then jx_pmap's axis spans
 * the processes: each process passes its own data with a mapped axis of size 1 (its one
 * device, as JAX's multi-process pmap takes process-local data), and the collectives
 * inside run between the processes over MPI (MPI_Allgather). A process whose function
 * fails before a collective leaves the others waiting in it, as in any MPI program (mpirun
 * ends the job when a process exits with an error). On cuda devices the collectives run
 * through NCCL (libnccl.so.2 by dlopen; one communicator over the job, bootstrapped
 * through MPI; JX_ERR_DEVICE naming the library where it is missing). Idempotent. JX_ERR_DEVICE naming what
 * is missing (the library, a symbol, the thread level) where MPI cannot run. */
jx_status jx_distributed_initialize(void);
/* jax.process_index() / jax.process_count(): this process's MPI rank and the job's size
 * (0 and 1 before jx_distributed_initialize or without MPI). */
int jx_process_index(void);
int jx_process_count(void);
/* jax.distributed.shutdown(): MPI_Finalize (MPI cannot be initialized again in the same
 * process). JX_ERR_DEVICE if MPI reports an error. */
jx_status jx_distributed_shutdown(void);

#endif
