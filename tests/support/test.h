/* test.h -- a tiny assertion layer for CTest executables. A test program calls
 * TEST_RUN(fn) for each case and returns test_finish(): nonzero if any check failed or
 * arrays leaked. Checks print file:line and continue. */
#ifndef JAXC_TEST_H
#define JAXC_TEST_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "jaxc.h"

extern int test_failures;
extern int test_checks;
extern const char *test_current;

void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define CHECK(cond)                                                         \
  do {                                                                      \
    test_checks++;                                                          \
    if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);         \
  } while (0)
#define CHECK_MSG(cond, ...)                                                \
  do {                                                                      \
    test_checks++;                                                          \
    if (!(cond)) test_fail(__FILE__, __LINE__, __VA_ARGS__);                \
  } while (0)
#define CHECK_EQ_INT(a, b)                                                  \
  do {                                                                      \
    long long _a = (long long)(a), _b = (long long)(b);                     \
    test_checks++;                                                          \
    if (_a != _b) test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, _a, _b); \
  } while (0)
#define CHECK_STR(a, b)                                                     \
  do {                                                                      \
    const char *_a = (a), *_b = (b);                                        \
    test_checks++;                                                          \
    if (!_a || !_b || strcmp(_a, _b) != 0)                                  \
      test_fail(__FILE__, __LINE__, "%s == %s:\n  got:      %s\n  expected: %s", #a, #b, \
                _a ? _a : "(null)", _b ? _b : "(null)");                    \
  } while (0)
#define CHECK_NEAR(a, b, tol)                                               \
  do {                                                                      \
    double _a = (a), _b = (b);                                              \
    test_checks++;                                                          \
    if (!(fabs(_a - _b) <= (tol)) && !(isnan(_a) && isnan(_b)) && _a != _b) \
      test_fail(__FILE__, __LINE__, "%s ~ %s: %.17g vs %.17g", #a, #b, _a, _b); \
  } while (0)
/* Checks that the sticky error is `status` and its message contains `needle`, then
 * clears it. */
#define CHECK_ERROR(status, needle) test_check_error(__FILE__, __LINE__, (status), (needle))
void test_check_error(const char *file, int line, jx_status status, const char *needle);

/* Runs one case: clears errors, runs fn, fails if an error is left pending or if the
 * live-array count grew. */
#define TEST_RUN(fn) test_run(#fn, fn)
void test_run(const char *name, void (*fn)(void));
/* Like TEST_RUN, for a case whose loops split over JAXC_TEST_SHARD's shards themselves
 * (each iteration first asks test_shard_mine()): it runs in every shard. */
#define TEST_RUN_SPLIT(fn) test_run_split(#fn, fn)
void test_run_split(const char *name, void (*fn)(void));
/* JAXC_TEST_SHARD=i/n: true for the units of work of this shard (every n-th one from i;
 * always true without it). Call it once per independent unit, on the main thread, in an
 * order that does not depend on results, e.g. `if (!test_shard_mine()) continue;`. */
bool test_shard_mine(void);
/* True under JAXC_TEST_SHARD with n > 1: checks over the whole program's work (counts,
 * coverage) hold only for the union of the shards and are skipped. */
bool test_sharded(void);
/* Prints "N passed, N failed" and returns the exit code. */
int test_finish(void);

/* Reads a whole array as doubles (malloc'd, caller frees); NULL on error. */
double *test_read_f64(jx_array *a);
/* A float32 array of `shape` with values in [-2, 2] on a 1/500 grid from the LCG
 * seed = seed * 1664525 + 1013904223 (Numerical Recipes), advanced in place. */
jx_array *test_randn(uint32_t *seed, int ndim, const int64_t *shape);

/* Checks jx_grad(f) with respect to f's first nd inputs (float64 arrays; the others,
 * e.g. indices, pass through) at x against central differences of f, element by
 * element, within tol * (1 + |numeric|). f returns a scalar. */
void test_check_grad(const char *what, jx_fn *f, int nd, int nin, jx_array *const *x, double tol);

#endif
