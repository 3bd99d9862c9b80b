"""What the READMEs say holds on every machine the project runs on, not just the one they were written on."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_readme_calls_one_machines_cpu_native_here():
    """`native` is AVX-512 on the Zen 4 development machine and AVX2 on the Zen 3 one (audit 11)."""
    for readme in [ROOT / "README.md", *sorted((ROOT / "ports").glob("*/README.md"))]:
        text = readme.read_text()
        assert "native here" not in text, readme.relative_to(ROOT)


def test_the_top_readme_shows_a_module_diff_that_works():
    """The layout section's diff command names two files that exist (issue 18)."""
    text = (ROOT / "README.md").read_text()
    (line,) = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("diff -u ")]
    codon, port = line.split()[2:4]
    assert (ROOT / codon).is_file() and (ROOT / port).is_file()


def test_the_readmes_make_run_output_is_consistent():
    """The README's `make run` transcript: each "vs v0" is its row's ns over the v0 row's (audit 2: it was
    once computed from another run), and the rows are the levels' order."""
    text = (ROOT / "README.md").read_text()
    block = text.split("$ make run\n", 1)[1].split("```", 1)[0]
    tables = [t for t in block.strip().split("\n\n")]
    assert len(tables) == 2                                     # softplus, graph
    for t in tables:
        head, *rows = [ln.split() for ln in t.splitlines() if not ln.startswith("skip: ")]
        ns, vs = head.index("ns/iter"), head.index("vs")
        cells = {r[1]: r for r in rows}
        assert list(cells)[:5] == ["v0", "v1", "v2", "v3", "v4"]
        v0 = float(cells["v0"][ns])
        for level, r in cells.items():
            assert r[vs] == f"{v0 / float(r[ns]):.1f}x", (level, r)


def test_the_readmes_numbers_are_generated_from_the_raw_files_they_cite():
    """Every report block of the README equals what scripts/report.py makes of the raw file it names
    (audit 7): regenerate them with `python scripts/report.py --readme README.md`."""
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    import report
    text = (ROOT / "README.md").read_text()
    names = [m["name"] for m in report.BLOCK.finditer(text)]
    assert {"softplus-ns", "graph-ns", "codon-vs-best-port"} <= set(names)
    for m in report.BLOCK.finditer(text):
        files = sorted(ROOT.glob(m["raw"])) if m["name"] in report.MANY_BLOCKS else [ROOT / m["raw"]]
        assert files and all(f.is_file() for f in files), m["raw"]
        assert m["raw"].startswith(("results/raw/", "results/gpu/raw/")), m["raw"]   # make bench's, gpu_bench.sh's
    assert report.fill_blocks(text) == text


def test_the_committed_runs_are_compressed():
    """Every run under results/raw and results/gpu/raw is a .json.gz, as bench.py writes it: as plain JSON
    they made the tree 70 MB, more than the 64 MiB the device tool carries with a working tree."""
    runs = [p for base in ("results/raw", "results/gpu/raw") for p in (ROOT / base).rglob("*") if p.is_file()]
    assert runs and all(p.name.endswith(".json.gz") and p.read_bytes()[:2] == b"\x1f\x8b" for p in runs), \
        [str(p.relative_to(ROOT)) for p in runs if not p.name.endswith(".json.gz")][:5]


def test_the_contract_names_every_implementation_of_the_registry():
    """contract §5 lists the impl names of its time; §6 names the ones added since, each from the registry
    (scripts/impls.py), and no name the registry lacks."""
    import re
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    import impls
    text = (ROOT / "docs" / "contract.md").read_text()
    listed = re.search(r"`impl` is one of ([\w, -]+)\.", text)[1].split(", ")
    (added,) = re.findall(r"\*\*Implementation names\.\*\*(.*?)\n\n", text, re.S)
    added = re.findall(r"`([\w-]+)`", added.split("besides §5's,", 1)[1])
    names = {i.name for i in impls.DEFAULT}
    assert set(listed) | set(added) == names, (listed, added, names)
