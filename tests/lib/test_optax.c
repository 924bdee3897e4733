/* test_optax.c -- optax (src/lib/optax*.c) against goldens from optax itself
 * (tests/golden/optax.txt, tools/golden_optax.py): 20-step trajectories of every
 * optimizer (lion, lamb and adafactor -- factored and not -- included) and of chains
 * with global-norm clipping on a small quadratic, eagerly and
 * as a jitted step, with their final states in jaxc's documented layout; schedules;
 * losses and their gradients. Then the state API, vmap of a step against a loop,
 * numeric gradients of the losses, and bad inputs.
 *
 * Tolerances (float32): trajectories rtol 2e-5, atol 2e-6 -- 20 steps compound the ulp-
 * level differences of pow/sqrt/rsqrt/cos between jaxc and XLA (adam divides by
 * 1 - b2^t ~ 1e-3 in the first steps, which magnifies them 1000-fold relative to the
 * moment); schedules rtol 2e-6, atol 1e-8 (one pow or cos; 1 + cos cancels near the
 * end of a cosine decay, leaving a few ulps of cos times the initial value); losses rtol 2e-6, atol 1e-6 (sums
 * over 5 classes in another order). Integer state (count) is exact. */
#include <stdint.h>
#include <stdlib.h>

#include "golden.h"
#include "test.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static GoldenCase *cases;
static int ncases;

static double pd(const GoldenCase *c, const char *key, double dflt) {
  const char *s = golden_param(c, key);
  return s ? strtod(s, NULL) : dflt;
}
static bool pis(const GoldenCase *c, const char *key, const char *v) {
  const char *s = golden_param(c, key);
  return s && !strcmp(s, v);
}

/* The schedule a case describes (sched=...), or NULL for none. */
static jx_optax_schedule *schedule_of(const GoldenCase *c) {
  const char *k = golden_param(c, "sched");
  if (!k || !strcmp(k, "none")) return NULL;
  double init = pd(c, "s_init", 0), end = pd(c, "s_end", NAN), ex = pd(c, "s_exp", 1);
  int64_t steps = golden_param_int(c, "s_steps", 0), begin = golden_param_int(c, "s_begin", 0);
  if (!strcmp(k, "const")) return jx_optax_constant_schedule(init);
  if (!strcmp(k, "linear")) return jx_optax_linear_schedule(init, end, steps, begin);
  if (!strcmp(k, "exp"))
    return jx_optax_exponential_decay(init, steps, pd(c, "s_rate", 1), begin,
                                      golden_param_int(c, "s_stair", 0) != 0, end);
  if (!strcmp(k, "cos")) return jx_optax_cosine_decay_schedule(init, steps, pd(c, "s_alpha", 0), ex);
  if (!strcmp(k, "wcos"))
    return jx_optax_warmup_cosine_decay_schedule(init, pd(c, "s_peak", 0),
                                                 golden_param_int(c, "s_warm", 0), steps, end, ex);
  return NULL;
}

/* The optimizer a case describes (opt=..., optionally with a schedule and clipping). */
static jx_optax_transform *optimizer_of(const GoldenCase *c) {
  jx_optax_schedule *s = schedule_of(c);
  double lr = pd(c, "lr", 0), b1 = pd(c, "b1", 0.9), b2 = pd(c, "b2", 0.999);
  double eps = pd(c, "eps", 1e-8), mom = pd(c, "momentum", 0);
  bool nes = golden_param_int(c, "nesterov", 0) != 0;
  jx_optax_transform *t = NULL;
  if (pis(c, "opt", "sgd")) t = s ? jx_optax_sgd_sched(s, mom, nes) : jx_optax_sgd(lr, mom, nes);
  if (pis(c, "opt", "adam"))
    t = s ? jx_optax_adam_sched(s, b1, b2, eps) : jx_optax_adam(lr, b1, b2, eps);
  if (pis(c, "opt", "adamw"))
    t = s ? jx_optax_adamw_sched(s, b1, b2, eps, pd(c, "wd", 0))
          : jx_optax_adamw(lr, b1, b2, eps, pd(c, "wd", 0));
  if (pis(c, "opt", "rmsprop")) {
    double d = pd(c, "decay", 0.9), is = pd(c, "initial_scale", 0);
    t = s ? jx_optax_rmsprop_sched(s, d, eps, is, mom, nes)
          : jx_optax_rmsprop(lr, d, eps, is, mom, nes);
  }
  if (pis(c, "opt", "adagrad"))
    t = s ? jx_optax_adagrad_sched(s, pd(c, "init_acc", 0.1), eps)
          : jx_optax_adagrad(lr, pd(c, "init_acc", 0.1), eps);
  if (pis(c, "opt", "lion")) t = jx_optax_lion(lr, b1, b2, pd(c, "wd", 0));
  if (pis(c, "opt", "lamb"))
    t = jx_optax_lamb(lr, b1, b2, eps, pd(c, "eps_root", 0), pd(c, "wd", 0));
  if (pis(c, "opt", "adafactor")) /* clip_thr=inf parses as INFINITY: optax's None */
    t = jx_optax_adafactor(lr, golden_param_int(c, "min_dim", 128), pd(c, "decay_rate", 0.8),
                           golden_param_int(c, "decay_offset", 0),
                           golden_param_int(c, "param_scale", 1) != 0, pd(c, "clip_thr", 1),
                           mom, pd(c, "wd", 0), eps, golden_param_int(c, "factored", 1) != 0);
  jx_optax_schedule_free(s);
  double clip = pd(c, "clip", 0);
  if (t && clip > 0) {
    jx_optax_transform *parts[2] = {jx_optax_clip_by_global_norm(clip), t};
    jx_optax_transform *chained = jx_optax_chain(2, parts);
    jx_optax_transform_free(parts[0]), jx_optax_transform_free(t);
    t = chained;
  }
  return t;
}

/* ----------------------------------------------------------- the problem */

/* sum(0.5 aW (W - cW)^2) + sum(0.5 ab (b - cb)^2); ctx: {aW, cW, ab, cb}. */
static jx_status quadratic(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array **k = ctx;
  jx_array *lw = jx_sum(jx_multiply(jx_multiply(jx_scalar(0.5), k[0]),
                                    jx_square(jx_subtract(in[0], k[1]))), 0, NULL, false);
  jx_array *lb = jx_sum(jx_multiply(jx_multiply(jx_scalar(0.5), k[2]),
                                    jx_square(jx_subtract(in[1], k[3]))), 0, NULL, false);
  out[0] = jx_add(lw, lb);
  return out[0] ? JX_OK : jx_last_status();
}

/* Runs 20 steps of tx from the case's initial params and compares the trajectory and the
 * final state. jit: each step is jit(update_fn) + apply, with the state moved through
 * jx_optax_state_arrays / jx_optax_state_from_arrays. */
static void run_optimizer(const GoldenCase *c, bool jit) {
  char ctx[256];
  snprintf(ctx, sizeof ctx, "%s%s (line %d)", c->name, jit ? " [jit]" : "", c->line);
  jx_scope_begin();
  jx_array *in[6];
  for (int i = 0; i < 6; i++) in[i] = golden_to_array(&c->in[i]);
  jx_optax_transform *tx = optimizer_of(c);
  CHECK_MSG(tx != NULL, "%s: %s", ctx, jx_last_error());
  jx_fn *loss = jx_fn_new("quadratic", 2, 1, quadratic, in + 2);
  jx_fn *grad = jx_grad(loss, 2, (int[]){0, 1});
  jx_fn *upd = jit ? jx_optax_update_fn(tx, 2) : NULL, *jupd = jit ? jx_jit(upd) : NULL;
  jx_array *params[2] = {in[0], in[1]}, *traj[2][20];
  jx_optax_state *st = jx_optax_init(tx, 2, params);
  for (int step = 0; step < 20 && st; step++) {
    jx_array *g[2] = {NULL, NULL}, *u[2] = {NULL, NULL};
    CHECK_MSG(jx_call(grad, params, g) == JX_OK, "%s: %s", ctx, jx_last_error());
    if (!jit) {
      CHECK_MSG(jx_optax_update(tx, st, 2, g, params, u) == JX_OK, "%s: %s", ctx, jx_last_error());
    } else {
      int ns;
      jx_array *const *sa = jx_optax_state_arrays(st, &ns);
      jx_array *args[16], *outs[16] = {NULL};
      args[0] = g[0], args[1] = g[1];
      for (int i = 0; i < ns; i++) args[2 + i] = sa[i];
      args[2 + ns] = params[0], args[3 + ns] = params[1];
      CHECK_MSG(jx_call(jupd, args, outs) == JX_OK, "%s: %s", ctx, jx_last_error());
      jx_optax_state *next = jx_optax_state_from_arrays(tx, 2, ns, outs + 2);
      jx_optax_state_free(st);
      st = next;
      u[0] = outs[0], u[1] = outs[1];
    }
    jx_array *np[2] = {NULL, NULL};
    CHECK(jx_optax_apply_updates(2, params, u, np) == JX_OK);
    params[0] = traj[0][step] = np[0];
    params[1] = traj[1][step] = np[1];
    if (!np[0] || !np[1]) break;
  }
  if (st && c->nout >= 2) {
    golden_compare(ctx, jx_stack(20, traj[0], 0), &c->out[0], 2e-5, 2e-6);
    golden_compare(ctx, jx_stack(20, traj[1], 0), &c->out[1], 2e-5, 2e-6);
    int ns;
    jx_array *const *sa = jx_optax_state_arrays(st, &ns);
    CHECK_MSG(ns == c->nout - 2, "%s: %d state arrays, optax has %d", ctx, ns, c->nout - 2);
    for (int i = 0; i < ns && i + 2 < c->nout; i++) {
      char sctx[300];
      snprintf(sctx, sizeof sctx, "%s state[%d]", ctx, i);
      golden_compare(sctx, sa[i], &c->out[2 + i], 2e-5, 2e-6);
    }
  }
  jx_optax_state_free(st);
  jx_fn_free(jupd), jx_fn_free(upd), jx_fn_free(grad), jx_fn_free(loss);
  jx_optax_transform_free(tx);
  jx_scope_end(0, NULL);
}

static void test_golden_optimizers(void) {
  int64_t fns = jx_live_fns();
  int n = 0;
  CHECK_MSG(cases != NULL, "cannot load optax.txt (run tools/golden_optax.py)");
  for (int i = 0; i < ncases; i++)
    if (!strcmp(cases[i].fn, "optimizer")) {
      run_optimizer(&cases[i], false);
      run_optimizer(&cases[i], true);
      n++;
    }
  CHECK_MSG(n >= 23, "only %d optimizer cases", n);
  printf("%d golden optimizer trajectories (eager and jit)\n", n);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

static void test_golden_schedules(void) {
  int n = 0;
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    if (strcmp(c->fn, "schedule")) continue;
    jx_scope_begin();
    jx_optax_schedule *s = schedule_of(c);
    CHECK_MSG(s != NULL, "%s: %s", c->name, jx_last_error());
    golden_compare(c->name, jx_optax_schedule_value(s, golden_to_array(&c->in[0])), &c->out[0],
                   2e-6, 1e-8);
    jx_optax_schedule_free(s);
    jx_scope_end(0, NULL);
    n++;
  }
  CHECK_MSG(n >= 9, "only %d schedule cases", n);
}

/* ---------------------------------------------------------------- losses */

static jx_array *loss_of(const GoldenCase *c, const char *fn, jx_array *x, jx_array *const *in) {
  int axis = (int)golden_param_int(c, "axis", -1);
  jx_array *where = golden_param_int(c, "where", 0) ? in[2] : NULL;
  jx_array *targets = golden_param_int(c, "targets", 1) && c->nin > 1 ? in[1] : NULL;
  if (!strcmp(fn, "softmax_cross_entropy"))
    return jx_optax_softmax_cross_entropy(x, in[1], axis, where);
  if (!strcmp(fn, "softmax_cross_entropy_with_integer_labels"))
    return jx_optax_softmax_cross_entropy_with_integer_labels(x, in[1], axis, where);
  if (!strcmp(fn, "sigmoid_binary_cross_entropy"))
    return jx_optax_sigmoid_binary_cross_entropy(x, in[1]);
  if (!strcmp(fn, "squared_error")) return jx_optax_squared_error(x, targets);
  if (!strcmp(fn, "l2_loss")) return jx_optax_l2_loss(x, targets);
  if (!strcmp(fn, "huber_loss")) return jx_optax_huber_loss(x, targets, pd(c, "delta", 1));
  return NULL;
}

typedef struct LossCtx {
  const GoldenCase *c;
  jx_array **in;
} LossCtx;

/* sum(nan_to_num(loss)) as the golden differentiates (NaN rows contribute 0). */
static jx_status loss_sum(void *ctx, jx_array *const *x, jx_array **out) {
  LossCtx *l = ctx;
  jx_array *v = loss_of(l->c, l->c->fn + 5, x[0], l->in);
  if (v) v = jx_where(jx_isnan(v), jx_scalar(0.0), v);
  out[0] = jx_sum(v, 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static void test_golden_losses(void) {
  int64_t fns = jx_live_fns();
  int n = 0;
  for (int i = 0; i < ncases; i++) {
    const GoldenCase *c = &cases[i];
    if (!strcmp(c->fn, "optimizer") || !strcmp(c->fn, "schedule")) continue;
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (line %d)", c->name, c->line);
    jx_scope_begin();
    jx_array *in[4] = {NULL};
    for (int k = 0; k < c->nin; k++) in[k] = golden_to_array(&c->in[k]);
    jx_array *got = NULL;
    if (!strncmp(c->fn, "grad_", 5)) {
      LossCtx l = {c, in};
      jx_fn *f = jx_fn_new("loss_sum", 1, 1, loss_sum, &l), *g = jx_grad(f, 1, NULL);
      jx_call(g, in, &got);
      jx_fn_free(g), jx_fn_free(f);
    } else {
      got = loss_of(c, c->fn, in[0], in);
    }
    golden_check(ctx, c, got, 2e-6, 1e-6);
    jx_clear_error();
    jx_scope_end(0, NULL);
    n++;
  }
  CHECK_MSG(n >= 30, "only %d loss cases", n);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

/* ------------------------------------------------------------- state API */

static jx_array *vec(int n, const float *v) { return jx_array_from(v, JX_FLOAT32, 1, (int64_t[]){n}); }

static void test_state_layout(void) {
  jx_scope_begin();
  jx_array *p[2] = {jx_ones(2, (int64_t[]){2, 3}, JX_FLOAT32), jx_ones(1, (int64_t[]){3}, JX_FLOAT32)};
  jx_optax_schedule *s = jx_optax_constant_schedule(0.1);
  jx_optax_transform *adam = jx_optax_adam(0.1, 0.9, 0.999, 1e-8);
  jx_optax_transform *sgd = jx_optax_sgd(0.1, 0, false);
  jx_optax_transform *sgds = jx_optax_sgd_sched(s, 0.9, false);
  jx_optax_state *sa = jx_optax_init(adam, 2, p), *ss = jx_optax_init(sgd, 2, p);
  jx_optax_state *sm = jx_optax_init(sgds, 2, p);
  CHECK_EQ_INT(jx_optax_state_size(sa), 5);
  CHECK_EQ_INT(jx_optax_state_size(ss), 0);
  CHECK_EQ_INT(jx_optax_state_size(sm), 3);
  CHECK_EQ_INT(jx_optax_state_size(NULL), -1);
  int n;
  jx_array *const *a = jx_optax_state_arrays(sa, &n);
  CHECK(n == 5 && jx_ndim(a[0]) == 0 && jx_dtype_of(a[0]) == JX_INT32 && jx_item(a[0]) == 0);
  CHECK(jx_ndim(a[1]) == 2 && jx_shape(a[1])[1] == 3 && jx_ndim(a[4]) == 1);
  a = jx_optax_state_arrays(sm, &n);
  CHECK(n == 3 && jx_ndim(a[0]) == 2 && jx_ndim(a[2]) == 0 && jx_dtype_of(a[2]) == JX_INT32);
  /* update advances the count and swaps the arrays; the old ones are released */
  jx_array *u[2];
  int64_t live = jx_live_arrays();
  CHECK(jx_optax_update(adam, sa, 2, p, p, u) == JX_OK);
  a = jx_optax_state_arrays(sa, &n);
  CHECK(jx_item(a[0]) == 1);
  CHECK_EQ_INT(jx_live_arrays(), live + 2 + 0); /* the two updates; state count unchanged */
  /* from_arrays / round trip */
  jx_optax_state *copy = jx_optax_state_from_arrays(adam, 2, n, a);
  CHECK(copy && jx_optax_state_size(copy) == 5 && jx_optax_state_arrays(copy, &n)[1] == a[1]);
  CHECK(jx_optax_state_from_arrays(adam, 2, 4, a) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_state_from_arrays: this transform keeps 5 state arrays for 2 parameters, got 4");
  /* a saturated count stays saturated (optax's safe_increment) */
  jx_array *arr[5] = {jx_scalar_of(2147483647.0, JX_INT32), a[1], a[2], a[3], a[4]};
  jx_optax_state *sat = jx_optax_state_from_arrays(adam, 2, 5, arr);
  CHECK(jx_optax_update(adam, sat, 2, p, NULL, u) == JX_OK);
  CHECK(jx_item(jx_optax_state_arrays(sat, &n)[0]) == 2147483647.0);
  jx_optax_state_free(sat), jx_optax_state_free(copy);
  jx_optax_state_free(sa), jx_optax_state_free(ss), jx_optax_state_free(sm);
  jx_optax_transform_free(adam), jx_optax_transform_free(sgd), jx_optax_transform_free(sgds);
  jx_optax_schedule_free(s);
  jx_scope_end(0, NULL);
}

/* apply_updates keeps the params' dtype; identity passes gradients through. */
static void test_apply_and_identity(void) {
  jx_scope_begin();
  float pv[3] = {1, 2, 3}, uv[3] = {0.5f, -1, 0.25f};
  jx_array *p = jx_astype(vec(3, pv), JX_BFLOAT16), *u = vec(3, uv), *out = NULL;
  CHECK(jx_optax_apply_updates(1, &p, &u, &out) == JX_OK);
  CHECK(out && jx_dtype_of(out) == JX_BFLOAT16);
  double *v = test_read_f64(out);
  CHECK(v && v[0] == 1.5 && v[1] == 1 && v[2] == 3.25);
  free(v);
  jx_optax_transform *id = jx_optax_identity();
  jx_optax_state *st = jx_optax_init(id, 1, &u);
  jx_array *g = NULL;
  CHECK(jx_optax_update(id, st, 1, &u, NULL, &g) == JX_OK && g == u);
  jx_optax_state_free(st), jx_optax_transform_free(id);
  jx_scope_end(0, NULL);
}

/* ------------------------------------------------ jit a whole training step */

typedef struct Train {
  jx_optax_transform *tx;
  int ns;
} Train;

/* in: W (4,3), b (3), x (8,4), y (8) int32, state[ns]; out: loss, W', b', state'[ns]. */
static jx_status loss_ce(void *ctx, jx_array *const *in, jx_array **out) {
  jx_array *logits = jx_add(jx_matmul(in[2], in[0]), in[1]);
  out[0] = jx_mean(jx_optax_softmax_cross_entropy_with_integer_labels(logits, in[3], -1, NULL),
                   0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

static jx_status train_step(void *ctx, jx_array *const *in, jx_array **out) {
  Train *t = ctx;
  jx_fn *f = jx_fn_new("loss_ce", 4, 1, loss_ce, NULL);
  jx_fn *vg = jx_value_and_grad(f, 2, (int[]){0, 1});
  jx_array *r[3] = {NULL};
  jx_status s = jx_call(vg, in, r);
  jx_fn_free(vg), jx_fn_free(f);
  if (s != JX_OK) return s;
  jx_optax_state *st = jx_optax_state_from_arrays(t->tx, 2, t->ns, in + 4);
  jx_array *u[2] = {NULL}, *np[2] = {NULL};
  s = jx_optax_update(t->tx, st, 2, r + 1, in, u);
  if (s == JX_OK) s = jx_optax_apply_updates(2, in, u, np);
  out[0] = r[0], out[1] = np[0], out[2] = np[1];
  int ns;
  jx_array *const *sa = jx_optax_state_arrays(st, &ns);
  for (int i = 0; s == JX_OK && i < ns; i++) out[3 + i] = jx_ref(sa[i]);
  jx_optax_state_free(st);
  return s;
}

static void test_jit_train_step(void) {
  int64_t fns = jx_live_fns();
  jx_scope_begin();
  float xv[32];
  int32_t yv[8];
  for (int i = 0; i < 32; i++) xv[i] = (float)((i * 37) % 11) / 5.0f - 1.0f;
  for (int i = 0; i < 8; i++) yv[i] = (i * 5) % 3;
  jx_array *x = jx_array_from(xv, JX_FLOAT32, 2, (int64_t[]){8, 4});
  jx_array *y = jx_array_from(yv, JX_INT32, 1, (int64_t[]){8});
  jx_array *p[2] = {jx_zeros(2, (int64_t[]){4, 3}, JX_FLOAT32), jx_zeros(1, (int64_t[]){3}, JX_FLOAT32)};
  jx_optax_schedule *sch = jx_optax_warmup_cosine_decay_schedule(0, 0.5, 3, 30, 0.01, 1);
  jx_optax_transform *parts[2] = {jx_optax_clip_by_global_norm(1.0),
                                  jx_optax_adamw_sched(sch, 0.9, 0.999, 1e-8, 1e-3)};
  jx_optax_transform *tx = jx_optax_chain(2, parts);
  jx_optax_state *st0 = jx_optax_init(tx, 2, p);
  Train t = {tx, jx_optax_state_size(st0)};
  CHECK_EQ_INT(t.ns, 6); /* adam {count, mu[2], nu[2]}, the schedule's count */
  jx_fn *step = jx_fn_new("train_step", 4 + t.ns, 3 + t.ns, train_step, &t);
  jx_fn *jstep = jx_jit(step);
  /* eager and jitted loops side by side */
  jx_array *cur[2][16];
  for (int k = 0; k < 2; k++) {
    cur[k][0] = p[0], cur[k][1] = p[1], cur[k][2] = x, cur[k][3] = y;
    int n;
    jx_array *const *sa = jx_optax_state_arrays(st0, &n);
    for (int i = 0; i < n; i++) cur[k][4 + i] = sa[i];
  }
  double first = 0, last = 0;
  for (int it = 0; it < 30; it++) {
    jx_array *o[2][16] = {{NULL}};
    CHECK_MSG(jx_call(step, cur[0], o[0]) == JX_OK, "eager step %d: %s", it, jx_last_error());
    CHECK_MSG(jx_call(jstep, cur[1], o[1]) == JX_OK, "jit step %d: %s", it, jx_last_error());
    if (!o[0][0] || !o[1][0]) break;
    double le = jx_item(o[0][0]), lj = jx_item(o[1][0]);
    CHECK_MSG(fabs(le - lj) <= 1e-5 * (1 + fabs(le)), "step %d: eager loss %.9g, jit %.9g", it, le, lj);
    if (it == 0) first = le;
    last = le;
    for (int k = 0; k < 2; k++) {
      cur[k][0] = o[k][1], cur[k][1] = o[k][2];
      for (int i = 0; i < t.ns; i++) cur[k][4 + i] = o[k][3 + i];
    }
  }
  CHECK_MSG(fabs(first - log(3.0)) < 1e-5 && last < 0.8 * first, "loss %g -> %g", first, last);
  CHECK(jx_item(cur[1][4]) == 30 && jx_item(cur[1][9]) == 30); /* both counts */
  jx_fn_free(jstep), jx_fn_free(step);
  jx_optax_state_free(st0);
  jx_optax_transform_free(tx), jx_optax_transform_free(parts[0]), jx_optax_transform_free(parts[1]);
  jx_optax_schedule_free(sch);
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

/* vmap of a step over three independent problems equals a loop over them. */
static void test_vmap_step(void) {
  int64_t fns = jx_live_fns();
  jx_scope_begin();
  jx_optax_transform *tx = jx_optax_adam(0.1, 0.8, 0.99, 1e-6);
  jx_fn *upd = jx_optax_update_fn(tx, 1);  /* (g, count, mu, nu, p) -> (u, count, mu, nu) */
  jx_fn *vupd = jx_vmap(upd, NULL, NULL);
  CHECK(jx_fn_nin(upd) == 5 && jx_fn_nout(upd) == 4);
  float gv[6] = {1, -2, 0.5f, 3, 0.25f, -1}, mv[6] = {0.1f, 0.2f, -0.3f, 0, 1, 2};
  int32_t cv[3] = {0, 4, 9};
  int64_t s32[2] = {3, 2};
  jx_array *g = jx_array_from(gv, JX_FLOAT32, 2, s32), *mu = jx_array_from(mv, JX_FLOAT32, 2, s32);
  jx_array *nu = jx_abs(mu), *p = jx_ones(2, s32, JX_FLOAT32);
  jx_array *cnt = jx_array_from(cv, JX_INT32, 1, (int64_t[]){3});
  jx_array *bo[4] = {NULL};
  CHECK(jx_call(vupd, (jx_array *[]){g, cnt, mu, nu, p}, bo) == JX_OK);
  for (int64_t r = 0; r < 3; r++) {
    jx_array *ri = jx_scalar_int(r);
    jx_array *row[5] = {jx_take(g, ri, 0), jx_take(cnt, ri, 0), jx_take(mu, ri, 0),
                        jx_take(nu, ri, 0), jx_take(p, ri, 0)};
    jx_array *lo[4] = {NULL};
    CHECK(jx_call(upd, row, lo) == JX_OK);
    for (int o = 0; o < 4; o++) {
      double *a = test_read_f64(jx_take(bo[o], ri, 0)), *b = test_read_f64(lo[o]);
      for (int64_t i = 0; a && b && i < jx_size(lo[o]); i++)
        CHECK_MSG(fabs(a[i] - b[i]) <= 1e-6 * (1 + fabs(b[i])), "row %lld out %d: %g vs %g",
                  (long long)r, o, a[i], b[i]);
      free(a), free(b);
    }
  }
  jx_fn_free(vupd), jx_fn_free(upd);
  jx_optax_transform_free(tx);
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_fns(), fns);
}

/* -------------------------------------------------- numeric loss gradients */

typedef enum LossKind { SCE, SCI, BCE, HUBER, L2 } LossKind;
typedef struct NumCtx {
  LossKind k;
  jx_array *labels;
} NumCtx;

static jx_status num_loss(void *ctx, jx_array *const *in, jx_array **out) {
  NumCtx *c = ctx;
  jx_array *l = NULL;
  switch (c->k) {
  case SCE: l = jx_optax_softmax_cross_entropy(in[0], c->labels, -1, NULL); break;
  case SCI: l = jx_optax_softmax_cross_entropy_with_integer_labels(in[0], c->labels, 0, NULL); break;
  case BCE: l = jx_optax_sigmoid_binary_cross_entropy(in[0], c->labels); break;
  case HUBER: l = jx_optax_huber_loss(in[0], c->labels, 0.7); break;
  case L2: l = jx_optax_l2_loss(in[0], c->labels); break;
  }
  out[0] = jx_sum(l, 0, NULL, false);
  return out[0] ? JX_OK : jx_last_status();
}

/* float64 gradients of each loss against central differences, element by element
 * (h = 1e-6: |got - want| <= 1e-6 (1 + |want|)). */
static void test_numeric_loss_grads(void) {
  jx_config_enable_x64(true);
  int64_t fns = jx_live_fns();
  jx_scope_begin();
  double xv[12], lv[12];
  for (int i = 0; i < 12; i++) xv[i] = 0.37 * ((i * 7) % 12) - 2.1, lv[i] = ((i * 5) % 7) / 7.0;
  int32_t iv[4] = {2, 0, 1, 2};
  jx_array *x = jx_array_from(xv, JX_FLOAT64, 2, (int64_t[]){3, 4});
  jx_array *probs = jx_nn_softmax(jx_array_from(lv, JX_FLOAT64, 2, (int64_t[]){3, 4}), 1, (int[]){-1}, NULL);
  jx_array *t = jx_array_from(lv, JX_FLOAT64, 2, (int64_t[]){3, 4});
  NumCtx cs[5] = {{SCE, probs}, {SCI, jx_array_from(iv, JX_INT32, 1, (int64_t[]){4})}, {BCE, t},
                  {HUBER, t}, {L2, t}};
  const char *names[5] = {"sce", "sci", "bce", "huber", "l2"};
  const double h = 1e-6;
  for (int k = 0; k < 5; k++) {
    jx_fn *f = jx_fn_new(names[k], 1, 1, num_loss, &cs[k]), *g = jx_grad(f, 1, NULL);
    jx_array *gr = NULL;
    CHECK_MSG(jx_call(g, &x, &gr) == JX_OK, "%s: %s", names[k], jx_last_error());
    double *gv = test_read_f64(gr);
    for (int i = 0; gv && i < 12; i++) {
      double e[12] = {0};
      e[i] = h;
      jx_array *d = jx_array_from(e, JX_FLOAT64, 2, (int64_t[]){3, 4});
      jx_array *lp = NULL, *lm = NULL;
      jx_call(f, (jx_array *[]){jx_add(x, d)}, &lp);
      jx_call(f, (jx_array *[]){jx_subtract(x, d)}, &lm);
      double fd = (jx_item(lp) - jx_item(lm)) / (2 * h);
      CHECK_MSG(fabs(gv[i] - fd) <= 1e-6 * (1 + fabs(fd)), "%s d/dx[%d]: %.12g vs %.12g",
                names[k], i, gv[i], fd);
    }
    free(gv);
    jx_fn_free(g), jx_fn_free(f);
  }
  jx_scope_end(0, NULL);
  CHECK_EQ_INT(jx_live_fns(), fns);
  jx_config_enable_x64(false);
}

/* ------------------------------------------------------------ bad inputs */

static void test_bad_hyperparameters(void) {
  CHECK(jx_optax_adam(NAN, 0.9, 0.999, 1e-8) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_adam: learning_rate must be finite, got nan");
  CHECK(jx_optax_adam(0.1, 1.0, 0.999, 1e-8) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_scale_by_adam: b1 must be in [0, 1), got 1");
  CHECK(jx_optax_adamw(0.1, 0.9, -0.1, 1e-8, 0.01) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "b2 must be in [0, 1), got -0.1");
  CHECK(jx_optax_adam(0.1, 0.9, 0.999, -1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "eps must be finite and >= 0, got -1");
  CHECK(jx_optax_adamw(0.1, 0.9, 0.999, 1e-8, INFINITY) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_adamw: weight_decay must be finite");
  CHECK(jx_optax_sgd(0.1, -0.5, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_sgd: momentum must be finite and >= 0, got -0.5");
  CHECK(jx_optax_rmsprop(0.1, 1.5, 1e-8, 0, 0, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_scale_by_rms: decay must be in [0, 1], got 1.5");
  CHECK(jx_optax_adagrad(0.1, -1, 1e-7) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "initial_accumulator_value must be finite and >= 0");
  CHECK(jx_optax_clip_by_global_norm(0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_clip_by_global_norm: max_norm must be finite and > 0, got 0");
  CHECK(jx_optax_sgd_sched(NULL, 0.9, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_sgd_sched: schedule is NULL");
  jx_optax_transform *ok = jx_optax_identity();
  CHECK(jx_optax_chain(2, (jx_optax_transform *[]){ok, NULL}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_chain: transform 1 is NULL");
  CHECK(jx_optax_chain(-1, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_chain");
  jx_optax_transform_free(ok);
  /* schedules */
  CHECK(jx_optax_cosine_decay_schedule(0.1, 0, 0, 1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_cosine_decay_schedule: decay_steps must be positive, got 0");
  CHECK(jx_optax_warmup_cosine_decay_schedule(0, 0.1, 10, 10, 0, 1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "need 0 <= warmup_steps < decay_steps, got warmup_steps 10, decay_steps 10");
  CHECK(jx_optax_exponential_decay(0.1, 10, 0.5, 0, false, INFINITY) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "end_value must be finite (or NAN for none)");
  CHECK(jx_optax_constant_schedule(NAN) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_constant_schedule: value must be finite");
  CHECK(jx_optax_schedule_value(NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_schedule_value: schedule is NULL");
  /* degenerate schedules are constants, as in optax */
  jx_scope_begin();
  jx_optax_schedule *c = jx_optax_exponential_decay(0.25, 0, 0.5, 0, false, NAN);
  jx_array *v = jx_optax_schedule_value(c, jx_scalar_int(7));
  CHECK(v && jx_item(v) == 0.25);
  jx_optax_schedule_free(c);
  jx_scope_end(0, NULL);
}

static void test_bad_updates(void) {
  jx_scope_begin();
  jx_array *p[2] = {jx_ones(1, (int64_t[]){3}, JX_FLOAT32), jx_ones(1, (int64_t[]){2}, JX_FLOAT32)};
  jx_array *bad[2] = {jx_ones(1, (int64_t[]){4}, JX_FLOAT32), p[1]};
  jx_optax_transform *tx = jx_optax_adamw(0.1, 0.9, 0.999, 1e-8, 0.01);
  jx_optax_transform *other = jx_optax_adamw(0.1, 0.9, 0.999, 1e-8, 0.01);
  jx_optax_state *st = jx_optax_init(tx, 2, p);
  jx_array *u[2] = {NULL, NULL};
  CHECK(jx_optax_update(tx, st, 2, p, NULL, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_update: add_decayed_weights needs the params");
  int n;
  CHECK(u[0] == NULL && jx_item(jx_optax_state_arrays(st, &n)[0]) == 0); /* unchanged */
  CHECK(jx_optax_update(other, st, 2, p, p, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "the state was made for another transform");
  CHECK(jx_optax_update(tx, st, 1, p, p, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "the state is for 2 parameters, got 1");
  CHECK(jx_optax_update(tx, st, 2, bad, NULL, u) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_optax_update: state mu[0] has shape (3,) but the gradient has shape (4,)");
  CHECK(jx_optax_update(tx, st, 2, p, bad, u) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "state (params)[0] has shape (4,) but the gradient has shape (3,)");
  CHECK(jx_optax_update(tx, st, 2, (jx_array *[]){p[0], NULL}, p, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_update: grads[1] is NULL");
  CHECK(jx_optax_update(NULL, st, 2, p, p, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_update: transform is NULL");
  CHECK(jx_optax_update(tx, NULL, 2, p, p, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_update: state is NULL");
  CHECK(jx_optax_init(tx, 2, (jx_array *[]){p[0], NULL}) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_init: params[1] is NULL");
  CHECK(jx_optax_init(NULL, 2, p) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_init: transform is NULL");
  CHECK(jx_optax_apply_updates(2, p, (jx_array *[]){p[0], NULL}, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_apply_updates: updates[1] is NULL");
  CHECK(u[0] == NULL && u[1] == NULL);
  CHECK(jx_optax_apply_updates(2, p, bad, u) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_optax_apply_updates: params[0] + updates[0]: ");
  CHECK(u[0] == NULL && u[1] == NULL);
  CHECK(jx_optax_update_fn(NULL, 2) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_update_fn: transform is NULL");
  /* a state array of the wrong kind */
  jx_array *arr[5] = {jx_zeros(1, (int64_t[]){2}, JX_INT32), p[0], p[1], p[0], p[1]};
  jx_optax_state *weird = jx_optax_state_from_arrays(tx, 2, 5, arr);
  CHECK(jx_optax_update(tx, weird, 2, p, p, u) == JX_ERR_SHAPE);
  CHECK_ERROR(JX_ERR_SHAPE, "state count must be a 0-d integer array, got int32[2]");
  jx_optax_state_free(weird), jx_optax_state_free(st);
  jx_optax_transform_free(tx), jx_optax_transform_free(other);
  /* losses */
  CHECK(jx_optax_softmax_cross_entropy(NULL, p[0], -1, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_softmax_cross_entropy: logits is NULL");
  CHECK(jx_optax_softmax_cross_entropy(p[0], p[0], 1, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "jx_optax_softmax_cross_entropy: axis 1 is out of bounds");
  jx_array *lg = jx_ones(2, (int64_t[]){2, 3}, JX_FLOAT32);
  CHECK(jx_optax_softmax_cross_entropy_with_integer_labels(lg, jx_zeros(1, (int64_t[]){3}, JX_INT32), -1, NULL) == NULL);
  CHECK_ERROR(JX_ERR_SHAPE, "labels (3,) must have logits' shape (2,3) without axis 1");
  CHECK(jx_optax_sigmoid_binary_cross_entropy(jx_zeros(1, (int64_t[]){2}, JX_INT32), p[1]) == NULL);
  CHECK_ERROR(JX_ERR_DTYPE, "jx_optax_sigmoid_binary_cross_entropy: logits must be floating, got int32");
  CHECK(jx_optax_huber_loss(p[0], NULL, -1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_huber_loss: delta must be finite and >= 0, got -1");
  CHECK(jx_optax_l2_loss(NULL, NULL) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_l2_loss: predictions is NULL");
  jx_scope_end(0, NULL);
}

/* lion / lamb / adafactor: hyper-parameter errors as documented, params required where
 * optax requires them, and adafactor's state layout for factored (3-d, ties) and
 * unfactored arrays (optax's _factored_dims). */
static void test_lion_lamb_adafactor(void) {
  CHECK(jx_optax_lion(0.1, 1.5, 0.99, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_scale_by_lion: b1 must be in [0, 1], got 1.5");
  CHECK(jx_optax_lion(NAN, 0.9, 0.99, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_lion: learning_rate must be finite, got nan");
  CHECK(jx_optax_lion(0.1, 0.9, 0.99, INFINITY) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_lion: weight_decay must be finite");
  CHECK(jx_optax_lamb(0.1, 0.9, 1.0, 1e-6, 0, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_scale_by_adam: b2 must be in [0, 1), got 1");
  CHECK(jx_optax_lamb(0.1, 0.9, 0.999, -1, 0, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "eps must be finite and >= 0, got -1");
  CHECK(jx_optax_scale_by_trust_ratio(-1, 1, 0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_scale_by_trust_ratio: min_norm must be finite and >= 0");
  CHECK(jx_optax_adafactor(1, 128, 0.8, 0, true, 0, 0, 0, 1e-30, true) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_adafactor: clipping_threshold must be > 0 (INFINITY: none), got 0");
  CHECK(jx_optax_adafactor(1, -1, 0.8, 0, true, 1, 0, 0, 1e-30, true) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_scale_by_factored_rms: min_dim_size_to_factor must be >= 0, got -1");
  CHECK(jx_optax_adafactor(1, 128, 0.8, 0, true, 1, 1.5, 0, 1e-30, true) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_adafactor: momentum must be in [0, 1], got 1.5");
  CHECK(jx_optax_adafactor(NAN, 128, 0.8, 0, true, 1, 0, 0, 1e-30, true) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_adafactor: learning_rate must be finite, got nan");
  CHECK(jx_optax_adafactor(1, 128, 0.8, 0, true, 1, 0, 0, -1, true) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_scale_by_factored_rms: epsilon must be finite and >= 0");
  CHECK(jx_optax_clip_by_block_rms(0) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_clip_by_block_rms: threshold must be finite and > 0, got 0");
  CHECK(jx_optax_scale_by_param_block_rms(-1) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_scale_by_param_block_rms: min_scale must be finite and >= 0");
  CHECK(jx_optax_ema(2, false) == NULL);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_ema: decay must be in [0, 1], got 2");

  jx_scope_begin();
  jx_array *p[3] = {jx_ones(3, (int64_t[]){3, 4, 5}, JX_FLOAT32), jx_ones(1, (int64_t[]){6}, JX_FLOAT32),
                    jx_ones(2, (int64_t[]){4, 4}, JX_FLOAT32)};
  jx_array *u[3] = {NULL};
  /* params are needed */
  jx_optax_transform *lamb = jx_optax_lamb(0.1, 0.9, 0.999, 1e-6, 0, 0);
  jx_optax_state *ls = jx_optax_init(lamb, 3, p);
  CHECK_EQ_INT(jx_optax_state_size(ls), 7);
  CHECK(jx_optax_update(lamb, ls, 3, p, NULL, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_update: add_decayed_weights needs the params");
  jx_optax_transform *tr = jx_optax_scale_by_trust_ratio(0, 1, 0);
  jx_optax_state *ts = jx_optax_init(tr, 3, p);
  CHECK(jx_optax_update(tr, ts, 3, p, NULL, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "jx_optax_update: scale_by_trust_ratio needs the params");
  jx_optax_state_free(ts), jx_optax_transform_free(tr);
  jx_optax_transform *ada = jx_optax_adafactor(1, 4, 0.8, 0, false, 1, 0.9, 0, 1e-30, true);
  jx_optax_state *as = jx_optax_init(ada, 3, p);
  /* {count, v_row[3], v_col[3], v[3]} then the ema's {count, ema[3]} */
  CHECK_EQ_INT(jx_optax_state_size(as), 14);
  int ns;
  jx_array *const *sa = jx_optax_state_arrays(as, &ns);
  static const int64_t want[10][3] = {{-1}, {3, 4}, {1}, {4}, {3, 5}, {1}, {4}, {1}, {6}, {1}};
  static const int wnd[10] = {0, 2, 1, 1, 2, 1, 1, 1, 1, 1};
  for (int i = 0; i < 10 && i < ns; i++) {
    CHECK_MSG(jx_ndim(sa[i]) == wnd[i], "state[%d] ndim %d", i, jx_ndim(sa[i]));
    for (int d = 0; d < wnd[i] && jx_ndim(sa[i]) == wnd[i]; d++)
      CHECK_MSG(jx_shape(sa[i])[d] == want[i][d], "state[%d] dim %d", i, d);
  }
  CHECK(jx_optax_update(ada, as, 3, p, NULL, u) == JX_ERR_VALUE);
  CHECK_ERROR(JX_ERR_VALUE, "scale_by_factored_rms needs the params");
  CHECK(jx_optax_update(ada, as, 3, p, p, u) == JX_OK);
  CHECK(u[0] && jx_ndim(u[0]) == 3 && u[2] && jx_ndim(u[2]) == 2);
  jx_optax_state_free(ls), jx_optax_state_free(as);
  jx_optax_transform_free(lamb), jx_optax_transform_free(ada);
  jx_scope_end(0, NULL);
}

int main(void) {
  int64_t fns = jx_live_fns();
  cases = golden_load("optax.txt", &ncases);
  TEST_RUN(test_golden_optimizers);
  TEST_RUN(test_golden_schedules);
  TEST_RUN(test_golden_losses);
  TEST_RUN(test_state_layout);
  TEST_RUN(test_apply_and_identity);
  TEST_RUN(test_jit_train_step);
  TEST_RUN(test_vmap_step);
  TEST_RUN(test_numeric_loss_grads);
  TEST_RUN(test_bad_hyperparameters);
  TEST_RUN(test_bad_updates);
  TEST_RUN(test_lion_lamb_adafactor);
  golden_free(cases, ncases);
  CHECK_MSG(jx_live_fns() == fns, "leaked %lld functions", (long long)(jx_live_fns() - fns));
  return test_finish();
}
