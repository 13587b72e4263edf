//! Error names and strings for cuGetErrorName / cuGetErrorString, from the one list of
//! result codes (`simtwin_abi::cuda::RESULTS`: cuda.h's names, the driver's descriptions).

use crate::cu::{CUresult, RESULTS};

/// (code, name, description) of a result code cuda.h defines, NUL-terminated.
pub fn lookup(code: CUresult) -> Option<&'static (CUresult, &'static str, Option<&'static str>)> {
    RESULTS.iter().find(|e| e.0 == code)
}

/// The name without its NUL, for messages.
pub fn name(code: CUresult) -> &'static str {
    lookup(code).map(|e| e.1.trim_end_matches('\0')).unwrap_or("CUDA_ERROR_UNRECOGNIZED")
}
