"""`make run` (scripts/run.py) over a stand-in program (tests/fixtures/fake_impl.py): its "vs v0" column is
computed from the rows it shows, a GPU level the program refuses is a `skip:` line, and the comparison with
the ports that follows the ladder (stand-ins too, beside the program as make builds them)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from run import MAKE_BENCH  # noqa: E402  (the comparison's last line, defined once there)


def fake(path: Path, *settings: str) -> None:
    """A stand-in program at path: the fixture with every level v0-v4 of both workloads, and `settings`."""
    path.write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'tests/fixtures/fake_impl.py'} good "
                    f"levels=v0,v1,v2,v3,v4 graph=yes {' '.join(settings)} \"$@\"\n")
    path.chmod(0o755)


def make_run(tmp_path: Path, *settings: str, args: tuple[str, ...] = (), status: int = 0) -> list[str]:
    """scripts/run.py's output lines over a stand-in Codon program with `settings` (tmp_path/prog; ports
    are what the test put beside it), its runs short."""
    fake(tmp_path / "prog", *settings)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/run.py"), "--program", str(tmp_path / "prog"),
                           "--min-time", "0.001", "--run-time", "0.001", *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == status, proc.stdout + proc.stderr
    return proc.stdout.splitlines()


def comparison_rows(lines: list[str]) -> dict[tuple[str, str], list[str]]:
    """The comparison table's cells by (workload, level): its rows are the ones after its header."""
    start = next(i for i, ln in enumerate(lines) if ln.split()[:3] == ["workload", "level", "N"])
    return {tuple(ln.split()[:2]): ln.split()[3:] for ln in lines[start + 1:]
            if ln.split()[:1] in (["softplus"], ["graph"])}


@pytest.mark.slow
def test_vs_v0_comes_from_the_rows_shown_not_from_the_calibration(tmp_path):
    # The calibrating (JSON) runs report 100 ns per sample at v0 and 20 at the other levels, the shown
    # (text) runs 50 at every level: each shown row is 1.0x the shown v0 row (not 5.0x).
    lines = make_run(tmp_path, "ns=20", "ns_v0=100", "text_ns=50")
    rows = [ln.split() for ln in lines if ln.startswith("good")]
    assert len(rows) == 10 and all(r[3] == "50.00" for r in rows)
    assert [r[4] for r in rows] == ["1.0x"] * 10, lines


@pytest.mark.slow
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


@pytest.mark.parametrize("workload", ["softplus", "graph"])
def test_batch_sizes_sets_each_size_in_a_copy_of_the_source(tmp_path, workload):
    """scripts/batch_sizes.sh's own sed and check, run on a copy of the workload's file at each of its sizes:
    its check was anchored at the end of the line, so a comment after `BATCH: Literal[int] = 256` stopped the
    softplus run at its first copy."""
    text = (ROOT / "scripts" / "batch_sizes.sh").read_text()
    case = re.search(rf"^  {workload}\) sizes=\(([\d ]+)\); name=(\w+); file=([\w/.]+);", text, re.M)
    sizes, name, file = case.group(1).split(), case.group(2), case.group(3)
    steps = "\n".join(ln for ln in text.splitlines() if ln.lstrip().startswith(('sed -i "s/^$name', 'grep -q "^$name')))
    assert steps.count("\n") == 1, steps
    for b in sizes:
        (tmp_path / b).mkdir()
        shutil.copy(ROOT / file, tmp_path / b / Path(file).name)
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", steps.replace('"$tmp/$b/$file"', '"$copy"')],
                              env={**os.environ, "name": name, "b": b, "copy": str(tmp_path / b / Path(file).name)},
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, (workload, b, proc.stderr)
        assert re.search(rf"^{name}: Literal\[int\] = {b}\b", (tmp_path / b / Path(file).name).read_text(), re.M)


@pytest.mark.slow
def test_the_comparison_shows_codon_over_each_port_at_every_level(tmp_path):
    # Codon reports 1,000 ns a sample, C 2,000 (Codon's time over C's: 0.50), Zig 1,000 (a tie, ≈1.00);
    # no Rust is built beside it: a skip line, and the rest goes on.
    fake(tmp_path / "autograd-c", "impl=c", "ns=2000")
    fake(tmp_path / "autograd-zig", "impl=zig", "ns=1000")
    lines = make_run(tmp_path, "ns=1000", args=("--pairs", "1"))
    assert any(ln.startswith("skip: rust: ") and "autograd-rust is not built" in ln for ln in lines), lines
    header = next(ln for ln in lines if ln.startswith("workload"))
    assert header.split() == ["workload", "level", "N", "c", "zig"], header
    rows = comparison_rows(lines)
    assert list(rows) == [(w, lv) for w in ("softplus", "graph") for lv in ("v0", "v1", "v2", "v3", "v4")]
    assert all(cells == ["0.50", "≈1.00"] for cells in rows.values()), rows
    caption = " ".join(lines[lines.index(header) - 2:lines.index(header)])
    assert "below 1.00 Codon is faster" in caption and "1 adjacent pair " in caption and "CPU time" in caption
    assert lines[-1] == MAKE_BENCH


@pytest.mark.slow
def test_a_missing_port_is_a_skip_line_not_a_failure(tmp_path):
    lines = make_run(tmp_path, "ns=1000", args=("--ports", "c,rust"))
    assert sum(ln.startswith("good") for ln in lines) == 10               # the ladder, as before
    assert [ln.split(":")[:2] for ln in lines if ln.startswith("skip: ") and "v5" not in ln] \
        == [["skip", " c"], ["skip", " rust"]], lines
    assert not any(ln.startswith("workload") for ln in lines)               # no table without a port
    assert lines[-1] == MAKE_BENCH


@pytest.mark.slow
def test_a_port_whose_sums_disagree_is_reported_and_not_shown_as_a_ratio(tmp_path):
    # C's graph sums are off by one part in a million (the contract allows 1e-12, 1e-9 batched): its graph
    # cells are FAILED, each with the numbers, and not timed; its softplus cells are compared; exit status 1.
    fake(tmp_path / "autograd-c", "impl=c", "ns=2000", "graph=wrong")
    lines = make_run(tmp_path, "ns=1000", args=("--ports", "c", "--pairs", "1"), status=1)
    rows = comparison_rows(lines)
    assert [rows[("softplus", lv)] for lv in ("v0", "v1", "v2", "v3", "v4")] == [["0.50"]] * 5, rows
    assert [rows[("graph", lv)] for lv in ("v0", "v1", "v2", "v3", "v4")] == [["FAILED"]] * 5, rows
    failed = [ln for ln in lines if ln.startswith("FAILED: ")]
    assert [ln.split()[1:4] for ln in failed] == [["c", "graph", lv] for lv in ("v0", "v1", "v2", "v3", "v4")]
    assert all("sums disagree with Codon's: sum_loss" in ln and "relative difference 1e-06" in ln for ln in failed)
    assert lines[-1] == MAKE_BENCH


@pytest.mark.slow
def test_the_comparison_is_left_out_or_refused_as_asked(tmp_path):
    fake(tmp_path / "autograd-c", "impl=c", "ns=2000")
    lines = make_run(tmp_path, "ns=1000", args=("--no-compare",))
    assert sum(ln.startswith("good") for ln in lines) == 10 and not any("make bench" in ln for ln in lines)
    for bad in (["--ports", "c,fortran"], ["--ports", "python"], ["--ports", "c,c"], ["--pairs", "0"],
                ["--run-time", "0"]):
        proc = subprocess.run([sys.executable, str(ROOT / "scripts/run.py"), "--program", str(tmp_path / "prog"),
                               *bad], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "error: argument" in proc.stderr and not proc.stdout, bad


def test_a_missing_program_or_no_minimum_time_is_bad_usage(tmp_path):
    """`make run` with --program naming nothing was a FileNotFoundError traceback at the first run; a
    --min-time of 0 or less calibrated nothing. Each is one error line and exit 2 before any run."""
    fake(tmp_path / "prog")
    for bad in (["--program", str(tmp_path / "no-such-program")], ["--program", str(tmp_path)],
                ["--program", str(tmp_path / "prog"), "--min-time", "0"]):
        proc = subprocess.run([sys.executable, str(ROOT / "scripts/run.py"), "--no-compare", *bad],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and not proc.stdout, (bad, proc.stderr)
        assert proc.stderr.strip().splitlines()[-1].startswith("run.py: error: "), (bad, proc.stderr)


def test_a_program_that_prints_no_record_or_whose_clock_is_stuck_is_one_error_line(tmp_path):
    """--program /bin/true (no output) was a JSONDecodeError traceback, a program exiting non-zero a
    CalledProcessError one, and one whose every run reports 0 s was calibrated for ever (run.py's copy of
    the loop had no bound). Each is a failed run: one error line and exit 1, the ladder stopped there."""
    from test_compare import zero_clock
    (tmp_path / "fails").write_text("#!/bin/sh\necho 'error: out of sorts' >&2\nexit 3\n")
    (tmp_path / "fails").chmod(0o755)
    zero = zero_clock(tmp_path / "zero")
    for program, said in (("/bin/true", "/bin/true --level v0 --iters 100000 --json: bad output: expected one "
                                        "JSON line, got 0"),
                          (str(tmp_path / "fails"), "--level v0 --iters 100000 --json: exit status 3: error: out of "
                                                    "sorts"),
                          (str(zero), f"{zero}: softplus v0 still lasts 0 s at N = 1,000,000,000,000, the most a "
                                      "program takes (contract §4), short of 0.25 s")):
        proc = subprocess.run([sys.executable, str(ROOT / "scripts/run.py"), "--program", program],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, (program, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith("error: ") and said in line, (program, line)
