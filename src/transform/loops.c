/* loops.c -- JVP, batching and transpose rules of the loop primitives (JAX's
 * jax/_src/lax/control_flow/loops.py): while (while_p) and scan (scan_p). Every rule
 * stages new loop bodies from the old ones and binds one new loop, so the rules
 * compose with each other and with jit. Past JAX: a while loop with a trip bound
 * (jx_lax_while_loop_bounded) transposes, keeping one residual per trip taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/jvp.h"
#include "transform/loops.h"
#include "transform/transpose.h"

#define NM JX_NOT_MAPPED

static bool oom(const char *what) {
  error_set(JX_ERR_OOM, "%s: out of memory", what);
  return false;
}

static Aval in_aval(const Jaxpr *j, int i) { return j->vars[j->invars[i]]; }
static Aval out_aval(const Jaxpr *j, int o) { return j->vars[j->outvars[o]]; }

/* a without its leading axis (a scan slice), or with a leading axis of n (stacked). */
static Aval unstacked(Aval a) {
  a.ndim--;
  memmove(a.shape, a.shape + 1, (size_t)a.ndim * sizeof(int64_t));
  return a;
}
static Aval stacked(Aval a, int64_t n) {
  memmove(a.shape + 1, a.shape, (size_t)a.ndim * sizeof(int64_t));
  a.shape[0] = n, a.ndim++;
  return a;
}

/* Ends staging of nout outputs, simplified and named `name`; NULL on failure (the
 * trace is popped either way). */
static Jaxpr *stage_finish(Trace *st, bool ok, int nout, jx_array *const *outs, const char *name) {
  Jaxpr *J = st ? stage_end(st, ok ? nout : 0, outs) : NULL;
  if (!ok || !J || jaxpr_simplify(J) != JX_OK || !(J->name = strdup(name))) {
    jaxpr_free(J);
    return NULL;
  }
  return J;
}

/* ------------------------------------------------------------------- JVP */

/* A loop body's JVP jaxpr in the loop's operand layout. sub's inputs form ngi groups
 * (bounds gi[0 .. ngi]); the result takes, group by group, the group's primals, then
 * the tangents of its inputs with has_t. sub's outputs form ngo groups (bounds go[]):
 * the result gives each group's primals where keep[g], then the tangents of its
 * outputs with out_t (zeros instantiated). */
static Jaxpr *jvp_layout(const Jaxpr *sub, int ngi, const int *gi, const bool *has_t, int ngo,
                         const int *go, const bool *keep, const bool *out_t) {
  int nin = sub->nin, nout = sub->nout, nres = 0;
  jx_array **prim = calloc((size_t)nin + 1, sizeof *prim), **tan = calloc((size_t)nin + 1, sizeof *tan);
  jx_array **in = calloc((size_t)nin + 1, sizeof *in), **outs = calloc((size_t)nout + 1, sizeof *outs);
  jx_array **res = calloc(2 * (size_t)nout + 1, sizeof *res);
  bool ok = prim && tan && in && outs && res;
  if (!ok) oom("jvp of a loop");
  Trace *st = ok ? stage_begin() : NULL, *jt = st ? jvp_begin() : NULL;
  ok = ok && jt;
  for (int g = 0; ok && g < ngi; g++) {
    for (int i = gi[g]; ok && i < gi[g + 1]; i++) {
      Aval a = in_aval(sub, i);
      ok = (prim[i] = stage_new_input(st, &a)) != NULL;
    }
    for (int i = gi[g]; ok && i < gi[g + 1]; i++) {
      Aval a = in_aval(sub, i);
      if (has_t[i]) ok = (tan[i] = stage_new_input(st, &a)) != NULL;
    }
  }
  for (int i = 0; ok && i < nin; i++) ok = (in[i] = jvp_tracer(jt, prim[i], tan[i])) != NULL;
  ok = ok && prim_eval_jaxpr(sub, in, outs) == JX_OK;
  for (int g = 0; ok && g < ngo; g++) {
    for (int o = go[g]; keep[g] && o < go[g + 1]; o++) {
      jx_array *p, *tn;
      jvp_unpack(jt, outs[o], &p, &tn);
      res[nres++] = p;
    }
    for (int o = go[g]; ok && o < go[g + 1]; o++) {
      if (!out_t[o]) continue;
      jx_array *p, *tn;
      jvp_unpack(jt, outs[o], &p, &tn);
      ok = (res[nres++] = tn ? tn : tx_full_like(p, 0.0)) != NULL;
    }
  }
  if (jt) trace_pop(jt);
  char name[256];
  snprintf(name, sizeof name, "jvp(%s)", sub->name ? sub->name : "body");
  Jaxpr *J = st ? stage_finish(st, ok, nres, res, name) : NULL;
  free(prim), free(tan), free(in), free(outs), free(res);
  return J;
}

/* True if any tangent is a tracer: then (under linearize) the tangent loop is staged
 * while the primal loop runs on known values, so the two are separate loops. */
static bool staged_tangents(int n, jx_array *const *t) {
  for (int i = 0; i < n; i++)
    if (t[i] && t[i]->tracer) return true;
  return false;
}

/* while's JVP (JAX's _while_loop_jvp): one while over (carry, carry tangent), the
 * body's tangent constants joining its constants. Every floating carry gets a tangent
 * (JAX finds the fixed point of nonzero tangents; instantiating them all is the same
 * loop with some zeros carried). */
jx_status loops_jvp_while(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                          int nout, jx_array **y, jx_array **ty) {
  int nc = pp->nconsts[0], nb = pp->nconsts[1], ncarry = nin - nc - nb;
  Jaxpr *cj = pp->branches[0], *bj = pp->branches[1];
  for (int o = 0; o < nout; o++) ty[o] = NULL;
  bool any = false;
  for (int i = nc; i < nin; i++) any |= t[i] != NULL;
  if (!any) return prim_while(cj, nc, bj, nb, pp->length, nin, x, y);
  bool separate = staged_tangents(nin, t);
  jx_status s = separate ? prim_while(cj, nc, bj, nb, pp->length, nin, x, y) : JX_OK;
  bool *has_t = calloc((size_t)nin + 1, 1), *out_t = calloc((size_t)ncarry + 1, 1);
  jx_array **args = calloc(2 * (size_t)nin + 1, sizeof *args), **res = calloc(2 * (size_t)ncarry + 1, sizeof *res);
  if (!has_t || !out_t || !args || !res) s = oom("jvp of while") ? JX_OK : JX_ERR_OOM;
  Jaxpr *B = NULL, *C = NULL;
  int nbt = 0, ncf = 0, na = 0;
  if (s == JX_OK) {
    /* body inputs (bconsts, carries); cond inputs (cconsts, carries) */
    for (int i = 0; i < nb; i++) nbt += has_t[i] = t[nc + i] != NULL;
    for (int i = 0; i < ncarry; i++) ncf += out_t[i] = has_t[nb + i] = dtype_is_floating(x[nc + nb + i]->dtype);
    B = jvp_layout(bj, 2, (int[]){0, nb, nb + ncarry}, has_t, 1, (int[]){0, ncarry}, (bool[]){true}, out_t);
    bool *cond_t = calloc((size_t)(nc + ncarry) + 1, 1); /* cconsts: no tangents */
    for (int i = 0; cond_t && i < ncarry; i++) cond_t[nc + i] = out_t[i];
    C = cond_t && B ? jvp_layout(cj, 2, (int[]){0, nc, nc + ncarry}, cond_t, 1, (int[]){0, 1}, (bool[]){true},
                                 (bool[]){false})
                    : NULL;
    free(cond_t);
    if (!B || !C) s = jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  }
  if (s == JX_OK) {
    for (int i = 0; i < nc + nb; i++) args[na++] = x[i];
    for (int i = 0; i < nb; i++)
      if (has_t[i]) args[na++] = t[nc + i];
    for (int i = 0; i < ncarry; i++) args[na++] = x[nc + nb + i];
    for (int i = 0; s == JX_OK && i < ncarry; i++)
      if (out_t[i] && !(args[na++] = t[nc + nb + i] ? t[nc + nb + i] : tx_full_like(x[nc + nb + i], 0.0)))
        s = jx_last_status();
  }
  if (s == JX_OK) s = prim_while(C, nc, B, nb + nbt, pp->length, na, args, res);
  for (int o = 0, k = 0; s == JX_OK && o < ncarry; o++) {
    if (!separate) y[o] = res[o];
    if (out_t[o]) ty[o] = res[ncarry + k++];
  }
  jaxpr_free(B), jaxpr_free(C);
  free(has_t), free(out_t), free(args), free(res);
  return s;
}

/* ------------------------------------------------ partial evaluation of scan */

/* JAX's _scan_partial_eval, for the JVP scan under linearize: the body's JVP jaxpr S is
 * split into a known body K, run now on the primals, and a tangent body U, staged, so
 * the primal work runs once. K computes the primal carries and ys and saves, stacked as
 * extra ys, the residuals: known values U uses that change per trip. U takes them as
 * xs, together with the primal consts and xs it uses (passed through, not stacked);
 * known values that depend only on constants (loop invariant) are recomputed in U
 * rather than stacked. U is linear in the tangents, so its transpose is a reversed scan
 * over the residuals with no forward recomputation (loops_transpose_scan finds no known
 * carries). */
typedef struct ScanSplit {
  Jaxpr *known;   /* (primal consts | carries | xs) -> (carries | ys, residuals) */
  Jaxpr *tangent; /* (used primal consts, tangent consts | tangent carries | residuals, used
                   * primal xs, tangent xs) -> S's tangent outputs */
  int nres;
  int nuc, *uc;   /* the primal consts U takes: S input indices */
  int nux, *ux;   /* the primal xs U takes: S input indices */
} ScanSplit;

static void scan_split_free(ScanSplit *sp) {
  jaxpr_free(sp->known), jaxpr_free(sp->tangent);
  free(sp->uc), free(sp->ux);
}

/* Evaluates S's equations with pick[e] by binding them (on staged inputs): env maps
 * variables to values (constants preset). */
static bool bind_eqns(const Jaxpr *S, const bool *pick, jx_array **env) {
  int most = 1;
  for (int e = 0; e < S->neqns; e++)
    if (S->eqns[e].nin + S->eqns[e].nout > most) most = S->eqns[e].nin + S->eqns[e].nout;
  jx_array **args = calloc((size_t)most + 1, sizeof *args);
  if (!args) return oom("partial evaluation of scan");
  bool ok = true;
  for (int e = 0; ok && e < S->neqns; e++) {
    const JaxprEqn *q = &S->eqns[e];
    if (!pick[e]) continue;
    jx_array **res = args + q->nin;
    for (int i = 0; i < q->nin; i++) args[i] = env[q->in[i]];
    ok = prim_bind_n(q->prim, q->nin, args, &q->params, q->nout, res) == JX_OK;
    for (int o = 0; ok && o < q->nout; o++) env[q->out[o]] = res[o];
  }
  free(args);
  return ok;
}

/* Splits S, whose inputs form three groups (consts, carries, xs: bounds gi[]) with the
 * tangent inputs marked by unk_in, and whose outputs with out_known must come out known
 * (the primal carries and ys). false without an error: S does not split (a primal
 * output depends on a tangent), the caller keeps the unsplit scan. */
static bool scan_split(const Jaxpr *S, const int *gi, const bool *unk_in, const bool *out_known, ScanSplit *sp) {
  *sp = (ScanSplit){0};
  int nv = S->nvars, ne = S->neqns, nin = S->nin;
  bool *unk = calloc((size_t)nv + 1, 1), *inv = calloc((size_t)nv + 1, 1), *need = calloc((size_t)nv + 1, 1);
  bool *redo = calloc((size_t)nv + 1, 1);
  bool *eunk = calloc((size_t)ne + 1, 1), *recomp = calloc((size_t)ne + 1, 1), *pick = calloc((size_t)ne + 1, 1);
  int *res = malloc(((size_t)nv + 1) * sizeof *res), *in_of = malloc(((size_t)nv + 1) * sizeof *in_of);
  jx_array **env = calloc((size_t)nv + 1, sizeof *env), **outs = calloc((size_t)(S->nout + nv) + 1, sizeof *outs);
  sp->uc = malloc(((size_t)nin + 1) * sizeof(int)), sp->ux = malloc(((size_t)nin + 1) * sizeof(int));
  bool ok = unk && inv && need && redo && eunk && recomp && pick && res && in_of && env && outs && sp->uc && sp->ux, split = ok;
  if (!ok) oom("partial evaluation of scan");
  for (int v = 0; ok && v < nv; v++) in_of[v] = -1;
  for (int c = 0; ok && c < S->nconst; c++) inv[S->constvars[c]] = true;
  for (int i = 0; ok && i < nin; i++) {
    int v = S->invars[i];
    in_of[v] = i, unk[v] = unk_in[i], inv[v] = !unk_in[i] && i < gi[1];
  }
  for (int e = 0; ok && e < ne; e++) { /* forward: unknown (reaches a tangent), invariant */
    const JaxprEqn *q = &S->eqns[e];
    bool u = false, iv = prim_kind(q->prim) != PRIM_KIND_EFFECT;
    for (int i = 0; i < q->nin; i++) u |= unk[q->in[i]], iv &= inv[q->in[i]];
    eunk[e] = u;
    for (int o = 0; o < q->nout; o++) unk[q->out[o]] = u, inv[q->out[o]] = !u && iv;
  }
  for (int o = 0; ok && o < S->nout; o++) {
    int v = S->outvars[o];
    if (out_known[o] && unk[v]) split = false;
    if (!out_known[o] && !unk[v]) need[v] = true;
  }
  for (int e = 0; ok && split && e < ne; e++) /* known values the tangent equations use */
    for (int i = 0; eunk[e] && i < S->eqns[e].nin; i++)
      if (!unk[S->eqns[e].in[i]]) need[S->eqns[e].in[i]] = true;
  /* recomputed in U rather than saved: loop-invariant values, and elementwise and
   * movement results (back to the products, reductions, carries and xs they start from:
   * those are saved, JAX's dots_saveable), which are cheap to recompute but would each
   * be a stacked residual */
  for (int e = ne - 1; ok && split && e >= 0; e--) {
    const JaxprEqn *q = &S->eqns[e];
    PrimKind kind = prim_kind(q->prim);
    bool cheap = kind <= PRIM_KIND_BITCAST || kind == PRIM_KIND_MOVEMENT, any = false;
    for (int o = 0; o < q->nout; o++) any |= need[q->out[o]] && (inv[q->out[o]] || cheap);
    if (eunk[e] || !any) continue;
    recomp[e] = true;
    for (int o = 0; o < q->nout; o++) redo[q->out[o]] = true;
    for (int i = 0; i < q->nin; i++) need[q->in[i]] = true;
  }
  /* what U takes: used primal consts and xs as they are, other known values as
   * residuals (carries and per-trip results) */
  for (int v = 0; ok && split && v < nv; v++) {
    if (!need[v] || unk[v]) continue;
    int i = in_of[v];
    if (i >= 0 && i < gi[1]) sp->uc[sp->nuc++] = i;
    else if (i >= gi[2]) sp->ux[sp->nux++] = i;
    else if (i >= 0 || (!inv[v] && !redo[v])) res[sp->nres++] = v;
  }
  ok = ok && split;
  for (int c = 0; ok && c < S->nconst; c++) env[S->constvars[c]] = S->consts[c];
  /* K: the known inputs -> the known outputs, then the residuals */
  Trace *st = ok ? stage_begin() : NULL;
  ok = ok && st;
  for (int i = 0; ok && i < nin; i++)
    if (!unk_in[i]) ok = (env[S->invars[i]] = stage_new_input(st, &S->vars[S->invars[i]])) != NULL;
  for (int e = 0; e < ne && ok; e++) pick[e] = !eunk[e];
  ok = ok && bind_eqns(S, pick, env);
  int nk = 0;
  for (int o = 0; ok && o < S->nout; o++)
    if (out_known[o]) outs[nk++] = env[S->outvars[o]];
  for (int r = 0; ok && r < sp->nres; r++) outs[nk++] = env[res[r]];
  sp->known = st ? stage_finish(st, ok, nk, outs, "scan_known") : NULL;
  ok = ok && sp->known;
  /* U: (used consts, tangent consts | tangent carries | residuals, used xs, tangent xs) */
  for (int v = 0; v < nv && env; v++) env[v] = NULL;
  for (int c = 0; ok && c < S->nconst; c++) env[S->constvars[c]] = S->consts[c];
  st = ok ? stage_begin() : NULL;
  ok = ok && st;
  for (int k = 0; ok && k < sp->nuc; k++) {
    int v = S->invars[sp->uc[k]];
    ok = (env[v] = stage_new_input(st, &S->vars[v])) != NULL;
  }
  for (int i = 0; ok && i < gi[2]; i++) /* tangent consts, then tangent carries */
    if (unk_in[i]) ok = (env[S->invars[i]] = stage_new_input(st, &S->vars[S->invars[i]])) != NULL;
  for (int r = 0; ok && r < sp->nres; r++) ok = (env[res[r]] = stage_new_input(st, &S->vars[res[r]])) != NULL;
  for (int k = 0; ok && k < sp->nux; k++) {
    int v = S->invars[sp->ux[k]];
    ok = (env[v] = stage_new_input(st, &S->vars[v])) != NULL;
  }
  for (int i = gi[2]; ok && i < nin; i++)
    if (unk_in[i]) ok = (env[S->invars[i]] = stage_new_input(st, &S->vars[S->invars[i]])) != NULL;
  for (int e = 0; e < ne && ok; e++) pick[e] = eunk[e] || recomp[e];
  ok = ok && bind_eqns(S, pick, env);
  int nu = 0;
  for (int o = 0; ok && o < S->nout; o++)
    if (!out_known[o]) outs[nu++] = env[S->outvars[o]];
  char name[256];
  snprintf(name, sizeof name, "%s_tangent", S->name ? S->name : "scan");
  sp->tangent = st ? stage_finish(st, ok, nu, outs, name) : NULL;
  ok = ok && sp->tangent;
  free(unk), free(inv), free(need), free(redo), free(eunk), free(recomp), free(pick), free(res), free(in_of), free(env), free(outs);
  if (!ok) scan_split_free(sp), *sp = (ScanSplit){0};
  return ok;
}

/* scan's JVP under linearize (tangents staged), partially evaluated: the known scan
 * runs on the primals and saves residuals, the tangent scan is staged over them.
 * *done false (and JX_OK): S did not split, the caller runs the unsplit JVP. */
static jx_status jvp_scan_split(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                                int nout, jx_array **y, jx_array **ty, bool *done) {
  int nk = pp->nconsts[0], nc = pp->nconsts[1];
  Jaxpr *bj = pp->branches[0];
  *done = false;
  bool *has_t = calloc((size_t)nin + 1, 1), *out_t = calloc((size_t)nout + 1, 1);
  int *src = malloc((2 * (size_t)nin + 1) * sizeof *src); /* S input -> operand */
  bool *unk = calloc(2 * (size_t)nin + 1, 1), *known_out = calloc(2 * (size_t)nout + 1, 1);
  jx_array **args = NULL, **kout = NULL, **tout = NULL;
  if (!has_t || !out_t || !src || !unk || !known_out) {
    free(has_t), free(out_t), free(src), free(unk), free(known_out);
    return oom("jvp of scan") ? JX_OK : JX_ERR_OOM;
  }
  int nkt = 0, ncf = 0, gi[4] = {0}, ns = 0;
  for (int i = 0; i < nin; i++) {
    bool carry = i >= nk && i < nk + nc;
    has_t[i] = carry ? dtype_is_floating(x[i]->dtype) : t[i] != NULL;
    nkt += i < nk && has_t[i];
    ncf += carry && has_t[i];
  }
  for (int g = 0, lo = 0; g < 3; g++) { /* jvp_layout's inputs: per group primals, tangents */
    int hi = g == 0 ? nk : g == 1 ? nk + nc : nin;
    gi[g] = ns;
    for (int i = lo; i < hi; i++) src[ns++] = i;
    for (int i = lo; i < hi; i++)
      if (has_t[i]) unk[ns] = true, src[ns++] = i;
    lo = hi;
  }
  gi[3] = ns;
  int nso = 0;
  for (int o = 0; o < nout; o++) out_t[o] = dtype_is_floating(out_aval(bj, o).dtype);
  for (int g = 0; g < 2; g++) { /* outputs: per group primals (known), then tangents */
    int lo = g ? nc : 0, hi = g ? nout : nc;
    for (int o = lo; o < hi; o++) known_out[nso++] = true;
    for (int o = lo; o < hi; o++) nso += out_t[o];
  }
  uint64_t mark = error_mark();
  jx_status s = JX_OK;
  ScanSplit sp = {0};
  Jaxpr *S = jvp_layout(bj, 3, (int[]){0, nk, nk + nc, nin}, has_t, 2, (int[]){0, nc, nout},
                        (bool[]){true, true}, out_t);
  bool split = S && scan_split(S, gi, unk, known_out, &sp);
  if (!split) {
    s = error_since(mark) ? (jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL) : JX_OK;
    goto done;
  }
  kout = calloc((size_t)(nout + sp.nres) + 1, sizeof *kout);
  tout = calloc((size_t)nout + 1, sizeof *tout);
  args = calloc((size_t)(sp.nuc + 2 * nin + sp.nres + sp.nux) + 1, sizeof *args);
  if (!kout || !tout || !args) {
    s = oom("jvp of scan") ? JX_OK : JX_ERR_OOM;
    goto done;
  }
  /* the known scan: the primal results and the stacked residuals */
  s = prim_scan(sp.known, nk, nc, pp->length, pp->reverse, pp->unroll, nin, x, kout);
  int na = 0;
  for (int k = 0; s == JX_OK && k < sp.nuc; k++) args[na++] = x[src[sp.uc[k]]];
  for (int i = 0; s == JX_OK && i < gi[1]; i++)
    if (unk[i]) args[na++] = t[src[i]];
  int nuconst = na;
  for (int i = gi[1]; s == JX_OK && i < gi[2]; i++)
    if (unk[i] && !(args[na++] = t[src[i]] ? t[src[i]] : tx_full_like(x[src[i]], 0.0))) s = jx_last_status();
  for (int r = 0; s == JX_OK && r < sp.nres; r++) args[na++] = kout[nout + r];
  for (int k = 0; s == JX_OK && k < sp.nux; k++) args[na++] = x[src[sp.ux[k]]];
  for (int i = gi[2]; s == JX_OK && i < gi[3]; i++)
    if (unk[i]) args[na++] = t[src[i]];
  /* the tangent scan: staged by linearize, linear in the tangents */
  if (s == JX_OK) s = prim_scan(sp.tangent, nuconst, ncf, pp->length, pp->reverse, pp->unroll, na, args, tout);
  if (s == JX_OK) {
    for (int o = 0; o < nout; o++) y[o] = kout[o];
    int k = 0;
    for (int o = 0; o < nout; o++)
      if (out_t[o]) ty[o] = tout[k++];
    for (int r = 0; r < sp.nres; r++) jx_free(kout[nout + r]);
    *done = true;
  }
done:
  scan_split_free(&sp);
  jaxpr_free(S);
  free(has_t), free(out_t), free(src), free(unk), free(known_out), free(args), free(kout), free(tout);
  return s;
}

/* scan's JVP (JAX's _scan_jvp): one scan of the body's JVP, tangents of the consts,
 * carries and xs joining each group; under linearize the primal scan runs separately
 * and the tangent scan drops the primal ys. */
jx_status loops_jvp_scan(int nin, jx_array *const *x, jx_array *const *t, const PrimParams *pp,
                         int nout, jx_array **y, jx_array **ty) {
  int nk = pp->nconsts[0], nc = pp->nconsts[1], ny = nout - nc;
  Jaxpr *bj = pp->branches[0];
  for (int o = 0; o < nout; o++) ty[o] = NULL;
  bool any = false;
  for (int i = 0; i < nin; i++) any |= t[i] != NULL;
  if (!any) return prim_scan(bj, nk, nc, pp->length, pp->reverse, pp->unroll, nin, x, y);
  bool separate = staged_tangents(nin, t);
  if (separate) {
    bool done = false;
    jx_status s = jvp_scan_split(nin, x, t, pp, nout, y, ty, &done);
    if (done || s != JX_OK) return s;
  }
  jx_status s = separate ? prim_scan(bj, nk, nc, pp->length, pp->reverse, pp->unroll, nin, x, y) : JX_OK;
  bool *has_t = calloc((size_t)nin + 1, 1), *out_t = calloc((size_t)nout + 1, 1);
  jx_array **args = calloc(2 * (size_t)nin + 1, sizeof *args), **res = calloc(2 * (size_t)nout + 1, sizeof *res);
  if (!has_t || !out_t || !args || !res) s = oom("jvp of scan") ? JX_OK : JX_ERR_OOM;
  Jaxpr *S = NULL;
  int nkt = 0, ncf = 0, na = 0;
  if (s == JX_OK) {
    for (int i = 0; i < nin; i++) {
      bool carry = i >= nk && i < nk + nc;
      has_t[i] = carry ? dtype_is_floating(x[i]->dtype) : t[i] != NULL;
      nkt += i < nk && has_t[i];
      ncf += carry && has_t[i];
    }
    for (int o = 0; o < nout; o++) out_t[o] = dtype_is_floating(out_aval(bj, o).dtype);
    S = jvp_layout(bj, 3, (int[]){0, nk, nk + nc, nin}, has_t, 2, (int[]){0, nc, nout},
                   (bool[]){true, !separate}, out_t);
    if (!S) s = jx_last_status() ? jx_last_status() : JX_ERR_OOM;
  }
  for (int g = 0, lo = 0; s == JX_OK && g < 3; g++) { /* (primals, tangents) per group */
    int hi = g == 0 ? nk : g == 1 ? nk + nc : nin;
    for (int i = lo; i < hi; i++) args[na++] = x[i];
    for (int i = lo; s == JX_OK && i < hi; i++)
      if (has_t[i] && !(args[na++] = t[i] ? t[i] : tx_full_like(x[i], 0.0))) s = jx_last_status();
    lo = hi;
  }
  if (s == JX_OK) s = prim_scan(S, nk + nkt, nc + ncf, pp->length, pp->reverse, pp->unroll, na, args, res);
  if (s == JX_OK) {
    int k = 0;
    for (int o = 0; o < nc; o++) y[o] = separate ? y[o] : res[o];
    k = nc;
    for (int o = 0; o < nc; o++)
      if (out_t[o]) ty[o] = res[k++];
    for (int o = nc; !separate && o < nout; o++) y[o] = res[k++];
    for (int o = nc; o < nout; o++)
      if (out_t[o]) ty[o] = res[k++];
    (void)ny;
  }
  jaxpr_free(S);
  free(has_t), free(out_t), free(args), free(res);
  return s;
}

/* -------------------------------------------------------------- batching */

/* x batched along bd (or unbatched) with its batch axis at `to` (added by broadcasting
 * when unbatched). */
static jx_array *batch_to(jx_array *x, int bd, int64_t size, int to) {
  if (!x) return NULL;
  if (bd == NM) {
    int64_t shape[JX_MAX_NDIM];
    int dims[JX_MAX_NDIM];
    for (int d = 0, k = 0; d <= x->ndim; d++) {
      if (d == to) {
        shape[d] = size;
        continue;
      }
      shape[d] = x->shape[k];
      dims[k++] = d;
    }
    return prim_broadcast_in_dim(x, x->ndim + 1, shape, dims);
  }
  if (bd == to) return x;
  int perm[JX_MAX_NDIM], n = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != bd) perm[n++] = d;
  memmove(perm + to + 1, perm + to, (size_t)(x->ndim - 1 - to) * sizeof(int));
  perm[to] = bd;
  return prim_transpose(x, perm);
}

static int64_t batch_size_of(int nin, jx_array *const *x, const int *bd) {
  for (int i = 0; i < nin; i++)
    if (bd[i] != NM) return x[i]->shape[bd[i]];
  return 0;
}

/* while batched (JAX's _while_loop_batching_rule with a batched predicate): every
 * carry is batched; the loop runs while any lane's predicate holds, and each trip
 * keeps the old carry in lanes whose predicate is false (select per lane). */
int loops_batch_while(Prim p, int nin, jx_array *const *x, const int *bd, const PrimParams *pp,
                      jx_array **y) {
  (void)p;
  int nc = pp->nconsts[0], nb = pp->nconsts[1], ncarry = nin - nc - nb;
  Jaxpr *cj = pp->branches[0], *bj = pp->branches[1];
  int64_t size = batch_size_of(nin, x, bd);
  jx_array **ops = calloc((size_t)(nin + nc) + 1, sizeof *ops), **in = calloc((size_t)(nin + nc) + 1, sizeof *in);
  jx_array **outs = calloc((size_t)ncarry + 1, sizeof *outs);
  Aval *av = calloc((size_t)nin + 1, sizeof *av);
  int *bds = calloc((size_t)nin + 1, sizeof *bds);
  bool ok = ops && in && outs && av && bds;
  if (!ok) oom("vmap of while");
  jx_array **carry = ops + nc + nc + nb;
  for (int i = 0; ok && i < ncarry; i++) ok = (carry[i] = batch_to(x[nc + nb + i], bd[nc + nb + i], size, 0)) != NULL;
  Jaxpr *Cb = NULL, *Bb = NULL, *C = NULL, *B = NULL;
  if (ok) { /* cond batched: (cconsts, carries) -> pred (B,) */
    for (int i = 0; i < nc; i++) av[i] = prim_aval_of(x[i]), bds[i] = bd[i];
    for (int i = 0; i < ncarry; i++) av[nc + i] = prim_aval_of(carry[i]), bds[nc + i] = 0;
    ok = (Cb = vmap_jaxpr(cj, av, bds, size)) != NULL;
  }
  if (ok) { /* body batched: (bconsts, carries) -> carries */
    for (int i = 0; i < nb; i++) av[i] = prim_aval_of(x[nc + i]), bds[i] = bd[nc + i];
    for (int i = 0; i < ncarry; i++) av[nb + i] = prim_aval_of(carry[i]), bds[nb + i] = 0;
    ok = (Bb = vmap_jaxpr(bj, av, bds, size)) != NULL;
  }
  /* the new loop's operands: cconsts, (cconsts, bconsts) as the body's consts, carries */
  for (int i = 0; ok && i < nc; i++) ops[i] = ops[nc + i] = x[i];
  for (int i = 0; ok && i < nb; i++) ops[2 * nc + i] = x[nc + i];
  if (ok) { /* cond: any lane's predicate */
    Trace *st = stage_begin();
    ok = st != NULL;
    for (int i = 0; ok && i < nc + ncarry; i++) {
      Aval a = prim_aval_of(i < nc ? ops[i] : carry[i - nc]);
      ok = (in[i] = stage_new_input(st, &a)) != NULL;
    }
    jx_array *pred = NULL, *any = NULL;
    ok = ok && prim_eval_jaxpr(Cb, in, &pred) == JX_OK;
    ok = ok && (any = prim_reduce(PRIM_reduce_or, pred, (bool[]){true})) != NULL;
    C = stage_finish(st, ok, 1, &any, "vmap(cond)");
    ok = C != NULL;
  }
  if (ok) { /* body: the batched body where the lane's predicate holds */
    Trace *st = stage_begin();
    ok = st != NULL;
    for (int i = 0; ok && i < nc + nb + ncarry; i++) {
      Aval a = prim_aval_of(ops[nc + i]);
      ok = (in[i] = stage_new_input(st, &a)) != NULL;
    }
    jx_array **cin = malloc((size_t)(nc + ncarry + 1) * sizeof *cin), *pred = NULL;
    ok = ok && cin;
    for (int i = 0; ok && i < nc; i++) cin[i] = in[i];
    for (int i = 0; ok && i < ncarry; i++) cin[nc + i] = in[nc + nb + i];
    ok = ok && prim_eval_jaxpr(Cb, cin, &pred) == JX_OK;
    ok = ok && prim_eval_jaxpr(Bb, in + nc, outs) == JX_OK;
    for (int i = 0; ok && i < ncarry; i++) {
      jx_array *old = in[nc + nb + i];
      jx_array *m = prim_broadcast_in_dim(pred, old->ndim, old->shape, (int[]){0});
      ok = (outs[i] = prim_select(m, outs[i], old)) != NULL;
    }
    free(cin);
    B = stage_finish(st, ok, ncarry, outs, "vmap(body)");
    ok = B != NULL;
  }
  ok = ok && prim_while(C, nc, B, nc + nb, pp->length, nin + nc, ops, y) == JX_OK;
  jaxpr_free(Cb), jaxpr_free(Bb), jaxpr_free(C), jaxpr_free(B);
  free(ops), free(in), free(outs), free(av), free(bds);
  if (!ok) y[0] = NULL;
  return ok ? 0 : NM;
}

/* scan batched (JAX's _scan_batching_rule with every carry batched): batched xs get
 * their batch axis at 1 (axis 0 is scanned), so each slice is batched at 0; the
 * stacked ys come out batched at 1 and are moved to 0 like the carries. */
int loops_batch_scan(Prim p, int nin, jx_array *const *x, const int *bd, const PrimParams *pp,
                     jx_array **y) {
  (void)p;
  int nk = pp->nconsts[0], nc = pp->nconsts[1];
  Jaxpr *bj = pp->branches[0];
  int nout = bj->nout;
  int64_t size = batch_size_of(nin, x, bd);
  jx_array **ops = calloc((size_t)nin + 1, sizeof *ops);
  Aval *av = calloc((size_t)nin + 1, sizeof *av);
  int *bds = calloc((size_t)nin + 1, sizeof *bds);
  bool ok = ops && av && bds;
  if (!ok) oom("vmap of scan");
  for (int i = 0; ok && i < nin; i++) {
    if (i < nk) {
      ops[i] = x[i], av[i] = prim_aval_of(x[i]), bds[i] = bd[i];
    } else if (i < nk + nc) {
      ok = (ops[i] = batch_to(x[i], bd[i], size, 0)) != NULL;
      if (ok) av[i] = prim_aval_of(ops[i]), bds[i] = 0;
    } else {
      ok = (ops[i] = bd[i] == NM ? x[i] : batch_to(x[i], bd[i], size, 1)) != NULL;
      if (ok) av[i] = unstacked(prim_aval_of(ops[i])), bds[i] = bd[i] == NM ? NM : 0;
    }
  }
  Jaxpr *S = ok ? vmap_jaxpr(bj, av, bds, size) : NULL;
  ok = ok && S && prim_scan(S, nk, nc, pp->length, pp->reverse, pp->unroll, nin, ops, y) == JX_OK;
  for (int o = nc; ok && o < nout; o++) ok = (y[o] = batch_to(y[o], 1, size, 0)) != NULL;
  jaxpr_free(S);
  free(ops), free(av), free(bds);
  if (!ok) y[0] = NULL;
  return ok ? 0 : NM;
}

/* ------------------------------------------------------------- transpose */

/* out_lin[o]: j's output o depends on an input with lin[i]. */
static bool linear_outputs(const Jaxpr *j, const bool *lin, bool *out_lin) {
  bool *dep = calloc((size_t)j->nvars + 1, 1);
  if (!dep) return oom("transpose");
  for (int i = 0; i < j->nin; i++) dep[j->invars[i]] = lin[i];
  for (int e = 0; e < j->neqns; e++) {
    const JaxprEqn *q = &j->eqns[e];
    bool any = false;
    for (int i = 0; i < q->nin; i++) any |= dep[q->in[i]];
    for (int o = 0; o < q->nout; o++) dep[q->out[o]] = any;
  }
  for (int o = 0; o < j->nout; o++) out_lin[o] = dep[j->outvars[o]];
  free(dep);
  return true;
}

/* The linear operands with carries promoted: a carry known on entry (a zero tangent
 * linearize instantiated, say) whose body output depends on a linear operand is linear
 * too (JAX's fixed point over the carries in _scan_partial_eval). Only carries of
 * jaxprs JVP built are promoted, so their known value is a constant the linear body
 * never multiplies nonlinearly. lin2 gets a malloc'd copy. */
static bool promote_carries(const Jaxpr *body, const bool *lin, int nin, int first_carry, int ncarry,
                            bool **lin2) {
  bool *l = malloc((size_t)nin + 1), *out_lin = calloc((size_t)body->nout + 1, 1);
  if (!l || !out_lin) {
    free(l), free(out_lin);
    return oom("transpose");
  }
  memcpy(l, lin, (size_t)nin);
  for (bool changed = true; changed;) {
    changed = false;
    if (!linear_outputs(body, l, out_lin)) {
      free(l), free(out_lin);
      return false;
    }
    for (int i = 0; i < ncarry; i++)
      if (!l[first_carry + i] && out_lin[i]) l[first_carry + i] = changed = true;
  }
  free(out_lin);
  *lin2 = l;
  return true;
}

/* The body restricted to its known outputs: staged on the known inputs (avals from
 * the body) with zeros for the linear ones, then simplified (the linear work drops).
 * Inputs in body order without the linear ones; outputs: the known outputs out[k]
 * for which pick[k], then (if res) the known inputs from res_from on as residuals. */
static Jaxpr *known_part(const Jaxpr *body, const bool *lin, const bool *pick, int res_from, int res_to,
                         const char *name) {
  int nin = body->nin, nout = body->nout, nres = 0;
  jx_array **in = calloc((size_t)nin + 1, sizeof *in), **outs = calloc((size_t)nout + 1, sizeof *outs);
  jx_array **res = calloc((size_t)(nout + nin) + 1, sizeof *res);
  bool ok = in && outs && res;
  if (!ok) oom("transpose");
  Trace *st = ok ? stage_begin() : NULL;
  ok = ok && st;
  for (int i = 0; ok && i < nin; i++) {
    Aval a = in_aval(body, i);
    ok = (in[i] = lin[i] ? tx_zeros(&a) : stage_new_input(st, &a)) != NULL;
  }
  ok = ok && prim_eval_jaxpr(body, in, outs) == JX_OK;
  for (int o = 0; ok && o < nout; o++)
    if (pick[o]) res[nres++] = outs[o];
  for (int i = res_from; ok && i < res_to; i++)
    if (!lin[i]) res[nres++] = in[i];
  Jaxpr *J = st ? stage_finish(st, ok, nres, res, name) : NULL;
  free(in), free(outs), free(res);
  return J;
}

/* scan transposed (JAX's _scan_transpose): a forward scan of the known part saves the
 * known carries of every trip (the residuals), then a scan in the other direction runs
 * the body transposed on them -- the body's primal work recomputed per trip from its
 * residual -- carrying the cotangents of the linear carries and accumulating those of
 * the linear consts; the linear xs' cotangents are its ys. */
bool loops_transpose_scan(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                          const Aval *in, const PrimParams *pp, jx_array **ct_in) {
  int nk = pp->nconsts[0], nc = pp->nconsts[1], nx = nin - nk - nc;
  Jaxpr *bj = pp->branches[0];
  int nout = bj->nout, ny = nout - nc;
  int64_t n = pp->length;
  for (int i = 0; i < nin; i++) ct_in[i] = NULL;
  const bool *lin0 = lin;
  bool *lin2 = NULL;
  if (!promote_carries(bj, lin0, nin, nk, nc, &lin2)) return false;
  lin = lin2;
  int nKc = 0, nLc = 0, nKk = 0, nLk = 0, nKx = 0, nLx = 0;
  for (int i = 0; i < nin; i++) {
    int *c = i < nk ? (lin[i] ? &nLc : &nKc) : i < nk + nc ? (lin[i] ? &nLk : &nKk) : (lin[i] ? &nLx : &nKx);
    (*c)++;
  }
  jx_array **args = calloc((size_t)(2 * nin + ny) + 1, sizeof *args);
  jx_array **res = calloc((size_t)(2 * nin + nout) + 1, sizeof *res);
  jx_array **R = calloc((size_t)nc + 1, sizeof *R);
  bool *pick = calloc((size_t)nout + 1, 1);
  bool ok = args && res && R && pick;
  if (!ok) oom("transpose of scan");
  Jaxpr *F = NULL, *T = NULL;
  if (ok && nKk) { /* forward: known carries, saving each trip's as a y */
    for (int i = 0; i < nc; i++) pick[i] = !lin[nk + i];
    ok = (F = known_part(bj, lin, pick, nk, nk + nc, "scan_residuals")) != NULL;
    int na = 0;
    for (int i = 0; ok && i < nin; i++)
      if (!lin[i]) args[na++] = x[i];
    ok = ok && prim_scan(F, nKc, nKk, n, pp->reverse, pp->unroll, na, args, res) == JX_OK;
    for (int i = 0; ok && i < nKk; i++) R[i] = res[nKk + i];
  }
  if (ok) { /* backward: (Kc | ct_Lk, acc_Lc | R, Kx, ct_y) -> (ct_Lk, acc_Lc | ct_Lx) */
    Trace *st = stage_begin();
    ok = st != NULL;
    int nt = nKc + nLk + nLc + nKk + nKx + ny;
    jx_array **tin = calloc((size_t)nt + 1, sizeof *tin), **known = calloc((size_t)nin + 1, sizeof *known);
    jx_array **cto = calloc((size_t)nout + 1, sizeof *cto), **cti = calloc((size_t)nin + 1, sizeof *cti);
    jx_array **tout = calloc((size_t)(nLk + nLc + nLx) + 1, sizeof *tout);
    ok = ok && tin && known && cto && cti && tout;
    int k = 0;
    for (int i = 0; ok && i < nk; i++) /* Kc */
      if (!lin[i]) ok = (known[i] = tin[k++] = stage_new_input(st, &in[i])) != NULL;
    int ct_at = k;
    for (int i = nk; ok && i < nk + nc; i++) /* ct_Lk */
      if (lin[i]) ok = (tin[k++] = stage_new_input(st, &in[i])) != NULL;
    int acc_at = k;
    for (int i = 0; ok && i < nk; i++) /* acc_Lc */
      if (lin[i]) ok = (tin[k++] = stage_new_input(st, &in[i])) != NULL;
    for (int i = nk; ok && i < nk + nc; i++) /* R */
      if (!lin[i]) ok = (known[i] = tin[k++] = stage_new_input(st, &in[i])) != NULL;
    for (int i = nk + nc; ok && i < nin; i++) /* Kx */
      if (!lin[i]) {
        Aval a = unstacked(in[i]);
        ok = (known[i] = tin[k++] = stage_new_input(st, &a)) != NULL;
      }
    for (int o = 0, c = ct_at; ok && o < nout; o++) {
      Aval a = out_aval(bj, o);
      if (o >= nc) ok = (cto[o] = tin[k++] = stage_new_input(st, &a)) != NULL;
      else if (lin[nk + o]) cto[o] = tin[c++];
      else ok = (cto[o] = tx_zeros(&a)) != NULL;
    }
    ok = ok && transpose_partial(bj, lin, known, cto, cti) == JX_OK;
    int m = 0;
    for (int i = nk; ok && i < nk + nc; i++)
      if (lin[i]) tout[m++] = cti[i];
    for (int i = 0, a = acc_at; ok && i < nk; i++)
      if (lin[i]) ok = (tout[m++] = prim_binary(PRIM_add, tin[a++], cti[i])) != NULL;
    for (int i = nk + nc; ok && i < nin; i++)
      if (lin[i]) tout[m++] = cti[i];
    T = st ? stage_finish(st, ok, m, tout, "transpose(scan)") : NULL;
    ok = T != NULL;
    free(tin), free(known), free(cto), free(cti), free(tout);
  }
  if (ok) {
    int na = 0;
    for (int i = 0; i < nk; i++)
      if (!lin[i]) args[na++] = x[i];
    for (int i = nk; ok && i < nk + nc; i++)
      if (lin[i]) ok = (args[na++] = cts[i - nk] ? cts[i - nk] : tx_zeros(&in[i])) != NULL;
    for (int i = 0; ok && i < nk; i++)
      if (lin[i]) ok = (args[na++] = tx_zeros(&in[i])) != NULL;
    for (int i = 0; i < nKk; i++) args[na++] = R[i];
    for (int i = nk + nc; i < nin; i++)
      if (!lin[i]) args[na++] = x[i];
    for (int o = nc; ok && o < nout; o++) {
      Aval a = stacked(out_aval(bj, o), n);
      ok = (args[na++] = cts[o] ? cts[o] : tx_zeros(&a)) != NULL;
    }
    ok = ok && prim_scan(T, nKc, nLk + nLc, n, !pp->reverse, pp->unroll, na, args, res) == JX_OK;
    int m = 0;
    for (int i = nk; ok && i < nk + nc; i++)
      if (lin[i]) ct_in[i] = res[m++];
    for (int i = 0; ok && i < nk; i++)
      if (lin[i]) ct_in[i] = res[m++];
    for (int i = nk + nc; ok && i < nin; i++)
      if (lin[i]) ct_in[i] = res[m++];
    for (int i = 0; i < nin; i++)
      if (!lin0[i]) ct_in[i] = NULL; /* promoted carries: known to the caller */
  }
  (void)nx, (void)nLx;
  jaxpr_free(F), jaxpr_free(T);
  free(args), free(res), free(R), free(pick), free(lin2);
  return ok;
}

/* The bounded while's transposed body: (Kb, Kk residuals, ct_Lk, acc_Lb) ->
 * (ct_Lk, acc_Lb + ct_Lb), the body's primal work recomputed from the residuals. */
static Jaxpr *while_transposed_body(const Jaxpr *bj, const bool *blin, int nb, int ncarry) {
  int nin = bj->nin, k = 0, m = 0;
  Trace *st = stage_begin();
  jx_array **tin = calloc(2 * (size_t)nin + 1, sizeof *tin), **known = calloc((size_t)nin + 1, sizeof *known);
  jx_array **cto = calloc((size_t)ncarry + 1, sizeof *cto), **cti = calloc((size_t)nin + 1, sizeof *cti);
  jx_array **tout = calloc((size_t)nin + 1, sizeof *tout);
  bool ok = st && tin && known && cto && cti && tout;
  if (st && !ok) oom("transpose of while");
  for (int i = 0; ok && i < nin; i++) /* Kb, Kk */
    if (!blin[i]) {
      Aval a = in_aval(bj, i);
      ok = (known[i] = tin[k++] = stage_new_input(st, &a)) != NULL;
    }
  for (int o = 0; ok && o < ncarry; o++) { /* ct_Lk (zeros for the known carries) */
    Aval a = out_aval(bj, o);
    ok = (cto[o] = blin[nb + o] ? (tin[k++] = stage_new_input(st, &a)) : tx_zeros(&a)) != NULL;
  }
  int acc_at = k;
  for (int i = 0; ok && i < nb; i++)
    if (blin[i]) {
      Aval a = in_aval(bj, i);
      ok = (tin[k++] = stage_new_input(st, &a)) != NULL;
    }
  ok = ok && transpose_partial(bj, blin, known, cto, cti) == JX_OK;
  for (int i = nb; ok && i < nin; i++)
    if (blin[i]) tout[m++] = cti[i];
  for (int i = 0, a = acc_at; ok && i < nb; i++)
    if (blin[i]) ok = (tout[m++] = prim_binary(PRIM_add, tin[a++], cti[i])) != NULL;
  Jaxpr *J = st ? stage_finish(st, ok, m, tout, "transpose(while_body)") : NULL;
  free(tin), free(known), free(cto), free(cti), free(tout);
  return J;
}

/* Residuals of a bounded while: one row of nkk known carries per trip taken. */
typedef struct Residuals {
  int64_t n, cap;
  jx_array **rows; /* n * nkk */
} Residuals;

/* A bounded while transposed under jit or another transformation, where its known
 * values are staged and the trips it takes are not known when the transpose is traced:
 * the loop as two scans over the bound. The forward one carries the known carries and an
 * `active` flag (cleared from the first trip whose predicate is false) and saves each
 * trip's known carries and flag; the reversed one runs the transposed body on them and
 * keeps the cotangents of inactive trips unchanged. Memory is proportional to the bound
 * here (the host version below keeps only the trips taken). lin: the promoted linear
 * operands; Ck, Fk, BT: the known predicate and body and the transposed body. */
static bool transpose_while_masked(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                                   const Aval *in, const PrimParams *pp, Jaxpr *Ck, Jaxpr *Fk, Jaxpr *BT,
                                   jx_array **ct_in) {
  int nc = pp->nconsts[0], nb = pp->nconsts[1], ncarry = nin - nc - nb, nkk = 0, nlk = 0, nkb = 0, nlb = 0;
  for (int i = 0; i < ncarry; i++) nlk += lin[nc + nb + i], nkk += !lin[nc + nb + i];
  for (int i = 0; i < nb; i++) nlb += lin[nc + i], nkb += !lin[nc + i];
  int64_t n = pp->length;
  Aval flag = {.dtype = JX_BOOL, .ndim = 0};
  int most = nin + nkk + nlk + nlb + 4;
  jx_array **a = calloc((size_t)most, sizeof *a), **b = calloc((size_t)most, sizeof *b);
  jx_array **o = calloc((size_t)most, sizeof *o), **r = calloc((size_t)most, sizeof *r);
  bool ok = a && b && o && r;
  if (!ok) oom("transpose of while");
  /* forward: (cond consts, known body consts | known carries, active) -> (... | rows, active) */
  Trace *st = ok ? stage_begin() : NULL;
  ok = ok && st;
  int k = 0;
  for (int i = 0; ok && i < nc + nb; i++)
    if (!lin[i]) ok = (a[k++] = stage_new_input(st, &in[i])) != NULL;
  for (int i = 0; ok && i < ncarry; i++)
    if (!lin[nc + nb + i]) ok = (a[k++] = stage_new_input(st, &in[nc + nb + i])) != NULL;
  jx_array *active = ok ? stage_new_input(st, &flag) : NULL, *pred = NULL;
  ok = ok && active;
  for (int i = 0; ok && i < nc; i++) b[i] = a[i]; /* Ck: (cond consts, known carries) */
  for (int i = 0; ok && i < nkk; i++) b[nc + i] = a[nc + nkb + i];
  ok = ok && prim_eval_jaxpr(Ck, b, &pred) == JX_OK;
  jx_array *go = ok ? prim_binary(PRIM_and, active, pred) : NULL;
  ok = ok && go && prim_eval_jaxpr(Fk, a + nc, o) == JX_OK; /* Fk: (known body consts, known carries) */
  for (int i = 0; ok && i < nkk; i++) {
    jx_array *old = a[nc + nkb + i];
    jx_array *m = old->ndim ? prim_broadcast_in_dim(go, old->ndim, old->shape, NULL) : go;
    ok = m && (r[i] = prim_select(m, o[i], old)) != NULL;
    r[nkk + 1 + i] = old;
  }
  r[nkk] = go, r[2 * nkk + 1] = go;
  char name[256];
  snprintf(name, sizeof name, "masked(%s)", Fk->name ? Fk->name : "while_known_body");
  Jaxpr *F = st ? stage_finish(st, ok, 2 * nkk + 2, r, name) : NULL;
  ok = ok && F;
  /* backward: (known body consts | cotangents | rows, active) -> cotangents */
  st = ok ? stage_begin() : NULL;
  ok = ok && st;
  k = 0;
  for (int i = 0; ok && i < nb; i++)
    if (!lin[nc + i]) ok = (b[k++] = stage_new_input(st, &in[nc + i])) != NULL;
  int rows_at = k; /* BT: (known body consts, rows, cotangents) */
  k += nkk;
  for (int i = 0; ok && i < ncarry; i++)
    if (lin[nc + nb + i]) ok = (b[k++] = stage_new_input(st, &in[nc + nb + i])) != NULL;
  for (int i = 0; ok && i < nb; i++)
    if (lin[nc + i]) ok = (b[k++] = stage_new_input(st, &in[nc + i])) != NULL;
  for (int i = 0, j = rows_at; ok && i < ncarry; i++)
    if (!lin[nc + nb + i]) ok = (b[j++] = stage_new_input(st, &in[nc + nb + i])) != NULL;
  jx_array *on = ok ? stage_new_input(st, &flag) : NULL;
  ok = ok && on && prim_eval_jaxpr(BT, b, o) == JX_OK;
  for (int i = 0; ok && i < nlk + nlb; i++) {
    jx_array *old = b[rows_at + nkk + i];
    jx_array *m = old->ndim ? prim_broadcast_in_dim(on, old->ndim, old->shape, NULL) : on;
    ok = m && (r[i] = prim_select(m, o[i], old)) != NULL;
  }
  snprintf(name, sizeof name, "masked(%s)", BT->name ? BT->name : "transpose(while_body)");
  Jaxpr *T = st ? stage_finish(st, ok, nlk + nlb, r, name) : NULL;
  ok = ok && T;
  /* the two scans */
  k = 0;
  for (int i = 0; ok && i < nc + nb; i++)
    if (!lin[i]) a[k++] = x[i];
  for (int i = 0; ok && i < ncarry; i++)
    if (!lin[nc + nb + i]) a[k++] = x[nc + nb + i];
  jx_array *yes = ok ? tx_full(&flag, 1.0) : NULL;
  ok = ok && yes;
  a[k++] = yes;
  ok = ok && prim_scan(F, nc + nkb, nkk + 1, n, false, 1, k, a, o) == JX_OK; /* o: carries, active, rows, flags */
  k = 0;
  for (int i = 0; ok && i < nb; i++)
    if (!lin[nc + i]) b[k++] = x[nc + i];
  for (int i = 0; ok && i < ncarry; i++)
    if (lin[nc + nb + i]) ok = (b[k++] = cts[i] ? cts[i] : tx_zeros(&in[nc + nb + i])) != NULL;
  for (int i = 0; ok && i < nb; i++)
    if (lin[nc + i]) ok = (b[k++] = tx_zeros(&in[nc + i])) != NULL;
  for (int i = 0; ok && i <= nkk; i++) b[k++] = o[nkk + 1 + i];
  ok = ok && prim_scan(T, nkb, nlk + nlb, n, true, 1, k, b, r) == JX_OK;
  k = 0;
  for (int i = 0; ok && i < ncarry; i++)
    if (lin[nc + nb + i]) ct_in[nc + nb + i] = r[k++];
  for (int i = 0; ok && i < nb; i++)
    if (lin[nc + i]) ct_in[nc + i] = r[k++];
  jaxpr_free(F), jaxpr_free(T);
  free(a), free(b), free(o), free(r);
  return ok;
}

/* A bounded while transposed (past JAX, whose while_loop has no reverse mode): the
 * known part runs forward on the host -- cond read each trip -- keeping the known
 * carries of each trip taken (memory proportional to the trips, not the bound), then
 * the transposed body runs once per trip in reverse. The known values must be
 * concrete (the trip count is data-dependent). */
bool loops_transpose_while(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                           const Aval *in, const PrimParams *pp, jx_array **ct_in) {
  int nc = pp->nconsts[0], nb = pp->nconsts[1], ncarry = nin - nc - nb;
  Jaxpr *cj = pp->branches[0], *bj = pp->branches[1];
  for (int i = 0; i < nin; i++) ct_in[i] = NULL;
  if (pp->length <= 0) {
    error_set(JX_ERR_UNSUPPORTED, "reverse-mode differentiation of while_loop needs a trip bound (as in "
              "JAX, where it is unsupported): use jx_lax_while_loop_bounded, or lax.scan / fori_loop with "
              "static bounds");
    return false;
  }
  for (int i = 0; i < nc; i++)
    if (lin[i]) {
      error_set(JX_ERR_INTERNAL, "transpose: while with a linear cond const");
      return false;
    }
  bool staged = false; /* under jit (or another transformation): the trip count is not known */
  for (int i = 0; i < nin; i++) staged |= !lin[i] && x[i]->tracer;
  const bool *lin0 = lin;
  bool *blin2 = NULL, *lin2 = malloc((size_t)nin + 1);
  if (!lin2 || !promote_carries(bj, lin + nc, nb + ncarry, nb, ncarry, &blin2)) {
    free(lin2);
    return lin2 ? false : oom("transpose of while");
  }
  memcpy(lin2, lin, (size_t)nc), memcpy(lin2 + nc, blin2, (size_t)(nb + ncarry));
  free(blin2);
  lin = lin2;
  const bool *blin = lin + nc; /* the body's inputs: (bconsts, carries) */
  bool *clin = calloc((size_t)(nc + ncarry) + 1, 1), *pick = calloc((size_t)ncarry + 1, 1);
  bool ok = clin && pick;
  if (!ok) oom("transpose of while");
  int nkk = 0, nlk = 0, nlb = 0, nkb = 0;
  for (int i = 0; ok && i < ncarry; i++) clin[nc + i] = lin[nc + nb + i], pick[i] = !lin[nc + nb + i];
  for (int i = 0; i < ncarry; i++) nlk += lin[nc + nb + i], nkk += !lin[nc + nb + i];
  for (int i = 0; i < nb; i++) nlb += lin[nc + i], nkb += !lin[nc + i];
  Jaxpr *Fk = ok ? known_part(bj, blin, pick, 0, 0, "while_known_body") : NULL;
  Jaxpr *Ck = Fk ? known_part(cj, clin, (bool[]){true}, 0, 0, "while_known_cond") : NULL;
  Jaxpr *BT = Ck ? while_transposed_body(bj, blin, nb, ncarry) : NULL;
  ok = ok && BT;
  jx_array **cin = calloc((size_t)(nc + nkk) + 1, sizeof *cin), **bin = calloc((size_t)(nkb + nkk) + 1, sizeof *bin);
  jx_array **kk = calloc((size_t)nkk + 1, sizeof *kk), **tin = calloc((size_t)(nkb + nkk + nlk + nlb) + 1, sizeof *tin);
  jx_array **acc = calloc((size_t)(nlk + nlb) + 1, sizeof *acc), **nxt = calloc((size_t)(nlk + nlb + nkk) + 1, sizeof *nxt);
  Residuals R = {0};
  ok = ok && cin && bin && kk && tin && acc && nxt;
  if (ok && staged) {
    ok = transpose_while_masked(cts, nin, x, lin, in, pp, Ck, Fk, BT, ct_in);
    for (int i = 0; i < nin; i++)
      if (!lin0[i] && ct_in[i]) jx_free(ct_in[i]), ct_in[i] = NULL; /* promoted carries */
    jaxpr_free(Fk), jaxpr_free(Ck), jaxpr_free(BT);
    free(lin2), free(clin), free(pick), free(cin), free(bin), free(kk), free(tin), free(acc), free(nxt);
    return ok;
  }
  int k = 0;
  for (int i = 0; ok && i < ncarry; i++)
    if (!lin[nc + nb + i]) kk[k++] = array_retain(x[nc + nb + i]);
  k = 0;
  for (int i = 0; ok && i < nc; i++) cin[k++] = x[i];
  k = 0;
  for (int i = 0; ok && i < nb; i++)
    if (!lin[nc + i]) bin[k] = tin[k] = x[nc + i], k++;
  /* forward: the known carries of each trip taken. Rows and carries are held with
   * array_retain and each trip runs in its own scope, so memory is the rows alone. */
  for (int64_t trip = 0; ok && trip < pp->length; trip++) {
    for (int i = 0; i < nkk; i++) cin[nc + i] = bin[nkb + i] = kk[i];
    jx_scope_begin();
    jx_array *pred = NULL;
    ok = prim_eval_jaxpr(Ck, cin, &pred) == JX_OK;
    bool go = ok && jx_item(pred) != 0;
    if (go && R.n + 1 > R.cap) {
      R.cap = R.cap ? 2 * R.cap : 16;
      jx_array **r = realloc(R.rows, (size_t)(R.cap * (nkk ? nkk : 1)) * sizeof *r);
      if (!r) ok = oom("transpose of while");
      else R.rows = r;
    }
    if (go && ok) {
      for (int i = 0; i < nkk; i++) R.rows[R.n * nkk + i] = kk[i]; /* the row keeps kk's reference */
      R.n++;
      ok = prim_eval_jaxpr(Fk, bin, nxt) == JX_OK;
      for (int i = 0; i < nkk; i++) kk[i] = ok ? array_retain(nxt[i]) : NULL;
    }
    jx_scope_end(0, NULL);
    if (!go) break;
  }
  for (int i = 0; i < nkk; i++) array_drop(kk[i]); /* the final known carries are not needed */
  /* backward: ct of the linear carries and accumulated cts of the linear bconsts */
  k = 0;
  for (int i = 0; ok && i < ncarry; i++)
    if (lin[nc + nb + i]) ok = (acc[k++] = array_retain(cts[i] ? cts[i] : tx_zeros(&in[nc + nb + i]))) != NULL;
  for (int i = 0; ok && i < nb; i++)
    if (lin[nc + i]) ok = (acc[k++] = array_retain(tx_zeros(&in[nc + i]))) != NULL;
  for (int64_t trip = R.n - 1; trip >= 0; trip--) {
    for (int i = 0; ok && i < nkk; i++) tin[nkb + i] = R.rows[trip * nkk + i];
    for (int i = 0; ok && i < nlk + nlb; i++) tin[nkb + nkk + i] = acc[i];
    jx_scope_begin();
    ok = ok && prim_eval_jaxpr(BT, tin, nxt) == JX_OK;
    for (int i = 0; ok && i < nlk + nlb; i++) array_drop(acc[i]), acc[i] = array_retain(nxt[i]);
    jx_scope_end(0, NULL);
    for (int i = 0; i < nkk; i++) array_drop(R.rows[trip * nkk + i]);
  }
  k = 0;
  for (int i = 0; i < ncarry; i++)
    if (lin[nc + nb + i]) ct_in[nc + nb + i] = ok ? jx_ref(acc[k]) : NULL, k++;
  for (int i = 0; i < nb; i++)
    if (lin[nc + i]) ct_in[nc + i] = ok ? jx_ref(acc[k]) : NULL, k++;
  for (int i = 0; i < nlk + nlb; i++) array_drop(acc[i]);
  for (int i = 0; i < nin; i++)
    if (!lin0[i] && ct_in[i]) jx_free(ct_in[i]), ct_in[i] = NULL; /* promoted carries */
  jaxpr_free(Fk), jaxpr_free(Ck), jaxpr_free(BT);
  free(lin2), free(clin), free(pick), free(cin), free(bin), free(kk), free(tin), free(acc), free(nxt), free(R.rows);
  return ok;
}
