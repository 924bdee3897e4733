/* creation.c -- jnp array constructors: full/zeros/ones (and *_like), arange, linspace,
 * eye, tri, tril, triu. Constants are one 0-d value broadcast (a view); ranges and
 * triangles come from iota and comparisons. Formulas from jax/_src/numpy/lax_numpy.py
 * (_arange, tri, tril, triu), array_creation.py (_linspace) and lax._eye. */
#include <math.h>

#include "lib/numpy/np.h"

/* Every public function runs in its own scope: temporaries die at its end, only the
 * result survives (a NULL result is fine). */
/* A 0-d constant of dtype (weak as given) broadcast to shape. */
static jx_array *const_shaped(double value, jx_dtype dtype, bool weak, int ndim,
                              const int64_t *shape) {
  jx_array *c = np_constant(value, dtype);
  if (c && weak) c = prim_convert(c, dtype, true);
  if (!c || ndim == 0) return c;
  int none[1] = {0};
  return prim_broadcast_in_dim(c, ndim, shape, none);
}

/* Validates a user dtype and returns its canonical form (x64 mode). */
static bool user_dtype(const char *fn, jx_dtype *dtype) {
  if (!dtype_is_valid(*dtype)) {
    char b[DTYPE_INVALID_BUF];
    error_set(JX_ERR_DTYPE, "%s: invalid dtype %s", fn, dtype_invalid_str(*dtype, b));
    return false;
  }
  *dtype = dtype_canonicalize(*dtype);
  return true;
}

/* ---------------------------------------------------------- full, zeros, ones */

static jx_array *full_impl(const char *fn, int ndim, const int64_t *shape, double value,
                           jx_dtype dtype) {
  if (!array_check_shape(fn, ndim, shape) || !user_dtype(fn, &dtype)) return NULL;
  jx_scope_begin();
  return np_scope_return(const_shaped(value, dtype, false, ndim, shape));
}

jx_array *jx_full(int ndim, const int64_t *shape, double value, jx_dtype dtype) {
  return full_impl("jx_full", ndim, shape, value, dtype);
}

jx_array *jx_zeros(int ndim, const int64_t *shape, jx_dtype dtype) {
  if (dtype == JX_FLOAT0) /* jnp.zeros(shape, float0): holds no data */
    return array_check_shape("jx_zeros", ndim, shape) ? array_float0(ndim, shape) : NULL;
  return full_impl("jx_zeros", ndim, shape, 0.0, dtype);
}

jx_array *jx_ones(int ndim, const int64_t *shape, jx_dtype dtype) {
  return full_impl("jx_ones", ndim, shape, 1.0, dtype);
}

/* lax.full_like keeps the weak type of `a` (dtype not given). */
static jx_array *full_like_impl(const char *fn, jx_array *a, double value) {
  if (np_null_arg(fn, a, "a")) return NULL;
  if (a->dtype == JX_FLOAT0) { /* zeros_like keeps float0; it has no other value */
    if (value == 0.0) return array_float0(a->ndim, a->shape);
    error_set(JX_ERR_DTYPE, "%s: a float0 array holds no value %g", fn, value);
    return NULL;
  }
  jx_scope_begin();
  return np_scope_return(const_shaped(value, a->dtype, a->weak, a->ndim, a->shape));
}

jx_array *jx_zeros_like(jx_array *a) { return full_like_impl("jx_zeros_like", a, 0.0); }
jx_array *jx_ones_like(jx_array *a) { return full_like_impl("jx_ones_like", a, 1.0); }
jx_array *jx_full_like(jx_array *a, double value) {
  return full_like_impl("jx_full_like", a, value);
}

/* ------------------------------------------------------------------ ranges */

/* jnp.arange(start, stop, step, dtype), as lax_numpy._arange with a step: size
 * ceil((stop - start) / step) (at least 0), values start + step * iota computed in
 * the dtype (float16/bfloat16 in float32), then converted. bool: JX_ERR_DTYPE. */
jx_array *jx_arange(double start, double stop, double step, jx_dtype dtype) {
  const char *fn = "jx_arange";
  if (!user_dtype(fn, &dtype)) return NULL;
  if (dtype_is_bool(dtype)) { /* lax.iota rejects bool, so jnp.arange does */
    error_set(JX_ERR_DTYPE, "%s: dtype bool is not supported (iota needs a number type)", fn);
    return NULL;
  }
  if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step)) {
    error_set(JX_ERR_VALUE, "%s: start %g, stop %g and step %g must be finite, step nonzero",
              fn, start, stop, step);
    return NULL;
  }
  double len = ceil((stop - start) / step);
  if (!(len < 9.2e18)) {
    error_set(JX_ERR_OOM, "%s: %g elements (start %g, stop %g, step %g) overflow int64", fn,
              len, start, stop, step);
    return NULL;
  }
  int64_t n = len > 0 ? (int64_t)len : 0;
  jx_dtype wd = dtype == JX_FLOAT16 || dtype == JX_BFLOAT16 ? JX_FLOAT32 : dtype;
  jx_scope_begin();
  jx_array *iota = prim_iota(wd, 1, &n, 0);
  jx_array *r = prim_binary(PRIM_mul, const_shaped(step, wd, false, 1, &n), iota);
  r = prim_binary(PRIM_add, const_shaped(start, wd, false, 1, &n), r);
  return np_scope_return(r ? np_convert(r, dtype, false) : NULL);
}

/* jnp.linspace(start, stop, num, endpoint=True, dtype). array_creation._linspace
 * computes, in the computation dtype cd (the dtype; the default float for bool/int),
 * step = iota(n) / n (n = num - 1) and start * (1 - step) + stop * step, then appends
 * stop; integer dtypes take the floor before converting. The values are those XLA
 * computes for that graph on CPU: its algebraic simplifier turns the division by the
 * constant into a product with r = 1 / n (rounded to cd) and reassociates stop * (iota *
 * r) into iota * (stop * r); it keeps the division for bfloat16 (observed with jax 0.10 /
 * XLA CPU: these forms reproduce its float16 and bfloat16 results exactly). float32 and
 * float64: see linspace_fma. */
static jx_array *linspace_body(jx_array *start, jx_array *stop, int64_t num, jx_dtype cd,
                               bool endpoint) {
  int64_t div = endpoint ? num - 1 : num, one = 1;
  int none[1] = {0};
  jx_array *io = prim_iota(cd, 1, &div, 0), *step, *b;
  if (cd == JX_BFLOAT16) {
    step = prim_binary(PRIM_div, io, const_shaped((double)div, cd, false, 1, &div));
    b = prim_binary(PRIM_mul, prim_broadcast_in_dim(stop, 1, &div, none), step);
  } else {
    jx_array *r = prim_binary(PRIM_div, np_constant(1, cd), np_constant((double)div, cd));
    jx_array *sr = prim_binary(PRIM_mul, stop, r);
    step = prim_binary(PRIM_mul, io, prim_broadcast_in_dim(r, 1, &div, none));
    b = prim_binary(PRIM_mul, io, prim_broadcast_in_dim(sr, 1, &div, none));
  }
  jx_array *one_m = prim_binary(PRIM_sub, const_shaped(1, cd, false, 1, &div), step);
  jx_array *a = prim_binary(PRIM_mul, prim_broadcast_in_dim(start, 1, &div, none), one_m);
  jx_array *parts[2] = {prim_binary(PRIM_add, a, b), prim_reshape(stop, 1, &one)};
  return endpoint ? prim_concatenate(2, parts, 0) : parts[0];
}

/* float32 / float64 linspace bit for bit as XLA's CPU backend computes the graph above,
 * which LLVM contracts into FMAs differently by size (jax/jaxlib 0.10.2 on x86-64, read
 * from XLA's optimized LLVM IR, --xla_dump_to, and checked element by element against
 * jnp.linspace on 2,700 float32 and 380 float64 (start, stop, num)). With n = num - 1
 * elements before stop, i = iota, r = 1/n, sr = stop * r (rounded), U = 1 - i*r (two
 * roundings) and u = fma(-i, r, 1), by n (float32 / float64 limits):
 *   <= 35 / 33          fully unrolled scalar code, U constant-folded: fma(i, sr, start*U),
 *                       but element 1 (i*sr folds to sr) fuses the other product:
 *                       fma(start, U, sr)
 *   <= 223 / 175        unrolled vectors, U folded: fma(i, sr, start*U)
 *   < 4442 / 65533      a vector loop over the first n/8*8 (float32; float64: n/16*16, 4
 *                       lanes x 4), U contracted: fma(i, sr, start*u); then the unrolled
 *                       scalar tail as above
 *   larger              split into parallel workgroups: n even, vector loops:
 *                       fma(i, sr, start*u); n odd, scalar loops whose adds fuse the other
 *                       product: fma(start, u, i*sr)
 * (LLVM's vector width: XLA asks for 256-bit vectors on every x86-64 target.) */
typedef struct {
  int64_t scalar_max, unrolled_max, block, parallel_min;
} LinspaceRegimes;
static const LinspaceRegimes linspace_f32_regimes = {35, 223, 8, 4442};
static const LinspaceRegimes linspace_f64_regimes = {33, 175, 16, 65533};

static jx_array *linspace_fma(jx_array *start, jx_array *stop, int64_t num, jx_dtype cd,
                              const LinspaceRegimes *g, bool endpoint) {
  int64_t n = endpoint ? num - 1 : num, one = 1;
  int none[1] = {0};
  jx_array *io = prim_iota(cd, 1, &n, 0);
  jx_array *r = prim_binary(PRIM_div, np_constant(1, cd), np_constant((double)n, cd));
  jx_array *sr = prim_binary(PRIM_mul, stop, r);
  jx_array *rb = prim_broadcast_in_dim(r, 1, &n, none), *srb = prim_broadcast_in_dim(sr, 1, &n, none);
  jx_array *s = prim_broadcast_in_dim(start, 1, &n, none), *c1 = const_shaped(1, cd, false, 1, &n);
  jx_array *U = prim_binary(PRIM_sub, c1, prim_binary(PRIM_mul, io, rb));
  jx_array *u = prim_fma(prim_unary(PRIM_neg, io), rb, c1);
  jx_array *vec = prim_fma(io, srb, prim_binary(PRIM_mul, s, u));
  jx_array *folded = prim_fma(io, srb, prim_binary(PRIM_mul, s, U)), *body;
  if (n <= g->scalar_max) {
    jx_array *first = prim_binary(PRIM_eq, io, const_shaped(1, cd, false, 1, &n));
    body = prim_select(first, prim_fma(s, U, srb), folded);
  } else if (n <= g->unrolled_max) {
    body = folded;
  } else if (n < g->parallel_min - (!endpoint && cd == JX_FLOAT32)) {
    /* float32 endpoint=False goes parallel one value earlier (observed) */
    int64_t nv = n / g->block * g->block;
    body = nv == n ? vec : prim_select(prim_binary(PRIM_lt, io, const_shaped((double)nv, cd, false, 1, &n)), vec, folded);
  } else {
    body = n % 2 == 0 ? vec : prim_fma(s, u, prim_binary(PRIM_mul, io, srb));
  }
  jx_array *parts[2] = {body, prim_reshape(stop, 1, &one)};
  return endpoint ? prim_concatenate(2, parts, 0) : body;
}

/* array_creation._linspace of 0-d start and stop of the computation dtype cd (a real
 * floating dtype), endpoint=True, num >= 1: (num,) in cd, as XLA's CPU backend computes
 * it. jx_linspace and jnp.histogram_bin_edges (histogram.c) use it. */
static jx_array *linspace_ep(jx_array *start, jx_array *stop, int64_t num, jx_dtype cd,
                             bool endpoint) {
  if (!start || !stop) return NULL;
  if (num == 1 && endpoint) {
    int64_t one = 1;
    return prim_reshape(start, 1, &one);
  }
  if (cd == JX_FLOAT32) return linspace_fma(start, stop, num, cd, &linspace_f32_regimes, endpoint);
  if (cd == JX_FLOAT64) return linspace_fma(start, stop, num, cd, &linspace_f64_regimes, endpoint);
  return linspace_body(start, stop, num, cd, endpoint);
}

jx_array *np_linspace(jx_array *start, jx_array *stop, int64_t num, jx_dtype cd) {
  return linspace_ep(start, stop, num, cd, true);
}

jx_array *jx_linspace(double start, double stop, int64_t num, jx_dtype dtype) {
  return jx_linspace_endpoint(start, stop, num, true, dtype);
}

jx_array *jx_linspace_endpoint(double start, double stop, int64_t num, bool endpoint,
                               jx_dtype dtype) {
  const char *fn = endpoint ? "jx_linspace" : "jx_linspace_endpoint";
  if (!user_dtype(fn, &dtype)) return NULL;
  if (num < 0) {
    error_set(JX_ERR_VALUE, "%s: number of samples %lld must be non-negative", fn,
              (long long)num);
    return NULL;
  }
  int64_t shape[1] = {num};
  if (!array_check_shape(fn, 1, shape)) return NULL;
  /* computation_dtype (to_inexact_dtype), in its real part: start and stop are real */
  jx_dtype cd = dtype_real_part(dtype_to_inexact(dtype));
  jx_scope_begin();
  jx_array *out = num == 0 ? const_shaped(start, cd, false, 1, &num)
                           : linspace_ep(np_constant(start, cd), np_constant(stop, cd), num, cd,
                                         endpoint);
  if (out && dtype_is_integer(dtype)) out = prim_unary(PRIM_floor, out);
  return np_scope_return(out ? np_convert(out, dtype, false) : NULL);
}

/* ------------------------------------------------------------- triangles */

/* Bool (n, m) mask of iota0 + k `cmp` iota1: eq for eye, "iota1 <= iota0 + k" for tri.
 * k is clamped to [-n, m], which changes no entry and keeps the index arithmetic in
 * range. */
static jx_array *diag_mask(const char *fn, int64_t n, int64_t m, int64_t k, bool lower) {
  int64_t shape[2] = {n, m};
  if (!array_check_shape(fn, 2, shape)) return NULL;
  k = k < -n ? -n : k > m ? m : k;
  jx_dtype it = dtype_default_int(); /* as lax._eye / _tri: default-int iotas */
  jx_array *i0 = prim_iota(it, 2, shape, 0), *i1 = prim_iota(it, 2, shape, 1);
  jx_array *ik = prim_binary(PRIM_add, i0, const_shaped((double)k, it, false, 2, shape));
  if (!lower) return prim_binary(PRIM_eq, ik, i1);
  return prim_unary(PRIM_not, prim_binary(PRIM_lt, ik, i1));
}

jx_array *jx_eye_k(int64_t n, int64_t m, int64_t k, jx_dtype dtype) {
  if (!user_dtype("jx_eye_k", &dtype)) return NULL;
  jx_scope_begin();
  jx_array *mask = diag_mask("jx_eye_k", n, m, k, false);
  return np_scope_return(mask ? np_convert(mask, dtype, false) : NULL);
}

jx_array *jx_eye(int64_t n, jx_dtype dtype) {
  if (!user_dtype("jx_eye", &dtype)) return NULL;
  jx_scope_begin();
  jx_array *mask = diag_mask("jx_eye", n, n, 0, false);
  return np_scope_return(mask ? np_convert(mask, dtype, false) : NULL);
}

jx_array *jx_tri(int64_t n, int64_t m, int64_t k, jx_dtype dtype) {
  if (!user_dtype("jx_tri", &dtype)) return NULL;
  jx_scope_begin();
  jx_array *mask = diag_mask("jx_tri", n, m, k, true);
  return np_scope_return(mask ? np_convert(mask, dtype, false) : NULL);
}

/* tril keeps a where tri(k) holds; triu keeps a where tri(k - 1) does not (as
 * lax_numpy.tril/triu). The mask covers the last two axes and broadcasts. */
static jx_array *tri_select(const char *fn, jx_array *a, int64_t k, bool lower) {
  if (np_null_arg(fn, a, "a")) return NULL;
  if (a->ndim < 2) {
    char b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: input must be at least 2-d, got shape %s", fn,
              error_shape_str(b, a->ndim, a->shape));
    return NULL;
  }
  int64_t n = a->shape[a->ndim - 2], m = a->shape[a->ndim - 1];
  if (!lower) k = k <= -n ? -n : k - 1;
  jx_scope_begin();
  int bd[2] = {a->ndim - 2, a->ndim - 1};
  jx_array *mask = prim_broadcast_in_dim(diag_mask(fn, n, m, k, true), a->ndim, a->shape, bd);
  jx_array *zero = const_shaped(0, a->dtype, a->weak, a->ndim, a->shape);
  jx_array *r = lower ? prim_select(mask, a, zero) : prim_select(mask, zero, a);
  return np_scope_return(r);
}

jx_array *jx_tril(jx_array *a, int64_t k) { return tri_select("jx_tril", a, k, true); }
jx_array *jx_triu(jx_array *a, int64_t k) { return tri_select("jx_triu", a, k, false); }
