"""What a fresh machine has: a C compiler, make and python3, and no C++ compiler. Codon links each program
by running `g++`; where there is none, the Makefile gives it one that runs the C compiler."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD, ROOT, PREBUILT


def path_without_gxx(tmp_path: Path) -> str:
    """A PATH with every program of the usual PATH but g++ and c++ (each a symlink in one folder)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = Path(folder) / name
            if name.startswith(("g++", "c++", "x86_64-linux-gnu-g++")) or (bin_dir / name).exists():
                continue
            if os.access(target, os.X_OK) and not target.is_dir():
                (bin_dir / name).symlink_to(target)
    return str(bin_dir)


@pytest.mark.slow
def test_codon_programs_link_without_gxx(tmp_path):
    if PREBUILT or shutil.which("cc") is None:
        pytest.skip("needs make and a C compiler")
    path = path_without_gxx(tmp_path)
    assert shutil.which("g++", path=path) is None and shutil.which("cc", path=path)
    build = tmp_path / "build"
    proc = subprocess.run(["make", f"BUILD={build}", f"{build}/autograd"], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, env={**os.environ, "PATH": path})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    runs = [json.loads(subprocess.run([str(program), "--level", "v2", "--iters", "1000", "--json"],
                                      capture_output=True, text=True, check=True, timeout=60).stdout)
            for program in (build / "autograd", ROOT / BUILD / "autograd")]
    assert {k: runs[0][k] for k in ("sum_f", "sum_dx", "sum_dy")} == \
        {k: runs[1][k] for k in ("sum_f", "sum_dx", "sum_dy")}
