// Vector exp and log1p for the batched levels: glibc's libmvec at the widest vector the
// target CPU has, chosen when the program is built (core/target.zig, at comptime from the
// compile target's CPU features, as -mcpu=... gives them): 8 doubles (AVX-512F, _ZGVeN8v_*),
// 4 (AVX2, _ZGVdN4v_*), 2 (SSE2, _ZGVbN2v_*), or 1, glibc's scalar exp/log1p. Zig's @exp on a
// vector would lower to one scalar call per lane, so the libmvec calls are declared and called
// directly; only the one for this target is referenced, so a binary never holds a call its CPU
// lacks, and a scalar build does not link libmvec at all. The rest of the lane arithmetic is
// written WIDTH lanes at a time in the same vectors (ld, st).
const std = @import("std");
const Allocator = std.mem.Allocator;
const WIDTH = @import("target.zig").WIDTH;
const TARGET = @import("target.zig").TARGET;
const expf64 = @import("ops.zig").expf64;
const log1p = @import("ops.zig").log1p;

// Lane arrays start on a cache line (64 bytes, a whole number of vectors of any width), so that
// no vector load straddles two: BatchTape's arrays, LaneSums' and fused-simd's locals say
// align(ALIGN) (the Codon program's alloc_lanes does the same by hand).
pub const ALIGN = 64;

const VECTOR_NAME = switch (WIDTH) {
    8 => "AVX-512F (libmvec _ZGVeN8v)",
    4 => "AVX2 (libmvec _ZGVdN4v)",
    2 => "SSE2 (libmvec _ZGVbN2v)",
    else => "scalar (glibc exp/log1p)",
};

/// One line naming the build target and the vector width, as --version prints it.
pub const target_text = std.fmt.comptimePrint("target {s}, vector width {d} doubles: {s}", .{ TARGET, WIDTH, VECTOR_NAME });

/// Room for n doubles starting on a cache line, so that no vector load straddles two (the graph
/// tapes' lanes; the softplus levels' fixed arrays say align(ALIGN) instead).
pub fn alloc_lanes(gpa: Allocator, n: usize) Allocator.Error![]align(ALIGN) f64 {
    return gpa.alignedAlloc(f64, .fromByteUnits(ALIGN), n);
}

pub const V = @Vector(WIDTH, f64); // one libmvec argument: a zmm, ymm or xmm register (or one f64)
extern "mvec" fn _ZGVeN8v_exp(x: @Vector(8, f64)) callconv(.c) @Vector(8, f64);
extern "mvec" fn _ZGVeN8v_log1p(x: @Vector(8, f64)) callconv(.c) @Vector(8, f64);
extern "mvec" fn _ZGVdN4v_exp(x: @Vector(4, f64)) callconv(.c) @Vector(4, f64);
extern "mvec" fn _ZGVdN4v_log1p(x: @Vector(4, f64)) callconv(.c) @Vector(4, f64);
extern "mvec" fn _ZGVbN2v_exp(x: @Vector(2, f64)) callconv(.c) @Vector(2, f64);
extern "mvec" fn _ZGVbN2v_log1p(x: @Vector(2, f64)) callconv(.c) @Vector(2, f64);

/// exp of WIDTH lanes: one libmvec call (WIDTH is comptime: only its prong is compiled).
fn vexp(x: V) V {
    return switch (WIDTH) {
        8 => _ZGVeN8v_exp(x),
        4 => _ZGVdN4v_exp(x),
        2 => _ZGVbN2v_exp(x),
        else => @splat(expf64(x[0])),
    };
}

/// log1p of WIDTH lanes: one libmvec call.
fn vlog1p(x: V) V {
    return switch (WIDTH) {
        8 => _ZGVeN8v_log1p(x),
        4 => _ZGVdN4v_log1p(x),
        2 => _ZGVbN2v_log1p(x),
        else => @splat(log1p(x[0])),
    };
}

// The lane loops go WIDTH lanes at a time through @Vector(WIDTH, f64), Zig's portable SIMD type
// (one register of the target's widest kind): written over single f64s, LLVM leaves them scalar
// (the vars are slices of one array at run-time offsets). ld and st take any array of lanes (a
// pointer to Lanes, or to the graph workload's GraphLanes).
pub fn ld(l: anytype, j: usize) V {
    return l[j..][0..WIDTH].*;
}

pub fn st(l: anytype, j: usize, v: V) void {
    l[j..][0..WIDTH].* = v;
}

// The three lane functions take n, the lanes (comptime: BATCH for the softplus levels, a graph
// var's GRAPH_BATCH or a SOFTMAX4's four vars for the graph), a multiple of WIDTH.

/// out[j] = exp(src[j]) for j < n (src may be out).
pub fn exp_lanes(comptime n: usize, src: *const [n]f64, out: *[n]f64) void {
    comptime std.debug.assert(n % WIDTH == 0);
    var j: usize = 0;
    while (j < n) : (j += WIDTH) out[j..][0..WIDTH].* = vexp(src[j..][0..WIDTH].*);
}

/// out[j] = log1p(src[j]) for j < n (src may be out).
pub fn log1p_lanes(comptime n: usize, src: *const [n]f64, out: *[n]f64) void {
    comptime std.debug.assert(n % WIDTH == 0);
    var j: usize = 0;
    while (j < n) : (j += WIDTH) out[j..][0..WIDTH].* = vlog1p(src[j..][0..WIDTH].*);
}

/// out[j] = exp(-|p[j]|) for j < n.
pub fn exp_neg_abs_lanes(comptime n: usize, p: *const [n]f64, out: *[n]f64) void {
    comptime std.debug.assert(n % WIDTH == 0);
    var j: usize = 0;
    while (j < n) : (j += WIDTH) out[j..][0..WIDTH].* = -@abs(@as(V, p[j..][0..WIDTH].*));
    exp_lanes(n, out, out);
}
