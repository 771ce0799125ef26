//! Pages and components of the browser interface. Each page is a module; the router that mounts
//! them is `crate::app`. Pages hold no I/O of their own: data comes through server functions.

pub mod admin;
pub mod auth;
pub mod components;
pub mod datasets;
pub mod drafts;
pub mod evidence;
pub mod history;
pub mod home;
pub mod layout;
pub mod not_found;
pub mod preview;
pub mod review;
pub mod revisions;
pub mod sets;
