#!/usr/bin/env python3
"""autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
through a reverse-mode autograd, level by level (docs/contract.md).

The CPython port of the Codon program: the same source, run by the plain interpreter
(standard library only), in the Codon modules' order: rng, ops, graph (v0 naive, v1
pool), tape (v2), fused, cli, report, main; cli and report are in cli.py beside it,
shared with the peers. It has levels v0, v1, v2 and the fused baseline; v3, v4 and
fused-simd need vector math and threads that run in parallel, which plain CPython does
not have, so they are reported as not implemented.

    python3 ports/python/autograd.py --level v2 --iters 100000
"""
import math
import os
import signal
import sys
import time
from typing import NamedTuple

from cli import (EVAL, HELP, RUN, VERSION, Result, UsageError, emit, eval_json, eval_text, json_line, parse,
                 text_header, text_line)

# ---- rng: the input stream of contract §1 ----------------------------------------
# Counter-based splitmix64, written out so that every language draws the same numbers
# (never a standard-library RNG). Python ints never wrap, so each product is reduced
# mod 2^64 by hand.

GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
MASK = (1 << 64) - 1
UNIT = 1.0 / 9007199254740992.0  # 2^-53


def splitmix64(z):
    """The splitmix64 finalizer: a bijective scramble of one 64-bit word."""
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def draw(seed, k):
    """The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`."""
    return splitmix64((seed + k * GAMMA) & MASK)


def unit(z):
    """The top 53 bits of z as a float in [0, 1)."""
    return (z >> 11) * UNIT


def sample(seed, i):
    """Sample i: (x_i, y_i), both in [-1, 1)."""
    x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0
    y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0
    return x, y


# ---- ops: the scalar math of contract §2, shared by every level --------------------


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


# ---- graph: the pointer-linked nodes of levels v0 and v1 ---------------------------
# The seed's first design: each node knows its inputs, computes its value when asked
# (recomputing its whole subgraph every time), and pushes gradients to its inputs by
# recursion.

LEAF = 0
SUM = 1
PROD = 2
SOFTPLUS = 3


class Node:
    __slots__ = ("kind", "leaf_val", "grad", "a", "b")

    def __init__(self, kind, leaf_val, a, b):
        self.set(kind, leaf_val, a, b)

    def set(self, kind, leaf_val, a, b):
        """(Re)make this node: used by the constructor and by the v1 pool."""
        self.kind = kind
        self.leaf_val = leaf_val  # the value of a LEAF; unused by the other kinds
        self.grad = 0.0
        self.a = a                # inputs: None for a LEAF, `a` only for SOFTPLUS
        self.b = b

    def value(self):
        """The node's value, recomputed from the leaves on every call."""
        if self.kind == SUM:
            return self.a.value() + self.b.value()
        if self.kind == PROD:
            return self.a.value() * self.b.value()
        if self.kind == SOFTPLUS:
            return softplus(self.a.value())
        return self.leaf_val

    def backward(self, g):
        """Add g to this node's grad and recurse into its inputs (chain rule)."""
        self.grad += g
        if self.kind == SUM:
            self.a.backward(g)
            self.b.backward(g)
        elif self.kind == PROD:
            self.a.backward(self.b.value() * g)
            self.b.backward(self.a.value() * g)
        elif self.kind == SOFTPLUS:
            self.a.backward(sigmoid(self.a.value()) * g)


# ---- naive: level v0 ---------------------------------------------------------------
# Fresh heap nodes every iteration, linked by references (freed by reference counting
# when the next iteration rebinds the names); values recomputed on demand.

def run_v0(seed, n):
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        x = Node(LEAF, xv, None, None)
        y = Node(LEAF, yv, None, None)
        s = Node(SUM, 0.0, x, y)
        p = Node(PROD, 0.0, s, x)
        f = Node(SOFTPLUS, 0.0, p, None)
        f.backward(1.0)
        sum_f += f.value()
        sum_dx += x.grad
        sum_dy += y.grad
    return Sums(sum_f, sum_dx, sum_dy)


# ---- pool: level v1 ----------------------------------------------------------------
# The v0 graph, but its nodes come from a fixed pool allocated once and relinked every
# iteration, so the loop creates no nodes. Values are still recomputed on demand (the
# seed's v1).

POOL_SIZE = 5  # x, y, s, p, f


class Pool:
    def __init__(self, size):
        self.nodes = [Node(LEAF, 0.0, None, None) for _ in range(size)]
        self.used = 0

    def reset(self):
        self.used = 0

    def take(self, kind, leaf_val, a, b):
        """The next free node, remade as (kind, leaf_val, a, b)."""
        node = self.nodes[self.used]
        self.used += 1
        node.set(kind, leaf_val, a, b)
        return node


def run_v1(seed, n):
    pool = Pool(POOL_SIZE)
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        pool.reset()
        x = pool.take(LEAF, xv, None, None)
        y = pool.take(LEAF, yv, None, None)
        s = pool.take(SUM, 0.0, x, y)
        p = pool.take(PROD, 0.0, s, x)
        f = pool.take(SOFTPLUS, 0.0, p, None)
        f.backward(1.0)
        sum_f += f.value()
        sum_dx += x.grad
        sum_dy += y.grad
    return Sums(sum_f, sum_dx, sum_dy)


# ---- tape: level v2, the seed's NaiveTape ------------------------------------------
# Fixed-size lists of vars {val, grad} and ops {kind, input ids, output id}, addressed
# by index. Each op computes its result once when pushed; backward walks the ops in
# reverse.

MAX_VARS = 6  # x, y, s, p, exp(-|p|), f
MAX_OPS = 3   # SUM, PROD, SOFTPLUS


class Var:
    __slots__ = ("val", "grad")

    def __init__(self, val, grad):
        self.val = val
        self.grad = grad


# An op is a plain tuple (kind, a, b, out): a and b are the input ids (SOFTPLUS's b is
# the var that saves exp(-|a|)), out the output id. (A NamedTuple reads the same but
# its constructor is a Python-level call: 10% of v2's time.)


class Tape:
    def __init__(self):
        self.vars = [Var(0.0, 0.0) for _ in range(MAX_VARS)]
        self.ops = [(0, 0, 0, 0)] * MAX_OPS
        self.n_vars = 0
        self.n_ops = 0

    def reset(self):
        self.n_vars = 0
        self.n_ops = 0

    def val(self, i):
        return self.vars[i].val

    def grad(self, i):
        return self.vars[i].grad

    def add_grad(self, i, g):
        self.vars[i].grad += g

    def leaf(self, val):
        """A new input var; returns its id."""
        var = self.vars[self.n_vars]
        var.val = val
        var.grad = 0.0
        self.n_vars += 1
        return self.n_vars - 1

    def push(self, kind, a, b, val):
        """Record op `kind` on inputs a, b with result `val`; returns the result's id."""
        out = self.leaf(val)
        self.ops[self.n_ops] = (kind, a, b, out)
        self.n_ops += 1
        return out

    def push_sum(self, a, b):
        return self.push(SUM, a, b, self.val(a) + self.val(b))

    def push_prod(self, a, b):
        return self.push(PROD, a, b, self.val(a) * self.val(b))

    def push_softplus(self, a):
        # exp(-|p|) is saved in a var of its own, so that backward reuses it (each
        # result computed once); the op names it as its second input.
        p = self.val(a)
        e = self.leaf(exp_neg_abs(p))
        return self.push(SOFTPLUS, a, e, softplus_e(p, self.val(e)))

    def backward(self, out):
        """Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule."""
        for i in range(self.n_vars):
            self.vars[i].grad = 0.0
        self.add_grad(out, 1.0)
        for k in range(self.n_ops - 1, -1, -1):
            kind, a, b, op_out = self.ops[k]
            g = self.grad(op_out)
            if kind == SUM:
                self.add_grad(a, g)
                self.add_grad(b, g)
            elif kind == PROD:
                self.add_grad(a, self.val(b) * g)
                self.add_grad(b, self.val(a) * g)
            else:  # SOFTPLUS
                self.add_grad(a, sigmoid_e(self.val(a), self.val(b)) * g)


def record(tape, xv, yv):
    """One forward pass of f(x, y) = softplus((x + y) * x); returns the ids of x, y, f."""
    tape.reset()
    x = tape.leaf(xv)
    y = tape.leaf(yv)
    s = tape.push_sum(x, y)
    p = tape.push_prod(s, x)
    f = tape.push_softplus(p)
    return x, y, f


def run_v2(seed, n):
    tape = Tape()
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        x, y, f = record(tape, xv, yv)
        tape.backward(f)
        sum_f += tape.val(f)
        sum_dx += tape.grad(x)
        sum_dy += tape.grad(y)
    return Sums(sum_f, sum_dx, sum_dy)


def eval_point(xv, yv):
    """f, df/dx, df/dy at one point, through the v2 tape (for --eval)."""
    tape = Tape()
    x, y, f = record(tape, xv, yv)
    tape.backward(f)
    return tape.val(f), tape.grad(x), tape.grad(y)


# ---- fused: baseline (not a level) -------------------------------------------------
# The same math written out by hand with no tape or graph, the floor that the v2 tape
# can approach.

def run_fused(seed, n):
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        x, y = sample(seed, i)
        s = x + y
        p = s * x
        e = exp_neg_abs(p)
        g = sigmoid_e(p, e)
        sum_f += softplus_e(p, e)
        sum_dx += s * g + x * g
        sum_dy += x * g
    return Sums(sum_f, sum_dx, sum_dy)


# ---- cli: the command line of contract §4, parsed strictly -------------------------
# In cli.py beside this file (the Codon program's cli/args.codon), shared with the peers
# (peers/common.py) so that every Python program parses alike: every bad input becomes
# a UsageError whose message is one line, so that main can print `error: ...` and exit 2
# before anything reaches stdout.

IMPLEMENTED = ["v0", "v1", "v2", "fused"]  # no vector math or parallel threads here
HAVE = {"softplus": IMPLEMENTED}            # each workload this port has, and its levels


# ---- report: the output of contract §5 ---------------------------------------------
# In cli.py too (the Codon program's cli/output.codon): printf-style formatting, which
# Python does exactly as C's printf does; `emit` prints a line, or ends the program with
# one `error:` line and exit status 1 when stdout cannot be written.

IMPL = "python"


# ---- main: command line, dispatch to the levels, output ----------------------------

VERSION_TEXT = "autograd (python) 0.1.0"
HELP_TEXT = """usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
                [--threads T] [--json]
       autograd --eval X Y [--json]
       autograd --help | --version

Runs N forward/backward passes of f(x, y) = softplus((x + y) * x) through a
reverse-mode autograd at each optimization level and prints the time and the
checksums (sums of f, df/dx and df/dy over the samples).

  --level L    v0 naive, v1 pool, v2 tape, all (v0..v2, the default), or the
               baseline fused (v3, v4 and fused-simd: not in this CPython port)
  --iters N    samples, 1..10^12 (default 10000000)
  --seed S     input stream seed, 0..2^64-1 (default 42)
  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the v2 tape"""


def cpus_available():
    """CPUs in this process's affinity mask (what taskset or a container allows)."""
    return max(len(os.sched_getaffinity(0)), 1)


def run_level(level, seed, n, threads):
    if level == "v0":
        return run_v0(seed, n)
    if level == "v1":
        return run_v1(seed, n)
    if level == "v2":
        return run_v2(seed, n)
    return run_fused(seed, n)


def implemented(level):
    return level in IMPLEMENTED


def run(opts):
    if not opts.json:
        emit(text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        start = time.monotonic_ns()
        sums = run_level(level, opts.seed, opts.iters, threads)
        seconds = (time.monotonic_ns() - start) / 1e9
        r = Result(IMPL, level, opts.iters, opts.seed, threads, seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        emit(json_line(r) if opts.json else text_line(r, v0_seconds))


def evaluate(opts):
    f, dfdx, dfdy = eval_point(opts.x, opts.y)
    p = (opts.x + opts.y) * opts.x
    if not math.isfinite(p):
        raise UsageError("(X + Y) * X overflows at this point")
    for v in (f, dfdx, dfdy):
        if not math.isfinite(v):
            raise UsageError("the result overflows at this point")
    emit(eval_json(IMPL, opts.x, opts.y, f, dfdx, dfdy) if opts.json else eval_text(opts.x, opts.y, f, dfdx, dfdy))


def main():
    # Die quietly like a C program when stdout is a closed pipe (`| head`), rather
    # than with a BrokenPipeError trace.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        opts = parse(sys.argv[1:], cpus_available(), HAVE)
        for level in opts.levels:
            if opts.mode == RUN and not implemented(level):
                raise UsageError(f"level {level} is not implemented by this program")
        if opts.mode == HELP:
            emit(HELP_TEXT)
        elif opts.mode == VERSION:
            emit(VERSION_TEXT)
        elif opts.mode == EVAL:
            evaluate(opts)
        else:
            run(opts)
    except UsageError as e:
        sys.stderr.write("error: " + e.message + "\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
