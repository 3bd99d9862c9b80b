// cli/: the command line and the output (the Codon program's cli/ folder). This file only
// lists the folder's modules for rustc; the Codon program needs no such file.
pub mod args;
pub mod output;
