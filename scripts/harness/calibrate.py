"""4. Calibrate N per (workload, level): doubled until one run lasts --min-time, on the Codon program for every
compiled implementation of the level (so their sums can be checked against each other); the interpreted ones
calibrate their own N."""
from __future__ import annotations

import argparse
import math
from typing import Any, Callable

from harness.contract import MAX_ITERS
from harness.processes import log
from harness.state import Pair, run_pair


def next_iters(n: int, seconds: float, min_time: float) -> int:
    """The N to try after a run of n samples lasted `seconds`, short of min_time: n times the power
    of two its time says is missing (2 to 1024), so that N stays a power of two times the first."""
    short = min_time / seconds if seconds > 0 else 1024.0
    return min(MAX_ITERS, n * min(1024, 2 ** max(1, math.ceil(math.log2(short)))))


def calibration(run: Callable[[int], dict[str, Any] | None], first: int,
                min_time: float) -> tuple[int, dict[str, Any] | None, list[list[float]]]:
    """The one calibration rule, which make bench, make run and scripts/compare.py all use: run(N) from
    N = first, then at next_iters' N, until a run's `seconds` reach min_time or N reaches MAX_ITERS (the
    programs' bound: a clock stuck at 0 s would raise N for ever). Returns the last N tried, its run's
    record (None where run returned None, a failure) and the steps [N, seconds] of the runs that worked;
    a record still short of min_time is one at MAX_ITERS."""
    n, steps = first, []
    while True:
        rec = run(n)
        if rec is None:
            return n, None, steps
        steps.append([n, rec["seconds"]])
        if rec["seconds"] >= min_time or n >= MAX_ITERS:
            return n, rec, steps
        n = next_iters(n, rec["seconds"], min_time)


def calibrate(pair: Pair, opts: argparse.Namespace) -> dict[str, Any] | None:
    """Raise N from 1 (a batched peer: its batch_iters) by calibration's rule until one run of `pair`
    lasts --min-time; None (pair failed) on a failed run.

    A run far too short multiplies N by the power of two its time says is missing (at most
    1024 at once), so N stays a power of two and few runs are needed.
    """
    why = ""

    def one(n: int) -> dict[str, Any] | None:
        nonlocal why
        rec, why, _ = run_pair(pair, n, opts)
        return rec
    n, rec, steps = calibration(one, pair.impl.batch_iters if pair.level in ("v3", "fused-simd") else 1,
                                opts.min_time)
    if rec is None:
        pair.fail(f"calibration run at N={n}: {why}")
        log(f"  FAILED: {pair.key}: {pair.reason}")
        return None
    return {"workload": pair.workload, "level": pair.level, "impl": pair.impl.name, "iters": n, "steps": steps}


def calibrate_all(pairs: list[Pair], opts: argparse.Namespace) -> list[dict[str, Any]]:
    """Set every verified pair's N; return the calibrations done.

    Compiled pairs of a (workload, level) share the N of one calibrator: the Codon program
    where it is there, else the first compiled one; the others calibrate themselves.
    """
    done: list[dict[str, Any]] = []
    live = [p for p in pairs if p.live]
    groups: dict[tuple[str, str], list[Pair]] = {}
    for p in live:
        if p.impl.iters and not (opts.iters if p.impl.compiled else opts.python_iters):
            p.iters = p.impl.iters                     # its registry N (Impl.iters), uncalibrated
        elif p.impl.compiled:
            groups.setdefault((p.workload, p.level), []).append(p)
        elif opts.python_iters:
            p.iters = opts.python_iters
        else:
            log(f"[calibrate] {p.key} (its own N)")
            c = calibrate(p, opts)
            if c:
                p.iters = c["iters"]
                done.append(c)
    for (workload, level), group in groups.items():
        if opts.iters:
            for p in group:
                p.iters = opts.iters
            continue
        main = sorted((p for p in group if not p.scan), key=lambda p: p.impl.kind != "codon")
        for cand in main:
            log(f"[calibrate] {workload} {level} on {cand.key}")
            c = calibrate(cand, opts)
            if c:
                done.append(c)
                log(f"  N = {c['iters']:,} ({c['steps'][-1][1]:.3f} s)")
                for p in group:
                    p.iters = c["iters"]
                break
        else:
            for p in group:
                if p.live:
                    p.fail(f"no {workload} {level} run could be calibrated")
    return done
