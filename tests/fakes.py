"""The harness tests' stand-ins: registry entries running tests/fixtures/fake_impl.py, bench.py run over them at
small sizes, and readers of the raw file it writes (tests/test_bench_*.py, test_budgets.py, test_rawfile.py).

The fixture programs can be wrong, hang, crash, fail to build or report a fixed time per sample (`ns=`), so
calibration and everything computed from times are checked without depending on this machine's noise.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import BUILD, ROOT

BENCH = ROOT / "scripts" / "bench.py"
REPORT = ROOT / "scripts" / "report.py"
FIXTURES = ROOT / "tests" / "fixtures"

sys.path.insert(0, str(ROOT / "scripts"))
from harness import rawfile  # noqa: E402


def fake(mode: str, *settings: str, name: str | None = None, kind: str = "port", levels: tuple = ("v2",),
         **fields) -> dict:
    """A registry entry running tests/fixtures/fake_impl.py in `mode` with key=value settings. The entry
    declares graph levels only when the fixture has the graph workload (a graph= setting other than no)."""
    name = name or mode
    if not any(x.startswith("graph=") and x != "graph=no" for x in settings):
        fields.setdefault("graph_levels", [])
    return {"name": name, "argv": ["{python}", "tests/fixtures/fake_impl.py", mode, f"impl={name}", *settings],
            "kind": kind, "label": f"fixture ({name})", "levels": list(levels), **fields}


def run_bench(tmp_path: Path, *entries: dict | str, extra: tuple[str, ...] = (), env: dict | None = None,
              timeout: float = 120,
              sizes: tuple[str, ...] | None = None) -> tuple[subprocess.CompletedProcess, dict | None]:
    """bench.py over fake implementations (a str is a mode with default settings) at small sizes.

    Returns its exit, output and raw file (None when it wrote none).
    """
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps([fake(e) if isinstance(e, str) else e for e in entries]))
    if sizes is None:
        sizes = ("--iters", "3000", "--verify-iters", "1000", "--repeats", "2", "--timeout", "20")
    args = [sys.executable, str(BENCH), "--registry", str(registry), "--no-build", "--build-dir", BUILD,
            "--results-dir", str(tmp_path / "results"), "--workloads", "softplus", *sizes, *extra]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, **(env or {})})
    files = sorted((tmp_path / "results" / "raw").glob(f"*/*{rawfile.SUFFIX}"))
    return proc, (rawfile.read(files[-1]) if files else None)


def result(doc: dict, impl: str, level: str = "v2", workload: str = "softplus", threads: int | None = None) -> dict:
    """The raw file's entry for one pair (v4: at `threads`, else the one in the main tables)."""
    return next(r for r in doc["results"] if (r["impl"], r["workload"], r["level"]) == (impl, workload, level)
                and (r["threads"] == threads if threads else not r["scan"]))


def timed_calls(log: Path, name: str, iters: int) -> list[str]:
    """The fixture's logged invocations of `name` at N = iters."""
    return [ln for ln in log.read_text().splitlines() if ln.startswith(f"{name} ") and f"--iters {iters} " in ln]


def build_entries(*targets: str) -> list[dict]:
    """Fakes built by tests/fixtures/fake.mk's targets (the program itself always exists)."""
    return [fake("good", name=t, target="{build}/fake-" + t, makefile="tests/fixtures/fake.mk") for t in targets]
