//! Shared by the image tests: an image placed flush against an inaccessible page, so a
//! parser that reads one byte past what the headers allow faults.

use cuda::image::{parse_ptr, Image, ImageError, Target};

const PAGE: usize = 4096;

/// Readable pages holding `data` flush against a PROT_NONE guard page.
pub struct Guarded {
    base: *mut u8,
    len: usize,
    pub start: *const u8,
}

impl Guarded {
    pub fn new(data: &[u8]) -> Self {
        let pages = data.len().div_ceil(PAGE).max(1);
        let len = (pages + 1) * PAGE;
        // SAFETY: a fresh anonymous mapping owned by this value; the copy stays inside it.
        unsafe {
            let m =
                libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
            assert_ne!(m, libc::MAP_FAILED);
            let base = m as *mut u8;
            assert_eq!(libc::mprotect(base.add(pages * PAGE).cast(), PAGE, libc::PROT_NONE), 0);
            let start = base.add(pages * PAGE - data.len());
            std::ptr::copy_nonoverlapping(data.as_ptr(), start, data.len());
            Guarded { base, len, start }
        }
    }

    pub fn parse(&self, target: Target) -> Result<Image, ImageError> {
        // SAFETY: the mapping is alive; parse_ptr must stay within what is readable.
        unsafe { parse_ptr(self.start, target) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}
