/* custom.c -- differentiation rules of jax.custom_jvp and jax.custom_vjp (JAX's
 * jax/_src/custom_derivatives.py): custom_jvp_call's JVP runs the user's rule instead
 * of differentiating the primal program; custom_vjp_call's JVP runs fwd and binds
 * custom_lin on the residuals and tangents, whose transpose runs bwd. Forward mode
 * through a custom_vjp reaches custom_lin's evaluation, which is an error as in JAX. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/dtype.h"
#include "core/error.h"
#include "transform/custom.h"

bool custom_check_types(const char *what, const char *rule, const char *kind, int n,
                        jx_array *const *got, const Aval *want, const char *want_what) {
  for (int i = 0; i < n; i++) {
    Aval a = prim_aval_of(got[i]);
    const Aval *w = &want[i];
    if (a.dtype == w->dtype && a.ndim == w->ndim && !memcmp(a.shape, w->shape, (size_t)a.ndim * sizeof(int64_t)))
      continue;
    char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
    aval_text(b0, sizeof b0, &a), aval_text(b1, sizeof b1, w);
    error_set(a.dtype != w->dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE,
              "%s: %s %d of %s is %s but %s %d is %s (they must have equal shapes and dtypes)",
              what, kind, i, rule, b0, want_what, i, b1);
    return false;
  }
  return true;
}

static Aval *jaxpr_avals(const Jaxpr *j, const int *vars, int n) {
  Aval *a = malloc((size_t)(n + 1) * sizeof *a);
  if (!a) error_set(JX_ERR_OOM, "custom derivative: out of memory");
  for (int i = 0; a && i < n; i++) a[i] = j->vars[vars[i]];
  return a;
}

/* The instantiated zero tangent of x: float0 zeros of its shape for bool and integer x
 * (JAX's tangent type), zeros of its dtype otherwise. */
static jx_array *zero_tangent(jx_array *x) {
  Aval a = prim_aval_of(x);
  return dtype_is_inexact(a.dtype) ? tx_full_like(x, 0.0) : array_float0(a.ndim, a.shape);
}

/* custom_jvp_call: rule(nondiff primals, diff primals, diff tangents) -> (outs, tangent
 * outs); zero tangents are instantiated (JAX's symbolic_zeros=False): float0 ones for
 * bool and integer inputs, as JAX passes. The tangent output of a bool/integer output
 * may be float0 (JAX's type) or zeros of the output's dtype (accepted too; dropped). */
jx_status custom_jvp_custom_jvp_call(int nin, jx_array *const *x, jx_array *const *t,
                                     const PrimParams *pp, int nout, jx_array **y, jx_array **ty) {
  jx_fn *rule = pp->fns[0];
  unsigned nondiff = pp->flags;
  const Jaxpr *j = pp->jaxpr;
  int nargs = 0, ndiff = 0;
  for (int i = 0; i < nin; i++) ndiff += !(nondiff >> i & 1);
  jx_array **args = calloc((size_t)(nin + ndiff + 1), sizeof *args);
  jx_array **outs = calloc((size_t)(2 * nout + 1), sizeof *outs);
  Aval *want = jaxpr_avals(j, j->outvars, nout);
  jx_status s = args && outs && want ? JX_OK : JX_ERR_OOM;
  if (!args || !outs) error_set(s, "custom_jvp: out of memory");
  for (int i = 0; s == JX_OK && i < nin; i++)
    if (nondiff >> i & 1) args[nargs++] = x[i];
  for (int i = 0; s == JX_OK && i < nin; i++)
    if (!(nondiff >> i & 1)) args[nargs++] = x[i];
  for (int i = 0; s == JX_OK && i < nin; i++)
    if (!(nondiff >> i & 1) && !(args[nargs++] = t[i] ? t[i] : zero_tangent(x[i]))) s = jx_last_status();
  if (s == JX_OK) s = jx_call(rule, args, outs);
  const char *name = j->name ? j->name : "<lambda>";
  char what[200];
  snprintf(what, sizeof what, "custom_jvp(%s)", name);
  bool ok = s == JX_OK && custom_check_types(what, jx_fn_name(rule), "primal output", nout, outs, want,
                                             "the function's output");
  for (int o = 0; ok && o < nout; o++) { /* JAX's tangent type of a bool/integer output */
    if (!dtype_is_inexact(want[o].dtype) && outs[nout + o] && outs[nout + o]->dtype == JX_FLOAT0)
      want[o].dtype = JX_FLOAT0;
  }
  if (ok) ok = custom_check_types(what, jx_fn_name(rule), "tangent output", nout, outs + nout, want,
                                  "primal output");
  if (s == JX_OK && !ok) s = jx_last_status();
  for (int o = 0; s == JX_OK && o < nout; o++) {
    y[o] = outs[o];
    ty[o] = dtype_is_floating(want[o].dtype) ? outs[nout + o] : NULL;
  }
  free(args), free(outs), free(want);
  return s;
}

/* custom_vjp_call: fwd(x) -> (outs, residuals); the tangents are custom_lin(residuals,
 * tangents), linear in the tangents and known to reverse mode only through bwd. */
jx_status custom_jvp_custom_vjp_call(int nin, jx_array *const *x, jx_array *const *t,
                                     const PrimParams *pp, int nout, jx_array **y, jx_array **ty) {
  jx_fn *fwd = pp->fns[0], *bwd = pp->fns[1];
  Jaxpr *j = pp->jaxpr;
  int nres = jx_fn_nout(fwd) - nout;
  jx_array **outs = calloc((size_t)(nout + nres + 1), sizeof *outs);
  jx_array **args = calloc((size_t)(nres + nin + 1), sizeof *args);
  Aval *want = jaxpr_avals(j, j->outvars, nout);
  jx_status s = outs && args && want ? JX_OK : JX_ERR_OOM;
  if (!outs || !args) error_set(s, "custom_vjp: out of memory");
  if (s == JX_OK) s = jx_call(fwd, x, outs);
  char what[200];
  snprintf(what, sizeof what, "custom_vjp(%s)", j->name ? j->name : "<lambda>");
  if (s == JX_OK && !custom_check_types(what, jx_fn_name(fwd), "output", nout, outs, want, "the function's output"))
    s = jx_last_status();
  bool any = false;
  for (int i = 0; i < nin; i++) any |= t[i] != NULL;
  for (int o = 0; s == JX_OK && o < nout; o++) y[o] = outs[o];
  if (s == JX_OK && any) {
    for (int r = 0; r < nres; r++) args[r] = outs[nout + r];
    for (int i = 0; s == JX_OK && i < nin; i++)
      if (!(args[nres + i] = t[i] ? t[i] : tx_full_like(x[i], 0.0))) s = jx_last_status();
    if (s == JX_OK) s = prim_custom_lin(j, bwd, nres, nres + nin, args, ty);
    for (int o = 0; s == JX_OK && o < nout; o++)
      if (!dtype_is_floating(want[o].dtype)) ty[o] = NULL;
  }
  free(outs), free(args), free(want);
  return s;
}

bool custom_transpose_custom_lin(jx_array *const *cts, int nin, jx_array *const *x, const bool *lin,
                                 const Aval *in, const PrimParams *pp, jx_array **out) {
  const Jaxpr *j = pp->jaxpr;
  jx_fn *bwd = pp->fns[0];
  int nres = pp->nres, nout = j->nout;
  for (int r = 0; r < nres; r++)
    if (lin[r]) {
      error_set(JX_ERR_INTERNAL, "transpose: custom_lin with a linear residual");
      return false;
    }
  jx_array **args = calloc((size_t)(nres + nout + 1), sizeof *args);
  jx_array **res = calloc((size_t)(j->nin + 1), sizeof *res);
  Aval *want = jaxpr_avals(j, j->invars, j->nin);
  bool ok = args && res && want;
  if (!args || !res) error_set(JX_ERR_OOM, "custom_vjp: out of memory");
  for (int r = 0; ok && r < nres; r++) args[r] = x[r];
  for (int o = 0; ok && o < nout; o++) {
    Aval a = j->vars[j->outvars[o]];
    a.weak = false;
    ok = (args[nres + o] = cts[o] ? cts[o] : tx_zeros(&a)) != NULL;
  }
  ok = ok && jx_call(bwd, args, res) == JX_OK;
  char what[200];
  snprintf(what, sizeof what, "custom_vjp(%s)", j->name ? j->name : "<lambda>");
  ok = ok && custom_check_types(what, jx_fn_name(bwd), "cotangent output", j->nin, res, want, "primal input");
  for (int i = 0; i < nin; i++) out[i] = ok && i >= nres && lin[i] ? res[i - nres] : NULL;
  free(args), free(res), free(want);
  return ok;
}

/* custom_vjp_call applied to linear values (e.g. a tangent map written as a custom_vjp
 * function inside a custom_jvp rule, as jx_lax_reduce_precision does): a function with
 * no residuals is transposed by its bwd on the output cotangents. With residuals they
 * would come from fwd on the (unknown) linear inputs: unsupported. */
bool custom_transpose_custom_vjp_call(jx_array *const *cts, int nin, jx_array *const *x,
                                      const bool *lin, const Aval *in, const PrimParams *pp,
                                      jx_array **out) {
  (void)x, (void)in;
  const Jaxpr *j = pp->jaxpr;
  jx_fn *fwd = pp->fns[0], *bwd = pp->fns[1];
  int nout = j->nout;
  if (jx_fn_nout(fwd) != nout) {
    error_set(JX_ERR_UNSUPPORTED, "transpose: custom_vjp(%s) with residuals applied to a "
              "linear value", j->name ? j->name : "<lambda>");
    return false;
  }
  jx_array **args = calloc((size_t)(nout + 1), sizeof *args);
  jx_array **res = calloc((size_t)(nin + 1), sizeof *res);
  Aval *want = jaxpr_avals(j, j->invars, j->nin);
  bool ok = args && res && want;
  if (!args || !res) error_set(JX_ERR_OOM, "custom_vjp: out of memory");
  for (int o = 0; ok && o < nout; o++) {
    Aval a = j->vars[j->outvars[o]];
    a.weak = false;
    ok = (args[o] = cts[o] ? cts[o] : tx_zeros(&a)) != NULL;
  }
  ok = ok && jx_call(bwd, args, res) == JX_OK;
  char what[200];
  snprintf(what, sizeof what, "custom_vjp(%s)", j->name ? j->name : "<lambda>");
  ok = ok && custom_check_types(what, jx_fn_name(bwd), "cotangent output", j->nin, res, want, "primal input");
  for (int i = 0; i < nin; i++) out[i] = ok && lin[i] ? res[i] : NULL;
  free(args), free(res), free(want);
  return ok;
}
