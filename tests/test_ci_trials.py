"""scripts/ci_trials.py's sabotages match today's sources, and a stale one stops it before any run (no builds)."""
from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import ci_trials  # noqa: E402


@pytest.mark.parametrize("name", list(ci_trials.SABOTAGES))
def test_every_sabotage_edit_matches_once_in_its_implementations_file(name):
    """Each edit's text occurs exactly once in its file, a source of the implementation the sabotage times
    (the Codon program's outside ports/, a port's under ports/<impl>/): the v4 edits once named files the
    threads had moved out of (core/threads.*), found only after the whole plain series had run."""
    impl, edits = ci_trials.SABOTAGES[name]
    assert edits, name
    for path, text, replacement in edits:
        assert path.startswith(f"ports/{impl}/") if impl != "codon" else not path.startswith("ports/"), (name, path)
        assert (ROOT / path).is_file(), (name, path)
        assert (ROOT / path).read_text().count(text) == 1, (name, path, text)
        assert replacement != text, (name, path)
    assert ci_trials.stale_edits(name) == []


@pytest.mark.parametrize("name", [n for n in ci_trials.SABOTAGES if n.startswith("v4-one-thread-")])
def test_v4_sabotages_edit_the_team_of_threads(name):
    """A v4-one-thread sabotage edits the code that starts v4's threads: the OpenMP team size (Codon's @par,
    C's num_threads) or the spawn of a port's worker threads (Zig, Rust)."""
    _, edits = ci_trials.SABOTAGES[name]
    for path, text, _ in edits:
        assert any(word in text for word in ("num_threads", "Thread.spawn", "spawn_scoped")), (name, path, text)


def test_a_stale_sabotage_is_an_error_before_any_run(tmp_path, monkeypatch, capsys):
    """An edit whose text is not in its file, or is there twice, stops ci_trials.py at its arguments (one
    error line, exit 2), not after the plain series."""
    (tmp_path / "twice.c").write_text("num_threads(team) num_threads(team)\n")
    monkeypatch.setattr(ci_trials, "ROOT", tmp_path)
    monkeypatch.setitem(ci_trials.SABOTAGES, "stale", ("c", [("gone.c", "x", "y"), ("twice.c", "num_threads(team)",
                                                                                   "num_threads(1)")]))
    assert len(ci_trials.stale_edits("stale", tmp_path)) == 2
    with pytest.raises(SystemExit) as exit_:
        ci_trials.parse_args(["--runs", "1", "--sabotage", "stale", "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert ": error: sabotage stale: gone.c does not exist; " in error and "2 times in twice.c" in error, error

