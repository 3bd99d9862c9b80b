"""Parity: every port (the registry's implementations but the peers and the Codon program) against the
contract and against the Codon program, and every implementation's v4 threads and graph memory.

The Codon program is the model: each port must print the same sums (digit for digit at the sequential
levels), the same --eval results and the same table columns, and refuse the same bad inputs. Those tests
take the `port` fixture, which leaves the Codon program out (it would be compared with itself; its own
answers are tests/test_contract.py's, test_cli.py's and test_graph.py's); the others take `impl`.
"""
import json
import os
import re
import resource
import shutil
import subprocess

import pytest

from harness import oracle as ref
from conftest import IMPLS, skip_without_program, widest_width
from test_cli import BAD_ARGS

# Every implementation at every level, each a program run (Numba, CPython and PyPy start for seconds):
# make test runs it, make test-fast leaves it out (pytest.ini).
pytestmark = pytest.mark.slow

SEEDS = [42, 7, 2**64 - 1]
SIZES = [1, 7, 255, 256, 257, 10_007]
EXTREME_POINTS = [("0", "0"), ("-0", "-2"), ("0.5", "-0.25"), ("1", "-2"), ("20", "15"), ("-20", "-15"),
                  ("30", "0"), ("30", "-60"), ("1e-300", "1e-300"), ("5e-324", "1"), ("1e150", "-1e150"),
                  ("-1e154", "1e153"), ("1e-160", "1e160"), ("3.7", "-12.25"), (".5", "5."), ("-1.5e-300", "2E+2")]


def sequential(impl):
    return [lv for lv in ref.SEQUENTIAL_LEVELS if lv in impl.levels]


def batched(impl):
    return [lv for lv in ref.BATCHED_LEVELS if lv in impl.levels]


@pytest.mark.parametrize("n", sorted(ref.KNOWN_SUMS))
def test_known_answers_at_every_level(port, n):
    for level in sequential(port):
        assert tuple(f"{v:.17g}" for v in port.sums(level, n)) == ref.KNOWN_SUMS[n], (port.name, level)
    for level in batched(port):
        for got, known in zip(port.sums(level, n), ref.KNOWN_SUMS[n]):
            assert ref.rel_diff(got, float(known)) <= ref.BATCHED_RTOL, (port.name, level, got)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_sums_agree_with_the_codon_program(impl, codon, seed, n):
    v2 = codon.sums("v2", n, seed)
    for level in sequential(impl):
        assert impl.sums(level, n, seed) == v2, (impl.name, level)
    for level in batched(impl):
        for threads in ([1, 2, 3, 7] if level == "v4" else [None]):
            got = impl.sums(level, n, seed, threads)
            for a, b in zip(got, v2):
                assert ref.rel_diff(a, b) <= ref.BATCHED_RTOL, (impl.name, level, threads, got, v2)


def test_default_run_has_the_same_rows(port, codon):
    """--level all: the same levels in the same order, the same sums (batched: within tolerance)."""
    mine = port.records("--iters", "300", "--seed", "5", "--threads", "2")
    model = [r for r in codon.records("--iters", "300", "--seed", "5", "--threads", "2")
             if r["level"] in port.levels]
    assert [r["level"] for r in mine] == [r["level"] for r in model]
    for a, b in zip(mine, model):
        assert a["impl"] == port.name
        assert {k: a[k] for k in ("iters", "seed", "threads")} == {k: b[k] for k in ("iters", "seed", "threads")}
        for key in ("sum_f", "sum_dx", "sum_dy"):
            assert ref.rel_diff(a[key], b[key]) <= (0 if a["level"] in ref.SEQUENTIAL_LEVELS else ref.BATCHED_RTOL)


def test_text_table_matches_the_codon_program(port, codon):
    def rows(out):   # drop impl, seconds, ns/iter and "vs v0", which legitimately differ
        lines = out.splitlines()
        return [lines[0]] + [" ".join(line.split()[1:4] + line.split()[7:]) for line in lines[1:]]
    args = ("--iters", "100", "--level", "v2")
    mine, model = port.ok(*args), codon.ok(*args)
    assert rows(mine) == rows(model)
    assert mine.splitlines()[1].startswith(f"{port.name} ")


@pytest.mark.parametrize("x, y", EXTREME_POINTS)
def test_eval_agrees_with_the_codon_program(port, codon, x, y):
    strip = lambda out: out.split(", ", 1)[1]   # everything after "impl"
    assert strip(port.ok("--eval", x, y, "--json")) == strip(codon.ok("--eval", x, y, "--json"))
    assert port.ok("--eval", x, y) == codon.ok("--eval", x, y)


@pytest.mark.parametrize("args", BAD_ARGS, ids=[repr(a) for a in BAD_ARGS])
def test_bad_input_is_refused_the_same_way(port, codon, args):
    """One error line, exit 2, nothing on stdout: the same message as the Codon program's."""
    proc = port.run(*args)
    assert proc.returncode == 2 and proc.stdout == "", (port.name, proc)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (port.name, proc.stderr)
    assert proc.stderr == codon.run(*args).stderr, port.name


MISSING = [(name, level) for name, (_, _, levels, _) in IMPLS.items()
           for level in ref.SEQUENTIAL_LEVELS + ref.BATCHED_LEVELS if level not in levels]


@pytest.mark.parametrize("name, level", MISSING)
def test_missing_levels_are_refused(name, level):
    """Refused with the contract's message, in both workloads (the graph has no baselines)."""
    skip_without_program(name)
    argv = IMPLS[name][0]
    for workload in (["softplus"] + (["graph"] if level in ("v3", "v4") else [])):
        proc = subprocess.run(argv + ["--workload", workload, "--level", level, "--iters", "1"],
                              capture_output=True, text=True, timeout=60)
        assert (proc.returncode, proc.stdout) == (2, "")
        assert proc.stderr == f"error: level {level} is not implemented by this program\n"


@pytest.mark.parametrize("args", [["--iters", "10"], ["--version"], ["--help"], ["--eval", "1", "2"],
                                  ["--workload", "graph", "--ops", "8", "--iters", "2", "--json", "--level", "v2"]])
def test_unwritable_output_is_an_error(port, args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(port.argv + args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr == "error: cannot write to standard output\n", (port.name, proc)


# The graph workload (docs/contract-graph.md): every port against G4 and against the Codon program, at
# the graph levels its registry entry lists.
def graph_levels(impl):
    return impl.graph_levels


@pytest.mark.parametrize("m, n", sorted(ref.GRAPH_KNOWN))
def test_graph_known_answers_at_every_level(port, m, n):
    known = ref.GRAPH_KNOWN[(m, n)]
    for level in graph_levels(port):
        got = port.graph_sums(level, m, n, threads=3 if level == "v4" else None)
        if level in ("v3", "v4"):
            assert all(ref.rel_diff(a, float(b)) <= ref.BATCHED_RTOL for a, b in zip(got, known)), (port.name, level)
        else:
            assert tuple(f"{v:.17g}" for v in got) == known, (port.name, level)


@pytest.mark.parametrize("seed", [42, 2**64 - 1])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 37, 10_001])
def test_graph_agrees_with_the_codon_program(port, codon, seed, m):
    n = 3 if m > 1000 else 17
    for level in graph_levels(port):
        for threads in ([1, 2, 7] if level == "v4" else [None]):
            got = port.graph_sums(level, m, n, seed, threads)
            want = codon.graph_sums(level, m, n, seed, threads)
            if level in ("v3", "v4"):
                assert all(ref.rel_diff(a, b) <= ref.BATCHED_RTOL for a, b in zip(got, want)), (port.name, level)
            else:
                assert got == want, (port.name, level)


def test_graph_rows_match_the_codon_program(port, codon):
    """The same JSON keys and values (bar impl and times), the same text columns."""
    args = ("--workload", "graph", "--ops", "9", "--iters", "2", "--level", "v2")
    timing = {"impl", "seconds", "cpu_seconds", "ns_per_iter", "ns_per_op"}
    (mine,), (model,) = port.records(*args), codon.records(*args)
    assert list(mine) == list(model) and mine["impl"] == port.name
    assert {k: v for k, v in mine.items() if k not in timing} == {k: v for k, v in model.items() if k not in timing}
    text = lambda out: [line.split()[1:5] + line.split()[9:] for line in out.splitlines()[1:]]
    assert port.ok(*args).splitlines()[0] == codon.ok(*args).splitlines()[0]
    assert text(port.ok(*args)) == text(codon.ok(*args))


def but_the_levels(help_text: str) -> list[str]:
    """A --help text's lines without its --level paragraph (which says the levels a program has)."""
    lines, skip = [], False
    for line in help_text.splitlines():
        if line.startswith("  --"):
            skip = line.startswith("  --level ")
        if not skip:
            lines.append(line)
    return lines


def test_help_and_version(port, codon):
    """--help is the Codon program's, but for v5 (the Codon program's alone) and the --level paragraph."""
    model = codon.ok("--help").replace("|v4|v5|", "|v4|").replace(";\n               v5's grid depends on N alone", "")
    assert "v5" not in "\n".join(but_the_levels(model))
    assert but_the_levels(port.ok("--help")) == but_the_levels(model)
    lines = port.ok("--version").splitlines()
    assert lines[0].startswith(f"autograd ({port.name}) ")
    if port.name not in ("python", "pypy"):   # the compiled ones name their target and vector width like Codon's
        want = codon.ok("--version").splitlines()[1].split(",")[1:]
        if widest_width(port.name, 8) < 8 and "width 8" in want[0]:    # a Rust compiler without AVX-512
            want = [" vector width 4 doubles: AVX2 (libmvec _ZGVdN4v)"]
        assert len(lines) == 2 and lines[1].split(",")[1:] == want


def region_syscalls(impl, *args: str, env: dict | None = None) -> list[str]:
    """The system calls made between the two CLOCK_PROCESS_CPUTIME_ID reads of one v4 run (contract §5:
    the CPU clock is read inside the timed region), by every thread, as strace writes them."""
    if shutil.which("strace") is None:
        pytest.skip("strace not found (.ci/run installs it)")
    proc = subprocess.run(["strace", "-f", "-qq", "-e", "signal=none", "-o", "/dev/stderr", *impl.argv, *args],
                          capture_output=True, text=True, timeout=120, env=env)
    if proc.returncode != 0 and "PTRACE" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.splitlines()[0]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    reads = [i for i, line in enumerate(lines) if "CLOCK_PROCESS_CPUTIME_ID" in line]
    assert len(reads) >= 2, (impl.name, proc.stderr[-2000:])
    return lines[reads[0] + 1:reads[1]]


# A thread pinned to one CPU: strace writes the mask as the list of its CPUs, here a single one.
PIN_TO_ONE_CPU = re.compile(r"sched_setaffinity\(\d+, \d+, \[\d+\]")
# A new thread, as strace writes its system call (glibc's pthread_create calls clone3, older ones clone).
THREAD_START = re.compile(r"\bclone3?\(")
V4_WORKLOADS = pytest.mark.parametrize("workload", [["--iters", "3000"],
                                                    ["--workload", "graph", "--ops", "100", "--iters", "300"]],
                                       ids=["softplus", "graph"])


def v4_region(impl, workload: list[str]) -> list[str]:
    """The system calls of a v4 region on 2 threads; skipped for a program without v4, or on one CPU (where
    a pin to it cannot be told from the whole mask, and a port may run T = 2 on one thread)."""
    if "v4" not in impl.levels or "v4" not in impl.graph_levels:
        pytest.skip(f"{impl.name} has no v4")
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU")
    return region_syscalls(impl, *workload, "--level", "v4", "--threads", "2", "--json")


@V4_WORKLOADS
def test_v4_region_holds_no_runtime_start_up(impl, workload):
    """Contract §5: the timed region is the iteration loop, not start-up. A v4 region may start its threads
    (every port does), but must not move a thread from CPU to CPU: libomp, at its first parallel region,
    reads the topology by pinning the calling thread to each CPU in turn, which waits for each CPU and puts
    that wait, off the CPU, into the region's wall time. The Codon program finishes OpenMP's start-up before
    its first region."""
    pins = [line for line in v4_region(impl, workload) if PIN_TO_ONE_CPU.search(line)]
    assert pins == [], (impl.name, pins)


@V4_WORKLOADS
def test_v4_region_starts_its_threads(impl, workload):
    """Every program's v4 pays for starting its threads inside the timed region, so that v4 is timed
    alike: OpenMP (Codon, C, Cython, Numba's threading layer) starts its workers at the first parallel
    region, and the Zig, Rust and Mojo ports spawn theirs. A one-sample call before the clock on T
    threads, as the Numba port's warm-up once made, starts them before it instead."""
    starts = [line for line in v4_region(impl, workload) if THREAD_START.search(line)]
    assert len(starts) >= 1, (impl.name, "no thread started inside the v4 region")


@pytest.mark.parametrize("workload", [["--iters", "600"], ["--workload", "graph", "--ops", "100", "--iters", "40"]],
                         ids=["softplus", "graph"])
def test_v4_starts_no_thread_beyond_the_batches(impl, workload):
    """Contract §6, v4's team: 600 softplus samples (batches of 256) and 40 graph samples (of 16) are 3
    batches, so --threads 1024 runs 3 ranges on 3 threads, the calling thread and 2 started, not 1,024
    (starting the idle ones cost the Codon program more than the work). Numba's pool is made 16 threads,
    more than the batches whatever the machine: a prange starts every thread of its pool."""
    if "v4" not in impl.levels or "v4" not in impl.graph_levels:
        pytest.skip(f"{impl.name} has no v4")
    env = {**os.environ, "NUMBA_NUM_THREADS": "16"}
    region = region_syscalls(impl, *workload, "--level", "v4", "--threads", "1024", "--json", env=env)
    starts = [line for line in region if THREAD_START.search(line)]
    assert len(starts) <= 2, (impl.name, len(starts))


def minor_page_faults(argv: list[str]) -> int:
    """The minor page faults of one run of argv (the kernel's count for the child, from getrusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before


def test_graph_v0_reuses_its_freed_nodes(impl):
    """Graph v0 frees a sample's nodes (17,600 at 10,000 ops) and makes as many fresh ones for the next.
    What the next sample gets must be that freed memory, not pages handed back to the kernel and faulted in
    again: the Rust port once freed its per-sample array of node pointers (141 KB) with the nodes, glibc's
    free of so large a block consolidated the freed nodes and trimmed the heap, and every sample faulted
    its nodes' pages back in (docs/findings/port-rust.md, "Graph v0 keeps its array of Boxes"). The C, Zig
    and Rust ports keep that array from sample to sample; Boehm (Codon) and CPython's allocator (Cython's
    nodes) keep their pages."""
    if impl.name in ("python", "pypy"):
        pytest.skip(f"{impl.name}: interpreted, not timed beside the compiled programs")
    if "v0" not in impl.graph_levels:
        pytest.skip(f"{impl.name} has no graph v0")
    # A sample's nodes span about 344 pages (17,600 of 80 bytes). Over 100 samples a heap that grows once
    # or twice more on the way (Boehm's does at times) stays far under the bound.
    faults = {n: minor_page_faults(impl.argv + ["--workload", "graph", "--level", "v0", "--iters", str(n)])
              for n in (4, 104)}
    per_sample = (faults[104] - faults[4]) / 100
    assert per_sample < 25, (impl.name, faults)


def test_graph_sample_at_a_million_ops_touches_one_tape(impl):
    """One sample of graph v3 at 10^6 ops fills one batch tape, 1,750,100 nodes of 16 lanes of val and grad
    (448 MB, 109,379 pages), and the ops and saved lanes beside it: a little more than one tape's pages
    more than a 1,000-op run. A program that touches it twice pays twice, outside the timed region but in every run:
    the Numba port's warm-up once ran its one sample at the run's M, touching a second tape's pages."""
    if "v3" not in impl.graph_levels:
        pytest.skip(f"{impl.name} has no graph v3")
    run = impl.argv + ["--workload", "graph", "--level", "v3", "--iters", "1", "--ops"]
    tape_pages = 16 * (100 + 1_000_000 + 3 * 250_000) * 16 / resource.getpagesize()
    extra = minor_page_faults(run + ["1000000"]) - minor_page_faults(run + ["1000"])
    assert extra < 1.5 * tape_pages, (impl.name, extra / tape_pages)


# Graph v4 with more threads than batches: 40 samples at 10^6 ops are 3 batches of 16, so 1,021 of 1,024
# threads have no batch. A batch tape of 10^6 ops is 450 MB: a thread with no batch must allocate none, or
# the run reserves hundreds of GB (the Codon program once did, a tape for each of its 1,024 threads).
MANY_THREADS = ["--workload", "graph", "--ops", "1000000", "--level", "v4", "--iters", "40", "--threads", "1024",
                "--json"]
# Room for 1,024 thread stacks, the runtimes and three tapes; not for 1,024 tapes. Set by the shell's ulimit
# (in KB), not by a preexec_fn: a fork from this process, where JAX may have started threads, can deadlock.
ADDRESS_SPACE_KB = 32 * 2**20
WITH_LIMITED_ADDRESS_SPACE = ["bash", "-c", f'ulimit -v {ADDRESS_SPACE_KB} && exec "$@"', "limited"]


def test_graph_v4_threads_beyond_the_batches_allocate_nothing(impl, codon):
    if "v4" not in impl.graph_levels:
        pytest.skip(f"{impl.name} has no graph v4")
    runs = {}
    for program in (impl, codon) if impl.name != codon.name else (impl,):
        proc = subprocess.run(WITH_LIMITED_ADDRESS_SPACE + program.argv + MANY_THREADS, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, (program.name, proc.stderr[-2000:])
        runs[program.name] = json.loads(proc.stdout)
    got, want = runs[impl.name], runs[codon.name]
    assert got["threads"] == 1024
    for key in ("sum_loss", "sum_grad_in", "sum_grad_all"):
        assert ref.rel_diff(got[key], want[key]) <= ref.BATCHED_RTOL, (key, got[key], want[key])


# Graph tapes that cannot fit in memory: 16,384 samples are 1,024 batches of 16, so each of 1,024 v4 threads
# holds a tape of 10^6 ops, 1,750,100 nodes of 16 lanes of val and grad: 437,525 MiB. Refused (exit 2, one
# error line, nothing on stdout) before any tape is allocated, so within seconds; under the address-space
# limit a program that went on would fail at its first tapes rather than take the machine's memory.
TAPES_BEYOND_MEMORY = ["--workload", "graph", "--ops", "1000000", "--level", "all", "--iters", "16384",
                       "--threads", "1024"]
REFUSAL_SECONDS = 20


def test_graph_tapes_beyond_memory_are_refused(impl):
    if "v4" not in impl.graph_levels:
        pytest.skip(f"{impl.name} has no graph v4: one tape of its levels fits")
    m, n, threads, batch = 1_000_000, 16_384, 1024, 16
    need = min(threads, -(-n // batch)) * batch * (100 + m + 3 * (m // 4)) * 16
    have = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE")
    if need <= have:
        pytest.skip(f"this machine's {have // 2**20} MiB hold the {need // 2**20} MiB of tapes")
    proc = subprocess.run(WITH_LIMITED_ADDRESS_SPACE + impl.argv + TAPES_BEYOND_MEMORY, capture_output=True,
                          text=True, timeout=REFUSAL_SECONDS)
    assert proc.returncode == 2, (impl.name, proc.stderr[-2000:])
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"error: the tapes of --ops {m} need at least {-(-need // 2**20)} MiB, more than this machine's memory "
        f"({have // 2**20} MiB)"]
