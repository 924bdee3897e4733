#!/usr/bin/env python3
"""golden_float0.py -- writes tests/golden/float0.txt: JAX's float0 (co)tangents of
integer and bool values -- jax.grad / value_and_grad with allow_int=True, jax.vjp,
jax.jvp and jax.linearize with integer primals, and jit / vmap of grad(allow_int=True)
-- read by tests/transform/test_float0.c, whose table has a C function of each `fn`.
Each case: `case <name> <transformation> fn=<function> [argnums=0,1]`; inputs are the
primals (then the cotangents for vjp, the tangents for jvp / linearize); outputs are
what the transformation returns (vjp: f's outputs, then the input cotangents; jvp: f's
outputs, then their tangents). float0 arrays are written with their shape and no
values. Errors: `err` with the JX_ERR_ status. Format: tests/support/golden.h.

Run:  pip install jax numpy;  python3 tools/golden_float0.py
"""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import golden_io  # noqa: E402

jax.config.update("jax_enable_x64", False)
F0 = jax.dtypes.float0

FUNCS = {  # name: f (the C test has a function of each name)
    "mul": lambda x, n: x * n,
    "sum_mul": lambda x, n: jnp.sum(x * n),
    "where_bool": lambda x, b: jnp.sum(jnp.where(b, x * x, 2.0 * x)),
    "mul_aux": lambda x, n: (x * n, n + 1),     # grad: out[1] is aux; vjp/jvp: 2 outputs
    "int_only": lambda x, n: jnp.sum(x) * 2.0,  # n unused
    "square_mul": lambda x, n: x * x * n,
}


def f0(*shape):
  return np.zeros(shape, F0)


def flat(x):
  return list(x) if isinstance(x, (tuple, list)) else [x]


def case(cases, name, kind, fn, ins, argnums=None, nprimal=None):
  """Appends the case block of `kind` applied to FUNCS[fn] at ins; a TypeError / ValueError
  from JAX is the block's `err` line."""
  f = FUNCS[fn]
  params = f"fn={fn}" + (f" argnums={','.join(map(str, argnums))}" if argnums else "")
  raw = ins
  # JAX arrays, so that JAX (not NumPy) computes even where nothing is differentiated
  ins = [a if isinstance(a, (bool, int, float)) or a.dtype == F0 else jnp.asarray(a) for a in ins]
  try:
    if kind in ("grad_allow_int", "value_and_grad_allow_int", "grad", "jit_grad_allow_int",
                "vmap_grad_allow_int", "jit_vmap_grad_allow_int"):
      aux = fn == "mul_aux"
      base = jax.value_and_grad if kind.startswith("value") else jax.grad
      g = base(f, argnums=tuple(argnums), has_aux=aux, allow_int=kind != "grad")
      if kind.startswith("jit_vmap"):
        g = jax.jit(jax.vmap(g))
      elif kind.startswith("vmap"):
        g = jax.vmap(g)
      elif kind.startswith("jit"):
        g = jax.jit(g)
      r = g(*ins)
      if kind.startswith("value"):  # ((value, aux), grads) or (value, grads)
        (v, grads) = r
        outs = (flat(v) if aux else [v]) + flat(grads)
      else:  # (grads, aux) or grads
        outs = (flat(r[0]) + [r[1]]) if aux else flat(r)
    elif kind in ("jacfwd", "jacrev", "jacrev_allow_int"):
      jac = jax.jacfwd if kind == "jacfwd" else jax.jacrev
      kw = {"allow_int": True} if kind.endswith("allow_int") else {}
      outs = flat(jac(f, argnums=tuple(argnums), **kw)(*ins))
    elif kind == "vjp":
      n = nprimal
      y, pb = jax.vjp(f, *ins[:n])
      outs = flat(y) + flat(pb(tuple(ins[n:]) if isinstance(y, tuple) else ins[n]))
    elif kind == "jvp":
      n = nprimal
      y, t = jax.jvp(f, tuple(ins[:n]), tuple(ins[n:]))
      outs = flat(y) + flat(t)
    elif kind == "linearize":
      n = nprimal
      y, lin = jax.linearize(f, *ins[:n])
      outs = flat(lin(*ins[n:]))
    else:
      raise ValueError(kind)
  except TypeError:
    cases.append(golden_io.case_text(name, kind, params, raw, err="JX_ERR_DTYPE"))
    return
  except ValueError:
    cases.append(golden_io.case_text(name, kind, params, raw, err="JX_ERR_SHAPE"))
    return
  cases.append(golden_io.case_text(name, kind, params, raw, outs))


def main():
  x = np.array([0.5, -1.25, 2.0], np.float32)
  n = np.array([3, -2, 5], np.int32)
  b = np.array([True, False, True])
  s, k = np.float32(2.0), np.int32(3)
  L = []
  case(L, "grad_mul", "grad_allow_int", "mul", [s, k], [0, 1])
  case(L, "grad_mul_int_only", "grad_allow_int", "mul", [s, k], [1])
  case(L, "grad_mul_weak", "grad_allow_int", "mul", [2.0, 3], [0, 1])
  case(L, "grad_sum_mul", "grad_allow_int", "sum_mul", [x, n], [0, 1])
  case(L, "grad_sum_mul_rev", "grad_allow_int", "sum_mul", [x, n], [1, 0])
  case(L, "grad_uint8", "grad_allow_int", "mul", [s, np.uint8(7)], [0, 1])
  case(L, "grad_int64_x64_off", "grad_allow_int", "sum_mul", [x, n.astype(np.int16)], [1])
  case(L, "grad_where_bool", "grad_allow_int", "where_bool", [np.array([1.5, -3.0], np.float32),
                                                             np.array([True, False])], [0, 1])
  case(L, "grad_int_only", "grad_allow_int", "int_only", [x, n], [1])
  case(L, "grad_aux", "grad_allow_int", "mul_aux", [s, k], [0, 1])
  case(L, "vag_aux", "value_and_grad_allow_int", "mul_aux", [s, k], [1])
  case(L, "vag_sum_mul", "value_and_grad_allow_int", "sum_mul", [x, n], [0, 1])
  case(L, "grad_no_allow_int", "grad", "mul", [s, k], [0, 1])
  case(L, "grad_no_allow_bool", "grad", "where_bool", [np.array([1.5], np.float32),
                                                       np.array([True])], [1])
  case(L, "jit_grad", "jit_grad_allow_int", "sum_mul", [x, n], [0, 1])
  case(L, "vmap_grad", "vmap_grad_allow_int", "mul", [x, n], [0, 1])
  case(L, "jit_vmap_grad", "jit_vmap_grad_allow_int", "mul", [x, n], [0, 1])
  case(L, "vmap_grad_bool", "vmap_grad_allow_int", "where_bool",
       [np.array([[1.5], [2.0]], np.float32), np.array([[True], [False]])], [0, 1])
  case(L, "vjp_mul_aux", "vjp", "mul_aux", [s, k, np.float32(1.5), f0()], nprimal=2)
  case(L, "vjp_mul_aux_int_ct", "vjp", "mul_aux", [s, k, np.float32(1.5), np.int32(1)], nprimal=2)
  case(L, "vjp_sum_mul", "vjp", "sum_mul", [x, n, np.float32(-2.0)], nprimal=2)
  case(L, "vjp_where_bool", "vjp", "where_bool", [x[:2], b[:2], np.float32(1.0)], nprimal=2)
  case(L, "jvp_mul_aux", "jvp", "mul_aux", [s, k, np.float32(1.0), f0()], nprimal=2)
  case(L, "jvp_sum_mul", "jvp", "sum_mul", [x, n, np.array([1.0, 2.0, 3.0], np.float32), f0(3)],
       nprimal=2)
  case(L, "jvp_int_tangent", "jvp", "mul", [s, k, np.float32(1.0), np.int32(1)], nprimal=2)
  case(L, "jvp_float_tangent_for_int", "jvp", "mul", [s, k, np.float32(1.0), np.float32(1.0)],
       nprimal=2)
  case(L, "jvp_float0_for_float", "jvp", "mul", [s, k, f0(), f0()], nprimal=2)
  case(L, "jvp_float0_shape", "jvp", "sum_mul", [x, n, x, f0(2)], nprimal=2)
  case(L, "linearize_mul", "linearize", "mul", [s, k, np.float32(1.0), f0()], nprimal=2)
  case(L, "linearize_mul_aux", "linearize", "mul_aux", [s, k, np.float32(2.0), f0()], nprimal=2)
  x2, n2 = x[:2], n[:2]
  case(L, "jacrev_allow_int", "jacrev_allow_int", "mul", [x2, n2], [0, 1])
  case(L, "jacrev_allow_int_sum", "jacrev_allow_int", "sum_mul", [x, n], [1, 0])
  case(L, "jacfwd_int_passthrough", "jacfwd", "mul", [x2, n2], [0])
  case(L, "jacrev_int_passthrough", "jacrev", "mul", [x2, n2], [0])
  case(L, "jacrev_int_argnum", "jacrev", "mul", [x2, n2], [1])
  case(L, "jacfwd_int_argnum", "jacfwd", "mul", [x2, n2], [1])
  golden_io.write(golden_io.path("float0.txt"),
                  f"# Generated by tools/golden_float0.py with jax {jax.__version__}, numpy "
                  f"{np.__version__}. Format: tests/support/golden.h.\n", L, sep="\n")


if __name__ == "__main__":
  main()
