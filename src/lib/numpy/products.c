/* products.c -- jnp matmul, dot, vdot, inner, outer, tensordot on the dot_general
 * primitive. Operands promote (JAX rules); bool products are computed in int32 and
 * tested != 0 (an or of ands); float16/bfloat16 accumulate in float32 and round back,
 * as XLA does on CPU. Semantics from jax/_src/numpy/tensor_contractions.py. */
#include <string.h>

#include "lib/numpy/np.h"

/* Every public function runs in its own scope: temporaries die at its end, only the
 * result survives (a NULL result is fine). */
static bool null_args(const char *fn, jx_array *x, jx_array *y) {
  if (x && y) return false;
  error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, x ? "y" : "x");
  return true;
}

static void shape_error(const char *fn, const jx_array *x, const jx_array *y,
                        const char *why) {
  char b0[ERROR_SHAPE_BUF], b1[ERROR_SHAPE_BUF];
  error_set(JX_ERR_SHAPE, "%s: shapes %s and %s are incompatible: %s", fn,
            error_shape_str(b0, x->ndim, x->shape), error_shape_str(b1, y->ndim, y->shape), why);
}

/* dot_general of x and y after promotion, with the computation dtype described above.
 * Result dims: batch, x's free dims, y's free dims. */
static jx_array *contract(const char *fn, jx_array *x, jx_array *y, int nc, const int *xc,
                          const int *yc, int nb, const int *xb, const int *yb) {
  jx_array *p[2];
  if (!np_promote(fn, 2, (jx_array *[]){x, y}, p)) return NULL;
  jx_dtype out = p[0]->dtype, comp = out;
  if (out == JX_BOOL) comp = JX_INT32;
  if (out == JX_FLOAT16 || out == JX_BFLOAT16) comp = JX_FLOAT32;
  jx_array *r = prim_dot_general(np_convert(p[0], comp, false), np_convert(p[1], comp, false),
                                 nc, xc, yc, nb, xb, yb);
  return r ? np_convert(r, out, false) : NULL;
}

/* Elementwise product with broadcasting (jnp.multiply; bool: logical and). */
static jx_array *mul_bcast(const char *fn, jx_array *x, jx_array *y) {
  jx_array *p[2];
  if (!np_prepare(fn, 2, (jx_array *[]){x, y}, p)) return NULL;
  return prim_binary(p[0]->dtype == JX_BOOL ? PRIM_and : PRIM_mul, p[0], p[1]);
}

/* ------------------------------------------------------------------ matmul */

/* jnp.matmul: a 1-d x acts as (1, k) and a 1-d y as (k, 1), the added dim removed
 * from the result; the batch dims (all but the last two) broadcast (NumPy rules). */
static jx_array *matmul_impl(const char *fn, jx_array *x, jx_array *y) {
  if (x->ndim == 0 || y->ndim == 0) {
    shape_error(fn, x, y, "matmul operands must be at least 1-d");
    return NULL;
  }
  int64_t xs[JX_MAX_NDIM + 1], ys[JX_MAX_NDIM + 1];
  int xn = x->ndim == 1 ? 2 : x->ndim, yn = y->ndim == 1 ? 2 : y->ndim;
  if (x->ndim == 1) xs[0] = 1, xs[1] = x->shape[0];
  else memcpy(xs, x->shape, (size_t)xn * sizeof(int64_t));
  if (y->ndim == 1) ys[0] = y->shape[0], ys[1] = 1;
  else memcpy(ys, y->shape, (size_t)yn * sizeof(int64_t));
  if (xs[xn - 1] != ys[yn - 2]) {
    shape_error(fn, x, y, "contracting dimensions differ");
    return NULL;
  }
  int nb = (xn > yn ? xn : yn) - 2;
  int64_t xt[JX_MAX_NDIM], yt[JX_MAX_NDIM], rs[JX_MAX_NDIM];
  for (int i = 0; i < nb; i++) { /* right-aligned batch dims */
    int xi = i - (nb - (xn - 2)), yi = i - (nb - (yn - 2));
    int64_t a = xi >= 0 ? xs[xi] : 1, b = yi >= 0 ? ys[yi] : 1;
    if (a != b && a != 1 && b != 1) {
      shape_error(fn, x, y, "batch dimensions do not broadcast");
      return NULL;
    }
    xt[i] = yt[i] = rs[i] = a == 1 ? b : a;
  }
  xt[nb] = xs[xn - 2], xt[nb + 1] = xs[xn - 1];
  yt[nb] = ys[yn - 2], yt[nb + 1] = ys[yn - 1];
  int xbd[JX_MAX_NDIM], ybd[JX_MAX_NDIM], batch[JX_MAX_NDIM];
  for (int i = 0; i < xn; i++) xbd[i] = nb + 2 - xn + i;
  for (int i = 0; i < yn; i++) ybd[i] = nb + 2 - yn + i;
  for (int i = 0; i < nb; i++) batch[i] = i;
  jx_array *xb = prim_broadcast_in_dim(prim_reshape(x, xn, xs), nb + 2, xt, xbd);
  jx_array *yb = prim_broadcast_in_dim(prim_reshape(y, yn, ys), nb + 2, yt, ybd);
  int xc = nb + 1, yc = nb;
  jx_array *r = contract(fn, xb, yb, 1, &xc, &yc, nb, batch, batch);
  int n = nb;
  if (x->ndim > 1) rs[n++] = xs[xn - 2];
  if (y->ndim > 1) rs[n++] = ys[yn - 1];
  return r ? prim_reshape(r, n, rs) : NULL;
}

jx_array *jx_matmul(jx_array *x, jx_array *y) {
  if (null_args("jx_matmul", x, y)) return NULL;
  jx_scope_begin();
  return np_scope_return(matmul_impl("jx_matmul", x, y));
}

/* ------------------------------------------------------- dot, inner, vdot */

/* jnp.dot: scalars multiply; otherwise x's last axis contracts with y's only axis
 * (1-d y) or its second-to-last. */
static jx_array *dot_impl(const char *fn, jx_array *x, jx_array *y) {
  if (x->ndim == 0 || y->ndim == 0) return mul_bcast(fn, x, y);
  int xc = x->ndim - 1, yc = y->ndim == 1 ? 0 : y->ndim - 2;
  if (x->shape[xc] != y->shape[yc]) {
    shape_error(fn, x, y, "contracting dimensions differ");
    return NULL;
  }
  return contract(fn, x, y, 1, &xc, &yc, 0, NULL, NULL);
}

jx_array *jx_dot(jx_array *x, jx_array *y) {
  if (null_args("jx_dot", x, y)) return NULL;
  jx_scope_begin();
  return np_scope_return(dot_impl("jx_dot", x, y));
}

/* jnp.inner: the last axes of x and y contract; scalars multiply. */
jx_array *jx_inner(jx_array *x, jx_array *y) {
  const char *fn = "jx_inner";
  if (null_args(fn, x, y)) return NULL;
  jx_scope_begin();
  if (x->ndim == 0 || y->ndim == 0) return np_scope_return(mul_bcast(fn, x, y));
  int xc = x->ndim - 1, yc = y->ndim - 1;
  if (x->shape[xc] != y->shape[yc]) {
    shape_error(fn, x, y, "last dimensions differ");
    return np_scope_return(NULL);
  }
  return np_scope_return(contract(fn, x, y, 1, &xc, &yc, 0, NULL, NULL));
}

/* jnp.vdot: dot of the flattened operands (equal sizes). */
jx_array *jx_vdot(jx_array *x, jx_array *y) {
  const char *fn = "jx_vdot";
  if (null_args(fn, x, y)) return NULL;
  int64_t n = jx_size(x), m = jx_size(y);
  if (n != m) {
    shape_error(fn, x, y, "sizes differ");
    return NULL;
  }
  jx_scope_begin();
  int c = 0;
  return np_scope_return(contract(fn, prim_reshape(x, 1, &n), prim_reshape(y, 1, &m), 1, &c, &c,
                               0, NULL, NULL));
}

/* jnp.outer: ravel(x)[:, None] * ravel(y)[None, :]. */
jx_array *jx_outer(jx_array *x, jx_array *y) {
  const char *fn = "jx_outer";
  if (null_args(fn, x, y)) return NULL;
  jx_scope_begin();
  int64_t xs[2] = {jx_size(x), 1}, ys[2] = {1, jx_size(y)};
  return np_scope_return(mul_bcast(fn, prim_reshape(x, 2, xs), prim_reshape(y, 2, ys)));
}

/* jnp.tensordot(x, y, axes=n): x's last n axes contract with y's first n, in order.
 * n == 0 is the outer product with shape x.shape + y.shape. */
jx_array *jx_tensordot(jx_array *x, jx_array *y, int n) {
  const char *fn = "jx_tensordot";
  if (null_args(fn, x, y)) return NULL;
  if (n < 0 || n > x->ndim || n > y->ndim) {
    shape_error(fn, x, y, "axes must be between 0 and the smaller rank");
    return NULL;
  }
  if (x->ndim + y->ndim - 2 * n > JX_MAX_NDIM) {
    shape_error(fn, x, y, "the result rank exceeds JX_MAX_NDIM");
    return NULL;
  }
  int xc[JX_MAX_NDIM], yc[JX_MAX_NDIM];
  for (int i = 0; i < n; i++) {
    xc[i] = x->ndim - n + i, yc[i] = i;
    if (x->shape[xc[i]] != y->shape[yc[i]]) {
      shape_error(fn, x, y, "contracted dimensions differ");
      return NULL;
    }
  }
  jx_scope_begin();
  if (n > 0) return np_scope_return(contract(fn, x, y, n, xc, yc, 0, NULL, NULL));
  int64_t xs[JX_MAX_NDIM], ys[JX_MAX_NDIM];
  for (int d = 0; d < x->ndim + y->ndim; d++) {
    xs[d] = d < x->ndim ? x->shape[d] : 1;
    ys[d] = d < x->ndim ? 1 : y->shape[d - x->ndim];
  }
  int nd = x->ndim + y->ndim;
  return np_scope_return(mul_bcast(fn, prim_reshape(x, nd, xs), prim_reshape(y, nd, ys)));
}
