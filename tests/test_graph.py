"""The graph workload of the Codon program (docs/contract-graph.md): known answers at every level, the
levels against each other and against the independent reference, its JSON and text output."""
import os
import subprocess

import pytest

from harness import oracle as ref
from conftest import BUILD, ROOT, TIMEOUT
from impls import SEQUENTIAL, WORKLOAD_LEVELS

GRAPH_LEVELS = WORKLOAD_LEVELS["graph"]          # the registry's, as `--level all` runs them
GRAPH_SEQUENTIAL = [lv for lv in GRAPH_LEVELS if lv in SEQUENTIAL]
GRAPH_BATCHED = [lv for lv in GRAPH_LEVELS if lv not in SEQUENTIAL]
OPS = [1, 2, 3, 4, 5, 37, 10_001]


def close(got, want, rtol):
    return all(ref.rel_diff(a, b) <= rtol for a, b in zip(got, want))


@pytest.mark.parametrize("m, n", sorted(ref.GRAPH_KNOWN))
def test_known_answers_at_every_level(codon, m, n):
    known = ref.GRAPH_KNOWN[(m, n)]
    for level in GRAPH_SEQUENTIAL:
        assert tuple(f"{v:.17g}" for v in codon.graph_sums(level, m, n)) == known, level
    for level in GRAPH_BATCHED:
        for threads in ([1, 2, 3] if level == "v4" else [None]):
            got = codon.graph_sums(level, m, n, threads=threads)
            assert close(got, [float(k) for k in known], ref.BATCHED_RTOL), (level, threads, got)


@pytest.mark.parametrize("seed", [42, 0, 2**64 - 1])
@pytest.mark.parametrize("m", OPS)
def test_levels_agree_with_each_other_and_the_reference(codon, seed, m):
    n = 3 if m > 1000 else 5
    want = ref.graph_sums(seed, m, n)
    v2 = codon.graph_sums("v2", m, n, seed)
    assert close(v2, want, ref.SEQUENTIAL_RTOL), (v2, want)
    for level in GRAPH_SEQUENTIAL:
        assert codon.graph_sums(level, m, n, seed) == v2, level
    for level in GRAPH_BATCHED:
        assert close(codon.graph_sums(level, m, n, seed, threads=2 if level == "v4" else None), v2,
                     ref.BATCHED_RTOL), level


@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 100])
def test_batch_boundaries_and_thread_counts(codon, n):
    """Sample counts around the batch (16 lanes) and thread counts that leave threads idle."""
    m = 37
    v2 = codon.graph_sums("v2", m, n)
    assert close(codon.graph_sums("v3", m, n), v2, ref.BATCHED_RTOL)
    by_threads = {t: codon.graph_sums("v4", m, n, threads=t) for t in [1, 2, 3, 7, 64]}
    assert by_threads[1] == codon.graph_sums("v3", m, n)   # one thread is v3, digit for digit
    for t, got in by_threads.items():
        assert close(got, v2, ref.BATCHED_RTOL), (t, got)
        assert codon.graph_sums("v4", m, n, threads=t) == got   # a given T repeats exactly


def test_json_lines_shape(codon):
    records = codon.records("--workload", "graph", "--ops", "10", "--iters", "3", "--seed", "7")
    assert [r["level"] for r in records] == GRAPH_LEVELS
    for r in records:
        assert list(r) == ["impl", "workload", "level", "ops", "iters", "seed", "threads", "seconds",
                           "cpu_seconds", "ns_per_iter", "ns_per_op", "sum_loss", "sum_grad_in", "sum_grad_all"]
        assert (r["impl"], r["workload"], r["ops"], r["iters"], r["seed"]) == ("codon", "graph", 10, 3, 7)
        assert abs(r["ns_per_op"] * 10 - r["ns_per_iter"]) <= 1e-9 * r["ns_per_iter"]


def test_defaults(codon):
    """--ops 10000 and --iters 10000 by default, checked on a v4 run."""
    proc = codon.run("--workload", "graph", "--level", "v9")
    assert proc.returncode == 2
    (r,) = codon.records("--workload", "graph", "--level", "v4")
    assert (r["ops"], r["iters"], r["seed"]) == (10_000, 10_000, 42)


def test_text_table(codon):
    lines = codon.ok("--workload", "graph", "--ops", "12", "--iters", "2").splitlines()
    assert lines[0].split() == ["impl", "level", "threads", "ops", "iters", "seconds", "ns/iter", "ns/op",
                                "vs", "v0", "sum_loss", "sum_grad_in", "sum_grad_all"]
    rows = [line.split() for line in lines[1:]]
    assert [row[:2] for row in rows] == [["codon", level] for level in GRAPH_LEVELS]
    json_sums = [(r["sum_loss"], r["sum_grad_in"], r["sum_grad_all"])
                 for r in codon.records("--workload", "graph", "--ops", "12", "--iters", "2")]
    assert [tuple(float(v) for v in row[9:]) for row in rows] == json_sums


def gc_report(codon, *args) -> str:
    """What Boehm reports of a run of the Codon program with GC_PRINT_STATS=1 (on stderr): a
    "Marking for collection #k" line for each collection and a "Grow heap to" line for each
    growth of its heap, the first of each at start-up."""
    proc = codon.run(*args, env={**os.environ, "GC_PRINT_STATS": "1"})
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def collections(codon, *args) -> int:
    """Boehm's collections in a run, the one at start-up included: at least 1, or the report is missing
    (and every bound below would hold for nothing)."""
    count = gc_report(codon, *args).count("Marking for collection #")
    assert count >= 1, ("no collection reported with GC_PRINT_STATS=1", args)
    return count


def heap_growths(codon, *args) -> int:
    """Boehm's heap growths in a run, the one at start-up included: at least 1, as collections."""
    count = gc_report(codon, *args).count("Grow heap to")
    assert count >= 1, ("no heap growth reported with GC_PRINT_STATS=1", args)
    return count


def test_v1_fills_its_pool_without_a_collection(codon):
    """graph/nodes.codon pauses the collector while v1's pool is made: all of it stays live, yet
    Boehm ran a collection that marked it as its heap grew (at the default 10,000 ops). v1 of one
    sample and of three collects no more than v2, whose tape is four arrays."""
    tape = collections(codon, "--workload", "graph", "--level", "v2", "--iters", "1")
    for n in ["1", "3"]:
        assert collections(codon, "--workload", "graph", "--level", "v1", "--iters", n) <= tape, n


def test_v1_grows_the_heap_once_for_its_pool(codon):
    """graph/nodes.codon grows Boehm's heap once for all of v1's pool (GC_expand_hp) before it
    takes the nodes a list at a time (GC_malloc_many); with one GC_malloc a node the heap would grow
    several times on the way, each growth a step of the pool's making. A softplus run, which
    allocates nothing large, grows it once, at start-up."""
    start_up = heap_growths(codon, "--level", "v1", "--iters", "1")
    for n in ["1", "3"]:
        assert heap_growths(codon, "--workload", "graph", "--level", "v1", "--iters", n) <= start_up + 1, n


def graph_layout(m: int) -> list[list[str]]:
    """tests/graph_layout.codon's lines for an M-op graph, split into words."""
    subprocess.run(["make", "-s", f"BUILD={BUILD}", f"{BUILD}/graph-layout"], cwd=ROOT, check=True)
    out = subprocess.run([str(ROOT / BUILD / "graph-layout"), str(m)], capture_output=True, text=True,
                         timeout=TIMEOUT, check=True).stdout
    return [line.split() for line in out.splitlines()]


@pytest.mark.slow
def test_v1_pool_is_made_with_the_graph(codon):
    """v1's pool (NodeGraph[True]) has a sample's nodes when it is made, before the first sample,
    and every sample remakes those same objects, slot by slot: its takes have no allocation path,
    which made graph v1 slower when the first sample filled the pool (docs/findings/graph-v1-pool.md).
    v0's graph (NodeGraph[False]) starts empty and makes a sample's nodes."""
    for m in [1, 12, 10_000]:
        nodes = str(ref.GRAPH_INPUTS + m + 3 * (m // 4))  # the inputs, an output an op, 3 more a SOFTMAX4
        lines = graph_layout(m)
        assert lines[0] == ["pool", nodes, nodes, nodes, nodes, "same"], (m, lines)
        assert lines[1] == ["objects", "0", nodes, nodes, nodes], (m, lines)


@pytest.mark.slow
def test_tape_ops_take_24_bytes(codon):
    """A tape op (GraphOp) keeps its kind and five ids as 32-bit ints, as the C and Mojo ports do:
    with Codon's 64-bit int, 48 bytes, graph v3 and v4 were slower on an Intel Xeon
    (docs/findings/graph-v3-v4-tapes-and-threads.md).
    The largest graph's ids fit: the --ops maximum's answers are checked in test_largest_graph."""
    assert graph_layout(4)[2] == ["op", "24"]


@pytest.mark.slow
def test_largest_graph(codon):
    """At the --ops maximum, 1,000,000 ops and 1,750,100 nodes, the tape's 32-bit ids still name every
    node: v2 gives v1's sums (a graph of objects, no ids) digit for digit."""
    m = 1_000_000
    assert codon.graph_sums("v2", m, 1) == codon.graph_sums("v1", m, 1)


def test_batch_tapes_are_allocated_without_a_collection(codon):
    """graph/simd.codon pauses the collector while a v3 or v4 thread allocates its batch tape and
    lane sums (4.8 MB that all stay live): with it running, Boehm would collect as the heap grew,
    each collection stopping the other threads while it marked, a pause inside the timed region.
    Each batch's checksum lanes are kept too, so the loop allocates nothing."""
    tape = collections(codon, "--workload", "graph", "--level", "v2", "--iters", "1")
    assert collections(codon, "--workload", "graph", "--level", "v3", "--iters", "48") <= tape
    for t in ["2", "3"]:
        assert collections(codon, "--workload", "graph", "--level", "v4", "--iters", "48",
                           "--threads", t) <= tape, t
