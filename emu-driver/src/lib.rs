//! emu-driver: the CUDA driver API implemented in host memory, installed as libcuda.so.1.
//!
//! The library's interface is its C exports (`exports.rs`); the Rust items public here
//! (`exec`, `image`, `abi`) are what its own tests and fuzz targets drive directly.
//!
//! Layering (each module uses only those of its own line or below it; a submodule named
//! on its own line sits apart from its parent; `tests/module_graph.rs` renders this list
//! and fails on any edge that points up):
//!
//! ```text
//! teardown         end of the process (ELF destructor): leaks at exit, the final counters
//! exports          every exported entry point, one table (C ABI, counting, EMU_CUDA_FAIL, cuGetProcAddress)
//! api              safe implementations, one module per API family
//! signals          fatal signals and the driver's own SIGSEGVs: report, counters file
//! counters_file    EMU_CUDA_COUNTS: the counters file, written whole, checkpoints
//! passthrough      EMU_CUDA_REAL: every entry forwarded to a real libcuda.so.1
//! queue            asynchronous work and when it runs (EMU_CUDA_ASYNC)
//! launch           validation and the run of a kernel on the executor
//! module::load, module::choose, module::ptx
//!                  binding images to kernel libraries: host twins or PTX mode
//! memory           allocations, copies, memsets on the tracker
//! trace            EMU_CUDA_TRACE: per launch, the hashes of what it could write
//! arena            EMU_CUDA_CHECKS=pointers: device memory out of host reach
//! state            contexts, handles, the tracker, context resolution
//! module           modules and functions as the driver keeps them (the data)
//! vmm              the virtual-memory API's memfds, reservations, mappings
//! callbacks        host functions of streams, on a driver thread of their own
//! boundary         typed views of C arguments (the crate's unsafe FFI edge)
//! exec             the SIMT executor (fibers, barriers, warp collectives)
//! texture          texture and surface objects and the sampler kernels call
//! image, registry  module-image parsers, kernel-library manifests
//! fork             what a forked child may do (atfork handlers, the child's flag)
//! counters, inject, log, config, profile, errors, symbols
//!                  leaves: what everything writes to or reads
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
pub(crate) mod counters_file;
/// The CUDA driver API's types, codes and structs (cuda.h), shared with the other crates.
pub(crate) use simtwin_abi::cuda as cu;
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
