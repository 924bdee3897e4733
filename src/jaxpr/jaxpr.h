/* jaxpr.h -- the Jaxpr IR: typed variables, equations applying primitives, constants
 * closed over, and outputs. Built by the staging trace (make_jaxpr, linearize), then
 * checked, printed in JAX's text format, simplified (DCE) and evaluated (by binding
 * each equation's primitive, so evaluation itself composes with transformations). */
#ifndef JAXC_JAXPR_JAXPR_H
#define JAXC_JAXPR_JAXPR_H

#include "trace/prim.h"

/* Jaxpr and JaxprEqn are defined in trace/prim.h (primitives take jaxprs as
 * parameters). */

Jaxpr *jaxpr_new(void);
/* Drops one reference (frees j at the last). NULL is fine. */
void jaxpr_free(Jaxpr *j);
Jaxpr *jaxpr_ref(Jaxpr *j);
/* Adds a variable; returns its id or -1 (JX_ERR_OOM). */
int jaxpr_add_var(Jaxpr *j, const Aval *aval);
/* The constvar for a constant array (deduplicated by identity); -1 on OOM. */
int jaxpr_add_const(Jaxpr *j, jx_array *value);
bool jaxpr_add_invar(Jaxpr *j, int var);
bool jaxpr_add_outvar(Jaxpr *j, int var);
/* Appends an equation (copies `in` and `out`; takes a reference to pp->jaxpr); false
 * on OOM. */
bool jaxpr_add_eqn(Jaxpr *j, Prim p, const PrimParams *pp, int nin, const int *in, int nout,
                   const int *out);
/* Adds / drops the references params hold (sub-jaxprs, rule functions): an equation
 * storing a copy of pp retains, clearing it releases (fields reset to none). */
void jaxpr_params_retain(const PrimParams *pp);
void jaxpr_params_release(PrimParams *pp);
/* Structural hash / equality (prim_jaxpr_hash / prim_jaxpr_equal). */
uint64_t jaxpr_hash(const Jaxpr *j);
bool jaxpr_equal(const Jaxpr *a, const Jaxpr *b);
/* Inlines every jit, custom_jvp_call, custom_vjp_call and checkpoint equation (recursively): the sub-jaxpr's equations and constants
 * join j. jit lowering runs it first. false on OOM. */
bool jaxpr_inline_calls(Jaxpr *j);

/* True if j, or a sub-jaxpr of it, holds custom_jvp_call, custom_vjp_call or
 * checkpoint: equations whose rules transformations need, which inlining loses. */
bool jaxpr_has_custom_rules(const Jaxpr *j);
/* True if j's own equations (not its sub-jaxprs') hold a call jaxpr_inline_calls
 * inlines: jit, custom_jvp_call, custom_vjp_call, checkpoint, special_call. */
bool jaxpr_has_calls(const Jaxpr *j);
/* A new jaxpr computing j with every call inlined (j is unchanged); NULL on OOM. */
Jaxpr *jaxpr_inlined_copy(Jaxpr *j);

/* Checks types: every variable defined once before use, each equation's abstract
 * evaluation equals its outputs' avals, sub-jaxprs checked recursively.
 * JX_ERR_INTERNAL with a message otherwise. */
jx_status jaxpr_check(const Jaxpr *j);
/* JAX's text format: "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul a b in (c,) }".
 * 0-d constants print inline as literals (2.0:f32[]); sub-jaxprs print nested as
 * jit[name=f jaxpr={ ... }]. malloc'd. */
char *jaxpr_print(const Jaxpr *j);
/* Evaluates with the given inputs (nin of them): out[0..nout) new references. */
jx_status jaxpr_eval(const Jaxpr *j, jx_array *const *in, jx_array **out);
/* Dead-code elimination: drops equations whose outputs are unused. */
void jaxpr_dce(Jaxpr *j);
/* Common-subexpression elimination: an equation applying the same primitive with the
 * same params to the same variables as an earlier one is replaced by it (every
 * primitive is pure). Run jaxpr_dce afterwards to drop the duplicates. */
void jaxpr_cse(Jaxpr *j);
/* The passes jit and linearize run, in order, checking the jaxpr after each:
 * cse, dce. JAXC_DEBUG=2 prints the jaxpr after each pass, by name. */
jx_status jaxpr_simplify(Jaxpr *j);

#endif
