#!/usr/bin/env bash
# The GPU machine's one prepared run (its duration on the H200: docs/gpu.md), with no toolchain there:
#   1. the machine: GPU, driver, CPU, cores;
#   2. v5 on the device: tests/test_gpu.py's device tests (sums against v4 and against the kernel's walk on
#      the CPU), then level v5 at N = 10^8, 10^9 and 10^10 (5 runs each, every run's sums checked) beside
#      the Codon program's v4 at 1, 2, 4, ... up to every core;
#   3. the thread scan of every compiled program in the bundle: v3 and v4 of both workloads, v4 at 1, 2,
#      4, ... up to every core.
# A machine without a device still does 1 and 3 (v5 is skipped with a line). Each scripts/bench.py run
# writes its raw file under $RESULTS/raw/<machine>/ (RESULTS defaults to results/gpu: apart from
# results/raw, whose newest run per machine makes results/README.md).
#
#   make gpu-bundle                 # here: build-gpu/ and build-gpu.tar.xz
#   bash scripts/gpu_bench.sh       # there, with build-gpu/ carried along (or the tarball unpacked)
#
# A build folder made by `make` on the GPU machine itself works too: scripts/gpu_bench.sh BUILD.
# SCAN_IMPLS=a,b,... names the programs of step 3; SCAN_FLAGS='...' adds scripts/bench.py flags to its
# run, after the script's own (the later flag wins): tests/test_gpu.py scans briefly with it on a machine
# without a device. Unset, step 3 is the full scan.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
PY=${PYTHON:-python3}
RESULTS=${RESULTS:-results/gpu}
if [ ! -x "$BUILD/autograd" ] || [ ! -f "$BUILD/autograd.ptx" ]; then
  echo "error: $BUILD/autograd and $BUILD/autograd.ptx are needed: run make gpu-bundle first" >&2
  exit 2
fi
if [ -d "$BUILD/lib" ]; then   # the bundle's runtimes, ahead of the build machine's paths baked in
  export LD_LIBRARY_PATH="$PWD/$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
status=0
step() { echo; echo "== $(date -u +%H:%M:%S) $*"; }

step "the machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 | head -5
grep -m1 'model name' /proc/cpuinfo; echo "logical CPUs: $(nproc)"
"$BUILD/autograd" --version

step "v5 on the device"
if probe=$(timeout 120 "$BUILD/autograd" --level v5 --iters 1000 --json 2>&1); then
  echo "$probe"
  if "$PY" -c 'import pytest' 2>/dev/null; then
    AUTOGRAD_BUILD=$BUILD AUTOGRAD_PREBUILT=1 timeout 300 "$PY" -m pytest -q -p no:cacheprovider \
      tests/test_gpu.py -k on_the_device || status=1
  else
    echo "skip: the device tests need pytest"
  fi
  bench() {  # the Codon program's softplus v4 and v5 at a fixed N
    timeout 150 "$PY" scripts/bench.py --impls codon --workloads softplus --levels v4,v5 --no-build \
      --build-dir "$BUILD" --repeats 5 --results-dir "$RESULTS" "$@" || status=1
  }
  bench --iters 1000000000                      # v4 at 1, 2, 4, ... every core; v5
  bench --iters 10000000000 --no-thread-scan    # v4 on every core against v5 at the largest N
  bench --iters 100000000 --no-thread-scan
else
  echo "skip: v5: $probe"
fi

step "the thread scan of the compiled programs"
impls=codon   # and every port in the bundle; SCAN_IMPLS=a,b,... names others
for p in c zig rust; do [ -x "$BUILD/autograd-$p" ] && impls+=",$p"; done
timeout 240 "$PY" scripts/bench.py --impls "${SCAN_IMPLS:-$impls}" --workloads softplus,graph --levels v3,v4 \
  --no-build --build-dir "$BUILD" --repeats 5 --min-time 0.1 --results-dir "$RESULTS" ${SCAN_FLAGS:-} || status=1
step "done (status $status)"
exit $status
