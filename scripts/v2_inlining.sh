#!/usr/bin/env bash
# What LLVM's inlining does to the v2 tape: builds the Codon program as it is and a copy
# whose tape functions may not be force-inlined (the two `@inline` lines in softplus/tape.codon
# removed), then times v2 and fused from both, alternately, and prints the medians.
# Usage: scripts/v2_inlining.sh [ITERS] [REPEATS]      (run from the repo root after `make build`;
#        BUILD=DIR CPU=... as given to make)
set -euo pipefail
iters=${1:-10000000}
repeats=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The Codon build command exactly as the Makefile states it (flags, CPU target, v5's libdevice and driver).
codon_build=$(make -s --no-print-directory BUILD="${BUILD:-build}" ${CPU:+CPU="$CPU"} \
  --eval 'codon-build-command: ; @echo $(CODON_BUILD)' codon-build-command)

cp -r "${BUILD:-build}"/codon-src/. "$tmp/"
sed -i '/^ *@inline/d' "$tmp/softplus/tape.codon"
eval "$codon_build -o \"$tmp/autograd-no-inline\" \"$tmp/autograd.codon\""

declare -A times
for ((r = 0; r < repeats; r++)); do
  for variant in inlined:"${BUILD:-build}"/autograd no-inline:"$tmp/autograd-no-inline"; do
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
