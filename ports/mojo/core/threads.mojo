# The team of threads of the v4 levels, shared by both workloads: T contiguous ranges of
# the batches, one per thread, each range's result kept apart so that the level adds them in
# thread order, and a given T always gives the same digits. The pip wheel's standard library
# has no thread pool (no std.runtime, no algorithm.parallelize), so the threads are POSIX
# threads, started through the C ABI: the calling thread runs range 0 itself and T - 1
# pthreads run the others (OpenMP's shape in the C port). The Codon program's in_threads
# takes the work as a function; here it is a start routine given each range's address.

from std.ffi import external_call


def team_size(threads: Int, nb: Int) -> Int:
    """The threads a v4 level runs for --threads T over nb batches, min(T, nb): the same
    ranges and digits, no idle thread (docs/contract.md §6, v4's team)."""
    return min(threads, nb)


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
