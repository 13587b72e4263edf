//! emu-driver: the CUDA driver API implemented in host memory, installed as libcuda.so.1.
//!
//! The library's interface is its C exports (`exports.rs`); the Rust items public here
//! (`exec`, `image`, `abi`) are what its own tests and fuzz targets drive directly.
//!
//! Layering (each module uses only those below it; `tests/module_graph.rs` keeps it so):
//!
//! ```text
//! teardown, signals        end of the process: leaks, the counters file, fatal signals
//! exports                  the one table of exported entry points (C ABI, counting,
//!                          fault injection, cuGetProcAddress)
//! api/*                    safe implementations, one module per API family
//! launch                   validation and the run of a kernel on the executor
//! trace                    EMU_CUDA_TRACE: per launch, the hashes of what it could write
//! module, module::load     modules and functions; binding images to kernel libraries
//! memory                   allocations, copies, memsets on the tracker
//! arena                    EMU_CUDA_CHECKS=pointers: device memory out of host reach
//! state                    contexts, handles, the tracker, context resolution
//! vmm                      the virtual-memory API's memfds, reservations, mappings
//! boundary                 typed views of C arguments (the crate's unsafe FFI edge)
//! exec                     the SIMT executor (fibers, barriers, warp collectives)
//! texture                  texture and surface objects and the sampler kernels call
//! image, registry, profile module-image parsers, kernel-library manifests, device profiles
//! fork                     what a forked child may do (atfork handlers, the child's flag)
//! counters, inject, log,   leaves: what everything writes to or reads
//! config, errors, cu,
//! symbols
//! ```

#![warn(missing_docs)]

/// The device runtime ABI shared with kernels-host libraries.
pub use simtwin_abi::kernel as abi;

pub(crate) mod api;
pub(crate) mod arena;
pub(crate) mod boundary;
pub(crate) mod callbacks;
pub(crate) mod config;
pub(crate) mod counters;
pub(crate) mod cu;
pub(crate) mod errors;
pub mod exec;
pub(crate) mod exports;
pub(crate) mod fork;
pub mod image;
pub(crate) mod inject;
pub(crate) mod launch;
pub(crate) mod log;
pub(crate) mod memory;
pub(crate) mod module;
pub(crate) mod passthrough;
pub(crate) mod profile;
pub(crate) mod queue;
pub(crate) mod registry;
pub(crate) mod signals;
pub(crate) mod state;
pub(crate) mod symbols;
pub(crate) mod teardown;
pub(crate) mod texture;
pub(crate) mod trace;
pub(crate) mod vmm;
