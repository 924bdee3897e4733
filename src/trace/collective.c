/* collective.c -- lax's collectives (psum, pmax, pmin, all_gather, psum_scatter,
 * ppermute, all_to_all, axis_index) as primitives: binding, shapes, and eager evaluation
 * between the devices of a named mesh axis over the shared-memory engine (Comm). Each
 * device runs in its own thread (jx_shard_map); a collective posts the device's data, and
 * every device computes its result from all of them in the same order, so replicated
 * results are bitwise equal on every device. */
#include "trace/collective.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "backend/cuda/cuda.h"
#include "backend/mpi.h"
#include "core/shape.h"

/* ------------------------------------------------------ the shared-memory engine */

struct Comm {
  int n;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int arrived;
  uint64_t generation;
  bool aborted;
  bool mpi;  /* the participants are the processes of the MPI job, not threads */
  const void *slot[PRIM_MAX_AXIS_SIZE];
  size_t bytes[PRIM_MAX_AXIS_SIZE];
};

Comm *comm_new(int n) {
  Comm *c = calloc(1, sizeof *c);
  if (!c) {
    error_set(JX_ERR_OOM, "shard_map: out of memory");
    return NULL;
  }
  c->n = n;
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->cond, NULL);
  return c;
}

Comm *comm_new_mpi(void) {
  Comm *c = comm_new(mpi_size());
  if (c) c->mpi = true;
  return c;
}

void comm_free(Comm *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->lock);
  pthread_cond_destroy(&c->cond);
  free(c);
}

void comm_abort(Comm *c) {
  pthread_mutex_lock(&c->lock);
  c->aborted = true;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

/* Every participant waits here until all have arrived. */
static jx_status comm_barrier(Comm *c, const char *fn) {
  pthread_mutex_lock(&c->lock);
  uint64_t gen = c->generation;
  if (!c->aborted && ++c->arrived == c->n) {
    c->arrived = 0;
    c->generation++;
    pthread_cond_broadcast(&c->cond);
  }
  while (!c->aborted && c->generation == gen) pthread_cond_wait(&c->cond, &c->lock);
  bool aborted = c->aborted;
  pthread_mutex_unlock(&c->lock);
  if (aborted) {
    error_set(JX_ERR_VALUE, "%s: another device of the mesh failed before reaching this "
              "collective", fn);
    return JX_ERR_VALUE;
  }
  return JX_OK;
}

/* Every participant gives nbytes at `mine` and gets all[j] (participant j's bytes) --
 * shared memory: the posted pointers, valid until comm_release; MPI: one Allgather into
 * *owned. Participants that disagree on nbytes all fail (JX_ERR_SHAPE). */
static jx_status comm_exchange(Comm *c, const char *fn, int me, const void *mine, size_t nbytes,
                               const void **all, char **owned) {
  *owned = NULL;
  if (c->mpi) {
    uint64_t sizes[PRIM_MAX_AXIS_SIZE], mysize = nbytes;
    jx_status s = mpi_allgather(fn, &mysize, sizeof mysize, sizes);
    for (int j = 0; j < c->n && s == JX_OK; j++)
      if (sizes[j] != nbytes) {
        s = JX_ERR_SHAPE;
        error_set(s, "%s: processes disagree on the operand's size (%llu bytes on process %d, %zu "
                  "here)", fn, (unsigned long long)sizes[j], j, nbytes);
      }
    char *buf = s == JX_OK ? malloc((size_t)c->n * nbytes + 1) : NULL;
    if (s == JX_OK && !buf) {
      s = JX_ERR_OOM;
      error_set(s, "%s: out of memory", fn);
    }
    if (s == JX_OK) s = mpi_allgather(fn, mine, nbytes, buf);
    for (int j = 0; j < c->n && s == JX_OK; j++) all[j] = buf + (size_t)j * nbytes;
    if (s == JX_OK) *owned = buf;
    else free(buf);
    return s;
  }
  c->slot[me] = mine;
  c->bytes[me] = nbytes;
  jx_status s = comm_barrier(c, fn);
  for (int j = 0; j < c->n && s == JX_OK; j++) {
    all[j] = c->slot[j];
    if (c->bytes[j] != nbytes) {
      s = JX_ERR_SHAPE;
      error_set(s, "%s: devices disagree on the operand's size (%zu bytes on device %d, %zu here)",
                fn, c->bytes[j], j, nbytes);
    }
  }
  return s;
}

/* After reading the others' data: shared memory waits until every participant has read
 * (then the data may go); MPI frees its copy. */
static jx_status comm_release(Comm *c, const char *fn, char *owned) {
  free(owned);
  return c->mpi ? JX_OK : comm_barrier(c, fn);
}

/* ------------------------------------------------------------ axis environment */

static _Thread_local AxisFrame env[JX_MESH_MAX_AXES];
static _Thread_local int nenv;

void collective_set_axes(int n, const AxisFrame *frames) {
  nenv = n;
  for (int i = 0; i < n; i++) env[i] = frames[i];
}

bool collective_stage_nullary(Prim p, const PrimParams *pp, jx_array **out) {
  if (p != PRIM_axis_index || !pp->text) return false;
  for (int i = 0; i < nenv; i++)
    if (strcmp(env[i].name, pp->text) == 0 && !env[i].comm && env[i].stage)
      return (*out = env[i].stage(p, pp)) != NULL;
  return false;
}

int collective_get_axes(AxisFrame *frames) {
  for (int i = 0; i < nenv; i++) frames[i] = env[i];
  return nenv;
}

const AxisFrame *collective_axis(const char *fn, const char *name) {
  for (int i = 0; i < nenv; i++)
    if (strcmp(env[i].name, name) == 0) return &env[i];
  if (nenv == 0)
    error_set(JX_ERR_VALUE, "%s: unbound axis name: %s (collectives run inside jx_shard_map "
              "or jx_pmap)", fn, name);
  else {
    char axes[JX_MESH_MAX_AXES * (MESH_NAME_MAX + 4)] = "";
    size_t len = 0;
    for (int i = 0; i < nenv; i++)
      len += (size_t)snprintf(axes + len, sizeof axes - len, "%s'%s'", i ? ", " : "", env[i].name);
    error_set(JX_ERR_VALUE, "%s: unbound axis name: %s (the mesh's axes: %s)", fn, name, axes);
  }
  return NULL;
}

/* ----------------------------------------------------------------- binding */

static bool bind_params(const char *fn, const char *name, PrimParams *pp) {
  if (!name) {
    error_set(JX_ERR_VALUE, "%s: axis_name is NULL", fn);
    return false;
  }
  const AxisFrame *f = collective_axis(fn, name);
  if (!f) return false;
  pp->text = debug_intern(f->name); /* outlives the mesh in cached jaxprs */
  pp->length = f->size;
  return pp->text != NULL;
}

static jx_array *bind1(Prim p, jx_array *x, const PrimParams *pp) {
  return prim_bind(p, x ? 1 : 0, x ? &x : NULL, pp);
}

/* True, with JX_ERR_VALUE naming the collective unless an error is pending (a NULL
 * operand from a failed operation before), when x is NULL. */
static bool null_operand(const char *fn, const jx_array *x) {
  if (x) return false;
  if (jx_last_status() == JX_OK) error_set(JX_ERR_VALUE, "%s: the operand is NULL", fn);
  return true;
}

static jx_array *bind_simple(Prim p, const char *fn, jx_array *x, const char *name) {
  if (null_operand(fn, x)) return NULL;
  PrimParams pp = {0};
  if (!bind_params(fn, name, &pp)) return NULL;
  return bind1(p, x, &pp);
}

jx_array *prim_psum(jx_array *x, const char *name) { return bind_simple(PRIM_psum, "psum", x, name); }
jx_array *prim_pmax(jx_array *x, const char *name) { return bind_simple(PRIM_pmax, "pmax", x, name); }
jx_array *prim_pmin(jx_array *x, const char *name) { return bind_simple(PRIM_pmin, "pmin", x, name); }

jx_array *prim_all_gather(jx_array *x, const char *name, int axis, bool tiled) {
  if (null_operand("all_gather", x)) return NULL;
  PrimParams pp = {.axis = axis, .tiled = tiled};
  if (!bind_params("all_gather", name, &pp)) return NULL;
  return bind1(PRIM_all_gather, x, &pp);
}

jx_array *prim_psum_scatter(jx_array *x, const char *name, int axis, bool tiled) {
  if (null_operand("psum_scatter", x)) return NULL;
  PrimParams pp = {.axis = axis, .tiled = tiled};
  if (!bind_params("psum_scatter", name, &pp)) return NULL;
  return bind1(PRIM_psum_scatter, x, &pp);
}

jx_array *prim_ppermute(jx_array *x, const char *name, int npairs, const int (*perm)[2]) {
  if (null_operand("ppermute", x)) return NULL;
  PrimParams pp = {0};
  if (!bind_params("ppermute", name, &pp)) return NULL;
  bool dst_seen[PRIM_MAX_AXIS_SIZE] = {false};
  for (int k = 0; k < npairs; k++) {
    int s = perm[k][0], d = perm[k][1];
    if (s < 0 || s >= pp.length || d < 0 || d >= pp.length) {
      error_set(JX_ERR_VALUE, "ppermute: pair (%d, %d) is out of range for axis '%s' of size %lld",
                s, d, name, (long long)pp.length);
      return NULL;
    }
    if (pp.perm[s] || dst_seen[d]) {
      error_set(JX_ERR_VALUE, "ppermute: perm sends from device %d or to device %d twice (it must "
                "be a permutation)", s, d);
      return NULL;
    }
    pp.perm[s] = (int16_t)(d + 1);
    dst_seen[d] = true;
  }
  return bind1(PRIM_ppermute, x, &pp);
}

jx_array *prim_all_to_all(jx_array *x, const char *name, int split_axis, int concat_axis,
                          bool tiled) {
  if (null_operand("all_to_all", x)) return NULL;
  PrimParams pp = {.axis = split_axis, .axis2 = concat_axis, .tiled = tiled};
  if (!bind_params("all_to_all", name, &pp)) return NULL;
  return bind1(PRIM_all_to_all, x, &pp);
}

jx_array *prim_axis_index(const char *name) {
  PrimParams pp = {0};
  if (!bind_params("axis_index", name, &pp)) return NULL;
  return prim_bind(PRIM_axis_index, 0, NULL, &pp);
}

jx_array *prim_collective_like(Prim p, jx_array *x, const PrimParams *pp) {
  if (!x) return NULL;
  return bind1(p, x, pp);
}

/* ------------------------------------------------------------------ shapes */

static bool shape_error(Prim p, const PrimParams *pp, const Aval *x, const char *what) {
  char b[ARRAY_DESCRIBE_BUF];
  aval_text(b, sizeof b, x);
  error_set(JX_ERR_SHAPE, "%s: %s (operand %s, axis '%s' of size %lld)", prim_name(p), what, b,
            pp->text ? pp->text : "?", (long long)pp->length);
  return false;
}

bool collective_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  int64_t n = pp->length;
  if (p == PRIM_axis_index) {
    *out = (Aval){.dtype = JX_INT32, .ndim = 0};
    return true;
  }
  const Aval *x = &in[0];
  *out = *x;
  out->weak = false;
  int nd = x->ndim;
  switch (p) {
  case PRIM_psum:
  case PRIM_pmax:
  case PRIM_pmin:
  case PRIM_ppermute:
    out->weak = x->weak;
    if (x->dtype == JX_BOOL && p == PRIM_psum) {
      error_set(JX_ERR_DTYPE, "psum: bool operands are not summed (convert them first)");
      return false;
    }
    return true;
  case PRIM_all_gather:
    if (pp->axis < 0 || pp->axis > nd - (pp->tiled ? 1 : 0) || (!pp->tiled && nd + 1 > JX_MAX_NDIM))
      return shape_error(p, pp, x, "axis out of range");
    if (pp->tiled) {
      out->shape[pp->axis] *= n;
    } else {
      out->ndim = nd + 1;
      for (int d = nd; d > pp->axis; d--) out->shape[d] = x->shape[d - 1];
      out->shape[pp->axis] = n;
    }
    return true;
  case PRIM_psum_scatter:
    if (pp->axis < 0 || pp->axis >= nd) return shape_error(p, pp, x, "scatter_dimension out of range");
    if (x->dtype == JX_BOOL) {
      error_set(JX_ERR_DTYPE, "psum_scatter: bool operands are not summed (convert them first)");
      return false;
    }
    if (pp->tiled) {
      if (x->shape[pp->axis] % n != 0)
        return shape_error(p, pp, x, "the scatter dimension is not divisible by the axis size");
      out->shape[pp->axis] /= n;
    } else {
      if (x->shape[pp->axis] != n)
        return shape_error(p, pp, x, "the scatter dimension must equal the axis size (tiled=False)");
      out->ndim = nd - 1;
      for (int d = pp->axis; d < nd - 1; d++) out->shape[d] = x->shape[d + 1];
    }
    return true;
  case PRIM_all_to_all:
    if (pp->axis < 0 || pp->axis >= nd || pp->axis2 < 0 || pp->axis2 >= nd)
      return shape_error(p, pp, x, "split_axis or concat_axis out of range");
    if (pp->tiled) {
      if (x->shape[pp->axis] % n != 0)
        return shape_error(p, pp, x, "the split axis is not divisible by the axis size");
      out->shape[pp->axis] /= n;
      out->shape[pp->axis2] *= n;
    } else {
      if (x->shape[pp->axis] != n)
        return shape_error(p, pp, x, "the split axis must equal the axis size (tiled=False)");
      int64_t rest[JX_MAX_NDIM];
      for (int d = 0, k = 0; d < nd; d++)
        if (d != pp->axis) rest[k++] = x->shape[d];
      for (int d = 0, k = 0; d < nd; d++) out->shape[d] = d == pp->axis2 ? n : rest[k++];
    }
    return true;
  default:
    error_set(JX_ERR_INTERNAL, "%s is not a collective", prim_name(p));
    return false;
  }
  (void)nin;
}

/* ------------------------------------------------------------ eager evaluation */

/* Host arithmetic of psum / pmax / pmin: acc[k] op= src[k] for n elements. */
static void accumulate(Prim p, jx_dtype dt, void *acc, const void *src, int64_t n) {
  if (dt == JX_FLOAT32 && p == PRIM_psum) {
    float *a = acc;
    const float *s = src;
    for (int64_t k = 0; k < n; k++) a[k] += s[k];
    return;
  }
  AluOp op = p == PRIM_psum ? ALU_ADD : p == PRIM_pmax ? ALU_MAX : ALU_MIN;
  for (int64_t k = 0; k < n; k++) {
    AluValue v[2] = {alu_load(acc, dt, k), alu_load(src, dt, k)};
    alu_store(acc, dt, k, alu_eval_op(op, dt, dt, v));
  }
}

/* Copies block `b` of nb equal blocks along dim `axis` of a C-order array (shape) into
 * dst (C order, the block's shape). */
static void take_block(char *dst, const char *src, int ndim, const int64_t *shape, int axis,
                       int64_t nb, int64_t b, size_t item) {
  int64_t outer = shape_numel(axis, shape);
  size_t rest = (size_t)shape_numel(ndim - axis - 1, shape + axis + 1) * item;
  size_t full = (size_t)shape[axis] * rest, blk = full / (size_t)nb;
  for (int64_t o = 0; o < outer; o++) memcpy(dst + (size_t)o * blk, src + (size_t)o * full + (size_t)b * blk, blk);
}

/* Joins n C-order parts (each with the block shape) along dim `axis` of the result:
 * part j is the j-th block (the layout of stacking and of concatenating is the same). */
static void join_blocks(char *dst, const void *const *parts, int n, int64_t outer, size_t inner) {
  for (int64_t o = 0; o < outer; o++)
    for (int j = 0; j < n; j++)
      memcpy(dst + ((size_t)o * (size_t)n + (size_t)j) * inner, (const char *)parts[j] + (size_t)o * inner, inner);
}

/* The result array of `aval` from host data, on device `be` (committed as `committed`). */
static jx_array *result_on(const Backend *be, bool committed, const Aval *aval, const void *host) {
  size_t nbytes = (size_t)shape_numel(aval->ndim, aval->shape) * jx_dtype_itemsize(aval->dtype);
  Buffer *buf = buffer_new(be, nbytes);
  if (!buf) return NULL;
  if (be->copy_in(be, buf->mem, host, nbytes) != JX_OK) {
    buffer_free(buf);
    error_set(JX_ERR_DEVICE, "collective: copying to device %s failed", be->name);
    return NULL;
  }
  jx_array *a = array_new(buf, shape_contiguous(aval->ndim, aval->shape), aval->dtype, aval->weak);
  if (a) a->committed = committed;
  return a;
}

/* Between cuda devices (one per process: an axis over the processes of an MPI job, or of
 * size 1): NCCL on the device buffers for psum, pmax, pmin, and for all_gather and
 * psum_scatter along a leading axis (NCCL's rank-major layout is then the result's).
 * False when this collective is not one of those: the host path below runs it. */
static bool nccl_path(Prim p, const PrimParams *pp, const AxisFrame *f, jx_array *x, const Aval *aval,
                      bool committed, jx_array **out, jx_status *s) {
  if (!x || x->buf->backend != &backend_cuda) return false;
  int op = p == PRIM_pmax ? CUDA_NCCL_MAX : p == PRIM_pmin ? CUDA_NCCL_MIN : CUDA_NCCL_SUM;
  bool leading = (p == PRIM_all_gather || p == PRIM_psum_scatter) && shape_numel(pp->axis, x->shape) == 1;
  if (!(p == PRIM_psum || p == PRIM_pmax || p == PRIM_pmin || leading) || !cuda_nccl_supports(x->dtype, op))
    return false;
  const char *fn = prim_name(p);
  size_t count = (size_t)shape_numel(x->ndim, x->shape), ocount = (size_t)shape_numel(aval->ndim, aval->shape);
  *s = cuda_nccl_ready(fn, f->size, f->index);
  jx_array *c = *s == JX_OK ? impl_contiguous(x) : NULL;
  Buffer *buf = c ? buffer_new(&backend_cuda, ocount * jx_dtype_itemsize(x->dtype)) : NULL;
  if (*s == JX_OK && !buf) *s = jx_last_status();
  if (*s == JX_OK && count) {
    const void *src = c->buf->mem;
    if (p == PRIM_all_gather) *s = cuda_nccl_all_gather(fn, src, buf->mem, count, x->dtype);
    else if (p == PRIM_psum_scatter) *s = cuda_nccl_reduce_scatter(fn, src, buf->mem, ocount, x->dtype);
    else *s = cuda_nccl_all_reduce(fn, src, buf->mem, count, x->dtype, op);
  }
  jx_free(c);
  if (*s == JX_OK) { /* array_new takes buf, also when it fails */
    out[0] = array_new(buf, shape_contiguous(aval->ndim, aval->shape), aval->dtype, aval->weak);
    if (out[0]) out[0]->committed = committed;
    else *s = jx_last_status();
  } else {
    buffer_free(buf);
  }
  if (*s != JX_OK) comm_abort(f->comm);
  return true;
}

jx_status collective_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                          jx_array **out) {
  jx_status s0 = JX_OK;
  const char *fn = prim_name(p);
  const AxisFrame *f = collective_axis(fn, pp->text);
  if (!f) return jx_last_status();
  if (!f->comm) {
    error_set(JX_ERR_UNSUPPORTED, "%s: over axis '%s' of a value that does not depend on the "
              "shard_map's inputs, while the shard_map is transformed (grad, vmap, jit of it); "
              "make the operand depend on an input", fn, f->name);
    return JX_ERR_UNSUPPORTED;
  }
  if (f->size != pp->length) {
    error_set(JX_ERR_VALUE, "%s: axis '%s' has size %d here, the equation was traced for %lld", fn,
              f->name, f->size, (long long)pp->length);
    return JX_ERR_VALUE;
  }
  Aval aval;
  Aval xa = {0};
  if (nin) xa = (Aval){.dtype = in[0]->dtype, .weak = in[0]->weak, .ndim = in[0]->ndim};
  if (nin) memcpy(xa.shape, in[0]->shape, sizeof xa.shape);
  if (!collective_abstract_eval(p, nin, &xa, pp, &aval)) return jx_last_status();
  const Backend *be = nin ? in[0]->buf->backend : f->device ? f->device : backend_default();
  bool committed = nin ? in[0]->committed : true;
  if (p == PRIM_axis_index) {
    int32_t idx = f->index;
    out[0] = result_on(be, committed, &aval, &idx);
    return out[0] ? JX_OK : jx_last_status();
  }
  if (nccl_path(p, pp, f, in[0], &aval, committed, out, &s0)) return s0;
  int n = f->size, me = f->index;
  size_t item = jx_dtype_itemsize(xa.dtype);
  int64_t numel = shape_numel(xa.ndim, xa.shape);
  size_t nbytes = (size_t)numel * item, obytes = (size_t)shape_numel(aval.ndim, aval.shape) * item;
  char *mine = malloc(nbytes + 1), *res = malloc((obytes > nbytes ? obytes : nbytes) + 1);
  char *tmp = NULL;
  const void *all[PRIM_MAX_AXIS_SIZE] = {NULL};
  jx_status s = mine && res ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "%s: out of memory (%zu bytes)", fn, nbytes);
  if (s == JX_OK) s = jx_read(in[0], mine, nbytes);
  /* Every participant posts its data and reaches the first barrier, even after a failure
   * here: then it aborts the communicator, so the others do not wait forever. */
  if (s != JX_OK) {
    comm_abort(f->comm);
    free(mine), free(res);
    return s;
  }
  char *owned = NULL;
  s = comm_exchange(f->comm, fn, me, mine, nbytes, all, &owned);
  if (s == JX_OK) {
    switch (p) {
    case PRIM_psum:
    case PRIM_pmax:
    case PRIM_pmin:
      memcpy(res, all[0], nbytes);
      for (int j = 1; j < n; j++) accumulate(p, xa.dtype, res, all[j], numel);
      break;
    case PRIM_all_gather: {
      int64_t outer = shape_numel(pp->axis, xa.shape);
      join_blocks(res, all, n, outer, nbytes / (size_t)(outer ? outer : 1));
      break;
    }
    case PRIM_psum_scatter: {
      /* only this device's block of the sum */
      size_t blk = obytes;
      tmp = malloc(blk + 1);
      if (!tmp) {
        s = JX_ERR_OOM;
        error_set(s, "%s: out of memory", fn);
        break;
      }
      take_block(res, all[0], xa.ndim, xa.shape, pp->axis, n, me, item);
      for (int j = 1; j < n; j++) {
        take_block(tmp, all[j], xa.ndim, xa.shape, pp->axis, n, me, item);
        accumulate(PRIM_psum, xa.dtype, res, tmp, (int64_t)(blk / item));
      }
      break;
    }
    case PRIM_ppermute: {
      int src = -1;
      for (int j = 0; j < n; j++)
        if (pp->perm[j] == me + 1) src = j;
      if (src < 0) memset(res, 0, nbytes);
      else memcpy(res, all[src], nbytes);
      break;
    }
    case PRIM_all_to_all: {
      /* from each device j, its block `me` along split_axis; joined along concat_axis */
      size_t blk = nbytes / (size_t)n;
      tmp = malloc((size_t)n * blk + 1);
      if (!tmp) {
        s = JX_ERR_OOM;
        error_set(s, "%s: out of memory", fn);
        break;
      }
      const void *parts[PRIM_MAX_AXIS_SIZE];
      for (int j = 0; j < n; j++) {
        take_block(tmp + (size_t)j * blk, all[j], xa.ndim, xa.shape, pp->axis, n, me, item);
        parts[j] = tmp + (size_t)j * blk;
      }
      /* the block's shape, then joined at concat_axis (tiled: the block keeps the split
       * dim, of size dim/n; else it is removed and a new dim of n is inserted) */
      int64_t bshape[JX_MAX_NDIM];
      int bnd = 0;
      for (int d = 0; d < xa.ndim; d++) {
        if (d == pp->axis && !pp->tiled) continue;
        bshape[bnd++] = d == pp->axis ? xa.shape[d] / n : xa.shape[d];
      }
      int64_t outer = shape_numel(pp->axis2, bshape);
      join_blocks(res, parts, n, outer, blk / (size_t)(outer ? outer : 1));
      break;
    }
    default:
      s = JX_ERR_INTERNAL;
      error_set(s, "%s is not a collective", fn);
    }
  }
  /* the others may still read `mine` until everyone is past this barrier */
  jx_status s2 = s == JX_OK ? comm_release(f->comm, fn, owned) : (free(owned), comm_abort(f->comm), s);
  if (s == JX_OK) s = s2;
  if (s == JX_OK) {
    out[0] = result_on(be, committed, &aval, res);
    if (!out[0]) s = jx_last_status();
  }
  free(mine), free(res), free(tmp);
  (void)nout;
  return s;
}
