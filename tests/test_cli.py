"""Command line and output, contract §4-§6: good input works, bad input is refused cleanly."""
import json
import os
import re
import subprocess

import pytest
from conftest import TIMEOUT
from harness import processes

BAD_ARGS = [
    # unknown, misspelt, positional, short and --flag=value forms
    ["--bogus"], ["-h"], ["v2"], ["--level=v2"], ["--iters=10"], [""], ["--"], ["-"],
    # missing values
    ["--level"], ["--iters"], ["--seed"], ["--threads"], ["--eval"], ["--eval", "1"], ["--json", "--iters"],
    # repeated flags
    ["--iters", "5", "--iters", "5"], ["--json", "--json"], ["--level", "v2", "--level", "v2"],
    # levels
    ["--level", "v6"], ["--level", "V2"], ["--level", ""], ["--level", "all "], ["--level", "fused_simd"],
    # --iters: empty, signs, exponents, separators, hex, range, overflow
    ["--iters", ""], ["--iters", "0"], ["--iters", "-1"], ["--iters", "+5"], ["--iters", "1e6"],
    ["--iters", "1_000"], ["--iters", "1,000"], ["--iters", "0x10"], ["--iters", " 5"], ["--iters", "5 "],
    ["--iters", "1.0"], ["--iters", "1000000000001"], ["--iters", "18446744073709551616"],
    ["--iters", "99999999999999999999999999"], ["--iters", "nan"], ["--iters", "inf"], ["--iters", "５"],
    # --seed: range and form
    ["--seed", "18446744073709551616"], ["--seed", "-1"], ["--seed", "0x2a"], ["--seed", "4.2e1"],
    ["--seed", "184467440737095516150"], ["--seed", ""],
    # --threads
    ["--threads", "0"], ["--threads", "1025"], ["--threads", "-2"], ["--threads", "two"],
    # --eval: non-numbers, hex, inf/nan, overflow, and what it may not be combined with
    ["--eval", "x", "1"], ["--eval", "1", ""], ["--eval", "0x1p3", "1"], ["--eval", "inf", "1"],
    ["--eval", "nan", "1"], ["--eval", "1", "-infinity"], ["--eval", "1e999", "1"], ["--eval", ".", "1"],
    ["--eval", "1e", "1"], ["--eval", "1e+", "1"], ["--eval", "--1", "1"], ["--eval", "1.2.3", "1"],
    ["--eval", "1 ", "1"], ["--eval", "1e5000000000000000000000", "1"],
    ["--eval", "1e200", "1e200"], ["--eval", "1e300", "-1e308"], ["--eval", "1e308", "1e308"],
    ["--eval", "1", "2", "--level", "v2"], ["--eval", "1", "2", "--iters", "5"], ["--eval", "1", "2", "3"],
    # --help / --version only alone
    ["--help", "--json"], ["--iters", "5", "--help"], ["--version", "--version"], ["--version", "x"],
    # control characters must not break the one-line rule
    ["--level", "v2\nerror"], ["--bo\tgus"],
    # the graph workload's flags (docs/contract-graph.md G6)
    ["--workload"], ["--workload", "Graph"], ["--workload", ""], ["--workload", "graph", "--workload", "graph"],
    ["--workload", "softplus", "--ops", "10"], ["--ops", "10"], ["--workload", "graph", "--ops", "0"],
    ["--workload", "graph", "--ops", "1000001"], ["--workload", "graph", "--ops", "-5"],
    ["--workload", "graph", "--ops", "1e3"], ["--workload", "graph", "--ops"],
    ["--workload", "graph", "--level", "fused"], ["--workload", "graph", "--level", "fused-simd"],
    ["--workload", "graph", "--eval", "1", "2"], ["--eval", "1", "2", "--workload", "softplus"],
    ["--workload=graph"],
]


@pytest.mark.parametrize("args", BAD_ARGS, ids=[repr(a) for a in BAD_ARGS])
def test_bad_input_is_one_error_line_and_exit_2(codon, args):
    proc = codon.run(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr


@pytest.mark.parametrize("args", [
    ["--iters", "1"], ["--iters", "0001", "--level", "v0"], ["--seed", "0", "--iters", "3"],
    ["--seed", "18446744073709551615", "--iters", "3"],
    ["--threads", "1024", "--level", "v4", "--iters", "3"], ["--json", "--iters", "2", "--level", "fused"],
    ["--eval", "-1", "-2"], ["--eval", "+.5", "5."], ["--eval", "-1.5e-300", "2E+2"], ["--eval", "1e-400", "0"],
    ["--eval", "-0", "0", "--json"], ["--json", "--eval", "1", "2"],
    ["--workload", "softplus", "--iters", "3"], ["--workload", "graph", "--ops", "1", "--iters", "1"],
    ["--workload", "graph", "--ops", "0000004", "--iters", "2", "--level", "v4", "--threads", "3"],
])
def test_good_input_is_accepted(codon, args):
    codon.ok(*args)


def test_the_largest_values_parse(codon):
    """10^12 iterations would take hours: let a later error show that the values before it parsed."""
    proc = codon.run("--iters", "1000000000000", "--seed", "18446744073709551615", "--threads", "1024",
                     "--level", "v9")
    assert proc.returncode == 2 and "--level" in proc.stderr


def test_help_and_version(codon):
    assert "usage:" in codon.ok("--help") and "--workload graph" in codon.ok("--help")
    assert re.fullmatch(r"autograd \(codon\) \d+\.\d+\.\d+\ntarget \S+, vector width [1248] doubles: .+\n",
                        codon.ok("--version"))


@pytest.mark.parametrize("args", [["--iters", "10"], ["--version"], ["--help"], ["--eval", "1", "2"],
                                  ["--workload", "graph", "--ops", "8", "--iters", "2", "--json"],
                                  ["--workload", "graph", "--ops", "8", "--iters", "2", "--json", "--level", "v2"]])
def test_unwritable_output_is_an_error(codon, args):
    """> /dev/full: one error line and exit 1, never a silent success (contract §4)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        proc = subprocess.run(codon.argv + args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr == "error: cannot write to standard output\n", proc


def test_json_lines_shape(codon):
    records = codon.records("--iters", "10", "--seed", "18446744073709551615")
    assert [r["level"] for r in records] == ["v0", "v1", "v2", "v3", "v4"]
    for r in records:
        assert list(r) == ["impl", "workload", "level", "iters", "seed", "threads", "seconds", "cpu_seconds",
                           "ns_per_iter", "sum_f", "sum_dx", "sum_dy"]
        assert r["workload"] == "softplus"
        assert r["impl"] == "codon" and r["iters"] == 10 and r["seed"] == 2**64 - 1
        assert isinstance(r["threads"], int) and r["threads"] >= 1
        assert r["seconds"] >= 0 and abs(r["ns_per_iter"] - r["seconds"] * 1e9 / 10) <= 1e-6 * r["ns_per_iter"] + 1e-9
        assert all(isinstance(r[k], float) for k in ("sum_f", "sum_dx", "sum_dy"))


def test_baselines_run_only_when_named(codon):
    for level in ["fused", "fused-simd"]:
        assert [r["level"] for r in codon.records("--level", level, "--iters", "5")] == [level]


def test_eval_json_shape(codon):
    (r,) = codon.records("--eval", "0.5", "-0.25")
    assert list(r) == ["impl", "x", "y", "f", "dfdx", "dfdy"] and r["x"] == 0.5 and r["y"] == -0.25


def test_text_output_is_a_table(codon):
    lines = codon.ok("--iters", "1000").splitlines()
    assert lines[0].split() == ["impl", "level", "threads", "iters", "seconds", "ns/iter", "vs", "v0",
                                "sum_f", "sum_dx", "sum_dy"]
    rows = [line.split() for line in lines[1:]]
    assert [row[:2] for row in rows] == [["codon", level] for level in ["v0", "v1", "v2", "v3", "v4"]]
    assert rows[0][6] == "1.0x" and all(re.fullmatch(r"\d+\.\dx", row[6]) for row in rows)
    json_sums = [(r["sum_f"], r["sum_dx"], r["sum_dy"]) for r in codon.records("--iters", "1000")]
    assert [tuple(float(v) for v in row[7:]) for row in rows] == json_sums


def test_seventeen_significant_digits(codon):
    (r,) = codon.ok("--eval", "0.1", "0.2", "--json").splitlines()
    assert '"x": 0.10000000000000001' in r and '"y": 0.20000000000000001' in r
    assert json.loads(r)["x"] == 0.1


def test_eval_overflow_is_an_error_not_infinity(codon):
    proc = codon.run("--eval", "1e200", "1e200")
    assert proc.returncode == 2 and "overflow" in proc.stderr and proc.stdout == ""


@pytest.mark.slow
def test_cpu_seconds_is_the_timed_regions_cpu_time(codon):
    """Contract §5: this thread's CPU time for the single-threaded levels (never more than the wall time of
    the same region, bar clock granularity), the process's for v4: its threads add up, so that with two
    threads sharing the work it is most of the whole process's CPU time, where one thread's clock would
    hold about half of it. The kernel's rusage gives the process's, whatever else runs on the machine."""
    single = [r for r in codon.records("--iters", "200000") +
              codon.records("--workload", "graph", "--ops", "100", "--iters", "300") if r["level"] != "v4"]
    for r in single:
        assert 0 < r["cpu_seconds"] <= 1.02 * r["seconds"] + 1e-3, r
    for args in (["--level", "v4", "--iters", "50000000", "--threads", "2"],
                 ["--workload", "graph", "--level", "v4", "--ops", "100", "--iters", "300000", "--threads", "2"]):
        proc = processes.run_process(codon.argv + [*args, "--json"], TIMEOUT)
        assert proc.returncode == 0 and proc.stderr == "", (args, proc.stderr)
        (r,), process_cpu = [json.loads(line) for line in proc.stdout.splitlines()], proc.cpu
        assert r["threads"] == 2 and r["cpu_seconds"] <= process_cpu, (r, process_cpu)
        assert r["cpu_seconds"] >= 0.75 * process_cpu, (r, process_cpu)
