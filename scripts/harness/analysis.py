"""Distribution-free statistics of repeated timings, and pairing: shared by bench and report.

Run times are skewed (noise only ever adds time) and few, so no normal approximation: the
median, and a confidence interval for it from order statistics. Whatever the distribution,
the number of runs below the true median is Binomial(n, 1/2), so [x(k), x(n+1-k)] of the
sorted runs covers the median with probability 1 - 2 P(B <= k-1).
"""
from __future__ import annotations

import statistics
from math import comb
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")


def binomial_cdf(j: int, n: int) -> float:
    """P(B <= j) for B ~ Binomial(n, 1/2)."""
    return sum(comb(n, i) for i in range(j + 1)) / 2**n


def median_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(low, high, coverage) of a confidence interval for the median of `values`.

    The interval is [x(k), x(n+1-k)] (1-based order statistics) with k the largest for which
    the coverage stays at least `level`. Fewer than 6 values cannot reach 95%: the interval is
    then [min, max] and the coverage returned (1 - 2^(1-n)) is below `level`; say so.
    """
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("no values")
    alpha = (1 - level) / 2
    k = 1
    while k + 1 <= (n + 1) // 2 and binomial_cdf(k, n) <= alpha:
        k += 1
    return xs[k - 1], xs[n - k], 1 - 2 * binomial_cdf(k - 1, n)


def median(values: Sequence[float]) -> float:
    """The median (the mean of the middle two for an even count)."""
    return statistics.median(values)


def overlap(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether the intervals a = (low, high) and b = (low, high) share a point: a tie."""
    return a[0] <= b[1] and b[0] <= a[1]


def paired_ratios(a_runs: list[dict[str, Any]], a_iters: int, b_runs: list[dict[str, Any]], b_iters: int,
                  key: str) -> list[float]:
    """a's time per sample over b's, round by round, from two programs' timed runs (the raw file's `runs`,
    each with its `round`): the rounds in which both ran, adjacent to each other; `key` names the clock
    (`seconds` or `cpu_seconds`)."""
    theirs = {r["round"]: r[key] / b_iters for r in b_runs if "round" in r and key in r}
    return [r[key] / a_iters / theirs[r["round"]] for r in a_runs
            if r.get("round") in theirs and theirs[r["round"]] > 0 and key in r]


# A paired reading of Codon's time over another's, as Codon's standing against it.
STANDING = {"faster": "ahead", "tie": "tie", "slower": "behind"}


def paired_reading(ratios: list[float]) -> dict[str, Any]:
    """The median of paired ratios, its 95% distribution-free interval, and what it reads as: a tie
    when the interval holds 1.0, else faster or slower."""
    low, high, coverage = median_ci(ratios)
    return {"ratios": ratios, "median": median(ratios), "interval": [low, high], "coverage": coverage,
            "read": "tie" if low <= 1.0 <= high else ("faster" if high < 1.0 else "slower")}


def fastest(cell: Sequence[T], median_of: Callable[[T], float], ratios_of: Callable[[T, T], list[float]]) -> T:
    """A cell's fastest, by its adjacent runs: the one of smallest median per sample is the first guess (the
    first of equals), and whichever beats it by most in their paired ratios (`ratios_of(a, b)`: a over b, a
    median below 1.00) takes its place. The medians of separate runs can disagree with the pairs when the
    machine's speed drifts from round to round (tests replay such a run: docs/benchmarking.md)."""
    first = min(cell, key=median_of)
    best, best_median = first, 1.0
    for c in cell:
        ratios = ratios_of(c, first) if c is not first else []
        if ratios and median(ratios) < best_median:
            best, best_median = c, median(ratios)
    return best


def no_pairs(a: Any, b: Any) -> list[float]:
    """ratios_of for a run without adjacent pairs: fastest is then the smallest median."""
    return []


WORSE = {"faster": 0, "tie": 1, "slower": 2}      # paired_reading's reads, from best to worst


def hardest(readings: Sequence[tuple[T, dict[str, Any]]]) -> tuple[T, dict[str, Any]]:
    """Of (other, paired reading of one side over other), the other that side fares worst against: the
    worst read (slower, then a tie, then faster), then the largest median of its paired ratios (how Codon's
    best port is named). By the median alone, a tie of a few wide pairs would hide a port the side is
    clearly behind."""
    return max(readings, key=lambda r: (WORSE[r[1]["read"]], r[1]["median"]))
