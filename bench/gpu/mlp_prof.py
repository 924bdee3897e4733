"""mlp_prof.py -- where JAX's (XLA's) jitted training step spends GPU time: argv[1] is a
batch of peers.py's "mlp" SGD step (jax_mlp; default 4096) or "fm_mlp" / "fm_cnn", the
trainer's Adam steps (jax_fm). 20 steady-state steps under jax.profiler, the device
planes' kernel events summed by name (per step, microseconds) and the GPU span per step;
then the optimized HLO's fusions. tools/gpu_session.sh's jaxprof phase runs it."""
import glob, os, sys, tempfile
from collections import defaultdict
import jax
from jax.profiler import ProfileData

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import jax_fm, jax_mlp  # noqa: E402 (the same workloads as peers.py)

arg = sys.argv[1] if len(sys.argv) > 1 else "4096"
step, args = jax_fm(arg[3:]) if arg.startswith("fm_") else jax_mlp(int(arg))
for _ in range(50):
    out = step(*args)
jax.block_until_ready(out)
steps, d = 20, tempfile.mkdtemp()
jax.profiler.start_trace(d)
for _ in range(steps):
    out = step(*args)
jax.block_until_ready(out)
jax.profiler.stop_trace()
pd = ProfileData.from_serialized_xspace(open(glob.glob(d + "/**/*.xplane.pb", recursive=True)[0], "rb").read())
tot, cnt, lo, hi = defaultdict(float), defaultdict(int), None, None
for plane in pd.planes:
    if not plane.name.startswith("/device:GPU"):
        continue
    for line in plane.lines:
        for ev in line.events:
            if ev.duration_ns <= 0:
                continue
            tot[ev.name] += ev.duration_ns / 1e3 / steps
            cnt[ev.name] += 1
            lo = ev.start_ns if lo is None else min(lo, ev.start_ns)
            hi = ev.end_ns if hi is None else max(hi, ev.end_ns)
    print("plane", plane.name, [ln.name for ln in plane.lines])
for name in sorted(tot, key=lambda n: -tot[n]):
    print("%8.2f us/step  x%-4d %s" % (tot[name], cnt[name] / steps, name[:150]))
if lo is not None:
    print("GPU span per step %.2f us; kernel time per step %.2f us" % ((hi - lo) / 1e3 / steps, sum(tot.values())))
print(jax.jit(step).lower(*args).compile().as_text()[:30000])
