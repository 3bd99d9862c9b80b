"""Running one child process: its own process group, a timeout, its CPU time; and the progress lines."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from harness import ROOT


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


def children_cpu() -> float:
    """CPU seconds of this process's finished (waited-for) children so far, all their threads."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_process(argv: list[str], timeout: float) -> Proc:
    """Run argv with its own process group; on timeout or interrupt kill the whole group.

    Killing the group, not just the child, matters: a grandchild holding the output pipes
    open would otherwise keep us waiting long after the timeout. The process's CPU time is
    what the children's CPU time grew by while it ran: the harness runs one child at a time.
    """
    start, cpu = time.monotonic(), children_cpu()
    try:
        child = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, errors="replace",
                                 start_new_session=True)
    except OSError as e:
        return Proc(127, "", f"cannot start {argv[0]}: {e.strerror}", 0.0)
    try:
        out, err = child.communicate(timeout=timeout)
        return Proc(child.returncode, out, err, time.monotonic() - start, children_cpu() - cpu)
    except subprocess.TimeoutExpired:
        kill_group(child)
        out, err = child.communicate()
        return Proc(None, out, err, time.monotonic() - start, children_cpu() - cpu)
    except BaseException:
        kill_group(child)
        child.communicate()
        raise


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
