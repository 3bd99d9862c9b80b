# Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
# thread, each with its own batch tape and lane sums; the partial sums are added in
# thread order, so a given T always gives the same digits. The pip wheel's standard
# library has no thread pool (no std.runtime, no algorithm.parallelize), so the threads
# are POSIX threads, started through the C ABI: the calling thread runs range 0 itself
# and T - 1 pthreads run the others (OpenMP's shape in the C port).

from std.ffi import external_call
from std.memory import Pointer
from std.sys import size_of
from core.ops import Sums
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


def spawn_all[start: def(Int) thin -> Int](base: Int, stride: Int, count: Int):
    """start(base + t * stride) for t in 0 .. count-1, t = 0 on this thread and the others
    on pthreads, then wait for all. A pthread that cannot be made runs here instead."""
    var ids = List[UInt64](length=count, fill=0)
    var made = List[Bool](length=count, fill=False)
    for t in range(1, count):
        made[t] = external_call["pthread_create", Int32](
            ids.unsafe_ptr().unsafe_offset(t), Int(0), start, base + t * stride) == 0
    _ = start(base)
    for t in range(1, count):
        if made[t]:
            _ = external_call["pthread_join", Int32](ids[t], Int(0))
        else:
            _ = start(base + t * stride)


def run_v4(seed: UInt64, n: Int, threads: Int) -> Sums:
    var nb = n_batches(n)
    var parts = List[Range]()
    for t in range(threads):
        parts.append(Range(seed, n, t * nb // threads, (t + 1) * nb // threads, Sums(0.0, 0.0, 0.0)))
    spawn_all[worker](Int(parts.unsafe_ptr()), size_of[Range](), threads)
    var total = Sums(0.0, 0.0, 0.0)
    for t in range(threads):
        total = total + parts[t].out
    return total
