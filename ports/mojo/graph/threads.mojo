# Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
# per thread (softplus/threads' spawn_all: POSIX threads), each with its own batch tape
# and lane sums, added in thread order.

from std.memory import Pointer
from std.sys import size_of
from graph.recipe import GraphSums
from graph.simd import run_graph_batches, n_graph_batches
from softplus.threads import spawn_all


@fieldwise_init
struct GraphRange(ImplicitlyCopyable, Movable):
    """One thread's share: batches [first, end) of n samples of the m-op graph, and its sums."""
    var seed: UInt64
    var m: Int
    var n: Int
    var first: Int
    var end: Int
    var out: GraphSums


def graph_worker(arg: Int) -> Int:
    """A pthread's start routine: arg is the address of its GraphRange."""
    var r = Pointer[GraphRange, MutUntrackedOrigin](unsafe_from_address=arg)
    r[].out = run_graph_batches(r[].seed, r[].m, r[].n, r[].first, r[].end)
    return 0


def run_graph_v4(seed: UInt64, m: Int, n: Int, threads: Int) -> GraphSums:
    var nb = n_graph_batches(n)
    var parts = List[GraphRange]()
    for t in range(threads):
        parts.append(GraphRange(seed, m, n, t * nb // threads, (t + 1) * nb // threads, GraphSums(0.0, 0.0, 0.0)))
    spawn_all[graph_worker](Int(parts.unsafe_ptr()), size_of[GraphRange](), threads)
    var total = GraphSums(0.0, 0.0, 0.0)
    for t in range(threads):
        total = total + parts[t].out
    return total
