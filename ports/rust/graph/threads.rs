// Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
// per thread (core/threads, as softplus v4; at most one a batch), each with its own batch
// tape and lane sums, added in thread order.
use crate::core::threads::{in_threads, team_size, WorkerFailed};
use super::recipe::{n_nodes, GraphSums};
use super::simd::{n_graph_batches, run_graph_batches, GRAPH_BATCH};

pub fn run_graph_v4(seed: u64, m: usize, n: u64, threads: usize) -> Result<GraphSums, WorkerFailed> {
    let nb = n_graph_batches(n);
    let partial = in_threads(team_size(threads, nb), nb, |first, end| run_graph_batches(seed, m, n, first, end))?;
    let mut total = GraphSums::ZERO;
    for sums in partial {
        total = total + sums;
    }
    Ok(total)
}

/// The least memory `level`'s tapes take at M ops, N samples and T threads: a node's val and grad
/// doubles, 16 bytes, in each lane (GRAPH_BATCH at v3 and v4) of each tape (v4: one for each thread
/// of the team, team_size). The ops and saved lanes come on top; v0 and v1's node objects are
/// counted as tape entries (docs/contract-graph.md).
pub fn tapes_bytes(level: &str, m: usize, n: u64, threads: usize) -> u64 {
    let lanes = if level == "v3" || level == "v4" { GRAPH_BATCH as u64 } else { 1 };
    let tapes = if level == "v4" { team_size(threads, n_graph_batches(n)) as u64 } else { 1 };
    tapes * lanes * n_nodes(m) as u64 * 16
}
