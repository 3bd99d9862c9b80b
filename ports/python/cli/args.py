# The command line of contract §4, parsed strictly: every bad input becomes a
# UsageError whose message is one line, so that main can print `error: ...` and exit 2
# before anything reaches stdout.
import os

LEVELS = ["v0", "v1", "v2", "v3", "v4"]     # run by --level all, in this order
BASELINES = ["fused", "fused-simd"]          # run only when named (softplus workload)
WORKLOADS = ["softplus", "graph"]            # --workload, the first the default
MAX_ITERS = 1_000_000_000_000
MAX_THREADS = 1024
MAX_GRAPH_OPS = 1_000_000                  # --ops (MAX_OPS is the softplus tape's)
MAX_SEED = (1 << 64) - 1
DEFAULT_ITERS = 10_000_000                   # softplus samples
DEFAULT_GRAPH_ITERS = 10_000                 # graph samples (Rogozhnikov's 10,000 passes)
DEFAULT_OPS = 10_000
DEFAULT_SEED = 42
FLAGS = ("--workload", "--level", "--ops", "--iters", "--seed", "--threads", "--json", "--eval")

# The --help text of contract §4, the Codon program's (autograd.codon) but for v5, which only it has;
# help_text fills in the --level paragraph, each port's own levels.
HELP_BEFORE_LEVELS = """usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
                [--threads T] [--json]
       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]
                [--seed S] [--threads T] [--json]
       autograd --eval X Y [--json]
       autograd --help | --version

Runs N forward/backward passes through a reverse-mode autograd at each
optimization level and prints the time and the checksums. Workloads:
  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the
            sums of f, df/dx and df/dy over the samples
  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),
            loss = the sum of every node; checksums are the sums of the loss,
            of the inputs' weighted gradients and of every node's gradient

  --workload W softplus or graph (default softplus)
  --level L    """
HELP_AFTER_LEVELS = f"""
  --ops M      graph ops, 1..{MAX_GRAPH_OPS} (default {DEFAULT_OPS}; graph workload only)
  --iters N    samples, 1..10^12 (default {DEFAULT_ITERS}; graph {DEFAULT_GRAPH_ITERS})
  --seed S     input stream seed, 0..2^64-1 (default {DEFAULT_SEED})
  --threads T  threads for v4, 1..{MAX_THREADS} (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the softplus v2 tape"""


def help_text(levels):
    """The --help text of a port whose --level paragraph is `levels` (its lines after the first
    indented 15 spaces, as in the text)."""
    return HELP_BEFORE_LEVELS + levels + HELP_AFTER_LEVELS


RUN = 0
EVAL = 1
HELP = 2
VERSION = 3


class UsageError(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message


class Options:
    def __init__(self, mode, threads):
        self.mode = mode
        self.workload = WORKLOADS[0]
        self.levels = []             # set by parse: the levels to run, in order
        self.ops = DEFAULT_OPS
        self.iters = DEFAULT_ITERS
        self.seed = DEFAULT_SEED
        self.threads = threads
        self.json = False
        self.x = 0.0
        self.y = 0.0


def shown(arg):
    """An argument quoted for an error line, control and non-ASCII bytes shown as '?'
    (byte by byte, as the compiled programs see them: '５' is three bytes, '???')."""
    return "'" + "".join(chr(c) if 0x20 <= c <= 0x7E else "?" for c in os.fsencode(arg)) + "'"


def parse_uint(flag, text, lo, hi):
    """A decimal integer in [lo, hi], written in digits only (no sign, exponent, hex)."""
    bad = UsageError(f"{flag} must be a whole number from {lo} to {hi}, got {shown(text)}")
    if not text or len(text) > 20:
        raise bad
    value = 0
    for c in text:
        if not ("0" <= c <= "9"):
            raise bad
        digit = ord(c) - ord("0")
        if value > (hi - digit) // 10:  # value * 10 + digit would pass hi
            raise bad
        value = value * 10 + digit
    if value < lo:
        raise bad
    return value


def is_decimal(text):
    """[+-] digits [. digits] [e [+-] digits], with at least one mantissa digit."""
    i, n = 0, len(text)
    if i < n and text[i] in "+-":
        i += 1
    digits = 0
    while i < n and "0" <= text[i] <= "9":
        i, digits = i + 1, digits + 1
    if i < n and text[i] == ".":
        i += 1
        while i < n and "0" <= text[i] <= "9":
            i, digits = i + 1, digits + 1
    if digits == 0:
        return False
    if i < n and text[i] in "eE":
        i += 1
        if i < n and text[i] in "+-":
            i += 1
        start = i
        while i < n and "0" <= text[i] <= "9":
            i += 1
        if i == start:
            return False
    return i == n


def parse_point(flag, text):
    """A finite decimal number (no hex, inf or nan), read by float(), correctly rounded
    like the C library's strtod."""
    if not is_decimal(text):
        raise UsageError(f"{flag} needs finite decimal numbers, got {shown(text)}")
    value = float(text)
    if value - value != 0.0:  # +-inf: the decimal is beyond the float range
        raise UsageError(f"{flag} value {shown(text)} is out of range")
    return value


def parse_level(text, workload, have):
    """The levels --level names; the graph workload has no baselines. `all` is every
    level v0-v4 the program has (a program with only a baseline runs that)."""
    named = LEVELS + BASELINES if workload == "softplus" else LEVELS
    if text == "all":
        return [level for level in LEVELS if level in have] or list(have)
    if text in named:
        return [text]
    raise UsageError(f"--level must be one of {', '.join(named)} or all, got {shown(text)}")


def parse_workload(text):
    if text in WORKLOADS:
        return text
    raise UsageError(f"--workload must be one of {', '.join(WORKLOADS)}, got {shown(text)}")


def parse(args, cpus, have):
    """Options from the arguments after the program name; raises UsageError.

    `have` maps each workload the program implements to its levels and baselines; a
    workload or level it lacks is bad input, refused after every other check."""
    if len(args) == 1 and args[0] == "--help":
        return Options(HELP, cpus)
    if len(args) == 1 and args[0] == "--version":
        return Options(VERSION, cpus)
    opts = Options(RUN, cpus)
    seen = []
    level = "all"
    i = 0
    while i < len(args):
        flag = args[i]
        if flag in ("--help", "--version"):
            raise UsageError(f"{flag} takes no other arguments")
        if flag not in FLAGS:
            raise UsageError(f"unknown argument {shown(flag)} (try --help)")
        if flag in seen:
            raise UsageError(f"{flag} given twice")
        seen.append(flag)
        arity = 0 if flag == "--json" else (2 if flag == "--eval" else 1)
        if i + arity >= len(args):
            raise UsageError(f"{flag} needs {'two values' if arity == 2 else 'a value'}")
        value = args[i + 1] if arity > 0 else ""
        if flag == "--json":
            opts.json = True
        elif flag == "--workload":
            opts.workload = parse_workload(value)
        elif flag == "--level":
            level = value  # checked below, once the workload is known
        elif flag == "--ops":
            opts.ops = parse_uint(flag, value, 1, MAX_GRAPH_OPS)
        elif flag == "--iters":
            opts.iters = parse_uint(flag, value, 1, MAX_ITERS)
        elif flag == "--seed":
            opts.seed = parse_uint(flag, value, 0, MAX_SEED)
        elif flag == "--threads":
            opts.threads = parse_uint(flag, value, 1, MAX_THREADS)
        else:  # --eval X Y
            opts.mode = EVAL
            opts.x = parse_point(flag, value)
            opts.y = parse_point(flag, args[i + 2])
        i += 1 + arity
    if opts.mode == EVAL:
        for other in seen:
            if other not in ("--eval", "--json"):
                raise UsageError(f"--eval takes no {other}")
        return opts
    if "--ops" in seen and opts.workload != "graph":
        raise UsageError("--ops belongs to the graph workload (add --workload graph)")
    opts.levels = parse_level(level, opts.workload, have.get(opts.workload, []))
    if opts.workload not in have:
        raise UsageError(f"workload {opts.workload} is not implemented by this program")
    for name in opts.levels:
        if name not in have[opts.workload]:
            raise UsageError(f"level {name} is not implemented by this program")
    if opts.workload == "graph" and "--iters" not in seen:
        opts.iters = DEFAULT_GRAPH_ITERS
    return opts
