"""PyTorch peer: a real autograd, torch.autograd over batched float64 tensors, on the CPU.

Each chunk of samples becomes two float64 tensors that require gradients; f is computed
with torch's element-wise ops (the autograd records them), f.sum().backward() walks the
recorded graph in reverse, and x.grad, y.grad hold df/dx and df/dy for every sample.
This is what a user would write instead of this project's batched tape, so it reports
level v3, on one thread like the compiled v3 levels (torch.set_num_threads(1); there is
no v4: on a small, busy machine torch's spinning worker threads made it many times
slower than one thread, which would measure the machine, not the autograd). The inputs come from the shared NumPy splitmix64 stream (torch's uint64 tensors
lack the shifts and multiplies it needs) and are wrapped without copying.

    python peers/torch_peer.py [--level v3|all] [--iters N] [--seed S] [--json]
"""
from __future__ import annotations

from common import CHUNK, Peer, Sums, main, samples


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


PEER = Peer(
    impl="torch", library="torch", levels=["v3"], run=run, evaluate=evaluate, prepare=prepare,
    description="""PyTorch peer: f(x, y) = softplus((x + y) * x) through torch.autograd (reverse mode) over
batched float64 CPU tensors, one thread (v3).""")

if __name__ == "__main__":
    main(PEER)
