/* test_errors.c -- the sticky-error contract under stress (issue 12): a pending error
 * does not poison ops on valid inputs, NULL arguments still propagate, introspection of
 * NULL records an error, every random sampler survives an allocation failure at any
 * point (failure injection, as Lua's test build does), and over-release / double
 * jx_fn_free abort with a message naming the object, as does an op given a released
 * array (death tests in a child process). */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/array.h"
#include "jaxc/lax.h"
#include "lib/random.h"
#include "test.h"

static jx_array *vec3(float a, float b, float c) {
  float d[3] = {a, b, c};
  return jx_array_from(d, JX_FLOAT32, 1, (int64_t[]){3});
}

/* Records a shape error (the "earlier, unread" error of the issue). */
static void make_error(void) {
  jx_array *a = jx_zeros(1, (int64_t[]){2}, JX_FLOAT32), *b = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  CHECK(jx_add(a, b) == NULL);
  jx_free(a);
  jx_free(b);
  CHECK_EQ_INT(jx_last_status(), JX_ERR_SHAPE);
}

/* Ops on valid inputs succeed while an error is pending; the first error stays. */
static void test_pending_error_does_not_poison(void) {
  jx_array *x = vec3(0, 1, 2);
  make_error();
  jx_scope_begin();
  jx_array *e = jx_exp(x);
  CHECK(e != NULL);
  if (e) CHECK_NEAR(jx_item(jx_sum(e, 0, NULL, false)), 1 + exp(1.0) + exp(2.0), 1e-4);
  jx_array *m = jx_matmul(x, x);
  CHECK(m && jx_item(m) == 5);
  jx_array *s = jx_sort(jx_negative(x), -1, false);
  CHECK(s != NULL);
  jx_array *k = jx_random_key(1);
  CHECK(jx_random_randint(k, 1, (int64_t[]){4}, 0, 10, JX_INT32) != NULL);
  CHECK(jx_random_choice(k, NULL, 5, 1, (int64_t[]){3}, false, NULL) != NULL);
  CHECK(jx_random_normal(k, 1, (int64_t[]){2}, JX_FLOAT32) != NULL);
  /* NULL arguments still propagate, keeping the first error */
  CHECK(jx_exp(NULL) == NULL);
  CHECK(jx_add(x, NULL) == NULL);
  jx_scope_end(0, NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_add");
  jx_free(x);
}

/* The same through jit and transformations: a jitted call on valid inputs works. */
static jx_status square_sum(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = jx_sum(jx_mul(in[0], in[0]), 0, NULL, false);
  return JX_OK;
}

static void test_pending_error_jit_grad(void) {
  jx_fn *f = jx_fn_new("square_sum", 1, 1, square_sum, NULL);
  jx_fn *g = jx_grad(f, 0, NULL);
  jx_fn *jg = jx_jit(g);
  jx_array *x = vec3(1, 2, 3), *out[1] = {NULL};
  make_error();
  CHECK_EQ_INT(jx_call(jg, &x, out), JX_OK);
  if (out[0]) {
    float v[3];
    CHECK_EQ_INT(jx_read(out[0], v, sizeof v), JX_OK);
    CHECK(v[0] == 2 && v[1] == 4 && v[2] == 6);
  }
  jx_free(out[0]);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_add");
  jx_free(x);
  jx_fn_free(jg), jx_fn_free(g), jx_fn_free(f);
}

static void test_scope_end_negative(void) {
  jx_scope_begin();
  jx_array *x = vec3(1, 2, 3);
  (void)x;
  CHECK_EQ_INT(jx_scope_end(-1, NULL), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_scope_end");
  jx_scope_begin();
  jx_array *y = vec3(1, 2, 3);
  CHECK_EQ_INT(jx_scope_end(2, NULL), JX_ERR_VALUE); /* n > 0 with keep NULL */
  CHECK_ERROR(JX_ERR_VALUE, "keep has 2 entries but is NULL");
  (void)y;
}

/* A user function that rejects its input with jx_set_error: its message comes out of
 * jx_call, jit and grad unchanged; without it, jx_call says the function failed. */
static jx_status picky(void *ctx, jx_array *const *in, jx_array **out) {
  if (jx_ndim(in[0]) != 1)
    return ctx ? jx_set_error(JX_ERR_SHAPE, "picky: expected a vector, got %d dimensions", jx_ndim(in[0]))
               : JX_ERR_SHAPE;
  out[0] = jx_sum(jx_mul(in[0], in[0]), 0, NULL, false);
  return JX_OK;
}

/* A user function returning a value that is no jx_status. */
static jx_status returns_99(void *ctx, jx_array *const *in, jx_array **out) { return (jx_status)99; }

static void test_user_error_message(void) {
  int tag = 1;
  jx_array *m = jx_zeros(2, (int64_t[]){2, 2}, JX_FLOAT32), *v = jx_ones(1, (int64_t[]){3}, JX_FLOAT32);
  jx_fn *f = jx_fn_new("picky", 1, 1, picky, &tag), *jf = jx_jit(f), *g = jx_grad(f, 0, NULL);
  jx_fn *bare = jx_fn_new("bare", 1, 1, picky, NULL);
  jx_array *out = NULL;
  jx_fn *fns[3] = {f, jf, g};
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_INT(jx_call(fns[i], &m, &out), JX_ERR_SHAPE);
    CHECK(out == NULL);
    CHECK_ERROR(JX_ERR_SHAPE, "picky: expected a vector, got 2 dimensions");
  }
  CHECK_EQ_INT(jx_call(jf, &v, &out), JX_OK); /* the same function accepts a vector */
  CHECK(out && jx_item(out) == 3.0);
  jx_free(out), out = NULL;
  CHECK_EQ_INT(jx_call(bare, &m, &out), JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_call(bare): the function returned JX_ERR_SHAPE");
  /* the first error stays; a non-error status is a bad argument */
  CHECK_EQ_INT(jx_set_error(JX_ERR_IO, "first"), JX_ERR_IO);
  CHECK_EQ_INT(jx_set_error(JX_ERR_DTYPE, "second"), JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_IO, "first");
  CHECK_EQ_INT(jx_set_error(JX_OK, "no"), JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_set_error: 0 is not an error status");
  CHECK_EQ_INT(jx_set_error(JX_ERR_VALUE, NULL), JX_ERR_VALUE);
  CHECK(jx_last_status() == JX_ERR_VALUE && jx_last_error()[0] == 0);
  jx_clear_error();
  jx_fn *odd = jx_fn_new("odd", 1, 1, returns_99, NULL);
  CHECK_EQ_INT(jx_call(odd, &m, &out), JX_ERR_VALUE); /* as jx_set_error maps it */
  CHECK_ERROR(JX_ERR_VALUE, "jx_call(odd): the function returned JX_ERR_VALUE");
  jx_fn_free(odd);
  jx_clear_error();
  /* a difference of order INT_MAX stops once the axis is empty (it took hours) */
  jx_array *d = jx_diff(v, 2147483647, -1);
  CHECK(d && jx_ndim(d) == 1 && jx_shape(d)[0] == 0 && jx_dtype_of(d) == JX_FLOAT32);
  jx_free(d);
  jx_fn_free(bare), jx_fn_free(g), jx_fn_free(jf), jx_fn_free(f);
  jx_free(m), jx_free(v);
}

static void test_null_introspection(void) {
  CHECK(isnan(jx_item(NULL)));
  CHECK_ERROR(JX_ERR_VALUE, "jx_item: the array is NULL");
  CHECK_EQ_INT(jx_ndim(NULL), 0);
  CHECK_ERROR(JX_ERR_VALUE, "jx_ndim: the array is NULL");
  CHECK_EQ_INT(jx_dtype_of(NULL), JX_FLOAT32);
  CHECK_ERROR(JX_ERR_VALUE, "jx_dtype_of: the array is NULL");
  /* with an error pending, the first one is kept */
  make_error();
  CHECK(isnan(jx_item(NULL)));
  CHECK_ERROR(JX_ERR_SHAPE, "jx_add");
}

/* Random entry point i (of RANDOM_NFUNCS) with `key`. */
#define RANDOM_NFUNCS 24
static jx_array *random_one(int i, jx_array *key) {
  int64_t s2[1] = {2}, s3[1] = {3};
  jx_scope_begin();
  jx_array *logits = jx_zeros(2, (int64_t[]){2, 3}, JX_FLOAT32);
  jx_array *pop = jx_arange(0, 5, 1, JX_FLOAT32);
  jx_array *mean = jx_zeros(1, s2, JX_FLOAT32), *cov = jx_eye(2, JX_FLOAT32);
  jx_array *r = NULL;
  switch (i) {
  case 0: r = jx_random_split(key, 2); break;
  case 1: r = jx_random_fold_in(key, 7); break;
  case 2: r = jx_random_bits(key, 1, s3, JX_UINT32); break;
  case 3: r = jx_random_uniform(key, 1, s3, JX_FLOAT32, 0, 1); break;
  case 4: r = jx_random_normal(key, 1, s3, JX_FLOAT32); break;
  case 5: r = jx_random_randint(key, 1, s3, 0, 10, JX_INT32); break;
  case 6: r = jx_random_bernoulli(key, 0.5, 1, s3); break;
  case 7: r = jx_random_categorical(key, logits, -1); break;
  case 8: r = jx_random_gumbel(key, 1, s3, JX_FLOAT32); break;
  case 9: r = jx_random_exponential(key, 1, s3, JX_FLOAT32); break;
  case 10: r = jx_random_laplace(key, 1, s3, JX_FLOAT32); break;
  case 11: r = jx_random_logistic(key, 1, s3, JX_FLOAT32); break;
  case 12: r = jx_random_cauchy(key, 1, s3, JX_FLOAT32); break;
  case 13: r = jx_random_truncated_normal(key, -1, 1, 1, s3, JX_FLOAT32); break;
  case 14: r = jx_random_permutation(key, NULL, 5, 0, false); break;
  case 15: r = jx_random_permutation(key, pop, 0, 0, true); break;
  case 16: r = jx_random_choice(key, NULL, 5, 1, s3, true, NULL); break;
  case 17: r = jx_random_choice(key, pop, 0, 1, s2, false, NULL); break;
  case 18: r = jx_random_choice(key, pop, 0, 1, s2, false, pop); break;
  case 19: r = jx_random_choice(key, pop, 0, 1, s2, true, pop); break;
  case 20: r = jx_random_multivariate_normal(key, mean, cov, 1, s2, JX_FLOAT32); break;
  /* loops in compiled pieces (gamma), a loop body's lgamma inlined (poisson) */
  case 21: r = jx_random_gamma(key, jx_scalar(2.5), 1, s3, JX_FLOAT32); break;
  case 22: r = jx_random_poisson(key, jx_scalar(3.0), 1, s3, JX_INT32); break;
  case 23: r = jx_random_categorical_shape(key, logits, -1, 2, (int64_t[]){4, 2}, true); break;
  }
  jx_scope_end(1, &r);
  return r;
}

static void test_random_null_key(void) {
  for (int i = 0; i < RANDOM_NFUNCS; i++) {
    CHECK_MSG(random_one(i, NULL) == NULL, "random function %d", i);
    CHECK_EQ_INT(jx_last_status(), JX_ERR_VALUE);
    jx_clear_error();
    make_error(); /* the crash: a NULL key while an error is pending */
    CHECK_MSG(random_one(i, NULL) == NULL, "random function %d", i);
    CHECK_ERROR(JX_ERR_SHAPE, "jx_add");
  }
}

/* Failure injection: the k-th array creation fails with JX_ERR_OOM. For each random
 * function, k runs over the first 16 creations and 48 more spread over all it makes.
 * Each call must return NULL with JX_ERR_OOM recorded (or, if the failure hit a value
 * it did not need, a valid array), never crash, and leak nothing. Twice: with the cache
 * of jitted samplers emptied before every call (each call traces and compiles), then
 * warm (each call runs the cached program). */
static void test_random_failure_injection(void) {
  jx_array *key = jx_random_key(3);
  int64_t live = jx_live_arrays();
  for (int i = 0; i < 2 * RANDOM_NFUNCS; i++) {
    if (!test_shard_mine()) continue;
    bool cold = i < RANDOM_NFUNCS;
    int f = i % RANDOM_NFUNCS;
    if (cold) random_sampler_cache_clear();
    else jx_free(random_one(f, key));
    array_fail_after(INT64_MAX / 2); /* count the creations of a clean run */
    jx_free(random_one(f, key));
    int64_t total = INT64_MAX / 2 - array_fail_after(-1);
    CHECK_MSG(jx_last_status() == JX_OK, "function %d: %s", f, jx_last_error());
    for (int64_t j = 0; j < 64; j++) {
      int64_t k = j < 16 ? j : 16 + (j - 16) * (total - 16) / 48;
      if (k >= total) break;
      if (cold) random_sampler_cache_clear();
      array_fail_after(k);
      jx_array *r = random_one(f, key);
      bool fired = array_fail_after(-1) < 0;
      CHECK_MSG(fired, "function %d (%s), failure %lld of %lld did not fire", f, cold ? "cold" : "warm",
                (long long)k, (long long)total);
      if (!r)
        CHECK_MSG(jx_last_status() == JX_ERR_OOM, "function %d, failure %lld: %s (%s)", f,
                  (long long)k, jx_status_name(jx_last_status()), jx_last_error());
      jx_free(r);
      jx_clear_error();
      CHECK_MSG(jx_live_arrays() == live, "function %d, failure %lld leaks %lld arrays", f,
                (long long)k, (long long)(jx_live_arrays() - live));
    }
  }
  jx_free(key);
}

/* ------------------------------------------------------------ death tests */

/* Runs fn in a child; true if it died of SIGABRT with `needle` on stderr. */
static bool dies_with(void (*fn)(void), const char *needle) {
  int fd[2];
  if (pipe(fd) != 0) return false;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 2);
    close(fd[0]);
    /* a CUDA context does not survive fork: the child makes its arrays on the cpu (the
     * quarantine checked here is the same on every device) */
    const char *dev = getenv("JAXC_DEVICE");
    if (dev && strcmp(dev, "cuda") == 0) jx_default_device("cpu");
    fn();
    _exit(0);
  }
  close(fd[1]);
  char buf[4096];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof buf - 1 && (r = read(fd[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
  buf[n] = '\0';
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  bool ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(buf, needle);
  if (!ok) fprintf(stderr, "child status %d, stderr:\n%s\n", st, buf);
  return ok;
}

static void over_release(void) {
  jx_array *a = jx_zeros(2, (int64_t[]){2, 3}, JX_INT32);
  jx_free(a);
  jx_free(a);
}

static void over_release_in_scope(void) {
  jx_scope_begin();
  jx_array *a = vec3(1, 2, 3);
  jx_free(a); /* allowed: the scope skips it */
  jx_free(a); /* one too many */
  jx_scope_end(0, NULL);
}

static jx_status ident(void *ctx, jx_array *const *in, jx_array **out) {
  out[0] = in[0];
  return JX_OK;
}

static void double_fn_free(void) {
  jx_fn *f = jx_fn_new("my_function", 1, 1, ident, NULL);
  jx_fn_free(f);
  jx_fn_free(f);
}

static void ref_after_free(void) {
  jx_fn *f = jx_fn_new("other_fn", 1, 1, ident, NULL);
  jx_fn_free(f);
  jx_fn_ref(f);
}

/* A released array passed to an op: the op aborts naming itself and the array, where it
 * read freed fields before (a released key into jx_random_split crashed in shape_shrink) */
static void add_after_free(void) {
  jx_array *a = jx_zeros(2, (int64_t[]){2, 3}, JX_FLOAT32), *b = jx_ones(2, (int64_t[]){2, 3}, JX_FLOAT32);
  jx_free(a);
  jx_add(b, a);
}

static void split_after_free(void) {
  jx_array *key = jx_random_key(0);
  jx_free(key);
  jx_random_split(key, 2);
}

static void exp_after_free(void) {
  jx_array *a = vec3(1, 2, 3);
  jx_free(a);
  jx_exp(a);
}

/* Memory an operation cannot get (a 4 TiB result of exp over a broadcast view) is
 * JX_ERR_OOM naming the operation. Not under ASan, whose allocator reports an impossible
 * request and stops the process instead of returning NULL. */
static void test_alloc_failure_names_op(void) {
#ifndef __SANITIZE_ADDRESS__
  jx_array *z = jx_zeros(1, (int64_t[]){(int64_t)1 << 40}, JX_FLOAT32);
  CHECK(z != NULL);
  CHECK(jx_exp(z) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "exp: ");
  jx_free(z);
#endif
}

/* Sizes past the address space and windows past int64 (helper-67's trial): a result of
 * 2^62 float32 elements had a byte size that wrapped to a small buffer the kernel wrote
 * past (a SEGV); conv arithmetic on strides and pads near INT64_MAX overflowed (UB,
 * caught by UBSan in the sanitized pass). Now each is an error naming the operation, or
 * for a huge stride the right shape (one output). */
static void test_huge_sizes(void) {
  jx_scope_begin();
  int64_t big = (int64_t)1 << 62;
  CHECK(jx_zeros(1, &big, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "float32[4611686018427387904] has more bytes than can be addressed");
  CHECK(jx_arange(0, (double)big, 1, JX_FLOAT32) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "more bytes than can be addressed");
  CHECK(jx_nn_one_hot(jx_zeros(1, (int64_t[]){2}, JX_INT32), big, JX_FLOAT32, -1) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "more bytes than can be addressed");
  jx_array *x = jx_ones(4, (int64_t[]){1, 1, 9, 8}, JX_FLOAT32), *w = jx_ones(4, (int64_t[]){1, 1, 3, 3}, JX_FLOAT32);
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_EXPLICIT, (int64_t[]){INT64_MAX, INT64_MAX, 0, 0}, NULL) ==
        NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_conv_general_dilated: the window, strides, dilations or padding of spatial dim 0 "
                            "overflow int64");
  jx_array *r = jx_lax_conv_general_dilated(x, w, 2, (int64_t[]){INT64_MAX, 1}, JX_PADDING_SAME, NULL, NULL);
  CHECK(r && jx_shape(r)[2] == 1 && jx_shape(r)[3] == 8); /* ceil(9 / stride) = 1 */
  r = jx_lax_max_pool(jx_ones(4, (int64_t[]){1, 9, 8, 1}, JX_FLOAT32), 2, (int64_t[]){2, 2}, (int64_t[]){INT64_MAX, 1},
                      JX_PADDING_SAME, NULL);
  CHECK(r && jx_shape(r)[1] == 1 && jx_shape(r)[2] == 8);
  CHECK(jx_lax_conv_general_dilated(x, w, 2, NULL, JX_PADDING_VALID, NULL,
                                    &(jx_conv_options){.rhs_dilation = (int64_t[]){INT64_MAX, 1}}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "overflow int64");
  CHECK(jx_lax_conv_transpose(jx_ones(4, (int64_t[]){1, 9, 8, 1}, JX_FLOAT32), jx_ones(4, (int64_t[]){3, 3, 1, 1}, JX_FLOAT32),
                              2, (int64_t[]){INT64_MAX, 1}, JX_PADDING_SAME, NULL, false, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_lax_conv_transpose: the kernel's dilated size or the stride of spatial dim 0 overflows");
  /* diagonals past the edges are empty (offset * m overflowed: helper-68's trial) */
  jx_array *m = jx_ones(2, (int64_t[]){3, 4}, JX_FLOAT32);
  static const int64_t offs[4] = {INT64_MIN, -((int64_t)1 << 62), (int64_t)1 << 62, INT64_MAX};
  for (int i = 0; i < 4; i++) {
    jx_array *d = jx_diagonal(m, offs[i], 0, 1), *t = jx_trace(m, offs[i], 0, 1);
    CHECK(d && jx_ndim(d) == 1 && jx_shape(d)[0] == 0 && t && jx_item(t) == 0);
  }
  jx_scope_end(0, NULL);
}

/* Inputs that crashed or reported a false error (helper-80's trial): a NULL out array or
 * shape, float0 operands of functions built on a transpose, complex ldexp, and sizes
 * that overflow; NULL operands of collectives and stop_gradient record an error. */
static void test_bad_inputs_no_crash(void) {
  jx_scope_begin();
  jx_array *x = jx_ones(1, (int64_t[]){3}, JX_FLOAT32);
  jx_clear_error(); /* (the first error of a sequence is the one kept) */
  CHECK(jx_divmod(x, x, NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_divmod: out is NULL");
  jx_clear_error();
  CHECK(jx_modf(x, NULL) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_modf: out is NULL");
  jx_clear_error();
  CHECK(jx_resize(x, 1, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_resize: shape is NULL for ndim 1");
  jx_clear_error();
  CHECK(jx_resize(x, 2, (int64_t[]){(int64_t)1 << 62, 4}) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_resize: the size of shape (4611686018427387904,4) overflows int64");
  jx_array *z = jx_zeros(2, (int64_t[]){2, 3}, JX_FLOAT0);
  jx_clear_error();
  CHECK(z && jx_diagonal(z, 0, 0, 1) == NULL && jx_last_status() == JX_ERR_DTYPE);
  jx_clear_error();
  CHECK(jx_trace(z, 0, 0, 1) == NULL && jx_last_status() == JX_ERR_DTYPE);
  jx_clear_error();
  CHECK(jx_linalg_diagonal(z, 0) == NULL && jx_last_status() == JX_ERR_DTYPE);
  jx_clear_error();
  CHECK(jx_partition(z, 1, 0) == NULL && jx_last_status() == JX_ERR_DTYPE);
  jx_clear_error();
  CHECK(jx_argpartition(z, 1, 0) == NULL && jx_last_status() == JX_ERR_DTYPE);
  jx_array *c = jx_astype(x, JX_COMPLEX64), *i = jx_astype(x, JX_INT32);
  jx_clear_error();
  CHECK(jx_ldexp(c, i) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_ldexp: not supported for input types (complex64, int32)");
  jx_array *b = jx_broadcast_to(jx_ones(1, (int64_t[]){1}, JX_INT8), 1, (int64_t[]){(int64_t)1 << 62});
  jx_clear_error();
  CHECK(b && jx_concatenate(2, (jx_array *[]){b, b}, 0) == NULL);
  CHECK_ERROR(JX_ERR_OOM, "jx_concatenate: the length of the result along axis 0 overflows int64");
  jx_clear_error();
  CHECK(jx_stop_gradient(NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_stop_gradient: x is NULL");
  jx_clear_error();
  CHECK(jx_lax_psum(NULL, "i") == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "psum: the operand is NULL");
  jx_clear_error();
  CHECK(jx_lax_all_to_all(NULL, "i", 0, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "all_to_all: the operand is NULL");
  jx_clear_error();
  CHECK(jx_shard(NULL, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_shard: a is NULL");
  jx_scope_end(0, NULL);
}

static void test_death(void) {
  CHECK(dies_with(over_release, "jx_free: int32[2,3] at 0x"));
  CHECK(dies_with(over_release, "already released"));
  CHECK(dies_with(over_release_in_scope, "jx_free: float32[3] at 0x"));
  CHECK(dies_with(double_fn_free, "jx_fn_free: function \"my_function\" at 0x"));
  CHECK(dies_with(ref_after_free, "jx_fn_ref: function \"other_fn\" at 0x"));
  CHECK(dies_with(add_after_free, "jx_add: float32[2,3] at 0x"));
  CHECK(dies_with(split_after_free, "jx_random_split: uint32[2] at 0x"));
  CHECK(dies_with(exp_after_free, "already released"));
}

int main(void) {
  TEST_RUN(test_pending_error_does_not_poison);
  TEST_RUN(test_pending_error_jit_grad);
  TEST_RUN(test_scope_end_negative);
  TEST_RUN(test_null_introspection);
  TEST_RUN(test_user_error_message);
  TEST_RUN(test_random_null_key);
  TEST_RUN_SPLIT(test_random_failure_injection);
  TEST_RUN(test_alloc_failure_names_op);
  TEST_RUN(test_huge_sizes);
  TEST_RUN(test_bad_inputs_no_crash);
  TEST_RUN(test_death);
  return test_finish();
}
