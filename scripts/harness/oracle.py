"""An independent reference for the benchmark, written from docs/contract.md and
docs/contract-graph.md.

It shares no code with any implementation. `run` follows the contract's order of
operations exactly (so its sums match the sequential levels digit for digit, CPython's
math module calling the same libm); `exact_point` computes f and its gradient in
50-digit decimal arithmetic from the mathematical definitions, a second, formula-free
oracle for the gradients.
"""
from __future__ import annotations

import decimal
import math
from typing import NamedTuple

from impls import ALL_LEVELS, SEQUENTIAL

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB

# Known answers, contract §1-§2 (seed 42).
KNOWN_DRAWS = [0xBDD732262FEB6E95, 0x28EFE333B266F103, 0x47526757130F9F52, 0x581CE1FF0E4AE394]
KNOWN_SAMPLES = {0: (0.48312975754364662, -0.68017921424615979), 2: (-0.92393966291950758, 0.73645615309306467)}
KNOWN_SUMS = {
    1: ("0.64667941574251797", "0.13623654434957416", "0.23007501196926264"),
    3: ("2.3042431511202648", "-1.1651571771481954", "-0.52984542166948179"),
    1000: ("904.64168139366393", "18.743608384818938", "3.645025077616082"),
}

# Contract §2 and §G4 tolerances, for both workloads.
SEQUENTIAL_RTOL = 1e-12   # the levels summed in index order (impls.SEQUENTIAL) against each other
BATCHED_RTOL = 1e-9       # the batched and threaded ones against v2

# The softplus levels on each side of that split, in the registry's order (scripts/impls.py).
SEQUENTIAL_LEVELS = [level for level in ALL_LEVELS if level in SEQUENTIAL]
BATCHED_LEVELS = [level for level in ALL_LEVELS if level not in SEQUENTIAL]


class Sums(NamedTuple):
    f: float
    dx: float
    dy: float


def mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def draw(seed: int, k: int) -> int:
    return mix((seed + k * GAMMA) & MASK)


def unmix(z: int) -> int:
    """mix's inverse: the word that mix scrambles to z."""
    def unshift(v: int, s: int) -> int:      # undoes v ^ (v >> s)
        w = v
        for _ in range(64 // s):
            w = v ^ (w >> s)
        return w
    z = unshift(z, 31)
    z = unshift((z * pow(MIX2, -1, 1 << 64)) & MASK, 27)
    return unshift((z * pow(MIX1, -1, 1 << 64)) & MASK, 30)


def seed_drawing(z: int) -> int:
    """The seed whose first draw (k = 1, sample 0's x) is z."""
    return (unmix(z) - GAMMA) & MASK


def unit(z: int) -> float:
    return (z >> 11) * 2.0**-53


def sample(seed: int, i: int) -> tuple[float, float]:
    return 2 * unit(draw(seed, 2 * i + 1)) - 1, 2 * unit(draw(seed, 2 * i + 2)) - 1


def softplus(p: float) -> float:
    """log(1 + e^p) as contract §2 writes it."""
    return p + math.log1p(math.exp(-p)) if p > 0 else math.log1p(math.exp(p))


def sigmoid(p: float) -> float:
    """d softplus / dp as contract §2 writes it."""
    if p >= 0:
        return 1 / (1 + math.exp(-p))
    e = math.exp(p)
    return e / (1 + e)


def point(x: float, y: float) -> tuple[float, float, float]:
    """f, df/dx, df/dy in the contract's floating-point order of operations."""
    s = x + y
    p = s * x
    f = softplus(p)
    g = sigmoid(p)
    return f, s * g + x * g, x * g


def run(seed: int, n: int) -> Sums:
    """The checksums of a sequential level: plain sums in index order."""
    sf = sdx = sdy = 0.0
    for i in range(n):
        f, dx, dy = point(*sample(seed, i))
        sf += f
        sdx += dx
        sdy += dy
    return Sums(sf, sdx, sdy)


def exact_point(x: float, y: float) -> tuple[float, float, float]:
    """f = ln(1 + e^p), df/dx = sigmoid(p)(2x + y), df/dy = sigmoid(p) x, p = (x + y) x, in 50 digits."""
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        ctx.Emin, ctx.Emax = -999999, 999999
        dx_, dy_ = decimal.Decimal(x), decimal.Decimal(y)   # exact binary values
        p = (dx_ + dy_) * dx_
        one = decimal.Decimal(1)

        def ln1p(u: decimal.Decimal) -> decimal.Decimal:
            # 1 + u would round u away at 50 digits when u is tiny: use the series there.
            return u * (one - u / 2 + u * u / 3) if u < decimal.Decimal("1e-12") else (one + u).ln()

        # ln(1 + e^p) = p + ln(1 + e^-p): evaluate the form whose exponential cannot blow up.
        f = p + ln1p((-p).exp()) if p > 0 else ln1p(p.exp())
        g = one / (one + (-p).exp())
        return float(f), float(g * (2 * dx_ + dy_)), float(g * dx_)


def error_bounds(x: float, y: float) -> tuple[float, float, float]:
    """First-order bounds on the rounding error of a correct double implementation.

    Rounding x + y and (x + y) * x perturbs p by about 2 eps |p|, which moves f by sigmoid(p)
    times that and sigmoid by sigmoid'(p) = g (1 - g) times that; each final result adds a few
    roundings of its own; a subnormal sigmoid carries an absolute error of about 2^-1074.
    """
    eps = 2.0**-52
    p = (x + y) * x
    g = 0.5 if p == 0 else (1 / (1 + math.exp(-p)) if p > 0 else math.exp(p) / (1 + math.exp(p)))
    f, dx, dy = exact_point(x, y)
    dg = 8 * eps * (g + g * (1 - g) * abs(p)) + 4 * 2.0**-1074
    return (8 * eps * (abs(f) + g * abs(p)) + 2.0**-1074,
            (abs(x + y) + abs(x)) * dg + 8 * eps * abs(dx) + 2.0**-1074,
            abs(x) * dg + 8 * eps * abs(dy) + 2.0**-1074)


def rel_diff(a: float, b: float) -> float:
    """|a - b| relative to the larger magnitude (0 when both are 0)."""
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


# --- the graph workload (docs/contract-graph.md G1-G4) -----------------------------------

# Known answers, G4 (seed 42): (M ops, N samples) -> sum_loss, sum_grad_in, sum_grad_all.
GRAPH_KNOWN = {
    (1, 1): ("0.10064404369400626", "5106.95268616257", "101.62585369409418"),
    (4, 1): ("2.0446584875950129", "5323.3154959760641", "110.4620786701456"),
    (10, 3): ("35.371967021681371", "18230.235988004089", "388.66216436295986"),
    (100, 2): ("151.95241699108374", "12077.163367972953", "774.7622376575149"),
    (1000, 2): ("1567.6085757628407", "12076.922925930347", "5912.1238700439235"),
    (10000, 3): ("23602.952409132737", "18334.090537564793", "85928.921593130159"),
}

GRAPH_INPUTS = 100
SOFTPLUS, SUM4, PROD, SOFTMAX4 = 0, 1, 2, 3      # op k has kind k mod 4


class GraphSums(NamedTuple):
    loss: float
    grad_in: float
    grad_all: float


def graph_nodes(m: int) -> int:
    """Nodes of an M-op graph, as graph_sample makes them: the inputs, one output per op, three more per
    SOFTMAX4 (four outputs in all)."""
    return GRAPH_INPUTS + m + 3 * (m // 4)


def graph_inputs(seed: int, s: int) -> list[float]:
    """G1: the 100 input values of sample s."""
    return [2 * unit(draw(seed, GRAPH_INPUTS * s + i + 1)) - 1 for i in range(GRAPH_INPUTS)]


def graph_sample(seed: int, s: int, m: int) -> tuple[float, float, float]:
    """G2-G3 for sample s of an M-op graph: (loss, grad_in, grad_all), every sum left to right."""
    v = graph_inputs(seed, s)
    ops = []                                    # (kind, input node ids, first output id)
    for k in range(m):
        n = len(v)
        kind = k % 4
        if kind == SOFTPLUS:
            ins = (n - 10,)
            v.append(softplus(v[n - 10]))
        elif kind == SUM4:
            ins = (n - 30, n - 25, n - 20, n - 15)
            v.append(((v[ins[0]] + v[ins[1]]) + v[ins[2]]) + v[ins[3]])
        elif kind == PROD:
            ins = (n - 20, n - 10)
            v.append(v[ins[0]] * v[ins[1]])
        else:
            ins = (n - 4, n - 3, n - 2, n - 1)
            top = max(v[j] for j in ins)
            e = [math.exp(v[j] - top) for j in ins]
            total = ((e[0] + e[1]) + e[2]) + e[3]
            v.extend(ej / total for ej in e)
        ops.append((kind, ins, n))

    loss = 0.0
    for value in v:
        loss += value
    g = [1.0] * len(v)                          # d loss / d v_j directly
    for kind, ins, out in reversed(ops):
        if kind == SOFTPLUS:
            g[ins[0]] += sigmoid(v[ins[0]]) * g[out]
        elif kind == SUM4:
            for j in ins:
                g[j] += g[out]
        elif kind == PROD:
            a, b = ins
            g[a] += v[b] * g[out]
            g[b] += v[a] * g[out]
        else:
            o = v[out:out + 4]
            go = g[out:out + 4]
            avg = ((o[0] * go[0] + o[1] * go[1]) + o[2] * go[2]) + o[3] * go[3]
            for j in range(4):
                g[ins[j]] += o[j] * (go[j] - avg)

    grad_in = 0.0
    for i in range(GRAPH_INPUTS):
        grad_in += (i + 1) * g[i]
    grad_all = 0.0
    for gj in g:
        grad_all += gj
    return loss, grad_in, grad_all


def graph_sums(seed: int, m: int, n: int) -> GraphSums:
    """G3's checksums of a sequential level: per-sample results summed in sample order."""
    sl = sgi = sga = 0.0
    for s in range(n):
        loss, grad_in, grad_all = graph_sample(seed, s, m)
        sl += loss
        sgi += grad_in
        sga += grad_all
    return GraphSums(sl, sgi, sga)
