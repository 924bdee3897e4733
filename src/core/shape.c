/* shape.c -- the shape tracker (see shape.h): movement ops as edits of the top View,
 * a new View only when a reshape cannot be expressed on the top one. The lowering of
 * views to index expressions is src/ir/shape.c.
 * The design follows tinygrad's shape/view.py (canonical views, mask arithmetic,
 * reshape by merging dims); the code is written from those ideas, not copied. */
#include "core/shape.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buffer.h"
#include "core/error.h"

/* ------------------------------------------------------------- allocation */

static ShapeTracker *tracker_alloc(int nviews) {
  ShapeTracker *st = mem_zalloc(sizeof(ShapeTracker) + (size_t)nviews * sizeof(View));
  if (!st) {
    error_set(JX_ERR_OOM, "shape tracker: out of memory allocating %d views", nviews);
    return NULL;
  }
  st->nviews = nviews;
  return st;
}

/* A tracker of st's views [0, nkeep) with *top added above them (st unchanged). */
static ShapeTracker *tracker_build(const ShapeTracker *st, int nkeep, const View *top) {
  ShapeTracker *out = tracker_alloc(nkeep + 1);
  if (!out) return NULL;
  memcpy(out->views, st->views, (size_t)nkeep * sizeof(View));
  out->views[nkeep] = *top;
  return out;
}

/* A copy of st with its top view replaced by *top: what every op but reshape returns. */
static ShapeTracker *tracker_with_top(const ShapeTracker *st, const View *top) {
  return tracker_build(st, st->nviews - 1, top);
}

/* ---------------------------------------------------------------- numbers */

int64_t shape_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  return n;
}

int64_t shape_numel_checked(int ndim, const int64_t *shape) {
  /* A zero dim makes the product 0 even if a prefix would overflow, so look for
   * negatives and zeros first. */
  for (int d = 0; d < ndim; d++)
    if (shape[d] < 0) return -1;
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0) return 0;
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    if (n > INT64_MAX / shape[d]) return -1;
    n *= shape[d];
  }
  return n;
}

/* Floor division for a positive divisor (C's `/` truncates toward zero). */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

/* ------------------------------------------------------------------ views */

static void view_contiguous(View *v, int ndim, const int64_t *shape) {
  memset(v, 0, sizeof *v);
  v->ndim = ndim;
  int64_t acc = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    v->shape[d] = shape[d];
    v->strides[d] = shape[d] == 1 ? 0 : acc;
    /* an empty array's strides are never used; keep them defined when the other
     * dims' product overflows */
    if (__builtin_mul_overflow(acc, shape[d], &acc)) acc = 0;
  }
}

bool shape_view_empty(const View *v) {
  if (!v->masked) return false;
  for (int d = 0; d < v->ndim; d++)
    if (v->mask_lo[d] >= v->mask_hi[d]) return true;
  return false;
}

/* Brings a view to its canonical form, so equal mappings compare equal and reshape
 * sees the simplest strides (tinygrad's View.create does the same normalization):
 *  - a mask with an empty dim makes every element invalid: strides 0, offset 0, all
 *    mask ranges [0,0);
 *  - a dim whose valid range holds one element gets stride 0 and that element's
 *    contribution moves into the offset (size-1 dims are the unmasked case);
 *  - a mask that covers the whole shape is dropped;
 *  - entries past ndim, and the mask arrays of an unmasked view, are zero. */
static void view_canon(View *v) {
  for (int d = v->ndim; d < JX_MAX_NDIM; d++)
    v->shape[d] = v->strides[d] = v->mask_lo[d] = v->mask_hi[d] = 0;
  if (shape_view_empty(v)) {
    v->offset = 0;
    for (int d = 0; d < v->ndim; d++) v->strides[d] = v->mask_lo[d] = v->mask_hi[d] = 0;
    return;
  }
  if (!v->masked) {
    for (int d = 0; d < v->ndim; d++) {
      v->mask_lo[d] = v->mask_hi[d] = 0;
      if (v->shape[d] == 1) v->strides[d] = 0;
    }
    return;
  }
  bool full = true;
  for (int d = 0; d < v->ndim; d++) {
    if (v->mask_hi[d] - v->mask_lo[d] == 1) {
      v->offset += v->mask_lo[d] * v->strides[d];
      v->strides[d] = 0;
    }
    if (v->mask_lo[d] != 0 || v->mask_hi[d] != v->shape[d]) full = false;
  }
  if (full) {
    v->masked = false;
    for (int d = 0; d < v->ndim; d++) v->mask_lo[d] = v->mask_hi[d] = 0;
  }
}

/* Mask range of dim d, the whole dim when unmasked. */
void shape_view_range(const View *v, int d, int64_t *lo, int64_t *hi) {
  *lo = v->masked ? v->mask_lo[d] : 0;
  *hi = v->masked ? v->mask_hi[d] : v->shape[d];
}

/* Turns on the mask of v, each dim's range starting as the whole dim. */
static void view_make_masked(View *v) {
  if (v->masked) return;
  v->masked = true;
  for (int d = 0; d < v->ndim; d++) {
    v->mask_lo[d] = 0;
    v->mask_hi[d] = v->shape[d];
  }
}

/* True for a view whose offset is its flat index: unmasked, offset 0, C strides. */
static bool view_is_identity(const View *v) {
  if (v->masked || v->offset != 0) return false;
  int64_t acc = 1;
  for (int d = v->ndim - 1; d >= 0; d--) {
    if (v->shape[d] != 1 && v->strides[d] != acc) return false;
    acc *= v->shape[d];
  }
  return true;
}

static bool view_equal(const View *a, const View *b) {
  if (a->ndim != b->ndim || a->offset != b->offset || a->masked != b->masked) return false;
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return false;
    if (a->masked && (a->mask_lo[d] != b->mask_lo[d] || a->mask_hi[d] != b->mask_hi[d]))
      return false;
  }
  return true;
}

/* ------------------------------------------------------- trackers, basics */

ShapeTracker *shape_contiguous(int ndim, const int64_t *shape) {
  ShapeTracker *st = tracker_alloc(1);
  if (st) view_contiguous(&st->views[0], ndim, shape);
  return st;
}

ShapeTracker *shape_copy(const ShapeTracker *st) {
  ShapeTracker *out = tracker_alloc(st->nviews);
  if (out) memcpy(out->views, st->views, (size_t)st->nviews * sizeof(View));
  return out;
}

void shape_free(ShapeTracker *st) { free(st); }

int shape_ndim(const ShapeTracker *st) { return st->views[st->nviews - 1].ndim; }

const int64_t *shape_dims(const ShapeTracker *st) { return st->views[st->nviews - 1].shape; }

bool shape_is_contiguous(const ShapeTracker *st) {
  return st->nviews == 1 && view_is_identity(&st->views[0]);
}

bool shape_equal(const ShapeTracker *a, const ShapeTracker *b) {
  if (a->nviews != b->nviews) return false;
  for (int i = 0; i < a->nviews; i++)
    if (!view_equal(&a->views[i], &b->views[i])) return false;
  return true;
}

/* ------------------------------------------------------------ movement ops */

ShapeTracker *shape_permute(const ShapeTracker *st, const int *perm) {
  const View *v = &st->views[st->nviews - 1];
  View t = *v;
  for (int d = 0; d < v->ndim; d++) {
    t.shape[d] = v->shape[perm[d]];
    t.strides[d] = v->strides[perm[d]];
    t.mask_lo[d] = v->mask_lo[perm[d]];
    t.mask_hi[d] = v->mask_hi[perm[d]];
  }
  view_canon(&t);
  return tracker_with_top(st, &t);
}

ShapeTracker *shape_expand(const ShapeTracker *st, const int64_t *shape) {
  View t = st->views[st->nviews - 1];
  for (int d = 0; d < t.ndim; d++) {
    if (t.shape[d] == shape[d]) continue;
    /* A size-1 dim already has stride 0 (canonical); its range is [0,1) or, in an
     * all-invalid view, [0,0), which stays empty. */
    t.strides[d] = 0;
    if (t.masked && t.mask_hi[d] > t.mask_lo[d]) {
      t.mask_lo[d] = 0;
      t.mask_hi[d] = shape[d];
    }
    t.shape[d] = shape[d];
  }
  view_canon(&t);
  return tracker_with_top(st, &t);
}

ShapeTracker *shape_pad(const ShapeTracker *st, const int64_t *lo, const int64_t *hi) {
  View t = st->views[st->nviews - 1];
  bool any = false;
  for (int d = 0; d < t.ndim; d++) any |= lo[d] != 0 || hi[d] != 0;
  if (any) {
    /* Index i of the padded dim is i - lo of the old one: the offset moves back by
     * lo*stride and the old valid range moves up by lo. */
    view_make_masked(&t);
    for (int d = 0; d < t.ndim; d++) {
      t.offset -= lo[d] * t.strides[d];
      t.mask_lo[d] += lo[d];
      t.mask_hi[d] += lo[d];
      t.shape[d] += lo[d] + hi[d];
    }
  }
  view_canon(&t);
  return tracker_with_top(st, &t);
}

ShapeTracker *shape_shrink(const ShapeTracker *st, const int64_t *start, const int64_t *stop) {
  View t = st->views[st->nviews - 1];
  for (int d = 0; d < t.ndim; d++) {
    int64_t n = stop[d] - start[d];
    t.offset += start[d] * t.strides[d];
    if (t.masked) { /* intersect the shifted valid range with [0, n) */
      int64_t mlo = t.mask_lo[d] - start[d], mhi = t.mask_hi[d] - start[d];
      mlo = mlo < 0 ? 0 : mlo;
      mhi = mhi > n ? n : mhi;
      if (mhi <= mlo) mlo = mhi = 0;
      t.mask_lo[d] = mlo;
      t.mask_hi[d] = mhi;
    }
    t.shape[d] = n;
  }
  view_canon(&t);
  return tracker_with_top(st, &t);
}

ShapeTracker *shape_stride(const ShapeTracker *st, const int64_t *step) {
  View t = st->views[st->nviews - 1];
  for (int d = 0; d < t.ndim; d++) {
    int64_t n = t.shape[d], k = step[d] < 0 ? -step[d] : step[d];
    if (step[d] < 0 && n > 0) {
      /* Flip first: new index i reads old n-1-i, and [lo,hi) becomes [n-hi, n-lo). */
      t.offset += (n - 1) * t.strides[d];
      t.strides[d] = -t.strides[d];
      if (t.masked) {
        int64_t mlo = n - t.mask_hi[d], mhi = n - t.mask_lo[d];
        t.mask_lo[d] = mlo;
        t.mask_hi[d] = mhi;
      }
    }
    if (k != 1) {
      /* Then new index i reads old i*k: valid where lo <= i*k < hi, that is
       * ceil(lo/k) <= i < ceil(hi/k) (<= ceil(n/k), the new size, as hi <= n). */
      t.strides[d] *= k;
      if (t.masked) {
        int64_t mlo = ceil_div(t.mask_lo[d], k), mhi = ceil_div(t.mask_hi[d], k);
        if (mhi <= mlo) mlo = mhi = 0;
        t.mask_lo[d] = mlo;
        t.mask_hi[d] = mhi;
      }
      t.shape[d] = ceil_div(n, k);
    }
  }
  view_canon(&t);
  return tracker_with_top(st, &t);
}

/* ---------------------------------------------------------------- reshape */

/* Merges `in` (inner) into *out (outer) when the pair is one dim of size
 * out->size*in->size with a single valid range, adding to *extra the offset correction
 * that the merged stride needs. Two ways this holds on every valid element:
 *  - the outer dim has one valid index L: j = L*n + i, so offset L*S + i*s equals
 *    j*s + L*S - L*n*s (this is why masked and broadcast dims merge too);
 *  - the inner dim is whole and S == s*n (C-contiguous, including both strides 0).
 * Any other pair has a valid set that is not one range, or no single stride. */
bool shape_dim_merge(ShapeDim *out, const ShapeDim *in, int64_t *extra) {
  int64_t n = in->size;
  if (out->hi - out->lo == 1) {
    *extra += out->lo * out->stride - out->lo * n * in->stride;
    out->lo = out->lo * n + in->lo;
    out->hi = out->hi * n - n + in->hi;
  } else if (in->lo == 0 && in->hi == n && out->stride == in->stride * n) {
    out->lo *= n;
    out->hi *= n;
  } else {
    return false;
  }
  out->size *= n;
  out->stride = in->stride;
  return true;
}

/* Splits the merged dim m over the new dims `sizes` (product m.size), writing their
 * strides and valid ranges. The valid range [lo, hi) of m must be a box in the new
 * dims: walking outward in, either it covers whole blocks of the inner product R (then
 * all inner dims are whole), or it lies inside one block (then that dim has one valid
 * index and the rest recurses). Returns false otherwise. */
static bool dim_split(ShapeDim m, int n, const int64_t *sizes, int64_t *strides, int64_t *lo,
                      int64_t *hi) {
  int64_t r = m.size, s_lo = m.lo, s_hi = m.hi;
  bool whole = false;
  for (int t = 0; t < n; t++) {
    r /= sizes[t];
    strides[t] = m.stride * r;
    if (whole) {
      lo[t] = 0;
      hi[t] = sizes[t];
    } else if (s_lo % r == 0 && s_hi % r == 0) {
      lo[t] = s_lo / r;
      hi[t] = s_hi / r;
      whole = true;
    } else {
      int64_t q = s_lo / r;
      if ((s_hi - 1) / r != q) return false;
      lo[t] = q;
      hi[t] = q + 1;
      s_lo -= q * r;
      s_hi -= q * r;
    }
  }
  return true;
}

/* Expresses the reshape of v to `shape` as one view in *out, if it can be. Dims of
 * size 1 carry nothing and are dropped on both sides; the rest are cut into groups of
 * old and new dims with equal products (boundaries where the prefix products agree).
 * Within a group the old dims must merge into one (shape_dim_merge) which then splits into
 * the new ones (dim_split). */
static bool view_reshape(const View *v, int ndim, const int64_t *shape, View *out) {
  memset(out, 0, sizeof *out);
  out->ndim = ndim;
  for (int d = 0; d < ndim; d++) out->shape[d] = shape[d];
  if (shape_view_empty(v)) { /* all invalid stays all invalid */
    out->masked = true;
    view_canon(out);
    return true;
  }
  ShapeDim old[JX_MAX_NDIM];
  int nold = 0, nnew = 0, newpos[JX_MAX_NDIM];
  for (int d = 0; d < v->ndim; d++) {
    if (v->shape[d] == 1) continue;
    ShapeDim *o = &old[nold++];
    o->size = v->shape[d];
    o->stride = v->strides[d];
    shape_view_range(v, d, &o->lo, &o->hi);
  }
  for (int d = 0; d < ndim; d++)
    if (shape[d] != 1) newpos[nnew++] = d;
  out->offset = v->offset;
  out->masked = v->masked;
  int i = 0, j = 0;
  while (i < nold) {
    /* Grow the group until both sides have the same product (same total overall). */
    int i0 = i, j0 = j;
    int64_t po = old[i++].size, pn = shape[newpos[j++]];
    while (po != pn) {
      if (po < pn) po *= old[i++].size;
      else pn *= shape[newpos[j++]];
    }
    ShapeDim m = old[i0];
    for (int k = i0 + 1; k < i; k++)
      if (!shape_dim_merge(&m, &old[k], &out->offset)) return false;
    int64_t sizes[JX_MAX_NDIM], strides[JX_MAX_NDIM], lo[JX_MAX_NDIM], hi[JX_MAX_NDIM];
    for (int k = j0; k < j; k++) sizes[k - j0] = shape[newpos[k]];
    if (!dim_split(m, j - j0, sizes, strides, lo, hi)) return false;
    for (int k = j0; k < j; k++) {
      int d = newpos[k];
      out->strides[d] = strides[k - j0];
      out->mask_lo[d] = lo[k - j0];
      out->mask_hi[d] = hi[k - j0];
    }
  }
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 1) out->mask_hi[d] = 1;
  view_canon(out);
  return true;
}

ShapeTracker *shape_reshape(const ShapeTracker *st, int ndim, const int64_t *shape) {
  const View *v = &st->views[st->nviews - 1];
  if (v->ndim == ndim && memcmp(v->shape, shape, (size_t)ndim * sizeof *shape) == 0)
    return shape_copy(st);
  /* Nothing is ever read from an empty array: forget how it was viewed. */
  if (shape_numel(ndim, shape) == 0) return shape_contiguous(ndim, shape);
  /* An identity view over all of the view below (a shrink may have left it covering a
   * prefix only) just renames that view's flat order, so a reshape can drop it and
   * reshape the view below instead: reshaping back to a shape seen before pops the
   * views a reshape pushed. */
  int n = st->nviews;
  while (n > 1 && view_is_identity(&st->views[n - 1]) &&
         shape_numel(st->views[n - 1].ndim, st->views[n - 1].shape) ==
             shape_numel(st->views[n - 2].ndim, st->views[n - 2].shape))
    n--;
  v = &st->views[n - 1];
  View t;
  if (v->ndim == ndim && memcmp(v->shape, shape, (size_t)ndim * sizeof *shape) == 0)
    return tracker_build(st, n - 1, v);
  if (view_reshape(v, ndim, shape, &t)) return tracker_build(st, n - 1, &t);
  /* The new shape reads the old one in C order: a contiguous view on top whose flat
   * offset is the index into the old top view. */
  view_contiguous(&t, ndim, shape);
  return tracker_build(st, n, &t);
}

/* ------------------------------------------------------------------ print */

/* Appends to a growing malloc'd buffer; on OOM frees it and leaves NULL. */
typedef struct Buf {
  char *s;
  size_t len, cap;
} Buf;

static void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(Buf *b, const char *fmt, ...) {
  if (!b->s) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (b->len + (size_t)n >= b->cap) {
    size_t cap = (b->len + (size_t)n + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s) {
      free(b->s);
      b->s = NULL;
      return;
    }
    b->s = s;
    b->cap = cap;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
  }
  b->len += (size_t)n;
}

static void buf_tuple(Buf *b, int n, const int64_t *xs) {
  buf_printf(b, "(");
  for (int d = 0; d < n; d++) buf_printf(b, d ? ",%lld" : "%lld", (long long)xs[d]);
  buf_printf(b, n == 1 ? ",)" : ")");
}

static void buf_view(Buf *b, const View *v) {
  buf_printf(b, "View(shape=");
  buf_tuple(b, v->ndim, v->shape);
  buf_printf(b, ", strides=");
  buf_tuple(b, v->ndim, v->strides);
  buf_printf(b, ", offset=%lld, mask=", (long long)v->offset);
  if (!v->masked) {
    buf_printf(b, "None)");
    return;
  }
  buf_printf(b, "(");
  for (int d = 0; d < v->ndim; d++)
    buf_printf(b, "%s(%lld,%lld)", d ? "," : "", (long long)v->mask_lo[d],
               (long long)v->mask_hi[d]);
  buf_printf(b, v->ndim == 1 ? ",))" : "))");
}

char *shape_print(const ShapeTracker *st) {
  Buf b = {malloc(128), 0, 128};
  if (st->nviews == 1) {
    buf_view(&b, &st->views[0]);
  } else { /* bottom (buffer) view first, as tinygrad prints them */
    buf_printf(&b, "ShapeTracker(views=(");
    for (int i = 0; i < st->nviews; i++) {
      if (i) buf_printf(&b, ", ");
      buf_view(&b, &st->views[i]);
    }
    buf_printf(&b, "))");
  }
  if (!b.s) error_set(JX_ERR_OOM, "shape_print: out of memory");
  return b.s;
}
