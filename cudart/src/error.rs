//! cudaError_t: the codes, their names and strings, the mapping from the driver's CUresult,
//! and the per-thread last error (cudaGetLastError resets it, cudaPeekAtLastError does not).
//!
//! # CUresult -> cudaError_t
//!
//! cuda.h and driver_types.h number their codes alike: every CUresult whose number
//! driver_types.h also defines maps to that cudaError_t (CUDA_ERROR_INVALID_VALUE 1 ->
//! cudaErrorInvalidValue, CUDA_ERROR_OUT_OF_MEMORY 2 -> cudaErrorMemoryAllocation,
//! CUDA_ERROR_INVALID_HANDLE 400 -> cudaErrorInvalidResourceHandle, CUDA_ERROR_NOT_FOUND
//! 500 -> cudaErrorSymbolNotFound, CUDA_ERROR_ILLEGAL_ADDRESS 700 ->
//! cudaErrorIllegalAddress, ...; the test `every_driver_code_maps` checks the numbers
//! against both headers' names). The exceptions, in one table:
//!
//! | CUresult | cudaError_t | why |
//! |---|---|---|
//! | CUDA_ERROR_CONTEXT_ALREADY_CURRENT 202 | cudaErrorUnknown 999 | no runtime code; the runtime never pushes contexts |
//! | CUDA_ERROR_MULTICAST_RESOURCE_FULL 47, CUDA_ERROR_KEY_ROTATION 916 | cudaErrorUnknown 999 | no runtime code |
//! | (libcuda.so.1 missing or without cuGetProcAddress_v2) | cudaErrorInsufficientDriver 35 | as NVIDIA's runtime answers without a driver |
//! | (the driver lacks an entry point the call needs) | cudaErrorNotSupported 801 | named once on stderr |
//!
//! Per call, where the runtime's contract names a more specific code (the entry points
//! say so): an unknown host function -> cudaErrorInvalidResourceHandle 400 (as NVIDIA's
//! runtime answers on an H100; a launch's CUDA_ERROR_INVALID_VALUE stays
//! cudaErrorInvalidValue there too); an unknown symbol ->
//! cudaErrorInvalidSymbol 13; a bad cudaMemcpyKind -> cudaErrorInvalidMemcpyDirection 21;
//! a pitch narrower than the row -> cudaErrorInvalidPitchValue 12.

use std::cell::Cell;

use crate::driver::{CuResult, NO_DRIVER, NO_ENTRY};
use crate::error_table::RUNTIME;

/// cudaError_t.
pub type Error = i32;
/// A runtime call's outcome.
pub type Res<T> = Result<T, Error>;

pub const SUCCESS: Error = 0;
pub const INVALID_VALUE: Error = 1;
pub const INVALID_CONFIGURATION: Error = 9;
pub const INVALID_PITCH_VALUE: Error = 12;
pub const INVALID_SYMBOL: Error = 13;
pub const INVALID_MEMCPY_DIRECTION: Error = 21;
pub const INSUFFICIENT_DRIVER: Error = 35;
pub const INVALID_DEVICE_FUNCTION: Error = 98;
pub const NO_DEVICE: Error = 100;
pub const INVALID_DEVICE: Error = 101;
pub const INVALID_RESOURCE_HANDLE: Error = 400;
pub const NOT_SUPPORTED: Error = 801;
pub const UNKNOWN: Error = 999;

/// The cudaError_t for a driver result (the table above).
pub fn from_driver(r: CuResult) -> Error {
    match r {
        0 => SUCCESS,
        NO_DRIVER => INSUFFICIENT_DRIVER,
        NO_ENTRY => NOT_SUPPORTED,
        202 => UNKNOWN,
        r if RUNTIME.iter().any(|&(n, _, _)| n == r) => r,
        _ => UNKNOWN,
    }
}

/// Ok for CUDA_SUCCESS, else the mapped code.
pub fn check(r: CuResult) -> Res<()> {
    match from_driver(r) {
        SUCCESS => Ok(()),
        e => Err(e),
    }
}

/// cudaGetErrorName: the enumerator's name; None for a number the header does not define.
pub fn name(e: Error) -> Option<&'static str> {
    RUNTIME.iter().find(|&&(n, _, _)| n == e).map(|&(_, name, _)| name)
}

/// cudaGetErrorString: the common codes in the short wording programs print (and users
/// search for); every other code the first sentence of its description in driver_types.h.
pub fn description(e: Error) -> Option<&'static str> {
    let short = match e {
        0 => "no error",
        1 => "invalid argument",
        2 => "out of memory",
        3 => "initialization error",
        4 => "driver shutting down",
        9 => "invalid configuration argument",
        12 => "invalid pitch argument",
        13 => "invalid device symbol",
        16 => "invalid host pointer",
        17 => "invalid device pointer",
        21 => "invalid copy direction for memcpy",
        35 => "CUDA driver version is insufficient for CUDA runtime version",
        98 => "invalid device function",
        100 => "no CUDA-capable device is detected",
        101 => "invalid device ordinal",
        200 => "device kernel image is invalid",
        209 => "no kernel image is available for execution on the device",
        400 => "invalid resource handle",
        500 => "named symbol not found",
        600 => "device not ready",
        700 => "an illegal memory access was encountered",
        701 => "too many resources requested for launch",
        702 => "the launch timed out and was terminated",
        710 => "device-side assert triggered",
        716 => "misaligned address",
        719 => "unspecified launch failure",
        720 => "too many blocks in cooperative launch",
        801 => "operation not supported",
        999 => "unknown error",
        _ => "",
    };
    if !short.is_empty() {
        return Some(short);
    }
    RUNTIME.iter().find(|&&(n, _, _)| n == e).map(|&(_, _, d)| d)
}

thread_local! {
    static LAST: Cell<Error> = const { Cell::new(SUCCESS) };
}

/// Records a failed call's code as the thread's last error.
pub fn record(e: Error) {
    if e != SUCCESS {
        LAST.with(|l| l.set(e));
    }
}

/// cudaGetLastError: the last error, reset to cudaSuccess.
pub fn take_last() -> Error {
    LAST.with(|l| l.replace(SUCCESS))
}

/// cudaPeekAtLastError: the last error, kept.
pub fn peek_last() -> Error {
    LAST.with(Cell::get)
}

/// Names an exported entry point that answers cudaErrorNotSupported, once per name.
pub fn unsupported(what: &str) -> Error {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(what.to_string()) {
        eprintln!("simtwin libcudart: {what} is not supported (cudaErrorNotSupported)");
    }
    NOT_SUPPORTED
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_table::DRIVER;

    /// Every CUresult maps to the cudaError_t of the same number except the table's
    /// exceptions, and the two names agree on what the code means where we rely on it.
    #[test]
    fn every_driver_code_maps() {
        for &(n, dname) in DRIVER {
            let e = from_driver(n);
            if [47, 202, 916].contains(&n) {
                assert_eq!(e, UNKNOWN, "{dname}");
            } else {
                assert_eq!(e, n, "{dname} has no runtime code of its number");
            }
        }
        assert_eq!(name(from_driver(1)), Some("cudaErrorInvalidValue"));
        assert_eq!(name(from_driver(400)), Some("cudaErrorInvalidResourceHandle"));
        assert_eq!(name(from_driver(500)), Some("cudaErrorSymbolNotFound"));
        assert_eq!(name(from_driver(700)), Some("cudaErrorIllegalAddress"));
        assert_eq!(name(from_driver(719)), Some("cudaErrorLaunchFailure"));
        assert_eq!(name(INVALID_CONFIGURATION), Some("cudaErrorInvalidConfiguration"));
        assert_eq!(name(INVALID_DEVICE_FUNCTION), Some("cudaErrorInvalidDeviceFunction"));
        assert_eq!(name(INSUFFICIENT_DRIVER), Some("cudaErrorInsufficientDriver"));
        assert_eq!(name(INVALID_MEMCPY_DIRECTION), Some("cudaErrorInvalidMemcpyDirection"));
    }

    #[test]
    fn last_error_resets_on_get_not_on_peek() {
        record(INVALID_VALUE);
        assert_eq!(peek_last(), INVALID_VALUE);
        assert_eq!(take_last(), INVALID_VALUE);
        assert_eq!(take_last(), SUCCESS);
    }
}
