# Level v2's tape (softplus/tape.pyx), declared for the batched levels, which share its
# op record and sizes.

cdef enum:
    MAX_VARS = 6  # x, y, s, p, exp(-|p|), f
    MAX_OPS = 3   # SUM, PROD, SOFTPLUS (softplus/nodes.pxd's kinds)


cdef struct Var:
    double val
    double grad


cdef struct Op:
    int kind
    int a    # input ids; SOFTPLUS's b is the var that saves exp(-|a|)
    int b
    int out  # output id


cdef struct Tape:
    Var vars[MAX_VARS]
    Op ops[MAX_OPS]
    int n_vars
    int n_ops
