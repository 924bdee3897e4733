#!/usr/bin/env python3
"""Writes tests/golden/promotion.txt: JAX's binary type promotion (jnp.result_type with
weak types) for every pair of jaxc dtypes, strong and weak, with x64 off and on.

Needs `pip install jax numpy`. Each x64 mode runs in its own subprocess, because
jax_enable_x64 must be fixed before any array is created. One line per case:
  <x64:0|1> <a> <a_weak:0|1> <b> <b_weak:0|1> <result> <result_weak:0|1>
Weak operands are Python scalars (1, 1.0, 1j) where JAX's default int/float/complex is meant, and
lax-level weakly typed 0-d arrays otherwise (e.g. a weak int8, weak bfloat16, weak bool).
The result is the dtype and weak_type of an actual jnp.add where both operands can exist
as arrays (jnp.result_type where they cannot: 64-bit dtypes with x64 off, which JAX
canonicalizes first). Where jnp.result_type disagrees with the op (two weak operands of
non-default dtypes only) the line ends with a comment giving result_type's answer.
"""
import os
import subprocess
import sys
import warnings

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
          "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
WIDE = {"int64", "uint64", "float64", "complex128"}


def run_mode(x64):
  import jax
  jax.config.update("jax_enable_x64", bool(x64))
  import numpy as np
  import jax.numpy as jnp
  from jax._src.lax import lax as lax_internal  # weak arrays of a chosen dtype

  warnings.simplefilter("ignore")  # x64-off truncation warnings for int64 etc. are expected
  default_int = "int64" if x64 else "int32"
  default_float = "float64" if x64 else "float32"
  default_complex = "complex128" if x64 else "complex64"

  # (name, weak, operand for result_type, 0-d array for jnp.add or None)
  operands = []
  for name in DTYPES:
    dt = jnp.dtype(name)
    arr = None if (not x64 and name in WIDE) else jnp.zeros((), dt)
    operands.append((name, 0, dt, arr))
  for name in DTYPES:
    if not x64 and name in WIDE:
      continue  # a weak 64-bit array cannot exist with x64 off
    if name == default_int:
      val = 1
    elif name == default_float:
      val = 1.0
    elif name == default_complex:
      val = 1j
    else:
      dt = jnp.dtype(name)
      val = lax_internal._convert_element_type(jnp.zeros((), dt), dt, weak_type=True)
      assert val.weak_type and val.dtype == dt, (name, val)
    arr = jnp.asarray(val) if isinstance(val, (int, float, complex)) else val
    assert arr.weak_type
    operands.append((name, 1, val, arr))

  lines = []
  for an, aw, av, aa in operands:
    for bn, bw, bv, ba in operands:
      dt, weak = jax.dtypes.result_type(av, bv, return_weak_type_flag=True)
      assert jnp.result_type(av, bv) == dt, (an, aw, bn, bw)
      note = ""
      if aa is not None and ba is not None:
        # What an operation really produces (jnp's promote_dtypes: lattice_result_type,
        # then canonicalize). It differs from result_type only when both operands are
        # weak and not of the default dtype: result_type then reports the default dtype
        # of the result's kind (weak int8 + weak int8 -> weak int32), while the op keeps
        # the lattice bound (weak int8). jaxc follows the op; the line is marked.
        out = jnp.add(aa, ba)
        if out.dtype != dt or bool(out.weak_type) != bool(weak):
          assert aw and bw, (an, aw, bn, bw, out.dtype, out.weak_type, dt, weak)
          note = f"  # jnp.result_type: {np.dtype(dt).name} {int(weak)}"
        dt, weak = out.dtype, out.weak_type
      lines.append(f"{x64} {an} {aw} {bn} {bw} {np.dtype(dt).name} {int(weak)}{note}")
  return lines


def main():
  if len(sys.argv) == 3 and sys.argv[1] == "--mode":
    print("\n".join(run_mode(int(sys.argv[2]))))
    return
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  out_path = os.path.join(root, "tests", "golden", "promotion.txt")
  chunks = []
  for x64 in (0, 1):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("JAX_ENABLE_X64", None)
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--mode", str(x64)],
                         env=env, check=True, capture_output=True, text=True)
    chunks.append(res.stdout.strip())
  import jax
  header = (f"# JAX {jax.__version__} type promotion, written by tools/golden_promotion.py\n"
            "# x64 a a_weak b b_weak result result_weak\n")
  with open(out_path, "w") as f:
    f.write(header + "\n".join(chunks) + "\n")
  print(f"wrote {out_path}")


if __name__ == "__main__":
  main()
