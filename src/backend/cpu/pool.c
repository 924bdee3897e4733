/* pool.c -- the cpu backend's thread pool: persistent pthread workers that split the
 * outer loop of a kernel ([0, n) in contiguous chunks) with the calling thread. One job
 * at a time; a second caller meanwhile runs its job inline. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"

#define POOL_MAX_THREADS 256

/* A job lives on its caller's stack; workers join it under `mu` and the caller waits
 * until every joined worker has left before returning. */
typedef struct Job {
  PoolFn fn;
  void *ctx;
  int64_t n, align;
  int nchunks;
  atomic_int next; /* next chunk to take */
  int want;        /* workers wanted (nchunks - 1 at most) */
  int joined, left;
} Job;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static Job *current;
static uint64_t generation;
static int nthreads = 1; /* including the caller */
static int nworkers;     /* started so far */

static int64_t chunk_start(const Job *j, int c) {
  if (c >= j->nchunks) return j->n;
  int64_t s = (int64_t)((__int128)j->n * c / j->nchunks);
  return s - s % j->align;
}

static void run_chunks(Job *j) {
  for (;;) {
    int c = atomic_fetch_add(&j->next, 1);
    if (c >= j->nchunks) return;
    int64_t s = chunk_start(j, c), e = chunk_start(j, c + 1);
    if (s < e) j->fn(j->ctx, s, e);
  }
}

static void *worker(void *arg) {
  (void)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (generation == seen) pthread_cond_wait(&wake, &mu);
    seen = generation;
    Job *j = current;
    if (!j || j->joined >= j->want) continue; /* over, or enough workers already */
    j->joined++;
    pthread_mutex_unlock(&mu);
    run_chunks(j);
    pthread_mutex_lock(&mu);
    if (++j->left == j->joined) pthread_cond_broadcast(&done);
  }
  return NULL;
}

void pool_configure(int n) {
  pthread_mutex_lock(&run_lock);
  nthreads = n < 1 ? 1 : n > POOL_MAX_THREADS ? POOL_MAX_THREADS : n;
  pthread_mutex_unlock(&run_lock);
}

int pool_threads(void) { return nthreads; }

/* A forked child has none of the parent's workers (and maybe a held lock). */
static void after_fork_child(void) {
  nworkers = 0;
  current = NULL;
  pthread_mutex_init(&mu, NULL);
  pthread_mutex_init(&run_lock, NULL);
  pthread_cond_init(&wake, NULL);
  pthread_cond_init(&done, NULL);
}

/* Starts workers up to `want` (under run_lock); returns how many exist. */
static int ensure_workers(int want) {
  static bool registered;
  if (!registered && want > nworkers)
    registered = pthread_atfork(NULL, NULL, after_fork_child) == 0;
  while (nworkers < want) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, worker, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) break; /* run with the workers we have */
    nworkers++;
  }
  return nworkers;
}

void pool_run(PoolFn fn, void *ctx, int64_t n, int nchunks, int64_t align) {
  if (align < 1) align = 1;
  if (nchunks > 1 && pthread_mutex_trylock(&run_lock) == 0) {
    int workers = ensure_workers(nthreads - 1);
    if (workers > 0) {
      Job j = {.fn = fn, .ctx = ctx, .n = n, .align = align, .nchunks = nchunks};
      atomic_init(&j.next, 0);
      j.want = nchunks - 1 < workers ? nchunks - 1 : workers;
      pthread_mutex_lock(&mu);
      current = &j;
      generation++;
      pthread_cond_broadcast(&wake);
      pthread_mutex_unlock(&mu);
      run_chunks(&j);
      pthread_mutex_lock(&mu);
      current = NULL; /* no new worker joins from here on */
      while (j.left < j.joined) pthread_cond_wait(&done, &mu);
      pthread_mutex_unlock(&mu);
      pthread_mutex_unlock(&run_lock);
      return;
    }
    pthread_mutex_unlock(&run_lock);
  }
  fn(ctx, 0, n);
}
