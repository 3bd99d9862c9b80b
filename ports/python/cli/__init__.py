# The Codon program's cli/: args (the command line) and output (text and JSON), the
# CPython port's and the peers' (peers/common.py), so that every Python program parses and
# prints alike. Nothing in it knows which program it serves: the caller passes its `impl`
# and the levels it has. Both modules are re-exported here, so `import cli` gives cli.parse,
# cli.emit, ... as one namespace.
from .args import *    # noqa: F401,F403
from .output import *  # noqa: F401,F403
