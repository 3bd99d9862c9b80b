"""What the contract asks of a program's output, and what its sums must agree with.

A `--level L --json` run prints one JSON line of the contract's keys (contract §5-§6, contract-graph §G6);
its three sums agree with the reference's within the contract's tolerances (§2, §G4): the independent
oracle (harness/oracle.py) where it is cheap enough, the contract's known answers for the graph.
"""
from __future__ import annotations

import json
import math
import re
import shlex
from typing import Any, Callable, Iterable

from harness import oracle
from impls import SEQUENTIAL

SUM_KEYS = {"softplus": ["sum_f", "sum_dx", "sum_dy"], "graph": ["sum_loss", "sum_grad_in", "sum_grad_all"]}
# The JSON keys in order (contract §5, §G6); programs from before the graph contract lack "workload".
KEYS = {"softplus": ["impl", "workload", "level", "iters", "seed", "threads", "seconds", "cpu_seconds",
                     "ns_per_iter", *SUM_KEYS["softplus"]],
        "graph": ["impl", "workload", "level", "ops", "iters", "seed", "threads", "seconds", "cpu_seconds",
                  "ns_per_iter", "ns_per_op", *SUM_KEYS["graph"]]}
OLD_SOFTPLUS_KEYS = [k for k in KEYS["softplus"] if k != "workload"]
NOT_IMPLEMENTED = re.compile(r"^error: level \S+ is not implemented by this program")
NO_DEVICE = re.compile(r"^error: --level (\S+) needs a CUDA device and driver: (.*)")
# Timed softplus sums at an N up to this are also checked against the Python reference itself (whose
# CPython time grows with N); above it, against the other programs.
REFERENCE_LIMIT = 500_000
GRAPH_REFERENCE_LIMIT = 16          # samples of the graph reference (tens of ms each in CPython)
DEFAULT_SEED = 42                   # contract §4: --seed's default, and the seed of the known answers (§G4)
MAX_ITERS = 10**12                  # contract §4
MAX_GRAPH_OPS = 1_000_000           # contract-graph §4: --ops M
DEFAULT_OPS = 10_000                # contract-graph §4: --ops' default, the graph every run times
VERIFY_ITERS = 10_007               # softplus samples of the check against the reference before timing
MAX_THREADS = 1024                  # contract §4: --threads T
# Contract-graph §G4, seed 42: (ops, samples) -> sum_loss, sum_grad_in, sum_grad_all, as harness/oracle.py
# holds them (tests/test_graph_reference.py checks its table against docs/contract-graph.md's).
GRAPH_KNOWN = {k: tuple(float(x) for x in v) for k, v in oracle.GRAPH_KNOWN.items()}
GRAPH_VERIFY = [(10, 3), (10000, 3)]   # the known answers each graph level is checked against
GRAPH_REFERENCE: Callable[[int, int, int], Iterable[float]] | None = oracle.graph_sums


def parse_record(stdout: str, expected: dict[str, Any]) -> dict[str, Any]:
    """The one JSON line of a `--level L --json` run, checked against contract §5-§6 / §G6.

    `expected` holds the values some keys must have (impl, level, iters, seed, and for the
    graph workload, ops; threads when it was asked for).
    """
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise ValueError(f"expected one JSON line, got {len(lines)}")
    try:
        rec = json.loads(lines[0])
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg}): {lines[0][:200]!r}") from None
    workload = expected.get("workload", "softplus")
    allowed = [KEYS[workload]] + ([OLD_SOFTPLUS_KEYS] if workload == "softplus" else [])
    if workload == "graph":   # a peer that compiles before the clock adds its time (contract §6)
        at = KEYS["graph"].index("cpu_seconds") + 1
        allowed.append(KEYS["graph"][:at] + ["compile_seconds"] + KEYS["graph"][at:])
    if not isinstance(rec, dict) or list(rec) not in allowed:
        raise ValueError(f"keys {list(rec) if isinstance(rec, dict) else type(rec).__name__} "
                         f"are not the contract's {KEYS[workload]}")
    for key, want in expected.items():
        if key in rec and rec[key] != want:
            raise ValueError(f"{key} is {rec[key]!r}, expected {want!r}")
    for key in KEYS[workload][KEYS[workload].index("threads"):]:
        if isinstance(rec[key], bool) or not isinstance(rec[key], (int, float)) or not math.isfinite(rec[key]):
            raise ValueError(f"{key} is {rec[key]!r}, not a finite number")
    if rec["seconds"] < 0 or rec["cpu_seconds"] < 0 or rec["threads"] < 1:
        raise ValueError(f"seconds {rec['seconds']}, cpu_seconds {rec['cpu_seconds']} or threads "
                         f"{rec['threads']} out of range")
    return rec


def record_of(argv: list[str], stdout: str, expected: dict[str, Any]) -> dict[str, Any]:
    """parse_record of a run of argv, its ValueError a RuntimeError naming the command."""
    try:
        return parse_record(stdout, expected)
    except ValueError as e:
        raise RuntimeError(f"{shlex.join(argv)}: bad output: {e}") from None


def tolerance(level: str) -> float:
    """Contract §2 / §G4: sequential levels within 1e-12 relative, batched ones within 1e-9."""
    return oracle.SEQUENTIAL_RTOL if level in SEQUENTIAL else oracle.BATCHED_RTOL


def sums_of(rec: dict[str, Any], workload: str = "softplus") -> tuple[float, float, float]:
    """The three checksums of a record."""
    a, b, c = (rec[k] for k in SUM_KEYS[workload])
    return a, b, c


def disagreement(got: Iterable[float], want: Iterable[float], rtol: float, against: str,
                 workload: str = "softplus") -> str:
    """'' when every sum agrees within rtol; otherwise the numbers, for the report."""
    bad = []
    for name, g, w in zip(SUM_KEYS[workload], got, want):
        rel = oracle.rel_diff(g, w)
        if not rel <= rtol:
            bad.append(f"{name} {g!r} vs {against} {w!r} (relative difference {rel:.3g} > {rtol:g})")
    return "; ".join(bad)


_REFERENCE: dict[tuple, tuple[tuple[float, float, float], str]] = {}


def reference_sums(workload: str, seed: int, n: int, ops: int = 0,
                   any_size: bool = False) -> tuple[tuple[float, float, float] | None, str]:
    """The reference's sums (computed once per size) and their source; (None, '') where none is cheap enough.

    any_size: compute the softplus reference whatever N (verification asked for it).
    """
    key = (workload, seed, n, ops)
    if key not in _REFERENCE:
        if workload == "softplus" and (n <= REFERENCE_LIMIT or any_size):
            _REFERENCE[key] = tuple(oracle.run(seed, n)), "reference"
        elif workload == "graph" and seed == DEFAULT_SEED and (ops, n) in GRAPH_KNOWN:
            _REFERENCE[key] = GRAPH_KNOWN[(ops, n)], "§G4"
        elif workload == "graph" and GRAPH_REFERENCE and n <= GRAPH_REFERENCE_LIMIT:
            _REFERENCE[key] = tuple(GRAPH_REFERENCE(seed, ops, n)), "reference"
        else:
            return None, ""
    return _REFERENCE[key]
