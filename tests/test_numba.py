"""The Numba port's own checks, beside the parity tests every port gets (test_ports.py): that its graph v3
lane arithmetic compiles to vector instructions (ports/numba/graph/lanes.py). Written as loops over 16-lane
views, LLVM unrolls each op's loop into scalar code (scalar divides and no packed one in the forward and
backward passes' code), and graph v3 and v4 are far slower
(docs/findings/port-numba.md#graph-v3-and-v4-in-explicit-vectors).
The divides stand for the rest of the lane arithmetic: softmax4 divides in the forward pass, the sigmoid in
the backward. And that the softplus levels' lane loops, left to LLVM's loop vectorizer, are vectorized where
the sigmoid divides (softplus v3's backward, inlined into run_batches, and fused-simd). And that graph v2's
backward indexes val and grad with no negative-index test (its ids unsigned: ports/numba/README.md,
"Unsigned ids") and finds an op's fields with no multiply, that the batch levels' lanes start on cache
lines ("Lanes on cache lines"), and that softplus v3's backward takes no row views in its loop over the ops."""
import os
import platform
import shlex
import subprocess
import sys

import pytest

from conftest import ROOT, BUILD

# Numba compiles the port's kernels and reads their assembly: make test runs it, make test-fast leaves it out.
pytestmark = pytest.mark.slow

CHECK = """
import re, sys
from core.target import WIDTH
import graph.simd as S
from graph.recipe import record_ops
import softplus.simd, softplus.fused
t = S.graph_batch_new(64)
S.fill_graph_inputs(t, 42, 0, S.B)
record_ops(t, 64)
S.graph_batch_backward(t)
softplus.simd.run_v3(42, 1000)
softplus.fused.run_fused_simd(42, 1000)
print("width", WIDTH)
# Reference counting in softplus v3's backward, compiled on its own (it is inlined into run_batches).
bt = softplus.simd.new_batch_tape()
bx, by = softplus.simd.batch_leaf(bt), softplus.simd.batch_leaf(bt)
softplus.simd.fill_inputs(bt.val[bx], bt.val[by], 42, 0, softplus.simd.BATCH)
bs = softplus.simd.batch_push_sum(bt, bx, by)
bf = softplus.simd.batch_push_softplus(bt, softplus.simd.batch_push_prod(bt, bs, bx))
softplus.simd.batch_backward(bt, bf)
body = "\\n".join(softplus.simd.batch_backward.inspect_asm().values()).split("_ZN7cpython")[0]
print("softplus_backward_refcounts", len(re.findall(r"\\$NRT_(?:incref|decref)", body)))
for f in (record_ops, S.graph_batch_backward, softplus.simd.run_batches, softplus.fused.run_fused_simd):
    asm = "\\n".join(f.inspect_asm().values())
    divides = re.findall(r"^\\s+v?div([sp])d\\s", asm, re.M)
    print(f.__name__, divides.count("s"), divides.count("p"))
import graph.tape as T
tape = T.new_graph_tape(64)
T.record_graph(tape, 42, 0, 64)
T.backward(tape)  # after the loop above: record_ops now has the GraphTape version too
# Numba counts a negative index from the end: idx + (len & (idx >> 63)), a `sar $63` per signed index.
body = "\\n".join(T.backward.inspect_asm().values()).split("_ZN7cpython")[0]  # not the Python wrapper
print("graph_v2_backward_sar63", len(re.findall(r"^\\s+sar[ql]?\\s+\\$63,", body, re.M)))
# The ops' fields at 6k of a flat array: a 2-D array's row k is k times its run-time stride, an imul a push.
sig = next(sg for sg in record_ops.signatures if str(sg[0]).startswith("GraphTape("))
body = record_ops.inspect_asm(sig).split("_ZN7cpython")[0]
print("graph_v2_record_imul", len(re.findall(r"^\\s+imul", body, re.M)))
# Where the batch levels' lanes start, mod 64: Numba's own arrays start on 32 bytes, half of them mid-line.
from core.vmath import alloc_lanes, alloc_lane_arrays
arrays = [softplus.simd.new_batch_tape().val, softplus.simd.new_batch_tape().grad, S.graph_batch_new(64).val,
          S.graph_batch_new(64).saved] + [alloc_lanes(n) for n in range(1, 40)]
rows = alloc_lane_arrays(8, 256)
print("lane_offsets", *[a.ctypes.data % 64 for a in arrays], *[rows[i].ctypes.data % 64 for i in range(8)])
"""


def wrapper_env(wrapper):
    """The environment make's wrapper sets for the port (its target's CPU features and vector width)."""
    line = next(ln for ln in wrapper.read_text().splitlines() if " exec " in ln)
    words = shlex.split(line.split(" exec ")[0])
    return dict(w.split("=", 1) for w in words)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 only: elsewhere WIDTH is 1, scalar by design")
def test_graph_v3_lane_arithmetic_is_vector_code(tmp_path):
    proc = subprocess.run(["make", "-s", f"BUILD={BUILD}", f"{BUILD}/autograd-numba"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wrapper = ROOT / BUILD / "autograd-numba"
    if not wrapper.exists():
        pytest.skip(proc.stdout.strip())
    # A cache of its own, empty: code loaded from a cache has no assembly to inspect.
    env = {**os.environ, **wrapper_env(wrapper), "NUMBA_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", CHECK], cwd=ROOT / "ports/numba", env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = dict(ln.split(" ", 1) for ln in proc.stdout.splitlines())
    assert int(lines["width"]) >= 2
    for name in ("record_ops", "graph_batch_backward"):
        scalar, packed = map(int, lines[name].split())
        assert scalar == 0 and packed > 0, f"{name}: {scalar} scalar and {packed} packed divides"
    # The softplus lane loops are plain loops LLVM vectorizes, with a scalar copy beside (for the run-time
    # overlap check's failure); the sigmoid's divide is packed in the vector one only where Numba checks no
    # division by zero (error_model="numpy" on sigmoid_e: with Python's, each divide had a branch to a
    # ZeroDivisionError and the loops stayed scalar, 0 packed divides in both).
    for name in ("run_batches", "run_fused_simd"):
        scalar, packed = map(int, lines[name].split())
        assert packed > 0, f"{name}: {scalar} scalar and no packed divide"
    # Softplus v3's backward: the zeroing's two row views (t.grad[i, :], t.grad[out, :]) take 4 reference-count
    # calls; its loop over the ops none. Five row views an op (t.grad[a] and the like) would add a pair of
    # calls each, and softplus v3 and v4 would be slower
    # (docs/findings/port-numba.md#the-backward-without-row-views).
    assert int(lines["softplus_backward_refcounts"]) <= 4, lines["softplus_backward_refcounts"]
    # Unsigned ids: no negative-index test (`sar $63`) in graph v2's backward; signed ids would put one in
    # each access.
    assert int(lines["graph_v2_backward_sar63"]) == 0, lines["graph_v2_backward_sar63"]
    # Op rows 6 apart in a flat array: no imul by a 2-D array's run-time stride in graph v2's record_ops.
    assert int(lines["graph_v2_record_imul"]) == 0, lines["graph_v2_record_imul"]
    # The batch levels' lanes on cache lines (core/vmath.py's alloc_lanes): no vector load straddles two.
    assert set(lines["lane_offsets"].split()) == {"0"}, lines["lane_offsets"]
