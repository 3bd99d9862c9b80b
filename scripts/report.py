#!/usr/bin/env python3
"""Turn raw benchmark files (scripts/bench.py's results/raw/<machine>/*.json.gz) into results/README.md
and PNG charts: a section per machine (its latest run), cross-machine tables of Codon against the best
port (each machine's latest run, and every run), ns/iter normalized to the fastest with ties marked, the
v0 -> v4 ladder, the tape's overhead, thread scaling, and the graph workload beside A. Rogozhnikov's
published numbers.

    python scripts/report.py [RAW.json.gz ...] [--out DIR] [--no-charts]
    python scripts/report.py --sweep [RAW.json.gz] [--out DIR]    (a size sweep: its sentences, and its charts
                                                                  beside RAW or in DIR)

Without RAW it reads every file under results/raw/*/: each machine's latest for its section, all of them
for the table of every run (given RAW, those runs alone). The charts are drawn
from the newest of the runs. The markdown needs only the standard library; the charts need
matplotlib (`make bench` installs it).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ROOT, rawfile, sweepdata  # noqa: E402
from harness.blocks import fill_files, sweep_report  # noqa: E402
from harness.charts import CHARTS, charts  # noqa: E402
from harness.options import readable_file  # noqa: E402
from harness.processes import run_main  # noqa: E402
from harness.pages import machine_page, markdown, page_name  # noqa: E402
from harness.rundata import Data, every_machines_runs, shown_path  # noqa: E402


LATEST = Path("latest")      # --sweep without RAW: the newest sweep under results/sweep/


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description="Write results/README.md and charts from raw benchmark files.")
    p.add_argument("raw", nargs="*", type=readable_file,
                   help="raw results files (default: every raw/<machine>/*.json.gz under --out's folder, "
                        "results/ unless given; each machine's latest for its section)")
    p.add_argument("--out", type=Path, help="output directory (default results/; with --sweep, the raw file's "
                                            "folder, its charts named after it)")
    p.add_argument("--no-charts", action="store_true", help="write the markdown only (no matplotlib needed)")
    p.add_argument("--sweep", type=readable_file, metavar="RAW", nargs="?", const=LATEST,
                   help="instead: a size sweep's raw file (scripts/sweep.py; default the newest under "
                        "results/sweep/): print what it found and draw its charts beside it (<date>.png, "
                        "<date>-rss.png), or as sweep.png and sweep-rss.png into --out")
    p.add_argument("--readme", type=readable_file, metavar="FILE", nargs="+",
                   help="instead: regenerate each FILE's report blocks (`<!-- report.py: NAME from RAW -->` ... "
                        "`<!-- report.py: end -->`), each from the raw file it names, and the charts they show")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Read the raw files, write the markdown and (unless --no-charts) the charts."""
    args = parse_args(argv)
    if args.readme:
        return fill_files(args.readme, charts=not args.no_charts)
    if args.sweep:
        try:
            raw = sweepdata.latest(ROOT / "results") if args.sweep is LATEST else args.sweep
        except OSError as e:                            # no sweep run yet: nothing to report, not bad usage
            print(f"error: {e}", file=sys.stderr)
            return 1
        return sweep_report(raw, args.out, charts=not args.no_charts, named=args.sweep is not LATEST)
    args.out = args.out or ROOT / "results"
    try:
        # Given files: those runs alone. Else every run kept, and each machine's latest for the tables.
        machines = [args.raw] if args.raw else every_machines_runs(args.out)
        read = [[Data(rawfile.read(p), p) for p in paths] for paths in machines]
        history = [d for group in read for d in group]
        runs = history if args.raw else [group[-1] for group in read]
        paths = [d.path for d in runs]
    except (OSError, ValueError) as e:                  # a file named on the command line: bad input
        print(f"error: {e}", file=sys.stderr)
        return 2 if args.raw else 1
    runs = [d for d in runs if d.ok]
    if not runs:
        print(f"error: {', '.join(shown_path(p) for p in paths)}: no successful timing to report", file=sys.stderr)
        return 1
    runs.sort(key=lambda d: d.machine["date"], reverse=True)
    latest: dict[str, Data] = {}                        # a machine's section and page: its latest run
    for d in runs:
        latest.setdefault(d.machine["slug"], d)
    runs = list(latest.values())
    if problem := rawfile.unwritable(args.out):         # unwritable output: an error before anything is drawn
        print(f"error: {problem}", file=sys.stderr)
        return 1
    if not args.no_charts:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("error: matplotlib is not installed (`make bench` installs it; or use --no-charts)",
                  file=sys.stderr)
            return 1
    pages = [args.out / page_name(d) for d in runs]
    try:
        drawn: list[str] = [] if args.no_charts else charts(runs[0], args.out)
        rawfile.write_atomic(args.out / "README.md", markdown(runs, drawn, args.out, [d for d in history if d.ok]))
        for k, (d, page) in enumerate(zip(runs, pages)):
            rawfile.write_atomic(page, machine_page(d, drawn if k == 0 else [], args.out))
    except OSError as e:                                # a full disk, a page that is a folder
        print(f"error: cannot write {e.filename or args.out}: {e.strerror or e}", file=sys.stderr)
        return 1
    print("wrote " + ", ".join(shown_path(p) for p in [args.out / "README.md", *pages]
                               + [args.out / CHARTS[k] for k in drawn]))
    return 0


if __name__ == "__main__":
    run_main(main)
