#!/usr/bin/env python3
"""How often `make bench-ci` fails by chance, and whether it catches the faults it exists for.

    python scripts/ci_trials.py --runs 10                    # 10 consecutive make bench-ci
    python scripts/ci_trials.py --sabotage v4-one-thread-c --sabotage-runs 3
    python scripts/ci_trials.py --runs 10 --sabotage all     # both, as docs/benchmarking.md's trials
    python scripts/ci_trials.py --runs 10 --neighbour        # while another process holds one CPU

A run of the plain series must pass; a run of a sabotaged build must fail. A sabotage is a
copy of the repository's files (tracked and untracked, not ignored) with a few exact source
edits (SABOTAGES), built in the copy (its .venv a link to this one's) and timed there with
`make bench-ci`, only the implementations it concerns. An edit that no longer matches its
source (its text not exactly once in its file) is an error before any run, never a silent pass.

Writes results/ci-trials/<machine slug>/<date>.json: every run's exit status and budget
verdicts (the values each was judged on), and per budget the range of medians and values over
the plain series: the figures docs/benchmarking.md gives for the budgets' limits. Run it on an idle
machine: other processes make the budgets skip, and such a run is counted as `skipped`.
--neighbour runs the plain series beside a process of its own that keeps one CPU busy: there
the v4 budgets must skip, saying why, and the rest must still pass.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import machine  # noqa: E402
from harness import ROOT, rawfile  # noqa: E402
from harness.processes import git, run_main  # noqa: E402

# name -> (implementations timed, [(file, text, replacement)]): each text occurs exactly once in its
# file (checked before any run: stale_edits).
SABOTAGES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    # v4 asked for 2 threads doing the work of one: the same ranges, all on the calling thread. Codon
    # and C: a team of one OpenMP thread. Zig and Rust: no worker thread started, so each range runs
    # on the calling thread, as when a thread cannot be started.
    "v4-one-thread-codon": ("codon", [
        ("core/threads.codon", "@par(num_threads=threads,", "@par(num_threads=1,")]),
    "v4-one-thread-c": ("c", [
        ("ports/c/softplus/threads.c", "num_threads(team)", "num_threads(1)"),
        ("ports/c/graph/threads.c", "num_threads(team)", "num_threads(1)")]),
    "v4-one-thread-zig": ("zig", [
        ("ports/zig/core/threads.zig", "handles[t] = std.Thread.spawn(",
         "handles[t] = if (true) null else std.Thread.spawn(")]),
    "v4-one-thread-rust": ("rust", [
        ("ports/rust/core/threads.rs", "std::thread::Builder::new().spawn_scoped(scope, move || work(first, end))",
         'if true { Err(std::io::Error::other("sabotage")) } '
         "else { std::thread::Builder::new().spawn_scoped(scope, move || work(first, end)) }")]),
    # A wrong constant: splitmix64's increment one off; every sum changes, verification must fail.
    "c-wrong-constant": ("c", [("ports/c/core/rng.c", "0x9E3779B97F4A7C15", "0x9E3779B97F4A7C16")]),
    # The graph's lane loops left to gcc without `omp simd` (it unrolls them to scalar libm calls).
    "c-graph-scalar-lanes": ("c", [("ports/c/graph/simd.c", '#define LANE_LOOP _Pragma("omp simd")',
                                    "#define LANE_LOOP")]),
}


def stale_edits(name: str, root: Path | None = None) -> list[str]:
    """The edits of sabotage `name` that do not match the files under root (default ROOT), one line each:
    an edit's text must occur exactly once in its file, or the sabotaged build would not be the fault the
    sabotage names."""
    root = root or ROOT
    stale = []
    for path, text, _ in SABOTAGES[name][1]:
        found = (root / path).read_text().count(text) if (root / path).is_file() else None
        if found != 1:
            where = f"{path} does not exist" if found is None else f"{text!r} occurs {found} times in {path}"
            stale.append(f"sabotage {name}: {where}")
    return stale


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Repeated and sabotaged `make bench-ci` runs, with their verdicts.")
    p.add_argument("--runs", type=int, default=0, help="consecutive plain make bench-ci runs (each must pass)")
    p.add_argument("--sabotage", action="append", default=[], metavar="NAME",
                   help=f"a sabotaged build that must fail: {', '.join(SABOTAGES)}, or all (repeatable)")
    p.add_argument("--sabotage-runs", type=int, default=3, help="runs of each sabotaged build (default 3)")
    p.add_argument("--neighbour", action="store_true", help="run the plain series while a spinning process "
                   "holds one CPU")
    p.add_argument("--bench-flags", default="", help="extra BENCH_FLAGS for every run")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "ci-trials", help="where <slug>/<date>.json goes")
    args = p.parse_args(argv)
    if "all" in args.sabotage:
        args.sabotage = list(SABOTAGES)
    unknown = [s for s in args.sabotage if s not in SABOTAGES]
    if unknown:
        p.error(f"unknown sabotage(s) {', '.join(unknown)}; known: {', '.join(SABOTAGES)}")
    # Before any run: a stale edit found only when the sabotages' turn comes would lose the plain series.
    if stale := [line for name in args.sabotage for line in stale_edits(name)]:
        p.error("; ".join(stale) + "; update SABOTAGES")
    if args.runs < 0 or args.sabotage_runs < 1:
        p.error("--runs must be at least 0 and --sabotage-runs at least 1")
    if not args.runs and not args.sabotage:
        p.error("nothing to run: give --runs N, --sabotage NAME, or both")
    if problem := rawfile.unwritable(args.out):
        p.error(f"--out: {problem}")
    return args


def bench_ci(tree: Path, flags: str) -> dict[str, Any]:
    """One `make bench-ci` in tree: its exit status, verdict line, budgets and failures."""
    results = tree / "build" / "bench-ci"
    before = set(results.glob(f"raw/*/*{rawfile.SUFFIX}"))
    proc = subprocess.run(["make", "--no-print-directory", "bench-ci", f"BENCH_FLAGS={flags}"], cwd=tree,
                          capture_output=True, text=True, timeout=3600)
    lines = proc.stdout.splitlines()
    verdict = next((ln for ln in reversed(lines) if ln.startswith("bench-ci:")), "(no verdict line)")
    new = sorted(set(results.glob(f"raw/*/*{rawfile.SUFFIX}")) - before)
    doc = rawfile.read(new[-1]) if new else {}
    run = {"returncode": proc.returncode, "verdict": verdict,
           "failures": [ln for ln in lines if ln.startswith("FAILED")],
           "budgets": [{k: v[k] for k in ("name", "verdict", "limit", "median", "interval", "values") if k in v}
                       for v in doc.get("budgets", [])],
           # budgets left unjudged because other processes held the CPUs (not: a level not timed)
           "skipped": [ln.strip() for ln in lines if ln.strip().startswith("skip ") and "other processes" in ln],
           "breaches": [ln.split("=")[0].split(None, 1)[1].strip() for ln in lines
                        if ln.lstrip().startswith("BREACH")],
           "other_load_budgets": doc.get("machine", {}).get("other_load_budgets"),
           "seconds": doc.get("machine", {}).get("seconds")}
    print(f"  exit {proc.returncode}: {verdict}", flush=True)
    for ln in lines:
        if ln.lstrip().startswith(("BREACH", "skip ")) or ln.startswith("FAILED"):
            print(f"    {ln.strip()}", flush=True)
    if not verdict.startswith("bench-ci:"):                # it never got to the budgets
        print(proc.stdout[-2000:] + proc.stderr[-2000:], flush=True)
    return run


def sabotaged_tree(name: str, where: Path) -> Path:
    """A copy of the repository's files with the sabotage's edits made; raises if one does not match."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    tree = where / name
    for f in filter(None, files):
        if (ROOT / f).is_file():
            (tree / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, tree / f)
    (tree / ".venv").symlink_to(ROOT / ".venv")           # the toolchains, not installed again
    if stale := stale_edits(name, tree):           # the tree changed since parse_args checked it
        raise SystemExit("error: " + "; ".join(stale) + "; update SABOTAGES")
    for path, text, replacement in SABOTAGES[name][1]:
        (tree / path).write_text((tree / path).read_text().replace(text, replacement))
    return tree


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per budget over runs: how often each verdict, and the range of medians and single values."""
    out: dict[str, Any] = {}
    for run in runs:
        for b in run["budgets"]:
            s = out.setdefault(b["name"], {"limit": b["limit"], "verdicts": {}, "medians": [], "values": []})
            s["verdicts"][b["verdict"]] = s["verdicts"].get(b["verdict"], 0) + 1
            if "median" in b:
                s["medians"].append(b["median"])
                s["values"] += b["values"]
                s.setdefault("nearest", []).append(b["interval"][0] if b["name"].count(" / ") else b["interval"][1])
    # nearest: the interval end that comes closest to breaching (a "time" budget breaches when
    # its interval's low end passes above the limit, a cpu/wall one when its high end drops below).
    return {name: {"limit": s["limit"], "verdicts": s["verdicts"],
                   "median_range": [min(s["medians"]), max(s["medians"])] if s["medians"] else None,
                   "value_range": [min(s["values"]), max(s["values"])] if s["values"] else None,
                   "nearest_interval_end": (max(s["nearest"]) if name.count(" / ") else min(s["nearest"]))
                   if s.get("nearest") else None} for name, s in out.items()}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc)
    facts = machine.cpu_facts()
    doc: dict[str, Any] = {"generated_by": "scripts/ci_trials.py", "command": " ".join(sys.argv),
                           "machine": {**facts, "slug": machine.slug(facts), "cores": machine.cores()},
                           "git_commit": git("rev-parse", "HEAD"),
                           "git_dirty": bool(git("status", "--porcelain")),
                           "date": started.isoformat(timespec="seconds"), "plain": [], "sabotage": {}}
    doc["neighbour"] = args.neighbour
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.neighbour and args.runs else None
    try:
        for k in range(1, args.runs + 1):
            print(f"[plain {k}/{args.runs}] make bench-ci" + (" (a neighbour holds one CPU)" if spinner else ""),
                  flush=True)
            doc["plain"].append(bench_ci(ROOT, args.bench_flags))
    finally:
        if spinner:
            spinner.kill()
            spinner.wait()
    with tempfile.TemporaryDirectory(prefix="ci-trials-") as tmp:
        for name in args.sabotage:
            impls, _ = SABOTAGES[name]
            tree = sabotaged_tree(name, Path(tmp))
            doc["sabotage"][name] = []
            for k in range(1, args.sabotage_runs + 1):
                print(f"[sabotage {name} {k}/{args.sabotage_runs}] make bench-ci (--impls {impls})", flush=True)
                doc["sabotage"][name].append(bench_ci(tree, f"--impls {impls} {args.bench_flags}".strip()))
    plain_failed = [r for r in doc["plain"] if r["returncode"] != 0]
    # Caught: make bench-ci failed, and said why (a breached budget or a failed verification).
    caught = {n: sum(r["returncode"] != 0 and bool(r["breaches"] or r["failures"]) for r in rs)
              for n, rs in doc["sabotage"].items()}
    doc["plain_summary"] = summary(doc["plain"])
    doc["sabotage_summary"] = {n: summary(rs) for n, rs in doc["sabotage"].items()}
    path = args.out / doc["machine"]["slug"] / f"{started.strftime('%Y-%m-%dT%H%M%SZ')}.json"
    rawfile.write_atomic(path, json.dumps(doc, indent=1) + "\n")
    print(f"plain: {len(doc['plain']) - len(plain_failed)} of {len(doc['plain'])} passed "
          f"({sum(bool(r['skipped']) for r in doc['plain'])} with budgets skipped)")
    for name, n in caught.items():
        why = sorted({w for r in doc["sabotage"][name] for w in r["breaches"] + r["failures"]})
        print(f"sabotage {name}: caught {n} of {len(doc['sabotage'][name])} ({'; '.join(why)[:300]})")
    for name, s in doc["plain_summary"].items():
        if s["median_range"]:
            print(f"  {name:<22} medians {s['median_range'][0]:.3f}-{s['median_range'][1]:.3f}, "
                  f"values {s['value_range'][0]:.3f}-{s['value_range'][1]:.3f} (limit {s['limit']:.3f}) "
                  f"{s['verdicts']}")
    print(f"trials: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    missed = [n for n, c in caught.items() if c < len(doc["sabotage"][n])]
    return 1 if plain_failed or missed else 0


if __name__ == "__main__":
    run_main(main)
