#!/usr/bin/env python3
"""Every level of every implementation, as two checkouts built it, in adjacent pairs: did any level get slower?

    git worktree add --detach ../old REV && ln -s "$PWD/.venv" ../old/.venv && make -C ../old build
    scripts/compare_trees.py --old ../old [--new .] [--impls codon,c] [--pairs 21] [--min-time 0.2]

For each implementation of the registry (scripts/impls.py) but the peers, and each of its workloads,
scripts/compare.py times the old checkout's program (A) against the new one's (B) at every level the
registry gives it: N calibrated on A, every run's sums identical, B's time over A's as the median of
adjacent pairs with its 95% interval. A program run from the checkout's sources (the CPython port) runs
the old sources on one side and the new on the other. Interpreted programs and those that start for a
second or more (the registry's `rounds`) get --slow-pairs. An implementation either checkout has not
built is a `skip:` line.

It ends with every cell that read "B slower": with a few per cent of noise between runs, rerun those
with more --pairs before believing them (docs/benchmarking.md). Exit status: 0; 1 when a comparison
failed (sums differ, a run failed); 2 for bad usage.
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402
from harness import ROOT, rawfile  # noqa: E402
from harness.options import name_list, positive_float, positive_int, registry_file  # noqa: E402
from harness.processes import run_main  # noqa: E402
from impls import DEFAULT, WORKLOAD_LEVELS, Impl  # noqa: E402


def absent(command: list[str], impl: Impl) -> str | None:
    """Why a checkout's command cannot run (a file it names is missing, its program is not on PATH), or None."""
    if impl.program and shutil.which(impl.program) is None:
        return f"{impl.program} not found"
    for word in command:
        if Path(word).is_absolute() and not Path(word).exists():
            return f"no {word}"
    return None


def cells(impl: Impl) -> list[tuple[str, list[str]]]:
    """Each workload the implementation has, with its levels (the GPU's left out)."""
    softplus = [lv for lv in impl.levels if lv in WORKLOAD_LEVELS["softplus"]]
    return [(w, levels) for w, levels in (("softplus", softplus), ("graph", impl.graph_levels)) if levels]


def compare_all(impls: list[Impl], old: Path, new: Path, out: Path,
                opts: argparse.Namespace) -> tuple[list[str], list[str]]:
    """compare.py for each implementation and workload, its values written under out; returns the
    comparisons that failed and the cells that read slower."""
    failed, slower = [], []
    for impl in impls:
        a, b = impl.command(root=old), impl.command(root=new)
        why = absent(a, impl) or absent(b, impl)
        if why:
            print(f"skip: {impl.name} ({why})", flush=True)
            continue
        pairs = opts.slow_pairs if impl.slow or impl.rounds else opts.pairs
        for workload, levels in cells(impl):
            print(f"== {impl.name} {workload}", flush=True)
            values = out / f"{impl.name}-{workload}.json"
            status = compare.main(["--a", shlex.join(a), "--b", shlex.join(b), "--workloads", workload,
                                   "--levels", ",".join(levels), "--pairs", str(pairs),
                                   "--min-time", str(opts.min_time), "--json", str(values)])
            if status != 0:
                failed.append(f"{impl.name} {workload}")
            if values.exists():
                for row in json.loads(values.read_text())["rows"]:
                    if row["read"] == "B slower":
                        low, high = row["interval"]
                        slower.append(f"{impl.name} {workload} {row['level']} {row['median']:.3f} "
                                      f"[{low:.3f}, {high:.3f}] ({pairs} pairs)")
    return failed, slower


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", type=Path, required=True, help="the baseline's checkout, built (make -C OLD build)")
    p.add_argument("--new", type=Path, default=ROOT, help="the checkout compared with it (default: this one)")
    p.add_argument("--impls", type=name_list, help="implementations (default: every one but the peers)")
    p.add_argument("--pairs", type=positive_int, default=21, help="adjacent pairs a level (default 21)")
    p.add_argument("--slow-pairs", type=positive_int, default=9,
                   help="pairs for interpreted and slow-starting programs (default 9)")
    p.add_argument("--min-time", type=positive_float, default=0.2, help="seconds a run lasts at least (0.2)")
    p.add_argument("--json-dir", type=Path, help="also write each comparison's values as IMPL-WORKLOAD.json here")
    p.add_argument("--registry", type=registry_file, metavar="FILE",
                   help="a JSON list of implementations replacing the built-in one")
    opts = p.parse_args(argv)
    registry = DEFAULT if opts.registry is None else opts.registry
    impls = [i for i in registry if i.kind != "peer"]
    if opts.impls:
        unknown = [n for n in opts.impls if n not in {i.name for i in impls}]
        if unknown:
            p.error(f"unknown implementation(s) {', '.join(unknown)}; they are {', '.join(i.name for i in impls)}")
        impls = [i for i in impls if i.name in opts.impls]
    old, new = opts.old.resolve(), opts.new.resolve()
    for name, tree in (("--old", old), ("--new", new)):
        if not (tree / "build").is_dir():
            p.error(f"{name}: no build folder in {tree} (make -C {tree} build)")
    if old == new:
        p.error("--old and --new are the same checkout")
    if opts.json_dir and (problem := rawfile.unwritable(opts.json_dir)):
        p.error(f"--json-dir: {problem}")
    with tempfile.TemporaryDirectory(prefix="compare-trees-") as scratch:
        failed, slower = compare_all(impls, old, new, opts.json_dir or Path(scratch), opts)
    print(f"slower (B over A, the interval above 1.00): {'; '.join(slower) if slower else 'none'}")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    run_main(main)
