/* abstract.c -- abstract evaluation: each primitive's result dtype, weak type and
 * shape, computed from its operands' avals and params, with the argument checks
 * every trace level shares (JAX's abstract_eval rules). */
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/dtype.h"
#include "core/error.h"
#include "trace/collective.h"
#include "trace/trace.h"

Aval prim_aval_of(const jx_array *a) {
  Aval v = {.dtype = a->dtype, .weak = a->weak, .ndim = a->ndim};
  memcpy(v.shape, a->shape, (size_t)a->ndim * sizeof(int64_t));
  return v;
}

void aval_text(char *buf, size_t n, const Aval *a) {
  char t[ARRAY_DESCRIBE_BUF];
  snprintf(buf, n, "%s", array_type_str(t, a->dtype, a->ndim, a->shape));
}

static const char *aval_str(char *buf, const Aval *a) {
  aval_text(buf, ARRAY_DESCRIBE_BUF, a);
  return buf;
}
#define AVAL_BUF ARRAY_DESCRIBE_BUF

static bool same_shape(const Aval *a, const Aval *b) {
  return a->ndim == b->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * 8) == 0;
}

static bool fail(jx_status s, Prim p, const char *what, const Aval *a, const Aval *b) {
  char b0[AVAL_BUF], b1[AVAL_BUF];
  if (b)
    error_set(s, "%s: %s: %s and %s", prim_name(p), what, aval_str(b0, a), aval_str(b1, b));
  else
    error_set(s, "%s: %s: %s", prim_name(p), what, aval_str(b0, a));
  return false;
}

static bool set_shape(Aval *out, int ndim, const int64_t *shape, const char *fn) {
  if (!array_check_shape(fn, ndim, shape)) return false;
  out->ndim = ndim;
  if (ndim) memcpy(out->shape, shape, (size_t)ndim * 8);
  return true;
}

static bool eval_elementwise(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  int first = p == PRIM_select ? 1 : 0;
  if (p == PRIM_select && in[0].dtype != JX_BOOL)
    return fail(JX_ERR_DTYPE, p, "predicate must be bool", &in[0], NULL);
  bool weak = true;
  for (int i = 0; i < nin; i++) {
    if (!same_shape(&in[0], &in[i]))
      return fail(JX_ERR_SHAPE, p, "operand shapes differ", &in[0], &in[i]);
    /* lax.pow also takes an integer exponent with a floating base (JAX's jnp.power of
     * a float and a traced int: the derivative is then 0 where the exponent is 0) */
    bool int_exponent = p == PRIM_pow && i == 1 && dtype_is_floating(in[0].dtype) &&
                        dtype_is_integer(in[1].dtype);
    if (i > first && in[i].dtype != in[first].dtype && !int_exponent)
      return fail(JX_ERR_DTYPE, p, "operand dtypes differ", &in[first], &in[i]);
    if (i >= first) weak = weak && in[i].weak;
  }
  *out = in[first];
  out->weak = weak;
  memcpy(out->shape, in[0].shape, sizeof out->shape);
  PrimKind k = prim_kind(p);
  if (k == PRIM_KIND_COMPARE || k == PRIM_KIND_UNARY_PRED) out->dtype = JX_BOOL; /* weak iff inputs are, as in JAX */
  switch (p) {
  case PRIM_real: case PRIM_imag: case PRIM_conj:
    if (!dtype_is_complex(in[0].dtype)) return fail(JX_ERR_DTYPE, p, "operand must be complex", &in[0], NULL);
    if (p != PRIM_conj) out->dtype = dtype_real_part(in[0].dtype);
    break;
  case PRIM_fma:
    if (in[0].dtype != JX_FLOAT32 && in[0].dtype != JX_FLOAT64)
      return fail(JX_ERR_DTYPE, p, "operands must be float32 or float64", &in[0], NULL);
    break;
  case PRIM_abs: /* |z| is real */
    out->dtype = dtype_real_part(in[0].dtype);
    break;
  case PRIM_complex:
    if (in[0].dtype != JX_FLOAT32 && in[0].dtype != JX_FLOAT64)
      return fail(JX_ERR_DTYPE, p, "parts must be float32 or float64", &in[0], &in[1]);
    out->dtype = dtype_to_complex(in[0].dtype);
    break;
  default:
    break;
  }
  return true;
}

static bool eval_reduce(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  const Aval *x = &in[0];
  bool mask[JX_MAX_NDIM] = {false};
  for (int i = 0; i < pp->naxes; i++) {
    int a = pp->axes[i];
    if (a < 0 || a >= x->ndim || mask[a]) return fail(JX_ERR_SHAPE, p, "bad reduction axes", x, NULL);
    mask[a] = true;
  }
  *out = *x;
  out->ndim = 0;
  for (int d = 0; d < x->ndim; d++)
    if (!mask[d]) out->shape[out->ndim++] = x->shape[d];
  return true;
}

static bool eval_broadcast(const Aval *x, const PrimParams *pp, Aval *out) {
  Aval want = {.dtype = x->dtype, .ndim = pp->ndim};
  memcpy(want.shape, pp->shape, sizeof want.shape);
  bool ok = pp->ndim >= 0 && pp->ndim <= JX_MAX_NDIM && pp->naxes == x->ndim;
  for (int i = 0; ok && i < x->ndim; i++) {
    int d = pp->axes[i];
    ok = d >= 0 && d < pp->ndim && (i == 0 || d > pp->axes[i - 1]) &&
         (x->shape[i] == pp->shape[d] || x->shape[i] == 1);
  }
  if (!ok) return fail(JX_ERR_SHAPE, PRIM_broadcast_in_dim, "cannot broadcast", x, &want);
  *out = *x;
  return set_shape(out, pp->ndim, pp->shape, "broadcast_in_dim");
}

static bool eval_movement(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  const Aval *x = &in[0];
  int64_t shape[JX_MAX_NDIM] = {0};
  *out = *x;
  switch (p) {
  case PRIM_reshape: {
    Aval want = {.dtype = x->dtype, .ndim = pp->ndim};
    if (pp->ndim < 0 || pp->ndim > JX_MAX_NDIM) return fail(JX_ERR_SHAPE, p, "bad rank", x, NULL);
    memcpy(want.shape, pp->shape, sizeof want.shape);
    if (!array_check_shape("reshape", pp->ndim, pp->shape)) return false;
    if (shape_numel(pp->ndim, pp->shape) != shape_numel(x->ndim, x->shape))
      return fail(JX_ERR_SHAPE, p, "sizes differ", x, &want);
    return set_shape(out, pp->ndim, pp->shape, "reshape");
  }
  case PRIM_transpose: {
    bool seen[JX_MAX_NDIM] = {false};
    if (pp->naxes != x->ndim) return fail(JX_ERR_SHAPE, p, "permutation has the wrong length", x, NULL);
    for (int d = 0; d < x->ndim; d++) {
      int a = pp->axes[d];
      if (a < 0 || a >= x->ndim || seen[a]) return fail(JX_ERR_SHAPE, p, "axes are not a permutation", x, NULL);
      seen[a] = true;
      shape[d] = x->shape[a];
    }
    return set_shape(out, x->ndim, shape, "transpose");
  }
  case PRIM_broadcast_in_dim:
    return eval_broadcast(x, pp, out);
  case PRIM_pad:
    for (int d = 0; d < x->ndim; d++) {
      if (pp->start[d] < 0 || pp->stop[d] < 0) return fail(JX_ERR_SHAPE, p, "negative padding", x, NULL);
      if (pp->start[d] > INT64_MAX - pp->stop[d] - x->shape[d]) return fail(JX_ERR_OOM, p, "padded size overflows", x, NULL);
      shape[d] = x->shape[d] + pp->start[d] + pp->stop[d];
    }
    return set_shape(out, x->ndim, shape, "pad");
  case PRIM_slice:
    for (int d = 0; d < x->ndim; d++) {
      if (pp->start[d] < 0 || pp->start[d] > pp->stop[d] || pp->stop[d] > x->shape[d] || pp->step[d] < 1)
        return fail(JX_ERR_SHAPE, p, "slice bounds out of range", x, NULL);
      shape[d] = pp->stop[d] == pp->start[d] ? 0 : (pp->stop[d] - pp->start[d] - 1) / pp->step[d] + 1;
    }
    return set_shape(out, x->ndim, shape, "slice");
  case PRIM_stop_gradient:
    return true;
  case PRIM_rev:
    for (int i = 0; i < pp->naxes; i++)
      if (pp->axes[i] < 0 || pp->axes[i] >= x->ndim) return fail(JX_ERR_SHAPE, p, "bad axis", x, NULL);
    return true;
  default:
    return fail(JX_ERR_INTERNAL, p, "not a movement primitive", x, NULL);
  }
}

static bool eval_concatenate(Prim p, int n, const Aval *in, const PrimParams *pp, Aval *out) {
  const Aval *x = &in[0];
  int axis = pp->axis;
  if (axis < 0 || axis >= x->ndim) return fail(JX_ERR_SHAPE, PRIM_concatenate, "axis out of range", x, NULL);
  *out = *x;
  out->shape[axis] = 0;
  for (int i = 0; i < n; i++) {
    bool ok = in[i].ndim == x->ndim;
    for (int d = 0; ok && d < x->ndim; d++) ok = d == axis || in[i].shape[d] == x->shape[d];
    if (!ok) return fail(JX_ERR_SHAPE, PRIM_concatenate, "operands differ off the axis", x, &in[i]);
    if (in[i].dtype != x->dtype) return fail(JX_ERR_DTYPE, PRIM_concatenate, "operand dtypes differ", x, &in[i]);
    if (out->shape[axis] > INT64_MAX - in[i].shape[axis]) return fail(JX_ERR_OOM, PRIM_concatenate, "size overflows", x, NULL);
    out->shape[axis] += in[i].shape[axis];
    out->weak = out->weak && in[i].weak;
  }
  return array_check_shape("concatenate", out->ndim, out->shape);
}

static bool eval_gather(const Aval *x, const Aval *idx, const PrimParams *pp, Aval *out) {
  int axis = pp->axis;
  if (axis < 0 || axis >= x->ndim || x->ndim - 1 + idx->ndim > JX_MAX_NDIM)
    return fail(JX_ERR_SHAPE, PRIM_gather, "axis out of range", x, NULL);
  if (!dtype_is_integer(idx->dtype)) return fail(JX_ERR_DTYPE, PRIM_gather, "indices must be integers", idx, NULL);
  if (x->shape[axis] == 0 && shape_numel(idx->ndim, idx->shape) > 0)
    return fail(JX_ERR_SHAPE, PRIM_gather, "cannot index an empty axis", x, NULL);
  int64_t shape[JX_MAX_NDIM];
  int n = 0;
  for (int d = 0; d < axis; d++) shape[n++] = x->shape[d];
  for (int d = 0; d < idx->ndim; d++) shape[n++] = idx->shape[d];
  for (int d = axis + 1; d < x->ndim; d++) shape[n++] = x->shape[d];
  *out = *x;
  return set_shape(out, n, shape, "gather");
}

static bool dims_valid(int n, const int *dims, int ndim, bool *used) {
  for (int i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= ndim || used[dims[i]]) return false;
    used[dims[i]] = true;
  }
  return true;
}

static bool eval_dot_general(const Aval *x, const Aval *y, const PrimParams *pp, Aval *out) {
  bool xu[JX_MAX_NDIM] = {false}, yu[JX_MAX_NDIM] = {false};
  if (x->dtype != y->dtype) return fail(JX_ERR_DTYPE, PRIM_dot_general, "operand dtypes differ", x, y);
  bool ok = dims_valid(pp->ncontract, pp->lhs_contract, x->ndim, xu) &&
            dims_valid(pp->nbatch, pp->lhs_batch, x->ndim, xu) &&
            dims_valid(pp->ncontract, pp->rhs_contract, y->ndim, yu) &&
            dims_valid(pp->nbatch, pp->rhs_batch, y->ndim, yu);
  for (int i = 0; ok && i < pp->ncontract; i++) ok = x->shape[pp->lhs_contract[i]] == y->shape[pp->rhs_contract[i]];
  for (int i = 0; ok && i < pp->nbatch; i++) ok = x->shape[pp->lhs_batch[i]] == y->shape[pp->rhs_batch[i]];
  if (!ok) return fail(JX_ERR_SHAPE, PRIM_dot_general, "operands do not match the dimension numbers", x, y);
  int64_t shape[JX_MAX_NDIM];
  int n = 0;
  if (pp->nbatch + (x->ndim - pp->nbatch - pp->ncontract) + (y->ndim - pp->nbatch - pp->ncontract) > JX_MAX_NDIM)
    return fail(JX_ERR_SHAPE, PRIM_dot_general, "result rank too large", x, y);
  for (int i = 0; i < pp->nbatch; i++) shape[n++] = x->shape[pp->lhs_batch[i]];
  for (int d = 0; d < x->ndim; d++)
    if (!xu[d]) shape[n++] = x->shape[d];
  for (int d = 0; d < y->ndim; d++)
    if (!yu[d]) shape[n++] = y->shape[d];
  *out = *x;
  out->weak = x->weak && y->weak;
  return set_shape(out, n, shape, "dot_general");
}

static bool eval_routine(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  const Aval *x = &in[0];
  if (pp->axis < 0 || pp->axis >= x->ndim) return fail(JX_ERR_SHAPE, p, "axis out of range", x, NULL);
  if (p == PRIM_sort) { /* every operand sorted by the first: one shape */
    for (int i = 0; i < nin; i++) {
      if (!same_shape(x, &in[i])) return fail(JX_ERR_SHAPE, p, "operand shapes differ", x, &in[i]);
      out[i] = in[i];
    }
    return true;
  }
  *out = *x;
  Aval g;
  if (!eval_gather(x, &in[1], pp, &g)) return false;
  if (!same_shape(&g, &in[2]) || in[2].dtype != x->dtype)
    return fail(JX_ERR_SHAPE, p, "updates must have gather's result shape and x's dtype", &g, &in[2]);
  out->weak = x->weak && in[2].weak;
  return true;
}

/* A call: the operands must match the jaxpr's inputs (weak types may differ, as when
 * JAX calls a jitted function); the results are its outputs. */
static bool eval_call(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  const Jaxpr *j = pp->jaxpr;
  if (!j) {
    error_set(JX_ERR_INTERNAL, "%s: no jaxpr parameter", prim_name(p));
    return false;
  }
  if (nin != j->nin) {
    error_set(JX_ERR_VALUE, "%s: %d operands for a jaxpr of %d inputs", prim_name(p), nin, j->nin);
    return false;
  }
  for (int i = 0; i < nin; i++) {
    const Aval *want = &j->vars[j->invars[i]];
    if (!same_shape(&in[i], want) || in[i].dtype != want->dtype)
      return fail(JX_ERR_SHAPE, p, "operand does not match the jaxpr's input", &in[i], want);
  }
  for (int o = 0; o < j->nout; o++) out[o] = j->vars[j->outvars[o]];
  return true;
}

int prim_nout(Prim p, int nin, const PrimParams *pp) {
  switch (prim_kind(p)) {
  case PRIM_KIND_THREEFRY: return 2;
  case PRIM_KIND_ROUTINE: return p == PRIM_sort ? nin : prim_is_linalg(p) ? prim_linalg_nout(p, pp) : 1;
  case PRIM_KIND_CALL: return pp->jaxpr ? pp->jaxpr->nout : 0;
  case PRIM_KIND_CONTROL: return control_nout(p, pp);
  case PRIM_KIND_EFFECT: return 0;
  default: return 1;
  }
}

static bool eval_gather_rule(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  return eval_gather(&in[0], &in[1], pp, out);
}

static bool eval_dot_rule(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  return eval_dot_general(&in[0], &in[1], pp, out);
}

static bool eval_convert(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  if (!dtype_is_valid(pp->dtype)) return fail(JX_ERR_DTYPE, p, "invalid target dtype", &in[0], NULL);
  *out = in[0];
  out->dtype = pp->dtype;
  out->weak = pp->weak;
  return true;
}

static bool eval_bitcast(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  char b[AVAL_BUF];
  if (!dtype_is_valid(pp->dtype) || jx_dtype_itemsize(pp->dtype) != jx_dtype_itemsize(in[0].dtype)) {
    error_set(JX_ERR_DTYPE, "%s: cannot bitcast %s to %s (itemsizes differ)", prim_name(p),
              aval_str(b, &in[0]), dtype_is_valid(pp->dtype) ? jx_dtype_name(pp->dtype) : "?");
    return false;
  }
  *out = in[0];
  out->dtype = pp->dtype;
  out->weak = false;
  return true;
}

static bool eval_threefry(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  if (in[0].dtype != JX_UINT32) return fail(JX_ERR_DTYPE, p, "operands must be uint32", &in[0], NULL);
  if (!eval_elementwise(p, nin, in, pp, out)) return false;
  out[1] = out[0];
  return true;
}

static bool eval_iota(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  if (!dtype_is_valid(pp->dtype) || pp->axis < 0 || pp->axis >= pp->ndim) {
    error_set(JX_ERR_SHAPE, "iota: dimension %d out of range for rank %d", pp->axis, pp->ndim);
    return false;
  }
  *out = (Aval){.dtype = pp->dtype};
  return set_shape(out, pp->ndim, pp->shape, "iota");
}

/* The abstract eval rule of every primitive (JAX's abstract_eval rules): one entry per
 * primitive; tests/transform/test_rules.c fails on a missing one. */
typedef bool (*AbstractRule)(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out);
static const AbstractRule abstract_rules[PRIM_NUM] = {
    [PRIM_neg] = eval_elementwise,
    [PRIM_not] = eval_elementwise,
    [PRIM_abs] = eval_elementwise,
    [PRIM_sign] = eval_elementwise,
    [PRIM_sin] = eval_elementwise,
    [PRIM_cos] = eval_elementwise,
    [PRIM_tan] = eval_elementwise,
    [PRIM_asin] = eval_elementwise,
    [PRIM_acos] = eval_elementwise,
    [PRIM_atan] = eval_elementwise,
    [PRIM_sinh] = eval_elementwise,
    [PRIM_cosh] = eval_elementwise,
    [PRIM_tanh] = eval_elementwise,
    [PRIM_asinh] = eval_elementwise,
    [PRIM_acosh] = eval_elementwise,
    [PRIM_atanh] = eval_elementwise,
    [PRIM_exp] = eval_elementwise,
    [PRIM_exp2] = eval_elementwise,
    [PRIM_expm1] = eval_elementwise,
    [PRIM_log] = eval_elementwise,
    [PRIM_log2] = eval_elementwise,
    [PRIM_log1p] = eval_elementwise,
    [PRIM_sqrt] = eval_elementwise,
    [PRIM_rsqrt] = eval_elementwise,
    [PRIM_cbrt] = eval_elementwise,
    [PRIM_reciprocal] = eval_elementwise,
    [PRIM_floor] = eval_elementwise,
    [PRIM_ceil] = eval_elementwise,
    [PRIM_round] = eval_elementwise,
    [PRIM_trunc] = eval_elementwise,
    [PRIM_erf] = eval_elementwise,
    [PRIM_erfc] = eval_elementwise,
    [PRIM_is_nan] = eval_elementwise,
    [PRIM_is_inf] = eval_elementwise,
    [PRIM_add] = eval_elementwise,
    [PRIM_sub] = eval_elementwise,
    [PRIM_mul] = eval_elementwise,
    [PRIM_div] = eval_elementwise,
    [PRIM_rem] = eval_elementwise,
    [PRIM_pow] = eval_elementwise,
    [PRIM_max] = eval_elementwise,
    [PRIM_min] = eval_elementwise,
    [PRIM_atan2] = eval_elementwise,
    [PRIM_and] = eval_elementwise,
    [PRIM_or] = eval_elementwise,
    [PRIM_xor] = eval_elementwise,
    [PRIM_shift_left] = eval_elementwise,
    [PRIM_shift_right] = eval_elementwise,
    [PRIM_lt] = eval_elementwise,
    [PRIM_ne] = eval_elementwise,
    [PRIM_eq] = eval_elementwise,
    [PRIM_real] = eval_elementwise,
    [PRIM_imag] = eval_elementwise,
    [PRIM_conj] = eval_elementwise,
    [PRIM_complex] = eval_elementwise,
    [PRIM_select] = eval_elementwise,
    [PRIM_fma] = eval_elementwise,
    [PRIM_convert_element_type] = eval_convert,
    [PRIM_bitcast_convert_type] = eval_bitcast,
    [PRIM_reduce_sum] = eval_reduce,
    [PRIM_reduce_prod] = eval_reduce,
    [PRIM_reduce_max] = eval_reduce,
    [PRIM_reduce_min] = eval_reduce,
    [PRIM_reduce_and] = eval_reduce,
    [PRIM_reduce_or] = eval_reduce,
    [PRIM_reshape] = eval_movement,
    [PRIM_transpose] = eval_movement,
    [PRIM_broadcast_in_dim] = eval_movement,
    [PRIM_pad] = eval_movement,
    [PRIM_slice] = eval_movement,
    [PRIM_rev] = eval_movement,
    [PRIM_concatenate] = eval_concatenate,
    [PRIM_gather] = eval_gather_rule,
    [PRIM_dot_general] = eval_dot_rule,
    [PRIM_iota] = eval_iota,
    [PRIM_stop_gradient] = eval_movement,
    [PRIM_sort] = eval_routine,
    [PRIM_scatter_add] = eval_routine,
    [PRIM_cholesky] = prim_linalg_abstract_eval, /* trace/linalg.c */
    [PRIM_triangular_solve] = prim_linalg_abstract_eval,
    [PRIM_lu] = prim_linalg_abstract_eval,
    [PRIM_qr] = prim_linalg_abstract_eval,
    [PRIM_eigh] = prim_linalg_abstract_eval,
    [PRIM_svd] = prim_linalg_abstract_eval,
    [PRIM_eig] = prim_linalg_abstract_eval,
    [PRIM_tridiagonal_solve] = prim_linalg_abstract_eval,
    [PRIM_fft] = prim_fft_abstract_eval, /* trace/fft.c */
    [PRIM_threefry2x32] = eval_threefry,
    [PRIM_jit] = eval_call,
    [PRIM_special_call] = eval_call,
    [PRIM_cond] = control_abstract_eval,
    [PRIM_custom_jvp_call] = custom_abstract_eval, /* trace/custom.c */
    [PRIM_custom_vjp_call] = custom_abstract_eval,
    [PRIM_custom_lin] = custom_abstract_eval,
    [PRIM_checkpoint] = custom_abstract_eval,
    [PRIM_debug_print] = debug_abstract_eval, /* trace/debug.c */
    [PRIM_while] = control_abstract_eval,
    [PRIM_scan] = control_abstract_eval,
    [PRIM_psum] = collective_abstract_eval, /* trace/collective.c */
    [PRIM_pmax] = collective_abstract_eval, /* trace/collective.c */
    [PRIM_pmin] = collective_abstract_eval, /* trace/collective.c */
    [PRIM_all_gather] = collective_abstract_eval, /* trace/collective.c */
    [PRIM_psum_scatter] = collective_abstract_eval, /* trace/collective.c */
    [PRIM_ppermute] = collective_abstract_eval, /* trace/collective.c */
    [PRIM_all_to_all] = collective_abstract_eval, /* trace/collective.c */
    [PRIM_axis_index] = collective_abstract_eval, /* trace/collective.c */
    [PRIM_shard_map] = shard_map_abstract_eval, /* trace/shard_map.c */
};

bool prim_has_abstract_rule(Prim p) { return (unsigned)p < PRIM_NUM && abstract_rules[p] != NULL; }

/* The primitives that take complex operands; every other one refuses them with
 * JX_ERR_DTYPE here, at the one check every trace level shares. */
static bool complex_ok(Prim p) {
  switch (prim_kind(p)) {
  case PRIM_KIND_MOVEMENT: case PRIM_KIND_CONCATENATE: case PRIM_KIND_GATHER:
  case PRIM_KIND_DOT: case PRIM_KIND_CALL: case PRIM_KIND_CONTROL: case PRIM_KIND_SELECT:
  case PRIM_KIND_CONVERT:
    return true;
  default:
    break;
  }
  switch (p) {
  case PRIM_neg: case PRIM_add: case PRIM_sub: case PRIM_mul: case PRIM_div: case PRIM_eq:
  case PRIM_ne: case PRIM_real: case PRIM_imag: case PRIM_conj: case PRIM_abs: case PRIM_sign:
  case PRIM_reciprocal: case PRIM_is_nan: case PRIM_is_inf: case PRIM_reduce_sum:
  case PRIM_reduce_prod: case PRIM_sort: case PRIM_scatter_add: case PRIM_fft:
  /* linear algebra: LAPACK's c/z routines (backend/lapack.c) */
  case PRIM_cholesky: case PRIM_triangular_solve: case PRIM_lu: case PRIM_qr: case PRIM_eigh:
  case PRIM_svd: case PRIM_eig: case PRIM_tridiagonal_solve:
  /* transcendental functions: expanded into real ops by ir/complex.c */
  case PRIM_exp: case PRIM_expm1: case PRIM_log: case PRIM_log1p: case PRIM_sqrt:
  case PRIM_rsqrt: case PRIM_pow: case PRIM_sin: case PRIM_cos: case PRIM_tan:
  case PRIM_sinh: case PRIM_cosh: case PRIM_tanh: case PRIM_asin: case PRIM_acos:
  case PRIM_atan: case PRIM_asinh: case PRIM_acosh: case PRIM_atanh:
  /* collectives that add or move data (pmax / pmin need an order) */
  case PRIM_psum: case PRIM_all_gather: case PRIM_psum_scatter: case PRIM_ppermute:
  case PRIM_all_to_all:
    return true;
  default:
    return false;
  }
}

bool prim_abstract_eval(Prim p, int nin, const Aval *in, const PrimParams *pp, Aval *out) {
  if (!prim_has_abstract_rule(p)) {
    error_set(JX_ERR_INTERNAL, "no abstract eval rule for %s", prim_name(p));
    return false;
  }
  bool cpx = (prim_kind(p) == PRIM_KIND_CONVERT || prim_kind(p) == PRIM_KIND_BITCAST ||
              prim_kind(p) == PRIM_KIND_IOTA) && dtype_is_complex(pp->dtype);
  for (int i = 0; i < nin && !cpx; i++) cpx = dtype_is_complex(in[i].dtype);
  if (cpx && !complex_ok(p)) {
    for (int i = 0; i < nin; i++)
      if (dtype_is_complex(in[i].dtype))
        return fail(JX_ERR_DTYPE, p, "complex operands are not supported", &in[i], NULL);
    error_set(JX_ERR_DTYPE, "%s: complex %s results are not supported", prim_name(p),
              jx_dtype_name(pp->dtype));
    return false;
  }
  if (!abstract_rules[p](p, nin, in, pp, out)) return false;
  /* a result whose bytes overflow (2^62 float32 elements: the size in bytes wrapped to a
   * small buffer that kernels then wrote past) */
  int nout = prim_nout(p, nin, pp);
  for (int o = 0; o < nout; o++) {
    int64_t n = shape_numel_checked(out[o].ndim, out[o].shape), bytes;
    size_t item = jx_dtype_itemsize(out[o].dtype);
    if (n < 0 || __builtin_mul_overflow(n, (int64_t)(item ? item : 1), &bytes)) {
      char b[AVAL_BUF];
      error_set(JX_ERR_OOM, "%s: a result of type %s has more bytes than can be addressed", prim_name(p),
                aval_str(b, &out[o]));
      return false;
    }
  }
  return true;
}

void prim_dot_layout(const PrimParams *pp, const Aval *x, const Aval *y, DotLayout *L) {
  bool xu[JX_MAX_NDIM] = {false}, yu[JX_MAX_NDIM] = {false};
  int nx = 0, ny = 0;
  *L = (DotLayout){.B = 1, .M = 1, .K = 1, .N = 1};
  for (int i = 0; i < pp->nbatch; i++) {
    L->xperm[nx++] = pp->lhs_batch[i], L->yperm[ny++] = pp->rhs_batch[i];
    xu[pp->lhs_batch[i]] = yu[pp->rhs_batch[i]] = true;
    L->B *= x->shape[pp->lhs_batch[i]];
  }
  for (int i = 0; i < pp->ncontract; i++) xu[pp->lhs_contract[i]] = yu[pp->rhs_contract[i]] = true;
  for (int d = 0; d < x->ndim; d++)
    if (!xu[d]) L->xperm[nx++] = d, L->M *= x->shape[d];
  for (int i = 0; i < pp->ncontract; i++) {
    L->xperm[nx++] = pp->lhs_contract[i], L->yperm[ny++] = pp->rhs_contract[i];
    L->K *= x->shape[pp->lhs_contract[i]];
  }
  for (int d = 0; d < y->ndim; d++)
    if (!yu[d]) L->yperm[ny++] = d, L->N *= y->shape[d];
}
