//! Fault injection (EMU_CUDA_FAIL=NAME:K[,NAME:K...]): the K-th call of entry point NAME
//! fails with a code a real driver gives for that kind of call, and does nothing else.
//! Lets a host program's error paths be tested call site by call site (`parity faults`).

use crate::cu::*;

/// The code an injected failure of `name` answers: what a real driver answers when such
/// a call fails for reasons outside the program's control.
pub fn realistic_code(name: &str) -> CUresult {
    let has = |s: &str| name.contains(s);
    if name == "cuInit" {
        CUDA_ERROR_NO_DEVICE
    } else if has("Alloc")
        || has("HostRegister")
        || has("CtxCreate")
        || has("PrimaryCtxRetain")
        || has("StreamCreate")
        || has("EventCreate")
        || has("PoolCreate")
    {
        CUDA_ERROR_OUT_OF_MEMORY
    } else if has("ModuleLoad") {
        CUDA_ERROR_NO_BINARY_FOR_GPU
    } else if has("LaunchKernel") {
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    } else if has("Memcpy")
        || has("Memset")
        || has("Synchronize")
        || has("StreamWaitEvent")
        || has("EventRecord")
        || has("EventQuery")
        || has("StreamQuery")
    {
        // What a program sees after an earlier kernel faulted.
        CUDA_ERROR_ILLEGAL_ADDRESS
    } else if has("DeviceGet") && !has("Attribute") {
        CUDA_ERROR_INVALID_DEVICE
    } else {
        CUDA_ERROR_UNKNOWN
    }
}

/// The code to answer for call `nth` (1-based) of `name`, when the EMU_CUDA_FAIL list
/// `fail` names it.
pub fn check(fail: &[(String, u64)], name: &str, nth: u64) -> Option<CUresult> {
    fail.iter().any(|(n, k)| n == name && *k == nth).then(|| realistic_code(name))
}

/// Parses EMU_CUDA_FAIL; the error names the bad part.
pub fn parse(spec: &str) -> Result<Vec<(String, u64)>, String> {
    spec.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (n, k) = p.trim().rsplit_once(':').ok_or_else(|| format!("{p}: expected NAME:K"))?;
            let k: u64 = k.parse().map_err(|_| format!("{p}: K must be a positive integer"))?;
            if k == 0 || n.is_empty() || !n.starts_with("cu") {
                return Err(format!("{p}: expected an entry point name (cu...) and K >= 1"));
            }
            Ok((n.to_string(), k))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_picks_realistic_codes() {
        assert_eq!(parse("cuMemAlloc_v2:3, cuLaunchKernel:1").unwrap(), vec![("cuMemAlloc_v2".into(), 3), ("cuLaunchKernel".into(), 1)]);
        assert!(parse("cuMemAlloc_v2").is_err());
        assert!(parse("cuMemAlloc_v2:0").is_err());
        assert!(parse("foo:1").is_err());
        assert_eq!(realistic_code("cuMemAlloc_v2"), CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(realistic_code("cuMemHostAlloc"), CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(realistic_code("cuModuleLoadData"), CUDA_ERROR_NO_BINARY_FOR_GPU);
        assert_eq!(realistic_code("cuLaunchKernel"), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
        assert_eq!(realistic_code("cuMemcpyDtoHAsync_v2"), CUDA_ERROR_ILLEGAL_ADDRESS);
        assert_eq!(realistic_code("cuInit"), CUDA_ERROR_NO_DEVICE);
        assert_eq!(realistic_code("cuDeviceGet"), CUDA_ERROR_INVALID_DEVICE);
    }
}
