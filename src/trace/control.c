/* control.c -- control-flow primitives in the trace layer: abstract evaluation and
 * eager evaluation of cond (JAX's cond_p: an index picks one of several closed branch
 * jaxprs, all of one signature), while (while_p) and scan (scan_p). The
 * transformation rules live in src/transform (jvp.c, vmap.c, transpose.c, loops.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "trace/trace.h"

/* Set by every jx_jit call while other threads may run loops: accessed atomically. */
static ControlRunner runner;

void control_set_runner(ControlRunner r) { __atomic_store_n(&runner, r, __ATOMIC_RELEASE); }

static LoopRunner loop_runner; /* atomic, as runner */

void control_set_loop_runner(LoopRunner r) { __atomic_store_n(&loop_runner, r, __ATOMIC_RELEASE); }

/* The whole loop through the loop runner; false: declined (nothing done). */
static bool run_loop(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout, jx_array **out,
                     jx_status *s) {
  LoopRunner run = __atomic_load_n(&loop_runner, __ATOMIC_ACQUIRE);
  bool declined = true;
  if (run) *s = run(p, nin, in, pp, nout, out, &declined);
  return !declined;
}

/* j on concrete inputs: compiled by the runner when there is one. */
static jx_status run_sub(const Jaxpr *j, jx_array *const *in, jx_array **out) {
  bool declined = true;
  ControlRunner run = __atomic_load_n(&runner, __ATOMIC_ACQUIRE);
  if (run) {
    jx_status s = run(j, in, out, &declined);
    if (!declined) return s;
  }
  return prim_eval_jaxpr(j, in, out);
}

static bool same_type(const Aval *a, const Aval *b) {
  return a->dtype == b->dtype && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* cond: in[0] the int32 scalar index, in[1..] the operands of every branch. Branch
 * outputs must agree in dtype and shape; weak types may differ, and the result takes
 * branch 0's (JAX 0.10.2's cond_p: lax.cond(p, lambda x: x * 2, lambda x: 1.0, x) of a
 * float32 x is weak, the branches swapped strong). */
static bool while_abstract_eval(int nin, const Aval *in, const PrimParams *pp, Aval *out);
static bool scan_abstract_eval(int nin, const Aval *in, const PrimParams *pp, Aval *out);

bool control_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  if (p == PRIM_while) return while_abstract_eval(nin, in, pp, out);
  if (p == PRIM_scan) return scan_abstract_eval(nin, in, pp, out);
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  int n = pp->nbranches;
  if (n < 1 || n > PRIM_MAX_BRANCHES) {
    error_set(JX_ERR_INTERNAL, "%s: %d branches", prim_name(p), n);
    return false;
  }
  if (nin < 1 || in[0].ndim != 0 || !dtype_is_integer(in[0].dtype)) {
    if (nin >= 1) aval_text(b0, sizeof b0, &in[0]);
    error_set(JX_ERR_SHAPE, "%s: the index must be an integer scalar, got %s", prim_name(p),
              nin >= 1 ? b0 : "nothing");
    return false;
  }
  const Jaxpr *j0 = pp->branches[0];
  for (int b = 0; b < n; b++) {
    const Jaxpr *j = pp->branches[b];
    if (j->nin != nin - 1) {
      error_set(JX_ERR_VALUE, "%s: branch %d takes %d operands, %d given", prim_name(p), b, j->nin, nin - 1);
      return false;
    }
    for (int i = 0; i < j->nin; i++)
      if (!same_type(&j->vars[j->invars[i]], &in[i + 1])) {
        aval_text(b0, sizeof b0, &in[i + 1]), aval_text(b1, sizeof b1, &j->vars[j->invars[i]]);
        error_set(JX_ERR_SHAPE, "%s: operand %d is %s but branch %d takes %s", prim_name(p), i, b0, b, b1);
        return false;
      }
    if (j->nout != j0->nout) {
      error_set(JX_ERR_VALUE, "%s: branch %d gives %d outputs but branch 0 gives %d", prim_name(p), b,
                j->nout, j0->nout);
      return false;
    }
    for (int o = 0; o < j->nout; o++) {
      const Aval *a = &j->vars[j->outvars[o]], *z = &j0->vars[j0->outvars[o]];
      if (!same_type(a, z)) {
        aval_text(b0, sizeof b0, z), aval_text(b1, sizeof b1, a);
        error_set(a->dtype != z->dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE,
                  "%s: branches must give equal output types: output %d is %s in branch 0 but %s "
                  "in branch %d",
                  prim_name(p), o, b0, b1, b);
        return false;
      }
      if (b == 0) out[o] = *z;
    }
  }
  return true;
}

int control_nout(Prim p, const PrimParams *pp) {
  if (p == PRIM_while) return pp->nbranches == 2 && pp->branches[1] ? pp->branches[1]->nout : 0;
  return pp->nbranches > 0 && pp->branches[0] ? pp->branches[0]->nout : 0;
}

/* ---------------------------------------------------------------- while */

/* in[first .. first + n) against j's inputs from `at`: the message names both types. */
static bool inputs_match(const char *what, const Jaxpr *j, int at, const Aval *in, int n) {
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  for (int i = 0; i < n; i++)
    if (!same_type(&j->vars[j->invars[at + i]], &in[i])) {
      aval_text(b0, sizeof b0, &in[i]), aval_text(b1, sizeof b1, &j->vars[j->invars[at + i]]);
      error_set(in[i].dtype != j->vars[j->invars[at + i]].dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE,
                "%s: operand %d is %s but the jaxpr takes %s", what, at + i, b0, b1);
      return false;
    }
  return true;
}

/* body outputs [at, at + n) against the carries' types: both named. */
static bool carry_match(const char *what, const Jaxpr *body, int at, const Aval *carry, int n) {
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  for (int o = 0; o < n; o++) {
    const Aval *a = &body->vars[body->outvars[at + o]];
    if (!same_type(a, &carry[o])) {
      aval_text(b0, sizeof b0, a), aval_text(b1, sizeof b1, &carry[o]);
      error_set(a->dtype != carry[o].dtype ? JX_ERR_DTYPE : JX_ERR_SHAPE,
                "%s: the body gives %s for carry %d but the carry is %s (the carry must keep "
                "its type across iterations)", what, b0, o, b1);
      return false;
    }
  }
  return true;
}

static bool while_abstract_eval(int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  int nc = pp->nconsts[0], nb = pp->nconsts[1], ncarry = nin - nc - nb;
  const Jaxpr *cj = pp->nbranches == 2 ? pp->branches[0] : NULL, *bj = cj ? pp->branches[1] : NULL;
  if (!cj || !bj || nc < 0 || nb < 0 || ncarry < 0 || cj->nin != nc + ncarry || bj->nin != nb + ncarry ||
      bj->nout != ncarry || cj->nout != 1) {
    error_set(JX_ERR_VALUE, "while: %d operands do not fit cond_nconsts=%d body_nconsts=%d", nin, nc, nb);
    return false;
  }
  const Aval *p = &cj->vars[cj->outvars[0]];
  if (p->ndim != 0 || p->dtype != JX_BOOL) {
    char b0[ARRAY_DESCRIBE_BUF];
    aval_text(b0, sizeof b0, p);
    error_set(JX_ERR_DTYPE, "while: cond_fun must give a bool scalar, got %s", b0);
    return false;
  }
  if (!inputs_match("while cond_jaxpr", cj, 0, in, nc) ||
      !inputs_match("while cond_jaxpr", cj, nc, in + nc + nb, ncarry) ||
      !inputs_match("while body_jaxpr", bj, 0, in + nc, nb) ||
      !inputs_match("while body_jaxpr", bj, nb, in + nc + nb, ncarry) ||
      !carry_match("while", bj, 0, in + nc + nb, ncarry))
    return false;
  for (int o = 0; o < ncarry; o++) out[o] = in[nc + nb + o];
  return true;
}

/* Eager while: cond is evaluated and read on the host each trip, then body; every
 * equation of both binds (so each runs eagerly on the operands' device). */
static jx_status while_impl(int nin, jx_array *const *in, const PrimParams *pp, jx_array **out) {
  int nc = pp->nconsts[0], nb = pp->nconsts[1], ncarry = nin - nc - nb;
  const Jaxpr *cj = pp->branches[0], *bj = pp->branches[1];
  jx_array **cin = calloc((size_t)(nc + ncarry + 1), sizeof *cin);
  jx_array **bin = calloc((size_t)(nb + ncarry + 1), sizeof *bin);
  jx_array **carry = calloc((size_t)ncarry + 1, sizeof *carry);
  if (!cin || !bin || !carry) {
    free(cin), free(bin), free(carry);
    error_set(JX_ERR_OOM, "while: out of memory");
    return JX_ERR_OOM;
  }
  for (int i = 0; i < nc; i++) cin[i] = in[i];
  for (int i = 0; i < nb; i++) bin[i] = in[nc + i];
  /* Carries are held with array_retain and each trip runs in its own scope, so a
   * trip's temporaries are released at its end and scopes do not grow with trips. */
  for (int i = 0; i < ncarry; i++) carry[i] = array_retain(in[nc + nb + i]);
  jx_status s = JX_OK;
  for (int64_t trip = 0; s == JX_OK && (pp->length <= 0 || trip < pp->length); trip++) {
    for (int i = 0; i < ncarry; i++) cin[nc + i] = bin[nb + i] = carry[i];
    jx_scope_begin();
    jx_array *pred = NULL;
    bool go = (s = run_sub(cj, cin, &pred)) == JX_OK && jx_item(pred) != 0;
    if (go && (s = run_sub(bj, bin, out)) == JX_OK)
      for (int i = 0; i < ncarry; i++) array_drop(carry[i]), carry[i] = array_retain(out[i]);
    jx_scope_end(0, NULL);
    if (!go) break;
  }
  for (int i = 0; i < ncarry; i++) {
    out[i] = s == JX_OK ? jx_ref(carry[i]) : NULL;
    array_drop(carry[i]);
  }
  free(cin), free(bin), free(carry);
  return s;
}

/* ----------------------------------------------------------------- scan */

static bool scan_abstract_eval(int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  int nk = pp->nconsts[0], ncarry = pp->nconsts[1], nx = nin - nk - ncarry;
  const Jaxpr *bj = pp->nbranches == 1 ? pp->branches[0] : NULL;
  if (!bj || nk < 0 || ncarry < 0 || nx < 0 || bj->nin != nin || bj->nout < ncarry || pp->length < 0) {
    error_set(JX_ERR_VALUE, "scan: %d operands do not fit num_consts=%d num_carry=%d", nin, nk, ncarry);
    return false;
  }
  if (!inputs_match("scan jaxpr", bj, 0, in, nk + ncarry) ||
      !carry_match("scan", bj, 0, in + nk, ncarry))
    return false;
  for (int i = 0; i < nx; i++) {
    const Aval *x = &in[nk + ncarry + i];
    char b0[ARRAY_DESCRIBE_BUF];
    if (x->ndim < 1 || x->shape[0] != pp->length) {
      aval_text(b0, sizeof b0, x);
      error_set(JX_ERR_SHAPE, "scan: xs %d is %s but its leading axis must have the length %lld", i, b0,
                (long long)pp->length);
      return false;
    }
    Aval slice = *x;
    slice.ndim--;
    memmove(slice.shape, slice.shape + 1, (size_t)slice.ndim * sizeof(int64_t));
    if (!inputs_match("scan jaxpr", bj, nk + ncarry + i, &slice, 1)) return false;
  }
  for (int o = 0; o < ncarry; o++) out[o] = in[nk + o];
  for (int o = ncarry; o < bj->nout; o++) {
    Aval y = bj->vars[bj->outvars[o]];
    if (y.ndim + 1 > JX_MAX_NDIM) {
      error_set(JX_ERR_UNSUPPORTED, "scan: stacking output %d needs rank %d", o - ncarry, y.ndim + 1);
      return false;
    }
    memmove(y.shape + 1, y.shape, (size_t)y.ndim * sizeof(int64_t));
    y.shape[0] = pp->length, y.ndim++;
    out[o] = y;
  }
  return true;
}

/* xs[i] along axis 0, without that axis. */
static jx_array *slice_at(jx_array *x, int64_t i) {
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) stop[d] = x->shape[d];
  start[0] = i, stop[0] = i + 1;
  jx_array *s = prim_slice(x, start, stop, NULL);
  jx_array *r = s ? prim_reshape(s, x->ndim - 1, x->shape + 1) : NULL;
  jx_free(s);
  return r;
}

/* The n slices ys[k] (each without the leading axis) stacked along a new axis 0, in
 * groups of at most 32 operands per concatenate. Consumes ys. */
static jx_array *stack(int64_t n, jx_array **ys, const Aval *y) {
  if (n == 0) {
    int64_t shape[JX_MAX_NDIM] = {0};
    memcpy(shape + 1, y->shape, (size_t)y->ndim * sizeof(int64_t));
    return jx_zeros(y->ndim + 1, shape, y->dtype);
  }
  int64_t shape[JX_MAX_NDIM] = {1};
  memcpy(shape + 1, y->shape, (size_t)y->ndim * sizeof(int64_t));
  bool ok = true;
  for (int64_t k = 0; k < n; k++) {
    jx_array *r = ok ? prim_reshape(ys[k], y->ndim + 1, shape) : NULL;
    array_drop(ys[k]); /* scan_impl's reference (array_retain), not a scope's */
    ys[k] = r, ok = r != NULL;
  }
  while (ok && n > 1) { /* one level of groups of 32 at a time */
    int64_t m = 0;
    for (int64_t k = 0; k < n; k += 32) {
      int g = (int)(n - k < 32 ? n - k : 32);
      jx_array *c = ok ? (g == 1 ? jx_ref(ys[k]) : prim_concatenate(g, ys + k, 0)) : NULL;
      for (int i = 0; i < g; i++) jx_free(ys[k + i]), ys[k + i] = NULL;
      ys[m++] = c, ok = ok && c;
    }
    n = m;
  }
  if (!ok) {
    for (int64_t k = 0; k < n; k++) jx_free(ys[k]);
    return NULL;
  }
  return ys[0];
}

/* Eager scan: each trip slices the xs, evaluates the body (binding each equation) and
 * keeps the y slices; they are stacked at the end. */
static jx_status scan_impl(int nin, jx_array *const *in, const PrimParams *pp, int nout, jx_array **out) {
  int nk = pp->nconsts[0], ncarry = pp->nconsts[1], nx = nin - nk - ncarry, ny = nout - ncarry;
  const Jaxpr *bj = pp->branches[0];
  int64_t n = pp->length;
  jx_array **args = calloc((size_t)nin + 1, sizeof *args), **res = calloc((size_t)nout + 1, sizeof *res);
  jx_array **ys = calloc((size_t)(ny * n) + 1, sizeof *ys);
  if (!args || !res || !ys) {
    free(args), free(res), free(ys);
    error_set(JX_ERR_OOM, "scan: out of memory");
    return JX_ERR_OOM;
  }
  for (int i = 0; i < nk; i++) args[i] = in[i];
  for (int i = 0; i < ncarry; i++) args[nk + i] = array_retain(in[nk + i]); /* as while_impl */
  jx_status s = JX_OK;
  for (int64_t trip = 0; s == JX_OK && trip < n; trip++) {
    int64_t t = pp->reverse ? n - 1 - trip : trip;
    jx_scope_begin();
    for (int i = 0; s == JX_OK && i < nx; i++)
      if (!(args[nk + ncarry + i] = slice_at(in[nk + ncarry + i], t))) s = jx_last_status();
    if (s == JX_OK) s = run_sub(bj, args, res);
    for (int i = 0; s == JX_OK && i < ncarry; i++) array_drop(args[nk + i]), args[nk + i] = array_retain(res[i]);
    for (int k = 0; s == JX_OK && k < ny; k++) ys[k * n + t] = array_retain(res[ncarry + k]);
    jx_scope_end(0, NULL);
  }
  for (int i = 0; i < ncarry; i++) {
    out[i] = s == JX_OK ? jx_ref(args[nk + i]) : NULL;
    array_drop(args[nk + i]);
  }
  for (int k = 0; k < ny; k++) {
    if (s == JX_OK) {
      const Aval *y = &bj->vars[bj->outvars[ncarry + k]];
      jx_scope_begin();
      jx_array *r = stack(n, ys + k * n, y);
      jx_scope_end(r ? 1 : 0, &r);
      if (!(out[ncarry + k] = r)) s = jx_last_status();
    } else {
      for (int64_t t = 0; t < n; t++) array_drop(ys[k * n + t]);
    }
  }
  if (s != JX_OK)
    for (int o = 0; o < nout; o++) jx_free(out[o]), out[o] = NULL;
  free(args), free(res), free(ys);
  return s;
}

/* Eager cond: the index is read on the host and the chosen branch evaluated (each of
 * its equations bound, so the branch itself runs eagerly on the operands' device). */
jx_status control_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                       jx_array **out) {
  jx_status s = JX_OK;
  if ((p == PRIM_while || p == PRIM_scan) && run_loop(p, nin, in, pp, nout, out, &s)) return s;
  if (p == PRIM_while) return while_impl(nin, in, pp, out);
  if (p == PRIM_scan) return scan_impl(nin, in, pp, nout, out);
  jx_array *ix = prim_convert(in[0], JX_INT64, false);
  int64_t k = 0;
  s = ix ? jx_read(ix, &k, sizeof k) : jx_last_status();
  jx_free(ix);
  if (s != JX_OK) return s;
  k = k < 0 ? 0 : k >= pp->nbranches ? pp->nbranches - 1 : k;
  return run_sub(pp->branches[k], in + 1, out);
}
