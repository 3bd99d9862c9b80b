# Graph level v2's op record (graph/tape.pyx), shared with the batch tape of v3.

cdef struct GraphOp:
    int kind
    int a    # input ids; SOFTPLUS's b is its slot in `saved` (exp(-|a|))
    int b
    int c
    int d
    int out  # the (first) output id; SOFTMAX4's four are out .. out+3
