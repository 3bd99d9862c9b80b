"""1. Build every implementation with the project's Makefile, each on its own; probe which ones have the graph
workload and a GPU; record each compiled one's toolchain."""
from __future__ import annotations

import argparse
import importlib.util
import platform
import shlex
import shutil
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import machine
from harness import ROOT
from harness.contract import NO_DEVICE
from harness.processes import failure, log, run_process
from harness.state import ImplState, ImplStatus
from impls import LEVEL_ORDER, Impl


def module_present(name: str) -> bool:
    """Whether this Python can import `name` (looked up, not imported: imports are slow)."""
    return importlib.util.find_spec(name) is not None


def missing_paths(impl: Impl, build: str) -> list[str]:
    """The files impl's command names that do not exist."""
    return [a for a in impl.command(build)[:2] if "/" in a and not Path(a).exists()]


def make_command(impl: Impl, build_dir: str, cpu: str | None) -> list[str]:
    """make BUILD=... [CPU=...] TARGET, with the implementation's own Makefile if it names one."""
    argv = ["make", "--no-print-directory"] + (["-f", impl.makefile] if impl.makefile else [])
    return argv + [f"BUILD={build_dir}"] + ([f"CPU={cpu}"] if cpu else []) + [impl.make_target(build_dir) or ""]


def build_all(states: list[ImplState], opts: argparse.Namespace) -> None:
    """make each target on its own; set each state to ok, skipped or build-failed.

    make's exit status decides: a failed make is a failure even if an old binary is left; a
    make that succeeds but prints `skip:` (the Makefile's way of saying a toolchain is
    missing) is a skip; one that succeeds yet leaves no program is a failure.
    """
    targets = [s for s in states if s.impl.target and not opts.no_build]
    for n, state in enumerate(targets, 1):
        argv = make_command(state.impl, opts.build_dir, opts.cpu)
        log(f"[build {n}/{len(targets)}] {state.impl.name}: {shlex.join(argv[2:])}")
        start = time.monotonic()
        proc = run_process(argv, timeout=1800)
        state.build_seconds = round(time.monotonic() - start, 2)
        skip = [ln for ln in proc.stdout.splitlines() if ln.startswith("skip:")]
        if proc.returncode != 0:
            errors = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines()
                      if "error" in ln.lower() and not ln.startswith("make")]
            state.status = ImplStatus.BUILD_FAILED
            state.reason = f"make {argv[-1]}: {failure(proc, 1800)}" + (f" ({errors[0][:200]})" if errors else "")
            log(f"  FAILED after {state.build_seconds:.1f} s: {state.reason}")
            for line in (proc.stdout + proc.stderr).splitlines()[-10:]:
                log(f"  | {line}")
        elif skip:
            state.skip(skip[0][len("skip:"):].strip())
        elif missing_paths(state.impl, opts.build_dir):
            state.status = ImplStatus.BUILD_FAILED
            state.reason = f"make succeeded but left no {missing_paths(state.impl, opts.build_dir)[0]}"
        else:
            log(f"  done in {state.build_seconds:.1f} s")
    for state in states:
        impl = state.impl
        if state.status is ImplStatus.PENDING:
            if impl.module and not module_present(impl.module):
                state.skip(f"{impl.module} is not installed (make peers installs it)")
            elif impl.program and shutil.which(impl.program) is None:
                state.skip(f"{impl.program} not found (.ci/run installs it)")
            elif missing_paths(impl, opts.build_dir):
                state.skip(f"{missing_paths(impl, opts.build_dir)[0]} not found"
                           + (" (--no-build)" if opts.no_build else ""))
            else:
                state.status = ImplStatus.OK
                proc = run_process(impl.command(opts.build_dir) + ["--version"], timeout=opts.timeout)
                if proc.returncode == 0:
                    state.version = (proc.stdout.splitlines() or [""])[0].strip()
                    state.vector = machine.vector_line(proc.stdout)
        if state.status is ImplStatus.SKIPPED:
            log(f"skip: {impl.name}: {state.reason}")


def probe_graph(states: list[ImplState], opts: argparse.Namespace) -> None:
    """Ask each program whether it has the graph workload: exit 0 yes, exit 2 no, else failed."""
    if "graph" not in opts.workloads:
        return
    for state in states:
        if state.status is not ImplStatus.OK:
            continue
        proc = run_process(state.impl.command(opts.build_dir)
                           + ["--workload", "graph", "--ops", "4", "--iters", "1", "--json"], opts.timeout)
        state.graph = ("yes" if proc.returncode == 0 else "no" if proc.returncode == 2
                       else f"failed: {failure(proc, opts.timeout)}")
        log(f"[probe] {state.impl.name}: graph workload: {state.graph}")


def probe_gpu(states: list[ImplState], opts: argparse.Namespace) -> None:
    """Ask each program with GPU levels whether it finds a device: yes, no (exit 2 saying why), or failed."""
    for state in states:
        wanted = [lv for lv in state.impl.gpu_levels if lv in (opts.levels or LEVEL_ORDER)]
        if state.status is not ImplStatus.OK or not wanted or "softplus" not in opts.workloads:
            continue
        proc = run_process(state.impl.command(opts.build_dir) + ["--level", wanted[0], "--iters", "1", "--json"],
                           opts.timeout)
        refusal = NO_DEVICE.match(proc.stderr)
        if proc.returncode == 0:
            state.gpu = "yes"
        elif proc.returncode == 2 and refusal and not proc.stdout:
            state.gpu = f"no: {refusal.group(2).strip()}"
            log(f"skip: {state.impl.name} {', '.join(wanted)}: {refusal.group(2).strip()}")
        else:
            state.gpu = f"failed: {failure(proc, opts.timeout)}"
            log(f"[probe] {state.impl.name}: {wanted[0]}: {state.gpu}")


def shown_command(argv: list[str]) -> str:
    """A command line for the record: paths inside the repository relative to it."""
    out = []
    for a in argv:
        p = Path(a)
        out.append(str(p.relative_to(ROOT)) if p.is_absolute() and p.is_relative_to(ROOT) else a)
    return shlex.join(out)


def make_variable(name: str, build_dir: str, cpu: str | None) -> str:
    """A variable's value in the project's Makefile, without editing it (GNU make --eval)."""
    proc = run_process(["make", "-s", "--no-print-directory", f"BUILD={build_dir}"]
                       + ([f"CPU={cpu}"] if cpu else [])
                       + ["--eval", "bench-print-%: ; @echo $($*)", f"bench-print-{name}"], timeout=30)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def toolchain(impl: Impl, opts: argparse.Namespace) -> dict[str, Any]:
    """The compiler's version line and the build flags of a compiled implementation."""
    info: dict[str, Any] = {}
    if impl.compiler:
        command = make_variable(impl.compiler[0], opts.build_dir, opts.cpu)
        if command:
            proc = run_process(shlex.split(command) + impl.compiler[1:], timeout=60)
            info["compiler"] = command
            info["compiler_version"] = (proc.stdout.strip().splitlines() or [""])[0] if proc.returncode == 0 else ""
    if impl.flags:
        info["flags"] = {name: make_variable(name, opts.build_dir, opts.cpu) for name in impl.flags}
    if impl.module:
        try:
            info["library_version"] = metadata.version(impl.module)
        except metadata.PackageNotFoundError:
            pass
    if impl.slow or impl.module:
        info["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    return info
