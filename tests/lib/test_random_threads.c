/* test_random_threads.c -- jax.random's samplers called from many threads at once: the
 * cache of jitted samplers (src/lib/random_samplers.c) is looked up, filled and --
 * bounded to fewer entries than the calls' keys -- evicted while other threads run the
 * functions it hands out. Every sample must equal the one computed beforehand on the
 * main thread, and nothing leaks (the cache's arrays released with it). Built also
 * under ThreadSanitizer by tools/test.sh (build-tsan/). Checks run on the main thread
 * (the test layer's counters are not atomic): each worker records its first failure. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "lib/random.h"
#include "test.h"
#include "trace/trace.h"

#define NTHREADS 8
#define ROUNDS 20
#define NCALLS 9

typedef struct Call {
  int kind; /* 0 normal, 1 gumbel, 2 truncated_normal(-1.5, 2), 3 gamma(2.5) and 4
               poisson(3) (their loops run compiled, in pieces), 5 permutation(n) */
  int64_t n;
} Call;
static const Call CALLS[NCALLS] = {{0, 3}, {0, 128}, {1, 128}, {2, 17}, {1, 3}, {0, 1000}, {3, 64}, {4, 64}, {5, 50}};

static jx_array *sample(const Call *c, jx_array *key) {
  jx_array *p, *r;
  switch (c->kind) {
  case 0: return jx_random_normal(key, 1, &c->n, JX_FLOAT32);
  case 1: return jx_random_gumbel(key, 1, &c->n, JX_FLOAT32);
  case 3:
  case 4: /* 4-byte samples, compared as bytes */
    p = jx_full(0, NULL, c->kind == 3 ? 2.5 : 3.0, JX_FLOAT32);
    r = c->kind == 3 ? jx_random_gamma(key, p, 1, &c->n, JX_FLOAT32) : jx_random_poisson(key, p, 1, &c->n, JX_INT32);
    jx_free(p);
    return r;
  case 5: return jx_random_permutation(key, NULL, c->n, 0, false);
  default: return jx_random_truncated_normal(key, -1.5, 2.0, 1, &c->n, JX_FLOAT32);
  }
}

typedef struct Worker {
  int id;
  jx_array *key;             /* shared, read only */
  float *expect[NCALLS];     /* the main thread's samples */
  pthread_barrier_t *start;
  int calls, bad;
  char first[256];
} Worker;

static void *work(void *arg) {
  Worker *w = arg;
  pthread_barrier_wait(w->start);
  float got[1000];
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < NCALLS; k++) {
      const Call *c = &CALLS[(k + w->id + r) % NCALLS]; /* threads on different keys */
      jx_array *x = sample(c, w->key);
      bool ok = x && jx_read(x, got, (size_t)c->n * sizeof *got) == JX_OK &&
                memcmp(got, w->expect[c - CALLS], (size_t)c->n * sizeof *got) == 0;
      if (!ok && !w->bad++)
        snprintf(w->first, sizeof w->first, "thread %d round %d call %d: %s", w->id, r, (int)(c - CALLS),
                 x ? "different values" : jx_last_error());
      jx_clear_error();
      jx_free(x);
      w->calls++;
    }
  return NULL;
}

static void run_threads(jx_array *key, float **expect) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, NTHREADS);
  Worker w[NTHREADS];
  pthread_t th[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    w[t] = (Worker){.id = t, .key = key, .start = &start};
    memcpy(w[t].expect, expect, sizeof w[t].expect);
    CHECK(pthread_create(&th[t], NULL, work, &w[t]) == 0);
  }
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&start);
  for (int t = 0; t < NTHREADS; t++) {
    CHECK_EQ_INT(w[t].calls, ROUNDS * NCALLS);
    CHECK_MSG(w[t].bad == 0, "%d bad samples; first: %s", w[t].bad, w[t].first);
  }
}

static void test_samplers_from_threads(void) {
  int64_t internal = array_internal_live(), internal_fns = fn_internal_live();
  random_sampler_cache_clear();
  jx_array *key = jx_random_key(11);
  float *expect[NCALLS];
  for (int k = 0; k < NCALLS; k++) { /* the references, on this thread */
    jx_array *x = sample(&CALLS[k], key);
    expect[k] = malloc((size_t)CALLS[k].n * sizeof(float));
    CHECK(x && expect[k] && jx_read(x, expect[k], (size_t)CALLS[k].n * sizeof(float)) == JX_OK);
    jx_free(x);
  }
  /* warm: every key cached; cold with a bound below the keys: lookups, inserts and
   * evictions race with calls of the functions evicted */
  run_threads(key, expect);
  random_sampler_cache_clear();
  random_sampler_cache_set_bounds(3, 0);
  run_threads(key, expect);
  RandomSamplerCacheStats s = random_sampler_cache_stats();
  CHECK(s.entries <= 3);
  CHECK(s.evictions > 0);
  random_sampler_cache_set_bounds(0, 0);
  random_sampler_cache_clear();
  CHECK_EQ_INT(array_internal_live(), internal);
  CHECK_EQ_INT(fn_internal_live(), internal_fns);
  for (int k = 0; k < NCALLS; k++) free(expect[k]);
  jx_free(key);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_samplers_from_threads);
  if (jx_live_fns() != fns) test_fail(__FILE__, __LINE__, "leaked %lld functions", (long long)(jx_live_fns() - fns));
  return test_finish();
}
