"""The Cython port's own checks, beside the parity tests every port gets (test_ports.py): its C-level
input stream (ports/cython/core/rng.pxd, which every level inlines) against the CPython port's
(ports/python/core/rng.py), draw for draw."""
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


def test_input_stream_is_the_cpython_ports():
    proc = subprocess.run(["make", "-s", f"BUILD={BUILD}", f"{BUILD}/cython/autograd.py"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if not (ROOT / BUILD / "cython" / "autograd.py").exists():
        pytest.skip(proc.stdout.strip())
    proc = subprocess.run([sys.executable, "-c", CHECK, str(ROOT / "ports/python/core/rng.py")],
                          cwd=ROOT / BUILD / "cython", capture_output=True, text=True, timeout=60)
    assert proc.stdout == "ok\n", proc.stderr
