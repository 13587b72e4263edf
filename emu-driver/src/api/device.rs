//! cuInit, the driver version and device queries.

use super::out;
use crate::config::Config;
use crate::cu::*;
use crate::state::{self, driver, CuResult};
use std::ffi::c_char;

pub fn init(flags: u32) -> CuResult {
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if state::is_initialised() {
        return Ok(());
    }
    let config = Config::from_env().map_err(|r| {
        eprintln!("simtwin: cuInit refused: {}", r.message);
        r.code
    })?;
    state::initialise(config)
}

pub fn driver_get_version(v: *mut i32) -> CuResult {
    let p = crate::profile::by_name(&std::env::var("EMU_CUDA_DEVICE").unwrap_or_else(|_| "h200".into()))
        .unwrap_or(&crate::profile::all()[0]);
    out(v, p.driver_version)
}

pub fn device_get(dev: *mut CUdevice, ordinal: i32) -> CuResult {
    let d = driver()?;
    super::nonnull(dev)?;
    d.check_device(ordinal)?;
    out(dev, ordinal)
}

pub fn device_get_count(count: *mut i32) -> CuResult {
    let d = driver()?;
    out(count, d.device_count())
}

pub fn device_get_name(name: *mut c_char, len: i32, dev: CUdevice) -> CuResult {
    let d = driver()?;
    if name.is_null() || len <= 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.check_device(dev)?;
    let bytes = d.profile.name.as_bytes();
    let n = bytes.len().min(len as usize - 1);
    // SAFETY: the caller's buffer holds `len` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), name as *mut u8, n);
        *name.add(n) = 0;
    }
    Ok(())
}

pub fn device_get_attribute(value: *mut i32, attr: i32, dev: CUdevice) -> CuResult {
    let d = driver()?;
    super::nonnull(value)?;
    d.check_device(dev)?;
    out(value, d.profile.attr(attr)?)
}

pub fn device_compute_capability(major: *mut i32, minor: *mut i32, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    let (a, b) = d.profile.compute_capability();
    out(major, a)?;
    out(minor, b)
}

pub fn device_total_mem(bytes: *mut usize, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    out(bytes, d.profile.total_mem as usize)
}

/// The legacy entry point with a 32-bit size (it succeeds on an H200); the size
/// saturates at 4 GiB - 1 (the value the real one writes was not recorded).
pub fn device_total_mem_v1(bytes: *mut u32, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    out(bytes, d.profile.total_mem.min(u32::MAX as u64) as u32)
}

pub fn device_get_uuid(uuid: *mut CUuuid, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    out(uuid, CUuuid { bytes: d.profile.uuid })
}

pub fn device_get_pci_bus_id(buf: *mut c_char, len: i32, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    if buf.is_null() || len <= 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let id = format!("{:08X}:{:02X}:{:02X}.0", d.profile.attr(50).unwrap_or(0), d.profile.attr(33).unwrap_or(0), d.profile.attr(34).unwrap_or(0));
    let n = id.len().min(len as usize - 1);
    // SAFETY: the caller's buffer holds `len` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(id.as_ptr(), buf as *mut u8, n);
        *buf.add(n) = 0;
    }
    Ok(())
}

pub fn device_get_by_pci_bus_id(dev: *mut CUdevice, id: *const c_char) -> CuResult {
    let _d = driver()?;
    super::nonnull(id)?;
    out(dev, 0)
}

/// The emulated device has no peers.
pub fn device_can_access_peer(can: *mut i32, dev: CUdevice, peer: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    d.check_device(peer)?;
    out(can, 0)
}

pub fn device_get_default_mem_pool(pool: *mut CUmemoryPool, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    out(pool, state::handle(state::Tag::Pool, d.device_pool[dev as usize]))
}

pub fn device_get_mem_pool(pool: *mut CUmemoryPool, dev: CUdevice) -> CuResult {
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

pub fn device_get_texture_1d_linear_max_width(w: *mut usize, _fmt: u32, _ch: u32, dev: CUdevice) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    out(w, d.profile.attr(69).unwrap_or(0) as usize)
}
