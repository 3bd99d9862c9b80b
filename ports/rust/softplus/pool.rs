// Level v1 (pool): the v0 graph, but its nodes come from a fixed pool allocated once
// and relinked every iteration, so the loop allocates nothing. Values are still
// recomputed on demand (the seed's v1).
use crate::core::rng::sample;
use crate::core::ops::Sums;
use super::nodes::{Kind, Node};

const POOL_SIZE: usize = 5; // x, y, s, p, f

/// The pool borrows its nodes rather than owning them: nodes that link to each other
/// by reference must live in storage that outlives the pool (Rust has no
/// self-referential owners without unsafe code).
struct Pool<'a> {
    nodes: &'a [Node<'a>],
    used: usize,
}

impl<'a> Pool<'a> {
    fn new(nodes: &'a [Node<'a>]) -> Pool<'a> {
        Pool { nodes, used: 0 }
    }

    fn reset(&mut self) {
        self.used = 0;
    }

    /// The next free node, remade as (kind, leaf_val, a, b).
    fn take(&mut self, kind: Kind, leaf_val: f64, a: Option<&'a Node<'a>>, b: Option<&'a Node<'a>>) -> &'a Node<'a> {
        let node = &self.nodes[self.used];
        self.used += 1;
        node.set(kind, leaf_val, a, b);
        node
    }
}

pub fn run_v1(seed: u64, n: u64) -> Sums {
    let storage: Vec<Node> = (0..POOL_SIZE).map(|_| Node::new(Kind::Leaf, 0.0, None, None)).collect();
    let mut pool = Pool::new(&storage);
    let (mut sum_f, mut sum_dx, mut sum_dy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (xv, yv) = sample(seed, i);
        pool.reset();
        let x = pool.take(Kind::Leaf, xv, None, None);
        let y = pool.take(Kind::Leaf, yv, None, None);
        let s = pool.take(Kind::Sum, 0.0, Some(x), Some(y));
        let p = pool.take(Kind::Prod, 0.0, Some(s), Some(x));
        let f = pool.take(Kind::Softplus, 0.0, Some(p), None);
        f.backward(1.0);
        sum_f += f.value();
        sum_dx += x.grad.get();
        sum_dy += y.grad.get();
    }
    Sums { f: sum_f, dx: sum_dx, dy: sum_dy }
}
