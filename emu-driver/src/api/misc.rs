//! Error names and strings, the export-table refusal, profiler no-ops. (cuGetProcAddress
//! is served by the export table itself, `exports.rs`.)

use crate::boundary::{CuResult, Out};
use crate::cu::*;
use std::ffi::c_char;

pub fn get_error_name(code: CUresult, s: Out<*const c_char>) -> CuResult {
    s.required()?;
    match crate::errors::lookup(code) {
        Some(e) => s.set(e.1.as_ptr() as *const c_char),
        None => {
            s.set(std::ptr::null())?;
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    }
}

pub fn get_error_string(code: CUresult, s: Out<*const c_char>) -> CuResult {
    s.required()?;
    // A code whose description is not recorded answers as an unknown one.
    match crate::errors::lookup(code).and_then(|e| e.2) {
        Some(d) => s.set(d.as_ptr() as *const c_char),
        None => {
            s.set(std::ptr::null())?;
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    }
}

pub fn get_export_table() -> CuResult {
    warn_export_tables();
    Err(CUDA_ERROR_NOT_SUPPORTED)
}

/// Said once per process, whether the program calls cuGetExportTable or looks it up
/// through cuGetProcAddress (the CUDA runtime does; it then fails its first call with
/// "API call is not supported in the installed CUDA driver", which names nothing).
pub fn warn_export_tables() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        crate::log_warn!(
            "cuGetExportTable: the driver's private tables are not emulated. NVRTC asks for one and goes on without it (harmless); NVIDIA's CUDA runtime needs them, so a program linked with it statically (nvcc's default, -cudart static) cannot run here: build it with `-cudart shared` (CMake: CUDA_RUNTIME_LIBRARY Shared) and it runs on simtwin's own libcudart.so.13 (runtime API: <<<>>>, cudaMalloc) from the same directory as this libcuda.so.1"
        )
    });
}

pub fn profiler_start_stop() -> CuResult {
    crate::state::driver()?;
    Ok(())
}
