// The pointer-linked graph of levels v0 and v1, the seed's first design: each node
// knows its inputs, computes its value when asked (recomputing its whole subgraph
// every time), and pushes gradients to its inputs by recursion.
use std::cell::Cell;
use crate::core::ops::{softplus, sigmoid};

/// The softplus workload's op kinds, defined here once for every level (the tapes of
/// v2-v4 record Sum, Prod and Softplus).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Leaf,
    Sum,
    Prod,
    Softplus,
}

/// A graph node. Links are plain references: x feeds both s and p, so a node has
/// several readers, and every field is a Cell so that backward (and the v1 pool's
/// relinking) can write through those shared references.
pub struct Node<'a> {
    kind: Cell<Kind>,
    leaf_val: Cell<f64>, // the value of a LEAF; unused by the other kinds
    pub grad: Cell<f64>,
    a: Cell<Option<&'a Node<'a>>>, // inputs: none for a LEAF, `a` only for SOFTPLUS
    b: Cell<Option<&'a Node<'a>>>,
}

impl<'a> Node<'a> {
    pub fn new(kind: Kind, leaf_val: f64, a: Option<&'a Node<'a>>, b: Option<&'a Node<'a>>) -> Node<'a> {
        let node = Node {
            kind: Cell::new(Kind::Leaf),
            leaf_val: Cell::new(0.0),
            grad: Cell::new(0.0),
            a: Cell::new(None),
            b: Cell::new(None),
        };
        node.set(kind, leaf_val, a, b);
        node
    }

    /// (Re)make this node: used by the constructor and by the v1 pool.
    pub fn set(&self, kind: Kind, leaf_val: f64, a: Option<&'a Node<'a>>, b: Option<&'a Node<'a>>) {
        self.kind.set(kind);
        self.leaf_val.set(leaf_val);
        self.grad.set(0.0);
        self.a.set(a);
        self.b.set(b);
    }

    /// The node's value, recomputed from the leaves on every call. A leaf's is read where
    /// it is asked for (9 of a sample's 15 calls are on leaves); the other kinds recurse.
    #[inline(always)]
    pub fn value(&self) -> f64 {
        if self.kind.get() == Kind::Leaf {
            return self.leaf_val.get();
        }
        self.op_value()
    }

    /// value() of a node that is not a leaf.
    fn op_value(&self) -> f64 {
        // An op node always has its inputs; matching on them avoids any unwrap.
        match (self.kind.get(), self.a.get(), self.b.get()) {
            (Kind::Sum, Some(a), Some(b)) => a.value() + b.value(),
            (Kind::Prod, Some(a), Some(b)) => a.value() * b.value(),
            (Kind::Softplus, Some(a), _) => softplus(a.value()),
            _ => self.leaf_val.get(),
        }
    }

    /// Add g to this node's grad and recurse into its inputs (chain rule).
    #[inline(always)]
    pub fn backward(&self, g: f64) {
        self.grad.set(self.grad.get() + g);
        if self.kind.get() != Kind::Leaf {
            self.op_backward(g);
        }
    }

    /// backward()'s recursion into a node's inputs, for a node that is not a leaf.
    fn op_backward(&self, g: f64) {
        match (self.kind.get(), self.a.get(), self.b.get()) {
            (Kind::Sum, Some(a), Some(b)) => {
                a.backward(g);
                b.backward(g);
            }
            (Kind::Prod, Some(a), Some(b)) => {
                a.backward(b.value() * g);
                b.backward(a.value() * g);
            }
            (Kind::Softplus, Some(a), _) => a.backward(sigmoid(a.value()) * g),
            _ => {}
        }
    }
}
