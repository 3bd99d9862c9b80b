"""The Cython port's own checks, beside the parity tests every port gets (test_ports.py): its C-level
input stream (ports/cython/core/rng.pxd, which every level inlines) against the CPython port's
(ports/python/core/rng.py), draw for draw; and that graph v3's module calls libmvec's vector exp and log1p,
not the scalar ones."""
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, BUILD

CHECK = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("python_rng", sys.argv[1])
python_rng = importlib.util.module_from_spec(spec); spec.loader.exec_module(python_rng)
from core.rng import py_draw, py_sample          # the Cython module, from the build folder (sys.path[0])
for seed in (0, 42, 7, 2**64 - 1):
    for k in (1, 2, 3, 1000, 2**40 + 1, 2**63 - 1):
        assert py_draw(seed, k) == python_rng.draw(seed, k), (seed, k)
    for i in (0, 1, 2, 499, 10**9):
        assert py_sample(seed, i) == python_rng.sample(seed, i), (seed, i)
print("ok")
"""


def built_port():
    """The Cython port's build folder, made (skipped, with make's reason, where Cython is missing)."""
    proc = subprocess.run(["make", "-s", f"BUILD={BUILD}", f"{BUILD}/cython/autograd.py"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if not (ROOT / BUILD / "cython" / "autograd.py").exists():
        pytest.skip(proc.stdout.strip())
    return ROOT / BUILD / "cython"


def test_input_stream_is_the_cpython_ports():
    built_port()
    proc = subprocess.run([sys.executable, "-c", CHECK, str(ROOT / "ports/python/core/rng.py")],
                          cwd=ROOT / BUILD / "cython", capture_output=True, text=True, timeout=60)
    assert proc.stdout == "ok\n", proc.stderr


def test_graph_v3_module_calls_no_scalar_exp_or_log1p():
    """gcc unrolls graph v3's 16-lane loops completely before its vectorizer runs, and its calls then become
    the scalar exp and log1p, whose last bits differ from libmvec's now and then and which take longer: the
    Makefile builds graph/simd with --param=max-completely-peel-times=1 (ports/cython/README.md). Without
    it, the module imports glibc's scalar exp and log1p beside the vector exp."""
    if shutil.which("nm") is None:
        pytest.skip("needs nm (Debian package binutils)")
    module = built_port() / "graph" / "simd.so"
    out = subprocess.run(["nm", "-D", "--undefined-only", str(module)], capture_output=True, text=True,
                         check=True).stdout
    imported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    math = {name for name in imported if name.endswith(("_exp", "_log1p")) or name in ("exp", "log1p")}
    if not any(name.startswith("_ZGV") for name in math):
        pytest.skip(f"a build with no libmvec width (imports {sorted(math)})")
    assert {"exp", "log1p"}.isdisjoint(math), sorted(math)
