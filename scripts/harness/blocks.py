"""The report blocks of the README and the docs: `<!-- report.py: NAME from RAW -->` ... `<!-- report.py: end -->`,
each regenerated from the raw file it names (`report.py --readme FILE`), so no page drifts from the run it cites."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from harness import ROOT, frontpage, rawfile
from harness.analysis import STANDING, median
from harness.rundata import TIE, Data, shown_path
from harness.sweepdata import Sweep, sentences
from harness.tables import (PAIRED, WALL, gpu_table, half_widths, normalized_table, ns_table, precision, reading,
                            table, threads_table)
from impls import LEVEL_ORDER, WORKLOADS

BLOCK = re.compile(r"<!-- report\.py: (?P<name>[\w-]+)(?: from (?P<raw>\S+))? -->\n.*?<!-- report\.py: end -->", re.S)


# The ways to make this Python fast (README), as registry names, in the table's order.
PYTHON_WAYS = ["python", "pypy", "numba", "cython", "codon", "mojo"]


def versus_table(d: Data, a: str, b: str | None) -> list[str]:
    """a over b (b None: over the best compiled port, named), per workload and level, from adjacent runs."""
    rows = []
    levels = [lv for lv in LEVEL_ORDER if any(lv in d.levels(w) for w in WORKLOADS)]
    for w in WORKLOADS:
        if not d.levels(w):
            continue
        if b is None:
            cells = [reading(d.codon_best.get((w, lv)), name=d.codon_best.get((w, lv), {}).get("port", ""),
                             pairs=d.doc["config"]["repeats"]) for lv in levels]
        else:
            cells = [reading(d.pair(a, b, lv, w), pairs=d.doc["config"]["repeats"]) for lv in levels]
        rows.append([w] + cells)
    head = f"{a} / " + (b if b else "best port")
    return table([head] + levels, rows, "l" + "r" * len(levels),
                 PAIRED + f" Median [95% interval] of {d.doc['config']['repeats']} pairs; {TIE}: a tie, below 1.00 "
                 f"{a} is faster.")


def verdicts(d: Data) -> list[str]:
    """One line: where Codon is ahead of, tied with and behind the best port, level by level."""
    out = []
    for read in ("faster", "tie", "slower"):
        cells = [f"{e['workload']} {e['level']}" for e in d.codon_best.values()
                 if e["read"] == read]
        out.append(f"{STANDING[read]}: {', '.join(cells) if cells else 'none'}")
    return ["Codon against the best port: " + "; ".join(out) + ".", ""]


def python_ways(d: Data, workload: str) -> list[str]:
    """The ways to make this Python fast at each level: ns, the speed-up over CPython, the time over Codon's."""
    names = [n for n in PYTHON_WAYS if n in d.names(workload)]
    levels = d.levels(workload)
    unit = d.unit(workload)
    rows = []
    for n in names:
        cells = []
        for lv in levels:
            v = d.ns(n, lv, workload)
            if v is None:
                cells.append("-")
                continue
            py, co = d.pair("python", n, lv, workload), d.pair(n, "codon", lv, workload)
            speedup = "" if not py or n == "python" else \
                f" · {py['median']:,.0f}x" if py["median"] >= 10 else f" · {py['median']:.2f}x"
            cells.append(f"{v:,.2f}" + speedup
                         + (f" · {TIE if co['read'] == 'tie' else ''}{co['median']:.2f}"
                            if co and n != "codon" else ""))
        rows.append([d.label(n, workload)] + cells)
    return table([unit.replace("_per_", "/") + " · x CPython · / Codon"] + levels, rows, "l" + "r" * len(levels),
                 WALL + " x CPython: CPython's time over the row's; / Codon: the row's time over Codon's; each the "
                 "median of ratios from adjacent runs, by CPU time where both sides are single-threaded levels of "
                 f"compiled programs, else by wall time; {TIE}: a tie.")


BLOCKS = {
    "softplus-ns": lambda d: ns_table(d),
    "graph-ns": lambda d: ns_table(d, "graph"),
    "softplus-x-fastest": lambda d: normalized_table(d),
    "graph-x-fastest": lambda d: normalized_table(d, "graph"),
    "graph-peers": lambda d: ns_table(d, "graph", ["codon", "python", "jax", "torch", "torch-compile"]),
    "codon-vs-best-port": lambda d: versus_table(d, "codon", None) + verdicts(d),
    "codon-vs-mojo": lambda d: versus_table(d, "codon", "mojo"),
    "python-ways-softplus": lambda d: python_ways(d, "softplus"),
    "python-ways-graph": lambda d: python_ways(d, "graph"),
    "precision": precision,
    "softplus-threads": lambda d: threads_table(d),
    "graph-threads": lambda d: threads_table(d, "graph"),
}


# Blocks drawn from a size sweep's raw file (scripts/sweep.py), with the charts they show.
SWEEP_BLOCKS = {"sweep": sentences}


# Blocks over several runs: RAW is a glob (relative to the repository), the runs in the order of their files.
MANY_BLOCKS = {
    "precision-runs": lambda runs: precision_table(runs),
    "gpu-runs": gpu_table,
}


def precision_table(runs: list[Data]) -> list[str]:
    """Rounds, run length and time in all against the median half-width of the paired intervals, run by run."""
    rows = []
    for d in runs:
        c, w = d.doc["config"], half_widths(d)
        seconds = d.machine.get("seconds")
        rows.append([f"[{d.path.name}]({shown_path(d.path)})", str(c["repeats"]), f"{c['min_time']:g}",
                     f"{seconds:,.0f}" if seconds else "-", f"{len(w['compiled'])}",
                     f"±{median(w['compiled']):.1%}" if w["compiled"] else "-",
                     f"±{median(w['all']):.1%}" if w["all"] else "-"])
    return table(["run", "rounds", "min s", "s in all", "compiled pairs", "median half-width, compiled",
                  "median half-width, all"], rows, "lrrrrrr",
                 "Clock: as in each run's paired tables (CPU time of the timed region for single-threaded levels "
                 "of compiled programs, wall time otherwise); half-width: (high - low) / 2 / median of a paired "
                 "ratio's 95% interval.")


def rebase(body: str, root: Path, base: Path) -> str:
    """A block's links, written relative to the repository, made relative to the page's folder."""
    def fix(m: re.Match) -> str:
        return f"]({Path(os.path.relpath(root / m[1], base)).as_posix()}{m[2] or ''})"
    return body if base.resolve() == root.resolve() else re.sub(r"\]\(([^)#:\s]+)(#[^)\s]*)?\)", fix, body)


def fill_blocks(text: str, root: Path = ROOT, base: Path | None = None) -> str:
    """text with every report block regenerated from the raw file it names (relative to root); base: the
    folder of the page the text is, which its links are relative to (default root)."""
    cache: dict[str, Data] = {}

    blocks = {**BLOCKS, **frontpage.BLOCKS}

    def fill(m: re.Match) -> str:
        name, raw = m["name"], m["raw"]
        if raw is None:
            if name not in frontpage.SOURCE_BLOCKS:
                raise ValueError(f"report block {name!r} names no raw file (only {', '.join(frontpage.SOURCE_BLOCKS)} "
                                 "are drawn from the sources)")
            body = "\n".join(frontpage.SOURCE_BLOCKS[name]()).rstrip()
            return f"<!-- report.py: {name} -->\n{body}\n<!-- report.py: end -->"
        if name in MANY_BLOCKS:
            paths = sorted(root.glob(raw))
            if not paths:
                raise ValueError(f"report block {name!r}: no file matches {raw}")
            body = "\n".join(MANY_BLOCKS[name]([Data(rawfile.read(p), p) for p in paths])).rstrip()
            return f"<!-- report.py: {name} from {raw} -->\n{body}\n<!-- report.py: end -->"
        if name in SWEEP_BLOCKS:
            body = "\n".join(SWEEP_BLOCKS[name](Sweep(rawfile.read(root / raw), root / raw))).rstrip()
            return f"<!-- report.py: {name} from {raw} -->\n{body}\n<!-- report.py: end -->"
        if name not in blocks:
            known = ", ".join([*blocks, *MANY_BLOCKS, *SWEEP_BLOCKS])
            raise ValueError(f"unknown report block {name!r} (known: {known})")
        body = "\n".join(blocks[name](run(raw))).rstrip()
        return f"<!-- report.py: {name} from {raw} -->\n{body}\n<!-- report.py: end -->"

    def run(raw: str) -> Data:
        if raw not in cache:
            path = root / raw
            cache[raw] = Data(rawfile.read(path), path)
        return cache[raw]

    return BLOCK.sub(lambda m: rebase(fill(m), root, base or root), text)


def draw_block_charts(text: str, root: Path = ROOT) -> list[str]:
    """The charts that text's blocks show (frontpage.CHART_BLOCKS), drawn from the raw files the blocks name;
    returns the paths written."""
    written = []
    for m in BLOCK.finditer(text):
        if m["name"] in frontpage.CHART_BLOCKS and m["raw"]:
            png, draw = frontpage.CHART_BLOCKS[m["name"]]
            draw(Data(rawfile.read(root / m["raw"]), root / m["raw"]), root / png)
            written.append(png)
        elif m["name"] in SWEEP_BLOCKS and m["raw"]:
            from harness.charts import sweep_charts
            written += [shown_path(p) for p in sweep_charts(Sweep(rawfile.read(root / m["raw"]), root / m["raw"]),
                                                            root / "results")]
    return written


def can_draw() -> bool:
    """Whether matplotlib is there to draw charts; a `skip:` line where it is not."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("skip: charts (matplotlib is not installed: `make bench` installs it)")
        return False
    return True


def chart_error(e: OSError) -> int:
    """A chart that could not be written: one error line, exit status 1."""
    print(f"error: cannot write a chart: {e.strerror or e} ({e.filename})", file=sys.stderr)
    return 1


def fill_files(paths: list[Path], charts: bool) -> int:
    """`--readme`: each file's blocks regenerated in place, then the charts they show (where matplotlib is).
    Exit 2 for a file whose blocks cannot be filled (the user's bad input), 1 for one that cannot be written."""
    for path in paths:
        try:
            old = path.read_text()
            new = fill_blocks(old, base=path.resolve().parent)
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {path}: {e}", file=sys.stderr)
            return 2
        try:
            if new != old:
                rawfile.write_atomic(path, new)
        except OSError as e:
            print(f"error: cannot write {path}: {e}", file=sys.stderr)
            return 1
        print(f"{shown_path(path)}: {len(BLOCK.findall(old))} report blocks "
              + ("regenerated" if new != old else "already current"))
        if charts and can_draw():
            try:
                drawn = draw_block_charts(new)
            except OSError as e:
                return chart_error(e)
            for png in drawn:
                print(f"wrote {png}")
    return 0


def sweep_report(raw: Path, out: Path | None, charts: bool, named: bool = True) -> int:
    """`--sweep`: a sweep's sentences (the `sweep` block's text) on stdout, and its charts: into out as sweep.png
    and sweep-rss.png where given, else beside the raw file under its own name (charts.raw_charts), so that
    results/sweep.png stays the chart of the README's `sweep` block (draw_block_charts). A file that is not a
    sweep is exit 2 where the user named it (named), 1 where it is the newest found under results/. Charts
    that cannot be written are exit 1, found before anything is printed."""
    try:
        sw = Sweep(rawfile.read(raw), raw)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2 if named else 1
    if charts and (problem := rawfile.unwritable(out or raw.parent)):
        print(f"error: {problem}", file=sys.stderr)
        return 1
    print("\n".join(sentences(sw)))
    if charts and can_draw():
        from harness.charts import SWEEP_CHARTS, raw_charts, sweep_charts
        try:
            drawn = sweep_charts(sw, out, SWEEP_CHARTS) if out else sweep_charts(sw, raw.parent, raw_charts(raw))
        except OSError as e:
            return chart_error(e)
        print("wrote " + ", ".join(shown_path(p) for p in drawn))
    return 0
