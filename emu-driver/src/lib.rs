//! emu-driver: the CUDA driver API implemented in host memory, installed as libcuda.so.1.
//!
//! Layout: `exports` is the one table of exported entry points; `api/` holds their
//! implementations per family; `state` the contexts, tracker and handles; `memory`,
//! `module`, `launch` the mechanisms; `exec` the SIMT executor; `image` the module image
//! parsers; `abi` the device runtime ABI shared with kernels-host libraries.

/// The device runtime ABI shared with kernels-host libraries.
pub use simtwin_abi::kernel as abi;
pub mod api;
pub mod config;
pub mod counters;
pub mod cu;
pub mod errors;
pub mod exec;
pub mod exports;
pub mod image;
pub mod launch;
pub mod log;
pub mod memory;
pub mod module;
pub mod profile;
pub mod registry;
pub mod state;
