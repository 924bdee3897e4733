/* control.c -- lax control flow (lax.cond, lax.switch): user callbacks (jx_fn) are
 * traced once into closed jaxprs for the operands' types and bound as one cond
 * equation, so every transformation and jit sees the branches (JAX's
 * jax/_src/lax/control_flow/conditionals.py). */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "transform/transform.h"

/* f traced into a closed jaxpr for the operands' types (stage_trace_closed); a
 * branch that closes over a tracer of an enclosing transformation is refused (pass
 * such values as operands). NULL with the error set on failure. */
static Jaxpr *trace_branch(const char *fn, jx_fn *f, int nin, jx_array *const *ops) {
  if (jx_fn_nin(f) != nin) {
    error_set(JX_ERR_VALUE, "%s: %s takes %d inputs, %d operands given", fn, jx_fn_name(f), jx_fn_nin(f), nin);
    return NULL;
  }
  return stage_trace_closed(fn, f, ops, "operand");
}

/* The shared body of cond and switch: index already an int32 scalar. */
static jx_status run_switch(const char *fn, jx_array *index, int nbranches, jx_fn *const *branches,
                            int nops, jx_array *const *operands, jx_array **out) {
  int nout = jx_fn_nout(branches[0]);
  for (int o = 0; o < nout; o++) out[o] = NULL;
  Jaxpr *js[PRIM_MAX_BRANCHES] = {NULL};
  jx_status s = JX_OK;
  for (int b = 0; b < nbranches && s == JX_OK; b++)
    if (!(js[b] = trace_branch(fn, branches[b], nops, operands))) s = jx_last_status();
  for (int b = 1; b < nbranches && s == JX_OK; b++) /* the primitive checks this too, */
    for (int o = 0; o < nout && s == JX_OK; o++) {  /* in its own name */
      const Aval *a = &js[b]->vars[js[b]->outvars[o]], *z = &js[0]->vars[js[0]->outvars[o]];
      if (a->dtype == z->dtype && a->ndim == z->ndim && !memcmp(a->shape, z->shape, (size_t)a->ndim * sizeof(int64_t)))
        continue;
      char t0[ARRAY_DESCRIBE_BUF], t1[ARRAY_DESCRIBE_BUF];
      aval_text(t0, sizeof t0, z), aval_text(t1, sizeof t1, a);
      s = a->dtype != z->dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE;
      error_set(s, "%s: branches must give equal output types: output %d is %s in branch 0 (%s) but %s in "
                "branch %d (%s)", fn, o, t0, jx_fn_name(branches[0]), t1, b, jx_fn_name(branches[b]));
    }
  if (s == JX_OK) s = prim_cond(nbranches, js, index, nops, operands, out);
  for (int b = 0; b < nbranches; b++) jaxpr_free(js[b]);
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
      error_set(JX_ERR_VALUE, "%s: branch %d (%s) gives %d outputs but branch 0 (%s) gives %d", fn, b,
                jx_fn_name(branches[b]), jx_fn_nout(branches[b]), jx_fn_name(branches[0]),
                jx_fn_nout(branches[0]));
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
  jx_status s = ix ? run_switch(fn, ix, nbranches, branches, nops, operands, out) : jx_last_status();
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
  jx_status s = ix ? run_switch(fn, ix, 2, branches, nops, operands, out) : jx_last_status();
  int nout = jx_fn_nout(branches[0]);
  jx_scope_end(s == JX_OK ? nout : 0, out);
  return s;
}
