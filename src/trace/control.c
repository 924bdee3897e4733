/* control.c -- control-flow primitives in the trace layer: abstract evaluation and
 * eager evaluation of cond (JAX's cond_p: an index picks one of several closed branch
 * jaxprs, all of one signature). The transformation rules live with the other rules
 * in src/transform (jvp.c, vmap.c, transpose.c). */
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "trace/trace.h"

static void aval_text(char *buf, size_t n, const Aval *a) {
  char shape[ERROR_SHAPE_BUF];
  error_shape_str(shape, a->ndim, a->shape);
  snprintf(buf, n, "%s%s", jx_dtype_name(a->dtype), shape);
}

static bool same_type(const Aval *a, const Aval *b) {
  return a->dtype == b->dtype && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* cond: in[0] the int32 scalar index, in[1..] the operands of every branch. Branch
 * outputs must agree in dtype and shape (weak types may differ: the result is weak
 * only where every branch's is, as JAX joins them). */
bool control_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  char b0[ERROR_SHAPE_BUF + 16], b1[ERROR_SHAPE_BUF + 16];
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
      else out[o].weak &= a->weak;
    }
  }
  return true;
}

int control_nout(Prim p, const PrimParams *pp) {
  (void)p;
  return pp->nbranches > 0 && pp->branches[0] ? pp->branches[0]->nout : 0;
}

/* Eager cond: the index is read on the host and the chosen branch evaluated (each of
 * its equations bound, so the branch itself runs eagerly on the operands' device). */
jx_status control_impl(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                       jx_array **out) {
  (void)p, (void)nout;
  jx_array *ix = prim_convert(in[0], JX_INT64, false);
  int64_t k = 0;
  jx_status s = ix ? jx_read(ix, &k, sizeof k) : jx_last_status();
  jx_free(ix);
  if (s != JX_OK) return s;
  k = k < 0 ? 0 : k >= pp->nbranches ? pp->nbranches - 1 : k;
  return prim_eval_jaxpr(pp->branches[k], in + 1, out);
}
