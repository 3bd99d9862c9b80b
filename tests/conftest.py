"""Shared fixtures: the program is built once per test session, then run as a subprocess."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The build folder under test: AUTOGRAD_BUILD=DIR tests a build made with `make BUILD=DIR`.
BUILD = os.environ.get("AUTOGRAD_BUILD", "build")
# AUTOGRAD_PREBUILT=1 tests the programs already in that folder and runs no make: a bundle carried to a
# machine with no toolchain (make gpu-bundle's build-gpu/, on a GPU machine).
PREBUILT = os.environ.get("AUTOGRAD_PREBUILT") == "1"
BINARY = ROOT / BUILD / "autograd"
TIMEOUT = 120

sys.path.insert(0, str(ROOT / "scripts"))
from impls import ALL_LEVELS, DEFAULT, LEVELS  # noqa: E402  (scripts/impls.py: the one registry)

# Every implementation of the contract but the peers: its command, its make target (None: nothing to
# build), its softplus and graph levels, from the registry the benchmark harness reads.
IMPLS = {i.name: (i.command(BUILD), i.make_target(BUILD), i.levels, i.graph_levels)
         for i in DEFAULT if i.kind != "peer"}
# Those that run a program from PATH (PyPy's pypy3), skipped where it is missing.
PROGRAMS = {i.name: i.program for i in DEFAULT if i.kind != "peer" and i.program}


def rustc_names_avx512(rustc: str = os.environ.get("RUSTC", "rustc")) -> bool:
    """Whether the Rust compiler make uses (RUSTC) can build the Rust port's AVX-512 libmvec calls:
    `target_feature = "avx512f"` and `__m512d` are stable from rustc 1.89. An older one (Debian 12's
    rustc-web is 1.85) builds them at AVX2's width at most (ports/rust/README.md)."""
    try:
        out = subprocess.run([rustc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return False
    version = re.match(r"rustc (\d+)\.(\d+)", out)
    return bool(version) and (int(version[1]), int(version[2])) >= (1, 89)


def widest_width(impl: str, host_width: int) -> int:
    """The widest libmvec width `impl` can use on a host whose widest is host_width."""
    return min(host_width, 4) if impl == "rust" and not rustc_names_avx512() else host_width


def skip_without_program(name: str) -> None:
    """Skip a test of `name` when the program its command runs is not installed."""
    if name in PROGRAMS and shutil.which(PROGRAMS[name]) is None:
        pytest.skip(f"{name}: {PROGRAMS[name]} not found (.ci/run installs it)")


class Program:
    """A command-line implementation of the contract, run as a subprocess."""

    def __init__(self, argv: list[str], name: str = "codon", levels: list[str] = ALL_LEVELS,
                 graph_levels: list[str] = LEVELS):
        self.argv = argv
        self.name = name
        self.levels = levels
        self.graph_levels = graph_levels

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv + list(args), capture_output=True, text=True,
                              timeout=TIMEOUT, env=env)

    def ok(self, *args: str) -> str:
        """stdout of a run that must succeed."""
        proc = self.run(*args)
        assert proc.returncode == 0, f"{args}: exit {proc.returncode}, stderr {proc.stderr!r}"
        assert proc.stderr == ""
        return proc.stdout

    def records(self, *args: str) -> list[dict]:
        """The JSON Lines of a successful --json run."""
        return [json.loads(line) for line in self.ok(*args, "--json").splitlines()]

    def sums(self, level: str, n: int, seed: int = 42, threads: int | None = None) -> tuple[float, float, float]:
        extra = ["--threads", str(threads)] if threads is not None else []
        (r,) = self.records("--level", level, "--iters", str(n), "--seed", str(seed), *extra)
        return r["sum_f"], r["sum_dx"], r["sum_dy"]

    def graph_sums(self, level: str, m: int, n: int, seed: int = 42,
                   threads: int | None = None) -> tuple[float, float, float]:
        """sum_loss, sum_grad_in, sum_grad_all of one graph-workload level (docs/contract-graph.md)."""
        extra = ["--threads", str(threads)] if threads is not None else []
        (r,) = self.records("--workload", "graph", "--level", level, "--ops", str(m), "--iters", str(n),
                            "--seed", str(seed), *extra)
        return r["sum_loss"], r["sum_grad_in"], r["sum_grad_all"]

    def eval(self, x: float | str, y: float | str) -> tuple[float, float, float]:
        (r,) = self.records("--eval", str(x), str(y))
        return r["f"], r["dfdx"], r["dfdy"]


@pytest.fixture(scope="session")
def codon() -> Program:
    """The Codon program, built (if out of date) once per session with the project's Makefile."""
    make(f"{BUILD}/autograd")
    return Program([str(BINARY)])


def make(target: str) -> None:
    """Brings a program of the build folder up to date (AUTOGRAD_PREBUILT=1: it must be there already)."""
    if PREBUILT:
        assert (ROOT / target).exists(), f"AUTOGRAD_PREBUILT=1, and {target} is missing"
        return
    subprocess.run(["make", "-s", f"BUILD={BUILD}", target], cwd=ROOT, check=True, env=os.environ.copy())


def built(name: str) -> Program:
    """Implementation `name`, built; skipped when its toolchain is missing (the Makefile then prints a
    `skip:` line and builds nothing)."""
    argv, target, levels, graph_levels = IMPLS[name]
    skip_without_program(name)
    why = build_port(argv, target)
    if why is not None:
        pytest.skip(f"{name}: {why}")
    return Program(argv, name, levels, graph_levels)


@pytest.fixture(scope="session", params=list(IMPLS))
def impl(request, codon) -> Program:
    """Each implementation in turn, the Codon program first (built before the others, the model)."""
    return built(request.param)


@pytest.fixture(scope="session", params=[name for name in IMPLS if name != "codon"])
def port(request, codon) -> Program:
    """Each implementation but the Codon program, for the tests that hold it to the Codon program's output:
    run against the Codon program itself, they would compare it with itself."""
    return built(request.param)


def build_port(argv: list[str], target: str | None) -> str | None:
    """Brings a port's program up to date (AUTOGRAD_PREBUILT=1: takes the one there); why it is missing, or None.
    The Makefile prints a skip line instead of failing when a port's compiler is missing. A failed build
    fails (make removes the old binary first, so nothing stale is tested)."""
    out = "not in the prebuilt folder"
    if target is not None and not PREBUILT:
        proc = subprocess.run(["make", "-s", f"BUILD={BUILD}", target], cwd=ROOT, env=os.environ.copy(),
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"make {target} failed:\n{proc.stdout}{proc.stderr}"
        out = proc.stdout.strip()
    # The program is argv[0], or argv[1] when argv[0] is this Python (the Cython port's launcher).
    return None if all(Path(a).exists() for a in argv[:2] if "/" in a) else out
