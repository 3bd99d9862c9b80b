"""The peers' command line (peers/*_peer.py): bad input refused as the contract says, with no library needed;
--help, --version and a level a peer lacks; and their known answers, skipped where the library is missing.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from harness import contract, oracle  # noqa: E402


PEERS = {"numpy": ROOT / "peers" / "numpy_peer.py", "jax": ROOT / "peers" / "jax_peer.py",
         "torch": ROOT / "peers" / "torch_peer.py"}


PEER_LEVEL = {"numpy": "fused-simd", "jax": "v3", "torch": "v3"}


# More refusals, each held to the Codon program's words: test_peers.py's test_refusals_match_the_codon_program.
@pytest.mark.parametrize("peer", sorted(PEERS))
@pytest.mark.parametrize("args", [["--iters", "1e3"], ["--level"], ["--level", "v9"], ["--eval", "1"],
                                  ["--eval", "inf", "1"], ["--eval", "1", "2", "--iters", "3"], ["-h"]])
def test_peer_bad_input(peer, args):
    proc = subprocess.run([sys.executable, str(PEERS[peer]), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_peer_help_version_and_missing_level(peer):
    help_ = subprocess.run([sys.executable, str(PEERS[peer]), "--help"], capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0 and help_.stdout.startswith("usage:") and help_.stderr == ""
    version = subprocess.run([sys.executable, str(PEERS[peer]), "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.returncode == 0 and f"({peer} peer)" in version.stdout
    lacking = subprocess.run([sys.executable, str(PEERS[peer]), "--level", "v0"], capture_output=True, text=True,
                             timeout=60)
    assert lacking.returncode == 2 and lacking.stdout == ""
    assert lacking.stderr == "error: level v0 is not implemented by this program\n"


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_peer_known_answers(peer):
    if importlib.util.find_spec(peer) is None:
        pytest.skip(f"{peer} is not installed (make peers)")
    for n in (3, 1000):
        proc = subprocess.run([sys.executable, str(PEERS[peer]), "--iters", str(n), "--json"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        (rec,) = [json.loads(ln) for ln in proc.stdout.splitlines()]
        assert list(rec) in (contract.KEYS["softplus"], contract.OLD_SOFTPLUS_KEYS)
        assert (rec["impl"], rec["level"], rec["iters"], rec["threads"]) == (peer, PEER_LEVEL[peer], n, 1)
        for got, want in zip(contract.sums_of(rec), oracle.KNOWN_SUMS[n]):
            assert oracle.rel_diff(got, float(want)) <= oracle.BATCHED_RTOL
    x, y = 0.75, -1.5
    proc = subprocess.run([sys.executable, str(PEERS[peer]), "--eval", str(x), str(y), "--json"],
                          capture_output=True, text=True, timeout=300)
    rec = json.loads(proc.stdout)
    for got, want in zip((rec["f"], rec["dfdx"], rec["dfdy"]), oracle.point(x, y)):
        assert oracle.rel_diff(got, want) <= 1e-14
