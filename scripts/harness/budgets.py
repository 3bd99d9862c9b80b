"""The CI budgets (`make bench-ci`): statistics of adjacent runs, and instruction counts, held to limits, so
that a change that loses Codon's parity with C, a level's vectors or v4's threads fails CI."""
from __future__ import annotations

import argparse
import platform
import random
import re
import shlex
import shutil
from dataclasses import dataclass
from typing import Any

from harness import analysis
from harness.build import make_command, missing_paths
from harness.processes import failure, log, run_process
from harness.state import ImplState, ImplStatus, Pair
from harness.timing import timed_run


@dataclass(frozen=True)
class Budget:
    """A statistic of adjacent runs of one workload that `make bench-ci` holds to a limit.

    kind "time": the subject's ns/iter over the baseline's, one ratio per adjacent pair of runs
    (the two back to back, in a random order); the median must stay <= limit.
    kind "busy": the subject's process CPU time over its wall time, one value per run: how many
    of its threads were busy at once, on average; the median must stay >= limit.
    kind "instructions": the subject's instructions per sample over the baseline's, counted by
    callgrind (one value, repeatable: see the "CI instruction budgets" comment above COUNT_CPU); it must
    stay <= limit.
    A budget is breached only when the 95% interval of that median lies wholly past the limit.
    """
    subject: tuple[str, str]
    baseline: tuple[str, str] | None
    limit: float
    why: str
    kind: str = "time"
    workload: str = "softplus"

    @property
    def name(self) -> str:
        """How the report names it: `codon v4 / codon v3`, `codon v4 cpu/wall`, `c graph v3 / c graph v2`."""
        def side(impl_level: tuple[str, str]) -> str:
            return " ".join([impl_level[0]] + (["graph"] if self.workload == "graph" else []) + [impl_level[1]])
        if self.baseline is None:
            return f"{side(self.subject)} cpu/wall"
        return f"{side(self.subject)} / {side(self.baseline)}" + (" instr" if self.kind == "instructions" else "")


# The budgets are judged on CI.budget_pairs adjacent pairs of runs each; a budget fails only when the 95%
# interval of its pairs' median lies wholly past its limit. The timed budgets are judged only when other
# processes left FREE_TWO CPUs free (v4's) or FREE_ONE (the rest). Each limit sits between what every port
# measured and what a sabotaged build measured: the figures are in docs/benchmarking.md (`make bench-ci`).
V2_LIMIT, V3_LIMIT, THREAD_GAIN, THREAD_BUSY = 1.25, 1.35, 1.0, 1.3
FREE_ONE, FREE_TWO = 0.75, 1.75      # CPUs free of other processes that the budgets (v4's) need judged
SIMD_GAIN = {8: 2.8, 4: 2.0, 2: 1.3}  # the least v3 / v2 speed-up by vector width (at least this wide)
GRAPH_SIMD_GAIN = {8: 2.5, 4: 2.0, 2: 1.3}   # the same for the graph workload


def simd_gain(width: int | None, gains: dict[int, float] | None = None) -> float | None:
    """The v3-over-v2 speed-up a program of this vector width must show (None: none to check);
    gains: by width, SIMD_GAIN (softplus) unless given."""
    gains = gains or SIMD_GAIN
    if width is None:                 # a program that does not say: the narrowest promise
        return min(gains.values())
    return next((gain for least, gain in sorted(gains.items(), reverse=True) if width >= least), None)


def budgets(names: list[str], cpus: int, widths: dict[str, int | None] | None = None) -> list[Budget]:
    """The CI budgets for the compiled implementations `names` (with their vector widths) on `cpus` CPUs."""
    widths = widths or {}
    out = [Budget(("codon", "v2"), ("c", "v2"), V2_LIMIT, f"Codon's tape no slower than {V2_LIMIT}x C's"),
           Budget(("codon", "v3"), ("c", "v3"), V3_LIMIT, f"Codon's v3 no slower than {V3_LIMIT}x C's")]
    for n in names:
        gain = simd_gain(widths.get(n))
        if gain:
            out.append(Budget((n, "v3"), (n, "v2"), 1 / gain, f"{n} v3 at least {gain}x its v2 (vectorized"
                              + (f", width {widths[n]})" if widths.get(n) else ")")))
    for n in names:
        gain = simd_gain(widths.get(n), GRAPH_SIMD_GAIN)
        if gain:
            out.append(Budget((n, "v3"), (n, "v2"), 1 / gain, f"{n} graph v3 at least {gain}x its graph v2 "
                              "(batched" + (f", width {widths[n]})" if widths.get(n) else ")"),
                              workload="graph"))
    if cpus >= 2:
        for n in names:
            out += [Budget((n, "v4"), (n, "v3"), 1 / THREAD_GAIN, f"{n} v4 at least {THREAD_GAIN:g}x its v3's "
                           f"speed ({cpus} threads)"),
                    Budget((n, "v4"), None, THREAD_BUSY, f"{n} v4 keeps {THREAD_BUSY} CPUs busy on average "
                           f"({cpus} threads)", kind="busy")]
    return out


def busy_elsewhere(cpus: int, other: float | None, free: float) -> str:
    """Why budgets needing `free` CPUs cannot be judged ('' when they can): other processes held them."""
    if other is not None and other > cpus - free:
        return f"other processes kept {other:.2f} of the {cpus} CPUs busy while timing (more than {cpus - free:.2f})"
    return ""


def time_budgets(pairs: list[Pair], wanted: list[Budget], opts: argparse.Namespace) -> dict[str, list[float]]:
    """Each budget's values (see Budget), from opts.budget_pairs rounds of adjacent runs.

    Every round runs the "time" budgets in a shuffled order, the subject and baseline of each
    back to back in a random order (seeded from the recorded shuffle seed); a "busy" budget
    takes its values from its subject's runs in that phase. The runs are kept in each pair's
    `budget_runs`, and their sums checked with the timed ones. A budget whose pairs were not
    both timed gets no values.
    """
    live = {(p.impl.name, p.workload, p.level): p for p in pairs if p.live and p.runs and not p.scan}

    def pair_of(impl_level: tuple[str, str], b: Budget) -> Pair | None:
        return live.get((impl_level[0], b.workload, impl_level[1]))
    timed = [b for b in wanted if b.baseline and pair_of(b.subject, b) and pair_of(b.baseline, b)]
    values: dict[str, list[float]] = {b.name: [] for b in wanted}
    rng = random.Random(opts.shuffle_seed + 1)
    for rnd in range(1, opts.budget_pairs + 1):
        order = timed[:]
        rng.shuffle(order)
        for b in order:
            duo = [pair_of(b.subject, b), pair_of(b.baseline, b)]
            rng.shuffle(duo)
            per_iter = {}
            for pair in duo:
                if not pair.live:
                    break
                rec, _ = timed_run(pair, opts, f"budget run {rnd}")
                if rec is None:
                    log(f"[budget round {rnd}/{opts.budget_pairs}] {pair.key}: FAILED: {pair.reason}")
                    break
                pair.budget_runs.append(rec)
                per_iter[(pair.impl.name, pair.level)] = rec["seconds"] / pair.iters
            if len(per_iter) == 2 and per_iter[b.baseline] > 0:
                values[b.name].append(per_iter[b.subject] / per_iter[b.baseline])
                log(f"[budget round {rnd}/{opts.budget_pairs}] {b.name:<38} {values[b.name][-1]:6.3f}")
    for b in wanted:
        subject = pair_of(b.subject, b)
        if b.kind == "busy" and subject:
            values[b.name] = [r["cpu"] / r["wall"] for r in subject.budget_runs if r["wall"] > 0]
    return values


def judge(b: Budget, values: list[float]) -> dict[str, Any]:
    """A budget's verdict from its values: ok, BREACH (the interval wholly past the limit) or skip."""
    out: dict[str, Any] = {"name": b.name, "kind": b.kind, "limit": b.limit, "why": b.why, "values": values}
    if not values:
        return {**out, "verdict": "skip"}
    low, high, coverage = analysis.median_ci(values)
    past = high < b.limit if b.kind == "busy" else low > b.limit
    return {**out, "median": analysis.median(values), "interval": [low, high], "coverage": coverage,
            "verdict": "BREACH" if past else "ok"}


def check_budgets(values: dict[str, list[float]], wanted: list[Budget]) -> tuple[list[str], int, list[dict[str, Any]]]:
    """Report lines for each budget, the number of breaches, and the verdicts for the raw file."""
    lines, verdicts = [], []
    for b in wanted:
        v = judge(b, values.get(b.name, []))
        verdicts.append(v)
        if v["verdict"] == "skip":
            lines.append(f"  skip    {b.name:<38} (not timed) - {b.why}")
            continue
        low, high = v["interval"]
        bound = f">= {b.limit:.2f}" if b.kind == "busy" else f"<= {b.limit:.3f}"
        count = {"time": f"{len(v['values'])} pairs", "busy": f"{len(v['values'])} runs",
                 "instructions": f"callgrind, CPU={COUNT_CPU} build"}[b.kind]
        lines.append(f"  {v['verdict']:<6}  {b.name:<38} = {v['median']:.3f} [{low:.3f}, {high:.3f}]  "
                     f"({count}; limit {bound}: {b.why})")
    return lines, sum(v["verdict"] == "BREACH" for v in verdicts), verdicts


# --- CI instruction budgets ------------------------------------------------------------------
# Time tells a graph v3 whose lane loops run scalar from one whose loops are vectors only by a thin
# margin; instructions tell at once, and barely vary from run to run. callgrind counts each graph
# level's instructions at COUNT_SAMPLES samples of COUNT_OPS ops (the difference is the per-sample
# cost, without start-up or recording) on a build for COUNT_CPU (valgrind cannot run AVX-512 code, so
# the same binaries are counted on every host), with OPENBLAS_NUM_THREADS=1 (Codon's runtime would
# otherwise start OpenBLAS threads that callgrind counts while they spin). GRAPH_V3_INSTRUCTIONS sits
# between every port's graph v3 / v2 and the C port's with scalar lanes: the counts are in
# docs/benchmarking.md (`make bench-ci`).
COUNT_CPU, COUNT_SAMPLES, COUNT_OPS, GRAPH_V3_INSTRUCTIONS = "x86-64-v3", (32, 64), 10_000, 0.24
COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)


def count_instructions(argv: list[str], opts: argparse.Namespace) -> tuple[int | None, str]:
    """callgrind's count of the instructions argv executes: (count, '') or (None, why)."""
    proc = run_process(["env", "OPENBLAS_NUM_THREADS=1", "valgrind", "--tool=callgrind",
                        "--callgrind-out-file=/dev/null", *argv], opts.timeout * 4)
    found = COLLECTED.search(proc.stderr)
    if proc.returncode != 0 or not found:
        return None, failure(proc, opts.timeout * 4)
    return int(found[1]), ""


def instruction_budgets(states: list[ImplState],
                        opts: argparse.Namespace) -> tuple[list[Budget], dict[str, list[float]],
                                                                                     list[str], list[str]]:
    """The graph v3 instruction budgets (see above): (budgets, values, skip lines, failures)."""
    if platform.machine() != "x86_64":
        return [], {}, [f"  skip    graph v3 instructions: not an x86-64 host (counted on CPU={COUNT_CPU} builds)"], []
    if not shutil.which("valgrind"):
        return [], {}, ["  skip    graph v3 instructions: valgrind not found (Debian's valgrind; .ci/run "
                        "installs it)"], []
    build = f"{opts.build_dir}/cpu-{COUNT_CPU}"
    wanted, values, problems = [], {}, []
    for state in states:
        impl = state.impl
        if state.status is not ImplStatus.OK or not impl.compiled or state.graph != "yes" or not impl.target \
                or not {"v2", "v3"} <= set(impl.graph_levels):
            continue
        b = Budget((impl.name, "v3"), (impl.name, "v2"), GRAPH_V3_INSTRUCTIONS,
                   f"{impl.name} graph v3 at most {GRAPH_V3_INSTRUCTIONS}x its v2's instructions per sample "
                   "(lane loops vectorized)", kind="instructions", workload="graph")
        wanted.append(b)
        if not opts.no_build:
            argv = make_command(impl, build, COUNT_CPU)
            log(f"[instructions] {impl.name}: {shlex.join(argv[2:])}")
            made = run_process(argv, timeout=1800)
            if made.returncode != 0 or missing_paths(impl, build):
                problems.append(f"{impl.name}: CPU={COUNT_CPU} build for the instruction count: "
                                f"{failure(made, 1800)}")
                continue
        per_sample = {}
        for level in ("v2", "v3"):
            counts = []
            for n in COUNT_SAMPLES:
                got, why = count_instructions(impl.command(build) + ["--workload", "graph", "--ops", str(COUNT_OPS),
                                                                     "--level", level, "--iters", str(n), "--json"],
                                              opts)
                if got is None:
                    problems.append(f"{impl.name} graph {level}: callgrind run at N={n}: {why}")
                    break
                counts.append(got)
            if len(counts) == 2:
                per_sample[level] = (counts[1] - counts[0]) / (COUNT_SAMPLES[1] - COUNT_SAMPLES[0])
                log(f"[instructions] {impl.name} graph {level}: {per_sample[level]:,.0f} per sample")
        if len(per_sample) == 2 and per_sample["v2"] > 0:
            values[b.name] = [per_sample["v3"] / per_sample["v2"]]
    return wanted, values, [], problems


def judge_all(values: dict[str, list[float]], wanted: list[Budget],
              host: dict[str, Any]) -> tuple[list[str], int, list[dict[str, Any]]]:
    """check_budgets, less the budgets that other processes' load while they were timed leaves
    unjudgeable (a line says why)."""
    load = host.get("other_load_budgets")
    crowded = busy_elsewhere(host["cores"], load, FREE_ONE)
    busy = busy_elsewhere(host["cores"], load, FREE_TWO)
    # Instruction counts do not depend on the load: those budgets are always judged.
    dropped = [b for b in wanted if b.kind != "instructions" and (crowded or (busy and b.subject[1] == "v4"))]
    lines, breaches, verdicts = check_budgets(values, [b for b in wanted if b not in dropped])
    verdicts += [{**judge(b, []), "reason": crowded or busy} for b in dropped]
    if crowded:
        lines.append(f"  skip    every timed budget ({len(dropped)}): {crowded}: no CPU was free to time on alone")
    elif dropped:
        lines.append(f"  skip    v4 budgets ({len(dropped)}): {busy}: v4 had no free CPUs to scale on")
    return lines, breaches, verdicts
