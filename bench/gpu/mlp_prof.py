"""mlp_prof.py -- JAX's jitted MLP SGD step (peers.py's "mlp" workload) run 300 times at
batch argv[1], for a profiler (tools/gpu_session.sh's jaxprof phase runs it under nsys)."""
import sys
import jax, jax.numpy as jnp
import numpy as np

batch = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
rand = lambda shape, seed: np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 0.05


def loss(p, x, y):
    h = jax.nn.relu(x @ p[0] + p[1])
    logp = jax.nn.log_softmax(h @ p[2] + p[3], axis=-1)
    return -jnp.mean(jnp.sum(logp * y, axis=1))


@jax.jit
def step(p, x, y):
    l, g = jax.value_and_grad(loss)(p, x, y)
    return [a - 0.01 * b for a, b in zip(p, g)], l


p = [jnp.asarray(rand((784, 512), 6)), jnp.zeros(512), jnp.asarray(rand((512, 10), 7)), jnp.zeros(10)]
x = jnp.asarray(rand((batch, 784), 8))
y = jax.nn.one_hot(jnp.arange(batch) % 10, 10)
for _ in range(300):
    out = step(p, x, y)
jax.block_until_ready(out)
print(jax.jit(step).lower(p, x, y).compile().as_text()[:20000])
