"""Gradients from --eval (the v2 tape at one point) against a 50-digit oracle and finite differences."""
import math
import random

import pytest

from harness import oracle as ref

rng = random.Random(20261130)
POINTS = (
    [(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(40)]                    # the benchmark's range
    + [(-rng.uniform(0, 5), -rng.uniform(0, 5)) for _ in range(10)]                 # negative
    + [(rng.uniform(-30, 30), rng.uniform(-30, 30)) for _ in range(20)]             # |p| up to ~1800
    + [(0.0, 0.0), (0.0, 1.5), (-0.0, -2.0), (1.5, -1.5), (-2.5, 2.5), (1.0, -2.0)]  # zeros, s = 0, 2x + y = 0
    + [(20.0, 15.0), (-20.0, -15.0), (26.0, 1.0), (-26.0, -1.0), (30.0, 0.0), (-30.0, 7.0)]  # p = +-700 and beyond
    + [(1e-300, 1e-300), (-1e-300, 2.0), (1e-170, -1e-170), (5e-324, 1.0), (1e-8, -3e-8)]  # tiny
    + [(1e150, -1e150), (1e100, 1e50), (-1e154, 1e153), (1e-160, 1e160)]           # huge parts, finite p
)


@pytest.mark.parametrize("x, y", POINTS)
def test_eval_matches_the_exact_gradient(codon, x, y):
    got = codon.eval(repr(x), repr(y))
    want = ref.exact_point(x, y)
    bounds = ref.error_bounds(x, y)
    for name, g, w, b in zip(("f", "dfdx", "dfdy"), got, want, bounds):
        assert abs(g - w) <= b, f"{name} at ({x!r}, {y!r}): got {g!r}, exact {w!r}, bound {b:.3g}"


@pytest.mark.parametrize("x, y", POINTS[:8] + [(3.0, -1.0), (-4.0, 2.5), (0.3, 0.0)])
def test_eval_matches_finite_differences(codon, x, y):
    """Central differences of the program's own f agree with its gradient (to O(h^2))."""
    f, dfdx, dfdy = codon.eval(repr(x), repr(y))
    h = 1e-5 * max(1.0, abs(x), abs(y))
    fd_x = (codon.eval(repr(x + h), repr(y))[0] - codon.eval(repr(x - h), repr(y))[0]) / (2 * h)
    fd_y = (codon.eval(repr(x), repr(y + h))[0] - codon.eval(repr(x), repr(y - h))[0]) / (2 * h)
    scale = 1 + abs(f)
    assert abs(fd_x - dfdx) <= 1e-6 * scale, (fd_x, dfdx)
    assert abs(fd_y - dfdy) <= 1e-6 * scale, (fd_y, dfdy)


def test_eval_echoes_its_point_and_matches_the_contract_order(codon):
    for x, y in POINTS[:10]:
        out = codon.records("--eval", repr(x), repr(y))[0]
        assert (out["x"], out["y"]) == (x, y)
        assert (out["f"], out["dfdx"], out["dfdy"]) == ref.point(x, y)


def test_eval_at_saturation_is_exact(codon):
    f, dfdx, dfdy = codon.eval("30", "0")       # p = 900: softplus(p) = p, sigmoid = 1
    assert (f, dfdx, dfdy) == (900.0, 60.0, 30.0)
    f, dfdx, dfdy = codon.eval("30", "-60")     # p = -900: everything underflows to 0
    assert f == 0.0 and dfdx == 0.0 and dfdy == 0.0 and not math.copysign(1, f) < 0
