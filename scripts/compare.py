#!/usr/bin/env python3
"""Two programs (two builds of one, or two implementations), level by level, in adjacent pairs of runs.

    scripts/compare.py --a OLD --b NEW [--workloads softplus,graph] [--levels v0,v2] [--pairs 9]

Each (workload, level) gets its N from A (harness/calibrate.py's rule, until a run lasts --min-time).
Then --pairs rounds: every round runs each (workload, level)'s A and B back to back, in a random order
within the pair and with the levels shuffled, so that drift hits both runs of a pair and cancels in
their ratio. A pair's value is B's timed-region seconds over A's (the programs' own JSON `seconds`).
The report gives the median of those ratios and its 95% distribution-free interval (analysis.median_ci):
"tie" when the interval contains 1.0, else "B faster" or "B slower".

Every run's sums are checked: by default A's and B's must be identical at the same N (a refactoring
keeps every digit); --contract-tolerance accepts the contract's 1e-12 / 1e-9 instead (two
implementations). Exit status: 0, 1 when sums differ or a run fails, 2 for bad usage.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT, analysis, rawfile  # noqa: E402
from harness.calibrate import calibration  # noqa: E402
from harness.contract import DEFAULT_OPS, DEFAULT_SEED, SUM_KEYS, disagreement, record_of, tolerance  # noqa: E402
from harness.processes import checked_run, run_main  # noqa: E402
from harness.options import name_list, ops_int, positive_float, positive_int, seed_int, threads_int  # noqa: E402
from impls import ALL_LEVELS, WORKLOAD_LEVELS, WORKLOADS  # noqa: E402


def run(program: list[str], workload: str, level: str, n: int, opts: argparse.Namespace) -> dict:
    """One run's JSON record, checked against the contract (contract.parse_record); raises RuntimeError with
    the program's error line where it cannot start, times out, exits non-zero or prints something else."""
    expected = {"workload": workload, "level": level, "iters": n, "seed": opts.seed} \
        | ({"ops": opts.ops} if workload == "graph" else {})
    argv = program + (["--workload", "graph", "--ops", str(opts.ops)] if workload == "graph" else []) \
        + ["--level", level, "--iters", str(n), "--seed", str(opts.seed), "--json"] \
        + (["--threads", str(opts.threads)] if level == "v4" and opts.threads else [])
    return record_of(argv, checked_run(argv, opts.timeout, cwd=ROOT).stdout, expected)


def calibrate(program: list[str], workload: str, level: str, opts: argparse.Namespace) -> int:
    """A's N for a cell, by the harness's one rule (harness.calibrate.calibration); RuntimeError where a run
    fails, or where A's runs still last less than --min-time at the most N the programs take."""
    n, rec, _ = calibration(lambda n: run(program, workload, level, n, opts), 1, opts.min_time)
    if rec["seconds"] < opts.min_time:
        raise RuntimeError(f"{shlex.join(program)}: {workload} {level} still lasts {rec['seconds']:g} s at "
                           f"N = {n:,}, the most a program takes (contract §4), short of --min-time {opts.min_time:g}")
    return n


def command_text(text: str) -> str:
    """argparse type: a command as shell words, which shlex can split as the shell would."""
    try:
        shlex.split(text)
    except ValueError as e:                             # a quote that does not close
        raise argparse.ArgumentTypeError(f"{e}: {text}") from None
    return text


def missing(program: list[str]) -> bool:
    """Whether a command's program is absent: a path (from the repository root, where runs start) that is no
    executable file, or a name not on PATH."""
    if "/" not in program[0]:
        return shutil.which(program[0]) is None
    path = ROOT / program[0]
    return not (path.is_file() and os.access(path, os.X_OK))


def same_sums(a: dict, b: dict, workload: str, level: str, contract: bool) -> bool:
    """Whether A's and B's sums are identical, or with `contract` within the level's tolerance."""
    got, want = ([r[k] for k in SUM_KEYS[workload]] for r in (a, b))
    return not disagreement(got, want, tolerance(level) if contract else 0.0, "B", workload)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", type=command_text, required=True,
                   help="the baseline's command (shell words), e.g. build-old/autograd-c")
    p.add_argument("--b", type=command_text, required=True, help="the command compared with it")
    p.add_argument("--workloads", type=name_list, default=list(WORKLOADS),
                   help=f"workloads, comma-separated (default {','.join(WORKLOADS)})")
    p.add_argument("--levels", type=name_list, help="levels (default: every level of each workload, baselines "
                   "included)")
    p.add_argument("--pairs", type=positive_int, default=9, help="rounds of adjacent pairs (default 9)")
    p.add_argument("--min-time", type=positive_float, default=0.1,
                   help="seconds A's run lasts at least (default 0.1)")
    p.add_argument("--ops", type=ops_int, default=DEFAULT_OPS, help=f"graph ops (default {DEFAULT_OPS:,})")
    p.add_argument("--threads", type=threads_int, help="v4's --threads (default: the programs' own)")
    p.add_argument("--seed", type=seed_int, default=DEFAULT_SEED, help=f"input stream seed (default {DEFAULT_SEED})")
    p.add_argument("--shuffle-seed", type=int, help="seed of the run order (default: random, printed)")
    p.add_argument("--timeout", type=positive_float, default=300,
                   help="seconds before a run is killed as hung (default 300)")
    p.add_argument("--contract-tolerance", action="store_true",
                   help="sums within the contract's tolerances instead of identical")
    p.add_argument("--json", type=Path, help="also write every value to this file")
    opts = p.parse_args(argv)
    workloads = opts.workloads
    for given, known, what in ((workloads, WORKLOADS, "workload"), (opts.levels, ALL_LEVELS, "level")):
        unknown = [x for x in given or [] if x not in known]
        if unknown:
            p.error(f"unknown {what}(s) {', '.join(unknown)}; {what}s are {', '.join(known)}")
    cells = [(w, lv) for w in workloads for lv in WORKLOAD_LEVELS[w] if not opts.levels or lv in opts.levels]
    if not cells:
        p.error("no level to compare")
    a, b = shlex.split(opts.a), shlex.split(opts.b)
    for name, program in (("--a", a), ("--b", b)):
        if not program or missing(program):
            p.error(f"{name}: no such program: {program[0] if program else '(empty)'}")
    if opts.json and (problem := rawfile.unwritable_file(opts.json)):
        p.error(f"--json: {problem}")
    seed = opts.shuffle_seed if opts.shuffle_seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    problems: list[str] = []
    iters, ratios = {}, {c: [] for c in cells}
    try:
        for cell in cells:
            iters[cell] = calibrate(a, *cell, opts)
            print(f"[calibrate] {' '.join(cell)}: N = {iters[cell]:,}", file=sys.stderr, flush=True)
        for rnd in range(1, opts.pairs + 1):
            order = cells[:]
            rng.shuffle(order)
            for cell in order:
                sides = [("a", a), ("b", b)]
                rng.shuffle(sides)
                got = {side: run(prog, *cell, iters[cell], opts) for side, prog in sides}
                if not same_sums(got["a"], got["b"], *cell, opts.contract_tolerance):
                    keys = SUM_KEYS[cell[0]]
                    problems.append(f"{' '.join(cell)} N={iters[cell]}: sums differ: "
                                    f"{[got['a'][k] for k in keys]} vs {[got['b'][k] for k in keys]}")
                if got["a"]["seconds"] > 0:
                    ratios[cell].append(got["b"]["seconds"] / got["a"]["seconds"])
            print(f"[round {rnd}/{opts.pairs}] done", file=sys.stderr, flush=True)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"B / A, timed-region seconds, median of {opts.pairs} adjacent pairs [95% interval]   "
          f"A = {opts.a}   B = {opts.b}   (shuffle seed {seed})")
    rows = []
    for cell in cells:
        r = analysis.paired_reading(ratios[cell])
        (low, high), read = r["interval"], {"tie": "tie", "faster": "B faster", "slower": "B slower"}[r["read"]]
        print(f"  {cell[0]:<9} {cell[1]:<11} N={iters[cell]:<12,} {r['median']:6.3f} [{low:.3f}, {high:.3f}]  {read}")
        rows.append({"workload": cell[0], "level": cell[1], "iters": iters[cell], **r, "read": read})
    for line in problems:
        print(f"FAILED   {line}")
    if opts.json:
        try:
            rawfile.write_atomic(opts.json, json.dumps({"generated_by": "scripts/compare.py", "a": opts.a,
                                                        "b": opts.b, "pairs": opts.pairs, "min_time": opts.min_time,
                                                        "shuffle_seed": seed, "rows": rows, "problems": problems},
                                                       indent=1) + "\n")
        except OSError as e:
            print(rawfile.write_error(e), file=sys.stderr)
            return 1
    return 1 if problems else 0


if __name__ == "__main__":
    run_main(main)
