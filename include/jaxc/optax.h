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
 * Transforms that need params (add_decayed_weights, scale_by_trust_ratio,
 * scale_by_param_block_rms, scale_by_factored_rms) fail update() with JX_ERR_VALUE when
 * params is NULL.
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
 * a schedule-driven step (the _sched optimizers, scale_by_schedule): count;
 * scale_by_lion: count, mu[n]; ema: count, ema[n]; scale_by_factored_rms: count,
 * v_row[n], v_col[n], v[n] (a factored array's v is a (1,) zero, an unfactored one's
 * v_row and v_col are); all others none. count is a 0-d int32 array (optax's, saturating at INT32_MAX); the others have
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
/* scale_by_lion: u = sign((1 - b1) g + b1 mu); mu = (1 - b2) g + b2 mu (b1, b2 in
 * [0, 1]). */
jx_optax_transform *jx_optax_scale_by_lion(double b1, double b2);
/* scale_by_trust_ratio (LARS/LAMB's): u * trust_coefficient ||p|| / (||u|| + eps), per
 * array, with 1 for the ratio where either norm is 0; norms at or below min_norm count as
 * min_norm. Needs params. optax defaults: min_norm 0, trust_coefficient 1, eps 0. */
jx_optax_transform *jx_optax_scale_by_trust_ratio(double min_norm, double trust_coefficient,
                                                  double eps);
/* scale_by_factored_rms (Adafactor's core): with decay_t = 1 - (count - step_offset +
 * 1)^-decay_rate (float32) and g2 = g^2 + epsilon, an array whose two largest dimensions
 * d0 >= d1 (ties: later axis is d0) have size(d1) >= min_dim_size_to_factor (and
 * factored) keeps row/column statistics v_row = decay_t v_row + (1 - decay_t) mean(g2,
 * d0) (and v_col likewise over d1), u = g (v_row / mean(v_row))^-1/2 (v_col)^-1/2; other
 * arrays keep v = decay_t v + (1 - decay_t) g2, u = g v^-1/2. Needs params (for shapes).
 * optax defaults: factored, decay_rate 0.8, step_offset 0, min_dim_size_to_factor 128,
 * epsilon 1e-30. */
jx_optax_transform *jx_optax_scale_by_factored_rms(bool factored, double decay_rate,
                                                   int64_t step_offset,
                                                   int64_t min_dim_size_to_factor,
                                                   double epsilon);
/* clip_by_block_rms: u / max(1, rms(u) / threshold), per array (threshold > 0). */
jx_optax_transform *jx_optax_clip_by_block_rms(double threshold);
/* scale_by_param_block_rms: u * max(rms(p), min_scale) per array (optax's
 * safe_root_mean_squares; default min_scale 1e-3). Needs params. */
jx_optax_transform *jx_optax_scale_by_param_block_rms(double min_scale);
/* ema: e = (1 - decay) u + decay e; u = e, or e / (1 - decay^count) when debias (decay in
 * [0, 1]). */
jx_optax_transform *jx_optax_ema(double decay, bool debias);
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
/* optax.lion: chain(scale_by_lion(b1, b2), add_decayed_weights(weight_decay),
 * scale_by_learning_rate). optax defaults: b1 0.9, b2 0.99, weight_decay 1e-3. */
jx_optax_transform *jx_optax_lion(double learning_rate, double b1, double b2,
                                  double weight_decay);
/* optax.lamb: chain(scale_by_adam(b1, b2, eps, eps_root), add_decayed_weights(
 * weight_decay), scale_by_trust_ratio(), scale_by_learning_rate). optax defaults: b1 0.9,
 * b2 0.999, eps 1e-6, eps_root 0, weight_decay 0. */
jx_optax_transform *jx_optax_lamb(double learning_rate, double b1, double b2, double eps,
                                  double eps_root, double weight_decay);
/* optax.adafactor: chain(scale_by_factored_rms(factored, decay_rate, decay_offset,
 * min_dim_size_to_factor, eps), clip_by_block_rms(clipping_threshold),
 * scale(learning_rate), scale_by_param_block_rms() if multiply_by_parameter_scale,
 * ema(momentum, debias=False) with a float32 accumulator, add_decayed_weights(
 * weight_decay_rate), scale(-1)). optax's None: learning_rate 1, clipping_threshold
 * INFINITY, momentum 0, weight_decay_rate 0 (each then leaves its step out, which is
 * what optax's None does; the ema adds {count, ema[n]} to the state). optax defaults:
 * learning_rate None, min_dim_size_to_factor 128, decay_rate 0.8, decay_offset 0,
 * multiply_by_parameter_scale true, clipping_threshold 1, momentum None,
 * weight_decay_rate None, eps 1e-30, factored true. */
jx_optax_transform *jx_optax_adafactor(double learning_rate, int64_t min_dim_size_to_factor,
                                       double decay_rate, int64_t decay_offset,
                                       bool multiply_by_parameter_scale,
                                       double clipping_threshold, double momentum,
                                       double weight_decay_rate, double eps, bool factored);
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
