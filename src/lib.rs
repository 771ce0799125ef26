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
pub mod domain;
pub mod provenance;
pub mod ui;

#[cfg(feature = "ssr")]
pub mod compiler;
#[cfg(feature = "ssr")]
pub mod evidence;
#[cfg(feature = "ssr")]
pub mod ingest;
#[cfg(feature = "ssr")]
pub mod runner;
#[cfg(feature = "ssr")]
pub mod server;
#[cfg(feature = "ssr")]
pub mod service;
#[cfg(feature = "ssr")]
pub mod store;
#[cfg(feature = "ssr")]
pub mod verify;

/// Browser entry point: attaches the reactive system to the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
