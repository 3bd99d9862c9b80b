# Vector exp and log1p for the batched levels: glibc's libmvec at the widest vector the
# target CPU has, chosen when the program is built (mojo build --target-cpu, which the
# Makefile sets from CPU=...): 8 doubles (AVX-512F, _ZGVeN8v_*), 4 (AVX2, _ZGVdN4v_*),
# 2 (SSE2, _ZGVbN2v_*), or 1, glibc's scalar exp/log1p. The width is read at compile time
# from the target's features (CompilationTarget), so only the call for this target is
# compiled. What core/target.codon holds in the Codon program is here too: WIDTH, and
# TARGET (the Makefile's CPU=..., passed as -D AUTOGRAD_TARGET=...). The rest of the lane
# arithmetic is written WIDTH lanes at a time in SIMD[DType.float64, WIDTH] (ld, st).

from std.ffi import external_call
from std.memory import Pointer
from std.sys import CompilationTarget, exit, stderr
from std.sys.defines import get_defined_string
from core.ops import exp, log1p

comptime F64Ptr = Pointer[Float64, MutUntrackedOrigin]

# Lane arrays start on a cache line (64 bytes, a whole number of vectors of any width),
# so that no vector load straddles two.
comptime ALIGN = 64

comptime WIDTH = 8 if CompilationTarget.is_x86() and CompilationTarget.has_avx512f() else (
    4 if CompilationTarget.is_x86() and CompilationTarget.has_avx2() else (
        2 if CompilationTarget.is_x86() else 1))
comptime VECTOR_NAME = "AVX-512F (libmvec _ZGVeN8v)" if WIDTH == 8 else (
    "AVX2 (libmvec _ZGVdN4v)" if WIDTH == 4 else (
        "SSE2 (libmvec _ZGVbN2v)" if WIDTH == 2 else "scalar (glibc exp/log1p)"))
comptime TARGET = get_defined_string["AUTOGRAD_TARGET", "unstated"]()

comptime V = SIMD[DType.float64, WIDTH]  # one libmvec argument: a zmm, ymm or xmm register


def target_text() -> String:
    """One line naming the build target and the vector width, as --version prints it."""
    return String("target ", TARGET, ", vector width ", WIDTH, " doubles: ", VECTOR_NAME)


def out_of_memory():
    """The end of the program when an allocation fails, wherever it is made."""
    print("error: out of memory", file=stderr)
    exit(1)


def alloc_lanes(n: Int) -> F64Ptr:
    """Room for n doubles starting on a cache line (n * 8 rounded up to ALIGN bytes)."""
    var bytes = (n * 8 + ALIGN - 1) // ALIGN * ALIGN
    var p = external_call["aligned_alloc", F64Ptr](ALIGN, bytes)
    if Int(p) == 0:
        out_of_memory()
    return p


def free_lanes(p: F64Ptr):
    external_call["free", NoneType](p)


@always_inline
def ld(p: F64Ptr, j: Int) -> V:
    return p.unsafe_load[width=WIDTH](j)


@always_inline
def st(p: F64Ptr, j: Int, v: V):
    p.unsafe_store(j, v)


@always_inline
def vexp(x: V) -> V:
    """exp of WIDTH lanes: one libmvec call."""
    comptime if WIDTH == 8:
        return external_call["_ZGVeN8v_exp", V](x)
    elif WIDTH == 4:
        return external_call["_ZGVdN4v_exp", V](x)
    elif WIDTH == 2:
        return external_call["_ZGVbN2v_exp", V](x)
    else:
        return V(exp(x[0]))


@always_inline
def vlog1p(x: V) -> V:
    """log1p of WIDTH lanes: one libmvec call."""
    comptime if WIDTH == 8:
        return external_call["_ZGVeN8v_log1p", V](x)
    elif WIDTH == 4:
        return external_call["_ZGVdN4v_log1p", V](x)
    elif WIDTH == 2:
        return external_call["_ZGVbN2v_log1p", V](x)
    else:
        return V(log1p(x[0]))


# n is a multiple of WIDTH in every call (BATCH, GRAPH_BATCH, 4 * GRAPH_BATCH).

@always_inline
def exp_lanes[n: Int](src: F64Ptr, dst: F64Ptr):
    """dst[j] = exp(src[j]) for j < n; src may be dst."""
    for j in range(0, n, WIDTH):
        st(dst, j, vexp(ld(src, j)))


@always_inline
def log1p_lanes[n: Int](src: F64Ptr, dst: F64Ptr):
    """dst[j] = log1p(src[j]) for j < n; src may be dst."""
    for j in range(0, n, WIDTH):
        st(dst, j, vlog1p(ld(src, j)))


@always_inline
def exp_neg_abs_lanes[n: Int](p: F64Ptr, dst: F64Ptr):
    """dst[j] = exp(-|p[j]|) for j < n."""
    for j in range(0, n, WIDTH):
        st(dst, j, vexp(-abs(ld(p, j))))
