"""5. Time every verified pair in rounds, each round's order shuffled, one process per run; 7. summarise each
pair (its median and 95% interval) and compare the pairs of a cell from their adjacent runs (the stages as
scripts/bench.py numbers them)."""
from __future__ import annotations

import argparse
import random
import time
from typing import Any

import machine
from harness import analysis
from harness.contract import sums_of
from harness.processes import Proc, clock, log
from harness.state import Pair, PairStatus, cell, run_pair
from impls import ranking_clock


def timed_run(pair: Pair, opts: argparse.Namespace, what: str) -> tuple[dict[str, Any] | None, Proc]:
    """One timed run of pair at its N: (the run's record for the raw file, proc); (None, proc) after
    failing the pair, with `what` (`timed run 3`) in its reason. The record's `wall`, `cpu` and `peak_rss_kb`
    are the whole process's (processes.run_process), `seconds` and `cpu_seconds` its timed region's."""
    before = machine.cpu_clock()
    rec, why, proc = run_pair(pair, pair.iters, opts)
    after = machine.cpu_clock()
    if rec is None:
        pair.fail(f"{what}: {why}")
        return None, proc
    return {"seconds": rec["seconds"], "cpu_seconds": rec["cpu_seconds"], "ns_per_iter": rec["ns_per_iter"],
            "threads": rec["threads"],
            "sums": list(sums_of(rec, pair.workload)), "wall": round(proc.wall, 4), "cpu": round(proc.cpu, 4),
            "peak_rss_kb": proc.peak_rss_kb, **neighbours(before, after)}, proc


def neighbours(before: tuple[float, ...] | None, after: tuple[float, ...] | None) -> dict[str, float]:
    """What the rest of the machine did during one run: `other_load`, the CPUs other processes kept busy
    on average, steal included, and `steal`, the CPUs the hypervisor gave to other guests (/proc/stat, in
    clock ticks: 10 ms each, so a 0.04-s run reads in steps of 0.25 CPU); absent without /proc/stat."""
    load, stolen = machine.other_load(before, after), machine.steal(before, after)
    return {k: round(v, 3) for k, v in (("other_load", load), ("steal", stolen)) if v is not None}


def time_all(pairs: list[Pair], opts: argparse.Namespace) -> None:
    """R rounds; each runs every live pair once, a cell (workload, level) at a time: the cells in a
    shuffled order, and a cell's implementations back to back in a shuffled order, so that any two of
    them ran adjacent to each other in every round (their paired ratios: `paired`). A pair that fails
    is dropped."""
    live = [p for p in pairs if p.live]
    rng = random.Random(opts.shuffle_seed)
    total = sum(min(opts.repeats, p.impl.rounds or opts.repeats) for p in live)
    done, started = 0, time.monotonic()
    walls: dict[str, float] = {}           # last wall time of each pair: the ETA
    for rnd in range(1, opts.repeats + 1):
        cells: dict[tuple, list[Pair]] = {}
        for p in live:
            if p.live:
                cells.setdefault(cell(p), []).append(p)
        groups = list(cells.values())
        rng.shuffle(groups)
        order = []
        for group in groups:
            rng.shuffle(group)
            order += group
        for pair in order:
            if not pair.live or (pair.impl.rounds and rnd > pair.impl.rounds):
                continue                               # failed, or past its rounds (Impl.rounds)
            done += 1
            rec, proc = timed_run(pair, opts, f"timed run {rnd}")
            walls[pair.key] = proc.wall
            prefix = (f"[time {done:>{len(str(total))}}/{total} round {rnd}/{opts.repeats}] "
                      f"{pair.key:<22} {pair.iters:>13,}")
            if rec is None:
                log(f"{prefix}  FAILED: {pair.reason} (not run again)")
                continue
            pair.runs.append({**rec, "round": rnd})
            left = (total - done) * sum(walls.values()) / len(walls)   # the runs to go, each a mean run
            eta = f"~{clock(left)} left" if rnd > 1 else "ETA after round 1"
            log(f"{prefix}  {rec['seconds']:8.3f} s {rec['ns_per_iter']:11.2f} ns/iter   "
                f"elapsed {clock(time.monotonic() - started)}, {eta}")


def summarise(pairs: list[Pair]) -> list[dict[str, Any]]:
    """One result entry per pair: the median, its 95% interval, min and max, per sample and per op."""
    for p in pairs:
        p.finish()
    out = []
    for p in pairs:
        entry: dict[str, Any] = {"impl": p.impl.name, "workload": p.workload, "level": p.level,
                                 "threads": p.threads, "scan": p.scan, "status": p.status.value, "reason": p.reason,
                                 "iters": p.iters, "ops": p.ops or None, "verify": p.verify, "runs": p.runs,
                                 **({"budget_runs": p.budget_runs} if p.budget_runs else {})}
        if p.status is PairStatus.OK:
            secs = [r["seconds"] for r in p.runs]
            low, high, coverage = analysis.median_ci(secs)
            per = 1e9 / p.iters
            entry.update({"threads": p.runs[0]["threads"], "median_s": analysis.median(secs), "ci_low_s": low,
                          "ci_high_s": high, "ci_coverage": coverage, "min_s": min(secs),
                          "max_s": max(secs), "ns_per_iter": analysis.median(secs) * per,
                          "ci_ns_per_iter": [low * per, high * per], "min_ns_per_iter": min(secs) * per,
                          "sums": p.runs[0]["sums"], "identical": p.identical})
            for key in ("other_load", "steal"):           # the busiest run's neighbours
                seen = [r[key] for r in p.runs if key in r]
                if seen:
                    entry[f"max_{key}"] = max(seen)
            if p.ops:
                entry.update({"ns_per_op": entry["ns_per_iter"] / p.ops,
                              "ci_ns_per_op": [v / p.ops for v in entry["ci_ns_per_iter"]]})
        out.append(entry)
    return out


def clock_of(a: Pair, b: Pair) -> str:
    """The clock two pairs are compared by (impls.ranking_clock)."""
    return ranking_clock(a.level, a.impl.compiled and b.impl.compiled)


def paired_ratios(a: Pair, b: Pair) -> list[float]:
    """a's time per sample over b's, round by round: the rounds in which both ran (adjacent, time_all),
    by clock_of's clock."""
    return analysis.paired_ratios(a.runs, a.iters, b.runs, b.iters, clock_of(a, b))


def compare_paired(pairs: list[Pair], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each timed pair against its cell's fastest (analysis.fastest), and the Codon program against the best
    compiled port of each cell, the port it is slowest against in their paired ratios, all from adjacent
    runs: entries' `paired` and the raw file's `codon_vs_best_port`."""
    by_pair = {id(p): e for p, e in zip(pairs, results)}
    cells: dict[tuple, list[Pair]] = {}
    for p in pairs:
        if by_pair[id(p)]["status"] == "ok" and not p.scan:      # a graph peer at fewer ops: a cell of its own
            cells.setdefault((*cell(p), p.ops), []).append(p)
    codon: dict[str, Any] = {}
    for key, group in cells.items():
        fastest = analysis.fastest(group, lambda p: by_pair[id(p)]["ns_per_iter"], paired_ratios)
        for p in group:
            ratios = paired_ratios(p, fastest) if p is not fastest else []
            if ratios:
                by_pair[id(p)]["paired"] = {"against": fastest.impl.name, "clock": clock_of(p, fastest),
                                            **analysis.paired_reading(ratios)}
        mine = [p for p in group if p.impl.kind == "codon"]
        ports = [p for p in group if p.impl.kind == "port" and p.impl.compiled]
        readings = [(p, analysis.paired_reading(r)) for p in ports if mine and (r := paired_ratios(mine[0], p))]
        if readings:
            best, reading = analysis.hardest(readings)
            codon[" ".join(str(k) for k in key[:3] if k)] = {"workload": key[0], "level": key[1], "threads": key[2],
                                                        "port": best.impl.name, "clock": clock_of(mine[0], best),
                                                        **reading}
    return codon


def short_runs(pairs: list[Pair], results: list[dict[str, Any]], opts: argparse.Namespace) -> list[str]:
    """A note for every calibrated pair with timed runs shorter than --min-time: the compiled programs of a
    level share one N, calibrated on the first of them, so a faster one's runs are shorter (and a
    calibration run slower than the timed ones leaves them all short)."""
    out = []
    for p, e in zip(pairs, results):
        if e["status"] != "ok" or (opts.iters if p.impl.compiled else opts.python_iters):
            continue
        short = [r["seconds"] for r in p.runs if r["seconds"] < opts.min_time]
        if short:
            out.append(f"{p.key}: {len(short)} of {len(p.runs)} timed runs under --min-time {opts.min_time:g} s "
                       f"(shortest {min(short):.3f} s, at N={p.iters:,}"
                       + (", the N its level's compiled programs share)" if p.impl.compiled else ")"))
    return out
