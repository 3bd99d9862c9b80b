"""A second oracle for the graph's known answers (contract-graph G4), sharing no code with scripts/harness/oracle.py
and needing no library: the graph of G1-G2 evaluated in 50-digit decimal arithmetic from the
mathematical definitions, and every gradient by central finite differences of that evaluation.

A node's gradient (G3) is d loss / d v_j with the nodes upstream of j held fixed: the derivative of the
loss when node j's value is nudged by h after it is computed, everything downstream recomputed. With
h = 1e-20 at 50 digits the difference quotient is exact to about 1e-30, far below a float's 1e-16, so the
agreement measured is that of the float programs (docs/contract-graph.md G4 states it).
"""
from __future__ import annotations

from decimal import Decimal, localcontext

import pytest

from harness import oracle    # only for the known answers' table, which test_graph_reference checks against the docs

DIGITS = 50
H = Decimal("1e-20")
MASK = (1 << 64) - 1


def splitmix_draw(seed: int, k: int) -> int:
    """contract.md §1, written out again: the k-th output of splitmix64 seeded with `seed`."""
    z = (seed + k * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def inputs(seed: int, s: int) -> list[Decimal]:
    """G1, exactly: each input is a double, and a Decimal holds a double without rounding."""
    return [Decimal(2 * ((splitmix_draw(seed, 100 * s + i + 1) >> 11) * 2.0**-53) - 1) for i in range(100)]


def forward(xs: list[Decimal], m: int, nudge: tuple[int, Decimal] | None = None) -> list[Decimal]:
    """Every node's value (G2), with node `nudge[0]`'s value moved by nudge[1] once it is made."""
    v: list[Decimal] = []

    def made(x: Decimal) -> None:
        v.append(x + nudge[1] if nudge and nudge[0] == len(v) else x)

    for x in xs:
        made(x)
    for k in range(m):
        n, kind = len(v), k % 4
        if kind == 0:
            made((1 + v[n - 10].exp()).ln())                     # softplus(a) = ln(1 + e^a)
        elif kind == 1:
            made(v[n - 30] + v[n - 25] + v[n - 20] + v[n - 15])
        elif kind == 2:
            made(v[n - 20] * v[n - 10])
        else:
            e = [v[n - 4 + j].exp() for j in range(4)]           # the max shift cancels exactly
            total = sum(e)
            for j in range(4):
                made(e[j] / total)
    return v


def sample_sums(seed: int, s: int, m: int) -> tuple[Decimal, Decimal, Decimal]:
    """loss, grad_in, grad_all of sample s (G3), the gradients by central differences."""
    xs = inputs(seed, s)
    loss = sum(forward(xs, m))
    grads = [(sum(forward(xs, m, (j, H))) - sum(forward(xs, m, (j, -H)))) / (2 * H)
             for j in range(100 + m + 3 * (m // 4))]
    return loss, sum((i + 1) * grads[i] for i in range(100)), sum(grads)


# M = 100 takes seconds in 50-digit decimals: make test-fast leaves it out (pytest.ini).
@pytest.mark.parametrize("m, n", [(1, 1), (4, 1), (10, 3), pytest.param(100, 2, marks=pytest.mark.slow)])
def test_the_known_answers_agree_with_a_decimal_evaluation(m, n):
    with localcontext() as ctx:
        ctx.prec = DIGITS
        totals = [sum(parts) for parts in zip(*(sample_sums(42, s, m) for s in range(n)))]
    known = oracle.GRAPH_KNOWN[(m, n)]
    for name, exact, printed in zip(("sum_loss", "sum_grad_in", "sum_grad_all"), totals, known):
        rel = abs(Decimal(printed) - exact) / abs(exact)
        print(f"M={m} N={n} {name}: relative difference {rel:.2e}")
        assert rel <= Decimal("3e-14"), (m, n, name, printed, exact, rel)
