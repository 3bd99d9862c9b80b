// The input stream of contract §1: counter-based splitmix64, written out by hand so
// that every language draws the same numbers (never a standard-library RNG).

const GAMMA: u64 = 0x9E3779B97F4A7C15;
const MIX1: u64 = 0xBF58476D1CE4E5B9;
const MIX2: u64 = 0x94D049BB133111EB;
const UNIT: f64 = 1.0 / 9007199254740992.0; // 2^-53

/// The splitmix64 finalizer: a bijective scramble of one 64-bit word.
#[inline]
fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MIX1);
    z = (z ^ (z >> 27)).wrapping_mul(MIX2);
    z ^ (z >> 31)
}

/// The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`.
#[inline]
pub fn draw(seed: u64, k: u64) -> u64 {
    splitmix64(seed.wrapping_add(k.wrapping_mul(GAMMA)))
}

/// The top 53 bits of z as a float in [0, 1).
#[inline]
pub fn unit(z: u64) -> f64 {
    // Below 2^53, so the signed conversion is exact.
    ((z >> 11) as i64) as f64 * UNIT
}

/// Sample i: (x_i, y_i), both in [-1, 1).
#[inline]
pub fn sample(seed: u64, i: u64) -> (f64, f64) {
    let x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0;
    let y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0;
    (x, y)
}
