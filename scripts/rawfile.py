"""A benchmark run's raw file: bench.py's JSON document, gzip-compressed.

    results/raw/<machine slug>/<date>.json.gz

Compressed, a `make bench` run is 0.34 MB instead of 2.7 (`zcat FILE | python3 -m json.tool` reads one).
The gzip header holds no time or name, so the same document always gives the same bytes.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

SUFFIX = ".json.gz"


def encode(doc: dict[str, Any]) -> bytes:
    """The file's bytes for a run's document."""
    return gzip.compress((json.dumps(doc, indent=1) + "\n").encode(), mtime=0)


def read(path: Path | str) -> dict[str, Any]:
    """A run's document from its raw file: compressed, or plain JSON (the tests' fixtures). A file cut
    short is a ValueError, as bad JSON is."""
    data = Path(path).read_bytes()
    try:
        return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    except EOFError as e:
        raise ValueError(f"{path}: {e}") from None


def runs(machine_folder: Path) -> list[Path]:
    """One machine folder's raw files (<date>.json.gz), oldest first: the names start with a UTC date."""
    return sorted(machine_folder.glob(f"*{SUFFIX}"))
