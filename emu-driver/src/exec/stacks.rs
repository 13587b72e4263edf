//! Fiber stacks, mapped a chunk at a time.
//!
//! Every suspended CUDA thread holds a stack, and a cooperative grid sized by the
//! device's occupancy (132 SMs x 2048 threads) keeps hundreds of thousands of them
//! suspended at its grid barrier at once. A stack mapped on its own with a guard page
//! below it costs the process two memory mappings (the guard's protection splits the
//! region), and Linux allows 65 530 per process (`vm.max_map_count`): about 32 000
//! suspended threads. So stacks are carved from chunks of [`PER_CHUNK`], each one
//! mapping, with the guard pages installed by `madvise(MADV_GUARD_INSTALL)` (Linux 6.13),
//! which does not split it. Where the kernel lacks it, the guard pages are made with
//! `mprotect` as before (two mappings a stack). Either way the lowest page of every stack
//! faults, so an overflow is reported as one (`fault::fault_failure`).

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// Stacks per chunk: 16 stacks of the default 256 KiB are 4 MiB of address space,
/// touched only where frames are written.
pub(crate) const PER_CHUNK: usize = 16;
const PAGE: usize = 4096;
/// `MADV_GUARD_INSTALL` (include/uapi/asm-generic/mman-common.h, Linux 6.13): accesses to
/// the range fault as on PROT_NONE, without a new mapping.
const MADV_GUARD_INSTALL: libc::c_int = 102;

/// Whether `MADV_GUARD_INSTALL` works here: 0 not tried yet, 1 yes, 2 no.
static LIGHT_GUARDS: AtomicU8 = AtomicU8::new(0);

/// One stack: `[limit, limit + PAGE)` is its guard page, frames grow down from `base`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FiberStack {
    pub limit: usize,
    pub base: usize,
}

/// The chunks of one fiber pool; unmapped together when the pool retires its fibers
/// (fibers are never freed one by one).
pub(crate) struct StackChunks {
    chunks: Vec<(usize, usize)>,
    /// Stacks handed out from the last chunk.
    used: usize,
    stride: usize,
}

impl StackChunks {
    pub fn new() -> Self {
        StackChunks { chunks: Vec::new(), used: PER_CHUNK, stride: 0 }
    }

    /// A stack of `size` usable bytes (rounded up to pages) below a guard page. Every
    /// stack of a pool has the same size (`FiberPool::set_stack_size` retires the rest).
    pub fn take(&mut self, size: usize) -> Result<FiberStack, String> {
        let stride = size.next_multiple_of(PAGE) + PAGE;
        if stride != self.stride {
            self.stride = stride;
            self.used = PER_CHUNK;
        }
        if self.used == PER_CHUNK {
            self.map_chunk()?;
        }
        let (start, _) = *self.chunks.last().expect("a chunk was just mapped");
        let limit = start + self.used * stride;
        self.used += 1;
        Ok(FiberStack { limit, base: limit + stride })
    }

    fn map_chunk(&mut self) -> Result<(), String> {
        let len = self.stride * PER_CHUNK;
        // SAFETY: a fresh anonymous mapping; nothing else refers to it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "cannot map {len} bytes for {PER_CHUNK} fiber stacks: {} (threads suspended at once need a stack each; EMU_CUDA_STACK sets its size)",
                std::io::Error::last_os_error()
            ));
        }
        let start = p as usize;
        self.chunks.push((start, len));
        self.used = 0;
        for i in 0..PER_CHUNK {
            if let Err(e) = guard(start + i * self.stride) {
                return Err(format!("cannot make a fiber stack's guard page: {e}"));
            }
        }
        Ok(())
    }

    /// Unmaps every chunk: only when no fiber uses its stack any more.
    pub fn release_all(&mut self) {
        for (start, len) in self.chunks.drain(..) {
            // SAFETY: mapped by `map_chunk` with this length; its fibers are dropped.
            unsafe { libc::munmap(start as *mut libc::c_void, len) };
        }
        self.used = PER_CHUNK;
    }

    /// Whether guard pages are installed without splitting the chunk's mapping.
    #[cfg(test)]
    pub fn light_guards() -> bool {
        LIGHT_GUARDS.load(Relaxed) == 1
    }
}

impl Drop for StackChunks {
    fn drop(&mut self) {
        self.release_all();
    }
}

/// Makes the page at `at` fault on any access.
fn guard(at: usize) -> std::io::Result<()> {
    if LIGHT_GUARDS.load(Relaxed) != 2 {
        // SAFETY: `at` is a page of a private anonymous mapping of ours.
        if unsafe { libc::madvise(at as *mut libc::c_void, PAGE, MADV_GUARD_INSTALL) } == 0 {
            LIGHT_GUARDS.store(1, Relaxed);
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Err(e);
        }
        // An older kernel: the advice is unknown.
        LIGHT_GUARDS.store(2, Relaxed);
    }
    // SAFETY: as above.
    if unsafe { libc::mprotect(at as *mut libc::c_void, PAGE, libc::PROT_NONE) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this process can read the byte at `addr` (process_vm_readv on itself: an
    /// unreadable page answers EFAULT instead of faulting).
    fn readable(addr: usize) -> bool {
        let mut b = 0u8;
        let local = libc::iovec { iov_base: (&mut b as *mut u8).cast(), iov_len: 1 };
        let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: 1 };
        // SAFETY: reads one byte into `b`; the kernel checks the remote address.
        unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) == 1 }
    }

    fn mappings() -> usize {
        std::fs::read_to_string("/proc/self/maps").unwrap().lines().count()
    }

    #[test]
    fn every_stack_has_a_guard_page_and_a_chunk_is_one_mapping_where_the_kernel_allows() {
        let mut c = StackChunks::new();
        let before = mappings();
        let stacks: Vec<FiberStack> = (0..PER_CHUNK).map(|_| c.take(64 * 1024).unwrap()).collect();
        for s in &stacks {
            assert_eq!(s.base - s.limit, 64 * 1024 + PAGE);
            assert!(!readable(s.limit) && !readable(s.limit + PAGE - 1), "guard page of {s:?}");
            assert!(readable(s.limit + PAGE) && readable(s.base - 1), "stack of {s:?}");
        }
        let added = mappings() as isize - before as isize;
        if StackChunks::light_guards() {
            // One mapping (or none: merged with a neighbour of the same protection).
            assert!(added <= 1, "{added} mappings for one chunk");
        } else {
            assert!(added <= 2 * PER_CHUNK as isize, "{added}");
        }
        c.release_all();
        assert!(mappings() <= before, "the chunk is unmapped");
    }

    #[test]
    fn a_new_size_starts_a_new_chunk() {
        let mut c = StackChunks::new();
        let a = c.take(16 * 1024).unwrap();
        let b = c.take(32 * 1024).unwrap();
        assert_eq!(b.base - b.limit, 32 * 1024 + PAGE);
        assert!(b.limit >= a.base || b.base <= a.limit, "no overlap: {a:?} {b:?}");
    }
}
