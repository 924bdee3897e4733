/* shard_map.c -- jax.shard_map and jax.pmap: a function run once per device of a mesh,
 * each on its device's blocks of the inputs, with the collectives of trace/collective.c
 * between them (the engine: trace/shard_map.c). On concrete inputs the function runs
 * per device as it is; under a transformation (grad, vmap, jit of the shard_map) it is
 * traced over the blocks and bound as the shard_map primitive, which every
 * transformation has rules for (transform/shard_map.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/mpi.h"
#include "core/error.h"
#include "trace/collective.h"
#include "trace/sharding.h"
#include "transform/transform.h"

typedef struct ShardMap {
  jx_fn *f;
  const ShardSpec *spec; /* interned */
} ShardMap;

static void shard_map_free(void *ctx) {
  ShardMap *S = ctx;
  if (!S) return;
  fn_release(S->f);
  free(S);
}

/* f traced over the blocks of inputs of in's types, with the mesh's axes bound on this
 * thread (names and sizes; no communicators: nothing runs), into a closed jaxpr. */
static Jaxpr *trace_body(const char *fn, ShardMap *S, jx_array *const *in) {
  const ShardSpec *sp = S->spec;
  const jx_mesh *m = sp->mesh;
  jx_array **blocks = calloc((size_t)sp->nin + 1, sizeof *blocks);
  if (!blocks) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  bool ok = true;
  for (int i = 0; ok && i < sp->nin; i++) {
    char what[64];
    snprintf(what, sizeof what, "%s: input %d", fn, i);
    Aval whole = prim_aval_of(in[i]), b;
    ok = shard_block_aval(what, sp->in[i], &whole, &b) && (blocks[i] = tx_zeros(&b)) != NULL;
  }
  AxisFrame saved[JX_MESH_MAX_AXES], frames[JX_MESH_MAX_AXES];
  int nsaved = collective_get_axes(saved);
  for (int a = 0; a < m->ndim; a++)
    frames[a] = (AxisFrame){.name = m->names[a], .size = (int)m->shape[a], .index = -1, .comm = NULL,
                            .device = m->devices[0], .stage = stage_bind_nullary_top};
  collective_set_axes(m->ndim, frames);
  Jaxpr *j = ok ? stage_trace_closed(fn, S->f, blocks, "input") : NULL;
  collective_set_axes(nsaved, saved);
  for (int i = 0; i < sp->nin; i++) jx_free(blocks[i]);
  free(blocks);
  return j;
}

static jx_status shard_map_call(void *ctx, jx_array *const *in, jx_array **out) {
  ShardMap *S = ctx;
  const char *fn = "jx_shard_map";
  bool traced = false;
  for (int i = 0; i < S->spec->nin; i++) traced |= in[i]->tracer != NULL;
  if (!traced) return shard_map_run(fn, S->spec, S->f, in, out);
  /* under a transformation (grad, vmap, jit of the shard_map): the shard_map primitive
   * over f's jaxpr, which every transformation has rules for */
  Jaxpr *body = trace_body(fn, S, in);
  if (!body) return jx_last_status();
  jx_status s = prim_shard_map(S->spec, body, S->spec->nin, in, out);
  jaxpr_free(body);
  return s;
}

jx_fn *jx_shard_map(jx_fn *f, jx_mesh *mesh, const char *const *in_specs,
                    const char *const *out_specs) {
  const char *fn = "jx_shard_map";
  if (!f || !mesh) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, f ? "mesh" : "f");
    return NULL;
  }
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  if ((nin && !in_specs) || (nout && !out_specs)) {
    error_set(JX_ERR_VALUE, "%s(%s): %s is NULL (one PartitionSpec per %s)", fn, jx_fn_name(f),
              nin && !in_specs ? "in_specs" : "out_specs", nin && !in_specs ? "input" : "output");
    return NULL;
  }
  if (mesh->size > PRIM_MAX_AXIS_SIZE) {
    error_set(JX_ERR_SHAPE, "%s: a mesh of %lld devices (at most %d)", fn, (long long)mesh->size,
              PRIM_MAX_AXIS_SIZE);
    return NULL;
  }
  jx_sharding **in_sh = calloc((size_t)nin + 1, sizeof *in_sh), **out_sh = calloc((size_t)nout + 1, sizeof *out_sh);
  ShardMap *S = calloc(1, sizeof *S);
  bool ok = in_sh && out_sh && S;
  if (!ok) error_set(JX_ERR_OOM, "%s: out of memory", fn);
  for (int i = 0; i < nin && ok; i++) ok = (in_sh[i] = jx_named_sharding(mesh, in_specs[i] ? in_specs[i] : "")) != NULL;
  for (int o = 0; o < nout && ok; o++) ok = (out_sh[o] = jx_named_sharding(mesh, out_specs[o] ? out_specs[o] : "")) != NULL;
  if (ok) ok = (S->spec = shard_spec_intern(mesh, nin, in_sh, nout, out_sh)) != NULL;
  for (int i = 0; in_sh && i < nin; i++) jx_sharding_free(in_sh[i]);
  for (int o = 0; out_sh && o < nout; o++) jx_sharding_free(out_sh[o]);
  free(in_sh), free(out_sh);
  if (!ok) {
    free(S);
    return NULL;
  }
  S->f = fn_retain(f);
  jx_fn *g = jx_fn_new_with_free("shard_map", nin, nout, shard_map_call, S, shard_map_free);
  if (!g) shard_map_free(S);
  return g;
}

/* ------------------------------------------------------------------- pmap */

typedef struct Pmap {
  jx_fn *f;
  char name[MESH_NAME_MAX];
  int nin, nout;
  int *in_axes, *out_axes;
} Pmap;

static void pmap_free(void *ctx) {
  Pmap *P = ctx;
  jx_fn_free(P->f);
  free(P->in_axes);
  free(P->out_axes);
  free(P);
}

/* x with axis `from` moved to position `to` (a transpose view). */
static jx_array *move_axis(jx_array *x, int from, int to) {
  int perm[JX_MAX_NDIM], k = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != from) perm[k++] = d;
  memmove(perm + to + 1, perm + to, (size_t)(x->ndim - 1 - to) * sizeof *perm);
  perm[to] = from;
  return prim_transpose(x, perm);
}

/* x with a leading axis of size 1 dropped (drop) or added. */
static jx_array *lead_axis(jx_array *x, bool drop) {
  if (!x) return NULL;
  int64_t shape[JX_MAX_NDIM];
  if (drop) {
    memcpy(shape, x->shape + 1, (size_t)(x->ndim - 1) * sizeof *shape);
    return prim_reshape(x, x->ndim - 1, shape);
  }
  if (x->ndim + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "jx_pmap: an output of %d dimensions cannot gain the mapped one", x->ndim);
    return NULL;
  }
  shape[0] = 1;
  memcpy(shape + 1, x->shape, (size_t)x->ndim * sizeof *shape);
  return prim_reshape(x, x->ndim + 1, shape);
}

/* Inside each device: drops the mapped axis (a block of 1 row), calls f, adds it back. */
static jx_status pmap_body(void *ctx, jx_array *const *in, jx_array **out) {
  Pmap *P = ctx;
  jx_array **x = calloc((size_t)P->nin + 1, sizeof *x);
  if (!x) {
    error_set(JX_ERR_OOM, "jx_pmap: out of memory");
    return JX_ERR_OOM;
  }
  for (int i = 0; i < P->nin; i++)
    x[i] = P->in_axes[i] == JX_NOT_MAPPED ? in[i] : lead_axis(in[i], true);
  jx_status s = jx_call(P->f, x, out);
  free(x);
  for (int o = 0; o < P->nout && s == JX_OK; o++) {
    out[o] = lead_axis(out[o], false);
    if (!out[o]) s = jx_last_status();
  }
  return s;
}

typedef struct PmapOuter {
  Pmap *P;
  jx_fn *body; /* pmap_body over P */
} PmapOuter;

static void pmap_outer_free(void *ctx) {
  PmapOuter *O = ctx;
  jx_fn_free(O->body); /* frees P with it */
  free(O);
}

static jx_status pmap_impl(void *ctx, jx_array *const *in, jx_array **out) {
  PmapOuter *O = ctx;
  Pmap *P = O->P;
  const char *fn = "jx_pmap";
  int64_t n = -1;
  jx_array **moved = calloc((size_t)P->nin + 1, sizeof *moved);
  const char **in_specs = calloc((size_t)P->nin + 1, sizeof *in_specs);
  const char **out_specs = calloc((size_t)P->nout + 1, sizeof *out_specs);
  jx_status s = moved && in_specs && out_specs ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "%s: out of memory", fn);
  for (int i = 0; i < P->nin && s == JX_OK; i++) {
    int ax = P->in_axes[i];
    if (ax == JX_NOT_MAPPED) {
      moved[i] = in[i];
      in_specs[i] = "";
      continue;
    }
    if (ax < -in[i]->ndim || ax >= in[i]->ndim) {
      s = JX_ERR_SHAPE;
      error_set(s, "%s(%s): in_axes[%d] = %d is out of range for a %d-d input", fn, jx_fn_name(P->f), i,
                ax, in[i]->ndim);
      break;
    }
    if (ax < 0) ax += in[i]->ndim;
    if (n >= 0 && in[i]->shape[ax] != n) {
      s = JX_ERR_SHAPE;
      error_set(s, "%s(%s): mapped axes of different sizes: %lld and %lld (input %d)", fn,
                jx_fn_name(P->f), (long long)n, (long long)in[i]->shape[ax], i);
      break;
    }
    n = in[i]->shape[ax];
    moved[i] = ax ? move_axis(in[i], ax, 0) : in[i];
    in_specs[i] = P->name;
  }
  if (s == JX_OK && n < 0) {
    s = JX_ERR_VALUE;
    error_set(s, "%s(%s): no input is mapped (every in_axes entry is JX_NOT_MAPPED)", fn, jx_fn_name(P->f));
  }
  bool distributed = s == JX_OK && mpi_active() && mpi_size() > 1;
  if (distributed && n != 1) {
    s = JX_ERR_SHAPE;
    error_set(s, "%s(%s): under jx_distributed_initialize each of the %d processes maps one index "
              "(its own device), but the mapped axis has size %lld here", fn, jx_fn_name(P->f),
              mpi_size(), (long long)n);
  }
  if (distributed && s == JX_OK) {
    /* the axis spans the processes of the MPI job: this process is index rank */
    Comm *c = comm_new_mpi();
    AxisFrame frame = {.name = P->name, .size = mpi_size(), .index = mpi_rank(), .comm = c,
                       .device = backend_default()};
    s = c ? JX_OK : jx_last_status();
    if (c) {
      collective_set_axes(1, &frame);
      s = jx_call(O->body, moved, out);
      collective_set_axes(0, NULL);
      comm_free(c);
    }
    n = 0; /* done: no mesh below */
  }
  if (s == JX_OK && !distributed && (n < 1 || n > backend_cpu_count())) {
    s = JX_ERR_SHAPE;
    error_set(s, "%s(%s): the mapped axis has size %lld, but the process has %d cpu devices (set "
              "JAXC_CPU_DEVICES or call jx_config_cpu_devices)", fn, jx_fn_name(P->f), (long long)n,
              backend_cpu_count());
  }
  jx_mesh *mesh = NULL;
  jx_fn *sm = NULL;
  if (s == JX_OK && !distributed) {
    for (int o = 0; o < P->nout; o++) out_specs[o] = P->name;
    const char *names[1] = {P->name};
    mesh = jx_mesh_new(1, &n, names, NULL);
    sm = mesh ? jx_shard_map(O->body, mesh, in_specs, out_specs) : NULL;
    s = sm ? jx_call(sm, moved, out) : jx_last_status();
  }
  for (int o = 0; o < P->nout && s == JX_OK; o++) {
    int ax = P->out_axes ? P->out_axes[o] : 0;
    if (ax < 0) ax += out[o]->ndim;
    if (ax != 0) {
      jx_array *t = ax <= out[o]->ndim - 1 ? move_axis(out[o], 0, ax) : NULL;
      if (!t && !error_pending()) error_set(JX_ERR_SHAPE, "%s: out_axes[%d] = %d is out of range", fn, o, ax);
      jx_free(out[o]);
      out[o] = t;
      if (!t) s = jx_last_status();
    }
  }
  for (int i = 0; moved && i < P->nin; i++)
    if (moved[i] != in[i]) jx_free(moved[i]);
  jx_fn_free(sm);
  jx_mesh_free(mesh);
  free(moved), free(in_specs), free(out_specs);
  return s;
}

jx_fn *jx_pmap(jx_fn *f, const char *axis_name, const int *in_axes, const int *out_axes) {
  const char *fn = "jx_pmap";
  if (!f || !axis_name) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, f ? "axis_name" : "f");
    return NULL;
  }
  if (strlen(axis_name) >= MESH_NAME_MAX) {
    error_set(JX_ERR_VALUE, "%s: axis name \"%s\" is too long", fn, axis_name);
    return NULL;
  }
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  Pmap *P = calloc(1, sizeof *P);
  PmapOuter *O = calloc(1, sizeof *O);
  if (P) {
    P->in_axes = calloc((size_t)nin + 1, sizeof *P->in_axes);
    P->out_axes = calloc((size_t)nout + 1, sizeof *P->out_axes);
  }
  if (!P || !O || !P->in_axes || !P->out_axes) {
    if (P) free(P->in_axes), free(P->out_axes);
    free(P), free(O);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  P->f = jx_fn_ref(f);
  snprintf(P->name, sizeof P->name, "%s", axis_name);
  P->nin = nin;
  P->nout = nout;
  for (int i = 0; i < nin; i++) P->in_axes[i] = in_axes ? in_axes[i] : 0;
  for (int o = 0; o < nout; o++) P->out_axes[o] = out_axes ? out_axes[o] : 0;
  O->P = P;
  O->body = jx_fn_new_with_free("pmap_body", nin, nout, pmap_body, P, pmap_free);
  if (!O->body) {
    pmap_free(P);
    free(O);
    return NULL;
  }
  jx_fn *g = jx_fn_new_with_free("pmap", nin, nout, pmap_impl, O, pmap_outer_free);
  if (!g) pmap_outer_free(O);
  return g;
}
