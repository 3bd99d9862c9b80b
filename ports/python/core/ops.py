# The scalar math of contract §2, shared by every level and baseline, so that the
# levels differ only in how they organise the graph, never in the arithmetic.
import math
from typing import NamedTuple


class Sums(NamedTuple):
    """The checksums of a run: plain sums over the samples, in index order."""
    f: float
    dx: float
    dy: float

    def __add__(self, o):
        return Sums(self.f + o.f, self.dx + o.dx, self.dy + o.dy)


# Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could
# overflow). The *_e forms take e ready-made, so that a caller computing both shares
# one exp; the results are bit for bit those of the contract's formulas.

def exp_neg_abs(p):
    return math.exp(-abs(p))


def softplus_e(p, e):
    """log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p))."""
    return p + math.log1p(e) if p > 0.0 else math.log1p(e)


def sigmoid_e(p, e):
    """d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p))."""
    return 1.0 / (1.0 + e) if p >= 0.0 else e / (1.0 + e)


def softplus(p):
    return softplus_e(p, exp_neg_abs(p))


def sigmoid(p):
    return sigmoid_e(p, exp_neg_abs(p))
