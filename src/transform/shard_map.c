/* shard_map.c -- the transformation rules of the shard_map primitive (JAX's
 * jax/_src/shard_map.py with check_vma=False): JVP, transposition and batching, each a
 * new shard_map over a transformed body, referenced by the rule tables of jvp.c,
 * transpose.c and vmap.c. */
#include "transform/shard_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "jaxpr/jaxpr.h"
#include "transform/jvp.h"
#include "transform/transpose.h"
#include "trace/collective.h"

static jx_status oom(void) {
  error_set(JX_ERR_OOM, "shard_map: out of memory");
  return JX_ERR_OOM;
}

/* Binds the mesh's axes on this thread while a rule re-stages the body (names and sizes
 * for the collectives' params, axis_index staged through the hook; nothing runs there);
 * returns the frames it replaced, for unbind_axes. */
static int bind_axes(const ShardSpec *sp, AxisFrame *saved) {
  int n = collective_get_axes(saved);
  AxisFrame frames[JX_MESH_MAX_AXES];
  const jx_mesh *m = sp->mesh;
  for (int a = 0; a < m->ndim; a++)
    frames[a] = (AxisFrame){.name = m->names[a], .size = (int)m->shape[a], .index = -1,
                            .device = m->devices[0], .stage = stage_bind_nullary_top};
  collective_set_axes(m->ndim, frames);
  return n;
}
static void unbind_axes(int n, const AxisFrame *saved) { collective_set_axes(n, saved); }

/* Names the staged body `prefix(name)`. */
static void name_body(Jaxpr *J, const char *prefix, const Jaxpr *sub) {
  const char *name = sub->name ? sub->name : "<lambda>";
  if ((J->name = malloc(strlen(prefix) + strlen(name) + 3))) sprintf(J->name, "%s(%s)", prefix, name);
}

/* JVP (JAX's _shard_map_jvp): the primal results from the shard_map itself, the tangents
 * from a second shard_map of the body's JVP jaxpr over (primals, nonzero tangents), the
 * tangents laid out like their primals -- two calls, as jvp.c's rule for jit, so that
 * under linearize only the tangent call is staged (linear in the tangents). */
jx_status shard_map_jvp(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                        int nout, jx_array **y, jx_array **ty) {
  const ShardSpec *sp = pp->shard;
  jx_array **args = calloc((size_t)(2 * nin + 1), sizeof *args);
  jx_sharding **in = calloc((size_t)(2 * nin + 1), sizeof *in);
  if (!args || !in) {
    free(args), free(in);
    return oom();
  }
  jx_status s = prim_shard_map(sp, pp->jaxpr, nin, x, y);
  AxisFrame saved[JX_MESH_MAX_AXES];
  int nsaved = bind_axes(sp, saved);
  Jaxpr *J = s == JX_OK ? jvp_jaxpr(pp->jaxpr, t) : NULL;
  unbind_axes(nsaved, saved);
  if (s == JX_OK && !J) s = jx_last_status();
  int n = 0;
  for (int i = 0; i < nin; i++) args[n] = x[i], in[n++] = sp->in[i];
  for (int i = 0; i < nin; i++)
    if (t[i]) args[n] = t[i], in[n++] = sp->in[i];
  const ShardSpec *tsp = s == JX_OK ? shard_spec_intern(sp->mesh, n, in, nout, sp->out) : NULL;
  if (s == JX_OK && !tsp) s = jx_last_status();
  if (s == JX_OK) s = prim_shard_map(tsp, J, n, args, ty);
  for (int o = 0; s == JX_OK && o < nout; o++)
    if (!dtype_is_inexact(y[o]->dtype)) jx_free(ty[o]), ty[o] = NULL;
  jaxpr_free(J);
  free(args), free(in);
  return s;
}

/* The product of the sizes of the mesh axes spec s does not name (JAX's _unmentioned). */
static int64_t unmentioned_size(const jx_sharding *s) {
  bool used[JX_MESH_MAX_AXES] = {false};
  for (int d = 0; d < s->nspec; d++)
    for (int k = 0; k < s->naxes[d]; k++) used[s->axes[d][k]] = true;
  int64_t n = 1;
  for (int a = 0; a < s->mesh->ndim; a++)
    if (!used[a]) n *= s->mesh->shape[a];
  return n;
}

/* psum of x over every mesh axis spec s does not name. */
static jx_array *psum_unmentioned(jx_array *x, const jx_sharding *s) {
  bool used[JX_MESH_MAX_AXES] = {false};
  for (int d = 0; d < s->nspec; d++)
    for (int k = 0; k < s->naxes[d]; k++) used[s->axes[d][k]] = true;
  for (int a = 0; x && a < s->mesh->ndim; a++) {
    if (used[a] || s->mesh->shape[a] == 1) continue;
    PrimParams q = {.text = debug_intern(s->mesh->names[a]), .length = s->mesh->shape[a]};
    x = q.text ? prim_collective_like(PRIM_psum, x, &q) : NULL;
  }
  return x;
}

/* The transposed body (JAX's _shard_map_transpose, check_vma=False): from (every output's
 * cotangent block, the known operands' blocks) to the linear operands' cotangent blocks.
 * An output replicated over mesh axes its spec does not name has its cotangent divided by
 * their size (each device holds a copy); a linear operand replicated likewise has its
 * cotangent summed over them. */
static Jaxpr *transpose_body(const ShardSpec *sp, const Jaxpr *br, const bool *lin) {
  int nin = br->nin, nout = br->nout, nlin = 0;
  jx_array **known = calloc((size_t)nin + 1, sizeof *known), **ct_in = calloc((size_t)nin + 1, sizeof *ct_in);
  jx_array **cts = calloc((size_t)nout + 1, sizeof *cts), **res = calloc((size_t)nin + 1, sizeof *res);
  Trace *st = known && ct_in && cts && res ? stage_begin() : NULL;
  bool ok = st != NULL;
  if (st) jx_scope_begin(); /* the staged temporaries */
  if (!known || !ct_in || !cts || !res) oom();
  for (int o = 0; ok && o < nout; o++) {
    ok = (cts[o] = stage_new_input(st, &br->vars[br->outvars[o]])) != NULL;
    int64_t n = ok ? unmentioned_size(sp->out[o]) : 1;
    if (ok && n != 1) ok = (cts[o] = prim_binary(PRIM_div, cts[o], tx_full_like(cts[o], (double)n))) != NULL;
  }
  for (int i = 0; ok && i < nin; i++)
    if (!lin[i]) ok = (known[i] = stage_new_input(st, &br->vars[br->invars[i]])) != NULL;
  ok = ok && transpose_partial(br, lin, known, cts, ct_in) == JX_OK;
  for (int i = 0; ok && i < nin; i++)
    if (lin[i]) ok = (res[nlin++] = psum_unmentioned(ct_in[i], sp->in[i])) != NULL;
  Jaxpr *J = st ? stage_end(st, ok ? nlin : 0, res) : NULL;
  if (st) jx_scope_end(0, NULL);
  if (!ok) jaxpr_free(J), J = NULL;
  if (J) name_body(J, "transpose", br);
  free(known), free(ct_in), free(cts), free(res);
  return J;
}

bool shard_map_transpose(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                         const Aval *in, const PrimParams *pp, jx_array **out) {
  const ShardSpec *sp = pp->shard;
  const Jaxpr *br = pp->jaxpr;
  int nout = br->nout, nargs = 0, nlin = 0;
  jx_array **args = calloc((size_t)(nin + nout + 1), sizeof *args), **res = calloc((size_t)nin + 1, sizeof *res);
  jx_sharding **ain = calloc((size_t)(nin + nout + 1), sizeof *ain), **aout = calloc((size_t)nin + 1, sizeof *aout);
  bool ok = args && res && ain && aout;
  if (!ok) oom();
  AxisFrame saved[JX_MESH_MAX_AXES];
  int nsaved = bind_axes(sp, saved);
  Jaxpr *T = ok ? transpose_body(sp, br, lin) : NULL;
  unbind_axes(nsaved, saved);
  ok = ok && T;
  for (int o = 0; ok && o < nout; o++) {
    Aval whole;
    ok = shard_whole_aval("shard_map", sp->out[o], &br->vars[br->outvars[o]], &whole);
    ain[nargs] = sp->out[o];
    ok = ok && (args[nargs++] = cts[o] ? cts[o] : tx_zeros(&whole)) != NULL;
  }
  for (int i = 0; ok && i < nin; i++)
    if (!lin[i]) ain[nargs] = sp->in[i], args[nargs++] = x[i];
    else aout[nlin++] = sp->in[i];
  const ShardSpec *tsp = ok ? shard_spec_intern(sp->mesh, nargs, ain, nlin, aout) : NULL;
  ok = ok && tsp && prim_shard_map(tsp, T, nargs, args, res) == JX_OK;
  for (int i = 0, k = 0; ok && i < nin; i++) out[i] = lin[i] ? res[k++] : NULL;
  jaxpr_free(T);
  free(args), free(res), free(ain), free(aout);
  (void)in;
  return ok;
}

/* Batching (JAX's _shard_map_batch): the batch axes go in front, where the specs get a
 * replicated dimension; the body is batched per device. */
int shard_map_batch(Prim p, int nin, jx_array *const *x, const int *bd, const PrimParams *pp,
                    jx_array **y) {
  const ShardSpec *sp = pp->shard;
  const Jaxpr *sub = pp->jaxpr;
  int nout = sub->nout;
  int64_t size = -1;
  jx_array **xs = calloc((size_t)nin + 1, sizeof *xs);
  jx_sharding **in = calloc((size_t)nin + 1, sizeof *in), **out = calloc((size_t)nout + 1, sizeof *out);
  Aval *avals = calloc((size_t)nin + 1, sizeof *avals);
  int *axes = calloc((size_t)nin + 1, sizeof *axes);
  bool ok = xs && in && out && avals && axes;
  if (!ok) oom();
  for (int i = 0; ok && i < nin; i++) {
    avals[i] = sub->vars[sub->invars[i]];
    if (bd[i] == JX_NOT_MAPPED) {
      xs[i] = x[i], in[i] = jx_sharding_ref(sp->in[i]), axes[i] = JX_NOT_MAPPED;
      continue;
    }
    size = x[i]->shape[bd[i]];
    int perm[JX_MAX_NDIM], k = 1;
    perm[0] = bd[i];
    for (int d = 0; d < x[i]->ndim; d++)
      if (d != bd[i]) perm[k++] = d;
    xs[i] = bd[i] == 0 ? x[i] : prim_transpose(x[i], perm);
    in[i] = sharding_prepend_none(sp->in[i]);
    axes[i] = 0;
    ok = xs[i] && in[i];
    memmove(avals[i].shape + 1, avals[i].shape, (size_t)avals[i].ndim * sizeof *avals[i].shape);
    avals[i].shape[0] = size;
    avals[i].ndim++;
  }
  for (int o = 0; ok && o < nout; o++) ok = (out[o] = sharding_prepend_none(sp->out[o])) != NULL;
  AxisFrame saved[JX_MESH_MAX_AXES];
  int nsaved = bind_axes(sp, saved);
  Jaxpr *J = ok ? vmap_jaxpr(sub, avals, axes, size) : NULL;
  unbind_axes(nsaved, saved);
  const ShardSpec *bsp = J ? shard_spec_intern(sp->mesh, nin, in, nout, out) : NULL;
  ok = bsp && prim_shard_map(bsp, J, nin, xs, y) == JX_OK;
  for (int i = 0; xs && i < nin; i++) {
    if (xs[i] != x[i]) jx_free(xs[i]);
    if (in) jx_sharding_free(in[i]);
  }
  for (int o = 0; out && o < nout; o++) jx_sharding_free(out[o]);
  jaxpr_free(J);
  free(xs), free(in), free(out), free(avals), free(axes);
  if (!ok) y[0] = NULL;
  (void)p;
  return ok ? 0 : JX_NOT_MAPPED;
}
