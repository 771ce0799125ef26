//! adamviz's web application: the package cargo-leptos builds for both targets, the server
//! binary's (`ssr`, crate `adamviz-server`) and the browser bundle (`hydrate`, entry point
//! [`hydrate`]).
//!
//! Where things live: `app` is the HTML shell and the one list of pages; `ui/` holds the pages
//! and their components; `api/` holds the server functions, each of which authenticates,
//! authorizes and calls one use case of `adamviz-services` (this package cannot name the store:
//! it is not one of its dependencies).

// The pages' view types nest deeply (the draft form, the revision page).
#![recursion_limit = "256"]

pub mod api;
pub mod app;
pub mod ui;

/// Browser entry point: attaches the reactive system to the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
