#!/usr/bin/env bash
# How v3's speed depends on BATCH, the lanes per tape var: builds copies of the Codon
# program with BATCH = 64 .. 1024 and times their v3 alternately, then prints the medians.
# Usage: scripts/batch_sizes.sh [ITERS] [REPEATS]      (run from the repo root after `make build`)
set -euo pipefail
iters=${1:-10000000}
repeats=${2:-7}
codon=${CODON:-.venv/bin/codon}
sizes=(64 128 256 512 1024)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for b in "${sizes[@]}"; do
  mkdir "$tmp/$b"
  cp -r autograd.codon core cli softplus graph "$tmp/$b/"
  sed -i "s/^BATCH: Literal\[int\] = [0-9]*/BATCH: Literal[int] = $b/" "$tmp/$b/softplus/simd.codon"
  "$codon" build -release -l mvec -o "$tmp/$b/autograd" "$tmp/$b/autograd.codon"
done

declare -A times
for ((r = 0; r < repeats; r++)); do
  for b in "${sizes[@]}"; do
    ns=$("$tmp/$b/autograd" --level v3 --iters "$iters" --json | sed 's/.*"ns_per_iter": \([^,]*\),.*/\1/')
    times[$b]+="$ns "
  done
done
for b in "${sizes[@]}"; do
  tr ' ' '\n' <<<"${times[$b]}" | grep . | sort -g |
    awk -v b="$b" '{a[NR] = $1} END {printf "BATCH %-5s v3 ns/iter median %6.2f  min %6.2f  max %6.2f  (%d runs)\n", b, a[int((NR + 1) / 2)], a[1], a[NR], NR}'
done
