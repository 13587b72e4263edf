//! Modules, functions and launches.

use crate::boundary::{CuResult, ImagePtr, JitOptions, KernelArgs, Opaque, Out, Text};
use crate::cu::*;
use crate::launch::{self, Launch};
use crate::module::{load as module, FunctionRef};
use crate::queue;
use crate::state::Driver;
use crate::state::{driver, handle, handle_id, Tag};

/// Parses and binds the image without holding the driver's lock (scanning the kernel
/// libraries, translation and dlopen can be slow), then enters the module into the
/// current context.
fn load(m: Out<CUmodule>, opt_level: u8, parse: impl FnOnce(crate::image::Target) -> CuResult<crate::image::Image>) -> CuResult {
    let ctx = {
        let d = driver()?;
        m.required()?;
        d.current()?
    };
    let id = load_into(ctx, opt_level, parse)?;
    m.set(handle(Tag::Module, id))
}

/// Loads an image into context `ctx` (which must stay current or be the one given):
/// the module's id. `opt_level` is the JIT's optimisation level for PTX mode (0..=3).
pub(crate) fn load_into(
    ctx: u64,
    opt_level: u8,
    parse: impl FnOnce(crate::image::Target) -> CuResult<crate::image::Image>,
) -> CuResult<u64> {
    let (target, max_ptx, paths, race, exec, sm_count) = {
        let d = driver()?;
        d.context(ctx)?;
        (
            crate::image::Target { sm: d.profile.sm() },
            d.profile.max_ptx_version,
            d.config.kernels.clone(),
            d.config.checks.race,
            d.config.exec,
            d.profile.sm_count(),
        )
    };
    let img = parse(target)?;
    if let Some(v) = img.ptx_version.filter(|&v| v > max_ptx) {
        crate::log_error!(
            "module image: the entry the device would run is PTX .version {}.{}, newer than this driver's ISA {}.{} (as on the device: CUDA_ERROR_UNSUPPORTED_PTX_VERSION); embed sm_{} code (-gencode arch=compute_{},code=sm_{}) or use an nvcc no newer than the driver",
            v.0, v.1, max_ptx.0, max_ptx.1, target.sm, target.sm, target.sm
        );
        return Err(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    }
    let prepared = crate::module::choose::prepare_any(&paths, img, race, exec, sm_count, opt_level)?;
    let mut d = driver()?;
    if d.context(ctx).is_err() {
        module::discard(prepared);
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    Ok(module::insert(&mut d, ctx, prepared))
}

pub fn module_load_data(m: Out<CUmodule>, image: ImagePtr) -> CuResult {
    load(m, simtwin_ptx::contract::DEFAULT_OPT_LEVEL, |t| module::parse_image_ptr(image, t))
}

/// JIT options are read for validity (non-null arrays when a count is given); of them
/// PTX mode honours CU_JIT_OPTIMIZATION_LEVEL (0: ptxas contracts no mul+add into FMA)
/// and CU_JIT_WALL_TIME.
pub fn module_load_data_ex(m: Out<CUmodule>, image: ImagePtr, jit: JitOptions) -> CuResult {
    jit.check()?;
    let t0 = std::time::Instant::now();
    load(m, jit.opt_level(), |t| module::parse_image_ptr(image, t))?;
    jit.set_wall_time(t0.elapsed().as_secs_f32() * 1e3);
    Ok(())
}

pub fn module_load_fat_binary(m: Out<CUmodule>, image: ImagePtr) -> CuResult {
    module_load_data(m, image)
}

pub fn module_load(m: Out<CUmodule>, fname: Text) -> CuResult {
    let path = fname.get()?;
    load(m, simtwin_ptx::contract::DEFAULT_OPT_LEVEL, |t| module::parse_image_file(std::path::Path::new(&path), t))
}

/// A module handle's id, checked against its own context (module calls take the context
/// from the handle: they succeed with none current, as on an H200).
fn module_id(d: &Driver, m: CUmodule) -> CuResult<u64> {
    let id = handle_id(Tag::Module, m).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let module = d.modules.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.context(module.ctx)?;
    Ok(id)
}

pub fn module_unload(m: CUmodule) -> CuResult {
    let ctx = {
        let d = driver()?;
        d.modules[&module_id(&d, m)?].ctx
    };
    // Work that may still use the module's code or globals runs first.
    queue::force_context(ctx, "cuModuleUnload")?;
    let mut d = driver()?;
    let id = module_id(&d, m)?;
    module::unload(&mut d, id);
    Ok(())
}

pub fn module_get_function(f: Out<CUfunction>, m: CUmodule, name: Text) -> CuResult {
    let mut d = driver()?;
    f.required()?;
    let name = name.get()?;
    let mid = module_id(&d, m)?;
    // A kernel the device's driver cannot compile: the first request answers its code
    // (lazy loading compiles the kernel here); later ones give a handle whose launch
    // answers CUDA_ERROR_UNKNOWN (H200, driver 580: ptx_txq_lazy).
    if let Some(r) = d.modules.get(&mid).and_then(|mm| mm.kernels.iter().find(|k| k.symbol == name)).and_then(|k| k.refused.clone()) {
        if !r.told.swap(true, std::sync::atomic::Ordering::Relaxed) {
            crate::log_error!("cuModuleGetFunction({name}): {}", r.message);
            return Err(r.code);
        }
    }
    let fid = function_handle(&mut d, mid, &name)?;
    f.set(handle(Tag::Function, fid))
}

/// The function handle of kernel `name` of module `mid` (the same name gives the same
/// handle): CUDA_ERROR_NOT_FOUND when the module has no such kernel.
pub(crate) fn function_handle(d: &mut Driver, mid: u64, name: &str) -> CuResult<u64> {
    let mm = d.modules.get(&mid).ok_or(CUDA_ERROR_INVALID_HANDLE)?.clone();
    let index = mm.kernels.iter().position(|k| k.symbol == name).ok_or(CUDA_ERROR_NOT_FOUND)?;
    let existing = mm.handles.lock().unwrap_or_else(|e| e.into_inner()).get(name).copied();
    Ok(match existing {
        Some(fid) => fid,
        None => {
            let fid = d.new_id();
            let max_dyn = d.profile.shared_per_block().saturating_sub(mm.kernels[index].static_shared());
            d.functions.insert(
                fid,
                FunctionRef { module_id: mid, module: mm.clone(), index, max_dynamic_shared: max_dyn, carveout: -1, cache_config: 0 },
            );
            mm.handles.lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_string(), fid);
            fid
        }
    })
}

pub fn module_get_function_count(count: Out<u32>, m: CUmodule) -> CuResult {
    let d = driver()?;
    let id = module_id(&d, m)?;
    count.set(d.modules[&id].kernels.len() as u32)
}

pub fn module_get_global(dptr: Out<CUdeviceptr>, bytes: Out<usize>, m: CUmodule, name: Text) -> CuResult {
    let d = driver()?;
    let name = name.get()?;
    let id = module_id(&d, m)?;
    let (addr, size) = *d.modules[&id].globals.get(&name).ok_or(CUDA_ERROR_NOT_FOUND)?;
    dptr.set_if_asked(addr)?;
    bytes.set_if_asked(size as usize)
}

/// A function handle, checked against its module's context (function calls take the
/// context from the handle, as on an H200).
fn function(d: &Driver, f: CUfunction) -> CuResult<(u64, &FunctionRef)> {
    let id = match handle_id(Tag::Function, f) {
        Some(id) => id,
        // A library's kernel (CUkernel) stands for its function where the API allows it.
        None => d.kernel_function(f)?,
    };
    let fr = d.functions.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.context(fr.module.ctx)?;
    Ok((id, fr))
}

pub fn func_get_attribute(v: Out<i32>, attr: i32, f: CUfunction) -> CuResult {
    let d = driver()?;
    v.required()?;
    let (_, fr) = function(&d, f)?;
    let k = fr.kernel();
    let a = k.attrs.as_ref();
    let sm = d.profile.sm() as i32;
    let bound = k.thread_bound().unwrap_or(d.profile.max_threads_per_block()) as i32;
    let value = match attr {
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => bound,
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => k.static_shared() as i32,
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
    v.set(value)
}

pub fn func_set_attribute(f: CUfunction, attr: i32, value: i32) -> CuResult {
    let mut d = driver()?;
    let optin = d.profile.shared_per_block_optin();
    let (id, fr) = function(&d, f)?;
    let static_shared = fr.kernel().static_shared();
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
    let (id, _) = function(&d, f)?;
    if cfg > 3 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.functions.get_mut(&id).unwrap().cache_config = cfg;
    Ok(())
}

pub fn func_set_shared_mem_config(f: CUfunction, cfg: u32) -> CuResult {
    let d = driver()?;
    function(&d, f)?;
    if cfg > 2 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

pub fn func_get_name(name: Out<*const std::ffi::c_char>, f: CUfunction) -> CuResult {
    let d = driver()?;
    name.required()?;
    let (_, fr) = function(&d, f)?;
    // Names live as long as the module: intern them as C strings for the caller.
    static NAMES: std::sync::Mutex<Vec<std::ffi::CString>> = std::sync::Mutex::new(Vec::new());
    let c = std::ffi::CString::new(fr.kernel().symbol.clone()).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(existing) = names.iter().find(|n| **n == c) {
        return name.set(existing.as_ptr());
    }
    names.push(c);
    name.set(names.last().expect("just pushed").as_ptr())
}

pub fn func_get_module(m: Out<CUmodule>, f: CUfunction) -> CuResult {
    let d = driver()?;
    let (_, fr) = function(&d, f)?;
    m.set(handle(Tag::Module, fr.module_id))
}

/// cuLaunchKernel's grid, block, shared-memory and stream arguments.
pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub stream: CUstream,
}

/// Validates the launch now (configuration errors are the call's answer) and submits it
/// to its stream (run at once, or when forced with EMU_CUDA_ASYNC=deferred).
fn submit_launch(l: Launch, name: &str) -> CuResult {
    let stream = l.stream;
    if crate::api::graph::active() {
        let key = queue::key(&*driver()?, stream)?;
        if crate::api::graph::involved(key) {
            // A launch on a capturing stream becomes a kernel node (a cooperative one runs
            // as one when the graph does).
            let p = crate::boundary::KernelNodeIn {
                func: l.f,
                kern: std::ptr::null_mut(),
                grid: l.grid,
                block: l.block,
                shared: l.shared,
                args: l.args,
            };
            let cooperative = l.cooperative;
            return crate::api::graph::capture(key, move || {
                crate::api::graph::kernel_node(p, stream).map(|mut k| {
                    k.cooperative = cooperative;
                    crate::api::graph::Op::Kernel(k)
                })
            })
            .unwrap_or(Ok(()));
        }
    }
    let eager = !queue::deferred();
    let p = launch::prepare(l, eager)?;
    if eager {
        // Eager: what `queue::submit` would do, without moving the launch into a work item.
        return launch::run(p);
    }
    // The origin names deferred work in reports (a launch that runs at once needs none:
    // building it sums every entry point's call counter and formats a string).
    // The stream's context was found by the validation (under the same hold of the lock).
    let key = queue::key_of(p.ctx(), stream);
    queue::submit(key, queue::Work::Launch(p), &queue::origin(name))
}

pub fn launch_kernel(f: CUfunction, shape: Shape, args: KernelArgs) -> CuResult {
    submit_launch(
        Launch { f, grid: shape.grid, block: shape.block, shared: shape.shared, stream: shape.stream, args, cooperative: false },
        "cuLaunchKernel",
    )
}

/// cuLaunchCooperativeKernel: a launch whose blocks must all be resident at once
/// (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE otherwise) and that gets a grid workspace,
/// so that cooperative_groups' grid sync works. It takes kernelParams only (no `extra`).
pub fn launch_cooperative_kernel(f: CUfunction, shape: Shape, args: KernelArgs) -> CuResult {
    submit_launch(
        Launch { f, grid: shape.grid, block: shape.block, shared: shape.shared, stream: shape.stream, args, cooperative: true },
        "cuLaunchCooperativeKernel",
    )
}

/// cuLaunchKernelEx: the config and its attributes, copied at the boundary.
pub fn launch_kernel_ex(cfg: Option<(CUlaunchConfig, Option<Vec<CUlaunchAttribute>>)>, f: CUfunction, args: KernelArgs) -> CuResult {
    let (c, attrs) = cfg.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let attrs = attrs.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let mut cooperative = false;
    for a in &attrs {
        // Attributes that change nothing observable on one emulated device are accepted
        // (1 access policy, 3 sync policy, 8 priority); 2 (COOPERATIVE, an int: nonzero
        // makes it a cooperative launch, as cuLaunchCooperativeKernel); clusters are not
        // emulated.
        match a.id {
            1 | 3 | 8 => {}
            2 => cooperative = a.value[0] as u32 != 0,
            _ => {
                crate::log_warn!("cuLaunchKernelEx: launch attribute {} is not emulated", a.id);
                return Err(CUDA_ERROR_NOT_SUPPORTED);
            }
        }
    }
    submit_launch(
        Launch {
            f,
            grid: [c.grid_dim_x, c.grid_dim_y, c.grid_dim_z],
            block: [c.block_dim_x, c.block_dim_y, c.block_dim_z],
            shared: c.shared_mem_bytes,
            stream: c.h_stream,
            args,
            cooperative,
        },
        "cuLaunchKernelEx",
    )
}

/// Active blocks per SM by the profile's limits: threads, registers, shared memory.
fn active_blocks(d: &Driver, f: CUfunction, block: i32, dyn_smem: usize) -> CuResult<i32> {
    let (_, fr) = function(d, f)?;
    if block <= 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = d.profile;
    let a = fr.kernel().attrs.as_ref();
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
    let smem = fr.kernel().static_shared() as i64 + dyn_smem as i64 + 1024;
    r = r.min(smem_sm / smem.max(1));
    Ok(r.max(0) as i32)
}

pub fn occupancy_max_active_blocks(n: Out<i32>, f: CUfunction, block: i32, dyn_smem: usize, _flags: u32) -> CuResult {
    let d = driver()?;
    d.current()?;
    n.required()?;
    n.set(active_blocks(&d, f, block, dyn_smem)?)
}

pub fn occupancy_max_potential_block_size(
    min_grid: Out<i32>,
    block: Out<i32>,
    f: CUfunction,
    _cb: Opaque,
    dyn_smem: usize,
    limit: i32,
) -> CuResult {
    let best = {
        let d = driver()?;
        d.current()?;
        let (_, fr) = function(&d, f)?;
        fr.kernel().thread_bound().unwrap_or(d.profile.max_threads_per_block()) as i32
    };
    let mut bs = best;
    if limit > 0 {
        bs = bs.min(limit);
    }
    bs = (bs / 32).max(1) * 32;
    let d = driver()?;
    let per_sm = active_blocks(&d, f, bs, dyn_smem)?;
    let sms = d.profile.sm_count() as i32;
    min_grid.set_if_asked(per_sm * sms)?;
    block.set(bs)
}
