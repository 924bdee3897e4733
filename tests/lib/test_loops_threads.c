/* test_loops_threads.c -- one jitted function holding a while_loop and a scan, called
 * from many threads at once: the loop bodies' programs are compiled on first use and
 * cached on the shared body jaxprs (Jaxpr.compiled), so the first calls race to fill
 * that cache and later calls read it while others may still insert. Results are checked
 * against closed forms and nothing leaks. Built also under ThreadSanitizer by
 * tools/test.sh (build-tsan/). Checks run on the main thread (the test layer's counters
 * are not atomic): each worker records its first failure and its counts. */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>

#include "test.h"

#define NTHREADS 8
#define ROUNDS 12
#define NEWTON_TRIPS 20
#define SCAN_LEN 5

/* while: (i, y) -> (i + 1, (y + x / y) / 2) while i < NEWTON_TRIPS: y -> sqrt(x) */
static jx_status newton_cond(void *c, jx_array *const *in, jx_array **out) {
  (void)c;
  out[0] = jx_less(in[0], jx_scalar_int(NEWTON_TRIPS));
  return out[0] ? JX_OK : jx_last_status();
}
static jx_status newton_body(void *x, jx_array *const *in, jx_array **out) {
  out[0] = jx_add(in[0], jx_scalar_int(1));
  out[1] = jx_multiply(jx_add(in[1], jx_divide(x, in[1])), jx_scalar(0.5));
  return out[1] ? JX_OK : jx_last_status();
}
/* scan: (c, x) -> (c + x, 2 c) */
static jx_status scan_body(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  out[0] = jx_add(in[0], in[1]);
  out[1] = jx_multiply(in[0], jx_scalar(2.0));
  return out[1] ? JX_OK : jx_last_status();
}

/* (x (n,), xs (SCAN_LEN, n)) -> (sqrt(x) by Newton, sum of xs, ys) */
static jx_status model(void *ctx, jx_array *const *in, jx_array **out) {
  (void)ctx;
  jx_fn *cf = jx_fn_new("newton_cond", 2, 1, newton_cond, NULL);
  jx_fn *bf = jx_fn_new("newton_body", 2, 2, newton_body, in[0]);
  jx_fn *sf = jx_fn_new("scan_body", 2, 2, scan_body, NULL);
  jx_array *w[2];
  jx_status s = jx_lax_while_loop(cf, bf, 2, (jx_array *[]){jx_astype(jx_scalar_int(0), JX_INT32), in[0]}, w);
  out[0] = s == JX_OK ? w[1] : NULL;
  jx_array *c0 = jx_zeros_like(in[0]);
  if (s == JX_OK) s = jx_lax_scan(sf, 1, &c0, 1, in + 1, -1, false, 1, out + 1, out + 2);
  jx_fn_free(cf), jx_fn_free(bf), jx_fn_free(sf);
  return s;
}

typedef struct Worker {
  int id;
  jx_fn *f; /* shared: jit(model) */
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

static bool close_to(double got, double want) { return fabs(got - want) <= 1e-5 * (1 + fabs(want)); }

/* One call with thread- and round-specific inputs of a shape every thread shares (so
 * all threads run the same cached entry and the same body jaxprs). */
static void call_model(Worker *w, int n, int r) {
  float x[8], xs[SCAN_LEN * 8];
  for (int i = 0; i < n; i++) x[i] = 1.0f + (float)(i + w->id + r) / 4.0f;
  for (int t = 0; t < SCAN_LEN * n; t++) xs[t] = (float)(t % 7 + w->id) / 8.0f;
  jx_array *xa = jx_array_from(x, JX_FLOAT32, 1, (int64_t[]){n});
  jx_array *xsa = jx_array_from(xs, JX_FLOAT32, 2, (int64_t[]){SCAN_LEN, n});
  jx_array *o[3] = {NULL};
  if (jx_call(w->f, (jx_array *[]){xa, xsa}, o) != JX_OK) {
    note(w, "thread %d, n=%d: %s", w->id, n, jx_last_error());
    jx_clear_error();
  } else {
    float root[8], sum[8], ys[SCAN_LEN * 8];
    jx_read(o[0], root, (size_t)n * sizeof(float));
    jx_read(o[1], sum, (size_t)n * sizeof(float));
    jx_read(o[2], ys, (size_t)(SCAN_LEN * n) * sizeof(float));
    for (int i = 0; i < n; i++) {
      double c = 0;
      for (int t = 0; t < SCAN_LEN; t++) {
        if (!close_to(ys[t * n + i], 2 * c)) note(w, "thread %d, n=%d: ys[%d][%d] = %g, expected %g", w->id, n, t, i, ys[t * n + i], 2 * c);
        c += xs[t * n + i];
      }
      if (!close_to(root[i], sqrt(x[i]))) note(w, "thread %d, n=%d: sqrt[%d] = %g, expected %g", w->id, n, i, root[i], sqrt(x[i]));
      if (!close_to(sum[i], c)) note(w, "thread %d, n=%d: sum[%d] = %g, expected %g", w->id, n, i, sum[i], c);
    }
  }
  w->calls++;
  jx_free(xa), jx_free(xsa);
  for (int k = 0; k < 3; k++) jx_free(o[k]);
}

static void *work(void *arg) {
  Worker *w = arg;
  pthread_barrier_wait(w->start);
  for (int r = 0; r < ROUNDS; r++) call_model(w, 1 + (r + w->id) % 3, r); /* 3 signatures */
  if (jx_last_status() != JX_OK) note(w, "thread %d: error left pending: %s", w->id, jx_last_error());
  return NULL;
}

static void run_threads(jx_fn *f) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, NTHREADS);
  Worker w[NTHREADS];
  pthread_t t[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    w[i] = (Worker){.id = i, .f = f, .start = &start};
    CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < NTHREADS; i++) {
    CHECK_MSG(w[i].bad == 0, "%d bad calls; first: %s", w[i].bad, w[i].first);
    CHECK(w[i].calls == ROUNDS);
  }
}

/* Cold: every thread's first call races to trace, lower and compile the loop bodies of
 * the same entry; then warm rounds on the same function. */
static void test_shared_jitted_loops_from_threads(void) {
  jx_fn_scope_begin();
  jx_fn *f = jx_jit(jx_fn_new("model", 2, 3, model, NULL));
  CHECK(f != NULL);
  for (int r = 0; r < 2 && f; r++) run_threads(f);
  jx_fn_scope_end(0, NULL);
}

int main(void) {
  int64_t fns = jx_live_fns();
  TEST_RUN(test_shared_jitted_loops_from_threads);
  if (jx_live_fns() != fns) test_fail(__FILE__, __LINE__, "leaked %lld functions", (long long)(jx_live_fns() - fns));
  return test_finish();
}
