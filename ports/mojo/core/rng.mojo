# The input stream of contract §1: counter-based splitmix64, written out by hand so
# that every language draws the same numbers (never a standard-library RNG).

comptime GAMMA: UInt64 = 0x9E3779B97F4A7C15
comptime MIX1: UInt64 = 0xBF58476D1CE4E5B9
comptime MIX2: UInt64 = 0x94D049BB133111EB
comptime UNIT: Float64 = 1.0 / 9007199254740992.0  # 2^-53


@always_inline
def splitmix64(z0: UInt64) -> UInt64:
    """The splitmix64 finalizer: a bijective scramble of one 64-bit word."""
    var z = (z0 ^ (z0 >> 30)) * MIX1
    z = (z ^ (z >> 27)) * MIX2
    return z ^ (z >> 31)


@always_inline
def draw(seed: UInt64, k: Int) -> UInt64:
    """The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`."""
    return splitmix64(seed + UInt64(k) * GAMMA)


@always_inline
def unit(z: UInt64) -> Float64:
    """The top 53 bits of z as a double in [0, 1); they fit a signed conversion exactly."""
    return Float64(Int64(z >> 11)) * UNIT


@always_inline
def sample(seed: UInt64, i: Int) -> Tuple[Float64, Float64]:
    """Sample i: (x_i, y_i), both in [-1, 1)."""
    return (2.0 * unit(draw(seed, 2 * i + 1)) - 1.0, 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0)


# The stream on w samples at once, for the batched levels' inputs (a loop over `sample` stays
# scalar): the same integer arithmetic (wrapping, as UInt64's) and exact conversion, so the same
# bits as `sample`.
@always_inline
def draw_lanes[w: Int](seed: UInt64, k: SIMD[DType.uint64, w]) -> SIMD[DType.uint64, w]:
    """draw(seed, k) of each lane's k."""
    var z = SIMD[DType.uint64, w](seed) + k * SIMD[DType.uint64, w](GAMMA)
    z = (z ^ (z >> 30)) * SIMD[DType.uint64, w](MIX1)
    z = (z ^ (z >> 27)) * SIMD[DType.uint64, w](MIX2)
    return z ^ (z >> 31)


@always_inline
def signed_unit_lanes[w: Int](z: SIMD[DType.uint64, w]) -> SIMD[DType.float64, w]:
    """2 unit(z) - 1 of each lane, as `sample` makes x and y."""
    var u = (z >> 11).cast[DType.int64]().cast[DType.float64]() * UNIT
    return 2.0 * u - 1.0
