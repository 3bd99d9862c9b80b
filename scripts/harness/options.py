"""The command line's presets (a full `make bench`, the CI timing job) and its value types."""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

from harness.contract import MAX_GRAPH_OPS, MAX_ITERS, MAX_THREADS
from impls import WORKLOAD_LEVELS, WORKLOADS, Impl, load_registry


@dataclass(frozen=True)
class Preset:
    """Defaults of a kind of run; a flag given on the command line overrides each."""
    min_time: float
    repeats: int
    results_dir: str | None          # None: <build dir>/bench-ci
    peers: bool
    timeout: float
    thread_scan: bool
    workloads: tuple[str, ...]
    budget_pairs: int = 0            # adjacent pairs of runs per CI budget (none outside --ci)
    graph_levels: tuple[str, ...] = tuple(WORKLOAD_LEVELS["graph"])   # the graph levels timed


# Many short rounds rank better than a few long ones: the paired ratios' 95% interval shrinks with the
# number of pairs. The measurements behind 70 rounds of 0.04 s, and the precision they give, are
# docs/benchmarking.md's Precision section (its precision-runs table, which report.py generates).
FULL = Preset(min_time=0.04, repeats=70, results_dir="results", peers=True, timeout=120.0, thread_scan=True,
              workloads=tuple(WORKLOADS))


# Every run lasts 0.25 s or more, long enough for v4's threads to show; the budgets take 9 adjacent
# pairs each (see Budget); the graph at the levels its budgets compare (docs/benchmarking.md,
# `make bench-ci`).
CI = Preset(min_time=0.25, repeats=3, results_dir=None, peers=False, timeout=60.0, thread_scan=False,
            workloads=("softplus", "graph"), budget_pairs=9, graph_levels=("v2", "v3"))


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def bounded_int(most: int, what: str):
    """argparse type: an integer from 1 to most, the programs' own bound on what (contract §4), so that a value
    every program would refuse is refused here, before any build or run."""
    def parse(text: str) -> int:
        value = positive_int(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most:,} (the programs' {what}), got {text}")
        return value
    return parse


ops_int = bounded_int(MAX_GRAPH_OPS, "--ops")
iters_int = bounded_int(MAX_ITERS, "--iters")
threads_int = bounded_int(MAX_THREADS, "--threads")


def ops_list(text: str) -> list[int]:
    """argparse type: comma-separated graph sizes, each an ops_int."""
    sizes = [ops_int(x) for x in text.split(",") if x.strip()]
    if not sizes:
        raise argparse.ArgumentTypeError("needs at least one size")
    return sizes


def seed_int(text: str) -> int:
    """argparse type: a seed, 0 <= S < 2^64 (contract §4)."""
    value = int(text)
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"must be from 0 to 2^64-1, got {text}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number of seconds > 0 (an infinite one would never end a calibration)."""
    value = float(text)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite number more than 0, got {text}")
    return value


def name_list(text: str) -> list[str]:
    """argparse type: a comma-separated list of names."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("needs at least one name")
    return names


def readable_file(text: str) -> Path:
    """argparse type: a file given on the command line that exists and can be read (bad input otherwise)."""
    try:
        Path(text).open("rb").close()
    except OSError as e:
        raise argparse.ArgumentTypeError(f"cannot read {text}: {e.strerror}") from None
    return Path(text)


def registry_file(text: str) -> list[Impl]:
    """argparse type: a registry file's implementations (impls.load_registry), read while the command line is
    parsed, so that a missing or malformed file is refused before anything runs."""
    try:
        return load_registry(Path(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
