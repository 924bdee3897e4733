/* optax_loss.c -- optax's losses (optax/losses/_classification.py, _regression.py) from
 * jx_ and jx_nn_ operations: softmax cross-entropy (with probabilities or integer
 * labels), sigmoid binary cross-entropy, squared error, l2 and huber. Unreduced, as in
 * optax: one loss per example (per element for the elementwise ones). */
#include <math.h>
#include <string.h>

#include "lib/numpy/np.h"

/* optax's utils.check_subdtype(x, jnp.floating). */
static bool need_float(const char *fn, const char *what, jx_array *x) {
  if (dtype_is_floating(x->dtype)) return true;
  error_set(JX_ERR_DTYPE, "%s: %s must be floating, got %s", fn, what, jx_dtype_name(x->dtype));
  return false;
}

/* optax expands a `where` of lower rank at `axis` (where.ndim != logits.ndim). */
static jx_array *expand_where(jx_array *where, jx_array *logits, int axis) {
  return where && where->ndim != logits->ndim ? jx_expand_dims(where, axis) : where;
}

/* optax.softmax_cross_entropy: -sum(labels * log_softmax(logits, axis, where), axis,
 * where). */
jx_array *jx_optax_softmax_cross_entropy(jx_array *logits, jx_array *labels, int axis,
                                         jx_array *where) {
  const char *fn = "jx_optax_softmax_cross_entropy";
  if (np_null_arg(fn, logits, "logits") || np_null_arg(fn, labels, "labels")) return NULL;
  if (!need_float(fn, "logits", logits)) return NULL;
  if (!array_normalize_axis(fn, &axis, logits->ndim)) return NULL;
  jx_scope_begin();
  jx_array *w = expand_where(where, logits, axis);
  jx_array *lp = jx_multiply(labels, jx_nn_log_softmax(logits, 1, &axis, w));
  if (lp && jx_ndim(lp) != logits->ndim) {
    char a[ERROR_SHAPE_BUF], b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: labels %s do not broadcast to logits %s", fn,
              error_shape_str(a, labels->ndim, labels->shape),
              error_shape_str(b, logits->ndim, logits->shape));
    return np_scope_return(NULL);
  }
  if (w) lp = jx_where(w, lp, jx_scalar_int(0)); /* sum(..., where=where) */
  return np_scope_return(jx_negative(jx_sum(lp, 1, &axis, false)));
}

/* optax.softmax_cross_entropy_with_integer_labels: logsumexp(logits, axis, where) minus
 * the label's logit (take_along_axis: negative labels wrap, labels outside [-C, C) give
 * NaN); 0 where `where` excludes the whole row. */
jx_array *jx_optax_softmax_cross_entropy_with_integer_labels(jx_array *logits, jx_array *labels,
                                                             int axis, jx_array *where) {
  const char *fn = "jx_optax_softmax_cross_entropy_with_integer_labels";
  if (np_null_arg(fn, logits, "logits") || np_null_arg(fn, labels, "labels")) return NULL;
  if (!need_float(fn, "logits", logits)) return NULL;
  if (!dtype_is_integer(labels->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: labels must be integers, got %s", fn,
              jx_dtype_name(labels->dtype));
    return NULL;
  }
  if (!array_normalize_axis(fn, &axis, logits->ndim)) return NULL;
  /* labels: logits' shape without `axis` */
  bool ok = labels->ndim == logits->ndim - 1;
  for (int d = 0, k = 0; ok && d < logits->ndim; d++)
    if (d != axis) ok = labels->shape[k++] == logits->shape[d];
  if (!ok) {
    char a[ERROR_SHAPE_BUF], b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: labels %s must have logits' shape %s without axis %d", fn,
              error_shape_str(a, labels->ndim, labels->shape),
              error_shape_str(b, logits->ndim, logits->shape), axis);
    return NULL;
  }
  int64_t C = logits->shape[axis];
  jx_scope_begin();
  jx_array *w = expand_where(where, logits, axis);
  jx_array *lab = jx_expand_dims(labels, axis);
  jx_array *wrapped = jx_where(jx_less(lab, jx_scalar_int(0)), jx_add(lab, jx_scalar_int(C)), lab);
  jx_array *hit = jx_nn_one_hot(jx_squeeze(wrapped, 1, &axis), C, JX_BOOL, axis);
  jx_array *label_logit = jx_sum(jx_where(hit, logits, jx_scalar_int(0)), 1, &axis, false);
  jx_array *inside = jx_logical_and(jx_greater_equal(labels, jx_scalar_int(-C)),
                                    jx_less(labels, jx_scalar_int(C)));
  label_logit = jx_where(inside, label_logit, jx_scalar(NAN));
  jx_array *out = jx_subtract(jx_nn_logsumexp(logits, 1, &axis, NULL, false, w), label_logit);
  if (w) out = jx_where(jx_any(w, 1, &axis, false), out, jx_scalar(0.0));
  return np_scope_return(out);
}

/* optax.sigmoid_binary_cross_entropy: -labels * log_sigmoid(logits) - (1 - labels) *
 * log_sigmoid(-logits), labels cast to logits' dtype. */
jx_array *jx_optax_sigmoid_binary_cross_entropy(jx_array *logits, jx_array *labels) {
  const char *fn = "jx_optax_sigmoid_binary_cross_entropy";
  if (np_null_arg(fn, logits, "logits") || np_null_arg(fn, labels, "labels")) return NULL;
  if (!need_float(fn, "logits", logits)) return NULL;
  jx_scope_begin();
  jx_array *y = jx_astype(labels, logits->dtype);
  jx_array *log_p = jx_nn_log_sigmoid(logits), *log_not_p = jx_nn_log_sigmoid(jx_negative(logits));
  jx_array *l = jx_subtract(jx_multiply(jx_negative(y), log_p),
                            jx_multiply(jx_subtract(jx_scalar(1.0), y), log_not_p));
  return np_scope_return(l);
}

/* predictions - targets (or predictions when targets is NULL); optax requires equal
 * shapes. */
static jx_array *errors(const char *fn, jx_array *pred, jx_array *targets) {
  if (np_null_arg(fn, pred, "predictions")) return NULL;
  if (!need_float(fn, "predictions", pred)) return NULL;
  if (!targets) return jx_ref(pred);
  if (pred->ndim != targets->ndim ||
      memcmp(pred->shape, targets->shape, sizeof(int64_t) * (size_t)pred->ndim) != 0) {
    char a[ERROR_SHAPE_BUF], b[ERROR_SHAPE_BUF];
    error_set(JX_ERR_SHAPE, "%s: predictions %s and targets %s must have equal shapes", fn,
              error_shape_str(a, pred->ndim, pred->shape),
              error_shape_str(b, targets->ndim, targets->shape));
    return NULL;
  }
  return jx_subtract(pred, targets);
}

/* optax.squared_error: (predictions - targets) ** 2. */
jx_array *jx_optax_squared_error(jx_array *predictions, jx_array *targets) {
  jx_scope_begin();
  return np_scope_return(jx_square(errors("jx_optax_squared_error", predictions, targets)));
}

/* optax.l2_loss: 0.5 * squared_error. */
jx_array *jx_optax_l2_loss(jx_array *predictions, jx_array *targets) {
  jx_scope_begin();
  jx_array *e = errors("jx_optax_l2_loss", predictions, targets);
  return np_scope_return(jx_multiply(jx_scalar(0.5), jx_square(e)));
}

/* optax.huber_loss: 0.5 * min(|e|, delta)^2 + delta * (|e| - min(|e|, delta)). */
jx_array *jx_optax_huber_loss(jx_array *predictions, jx_array *targets, double delta) {
  const char *fn = "jx_optax_huber_loss";
  if (!(delta >= 0) || isinf(delta)) {
    error_set(JX_ERR_VALUE, "%s: delta must be finite and >= 0, got %g", fn, delta);
    return NULL;
  }
  jx_scope_begin();
  jx_array *abs_e = jx_abs(errors(fn, predictions, targets));
  jx_array *quadratic = jx_minimum(abs_e, jx_scalar(delta));
  jx_array *linear = jx_subtract(abs_e, quadratic);
  jx_array *l = jx_add(jx_multiply(jx_scalar(0.5), jx_square(quadratic)),
                       jx_multiply(jx_scalar(delta), linear));
  return np_scope_return(l);
}
