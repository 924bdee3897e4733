/* shard_map.c -- jax.shard_map and jax.pmap: a function run once per device of a mesh,
 * each on its device's blocks of the inputs, with the collectives of trace/collective.c
 * between them. Each device runs in its own thread (so blocking collectives meet), with
 * the mesh's axes as its axis environment; the outputs' blocks are assembled into sharded
 * arrays by the out_specs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/mpi.h"
#include "core/error.h"
#include "trace/collective.h"
#include "trace/sharding.h"

typedef struct ShardMap {
  jx_fn *f;
  jx_mesh *mesh;
  int nin, nout;
  jx_sharding **in_sh, **out_sh; /* nin, then nout */
} ShardMap;

static void shard_map_free(void *ctx) {
  ShardMap *S = ctx;
  if (!S) return;
  for (int i = 0; i < S->nin; i++) jx_sharding_free(S->in_sh[i]);
  for (int o = 0; o < S->nout; o++) jx_sharding_free(S->out_sh[o]);
  free(S->in_sh);
  free(S->out_sh);
  jx_mesh_free(S->mesh);
  jx_fn_free(S->f);
  free(S);
}

/* One device's run: its blocks in, its outputs and its error out. */
typedef struct DeviceRun {
  ShardMap *S;
  int64_t dev;
  AxisFrame frames[JX_MESH_MAX_AXES];
  Comm **comms;       /* every communicator of the call (aborted on failure) */
  int ncomms;
  jx_array **in;      /* S->nin borrowed blocks */
  jx_array **out;     /* S->nout new references */
  jx_status status;
  char message[1024];
} DeviceRun;

static void *device_main(void *arg) {
  DeviceRun *r = arg;
  collective_set_axes(r->S->mesh->ndim, r->frames);
  r->status = jx_call(r->S->f, r->in, r->out);
  if (r->status != JX_OK) {
    snprintf(r->message, sizeof r->message, "%s", jx_last_error());
    jx_clear_error();
    for (int c = 0; c < r->ncomms; c++) comm_abort(r->comms[c]);
  }
  collective_set_axes(0, NULL);
  return NULL;
}

/* The communicator of device dev's group along mesh axis a: the devices whose other
 * coordinates equal dev's. Groups are numbered by the other coordinates (C order). */
static int64_t group_of(const jx_mesh *m, int a, int64_t dev) {
  int64_t coords[JX_MESH_MAX_AXES], g = 0;
  mesh_coords(m, dev, coords);
  for (int d = 0; d < m->ndim; d++)
    if (d != a) g = g * m->shape[d] + coords[d];
  return g;
}

static jx_status shard_map_impl(void *ctx, jx_array *const *in, jx_array **out) {
  ShardMap *S = ctx;
  const jx_mesh *m = S->mesh;
  const char *fn = "jx_shard_map";
  int64_t ndev = m->size;
  for (int i = 0; i < S->nin; i++)
    if (in[i]->tracer) {
      error_set(JX_ERR_UNSUPPORTED, "%s(%s): input %d is a tracer: transforming a shard_map "
                "(grad, vmap, jit of it) is not supported yet; transform the function inside "
                "it instead", fn, jx_fn_name(S->f), i);
      return JX_ERR_UNSUPPORTED;
    }
  /* the communicators: for each axis, one per group of the other coordinates */
  int ncomms = 0;
  for (int a = 0; a < m->ndim; a++) ncomms += (int)(ndev / m->shape[a]);
  Comm **comms = calloc((size_t)ncomms + 1, sizeof *comms);
  jx_array **blocks = calloc((size_t)(S->nin * ndev) + 1, sizeof *blocks);
  jx_array **outs = calloc((size_t)(S->nout * ndev) + 1, sizeof *outs);
  DeviceRun *runs = calloc((size_t)ndev, sizeof *runs);
  pthread_t *threads = calloc((size_t)ndev, sizeof *threads);
  jx_status s = comms && blocks && outs && runs && threads ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) error_set(s, "%s: out of memory", fn);
  for (int c = 0; c < ncomms && s == JX_OK; c++) {
    int a = 0, first = 0;
    while (c >= first + (int)(ndev / m->shape[a])) first += (int)(ndev / m->shape[a]), a++;
    comms[c] = comm_new((int)m->shape[a]);
    if (!comms[c]) s = jx_last_status();
  }
  /* the inputs' blocks, by in_specs */
  for (int i = 0; i < S->nin && s == JX_OK; i++) {
    char what[64];
    snprintf(what, sizeof what, "%s: input %d", fn, i);
    if (!sharding_check(what, S->in_sh[i], in[i]->ndim, in[i]->shape)) s = jx_last_status();
    else s = sharding_split(fn, in[i], S->in_sh[i], blocks + (size_t)i * ndev);
  }
  /* one thread per device */
  int64_t started = 0;
  for (int64_t d = 0; d < ndev && s == JX_OK; d++) {
    DeviceRun *r = &runs[d];
    r->S = S;
    r->dev = d;
    r->comms = comms;
    r->ncomms = ncomms;
    r->in = calloc((size_t)S->nin + 1, sizeof *r->in);
    r->out = outs + (size_t)d * S->nout;
    if (!r->in) {
      s = JX_ERR_OOM;
      error_set(s, "%s: out of memory", fn);
      break;
    }
    for (int i = 0; i < S->nin; i++) r->in[i] = blocks[(size_t)i * ndev + d];
    int64_t coords[JX_MESH_MAX_AXES];
    mesh_coords(m, d, coords);
    for (int a = 0, first = 0; a < m->ndim; first += (int)(ndev / m->shape[a]), a++)
      r->frames[a] = (AxisFrame){.name = m->names[a], .size = (int)m->shape[a], .index = (int)coords[a],
                                 .comm = comms[first + group_of(m, a, d)], .device = m->devices[d]};
    if (pthread_create(&threads[d], NULL, device_main, r) != 0) {
      s = JX_ERR_INTERNAL;
      error_set(s, "%s: could not start a thread for device %s", fn, m->devices[d]->name);
      for (int c = 0; c < ncomms; c++) comm_abort(comms[c]);
      break;
    }
    started++;
  }
  for (int64_t d = 0; d < started; d++) pthread_join(threads[d], NULL);
  /* the first failure by device order, unless a device failed only because another did */
  int64_t bad = -1;
  for (int64_t d = 0; d < started && s == JX_OK; d++)
    if (runs[d].status != JX_OK && (bad < 0 || strstr(runs[bad].message, "another device"))) bad = d;
  if (bad >= 0) {
    s = runs[bad].status;
    error_set(s, "%s(%s) on device %s: %s", fn, jx_fn_name(S->f), m->devices[bad]->name, runs[bad].message);
  }
  /* the outputs: each device's blocks must agree in type; assembled by out_specs */
  for (int o = 0; o < S->nout && s == JX_OK; o++) {
    jx_array *b0 = outs[o];
    jx_array *col[PRIM_MAX_AXIS_SIZE];
    for (int64_t d = 0; d < ndev; d++) {
      jx_array *b = outs[(size_t)d * S->nout + o];
      col[d] = b;
      if (b->dtype != b0->dtype || b->ndim != b0->ndim || memcmp(b->shape, b0->shape, sizeof b->shape) != 0) {
        char t0[ARRAY_DESCRIBE_BUF], t1[ARRAY_DESCRIBE_BUF];
        s = JX_ERR_SHAPE;
        error_set(s, "%s(%s): output %d is %s on device %s but %s on device %s", fn, jx_fn_name(S->f),
                  o, array_describe(t0, b0), m->devices[0]->name, array_describe(t1, b), m->devices[d]->name);
        break;
      }
    }
    if (s != JX_OK) break;
    const jx_sharding *sh = S->out_sh[o];
    if (sh->nspec > b0->ndim) {
      s = JX_ERR_SHAPE;
      error_set(s, "%s(%s): out_specs[%d] %s has more entries than output %d has dimensions (%d)", fn,
                jx_fn_name(S->f), o, sh->text, o, b0->ndim);
      break;
    }
    int64_t whole[JX_MAX_NDIM];
    for (int d = 0; d < b0->ndim; d++) whole[d] = b0->shape[d] * sharding_pieces(sh, d);
    out[o] = sharding_assemble(fn, S->out_sh[o], col, b0->ndim, whole);
    if (!out[o]) s = jx_last_status();
  }
  if (s != JX_OK)
    for (int o = 0; o < S->nout; o++) jx_free(out[o]), out[o] = NULL;
  for (int64_t k = 0; outs && k < S->nout * ndev; k++) jx_free(outs[k]);
  for (int64_t k = 0; blocks && k < S->nin * ndev; k++) jx_free(blocks[k]);
  for (int64_t d = 0; runs && d < ndev; d++) free(runs[d].in);
  for (int c = 0; comms && c < ncomms; c++) comm_free(comms[c]);
  free(comms), free(blocks), free(outs), free(runs), free(threads);
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
  ShardMap *S = calloc(1, sizeof *S);
  if (S) {
    S->in_sh = calloc((size_t)nin + 1, sizeof *S->in_sh);
    S->out_sh = calloc((size_t)nout + 1, sizeof *S->out_sh);
  }
  if (!S || !S->in_sh || !S->out_sh) {
    if (S) free(S->in_sh), free(S->out_sh);
    free(S);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  S->f = jx_fn_ref(f);
  S->mesh = jx_mesh_ref(mesh);
  S->nin = nin;
  S->nout = nout;
  bool ok = true;
  for (int i = 0; i < nin && ok; i++) ok = (S->in_sh[i] = jx_named_sharding(mesh, in_specs[i] ? in_specs[i] : "")) != NULL;
  for (int o = 0; o < nout && ok; o++) ok = (S->out_sh[o] = jx_named_sharding(mesh, out_specs[o] ? out_specs[o] : "")) != NULL;
  jx_fn *g = ok ? jx_fn_new_with_free("shard_map", nin, nout, shard_map_impl, S, shard_map_free) : NULL;
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
