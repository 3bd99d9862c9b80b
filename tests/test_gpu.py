"""Level v5 (softplus/gpu.codon) on any machine: the build writes the kernel's PTX, the kernel's work and
summation order run on the CPU match the reference, and --level v5 refuses cleanly without a device.

A stand-in driver (fixtures/fake_cuda.c, loaded as libcuda.so.1) checks what the program asks of a driver:
which PTX it loads, and that the kernel's name resolves in it. The tests that need a real device run only
where libcuda.so.1 finds one."""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import oracle as ref
from conftest import BUILD, ROOT, TIMEOUT, make

PTX = ROOT / BUILD / "autograd.ptx"
ON_CPU = ROOT / BUILD / "v5-on-cpu"
REFUSAL = "error: --level v5 needs a CUDA device and driver: "


def real_device() -> str:
    """'' where libcuda.so.1 opens and finds a device, else why not."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return f"no CUDA driver ({e})"
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return "no CUDA device"
    return ""


NO_DEVICE = real_device()
needs_device = pytest.mark.skipif(bool(NO_DEVICE), reason=f"v5 on a device: {NO_DEVICE}")
needs_no_driver = pytest.mark.skipif(not NO_DEVICE.startswith("no CUDA driver"),
                                     reason="this machine has a CUDA driver")


@pytest.fixture(scope="session")
def on_cpu(codon) -> Path:
    make(f"{BUILD}/v5-on-cpu")
    return ON_CPU


def v5_on_cpu(program: Path, n: int, seed: int = 42) -> tuple[float, float, float]:
    out = subprocess.run([str(program), str(n), str(seed)], capture_output=True, text=True, check=True,
                         timeout=TIMEOUT).stdout.split()
    return tuple(float(v) for v in out)


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory) -> Path:
    """A folder holding the stand-in libcuda.so.1, built with the C compiler."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}) for the stand-in driver")
    folder = tmp_path_factory.mktemp("fake-cuda")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(folder / "libcuda.so.1"),
                    str(ROOT / "tests/fixtures/fake_cuda.c")], check=True)
    return folder


def with_driver(folder: Path, mode: str, log: Path | None = None) -> dict[str, str]:
    env = dict(os.environ, LD_LIBRARY_PATH=str(folder), FAKE_CUDA=mode)
    if log is not None:
        env["FAKE_CUDA_LOG"] = str(log)
    return env


def kernel_name(ptx: str) -> str:
    (name,) = re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)
    return name


# --- the build ---------------------------------------------------------------------------------

def test_the_build_writes_the_kernels_ptx_beside_the_program(codon):
    ptx = PTX.read_text()
    assert kernel_name(ptx).startswith("softplus_gpu_v5_kernel")
    assert re.search(r"^\.target sm_30$", ptx, re.M), "Codon 0.19.3's fixed target moved"
    # No call the driver would have to resolve (libdevice is linked in), no local memory.
    assert not re.search(r"\bcall\b|\.local", ptx, re.M)
    assert b"codon-src/autograd.ptx" in Path(codon.argv[0]).read_bytes(), "Codon's baked PTX path moved"


def test_the_ptx_assembles_for_an_h200_with_the_tape_in_registers(codon, tmp_path):
    """ptxas from the same nvcc wheel as libdevice: what the driver's JIT does with the PTX on an
    H200 (sm_90). The kernel needs no stack frame: the tape's vars and ops never reach memory."""
    ptxas = (ROOT / ".venv/libdevice.10.bc").resolve().parents[2] / "bin/ptxas"
    if not ptxas.exists():
        pytest.skip(f"no ptxas at {ptxas}")
    proc = subprocess.run([str(ptxas), "-arch=sm_90", "-v", "-o", str(tmp_path / "k.cubin"), str(PTX)],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in proc.stderr, proc.stderr


# --- the kernel's work, on the CPU -----------------------------------------------------------

@pytest.mark.parametrize("seed", [42, 0, 2**64 - 1])
def test_one_sample_is_v2s_digit_for_digit(codon, on_cpu, seed):
    """With one sample, v5's grid is one thread's tape: the same vars, ops and formulas as v2's."""
    assert v5_on_cpu(on_cpu, 1, seed) == codon.sums("v2", 1, seed)


@pytest.mark.parametrize("n", [2, 255, 256, 257, 10_007])
def test_the_kernels_sums_match_the_reference(on_cpu, n):
    want = ref.run(42, n)
    for got, w in zip(v5_on_cpu(on_cpu, n), want):
        assert ref.rel_diff(got, w) <= ref.BATCHED_RTOL, (n, got, w)


def test_the_kernels_sums_match_v4_when_threads_take_several_samples(codon, on_cpu):
    """Past 4,096 blocks of 256 threads (2^20 samples) each thread strides over more than one sample."""
    n = 3 * 2**20 + 5
    v4 = codon.sums("v4", n)
    for got, w in zip(v5_on_cpu(on_cpu, n), v4):
        assert ref.rel_diff(got, w) <= ref.BATCHED_RTOL, (got, v4)


# --- without a device --------------------------------------------------------------------------

@needs_no_driver
@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_v5_refuses_without_a_driver(codon, extra):
    proc = codon.run("--level", "v5", "--iters", "1000", *extra)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(REFUSAL + "no CUDA driver (") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("mode, why", [("no-device", "no usable CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)"),
                                       ("no-devices", "no CUDA device (the driver found none)")])
def test_v5_refuses_with_a_driver_but_no_device(codon, fake_driver, mode, why):
    proc = codon.run("--level", "v5", "--iters", "1000", "--json", env=with_driver(fake_driver, mode))
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", REFUSAL + why + "\n")


def test_the_other_levels_never_open_the_driver(codon, fake_driver, tmp_path):
    log = tmp_path / "loaded"
    env = with_driver(fake_driver, "launch", log)
    proc = codon.run("--iters", "1000", "--json", env=env)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 5
    assert not log.exists()


def test_v5_is_named_alone_and_only_for_softplus(codon):
    assert "v5" not in codon.ok("--iters", "10")
    proc = codon.run("--workload", "graph", "--level", "v5")
    assert proc.returncode == 2 and proc.stderr.startswith("error: --level must be one of v0, v1, v2, v3, v4")


# --- what v5 asks of a driver --------------------------------------------------------------------

def test_v5_loads_the_ptx_beside_it_and_finds_its_kernel_there(codon, fake_driver, tmp_path):
    """The stand-in fails the launch, and only the launch: the module loaded and the kernel's name
    resolved in it."""
    log = tmp_path / "loaded"
    proc = codon.run("--level", "v5", "--iters", "1000", "--json", env=with_driver(fake_driver, "launch", log))
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "error: --level v5: cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED (719)\n"
    assert log.read_text() == f"{PTX}\n"


def test_a_moved_program_takes_its_ptx_along_or_falls_back_to_the_built_one(codon, fake_driver, tmp_path):
    moved = tmp_path / "autograd"
    shutil.copy(codon.argv[0], moved)
    log = tmp_path / "loaded"
    env = with_driver(fake_driver, "launch", log)
    args = [str(moved), "--level", "v5", "--iters", "10", "--json"]
    subprocess.run(args, env=env, capture_output=True, timeout=TIMEOUT)
    assert log.read_text() == f"{ROOT / BUILD / 'codon-src/autograd.ptx'}\n"
    shutil.copy(PTX, tmp_path / "autograd.ptx")
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert log.read_text() == f"{tmp_path / 'autograd.ptx'}\n" and "cuLaunchKernel" in proc.stderr


# --- on a device -------------------------------------------------------------------------------

@needs_device
@pytest.mark.parametrize("n", [1, 257, 10_007, 3 * 2**20 + 5])
def test_v5_on_the_device_matches_v4_and_the_kernel_on_the_cpu(codon, on_cpu, n):
    (r,) = codon.records("--level", "v5", "--iters", str(n))
    got = (r["sum_f"], r["sum_dx"], r["sum_dy"])
    for a, b in zip(got, codon.sums("v4", n)):
        assert ref.rel_diff(a, b) <= ref.BATCHED_RTOL, (got, n)
    # The same additions in the same order: only libdevice's exp and log1p differ from glibc's.
    for a, b in zip(got, v5_on_cpu(on_cpu, n)):
        assert ref.rel_diff(a, b) <= 1e-12, (got, n)
    assert (r["level"], r["threads"], r["iters"]) == ("v5", 1, n)


# --- the device script (scripts/gpu_bench.sh), here without a device ------------------------------

@pytest.mark.skipif(not NO_DEVICE, reason="a real device: the script's v5 runs take minutes")
def test_the_device_script_skips_v5_without_a_device_and_still_scans_the_threads(codon, tmp_path):
    # SCAN_FLAGS: one round of runs of 0.01 s, at 100 ops a graph sample (the script's own scan is 5 rounds of
    # 0.1 s at 10,000 ops); what is checked is that it scans, not what it measures.
    env = dict(os.environ, RESULTS=str(tmp_path), PYTHON=sys.executable, SCAN_IMPLS="codon",
               SCAN_FLAGS="--repeats 1 --min-time 0.01 --ops 100")
    proc = subprocess.run(["bash", "scripts/gpu_bench.sh", BUILD], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"skip: v5: {REFUSAL}" in proc.stdout
    sys.path.insert(0, str(ROOT / "scripts"))
    from harness import rawfile
    (raw,) = tmp_path.glob(f"raw/*/*{rawfile.SUFFIX}")   # the scan's run, under RESULTS
    doc = rawfile.read(raw)
    timed = {(r["workload"], r["level"], r["threads"]) for r in doc["results"] if r["status"] == "ok"}
    most = doc["config"]["threads"]
    assert {(w, "v3", 1) for w in ("softplus", "graph")} <= timed
    assert {(w, "v4", most) for w in ("softplus", "graph")} <= timed and ("softplus", "v4", 1) in timed
    assert "gpus" in doc["machine"]
    assert (doc["config"]["repeats"], doc["config"]["min_time"], doc["config"]["ops"]) == (1, 0.01, 100)


def test_the_device_script_needs_its_bundle(tmp_path):
    proc = subprocess.run(["bash", "scripts/gpu_bench.sh", str(tmp_path / "none")], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
