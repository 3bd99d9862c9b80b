# The input stream of contract §1: counter-based splitmix64, written out by hand so
# that every language draws the same numbers (never a standard-library RNG).

# Python ints never wrap, so each product is reduced mod 2^64 by hand.
GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
MASK = (1 << 64) - 1
UNIT = 1.0 / 9007199254740992.0  # 2^-53


def splitmix64(z):
    """The splitmix64 finalizer: a bijective scramble of one 64-bit word."""
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def draw(seed, k):
    """The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`."""
    return splitmix64((seed + k * GAMMA) & MASK)


def unit(z):
    """The top 53 bits of z as a float in [0, 1)."""
    return (z >> 11) * UNIT


def sample(seed, i):
    """Sample i: (x_i, y_i), both in [-1, 1)."""
    x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0
    y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0
    return x, y
