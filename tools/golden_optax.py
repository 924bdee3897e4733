#!/usr/bin/env python3
"""golden_optax.py -- writes tests/golden/optax.txt: optax's results for jaxc's jx_optax_*
(src/lib/optax*.c): 20-step trajectories of every optimizer (and chains with global-norm
clipping) on a small quadratic problem, their final states (jax.tree.leaves order, which
is jaxc's state layout), the schedules over a range of step counts, and the losses with
their gradients. Format: see tests/support/golden.h.

Run:  pip install jax optax numpy;  python3 tools/golden_optax.py  (jax_enable_x64 off)

Cases:
  optimizer   in W0 b0 aW cW ab cb; out W[20,2,3] b[20,3] (params after each step), then
              the final state's arrays. The loss is
              sum(0.5 aW (W - cW)^2) + sum(0.5 ab (b - cb)^2), its gradient from jax.grad.
              Params: opt=<sgd|adam|adamw|rmsprop|adagrad|lion|lamb|adafactor> plus its hyper-parameters,
              sched=<none|const|exp|cos|wcos|linear> and the schedule's (s_*), clip=<max
              norm, 0 = none> (chain(clip_by_global_norm, opt)).
  schedule    in count (int32); out schedule(count). Params: sched= and s_*.
  <loss>      in logits/predictions, labels/targets[, where]; out the loss.
  grad_<loss> same inputs; out d sum(loss) / d(logits or predictions).
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)

OUT = golden_io.path("optax.txt")
NAN, INF = float("nan"), float("inf")
RNG = np.random.default_rng(7)
STEPS = 20


CASES, NAMES = [], set()


def case(name, fn, ins, outs, **params):
  assert name not in NAMES, name
  NAMES.add(name)
  err = outs if isinstance(outs, str) else None
  # jnp.asarray: Python numbers and lists as JAX holds them (float32, weak)
  ins = [jnp.asarray(a) for a in ins]
  outs = [] if err else [jnp.asarray(o) for o in outs]
  CASES.append(golden_io.case_text(name, fn, params, ins, outs, err))


def f32(x):
  return jnp.asarray(np.asarray(x, dtype=np.float64), dtype=jnp.float32)


# ----------------------------------------------------------------- schedules

def make_schedule(kind, p):
  if kind == "none":
    return None
  if kind == "const":
    return optax.constant_schedule(p["s_init"])
  if kind == "linear":
    return optax.linear_schedule(p["s_init"], p["s_end"], p["s_steps"], p["s_begin"])
  if kind == "exp":
    end = None if p["s_end"] == "nan" else p["s_end"]
    return optax.exponential_decay(p["s_init"], p["s_steps"], p["s_rate"], p["s_begin"],
                                   bool(p["s_stair"]), end)
  if kind == "cos":
    return optax.cosine_decay_schedule(p["s_init"], p["s_steps"], p["s_alpha"], p["s_exp"])
  if kind == "wcos":
    return optax.warmup_cosine_decay_schedule(p["s_init"], p["s_peak"], p["s_warm"],
                                              p["s_steps"], p["s_end"], p["s_exp"])
  raise ValueError(kind)


SCHEDULES = {
    "const": dict(sched="const", s_init=0.05),
    "linear": dict(sched="linear", s_init=0.1, s_end=0.01, s_steps=10, s_begin=3),
    "exp": dict(sched="exp", s_init=0.1, s_steps=5, s_rate=0.5, s_begin=0, s_stair=0,
                s_end="nan"),
    "exp_stair_end": dict(sched="exp", s_init=0.2, s_steps=4, s_rate=0.7, s_begin=2,
                          s_stair=1, s_end=0.05),
    "exp_grow": dict(sched="exp", s_init=0.01, s_steps=3, s_rate=1.5, s_begin=0, s_stair=0,
                     s_end=0.05),
    "cos": dict(sched="cos", s_init=0.1, s_steps=15, s_alpha=0.0, s_exp=1.0),
    "cos_alpha_exp": dict(sched="cos", s_init=0.3, s_steps=12, s_alpha=0.1, s_exp=2.0),
    "wcos": dict(sched="wcos", s_init=0.0, s_peak=0.2, s_warm=5, s_steps=20, s_end=0.01,
                 s_exp=1.0),
    "wcos_exp": dict(sched="wcos", s_init=0.01, s_peak=0.1, s_warm=3, s_steps=15, s_end=0.0,
                     s_exp=1.5),
}


def schedule_cases():
  count = jnp.arange(0, 31, dtype=jnp.int32)
  for name, p in SCHEDULES.items():
    s = make_schedule(p["sched"], p)
    v = s(count)  # a Python float for the constant schedule: jaxc gives float32 arrays
    vals = v if isinstance(v, jax.Array) else jnp.full(count.shape, v, jnp.float32)
    case(f"schedule_{name}", "schedule", [count], [vals], **p)


# ---------------------------------------------------------------- optimizers

def make_opt(p):
  lr = make_schedule(p.get("sched", "none"), p) or p.get("lr")
  o = p["opt"]
  if o == "sgd":
    tx = optax.sgd(lr, p["momentum"] or None, bool(p["nesterov"]))
  elif o == "adam":
    tx = optax.adam(lr, p["b1"], p["b2"], p["eps"])
  elif o == "adamw":
    tx = optax.adamw(lr, p["b1"], p["b2"], p["eps"], weight_decay=p["wd"])
  elif o == "rmsprop":
    tx = optax.rmsprop(lr, p["decay"], p["eps"], p["initial_scale"],
                       momentum=p["momentum"] or None, nesterov=bool(p["nesterov"]))
  elif o == "adagrad":
    tx = optax.adagrad(lr, p["init_acc"], p["eps"])
  elif o == "lion":
    tx = optax.lion(lr, p["b1"], p["b2"], weight_decay=p["wd"])
  elif o == "lamb":
    tx = optax.lamb(lr, p["b1"], p["b2"], p["eps"], p["eps_root"], p["wd"])
  elif o == "adafactor":  # jaxc spells optax's None as lr 1, clip_thr inf, momentum/wd 0
    tx = optax.adafactor(lr if lr != 1.0 else None, p["min_dim"], p["decay_rate"],
                         p["decay_offset"], bool(p["param_scale"]),
                         None if p["clip_thr"] == "inf" else p["clip_thr"],
                         p["momentum"] or None, weight_decay_rate=p["wd"] or None,
                         eps=p["eps"], factored=bool(p["factored"]))
  else:
    raise ValueError(o)
  if p.get("clip", 0):
    tx = optax.chain(optax.clip_by_global_norm(p["clip"]), tx)
  return tx


OPTIMIZERS = {
    "sgd": dict(opt="sgd", lr=0.1, momentum=0, nesterov=0),
    "sgd_momentum": dict(opt="sgd", lr=0.05, momentum=0.9, nesterov=0),
    "sgd_nesterov": dict(opt="sgd", lr=0.05, momentum=0.9, nesterov=1),
    "sgd_exp": dict(opt="sgd", momentum=0.9, nesterov=0, **SCHEDULES["exp"]),
    "adam": dict(opt="adam", lr=0.1, b1=0.9, b2=0.999, eps=1e-8),
    "adam_odd": dict(opt="adam", lr=0.03, b1=0.5, b2=0.9, eps=1e-3),
    "adam_wcos": dict(opt="adam", b1=0.9, b2=0.999, eps=1e-8, **SCHEDULES["wcos"]),
    "adamw": dict(opt="adamw", lr=0.1, b1=0.8, b2=0.99, eps=1e-6, wd=0.05),
    "adamw_cos": dict(opt="adamw", b1=0.9, b2=0.999, eps=1e-8, wd=1e-4,
                      **SCHEDULES["cos_alpha_exp"]),
    "rmsprop": dict(opt="rmsprop", lr=0.05, decay=0.9, eps=1e-8, initial_scale=0.0,
                    momentum=0, nesterov=0),
    "rmsprop_momentum": dict(opt="rmsprop", lr=0.02, decay=0.8, eps=1e-6, initial_scale=0.5,
                             momentum=0.5, nesterov=1),
    "rmsprop_linear": dict(opt="rmsprop", decay=0.9, eps=1e-8, initial_scale=0.0,
                           momentum=0.3, nesterov=0, **SCHEDULES["linear"]),
    "adagrad": dict(opt="adagrad", lr=0.3, init_acc=0.1, eps=1e-7),
    "adagrad_const": dict(opt="adagrad", init_acc=0.0, eps=1e-7, **SCHEDULES["const"]),
    "lion": dict(opt="lion", lr=0.01, b1=0.9, b2=0.99, wd=1e-3),
    "lion_odd": dict(opt="lion", lr=0.03, b1=0.5, b2=0.8, wd=0.1),
    "lamb": dict(opt="lamb", lr=0.05, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0, wd=0.0),
    "lamb_wd": dict(opt="lamb", lr=0.1, b1=0.8, b2=0.99, eps=1e-4, eps_root=1e-8, wd=0.02),
    "adafactor": dict(opt="adafactor", lr=1.0, min_dim=128, decay_rate=0.8, decay_offset=0,
                      param_scale=1, clip_thr=1.0, momentum=0, wd=0, eps=1e-30, factored=1),
    "adafactor_factored": dict(opt="adafactor", lr=0.1, min_dim=2, decay_rate=0.8,
                               decay_offset=0, param_scale=1, clip_thr=1.0, momentum=0, wd=0,
                               eps=1e-30, factored=1),
    "adafactor_all": dict(opt="adafactor", lr=0.05, min_dim=1, decay_rate=0.7,
                          decay_offset=2, param_scale=0, clip_thr="inf", momentum=0.9,
                          wd=0.01, eps=1e-20, factored=1),
    "adafactor_unfactored": dict(opt="adafactor", lr=0.2, min_dim=1, decay_rate=0.8,
                                 decay_offset=0, param_scale=1, clip_thr=0.5, momentum=0,
                                 wd=0, eps=1e-30, factored=0),
    "clip_adam": dict(opt="adam", lr=0.1, b1=0.9, b2=0.999, eps=1e-8, clip=1.0),
    "clip_sgd_momentum": dict(opt="sgd", lr=0.1, momentum=0.9, nesterov=0, clip=0.5),
    "clip_adamw_exp": dict(opt="adamw", b1=0.9, b2=0.99, eps=1e-8, wd=0.01, clip=2.0,
                           **SCHEDULES["exp_stair_end"]),
}


def optimizer_cases():
  W0 = f32(RNG.uniform(-2, 2, (2, 3)))
  b0 = f32(RNG.uniform(-2, 2, (3,)))
  aW = f32(RNG.uniform(0.5, 3, (2, 3)))
  cW = f32(RNG.uniform(-1, 1, (2, 3)))
  ab = f32(RNG.uniform(0.5, 3, (3,)))
  cb = f32(RNG.uniform(-1, 1, (3,)))

  def loss(params):
    W, b = params
    return jnp.sum(0.5 * aW * (W - cW) ** 2) + jnp.sum(0.5 * ab * (b - cb) ** 2)

  for name, p in OPTIMIZERS.items():
    tx = make_opt(p)
    params = [W0, b0]
    state = tx.init(params)
    Ws, bs = [], []
    for _ in range(STEPS):
      g = jax.grad(loss)(params)
      updates, state = tx.update(g, state, params)
      params = optax.apply_updates(params, updates)
      Ws.append(params[0])
      bs.append(params[1])
    outs = [jnp.stack(Ws), jnp.stack(bs)] + jax.tree.leaves(state)
    case(f"opt_{name}", "optimizer", [W0, b0, aW, cW, ab, cb], outs, **p)


# -------------------------------------------------------------------- losses

def loss_cases():
  logits = f32(RNG.uniform(-3, 3, (4, 5))).at[3, 0].set(40.0).at[3, 1].set(-40.0)
  probs = jax.nn.softmax(f32(RNG.uniform(-1, 1, (4, 5))))
  onehot = jax.nn.one_hot(jnp.array([1, 4, 0, 2]), 5)
  where5 = jnp.array([True, True, False, True, True])
  where45 = jnp.asarray(RNG.uniform(size=(4, 5)) > 0.3).at[2].set(False)
  sce = optax.softmax_cross_entropy
  for tag, lab in (("probs", probs), ("onehot", onehot)):
    case(f"sce_{tag}", "softmax_cross_entropy", [logits, lab], [sce(logits, lab)], axis=-1,
         where=0)
    g = jax.grad(lambda l: jnp.sum(sce(l, lab)))
    case(f"grad_sce_{tag}", "grad_softmax_cross_entropy", [logits, lab], [g(logits)], axis=-1,
         where=0)
    case(f"sce_{tag}_where45", "softmax_cross_entropy", [logits, lab, where45],
         [sce(logits, lab, where=where45)], axis=-1, where=1)
  case("sce_axis0", "softmax_cross_entropy", [logits, probs], [sce(logits, probs, axis=0)],
       axis=0, where=0)
  sci = optax.softmax_cross_entropy_with_integer_labels
  labels = jnp.array([1, 4, 0, 2], jnp.int32)
  odd = jnp.array([-1, 5, -6, 3], jnp.int32)
  for tag, lab in (("labels", labels), ("odd", odd)):
    case(f"sci_{tag}", "softmax_cross_entropy_with_integer_labels", [logits, lab],
         [sci(logits, lab)], axis=-1, where=0)
    g = jax.grad(lambda l: jnp.sum(jnp.nan_to_num(sci(l, lab))))
    case(f"grad_sci_{tag}", "grad_softmax_cross_entropy_with_integer_labels", [logits, lab],
         [g(logits)], axis=-1, where=0)
  case("sci_where45", "softmax_cross_entropy_with_integer_labels", [logits, labels, where45],
       [sci(logits, labels, where=where45)], axis=-1, where=1)
  where5b = jnp.broadcast_to(where5, (4, 5))
  case("sci_where5", "softmax_cross_entropy_with_integer_labels", [logits, labels, where5b],
       [sci(logits, labels, where=where5b)], axis=-1, where=1)
  where4 = jnp.array([True, False, True, True])  # per example: expanded to (4, 1)
  case("sci_where4", "softmax_cross_entropy_with_integer_labels", [logits, labels, where4],
       [sci(logits, labels, where=where4)], axis=-1, where=1)
  case("sce_where4", "softmax_cross_entropy", [logits, probs, where4],
       [sce(logits, probs, where=where4)], axis=-1, where=1)
  case("sci_where5_bad", "softmax_cross_entropy_with_integer_labels", [logits, labels, where5],
       "JX_ERR_SHAPE", axis=-1, where=1)
  lab0 = jnp.array([1, 2, 0, 3, 4], jnp.int32)
  case("sci_axis0", "softmax_cross_entropy_with_integer_labels", [logits, lab0],
       [sci(logits, lab0, axis=0)], axis=0, where=0)
  case("sci_float_labels", "softmax_cross_entropy_with_integer_labels",
       [logits, labels.astype(jnp.float32)], "JX_ERR_DTYPE", axis=-1, where=0)
  case("sci_int_logits", "softmax_cross_entropy_with_integer_labels",
       [labels, labels], "JX_ERR_DTYPE", axis=-1, where=0)

  bl = f32([-100.0, -20.0, -3.0, -0.5, 0.0, 0.5, 3.0, 20.0, 100.0, 1e30])
  by = f32([0.0, 1.0, 0.3, 1.0, 0.5, 0.0, 1.0, 0.0, 1.0, 0.0])
  bce = optax.sigmoid_binary_cross_entropy
  case("bce", "sigmoid_binary_cross_entropy", [bl, by], [bce(bl, by)])
  g = jax.grad(lambda l: jnp.sum(bce(l, by)))
  case("grad_bce", "grad_sigmoid_binary_cross_entropy", [bl, by], [g(bl)])
  byi = jnp.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 0], jnp.int32)
  case("bce_int_labels", "sigmoid_binary_cross_entropy", [bl, byi], [bce(bl, byi)])

  pred = f32(RNG.uniform(-3, 3, (3, 4)))
  targ = f32(RNG.uniform(-3, 3, (3, 4)))
  for fname, f in (("squared_error", optax.squared_error), ("l2_loss", optax.l2_loss)):
    case(f"{fname}", fname, [pred, targ], [f(pred, targ)], targets=1)
    case(f"{fname}_notarget", fname, [pred], [f(pred)], targets=0)
    g = jax.grad(lambda p: jnp.sum(f(p, targ)))
    case(f"grad_{fname}", f"grad_{fname}", [pred, targ], [g(pred)], targets=1)
    case(f"{fname}_shape", fname, [pred, targ[:2]], "JX_ERR_SHAPE", targets=1)
  for delta in (1.0, 0.5, 2.5):
    h = lambda p, t=None: optax.huber_loss(p, t, delta=delta)
    case(f"huber_{delta}", "huber_loss", [pred, targ], [h(pred, targ)], targets=1, delta=delta)
    g = jax.grad(lambda p: jnp.sum(h(p, targ)))
    case(f"grad_huber_{delta}", "grad_huber_loss", [pred, targ], [g(pred)], targets=1,
         delta=delta)
  case("huber_notarget", "huber_loss", [pred], [optax.huber_loss(pred)], targets=0, delta=1.0)
  case("huber_int", "huber_loss", [jnp.array([1, 2], jnp.int32)], "JX_ERR_DTYPE", targets=0,
       delta=1.0)


def main():
  schedule_cases()
  optimizer_cases()
  loss_cases()
  golden_io.write(OUT, "# Generated by tools/golden_optax.py with jax %s, optax %s. Do not edit.\n"
                  "# Format: tests/support/golden.h. Case functions: see the script's "
                  "docstring.\n\n" % (jax.__version__, optax.__version__), CASES, sep="\n")


if __name__ == "__main__":
  main()
