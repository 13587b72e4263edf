//! Where a running block's shared memory is, for the checking modes (`EMU_CUDA_CHECKS`):
//! static `__shared__` variables are thread-locals of the kernel library (kernels-host
//! turns them into `static thread_local`), so on a worker they fill the library's TLS
//! block, found from the kernel's code address (`dl_iterate_phdr` gives the library's
//! TLS module, `__tls_get_addr` the worker thread's block); dynamic shared memory is the
//! worker's buffer the executor hands to the block (`ctx->dyn_smem`).
//!
//! Poisoning fills both with [`POISON`] bytes before each block starts, so reads of
//! shared memory the block did not write show (0xFF bytes: a float or double reads as
//! NaN, a signed integer as -1, an unsigned one as its maximum).

use crate::symbols;

/// The byte poisoned shared memory is filled with.
pub const POISON: u8 = 0xFF;

/// Which part of shared memory an address is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Region {
    /// Static `__shared__` variables (the library's TLS block on this worker).
    Static,
    /// `extern __shared__` memory sized at launch.
    Dynamic,
}

/// The shared memory of the blocks a worker runs in one launch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ranges {
    /// Static shared memory: start and length on this worker (0 when none).
    pub stat: (usize, usize),
    /// Dynamic shared memory: start and length.
    pub dynamic: (usize, usize),
    /// The kernel library (for naming static variables in reports).
    pub library: Option<std::path::PathBuf>,
}

impl Ranges {
    /// The ranges of a launch of the kernel whose code is at `code` (any address in its
    /// library), on the calling OS thread, with `dyn_len` bytes of dynamic shared memory
    /// at `dyn_start`; its static shared memory is the library's thread-local block where
    /// `shared_in_tls` (a twin), else part of the window (PTX mode: none here).
    pub fn locate(code: usize, shared_in_tls: bool, dyn_start: usize, dyn_len: usize) -> Ranges {
        let obj = symbols::object_of(code);
        let stat = obj
            .as_ref()
            .filter(|_| shared_in_tls)
            .and_then(|o| o.tls)
            .and_then(|(modid, len)| symbols::tls_block(modid).map(|p| (p as usize, len)))
            .unwrap_or((0, 0));
        Ranges { stat, dynamic: (dyn_start, dyn_len), library: obj.map(|o| o.path) }
    }

    /// The region and offset of `addr`, if it is shared memory.
    #[inline(always)]
    pub fn find(&self, addr: usize) -> Option<(Region, usize)> {
        let d = addr.wrapping_sub(self.dynamic.0);
        if d < self.dynamic.1 {
            return Some((Region::Dynamic, d));
        }
        let s = addr.wrapping_sub(self.stat.0);
        if s < self.stat.1 {
            return Some((Region::Static, s));
        }
        None
    }

    /// Fills both regions with [`POISON`].
    pub fn poison(&self) {
        for (start, len) in [self.stat, self.dynamic] {
            if len > 0 {
                // SAFETY: both ranges are memory of this worker for the running launch:
                // the library's TLS block of this thread and the executor's buffer.
                unsafe { std::ptr::write_bytes(start as *mut u8, POISON, len) };
            }
        }
    }
}
