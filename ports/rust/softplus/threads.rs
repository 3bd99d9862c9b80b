// Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
// scoped std::thread (core/threads; at most one a batch), each with its own batch tape and
// lane sums; the partial sums are added in thread order, so a given T always gives the same
// digits.
use crate::core::ops::Sums;
use crate::core::threads::{in_threads, team_size, WorkerFailed};
use super::simd::{n_batches, run_batches};

pub fn run_v4(seed: u64, n: u64, threads: usize) -> Result<Sums, WorkerFailed> {
    let nb = n_batches(n);
    let partial = in_threads(team_size(threads, nb), nb, |first, end| run_batches(seed, n, first, end))?;
    let mut total = Sums { f: 0.0, dx: 0.0, dy: 0.0 };
    for sums in partial {
        total = total + sums;
    }
    Ok(total)
}
