#!/usr/bin/env python3
"""Peak resident memory of each implementation's graph workload, level by level.

    scripts/peak_rss.py [--impls codon,c,zig,rust,mojo] [--ops 10000,1000000] [--levels v0,v1,v2,v3,v4]
                        [--iters 16] [--repeats 3] [--threads 2] [--seconds] [--json FILE]

Each cell runs `PROGRAM --workload graph --ops M --level L --iters N --seed 42 --json` (v4 with
--threads T) --repeats times as the harness runs it (scripts/harness/processes.py: under
scripts/maxrss.c, which reports wait4's ru_maxrss, the peak in KiB, as GNU time's %M does) and reports the
median in MiB. Peak RSS counts pages touched, not time, so a loaded machine does not move it. The
environment is passed on, so
`GC_FREE_SPACE_DIVISOR=1 scripts/peak_rss.py --impls codon` measures a Boehm setting.
The last column is the Codon program's peak over the smallest port's (the best port, by memory).
--seconds adds each cell's median timed-region seconds (the program's own JSON `seconds`).
A program that is not built is skipped with a `skip:` line. Exit status: 0; 1 when a run fails or
its sums differ from the other runs of its cell; 2 for bad usage.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from impls import DEFAULT, WORKLOAD_LEVELS  # noqa: E402
from harness import rawfile  # noqa: E402
from harness.contract import DEFAULT_SEED, record_of, sums_of  # noqa: E402
from harness.options import iters_int, name_list, ops_list, positive_float, positive_int, threads_int  # noqa: E402
from harness.processes import failure, run_main, run_process  # noqa: E402



def argv_of(name: str, build: str, ops: int, level: str, iters: int, threads: int) -> list[str]:
    """The command line one run of a cell uses."""
    (impl,) = [i for i in DEFAULT if i.name == name]
    return impl.command(build) + ["--workload", "graph", "--ops", str(ops), "--level", level,
                                  "--iters", str(iters), "--seed", str(DEFAULT_SEED), "--json"] \
        + (["--threads", str(threads)] if level == "v4" else [])


def measure(argv: list[str], timeout: float, env: dict[str, str] | None = None,
            expected: dict | None = None) -> tuple[int, dict]:
    """One run (in env, default this process's): its peak RSS in KiB and its JSON record, checked against
    the contract (contract.parse_record, with the graph workload and `expected`'s values); RuntimeError on
    a failure, output that is not the contract's record, or where no peak can be read (build/maxrss could
    not be made)."""
    proc = run_process(argv, timeout, env)
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)}: {failure(proc, timeout)}")
    if proc.peak_rss_kb is None:
        raise RuntimeError(f"{shlex.join(argv)}: no peak RSS (build/maxrss, scripts/maxrss.c, is not built)")
    return proc.peak_rss_kb, record_of(argv, proc.stdout, {"workload": "graph", **(expected or {})})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--impls", type=name_list, default="codon,c,zig,rust,mojo",
                   help="implementations (scripts/impls.py names)")
    p.add_argument("--ops", type=ops_list, default="10000,1000000",
                   help="graph sizes, comma-separated")
    p.add_argument("--levels", type=name_list, default=",".join(WORKLOAD_LEVELS["graph"]),
                   help=f"graph levels, comma-separated (default {','.join(WORKLOAD_LEVELS['graph'])})")
    p.add_argument("--iters", type=iters_int, default=16, help="samples a run (default 16)")
    p.add_argument("--repeats", type=positive_int, default=3, help="runs a cell, median taken (default 3)")
    p.add_argument("--threads", type=threads_int, default=2, help="v4's --threads (default 2)")
    p.add_argument("--build", default="build", help="the build folder the programs are in (default build)")
    p.add_argument("--seconds", action="store_true", help="also print each cell's median timed seconds")
    p.add_argument("--timeout", type=positive_float, default=600,
                   help="seconds before a run is killed as hung (default 600)")
    p.add_argument("--json", type=Path, help="also write every value to this file")
    opts = p.parse_args(argv)
    known = {i.name: i for i in DEFAULT}
    names, levels, sizes = opts.impls, opts.levels, opts.ops
    graph_impls = [n for n, i in known.items() if i.graph_levels]
    if any(n not in graph_impls for n in names):
        p.error(f"unknown implementation(s) {', '.join(n for n in names if n not in graph_impls)}; those with the "
                f"graph workload are {', '.join(graph_impls)}")
    if any(lv not in WORKLOAD_LEVELS["graph"] for lv in levels):
        p.error(f"unknown level(s) {', '.join(lv for lv in levels if lv not in WORKLOAD_LEVELS['graph'])}; "
                f"levels are {', '.join(WORKLOAD_LEVELS['graph'])}")
    if opts.json and (problem := rawfile.unwritable_file(opts.json)):
        p.error(f"--json: {problem}")
    present = []
    for name in names:
        program = Path(known[name].command(opts.build)[-1])
        if program.is_absolute() and not program.exists():
            print(f"skip: {name}: {program} is not built (make {known[name].make_target(opts.build)})",
                  file=sys.stderr)
        else:
            present.append(name)
    cells: dict[tuple[int, str, str], dict] = {}
    problems = []
    for ops in sizes:
        for level in levels:
            for name in present:
                if level not in known[name].graph_levels:
                    continue
                cmd = argv_of(name, opts.build, ops, level, opts.iters, opts.threads)
                expected = {"level": level, "ops": ops, "iters": opts.iters, "seed": DEFAULT_SEED}
                try:
                    runs = [measure(cmd, opts.timeout, expected=expected) for _ in range(opts.repeats)]
                except RuntimeError as e:
                    print(f"error: {e}", file=sys.stderr)
                    return 1
                if any(sums_of(r, "graph") != sums_of(runs[0][1], "graph") for _, r in runs):
                    problems.append(f"{name} {level} ops={ops}: sums differ between runs")
                kib = [k for k, _ in runs]
                cells[ops, level, name] = {"impl": name, "ops": ops, "level": level, "peak_kib": kib,
                                           "peak_mib": statistics.median(kib) / 1024,
                                           "seconds": statistics.median(r["seconds"] for _, r in runs)}
                print(f"[{name} {level} ops={ops}] {cells[ops, level, name]['peak_mib']:.1f} MiB",
                      file=sys.stderr, flush=True)
    example = shlex.join(argv_of("c", opts.build, sizes[0], levels[0], opts.iters, opts.threads)[1:])
    print(f"peak RSS, MiB (median of {opts.repeats}; wait4's ru_maxrss, scripts/maxrss.c) of "
          f"`PROGRAM {example}` (v4: --threads {opts.threads})")
    print("| ops | level | " + " | ".join(present) + " | codon / best port |")
    print("| --: | :-- |" + " --: |" * (len(present) + 1))
    for ops in sizes:
        for level in levels:
            row = {n: cells[ops, level, n] for n in present if (ops, level, n) in cells}
            text = [f"{row[n]['peak_mib']:.1f}" + (f" ({row[n]['seconds']:.3f} s)" if opts.seconds else "")
                    if n in row else "-" for n in present]
            ports = [c["peak_mib"] for n, c in row.items() if known[n].kind == "port"]
            ratio = f"{row['codon']['peak_mib'] / min(ports):.2f}" if "codon" in row and ports else "-"
            print(f"| {ops:,} | {level} | " + " | ".join(text) + f" | {ratio} |")
    for line in problems:
        print(f"FAILED   {line}")
    if opts.json:
        env = {k: v for k, v in os.environ.items() if k.startswith("GC_")}
        try:
            rawfile.write_atomic(opts.json, json.dumps({"generated_by": "scripts/peak_rss.py", "iters": opts.iters,
                                                        "repeats": opts.repeats, "threads": opts.threads,
                                                        "gc_env": env, "cells": list(cells.values()),
                                                        "problems": problems}, indent=1) + "\n")
        except OSError as e:
            print(rawfile.write_error(e), file=sys.stderr)
            return 1
    return 1 if problems else 0


if __name__ == "__main__":
    run_main(main)
