/* pool.c -- the cpu backend's thread pool: persistent pthread workers that split the
 * outer loop of a kernel ([0, n) in contiguous chunks) with the calling thread. One job
 * at a time; a second caller meanwhile runs its job inline. Workers spin for a while
 * (POOL_SPIN_NS) after each job before sleeping on a condition variable, and callers
 * spin before waiting for them: the kernels of a jit program follow each other within
 * microseconds, and waking a sleeping thread costs tens of them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "backend/cpu/cpu.h"

#define POOL_MAX_THREADS 256
#define POOL_SPIN_NS 200000 /* 0.2 ms */

/* A job lives on its caller's stack; workers join it under `mu` and the caller waits
 * until every joined worker has left before returning. */
typedef struct Job {
  PoolFn fn;
  void *ctx;
  int64_t n, align;
  int nchunks;
  atomic_int next; /* next chunk to take */
  int want;        /* workers wanted (nchunks - 1 at most) */
  int joined;
  atomic_int left; /* joined workers done with it */
} Job;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static Job *current;
static _Atomic uint64_t generation; /* written under mu; read by spinning workers */
static int sleepers;                /* workers waiting on `wake` (under mu) */
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

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Spins until finished(ctx) (true) or POOL_SPIN_NS pass (false). */
static bool spin_until(bool (*finished)(const void *ctx), const void *ctx) {
  int64_t t0 = 0;
  for (int i = 0;; i++) {
    if (finished(ctx)) return true;
    if ((i & 255) == 255) {
      int64_t t = now_ns();
      if (!t0) t0 = t;
      else if (t - t0 > POOL_SPIN_NS) return false;
    }
    cpu_relax();
  }
}

/* A new job was published since the worker's last (ctx: the generation it saw). */
static bool new_generation(const void *ctx) {
  return atomic_load_explicit(&generation, memory_order_acquire) != *(const uint64_t *)ctx;
}

/* Every worker that joined the job has left it (ctx: the job). */
static bool job_left(const void *ctx) {
  const Job *j = ctx;
  return atomic_load(&((Job *)j)->left) >= j->joined;
}

static void *worker(void *arg) {
  (void)arg;
  uint64_t seen = 0;
  for (;;) {
    spin_until(new_generation, &seen);
    pthread_mutex_lock(&mu);
    sleepers++;
    while (atomic_load(&generation) == seen) pthread_cond_wait(&wake, &mu);
    sleepers--;
    seen = atomic_load(&generation);
    Job *j = current;
    if (!j || j->joined >= j->want) { /* over, or enough workers already */
      pthread_mutex_unlock(&mu);
      continue;
    }
    j->joined++;
    pthread_mutex_unlock(&mu);
    run_chunks(j);
    pthread_mutex_lock(&mu); /* the caller reads `left` under mu before it returns */
    atomic_fetch_add(&j->left, 1);
    pthread_cond_broadcast(&done);
    pthread_mutex_unlock(&mu);
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
  sleepers = 0;
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
      atomic_init(&j.left, 0);
      j.want = nchunks - 1 < workers ? nchunks - 1 : workers;
      pthread_mutex_lock(&mu);
      current = &j;
      atomic_fetch_add(&generation, 1);
      if (sleepers) pthread_cond_broadcast(&wake);
      pthread_mutex_unlock(&mu);
      run_chunks(&j);
      pthread_mutex_lock(&mu);
      current = NULL; /* no new worker joins from here on */
      pthread_mutex_unlock(&mu);
      spin_until(job_left, &j); /* briefly for the joined workers, then sleep */
      pthread_mutex_lock(&mu);
      while (atomic_load(&j.left) < j.joined) pthread_cond_wait(&done, &mu);
      pthread_mutex_unlock(&mu);
      pthread_mutex_unlock(&run_lock);
      return;
    }
    pthread_mutex_unlock(&run_lock);
  }
  fn(ctx, 0, n);
}
