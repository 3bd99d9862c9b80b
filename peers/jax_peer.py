"""JAX peer: a real autograd, jit(vmap(value_and_grad(...))) over chunks, in float64.

Softplus workload (contract §2), level v3: f is written once in jax.numpy as contract §2
defines it; jax.value_and_grad derives the backward pass (JAX records f's primitives and
transposes them: reverse mode), jax.vmap batches it over a chunk of samples and jax.jit
compiles the whole chunk, input stream included, with XLA.

Graph workload (docs/contract-graph.md), level v3: the whole graph of M ops (jax.nn's
softplus and softmax, +, *) is one function of a sample's 100 inputs, differentiated,
batched and compiled the same way: jit(vmap(value_and_grad(loss))). JAX has no
retain_grad: the gradient at every node (the loss is the sum of every node) is the
gradient with respect to a zero added to each op's output, a second argument.

This is what a user would reach for instead of this project's batched tape, so it reports
level v3 (one thread: the process is pinned to one CPU before JAX starts, as the compiled
v3 levels run on one thread).

The first call of a jitted function compiles it: `prepare` compiles the chunk function for
the real shape before the clock starts, so the time is the iteration loop only; the graph
workload reports that compilation's time beside the result (`compile_seconds`). XLA
compiles the unrolled graph in time and memory that grow faster than M^2
(docs/findings/peers.md), so the contract's 10,000 ops are out of reach.

    python peers/jax_peer.py [--level v3|all] [--iters N] [--seed S] [--json]
    python peers/jax_peer.py --workload graph [--level v3|all] [--ops M] [--iters N] [--json]
"""
from __future__ import annotations

import os
import time
from functools import lru_cache

from common import CHUNK, GAMMA, GRAPH_INPUTS, MIX1, MIX2, GraphSums, Peer, Sums, main

# XLA fuses a chunk's element-wise work into one loop, so larger chunks than the
# array peers' cost no cache misses and save per-call dispatch.
JAX_CHUNK = CHUNK * 4
# Graph: samples per compiled chunk, a chunk's node values held to 2^22 doubles (32 MiB).
GRAPH_LANE_BUDGET = 1 << 22
GRAPH_MAX_LANES = 4096


def jax_module():
    """jax and jax.numpy with 64-bit types enabled (the contract is float64 and uint64)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def one_thread(threads: int) -> None:
    """Pin the process to `threads` CPUs, before JAX starts its thread pools."""
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus[:threads])


def coordinate(jnp, seed, k):
    """2*unit(draw(k)) - 1 for an array of stream positions k (uint64 arithmetic wraps)."""
    z = seed + k * jnp.uint64(GAMMA)
    z = (z ^ (z >> jnp.uint64(30))) * jnp.uint64(MIX1)
    z = (z ^ (z >> jnp.uint64(27))) * jnp.uint64(MIX2)
    z = z ^ (z >> jnp.uint64(31))
    return (z >> jnp.uint64(11)).astype(jnp.float64) * 2.0**-53 * 2.0 - 1.0


# --- softplus workload -----------------------------------------------------------------


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

    def sums(seed, start, count):
        lane = jnp.arange(size, dtype=jnp.uint64)
        two_i = (start + lane) * jnp.uint64(2)
        x = coordinate(jnp, seed, two_i + jnp.uint64(1))
        y = coordinate(jnp, seed, two_i + jnp.uint64(2))
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
    one_thread(threads)
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


# --- graph workload --------------------------------------------------------------------

def graph_loss(m: int):
    """loss(x, zeros) of one sample (contract-graph.md G2-G3): x its 100 inputs, zeros one
    0.0 per op output, added to it so that d loss / d zeros is the gradient at that node."""
    jax, jnp = jax_module()

    def loss(x, zeros):
        nodes = list(jnp.unstack(x))
        zero = jnp.unstack(zeros)
        for k in range(m):
            n = len(nodes)
            kind = k % 4
            if kind == 0:
                outs = [jax.nn.softplus(nodes[n - 10])]
            elif kind == 1:
                outs = [((nodes[n - 30] + nodes[n - 25]) + nodes[n - 20]) + nodes[n - 15]]
            elif kind == 2:
                outs = [nodes[n - 20] * nodes[n - 10]]
            else:
                outs = jnp.unstack(jax.nn.softmax(jnp.stack(nodes[n - 4:n])))
            for out in outs:
                nodes.append(out + zero[len(nodes) - GRAPH_INPUTS])
        return jnp.sum(jnp.stack(nodes))         # every node

    return loss


def graph_outputs(m: int) -> int:
    """Op outputs of an M-op graph: one per op, three more per SOFTMAX4."""
    return m + 3 * (m // 4)


def graph_lanes(m: int, n: int) -> int:
    """Samples per compiled chunk: a chunk's node values held to GRAPH_LANE_BUDGET doubles."""
    return max(1, min(GRAPH_MAX_LANES, GRAPH_LANE_BUDGET // (GRAPH_INPUTS + graph_outputs(m)), n))


@lru_cache(maxsize=None)
def graph_chunk_sums(m: int, size: int):
    """(compiled function, seconds it took): (seed, start, count) -> the three sums over one
    chunk of `size` samples, lanes at or past `count` masked out (one shape for every chunk).
    The seconds are tracing, differentiation, batching and XLA's compilation together."""
    jax, jnp = jax_module()
    value_and_grads = jax.vmap(jax.value_and_grad(graph_loss(m), argnums=(0, 1)), in_axes=(0, None))
    weights = jnp.arange(1, GRAPH_INPUTS + 1, dtype=jnp.float64)

    def sums(seed, start, count):
        lane = jnp.arange(size, dtype=jnp.uint64)
        i = jnp.arange(1, GRAPH_INPUTS + 1, dtype=jnp.uint64)
        x = coordinate(jnp, seed, (start + lane)[:, None] * jnp.uint64(GRAPH_INPUTS) + i[None, :])
        loss, (gx, gz) = value_and_grads(x, jnp.zeros(graph_outputs(m), dtype=jnp.float64))
        live = lane < count
        grad_in = gx @ weights
        grad_all = jnp.sum(gx, axis=1) + jnp.sum(gz, axis=1)
        return (jnp.sum(jnp.where(live, loss, 0.0)), jnp.sum(jnp.where(live, grad_in, 0.0)),
                jnp.sum(jnp.where(live, grad_all, 0.0)))

    start = time.perf_counter()
    compiled = jax.jit(sums).lower(*args(0, 0, size)).compile()
    return compiled, time.perf_counter() - start


def prepare_graph(level: str, seed: int, m: int, n: int, threads: int) -> float:
    """Pin to one CPU, import JAX, compile the chunk function and run it once; returns the
    compilation's seconds."""
    one_thread(threads)
    size = graph_lanes(m, n)
    fn, seconds = graph_chunk_sums(m, size)
    for v in fn(*args(seed, 0, min(size, n))):
        v.block_until_ready()
    return seconds


def run_graph(level: str, seed: int, m: int, n: int, threads: int) -> GraphSums:
    """Sums over n samples: one compiled call per chunk, chunk sums added in order."""
    size = graph_lanes(m, n)
    fn, _ = graph_chunk_sums(m, size)
    sl = sgi = sga = 0.0
    for start in range(0, n, size):
        a, b, c = fn(*args(seed, start, min(size, n - start)))
        sl += float(a)
        sgi += float(b)
        sga += float(c)
    return GraphSums(sl, sgi, sga)


PEER = Peer(
    impl="jax", library="jax", run=run, evaluate=evaluate, prepare=prepare,
    run_graph=run_graph, prepare_graph=prepare_graph,
    levels={"softplus": {"v3": "jit(vmap(value_and_grad(f)))"},
            "graph": {"v3": "jit(vmap(value_and_grad(loss))) of the whole graph"}},
    description="""JAX peer: jax.value_and_grad (reverse-mode autograd), batched with jax.vmap and
compiled with jax.jit, float64, one thread (v3). softplus: f(x, y) = softplus((x + y) * x);
graph: M ops of jax.nn.softplus, +, *, jax.nn.softmax. The timed loop excludes the
compilation; for the graph its time is printed beside the result (compile_seconds).
Compiling the graph takes time and memory growing faster than M^2 (docs/findings/peers.md):
the default 10000 is out of reach.""")

if __name__ == "__main__":
    main(PEER)
