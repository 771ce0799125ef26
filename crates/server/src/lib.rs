//! The `adamviz` server: the HTTP layer (router, middleware, security headers, the page guard),
//! the configuration and the command line. `main.rs` is the composition root: it reads the
//! configuration, opens the database and the object store, builds the services and hands them
//! to the router.

pub mod cli;
pub mod client_address;
pub mod config;
pub mod http;
pub mod locations;
pub mod security;
pub mod sessions;
pub mod shutdown;
