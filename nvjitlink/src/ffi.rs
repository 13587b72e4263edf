//! The C boundary, and the only unsafe code of the crate: the exported entry points, the
//! handle table, pointer checks, and catching panics (none crosses into the caller: a
//! panic answers NVJITLINK_ERROR_INTERNAL).
//!
//! Every entry point is exported under its plain name (`nvJitLinkCreate`, what
//! cuda-bindings resolves with dlsym) and under each versioned name the header's inline
//! wrappers call (`__nvJitLinkCreate_13_0` .. `_13_5`), all with the ELF symbol version
//! `libnvJitLink.so.13` (the `.symver` lines below; the node is defined by exports.map).
//!
//! A handle is a number the table knows, never a pointer into this library: a stale or
//! foreign handle answers NVJITLINK_ERROR_INVALID_INPUT instead of touching freed memory.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::link::{code, version, Failure, Linker, Options};

/// nvJitLinkHandle: an opaque pointer-sized value.
type Handle = *mut c_void;

struct Table {
    next: usize,
    links: HashMap<usize, Linker>,
}

fn table() -> MutexGuard<'static, Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    let t = TABLE.get_or_init(|| Mutex::new(Table { next: 1, links: HashMap::new() }));
    t.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `f`, answering NVJITLINK_ERROR_INTERNAL if it panics.
fn guard(f: impl FnOnce() -> i32) -> i32 {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(code::INTERNAL)
}

/// Runs `f` on the link `h` names: NULL_INPUT for a null handle, INVALID_INPUT for one
/// the table does not hold.
fn with_link(h: Handle, f: impl FnOnce(&mut Linker) -> i32) -> i32 {
    guard(|| {
        if h.is_null() {
            return code::NULL_INPUT;
        }
        let mut t = table();
        match t.links.get_mut(&(h as usize)) {
            Some(l) => f(l),
            None => code::INVALID_INPUT,
        }
    })
}

/// The string at `p`, lossily decoded; None for null.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
unsafe fn text(p: *const c_char) -> Option<String> {
    // SAFETY: the caller promises a NUL-terminated string when `p` is not null.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Writes `v` through `out`.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, v: T) -> i32 {
    if out.is_null() {
        return code::NULL_INPUT;
    }
    // SAFETY: not null, and the caller promises it is writable.
    unsafe { out.write(v) };
    code::SUCCESS
}

/// Copies `bytes` to `out`, and a terminating NUL after them when `nul`.
///
/// # Safety
/// `out` is null or valid for `bytes.len() + nul` bytes (the size the matching
/// `...Size` call answered).
unsafe fn copy_out(out: *mut c_void, bytes: &[u8], nul: bool) -> i32 {
    if out.is_null() {
        return code::NULL_INPUT;
    }
    let out = out.cast::<u8>();
    // SAFETY: the caller sized the buffer by the matching size call, which counts these
    // bytes and the NUL; the buffer cannot overlap our own storage.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
        if nul {
            out.add(bytes.len()).write(0);
        }
    }
    code::SUCCESS
}

/// An output of a completed link (or the logs), sized or copied.
fn answer(l: &mut Linker, r: Result<Vec<u8>, Failure>, f: impl FnOnce(&[u8]) -> i32) -> i32 {
    match r {
        Ok(b) => f(&b),
        Err(e) => l.record(e),
    }
}

/// nvJitLinkCreate: a link with `n` options.
///
/// # Safety
/// `handle` is null or writable; `options` is null or holds `n` pointers, each null or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkCreate(handle: *mut Handle, n: u32, options: *const *const c_char) -> i32 {
    guard(|| {
        if handle.is_null() {
            return code::NULL_INPUT;
        }
        // SAFETY: checked not null; the caller promises it is writable.
        unsafe { handle.write(std::ptr::null_mut()) };
        if n > 0 && options.is_null() {
            return code::NULL_INPUT;
        }
        let mut opts = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            // SAFETY: `options` holds `n` pointers, each null or a C string.
            match unsafe { text(*options.add(i)) } {
                Some(s) => opts.push(s),
                None => return code::NULL_INPUT,
            }
        }
        let options = match Options::parse(&opts) {
            Ok(o) => o,
            Err(f) => {
                // No handle comes back, so no log can be read: say it on stderr.
                eprintln!("simtwin nvJitLink: {}", f.message);
                return f.code;
            }
        };
        let mut t = table();
        let id = t.next << 4;
        t.next += 1;
        t.links.insert(id, Linker::new(options));
        // SAFETY: as above.
        unsafe { handle.write(id as Handle) };
        code::SUCCESS
    })
}

/// nvJitLinkDestroy: frees the link and nulls the caller's handle.
///
/// # Safety
/// `handle` is null or points to a handle.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkDestroy(handle: *mut Handle) -> i32 {
    guard(|| {
        if handle.is_null() {
            return code::NULL_INPUT;
        }
        // SAFETY: not null; the caller promises it points to a handle.
        let h = unsafe { handle.read() };
        if h.is_null() {
            return code::NULL_INPUT;
        }
        if table().links.remove(&(h as usize)).is_none() {
            return code::INVALID_INPUT;
        }
        // SAFETY: as above.
        unsafe { handle.write(std::ptr::null_mut()) };
        code::SUCCESS
    })
}

/// nvJitLinkAddData: `size` bytes at `data`, of type `kind`, named `name` (may be null).
///
/// # Safety
/// `data` is null or readable for `size` bytes; `name` is null or a C string.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkAddData(h: Handle, kind: u32, data: *const c_void, size: usize, name: *const c_char) -> i32 {
    with_link(h, |l| {
        if data.is_null() {
            return code::NULL_INPUT;
        }
        // SAFETY: the caller promises a C string or null.
        let name = unsafe { text(name) }.unwrap_or_else(|| "(unnamed input)".into());
        // SAFETY: not null; the caller promises `size` readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
        match l.add(kind, bytes, &name) {
            Ok(()) => code::SUCCESS,
            Err(f) => l.record(f),
        }
    })
}

/// nvJitLinkAddFile: the file at `path`, of type `kind`.
///
/// # Safety
/// `path` is null or a C string.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkAddFile(h: Handle, kind: u32, path: *const c_char) -> i32 {
    with_link(h, |l| {
        // SAFETY: the caller promises a C string or null.
        let Some(path) = (unsafe { text(path) }) else { return code::NULL_INPUT };
        let r = std::fs::read(&path)
            .map_err(|e| Failure { code: code::INVALID_INPUT, message: format!("{path}: cannot be read: {e}") })
            .and_then(|b| l.add(kind, &b, &path));
        match r {
            Ok(()) => code::SUCCESS,
            Err(f) => l.record(f),
        }
    })
}

/// nvJitLinkComplete: links what was added.
///
/// # Safety
/// None beyond a handle from nvJitLinkCreate (any other value is answered, not used).
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkComplete(h: Handle) -> i32 {
    with_link(h, |l| match l.complete() {
        Ok(()) => code::SUCCESS,
        Err(f) => l.record(f),
    })
}

/// nvJitLinkGetLinkedCubinSize.
///
/// # Safety
/// `size` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetLinkedCubinSize(h: Handle, size: *mut usize) -> i32 {
    with_link(h, |l| {
        let r = l.cubin().map(<[u8]>::to_vec);
        // SAFETY: the caller promises `size` is null or writable.
        answer(l, r, |b| unsafe { put(size, b.len()) })
    })
}

/// nvJitLinkGetLinkedCubin: copies the linked image.
///
/// # Safety
/// `cubin` is null or writable for the size nvJitLinkGetLinkedCubinSize answered.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetLinkedCubin(h: Handle, cubin: *mut c_void) -> i32 {
    with_link(h, |l| {
        let r = l.cubin().map(<[u8]>::to_vec);
        // SAFETY: the caller sized the buffer by nvJitLinkGetLinkedCubinSize.
        answer(l, r, |b| unsafe { copy_out(cubin, b, false) })
    })
}

/// nvJitLinkGetLinkedPtxSize: the linked PTX's length with its terminating NUL.
///
/// # Safety
/// `size` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetLinkedPtxSize(h: Handle, size: *mut usize) -> i32 {
    with_link(h, |l| {
        let r = l.ptx().map(|t| t.as_bytes().to_vec());
        // SAFETY: the caller promises `size` is null or writable.
        answer(l, r, |b| unsafe { put(size, b.len() + 1) })
    })
}

/// nvJitLinkGetLinkedPtx: copies the linked PTX and its NUL.
///
/// # Safety
/// `ptx` is null or writable for the size nvJitLinkGetLinkedPtxSize answered.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetLinkedPtx(h: Handle, ptx: *mut c_char) -> i32 {
    with_link(h, |l| {
        let r = l.ptx().map(|t| t.as_bytes().to_vec());
        // SAFETY: the caller sized the buffer by nvJitLinkGetLinkedPtxSize.
        answer(l, r, |b| unsafe { copy_out(ptx.cast(), b, true) })
    })
}

/// nvJitLinkGetLinkedLTOIRSize: simtwin produces no LTO-IR (an error, logged).
///
/// # Safety
/// `size` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetLinkedLTOIRSize(h: Handle, size: *mut usize) -> i32 {
    with_link(h, |l| {
        let r = l.ltoir().map(<[u8]>::to_vec);
        // SAFETY: the caller promises `size` is null or writable.
        answer(l, r, |b| unsafe { put(size, b.len()) })
    })
}

/// nvJitLinkGetLinkedLTOIR: as nvJitLinkGetLinkedLTOIRSize.
///
/// # Safety
/// `ltoir` is null or writable for the size nvJitLinkGetLinkedLTOIRSize answered.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetLinkedLTOIR(h: Handle, ltoir: *mut c_void) -> i32 {
    with_link(h, |l| {
        let r = l.ltoir().map(<[u8]>::to_vec);
        // SAFETY: the caller sized the buffer by nvJitLinkGetLinkedLTOIRSize.
        answer(l, r, |b| unsafe { copy_out(ltoir, b, false) })
    })
}

/// nvJitLinkGetErrorLogSize: the error log's length with its terminating NUL.
///
/// # Safety
/// `size` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetErrorLogSize(h: Handle, size: *mut usize) -> i32 {
    // SAFETY: the caller promises `size` is null or writable.
    with_link(h, |l| unsafe { put(size, l.error_log().len() + 1) })
}

/// nvJitLinkGetErrorLog: copies the error log and its NUL.
///
/// # Safety
/// `log` is null or writable for the size nvJitLinkGetErrorLogSize answered.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetErrorLog(h: Handle, log: *mut c_char) -> i32 {
    // SAFETY: the caller sized the buffer by nvJitLinkGetErrorLogSize.
    with_link(h, |l| unsafe { copy_out(log.cast(), l.error_log().as_bytes(), true) })
}

/// nvJitLinkGetInfoLogSize: the info log's length with its terminating NUL.
///
/// # Safety
/// `size` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetInfoLogSize(h: Handle, size: *mut usize) -> i32 {
    // SAFETY: the caller promises `size` is null or writable.
    with_link(h, |l| unsafe { put(size, l.info_log().len() + 1) })
}

/// nvJitLinkGetInfoLog: copies the info log and its NUL.
///
/// # Safety
/// `log` is null or writable for the size nvJitLinkGetInfoLogSize answered.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkGetInfoLog(h: Handle, log: *mut c_char) -> i32 {
    // SAFETY: the caller sized the buffer by nvJitLinkGetInfoLogSize.
    with_link(h, |l| unsafe { copy_out(log.cast(), l.info_log().as_bytes(), true) })
}

/// nvJitLinkVersion: 12.2 (`link::VERSION` says why), or what SIMTWIN_NVJITLINK_VERSION
/// says.
///
/// # Safety
/// `major` and `minor` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn nvJitLinkVersion(major: *mut u32, minor: *mut u32) -> i32 {
    guard(|| {
        if major.is_null() || minor.is_null() {
            return code::NULL_INPUT;
        }
        let (ma, mi) = version();
        // SAFETY: both checked not null; the caller promises they are writable.
        unsafe {
            major.write(ma);
            minor.write(mi)
        };
        code::SUCCESS
    })
}

// The version node and the versioned aliases. Each entry point keeps its plain name
// (default version libnvJitLink.so.13) and gains `__<name>_13_<m>` for m in 0..=5, the
// names the header's inline wrappers of CUDA 13.0 .. 13.5 call.
macro_rules! versioned {
    ($($f:literal),* $(,)?) => {
        std::arch::global_asm!($(
            concat!(".symver ", $f, ", ", $f, "@@libnvJitLink.so.13"),
            concat!(".symver ", $f, ", __", $f, "_13_0@@libnvJitLink.so.13"),
            concat!(".symver ", $f, ", __", $f, "_13_1@@libnvJitLink.so.13"),
            concat!(".symver ", $f, ", __", $f, "_13_2@@libnvJitLink.so.13"),
            concat!(".symver ", $f, ", __", $f, "_13_3@@libnvJitLink.so.13"),
            concat!(".symver ", $f, ", __", $f, "_13_4@@libnvJitLink.so.13"),
            concat!(".symver ", $f, ", __", $f, "_13_5@@libnvJitLink.so.13"),
        )*);
    };
}

versioned!(
    "nvJitLinkCreate",
    "nvJitLinkDestroy",
    "nvJitLinkAddData",
    "nvJitLinkAddFile",
    "nvJitLinkComplete",
    "nvJitLinkGetLinkedCubinSize",
    "nvJitLinkGetLinkedCubin",
    "nvJitLinkGetLinkedPtxSize",
    "nvJitLinkGetLinkedPtx",
    "nvJitLinkGetLinkedLTOIRSize",
    "nvJitLinkGetLinkedLTOIR",
    "nvJitLinkGetErrorLogSize",
    "nvJitLinkGetErrorLog",
    "nvJitLinkGetInfoLogSize",
    "nvJitLinkGetInfoLog",
);
std::arch::global_asm!(".symver nvJitLinkVersion, nvJitLinkVersion@@libnvJitLink.so.13");
