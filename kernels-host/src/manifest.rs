//! The manifest written next to each kernel library (`<stem>.simtwin.json`): the types
//! are the shared contract of `simtwin_abi::manifest` (schema `simtwin-kernels/2`).

pub use simtwin_abi::manifest::{DeviceMath, Entry, Global, Manifest, ManifestError, SCHEMA, SUFFIX};
