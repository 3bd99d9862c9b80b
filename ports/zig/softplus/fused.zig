// Baseline `fused` (not a level): the same math written out by hand with no tape or
// graph, the floor that the v2 tape can approach.
const sample = @import("../core/rng.zig").sample;
const Sums = @import("../core/ops.zig").Sums;
const exp_neg_abs = @import("../core/ops.zig").exp_neg_abs;
const softplus_e = @import("../core/ops.zig").softplus_e;
const sigmoid_e = @import("../core/ops.zig").sigmoid_e;
const WIDTH = @import("../core/target.zig").WIDTH;
const ALIGN = @import("../core/vmath.zig").ALIGN;
const V = @import("../core/vmath.zig").V;
const ld = @import("../core/vmath.zig").ld;
const st = @import("../core/vmath.zig").st;
const exp_neg_abs_lanes = @import("../core/vmath.zig").exp_neg_abs_lanes;
const log1p_lanes = @import("../core/vmath.zig").log1p_lanes;
const BATCH = @import("simd.zig").BATCH;
const Lanes = @import("simd.zig").Lanes;
const fill_inputs = @import("simd.zig").fill_inputs;
const LaneSums = @import("simd.zig").LaneSums;
const n_batches = @import("simd.zig").n_batches;

/// Baseline `fused` (not a level): the same math written out by hand with no tape or graph.
pub fn run_fused(seed: u64, n: u64) Sums {
    var sum_f: f64 = 0.0;
    var sum_dx: f64 = 0.0;
    var sum_dy: f64 = 0.0;
    var i: u64 = 0;
    while (i < n) : (i += 1) {
        const xy = sample(seed, i);
        const x = xy.x;
        const s = x + xy.y;
        const p = s * x;
        const e = exp_neg_abs(p);
        const g = sigmoid_e(p, e);
        sum_f += softplus_e(p, e);
        sum_dx += s * g + x * g;
        sum_dy += x * g;
    }
    return .{ .f = sum_f, .dx = sum_dx, .dy = sum_dy };
}

/// Baseline `fused-simd` (not a level): the same over batches of BATCH samples with v3's vector
/// math and lane sums, no tape: the floor for v3 and v4.
pub fn run_fused_simd(seed: u64, n: u64) Sums {
    var x: Lanes align(ALIGN) = undefined;
    var y: Lanes align(ALIGN) = undefined;
    var p: Lanes align(ALIGN) = undefined;
    var e: Lanes align(ALIGN) = undefined;
    var l: Lanes align(ALIGN) = undefined;
    var f: Lanes align(ALIGN) = undefined;
    var dx: Lanes align(ALIGN) = undefined;
    var dy: Lanes align(ALIGN) = undefined;
    var acc: LaneSums = .{};
    const zero: V = @splat(0.0);
    const one: V = @splat(1.0);
    var batch: u64 = 0;
    while (batch < n_batches(n)) : (batch += 1) {
        const first = batch * BATCH;
        const lanes: usize = @intCast(@min(BATCH, n - first));
        fill_inputs(&x, &y, seed, first, lanes);
        var j: usize = 0;
        while (j < BATCH) : (j += WIDTH) st(&p, j, (ld(&x, j) + ld(&y, j)) * ld(&x, j));
        exp_neg_abs_lanes(BATCH, &p, &e);
        log1p_lanes(BATCH, &e, &l);
        j = 0;
        while (j < BATCH) : (j += WIDTH) {
            const xj = ld(&x, j);
            const s = xj + ld(&y, j);
            const pj = ld(&p, j);
            const ej = ld(&e, j);
            const g = @select(f64, pj >= zero, one / (one + ej), ej / (one + ej)); // sigmoid_e
            st(&f, j, @select(f64, pj > zero, pj + ld(&l, j), ld(&l, j))); // softplus_e
            st(&dx, j, s * g + xj * g);
            st(&dy, j, xj * g);
        }
        acc.add(&f, &dx, &dy, lanes);
    }
    return acc.total();
}
