//! simtwin's cross-process contracts, each defined once:
//!
//! - [`kernel`]: the device runtime ABI between a kernel library built by kernels-host
//!   and the executor inside the emulated driver (Rust mirror of
//!   `kernels-host/include/simtwin/abi.h`, layout-checked against it by a test).
//! - [`manifest`]: the `<stem>.simtwin.json` file kernels-host writes beside each
//!   library and the driver reads to bind module images.
//! - [`counters`]: the counters file the driver writes (`EMU_CUDA_COUNTS`) and parity
//!   reads.
//! - [`trace`]: the launch trace the driver writes (`EMU_CUDA_TRACE`) and
//!   `parity bisect` reads.
//! - [`cuda`]: the CUDA driver API's result codes, types and structs as the pinned
//!   toolkit's cuda.h defines them (values and layouts checked against it by a test).
//! - [`ffi`]: the two C helpers every crate of the workspace needs (C strings, dladdr).
//! - [`files`]: what kind of file a path is, in words, for the errors of those that read
//!   or write only regular files.
//! - [`linked`]: the linked image the emulated JIT linkers (the driver's cuLink*, the
//!   libnvJitLink.so.13 shim) write and the driver loads.

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod counters;
pub mod cuda;
pub mod devrt;
pub mod ffi;
pub mod files;
pub mod kernel;
pub mod linked;
pub mod manifest;
pub mod trace;

/// Name of the data symbol the emulated driver exports so that tools can tell it from a
/// real libcuda.so.1 (`dlsym(handle, EMULATED_DRIVER_SYMBOL)`).
pub const EMULATED_DRIVER_SYMBOL: &str = "simtwin_emulated_driver";
/// The marker's contents (NUL-padded to 32 bytes in the library).
pub const EMULATED_DRIVER_MARKER: &str = "simtwin emulated libcuda.so.1";
