//! The virtual-memory API: physical allocations (cuMemCreate, cuMemRelease, import and
//! export as a POSIX file descriptor), address reservations (cuMemAddressReserve/Free),
//! mappings (cuMemMap/Unmap) and access (cuMemSetAccess/GetAccess), with the H200's
//! granularity and answers (emu-driver/tests/data/h200-conformance.txt, `vmm_*`). None
//! of them needs a current context (measured: `vmm_nocontext`).
//!
//! The host side (memfds, reservations, page protections) is `crate::vmm`. A mapping
//! with access for the device is also an entry of the allocation tracker, so copies,
//! memsets, kernels and pointer queries treat it as device memory; adjacent mappings
//! form one range (`Driver::check_range`). A mapping without access is not: copies to
//! it are refused (CUDA_ERROR_INVALID_VALUE, as on the H200) and a kernel that touches
//! it faults (CUDA_ERROR_ILLEGAL_ADDRESS, as on the H200).

use crate::boundary::{CuResult, Opaque, Out, OutAny};
use crate::cu::*;
use crate::state::{driver, handle, handle_id, Alloc, AllocKind, Driver, Tag};
use crate::vmm::{self, Mapping, Physical, Props, Reservation};

// cuda.h's granularity flags, location types and handle-type bits (abi/src/cuda.rs), by short names.
use crate::cu::{
    CU_MEM_ALLOC_GRANULARITY_MINIMUM as GRANULARITY_MINIMUM, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED as GRANULARITY_RECOMMENDED,
    CU_MEM_HANDLE_TYPE_FABRIC as HANDLE_FABRIC, CU_MEM_HANDLE_TYPE_WIN32 as HANDLE_WIN32, CU_MEM_HANDLE_TYPE_WIN32_KMT as HANDLE_WIN32_KMT,
    CU_MEM_LOCATION_TYPE_HOST as LOCATION_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA as LOCATION_HOST_NUMA,
    CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT as LOCATION_HOST_NUMA_CURRENT,
};
/// The CU_MEM_CREATE_USAGE_* bits cuda.h defines (tile pool, decompression, RDMA over
/// PCIe); others are dropped, as on the H200.
const USAGE_KNOWN: u16 = 0x7;

fn handle_value(id: u64) -> CUmemGenericAllocationHandle {
    handle(Tag::MemHandle, id) as usize as u64
}

fn handle_of(h: CUmemGenericAllocationHandle) -> Option<u64> {
    handle_id(Tag::MemHandle, h as usize as *mut std::ffi::c_void)
}

/// The physical allocation a handle names, if it has an unreleased reference (a second
/// cuMemRelease answers CUDA_ERROR_INVALID_VALUE, as on the H200).
fn live(d: &Driver, h: CUmemGenericAllocationHandle) -> CuResult<u64> {
    let id = handle_of(h).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    match d.vmm.physical.get(&id) {
        Some(p) if p.refs > 0 => Ok(id),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

fn granularity_of(d: &Driver) -> u64 {
    d.profile.vmm_granularity.0
}

/// The H200 answers the same granularity whatever the properties say (even an invalid
/// type or location): only the pointers and the option are checked.
pub fn get_allocation_granularity(g: Out<usize>, prop: Option<CUmemAllocationProp>, option: u32) -> CuResult {
    let d = driver()?;
    prop.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    g.required()?;
    let (min, rec) = d.profile.vmm_granularity;
    match option {
        GRANULARITY_MINIMUM => g.set(min as usize),
        GRANULARITY_RECOMMENDED => g.set(rec as usize),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// What cuMemCreate keeps of a request, or the H200's answer to it (`vmm_create_props`).
fn accept(d: &Driver, p: &CUmemAllocationProp) -> CuResult<Props> {
    if p.type_ != CU_MEM_ALLOCATION_TYPE_PINNED || !p.win32_handle_meta_data.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (location, device) = match p.location.type_ {
        CU_MEM_LOCATION_TYPE_DEVICE => {
            d.check_device(p.location.id)?;
            (CU_MEM_LOCATION_TYPE_DEVICE, p.location.id)
        }
        // Host memory: reported as NUMA node 0 whichever of the two was asked for.
        LOCATION_HOST | LOCATION_HOST_NUMA => (LOCATION_HOST_NUMA, 0),
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    let ht = p.requested_handle_types;
    if ht & (HANDLE_WIN32 | HANDLE_WIN32_KMT) != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if ht & HANDLE_FABRIC != 0 {
        // Fabric handles need an IMEX channel; the H200 machine has none.
        return Err(CUDA_ERROR_NOT_PERMITTED);
    }
    let handle_types = ht & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    if location != CU_MEM_LOCATION_TYPE_DEVICE && handle_types != 0 {
        // "HOST allocations are not IPC capable" (cuda.h).
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(Props {
        handle_types,
        location,
        device,
        compression: p.compression_type,
        rdma: p.gpu_direct_rdma_capable,
        usage: p.usage & USAGE_KNOWN,
    })
}

pub fn create(h: Out<CUmemGenericAllocationHandle>, size: usize, prop: Option<CUmemAllocationProp>, flags: u64) -> CuResult {
    let mut d = driver()?;
    let p = prop.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    h.required()?;
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let props = accept(&d, &p)?;
    let size = size as u64;
    if size == 0 || !size.is_multiple_of(granularity_of(&d)) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let device = props.location == CU_MEM_LOCATION_TYPE_DEVICE;
    if device && d.used_bytes.saturating_add(size) > d.profile.total_mem {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    let fd = vmm::create_memfd(size, &props)?;
    let id = d.new_id();
    d.vmm.physical.insert(id, Physical { fd, size, prop: props, refs: 1, maps: 0, imported: false });
    if device {
        d.used_bytes += size;
    }
    crate::counters::get().alloc(size);
    h.set(handle_value(id))
}

/// Frees a physical allocation once no handle and no mapping holds it.
fn collect(d: &mut Driver, id: u64) {
    let gone = matches!(d.vmm.physical.get(&id), Some(p) if p.refs == 0 && p.maps == 0);
    if gone {
        let p = d.vmm.physical.remove(&id).expect("checked above");
        vmm::close(p.fd);
        if !p.imported && p.prop.location == CU_MEM_LOCATION_TYPE_DEVICE {
            d.used_bytes = d.used_bytes.saturating_sub(p.size);
        }
        crate::counters::get().free();
    }
}

pub fn release(h: CUmemGenericAllocationHandle) -> CuResult {
    let mut d = driver()?;
    let id = live(&d, h)?;
    d.vmm.physical.get_mut(&id).expect("live").refs -= 1;
    collect(&mut d, id);
    Ok(())
}

/// A hint is honoured when that range is free; it must be a multiple of the granularity.
pub fn address_reserve(ptr: Out<CUdeviceptr>, size: usize, align: usize, addr: CUdeviceptr, flags: u64) -> CuResult {
    let mut d = driver()?;
    ptr.required()?;
    let g = granularity_of(&d);
    let (size, align) = (size as u64, align as u64);
    if flags != 0 || size == 0 || !size.is_multiple_of(g) || (align != 0 && !align.is_power_of_two()) || !addr.is_multiple_of(g) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let va = vmm::reserve(size, align.max(g), addr)?;
    d.vmm.reservations.insert(va, Reservation { size });
    ptr.set(va)
}

/// Only a whole reservation with nothing mapped in it.
pub fn address_free(ptr: CUdeviceptr, size: usize) -> CuResult {
    let mut d = driver()?;
    let size = size as u64;
    match d.vmm.reservations.get(&ptr) {
        Some(r) if r.size == size => {}
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    }
    if d.vmm.any_mapped(ptr, size) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.vmm.reservations.remove(&ptr);
    vmm::free(ptr, size);
    Ok(())
}

/// Not measured beyond success (the H200 run of `vmm_map` crashed in the driver on a
/// forged handle): misuse answers CUDA_ERROR_INVALID_VALUE, as cuda.h documents.
pub fn map(ptr: CUdeviceptr, size: usize, offset: usize, h: CUmemGenericAllocationHandle, flags: u64) -> CuResult {
    let mut d = driver()?;
    let g = granularity_of(&d);
    let (size, offset) = (size as u64, offset as u64);
    if flags != 0 || size == 0 || !ptr.is_multiple_of(g) || !size.is_multiple_of(g) || !offset.is_multiple_of(g) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let id = live(&d, h)?;
    let p = &d.vmm.physical[&id];
    if offset.checked_add(size).is_none_or(|end| end > p.size) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let fd = p.fd;
    if d.vmm.reservation_of(ptr, size).is_none() || d.vmm.any_mapped(ptr, size) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    vmm::map(ptr, size, fd, offset)?;
    let mid = d.new_id();
    d.vmm.mappings.insert(ptr, Mapping { size, physical: id, access: CU_MEM_ACCESS_FLAGS_PROT_NONE, id: mid });
    d.vmm.physical.get_mut(&id).expect("live").maps += 1;
    Ok(())
}

/// Runs the work every context has pending (EMU_CUDA_ASYNC=deferred) before a mapping
/// changes: cuMemUnmap and cuMemSetAccess are synchronous (cuda.h: "note_sync"), and
/// the memory is no context's, so work queued in any of them may use it.
fn settle(why: &str) -> CuResult {
    let contexts: Vec<u64> = driver()?.contexts.keys().copied().collect();
    for ctx in contexts {
        crate::queue::force_context(ctx, why)?;
    }
    Ok(())
}

/// Unmaps every mapping inside [ptr, ptr+size), which must lie in one reservation and
/// cut no mapping in two. A range with nothing mapped succeeds (as on the H200: a second
/// cuMemUnmap of the same range answers CUDA_SUCCESS).
pub fn unmap(ptr: CUdeviceptr, size: usize) -> CuResult {
    let size = size as u64;
    let inside = |d: &Driver| -> CuResult<Vec<u64>> {
        if size == 0 || d.vmm.reservation_of(ptr, size).is_none() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let end = ptr + size;
        if let Some((s, m)) = d.vmm.mapping_at(ptr) {
            if s < ptr || s + m.size > end {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        let starts: Vec<u64> = d.vmm.mappings.range(ptr..end).map(|(&s, _)| s).collect();
        if let Some(&last) = starts.last() {
            if last + d.vmm.mappings[&last].size > end {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        Ok(starts)
    };
    inside(&*driver()?)?;
    settle("cuMemUnmap")?;
    let mut d = driver()?;
    for s in inside(&d)? {
        let m = d.vmm.mappings.remove(&s).expect("listed");
        d.remove_alloc(s);
        vmm::unmap(s, m.size);
        if let Some(p) = d.vmm.physical.get_mut(&m.physical) {
            p.maps -= 1;
        }
        collect(&mut d, m.physical);
    }
    Ok(())
}

/// The range must be fully mapped (one or more whole mappings). Access for the host
/// answers CUDA_ERROR_NOT_SUPPORTED, as on the H200 (its device memory is not host
/// accessible); an unknown device, CUDA_ERROR_INVALID_VALUE.
pub fn set_access(ptr: CUdeviceptr, size: usize, desc: Option<Vec<CUmemAccessDesc>>, count: usize) -> CuResult {
    settle("cuMemSetAccess")?;
    let mut d = driver()?;
    let desc = desc.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if count == 0 || size == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut access = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    for e in &desc {
        match e.location.type_ {
            CU_MEM_LOCATION_TYPE_DEVICE => d.check_device(e.location.id).map_err(|_| CUDA_ERROR_INVALID_VALUE)?,
            LOCATION_HOST | LOCATION_HOST_NUMA | LOCATION_HOST_NUMA_CURRENT => return Err(CUDA_ERROR_NOT_SUPPORTED),
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
        if !matches!(e.flags, CU_MEM_ACCESS_FLAGS_PROT_NONE | CU_MEM_ACCESS_FLAGS_PROT_READ | CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        access = e.flags;
    }
    let size = size as u64;
    let starts = d.vmm.tiling(ptr, size).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    vmm::protect(ptr, size, access)?;
    for s in starts {
        let m = d.vmm.mappings.get_mut(&s).expect("tiled");
        m.access = access;
        let (msize, id) = (m.size, m.id);
        let kind = match access {
            CU_MEM_ACCESS_FLAGS_PROT_READWRITE => Some(AllocKind::Mapped),
            CU_MEM_ACCESS_FLAGS_PROT_READ => Some(AllocKind::MappedReadOnly),
            _ => None,
        };
        match kind {
            Some(kind) => {
                d.insert_alloc(Alloc { base: s, size: msize, map_start: 0, mapped: 0, kind, ctx: 0, pool: None, id });
            }
            None => {
                d.remove_alloc(s);
            }
        }
    }
    Ok(())
}

/// A mapping's access for device 0; host locations have none. Memory of cuMemAlloc
/// answers 0 too (measured: it is not managed through access flags).
pub fn get_access(flags: Out<u64>, location: Option<CUmemLocation>, ptr: CUdeviceptr) -> CuResult {
    let d = driver()?;
    flags.required()?;
    let loc = location.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let host = match loc.type_ {
        CU_MEM_LOCATION_TYPE_DEVICE => {
            d.check_device(loc.id)?;
            false
        }
        LOCATION_HOST | LOCATION_HOST_NUMA | LOCATION_HOST_NUMA_CURRENT => true,
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    if let Some((_, m)) = d.vmm.mapping_at(ptr) {
        return flags.set(if host { 0 } else { m.access as u64 });
    }
    match d.find_alloc(ptr) {
        Some(a) if matches!(a.kind, AllocKind::Device | AllocKind::Pitched | AllocKind::StreamOrdered) => flags.set(0),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn get_allocation_properties_from_handle(prop: Out<CUmemAllocationProp>, h: CUmemGenericAllocationHandle) -> CuResult {
    let d = driver()?;
    prop.required()?;
    let id = live(&d, h)?;
    let p = d.vmm.physical[&id].prop;
    prop.set(CUmemAllocationProp {
        type_: CU_MEM_ALLOCATION_TYPE_PINNED,
        requested_handle_types: p.handle_types,
        location: CUmemLocation { type_: p.location, id: p.device },
        win32_handle_meta_data: std::ptr::null_mut(),
        compression_type: p.compression,
        gpu_direct_rdma_capable: p.rdma,
        usage: p.usage,
        reserved: [0; 4],
    })
}

/// The handle the mapping at `addr` was made with, one reference more.
pub fn retain_allocation_handle(h: Out<CUmemGenericAllocationHandle>, addr: Opaque) -> CuResult {
    let mut d = driver()?;
    h.required()?;
    let (_, m) = d.vmm.mapping_at(addr.0 as u64).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let id = m.physical;
    d.vmm.physical.get_mut(&id).expect("mapped").refs += 1;
    h.set(handle_value(id))
}

/// A new close-on-exec descriptor of the memory (as the H200 hands out), for
/// allocations created exportable as POSIX file descriptors.
pub fn export_to_shareable_handle(out: OutAny, h: CUmemGenericAllocationHandle, handle_type: i32, flags: u64) -> CuResult {
    let d = driver()?;
    out.required()?;
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let id = live(&d, h)?;
    let p = &d.vmm.physical[&id];
    if handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || p.prop.handle_types & handle_type == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let fd = vmm::dup(p.fd, true).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    out.set::<i32>(fd)
}

/// Every import is a new handle of the same memory (as on the H200, also within the
/// exporting process), whose properties report no exportable handle type. A descriptor
/// that is not such memory (closed, /dev/null, another driver's) answers
/// CUDA_ERROR_UNKNOWN, as on the H200.
pub fn import_from_shareable_handle(h: Out<CUmemGenericAllocationHandle>, os_handle: Opaque, handle_type: i32) -> CuResult {
    let mut d = driver()?;
    h.required()?;
    match handle_type {
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR => {}
        HANDLE_WIN32 | HANDLE_WIN32_KMT | HANDLE_FABRIC => return Err(CUDA_ERROR_NOT_SUPPORTED),
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    }
    // The descriptor is an int passed in a pointer's bits.
    let fd = os_handle.0 as u32 as i32;
    let props = vmm::describe(fd).ok_or(CUDA_ERROR_UNKNOWN)?;
    let size = vmm::file_size(fd).ok_or(CUDA_ERROR_UNKNOWN)?;
    let own = vmm::dup(fd, true).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    let id = d.new_id();
    let prop = Props { handle_types: 0, ..props };
    d.vmm.physical.insert(id, Physical { fd: own, size, prop, refs: 1, maps: 0, imported: true });
    crate::counters::get().alloc(size);
    h.set(handle_value(id))
}

/// What pointer queries report of an address the virtual-memory API knows.
pub enum PointerInfo {
    /// Inside a mapping: the mapping's start, its record, the enclosing reservation
    /// (start, size) and the physical allocation's properties.
    Mapped { start: u64, size: u64, access: i32, id: u64, reservation: (u64, u64), props: Props, physical: u64 },
    /// Reserved, nothing mapped there: every pointer query is refused.
    Reserved,
}

/// The virtual-memory API's view of `ptr`, if it is one of its addresses.
pub fn pointer_info(d: &Driver, ptr: u64) -> Option<PointerInfo> {
    let (rstart, r) = d.vmm.reservation_of(ptr, 1)?;
    let reservation = (rstart, r.size);
    match d.vmm.mapping_at(ptr) {
        Some((start, m)) => {
            let props = d.vmm.physical.get(&m.physical).map(|p| p.prop)?;
            Some(PointerInfo::Mapped { start, size: m.size, access: m.access, id: m.id, reservation, props, physical: m.physical })
        }
        None => Some(PointerInfo::Reserved),
    }
}
