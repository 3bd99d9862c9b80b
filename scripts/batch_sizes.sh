#!/usr/bin/env bash
# How v3's speed depends on the batch, the lanes per tape var: builds copies of the Codon
# program with other batch sizes and times their v3 alternately, then prints the medians.
# Usage: scripts/batch_sizes.sh [softplus|graph] [ITERS] [REPEATS]   (from the repo root after `make build`;
#        BUILD=DIR CPU=... as given to make)
#   softplus: BATCH = 64 .. 1024 in softplus/simd.codon, ITERS samples (default 10,000,000)
#   graph:    GRAPH_BATCH = 8 .. 64 in graph/simd.codon, 10,000 ops, ITERS samples (default 4,000)
set -euo pipefail
workload=${1:-softplus}
case "$workload" in
  softplus) sizes=(64 128 256 512 1024); name=BATCH; file=softplus/simd.codon; iters=${2:-10000000}; args=() ;;
  graph) sizes=(8 16 32 64); name=GRAPH_BATCH; file=graph/simd.codon; iters=${2:-4000}; args=(--workload graph) ;;
  *) echo "error: unknown workload '$workload' (softplus or graph)" >&2; exit 2 ;;
esac
repeats=${3:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The Codon build command exactly as the Makefile states it (flags, CPU target, v5's libdevice and driver).
codon_build=$(make -s --no-print-directory BUILD="${BUILD:-build}" ${CPU:+CPU="$CPU"} \
  --eval 'codon-build-command: ; @echo $(CODON_BUILD)' codon-build-command)

# Each copy is made the way the Makefile makes build/autograd (its core/target.codon included).
for b in "${sizes[@]}"; do
  mkdir "$tmp/$b"
  cp -r "${BUILD:-build}"/codon-src/. "$tmp/$b/"
  sed -i "s/^$name: Literal\[int\] = [0-9]*/$name: Literal[int] = $b/" "$tmp/$b/$file"
  grep -q "^$name: Literal\[int\] = $b\b" "$tmp/$b/$file"   # the copy has the size, comment or none
  eval "$codon_build -o \"$tmp/$b/autograd\" \"$tmp/$b/autograd.codon\""
done

declare -A times
for ((r = 0; r < repeats; r++)); do
  for b in "${sizes[@]}"; do
    ns=$("$tmp/$b/autograd" "${args[@]}" --level v3 --iters "$iters" --json | sed 's/.*"ns_per_iter": \([^,]*\),.*/\1/')
    times[$b]+="$ns "
  done
done
for b in "${sizes[@]}"; do
  tr ' ' '\n' <<<"${times[$b]}" | grep . | sort -g |
    awk -v b="$b" -v name="$name" '{a[NR] = $1} END {printf "%s %-5s v3 ns/iter median %10.2f  min %10.2f  max %10.2f  (%d runs)\n", name, b, a[int((NR + 1) / 2)], a[1], a[NR], NR}'
done
