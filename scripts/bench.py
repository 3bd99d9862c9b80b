#!/usr/bin/env python3
"""The benchmark harness: build, verify, time, compare, publish (`make bench`, `make bench-ci`).

1. Build every implementation with the project's Makefile, each on its own, so a missing
   toolchain or a broken port is reported and the others go on.
2. Verify every (implementation, level) against the independent reference
   (tests/reference.py) at a small N before timing it: sequential levels within 1e-12
   relative, batched ones within 1e-9 (contract §2). One that disagrees is reported as
   failed, with the numbers, and never timed. A level a program does not have (it answers
   `error: level L is not implemented by this program`) is noted, not failed.
3. Time every verified pair R times, round-robin (each round runs every pair once, so drift
   of the machine hits all alike), one process per run, each with a timeout. A crash or a
   hang is reported and that pair is dropped; the rest go on.
4. Check the timed runs' sums against each other: at each N, every result must agree with
   the sums most sequential levels gave (bit-identical sums are the expected case).
5. Record medians, min, max, ns/iter, ratios to C v2 and to the fastest at each level, and
   the machine, in results/raw/<date>-<host>.json, written atomically (an interrupted run
   leaves no file). scripts/report.py turns it into results/README.md and charts.

`--ci` is the CI timing job: small sizes, no peers, results under build/, then ratio
budgets that catch real regressions; it exits non-zero on a breach or any failure.

Progress goes to stderr as it runs; the summary and the results path go to stdout.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import math
import os
import platform
import re
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

SCRIPTS = Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))
sys.path.insert(0, str(ROOT / "tests"))

import reference  # noqa: E402  (tests/reference.py: the independent oracle)
from impls import ALL_LEVELS, DEFAULT, SEQUENTIAL, Impl, load_registry  # noqa: E402

SCHEMA = 1
KEYS = ["impl", "level", "iters", "seed", "threads", "seconds", "ns_per_iter", "sum_f", "sum_dx", "sum_dy"]
NOT_IMPLEMENTED = re.compile(r"^error: level \S+ is not implemented by this program")
# Timed sums at an N up to this are also checked against the Python reference itself
# (about 3 s of CPython per million samples); above it, against the other programs.
REFERENCE_LIMIT = 500_000


# --- options ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Preset:
    """Defaults of a kind of run; a flag given on the command line overrides each."""
    iters: int
    python_iters: int
    repeats: int
    results_dir: str
    peers: bool
    timeout: float


FULL = Preset(iters=10_000_000, python_iters=200_000, repeats=5, results_dir="results", peers=True,
              timeout=120.0)
# 5M samples: at 2M a v3 run lasts 25 ms and its best of 3 ranged over 25% here, enough to brush a budget.
CI = Preset(iters=5_000_000, python_iters=20_000, repeats=5, results_dir="build/bench-ci", peers=False,
            timeout=60.0)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def seed_int(text: str) -> int:
    """argparse type: a seed, 0 <= S < 2^64 (contract §4)."""
    value = int(text)
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"must be from 0 to 2^64-1, got {text}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a number of seconds > 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def name_list(text: str) -> list[str]:
    """argparse type: a comma-separated list of names."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("needs at least one name")
    return names


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; unset sizes come from the preset (--ci or the full benchmark)."""
    p = argparse.ArgumentParser(
        description="Build, verify and time every implementation of the autograd benchmark, "
                    "and write results/raw/<date>-<host>.json (see scripts/report.py).")
    p.add_argument("--impls", type=name_list, help="implementations to run, comma-separated "
                   f"(default: all of {', '.join(i.name for i in DEFAULT)}; --ci: all but the peers)")
    p.add_argument("--levels", type=name_list, help=f"levels to run (default: all of {', '.join(ALL_LEVELS)})")
    p.add_argument("--iters", type=positive_int, help=f"samples per timed run (default {FULL.iters:,}; "
                   f"--ci {CI.iters:,})")
    p.add_argument("--python-iters", type=positive_int, help="samples per timed run of interpreted "
                   f"implementations, the CPython port (default {FULL.python_iters:,}; --ci {CI.python_iters:,})")
    p.add_argument("--verify-iters", type=positive_int, default=10_007,
                   help="samples of the check against the reference before timing (default 10,007)")
    p.add_argument("--repeats", type=positive_int, help=f"timed runs of each pair (default {FULL.repeats}; "
                   f"--ci {CI.repeats})")
    p.add_argument("--threads", type=positive_int, help="threads for v4 (default: each program's own, "
                   "the CPUs it may use)")
    p.add_argument("--seed", type=seed_int, default=42, help="input stream seed (default 42)")
    p.add_argument("--timeout", type=positive_float, help="seconds before a run is killed as hung "
                   f"(default {FULL.timeout:g}; --ci {CI.timeout:g})")
    p.add_argument("--results-dir", type=Path, help="where raw/<date>-<host>.json goes "
                   f"(default {FULL.results_dir}; --ci {CI.results_dir})")
    p.add_argument("--build-dir", default="build", help="the Makefile's BUILD (default build)")
    p.add_argument("--no-build", action="store_true", help="use what is built; run no make")
    p.add_argument("--registry", type=Path, help="a JSON list of implementations replacing the "
                   "built-in one (scripts/impls.py's fields)")
    p.add_argument("--ci", action="store_true", help="the CI timing job: small sizes, no peers, then "
                   "check the ratio budgets; exit 1 on a breach or any failure")
    p.add_argument("--strict", action="store_true", help="exit 1 if any implementation failed "
                   "(implied by --ci)")
    args = p.parse_args(argv)
    preset = CI if args.ci else FULL
    for name in ("iters", "python_iters", "repeats", "timeout", "results_dir"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(preset, name))
    args.results_dir = Path(args.results_dir)
    args.peers_by_default = preset.peers
    args.strict = args.strict or args.ci
    if args.levels:
        unknown = [lv for lv in args.levels if lv not in ALL_LEVELS]
        if unknown:
            p.error(f"unknown level(s) {', '.join(unknown)}; levels are {', '.join(ALL_LEVELS)}")
    return args


# --- progress --------------------------------------------------------------------------------

def log(message: str) -> None:
    """A progress line on stderr, shown at once."""
    print(message, file=sys.stderr, flush=True)


def clock(seconds: float) -> str:
    """Seconds as m:ss."""
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


# --- running one process ---------------------------------------------------------------------

@dataclass
class Proc:
    """What one process did."""
    returncode: int | None           # None: killed after the timeout
    stdout: str
    stderr: str
    wall: float


def run_process(argv: list[str], timeout: float) -> Proc:
    """Run argv with its own process group; on timeout or interrupt kill the whole group.

    Killing the group, not just the child, matters: a grandchild holding the output pipes
    open would otherwise keep us waiting long after the timeout.
    """
    start = time.monotonic()
    try:
        child = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, errors="replace",
                                 start_new_session=True)
    except OSError as e:
        return Proc(127, "", f"cannot start {argv[0]}: {e.strerror}", 0.0)
    try:
        out, err = child.communicate(timeout=timeout)
        return Proc(child.returncode, out, err, time.monotonic() - start)
    except subprocess.TimeoutExpired:
        kill_group(child)
        out, err = child.communicate()
        return Proc(None, out, err, time.monotonic() - start)
    except BaseException:
        kill_group(child)
        child.communicate()
        raise


def kill_group(child: subprocess.Popen) -> None:
    """SIGKILL the child's process group (it leads one: start_new_session)."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def last_line(text: str) -> str:
    """The last non-empty line of a program's output, shortened."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def failure(proc: Proc, timeout: float) -> str:
    """Why a run failed: timed out, killed by a signal, or a non-zero exit status."""
    if proc.returncode is None:
        return f"timed out after {timeout:g} s (killed)"
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        why = f"crashed ({name})"
    else:
        why = f"exit status {proc.returncode}"
    tail = last_line(proc.stderr)
    return f"{why}: {tail}" if tail else why


def parse_record(stdout: str, impl: str, level: str, iters: int, seed: int) -> dict[str, Any]:
    """The one JSON line of a `--level L --json` run, checked against contract §5-§6."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise ValueError(f"expected one JSON line, got {len(lines)}")
    try:
        rec = json.loads(lines[0])
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg}): {lines[0][:200]!r}") from None
    if not isinstance(rec, dict) or list(rec) != KEYS:
        raise ValueError(f"keys {list(rec) if isinstance(rec, dict) else type(rec).__name__} "
                         f"are not the contract's {KEYS}")
    expected = {"impl": impl, "level": level, "iters": iters, "seed": seed}
    for key, want in expected.items():
        if rec[key] != want:
            raise ValueError(f"{key} is {rec[key]!r}, expected {want!r}")
    for key in KEYS[4:]:
        if isinstance(rec[key], bool) or not isinstance(rec[key], (int, float)) or not math.isfinite(rec[key]):
            raise ValueError(f"{key} is {rec[key]!r}, not a finite number")
    if rec["seconds"] < 0 or rec["threads"] < 1:
        raise ValueError(f"seconds {rec['seconds']} or threads {rec['threads']} out of range")
    return rec


# --- checking sums ---------------------------------------------------------------------------

def tolerance(level: str) -> float:
    """Contract §2: sequential levels within 1e-12 relative, batched ones within 1e-9."""
    return reference.SEQUENTIAL_RTOL if level in SEQUENTIAL else reference.BATCHED_RTOL


def sums_of(rec: dict[str, Any]) -> tuple[float, float, float]:
    """The three checksums of a record."""
    return rec["sum_f"], rec["sum_dx"], rec["sum_dy"]


def disagreement(got: Iterable[float], want: Iterable[float], rtol: float, against: str) -> str:
    """'' when every sum agrees within rtol; otherwise the numbers, for the report."""
    bad = []
    for name, g, w in zip(("sum_f", "sum_dx", "sum_dy"), got, want):
        rel = reference.rel_diff(g, w)
        if not rel <= rtol:
            bad.append(f"{name} {g!r} vs {against} {w!r} (relative difference {rel:.3g} > {rtol:g})")
    return "; ".join(bad)


_REFERENCE: dict[tuple[int, int], tuple[float, float, float]] = {}


def reference_sums(seed: int, n: int) -> tuple[float, float, float]:
    """tests/reference.run's sums, computed once per (seed, n)."""
    if (seed, n) not in _REFERENCE:
        _REFERENCE[(seed, n)] = tuple(reference.run(seed, n))
    return _REFERENCE[(seed, n)]


# --- the run's state -------------------------------------------------------------------------

@dataclass
class ImplState:
    """One implementation: whether it could be built or found, and what it says it is."""
    impl: Impl
    status: str = "pending"          # ok, skipped, build-failed
    reason: str = ""
    version: str = ""
    build_seconds: float | None = None


@dataclass
class Pair:
    """One (implementation, level): its verification, then its timed runs."""
    impl: Impl
    level: str
    iters: int
    status: str = "pending"          # verified -> ok; absent; failed
    reason: str = ""
    verify: dict[str, Any] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    identical: bool | None = None    # sums bit-identical to the consensus at this N

    @property
    def key(self) -> str:
        return f"{self.impl.name} {self.level}"


def args_for(pair: Pair, iters: int, opts: argparse.Namespace) -> list[str]:
    """The contract command line of one run."""
    argv = pair.impl.command(opts.build_dir) + ["--level", pair.level, "--iters", str(iters),
                                                "--seed", str(opts.seed), "--json"]
    if opts.threads:
        argv += ["--threads", str(opts.threads)]
    return argv


# --- 1. build --------------------------------------------------------------------------------

def module_present(name: str) -> bool:
    """Whether this Python can import `name` (looked up, not imported: imports are slow)."""
    return importlib.util.find_spec(name) is not None


def missing_paths(impl: Impl, build: str) -> list[str]:
    """The files impl's command names that do not exist."""
    return [a for a in impl.command(build)[:2] if "/" in a and not Path(a).exists()]


def build_all(states: list[ImplState], opts: argparse.Namespace) -> None:
    """make each target on its own; set each state to ok, skipped or build-failed."""
    targets = [s for s in states if s.impl.target and not opts.no_build]
    for n, state in enumerate(targets, 1):
        target = state.impl.make_target(opts.build_dir)
        log(f"[build {n}/{len(targets)}] {state.impl.name}: make {target}")
        start = time.monotonic()
        proc = run_process(["make", "--no-print-directory", target], timeout=1800)
        state.build_seconds = round(time.monotonic() - start, 2)
        if proc.returncode != 0:
            state.status = "build-failed"
            state.reason = f"make {target}: {failure(proc, 1800)}"
            log(f"  FAILED after {state.build_seconds:.1f} s: {state.reason}")
            for line in (proc.stdout + proc.stderr).splitlines()[-10:]:
                log(f"  | {line}")
        else:
            skip = [ln for ln in proc.stdout.splitlines() if ln.startswith("skip:")]
            if skip:
                log(f"  {skip[0]}")
            log(f"  done in {state.build_seconds:.1f} s")
    for state in states:
        if state.status != "pending":
            continue
        impl = state.impl
        if impl.module and not module_present(impl.module):
            state.status, state.reason = "skipped", f"{impl.module} is not installed (make peers installs it)"
        elif missing_paths(impl, opts.build_dir):
            state.status = "skipped"
            state.reason = (f"{missing_paths(impl, opts.build_dir)[0]} not found"
                            + (" (its toolchain is missing?)" if impl.target else ""))
        else:
            state.status = "ok"
            proc = run_process(impl.command(opts.build_dir) + ["--version"], timeout=opts.timeout)
            state.version = last_line(proc.stdout) if proc.returncode == 0 else ""
        if state.status == "skipped":
            log(f"skip: {impl.name}: {state.reason}")


# --- 2. verify -------------------------------------------------------------------------------

def verify_all(pairs: list[Pair], opts: argparse.Namespace) -> None:
    """Run each pair at --verify-iters and compare with the reference; set verified/absent/failed."""
    n = opts.verify_iters
    log(f"[verify] reference sums at N={n:,} (tests/reference.py)")
    want = reference_sums(opts.seed, n)
    for k, pair in enumerate(pairs, 1):
        prefix = f"[verify {k:>{len(str(len(pairs)))}}/{len(pairs)}] {pair.key:<18}"
        proc = run_process(args_for(pair, n, opts), opts.timeout)
        if proc.returncode == 2 and NOT_IMPLEMENTED.match(proc.stderr) and not proc.stdout:
            pair.status, pair.reason = "absent", "level not implemented by this program"
            log(f"{prefix} not implemented (skipped)")
            continue
        if proc.returncode != 0:
            pair.status, pair.reason = "failed", f"verification run {failure(proc, opts.timeout)}"
            log(f"{prefix} FAILED: {pair.reason}")
            continue
        try:
            rec = parse_record(proc.stdout, pair.impl.name, pair.level, n, opts.seed)
        except ValueError as e:
            pair.status, pair.reason = "failed", f"verification run: bad output: {e}"
            log(f"{prefix} FAILED: {pair.reason}")
            continue
        bad = disagreement(sums_of(rec), want, tolerance(pair.level), "reference")
        pair.verify = {"iters": n, "sums": list(sums_of(rec)), "reference": list(want),
                       "max_rel_diff": max(reference.rel_diff(g, w) for g, w in zip(sums_of(rec), want)),
                       "tolerance": tolerance(pair.level)}
        if bad:
            pair.status, pair.reason = "failed", f"wrong sums at N={n}: {bad}"
            log(f"{prefix} FAILED (not timed): {pair.reason}")
        else:
            pair.status = "verified"
            log(f"{prefix} ok (max relative difference {pair.verify['max_rel_diff']:.1e})")


# --- 3. time ---------------------------------------------------------------------------------

def time_all(pairs: list[Pair], opts: argparse.Namespace) -> None:
    """R rounds, each running every live pair once, in the same order; drop a pair that fails."""
    live = [p for p in pairs if p.status == "verified"]
    total = len(live) * opts.repeats
    done, started = 0, time.monotonic()
    walls: dict[str, float] = {}           # last wall time of each pair: the ETA
    for rnd in range(1, opts.repeats + 1):
        for pair in live:
            if pair.status != "verified":
                continue
            done += 1
            proc = run_process(args_for(pair, pair.iters, opts), opts.timeout)
            walls[pair.key] = proc.wall
            prefix = f"[time {done:>{len(str(total))}}/{total} round {rnd}/{opts.repeats}] {pair.key:<18} {pair.iters:>11,} iters"
            if proc.returncode != 0:
                pair.status, pair.reason = "failed", f"timed run {rnd}: {failure(proc, opts.timeout)}"
                log(f"{prefix}  FAILED: {pair.reason} (not run again)")
                continue
            try:
                rec = parse_record(proc.stdout, pair.impl.name, pair.level, pair.iters, opts.seed)
            except ValueError as e:
                pair.status, pair.reason = "failed", f"timed run {rnd}: bad output: {e}"
                log(f"{prefix}  FAILED: {pair.reason} (not run again)")
                continue
            pair.runs.append({"seconds": rec["seconds"], "ns_per_iter": rec["ns_per_iter"],
                              "threads": rec["threads"], "sums": list(sums_of(rec)),
                              "wall": round(proc.wall, 4)})
            left = sum(walls.get(p.key, 0.0) for p in live if p.status == "verified") * (opts.repeats - rnd)
            left += sum(walls.get(p.key, 0.0) for p in live[live.index(pair) + 1:] if p.status == "verified")
            eta = f"~{clock(left)} left" if rnd > 1 else "ETA after round 1"
            log(f"{prefix}  {rec['seconds']:8.3f} s {rec['ns_per_iter']:10.2f} ns/iter   "
                f"elapsed {clock(time.monotonic() - started)}, {eta}")


# --- 4. cross-check the timed sums -----------------------------------------------------------

def consensus(pairs: list[Pair], iters: int, seed: int) -> tuple[tuple[float, float, float] | None, str]:
    """The sums to check the runs at `iters` against, and where they came from.

    Up to REFERENCE_LIMIT samples the Python reference itself; above, the sums that most
    sequential runs gave bit for bit (ties go to the earlier program: C before Codon).
    """
    if iters <= REFERENCE_LIMIT:
        return reference_sums(seed, iters), "reference"
    votes: dict[tuple[float, float, float], list[str]] = {}
    for p in sorted(pairs, key=lambda p: (p.impl.name != "c", p.level != "v2")):   # C v2 first
        if p.level in SEQUENTIAL and p.iters == iters:
            for run in p.runs:
                votes.setdefault(tuple(run["sums"]), []).append(p.key)
    if not votes:
        return None, ""
    best = max(votes, key=lambda s: len(votes[s]))   # max keeps the first of equals
    return best, f"sequential consensus ({votes[best][0]})"


def cross_check(pairs: list[Pair], opts: argparse.Namespace) -> list[str]:
    """Check each timed run's sums at its N; fail pairs that disagree. Returns notes."""
    notes: list[str] = []
    timed = [p for p in pairs if p.status == "verified" and p.runs]
    for iters in sorted({p.iters for p in timed}):
        want, source = consensus(timed, iters, opts.seed)
        if want is None:
            notes.append(f"N={iters:,}: no sequential level was timed, so the batched sums were "
                         "checked only at the verification N")
            continue
        log(f"[check] timed sums at N={iters:,} against the {source}")
        for p in timed:
            if p.iters != iters:
                continue
            for k, run in enumerate(p.runs, 1):
                bad = disagreement(run["sums"], want, tolerance(p.level), source)
                if bad:
                    p.status, p.reason = "failed", f"timed run {k} at N={iters}: {bad}"
                    log(f"  FAILED {p.key}: {p.reason}")
                    break
            if p.status == "verified" and p.level in SEQUENTIAL:
                p.identical = all(tuple(r["sums"]) == tuple(want) for r in p.runs)
                if not p.identical:
                    notes.append(f"{p.key}: sums agree within {tolerance(p.level):g} at N={iters:,} "
                                 f"but are not bit-identical to the {source}")
    return notes


# --- 5. summarise ----------------------------------------------------------------------------

def summarise(pairs: list[Pair]) -> list[dict[str, Any]]:
    """One result entry per pair, with statistics and ratios for those timed successfully."""
    for p in pairs:
        if p.status == "verified":
            p.status = "ok" if p.runs else "failed"
            p.reason = p.reason or ("" if p.runs else "no timed run")
    out = []
    for p in pairs:
        entry: dict[str, Any] = {"impl": p.impl.name, "level": p.level, "status": p.status,
                                 "reason": p.reason, "iters": p.iters, "verify": p.verify, "runs": p.runs}
        if p.status == "ok":
            secs = [r["seconds"] for r in p.runs]
            median = statistics.median(secs)
            entry.update({"threads": p.runs[0]["threads"], "median_s": median, "min_s": min(secs),
                          "max_s": max(secs), "ns_per_iter": median * 1e9 / p.iters,
                          "min_ns_per_iter": min(secs) * 1e9 / p.iters,
                          "sums": p.runs[0]["sums"], "identical": p.identical})
        out.append(entry)
    ok = [e for e in out if e["status"] == "ok"]
    c_v2 = next((e["ns_per_iter"] for e in ok if (e["impl"], e["level"]) == ("c", "v2")), None)
    fastest = {lv: min(e["ns_per_iter"] for e in ok if e["level"] == lv) for lv in {e["level"] for e in ok}}
    for e in ok:
        e["ratio_to_c_v2"] = e["ns_per_iter"] / c_v2 if c_v2 else None
        e["ratio_to_fastest"] = e["ns_per_iter"] / fastest[e["level"]]
    return out


def shown_command(argv: list[str]) -> str:
    """A command line for the record: paths inside the repository relative to it."""
    out = []
    for a in argv:
        p = Path(a)
        out.append(str(p.relative_to(ROOT)) if p.is_absolute() and p.is_relative_to(ROOT) else a)
    return shlex.join(out)


def make_variable(name: str) -> str:
    """A variable's value in the project's Makefile, without editing it (GNU make --eval)."""
    proc = run_process(["make", "-s", "--no-print-directory", "--eval", "bench-print-%: ; @echo $($*)",
                        f"bench-print-{name}"], timeout=30)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def toolchain(impl: Impl) -> dict[str, Any]:
    """The compiler's version line and the build flags of a compiled implementation."""
    info: dict[str, Any] = {}
    if impl.compiler:
        command = make_variable(impl.compiler[0])
        if command:
            proc = run_process(shlex.split(command) + impl.compiler[1:], timeout=60)
            info["compiler"] = command
            info["compiler_version"] = (proc.stdout.strip().splitlines() or [""])[0] if proc.returncode == 0 else ""
    if impl.flags:
        info["flags"] = {name: make_variable(name) for name in impl.flags}
    if impl.module:
        try:
            info["library_version"] = metadata.version(impl.module)
        except metadata.PackageNotFoundError:
            pass
    if impl.slow or impl.module:
        info["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    return info


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git(*args: str) -> str:
    """A git command's output in the repository ('' where git or the repository is absent)."""
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine(started: dt.datetime) -> dict[str, Any]:
    """What the numbers were measured on."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    try:
        mem = next(ln.split()[1] for ln in Path("/proc/meminfo").read_text().splitlines()
                   if ln.startswith("MemTotal"))
        memory = f"{int(mem) / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        memory = ""
    return {"cpu": cpu_model(), "logical_cpus": os.cpu_count(), "cpus_available": affinity,
            "memory": memory, "os": platform.platform(), "host": socket.gethostname(),
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(git("status", "--porcelain")),
            "date": started.isoformat(timespec="seconds"),
            "load_average_start": [round(v, 2) for v in os.getloadavg()]}


# --- results file ----------------------------------------------------------------------------

def write_atomic(path: Path, text: str) -> None:
    """Write text to path so that a reader, or an interrupted run, never sees half a file.

    The text goes to a temporary file in the same directory (same file system), is
    flushed to disk, and is renamed over path in one step; any failure removes it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)      # mkstemp's 0600 would hide the results from others
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)                   # the rename itself survives a power cut
    finally:
        os.close(dir_fd)


def raw_path(results_dir: Path, started: dt.datetime) -> Path:
    """results/raw/<date>-<host>.json; the date sorts chronologically."""
    host = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"
    return results_dir / "raw" / f"{started.strftime('%Y-%m-%dT%H%M%SZ')}-{host}.json"


# --- CI budgets ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Budget:
    """subject's time over baseline's time (ns/iter, best of the repeats) must stay <= limit."""
    subject: tuple[str, str]
    baseline: tuple[str, str]
    limit: float
    why: str


# Loose enough for a noisy 2-core machine, tight enough to catch a lost optimization.
# The best (minimum) of the repeats is compared: noise only ever adds time. Codon's v3 runs
# 2.8-3.3x its v2 here (best of 3 at 2M samples has come within 0.01 of a 2.5x limit);
# losing vectorization or vector math would bring it near 1x.
BUDGETS = [
    Budget(("codon", "v2"), ("c", "v2"), 1.25, "Codon's tape no slower than 1.25x C's"),
    Budget(("codon", "v3"), ("codon", "v2"), 1 / 2.2, "Codon v3 at least 2.2x faster than its v2"),
    Budget(("zig", "v2"), ("c", "v2"), 2.0, "the Zig port's tape within 2x of C's"),
    Budget(("rust", "v2"), ("c", "v2"), 2.0, "the Rust port's tape within 2x of C's"),
]


def check_budgets(results: list[dict[str, Any]], budgets: list[Budget]) -> tuple[list[str], int]:
    """Report lines for each budget and the number of breaches; a missing pair is skipped."""
    best = {(e["impl"], e["level"]): e["min_ns_per_iter"] for e in results if e["status"] == "ok"}
    lines, breaches = [], 0
    for b in budgets:
        name = f"{' '.join(b.subject)} / {' '.join(b.baseline)}"
        if b.subject not in best or b.baseline not in best:
            missing = " and ".join(" ".join(k) for k in (b.subject, b.baseline) if k not in best)
            lines.append(f"  skip    {name:<18} ({missing} not timed) - {b.why}")
            continue
        ratio = best[b.subject] / best[b.baseline]
        ok = ratio <= b.limit
        breaches += not ok
        lines.append(f"  {'ok' if ok else 'BREACH':<6}  {name:<18} = {ratio:.3f}  (limit {b.limit:.3f}: {b.why}; "
                     f"{best[b.subject]:.2f} vs {best[b.baseline]:.2f} ns/iter)")
    return lines, breaches


# --- the report on the terminal --------------------------------------------------------------

def summary_table(results: list[dict[str, Any]]) -> str:
    """Median ns/iter, implementation x level, as plain text."""
    ok = [e for e in results if e["status"] == "ok"]
    levels = [lv for lv in ALL_LEVELS if any(e["level"] == lv for e in ok)]
    impls = list(dict.fromkeys(e["impl"] for e in results))
    cell = {(e["impl"], e["level"]): e for e in results}
    rows = ["ns/iter (median)".ljust(18) + "".join(f"{lv:>12}" for lv in levels)]
    for name in impls:
        cells = []
        for lv in levels:
            e = cell.get((name, lv))
            cells.append(f"{e['ns_per_iter']:12.2f}" if e and e["status"] == "ok"
                         else f"{'FAILED' if e and e['status'] == 'failed' else '-':>12}")
        rows.append(name.ljust(18) + "".join(cells))
    return "\n".join(rows)


def interrupt(signum: int, frame: object) -> None:
    """Signal handler: turn SIGTERM into the KeyboardInterrupt that Ctrl-C raises."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """The whole run; returns the exit status."""
    opts = parse_args(argv)
    # SIGTERM (a CI timeout, `kill`) ends the run like Ctrl-C: children killed, no results file.
    signal.signal(signal.SIGTERM, interrupt)
    registry = load_registry(opts.registry) if opts.registry else DEFAULT
    names = [i.name for i in registry]
    if opts.impls:
        unknown = [n for n in opts.impls if n not in names]
        if unknown:
            log(f"error: unknown implementation(s) {', '.join(unknown)}; known: {', '.join(names)}")
            return 2
        chosen = [i for i in registry if i.name in opts.impls]
    else:
        chosen = [i for i in registry if opts.peers_by_default or i.kind != "peer"]
    levels = opts.levels or ALL_LEVELS
    started = dt.datetime.now(dt.timezone.utc)
    try:
        host = machine(started)
        states = [ImplState(i) for i in chosen]
        build_all(states, opts)
        pairs = [Pair(s.impl, lv, opts.python_iters if s.impl.slow else opts.iters)
                 for s in states if s.status == "ok" for lv in s.impl.levels if lv in levels]
        verify_all(pairs, opts)
        time_all(pairs, opts)
        notes = cross_check(pairs, opts)
        results = summarise(pairs)
        doc = {
            "generated_by": "scripts/bench.py", "schema": SCHEMA,
            "command": " ".join(shlex.quote(a) for a in [Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
            "machine": host,
            "config": {"iters": opts.iters, "python_iters": opts.python_iters, "verify_iters": opts.verify_iters,
                       "repeats": opts.repeats, "threads": opts.threads, "seed": opts.seed,
                       "timeout": opts.timeout, "levels": levels, "ci": opts.ci},
            "implementations": [
                {"name": s.impl.name, "kind": s.impl.kind, "label": s.impl.label, "autograd": s.impl.autograd,
                 "status": s.status, "reason": s.reason, "version": s.version, "build_seconds": s.build_seconds,
                 "command": shown_command(s.impl.command(opts.build_dir)), **(toolchain(s.impl) if s.status == "ok" else {})}
                for s in states],
            "results": results,
            "notes": notes,
        }
        doc["machine"]["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
        doc["machine"]["seconds"] = round((dt.datetime.now(dt.timezone.utc) - started).total_seconds(), 1)
        path = raw_path(opts.results_dir, started)
        write_atomic(path, json.dumps(doc, indent=1) + "\n")
    except KeyboardInterrupt:
        log("interrupted: no results file written")
        return 130
    print(summary_table(results))
    problems = [f"{s.impl.name}: {s.status}: {s.reason}" for s in states if s.status == "build-failed"]
    problems += [f"{e['impl']} {e['level']}: {e['reason']}" for e in results if e["status"] == "failed"]
    skipped = [f"{s.impl.name}: {s.reason}" for s in states if s.status == "skipped"]
    for line in skipped:
        print(f"skipped  {line}")
    for line in problems:
        print(f"FAILED   {line}")
    for line in notes:
        print(f"note     {line}")
    print(f"results: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
          f"({doc['machine']['seconds']:.0f} s)")
    status = 1 if problems and opts.strict else 0
    if opts.ci:
        lines, breaches = check_budgets(results, BUDGETS)
        print("budgets (best of %d runs):" % opts.repeats)
        print("\n".join(lines))
        if breaches or problems:
            print(f"bench-ci: FAILED ({breaches} budget breach(es), {len(problems)} failure(s))")
            status = 1
        else:
            print(f"bench-ci: passed ({sum(ln.lstrip().startswith('ok') for ln in lines)} budgets met, "
                  f"{sum(ln.lstrip().startswith('skip') for ln in lines)} skipped)")
    return status


if __name__ == "__main__":
    sys.exit(main())
