/* lax_conv.c -- lax's windowed operations, built from primitives: conv_general_dilated
 * (n-d; strides, padding incl. SAME/VALID, lhs and rhs dilation, feature and batch
 * groups, dimension numbers), conv, conv_transpose, reduce_window and flax-style pooling.
 *
 * One idea serves them all: dilate the input (interior padding: insert a unit dim,
 * pad it, merge), pad it, then take one strided slice per window tap -- a view -- and
 * stack the taps on a new axis (im2col). A convolution is then one dot_general of the
 * stacked taps with the kernel; a windowed reduction is one reduction over the tap
 * axis. Gradients, vmap and jit come from the primitives' rules. Semantics from
 * jax/_src/lax/convolution.py and windowed_reductions.py (padtype_to_pads in lax.py). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

/* Every public function runs in its own scope: temporaries die at its end, only the
 * result survives (a NULL result is fine). */
/* x with a unit dim inserted before dim `at`. */
static jx_array *insert_unit(jx_array *x, int at) {
  int64_t s[JX_MAX_NDIM];
  for (int d = 0, k = 0; d <= x->ndim; d++) s[d] = d == at ? 1 : x->shape[k++];
  return prim_reshape(x, x->ndim + 1, s);
}

/* prim_concatenate takes at most 32 operands: join groups of 32 first. Overwrites p. */
static jx_array *concat_many(int64_t n, jx_array **p, int axis) {
  while (n > 32) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i += 32) {
      int k = n - i < 32 ? (int)(n - i) : 32;
      p[m++] = k == 1 ? p[i] : prim_concatenate(k, p + i, axis);
    }
    n = m;
  }
  return n == 1 ? jx_ref(p[0]) : prim_concatenate((int)n, p, axis);
}

/* core.dilate_dim: the extent of n >= 0 elements spread d >= 1 apart into *out; false
 * where it overflows int64. */
static bool dilate_dim(int64_t n, int64_t d, int64_t *out) {
  if (n == 0) return *out = 0, true;
  return !__builtin_mul_overflow(n - 1, d, out) && !__builtin_add_overflow(*out, 1, out);
}

/* --------------------------------------------------------------- windows */

/* The geometry of a windowed op over n consecutive dims of its operand. */
typedef struct Window {
  int n;
  int64_t in[JX_MAX_NDIM];       /* operand extents (undilated) */
  int64_t size[JX_MAX_NDIM];     /* window extents (undilated) */
  int64_t stride[JX_MAX_NDIM];
  int64_t base_dil[JX_MAX_NDIM]; /* lhs dilation: interior padding of the operand */
  int64_t win_dil[JX_MAX_NDIM];  /* rhs dilation: spacing of the window taps */
  int64_t lo[JX_MAX_NDIM], hi[JX_MAX_NDIM]; /* padding; negative crops */
  int64_t out[JX_MAX_NDIM];      /* result extents */
  int64_t taps;                  /* product of size */
} Window;

/* Largest number of taps (window elements) a windowed op accepts. */
#define MAX_TAPS (1 << 20)

/* Fills w from the user's arguments (arrays of w->n entries; NULL strides and dilations
 * mean 1) and computes padding for the string modes (lax.padtype_to_pads, on the
 * undilated operand and the dilated window) and the result extents
 * (max(0, floor((padded - window) / stride) + 1), as conv_shape_tuple). */
static bool window_setup(const char *fn, Window *w, const int64_t *stride,
                         jx_padding padding, const int64_t *pads, const int64_t *base_dil,
                         const int64_t *win_dil) {
  if ((int)padding < 0 || padding > JX_PADDING_SAME_LOWER) {
    error_set(JX_ERR_VALUE, "%s: unknown padding mode %d", fn, (int)padding);
    return false;
  }
  if (padding == JX_PADDING_EXPLICIT && w->n > 0 &&
      np_null_arg(fn, pads, "pads (with JX_PADDING_EXPLICIT)"))
    return false;
  w->taps = 1;
  for (int i = 0; i < w->n; i++) {
    w->stride[i] = stride ? stride[i] : 1;
    w->base_dil[i] = base_dil ? base_dil[i] : 1;
    w->win_dil[i] = win_dil ? win_dil[i] : 1;
    if (w->stride[i] < 1 || w->base_dil[i] < 1 || w->win_dil[i] < 1) {
      error_set(JX_ERR_VALUE, "%s: strides and dilations must be >= 1, got stride %lld, "
                "dilations %lld and %lld in spatial dim %d", fn, (long long)w->stride[i],
                (long long)w->base_dil[i], (long long)w->win_dil[i], i);
      return false;
    }
    if (w->size[i] < 0) {
      error_set(JX_ERR_SHAPE, "%s: window size %lld in spatial dim %d is negative", fn,
                (long long)w->size[i], i);
      return false;
    }
    if (w->size[i] > 0 && w->taps > MAX_TAPS / w->size[i]) {
      error_set(JX_ERR_UNSUPPORTED, "%s: windows of more than %d elements", fn, MAX_TAPS);
      return false;
    }
    w->taps *= w->size[i];
  }
  for (int i = 0; i < w->n; i++) {
    /* in int64 with every step checked: strides, dilations and pads near INT64_MAX */
    int64_t win, base, padded, lo = 0, hi = 0;
    bool over = !dilate_dim(w->size[i], w->win_dil[i], &win) || !dilate_dim(w->in[i], w->base_dil[i], &base);
    switch (padding) {
    case JX_PADDING_EXPLICIT:
      lo = pads[2 * i], hi = pads[2 * i + 1];
      break;
    case JX_PADDING_VALID:
      break;
    case JX_PADDING_SAME:
    case JX_PADDING_SAME_LOWER: {
      int64_t out = w->in[i] / w->stride[i] + (w->in[i] % w->stride[i] != 0), total = 0;
      /* lax.padtype_to_pads: max((out - 1) * stride + window - in, 0); an empty dim
       * (out = 0) pads window - stride at most, so no window fits: an empty result */
      over = over || __builtin_mul_overflow(out - 1, w->stride[i], &total) ||
             __builtin_add_overflow(total, win - w->in[i], &total);
      if (total < 0) total = 0;
      lo = padding == JX_PADDING_SAME ? total / 2 : total - total / 2;
      hi = total - lo;
      break;
    }
    }
    over = over || __builtin_add_overflow(base, lo, &padded) || __builtin_add_overflow(padded, hi, &padded);
    if (over) {
      error_set(JX_ERR_VALUE, "%s: the window, strides, dilations or padding of spatial dim %d overflow int64",
                fn, i);
      return false;
    }
    w->lo[i] = lo, w->hi[i] = hi;
    w->out[i] = padded >= win ? (padded - win) / w->stride[i] + 1 : 0;
  }
  return true;
}

/* Spreads the elements of x along `axis` d apart, filling the gaps with value (lax.pad's
 * interior padding): insert a unit dim after axis, pad it to d, merge, drop the tail. */
static jx_array *dilate_axis(jx_array *x, int axis, int64_t d, double value) {
  if (!x || d == 1 || x->shape[axis] <= 1) return jx_ref(x);
  int nd = x->ndim;
  int64_t lo[JX_MAX_NDIM] = {0}, hi[JX_MAX_NDIM] = {0}, s[JX_MAX_NDIM];
  hi[axis + 1] = d - 1;
  jx_array *p = prim_pad(insert_unit(x, axis + 1), lo, hi, value);
  if (!p) return NULL;
  int64_t n = x->shape[axis];
  memcpy(s, x->shape, sizeof(int64_t) * (size_t)nd);
  s[axis] = n * d;
  jx_array *m = prim_reshape(p, nd, s);
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM];
  memcpy(stop, x->shape, sizeof(int64_t) * (size_t)nd);
  stop[axis] = (n - 1) * d + 1;
  return prim_slice(m, start, stop, NULL);
}

/* Pads `axis` of x by lo / hi elements of value; negative amounts crop. */
static jx_array *pad_axis(jx_array *x, int axis, int64_t lo, int64_t hi, double value) {
  if (!x) return NULL;
  int nd = x->ndim;
  if (lo > 0 || hi > 0) {
    int64_t plo[JX_MAX_NDIM] = {0}, phi[JX_MAX_NDIM] = {0};
    plo[axis] = lo > 0 ? lo : 0;
    phi[axis] = hi > 0 ? hi : 0;
    x = prim_pad(x, plo, phi, value);
  } else {
    x = jx_ref(x);
  }
  if (!x || (lo >= 0 && hi >= 0)) return x;
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM];
  memcpy(stop, x->shape, sizeof(int64_t) * (size_t)nd);
  start[axis] = lo < 0 ? -lo : 0;
  stop[axis] -= hi < 0 ? -hi : 0;
  return prim_slice(x, start, stop, NULL);
}

/* im2col: x's dims first .. first+n-1 are dilated, padded with value and cut into
 * windows; the result has a new tap axis (w->taps entries, row-major over the window)
 * at `first`, followed by the w->out result extents: x[..., S...] -> [..., T, out...].
 * Each tap is a strided slice (a view) of the padded operand. Needs w->out all > 0 and
 * w->taps > 0. */
static jx_array *window_taps_at(const char *fn, jx_array *x, int first, int tap_axis,
                                const Window *w, double value) {
  if (x && x->ndim + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_UNSUPPORTED, "%s: operand rank %d leaves no room for the window axis",
              fn, x->ndim);
    return NULL;
  }
  jx_array *p = x;
  for (int i = 0; i < w->n; i++) p = dilate_axis(p, first + i, w->base_dil[i], value);
  for (int i = 0; i < w->n; i++) p = pad_axis(p, first + i, w->lo[i], w->hi[i], value);
  if (!p) return NULL;
  jx_array **taps = malloc((size_t)w->taps * sizeof *taps);
  if (!taps) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  int64_t start[JX_MAX_NDIM] = {0}, stop[JX_MAX_NDIM], step[JX_MAX_NDIM];
  memcpy(stop, p->shape, sizeof(int64_t) * (size_t)p->ndim);
  for (int d = 0; d < p->ndim; d++) step[d] = 1;
  bool ok = true;
  for (int64_t t = 0; t < w->taps && ok; t++) {
    int64_t rest = t;
    for (int i = w->n - 1; i >= 0; i--) { /* tap t's position in the window, row-major */
      int64_t k = rest % w->size[i];
      rest /= w->size[i];
      start[first + i] = k * w->win_dil[i];
      stop[first + i] = start[first + i] + (w->out[i] - 1) * w->stride[i] + 1;
      step[first + i] = w->stride[i];
    }
    taps[t] = insert_unit(prim_slice(p, start, stop, step), tap_axis);
    ok = taps[t] != NULL;
  }
  jx_array *r = ok ? concat_many(w->taps, taps, tap_axis) : NULL;
  free(taps);
  return r;
}

static jx_array *window_taps(const char *fn, jx_array *x, int first, const Window *w,
                             double value) {
  return window_taps_at(fn, x, first, first, w, value);
}

/* ------------------------------------------------------- dimension numbers */

/* conv_general_permutations: for each of lhs, rhs, out the dims holding (N, C), (O, I),
 * (N, C), then the spatial dims in the order their letters appear in rhs_spec. NULL
 * specs give JAX's default ("NC...", "OI...", "NC..."). */
static bool conv_perms(const char *fn, int ndim, const char *const spec[3],
                       int perm[3][JX_MAX_NDIM]) {
  static const char pair[3][2] = {{'N', 'C'}, {'O', 'I'}, {'N', 'C'}};
  static const char *what[3] = {"lhs_spec", "rhs_spec", "out_spec"};
  if (!spec[0] && !spec[1] && !spec[2]) {
    for (int s = 0; s < 3; s++)
      for (int d = 0; d < ndim; d++) perm[s][d] = d;
    return true;
  }
  for (int s = 0; s < 3; s++) {
    if (!spec[s]) {
      error_set(JX_ERR_VALUE, "%s: dimension numbers need all three specs or none, "
                "%s is NULL", fn, what[s]);
      return false;
    }
    if ((int)strlen(spec[s]) != ndim) {
      error_set(JX_ERR_SHAPE, "%s: %s \"%s\" has %d letters but the operands have rank %d",
                fn, what[s], spec[s], (int)strlen(spec[s]), ndim);
      return false;
    }
    for (int d = 0; d < ndim; d++)
      if (strchr(spec[s] + d + 1, spec[s][d])) {
        error_set(JX_ERR_VALUE, "%s: %s \"%s\" repeats '%c'", fn, what[s], spec[s],
                  spec[s][d]);
        return false;
      }
    for (int k = 0; k < 2; k++)
      if (!strchr(spec[s], pair[s][k])) {
        error_set(JX_ERR_VALUE, "%s: %s \"%s\" must contain '%c' and '%c' exactly once", fn,
                  what[s], spec[s], pair[s][0], pair[s][1]);
        return false;
      }
  }
  for (int s = 0; s < 3; s += 2) /* same spatial letters as rhs_spec */
    for (int d = 0; d < ndim; d++) {
      char c = spec[s][d];
      if (c == 'N' || c == 'C') continue;
      const char *at = strchr(spec[1], c);
      if (!at || c == 'O' || c == 'I') {
        error_set(JX_ERR_VALUE, "%s: dimension numbers (\"%s\", \"%s\", \"%s\") must each "
                  "have the same spatial letters", fn, spec[0], spec[1], spec[2]);
        return false;
      }
    }
  for (int s = 0; s < 3; s++) {
    perm[s][0] = (int)(strchr(spec[s], pair[s][0]) - spec[s]);
    perm[s][1] = (int)(strchr(spec[s], pair[s][1]) - spec[s]);
    int k = 2;
    for (int r = 0; r < ndim; r++) { /* spatial letters in rhs_spec order */
      char c = spec[1][r];
      if (c == 'O' || c == 'I') continue;
      perm[s][k++] = (int)(strchr(spec[s], c) - spec[s]);
    }
  }
  return true;
}

/* ---------------------------------------------------------- convolution */

/* The resolved arguments of one convolution. */
typedef struct Conv {
  int n;                                   /* spatial dims */
  int perm[3][JX_MAX_NDIM];                /* lhs, rhs, out layouts */
  const int64_t *stride, *lhs_dil, *rhs_dil;
  jx_padding padding;
  const int64_t *pads;
  int64_t groups, batch_groups;
} Conv;

/* conv_general_dilated on validated arguments. Call inside a scope. */
static jx_array *conv_impl(const char *fn, jx_array *lhs, jx_array *rhs, const Conv *cv) {
  int n = cv->n, nd = n + 2;
  char b0[ARRAY_DESCRIBE_BUF], b1[ARRAY_DESCRIBE_BUF];
  if (lhs->ndim != nd || rhs->ndim != nd) {
    error_set(JX_ERR_SHAPE, "%s: lhs %s and rhs %s must both have rank nspatial + 2 = %d",
              fn, array_describe(b0, lhs), array_describe(b1, rhs), nd);
    return NULL;
  }
  if (nd + 3 > JX_MAX_NDIM) {
    error_set(JX_ERR_UNSUPPORTED, "%s: at most %d spatial dims", fn, JX_MAX_NDIM - 5);
    return NULL;
  }
  if (lhs->dtype != rhs->dtype) {
    error_set(JX_ERR_DTYPE, "%s: lhs %s and rhs %s must have the same dtype", fn,
              array_describe(b0, lhs), array_describe(b1, rhs));
    return NULL;
  }
  const int *lp = cv->perm[0], *rp = cv->perm[1], *op = cv->perm[2];
  int64_t N = lhs->shape[lp[0]], C = lhs->shape[lp[1]];
  int64_t O = rhs->shape[rp[0]], I = rhs->shape[rp[1]];
  int64_t G = cv->groups, B = cv->batch_groups;
  const char *why = NULL;
  if (G < 1 || B < 1) why = "feature_group_count and batch_group_count must be >= 1";
  else if (G > 1 && B > 1) why = "at most one of feature_group_count and batch_group_count "
                                 "may be > 1";
  else if (C % G != 0) why = "feature_group_count must divide the lhs feature dimension";
  else if (C / G != I) why = "the lhs feature dimension / feature_group_count must equal "
                             "the rhs input feature dimension";
  else if (O % G != 0) why = "the rhs output feature dimension must be a multiple of "
                             "feature_group_count";
  else if (N % B != 0) why = "batch_group_count must divide the lhs batch dimension";
  else if (O % B != 0) why = "the rhs output feature dimension must be a multiple of "
                             "batch_group_count";
  if (why) {
    error_set(JX_ERR_SHAPE, "%s: lhs %s, rhs %s, feature_group_count %lld, "
              "batch_group_count %lld: %s", fn, array_describe(b0, lhs),
              array_describe(b1, rhs), (long long)G, (long long)B, why);
    return NULL;
  }
  if (cv->padding != JX_PADDING_EXPLICIT && cv->lhs_dil)
    for (int i = 0; i < n; i++)
      if (cv->lhs_dil[i] != 1) {
        error_set(JX_ERR_VALUE, "%s: SAME/VALID padding is not defined with lhs dilation "
                  "(give explicit padding, or use jx_lax_conv_transpose)", fn);
        return NULL;
      }
  Window w = {.n = n};
  for (int i = 0; i < n; i++) w.in[i] = lhs->shape[lp[2 + i]], w.size[i] = rhs->shape[rp[2 + i]];
  if (!window_setup(fn, &w, cv->stride, cv->padding, cv->pads, cv->lhs_dil, cv->rhs_dil))
    return NULL;

  /* Canonical result [N/B, O, out...], then the out_spec layout. */
  int64_t rs[JX_MAX_NDIM];
  rs[0] = N / B, rs[1] = O;
  for (int i = 0; i < n; i++) rs[2 + i] = w.out[i];
  jx_dtype out = lhs->dtype, comp = out;
  bool weak = lhs->weak && rhs->weak;
  if (out == JX_BOOL) comp = JX_INT32; /* an or of ands: count, then test != 0 */
  if (out == JX_FLOAT16 || out == JX_BFLOAT16) comp = JX_FLOAT32; /* as XLA on CPU */
  if (shape_numel(nd, rs) == 0 || w.taps == 0 || I == 0) {
    int64_t ys[JX_MAX_NDIM];
    for (int d = 0; d < nd; d++) ys[op[d]] = rs[d];
    return np_full(0, out, nd, ys); /* an empty sum */
  }

  /* Channel-last layout (as XLA on CPU): x [N, S..., C], im2col [N, out..., T, C] so a
   * row of the GEMM (one output position) is contiguous, kernel [T, I, O]. For NHWC /
   * HWIO / NHWC operands no transposes are needed at all. */
  int xp[JX_MAX_NDIM], kp[JX_MAX_NDIM];
  xp[0] = lp[0];
  for (int i = 0; i < n; i++) xp[1 + i] = lp[2 + i];
  xp[n + 1] = lp[1];
  for (int i = 0; i < n; i++) kp[i] = rp[2 + i];
  kp[n] = rp[1], kp[n + 1] = rp[0];
  jx_array *x = np_convert(prim_transpose(lhs, xp), comp, false); /* [N, S..., C] */
  jx_array *k = np_convert(prim_transpose(rhs, kp), comp, false); /* [K..., I, O] */
  jx_array *cols = window_taps_at(fn, x, 1, n + 1, &w, 0.0);       /* [N, out..., T, C] */
  if (!cols || !k) return NULL;
  int64_t T = w.taps, s[JX_MAX_NDIM];
  int64_t Gx = B > 1 ? B : G; /* groups: a batch dim of the contraction */
  jx_array *y;
  if (Gx == 1) {
    int nc = 0;
    s[nc++] = N;
    for (int i = 0; i < n; i++) s[nc++] = w.out[i];
    s[nc++] = T, s[nc++] = C;
    cols = prim_reshape(cols, nc, s);
    k = prim_reshape(k, 3, (int64_t[]){T, I, O});
    int lc[2] = {n + 1, n + 2}, rc[2] = {0, 1};
    y = prim_dot_general(cols, k, 2, lc, rc, 0, NULL, NULL); /* [N, out..., O] */
  } else {
    /* Features (or, for batch groups, the lhs batch) split group-major, as do the
     * kernel's output features: [Gx, N', out..., T, C'] x [Gx, T, I, O/Gx]. */
    int nc = 0;
    if (B > 1) s[nc++] = B, s[nc++] = N / B;
    else s[nc++] = N;
    for (int i = 0; i < n; i++) s[nc++] = w.out[i];
    s[nc++] = T;
    if (B > 1) s[nc++] = C;
    else s[nc++] = G, s[nc++] = C / G;
    cols = prim_reshape(cols, nc, s);
    int lb, lc[2];
    if (B > 1) lb = 0, lc[0] = n + 2, lc[1] = n + 3;   /* [B, N/B, out..., T, C] */
    else lb = n + 2, lc[0] = n + 1, lc[1] = n + 3;     /* [N, out..., T, G, C/G] */
    k = prim_reshape(k, 4, (int64_t[]){T, I, Gx, O / Gx});
    k = prim_transpose(k, (int[]){2, 0, 1, 3});         /* [Gx, T, I, O/Gx] */
    int rb = 0, rc[2] = {1, 2};
    y = prim_dot_general(cols, k, 2, lc, rc, 1, &lb, &rb); /* [Gx, N', out..., O/Gx] */
    int perm[JX_MAX_NDIM];
    for (int i = 0; i <= n; i++) perm[i] = 1 + i;
    perm[n + 1] = 0, perm[n + 2] = n + 2;
    y = prim_transpose(y, perm); /* [N', out..., Gx, O/Gx] */
    int64_t ys2[JX_MAX_NDIM];
    ys2[0] = N / B;
    for (int i = 0; i < n; i++) ys2[1 + i] = w.out[i];
    ys2[n + 1] = O;
    y = prim_reshape(y, nd, ys2);
  }
  /* y: [N', out..., O] -> the out_spec layout: out dim op[c] holds canonical dim c
   * ([N, C, S...]); y holds canonical N, S..., C. */
  int perm[JX_MAX_NDIM];
  perm[op[0]] = 0, perm[op[1]] = n + 1;
  for (int i = 0; i < n; i++) perm[op[2 + i]] = 1 + i;
  return np_convert(prim_transpose(y, perm), out, weak);
}

static const jx_conv_options no_options;

/* Resolves options (NULL = defaults; group counts 0 mean 1). */
static bool conv_setup(const char *fn, jx_array *lhs, jx_array *rhs, int nspatial,
                       const jx_conv_options *o, Conv *cv) {
  if (np_null_arg(fn, lhs, "lhs") || np_null_arg(fn, rhs, "rhs")) return false;
  if (nspatial < 0 || nspatial + 2 > JX_MAX_NDIM) {
    error_set(JX_ERR_VALUE, "%s: nspatial %d is outside [0, %d]", fn, nspatial,
              JX_MAX_NDIM - 2);
    return false;
  }
  if (!o) o = &no_options;
  cv->n = nspatial;
  cv->lhs_dil = o->lhs_dilation, cv->rhs_dil = o->rhs_dilation;
  cv->groups = o->feature_group_count ? o->feature_group_count : 1;
  cv->batch_groups = o->batch_group_count ? o->batch_group_count : 1;
  const char *spec[3] = {o->lhs_spec, o->rhs_spec, o->out_spec};
  return conv_perms(fn, nspatial + 2, spec, cv->perm);
}

jx_array *jx_lax_conv_general_dilated(jx_array *lhs, jx_array *rhs, int nspatial,
                                      const int64_t *window_strides, jx_padding padding,
                                      const int64_t *pads, const jx_conv_options *options) {
  const char *fn = "jx_lax_conv_general_dilated";
  Conv cv;
  if (!conv_setup(fn, lhs, rhs, nspatial, options, &cv)) return NULL;
  cv.stride = window_strides, cv.padding = padding, cv.pads = pads;
  jx_scope_begin();
  return np_scope_return(conv_impl(fn, lhs, rhs, &cv));
}

jx_array *jx_lax_conv(jx_array *lhs, jx_array *rhs, int nspatial,
                      const int64_t *window_strides, jx_padding padding,
                      const int64_t *pads) {
  const char *fn = "jx_lax_conv";
  Conv cv;
  if (!conv_setup(fn, lhs, rhs, nspatial, NULL, &cv)) return NULL;
  cv.stride = window_strides, cv.padding = padding, cv.pads = pads;
  jx_scope_begin();
  return np_scope_return(conv_impl(fn, lhs, rhs, &cv));
}

/* _conv_transpose_padding(k, s, padding) for the forward conv's SAME / VALID. */
static void transpose_pads(int64_t k, int64_t s, jx_padding padding, int64_t *lo,
                           int64_t *hi) {
  int64_t len, a;
  if (padding == JX_PADDING_SAME) {
    len = k + s - 2;
    a = s > k - 1 ? k - 1 : (len + 1) / 2; /* ceil(len / 2); len >= 0 here */
  } else {
    len = k + s - 2 + (k - s > 0 ? k - s : 0);
    a = k - 1;
  }
  *lo = a, *hi = len - a;
}

/* lax.conv_transpose: a conv with unit strides whose lhs is dilated by `strides`. */
jx_array *jx_lax_conv_transpose(jx_array *lhs, jx_array *rhs, int nspatial,
                                const int64_t *strides, jx_padding padding,
                                const int64_t *pads, bool transpose_kernel,
                                const jx_conv_options *options) {
  const char *fn = "jx_lax_conv_transpose";
  static const char *dflt[4][3] = {{"NC", "IO", "NC"}, {"NHC", "HIO", "NHC"},
                                   {"NHWC", "HWIO", "NHWC"}, {"NHWDC", "HWDIO", "NHWDC"}};
  jx_conv_options o = options ? *options : no_options;
  if (o.lhs_dilation || o.feature_group_count > 1 || o.batch_group_count > 1) {
    error_set(JX_ERR_VALUE, "%s: lhs_dilation, feature_group_count and batch_group_count "
              "are not options of conv_transpose", fn);
    return NULL;
  }
  if (!o.lhs_spec && !o.rhs_spec && !o.out_spec) {
    if (nspatial < 0 || nspatial > 3) {
      error_set(JX_ERR_VALUE, "%s: no default dimension numbers for %d spatial dims "
                "(give lhs_spec, rhs_spec and out_spec)", fn, nspatial);
      return NULL;
    }
    o.lhs_spec = dflt[nspatial][0], o.rhs_spec = dflt[nspatial][1];
    o.out_spec = dflt[nspatial][2];
  }
  Conv cv;
  if (!conv_setup(fn, lhs, rhs, nspatial, &o, &cv)) return NULL;
  if (padding == JX_PADDING_SAME_LOWER) {
    error_set(JX_ERR_VALUE, "%s: padding must be SAME, VALID or explicit", fn);
    return NULL;
  }
  if (rhs->ndim != nspatial + 2) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_SHAPE, "%s: rhs %s must have rank nspatial + 2 = %d", fn,
              array_describe(b, rhs), nspatial + 2);
    return NULL;
  }
  int64_t tp[2 * JX_MAX_NDIM], ones[JX_MAX_NDIM];
  for (int i = 0; i < nspatial; i++) {
    int64_t s = strides ? strides[i] : 1, r = o.rhs_dilation ? o.rhs_dilation[i] : 1;
    ones[i] = 1;
    if (padding != JX_PADDING_EXPLICIT) {
      int64_t k;
      /* k + s - 2 and k - s below stay in int64 while k and s are at most 2^62 */
      if (!dilate_dim(rhs->shape[cv.perm[1][2 + i]], r, &k) || k > ((int64_t)1 << 62) || s > ((int64_t)1 << 62)) {
        error_set(JX_ERR_VALUE, "%s: the kernel's dilated size or the stride of spatial dim %d overflows", fn, i);
        return NULL;
      }
      transpose_pads(k, s, padding, &tp[2 * i], &tp[2 * i + 1]);
    }
  }
  if (padding != JX_PADDING_EXPLICIT) pads = tp;
  jx_scope_begin();
  jx_array *k = jx_ref(rhs);
  if (transpose_kernel) { /* flip the spatial dims, swap O and I */
    bool mask[JX_MAX_NDIM] = {false};
    int perm[JX_MAX_NDIM];
    for (int d = 0; d < rhs->ndim; d++) perm[d] = d;
    for (int i = 0; i < nspatial; i++) mask[cv.perm[1][2 + i]] = true;
    perm[cv.perm[1][0]] = cv.perm[1][1], perm[cv.perm[1][1]] = cv.perm[1][0];
    k = prim_transpose(prim_rev(rhs, mask), perm);
  }
  cv.stride = ones, cv.padding = JX_PADDING_EXPLICIT, cv.pads = pads;
  cv.lhs_dil = strides;
  return np_scope_return(k ? conv_impl(fn, lhs, k, &cv) : NULL);
}

/* ------------------------------------------------------ windowed reductions */

/* lax.reduce_window and the poolings reject windows of a dimension < 1 (a convolution's
 * kernel may be empty; a window may not). */
static bool window_sizes_positive(const char *fn, int n, const int64_t *size) {
  for (int i = 0; i < n; i++)
    if (size[i] < 1) {
      error_set(JX_ERR_VALUE, "%s: window dimension %lld in dim %d must be >= 1", fn,
                (long long)size[i], i);
      return false;
    }
  return true;
}

/* The identity of op for dtype d (reduce_window's init value). */
static double window_identity(jx_window_op op, jx_dtype d) {
  switch (op) {
  case JX_WINDOW_PROD: return 1;
  case JX_WINDOW_MAX:
    return dtype_is_floating(d) ? -INFINITY : dtype_is_bool(d) ? 0 : dtype_min_value(d);
  case JX_WINDOW_MIN:
    return dtype_is_floating(d) ? INFINITY : dtype_is_bool(d) ? 1 : dtype_max_value(d);
  default: return 0;
  }
}

/* reduce_window over every dim of x (windows of w->n == x->ndim dims). sum and prod of
 * float16/bfloat16 accumulate in float32. Call inside a scope. */
static jx_array *reduce_window_impl(const char *fn, jx_array *x, jx_window_op op,
                                    const Window *w) {
  char b[ARRAY_DESCRIBE_BUF];
  if ((op == JX_WINDOW_SUM || op == JX_WINDOW_PROD) && !dtype_is_integer(x->dtype) && !dtype_is_inexact(x->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: sum and prod windows need a numeric operand, got %s", fn, array_describe(b, x));
    return NULL;
  }
  if ((op == JX_WINDOW_MAX || op == JX_WINDOW_MIN) && dtype_is_complex(x->dtype)) { /* JAX: lexicographic */
    error_set(JX_ERR_UNSUPPORTED, "%s: max and min windows of complex operands are not supported, got %s", fn,
              array_describe(b, x));
    return NULL;
  }
  Prim p = op == JX_WINDOW_SUM ? PRIM_reduce_sum : op == JX_WINDOW_PROD ? PRIM_reduce_prod
           : op == JX_WINDOW_MAX ? (x->dtype == JX_BOOL ? PRIM_reduce_or : PRIM_reduce_max)
                                 : (x->dtype == JX_BOOL ? PRIM_reduce_and : PRIM_reduce_min);
  double init = window_identity(op, x->dtype);
  if (shape_numel(w->n, w->out) == 0 || w->taps == 0)
    return np_full(shape_numel(w->n, w->out) ? init : 0, x->dtype, w->n, w->out);
  jx_dtype comp = x->dtype;
  if ((p == PRIM_reduce_sum || p == PRIM_reduce_prod) &&
      (comp == JX_FLOAT16 || comp == JX_BFLOAT16))
    comp = JX_FLOAT32;
  /* Non-overlapping windows (stride == window, no padding or dilation), as 2x2 max
   * pooling: crop to whole windows, split each windowed dim into (out, size) -- a view --
   * and reduce the size axes. No taps are materialized. */
  bool tiled = true;
  int split = 0;
  for (int i = 0; i < w->n && tiled; i++) {
    tiled = w->stride[i] == w->size[i] && w->lo[i] == 0 && w->hi[i] <= 0 &&
            w->base_dil[i] == 1 && w->win_dil[i] == 1 &&
            w->out[i] * w->size[i] == w->in[i] + w->hi[i];
    split += w->size[i] > 1;
  }
  if (tiled && w->n + split <= JX_MAX_NDIM) {
    jx_array *c = np_convert(x, comp, x->weak);
    for (int i = 0; i < w->n; i++) c = pad_axis(c, i, 0, w->hi[i], init);
    int64_t s[JX_MAX_NDIM];
    bool mask[JX_MAX_NDIM] = {false};
    int m = 0;
    for (int i = 0; i < w->n; i++) {
      s[m++] = w->out[i];
      if (w->size[i] > 1) mask[m] = true, s[m++] = w->size[i];
    }
    c = c ? prim_reshape(c, m, s) : NULL;
    return c ? np_convert(prim_reduce(p, c, mask), x->dtype, x->weak) : NULL;
  }
  jx_array *cols = window_taps(fn, np_convert(x, comp, x->weak), 0, w, init); /* [T, out...] */
  bool mask[JX_MAX_NDIM] = {true};
  return np_convert(prim_reduce(p, cols, mask), x->dtype, x->weak);
}

jx_array *jx_lax_reduce_window(jx_array *x, jx_window_op op,
                               const int64_t *window_dimensions,
                               const int64_t *window_strides, jx_padding padding,
                               const int64_t *pads, const int64_t *base_dilation,
                               const int64_t *window_dilation) {
  const char *fn = "jx_lax_reduce_window";
  if (np_null_arg(fn, x, "x")) return NULL;
  if (x->ndim > 0 && np_null_arg(fn, window_dimensions, "window_dimensions")) return NULL;
  if ((int)op < 0 || op > JX_WINDOW_MIN) {
    error_set(JX_ERR_VALUE, "%s: unknown window op %d", fn, (int)op);
    return NULL;
  }
  if (!window_sizes_positive(fn, x->ndim, window_dimensions)) return NULL;
  Window w = {.n = x->ndim};
  for (int d = 0; d < x->ndim; d++) w.in[d] = x->shape[d], w.size[d] = window_dimensions[d];
  if (!window_setup(fn, &w, window_strides, padding, pads, base_dilation, window_dilation))
    return NULL;
  jx_scope_begin();
  return np_scope_return(reduce_window_impl(fn, x, op, &w));
}

/* ----------------------------------------------------------------- pooling */

/* flax.linen.pooling.pool: windows over the nspatial dims before the last (features);
 * the leading dims are batch dims. Fills w for reduce_window over every dim. */
static bool pool_setup(const char *fn, jx_array *x, int nspatial, const int64_t *window,
                       const int64_t *strides, jx_padding padding, const int64_t *pads,
                       Window *w) {
  if (np_null_arg(fn, x, "x")) return false;
  if (nspatial < 0 || nspatial + 1 > x->ndim) {
    char b[ARRAY_DESCRIBE_BUF];
    error_set(JX_ERR_SHAPE, "%s: x %s needs rank >= nspatial + 1 = %d (batch..., spatial..., "
              "features)", fn, array_describe(b, x), nspatial + 1);
    return false;
  }
  if (nspatial > 0 && np_null_arg(fn, window, "window_shape")) return false;
  if (!window_sizes_positive(fn, nspatial, window)) return false;
  int first = x->ndim - 1 - nspatial;
  int64_t win[JX_MAX_NDIM], st[JX_MAX_NDIM], pd[2 * JX_MAX_NDIM] = {0};
  for (int d = 0; d < x->ndim; d++) {
    bool sp = d >= first && d < first + nspatial;
    win[d] = sp ? window[d - first] : 1;
    st[d] = sp && strides ? strides[d - first] : 1;
    if (sp && padding == JX_PADDING_EXPLICIT && pads)
      pd[2 * d] = pads[2 * (d - first)], pd[2 * d + 1] = pads[2 * (d - first) + 1];
  }
  if (padding == JX_PADDING_EXPLICIT && nspatial > 0 &&
      np_null_arg(fn, pads, "pads (with JX_PADDING_EXPLICIT)"))
    return false;
  w->n = x->ndim;
  for (int d = 0; d < x->ndim; d++) w->in[d] = x->shape[d], w->size[d] = win[d];
  return window_setup(fn, w, st, padding, pd, NULL, NULL);
}

jx_array *jx_lax_max_pool(jx_array *x, int nspatial, const int64_t *window_shape,
                          const int64_t *strides, jx_padding padding, const int64_t *pads) {
  const char *fn = "jx_lax_max_pool";
  Window w;
  if (!pool_setup(fn, x, nspatial, window_shape, strides, padding, pads, &w)) return NULL;
  jx_scope_begin();
  return np_scope_return(reduce_window_impl(fn, x, JX_WINDOW_MAX, &w));
}

/* flax.linen.avg_pool: the window sum divided by the window size, or (count_include_pad
 * false) by the number of non-padding elements in each window. */
jx_array *jx_lax_avg_pool(jx_array *x, int nspatial, const int64_t *window_shape,
                          const int64_t *strides, jx_padding padding, const int64_t *pads,
                          bool count_include_pad) {
  const char *fn = "jx_lax_avg_pool";
  Window w;
  if (!pool_setup(fn, x, nspatial, window_shape, strides, padding, pads, &w)) return NULL;
  jx_scope_begin();
  jx_array *sum = reduce_window_impl(fn, x, JX_WINDOW_SUM, &w);
  if (!sum) return np_scope_return(NULL);
  jx_array *div;
  if (count_include_pad) {
    int64_t size = 1;
    for (int i = 0; i < nspatial; i++) size *= window_shape[i];
    div = jx_scalar_int(size);
  } else { /* pool a ones array of the spatial shape: the count of real elements */
    Window c = w;
    int64_t s[JX_MAX_NDIM];
    for (int d = 0; d < w.n; d++) {
      bool sp = d >= w.n - 1 - nspatial && d < w.n - 1;
      s[d] = sp ? w.in[d] : 1;
      if (!sp) c.in[d] = 1, c.out[d] = 1;
    }
    div = reduce_window_impl(fn, np_full(1, dtype_default_float(), w.n, s),
                             JX_WINDOW_SUM, &c);
  }
  return np_scope_return(jx_divide(sum, div));
}
