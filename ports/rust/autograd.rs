// autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
// through a reverse-mode autograd, level by level (docs/contract.md). This file is
// the entry: command line, dispatch to the levels, output.
//
// The Rust port of the Codon program, std only: one crate, its modules the Codon
// program's (core/, softplus/, graph/, cli/, each a folder with a mod.rs listing its
// files) and, where the languages allow, the same functions in the same order.
// ports/rust/README.md maps them.
//
// Build: rustc -C opt-level=3 -C codegen-units=1 -C target-cpu=native
//   -C target-feature=-prefer-256-bit -o build/autograd-rust ports/rust/autograd.rs
// (the Makefile's RUST_FLAGS; the target feature on x86-64 only. Linux, x86-64;
// v3/v4/fused-simd call glibc's libmvec at the widest vector that target-cpu enables:
// AVX-512F, AVX2 or SSE2). The Makefile also sets AUTOGRAD_TARGET=CPU in rustc's
// environment, for --version to name.
// Rust never contracts a*b + c into an FMA nor reassociates floats, so the scalar
// levels keep the contract's order exactly without any flag.

mod core;
mod cli;
mod softplus;
mod graph;

use std::io::{self, Write};
use std::time::Instant;

use crate::cli::args::{parse, UsageError, Options, Mode, MAX_THREADS, MAX_GRAPH_OPS, DEFAULT_ITERS, DEFAULT_GRAPH_ITERS,
                       DEFAULT_OPS, DEFAULT_SEED};
use crate::cli::output::{emit, RunResult, GraphResult, text_header, graph_text_header, text_line, graph_text_line,
                         json_line, graph_json_line, eval_text, eval_json};
use crate::core::ops::Sums;
use crate::softplus::naive::run_v0;
use crate::softplus::pool::run_v1;
use crate::softplus::tape::{run_v2, eval_point};
use crate::softplus::fused::{run_fused, run_fused_simd};
use crate::softplus::simd::run_v3;
use crate::core::threads::{WorkerFailed, panic_message};
use crate::softplus::threads::run_v4;
use crate::core::vmath::target_text;
use crate::graph::recipe::GraphSums;
use crate::graph::objects::run_graph_v0;
use crate::graph::pool::run_graph_v1;
use crate::graph::tape::run_graph_v2;
use crate::graph::simd::run_graph_v3;
use crate::graph::threads::{run_graph_v4, tapes_bytes};

const VERSION_TEXT: &str = "autograd (rust) 0.1.0";

/// The --help text, its bounds and defaults cli/args.rs's.
fn help_text() -> String {
    format!("usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
                [--threads T] [--json]
       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]
                [--seed S] [--threads T] [--json]
       autograd --eval X Y [--json]
       autograd --help | --version

Runs N forward/backward passes through a reverse-mode autograd at each
optimization level and prints the time and the checksums. Workloads:
  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the
            sums of f, df/dx and df/dy over the samples
  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),
            loss = the sum of every node; checksums are the sums of the loss,
            of the inputs' weighted gradients and of every node's gradient

  --workload W softplus or graph (default softplus)
  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,
               the default), or a softplus baseline: fused, fused-simd
  --ops M      graph ops, 1..{MAX_GRAPH_OPS} (default {DEFAULT_OPS}; graph workload only)
  --iters N    samples, 1..10^12 (default {DEFAULT_ITERS}; graph {DEFAULT_GRAPH_ITERS})
  --seed S     input stream seed, 0..2^64-1 (default {DEFAULT_SEED})
  --threads T  threads for v4, 1..{MAX_THREADS} (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the softplus v2 tape")
}

unsafe extern "C" {
    fn sched_getaffinity(pid: i32, cpusetsize: usize, mask: *mut u64) -> i32;
    fn clock_gettime(clockid: i32, tp: *mut Timespec) -> i32;
    fn sysconf(name: i32) -> i64;
}

/// glibc's struct timespec on x86-64 Linux.
#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

/// CPUs in this process's affinity mask (what taskset or a container allows).
/// std's available_parallelism would also apply cgroup CPU quotas; the contract counts
/// the mask, like the Codon program.
fn cpus_available() -> usize {
    let mut mask = [0u64; 16]; // room for 1024 CPUs
    // SAFETY: the kernel writes at most size_of_val(&mask) bytes into mask.
    if unsafe { sched_getaffinity(0, std::mem::size_of_val(&mask), mask.as_mut_ptr()) } != 0 {
        return 1;
    }
    let count: u32 = mask.iter().map(|w| w.count_ones()).sum();
    (count as usize).max(1)
}

/// Seconds of CPU time (contract §5): the process's for v4, whose threads all count, this
/// thread's for every other level (other processes' and threads' time does not count).
/// Read just inside the wall clock's reads, so that a short single-threaded run's CPU time does
/// not gain the reads' own cost (and the first read's page faults) over its wall time.
fn cpu_clock(level: &str) -> f64 {
    let clock = if level == "v4" { CLOCK_PROCESS_CPUTIME_ID } else { CLOCK_THREAD_CPUTIME_ID };
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: the C library writes one struct timespec into ts.
    unsafe { clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn run_level(level: &str, seed: u64, n: u64, threads: usize) -> Result<Sums, WorkerFailed> {
    Ok(match level {
        "v0" => run_v0(seed, n),
        "v1" => run_v1(seed, n),
        "v2" => run_v2(seed, n),
        "v3" => run_v3(seed, n),
        "v4" => run_v4(seed, n, threads)?,
        "fused-simd" => run_fused_simd(seed, n),
        _ => run_fused(seed, n),
    })
}

fn run_graph_level(level: &str, seed: u64, m: usize, n: u64, threads: usize) -> Result<GraphSums, WorkerFailed> {
    Ok(match level {
        "v0" => run_graph_v0(seed, m, n),
        "v1" => run_graph_v1(seed, m, n),
        "v2" => run_graph_v2(seed, m, n),
        "v3" => run_graph_v3(seed, m, n),
        _ => run_graph_v4(seed, m, n, threads)?,
    })
}

/// Why the program stops early: bad input (exit 2), output that could not be written or
/// a v4 worker that failed (exit 1).
enum Failure {
    Usage(UsageError),
    Output(io::Error),
    Worker(WorkerFailed),
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Failure {
        Failure::Usage(e)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Output(e)
    }
}

impl From<WorkerFailed> for Failure {
    fn from(e: WorkerFailed) -> Failure {
        Failure::Worker(e)
    }
}

const SC_PAGESIZE: i32 = 30; // sysconf's names on Linux (glibc and musl)
const SC_PHYS_PAGES: i32 = 85;
const MIB: u64 = 1 << 20;

/// Refuses a graph run whose tapes cannot fit in this machine's memory (docs/contract-graph.md),
/// before any is allocated: the most any requested level's tapes take (tapes_bytes) against the
/// physical memory. A machine whose sysconf cannot tell is not refused.
fn check_memory(opts: &Options) -> Result<(), UsageError> {
    let need = opts.levels.iter().map(|&level| tapes_bytes(level, opts.ops, opts.iters, opts.threads)).max();
    // SAFETY: sysconf only reads the name it is given.
    let (pages, page_size) = unsafe { (sysconf(SC_PHYS_PAGES), sysconf(SC_PAGESIZE)) };
    if pages <= 0 || page_size <= 0 {
        return Ok(());
    }
    let have = pages as u64 * page_size as u64;
    let need = need.unwrap_or(0);
    if need > have {
        return Err(UsageError(format!(
            "the tapes of --ops {} need at least {} MiB, more than this machine's memory ({} MiB)",
            opts.ops, need.div_ceil(MIB), have / MIB
        )));
    }
    Ok(())
}

/// Each level of opts, timed, one output line each: both workloads' loop. The clocks time
/// run_one(level, threads) alone; line(level, threads, seconds, cpu_seconds, sums, v0_seconds) is
/// the level's output line (v0's seconds for the speed-up column).
fn run_levels<S>(opts: &Options, header: &str, run_one: impl Fn(&'static str, usize) -> Result<S, WorkerFailed>,
                 line: impl Fn(&'static str, usize, f64, f64, S, f64) -> String) -> Result<(), Failure> {
    if !opts.json {
        emit(header)?;
    }
    let mut v0_seconds = 0.0;
    for &level in &opts.levels {
        let threads = if level == "v4" { opts.threads } else { 1 };
        let start = Instant::now();
        let cpu_start = cpu_clock(level);
        let sums = run_one(level, threads)?;
        let cpu_seconds = cpu_clock(level) - cpu_start;
        let seconds = start.elapsed().as_nanos() as f64 / 1e9;
        if level == "v0" {
            v0_seconds = seconds;
        }
        emit(&line(level, threads, seconds, cpu_seconds, sums, v0_seconds))?;
    }
    Ok(())
}

fn graph_line(opts: &Options, level: &'static str, threads: usize, seconds: f64, cpu_seconds: f64, sums: GraphSums,
              v0_seconds: f64) -> String {
    let r = GraphResult {
        level, ops: opts.ops, iters: opts.iters, seed: opts.seed, threads, seconds, cpu_seconds, sums,
    };
    if opts.json { graph_json_line(&r) } else { graph_text_line(&r, v0_seconds) }
}

/// The graph workload (docs/contract-graph.md): each level, timed, one line each.
fn run_graph(opts: &Options) -> Result<(), Failure> {
    run_levels(opts, &graph_text_header(),
               |level, threads| run_graph_level(level, opts.seed, opts.ops, opts.iters, threads),
               |level, threads, seconds, cpu_seconds, sums, v0_seconds| {
                   graph_line(opts, level, threads, seconds, cpu_seconds, sums, v0_seconds)
               })
}

fn softplus_line(opts: &Options, level: &'static str, threads: usize, seconds: f64, cpu_seconds: f64, sums: Sums,
                 v0_seconds: f64) -> String {
    let r = RunResult { level, iters: opts.iters, seed: opts.seed, threads, seconds, cpu_seconds, sums };
    if opts.json { json_line(&r) } else { text_line(&r, v0_seconds) }
}

fn run(opts: &Options) -> Result<(), Failure> {
    run_levels(opts, &text_header(), |level, threads| run_level(level, opts.seed, opts.iters, threads),
               |level, threads, seconds, cpu_seconds, sums, v0_seconds| {
                   softplus_line(opts, level, threads, seconds, cpu_seconds, sums, v0_seconds)
               })
}

fn evaluate(opts: &Options) -> Result<(), Failure> {
    let (f, dfdx, dfdy) = eval_point(opts.x, opts.y);
    let p = (opts.x + opts.y) * opts.x;
    if !p.is_finite() {
        return Err(UsageError("(X + Y) * X overflows at this point".to_string()).into());
    }
    if !(f.is_finite() && dfdx.is_finite() && dfdy.is_finite()) {
        return Err(UsageError("the result overflows at this point".to_string()).into());
    }
    let (x, y) = (opts.x, opts.y);
    emit(&if opts.json { eval_json(x, y, f, dfdx, dfdy) } else { eval_text(x, y, f, dfdx, dfdy) })?;
    Ok(())
}

fn real_main() -> Result<(), Failure> {
    use std::os::unix::ffi::OsStringExt;
    let args: Vec<Vec<u8>> = std::env::args_os().skip(1).map(|a| a.into_vec()).collect();
    let opts = parse(&args, cpus_available())?;
    match opts.mode {
        Mode::Help => emit(&help_text())?,
        Mode::Version => {
            emit(VERSION_TEXT)?;
            emit(&target_text())?
        }
        Mode::Eval => evaluate(&opts)?,
        Mode::Run if opts.workload == "graph" => {
            check_memory(&opts)?;
            run_graph(&opts)?
        }
        Mode::Run => run(&opts)?,
    }
    Ok(())
}

fn main() {
    // A panic is reported as one `error:` line by whoever catches it (run_v4's join, or
    // catch_unwind below), never with Rust's default message and backtrace note.
    std::panic::set_hook(Box::new(|_| {}));
    let code = match std::panic::catch_unwind(real_main) {
        Ok(Ok(())) => 0,
        Ok(Err(Failure::Usage(e))) => {
            let _ = writeln!(io::stderr(), "error: {}", e.0);
            2
        }
        // A reader that stops early (`| head`) is not an error worth a message.
        Ok(Err(Failure::Output(e))) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Ok(Err(Failure::Output(_))) => {
            let _ = writeln!(io::stderr(), "error: cannot write to standard output");
            1
        }
        Ok(Err(Failure::Worker(e))) => {
            let _ = writeln!(io::stderr(), "error: v4 thread {} panicked: {}", e.thread, e.message);
            1
        }
        Err(payload) => {
            let _ = writeln!(io::stderr(), "error: internal error: {}", panic_message(&*payload));
            1
        }
    };
    std::process::exit(code);
}
