/* vmap.c -- batching (jax.vmap) as a level of the interpreter stack: autodidax's
 * BatchTrace. A BatchTracer stands for one slice of a batched value `val` whose batch
 * dimension is `bdim`; each primitive applied to BatchTracers runs its batching rule,
 * which applies primitives to the whole batched values one level down. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/loops.h"
#include "transform/shard_map.h"
#include "trace/collective.h"
#include "transform/transform.h"

/* ------------------------------------------------------------ the tracer */

typedef struct BatchTracer {
  Tracer base;
  jx_array *val; /* the batched value (held with array_retain) */
  int bdim;      /* its batch dimension, or JX_NOT_MAPPED */
} BatchTracer;

static void batch_release_tracer(Tracer *t) {
  BatchTracer *b = (BatchTracer *)t;
  array_drop(b->val);
  trace_unref(t->trace);
  free(b);
}

/* A new tracer of t for val batched along bdim; `aval` is the unbatched aval. */
static jx_array *batch_tracer(Trace *t, jx_array *val, int bdim, const Aval *aval) {
  BatchTracer *b = malloc(sizeof *b);
  if (!b) {
    error_set(JX_ERR_OOM, "out of memory in vmap");
    return NULL;
  }
  *b = (BatchTracer){.base = {.trace = trace_ref(t), .release = batch_release_tracer},
                     .val = array_retain(val), .bdim = bdim};
  return array_new_tracer(&b->base, aval->dtype, aval->weak, aval->ndim, aval->shape);
}

/* (val, bdim) of x at level t: values of lower levels are unmapped. Borrowed. */
static int batch_unpack(Trace *t, jx_array *x, jx_array **val) {
  if (!trace_owns(t, x)) {
    *val = x;
    return JX_NOT_MAPPED;
  }
  BatchTracer *b = (BatchTracer *)x->tracer;
  *val = b->val;
  return b->bdim;
}

/* ------------------------------------------------------------ helpers */
/* Rules run inside a scope opened by batch_process, so the arrays they create are
 * released there; the helpers return either a borrowed input or a scope reference. */

#define NM JX_NOT_MAPPED

/* x with its axis `from` moved to position `to` (jnp.moveaxis). */
static jx_array *move_axis(jx_array *x, int from, int to) {
  if (!x || from == to) return x;
  int perm[JX_MAX_NDIM], n = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != from) perm[n++] = d;
  memmove(perm + to + 1, perm + to, (size_t)(x->ndim - 1 - to) * sizeof(int));
  perm[to] = from;
  return prim_transpose(x, perm);
}

/* x (unbatched) broadcast to `size` copies along a new axis `at`. */
static jx_array *add_batch_axis(jx_array *x, int64_t size, int at) {
  if (!x) return NULL;
  int64_t shape[JX_MAX_NDIM];
  int dims[JX_MAX_NDIM];
  for (int d = 0, k = 0; d <= x->ndim; d++) {
    if (d == at) {
      shape[d] = size;
      continue;
    }
    shape[d] = x->shape[k];
    dims[k++] = d;
  }
  return prim_broadcast_in_dim(x, x->ndim + 1, shape, dims);
}

/* x batched along bdim (or unmapped), with its batch axis moved / added at `to`. */
static jx_array *batch_at(jx_array *x, int bdim, int64_t size, int to) {
  return bdim == NM ? add_batch_axis(x, size, to) : move_axis(x, bdim, to);
}

/* Position of unbatched dim d in a value batched along b. */
static int shifted(int d, int b) { return d >= b ? d + 1 : d; }

/* The batch size: the size of any mapped operand's batch axis. */
static int64_t batch_size(int nin, jx_array *const *x, const int *bd) {
  for (int i = 0; i < nin; i++)
    if (bd[i] != NM) return x[i]->shape[bd[i]];
  return 0;
}

/* ------------------------------------------------------------ rules */
/* A batching rule: given the operands' batched values x[i] and batch dims bd[i] (at
 * least one mapped), sets y[0 .. nout) to the batched results (new scope references or
 * borrowed operands) and returns their batch dim (one for every result); y[0] = NULL
 * on error. */
typedef int (*BatchRule)(Prim p, int nin, jx_array *const *x, const int *bd,
                         const PrimParams *pp, jx_array **y);

/* Elementwise primitives: every operand gets its batch axis where the first mapped
 * operand has it (unmapped ones are broadcast), so one operand needs no transpose. */
static int batch_elementwise(Prim p, int nin, jx_array *const *x, const int *bd,
                             const PrimParams *pp, jx_array **y) {
  int b = NM;
  for (int i = 0; i < nin && b == NM; i++) b = bd[i];
  int64_t size = batch_size(nin, x, bd);
  jx_array *xs[4];
  for (int i = 0; i < nin; i++) xs[i] = batch_at(x[i], bd[i], size, b);
  prim_bind_n(p, nin, xs, pp, prim_nout(p, nin, pp), y);
  return b;
}

/* Reductions: the reduced axes shift past the batch axis, which stays. */
static int batch_reduce(Prim p, int nin, jx_array *const *x, const int *bd,
                        const PrimParams *pp, jx_array **y) {
  PrimParams q = *pp;
  int b = bd[0], out_b = b;
  for (int i = 0; i < pp->naxes; i++) {
    q.axes[i] = shifted(pp->axes[i], b);
    if (pp->axes[i] < b) out_b--;
  }
  *y = prim_bind(p, 1, x, &q);
  return out_b;
}

static int batch_reshape(Prim p, int nin, jx_array *const *x, const int *bd,
                         const PrimParams *pp, jx_array **y) {
  int64_t shape[JX_MAX_NDIM] = {x[0]->shape[bd[0]]};
  memcpy(shape + 1, pp->shape, (size_t)pp->ndim * sizeof(int64_t));
  *y = prim_reshape(move_axis(x[0], bd[0], 0), pp->ndim + 1, shape);
  return 0;
}

/* transpose: one transpose that also brings the batch axis to the front. */
static int batch_transpose(Prim p, int nin, jx_array *const *x, const int *bd,
                           const PrimParams *pp, jx_array **y) {
  int b = bd[0], perm[JX_MAX_NDIM] = {b};
  for (int i = 0; i < pp->naxes; i++) perm[i + 1] = shifted(pp->axes[i], b);
  *y = prim_transpose(x[0], perm);
  return 0;
}

static int batch_broadcast_in_dim(Prim p, int nin, jx_array *const *x, const int *bd,
                                  const PrimParams *pp, jx_array **y) {
  int64_t shape[JX_MAX_NDIM] = {x[0]->shape[bd[0]]};
  int dims[JX_MAX_NDIM] = {0};
  memcpy(shape + 1, pp->shape, (size_t)pp->ndim * sizeof(int64_t));
  for (int i = 0; i < pp->naxes; i++) dims[i + 1] = pp->axes[i] + 1;
  *y = prim_broadcast_in_dim(move_axis(x[0], bd[0], 0), pp->ndim + 1, shape, dims);
  return 0;
}

/* pad, slice, rev: the batch axis stays where it is and is left untouched. */
static int batch_pad(Prim p, int nin, jx_array *const *x, const int *bd,
                     const PrimParams *pp, jx_array **y) {
  int b = bd[0];
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM];
  for (int d = 0, k = 0; d < x[0]->ndim; d++) {
    lo[d] = d == b ? 0 : pp->start[k];
    hi[d] = d == b ? 0 : pp->stop[k];
    if (d != b) k++;
  }
  *y = prim_pad(x[0], lo, hi, pp->value);
  return b;
}

static int batch_slice(Prim p, int nin, jx_array *const *x, const int *bd,
                       const PrimParams *pp, jx_array **y) {
  int b = bd[0];
  int64_t start[JX_MAX_NDIM], stop[JX_MAX_NDIM], step[JX_MAX_NDIM];
  for (int d = 0, k = 0; d < x[0]->ndim; d++) {
    bool batch = d == b;
    start[d] = batch ? 0 : pp->start[k];
    stop[d] = batch ? x[0]->shape[d] : pp->stop[k];
    step[d] = batch ? 1 : pp->step[k];
    if (!batch) k++;
  }
  *y = prim_slice(x[0], start, stop, step);
  return b;
}

static int batch_rev(Prim p, int nin, jx_array *const *x, const int *bd,
                     const PrimParams *pp, jx_array **y) {
  bool mask[JX_MAX_NDIM] = {false};
  for (int i = 0; i < pp->naxes; i++) mask[shifted(pp->axes[i], bd[0])] = true;
  *y = prim_rev(x[0], mask);
  return bd[0];
}

/* concatenate: like elementwise, then the axis shifts past the batch axis. */
static int batch_concatenate(Prim p, int nin, jx_array *const *x, const int *bd,
                             const PrimParams *pp, jx_array **y) {
  int b = NM;
  for (int i = 0; i < nin && b == NM; i++) b = bd[i];
  int64_t size = batch_size(nin, x, bd);
  jx_array **xs = malloc((size_t)nin * sizeof *xs);
  if (!xs) {
    error_set(JX_ERR_OOM, "vmap: out of memory");
    return NM;
  }
  for (int i = 0; i < nin; i++) xs[i] = batch_at(x[i], bd[i], size, b);
  *y = prim_concatenate(nin, xs, shifted(pp->axis, b));
  free(xs);
  return b;
}

/* Indices idx (batched along axis 0, B entries) into B stacked copies of an axis of n
 * elements: clamp to [0, n-1] (gather's semantics) in idx's own dtype, widen, and
 * offset batch entry b by b*n. */
static jx_array *merged_indices(jx_array *idx, int64_t n) {
  int64_t size = idx->shape[0];
  if (n == 0) return idx; /* nothing is gathered: idx is empty */
  Aval a = prim_aval_of(idx);
  jx_array *lo = tx_full(&a, 0.0), *c = prim_binary(PRIM_max, idx, lo);
  if ((double)(n - 1) < dtype_max_value(idx->dtype)) c = prim_binary(PRIM_min, c, tx_full(&a, (double)(n - 1)));
  jx_dtype wide = size * n - 1 <= INT32_MAX ? JX_INT32 : JX_INT64;
  c = prim_convert(c, wide, false);
  Aval w = {.dtype = wide, .ndim = idx->ndim};
  memcpy(w.shape, idx->shape, (size_t)idx->ndim * sizeof(int64_t));
  jx_array *offset = prim_binary(PRIM_mul, prim_iota(wide, idx->ndim, idx->shape, 0),
                                 tx_full(&w, (double)n));
  return prim_binary(PRIM_add, c, offset);
}

/* gather(x, idx, axis): result dims are x[:axis] + idx.shape + x[axis+1:]. */
static int batch_gather(Prim p, int nin, jx_array *const *x, const int *bd,
                        const PrimParams *pp, jx_array **y) {
  int bx = bd[0], bi = bd[1], axis = pp->axis;
  jx_array *v = x[0], *idx = x[1];
  if (bi == NM) { /* only x is mapped: its batch axis is one of the kept dims */
    *y = prim_gather(v, idx, shifted(axis, bx));
    return bx <= axis ? bx : bx - 1 + idx->ndim;
  }
  if (bx == NM) { /* only idx is mapped: its batch axis lands among idx's dims */
    *y = prim_gather(v, idx, axis);
    return axis + bi;
  }
  /* Both mapped: put x's batch axis just before `axis`, merge the two into one axis
   * of B*n elements and offset each batch entry's indices by b*n. */
  v = move_axis(v, bx, axis);
  if (!v) return NM;
  int64_t n = v->shape[axis + 1], shape[JX_MAX_NDIM];
  int nd = 0;
  for (int d = 0; d < v->ndim; d++) {
    if (d == axis + 1) continue;
    shape[nd++] = d == axis ? v->shape[d] * n : v->shape[d];
  }
  v = prim_reshape(v, nd, shape);
  idx = move_axis(idx, bi, 0);
  if (!v || !idx) return NM;
  *y = prim_gather(v, merged_indices(idx, n), axis);
  return axis;
}

/* dot_general. Both mapped: the batch axes become a new leading batch dimension pair
 * (the result's batch dims come first). One mapped: its batch axis is a free dim, kept
 * in order among that operand's free dims of the result. */
static int batch_dot_general(Prim p, int nin, jx_array *const *x, const int *bd,
                             const PrimParams *pp, jx_array **y) {
  int bx = bd[0], by = bd[1];
  PrimParams q = *pp;
  int bl = bx == NM ? JX_MAX_NDIM : bx, br = by == NM ? JX_MAX_NDIM : by;
  for (int i = 0; i < pp->ncontract; i++) {
    q.lhs_contract[i] = shifted(pp->lhs_contract[i], bl);
    q.rhs_contract[i] = shifted(pp->rhs_contract[i], br);
  }
  for (int i = 0; i < pp->nbatch; i++) {
    q.lhs_batch[i] = shifted(pp->lhs_batch[i], bl);
    q.rhs_batch[i] = shifted(pp->rhs_batch[i], br);
  }
  if (bx != NM && by != NM) {
    memmove(q.lhs_batch + 1, q.lhs_batch, (size_t)pp->nbatch * sizeof(int));
    memmove(q.rhs_batch + 1, q.rhs_batch, (size_t)pp->nbatch * sizeof(int));
    q.lhs_batch[0] = bx;
    q.rhs_batch[0] = by;
    q.nbatch++;
    *y = prim_bind(p, 2, x, &q);
    return 0;
  }
  /* Free dims of an operand (batched coordinates) before its batch axis b. */
  bool used[2][JX_MAX_NDIM] = {{false}};
  for (int i = 0; i < q.ncontract; i++) used[0][q.lhs_contract[i]] = used[1][q.rhs_contract[i]] = true;
  for (int i = 0; i < q.nbatch; i++) used[0][q.lhs_batch[i]] = used[1][q.rhs_batch[i]] = true;
  int side = bx != NM ? 0 : 1, b = side == 0 ? bx : by, out_b = q.nbatch;
  if (side == 1) /* after every free dim of the lhs */
    for (int d = 0; d < x[0]->ndim; d++) out_b += !used[0][d];
  for (int d = 0; d < b; d++) out_b += !used[side][d];
  *y = prim_bind(p, 2, x, &q);
  return out_b;
}

/* One line per primitive (primitives.def). An entry without a rule says why. */

/* sort along an axis: every operand gets the batch axis where the first mapped one
 * has it; it is one more kept axis. */
static int batch_sort(Prim p, int nin, jx_array *const *x, const int *bd,
                      const PrimParams *pp, jx_array **y) {
  int b = NM;
  for (int i = 0; i < nin && b == NM; i++) b = bd[i];
  int64_t size = batch_size(nin, x, bd);
  jx_array **xs = malloc((size_t)nin * sizeof *xs);
  if (!xs) {
    error_set(JX_ERR_OOM, "vmap: out of memory");
    return NM;
  }
  for (int i = 0; i < nin; i++) xs[i] = batch_at(x[i], bd[i], size, b);
  PrimParams q = *pp;
  q.axis = shifted(pp->axis, b);
  prim_sort_n(nin, xs, q.axis, y);
  free(xs);
  return b;
}

/* Linear algebra: leading dims are batch dims, so every operand gets the batch axis
 * in front (unmapped ones are broadcast) and so do the results (JAX's rules). */
static int batch_linalg(Prim p, int nin, jx_array *const *x, const int *bd,
                        const PrimParams *pp, jx_array **y) {
  int64_t size = batch_size(nin, x, bd);
  jx_array *xs[4] = {NULL, NULL, NULL, NULL}; /* tridiagonal_solve has the most: 4 */
  for (int i = 0; i < nin && i < 4; i++) xs[i] = batch_at(x[i], bd[i], size, 0);
  prim_bind_n(p, nin, xs, pp, prim_nout(p, nin, pp), y);
  return 0;
}

static const TraceType batch_type;

Jaxpr *vmap_jaxpr(const Jaxpr *sub, const Aval *avals, const int *bd, int64_t size) {
  int nin = sub->nin, nout = sub->nout;
  jx_array **in = calloc((size_t)nin + 1, sizeof *in), **outs = calloc((size_t)nout + 1, sizeof *outs);
  Trace *st = in && outs ? stage_begin() : NULL;
  Trace *bt = st ? trace_push(&batch_type, NULL) : NULL;
  bool ok = bt != NULL;
  if (!in || !outs) error_set(JX_ERR_OOM, "vmap: out of memory");
  for (int i = 0; ok && i < nin; i++) {
    jx_array *v = stage_new_input(st, &avals[i]);
    Aval a = sub->vars[sub->invars[i]];
    ok = v && (in[i] = bd[i] == NM ? v : batch_tracer(bt, v, bd[i], &a)) != NULL;
  }
  ok = ok && prim_eval_jaxpr(sub, in, outs) == JX_OK;
  for (int o = 0; ok && o < nout; o++) {
    jx_array *val;
    int b = batch_unpack(bt, outs[o], &val);
    ok = (outs[o] = batch_at(val, b, size, 0)) != NULL;
  }
  if (bt) trace_pop(bt);
  Jaxpr *J = st ? stage_end(st, ok ? nout : 0, outs) : NULL;
  ok = ok && J;
  if (ok && sub->name && (J->name = malloc(strlen(sub->name) + 8)))
    strcat(strcat(strcpy(J->name, "vmap("), sub->name), ")");
  free(in), free(outs);
  if (!ok) jaxpr_free(J), J = NULL;
  return J;
}

/* A call: its jaxpr batched and called as one equation (JAX's batching of pjit). */
static Jaxpr *batch_jaxpr(const Jaxpr *sub, jx_array *const *x, const int *bd, int64_t size) {
  Aval *avals = calloc((size_t)sub->nin + 1, sizeof *avals);
  if (!avals) {
    error_set(JX_ERR_OOM, "vmap: out of memory");
    return NULL;
  }
  for (int i = 0; i < sub->nin; i++) avals[i] = prim_aval_of(x[i]);
  Jaxpr *J = vmap_jaxpr(sub, avals, bd, size);
  free(avals);
  return J;
}

static int batch_call(Prim p, int nin, jx_array *const *x, const int *bd,
                      const PrimParams *pp, jx_array **y) {
  Jaxpr *J = batch_jaxpr(pp->jaxpr, x, bd, batch_size(nin, x, bd));
  bool ok = J && prim_call(J, nin, x, y) == JX_OK;
  jaxpr_free(J);
  if (!ok) y[0] = NULL;
  return ok ? 0 : NM;
}

/* Operands with their batch axes moved to 0 (xs), axes[i] 0 or NM. */
static void batch_front(int nin, jx_array *const *x, const int *bd, jx_array **xs, int *axes) {
  for (int i = 0; i < nin; i++) {
    xs[i] = bd[i] == NM ? x[i] : move_axis(x[i], bd[i], 0);
    axes[i] = bd[i] == NM ? NM : 0;
  }
}

/* Collectives: psum, pmax, pmin and ppermute act elementwise over the non-named dims,
 * so the batch dim stays where it is; the others get it in front and their axes shift
 * by one (JAX's _all_gather_batcher and friends). */
static int batch_collective(Prim p, int nin, jx_array *const *x, const int *bd,
                            const PrimParams *pp, jx_array **y) {
  if (p == PRIM_psum || p == PRIM_pmax || p == PRIM_pmin || p == PRIM_ppermute) {
    y[0] = prim_collective_like(p, x[0], pp);
    return bd[0];
  }
  PrimParams q = *pp;
  q.axis++;
  if (p == PRIM_all_to_all) q.axis2++;
  y[0] = prim_collective_like(p, move_axis(x[0], bd[0], 0), &q);
  return 0;
}

/* debug_print (JAX's sequential batching of debug callbacks): one print per batch
 * element, in order, each of that element's slice of the batched operands. */
static int batch_debug_print(Prim p, int nin, jx_array *const *x, const int *bd,
                             const PrimParams *pp, jx_array **y) {
  int64_t size = batch_size(nin, x, bd);
  jx_array **xb = calloc((size_t)nin + 1, sizeof *xb);
  bool ok = xb != NULL;
  if (!ok) error_set(JX_ERR_OOM, "vmap: out of memory");
  for (int64_t b = 0; ok && b < size; b++) {
    for (int i = 0; ok && i < nin; i++) {
      xb[i] = x[i];
      if (bd[i] == NM) continue;
      int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM], step[JX_MAX_NDIM], shape[JX_MAX_NDIM];
      for (int d = 0, k = 0; d < x[i]->ndim; d++) {
        stop[d] = x[i]->shape[d], step[d] = 1;
        if (d == bd[i]) start[d] = b, stop[d] = b + 1;
        else shape[k++] = x[i]->shape[d];
      }
      ok = (xb[i] = prim_reshape(prim_slice(x[i], start, stop, step), x[i]->ndim - 1, shape)) != NULL;
    }
    ok = ok && prim_bind_n(p, nin, xb, pp, 0, NULL) == JX_OK;
  }
  free(xb);
  if (!ok) y[0] = NULL;
  return 0;
}

/* custom_lin meets a batch level only when batched tangents flow through a custom_vjp
 * in forward mode (jacfwd, vmap of jvp): reverse mode stages it above any vmap, and
 * custom_vjp_call's own rule batches fwd and bwd. So this is JAX's forward-mode error. */
static int batch_custom_lin(Prim p, int nin, jx_array *const *x, const int *bd,
                            const PrimParams *pp, jx_array **y) {
  error_set(JX_ERR_UNSUPPORTED, "can't apply forward-mode autodiff (jvp) to a custom_vjp function (%s); "
            "use reverse mode (grad, vjp, jacrev) or define it with custom_jvp",
            pp->jaxpr->name ? pp->jaxpr->name : "<lambda>");
  y[0] = NULL;
  return NM;
}

/* checkpoint: one checkpoint of the batched program, same policy. */
static int batch_checkpoint(Prim p, int nin, jx_array *const *x, const int *bd,
                            const PrimParams *pp, jx_array **y) {
  Jaxpr *J = batch_jaxpr(pp->jaxpr, x, bd, batch_size(nin, x, bd));
  bool ok = J && prim_checkpoint(J, pp->flags, nin, x, y) == JX_OK;
  jaxpr_free(J);
  if (!ok) y[0] = NULL;
  return ok ? 0 : NM;
}

/* custom_jvp_call (JAX's _custom_jvp_call_vmap): the batched program, and the rule
 * batched alike -- each tangent mapped as its primal, every result along axis 0. */
static int batch_custom_jvp_call(Prim p, int nin, jx_array *const *x, const int *bd,
                                 const PrimParams *pp, jx_array **y) {
  unsigned nondiff = pp->flags;
  jx_fn *rule = pp->fns[0];
  jx_array **xs = calloc((size_t)nin + 1, sizeof *xs);
  int *axes = calloc((size_t)nin + 1, sizeof *axes), *rin = calloc((size_t)(2 * nin + 1), sizeof *rin);
  int *rout = calloc((size_t)(2 * pp->jaxpr->nout + 1), sizeof *rout); /* zeros: axis 0 */
  bool ok = xs && axes && rin && rout;
  if (!ok) error_set(JX_ERR_OOM, "vmap: out of memory");
  Jaxpr *J = NULL;
  jx_fn *rb = NULL;
  if (ok) {
    batch_front(nin, x, bd, xs, axes);
    int n = 0;
    for (int i = 0; i < nin; i++)
      if (nondiff >> i & 1) rin[n++] = axes[i];
    for (int pass = 0; pass < 2; pass++) /* diff primals, then their tangents */
      for (int i = 0; i < nin; i++)
        if (!(nondiff >> i & 1)) rin[n++] = axes[i];
    J = batch_jaxpr(pp->jaxpr, xs, axes, batch_size(nin, x, bd));
    rb = J ? jx_vmap(rule, rin, rout) : NULL;
    ok = rb && prim_custom_jvp_call(J, rb, nondiff, nin, xs, y) == JX_OK;
  }
  jx_fn_free(rb);
  jaxpr_free(J);
  free(xs), free(axes), free(rin), free(rout);
  if (!ok) y[0] = NULL;
  return ok ? 0 : NM;
}

/* bwd of a batched custom_vjp: the user's bwd vmapped over residuals and cotangents
 * (all batched along 0), then the cotangents of unbatched operands summed over the
 * batch (JAX's batching of custom_vjp's bwd). */
typedef struct BatchedBwd {
  jx_fn *vb;
  int nin;
  bool unbatched[];
} BatchedBwd;

static void batched_bwd_free(void *ctx) {
  BatchedBwd *c = ctx;
  fn_release(c->vb);
  free(c);
}

static jx_status batched_bwd(void *ctx, jx_array *const *in, jx_array **out) {
  BatchedBwd *c = ctx;
  jx_status s = jx_call(c->vb, in, out);
  for (int i = 0; s == JX_OK && i < c->nin; i++) {
    if (!c->unbatched[i]) continue;
    bool mask[JX_MAX_NDIM] = {true};
    if (!(out[i] = prim_reduce(PRIM_reduce_sum, out[i], mask))) s = jx_last_status();
  }
  return s;
}

/* custom_vjp_call (JAX's _custom_vjp_call_vmap): the batched program, fwd batched with
 * every output (results and residuals) along axis 0, and bwd batched by batched_bwd. */
static int batch_custom_vjp_call(Prim p, int nin, jx_array *const *x, const int *bd,
                                 const PrimParams *pp, jx_array **y) {
  jx_fn *fwd = pp->fns[0], *bwd = pp->fns[1];
  int nfo = jx_fn_nout(fwd), nbi = jx_fn_nin(bwd);
  jx_array **xs = calloc((size_t)nin + 1, sizeof *xs);
  int *axes = calloc((size_t)nin + 1, sizeof *axes), *zeros = calloc((size_t)(nfo + nbi + nin + 1), sizeof *zeros);
  BatchedBwd *c = calloc(1, sizeof *c + (size_t)nin + 1);
  bool ok = xs && axes && zeros && c;
  if (!ok) error_set(JX_ERR_OOM, "vmap: out of memory");
  Jaxpr *J = NULL;
  jx_fn *fb = NULL, *bb = NULL;
  if (ok) {
    batch_front(nin, x, bd, xs, axes);
    c->nin = nin;
    for (int i = 0; i < nin; i++) c->unbatched[i] = axes[i] == NM;
    J = batch_jaxpr(pp->jaxpr, xs, axes, batch_size(nin, x, bd));
    fb = J ? jx_vmap(fwd, axes, zeros) : NULL;
    c->vb = fb ? jx_vmap(bwd, zeros, zeros) : NULL;
    if (c->vb) fn_retain(c->vb), jx_fn_free(c->vb);
    bb = c->vb ? jx_fn_new_with_free(jx_fn_name(c->vb), nbi, nin, batched_bwd, c, batched_bwd_free) : NULL;
    if (bb) c = NULL; /* owned by bb */
    ok = bb && prim_custom_vjp_call(J, fb, bb, nin, xs, y) == JX_OK;
  }
  if (c) batched_bwd_free(c);
  jx_fn_free(fb), jx_fn_free(bb);
  jaxpr_free(J);
  free(xs), free(axes), free(zeros);
  if (!ok) y[0] = NULL;
  return ok ? 0 : NM;
}

/* special_call: its jaxpr batched, the same rule (JAX batches the rule with the
 * function; jaxc's rules are written for any leading batch dims). Batched operands
 * come first with their batch dim in front, so that a rule of matrices (det's) sees
 * (B, ..., n, n) and not the batch dim among the matrix dims. */
static int batch_special(Prim p, int nin, jx_array *const *x, const int *bd,
                         const PrimParams *pp, jx_array **y) {
  jx_array **xs = calloc((size_t)nin + 1, sizeof *xs);
  int *axes = calloc((size_t)nin + 1, sizeof *axes);
  bool ok = xs && axes;
  if (!ok) error_set(JX_ERR_OOM, "vmap: out of memory");
  if (ok) batch_front(nin, x, bd, xs, axes);
  for (int i = 0; ok && i < nin; i++) ok = xs[i] != NULL;
  Jaxpr *J = ok ? batch_jaxpr(pp->jaxpr, xs, axes, batch_size(nin, x, bd)) : NULL;
  ok = J && prim_special_call(pp->rule, J, nin, xs, y) == JX_OK;
  jaxpr_free(J);
  for (int i = 0; xs && i < nin; i++)
    if (xs[i] != x[i]) jx_free(xs[i]);
  free(xs), free(axes);
  if (!ok) y[0] = NULL;
  return ok ? 0 : NM;
}

/* cond (JAX's _cond_batching_rule): an unbatched index stays one cond of the batched
 * branches; a batched index runs every batched branch and selects each lane's result
 * (select_n on index == b), as the predicate differs per lane. */
static int batch_cond(Prim p, int nin, jx_array *const *x, const int *bd,
                      const PrimParams *pp, jx_array **y) {
  int n = pp->nbranches, nout = pp->branches[0]->nout;
  int64_t size = batch_size(nin, x, bd);
  Jaxpr *J[PRIM_MAX_BRANCHES] = {NULL};
  bool ok = true;
  for (int b = 0; ok && b < n; b++) ok = (J[b] = batch_jaxpr(pp->branches[b], x + 1, bd + 1, size)) != NULL;
  if (ok && bd[0] == NM) {
    ok = prim_cond(n, J, x[0], nin - 1, x + 1, y) == JX_OK;
  } else if (ok) {
    jx_array **r = calloc((size_t)nout + 1, sizeof *r);
    jx_array *ix = batch_at(x[0], bd[0], size, 0); /* (B,) */
    ok = r && ix;
    if (!r) error_set(JX_ERR_OOM, "vmap: out of memory");
    for (int b = 0; ok && b < n; b++) {
      ok = prim_eval_jaxpr(J[b], x + 1, r) == JX_OK;
      Aval ia = prim_aval_of(ix);
      jx_array *is_b = ok ? prim_binary(PRIM_eq, ix, tx_full(&ia, b)) : NULL;
      ok = ok && is_b;
      for (int o = 0; ok && o < nout; o++) {
        if (b == 0) {
          y[o] = r[o];
          continue;
        }
        jx_array *m = prim_broadcast_in_dim(is_b, r[o]->ndim, r[o]->shape, (int[]){0});
        ok = (y[o] = prim_select(m, r[o], y[o])) != NULL;
      }
    }
    free(r);
  }
  for (int b = 0; b < n; b++) jaxpr_free(J[b]);
  if (!ok) y[0] = NULL;
  return ok ? 0 : NM;
}

/* scatter_add(x, idx, upd): x and upd get the batch axis at 0 (broadcast if unmapped).
 * Unmapped indices: scatter along axis + 1. Mapped indices: x's batch axis moves next
 * to `axis` and merges with it, and each batch entry's indices are offset by b*n, as
 * in the gather rule. */
static int batch_scatter_add(Prim p, int nin, jx_array *const *x, const int *bd,
                             const PrimParams *pp, jx_array **y) {
  int axis = pp->axis;
  int64_t B = batch_size(nin, x, bd);
  jx_array *v = batch_at(x[0], bd[0], B, 0), *idx = x[1];
  if (bd[1] == NM) {
    jx_array *u = batch_at(x[2], bd[2], B, 0);
    *y = prim_scatter_add(v, idx, u, axis + 1);
    return 0;
  }
  /* v (B, pre, n, post) -> (pre, B*n, post); idx (B, I) -> idx + b*n;
   * upd (pre, B, I, post): its batch axis goes just before the index dims. */
  v = move_axis(v, 0, axis);
  if (!v) return NM;
  int64_t n = v->shape[axis + 1], shape[JX_MAX_NDIM];
  int nd = 0;
  for (int d = 0; d < v->ndim; d++) {
    if (d == axis + 1) continue;
    shape[nd++] = d == axis ? v->shape[d] * n : v->shape[d];
  }
  jx_array *merged = prim_reshape(v, nd, shape);
  idx = move_axis(idx, bd[1], 0);
  jx_array *u = batch_at(x[2], bd[2], B, axis);
  if (!merged || !idx || !u) return NM;
  jx_array *r = prim_scatter_add(merged, merged_indices(idx, n), u, axis);
  if (!r) return NM;
  int64_t back[JX_MAX_NDIM];
  memcpy(back, v->shape, (size_t)v->ndim * sizeof(int64_t));
  *y = prim_reshape(r, v->ndim, back);
  return axis;
}

static const struct {
  BatchRule rule;
  const char *absent; /* why there is no rule (rule == NULL only) */
} batch_rules[PRIM_NUM] = {
    [PRIM_neg] = {batch_elementwise},
    [PRIM_not] = {batch_elementwise},
    [PRIM_abs] = {batch_elementwise},
    [PRIM_sign] = {batch_elementwise},
    [PRIM_sin] = {batch_elementwise},
    [PRIM_cos] = {batch_elementwise},
    [PRIM_tan] = {batch_elementwise},
    [PRIM_asin] = {batch_elementwise},
    [PRIM_acos] = {batch_elementwise},
    [PRIM_atan] = {batch_elementwise},
    [PRIM_sinh] = {batch_elementwise},
    [PRIM_cosh] = {batch_elementwise},
    [PRIM_tanh] = {batch_elementwise},
    [PRIM_asinh] = {batch_elementwise},
    [PRIM_acosh] = {batch_elementwise},
    [PRIM_atanh] = {batch_elementwise},
    [PRIM_exp] = {batch_elementwise},
    [PRIM_exp2] = {batch_elementwise},
    [PRIM_expm1] = {batch_elementwise},
    [PRIM_log] = {batch_elementwise},
    [PRIM_log2] = {batch_elementwise},
    [PRIM_log1p] = {batch_elementwise},
    [PRIM_sqrt] = {batch_elementwise},
    [PRIM_rsqrt] = {batch_elementwise},
    [PRIM_cbrt] = {batch_elementwise},
    [PRIM_reciprocal] = {batch_elementwise},
    [PRIM_floor] = {batch_elementwise},
    [PRIM_ceil] = {batch_elementwise},
    [PRIM_round] = {batch_elementwise},
    [PRIM_trunc] = {batch_elementwise},
    [PRIM_erf] = {batch_elementwise},
    [PRIM_erfc] = {batch_elementwise},
    [PRIM_is_nan] = {batch_elementwise},
    [PRIM_is_inf] = {batch_elementwise},
    [PRIM_add] = {batch_elementwise},
    [PRIM_sub] = {batch_elementwise},
    [PRIM_mul] = {batch_elementwise},
    [PRIM_div] = {batch_elementwise},
    [PRIM_rem] = {batch_elementwise},
    [PRIM_pow] = {batch_elementwise},
    [PRIM_max] = {batch_elementwise},
    [PRIM_min] = {batch_elementwise},
    [PRIM_atan2] = {batch_elementwise},
    [PRIM_and] = {batch_elementwise},
    [PRIM_or] = {batch_elementwise},
    [PRIM_xor] = {batch_elementwise},
    [PRIM_shift_left] = {batch_elementwise},
    [PRIM_shift_right] = {batch_elementwise},
    [PRIM_lt] = {batch_elementwise},
    [PRIM_ne] = {batch_elementwise},
    [PRIM_eq] = {batch_elementwise},
    [PRIM_real] = {batch_elementwise},
    [PRIM_imag] = {batch_elementwise},
    [PRIM_conj] = {batch_elementwise},
    [PRIM_complex] = {batch_elementwise},
    [PRIM_select] = {batch_elementwise},
    [PRIM_fma] = {batch_elementwise},
    [PRIM_convert_element_type] = {batch_elementwise},
    [PRIM_bitcast_convert_type] = {batch_elementwise},
    [PRIM_reduce_sum] = {batch_reduce},
    [PRIM_reduce_prod] = {batch_reduce},
    [PRIM_reduce_max] = {batch_reduce},
    [PRIM_reduce_min] = {batch_reduce},
    [PRIM_reduce_and] = {batch_reduce},
    [PRIM_reduce_or] = {batch_reduce},
    [PRIM_reshape] = {batch_reshape},
    [PRIM_transpose] = {batch_transpose},
    [PRIM_broadcast_in_dim] = {batch_broadcast_in_dim},
    [PRIM_pad] = {batch_pad},
    [PRIM_slice] = {batch_slice},
    [PRIM_rev] = {batch_rev},
    [PRIM_stop_gradient] = {batch_elementwise}, /* identity: the batch axis stays */
    [PRIM_threefry2x32] = {batch_elementwise},
    [PRIM_concatenate] = {batch_concatenate},
    [PRIM_gather] = {batch_gather},
    [PRIM_dot_general] = {batch_dot_general},
    [PRIM_sort] = {batch_sort},
    [PRIM_cholesky] = {batch_linalg},
    [PRIM_triangular_solve] = {batch_linalg},
    [PRIM_lu] = {batch_linalg},
    [PRIM_qr] = {batch_linalg},
    [PRIM_eigh] = {batch_linalg},
    [PRIM_svd] = {batch_linalg},
    [PRIM_eig] = {batch_linalg},
    [PRIM_tridiagonal_solve] = {batch_linalg},
    [PRIM_fft] = {batch_linalg}, /* batch dims to the front, as JAX's _fft_batching_rule */
    [PRIM_jit] = {batch_call},
    [PRIM_special_call] = {batch_special},
    [PRIM_cond] = {batch_cond},
    [PRIM_custom_jvp_call] = {batch_custom_jvp_call},
    [PRIM_custom_vjp_call] = {batch_custom_vjp_call},
    [PRIM_checkpoint] = {batch_checkpoint},
    [PRIM_debug_print] = {batch_debug_print},
    [PRIM_custom_lin] = {batch_custom_lin},
    [PRIM_while] = {loops_batch_while},
    [PRIM_scan] = {loops_batch_scan},
    [PRIM_scatter_add] = {batch_scatter_add},
    [PRIM_iota] = {NULL, "no operands, so never applied to a batch tracer"},
    [PRIM_axis_index] = {NULL, "no operands, so never applied to a batch tracer"},
    [PRIM_psum] = {batch_collective},     [PRIM_pmax] = {batch_collective},
    [PRIM_pmin] = {batch_collective},     [PRIM_ppermute] = {batch_collective},
    [PRIM_all_gather] = {batch_collective}, [PRIM_psum_scatter] = {batch_collective},
    [PRIM_all_to_all] = {batch_collective},
    [PRIM_shard_map] = {shard_map_batch}, /* transform/shard_map.c */
};

/* For the rule-table test: true if p has a batching rule; otherwise *absent (if
 * non-NULL) receives the documented reason, or NULL when the rule is simply missing. */
bool vmap_has_rule(Prim p, const char **absent) {
  if (absent) *absent = (unsigned)p < PRIM_NUM ? batch_rules[p].absent : NULL;
  return (unsigned)p < PRIM_NUM && batch_rules[p].rule != NULL;
}

/* ------------------------------------------------------------ the trace */

static jx_status batch_process(Trace *t, Prim p, int nin, jx_array *const *in,
                               const PrimParams *pp, int nout, const Aval *avals, jx_array **out) {
  jx_array **x = malloc((size_t)(nin + nout + 1) * sizeof *x), **y = x ? x + nin : NULL;
  int *bd = malloc((size_t)(nin + 1) * sizeof *bd);
  jx_status s = x && bd ? JX_OK : JX_ERR_OOM;
  if (s != JX_OK) {
    free(x), free(bd);
    error_set(s, "vmap: out of memory");
    return s;
  }
  bool mapped = false;
  for (int i = 0; i < nin; i++) mapped |= (bd[i] = batch_unpack(t, in[i], &x[i])) != NM;
  for (int o = 0; o < nout; o++) y[o] = NULL;
  if (!mapped) {
    s = prim_bind_n(p, nin, x, pp, nout, out);
  } else if (!batch_rules[p].rule) {
    error_set(JX_ERR_UNSUPPORTED, "vmap: %s has no batching rule", prim_name(p));
    s = JX_ERR_UNSUPPORTED;
  } else {
    for (int o = 0; s == JX_OK && o < nout; o++)
      if (avals[o].ndim >= JX_MAX_NDIM) {
        error_set(JX_ERR_UNSUPPORTED, "vmap: batching %s needs rank %d, above JX_MAX_NDIM (%d)",
                  prim_name(p), avals[o].ndim + 1, JX_MAX_NDIM);
        s = JX_ERR_UNSUPPORTED;
      }
  }
  if (mapped && s == JX_OK) {
    int64_t size = batch_size(nin, x, bd);
    jx_scope_begin();
    int b = batch_rules[p].rule(p, nin, x, bd, pp, y);
    /* The rule's results must be the avals with a batch axis of `size` at b. */
    for (int o = 0; s == JX_OK && o < nout; o++) {
      const Aval *av = &avals[o];
      bool ok = y[o] && b >= 0 && b <= av->ndim && y[o]->ndim == av->ndim + 1 && y[o]->shape[b] == size;
      for (int d = 0; ok && d < av->ndim; d++) ok = y[o]->shape[shifted(d, b)] == av->shape[d];
      if (ok && !JX_CHECK(y[o]->dtype == av->dtype)) ok = false;
      if (!ok && !error_pending()) {
        char b0[ARRAY_DESCRIBE_BUF], b1[ERROR_SHAPE_BUF];
        error_set(JX_ERR_INTERNAL, "vmap: the batching rule of %s gave %s with batch axis %d for %s",
                  prim_name(p), y[o] ? array_describe(b0, y[o]) : "nothing", b,
                  error_shape_str(b1, av->ndim, av->shape));
      }
      if (ok && !(out[o] = batch_tracer(t, y[o], b, av))) ok = false;
      if (!ok) s = jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
    }
    if (s != JX_OK)
      for (int o = 0; o < nout; o++) jx_free(out[o]), out[o] = NULL;
    jx_scope_end(s == JX_OK ? nout : 0, out);
  }
  free(x), free(bd);
  return s;
}

static const TraceType batch_type = {.name = "batch", .process = batch_process};

/* ------------------------------------------------------------ jx_vmap */

typedef struct VmapCtx {
  jx_fn *f;
  int *in_axes;  /* jx_fn_nin(f) entries */
  int *out_axes; /* jx_fn_nout(f) entries */
} VmapCtx;

static void vmap_free(void *ctx) {
  VmapCtx *c = ctx;
  fn_release(c->f);
  free(c);
}

/* Checks the mapped inputs' axes and sizes; fills axes[] (normalized) and *size. */
static jx_status vmap_check_inputs(const VmapCtx *c, jx_array *const *in, int *axes,
                                   int64_t *size) {
  const char *name = jx_fn_name(c->f);
  int first = -1;
  char b0[ARRAY_DESCRIBE_BUF];
  for (int i = 0; i < jx_fn_nin(c->f); i++) {
    int a = axes[i] = c->in_axes[i];
    if (a == NM) continue;
    if (a < -in[i]->ndim || a >= in[i]->ndim) {
      error_set(JX_ERR_SHAPE, "jx_vmap(%s): in_axes[%d] = %d is out of range for input %d of %s",
                name, i, a, i, array_describe(b0, in[i]));
      return JX_ERR_SHAPE;
    }
    axes[i] = a = a < 0 ? a + in[i]->ndim : a;
    if (first < 0) {
      first = i;
      *size = in[i]->shape[a];
    } else if (in[i]->shape[a] != *size) {
      error_set(JX_ERR_SHAPE, "jx_vmap(%s): mapped axes have different sizes: input %d has size "
                "%lld on axis %d but input %d has size %lld on axis %d", name, i,
                (long long)in[i]->shape[a], a, first, (long long)*size, axes[first]);
      return JX_ERR_SHAPE;
    }
  }
  if (first < 0) {
    error_set(JX_ERR_VALUE, "jx_vmap(%s): no input is mapped (every in_axes entry is "
              "JX_NOT_MAPPED)", name);
    return JX_ERR_VALUE;
  }
  return JX_OK;
}

/* Output o of the batched function: (val, bdim) moved to out_axes[o]. */
static jx_array *vmap_output(const VmapCtx *c, int o, jx_array *val, int bdim, int ndim,
                             int64_t size) {
  const char *name = jx_fn_name(c->f);
  int a = c->out_axes[o];
  if (a == NM) {
    if (bdim == NM) return val;
    error_set(JX_ERR_VALUE, "jx_vmap(%s): output %d depends on the mapped axis but "
              "out_axes[%d] is JX_NOT_MAPPED", name, o, o);
    return NULL;
  }
  if (a < -(ndim + 1) || a > ndim) {
    error_set(JX_ERR_SHAPE, "jx_vmap(%s): out_axes[%d] = %d is out of range for output %d of "
              "rank %d (rank %d with the batch axis)", name, o, a, o, ndim, ndim + 1);
    return NULL;
  }
  if (a < 0) a += ndim + 1;
  if (val->dtype == JX_FLOAT0) { /* no data: a float0 array of the batched shape */
    if (ndim + 1 > JX_MAX_NDIM) {
      error_set(JX_ERR_SHAPE, "jx_vmap(%s): output %d has rank %d already", name, o, ndim);
      return NULL;
    }
    int64_t shape[JX_MAX_NDIM];
    memcpy(shape, val->shape, (size_t)a * sizeof *shape);
    shape[a] = size;
    memcpy(shape + a + 1, val->shape + a, (size_t)(ndim - a) * sizeof *shape);
    return array_float0(ndim + 1, shape);
  }
  return batch_at(val, bdim, size, a);
}

static jx_status vmap_impl(void *ctx, jx_array *const *in, jx_array **out) {
  const VmapCtx *c = ctx;
  int nin = jx_fn_nin(c->f), nout = jx_fn_nout(c->f);
  int64_t size = 0;
  int *axes = calloc((size_t)nin + 1, sizeof *axes);
  jx_array **ins = calloc((size_t)nin + 1, sizeof *ins);
  jx_array **outs = calloc((size_t)nout, sizeof *outs), **res = calloc((size_t)nout, sizeof *res);
  jx_status s = axes && ins && outs && res ? JX_OK : JX_ERR_OOM;
  if (s == JX_ERR_OOM) error_set(s, "jx_vmap(%s): out of memory", jx_fn_name(c->f));
  if (s == JX_OK) s = vmap_check_inputs(c, in, axes, &size);
  Trace *t = s == JX_OK ? trace_push(&batch_type, NULL) : NULL;
  if (s == JX_OK && !t) s = jx_last_status();
  if (s != JX_OK) goto done;

  jx_scope_begin();
  /* Mapped inputs become tracers of t; unmapped ones are passed as they are. */
  for (int i = 0; s == JX_OK && i < nin; i++) {
    ins[i] = in[i];
    if (axes[i] == NM) continue;
    Aval a = prim_aval_of(in[i]);
    a.ndim--;
    memmove(a.shape + axes[i], a.shape + axes[i] + 1, (size_t)(a.ndim - axes[i]) * sizeof(int64_t));
    /* float0 holds no data: each example's value is a float0 array of a's shape */
    ins[i] = in[i]->dtype == JX_FLOAT0 ? array_float0(a.ndim, a.shape) : batch_tracer(t, in[i], axes[i], &a);
    if (!ins[i]) s = jx_last_status();
  }
  if (s == JX_OK) s = jx_call(c->f, ins, outs);
  trace_pop(t);
  for (int o = 0; s == JX_OK && o < nout; o++) {
    jx_array *val;
    int bdim = batch_unpack(t, outs[o], &val);
    if (!(res[o] = jx_ref(vmap_output(c, o, val, bdim, outs[o]->ndim, size)))) s = jx_last_status();
  }
  if (s != JX_OK)
    for (int o = 0; o < nout; o++) res[o] = NULL;
  jx_scope_end(nout, res); /* one reference per output moves to jx_call's scope */
  for (int o = 0; o < nout; o++) out[o] = res[o];

done:
  free(axes), free(ins), free(outs), free(res);
  return s;
}

jx_fn *jx_vmap(jx_fn *f, const int *in_axes, const int *out_axes) {
  if (!f) {
    error_set(JX_ERR_VALUE, "jx_vmap: the function is NULL");
    return NULL;
  }
  int nin = jx_fn_nin(f), nout = jx_fn_nout(f);
  VmapCtx *c = calloc(1, sizeof *c + (size_t)(nin + nout) * sizeof(int));
  const char *fname = jx_fn_name(f);
  char *name = malloc(strlen(fname) + 8);
  if (!c || !name) {
    free(c), free(name);
    error_set(JX_ERR_OOM, "jx_vmap: out of memory");
    return NULL;
  }
  c->in_axes = (int *)(c + 1);
  c->out_axes = c->in_axes + nin;
  for (int i = 0; i < nin; i++) c->in_axes[i] = in_axes ? in_axes[i] : 0;
  for (int o = 0; o < nout; o++) c->out_axes[o] = out_axes ? out_axes[o] : 0;
  c->f = fn_retain(f);
  strcat(strcat(strcpy(name, "vmap("), fname), ")");
  jx_fn *g = jx_fn_new_with_free(name, nin, nout, vmap_impl, c, vmap_free);
  free(name);
  if (!g) vmap_free(c);
  return g;
}
