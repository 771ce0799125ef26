//! adamviz: governed clinical-trial plots. This is the module tree shared by the server binary
//! (`ssr`, see `main.rs`) and the browser bundle (`hydrate`, entry point [`hydrate`]).
//!
//! Where things live: `app` is the HTML shell and the one list of pages; `ui/` holds the pages and
//! components; `domain/` holds pure types shared with the browser;
//! `ingest/` (ssr) reads uploads; `compiler/` (ssr) turns confirmed specs into R scripts; `runner/` (ssr) runs them in a sandboxed R; `store/` (ssr) keeps them; `server/` (ssr) is the axum
//! wiring, the CLI and the configuration.

// The pages' view types nest deeply (the draft form, the revision page).
#![recursion_limit = "256"]

pub mod api;
pub mod app;
/// The engine (crate `adamviz-engine`): readers, compiler, runner, verifier.
#[cfg(feature = "ssr")]
pub use adamviz_engine::{compiler, ingest, question, runner};
/// The domain types (crate `adamviz-model`), under the name the code has always used.
pub use adamviz_model as domain;
pub mod provenance;
pub mod ui;

/// The evidence (crate `adamviz-evidence`): records, bundle format, the offline validator.
#[cfg(feature = "ssr")]
pub use adamviz_evidence as evidence;
#[cfg(feature = "ssr")]
pub mod server;
#[cfg(feature = "ssr")]
pub mod service;
/// The store (crate `adamviz-store`): SQLite, objects, ledger, audit, sessions.
#[cfg(feature = "ssr")]
pub use adamviz_store as store;
#[cfg(feature = "ssr")]
pub mod verify;

/// Browser entry point: attaches the reactive system to the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
