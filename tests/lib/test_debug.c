/* test_debug.c -- jax.debug.print (src/lib/debug.c, src/trace/debug.c): the text printed
 * eagerly, under jit (at run time, every call, with the runtime values, in program
 * order), under vmap (once per element), under grad (the primals); make_jaxpr shows the
 * debug_print equation as JAX 0.10 does (with its own params); bad formats. stdout is
 * captured through a temporary file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static int saved_fd = -1;
static FILE *capture;

static void capture_begin(void) {
  fflush(stdout);
  capture = tmpfile();
  saved_fd = dup(1);
  dup2(fileno(capture), 1);
}

/* The captured text (malloc'd). */
static char *capture_end(void) {
  fflush(stdout);
  dup2(saved_fd, 1);
  close(saved_fd);
  long n = ftell(capture);
  char *s = calloc((size_t)n + 1, 1);
  rewind(capture);
  if (s && fread(s, 1, (size_t)n, capture) != (size_t)n) s[0] = 0;
  fclose(capture);
  return s;
}

/* prints "x = {} and 2x = {1} {{ok}}", then "sum {}" of the result; returns sum(x + 1) */
static jx_status f(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  jx_array *y = jx_multiply(x[0], jx_scalar(2.0));
  jx_status s = jx_debug_print("x = {} and 2x = {1} {{ok}}", 2, (jx_array *[]){x[0], y});
  o[0] = jx_sum(jx_add(x[0], jx_scalar(1.0)), 0, NULL, false);
  if (s == JX_OK) s = jx_debug_print("sum {}", 1, o);
  return s;
}

static void run(jx_fn *fn, jx_array *x, const char *want) {
  jx_array *out[1] = {NULL};
  capture_begin();
  jx_status s = jx_call(fn, &x, out);
  char *got = capture_end();
  CHECK_MSG(s == JX_OK, "%s: %s", jx_fn_name(fn), jx_last_error());
  CHECK_STR(got, want);
  free(got);
  jx_free(out[0]);
}

static void test_print(void) {
  jx_fn *fn = jx_fn_new("f", 1, 1, f, NULL);
  jx_array *x = jx_linspace(0.0, 2.0, 3, JX_FLOAT32), *x2 = jx_linspace(1.0, 3.0, 3, JX_FLOAT32);
  const char *want = "x = [0. 1. 2.] and 2x = [0. 2. 4.] {ok}\nsum 6.0\n";
  run(fn, x, want);
  /* jit: nothing at trace time beyond the run; every call prints its own values */
  jx_fn *jf = jx_jit(fn);
  run(jf, x, want);
  run(jf, x2, "x = [1. 2. 3.] and 2x = [2. 4. 6.] {ok}\nsum 9.0\n");
  /* vmap: once per element, in order */
  jx_fn *vf = jx_vmap(fn, NULL, NULL);
  run(vf, x, "x = 0.0 and 2x = 0.0 {ok}\nx = 1.0 and 2x = 2.0 {ok}\nx = 2.0 and 2x = 4.0 {ok}\n"
             "sum 1.0\nsum 2.0\nsum 3.0\n");
  jx_fn *jvf = jx_jit(vf);
  run(jvf, x, "x = 0.0 and 2x = 0.0 {ok}\nx = 1.0 and 2x = 2.0 {ok}\nx = 2.0 and 2x = 4.0 {ok}\n"
              "sum 1.0\nsum 2.0\nsum 3.0\n");
  /* grad: the primal values */
  jx_fn *gf = jx_grad(fn, 1, NULL);
  run(gf, x, want);
  jx_fn_free(jvf), jx_fn_free(gf), jx_fn_free(vf), jx_fn_free(jf), jx_fn_free(fn);
  jx_free(x), jx_free(x2);
}

static void test_make_jaxpr(void) {
  jx_fn *fn = jx_fn_new("f", 1, 1, f, NULL);
  jx_array *x = jx_zeros(0, NULL, JX_FLOAT32);
  char *text = jx_make_jaxpr(fn, &x);
  CHECK_STR(text, "{ lambda ; a:f32[]. let\n"
                  "    b:f32[] = mul a 2.0:f32[]\n"
                  "    debug_print[fmt=x = {} and 2x = {1} {{ok}} ordered=True] a b\n"
                  "    c:f32[] = add a 1.0:f32[]\n"
                  "    debug_print[fmt=sum {} ordered=True] c\n"
                  "  in (c,) }");
  free(text);
  jx_free(x);
  jx_fn_free(fn);
}

static void test_errors(void) {
  jx_array *x = jx_scalar(1.5);
  CHECK(jx_debug_print("{} {}", 1, &x) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "a field past the values");
  CHECK(jx_debug_print("{name}", 1, &x) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "a named or malformed field");
  CHECK(jx_debug_print("oops }", 1, &x) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "single '}'");
  CHECK(jx_debug_print("{", 1, &x) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "an unclosed '{'");
  CHECK(jx_debug_print(NULL, 1, &x) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "fmt is NULL");
  jx_free(x);
}

int main(void) {
  TEST_RUN(test_print);
  TEST_RUN(test_make_jaxpr);
  TEST_RUN(test_errors);
  return test_finish();
}
