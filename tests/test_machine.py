"""What a run records of the machine and of its processes (scripts/machine.py, processes.run_process): the CPU's
facts and slug, the vector line of a program's --version, the load other processes and the hypervisor put
on the CPUs beside each timed run, a process's CPU time with its threads and children and its own peak RSS,
the GPUs.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from fakes import FIXTURES

sys.path.insert(0, str(ROOT / "scripts"))
import machine  # noqa: E402
from harness import processes, timing  # noqa: E402


CPUINFO_AMD = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n" \
              "model name\t: AMD EPYC 9R14 96-Core Processor\nflags\t\t: fpu sse2 avx2 avx512f avx512dq\n\n" \
              "processor\t: 1\ncpu family\t: 99\n"


CPUINFO_INTEL = "processor\t: 0\ncpu family\t: 6\nmodel\t\t: 85\n" \
                "model name\t: Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz\nflags\t\t: fpu sse2 avx avx2\n"


CPUINFO_ARM = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"


def test_machine_slug_and_facts():
    amd = machine.cpu_facts(CPUINFO_AMD)
    assert (amd["cpu_family"], amd["cpu_model"], amd["avx2"], amd["avx512f"]) == (25, 17, True, True)
    assert machine.slug(amd) == "amd-epyc-9r14-fam25-model17-avx512"
    intel = machine.cpu_facts(CPUINFO_INTEL)
    assert machine.slug(intel) == "intel-xeon-platinum-8259cl-fam6-model85-avx2"
    arm = {**machine.cpu_facts(CPUINFO_ARM), "cpu": "", "arch": "aarch64"}
    assert (arm["cpu_family"], arm["avx2"]) == (None, False) and machine.slug(arm) == "aarch64"
    assert machine.slug({"cpu": "AMD EPYC", "cpu_family": 25, "cpu_model": 17, "avx2": True,
                         "avx512f": True}) == "amd-epyc-fam25-model17-avx512"
    assert machine.vector_line("autograd (c) 0.1.0\ntarget x86-64-v3, vector width 4 doubles: AVX2\n") == \
        {"target": "x86-64-v3", "vector_width": 4, "vector": "AVX2"}
    assert machine.vector_line("autograd (zig) 0.1.0\n")["vector_width"] is None


def test_steal_is_read_per_second_of_wall_time():
    assert machine.steal((0.0, 10.0, 1.0, 5.0), (2.0, 13.0, 2.0, 6.0)) == 0.5     # 1 s stolen over 2 s
    assert machine.steal((0.0, 10.0, 1.0), (2.0, 13.0, 2.0)) is None              # no steal reading


# /proc/stat's first line: user nice system idle iowait irq softirq steal guest guest_nice, in clock ticks.
PROC_STAT = "cpu  1000 20 300 9000 400 5 60 70 800 900\ncpu0 500 10 150 4500 200 2 30 35 400 450\nintr 1 2\n"


def test_the_cpu_clock_reads_busy_and_steal_from_proc_stat(tmp_path, monkeypatch):
    """cpu_clock() on a given /proc/stat, wherever the tests run: busy is every column but idle and iowait
    (steal included; guest time is already in user), steal its own column, both in seconds of SC_CLK_TCK;
    None where the file is absent or unreadable."""
    stat = tmp_path / "stat"
    monkeypatch.setattr(machine, "Path", lambda p: stat if p == "/proc/stat" else Path(p))
    stat.write_text(PROC_STAT)
    hz = os.sysconf("SC_CLK_TCK")
    wall, busy, own, steal = machine.cpu_clock()
    assert busy == pytest.approx((1000 + 20 + 300 + 5 + 60 + 70) / hz) and steal == pytest.approx(70 / hz)
    assert own >= 0 and abs(wall - time.monotonic()) < 1
    stat.write_text("cpu  garbage\n")
    assert machine.cpu_clock() is None
    stat.unlink()
    assert machine.cpu_clock() is None


def test_a_neighbour_spinning_on_a_cpu_reads_as_other_load():
    """The reading each timed run records: a process of someone else's busy on one CPU shows as about 1.0."""
    if machine.cpu_clock() is None:
        pytest.skip("no /proc/stat here")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)                                           # past its start-up
        before = machine.cpu_clock()
        time.sleep(0.5)
        after = machine.cpu_clock()
    finally:
        spinner.kill()
        spinner.wait()
    assert machine.other_load(before, after) >= 0.7
    assert timing.neighbours(before, after)["other_load"] == round(machine.other_load(before, after), 3)
    assert timing.neighbours(None, None) == {}


def test_a_process_cpu_time_counts_its_threads_and_children():
    one, two = (processes.run_process([sys.executable, str(FIXTURES / "fake_impl.py"), "good", "levels=v4", "burn=0.3",
                                   f"workers={w}", "--level", "v4", "--iters", "10", "--threads", "2", "--json"], 30)
                for w in (1, 2))
    assert one.returncode == two.returncode == 0
    assert 0.25 < one.cpu <= one.wall * 1.05                             # one CPU busy: CPU time <= wall
    assert two.cpu > one.cpu + 0.2                                       # a second worker's 0.3 s counted too
    sleeper = processes.run_process([sys.executable, "-c", "import time; time.sleep(0.3)"], 30)
    assert sleeper.wall >= 0.3 and sleeper.cpu < 0.2                     # waiting is not CPU time


def test_a_process_peak_rss_is_its_own_not_the_largest_of_every_child_so_far():
    """processes.run_process reaps the child with wait4 for its own rusage: a small process run after a big
    one reads small (RUSAGE_CHILDREN's ru_maxrss, the largest of all children so far, would read big), and
    its CPU time is still what the children's CPU time grew by."""
    def fixture(*settings: str) -> processes.Proc:
        return processes.run_process([sys.executable, str(FIXTURES / "fake_impl.py"), "good", *settings,
                                      "--level", "v2", "--iters", "10", "--json"], 30)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    big = fixture("alloc=200")
    middle = resource.getrusage(resource.RUSAGE_CHILDREN)
    small = fixture()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert big.returncode == small.returncode == 0 and '"sum_f"' in small.stdout
    assert big.peak_rss_kb * 1024 >= 200e6                              # every byte of 200 MB written
    assert small.peak_rss_kb * 1024 < 100e6                             # an interpreter and the oracle
    assert after.ru_maxrss >= big.peak_rss_kb                           # what RUSAGE_CHILDREN would have said
    for proc, (a, b) in ((big, (before, middle)), (small, (middle, after))):
        assert proc.cpu == pytest.approx(b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime, abs=1e-5)   # in us
    killed = processes.run_process([sys.executable, "-c", "import time; time.sleep(30)"], 0.5)
    assert killed.returncode is None and killed.peak_rss_kb is None      # killed with its launcher: no peak
    assert processes.run_process(["/nonexistent/program"], 5).peak_rss_kb is None


def test_a_process_peak_rss_is_not_the_harness_own():
    """Linux keeps a process's peak RSS across exec, and a child that Python starts (vfork, exec) begins
    with the harness's own peak: the 2-MB program would read as large as this test process. Run under
    build/maxrss (scripts/maxrss.c), forked from that small process, it reads as itself."""
    ballast = bytearray(300 * 2**20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1                                                    # this process now peaks past 300 MB
    small = processes.run_process([sys.executable, "-c", "pass"], 30)
    assert small.returncode == 0 and small.peak_rss_kb is not None
    assert small.peak_rss_kb * 1024 < 100e6, small.peak_rss_kb
    del ballast


def test_a_run_records_the_gpus_nvidia_smi_lists(tmp_path, monkeypatch):
    """machine.gpus(): what bench.py stores as the run's `gpus` (docs/gpu.md)."""
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA H200, 580.159.04, 143771 MiB'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert machine.gpus() == ["NVIDIA H200, 580.159.04, 143771 MiB"]
    fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    assert machine.gpus() == []
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert machine.gpus() == []
