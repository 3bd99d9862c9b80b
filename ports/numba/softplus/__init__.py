# The Codon program's softplus/, the softplus workload: nodes + naive (v0), pool (v1),
# tape (v2), simd (v3), threads (v4), fused (the fused and fused-simd baselines). Its gpu (v5)
# is Codon-only (ports/numba/README.md).
