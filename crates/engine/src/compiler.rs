//! The compiler: a confirmed spec becomes a deterministic, standalone R script. `r_syntax` is
//! the typed R syntax tree, `r_printer` its one printer (layout and escaping), and
//! `boxplot_script` builds the boxplot script's tree from the spec. The runner that executes
//! scripts lives in `runner/`.

pub mod boxplot_script;
pub mod r_printer;
pub mod r_syntax;
pub mod report_text;

pub use boxplot_script::{compile_boxplot_script, CompileError, CompiledScript, ImageSize};
