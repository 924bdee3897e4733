/* np.c -- what every jax.numpy function does before its primitives: JAX type promotion
 * with weak types (jnp.result_type), NumPy broadcasting through broadcast_in_dim, and
 * the small helpers (constants, inexact promotion, shape strings) built on them. */
#include "lib/numpy/np.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "transform/transform.h"

/* -------------------------------------------------------------- promotion */

jx_dtype np_result_type(int n, jx_array *const *xs, bool *weak) {
  /* JAX's lattice join is associative (jax/_src/dtypes.py, _least_upper_bound), so a
   * left fold of the pairwise promotion equals jnp.result_type of all n. */
  jx_dtype d = xs[0]->dtype;
  bool w = xs[0]->weak;
  for (int i = 1; i < n; i++) d = dtype_promote(d, w, xs[i]->dtype, xs[i]->weak, &w);
  if (n == 1) d = dtype_canonicalize(d);
  if (weak) *weak = w;
  return d;
}

jx_array *np_convert(jx_array *x, jx_dtype dtype, bool weak) {
  if (!x) return NULL;
  if (x->dtype == dtype && x->weak == weak) return jx_ref(x);
  return prim_convert(x, dtype, weak);
}

bool np_no_float0(const char *fn, int n, jx_array *const *in) {
  for (int i = 0; i < n; i++)
    if (in[i]) array_check_live(fn, in[i]); /* an abort naming a released argument */
  for (int i = 0; i < n; i++)
    if (in[i] && in[i]->dtype == JX_FLOAT0) { /* JAX: "Called add with a float0 array" */
      char b[ARRAY_DESCRIBE_BUF];
      error_set(JX_ERR_DTYPE, "%s: argument %d is %s; float0 arrays (the tangent type of "
                "integer and bool values) take no operation, as in JAX", fn, i + 1,
                array_describe(b, in[i]));
      return false;
    }
  return true;
}

bool np_promote(const char *fn, int n, jx_array *const *in, jx_array **out) {
  for (int i = 0; i < n; i++) out[i] = NULL;
  for (int i = 0; i < n; i++)
    if (!in[i]) {
      error_set(JX_ERR_VALUE, "%s: argument %d is NULL", fn, i + 1);
      return false;
    }
  if (!np_no_float0(fn, n, in)) return false;
  bool weak;
  jx_dtype d = np_result_type(n, in, &weak);
  for (int i = 0; i < n; i++) {
    out[i] = np_convert(in[i], d, weak);
    if (!out[i]) {
      for (int j = 0; j < i; j++) jx_free(out[j]), out[j] = NULL;
      return false;
    }
  }
  return true;
}

/* ------------------------------------------------------------ broadcasting */

const char *np_shape_str(char *buf, const jx_array *x) {
  return error_shape_str(buf, x->ndim, x->shape);
}

/* "(2,3) and (4,)" or "(2,3), (4,) and (5,)" for n shapes. */
static void shapes_str(char *out, size_t cap, int n, jx_array *const *in) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < n && len < cap; i++) {
    char buf[ERROR_SHAPE_BUF];
    const char *sep = i == 0 ? "" : (i == n - 1 ? " and " : ", ");
    int k = snprintf(out + len, cap - len, "%s%s", sep, np_shape_str(buf, in[i]));
    if (k < 0) break;
    len += (size_t)k;
  }
}

bool np_broadcast_shapes(const char *fn, int n, jx_array *const *in, int *ndim,
                         int64_t *shape) {
  /* NumPy broadcasting: align trailing dims; each pair is equal or one of them is 1
   * (numpy.broadcast_shapes). A 0-size dim broadcasts only with 0 or 1. */
  int nd = 0;
  for (int i = 0; i < n; i++) {
    if (!in[i]) {
      error_set(JX_ERR_VALUE, "%s: argument %d is NULL", fn, i + 1);
      return false;
    }
    if (in[i]->ndim > nd) nd = in[i]->ndim;
  }
  for (int d = 0; d < nd; d++) shape[d] = 1;
  for (int i = 0; i < n; i++) {
    int off = nd - in[i]->ndim;
    for (int d = 0; d < in[i]->ndim; d++) {
      int64_t s = in[i]->shape[d], *r = &shape[off + d];
      if (s == *r || s == 1) continue;
      if (*r == 1) {
        *r = s;
        continue;
      }
      char buf[(ERROR_SHAPE_BUF + 8) * 4];
      shapes_str(buf, sizeof buf, n, in);
      error_set(JX_ERR_SHAPE, "%s: shapes %s do not broadcast", fn, buf);
      return false;
    }
  }
  *ndim = nd;
  return true;
}

jx_array *np_broadcast_to(const char *fn, jx_array *x, int ndim, const int64_t *shape) {
  return np_broadcast_to_like(fn, x, ndim, shape, NULL);
}

const jx_array *np_top_tracer(int n, jx_array *const *in) {
  const jx_array *top = NULL;
  for (int i = 0; i < n; i++) {
    Trace *t = trace_of(in[i]);
    if (t && (!top || t->level > trace_of(top)->level)) top = in[i];
  }
  return top;
}

jx_array *np_broadcast_to_like(const char *fn, jx_array *x, int ndim, const int64_t *shape, const jx_array *like) {
  if (!x) return NULL;
  if (x->ndim == ndim && (ndim == 0 || memcmp(x->shape, shape, (size_t)ndim * sizeof(int64_t)) == 0))
    return jx_ref(x);
  int off = ndim - x->ndim;
  bool ok = off >= 0;
  int bdims[JX_MAX_NDIM];
  for (int d = 0; ok && d < x->ndim; d++) {
    bdims[d] = off + d;
    ok = x->shape[d] == shape[off + d] || x->shape[d] == 1;
  }
  if (!ok) {
    char a[ERROR_SHAPE_BUF], b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: cannot broadcast shape %s to %s", fn, np_shape_str(a, x),
              error_shape_str(b, ndim, shape));
    return NULL;
  }
  if (like && !x->tracer) {
    PrimParams pp = {.ndim = ndim, .naxes = x->ndim};
    memcpy(pp.shape, shape, (size_t)ndim * sizeof *shape);
    if (x->ndim) memcpy(pp.axes, bdims, (size_t)x->ndim * sizeof *bdims);
    jx_array *r = stage_bind_like(like, PRIM_broadcast_in_dim, 1, &x, &pp);
    if (r) return r; /* else not staged (like is no staging tracer): as without like */
  }
  return prim_broadcast_in_dim(x, ndim, shape, bdims);
}

bool np_prepare(const char *fn, int n, jx_array *const *in, jx_array **out) {
  for (int i = 0; i < n; i++) out[i] = NULL;
  int ndim;
  int64_t shape[JX_MAX_NDIM];
  /* Shapes are checked before dtypes are converted, so a bad call does no work. */
  if (!np_broadcast_shapes(fn, n, in, &ndim, shape)) return false;
  jx_array *promoted[8];
  if (!JX_CHECK(n <= 8) || !np_promote(fn, n, in, promoted)) return false;
  bool ok = true;
  const jx_array *like = np_top_tracer(n, in);
  for (int i = 0; i < n; i++) {
    out[i] = ok ? np_broadcast_to_like(fn, promoted[i], ndim, shape, like) : NULL;
    ok = ok && out[i];
    jx_free(promoted[i]);
  }
  if (!ok)
    for (int i = 0; i < n; i++) jx_free(out[i]), out[i] = NULL;
  return ok;
}

/* ------------------------------------------------------------------ helpers */

jx_array *np_to_inexact(jx_array *x) {
  /* dtypes.to_inexact_dtype (dtype.h: float32 for bool and ints up to 32 bits); the
   * weak flag is the input's (promote_dtypes_inexact keeps lattice weakness). */
  if (!x) return NULL;
  if (dtype_is_inexact(x->dtype)) return jx_ref(x);
  return prim_convert(x, dtype_to_inexact(x->dtype), x->weak);
}

/* Rounds a double to the nearest float16 / bfloat16 (ties to even) directly, as
 * np.array(value, float16) does: going through float32 first can round twice. */
static uint16_t round_to_16(double v, bool bf16) {
  float (*to32)(uint16_t) = bf16 ? dtype_bf16_to_f32 : dtype_f16_to_f32;
  uint16_t h = bf16 ? dtype_f32_to_bf16((float)v) : dtype_f32_to_f16((float)v);
  if (isnan(v) || isinf(v) || isinf(to32(h))) return h; /* overflow rounds to +-inf */
  uint16_t best = h;
  double best_err = fabs((double)to32(h) - v);
  /* The double-rounded result is at most one step away; check both neighbours
   * (bit patterns of same-signed finite values are ordered like the values). */
  for (int k = -1; k <= 1; k += 2) {
    uint16_t c = (uint16_t)(h + k);
    if ((c & 0x7fff) == 0x7fff || ((c ^ h) & 0x8000)) continue; /* sign change / wrap */
    double cv = (double)to32(c);
    if (isnan(cv)) continue;
    double err = fabs(cv - v);
    if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) != 0)) {
      best = c;
      best_err = err;
    }
  }
  return best;
}

jx_array *np_constant(double value, jx_dtype dtype) {
  dtype = dtype_canonicalize(dtype);
  union {
    bool b;
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    float c64[2];
    double c128[2];
  } v;
  memset(&v, 0, sizeof v);
  /* Integer constants: a whole number (a Python int in JAX: jnp.full((), 300, int8)
   * is 44) converts as an integer, wrapping to the dtype's width; any other value as a
   * float does (XLA's convert: truncated toward zero, saturated, NaN to 0: 300.5 -> 127). */
  double c = value;
  if (dtype_is_integer(dtype) && c == trunc(c) && fabs(c) < 9223372036854775808.0) {
    uint64_t w = (uint64_t)(int64_t)c; /* two's complement bits, then the low ones */
    switch (dtype) {
    case JX_INT8: v.i8 = (int8_t)(uint8_t)w; break;
    case JX_UINT8: v.u8 = (uint8_t)w; break;
    case JX_INT16: v.i16 = (int16_t)(uint16_t)w; break;
    case JX_UINT16: v.u16 = (uint16_t)w; break;
    case JX_INT32: v.i32 = (int32_t)(uint32_t)w; break;
    case JX_UINT32: v.u32 = (uint32_t)w; break;
    case JX_INT64: v.i64 = (int64_t)w; break;
    default: v.u64 = w; break;
    }
    return array_from_host(&v, dtype, false, 0, NULL);
  }
  if (dtype_is_integer(dtype)) {
    if (isnan(c)) c = 0;
    if (c < dtype_min_value(dtype)) c = dtype_min_value(dtype);
    if (c > dtype_max_value(dtype)) c = dtype_max_value(dtype);
  }
  switch (dtype) {
  case JX_BOOL: v.b = value != 0; break;
  case JX_INT8: v.i8 = (int8_t)c; break;
  case JX_UINT8: v.u8 = (uint8_t)c; break;
  case JX_INT16: v.i16 = (int16_t)c; break;
  case JX_UINT16: v.u16 = (uint16_t)c; break;
  case JX_INT32: v.i32 = (int32_t)c; break;
  case JX_UINT32: v.u32 = (uint32_t)c; break;
  case JX_INT64: v.i64 = c >= 9223372036854775807.0 ? INT64_MAX : (int64_t)c; break;
  case JX_UINT64: v.u64 = c >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)c; break;
  case JX_FLOAT16: v.u16 = round_to_16(value, false); break;
  case JX_BFLOAT16: v.u16 = round_to_16(value, true); break;
  case JX_FLOAT32: v.f32 = (float)value; break;
  case JX_FLOAT64: v.f64 = value; break;
  case JX_COMPLEX64: v.c64[0] = (float)value; break; /* value + 0j */
  case JX_COMPLEX128: v.c128[0] = value; break;
  default:
    error_set(JX_ERR_DTYPE, "np_constant: invalid dtype %d", (int)dtype);
    return NULL;
  }
  return array_from_host(&v, dtype, false, 0, NULL);
}

jx_array *np_scope_return(jx_array *r) {
  jx_scope_end(1, &r);
  return r;
}

bool np_null_arg(const char *fn, const void *x, const char *what) {
  if (x) return false;
  error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, what);
  return true;
}

jx_array *np_lax_const(const jx_array *x, double value) {
  if (!x) return NULL;
  jx_array *c = np_constant(value, x->dtype);
  return x->weak && x->ndim == 0 ? np_convert(c, x->dtype, true) : c; /* c: the scope's */
}

jx_array *np_full(double value, jx_dtype dtype, int ndim, const int64_t *shape) {
  jx_array *c = np_constant(value, dtype);
  if (!c || ndim == 0) return c;
  return prim_broadcast_in_dim(c, ndim, shape, NULL);
}
