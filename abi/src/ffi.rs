//! Small C helpers shared by the crates that cross the C boundary.

use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;

/// Copies a NUL-terminated C string (lossily, as UTF-8); null gives "".
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that stays valid during the call.
pub unsafe fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated per the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// What the dynamic loader knows about an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DlInfo {
    /// The object file holding the address.
    pub file: PathBuf,
    /// The nearest exported symbol at or below the address, and its start.
    pub symbol: Option<(String, usize)>,
}

/// `dladdr(addr)`: the object holding `addr` and the nearest symbol. The address is
/// only looked up in the loader's tables, never dereferenced.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn dl_info(addr: *const c_void) -> Option<DlInfo> {
    // SAFETY: Dl_info is plain data; zeroed is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables and writes `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 {
        return None;
    }
    // SAFETY: the loader's strings are NUL-terminated and live while the object is loaded.
    let file = PathBuf::from(unsafe { c_str(info.dli_fname) });
    let symbol = if info.dli_sname.is_null() {
        None
    } else {
        // SAFETY: as above.
        Some((unsafe { c_str(info.dli_sname) }, info.dli_saddr as usize))
    };
    Some(DlInfo { file, symbol })
}

/// The exported symbol that starts exactly at `addr` (mangled for C++), if any.
pub fn symbol_at(addr: *const c_void) -> Option<String> {
    match dl_info(addr)?.symbol {
        Some((name, start)) if start == addr as usize => Some(name),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_strings_and_symbols() {
        assert_eq!(unsafe { c_str(std::ptr::null()) }, "");
        assert_eq!(unsafe { c_str(c"abc".as_ptr()) }, "abc");
        let f = libc::malloc as *const c_void;
        let info = dl_info(f).expect("libc is loaded");
        assert!(info.file.to_string_lossy().contains("libc"), "{info:?}");
        assert_eq!(symbol_at(f).as_deref(), Some("malloc"));
        assert_eq!(symbol_at((f as usize + 1) as *const c_void), None);
    }
}
