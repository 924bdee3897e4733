/* bind.c -- the primitive table (from primitives.def), argument validation, and
 * prim_bind, the single entry point every array operation goes through. Today the
 * interpreter stack has only its bottom level (eval); transformations add levels. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "trace/collective.h"
#include "trace/trace.h"

static const struct {
  const char *name;
  PrimKind kind;
  AluOp alu;
} prim_table[PRIM_NUM] = {
#define X(name, kind, alu) [PRIM_##name] = {#name, PRIM_KIND_##kind, ALU_##alu},
#include "trace/primitives.def"
#undef X
};

const char *prim_name(Prim p) { return (unsigned)p < PRIM_NUM ? prim_table[p].name : "?"; }
PrimKind prim_kind(Prim p) { return prim_table[p].kind; }
AluOp prim_alu_op(Prim p) { return prim_table[p].alu; }

/* Avals and results of a bind live on the stack up to this many operands/results. */
#define BIND_SMALL 8

jx_status prim_bind_n(Prim p, int nin, jx_array *const *in, const PrimParams *params, int nout,
                      jx_array **out) {
  for (int o = 0; o < nout; o++) out[o] = NULL;
  if ((unsigned)p >= PRIM_NUM || nin < 0) {
    error_set(JX_ERR_INTERNAL, "prim_bind: invalid primitive %d", (int)p);
    return JX_ERR_INTERNAL;
  }
  for (int i = 0; i < nin; i++)
    if (!in[i]) return jx_last_status() ? jx_last_status() : JX_ERR_VALUE; /* keeps the first error */
  for (int i = 0; i < nin; i++) array_check_live(prim_name(p), in[i]); /* an abort naming a released one */
  for (int i = 0; i < nin; i++)
    if (in[i]->dtype == JX_FLOAT0) { /* the one check every operation goes through */
      char b[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_DTYPE, "%s: operand %d is %s; float0 arrays (the tangent type of "
                "integer and bool values) hold no data and take no operation, as in JAX (make "
                "regular zeros with jx_zeros of a numeric dtype instead)", prim_name(p), i,
                array_describe(b, in[i]));
      return JX_ERR_DTYPE;
    }
  if (nin == 0 && collective_stage_nullary(p, params, out)) return JX_OK; /* trace/collective.h */
  int want = prim_nout(p, nin, params);
  if (want != nout) {
    error_set(JX_ERR_INTERNAL, "%s: %d results requested, the primitive gives %d", prim_name(p),
              nout, want);
    return JX_ERR_INTERNAL;
  }
  Aval small[2 * BIND_SMALL], *avals = small;
  if (nin > BIND_SMALL || nout > BIND_SMALL) {
    avals = malloc((size_t)(nin + nout) * sizeof *avals);
    if (!avals) {
      error_set(JX_ERR_OOM, "%s: out of memory for %d operands", prim_name(p), nin);
      return JX_ERR_OOM;
    }
  }
  Aval *outs = avals + (avals == small ? BIND_SMALL : nin);
  for (int i = 0; i < nin; i++) avals[i] = prim_aval_of(in[i]);
  jx_status s = JX_OK;
  if (!prim_abstract_eval(p, nin, avals, params, outs)) s = jx_last_status();
  /* The highest trace level among the inputs processes the primitive. */
  Trace *top = NULL;
  for (int i = 0; s == JX_OK && i < nin; i++) {
    Trace *t = trace_of(in[i]);
    if (!t) continue;
    if (!t->active) {
      error_set(JX_ERR_VALUE, "%s: operand %d is a tracer that escaped its transformation "
                "(JAX's UnexpectedTracerError)", prim_name(p), i);
      s = JX_ERR_VALUE;
    }
    if (!top || t->level > top->level) top = t;
  }
  if (s == JX_OK) {
    s = top ? top->type->process(top, p, nin, in, params, nout, outs, out)
            : impl_apply(p, nin, in, params, nout, outs, out);
    if (s != JX_OK) {
      for (int o = 0; o < nout; o++) jx_free(out[o]), out[o] = NULL;
      if (!jx_last_status()) error_set(JX_ERR_INTERNAL, "%s failed without an error", prim_name(p));
      s = jx_last_status();
    }
  }
  if (avals != small) free(avals);
  return s;
}

jx_array *prim_bind(Prim p, int nin, jx_array *const *in, const PrimParams *params) {
  jx_array *out = NULL;
  prim_bind_n(p, nin, in, params, 1, &out);
  return out;
}

/* ------------------------------------------------------------- wrappers */

jx_array *prim_unary(Prim p, jx_array *x) {
  PrimParams pp = {0};
  return prim_bind(p, 1, &x, &pp);
}

jx_array *prim_binary(Prim p, jx_array *x, jx_array *y) {
  PrimParams pp = {0};
  return prim_bind(p, 2, (jx_array *[]){x, y}, &pp);
}

jx_array *prim_select(jx_array *cond, jx_array *x, jx_array *y) {
  PrimParams pp = {0};
  return prim_bind(PRIM_select, 3, (jx_array *[]){cond, x, y}, &pp);
}

jx_array *prim_fma(jx_array *a, jx_array *b, jx_array *c) {
  PrimParams pp = {0};
  return prim_bind(PRIM_fma, 3, (jx_array *[]){a, b, c}, &pp);
}

jx_array *prim_convert(jx_array *x, jx_dtype dtype, bool weak) {
  PrimParams pp = {.dtype = dtype, .weak = weak};
  return prim_bind(PRIM_convert_element_type, 1, &x, &pp);
}

jx_array *prim_bitcast(jx_array *x, jx_dtype dtype) {
  PrimParams pp = {.dtype = dtype};
  return prim_bind(PRIM_bitcast_convert_type, 1, &x, &pp);
}

jx_array *prim_reduce(Prim p, jx_array *x, const bool *mask) {
  if (!x) return NULL;
  PrimParams pp = {0};
  for (int d = 0; d < x->ndim; d++)
    if (mask[d]) pp.axes[pp.naxes++] = d;
  return prim_bind(p, 1, &x, &pp);
}

jx_array *prim_reshape(jx_array *x, int ndim, const int64_t *shape) {
  PrimParams pp = {.ndim = ndim};
  if (ndim < 0 || ndim > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "reshape: rank %d outside [0, %d]", ndim, JX_MAX_NDIM);
    return NULL;
  }
  if (ndim) memcpy(pp.shape, shape, (size_t)ndim * 8);
  return prim_bind(PRIM_reshape, 1, &x, &pp);
}

jx_array *prim_transpose(jx_array *x, const int *perm) {
  if (!x) return NULL;
  PrimParams pp = {.naxes = x->ndim};
  if (x->ndim) memcpy(pp.axes, perm, (size_t)x->ndim * sizeof(int));
  return prim_bind(PRIM_transpose, 1, &x, &pp);
}

jx_array *prim_broadcast_in_dim(jx_array *x, int ndim, const int64_t *shape,
                                const int *bdims) {
  if (!x) return NULL;
  if (ndim < 0 || ndim > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "broadcast_in_dim: rank %d outside [0, %d]", ndim, JX_MAX_NDIM);
    return NULL;
  }
  PrimParams pp = {.ndim = ndim, .naxes = x->ndim};
  if (ndim) memcpy(pp.shape, shape, (size_t)ndim * 8);
  if (x->ndim) memcpy(pp.axes, bdims, (size_t)x->ndim * sizeof(int));
  return prim_bind(PRIM_broadcast_in_dim, 1, &x, &pp);
}

jx_array *prim_pad(jx_array *x, const int64_t *lo, const int64_t *hi, double value) {
  if (!x) return NULL;
  PrimParams pp = {.value = value};
  if (x->ndim) memcpy(pp.start, lo, (size_t)x->ndim * 8);
  if (x->ndim) memcpy(pp.stop, hi, (size_t)x->ndim * 8);
  return prim_bind(PRIM_pad, 1, &x, &pp);
}

jx_array *prim_slice(jx_array *x, const int64_t *start, const int64_t *stop,
                     const int64_t *step) {
  if (!x) return NULL;
  PrimParams pp = {0};
  for (int d = 0; d < x->ndim; d++) {
    pp.start[d] = start[d];
    pp.stop[d] = stop[d];
    pp.step[d] = step ? step[d] : 1;
  }
  return prim_bind(PRIM_slice, 1, &x, &pp);
}

jx_array *prim_rev(jx_array *x, const bool *mask) {
  if (!x) return NULL;
  PrimParams pp = {0};
  for (int d = 0; d < x->ndim; d++)
    if (mask[d]) pp.axes[pp.naxes++] = d;
  return prim_bind(PRIM_rev, 1, &x, &pp);
}

jx_array *prim_concatenate(int n, jx_array *const *xs, int axis) {
  PrimParams pp = {.axis = axis};
  if (n < 1) {
    error_set(JX_ERR_VALUE, "concatenate: needs at least one operand");
    return NULL;
  }
  return prim_bind(PRIM_concatenate, n, xs, &pp);
}

jx_array *prim_gather(jx_array *x, jx_array *idx, int axis) {
  PrimParams pp = {.axis = axis};
  return prim_bind(PRIM_gather, 2, (jx_array *[]){x, idx}, &pp);
}

jx_array *prim_dot_general(jx_array *x, jx_array *y, int ncontract, const int *lhs_contract,
                           const int *rhs_contract, int nbatch, const int *lhs_batch,
                           const int *rhs_batch) {
  PrimParams pp = {.ncontract = ncontract, .nbatch = nbatch};
  if (ncontract < 0 || nbatch < 0 || ncontract > JX_MAX_NDIM || nbatch > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "dot_general: bad dimension counts %d, %d", ncontract, nbatch);
    return NULL;
  }
  for (int i = 0; i < ncontract; i++)
    pp.lhs_contract[i] = lhs_contract[i], pp.rhs_contract[i] = rhs_contract[i];
  for (int i = 0; i < nbatch; i++)
    pp.lhs_batch[i] = lhs_batch[i], pp.rhs_batch[i] = rhs_batch[i];
  return prim_bind(PRIM_dot_general, 2, (jx_array *[]){x, y}, &pp);
}

jx_status prim_threefry2x32(jx_array *k0, jx_array *k1, jx_array *c0, jx_array *c1,
                            jx_array **out) {
  PrimParams pp = {0};
  return prim_bind_n(PRIM_threefry2x32, 4, (jx_array *[]){k0, k1, c0, c1}, &pp, 2, out);
}

jx_status prim_sort_n(int n, jx_array *const *xs, int axis, jx_array **out) {
  PrimParams pp = {.axis = axis};
  if (n < 1) {
    error_set(JX_ERR_VALUE, "sort: needs at least one operand");
    return JX_ERR_VALUE;
  }
  return prim_bind_n(PRIM_sort, n, xs, &pp, n, out);
}

jx_array *prim_sort(jx_array *x, int axis) {
  jx_array *r = NULL;
  prim_sort_n(1, &x, axis, &r);
  return r;
}

jx_array *prim_argsort(jx_array *x, int axis, jx_dtype index_dtype) {
  if (!x) return NULL;
  if (axis < 0 || axis >= x->ndim) {
    error_set(JX_ERR_SHAPE, "sort: axis %d out of range for rank %d", axis, x->ndim);
    return NULL;
  }
  if (!dtype_is_integer(index_dtype)) {
    error_set(JX_ERR_DTYPE, "argsort: index dtype must be an integer");
    return NULL;
  }
  jx_array *iota = prim_iota(index_dtype, x->ndim, x->shape, axis), *r[2] = {NULL, NULL};
  if (iota) prim_sort_n(2, (jx_array *[]){x, iota}, axis, r);
  jx_free(iota);
  jx_free(r[0]);
  return r[1];
}

jx_status prim_call(struct Jaxpr *j, int nin, jx_array *const *in, jx_array **out) {
  PrimParams pp = {.jaxpr = j};
  return prim_bind_n(PRIM_jit, nin, in, &pp, prim_nout(PRIM_jit, nin, &pp), out);
}

jx_status prim_special_call(const SpecialRule *rule, struct Jaxpr *j, int nin, jx_array *const *in,
                               jx_array **out) {
  PrimParams pp = {.jaxpr = j, .rule = rule};
  return prim_bind_n(PRIM_special_call, nin, in, &pp, prim_nout(PRIM_special_call, nin, &pp), out);
}

jx_status prim_cond(int n, struct Jaxpr *const *branches, jx_array *index, int nin,
                    jx_array *const *in, jx_array **out) {
  if (n < 1 || n > PRIM_MAX_BRANCHES) {
    error_set(JX_ERR_UNSUPPORTED, "cond: %d branches (1 to %d supported)", n, PRIM_MAX_BRANCHES);
    return JX_ERR_UNSUPPORTED;
  }
  PrimParams pp = {.nbranches = n};
  for (int b = 0; b < n; b++) pp.branches[b] = branches[b];
  jx_array *small[BIND_SMALL], **ops = nin + 1 <= BIND_SMALL ? small : malloc((size_t)(nin + 1) * sizeof *ops);
  if (!ops) {
    error_set(JX_ERR_OOM, "cond: out of memory");
    return JX_ERR_OOM;
  }
  ops[0] = index;
  for (int i = 0; i < nin; i++) ops[i + 1] = in[i];
  jx_status s = prim_bind_n(PRIM_cond, nin + 1, ops, &pp, prim_nout(PRIM_cond, nin + 1, &pp), out);
  if (ops != small) free(ops);
  return s;
}

/* Binds a control primitive on `nin` operands (copied to the heap past BIND_SMALL). */
static jx_status bind_control(Prim p, const PrimParams *pp, int nin, jx_array *const *in, jx_array **out) {
  return prim_bind_n(p, nin, in, pp, prim_nout(p, nin, pp), out);
}

jx_status prim_while(struct Jaxpr *cond, int nc, struct Jaxpr *body, int nb, int64_t max_trips,
                     int nin, jx_array *const *in, jx_array **out) {
  PrimParams pp = {.nbranches = 2, .branches = {cond, body}, .nconsts = {nc, nb}, .length = max_trips};
  return bind_control(PRIM_while, &pp, nin, in, out);
}

jx_status prim_scan(struct Jaxpr *body, int nconsts, int ncarry, int64_t length, bool reverse,
                    int unroll, int nin, jx_array *const *in, jx_array **out) {
  PrimParams pp = {.nbranches = 1, .branches = {body}, .nconsts = {nconsts, ncarry}, .length = length,
                   .reverse = reverse, .unroll = unroll < 1 ? 1 : unroll};
  return bind_control(PRIM_scan, &pp, nin, in, out);
}

jx_array *prim_scatter_add(jx_array *x, jx_array *idx, jx_array *upd, int axis) {
  PrimParams pp = {.axis = axis};
  return prim_bind(PRIM_scatter_add, 3, (jx_array *[]){x, idx, upd}, &pp);
}

jx_array *prim_iota(jx_dtype dtype, int ndim, const int64_t *shape, int dimension) {
  if (!array_check_shape("iota", ndim, shape)) return NULL;
  PrimParams pp = {.dtype = dtype, .ndim = ndim, .axis = dimension};
  if (ndim) memcpy(pp.shape, shape, (size_t)ndim * 8);
  return prim_bind(PRIM_iota, 0, NULL, &pp);
}
