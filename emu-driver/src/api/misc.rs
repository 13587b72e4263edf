//! Error names and strings, cuGetProcAddress, the export-table refusal, profiler no-ops.

use super::out;
use crate::cu::*;
use crate::exports;
use crate::state::CuResult;
use std::ffi::{c_char, c_void, CStr};

pub fn get_error_name(code: CUresult, s: *mut *const c_char) -> CuResult {
    super::nonnull(s)?;
    match crate::errors::lookup(code) {
        Some(e) => out(s, e.1.as_ptr() as *const c_char),
        None => {
            out(s, std::ptr::null())?;
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    }
}

pub fn get_error_string(code: CUresult, s: *mut *const c_char) -> CuResult {
    super::nonnull(s)?;
    match crate::errors::lookup(code) {
        Some(e) => out(s, e.2.as_ptr() as *const c_char),
        None => {
            out(s, std::ptr::null())?;
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    }
}

/// Resolves a base name (as the CUDA headers write it, e.g. "cuMemAlloc") for the
/// requested CUDA version: the newest versioned export introduced at or before that
/// version, the plain name otherwise; with the per-thread-default-stream flag the
/// `_ptsz`/`_ptds` variant where one exists.
pub fn get_proc_address(symbol: *const c_char, pfn: *mut *mut c_void, version: i32, flags: u64, status: *mut i32) -> CuResult {
    super::nonnull(symbol)?;
    super::nonnull(pfn)?;
    if flags & !(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: NUL-terminated name per the API.
    let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy().into_owned();
    let set_status = |v: i32| {
        if !status.is_null() {
            // SAFETY: optional out-pointer.
            unsafe { *status = v };
        }
    };
    let mut chosen: Option<&str> = None;
    let mut too_new = false;
    for (export, base, since) in exports::VERSIONED {
        if *base == name {
            if version >= *since {
                chosen = Some(export);
            } else {
                too_new = true;
            }
        }
    }
    let resolved = chosen.map(str::to_string).or_else(|| exports::index_of(&name).map(|_| name.clone()));
    let Some(mut resolved) = resolved else {
        out(pfn, std::ptr::null_mut())?;
        set_status(if too_new { CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT } else { CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND });
        // With a status out-parameter (cuGetProcAddress_v2) the call itself succeeds and
        // the status says why (measured on an H200); without one, NOT_FOUND.
        return if status.is_null() { Err(CUDA_ERROR_NOT_FOUND) } else { Ok(()) };
    };
    if flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM != 0 {
        for suffix in ["_ptsz", "_ptds"] {
            let v = format!("{resolved}{suffix}");
            if exports::index_of(&v).is_some() {
                resolved = v;
                break;
            }
        }
    }
    let i = exports::index_of(&resolved).expect("resolved export exists");
    out(pfn, exports::address(i) as *mut c_void)?;
    set_status(CU_GET_PROC_ADDRESS_SUCCESS);
    Ok(())
}

pub fn get_export_table(_table: *mut *const c_void, _id: *const c_void) -> CuResult {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        crate::log_warn!(
            "cuGetExportTable: the CUDA runtime's private driver tables are not emulated; programs built on the runtime API (<<<>>>, cudaMalloc) are out of scope — use the driver API (cuModuleLoadData + cuLaunchKernel) as VMAF does"
        )
    });
    Err(CUDA_ERROR_NOT_SUPPORTED)
}

pub fn profiler_start_stop() -> CuResult {
    crate::state::driver()?;
    Ok(())
}
