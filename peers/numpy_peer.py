"""NumPy peer: the contract's formulas over arrays, with hand-derived gradients.

This is a formula baseline, not an autograd: nothing is recorded and nothing walks
backwards; df/dx and df/dy are the closed forms of contract §2 written out by hand,
vectorised over chunks of samples. It is what a user who skips autograd altogether would
write in NumPy, so it reports the baseline level `fused-simd`. One thread (NumPy's
element-wise functions do not use threads).

    python peers/numpy_peer.py [--level fused-simd|all] [--iters N] [--seed S] [--json]
"""
from __future__ import annotations

from common import CHUNK, Peer, Sums, main, samples


def prepare(level: str, seed: int, n: int, threads: int) -> None:
    """Import NumPy before the clock starts (contract §5 times the iteration loop only)."""
    import numpy  # noqa: F401


def run(level: str, seed: int, n: int, threads: int) -> Sums:
    """Sums over n samples, chunk by chunk (bounded memory), in contract §2's formulas."""
    import numpy as np

    sf = sdx = sdy = 0.0
    for start in range(0, n, CHUNK):
        x, y = samples(seed, start, min(CHUNK, n - start))
        s = x + y
        p = s * x
        e = np.exp(-np.abs(p))                     # exp(-p) for p > 0, exp(p) otherwise
        f = np.maximum(p, 0.0) + np.log1p(e)       # p + log1p(e) if p > 0, else log1p(e)
        g = np.where(p >= 0, 1.0, e) / (1.0 + e)   # sigmoid(p), both branches of §2
        sf += float(f.sum())
        sdx += float((s * g + x * g).sum())
        sdy += float((x * g).sum())
    return Sums(sf, sdx, sdy)


def evaluate(x: float, y: float) -> tuple[float, float, float]:
    """f and its gradient at one point, through the same array code (one-element arrays)."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        xa, ya = np.array([x]), np.array([y])
        s = xa + ya
        p = s * xa
        e = np.exp(-np.abs(p))
        f = np.maximum(p, 0.0) + np.log1p(e)
        g = np.where(p >= 0, 1.0, e) / (1.0 + e)
        return float(f[0]), float((s * g + xa * g)[0]), float((xa * g)[0])


PEER = Peer(
    impl="numpy", library="numpy", run=run, evaluate=evaluate, prepare=prepare,
    levels={"softplus": {"fused-simd": "formula baseline, not an autograd"}},
    description="""NumPy peer: f(x, y) = softplus((x + y) * x) and its hand-derived gradient over
arrays of samples. A formula baseline (fused-simd), not an autograd: no tape.""")

if __name__ == "__main__":
    main(PEER)
