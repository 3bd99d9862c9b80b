// Level v0 (naive): fresh heap nodes every iteration, linked by pointers; values are
// recomputed on demand and backward recurses through the graph.
const std = @import("std");
const Allocator = std.mem.Allocator;
const sample = @import("../core/rng.zig").sample;
const Sums = @import("../core/ops.zig").Sums;
const Node = @import("nodes.zig").Node;

/// Fresh heap nodes every iteration from `gpa` (the C library's malloc/free, as in the C port),
/// linked by pointers and freed at the end of the iteration.
pub fn run_v0(gpa: Allocator, seed: u64, n: u64) Allocator.Error!Sums {
    var sum_f: f64 = 0.0;
    var sum_dx: f64 = 0.0;
    var sum_dy: f64 = 0.0;
    var i: u64 = 0;
    while (i < n) : (i += 1) {
        const xy = sample(seed, i);
        const x = try Node.create(gpa, .leaf, xy.x, null, null);
        defer gpa.destroy(x);
        const y = try Node.create(gpa, .leaf, xy.y, null, null);
        defer gpa.destroy(y);
        const s = try Node.create(gpa, .sum, 0.0, x, y);
        defer gpa.destroy(s);
        const p = try Node.create(gpa, .prod, 0.0, s, x);
        defer gpa.destroy(p);
        const f = try Node.create(gpa, .softplus, 0.0, p, null);
        defer gpa.destroy(f);
        f.backward(1.0);
        sum_f += f.value();
        sum_dx += x.grad;
        sum_dy += y.grad;
    }
    return .{ .f = sum_f, .dx = sum_dx, .dy = sum_dy };
}
