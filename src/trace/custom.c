/* custom.c -- custom derivatives and rematerialization in the trace layer: binding,
 * abstract evaluation and eager evaluation of custom_jvp_call, custom_vjp_call,
 * custom_lin and checkpoint (JAX's jax/_src/custom_derivatives.py and ad_checkpoint.py).
 * Each holds its primal program as a closed jaxpr (`jaxpr`, called like jit) and the
 * user's rules as jx_fn (`fns`); the transformation rules live in transform/custom.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "trace/trace.h"

static jx_status bind_call(Prim p, PrimParams *pp, int nin, jx_array *const *in, jx_array **out) {
  if (!pp->jaxpr) {
    error_set(JX_ERR_INTERNAL, "%s: no primal jaxpr", prim_name(p));
    return JX_ERR_INTERNAL;
  }
  return prim_bind_n(p, nin, in, pp, prim_nout(p, nin, pp), out);
}

jx_status prim_custom_jvp_call(struct Jaxpr *primal, jx_fn *jvp, unsigned nondiff, int nin,
                               jx_array *const *in, jx_array **out) {
  PrimParams pp = {.jaxpr = primal, .nfns = 1, .fns = {jvp}, .flags = nondiff};
  return bind_call(PRIM_custom_jvp_call, &pp, nin, in, out);
}

jx_status prim_custom_vjp_call(struct Jaxpr *primal, jx_fn *fwd, jx_fn *bwd, int nin,
                               jx_array *const *in, jx_array **out) {
  PrimParams pp = {.jaxpr = primal, .nfns = 2, .fns = {fwd, bwd}};
  return bind_call(PRIM_custom_vjp_call, &pp, nin, in, out);
}

jx_status prim_custom_lin(struct Jaxpr *primal, jx_fn *bwd, int nres, int nin,
                          jx_array *const *in, jx_array **out) {
  PrimParams pp = {.jaxpr = primal, .nfns = 1, .fns = {bwd}, .nres = nres};
  return bind_call(PRIM_custom_lin, &pp, nin, in, out);
}

jx_status prim_checkpoint(struct Jaxpr *j, unsigned policy, int nin, jx_array *const *in,
                          jx_array **out) {
  PrimParams pp = {.jaxpr = j, .flags = policy};
  return bind_call(PRIM_checkpoint, &pp, nin, in, out);
}

/* The operands after the first `skip` (custom_lin's residuals) must have the primal
 * jaxpr's input types (weak types may differ); the results are its outputs. */
bool custom_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  const Jaxpr *j = pp->jaxpr;
  int skip = p == PRIM_custom_lin ? pp->nres : 0;
  int want_fns = p == PRIM_custom_vjp_call ? 2 : p == PRIM_checkpoint ? 0 : 1;
  if (!j || pp->nfns != want_fns || skip < 0) {
    error_set(JX_ERR_INTERNAL, "%s: malformed parameters", prim_name(p));
    return false;
  }
  if (nin != skip + j->nin) {
    error_set(JX_ERR_VALUE, "%s: %d operands for %d residuals and a jaxpr of %d inputs", prim_name(p),
              nin, skip, j->nin);
    return false;
  }
  for (int i = 0; i < j->nin; i++) {
    const Aval *want = &j->vars[j->invars[i]], *got = &in[skip + i];
    if (want->dtype != got->dtype || want->ndim != got->ndim ||
        memcmp(want->shape, got->shape, (size_t)want->ndim * sizeof(int64_t))) {
      char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
      aval_text(b0, sizeof b0, got), aval_text(b1, sizeof b1, want);
      error_set(JX_ERR_SHAPE, "%s: operand %d is %s but the primal function takes %s", prim_name(p),
                skip + i, b0, b1);
      return false;
    }
  }
  for (int o = 0; o < j->nout; o++) {
    out[o] = j->vars[j->outvars[o]];
    if (p == PRIM_custom_lin) out[o].weak = false;
  }
  return true;
}

/* Eager evaluation: the primal program (JAX's impl of custom_jvp_call etc. ignores the
 * rules). custom_lin has no value: reaching it means forward mode met a custom_vjp. */
jx_status custom_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                      jx_array **out) {
  (void)nin, (void)nout;
  if (p == PRIM_custom_lin) {
    error_set(JX_ERR_UNSUPPORTED, "can't apply forward-mode autodiff (jvp) to a custom_vjp "
              "function (%s); use reverse mode (grad, vjp) or define it with custom_jvp",
              pp->jaxpr->name ? pp->jaxpr->name : "<lambda>");
    return JX_ERR_UNSUPPORTED;
  }
  return prim_eval_jaxpr(pp->jaxpr, in, out);
}
