//! The pointer-only loader on bytes placed right before an inaccessible page: whatever
//! the headers claim, it must return (an error) instead of reading past the buffer.
#![no_main]
use cuda::image::{parse_ptr, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    const PAGE: usize = 4096;
    let pages = data.len().div_ceil(PAGE).max(1);
    // SAFETY: a fresh private mapping; the last page is made inaccessible as a guard.
    unsafe {
        let len = (pages + 1) * PAGE;
        let m = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE,
                           libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        assert_ne!(m, libc::MAP_FAILED);
        let base = m as *mut u8;
        libc::mprotect(base.add(pages * PAGE).cast(), PAGE, libc::PROT_NONE);
        let start = base.add(pages * PAGE - data.len());
        std::ptr::copy_nonoverlapping(data.as_ptr(), start, data.len());
        let _ = parse_ptr(start, Target { sm: 90 });
        libc::munmap(m, len);
    }
});
