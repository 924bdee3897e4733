/* control.c -- lax control flow (lax.cond, lax.switch): user callbacks (jx_fn) are
 * traced once into closed jaxprs for the operands' types and bound as one cond
 * equation, so every transformation and jit sees the branches (JAX's
 * jax/_src/lax/control_flow/conditionals.py). Values the branches close over that an
 * enclosing transformation traces become leading operands of the cond, taken by every
 * branch (JAX's closure conversion), so cond differentiates with respect to them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/transform.h"

/* f traced into a closed jaxpr for the operands' types (stage_trace_closure): the
 * values it closes over that an enclosing transformation traces are hoisted to its
 * leading inputs, consts[0 .. *nconsts). NULL with the error set on failure. */
static Jaxpr *trace_branch(const char *fn, jx_fn *f, int nin, jx_array *const *ops, int *nconsts,
                           jx_array ***consts) {
  *nconsts = 0, *consts = NULL;
  if (jx_fn_nin(f) != nin) {
    error_set(JX_ERR_VALUE, "%s: %s takes %d inputs, %d operands given", fn, jx_fn_name(f), jx_fn_nin(f), nin);
    return NULL;
  }
  return stage_trace_closure(fn, f, ops, nconsts, consts);
}

/* The branches' closed-over tracers, each branch's own leading inputs, joined as JAX's
 * _initial_style_jaxprs_with_common_consts does: the union U (each array once, in the
 * order of `order`, the order JAX traces the branches in) becomes the leading inputs of
 * every branch -- a branch that does not use one gets an unused input of its type -- and
 * the cond's leading operands. *nu and u (capacity `cap`) receive U (borrowed from the
 * branches' consts). false on OOM. */
static bool common_consts(const char *fn, int nbranches, const int *order, Jaxpr *const *js,
                          const int *nconsts, jx_array **const *consts, int cap, int *nu, jx_array **u) {
  *nu = 0;
  if (!cap) return true; /* no branch closes over a tracer */
  Aval *av = malloc((size_t)(cap + 1) * sizeof *av);
  int *invars = NULL;
  bool ok = av != NULL;
  for (int k = 0; ok && k < nbranches; k++) {
    int b = order[k];
    for (int c = 0; c < nconsts[b]; c++) {
      int at = 0;
      while (at < *nu && u[at] != consts[b][c]) at++;
      if (at == *nu) u[*nu] = consts[b][c], av[(*nu)++] = js[b]->vars[js[b]->invars[c]];
    }
  }
  for (int b = 0; ok && b < nbranches; b++) {
    Jaxpr *j = js[b];
    int nops = j->nin - nconsts[b];
    ok = (invars = malloc((size_t)(*nu + nops + 1) * sizeof *invars)) != NULL;
    for (int i = 0; ok && i < *nu; i++) {
      int c = 0;
      while (c < nconsts[b] && consts[b][c] != u[i]) c++;
      invars[i] = c < nconsts[b] ? j->invars[c] : jaxpr_add_var(j, &av[i]);
      ok = invars[i] >= 0;
    }
    if (ok) {
      memcpy(invars + *nu, j->invars + nconsts[b], (size_t)nops * sizeof *invars);
      free(j->invars);
      j->invars = invars, j->nin = *nu + nops, invars = NULL;
    }
  }
  free(invars), free(av);
  if (!ok) error_set(JX_ERR_OOM, "%s: out of memory", fn);
  return ok;
}

/* How a message names branch b: cond's two branches by the argument the caller passed
 * (branch 0 is false_fn, as JAX orders them), switch's by index; with the function's name. */
static const char *branch_label(char *buf, size_t n, const char *fn, jx_fn *const *branches, int b) {
  if (!strcmp(fn, "jx_lax_cond"))
    snprintf(buf, n, "%s (%s)", b ? "true_fn" : "false_fn", jx_fn_name(branches[b]));
  else
    snprintf(buf, n, "branch %d (%s)", b, jx_fn_name(branches[b]));
  return buf;
}

/* The shared body of cond and switch: index already an int32 scalar; `order` the order
 * in which JAX traces the branches (cond: true first). */
static jx_status run_switch(const char *fn, jx_array *index, int nbranches, jx_fn *const *branches,
                            const int *order, int nops, jx_array *const *operands, jx_array **out) {
  int nout = jx_fn_nout(branches[0]);
  for (int o = 0; o < nout; o++) out[o] = NULL;
  Jaxpr *js[PRIM_MAX_BRANCHES] = {NULL};
  int nconsts[PRIM_MAX_BRANCHES] = {0}, total = 0;
  jx_array **consts[PRIM_MAX_BRANCHES] = {NULL};
  jx_status s = JX_OK;
  for (int k = 0; k < nbranches && s == JX_OK; k++) {
    int b = order[k];
    if (!(js[b] = trace_branch(fn, branches[b], nops, operands, &nconsts[b], &consts[b]))) s = jx_last_status();
    total += nconsts[b];
  }
  for (int b = 1; b < nbranches && s == JX_OK; b++) /* the primitive checks this too, */
    for (int o = 0; o < nout && s == JX_OK; o++) {  /* in its own name */
      const Aval *a = &js[b]->vars[js[b]->outvars[o]], *z = &js[0]->vars[js[0]->outvars[o]];
      if (a->dtype == z->dtype && a->ndim == z->ndim && !memcmp(a->shape, z->shape, (size_t)a->ndim * sizeof(int64_t)))
        continue;
      char t0[ARRAY_DESCRIBE_BUF], t1[ARRAY_DESCRIBE_BUF], l0[160], l1[160];
      aval_text(t0, sizeof t0, z), aval_text(t1, sizeof t1, a);
      s = a->dtype != z->dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE;
      error_set(s, "%s: branches must give equal output types: output %d is %s in %s but %s in %s", fn, o,
                t0, branch_label(l0, sizeof l0, fn, branches, 0), t1, branch_label(l1, sizeof l1, fn, branches, b));
    }
  /* ops = (the closed-over tracers of every branch, operands...) */
  jx_array **ops = s == JX_OK ? malloc((size_t)(total + nops + 1) * sizeof *ops) : NULL;
  int nu = 0;
  if (s == JX_OK && !ops) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    s = JX_ERR_OOM;
  }
  if (s == JX_OK && !common_consts(fn, nbranches, order, js, nconsts, consts, total, &nu, ops))
    s = JX_ERR_OOM;
  if (s == JX_OK) {
    for (int i = 0; i < nops; i++) ops[nu + i] = operands[i];
    s = prim_cond(nbranches, js, index, nu + nops, ops, out);
  }
  free(ops);
  for (int b = 0; b < nbranches; b++) jaxpr_free(js[b]), stage_consts_free(nconsts[b], consts[b]);
  return s;
}

static bool check_args(const char *fn, int nbranches, jx_fn *const *branches, int nops,
                       jx_array *const *operands, jx_array **out) {
  if (nbranches < 1 || !branches || !out || nops < 0 || (nops && !operands)) {
    error_set(JX_ERR_VALUE, "%s: needs at least one branch, an out array and %d operands", fn, nops);
    return false;
  }
  if (nbranches > PRIM_MAX_BRANCHES) {
    error_set(JX_ERR_UNSUPPORTED, "%s: %d branches (at most %d)", fn, nbranches, PRIM_MAX_BRANCHES);
    return false;
  }
  for (int b = 0; b < nbranches; b++)
    if (!branches[b]) {
      error_set(JX_ERR_VALUE, "%s: branch %d is NULL", fn, b);
      return false;
    }
  for (int b = 1; b < nbranches; b++)
    if (jx_fn_nout(branches[b]) != jx_fn_nout(branches[0])) {
      char l0[160], lb[160];
      error_set(JX_ERR_VALUE, "%s: %s gives %d outputs but %s gives %d", fn,
                branch_label(lb, sizeof lb, fn, branches, b), jx_fn_nout(branches[b]),
                branch_label(l0, sizeof l0, fn, branches, 0), jx_fn_nout(branches[0]));
      return false;
    }
  for (int i = 0; i < nops; i++)
    if (!operands[i]) {
      if (!error_pending()) error_set(JX_ERR_VALUE, "%s: operand %d is NULL", fn, i);
      return false;
    }
  return true;
}

static bool scalar_index(const char *fn, jx_array *x, bool allow_bool) {
  if (!x) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "%s: the %s is NULL", fn, allow_bool ? "predicate" : "index");
    return false;
  }
  /* lax.cond takes a bool, integer or floating-point predicate (nonzero is true); lax.switch
   * an integer index */
  bool ok_dtype = dtype_is_integer(x->dtype) ||
                  (allow_bool && (x->dtype == JX_BOOL || dtype_is_floating(x->dtype)));
  if (x->ndim != 0 || !ok_dtype) {
    char type[ARRAY_DESCRIBE_BUF];
    error_set(x->ndim ? JX_ERR_SHAPE : JX_ERR_DTYPE, "%s: the %s must be a scalar %s, got %s", fn,
              allow_bool ? "predicate" : "index", allow_bool ? "bool, integer or floating-point" : "integer",
              array_describe(type, x));
    return false;
  }
  return true;
}

jx_status jx_lax_switch(jx_array *index, int nbranches, jx_fn *const *branches, int nops,
                        jx_array *const *operands, jx_array **out) {
  const char *fn = "jx_lax_switch";
  if (!check_args(fn, nbranches, branches, nops, operands, out) || !scalar_index(fn, index, false))
    return jx_last_status();
  if (nbranches == 1) return jx_call(branches[0], operands, out); /* as JAX */
  jx_scope_begin();
  /* index = clamp(0, int32(index), n - 1), as lax.switch */
  jx_array *i32 = prim_convert(index, JX_INT32, false);
  Aval sa = {.dtype = JX_INT32};
  jx_array *lo = tx_full(&sa, 0), *hi = tx_full(&sa, nbranches - 1);
  jx_array *ix = prim_binary(PRIM_min, prim_binary(PRIM_max, i32, lo), hi);
  int order[PRIM_MAX_BRANCHES];
  for (int b = 0; b < nbranches; b++) order[b] = b;
  jx_status s = ix ? run_switch(fn, ix, nbranches, branches, order, nops, operands, out) : jx_last_status();
  int nout = jx_fn_nout(branches[0]);
  jx_scope_end(s == JX_OK ? nout : 0, out);
  return s;
}

jx_status jx_lax_cond(jx_array *pred, jx_fn *true_fn, jx_fn *false_fn, int nops,
                      jx_array *const *operands, jx_array **out) {
  const char *fn = "jx_lax_cond";
  jx_fn *branches[2] = {false_fn, true_fn}; /* index 0 is false, as JAX orders them */
  if (!true_fn || !false_fn) { /* named as the caller passed them, not by branch index */
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, !true_fn ? "true_fn" : "false_fn");
    return JX_ERR_VALUE;
  }
  if (!check_args(fn, 2, branches, nops, operands, out) || !scalar_index(fn, pred, true))
    return jx_last_status();
  jx_scope_begin();
  jx_array *ix = pred->dtype == JX_BOOL ? prim_convert(pred, JX_INT32, false) : NULL;
  if (pred->dtype != JX_BOOL) { /* a number: nonzero is true */
    Aval za = prim_aval_of(pred);
    ix = prim_convert(prim_binary(PRIM_ne, pred, tx_full(&za, 0)), JX_INT32, false);
  }
  /* JAX traces true_fn first: its closed-over values lead */
  jx_status s = ix ? run_switch(fn, ix, 2, branches, (int[]){1, 0}, nops, operands, out) : jx_last_status();
  int nout = jx_fn_nout(branches[0]);
  jx_scope_end(s == JX_OK ? nout : 0, out);
  return s;
}
