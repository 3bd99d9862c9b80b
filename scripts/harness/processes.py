"""Running one child process: its own process group, a timeout, its CPU time and peak RSS; the progress
lines; and a script's entry point, run_main."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, NoReturn

from harness import ROOT


class Unwritable(Exception):
    """Standard output could not be written: a full disk, /dev/full, a pipe closed early."""


class GuardedStdout:
    """sys.stdout, whose failures raise Unwritable, so that they are told apart from other files' OSErrors."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as e:
            raise Unwritable(e.strerror or str(e)) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as e:
            raise Unwritable(e.strerror or str(e)) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def run_main(main: Callable[[], int | None]) -> NoReturn:
    """A script's entry point, sys.exit(main()), where standard output that cannot be written is one error
    line and exit 1, not a traceback (or Python's "Exception ignored" at exit, status 120)."""
    sys.stdout = GuardedStdout(sys.stdout)
    try:
        try:
            status = main()
        except SystemExit as e:                         # argparse's --help and usage errors
            status = e.code
        sys.stdout.flush()
    except Unwritable as e:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())   # what is still buffered: nowhere
        print(f"error: cannot write to standard output: {e}", file=sys.stderr)
        status = 1
    sys.exit(status)


def log(message: str) -> None:
    """A progress line on stderr, shown at once."""
    print(message, file=sys.stderr, flush=True)


def clock(seconds: float) -> str:
    """Seconds as m:ss."""
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


@dataclass
class Proc:
    """What one process did."""
    returncode: int | None           # None: killed after the timeout
    stdout: str
    stderr: str
    wall: float
    cpu: float = 0.0                 # CPU seconds (user + system) of the process, all its threads
    peak_rss_kb: int | None = None   # its peak resident set (ru_maxrss) in KiB; None where it never started


MAXRSS = ROOT / "build" / "maxrss"       # scripts/maxrss.c, made by `make build`
_maxrss: list[Path | None] = []           # the launcher once looked for: [path] or [None]


def maxrss() -> Path | None:
    """The launcher that reports a child's own peak RSS (scripts/maxrss.c), made here by make if it is
    missing or older than its source; None where it cannot be made: then runs record no peak. A child that
    this Python starts itself begins with the harness's own peak (Linux keeps the peak across exec)."""
    if not _maxrss:
        source = ROOT / "scripts" / "maxrss.c"
        if not MAXRSS.exists() or MAXRSS.stat().st_mtime < source.stat().st_mtime:
            try:
                subprocess.run(["make", "-s", "--no-print-directory", "build/maxrss"], cwd=ROOT,
                               capture_output=True, timeout=300)
            except (OSError, subprocess.TimeoutExpired):
                pass
        _maxrss.append(MAXRSS if os.access(MAXRSS, os.X_OK) else None)
    return _maxrss[0]


def run_process(argv: list[str], timeout: float | None, env: dict[str, str] | None = None) -> Proc:
    """Run argv (in env, default this process's) with its own process group; on timeout or interrupt kill
    the whole group.

    Killing the group, not just the child, matters: a grandchild holding the output pipes
    open would otherwise keep us waiting long after the timeout. The child runs under maxrss(), which
    reports its own peak RSS on a pipe, and is reaped here with os.wait4 for its own CPU time.
    """
    start = time.monotonic()
    launcher = maxrss()
    peak_r, peak_w = os.pipe() if launcher else (-1, -1)
    try:
        child = subprocess.Popen(([str(launcher), str(peak_w)] if launcher else []) + argv, cwd=ROOT, env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, errors="replace", start_new_session=True,
                                 pass_fds=(peak_w,) if launcher else ())
    except OSError as e:
        return Proc(127, "", f"cannot start {argv[0]}: {e.strerror}", 0.0)
    finally:
        if launcher:
            os.close(peak_w)
    got: dict[str, str] = {}

    def read(key: str, pipe: IO[str]) -> None:
        got[key] = pipe.read()

    def exited() -> None:
        # Left a zombie (WNOWAIT) until reap(): its pid, the group's id, stays taken until every kill is done.
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)

    # Both pipes read to EOF and the child's exit awaited, each in a thread, so that one deadline bounds
    # them all as communicate()'s timeout does.
    workers = [threading.Thread(target=read, args=("out", child.stdout), daemon=True),
               threading.Thread(target=read, args=("err", child.stderr), daemon=True),
               threading.Thread(target=exited, daemon=True)]
    for w in workers:
        w.start()
    timed_out = False
    try:
        for w in workers:
            w.join(None if timeout is None else max(0.0, start + timeout - time.monotonic()))
            if w.is_alive():
                timed_out = True
                kill_group(child)
                break
        for w in workers:
            w.join()
    except BaseException:
        kill_group(child)
        for w in workers:
            w.join()
        reap(child)
        if launcher:
            os.close(peak_r)
        raise
    cpu, _ = reap(child)
    peak = None
    if launcher:
        with os.fdopen(peak_r) as reported:
            text = reported.read().strip()
        peak = int(text) if text.isdigit() else None
    return Proc(None if timed_out else child.returncode, got.get("out", ""), got.get("err", ""),
                time.monotonic() - start, cpu, peak)


def checked_run(argv: list[str], timeout: float, check: bool = True,
                cwd: Path | None = None) -> subprocess.CompletedProcess:
    """One short run, its output captured (the one-off scripts' runs, not a timed pair's): RuntimeError,
    naming the command, where it cannot start, outlasts timeout, or (check) exits non-zero."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except OSError as e:
        raise RuntimeError(f"{shlex.join(argv)}: cannot run it: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{shlex.join(argv)}: timed out after {timeout:g} s (--timeout)") from None
    if check and proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)}: exit status {proc.returncode}: {proc.stderr.strip()[:200]}")
    return proc


def reap(child: subprocess.Popen) -> tuple[float, int]:
    """Reap the exited child with os.wait4: its CPU seconds (user + system, its threads and the descendants
    it waited for) and its peak RSS in KiB (the largest of any one of those processes, and of what it
    inherited: see maxrss()). Its exit status goes
    to child.returncode as Popen gives it (a signal: its negative number), so that Popen never waits for it;
    its pipes are closed."""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    for pipe in (child.stdout, child.stderr):
        if pipe:
            pipe.close()
    peak = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss    # macOS: in bytes
    return usage.ru_utime + usage.ru_stime, peak


def kill_group(child: subprocess.Popen) -> None:
    """SIGKILL the child's process group (it leads one: start_new_session)."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def last_line(text: str) -> str:
    """The last non-empty line of a program's output, shortened."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def failure(proc: Proc, timeout: float) -> str:
    """Why a run failed: timed out, killed by a signal, or a non-zero exit status."""
    if proc.returncode is None:
        return f"timed out after {timeout:g} s (killed)"
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        why = f"crashed ({name})"
    else:
        why = f"exit status {proc.returncode}"
    tail = last_line(proc.stderr)
    return f"{why}: {tail}" if tail else why


def git(*args: str) -> str:
    """A git command's output in the repository ('' where git or the repository is absent)."""
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
