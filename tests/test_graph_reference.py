"""The graph workload's reference (scripts/harness/oracle.py, docs/contract-graph.md G1-G4).

The reference must reproduce every known answer of G4 to the last printed digit, and it
must agree with a second engine built independently from G2-G3: PyTorch's autograd in
float64 (torch.softmax, softplus, retain_grad on every node, loss = the sum of every
node), within 1e-12 relative; torch adds in its own order, so not digit for digit.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from harness import oracle

CONTRACT = Path(__file__).resolve().parent.parent / "docs" / "contract-graph.md"


def test_the_known_answers_are_the_contracts():
    """oracle.GRAPH_KNOWN, which the harness verifies with, is G4's table, row for row."""
    table = CONTRACT.read_text().split("## G4.")[1].split("\n## ")[0]
    rows = re.findall(r"^\| (\d+) \| (\d+) \| (\S+) \| (\S+) \| (\S+) \|$", table, re.M)
    assert {(int(m), int(n)): (a, b, c) for m, n, a, b, c in rows} == oracle.GRAPH_KNOWN


@pytest.mark.parametrize("m, n", list(oracle.GRAPH_KNOWN), ids=[f"M={m},N={n}" for m, n in oracle.GRAPH_KNOWN])
def test_known_answers_to_the_last_digit(m, n):
    got = tuple("%.17g" % v for v in oracle.graph_sums(42, m, n))
    assert got == oracle.GRAPH_KNOWN[(m, n)]


def test_inputs_continue_the_softplus_stream():
    """G1: sample 0's first two inputs are the softplus workload's (x_0, y_0); all in [-1, 1)."""
    inputs = oracle.graph_inputs(42, 0)
    assert (inputs[0], inputs[1]) == oracle.KNOWN_SAMPLES[0]
    assert len(inputs) == 100 and all(-1 <= v < 1 for v in inputs)
    # sample 1 starts at draw(101)
    assert oracle.graph_inputs(42, 1)[0] == 2 * oracle.unit(oracle.draw(42, 101)) - 1


def test_sample_sums_add_up_in_sample_order():
    """G3: the checksums add the samples in sample order. Over these 12 samples the other order gives
    other last digits, so the test tells the two apart."""
    per_sample = [oracle.graph_sample(7, s, 10) for s in range(12)]
    forward = [0.0, 0.0, 0.0]
    for r in per_sample:
        forward = [w + v for w, v in zip(forward, r)]
    backward = [0.0, 0.0, 0.0]
    for r in reversed(per_sample):
        backward = [w + v for w, v in zip(backward, r)]
    assert forward != backward, "pick samples whose order shows in the last digits"
    assert list(oracle.graph_sums(7, 10, 12)) == forward


def torch_sample(torch, seed: int, s: int, m: int) -> tuple[float, float, float]:
    """(loss, grad_in, grad_all) of sample s from PyTorch's autograd, float64, graph built per G2."""
    F = torch.nn.functional
    nodes = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in oracle.graph_inputs(seed, s)]
    for k in range(m):
        n = len(nodes)
        kind = k % 4
        if kind == 0:
            nodes.append(F.softplus(nodes[n - 10]))
        elif kind == 1:
            nodes.append(((nodes[n - 30] + nodes[n - 25]) + nodes[n - 20]) + nodes[n - 15])
        elif kind == 2:
            nodes.append(nodes[n - 20] * nodes[n - 10])
        else:
            nodes.extend(torch.softmax(torch.stack(nodes[n - 4:n]), dim=0).unbind(0))
    for node in nodes[100:]:
        node.retain_grad()
    loss = torch.stack(nodes).sum()
    loss.backward()
    grads = [node.grad.item() for node in nodes]
    return loss.item(), math.fsum((i + 1) * g for i, g in enumerate(grads[:100])), math.fsum(grads)


@pytest.mark.parametrize("seed, m", [(42, 1), (42, 4), (42, 10), (7, 101), (2**64 - 1, 1000), (123456789, 10000)])
def test_agrees_with_pytorch_autograd(seed, m):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (make peers installs it)")
    for s in (0, 1):
        want = torch_sample(torch, seed, s, m)
        got = oracle.graph_sample(seed, s, m)
        for g, w in zip(got, want):
            assert oracle.rel_diff(g, w) <= 1e-12, (s, got, want)
