//! Kernel launches: validation exactly where the real driver validates (the call itself
//! answers configuration errors and runs nothing), parameter capture at launch time, the
//! run on the SIMT executor, and sticky execution errors: a kernel that fails makes the
//! launch return CUDA_SUCCESS (as the asynchronous launch on an H200 does) and every
//! later call of the context answer the error (measured: cuCtxSynchronize gives 710 after
//! a device assert, and so do cuMemAlloc_v2, cuMemcpyDtoH_v2, cuModuleGetFunction).

use crate::counters;
use crate::cu::*;
use crate::exec;
use crate::state::{driver, handle_id, CuResult, Tag};
use std::ffi::c_void;

pub struct Launch {
    pub f: CUfunction,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub stream: CUstream,
    pub params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// Copies the arguments into a buffer owned by the launch, so the caller may reuse its
/// storage as soon as the call returns (as on a device).
fn capture_params(l: &Launch, k: &crate::module::Kernel) -> CuResult<(Vec<u64>, Vec<*mut c_void>)> {
    let n = k.param_sizes.len();
    let words = (k.param_bytes as usize).div_ceil(8).max(1);
    let mut buf = vec![0u64; words];
    let base = buf.as_mut_ptr() as *mut u8;
    if !l.params.is_null() && !l.extra.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if !l.params.is_null() {
        for i in 0..n {
            // SAFETY: kernelParams has one pointer per parameter (API contract); each is
            // checked for null and read with its declared size, unaligned.
            unsafe {
                let p = *l.params.add(i);
                if p.is_null() {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                std::ptr::copy_nonoverlapping(p as *const u8, base.add(k.param_offsets[i] as usize), k.param_sizes[i] as usize);
            }
        }
    } else if !l.extra.is_null() {
        let (mut data, mut size): (*const u8, Option<usize>) = (std::ptr::null(), None);
        let mut i = 0;
        loop {
            // SAFETY: `extra` is a list of key/value pointers ending in CU_LAUNCH_PARAM_END.
            let key = unsafe { *l.extra.add(i) } as usize;
            match key {
                CU_LAUNCH_PARAM_END => break,
                CU_LAUNCH_PARAM_BUFFER_POINTER => data = unsafe { *l.extra.add(i + 1) } as *const u8,
                CU_LAUNCH_PARAM_BUFFER_SIZE => {
                    let sp = unsafe { *l.extra.add(i + 1) } as *const usize;
                    if sp.is_null() {
                        return Err(CUDA_ERROR_INVALID_VALUE);
                    }
                    size = Some(unsafe { sp.read_unaligned() });
                }
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
            i += 2;
            if i > 64 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        let size = size.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if data.is_null() || size < k.param_bytes as usize {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller's buffer holds `size` >= param_bytes bytes.
        unsafe { std::ptr::copy_nonoverlapping(data, base, k.param_bytes as usize) };
    } else if n > 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let ptrs = (0..n).map(|i| unsafe { base.add(k.param_offsets[i] as usize) } as *mut c_void).collect();
    Ok((buf, ptrs))
}

pub fn launch(l: Launch) -> CuResult {
    let (func, ctx, opts) = {
        let d = driver()?;
        let ctx = d.check_stream(l.stream)?;
        let id = handle_id(Tag::Function, l.f).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let func = d.functions.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.clone();
        if func.module.ctx != ctx {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        let p = d.profile;
        let (g, b) = (l.grid, l.block);
        if g.contains(&0) || b.contains(&0) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let (mb, mg) = (p.max_block(), p.max_grid());
        if (0..3).any(|i| b[i] > mb[i] || g[i] > mg[i]) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let threads = b[0] as u64 * b[1] as u64 * b[2] as u64;
        if threads > p.max_threads_per_block() as u64 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let k = func.kernel();
        let attrs = k.attrs.as_ref();
        let static_shared = attrs.map(|a| a.shared_size_bytes).unwrap_or(0);
        if l.shared > func.max_dynamic_shared || static_shared as u64 + l.shared as u64 > p.shared_per_block_optin() as u64 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // What the device's resources allow per block: __launch_bounds__ (from the
        // cubin, else from the host twin) and registers.
        let bound = k.thread_bound();
        // More threads than __launch_bounds__ allows: CUDA_ERROR_INVALID_VALUE (measured
        // on an H200; not "out of resources").
        if let Some(m) = bound {
            if threads > m as u64 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        if let Some(a) = attrs {
            if a.num_regs as u64 * threads.div_ceil(32) * 32 > p.regs_per_block() as u64 {
                return Err(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
            }
        }
        let opts = exec::ExecOptions { hazards: d.config.hazards, stack_size: d.config.stack_size, ..exec::ExecOptions::default() };
        (func, ctx, opts)
    };
    let k = func.kernel();
    let (_buf, ptrs) = capture_params(&l, k)?;
    let kref = exec::KernelRef { name: k.symbol.clone(), run: k.run, ctx_slot: func.module.ctx_slot };
    let cfg = exec::LaunchConfig { grid: l.grid, block: l.block, dyn_smem_bytes: l.shared as usize };
    let outcome = exec::launch(&kref, &cfg, &ptrs, &opts);
    let c = counters::get();
    for h in &outcome.hazards {
        let v = serde_json::to_value(h).unwrap_or_default();
        eprintln!("simtwin: hazard: {}", serde_json::to_string(&v).unwrap_or_default());
        c.hazard(v);
    }
    match outcome.result {
        Ok(()) => {
            let threads = l.block.iter().map(|&v| v as u64).product::<u64>();
            let blocks = l.grid.iter().map(|&v| v as u64).product::<u64>();
            c.launch(&k.symbol, threads * blocks, blocks);
            Ok(())
        }
        Err(failure) => {
            c.failed_launch(&k.symbol);
            crate::log_error!("kernel {} failed: {} ({})", k.symbol, crate::errors::name(failure.code), failure.message);
            // As on a device the launch itself succeeded (it is asynchronous there); the
            // error reaches the program at the next call of the context, and stays.
            if let Ok(mut d) = driver() {
                d.set_sticky(ctx, failure.code);
            }
            Ok(())
        }
    }
}
