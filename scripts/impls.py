"""The implementations the benchmark harness knows: how to build, run and describe each.

Every one speaks the contract's command line and JSON Lines (docs/contract.md §4-§5).
`DEFAULT` lists this project's Codon program, its ports and the peers; a JSON file of the
same fields (see `load_registry`) replaces it, which is how the harness's own tests point
it at small fixture programs.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LEVELS = ["v0", "v1", "v2", "v3", "v4"]
BASELINES = ["fused", "fused-simd"]
ALL_LEVELS = LEVELS + BASELINES
# Contract §2: the levels summed in index order agree within 1e-12; the others within 1e-9.
SEQUENTIAL = {"v0", "v1", "v2", "fused"}


@dataclass(frozen=True)
class Impl:
    """One implementation of the contract, as the harness builds, checks and times it."""
    name: str                        # the contract's `impl` (codon, c, zig, rust, python, numpy, ...)
    argv: list[str]                  # command, relative to the repository root; {python} = this
                                     # Python, {build} = the build directory
    kind: str                        # "codon", "port" or "peer"
    label: str                       # how the report describes it
    levels: list[str]                # levels it may have (each is probed before timing)
    target: str | None = None        # make target that builds it ({build} as in argv)
    module: str | None = None        # Python package it needs (peers): absent means skipped
    slow: bool = False               # interpreted: timed at --python-iters, not --iters
    compiler: list[str] = field(default_factory=list)   # Makefile variable + args printing its version
    flags: list[str] = field(default_factory=list)      # Makefile variables holding its build flags
    autograd: bool = True            # False for a formula baseline (no tape at all)

    def command(self, build: str = "build") -> list[str]:
        """argv with its placeholders filled in and relative paths made absolute."""
        out = []
        for a in self.argv:
            a = a.replace("{python}", sys.executable).replace("{build}", build)
            out.append(str(ROOT / a) if "/" in a and not Path(a).is_absolute() else a)
        return out

    def make_target(self, build: str = "build") -> str | None:
        """The make target, with {build} filled in."""
        return self.target.replace("{build}", build) if self.target else None


DEFAULT: list[Impl] = [
    Impl("codon", ["{build}/autograd"], "codon", "Codon (this project)", ALL_LEVELS,
         target="{build}/autograd", compiler=["CODON", "--version"], flags=["CODON_FLAGS"]),
    Impl("c", ["{build}/autograd-c"], "port", "C port", ALL_LEVELS,
         target="{build}/autograd-c", compiler=["CC", "--version"], flags=["C_FLAGS", "C_LIBS"]),
    Impl("zig", ["{build}/autograd-zig"], "port", "Zig port", ALL_LEVELS,
         target="{build}/autograd-zig", compiler=["ZIG", "version"], flags=["ZIG_FLAGS"]),
    Impl("rust", ["{build}/autograd-rust"], "port", "Rust port", ALL_LEVELS,
         target="{build}/autograd-rust", compiler=["RUSTC", "--version"], flags=["RUST_FLAGS"]),
    Impl("python", ["{python}", "ports/python/autograd.py"], "port", "CPython port",
         ["v0", "v1", "v2", "fused"], slow=True),
    Impl("numpy", ["{python}", "peers/numpy_peer.py"], "peer",
         "NumPy peer (formula baseline, not an autograd)", ["fused-simd"], module="numpy",
         autograd=False),
    Impl("jax", ["{python}", "peers/jax_peer.py"], "peer",
         "JAX peer (autograd: jit(vmap(value_and_grad)))", ["v3"], module="jax"),
    Impl("torch", ["{python}", "peers/torch_peer.py"], "peer",
         "PyTorch peer (autograd: torch.autograd, CPU)", ["v3"], module="torch"),
]


def load_registry(path: Path) -> list[Impl]:
    """Implementations from a JSON list of objects with Impl's field names."""
    return [Impl(**entry) for entry in json.loads(path.read_text())]
