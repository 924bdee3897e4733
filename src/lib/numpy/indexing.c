/* indexing.c -- NumPy/JAX indexing with a whole index expression: x[idx] (jx_getitem) and
 * x.at[idx].get/set/add/mul/min/max (jx_at_index_*), after jax/_src/numpy/indexing.py
 * (NDIndexer, rewriting_take, _index_to_gather) and jax/_src/ops/scatter.py.
 *
 * An expression is planned once (plan_build): bool masks become their nonzero()
 * coordinate arrays, the ellipsis full slices, and the result shape S is laid out as
 * _index_to_gather lays it out (the broadcast shape B of the advanced indices in place of
 * the first of them when they are adjacent, else first). Then
 *   - without advanced indices, x[idx] is a view: jx_slice, a dynamic slice (gather) per
 *     0-d index array, one reshape (ints squeezed, newaxes added);
 *   - otherwise, and for every x.at[idx] update, the flat position in x of each element
 *     of S is computed (plan_positions: the sum over x's axes of coordinate * stride) and
 *     x[idx] is one gather from x flattened; an update is the one-axis jx_at_* on x
 *     flattened at those positions, out-of-range ones sent past the end to be dropped.
 * Everything is primitives and public ops, so grad, vmap and jit apply unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"
#include "lib/numpy/np.h"
#include "transform/jvp.h"

/* Entries of one expression after masks are expanded (each mask of k dims becomes k
 * integer arrays) and the ellipsis is replaced by full slices. */
#define MAX_ENTRIES (8 * JX_MAX_NDIM)

typedef enum EKind { E_INT, E_ARRAY, E_BOOL0, E_SLICE, E_NEWAXIS, E_ELLIPSIS } EKind;

typedef struct Entry {
  EKind kind;
  int64_t i;                 /* E_INT: as given */
  int64_t start, stop, step; /* E_SLICE */
  jx_array *a;               /* E_ARRAY: integer indices (borrowed, or the plan's) */
  bool b;                    /* E_BOOL0: its value */
  int axis;                  /* x axis it consumes (E_INT, E_ARRAY, E_SLICE), else -1 */
  int sdim;                  /* E_SLICE, E_NEWAXIS: its dim of S */
  int64_t first, count;      /* E_SLICE: slice.indices */
} Entry;

typedef struct Plan {
  Entry e[MAX_ENTRIES];
  int ne;
  bool advanced;             /* advanced indexing (a >= 1-d index array or a bool) */
  int nb;                    /* B: the advanced indices' broadcast shape ... */
  int64_t b[JX_MAX_NDIM];
  int bpos;                  /* ... at dims bpos .. bpos + nb - 1 of S */
  int nd;                    /* S: the shape of x[idx] */
  int64_t s[JX_MAX_NDIM];
  jx_dtype it;               /* index dtype: int32 (int64 for > 2^31 - 1 elements, x64) */
} Plan;

static bool is_adv(EKind k) { return k == E_INT || k == E_ARRAY || k == E_BOOL0; }

/* NumPy broadcast of shape (nd, sh) into (nb, b) (b starts as the empty shape). */
static bool bcast_into(const char *fn, int *nb, int64_t *b, int nd, const int64_t *sh) {
  if (nd > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "%s: index arrays of rank %d exceed %d", fn, nd, JX_MAX_NDIM);
    return false;
  }
  int n = nd > *nb ? nd : *nb;
  int64_t r[JX_MAX_NDIM];
  for (int d = 0; d < n; d++) {
    int da = d - (n - *nb), db = d - (n - nd);
    int64_t x = da >= 0 ? b[da] : 1, y = db >= 0 ? sh[db] : 1;
    if (x != y && x != 1 && y != 1) {
      error_set(JX_ERR_SHAPE, "%s: index arrays do not broadcast together (a dim %lld "
                "against %lld)", fn, (long long)x, (long long)y);
      return false;
    }
    r[d] = x == 1 ? y : x;
  }
  *nb = n;
  memcpy(b, r, sizeof(int64_t) * (size_t)n);
  return true;
}

/* The concrete value of a bool index (a mask or a 0-d bool), or NULL + JX_ERR_VALUE:
 * JAX's NonConcreteBooleanIndexError. Under grad the primal is concrete, as in JAX. */
static jx_array *concrete_bool(const char *fn, jx_array *a, int k) {
  jx_array *c = jvp_concrete_value(a);
  if (!c) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_VALUE, "%s: boolean index %d (%s) must be concrete: under jit or vmap "
              "its nonzero() has no static shape (JAX's NonConcreteBooleanIndexError); use "
              "jx_where, or jx_nonzero with a size", fn, k, array_describe(b, a));
  }
  return c;
}

/* Parses idx against x into p (JAX's _parse_indices, expand_bool_indices,
 * expand_ellipses) and lays out S (_index_to_gather). */
static bool plan_build(const char *fn, jx_array *x, int n, const jx_index *idx, Plan *p) {
  memset(p, 0, sizeof *p);
  if (np_null_arg(fn, x, "x")) return false;
  if (n < 0 || (n > 0 && !idx)) {
    error_set(JX_ERR_VALUE, "%s: %s", fn, n < 0 ? "negative entry count" : "idx is NULL");
    return false;
  }
  if (n > MAX_ENTRIES) {
    error_set(JX_ERR_SHAPE, "%s: %d index entries (at most %d)", fn, n, MAX_ENTRIES);
    return false;
  }
  char b0[ARRAY_DESCRIBE_BUF];
  /* 1. kinds and dtypes, consumed axes, one ellipsis */
  int consumed = 0, nell = 0;
  for (int k = 0; k < n; k++) {
    const jx_index *q = &idx[k];
    switch (q->kind) {
    case JX_IDX_INT: consumed++; break;
    case JX_IDX_SLICE:
      if (q->step == 0) {
        error_set(JX_ERR_VALUE, "%s: slice step cannot be zero (entry %d)", fn, k);
        return false;
      }
      consumed++;
      break;
    case JX_IDX_NEWAXIS: break;
    case JX_IDX_ELLIPSIS: nell++; break;
    case JX_IDX_ARRAY:
      if (!q->array) {
        if (!jx_last_status()) error_set(JX_ERR_VALUE, "%s: entry %d is an array entry without its array", fn, k);
        return false;
      }
      if (dtype_is_bool(q->array->dtype)) consumed += q->array->ndim;
      else if (dtype_is_integer(q->array->dtype)) consumed++;
      else {
        error_set(JX_ERR_DTYPE, "%s: indexer must have integer or boolean type, got %s "
                  "(entry %d)", fn, array_describe(b0, q->array), k);
        return false;
      }
      break;
    default:
      error_set(JX_ERR_VALUE, "%s: unknown index kind %d (entry %d)", fn, (int)q->kind, k);
      return false;
    }
  }
  if (nell > 1) {
    error_set(JX_ERR_VALUE, "%s: an index can only have a single ellipsis ('...')", fn);
    return false;
  }
  if (consumed > x->ndim) {
    error_set(JX_ERR_SHAPE, "%s: too many indices: array %s is %d-dimensional, but %d were "
              "indexed", fn, array_describe(b0, x), x->ndim, consumed);
    return false;
  }
  /* 2. masks -> their nonzero() coordinates; axes assigned (the ellipsis takes the rest) */
  Entry pre[MAX_ENTRIES];
  int npre = 0, axis = 0;
  for (int k = 0; k < n; k++) {
    const jx_index *q = &idx[k];
    Entry e = {.axis = -1, .sdim = -1};
    if (q->kind == JX_IDX_ARRAY && dtype_is_bool(q->array->dtype)) {
      jx_array *m = concrete_bool(fn, q->array, k);
      if (!m) return false;
      if (m->ndim == 0) {
        e.kind = E_BOOL0;
        e.b = jx_item(m) != 0;
        pre[npre++] = e;
        continue;
      }
      for (int d = 0; d < m->ndim; d++)
        if (m->shape[d] != 0 && m->shape[d] != x->shape[axis + d]) {
          char b1[ARRAY_DESCRIBE_BUF];
          error_set(JX_ERR_SHAPE, "%s: boolean index did not match shape of indexed array in "
                    "index %d: got %s for axes %d.. of %s", fn, k, array_describe(b0, m), axis,
                    array_describe(b1, x));
          return false;
        }
      jx_array *coords[JX_MAX_NDIM];
      if (npre + m->ndim > MAX_ENTRIES) {
        error_set(JX_ERR_SHAPE, "%s: too many index entries after expanding masks", fn);
        return false;
      }
      if (jx_nonzero(m, -1, NULL, coords) != JX_OK) return false;
      for (int d = 0; d < m->ndim; d++)
        pre[npre++] = (Entry){.kind = E_ARRAY, .a = coords[d], .axis = axis++, .sdim = -1};
      continue;
    }
    switch (q->kind) {
    case JX_IDX_INT: e.kind = E_INT; e.i = q->i; e.axis = axis++; break;
    case JX_IDX_SLICE:
      e.kind = E_SLICE; e.start = q->start; e.stop = q->stop; e.step = q->step;
      e.axis = axis++;
      break;
    case JX_IDX_NEWAXIS: e.kind = E_NEWAXIS; break;
    case JX_IDX_ELLIPSIS: e.kind = E_ELLIPSIS; e.i = x->ndim - consumed; axis += (int)e.i; break;
    default: e.kind = E_ARRAY; e.a = q->array; e.axis = axis++; break;
    }
    if (npre >= MAX_ENTRIES) {
      error_set(JX_ERR_SHAPE, "%s: too many index entries after expanding masks", fn);
      return false;
    }
    pre[npre++] = e;
  }
  /* 3. advanced indexing? (_index_to_gather: is_advanced_int_indexer, after 0-d bools
   * became aranges); are the int / integer-array entries adjacent? -- counted before the
   * ellipsis is expanded, with newaxes, and without 0-d bools, as JAX does */
  bool contiguous = true;
  int last = -1;
  for (int k = 0; k < npre; k++) {
    if (pre[k].kind == E_BOOL0 || (pre[k].kind == E_ARRAY && pre[k].a->ndim > 0)) p->advanced = true;
    if (pre[k].kind == E_INT || pre[k].kind == E_ARRAY) {
      if (last >= 0 && k != last + 1) contiguous = false;
      last = k;
    }
  }
  /* 4. the ellipsis and the missing trailing entries become full slices */
  for (int k = 0; k < npre; k++) {
    if (pre[k].kind == E_ELLIPSIS) {
      int ax = 0;
      for (int j = 0; j < k; j++)
        if (pre[j].axis >= 0) ax = pre[j].axis + 1;
      for (int64_t j = 0; j < pre[k].i; j++) {
        if (p->ne >= MAX_ENTRIES) goto too_many;
        p->e[p->ne++] = (Entry){.kind = E_SLICE, .start = JX_SLICE_END, .stop = JX_SLICE_END,
                                .step = 1, .axis = ax + (int)j, .sdim = -1};
      }
    } else {
      p->e[p->ne++] = pre[k];
    }
  }
  for (int ax = axis; ax < x->ndim; ax++) {
    if (p->ne >= MAX_ENTRIES) goto too_many;
    p->e[p->ne++] = (Entry){.kind = E_SLICE, .start = JX_SLICE_END, .stop = JX_SLICE_END,
                            .step = 1, .axis = ax, .sdim = -1};
  }
  /* 5. B, and S laid out entry by entry */
  if (p->advanced)
    for (int k = 0; k < p->ne; k++) {
      Entry *e = &p->e[k];
      int64_t one = e->b ? 1 : 0;
      if (e->kind == E_ARRAY && !bcast_into(fn, &p->nb, p->b, e->a->ndim, e->a->shape)) return false;
      if (e->kind == E_BOOL0 && !bcast_into(fn, &p->nb, p->b, 1, &one)) return false;
    }
  int first_adv = -1;
  for (int k = 0; k < p->ne && first_adv < 0; k++)
    if (is_adv(p->e[k].kind)) first_adv = k;
  int nd = 0;
  for (int k = 0; k < p->ne; k++) {
    Entry *e = &p->e[k];
    if (p->advanced && ((contiguous && k == first_adv) || (!contiguous && k == 0))) {
      if (nd + p->nb > JX_MAX_NDIM) goto rank;
      p->bpos = nd;
      for (int d = 0; d < p->nb; d++) p->s[nd++] = p->b[d];
    }
    if (e->kind == E_SLICE) {
      if (nd >= JX_MAX_NDIM) goto rank;
      e->count = movement_slice_adjust(x->shape[e->axis], e->start, e->stop, e->step, &e->first);
      e->sdim = nd;
      p->s[nd++] = e->count;
    } else if (e->kind == E_NEWAXIS) {
      if (nd >= JX_MAX_NDIM) goto rank;
      e->sdim = nd;
      p->s[nd++] = 1;
    }
  }
  p->nd = nd;
  /* 6. indexing an empty axis: an error for a basic int (JAX's IndexError), and for an
   * advanced index unless the result is empty (XLA's gather refuses the slice size) */
  bool empty = shape_numel(nd, p->s) == 0;
  for (int k = 0; k < p->ne; k++) {
    Entry *e = &p->e[k];
    if ((e->kind == E_INT || e->kind == E_ARRAY) && x->shape[e->axis] == 0 &&
        (!p->advanced || !empty)) {
      error_set(JX_ERR_SHAPE, "%s: index is out of bounds for axis %d with size 0 (x %s)", fn,
                e->axis, array_describe(b0, x));
      return false;
    }
  }
  int64_t numel = shape_numel(x->ndim, x->shape);
  p->it = JX_INT32;
  if (numel > INT32_MAX) {
    if (!jx_config_x64_enabled()) {
      error_set(JX_ERR_UNSUPPORTED, "%s: x %s has more than 2^31 - 1 elements: enable x64", fn,
                array_describe(b0, x));
      return false;
    }
    p->it = JX_INT64;
  }
  return true;
too_many:
  error_set(JX_ERR_SHAPE, "%s: too many index entries", fn);
  return false;
rank:
  error_set(JX_ERR_SHAPE, "%s: the result's rank exceeds %d", fn, JX_MAX_NDIM);
  return false;
}

/* ---------------------------------------------------------------- coordinates */

static jx_array *iconst(const Plan *p, int64_t v) { return np_constant((double)v, p->it); }

/* The index array a for an axis of size n as JAX normalizes it (normalize_indices, then
 * the conversion to the index dtype): negatives of a signed dtype + n once (int8/int16
 * widened first: JAX raises OverflowError where n does not fit them), then converted to
 * the index dtype (wrapping, as XLA: a uint32 >= 2^31 turns negative). *valid: in
 * [0, n); the result is clamped into it. */
static jx_array *index_norm(const Plan *p, jx_array *a, int64_t n, jx_array **valid) {
  jx_array *i = a;
  if (dtype_bits(i->dtype) < 32) i = np_convert(i, JX_INT32, false);
  if (i && dtype_is_signed(a->dtype)) {
    jx_array *z = np_constant(0, i->dtype), *nn = np_constant((double)n, i->dtype);
    int64_t *sh = i->shape;
    int zero[1] = {0};
    if (i->ndim) {
      z = prim_broadcast_in_dim(z, i->ndim, sh, zero);
      nn = prim_broadcast_in_dim(nn, i->ndim, sh, zero);
    }
    i = prim_select(prim_binary(PRIM_lt, i, z), prim_binary(PRIM_add, i, nn), i);
  }
  i = np_convert(i, p->it, false);
  if (!i) return NULL;
  int zero[1] = {0};
  jx_array *z = iconst(p, 0), *nn = iconst(p, n), *top = iconst(p, n - 1);
  if (i->ndim) {
    z = prim_broadcast_in_dim(z, i->ndim, i->shape, zero);
    nn = prim_broadcast_in_dim(nn, i->ndim, i->shape, zero);
    top = prim_broadcast_in_dim(top, i->ndim, i->shape, zero);
  }
  if (valid)
    *valid = prim_binary(PRIM_and, prim_unary(PRIM_not, prim_binary(PRIM_lt, i, z)),
                         prim_binary(PRIM_lt, i, nn));
  return prim_binary(PRIM_max, prim_binary(PRIM_min, i, top), z);
}

/* a (rank k <= nb, NumPy-aligned to B) broadcast into S at B's dims. */
static jx_array *b_into_s(const Plan *p, jx_array *a) {
  if (!a) return NULL;
  int dims[JX_MAX_NDIM];
  for (int j = 0; j < a->ndim; j++) dims[j] = p->bpos + p->nb - a->ndim + j;
  return prim_broadcast_in_dim(a, p->nd, p->s, dims);
}

static jx_array *and_opt(jx_array *v, jx_array *w) { return v ? prim_binary(PRIM_and, v, w) : w; }

/* The flat position in x of every element of x[idx] (shape S, index dtype, each
 * coordinate clamped into its axis) and, where an index may be out of range, *valid
 * (bool, S; NULL when every index is in range, which slices always are). */
static jx_array *plan_positions(const Plan *p, jx_array *x, jx_array **valid) {
  int64_t stride[JX_MAX_NDIM];
  int64_t st = 1;
  for (int d = x->ndim - 1; d >= 0; d--) {
    stride[d] = st;
    st *= x->shape[d];
  }
  int zero[1] = {0};
  jx_array *pos = prim_broadcast_in_dim(iconst(p, 0), p->nd, p->s, zero), *ok = NULL;
  bool all_ok = true; /* static ints in range */
  for (int k = 0; k < p->ne; k++) {
    const Entry *e = &p->e[k];
    jx_array *c = NULL, *v = NULL;
    if (e->kind == E_SLICE) {
      jx_array *io = prim_iota(p->it, 1, &e->count, 0);
      c = prim_binary(PRIM_add, prim_binary(PRIM_mul, io, prim_broadcast_in_dim(iconst(p, e->step), 1, &e->count, zero)),
                      prim_broadcast_in_dim(iconst(p, e->first), 1, &e->count, zero));
      c = prim_broadcast_in_dim(c, p->nd, p->s, (int[]){e->sdim});
    } else if (e->kind == E_INT) {
      int64_t n = x->shape[e->axis], i = e->i < 0 ? e->i + n : e->i;
      all_ok = all_ok && i >= 0 && i < n;
      c = prim_broadcast_in_dim(iconst(p, i < 0 ? 0 : i >= n ? n - 1 : i), p->nd, p->s, zero);
    } else if (e->kind == E_ARRAY) {
      c = b_into_s(p, index_norm(p, e->a, x->shape[e->axis], &v));
      v = b_into_s(p, v);
      ok = and_opt(ok, v);
    } else {
      continue; /* newaxis; a 0-d bool's axis has size 1: coordinate 0 */
    }
    jx_array *sc = prim_broadcast_in_dim(iconst(p, stride[e->axis]), p->nd, p->s, zero);
    pos = prim_binary(PRIM_add, pos, prim_binary(PRIM_mul, c, sc));
  }
  if (!all_ok) ok = np_full(0, JX_BOOL, p->nd, p->s);
  if (valid) *valid = ok;
  return pos;
}

/* x[idx] without advanced indices: a view (and a gather per 0-d index array). */
static jx_array *basic_take(const Plan *p, jx_array *x, jx_array **valid) {
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM], st[JX_MAX_NDIM];
  jx_array *ok = NULL;
  bool all_ok = true;
  for (int d = 0; d < x->ndim; d++) lo[d] = hi[d] = JX_SLICE_END, st[d] = 1;
  for (int k = 0; k < p->ne; k++) {
    const Entry *e = &p->e[k];
    int64_t n = e->axis >= 0 ? x->shape[e->axis] : 0;
    if (e->kind == E_SLICE) {
      lo[e->axis] = e->start, hi[e->axis] = e->stop, st[e->axis] = e->step;
    } else if (e->kind == E_INT) {
      int64_t i = e->i < 0 ? e->i + n : e->i;
      all_ok = all_ok && i >= 0 && i < n;
      i = i < 0 ? 0 : i >= n ? n - 1 : i;
      lo[e->axis] = i, hi[e->axis] = i + 1;
    }
  }
  jx_array *y = jx_slice(x, x->ndim, lo, hi, st);
  for (int k = p->ne - 1; k >= 0 && y; k--) { /* last axis first: the others keep their number */
    const Entry *e = &p->e[k];
    if (e->kind != E_ARRAY) continue;
    jx_array *v = NULL;
    y = prim_gather(y, index_norm(p, e->a, x->shape[e->axis], valid ? &v : NULL), e->axis);
    if (valid) ok = and_opt(ok, v);
  }
  if (!all_ok) ok = np_constant(0, JX_BOOL);
  if (valid && ok) {
    int zero[1] = {0};
    ok = prim_broadcast_in_dim(ok, p->nd, p->s, zero);
  }
  if (valid) *valid = ok;
  return y ? prim_reshape(y, p->nd, p->s) : NULL;
}

/* x[idx] with each index clamped into its axis; *valid (may be NULL) as plan_positions.
 * In mode PROMISE_IN_BOUNDS an advanced index out of range passes no gradient: JAX's
 * gather clamps it, but the transpose, a scatter-add in the same mode, drops it (XLA's
 * scatter skips out-of-range updates); a basic index is a (dynamic) slice in JAX, whose
 * transpose pads: the gradient reaches the clamped element. */
static jx_array *plan_take(const Plan *p, jx_array *x, jx_index_mode mode, jx_array **valid) {
  if (valid) *valid = NULL;
  if (shape_numel(p->nd, p->s) == 0) return np_full(0, x->dtype, p->nd, p->s);
  if (!p->advanced) return basic_take(p, x, valid);
  int64_t numel = shape_numel(x->ndim, x->shape);
  jx_array *ok = NULL;
  bool need = valid || mode == JX_INDEX_PROMISE_IN_BOUNDS;
  jx_array *g = prim_gather(prim_reshape(x, 1, &numel), plan_positions(p, x, need ? &ok : NULL), 0);
  if (g && ok && mode == JX_INDEX_PROMISE_IN_BOUNDS)
    g = prim_select(ok, g, prim_unary(PRIM_stop_gradient, g));
  if (valid) *valid = ok;
  return g;
}

/* ------------------------------------------------------------------------ API */

jx_index jx_idx_int(int64_t i) { return (jx_index){.kind = JX_IDX_INT, .i = i}; }
jx_index jx_idx_slice(int64_t start, int64_t stop, int64_t step) {
  return (jx_index){.kind = JX_IDX_SLICE, .start = start, .stop = stop, .step = step};
}
jx_index jx_idx_all(void) { return jx_idx_slice(JX_SLICE_END, JX_SLICE_END, 1); }
jx_index jx_idx_newaxis(void) { return (jx_index){.kind = JX_IDX_NEWAXIS}; }
jx_index jx_idx_ellipsis(void) { return (jx_index){.kind = JX_IDX_ELLIPSIS}; }
jx_index jx_idx_array(jx_array *a) { return (jx_index){.kind = JX_IDX_ARRAY, .array = a}; }

/* Plans are large (MAX_ENTRIES entries): one per call, off the stack. */
static Plan *plan_new(const char *fn) {
  Plan *p = malloc(sizeof *p);
  if (!p) error_set(JX_ERR_OOM, "%s: out of memory", fn);
  return p;
}

/* The gather/scatter modes: FILL, CLIP, PROMISE_IN_BOUNDS (JAX's gather and scatter have
 * no wrap mode: JX_INDEX_WRAP is jnp.take's only). */
static bool mode_ok(const char *fn, jx_index_mode mode) {
  if (mode == JX_INDEX_WRAP) {
    error_set(JX_ERR_VALUE, "%s: mode JX_INDEX_WRAP is jnp.take's only (JAX: Unknown gather mode \"wrap\")", fn);
    return false;
  }
  if ((int)mode < 0 || mode > JX_INDEX_PROMISE_IN_BOUNDS) {
    error_set(JX_ERR_VALUE, "%s: unknown index mode %d", fn, (int)mode);
    return false;
  }
  return true;
}

static jx_array *get_entry(const char *fn, jx_array *x, int n, const jx_index *idx,
                           jx_index_mode mode, double fill) {
  if (!mode_ok(fn, mode)) return NULL;
  Plan *p = plan_new(fn);
  if (!p) return NULL;
  jx_scope_begin();
  jx_array *r = NULL, *valid = NULL;
  if (plan_build(fn, x, n, idx, p)) {
    r = plan_take(p, x, mode, mode == JX_INDEX_FILL ? &valid : NULL);
    if (r && valid) {
      /* jnp's default fill (indexing.py: _take's), else fill_value in x's dtype */
      double f = !isnan(fill) ? fill
                 : dtype_is_inexact(x->dtype) ? NAN
                 : dtype_is_bool(x->dtype)    ? 1
                 : dtype_is_unsigned(x->dtype) ? dtype_max_value(x->dtype)
                                               : dtype_min_value(x->dtype);
      r = prim_select(valid, r, np_full(f, x->dtype, p->nd, p->s));
    }
    if (r) r = np_convert(r, x->dtype, x->weak);
  }
  free(p);
  return np_scope_return(r);
}

jx_array *jx_getitem(jx_array *x, int n, const jx_index *idx) {
  return get_entry("jx_getitem", x, n, idx, JX_INDEX_PROMISE_IN_BOUNDS, NAN);
}

jx_array *jx_at_index_get(jx_array *x, int n, const jx_index *idx, jx_index_mode mode,
                          double fill_value) {
  return get_entry("jx_at_index_get", x, n, idx, mode, fill_value);
}

typedef jx_array *(*AtFn)(jx_array *, jx_array *, jx_array *, int, jx_index_mode);

static jx_array *update_entry(const char *fn, AtFn op, jx_array *x, int n, const jx_index *idx,
                              jx_array *y, jx_index_mode mode) {
  if (np_null_arg(fn, x, "x") || np_null_arg(fn, y, "y")) return NULL;
  if (!mode_ok(fn, mode)) return NULL;
  Plan *p = plan_new(fn);
  if (!p) return NULL;
  jx_scope_begin();
  jx_array *r = NULL;
  if (plan_build(fn, x, n, idx, p)) {
    int64_t m = shape_numel(p->nd, p->s), numel = shape_numel(x->ndim, x->shape);
    if (m == 0) {
      r = jx_ref(x); /* _scatter_impl: an empty slice returns x, y unchecked */
    } else {
      jx_array *yb = np_broadcast_to(fn, y, p->nd, p->s), *valid = NULL;
      jx_array *pos = yb ? plan_positions(p, x, mode == JX_INDEX_CLIP ? NULL : &valid) : NULL;
      /* dropped updates go past the end, where jx_at_*'s own drop mode ignores them */
      if (pos && valid) pos = prim_select(valid, pos, np_full((double)numel, p->it, p->nd, p->s));
      if (pos) {
        r = op(prim_reshape(x, 1, &numel), prim_reshape(pos, 1, &m), prim_reshape(yb, 1, &m), 0,
               JX_INDEX_FILL);
        if (r) r = prim_reshape(r, x->ndim, x->shape);
      }
    }
  }
  free(p);
  return np_scope_return(r);
}

jx_array *jx_at_index_set(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode) {
  return update_entry("jx_at_index_set", jx_at_set, x, n, idx, y, mode);
}
jx_array *jx_at_index_add(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode) {
  return update_entry("jx_at_index_add", jx_at_add, x, n, idx, y, mode);
}
jx_array *jx_at_index_mul(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode) {
  return update_entry("jx_at_index_mul", jx_at_mul, x, n, idx, y, mode);
}
jx_array *jx_at_index_min(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode) {
  return update_entry("jx_at_index_min", jx_at_min, x, n, idx, y, mode);
}
jx_array *jx_at_index_max(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode) {
  return update_entry("jx_at_index_max", jx_at_max, x, n, idx, y, mode);
}
