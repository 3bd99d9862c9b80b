# The scalar math of contract §2, shared by every level and baseline, so that the
# levels differ only in how they organise the graph, never in the arithmetic.
# math.exp is LLVM's llvm.exp.f64, which LLVM lowers to a call of the C library's exp;
# math.log1p is a call of the C library's log1p: glibc's, the Codon program's scalar math.
import math
from collections import namedtuple

from numba import njit

# The checksums of a run: plain sums over the samples, in index order. Codon's Sums.__add__
# has no counterpart: lane_sums_total (v3) and run_v4 add the three sums one by one.
Sums = namedtuple("Sums", "f dx dy")


# Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could
# overflow). The *_e forms take e ready-made, so that a caller computing both shares
# one exp; the results are bit for bit those of the contract's formulas.

@njit(cache=True)
def exp_neg_abs(p):
    return math.exp(-abs(p))


@njit(cache=True)
def softplus_e(p, e):
    """log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p))."""
    return p + math.log1p(e) if p > 0.0 else math.log1p(e)


@njit(cache=True, error_model="numpy")
def sigmoid_e(p, e):
    """d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p))."""
    return 1.0 / (1.0 + e) if p >= 0.0 else e / (1.0 + e)
