"""The one registry of implementations and levels: bench.py, report.py and tests/conftest.py read it.

Every implementation speaks the contract's command line and JSON Lines (docs/contract.md §4-§5;
the graph workload: docs/contract-graph.md §G6). `DEFAULT` lists this project's Codon program,
its ports and the peers; a JSON file of the same fields (see `load_registry`) replaces it, which
is how the harness's own tests point it at small fixture programs.
"""
from __future__ import annotations

import json
import sys
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

from harness import ROOT

LEVELS = ["v0", "v1", "v2", "v3", "v4"]
BASELINES = ["fused", "fused-simd"]
ALL_LEVELS = LEVELS + BASELINES
# Levels that need a device (contract §3, v5): timed where the program's probe finds one, else skipped.
GPU_LEVELS = ["v5"]
# Every level a table may show, in the order tables show them.
LEVEL_ORDER = LEVELS + GPU_LEVELS + BASELINES
# Contract §2 / §G4: the levels summed in index order agree within 1e-12; the others within 1e-9.
SEQUENTIAL = {"v0", "v1", "v2", "fused"}
WORKLOADS = ["softplus", "graph"]
# The levels of each workload (the graph has no baselines, contract-graph §G5).
WORKLOAD_LEVELS = {"softplus": ALL_LEVELS, "graph": LEVELS}



def ranking_clock(level: str, both_compiled: bool) -> str:
    """The clock two implementations of a level are compared by: the timed region's CPU time
    (`cpu_seconds`, which the neighbours' load barely moves) for single-threaded levels of two compiled
    programs, whose work is on the timing thread (bar the Codon program's Boehm marker thread at v0:
    docs/benchmarking.md); wall time (`seconds`) for v4, whose speed-up is the point, and wherever a
    peer or an interpreter is one side, whose runtimes may work on threads of their own (JAX's CPU backend
    does)."""
    return "cpu_seconds" if level != "v4" and both_compiled else "seconds"


@dataclass(frozen=True)
class Impl:
    """One implementation of the contract, as the harness builds, checks and times it."""
    name: str                        # the contract's `impl` (codon, c, zig, rust, python, numpy, ...)
    argv: list[str]                  # command, relative to the repository root; {python} = this
                                     # Python, {build} = the build directory
    kind: str                        # "codon", "port" or "peer"
    label: str                       # how the report describes it
    levels: list[str]                # softplus levels it may have (each is probed before timing)
    graph_levels: list[str] = field(default_factory=lambda: list(LEVELS))   # graph levels it may have
    graph_ops: int | None = None     # the most graph ops it is timed at (JAX: compile time), if fewer
    batch_iters: int = 1             # fewest samples a batched level (v3, fused-simd) is calibrated
                                     # from: a peer's per-call cost would swamp a 1-sample run
    target: str | None = None        # make target that builds it ({build} as in argv)
    makefile: str | None = None      # the Makefile holding target (default: the project's)
    module: str | None = None        # Python package it needs (peers): absent means skipped
    slow: bool = False               # interpreted: calibrated on its own, not with the compiled ones
    compiler: list[str] = field(default_factory=list)   # Makefile variable + args printing its version
    flags: list[str] = field(default_factory=list)      # Makefile variables holding its build flags
    autograd: bool = True            # False for a formula baseline (no tape at all)
    gpu_levels: list[str] = field(default_factory=list)  # softplus levels it has where a GPU is
    ci: bool = True                  # timed by `make bench-ci` (its budgets' margins were measured with it)
    rounds: int | None = None        # times in at most this many rounds (its pairs: those rounds), for a
                                     # program whose every process starts for a second or more
    iters: int | None = None         # N fixed, uncalibrated (torch.compile, which compiles for a minute)
    program: str | None = None       # a program on PATH that argv runs (PyPy's pypy3): absent means skipped

    @property
    def compiled(self) -> bool:
        """A compiled program: timed at the N calibrated on the Codon program, sums compared across."""
        return self.kind in ("codon", "port") and not self.slow

    def command(self, build: str = "build", root: Path = ROOT) -> list[str]:
        """argv with its placeholders filled in and relative paths made absolute, from root (another
        checkout's, to run its build)."""
        out = []
        for a in self.argv:
            a = a.replace("{python}", sys.executable).replace("{build}", build)
            out.append(str(root / a) if "/" in a and not Path(a).is_absolute() else a)
        return out

    def make_target(self, build: str = "build") -> str | None:
        """The make target, with {build} filled in."""
        return self.target.replace("{build}", build) if self.target else None


DEFAULT: list[Impl] = [
    Impl("codon", ["{build}/autograd"], "codon", "Codon (this project)", ALL_LEVELS, gpu_levels=GPU_LEVELS,
         target="{build}/autograd", compiler=["CODON", "--version"], flags=["CODON_FLAGS"]),
    Impl("c", ["{build}/autograd-c"], "port", "C port", ALL_LEVELS,
         target="{build}/autograd-c", compiler=["CC", "--version"], flags=["C_FLAGS", "C_LIBS"]),
    Impl("zig", ["{build}/autograd-zig"], "port", "Zig port", ALL_LEVELS,
         target="{build}/autograd-zig", compiler=["ZIG", "version"], flags=["ZIG_FLAGS"]),
    Impl("rust", ["{build}/autograd-rust"], "port", "Rust port", ALL_LEVELS,
         target="{build}/autograd-rust", compiler=["RUSTC", "--version"], flags=["RUST_FLAGS"]),
    Impl("mojo", ["{build}/autograd-mojo"], "port", "Mojo port", ALL_LEVELS,
         target="{build}/autograd-mojo", compiler=["MOJO", "--version"], flags=["MOJO_FLAGS"], ci=False),
    # The Cython port's program is a Python file in the build folder: it runs ports/cython/autograd.py (plain
    # Python, the CPython port's cli) with the extension modules beside it; compiled, so not slow.
    Impl("cython", ["{python}", "{build}/cython/autograd.py"], "port", "Cython port", ALL_LEVELS,
         target="{build}/cython/autograd.py", compiler=["CYTHON", "--version"],
         flags=["CYTHON_FLAGS", "C_FLAGS", "C_LIBS"],
         ci=False),
    Impl("python", ["{python}", "ports/python/autograd.py"], "port", "CPython port",
         ["v0", "v1", "v2", "fused"], graph_levels=["v0", "v1", "v2"], slow=True),
    # The CPython port's source run by Debian's PyPy, timed warm: autograd.py runs each level before its
    # clock until the JIT has compiled its loops, as Numba's compile is kept out (warmup_time.py shows the
    # cost). Calibrated on its own (slow); no `rounds`: the warm-up adds a fraction of a second a process.
    Impl("pypy", ["pypy3", "ports/python/autograd.py"], "port", "PyPy (the CPython port under pypy3)",
         ["v0", "v1", "v2", "fused"], graph_levels=["v0", "v1", "v2"], slow=True, program="pypy3",
         ci=False),
    # The Numba port: make writes a wrapper (the target CPU, the on-disk cache of compiled code) and
    # fills the cache; every level is loaded from it before its clock starts. That load is paid by every
    # process, a large share of a make bench: 15 rounds (docs/benchmarking.md, "Entries that start slowly").
    Impl("numba", ["{build}/autograd-numba"], "port", "Numba port (@njit)",
         ["v2", "v3", "v4", "fused", "fused-simd"], graph_levels=["v2", "v3", "v4"],
         target="{build}/autograd-numba", ci=False, rounds=15),
    Impl("numpy", ["{python}", "peers/numpy_peer.py"], "peer",
         "NumPy peer (formula baseline, not an autograd)", ["fused-simd"], graph_levels=[],
         module="numpy", autograd=False),
    Impl("jax", ["{python}", "peers/jax_peer.py"], "peer",
         "JAX peer (autograd: jit(vmap(value_and_grad)))", ["v3"], graph_levels=["v3"],
         # XLA's compile time grows faster than M^2 on the unrolled graph (docs/findings/peers.md): its
         # graph row is timed at 100 ops, and says so. Every process compiles again, which 70 rounds would
         # pay 70 times: 15 rounds (docs/benchmarking.md, "Entries that start slowly").
         graph_ops=100, module="jax", rounds=15),
    Impl("torch", ["{python}", "peers/torch_peer.py"], "peer",
         "PyTorch peer (autograd: torch.autograd, CPU; graph v0 eager, v3 batched)", ["v3"],
         # Every process imports torch and runs a 1,024-sample graph v3 batch, a slow start each round:
         # 9 rounds (docs/benchmarking.md, "Entries that start slowly").
         graph_levels=["v0", "v3"], batch_iters=1024, module="torch", rounds=9),
    # torch.compile (Inductor) of one sample's graph, forward and backward, per sample. Its compile
    # time grows with M and is paid by every process, Inductor's on-disk cache notwithstanding
    # (docs/findings/peers.md): timed at 100 ops, in 3 rounds of 200 samples, and says so.
    Impl("torch-compile", ["{python}", "peers/torch_compile_peer.py"], "peer",
         "PyTorch torch.compile peer (autograd: AOTAutograd + Inductor, per sample, CPU; graph only)", [],
         graph_levels=["v2"], graph_ops=100, module="torch", rounds=3, iters=200),
]


KINDS = ("codon", "port", "peer")
# What each of Impl's annotations allows in a registry file: the JSON values' types, and how to say it.
_JSON_TYPES = {"str": ((str,), "a string"), "str | None": ((str, type(None)), "a string or null"),
               "int": ((int,), "an integer"), "int | None": ((int, type(None)), "an integer or null"),
               "bool": ((bool,), "true or false"), "list[str]": ((list,), "a list of strings")}


def _entry(k: int, entry: object) -> Impl:
    """One registry entry as an Impl; ValueError saying what is wrong with it."""
    if not isinstance(entry, dict):
        raise ValueError(f"entry {k} is {type(entry).__name__}, not an object")
    where = f"entry {k} ({entry.get('name', 'no name')!r})" if isinstance(entry.get("name"), str) else f"entry {k}"
    known = {f.name: f for f in fields(Impl)}
    unknown = [key for key in entry if key not in known]
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}; Impl's are {', '.join(known)}")
    needed = [f.name for f in known.values() if f.default is MISSING and f.default_factory is MISSING]
    if absent := [name for name in needed if name not in entry]:
        raise ValueError(f"{where}: missing field(s) {', '.join(absent)}")
    for key, value in entry.items():
        types, said = _JSON_TYPES[known[key].type]
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)   # JSON true is no int
        if not ok or (isinstance(value, list) and not all(isinstance(x, str) for x in value)):
            raise ValueError(f"{where}: {key} is {json.dumps(value)}, not {said}")
    if entry["kind"] not in KINDS:
        raise ValueError(f"{where}: kind {entry['kind']!r} is not one of {', '.join(KINDS)}")
    for key in ("levels", "graph_levels", "gpu_levels"):
        if bad := [lv for lv in entry.get(key, []) if lv not in LEVEL_ORDER]:
            raise ValueError(f"{where}: {key}: unknown level(s) {', '.join(bad)}; levels are {', '.join(LEVEL_ORDER)}")
    return Impl(**entry)


def load_registry(path: Path) -> list[Impl]:
    """Implementations from a JSON list of objects with Impl's field names (those without a default
    required); ValueError, naming the file, where it cannot be read or is not such a list."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(doc, list) or not doc:
        raise ValueError(f"{path}: not a JSON list of implementations")
    try:
        return [_entry(k, entry) for k, entry in enumerate(doc)]
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
