//! Libraries (CUDA 12): cuLibraryLoadData/LoadFromFile/Unload, their kernels (CUkernel)
//! and globals. A library's image is loaded like a module (twin or PTX mode, as
//! EMU_CUDA_EXEC says) into the context current at the call, or into device 0's primary
//! context when none is (a real driver loads libraries into each context lazily; simtwin
//! runs one context per library, the case of the programs that use them). A CUkernel
//! stands for its function wherever the API takes one (cuLaunchKernel,
//! cuFuncGetAttribute, ...).

use crate::boundary::{CuResult, ImagePtr, JitOptions, Out, OutSlice, Text};
use crate::cu::*;
use crate::state::{driver, handle, handle_id, LibKernel, Library, Tag};

fn load(
    lib: Out<CUlibrary>,
    jit: JitOptions,
    libopts: JitOptions,
    parse: impl FnOnce(crate::image::Target) -> CuResult<crate::image::Image>,
) -> CuResult {
    lib.required()?;
    jit.check()?;
    libopts.check()?;
    let current = driver()?.current().ok();
    let ctx = match current {
        Some(c) => c,
        None => super::context::retain_primary(0)?,
    };
    let t0 = std::time::Instant::now();
    let module = super::module::load_into(ctx, jit.opt_level(), parse)?;
    jit.set_wall_time(t0.elapsed().as_secs_f32() * 1e3);
    let mut d = driver()?;
    let kernels = d.modules[&module].kernels.iter().map(|k| k.symbol.clone()).collect();
    let id = d.new_id();
    d.libraries.insert(id, Library { module, ctx, kernels });
    lib.set(handle(Tag::Library, id))
}

pub fn library_load_data(lib: Out<CUlibrary>, code: ImagePtr, jit: JitOptions, libopts: JitOptions) -> CuResult {
    load(lib, jit, libopts, |t| code.parse(t))
}

pub fn library_load_from_file(lib: Out<CUlibrary>, path: Text, jit: JitOptions, libopts: JitOptions) -> CuResult {
    let path = path.get()?;
    load(lib, jit, libopts, |t| crate::module::load::parse_image_file(std::path::Path::new(&path), t))
}

fn library_id(lib: CUlibrary) -> CuResult<u64> {
    handle_id(Tag::Library, lib).ok_or(CUDA_ERROR_INVALID_HANDLE)
}

pub fn library_unload(lib: CUlibrary) -> CuResult {
    let id = library_id(lib)?;
    let ctx = driver()?.libraries.get(&id).map(|l| l.ctx).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    crate::queue::force_context(ctx, "cuLibraryUnload")?;
    let mut d = driver()?;
    let l = d.libraries.remove(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.lib_kernels.retain(|_, k| k.library != id);
    crate::module::load::unload(&mut d, l.module);
    Ok(())
}

/// The kernel handle of `name` in library `id` (made, with its function handle, once).
fn kernel_handle(id: u64, name: &str) -> CuResult<u64> {
    let mut d = driver()?;
    let l = d.libraries.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if !l.kernels.iter().any(|k| k == name) {
        return Err(CUDA_ERROR_NOT_FOUND);
    }
    if let Some((&kid, _)) = d.lib_kernels.iter().find(|(_, k)| k.library == id && k.name == name) {
        return Ok(kid);
    }
    let module = l.module;
    let function = super::module::function_handle(&mut d, module, name)?;
    let kid = d.new_id();
    d.lib_kernels.insert(kid, LibKernel { library: id, name: name.to_string(), function });
    Ok(kid)
}

pub fn library_get_kernel(k: Out<CUkernel>, lib: CUlibrary, name: Text) -> CuResult {
    k.required()?;
    let name = name.get()?;
    let kid = kernel_handle(library_id(lib)?, &name)?;
    k.set(handle(Tag::Kernel, kid))
}

pub fn library_get_kernel_count(n: Out<u32>, lib: CUlibrary) -> CuResult {
    let d = driver()?;
    let l = d.libraries.get(&library_id(lib)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    n.set(l.kernels.len() as u32)
}

pub fn library_enumerate_kernels(out: OutSlice<CUkernel>, lib: CUlibrary) -> CuResult {
    let id = library_id(lib)?;
    let names = driver()?.libraries.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.kernels.clone();
    if out.len() != names.len() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut handles = Vec::with_capacity(names.len());
    for n in &names {
        handles.push(handle(Tag::Kernel, kernel_handle(id, n)?));
    }
    out.set(&handles)
}

pub fn library_get_module(m: Out<CUmodule>, lib: CUlibrary) -> CuResult {
    let d = driver()?;
    let l = d.libraries.get(&library_id(lib)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    m.set(handle(Tag::Module, l.module))
}

pub fn library_get_global(dptr: Out<CUdeviceptr>, bytes: Out<usize>, lib: CUlibrary, name: Text) -> CuResult {
    let module = {
        let d = driver()?;
        d.libraries.get(&library_id(lib)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?.module
    };
    super::module::module_get_global(dptr, bytes, handle(Tag::Module, module), name)
}

pub fn kernel_get_function(f: Out<CUfunction>, k: CUkernel) -> CuResult {
    let d = driver()?;
    let fid = d.kernel_function(k)?;
    f.set(handle(Tag::Function, fid))
}

fn lib_kernel(k: CUkernel) -> CuResult<(u64, String)> {
    let d = driver()?;
    let id = handle_id(Tag::Kernel, k).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let lk = d.lib_kernels.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    Ok((lk.library, lk.name.clone()))
}

pub fn kernel_get_library(lib: Out<CUlibrary>, k: CUkernel) -> CuResult {
    let (l, _) = lib_kernel(k)?;
    lib.set(handle(Tag::Library, l))
}

pub fn kernel_get_name(name: Out<*const std::ffi::c_char>, k: CUkernel) -> CuResult {
    lib_kernel(k)?;
    super::module::func_get_name(name, k)
}

/// cuKernelGetAttribute: the function's attribute (the device argument must be valid).
pub fn kernel_get_attribute(v: Out<i32>, attr: i32, k: CUkernel, dev: CUdevice) -> CuResult {
    driver()?.check_device(dev)?;
    super::module::func_get_attribute(v, attr, k)
}

pub fn kernel_set_attribute(attr: i32, value: i32, k: CUkernel, dev: CUdevice) -> CuResult {
    driver()?.check_device(dev)?;
    super::module::func_set_attribute(k, attr, value)
}

pub fn kernel_get_param_info(k: CUkernel, index: usize, offset: Out<usize>, size: Out<usize>) -> CuResult {
    let d = driver()?;
    let fid = d.kernel_function(k)?;
    let fr = d.functions.get(&fid).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let kernel = fr.kernel();
    if index >= kernel.param_sizes.len() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    offset.set_if_asked(kernel.param_offsets[index] as usize)?;
    size.set_if_asked(kernel.param_sizes[index] as usize)
}
