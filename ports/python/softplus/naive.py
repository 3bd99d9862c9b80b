# Level v0 (naive): fresh heap nodes every iteration, linked by references (freed by
# reference counting when the next iteration rebinds the names); values are recomputed
# on demand and backward recurses through the graph.
from core.rng import sample
from core.ops import Sums
from .nodes import Node, LEAF, SUM, PROD, SOFTPLUS


def run_v0(seed, n):
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        x = Node(LEAF, xv, None, None)
        y = Node(LEAF, yv, None, None)
        s = Node(SUM, 0.0, x, y)
        p = Node(PROD, 0.0, s, x)
        f = Node(SOFTPLUS, 0.0, p, None)
        f.backward(1.0)
        sum_f += f.value()
        sum_dx += x.grad
        sum_dy += y.grad
    return Sums(sum_f, sum_dx, sum_dy)
