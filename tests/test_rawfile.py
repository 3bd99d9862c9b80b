"""The raw file a bench.py run writes (scripts/harness/rawfile.py): what it records (the interval, the
machine, each program's target, each run's peak RSS), gzip-compressed JSON with the same bytes for the same
run, written atomically, and none left by an interrupted run.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import ROOT
from fakes import BENCH, FIXTURES, fake, result, run_bench

sys.path.insert(0, str(ROOT / "scripts"))
from harness import rawfile, rundata  # noqa: E402


@pytest.mark.slow
def test_raw_file_has_the_interval_machine_and_targets(tmp_path):
    target = "target native, vector width 8 doubles: AVX-512F (libmvec _ZGVeN8v)"
    proc, doc = run_bench(tmp_path, fake("good", "ns=100", f"version={target}", name="codon", kind="codon"),
                          fake("good", "ns=120", name="c"), extra=("--repeats", "6"))
    assert proc.returncode == 0, proc.stderr
    m = doc["machine"]
    assert doc["schema"] == rawfile.SCHEMA == 2
    for key in ("cpu", "cpu_family", "cpu_model", "avx2", "avx512f", "cores", "slug", "git_commit", "date",
                "other_load"):
        assert key in m
    assert m["cores"] == len(os.sched_getaffinity(0))
    files = list((tmp_path / "results" / "raw").glob(f"*/*{rawfile.SUFFIX}"))
    assert [f.parent.name for f in files] == [m["slug"]]
    codon, c = doc["implementations"]
    assert (codon["target"], codon["vector_width"]) == ("native", 8) and codon["vector"].startswith("AVX-512F")
    assert (c["target"], c["vector_width"], c["vector"]) == (None, None, None)   # a port without the line
    r = result(doc, "codon")
    assert r["ci_coverage"] == pytest.approx(1 - 2 / 64)                 # 6 runs: [min, max], 96.9%
    assert r["ci_ns_per_iter"] == [pytest.approx(100.0), pytest.approx(100.0)]
    # Each run records what the rest of the machine did meanwhile; the result, its busiest run.
    assert all({"other_load", "steal"} <= run.keys() for run in r["runs"])
    assert r["max_other_load"] == max(run["other_load"] for run in r["runs"])
    assert r["max_steal"] == max(run["steal"] for run in r["runs"]) and "steal" in m


def test_each_timed_run_records_its_own_peak_rss_and_an_older_raw_file_still_reads(tmp_path):
    """Every timed run's record keeps its process's peak RSS (`peak_rss_kb`, KiB) through the raw file; a
    small program timed after a big one reads small (per process, not the largest so far). A raw file from
    before the record reads as before, with no peak to show."""
    proc, doc = run_bench(tmp_path, fake("good", "alloc=150", name="big"), fake("good", name="small"))
    assert proc.returncode == 0, proc.stderr
    (path,) = (tmp_path / "results" / "raw").glob(f"*/*{rawfile.SUFFIX}")   # doc: this file, read back
    big, small = result(doc, "big"), result(doc, "small")
    assert len(big["runs"]) == len(small["runs"]) == 2
    assert all(run["peak_rss_kb"] * 1024 >= 150e6 for run in big["runs"])
    assert all(0 < run["peak_rss_kb"] * 1024 < 100e6 for run in small["runs"])   # after big's verification runs
    old = rawfile.read(FIXTURES / "bench-small.json")
    assert old["schema"] == rawfile.SCHEMA and not any("peak_rss_kb" in run for r in old["results"]
                                                       for run in r.get("runs", []))
    data = rundata.Data(old, FIXTURES / "bench-small.json")
    assert not data.has_peaks() and data.peak_kb("codon", "v2") is None and data.ns("codon", "v2") == pytest.approx(60)
    new = rundata.Data(doc, path)
    assert new.has_peaks() and new.peak_kb("big", "v2") == rundata.analysis.median(
        [run["peak_rss_kb"] for run in big["runs"]])


def test_an_interrupted_run_leaves_no_results_file(tmp_path):
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps([fake("slow")]))
    args = [sys.executable, str(BENCH), "--registry", str(registry), "--no-build", "--workloads", "softplus",
            "--results-dir", str(tmp_path / "results"), "--iters", "2000", "--verify-iters", "500", "--repeats", "100"]
    # Ctrl-C's default action in the child even where this test runs with SIGINT ignored (a job started in
    # the background by a non-interactive shell is), which Python would keep, and the run would finish.
    child = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in child.stderr:                                            # wait until timing has begun
        if line.startswith("[time"):
            break
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130
    assert "no results file written" in err
    leftovers = list((tmp_path / "results").rglob("*")) if (tmp_path / "results").exists() else []
    assert [p for p in leftovers if p.is_file()] == []


def test_the_raw_file_is_compressed_json_and_the_same_bytes_for_the_same_run(tmp_path):
    """A `make bench` run's raw file is gzip-compressed JSON, and its gzip header holds no time or name:
    encoding the run again gives its bytes."""
    proc, doc = run_bench(tmp_path, "ok")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = (tmp_path / "results" / "raw").glob("*/*")
    assert path.name.endswith(".json.gz") and path.read_bytes()[:2] == b"\x1f\x8b"
    assert rawfile.encode(doc) == path.read_bytes()


def test_write_atomic_never_leaves_half_a_file(tmp_path, monkeypatch):
    target = tmp_path / "raw" / "run.json"
    rawfile.write_atomic(target, '{"old": true}\n')
    assert json.loads(target.read_text()) == {"old": True}

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(rawfile.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        rawfile.write_atomic(target, '{"new": true, "padding": "' + "x" * 100_000 + '"}\n')
    assert json.loads(target.read_text()) == {"old": True}               # the old file, whole
    assert [p.name for p in target.parent.iterdir()] == ["run.json"]     # no temporary left
