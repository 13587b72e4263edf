//! The virtual-memory API: physical allocations (cuMemCreate, cuMemRelease, import and
//! export as a POSIX file descriptor), address reservations (cuMemAddressReserve/Free),
//! mappings (cuMemMap/Unmap) and access (cuMemSetAccess/GetAccess), with the H200's
//! granularity and answers (emu-driver/tests/data/h200-conformance.txt, `vmm_*`).
//!
//! The host side (memfds, reservations, page protections) is `crate::vmm`. A mapping
//! with access for the device is also an entry of the allocation tracker, so copies,
//! memsets, kernels and pointer queries treat it as device memory; adjacent mappings
//! form one range (`Driver::check_range`).

use crate::boundary::{CuResult, Opaque, Out, OutAny};
use crate::cu::*;
use crate::state::{driver, handle, handle_id, Alloc, AllocKind, Driver, Tag};
use crate::vmm::{self, Mapping, Physical, Props, Reservation};

/// CUmemAllocationGranularity_flags
const GRANULARITY_MINIMUM: u32 = 0;
const GRANULARITY_RECOMMENDED: u32 = 1;
/// Handle types the driver accepts in a request (POSIX fd, Win32, Win32 KMT, fabric).
const HANDLE_TYPES_KNOWN: i32 = 0xf;

fn handle_value(id: u64) -> CUmemGenericAllocationHandle {
    handle(Tag::MemHandle, id) as usize as u64
}

fn handle_of(h: CUmemGenericAllocationHandle) -> Option<u64> {
    handle_id(Tag::MemHandle, h as usize as *mut std::ffi::c_void)
}

/// The physical allocation a handle names, if it has an unreleased reference.
fn live(d: &Driver, h: CUmemGenericAllocationHandle) -> CuResult<u64> {
    let id = handle_of(h).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    match d.vmm.physical.get(&id) {
        Some(p) if p.refs > 0 => Ok(id),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// Checks an allocation request (cuMemGetAllocationGranularity, cuMemCreate).
fn check_prop(d: &Driver, p: &CUmemAllocationProp) -> CuResult {
    if p.type_ != CU_MEM_ALLOCATION_TYPE_PINNED || p.location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.check_device(p.location.id).map_err(|_| CUDA_ERROR_INVALID_DEVICE)?;
    if p.requested_handle_types & !HANDLE_TYPES_KNOWN != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

fn granularity_of(d: &Driver) -> u64 {
    d.profile.vmm_granularity.0
}

pub fn get_allocation_granularity(g: Out<usize>, prop: Option<CUmemAllocationProp>, option: u32) -> CuResult {
    let d = driver()?;
    let p = prop.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    g.required()?;
    check_prop(&d, &p)?;
    let (min, rec) = d.profile.vmm_granularity;
    match option {
        GRANULARITY_MINIMUM => g.set(min as usize),
        GRANULARITY_RECOMMENDED => g.set(rec as usize),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn create(h: Out<CUmemGenericAllocationHandle>, size: usize, prop: Option<CUmemAllocationProp>, flags: u64) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    let p = prop.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    h.required()?;
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    check_prop(&d, &p)?;
    if p.requested_handle_types & !CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR != 0 {
        // Win32 handles have no meaning here; fabric handles need an IMEX channel.
        return Err(CUDA_ERROR_NOT_SUPPORTED);
    }
    let size = size as u64;
    if size == 0 || !size.is_multiple_of(granularity_of(&d)) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if d.used_bytes.saturating_add(size) > d.profile.total_mem {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    let props = Props {
        handle_types: p.requested_handle_types,
        device: p.location.id,
        compression: 0,
        rdma: p.gpu_direct_rdma_capable,
        usage: p.usage,
    };
    let fd = vmm::create_memfd(size, &props)?;
    let inode = vmm::stat(fd).map(|(dev, ino, _)| (dev, ino)).unwrap_or((0, 0));
    let id = d.new_id();
    d.vmm.physical.insert(id, Physical { fd, size, prop: props, refs: 1, maps: 0, inode, imported: false });
    d.used_bytes += size;
    crate::counters::get().alloc(size);
    h.set(handle_value(id))
}

/// Frees a physical allocation once no handle and no mapping holds it.
fn collect(d: &mut Driver, id: u64) {
    let gone = matches!(d.vmm.physical.get(&id), Some(p) if p.refs == 0 && p.maps == 0);
    if gone {
        let p = d.vmm.physical.remove(&id).expect("checked above");
        vmm::close(p.fd);
        if !p.imported {
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

pub fn address_reserve(ptr: Out<CUdeviceptr>, size: usize, align: usize, addr: CUdeviceptr, flags: u64) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    ptr.required()?;
    let g = granularity_of(&d);
    let (size, align) = (size as u64, align as u64);
    if flags != 0 || size == 0 || !size.is_multiple_of(g) || (align != 0 && !align.is_power_of_two()) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let va = vmm::reserve(size, align.max(g), addr)?;
    d.vmm.reservations.insert(va, Reservation { size });
    ptr.set(va)
}

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
    d.vmm.mappings.insert(ptr, Mapping { size, physical: id, access: CU_MEM_ACCESS_FLAGS_PROT_NONE });
    d.vmm.physical.get_mut(&id).expect("live").maps += 1;
    Ok(())
}

pub fn unmap(ptr: CUdeviceptr, size: usize) -> CuResult {
    let ctx = driver()?.current_unchecked().ok();
    let size = size as u64;
    driver()?.vmm.tiling(ptr, size).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    // Work that may still use the memory completes first (cuMemUnmap synchronises).
    if let Some(ctx) = ctx {
        crate::queue::force_context(ctx, "cuMemUnmap")?;
    }
    let mut d = driver()?;
    let starts = d.vmm.tiling(ptr, size).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    for s in starts {
        let m = d.vmm.mappings.remove(&s).expect("tiled");
        d.allocs.remove(&s);
        vmm::unmap(s, m.size);
        if let Some(p) = d.vmm.physical.get_mut(&m.physical) {
            p.maps -= 1;
        }
        collect(&mut d, m.physical);
    }
    Ok(())
}

pub fn set_access(ptr: CUdeviceptr, size: usize, desc: Option<Vec<CUmemAccessDesc>>, count: usize) -> CuResult {
    let mut d = driver()?;
    let desc = desc.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if count == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut access = None;
    for e in &desc {
        if e.location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        d.check_device(e.location.id).map_err(|_| CUDA_ERROR_INVALID_DEVICE)?;
        if !matches!(e.flags, CU_MEM_ACCESS_FLAGS_PROT_NONE | CU_MEM_ACCESS_FLAGS_PROT_READ | CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        access = Some(e.flags);
    }
    let access = access.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let size = size as u64;
    let starts = d.vmm.tiling(ptr, size).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    vmm::protect(ptr, size, access)?;
    for s in starts {
        let m = d.vmm.mappings.get_mut(&s).expect("tiled");
        m.access = access;
        let msize = m.size;
        let kind = match access {
            CU_MEM_ACCESS_FLAGS_PROT_READWRITE => Some(AllocKind::Mapped),
            CU_MEM_ACCESS_FLAGS_PROT_READ => Some(AllocKind::MappedReadOnly),
            _ => None,
        };
        match kind {
            Some(kind) => {
                d.allocs.insert(s, Alloc { base: s, size: msize, map_start: 0, mapped: 0, kind, ctx: 0, pool: None });
            }
            None => {
                d.allocs.remove(&s);
            }
        }
    }
    Ok(())
}

pub fn get_access(flags: Out<u64>, location: Option<CUmemLocation>, ptr: CUdeviceptr) -> CuResult {
    let d = driver()?;
    flags.required()?;
    let loc = location.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if loc.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.check_device(loc.id).map_err(|_| CUDA_ERROR_INVALID_DEVICE)?;
    let (_, m) = d.vmm.mapping_at(ptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    flags.set(m.access as u64)
}

pub fn get_allocation_properties_from_handle(prop: Out<CUmemAllocationProp>, h: CUmemGenericAllocationHandle) -> CuResult {
    let d = driver()?;
    prop.required()?;
    let id = live(&d, h)?;
    let p = d.vmm.physical[&id].prop;
    prop.set(CUmemAllocationProp {
        type_: CU_MEM_ALLOCATION_TYPE_PINNED,
        requested_handle_types: p.handle_types,
        location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: p.device },
        win32_handle_meta_data: std::ptr::null_mut(),
        compression_type: p.compression,
        gpu_direct_rdma_capable: p.rdma,
        usage: p.usage,
        reserved: [0; 4],
    })
}

pub fn retain_allocation_handle(h: Out<CUmemGenericAllocationHandle>, addr: Opaque) -> CuResult {
    let mut d = driver()?;
    h.required()?;
    let (_, m) = d.vmm.mapping_at(addr.0 as u64).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let id = m.physical;
    d.vmm.physical.get_mut(&id).expect("mapped").refs += 1;
    h.set(handle_value(id))
}

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
    // A new descriptor the caller owns; it survives exec (so a child can be handed it).
    let fd = vmm::dup(p.fd, false).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    out.set::<i32>(fd)
}

pub fn import_from_shareable_handle(h: Out<CUmemGenericAllocationHandle>, os_handle: Opaque, handle_type: i32) -> CuResult {
    let mut d = driver()?;
    h.required()?;
    if handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let fd = i32::try_from(os_handle.0).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    // Only memory exported by this driver (a memfd it made) can be imported.
    let props = vmm::describe(fd).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let (dev, ino, size) = vmm::stat(fd).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if let Some((&id, _)) = d.vmm.physical.iter().find(|(_, p)| p.inode == (dev, ino) && p.refs > 0) {
        d.vmm.physical.get_mut(&id).expect("found").refs += 1;
        return h.set(handle_value(id));
    }
    let own = vmm::dup(fd, true).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    let id = d.new_id();
    d.vmm.physical.insert(id, Physical { fd: own, size, prop: props, refs: 1, maps: 0, inode: (dev, ino), imported: true });
    crate::counters::get().alloc(size);
    h.set(handle_value(id))
}
