//! Components more than one page uses.

pub mod loaded;

pub use loaded::Loaded;
