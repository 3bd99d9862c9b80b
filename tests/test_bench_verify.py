"""scripts/bench.py's strictness: every pair is verified before it is timed, and a failure fails the run.

The harness is pointed at small fixture programs (tests/fixtures/fake_impl.py, through tests/fakes.py's
registry files): a wrong one must be refused and never timed, a hanging one killed at the timeout, a crashing
one reported, a failed build fail the run, while the good ones beside them are still timed; each record is
read as the contract states it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BUILD, ROOT
from fakes import BENCH, build_entries, fake, result, run_bench, timed_calls

sys.path.insert(0, str(ROOT / "scripts"))
from harness import contract, oracle, rawfile  # noqa: E402


# --- strict: failures fail the run -----------------------------------------------------------

@pytest.mark.parametrize("gpu", ["yes", "no", "crash"])
def test_a_gpu_level_is_timed_where_there_is_a_device_and_skipped_with_a_line_where_not(tmp_path, gpu):
    proc, doc = run_bench(tmp_path, fake("good", f"gpu={gpu}", gpu_levels=["v5"]))
    has = [r["level"] for r in doc["results"] if r["impl"] == "good"]
    if gpu == "yes":
        assert proc.returncode == 0, proc.stderr
        assert has == ["v2", "v5"] and result(doc, "good", "v5")["status"] == "ok"
    elif gpu == "no":
        assert proc.returncode == 0, proc.stderr
        assert "skip: good v5: no CUDA driver (a fixture)" in proc.stderr.splitlines()
        assert has == ["v2"] and "good v5 not timed: no CUDA driver (a fixture)" in doc["notes"]
    else:
        assert proc.returncode == 1 and "good: GPU probe failed" in proc.stdout + proc.stderr


def test_good_implementation_is_verified_and_timed(tmp_path):
    proc, doc = run_bench(tmp_path, "good")
    assert proc.returncode == 0, proc.stderr
    r = result(doc, "good")
    assert r["status"] == "ok" and len(r["runs"]) == 2
    assert r["iters"] == 3000 and r["verify"][0]["iters"] == 1000
    assert r["verify"][0]["max_rel_diff"] == 0.0
    assert r["min_s"] <= r["ci_low_s"] <= r["median_s"] <= r["ci_high_s"] <= r["max_s"]
    assert r["ns_per_iter"] == pytest.approx(r["median_s"] * 1e9 / 3000)
    assert r["sums"] == list(oracle.run(42, 3000))
    assert "[verify" in proc.stderr and "[time" in proc.stderr          # progress is shown


@pytest.mark.parametrize("strict", [True, False])
def test_a_level_the_registry_declares_and_the_program_refuses_fails_strict_runs(tmp_path, strict):
    proc, doc = run_bench(tmp_path, fake("good", levels=("v2", "v3")), extra=() if strict else ("--no-strict",))
    assert result(doc, "good", "v3")["status"] == "absent" and result(doc, "good")["status"] == "ok"
    assert "FAILED   good softplus v3: the registry declares this level; the program refuses it" in proc.stdout
    assert proc.returncode == (1 if strict else 0)


def test_a_graph_refusal_fails_when_the_registry_lists_graph_levels(tmp_path):
    entries = [fake("good", name="old"), fake("good", name="liar", graph_levels=["v2"])]
    proc, doc = run_bench(tmp_path, *entries, extra=("--workloads", "softplus,graph", "--ops", "10"))
    assert [i["graph"] for i in doc["implementations"]] == ["no", "no"]
    assert "FAILED   liar: refuses --workload graph, which its registry entry lists (v2)" in proc.stdout
    assert "old: refuses" not in proc.stdout and proc.returncode == 1


def test_wrong_sums_fail_the_run_and_are_never_timed(tmp_path):
    calls = tmp_path / "calls.log"
    proc, doc = run_bench(tmp_path, "wrong", "good", env={"FAKE_IMPL_LOG": str(calls)})
    assert proc.returncode == 1                                          # strict by default
    r = result(doc, "wrong")
    assert r["status"] == "failed" and r["runs"] == []
    want = oracle.run(42, 1000)
    assert "wrong sums" in r["reason"] and repr(want.f) in r["reason"]
    assert "FAILED   wrong softplus v2" in proc.stdout
    assert timed_calls(calls, "wrong", 3000) == []                       # never timed
    assert result(doc, "good")["status"] == "ok"                         # the rest went on
    lenient, _ = run_bench(tmp_path, "wrong", extra=("--no-strict",))
    assert lenient.returncode == 0 and "FAILED   wrong" in lenient.stdout


def test_timed_runs_are_checked_against_each_other(tmp_path):
    proc, doc = run_bench(tmp_path, "drift", "good")
    assert proc.returncode == 1
    r = result(doc, "drift")
    assert r["status"] == "failed" and "timed run 1 at N=3000" in r["reason"]
    assert result(doc, "good")["status"] == "ok"


@pytest.mark.slow
def test_a_hanging_implementation_times_out_and_fails_the_run(tmp_path):
    pids = tmp_path / "pids"
    start = time.monotonic()
    proc, doc = run_bench(tmp_path, "hang", "good", extra=("--timeout", "2"),
                          env={"FAKE_IMPL_PIDS": str(pids)}, timeout=60)
    assert time.monotonic() - start < 30
    assert proc.returncode == 1
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


def test_a_crashing_implementation_fails_the_run(tmp_path):
    proc, doc = run_bench(tmp_path, "crash", "garbage", "good")
    assert proc.returncode == 1
    assert "crashed (SIGABRT)" in result(doc, "crash")["reason"]
    assert "bad output" in result(doc, "garbage")["reason"]
    assert result(doc, "good")["status"] == "ok"
    assert "FAILED   crash softplus v2" in proc.stdout


# --- builds: a failed one fails the run, a missing toolchain is a skip -------------------------

def test_a_failed_build_fails_the_run_even_with_the_program_there(tmp_path):
    registry = tmp_path / "reg.json"
    registry.write_text(json.dumps(build_entries("ok", "broken")))
    proc = subprocess.run([sys.executable, str(BENCH), "--registry", str(registry), "--build-dir", str(tmp_path / "b"),
                           "--results-dir", str(tmp_path / "r"), "--workloads", "softplus", "--iters", "2000",
                           "--verify-iters", "500", "--repeats", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED   broken: build-failed: make " in proc.stdout and "expected ';'" in proc.stdout
    doc = rawfile.read(next((tmp_path / "r" / "raw").glob(f"*/*{rawfile.SUFFIX}")))
    assert [i["status"] for i in doc["implementations"]] == ["ok", "build-failed"]
    assert {r["impl"] for r in doc["results"]} == {"ok"}                 # the broken one is never run


def test_a_missing_toolchain_is_a_skip_and_a_build_leaving_nothing_a_failure(tmp_path):
    entries = build_entries("ok", "notoolchain")
    entries[1]["argv"] = ["{build}/fake-notoolchain"]
    registry = tmp_path / "reg.json"
    registry.write_text(json.dumps(entries))
    args = [sys.executable, str(BENCH), "--registry", str(registry), "--build-dir", str(tmp_path / "b"),
            "--results-dir", str(tmp_path / "r"), "--workloads", "softplus", "--iters", "2000",
            "--verify-iters", "500", "--repeats", "1"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "skipped  notoolchain: fake port (fakecc not found)" in proc.stdout and "FAILED" not in proc.stdout
    entries[1].update(name="nothing", argv=["{build}/fake-nothing"], target="{build}/fake-nothing")
    registry.write_text(json.dumps(entries))
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 1 and "make succeeded but left no" in proc.stdout


def test_a_missing_program_is_skipped(tmp_path):
    ghost = {"name": "ghost", "argv": ["build/no-such-program"], "kind": "port", "label": "missing", "levels": ["v2"]}
    proc, doc = run_bench(tmp_path, ghost, "good", extra=("--ci",))
    assert proc.returncode == 0, proc.stdout + proc.stderr               # skipped, not failed
    assert "skipped  ghost" in proc.stdout and "bench-ci: passed" in proc.stdout


@pytest.mark.parametrize("script", ["bench.py", "sweep.py"])
def test_what_every_program_would_refuse_or_an_unwritable_folder_stops_the_run_before_it_starts(tmp_path, script):
    """A --results-dir that cannot be written, an --ops, --iters or --threads past the programs' own bounds
    (contract §4), or a --min-time or --timeout of infinity (calibration's arithmetic was an OverflowError
    traceback) is one error line and exit 2 before any build or run: not a traceback after the whole run, nor
    a run in which every program fails."""
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps([fake("good", "graph=yes")]))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    size = "--ops" if script == "bench.py" else "--sizes"
    for args in (["--results-dir", str(blocker / "results")], [size, "1000001"], ["--iters", str(10**12 + 1)],
                 ["--threads", "1025"], ["--min-time", "inf"], ["--timeout", "inf"]):
        proc = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--registry", str(registry),
                               "--no-build", "--build-dir", BUILD, "--results-dir", str(tmp_path / "results"),
                               *args], capture_output=True, text=True, timeout=60, cwd=ROOT,
                              env={**os.environ, "FAKE_IMPL_LOG": str(tmp_path / "calls.log")})
        last = proc.stderr.strip().splitlines()[-1]
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert last.startswith(("error: cannot write to", f"{script}: error: argument")), (args, last)
        assert not (tmp_path / "calls.log").exists() and not list(tmp_path.glob("results/*/*/*")), args


@pytest.mark.parametrize("target, flags", [("bench", "BENCH_FLAGS"), ("sweep", "SWEEP_FLAGS")])
def test_make_reports_a_run_written_elsewhere_by_naming_the_command_not_from_results(target, flags):
    """`make bench` and `make sweep` follow the run with a report that reads results/: with --results-dir in
    the flags it showed results/' newest run (for a sweep, another machine's) as this one's. It is a skip:
    line naming report.py's command for the run's own folder; without the flag the report runs as before."""
    def recipe(*extra: str) -> str:
        return subprocess.run(["make", "-n", target, *extra], capture_output=True, text=True, timeout=60,
                              cwd=ROOT).stdout
    runs_report = r"; then\s+\S*/bin/python scripts/report.py( --sweep)? \|\| status=1"
    elsewhere = recipe(f"{flags}=--results-dir /tmp/elsewhere")
    assert "--results-dir /tmp/elsewhere" in elsewhere and 'echo "skip: report (' in elsewhere, elsewhere
    assert not re.search(runs_report, elsewhere), elsewhere
    assert re.search(runs_report, recipe()), recipe()


# A registry file that is missing, not JSON, not a list, or has an entry Impl cannot be made from.
BAD_REGISTRIES = {"missing": None, "not-json": "[{", "object": "{}", "empty": "[]", "number": "[1]",
                  "name-only": '[{"name": "x"}]',
                  "unknown-field": '[{"name": "x", "argv": ["a"], "kind": "port", "label": "x", "levels": ["v2"], '
                                   '"colour": "red"}]',
                  "wrong-type": '[{"name": "x", "argv": "a", "kind": "port", "label": "x", "levels": ["v2"]}]',
                  "unknown-kind": '[{"name": "x", "argv": ["a"], "kind": "plugin", "label": "x", "levels": ["v2"]}]',
                  "unknown-level": '[{"name": "x", "argv": ["a"], "kind": "port", "label": "x", "levels": ["v9"]}]'}


@pytest.mark.parametrize("script", ["bench.py", "sweep.py", "compare_trees.py"])
def test_a_missing_or_malformed_registry_is_one_error_line_before_anything_runs(tmp_path, script):
    """--registry naming no file, or a file that is no JSON list of Impl's fields, was a traceback (a
    FileNotFoundError, a TypeError from Impl(**entry)) once the run had started: it is refused as the command
    line is parsed, one error line naming the file, exit 2."""
    built = tmp_path / "built"
    (built / "build").mkdir(parents=True)
    extra = ["--old", str(built)] if script == "compare_trees.py" else \
        ["--no-build", "--results-dir", str(tmp_path / "results")]
    for name, text in BAD_REGISTRIES.items():
        registry = tmp_path / f"{name}.json"
        if text is not None:
            registry.write_text(text)
        proc = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--registry", str(registry), *extra],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (name, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()[-1:]
        assert line.startswith(f"{script}: error: argument --registry: ") and str(registry) in line, (name, line)
        assert proc.stdout == "" and not (tmp_path / "results").exists(), name


def test_the_impls_help_names_what_each_preset_runs():
    """--impls's help said --ci runs "all but the peers"; it runs the registry's entries marked ci (no mojo,
    cython, pypy, numba either): the help names what session.chosen picks for each preset."""
    from harness import session
    out = " ".join(subprocess.run([sys.executable, str(BENCH), "--help"], capture_output=True, text=True,
                                  timeout=60).stdout.split())
    full, ci = (", ".join(i.name for i in session.chosen(argparse.Namespace(registry=None, impls=None, ci=ci,
                                                                              peers_by_default=not ci)))
                for ci in (False, True))
    assert f"(default: all of {full}; --ci: {ci}, " in out, out


def test_the_registry_loader_says_what_is_wrong(tmp_path):
    """impls.load_registry raises ValueError (the one error every caller turns into its error line) saying
    which entry and field is wrong."""
    from impls import load_registry
    said = {}
    for name, text in BAD_REGISTRIES.items():
        path = tmp_path / f"{name}.json"
        if text is not None:
            path.write_text(text)
        with pytest.raises(ValueError) as e:
            load_registry(path)
        said[name] = str(e.value).removeprefix(f"{path}: ")
    assert said["missing"] == f"cannot read {tmp_path / 'missing.json'}: No such file or directory"
    assert said["name-only"] == "entry 0 ('x'): missing field(s) argv, kind, label, levels"
    assert said["wrong-type"] == 'entry 0 (\'x\'): argv is "a", not a list of strings'
    assert said["unknown-field"].startswith("entry 0 ('x'): unknown field(s) colour; Impl's are name, argv")
    assert said["unknown-kind"] == "entry 0 ('x'): kind 'plugin' is not one of codon, port, peer"
    assert said["unknown-level"].startswith("entry 0 ('x'): levels: unknown level(s) v9; levels are v0")
    good = tmp_path / "good.json"
    good.write_text(json.dumps([fake("good", rounds=3)]))
    (impl,) = load_registry(good)
    assert impl.name == "good" and impl.rounds == 3 and impl.graph_levels == []


def test_a_results_file_that_cannot_be_written_at_the_end_is_an_error_line(tmp_path, monkeypatch, capsys):
    """The folder was checked at the start; a write that still fails (a full disk) ends the run with one error
    line and exit 1, not a traceback."""
    from harness import session

    def full_disk(path, data):
        raise OSError(28, "No space left on device", str(path))
    monkeypatch.setattr(session.signal, "signal", lambda *a: None)      # this process's SIGTERM stays pytest's
    monkeypatch.setattr(session, "chosen", lambda opts: [])
    monkeypatch.setattr(session, "measure", lambda impls, opts, started: session.Run({"slug": "test"}, 1, []))
    monkeypatch.setattr(session, "document", lambda *a: {})
    monkeypatch.setattr(session.rawfile, "write_atomic", full_disk)
    opts = argparse.Namespace(results_dir=tmp_path, ci=False)
    assert session.bench(opts) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: cannot write the results file: No space left on device (")


def test_prebuilt_tests_run_no_make_and_need_the_program_there(monkeypatch):
    """AUTOGRAD_PREBUILT=1 (a bundle on a machine with no toolchain): the fixtures only check the file."""
    import conftest
    monkeypatch.setattr(conftest, "PREBUILT", True)
    monkeypatch.setattr(conftest.subprocess, "run", lambda *a, **k: pytest.fail("make ran"))
    conftest.make("Makefile")
    with pytest.raises(AssertionError, match="AUTOGRAD_PREBUILT=1, and no/such/program is missing"):
        conftest.make("no/such/program")
    # A port: its program is taken as it is, or the test skips.
    assert conftest.build_port([sys.executable], "build/autograd-c") is None
    assert conftest.build_port([str(ROOT / "no/such/port")], "build/autograd-c") == "not in the prebuilt folder"


# --- the graph workload ------------------------------------------------------------------------

@pytest.mark.slow
def test_graph_workload_probed_verified_and_timed_per_op(tmp_path):
    graph = ("graph=yes", "levels=v0,v1,v2,v3")
    entries = [fake("good", "ns=20000", *graph, name="codon", kind="codon"), fake("good", "ns=30000", *graph, name="c"),
               fake("good", "graph=no", name="old"), fake("good", "graph=wrong", "levels=v2", name="off")]
    proc, doc = run_bench(tmp_path, *entries, sizes=("--min-time", "0.01", "--verify-iters", "500", "--repeats", "2"),
                          extra=("--workloads", "softplus,graph", "--ops", "100", "--levels", "v1,v2"))
    assert proc.returncode == 1                                          # `off` is wrong
    g = result(doc, "codon", "v2", "graph")
    assert g["ops"] == 100 and g["ns_per_op"] == pytest.approx(200.0)      # 20 us a sample, 100 ops
    assert [(v["ops"], v["iters"], v["source"]) for v in g["verify"]][:2] == [(10, 3, "§G4"), (10000, 3, "§G4")]
    assert result(doc, "c", "v1", "graph")["iters"] == g["iters"]
    assert not any(r["impl"] == "old" and r["workload"] == "graph" for r in doc["results"])
    assert result(doc, "old")["status"] == "ok"                           # still timed for softplus
    assert any("old refuses --workload graph" in n for n in doc["notes"])
    assert "wrong sums at N=3, 10 ops" in result(doc, "off", "v2", "graph")["reason"]
    assert [i["graph"] for i in doc["implementations"]] == ["yes", "yes", "no", "yes"]


def test_a_crash_on_the_graph_probe_fails_the_run(tmp_path):
    proc, doc = run_bench(tmp_path, fake("good", "graph=crash"), extra=("--workloads", "softplus,graph"))
    assert proc.returncode == 1 and "graph probe failed: crashed (SIGABRT)" in proc.stdout
    assert result(doc, "good")["status"] == "ok"


# --- records, and the real program ------------------------------------------------------------

def test_parse_record_follows_the_contract():
    rec = {"impl": "c", "workload": "softplus", "level": "v2", "iters": 5, "seed": 42, "threads": 1, "seconds": 0.5,
           "cpu_seconds": 0.49, "ns_per_iter": 1e8, "sum_f": 1.0, "sum_dx": 2.0, "sum_dy": 3.0}
    line = json.dumps(rec)
    want = {"impl": "c", "level": "v2", "iters": 5, "seed": 42, "workload": "softplus"}
    assert contract.parse_record(line + "\n", want)["sum_dy"] == 3.0
    old = {k: v for k, v in rec.items() if k != "workload"}                   # before the graph contract
    assert contract.parse_record(json.dumps(old), want)["sum_f"] == 1.0
    with pytest.raises(ValueError, match="impl is 'c', expected 'rust'"):
        contract.parse_record(line, {**want, "impl": "rust"})
    with pytest.raises(ValueError, match="iters"):
        contract.parse_record(line, {**want, "iters": 6})
    with pytest.raises(ValueError, match="threads is 1, expected 4"):
        contract.parse_record(line, {**want, "threads": 4})
    reordered = {"level": rec["level"], **{k: v for k, v in rec.items() if k != "level"}}
    with pytest.raises(ValueError, match="keys"):
        contract.parse_record(json.dumps(reordered), want)
    with pytest.raises(ValueError, match="finite"):
        contract.parse_record(line.replace("3.0", "NaN"), want)
    with pytest.raises(ValueError, match="one JSON line"):
        contract.parse_record(line + "\n" + line, want)
    without_cpu = {k: v for k, v in rec.items() if k != "cpu_seconds"}       # contract §5: cpu_seconds is required
    with pytest.raises(ValueError, match="keys"):
        contract.parse_record(json.dumps(without_cpu), want)
    graph = {"impl": "c", "workload": "graph", "level": "v2", "ops": 10, "iters": 3, "seed": 42, "threads": 1,
             "seconds": 0.1, "cpu_seconds": 0.1, "ns_per_iter": 1e3, "ns_per_op": 1e2, "sum_loss": 1.0,
             "sum_grad_in": 2.0, "sum_grad_all": 3.0}
    assert contract.sums_of(contract.parse_record(json.dumps(graph), {**want, "iters": 3, "workload": "graph",
                                                                "ops": 10}), "graph") == (1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="ops is 10, expected 100"):
        contract.parse_record(json.dumps(graph), {**want, "iters": 3, "workload": "graph", "ops": 100})


@pytest.mark.slow
def test_bench_times_the_real_codon_program(tmp_path, codon):
    proc = subprocess.run([sys.executable, str(BENCH), "--impls", "codon", "--levels", "v2,v3", "--no-build",
                           "--build-dir", BUILD, "--workloads", "softplus", "--results-dir", str(tmp_path),
                           "--iters", "20000", "--repeats", "1"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    doc = rawfile.read(next((tmp_path / "raw").glob(f"*/*{rawfile.SUFFIX}")))
    assert {(r["impl"], r["level"], r["status"]) for r in doc["results"]} == {("codon", "v2", "ok"),
                                                                            ("codon", "v3", "ok")}
    assert result(doc, "codon")["sums"] == list(oracle.run(42, 20000))
    assert doc["implementations"][0]["vector_width"] in (1, 2, 4, 8)
