# Vector exp and log1p for the batched levels: glibc's libmvec at the target's width
# (core/target.WIDTH), the variants the Codon program calls for the same target
# (core/vmath.codon): _ZGVeN8v_exp / _ZGVeN8v_log1p (AVX-512F, 8 doubles), _ZGVdN4v_* (AVX2,
# 4) or _ZGVbN2v_* (SSE2, 2); 1 is glibc's scalar exp/log1p. Numba has no libmvec of its own
# (its vector math is Intel's SVML, when that is installed; it is not here, and its digits
# are not libmvec's), so each call is an intrinsic: WIDTH doubles loaded as one LLVM vector,
# the libmvec function called on it, the result stored, as Codon's @llvm functions do.
# The softplus levels leave the rest of the lane arithmetic to LLVM's loop vectorizer; the
# graph's is explicit too (graph/lanes.py), and calls the chunks directly.
import ctypes.util
import math

import llvmlite.binding as llvm
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .target import WIDTH

PREFIX = {8: "_ZGVeN8v_", 4: "_ZGVdN4v_", 2: "_ZGVbN2v_"}
if WIDTH > 1:
    # The JIT resolves the libmvec symbols in the process: load libmvec into it first.
    llvm.load_library_permanently(ctypes.util.find_library("mvec") or "libmvec.so.1")


def vector_chunk(name, neg_abs=False):
    """An intrinsic f(src, i, out, o): out[o : o+WIDTH] = libmvec `name`(src[i : i+WIDTH]) on
    float64 arrays (src[i:] may be out[o:]: the load comes before the store); with neg_abs, of
    -|src[i : i+WIDTH]|, formed in the register (stored and loaded back, the lanes went out as
    scalar stores and came back as one vector load that waited for them all: core/vmath.codon)."""
    @intrinsic
    def chunk(typingctx, src, i, out, o):
        def codegen(context, builder, signature, args):
            s, ii, d, oo = args
            sary = context.make_array(signature.args[0])(context, builder, s)
            oary = context.make_array(signature.args[2])(context, builder, d)
            vec = ir.VectorType(ir.DoubleType(), WIDTH)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec]), PREFIX[WIDTH] + name)
            src_at = builder.bitcast(builder.gep(sary.data, [ii]), vec.as_pointer())
            out_at = builder.bitcast(builder.gep(oary.data, [oo]), vec.as_pointer())
            x = builder.load(src_at, align=8)
            if neg_abs:
                fabs = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec]),
                                                      f"llvm.fabs.v{WIDTH}f64")
                x = builder.fneg(builder.call(fabs, [x]))
            builder.store(builder.call(fn, [x]), out_at, align=8)
            return context.get_dummy_value()
        return types.void(src, i, out, o), codegen
    return chunk


exp_chunk = vector_chunk("exp")
log1p_chunk = vector_chunk("log1p")
exp_neg_abs_chunk = vector_chunk("exp", neg_abs=True)


# A lane range is an array and an index into it (what a pointer is in the Codon program).

@njit(cache=True, inline="always")
def exp_lanes(src, i, out, o, n):
    """out[o + j] = exp(src[i + j]) for j < n (n a multiple of WIDTH); src may be out."""
    if WIDTH == 1:
        for j in range(n):
            out[o + j] = math.exp(src[i + j])
    else:
        for j in range(0, n, WIDTH):
            exp_chunk(src, i + j, out, o + j)


@njit(cache=True, inline="always")
def log1p_lanes(src, i, out, o, n):
    """out[o + j] = log1p(src[i + j]) for j < n."""
    if WIDTH == 1:
        for j in range(n):
            out[o + j] = math.log1p(src[i + j])
    else:
        for j in range(0, n, WIDTH):
            log1p_chunk(src, i + j, out, o + j)


@njit(cache=True, inline="always")
def exp_neg_abs_lanes(p, i, out, o, n):
    """out[o + j] = exp(-|p[i + j]|) for j < n."""
    if WIDTH == 1:
        for j in range(n):
            out[o + j] = math.exp(-abs(p[i + j]))
    else:
        for j in range(0, n, WIDTH):
            exp_neg_abs_chunk(p, i + j, out, o + j)
