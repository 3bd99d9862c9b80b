# The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
# level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
# scalar forward math of an op, and the per-sample checksums.

from std.ffi import external_call
from std.memory import Pointer
from std.sys import size_of
from core.ops import exp
from core.vmath import out_of_memory
from core.rng import draw, unit

# The graph workload's op kinds, defined here once for every graph level; GRAPH_ keeps them
# apart from the softplus workload's kinds, which share three names, two with other values.
comptime GRAPH_LEAF = -1  # a node no op made: an input
comptime GRAPH_SOFTPLUS = 0  # op k has kind k % 4, in this order
comptime GRAPH_SUM4 = 1
comptime GRAPH_PROD = 2
comptime GRAPH_SOFTMAX4 = 3
comptime N_INPUTS = 100


@fieldwise_init
struct GraphSums(ImplicitlyCopyable, Movable):
    """The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3)."""
    var loss: Float64
    var grad_in: Float64
    var grad_all: Float64

    @always_inline
    def __add__(self, o: GraphSums) -> GraphSums:
        return GraphSums(self.loss + o.loss, self.grad_in + o.grad_in, self.grad_all + o.grad_all)


@always_inline
def n_nodes(m: Int) -> Int:
    """Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4."""
    return N_INPUTS + m + 3 * (m // 4)


@always_inline
def graph_input(seed: UInt64, s: Int, i: Int) -> Float64:
    """Input i of sample s, in [-1, 1) (G1)."""
    return 2.0 * unit(draw(seed, N_INPUTS * s + i + 1)) - 1.0


trait GraphBuilder:
    """What record_ops needs of a level's graph: its size so far (node ids) and the four pushes."""
    def size(self) -> Int:
        ...

    def push_softplus(mut self, a: Int):
        ...

    def push_sum4(mut self, a: Int, b: Int, c: Int, d: Int):
        ...

    def push_prod(mut self, a: Int, b: Int):
        ...

    def push_softmax4(mut self, a: Int, b: Int, c: Int, d: Int):
        ...


@always_inline
def record_op[G: GraphBuilder](mut g: G, kind: Int):
    """Op of kind `kind` onto g, its inputs counted back from g's size (G2)."""
    var n = g.size()
    if kind == GRAPH_SOFTPLUS:
        g.push_softplus(n - 10)
    elif kind == GRAPH_SUM4:
        g.push_sum4(n - 30, n - 25, n - 20, n - 15)
    elif kind == GRAPH_PROD:
        g.push_prod(n - 20, n - 10)
    else:
        g.push_softmax4(n - 4, n - 3, n - 2, n - 1)


@always_inline
def record_ops[G: GraphBuilder](mut g: G, m: Int):
    """The M ops of G2, in order, onto g: any level's graph builder. Op k's kind is k % 4, so
    they go on a block of the four kinds at a time, each kind known where it is compiled, then
    the first M % 4 of one more block: no branch on the kind per op."""
    for _ in range(m // 4):
        record_op(g, GRAPH_SOFTPLUS)
        record_op(g, GRAPH_SUM4)
        record_op(g, GRAPH_PROD)
        record_op(g, GRAPH_SOFTMAX4)
    for kind in range(m % 4):
        record_op(g, kind)


@always_inline
def max2(a: Float64, b: Float64) -> Float64:
    """Python's max(a, b): b if b > a, else a."""
    return b if b > a else a


@always_inline
def softmax4(a: Float64, b: Float64, c: Float64, d: Float64) -> SIMD[DType.float64, 4]:
    """out_j = exp(in_j - max) / (((e_0 + e_1) + e_2) + e_3)."""
    var m = max2(max2(a, b), max2(c, d))
    var e0 = exp(a - m)
    var e1 = exp(b - m)
    var e2 = exp(c - m)
    var e3 = exp(d - m)
    var total = ((e0 + e1) + e2) + e3
    return SIMD[DType.float64, 4](e0 / total, e1 / total, e2 / total, e3 / total)


@always_inline
def softmax4_avg(o0: Float64, o1: Float64, o2: Float64, o3: Float64,
                 g0: Float64, g1: Float64, g2: Float64, g3: Float64) -> Float64:
    """SOFTMAX4's backward term: sum of o_j * g[out_j], left to right."""
    return ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3


def graph_alloc[T: AnyType](align: Int, count: Int) -> Pointer[T, MutUntrackedOrigin]:
    """Memory for the graph levels (malloc, or aligned_alloc with align > 0: count * size
    rounded up to align); a failed allocation ends the program."""
    var bytes = count * size_of[T]()
    var p: Pointer[T, MutUntrackedOrigin]
    if align > 0:
        p = external_call["aligned_alloc", Pointer[T, MutUntrackedOrigin]](align, (bytes + align - 1) // align * align)
    else:
        p = external_call["malloc", Pointer[T, MutUntrackedOrigin]](max(bytes, 1))
    if Int(p) == 0:
        out_of_memory()
    return p


def graph_free[T: AnyType](p: Pointer[T, MutUntrackedOrigin]):
    external_call["free", NoneType](p)
