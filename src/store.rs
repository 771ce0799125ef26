//! Storage (ssr only): the content-addressed object store under the data directory. The SQLite
//! repository joins it here.

pub mod objects;
