// The command line of contract §4, parsed strictly: every bad input becomes a
// UsageError whose message is one line, so that main can print `error: ...` and exit 2
// before anything reaches stdout.
//
// Arguments are handled as bytes: they need not be UTF-8.

const LEVELS: &[&str] = &["v0", "v1", "v2", "v3", "v4"]; // run by --level all, in this order
const BASELINES: &[&str] = &["fused", "fused-simd"]; // run only when named (softplus workload)
const WORKLOADS: &[&str] = &["softplus", "graph"]; // --workload, the first the default
const MAX_ITERS: u64 = 1_000_000_000_000;
pub const MAX_THREADS: u64 = 1024;
pub const MAX_GRAPH_OPS: u64 = 1_000_000; // --ops (MAX_OPS is the softplus tape's)
pub const DEFAULT_ITERS: u64 = 10_000_000; // softplus samples
pub const DEFAULT_GRAPH_ITERS: u64 = 10_000; // graph samples (Rogozhnikov's 10,000 passes)
pub const DEFAULT_OPS: usize = 10_000;
pub const DEFAULT_SEED: u64 = 42;
const FLAGS: &[&str] = &["--workload", "--level", "--ops", "--iters", "--seed", "--threads", "--json", "--eval"];

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Run,
    Eval,
    Help,
    Version,
}

pub struct UsageError(pub String);

pub struct Options {
    pub mode: Mode,
    pub workload: &'static str,
    pub levels: Vec<&'static str>,
    pub ops: usize,
    pub iters: u64,
    pub seed: u64,
    pub threads: usize,
    pub json: bool,
    pub x: f64,
    pub y: f64,
}

impl Options {
    fn new(mode: Mode, threads: usize) -> Options {
        Options {
            mode,
            workload: WORKLOADS[0],
            levels: LEVELS.to_vec(),
            ops: DEFAULT_OPS,
            iters: DEFAULT_ITERS,
            seed: DEFAULT_SEED,
            threads,
            json: false,
            x: 0.0,
            y: 0.0,
        }
    }
}

/// An argument quoted for an error line, control and non-ASCII bytes shown as '?'.
fn shown(arg: &[u8]) -> String {
    let inner: String = arg.iter().map(|&c| if (b' '..=b'~').contains(&c) { c as char } else { '?' }).collect();
    format!("'{}'", inner)
}

/// A decimal integer in [lo, hi], written in digits only (no sign, exponent, hex).
fn parse_uint(flag: &str, text: &[u8], lo: u64, hi: u64) -> Result<u64, UsageError> {
    let bad = || UsageError(format!("{} must be a whole number from {} to {}, got {}", flag, lo, hi, shown(text)));
    if text.is_empty() || text.len() > 20 {
        return Err(bad());
    }
    let mut value: u64 = 0;
    for &c in text {
        if !c.is_ascii_digit() {
            return Err(bad());
        }
        let digit = (c - b'0') as u64;
        if value > (hi - digit) / 10 {
            // value * 10 + digit would pass hi (or wrap)
            return Err(bad());
        }
        value = value * 10 + digit;
    }
    if value < lo {
        return Err(bad());
    }
    Ok(value)
}

/// [+-] digits [. digits] [e [+-] digits], with at least one mantissa digit.
fn is_decimal(text: &[u8]) -> bool {
    let (mut i, n) = (0, text.len());
    let at = |i: usize, set: &[u8]| i < n && set.contains(&text[i]);
    let digit = |i: usize| i < n && text[i].is_ascii_digit();
    if at(i, b"+-") {
        i += 1;
    }
    let mut digits = 0;
    while digit(i) {
        i += 1;
        digits += 1;
    }
    if at(i, b".") {
        i += 1;
        while digit(i) {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return false;
    }
    if at(i, b"eE") {
        i += 1;
        if at(i, b"+-") {
            i += 1;
        }
        let start = i;
        while digit(i) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == n
}

/// A finite decimal number (no hex, inf or nan). Rust's float parser rounds correctly,
/// like the C library's strtod the Codon program uses, so both read the same double.
fn parse_point(flag: &str, text: &[u8]) -> Result<f64, UsageError> {
    let bad = || UsageError(format!("{} needs finite decimal numbers, got {}", flag, shown(text)));
    if !is_decimal(text) {
        return Err(bad());
    }
    let value: f64 = match std::str::from_utf8(text).ok().and_then(|s| s.parse().ok()) {
        Some(v) => v,
        None => return Err(bad()),
    };
    if !value.is_finite() {
        // +-inf: the decimal is beyond the float range
        return Err(UsageError(format!("{} value {} is out of range", flag, shown(text))));
    }
    Ok(value)
}

/// The levels --level names; the graph workload has no baselines.
fn parse_level(text: &[u8], workload: &str) -> Result<Vec<&'static str>, UsageError> {
    let named: Vec<&'static str> = if workload == "softplus" {
        LEVELS.iter().chain(BASELINES).copied().collect()
    } else {
        LEVELS.to_vec()
    };
    if text == b"all" {
        return Ok(LEVELS.to_vec());
    }
    if let Some(level) = named.iter().find(|l| l.as_bytes() == text) {
        return Ok(vec![*level]);
    }
    Err(UsageError(format!("--level must be one of {} or all, got {}", named.join(", "), shown(text))))
}

fn parse_workload(text: &[u8]) -> Result<&'static str, UsageError> {
    match WORKLOADS.iter().find(|w| w.as_bytes() == text) {
        Some(workload) => Ok(workload),
        None => Err(UsageError(format!("--workload must be one of {}, got {}", WORKLOADS.join(", "), shown(text)))),
    }
}

/// Options from the arguments after the program name.
pub fn parse(args: &[Vec<u8>], cpus: usize) -> Result<Options, UsageError> {
    if args.len() == 1 && args[0] == b"--help" {
        return Ok(Options::new(Mode::Help, cpus));
    }
    if args.len() == 1 && args[0] == b"--version" {
        return Ok(Options::new(Mode::Version, cpus));
    }
    let mut opts = Options::new(Mode::Run, cpus);
    let mut seen: Vec<&'static str> = Vec::new();
    let mut level: &[u8] = b"all";
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_slice();
        if arg == b"--help" || arg == b"--version" {
            return Err(UsageError(format!("{} takes no other arguments", String::from_utf8_lossy(arg))));
        }
        let flag = match FLAGS.iter().find(|f| f.as_bytes() == arg) {
            Some(f) => *f,
            None => return Err(UsageError(format!("unknown argument {} (try --help)", shown(arg)))),
        };
        if seen.contains(&flag) {
            return Err(UsageError(format!("{} given twice", flag)));
        }
        seen.push(flag);
        let arity = match flag {
            "--json" => 0,
            "--eval" => 2,
            _ => 1,
        };
        if i + arity >= args.len() {
            let what = if arity == 2 { "two values" } else { "a value" };
            return Err(UsageError(format!("{} needs {}", flag, what)));
        }
        let value: &[u8] = if arity > 0 { &args[i + 1] } else { b"" };
        match flag {
            "--json" => opts.json = true,
            "--workload" => opts.workload = parse_workload(value)?,
            "--level" => level = value, // checked below, once the workload is known
            "--ops" => opts.ops = parse_uint(flag, value, 1, MAX_GRAPH_OPS)? as usize,
            "--iters" => opts.iters = parse_uint(flag, value, 1, MAX_ITERS)?,
            "--seed" => opts.seed = parse_uint(flag, value, 0, u64::MAX)?,
            "--threads" => opts.threads = parse_uint(flag, value, 1, MAX_THREADS)? as usize,
            _ => {
                // --eval X Y
                opts.mode = Mode::Eval;
                opts.x = parse_point(flag, value)?;
                opts.y = parse_point(flag, &args[i + 2])?;
            }
        }
        i += 1 + arity;
    }
    if opts.mode == Mode::Eval {
        if let Some(other) = seen.iter().find(|f| **f != "--eval" && **f != "--json") {
            return Err(UsageError(format!("--eval takes no {}", other)));
        }
        return Ok(opts);
    }
    if seen.contains(&"--ops") && opts.workload != "graph" {
        return Err(UsageError("--ops belongs to the graph workload (add --workload graph)".to_string()));
    }
    opts.levels = parse_level(level, opts.workload)?;
    if opts.workload == "graph" && !seen.contains(&"--iters") {
        opts.iters = DEFAULT_GRAPH_ITERS;
    }
    Ok(opts)
}
