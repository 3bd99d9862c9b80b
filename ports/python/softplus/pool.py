# Level v1 (pool): the v0 graph, but its nodes come from a fixed pool allocated once
# and relinked every iteration, so the loop creates no nodes. Values are still
# recomputed on demand (the seed's v1).
from core.rng import sample
from core.ops import Sums
from .nodes import Node, LEAF, SUM, PROD, SOFTPLUS

POOL_SIZE = 5  # x, y, s, p, f


class Pool:
    def __init__(self, size):
        self.nodes = [Node(LEAF, 0.0, None, None) for _ in range(size)]
        self.used = 0

    def reset(self):
        self.used = 0

    def take(self, kind, leaf_val, a, b):
        """The next free node, remade as (kind, leaf_val, a, b)."""
        node = self.nodes[self.used]
        self.used += 1
        node.set(kind, leaf_val, a, b)
        return node


def run_v1(seed, n):
    pool = Pool(POOL_SIZE)
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        pool.reset()
        x = pool.take(LEAF, xv, None, None)
        y = pool.take(LEAF, yv, None, None)
        s = pool.take(SUM, 0.0, x, y)
        p = pool.take(PROD, 0.0, s, x)
        f = pool.take(SOFTPLUS, 0.0, p, None)
        f.backward(1.0)
        sum_f += f.value()
        sum_dx += x.grad
        sum_dy += y.grad
    return Sums(sum_f, sum_dx, sum_dy)
