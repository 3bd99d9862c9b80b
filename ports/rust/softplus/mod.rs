// softplus/: the softplus workload's levels (the Codon program's softplus/ folder). This
// file only lists the folder's modules for rustc; the Codon program needs no such file.
// softplus/gpu.codon (level v5) is Codon-only GPU code: this port has no v5.
pub mod nodes;
pub mod naive;
pub mod pool;
pub mod tape;
pub mod fused;
pub mod simd;
pub mod threads;
