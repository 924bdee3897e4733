/* random.h -- private to src/lib/random*.c (jax.random): expression helpers, XLA's
 * CPU arithmetic (random.c) and the shared pieces of the samplers. Every function
 * returns a new reference registered with the open scope (callers run inside one) and
 * passes NULL through, so chains are checked once at their end. */
#ifndef JAXC_LIB_RANDOM_H
#define JAXC_LIB_RANDOM_H

#include "lib/numpy/np.h"

/* ------------------------------------------------------------ helpers */
/* Closes the public function's scope, keeping r. */
static inline jx_array *scope_return(jx_array *r) {
  jx_scope_end(1, &r);
  return r;
}

/* np_broadcast_to for operands built here (messages name "jx_random"). */
static inline jx_array *bcast(jx_array *x, int ndim, const int64_t *shape) {
  return np_broadcast_to("jx_random", x, ndim, shape);
}

/* Binary primitive p; a 0-d operand is broadcast to the other's shape (staged with it
 * under jit: np_broadcast_to_like). */
static inline jx_array *op2(Prim p, jx_array *x, jx_array *y) {
  if (!x || !y) return NULL;
  if (x->ndim == 0 && y->ndim > 0)
    x = np_broadcast_to_like("jx_random", x, y->ndim, y->shape, y);
  else if (y->ndim == 0 && x->ndim > 0)
    y = np_broadcast_to_like("jx_random", y, x->ndim, x->shape, x);
  return prim_binary(p, x, y);
}

/* p(x, c) with c a constant of x's dtype. */
static inline jx_array *opc(Prim p, jx_array *x, double c) {
  if (!x) return NULL;
  return op2(p, x, np_constant(c, x->dtype));
}

/* lax.select_n(cond, y, x), i.e. cond ? x : y, broadcasting 0-d x and y. */
static inline jx_array *sel(jx_array *cond, jx_array *x, jx_array *y) {
  if (!cond || !x || !y) return NULL;
  const jx_array *like = np_top_tracer(3, (jx_array *[]){cond, x, y});
  if (x->ndim == 0 && cond->ndim > 0) x = np_broadcast_to_like("jx_random", x, cond->ndim, cond->shape, like);
  if (y->ndim == 0 && cond->ndim > 0) y = np_broadcast_to_like("jx_random", y, cond->ndim, cond->shape, like);
  return prim_select(cond, x, y);
}

/* A 0-d constant of x's dtype. With x64 off np_constant would make a float64 request
 * float32; fma32's float64 temporaries only need constants exact in float32. */
static inline jx_array *cst(jx_array *x, double v) {
  if (!x) return NULL;
  if (x->dtype == JX_FLOAT64 && !dtype_x64())
    return prim_convert(np_constant(v, JX_FLOAT32), JX_FLOAT64, false);
  return np_constant(v, x->dtype);
}

/* ------------------------------------------------- random.c: arithmetic */
/* A 0-d integer constant of exactly `dtype` (any width, whatever the x64 mode). */
jx_array *random_uconst(uint64_t v, jx_dtype dtype);
/* jnp.finfo(d).nmant and .tiny of a float dtype. */
int random_nmant(jx_dtype d);
double random_tiny(jx_dtype d);
/* float32 a * b + c with one rounding (XLA contracts these on the CPU). */
jx_array *random_fma32(jx_array *a, jx_array *b, jx_array *c);
/* XLA's CPU log1p for float32; log / log1p for any float dtype as JAX computes them. */
jx_array *random_log1p_f32(jx_array *x);
jx_array *random_log(jx_array *x);
jx_array *random_log1p(jx_array *x);
/* exp as JAX computes it on the CPU: XLA's float32 exp_f32 polynomial for float32 (and
 * bfloat16 through float32), the primitive otherwise. */
jx_array *random_exp(jx_array *x);
/* lax.erf_inv as XLA lowers it (Giles' polynomials; float16/bfloat16 in float32);
 * exact: float32 bit for bit as JAX's (emulated FMAs, slow), else fused and fast. */
jx_array *random_erf_inv(jx_array *x, bool exact);

/* ------------------------------------------- random.c: keys and uniform */
/* Argument checks naming fn: a key (2,) (or (..., 2) when batched), a float dtype
 * (canonicalized in place), a user shape (NULL with ndim 0 replaced by an empty one). */
/* random_cache.c: a sampler's body run under jit, the jitted function kept across calls.
 * impl(ctx, in, out) computes the sample from in[0..nin) (the key first) and the static
 * arguments *ctx, a plain struct of ctx_size bytes (copied into the cache; eq(a, b)
 * compares two of them); size: the elements the call accounts for (its sample's or
 * operands', whichever is larger). With concrete operands, a call whose impl, eq, ctx
 * and operands' shapes and dtypes match an earlier one reuses its function; with a
 * tracer among them (under the user's jit, vmap, grad), a fresh jit inlines. A NULL
 * operand returns NULL (its error already set). Returns a new reference counted by
 * jx_live_arrays, or NULL with the error set (one from impl comes through). */
#define RANDOM_CACHED_MAX_IN 4
typedef jx_status (*RandomImpl)(void *ctx, jx_array *const *in, jx_array **out);
typedef bool (*RandomCallEq)(const void *a, const void *b);
jx_array *random_cached_call(const char *fn, RandomImpl impl, RandomCallEq eq, const void *ctx, size_t ctx_size,
                             int nin, jx_array *const *in, int64_t size);
/* The cache of jitted samplers (random_cache.c), for tests: lookups that found a
 * function (hits) or made one (misses), entries evicted past the bounds, entries and
 * sample elements held now. set_bounds bounds it to max_entries functions (<= 0: the
 * default, 64) and max_elements elements in all (<= 0: the default, 2^24; a
 * larger call is not cached), evicting the least recently used; clear drops every
 * entry (running calls keep theirs until they end). */
typedef struct RandomSamplerCacheStats {
  int64_t hits, misses, evictions;
  int entries;
  int64_t elements;
} RandomSamplerCacheStats;
RandomSamplerCacheStats random_sampler_cache_stats(void);
void random_sampler_cache_set_bounds(int max_entries, int64_t max_elements);
void random_sampler_cache_clear(void);

bool random_check_key(const char *fn, jx_array *key, bool batched);
bool random_check_float(const char *fn, jx_dtype *dtype);
bool random_check_shape(const char *fn, int ndim, const int64_t **shape);
/* jax.random.bits of bit_width 8/16/32/64 for key (..., 2): shape key.shape[:-1] + shape. */
jx_array *random_bits(jx_array *key, int bit_width, int ndim, const int64_t *shape);
/* jax.random.split(key) into its two keys. */
void random_split2(jx_array *key, jx_array **a, jx_array **b);
/* uniform in [minval, maxval) with bounds as arrays of dtype (0-d or broadcastable). */
jx_array *random_uniform_between(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                                 jx_array *minval, jx_array *maxval);
/* uniform with double bounds; `folded`: they are constants of JAX's program (see
 * random.c). */
jx_array *random_uniform(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype,
                         double minval, double maxval, bool folded);
/* jax.random.randint in a canonical integer dtype; fn names errors. */
jx_array *random_randint(const char *fn, jx_array *key, int ndim, const int64_t *shape,
                         int64_t minval, int64_t maxval, jx_dtype dtype);

/* --------------------------------- random_samplers.c: shared samplers */
/* core._normal_real and core._exponential, bit for bit (float32) as JAX's; key (2,). */
jx_array *random_normal(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
jx_array *random_exponential(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);
/* core._gumbel, mode "low". */
jx_array *random_gumbel(jx_array *key, int ndim, const int64_t *shape, jx_dtype dtype);

/* --------------------------------- random_gamma.c: parameter shapes */
/* The result shape of a sampler with parameter arrays ps (none NULL: JX_ERR_VALUE):
 * `shape` when ndim >= 0 (it must be the broadcast of itself with every parameter's
 * shape, JAX's _check_shape / _check_broadcast_shapes; JX_ERR_SHAPE), else the
 * broadcast of the parameters' shapes (shape=None). */
bool random_result_shape(const char *fn, int ndim, const int64_t *shape, int np, jx_array *const *ps,
                         int *nout, int64_t *out);

#endif
