//! The virtual-memory API's host side: physical allocations are memfds, address
//! reservations are inaccessible anonymous mappings, and mapping a physical allocation
//! into a reservation maps its memfd there (`MAP_SHARED | MAP_FIXED`), so the same
//! memory is visible at every address it is mapped at. Access flags are page
//! protections: a mapping starts inaccessible (`PROT_NONE`) until cuMemSetAccess.
//!
//! A physical allocation lives while a handle to it is unreleased or a mapping of it
//! exists (the kernel keeps a memfd's pages while any mapping holds them, whatever
//! happens to the descriptor). Exported as a POSIX file descriptor it is a duplicate of
//! the memfd, which another process can receive (SCM_RIGHTS) and import; the memfd's
//! name carries the properties the importer reads back.
//!
//! This module keeps the records and makes the system calls; `api::vmm` holds the rules
//! (what the driver accepts, in what order) and the allocation tracker's view.

use crate::boundary::CuResult;
use crate::cu::*;
use std::collections::BTreeMap;

/// The prefix of every memfd this driver creates for a physical allocation (shown in
/// /proc/PID/maps and `ls -l /proc/PID/fd`).
const NAME: &str = "simtwin-vmm";

/// A physical allocation (cuMemCreate, or imported).
#[derive(Debug)]
pub struct Physical {
    /// The memfd (owned: closed when the allocation goes).
    pub fd: i32,
    pub size: u64,
    /// The properties as cuMemGetAllocationPropertiesFromHandle reports them.
    pub prop: Props,
    /// Unreleased handle references (create, import and retain each add one).
    pub refs: u32,
    /// Live mappings of it.
    pub maps: u32,
    /// Imported from a descriptor (its memory is counted where it was created).
    pub imported: bool,
}

/// What a physical allocation keeps of its properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Props {
    pub handle_types: i32,
    /// CUmemLocationType and id of the memory: a device, or host memory (reported as
    /// CU_MEM_LOCATION_TYPE_HOST_NUMA, node 0, as on an H200).
    pub location: i32,
    pub device: i32,
    pub compression: u8,
    pub rdma: u8,
    pub usage: u16,
}

/// A reserved range of addresses (cuMemAddressReserve).
#[derive(Debug)]
pub struct Reservation {
    pub size: u64,
}

/// A physical allocation mapped into a reservation (cuMemMap).
#[derive(Debug)]
pub struct Mapping {
    pub size: u64,
    /// The physical allocation's id.
    pub physical: u64,
    /// CUmemAccess_flags for device 0.
    pub access: i32,
    /// Unique over the process's lifetime (CU_POINTER_ATTRIBUTE_BUFFER_ID).
    pub id: u64,
}

/// The virtual-memory API's records.
#[derive(Default, Debug)]
pub struct Vmm {
    pub physical: BTreeMap<u64, Physical>,
    /// By start address.
    pub reservations: BTreeMap<u64, Reservation>,
    /// By start address.
    pub mappings: BTreeMap<u64, Mapping>,
}

impl Vmm {
    /// The reservation holding [va, va+size), with its start.
    pub fn reservation_of(&self, va: u64, size: u64) -> Option<(u64, &Reservation)> {
        let (&start, r) = self.reservations.range(..=va).next_back()?;
        let end = va.checked_add(size)?;
        (end <= start + r.size).then_some((start, r))
    }

    /// The mapping holding `va`, with its start.
    pub fn mapping_at(&self, va: u64) -> Option<(u64, &Mapping)> {
        let (&start, m) = self.mappings.range(..=va).next_back()?;
        (va < start + m.size).then_some((start, m))
    }

    /// Whether any mapping overlaps [va, va+size).
    pub fn any_mapped(&self, va: u64, size: u64) -> bool {
        let end = va.saturating_add(size);
        self.mapping_at(va).is_some() || self.mappings.range(va..end).next().is_some()
    }

    /// The mappings that exactly tile [va, va+size) (starts in order), or None when a
    /// byte of the range is unmapped.
    pub fn tiling(&self, va: u64, size: u64) -> Option<Vec<u64>> {
        let end = va.checked_add(size)?;
        let mut at = va;
        let mut starts = Vec::new();
        while at < end {
            let m = self.mappings.get(&at)?;
            starts.push(at);
            at += m.size;
        }
        (at == end).then_some(starts)
    }
}

fn errno_is(e: i32) -> bool {
    std::io::Error::last_os_error().raw_os_error() == Some(e)
}

/// A memfd of `size` bytes whose name records `p` (read back by [`describe`]).
pub fn create_memfd(size: u64, p: &Props) -> CuResult<i32> {
    let name = format!(
        "{NAME} ht={} loc={} dev={} comp={} rdma={} usage={}\0",
        p.handle_types, p.location, p.device, p.compression, p.rdma, p.usage
    );
    // SAFETY: a NUL-terminated name; memfd_create touches no memory of ours.
    let fd = unsafe { libc::memfd_create(name.as_ptr().cast(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    // SAFETY: our own fresh descriptor.
    if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
        close(fd);
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    Ok(fd)
}

/// Closes a descriptor this module owns.
pub fn close(fd: i32) {
    // SAFETY: closing a descriptor the caller owns and no longer uses.
    unsafe { libc::close(fd) };
}

/// The size of an open descriptor's file.
pub fn file_size(fd: i32) -> Option<u64> {
    // SAFETY: fstat writes one struct stat, zero-initialised here.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_size as u64)
}

/// The properties a memfd of this driver carries in its name; None for any other
/// descriptor (not a memfd, or someone else's).
pub fn describe(fd: i32) -> Option<Props> {
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let link = link.to_string_lossy();
    let rest = link.strip_prefix("/memfd:")?.strip_prefix(NAME)?;
    let rest = rest.strip_suffix(" (deleted)").unwrap_or(rest);
    let mut p = Props { handle_types: 0, location: 0, device: 0, compression: 0, rdma: 0, usage: 0 };
    for kv in rest.split_whitespace() {
        let (k, v) = kv.split_once('=')?;
        match k {
            "ht" => p.handle_types = v.parse().ok()?,
            "loc" => p.location = v.parse().ok()?,
            "dev" => p.device = v.parse().ok()?,
            "comp" => p.compression = v.parse().ok()?,
            "rdma" => p.rdma = v.parse().ok()?,
            "usage" => p.usage = v.parse().ok()?,
            _ => return None,
        }
    }
    Some(p)
}

/// A duplicate of `fd` (close-on-exec as `cloexec` says), or None.
pub fn dup(fd: i32, cloexec: bool) -> Option<i32> {
    let cmd = if cloexec { libc::F_DUPFD_CLOEXEC } else { libc::F_DUPFD };
    // SAFETY: duplicating a descriptor; no memory is touched.
    let d = unsafe { libc::fcntl(fd, cmd, 0) };
    (d >= 0).then_some(d)
}

/// Reserves `size` bytes of address space aligned to `align` (a power of two), at
/// `hint` when that range is free and aligned; returns the start.
pub fn reserve(size: u64, align: u64, hint: u64) -> CuResult<u64> {
    if hint != 0 && hint.is_multiple_of(align) {
        // SAFETY: MAP_FIXED_NOREPLACE maps only where nothing is mapped (it fails
        // otherwise); an inaccessible anonymous mapping.
        let p = unsafe {
            libc::mmap(hint as *mut libc::c_void, size as usize, libc::PROT_NONE, reserve_flags() | libc::MAP_FIXED_NOREPLACE, -1, 0)
        };
        if p != libc::MAP_FAILED {
            if p as u64 == hint {
                return Ok(hint);
            }
            // An old kernel that ignores the flag placed it elsewhere: undo.
            // SAFETY: the mapping just made.
            unsafe { libc::munmap(p, size as usize) };
        } else if !errno_is(libc::EEXIST) && !errno_is(libc::EINVAL) && !errno_is(libc::EPERM) {
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
    }
    let span = size.checked_add(align).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    // SAFETY: an inaccessible anonymous mapping where the kernel chooses.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), span as usize, libc::PROT_NONE, reserve_flags(), -1, 0) };
    if p == libc::MAP_FAILED {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    let start = p as u64;
    let aligned = start.next_multiple_of(align);
    // Trim the slack before and after the aligned range.
    // SAFETY: both pieces lie inside the mapping just made.
    unsafe {
        if aligned > start {
            libc::munmap(p, (aligned - start) as usize);
        }
        let tail = start + span - (aligned + size);
        if tail > 0 {
            libc::munmap((aligned + size) as *mut libc::c_void, tail as usize);
        }
    }
    Ok(aligned)
}

fn reserve_flags() -> libc::c_int {
    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE
}

/// Gives back a reservation's address space.
pub fn free(va: u64, size: u64) {
    // SAFETY: [va, va+size) is a reservation this module made, with nothing of anyone
    // else's mapped in it (the caller removed its mappings).
    unsafe { libc::munmap(va as *mut libc::c_void, size as usize) };
}

/// Maps `size` bytes of memfd `fd` from `offset` at `va` (inside a reservation),
/// inaccessible.
pub fn map(va: u64, size: u64, fd: i32, offset: u64) -> CuResult {
    // SAFETY: MAP_FIXED replaces only pages of a reservation of ours that the caller
    // checked are unmapped; the memfd is ours and at least offset+size long.
    let p = unsafe {
        libc::mmap(va as *mut libc::c_void, size as usize, libc::PROT_NONE, libc::MAP_SHARED | libc::MAP_FIXED, fd, offset as libc::off_t)
    };
    if p == libc::MAP_FAILED {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    Ok(())
}

/// Turns [va, va+size) back into reserved, inaccessible address space.
pub fn unmap(va: u64, size: u64) {
    // SAFETY: MAP_FIXED over a range of our own reservation that held our mappings.
    unsafe { libc::mmap(va as *mut libc::c_void, size as usize, libc::PROT_NONE, reserve_flags() | libc::MAP_FIXED, -1, 0) };
}

/// Sets the page protection of [va, va+size) from CUmemAccess_flags.
pub fn protect(va: u64, size: u64, access: i32) -> CuResult {
    let prot = match access {
        CU_MEM_ACCESS_FLAGS_PROT_READWRITE => libc::PROT_READ | libc::PROT_WRITE,
        CU_MEM_ACCESS_FLAGS_PROT_READ => libc::PROT_READ,
        _ => libc::PROT_NONE,
    };
    // SAFETY: the range is one or more mappings of ours inside a reservation of ours.
    if unsafe { libc::mprotect(va as *mut libc::c_void, size as usize, prot) } != 0 {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    Ok(())
}
