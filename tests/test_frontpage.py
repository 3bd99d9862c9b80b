"""The README's generated front page (scripts/harness/frontpage.py): the headline's comparisons and verdicts, and the
table of which tool to use, from a made-up run whose every ratio is exact."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from harness import frontpage, rawfile, rundata  # noqa: E402

ROUNDS = 7


def impl(name: str, kind: str = "port", compiled: bool = True) -> dict:
    return {"name": name, "kind": kind, "label": name, "compiled": compiled, "status": "ok"}


def result(name: str, workload: str, level: str, seconds: float, ops: int | None = None) -> dict:
    """A timed pair whose runs take `seconds` (both clocks) at one sample, in every round."""
    ops = ops if ops is not None else (10_000 if workload == "graph" else None)
    ns = seconds * 1e9 / (ops or 1)
    return {"impl": name, "workload": workload, "level": level, "threads": 1, "status": "ok", "iters": 1, "ops": ops,
            "ns_per_iter" if workload == "softplus" else "ns_per_op": ns,
            "runs": [{"round": k, "seconds": seconds, "cpu_seconds": seconds} for k in range(ROUNDS)]}


def run() -> rundata.Data:
    """Codon at 1.0 s everywhere; C twice as slow, Zig as fast, Rust absent; a peer graph row at 100 ops."""
    results = []
    for workload in ("softplus", "graph"):
        for level in ("v1", "v3"):
            results += [result("codon", workload, level, 1.0), result("c", workload, level, 2.0),
                        result("zig", workload, level, 1.0)]
    results.append(result("jax", "graph", "v3", 0.01, ops=100))       # fewer ops: not paired per sample
    results.append(result("python", "softplus", "v1", 100.0))
    doc = {"schema": rawfile.SCHEMA, "command": "bench.py",
           "machine": {"cpu": "Made-up CPU", "cpu_family": 6, "cpu_model": 1, "cores": 2, "avx512f": True,
                       "slug": "made-up", "git_commit": "0123456789abcdef", "date": "2026-12-06T00:00:00+00:00"},
           "config": {"repeats": ROUNDS, "ops": 10_000, "min_time": 0.04, "shuffle_seed": 1},
           "implementations": [impl("codon", "codon"), impl("c"), impl("zig"), impl("rust"), impl("jax", "peer", False),
                               impl("python", compiled=False)],
           "results": results}
    return rundata.Data(doc, ROOT / "made-up.json")


def row(lines: list[str], name: str) -> list[str]:
    (line,) = [ln for ln in lines if ln.startswith(f"| {name} |")]
    return [c.strip() for c in line.strip("|").split("|")][1:]


def test_the_headline_compares_codon_with_each_systems_language_and_the_best_of_all():
    lines = frontpage.headline(run())
    assert lines[0] == "Machine: Made-up CPU (family 6 model 1, 2 cores, AVX-512), commit `0123456`, 2026-12-06."
    assert row(lines, "softplus: C") == ["-", "0.50 [0.50, 0.50]", "-", "0.50 [0.50, 0.50]", "-"]
    assert row(lines, "softplus: Rust") == ["-"] * 5                           # not timed
    assert row(lines, "softplus: Zig")[1] == "≈1.00 [1.00, 1.00]"
    # The best of all is the one Codon fares worst against: Zig, not C; JAX's 100-op graph row is left out.
    assert row(lines, "softplus: best of all")[1] == "≈1.00 [1.00, 1.00] zig"
    assert row(lines, "graph: best of all")[3] == "≈1.00 [1.00, 1.00] zig"
    assert "- against C: ahead at softplus v1, v3, graph v1, v3." in lines
    assert "- against the best of all implementations: tie at softplus v1, v3, graph v1, v3." in lines
    assert lines[-2] == f"![Codon's time over C, Rust, Zig and the best of all]({frontpage.HEADLINE_PNG})"


def test_which_tool_gives_each_tools_span_over_codon_and_its_caveat():
    lines = frontpage.which_tool(run())
    assert row(lines, "**codon**: codon")[:3] == ["the reference", "1.00", "1.00"]
    (jax,) = [ln for ln in lines if ln.startswith("| **jax**")]
    # A peer at fewer graph ops: the ratio of the medians per op, said so.
    assert "v3 1.00 (at 100 ops, medians)" in jax
    python = row(lines, "**python**: python")
    assert python[0] == "100x Codon's time (softplus v1)" and python[1] == "v1 100.00"
    assert python[3] == frontpage.CAVEATS["python"]
    assert not [ln for ln in lines if ln.startswith("| **c**")]             # not a tool of the list


def test_levels_are_written_as_ranges():
    assert frontpage.cells_text(["softplus v1", "softplus v2", "softplus v3", "graph v0", "graph v2"]) == \
        "softplus v1-v3, graph v0, v2"
