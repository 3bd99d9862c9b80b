"""JAX peer: a real autograd, jit(vmap(value_and_grad(f))) over chunks, in float64.

f is written once in jax.numpy as contract §2 defines it; jax.value_and_grad derives the
backward pass (JAX records f's primitives and transposes them: reverse mode), jax.vmap
batches it over a chunk of samples and jax.jit compiles the whole chunk, input stream
included, with XLA. This is what a user would reach for instead of this project's
batched tape, so it reports level v3 (one thread: the process is pinned to one CPU before
JAX starts, as the compiled v3 levels run on one thread).

The first call of a jitted function compiles it: `prepare` makes one warm-up call on a
chunk of the real shape before the clock starts, so the time is the iteration loop only.

    python peers/jax_peer.py [--level v3|all] [--iters N] [--seed S] [--json]
"""
from __future__ import annotations

import os
from functools import lru_cache

from common import CHUNK, GAMMA, MIX1, MIX2, Peer, Sums, main

# XLA fuses a chunk's element-wise work into one loop, so larger chunks than the
# array peers' cost no cache misses and save per-call dispatch.
JAX_CHUNK = CHUNK * 4


def jax_module():
    """jax and jax.numpy with 64-bit types enabled (the contract is float64 and uint64)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def f(x, y):
    """f(x, y) = softplus((x + y) * x), in contract §2's two-branch form.

    Each branch sees only inputs for which it is finite (the double-where idiom), so the
    derived gradient never multiplies a zero by an overflowed exp.
    """
    _, jnp = jax_module()
    s = x + y
    p = s * x
    pos = p > 0
    pp = jnp.where(pos, p, 0.0)
    pn = jnp.where(pos, 0.0, p)
    return jnp.where(pos, p + jnp.log1p(jnp.exp(-pp)), jnp.log1p(jnp.exp(pn)))


@lru_cache(maxsize=None)
def chunk_sums(size: int):
    """A jitted function (seed, start, count) -> the three sums over one chunk of `size` lanes.

    Lanes at or past `count` are masked out, so one compiled shape serves the last,
    shorter chunk too (no compilation inside the timed loop).
    """
    jax, jnp = jax_module()
    value_and_grads = jax.vmap(jax.value_and_grad(f, argnums=(0, 1)))

    def coordinate(seed, k):
        z = seed + k * jnp.uint64(GAMMA)
        z = (z ^ (z >> jnp.uint64(30))) * jnp.uint64(MIX1)
        z = (z ^ (z >> jnp.uint64(27))) * jnp.uint64(MIX2)
        z = z ^ (z >> jnp.uint64(31))
        return (z >> jnp.uint64(11)).astype(jnp.float64) * 2.0**-53 * 2.0 - 1.0

    def sums(seed, start, count):
        lane = jnp.arange(size, dtype=jnp.uint64)
        two_i = (start + lane) * jnp.uint64(2)
        x = coordinate(seed, two_i + jnp.uint64(1))
        y = coordinate(seed, two_i + jnp.uint64(2))
        fv, (dx, dy) = value_and_grads(x, y)
        live = lane < count
        return (jnp.sum(jnp.where(live, fv, 0.0)), jnp.sum(jnp.where(live, dx, 0.0)),
                jnp.sum(jnp.where(live, dy, 0.0)))

    return jax.jit(sums)


def chunking(n: int) -> tuple[int, int]:
    """(chunks, lanes per chunk): equal chunks of at most JAX_CHUNK lanes covering n."""
    chunks = -(-n // JAX_CHUNK)
    return chunks, -(-n // chunks)


def args(seed: int, start: int, count: int):
    """The jitted function's arguments as uint64 scalars (values, not shapes: no recompiles)."""
    _, jnp = jax_module()
    return jnp.uint64(seed), jnp.uint64(start), jnp.uint64(count)


def prepare(level: str, seed: int, n: int, threads: int) -> None:
    """Pin to one CPU, import JAX and compile: one warm-up call of the real chunk shape."""
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus[:threads])   # before JAX starts its thread pools
    _, size = chunking(n)
    for v in chunk_sums(size)(*args(seed, 0, min(size, n))):
        v.block_until_ready()


def run(level: str, seed: int, n: int, threads: int) -> Sums:
    """Sums over n samples: one jitted call per chunk, chunk sums added in order."""
    chunks, size = chunking(n)
    fn = chunk_sums(size)
    sf = sdx = sdy = 0.0
    for c in range(chunks):
        start = c * size
        a, b, d = fn(*args(seed, start, min(size, n - start)))
        sf += float(a)
        sdx += float(b)
        sdy += float(d)
    return Sums(sf, sdx, sdy)


def evaluate(x: float, y: float) -> tuple[float, float, float]:
    """f and its gradient at one point through jax.value_and_grad (not jitted)."""
    jax, jnp = jax_module()
    fv, (dx, dy) = jax.value_and_grad(f, argnums=(0, 1))(jnp.float64(x), jnp.float64(y))
    return float(fv), float(dx), float(dy)


PEER = Peer(
    impl="jax", library="jax", levels=["v3"], run=run, evaluate=evaluate, prepare=prepare,
    description="""JAX peer: f(x, y) = softplus((x + y) * x) through jax.value_and_grad (reverse-mode
autograd), batched with jax.vmap and compiled with jax.jit, float64, one thread (v3).
The timed loop excludes one warm-up call that compiles the chunk function.""")

if __name__ == "__main__":
    main(PEER)
