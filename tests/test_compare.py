"""scripts/compare.py over stand-in programs (tests/fixtures/fake_impl.py): the ratio of adjacent runs,
its reading, and the check that the two programs' sums are identical."""
from __future__ import annotations

import json
import os
import re
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
    """A missing program, a command whose quotes do not close (shlex's ValueError was a traceback), an unknown
    level, a value every program refuses, an infinite --min-time, or a --json that cannot be written: exit 2 and
    one `error:` line before anything runs, not a traceback at the first run or after the last."""
    log = tmp_path / "calls.log"
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for args in (["--b", str(tmp_path / "no-such-program")], ["--b", f"{FAKE} 'good"], ["--levels", "v2,v9"],
                 ["--ops", "1000001"], ["--threads", "1025"], ["--pairs", "0"], ["--min-time", "inf"],
                 ["--json", str(tmp_path / "no-folder" / "x.json")],
                 ["--json", str(folder)]):
        proc = subprocess.run([sys.executable, str(ROOT / "scripts/compare.py"), "--a", f"{FAKE} good",
                               "--b", f"{FAKE} good", "--levels", "v2", *args],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "FAKE_IMPL_LOG": str(log)})
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert proc.stderr.strip().splitlines()[-1].startswith("compare.py: error: "), (args, proc.stderr)
        assert not log.exists(), args


def zero_clock(path: Path) -> Path:
    """A stand-in program whose clock is stuck: every softplus run reports 0 s, whatever N (no work done)."""
    path.write_text(f"#!{sys.executable}\n"
                    "import json, sys\n"
                    "flags = [a for a in sys.argv[1:] if a != '--json']\n"
                    "o = dict(zip(flags[::2], flags[1::2]))\n"
                    "print(json.dumps({'impl': 'zero', 'workload': 'softplus', 'level': o['--level'], "
                    "'iters': int(o['--iters']), 'seed': int(o.get('--seed', 42)), 'threads': 1, 'seconds': 0.0, "
                    "'cpu_seconds': 0.0, 'ns_per_iter': 0.0, 'sum_f': 1.0, 'sum_dx': 1.0, 'sum_dy': 1.0}))\n")
    path.chmod(0o755)
    return path


def test_a_program_that_prints_no_record_is_one_error_line(tmp_path):
    """--a /bin/echo (its arguments back, not JSON) was a JSONDecodeError traceback at the first run: it is a
    failed run, as one that exits non-zero is, one error line and exit 1."""
    for program in ("/bin/echo", "/bin/true", f"{FAKE} garbage"):
        proc = subprocess.run([sys.executable, str(ROOT / "scripts/compare.py"), "--a", program, "--b", program,
                               "--levels", "v2", "--workloads", "softplus"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, (program, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith("error: ") and "--level v2 --iters 1 --seed 42 --json: bad output: " in line, line


def test_a_clock_stuck_at_zero_stops_calibrating_at_the_most_n(tmp_path):
    """A program reporting 0 s for every run was calibrated for ever (compare.py's copy of the loop had no
    bound); harness.calibrate.calibration stops at the programs' most N, and compare.py says so."""
    zero = str(zero_clock(tmp_path / "zero"))
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/compare.py"), "--a", zero, "--b", zero,
                           "--levels", "v2", "--workloads", "softplus"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (f"error: {zero}: softplus v2 still lasts 0 s at N = "
                                                    "1,000,000,000,000, the most a program takes (contract §4), "
                                                    "short of --min-time 0.1")


def test_calibration_multiplies_n_up_to_the_bound_and_stops_there():
    """The one calibration rule: N grows by the power of two a run's time says is missing (at most 1024 at
    once), and a clock stuck at 0 ends at MAX_ITERS instead of running for ever."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from harness.calibrate import calibration
    from harness.contract import MAX_ITERS
    n, rec, steps = calibration(lambda n: {"seconds": n * 1e-6}, 1, 0.1)
    assert (n, rec, [s for s, _ in steps]) == (131072, {"seconds": 0.131072}, [1, 1024, 131072])
    n, rec, steps = calibration(lambda n: {"seconds": 0.0}, 1, 0.1)
    assert n == MAX_ITERS and rec == {"seconds": 0.0} and len(steps) == 5
    n, rec, steps = calibration(lambda n: None if n > 1 else {"seconds": 0.0}, 1, 0.1)
    assert (n, rec, steps) == (1024, None, [[1, 0.0]])


# Every command line under scripts/.
SCRIPTS = ["compare.py", "compare_trees.py", "modes.py", "bench.py", "sweep.py", "run.py", "report.py", "peak_rss.py",
           "codon_needs.py", "ci_trials.py"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_option_says_what_it_is(script):
    """--help gives every option a line of help (compare.py's --workloads, --seed and --timeout, modes.py's
    --level, peak_rss.py's --levels had none), and the description is whole sentences."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    usage, _, rest = out.partition("\n\n")
    description, _, options = rest.partition("options:")
    lines = options.splitlines()
    bare = [ln.split()[0].rstrip(",") for k, ln in enumerate(lines) if ln.startswith("  -")
            and len(re.split(r"\s{2,}", ln.strip())) < 2 and not re.match(r" {6,}\S", (lines + [""])[k + 1])]
    assert bare == [], script
    if not description.startswith(("positional arguments:", "usage")):
        assert description.strip().endswith((".", ")", "?")), (script, description)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [[script, "--help"] for script in SCRIPTS]
                         + [["codon_needs.py"], ["report.py", "--sweep", "--no-charts"]])
def test_standard_output_that_cannot_be_written_is_one_error_line(args):
    """Output to a full disk (/dev/full) was an OSError traceback, or Python's "Exception ignored" at exit with
    status 120: it is one error line and exit 1, as the programs' is (run_main)."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, str(ROOT / "scripts" / args[0]), *args[1:]], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 1, (args, proc.stderr)
    assert proc.stderr == "error: cannot write to standard output: No space left on device\n", (args, proc.stderr)


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
