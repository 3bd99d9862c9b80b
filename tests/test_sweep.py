"""The graph size sweep (scripts/sweep.py, `make sweep`) and what report.py makes of it (harness/sweepdata.py):
the caches from sysfs, the doubling rule, the seed's claim decided both ways, the raw file, and a tiny sweep
over stand-in programs (tests/fixtures/fake_impl.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUILD, ROOT
from fakes import fake

sys.path.insert(0, str(ROOT / "scripts"))
import machine  # noqa: E402
from harness import blocks, oracle, rawfile, sweepdata  # noqa: E402

SWEEP = ROOT / "scripts" / "sweep.py"
REPORT = ROOT / "scripts" / "report.py"


def sysfs(root: Path, caches: list[tuple[str, str, str]]) -> Path:
    """A fake /sys/devices/system/cpu/cpu0/cache: index<k>/{level,type,size} per (level, type, size)."""
    for k, (level, kind, size) in enumerate(caches):
        d = root / f"index{k}"
        d.mkdir(parents=True)
        for name, value in (("level", level), ("type", kind), ("size", size)):
            (d / name).write_text(value + "\n")
    return root


def test_the_caches_come_from_sysfs(tmp_path):
    root = sysfs(tmp_path / "cache", [("1", "Data", "48K"), ("1", "Instruction", "32K"), ("2", "Unified", "2048K"),
                                      ("3", "Unified", "32M")])
    assert machine.caches(root) == {"L1d": 48 << 10, "L2": 2 << 20, "L3": 32 << 20}


def test_caches_the_host_does_not_report_are_absent(tmp_path):
    assert machine.caches(tmp_path / "nowhere") == {"L1d": None, "L2": None, "L3": None}
    root = sysfs(tmp_path / "cache", [("1", "Data", "32K"), ("2", "Unified", "")])
    assert machine.caches(root) == {"L1d": 32 << 10, "L2": None, "L3": None}
    assert sweepdata.caches_text(machine.caches(root)) == ("L1d 32 KiB, L2 not reported by the host, "
                                                           "L3 not reported by the host")


def test_the_tape_bytes_are_the_programs_tapes_bytes():
    """graph/simd.codon: 4.5 MB at 16 lanes and 10,000 ops; the oracle's node count is the ports'."""
    sys.path.insert(0, str(ROOT / "ports" / "python"))
    from graph.recipe import n_nodes
    assert sweepdata.GRAPH_BATCH == 16
    assert sweepdata.tape_bytes("v3", 10_000) == sweepdata.tape_bytes("v4", 10_000) == 4_505_600
    assert sweepdata.tape_bytes("v2", 10_000) == 4_505_600 // 16
    assert all(oracle.graph_nodes(m) == n_nodes(m) for m in (1, 4, 7, 100, 1_000_000))


def test_the_doubling_m_is_the_first_size_at_twice_the_smallest_sizes_ns():
    assert sweepdata.doubling([(100, 10.0), (1000, 12.0), (10_000, 19.9), (100_000, 20.0), (1_000_000, 50.0)]) \
        == 100_000
    assert sweepdata.doubling([(100, 10.0), (1000, 8.0), (1_000_000, 19.0)]) is None
    assert sweepdata.doubling([(100, 10.0)]) is None and sweepdata.doubling([]) is None


def synthetic(ns: dict[tuple[str, str, int], float], sizes=(100, 1_000_000), rounds: int = 8) -> sweepdata.Sweep:
    """A sweep document with runs of the given ns/op per (impl, level, M): CPU time of 1,000 samples, a
    little noise per round so that intervals have width."""
    doc = {"kind": "sweep", "schema": sweepdata.SCHEMA,
           "machine": {"cpu": "Test CPU", "caches": {"L1d": 32 << 10, "L2": 1 << 20, "L3": None}},
           "config": {"repeats": rounds, "min_time": 0.04, "threads": 2, "sizes": list(sizes)},
           "implementations": [{"name": n, "label": n} for n in dict.fromkeys(k[0] for k in ns)], "sizes": []}
    for m in sizes:
        results = []
        for (impl, level, ops), v in ns.items():
            if ops != m:
                continue
            runs = [{"round": r, "seconds": v * ops * 1000 * 1e-9 * (1 + r / 1000),
                     "cpu_seconds": v * ops * 1000 * 1e-9 * (1 + r / 1000)} for r in range(1, rounds + 1)]
            results.append({"impl": impl, "level": level, "status": "ok", "iters": 1000, "ns_per_op": v,
                            "runs": runs, "scan": False})
        doc["sizes"].append({"ops": m, "results": results, "codon_vs_best_port": {}})
    return sweepdata.Sweep(doc, ROOT / "results" / "sweep" / "test" / "synthetic.json.gz")


def test_the_seeds_claim_is_confirmed_when_v2_keeps_its_lead():
    ns = {("codon", "v0", 100): 100.0, ("codon", "v1", 100): 40.0, ("codon", "v2", 100): 20.0,
          ("codon", "v0", 1_000_000): 400.0, ("codon", "v1", 1_000_000): 120.0, ("codon", "v2", 1_000_000): 30.0}
    sw = synthetic(ns)
    (name, got, verdict), = sweepdata.v2_lead(sw)
    assert (name, verdict) == ("codon", "keeps")
    assert got["v0@100"]["median"] == pytest.approx(0.2) and got["v1@1000000"]["read"] == "faster"
    assert sweepdata.claim(sweepdata.v2_lead(sw)) == "confirmed"
    assert "**confirmed**" in "\n".join(sweepdata.sentences(sw))


def test_the_seeds_claim_is_not_confirmed_when_v2_loses_its_lead():
    ns = {(n, lv, m): v for n in ("codon", "c") for (lv, m), v in {
        ("v0", 100): 100.0, ("v1", 100): 40.0, ("v2", 100): 20.0,
        ("v0", 1_000_000): 400.0, ("v1", 1_000_000): 120.0, ("v2", 1_000_000): 30.0}.items()}
    ns["c", "v2", 1_000_000] = 150.0                 # behind its v1 at the largest size
    sw = synthetic(ns)
    assert [(n, v) for n, _, v in sweepdata.v2_lead(sw)] == [("codon", "keeps"), ("c", "loses")]
    assert sweepdata.claim(sweepdata.v2_lead(sw)) == "not confirmed (c loses it)"
    text = "\n".join(sweepdata.sentences(sw))
    assert "**not confirmed (c loses it)**" in text and "L3 not reported by the host" in text
    # Where v2 leads nothing at the smallest size there is no lead to keep: not a confirmation.
    flat = synthetic({("c", lv, m): 50.0 for lv in ("v0", "v1", "v2") for m in (100, 1_000_000)})
    assert sweepdata.claim(sweepdata.v2_lead(flat)).startswith("not confirmed (no implementation")


def test_a_sweep_file_is_refused_where_a_bench_file_is_given(tmp_path):
    path = tmp_path / "bench.json.gz"
    rawfile.write_atomic(path, rawfile.encode({"schema": rawfile.SCHEMA, "results": []}))
    with pytest.raises(ValueError, match="not a sweep's raw file"):
        sweepdata.Sweep(rawfile.read(path), path)


def run_sweep(tmp_path: Path, *entries: dict, extra: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess, dict]:
    """sweep.py over fake implementations at two tiny sizes; its output and raw file."""
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps(list(entries)))
    proc = subprocess.run([sys.executable, str(SWEEP), "--registry", str(registry), "--no-build", "--build-dir", BUILD,
                           "--results-dir", str(tmp_path / "results"), "--sizes", "10,100", "--iters", "4",
                           "--repeats", "6", "--timeout", "20", *extra],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    files = sorted((tmp_path / "results" / "sweep").glob(f"*/*{rawfile.SUFFIX}"))
    return proc, (rawfile.read(files[-1]) if files else None)


def test_a_tiny_sweep_over_stand_ins_end_to_end(tmp_path):
    graph = ("graph=yes", "levels=v0,v1,v2,v3,v4")
    entries = [fake("good", "ns=40000", "ns_v2=10000", *graph, name="codon", kind="codon"),
               fake("good", "ns=30000", *graph, "refuse_ops=100", name="c"),
               fake("good", *graph, name="slowpy", slow=True)]
    proc, doc = run_sweep(tmp_path, *entries)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert doc["kind"] == "sweep" and doc["config"]["sizes"] == [10, 100] and doc["config"]["repeats"] == 6
    assert set(doc["machine"]["caches"]) == {"L1d", "L2", "L3"}
    assert [i["name"] for i in doc["implementations"]] == ["codon", "c"]      # compiled ones only
    by = {(e["impl"], e["level"], s["ops"]): e for s in doc["sizes"] for e in s["results"]}
    assert by["codon", "v2", 100]["status"] == "ok" and len(by["codon", "v2", 100]["runs"]) == 6
    assert by["codon", "v2", 10]["ns_per_op"] == pytest.approx(10000 / 10)
    assert by["codon", "v4", 100]["threads"] >= 1
    assert all(r["peak_rss_kb"] > 0 for r in by["codon", "v2", 100]["runs"])         # each run's own peak
    # c refuses 100 ops for memory: recorded as refused there, and not a failure.
    assert by["c", "v2", 100]["status"] == "refused" and by["c", "v2", 10]["status"] == "ok"
    assert "refused  c v2 at 100 ops" in proc.stdout
    assert set(doc["sizes"][0]["codon_vs_best_port"]) == {f"graph {lv}" for lv in ("v0", "v1", "v2", "v3")} | \
        {"graph v4 " + str(by["codon", "v4", 10]["threads"])}
    # The report: the sentences on stdout, the doubling table with the refusal, the verdict.
    raw = sorted((tmp_path / "results" / "sweep").glob("*/*.json.gz"))[-1]
    rep = subprocess.run([sys.executable, str(REPORT), "--sweep", str(raw), "--out", str(tmp_path), "--no-charts"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert rep.returncode == 0, rep.stderr
    assert "- **v2** doubles at: codon never up to 100, c never up to 10 (refused from 100)." in rep.stdout
    assert "**confirmed**" in rep.stdout
    assert "Codon / best port: - at 100 ops." in rep.stdout     # no port at 100 ops (c refused it): no ratio
    # The README block of the same file regenerates to the same sentences (root: where RAW is relative to).
    text = f"<!-- report.py: sweep from {raw.relative_to(tmp_path)} -->\nold\n<!-- report.py: end -->"
    filled = blocks.fill_blocks(text, root=tmp_path)
    assert "**confirmed**" in filled and blocks.fill_blocks(filled, root=tmp_path) == filled


def test_the_sweep_charts_are_drawn_from_the_raw_file(tmp_path):
    """report.py --sweep draws sweep.png, and sweep-rss.png only where the runs record their peak RSS; in a
    process of its own (matplotlib would grow this one, whose size a child's peak RSS would then include)."""
    pytest.importorskip("matplotlib")
    ns = {("codon", lv, m): 10.0 * k for k, (lv, m) in enumerate(
        ((lv, m) for lv in ("v0", "v1", "v2", "v3", "v4") for m in (100, 1_000_000)), 1)}
    doc = synthetic(ns).doc

    def draw(name: str) -> tuple[subprocess.CompletedProcess, Path]:
        raw, out = tmp_path / name / "sweep.json.gz", tmp_path / name / "out"
        rawfile.write_atomic(raw, rawfile.encode(doc))
        return subprocess.run([sys.executable, str(REPORT), "--sweep", str(raw), "--out", str(out)],
                              capture_output=True, text=True, timeout=120, cwd=ROOT), out

    proc, out = draw("plain")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["sweep.png"]       # no peak RSS recorded: no RSS chart
    assert b"scripts/report.py --sweep" in (out / "sweep.png").read_bytes()
    for r in (e for s in doc["sizes"] for e in s["results"]):
        for run in r["runs"]:
            run["peak_rss_kb"] = 2048
    proc, out = draw("rss")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["sweep-rss.png", "sweep.png"]


def test_a_sweeps_charts_go_beside_its_raw_file_and_leave_the_readmes_alone(tmp_path):
    """Without --out, report.py --sweep (what `make sweep` runs) draws <date>.png beside the raw file: the
    README's results/sweep.png stays the chart of its `sweep` block, so `make sweep` then `make test` passes."""
    pytest.importorskip("matplotlib")
    ns = {("codon", lv, m): 10.0 * k for k, (lv, m) in enumerate(
        ((lv, m) for lv in ("v2", "v3") for m in (100, 1_000_000)), 1)}
    raw = tmp_path / "sweep" / "test-machine" / "2026-01-01T000000Z.json.gz"
    rawfile.write_atomic(raw, rawfile.encode(synthetic(ns).doc))
    readme_chart = ROOT / "results" / "sweep.png"
    before = readme_chart.read_bytes()
    try:
        proc = subprocess.run([sys.executable, str(REPORT), "--sweep", str(raw)], capture_output=True, text=True,
                              timeout=120, cwd=ROOT)
        after = readme_chart.read_bytes()
    finally:
        if readme_chart.read_bytes() != before:
            readme_chart.write_bytes(before)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in raw.parent.iterdir()) == ["2026-01-01T000000Z.json.gz", "2026-01-01T000000Z.png"]
    assert f"scripts/report.py --sweep {raw})".encode() in (raw.parent / "2026-01-01T000000Z.png").read_bytes()
    assert after == before
    if (ROOT / ".git").exists():                                     # a checkout, not a copy of the files
        ignored = subprocess.run(["git", "check-ignore", "-q", "results/sweep/test-machine/2026-01-01T000000Z.png"],
                                 cwd=ROOT)
        assert ignored.returncode == 0, "git would list make sweep's charts as new files"


def test_codon_against_the_best_port_is_summed_up_over_every_size():
    """One sentence over every size and level past v0: ahead or tied in all cells, or the cells behind, each
    with its reading and port; v0 (the collector's level) is left out of it."""
    def cell(lv, median, lo, hi, read):
        return {"level": lv, "median": median, "interval": [lo, hi], "read": read, "port": "zig",
                "ratios": [median] * 8}
    sw = synthetic({("codon", lv, m): 10.0 for lv in ("v0", "v1", "v2") for m in (100, 1_000_000)})
    small = [cell("v0", 1.5, 1.4, 1.6, "slower"), cell("v1", 0.9, 0.8, 0.95, "faster"),
             cell("v2", 1.0, 0.9, 1.1, "tie")]
    large = [cell("v1", 0.97, 0.9, 1.02, "tie"), cell("v2", 1.08, 1.05, 1.3, "slower")]
    for size, cells in zip(sw.doc["sizes"], (small, large)):
        size["codon_vs_best_port"] = {f"graph {c['level']}": c for c in cells}
    text = "\n".join(sweepdata.sentences(sweepdata.Sweep(sw.doc, sw.path)))
    assert ("At every size, Codon at v1, v2 against the best port: behind in 1 of 4 cells (v2 at 1,000,000 ops "
            "1.08 [1.05, 1.30] zig), ahead or tied in the rest.") in text
    sw.doc["sizes"][1]["codon_vs_best_port"]["graph v2"] = cell("v2", 0.99, 0.9, 1.05, "tie")
    text = "\n".join(sweepdata.sentences(sweepdata.Sweep(sw.doc, sw.path)))
    assert "At every size, Codon at v1, v2 against the best port: ahead or tied in all 4 cells (ahead in 1)." in text


def test_the_sentences_judge_nothing_that_the_sweep_did_not_time():
    """A sweep of one size, or without v0 and v1, cannot show v2 keeping a lead as the graph grows: the claim is
    not judged, rather than "not confirmed", and the counts read as words."""
    one = synthetic({("codon", lv, 100): v for lv, v in (("v0", 100.0), ("v1", 40.0), ("v2", 20.0))}, sizes=(100,),
                    rounds=1)
    text = "\n".join(sweepdata.sentences(one))
    assert "1 paired round of at least 0.04 s at each of 1 size, 100 ops; v4 at 2 threads." in text
    assert "at 100 ops (same rounds, CPU time)" in text and "(100 ops, 4.3 KiB of v2's tape)" in text
    assert "**not judged (one size: the graph does not grow)**" in text
    fast = synthetic({("codon", lv, m): 10.0 for lv in ("v2", "v3") for m in (100, 1_000_000)})
    text = "\n".join(sweepdata.sentences(fast))
    assert "v2's time over v0's and v1's: not measured, no implementation was timed at v0, v1 and v2." in text
    assert "**not judged (no implementation was timed at v0, v1 and v2)**" in text
    assert "\n\n\n" not in text


def test_the_sweep_takes_compiled_implementations_only(tmp_path):
    proc, doc = run_sweep(tmp_path, fake("good", "graph=yes", name="slowpy", slow=True), extra=("--impls", "slowpy"))
    assert proc.returncode == 2 and doc is None
    assert "error: the sweep times compiled implementations only; not slowpy" in proc.stderr


def test_the_sweep_charts_carry_the_readme_blocks_run():
    """results/sweep.png names the raw file it was drawn from: the README's `sweep` block's, once there is one."""
    found = [m for m in blocks.BLOCK.finditer((ROOT / "README.md").read_text()) if m["name"] == "sweep"]
    if not found:
        pytest.skip("the README has no sweep block yet (a committed `make sweep` run adds it)")
    png = (ROOT / "results" / "sweep.png").read_bytes()
    assert f"scripts/report.py --sweep {found[0]['raw']})".encode() in png, \
        "stale: python scripts/report.py --readme README.md"


def test_v3_and_v4_are_timed_on_whole_batches_where_a_large_m_calibrates_to_fewer_samples():
    """A batch computes all its lanes whatever number of samples fill it: a v3 or v4 N below one batch per
    thread is raised to it (v0-v2 keep theirs), unless N was given."""
    import argparse
    from harness import state, sweep
    import impls
    impl = impls.Impl("codon", ["codon"], "codon", "codon", [])
    pairs = [state.Pair(impl, "graph", "v2", iters=1), state.Pair(impl, "graph", "v3", iters=1),
             state.Pair(impl, "graph", "v4", threads=2, iters=4), state.Pair(impl, "graph", "v3", iters=64)]
    for p in pairs:
        p.verified()
    notes = sweep.full_batches(pairs, argparse.Namespace(iters=None, ops=1_000_000))
    assert [p.iters for p in pairs] == [1, 16, 32, 64]
    assert notes == ["graph v3 at 1,000,000 ops: N raised from the calibrated 1 to 16, one batch of 16 samples "
                     "per thread", "graph v4 at 1,000,000 ops: N raised from the calibrated 4 to 32, one batch of "
                     "16 samples per thread"]
    fixed = [state.Pair(impl, "graph", "v3", iters=4)]
    fixed[0].verified()
    assert sweep.full_batches(fixed, argparse.Namespace(iters=4, ops=100)) == [] and fixed[0].iters == 4
