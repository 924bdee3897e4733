/* loops_hoist.c -- a jit pass over scans (past JAX, whose scans run every product of
 * the body once per trip): a product in a scan body that reads only the xs and the
 * consts (not a carry), such as an RNN's input projection x_t @ W, is computed for all
 * trips at once before the loop -- the body's xs-only part batched over the trips with
 * vmap, so T small GEMMs become one large one -- and the body reads its slice of the
 * result as one more x. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/loops.h"

/* The stacked products stay below this many bytes per scan (they are held for the
 * whole loop). */
#define HOIST_MAX_BYTES ((size_t)512 << 20)

static size_t aval_bytes(const Aval *a) {
  return (size_t)shape_numel(a->ndim, a->shape) * jx_dtype_itemsize(a->dtype);
}

/* The most operands and results of any of j's equations. */
static int eqn_arity(const Jaxpr *j) {
  int most = 1;
  for (int e = 0; e < j->neqns; e++)
    if (j->eqns[e].nin + j->eqns[e].nout > most) most = j->eqns[e].nin + j->eqns[e].nout;
  return most;
}

/* hoist[e] for the products of body bj (nk consts, nc carries, then xs) worth hoisting
 * out of a scan of `length` trips; returns how many. */
static int find_products(const Jaxpr *bj, int nk, int nc, int64_t length, bool *hoist) {
  bool *carry = calloc((size_t)bj->nvars + 1, 1), *xdep = calloc((size_t)bj->nvars + 1, 1);
  if (!carry || !xdep) {
    free(carry), free(xdep);
    return 0; /* an optimization: skipped on OOM */
  }
  for (int i = nk; i < bj->nin; i++) (i < nk + nc ? carry : xdep)[bj->invars[i]] = true;
  int n = 0;
  size_t bytes = 0;
  for (int e = 0; e < bj->neqns; e++) {
    const JaxprEqn *q = &bj->eqns[e];
    bool c = prim_kind(q->prim) == PRIM_KIND_EFFECT, x = false;
    for (int i = 0; i < q->nin; i++) c |= carry[q->in[i]], x |= xdep[q->in[i]];
    for (int o = 0; o < q->nout; o++) carry[q->out[o]] = c, xdep[q->out[o]] = x;
    hoist[e] = false;
    if (q->prim != PRIM_dot_general || c || !x) continue;
    size_t b = aval_bytes(&bj->vars[q->out[0]]) * (size_t)length;
    if (bytes + b > HOIST_MAX_BYTES) continue;
    hoist[e] = true, bytes += b, n++;
  }
  free(carry), free(xdep);
  return n;
}

/* The body's xs-only part: (consts, x slices) -> the hoisted products' results. */
static Jaxpr *pre_jaxpr(const Jaxpr *bj, int nk, int nc, const bool *hoist) {
  jx_array **env = calloc((size_t)bj->nvars + 1, sizeof *env), **outs = calloc((size_t)bj->neqns + 1, sizeof *outs);
  jx_array **args = calloc((size_t)eqn_arity(bj) + 1, sizeof *args);
  bool ok = env && outs && args;
  if (!ok) error_set(JX_ERR_OOM, "jit: out of memory hoisting products out of a scan");
  Trace *st = ok ? stage_begin() : NULL;
  ok = ok && st;
  for (int c = 0; ok && c < bj->nconst; c++) env[bj->constvars[c]] = bj->consts[c];
  for (int i = 0; ok && i < bj->nin; i++)
    if (i < nk || i >= nk + nc) ok = (env[bj->invars[i]] = stage_new_input(st, &bj->vars[bj->invars[i]])) != NULL;
  int n = 0;
  for (int e = 0; ok && e < bj->neqns; e++) {
    const JaxprEqn *q = &bj->eqns[e];
    bool ready = prim_kind(q->prim) != PRIM_KIND_EFFECT;
    for (int i = 0; ready && i < q->nin; i++) ready = env[q->in[i]] != NULL;
    if (!ready) continue; /* reads a carry */
    for (int i = 0; i < q->nin; i++) args[i] = env[q->in[i]];
    ok = prim_bind_n(q->prim, q->nin, args, &q->params, q->nout, args + q->nin) == JX_OK;
    for (int o = 0; ok && o < q->nout; o++) env[q->out[o]] = args[q->nin + o];
    if (ok && hoist[e]) outs[n++] = env[q->out[0]];
  }
  Jaxpr *J = st ? stage_end(st, ok ? n : 0, outs) : NULL;
  if (J && (!ok || jaxpr_simplify(J) != JX_OK)) jaxpr_free(J), J = NULL;
  free(env), free(outs), free(args);
  return J;
}

/* The body reading the hoisted products as nh more xs (after its own). */
static Jaxpr *body_with_products(const Jaxpr *bj, const bool *hoist, int nh) {
  jx_array **env = calloc((size_t)bj->nvars + 1, sizeof *env), **outs = calloc((size_t)bj->nout + 1, sizeof *outs);
  jx_array **hin = calloc((size_t)nh + 1, sizeof *hin);
  jx_array **args = calloc((size_t)eqn_arity(bj) + 1, sizeof *args);
  bool ok = env && outs && hin && args;
  if (!ok) error_set(JX_ERR_OOM, "jit: out of memory hoisting products out of a scan");
  Trace *st = ok ? stage_begin() : NULL;
  ok = ok && st;
  for (int c = 0; ok && c < bj->nconst; c++) env[bj->constvars[c]] = bj->consts[c];
  for (int i = 0; ok && i < bj->nin; i++) ok = (env[bj->invars[i]] = stage_new_input(st, &bj->vars[bj->invars[i]])) != NULL;
  for (int e = 0, h = 0; ok && e < bj->neqns; e++)
    if (hoist[e]) ok = (hin[h++] = stage_new_input(st, &bj->vars[bj->eqns[e].out[0]])) != NULL;
  for (int e = 0, h = 0; ok && e < bj->neqns; e++) {
    const JaxprEqn *q = &bj->eqns[e];
    if (hoist[e]) {
      env[q->out[0]] = hin[h++];
      continue;
    }
    for (int i = 0; i < q->nin; i++) args[i] = env[q->in[i]];
    ok = prim_bind_n(q->prim, q->nin, args, &q->params, q->nout, args + q->nin) == JX_OK;
    for (int o = 0; ok && o < q->nout; o++) env[q->out[o]] = args[q->nin + o];
  }
  for (int o = 0; ok && o < bj->nout; o++) outs[o] = env[bj->outvars[o]];
  Jaxpr *J = st ? stage_end(st, ok ? bj->nout : 0, outs) : NULL;
  if (J && (!ok || jaxpr_simplify(J) != JX_OK || !(J->name = strdup(bj->name ? bj->name : "body"))))
    jaxpr_free(J), J = NULL;
  free(env), free(outs), free(hin), free(args);
  return J;
}

/* ---- accumulations: a carry updated as acc + dot_general(a, b) (a transposed scan's
 * gradient of a weight: acc + x_t^T g_t) with acc read nowhere else becomes a carry
 * passed through, the operands that change per trip become stacked ys (an operand that
 * is an x is read from the xs), and after the loop acc + one dot_general contracting
 * the trips too (sum_t x_t^T g_t = X^T G). */
typedef struct Acc {
  int carry;      /* the carry index */
  int add, dot;   /* the equations */
  int opnd[2];    /* dot operands: the x index (>= 0) or -1 - its new y */
} Acc;

static int find_accumulators(const Jaxpr *bj, int nk, int nc, int64_t length, Acc *acc, int *nys_out) {
  int *uses = calloc((size_t)bj->nvars + 1, sizeof *uses), *def = malloc(((size_t)bj->nvars + 1) * sizeof *def);
  int n = 0, nys = 0;
  size_t bytes = 0;
  for (int v = 0; def && v < bj->nvars; v++) def[v] = -1;
  for (int e = 0; uses && def && e < bj->neqns; e++) {
    for (int i = 0; i < bj->eqns[e].nin; i++) uses[bj->eqns[e].in[i]]++;
    for (int o = 0; o < bj->eqns[e].nout; o++) def[bj->eqns[e].out[o]] = e;
  }
  for (int o = 0; uses && def && o < bj->nout; o++) uses[bj->outvars[o]]++;
  for (int k = 0; uses && def && k < nc; k++) {
    int vin = bj->invars[nk + k], e = def[bj->outvars[k]];
    if (e < 0 || uses[vin] != 1 || uses[bj->outvars[k]] != 1 || bj->eqns[e].prim != PRIM_add) continue;
    const JaxprEqn *q = &bj->eqns[e];
    int d = q->in[0] == vin ? q->in[1] : q->in[1] == vin ? q->in[0] : -1;
    int de = d >= 0 ? def[d] : -1;
    if (de < 0 || bj->eqns[de].prim != PRIM_dot_general) continue;
    const Aval *av = &bj->vars[d], *cv = &bj->vars[vin];
    if (av->dtype != cv->dtype || av->ndim != cv->ndim || memcmp(av->shape, cv->shape, (size_t)av->ndim * 8)) continue;
    Acc a = {.carry = k, .add = e, .dot = de};
    size_t b = 0;
    bool ok = true;
    int grown = nys;
    for (int t = 0; ok && t < 2; t++) {
      int v = bj->eqns[de].in[t], x = -1;
      for (int i = nk + nc; i < bj->nin; i++)
        if (bj->invars[i] == v) x = i - nk - nc;
      if (x >= 0) {
        a.opnd[t] = x;
        continue;
      }
      ok = def[v] >= 0; /* a value of the trip (not a const, carry or constant) */
      int same = 0; /* stacked already (for another accumulation, or the other operand) */
      for (int m = 0; m < n; m++)
        for (int u = 0; u < 2; u++)
          if (acc[m].opnd[u] < 0 && bj->eqns[acc[m].dot].in[u] == v) same = acc[m].opnd[u];
      if (t == 1 && a.opnd[0] < 0 && bj->eqns[de].in[0] == v) same = a.opnd[0];
      if (!same) b += aval_bytes(&bj->vars[v]) * (size_t)length;
      a.opnd[t] = same ? same : -1 - grown++;
    }
    if (!ok || bytes + b > HOIST_MAX_BYTES) continue;
    nys = grown, bytes += b;
    acc[n++] = a;
  }
  free(uses), free(def);
  if (nys_out) *nys_out = nys;
  return n;
}

/* The body with the accumulations' carries passed through and their per-trip operands
 * as nys more ys. */
static Jaxpr *body_without_accumulations(const Jaxpr *bj, int nk, const Acc *acc, int na, int nys) {
  jx_array **env = calloc((size_t)bj->nvars + 1, sizeof *env), **outs = calloc((size_t)(bj->nout + nys) + 1, sizeof *outs);
  jx_array **args = calloc((size_t)eqn_arity(bj) + 1, sizeof *args);
  bool ok = env && outs && args;
  if (!ok) error_set(JX_ERR_OOM, "jit: out of memory hoisting accumulations out of a scan");
  Trace *st = ok ? stage_begin() : NULL;
  ok = ok && st;
  for (int c = 0; ok && c < bj->nconst; c++) env[bj->constvars[c]] = bj->consts[c];
  for (int i = 0; ok && i < bj->nin; i++) ok = (env[bj->invars[i]] = stage_new_input(st, &bj->vars[bj->invars[i]])) != NULL;
  for (int e = 0; ok && e < bj->neqns; e++) {
    const JaxprEqn *q = &bj->eqns[e];
    bool skip = false;
    for (int m = 0; m < na; m++) skip |= acc[m].add == e;
    if (skip) continue;
    for (int i = 0; i < q->nin; i++) args[i] = env[q->in[i]];
    ok = prim_bind_n(q->prim, q->nin, args, &q->params, q->nout, args + q->nin) == JX_OK;
    for (int o = 0; ok && o < q->nout; o++) env[q->out[o]] = args[q->nin + o];
  }
  for (int o = 0; ok && o < bj->nout; o++) outs[o] = env[bj->outvars[o]];
  for (int m = 0; ok && m < na; m++) {
    outs[acc[m].carry] = env[bj->invars[nk + acc[m].carry]]; /* passed through */
    for (int s = 0; s < 2; s++)
      if (acc[m].opnd[s] < 0) outs[bj->nout - 1 - acc[m].opnd[s]] = env[bj->eqns[acc[m].dot].in[s]];
  }
  Jaxpr *J = st ? stage_end(st, ok ? bj->nout + nys : 0, outs) : NULL;
  if (J && (!ok || jaxpr_simplify(J) != JX_OK || !(J->name = strdup(bj->name ? bj->name : "body"))))
    jaxpr_free(J), J = NULL;
  free(env), free(outs), free(args);
  return J;
}

/* prim_scan of body B on args, where a y that is one of the body's xs (a hoisted
 * product the forward saves for the backward, say) is not copied trip by trip: the
 * result is that xs operand itself. */
static jx_status scan_without_copied_ys(Jaxpr *B, int nk, int nc, const PrimParams *pp, int nin,
                                        jx_array *const *args, jx_array **y) {
  int nout = B->nout, *from = malloc(((size_t)nout + 1) * sizeof *from), nkeep = 0;
  for (int o = 0; from && o < nout; o++) {
    from[o] = -1;
    for (int i = nk + nc; o >= nc && i < nin; i++)
      if (B->outvars[o] == B->invars[i]) from[o] = i;
    nkeep += from[o] < 0;
  }
  if (!from || nkeep == nout) {
    free(from);
    return prim_scan(B, nk, nc, pp->length, pp->reverse, pp->unroll, nin, args, y);
  }
  /* B with those outputs dropped */
  jx_array **in = calloc((size_t)B->nin + 1, sizeof *in), **out = calloc((size_t)nout + 1, sizeof *out);
  Trace *st = in && out ? stage_begin() : NULL;
  bool ok = st != NULL;
  for (int i = 0; ok && i < B->nin; i++) ok = (in[i] = stage_new_input(st, &B->vars[B->invars[i]])) != NULL;
  ok = ok && prim_eval_jaxpr(B, in, out) == JX_OK;
  for (int o = 0, k = 0; ok && o < nout; o++)
    if (from[o] < 0) out[k++] = out[o];
  Jaxpr *P = st ? stage_end(st, ok ? nkeep : 0, out) : NULL;
  if (P && (!ok || jaxpr_simplify(P) != JX_OK || !(P->name = strdup(B->name ? B->name : "body")))) jaxpr_free(P), P = NULL;
  free(in), free(out);
  jx_array **res = P ? calloc((size_t)nkeep + 1, sizeof *res) : NULL;
  if (!res) { /* an optimization: the scan as it was */
    jaxpr_free(P), free(from);
    jx_clear_error();
    return prim_scan(B, nk, nc, pp->length, pp->reverse, pp->unroll, nin, args, y);
  }
  jx_status s = prim_scan(P, nk, nc, pp->length, pp->reverse, pp->unroll, nin, args, res);
  for (int o = 0, k = 0; s == JX_OK && o < nout; o++) y[o] = from[o] < 0 ? res[k++] : jx_ref(args[from[o]]);
  jaxpr_free(P);
  free(from), free(res);
  return s;
}

/* prim_scan of body B on args, with its accumulations hoisted out when it has some. */
static jx_status scan_hoisting_accumulations(Jaxpr *B, int nk, int nc, const PrimParams *pp, int nin,
                                             jx_array *const *args, jx_array **y) {
  Acc *acc = calloc((size_t)nc + 1, sizeof *acc);
  int nys = 0, na = acc && pp->length > 1 ? find_accumulators(B, nk, nc, pp->length, acc, &nys) : 0;
  Jaxpr *B2 = na ? body_without_accumulations(B, nk, acc, na, nys) : NULL;
  jx_array **outs = B2 ? calloc((size_t)(B->nout + nys) + 1, sizeof *outs) : NULL;
  if (!outs) {
    jaxpr_free(B2), free(acc);
    jx_clear_error();
    return scan_without_copied_ys(B, nk, nc, pp, nin, args, y);
  }
  jx_status s = scan_without_copied_ys(B2, nk, nc, pp, nin, args, outs);
  for (int o = 0; s == JX_OK && o < B->nout; o++) y[o] = outs[o];
  for (int m = 0; s == JX_OK && m < na; m++) {
    const JaxprEqn *q = &B->eqns[acc[m].dot];
    jx_array *op[2];
    for (int t = 0; t < 2; t++)
      op[t] = acc[m].opnd[t] >= 0 ? args[nk + nc + acc[m].opnd[t]] : outs[B->nout - 1 - acc[m].opnd[t]];
    PrimParams p = q->params; /* the trips: one more contracting dimension, first */
    p.ncontract = q->params.ncontract + 1;
    p.lhs_contract[0] = 0, p.rhs_contract[0] = 0;
    for (int i = 0; i < q->params.ncontract; i++)
      p.lhs_contract[i + 1] = q->params.lhs_contract[i] + 1, p.rhs_contract[i + 1] = q->params.rhs_contract[i] + 1;
    for (int i = 0; i < q->params.nbatch; i++) p.lhs_batch[i]++, p.rhs_batch[i]++;
    jx_array *d = prim_bind(PRIM_dot_general, 2, op, &p);
    y[acc[m].carry] = d ? prim_binary(PRIM_add, outs[acc[m].carry], d) : NULL;
    if (!y[acc[m].carry]) s = jx_last_status();
  }
  jaxpr_free(B2);
  free(acc), free(outs);
  return s;
}

/* One scan equation on staged operands x, with its products hoisted (bound as the
 * batched pre-part, then the scan over the extra xs); the results in y. */
static jx_status hoist_scan(int nin, jx_array *const *x, const PrimParams *pp, int nout, jx_array **y) {
  const Jaxpr *bj = pp->branches[0];
  int nk = pp->nconsts[0], nc = pp->nconsts[1];
  bool *hoist = calloc((size_t)bj->neqns + 1, 1);
  int nh = hoist && pp->length > 1 ? find_products(bj, nk, nc, pp->length, hoist) : 0;
  Jaxpr *P = nh ? pre_jaxpr(bj, nk, nc, hoist) : NULL, *VP = NULL, *B = NULL;
  Aval *avals = calloc((size_t)nin + 1, sizeof *avals);
  int *bd = calloc((size_t)nin + 1, sizeof *bd);
  jx_array **args = calloc((size_t)(nin + nh) + 1, sizeof *args), **pin = calloc((size_t)nin + 1, sizeof *pin);
  if (P && avals && bd && args && pin) {
    int np = 0;
    for (int i = 0; i < nin; i++) {
      if (i >= nk && i < nk + nc) continue;
      avals[np] = prim_aval_of(x[i]), bd[np] = i < nk ? JX_NOT_MAPPED : 0, pin[np++] = x[i];
    }
    VP = vmap_jaxpr(P, avals, bd, pp->length);
    B = VP ? body_with_products(bj, hoist, nh) : NULL;
  }
  jx_status s = JX_OK;
  if (B) {
    memcpy(args, x, (size_t)nin * sizeof *args);
    s = prim_eval_jaxpr(VP, pin, args + nin);
    if (s == JX_OK) s = scan_hoisting_accumulations(B, nk, nc, pp, nin + nh, args, y);
  } else {
    jx_clear_error(); /* no products hoisted: the scan's own body */
    s = scan_hoisting_accumulations((Jaxpr *)bj, nk, nc, pp, nin, x, y);
  }
  jaxpr_free(P), jaxpr_free(VP), jaxpr_free(B);
  free(hoist), free(avals), free(bd), free(args), free(pin);
  return s;
}

static bool any_hoistable(const Jaxpr *j) {
  bool any = false;
  for (int e = 0; !any && e < j->neqns; e++) {
    const JaxprEqn *q = &j->eqns[e];
    if (q->prim != PRIM_scan || q->params.length < 2) continue;
    const Jaxpr *bj = q->params.branches[0];
    bool *hoist = calloc((size_t)bj->neqns + 1, 1);
    Acc *acc = calloc((size_t)q->params.nconsts[1] + 1, sizeof *acc);
    any = hoist && acc && (find_products(bj, q->params.nconsts[0], q->params.nconsts[1], q->params.length, hoist) > 0 ||
                           find_accumulators(bj, q->params.nconsts[0], q->params.nconsts[1], q->params.length, acc, NULL) > 0);
    free(hoist), free(acc);
  }
  return any;
}

Jaxpr *loops_hoist_scans(Jaxpr *j) {
  if (!any_hoistable(j)) return j;
  jx_array **env = calloc((size_t)j->nvars + 1, sizeof *env), **outs = calloc((size_t)j->nout + 1, sizeof *outs);
  jx_array **args = calloc((size_t)eqn_arity(j) + 1, sizeof *args);
  bool ok = env && outs && args;
  Trace *st = ok ? stage_begin() : NULL;
  ok = ok && st;
  jx_scope_begin();
  for (int c = 0; ok && c < j->nconst; c++) env[j->constvars[c]] = j->consts[c];
  for (int i = 0; ok && i < j->nin; i++) ok = (env[j->invars[i]] = stage_new_input(st, &j->vars[j->invars[i]])) != NULL;
  for (int e = 0; ok && e < j->neqns; e++) {
    const JaxprEqn *q = &j->eqns[e];
    for (int i = 0; i < q->nin; i++) args[i] = env[q->in[i]];
    ok = (q->prim == PRIM_scan ? hoist_scan(q->nin, args, &q->params, q->nout, args + q->nin)
                               : prim_bind_n(q->prim, q->nin, args, &q->params, q->nout, args + q->nin)) == JX_OK;
    for (int o = 0; ok && o < q->nout; o++) env[q->out[o]] = args[q->nin + o];
  }
  for (int o = 0; ok && o < j->nout; o++) outs[o] = env[j->outvars[o]];
  Jaxpr *J = st ? stage_end(st, ok ? j->nout : 0, outs) : NULL;
  jx_scope_end(0, NULL);
  free(env), free(outs), free(args);
  if (J && (!ok || jaxpr_simplify(J) != JX_OK || (j->name && !(J->name = strdup(j->name))))) jaxpr_free(J), J = NULL;
  if (!J) { /* an optimization: keep j */
    jx_clear_error();
    return j;
  }
  jaxpr_free(j);
  return J;
}
