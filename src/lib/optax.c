/* optax.c -- optax's gradient transformations (optax/_src/alias.py, transform.py,
 * transforms/) over a flat list of parameter arrays: building blocks (scale, trace,
 * scale_by_adam, ...), chain, the usual optimizers as chains, init/update, and the state
 * as a flat list of ordinary jx_arrays so a training step can be jitted.
 *
 * A transform is an immutable, refcounted tree (chains hold their children). A state
 * holds, for one transform and n parameters, the arrays of every stateful node in
 * chain order (the layout is documented in jaxc.h); it owns them with internal
 * references (array_retain), so scopes never release them. update() computes in a
 * scope and swaps the new state arrays in only when everything succeeded. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numpy/np.h"

typedef enum TxKind {
  TX_IDENTITY,  /* no state */
  TX_SCALE,     /* u * step; no state */
  TX_SCHEDULE,  /* u * sign * schedule(count); state: count */
  TX_TRACE,     /* momentum; state: trace[n] */
  TX_ADAM,      /* state: count, mu[n], nu[n] */
  TX_RMS,       /* state: nu[n] */
  TX_RSS,       /* state: sum_of_squares[n] */
  TX_DECAY,     /* u + wd * p; no state */
  TX_CLIP_NORM, /* no state */
  TX_LION,      /* state: count, mu[n] */
  TX_TRUST,     /* scale_by_trust_ratio; no state */
  TX_FACTORED,  /* scale_by_factored_rms; state: count, v_row[n], v_col[n], v[n] */
  TX_BLOCK_CLIP, /* clip_by_block_rms; no state */
  TX_PARAM_RMS, /* scale_by_param_block_rms; no state */
  TX_EMA,       /* state: count, ema[n] */
  TX_CHAIN      /* the children's states, in order */
} TxKind;

struct jx_optax_transform {
  int refcount;
  TxKind kind;
  double a, b, eps, eps_root; /* scale: a = step; schedule: a = sign; trace: a = decay;
                                 adam: a = b1, b = b2; rms: a = decay, b = initial_scale;
                                 rss: b = initial accumulator; decay: a = weight decay;
                                 clip: a = max_norm; lion: a = b1, b = b2; trust: a =
                                 min_norm, b = trust_coefficient, eps; factored: a =
                                 decay_rate, b = step_offset, eps, k = min_dim_size_to_factor,
                                 flag = factored; block clip: a = threshold; param rms: a =
                                 min_scale; ema: a = decay, flag = debias, k = 1 for a
                                 float32 accumulator */
  bool nesterov, flag;
  int64_t k;
  jx_optax_schedule *sched;
  int n;
  jx_optax_transform **children;
};

struct jx_optax_state {
  jx_optax_transform *tx; /* a reference */
  int nparams, n;
  jx_array **arrays;      /* n internal references */
};

static jx_array *wf(double v) { return jx_scalar(v); }
static jx_array *wi(int64_t v) { return jx_scalar_int(v); }

/* ------------------------------------------------------------ construction */

static jx_optax_transform *tx_new(TxKind kind) {
  jx_optax_transform *t = calloc(1, sizeof *t);
  if (!t) {
    error_set(JX_ERR_OOM, "jx_optax: out of memory creating a transform");
    return NULL;
  }
  t->refcount = 1;
  t->kind = kind;
  return t;
}

jx_optax_transform *jx_optax_transform_ref(jx_optax_transform *tx) {
  if (tx) tx->refcount++;
  return tx;
}

void jx_optax_transform_free(jx_optax_transform *tx) {
  if (!tx || --tx->refcount > 0) return;
  for (int i = 0; i < tx->n; i++) jx_optax_transform_free(tx->children[i]);
  free(tx->children);
  jx_optax_schedule_free(tx->sched);
  free(tx);
}

/* Hyper-parameter checks: JX_ERR_VALUE naming fn. */
static bool check_finite(const char *fn, const char *what, double v) {
  if (isfinite(v)) return true;
  error_set(JX_ERR_VALUE, "%s: %s must be finite, got %g", fn, what, v);
  return false;
}
static bool check_range(const char *fn, const char *what, double v, double lo, double hi,
                        bool hi_open) {
  if (v >= lo && (hi_open ? v < hi : v <= hi)) return true;
  error_set(JX_ERR_VALUE, "%s: %s must be in [%g, %g%c, got %g", fn, what, lo, hi,
            hi_open ? ')' : ']', v);
  return false;
}
static bool check_nonneg(const char *fn, const char *what, double v) {
  if (isfinite(v) && v >= 0) return true;
  error_set(JX_ERR_VALUE, "%s: %s must be finite and >= 0, got %g", fn, what, v);
  return false;
}

jx_optax_transform *jx_optax_identity(void) { return tx_new(TX_IDENTITY); }

jx_optax_transform *jx_optax_scale(double step_size) {
  if (!check_finite("jx_optax_scale", "step_size", step_size)) return NULL;
  jx_optax_transform *t = tx_new(TX_SCALE);
  if (t) t->a = step_size;
  return t;
}

static jx_optax_transform *schedule_tx(const char *fn, jx_optax_schedule *s, double sign) {
  if (np_null_arg(fn, s, "schedule")) return NULL;
  jx_optax_transform *t = tx_new(TX_SCHEDULE);
  if (t) t->a = sign, t->sched = jx_optax_schedule_ref(s);
  return t;
}

jx_optax_transform *jx_optax_scale_by_schedule(jx_optax_schedule *step_size_fn) {
  return schedule_tx("jx_optax_scale_by_schedule", step_size_fn, 1);
}

jx_optax_transform *jx_optax_scale_by_learning_rate(double learning_rate) {
  if (!check_finite("jx_optax_scale_by_learning_rate", "learning_rate", learning_rate))
    return NULL;
  return jx_optax_scale(-learning_rate);
}

jx_optax_transform *jx_optax_scale_by_learning_rate_sched(jx_optax_schedule *learning_rate) {
  return schedule_tx("jx_optax_scale_by_learning_rate_sched", learning_rate, -1);
}

jx_optax_transform *jx_optax_trace(double decay, bool nesterov) {
  if (!check_nonneg("jx_optax_trace", "decay", decay)) return NULL;
  jx_optax_transform *t = tx_new(TX_TRACE);
  if (t) t->a = decay, t->nesterov = nesterov;
  return t;
}

jx_optax_transform *jx_optax_scale_by_adam(double b1, double b2, double eps, double eps_root,
                                           bool nesterov) {
  const char *fn = "jx_optax_scale_by_adam";
  if (!check_range(fn, "b1", b1, 0, 1, true) || !check_range(fn, "b2", b2, 0, 1, true) ||
      !check_nonneg(fn, "eps", eps) || !check_nonneg(fn, "eps_root", eps_root))
    return NULL;
  jx_optax_transform *t = tx_new(TX_ADAM);
  if (t) t->a = b1, t->b = b2, t->eps = eps, t->eps_root = eps_root, t->nesterov = nesterov;
  return t;
}

jx_optax_transform *jx_optax_scale_by_rms(double decay, double eps, double initial_scale) {
  const char *fn = "jx_optax_scale_by_rms";
  if (!check_range(fn, "decay", decay, 0, 1, false) || !check_nonneg(fn, "eps", eps) ||
      !check_nonneg(fn, "initial_scale", initial_scale))
    return NULL;
  jx_optax_transform *t = tx_new(TX_RMS);
  if (t) t->a = decay, t->eps = eps, t->b = initial_scale;
  return t;
}

jx_optax_transform *jx_optax_scale_by_rss(double initial_accumulator_value, double eps) {
  const char *fn = "jx_optax_scale_by_rss";
  if (!check_nonneg(fn, "initial_accumulator_value", initial_accumulator_value) ||
      !check_nonneg(fn, "eps", eps))
    return NULL;
  jx_optax_transform *t = tx_new(TX_RSS);
  if (t) t->b = initial_accumulator_value, t->eps = eps;
  return t;
}

jx_optax_transform *jx_optax_add_decayed_weights(double weight_decay) {
  if (!check_finite("jx_optax_add_decayed_weights", "weight_decay", weight_decay)) return NULL;
  jx_optax_transform *t = tx_new(TX_DECAY);
  if (t) t->a = weight_decay;
  return t;
}

jx_optax_transform *jx_optax_clip_by_global_norm(double max_norm) {
  const char *fn = "jx_optax_clip_by_global_norm";
  if (!(max_norm > 0) || isinf(max_norm)) {
    error_set(JX_ERR_VALUE, "%s: max_norm must be finite and > 0, got %g", fn, max_norm);
    return NULL;
  }
  jx_optax_transform *t = tx_new(TX_CLIP_NORM);
  if (t) t->a = max_norm;
  return t;
}

jx_optax_transform *jx_optax_chain(int n, jx_optax_transform *const *transforms) {
  const char *fn = "jx_optax_chain";
  if (n < 0 || (n > 0 && !transforms)) {
    error_set(JX_ERR_VALUE, "%s: need n >= 0 transforms, got n = %d%s", fn, n,
              n > 0 ? " and NULL" : "");
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!transforms[i]) {
      error_set(JX_ERR_VALUE, "%s: transform %d is NULL", fn, i);
      return NULL;
    }
  jx_optax_transform *t = tx_new(TX_CHAIN);
  if (!t) return NULL;
  t->children = calloc(n ? (size_t)n : 1, sizeof *t->children);
  if (!t->children) {
    free(t);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  t->n = n;
  for (int i = 0; i < n; i++) t->children[i] = jx_optax_transform_ref(transforms[i]);
  return t;
}

/* Chains built here consume the references of their parts (NULL parts: the first error
 * is already recorded, everything is freed). */
static jx_optax_transform *chain_owned(int n, jx_optax_transform **parts) {
  bool ok = true;
  for (int i = 0; i < n; i++) ok = ok && parts[i];
  jx_optax_transform *t = ok ? jx_optax_chain(n, parts) : NULL;
  for (int i = 0; i < n; i++) jx_optax_transform_free(parts[i]);
  return t;
}

/* The learning-rate step: a float (sched == NULL) or a schedule. */
static jx_optax_transform *lr_tx(const char *fn, double lr, jx_optax_schedule *sched,
                                 bool use_sched) {
  if (use_sched) return schedule_tx(fn, sched, -1);
  if (!check_finite(fn, "learning_rate", lr)) return NULL;
  return jx_optax_scale(-lr);
}

static jx_optax_transform *sgd_(const char *fn, double lr, jx_optax_schedule *s, bool use_s,
                                double momentum, bool nesterov) {
  if (!check_nonneg(fn, "momentum", momentum)) return NULL;
  jx_optax_transform *parts[2] = {NULL, NULL};
  int n = 0;
  if (momentum != 0) parts[n++] = jx_optax_trace(momentum, nesterov);
  parts[n++] = lr_tx(fn, lr, s, use_s);
  return chain_owned(n, parts);
}

jx_optax_transform *jx_optax_sgd(double learning_rate, double momentum, bool nesterov) {
  return sgd_("jx_optax_sgd", learning_rate, NULL, false, momentum, nesterov);
}
jx_optax_transform *jx_optax_sgd_sched(jx_optax_schedule *learning_rate, double momentum,
                                       bool nesterov) {
  return sgd_("jx_optax_sgd_sched", 0, learning_rate, true, momentum, nesterov);
}

static jx_optax_transform *adamw_(const char *fn, double lr, jx_optax_schedule *s, bool use_s,
                                  double b1, double b2, double eps, bool decay, double wd) {
  if (decay && !check_finite(fn, "weight_decay", wd)) return NULL;
  jx_optax_transform *parts[3] = {jx_optax_scale_by_adam(b1, b2, eps, 0, false), NULL, NULL};
  int n = 1;
  if (decay) parts[n++] = jx_optax_add_decayed_weights(wd);
  parts[n++] = parts[0] ? lr_tx(fn, lr, s, use_s) : NULL;
  return chain_owned(n, parts);
}

jx_optax_transform *jx_optax_adam(double learning_rate, double b1, double b2, double eps) {
  return adamw_("jx_optax_adam", learning_rate, NULL, false, b1, b2, eps, false, 0);
}
jx_optax_transform *jx_optax_adam_sched(jx_optax_schedule *learning_rate, double b1, double b2,
                                        double eps) {
  return adamw_("jx_optax_adam_sched", 0, learning_rate, true, b1, b2, eps, false, 0);
}
jx_optax_transform *jx_optax_adamw(double learning_rate, double b1, double b2, double eps,
                                   double weight_decay) {
  return adamw_("jx_optax_adamw", learning_rate, NULL, false, b1, b2, eps, true, weight_decay);
}
jx_optax_transform *jx_optax_adamw_sched(jx_optax_schedule *learning_rate, double b1, double b2,
                                         double eps, double weight_decay) {
  return adamw_("jx_optax_adamw_sched", 0, learning_rate, true, b1, b2, eps, true,
                weight_decay);
}

static jx_optax_transform *rmsprop_(const char *fn, double lr, jx_optax_schedule *s,
                                    bool use_s, double decay, double eps, double initial_scale,
                                    double momentum, bool nesterov) {
  if (!check_nonneg(fn, "momentum", momentum)) return NULL;
  jx_optax_transform *parts[3] = {jx_optax_scale_by_rms(decay, eps, initial_scale), NULL, NULL};
  int n = 1;
  parts[n++] = parts[0] ? lr_tx(fn, lr, s, use_s) : NULL;
  if (momentum != 0) parts[n++] = jx_optax_trace(momentum, nesterov);
  return chain_owned(n, parts);
}

jx_optax_transform *jx_optax_rmsprop(double learning_rate, double decay, double eps,
                                     double initial_scale, double momentum, bool nesterov) {
  return rmsprop_("jx_optax_rmsprop", learning_rate, NULL, false, decay, eps, initial_scale,
                  momentum, nesterov);
}
jx_optax_transform *jx_optax_rmsprop_sched(jx_optax_schedule *learning_rate, double decay,
                                           double eps, double initial_scale, double momentum,
                                           bool nesterov) {
  return rmsprop_("jx_optax_rmsprop_sched", 0, learning_rate, true, decay, eps, initial_scale,
                  momentum, nesterov);
}

static jx_optax_transform *adagrad_(const char *fn, double lr, jx_optax_schedule *s,
                                    bool use_s, double init, double eps) {
  jx_optax_transform *parts[2] = {jx_optax_scale_by_rss(init, eps), NULL};
  parts[1] = parts[0] ? lr_tx(fn, lr, s, use_s) : NULL;
  return chain_owned(2, parts);
}

jx_optax_transform *jx_optax_adagrad(double learning_rate, double initial_accumulator_value,
                                     double eps) {
  return adagrad_("jx_optax_adagrad", learning_rate, NULL, false, initial_accumulator_value,
                  eps);
}
jx_optax_transform *jx_optax_adagrad_sched(jx_optax_schedule *learning_rate,
                                           double initial_accumulator_value, double eps) {
  return adagrad_("jx_optax_adagrad_sched", 0, learning_rate, true, initial_accumulator_value,
                  eps);
}

jx_optax_transform *jx_optax_scale_by_lion(double b1, double b2) {
  const char *fn = "jx_optax_scale_by_lion";
  if (!check_range(fn, "b1", b1, 0, 1, false) || !check_range(fn, "b2", b2, 0, 1, false))
    return NULL;
  jx_optax_transform *t = tx_new(TX_LION);
  if (t) t->a = b1, t->b = b2;
  return t;
}

jx_optax_transform *jx_optax_scale_by_trust_ratio(double min_norm, double trust_coefficient,
                                                  double eps) {
  const char *fn = "jx_optax_scale_by_trust_ratio";
  if (!check_nonneg(fn, "min_norm", min_norm) ||
      !check_finite(fn, "trust_coefficient", trust_coefficient) || !check_nonneg(fn, "eps", eps))
    return NULL;
  jx_optax_transform *t = tx_new(TX_TRUST);
  if (t) t->a = min_norm, t->b = trust_coefficient, t->eps = eps;
  return t;
}

jx_optax_transform *jx_optax_scale_by_factored_rms(bool factored, double decay_rate,
                                                   int64_t step_offset,
                                                   int64_t min_dim_size_to_factor,
                                                   double epsilon) {
  const char *fn = "jx_optax_scale_by_factored_rms";
  if (!check_finite(fn, "decay_rate", decay_rate) || !check_nonneg(fn, "epsilon", epsilon))
    return NULL;
  if (min_dim_size_to_factor < 0) {
    error_set(JX_ERR_VALUE, "%s: min_dim_size_to_factor must be >= 0, got %lld", fn,
              (long long)min_dim_size_to_factor);
    return NULL;
  }
  jx_optax_transform *t = tx_new(TX_FACTORED);
  if (t)
    t->flag = factored, t->a = decay_rate, t->b = (double)step_offset, t->eps = epsilon,
    t->k = min_dim_size_to_factor;
  return t;
}

jx_optax_transform *jx_optax_clip_by_block_rms(double threshold) {
  const char *fn = "jx_optax_clip_by_block_rms";
  if (!(threshold > 0) || isinf(threshold)) {
    error_set(JX_ERR_VALUE, "%s: threshold must be finite and > 0, got %g", fn, threshold);
    return NULL;
  }
  jx_optax_transform *t = tx_new(TX_BLOCK_CLIP);
  if (t) t->a = threshold;
  return t;
}

jx_optax_transform *jx_optax_scale_by_param_block_rms(double min_scale) {
  if (!check_nonneg("jx_optax_scale_by_param_block_rms", "min_scale", min_scale)) return NULL;
  jx_optax_transform *t = tx_new(TX_PARAM_RMS);
  if (t) t->a = min_scale;
  return t;
}

static jx_optax_transform *ema_(const char *fn, double decay, bool debias, bool f32) {
  if (!check_range(fn, "decay", decay, 0, 1, false)) return NULL;
  jx_optax_transform *t = tx_new(TX_EMA);
  if (t) t->a = decay, t->flag = debias, t->k = f32;
  return t;
}

jx_optax_transform *jx_optax_ema(double decay, bool debias) {
  return ema_("jx_optax_ema", decay, debias, false);
}

jx_optax_transform *jx_optax_lion(double learning_rate, double b1, double b2,
                                  double weight_decay) {
  const char *fn = "jx_optax_lion";
  if (!check_finite(fn, "weight_decay", weight_decay)) return NULL;
  jx_optax_transform *parts[3] = {jx_optax_scale_by_lion(b1, b2), NULL, NULL};
  parts[1] = parts[0] ? jx_optax_add_decayed_weights(weight_decay) : NULL;
  parts[2] = parts[1] ? lr_tx(fn, learning_rate, NULL, false) : NULL;
  return chain_owned(3, parts);
}

jx_optax_transform *jx_optax_lamb(double learning_rate, double b1, double b2, double eps,
                                  double eps_root, double weight_decay) {
  const char *fn = "jx_optax_lamb";
  if (!check_finite(fn, "weight_decay", weight_decay)) return NULL;
  jx_optax_transform *parts[4] = {jx_optax_scale_by_adam(b1, b2, eps, eps_root, false)};
  parts[1] = parts[0] ? jx_optax_add_decayed_weights(weight_decay) : NULL;
  parts[2] = parts[1] ? jx_optax_scale_by_trust_ratio(0, 1, 0) : NULL;
  parts[3] = parts[2] ? lr_tx(fn, learning_rate, NULL, false) : NULL;
  return chain_owned(4, parts);
}

jx_optax_transform *jx_optax_adafactor(double learning_rate, int64_t min_dim_size_to_factor,
                                       double decay_rate, int64_t decay_offset,
                                       bool multiply_by_parameter_scale,
                                       double clipping_threshold, double momentum,
                                       double weight_decay_rate, double eps, bool factored) {
  const char *fn = "jx_optax_adafactor";
  if (!check_finite(fn, "learning_rate", learning_rate) ||
      !check_finite(fn, "weight_decay_rate", weight_decay_rate) ||
      !check_range(fn, "momentum", momentum, 0, 1, false))
    return NULL;
  if (!(clipping_threshold > 0)) {
    error_set(JX_ERR_VALUE, "%s: clipping_threshold must be > 0 (INFINITY: none), got %g", fn,
              clipping_threshold);
    return NULL;
  }
  jx_optax_transform *parts[7] = {NULL};
  int n = 0;
  bool ok = (parts[n++] = jx_optax_scale_by_factored_rms(factored, decay_rate, decay_offset,
                                                          min_dim_size_to_factor, eps)) != NULL;
  if (ok && !isinf(clipping_threshold))
    ok = (parts[n++] = jx_optax_clip_by_block_rms(clipping_threshold)) != NULL;
  if (ok && learning_rate != 1) ok = (parts[n++] = jx_optax_scale(learning_rate)) != NULL;
  if (ok && multiply_by_parameter_scale)
    ok = (parts[n++] = jx_optax_scale_by_param_block_rms(1e-3)) != NULL;
  if (ok && momentum != 0) ok = (parts[n++] = ema_(fn, momentum, false, true)) != NULL;
  if (ok && weight_decay_rate != 0)
    ok = (parts[n++] = jx_optax_add_decayed_weights(weight_decay_rate)) != NULL;
  if (ok) parts[n++] = jx_optax_scale(-1);
  return chain_owned(n, parts);
}

/* ----------------------------------------------------------------- state */

/* optax's _factored_dims: for factored, >= 2-d shapes whose second largest dimension is
 * at least min_dim_size_to_factor, d0 = the largest axis and d1 = the second largest
 * (numpy's argsort of the shape: ties keep axis order). */
static bool factored_dims(const jx_optax_transform *tx, const jx_array *p, int *d1, int *d0) {
  if (!tx->flag || p->ndim < 2) return false;
  int idx[JX_MAX_NDIM];
  for (int i = 0; i < p->ndim; i++) idx[i] = i;
  for (int i = 1; i < p->ndim; i++) /* stable insertion sort by size */
    for (int j = i; j > 0 && p->shape[idx[j - 1]] > p->shape[idx[j]]; j--) {
      int t = idx[j];
      idx[j] = idx[j - 1], idx[j - 1] = t;
    }
  if (p->shape[idx[p->ndim - 2]] < tx->k) return false;
  *d1 = idx[p->ndim - 2], *d0 = idx[p->ndim - 1];
  return true;
}

/* zeros of p's shape without `axis` (optax's _zeros_like_no_axis). */
static jx_array *zeros_without_axis(const jx_array *p, int axis) {
  int64_t shape[JX_MAX_NDIM];
  int m = 0;
  for (int i = 0; i < p->ndim; i++)
    if (i != axis) shape[m++] = p->shape[i];
  return jx_zeros(m, shape, p->dtype);
}

/* Number of state arrays of tx for n parameters. */
static int state_count(const jx_optax_transform *tx, int n) {
  switch (tx->kind) {
  case TX_SCHEDULE: return 1;
  case TX_TRACE:
  case TX_RMS:
  case TX_RSS: return n;
  case TX_ADAM: return 1 + 2 * n;
  case TX_LION:
  case TX_EMA: return 1 + n;
  case TX_FACTORED: return 1 + 3 * n;
  case TX_CHAIN: {
    int k = 0;
    for (int i = 0; i < tx->n; i++) k += state_count(tx->children[i], n);
    return k;
  }
  default: return 0;
  }
}

/* optax's init for tx: appends its state arrays (scope references) at out. */
static int init_node(const jx_optax_transform *tx, int n, jx_array *const *p, jx_array **out) {
  int k = 0;
  switch (tx->kind) {
  case TX_SCHEDULE: out[k++] = jx_zeros(0, NULL, JX_INT32); break;
  case TX_TRACE:
    for (int i = 0; i < n; i++) out[k++] = jx_zeros_like(p[i]);
    break;
  case TX_ADAM:
    out[k++] = jx_zeros(0, NULL, JX_INT32);
    for (int i = 0; i < n; i++) out[k++] = jx_zeros_like(p[i]);
    for (int i = 0; i < n; i++) out[k++] = jx_zeros_like(p[i]);
    break;
  case TX_RMS:
  case TX_RSS:
    for (int i = 0; i < n; i++) out[k++] = jx_full_like(p[i], tx->b);
    break;
  case TX_LION:
  case TX_EMA:
    out[k++] = jx_zeros(0, NULL, JX_INT32);
    for (int i = 0; i < n; i++)
      out[k++] = tx->k ? jx_zeros(p[i]->ndim, p[i]->shape, JX_FLOAT32) : jx_zeros_like(p[i]);
    break;
  case TX_FACTORED: { /* v_row[n], v_col[n], v[n]: (1,) zeros where unused */
    int64_t one = 1;
    out[k++] = jx_zeros(0, NULL, JX_INT32);
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < n; i++) {
        int d1, d0;
        bool fac = factored_dims(tx, p[i], &d1, &d0);
        if (j == 2) out[k++] = fac ? jx_zeros(1, &one, p[i]->dtype) : jx_zeros_like(p[i]);
        else if (!fac) out[k++] = jx_zeros(1, &one, p[i]->dtype);
        else out[k++] = zeros_without_axis(p[i], j == 0 ? d0 : d1);
      }
    break;
  }
  case TX_CHAIN:
    for (int i = 0; i < tx->n; i++) k += init_node(tx->children[i], n, p, out + k);
    break;
  default: break;
  }
  return k;
}

static jx_optax_state *state_new(jx_optax_transform *tx, int nparams, int n,
                                 jx_array *const *arrays) {
  jx_optax_state *s = calloc(1, sizeof *s);
  jx_array **a = calloc(n ? (size_t)n : 1, sizeof *a);
  if (!s || !a) {
    free(s), free(a);
    error_set(JX_ERR_OOM, "jx_optax: out of memory creating a state");
    return NULL;
  }
  s->tx = jx_optax_transform_ref(tx);
  s->nparams = nparams, s->n = n, s->arrays = a;
  for (int i = 0; i < n; i++) a[i] = array_retain(arrays[i]);
  return s;
}

void jx_optax_state_free(jx_optax_state *s) {
  if (!s) return;
  for (int i = 0; i < s->n; i++) array_drop(s->arrays[i]);
  free(s->arrays);
  jx_optax_transform_free(s->tx);
  free(s);
}

static bool check_list(const char *fn, const char *what, int n, jx_array *const *xs) {
  if (np_null_arg(fn, xs, what)) return false;
  for (int i = 0; i < n; i++)
    if (!xs[i]) {
      error_set(JX_ERR_VALUE, "%s: %s[%d] is NULL", fn, what, i);
      return false;
    }
  return true;
}

jx_optax_state *jx_optax_init(jx_optax_transform *tx, int n, jx_array *const *params) {
  const char *fn = "jx_optax_init";
  if (np_null_arg(fn, tx, "transform")) return NULL;
  if (n < 0) {
    error_set(JX_ERR_VALUE, "%s: negative parameter count %d", fn, n);
    return NULL;
  }
  if (n > 0 && !check_list(fn, "params", n, params)) return NULL;
  int k = state_count(tx, n);
  jx_array **arrays = calloc(k ? (size_t)k : 1, sizeof *arrays);
  if (!arrays) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  jx_scope_begin();
  init_node(tx, n, params, arrays);
  bool ok = true;
  for (int i = 0; i < k; i++) ok = ok && arrays[i];
  jx_optax_state *s = ok ? state_new(tx, n, k, arrays) : NULL;
  jx_scope_end(0, NULL);
  free(arrays);
  return s;
}

int jx_optax_state_size(const jx_optax_state *s) { return s ? s->n : -1; }

jx_array *const *jx_optax_state_arrays(const jx_optax_state *s, int *n) {
  if (n) *n = s ? s->n : 0;
  if (!s) error_set(JX_ERR_VALUE, "jx_optax_state_arrays: state is NULL");
  return s ? s->arrays : NULL;
}

jx_optax_state *jx_optax_state_from_arrays(jx_optax_transform *tx, int nparams, int n,
                                           jx_array *const *arrays) {
  const char *fn = "jx_optax_state_from_arrays";
  if (np_null_arg(fn, tx, "transform")) return NULL;
  if (nparams < 0) {
    error_set(JX_ERR_VALUE, "%s: negative parameter count %d", fn, nparams);
    return NULL;
  }
  int want = state_count(tx, nparams);
  if (n != want) {
    error_set(JX_ERR_VALUE, "%s: this transform keeps %d state arrays for %d parameters, got %d",
              fn, want, nparams, n);
    return NULL;
  }
  if (n > 0 && !check_list(fn, "arrays", n, arrays)) return NULL;
  return state_new(tx, nparams, n, arrays);
}

/* ---------------------------------------------------------------- update */

/* optax.safe_increment: count + 1, saturating at int32's max. */
static jx_array *safe_increment(jx_array *count) {
  jx_array *top = wi(INT32_MAX);
  return jx_where(jx_less(count, top), jx_add(count, wi(1)), top);
}

/* 1 - decay ** count as lax.pow(float, float) (optax's jitted bias_correction). */
static jx_array *bias_correction(double decay, jx_array *count) {
  jx_array *fcount = jx_multiply(count, wf(1.0)); /* int -> the promoted float dtype */
  return jx_subtract(wi(1), jx_power(wf(decay), fcount));
}

/* Validates a per-parameter state array against its gradient. */
static bool check_like(const char *fn, const char *what, int i, jx_array *s, jx_array *g) {
  if (s->ndim == g->ndim && memcmp(s->shape, g->shape, sizeof(int64_t) * (size_t)g->ndim) == 0)
    return true;
  char a[ERROR_SHAPE_BUF], b[ERROR_SHAPE_BUF];
  error_set(JX_ERR_SHAPE, "%s: state %s[%d] has shape %s but the gradient has shape %s", fn,
            what, i, error_shape_str(a, s->ndim, s->shape), error_shape_str(b, g->ndim, g->shape));
  return false;
}

static bool check_count(const char *fn, jx_array *c) {
  if (c->ndim == 0 && dtype_is_integer(c->dtype)) return true;
  char a[ARRAY_DESCRIBE_BUF];
  error_set(JX_ERR_SHAPE, "%s: state count must be a 0-d integer array, got %s", fn, array_describe(a, c));
  return false;
}

/* A new state array, cast back to the old one's dtype (keeps the state's signature
 * stable for jit; optax's cast_like). */
static jx_array *like_old(jx_array *v, jx_array *old) {
  return v && jx_dtype_of(v) != old->dtype ? jx_astype(v, old->dtype) : v;
}

/* optax's numerics.safe_norm(x, min_norm) (the 2-norm of all of x). */
static jx_array *safe_norm(jx_array *x, double min_norm) {
  jx_array *norm = jx_sqrt(jx_sum(jx_square(x), 0, NULL, true));
  jx_array *small = jx_less_equal(norm, wf(min_norm));
  jx_array *xm = jx_where(small, jx_ones_like(x), x);
  jx_array *masked = jx_sqrt(jx_sum(jx_square(xm), 0, NULL, false));
  return jx_where(jx_reshape(small, 0, NULL), wf(min_norm), masked);
}

/* optax's numerics.safe_root_mean_squares(x, min_rms). */
static jx_array *safe_rms(jx_array *x, double min_rms) {
  jx_array *rms = jx_sqrt(jx_mean(jx_square(x), 0, NULL, false));
  jx_array *small = jx_less_equal(rms, wf(min_rms));
  jx_array *xm = jx_where(small, jx_ones_like(x), x);
  return jx_where(small, wf(min_rms), jx_sqrt(jx_mean(jx_square(xm), 0, NULL, false)));
}

/* One node's update: u[0..n) in/out (scope references), st the node's state slice,
 * out its new state. Returns false with the error set. */
static bool update_node(const char *fn, const jx_optax_transform *tx, int n, jx_array **u,
                        jx_array *const *st, jx_array **out, jx_array *const *params) {
  switch (tx->kind) {
  case TX_IDENTITY: return true;
  case TX_SCALE:
    for (int i = 0; i < n; i++) u[i] = jx_multiply(wf(tx->a), u[i]);
    return true;
  case TX_SCHEDULE: {
    if (!check_count(fn, st[0])) return false;
    jx_array *step = jx_multiply(wi((int64_t)tx->a), jx_optax_schedule_value(tx->sched, st[0]));
    for (int i = 0; i < n && step; i++) u[i] = jx_multiply(jx_astype(step, jx_dtype_of(u[i])), u[i]);
    out[0] = like_old(safe_increment(st[0]), st[0]);
    return step != NULL;
  }
  case TX_TRACE:
    for (int i = 0; i < n; i++) {
      if (!check_like(fn, "trace", i, st[i], u[i])) return false;
      jx_array *t = jx_add(u[i], jx_multiply(wf(tx->a), st[i]));
      u[i] = tx->nesterov ? jx_add(u[i], jx_multiply(wf(tx->a), t)) : t;
      out[i] = like_old(t, st[i]);
    }
    return true;
  case TX_ADAM: {
    jx_array *const *mu = st + 1, *const *nu = st + 1 + n;
    if (!check_count(fn, st[0])) return false;
    jx_array *count = safe_increment(st[0]);
    jx_array *bc1 = bias_correction(tx->a, count), *bc2 = bias_correction(tx->b, count);
    jx_array *bc1n = tx->nesterov ? bias_correction(tx->a, safe_increment(count)) : NULL;
    out[0] = like_old(count, st[0]);
    for (int i = 0; i < n; i++) {
      if (!check_like(fn, "mu", i, mu[i], u[i]) || !check_like(fn, "nu", i, nu[i], u[i]))
        return false;
      jx_array *g = u[i];
      jx_dtype dt = jx_dtype_of(g);
      jx_array *m = jx_add(jx_multiply(wf(1 - tx->a), g), jx_multiply(wf(tx->a), mu[i]));
      jx_array *v = jx_add(jx_multiply(wf(1 - tx->b), jx_square(g)), jx_multiply(wf(tx->b), nu[i]));
      jx_array *m_hat = jx_divide(m, jx_astype(tx->nesterov ? bc1n : bc1, jx_dtype_of(m)));
      if (tx->nesterov)
        m_hat = jx_add(jx_multiply(wf(tx->a), m_hat),
                       jx_multiply(wf(1 - tx->a), jx_divide(g, jx_astype(bc1, dt))));
      jx_array *v_hat = jx_divide(v, jx_astype(bc2, jx_dtype_of(v)));
      u[i] = jx_divide(m_hat, jx_add(jx_sqrt(jx_add(v_hat, wf(tx->eps_root))), wf(tx->eps)));
      out[1 + i] = like_old(m, mu[i]);
      out[1 + n + i] = like_old(v, nu[i]);
    }
    return true;
  }
  case TX_RMS:
    for (int i = 0; i < n; i++) {
      if (!check_like(fn, "nu", i, st[i], u[i])) return false;
      jx_array *v = jx_add(jx_multiply(wf(1 - tx->a), jx_square(u[i])), jx_multiply(wf(tx->a), st[i]));
      u[i] = jx_multiply(jx_rsqrt(jx_add(v, wf(tx->eps))), u[i]);
      out[i] = like_old(v, st[i]);
    }
    return true;
  case TX_RSS:
    for (int i = 0; i < n; i++) {
      if (!check_like(fn, "sum_of_squares", i, st[i], u[i])) return false;
      jx_array *ss = jx_add(jx_multiply(u[i], u[i]), st[i]);
      jx_array *inv = jx_where(jx_greater(ss, wi(0)), jx_rsqrt(jx_add(ss, wf(tx->eps))), wf(0.0));
      u[i] = jx_multiply(inv, u[i]);
      out[i] = like_old(ss, st[i]);
    }
    return true;
  case TX_DECAY:
    if (!params) {
      error_set(JX_ERR_VALUE, "%s: add_decayed_weights needs the params (got NULL)", fn);
      return false;
    }
    if (tx->a == 0) return true;
    for (int i = 0; i < n; i++) u[i] = jx_add(u[i], jx_multiply(wf(tx->a), params[i]));
    return true;
  case TX_CLIP_NORM: {
    jx_array *sq = wi(0); /* tree_sum's initializer */
    for (int i = 0; i < n; i++) sq = jx_add(sq, jx_sum(jx_square(u[i]), 0, NULL, false));
    jx_array *norm = jx_sqrt(sq);
    jx_array *trigger = jx_less(norm, wf(tx->a));
    for (int i = 0; i < n; i++) {
      jx_array *scaled = jx_multiply(jx_divide(u[i], jx_astype(norm, jx_dtype_of(u[i]))), wf(tx->a));
      u[i] = jx_where(trigger, u[i], scaled);
    }
    return true;
  }
  case TX_LION: {
    jx_array *const *mu = st + 1;
    if (!check_count(fn, st[0])) return false;
    out[0] = like_old(safe_increment(st[0]), st[0]);
    for (int i = 0; i < n; i++) {
      if (!check_like(fn, "mu", i, mu[i], u[i])) return false;
      jx_array *g = u[i];
      u[i] = jx_sign(jx_add(jx_multiply(wf(1.0 - tx->a), g), jx_multiply(wf(tx->a), mu[i])));
      out[1 + i] = like_old(jx_add(jx_multiply(wf(1 - tx->b), g), jx_multiply(wf(tx->b), mu[i])),
                            mu[i]);
    }
    return true;
  }
  case TX_EMA: {
    jx_array *const *ema = st + 1;
    if (!check_count(fn, st[0])) return false;
    jx_array *count = safe_increment(st[0]);
    jx_array *bc = tx->flag ? bias_correction(tx->a, count) : NULL;
    out[0] = like_old(count, st[0]);
    for (int i = 0; i < n; i++) {
      if (!check_like(fn, "ema", i, ema[i], u[i])) return false;
      jx_array *e = jx_add(jx_multiply(wf(1 - tx->a), u[i]), jx_multiply(wf(tx->a), ema[i]));
      u[i] = tx->flag && e ? jx_divide(e, jx_astype(bc, jx_dtype_of(e))) : e;
      out[1 + i] = like_old(e, ema[i]);
    }
    return true;
  }
  case TX_TRUST:
  case TX_PARAM_RMS:
    if (!params) {
      error_set(JX_ERR_VALUE, "%s: %s needs the params (got NULL)", fn,
                tx->kind == TX_TRUST ? "scale_by_trust_ratio" : "scale_by_param_block_rms");
      return false;
    }
    for (int i = 0; i < n; i++) {
      if (tx->kind == TX_TRUST) {
        jx_array *pn = safe_norm(params[i], tx->a), *un = safe_norm(u[i], tx->a);
        jx_array *ratio = jx_divide(jx_multiply(wf(tx->b), pn), jx_add(un, wf(tx->eps)));
        jx_array *zero = jx_logical_or(jx_equal(pn, wf(0.0)), jx_equal(un, wf(0.0)));
        jx_array *one = jx_astype(wf(1.0), params[i]->dtype);
        u[i] = jx_multiply(u[i], jx_where(zero, one, ratio));
      } else {
        u[i] = jx_multiply(u[i], safe_rms(params[i], tx->a));
      }
    }
    return true;
  case TX_BLOCK_CLIP:
    for (int i = 0; i < n; i++) {
      jx_array *rms = jx_sqrt(jx_mean(jx_square(u[i]), 0, NULL, false));
      u[i] = jx_divide(u[i], jx_maximum(wf(1.0), jx_divide(rms, wf(tx->a))));
    }
    return true;
  case TX_FACTORED: {
    jx_array *const *vr = st + 1, *const *vc = st + 1 + n, *const *vv = st + 1 + 2 * n;
    if (!params) {
      error_set(JX_ERR_VALUE, "%s: scale_by_factored_rms needs the params (got NULL)", fn);
      return false;
    }
    if (!check_count(fn, st[0])) return false;
    /* _decay_rate_pow(count - step_offset): 1 - float32(i + 1) ** -decay_rate */
    jx_array *t = jx_astype(jx_add(jx_subtract(st[0], wi((int64_t)tx->b)), wi(1)), JX_FLOAT32);
    jx_array *decay = jx_subtract(wf(1.0), jx_power(t, wf(-tx->a)));
    jx_array *keep = jx_subtract(wf(1.0), decay);
    out[0] = like_old(safe_increment(st[0]), st[0]);
    int64_t one = 1;
    for (int i = 0; i < n; i++) {
      jx_array *g = u[i], *p = params[i];
      jx_dtype dt = p->dtype;
      int d1, d0;
      bool fac = factored_dims(tx, p, &d1, &d0);
      jx_array *gsq = jx_add(jx_square(g), wf(tx->eps));
      if (fac) {
        jx_array *wr = zeros_without_axis(p, d0), *wc = zeros_without_axis(p, d1);
        if (!wr || !wc || !check_like(fn, "v_row", i, vr[i], wr) ||
            !check_like(fn, "v_col", i, vc[i], wc))
          return false;
        jx_array *nr = jx_add(jx_multiply(decay, vr[i]), jx_multiply(keep, jx_mean(gsq, 1, &d0, false)));
        jx_array *nc = jx_add(jx_multiply(decay, vc[i]), jx_multiply(keep, jx_mean(gsq, 1, &d1, false)));
        nr = jx_astype(nr, dt), nc = jx_astype(nc, dt);
        int rd1 = d1 > d0 ? d1 - 1 : d1;
        jx_array *rcm = jx_mean(nr, 1, &rd1, true);
        jx_array *rf = jx_power(jx_divide(nr, rcm), wf(-0.5));
        jx_array *cf = jx_power(nc, wf(-0.5));
        u[i] = jx_multiply(jx_multiply(g, jx_expand_dims(rf, d0)), jx_expand_dims(cf, d1));
        out[1 + i] = like_old(nr, vr[i]);
        out[1 + n + i] = like_old(nc, vc[i]);
        out[1 + 2 * n + i] = jx_zeros(1, &one, dt);
      } else {
        if (!check_like(fn, "v", i, vv[i], g)) return false;
        jx_array *nv = jx_astype(jx_add(jx_multiply(decay, vv[i]), jx_multiply(keep, gsq)), dt);
        u[i] = jx_multiply(g, jx_power(nv, wf(-0.5)));
        out[1 + i] = jx_zeros(1, &one, dt);
        out[1 + n + i] = jx_zeros(1, &one, dt);
        out[1 + 2 * n + i] = like_old(nv, vv[i]);
      }
    }
    return true;
  }
  case TX_CHAIN: {
    int k = 0;
    for (int c = 0; c < tx->n; c++) {
      if (!update_node(fn, tx->children[c], n, u, st + k, out + k, params)) return false;
      k += state_count(tx->children[c], n);
    }
    return true;
  }
  }
  return false;
}

jx_status jx_optax_update(jx_optax_transform *tx, jx_optax_state *state, int n,
                          jx_array *const *grads, jx_array *const *params,
                          jx_array **updates_out) {
  const char *fn = "jx_optax_update";
  if (updates_out)
    for (int i = 0; i < n; i++) updates_out[i] = NULL;
  if (np_null_arg(fn, tx, "transform") || np_null_arg(fn, state, "state") ||
      np_null_arg(fn, updates_out, "updates_out"))
    return jx_last_status();
  if (state->tx != tx) {
    error_set(JX_ERR_VALUE, "%s: the state was made for another transform", fn);
    return jx_last_status();
  }
  if (n != state->nparams) {
    error_set(JX_ERR_VALUE, "%s: the state is for %d parameters, got %d", fn, state->nparams, n);
    return jx_last_status();
  }
  if (!check_list(fn, "grads", n, grads) || (params && !check_list(fn, "params", n, params)))
    return jx_last_status();
  for (int i = 0; params && i < n; i++)
    if (!check_like(fn, "(params)", i, params[i], grads[i])) return jx_last_status();
  jx_array **u = calloc(n ? (size_t)n : 1, sizeof *u);
  jx_array **next = calloc(state->n ? (size_t)state->n : 1, sizeof *next);
  if (!u || !next) {
    free(u), free(next);
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return JX_ERR_OOM;
  }
  jx_scope_begin();
  memcpy(u, grads, sizeof *u * (size_t)n);
  bool ok = update_node(fn, tx, n, u, state->arrays, next, params);
  for (int i = 0; ok && i < n; i++) ok = u[i] != NULL;
  for (int i = 0; ok && i < state->n; i++) ok = next[i] != NULL;
  if (ok) {
    for (int i = 0; i < state->n; i++) {
      array_drop(state->arrays[i]);
      state->arrays[i] = array_retain(next[i]);
    }
    for (int i = 0; i < n; i++) updates_out[i] = u[i] == grads[i] ? jx_ref(u[i]) : u[i];
  }
  jx_scope_end(ok ? n : 0, updates_out);
  if (!ok)
    for (int i = 0; i < n; i++) updates_out[i] = NULL;
  free(u), free(next);
  return ok ? JX_OK : (jx_last_status() != JX_OK ? jx_last_status() : JX_ERR_INTERNAL);
}

/* optax.apply_updates: (p + u) cast to p's dtype. */
jx_status jx_optax_apply_updates(int n, jx_array *const *params, jx_array *const *updates,
                                 jx_array **new_params_out) {
  const char *fn = "jx_optax_apply_updates";
  if (np_null_arg(fn, new_params_out, "new_params_out")) return jx_last_status();
  for (int i = 0; i < n; i++) new_params_out[i] = NULL;
  if (n < 0) {
    error_set(JX_ERR_VALUE, "%s: negative count %d", fn, n);
    return JX_ERR_VALUE;
  }
  if (!check_list(fn, "params", n, params) || !check_list(fn, "updates", n, updates))
    return jx_last_status();
  jx_scope_begin();
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    jx_array *p = params[i];
    new_params_out[i] = jx_astype(jx_add(p, updates[i]), p->dtype);
    ok = new_params_out[i] != NULL;
    if (!ok) { /* jx_add's message, named by this function and the pair */
      ErrorSaved e = error_stash();
      error_set(e.status, "%s: params[%d] + updates[%d]: %s", fn, i, i, e.message);
    }
  }
  jx_scope_end(ok ? n : 0, new_params_out);
  if (!ok)
    for (int i = 0; i < n; i++) new_params_out[i] = NULL;
  return ok ? JX_OK : jx_last_status();
}

/* ------------------------------------------------------------ as a jx_fn */

typedef struct UpdateFn {
  jx_optax_transform *tx;
  int nparams, nstate;
} UpdateFn;

/* in: grads[np], state[ns], params[np]; out: updates[np], new state[ns]. */
static jx_status update_impl(void *ctx, jx_array *const *in, jx_array **out) {
  UpdateFn *c = ctx;
  int np = c->nparams, ns = c->nstate;
  jx_optax_state *s = jx_optax_state_from_arrays(c->tx, np, ns, in + np);
  if (!s) return jx_last_status();
  jx_status st = jx_optax_update(c->tx, s, np, in, in + np + ns, out);
  for (int i = 0; st == JX_OK && i < ns; i++) out[np + i] = jx_ref(s->arrays[i]);
  jx_optax_state_free(s);
  return st;
}

static void update_free(void *ctx) {
  UpdateFn *c = ctx;
  jx_optax_transform_free(c->tx);
  free(c);
}

jx_fn *jx_optax_update_fn(jx_optax_transform *tx, int nparams) {
  const char *fn = "jx_optax_update_fn";
  if (np_null_arg(fn, tx, "transform")) return NULL;
  if (nparams < 0) {
    error_set(JX_ERR_VALUE, "%s: negative parameter count %d", fn, nparams);
    return NULL;
  }
  int ns = state_count(tx, nparams);
  if (nparams + ns == 0) {
    error_set(JX_ERR_VALUE, "%s: nothing to update (0 parameters)", fn);
    return NULL;
  }
  UpdateFn *c = malloc(sizeof *c);
  if (!c) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  c->tx = jx_optax_transform_ref(tx), c->nparams = nparams, c->nstate = ns;
  jx_fn *f = jx_fn_new_with_free("optax_update", 2 * nparams + ns, nparams + ns, update_impl, c,
                                 update_free);
  if (!f) update_free(c);
  return f;
}
