"""What the numbers were measured on, for the raw file: the CPU (scripts/machine.py), memory, OS, commit, load."""
from __future__ import annotations

import datetime as dt
import os
import platform
import socket
from pathlib import Path
from typing import Any

import machine
from harness.processes import git


def machine_info(started: dt.datetime) -> dict[str, Any]:
    """The machine's facts at the start of a run."""
    facts = machine.cpu_facts()
    try:
        mem = next(ln.split()[1] for ln in Path("/proc/meminfo").read_text().splitlines()
                   if ln.startswith("MemTotal"))
        memory = f"{int(mem) / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        memory = ""
    return {**facts, "slug": machine.slug(facts), "cores": machine.cores(), "logical_cpus": os.cpu_count(),
            "gpus": machine.gpus(), "memory": memory, "os": platform.platform(), "host": socket.gethostname(),
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(git("status", "--porcelain")),
            "date": started.isoformat(timespec="seconds"),
            "load_average_start": [round(v, 2) for v in os.getloadavg()]}
