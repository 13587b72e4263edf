//! Modules, functions and launches.

use super::out;
use crate::cu::*;
use crate::launch::{self, Launch};
use crate::module::{self, FunctionRef};
use crate::state::{driver, handle, handle_id, CuResult, Driver, Tag};
use std::ffi::{c_char, c_void, CStr};

/// Parses and binds the image without holding the driver's lock (scanning the kernel
/// libraries and dlopen can be slow), then enters the module.
fn load(m: *mut CUmodule, parse: impl FnOnce(&Driver) -> CuResult<crate::image::Image>) -> CuResult {
    let (ctx, img, paths) = {
        let d = driver()?;
        let ctx = d.current()?;
        super::nonnull(m)?;
        (ctx, parse(&d)?, d.config.kernels.clone())
    };
    let prepared = module::prepare(&paths, img)?;
    let mut d = driver()?;
    if d.current() != Ok(ctx) {
        module::discard(prepared);
        return Err(d.current().err().unwrap_or(CUDA_ERROR_INVALID_CONTEXT));
    }
    let id = module::insert(&mut d, ctx, prepared);
    out(m, handle(Tag::Module, id))
}

pub fn module_load_data(m: *mut CUmodule, image: *const c_void) -> CuResult {
    load(m, |d| module::parse_image_ptr(d, image))
}

/// JIT options only tune PTX compilation, which does not happen here; they are read
/// for validity (non-null arrays when a count is given) and otherwise ignored.
pub fn module_load_data_ex(m: *mut CUmodule, image: *const c_void, n: u32, opts: *mut u32, vals: *mut *mut c_void) -> CuResult {
    if n > 0 && (opts.is_null() || vals.is_null()) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    module_load_data(m, image)
}

pub fn module_load_fat_binary(m: *mut CUmodule, image: *const c_void) -> CuResult {
    module_load_data(m, image)
}

pub fn module_load(m: *mut CUmodule, fname: *const c_char) -> CuResult {
    super::nonnull(fname)?;
    // SAFETY: NUL-terminated path per the API.
    let path = unsafe { CStr::from_ptr(fname) }.to_string_lossy().into_owned();
    load(m, |d| module::parse_image_file(d, std::path::Path::new(&path)))
}

fn module_id(d: &Driver, m: CUmodule) -> CuResult<u64> {
    let id = handle_id(Tag::Module, m).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if !d.modules.contains_key(&id) {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    Ok(id)
}

pub fn module_unload(m: CUmodule) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    let id = module_id(&d, m)?;
    module::unload(&mut d, id);
    Ok(())
}

pub fn module_get_function(f: *mut CUfunction, m: CUmodule, name: *const c_char) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    super::nonnull(f)?;
    super::nonnull(name)?;
    let mid = module_id(&d, m)?;
    // SAFETY: NUL-terminated name per the API.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
    let mm = d.modules[&mid].clone();
    let index = mm.kernels.iter().position(|k| k.symbol == name).ok_or(CUDA_ERROR_NOT_FOUND)?;
    let existing = mm.handles.lock().unwrap_or_else(|e| e.into_inner()).get(&name).copied();
    let fid = match existing {
        Some(fid) => fid,
        None => {
            let fid = d.new_id();
            let static_shared = mm.kernels[index].attrs.as_ref().map(|a| a.shared_size_bytes).unwrap_or(0);
            let max_dyn = d.profile.shared_per_block().saturating_sub(static_shared);
            d.functions.insert(fid, FunctionRef { module_id: mid, module: mm.clone(), index, max_dynamic_shared: max_dyn, carveout: -1, cache_config: 0 });
            mm.handles.lock().unwrap_or_else(|e| e.into_inner()).insert(name, fid);
            fid
        }
    };
    out(f, handle(Tag::Function, fid))
}

pub fn module_get_function_count(count: *mut u32, m: CUmodule) -> CuResult {
    let d = driver()?;
    let id = module_id(&d, m)?;
    out(count, d.modules[&id].kernels.len() as u32)
}

pub fn module_get_global(dptr: *mut CUdeviceptr, bytes: *mut usize, m: CUmodule, name: *const c_char) -> CuResult {
    let d = driver()?;
    d.current()?;
    super::nonnull(name)?;
    let id = module_id(&d, m)?;
    // SAFETY: NUL-terminated name per the API.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
    let (addr, size) = *d.modules[&id].globals.get(&name).ok_or(CUDA_ERROR_NOT_FOUND)?;
    if !dptr.is_null() {
        out(dptr, addr)?;
    }
    if !bytes.is_null() {
        out(bytes, size as usize)?;
    }
    Ok(())
}

fn function<'a>(d: &'a Driver, f: CUfunction) -> CuResult<(u64, &'a FunctionRef)> {
    let id = handle_id(Tag::Function, f).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    Ok((id, d.functions.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?))
}

pub fn func_get_attribute(v: *mut i32, attr: i32, f: CUfunction) -> CuResult {
    let d = driver()?;
    d.current()?;
    super::nonnull(v)?;
    let (_, fr) = function(&d, f)?;
    let k = fr.kernel();
    let a = k.attrs.as_ref();
    let sm = d.profile.sm() as i32;
    let bound = k.thread_bound().unwrap_or(d.profile.max_threads_per_block()) as i32;
    let value = match attr {
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => bound,
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => a.map(|a| a.shared_size_bytes as i32).unwrap_or(0),
        CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES => a.map(|a| a.const_size_bytes as i32).unwrap_or(0),
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES => a.map(|a| a.local_size_bytes as i32).unwrap_or(0),
        CU_FUNC_ATTRIBUTE_NUM_REGS => a.map(|a| a.num_regs as i32).unwrap_or(0),
        CU_FUNC_ATTRIBUTE_PTX_VERSION => a.and_then(|a| a.ptx_version).map(|v| v as i32).unwrap_or(sm),
        CU_FUNC_ATTRIBUTE_BINARY_VERSION => a.map(|a| a.binary_version as i32).filter(|&v| v > 0).unwrap_or(sm),
        CU_FUNC_ATTRIBUTE_CACHE_MODE_CA => 0,
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => fr.max_dynamic_shared as i32,
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => fr.carveout,
        10 /* CLUSTER_SIZE_MUST_BE_SET */ => 0,
        11..=13 /* REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH */ => 0,
        14 /* NON_PORTABLE_CLUSTER_SIZE_ALLOWED */ => 0,
        15 /* CLUSTER_SCHEDULING_POLICY_PREFERENCE */ => 0,
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    out(v, value)
}

pub fn func_set_attribute(f: CUfunction, attr: i32, value: i32) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    let optin = d.profile.shared_per_block_optin();
    let (id, fr) = function(&d, f)?;
    let static_shared = fr.kernel().attrs.as_ref().map(|a| a.shared_size_bytes).unwrap_or(0);
    let fr = d.functions.get_mut(&id).unwrap();
    match attr {
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => {
            if value < 0 || value as u32 > optin.saturating_sub(static_shared) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            fr.max_dynamic_shared = value as u32;
        }
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => {
            if !(-1..=100).contains(&value) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            fr.carveout = value;
        }
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    }
    Ok(())
}

pub fn func_set_cache_config(f: CUfunction, cfg: u32) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    let (id, _) = function(&d, f)?;
    if cfg > 3 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.functions.get_mut(&id).unwrap().cache_config = cfg;
    Ok(())
}

pub fn func_set_shared_mem_config(f: CUfunction, cfg: u32) -> CuResult {
    let d = driver()?;
    d.current()?;
    function(&d, f)?;
    if cfg > 2 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

pub fn func_get_name(name: *mut *const c_char, f: CUfunction) -> CuResult {
    let d = driver()?;
    super::nonnull(name)?;
    let (_, fr) = function(&d, f)?;
    // Names live as long as the module: intern them as C strings for the caller.
    static NAMES: std::sync::Mutex<Vec<std::ffi::CString>> = std::sync::Mutex::new(Vec::new());
    let c = std::ffi::CString::new(fr.kernel().symbol.clone()).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(existing) = names.iter().find(|n| **n == c) {
        return out(name, existing.as_ptr());
    }
    names.push(c);
    out(name, names.last().unwrap().as_ptr())
}

pub fn func_get_module(m: *mut CUmodule, f: CUfunction) -> CuResult {
    let d = driver()?;
    let (_, fr) = function(&d, f)?;
    out(m, handle(Tag::Module, fr.module_id))
}

#[allow(clippy::too_many_arguments)]
pub fn launch_kernel(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, shared: u32,
                     stream: CUstream, params: *mut *mut c_void, extra: *mut *mut c_void) -> CuResult {
    launch::launch(Launch { f, grid: [gx, gy, gz], block: [bx, by, bz], shared, stream, params, extra })
}

pub fn launch_kernel_ex(cfg: *const CUlaunchConfig, f: CUfunction, params: *mut *mut c_void, extra: *mut *mut c_void) -> CuResult {
    super::nonnull(cfg)?;
    // SAFETY: non-null config per the API.
    let c = unsafe { &*cfg };
    if c.num_attrs > 0 {
        if c.attrs.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for i in 0..c.num_attrs as usize {
            // SAFETY: num_attrs entries.
            let a = unsafe { &*c.attrs.add(i) };
            // Attributes that change nothing observable on one emulated device are
            // accepted (1 access policy, 3 sync policy, 8 priority); clusters and
            // cooperative launches are not emulated.
            match a.id {
                1 | 3 | 8 => {}
                _ => {
                    crate::log_warn!("cuLaunchKernelEx: launch attribute {} is not emulated", a.id);
                    return Err(CUDA_ERROR_NOT_SUPPORTED);
                }
            }
        }
    }
    launch::launch(Launch {
        f,
        grid: [c.grid_dim_x, c.grid_dim_y, c.grid_dim_z],
        block: [c.block_dim_x, c.block_dim_y, c.block_dim_z],
        shared: c.shared_mem_bytes,
        stream: c.h_stream,
        params,
        extra,
    })
}

/// Active blocks per SM by the profile's limits: threads, registers, shared memory.
pub fn occupancy_max_active_blocks(n: *mut i32, f: CUfunction, block: i32, dyn_smem: usize, _flags: u32) -> CuResult {
    let d = driver()?;
    d.current()?;
    super::nonnull(n)?;
    let (_, fr) = function(&d, f)?;
    if block <= 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = d.profile;
    let k = fr.kernel();
    let a = k.attrs.as_ref();
    let threads_sm = p.attr(39).unwrap_or(2048) as i64;
    let blocks_sm = p.attr(106).unwrap_or(32) as i64;
    let regs_sm = p.attr(82).unwrap_or(65536) as i64;
    let smem_sm = p.attr(81).unwrap_or(233472) as i64;
    let warps = (block as i64 + 31) / 32;
    let mut r = (threads_sm / (warps * 32)).min(blocks_sm);
    if let Some(a) = a {
        if a.num_regs > 0 {
            r = r.min(regs_sm / (a.num_regs as i64 * warps * 32).max(1));
        }
    }
    let smem = a.map(|a| a.shared_size_bytes as i64).unwrap_or(0) + dyn_smem as i64 + 1024;
    r = r.min(smem_sm / smem.max(1));
    out(n, r.max(0) as i32)
}

pub fn occupancy_max_potential_block_size(min_grid: *mut i32, block: *mut i32, f: CUfunction, _cb: *const c_void, dyn_smem: usize, limit: i32) -> CuResult {
    let best = {
        let d = driver()?;
        let (_, fr) = function(&d, f)?;
        fr.kernel().thread_bound().unwrap_or(d.profile.max_threads_per_block()) as i32
    };
    let mut bs = best;
    if limit > 0 {
        bs = bs.min(limit);
    }
    bs = (bs / 32).max(1) * 32;
    let mut per_sm = 0;
    occupancy_max_active_blocks(&mut per_sm, f, bs, dyn_smem, 0)?;
    let sms = driver()?.profile.sm_count() as i32;
    if !min_grid.is_null() {
        out(min_grid, per_sm * sms)?;
    }
    out(block, bs)
}
