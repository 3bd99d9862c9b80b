// core/: what both workloads share (the Codon program's core/ folder). This file only
// lists the folder's modules for rustc; the Codon program needs no such file. The Codon
// program's core/target.codon (what the build is for) has no file here: vmath takes WIDTH
// from rustc's target features and TARGET from AUTOGRAD_TARGET. core/cuda.codon is
// Codon-only GPU code.
pub mod rng;
pub mod ops;
pub mod vmath;
pub mod threads;
