# The scalar math of contract §2, shared by every level and baseline, so that the
# levels differ only in how they organise the graph, never in the arithmetic.
# exp and log1p are glibc's, called through the C ABI: Mojo's own exp differs from
# glibc's in the last bit on most arguments (ports/mojo/README.md).

from std.ffi import external_call


@fieldwise_init
struct Sums(ImplicitlyCopyable, Movable):
    """The checksums of a run: plain sums over the samples, in index order."""
    var f: Float64
    var dx: Float64
    var dy: Float64

    @always_inline
    def __add__(self, o: Sums) -> Sums:
        return Sums(self.f + o.f, self.dx + o.dx, self.dy + o.dy)


@always_inline
def exp(x: Float64) -> Float64:
    """glibc's exp."""
    return external_call["exp", Float64](x)


@always_inline
def log1p(x: Float64) -> Float64:
    """glibc's log1p."""
    return external_call["log1p", Float64](x)


# Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could
# overflow). The *_e forms take e ready-made, so that a caller computing both shares
# one exp; the results are bit for bit those of the contract's formulas.

@always_inline
def exp_neg_abs(p: Float64) -> Float64:
    return exp(-abs(p))


@always_inline
def softplus_e(p: Float64, e: Float64) -> Float64:
    """log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p))."""
    return p + log1p(e) if p > 0.0 else log1p(e)


@always_inline
def sigmoid_e(p: Float64, e: Float64) -> Float64:
    """d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p))."""
    return 1.0 / (1.0 + e) if p >= 0.0 else e / (1.0 + e)


@always_inline
def softplus(p: Float64) -> Float64:
    return softplus_e(p, exp_neg_abs(p))


@always_inline
def sigmoid(p: Float64) -> Float64:
    return sigmoid_e(p, exp_neg_abs(p))


# A link that is never followed (a LEAF's inputs, a PROD's c and d), C's NULL. Mojo's
# Pointer refuses a null literal (Optional[Pointer] is its null): an address of 0 read
# at run time is the same bits, with no check on the hot path.
comptime NULL: Int = 0
