# The Codon program's graph/, the graph workload: recipe (inputs, ops, checksums), nodes +
# objects (v0), pool (v1), tape (v2), simd (v3, with lanes' arithmetic), threads (v4).
