"""The whole run of scripts/bench.py: choose the implementations, build, verify, calibrate, time, check, judge
the budgets (--ci), write the raw file, and print the summary; returns the exit status."""
from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import machine
from harness import ROOT, budgets, rawfile
from harness.build import build_all, probe_gpu, probe_graph, shown_command, toolchain
from harness.calibrate import calibrate_all
from harness.host import machine_info
from harness.processes import log
from harness.state import ImplState, ImplStatus, Pair, make_pairs, thread_counts
from harness.timing import compare_paired, short_runs, summarise, time_all
from harness.verify import cross_check, verify_all
from impls import DEFAULT, LEVEL_ORDER, Impl


@dataclass
class Run:
    """What a run measured: the states, pairs and results entries, and the budgets' judgement (--ci)."""
    host: dict[str, Any]
    most: int                        # the most threads (v4)
    states: list[ImplState]
    pairs: list[Pair] = field(default_factory=list)
    calibrations: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    codon_vs_best_port: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    budget_lines: list[str] = field(default_factory=list)
    breaches: int = 0
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    count_problems: list[str] = field(default_factory=list)


def chosen(opts: argparse.Namespace) -> list[Impl] | None:
    """The implementations to run; None (after an error line) when --impls names one the registry lacks."""
    registry = DEFAULT if opts.registry is None else opts.registry      # --registry: read as it was parsed
    names = [i.name for i in registry]
    if opts.impls:
        unknown = [n for n in opts.impls if n not in names]
        if unknown:
            log(f"error: unknown implementation(s) {', '.join(unknown)}; known: {', '.join(names)}")
            return None
        return [i for i in registry if i.name in opts.impls]
    return [i for i in registry if by_default(i, opts.peers_by_default, opts.ci)]


def by_default(impl: Impl, peers: bool, ci: bool) -> bool:
    """Whether a run without --impls times impl: the peers only where the preset takes them (make bench), and
    under --ci only the implementations whose budgets it holds (and the CPython port), those its margins were
    measured on (Impl.ci); make test checks every implementation."""
    return (peers or impl.kind != "peer") and (impl.ci or not ci)


def measure(impls: list[Impl], opts: argparse.Namespace, started: dt.datetime) -> Run:
    """Build, probe, verify, calibrate, time, judge the budgets (--ci) and check the timed sums."""
    host = machine_info(started)
    run = Run(host, opts.threads or host["cores"], [ImplState(i) for i in impls])
    build_all(run.states, opts)
    probe_graph(run.states, opts)
    probe_gpu(run.states, opts)
    run.pairs = make_pairs(run.states, opts, run.most)
    verify_all(run.pairs, opts)
    run.calibrations = calibrate_all(run.pairs, opts)
    before = machine.cpu_clock()
    time_all(run.pairs, opts)
    after = machine.cpu_clock()
    host["other_load"], host["steal"] = machine.other_load(before, after), machine.steal(before, after)
    wanted: list[budgets.Budget] = []
    count_skips: list[str] = []
    if opts.ci:
        wanted = budgets.budgets([s.impl.name for s in run.states if s.impl.compiled], run.most,
                                 {s.impl.name: s.vector["vector_width"] for s in run.states})
        before = machine.cpu_clock()
        values = budgets.time_budgets(run.pairs, wanted, opts)
        host["other_load_budgets"] = machine.other_load(before, machine.cpu_clock())
        if "graph" in opts.workloads:
            counted, counts, count_skips, run.count_problems = budgets.instruction_budgets(run.states, opts)
            wanted += counted
            values.update(counts)
    run.notes = cross_check(run.pairs, opts)
    run.notes += [f"{s.impl.name} refuses --workload graph (exit 2): not timed for the graph"
                  for s in run.states if s.graph == "no"]
    run.notes += [f"{s.impl.name} {', '.join(s.impl.gpu_levels)} not timed: {s.gpu[len('no: '):]}"
                  for s in run.states if s.gpu.startswith("no: ")]
    run.results = summarise(run.pairs)
    run.codon_vs_best_port = compare_paired(run.pairs, run.results)
    run.notes += short_runs(run.pairs, run.results, opts)
    if opts.ci:
        run.budget_lines, run.breaches, run.verdicts = budgets.judge_all(values, wanted, host)
        run.budget_lines += count_skips
    return run


def implementations(states: list[ImplState], opts: argparse.Namespace) -> list[dict[str, Any]]:
    """The raw file's `implementations`: each one's status, version, target, command and toolchain."""
    return [{"name": s.impl.name, "kind": s.impl.kind, "label": s.impl.label, "autograd": s.impl.autograd,
             "compiled": s.impl.compiled, "status": s.status.value, "reason": s.reason, "version": s.version,
             **s.vector, "graph": s.graph, "build_seconds": s.build_seconds,
             "command": shown_command(s.impl.command(opts.build_dir)),
             **(toolchain(s.impl, opts) if s.status is ImplStatus.OK else {})}
            for s in states]


def document(run: Run, opts: argparse.Namespace, argv: list[str] | None, started: dt.datetime) -> dict[str, Any]:
    """The raw file's document (schema rawfile.SCHEMA)."""
    doc = {
        "generated_by": "scripts/bench.py", "schema": rawfile.SCHEMA,
        "command": shlex.join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "machine": run.host,
        "config": {"min_time": opts.min_time, "iters": opts.iters, "python_iters": opts.python_iters,
                   "verify_iters": opts.verify_iters, "repeats": opts.repeats, "threads": run.most,
                   "thread_counts": thread_counts(run.most, opts.thread_scan), "seed": opts.seed,
                   "shuffle_seed": opts.shuffle_seed, "timeout": opts.timeout,
                   "levels": opts.levels or LEVEL_ORDER, "graph_levels": list(opts.graph_levels),
                   "workloads": opts.workloads, "ops": opts.ops,
                   "cpu_target": opts.cpu or "native", "ci": opts.ci,
                   **({"budget_pairs": opts.budget_pairs} if opts.ci else {})},
        "implementations": implementations(run.states, opts),
        "calibration": run.calibrations,
        "results": run.results,
        "codon_vs_best_port": run.codon_vs_best_port,
        "notes": run.notes,
        **({"budgets": run.verdicts} if opts.ci else {}),
    }
    doc["machine"]["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
    doc["machine"]["seconds"] = round((dt.datetime.now(dt.timezone.utc) - started).total_seconds(), 1)
    return doc


def problems(run: Run) -> list[str]:
    """What makes a strict run fail: failed builds and probes, refused levels, failed pairs and counts."""
    states, results = run.states, run.results
    out = [f"{s.impl.name}: {s.status.value}: {s.reason}" for s in states if s.status is ImplStatus.BUILD_FAILED]
    out += [f"{s.impl.name}: graph probe {s.graph}" for s in states if s.graph.startswith("failed")]
    out += [f"{s.impl.name}: GPU probe {s.gpu}" for s in states if s.gpu.startswith("failed")]
    out += [f"{s.impl.name}: refuses --workload graph, which its registry entry lists "
            f"({', '.join(s.impl.graph_levels)})" for s in states if s.graph == "no" and s.impl.graph_levels]
    out += [f"{e['impl']} {e['workload']} {e['level']}: {e['reason']}" for e in results if e["status"] == "absent"]
    out += run.count_problems
    out += [f"{e['impl']} {e['workload']} {e['level']}" + (f" T={e['threads']}" if e["level"] == "v4" else "")
            + f": {e['reason']}" for e in results if e["status"] == "failed"]
    return out


def summary_table(results: list[dict[str, Any]], workload: str) -> str:
    """Median ns/iter (softplus) or ns/op (graph), implementation x level, as plain text."""
    unit = "ns_per_op" if workload == "graph" else "ns_per_iter"
    mine = [e for e in results if e["workload"] == workload and not e["scan"]]
    ok = [e for e in mine if e["status"] == "ok"]
    levels = [lv for lv in LEVEL_ORDER if any(e["level"] == lv for e in ok)]
    cell = {(e["impl"], e["level"]): e for e in mine}
    rows = [f"{workload} {unit.replace('_per_', '/')} (median)".ljust(28) + "".join(f"{lv:>12}" for lv in levels)]
    for name in dict.fromkeys(e["impl"] for e in mine):
        cells = []
        for lv in levels:
            e = cell.get((name, lv))
            cells.append(f"{e[unit]:12.2f}" if e and e["status"] == "ok"
                         else f"{'FAILED' if e and e['status'] == 'failed' else '-':>12}")
        rows.append(name.ljust(28) + "".join(cells))
    return "\n".join(rows)


def interrupt(signum: int, frame: object) -> None:
    """Signal handler: turn SIGTERM into the KeyboardInterrupt that Ctrl-C raises."""
    raise KeyboardInterrupt


def begin(opts: argparse.Namespace, choose: Callable[[argparse.Namespace], list[Impl] | None]
          ) -> tuple[list[Impl], dt.datetime] | int:
    """The start of a `make bench` or `make sweep` run: SIGTERM (a CI timeout, `kill`) made to end it as
    Ctrl-C does, children killed and no results file; the implementations `choose` picks, and the results
    folder checked, before anything is built. (impls, the start time), or exit status 2, its error said."""
    signal.signal(signal.SIGTERM, interrupt)
    impls = choose(opts)
    if impls is None:
        return 2
    if problem := rawfile.unwritable(opts.results_dir):
        log(f"error: {problem}")
        return 2
    return impls, dt.datetime.now(dt.timezone.utc)

def print_summary(run: Run, doc: dict[str, Any], path: Path, opts: argparse.Namespace) -> int:
    """The summary on stdout (tables, Codon against the best port, failures, notes, budgets); the exit status."""
    for workload in opts.workloads:
        if any(e["workload"] == workload for e in run.results):
            print(summary_table(run.results, workload))
    if run.codon_vs_best_port:
        print("codon / best port, per sample, median of paired ratios from adjacent runs [95% interval]; "
              "CPU time, v4 wall time:")
        for key, e in run.codon_vs_best_port.items():
            print(f"  {key:<22} {e['median']:6.3f} [{e['interval'][0]:.3f}, {e['interval'][1]:.3f}]  "
                  f"{e['read']:<7} ({e['port']})")
    failed = problems(run)
    for s in run.states:
        if s.status is ImplStatus.SKIPPED:
            print(f"skipped  {s.impl.name}: {s.reason}")
    for line in failed:
        print(f"FAILED   {line}")
    for line in run.notes:
        print(f"note     {line}")
    print(f"results: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
          f"({doc['machine']['seconds']:.0f} s, shuffle seed {opts.shuffle_seed})")
    status = 1 if failed and opts.strict else 0
    if failed:
        print(f"bench: {len(failed)} failure(s)" + ("" if opts.strict else " (--no-strict: exit status 0)"))
    if opts.ci:
        print(f"budgets (median of {opts.budget_pairs} adjacent pairs or runs, [95% interval]; a breach is an "
              "interval wholly past the limit):")
        print("\n".join(run.budget_lines))
        if run.breaches or (failed and opts.strict):
            print(f"bench-ci: FAILED ({run.breaches} budget breach(es), {len(failed)} failure(s))")
            status = 1
        else:
            print(f"bench-ci: passed ({sum(v['verdict'] == 'ok' for v in run.verdicts)} budgets met, "
                  f"{sum(v['verdict'] == 'skip' for v in run.verdicts)} skipped)")
    return status


def bench(opts: argparse.Namespace, argv: list[str] | None = None) -> int:
    """The whole run from parsed options (argv: the command line, for the record); returns the exit status."""
    begun = begin(opts, chosen)
    if isinstance(begun, int):
        return begun
    impls, started = begun
    try:
        run = measure(impls, opts, started)
        doc = document(run, opts, argv, started)
        path = rawfile.raw_path(opts.results_dir, run.host["slug"], started)
        if problem := rawfile.write_run(path, doc):
            log(problem)
            return 1
    except KeyboardInterrupt:
        log("interrupted: no results file written")
        return 130
    return print_summary(run, doc, path, opts)
