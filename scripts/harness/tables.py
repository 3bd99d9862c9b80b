"""The markdown tables of a run (report.py's pages and blocks): each says which clock its times come from."""
from __future__ import annotations

from typing import Any

from harness.analysis import median
from harness.rundata import TIE, Data, peak_kb, shown_path
from impls import LEVELS

# Every table of times says which clock its numbers come from (the timed region's, as the program reports it).
WALL = "Clock: wall time of the timed region (`seconds`), the median of the runs."
PAIRED = ("Clock: each ratio is the median of paired ratios from adjacent runs, by the timed region's CPU time "
          "(`cpu_seconds`) where both sides are single-threaded levels of compiled programs, by its wall time "
          "(`seconds`) at v4 and wherever a peer or an interpreter is one side.")
NO_CLOCK = ""     # a table of no times (the machines, the toolchains)


def table(header: list[str], rows: list[list[str]], align: str, clock: str) -> list[str]:
    """A markdown table, after the line saying which clock its times come from (NO_CLOCK: none); align has
    one letter per column, l or r."""
    marks = {"l": ":--", "r": "--:"}
    return ([f"*{clock}*", ""] if clock else []) + [
        "| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |",
        *("| " + " | ".join(r) + " |" for r in rows), ""]


def num(v: float | None, fmt: str = "{:.2f}") -> str:
    """A number for a cell; '-' when absent."""
    return "-" if v is None else fmt.format(v)


def ns_table(d: Data, workload: str = "softplus", names: list[str] | None = None) -> list[str]:
    """Median time, implementation x level (names: only those, in that order)."""
    levels = d.levels(workload)
    shown = [n for n in names if n in d.names(workload)] if names is not None else d.names(workload)
    rows = [[d.label(n, workload)] + [num(d.ns(n, lv, workload)) for lv in levels] for n in shown]
    return table([d.unit(workload).replace("_per_", "/")] + levels, rows, "l" + "r" * len(levels), WALL)


MB = 1e6           # the memory tables' megabyte: 10^6 bytes (ru_maxrss counts KiB)


def memory_table(d: Data, workload: str = "softplus") -> list[str]:
    """The median peak RSS of each pair's process in MB, implementation x level; for the graph workload with
    the bytes per op beside it (peak bytes over the pair's ops: the whole process's, runtime included)."""
    levels = d.levels(workload)
    rows = []
    for n in d.names(workload):
        cells = []
        for lv in levels:
            kb = d.peak_kb(n, lv, workload)
            cell = num(None if kb is None else kb * 1024 / MB, "{:.1f}")
            if workload == "graph" and kb is not None:
                cell += f" ({kb * 1024 / d.ok[(n, workload, lv)]['ops']:,.0f})"
            cells.append(cell)
        rows.append([d.label(n, workload)] + cells)
    header = "peak MB (bytes/op)" if workload == "graph" else "peak MB"
    return table([header] + levels, rows, "l" + "r" * len(levels), NO_CLOCK)


def normalized_table(d: Data, workload: str = "softplus") -> list[str]:
    """Each level's times over that level's fastest (bold); TIE where the intervals overlap the fastest's."""
    levels = d.levels(workload)
    rows = []
    for n in d.names(workload):
        cells = []
        for lv in levels:
            best = d.fastest(lv, workload)
            cells.append("**1.00**" if n == best else d.ratio(n, best, lv, workload) if best else "-")
        rows.append([d.label(n, workload)] + cells)
    return table(["x fastest"] + levels, rows, "l" + "r" * len(levels), PAIRED if d.paired else WALL)


def c_v2_table(d: Data) -> list[str]:
    """Times over C v2's (the reference point of the project's claims)."""
    base = d.ns("c", "v2")
    if base is None:
        return ["C v2 was not timed, so there are no ratios to it.", ""]
    levels = d.levels()
    rows = [[d.label(n)] + [num(None if d.ns(n, lv) is None else d.ns(n, lv) / base) for lv in levels]
            for n in d.names()]
    return table(["x C v2"] + levels, rows, "l" + "r" * len(levels), WALL)


def ladder_table(d: Data, workload: str = "softplus") -> list[str]:
    """Per language, each level's time and speed-up over its own v0."""
    rows = []
    for n in d.names(workload):
        if not any(d.ns(n, lv, workload) for lv in LEVELS[:3]):
            continue                                   # the peers have no ladder
        v0 = d.ns(n, "v0", workload)
        cells = []
        for lv in LEVELS:
            v = d.ns(n, lv, workload)
            cells.append("-" if v is None else (f"{v:.2f}" + (f" ({v0 / v:.1f}x)" if v0 and lv != "v0" else "")))
        best = min((d.ns(n, lv, workload) for lv in LEVELS if d.ns(n, lv, workload)), default=None)
        rows.append([d.label(n, workload)] + cells + [num(v0 / best if v0 and best else None, "{:.1f}x")])
    unit = d.unit(workload).replace("_per_", "/")
    return table([f"{unit} (x its v0)"] + LEVELS + ["v0 / best level"], rows, "l" + "r" * (len(LEVELS) + 1),
                 WALL)


def overhead_table(d: Data) -> list[str]:
    """What the tape costs over the same math written without one (1.00 = free)."""
    best_simd = d.fastest("fused-simd")
    rows = []
    for n in d.names():
        v2, fused = d.ns(n, "v2"), d.ns(n, "fused")
        v3, simd = d.ns(n, "v3"), d.ns(n, "fused-simd")
        cells = [num(v2 / fused if v2 and fused else None), num(v3 / simd if v3 and simd else None),
                 num(v3 / d.ns(best_simd, "fused-simd") if v3 and best_simd else None)]
        if any(c != "-" for c in cells):
            rows.append([d.label(n)] + cells)
    return table(["tape / baseline", "v2 / its fused", "v3 / its fused-simd", "v3 / fastest fused-simd"],
                 rows, "lrrr", WALL)


def threads_table(d: Data, workload: str = "softplus") -> list[str]:
    """v4 at each thread count: time, speed-up over the same implementation's v3, parallel efficiency, and the
    timed region's CPU time over its wall time (the threads it kept busy: a speed-up alone does not show that;
    the CI's busy budget reads the whole process's instead)."""
    unit = d.unit(workload)
    rows = []
    for n, rs in d.scaling(workload).items():
        v3 = d.ns(n, "v3", workload)
        for r in rs:
            speedup = v3 / r[unit] if v3 else None
            rows.append([d.label(n, workload), str(r["threads"]), f"{r[unit]:.2f}", num(speedup, "{:.2f}x"),
                         num(speedup / r["threads"] if speedup else None, "{:.0%}"), num(busy(r), "{:.1f}")])
    if not rows:
        return ["No v4 was timed.", ""]
    return table(["v4", "threads", unit.replace("_per_", "/"), "speed-up over its v3", "efficiency", "CPU / wall"],
                 rows, "lrrrrr", WALL)


def busy(r: dict[str, Any]) -> float | None:
    """The median over a result's runs of the timed region's CPU time over its wall time."""
    ratios = [x["cpu_seconds"] / x["seconds"] for x in r.get("runs", []) if x.get("seconds") and "cpu_seconds" in x]
    return median(ratios) if ratios else None


def gpu_table(runs: list[Data]) -> list[str]:
    """The runs at a fixed N of v4 (on the most threads the run had) and v5: one row per run, its build's target,
    both medians with their 95% intervals, and v4 over v5 (a ratio of medians: no adjacent pairs across a
    device and the CPU's threads)."""
    def cell(r: dict[str, Any] | None) -> str:
        if r is None:
            return "-"
        lo, hi = r["ci_ns_per_iter"]
        return f"{r['ns_per_iter']:.4g} [{lo:.4g}, {hi:.4g}]"
    rows = []
    for d in runs:
        n = d.doc["config"].get("iters")
        v4, v5 = d.ok.get(("codon", "softplus", "v4")), d.ok.get(("codon", "softplus", "v5"))
        if n is None or (v4 is None and v5 is None):
            continue
        codon = d.impls["codon"]
        rows.append([f"[{d.path.name}]({shown_path(d.path)})", f"`{codon['command']}`, {codon.get('target')}",
                     f"{n:.0e}".replace("e+", "e"), str(v4["threads"]) if v4 else "-", cell(v4),
                     num(busy(v4) if v4 else None, "{:.1f}"), cell(v5),
                     f"{v4['ns_per_iter'] / v5['ns_per_iter']:.0f}x" if v4 and v5 else "-"])
    return table(["run", "program, target", "N", "v4 threads", "v4 ns/iter [95%]", "v4 CPU / wall",
                  "v5 ns/iter [95%]", "v4 / v5"], rows, "llrrrrrr", WALL)


# A. Rogozhnikov, "Fastest Autograd in the West" (2023): his seconds for 10,000 ops x 10,000
# passes on an Apple M1, so ns/op = seconds * 10. Replayed here as published, never rerun, and
# his gradients were not verified (his loss leaves the inputs' gradients at 0, contract-graph).
ROGOZHNIKOV = [("C", 0.99), ("Rust", 1.4), ("numba", 41.0), ("Python (index tape)", 94.0),
               ("JAX (jit, compile included)", 470.0), ("PyTorch", 1130.0)]
ROGOZHNIKOV_LABEL = ("A. Rogozhnikov's published numbers (his: Apple M1, 2023; replayed, not rerun; "
                     "gradients unverified)")


def rogozhnikov_table() -> list[str]:
    """His published row, in ns per op, labelled as his."""
    return table(["", *(name for name, _ in ROGOZHNIKOV)],
                 [["ns/op (his)", *(f"{s * 10:,.1f}".removesuffix(".0") for _, s in ROGOZHNIKOV)]],
                 "l" + "r" * len(ROGOZHNIKOV), "Clock: his, as published (wall time of his whole run).")


def runs_table(d: Data) -> list[str]:
    """Every timed pair: N, median, its 95% interval, min, max, the median CPU time, the runs' count, and the
    most the rest of the machine did during one of its runs (other processes, steal; '?' for older runs); and the
    median peak RSS of its process where the run recorded it (a column only then)."""
    peaks = d.has_peaks()
    rows = []
    for r in d.results:
        if r["status"] != "ok":
            continue
        cpu = [run["cpu_seconds"] for run in r["runs"] if "cpu_seconds" in run]
        kb = peak_kb(r)
        rows.append([r["impl"], r["workload"], r["level"], str(r["threads"]), f"{r['iters']:,}",
                     f"{r['median_s']:.4f}", f"{r['ci_low_s']:.4f}-{r['ci_high_s']:.4f}",
                     f"{r['ci_coverage']:.1%}", f"{r['min_s']:.4f}", f"{r['max_s']:.4f}",
                     num(median(cpu) if cpu else None, "{:.4f}"),
                     *([num(None if kb is None else kb * 1024 / MB, "{:.1f}")] if peaks else []), str(len(r["runs"])),
                     *("?" if r.get(k) is None else f"{r[k]:.2f}" for k in ("max_other_load", "max_steal"))])
    return table(["impl", "workload", "level", "threads", "N", "median s", "interval s", "coverage", "min s",
                  "max s", "median CPU s", *(["median peak MB"] if peaks else []), "runs", "others, CPUs (max)",
                  "steal, CPUs (max)"], rows,
                 "lllrrrrrrrrrrr" + ("r" if peaks else ""), "Clock: wall time of the timed region (`seconds`), "
                 "and its CPU time (`cpu_seconds`) in its own column; others: the CPUs other processes kept busy "
                 "during the run, steal included, from /proc/stat.")


def problems(d: Data) -> list[str]:
    """Skipped or failed implementations, failed pairs (with their numbers) and the harness's notes."""
    out = [f"- **{i['name']}** {i['status']}: {i['reason']}" for i in d.doc["implementations"] if i["status"] != "ok"]
    out += [f"- **{i['name']}** graph probe {i['graph']}" for i in d.doc["implementations"]
            if str(i.get("graph", "")).startswith("failed")]
    out += [f"- **{r['impl']} {r['workload']} {r['level']}**"
            + (f" ({r['threads']} threads)" if r["level"] == "v4" else "")
            + f" failed (not in the tables): {r['reason']}" for r in d.results if r["status"] == "failed"]
    out += [f"- {n}" for n in d.doc.get("notes", [])]
    return out + [""] if out else ["None: every implementation built and every level agreed with the reference.", ""]


def loads(values: list[float] | None) -> str:
    """A load average triple as '0.12, 0.30, 0.25'."""
    return ", ".join(f"{v:.2f}" for v in values) if values else "?"


def machine_table(d: Data) -> list[str]:
    """The machine, the commit, the run, and each implementation's toolchain, target and vector width."""
    m, c = d.machine, d.doc["config"]
    flags = ", ".join(f for f in ("avx2", "avx512f") if m.get(f)) or "neither avx2 nor avx512f"
    rows = [["CPU", f"{m['cpu']} (family {m.get('cpu_family')}, model {m.get('cpu_model')}; {flags})"],
            ["cores", f"{m['cores']} available to the run ({m['logical_cpus']} logical CPUs)"],
            ["memory", m.get("memory", "")], ["OS", m["os"]], ["Python", m["python"]],
            ["commit", f"`{m['git_commit'][:12]}`" + (" (with uncommitted changes)" if m.get("git_dirty") else "")],
            ["date", m["date"]],
            ["load average (1, 5, 15 min)", f"{loads(m.get('load_average_start'))} at the start, "
                                            f"{loads(m.get('load_average_end'))} at the end"],
            ["other processes while timing", "?" if m.get("other_load") is None else
             f"{m['other_load']:.2f} CPUs busy on average (besides the benchmark)"
             + ("" if m.get("steal") is None
                else f", of which steal (the hypervisor's other guests) {m['steal']:.2f}")],
            ["run", f"`{d.doc['command']}`, {m.get('seconds', 0):.0f} s; built for CPU={c.get('cpu_target')}; "
                    f"round order shuffled with seed {c.get('shuffle_seed')}"]]
    for i in d.doc["implementations"]:
        if i["status"] != "ok":
            continue
        parts = [i.get("version", "")]
        if i.get("vector_width") is not None:
            parts.append(f"target {i['target']}, vector width {i['vector_width']}"
                         + (f" ({i['vector']})" if i.get("vector") else ""))
        elif i.get("compiled"):
            parts.append("target and vector width not stated")
        if i.get("compiler_version"):
            parts.append(f"compiler `{i['compiler']}`: {i['compiler_version']}")
        for var, flags_ in i.get("flags", {}).items():
            parts.append(f"{var} `{flags_}`")
        if i.get("python"):
            parts.append(i["python"])
        rows.append([i["name"], "; ".join(p for p in parts if p)])
    return table(["", ""], rows, "ll", NO_CLOCK)


def reading(e: dict[str, Any] | None, *, name: str = "", pairs: int | None = None) -> str:
    """A paired reading as `MEDIAN [LOW, HIGH]`, `≈` first when its interval holds 1.00, its number of pairs
    added where it is not `pairs` (a side with fewer rounds, Impl.rounds); '-' when absent."""
    if not e:
        return "-"
    lo, hi = e["interval"]
    n = len(e["ratios"])
    return (f"{TIE if e['read'] == 'tie' else ''}{e['median']:.2f} [{lo:.2f}, {hi:.2f}]" + (f" {name}" if name else "")
            + (f" ({n} pairs)" if pairs is not None and n != pairs else ""))


def half_widths(d: Data) -> dict[str, list[float]]:
    """The relative half-width, (high - low) / 2 / median, of every paired interval the run states: each
    implementation over its level's fastest and Codon over the best port. "compiled": those between two
    compiled programs (by the timed region's CPU time, v4 by wall time), "all": every one, peers and
    interpreters included."""
    out: dict[str, list[float]] = {"compiled": [], "all": []}
    entries = [(k[0], p["against"], p) for k, p in d.paired.items() if p["against"] != k[0]]
    entries += [("codon", e["port"], e) for e in d.codon_best.values()]
    for a, b, e in entries:
        lo, hi = e["interval"]
        w = (hi - lo) / 2 / e["median"]
        out["all"].append(w)
        if d.impls.get(a, {}).get("compiled") and d.impls.get(b, {}).get("compiled"):
            out["compiled"].append(w)
    return out


def precision(d: Data) -> list[str]:
    """One line: how narrow the run's paired intervals are (the median half-width, compiled pairs and all),
    from how many rounds, in how long."""
    w = half_widths(d)
    if not w["all"]:
        return []
    c = d.doc["config"]
    seconds = d.machine.get("seconds")
    compiled = (f"±{median(w['compiled']):.1%} at the median of its {len(w['compiled'])} paired ratios between "
                "compiled programs, " if w["compiled"] else "")
    return [f"Paired intervals of this run ({c['repeats']} rounds of at least {c['min_time']:g} s"
            + (f", {seconds:,.0f} s in all" if seconds else "") + f"): {compiled}"
            f"±{median(w['all']):.1%} at the median of all {len(w['all'])} (the half-width of the 95% interval "
            "over the median, each implementation over its level's fastest and Codon over the best port).", ""]
