#!/usr/bin/env python3
"""The benchmark harness: build, verify, calibrate, time, compare, publish (`make bench`, `make bench-ci`).

1. Build every implementation with the project's Makefile (BUILD=, CPU=), each on its own. A
   missing toolchain (make prints `skip:` and succeeds) is a skip; a failed make is a failure.
2. Probe the graph workload (`PROG --workload graph --ops 4 --iters 1 --json`): a program that
   refuses it (exit 2) is not timed for the graph; any other failure is a failure.
3. Verify every (implementation, workload, level) before timing it: softplus against
   tests/reference.py at a small N, the graph against the contract's known answers (§G4) and
   tests/reference.py's `graph_sums` where it exists; sequential levels within 1e-12 relative,
   batched ones within 1e-9. One that disagrees is failed, with the numbers, and never timed.
4. Calibrate N per (workload, level): the Codon program's N is doubled until one run lasts
   --min-time, and every compiled implementation of that level is timed at that same N (so
   their sums can be checked against each other); interpreted ones (CPython, peers) calibrate
   their own N. v4 is also timed at T = 1, 2, 4, ... threads up to the CPUs available.
5. Time every verified pair R times in rounds, the order shuffled every round (seed recorded),
   one process per run, each with a timeout. A crash or a hang fails that pair; the rest go on.
6. Check the timed sums: against the reference where it is cheap, else against each other at
   the same N, within the contract's tolerances.
7. Record each pair's median and a 95% distribution-free confidence interval of it (stats.py),
   the machine (CPU, family/model, flags, cores; machine.py) and every program's target and
   vector width in results/raw/<machine-slug>/<date>.json.gz, written atomically.
   scripts/report.py turns the latest file of every machine into results/README.md and charts.

Strict: the exit status is 1 when any implementation failed to build, failed verification,
crashed or timed out, refused a level its registry entry declares, or refused the graph workload
while its entry lists graph levels (--no-strict reports them and exits 0); 2 for bad usage; 130 when
interrupted (no results file). `--ci` is the CI timing job: 0.25-s runs, then budgets judged on
adjacent pairs of runs and on instruction counts (see Budget).
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
import random
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterable

SCRIPTS = Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))
sys.path.insert(0, str(ROOT / "tests"))

import machine  # noqa: E402
import rawfile  # noqa: E402
import reference  # noqa: E402  (tests/reference.py: the independent oracle)
import stats  # noqa: E402
from impls import (DEFAULT, LEVEL_ORDER, SEQUENTIAL, WORKLOAD_LEVELS, WORKLOADS, Impl,  # noqa: E402
                   load_registry, ranking_clock)

SCHEMA = 2
SUM_KEYS = {"softplus": ["sum_f", "sum_dx", "sum_dy"], "graph": ["sum_loss", "sum_grad_in", "sum_grad_all"]}
# The JSON keys in order (contract §5, §G6); programs from before the graph contract lack "workload".
KEYS = {"softplus": ["impl", "workload", "level", "iters", "seed", "threads", "seconds", "cpu_seconds",
                     "ns_per_iter", *SUM_KEYS["softplus"]],
        "graph": ["impl", "workload", "level", "ops", "iters", "seed", "threads", "seconds", "cpu_seconds",
                  "ns_per_iter", "ns_per_op", *SUM_KEYS["graph"]]}
OLD_SOFTPLUS_KEYS = [k for k in KEYS["softplus"] if k != "workload"]
NOT_IMPLEMENTED = re.compile(r"^error: level \S+ is not implemented by this program")
NO_DEVICE = re.compile(r"^error: --level (\S+) needs a CUDA device and driver: (.*)")
# Timed softplus sums at an N up to this are also checked against the Python reference itself
# (about 3 s of CPython per million samples); above it, against the other programs.
REFERENCE_LIMIT = 500_000
GRAPH_REFERENCE_LIMIT = 16          # samples of the graph reference (tens of ms each in CPython)
MAX_ITERS = 10**12                  # contract §4
# Contract-graph §G4, seed 42: (ops, samples) -> sum_loss, sum_grad_in, sum_grad_all, as tests/reference.py
# holds them (tests/test_graph_reference.py checks its table against docs/contract-graph.md's).
GRAPH_KNOWN = {k: tuple(float(x) for x in v) for k, v in reference.GRAPH_KNOWN.items()}
GRAPH_VERIFY = [(10, 3), (10000, 3)]   # the known answers each graph level is checked against
GRAPH_REFERENCE: Callable[[int, int, int], Iterable[float]] | None = reference.graph_sums


# --- options ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Preset:
    """Defaults of a kind of run; a flag given on the command line overrides each."""
    min_time: float
    repeats: int
    results_dir: str | None          # None: <build dir>/bench-ci
    peers: bool
    timeout: float
    thread_scan: bool
    workloads: tuple[str, ...]
    budget_pairs: int = 0            # adjacent pairs of runs per CI budget (none outside --ci)
    graph_levels: tuple[str, ...] = tuple(WORKLOAD_LEVELS["graph"])   # the graph levels timed


# Many short rounds rank better than a few long ones: the paired ratios' 95% interval shrinks with the
# number of pairs. The measurements behind 70 rounds of 0.04 s (median half-widths against rounds and run
# length, on the 2-core Zen 3) are docs/benchmarking.md's precision-runs table, which report.py generates: 45 rounds
# met ±5% at the median compiled pair with the five original rows, not with every row (some rows run fewer
# rounds, Impl.rounds), where 70 do.
FULL = Preset(min_time=0.04, repeats=70, results_dir="results", peers=True, timeout=120.0, thread_scan=True,
              workloads=tuple(WORKLOADS))
# Every run lasts 0.25 s or more, long enough for v4's threads to show; the budgets take 9 adjacent
# pairs each (see Budget); the graph at the levels its budgets compare. About 2.5 minutes after
# the builds.
CI = Preset(min_time=0.25, repeats=3, results_dir=None, peers=False, timeout=60.0, thread_scan=False,
            workloads=("softplus", "graph"), budget_pairs=9, graph_levels=("v2", "v3"))


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
        description="Build, verify, calibrate and time every implementation of the autograd benchmark, "
                    "and write results/raw/<machine>/<date>.json.gz (see scripts/report.py).")
    p.add_argument("--impls", type=name_list, help="implementations to run, comma-separated "
                   f"(default: all of {', '.join(i.name for i in DEFAULT)}; --ci: all but the peers)")
    p.add_argument("--levels", type=name_list, help=f"levels to run (default: all of {', '.join(LEVEL_ORDER)}; "
                   "a GPU level only where the program finds a device)")
    p.add_argument("--workloads", type=name_list, help=f"workloads (default {','.join(FULL.workloads)}; "
                   f"--ci {','.join(CI.workloads)})")
    p.add_argument("--graph-levels", type=name_list, help="graph levels to run, of those --levels allows "
                   f"(default all; --ci {','.join(CI.graph_levels)})")
    p.add_argument("--ops", type=positive_int, default=10_000, help="ops of the graph workload (default 10,000)")
    p.add_argument("--min-time", type=positive_float, help="seconds a timed run lasts at least: N is "
                   f"calibrated to it (default {FULL.min_time:g}; --ci {CI.min_time:g})")
    p.add_argument("--iters", type=positive_int, help="a fixed N for the compiled implementations instead "
                   "of calibrating")
    p.add_argument("--python-iters", type=positive_int, help="a fixed N for the interpreted ones (CPython, "
                   "peers) instead of calibrating")
    p.add_argument("--verify-iters", type=positive_int, default=10_007,
                   help="softplus samples of the check against the reference before timing (default 10,007)")
    p.add_argument("--repeats", type=positive_int, help=f"timed runs of each pair (default {FULL.repeats}; "
                   f"--ci {CI.repeats})")
    p.add_argument("--budget-pairs", type=positive_int, help="--ci: adjacent pairs of runs each budget is "
                   f"judged on (default {CI.budget_pairs})")
    p.add_argument("--threads", type=positive_int, help="the most threads for v4 (default: the CPUs this "
                   "process may use)")
    p.add_argument("--no-thread-scan", dest="thread_scan", action="store_false", default=None,
                   help="time v4 at the most threads only, not also at 1, 2, 4, ... (--ci: never scans)")
    p.add_argument("--seed", type=seed_int, default=42, help="input stream seed (default 42)")
    p.add_argument("--shuffle-seed", type=int, help="seed of the order of each round (default: random, "
                   "recorded)")
    p.add_argument("--timeout", type=positive_float, help="seconds before a run is killed as hung "
                   f"(default {FULL.timeout:g}; --ci {CI.timeout:g})")
    p.add_argument("--results-dir", type=Path, help="where raw/<machine>/<date>.json.gz goes "
                   f"(default {FULL.results_dir}; --ci BUILD_DIR/bench-ci)")
    p.add_argument("--build-dir", default="build", help="the Makefile's BUILD (default build)")
    p.add_argument("--cpu", help="the Makefile's CPU: native, x86-64-v2, x86-64-v3 or x86-64-v4 "
                   "(default: the Makefile's, native)")
    p.add_argument("--no-build", action="store_true", help="use what is built; run no make")
    p.add_argument("--registry", type=Path, help="a JSON list of implementations replacing the "
                   "built-in one (scripts/impls.py's fields)")
    p.add_argument("--ci", action="store_true", help="the CI timing job: no peers, the graph at v2 and v3, then "
                   "the budgets (adjacent pairs of runs, instruction counts); exit 1 on a breach")
    p.add_argument("--no-strict", dest="strict", action="store_false",
                   help="exit 0 even when an implementation failed (failures are still reported)")
    args = p.parse_args(argv)
    preset = CI if args.ci else FULL
    for name in ("min_time", "repeats", "timeout", "thread_scan", "budget_pairs", "graph_levels"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(preset, name))
    args.results_dir = Path(args.results_dir or preset.results_dir or f"{args.build_dir}/bench-ci")
    args.workloads = args.workloads or list(preset.workloads)
    args.peers_by_default = preset.peers
    if args.shuffle_seed is None:
        args.shuffle_seed = random.SystemRandom().randrange(2**32)
    for given, known, what in ((args.levels, LEVEL_ORDER, "level"), (args.workloads, WORKLOADS, "workload"),
                               (args.graph_levels, WORKLOAD_LEVELS["graph"], "graph level")):
        unknown = [x for x in given or [] if x not in known]
        if unknown:
            p.error(f"unknown {what}(s) {', '.join(unknown)}; {what}s are {', '.join(known)}")
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
    cpu: float = 0.0                 # CPU seconds (user + system) of the process, all its threads


def children_cpu() -> float:
    """CPU seconds of this process's finished (waited-for) children so far, all their threads."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_process(argv: list[str], timeout: float) -> Proc:
    """Run argv with its own process group; on timeout or interrupt kill the whole group.

    Killing the group, not just the child, matters: a grandchild holding the output pipes
    open would otherwise keep us waiting long after the timeout. The process's CPU time is
    what the children's CPU time grew by while it ran: the harness runs one child at a time.
    """
    start, cpu = time.monotonic(), children_cpu()
    try:
        child = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, errors="replace",
                                 start_new_session=True)
    except OSError as e:
        return Proc(127, "", f"cannot start {argv[0]}: {e.strerror}", 0.0)
    try:
        out, err = child.communicate(timeout=timeout)
        return Proc(child.returncode, out, err, time.monotonic() - start, children_cpu() - cpu)
    except subprocess.TimeoutExpired:
        kill_group(child)
        out, err = child.communicate()
        return Proc(None, out, err, time.monotonic() - start, children_cpu() - cpu)
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


def parse_record(stdout: str, expected: dict[str, Any]) -> dict[str, Any]:
    """The one JSON line of a `--level L --json` run, checked against contract §5-§6 / §G6.

    `expected` holds the values some keys must have (impl, level, iters, seed, and for the
    graph workload, ops; threads when it was asked for).
    """
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise ValueError(f"expected one JSON line, got {len(lines)}")
    try:
        rec = json.loads(lines[0])
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg}): {lines[0][:200]!r}") from None
    workload = expected.get("workload", "softplus")
    allowed = [KEYS[workload]] + ([OLD_SOFTPLUS_KEYS] if workload == "softplus" else [])
    if workload == "graph":   # a peer that compiles before the clock adds its time (contract §6)
        at = KEYS["graph"].index("cpu_seconds") + 1
        allowed.append(KEYS["graph"][:at] + ["compile_seconds"] + KEYS["graph"][at:])
    if not isinstance(rec, dict) or list(rec) not in allowed:
        raise ValueError(f"keys {list(rec) if isinstance(rec, dict) else type(rec).__name__} "
                         f"are not the contract's {KEYS[workload]}")
    for key, want in expected.items():
        if key in rec and rec[key] != want:
            raise ValueError(f"{key} is {rec[key]!r}, expected {want!r}")
    for key in KEYS[workload][KEYS[workload].index("threads"):]:
        if isinstance(rec[key], bool) or not isinstance(rec[key], (int, float)) or not math.isfinite(rec[key]):
            raise ValueError(f"{key} is {rec[key]!r}, not a finite number")
    if rec["seconds"] < 0 or rec["cpu_seconds"] < 0 or rec["threads"] < 1:
        raise ValueError(f"seconds {rec['seconds']}, cpu_seconds {rec['cpu_seconds']} or threads "
                         f"{rec['threads']} out of range")
    return rec


# --- checking sums ---------------------------------------------------------------------------

def tolerance(level: str) -> float:
    """Contract §2 / §G4: sequential levels within 1e-12 relative, batched ones within 1e-9."""
    return reference.SEQUENTIAL_RTOL if level in SEQUENTIAL else reference.BATCHED_RTOL


def sums_of(rec: dict[str, Any], workload: str = "softplus") -> tuple[float, float, float]:
    """The three checksums of a record."""
    a, b, c = (rec[k] for k in SUM_KEYS[workload])
    return a, b, c


def disagreement(got: Iterable[float], want: Iterable[float], rtol: float, against: str,
                 workload: str = "softplus") -> str:
    """'' when every sum agrees within rtol; otherwise the numbers, for the report."""
    bad = []
    for name, g, w in zip(SUM_KEYS[workload], got, want):
        rel = reference.rel_diff(g, w)
        if not rel <= rtol:
            bad.append(f"{name} {g!r} vs {against} {w!r} (relative difference {rel:.3g} > {rtol:g})")
    return "; ".join(bad)


_REFERENCE: dict[tuple, tuple[tuple[float, float, float], str]] = {}


def reference_sums(workload: str, seed: int, n: int, ops: int = 0,
                   any_size: bool = False) -> tuple[tuple[float, float, float] | None, str]:
    """The reference's sums (computed once per size) and their source; (None, '') where none is cheap enough.

    any_size: compute the softplus reference whatever N (verification asked for it).
    """
    key = (workload, seed, n, ops)
    if key not in _REFERENCE:
        if workload == "softplus" and (n <= REFERENCE_LIMIT or any_size):
            _REFERENCE[key] = tuple(reference.run(seed, n)), "reference"
        elif workload == "graph" and seed == 42 and (ops, n) in GRAPH_KNOWN:
            _REFERENCE[key] = GRAPH_KNOWN[(ops, n)], "§G4"
        elif workload == "graph" and GRAPH_REFERENCE and n <= GRAPH_REFERENCE_LIMIT:
            _REFERENCE[key] = tuple(GRAPH_REFERENCE(seed, ops, n)), "reference"
        else:
            return None, ""
    return _REFERENCE[key]


# --- the run's state -------------------------------------------------------------------------

@dataclass
class ImplState:
    """One implementation: whether it could be built or found, and what it says it is."""
    impl: Impl
    status: str = "pending"          # ok, skipped, build-failed
    reason: str = ""
    version: str = ""
    vector: dict[str, Any] = field(default_factory=lambda: machine.vector_line(""))
    graph: str = "not probed"        # yes, no (refused with exit 2), failed: ..., not probed
    gpu: str = "not probed"          # its GPU levels: yes, no: <why> (exit 2, no device), failed: ...
    build_seconds: float | None = None


@dataclass
class Pair:
    """One (implementation, workload, level[, threads]): its verification, then its timed runs."""
    impl: Impl
    workload: str
    level: str
    threads: int | None = None       # --threads (v4 only)
    scan: bool = False               # v4 at fewer threads than the most: the thread-scaling table only
    ops: int = 0                     # the graph's ops (0 for softplus)
    iters: int = 0
    status: str = "pending"          # verified -> ok; absent; failed
    reason: str = ""
    verify: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    budget_runs: list[dict[str, Any]] = field(default_factory=list)   # --ci: the budgets' adjacent runs
    identical: bool | None = None    # sums bit-identical to the consensus at this N

    @property
    def key(self) -> str:
        """How progress lines and reasons name the pair."""
        return " ".join([self.impl.name] + (["graph"] if self.workload == "graph" else []) + [self.level]
                        + ([f"T={self.threads}"] if self.threads else []))


def run_pair(pair: Pair, iters: int, opts: argparse.Namespace, seed: int | None = None,
             ops: int | None = None) -> tuple[dict[str, Any] | None, str, Proc]:
    """One run of a pair: (record, '', proc), or (None, why, proc); why is 'absent' for a missing level."""
    seed = opts.seed if seed is None else seed
    argv = pair.impl.command(opts.build_dir)
    expected: dict[str, Any] = {"impl": pair.impl.name, "level": pair.level, "iters": iters, "seed": seed}
    if pair.workload == "graph":
        ops = ops or pair.ops
        argv += ["--workload", "graph", "--ops", str(ops)]
        expected.update(workload="graph", ops=ops)
    else:
        expected["workload"] = "softplus"
    argv += ["--level", pair.level, "--iters", str(iters), "--seed", str(seed), "--json"]
    if pair.threads:
        argv += ["--threads", str(pair.threads)]
        expected["threads"] = pair.threads
    proc = run_process(argv, opts.timeout)
    if proc.returncode == 2 and NOT_IMPLEMENTED.match(proc.stderr) and not proc.stdout:
        return None, "absent", proc
    if proc.returncode != 0:
        return None, failure(proc, opts.timeout), proc
    try:
        return parse_record(proc.stdout, expected), "", proc
    except ValueError as e:
        return None, f"bad output: {e}", proc


# --- 1. build --------------------------------------------------------------------------------

def module_present(name: str) -> bool:
    """Whether this Python can import `name` (looked up, not imported: imports are slow)."""
    return importlib.util.find_spec(name) is not None


def missing_paths(impl: Impl, build: str) -> list[str]:
    """The files impl's command names that do not exist."""
    return [a for a in impl.command(build)[:2] if "/" in a and not Path(a).exists()]


def make_command(impl: Impl, opts: argparse.Namespace) -> list[str]:
    """make BUILD=... [CPU=...] TARGET, with the implementation's own Makefile if it names one."""
    argv = ["make", "--no-print-directory"] + (["-f", impl.makefile] if impl.makefile else [])
    return argv + [f"BUILD={opts.build_dir}"] + ([f"CPU={opts.cpu}"] if opts.cpu else []) \
        + [impl.make_target(opts.build_dir) or ""]


def build_all(states: list[ImplState], opts: argparse.Namespace) -> None:
    """make each target on its own; set each state to ok, skipped or build-failed.

    make's exit status decides: a failed make is a failure even if an old binary is left; a
    make that succeeds but prints `skip:` (the Makefile's way of saying a toolchain is
    missing) is a skip; one that succeeds yet leaves no program is a failure.
    """
    targets = [s for s in states if s.impl.target and not opts.no_build]
    for n, state in enumerate(targets, 1):
        argv = make_command(state.impl, opts)
        log(f"[build {n}/{len(targets)}] {state.impl.name}: {shlex.join(argv[2:])}")
        start = time.monotonic()
        proc = run_process(argv, timeout=1800)
        state.build_seconds = round(time.monotonic() - start, 2)
        skip = [ln for ln in proc.stdout.splitlines() if ln.startswith("skip:")]
        if proc.returncode != 0:
            errors = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines()
                      if "error" in ln.lower() and not ln.startswith("make")]
            state.status = "build-failed"
            state.reason = f"make {argv[-1]}: {failure(proc, 1800)}" + (f" ({errors[0][:200]})" if errors else "")
            log(f"  FAILED after {state.build_seconds:.1f} s: {state.reason}")
            for line in (proc.stdout + proc.stderr).splitlines()[-10:]:
                log(f"  | {line}")
        elif skip:
            state.status, state.reason = "skipped", skip[0][len("skip:"):].strip()
        elif missing_paths(state.impl, opts.build_dir):
            state.status = "build-failed"
            state.reason = f"make succeeded but left no {missing_paths(state.impl, opts.build_dir)[0]}"
        else:
            log(f"  done in {state.build_seconds:.1f} s")
    for state in states:
        impl = state.impl
        if state.status == "pending":
            if impl.module and not module_present(impl.module):
                state.status, state.reason = "skipped", f"{impl.module} is not installed (make peers installs it)"
            elif impl.program and shutil.which(impl.program) is None:
                state.status, state.reason = "skipped", f"{impl.program} not found (.ci/run installs it)"
            elif missing_paths(impl, opts.build_dir):
                state.status = "skipped"
                state.reason = (f"{missing_paths(impl, opts.build_dir)[0]} not found"
                                + (" (--no-build)" if opts.no_build else ""))
            else:
                state.status = "ok"
                proc = run_process(impl.command(opts.build_dir) + ["--version"], timeout=opts.timeout)
                if proc.returncode == 0:
                    state.version = (proc.stdout.splitlines() or [""])[0].strip()
                    state.vector = machine.vector_line(proc.stdout)
        if state.status == "skipped":
            log(f"skip: {impl.name}: {state.reason}")


def probe_graph(states: list[ImplState], opts: argparse.Namespace) -> None:
    """Ask each program whether it has the graph workload: exit 0 yes, exit 2 no, else failed."""
    if "graph" not in opts.workloads:
        return
    for state in states:
        if state.status != "ok":
            continue
        proc = run_process(state.impl.command(opts.build_dir)
                           + ["--workload", "graph", "--ops", "4", "--iters", "1", "--json"], opts.timeout)
        state.graph = ("yes" if proc.returncode == 0 else "no" if proc.returncode == 2
                       else f"failed: {failure(proc, opts.timeout)}")
        log(f"[probe] {state.impl.name}: graph workload: {state.graph}")


def thread_counts(most: int, scan: bool) -> list[int]:
    """1, 2, 4, ... below `most`, then `most` itself (just `most` without the scan)."""
    counts = [1 << k for k in range(most.bit_length()) if 1 << k < most] if scan else []
    return counts + [most]


def probe_gpu(states: list[ImplState], opts: argparse.Namespace) -> None:
    """Ask each program with GPU levels whether it finds a device: yes, no (exit 2 saying why), or failed."""
    for state in states:
        wanted = [lv for lv in state.impl.gpu_levels if lv in (opts.levels or LEVEL_ORDER)]
        if state.status != "ok" or not wanted or "softplus" not in opts.workloads:
            continue
        proc = run_process(state.impl.command(opts.build_dir) + ["--level", wanted[0], "--iters", "1", "--json"],
                           opts.timeout)
        refusal = NO_DEVICE.match(proc.stderr)
        if proc.returncode == 0:
            state.gpu = "yes"
        elif proc.returncode == 2 and refusal and not proc.stdout:
            state.gpu = f"no: {refusal.group(2).strip()}"
            log(f"skip: {state.impl.name} {', '.join(wanted)}: {refusal.group(2).strip()}")
        else:
            state.gpu = f"failed: {failure(proc, opts.timeout)}"
            log(f"[probe] {state.impl.name}: {wanted[0]}: {state.gpu}")


def make_pairs(states: list[ImplState], opts: argparse.Namespace, most_threads: int) -> list[Pair]:
    """Every (implementation, workload, level) to verify and time; v4 once per thread count."""
    pairs = []
    for s in states:
        if s.status != "ok":
            continue
        for workload in opts.workloads:
            if workload == "graph" and s.graph != "yes":
                continue
            levels = s.impl.levels + (s.impl.gpu_levels if s.gpu == "yes" else []) if workload == "softplus" \
                else s.impl.graph_levels
            for lv in levels:
                if lv not in (opts.levels or LEVEL_ORDER) or (workload == "graph" and lv not in opts.graph_levels):
                    continue
                ops = min(opts.ops, s.impl.graph_ops or opts.ops) if workload == "graph" else 0
                if lv != "v4":
                    pairs.append(Pair(s.impl, workload, lv, ops=ops))
                    continue
                counts = thread_counts(most_threads, opts.thread_scan and s.impl.compiled)
                pairs += [Pair(s.impl, workload, lv, t, scan=t != counts[-1], ops=ops) for t in counts]
    return pairs


# --- 2. verify -------------------------------------------------------------------------------

def checks(pair: Pair, opts: argparse.Namespace) -> list[tuple[int, int, int]]:
    """(seed, samples, ops) of the runs that verify a level before it is timed (the graph: the known
    answers up to the ops it is timed at, and a run at those ops)."""
    if pair.workload == "softplus":
        return [(opts.seed, opts.verify_iters, 0)]
    out = [(42, n, ops) for ops, n in GRAPH_VERIFY if ops <= (pair.impl.graph_ops or ops)]
    if GRAPH_REFERENCE and (opts.seed, 2, pair.ops) not in [(s, n, o) for s, n, o in out]:
        out.append((opts.seed, 2, pair.ops))
    return out


def verify_all(pairs: list[Pair], opts: argparse.Namespace) -> None:
    """Check each pair against the reference at small sizes; set verified, absent or failed."""
    for k, pair in enumerate(pairs, 1):
        prefix = f"[verify {k:>{len(str(len(pairs)))}}/{len(pairs)}] {pair.key:<22}"
        for seed, n, ops in checks(pair, opts):
            want, source = reference_sums(pair.workload, seed, n, ops, any_size=True)
            rec, why, _ = run_pair(pair, n, opts, seed=seed, ops=ops)
            if why == "absent":
                pair.status, pair.reason = "absent", "the registry declares this level; the program refuses it"
                break
            if rec is None:
                pair.status, pair.reason = "failed", f"verification run: {why}"
                break
            got = sums_of(rec, pair.workload)
            pair.verify.append({"seed": seed, "iters": n, "ops": ops, "sums": list(got), "want": list(want),
                                "source": source, "tolerance": tolerance(pair.level),
                                "max_rel_diff": max(reference.rel_diff(g, w) for g, w in zip(got, want))})
            bad = disagreement(got, want, tolerance(pair.level), source, pair.workload)
            if bad:
                size = f"N={n}" + (f", {ops} ops" if ops else "")
                pair.status, pair.reason = "failed", f"wrong sums at {size}: {bad}"
                break
        else:
            pair.status = "verified"
        if pair.status == "verified":
            log(f"{prefix} ok (max relative difference {max(v['max_rel_diff'] for v in pair.verify):.1e})")
        else:
            log(f"{prefix} " + ("REFUSED (not timed): the program does not implement it" if pair.status == "absent" else
                                f"FAILED (not timed): {pair.reason}"))


# --- 3. calibrate ----------------------------------------------------------------------------

def next_iters(n: int, seconds: float, min_time: float) -> int:
    """The N to try after a run of n samples lasted `seconds`, short of min_time: n times the power
    of two its time says is missing (2 to 1024), so that N stays a power of two times the first.
    The one calibration rule: make bench, make run and scripts/compare.py all use it."""
    short = min_time / seconds if seconds > 0 else 1024.0
    return min(MAX_ITERS, n * min(1024, 2 ** max(1, math.ceil(math.log2(short)))))


def calibrate(pair: Pair, opts: argparse.Namespace) -> dict[str, Any] | None:
    """Double N from 1 (a batched peer: its batch_iters) until one run of `pair` lasts --min-time;
    None (pair failed) on a failed run.

    A run far too short multiplies N by the power of two its time says is missing (at most
    1024 at once), so N stays a power of two and few runs are needed.
    """
    n, steps = (pair.impl.batch_iters if pair.level in ("v3", "fused-simd") else 1), []
    while True:
        rec, why, _ = run_pair(pair, n, opts)
        if rec is None:
            pair.status, pair.reason = "failed", f"calibration run at N={n}: {why}"
            log(f"  FAILED: {pair.key}: {pair.reason}")
            return None
        steps.append([n, rec["seconds"]])
        if rec["seconds"] >= opts.min_time or n >= MAX_ITERS:
            return {"workload": pair.workload, "level": pair.level, "impl": pair.impl.name, "iters": n,
                    "steps": steps}
        n = next_iters(n, rec["seconds"], opts.min_time)


def calibrate_all(pairs: list[Pair], opts: argparse.Namespace) -> list[dict[str, Any]]:
    """Set every verified pair's N; return the calibrations done.

    Compiled pairs of a (workload, level) share the N of one calibrator: the Codon program
    where it is there, else the first compiled one; the others calibrate themselves.
    """
    done: list[dict[str, Any]] = []
    live = [p for p in pairs if p.status == "verified"]
    groups: dict[tuple[str, str], list[Pair]] = {}
    for p in live:
        if p.impl.iters and not opts.iters:
            p.iters = p.impl.iters                     # its registry N (Impl.iters), uncalibrated
        elif p.impl.compiled:
            groups.setdefault((p.workload, p.level), []).append(p)
        elif opts.python_iters:
            p.iters = opts.python_iters
        else:
            log(f"[calibrate] {p.key} (its own N)")
            c = calibrate(p, opts)
            if c:
                p.iters = c["iters"]
                done.append(c)
    for (workload, level), group in groups.items():
        if opts.iters:
            for p in group:
                p.iters = opts.iters
            continue
        main = sorted((p for p in group if not p.scan), key=lambda p: p.impl.kind != "codon")
        for cand in main:
            log(f"[calibrate] {workload} {level} on {cand.key}")
            c = calibrate(cand, opts)
            if c:
                done.append(c)
                log(f"  N = {c['iters']:,} ({c['steps'][-1][1]:.3f} s)")
                for p in group:
                    p.iters = c["iters"]
                break
        else:
            for p in group:
                if p.status == "verified":
                    p.status, p.reason = "failed", f"no {workload} {level} run could be calibrated"
    return done


# --- 4. time ---------------------------------------------------------------------------------

def timed_run(pair: Pair, opts: argparse.Namespace, what: str) -> tuple[dict[str, Any] | None, Proc]:
    """One timed run of pair at its N: (the run's record for the raw file, proc); (None, proc) after
    failing the pair, with `what` (`timed run 3`) in its reason."""
    before = machine.cpu_clock()
    rec, why, proc = run_pair(pair, pair.iters, opts)
    after = machine.cpu_clock()
    if rec is None:
        pair.status, pair.reason = "failed", f"{what}: {why}"
        return None, proc
    return {"seconds": rec["seconds"], "cpu_seconds": rec["cpu_seconds"], "ns_per_iter": rec["ns_per_iter"],
            "threads": rec["threads"],
            "sums": list(sums_of(rec, pair.workload)), "wall": round(proc.wall, 4), "cpu": round(proc.cpu, 4),
            **neighbours(before, after)}, proc


def neighbours(before: tuple[float, ...] | None, after: tuple[float, ...] | None) -> dict[str, float]:
    """What the rest of the machine did during one run: `other_load`, the CPUs other processes kept busy
    on average, steal included, and `steal`, the CPUs the hypervisor gave to other guests (/proc/stat, in
    clock ticks: 10 ms each, so a 0.04-s run reads in steps of 0.25 CPU); absent without /proc/stat."""
    load, stolen = machine.other_load(before, after), machine.steal(before, after)
    return {k: round(v, 3) for k, v in (("other_load", load), ("steal", stolen)) if v is not None}


def cell(p: Pair) -> tuple[str, str, int | None]:
    """What a pair is compared within: its workload and level (v4: at its thread count)."""
    return p.workload, p.level, p.threads


def time_all(pairs: list[Pair], opts: argparse.Namespace) -> None:
    """R rounds; each runs every live pair once, a cell (workload, level) at a time: the cells in a
    shuffled order, and a cell's implementations back to back in a shuffled order, so that any two of
    them ran adjacent to each other in every round (their paired ratios: `paired`). A pair that fails
    is dropped."""
    live = [p for p in pairs if p.status == "verified"]
    rng = random.Random(opts.shuffle_seed)
    total = sum(min(opts.repeats, p.impl.rounds or opts.repeats) for p in live)
    done, started = 0, time.monotonic()
    walls: dict[str, float] = {}           # last wall time of each pair: the ETA
    for rnd in range(1, opts.repeats + 1):
        cells: dict[tuple, list[Pair]] = {}
        for p in live:
            if p.status == "verified":
                cells.setdefault(cell(p), []).append(p)
        groups = list(cells.values())
        rng.shuffle(groups)
        order = []
        for group in groups:
            rng.shuffle(group)
            order += group
        for pair in order:
            if pair.status != "verified" or (pair.impl.rounds and rnd > pair.impl.rounds):
                continue                               # failed, or past its rounds (Impl.rounds)
            done += 1
            rec, proc = timed_run(pair, opts, f"timed run {rnd}")
            walls[pair.key] = proc.wall
            prefix = (f"[time {done:>{len(str(total))}}/{total} round {rnd}/{opts.repeats}] "
                      f"{pair.key:<22} {pair.iters:>13,}")
            if rec is None:
                log(f"{prefix}  FAILED: {pair.reason} (not run again)")
                continue
            pair.runs.append({**rec, "round": rnd})
            left = sum(walls.values()) * (opts.repeats - rnd) * len(live) / max(1, len(walls))
            eta = f"~{clock(left)} left" if rnd > 1 else "ETA after round 1"
            log(f"{prefix}  {rec['seconds']:8.3f} s {rec['ns_per_iter']:11.2f} ns/iter   "
                f"elapsed {clock(time.monotonic() - started)}, {eta}")


# --- 5. cross-check the timed sums -----------------------------------------------------------

def consensus(group: list[Pair]) -> tuple[list[float], str]:
    """The timed sums most runs of the group agree with (within their tolerance), and whose.

    Candidates are the sequential levels' runs where there are any (C v2 first, so it wins a
    tie), else every run.
    """
    runs = [(p, r) for p in group for r in p.runs]
    ordered = sorted(runs, key=lambda pr: (pr[0].level not in SEQUENTIAL, pr[0].impl.name != "c",
                                           pr[0].level != "v2"))
    candidates = [pr for pr in ordered if pr[0].level in SEQUENTIAL] or ordered

    def votes(c: tuple[Pair, dict]) -> int:
        return sum(not disagreement(r["sums"], c[1]["sums"], tolerance(p.level), "", p.workload) for p, r in runs)

    best = max(candidates, key=votes)              # max keeps the first of equals
    return best[1]["sums"], f"timed runs' consensus ({best[0].key})"


def cross_check(pairs: list[Pair], opts: argparse.Namespace) -> list[str]:
    """Check each timed run's sums against the reference or the others at its N; fail pairs that disagree."""
    notes: list[str] = []
    timed = [p for p in pairs if p.status == "verified" and p.runs]
    groups: dict[tuple[str, int, int], list[Pair]] = {}
    for p in timed:
        groups.setdefault((p.workload, p.iters, p.ops), []).append(p)
    for (workload, iters, ops), group in sorted(groups.items()):
        want, source = reference_sums(workload, opts.seed, iters, ops)
        if want is None:
            want, source = consensus(group)
            if len({p.impl.name for p in group}) == 1:
                notes.append(f"{workload} N={iters:,}: only {group[0].impl.name} was timed at this N; its runs "
                             "were checked against each other (and the level against the reference before timing)")
        log(f"[check] {workload} timed sums at N={iters:,} against the {source}")
        for p in group:
            for k, run in enumerate(p.runs + p.budget_runs, 1):
                bad = disagreement(run["sums"], want, tolerance(p.level), source, workload)
                if bad:
                    what = f"timed run {k}" if k <= len(p.runs) else f"budget run {k - len(p.runs)}"
                    p.status, p.reason = "failed", f"{what} at N={iters}: {bad}"
                    log(f"  FAILED {p.key}: {p.reason}")
                    break
            if p.status == "verified" and p.level in SEQUENTIAL:
                p.identical = all(r["sums"] == list(want) for r in p.runs + p.budget_runs)
                if not p.identical:
                    notes.append(f"{p.key}: sums agree within {tolerance(p.level):g} at N={iters:,} "
                                 f"but are not bit-identical to the {source}")
    return notes


# --- 6. summarise ----------------------------------------------------------------------------

def summarise(pairs: list[Pair]) -> list[dict[str, Any]]:
    """One result entry per pair: the median, its 95% interval, min and max, per sample and per op."""
    for p in pairs:
        if p.status == "verified":
            p.status = "ok" if p.runs else "failed"
            p.reason = p.reason or ("" if p.runs else "no timed run")
    out = []
    for p in pairs:
        entry: dict[str, Any] = {"impl": p.impl.name, "workload": p.workload, "level": p.level,
                                 "threads": p.threads, "scan": p.scan, "status": p.status, "reason": p.reason,
                                 "iters": p.iters, "ops": p.ops or None, "verify": p.verify, "runs": p.runs,
                                 **({"budget_runs": p.budget_runs} if p.budget_runs else {})}
        if p.status == "ok":
            secs = [r["seconds"] for r in p.runs]
            low, high, coverage = stats.median_ci(secs)
            per = 1e9 / p.iters
            entry.update({"threads": p.runs[0]["threads"], "median_s": stats.median(secs), "ci_low_s": low,
                          "ci_high_s": high, "ci_coverage": coverage, "min_s": min(secs),
                          "max_s": max(secs), "ns_per_iter": stats.median(secs) * per,
                          "ci_ns_per_iter": [low * per, high * per], "min_ns_per_iter": min(secs) * per,
                          "sums": p.runs[0]["sums"], "identical": p.identical})
            for key in ("other_load", "steal"):           # the busiest run's neighbours
                seen = [r[key] for r in p.runs if key in r]
                if seen:
                    entry[f"max_{key}"] = max(seen)
            if p.ops:
                entry.update({"ns_per_op": entry["ns_per_iter"] / p.ops,
                              "ci_ns_per_op": [v / p.ops for v in entry["ci_ns_per_iter"]]})
        out.append(entry)
    return out


def clock_of(a: Pair, b: Pair) -> str:
    """The clock two pairs are compared by (impls.ranking_clock)."""
    return ranking_clock(a.level, a.impl.compiled and b.impl.compiled)


def paired_ratios(a: Pair, b: Pair) -> list[float]:
    """a's time per sample over b's, round by round: the rounds in which both ran (adjacent, time_all),
    by clock_of's clock."""
    return stats.paired_ratios(a.runs, a.iters, b.runs, b.iters, clock_of(a, b))


def paired_fastest(group: list[Pair], by_pair: dict[int, dict[str, Any]]) -> Pair:
    """A cell's fastest, by its adjacent runs: the one of smallest median per sample is the first guess,
    and whichever beats it by most in their paired ratios (a median below 1.00) takes its place. The
    medians of separate runs can disagree with the pairs when the machine's speed drifts from round to
    round (tests/test_harness.py replays such a run: docs/benchmarking.md)."""
    first = min(group, key=lambda p: by_pair[id(p)]["ns_per_iter"])
    best, best_median = first, 1.0
    for p in group:
        ratios = paired_ratios(p, first) if p is not first else []
        if ratios and stats.median(ratios) < best_median:
            best, best_median = p, stats.median(ratios)
    return best


def compare_paired(pairs: list[Pair], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each timed pair against its cell's fastest (paired_fastest), and the Codon program against the best
    compiled port of each cell, the port it is slowest against in their paired ratios, all from adjacent
    runs: entries' `paired` and the raw file's `codon_vs_best_port`."""
    by_pair = {id(p): e for p, e in zip(pairs, results)}
    cells: dict[tuple, list[Pair]] = {}
    for p in pairs:
        if by_pair[id(p)]["status"] == "ok" and not p.scan:      # a graph peer at fewer ops: a cell of its own
            cells.setdefault((*cell(p), p.ops), []).append(p)
    codon: dict[str, Any] = {}
    for key, group in cells.items():
        fastest = paired_fastest(group, by_pair)
        for p in group:
            ratios = paired_ratios(p, fastest) if p is not fastest else []
            if ratios:
                by_pair[id(p)]["paired"] = {"against": fastest.impl.name, "clock": clock_of(p, fastest),
                                            **stats.paired_reading(ratios)}
        mine = [p for p in group if p.impl.kind == "codon"]
        ports = [p for p in group if p.impl.kind == "port" and p.impl.compiled]
        readings = [(stats.paired_reading(r), p) for p in ports if mine and (r := paired_ratios(mine[0], p))]
        if readings:
            reading, best = max(readings, key=lambda rp: rp[0]["median"])
            codon[" ".join(str(k) for k in key[:3] if k)] = {"workload": key[0], "level": key[1], "threads": key[2],
                                                        "port": best.impl.name, "clock": clock_of(mine[0], best),
                                                        **reading}
    return codon


def short_runs(pairs: list[Pair], results: list[dict[str, Any]], opts: argparse.Namespace) -> list[str]:
    """A note for every calibrated pair with timed runs shorter than --min-time: the compiled programs of a
    level share one N, calibrated on the first of them, so a faster one's runs are shorter (and a
    calibration run slower than the timed ones leaves them all short)."""
    out = []
    for p, e in zip(pairs, results):
        if e["status"] != "ok" or (opts.iters if p.impl.compiled else opts.python_iters):
            continue
        short = [r["seconds"] for r in p.runs if r["seconds"] < opts.min_time]
        if short:
            out.append(f"{p.key}: {len(short)} of {len(p.runs)} timed runs under --min-time {opts.min_time:g} s "
                       f"(shortest {min(short):.3f} s, at N={p.iters:,}"
                       + (", the N its level's compiled programs share)" if p.impl.compiled else ")"))
    return out


def shown_command(argv: list[str]) -> str:
    """A command line for the record: paths inside the repository relative to it."""
    out = []
    for a in argv:
        p = Path(a)
        out.append(str(p.relative_to(ROOT)) if p.is_absolute() and p.is_relative_to(ROOT) else a)
    return shlex.join(out)


def make_variable(name: str, opts: argparse.Namespace) -> str:
    """A variable's value in the project's Makefile, without editing it (GNU make --eval)."""
    proc = run_process(["make", "-s", "--no-print-directory", f"BUILD={opts.build_dir}"]
                       + ([f"CPU={opts.cpu}"] if opts.cpu else [])
                       + ["--eval", "bench-print-%: ; @echo $($*)", f"bench-print-{name}"], timeout=30)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def toolchain(impl: Impl, opts: argparse.Namespace) -> dict[str, Any]:
    """The compiler's version line and the build flags of a compiled implementation."""
    info: dict[str, Any] = {}
    if impl.compiler:
        command = make_variable(impl.compiler[0], opts)
        if command:
            proc = run_process(shlex.split(command) + impl.compiler[1:], timeout=60)
            info["compiler"] = command
            info["compiler_version"] = (proc.stdout.strip().splitlines() or [""])[0] if proc.returncode == 0 else ""
    if impl.flags:
        info["flags"] = {name: make_variable(name, opts) for name in impl.flags}
    if impl.module:
        try:
            info["library_version"] = metadata.version(impl.module)
        except metadata.PackageNotFoundError:
            pass
    if impl.slow or impl.module:
        info["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    return info


def git(*args: str) -> str:
    """A git command's output in the repository ('' where git or the repository is absent)."""
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine_info(started: dt.datetime) -> dict[str, Any]:
    """What the numbers were measured on: the CPU (machine.py), memory, OS, commit, load."""
    facts = machine.cpu_facts()
    try:
        mem = next(ln.split()[1] for ln in Path("/proc/meminfo").read_text().splitlines()
                   if ln.startswith("MemTotal"))
        memory = f"{int(mem) / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        memory = ""
    return {**facts, "slug": machine.slug(facts), "cores": machine.cores(), "logical_cpus": os.cpu_count(),
            "gpus": machine.gpus(), "memory": memory, "os": platform.platform(), "host": socket.gethostname(),
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(git("status", "--porcelain")),
            "date": started.isoformat(timespec="seconds"),
            "load_average_start": [round(v, 2) for v in os.getloadavg()]}


# --- results file ----------------------------------------------------------------------------

def write_atomic(path: Path, text: str | bytes) -> None:
    """Write text (or bytes) to path so that a reader, or an interrupted run, never sees half a file.

    It goes to a temporary file in the same directory (same file system), is
    flushed to disk, and is renamed over path in one step; any failure removes it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)      # mkstemp's 0600 would hide the results from others
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
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


def raw_path(results_dir: Path, slug: str, started: dt.datetime) -> Path:
    """results/raw/<machine slug>/<date>.json.gz; the date sorts chronologically."""
    return results_dir / "raw" / slug / f"{started.strftime('%Y-%m-%dT%H%M%SZ')}{rawfile.SUFFIX}"


# --- CI budgets ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Budget:
    """A statistic of adjacent runs of one workload that `make bench-ci` holds to a limit.

    kind "time": the subject's ns/iter over the baseline's, one ratio per adjacent pair of runs
    (the two back to back, in a random order); the median must stay <= limit.
    kind "busy": the subject's process CPU time over its wall time, one value per run: how many
    of its threads were busy at once, on average; the median must stay >= limit.
    kind "instructions": the subject's instructions per sample over the baseline's, counted by
    callgrind (one value; see COUNT_CPU for how repeatable); it must stay <= limit.
    A budget is breached only when the 95% interval of that median lies wholly past the limit.
    """
    subject: tuple[str, str]
    baseline: tuple[str, str] | None
    limit: float
    why: str
    kind: str = "time"
    workload: str = "softplus"

    @property
    def name(self) -> str:
        """How the report names it: `codon v4 / codon v3`, `codon v4 cpu/wall`, `c graph v3 / c graph v2`."""
        def side(impl_level: tuple[str, str]) -> str:
            return " ".join([impl_level[0]] + (["graph"] if self.workload == "graph" else []) + [impl_level[1]])
        if self.baseline is None:
            return f"{side(self.subject)} cpu/wall"
        return f"{side(self.subject)} / {side(self.baseline)}" + (" instr" if self.kind == "instructions" else "")


# The budgets are judged on CI.budget_pairs (9) adjacent pairs of runs each, every run calibrated to
# last at least the CI's --min-time; the rounds interleave the budgets in a shuffled order. With
# 9 values the 95% interval of the median is [x(2), x(8)]: a budget fails only when 8 of its 9
# pairs are past the limit. Figures:
# - AVX2: AMD EPYC family 25 model 1 (Zen 3), 2 vCPUs, idle, 2026-12-01: 10 consecutive make bench-ci
#   (all passed) and 3 runs of each sabotaged build (all caught), by `scripts/ci_trials.py --runs 10
#   --sabotage all` (results/ci-trials/amd-epyc-fam25-model1-avx2/2026-12-01T091249Z.json). Per budget:
#   the range of the 10 runs' medians, [the range of single pairs].
# - AVX-512: AMD EPYC family 25 model 17 (Zen 4), 2 vCPUs, 2026-12-01, by the budgets' earlier form
#   (best of 5 runs of 50 ms; medians of 7 in results/raw/amd-epyc-fam25-model17-avx512/): no
#   paired figures or CPU/wall from that machine yet.
#   codon v2 / c v2      AVX2 0.99-1.06 [0.76-1.29]; AVX-512 0.92-1.00, once 1.51 at load 4      -> <= 1.25
#   codon v3 / c v3      AVX2 0.96-1.15 [0.75-1.52]; AVX-512 0.78-0.97                           -> <= 1.35
#   v3 / own v2          AVX2 (width 4) codon 0.30-0.35, c 0.29-0.39, zig 0.24-0.27, rust 0.28-0.33
#                        [0.19-0.49]; AVX-512 (width 8) 1/5.3-1/4.3 (zig 1/6.6-1/6.0); scalar code
#                        (width 1) 1/1.3-1/1.0   -> <= 1/2.8, 1/2.0, 1/1.3 at widths 8, 4, 2 (SIMD_GAIN)
#   graph v3 / own v2    AVX2 (width 4) 0.19-0.24 [0.14-0.31]; AVX-512 medians 1/7.5-1/5.1, runs
#                        apart 1/4.0 at worst; C's graph lanes scalar (sabotaged) AVX2 0.30-0.32
#                        [0.25-0.41]   -> <= 1/2.5, 1/2.0, 1/1.3 at widths 8, 4, 2 (GRAPH_SIMD_GAIN):
#                        a v3 that lost its batching; scalar lanes are the instruction budget's
#   v4 / own v3          AVX2 0.50-0.65 [0.37-0.93]; v4 doing the work of one thread (sabotaged, every
#                        port) 0.93-1.10 [0.67-1.54]: single pairs overlap, because one vCPU's speed
#                        changes from run to run (the two seem to share a core at times); AVX-512
#                        1/1.98-1/1.61   -> <= 1.0 (THREAD_GAIN): a v4 slower than its v3. Whether v4
#                        uses its threads is:
#   v4 cpu/wall          AVX2 1.82-1.95 [1.40-1.99] (a second series of 10, T103546Z.json: 1.71-1.95
#                        [1.54-1.99]), every port; one thread's work (sabotaged) 0.99-1.01
#                        [0.98-1.02]; AVX-512 not measured (its v4 speed-ups of 1.6-2.0x need at least
#                        as many CPUs busy)   -> >= 1.3 (THREAD_BUSY)
# The timed budgets are judged only when other processes left FREE_TWO CPUs free while they ran
# (v4's; measured from /proc/stat, steal included), and none when they left under FREE_ONE. With a
# process spinning on one CPU (ci_trials.py --neighbour, 5 runs, results/ci-trials/.../T100915Z.json)
# all passed, v4's skipped; codon v2 / c v2 0.99-1.04 [0.91-1.24], codon v3 / c v3 1.04-1.12 [0.86-1.35].
V2_LIMIT, V3_LIMIT, THREAD_GAIN, THREAD_BUSY = 1.25, 1.35, 1.0, 1.3
FREE_ONE, FREE_TWO = 0.75, 1.75      # CPUs free of other processes that the budgets (v4's) need judged
SIMD_GAIN = {8: 2.8, 4: 2.0, 2: 1.3}  # the least v3 / v2 speed-up by vector width (at least this wide)
GRAPH_SIMD_GAIN = {8: 2.5, 4: 2.0, 2: 1.3}   # the same for the graph workload


def simd_gain(width: int | None, gains: dict[int, float] | None = None) -> float | None:
    """The v3-over-v2 speed-up a program of this vector width must show (None: none to check);
    gains: by width, SIMD_GAIN (softplus) unless given."""
    gains = gains or SIMD_GAIN
    if width is None:                 # a program that does not say: the narrowest promise
        return min(gains.values())
    return next((gain for least, gain in sorted(gains.items(), reverse=True) if width >= least), None)


def budgets(names: list[str], cpus: int, widths: dict[str, int | None] | None = None) -> list[Budget]:
    """The CI budgets for the compiled implementations `names` (with their vector widths) on `cpus` CPUs."""
    widths = widths or {}
    out = [Budget(("codon", "v2"), ("c", "v2"), V2_LIMIT, f"Codon's tape no slower than {V2_LIMIT}x C's"),
           Budget(("codon", "v3"), ("c", "v3"), V3_LIMIT, f"Codon's v3 no slower than {V3_LIMIT}x C's")]
    for n in names:
        gain = simd_gain(widths.get(n))
        if gain:
            out.append(Budget((n, "v3"), (n, "v2"), 1 / gain, f"{n} v3 at least {gain}x its v2 (vectorized"
                              + (f", width {widths[n]})" if widths.get(n) else ")")))
    for n in names:
        gain = simd_gain(widths.get(n), GRAPH_SIMD_GAIN)
        if gain:
            out.append(Budget((n, "v3"), (n, "v2"), 1 / gain, f"{n} graph v3 at least {gain}x its graph v2 "
                              "(batched" + (f", width {widths[n]})" if widths.get(n) else ")"),
                              workload="graph"))
    if cpus >= 2:
        for n in names:
            out += [Budget((n, "v4"), (n, "v3"), 1 / THREAD_GAIN, f"{n} v4 at least {THREAD_GAIN:g}x its v3's "
                           f"speed ({cpus} threads)"),
                    Budget((n, "v4"), None, THREAD_BUSY, f"{n} v4 keeps {THREAD_BUSY} CPUs busy on average "
                           f"({cpus} threads)", kind="busy")]
    return out


def busy_elsewhere(cpus: int, other: float | None, free: float) -> str:
    """Why budgets needing `free` CPUs cannot be judged ('' when they can): other processes held them."""
    if other is not None and other > cpus - free:
        return f"other processes kept {other:.2f} of the {cpus} CPUs busy while timing (more than {cpus - free:.2f})"
    return ""


def time_budgets(pairs: list[Pair], wanted: list[Budget], opts: argparse.Namespace) -> dict[str, list[float]]:
    """Each budget's values (see Budget), from opts.budget_pairs rounds of adjacent runs.

    Every round runs the "time" budgets in a shuffled order, the subject and baseline of each
    back to back in a random order (seeded from the recorded shuffle seed); a "busy" budget
    takes its values from its subject's runs in that phase. The runs are kept in each pair's
    `budget_runs`, and their sums checked with the timed ones. A budget whose pairs were not
    both timed gets no values.
    """
    live = {(p.impl.name, p.workload, p.level): p for p in pairs if p.status == "verified" and p.runs and not p.scan}

    def pair_of(impl_level: tuple[str, str], b: Budget) -> Pair | None:
        return live.get((impl_level[0], b.workload, impl_level[1]))
    timed = [b for b in wanted if b.baseline and pair_of(b.subject, b) and pair_of(b.baseline, b)]
    values: dict[str, list[float]] = {b.name: [] for b in wanted}
    rng = random.Random(opts.shuffle_seed + 1)
    for rnd in range(1, opts.budget_pairs + 1):
        order = timed[:]
        rng.shuffle(order)
        for b in order:
            duo = [pair_of(b.subject, b), pair_of(b.baseline, b)]
            rng.shuffle(duo)
            per_iter = {}
            for pair in duo:
                if pair.status != "verified":
                    break
                rec, _ = timed_run(pair, opts, f"budget run {rnd}")
                if rec is None:
                    log(f"[budget round {rnd}/{opts.budget_pairs}] {pair.key}: FAILED: {pair.reason}")
                    break
                pair.budget_runs.append(rec)
                per_iter[(pair.impl.name, pair.level)] = rec["seconds"] / pair.iters
            if len(per_iter) == 2 and per_iter[b.baseline] > 0:
                values[b.name].append(per_iter[b.subject] / per_iter[b.baseline])
                log(f"[budget round {rnd}/{opts.budget_pairs}] {b.name:<38} {values[b.name][-1]:6.3f}")
    for b in wanted:
        subject = pair_of(b.subject, b)
        if b.kind == "busy" and subject:
            values[b.name] = [r["cpu"] / r["wall"] for r in subject.budget_runs if r["wall"] > 0]
    return values


def judge(b: Budget, values: list[float]) -> dict[str, Any]:
    """A budget's verdict from its values: ok, BREACH (the interval wholly past the limit) or skip."""
    out: dict[str, Any] = {"name": b.name, "kind": b.kind, "limit": b.limit, "why": b.why, "values": values}
    if not values:
        return {**out, "verdict": "skip"}
    low, high, coverage = stats.median_ci(values)
    past = high < b.limit if b.kind == "busy" else low > b.limit
    return {**out, "median": stats.median(values), "interval": [low, high], "coverage": coverage,
            "verdict": "BREACH" if past else "ok"}


def check_budgets(values: dict[str, list[float]], wanted: list[Budget]) -> tuple[list[str], int, list[dict[str, Any]]]:
    """Report lines for each budget, the number of breaches, and the verdicts for the raw file."""
    lines, verdicts = [], []
    for b in wanted:
        v = judge(b, values.get(b.name, []))
        verdicts.append(v)
        if v["verdict"] == "skip":
            lines.append(f"  skip    {b.name:<38} (not timed) - {b.why}")
            continue
        low, high = v["interval"]
        bound = f">= {b.limit:.2f}" if b.kind == "busy" else f"<= {b.limit:.3f}"
        count = {"time": f"{len(v['values'])} pairs", "busy": f"{len(v['values'])} runs",
                 "instructions": f"callgrind, CPU={COUNT_CPU} build"}[b.kind]
        lines.append(f"  {v['verdict']:<6}  {b.name:<38} = {v['median']:.3f} [{low:.3f}, {high:.3f}]  "
                     f"({count}; limit {bound}: {b.why})")
    return lines, sum(v["verdict"] == "BREACH" for v in verdicts), verdicts


# --- CI instruction budgets ------------------------------------------------------------------
# Time tells a graph v3 whose lane loops run scalar from one whose loops are vectors only by a thin
# margin: the C port's graph v3 without its `omp simd` (gcc then unrolls the lanes to scalar libm
# calls) is still 3.2-3.4x its v2 on the AVX2 Zen 3 (medians of 9 pairs; single pairs 2.4-4.0x)
# against 4.6-5.1x with it (single pairs 3.3-6.5x). Instructions tell at once, and they barely
# vary from run to run (C, Zig, Rust not at all; Codon's runtime by under 5%). callgrind counts
# each graph level's instructions at 32 and 64 samples of 10,000 ops (the difference is the
# per-sample cost, without start-up or recording) on a build for x86-64-v3 (valgrind 3.19 cannot
# run AVX-512 code; the same binaries then run on both kinds of host, though the counts are not
# yet checked on the AVX-512 one), with OPENBLAS_NUM_THREADS=1 (Codon's runtime would otherwise
# start OpenBLAS threads that callgrind counts while they spin). Per sample, x86-64-v3 builds,
# counted on the AVX2 Zen 3 (2026-12-01; scripts/ci_trials.py's c-graph-scalar-lanes is the
# sabotaged one):
#   graph v3 / graph v2   codon 0.196-0.205, c 0.199, zig 0.200, rust 0.177 (10 runs of
#                         make bench-ci, results/ci-trials/ as above); C with scalar lanes 0.278 (3
#                         runs)   -> at most 0.24 (GRAPH_V3_INSTRUCTIONS)
COUNT_CPU, COUNT_SAMPLES, COUNT_OPS, GRAPH_V3_INSTRUCTIONS = "x86-64-v3", (32, 64), 10_000, 0.24
COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)


def count_instructions(argv: list[str], opts: argparse.Namespace) -> tuple[int | None, str]:
    """callgrind's count of the instructions argv executes: (count, '') or (None, why)."""
    proc = run_process(["env", "OPENBLAS_NUM_THREADS=1", "valgrind", "--tool=callgrind",
                        "--callgrind-out-file=/dev/null", *argv], opts.timeout * 4)
    found = COLLECTED.search(proc.stderr)
    if proc.returncode != 0 or not found:
        return None, failure(proc, opts.timeout * 4)
    return int(found[1]), ""


def instruction_budgets(states: list[ImplState],
                        opts: argparse.Namespace) -> tuple[list[Budget], dict[str, list[float]],
                                                                                     list[str], list[str]]:
    """The graph v3 instruction budgets (see above): (budgets, values, skip lines, failures)."""
    if platform.machine() != "x86_64":
        return [], {}, [f"  skip    graph v3 instructions: not an x86-64 host (counted on CPU={COUNT_CPU} builds)"], []
    if not shutil.which("valgrind"):
        return [], {}, ["  skip    graph v3 instructions: valgrind not found (Debian's valgrind; .ci/run "
                        "installs it)"], []
    build = f"{opts.build_dir}/cpu-{COUNT_CPU}"
    wanted, values, problems = [], {}, []
    for state in states:
        impl = state.impl
        if state.status != "ok" or not impl.compiled or state.graph != "yes" or not impl.target \
                or not {"v2", "v3"} <= set(impl.graph_levels):
            continue
        b = Budget((impl.name, "v3"), (impl.name, "v2"), GRAPH_V3_INSTRUCTIONS,
                   f"{impl.name} graph v3 at most {GRAPH_V3_INSTRUCTIONS}x its v2's instructions per sample "
                   "(lane loops vectorized)", kind="instructions", workload="graph")
        wanted.append(b)
        if not opts.no_build:
            argv = make_command(impl, argparse.Namespace(build_dir=build, cpu=COUNT_CPU))
            log(f"[instructions] {impl.name}: {shlex.join(argv[2:])}")
            made = run_process(argv, timeout=1800)
            if made.returncode != 0 or missing_paths(impl, build):
                problems.append(f"{impl.name}: CPU={COUNT_CPU} build for the instruction count: "
                                f"{failure(made, 1800)}")
                continue
        per_sample = {}
        for level in ("v2", "v3"):
            counts = []
            for n in COUNT_SAMPLES:
                got, why = count_instructions(impl.command(build) + ["--workload", "graph", "--ops", str(COUNT_OPS),
                                                                     "--level", level, "--iters", str(n), "--json"],
                                              opts)
                if got is None:
                    problems.append(f"{impl.name} graph {level}: callgrind run at N={n}: {why}")
                    break
                counts.append(got)
            if len(counts) == 2:
                per_sample[level] = (counts[1] - counts[0]) / (COUNT_SAMPLES[1] - COUNT_SAMPLES[0])
                log(f"[instructions] {impl.name} graph {level}: {per_sample[level]:,.0f} per sample")
        if len(per_sample) == 2 and per_sample["v2"] > 0:
            values[b.name] = [per_sample["v3"] / per_sample["v2"]]
    return wanted, values, [], problems


def judge_all(values: dict[str, list[float]], wanted: list[Budget],
              host: dict[str, Any]) -> tuple[list[str], int, list[dict[str, Any]]]:
    """check_budgets, less the budgets that other processes' load while they were timed leaves
    unjudgeable (a line says why)."""
    load = host.get("other_load_budgets")
    crowded = busy_elsewhere(host["cores"], load, FREE_ONE)
    busy = busy_elsewhere(host["cores"], load, FREE_TWO)
    # Instruction counts do not depend on the load: those budgets are always judged.
    dropped = [b for b in wanted if b.kind != "instructions" and (crowded or (busy and b.subject[1] == "v4"))]
    lines, breaches, verdicts = check_budgets(values, [b for b in wanted if b not in dropped])
    verdicts += [{**judge(b, []), "reason": crowded or busy} for b in dropped]
    if crowded:
        lines.append(f"  skip    every timed budget ({len(dropped)}): {crowded}: no CPU was free to time on alone")
    elif dropped:
        lines.append(f"  skip    v4 budgets ({len(dropped)}): {busy}: v4 had no free CPUs to scale on")
    return lines, breaches, verdicts


# --- the report on the terminal --------------------------------------------------------------

def summary_table(results: list[dict[str, Any]], workload: str) -> str:
    """Median ns/iter (softplus) or ns/op (graph), implementation x level, as plain text."""
    unit = "ns_per_op" if workload == "graph" else "ns_per_iter"
    mine = [e for e in results if e["workload"] == workload and not e["scan"]]
    ok = [e for e in mine if e["status"] == "ok"]
    levels = [lv for lv in LEVEL_ORDER if any(e["level"] == lv for e in ok)]
    cell = {(e["impl"], e["level"]): e for e in mine}
    rows = [f"{workload} {unit.replace('_per_', '/')} (median)".ljust(28) + "".join(f"{lv:>12}" for lv in levels)]
    for name in dict.fromkeys(e["impl"] for e in mine):
        cells = []
        for lv in levels:
            e = cell.get((name, lv))
            cells.append(f"{e[unit]:12.2f}" if e and e["status"] == "ok"
                         else f"{'FAILED' if e and e['status'] == 'failed' else '-':>12}")
        rows.append(name.ljust(28) + "".join(cells))
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
        # --ci times the implementations whose budgets it holds (and the CPython port): those its margins
        # were measured on (Impl.ci); make test checks every implementation, make bench times them all.
        chosen = [i for i in registry if (opts.peers_by_default or i.kind != "peer") and (i.ci or not opts.ci)]
    started = dt.datetime.now(dt.timezone.utc)
    try:
        host = machine_info(started)
        most = opts.threads or host["cores"]
        states = [ImplState(i) for i in chosen]
        build_all(states, opts)
        probe_graph(states, opts)
        probe_gpu(states, opts)
        pairs = make_pairs(states, opts, most)
        verify_all(pairs, opts)
        calibrations = calibrate_all(pairs, opts)
        before = machine.cpu_clock()
        time_all(pairs, opts)
        after = machine.cpu_clock()
        host["other_load"], host["steal"] = machine.other_load(before, after), machine.steal(before, after)
        wanted: list[Budget] = []
        count_skips: list[str] = []
        count_problems: list[str] = []
        if opts.ci:
            wanted = budgets([s.impl.name for s in states if s.impl.compiled], most,
                             {s.impl.name: s.vector["vector_width"] for s in states})
            before = machine.cpu_clock()
            values = time_budgets(pairs, wanted, opts)
            host["other_load_budgets"] = machine.other_load(before, machine.cpu_clock())
            if "graph" in opts.workloads:
                counted, counts, count_skips, count_problems = instruction_budgets(states, opts)
                wanted += counted
                values.update(counts)
        notes = cross_check(pairs, opts)
        notes += [f"{s.impl.name} refuses --workload graph (exit 2): not timed for the graph"
                  for s in states if s.graph == "no"]
        notes += [f"{s.impl.name} {', '.join(s.impl.gpu_levels)} not timed: {s.gpu[len('no: '):]}"
                  for s in states if s.gpu.startswith("no: ")]
        results = summarise(pairs)
        codon_vs_best_port = compare_paired(pairs, results)
        notes += short_runs(pairs, results, opts)
        budget_lines, breaches, verdicts = [], 0, []
        if opts.ci:
            budget_lines, breaches, verdicts = judge_all(values, wanted, host)
            budget_lines += count_skips
        doc = {
            "generated_by": "scripts/bench.py", "schema": SCHEMA,
            "command": shlex.join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
            "machine": host,
            "config": {"min_time": opts.min_time, "iters": opts.iters, "python_iters": opts.python_iters,
                       "verify_iters": opts.verify_iters, "repeats": opts.repeats, "threads": most,
                       "thread_counts": thread_counts(most, opts.thread_scan), "seed": opts.seed,
                       "shuffle_seed": opts.shuffle_seed, "timeout": opts.timeout,
                       "levels": opts.levels or LEVEL_ORDER, "graph_levels": list(opts.graph_levels),
                       "workloads": opts.workloads, "ops": opts.ops,
                       "cpu_target": opts.cpu or "native", "ci": opts.ci,
                       **({"budget_pairs": opts.budget_pairs} if opts.ci else {})},
            "implementations": [
                {"name": s.impl.name, "kind": s.impl.kind, "label": s.impl.label, "autograd": s.impl.autograd,
                 "compiled": s.impl.compiled, "status": s.status, "reason": s.reason, "version": s.version,
                 **s.vector, "graph": s.graph, "build_seconds": s.build_seconds,
                 "command": shown_command(s.impl.command(opts.build_dir)),
                 **(toolchain(s.impl, opts) if s.status == "ok" else {})}
                for s in states],
            "calibration": calibrations,
            "results": results,
            "codon_vs_best_port": codon_vs_best_port,
            "notes": notes,
            **({"budgets": verdicts} if opts.ci else {}),
        }
        doc["machine"]["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
        doc["machine"]["seconds"] = round((dt.datetime.now(dt.timezone.utc) - started).total_seconds(), 1)
        path = raw_path(opts.results_dir, host["slug"], started)
        write_atomic(path, rawfile.encode(doc))
    except KeyboardInterrupt:
        log("interrupted: no results file written")
        return 130
    for workload in opts.workloads:
        if any(e["workload"] == workload for e in results):
            print(summary_table(results, workload))
    if codon_vs_best_port:
        print("codon / best port, per sample, median of paired ratios from adjacent runs [95% interval]; "
              "CPU time, v4 wall time:")
        for key, e in codon_vs_best_port.items():
            print(f"  {key:<22} {e['median']:6.3f} [{e['interval'][0]:.3f}, {e['interval'][1]:.3f}]  "
                  f"{e['read']:<7} ({e['port']})")
    problems = [f"{s.impl.name}: {s.status}: {s.reason}" for s in states if s.status == "build-failed"]
    problems += [f"{s.impl.name}: graph probe {s.graph}" for s in states if s.graph.startswith("failed")]
    problems += [f"{s.impl.name}: GPU probe {s.gpu}" for s in states if s.gpu.startswith("failed")]
    problems += [f"{s.impl.name}: refuses --workload graph, which its registry entry lists "
                 f"({', '.join(s.impl.graph_levels)})" for s in states if s.graph == "no" and s.impl.graph_levels]
    problems += [f"{e['impl']} {e['workload']} {e['level']}: {e['reason']}" for e in results if e["status"] == "absent"]
    problems += count_problems
    problems += [f"{e['impl']} {e['workload']} {e['level']}" + (f" T={e['threads']}" if e["level"] == "v4" else "")
                 + f": {e['reason']}" for e in results if e["status"] == "failed"]
    for s in states:
        if s.status == "skipped":
            print(f"skipped  {s.impl.name}: {s.reason}")
    for line in problems:
        print(f"FAILED   {line}")
    for line in notes:
        print(f"note     {line}")
    print(f"results: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
          f"({doc['machine']['seconds']:.0f} s, shuffle seed {opts.shuffle_seed})")
    status = 1 if problems and opts.strict else 0
    if problems:
        print(f"bench: {len(problems)} failure(s)" + ("" if opts.strict else " (--no-strict: exit status 0)"))
    if opts.ci:
        print(f"budgets (median of {opts.budget_pairs} adjacent pairs or runs, [95% interval]; a breach is an "
              "interval wholly past the limit):")
        print("\n".join(budget_lines))
        if breaches or (problems and opts.strict):
            print(f"bench-ci: FAILED ({breaches} budget breach(es), {len(problems)} failure(s))")
            status = 1
        else:
            print(f"bench-ci: passed ({sum(v['verdict'] == 'ok' for v in verdicts)} budgets met, "
                  f"{sum(v['verdict'] == 'skip' for v in verdicts)} skipped)")
    return status


if __name__ == "__main__":
    sys.exit(main())
