/* The input stream of contract §1: counter-based splitmix64, written out by hand so
 * that every language draws the same numbers (never a standard-library RNG). */

#define GAMMA UINT64_C(0x9E3779B97F4A7C15)
#define MIX1 UINT64_C(0xBF58476D1CE4E5B9)
#define MIX2 UINT64_C(0x94D049BB133111EB)
#define UNIT (1.0 / 9007199254740992.0) /* 2^-53 */

/* The splitmix64 finalizer: a bijective scramble of one 64-bit word. */
static inline uint64_t splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * MIX1;
    z = (z ^ (z >> 27)) * MIX2;
    return z ^ (z >> 31);
}

/* The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`. */
static inline uint64_t draw(uint64_t seed, int64_t k)
{
    return splitmix64(seed + (uint64_t)k * GAMMA);
}

/* The top 53 bits of z as a double in [0, 1); they fit a signed conversion exactly. */
static inline double unit(uint64_t z)
{
    return (double)(int64_t)(z >> 11) * UNIT;
}

/* Sample i: (x_i, y_i), both in [-1, 1). */
static inline void sample(uint64_t seed, int64_t i, double *x, double *y)
{
    *x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0;
    *y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0;
}
