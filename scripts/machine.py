"""What a benchmark ran on: the CPU (/proc/cpuinfo), its slug, and what each program says it targets.

The slug names the results folder of a machine (results/raw/<slug>/), so that runs on different
CPUs never overwrite or mix with each other: e.g. `amd-epyc-fam25-model17-avx512`.
"""
from __future__ import annotations

import os
import platform
import re
import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

# Words of a model name that say nothing about which CPU it is.
NOISE = re.compile(r"\((?:r|tm)\)|\bcpu\b|\bprocessor\b|\b\d+-core\b|\b(?:with|w/) radeon.*|@.*", re.IGNORECASE)
# The second line of `PROG --version`, e.g.
#   target native, vector width 8 doubles: AVX-512F (libmvec _ZGVeN8v)
VECTOR_LINE = re.compile(r"^target (?P<target>\S+), vector width (?P<width>\d+) doubles?(?:: (?P<what>.*))?$")


def cpuinfo(text: str) -> dict[str, str]:
    """The fields of the first processor in /proc/cpuinfo's text ('key: value' lines)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def cpu_facts(text: str | None = None) -> dict[str, Any]:
    """Model name, family, model, the avx2/avx512f flags and the architecture of this CPU.

    `text` is /proc/cpuinfo's content (read when None); a field it lacks is None.
    """
    if text is None:
        try:
            text = Path("/proc/cpuinfo").read_text()
        except OSError:
            text = ""
    f = cpuinfo(text)
    flags = set(f.get("flags", f.get("Features", "")).split())
    return {"cpu": f.get("model name") or platform.processor() or platform.machine(),
            "cpu_family": int(f["cpu family"]) if f.get("cpu family", "").isdigit() else None,
            "cpu_model": int(f["model"]) if f.get("model", "").isdigit() else None,
            "avx2": "avx2" in flags, "avx512f": "avx512f" in flags, "arch": platform.machine()}


def gpus() -> list[str]:
    """'name, driver, memory' of each NVIDIA GPU nvidia-smi lists; [] where there is none or no nvidia-smi."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [ln.strip() for ln in out.stdout.splitlines() if ln.strip()] if out.returncode == 0 else []


# The caches a sweep marks (scripts/sweep.py): sysfs's (level, type) of each, by the name the raw file gives it.
CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
CACHES = {"L1d": ("1", "Data"), "L2": ("2", "Unified"), "L3": ("3", "Unified")}


def cache_bytes(text: str) -> int | None:
    """sysfs's size of a cache ("32K", "1024K", "32M") in bytes; None when it reads as no size."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)\s*", text)
    return int(m[1]) << {"": 0, "K": 10, "M": 20, "G": 30}[m[2]] if m else None


def caches(root: Path = CACHE_DIR) -> dict[str, int | None]:
    """CPU 0's L1d, L2 and L3 sizes in bytes from sysfs (index*/level, type, size); None for each the host
    does not report (no sysfs, a virtual machine hiding it, a CPU without an L3)."""
    found: dict[str, int | None] = dict.fromkeys(CACHES)
    for index in sorted(root.glob("index*")):
        try:
            level, kind, size = ((index / f).read_text().strip() for f in ("level", "type", "size"))
        except OSError:
            continue
        for name, want in CACHES.items():
            if (level, kind) == want and found[name] is None:
                found[name] = cache_bytes(size)
    return found


def cores() -> int:
    """The CPUs this process may run on (its affinity), which is what the programs' v4 uses."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def slug(facts: dict[str, Any]) -> str:
    """A folder name for the machine: model name, family and model, widest vector extension."""
    name = re.sub(r"[^a-z0-9]+", "-", NOISE.sub(" ", facts["cpu"] or "").lower()).strip("-")[:40].strip("-")
    parts = [name or re.sub(r"[^a-z0-9]+", "-", (facts.get("arch") or "cpu").lower())]
    if facts.get("cpu_family") is not None:
        parts.append(f"fam{facts['cpu_family']}")
    if facts.get("cpu_model") is not None:
        parts.append(f"model{facts['cpu_model']}")
    if facts.get("avx512f"):
        parts.append("avx512")
    elif facts.get("avx2"):
        parts.append("avx2")
    return "-".join(parts)


def vector_line(version_output: str) -> dict[str, Any]:
    """target, vector_width and vector from the second line of `PROG --version` (None if absent)."""
    lines = version_output.splitlines()
    m = VECTOR_LINE.match(lines[1].strip()) if len(lines) > 1 else None
    if not m:
        return {"target": None, "vector_width": None, "vector": None}
    return {"target": m["target"], "vector_width": int(m["width"]), "vector": m["what"]}


def cpu_clock() -> tuple[float, float, float, float] | None:
    """(wall, busy, own, steal): now, the CPU seconds every CPU has spent busy since boot (/proc/stat, steal
    included), those of this process and its finished children, and the CPU seconds the hypervisor has
    given to other guests since boot (steal); None where /proc/stat is absent."""
    try:
        ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    busy = (sum(ticks) - ticks[3] - ticks[4]) / hz      # all but idle and iowait
    own = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for f in ("ru_utime", "ru_stime"))
    return time.monotonic(), busy, own, ticks[7] / hz


def other_load(start: tuple[float, ...] | None, end: tuple[float, ...] | None) -> float | None:
    """How many CPUs other processes kept busy, on average, between two cpu_clock() readings."""
    if not start or not end or end[0] <= start[0]:
        return None
    return max(0.0, ((end[1] - start[1]) - (end[2] - start[2])) / (end[0] - start[0]))


def steal(start: tuple[float, ...] | None, end: tuple[float, ...] | None) -> float | None:
    """How many CPUs the hypervisor gave to other guests, on average, between two cpu_clock() readings
    (counted in other_load too: a stolen CPU was not free)."""
    if not start or not end or end[0] <= start[0] or len(start) < 4 or len(end) < 4:
        return None
    return max(0.0, (end[3] - start[3]) / (end[0] - start[0]))
