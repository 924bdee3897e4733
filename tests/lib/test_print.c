/* test_print.c -- jx_to_string (src/lib/numpy/print.c) against NumPy's str() of the same
 * arrays, recorded by tools/golden_reduce_movement.py as uint8 outputs (the text's
 * bytes) in tests/golden/reduce_movement.txt. */
#include <stdlib.h>

#include "golden.h"
#include "test.h"

static GoldenCase *cases;
static int ncases;

static void test_golden_strings(void) {
  int run = 0;
  CHECK_MSG(cases != NULL, "cannot load reduce_movement.txt (run tools/golden_reduce_movement.py)");
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    if (strcmp(c->fn, "to_string") != 0) continue;
    run++;
    const GoldenArray *w = &c->out[0];
    char *want = malloc((size_t)w->size + 1);
    for (int64_t k = 0; k < w->size; k++) want[k] = (char)w->i[k];
    want[w->size] = '\0';
    jx_scope_begin();
    char *got = jx_to_string(golden_to_array(&c->in[0]));
    CHECK_MSG(got && strcmp(got, want) == 0, "%s (line %d):\n  got:\n%s\n  expected:\n%s",
              c->name, c->line, got ? got : jx_last_error(), want);
    jx_clear_error();
    jx_scope_end(0, NULL);
    free(got);
    free(want);
  }
  CHECK_MSG(run > 20, "only %d to_string cases ran", run);
  printf("%d golden to_string cases\n", run);
}

static void test_small_cases(void) {
  CHECK(jx_to_string(NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_to_string");
  jx_array *s = jx_scalar(0.1);
  char *t = jx_to_string(s);
  CHECK_STR(t, "0.1");
  free(t);
  jx_array *i = jx_scalar_int(-42);
  t = jx_to_string(i);
  CHECK_STR(t, "-42");
  free(t);
  jx_array *e = jx_zeros(3, (int64_t[]){2, 0, 3}, JX_INT8);
  t = jx_to_string(e);
  CHECK_STR(t, "[]");
  free(t);
  jx_free(s), jx_free(i), jx_free(e);
}

int main(void) {
  cases = golden_load("reduce_movement.txt", &ncases);
  TEST_RUN(test_golden_strings);
  TEST_RUN(test_small_cases);
  golden_free(cases, ncases);
  return test_finish();
}
