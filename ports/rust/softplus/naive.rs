// Level v0 (naive): fresh heap nodes every iteration, linked by pointers; values are
// recomputed on demand and backward recurses through the graph.
//
// Each node is a Box (malloc and free), the links &Node references.
use crate::core::rng::sample;
use crate::core::ops::Sums;
use super::nodes::{Kind, Node};

pub fn run_v0(seed: u64, n: u64) -> Sums {
    let (mut sum_f, mut sum_dx, mut sum_dy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (xv, yv) = sample(seed, i);
        let x = Box::new(Node::new(Kind::Leaf, xv, None, None));
        let y = Box::new(Node::new(Kind::Leaf, yv, None, None));
        let s = Box::new(Node::new(Kind::Sum, 0.0, Some(&*x), Some(&*y)));
        let p = Box::new(Node::new(Kind::Prod, 0.0, Some(&*s), Some(&*x)));
        let f = Box::new(Node::new(Kind::Softplus, 0.0, Some(&*p), None));
        f.backward(1.0);
        sum_f += f.value();
        sum_dx += x.grad.get();
        sum_dy += y.grad.get();
    } // the five boxes are freed here, every iteration
    Sums { f: sum_f, dx: sum_dx, dy: sum_dy }
}
