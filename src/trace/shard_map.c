/* shard_map.c -- the engine under jax.shard_map and jax.pmap (their constructors are in
 * lib/shard_map.c): a function run once per device of a mesh, each on its device's
 * blocks of the inputs, with the collectives of trace/collective.c between them. Each
 * device runs in its own thread (so blocking collectives meet), with the mesh's axes as
 * its axis environment; the outputs' blocks are assembled into sharded arrays by the
 * out_specs. Also the shard_map primitive (a jaxpr over the blocks, JAX's shard_map_p),
 * which a shard_map becomes under a transformation: its abstract eval and eval rules. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "trace/collective.h"
#include "trace/sharding.h"

/* ------------------------------------------------------------- interned specs */

typedef struct SpecNode {
  ShardSpec spec;
  struct SpecNode *next;
} SpecNode;

static pthread_mutex_t spec_lock = PTHREAD_MUTEX_INITIALIZER;
static SpecNode *spec_list; /* reachable for the process's life, like debug_intern's strings */

static bool mesh_same(const jx_mesh *a, const jx_mesh *b) {
  if (a == b) return true;
  if (a->ndim != b->ndim || a->size != b->size) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d] || strcmp(a->names[d], b->names[d]) != 0) return false;
  for (int64_t i = 0; i < a->size; i++)
    if (a->devices[i] != b->devices[i]) return false;
  return true;
}

static bool spec_same(const jx_sharding *a, const jx_sharding *b) {
  int n = a->nspec > b->nspec ? a->nspec : b->nspec;
  for (int d = 0; d < n; d++) {
    int na = d < a->nspec ? a->naxes[d] : 0, nb = d < b->nspec ? b->naxes[d] : 0;
    if (na != nb || memcmp(a->axes[d], b->axes[d], (size_t)na * sizeof a->axes[d][0]) != 0) return false;
  }
  return mesh_same(a->mesh, b->mesh);
}

const ShardSpec *shard_spec_intern(jx_mesh *mesh, int nin, jx_sharding *const *in, int nout,
                                   jx_sharding *const *out) {
  pthread_mutex_lock(&spec_lock);
  SpecNode *n = spec_list;
  for (; n; n = n->next) {
    const ShardSpec *s = &n->spec;
    bool same = s->nin == nin && s->nout == nout && mesh_same(s->mesh, mesh);
    for (int i = 0; same && i < nin; i++) same = spec_same(s->in[i], in[i]);
    for (int o = 0; same && o < nout; o++) same = spec_same(s->out[o], out[o]);
    if (same) break;
  }
  if (!n && (n = calloc(1, sizeof *n))) {
    n->spec.in = calloc((size_t)nin + 1, sizeof *n->spec.in);
    n->spec.out = calloc((size_t)nout + 1, sizeof *n->spec.out);
    if (!n->spec.in || !n->spec.out) {
      free(n->spec.in), free(n->spec.out), free(n);
      n = NULL;
    } else {
      n->spec.mesh = jx_mesh_ref(mesh);
      n->spec.nin = nin;
      n->spec.nout = nout;
      for (int i = 0; i < nin; i++) n->spec.in[i] = jx_sharding_ref(in[i]);
      for (int o = 0; o < nout; o++) n->spec.out[o] = jx_sharding_ref(out[o]);
      n->next = spec_list;
      spec_list = n;
    }
  }
  pthread_mutex_unlock(&spec_lock);
  if (!n) error_set(JX_ERR_OOM, "shard_map: out of memory");
  return n ? &n->spec : NULL;
}

bool shard_block_aval(const char *fn, const jx_sharding *s, const Aval *whole, Aval *block) {
  if (!sharding_check(fn, s, whole->ndim, whole->shape)) return false;
  *block = *whole;
  for (int d = 0; d < whole->ndim; d++) block->shape[d] = whole->shape[d] / sharding_pieces(s, d);
  return true;
}

bool shard_whole_aval(const char *fn, const jx_sharding *s, const Aval *block, Aval *whole) {
  if (s->nspec > block->ndim) {
    error_set(JX_ERR_SHAPE, "%s: out_specs entry %s has more entries than the output has dimensions (%d)",
              fn, s->text, block->ndim);
    return false;
  }
  *whole = *block;
  for (int d = 0; d < block->ndim; d++) whole->shape[d] = block->shape[d] * sharding_pieces(s, d);
  return true;
}

/* ------------------------------------------------------------ running a mesh */

/* One device's run: its blocks in, its outputs and its error out. */
typedef struct DeviceRun {
  const ShardSpec *sp;
  jx_fn *f;
  int64_t dev;
  AxisFrame frames[JX_MESH_MAX_AXES];
  Comm **comms;       /* every communicator of the call (aborted on failure) */
  int ncomms;
  jx_array **in;      /* sp->nin borrowed blocks */
  jx_array **out;     /* sp->nout new references */
  jx_status status;
  char message[1024];
} DeviceRun;

static void *device_main(void *arg) {
  DeviceRun *r = arg;
  collective_set_axes(r->sp->mesh->ndim, r->frames);
  r->status = jx_call(r->f, r->in, r->out);
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

jx_status shard_map_run(const char *fn, const ShardSpec *S, jx_fn *f, jx_array *const *in,
                        jx_array **out) {
  const jx_mesh *m = S->mesh;
  int64_t ndev = m->size;
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
    if (!sharding_check(what, S->in[i], in[i]->ndim, in[i]->shape)) s = jx_last_status();
    else s = sharding_split(fn, in[i], S->in[i], blocks + (size_t)i * ndev);
  }
  /* one thread per device */
  int64_t started = 0;
  for (int64_t d = 0; d < ndev && s == JX_OK; d++) {
    DeviceRun *r = &runs[d];
    r->sp = S;
    r->f = f;
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
    error_set(s, "%s(%s) on device %s: %s", fn, jx_fn_name(f), m->devices[bad]->name, runs[bad].message);
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
        error_set(s, "%s(%s): output %d is %s on device %s but %s on device %s", fn, jx_fn_name(f),
                  o, array_describe(t0, b0), m->devices[0]->name, array_describe(t1, b), m->devices[d]->name);
        break;
      }
    }
    if (s != JX_OK) break;
    const jx_sharding *sh = S->out[o];
    if (sh->nspec > b0->ndim) {
      s = JX_ERR_SHAPE;
      error_set(s, "%s(%s): out_specs[%d] %s has more entries than output %d has dimensions (%d)", fn,
                jx_fn_name(f), o, sh->text, o, b0->ndim);
      break;
    }
    int64_t whole[JX_MAX_NDIM];
    for (int d = 0; d < b0->ndim; d++) whole[d] = b0->shape[d] * sharding_pieces(sh, d);
    out[o] = sharding_assemble(fn, S->out[o], col, b0->ndim, whole);
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

/* ------------------------------------------------------- the shard_map primitive */

jx_status prim_shard_map(const ShardSpec *sp, struct Jaxpr *body, int nin, jx_array *const *in,
                         jx_array **out) {
  PrimParams pp = {.jaxpr = body, .shard = sp};
  return prim_bind_n(PRIM_shard_map, nin, in, &pp, prim_nout(PRIM_shard_map, nin, &pp), out);
}

bool shard_map_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  const ShardSpec *sp = pp->shard;
  const Jaxpr *j = pp->jaxpr;
  if (!sp || !j || sp->nin != nin || j->nin != nin || sp->nout != j->nout) {
    error_set(JX_ERR_INTERNAL, "shard_map: %d operands for a body of %d inputs and specs of %d", nin,
              j ? j->nin : -1, sp ? sp->nin : -1);
    return false;
  }
  for (int i = 0; i < nin; i++) {
    char what[64];
    snprintf(what, sizeof what, "shard_map: input %d", i);
    Aval b;
    if (!shard_block_aval(what, sp->in[i], &in[i], &b)) return false;
    const Aval *want = &j->vars[j->invars[i]];
    if (b.dtype != want->dtype || b.ndim != want->ndim ||
        memcmp(b.shape, want->shape, (size_t)b.ndim * sizeof *b.shape) != 0) {
      char t0[ARRAY_DESCRIBE_BUF], t1[ARRAY_DESCRIBE_BUF];
      aval_text(t0, sizeof t0, &b);
      aval_text(t1, sizeof t1, want);
      error_set(JX_ERR_SHAPE, "shard_map: input %d's block is %s, the body takes %s", i, t0, t1);
      return false;
    }
  }
  for (int o = 0; o < j->nout; o++)
    if (!shard_whole_aval("shard_map", sp->out[o], &j->vars[j->outvars[o]], &out[o])) return false;
  (void)p;
  return true;
}

static jx_status body_call(void *ctx, jx_array *const *in, jx_array **out) {
  return prim_eval_jaxpr(ctx, in, out);
}

jx_status shard_map_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                         jx_array **out) {
  const Jaxpr *j = pp->jaxpr;
  jx_fn *f = jx_fn_new(j->name ? j->name : "<lambda>", j->nin, j->nout, body_call, (void *)j);
  if (!f) return jx_last_status();
  jx_status s = shard_map_run("shard_map", pp->shard, f, in, out);
  jx_fn_free(f);
  (void)p, (void)nin, (void)nout;
  return s;
}
