// The scalar math of contract §2, shared by every level and baseline, so that the
// levels differ only in how they organise the graph, never in the arithmetic.

// glibc's exp is reached through its _Float64 alias expf64 (the same function, same address):
// the name `exp` would bind to the copy in Zig's statically linked compiler_rt (musl's exp,
// which differs from glibc's in the last bit on some arguments).
pub extern "c" fn expf64(x: f64) f64;
pub extern "c" fn log1p(x: f64) f64; // compiler_rt has none: this is glibc's

/// The checksums of a run: plain sums over the samples, in index order.
pub const Sums = struct {
    f: f64 = 0.0,
    dx: f64 = 0.0,
    dy: f64 = 0.0,

    pub fn add(self: Sums, o: Sums) Sums {
        return .{ .f = self.f + o.f, .dx = self.dx + o.dx, .dy = self.dy + o.dy };
    }
};

// Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could overflow).
// The *_e forms take e ready-made, so that a caller computing both shares one exp.

pub fn exp_neg_abs(p: f64) f64 {
    return expf64(-@abs(p));
}

/// log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p)).
pub fn softplus_e(p: f64, e: f64) f64 {
    return if (p > 0.0) p + log1p(e) else log1p(e);
}

/// d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p)).
pub fn sigmoid_e(p: f64, e: f64) f64 {
    return if (p >= 0.0) 1.0 / (1.0 + e) else e / (1.0 + e);
}

pub fn softplus(p: f64) f64 {
    return softplus_e(p, exp_neg_abs(p));
}

pub fn sigmoid(p: f64) f64 {
    return sigmoid_e(p, exp_neg_abs(p));
}
