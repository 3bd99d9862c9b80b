// The node objects of graph levels v0 and v1: every node a heap object holding its value,
// its grad and pointers to its input nodes, each value computed once when the node is
// made. The graph keeps its nodes in creation order, which is all backward needs: it walks
// them in reverse. v0 destroys the nodes after every sample, v1 keeps them as a pool.
const std = @import("std");
const Allocator = std.mem.Allocator;
const exp_neg_abs = @import("../core/ops.zig").exp_neg_abs;
const softplus_e = @import("../core/ops.zig").softplus_e;
const sigmoid_e = @import("../core/ops.zig").sigmoid_e;
const GraphKind = @import("recipe.zig").GraphKind;
const N_INPUTS = @import("recipe.zig").N_INPUTS;
const GraphSums = @import("recipe.zig").GraphSums;
const softmax4 = @import("recipe.zig").softmax4;
const softmax4_avg = @import("recipe.zig").softmax4_avg;

const GraphNode = struct {
    val: f64,
    grad: f64,
    kind: GraphKind, // leaf, or the kind of the op that made it (all four of a SOFTMAX4's)
    saved: f64, // SOFTPLUS: exp(-|a.val|), for backward's sigmoid
    a: ?*GraphNode, // inputs, as many as the kind has
    b: ?*GraphNode,
    c: ?*GraphNode,
    d: ?*GraphNode,

    /// A fresh node on the heap: one allocator call.
    fn create(gpa: Allocator, kind: GraphKind, val: f64, saved: f64, a: ?*GraphNode, b: ?*GraphNode, c: ?*GraphNode, d: ?*GraphNode) Allocator.Error!*GraphNode {
        const node = try gpa.create(GraphNode);
        node.set(kind, val, saved, a, b, c, d);
        return node;
    }

    /// (Re)make this node; its grad starts at 1.0, d loss / d val (the loss sums every node).
    fn set(self: *GraphNode, kind: GraphKind, val: f64, saved: f64, a: ?*GraphNode, b: ?*GraphNode, c: ?*GraphNode, d: ?*GraphNode) void {
        self.* = .{ .kind = kind, .val = val, .saved = saved, .grad = 1.0, .a = a, .b = b, .c = c, .d = d };
    }
};

/// The graph of a sample's nodes. NodeGraph(true) is a pool (v1): its nodes made once, by
/// initPool, and remade by every sample; NodeGraph(false) (v0) makes a new heap node in every take
/// and destroys them when the next sample starts.
pub fn NodeGraph(comptime pool: bool) type {
    return struct {
        const Self = @This();

        gpa: Allocator, // the nodes' heap
        nodes: std.ArrayList(*GraphNode) = .empty, // in creation order
        count: usize = 0,

        /// A graph whose every take makes a new node (v0).
        pub fn init(gpa: Allocator) Self {
            comptime std.debug.assert(!pool);
            return .{ .gpa = gpa };
        }

        /// A pool (v1) of `room` nodes, a sample's, made once, before the first sample, as the
        /// Codon program's NodeGraph[True] is; every sample then remakes them.
        pub fn initPool(gpa: Allocator, room: usize) Allocator.Error!Self {
            comptime std.debug.assert(pool);
            var g: Self = .{ .gpa = gpa };
            errdefer g.deinit();
            try g.nodes.ensureTotalCapacity(gpa, room);
            for (0..room) |_| g.nodes.appendAssumeCapacity(try GraphNode.create(gpa, .leaf, 0.0, 0.0, null, null, null, null));
            return g;
        }

        pub fn deinit(self: *Self) void {
            self.drop();
            self.nodes.deinit(self.gpa);
        }

        /// Every node back to the heap; the list keeps its room, as the Codon program's array
        /// does (a list past malloc's mmap threshold would be fresh pages every sample).
        fn drop(self: *Self) void {
            for (self.nodes.items) |node| self.gpa.destroy(node);
            self.nodes.clearRetainingCapacity();
        }

        /// Start a sample: a pool's nodes are remade; otherwise (v0) they are destroyed.
        pub fn reset(self: *Self) void {
            if (!pool) self.drop();
            self.count = 0;
        }

        pub fn size(self: *const Self) usize {
            return self.count;
        }

        fn at(self: *const Self, i: usize) *GraphNode {
            return self.nodes.items[i];
        }

        /// The next node, made as given: a pool's remade (v1), or a new heap object (v0). `pool` is
        /// known when compiled, so a pool's take has no path to the allocator.
        fn take(self: *Self, kind: GraphKind, val: f64, saved: f64, a: ?*GraphNode, b: ?*GraphNode, c: ?*GraphNode, d: ?*GraphNode) Allocator.Error!*GraphNode {
            const node = if (pool) self.nodes.items[self.count] else blk: {
                try self.nodes.ensureUnusedCapacity(self.gpa, 1); // first, so that a made node is never lost
                const made = try GraphNode.create(self.gpa, kind, val, saved, a, b, c, d);
                self.nodes.appendAssumeCapacity(made);
                break :blk made;
            };
            if (pool) node.set(kind, val, saved, a, b, c, d);
            self.count += 1;
            return node;
        }

        pub fn leaf(self: *Self, val: f64) Allocator.Error!void {
            _ = try self.take(.leaf, val, 0.0, null, null, null, null);
        }

        pub fn push_softplus(self: *Self, i: usize) Allocator.Error!void {
            const a = self.at(i);
            const e = exp_neg_abs(a.val);
            _ = try self.take(.softplus, softplus_e(a.val, e), e, a, null, null, null);
        }

        pub fn push_sum4(self: *Self, i: usize, j: usize, k: usize, l: usize) Allocator.Error!void {
            const a = self.at(i);
            const b = self.at(j);
            const c = self.at(k);
            const d = self.at(l);
            _ = try self.take(.sum4, ((a.val + b.val) + c.val) + d.val, 0.0, a, b, c, d);
        }

        pub fn push_prod(self: *Self, i: usize, j: usize) Allocator.Error!void {
            const a = self.at(i);
            const b = self.at(j);
            _ = try self.take(.prod, a.val * b.val, 0.0, a, b, null, null);
        }

        pub fn push_softmax4(self: *Self, i: usize, j: usize, k: usize, l: usize) Allocator.Error!void {
            const a = self.at(i);
            const b = self.at(j);
            const c = self.at(k);
            const d = self.at(l);
            for (softmax4(a.val, b.val, c.val, d.val)) |o| {
                _ = try self.take(.softmax4, o, 0.0, a, b, c, d);
            }
        }

        /// The nodes in reverse creation order, each pushing its grad to its inputs (G3); a SOFTMAX4's
        /// four outputs are handled together, at the last of them.
        pub fn backward(self: *Self) void {
            var i = self.count - 1;
            while (i >= N_INPUTS) {
                const node = self.nodes.items[i];
                const g = node.grad;
                switch (node.kind) {
                    .softplus => node.a.?.grad += sigmoid_e(node.a.?.val, node.saved) * g,
                    .sum4 => {
                        node.a.?.grad += g;
                        node.b.?.grad += g;
                        node.c.?.grad += g;
                        node.d.?.grad += g;
                    },
                    .prod => {
                        node.a.?.grad += node.b.?.val * g;
                        node.b.?.grad += node.a.?.val * g;
                    },
                    .softmax4 => { // nodes i-3 .. i are its outputs
                        const o0 = self.nodes.items[i - 3];
                        const o1 = self.nodes.items[i - 2];
                        const o2 = self.nodes.items[i - 1];
                        const o3 = node;
                        const avg = softmax4_avg(o0.val, o1.val, o2.val, o3.val, o0.grad, o1.grad, o2.grad, o3.grad);
                        node.a.?.grad += o0.val * (o0.grad - avg);
                        node.b.?.grad += o1.val * (o1.grad - avg);
                        node.c.?.grad += o2.val * (o2.grad - avg);
                        node.d.?.grad += o3.val * (o3.grad - avg);
                        i -= 3;
                    },
                    .leaf => unreachable, // the nodes past the inputs are all made by ops
                }
                i -= 1;
            }
        }

        /// This sample's loss, grad_in and grad_all (G3), each added in creation order.
        pub fn sums(self: *const Self) GraphSums {
            var loss: f64 = 0.0;
            var grad_in: f64 = 0.0;
            var grad_all: f64 = 0.0;
            for (self.nodes.items[0..self.count]) |node| loss += node.val;
            for (self.nodes.items[0..N_INPUTS], 0..) |node, i| grad_in += @as(f64, @floatFromInt(i + 1)) * node.grad;
            for (self.nodes.items[0..self.count]) |node| grad_all += node.grad;
            return .{ .loss = loss, .grad_in = grad_in, .grad_all = grad_all };
        }
    };
}
