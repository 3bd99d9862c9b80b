"""`make run`: the Codon program at every level of both workloads, then Codon against the C, Zig and Rust ports.

    scripts/run.py [--program build/autograd] [--min-time 0.25] [--ports c,zig,rust] [--pairs 5]
                   [--run-time 0.03] [--shuffle-seed S] [--timeout 60] [--no-compare]

1. The ladder. A fixed sample count lasts seconds on a slow machine and milliseconds on a fast one, where
thread start-up would dominate v4; so each level's count is calibrated first (by the harness's rule, from a
small count until a run lasts --min-time), then a run at that count is shown. The table is the program's
own (its header and columns); "vs v0" compares the ns per sample of the rows shown, since each level runs
with its own count. A GPU level (v5) runs where the program finds a CUDA device, and is skipped with a
line saying why where it does not.

2. The comparison (--no-compare leaves it out): the Codon program against each port of --ports (names
from the registry, scripts/impls.py), each built in --program's folder; a port whose program is not there
(make skipped it: its compiler is missing) is a `skip:` line. At every level v0-v4 of both workloads, at
one N: the ladder's calibrated N, halved while a run still lasts --run-time (calibrated on up from it
where the ladder's runs were shorter). Each cell is verified first: one run of the port and one of Codon
at that N, their sums within the contract's tolerance (harness.contract.tolerance); a cell that disagrees is a
FAILED line with the numbers, and is not timed. Then --pairs rounds: every round runs each
(workload, level, port) cell once, Codon and the port back to back in a random order, the cells shuffled
(the shuffle's seed is printed); every pair's sums are checked the same way. A pair's value is Codon's time
over the port's by the clock impls.ranking_clock names for two compiled programs: the timed region's CPU
time at v0-v3, its wall time at v4. The table shows each cell's median ratio (below 1.00 Codon is faster),
marked `≈` (a tie) where the median's distribution-free interval (analysis.paired_reading) holds 1.00. It is
a quick look; the last line points to `make bench`, which ranks every implementation with 95% intervals.

Exit status: 0; 1 when a comparison's sums disagree or one of its runs fails (after the whole table), or when
a run of the ladder fails (exits non-zero, hangs past --timeout, prints no contract record, or still lasts less
than --min-time at the most N a program takes: one `error:` line, and it stops there); 2 for bad usage.
"""
from __future__ import annotations

import argparse
import os
import random
import shlex
import sys
from dataclasses import dataclass

from harness import analysis
from harness.build import missing_paths
from harness.calibrate import calibration
from harness.contract import DEFAULT_SEED, disagreement, record_of, sums_of, tolerance
from harness.options import name_list, positive_float, positive_int
from harness.processes import checked_run, run_main
from harness.state import Pair, run_pair
from impls import DEFAULT, GPU_LEVELS, LEVELS, WORKLOAD_LEVELS, Impl, ranking_clock
from harness.rundata import TIE

LADDER = {  # workload: (extra arguments, levels, first count to try)
    "softplus": ([], LEVELS + GPU_LEVELS, 100_000),
    "graph": (["--workload", "graph"], [lv for lv in LEVELS if lv in WORKLOAD_LEVELS["graph"]], 16),
}


def refusal(program: str, level: str, timeout: float) -> str:
    """Why the program refuses a GPU level here (its error line), or '' when it runs it."""
    proc = checked_run([program, "--level", level, "--iters", "1", "--json"], timeout, check=False)
    if proc.returncode == 2 and proc.stderr.startswith(f"error: --level {level} needs"):
        return proc.stderr.strip()[len("error: "):]
    return ""


def calibrated(program: str, args: list[str], level: str, start: int, min_time: float, timeout: float) -> dict:
    """The JSON record of the first run, from `start` samples by the harness's one rule
    (harness.calibrate.calibration), that lasts min_time seconds; RuntimeError where a run fails, prints
    no contract record, or still lasts less at the most N the programs take."""
    workload = "graph" if "graph" in args else "softplus"

    def one(n: int) -> dict:
        argv = [program, *args, "--level", level, "--iters", str(n), "--json"]
        return record_of(argv, checked_run(argv, timeout).stdout, {"workload": workload, "level": level, "iters": n})
    n, record, _ = calibration(one, start, min_time)
    if record["seconds"] < min_time:
        raise RuntimeError(f"{program}: {workload} {level} still lasts {record['seconds']:g} s at N = {n:,}, "
                           f"the most a program takes (contract §4), short of {min_time:g} s")
    return record


def shown_run(program: str, args: list[str], record: dict, timeout: float) -> tuple[str, str, float]:
    """The program's own header and text row for a run at this record's N, and that row's ns/iter."""
    argv = [program, *args, "--level", record["level"], "--iters", str(record["iters"])]
    out = checked_run(argv, timeout).stdout.splitlines()
    try:
        header, line = out[0], out[1]
        header.index("vs v0")
        return header, line, float(line.split()[header.split().index("ns/iter")])
    except (IndexError, ValueError):
        raise RuntimeError(f"{shlex.join(argv)}: bad output: not the contract's table "
                           f"(a header with ns/iter and vs v0, then a row): {out[:2]!r}") from None


def with_vs_v0(header: str, line: str, ns: float, v0_ns: float | None) -> str:
    """The row with its "vs v0" cell set to v0's ns per sample over this row's."""
    start = header.index("vs v0") - 3   # the column is right-aligned: "   vs v0" ends where it ends
    cell = f"{v0_ns / ns:.1f}x" if v0_ns and ns else "-"
    width = len("vs v0") + 3
    return line[:start] + cell.rjust(width) + line[start + width:]


# --- 2. the comparison ------------------------------------------------------------------------

PORTS = {impl.name: impl for impl in DEFAULT if impl.kind == "port" and impl.compiled}
MAKE_BENCH = "for the ranked comparison of every implementation, with 95% intervals: make bench (about 15-30 minutes)"


def port_list(text: str) -> list[Impl]:
    """argparse type: comma-separated names of compiled ports in the registry."""
    names = name_list(text)
    unknown = [n for n in names if n not in PORTS]
    if unknown or len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(f"{', '.join(unknown) or 'a name twice'}: the compiled ports are "
                                         f"{', '.join(PORTS)}, each named once")
    return [PORTS[n] for n in names]


def plural(n: int, noun: str) -> str:
    """'1 round', '5 rounds'."""
    return f"{n} {noun}{'s' * (n != 1)}"


def comparison_iters(program: str, args: list[str], record: dict, run_time: float, timeout: float) -> int:
    """The N a cell is compared at: the ladder's calibrated N (record), halved while a run still lasts
    run_time; where the ladder's run was shorter, calibrated on up from it by the same rule."""
    if record["seconds"] < run_time:
        record = calibrated(program, args, record["level"], record["iters"], run_time, timeout)
    n, seconds = record["iters"], record["seconds"]
    while n % 2 == 0 and seconds / 2 >= run_time:
        n, seconds = n // 2, seconds / 2
    return n


@dataclass
class Cell:
    """One (workload, level, port) of the comparison: its pairs of runs, or why it has none."""
    workload: str
    level: str
    port: Impl
    codon: Pair
    theirs: Pair
    problem: str = ""                # a run failed, or the sums disagree: not shown as a ratio
    absent: bool = False             # a level the registry does not list for the port: not compared

    @property
    def name(self) -> str:
        return f"{self.port.name} {self.workload} {self.level} at N={self.codon.iters:,}"


def checked_pair(cell: Cell, sides: list[Pair], opts: argparse.Namespace) -> dict[str, dict] | None:
    """One run of each side, in this order, their sums checked: the records by impl name, or None with
    cell.problem set."""
    got = {}
    for side in sides:
        rec, why, _ = run_pair(side, cell.codon.iters, opts)
        if rec is None:
            cell.problem = f"{side.impl.name}: {why}"
            return None
        got[side.impl.name] = rec
    bad = disagreement(sums_of(got[cell.port.name], cell.workload), sums_of(got[cell.codon.impl.name], cell.workload),
                       tolerance(cell.level), "Codon's", cell.workload)
    if bad:
        cell.problem = f"sums disagree with Codon's: {bad}"
        return None
    return got


def compare(opts: argparse.Namespace, records: dict[tuple[str, str], dict]) -> int:
    """Codon against each port of opts.ports in adjacent pairs, and the table of their medians."""
    program = os.path.abspath(opts.program)
    build = os.path.dirname(program)
    ports = []
    for impl in opts.ports:
        missing = missing_paths(impl, build)
        if missing:
            print(f"skip: {impl.name}: {os.path.relpath(missing[0])} is not built "
                  f"(make builds it where its compiler is found)", flush=True)
        else:
            ports.append(impl)
    if not ports:
        print(MAKE_BENCH)
        return 0
    run_opts = argparse.Namespace(build_dir=build, seed=DEFAULT_SEED, timeout=opts.timeout)   # the ladder's seed
    keys = [(w, lv) for w in LADDER for lv in LEVELS if (w, lv) in records]
    cells = []
    for w, lv in keys:
        n = comparison_iters(opts.program, LADDER[w][0], records[(w, lv)], opts.run_time, opts.timeout)
        codon = Impl(records[(w, lv)]["impl"], [program], "codon", "Codon (this project)", LEVELS)
        ops = records[(w, lv)].get("ops", 0)
        cells += [Cell(w, lv, impl, Pair(codon, w, lv, ops=ops, iters=n), Pair(impl, w, lv, ops=ops, iters=n),
                       absent=lv not in (impl.levels if w == "softplus" else impl.graph_levels)) for impl in ports]
    seed = opts.shuffle_seed if opts.shuffle_seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    print(f"\nCodon against {', '.join(p.name for p in ports)}: checking sums, then {plural(opts.pairs, 'round')} "
          f"of adjacent pairs (shuffle seed {seed}):", end="", flush=True)
    for cell in cells:                                       # verified before any is timed
        if not cell.absent:
            checked_pair(cell, [cell.codon, cell.theirs], run_opts)
    for rnd in range(1, opts.pairs + 1):
        order = [c for c in cells if not c.problem and not c.absent]
        rng.shuffle(order)
        for cell in order:
            sides = [cell.codon, cell.theirs]
            rng.shuffle(sides)
            got = checked_pair(cell, sides, run_opts)
            if got:
                cell.codon.runs.append({**got[cell.codon.impl.name], "round": rnd})
                cell.theirs.runs.append({**got[cell.port.name], "round": rnd})
        print(f" {rnd}", end="", flush=True)
    print()
    coverage = analysis.median_ci(range(opts.pairs))[2]
    print("\nCodon's time over each port's, below 1.00 Codon is faster: the median of "
          f"{plural(opts.pairs, 'adjacent pair')} of runs at the same N,\nby the timed region's CPU time "
          f"(v4: its wall time); {TIE}: a tie, the median's {coverage:.0%} interval holds 1.00")
    print(f"{'workload':<10}{'level':<7}{'N':>13}" + "".join(f"{p.name:>10}" for p in ports))
    for w, lv in keys:
        row = {c.port.name: c for c in cells if (c.workload, c.level) == (w, lv)}
        out = []
        for p in ports:
            c = row[p.name]
            if c.absent:
                out.append("-")
                continue
            if c.problem:
                out.append("FAILED")
                continue
            clock = ranking_clock(lv, c.codon.impl.compiled and p.compiled)
            r = analysis.paired_reading(analysis.paired_ratios(c.codon.runs, c.codon.iters, c.theirs.runs,
                                                         c.theirs.iters, clock))
            out.append(f"{TIE if r['read'] == 'tie' else ''}{r['median']:.2f}")
        print(f"{w:<10}{lv:<7}{row[ports[0].name].codon.iters:>13,}" + "".join(f"{x:>10}" for x in out))
    failed = [c for c in cells if c.problem]
    for c in failed:
        print(f"FAILED: {c.name}, not shown: {c.problem}")
    print(MAKE_BENCH)
    return 1 if failed else 0


def ladder(opts: argparse.Namespace) -> dict[tuple[str, str], dict]:
    """1. Every level of both workloads, calibrated then shown; the calibrated records by (workload, level)."""
    records = {}
    for workload, (args, levels, start) in LADDER.items():
        v0_ns = None
        for k, level in enumerate(levels):
            why = refusal(opts.program, level, opts.timeout) if level in GPU_LEVELS else ""
            if why:
                print(f"skip: {level}: {why}", flush=True)
                continue
            record = calibrated(opts.program, args, level, start, opts.min_time, opts.timeout)
            records[(workload, level)] = record
            header, line, ns = shown_run(opts.program, args, record, opts.timeout)
            v0_ns = ns if level == "v0" else v0_ns
            if k == 0:
                print(("" if workload == "softplus" else "\n") + header)
            print(with_vs_v0(header, line, ns, v0_ns), flush=True)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="build/autograd", help="the Codon program (default build/autograd); "
                        "the ports are looked for beside it")
    parser.add_argument("--min-time", type=positive_float, default=0.25,
                        help="seconds each shown run lasts at least")
    parser.add_argument("--ports", type=port_list, default=port_list("c,zig,rust"),
                        help=f"the ports Codon is compared with (default c,zig,rust; any of {', '.join(PORTS)})")
    parser.add_argument("--pairs", type=positive_int, default=5, help="rounds of adjacent pairs (default 5)")
    parser.add_argument("--run-time", type=positive_float, default=0.03,
                        help="seconds a comparison run lasts at least (default 0.03)")
    parser.add_argument("--shuffle-seed", type=int,
                        help="seed of the comparison's run order (default: random, printed)")
    parser.add_argument("--timeout", type=positive_float, default=60,
                        help="seconds before a run is killed as hung (default 60)")
    parser.add_argument("--no-compare", action="store_true", help="the ladder alone")
    opts = parser.parse_args(argv)
    if not (os.path.isfile(opts.program) and os.access(opts.program, os.X_OK)):
        parser.error(f"--program: no such program: {opts.program} (`make build` builds build/autograd)")
    try:
        records = ladder(opts)
        return 0 if opts.no_compare else compare(opts, records)
    except RuntimeError as e:                 # a run of --program failed: the ladder stops there
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    run_main(main)
