// graph/: the graph workload's levels (the Codon program's graph/ folder). This file only
// lists the folder's modules for rustc; the Codon program needs no such file.
pub mod recipe;
pub mod nodes;
pub mod objects;
pub mod pool;
pub mod tape;
pub mod lanes;
pub mod simd;
pub mod threads;
