"""PyTorch torch.compile peer: the graph workload per sample, compiled by TorchInductor.

Graph workload (docs/contract-graph.md), level v2: one sample's graph of M ops (torch's
softplus, +, *, softmax on 0-d float64 tensors, as the eager torch peer's v0 records it)
is one Python function of the sample's 100 inputs; torch.compile traces it once (Dynamo),
derives its backward pass (AOTAutograd) and compiles both to C++ (Inductor, CPU). Every
sample then runs the compiled forward and, through loss.backward(), the compiled backward:
the tape compiled once and replayed per sample, one thread, float64. The gradient at every
node (the loss is the sum of every node) is the gradient with respect to a zero added to
each op's output, a second input, as the JAX peer does (torch has no retain_grad for
compiled intermediates).

Compilation happens before the clock starts (`prepare_graph`) and its seconds are reported
beside the result (`compile_seconds`, contract §6). It grows with M: the registry times
this peer at `graph_ops` ops (docs/findings/peers.md), the most whose compilation fits the harness's
timeout on this project's machine; the contract's 10,000 are out of reach.

    python peers/torch_compile_peer.py --workload graph [--level v2|all] [--ops M] [--iters N] [--json]
"""
from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path

from common import GRAPH_INPUTS, GraphSums, Peer, graph_inputs, main
from torch_peer import evaluate


def graph_outputs(m: int) -> int:
    """Op outputs of an M-op graph: one per op, three more per SOFTMAX4."""
    return m + 3 * (m // 4)


def graph_loss(torch, m: int):
    """loss(x, zeros) of one sample (G2-G3): x its 100 inputs, zeros one 0.0 per op output,
    added to it so that d loss / d zeros is the gradient at that node."""
    softplus = torch.nn.functional.softplus

    def loss(x, zeros):
        nodes = list(x.unbind(0))
        zero = zeros.unbind(0)
        for k in range(m):
            n = len(nodes)
            kind = k % 4
            if kind == 0:
                outs = [softplus(nodes[n - 10])]
            elif kind == 1:
                outs = [((nodes[n - 30] + nodes[n - 25]) + nodes[n - 20]) + nodes[n - 15]]
            elif kind == 2:
                outs = [nodes[n - 20] * nodes[n - 10]]
            else:
                outs = torch.softmax(torch.stack(nodes[n - 4:n]), dim=0).unbind(0)
            for out in outs:
                nodes.append(out + zero[len(nodes) - GRAPH_INPUTS])
        return torch.stack(nodes).sum()         # every node

    return loss


@lru_cache(maxsize=None)
def compiled_loss(m: int):
    """torch.compile of one sample's loss (Inductor, the default backend), not yet compiled:
    compilation happens at its first call."""
    import torch

    return torch.compile(graph_loss(torch, m), fullgraph=True, dynamic=False)


def sample_pass(torch, fn, inputs, m: int, weights) -> tuple[float, float, float]:
    """One sample: the compiled forward, loss.backward() through the compiled backward;
    the sample's loss, grad_in and grad_all."""
    x = torch.from_numpy(inputs).requires_grad_()
    z = torch.zeros(graph_outputs(m), dtype=torch.float64, requires_grad=True)
    loss = fn(x, z)
    loss.backward()
    grad_in = (weights * x.grad).sum()
    return loss.item(), grad_in.item(), (x.grad.sum() + z.grad.sum()).item()


def prepare_graph(level: str, seed: int, m: int, n: int, threads: int) -> float:
    """Before the clock starts: import torch, one thread, compile (the first sample's call,
    forward and backward); returns the seconds that took. Inductor's on-disk cache is kept in
    the build folder (never /tmp): a later run with the same M reuses its compiled code."""
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR",
                          str(Path(__file__).resolve().parent.parent / "build" / "torchinductor"))
    import torch

    torch.set_num_threads(threads)
    start = time.perf_counter()
    run_graph(level, seed, m, 1, threads)
    return time.perf_counter() - start


def run_graph(level: str, seed: int, m: int, n: int, threads: int) -> GraphSums:
    """Sums over n samples, one compiled pass each, added in sample order."""
    import torch

    fn = compiled_loss(m)
    weights = torch.arange(1, GRAPH_INPUTS + 1, dtype=torch.float64)
    sl = sgi = sga = 0.0
    for start in range(0, n, 4096):
        block = graph_inputs(seed, start, min(4096, n - start))      # (100, count)
        for j in range(block.shape[1]):
            loss, grad_in, grad_all = sample_pass(torch, fn, block[:, j].copy(), m, weights)
            sl += loss
            sgi += grad_in
            sga += grad_all
    return GraphSums(sl, sgi, sga)


PEER = Peer(
    impl="torch-compile", library="torch", run=None, evaluate=evaluate,
    run_graph=run_graph, prepare_graph=prepare_graph,
    levels={"graph": {"v2": "torch.compile (Inductor) of one sample's graph, forward and backward"}},
    description="""PyTorch torch.compile peer: one sample's graph of M ops (torch's softplus, +, *,
softmax on 0-d float64 tensors) compiled once by torch.compile (Dynamo, AOTAutograd,
Inductor's C++ on the CPU), then run per sample with loss.backward() (v2), one thread. The
timed loop excludes the compilation, whose time is printed beside the result
(compile_seconds); it grows with M, so the benchmark runs it at fewer ops than the
others. --eval goes through eager torch.autograd, as the torch peer's does.""")

if __name__ == "__main__":
    main(PEER)
