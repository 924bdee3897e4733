/* test.c -- see test.h. */
#include "test.h"

#include <execinfo.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

int test_failures = 0;
int test_checks = 0;
const char *test_current = "";
static int cases_passed = 0, cases_failed = 0, cases_skipped = 0;

/* JAXC_TEST_SHARD=i/n (0 <= i < n): this process runs only every n-th unit of work,
 * those with index % n == i, so that one slow program (e.g. under compute-sanitizer on
 * cuda) splits over n processes that together run everything once. A unit is a case of
 * TEST_RUN, or one iteration of a loop that calls test_shard_mine() inside a case
 * registered with TEST_RUN_SPLIT (that case runs in every shard). The units are counted
 * in program order on the main thread, the same in every shard. */
static long shard_i = 0, shard_n = 1, shard_unit = 0;
static int in_split_case = 0;

bool test_sharded(void) { return shard_n > 1; }

bool test_shard_mine(void) {
  if (shard_n <= 1) return true;
  return shard_unit++ % shard_n == shard_i;
}

__attribute__((constructor)) static void test_read_shard(void) {
  const char *s = getenv("JAXC_TEST_SHARD");
  if (!s || !*s) return;
  char *end = NULL;
  long i = strtol(s, &end, 10), n = 0;
  if (end && *end == '/') n = strtol(end + 1, &end, 10);
  if (!end || *end || n < 1 || i < 0 || i >= n) {
    fprintf(stderr, "JAXC_TEST_SHARD=\"%s\": expected i/n with 0 <= i < n\n", s);
    exit(2);
  }
  shard_i = i, shard_n = n;
}

/* Tests registered with JAXC_DEVICE=cuda (tests/CMakeLists.txt) exit with 77, which CTest
 * reports as skipped, where that device cannot run (no driver, no GPU): CI stays green
 * and says what did not run. Runs before main, so before any array is made. */
#define TEST_SKIP_CODE 77

/* On cuda (no sanitizer there), a crash names the test case and prints the stack. */
static void on_crash(int sig) {
  char msg[512];
  int n = snprintf(msg, sizeof msg, "\n*** signal %d in test case \"%s\"; stack:\n", sig, test_current);
  if (n > 0) (void)!write(2, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1));
  void *frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void test_require_device(void) {
  const char *dev = getenv("JAXC_DEVICE");
  if (!dev || strcmp(dev, "cuda") != 0) return;
  if (jx_default_device(dev) != JX_OK) {
    printf("SKIP: %s\n", jx_last_error());
    exit(TEST_SKIP_CODE);
  }
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGFPE, on_crash);
}

void test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL [%s] %s:%d: ", test_current, file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  test_failures++;
}

void test_check_error(const char *file, int line, jx_status status, const char *needle) {
  test_checks++;
  jx_status got = jx_last_status();
  const char *msg = jx_last_error();
  if (got != status)
    test_fail(file, line, "expected status %s, got %s (%s)", jx_status_name(status),
              jx_status_name(got), msg);
  else if (needle && !strstr(msg, needle))
    test_fail(file, line, "error message \"%s\" lacks \"%s\"", msg, needle);
  jx_clear_error();
}

void test_run(const char *name, void (*fn)(void)) {
  if (!in_split_case && !test_shard_mine()) {
    cases_skipped++;
    return;
  }
  int before_fail = test_failures;
  int64_t live = jx_live_arrays();
  test_current = name;
  jx_clear_error();
  fn();
  if (jx_last_status() != JX_OK)
    test_fail(__FILE__, __LINE__, "error left pending: %s", jx_last_error());
  jx_clear_error();
  int64_t now = jx_live_arrays();
  if (now != live) test_fail(__FILE__, __LINE__, "leaked %lld arrays", (long long)(now - live));
  if (test_failures == before_fail) cases_passed++;
  else cases_failed++;
}

void test_run_split(const char *name, void (*fn)(void)) {
  in_split_case = 1;
  test_run(name, fn);
  in_split_case = 0;
}

int test_finish(void) {
  if (shard_n > 1)
    printf("%d passed, %d failed (JAXC_TEST_SHARD=%ld/%ld: %d cases and %ld of %ld units left to the "
           "other shards)\n",
           cases_passed, cases_failed, shard_i, shard_n, cases_skipped,
           shard_unit - (shard_unit + shard_n - 1 - shard_i) / shard_n, shard_unit);
  else
    printf("%d passed, %d failed\n", cases_passed, cases_failed);
  return cases_failed ? 1 : 0;
}

jx_array *test_randn(uint32_t *seed, int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  for (int64_t i = 0; v && i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    v[i] = (float)((*seed >> 8) % 2001) / 500.0f - 2.0f;
  }
  jx_array *a = v ? jx_array_from(v, JX_FLOAT32, ndim, shape) : NULL;
  free(v);
  return a;
}

double *test_read_f64(jx_array *a) {
  if (!a) return NULL;
  jx_array *d = jx_astype(a, JX_FLOAT64);
  if (!d) return NULL;
  int64_t n = jx_size(d);
  size_t item = jx_dtype_itemsize(jx_dtype_of(d));
  double *out = malloc(n ? (size_t)n * sizeof(double) : 1);
  if (item == 8) {
    jx_read(d, out, (size_t)n * 8);
  } else { /* x64 off: float64 canonicalized to float32 */
    float *tmp = malloc(n ? (size_t)n * 4 : 1);
    jx_read(d, tmp, (size_t)n * 4);
    for (int64_t i = 0; i < n; i++) out[i] = tmp[i];
    free(tmp);
  }
  jx_free(d);
  return out;
}

/* Checks jx_grad(f) over the first nd inputs of f (float64) at x against central
 * differences; further inputs (indices) pass through. */
void test_check_grad(const char *what, jx_fn *f, int nd, int nin, jx_array *const *x,
                       double tol) {
  int argnums[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  jx_fn *g = jx_grad(f, nd, argnums);
  jx_array *gr[8] = {NULL};
  CHECK_MSG(g && jx_call(g, x, gr) == JX_OK, "%s: grad failed: %s", what, jx_last_error());
  const double eps = 1e-6;
  int bad = 0;
  for (int i = 0; i < nd && gr[0]; i++) {
    int64_t n = jx_size(x[i]);
    double *v = test_read_f64(x[i]), *gv = test_read_f64(gr[i]);
    for (int64_t j = 0; j < n; j++) {
      double save = v[j], fv[2];
      for (int s = 0; s < 2; s++) {
        v[j] = save + (s ? -eps : eps);
        jx_array *xs[8], *y = NULL;
        for (int k = 0; k < nin; k++) xs[k] = x[k];
        xs[i] = jx_array_from(v, JX_FLOAT64, jx_ndim(x[i]), jx_shape(x[i]));
        jx_call(f, xs, &y);
        fv[s] = y ? jx_item(y) : NAN;
        jx_free(y), jx_free(xs[i]);
      }
      v[j] = save;
      double num = (fv[0] - fv[1]) / (2 * eps);
      if (!(fabs(num - gv[j]) <= tol * (1 + fabs(num))) && bad++ < 5)
        test_fail(__FILE__, __LINE__, "%s: d/dx%d[%lld]: grad %.10g, numeric %.10g", what, i,
                  (long long)j, gv[j], num);
    }
    free(v), free(gv);
  }
  for (int i = 0; i < nd; i++) jx_free(gr[i]);
  jx_fn_free(g);
}
