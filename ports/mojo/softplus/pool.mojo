# Level v1 (pool): the v0 graph, but its nodes come from a fixed pool allocated once
# and relinked every iteration, so the loop allocates nothing. Values are still
# recomputed on demand (the seed's v1).

from core.ops import NULL
from std.ffi import external_call
from core.ops import Sums
from core.rng import sample
from softplus.nodes import LEAF, SUM, PROD, SOFTPLUS, Node, NodePtr, node_new, value, backward

comptime POOL_SIZE = 5  # x, y, s, p, f


struct Pool(Movable):
    var nodes: NodePtr  # POOL_SIZE nodes, from malloc once
    var used: Int

    def __init__(out self):
        self.nodes = node_new(LEAF, 0.0, NodePtr(unsafe_from_address=NULL), NodePtr(unsafe_from_address=NULL), POOL_SIZE)
        self.used = 0

    def __deinit__(deinit self):
        external_call["free", NoneType](self.nodes)

    @always_inline
    def reset(mut self):
        self.used = 0

    @always_inline
    def take(mut self, kind: Int, leaf_val: Float64, a: NodePtr, b: NodePtr) -> NodePtr:
        """The next free node, remade as (kind, leaf_val, a, b)."""
        var node = self.nodes.unsafe_offset(self.used)
        self.used += 1
        node[].set(kind, leaf_val, a, b)
        return node


def run_v1(seed: UInt64, n: Int) -> Sums:
    var pool = Pool()
    var sum_f = 0.0
    var sum_dx = 0.0
    var sum_dy = 0.0
    for i in range(n):
        var xv, yv = sample(seed, i)
        pool.reset()
        var x = pool.take(LEAF, xv, NodePtr(unsafe_from_address=NULL), NodePtr(unsafe_from_address=NULL))
        var y = pool.take(LEAF, yv, NodePtr(unsafe_from_address=NULL), NodePtr(unsafe_from_address=NULL))
        var s = pool.take(SUM, 0.0, x, y)
        var p = pool.take(PROD, 0.0, s, x)
        var f = pool.take(SOFTPLUS, 0.0, p, NodePtr(unsafe_from_address=NULL))
        backward(f, 1.0)
        sum_f += value(f)
        sum_dx += x[].grad
        sum_dy += y[].grad
    return Sums(sum_f, sum_dx, sum_dy)
