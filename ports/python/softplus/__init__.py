# The Codon program's softplus/, the softplus workload: nodes + naive (v0), pool (v1),
# tape (v2), fused (the scalar baseline). Its simd (v3), threads (v4) and gpu (v5) are not
# in this port (ports/python/README.md).
