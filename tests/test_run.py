"""`make run` (scripts/run.py) over a stand-in program (tests/fixtures/fake_impl.py): its "vs v0" column is
computed from the rows it shows, and a GPU level the program refuses is a `skip:` line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_run(tmp_path: Path, *settings: str) -> list[str]:
    program = tmp_path / "prog"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'tests/fixtures/fake_impl.py'} good "
                       f"levels=v0,v1,v2,v3,v4 graph=yes {' '.join(settings)} \"$@\"\n")
    program.chmod(0o755)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/run.py"), "--program", str(program),
                           "--min-time", "0.001"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_vs_v0_comes_from_the_rows_shown_not_from_the_calibration(tmp_path):
    # The calibrating (JSON) runs report 100 ns per sample at v0 and 20 at the other levels, the shown
    # (text) runs 50 at every level: each shown row is 1.0x the shown v0 row (not 5.0x).
    lines = make_run(tmp_path, "ns=20", "ns_v0=100", "text_ns=50")
    rows = [ln.split() for ln in lines if ln.startswith("good")]
    assert len(rows) == 10 and all(r[3] == "50.00" for r in rows)
    assert [r[4] for r in rows] == ["1.0x"] * 10, lines


def test_a_refused_gpu_level_is_a_skip_line(tmp_path):
    lines = make_run(tmp_path, "ns=20")
    assert "skip: v5: --level v5 needs a CUDA device and driver: no CUDA driver (a fixture)" in lines
    assert sum(ln.startswith("good") for ln in lines) == 10


def test_the_helper_scripts_build_codon_with_the_makefiles_command():
    """scripts/batch_sizes.sh and v2_inlining.sh take Codon's build command from the Makefile
    (CODON_BUILD: its flags, CPU target and v5's libdevice), never a copy of it."""
    for script in ("batch_sizes.sh", "v2_inlining.sh"):
        text = (ROOT / "scripts" / script).read_text()
        assert "@echo $(CODON_BUILD)" in text and 'eval "$codon_build' in text, script
        assert "codon build" not in text and "-release" not in text, script
