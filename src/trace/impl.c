/* impl.c -- eval rules: how each primitive runs on concrete arrays. Movement
 * primitives return views (a new shape tracker over the same buffer); every primitive
 * that computes runs as a one-equation program through the lowering jit uses, cached
 * per signature (trace/eager.c); control flow and calls evaluate their sub-programs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "trace/kexp.h"
#include "trace/collective.h"
#include "trace/trace.h"

/* The single result of eager_apply (trace/eager.c), NULL on failure. */
static jx_array *eager_one(Prim p, jx_array *x, const PrimParams *pp, const Aval *av) {
  jx_array *out = NULL;
  return eager_apply(p, 1, &x, pp, 1, av, &out) == JX_OK ? out : NULL;
}

static jx_array *impl_convert(jx_array *x, const PrimParams *pp, const Aval *av) {
  if (x->dtype == pp->dtype) /* a view: only the weak type may change */
    return array_new(buffer_ref(x->buf), shape_copy(x->st), x->dtype, pp->weak);
  return eager_one(PRIM_convert_element_type, x, pp, av);
}

/* --------------------------------------------------------------- movement */

static jx_array *view_of(jx_array *x, ShapeTracker *st) {
  if (!st) return NULL;
  return array_new(buffer_ref(x->buf), st, x->dtype, x->weak);
}

static jx_array *impl_reshape(jx_array *x, const PrimParams *pp) {
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  if (!array_check_shape("reshape", pp->ndim, pp->shape)) return NULL;
  if (shape_numel(pp->ndim, pp->shape) != shape_numel(x->ndim, x->shape)) {
    error_set(JX_ERR_SHAPE, "reshape: cannot reshape %s into %s",
              error_shape_str(b0, x->ndim, x->shape), error_shape_str(b1, pp->ndim, pp->shape));
    return NULL;
  }
  return view_of(x, shape_reshape(x->st, pp->ndim, pp->shape));
}

static jx_array *impl_transpose(jx_array *x, const PrimParams *pp) {
  bool seen[JX_MAX_NDIM] = {false};
  for (int d = 0; d < x->ndim; d++) {
    int a = pp->axes[d];
    if (a < 0 || a >= x->ndim || seen[a]) {
      error_set(JX_ERR_SHAPE, "transpose: axes are not a permutation of rank %d", x->ndim);
      return NULL;
    }
    seen[a] = true;
  }
  return view_of(x, shape_permute(x->st, pp->axes));
}

static jx_array *impl_broadcast_in_dim(jx_array *x, const PrimParams *pp) {
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  int64_t mid[JX_MAX_NDIM];
  for (int d = 0; d < pp->ndim; d++) mid[d] = 1;
  bool ok = array_check_shape("broadcast_in_dim", pp->ndim, pp->shape) && pp->naxes == x->ndim;
  for (int i = 0; ok && i < x->ndim; i++) {
    int d = pp->axes[i];
    ok = d >= 0 && d < pp->ndim && (i == 0 || d > pp->axes[i - 1]) &&
         (x->shape[i] == pp->shape[d] || x->shape[i] == 1);
    if (ok) mid[d] = x->shape[i];
  }
  if (!ok) {
    error_set(JX_ERR_SHAPE, "broadcast_in_dim: cannot broadcast %s to %s",
              error_shape_str(b0, x->ndim, x->shape), error_shape_str(b1, pp->ndim, pp->shape));
    return NULL;
  }
  ShapeTracker *st = shape_reshape(x->st, pp->ndim, mid);
  ShapeTracker *st2 = st ? shape_expand(st, pp->shape) : NULL;
  shape_free(st);
  return view_of(x, st2);
}

/* Padding with +0 is a view (padding reads as 0); another value needs a kernel. */
static jx_array *impl_pad(jx_array *x, const PrimParams *pp, const Aval *av) {
  if (!kexp_pad_needs_fill(pp->value)) return view_of(x, shape_pad(x->st, pp->start, pp->stop));
  return eager_one(PRIM_pad, x, pp, av);
}

static jx_array *impl_slice(jx_array *x, const PrimParams *pp) {
  int64_t step[JX_MAX_NDIM];
  bool strided = false;
  for (int d = 0; d < x->ndim; d++) {
    if (pp->start[d] < 0 || pp->start[d] > pp->stop[d] || pp->stop[d] > x->shape[d] ||
        pp->step[d] < 1) {
      error_set(JX_ERR_SHAPE, "slice: bad bounds [%lld:%lld:%lld] for axis %d of size %lld",
                (long long)pp->start[d], (long long)pp->stop[d], (long long)pp->step[d], d,
                (long long)x->shape[d]);
      return NULL;
    }
    step[d] = pp->step[d];
    strided |= step[d] != 1;
  }
  ShapeTracker *st = shape_shrink(x->st, pp->start, pp->stop);
  if (st && strided) {
    ShapeTracker *s2 = shape_stride(st, step);
    shape_free(st);
    st = s2;
  }
  return view_of(x, st);
}

static jx_array *impl_rev(jx_array *x, const PrimParams *pp) {
  int64_t step[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) step[d] = 1;
  for (int i = 0; i < pp->naxes; i++) {
    if (pp->axes[i] < 0 || pp->axes[i] >= x->ndim) {
      error_set(JX_ERR_SHAPE, "rev: bad axis %d for rank %d", pp->axes[i], x->ndim);
      return NULL;
    }
    step[pp->axes[i]] = -1;
  }
  return view_of(x, shape_stride(x->st, step));
}

/* ------------------------------------------------------------- dispatch */

/* The eval rule of every primitive (autodidax's impl_rules): one entry per primitive,
 * a uniform signature (avals: the results' avals from abstract evaluation);
 * tests/transform/test_rules.c fails on a missing one. */
typedef jx_status (*ImplRule)(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                              const Aval *avals, jx_array **out);

static jx_status one(jx_array *r, jx_array **out) {
  out[0] = r;
  return r ? JX_OK : jx_last_status() ? jx_last_status() : JX_ERR_INTERNAL;
}

#define RULE(name, expr)                                                                    \
  static jx_status name(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout, \
                        const Aval *avals, jx_array **out) {                                \
    return one(expr, out);                                                                  \
  }
RULE(rule_convert, impl_convert(in[0], pp, avals))
RULE(rule_reshape, impl_reshape(in[0], pp))
RULE(rule_transpose, impl_transpose(in[0], pp))
RULE(rule_broadcast_in_dim, impl_broadcast_in_dim(in[0], pp))
RULE(rule_pad, impl_pad(in[0], pp, avals))
RULE(rule_slice, impl_slice(in[0], pp))
RULE(rule_rev, impl_rev(in[0], pp))
RULE(rule_stop_gradient, view_of(in[0], shape_copy(in[0]->st)))
#undef RULE

/* Everything that computes: the primitive's lowering rule (trace/lower.c), as a cached
 * one-equation program (trace/eager.c). */
static jx_status rule_lowered(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                              const Aval *avals, jx_array **out) {
  return eager_apply(p, nin, in, pp, nout, avals, out);
}

static jx_status rule_call(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                           const Aval *avals, jx_array **out) {
  return prim_eval_jaxpr(pp->jaxpr, in, out);
}

/* shard_map: the body on every device of the mesh (trace/shard_map.c) */
static jx_status rule_shard_map(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                                const Aval *avals, jx_array **out) {
  return shard_map_impl(p, nin, in, pp, nout, out);
}

/* cond, while, scan (trace/control.c) */
static jx_status rule_cond(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                           const Aval *avals, jx_array **out) {
  return control_impl(p, nin, in, pp, nout, out);
}

static jx_status rule_custom(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                             const Aval *avals, jx_array **out) {
  return custom_impl(p, nin, in, pp, nout, out);
}

static jx_status rule_debug_print(Prim p, int nin, jx_array *const *in, const PrimParams *pp, int nout,
                                  const Aval *avals, jx_array **out) {
  return debug_impl(nin, in, pp);
}

static jx_status rule_collective(Prim p, int nin, jx_array *const *in, const PrimParams *pp,
                                 int nout, const Aval *avals, jx_array **out) {
  (void)avals;
  return collective_impl(p, nin, in, pp, nout, out); /* trace/collective.c */
}

static const ImplRule impl_rules[PRIM_NUM] = {
    [PRIM_neg] = rule_lowered,
    [PRIM_not] = rule_lowered,
    [PRIM_abs] = rule_lowered,
    [PRIM_sign] = rule_lowered,
    [PRIM_sin] = rule_lowered,
    [PRIM_cos] = rule_lowered,
    [PRIM_tan] = rule_lowered,
    [PRIM_asin] = rule_lowered,
    [PRIM_acos] = rule_lowered,
    [PRIM_atan] = rule_lowered,
    [PRIM_sinh] = rule_lowered,
    [PRIM_cosh] = rule_lowered,
    [PRIM_tanh] = rule_lowered,
    [PRIM_asinh] = rule_lowered,
    [PRIM_acosh] = rule_lowered,
    [PRIM_atanh] = rule_lowered,
    [PRIM_exp] = rule_lowered,
    [PRIM_exp2] = rule_lowered,
    [PRIM_expm1] = rule_lowered,
    [PRIM_log] = rule_lowered,
    [PRIM_log2] = rule_lowered,
    [PRIM_log1p] = rule_lowered,
    [PRIM_sqrt] = rule_lowered,
    [PRIM_rsqrt] = rule_lowered,
    [PRIM_cbrt] = rule_lowered,
    [PRIM_reciprocal] = rule_lowered,
    [PRIM_floor] = rule_lowered,
    [PRIM_ceil] = rule_lowered,
    [PRIM_round] = rule_lowered,
    [PRIM_trunc] = rule_lowered,
    [PRIM_erf] = rule_lowered,
    [PRIM_erfc] = rule_lowered,
    [PRIM_is_nan] = rule_lowered,
    [PRIM_is_inf] = rule_lowered,
    [PRIM_add] = rule_lowered,
    [PRIM_sub] = rule_lowered,
    [PRIM_mul] = rule_lowered,
    [PRIM_div] = rule_lowered,
    [PRIM_rem] = rule_lowered,
    [PRIM_pow] = rule_lowered,
    [PRIM_max] = rule_lowered,
    [PRIM_min] = rule_lowered,
    [PRIM_atan2] = rule_lowered,
    [PRIM_and] = rule_lowered,
    [PRIM_or] = rule_lowered,
    [PRIM_xor] = rule_lowered,
    [PRIM_shift_left] = rule_lowered,
    [PRIM_shift_right] = rule_lowered,
    [PRIM_lt] = rule_lowered,
    [PRIM_ne] = rule_lowered,
    [PRIM_eq] = rule_lowered,
    [PRIM_real] = rule_lowered,
    [PRIM_imag] = rule_lowered,
    [PRIM_conj] = rule_lowered,
    [PRIM_complex] = rule_lowered,
    [PRIM_select] = rule_lowered,
    [PRIM_fma] = rule_lowered,
    [PRIM_convert_element_type] = rule_convert,
    [PRIM_bitcast_convert_type] = rule_lowered,
    [PRIM_reduce_sum] = rule_lowered,
    [PRIM_reduce_prod] = rule_lowered,
    [PRIM_reduce_max] = rule_lowered,
    [PRIM_reduce_min] = rule_lowered,
    [PRIM_reduce_and] = rule_lowered,
    [PRIM_reduce_or] = rule_lowered,
    [PRIM_reshape] = rule_reshape,
    [PRIM_transpose] = rule_transpose,
    [PRIM_broadcast_in_dim] = rule_broadcast_in_dim,
    [PRIM_pad] = rule_pad,
    [PRIM_slice] = rule_slice,
    [PRIM_rev] = rule_rev,
    [PRIM_concatenate] = rule_lowered,
    [PRIM_gather] = rule_lowered,
    [PRIM_dot_general] = rule_lowered,
    [PRIM_iota] = rule_lowered,
    [PRIM_stop_gradient] = rule_stop_gradient,
    [PRIM_sort] = rule_lowered,
    [PRIM_scatter_add] = rule_lowered,
    [PRIM_cholesky] = rule_lowered,
    [PRIM_triangular_solve] = rule_lowered,
    [PRIM_lu] = rule_lowered,
    [PRIM_qr] = rule_lowered,
    [PRIM_eigh] = rule_lowered,
    [PRIM_svd] = rule_lowered,
    [PRIM_eig] = rule_lowered,
    [PRIM_tridiagonal_solve] = rule_lowered,
    [PRIM_fft] = rule_lowered,
    [PRIM_threefry2x32] = rule_lowered,
    [PRIM_jit] = rule_call,
    [PRIM_special_call] = rule_call,
    [PRIM_cond] = rule_cond,
    [PRIM_custom_jvp_call] = rule_custom,
    [PRIM_custom_vjp_call] = rule_custom,
    [PRIM_custom_lin] = rule_custom,
    [PRIM_checkpoint] = rule_custom,
    [PRIM_debug_print] = rule_debug_print,
    [PRIM_while] = rule_cond,
    [PRIM_scan] = rule_cond,
    [PRIM_psum] = rule_collective,
    [PRIM_pmax] = rule_collective,
    [PRIM_pmin] = rule_collective,
    [PRIM_all_gather] = rule_collective,
    [PRIM_psum_scatter] = rule_collective,
    [PRIM_ppermute] = rule_collective,
    [PRIM_all_to_all] = rule_collective,
    [PRIM_axis_index] = rule_collective,
    [PRIM_shard_map] = rule_shard_map,
};

bool impl_has_rule(Prim p) { return (unsigned)p < PRIM_NUM && impl_rules[p] != NULL; }

jx_status impl_apply(Prim p, int nin, jx_array *const *given, const PrimParams *pp, int nout,
                     const Aval *avals, jx_array **out) {
  if (!impl_has_rule(p)) {
    error_set(JX_ERR_INTERNAL, "no eval rule for primitive %s", prim_name(p));
    return JX_ERR_INTERNAL;
  }
  /* one device for every input (JAX's committed-device rule); uncommitted inputs
   * elsewhere are copied there */
  bool committed;
  const Backend *be = realize_device(prim_name(p), nin, given, &committed);
  jx_array *const *in = given;
  if (!be || !realize_args(be, nin, given, &in)) return jx_last_status();
  bool clean = !error_pending();
  jx_status s = impl_rules[p](p, nin, in, pp, nout, avals, out);
  /* memory this operation could not get: the message says which operation needed it */
  if (clean && s == JX_ERR_OOM && strncmp(jx_last_error(), prim_name(p), strlen(prim_name(p))) != 0) {
    ErrorSaved e = error_stash();
    error_set(JX_ERR_OOM, "%s: %s", prim_name(p), e.message);
  }
  /* abstract evaluation decides the weak type */
  for (int o = 0; s == JX_OK && o < nout; o++) {
    out[o]->weak = avals[o].weak;
    out[o]->committed |= committed;
  }
  realize_args_free(nin, given, in);
  return s;
}

jx_array *impl_contiguous(jx_array *a) {
  if (!a) return NULL;
  if (shape_is_contiguous(a->st)) return jx_ref(a);
  /* a copy: the cached program of a conversion to its own dtype, which the lowering
   * makes a kernel reading the view (impl_convert would return the view itself) */
  PrimParams pp = {.dtype = a->dtype, .weak = a->weak};
  Aval av = prim_aval_of(a);
  return eager_one(PRIM_convert_element_type, a, &pp, &av);
}
