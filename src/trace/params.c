/* params.c -- primitive parameters as values: structural hashing and equality (CSE and
 * caches never compare pointers or padding bytes), and jaxprs as parameters: their
 * structural identity and their evaluation by binding each equation. */
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/error.h"
#include "trace/trace.h"

#define FNV_PRIME 1099511628211ull

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * FNV_PRIME; }

static uint64_t mix_ints(uint64_t h, int n, const int *v) {
  for (int i = 0; i < n; i++) h = mix(h, (uint64_t)(uint32_t)v[i]);
  return h;
}

static uint64_t mix_i64s(uint64_t h, int n, const int64_t *v) {
  for (int i = 0; i < n; i++) h = mix(h, (uint64_t)v[i]);
  return h;
}

static uint64_t double_bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* Every field is hashed and compared: unused ones are zero (params are built from
 * designated initializers), so no field needs a per-primitive rule. */
uint64_t prim_params_hash(Prim p, const PrimParams *pp) {
  uint64_t h = mix(1469598103934665603ull, (uint64_t)p);
  h = mix(h, (uint64_t)pp->dtype);
  h = mix(h, pp->weak);
  h = mix(h, (uint64_t)pp->naxes);
  h = mix_ints(h, JX_MAX_NDIM, pp->axes);
  h = mix(h, (uint64_t)pp->ndim);
  h = mix_i64s(h, JX_MAX_NDIM, pp->shape);
  h = mix_i64s(h, JX_MAX_NDIM, pp->start);
  h = mix_i64s(h, JX_MAX_NDIM, pp->stop);
  h = mix_i64s(h, JX_MAX_NDIM, pp->step);
  h = mix(h, double_bits(pp->value));
  h = mix(h, (uint64_t)pp->axis);
  h = mix(h, (uint64_t)pp->ncontract);
  h = mix(h, (uint64_t)pp->nbatch);
  h = mix_ints(h, JX_MAX_NDIM, pp->lhs_contract);
  h = mix_ints(h, JX_MAX_NDIM, pp->rhs_contract);
  h = mix_ints(h, JX_MAX_NDIM, pp->lhs_batch);
  h = mix_ints(h, JX_MAX_NDIM, pp->rhs_batch);
  h = mix(h, (uint64_t)pp->flags);
  if (pp->jaxpr) h = mix(h, prim_jaxpr_hash(pp->jaxpr));
  for (const char *c = pp->rule ? pp->rule->name : ""; *c; c++) h = mix(h, (uint64_t)(unsigned char)*c);
  h = mix(h, (uint64_t)pp->nbranches);
  for (int b = 0; b < pp->nbranches; b++) h = mix(h, prim_jaxpr_hash(pp->branches[b]));
  h = mix(h, (uint64_t)pp->nfns);
  for (int f = 0; f < pp->nfns; f++) h = mix(h, (uint64_t)(uintptr_t)pp->fns[f]); /* identity */
  h = mix(h, (uint64_t)pp->nres);
  h = mix(h, (uint64_t)(uintptr_t)pp->text); /* interned */
  h = mix_ints(h, 2, pp->nconsts);
  h = mix(h, (uint64_t)pp->length);
  h = mix(h, (uint64_t)pp->unroll);
  h = mix(h, pp->reverse);
  h = mix(h, pp->tiled);
  h = mix(h, (uint64_t)pp->axis2);
  for (int i = 0; i < PRIM_MAX_AXIS_SIZE; i++) h = mix(h, (uint64_t)pp->perm[i]);
  h = mix(h, (uint64_t)(uintptr_t)pp->shard); /* interned */
  return h;
}

#define SAME_ARRAY(a, b) (memcmp((a), (b), sizeof(a)) == 0)

bool prim_params_equal(Prim p, const PrimParams *a, const PrimParams *b) {
  (void)p;
  if (a->dtype != b->dtype || a->weak != b->weak || a->naxes != b->naxes ||
      !SAME_ARRAY(a->axes, b->axes) || a->ndim != b->ndim || !SAME_ARRAY(a->shape, b->shape) ||
      !SAME_ARRAY(a->start, b->start) || !SAME_ARRAY(a->stop, b->stop) ||
      !SAME_ARRAY(a->step, b->step) || double_bits(a->value) != double_bits(b->value) ||
      a->axis != b->axis || a->ncontract != b->ncontract || a->nbatch != b->nbatch ||
      !SAME_ARRAY(a->lhs_contract, b->lhs_contract) || !SAME_ARRAY(a->rhs_contract, b->rhs_contract) ||
      !SAME_ARRAY(a->lhs_batch, b->lhs_batch) || !SAME_ARRAY(a->rhs_batch, b->rhs_batch) ||
      a->flags != b->flags || a->rule != b->rule)
    return false;
  if (a->nbranches != b->nbranches || a->nfns != b->nfns || a->nres != b->nres || a->text != b->text)
    return false;
  for (int f = 0; f < a->nfns; f++)
    if (a->fns[f] != b->fns[f]) return false;
  if (a->nbranches != b->nbranches || !SAME_ARRAY(a->nconsts, b->nconsts) || a->length != b->length ||
      a->unroll != b->unroll || a->reverse != b->reverse || a->tiled != b->tiled ||
      a->axis2 != b->axis2 || !SAME_ARRAY(a->perm, b->perm) || a->shard != b->shard)
    return false;
  for (int k = 0; k < a->nbranches; k++)
    if (!prim_jaxpr_equal(a->branches[k], b->branches[k])) return false;
  if (!a->jaxpr || !b->jaxpr) return a->jaxpr == b->jaxpr;
  return prim_jaxpr_equal(a->jaxpr, b->jaxpr);
}

/* ------------------------------------------------------- jaxprs as values */

static uint64_t mix_aval(uint64_t h, const Aval *a) {
  h = mix(h, (uint64_t)a->dtype);
  h = mix(h, a->weak);
  h = mix(h, (uint64_t)a->ndim);
  return mix_i64s(h, a->ndim, a->shape);
}

static bool aval_same(const Aval *a, const Aval *b) {
  return a->dtype == b->dtype && a->weak == b->weak && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* Position of every variable in definition order (constvars, invars, equation
 * results): the structural name of a variable. -1 for unused ids. */
static int *def_order(const Jaxpr *j) {
  int *pos = malloc((size_t)(j->nvars ? j->nvars : 1) * sizeof *pos), n = 0;
  if (!pos) return NULL;
  for (int v = 0; v < j->nvars; v++) pos[v] = -1;
  for (int i = 0; i < j->nconst; i++) pos[j->constvars[i]] = n++;
  for (int i = 0; i < j->nin; i++) pos[j->invars[i]] = n++;
  for (int e = 0; e < j->neqns; e++)
    for (int o = 0; o < j->eqns[e].nout; o++) pos[j->eqns[e].out[o]] = n++;
  return pos;
}

uint64_t prim_jaxpr_hash(const Jaxpr *j) {
  uint64_t h = mix(mix(mix(0xcbf29ce484222325ull, (uint64_t)j->nin), (uint64_t)j->nout), (uint64_t)j->nconst);
  int *pos = def_order(j);
  if (!pos) return h; /* a weaker hash is still a hash */
  for (int i = 0; i < j->nconst; i++) h = mix_aval(h, &j->vars[j->constvars[i]]);
  for (int i = 0; i < j->nin; i++) h = mix_aval(h, &j->vars[j->invars[i]]);
  for (int e = 0; e < j->neqns; e++) {
    const JaxprEqn *q = &j->eqns[e];
    h = mix(h, prim_params_hash(q->prim, &q->params));
    for (int i = 0; i < q->nin; i++) h = mix(h, (uint64_t)pos[q->in[i]]);
    for (int o = 0; o < q->nout; o++) h = mix_aval(h, &j->vars[q->out[o]]);
  }
  for (int o = 0; o < j->nout; o++) h = mix(h, (uint64_t)pos[j->outvars[o]]);
  free(pos);
  return h;
}

/* Constants are equal when they are the same array or hold the same elements. */
static bool const_equal(jx_array *a, jx_array *b) {
  if (a == b) return true;
  Aval x = prim_aval_of(a), y = prim_aval_of(b);
  if (!aval_same(&x, &y) || a->tracer || b->tracer) return false;
  size_t n = (size_t)shape_numel(a->ndim, a->shape) * jx_dtype_itemsize(a->dtype);
  char *p = malloc(n ? n : 1), *q = malloc(n ? n : 1);
  bool same = p && q && jx_read(a, p, n) == JX_OK && jx_read(b, q, n) == JX_OK && memcmp(p, q, n) == 0;
  free(p), free(q);
  return same;
}

bool prim_jaxpr_equal(const Jaxpr *a, const Jaxpr *b) {
  if (a == b) return true;
  if (a->nin != b->nin || a->nout != b->nout || a->nconst != b->nconst || a->neqns != b->neqns)
    return false;
  if ((a->name || b->name) && (!a->name || !b->name || strcmp(a->name, b->name) != 0)) return false;
  int *pa = def_order(a), *pb = def_order(b);
  bool same = pa && pb;
  for (int i = 0; same && i < a->nconst; i++)
    same = aval_same(&a->vars[a->constvars[i]], &b->vars[b->constvars[i]]) &&
           const_equal(a->consts[i], b->consts[i]);
  for (int i = 0; same && i < a->nin; i++) same = aval_same(&a->vars[a->invars[i]], &b->vars[b->invars[i]]);
  for (int e = 0; same && e < a->neqns; e++) {
    const JaxprEqn *p = &a->eqns[e], *q = &b->eqns[e];
    same = p->prim == q->prim && p->nin == q->nin && p->nout == q->nout &&
           prim_params_equal(p->prim, &p->params, &q->params);
    for (int i = 0; same && i < p->nin; i++) same = pa[p->in[i]] == pb[q->in[i]];
    for (int o = 0; same && o < p->nout; o++) same = aval_same(&a->vars[p->out[o]], &b->vars[q->out[o]]);
  }
  for (int o = 0; same && o < a->nout; o++) same = pa[a->outvars[o]] == pb[b->outvars[o]];
  free(pa), free(pb);
  return same;
}

/* ------------------------------------------------------------ evaluation */

jx_status prim_eval_jaxpr(const Jaxpr *j, jx_array *const *in, jx_array **out) {
  jx_array **env = calloc((size_t)(j->nvars ? j->nvars : 1), sizeof *env);
  if (!env) {
    error_set(JX_ERR_OOM, "jaxpr_eval: out of memory");
    return JX_ERR_OOM;
  }
  jx_scope_begin();
  for (int i = 0; i < j->nconst; i++) env[j->constvars[i]] = j->consts[i];
  for (int i = 0; i < j->nin; i++) env[j->invars[i]] = in[i];
  jx_status s = JX_OK;
  jx_array *args_small[8], *res_small[8];
  for (int e = 0; e < j->neqns && s == JX_OK; e++) {
    const JaxprEqn *q = &j->eqns[e];
    jx_array **args = q->nin <= 8 ? args_small : malloc((size_t)q->nin * sizeof *args);
    jx_array **res = q->nout <= 8 ? res_small : malloc((size_t)q->nout * sizeof *res);
    if (!args || !res) {
      error_set(JX_ERR_OOM, "jaxpr_eval: out of memory");
      s = JX_ERR_OOM;
    } else {
      for (int i = 0; i < q->nin; i++) args[i] = env[q->in[i]];
      s = prim_bind_n(q->prim, q->nin, args, &q->params, q->nout, res);
      for (int o = 0; s == JX_OK && o < q->nout; o++) env[q->out[o]] = res[o];
    }
    if (args != args_small) free(args);
    if (res != res_small) free(res);
  }
  for (int i = 0; i < j->nout; i++) out[i] = s == JX_OK ? jx_ref(env[j->outvars[i]]) : NULL;
  jx_scope_end(s == JX_OK ? j->nout : 0, out);
  free(env);
  return s;
}
