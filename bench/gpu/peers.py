"""peers.py -- JAX's and PyTorch's side of bench/gpu (the same workloads as
bench_gpu.c, timed the same way: the median of 7 loops of `reps` calls, each loop ended
by a wait, divided by reps). Prints "peer name value unit" lines; also the
device-to-device copy bandwidth (PyTorch, bytes read + written) that the chain is
measured against."""
import os
import sys
import time

import numpy as np

only = sys.argv[1] if len(sys.argv) > 1 else ""


def want(name):
    return not only or any(o in name for o in only.split(","))


def med(fn, reps, sync):
    fn()
    sync()
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(reps):
            out = fn()
        sync(out)
        ts.append((time.perf_counter() - t0) / reps)
    return sorted(ts)[3]


def rand(shape, seed):
    return (np.random.default_rng(seed).random(shape, dtype=np.float32) - 0.5)


def run_torch():
    import torch
    dev = "cuda"
    print("torch_gpu", torch.cuda.get_device_name(0).replace(" ", "_"), flush=True)

    def sync(*_):
        torch.cuda.synchronize()

    if want("copy chain"):
        n = 1 << 28
        x = torch.from_numpy(rand(n, 3)).to(dev)
        y = torch.empty_like(x)
        t = med(lambda: y.copy_(x), 20, sync)
        print("torch copy_2^28 %.3f TB/s" % (8.0 * n / t / 1e12), flush=True)
    if want("matmul"):
        for name, dt, tf32 in [("matmul_8192_bf16", torch.bfloat16, False), ("matmul_8192_tf32", torch.float32, True),
                               ("matmul_8192_f32", torch.float32, False)]:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            n = 8192
            a = torch.from_numpy(rand((n, n), 1)).to(dev, dt)
            b = torch.from_numpy(rand((n, n), 2)).to(dev, dt)
            t = med(lambda: a @ b, 20 if dt == torch.bfloat16 else 5, sync)
            print("torch %s %.1f TFLOP/s" % (name, 2.0 * n ** 3 / t / 1e12), flush=True)
        torch.backends.cuda.matmul.allow_tf32 = False
    if want("chain"):
        n = 1 << 28
        x = torch.from_numpy(rand(n, 3)).to(dev)

        def chain(x):
            return torch.tanh(1.5 * x + 0.25) * torch.exp(-x * x) + torch.sqrt(torch.abs(x) + 1) - x / 3

        try:
            c = torch.compile(chain)
            t = med(lambda: c(x), 10, sync)
            print("torch chain_2^28 %.3f TB/s" % (8.0 * n / t / 1e12), flush=True)
        except Exception as e:  # noqa: BLE001 -- report and go on
            print("torch chain_2^28 failed:", repr(e)[:200], flush=True)
    if want("transpose"):
        x = torch.from_numpy(rand((8192, 8192), 7)).to(dev)
        y = torch.empty_like(x)
        t = med(lambda: torch.mul(x.t(), 2, out=y), 20, sync)
        print("torch transpose_8192 %.3f TB/s" % (8.0 * 8192 * 8192 / t / 1e12), flush=True)
    if want("sort"):
        n = 1 << 27
        x = torch.from_numpy(rand(n, 6)).to(dev)
        t = med(lambda: torch.sort(x, stable=True)[0], 5, sync)
        print("torch sort_2^27 %.4f ms" % (t * 1e3), flush=True)


def jax_mlp(batch):
    """The MLP 784-512-10 SGD step (bench_gpu.c's mlp_step) jitted in JAX, and its inputs
    at `batch`: (step, (params, x, one-hot y))."""
    import jax
    import jax.numpy as jnp

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
    return step, (p, x, y)


def jax_fm(name):
    """The trainer's step (examples/fashion_mnist.c, as bench/run.py) for model `name`
    ("mlp" or "cnn") jitted in JAX: Adam on a cosine-decayed learning rate, batch 128.
    Returns (step, (params, opt_state, x, y)); step returns (params, opt_state, loss)."""
    import jax
    import jax.numpy as jnp
    import optax
    B = 128
    x = jnp.asarray(rand((B, 784), 11)); y = jnp.arange(B) % 10
    def dense_init(k, i, o):
        return [jax.random.normal(k, (i, o)) * np.sqrt(2.0 / i), jnp.zeros(o)]
    keys = jax.random.split(jax.random.key(0), 8)
    def mlp_fwd(p, x):
        h = jax.nn.relu(x @ p[0] + p[1]); h = jax.nn.relu(h @ p[2] + p[3]); return h @ p[4] + p[5]
    def conv_block(x, w, b):
        c = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        r = jax.nn.relu(c + b)
        return jax.lax.reduce_window(r, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    def cnn_fwd(p, x):
        h = conv_block(conv_block(x.reshape(-1, 28, 28, 1), p[0], p[1]), p[2], p[3]).reshape(x.shape[0], -1)
        h = jax.nn.relu(h @ p[4] + p[5]); return h @ p[6] + p[7]
    if name == "mlp":
        fwd = mlp_fwd
        params = dense_init(keys[0], 784, 512) + dense_init(keys[1], 512, 256) + dense_init(keys[2], 256, 10)
    else:
        fwd = cnn_fwd
        params = [jax.random.normal(keys[3], (3, 3, 1, 32)) * np.sqrt(2 / 9), jnp.zeros(32),
                  jax.random.normal(keys[4], (3, 3, 32, 64)) * np.sqrt(2 / 288), jnp.zeros(64)] + \
                 dense_init(keys[5], 3136, 128) + dense_init(keys[6], 128, 10)
    opt = optax.adam(optax.cosine_decay_schedule(1e-3, 10000))
    def loss(p, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(fwd(p, x), y).mean()
    @jax.jit
    def step(p, s, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, l
    return step, (params, opt.init(params), x, y)


def run_jax():
    import jax
    import jax.numpy as jnp
    print("jax_devices", jax.devices()[0].device_kind.replace(" ", "_"), flush=True)

    def sync(out=None):
        if out is not None:
            jax.block_until_ready(out)

    if want("matmul"):
        for name, dt, prec in [("matmul_8192_bf16", jnp.bfloat16, "default"), ("matmul_8192_tf32", jnp.float32, "default"),
                               ("matmul_8192_f32", jnp.float32, "highest")]:
            n = 8192
            a = jnp.asarray(rand((n, n), 1), dtype=dt)
            b = jnp.asarray(rand((n, n), 2), dtype=dt)
            f = jax.jit(lambda a, b, prec=prec: jnp.matmul(a, b, precision=prec))
            t = med(lambda: f(a, b), 20 if dt == jnp.bfloat16 else 5, sync)
            print("jax %s %.1f TFLOP/s" % (name, 2.0 * n ** 3 / t / 1e12), flush=True)
    if want("chain"):
        n = 1 << 28
        x = jnp.asarray(rand(n, 3))
        f = jax.jit(lambda x: jnp.tanh(1.5 * x + 0.25) * jnp.exp(-x * x) + jnp.sqrt(jnp.abs(x) + 1) - x / 3)
        t = med(lambda: f(x), 10, sync)
        print("jax chain_2^28 %.3f TB/s" % (8.0 * n / t / 1e12), flush=True)
    if want("softmax"):
        x = jnp.asarray(rand((4096, 4096), 4))
        f = jax.jit(lambda x: jax.nn.softmax(x, axis=-1))
        print("jax softmax_4096x4096 %.4f ms" % (med(lambda: f(x), 20, sync) * 1e3), flush=True)
    if want("transpose"):
        x = jnp.asarray(rand((8192, 8192), 7))
        f = jax.jit(lambda x: x.T * 2)
        print("jax transpose_8192 %.3f TB/s" % (8.0 * 8192 * 8192 / med(lambda: f(x), 20, sync) / 1e12), flush=True)
    if want("sum argmax"):
        x = jnp.asarray(rand(1 << 28, 5))
        fs, fa = jax.jit(jnp.sum), jax.jit(jnp.argmax)
        print("jax sum_2^28 %.4f ms" % (med(lambda: fs(x), 10, sync) * 1e3), flush=True)
        print("jax argmax_2^28 %.4f ms" % (med(lambda: fa(x), 10, sync) * 1e3), flush=True)
    if want("sort"):
        x = jnp.asarray(rand(1 << 27, 6))
        f = jax.jit(jnp.sort)
        print("jax sort_2^27 %.4f ms" % (med(lambda: f(x), 5, sync) * 1e3), flush=True)
    if want("mlp"):
        for batch in (128, 4096):
            step, (p, x, y) = jax_mlp(batch)
            t = med(lambda: step(p, x, y), 100, sync)
            print("jax mlp_step_b%d %.4f ms" % (batch, t * 1e3), flush=True)
    if want("fm"):
        # the trainer's steps (jax_fm); the least time of 50 steps, each waited for, as
        # jaxc_fashion_mnist --bench times them
        for name in ("mlp", "cnn"):
            step, (params, st, x, y) = jax_fm(name)
            jax.block_until_ready(step(params, st, x, y))
            ts = []
            for _ in range(50):
                t0 = time.perf_counter()
                params, st, l = step(params, st, x, y)
                jax.block_until_ready(l)
                ts.append(time.perf_counter() - t0)
            print("jax fm_%s_step %.4f ms" % (name, min(ts) * 1e3), flush=True)
    if want("eager"):
        a, b = jnp.asarray(rand(1000, 9)), jnp.asarray(rand(1000, 10))
        for _ in range(100):
            a + b
        t0 = time.perf_counter()
        for _ in range(20000):
            a + b
        print("jax eager_add_1000 %.2f us" % ((time.perf_counter() - t0) / 20000 * 1e6), flush=True)


if __name__ == "__main__":
    which = os.environ.get("PEERS", "torch jax")
    if "torch" in which:
        run_torch()
    if "jax" in which:
        run_jax()
