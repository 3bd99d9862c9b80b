"""PyTorch peer: a real autograd, torch.autograd over float64 CPU tensors, one thread.

Softplus workload (contract §2), level v3: each chunk of samples becomes two float64
tensors that require gradients; f is computed with torch's element-wise ops (the autograd
records them), f.sum().backward() walks the recorded graph in reverse, and x.grad, y.grad
hold df/dx and df/dy for every sample. This is what a user would write instead of this
project's batched tape.

Graph workload (docs/contract-graph.md), two levels:
- v0 eager: one sample at a time, its graph of M ops rebuilt from 0-d tensors for every
  sample, as a dynamic autograd is used; torch.autograd.grad gives the gradient of the
  loss at every node (the loss is the sum of every node).
- v3 batched: the same graph over float64 tensors holding a chunk of samples each (one
  lane per sample), so each op is one tensor op for the whole chunk.
The ops are torch's own: softplus (torch.nn.functional.softplus), +, *, torch.softmax.

One thread, like the compiled v0-v3 (torch.set_num_threads(1)); there is no v4: on a
small, busy machine torch's spinning worker threads made it many times slower than one
thread, which would measure the machine, not the autograd. The inputs come from the
shared NumPy splitmix64 stream (torch's uint64 tensors lack the shifts and multiplies it
needs) and are wrapped without copying.

    python peers/torch_peer.py [--level v3|all] [--iters N] [--seed S] [--json]
    python peers/torch_peer.py --workload graph [--level v0|v3|all] [--ops M] [--iters N] [--json]
"""
from __future__ import annotations

from common import CHUNK, GRAPH_INPUTS, GraphSums, Peer, Sums, graph_inputs, main, samples

# Graph v3: samples (lanes) per chunk. More lanes spread torch's per-op overhead over more
# samples, until the time per op and sample stops falling (the registry times it at 1,024,
# Impl.batch_iters). A chunk's node values are held to 2^24 doubles (128 MiB), which bounds
# its memory with their gradients and saved tensors.
GRAPH_LANE_BUDGET = 1 << 24
GRAPH_MAX_LANES = 4096


# --- softplus workload -----------------------------------------------------------------

def f(x, y):
    """f(x, y) = softplus((x + y) * x), in contract §2's two-branch form.

    Each branch sees only inputs for which it is finite (the double-where idiom), so the
    backward pass never multiplies a zero by an overflowed exp.
    """
    import torch

    s = x + y
    p = s * x
    pos = p > 0
    zero = torch.zeros((), dtype=p.dtype)
    pp = torch.where(pos, p, zero)
    pn = torch.where(pos, zero, p)
    return torch.where(pos, p + torch.log1p(torch.exp(-pp)), torch.log1p(torch.exp(pn)))


def prepare(level: str, seed: int, n: int, threads: int) -> None:
    """Before the clock starts: import torch, one thread, and one warm-up pass on one
    sample (torch starts its autograd engine on the first backward)."""
    import torch

    torch.set_num_threads(threads)
    run(level, seed, 1, threads)


def run(level: str, seed: int, n: int, threads: int) -> Sums:
    """Sums over n samples: per chunk, forward, f.sum().backward(), gradient sums."""
    import torch

    sf = sdx = sdy = 0.0
    for start in range(0, n, CHUNK):
        xs, ys = samples(seed, start, min(CHUNK, n - start))
        x = torch.from_numpy(xs).requires_grad_()
        y = torch.from_numpy(ys).requires_grad_()
        total = f(x, y).sum()
        total.backward()
        sf += total.item()
        sdx += x.grad.sum().item()
        sdy += y.grad.sum().item()
    return Sums(sf, sdx, sdy)


def evaluate(x: float, y: float) -> tuple[float, float, float]:
    """f and its gradient at one point through torch.autograd (0-d float64 tensors)."""
    import torch

    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    yt = torch.tensor(y, dtype=torch.float64, requires_grad=True)
    fv = f(xt, yt)
    fv.backward()
    return fv.item(), xt.grad.item(), yt.grad.item()


# --- graph workload --------------------------------------------------------------------

def record_graph(torch, nodes: list, m: int) -> None:
    """The M ops of G2 appended to `nodes` (tensors, the inputs first), in order: op k has
    kind k mod 4 and reads nodes at fixed offsets below n, the nodes so far."""
    softplus = torch.nn.functional.softplus
    for k in range(m):
        n = len(nodes)
        kind = k % 4
        if kind == 0:
            nodes.append(softplus(nodes[n - 10]))
        elif kind == 1:
            nodes.append(((nodes[n - 30] + nodes[n - 25]) + nodes[n - 20]) + nodes[n - 15])
        elif kind == 2:
            nodes.append(nodes[n - 20] * nodes[n - 10])
        else:
            nodes.extend(torch.softmax(torch.stack(nodes[n - 4:n]), dim=0).unbind(0))


def graph_pass(torch, inputs, m: int, weights) -> tuple[float, float, float]:
    """Forward and backward of the graph over `inputs` (100 rows: one sample's 0-d values,
    or a chunk's lanes); returns the loss, grad_in and grad_all summed over the lanes."""
    x = torch.from_numpy(inputs).requires_grad_()
    nodes = list(x.unbind(0))
    record_graph(torch, nodes, m)
    loss = torch.stack(nodes).sum()                       # every node, every lane
    grads = torch.stack(torch.autograd.grad(loss, nodes))  # d loss / d node, every node
    grad_in = (weights * grads[:GRAPH_INPUTS]).sum()
    return loss.item(), grad_in.item(), grads.sum().item()


def graph_lanes(m: int, n: int) -> int:
    """Samples per v3 chunk."""
    nodes = GRAPH_INPUTS + m + 3 * (m // 4)
    return max(1, min(GRAPH_MAX_LANES, GRAPH_LANE_BUDGET // nodes, n))


def prepare_graph(level: str, seed: int, m: int, n: int, threads: int) -> None:
    """Before the clock starts: import torch, one thread, one warm-up sample."""
    import torch

    torch.set_num_threads(threads)
    run_graph(level, seed, min(m, 100), 1, threads)
    return None


def run_graph(level: str, seed: int, m: int, n: int, threads: int) -> GraphSums:
    """v0: one sample per pass, its graph rebuilt each time; v3: a chunk of samples per pass.
    Per-pass sums are added in sample (chunk) order."""
    import torch

    lanes = 1 if level == "v0" else graph_lanes(m, n)
    weights = torch.arange(1, GRAPH_INPUTS + 1, dtype=torch.float64)
    if level == "v3":
        weights = weights[:, None]
    sl = sgi = sga = 0.0
    for start in range(0, n, lanes):
        count = min(lanes, n - start)
        block = graph_inputs(seed, start, count)           # (100, count)
        passes = [block[:, j] for j in range(count)] if level == "v0" else [block]
        for inputs in passes:
            loss, grad_in, grad_all = graph_pass(torch, inputs, m, weights)
            sl += loss
            sgi += grad_in
            sga += grad_all
    return GraphSums(sl, sgi, sga)


PEER = Peer(
    impl="torch", library="torch", run=run, evaluate=evaluate, prepare=prepare,
    run_graph=run_graph, prepare_graph=prepare_graph,
    levels={"softplus": {"v3": "batched"},
            "graph": {"v0": "eager: one sample at a time, its graph rebuilt every sample",
                      "v3": "batched: the graph over tensors of many samples at once"}},
    description="""PyTorch peer: torch.autograd (reverse mode) over float64 CPU tensors, one thread.
softplus: f(x, y) = softplus((x + y) * x) over batched tensors (v3).
graph: M ops of torch's softplus, +, *, softmax; v0 is eager (0-d tensors, the graph
rebuilt for every sample), v3 the same graph over tensors of many samples at once.""")

if __name__ == "__main__":
    main(PEER)
