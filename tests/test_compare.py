"""scripts/compare.py over stand-in programs (tests/fixtures/fake_impl.py): the ratio of adjacent runs,
its reading, and the check that the two programs' sums are identical."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKE = f"{sys.executable} {ROOT / 'tests/fixtures/fake_impl.py'}"


def compare(tmp_path: Path, a: str, b: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "compare.json"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/compare.py"), "--a", f"{FAKE} {a}",
                           "--b", f"{FAKE} {b}", "--workloads", "softplus", "--levels", "v2", "--pairs", "6",
                           "--min-time", "0.001", "--json", str(out), *extra],
                          capture_output=True, text=True, timeout=120)
    return proc, (json.loads(out.read_text()) if out.exists() else {})


@pytest.mark.slow   # compare.py times its pairs end to end
def test_a_faster_b_reads_faster_with_every_pair_counted(tmp_path):
    proc, doc = compare(tmp_path, "good ns=100", "good ns=50")
    assert proc.returncode == 0, proc.stderr
    (row,) = doc["rows"]
    assert row["ratios"] == [0.5] * 6 and row["interval"] == [0.5, 0.5] and row["read"] == "B faster"
    assert "softplus  v2" in proc.stdout and "B faster" in proc.stdout


@pytest.mark.slow   # compare.py times its pairs end to end
def test_equal_programs_tie(tmp_path):
    proc, doc = compare(tmp_path, "good ns=100", "good ns=100")
    assert proc.returncode == 0 and doc["rows"][0]["read"] == "tie"


@pytest.mark.slow   # compare.py times its pairs end to end
def test_different_digits_fail_unless_the_contract_tolerance_is_asked_for(tmp_path):
    proc, doc = compare(tmp_path, "good ns=100", "wrong ns=100")
    assert proc.returncode == 1 and "FAILED   softplus v2" in proc.stdout and "sums differ" in proc.stdout
    # 1e-6 apart is past the contract's tolerances too.
    proc, _ = compare(tmp_path, "good ns=100", "wrong ns=100", "--contract-tolerance")
    assert proc.returncode == 1


def test_bad_usage_is_one_error_line_before_any_run(tmp_path):
    """A missing program, an unknown level, a value every program refuses, or a --json that cannot be written:
    exit 2 and one `error:` line before anything runs, not a traceback at the first run or after the last."""
    log = tmp_path / "calls.log"
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for args in (["--b", str(tmp_path / "no-such-program")], ["--levels", "v2,v9"], ["--ops", "1000001"],
                 ["--threads", "1025"], ["--pairs", "0"], ["--json", str(tmp_path / "no-folder" / "x.json")],
                 ["--json", str(folder)]):
        proc = subprocess.run([sys.executable, str(ROOT / "scripts/compare.py"), "--a", f"{FAKE} good",
                               "--b", f"{FAKE} good", "--levels", "v2", *args],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "FAKE_IMPL_LOG": str(log)})
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert proc.stderr.strip().splitlines()[-1].startswith("compare.py: error: "), (args, proc.stderr)
        assert not log.exists(), args
