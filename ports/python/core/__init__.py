# The Codon program's core/, shared by both workloads: rng (the input stream) and ops (the
# scalar math). Its vmath, target and cuda are not needed here (ports/python/README.md).
