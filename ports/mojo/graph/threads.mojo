# Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
# per thread (core/threads' spawn_all: POSIX threads; at most one a batch), each with its
# own batch tape and lane sums, added in thread order.

from std.memory import Pointer
from std.sys import size_of
from core.threads import spawn_all, team_size
from graph.recipe import GraphSums, n_nodes
from graph.simd import run_graph_batches, n_graph_batches, GRAPH_BATCH


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
    var team = team_size(threads, nb)
    var parts = List[GraphRange]()
    for t in range(team):
        parts.append(GraphRange(seed, m, n, t * nb // team, (t + 1) * nb // team, GraphSums(0.0, 0.0, 0.0)))
    spawn_all[graph_worker](Int(parts.unsafe_ptr()), size_of[GraphRange](), team)
    var total = GraphSums(0.0, 0.0, 0.0)
    for t in range(team):
        total = total + parts[t].out
    return total


def tapes_bytes(level: String, m: Int, n: Int, threads: Int) -> Int:
    """The least memory `level`'s tapes take at M ops, N samples and T threads: a node's val and
    grad doubles, 16 bytes, in each lane (GRAPH_BATCH at v3 and v4) of each tape (v4: one for each
    thread of the team, team_size). The ops and saved lanes come on top; v0 and v1's node objects
    are counted as tape entries (docs/contract-graph.md)."""
    var lanes = GRAPH_BATCH if level == "v3" or level == "v4" else 1
    var tapes = team_size(threads, n_graph_batches(n)) if level == "v4" else 1
    return tapes * lanes * n_nodes(m) * 16
