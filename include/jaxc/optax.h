/* jaxc/optax.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * optax: optimizers, schedules, losses. */
#ifndef JAXC_OPTAX_H
#define JAXC_OPTAX_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/optax.h>"
#endif

/* ---------------------------------------------------------------- optax */
/* optax (src/lib/optax*.c) over a flat list of n parameter arrays (optax's pytree is
 * the list). Three opaque, refcounted objects, each freed with its _free function (NULL
 * is fine); constructors take their own references to the objects they are given:
 *  jx_optax_schedule   a learning-rate schedule: step count -> value;
 *  jx_optax_transform  a gradient transformation (immutable; optax's
 *                      GradientTransformation);
 *  jx_optax_state      its state for n parameters: a flat list of ordinary jx_arrays.
 * Numerics follow optax 0.2's formulas and operation order (Python floats are weak
 * scalars): trajectories agree with optax's on the cpu to a few ulp (a trial of 329
 * arrays over 6 steps: 275 bit for bit, the rest within 8 ulp -- XLA fuses and contracts
 * some of the same arithmetic differently). Constructors return NULL with JX_ERR_VALUE for bad hyper-parameters
 * (non-finite values; b1, b2 outside [0, 1); decay outside [0, 1]; negative eps,
 * momentum or accumulator; max_norm <= 0; NULL schedules or transforms).
 *
 * Training loop:
 *   jx_optax_transform *tx = jx_optax_adam(1e-3, 0.9, 0.999, 1e-8);
 *   jx_optax_state *st = jx_optax_init(tx, 2, params);      // params: {W, b}
 *   ... grads from jx_grad ...
 *   jx_array *upd[2], *next[2];
 *   jx_optax_update(tx, st, 2, grads, params, upd);          // st now holds the new state
 *   jx_optax_apply_updates(2, params, upd, next);            // next = params + upd
 * Jitting a step: jx_optax_update_fn(tx, n) is update() as a jx_fn over (grads, state
 * arrays, params) -> (updates, new state arrays), to compose with jx_jit (or call it
 * inside your own jitted function); jx_optax_state_arrays / jx_optax_state_from_arrays
 * move a state in and out of such functions.
 *
 * STATE LAYOUT: the arrays of every stateful transform, in chain order (depth first);
 * per transform, for n parameters: trace (sgd momentum): trace[n]; scale_by_adam:
 * count, mu[n], nu[n]; scale_by_rms: nu[n]; scale_by_rss (adagrad): sum_of_squares[n];
 * a schedule-driven step (the _sched optimizers, scale_by_schedule): count; all others
 * none. count is a 0-d int32 array (optax's, saturating at INT32_MAX); the others have
 * their parameter's shape and dtype. So adam(...) is {count, mu[n], nu[n]} and
 * sgd_sched(s, 0.9, false) is {trace[n], count}. */
typedef struct jx_optax_schedule jx_optax_schedule;
typedef struct jx_optax_transform jx_optax_transform;
typedef struct jx_optax_state jx_optax_state;

/* Schedules (optax.schedules). Evaluated with jx_ ops on a count array, so they trace. */
jx_optax_schedule *jx_optax_constant_schedule(double value);
/* polynomial_schedule: (init - end) * (1 - clip(count - begin, 0, steps) / steps)^power
 * + end; transition_steps <= 0 gives the constant init_value (as optax). */
jx_optax_schedule *jx_optax_polynomial_schedule(double init_value, double end_value,
                                                double power, int64_t transition_steps,
                                                int64_t transition_begin);
jx_optax_schedule *jx_optax_linear_schedule(double init_value, double end_value,
                                            int64_t transition_steps, int64_t transition_begin);
/* exponential_decay: init * decay_rate^((count - begin) / transition_steps) (exponent
 * floored if staircase) after transition_begin, init before; end_value (NAN: none)
 * bounds it (a floor when decay_rate < 1, else a ceiling). transition_steps <= 0 or
 * decay_rate == 0 give the constant init_value. */
jx_optax_schedule *jx_optax_exponential_decay(double init_value, int64_t transition_steps,
                                              double decay_rate, int64_t transition_begin,
                                              bool staircase, double end_value);
/* cosine_decay_schedule: init * ((1 - alpha) * (0.5 (1 + cos(pi min(count, steps) /
 * steps)))^exponent + alpha); decay_steps > 0 (JX_ERR_VALUE). optax defaults: alpha 0,
 * exponent 1. */
jx_optax_schedule *jx_optax_cosine_decay_schedule(double init_value, int64_t decay_steps,
                                                  double alpha, double exponent);
/* warmup_cosine_decay_schedule: linear init -> peak over warmup_steps, then cosine decay
 * peak -> end_value until decay_steps (total, warmup included; must exceed
 * warmup_steps). */
jx_optax_schedule *jx_optax_warmup_cosine_decay_schedule(double init_value, double peak_value,
                                                         int64_t warmup_steps,
                                                         int64_t decay_steps, double end_value,
                                                         double exponent);
/* schedule(count): float32 (float64 with x64 when count promotes so) of count's shape. */
jx_array *jx_optax_schedule_value(jx_optax_schedule *s, jx_array *count);
jx_optax_schedule *jx_optax_schedule_ref(jx_optax_schedule *s);
void jx_optax_schedule_free(jx_optax_schedule *s);

/* Building blocks (optax.<same name>). */
jx_optax_transform *jx_optax_identity(void);
jx_optax_transform *jx_optax_scale(double step_size);                    /* u * step_size */
jx_optax_transform *jx_optax_scale_by_schedule(jx_optax_schedule *step_size_fn);
jx_optax_transform *jx_optax_scale_by_learning_rate(double learning_rate); /* u * -lr */
jx_optax_transform *jx_optax_scale_by_learning_rate_sched(jx_optax_schedule *learning_rate);
/* trace: t = u + decay * t; u = nesterov ? u + decay * t : t. */
jx_optax_transform *jx_optax_trace(double decay, bool nesterov);
jx_optax_transform *jx_optax_scale_by_adam(double b1, double b2, double eps, double eps_root,
                                           bool nesterov);
/* scale_by_rms (eps inside the sqrt, no bias correction): u / sqrt(nu + eps). */
jx_optax_transform *jx_optax_scale_by_rms(double decay, double eps, double initial_scale);
/* scale_by_rss (adagrad's): u / sqrt(sum u^2 + eps), 0 while the sum is 0. */
jx_optax_transform *jx_optax_scale_by_rss(double initial_accumulator_value, double eps);
/* add_decayed_weights: u + weight_decay * params (update() then needs params). */
jx_optax_transform *jx_optax_add_decayed_weights(double weight_decay);
/* clip_by_global_norm: u * max_norm / ||u|| when ||u|| (over all arrays) >= max_norm. */
jx_optax_transform *jx_optax_clip_by_global_norm(double max_norm);
/* chain: applies transforms[0], then [1], ... (n >= 0; none NULL). */
jx_optax_transform *jx_optax_chain(int n, jx_optax_transform *const *transforms);

/* Optimizers (optax.sgd, adam, adamw, rmsprop, adagrad): chains of the blocks above, with
 * a float learning rate or, in the _sched variants, a schedule (a count joins the
 * state). momentum == 0 means none (optax's None). optax defaults: adam b1 0.9, b2
 * 0.999, eps 1e-8; adamw weight_decay 1e-4; rmsprop decay 0.9, eps 1e-8, initial_scale
 * 0; adagrad initial_accumulator_value 0.1, eps 1e-7. */
jx_optax_transform *jx_optax_sgd(double learning_rate, double momentum, bool nesterov);
jx_optax_transform *jx_optax_sgd_sched(jx_optax_schedule *learning_rate, double momentum,
                                       bool nesterov);
jx_optax_transform *jx_optax_adam(double learning_rate, double b1, double b2, double eps);
jx_optax_transform *jx_optax_adam_sched(jx_optax_schedule *learning_rate, double b1, double b2,
                                        double eps);
jx_optax_transform *jx_optax_adamw(double learning_rate, double b1, double b2, double eps,
                                   double weight_decay);
jx_optax_transform *jx_optax_adamw_sched(jx_optax_schedule *learning_rate, double b1, double b2,
                                         double eps, double weight_decay);
jx_optax_transform *jx_optax_rmsprop(double learning_rate, double decay, double eps,
                                     double initial_scale, double momentum, bool nesterov);
jx_optax_transform *jx_optax_rmsprop_sched(jx_optax_schedule *learning_rate, double decay,
                                           double eps, double initial_scale, double momentum,
                                           bool nesterov);
jx_optax_transform *jx_optax_adagrad(double learning_rate, double initial_accumulator_value,
                                     double eps);
jx_optax_transform *jx_optax_adagrad_sched(jx_optax_schedule *learning_rate,
                                           double initial_accumulator_value, double eps);
jx_optax_transform *jx_optax_transform_ref(jx_optax_transform *tx);
void jx_optax_transform_free(jx_optax_transform *tx);

/* tx.init(params): a new state (NULL on error: JX_ERR_VALUE for NULL arguments). */
jx_optax_state *jx_optax_init(jx_optax_transform *tx, int n, jx_array *const *params);
/* tx.update(grads, state, params): fills updates_out[0..n) with new references and
 * replaces the state's arrays with the new ones (the old ones are released). params may
 * be NULL unless the transform needs them (add_decayed_weights). On error nothing
 * changes and updates_out is all NULL: JX_ERR_VALUE for NULL arguments, a state made
 * for another transform or another n; JX_ERR_SHAPE when grads, params and the state's
 * arrays disagree in shape. */
jx_status jx_optax_update(jx_optax_transform *tx, jx_optax_state *state, int n,
                          jx_array *const *grads, jx_array *const *params,
                          jx_array **updates_out);
/* optax.apply_updates: new_params_out[i] = (params[i] + updates[i]) cast to params[i]'s
 * dtype (new references; all NULL on error). */
jx_status jx_optax_apply_updates(int n, jx_array *const *params, jx_array *const *updates,
                                 jx_array **new_params_out);
/* The state's arrays (borrowed, valid until the next update or free; *n receives the
 * count) -- e.g. to pass a state into a jitted step. */
jx_array *const *jx_optax_state_arrays(const jx_optax_state *state, int *n);
/* Number of state arrays (-1 for NULL). */
int jx_optax_state_size(const jx_optax_state *state);
/* A state of tx for nparams parameters holding `arrays` (n of them, in the layout above;
 * references are taken) -- e.g. inside a jitted step, from its tracer inputs.
 * JX_ERR_VALUE when n is not the layout's count. */
jx_optax_state *jx_optax_state_from_arrays(jx_optax_transform *tx, int nparams, int n,
                                           jx_array *const *arrays);
void jx_optax_state_free(jx_optax_state *state);
/* update() as a function for jx_jit: inputs grads[nparams], state arrays[k], params[nparams];
 * outputs updates[nparams], new state arrays[k] (k = the layout's count). */
jx_fn *jx_optax_update_fn(jx_optax_transform *tx, int nparams);

/* Losses (optax.losses), unreduced. Logits must be floating (JX_ERR_DTYPE).
 * softmax_cross_entropy: -sum(labels * log_softmax(logits)) over axis (optax default -1);
 * `where` (NULL = none) masks classes (a mask of lower rank is expanded at axis). */
jx_array *jx_optax_softmax_cross_entropy(jx_array *logits, jx_array *labels, int axis,
                                         jx_array *where);
/* ... with integer labels of logits' shape without axis: logsumexp(logits) - the label's
 * logit; negative labels count from the end, labels outside [-C, C) give NaN (JAX's
 * take_along_axis fill); rows fully excluded by `where` give 0. */
jx_array *jx_optax_softmax_cross_entropy_with_integer_labels(jx_array *logits, jx_array *labels,
                                                             int axis, jx_array *where);
/* -labels log sigmoid(logits) - (1 - labels) log sigmoid(-logits), elementwise. */
jx_array *jx_optax_sigmoid_binary_cross_entropy(jx_array *logits, jx_array *labels);
/* (predictions - targets)^2, 0.5 * that (l2), and huber (quadratic within delta, linear
 * beyond; optax default delta 1). targets may be NULL (zeros); otherwise shapes must be
 * equal (JX_ERR_SHAPE). Predictions must be floating. */
jx_array *jx_optax_squared_error(jx_array *predictions, jx_array *targets);
jx_array *jx_optax_l2_loss(jx_array *predictions, jx_array *targets);
jx_array *jx_optax_huber_loss(jx_array *predictions, jx_array *targets, double delta);

#endif /* JAXC_OPTAX_H */
