//! The implementations behind the exported entry points, one module per API family.
//! Every function takes the C arguments as given and returns `CuResult`; the exports
//! table (exports.rs) wraps each into its `extern "C"` symbol.

pub mod context;
pub mod device;
pub mod memory;
pub mod misc;
pub mod module;
pub mod stream;

use crate::cu::*;
use crate::state::CuResult;

/// Writes through an out-pointer, refusing null as the real driver does.
pub(crate) fn out<T>(p: *mut T, v: T) -> CuResult {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: non-null out-pointer supplied by the caller per the API contract.
    unsafe { p.write_unaligned(v) };
    Ok(())
}

pub(crate) fn nonnull<T>(p: *const T) -> CuResult {
    if p.is_null() {
        Err(CUDA_ERROR_INVALID_VALUE)
    } else {
        Ok(())
    }
}
