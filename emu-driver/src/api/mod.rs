//! The implementations behind the exported entry points, one module per API family.
//! Every function is safe Rust: the export table (`exports.rs`) converts the C
//! arguments into the typed views of `boundary` before calling in.

pub mod context;
pub mod device;
pub mod graph;
pub mod library;
pub mod link;
pub mod memory;
pub mod misc;
pub mod module;
pub mod stream;
pub mod texture;
pub mod vmm;
