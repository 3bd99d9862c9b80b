"""The levels agree with each other, at any size and seed, and every run is repeatable."""
import subprocess
import sys

import pytest

from harness import oracle as ref

SIZES = [1, 2, 7, 255, 256, 257, 1023, 10_007]   # around the batch size (256) and a prime
SEEDS = [42, 0, 123456789, 2**63, 2**64 - 1]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_sequential_levels_agree_digit_for_digit(codon, seed, n):
    results = {level: codon.sums(level, n, seed) for level in ref.SEQUENTIAL_LEVELS}
    assert len(set(results.values())) == 1, results


@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("n", SIZES)
def test_batched_levels_agree_with_v2(codon, seed, n):
    v2 = codon.sums("v2", n, seed)
    for level in ref.BATCHED_LEVELS:
        got = codon.sums(level, n, seed)
        for a, b in zip(got, v2):
            assert ref.rel_diff(a, b) <= ref.BATCHED_RTOL, (level, n, seed, got, v2)


@pytest.mark.parametrize("n", [1, 3, 256, 257, 10_007, 100_000])
def test_v4_agrees_with_itself_and_v3_for_any_thread_count(codon, n):
    v3 = codon.sums("v3", n)
    for threads in [1, 2, 3, 7, 64]:
        got = codon.sums("v4", n, threads=threads)
        assert got == codon.sums("v4", n, threads=threads), "v4 is not repeatable"
        for a, b in zip(got, v3):
            assert ref.rel_diff(a, b) <= ref.BATCHED_RTOL, (threads, got, v3)


def test_v4_with_one_thread_is_v3(codon):
    """One thread takes every batch in order, so it sums exactly as v3 does."""
    assert codon.sums("v4", 10_007, threads=1) == codon.sums("v3", 10_007)


def test_v4_reports_its_threads_and_the_others_one(codon):
    records = codon.records("--iters", "100", "--threads", "3")
    assert [(r["level"], r["threads"]) for r in records] == [
        ("v0", 1), ("v1", 1), ("v2", 1), ("v3", 1), ("v4", 3)]


@pytest.mark.parametrize("threads", [3, 7, 64])
def test_v4_gives_the_same_digits_for_its_thread_count_however_the_threads_are_scheduled(codon, threads):
    """v4 adds its threads' partial sums in thread order (softplus/threads.codon), so a thread count always
    gives the same digits: here with no neighbour and beside two busy processes, which change the order the
    threads finish in. Two threads cannot tell (a + b is b + a in floating point): three or more can."""
    runs = [codon.sums("v4", 300_007, 99, threads=threads) for _ in range(3)]
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        runs += [codon.sums("v4", 300_007, 99, threads=threads) for _ in range(5)]
    finally:
        for s in spinners:
            s.kill()
            s.wait()
    assert len(set(runs)) == 1, runs


def test_a_large_run_matches_the_reference(codon):
    want = ref.run(7, 100_000)
    assert codon.sums("v2", 100_000, 7) == tuple(want)
