"""3. Verify every pair against the reference before timing it; 6. check the timed runs' sums after: against
the reference where it is cheap, else against each other at the same N, within the contract's tolerances."""
from __future__ import annotations

import argparse

from harness import oracle
from harness.contract import (DEFAULT_SEED, GRAPH_REFERENCE, GRAPH_VERIFY, disagreement, reference_sums, sums_of,
                              tolerance)
from harness.processes import log
from harness.state import Pair, PairStatus, run_pair
from impls import SEQUENTIAL


def checks(pair: Pair, opts: argparse.Namespace) -> list[tuple[int, int, int]]:
    """(seed, samples, ops) of the runs that verify a level before it is timed (the graph: the known
    answers, seed DEFAULT_SEED, up to the most ops its implementation runs (a peer's graph_ops), and a run
    against the reference at the ops it is timed at)."""
    if pair.workload == "softplus":
        return [(opts.seed, opts.verify_iters, 0)]
    out = [(DEFAULT_SEED, n, ops) for ops, n in GRAPH_VERIFY if ops <= (pair.impl.graph_ops or ops)]
    if GRAPH_REFERENCE and (opts.seed, 2, pair.ops) not in [(s, n, o) for s, n, o in out]:
        out.append((opts.seed, 2, pair.ops))
    return out


def verify_all(pairs: list[Pair], opts: argparse.Namespace) -> None:
    """Check each pair against the reference at small sizes; set verified, absent or failed."""
    for k, pair in enumerate(pairs, 1):
        prefix = f"[verify {k:>{len(str(len(pairs)))}}/{len(pairs)}] {pair.key:<22}"
        for seed, n, ops in checks(pair, opts):
            want, source = reference_sums(pair.workload, seed, n, ops, any_size=True)
            rec, why, _ = run_pair(pair, n, opts, seed=seed, ops=ops)
            if why == "absent":
                pair.refused()
                break
            if rec is None:
                pair.fail(f"verification run: {why}")
                break
            got = sums_of(rec, pair.workload)
            pair.verify.append({"seed": seed, "iters": n, "ops": ops, "sums": list(got), "want": list(want),
                                "source": source, "tolerance": tolerance(pair.level),
                                "max_rel_diff": max(oracle.rel_diff(g, w) for g, w in zip(got, want))})
            bad = disagreement(got, want, tolerance(pair.level), source, pair.workload)
            if bad:
                size = f"N={n}" + (f", {ops} ops" if ops else "")
                pair.fail(f"wrong sums at {size}: {bad}")
                break
        else:
            pair.verified()
        if pair.live:
            log(f"{prefix} ok (max relative difference {max(v['max_rel_diff'] for v in pair.verify):.1e})")
        else:
            log(f"{prefix} " + ("REFUSED (not timed): the program does not implement it"
                                if pair.status is PairStatus.ABSENT else f"FAILED (not timed): {pair.reason}"))


def consensus(group: list[Pair]) -> tuple[list[float], str]:
    """The timed sums most runs of the group agree with (within their tolerance), and whose.

    Candidates are the sequential levels' runs where there are any (C v2 first, so it wins a
    tie), else every run.
    """
    runs = [(p, r) for p in group for r in p.runs]
    ordered = sorted(runs, key=lambda pr: (pr[0].level not in SEQUENTIAL, pr[0].impl.name != "c",
                                           pr[0].level != "v2"))
    candidates = [pr for pr in ordered if pr[0].level in SEQUENTIAL] or ordered

    def votes(c: tuple[Pair, dict]) -> int:
        return sum(not disagreement(r["sums"], c[1]["sums"], tolerance(p.level), "", p.workload) for p, r in runs)

    best = max(candidates, key=votes)              # max keeps the first of equals
    return best[1]["sums"], f"timed runs' consensus ({best[0].key})"


def cross_check(pairs: list[Pair], opts: argparse.Namespace) -> list[str]:
    """Check each timed run's sums against the reference or the others at its N; fail pairs that disagree."""
    notes: list[str] = []
    timed = [p for p in pairs if p.live and p.runs]
    groups: dict[tuple[str, int, int], list[Pair]] = {}
    for p in timed:
        groups.setdefault((p.workload, p.iters, p.ops), []).append(p)
    for (workload, iters, ops), group in sorted(groups.items()):
        want, source = reference_sums(workload, opts.seed, iters, ops)
        if want is None:
            want, source = consensus(group)
            if len({p.impl.name for p in group}) == 1:
                notes.append(f"{workload} N={iters:,}: only {group[0].impl.name} was timed at this N; its runs "
                             "were checked against each other (and the level against the reference before timing)")
        log(f"[check] {workload} timed sums at N={iters:,} against the {source}")
        for p in group:
            for k, run in enumerate(p.runs + p.budget_runs, 1):
                bad = disagreement(run["sums"], want, tolerance(p.level), source, workload)
                if bad:
                    what = f"timed run {k}" if k <= len(p.runs) else f"budget run {k - len(p.runs)}"
                    p.fail(f"{what} at N={iters}: {bad}")
                    log(f"  FAILED {p.key}: {p.reason}")
                    break
            if p.live and p.level in SEQUENTIAL:
                p.identical = all(r["sums"] == list(want) for r in p.runs + p.budget_runs)
                if not p.identical:
                    notes.append(f"{p.key}: sums agree within {tolerance(p.level):g} at N={iters:,} "
                                 f"but are not bit-identical to the {source}")
    return notes
