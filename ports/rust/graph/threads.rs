// Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
// per thread (in_threads, as softplus v4), each with its own batch tape and lane sums,
// added in thread order.
use crate::softplus::threads::{in_threads, WorkerFailed};
use super::recipe::GraphSums;
use super::simd::{n_graph_batches, run_graph_batches};

pub fn run_graph_v4(seed: u64, m: usize, n: u64, threads: usize) -> Result<GraphSums, WorkerFailed> {
    let nb = n_graph_batches(n);
    let partial = in_threads(threads, nb, |first, end| run_graph_batches(seed, m, n, first, end))?;
    let mut total = GraphSums::ZERO;
    for sums in partial {
        total = total + sums;
    }
    Ok(total)
}
