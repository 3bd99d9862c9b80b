#!/usr/bin/env bash
# What LLVM's inlining does to the v2 tape: builds the Codon program as it is and a copy
# whose tape functions may not be force-inlined (the two `@inline` lines in softplus/tape.codon
# removed), then times v2 and fused from both, alternately, and prints the medians.
# Usage: scripts/v2_inlining.sh [ITERS] [REPEATS]      (run from the repo root after `make build`)
set -euo pipefail
iters=${1:-10000000}
repeats=${2:-5}
codon=${CODON:-.venv/bin/codon}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp -r build/codon-src/. "$tmp/"
sed -i '/^ *@inline/d' "$tmp/softplus/tape.codon"
"$codon" build -release -l mvec -o "$tmp/autograd-no-inline" "$tmp/autograd.codon"

declare -A times
for ((r = 0; r < repeats; r++)); do
  for variant in inlined:build/autograd no-inline:"$tmp/autograd-no-inline"; do
    name=${variant%%:*}; bin=${variant#*:}
    for level in v2 fused; do
      ns=$("$bin" --level "$level" --iters "$iters" --json | sed 's/.*"ns_per_iter": \([^,]*\),.*/\1/')
      times[$name/$level]+="$ns "
    done
  done
done
for key in inlined/v2 inlined/fused no-inline/v2 no-inline/fused; do
  tr ' ' '\n' <<<"${times[$key]}" | grep . | sort -g |
    awk -v key="$key" '{a[NR] = $1} END {printf "%-16s ns/iter median %6.2f  min %6.2f  max %6.2f  (%d runs)\n", key, a[int((NR + 1) / 2)], a[1], a[NR], NR}'
done
