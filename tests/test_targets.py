"""Every compiled implementation on every x86-64 CPU: built for an older target, it runs every level
under qemu-user's emulation of an older CPU (so an instruction the target lacks would be SIGILL) and
matches the contract's known answers; built for this machine, it uses the widest vectors this CPU has."""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import oracle as ref
from conftest import BUILD, PREBUILT, ROOT, widest_width
from impls import ALL_LEVELS, DEFAULT, SEQUENTIAL

# Builds for other CPUs and runs them under qemu-user: make test runs it, make test-fast leaves it out.
pytestmark = pytest.mark.slow

# Every compiled implementation, from the registry; each prints the target and width on --version's second
# line. One run by this Python (the Cython port: its launcher and extension modules) has qemu emulate the
# interpreter too, which is built for the baseline x86-64 and so runs on every model below.
COMPILED = {i.name: i for i in DEFAULT if i.compiled}
# CPU=... for make, the qemu-user CPU model that has just that target's extensions, the vector width.
TARGETS = {"x86-64-v2": ("Nehalem", 2), "x86-64-v3": ("Haswell", 4)}
# Where an implementation's runtime libraries need more than the target: the qemu CPU model they
# need. The Mojo wheel's runtime (libKGENCompilerRTShared.so and libAsyncRTRuntimeGlobals.so, which
# run at startup) is built for x86-64-v3 (AVX, AVX2, BMI2): a Mojo program of any target stops with
# SIGILL under -cpu Nehalem or SandyBridge before main. Its x86-64-v2 build runs under Haswell, and
# the program's own code is checked to hold no VEX or EVEX instruction (ports/mojo/README.md).
RUNTIME_CPU = {"mojo": "Haswell"}
# A JIT compiles for the CPU it is told at run time (make's wrapper names CPU= to Numba, and its
# --version line reports it): qemu-user cannot start the wrapper, a shell script, and would not emulate
# the interpreter it execs. Its native build is checked below like the others.
NOT_UNDER_QEMU = {"numba": "a shell wrapper around a JIT, which qemu-user does not follow into the interpreter"}
N = 1000


def host_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def build(cpu: str, impl: str) -> list[str]:
    """The implementation built for `cpu` in its own folder, as the command that runs it; skipped only when
    its toolchain is missing. The native build is the build folder's where that folder is native (the
    environment's CPU, make's), else its own: a folder made for another CPU is not rebuilt over. With
    AUTOGRAD_PREBUILT=1 nothing is built: a program not there is skipped."""
    native_folder = BUILD if os.environ.get("CPU", "native") == "native" else "build/cpu-native"
    folder = native_folder if cpu == "native" else f"build/cpu-{cpu}"
    target = COMPILED[impl].make_target(folder)
    if PREBUILT:
        if not (ROOT / target).exists():
            pytest.skip(f"AUTOGRAD_PREBUILT=1, and {target} is not built")
        return COMPILED[impl].command(folder)
    proc = subprocess.run(["make", "-s", f"BUILD={folder}", f"CPU={cpu}", target], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"make {target} CPU={cpu} failed:\n{proc.stdout}{proc.stderr}"
    if not (ROOT / target).exists():
        pytest.skip(f"{impl}: toolchain not installed ({proc.stdout.strip()})")
    return COMPILED[impl].command(folder)


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600)


def check_known_answers(argv: list[str], label: str, levels: list[str] = ALL_LEVELS):
    for level in levels:
        proc = run(argv + ["--level", level, "--iters", str(N), "--json", "--threads", "3"])
        assert proc.returncode == 0, f"{label} {level}: exit {proc.returncode} {proc.stderr[-500:]}"
        r = json.loads(proc.stdout)
        got = (r["sum_f"], r["sum_dx"], r["sum_dy"])
        if level in SEQUENTIAL:
            assert tuple(f"{v:.17g}" for v in got) == ref.KNOWN_SUMS[N], (label, level)
        else:
            assert all(ref.rel_diff(a, float(b)) <= ref.BATCHED_RTOL for a, b in zip(got, ref.KNOWN_SUMS[N]))


def check_graph_answers(argv: list[str], label: str):
    """Graph workload, contract-graph G4's (M, N) = (100, 2), at every level (v4 on 3 threads)."""
    known = ref.GRAPH_KNOWN[(100, 2)]
    proc = run(argv + ["--workload", "graph", "--ops", "100", "--iters", "2", "--json", "--threads", "3"])
    assert proc.returncode == 0, f"{label} graph: exit {proc.returncode} {proc.stderr[-500:]}"
    for line in proc.stdout.splitlines():
        r = json.loads(line)
        got = (r["sum_loss"], r["sum_grad_in"], r["sum_grad_all"])
        if r["level"] in SEQUENTIAL:
            assert tuple(f"{v:.17g}" for v in got) == known, (label, r["level"])
        else:
            assert all(ref.rel_diff(a, float(b)) <= ref.BATCHED_RTOL for a, b in zip(got, known)), (label, r["level"])


def width_of(program: list[str], prefix: list[str] = []) -> int:
    lines = run(prefix + program + ["--version"]).stdout.splitlines()
    assert len(lines) == 2 and lines[1].startswith("target "), lines
    return int(lines[1].split("vector width ")[1].split()[0])


# The libmvec variant a width names on --version's line: 8 doubles _ZGVeN8v (AVX-512F), 4 _ZGVdN4v (AVX2),
# 2 _ZGVbN2v (SSE2); 1 is glibc's scalar functions, no variant.
VARIANT = {8: "_ZGVeN8v", 4: "_ZGVdN4v", 2: "_ZGVbN2v", 1: None}


def machine_code(program: list[str]) -> list[Path] | None:
    """The files holding a program's machine code: its executable, or, for a program run by Python, the
    extension modules beside its script (the Cython port); None for a JIT's, compiled at run time."""
    main = Path(program[-1])
    if main.read_bytes()[:4] == b"\x7fELF":
        return [main]
    if main.suffix == ".py":
        return sorted(main.parent.rglob("*.so"))
    return None


def libmvec_imports(program: list[str]) -> set[str] | None:
    """The libmvec functions a program's machine code calls (`nm -D --undefined-only`); None for a JIT's."""
    files = machine_code(program)
    if files is None:
        return None
    out = set()
    for f in files:
        listing = run(["nm", "-D", "--undefined-only", str(f)]).stdout
        out |= set(re.findall(r"\b(_ZGV\w+?_(?:exp|log1p))\b", listing))
    return out


def check_libmvec_calls(program: list[str], width: int, label: str):
    """The program calls the libmvec variant of the width it reports, and no other: gcc picks the variant by
    the vector width its tuning prefers, which can be narrower than the target's (the Makefile's
    NO_PREFER_256; docs/targets.md)."""
    if shutil.which("nm") is None:
        pytest.skip("needs nm (Debian package binutils)")
    calls = libmvec_imports(program)
    if calls is None:
        return
    want = {f"{VARIANT[width]}_{f}" for f in ("exp", "log1p")} if VARIANT[width] else set()
    assert calls == want, f"{label}: reports vector width {width}, calls {sorted(calls)}"


def merged_divisions(listing: str) -> list[str]:
    """Each place where a vector loop divides twice by one divisor and keeps one quotient a lane: two packed
    divisions by the same register whose results a blend or a masked merge combine. It is what gcc made
    of sigmoid_e written as `p >= 0 ? 1/(1+e) : e/(1+e)` (a full and a masked `vdivpd` with AVX-512, two
    and a `vblendvpd` with AVX2 or SSE4), where LLVM chose the numerator and divided once; the ports' own
    forms choose it themselves (ports/c/core/ops.c). A loop that divides several numerators by one sum
    (softmax's) blends none of them."""
    insns = [ln.split("\t")[-1].strip() for ln in listing.splitlines() if ln.startswith(" ") and "\t" in ln]
    found = []
    for k, insn in enumerate(insns):
        merge = re.match(r"v?divpd\s+(%[xyz]mm\d+),.*?(%[xyz]mm\d+)\{%k\d\}$", insn)
        blend = re.match(r"v?blendv?m?pd\s+(.*)$", insn)
        window = insns[max(0, k - 6):k]
        divs = [re.match(r"v?divpd\s+(%[xyz]mm\d+),.*?(%[xyz]mm\d+)$", i) for i in window]
        divs = [(d[1], d[2]) for d in divs if d]
        if merge and (merge[1], merge[2]) in divs:
            found.append(" / ".join(window[-2:] + [insn]))
        elif blend:
            sources = set(re.findall(r"%[xyz]mm\d+", blend[1]))
            for j, (divisor, dest) in enumerate(divs):
                if any(d == divisor and dest != dest2 and {dest, dest2} <= sources for d, dest2 in divs[j + 1:]):
                    found.append(" / ".join(window[-3:] + [insn]))
                    break
    return found


def check_one_division_per_quotient(program: list[str], label: str):
    files = machine_code(program)
    for f in files or []:
        found = merged_divisions(run(["objdump", "-d", "--no-show-raw-insn", str(f)]).stdout)
        assert found == [], f"{label} {f.name}: two divisions where one quotient is kept, {found[:2]}"


needs_qemu = pytest.mark.skipif(shutil.which("qemu-x86_64") is None or platform.machine() != "x86_64",
                                reason="needs qemu-user (Debian package qemu-user) on an x86-64 host")


@needs_qemu
@pytest.mark.parametrize("cpu", sorted(TARGETS))
@pytest.mark.parametrize("impl", sorted(COMPILED))
def test_older_target_runs_on_older_cpu(impl, cpu):
    if impl in NOT_UNDER_QEMU:
        pytest.skip(f"{impl}: {NOT_UNDER_QEMU[impl]}")
    model, width = TARGETS[cpu]
    program = build(cpu, impl)
    if impl in RUNTIME_CPU and width < 4:
        model = RUNTIME_CPU[impl]
        vex = [ln for ln in run(["objdump", "-d", "--no-show-raw-insn", program[-1]]).stdout.splitlines()
               if "%ymm" in ln or "%zmm" in ln or re.search(r"\tv[a-z0-9]+\s.*%xmm", ln)]
        assert vex == [], vex[:5]
    qemu = ["qemu-x86_64", "-cpu", model]
    assert width_of(program, qemu) == width
    check_libmvec_calls(program, width, f"{impl} {cpu}")
    check_one_division_per_quotient(program, f"{impl} {cpu}")
    check_known_answers(qemu + program, f"{impl} {cpu} on {model}", COMPILED[impl].levels)
    check_graph_answers(qemu + program, f"{impl} {cpu} on {model}")


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 only")
@pytest.mark.parametrize("impl", sorted(COMPILED))
def test_native_build_uses_the_widest_vectors(impl):
    flags = host_flags()
    widest = widest_width(impl, 8 if "avx512f" in flags else 4 if "avx2" in flags else 2)
    program = build("native", impl)
    assert width_of(program) == widest
    check_libmvec_calls(program, widest, f"{impl} native")
    check_one_division_per_quotient(program, f"{impl} native")
    check_known_answers(program, f"{impl} native", COMPILED[impl].levels)
    check_graph_answers(program, f"{impl} native")


def written_target(cpu: str) -> str:
    """The core/target.codon that make writes for the Codon program built for `cpu` (`make -n`: nothing is
    built)."""
    folder = BUILD if cpu == "native" else f"build/cpu-{cpu}"
    proc = subprocess.run(["make", "-n", "-B", f"BUILD={folder}", f"CPU={cpu}", f"{folder}/autograd"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if "core/target.codon" in ln and "Written by make" in ln]
    assert len(lines) == 1, proc.stdout[-2000:]
    return lines[0].replace("\\n", "\n")


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3", "x86-64-v4", "native"])
def test_the_codon_target_says_whether_it_multiplies_64_bit_integers_in_vectors(cpu):
    """VECTOR_MUL64 is AVX-512DQ's vpmullq: x86-64-v4 has it, the older targets do not, native as the host."""
    want = "avx512dq" in host_flags() if cpu == "native" else cpu == "x86-64-v4"
    assert f"VECTOR_MUL64: Literal[bool] = {want}\n" in written_target(cpu)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 only")
def test_native_codon_draws_x_and_y_in_one_vector_where_the_cpu_multiplies_64_bit_lanes():
    """With AVX-512DQ a sample's two splitmix64 draws share one 2-lane vector (vpmullq on xmm registers,
    as LLVM's SLP vectorizer puts them in the Mojo, Zig and Rust builds; Codon does not run that pass), and
    without it they stay scalar: AVX2 has no 64-bit vector multiply (docs/findings/softplus-v1.md, "Draws in
    one vector, at v1 only"; VECTOR_MUL64 in docs/targets.md, "The full width in the compilers' own loops")."""
    program = build("native", "codon")
    listing = run(["objdump", "-d", "--no-show-raw-insn", program[-1]]).stdout
    pairs = [ln for ln in listing.splitlines() if re.search(r"\tvpmullq\s.*%xmm", ln)]
    if "avx512dq" in host_flags():
        assert pairs, "no vpmullq on xmm registers: x and y are drawn one after the other"
    else:
        assert pairs == [], pairs[:3]


def test_another_codon_rebuilds_the_codon_program(tmp_path):
    """`CODON=/path/to/codon make run` (the README) over a build made with the wheel's Codon rebuilds the
    program with the Codon named, where it used to keep the other compiler's build (`make -n`: nothing is
    built)."""
    if subprocess.run(["make", "-q", f"BUILD={BUILD}", f"{BUILD}/autograd"], cwd=ROOT).returncode != 0:
        pytest.skip(f"{BUILD}/autograd is not up to date (make build first)")
    other = tmp_path / "codon"
    proc = subprocess.run(["make", "-n", f"BUILD={BUILD}", f"CODON={other}", f"{BUILD}/autograd"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"{other} build " in proc.stdout, proc.stdout[-2000:]


def test_build_runs_no_make_where_prebuilt_and_keeps_a_folder_made_for_another_cpu(monkeypatch):
    """With AUTOGRAD_PREBUILT=1, build() ran make all the same; and its native build was `make CPU=native` in the
    build folder even where that folder was made for another CPU (CPU=x86-64-v3 AUTOGRAD_BUILD=...), which
    rebuilt it for this machine. Now a prebuilt run makes nothing, and a native build of such a folder goes to
    a folder of its own."""
    import test_targets
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: calls.append(argv) or subprocess.CompletedProcess(
        argv, 0, "", ""))
    monkeypatch.setattr(test_targets, "PREBUILT", True)
    for cpu in ("native", "x86-64-v2"):
        try:
            build(cpu, "c")
        except pytest.skip.Exception:
            pass
    assert calls == []
    monkeypatch.setattr(test_targets, "PREBUILT", False)
    monkeypatch.setenv("CPU", "x86-64-v3")
    try:
        build("native", "c")
    except pytest.skip.Exception:
        pass
    (argv,) = calls
    assert "CPU=native" in argv and "BUILD=build/cpu-native" in argv and f"BUILD={BUILD}" not in argv
