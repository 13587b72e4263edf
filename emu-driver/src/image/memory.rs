//! Reading an image that is given only as a pointer (cuModuleLoadData takes no length).
//! This is the image parser's only unsafe code.
//!
//! The length is learnt from the image's own headers before anything past them is read.
//! Bytes are copied with `process_vm_readv` on the calling process, which answers EFAULT
//! for an unmapped page instead of faulting, so a wild pointer or a header that lies about
//! the size gives an error. Where the kernel refuses that call (seccomp, ENOSYS, EPERM)
//! the copy falls back to a plain read of exactly the bytes the headers allow.

use std::sync::atomic::{AtomicU8, Ordering};

use super::types::{le_u32, le_u64, sniff, Format, ImageError, MAX_IMAGE_BYTES, MAX_PTX_BYTES};
use super::{cubin, fatbin};

/// Pages are at least this large, so chunks aligned to it never straddle two pages.
const PAGE: usize = 4096;
/// Larger aligned chunks for scanning PTX for its NUL (retried page by page on EFAULT).
const SCAN_CHUNK: usize = 64 * 1024;

/// 0: not yet known, 1: process_vm_readv works, 2: it is refused here.
static CHECKED_COPY: AtomicU8 = AtomicU8::new(0);

enum Copy {
    Done,
    /// The memory is not readable.
    Fault,
}

/// Copies `dst.len()` bytes from `addr`.
///
/// # Safety
/// When the checked copy is unavailable the caller must know the range is readable.
unsafe fn copy_into(addr: usize, dst: &mut [u8]) -> Copy {
    if dst.is_empty() {
        return Copy::Done;
    }
    if CHECKED_COPY.load(Ordering::Relaxed) != 2 {
        let local = libc::iovec { iov_base: dst.as_mut_ptr().cast(), iov_len: dst.len() };
        let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: dst.len() };
        // SAFETY: `local` is our own writable buffer of that length; the remote range is
        // only read, by the kernel, which reports unmapped pages instead of faulting.
        let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
        if n == dst.len() as isize {
            CHECKED_COPY.store(1, Ordering::Relaxed);
            return Copy::Done;
        }
        let err = std::io::Error::last_os_error().raw_os_error();
        if n >= 0 || err == Some(libc::EFAULT) || CHECKED_COPY.load(Ordering::Relaxed) == 1 {
            return Copy::Fault;
        }
        // ENOSYS / EPERM: this process cannot use the checked copy.
        CHECKED_COPY.store(2, Ordering::Relaxed);
    }
    // SAFETY: the caller guarantees the range is readable (the image's headers say so).
    unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, dst.as_mut_ptr(), dst.len()) };
    Copy::Done
}

/// Copies exactly `len` bytes at `addr + off`.
///
/// # Safety
/// See [`copy_into`].
unsafe fn read_exact(addr: usize, off: u64, len: usize) -> Result<Vec<u8>, ImageError> {
    let start = usize::try_from(off)
        .ok()
        .and_then(|o| addr.checked_add(o))
        .filter(|s| s.checked_add(len).is_some())
        .ok_or_else(|| ImageError::Unreadable(format!("offset {off} wraps the address space")))?;
    let mut v = vec![0u8; len];
    // SAFETY: forwarded contract.
    match unsafe { copy_into(start, &mut v) } {
        Copy::Done => Ok(v),
        Copy::Fault => Err(ImageError::Unreadable(format!("{len} bytes at {start:#x} (image at {addr:#x} + {off}) are not readable"))),
    }
}

/// Copies up to `len` bytes at `addr`, stopping early at an unreadable page. Without the
/// checked copy, reads only within the first page (which holds `addr`, so is readable).
///
/// # Safety
/// `addr` must be readable.
unsafe fn read_prefix(addr: usize, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut a = addr;
    while out.len() < len {
        let chunk = (PAGE - a % PAGE).min(len - out.len());
        let mut buf = vec![0u8; chunk];
        // SAFETY: forwarded; in fallback mode only the first page is read, see below.
        match unsafe { copy_into(a, &mut buf) } {
            Copy::Done => out.extend_from_slice(&buf),
            Copy::Fault => break,
        }
        a += chunk;
        if CHECKED_COPY.load(Ordering::Relaxed) == 2 {
            break;
        }
    }
    out
}

/// The bytes of PTX text up to and including its NUL, at most [`MAX_PTX_BYTES`].
///
/// # Safety
/// The text must be readable up to its NUL.
unsafe fn read_text(addr: usize) -> Result<Vec<u8>, ImageError> {
    let mut out: Vec<u8> = Vec::new();
    let mut a = addr;
    while (out.len() as u64) < MAX_PTX_BYTES {
        let chunk = if CHECKED_COPY.load(Ordering::Relaxed) == 2 { PAGE } else { SCAN_CHUNK };
        let n = (chunk - a % chunk).min(MAX_PTX_BYTES as usize - out.len());
        let mut buf = vec![0u8; n];
        // SAFETY: forwarded contract; unchecked mode reads one page at a time and stops at
        // the page holding the NUL.
        let got = match unsafe { copy_into(a, &mut buf) } {
            Copy::Done => buf,
            // SAFETY: forwarded; page by page, stopping at the first unreadable one.
            Copy::Fault => unsafe { read_prefix(a, n) },
        };
        if let Some(z) = got.iter().position(|&b| b == 0) {
            out.extend_from_slice(&got[..=z]);
            return Ok(out);
        }
        out.extend_from_slice(&got);
        if got.len() < n {
            return Err(ImageError::Unreadable(format!(
                "text image at {addr:#x} runs into unreadable memory after {} bytes without a NUL",
                out.len()
            )));
        }
        a += n;
    }
    Err(ImageError::InvalidPtx(format!("no NUL within the first {MAX_PTX_BYTES} bytes of PTX")))
}

/// All bytes of the image at `ptr`, as far as its headers say it extends.
///
/// # Safety
/// See [`super::parse_ptr`].
pub(crate) unsafe fn image_bytes(ptr: *const u8) -> Result<Vec<u8>, ImageError> {
    // SAFETY: forwarded contract.
    unsafe { image_bytes_at(ptr as usize, true) }
}

unsafe fn image_bytes_at(addr: usize, follow_wrapper: bool) -> Result<Vec<u8>, ImageError> {
    if addr == 0 {
        return Err(ImageError::NullPointer);
    }
    // SAFETY: the caller's contract: `addr` is readable for as long as its headers say;
    // read_prefix stops at the first unreadable byte.
    let head = unsafe { read_prefix(addr, 4) };
    if head.is_empty() {
        return Err(ImageError::Unreadable(format!("image pointer {addr:#x} is not readable")));
    }
    match sniff(&head) {
        Format::Fatbin => {
            // SAFETY: as above; a fatbin header is 16 bytes.
            let h = unsafe { read_exact(addr, 0, 16)? };
            let total = fatbin::container_len(&h)?;
            // SAFETY: as above; `total` is the length the container header declares.
            unsafe { read_exact(addr, 0, total as usize) }
        }
        Format::Wrapper => {
            // SAFETY: as above; a fatbin wrapper is 24 bytes.
            let w = unsafe { read_exact(addr, 0, 24)? };
            let version = le_u32(&w, 4).unwrap_or(0);
            let data = le_u64(&w, 8).unwrap_or(0);
            if !(1..=2).contains(&version) {
                return Err(ImageError::Invalid(format!("fatbin wrapper version {version}")));
            }
            if !follow_wrapper {
                return Err(ImageError::Invalid("fatbin wrapper points at another wrapper".into()));
            }
            let data = usize::try_from(data).map_err(|_| ImageError::Invalid("wrapper data pointer".into()))?;
            if data == 0 {
                return Err(ImageError::Invalid("fatbin wrapper with a null data pointer".into()));
            }
            // SAFETY: the wrapper's data pointer is part of the image the caller vouched
            // for; read_prefix stops at the first unreadable byte.
            let inner = unsafe { read_prefix(data, 4) };
            if sniff(&inner) != Format::Fatbin {
                return Err(ImageError::Invalid(format!("fatbin wrapper's data at {data:#x} is not a fatbin (magic 0xba55ed50)")));
            }
            // SAFETY: as above, for the fatbin the wrapper points at.
            unsafe { image_bytes_at(data, false) }
        }
        Format::Linked => {
            // SAFETY: as above; lengths come from the container's headers, bounded by
            // MAX_IMAGE_BYTES.
            let mut read = |off: u64, len: usize| unsafe { read_exact(addr, off, len) };
            let len = super::linked::container_len(&mut read)?;
            // SAFETY: as above; `len` is the container's extent from its headers.
            unsafe { read_exact(addr, 0, len as usize) }
        }
        Format::Elf => {
            // SAFETY: as above; offsets and lengths come from the ELF headers, bounded by
            // MAX_IMAGE_BYTES.
            let mut read = |off: u64, len: usize| unsafe { read_exact(addr, off, len) };
            let len = cubin::elf_len(&mut read, MAX_IMAGE_BYTES)?;
            // SAFETY: as above; `len` is the ELF file's extent from its headers.
            unsafe { read_exact(addr, 0, len as usize) }
        }
        // SAFETY: as above; PTX text ends at its NUL byte.
        Format::Text => unsafe { read_text(addr) },
    }
}

/// Whether image memory is read through the checked copy here (else unreadable memory
/// named by a corrupt header faults, as it would in the real driver).
pub(crate) fn checked_reads() -> bool {
    if CHECKED_COPY.load(Ordering::Relaxed) == 0 {
        let probe = [0u8; 1];
        let mut out = [0u8; 1];
        // SAFETY: `probe` is a live local array.
        let _ = unsafe { copy_into(probe.as_ptr() as usize, &mut out) };
    }
    CHECKED_COPY.load(Ordering::Relaxed) == 1
}
