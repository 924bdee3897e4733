/* test_random_cache.c -- the cache of jitted samplers (src/lib/random_samplers.c): a
 * repeated call reuses one jitted function with the same bits as a fresh jit of the
 * call; what the cache keeps is not counted by jx_live_arrays / jx_live_fns (so a
 * test's leak check passes with a warm cache) while every array handed to the user
 * still is, and all of it is released with the cache; the cache stays within its
 * bounds; a tracer key still inlines (no cache); function scopes, x64 mode and errors
 * behave as before. Threads: test_random_threads.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "lib/random.h"
#include "test.h"
#include "trace/trace.h"

/* Bytes of a (as float64) equal those of b. */
static bool same_values(jx_array *a, jx_array *b) {
  if (!a || !b || jx_size(a) != jx_size(b) || jx_dtype_of(a) != jx_dtype_of(b)) return false;
  double *x = test_read_f64(a), *y = test_read_f64(b);
  bool same = x && y && memcmp(x, y, (size_t)jx_size(a) * sizeof *x) == 0;
  free(x), free(y);
  return same;
}

/* normal(key) inside the user's own jit: the key is a tracer there, so the sampler is
 * inlined into this function's jaxpr (the path without the cache). */
static jx_status normal_of_key(void *ctx, jx_array *const *in, jx_array **out) {
  const int64_t *n = ctx;
  out[0] = jx_random_normal(in[0], 1, n, JX_FLOAT32);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_repeated_calls_hit_with_same_bits(void) {
  jx_array *key = jx_random_key(7);
  int64_t n = 37;
  RandomSamplerCacheStats s0 = random_sampler_cache_stats();
  jx_array *a = jx_random_normal(key, 1, &n, JX_FLOAT32);
  RandomSamplerCacheStats s1 = random_sampler_cache_stats();
  jx_array *b = jx_random_normal(key, 1, &n, JX_FLOAT32);
  RandomSamplerCacheStats s2 = random_sampler_cache_stats();
  CHECK(a && b && a != b);
  CHECK(same_values(a, b));
  CHECK_EQ_INT(s1.misses, s0.misses + 1);
  CHECK_EQ_INT(s2.hits, s1.hits + 1);
  CHECK_EQ_INT(s2.misses, s1.misses);
  /* under the user's jit (tracer key): inlined, the cache untouched, the same bits */
  jx_fn *f = jx_fn_new("normal_of_key", 1, 1, normal_of_key, &n), *jf = jx_jit(f);
  jx_array *c = NULL;
  CHECK(jx_call(jf, &key, &c) == JX_OK);
  RandomSamplerCacheStats s3 = random_sampler_cache_stats();
  CHECK_EQ_INT(s3.hits, s2.hits);
  CHECK_EQ_INT(s3.misses, s2.misses);
  CHECK(same_values(a, c));
  /* another shape, dtype or sampler is another entry */
  jx_array *d = jx_random_normal(key, 1, (int64_t[]){38}, JX_FLOAT32);
  jx_array *e = jx_random_gumbel(key, 1, &n, JX_FLOAT32);
  jx_array *g = jx_random_truncated_normal(key, -1.0, 1.0, 1, &n, JX_FLOAT32);
  jx_array *h = jx_random_truncated_normal(key, -1.0, 2.0, 1, &n, JX_FLOAT32);
  CHECK_EQ_INT(random_sampler_cache_stats().misses, s3.misses + 4);
  CHECK(d && e && g && h && !same_values(g, h));
  jx_free(a), jx_free(b), jx_free(c), jx_free(d), jx_free(e), jx_free(g), jx_free(h);
  jx_fn_free(jf), jx_fn_free(f);
  jx_free(key);
}

/* The cache's arrays and functions are the library's; the user's still count. */
static void test_live_counts(void) {
  random_sampler_cache_clear();
  int64_t arrays = jx_live_arrays(), fns = jx_live_fns();
  int64_t internal = array_internal_live(), internal_fns = fn_internal_live();
  jx_array *key = jx_random_key(3);
  CHECK_EQ_INT(jx_live_arrays(), arrays + 1);
  int64_t sh[2] = {4, 5};
  /* a miss (trace, lower, compile) and a hit: each hands the user exactly one array */
  for (int rep = 0; rep < 2; rep++) {
    jx_array *x = jx_random_exponential(key, 2, sh, JX_FLOAT32);
    CHECK(x != NULL);
    CHECK_EQ_INT(jx_live_arrays(), arrays + 2);
    CHECK_EQ_INT(jx_live_fns(), fns);
    jx_free(x);
    CHECK_EQ_INT(jx_live_arrays(), arrays + 1);
  }
  CHECK(array_internal_live() > internal); /* the jitted sampler's constants */
  CHECK(fn_internal_live() > internal_fns);
  /* a real leak is still seen: an unfreed sample counts, as does an array the user
   * made while a sampler ran on another thread's behalf (only the span's own arrays
   * are the library's) */
  jx_array *leak = jx_random_laplace(key, 1, (int64_t[]){9}, JX_FLOAT32);
  CHECK_EQ_INT(jx_live_arrays(), arrays + 2);
  array_internal_begin();
  jx_array *made_inside = jx_zeros(1, (int64_t[]){2}, JX_FLOAT32);
  array_internal_end();
  jx_array *mine = jx_zeros(1, (int64_t[]){2}, JX_FLOAT32);
  CHECK_EQ_INT(jx_live_arrays(), arrays + 3);
  made_inside = array_claim(made_inside); /* handed to the user: counted from now on */
  CHECK_EQ_INT(jx_live_arrays(), arrays + 4);
  jx_free(made_inside), jx_free(mine), jx_free(leak);
  CHECK_EQ_INT(jx_live_arrays(), arrays + 1);
  jx_free(key);
  /* everything the cache held goes with it */
  random_sampler_cache_clear();
  CHECK_EQ_INT(random_sampler_cache_stats().entries, 0);
  CHECK_EQ_INT(array_internal_live(), internal);
  CHECK_EQ_INT(fn_internal_live(), internal_fns);
  CHECK_EQ_INT(jx_live_arrays(), arrays);
}

/* array_claim of an array that a cache still holds: the user gets an array of its own
 * (counted, same data) and the cache's stays the library's. */
static void test_claim_shared(void) {
  int64_t arrays = jx_live_arrays(), internal = array_internal_live();
  array_internal_begin();
  jx_array *a = jx_arange(0, 6, 1, JX_FLOAT32);
  array_retain(a); /* the cache's reference */
  array_internal_end();
  CHECK_EQ_INT(jx_live_arrays(), arrays);
  CHECK_EQ_INT(array_internal_live(), internal + 1);
  jx_array *b = array_claim(a); /* consumes the caller's reference to a */
  CHECK(b != NULL && b != a);
  CHECK_EQ_INT(jx_live_arrays(), arrays + 1);
  double *v = test_read_f64(b);
  CHECK(v && v[0] == 0 && v[5] == 5);
  free(v);
  jx_free(b);
  array_drop(a);
  CHECK_EQ_INT(jx_live_arrays(), arrays);
  CHECK_EQ_INT(array_internal_live(), internal);
}

/* At most `max` entries; new shapes evict the least recently used. */
static void test_bounded(void) {
  random_sampler_cache_clear();
  random_sampler_cache_set_bounds(4, 0);
  jx_array *key = jx_random_key(1);
  int64_t ev = random_sampler_cache_stats().evictions;
  for (int64_t n = 1; n <= 10; n++) {
    jx_free(jx_random_normal(key, 1, &n, JX_FLOAT32));
    CHECK(random_sampler_cache_stats().entries <= 4);
  }
  RandomSamplerCacheStats s = random_sampler_cache_stats();
  CHECK_EQ_INT(s.entries, 4);
  CHECK_EQ_INT(s.evictions, ev + 6);
  CHECK_EQ_INT(s.elements, 7 + 8 + 9 + 10);
  /* the most recent shapes hit, an evicted one misses */
  int64_t n = 10, one = 1;
  jx_free(jx_random_normal(key, 1, &n, JX_FLOAT32));
  CHECK_EQ_INT(random_sampler_cache_stats().hits, s.hits + 1);
  jx_free(jx_random_normal(key, 1, &one, JX_FLOAT32));
  CHECK_EQ_INT(random_sampler_cache_stats().misses, s.misses + 1);
  /* the element budget: 30 + 40 evicts 30; a sample past it is jitted for its call alone */
  random_sampler_cache_clear();
  random_sampler_cache_set_bounds(0, 64);
  int64_t n30 = 30, n40 = 40, n65 = 65;
  jx_free(jx_random_normal(key, 1, &n30, JX_FLOAT32));
  jx_free(jx_random_normal(key, 1, &n40, JX_FLOAT32));
  s = random_sampler_cache_stats();
  CHECK_EQ_INT(s.entries, 1);
  CHECK_EQ_INT(s.elements, 40);
  jx_array *g = jx_random_gumbel(key, 1, &n65, JX_FLOAT32);
  CHECK(g != NULL);
  CHECK_EQ_INT(random_sampler_cache_stats().entries, 1);
  CHECK_EQ_INT(random_sampler_cache_stats().misses, s.misses);
  jx_free(g);
  random_sampler_cache_set_bounds(0, 0);
  jx_free(key);
}

/* The cache keeps its functions out of the caller's function scopes. */
static void test_function_scopes(void) {
  random_sampler_cache_clear();
  jx_array *key = jx_random_key(5);
  int64_t n = 11;
  jx_fn_scope_begin();
  jx_array *a = jx_random_cauchy(key, 1, &n, JX_FLOAT32); /* a miss: made inside the scope */
  jx_fn_scope_end(0, NULL);
  jx_array *b = jx_random_cauchy(key, 1, &n, JX_FLOAT32); /* the cached function, alive */
  CHECK(same_values(a, b));
  CHECK_EQ_INT(random_sampler_cache_stats().entries, 1);
  jx_free(a), jx_free(b), jx_free(key);
}

/* x64 mode is part of the jitted function's own key: float64 samples after float32
 * ones of the same call come out float64. */
static void test_x64(void) {
  jx_array *key = jx_random_key(2);
  int64_t n = 6;
  jx_array *a = jx_random_logistic(key, 1, &n, JX_FLOAT64); /* float32 with x64 off */
  jx_config_enable_x64(true);
  jx_array *k64 = jx_random_key(2);
  jx_array *b = jx_random_logistic(k64, 1, &n, JX_FLOAT64);
  jx_array *c = jx_random_logistic(k64, 1, &n, JX_FLOAT64);
  jx_config_enable_x64(false);
  CHECK(a && b && c);
  CHECK_EQ_INT(jx_dtype_of(a), JX_FLOAT32);
  CHECK_EQ_INT(jx_dtype_of(b), JX_FLOAT64);
  CHECK(same_values(b, c));
  jx_free(a), jx_free(b), jx_free(c), jx_free(key), jx_free(k64);
}

/* uniform, bernoulli and randint take the cache too (a dropout mask's uniform ran as a
 * dozen eager ops, ~50 us a call): a repeat hits with the same bits; other bounds are
 * another entry; randint's bounds beyond the default int dtype still fail, clearly. */
static void test_uniform_bernoulli_randint(void) {
  jx_array *key = jx_random_key(5);
  int64_t n = 33;
  jx_array *u[2], *b[2], *r[2];
  int64_t hits = random_sampler_cache_stats().hits;
  for (int i = 0; i < 2; i++) {
    u[i] = jx_random_uniform(key, 1, &n, JX_FLOAT32, -1.0, 3.0);
    b[i] = jx_random_bernoulli(key, 0.3, 1, &n);
    r[i] = jx_random_randint(key, 1, &n, -5, 17, JX_INT32);
  }
  CHECK_EQ_INT(random_sampler_cache_stats().hits, hits + 3);
  CHECK(same_values(u[0], u[1]) && same_values(b[0], b[1]) && same_values(r[0], r[1]));
  CHECK(jx_dtype_of(b[0]) == JX_BOOL && jx_dtype_of(r[0]) == JX_INT32);
  int64_t misses = random_sampler_cache_stats().misses;
  jx_array *u2 = jx_random_uniform(key, 1, &n, JX_FLOAT32, -1.0, 2.0);
  jx_array *r2 = jx_random_randint(key, 1, &n, -5, 16, JX_INT32);
  CHECK_EQ_INT(random_sampler_cache_stats().misses, misses + 2);
  CHECK(u2 && r2 && !same_values(u[0], u2));
  CHECK(jx_random_randint(key, 1, &n, 0, (int64_t)1 << 40, JX_INT32) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_random_randint");
  for (int i = 0; i < 2; i++) jx_free(u[i]), jx_free(b[i]), jx_free(r[i]);
  jx_free(u2), jx_free(r2), jx_free(key);
}

/* permutation(x[i]) of one row, for vmap over x's rows with a concrete key: the operand
 * is a tracer there, so the sampler is inlined (no cache). */
static jx_status permute_row(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_random_permutation(ctx, in[0], 0, 0, false);
  return out[0] ? JX_OK : jx_last_status();
}

/* The samplers of arrays (categorical, permutation, choice, multivariate_normal) take
 * the cache too (permutation of 128 ran ~55 us, categorical of (8, 10) ~170 us): a
 * repeat hits with the same bits; another operand shape, axis or flag is another entry;
 * an operand that is a tracer inlines, with the bits of the concrete call. */
static void test_array_samplers(void) {
  jx_scope_begin(); /* releases every array below */
  jx_array *key = jx_random_key(9);
  jx_array *x = jx_reshape(jx_arange(0, 24, 1, JX_FLOAT32), 2, (int64_t[]){4, 6});
  jx_array *logits = jx_reshape(jx_arange(0, 2.4, 0.1, JX_FLOAT32), 2, (int64_t[]){4, 6});
  jx_array *p = jx_arange(1, 7, 1, JX_FLOAT32);
  jx_array *mean = jx_zeros(1, (int64_t[]){2}, JX_FLOAT32);
  jx_array *cov = jx_reshape(jx_array_from((float[]){2, 0.5f, 0.5f, 1}, JX_FLOAT32, 2, (int64_t[]){2, 2}), 2,
                             (int64_t[]){2, 2});
  enum { K = 7 };
  jx_array *r[2][K];
  int64_t s0 = random_sampler_cache_stats().hits, m0 = random_sampler_cache_stats().misses;
  for (int i = 0; i < 2; i++) {
    r[i][0] = jx_random_permutation(key, NULL, 50, 0, false);
    r[i][1] = jx_random_permutation(key, x, 0, 1, true);
    r[i][2] = jx_random_categorical(key, logits, -1);
    r[i][3] = jx_random_choice(key, x, 0, 1, (int64_t[]){3}, false, NULL);
    r[i][4] = jx_random_choice(key, NULL, 6, 2, (int64_t[]){2, 5}, true, p);
    r[i][5] = jx_random_choice(key, NULL, 6, 1, (int64_t[]){4}, false, p);
    r[i][6] = jx_random_multivariate_normal(key, mean, cov, 1, (int64_t[]){3}, JX_FLOAT32);
  }
  CHECK_EQ_INT(random_sampler_cache_stats().misses, m0 + K);
  CHECK_EQ_INT(random_sampler_cache_stats().hits, s0 + K);
  for (int k = 0; k < K; k++) CHECK(same_values(r[0][k], r[1][k]));
  CHECK(jx_ndim(r[0][3]) == 2 && jx_shape(r[0][3])[0] == 3 && jx_shape(r[0][3])[1] == 6);
  CHECK(jx_dtype_of(r[0][2]) == JX_INT32 && jx_shape(r[0][2])[0] == 4);
  /* other axes, flags and operand shapes are other entries */
  int64_t m1 = random_sampler_cache_stats().misses;
  jx_array *o[4] = {jx_random_permutation(key, x, 0, 0, true), jx_random_permutation(key, x, 0, 1, false),
                    jx_random_categorical(key, logits, 0),
                    jx_random_permutation(key, jx_reshape(x, 2, (int64_t[]){6, 4}), 0, 1, true)};
  CHECK_EQ_INT(random_sampler_cache_stats().misses, m1 + 4);
  CHECK(o[0] && o[1] && o[2] && o[3] && !same_values(o[0], r[0][1]));
  CHECK_EQ_INT(jx_shape(o[2])[0], 6);
  /* vmap over x's rows: each row is permuted as the concrete call permutes it */
  jx_fn *f = jx_fn_new("permute_row", 1, 1, permute_row, key), *vf = jx_vmap(f, NULL, NULL);
  jx_array *v = NULL;
  int64_t m2 = random_sampler_cache_stats().misses, h2 = random_sampler_cache_stats().hits;
  CHECK(jx_call(vf, &x, &v) == JX_OK);
  CHECK_EQ_INT(random_sampler_cache_stats().misses, m2);
  CHECK_EQ_INT(random_sampler_cache_stats().hits, h2);
  jx_array *row = jx_squeeze(jx_slice(x, 2, (int64_t[]){2, 0}, (int64_t[]){3, 6}, (int64_t[]){1, 1}), 1,
                             (int[]){0});
  jx_array *want = jx_random_permutation(key, row, 0, 0, false);
  jx_array *got = jx_squeeze(jx_slice(v, 2, (int64_t[]){2, 0}, (int64_t[]){3, 6}, (int64_t[]){1, 1}), 1,
                             (int[]){0});
  CHECK(same_values(want, got));
  jx_fn_free(vf), jx_fn_free(f);
  jx_scope_end(0, NULL);
}

/* jx_clear_caches (jax.clear_caches) empties the sampler cache and the eager op cache,
 * releases what the sampler cache held (the library's own live arrays back to where they
 * were), and later calls rebuild: a miss, the same bits. */
static void test_clear_caches(void) {
  random_sampler_cache_clear();
  int64_t internal = array_internal_live();
  jx_array *key = jx_random_key(11);
  int64_t n = 21;
  jx_array *a = jx_random_normal(key, 1, &n, JX_FLOAT32), *s = jx_sin(a);
  CHECK(random_sampler_cache_stats().entries == 1 && eager_cache_stats().entries > 0);
  jx_clear_caches();
  CHECK_EQ_INT(random_sampler_cache_stats().entries, 0);
  CHECK_EQ_INT(eager_cache_stats().entries, 0);
  CHECK_EQ_INT(array_internal_live(), internal);
  int64_t misses = random_sampler_cache_stats().misses;
  jx_array *b = jx_random_normal(key, 1, &n, JX_FLOAT32), *t = jx_sin(b);
  CHECK_EQ_INT(random_sampler_cache_stats().misses, misses + 1);
  CHECK(same_values(a, b) && same_values(s, t));
  jx_free(a), jx_free(b), jx_free(s), jx_free(t), jx_free(key);
}

/* Errors come before the cache, as they did. */
static void test_errors(void) {
  jx_array *key = jx_random_key(0);
  int64_t n = 4, neg = -1;
  CHECK(jx_random_normal(NULL, 1, &n, JX_FLOAT32) == NULL);
  CHECK(jx_last_status() != JX_OK);
  jx_clear_error();
  CHECK(jx_random_normal(key, 1, &neg, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_random_normal");
  CHECK(jx_random_normal(key, 1, &n, JX_INT32) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_random_normal");
  jx_array *bad = jx_zeros(1, &n, JX_FLOAT32);
  CHECK(jx_random_gumbel(bad, 1, &n, JX_FLOAT32) == NULL);
  CHECK(jx_last_status() != JX_OK);
  jx_clear_error();
  jx_free(bad), jx_free(key);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_repeated_calls_hit_with_same_bits);
  TEST_RUN(test_live_counts);
  TEST_RUN(test_claim_shared);
  TEST_RUN(test_bounded);
  TEST_RUN(test_function_scopes);
  TEST_RUN(test_x64);
  TEST_RUN(test_uniform_bernoulli_randint);
  TEST_RUN(test_array_samplers);
  TEST_RUN(test_clear_caches);
  TEST_RUN(test_errors);
  if (jx_live_fns() != fns) test_fail(__FILE__, __LINE__, "leaked %lld functions", (long long)(jx_live_fns() - fns));
  return test_finish();
}
