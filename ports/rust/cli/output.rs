// Output of contract §5. Rust has no %g, so g17 builds C's "%.17g" from Rust's exact
// (correctly rounded, ties to even, like glibc) scientific formatting.
use std::io::{self, Write};
use crate::core::ops::Sums;
use crate::graph::recipe::GraphSums;

const IMPL: &str = "rust";

/// Prints one line and flushes it, so that each row appears as its level finishes.
pub fn emit(line: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{}", line)?;
    out.flush()
}

/// 17 significant digits, exactly as C's printf("%.17g"): enough to round-trip any double.
fn g17(v: f64) -> String {
    const P: i32 = 17;
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let sci = format!("{:.*e}", (P - 1) as usize, v); // "-d.dddddddddddddddde-5"
    let (mantissa, exp) = match sci.split_once('e') {
        Some(parts) => parts,
        None => return sci,
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect(); // P digits
    let body = if (-4..P).contains(&exp) {
        // %f style with P - 1 - exp decimals, trailing zeros (and a bare point) dropped
        let (int, frac) = if exp >= 0 {
            let (int, frac) = digits.split_at(exp as usize + 1);
            (int.to_string(), frac.to_string())
        } else {
            ("0".to_string(), "0".repeat((-exp - 1) as usize) + &digits)
        };
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() { int } else { format!("{}.{}", int, frac) }
    } else {
        // %e style: trailing zeros dropped, exponent signed with at least two digits
        let (lead, frac) = digits.split_at(1);
        let frac = frac.trim_end_matches('0');
        let mant = if frac.is_empty() { lead.to_string() } else { format!("{}.{}", lead, frac) };
        format!("{}e{}{:02}", mant, if exp < 0 { '-' } else { '+' }, exp.abs())
    };
    format!("{}{}", sign, body)
}

/// One level's run (the Codon program's Result; renamed, Result being Rust's error type).
pub struct RunResult {
    pub level: &'static str,
    pub iters: u64,
    pub seed: u64,
    pub threads: usize,
    pub seconds: f64,
    pub cpu_seconds: f64, // the CPU time of the same region (contract §5)
    pub sums: Sums,
}

impl RunResult {
    fn ns_per_iter(&self) -> f64 {
        self.seconds * 1e9 / self.iters as f64
    }
}

/// One level's run of the graph workload.
pub struct GraphResult {
    pub level: &'static str,
    pub ops: usize,
    pub iters: u64,
    pub seed: u64,
    pub threads: usize,
    pub seconds: f64,
    pub cpu_seconds: f64,
    pub sums: GraphSums,
}

impl GraphResult {
    fn ns_per_iter(&self) -> f64 {
        self.seconds * 1e9 / self.iters as f64
    }

    fn ns_per_op(&self) -> f64 {
        self.ns_per_iter() / self.ops as f64
    }
}

// Text columns: (name, width), negative widths right-aligned.
const COLUMNS: [(&str, i32); 10] = [
    ("impl", 6),
    ("level", 11),
    ("threads", -7),
    ("iters", -14),
    ("seconds", -10),
    ("ns/iter", -10),
    ("vs v0", -8),
    ("sum_f", -25),
    ("sum_dx", -25),
    ("sum_dy", -25),
];
const GRAPH_COLUMNS: [(&str, i32); 12] = [
    ("impl", 6),
    ("level", 11),
    ("threads", -7),
    ("ops", -8),
    ("iters", -14),
    ("seconds", -10),
    ("ns/iter", -14),
    ("ns/op", -10),
    ("vs v0", -8),
    ("sum_loss", -25),
    ("sum_grad_in", -25),
    ("sum_grad_all", -25),
];

/// Cells padded to the columns' widths, two spaces apart.
fn row(columns: &[(&str, i32)], cells: &[String]) -> String {
    let out: Vec<String> = cells
        .iter()
        .zip(columns.iter())
        .map(|(cell, &(_, width))| {
            if width > 0 {
                format!("{:<w$}", cell, w = width as usize)
            } else {
                format!("{:>w$}", cell, w = (-width) as usize)
            }
        })
        .collect();
    out.join("  ").trim_end().to_string()
}

pub fn text_header() -> String {
    let names: Vec<String> = COLUMNS.iter().map(|(name, _)| name.to_string()).collect();
    row(&COLUMNS, &names)
}

pub fn graph_text_header() -> String {
    let names: Vec<String> = GRAPH_COLUMNS.iter().map(|(name, _)| name.to_string()).collect();
    row(&GRAPH_COLUMNS, &names)
}

/// v0's time over this one, "-" when v0 was not run before it.
fn speedup(v0_seconds: f64, seconds: f64) -> String {
    if v0_seconds > 0.0 && seconds > 0.0 {
        format!("{:.1}x", v0_seconds / seconds)
    } else {
        "-".to_string()
    }
}

pub fn text_line(r: &RunResult, v0_seconds: f64) -> String {
    row(&COLUMNS, &[
        IMPL.to_string(),
        r.level.to_string(),
        r.threads.to_string(),
        r.iters.to_string(),
        format!("{:.3}", r.seconds),
        format!("{:.2}", r.ns_per_iter()),
        speedup(v0_seconds, r.seconds),
        g17(r.sums.f),
        g17(r.sums.dx),
        g17(r.sums.dy),
    ])
}

pub fn graph_text_line(r: &GraphResult, v0_seconds: f64) -> String {
    row(&GRAPH_COLUMNS, &[
        IMPL.to_string(),
        r.level.to_string(),
        r.threads.to_string(),
        r.ops.to_string(),
        r.iters.to_string(),
        format!("{:.3}", r.seconds),
        format!("{:.1}", r.ns_per_iter()),
        format!("{:.2}", r.ns_per_op()),
        speedup(v0_seconds, r.seconds),
        g17(r.sums.loss),
        g17(r.sums.grad_in),
        g17(r.sums.grad_all),
    ])
}

/// {"key": value, ...} from keys and already-encoded values, in order.
fn json_object(fields: &[(&str, String)]) -> String {
    let members: Vec<String> = fields.iter().map(|(key, value)| format!("\"{}\": {}", key, value)).collect();
    format!("{{{}}}", members.join(", "))
}

pub fn json_line(r: &RunResult) -> String {
    json_object(&[
        ("impl", format!("\"{}\"", IMPL)),
        ("workload", "\"softplus\"".to_string()),
        ("level", format!("\"{}\"", r.level)),
        ("iters", r.iters.to_string()),
        ("seed", r.seed.to_string()),
        ("threads", r.threads.to_string()),
        ("seconds", g17(r.seconds)),
        ("cpu_seconds", g17(r.cpu_seconds)),
        ("ns_per_iter", g17(r.ns_per_iter())),
        ("sum_f", g17(r.sums.f)),
        ("sum_dx", g17(r.sums.dx)),
        ("sum_dy", g17(r.sums.dy)),
    ])
}

pub fn graph_json_line(r: &GraphResult) -> String {
    json_object(&[
        ("impl", format!("\"{}\"", IMPL)),
        ("workload", "\"graph\"".to_string()),
        ("level", format!("\"{}\"", r.level)),
        ("ops", r.ops.to_string()),
        ("iters", r.iters.to_string()),
        ("seed", r.seed.to_string()),
        ("threads", r.threads.to_string()),
        ("seconds", g17(r.seconds)),
        ("cpu_seconds", g17(r.cpu_seconds)),
        ("ns_per_iter", g17(r.ns_per_iter())),
        ("ns_per_op", g17(r.ns_per_op())),
        ("sum_loss", g17(r.sums.loss)),
        ("sum_grad_in", g17(r.sums.grad_in)),
        ("sum_grad_all", g17(r.sums.grad_all)),
    ])
}

pub fn eval_text(x: f64, y: f64, f: f64, dfdx: f64, dfdy: f64) -> String {
    format!("x {}  y {}  f {}  dfdx {}  dfdy {}", g17(x), g17(y), g17(f), g17(dfdx), g17(dfdy))
}

pub fn eval_json(x: f64, y: f64, f: f64, dfdx: f64, dfdy: f64) -> String {
    json_object(&[
        ("impl", format!("\"{}\"", IMPL)),
        ("x", g17(x)),
        ("y", g17(y)),
        ("f", g17(f)),
        ("dfdx", g17(dfdx)),
        ("dfdy", g17(dfdy)),
    ])
}
