# The softplus workload's op kinds, defined here once for every level (the tapes of v2-v4
# record SUM, PROD and SOFTPLUS). The node objects the Codon program keeps in this module,
# for v0 and v1, are not in this port: Numba cannot compile them (ports/numba/README.md).
LEAF = 0
SUM = 1
PROD = 2
SOFTPLUS = 3
