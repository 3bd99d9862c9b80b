// The team of threads of the v4 levels, shared by both workloads: T contiguous ranges of
// the batches, one per scoped std::thread, each range's result kept apart so that the level
// adds them in thread order, and a given T always gives the same digits.

/// A v4 worker thread that panicked: its range has no sums, so the run has no result.
/// (Nothing in run_batches or run_graph_batches should panic; if something does, the
/// run is reported as failed rather than rerun, which could hide the fault or repeat it.)
pub struct WorkerFailed {
    pub thread: u64,
    pub message: String,
}

/// A panic's message as one line (a panic's payload is its formatted message, a &str
/// or a String).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s,
        (_, Some(s)) => s.as_str(),
        _ => "unknown panic",
    };
    text.lines().collect::<Vec<_>>().join(" ")
}

/// The threads a v4 level runs for --threads T over nb batches, min(T, nb): the same
/// ranges and digits, no idle thread (docs/contract.md §6, v4's team).
pub fn team_size(threads: usize, nb: u64) -> usize {
    (threads as u64).min(nb) as usize
}

/// The Codon program's in_threads, its `@par(num_threads=T, schedule="static", chunk_size=1)`
/// loop over T contiguous ranges of nb batches, shared by softplus and graph v4: work(first,
/// end) for range t = [t*nb/T, (t+1)*nb/T) on thread t, the results in thread order.
pub fn in_threads<S: Send>(threads: usize, nb: u64, work: impl Fn(u64, u64) -> S + Sync) -> Result<Vec<S>, WorkerFailed> {
    let t_count = threads.max(1) as u64;
    let range = |t: u64| (t * nb / t_count, (t + 1) * nb / t_count);
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (1..t_count)
            .map(|t| {
                let (first, end) = range(t);
                std::thread::Builder::new().spawn_scoped(scope, move || work(first, end))
            })
            .collect();
        // Range 0 runs on this thread, as an OpenMP team's master thread does.
        let (first, end) = range(0);
        let mut partial = vec![work(first, end)];
        // Every worker is joined before a failure is returned: a panicked thread left
        // unjoined would make thread::scope itself panic as it ends.
        let mut failed = None;
        for (t, worker) in (1..t_count).zip(workers) {
            match worker {
                Ok(handle) => match handle.join() {
                    Ok(sums) => partial.push(sums),
                    Err(payload) => {
                        failed.get_or_insert(WorkerFailed { thread: t, message: panic_message(&*payload) });
                    }
                },
                // A thread that could not be started (e.g. `ulimit -u`) has its range
                // done here instead: the same numbers, added in the same place.
                Err(_) => {
                    let (first, end) = range(t);
                    partial.push(work(first, end));
                }
            }
        }
        match failed {
            Some(failure) => Err(failure),
            None => Ok(partial),
        }
    })
}
