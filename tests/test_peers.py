"""The peers (peers/*.py) and the CPython port, which share one command-line package
(ports/python/cli/): the graph workload against the reference (docs/contract-graph.md),
refusals byte for byte as the Codon program words them, and output that cannot be written.

Tests that run a peer's computation skip when its library is absent (`make peers`
installs them); the command line needs none.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import oracle
from impls import DEFAULT, SEQUENTIAL

ROOT = Path(__file__).resolve().parent.parent
PEERS = {name: ROOT / "peers" / f"{name.replace('-', '_')}_peer.py"
         for name in ("numpy", "jax", "torch", "torch-compile")}
PORT = ROOT / "ports" / "python" / "autograd.py"
REGISTRY = {i.name: i for i in DEFAULT}
# The graph levels each peer's registry entry lists, and the tolerance each is held to (G4).
GRAPH_LEVELS = {(i.name, lv): oracle.SEQUENTIAL_RTOL if lv in SEQUENTIAL else oracle.BATCHED_RTOL
                for i in DEFAULT if i.name in PEERS for lv in i.graph_levels}
WITHOUT_GRAPH = [name for name in PEERS if not REGISTRY[name].graph_levels]
GRAPH_KEYS = ["impl", "workload", "level", "ops", "iters", "seed", "threads", "seconds", "cpu_seconds",
              "ns_per_iter", "ns_per_op", "sum_loss", "sum_grad_in", "sum_grad_all"]
TIMEOUT = 300


def program(name: str) -> list[str]:
    return [sys.executable, str(PORT if name == "python" else PEERS[name])]


def run(name: str, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(program(name) + list(args), stdout=stdout, stderr=subprocess.PIPE, timeout=TIMEOUT)


def needs(name: str) -> None:
    """Skip unless the library a peer computes with is installed (the port needs none)."""
    if name != "python" and importlib.util.find_spec(REGISTRY[name].module) is None:
        pytest.skip(f"{name} is not installed (make peers installs it)")


def graph_records(name: str, *args: str) -> list[dict]:
    proc = run(name, "--workload", "graph", "--json", *args)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


# --- the graph workload against the reference -----------------------------------------------

@pytest.mark.parametrize("peer, level", list(GRAPH_LEVELS), ids=[f"{p}-{lv}" for p, lv in GRAPH_LEVELS])
def test_graph_known_answers(peer, level):
    """G4's rows with small M, N: M = 1, 4, 10 (every op kind, a sample's first SOFTMAX4) and 100."""
    needs(peer)
    rtol = GRAPH_LEVELS[(peer, level)]
    for m, n in [(1, 1), (4, 1), (10, 3), (100, 2)]:
        (rec,) = graph_records(peer, "--level", level, "--ops", str(m), "--iters", str(n))
        keys = GRAPH_KEYS[:9] + ["compile_seconds"] + GRAPH_KEYS[9:] if peer in ("jax", "torch-compile") else GRAPH_KEYS
        assert list(rec) == keys
        assert (rec["impl"], rec["workload"], rec["level"], rec["ops"], rec["iters"], rec["seed"], rec["threads"]) == \
            (peer, "graph", level, m, n, 42, 1)
        for key, want in zip(("sum_loss", "sum_grad_in", "sum_grad_all"), oracle.GRAPH_KNOWN[(m, n)]):
            assert oracle.rel_diff(rec[key], float(want)) <= rtol, (m, n, key, rec[key], want)


@pytest.mark.parametrize("peer, level", list(GRAPH_LEVELS), ids=[f"{p}-{lv}" for p, lv in GRAPH_LEVELS])
def test_graph_other_seeds_and_sizes(peer, level):
    """Seeds 0 and 2^64-1 (the stream position 100*s + i + 1 wraps mod 2^64), M not a multiple of 4."""
    needs(peer)
    rtol = GRAPH_LEVELS[(peer, level)]
    for seed, m, n in [(0, 7, 5), (2**64 - 1, 33, 4)]:
        (rec,) = graph_records(peer, "--level", level, "--ops", str(m), "--iters", str(n), "--seed", str(seed))
        want = oracle.graph_sums(seed, m, n)
        for got, w in zip((rec["sum_loss"], rec["sum_grad_in"], rec["sum_grad_all"]), want):
            assert oracle.rel_diff(got, w) <= rtol, (seed, m, n, got, w)


@pytest.mark.parametrize("peer", ["torch", "jax"])
def test_graph_chunks_add_up(peer, monkeypatch):
    """Many samples in several v3 chunks, the last one short (JAX masks its extra lanes):
    the peer's own run_graph, in this process, with chunks of 4 samples."""
    needs(peer)
    monkeypatch.syspath_prepend(str(ROOT / "peers"))
    module = importlib.import_module(f"{peer}_peer")
    monkeypatch.setattr(module, "GRAPH_MAX_LANES", 4)
    assert module.graph_lanes(10, 1000) == 4
    got = module.run_graph("v3", 42, 10, 10, 1)
    for g, w in zip(got, oracle.graph_sums(42, 10, 10)):
        assert oracle.rel_diff(g, w) <= oracle.BATCHED_RTOL


def test_torch_graph_text_and_level_all():
    """--level all runs v0 then v3 (vs v0 filled in); the text table has G6's columns."""
    needs("torch")
    proc = run("torch", "--workload", "graph", "--ops", "10", "--iters", "3")
    assert proc.returncode == 0 and proc.stderr == b""
    lines = proc.stdout.decode().splitlines()
    assert lines[0].split() == ["impl", "level", "threads", "ops", "iters", "seconds", "ns/iter", "ns/op",
                                "vs", "v0", "sum_loss", "sum_grad_in", "sum_grad_all"]
    rows = [line.split() for line in lines[1:]]
    assert [r[1] for r in rows] == ["v0", "v3"]
    assert rows[0][8] == "1.0x" and rows[1][8].endswith("x")
    for r in rows:
        assert r[3:5] == ["10", "3"]
        for got, want in zip(r[9:], oracle.GRAPH_KNOWN[(10, 3)]):
            assert oracle.rel_diff(float(got), float(want)) <= oracle.BATCHED_RTOL


def test_jax_graph_text_reports_compile_time_on_a_line_of_its_own():
    needs("jax")
    proc = run("jax", "--workload", "graph", "--ops", "4", "--iters", "1")
    assert proc.returncode == 0 and proc.stderr == b""
    header, row, note = proc.stdout.decode().splitlines()
    assert header.startswith("impl    level") and row.split()[:5] == ["jax", "v3", "1", "4", "1"]
    assert note.startswith("jax v3: compiled in ") and "not in seconds" in note


def test_torch_compile_is_graph_only_and_reports_compile_time_on_a_line_of_its_own():
    """torch.compile's row says its compile time on a line of its own; it has no softplus levels."""
    proc = run("torch-compile", "--iters", "3")
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr == b"error: workload softplus is not implemented by this program\n"
    needs("torch-compile")
    proc = run("torch-compile", "--workload", "graph", "--ops", "4", "--iters", "2")
    assert proc.returncode == 0 and proc.stderr == b""
    header, row, note = proc.stdout.decode().splitlines()
    assert header.startswith("impl    level") and row.split()[:5] == ["torch-compile", "v2", "1", "4", "2"]
    assert note.startswith("torch-compile v2: compiled in ") and "not in seconds" in note


def test_graph_default_iters_is_10000_and_ops_10000():
    """Parsing only: the defaults of G6, seen through a level the peer lacks (nothing runs)."""
    proc = run("jax", "--workload", "graph", "--level", "v0")
    assert proc.returncode == 2 and proc.stderr == b"error: level v0 is not implemented by this program\n"
    sys.path.insert(0, str(ROOT / "ports" / "python"))
    try:
        cli = importlib.import_module("cli")
        opts = cli.parse(["--workload", "graph"], 1, {"graph": ["v3"]})
        assert (opts.ops, opts.iters, opts.levels) == (10_000, 10_000, ["v3"])
        opts = cli.parse(["--iters", "5", "--workload", "graph", "--ops", "007"], 1, {"graph": ["v0", "v3"]})
        assert (opts.ops, opts.iters, opts.levels) == (7, 5, ["v0", "v3"])
        assert cli.parse([], 1, {"softplus": ["v0", "fused"]}).iters == 10_000_000
    finally:
        sys.path.remove(str(ROOT / "ports" / "python"))


# --- refusals: the same words as the Codon program --------------------------------------------

BAD = [
    ["--iters", "５"], ["--level", "v\u00e9"], ["--seed", "\udcff"], ["--bo\tgus"], ["--level", "v2\nerror"],
    ["--iters", "0"], ["--seed", "18446744073709551616"], ["--threads", "1025"], ["--eval", "1e999", "1"],
    ["--eval", "0x1p3", "1"], ["--json", "--json"], ["--help", "--json"], ["--level=v3"],
    # the graph workload's flags
    ["--ops", "5"], ["--workload"], ["--workload", "nope"], ["--workload", "Graph"],
    ["--workload", "graph", "--level", "fused"], ["--workload", "graph", "--eval", "1", "2"],
    ["--workload", "softplus", "--ops", "3"], ["--workload", "graph", "--ops", "0"],
    ["--workload", "graph", "--ops", "1000001"], ["--workload", "graph", "--ops", "1e3"],
    ["--workload", "graph", "--workload", "graph"], ["--ops", "3", "--ops", "3"],
]


@pytest.mark.parametrize("name", ["numpy", "jax", "torch", "torch-compile", "python"])
@pytest.mark.parametrize("args", BAD, ids=[repr(a) for a in BAD])
def test_refusals_match_the_codon_program(codon, name, args):
    want = subprocess.run(codon.argv + args, capture_output=True, timeout=TIMEOUT)
    assert want.returncode == 2 and want.stdout == b"", want
    got = run(name, *args)
    assert (got.returncode, got.stdout, got.stderr) == (2, b"", want.stderr)


def test_non_ascii_is_one_question_mark_per_byte():
    """'５' is three bytes in UTF-8, as the compiled programs see it: '???'."""
    for name in ("numpy", "jax", "torch", "torch-compile", "python"):
        proc = run(name, "--iters", "５")
        assert proc.stderr == b"error: --iters must be a whole number from 1 to 1000000000000, got '???'\n"


@pytest.mark.parametrize("name", WITHOUT_GRAPH)
def test_a_missing_workload_is_refused(name):
    proc = run(name, "--workload", "graph", "--iters", "3")
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr == b"error: workload graph is not implemented by this program\n"


# --- output that cannot be written ------------------------------------------------------------

FULL_CASES = {"help": ["--help"], "version": ["--version"], "eval": ["--eval", "1", "2"],
              "eval-json": ["--eval", "1", "2", "--json"]}
RUNS = {"numpy": ["--iters", "3"], "jax": ["--iters", "3"], "torch": ["--iters", "3"],
        "python": ["--iters", "3", "--level", "v2"]}
GRAPH_RUNS = {"jax": ["--workload", "graph", "--ops", "4", "--iters", "1"],
              "python": ["--workload", "graph", "--ops", "4", "--iters", "1", "--level", "v2"],
              "torch": ["--workload", "graph", "--ops", "4", "--iters", "1", "--level", "v3"],
              "torch-compile": ["--workload", "graph", "--ops", "4", "--iters", "1"]}


# Each program with each case it has: the graph cases only where the registry lists graph levels,
# the softplus runs only where it lists softplus levels.
UNWRITABLE = [(name, case) for name in ["numpy", "jax", "torch", "torch-compile", "python"]
              for case in list(FULL_CASES) + ["run", "run-json", "graph", "graph-json"]
              if (not case.startswith("graph") or REGISTRY[name].graph_levels)
              and (not case.startswith("run") or REGISTRY[name].levels)]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("name, case", UNWRITABLE, ids=[f"{n}-{c}" for n, c in UNWRITABLE])
def test_unwritable_output_is_one_error_line_and_exit_1(name, case):
    if case in ("help", "version"):
        args = FULL_CASES[case]
    else:
        needs(name)
        if case.startswith("graph"):
            args = GRAPH_RUNS[name]
        else:
            args = FULL_CASES.get(case) or RUNS[name]
        if case.endswith("-json") and case != "eval-json":
            args = args + ["--json"]
    with open("/dev/full", "wb") as full:
        proc = run(name, *args, stdout=full)
    assert (proc.returncode, proc.stderr) == (1, b"error: cannot write to standard output\n")
