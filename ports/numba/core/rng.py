# The input stream of contract §1: counter-based splitmix64, written out by hand so
# that every language draws the same numbers (never a standard-library RNG).
#
# The CPython port's functions (ports/python/core/rng.py) spelled in np.uint64: Numba types
# a literal int as int64, `2 * i + 2` on a uint64 i gives an int64, and int64 mixed with
# uint64 gives a float64, which changes the stream. Every constant and shift count here is a
# np.uint64 and so every product wraps mod 2^64 as the contract's arithmetic does.
import numpy as np
from numba import njit

GAMMA = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
UNIT = 1.0 / 9007199254740992.0  # 2^-53
S30, S27, S31, S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
ONE, TWO = np.uint64(1), np.uint64(2)


@njit(cache=True)
def splitmix64(z):
    """The splitmix64 finalizer: a bijective scramble of one 64-bit word."""
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return z ^ (z >> S31)


@njit(cache=True)
def draw(seed, k):
    """The k-th output (k >= 1) of the splitmix64 stream seeded with `seed` (both uint64)."""
    return splitmix64(seed + k * GAMMA)


@njit(cache=True)
def unit(z):
    """The top 53 bits of z as a float in [0, 1)."""
    return float(z >> S11) * UNIT


@njit(cache=True)
def sample(seed, i):
    """Sample i (an int64 index): (x_i, y_i), both in [-1, 1)."""
    k = np.uint64(i) * TWO
    x = 2.0 * unit(draw(seed, k + ONE)) - 1.0
    y = 2.0 * unit(draw(seed, k + TWO)) - 1.0
    return x, y
