//! cuInit, the driver version and device queries.

use crate::boundary::{CuResult, Out, OutText, Text};
use crate::cu::*;
use crate::state::{self, driver};

pub fn init(flags: u32) -> CuResult {
    crate::fork::note_init();
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if state::is_initialised() {
        return Ok(());
    }
    let config = crate::config::get().map_err(|r| {
        crate::log_error!("cuInit refused: {}", r.message);
        r.code
    })?;
    if config.checks.pointers {
        // Before the driver exists: no device allocation may predate the arena.
        let bytes = crate::arena::enable().map_err(|e| {
            crate::log_error!("cuInit refused: EMU_CUDA_CHECKS=pointers: {e}");
            CUDA_ERROR_OUT_OF_MEMORY
        })?;
        crate::log_info!(
            "EMU_CUDA_CHECKS=pointers: device memory in an arena of {} GiB, out of host code's reach outside launches",
            bytes >> 30
        );
    }
    state::initialise(config.clone())?;
    crate::signals::install_fault_report();
    crate::signals::install();
    Ok(())
}

/// Answers what the selected profile's driver reports, also before cuInit (as the real
/// driver does); an unknown profile falls back to the first one.
pub fn driver_get_version(v: Out<i32>) -> CuResult {
    let p = match crate::config::get() {
        Ok(c) => crate::profile::by_name(&c.device),
        Err(_) => None,
    };
    v.set(p.unwrap_or(&crate::profile::all()[0]).driver_version)
}

pub fn device_get(dev: Out<CUdevice>, ordinal: i32) -> CuResult {
    let d = driver()?;
    dev.required()?;
    d.check_device(ordinal)?;
    dev.set(ordinal)
}

pub fn device_get_count(count: Out<i32>) -> CuResult {
    let d = driver()?;
    count.set(d.device_count())
}

pub fn device_get_name(name: OutText, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    name.set(&d.profile.name)
}

pub fn device_get_attribute(value: Out<i32>, attr: i32, dev: CUdevice) -> CuResult {
    let d = driver()?;
    value.required()?;
    d.check_device(dev)?;
    value.set(d.profile.attr(attr)?)
}

pub fn device_compute_capability(major: Out<i32>, minor: Out<i32>, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    let (a, b) = d.profile.compute_capability();
    major.set(a)?;
    minor.set(b)
}

/// cuDeviceGetProperties: the legacy CUdevprop, the profile's attributes 1-14.
pub fn device_get_properties(prop: Out<CUdevprop>, dev: CUdevice) -> CuResult {
    let d = driver()?;
    prop.required()?;
    d.check_device(dev)?;
    prop.set(d.profile.devprop())
}

pub fn device_total_mem(bytes: Out<usize>, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    bytes.set(d.profile.total_mem as usize)
}

/// The legacy entry point with a 32-bit size (it succeeds on an H200); the size
/// saturates at 4 GiB - 1 (the value the real one writes was not recorded).
pub fn device_total_mem_v1(bytes: Out<u32>, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    bytes.set(d.profile.total_mem.min(u32::MAX as u64) as u32)
}

pub fn device_get_uuid(uuid: Out<CUuuid>, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    uuid.set(CUuuid { bytes: d.profile.uuid })
}

pub fn device_get_pci_bus_id(buf: OutText, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    let id = format!(
        "{:08X}:{:02X}:{:02X}.0",
        d.profile.attr(50).unwrap_or(0),
        d.profile.attr(33).unwrap_or(0),
        d.profile.attr(34).unwrap_or(0)
    );
    buf.set(&id)
}

pub fn device_get_by_pci_bus_id(dev: Out<CUdevice>, id: Text) -> CuResult {
    let _d = driver()?;
    id.get()?;
    dev.set(0)
}

/// The emulated device has no peers.
pub fn device_can_access_peer(can: Out<i32>, dev: CUdevice, peer: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    d.check_device(peer)?;
    can.set(0)
}

pub fn device_get_default_mem_pool(pool: Out<CUmemoryPool>, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    pool.set(state::handle(state::Tag::Pool, d.device_pool[dev as usize]))
}

pub fn device_get_mem_pool(pool: Out<CUmemoryPool>, dev: CUdevice) -> CuResult {
    device_get_default_mem_pool(pool, dev)
}

pub fn device_set_mem_pool(dev: CUdevice, pool: CUmemoryPool) -> CuResult {
    let mut d = driver()?;
    d.check_device(dev)?;
    let id = state::handle_id(state::Tag::Pool, pool).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if !d.pools.contains_key(&id) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.device_pool[dev as usize] = id;
    Ok(())
}

/// The device a memory location names for the pool calls of CUDA 13.0 (pinned
/// allocations on a device; the emulated driver has no host or managed pools).
fn pool_device(d: &state::Driver, loc: Option<CUmemLocation>, alloc_type: i32) -> CuResult<CUdevice> {
    let loc = loc.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if loc.type_ != CU_MEM_LOCATION_TYPE_DEVICE || alloc_type != CU_MEM_ALLOCATION_TYPE_PINNED {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.check_device(loc.id)?;
    Ok(loc.id)
}

pub fn mem_get_default_mem_pool(pool: Out<CUmemoryPool>, loc: Option<CUmemLocation>, alloc_type: i32) -> CuResult {
    let dev = pool_device(&*driver()?, loc, alloc_type)?;
    pool.required()?;
    device_get_default_mem_pool(pool, dev)
}

pub fn mem_get_mem_pool(pool: Out<CUmemoryPool>, loc: Option<CUmemLocation>, alloc_type: i32) -> CuResult {
    let dev = pool_device(&*driver()?, loc, alloc_type)?;
    pool.required()?;
    device_get_mem_pool(pool, dev)
}

pub fn mem_set_mem_pool(loc: Option<CUmemLocation>, alloc_type: i32, pool: CUmemoryPool) -> CuResult {
    let dev = pool_device(&*driver()?, loc, alloc_type)?;
    device_set_mem_pool(dev, pool)
}

pub fn device_get_texture_1d_linear_max_width(w: Out<usize>, _fmt: u32, _ch: u32, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    w.set(d.profile.attr(69).unwrap_or(0) as usize)
}
