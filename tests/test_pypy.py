"""PyPy, timed warm: under pypy3 the CPython port runs each level on warm_plan's samples before the clock
(autograd.warm_up), prints the same sums as CPython, and ports/python/warmup_time.py reports the warm-up.

The warm-up is checked by the calls it makes, not by time: the port is imported under pypy3 in a
subprocess, its level functions and cli.driver.timed wrapped to record each call in order.
"""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, skip_without_program

# The CPython port under PyPy, whole runs: make test runs it, make test-fast leaves it out.
pytestmark = pytest.mark.slow

PORT = ROOT / "ports" / "python"
TIMEOUT = 120

# Runs the port's main with the arguments after the first, its level functions (RUNS, GRAPH_RUNS) and
# cli.driver.timed wrapped: the log, on stderr's last line, is each call in order, ["go", n] or ["clock"],
# with warm_plan and WARM_SECONDS, and the seconds from the first call to the clock.
RECORDER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import autograd
from cli import driver

argv = sys.argv[2:]
graph = "graph" in argv
log, marks = [], []
table = autograd.GRAPH_RUNS if graph else autograd.RUNS
for level, fn in list(table.items()):
    def recorded(*args, fn=fn):
        marks.append(time.monotonic())
        log.append(["go", args[-1]])
        return fn(*args)
    table[level] = recorded
timed = driver.timed
def clocked(level, go, n):
    marks.append(time.monotonic())
    log.append(["clock"])
    return timed(level, go, n)
driver.timed = clocked
sys.argv = ["autograd"] + argv
driver.main(autograd.PROGRAM)
m = int(argv[argv.index("--ops") + 1]) if "--ops" in argv else 10000
plan = list(autograd.warm_plan("graph" if graph else "softplus", m)) if hasattr(autograd, "warm_plan") else None
sys.stderr.write(json.dumps({"log": log, "plan": plan, "cap": getattr(autograd, "WARM_SECONDS", None),
                             "seconds": marks[-1] - marks[0]}) + "\n")
"""

SOFTPLUS = [["--level", lv, "--iters", "300", "--seed", "7"] for lv in ("v0", "v1", "v2", "fused")]
GRAPH = [["--workload", "graph", "--level", lv, "--ops", "1000", "--iters", "3", "--seed", "7"]
         for lv in ("v0", "v1", "v2")]
SUMS = ("sum_f", "sum_dx", "sum_dy", "sum_loss", "sum_grad_in", "sum_grad_all")


def level_id(args: list[str]) -> str:
    return ("graph-" if "graph" in args else "softplus-") + args[args.index("--level") + 1]


def recorded_run(python: str, args: list[str]) -> tuple[list[dict], dict]:
    """The JSON records and the call log of one level run by `python` through RECORDER."""
    proc = subprocess.run([python, "-c", RECORDER, str(PORT), *args, "--json"], capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines()], json.loads(proc.stderr.splitlines()[-1])


def sums(records: list[dict]) -> list[dict]:
    return [{k: r[k] for k in ("level", "iters", *SUMS) if k in r} for r in records]


@pytest.mark.parametrize("args", SOFTPLUS + GRAPH, ids=level_id)
def test_pypy_warms_each_level_before_the_clock(args):
    """Under pypy3: warm_plan's calls of go, each of its chunk of samples, then the clock and the timed
    go(N); fewer calls only where the warm-up reached WARM_SECONDS. The sums are CPython's, digit for digit."""
    skip_without_program("pypy")
    records, run = recorded_run("pypy3", args)
    assert run["plan"] is not None, "the port has no warm_plan"
    calls, chunk = run["plan"]
    n = int(args[args.index("--iters") + 1])
    log = run["log"]
    assert ["clock"] in log and log[-2:] == [["clock"], ["go", n]], log[-3:]
    warm = log[:-2]
    assert warm == [["go", chunk]] * len(warm), warm
    assert 1 <= len(warm) <= calls
    if len(warm) < calls:
        assert run["seconds"] >= run["cap"], (len(warm), calls, run["seconds"])
    assert records[0]["impl"] == "pypy"
    cpython = subprocess.run([sys.executable, str(PORT / "autograd.py"), *args, "--json"], capture_output=True,
                             text=True, timeout=TIMEOUT, check=True).stdout
    assert sums(records) == sums([json.loads(line) for line in cpython.splitlines()])


@pytest.mark.parametrize("args", [SOFTPLUS[2], GRAPH[2]], ids=level_id)
def test_cpython_does_not_warm(args):
    """CPython has no JIT: the timed go(N) is the level's only call."""
    _, run = recorded_run(sys.executable, args)
    assert run["log"] == [["clock"], ["go", int(args[args.index("--iters") + 1])]]


def test_pypy_level_all_warms_every_level():
    """--level all: each of v0, v1, v2 warmed, then timed, in turn; the sums are CPython's."""
    skip_without_program("pypy")
    args = ["--iters", "200", "--seed", "3"]
    records, run = recorded_run("pypy3", args)
    calls, chunk = run["plan"]
    clocks = [i for i, entry in enumerate(run["log"]) if entry == ["clock"]]
    assert len(clocks) == 3 and [r["level"] for r in records] == ["v0", "v1", "v2"]
    starts = [0] + [i + 2 for i in clocks[:-1]]
    for start, clock in zip(starts, clocks):
        assert 1 <= clock - start <= calls and run["log"][start:clock] == [["go", chunk]] * (clock - start)
    cpython = subprocess.run([sys.executable, str(PORT / "autograd.py"), *args, "--json"], capture_output=True,
                             text=True, timeout=TIMEOUT, check=True).stdout
    assert sums(records) == sums([json.loads(line) for line in cpython.splitlines()])


def test_warmup_time_reports_every_level():
    """ports/python/warmup_time.py, in a quick configuration: one line per level, the warm-up's seconds
    and calls, the run's time cold and warm; a `skip:` line and exit 0 without pypy3."""
    proc = subprocess.run([sys.executable, str(PORT / "warmup_time.py"), "--reps", "1", "--iters", "2000",
                           "--graph-iters", "2", "--ops", "1000"], capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    if shutil.which("pypy3") is None:
        assert len(lines) == 1 and lines[0].startswith("skip: "), lines
        return
    levels = [("softplus", lv) for lv in ("v0", "v1", "v2", "fused")] + [("graph", lv) for lv in ("v0", "v1", "v2")]
    assert len(lines) == len(levels), lines
    for line, (workload, level) in zip(lines, levels):
        assert line.startswith(f"pypy {workload} {level}"), line
        assert " s (" in line and " cold, " in line and line.endswith(" warm"), line
