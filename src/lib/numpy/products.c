/* products.c -- jnp matmul, dot, vdot, inner, outer, tensordot on the dot_general
 * primitive. Operands promote (JAX rules); bool products are computed in int32 and
 * tested != 0 (an or of ands); float16/bfloat16 accumulate in float32 and round back,
 * as XLA does (in dot_general itself). Semantics from jax/_src/numpy/tensor_contractions.py. */
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
  /* float16/bfloat16 stay: their dot_general accumulates in float32 and rounds once
   * (kexp_dot; a GEMM routine on cuBLAS's half-precision kernels, or float32 BLAS on
   * converted copies), as XLA does */
  jx_dtype out = p[0]->dtype, comp = out;
  if (out == JX_BOOL) comp = JX_INT32;
  bool weak = p[0]->weak && p[1]->weak; /* weak operands give a weak product, as JAX */
  jx_array *r = prim_dot_general(np_convert(p[0], comp, weak), np_convert(p[1], comp, weak),
                                 nc, xc, yc, nb, xb, yb);
  return r ? np_convert(r, out, weak) : NULL;
}

/* Elementwise product with broadcasting (jnp.multiply; bool: logical and). */
static jx_array *mul_bcast(const char *fn, jx_array *x, jx_array *y) {
  jx_array *p[2];
  if (!np_prepare(fn, 2, (jx_array *[]){x, y}, p)) return NULL;
  return prim_binary(p[0]->dtype == JX_BOOL ? PRIM_and : PRIM_mul, p[0], p[1]);
}

/* ------------------------------------------------------------------ matmul */

/* jnp.matmul (tensor_contractions.py): a 1-d x acts as (1, k) and a 1-d y as (k, 1), the
 * added dim removed from the result; the batch dims (all but the last two) broadcast
 * (NumPy rules) without being materialized, as JAX does: a batch dim only one operand
 * has, or where one operand's size is 1 (squeezed away), is a free dim of the other
 * operand; dims present in both with equal sizes are dot_general batch dims. The
 * result (batch, x's free, y's free) is transposed into matmul's order. So
 * (B, L, H) @ (H, N) is a single (B * L, H) x (H, N) product, never B copies of y. */
static jx_array *matmul_impl(const char *fn, jx_array *x, jx_array *y) {
  if (x->ndim == 0 || y->ndim == 0) {
    shape_error(fn, x, y, "matmul operands must be at least 1-d");
    return NULL;
  }
  bool xmat = x->ndim > 1, ymat = y->ndim > 1;
  if (x->shape[x->ndim - 1] != y->shape[ymat ? y->ndim - 2 : 0]) {
    shape_error(fn, x, y, "contracting dimensions differ");
    return NULL;
  }
  int xnb = xmat ? x->ndim - 2 : 0, ynb = ymat ? y->ndim - 2 : 0;
  int nb = xnb > ynb ? xnb : ynb;
  int xsq[JX_MAX_NDIM], ysq[JX_MAX_NDIM], nxsq = 0, nysq = 0;
  int xbatch[JX_MAX_NDIM], ybatch[JX_MAX_NDIM], ib[JX_MAX_NDIM], ixo[JX_MAX_NDIM + 1],
      iyo[JX_MAX_NDIM + 1], nbatch = 0, nxo = 0, nyo = 0;
  for (int i = 0; i < nb; i++) { /* right-aligned batch dims; -1: absent */
    int xi = i - (nb - xnb), yi = i - (nb - ynb);
    int64_t a = xi >= 0 ? x->shape[xi] : -1, b = yi >= 0 ? y->shape[yi] : -1;
    if (a < 0) iyo[nyo++] = i;
    else if (b < 0) ixo[nxo++] = i;
    else if (a == 1) {
      iyo[nyo++] = i;
      xsq[nxsq] = nbatch + nxo + nxsq, nxsq++;
    } else if (b == 1) {
      ixo[nxo++] = i;
      ysq[nysq] = nbatch + nyo + nysq, nysq++;
    } else if (a == b) {
      xbatch[nbatch] = nbatch + nxo, ybatch[nbatch] = nbatch + nyo;
      ib[nbatch++] = i;
    } else {
      shape_error(fn, x, y, "batch dimensions do not broadcast");
      return NULL;
    }
  }
  if (xmat) ixo[nxo++] = nb;
  if (ymat) iyo[nyo++] = nb + xmat;
  /* squeeze the size-1 batch dims (sq lists ascending positions) */
  int64_t xs[JX_MAX_NDIM], ys[JX_MAX_NDIM];
  int xn = 0, yn = 0;
  for (int d = 0, k = 0; d < x->ndim; d++)
    if (k < nxsq && xsq[k] == d) k++;
    else xs[xn++] = x->shape[d];
  for (int d = 0, k = 0; d < y->ndim; d++)
    if (k < nysq && ysq[k] == d) k++;
    else ys[yn++] = y->shape[d];
  jx_array *xr = nxsq ? prim_reshape(x, xn, xs) : x, *yr = nysq ? prim_reshape(y, yn, ys) : y;
  int xc = xn - 1, yc = yn - 1 - ymat;
  jx_array *r = contract(fn, xr, yr, 1, &xc, &yc, nbatch, xbatch, ybatch);
  if (!r) return NULL;
  /* dot_general's order is (batch, x's free, y's free); perm = argsort of that order */
  int order[JX_MAX_NDIM], perm[JX_MAX_NDIM], n = 0;
  for (int i = 0; i < nbatch; i++) order[n++] = ib[i];
  for (int i = 0; i < nxo; i++) order[n++] = ixo[i];
  for (int i = 0; i < nyo; i++) order[n++] = iyo[i];
  bool identity = true;
  for (int i = 0; i < n; i++) perm[order[i]] = i, identity &= order[i] == i;
  if (!identity) r = prim_transpose(r, perm);
  return r;
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

/* jnp.vdot: dot of the flattened operands (equal sizes), x conjugated first when
 * complex (JAX: dot(ravel(conj(a)), ravel(b))). */
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
  if (dtype_is_complex(x->dtype)) x = jx_conj(x);
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
