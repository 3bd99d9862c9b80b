// The pointer-linked graph of levels v0 and v1, the seed's first design: each node
// knows its inputs, computes its value when asked (recomputing its whole subgraph
// every time), and pushes gradients to its inputs by recursion.
const std = @import("std");
const Allocator = std.mem.Allocator;
const softplus = @import("../core/ops.zig").softplus;
const sigmoid = @import("../core/ops.zig").sigmoid;

/// The softplus workload's op kinds, defined here once for every level (the tapes of
/// v2-v4 record sum, prod and softplus).
pub const Kind = enum(u8) { leaf, sum, prod, softplus };

pub const Node = struct {
    kind: Kind,
    leaf_val: f64, // the value of a leaf; unused by the other kinds
    grad: f64,
    a: ?*Node, // inputs: none for a leaf, `a` only for softplus
    b: ?*Node,

    /// A fresh node on the heap (v0): one allocator call per node.
    pub fn create(gpa: Allocator, kind: Kind, leaf_val: f64, a: ?*Node, b: ?*Node) Allocator.Error!*Node {
        const node = try gpa.create(Node);
        node.set(kind, leaf_val, a, b);
        return node;
    }

    /// (Re)make this node: used by create and by the v1 pool.
    pub fn set(self: *Node, kind: Kind, leaf_val: f64, a: ?*Node, b: ?*Node) void {
        self.* = .{ .kind = kind, .leaf_val = leaf_val, .grad = 0.0, .a = a, .b = b };
    }

    /// The node's value, recomputed from the leaves on every call. A leaf's is read where
    /// it is asked for (9 of a sample's 15 calls are on leaves); the other kinds recurse.
    pub inline fn value(self: *const Node) f64 {
        if (self.kind == .leaf) return self.leaf_val;
        return self.op_value();
    }

    /// value() of a node that is not a leaf.
    fn op_value(self: *const Node) f64 {
        return switch (self.kind) {
            .sum => self.a.?.value() + self.b.?.value(),
            .prod => self.a.?.value() * self.b.?.value(),
            .softplus => softplus(self.a.?.value()),
            .leaf => unreachable,
        };
    }

    /// Add g to this node's grad and recurse into its inputs (chain rule).
    pub inline fn backward(self: *Node, g: f64) void {
        self.grad += g;
        if (self.kind != .leaf) self.op_backward(g);
    }

    /// backward()'s recursion into a node's inputs, for a node that is not a leaf.
    fn op_backward(self: *Node, g: f64) void {
        switch (self.kind) {
            .sum => {
                self.a.?.backward(g);
                self.b.?.backward(g);
            },
            .prod => {
                self.a.?.backward(self.b.?.value() * g);
                self.b.?.backward(self.a.?.value() * g);
            },
            .softplus => self.a.?.backward(sigmoid(self.a.?.value()) * g),
            .leaf => {},
        }
    }
};
