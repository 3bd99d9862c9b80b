// What the program is built for. The Codon program's Makefile writes its own copy of this
// file from CPU=...; here the compile target itself says it (builtin.cpu, from -mcpu=...), so
// WIDTH (from the target's vector extensions) and TARGET are worked out at comptime.
const std = @import("std");
const builtin = @import("builtin");

const x86_64 = builtin.cpu.arch == .x86_64;

fn target_has(comptime feature: std.Target.x86.Feature) bool {
    return x86_64 and std.Target.x86.featureSetHas(builtin.cpu.features, feature);
}

pub const WIDTH: usize = if (target_has(.avx512f)) 8 else if (target_has(.avx2)) 4 else if (target_has(.sse2)) 2 else 1;

/// The target's name as the Makefile's CPU= spells it (Zig's x86_64_v3 is x86-64-v3; for
/// -mcpu=native, the host CPU's model, e.g. znver4).
pub const TARGET = blk: {
    var name: [builtin.cpu.model.name.len]u8 = undefined;
    for (builtin.cpu.model.name, 0..) |c, k| name[k] = if (c == '_') '-' else c;
    const final = name;
    break :blk &final;
};
