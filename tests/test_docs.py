"""What the READMEs say holds on every machine the project runs on, not just the one they were written on."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))


def test_the_top_readme_shows_a_module_diff_that_works():
    """The layout section's diff command names two files that exist (issue 18)."""
    text = (ROOT / "README.md").read_text()
    (line,) = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("diff -u ")]
    codon, port = line.split()[2:4]
    assert (ROOT / codon).is_file() and (ROOT / port).is_file()


def test_the_readmes_numbers_are_generated_from_the_raw_files_they_cite():
    """Every report block of the README equals what scripts/report.py makes of the raw file it names
    (audit 7): regenerate them with `python scripts/report.py --readme README.md`."""
    from harness import blocks
    text = (ROOT / "README.md").read_text()
    names = [m["name"] for m in blocks.BLOCK.finditer(text)]
    assert {"headline", "which-tool", "codon-needs", "softplus-ns", "graph-ns"} <= set(names)
    for m in blocks.BLOCK.finditer(text):
        if m["raw"] is None:                                    # drawn from the sources (codon-needs)
            continue
        files = sorted(ROOT.glob(m["raw"])) if m["name"] in blocks.MANY_BLOCKS else [ROOT / m["raw"]]
        assert files and all(f.is_file() for f in files), m["raw"]
        # make bench's, gpu_bench.sh's, make sweep's (the `sweep` block alone)
        assert m["raw"].startswith(("results/sweep/",) if m["name"] in blocks.SWEEP_BLOCKS
                                   else ("results/raw/", "results/gpu/raw/")), m["raw"]
    # That each block is current: test_every_pages_generated_blocks_are_current, the README among the pages.


def test_the_committed_runs_are_compressed():
    """Every run under results/raw, results/gpu/raw and results/sweep is a .json.gz, as bench.py and sweep.py
    write it: as plain JSON they would outgrow the 64 MiB the device tool carries with a working tree.
    (Beside a sweep, `make sweep` draws its charts, which git ignores.)"""
    runs = [p for base in ("results/raw", "results/gpu/raw", "results/sweep") for p in (ROOT / base).rglob("*")
            if p.is_file() and not (base == "results/sweep" and p.suffix == ".png")]
    assert runs and all(p.name.endswith(".json.gz") and p.read_bytes()[:2] == b"\x1f\x8b" for p in runs), \
        [str(p.relative_to(ROOT)) for p in runs if not p.name.endswith(".json.gz")][:5]


def test_the_contract_names_every_implementation_of_the_registry():
    """contract §5 lists the impl names of its time; §6 names the ones added since, each from the registry
    (scripts/impls.py), and no name the registry lacks."""
    import re
    import impls
    text = (ROOT / "docs" / "contract.md").read_text()
    listed = re.search(r"`impl` is one of ([\w, -]+)\.", text)[1].split(", ")
    (added,) = re.findall(r"\*\*Implementation names\.\*\*(.*?)\n\n", text, re.S)
    added = re.findall(r"`([\w-]+)`", added.split("besides §5's,", 1)[1])
    names = {i.name for i in impls.DEFAULT}
    assert set(listed) | set(added) == names, (listed, added, names)


# --- links, and what the front page promises ------------------------------------------------------

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def markdown_files() -> list[Path]:
    """Every markdown page of the project: the tracked ones and the ones the work tree adds (not build output)."""
    skip = {".venv", "build", ".git", ".pytest_cache", "node_modules"}
    return sorted(p for p in ROOT.rglob("*.md") if not skip & set(p.relative_to(ROOT).parts)
                  and not p.relative_to(ROOT).parts[0].startswith("build"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped but hyphens, spaces as hyphens."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors a page has: its headings' (numbered -1, -2 where repeated) and its explicit ids."""
    out, seen = set(), {}
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    for line in text.splitlines():
        if line.startswith("#"):
            s = slug(line.lstrip("#"))
            n = seen.get(s, 0)
            out.add(s if n == 0 else f"{s}-{n}")
            seen[s] = n + 1
    return out | set(ANCHOR.findall(text))


def test_every_link_resolves():
    """Every relative link of every page names a file or folder that exists, and an anchor that page has
    (issue 49); web links are not fetched."""
    broken = []
    for page in markdown_files():
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        for m in LINK.finditer(text):
            target = m[1] or m[2]
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such anchor)")
    assert not broken, "\n".join(broken)


def test_the_link_checker_finds_a_broken_link_and_a_missing_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A title\n\n## Two words\n\n[ok](#two-words) [bad](#nowhere) [file](missing.md)\n")
    found = [m[1] for m in LINK.finditer(page.read_text())]
    assert found == ["#two-words", "#nowhere", "missing.md"]
    assert anchors(page) == {"a-title", "two-words"}


def generated_pages() -> list[Path]:
    """The pages holding report blocks: the README and docs/."""
    from harness import blocks
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in pages if blocks.BLOCK.search(p.read_text())]


def test_every_pages_generated_blocks_are_current():
    """The README's and docs/'s report blocks equal what report.py makes of the raw files (and sources) they
    name: `python scripts/report.py --readme FILE ...` regenerates them."""
    from harness import blocks
    stale = [str(p.relative_to(ROOT)) for p in generated_pages()
             if blocks.fill_blocks(p.read_text(), base=p.parent) != p.read_text()]
    assert not stale, f"stale report blocks in {stale}: run python scripts/report.py --readme {' '.join(stale)}"


def test_what_codon_needed_is_counted_from_the_sources(tmp_path):
    """scripts/codon_needs.py counts decorators, subscripts and C imports as tokens, never in comments or
    strings; the README's block is its table of the real sources (checked above)."""
    import codon_needs
    (tmp_path / "core").mkdir()
    (tmp_path / "a.codon").write_text('# @inline in a comment\n@inline\ndef f(p: Ptr[float]) -> Ptr[float]:\n'
                                      '    s = "@llvm Ptr[int]"\n    return p\n'
                                      'from C import GC_malloc_many(int) -> Ptr[byte]\n')
    (tmp_path / "core" / "b.codon").write_text("@llvm\ndef g(x: Literal[int]) -> int:\n    ret i64 0\n")
    uses = codon_needs.count(tmp_path)
    assert (uses["`@inline`"].count, uses["`Ptr[T]`"].count, uses["`@llvm`"].count) == (1, 3, 1)
    assert uses["`from C import`"].names == {"GC_malloc_many": 1}
    assert uses["`Literal[T]`"].files == {"core/b.codon": 1}
    table = "\n".join(codon_needs.table(tmp_path))
    assert "`@inline`" in table and "@par" not in table
    readme = (ROOT / "README.md").read_text()
    assert "<!-- report.py: codon-needs -->" in readme
    import subprocess
    bad = subprocess.run([sys.executable, str(ROOT / "scripts/codon_needs.py"), "--bogus"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and not bad.stdout and "error: unrecognized arguments: --bogus" in bad.stderr


def readme_prose() -> str:
    """The README without its generated blocks and code blocks."""
    from harness import blocks
    text = blocks.BLOCK.sub("", (ROOT / "README.md").read_text())
    return re.sub(r"```.*?```", "", text, flags=re.S)


def test_the_readme_is_a_front_page():
    """At most 300 lines, the answers a newcomer looks for in its first 150, and no interval or commit id in
    its prose: those live in generated blocks, results/ and docs/ (issue 49)."""
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300, len(lines)
    headings = {ln.lstrip("#").strip().lower(): k for k, ln in enumerate(lines) if ln.startswith("## ")}
    for wanted in ("quick start", "which tool for a python autograd", "what codon needed"):
        assert wanted in headings and headings[wanted] < 150, (wanted, headings)
    prose = readme_prose()
    assert not re.findall(r"\[\d+\.\d+, \d+\.\d+\]", prose)
    assert not [w for w in re.findall(r"\b[0-9a-f]{7,40}\b", prose) if re.search(r"[a-f]", w) and re.search(r"\d", w)]
    results = (ROOT / "results" / "README.md").read_text().splitlines()
    assert len(results) <= 400, len(results)


def test_the_headline_chart_is_drawn_from_the_headline_blocks_run():
    """results/headline.png carries the raw file it was drawn from; it must be the README headline block's."""
    from harness import blocks
    (m,) = [m for m in blocks.BLOCK.finditer((ROOT / "README.md").read_text()) if m["name"] == "headline"]
    png = (ROOT / "results" / "headline.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"scripts/report.py {m['raw']})".encode() in png, "stale: python scripts/report.py --readme README.md"


def test_make_help_lists_every_target_once():
    """`make help`: one line for each target of .PHONY (the Makefile's and scripts/Makefile.bench's), none
    missing and none that is not a target (issue 49)."""
    import subprocess
    out = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    listed = [ln.split()[0] for ln in out.splitlines() if ln.strip()]
    phony = [t for f in ("Makefile", "scripts/Makefile.bench") for ln in (ROOT / f).read_text().splitlines()
             if ln.startswith(".PHONY:") for t in ln.split(":", 1)[1].split()]
    assert sorted(listed) == sorted(set(listed)) == sorted(phony), (listed, phony)
    assert all(len(ln.split(None, 1)) == 2 for ln in out.splitlines() if ln.strip())


def test_the_harness_is_a_package_of_short_modules_that_imports_nothing_from_tests():
    """CONTRIBUTING's promise (issue 50): no Python file under scripts/ over 400 lines, bench.py and report.py
    thin command lines over scripts/harness/, and no script importing bench.py or anything under tests/."""
    import ast
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / "scripts").rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long
    for path in sorted((ROOT / "scripts").rglob("*.py")):
        imported = {a.name.split(".")[0] for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, ast.Import) for a in node.names}
        imported |= {node.module.split(".")[0] for node in ast.walk(ast.parse(path.read_text()))
                     if isinstance(node, ast.ImportFrom) and node.module}
        forbidden = {"bench", "report"} | {p.stem for p in (ROOT / "tests").glob("*.py")}
        assert not imported & forbidden, (path.relative_to(ROOT), imported & forbidden)
    assert not (ROOT / "tests" / "reference.py").exists()
