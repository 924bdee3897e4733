/* optax_schedule.c -- optax's learning-rate schedules (optax/schedules/_schedule.py,
 * _join.py) as refcounted objects evaluated with jx_ operations on a step count, so a
 * schedule inside a jitted training step is traced like everything else. Python
 * floats of optax are weak scalars here (the count's float dtype wins). */
#include <math.h>
#include <stdlib.h>

#include "lib/numpy/np.h"

typedef enum SchedKind { SCHED_CONSTANT, SCHED_POLYNOMIAL, SCHED_EXPONENTIAL, SCHED_COSINE,
                         SCHED_WARMUP_COSINE } SchedKind;

struct jx_optax_schedule {
  int refcount;
  SchedKind kind;
  double init, end, power, rate, alpha, exponent, peak;
  int64_t steps, begin;
  bool staircase, has_end;
};

static jx_optax_schedule *sched_new(SchedKind kind) {
  jx_optax_schedule *s = calloc(1, sizeof *s);
  if (!s) {
    error_set(JX_ERR_OOM, "jx_optax: out of memory creating a schedule");
    return NULL;
  }
  s->refcount = 1;
  s->kind = kind;
  return s;
}

static bool finite_arg(const char *fn, const char *what, double v) {
  if (isfinite(v)) return true;
  error_set(JX_ERR_VALUE, "%s: %s must be finite, got %g", fn, what, v);
  return false;
}

jx_optax_schedule *jx_optax_schedule_ref(jx_optax_schedule *s) {
  if (s) s->refcount++;
  return s;
}

void jx_optax_schedule_free(jx_optax_schedule *s) {
  if (s && --s->refcount == 0) free(s);
}

jx_optax_schedule *jx_optax_constant_schedule(double value) {
  if (!finite_arg("jx_optax_constant_schedule", "value", value)) return NULL;
  jx_optax_schedule *s = sched_new(SCHED_CONSTANT);
  if (s) s->init = value;
  return s;
}

/* optax.polynomial_schedule: (init - end) * (1 - clip(count - begin, 0, steps) / steps)^power
 * + end; steps <= 0 gives the constant init, begin < 0 counts as 0 (optax logs both). */
jx_optax_schedule *jx_optax_polynomial_schedule(double init_value, double end_value,
                                                double power, int64_t transition_steps,
                                                int64_t transition_begin) {
  const char *fn = "jx_optax_polynomial_schedule";
  if (!finite_arg(fn, "init_value", init_value) || !finite_arg(fn, "end_value", end_value) ||
      !finite_arg(fn, "power", power))
    return NULL;
  if (transition_steps <= 0) return jx_optax_constant_schedule(init_value);
  jx_optax_schedule *s = sched_new(SCHED_POLYNOMIAL);
  if (!s) return NULL;
  s->init = init_value, s->end = end_value, s->power = power;
  s->steps = transition_steps, s->begin = transition_begin < 0 ? 0 : transition_begin;
  return s;
}

jx_optax_schedule *jx_optax_linear_schedule(double init_value, double end_value,
                                            int64_t transition_steps, int64_t transition_begin) {
  return jx_optax_polynomial_schedule(init_value, end_value, 1, transition_steps,
                                      transition_begin);
}

/* optax.exponential_decay: init * rate^((count - begin) / steps) (floored when staircase)
 * after begin, init before; clipped at end_value (NAN: none) from below when rate < 1,
 * from above otherwise. steps <= 0 or rate == 0 give the constant init. */
jx_optax_schedule *jx_optax_exponential_decay(double init_value, int64_t transition_steps,
                                              double decay_rate, int64_t transition_begin,
                                              bool staircase, double end_value) {
  const char *fn = "jx_optax_exponential_decay";
  if (!finite_arg(fn, "init_value", init_value) || !finite_arg(fn, "decay_rate", decay_rate))
    return NULL;
  if (isinf(end_value)) {
    error_set(JX_ERR_VALUE, "%s: end_value must be finite (or NAN for none), got %g", fn,
              end_value);
    return NULL;
  }
  if (transition_steps <= 0 || decay_rate == 0) return jx_optax_constant_schedule(init_value);
  jx_optax_schedule *s = sched_new(SCHED_EXPONENTIAL);
  if (!s) return NULL;
  s->init = init_value, s->rate = decay_rate, s->staircase = staircase;
  s->steps = transition_steps, s->begin = transition_begin < 0 ? 0 : transition_begin;
  s->has_end = !isnan(end_value), s->end = end_value;
  return s;
}

/* optax.cosine_decay_schedule: init * ((1 - alpha) * (0.5 (1 + cos(pi min(count, steps) /
 * steps)))^exponent + alpha). decay_steps must be positive (optax raises). */
jx_optax_schedule *jx_optax_cosine_decay_schedule(double init_value, int64_t decay_steps,
                                                  double alpha, double exponent) {
  const char *fn = "jx_optax_cosine_decay_schedule";
  if (!finite_arg(fn, "init_value", init_value) || !finite_arg(fn, "alpha", alpha) ||
      !finite_arg(fn, "exponent", exponent))
    return NULL;
  if (decay_steps <= 0) {
    error_set(JX_ERR_VALUE, "%s: decay_steps must be positive, got %lld", fn,
              (long long)decay_steps);
    return NULL;
  }
  jx_optax_schedule *s = sched_new(SCHED_COSINE);
  if (!s) return NULL;
  s->init = init_value, s->steps = decay_steps, s->alpha = alpha, s->exponent = exponent;
  return s;
}

/* optax.warmup_cosine_decay_schedule: linear from init to peak over warmup_steps, then
 * cosine decay from peak to end over decay_steps - warmup_steps (which must be > 0). */
jx_optax_schedule *jx_optax_warmup_cosine_decay_schedule(double init_value, double peak_value,
                                                         int64_t warmup_steps,
                                                         int64_t decay_steps, double end_value,
                                                         double exponent) {
  const char *fn = "jx_optax_warmup_cosine_decay_schedule";
  if (!finite_arg(fn, "init_value", init_value) || !finite_arg(fn, "peak_value", peak_value) ||
      !finite_arg(fn, "end_value", end_value) || !finite_arg(fn, "exponent", exponent))
    return NULL;
  if (decay_steps - warmup_steps <= 0 || warmup_steps < 0) {
    error_set(JX_ERR_VALUE,
              "%s: need 0 <= warmup_steps < decay_steps, got warmup_steps %lld, decay_steps %lld",
              fn, (long long)warmup_steps, (long long)decay_steps);
    return NULL;
  }
  jx_optax_schedule *s = sched_new(SCHED_WARMUP_COSINE);
  if (!s) return NULL;
  s->init = init_value, s->peak = peak_value, s->end = end_value, s->exponent = exponent;
  s->begin = warmup_steps, s->steps = decay_steps;
  return s;
}

/* ---------------------------------------------------------------- values */

static jx_array *wf(double v) { return jx_scalar(v); }
static jx_array *wi(int64_t v) { return jx_scalar_int(v); }

static jx_array *polynomial(double init, double end, double power, int64_t steps,
                            int64_t begin, jx_array *count) {
  if (steps <= 0) return jx_full(jx_ndim(count), jx_shape(count), init, JX_FLOAT32);
  jx_array *c = jx_clip(jx_subtract(count, wi(begin)), wi(0), wi(steps));
  jx_array *frac = jx_subtract(wi(1), jx_divide(c, wi(steps)));
  /* frac ** power: a Python int power is lax.integer_pow, a float one lax.pow */
  jx_array *p = power == floor(power) && fabs(power) < 64 ? jx_power(frac, wi((int64_t)power))
                                                         : jx_power(frac, wf(power));
  return jx_add(jx_multiply(wf(init - end), p), wf(end));
}

static jx_array *cosine(double init, int64_t steps, double alpha, double exponent,
                        jx_array *count) {
  jx_array *c = jx_minimum(count, wf((double)steps));
  jx_array *cd = jx_multiply(wf(0.5), jx_add(wi(1), jx_cos(jx_divide(jx_multiply(wf(M_PI), c),
                                                                        wf((double)steps)))));
  jx_array *decayed = jx_add(jx_multiply(wf(1 - alpha), jx_power(cd, wf(exponent))), wf(alpha));
  return jx_multiply(wf(init), decayed);
}

static jx_array *value_of(const jx_optax_schedule *s, jx_array *count) {
  switch (s->kind) {
  case SCHED_CONSTANT:
    /* optax returns the Python float itself: here a float32 array of count's shape */
    return jx_full(jx_ndim(count), jx_shape(count), s->init, JX_FLOAT32);
  case SCHED_POLYNOMIAL: return polynomial(s->init, s->end, s->power, s->steps, s->begin, count);
  case SCHED_EXPONENTIAL: {
    jx_array *dc = jx_subtract(count, wi(s->begin));
    jx_array *p = jx_divide(dc, wi(s->steps));
    if (s->staircase) p = jx_floor(p);
    jx_array *v = jx_where(jx_less_equal(dc, wi(0)), wf(s->init),
                           jx_multiply(wf(s->init), jx_power(wf(s->rate), p)));
    if (s->has_end) v = s->rate < 1 ? jx_maximum(v, wf(s->end)) : jx_minimum(v, wf(s->end));
    return v;
  }
  case SCHED_COSINE: return cosine(s->init, s->steps, s->alpha, s->exponent, count);
  case SCHED_WARMUP_COSINE: {
    double alpha = s->peak == 0 ? 0 : s->end / s->peak;
    jx_array *warm = polynomial(s->init, s->peak, 1, s->begin, 0, count);
    jx_array *decay = cosine(s->peak, s->steps - s->begin, alpha, s->exponent,
                             jx_subtract(count, wi(s->begin)));
    return jx_where(jx_less(count, wi(s->begin)), warm, decay);
  }
  }
  return NULL;
}

jx_array *jx_optax_schedule_value(jx_optax_schedule *s, jx_array *count) {
  const char *fn = "jx_optax_schedule_value";
  if (!s || !count) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, s ? "count" : "schedule");
    return NULL;
  }
  if (dtype_is_bool(count->dtype)) {
    error_set(JX_ERR_DTYPE, "%s: count must be numeric, got bool", fn);
    return NULL;
  }
  jx_scope_begin();
  return np_scope_return(value_of(s, count));
}
