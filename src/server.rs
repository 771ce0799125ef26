//! The server side (feature `ssr`): command line, configuration, HTTP wiring and lifecycle.
//! `main.rs` only parses the command line and hands over to [`cli::run`].

pub mod cli;
pub mod config;
pub mod http;
pub mod security;
