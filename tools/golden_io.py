"""The golden-file text format (tests/support/golden.h), written once for every
tools/golden_*.py script: array lines (`in float32 2 2 3 : 1.0 ...`), case blocks and the
file writer. A module, not a script: tools/gen_goldens.py does not run it.

Values print so that strtod reads back the exact value: floats as Python's repr (17
significant digits; inf, -inf, -0.0, nan), ints as decimals, bools as 0/1, complex as
two numbers (re im), bfloat16 through float32.
"""
import os

import numpy as np

# jax.dtypes.float0 (numpy's void dtype [('float0', 'V')]), written without importing JAX:
# scripts configure JAX before they import it
FLOAT0 = np.dtype([("float0", np.void, 0)])

GOLDEN_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                           "tests", "golden"))


def path(name):
  """tests/golden/<name>, where the C tests read it."""
  return os.path.join(GOLDEN_DIR, name)


def fmt_value(v, dtype, signed_nan=False):
  """One element as text. dtype: the array's dtype name; signed_nan: a NaN whose sign bit
  is set prints as -nan (golden_indexed.py: sort orders NaNs by sign), else every NaN is nan."""
  if dtype == "bool":
    return "1" if v else "0"
  if dtype.startswith(("int", "uint")):
    return str(int(v))
  if dtype.startswith("complex"):
    return (fmt_value(v.real, "float64", signed_nan) + " " +
            fmt_value(v.imag, "float64", signed_nan))
  f = float(v)
  if f != f:
    return "-nan" if signed_nan and np.signbit(f) else "nan"
  return repr(f)  # inf, -inf, -0.0 and 17 significant digits round-trip via strtod


def fmt_array(tag, a, signed_nan=False):
  """`tag [weak_]dtype ndim dims... : values...` for a JAX or NumPy array. A Python bool,
  int, float or complex is a weak scalar of JAX's default dtype for it (int32, float32,
  complex64; 64-bit under jax_enable_x64), its value printed as given."""
  if isinstance(a, (bool, int, float, complex)) and not isinstance(a, np.generic):
    import jax.numpy as jnp  # here: scripts configure JAX before they import it
    j = jnp.asarray(a)
    if isinstance(a, bool):
      return fmt_array(tag, j, signed_nan)
    dtype = str(j.dtype)
    return f"{tag} weak_{dtype} 0 : {fmt_value(a, dtype, signed_nan)}"
  dtype = str(a.dtype)
  weak = "weak_" if getattr(a, "weak_type", False) else ""
  if a.dtype == FLOAT0:  # jax.dtypes.float0: a shape and no values
    dims = " ".join(str(d) for d in a.shape)
    return f"{tag} float0 {a.ndim}" + (f" {dims}" if dims else "") + " :"
  n = np.asarray(a)
  if dtype == "bfloat16":
    n = n.astype(np.float32)
  vals = " ".join(fmt_value(v, dtype, signed_nan) for v in n.reshape(-1).tolist())
  dims = " ".join(str(d) for d in n.shape)
  head = f"{tag} {weak}{dtype} {n.ndim}" + (f" {dims}" if dims else "")
  return f"{head} : {vals}".rstrip()


def fmt_params(params):
  """`k=v k=v` from a dict, or the string as given (None or {} or "": empty)."""
  if isinstance(params, dict):
    return " ".join(f"{k}={v}" for k, v in params.items())
  return params or ""


def case_text(name, fn, params, ins, outs=(), err=None, signed_nan=False):
  """One case block: `case name fn params`, an `in` line per input, then an `out` line per
  output or `err STATUS`, then `end`."""
  ps = fmt_params(params)
  lines = [f"case {name} {fn}" + (f" {ps}" if ps else "")]
  lines += [fmt_array("in", a, signed_nan) for a in ins]
  if err:
    lines.append(f"err {err}")
  else:
    lines += [fmt_array("out", o, signed_nan) for o in outs]
  lines.append("end")
  return "\n".join(lines)


def write(path, header, cases, sep="\n\n"):
  """Writes the golden file: header (its comment lines, each ending in a newline), the
  cases joined by sep, a final newline; prints a one-line summary."""
  with open(path, "w") as f:
    f.write(header + sep.join(cases) + "\n")
  n = sum(c.split("\n").count("end") for c in cases)
  print(f"{n} cases -> {os.path.relpath(path)} ({os.path.getsize(path)} bytes)")
