/* test_jit_threads.c -- one jitted function called from many threads at once (issue 12,
 * defect 1): the first calls race the default device's lazy init; every thread walks
 * more signatures than the trace cache holds (32), so entries are inserted, found and
 * evicted while other threads run them; results are checked against eager values and
 * nothing leaks. Built also under ThreadSanitizer by tools/test.sh (build-tsan/).
 * Checks run on the main thread (the test layer's counters are not atomic): each worker
 * records its first failure and its counts. */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>

#include "test.h"

#define NTHREADS 8
#define NSHAPES 40 /* > the 32 signatures a jitted function caches */
#define ROUNDS 3

/* f(x) = sum(tanh(x) * 2 + 1, axis 0): one fused kernel with a reduction. */
static jx_status model(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_add(jx_mul(jx_tanh(in[0]), jx_scalar(2.0)), jx_scalar(1.0)), 1, (int[]){0}, false);
  return out[0] ? JX_OK : jx_last_status();
}

/* loss(w) = sum(w * w * 0.5): its gradient is w. */
static jx_status loss(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_mul(jx_mul(in[0], in[0]), jx_scalar(0.5)), 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

typedef struct Worker {
  int id;
  jx_fn *f, *g; /* shared: jit(model), jit(grad(loss)) */
  pthread_barrier_t *start;
  int calls, bad;
  char first[512];
} Worker;

/* Counts a bad call; the first one's description is kept. */
__attribute__((format(printf, 2, 3))) static void note(Worker *w, const char *fmt, ...) {
  if (w->bad++ > 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->first, sizeof w->first, fmt, ap);
  va_end(ap);
}

static void fail(Worker *w, const char *what, int n) {
  note(w, "thread %d, %s, n=%d: %s", w->id, what, n, jx_last_error());
  jx_clear_error();
}

/* x (n, 3) with x[i][j] = (i + j + id) / 16; f(x)[j] = sum_i (2 tanh(x[i][j]) + 1). */
static void call_model(Worker *w, int n) {
  float *v = malloc((size_t)n * 3 * sizeof *v);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 3; j++) v[i * 3 + j] = (float)(i + j + w->id) / 16.0f;
  jx_array *x = jx_array_from(v, JX_FLOAT32, 2, (int64_t[]){n, 3}), *y = NULL;
  if (jx_call(w->f, (jx_array *[]){x}, &y) != JX_OK || !y) {
    fail(w, "jit(model)", n);
  } else {
    float got[3] = {0};
    jx_read(y, got, sizeof got);
    for (int j = 0; j < 3; j++) {
      double want = 0;
      for (int i = 0; i < n; i++) want += 2 * tanh((double)v[i * 3 + j]) + 1;
      if (!(fabs(got[j] - want) <= 1e-5 * (1 + fabs(want)))) {
        note(w, "thread %d, jit(model), n=%d: [%d] = %.9g, expected %.9g", w->id, n, j, got[j], want);
        break;
      }
    }
  }
  w->calls++;
  jx_free(x), jx_free(y);
  free(v);
}

/* grad(loss)(w) == w, for a vector of length n. */
static void call_grad(Worker *w, int n) {
  float *v = malloc((size_t)n * sizeof *v), *got = malloc((size_t)n * sizeof *got);
  for (int i = 0; i < n; i++) v[i] = (float)(i - w->id);
  jx_array *x = jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){n}), *g = NULL;
  if (jx_call(w->g, (jx_array *[]){x}, &g) != JX_OK || !g) {
    fail(w, "jit(grad(loss))", n);
  } else {
    jx_read(g, got, (size_t)n * sizeof *got);
    for (int i = 0; i < n; i++)
      if (got[i] != v[i]) {
        note(w, "thread %d, jit(grad), n=%d: [%d] = %g", w->id, n, i, got[i]);
        break;
      }
  }
  w->calls++;
  jx_free(x), jx_free(g);
  free(v), free(got);
}

static void *work(void *arg) {
  Worker *w = arg;
  pthread_barrier_wait(w->start);
  /* threads walk the shapes in different orders, so one evicts what another runs */
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < NSHAPES; k++) {
      int n = 1 + (k * (2 * w->id + 1) + r * 7) % NSHAPES;
      call_model(w, n);
      if (k % 4 == w->id % 4) call_grad(w, n);
    }
  if (jx_last_status() != JX_OK) fail(w, "left pending", 0);
  return NULL;
}

static void run_threads(jx_fn *f, jx_fn *g) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, NTHREADS);
  Worker w[NTHREADS];
  pthread_t t[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    w[i] = (Worker){.id = i, .f = f, .g = g, .start = &start};
    CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < NTHREADS; i++) {
    CHECK_MSG(w[i].bad == 0, "%d bad calls; first: %s", w[i].bad, w[i].first);
    CHECK(w[i].calls > NSHAPES * ROUNDS);
  }
}

/* The first jaxc calls of the process come from all threads at once: the default
 * device is chosen once (TSan reported the unsynchronized lazy init). */
static void test_shared_jit_from_threads(void) {
  jx_fn_scope_begin();
  jx_fn *f = jx_jit(jx_fn_new("model", 1, 1, model, NULL));
  jx_fn *g = jx_jit(jx_grad(jx_fn_new("loss", 1, 1, loss, NULL), 0, NULL));
  CHECK(f && g);
  if (f && g) run_threads(f, g);
  jx_fn_scope_end(0, NULL);
}

/* The same jitted function again, now warm: every call hits a cached entry or replaces
 * one, and the live-array count is back where it was (an entry lost on every run used to
 * leak one array). */
static void test_warm_cache_from_threads(void) {
  jx_fn_scope_begin();
  jx_fn *f = jx_jit(jx_fn_new("model", 1, 1, model, NULL));
  jx_fn *g = jx_jit(jx_grad(jx_fn_new("loss", 1, 1, loss, NULL), 0, NULL));
  for (int r = 0; r < 2 && f && g; r++) run_threads(f, g);
  jx_fn_scope_end(0, NULL);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_shared_jit_from_threads);
  TEST_RUN(test_warm_cache_from_threads);
  if (jx_live_fns() != fns) test_fail(__FILE__, __LINE__, "leaked %lld functions", (long long)(jx_live_fns() - fns));
  return test_finish();
}
