# Vector exp and log1p for the batched levels: glibc's libmvec at the target's width
# (core/target.WIDTH), the variants the Codon program calls for the same target
# (core/vmath.codon): _ZGVeN8v_exp / _ZGVeN8v_log1p (AVX-512F, 8 doubles), _ZGVdN4v_* (AVX2,
# 4) or _ZGVbN2v_* (SSE2, 2); 1 is glibc's scalar exp/log1p. Numba has no libmvec of its own
# (its vector math is Intel's SVML, when that is installed; it is not here, and its digits
# are not libmvec's), so each call is an intrinsic: WIDTH doubles loaded as one LLVM vector,
# the libmvec function called on it, the result stored, as Codon's @llvm functions do.
# The rest of the lane arithmetic is left to LLVM's loop vectorizer.
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


def vector_chunk(name):
    """An intrinsic f(src, out, j): out[j : j+WIDTH] = libmvec `name`(src[j : j+WIDTH]), on
    float64 arrays (src may be out: the loads come before the store)."""
    @intrinsic
    def chunk(typingctx, src, out, j):
        def codegen(context, builder, signature, args):
            s, o, jj = args
            sary = context.make_array(signature.args[0])(context, builder, s)
            oary = context.make_array(signature.args[1])(context, builder, o)
            vec = ir.VectorType(ir.DoubleType(), WIDTH)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec]), PREFIX[WIDTH] + name)
            src_at = builder.bitcast(builder.gep(sary.data, [jj]), vec.as_pointer())
            out_at = builder.bitcast(builder.gep(oary.data, [jj]), vec.as_pointer())
            builder.store(builder.call(fn, [builder.load(src_at, align=8)]), out_at, align=8)
            return context.get_dummy_value()
        return types.void(src, out, j), codegen
    return chunk


exp_chunk = vector_chunk("exp")
log1p_chunk = vector_chunk("log1p")


@njit(cache=True)
def exp_lanes(src, out, n):
    """out[j] = exp(src[j]) for j < n (n a multiple of WIDTH); src may be out."""
    if WIDTH == 1:
        for j in range(n):
            out[j] = math.exp(src[j])
    else:
        for j in range(0, n, WIDTH):
            exp_chunk(src, out, j)


@njit(cache=True)
def log1p_lanes(src, out, n):
    """out[j] = log1p(src[j]) for j < n."""
    if WIDTH == 1:
        for j in range(n):
            out[j] = math.log1p(src[j])
    else:
        for j in range(0, n, WIDTH):
            log1p_chunk(src, out, j)


@njit(cache=True)
def exp_neg_abs_lanes(p, out, n):
    """out[j] = exp(-|p[j]|) for j < n."""
    for j in range(n):
        out[j] = -abs(p[j])
    exp_lanes(out, out, n)
