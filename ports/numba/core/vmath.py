# Vector exp and log1p for the batched levels: glibc's libmvec at the target's width
# (core/target.WIDTH), the variants the Codon program calls for the same target
# (core/vmath.codon): _ZGVeN8v_exp / _ZGVeN8v_log1p (AVX-512F, 8 doubles), _ZGVdN4v_* (AVX2,
# 4) or _ZGVbN2v_* (SSE2, 2); 1 is glibc's scalar exp/log1p. Numba has no libmvec of its own
# (its vector math is Intel's SVML, when that is installed; it is not here, and its digits
# are not libmvec's), so each call is a chunk: an intrinsic over WIDTH lanes of float64
# arrays whose LLVM IR a short Python body builds (`lane_chunk`, `Chunk`), here one vector
# loaded, the libmvec function called on it, the result stored, as Codon's @llvm functions
# do. The softplus levels leave the rest of the lane arithmetic to LLVM's loop vectorizer;
# the graph's is explicit too, in chunks of the same kind (graph/lanes.py).
import ctypes.util
import math

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .target import WIDTH

PREFIX = {8: "_ZGVeN8v_", 4: "_ZGVdN4v_", 2: "_ZGVbN2v_"}
if WIDTH > 1:
    # The JIT resolves the libmvec symbols in the process: load libmvec into it first.
    llvm.load_library_permanently(ctypes.util.find_library("mvec") or "libmvec.so.1")


class Chunk:
    """What a chunk's body writes its IR with: WIDTH-double vectors at lane indices of arrays."""

    def __init__(self, builder):
        self.b = builder
        self.vec = ir.VectorType(ir.DoubleType(), WIDTH)

    def at(self, ary, i):
        return self.b.bitcast(self.b.gep(ary.data, [i]), self.vec.as_pointer())

    def load(self, ary, i):
        return self.b.load(self.at(ary, i), align=8)

    def store(self, x, ary, i):
        self.b.store(x, self.at(ary, i), align=8)

    def plus(self, i, n):
        """Lane index i + n (both int64)."""
        return self.b.add(i, n)

    def splat(self, c):
        return ir.Constant(self.vec, [c] * WIDTH)

    def add(self, x, y):
        return self.b.fadd(x, y)

    def sub(self, x, y):
        return self.b.fsub(x, y)

    def mul(self, x, y):
        return self.b.fmul(x, y)

    def div(self, x, y):
        return self.b.fdiv(x, y)

    def call(self, name, x):
        """The vector function `name` (a libmvec symbol or an LLVM intrinsic) on x."""
        fn = cgutils.get_or_insert_function(self.b.module, ir.FunctionType(self.vec, [self.vec]), name)
        return self.b.call(fn, [x])

    def mvec(self, name, x):
        """glibc's libmvec `name` (exp, log1p) on x, the variant for WIDTH."""
        return self.call(PREFIX[WIDTH] + name, x)

    def neg_abs(self, x):
        return self.b.fneg(self.call(f"llvm.fabs.v{WIDTH}f64", x))

    def select_gt(self, x, y, if_gt, otherwise):
        """Lane-wise `if_gt if x > y else otherwise` (false where either is a NaN)."""
        return self.b.select(self.b.fcmp_ordered(">", x, y), if_gt, otherwise)

    def select_ge(self, x, y, if_ge, otherwise):
        return self.b.select(self.b.fcmp_ordered(">=", x, y), if_ge, otherwise)


def lane_chunk(body):
    """The intrinsic f(*args) whose IR is body(Chunk, *args): arrays as Numba's array
    structs, lane indices as int64 values."""
    @intrinsic
    def chunk(typingctx, *args):
        def codegen(context, builder, signature, llargs):
            tys = signature.args[0].types
            vals = cgutils.unpack_tuple(builder, llargs[0], len(tys))
            vals = [context.make_array(ty)(context, builder, v) if isinstance(ty, types.Array) else v
                    for ty, v in zip(tys, vals)]
            body(Chunk(builder), *vals)
            return context.get_dummy_value()
        return types.void(types.StarArgTuple.from_types(args)), codegen
    chunk.__doc__ = body.__doc__
    return chunk


@lane_chunk
def exp_chunk(v, src, i, out, o):
    """out[o] = exp(src[i]); src[i:] may be out[o:] (the load comes before the store)."""
    v.store(v.mvec("exp", v.load(src, i)), out, o)


@lane_chunk
def log1p_chunk(v, src, i, out, o):
    """out[o] = log1p(src[i])"""
    v.store(v.mvec("log1p", v.load(src, i)), out, o)


@lane_chunk
def exp_neg_abs_chunk(v, p, i, out, o):
    """out[o] = exp(-|p[i]|), -|p| formed in the register (stored and reloaded, it would leave
    as scalar stores and return as one vector load waiting on them all: core/vmath.codon)."""
    v.store(v.mvec("exp", v.neg_abs(v.load(p, i))), out, o)


ALIGN = 64  # bytes: a cache line, a whole number of vectors of any width


@njit(cache=True)
def alloc_lanes(n):
    """n zeroed float64s starting on a cache line, so that no vector load straddles two. Numba
    aligns arrays to 32 bytes; at AVX-512's width a row that starts half-way along a line would
    split every load and store."""
    raw = np.zeros(n + ALIGN // 8)
    skip = (ALIGN - raw.ctypes.data % ALIGN) % ALIGN // 8
    return raw[skip:skip + n]


@njit(cache=True)
def lane_stride(n):
    """The distance, in floats, between the rows of alloc_lane_arrays: n and a cache line."""
    return n + ALIGN // 8


@njit(cache=True)
def alloc_lane_arrays(k, n):
    """k arrays of n floats, each on a cache line, as the rows of a (k, lane_stride(n)) array
    (row i's first n): a cache line more than n between them keeps their lanes' low 12 address
    bits apart, where 4 KB apart a load from one behind a store to another at the same lane
    waits on that store (4K aliasing: core/vmath.codon)."""
    return alloc_lanes(k * lane_stride(n)).reshape((k, lane_stride(n)))


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
