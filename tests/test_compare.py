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


TREES = ROOT / "scripts" / "compare_trees.py"


def checkout(tmp_path: Path, name: str, ns: dict[str, int]) -> Path:
    """A stand-in checkout: a build folder, and tools/fake.py running the fixture at `ns[impl]` ns a sample."""
    tree = tmp_path / name
    (tree / "build").mkdir(parents=True)
    (tree / "tools").mkdir()
    (tree / "tools" / "fake.py").write_text(
        "import os, sys\n"
        f"NS = {ns!r}\n"
        "impl = next(a.split('=', 1)[1] for a in sys.argv if a.startswith('impl='))\n"
        f"os.execv(sys.executable, [sys.executable, {str(ROOT / 'tests/fixtures/fake_impl.py')!r}, sys.argv[1],\n"
        "          f'ns={NS[impl]}', *sys.argv[2:]])\n")
    return tree


def entry(name: str, **fields) -> dict:
    return {"name": name, "argv": ["{python}", "tools/fake.py", "good", f"impl={name}"], "kind": "port",
            "label": name, "levels": ["v2", "fused"], "graph_levels": [], **fields}


@pytest.mark.slow   # compare.py times its pairs end to end, for each implementation
def test_trees_compare_every_level_of_each_implementation(tmp_path):
    """compare_trees.py runs each checkout's own program (its build, its sources) at every level the registry
    gives it, says which cells read slower, and leaves out the peers and what cannot run."""
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps([entry("fast"), entry("same"), entry("slower"), entry("peer", kind="peer"),
                                    entry("absent", program="no-such-program-anywhere")]))
    old = checkout(tmp_path, "old", {"fast": 100, "same": 100, "slower": 100, "peer": 100, "absent": 100})
    new = checkout(tmp_path, "new", {"fast": 50, "same": 100, "slower": 150, "peer": 100, "absent": 100})
    proc = subprocess.run([sys.executable, str(TREES), "--old", str(old), "--new", str(new), "--registry",
                           str(registry), "--pairs", "4", "--min-time", "0.001", "--json-dir", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    reads = {path.stem: {r["level"]: r["read"] for r in json.loads(path.read_text())["rows"]}
             for path in (tmp_path / "out").glob("*.json")}
    assert reads == {"fast-softplus": {"v2": "B faster", "fused": "B faster"},
                     "same-softplus": {"v2": "tie", "fused": "tie"},
                     "slower-softplus": {"v2": "B slower", "fused": "B slower"}}
    assert f"{old / 'tools/fake.py'}" in proc.stdout and f"{new / 'tools/fake.py'}" in proc.stdout
    assert "skip: absent (no-such-program-anywhere not found)" in proc.stdout and "== peer" not in proc.stdout
    assert proc.stdout.splitlines()[-1] == ("slower (B over A, the interval above 1.00): slower softplus v2 1.500 "
                                            "[1.500, 1.500] (4 pairs); slower softplus fused 1.500 [1.500, 1.500] "
                                            "(4 pairs)")


def test_trees_bad_usage_is_one_error_line(tmp_path):
    """A checkout without a build folder, the same checkout twice, an unknown implementation: exit 2 and one
    error line, before anything runs."""
    built = tmp_path / "built"
    (built / "build").mkdir(parents=True)
    for args in (["--old", str(tmp_path)], ["--old", str(built), "--new", str(built)],
                 ["--old", str(built), "--impls", "codon,cobol"]):
        proc = subprocess.run([sys.executable, str(TREES), *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert proc.stderr.strip().splitlines()[-1].startswith("compare_trees.py: error: "), (args, proc.stderr)
        assert proc.stdout == "", args
