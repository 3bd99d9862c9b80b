# Graph level v0's forward pass, shared with v1 (graph/pool.pyx).
from libc.stdint cimport uint64_t, int64_t
from graph.nodes cimport NodeGraph

cdef int record_nodes(NodeGraph g, uint64_t seed, int64_t s, int m) except -1
