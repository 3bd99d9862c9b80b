"""scripts/bench.py's timing: calibration to --min-time, rounds shuffled with the recorded seed, a level's
implementations adjacent in each round so their ratios pair, entries timed in fewer rounds, the thread scan,
and harness/analysis.py's intervals and paired readings. The fixture programs report a fixed time per sample (`ns=`), so
every ratio here is exact.
"""
from __future__ import annotations

import random
import sys

import pytest

from conftest import ROOT
from fakes import fake, result, run_bench, timed_calls

sys.path.insert(0, str(ROOT / "scripts"))
import bench  # noqa: E402
import impls  # noqa: E402
from harness import analysis, oracle, state, timing  # noqa: E402


# --- calibration and rounds --------------------------------------------------------------------

@pytest.mark.slow
def test_calibration_gives_every_compiled_implementation_the_codon_programs_n(tmp_path):
    calls = tmp_path / "calls.log"
    entries = [fake("good", "ns=250", name="c"), fake("good", "ns=1000", name="codon", kind="codon"),
               fake("good", "ns=50000", name="python", slow=True)]
    proc, doc = run_bench(tmp_path, *entries, sizes=("--min-time", "0.01", "--verify-iters", "500", "--repeats", "2"),
                          env={"FAKE_IMPL_LOG": str(calls)})
    assert proc.returncode == 0, proc.stderr
    # Codon at 1 us a sample: 1, then x1024 (far too short), then x16 -> 16,384 samples = 16 ms >= 10 ms,
    # where 8,192 would have lasted 8 ms. C (4x faster) runs the same N; CPython its own.
    (cal,) = [c for c in doc["calibration"] if c["impl"] == "codon"]
    assert [n for n, _ in cal["steps"]] == [1, 1024, 16384] and cal["iters"] == 16384
    assert result(doc, "codon")["iters"] == result(doc, "c")["iters"] == 16384
    assert result(doc, "python")["iters"] == 256                         # 50 us x 256 = 12.8 ms
    assert all(r["seconds"] >= 0.01 for r in result(doc, "codon")["runs"])
    assert [c["impl"] for c in doc["calibration"]] == ["python", "codon"]  # C was never calibrated
    assert timed_calls(calls, "c", 1024) == []
    assert doc["config"]["min_time"] == 0.01 and doc["config"]["iters"] is None
    # The compiled ones' timed sums were checked against each other and the reference at that N.
    assert result(doc, "c")["sums"] == list(oracle.run(42, 16384))


@pytest.mark.slow
def test_rounds_are_shuffled_with_the_recorded_seed(tmp_path):
    calls = tmp_path / "calls.log"
    names = ["a", "b", "c", "d"]
    proc, doc = run_bench(tmp_path, *(fake("good", "ns=100", name=n) for n in names),
                          extra=("--shuffle-seed", "7", "--repeats", "3"), env={"FAKE_IMPL_LOG": str(calls)})
    assert proc.returncode == 0 and doc["config"]["shuffle_seed"] == 7
    timed = [ln.split()[0] for ln in calls.read_text().splitlines() if "--iters 3000 " in ln]
    rng, want = random.Random(7), []
    for _ in range(3):
        order = names[:]
        rng.shuffle(order)
        want += order
    assert timed == want and timed[:4] != timed[4:8]                     # shuffled, differently each round


def test_every_run_shorter_than_min_time_is_noted():
    impl = impls.Impl("c", ["x"], "port", "C", ["v2"])
    pairs = [state.Pair(impl, "softplus", "v2", iters=64), state.Pair(impl, "softplus", "v3", iters=64)]
    pairs[0].runs = [{"seconds": s} for s in (0.12, 0.09, 0.11)]      # one run short of 0.1 s
    pairs[1].runs = [{"seconds": s} for s in (0.10, 0.13, 0.11)]
    results = [{"status": "ok"}, {"status": "ok"}]
    opts = bench.parse_args(["--min-time", "0.1"])
    (note,) = timing.short_runs(pairs, results, opts)
    assert note == ("c v2: 1 of 3 timed runs under --min-time 0.1 s (shortest 0.090 s, at N=64, the N its "
                    "level's compiled programs share)")
    assert timing.short_runs(pairs, results, bench.parse_args(["--min-time", "0.1", "--iters", "5"])) == []


@pytest.mark.slow
def test_an_entry_with_rounds_and_iters_is_timed_that_often_at_that_n(tmp_path):
    """torch.compile compiles for a minute in every process: its entry says how many rounds, at what N."""
    entries = [fake("good", name="codon", kind="codon"), {**fake("good", name="slowpeer", kind="peer"),
                                                         "rounds": 2, "iters": 300}]
    proc, doc = run_bench(tmp_path, *entries, extra=("--levels", "v2"),
                          sizes=("--min-time", "0.005", "--verify-iters", "500", "--repeats", "4"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    peer, codon = result(doc, "slowpeer"), result(doc, "codon")
    assert peer["iters"] == 300 and [r["round"] for r in peer["runs"]] == [1, 2]
    assert len(codon["runs"]) == 4 and codon["iters"] != 300
    assert not any(c["impl"] == "slowpeer" for c in doc["calibration"])


@pytest.mark.slow
def test_an_entry_with_rounds_alone_is_calibrated_and_timed_in_fewer_rounds(tmp_path):
    """Numba and PyTorch start for a second or more: their entries cap the rounds (Impl.rounds) and keep
    the level's calibrated N, so they pair with the others in the rounds they ran."""
    entries = [fake("good", name="codon", kind="codon"), {**fake("good", name="slowstart"), "rounds": 2}]
    proc, doc = run_bench(tmp_path, *entries, extra=("--levels", "v2"),
                          sizes=("--min-time", "0.005", "--verify-iters", "500", "--repeats", "4"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    capped, codon = result(doc, "slowstart"), result(doc, "codon")
    assert [r["round"] for r in capped["runs"]] == [1, 2] and len(codon["runs"]) == 4
    assert capped["iters"] == codon["iters"]                   # the level's calibrated N
    slower = capped if capped.get("paired", {}).get("against") == "codon" else codon
    assert len(slower["paired"]["ratios"]) == 2, (capped.get("paired"), codon.get("paired"))


@pytest.mark.slow
def test_v4_is_timed_at_every_power_of_two_threads_and_the_most(tmp_path):
    entry = fake("good", "ns=100", "levels=v2,v3,v4", name="codon", kind="codon", levels=("v2", "v3", "v4"))
    proc, doc = run_bench(tmp_path, entry, extra=("--threads", "6"))
    assert proc.returncode == 0, proc.stderr
    v4 = sorted((r["threads"], r["scan"]) for r in doc["results"] if r["level"] == "v4")
    assert v4 == [(1, True), (2, True), (4, True), (6, False)] and doc["config"]["thread_counts"] == [1, 2, 4, 6]
    assert result(doc, "codon", "v4")["threads"] == 6
    assert state.thread_counts(2, True) == [1, 2] and state.thread_counts(8, True) == [1, 2, 4, 8]
    assert state.thread_counts(8, False) == [8]


# --- paired readings and statistics ------------------------------------------------------------

@pytest.mark.slow
def test_each_round_runs_a_levels_implementations_back_to_back_and_ratios_are_paired(tmp_path):
    """Interleaved rounds: a level's implementations adjacent, so their ratios pair run by run; the
    Codon program against the best port too. Fixed ns per sample make every ratio exact."""
    calls = tmp_path / "calls.log"
    both = ("levels=v2,v3",)
    entries = [fake("good", "ns=100", *both, name="codon", kind="codon", levels=("v2", "v3")),
               fake("good", "ns=50", *both, name="c", levels=("v2", "v3")),
               fake("good", "ns=80", *both, name="zig", levels=("v2", "v3"))]
    proc, doc = run_bench(tmp_path, *entries, env={"FAKE_IMPL_LOG": str(calls)},
                          sizes=("--iters", "3000", "--verify-iters", "1000", "--repeats", "6", "--timeout", "20"))
    assert proc.returncode == 0, proc.stderr
    timed = [ln.split()[0] + " " + ln.split()[ln.split().index("--level") + 1]
             for ln in calls.read_text().splitlines() if "--iters 3000 " in ln]
    assert len(timed) == 2 * 3 * 6
    for k in range(0, len(timed), 3):                       # each cell's three runs back to back
        chunk = timed[k:k + 3]
        assert len({c.split()[1] for c in chunk}) == 1 and {c.split()[0] for c in chunk} == {"codon", "c", "zig"}
    codon = result(doc, "codon")["paired"]
    assert codon["against"] == "c" and codon["ratios"] == [2.0] * 6 and codon["read"] == "slower"
    assert result(doc, "zig", "v3")["paired"]["median"] == pytest.approx(1.6)
    assert "paired" not in result(doc, "c")                 # the fastest is not compared with itself
    best = doc["codon_vs_best_port"]["softplus v2"]
    assert (best["port"], best["median"], best["interval"], best["read"]) == ("c", 2.0, [2.0, 2.0], "slower")


def test_the_fastest_and_the_best_port_are_found_by_the_pairs_not_by_separate_medians():
    """A machine whose speed drifts from round to round: C's runs fell in its fast rounds, so its median
    is the smallest, yet in every round Mojo runs faster than C and Codon slower than Mojo (a case seen in
    a committed run, where the medians named C the best port and Codon tied it). The cell's fastest and
    Codon's best port are Mojo, the one the adjacent runs rank first."""
    import impls
    speed = [1.0, 1.0, 1.0, 1.0, 1.6, 1.6, 1.6]              # slow rounds, then fast ones
    c_ns = [60 / s for s in speed]
    per_round = {"c": c_ns, "mojo": [0.95 * t for t in c_ns], "codon": [1.07 * 0.95 * t for t in c_ns]}
    pairs, results = [], []
    for name, kind in (("codon", "codon"), ("c", "port"), ("mojo", "port")):
        p = state.Pair(impls.Impl(name, [name], kind, name, ["v1"]), "softplus", "v1", iters=1000)
        rounds = range(len(speed)) if name != "c" else range(4, len(speed))   # C timed in fast rounds only
        p.runs = [{"round": k, "seconds": per_round[name][k] * 1e-6, "cpu_seconds": per_round[name][k] * 1e-6}
                  for k in rounds]
        ns = analysis.median([r["seconds"] * 1e9 / p.iters for r in p.runs])
        pairs.append(p)
        results.append({"status": "ok", "ns_per_iter": ns})
    assert min(zip(results, "codon c mojo".split()), key=lambda e: e[0]["ns_per_iter"])[1] == "c"
    best = timing.compare_paired(pairs, results)["softplus v1"]
    assert best["port"] == "mojo" and best["median"] == pytest.approx(1.07) and best["read"] == "slower"
    assert results[0]["paired"]["against"] == "mojo" and results[1]["paired"]["median"] == pytest.approx(1 / 0.95)
    assert "paired" not in results[2]


def test_the_best_port_is_one_codon_is_behind_before_a_wider_tie():
    """Numba, timed in 15 rounds, ties Codon with a higher median than Mojo, which Codon is clearly behind
    (a case seen in a committed run: docs/findings/codon-against-the-best-port.md). The best port is Mojo,
    and the cell reads behind."""
    import impls
    codon = [100.0] * 9
    per_round = {"codon": codon, "mojo": [t / r for t, r in zip(codon, [1.02, 1.03, 1.01, 1.02, 1.04, 1.02, 1.01,
                                                                       1.03, 1.02])],
                 "numba": [t / r for t, r in zip(codon, [0.8, 1.3, 0.9, 1.4, 1.1, 0.7, 1.5, 1.2, 1.25])]}
    pairs, results = [], []
    for name, kind in (("codon", "codon"), ("mojo", "port"), ("numba", "port")):
        p = state.Pair(impls.Impl(name, [name], kind, name, ["v4"]), "softplus", "v4", iters=1000)
        p.runs = [{"round": k, "seconds": t * 1e-6, "cpu_seconds": t * 1e-6} for k, t in enumerate(per_round[name])]
        pairs.append(p)
        results.append({"status": "ok", "ns_per_iter": analysis.median(per_round[name])})
    numba = analysis.paired_reading(analysis.paired_ratios(pairs[0].runs, 1000, pairs[2].runs, 1000, "seconds"))
    assert numba["read"] == "tie" and numba["median"] > 1.02                 # by the median alone: Numba
    best = timing.compare_paired(pairs, results)["softplus v4"]
    assert (best["port"], best["read"]) == ("mojo", "slower") and best["median"] == pytest.approx(1.02)
    tie, behind = ("a", {"read": "tie", "median": 1.3}), ("b", {"read": "slower", "median": 1.01})
    assert analysis.hardest([tie, behind]) == behind and analysis.hardest([behind, tie]) == behind


def test_a_graph_peer_at_fewer_ops_is_not_the_fastest_of_the_ports_cell():
    """JAX's graph v3 runs 100 ops a sample, the programs 10,000: its time per sample is the smallest but
    not comparable, so no graph v3 entry is paired with it."""
    import impls
    pairs, results = [], []
    for name, kind, ops, ns in (("codon", "codon", 10000, 30000.0), ("c", "port", 10000, 36000.0),
                                ("jax", "peer", 100, 3700.0)):
        p = state.Pair(impls.Impl(name, [name], kind, name, []), "graph", "v3", ops=ops, iters=100)
        p.runs = [{"round": k, "seconds": ns * 1e-7, "cpu_seconds": ns * 1e-7} for k in range(5)]
        pairs.append(p)
        results.append({"status": "ok", "ns_per_iter": ns})
    best = timing.compare_paired(pairs, results)["graph v3"]
    assert (best["port"], best["read"]) == ("c", "faster")
    assert results[1]["paired"]["against"] == "codon" and "paired" not in results[2]


def test_paired_readings_come_from_the_rounds_both_ran_in():
    a = [{"round": 1, "seconds": 2.0}, {"round": 2, "seconds": 3.0}, {"round": 3, "seconds": 1.0}]
    b = [{"round": 1, "seconds": 1.0}, {"round": 3, "seconds": 2.0}]      # no run in round 2
    assert analysis.paired_ratios(a, 10, b, 10, "seconds") == [2.0, 0.5]
    assert analysis.paired_ratios(a, 10, b, 20, "seconds") == [4.0, 1.0]     # per sample: b ran twice the samples
    assert analysis.paired_ratios(a, 10, b, 10, "cpu_seconds") == []          # no such clock in the runs
    assert analysis.paired_reading([0.9, 1.1, 1.0, 0.95, 1.05, 1.0])["read"] == "tie"
    assert analysis.paired_reading([1.2, 1.3, 1.25, 1.4, 1.22, 1.31])["read"] == "slower"


def test_median_interval_is_the_tightest_at_95_percent():
    values = list(range(1, 21))
    random.Random(1).shuffle(values)
    low, high, coverage = analysis.median_ci(values)                          # n = 20: x(6)..x(15)
    assert (low, high) == (6, 15) and coverage == pytest.approx(1 - 2 * analysis.binomial_cdf(5, 20))
    assert coverage >= 0.95 > 1 - 2 * analysis.binomial_cdf(6, 20)            # one step tighter falls short
    assert analysis.median_ci(range(1, 10))[:2] == (2, 8)                     # n = 9: 96.1%
    assert analysis.median_ci(range(1, 10))[2] == pytest.approx(1 - 2 * 10 / 512)
    low, high, coverage = analysis.median_ci([3.0, 1.0, 2.0, 5.0, 4.0])      # n = 5 cannot reach 95%
    assert (low, high) == (1.0, 5.0) and coverage == pytest.approx(0.9375)
    assert analysis.median_ci([7.0]) == (7.0, 7.0, 0.0)
    assert analysis.overlap((1, 2), (2, 3)) and not analysis.overlap((1, 2), (2.5, 3))


def test_a_fixed_n_flag_reaches_only_its_own_kind_of_implementation():
    """--iters (a fixed N for the compiled implementations) took torch.compile's registry N (Impl.iters) away,
    so that a peer compiling for seconds a process was calibrated from N = 1, while --python-iters (for the
    interpreted ones and the peers) left it alone. Each flag now reaches only its own kind."""
    from harness import calibrate
    peer = impls.Impl("slowpeer", ["slowpeer"], "peer", "a peer with a fixed N", ["v2"], iters=200)
    port = impls.Impl("fixedport", ["fixedport"], "port", "a port with a fixed N", ["v2"], iters=300)
    for flags, want in ((["--iters", "5"], (200, 5)), (["--python-iters", "7"], (7, 300))):
        pairs = [state.Pair(peer, "softplus", "v2"), state.Pair(port, "softplus", "v2")]
        for p in pairs:
            p.status = state.PairStatus.VERIFIED
        assert calibrate.calibrate_all(pairs, bench.parse_args(flags)) == [], flags   # nothing was calibrated
        assert tuple(p.iters for p in pairs) == want, flags
