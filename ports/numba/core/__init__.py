# The Codon program's core/, shared by both workloads: rng (the input stream), ops (the scalar
# math), vmath (libmvec's vector exp/log1p), threads (v4's team) and target (what the build
# is for). Its cuda is Codon-only (ports/numba/README.md).
