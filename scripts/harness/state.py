"""The run's state: each implementation (built? what it says it is) and each pair (implementation, workload,
level[, threads]) from verification to its timed runs, with one run of a pair."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import machine
from harness.contract import NOT_IMPLEMENTED, parse_record
from harness.processes import Proc, failure, run_process
from impls import LEVEL_ORDER, Impl


class ImplStatus(Enum):
    """Where an implementation stands after the build (the raw file's `status`)."""
    PENDING = "pending"
    OK = "ok"
    SKIPPED = "skipped"              # a missing toolchain, module or program
    BUILD_FAILED = "build-failed"


@dataclass
class ImplState:
    """One implementation: whether it could be built or found, and what it says it is."""
    impl: Impl
    status: ImplStatus = ImplStatus.PENDING
    reason: str = ""
    version: str = ""
    vector: dict[str, Any] = field(default_factory=lambda: machine.vector_line(""))
    graph: str = "not probed"        # yes, no (refused with exit 2), failed: ..., not probed
    gpu: str = "not probed"          # its GPU levels: yes, no: <why> (exit 2, no device), failed: ...
    build_seconds: float | None = None

    def skip(self, reason: str) -> None:
        """Not run: a missing toolchain (make's `skip:` line), module or program."""
        self.status, self.reason = ImplStatus.SKIPPED, reason


class PairStatus(Enum):
    """Where a pair stands: pending -> verified (timed while it stays so) -> ok at the end; or absent (the
    program refuses a level its registry entry declares) or failed (the reason says at which step)."""
    PENDING = "pending"
    VERIFIED = "verified"
    OK = "ok"
    ABSENT = "absent"
    FAILED = "failed"


@dataclass
class Pair:
    """One (implementation, workload, level[, threads]): its verification, then its timed runs."""
    impl: Impl
    workload: str
    level: str
    threads: int | None = None       # --threads (v4 only)
    scan: bool = False               # v4 at fewer threads than the most: the thread-scaling table only
    ops: int = 0                     # the graph's ops (0 for softplus)
    iters: int = 0
    status: PairStatus = PairStatus.PENDING
    reason: str = ""
    verify: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    budget_runs: list[dict[str, Any]] = field(default_factory=list)   # --ci: the budgets' adjacent runs
    identical: bool | None = None    # sums bit-identical to the consensus at this N

    @property
    def live(self) -> bool:
        """Verified and not failed since: still to be timed."""
        return self.status is PairStatus.VERIFIED

    def fail(self, reason: str) -> None:
        """The pair failed (a run crashed, hung or printed wrong sums): it is not timed again."""
        self.status, self.reason = PairStatus.FAILED, reason

    def refused(self) -> None:
        """The program refuses a level its registry entry declares."""
        self.status, self.reason = PairStatus.ABSENT, "the registry declares this level; the program refuses it"

    def verified(self) -> None:
        """Every check before timing passed."""
        self.status = PairStatus.VERIFIED

    def finish(self) -> None:
        """The end of the run: a pair still verified is ok when it has timed runs, else failed."""
        if self.live:
            self.status = PairStatus.OK if self.runs else PairStatus.FAILED
            self.reason = self.reason or ("" if self.runs else "no timed run")

    @property
    def key(self) -> str:
        """How progress lines and reasons name the pair."""
        return " ".join([self.impl.name] + (["graph"] if self.workload == "graph" else []) + [self.level]
                        + ([f"T={self.threads}"] if self.threads else []))


def run_pair(pair: Pair, iters: int, opts: argparse.Namespace, seed: int | None = None,
             ops: int | None = None) -> tuple[dict[str, Any] | None, str, Proc]:
    """One run of a pair: (record, '', proc), or (None, why, proc); why is 'absent' for a missing level."""
    seed = opts.seed if seed is None else seed
    argv = pair.impl.command(opts.build_dir)
    expected: dict[str, Any] = {"impl": pair.impl.name, "level": pair.level, "iters": iters, "seed": seed}
    if pair.workload == "graph":
        ops = ops or pair.ops
        argv += ["--workload", "graph", "--ops", str(ops)]
        expected.update(workload="graph", ops=ops)
    else:
        expected["workload"] = "softplus"
    argv += ["--level", pair.level, "--iters", str(iters), "--seed", str(seed), "--json"]
    if pair.threads:
        argv += ["--threads", str(pair.threads)]
        expected["threads"] = pair.threads
    proc = run_process(argv, opts.timeout)
    if proc.returncode == 2 and NOT_IMPLEMENTED.match(proc.stderr) and not proc.stdout:
        return None, "absent", proc
    if proc.returncode != 0:
        return None, failure(proc, opts.timeout), proc
    try:
        return parse_record(proc.stdout, expected), "", proc
    except ValueError as e:
        return None, f"bad output: {e}", proc


def thread_counts(most: int, scan: bool) -> list[int]:
    """1, 2, 4, ... below `most`, then `most` itself (just `most` without the scan)."""
    counts = [1 << k for k in range(most.bit_length()) if 1 << k < most] if scan else []
    return counts + [most]


def make_pairs(states: list[ImplState], opts: argparse.Namespace, most_threads: int) -> list[Pair]:
    """Every (implementation, workload, level) to verify and time; v4 once per thread count."""
    pairs = []
    for s in states:
        if s.status is not ImplStatus.OK:
            continue
        for workload in opts.workloads:
            if workload == "graph" and s.graph != "yes":
                continue
            levels = s.impl.levels + (s.impl.gpu_levels if s.gpu == "yes" else []) if workload == "softplus" \
                else s.impl.graph_levels
            for lv in levels:
                if lv not in (opts.levels or LEVEL_ORDER) or (workload == "graph" and lv not in opts.graph_levels):
                    continue
                ops = min(opts.ops, s.impl.graph_ops or opts.ops) if workload == "graph" else 0
                if lv != "v4":
                    pairs.append(Pair(s.impl, workload, lv, ops=ops))
                    continue
                counts = thread_counts(most_threads, opts.thread_scan and s.impl.compiled)
                pairs += [Pair(s.impl, workload, lv, t, scan=t != counts[-1], ops=ops) for t in counts]
    return pairs


def cell(p: Pair) -> tuple[str, str, int | None]:
    """What a pair is compared within: its workload and level (v4: at its thread count)."""
    return p.workload, p.level, p.threads
