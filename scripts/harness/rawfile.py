"""A benchmark run's raw file: bench.py's JSON document, gzip-compressed; and writing any file atomically.

    results/raw/<machine slug>/<date>.json.gz

Compressed with gzip (the sizes: docs/benchmarking.md); `zcat FILE | python3 -m json.tool` reads one.
The gzip header holds no time or name, so the same document always gives the same bytes.
"""
from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

SUFFIX = ".json.gz"
# The document's layout (its keys and what they hold); report.py reads only this one.
SCHEMA = 2


def encode(doc: dict[str, Any]) -> bytes:
    """The file's bytes for a run's document."""
    return gzip.compress((json.dumps(doc, indent=1) + "\n").encode(), mtime=0)


def read(path: Path | str) -> dict[str, Any]:
    """A run's document from its raw file: compressed, or plain JSON (the tests' fixtures). A file cut
    short, bad JSON, or JSON that is not an object is a ValueError naming the file."""
    data = Path(path).read_bytes()
    try:
        doc = json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    except (EOFError, OSError, zlib.error, ValueError) as e:   # cut short, bad gzip, not UTF-8 or not JSON
        raise ValueError(f"{path}: not a raw file: {e}") from None
    if not isinstance(doc, dict):
        kind = "null" if doc is None else "an array" if isinstance(doc, list) else f"a {type(doc).__name__}"
        raise ValueError(f"{path}: not a raw file: its JSON is {kind}, not an object")
    return doc


def malformed(shown: str, what: str, e: Exception) -> ValueError:
    """The error for a document of the right schema that lacks a key or holds a value of another type
    (KeyError, TypeError or AttributeError e, found while indexing it): one line naming the file."""
    detail = f"no key {e}" if isinstance(e, KeyError) else str(e)
    return ValueError(f"{shown} is not {what}: {detail}")


def runs(machine_folder: Path) -> list[Path]:
    """One machine folder's raw files (<date>.json.gz), oldest first: the names start with a UTC date."""
    return sorted(machine_folder.glob(f"*{SUFFIX}"))


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write text (or bytes) to path so that a reader, or an interrupted run, never sees half a file.

    It goes to a temporary file in the same directory (same file system), is
    flushed to disk, and is renamed over path in one step; any failure removes it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)      # mkstemp's 0600 would hide the results from others
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)                   # the rename itself survives a power cut
    finally:
        os.close(dir_fd)


def unwritable(folder: Path) -> str | None:
    """Why a run could not write its raw file under folder (created here if missing), or None: checked before
    the builds and timings, so that a bad --results-dir costs nothing."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        return f"cannot write to {folder}: {e.strerror or e}"
    return None


def unwritable_file(path: Path) -> str | None:
    """Why a file could not be written at path at the end of a run (no such folder, a read-only one, a folder
    in its place), or None; nothing is created."""
    if path.is_dir():
        return f"cannot write to {path}: it is a folder"
    if not path.parent.is_dir():
        return f"cannot write to {path}: no folder {path.parent}"
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"cannot write to {path}: permission denied"
    return None


def write_error(e: OSError) -> str:
    """The error line for a raw file that could not be written at the end of a run."""
    return f"error: cannot write the results file: {e.strerror or e}" + (f" ({e.filename})" if e.filename else "")


def write_run(path: Path, doc: dict[str, Any]) -> str | None:
    """A run's document written to its raw file; the error line where it could not be (a full disk), else None."""
    try:
        write_atomic(path, encode(doc))
    except OSError as e:
        return write_error(e)
    return None


def raw_path(results_dir: Path, slug: str, started: dt.datetime, folder: str = "raw") -> Path:
    """results/raw/<machine slug>/<date>.json.gz (a sweep's: folder "sweep"); the date sorts chronologically."""
    return results_dir / folder / slug / f"{started.strftime('%Y-%m-%dT%H%M%SZ')}{SUFFIX}"
