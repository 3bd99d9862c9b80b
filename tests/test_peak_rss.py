"""scripts/peak_rss.py on tiny graphs: the table and JSON it writes, that its peak is the program's own
(it grows with the graph), and its refusals; and, through it, the Codon program's graph v0 peak at 10^6 ops
against the C port's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD, IMPLS, build_port

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts/peak_rss.py"
sys.path.insert(0, str(ROOT / "scripts"))
import peak_rss  # noqa: E402

def peak(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "peak.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--build", BUILD, "--repeats", "1", "--iters", "2",
                           "--json", str(out), *args], capture_output=True, text=True, timeout=120, cwd=ROOT)
    return proc, (json.loads(out.read_text()) if out.exists() else {})


@pytest.fixture(scope="module")
def c_port() -> None:
    why = build_port(IMPLS["c"][0], IMPLS["c"][1])
    if why is not None:
        pytest.skip(f"c: {why}")


def test_table_and_ratio_of_codon_over_the_best_port(tmp_path, codon, c_port):
    proc, doc = peak(tmp_path, "--impls", "codon,c", "--ops", "1000", "--levels", "v0,v2")
    assert proc.returncode == 0, proc.stderr
    cells = {(c["impl"], c["level"]): c for c in doc["cells"]}
    assert set(cells) == {("codon", "v0"), ("c", "v0"), ("codon", "v2"), ("c", "v2")}
    for level in ("v0", "v2"):
        codon_mib, c_mib = cells["codon", level]["peak_mib"], cells["c", level]["peak_mib"]
        assert codon_mib > 1 and c_mib > 1
        assert f"| 1,000 | {level} | {codon_mib:.1f} | {c_mib:.1f} | {codon_mib / c_mib:.2f} |" in proc.stdout
    assert "wait4's ru_maxrss, scripts/maxrss.c" in proc.stdout and "--workload graph --ops 1000" in proc.stdout


def test_the_peak_is_the_programs_and_grows_with_the_graph(tmp_path, c_port):
    # v0 holds a sample's nodes at once: 1.76 nodes an op, 64 bytes each before malloc's header, so 99,000
    # ops more hold at least 10 MiB more. The interpreter running the script holds more than that.
    proc, doc = peak(tmp_path, "--impls", "c", "--ops", "1000,100000", "--levels", "v0")
    assert proc.returncode == 0, proc.stderr
    small, large = sorted(doc["cells"], key=lambda c: c["ops"])
    assert small["peak_mib"] < 10 and large["peak_mib"] - small["peak_mib"] > 10


def test_codon_graph_v0_peaks_within_1_3x_of_c_at_the_largest_graph(codon, c_port):
    """autograd.codon's set_collector: at 10^6 ops graph v0 peaks within 1.3x the C port's, and well below
    its peak with Boehm's default divisor, 3 (the peaks: docs/findings/memory-footprint.md). The environment's
    GC_FREE_SPACE_DIVISOR still wins, which is how the default is run here. Two samples reach the peak."""
    def kib(name: str, env: dict[str, str] | None = None) -> int:
        return peak_rss.measure(peak_rss.argv_of(name, BUILD, 1_000_000, "v0", 2, 1), 120, env)[0]
    c, codon_kib = kib("c"), kib("codon")
    default = kib("codon", {**os.environ, "GC_FREE_SPACE_DIVISOR": "3"})
    assert codon_kib < 1.3 * c and codon_kib < 0.8 * default, (codon_kib, c, default)


def test_bad_usage_is_refused(tmp_path):
    """Each is one error line and exit 2 before any program runs: an --ops, --iters or --threads past the
    programs' bounds used to run every program into its refusal, an unwritable --json to end in a traceback
    after every run."""
    for args in (["--impls", "fortran"], ["--levels", "v9"], ["--ops", "many"], ["--repeats", "0"],
                 ["--ops", "1000001"], ["--iters", str(10**12 + 1)], ["--threads", "1025"],
                 ["--json", str(tmp_path / "no-folder" / "peak.json")]):
        proc, _ = peak(tmp_path, *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert proc.stderr.strip().splitlines()[-1].startswith("peak_rss.py: error: "), (args, proc.stderr)
        assert "MiB" not in proc.stderr, args                        # no cell was measured


@pytest.mark.parametrize("stdout", ['{"x": 1}', "not json", ""])
def test_a_run_that_prints_no_contract_record_is_an_error(stdout):
    """A program whose line is not the contract's record (here one that lacks the sums) is a RuntimeError,
    which main reports as one error line, not a KeyError or an IndexError later."""
    from harness.processes import maxrss
    if maxrss() is None:
        pytest.skip("build/maxrss cannot be made (no C compiler)")
    with pytest.raises(RuntimeError, match="bad output"):
        peak_rss.measure([sys.executable, "-c", f"print({stdout!r})"], 60,
                         expected={"level": "v0", "ops": 10, "iters": 2, "seed": 42})
