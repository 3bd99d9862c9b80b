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
