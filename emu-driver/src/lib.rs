//! emu-driver: the CUDA driver API implemented in host memory, installed as libcuda.so.1.
//!
//! Layering (each module uses only those below it; `tests/module_graph.rs` keeps it so):
//!
//! ```text
//! teardown, signals        end of the process: leaks, the counters file, fatal signals
//! exports                  the one table of exported entry points (C ABI, counting,
//!                          fault injection, cuGetProcAddress)
//! api/*                    safe implementations, one module per API family
//! launch                   validation and the run of a kernel on the executor
//! module, module::load     modules and functions; binding images to kernel libraries
//! memory                   allocations, copies, memsets on the tracker
//! state                    contexts, handles, the tracker, context resolution
//! boundary                 typed views of C arguments (the crate's unsafe FFI edge)
//! exec                     the SIMT executor (fibers, barriers, warp collectives)
//! image, registry, profile module-image parsers, kernel-library manifests, device profiles
//! counters, inject, log,   leaves: what everything writes to or reads
//! config, errors, cu
//! ```

pub use simtwin_abi::kernel as abi;

pub mod api;
pub mod boundary;
pub mod callbacks;
pub mod config;
pub mod counters;
pub mod cu;
pub mod errors;
pub mod exec;
pub mod exports;
pub mod image;
pub mod inject;
pub mod launch;
pub mod log;
pub mod memory;
pub mod module;
pub mod passthrough;
pub mod profile;
pub mod queue;
pub mod registry;
pub mod signals;
pub mod state;
pub mod teardown;
