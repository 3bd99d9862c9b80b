#!/usr/bin/env python3
"""Turn a raw benchmark file (scripts/bench.py's results/raw/*.json) into results/README.md
and PNG charts: ns/iter per implementation and level, normalized to the fastest, the
v0 -> v4 ladder per language, and the tape's overhead against the no-tape baselines.

    python scripts/report.py [RAW.json] [--out DIR] [--no-charts]

Without RAW it reads the latest file under results/raw/. The markdown needs only the
standard library; the charts need matplotlib (`make bench` installs it).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LEVELS = ["v0", "v1", "v2", "v3", "v4"]
BASELINES = ["fused", "fused-simd"]
ALL_LEVELS = LEVELS + BASELINES
CHARTS = {"normalized": "normalized.png", "ladder": "ladder.png"}
COMMAND = "make bench"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description="Write results/README.md and charts from a raw benchmark file.")
    p.add_argument("raw", nargs="?", type=Path, help="raw results file (default: the latest results/raw/*.json)")
    p.add_argument("--out", type=Path, default=ROOT / "results", help="output directory (default results/)")
    p.add_argument("--no-charts", action="store_true", help="write the markdown only (no matplotlib needed)")
    return p.parse_args(argv)


def latest_raw(results: Path) -> Path:
    """The newest raw file: names start with a UTC date, so the last in order is the latest."""
    files = sorted((results / "raw").glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no raw results under {results / 'raw'}: run `make bench` first")
    return files[-1]


def shown_path(path: Path) -> str:
    """A path relative to the repository when it lies inside it."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# --- reading the raw file --------------------------------------------------------------------

class Data:
    """The raw file, indexed: implementations in order, ok results by (impl, level)."""

    def __init__(self, doc: dict[str, Any]):
        self.doc = doc
        self.impls = {i["name"]: i for i in doc["implementations"]}
        self.results = doc["results"]
        self.ok = {(r["impl"], r["level"]): r for r in doc["results"] if r["status"] == "ok"}
        self.levels = [lv for lv in ALL_LEVELS if any(lv == k[1] for k in self.ok)]
        self.names = [n for n in self.impls if any(n == k[0] for k in self.ok)]

    def ns(self, impl: str, level: str) -> float | None:
        """Median ns/iter of a pair, None when it was not timed successfully."""
        r = self.ok.get((impl, level))
        return r["ns_per_iter"] if r else None

    def fastest(self, level: str) -> float:
        """The smallest median ns/iter at a level."""
        return min(r["ns_per_iter"] for (_, lv), r in self.ok.items() if lv == level)

    def label(self, name: str) -> str:
        """How a row is named: peers marked as peers, a formula baseline as not an autograd."""
        impl = self.impls[name]
        if impl.get("kind") == "peer":
            what = "peer, autograd" if impl.get("autograd", True) else "peer, formula baseline, not an autograd"
            return f"{name} ({what})"
        return name


# --- markdown --------------------------------------------------------------------------------

def table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    """A markdown table; align has one letter per column, l or r."""
    marks = {"l": ":--", "r": "--:"}
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |",
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def num(v: float | None, fmt: str = "{:.2f}") -> str:
    """A number for a cell; '-' when absent."""
    return "-" if v is None else fmt.format(v)


def ns_table(d: Data) -> list[str]:
    """Median ns/iter, implementation x level."""
    rows = [[d.label(n)] + [num(d.ns(n, lv)) for lv in d.levels] for n in d.names]
    return table(["ns/iter"] + d.levels, rows, "l" + "r" * len(d.levels))


def normalized_table(d: Data) -> list[str]:
    """Each level's times over that level's fastest (1.00 = fastest, bold)."""
    rows = []
    for n in d.names:
        cells = []
        for lv in d.levels:
            v = d.ns(n, lv)
            r = None if v is None else v / d.fastest(lv)
            cells.append("-" if r is None else (f"**{r:.2f}**" if r == 1 else f"{r:.2f}"))
        rows.append([d.label(n)] + cells)
    return table(["x fastest"] + d.levels, rows, "l" + "r" * len(d.levels))


def c_v2_table(d: Data) -> list[str]:
    """Times over C v2's (the reference point of the project's claims)."""
    base = d.ns("c", "v2")
    if base is None:
        return ["C v2 was not timed, so there are no ratios to it.", ""]
    rows = [[d.label(n)] + [num(None if d.ns(n, lv) is None else d.ns(n, lv) / base) for lv in d.levels]
            for n in d.names]
    return table(["x C v2"] + d.levels, rows, "l" + "r" * len(d.levels))


def ladder_table(d: Data) -> list[str]:
    """Per language, each level's ns/iter and speed-up over its own v0."""
    rows = []
    for n in d.names:
        if not any(d.ns(n, lv) for lv in LEVELS[:3]):
            continue                                   # the peers have no ladder
        v0 = d.ns(n, "v0")
        cells = []
        for lv in LEVELS:
            v = d.ns(n, lv)
            cells.append("-" if v is None else (f"{v:.2f}" + (f" ({v0 / v:.1f}x)" if v0 and lv != "v0" else "")))
        best = min((d.ns(n, lv) for lv in LEVELS if d.ns(n, lv)), default=None)
        rows.append([d.label(n)] + cells + [num(v0 / best if v0 and best else None, "{:.1f}x")])
    return table(["ns/iter (x its v0)"] + LEVELS + ["v0 / best level"], rows, "l" + "r" * (len(LEVELS) + 1))


def overhead_table(d: Data) -> list[str]:
    """What the tape costs over the same math written without one (1.00 = free)."""
    best_simd = min((r["ns_per_iter"] for (_, lv), r in d.ok.items() if lv == "fused-simd"), default=None)
    rows = []
    for n in d.names:
        v2, fused = d.ns(n, "v2"), d.ns(n, "fused")
        v3, simd = d.ns(n, "v3"), d.ns(n, "fused-simd")
        cells = [num(v2 / fused if v2 and fused else None), num(v3 / simd if v3 and simd else None),
                 num(v3 / best_simd if v3 and best_simd else None)]
        if any(c != "-" for c in cells):
            rows.append([d.label(n)] + cells)
    return table(["tape / baseline", "v2 / its fused", "v3 / its fused-simd", "v3 / fastest fused-simd"],
                 rows, "lrrr")


def runs_table(d: Data) -> list[str]:
    """Every pair: N, median, min, max, spread and the runs' count; failures with their reason."""
    rows = []
    for r in d.results:
        if r["status"] == "ok":
            spread = (r["max_s"] - r["min_s"]) / r["median_s"] * 100 if r["median_s"] else 0.0
            rows.append([r["impl"], r["level"], f"{r['iters']:,}", str(r["threads"]), f"{r['median_s']:.4f}",
                         f"{r['min_s']:.4f}", f"{r['max_s']:.4f}", f"{spread:.0f}%", str(len(r["runs"]))])
    return table(["impl", "level", "N", "threads", "median s", "min s", "max s", "spread", "runs"], rows,
                 "llrrrrrrr")


def problems(d: Data) -> list[str]:
    """Skipped implementations, failed pairs (with their numbers) and the harness's notes."""
    out = [f"- **{i['name']}** {i['status']}: {i['reason']}" for i in d.doc["implementations"]
           if i["status"] != "ok"]
    out += [f"- **{r['impl']} {r['level']}** failed (not in the tables): {r['reason']}"
            for r in d.results if r["status"] == "failed"]
    out += [f"- {n}" for n in d.doc.get("notes", [])]
    return out + [""] if out else ["None: every implementation built and every level agreed with the reference.", ""]


def loads(values: list[float] | None) -> str:
    """A load average triple as '0.12, 0.30, 0.25'."""
    return ", ".join(f"{v:.2f}" for v in values) if values else "?"


def machine_table(d: Data) -> list[str]:
    """The machine, the commit and each implementation's toolchain."""
    m, c = d.doc["machine"], d.doc["config"]
    rows = [["CPU", f"{m['cpu']} ({m['logical_cpus']} logical CPUs, {m['cpus_available']} available)"],
            ["memory", m.get("memory", "")], ["OS", m["os"]], ["Python", m["python"]],
            ["commit", f"`{m['git_commit'][:12]}`" + (" (with uncommitted changes)" if m.get("git_dirty") else "")],
            ["date", m["date"]],
            ["load average (1, 5, 15 min)", f"{loads(m.get('load_average_start'))} at the start, "
                                            f"{loads(m.get('load_average_end'))} at the end"],
            ["run", f"`{d.doc['command']}`, {m.get('seconds', 0):.0f} s"],
            ["threads for v4", str(c["threads"] or "each program's default (the CPUs it may use)")]]
    for i in d.doc["implementations"]:
        if i["status"] != "ok":
            continue
        parts = [i.get("version", "")]
        if i.get("compiler_version"):
            parts.append(f"compiler `{i['compiler']}`: {i['compiler_version']}")
        for var, flags in i.get("flags", {}).items():
            parts.append(f"{var} `{flags}`")
        if i.get("python"):
            parts.append(i["python"])
        rows.append([i["name"], "; ".join(p for p in parts if p)])
    return table(["", ""], rows, "ll")


def markdown(d: Data, raw: Path, out: Path, charts: bool) -> str:
    """The whole results/README.md (out: the directory it goes to, for the link to raw)."""
    c, m = d.doc["config"], d.doc["machine"]
    link = os.path.relpath(raw.resolve(), out.resolve())
    lines = [f"<!-- Generated by `{COMMAND}` (python scripts/report.py {shown_path(raw)}); do not edit. -->",
             "# Benchmark results", "",
             f"Generated by `{COMMAND}` from [`{shown_path(raw)}`]({link}) with `scripts/report.py`; "
             "rerun `make bench` to regenerate.", "",
             f"{m['cpu']}, {m['cpus_available']} CPUs, commit `{m['git_commit'][:12]}`, {m['date']}. "
             f"Every (implementation, level) was first checked against the reference (tests/reference.py) at "
             f"N = {c['verify_iters']:,}, then timed {c['repeats']} times round-robin, one process per run, "
             f"at N = {c['iters']:,} samples (the CPython port: {c['python_iters']:,}); the tables give the "
             "median. ns/iter is the time of the iteration loop (contract §5) over N: one forward and backward "
             "pass of f(x, y) = softplus((x + y) * x), inputs drawn included.", "",
             "Levels v0-v4 are reverse-mode tapes (docs/contract.md §3); `fused` and `fused-simd` are baselines "
             "with no tape, the floor a tape can approach. The peers are what a user might pick instead: "
             "**JAX** (`jit(vmap(value_and_grad))`, float64, one thread; the one compilation is done by a "
             "warm-up call before the clock starts) and **PyTorch** (`torch.autograd` over batched float64 CPU "
             "tensors, one thread; one warm-up pass on one sample before the clock starts its autograd "
             "engine) are real autograds, reported at v3 (batched, one thread); **NumPy** computes "
             "hand-derived gradient formulas over arrays: a formula baseline, not an autograd, reported at "
             "`fused-simd`.", "",
             "## Time per sample (ns/iter, median)", "", *ns_table(d),
             "## Normalized to the fastest at each level", "",
             "1.00 is the fastest implementation of that level; 2.00 takes twice as long.", "",
             *normalized_table(d)]
    if charts:
        lines += [f"![ns/iter normalized to the fastest, per level]({CHARTS['normalized']})", ""]
    lines += ["## The ladder: v0 to v4 per language", "",
              "ns/iter at each level and, in brackets, the speed-up over the same language's v0.", "",
              *ladder_table(d)]
    if charts:
        lines += [f"![the v0 to v4 ladder]({CHARTS['ladder']})", ""]
    lines += ["## Tape overhead against the baselines", "",
              "How much longer the tape takes than the same math with no tape: v2 against the scalar `fused`, "
              "v3 against the batched `fused-simd` of the same implementation, and against the fastest "
              "`fused-simd` of all (1.00: the tape is free).", "", *overhead_table(d),
              "## Relative to C v2", "", *c_v2_table(d),
              "## Failures, skips and notes", "", *problems(d),
              "## Machine and toolchains", "", *machine_table(d),
              "## Every timed pair", "", *runs_table(d)]
    return "\n".join(lines).rstrip() + "\n"


# --- charts ----------------------------------------------------------------------------------

def footer(raw: Path) -> str:
    """The note each chart carries: it is generated, and by what."""
    return f"Generated by `{COMMAND}` (scripts/report.py {shown_path(raw)}); do not edit."


def charts(d: Data, raw: Path, out: Path) -> list[Path]:
    """normalized.png (one panel per level) and ladder.png (v0..v4 per language)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta = {"Description": footer(raw), "Software": "scripts/report.py (matplotlib)"}
    colors = {n: plt.cm.tab10(k % 10) for k, n in enumerate(d.impls)}
    written = []

    def save(fig, key: str) -> None:
        """Footer, layout, PNG with the generator in its metadata; closes the figure."""
        fig.text(0.01, 0.005, footer(raw), fontsize=7, color="grey")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        path = out / CHARTS[key]
        fig.savefig(path, dpi=110, metadata=meta)
        plt.close(fig)
        written.append(path)

    # Normalized bars: one panel per level, each implementation's time over the fastest's.
    cols = min(4, len(d.levels)) or 1
    rows = -(-len(d.levels) // cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 0.5 + 2.6 * rows), squeeze=False)
    for ax, lv in zip(axes.flat, d.levels):
        names = sorted((n for n in d.names if d.ns(n, lv)), key=lambda n: d.ns(n, lv))
        ratios = [d.ns(n, lv) / d.fastest(lv) for n in names]
        bars = ax.barh(names, ratios, color=[colors[n] for n in names])
        ax.bar_label(bars, labels=[f"{r:.2f}x" for r in ratios], padding=2, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(lv + (" (baseline)" if lv in BASELINES else ""))
        ax.set_xscale("log" if max(ratios) > 20 else "linear")
        ax.set_xlim(right=max(ratios) * (3 if max(ratios) > 20 else 1.3))
        ax.axvline(1, color="grey", lw=0.8)
    for ax in list(axes.flat)[len(d.levels):]:
        ax.axis("off")
    fig.suptitle("Time per sample over the fastest at each level (1.00x = fastest; shorter is better)")
    save(fig, "normalized")

    # The ladder: ns/iter at v0..v4, one line per language; peers as single points.
    fig, ax = plt.subplots(figsize=(8, 5))
    for n in d.names:
        xs = [k for k, lv in enumerate(LEVELS) if d.ns(n, lv)]
        if not xs:
            continue
        ys = [d.ns(n, LEVELS[k]) for k in xs]
        peer = d.impls[n].get("kind") == "peer"
        ax.plot(xs, ys, marker="s" if peer else "o", linestyle="none" if peer else "-", color=colors[n],
                label=d.label(n))
    ax.set_xticks(range(len(LEVELS)), ["v0 naive", "v1 pool", "v2 tape", "v3 simd", "v4 threads"])
    ax.set_yscale("log")
    ax.set_ylabel("ns per sample (log scale; lower is better)")
    ax.set_title("The ladder: each level's time per sample, per implementation")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, "ladder")
    return written


def write(path: Path, text: str) -> None:
    """Write a file through a temporary name, so a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    """Read the raw file, write the markdown and (unless --no-charts) the charts."""
    args = parse_args(argv)
    try:
        raw = args.raw or latest_raw(args.out)
        doc = json.loads(raw.read_text())
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    d = Data(doc)
    if not d.ok:
        print(f"error: {shown_path(raw)} has no successful timing to report", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    with_charts = not args.no_charts
    if with_charts:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("error: matplotlib is not installed (`make bench` installs it; or use --no-charts)",
                  file=sys.stderr)
            return 1
    write(args.out / "README.md", markdown(d, raw, args.out, with_charts))
    written = [args.out / "README.md"] + (charts(d, raw, args.out) if with_charts else [])
    print("wrote " + ", ".join(shown_path(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
