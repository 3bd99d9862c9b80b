#!/usr/bin/env bash
# The GPU machine's one prepared run, at most 5 minutes: level v5 at N = 10^8, 10^9 and 10^10 (best of 5,
# each run's sums checked against v4's at the same N), and v4 at 1, 2, 4, 8 and 16 threads for the
# thread-scaling table. Each scripts/bench.py run writes its raw file under results/raw/<machine>/.
#
#   make gpu-bundle                 # here: build-gpu/ holds the program, its PTX and Codon's libraries
#   bash scripts/gpu_bench.sh       # there, with build-gpu/ carried along (no toolchain needed)
#
# A build folder made by `make` on the GPU machine itself works too: scripts/gpu_bench.sh BUILD.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
PY=${PYTHON:-python3}
if [ ! -x "$BUILD/autograd" ] || [ ! -f "$BUILD/autograd.ptx" ]; then
  echo "error: $BUILD/autograd and $BUILD/autograd.ptx are needed: run make gpu-bundle first" >&2
  exit 2
fi
if [ -d "$BUILD/lib" ]; then   # the bundle's Codon runtime, ahead of the build machine's path baked in
  export LD_LIBRARY_PATH="$PWD/$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
"$BUILD/autograd" --level v5 --iters 1 --json >/dev/null   # no device: its error line, and stop here

bench() {  # one bench.py run of the Codon program's softplus v4 and v5 at a fixed N
  timeout 150 "$PY" scripts/bench.py --impls codon --workloads softplus --levels v4,v5 --no-build \
    --build-dir "$BUILD" --threads 16 --repeats 5 --results-dir results "$@"
}
bench --iters 1000000000                      # v4 at 1, 2, 4, 8, 16 threads; v5
bench --iters 10000000000 --no-thread-scan    # v4 at 16 threads against v5 at the largest N
bench --iters 100000000 --no-thread-scan
