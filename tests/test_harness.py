"""The benchmark harness itself (scripts/bench.py, scripts/report.py) and the peers' command line.

The harness is pointed at small fixture programs (tests/fixtures/fake_impl.py) through a
registry file: a wrong one must be refused and never timed, a hanging one killed at the
timeout, a crashing one reported, while the good one beside them is still timed. None of
this needs the peers' libraries or matplotlib; tests that do skip when they are absent.
"""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reference

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "scripts" / "bench.py"
REPORT = ROOT / "scripts" / "report.py"
FIXTURES = ROOT / "tests" / "fixtures"
PEERS = {"numpy": ROOT / "peers" / "numpy_peer.py", "jax": ROOT / "peers" / "jax_peer.py",
         "torch": ROOT / "peers" / "torch_peer.py"}
PEER_LEVEL = {"numpy": "fused-simd", "jax": "v3", "torch": "v3"}

sys.path.insert(0, str(ROOT / "scripts"))
import bench  # noqa: E402


def registry(tmp_path: Path, *modes: str) -> Path:
    """A registry file of fake implementations, one per mode, named after it."""
    entries = [{"name": m, "argv": ["{python}", "tests/fixtures/fake_impl.py", m], "kind": "port",
                "label": f"fixture ({m})", "levels": ["v2", "v3"]} for m in modes]
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(entries))
    return path


def run_bench(tmp_path: Path, *modes: str, extra: tuple[str, ...] = (), env: dict | None = None,
              timeout: float = 120) -> tuple[subprocess.CompletedProcess, dict | None]:
    """bench.py over the fake implementations at small sizes; its exit, output and raw file."""
    args = [sys.executable, str(BENCH), "--registry", str(registry(tmp_path, *modes)), "--no-build",
            "--results-dir", str(tmp_path / "results"), "--iters", "3000", "--verify-iters", "1000",
            "--repeats", "2", "--timeout", "20", *extra]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, **(env or {})})
    files = sorted((tmp_path / "results" / "raw").glob("*.json"))
    return proc, (json.loads(files[-1].read_text()) if files else None)


def result(doc: dict, impl: str, level: str = "v2") -> dict:
    """The raw file's entry for one pair."""
    return next(r for r in doc["results"] if (r["impl"], r["level"]) == (impl, level))


# --- verification before timing --------------------------------------------------------------

def test_good_implementation_is_verified_and_timed(tmp_path):
    proc, doc = run_bench(tmp_path, "good")
    assert proc.returncode == 0, proc.stderr
    r = result(doc, "good")
    assert r["status"] == "ok" and len(r["runs"]) == 2
    assert r["iters"] == 3000 and r["verify"]["iters"] == 1000
    assert r["verify"]["max_rel_diff"] == 0.0
    assert r["min_s"] <= r["median_s"] <= r["max_s"]
    assert r["ns_per_iter"] == pytest.approx(r["median_s"] * 1e9 / 3000)
    assert r["ratio_to_fastest"] == 1.0
    assert r["sums"] == list(reference.run(42, 3000))
    # A level the program does not have is noted as absent, not failed.
    assert result(doc, "good", "v3")["status"] == "absent"
    assert "[verify" in proc.stderr and "[time" in proc.stderr          # progress is shown


def test_wrong_sums_are_refused_with_the_numbers_and_never_timed(tmp_path):
    calls = tmp_path / "calls.log"
    proc, doc = run_bench(tmp_path, "wrong", "good", env={"FAKE_IMPL_LOG": str(calls)})
    assert proc.returncode == 0                                          # reported; the rest went on
    r = result(doc, "wrong")
    assert r["status"] == "failed" and r["runs"] == []
    want = reference.run(42, 1000)
    assert "wrong sums" in r["reason"] and repr(want.f) in r["reason"]
    assert "FAILED" in proc.stdout and "wrong v2" in proc.stdout
    timed = [ln for ln in calls.read_text().splitlines() if ln.startswith("wrong") and "--iters 3000" in ln]
    assert timed == []                                                   # never timed
    assert result(doc, "good")["status"] == "ok"
    strict, _ = run_bench(tmp_path, "wrong", extra=("--strict",))
    assert strict.returncode == 1


def test_timed_runs_are_checked_against_each_other(tmp_path):
    proc, doc = run_bench(tmp_path, "drift", "good")
    r = result(doc, "drift")
    assert r["status"] == "failed" and "timed run 1 at N=3000" in r["reason"]
    assert result(doc, "good")["status"] == "ok"


def test_a_hanging_implementation_times_out(tmp_path):
    pids = tmp_path / "pids"
    start = time.monotonic()
    proc, doc = run_bench(tmp_path, "hang", "good", extra=("--timeout", "2"),
                          env={"FAKE_IMPL_PIDS": str(pids)}, timeout=60)
    assert time.monotonic() - start < 30
    r = result(doc, "hang")
    assert r["status"] == "failed" and "timed out after 2 s" in r["reason"]
    assert result(doc, "good")["status"] == "ok"
    # The hung program's own child was killed with it (its whole process group).
    grandchild = int(pids.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{grandchild}").exists() \
            and "zombie" not in Path(f"/proc/{grandchild}/status").read_text().lower():
        time.sleep(0.1)
    assert not Path(f"/proc/{grandchild}").exists() or \
        "zombie" in Path(f"/proc/{grandchild}/status").read_text().lower()


def test_a_crashing_implementation_is_reported(tmp_path):
    proc, doc = run_bench(tmp_path, "crash", "garbage", "good")
    assert "crashed (SIGABRT)" in result(doc, "crash")["reason"]
    assert "bad output" in result(doc, "garbage")["reason"]
    assert result(doc, "good")["status"] == "ok"
    assert "FAILED   crash v2" in proc.stdout


def test_a_missing_program_is_skipped(tmp_path):
    entries = [{"name": "ghost", "argv": ["build/no-such-program"], "kind": "port", "label": "missing",
                "levels": ["v2"]},
               {"name": "good", "argv": ["{python}", "tests/fixtures/fake_impl.py", "good"], "kind": "port",
                "label": "good", "levels": ["v2"]}]
    path = tmp_path / "reg.json"
    path.write_text(json.dumps(entries))
    proc = subprocess.run([sys.executable, str(BENCH), "--registry", str(path), "--no-build", "--ci",
                           "--results-dir", str(tmp_path / "r"), "--iters", "2000", "--verify-iters", "500",
                           "--repeats", "1"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr               # skipped, not failed
    assert "skipped  ghost" in proc.stdout and "bench-ci: passed" in proc.stdout


# --- results file ----------------------------------------------------------------------------

def test_an_interrupted_run_leaves_no_results_file(tmp_path):
    args = [sys.executable, str(BENCH), "--registry", str(registry(tmp_path, "slow")), "--no-build",
            "--results-dir", str(tmp_path / "results"), "--iters", "2000", "--verify-iters", "500",
            "--repeats", "100"]
    child = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in child.stderr:                                            # wait until timing has begun
        if line.startswith("[time"):
            break
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130
    assert "no results file written" in err
    leftovers = list((tmp_path / "results").rglob("*")) if (tmp_path / "results").exists() else []
    assert [p for p in leftovers if p.is_file()] == []


def test_write_atomic_never_leaves_half_a_file(tmp_path, monkeypatch):
    target = tmp_path / "raw" / "run.json"
    bench.write_atomic(target, '{"old": true}\n')
    assert json.loads(target.read_text()) == {"old": True}

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        bench.write_atomic(target, '{"new": true, "padding": "' + "x" * 100_000 + '"}\n')
    assert json.loads(target.read_text()) == {"old": True}               # the old file, whole
    assert [p.name for p in target.parent.iterdir()] == ["run.json"]     # no temporary left


def test_raw_file_records_the_machine_and_config(tmp_path):
    _, doc = run_bench(tmp_path, "good")
    assert doc["generated_by"] == "scripts/bench.py" and doc["schema"] == bench.SCHEMA
    m = doc["machine"]
    for key in ("cpu", "logical_cpus", "os", "python", "git_commit", "date", "load_average_start"):
        assert key in m
    assert doc["config"]["repeats"] == 2 and doc["config"]["iters"] == 3000
    assert doc["implementations"][0]["version"] == "autograd (good) fixture"


def test_parse_record_follows_the_contract():
    line = json.dumps({"impl": "c", "level": "v2", "iters": 5, "seed": 42, "threads": 1, "seconds": 0.5,
                       "ns_per_iter": 1e8, "sum_f": 1.0, "sum_dx": 2.0, "sum_dy": 3.0})
    assert bench.parse_record(line + "\n", "c", "v2", 5, 42)["sum_dy"] == 3.0
    with pytest.raises(ValueError, match="impl is 'c', expected 'rust'"):
        bench.parse_record(line, "rust", "v2", 5, 42)
    with pytest.raises(ValueError, match="iters"):
        bench.parse_record(line, "c", "v2", 6, 42)
    record = json.loads(line)
    reordered = {"level": record.pop("level"), **record}
    with pytest.raises(ValueError, match="keys"):
        bench.parse_record(json.dumps(reordered), "c", "v2", 5, 42)
    with pytest.raises(ValueError, match="finite"):
        bench.parse_record(line.replace("3.0", "NaN"), "c", "v2", 5, 42)
    with pytest.raises(ValueError, match="one JSON line"):
        bench.parse_record(line + "\n" + line, "c", "v2", 5, 42)


def test_budgets_pass_breach_and_skip():
    results = [{"impl": "codon", "level": "v2", "status": "ok", "min_ns_per_iter": 60.0},
               {"impl": "c", "level": "v2", "status": "ok", "min_ns_per_iter": 50.0},
               {"impl": "codon", "level": "v3", "status": "ok", "min_ns_per_iter": 30.0}]
    lines, breaches = bench.check_budgets(results, bench.BUDGETS)
    lines = [" ".join(ln.split()) for ln in lines]
    assert breaches == 1                                                 # v3 only 2x faster than v2
    assert any(ln.startswith("ok") and "codon v2 / c v2 = 1.200" in ln for ln in lines)
    assert any(ln.startswith("BREACH") and "codon v3 / codon v2" in ln for ln in lines)
    assert any(ln.startswith("skip") and "zig v2" in ln for ln in lines)


def test_bench_times_the_real_codon_program(tmp_path, codon):
    proc = subprocess.run([sys.executable, str(BENCH), "--impls", "codon", "--levels", "v2,v3", "--no-build",
                           "--results-dir", str(tmp_path), "--iters", "20000", "--repeats", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(next((tmp_path / "raw").glob("*.json")).read_text())
    assert {(r["impl"], r["level"], r["status"]) for r in doc["results"]} == {("codon", "v2", "ok"),
                                                                            ("codon", "v3", "ok")}
    assert result(doc, "codon")["sums"] == list(reference.run(42, 20000))


# --- report ----------------------------------------------------------------------------------

def make_report(tmp_path: Path, *extra: str) -> str:
    proc = subprocess.run([sys.executable, str(REPORT), str(FIXTURES / "bench-small.json"), "--out",
                           str(tmp_path), *extra], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return (tmp_path / "README.md").read_text()


def table_row(text: str, heading: str, name: str) -> list[str]:
    """The cells of the row starting with `name` in the table under `heading`."""
    section = text.split(heading, 1)[1]
    row = next(ln for ln in section.splitlines() if ln.startswith(f"| {name} "))
    return [c.strip() for c in row.strip("|").split("|")][1:]


def test_report_from_a_fixture(tmp_path):
    text = make_report(tmp_path, "--no-charts")
    first = text.splitlines()[0]
    assert first.startswith("<!-- Generated by `make bench`") and "do not edit" in first
    assert "tests/fixtures/bench-small.json" in first
    # ns/iter (median), normalized to the fastest, the ladder and the overhead, from the fixture.
    assert table_row(text, "## Time per sample", "codon") == ["600.00", "300.00", "60.00", "25.00", "15.00",
                                                              "50.00", "20.00"]
    assert table_row(text, "## Normalized", "codon")[:3] == ["1.20", "1.20", "1.20"]
    assert table_row(text, "## Normalized", "c")[0] == "**1.00**"
    assert table_row(text, "## The ladder", "c")[1:3] == ["250.00 (2.0x)", "50.00 (10.0x)"]
    assert table_row(text, "## Tape overhead", "codon") == ["1.20", "1.25", "2.50"]
    assert table_row(text, "## Relative to C v2", "codon")[2] == "1.20"
    # Peers are labelled; NumPy as a formula baseline; failures and skips are listed with reasons.
    assert "| numpy (peer, formula baseline, not an autograd) |" in text
    assert "| torch (peer, autograd) |" in text
    assert "**python v1** failed" in text and "relative difference 0.000396" in text
    assert "**jax** skipped: jax is not installed" in text
    assert "Fixture CPU 9000" in text and "`-O3`" in text
    assert "![" not in text                                              # --no-charts
    # The same input gives the same file.
    assert make_report(tmp_path, "--no-charts") == text


def test_report_charts(tmp_path):
    pytest.importorskip("matplotlib")
    text = make_report(tmp_path)
    for name in ("normalized.png", "ladder.png"):
        assert f"]({name})" in text
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_without_raw_files_says_so(tmp_path):
    proc = subprocess.run([sys.executable, str(REPORT), "--out", str(tmp_path), "--no-charts"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 1 and "run `make bench` first" in proc.stderr


# --- the peers' command line (no library needed) and answers (skipped without it) ------------

@pytest.mark.parametrize("peer", sorted(PEERS))
@pytest.mark.parametrize("args", [["--iters", "0"], ["--iters", "1e3"], ["--seed", "18446744073709551616"],
                                  ["--json", "--json"], ["--level"], ["--level", "v9"], ["--level=v3"],
                                  ["--eval", "1"], ["--eval", "inf", "1"], ["--eval", "1", "2", "--iters", "3"],
                                  ["--help", "--json"], ["-h"], ["--threads", "1025"]])
def test_peer_bad_input(peer, args):
    proc = subprocess.run([sys.executable, str(PEERS[peer]), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_peer_help_version_and_missing_level(peer):
    help_ = subprocess.run([sys.executable, str(PEERS[peer]), "--help"], capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0 and help_.stdout.startswith("usage:") and help_.stderr == ""
    version = subprocess.run([sys.executable, str(PEERS[peer]), "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.returncode == 0 and f"({peer} peer)" in version.stdout
    lacking = subprocess.run([sys.executable, str(PEERS[peer]), "--level", "v0"], capture_output=True, text=True,
                             timeout=60)
    assert lacking.returncode == 2 and lacking.stdout == ""
    assert lacking.stderr == "error: level v0 is not implemented by this program\n"


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_peer_known_answers(peer):
    if importlib.util.find_spec(peer) is None:
        pytest.skip(f"{peer} is not installed (make peers)")
    for n in (3, 1000):
        proc = subprocess.run([sys.executable, str(PEERS[peer]), "--iters", str(n), "--json"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        (rec,) = [json.loads(ln) for ln in proc.stdout.splitlines()]
        assert list(rec) == bench.KEYS
        assert (rec["impl"], rec["level"], rec["iters"], rec["threads"]) == (peer, PEER_LEVEL[peer], n, 1)
        for got, want in zip(bench.sums_of(rec), reference.KNOWN_SUMS[n]):
            assert reference.rel_diff(got, float(want)) <= reference.BATCHED_RTOL
    x, y = 0.75, -1.5
    proc = subprocess.run([sys.executable, str(PEERS[peer]), "--eval", str(x), str(y), "--json"],
                          capture_output=True, text=True, timeout=300)
    rec = json.loads(proc.stdout)
    for got, want in zip((rec["f"], rec["dfdx"], rec["dfdy"]), reference.point(x, y)):
        assert reference.rel_diff(got, want) <= 1e-14
