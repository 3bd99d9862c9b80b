"""`make run`: the Codon program at every level of both workloads, each run long enough to measure.

A fixed sample count lasts seconds on a slow machine and milliseconds on a fast one, where thread
start-up would dominate v4; so each level's count is calibrated first (by bench.py's rule, from a small
count until a run lasts --min-time), then a run at that count is shown. The table is the program's own
(its header and columns); "vs v0" compares the ns per sample of the rows shown, since each level runs
with its own count. A GPU level (v5) runs where
the program finds a CUDA device, and is skipped with a line saying why where it does not.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

from bench import next_iters
from impls import GPU_LEVELS, LEVELS, WORKLOAD_LEVELS

WORKLOADS = {  # workload: (extra arguments, levels, first count to try)
    "softplus": ([], LEVELS + GPU_LEVELS, 100_000),
    "graph": (["--workload", "graph"], [lv for lv in LEVELS if lv in WORKLOAD_LEVELS["graph"]], 16),
}


def refusal(program: str, level: str) -> str:
    """Why the program refuses a GPU level here (its error line), or '' when it runs it."""
    proc = subprocess.run([program, "--level", level, "--iters", "1", "--json"], capture_output=True, text=True)
    if proc.returncode == 2 and proc.stderr.startswith(f"error: --level {level} needs"):
        return proc.stderr.strip()[len("error: "):]
    return ""


def calibrated(program: str, args: list[str], level: str, start: int, min_time: float) -> dict:
    """The JSON record of the first run, doubling from `start` samples, that lasts min_time seconds."""
    n = start
    while True:
        out = subprocess.run([program, *args, "--level", level, "--iters", str(n), "--json"],
                             capture_output=True, text=True, check=True).stdout
        record = json.loads(out)
        if record["seconds"] >= min_time:
            return record
        n = next_iters(n, record["seconds"], min_time)


def shown_run(program: str, args: list[str], record: dict) -> tuple[str, str, float]:
    """The program's own header and text row for a run at this record's N, and that row's ns/iter."""
    out = subprocess.run([program, *args, "--level", record["level"], "--iters", str(record["iters"])],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    header, line = out[0], out[1]
    return header, line, float(line.split()[header.split().index("ns/iter")])


def with_vs_v0(header: str, line: str, ns: float, v0_ns: float | None) -> str:
    """The row with its "vs v0" cell set to v0's ns per sample over this row's."""
    start = header.index("vs v0") - 3   # the column is right-aligned: "   vs v0" ends where it ends
    cell = f"{v0_ns / ns:.1f}x" if v0_ns else "-"
    width = len("vs v0") + 3
    return line[:start] + cell.rjust(width) + line[start + width:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="build/autograd")
    parser.add_argument("--min-time", type=float, default=0.25, help="seconds each shown run lasts at least")
    opts = parser.parse_args()
    for workload, (args, levels, start) in WORKLOADS.items():
        v0_ns = None
        for k, level in enumerate(levels):
            why = refusal(opts.program, level) if level in GPU_LEVELS else ""
            if why:
                print(f"skip: {level}: {why}", flush=True)
                continue
            record = calibrated(opts.program, args, level, start, opts.min_time)
            header, line, ns = shown_run(opts.program, args, record)
            v0_ns = ns if level == "v0" else v0_ns
            if k == 0:
                print(("" if workload == "softplus" else "\n") + header)
            print(with_vs_v0(header, line, ns, v0_ns), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
