# The Codon program's cli/: args (the command line) and output (text and JSON), the
# CPython port's and the peers' (peers/common.py), so that every Python program parses and
# prints alike; and driver, the entry's dispatch and timing (autograd.codon's main, run,
# run_graph, evaluate) for the CPython, Cython and Numba ports. Nothing in it knows which
# program it serves: the caller passes its `impl` and the levels it has. args and output are
# re-exported here, so `import cli` gives cli.parse, cli.emit, ... as one namespace.
from .args import *    # noqa: F401,F403
from .output import *  # noqa: F401,F403
