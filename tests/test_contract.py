"""Contract §1-§2 known answers: the reference itself, then every level of the program."""
import pytest

import reference as ref

ALL_LEVELS = ref.SEQUENTIAL_LEVELS + ref.BATCHED_LEVELS


def test_reference_draws_and_samples():
    assert [ref.draw(42, k) for k in range(1, 5)] == ref.KNOWN_DRAWS
    for i, xy in ref.KNOWN_SAMPLES.items():
        assert ref.sample(42, i) == xy


@pytest.mark.parametrize("n", sorted(ref.KNOWN_SUMS))
def test_reference_sums(n):
    assert tuple(f"{v:.17g}" for v in ref.run(42, n)) == ref.KNOWN_SUMS[n]


@pytest.mark.parametrize("n", sorted(ref.KNOWN_SUMS))
@pytest.mark.parametrize("level", ref.SEQUENTIAL_LEVELS)
def test_sequential_levels_print_the_known_digits(codon, level, n):
    out = codon.ok("--level", level, "--iters", str(n), "--json")
    f, dx, dy = ref.KNOWN_SUMS[n]
    assert f'"sum_f": {f}, "sum_dx": {dx}, "sum_dy": {dy}' in out
    text = codon.ok("--level", level, "--iters", str(n))
    assert all(digits in text for digits in ref.KNOWN_SUMS[n])


@pytest.mark.parametrize("n", sorted(ref.KNOWN_SUMS))
@pytest.mark.parametrize("level", ref.BATCHED_LEVELS)
def test_batched_levels_match_the_known_sums(codon, level, n):
    got = codon.sums(level, n)
    for value, known in zip(got, ref.KNOWN_SUMS[n]):
        assert ref.rel_diff(value, float(known)) <= ref.BATCHED_RTOL, (level, n, got)


def test_first_sample_is_the_contracts(codon):
    """N = 1 is one pass at (x_0, y_0): the sums are f and the gradient there."""
    x, y = ref.KNOWN_SAMPLES[0]
    assert codon.sums("v2", 1) == codon.eval(repr(x), repr(y))


@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1])
def test_sequential_levels_match_the_reference_for_other_seeds(codon, seed):
    want = ref.run(seed, 2000)
    for level in ref.SEQUENTIAL_LEVELS:
        assert codon.sums(level, 2000, seed) == tuple(want), level
