/* indexed.c -- JAX's indexed updates x.at[idx].op(y) with an integer index array along
 * one axis: jx_at_add / set / mul / min / max. Built only from primitives (gather,
 * scatter_add, select, reductions), so grad, vmap and jit apply unchanged.
 *
 * Indices are wrapped once (idx < 0 -> idx + n) as jnp indexing does, then:
 * JX_INDEX_FILL ("drop", JAX's default for scatters) and JX_INDEX_PROMISE_IN_BOUNDS:
 * updates still outside [0, n) are dropped (JAX passes promise_in_bounds to XLA's
 * scatter, which skips out-of-range updates); JX_INDEX_CLIP clamps them into range.
 * add: one scatter_add of the (masked) updates -- exact.
 * set: the last occurrence of a duplicated index wins (what XLA on CPU does; JAX calls
 *   it unspecified). The winners are the last of each run of equal positions after a
 *   stable sort of the m indices (O(m log m); it was an m x m comparison: 100,000
 *   indices asked for 40 GB), each winner's update number is scattered, and y gathered
 *   from it: values are copied bit for bit and the gradient reaches only the winning
 *   update.
 * mul / min / max: an O(n*m) one-hot reduction of the updates per position. min / max
 *   of floats differentiate as JAX's scatter_min/max JVP: a position's tangent is the
 *   average of those of the updates equal to the result and, if it kept its value, of
 *   x's (ties among x and k updates: 1/(k+1) each). */
#include "core/shape.h"
#include "lib/numpy/np.h"

typedef enum AtOp { AT_ADD, AT_SET, AT_MUL, AT_MIN, AT_MAX } AtOp;

static jx_array *cshape(double v, jx_dtype d, int nd, const int64_t *shape) {
  jx_array *c = np_constant(v, d);
  int none[1] = {0};
  if (!c || nd == 0) return c;
  return prim_broadcast_in_dim(c, nd, shape, none);
}

/* v - stop_gradient(v) where v is finite (exactly +0 in value, tangent -dv), else 0 */
static jx_array *tangent_part(jx_array *v) {
  jx_array *d = prim_binary(PRIM_sub, prim_unary(PRIM_stop_gradient, v), v);
  jx_array *z = d ? cshape(0, d->dtype, d->ndim, d->shape) : NULL;
  return prim_select(prim_binary(PRIM_eq, d, z), d, z);
}

/* r (x's min/max with the updates yw, hb: which update writes which position, both of
 * the one-hot shape ws) with JAX's scatter-extremal tangents: the same value (r minus a
 * sum of +0s), the tangent the average over the contributors equal to r. */
static jx_array *extremal_tangents(jx_array *r, jx_array *x, jx_array *yw, jx_array *hb, int bnd,
                                   const int64_t *ws, const int *xdims, const bool *red) {
  jx_dtype d = x->dtype;
  jx_array *rw = prim_broadcast_in_dim(r, bnd, ws, xdims);
  jx_array *ty = prim_binary(PRIM_and, hb, prim_binary(PRIM_eq, yw, rw)); /* successful updates */
  jx_array *tx = prim_binary(PRIM_eq, x, r);                              /* x kept */
  jx_array *txf = prim_convert(tx, d, false), *tyf = prim_convert(ty, d, false);
  jx_array *k = prim_binary(PRIM_add, txf, prim_reduce(PRIM_reduce_sum, tyf, red));
  k = prim_binary(PRIM_max, k, cshape(1, d, x->ndim, x->shape)); /* NaN results: no one */
  jx_array *cx = prim_binary(PRIM_div, txf, k);
  jx_array *cy = prim_binary(PRIM_div, tyf, prim_broadcast_in_dim(k, bnd, ws, xdims));
  jx_array *total = prim_binary(PRIM_add, prim_binary(PRIM_mul, cx, tangent_part(x)),
                                prim_reduce(PRIM_reduce_sum, prim_binary(PRIM_mul, cy, tangent_part(yw)), red));
  return prim_binary(PRIM_sub, prim_unary(PRIM_stop_gradient, r), total);
}

static jx_array *at_impl(const char *fn, AtOp op, jx_array *x0, jx_array *idx, jx_array *y,
                         int axis, jx_index_mode mode) {
  /* _scatter_impl: x and y promote together, the result goes back to x's dtype below */
  bool pweak;
  jx_dtype pd = np_result_type(2, (jx_array *[]){x0, y}, &pweak);
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  if (pd == JX_BOOL && (op == AT_ADD || op == AT_MUL)) {
    /* scatter_add / scatter_mul take no bool (JAX: "add does not accept dtype bool");
     * a bool x with numeric updates computes in their dtype and converts back */
    error_set(JX_ERR_DTYPE, "%s: %s does not accept dtype bool (x %s, y %s); accepted are "
              "integer, floating and complex dtypes", fn, op == AT_ADD ? "add" : "mul",
              array_describe(b0, x0), array_describe(b1, y));
    return NULL;
  }
  jx_array *x = np_convert(x0, pd, pweak);
  if (!x) return NULL;
  if (x->ndim == 0) {
    error_set(JX_ERR_SHAPE, "%s: cannot index a 0-d array %s", fn, array_describe(b0, x0));
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, x->ndim)) return NULL;
  int gnd = x->ndim - 1 + idx->ndim;
  if (gnd > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: indices %s give a result of rank > %d", fn,
              array_describe(b1, idx), JX_MAX_NDIM);
    return NULL;
  }
  /* the gathered shape x.shape[:axis] + idx.shape + x.shape[axis+1:] */
  int64_t gs[JX_MAX_NDIM], ys[JX_MAX_NDIM], ws[JX_MAX_NDIM];
  int nd = x->ndim, k = 0;
  for (int d = 0; d < axis; d++) gs[k++] = x->shape[d];
  for (int d = 0; d < idx->ndim; d++) gs[k++] = idx->shape[d];
  for (int d = axis + 1; d < nd; d++) gs[k++] = x->shape[d];
  int64_t n = x->shape[axis], m = shape_numel(idx->ndim, idx->shape);
  jx_array *yc = np_convert(y, pd, pweak);
  jx_array *yb = yc ? np_broadcast_to(fn, yc, gnd, gs) : NULL;
  if (!yb) return NULL;
  if (n == 0 || m == 0 || shape_numel(nd, x->shape) == 0) return jx_ref(x0);
  jx_dtype it = dtype_default_int();
  jx_array *i = np_convert(idx, it, false);
  jx_array *nn = cshape((double)n, it, idx->ndim, idx->shape);
  jx_array *zero = cshape(0, it, idx->ndim, idx->shape);
  i = prim_select(prim_binary(PRIM_lt, i, zero), prim_binary(PRIM_add, i, nn), i);
  jx_array *valid = NULL; /* NULL: every update applies */
  if (mode != JX_INDEX_CLIP)
    valid = prim_binary(PRIM_and, prim_unary(PRIM_not, prim_binary(PRIM_lt, i, zero)),
                        prim_binary(PRIM_lt, i, nn));
  jx_array *ci = prim_binary(PRIM_max, prim_binary(PRIM_min, i,
                             cshape((double)(n - 1), it, idx->ndim, idx->shape)), zero);
  int bd[JX_MAX_NDIM];
  for (int d = 0; d < idx->ndim; d++) bd[d] = axis + d;
  /* y with its index dims flattened to one: x.shape[:axis] + (m,) + x.shape[axis+1:] */
  for (int d = 0; d < nd; d++) ys[d] = d == axis ? m : x->shape[d];
  jx_array *r = NULL;
  if (op == AT_ADD) {
    jx_array *u = yb;
    if (valid)
      u = prim_select(prim_broadcast_in_dim(valid, gnd, gs, bd), u,
                      cshape(0, u->dtype, gnd, gs));
    r = prim_scatter_add(x, ci, u, axis);
  } else if (op == AT_SET) {
    jx_array *ii = prim_reshape(ci, 1, &m);
    /* keys: the position, n for a dropped update; a stable sort keeps equal positions in
     * update order, so the last of each run of a position < n is its winner */
    jx_array *key = valid ? prim_select(prim_reshape(valid, 1, &m), ii, cshape((double)n, it, 1, &m)) : ii;
    jx_array *sorted[2] = {NULL, NULL};
    jx_array *num0 = prim_iota(it, 1, &m, 0);
    if (!key || !num0 || prim_sort_n(2, (jx_array *[]){key, num0}, 0, sorted) != JX_OK) return NULL;
    int64_t one = 1, mend = m + 1;
    jx_array *next = prim_slice(prim_pad(sorted[0], (int64_t[]){0}, (int64_t[]){1}, (double)n + 1), &one, &mend, NULL);
    jx_array *last = prim_binary(PRIM_and, prim_binary(PRIM_ne, sorted[0], next),
                                 prim_binary(PRIM_lt, sorted[0], cshape((double)n, it, 1, &m)));
    /* back in update order (sorted[1] is a permutation: one add a slot) */
    jx_array *wsum = prim_scatter_add(cshape(0, it, 1, &m), sorted[1], prim_convert(last, it, false), 0);
    jx_array *win = prim_binary(PRIM_ne, wsum, cshape(0, it, 1, &m));
    /* jw[p] = 1 + the winning update's number, 0 where none writes */
    jx_array *num = prim_binary(PRIM_add, num0, cshape(1, it, 1, &m));
    jx_array *upd = prim_select(win, num, cshape(0, it, 1, &m));
    jx_array *jw = prim_scatter_add(cshape(0, it, 1, &n), ii, upd, 0);
    jx_array *covered = prim_binary(PRIM_lt, cshape(0, it, 1, &n), jw);
    jx_array *jsel = prim_binary(PRIM_max, prim_binary(PRIM_sub, jw, cshape(1, it, 1, &n)),
                                 cshape(0, it, 1, &n));
    jx_array *g = prim_gather(prim_reshape(yb, nd, ys), jsel, axis);
    r = prim_select(prim_broadcast_in_dim(covered, nd, x->shape, (int[]){axis}), g, x);
  } else {
    /* one-hot over (positions n, updates m) inserted at axis, axis + 1 */
    int64_t hs[2] = {n, m};
    jx_array *ii = prim_reshape(ci, 1, &m);
    jx_array *hit = prim_binary(PRIM_eq, prim_broadcast_in_dim(ii, 2, hs, (int[]){1}),
                                prim_iota(it, 2, hs, 0));
    if (valid)
      hit = prim_binary(PRIM_and, hit,
                        prim_broadcast_in_dim(prim_reshape(valid, 1, &m), 2, hs, (int[]){1}));
    int bnd = nd + 1, ydims[JX_MAX_NDIM], xdims[JX_MAX_NDIM];
    for (int d = 0, e = 0; d < bnd; d++) {
      ws[d] = d < axis ? x->shape[d] : d == axis ? n : d == axis + 1 ? m : x->shape[d - 1];
      if (d != axis) ydims[e++] = d;
    }
    for (int d = 0, e = 0; d < bnd; d++)
      if (d != axis + 1) xdims[e++] = d;
    jx_array *hb = prim_broadcast_in_dim(hit, bnd, ws, (int[]){axis, axis + 1});
    jx_array *yw = prim_broadcast_in_dim(prim_reshape(yb, nd, ys), bnd, ws, ydims);
    bool red[JX_MAX_NDIM] = {false};
    red[axis + 1] = true;
    if (op == AT_MUL) {
      jx_array *f = prim_reduce(PRIM_reduce_prod,
                                prim_select(hb, yw, cshape(1, x->dtype, bnd, ws)), red);
      r = prim_binary(PRIM_mul, x, f);
    } else {
      /* positions nobody writes reduce over x itself: min(x, x) = x */
      jx_array *xw = prim_broadcast_in_dim(x, bnd, ws, xdims);
      if (dtype_is_complex(x->dtype)) {
        /* complex: JAX's lexicographic order (real part, then imaginary), which jnp's
         * min/max and minimum/maximum implement; the reduce primitives take no complex */
        int ax1 = axis + 1;
        jx_array *sel = prim_select(hb, yw, xw);
        jx_array *f = op == AT_MIN ? jx_min(sel, 1, &ax1, false) : jx_max(sel, 1, &ax1, false);
        r = op == AT_MIN ? jx_minimum(x, f) : jx_maximum(x, f);
        if (r && (r->dtype != x0->dtype || r->weak != x0->weak)) r = np_convert(r, x0->dtype, x0->weak);
        return r;
      }
      jx_array *f = prim_reduce(op == AT_MIN ? PRIM_reduce_min : PRIM_reduce_max,
                                prim_select(hb, yw, xw), red);
      r = prim_binary(op == AT_MIN ? PRIM_min : PRIM_max, x, f);
      if (r && dtype_is_floating(x->dtype)) r = extremal_tangents(r, x, yw, hb, bnd, ws, xdims, red);
    }
  }
  if (r && (r->dtype != x0->dtype || r->weak != x0->weak)) r = np_convert(r, x0->dtype, x0->weak);
  return r;
}

static jx_array *at_entry(const char *fn, AtOp op, jx_array *x, jx_array *idx, jx_array *y,
                          int axis, jx_index_mode mode) {
  if (!x || !idx || !y) {
    if (!jx_last_status())
      error_set(JX_ERR_VALUE, "%s: NULL %s", fn, !x ? "x" : !idx ? "idx" : "y");
    return NULL;
  }
  char b[ARRAY_DESCRIBE_BUF];
  if (!dtype_is_integer(idx->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: indices must be integers, got %s", fn,
              array_describe(b, idx));
    return NULL;
  }
  if (mode == JX_INDEX_WRAP) { /* JAX: ValueError 'Unknown gather mode "wrap"' */
    error_set(JX_ERR_VALUE, "%s: mode wrap is jnp.take's only (JAX's scatter has no wrap mode)", fn);
    return NULL;
  }
  if ((int)mode < 0 || mode > JX_INDEX_PROMISE_IN_BOUNDS) {
    error_set(JX_ERR_VALUE, "%s: unknown index mode %d", fn, (int)mode);
    return NULL;
  }
  jx_scope_begin();
  jx_array *r = at_impl(fn, op, x, idx, y, axis, mode);
  jx_scope_end(r ? 1 : 0, &r);
  return r;
}

jx_array *jx_at_add(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode) {
  return at_entry("jx_at_add", AT_ADD, x, idx, y, axis, mode);
}
jx_array *jx_at_set(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode) {
  return at_entry("jx_at_set", AT_SET, x, idx, y, axis, mode);
}
jx_array *jx_at_mul(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode) {
  return at_entry("jx_at_mul", AT_MUL, x, idx, y, axis, mode);
}
jx_array *jx_at_min(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode) {
  return at_entry("jx_at_min", AT_MIN, x, idx, y, axis, mode);
}
jx_array *jx_at_max(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode) {
  return at_entry("jx_at_max", AT_MAX, x, idx, y, axis, mode);
}
