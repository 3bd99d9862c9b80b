# Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
# thread (core/threads' spawn_all: POSIX threads; at most one a batch), each with its own
# batch tape and lane sums; the partial sums are added in thread order, so a given T always
# gives the same digits.

from std.memory import Pointer
from std.sys import size_of
from core.ops import Sums
from core.threads import spawn_all, team_size
from softplus.simd import run_batches, n_batches


@fieldwise_init
struct Range(ImplicitlyCopyable, Movable):
    """One thread's share: batches [first, end) of n samples, and its partial sums."""
    var seed: UInt64
    var n: Int
    var first: Int
    var end: Int
    var out: Sums


def worker(arg: Int) -> Int:
    """A pthread's start routine: arg is the address of its Range."""
    var r = Pointer[Range, MutUntrackedOrigin](unsafe_from_address=arg)
    r[].out = run_batches(r[].seed, r[].n, r[].first, r[].end)
    return 0


def run_v4(seed: UInt64, n: Int, threads: Int) -> Sums:
    var nb = n_batches(n)
    var team = team_size(threads, nb)
    var parts = List[Range]()
    for t in range(team):
        parts.append(Range(seed, n, t * nb // team, (t + 1) * nb // team, Sums(0.0, 0.0, 0.0)))
    spawn_all[worker](Int(parts.unsafe_ptr()), size_of[Range](), team)
    var total = Sums(0.0, 0.0, 0.0)
    for t in range(team):
        total = total + parts[t].out
    return total
