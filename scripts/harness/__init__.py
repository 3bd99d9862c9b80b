"""The benchmark harness as a package, one module per stage; scripts/bench.py and scripts/report.py are its
command lines.

bench (`make bench`, `make bench-ci`):
    options      the presets (full run, CI) and the command line's value types
    processes    running one child in its own process group, with a timeout; its CPU time; progress lines
    oracle       the independent plain-Python reference (contract §1-§2, contract-graph G1-G4)
    contract     what a program's JSON line must hold, the sums' tolerances, the reference's sums
    state        the run's state: ImplState and Pair, their statuses, one run of a pair
    build        make every implementation, probe the graph workload and the GPU, record toolchains
    verify       check every pair against the reference before timing, and the timed sums after
    calibrate    the N of each (workload, level)
    timing       the rounds of timed runs, each pair's results entry, the paired comparisons
    budgets      the CI budgets (`--ci`): adjacent pairs of runs; instructions: their callgrind counts
    host         the machine's facts for the raw file
    session      the whole run, from the options to the raw file and the summary on the terminal
    rawfile      the raw file: schema, atomic writing, reading
    analysis     distribution-free statistics and pairing, shared by bench and report
sweep (`make sweep`, scripts/sweep.py):
    sweep        the graph at each size in turn through bench's stages; its raw file under results/sweep/
report (`scripts/report.py`):
    rundata      one raw file, indexed (Data)
    tables       the markdown tables of a run
    pages        results/README.md and each machine's page
    blocks       the report blocks of the README and docs
    frontpage    the README's front page blocks (headline, which tool, what Codon needed)
    charts       the PNG charts (a sweep's too)
    sweepdata    a sweep's raw file, indexed, and its sentences (the `sweep` block)
The registry of implementations and levels is scripts/impls.py, the machine's facts scripts/machine.py.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
