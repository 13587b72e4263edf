//! simtwin's `libcudart.so.13`: the CUDA runtime API (cuda_runtime_api.h, and the
//! `__cuda*` registration and launch calls nvcc 13 generates) written from NVIDIA's public
//! headers and documentation, on the public driver API only.
//!
//! NVIDIA's runtime needs the driver's private export tables, which simtwin's driver does
//! not emulate; this one finds the driver with `dlopen("libcuda.so.1")` and
//! `cuGetProcAddress_v2`, so it runs on the emulated driver and on NVIDIA's alike. A
//! program linked against the runtime dynamically (`nvcc -cudart shared`) runs on simtwin
//! with `LD_LIBRARY_PATH=target/simtwin/lib`.
//!
//! Layers, top to bottom: `exports` (the C entry points; with `driver`, the only unsafe
//! code) -> `launch`, `memory`, `stream`, `device`, `texture`, `graph` (one area each) -> `registry` (what
//! nvcc's code registers; modules per device) -> `state` (initialisation, current device,
//! primary contexts) -> `error` (codes, the CUresult mapping, the last error) -> `driver`
//! (the dlopen'd function table). `device` and `launch` are public for the layout test
//! (their structs are the header's); the rest is reached only through the C entry points.

pub mod device;
mod driver;
mod error;
mod error_table;
mod exports;
mod graph;
pub mod launch;
mod memory;
mod registry;
mod state;
mod stream;
mod texture;
