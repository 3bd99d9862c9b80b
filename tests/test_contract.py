"""Contract §1-§2 known answers: the reference itself, then every level of the program."""
import pytest

from harness import oracle as ref


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


# Sample 0's x at the ends of [-1, 1) and on both sides of 0, where the programs' bit-built
# 2 unit(z) - 1 (core/rng.codon) switches between its two cases; z's low 11 bits, which
# unit drops, all set.
EDGE_TOP53 = [0, 1, 2**52 - 1, 2**52, 2**52 + 1, 2**53 - 1, 0x15555555555555, 0x0AAAAAAAAAAAAA]


def test_reference_seed_drawing():
    for m in EDGE_TOP53:
        z = m << 11 | 0x7FF
        assert ref.mix(ref.unmix(z)) == z
        assert ref.draw(ref.seed_drawing(z), 1) == z
    assert ref.sample(ref.seed_drawing(0x7FF), 0)[0] == -1.0
    assert ref.sample(ref.seed_drawing(2**63 | 0x7FF), 0)[0] == 0.0


@pytest.mark.parametrize("m", EDGE_TOP53)
def test_every_level_draws_the_contracts_inputs_at_the_edges(codon, m):
    seed = ref.seed_drawing(m << 11 | 0x7FF)
    want = ref.run(seed, 1)
    for level in ref.SEQUENTIAL_LEVELS:
        assert codon.sums(level, 1, seed) == tuple(want), level
    # n = 1 fills a batch's first lane one sample at a time; a whole batch of 256 (softplus/simd.codon's
    # BATCH) fills its lanes in vectors (core/rng.codon's signed_units)
    for n in [1, 256, 257]:
        want = ref.run(seed, n)
        for level in ref.BATCHED_LEVELS:
            got = codon.sums(level, n, seed)
            assert all(ref.rel_diff(g, w) <= ref.BATCHED_RTOL for g, w in zip(got, want)), (level, n, got)


@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1])
def test_sequential_levels_match_the_reference_for_other_seeds(codon, seed):
    want = ref.run(seed, 2000)
    for level in ref.SEQUENTIAL_LEVELS:
        assert codon.sums(level, 2000, seed) == tuple(want), level
