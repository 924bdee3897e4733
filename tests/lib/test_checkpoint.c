/* test_checkpoint.c -- jax.checkpoint / remat with its policies (src/lib/custom.c,
 * src/transform/jvp.c's checkpoint rule): values and gradients of a checkpointed MLP
 * against JAX goldens (tools/golden_custom.py) for every policy, eagerly and under jit,
 * vmap of grad; the memory reverse mode keeps measured as the peak of live buffer bytes
 * (jx_peak_buffer_bytes) on a deep MLP: lower with nothing_saveable than without
 * checkpoint, gradients equal; make_jaxpr shows the checkpoint equation. A checkpointed
 * function closing over traced values (a scan body reaching w through ctx, under grad;
 * jvp, vmap, grad of grad) or over a constant, against JAX goldens, eagerly and under jit;
 * the closed-over value as the checkpoint's leading operand in make_jaxpr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "test.h"

static const jx_checkpoint_policy POLICY[] = {
    JX_CHECKPOINT_NOTHING_SAVEABLE, JX_CHECKPOINT_EVERYTHING_SAVEABLE, JX_CHECKPOINT_DOTS_SAVEABLE,
    JX_CHECKPOINT_DOTS_WITH_NO_BATCH_DIMS_SAVEABLE};
static const char *const POLICY_NAME[] = {"nothing", "everything", "dots", "dots_no_batch"};

/* tanh(h @ w): in w, h */
static jx_status layer(void *c, jx_array *const *x, jx_array **o) {
  (void)c;
  o[0] = jx_tanh(jx_matmul(x[1], x[0]));
  return JX_OK;
}

/* sum(L(w3, L(w2, L(w1, x))) ** 2) with L = ctx (a layer function) */
static jx_status mlp(void *c, jx_array *const *x, jx_array **o) {
  jx_array *h = x[3], *r[1];
  for (int l = 0; l < 3; l++) {
    jx_status s = jx_call(c, (jx_array *[]){x[l], h}, r);
    if (s != JX_OK) return s;
    h = r[0];
  }
  o[0] = jx_sum(jx_square(h), 0, NULL, false);
  return JX_OK;
}

static void fn_free(void *c) { jx_fn_free(c); }

/* The MLP with each layer checkpointed under policy p (p < 0: no checkpoint). */
static jx_fn *make_mlp(int p) {
  jx_fn *l = jx_fn_new("layer", 2, 1, layer, NULL);
  jx_fn *cl = p < 0 ? jx_fn_ref(l) : jx_checkpoint(l, POLICY[p]);
  jx_fn_free(l);
  return jx_fn_new_with_free("mlp", 4, 1, mlp, cl, fn_free);
}

/* ---- checkpoint of functions closing over traced values (tools/golden_custom.py's
 * closure_cases): w reaches the checkpointed function through ctx, so it is a value the
 * enclosing transformation traces, hoisted to a leading operand of the checkpoint. */

/* (c, x) -> (sin(c * w + x), cos(c)), w = ctx */
static jx_status scan_body_w(void *w, jx_array *const *x, jx_array **o) {
  o[0] = jx_sin(jx_add(jx_multiply(x[0], w), x[1]));
  o[1] = jx_cos(x[0]);
  return JX_OK;
}
/* scan_remat(w, xs): c, ys = scan(checkpoint(scan_body_w), 1.0, xs); c + sum(ys) */
static jx_status scan_remat(void *ctx, jx_array *const *x, jx_array **o) {
  (void)ctx;
  jx_fn *b = jx_fn_new("body", 2, 2, scan_body_w, x[0]), *cb = jx_checkpoint(b, JX_CHECKPOINT_NOTHING_SAVEABLE);
  jx_array *c0 = jx_scalar_of(1.0, JX_FLOAT32), *c[1], *ys[1];
  jx_status s = jx_lax_scan(cb, 1, &c0, 1, &x[1], -1, false, 1, c, ys);
  jx_fn_free(cb), jx_fn_free(b);
  o[0] = s == JX_OK ? jx_add(c[0], jx_sum(ys[0], 0, NULL, false)) : NULL;
  return s;
}

/* x -> sin(x * w) * w, w = ctx */
static jx_status sin_xw_w(void *w, jx_array *const *x, jx_array **o) {
  o[0] = jx_multiply(jx_sin(jx_multiply(x[0], w)), w);
  return JX_OK;
}
/* remat_closure(w, x) = checkpoint(sin_xw_w with w)(x) */
static jx_status remat_closure(void *ctx, jx_array *const *x, jx_array **o) {
  (void)ctx;
  jx_fn *f = jx_fn_new("sin_xw_w", 1, 1, sin_xw_w, x[0]), *cf = jx_checkpoint(f, JX_CHECKPOINT_NOTHING_SAVEABLE);
  jx_status s = jx_call(cf, &x[1], o);
  jx_fn_free(cf), jx_fn_free(f);
  return s;
}
/* sum(f(x...)) for the jx_fn f in ctx */
static jx_status sum_of(void *f, jx_array *const *x, jx_array **o) {
  jx_array *r[1];
  jx_status s = jx_call(f, x, r);
  o[0] = s == JX_OK ? jx_sum(r[0], 0, NULL, false) : NULL;
  return s;
}
/* jvp of remat_closure: (w, x, tw, tx) -> (primal, tangent) */
static jx_status jvp_remat_closure(void *f, jx_array *const *x, jx_array **o) {
  return jx_jvp(f, x, x + 2, o, o + 1);
}
/* x -> sin(x * C) with C = ctx, a constant array (no tracer) */
static jx_status sin_xc(void *c, jx_array *const *x, jx_array **o) {
  o[0] = jx_sin(jx_multiply(x[0], c));
  return JX_OK;
}
static const float CONST[4] = {0.5f, -1.25f, 2.0f, 0.75f}; /* golden_custom.py's CONST */
static jx_array *g_const;

static void fn_free(void *c);

static jx_fn *make_closure(const char *fn) {
  if (!strcmp(fn, "scan_remat")) return jx_fn_new("scan_remat", 2, 1, scan_remat, NULL);
  if (!strcmp(fn, "grad_scan_remat")) {
    jx_fn *f = jx_fn_new("scan_remat", 2, 1, scan_remat, NULL), *g = jx_grad(f, 2, (int[]){0, 1});
    jx_fn_free(f);
    return g;
  }
  jx_fn *rc = jx_fn_new("remat_closure", 2, 1, remat_closure, NULL), *r = NULL;
  jx_fn *loss = jx_fn_new_with_free("sum_remat_closure", 2, 1, sum_of, jx_fn_ref(rc), fn_free);
  if (!strcmp(fn, "jvp_remat_closure"))
    r = jx_fn_new_with_free("jvp_remat_closure", 4, 2, jvp_remat_closure, jx_fn_ref(rc), fn_free);
  if (!strcmp(fn, "grad_remat_closure")) r = jx_grad(loss, 2, (int[]){0, 1});
  if (!strcmp(fn, "grad_grad_remat_closure")) {
    jx_fn *g = jx_grad(loss, 1, NULL);
    r = jx_grad(g, 1, NULL);
    jx_fn_free(g);
  }
  if (!strcmp(fn, "vmap_remat_closure")) r = jx_vmap(rc, (int[]){0, JX_NOT_MAPPED}, NULL);
  if (!strcmp(fn, "vmap_grad_remat_closure")) {
    jx_fn *g = jx_grad(loss, 2, (int[]){0, 1});
    r = jx_vmap(g, (int[]){0, JX_NOT_MAPPED}, NULL);
    jx_fn_free(g);
  }
  if (!strcmp(fn, "grad_remat_const")) {
    jx_fn *f = jx_fn_new("sin_xc", 1, 1, sin_xc, g_const), *cf = jx_checkpoint(f, JX_CHECKPOINT_NOTHING_SAVEABLE);
    jx_fn *l = jx_fn_new_with_free("sum_remat_const", 1, 1, sum_of, jx_fn_ref(cf), fn_free);
    r = jx_grad(l, 1, NULL);
    jx_fn_free(l), jx_fn_free(cf), jx_fn_free(f);
  }
  jx_fn_free(loss), jx_fn_free(rc);
  return r;
}

static jx_fn *make(const char *fn) {
  if (strstr(fn, "remat")) return make_closure(fn);
  if (!strcmp(fn, "mlp")) return make_mlp(0);
  for (int p = 0; p < 4; p++) {
    char name[64];
    snprintf(name, sizeof name, "grad_mlp_%s", POLICY_NAME[p]);
    if (strcmp(fn, name)) continue;
    jx_fn *m = make_mlp(p), *g = jx_grad(m, 4, (int[]){0, 1, 2, 3});
    jx_fn_free(m);
    return g;
  }
  if (!strcmp(fn, "vmap_grad_mlp_nothing")) {
    jx_fn *m = make_mlp(0), *g = jx_grad(m, 1, NULL);
    jx_fn *v = jx_vmap(g, (int[]){JX_NOT_MAPPED, JX_NOT_MAPPED, JX_NOT_MAPPED, 0}, NULL);
    jx_fn_free(m), jx_fn_free(g);
    return v;
  }
  return NULL;
}

static void test_goldens(void) {
  int n = 0, ran = 0;
  GoldenCase *cases = golden_load("custom.txt", &n);
  CHECK(cases != NULL);
  for (int k = 0; cases && k < n; k++) {
    GoldenCase *c = &cases[k];
    if (strncmp(c->fn, "mlp", 3) && !strstr(c->fn, "_mlp") && !strstr(c->fn, "remat")) continue;
    jx_fn *f = make(c->fn);
    CHECK_MSG(f != NULL, "%s: no function %s", c->name, c->fn);
    if (!f) continue;
    ran++;
    golden_check_eager_jit(c, f, 1e-5, 1e-6);
    jx_fn_free(f);
  }
  CHECK_EQ_INT(ran, 14);
  golden_free(cases, n);
}

/* ---- memory: a deep MLP, h <- tanh(h @ W_l + b) for L layers; loss sum(h^2). */
enum { L = 12 };
static const int64_t B = 128, H = 256;

static jx_status dense(void *c, jx_array *const *x, jx_array **o) {
  (void)c; /* W, b, h */
  o[0] = jx_tanh(jx_add(jx_matmul(x[2], x[0]), x[1]));
  return JX_OK;
}
static jx_status deep(void *c, jx_array *const *x, jx_array **o) {
  jx_array *h = x[2 * L], *r[1];
  for (int l = 0; l < L; l++) {
    jx_status s = jx_call(c, (jx_array *[]){x[2 * l], x[2 * l + 1], h}, r);
    if (s != JX_OK) return s;
    h = r[0];
  }
  o[0] = jx_sum(jx_square(h), 0, NULL, false);
  return JX_OK;
}

/* Peak bytes above the inputs while computing grad of the deep MLP (every layer
 * checkpointed with policy p; p < 0: none); grads returned in g (2L entries). */
static int64_t deep_grad_peak(int p, jx_array *const *in, jx_array **g) {
  jx_fn *d = jx_fn_new("dense", 3, 1, dense, NULL);
  jx_fn *cd = p < 0 ? jx_fn_ref(d) : jx_checkpoint(d, POLICY[p]);
  jx_fn *f = jx_fn_new_with_free("deep", 2 * L + 1, 1, deep, jx_fn_ref(cd), fn_free);
  int argnums[2 * L];
  for (int i = 0; i < 2 * L; i++) argnums[i] = i;
  jx_fn *gf = jx_grad(f, 2 * L, argnums);
  int64_t before = jx_live_buffer_bytes();
  jx_reset_peak_buffer_bytes();
  jx_status s = jx_call(gf, in, g);
  CHECK_MSG(s == JX_OK, "%s", jx_last_error());
  for (int i = 0; s == JX_OK && i < 2 * L; i++) jx_block_until_ready(g[i]);
  int64_t peak = jx_peak_buffer_bytes() - before;
  jx_fn_free(gf), jx_fn_free(f), jx_fn_free(cd), jx_fn_free(d);
  return peak;
}

/* Bytes the deep MLP's pullback keeps between the forward and the backward pass (its
 * residuals): live bytes after jx_vjp minus before, less the output. */
static int64_t deep_residuals(int p, jx_array *const *in) {
  jx_fn *d = jx_fn_new("dense", 3, 1, dense, NULL);
  jx_fn *cd = p < 0 ? jx_fn_ref(d) : jx_checkpoint(d, POLICY[p]);
  jx_fn *f = jx_fn_new_with_free("deep", 2 * L + 1, 1, deep, jx_fn_ref(cd), fn_free);
  int64_t before = jx_live_buffer_bytes();
  jx_array *y[1] = {NULL};
  jx_fn *pb = jx_vjp(f, in, y);
  CHECK_MSG(pb != NULL, "%s", jx_last_error());
  int64_t kept = jx_live_buffer_bytes() - before - 4; /* the float32 loss */
  jx_free(y[0]);
  jx_fn_free(pb), jx_fn_free(f), jx_fn_free(cd), jx_fn_free(d);
  return kept;
}

static void test_memory(void) {
  jx_array *in[2 * L + 1];
  jx_array *key = jx_random_key(7);
  for (int l = 0; l < L; l++) {
    jx_array *k = jx_random_fold_in(key, l);
    jx_array *w = jx_random_normal(k, 2, (int64_t[]){H, H}, JX_FLOAT32);
    jx_array *scale = jx_scalar(1.0 / 16);
    in[2 * l] = jx_multiply(w, scale);
    in[2 * l + 1] = jx_full(1, (int64_t[]){H}, 0.01 * l, JX_FLOAT32);
    jx_free(k), jx_free(w), jx_free(scale);
  }
  in[2 * L] = jx_random_normal(key, 2, (int64_t[]){B, H}, JX_FLOAT32);
  jx_array *g0[2 * L], *g[2 * L];
  int64_t base = deep_grad_peak(-1, in, g0);
  double act = (double)(B * H * 4); /* one activation's bytes */
  printf("deep MLP (%d layers, batch %lld, width %lld) grad: peak live bytes above the inputs\n",
         L, (long long)B, (long long)H);
  printf("  no checkpoint:        %10lld (%.1f activations)\n", (long long)base, base / act);
  int64_t peaks[4], res[4], res0 = deep_residuals(-1, in);
  for (int p = 0; p < 4; p++) {
    peaks[p] = deep_grad_peak(p, in, g);
    res[p] = deep_residuals(p, in);
    printf("  %-21s %10lld (%.1f activations)\n", POLICY_NAME[p], (long long)peaks[p], peaks[p] / act);
    for (int i = 0; i < 2 * L; i++) {
      double *a = test_read_f64(g[i]), *b = test_read_f64(g0[i]);
      int64_t n = jx_size(g[i]);
      double err = 0;
      for (int64_t k = 0; a && b && k < n; k++) {
        double e = a[k] - b[k];
        err = e > err ? e : -e > err ? -e : err;
      }
      CHECK_MSG(err < 1e-4, "%s: grad %d differs from no checkpoint by %g", POLICY_NAME[p], i, err);
      free(a), free(b);
      jx_free(g[i]);
    }
  }
  printf("residuals the pullback keeps (jx_vjp):\n  no checkpoint:        %10lld (%.1f activations)\n",
         (long long)res0, res0 / act);
  for (int p = 0; p < 4; p++)
    printf("  %-21s %10lld (%.1f activations)\n", POLICY_NAME[p], (long long)res[p], res[p] / act);
  /* nothing_saveable keeps only each layer's input (one activation per layer) */
  CHECK_MSG(res[0] <= (L + 1) * (int64_t)act && res[0] < res0 * 3 / 4, "nothing_saveable keeps %lld bytes",
            (long long)res[0]);
  CHECK_MSG(res[0] <= res[2] && res[2] <= res[1], "residuals: nothing %lld, dots %lld, everything %lld",
            (long long)res[0], (long long)res[2], (long long)res[1]);
  CHECK_MSG(peaks[0] < base * 9 / 10, "nothing_saveable peak %lld not below 9/10 of %lld", (long long)peaks[0],
            (long long)base);
  CHECK_MSG(peaks[0] <= peaks[2], "nothing_saveable peak %lld above dots_saveable %lld", (long long)peaks[0],
            (long long)peaks[2]);
  for (int i = 0; i < 2 * L; i++) jx_free(g0[i]);
  for (int i = 0; i <= 2 * L; i++) jx_free(in[i]);
  jx_free(key);
}

static void test_make_jaxpr(void) {
  jx_fn *l = jx_fn_new("layer", 2, 1, layer, NULL), *cl = jx_checkpoint(l, JX_CHECKPOINT_DOTS_SAVEABLE);
  jx_array *w = jx_ones(2, (int64_t[]){3, 2}, JX_FLOAT32), *h = jx_ones(2, (int64_t[]){4, 3}, JX_FLOAT32);
  char *text = jx_make_jaxpr(cl, (jx_array *[]){w, h});
  CHECK_MSG(text && strstr(text, "= checkpoint[\n      differentiated=False\n      jaxpr={ lambda ; ") && strstr(text, "tanh") &&
                strstr(text, "policy=DotsSaveable(only_if_no_batch_dims=False)\n      prevent_cse=True\n"),
            "%s", text ? text : "NULL");
  free(text);
  jx_free(w), jx_free(h);
  jx_fn_free(cl), jx_fn_free(l);
}

/* make_jaxpr of a checkpoint closing over w (f32[3]): JAX 0.10.2 prints for
 * jax.make_jaxpr(lambda w, x: jax.checkpoint(lambda x: jnp.sin(x * w))(x)) the text below
 * with the primitive named remat2: w is the checkpoint's leading operand. */
static jx_status sin_xw(void *w, jx_array *const *x, jx_array **o) {
  o[0] = jx_sin(jx_multiply(x[0], w));
  return JX_OK;
}
static jx_status remat_sin_xw(void *ctx, jx_array *const *x, jx_array **o) {
  (void)ctx;
  jx_fn *f = jx_fn_new("sin_xw", 1, 1, sin_xw, x[0]), *cf = jx_checkpoint(f, JX_CHECKPOINT_NOTHING_SAVEABLE);
  jx_status s = jx_call(cf, &x[1], o);
  jx_fn_free(cf), jx_fn_free(f);
  return s;
}
static void test_make_jaxpr_closure(void) {
  jx_fn *f = jx_fn_new("remat_sin_xw", 2, 1, remat_sin_xw, NULL);
  jx_array *x = jx_ones(1, (int64_t[]){3}, JX_FLOAT32);
  char *text = jx_make_jaxpr(f, (jx_array *[]){x, x});
  CHECK_STR(text, "{ lambda ; a:f32[3] b:f32[3]. let\n"
                  "    c:f32[3] = checkpoint[\n"
                  "      differentiated=False\n"
                  "      jaxpr={ lambda ; d:f32[3] e:f32[3]. let\n"
                  "          f:f32[3] = mul e d\n"
                  "          g:f32[3] = sin f\n"
                  "        in (g,) }\n"
                  "      policy=None\n"
                  "      prevent_cse=True\n"
                  "    ] a b\n"
                  "  in (c,) }");
  free(text);
  jx_free(x);
  jx_fn_free(f);
}

int main(void) {
  int64_t fns0 = jx_live_fns();
  g_const = jx_array_from(CONST, JX_FLOAT32, 1, (int64_t[]){4});
  TEST_RUN(test_goldens);
  TEST_RUN(test_memory);
  TEST_RUN(test_make_jaxpr);
  TEST_RUN(test_make_jaxpr_closure);
  jx_free(g_const);
  CHECK_EQ_INT(jx_live_fns(), fns0);
  return test_finish();
}
