# Level v0 (naive): fresh heap nodes every iteration, linked by pointers; values are
# recomputed on demand and backward recurses through the graph. The nodes come from
# malloc (node_new) and are freed at the end of the iteration.

from core.ops import NULL
from std.ffi import external_call
from core.ops import Sums
from core.rng import sample
from softplus.nodes import LEAF, SUM, PROD, SOFTPLUS, NodePtr, node_new, value, backward


def run_v0(seed: UInt64, n: Int) -> Sums:
    var sum_f = 0.0
    var sum_dx = 0.0
    var sum_dy = 0.0
    for i in range(n):
        var xv, yv = sample(seed, i)
        var x = node_new(LEAF, xv, NodePtr(unsafe_from_address=NULL), NodePtr(unsafe_from_address=NULL))
        var y = node_new(LEAF, yv, NodePtr(unsafe_from_address=NULL), NodePtr(unsafe_from_address=NULL))
        var s = node_new(SUM, 0.0, x, y)
        var p = node_new(PROD, 0.0, s, x)
        var f = node_new(SOFTPLUS, 0.0, p, NodePtr(unsafe_from_address=NULL))
        backward(f, 1.0)
        sum_f += value(f)
        sum_dx += x[].grad
        sum_dy += y[].grad
        external_call["free", NoneType](f)
        external_call["free", NoneType](p)
        external_call["free", NoneType](s)
        external_call["free", NoneType](y)
        external_call["free", NoneType](x)
    return Sums(sum_f, sum_dx, sum_dy)
