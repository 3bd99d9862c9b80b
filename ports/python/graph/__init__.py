# The Codon program's graph/, the graph workload: recipe (inputs, ops, checksums), nodes +
# objects (v0), pool (v1), tape (v2). Its simd (v3), lanes and threads (v4) are not in this
# port (ports/python/README.md).
