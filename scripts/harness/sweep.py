"""The graph size sweep (`make sweep`, scripts/sweep.py): bench's build, probe, verification, calibration, paired
rounds and checks of the timed sums, for the graph workload of the compiled implementations at each size M in
turn, and one raw file, results/sweep/<machine slug>/<date>.json.gz, with the machine's caches (sysfs)."""
from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import machine
from harness import ROOT, rawfile
from harness.build import build_all, probe_graph
from harness.calibrate import calibrate_all
from harness.contract import VERIFY_ITERS
from harness.options import FULL
from harness.host import machine_info
from harness.processes import log
from harness.session import Run, begin, chosen, implementations, problems
from harness.state import ImplState, ImplStatus, Pair, make_pairs
from harness.sweepdata import FOLDER, GRAPH_BATCH, KIND, SCHEMA
from harness.timing import compare_paired, short_runs, summarise, time_all
from harness.verify import cross_check, verify_all
from impls import WORKLOAD_LEVELS

# The sizes of issue 51: from a tape that fits in any L1d to one of tens of MB, about three to a decade.
SIZES = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
# Fewer rounds than make bench's (FULL.repeats), so that nine sizes of every compiled program take minutes, not
# hours (docs/benchmarking.md, The size sweep); 9 pairs still give a 95% interval of the median.
REPEATS = 9
# A program refusing a size whose tapes do not fit in the machine's memory (check_memory, contract-graph):
# the pair is recorded as refused at that size, not as a failure.
TOO_BIG = re.compile(r"exit status 2: error: the tapes of --ops \d+ need")


def sweep_impls(opts: argparse.Namespace) -> list | None:
    """The compiled implementations to sweep (registry's `compiled`); None after an error line."""
    impls = chosen(opts)
    if impls is None:
        return None
    named = [i.name for i in impls if not i.compiled and opts.impls]
    if named:
        log(f"error: the sweep times compiled implementations only; not {', '.join(named)}")
        return None
    return [i for i in impls if i.compiled]


def refusals(results: list[dict[str, Any]]) -> None:
    """Mark the entries of pairs refused for their size (memory) as `refused`, in place."""
    for e in results:
        if e["status"] == "failed" and TOO_BIG.search(e["reason"]):
            e["status"] = "refused"


def full_batches(pairs: list[Pair], opts: argparse.Namespace) -> list[str]:
    """Raise a calibrated v3 or v4 N to one whole batch per thread (GRAPH_BATCH samples each); returns the
    notes saying where. A batch computes all of its lanes however few samples fill it (run_graph_batches), so
    a run of fewer samples, as a large M calibrates to, would count the empty lanes' work as the samples'."""
    if opts.iters:
        return []
    raised: dict[tuple[str, int], int] = {}
    for p in pairs:
        floor = GRAPH_BATCH * (p.threads or 1)
        if p.live and p.level in ("v3", "v4") and p.iters < floor:
            raised[p.level, floor] = p.iters
            p.iters = floor
    return [f"graph {lv} at {opts.ops:,} ops: N raised from the calibrated {n:,} to {floor:,}, one batch of "
            f"{GRAPH_BATCH} samples per thread" for (lv, floor), n in raised.items()]


def one_size(states: list[ImplState], opts: argparse.Namespace, most: int, host: dict[str, Any]) -> Run:
    """Every level of every implementation at opts.ops: verified, calibrated, timed in paired rounds, checked."""
    run = Run(host, most, states)
    run.pairs = make_pairs(states, opts, most)
    verify_all(run.pairs, opts)
    run.calibrations = calibrate_all(run.pairs, opts)
    raised = full_batches(run.pairs, opts)
    time_all(run.pairs, opts)
    run.notes = raised + cross_check(run.pairs, opts)
    run.results = summarise(run.pairs)
    refusals(run.results)
    run.codon_vs_best_port = compare_paired(run.pairs, run.results)
    run.notes += short_runs(run.pairs, run.results, opts)
    return run


def sweep(opts: argparse.Namespace, argv: list[str] | None = None) -> int:
    """The whole sweep from parsed options; returns the exit status (bench's: 0, 1 failures, 2, 130)."""
    begun = begin(opts, sweep_impls)
    if isinstance(begun, int):
        return begun
    impls, started = begun
    try:
        host = machine_info(started)
        host["caches"] = machine.caches()
        most = opts.threads or host["cores"]
        states = [ImplState(i) for i in impls]
        build_all(states, opts)
        probe_graph(states, opts)
        sizes, failed = [], []
        for k, ops in enumerate(opts.sizes, 1):
            log(f"[size {k}/{len(opts.sizes)}] --ops {ops:,}")
            opts.ops = ops
            run = one_size(states, opts, most, host)
            sizes.append({"ops": ops, "calibration": run.calibrations, "results": run.results,
                          "codon_vs_best_port": run.codon_vs_best_port, "notes": run.notes})
            failed += problems(run)
        failed = list(dict.fromkeys(failed))
        doc = document(host, most, states, sizes, opts, argv, started)
        path = rawfile.raw_path(opts.results_dir, host["slug"], started, FOLDER)
        if problem := rawfile.write_run(path, doc):
            log(problem)
            return 1
    except KeyboardInterrupt:
        log("interrupted: no results file written")
        return 130
    for s in states:
        if s.status is ImplStatus.SKIPPED:
            print(f"skipped  {s.impl.name}: {s.reason}")
    for size in sizes:
        for e in size["results"]:
            if e["status"] == "refused":
                print(f"refused  {e['impl']} {e['level']} at {size['ops']:,} ops: {e['reason']}")
    for line in failed:
        print(f"FAILED   {line}")
    for name in absent_caches(host["caches"]):
        print(f"note     the host reports no {name} size (sysfs): not marked on the chart")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"results: {shown} ({doc['machine']['seconds']:.0f} s, shuffle seed {opts.shuffle_seed})")
    if failed:
        print(f"sweep: {len(failed)} failure(s)" + ("" if opts.strict else " (--no-strict: exit status 0)"))
    return 1 if failed and opts.strict else 0


def absent_caches(caches: dict[str, int | None]) -> list[str]:
    """The caches whose size the host does not report."""
    return [name for name, size in caches.items() if size is None]


def document(host: dict[str, Any], most: int, states: list[ImplState], sizes: list[dict[str, Any]],
             opts: argparse.Namespace, argv: list[str] | None, started: dt.datetime) -> dict[str, Any]:
    """The sweep's raw file (schema SCHEMA): machine (with `caches`), config, implementations, and per size
    its results (every run), Codon against the best port, calibrations and notes."""
    host["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
    host["seconds"] = round((dt.datetime.now(dt.timezone.utc) - started).total_seconds(), 1)
    return {
        "generated_by": "scripts/sweep.py", "schema": SCHEMA, "kind": KIND,
        "command": shlex.join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "machine": host,
        "config": {"sizes": list(opts.sizes), "levels": list(opts.graph_levels), "min_time": opts.min_time,
                   "repeats": opts.repeats, "threads": most, "seed": opts.seed, "shuffle_seed": opts.shuffle_seed,
                   "timeout": opts.timeout, "iters": opts.iters,
                   "batch_floor": GRAPH_BATCH, "cpu_target": opts.cpu or "native",
                   "rounds_note": f"{opts.repeats} paired rounds per size (make bench: {FULL.repeats})"},
        "implementations": implementations(states, opts),
        "sizes": sizes,
        "notes": [f"{s.impl.name} refuses --workload graph (exit 2): not swept" for s in states if s.graph == "no"]
        + [f"the host reports no {name} size (sysfs)" for name in absent_caches(host["caches"])],
    }


def defaults(opts: argparse.Namespace) -> argparse.Namespace:
    """The settings bench's stages read that a sweep fixes: the graph alone, no thread scan, calibrated N."""
    opts.workloads, opts.levels, opts.thread_scan = ["graph"], None, False
    opts.python_iters, opts.verify_iters = None, VERIFY_ITERS
    opts.ci, opts.peers_by_default = False, False
    opts.graph_levels = opts.graph_levels or list(WORKLOAD_LEVELS["graph"])
    return opts
