//! EMU_CUDA_CHECKS=pointers: device memory in a reserved arena that host code cannot
//! touch, so that a host dereference of a device pointer faults, as it does with a
//! discrete GPU (where device memory is not mapped in the process at all).
//!
//! At cuInit the driver reserves one range of address space (inaccessible, nothing
//! committed). Device-side allocations (cuMemAlloc, cuMemAllocPitch, stream-ordered
//! allocations) are carved from it, each still between two guard pages with its
//! 256-byte-rounded end against the upper one. Their pages are a memfd mapped twice:
//!
//! - the *device view* at the device address, inaccessible except while a launch runs
//!   (a launch opens a [`Window`]: every live allocation is made read-write, and
//!   inaccessible again when the last running launch ends);
//! - the *host view*, a second read-write mapping elsewhere, through which the driver's
//!   own copies and memsets reach the memory ([`host_view`]) at any time.
//!
//! So host code outside a launch faults on a device pointer, kernels do not, and the
//! driver's copies do not need the window. Whether an address is a device address is a
//! lock-free range check ([`contains`]), usable from a signal handler; [`describe`] names
//! the allocation for the report.
//!
//! Limits: while a launch runs, every device allocation is accessible to every thread of
//! the process (page protection is per process, not per thread), so a host thread that
//! touches device memory during another thread's launch is not caught. Opening and
//! closing a window costs two `mprotect` calls per live device allocation per launch.
//! Freed address space is reused next-fit (after everything above it), so a stale
//! device pointer faults on the host as long as its range has not been handed out again.
//! Managed memory, pinned and registered host memory stay host-accessible (as on a
//! device), and so do module globals (they live in the kernel library's data segment).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

const PAGE: u64 = 4096;
/// Address space reserved at most / at least (halved until a reservation succeeds).
const RESERVE_MAX: u64 = 1 << 39;
const RESERVE_MIN: u64 = 1 << 34;

/// The reserved range [START, END); both 0 while the mode is off.
static START: AtomicU64 = AtomicU64::new(0);
static END: AtomicU64 = AtomicU64::new(0);

static ARENA: Mutex<Option<Arena>> = Mutex::new(None);

/// One device allocation in the arena.
struct Region {
    /// The whole slot, guard pages included.
    map_start: u64,
    mapped: u64,
    /// The device view's pages (between the guards).
    view: u64,
    usable: u64,
    /// The host view: the same pages, read-write, at another address.
    host: u64,
    /// The allocation as the program sees it.
    base: u64,
    size: u64,
    kind: &'static str,
}

struct Arena {
    free: FreeList,
    /// Live allocations by `map_start`.
    live: BTreeMap<u64, Region>,
    /// Launches running now: the device views are accessible while this is non-zero.
    open: usize,
}

fn lock() -> MutexGuard<'static, Option<Arena>> {
    ARENA.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reserves the arena (once per process); returns its size in bytes.
pub fn enable() -> Result<u64, String> {
    let mut g = lock();
    if g.is_some() {
        return Ok(END.load(Ordering::Acquire) - START.load(Ordering::Acquire));
    }
    let mut size = RESERVE_MAX;
    loop {
        // SAFETY: an anonymous inaccessible mapping at an address the kernel picks; no
        // existing memory is touched.
        let p = unsafe { reserve(std::ptr::null_mut(), size, 0) };
        if p != libc::MAP_FAILED {
            let start = p as u64;
            *g = Some(Arena { free: FreeList::new(start, size), live: BTreeMap::new(), open: 0 });
            START.store(start, Ordering::Release);
            END.store(start + size, Ordering::Release);
            return Ok(size);
        }
        if size <= RESERVE_MIN {
            return Err(format!("cannot reserve {size} bytes of address space for the device arena: {}", std::io::Error::last_os_error()));
        }
        size /= 2;
    }
}

/// # Safety
/// With `fixed`, [addr, addr+len) must be arena space the driver owns.
unsafe fn reserve(addr: *mut libc::c_void, len: u64, fixed: libc::c_int) -> *mut libc::c_void {
    // SAFETY: per the contract.
    unsafe { libc::mmap(addr, len as usize, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | fixed, -1, 0) }
}

/// Whether the mode is on.
pub fn enabled() -> bool {
    START.load(Ordering::Acquire) != 0
}

/// Whether `addr` lies in the arena (a device address, live or not). Lock-free:
/// callable from a signal handler.
pub fn contains(addr: u64) -> bool {
    let start = START.load(Ordering::Acquire);
    start != 0 && addr >= start && addr < END.load(Ordering::Acquire)
}

/// Maps a device allocation: a slot of `mapped` bytes (guards included) whose `usable`
/// pages start one page in; the allocation of `size` bytes starts `base_off` bytes into
/// the slot. Returns the slot's start, or None when the arena is full or the mapping
/// fails.
pub fn map(mapped: u64, usable: u64, base_off: u64, size: u64, kind: &'static str) -> Option<u64> {
    let mut g = lock();
    let a = g.as_mut()?;
    let map_start = a.free.take(mapped)?;
    let view = map_start + PAGE;
    let prot = if a.open > 0 { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_NONE };
    // SAFETY: a fresh memfd sized to the usable pages, mapped over arena space this
    // allocator just handed out (MAP_FIXED replaces only our own reservation) and once
    // more where the kernel picks; the descriptor is closed once both mappings hold it.
    let host = unsafe {
        let fd = libc::memfd_create(c"simtwin-device".as_ptr(), libc::MFD_CLOEXEC);
        let mut host = None;
        if fd >= 0 && libc::ftruncate(fd, usable as libc::off_t) == 0 {
            let v = libc::mmap(view as *mut libc::c_void, usable as usize, prot, libc::MAP_SHARED | libc::MAP_FIXED, fd, 0);
            if v != libc::MAP_FAILED {
                let h = libc::mmap(std::ptr::null_mut(), usable as usize, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0);
                if h != libc::MAP_FAILED {
                    host = Some(h as u64);
                }
            }
        }
        if fd >= 0 {
            libc::close(fd);
        }
        host
    };
    let Some(host) = host else {
        a.give_back(map_start, mapped);
        return None;
    };
    a.live.insert(map_start, Region { map_start, mapped, view, usable, host, base: map_start + base_off, size, kind });
    Some(map_start)
}

/// Unmaps the allocation whose slot starts at `map_start` and returns its address space
/// to the arena. False when there is no such allocation.
pub fn unmap(map_start: u64) -> bool {
    let mut g = lock();
    let Some(a) = g.as_mut() else { return false };
    let Some(r) = a.live.remove(&map_start) else { return false };
    a.give_back(r.map_start, r.mapped);
    true
}

/// The arena's free address space: next-fit (the search starts where the last one
/// ended, so freed space is reused only after everything above it), coalescing.
struct FreeList {
    /// Free ranges: start -> length.
    ranges: BTreeMap<u64, u64>,
    cursor: u64,
}

impl FreeList {
    fn new(start: u64, len: u64) -> FreeList {
        FreeList { ranges: BTreeMap::from([(start, len)]), cursor: start }
    }

    /// Takes `len` bytes.
    fn take(&mut self, len: u64) -> Option<u64> {
        let fits = |(&s, &l): (&u64, &u64)| (l >= len).then_some((s, l));
        let (s, l) = self.ranges.range(self.cursor..).find_map(fits).or_else(|| self.ranges.range(..self.cursor).find_map(fits))?;
        self.ranges.remove(&s);
        if l > len {
            self.ranges.insert(s + len, l - len);
        }
        self.cursor = s + len;
        Some(s)
    }

    /// Returns [start, start+len), merged with free neighbours.
    fn put(&mut self, start: u64, len: u64) {
        let (mut s, mut l) = (start, len);
        if let Some((&ps, &pl)) = self.ranges.range(..s).next_back() {
            if ps + pl == s {
                self.ranges.remove(&ps);
                s = ps;
                l += pl;
            }
        }
        if let Some(nl) = self.ranges.remove(&(start + len)) {
            l += nl;
        }
        self.ranges.insert(s, l);
    }
}

impl Arena {
    /// Makes [start, start+len) inaccessible arena space again and frees it.
    fn give_back(&mut self, start: u64, len: u64) {
        // SAFETY: the range is arena space this allocator handed out; replacing it with a
        // fresh reservation unmaps the device view (the host view is unmapped with its
        // region).
        unsafe { reserve(start as *mut libc::c_void, len, libc::MAP_FIXED) };
        self.free.put(start, len);
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the host view was mapped by `map` with exactly this start and length
        // and nothing else refers to it once the region is gone.
        unsafe { libc::munmap(self.host as *mut libc::c_void, self.usable as usize) };
    }
}

/// The address through which the driver reaches [ptr, ptr+len): the host view when the
/// range lies in one live device allocation's pages, `ptr` itself otherwise (host
/// memory, or the mode is off).
pub fn host_view(ptr: u64, len: u64) -> u64 {
    if !contains(ptr) {
        return ptr;
    }
    let g = lock();
    let Some(a) = g.as_ref() else { return ptr };
    match a.live.range(..=ptr).next_back().map(|(_, r)| r) {
        Some(r) if ptr >= r.view && ptr.saturating_add(len) <= r.view + r.usable => r.host + (ptr - r.view),
        _ => ptr,
    }
}

/// While a launch runs: the device views are accessible (kernels dereference device
/// pointers directly). Dropping it ends the launch's access.
pub struct Window(());

/// Opens a window for a launch (None while the mode is off).
pub fn window() -> Option<Window> {
    if !enabled() {
        return None;
    }
    let mut g = lock();
    let a = g.as_mut()?;
    a.open += 1;
    if a.open == 1 {
        a.protect(libc::PROT_READ | libc::PROT_WRITE);
    }
    Some(Window(()))
}

impl Drop for Window {
    fn drop(&mut self) {
        let mut g = lock();
        if let Some(a) = g.as_mut() {
            a.open = a.open.saturating_sub(1);
            if a.open == 0 {
                a.protect(libc::PROT_NONE);
            }
        }
    }
}

impl Arena {
    fn protect(&self, prot: libc::c_int) {
        for r in self.live.values() {
            // SAFETY: the device view of a live region, mapped by `map` with this length.
            let rc = unsafe { libc::mprotect(r.view as *mut libc::c_void, r.usable as usize, prot) };
            if rc != 0 {
                crate::log_error!(
                    "EMU_CUDA_CHECKS=pointers: mprotect of the device allocation at {:#x} failed: {}",
                    r.base,
                    std::io::Error::last_os_error()
                );
            }
        }
    }
}

/// Where a device address lies, for a report: the allocation (kind, size, base) and the
/// offset, or that no live allocation holds it. Takes the arena lock only if it is free
/// within about `patience`, so that a report from a stuck process still comes out.
pub fn describe(addr: u64, patience: std::time::Duration) -> String {
    let start = START.load(Ordering::Acquire);
    let deadline = std::time::Instant::now() + patience;
    let g = loop {
        match ARENA.try_lock() {
            Ok(g) => break Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => break Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            Err(_) => break None,
        }
    };
    let Some(g) = g else {
        return format!("in the device arena (offset {:#x}; the allocation table is busy)", addr - start);
    };
    let hit = g.as_ref().and_then(|a| a.live.range(..=addr).next_back().map(|(_, r)| r)).filter(|r| addr < r.map_start + r.mapped);
    match hit {
        Some(r) => {
            let off = addr as i128 - r.base as i128;
            let where_ = if off < 0 {
                "before its start"
            } else if off as u64 >= r.size {
                "past its end"
            } else {
                "inside it"
            };
            format!("offset {off} ({where_}) of the {} allocation of {} bytes at {:#x}", r.kind, r.size, r.base)
        }
        None => format!("in the device arena but in no live allocation (freed, or never allocated; arena offset {:#x})", addr - start),
    }
}

#[cfg(test)]
mod tests {
    use super::FreeList;

    #[test]
    fn free_space_is_taken_next_fit_and_coalesced() {
        let mut f = FreeList::new(0x1000, 0x10000);
        let a = f.take(0x3000).unwrap();
        let b = f.take(0x2000).unwrap();
        assert_eq!((a, b), (0x1000, 0x4000));
        // Freed space is not reused while there is room above the cursor.
        f.put(a, 0x3000);
        assert_eq!(f.take(0x1000), Some(0x6000));
        // Too big for anything: None.
        assert_eq!(f.take(0x20000), None);
        // Past the end it wraps to the freed space at the bottom.
        assert_eq!(f.take(0xa000), Some(0x7000));
        assert_eq!(f.take(0x2000), Some(0x1000));
        // Neighbours merge: freeing everything leaves one range again.
        for (s, l) in [(0x1000, 0x2000), (0x4000, 0x2000), (0x6000, 0x1000), (0x7000, 0xa000)] {
            f.put(s, l);
        }
        assert_eq!(f.ranges.len(), 1, "{:?}", f.ranges);
        assert_eq!(f.ranges.get(&0x1000), Some(&0x10000));
    }
}
