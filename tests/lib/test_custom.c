/* test_custom.c -- jax.custom_jvp / jax.custom_vjp (src/lib/custom.c) against JAX goldens
 * (tools/golden_custom.py -> tests/golden/custom.txt): the examples of JAX's docs
 * (log1pexp's stable derivative, a rule calling the function itself, clip_gradient),
 * nondiff_argnums, residuals, a bwd that is not the derivative, under grad, jvp, vmap
 * and their compositions, each eagerly and under jit; forward mode through custom_vjp
 * and mismatched rule outputs as errors naming both types. Leaks: TEST_RUN. */
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

static jx_fn *LOG1PEXP, *F_SIN, *SCALED, *CLIP, *G_SIN, *SQUARE_WRONG;

/* ---- custom_jvp */
static jx_status log1pexp(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_log1p(jx_exp(x[0]));
  return JX_OK;
}
static jx_status log1pexp_jvp(void *c, jx_array *const *x, jx_array **o) {
  (void)c; /* x: primal, tangent */
  jx_status s = jx_call(LOG1PEXP, x, o); /* the rule calls the function itself */
  jx_array *one = jx_scalar(1.0);
  o[1] = jx_multiply(x[1], jx_subtract(one, jx_divide(one, jx_add(one, jx_exp(x[0])))));
  return s;
}
static jx_status f_sin(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_multiply(jx_sin(x[0]), x[1]);
  return JX_OK;
}
static jx_status f_sin_jvp(void *c, jx_array *const *x, jx_array **o) {
  (void)c; /* x, y, x_dot, y_dot */
  jx_status s = jx_call(F_SIN, x, o);
  o[1] = jx_add(jx_multiply(jx_multiply(jx_cos(x[0]), x[2]), x[1]), jx_multiply(jx_sin(x[0]), x[3]));
  return s;
}
static jx_status scaled_tanh(void *c, jx_array *const *x, jx_array **o) {
  (void)c; /* k (nondiff), x */
  o[0] = jx_multiply(x[0], jx_tanh(x[1]));
  return JX_OK;
}
static jx_status scaled_tanh_jvp(void *c, jx_array *const *x, jx_array **o) {
  (void)c; /* k, x, t: deliberately not the true derivative */
  jx_status s = jx_call(SCALED, x, o);
  o[1] = jx_multiply(jx_multiply(jx_multiply(x[0], jx_scalar(2.0)), x[2]), x[1]);
  return s;
}

/* ---- custom_vjp */
static jx_status identity3(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = x[2];
  return JX_OK;
}
static jx_status clip_fwd(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = x[2], o[1] = x[0], o[2] = x[1];
  return JX_OK;
}
static jx_status clip_bwd(void *c, jx_array *const *x, jx_array **o) {
  (void)c; /* lo, hi, g */
  o[0] = jx_zeros_like(x[0]), o[1] = jx_zeros_like(x[1]), o[2] = jx_clip(x[2], x[0], x[1]);
  return JX_OK;
}
static jx_status g_sin_fwd(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_multiply(jx_sin(x[0]), x[1]), o[1] = jx_cos(x[0]), o[2] = jx_sin(x[0]), o[3] = x[1];
  return JX_OK;
}
static jx_status g_sin_bwd(void *c, jx_array *const *x, jx_array **o) {
  (void)c; /* cos x, sin x, y, g */
  o[0] = jx_multiply(jx_multiply(x[0], x[3]), x[2]), o[1] = jx_multiply(x[1], x[3]);
  return JX_OK;
}
static jx_status square(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_multiply(x[0], x[0]);
  return JX_OK;
}
static jx_status square_fwd(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_multiply(x[0], x[0]), o[1] = x[0];
  return JX_OK;
}
static jx_status square_wrong_bwd(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_multiply(jx_multiply(jx_scalar(10.0), x[0]), x[1]);
  return JX_OK;
}
/* clip_gradient(lo, hi, sin(x) * 3) */
static jx_status clip_sin(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  jx_array *in[3] = {x[0], x[1], jx_multiply(jx_sin(x[2]), jx_scalar(3.0))};
  return jx_call(CLIP, in, o);
}

/* ---- compositions */
static jx_status sum_of(void *c, jx_array *const *x, jx_array **o) {
  jx_array *r[2] = {NULL};
  jx_status s = jx_call(c, x, r);
  o[0] = s == JX_OK ? jx_sum(r[0], 0, NULL, false) : NULL;
  return s;
}
static void fn_free(void *c) { jx_fn_free(c); }
static jx_fn *summed(jx_fn *f) { return jx_fn_new_with_free("sum", jx_fn_nin(f), 1, sum_of, jx_fn_ref(f), fn_free); }
static jx_fn *grad_sum(jx_fn *f, int n, const int *argnums) {
  jx_fn *s = summed(f), *g = jx_grad(s, n, argnums);
  jx_fn_free(s);
  return g;
}
static jx_status jvp_of(void *c, jx_array *const *x, jx_array **o) { return jx_jvp(c, x, x + 1, o, o + 1); }

static jx_fn *make(const char *fn) {
  jx_fn *r = NULL, *t = NULL;
  if (!strcmp(fn, "log1pexp")) r = jx_fn_ref(LOG1PEXP);
  if (!strcmp(fn, "grad_log1pexp")) r = grad_sum(LOG1PEXP, 1, NULL);
  if (!strcmp(fn, "vmap_grad_log1pexp")) t = jx_grad(LOG1PEXP, 1, NULL), r = jx_vmap(t, NULL, NULL);
  if (!strcmp(fn, "grad_vmap_log1pexp")) t = jx_vmap(LOG1PEXP, NULL, NULL), r = grad_sum(t, 1, NULL);
  if (!strcmp(fn, "jvp_log1pexp")) r = jx_fn_new("jvp", 2, 2, jvp_of, LOG1PEXP);
  if (!strcmp(fn, "f_sin")) r = jx_fn_ref(F_SIN);
  if (!strcmp(fn, "grad_f_sin")) r = grad_sum(F_SIN, 2, (int[]){0, 1});
  if (!strcmp(fn, "grad_grad_f_sin")) t = grad_sum(F_SIN, 1, NULL), r = grad_sum(t, 1, NULL);
  if (!strcmp(fn, "grad_vmap_f_sin"))
    t = jx_vmap(F_SIN, (int[]){JX_NOT_MAPPED, 0}, NULL), r = grad_sum(t, 2, (int[]){0, 1});
  if (!strcmp(fn, "scaled_tanh")) r = jx_fn_ref(SCALED);
  if (!strcmp(fn, "grad_scaled_tanh")) r = grad_sum(SCALED, 1, (int[]){1});
  if (!strcmp(fn, "clip_gradient")) r = jx_fn_new("clip_sin", 3, 1, clip_sin, NULL);
  if (!strcmp(fn, "grad_clip_gradient") || !strcmp(fn, "vmap_grad_clip_gradient")) {
    jx_fn *cs = jx_fn_new("clip_sin", 3, 1, clip_sin, NULL);
    if (fn[0] == 'g') {
      r = grad_sum(cs, 1, (int[]){2});
    } else {
      t = jx_grad(cs, 1, (int[]){2});
      r = jx_vmap(t, (int[]){JX_NOT_MAPPED, JX_NOT_MAPPED, 0}, NULL);
    }
    jx_fn_free(cs);
  }
  if (!strcmp(fn, "g_sin")) r = jx_fn_ref(G_SIN);
  if (!strcmp(fn, "grad_g_sin")) r = grad_sum(G_SIN, 2, (int[]){0, 1});
  if (!strcmp(fn, "grad_vmap_g_sin"))
    t = jx_vmap(G_SIN, (int[]){JX_NOT_MAPPED, 0}, NULL), r = grad_sum(t, 2, (int[]){0, 1});
  if (!strcmp(fn, "grad_square_wrong")) r = grad_sum(SQUARE_WRONG, 1, NULL);
  jx_fn_free(t);
  return r;
}

static void test_goldens(void) {
  int n = 0;
  GoldenCase *cases = golden_load("custom.txt", &n);
  CHECK(cases != NULL && n >= 18);
  for (int k = 0; cases && k < n; k++) {
    GoldenCase *c = &cases[k];
    if (strstr(c->fn, "mlp") || strstr(c->fn, "remat")) continue; /* checkpoint's: test_checkpoint.c */
    jx_fn *f = make(c->fn);
    CHECK_MSG(f != NULL, "%s: no function %s", c->name, c->fn);
    if (!f) continue;
    golden_check_eager_jit(c, f, 2e-6, 2e-6);
    jx_fn_free(f);
  }
  golden_free(cases, n);
}

/* vmap of the custom functions equals a loop over the rows, values and gradients. */
static void test_vmap_vs_loop(void) {
  int64_t shape[2] = {4, 5};
  jx_array *xs = jx_linspace(-2.0, 3.0, 20, JX_FLOAT32), *x2 = jx_reshape(xs, 2, shape);
  jx_array *y = jx_linspace(0.5, 1.5, 5, JX_FLOAT32);
  jx_fn *fs[2] = {grad_sum(G_SIN, 1, NULL), grad_sum(F_SIN, 1, NULL)};
  for (int k = 0; k < 2; k++) {
    jx_fn *v = jx_vmap(fs[k], (int[]){0, JX_NOT_MAPPED}, NULL);
    jx_array *out[1], *row[1];
    CHECK(jx_call(v, (jx_array *[]){x2, y}, out) == JX_OK);
    for (int64_t b = 0; b < 4; b++) {
      jx_array *ib = jx_scalar_int(b);
      jx_array *xb = jx_take(x2, ib, 0);
      CHECK(jx_call(fs[k], (jx_array *[]){xb, y}, row) == JX_OK);
      jx_array *ob = jx_take(out[0], ib, 0);
      double *got = test_read_f64(ob), *want = test_read_f64(row[0]);
      for (int i = 0; got && want && i < 5; i++) CHECK_NEAR(got[i], want[i], 1e-6);
      free(got), free(want);
      jx_free(ib), jx_free(xb), jx_free(ob), jx_free(row[0]);
    }
    jx_free(out[0]);
    jx_fn_free(v), jx_fn_free(fs[k]);
  }
  jx_free(xs), jx_free(x2), jx_free(y);
}

/* Transformations of a jitted function see its custom rules (the compiled program
 * inlines the primal, the traced jaxpr keeps the rules): grad(jit(log1pexp)) at 100
 * is 1, grad(jit(square_wrong)) uses bwd, jvp(jit(custom_vjp)) is the error. */
static void test_jit_inside(void) {
  float xv[3] = {100.0f, 0.0f, -3.0f};
  jx_array *x = jx_array_from(xv, JX_FLOAT32, 1, (int64_t[]){3}), *out[2] = {NULL};
  jx_fn *jl = jx_jit(LOG1PEXP), *g = grad_sum(jl, 1, NULL), *jg = jx_jit(g);
  for (int k = 0; k < 2; k++) {
    CHECK(jx_call(k ? jg : g, &x, out) == JX_OK);
    double *v = test_read_f64(out[0]);
    CHECK(v && v[0] == 1.0 && v[1] == 0.5);
    free(v), jx_free(out[0]);
  }
  jx_fn_free(jg), jx_fn_free(g), jx_fn_free(jl);
  jx_fn *js = jx_jit(SQUARE_WRONG);
  g = grad_sum(js, 1, NULL);
  CHECK(jx_call(g, &x, out) == JX_OK);
  double *v = test_read_f64(out[0]);
  CHECK(v && v[0] == 1000.0 && v[2] == -30.0); /* 10 x, not 2 x */
  free(v), jx_free(out[0]), jx_fn_free(g), jx_fn_free(js);
  jx_fn *jgs = jx_jit(G_SIN);
  CHECK(jx_jvp(jgs, (jx_array *[]){x, x}, (jx_array *[]){x, x}, out, out + 1) == JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "can't apply forward-mode autodiff (jvp) to a custom_vjp function");
  jx_fn_free(jgs);
  jx_free(x);
}

/* The rule is called only when a transformation differentiates: never for plain calls,
 * jit or vmap of values; once per grad. A failing rule fails grad, leaking nothing. */
static int rule_calls;
static jx_status counted_jvp(void *c, jx_array *const *x, jx_array **o) {
  rule_calls++;
  if (c) return JX_ERR_VALUE; /* "the rule failed" */
  o[0] = jx_log1p(jx_exp(x[0]));
  o[1] = jx_multiply(x[1], jx_negative(jx_scalar(1.0)));
  return JX_OK;
}
static void test_rule_laziness(void) {
  jx_array *x = jx_linspace(-1.0, 1.0, 4, JX_FLOAT32), *out[1] = {NULL};
  jx_fn *f = jx_fn_new("log1pexp", 1, 1, log1pexp, NULL);
  for (int failing = 0; failing < 2; failing++) {
    jx_fn *r = jx_fn_new("counted", 2, 2, counted_jvp, failing ? (void *)1 : NULL);
    jx_fn *cf = jx_custom_jvp(f, r, 0, NULL), *jf = jx_jit(cf), *vf = jx_vmap(cf, NULL, NULL);
    jx_fn *g = grad_sum(cf, 1, NULL);
    rule_calls = 0;
    jx_fn *plain[3] = {cf, jf, vf};
    for (int k = 0; k < 3; k++) {
      CHECK(jx_call(plain[k], &x, out) == JX_OK);
      jx_free(out[0]), out[0] = NULL;
    }
    CHECK_EQ_INT(rule_calls, 0);
    jx_status s = jx_call(g, &x, out);
    CHECK_EQ_INT(rule_calls, 1);
    if (!failing) {
      double *v = test_read_f64(out[0]);
      CHECK(s == JX_OK && v && v[0] == -1.0 && v[3] == -1.0); /* the rule's derivative */
      free(v), jx_free(out[0]);
    } else {
      CHECK(s != JX_OK && out[0] == NULL);
      jx_clear_error();
    }
    jx_fn_free(g), jx_fn_free(vf), jx_fn_free(jf), jx_fn_free(cf), jx_fn_free(r);
  }
  /* forward mode of any kind through custom_vjp is refused (jacfwd, hessian) */
  jx_fn *jac = jx_jacfwd(SQUARE_WRONG, 1, NULL);
  CHECK(jac && jx_call(jac, &x, out) == JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "can't apply forward-mode autodiff (jvp) to a custom_vjp function");
  jx_fn_free(jac), jx_fn_free(f);
  jx_free(x);
}

static jx_status bad_dtype_jvp(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_log1p(jx_exp(x[0]));
  o[1] = jx_astype(x[1], JX_INT32);
  return JX_OK;
}
static jx_status bad_shape_bwd(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_sum(x[1], 0, NULL, false);
  return JX_OK;
}

/* y -> y * c with c from ctx, checkpointed (ctx NULL) or given a custom_jvp rule (ctx
 * non-NULL) inside a function of x that passes x as c: sum(x * x) */
static jx_status times_ctx(void *c, jx_array *const *x, jx_array **o) { o[0] = jx_multiply(x[0], c); return JX_OK; }
static jx_status times_ctx_jvp(void *c, jx_array *const *x, jx_array **o) {
  o[0] = jx_multiply(x[0], c), o[1] = jx_multiply(x[1], c);
  return JX_OK;
}
static jx_status closes_over(void *kind, jx_array *const *x, jx_array **o) {
  jx_fn *f = jx_fn_new("times_x", 1, 1, times_ctx, x[0]), *r = jx_fn_new("times_x_jvp", 2, 2, times_ctx_jvp, x[0]);
  jx_fn *cf = kind ? jx_custom_jvp(f, r, 0, NULL) : jx_checkpoint(f, JX_CHECKPOINT_NOTHING_SAVEABLE);
  jx_array *y = NULL;
  jx_status s = jx_call(cf, x, &y);
  jx_fn_free(cf), jx_fn_free(r), jx_fn_free(f);
  o[0] = s == JX_OK ? jx_sum(y, 0, NULL, false) : NULL;
  return s;
}

/* A custom_jvp rule receives float0 tangents for its integer inputs, as JAX passes them
 * (JAX: `jax.custom_jvp` of f(x, n) = x * n, `jax.grad(f)(2., 3)`: the rule's tn is a
 * float0 array of n's shape); its tangent output for an integer output may be float0
 * (JAX's type) or zeros of the output's dtype. f(x, n) = (x * n, n + 1). */
static jx_status times_n(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_multiply(x[0], x[1]);
  o[1] = jx_add(x[1], jx_scalar_int(1));
  return JX_OK;
}
static jx_status times_n_jvp(void *c, jx_array *const *x, jx_array **o) {
  jx_dtype *seen = c; /* x: x, n, tx, tn */
  seen[0] = jx_dtype_of(x[2]), seen[1] = jx_dtype_of(x[3]);
  int ndim = jx_ndim(x[1]);
  const int64_t *shape = jx_shape(x[1]);
  o[0] = jx_multiply(x[0], x[1]);
  o[1] = jx_add(x[1], jx_scalar_int(1));
  o[2] = jx_multiply(x[2], x[1]);
  o[3] = seen[2] ? jx_zeros(ndim, shape, JX_INT32) : jx_zeros(ndim, shape, JX_FLOAT0);
  return JX_OK;
}
static jx_status first_of(void *c, jx_array *const *x, jx_array **o) {
  jx_array *r[2] = {NULL};
  jx_status s = jx_call(c, x, r);
  o[0] = s == JX_OK ? jx_sum(r[0], 0, NULL, false) : NULL;
  return s;
}

static void test_float0_tangents(void) {
  int64_t live = jx_live_arrays();
  jx_scope_begin();
  int32_t nv[3] = {3, -1, 2};
  jx_array *x = jx_array_from((float[]){2.0f, 0.5f, -1.0f}, JX_FLOAT32, 1, (int64_t[]){3});
  jx_array *n = jx_array_from(nv, JX_INT32, 1, (int64_t[]){3});
  for (int int_zeros = 0; int_zeros < 2; int_zeros++) {
    jx_dtype seen[3] = {JX_BOOL, JX_BOOL, int_zeros ? JX_INT32 : 0};
    jx_fn *f = jx_fn_new("times_n", 2, 2, times_n, NULL), *r = jx_fn_new("times_n_jvp", 4, 4, times_n_jvp, seen);
    jx_fn *cf = jx_custom_jvp(f, r, 0, NULL);
    jx_fn *s = jx_fn_new_with_free("sum", 2, 1, first_of, jx_fn_ref(cf), fn_free);
    jx_fn *g = jx_grad(s, 1, (int[]){0}), *jg = jx_jit(g);
    for (int j = 0; j < 2; j++) {
      jx_array *out = NULL;
      seen[0] = seen[1] = JX_BOOL;
      CHECK(jx_call(j ? jg : g, (jx_array *[]){x, n}, &out) == JX_OK);
      CHECK_EQ_INT(seen[0], JX_FLOAT32);
      CHECK_EQ_INT(seen[1], JX_FLOAT0);
      float got[3];
      CHECK(out && jx_read(out, got, sizeof got) == JX_OK);
      for (int i = 0; i < 3; i++) CHECK(got[i] == (float)nv[i]);
    }
    jx_fn_free(jg), jx_fn_free(g), jx_fn_free(s), jx_fn_free(cf), jx_fn_free(r), jx_fn_free(f);
  }
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_arrays(), live);
}

static void test_errors(void) {
  jx_array *x = jx_linspace(-1.0, 1.0, 5, JX_FLOAT32), *t = jx_ones_like(x), *out[2] = {NULL};
  /* a checkpointed function closing over a value traced by grad: the value becomes an
   * operand of the checkpoint (as JAX), grad(sum(x * x)) = 2x eagerly and under jit */
  jx_fn *fco = jx_fn_new("closes_over", 1, 1, closes_over, NULL), *gco = jx_grad(fco, 1, NULL), *jgco = jx_jit(gco);
  for (int j = 0; j < 2; j++) {
    CHECK(jx_call(j ? jgco : gco, &x, out) == JX_OK);
    float got[5];
    CHECK(out[0] && jx_read(out[0], got, sizeof got) == JX_OK);
    for (int i = 0; out[0] && i < 5; i++) CHECK(got[i] == (float)(2 * (-1.0 + 0.5 * i)));
    jx_free(out[0]), out[0] = NULL;
  }
  jx_fn_free(jgco), jx_fn_free(gco), jx_fn_free(fco);
  /* a custom_jvp function closing over a traced value: refused (pass it as an argument) */
  fco = jx_fn_new("closes_over", 1, 1, closes_over, (void *)1), gco = jx_grad(fco, 1, NULL);
  CHECK(jx_call(gco, &x, out) == JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "jx_custom_jvp: times_x closes over a traced value of an enclosing "
                                  "transformation; pass it as an argument instead");
  jx_fn_free(gco), jx_fn_free(fco);
  /* forward mode through custom_vjp, as JAX */
  CHECK(jx_jvp(G_SIN, (jx_array *[]){x, x}, (jx_array *[]){t, t}, out, out + 1) == JX_ERR_UNSUPPORTED);
  CHECK_ERROR(JX_ERR_UNSUPPORTED, "can't apply forward-mode autodiff (jvp) to a custom_vjp function");
  CHECK(out[0] == NULL);
  /* a rule whose tangent output has the wrong dtype: both types named */
  jx_fn *f = jx_fn_new("log1pexp", 1, 1, log1pexp, NULL), *r = jx_fn_new("bad_jvp", 2, 2, bad_dtype_jvp, NULL);
  jx_fn *cf = jx_custom_jvp(f, r, 0, NULL), *g = grad_sum(cf, 1, NULL);
  CHECK(jx_call(g, &x, out) == JX_ERR_DTYPE);
  CHECK_ERROR(JX_ERR_DTYPE, "custom_jvp(log1pexp): tangent output 0 of bad_jvp is int32[5] but primal "
                            "output 0 is float32[5]");
  jx_fn_free(g), jx_fn_free(cf), jx_fn_free(r);
  /* a bwd whose cotangent has the wrong shape */
  jx_fn *fw = jx_fn_new("square_fwd", 1, 2, square_fwd, NULL), *bw = jx_fn_new("bad_bwd", 2, 1, bad_shape_bwd, NULL);
  jx_fn *sq = jx_fn_new("square", 1, 1, square, NULL);
  cf = jx_custom_vjp(sq, fw, bw), g = grad_sum(cf, 1, NULL);
  CHECK(jx_call(g, &x, out) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "custom_vjp(square): cotangent output 0 of bad_bwd is float32[] but primal "
                            "input 0 is float32[5]");
  jx_fn_free(g), jx_fn_free(cf);
  /* arities and nondiff_argnums checked when the function is made */
  CHECK(jx_custom_jvp(f, fw, 0, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_custom_jvp: the rule square_fwd takes 1 inputs and gives 2 outputs, but must take 2 and give 2");
  CHECK(jx_custom_jvp(f, fw, 1, (int[]){3}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "nondiff_argnums[0] = 3 is out of range");
  CHECK(jx_custom_vjp(sq, fw, fw) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_custom_vjp: bwd square_fwd takes 1 inputs and gives 2 outputs, but must take 2 and give 1");
  CHECK(jx_checkpoint(NULL, JX_CHECKPOINT_NOTHING_SAVEABLE) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_checkpoint: f is NULL");
  jx_fn_free(f), jx_fn_free(fw), jx_fn_free(bw), jx_fn_free(sq);
  jx_free(x), jx_free(t);
}

/* make_jaxpr keeps the custom call as one equation holding the primal program, printed
 * as JAX 0.10.2 prints jax.make_jaxpr(log1pexp) and jax.make_jaxpr(g_sin) (rules by
 * name where JAX prints the Python function). */
static void test_make_jaxpr(void) {
  jx_array *x = jx_zeros(1, (int64_t[]){3}, JX_FLOAT32);
  char *text = jx_make_jaxpr(LOG1PEXP, &x);
  CHECK_STR(text, "{ lambda ; a:f32[3]. let\n"
                  "    b:f32[3] = custom_jvp_call[\n"
                  "      name=log1pexp\n"
                  "      call_jaxpr={ lambda ; c:f32[3]. let\n"
                  "          d:f32[3] = exp c\n"
                  "          e:f32[3] = log1p d\n"
                  "        in (e,) }\n"
                  "      jvp=log1pexp_jvp\n"
                  "      symbolic_zeros=False\n"
                  "    ] a\n"
                  "  in (b,) }");
  free(text);
  text = jx_make_jaxpr(G_SIN, (jx_array *[]){x, x});
  CHECK_STR(text, "{ lambda ; a:f32[3] b:f32[3]. let\n"
                  "    c:f32[3] = custom_vjp_call[\n"
                  "      name=g_sin\n"
                  "      bwd=g_sin_bwd\n"
                  "      call_jaxpr={ lambda ; d:f32[3] e:f32[3]. let\n"
                  "          f:f32[3] = sin d\n"
                  "          g:f32[3] = mul f e\n"
                  "        in (g,) }\n"
                  "      fwd=g_sin_fwd\n"
                  "      symbolic_zeros=False\n"
                  "    ] a b\n"
                  "  in (c,) }");
  free(text);
  jx_free(x);
}

int main(void) {
  int64_t fns0 = jx_live_fns();
  jx_fn *f, *r, *r2;
  f = jx_fn_new("log1pexp", 1, 1, log1pexp, NULL), r = jx_fn_new("log1pexp_jvp", 2, 2, log1pexp_jvp, NULL);
  LOG1PEXP = jx_custom_jvp(f, r, 0, NULL), jx_fn_free(f), jx_fn_free(r);
  f = jx_fn_new("f_sin", 2, 1, f_sin, NULL), r = jx_fn_new("f_sin_jvp", 4, 2, f_sin_jvp, NULL);
  F_SIN = jx_custom_jvp(f, r, 0, NULL), jx_fn_free(f), jx_fn_free(r);
  f = jx_fn_new("scaled_tanh", 2, 1, scaled_tanh, NULL), r = jx_fn_new("scaled_tanh_jvp", 3, 2, scaled_tanh_jvp, NULL);
  SCALED = jx_custom_jvp(f, r, 1, (int[]){0}), jx_fn_free(f), jx_fn_free(r);
  f = jx_fn_new("clip_gradient", 3, 1, identity3, NULL), r = jx_fn_new("clip_fwd", 3, 3, clip_fwd, NULL);
  r2 = jx_fn_new("clip_bwd", 3, 3, clip_bwd, NULL);
  CLIP = jx_custom_vjp(f, r, r2), jx_fn_free(f), jx_fn_free(r), jx_fn_free(r2);
  f = jx_fn_new("g_sin", 2, 1, f_sin, NULL), r = jx_fn_new("g_sin_fwd", 2, 4, g_sin_fwd, NULL);
  r2 = jx_fn_new("g_sin_bwd", 4, 2, g_sin_bwd, NULL);
  G_SIN = jx_custom_vjp(f, r, r2), jx_fn_free(f), jx_fn_free(r), jx_fn_free(r2);
  f = jx_fn_new("square", 1, 1, square, NULL), r = jx_fn_new("square_fwd", 1, 2, square_fwd, NULL);
  r2 = jx_fn_new("square_wrong_bwd", 2, 1, square_wrong_bwd, NULL);
  SQUARE_WRONG = jx_custom_vjp(f, r, r2), jx_fn_free(f), jx_fn_free(r), jx_fn_free(r2);
  CHECK(LOG1PEXP && F_SIN && SCALED && CLIP && G_SIN && SQUARE_WRONG);
  TEST_RUN(test_goldens);
  TEST_RUN(test_vmap_vs_loop);
  TEST_RUN(test_jit_inside);
  TEST_RUN(test_rule_laziness);
  TEST_RUN(test_float0_tangents);
  TEST_RUN(test_errors);
  TEST_RUN(test_make_jaxpr);
  jx_fn *all[] = {LOG1PEXP, F_SIN, SCALED, CLIP, G_SIN, SQUARE_WRONG};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) jx_fn_free(all[i]);
  CHECK_EQ_INT(jx_live_fns(), fns0);
  return test_finish();
}
