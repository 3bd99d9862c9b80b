#!/usr/bin/env python3
"""What the Codon program needed beyond plain typed Python: each construct, what it is for, and where it
is used, counted from the sources so that the README's list stays true.

    python scripts/codon_needs.py            # the table, as the README shows it

The sources are read as Python tokens, so a construct named in a comment or a string is not counted.
tests/test_docs.py fails when the README's block no longer matches this count.
"""
from __future__ import annotations

import argparse
import io
import sys
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness import ROOT
from harness.processes import run_main

# The program's sources, as the Makefile's CODON_SRC lists them (the tests' helper programs are not in it).
SOURCES = ["*.codon", "core/*.codon", "cli/*.codon", "softplus/*.codon", "graph/*.codon"]
SHOWN = 3          # files named per construct; the rest are counted


@dataclass(frozen=True)
class Construct:
    name: str        # as the table shows it
    kind: str        # "decorator", "subscript" (Name[...]) or "c-import" (from C import ...)
    token: str       # the decorator's or the type's name; "" for c-import
    why: str         # what it does here


CONSTRUCTS = [
    Construct("`@inline`", "decorator", "inline",
              "forces a call inline, so LLVM sees through the tape's record and backward (softplus v2) and the "
              "per-op helpers of the hot loops"),
    Construct("`@noinline`", "decorator", "noinline",
              "keeps a function out of line where inlining cost speed: a level's loop out of `main`, an "
              "allocation out of a hot loop"),
    Construct("`@llvm`", "decorator", "llvm",
              "a function written in LLVM IR: vector lane arithmetic, libmvec calls at the target's width, "
              "grouped stores (Codon runs no SLP vectorizer and has no `restrict`)"),
    Construct("`Ptr[T]`", "subscript", "Ptr", "raw typed memory: the tapes' arrays and the node pools"),
    Construct("`Literal[T]`", "subscript", "Literal", "compile-time constants (batch size, vector width, op kinds)"),
    Construct("`Static[T]`", "subscript", "Static", "compile-time parameters of generic code"),
    Construct("`@tuple`", "decorator", "tuple", "value types held in registers, not on the heap"),
    Construct("`@par`", "decorator", "par", "an OpenMP parallel loop (v4)"),
    Construct("`@kernel`", "decorator", "kernel", "a GPU kernel (v5)"),
    Construct("`from C import`", "c-import", "",
              "calling C directly: the Boehm collector's allocation, pause and rate calls, libc's environment, "
              "number formatting and parsing, clocks, the machine's memory size, OpenMP and the CUDA driver"),
]


@dataclass
class Use:
    count: int
    files: Counter
    names: Counter    # c-import: the functions imported


def tokens(path: Path) -> list[tokenize.TokenInfo]:
    """The file's tokens, comments and blank lines left out."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
    return [t for t in tokenize.tokenize(io.BytesIO(path.read_bytes()).readline) if t.type not in skip]


def uses_in(toks: list[tokenize.TokenInfo], c: Construct) -> list[str]:
    """One entry per use of c in a token list (c-import: the imported function's name)."""
    out = []
    for k, t in enumerate(toks[:-1]):
        nxt = toks[k + 1]
        if c.kind == "decorator" and t.string == "@" and nxt.string == c.token:
            out.append(c.token)
        elif c.kind == "subscript" and t.type == tokenize.NAME and t.string == c.token and nxt.string == "[":
            out.append(c.token)
        elif c.kind == "c-import" and t.string == "from" and nxt.string == "C" and k + 3 < len(toks) \
                and toks[k + 2].string == "import":
            out.append(toks[k + 3].string)
    return out


def count(root: Path = ROOT) -> dict[str, Use]:
    """Every construct's uses in the program's sources under root."""
    files = sorted({p for pattern in SOURCES for p in root.glob(pattern)})
    result = {c.name: Use(0, Counter(), Counter()) for c in CONSTRUCTS}
    for path in files:
        toks = tokens(path)
        for c in CONSTRUCTS:
            found = uses_in(toks, c)
            if found:
                use = result[c.name]
                use.count += len(found)
                use.files[path.relative_to(root).as_posix()] += len(found)
                if c.kind == "c-import":
                    use.names.update(found)
    return result


def table(root: Path = ROOT) -> list[str]:
    """The markdown table: construct, uses, files (most uses first), what it is for."""
    uses = count(root)
    rows = ["| construct | uses | where (most uses first) | what for |", "| :-- | --: | :-- | :-- |"]
    for c in CONSTRUCTS:
        u = uses[c.name]
        if not u.count:
            continue
        ranked = sorted(u.files.items(), key=lambda fn: (-fn[1], fn[0]))
        more = len(ranked) - SHOWN
        where = ", ".join(f"[{f}]({f}) {n}" for f, n in ranked[:SHOWN]) + (
            f", {more} more file" + ("s" if more > 1 else "") if more > 0 else "")
        why = c.why + (f" ({', '.join(f'`{n}`' for n in sorted(u.names))})" if u.names else "")
        rows.append(f"| {c.name} | {u.count} | {where} | {why} |")
    return rows + ["", f"*Counted by `python scripts/codon_needs.py` in the program's sources "
                       f"({', '.join(SOURCES)}), comments and strings left out.*", ""]


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()   # --help, and bad usage refused
    sys.stdout.write("\n".join(table()))
    return 0


if __name__ == "__main__":
    run_main(main)
