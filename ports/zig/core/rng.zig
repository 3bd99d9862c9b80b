// The input stream of contract §1: counter-based splitmix64, written out by hand so
// that every language draws the same numbers (never a standard-library RNG).

pub const GAMMA: u64 = 0x9E3779B97F4A7C15;
pub const MIX1: u64 = 0xBF58476D1CE4E5B9;
pub const MIX2: u64 = 0x94D049BB133111EB;
pub const UNIT: f64 = 1.0 / 9007199254740992.0; // 2^-53

/// The splitmix64 finalizer: a bijective scramble of one 64-bit word.
fn splitmix64(z0: u64) u64 {
    var z = z0;
    z = (z ^ (z >> 30)) *% MIX1;
    z = (z ^ (z >> 27)) *% MIX2;
    return z ^ (z >> 31);
}

/// The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`.
pub fn draw(seed: u64, k: u64) u64 {
    return splitmix64(seed +% k *% GAMMA);
}

/// The top 53 bits of z as a float in [0, 1) (through i64, as Codon's float(int(...)) does).
pub fn unit(z: u64) f64 {
    return @as(f64, @floatFromInt(@as(i64, @intCast(z >> 11)))) * UNIT;
}

const Point = struct { x: f64, y: f64 };

/// Sample i: (x_i, y_i), both in [-1, 1).
pub fn sample(seed: u64, i: u64) Point {
    const x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0;
    const y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0;
    return .{ .x = x, .y = y };
}
