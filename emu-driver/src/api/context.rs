//! Contexts: primary (retained per device) and created ones, the per-thread current
//! stack, limits and configuration.

use crate::boundary::{CuResult, Out};
use crate::cu::*;
use crate::state::{ctx_stack, driver, handle, Context, Driver, Tag};
use std::collections::HashMap;

fn new_context(d: &mut Driver, dev: CUdevice, flags: u32, primary: bool) -> u64 {
    let id = d.new_id();
    d.contexts.insert(
        id,
        Context {
            device: dev,
            flags,
            primary,
            sticky: None,
            limits: default_limits(),
            cache_config: 0,
            shared_config: 0,
            grid_workspace: None,
        },
    );
    id
}

/// Frees everything context `ctx` owns (destroy, primary release to zero, primary
/// reset); with `report`, what the program left behind is counted as leaks.
fn release_owned(d: &mut Driver, ctx: u64, report: bool) {
    let counters = crate::counters::get();
    let leaked: Vec<u64> =
        d.allocs.values().filter(|a| a.ctx == ctx && a.kind != crate::state::AllocKind::ModuleGlobal).map(|a| a.base).collect();
    for base in leaked {
        if let (true, Some(a)) = (report, d.allocs.get(&base)) {
            let msg = format!("{} allocation of {} bytes at {:#x} still live at context destroy", a.kind.name(), a.size, a.base);
            crate::log_info!("leak: {msg}");
            let (pinned, size) = (a.kind == crate::state::AllocKind::PinnedHost, a.size);
            counters.leaked_allocation(pinned, size, msg);
        }
        let _ = crate::memory::release(d, base);
    }
    let mods: Vec<u64> = d.modules.iter().filter(|(_, m)| m.ctx == ctx).map(|(k, _)| *k).collect();
    for m in mods {
        if report {
            counters.leak(|l| l.modules += 1, format!("module {m} still loaded at context destroy"));
        }
        crate::module::load::unload(d, m);
    }
    let streams: Vec<u64> = d.streams.iter().filter(|(_, s)| s.ctx == ctx).map(|(k, _)| *k).collect();
    for s in streams {
        if report {
            counters.leak(|l| l.streams += 1, format!("stream {s} not destroyed at context destroy"));
        }
        d.streams.remove(&s);
    }
    let events: Vec<u64> = d.events.iter().filter(|(_, e)| e.ctx == ctx).map(|(k, _)| *k).collect();
    for e in events {
        if report {
            counters.leak(|l| l.events += 1, format!("event {e} not destroyed at context destroy"));
        }
        d.events.remove(&e);
    }
    d.contexts.remove(&ctx);
}

fn default_limits() -> HashMap<u32, u64> {
    HashMap::from([
        (CU_LIMIT_STACK_SIZE, 1024),
        (CU_LIMIT_PRINTF_FIFO_SIZE, 1 << 20),
        (CU_LIMIT_MALLOC_HEAP_SIZE, 8 << 20),
        (CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 2),
        (CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 2048),
        (CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 32),
        (CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0),
    ])
}

const CTX_FLAGS_MASK: u32 = 0x1f | 0x20 | 0x40 | 0x80 | 0x100;

pub fn ctx_create(pctx: Out<CUcontext>, flags: u32, dev: CUdevice) -> CuResult {
    let mut d = driver()?;
    pctx.required()?;
    d.check_device(dev)?;
    if flags & !CTX_FLAGS_MASK != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // After a sticky error in any context of the device no new context is made: the
    // H200 answers cuCtxCreate with that error (`sticky_*_then_*`), as it does
    // cuDevicePrimaryCtxRetain.
    if let Some(code) = d.primary[dev as usize].poisoned {
        return Err(code);
    }
    let id = new_context(&mut d, dev, flags, false);
    ctx_stack(|s| s.push(id));
    pctx.set(handle(Tag::Context, id))
}

pub fn ctx_create_v3(pctx: Out<CUcontext>, num: i32, flags: u32, dev: CUdevice) -> CuResult {
    if num != 0 {
        // Execution-affinity parameters (SM partitions) do not exist on the emulated device.
        return Err(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
    }
    ctx_create(pctx, flags, dev)
}

pub fn ctx_create_v4(pctx: Out<CUcontext>, params: Option<CUctxCreateParams>, flags: u32, dev: CUdevice) -> CuResult {
    if let Some(p) = params {
        if p.num_exec_affinity_params != 0 {
            return Err(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
        }
        if !p.cig_params.is_null() {
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
    }
    ctx_create(pctx, flags, dev)
}

pub fn ctx_destroy(ctx: CUcontext) -> CuResult {
    if ctx.is_null() {
        // Measured on an H200 (`sticky_created_then_primary`): NULL is an invalid value,
        // not an invalid context.
        driver()?;
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let id = driver()?.ctx_from_handle(ctx)?;
    let _ = crate::queue::force_context(id, "cuCtxDestroy");
    let mut d = driver()?;
    let id = d.ctx_from_handle(ctx)?;
    if d.contexts[&id].primary {
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    release_owned(&mut d, id, true);
    ctx_stack(|s| s.retain(|&c| c != id));
    Ok(())
}

pub fn ctx_push(ctx: CUcontext) -> CuResult {
    let d = driver()?;
    let id = d.ctx_from_handle(ctx)?;
    ctx_stack(|s| s.push(id));
    Ok(())
}

pub fn ctx_pop(pctx: Out<CUcontext>) -> CuResult {
    let _d = driver()?;
    let top = ctx_stack(|s| s.pop()).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
    pctx.set_if_asked(handle(Tag::Context, top))
}

pub fn ctx_get_current(pctx: Out<CUcontext>) -> CuResult {
    let d = driver()?;
    pctx.required()?;
    let cur = ctx_stack(|s| s.last().copied()).filter(|id| d.contexts.contains_key(id));
    pctx.set(cur.map(|id| handle(Tag::Context, id)).unwrap_or(std::ptr::null_mut()))
}

pub fn ctx_set_current(ctx: CUcontext) -> CuResult {
    let d = driver()?;
    if ctx.is_null() {
        ctx_stack(|s| {
            s.pop();
        });
        return Ok(());
    }
    let id = d.ctx_from_handle(ctx)?;
    ctx_stack(|s| {
        s.pop();
        s.push(id);
    });
    Ok(())
}

pub fn ctx_get_device(dev: Out<CUdevice>) -> CuResult {
    let d = driver()?;
    let id = d.current_unchecked()?;
    dev.set(d.contexts[&id].device)
}

/// cuCtxGetDevice_v2: the device of `ctx`, or of the current context when null.
pub fn ctx_get_device_v2(dev: Out<CUdevice>, ctx: CUcontext) -> CuResult {
    let d = driver()?;
    let id = if ctx.is_null() { d.current_unchecked()? } else { d.ctx_from_handle(ctx)? };
    dev.set(d.contexts[&id].device)
}

pub fn ctx_get_flags(flags: Out<u32>) -> CuResult {
    let d = driver()?;
    let id = d.current_unchecked()?;
    flags.set(d.contexts[&id].flags)
}

pub fn ctx_set_flags(flags: u32) -> CuResult {
    let mut d = driver()?;
    let id = d.current()?;
    if flags & !CTX_FLAGS_MASK != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.contexts.get_mut(&id).unwrap().flags = flags;
    Ok(())
}

pub fn ctx_get_id(ctx: CUcontext, idp: Out<u64>) -> CuResult {
    let d = driver()?;
    let id = if ctx.is_null() { d.current_unchecked()? } else { d.ctx_from_handle(ctx)? };
    idp.set(id)
}

pub fn ctx_get_api_version(ctx: CUcontext, v: Out<u32>) -> CuResult {
    let d = driver()?;
    if ctx.is_null() {
        d.current_unchecked()?;
    } else {
        d.ctx_from_handle(ctx)?;
    }
    v.set(3020)
}

/// cuCtxSynchronize_v2: waits for `ctx`'s work, or the current context's when null.
pub fn ctx_synchronize_v2(ctx: CUcontext) -> CuResult {
    if ctx.is_null() {
        return ctx_synchronize();
    }
    let id = {
        let d = driver()?;
        let id = d.ctx_from_handle(ctx)?;
        d.context(id)?
    };
    crate::api::graph::sync_context(id, "cuCtxSynchronize_v2")?;
    crate::queue::force_context(id, "cuCtxSynchronize_v2")?;
    driver()?.context(id)?;
    crate::counters::get().sync();
    crate::counters_file::checkpoint();
    Ok(())
}

pub fn ctx_synchronize() -> CuResult {
    let ctx = driver()?.current()?;
    crate::api::graph::sync_context(ctx, "cuCtxSynchronize")?;
    crate::queue::force_context(ctx, "cuCtxSynchronize")?;
    let d = driver()?;
    d.current()?;
    crate::counters::get().sync();
    crate::counters_file::checkpoint();
    Ok(())
}

pub fn ctx_set_limit(limit: u32, value: usize) -> CuResult {
    let mut d = driver()?;
    let id = d.current()?;
    let ctx = d.contexts.get_mut(&id).unwrap();
    match ctx.limits.get_mut(&limit) {
        Some(v) => {
            *v = value as u64;
            Ok(())
        }
        None => Err(CUDA_ERROR_UNSUPPORTED_LIMIT),
    }
}

pub fn ctx_get_limit(value: Out<usize>, limit: u32) -> CuResult {
    let d = driver()?;
    let id = d.current()?;
    let v = *d.contexts[&id].limits.get(&limit).ok_or(CUDA_ERROR_UNSUPPORTED_LIMIT)?;
    value.set(v as usize)
}

pub fn ctx_get_cache_config(cfg: Out<u32>) -> CuResult {
    let d = driver()?;
    let id = d.current()?;
    cfg.set(d.contexts[&id].cache_config)
}

pub fn ctx_set_cache_config(cfg: u32) -> CuResult {
    let mut d = driver()?;
    let id = d.current()?;
    if cfg > 3 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.contexts.get_mut(&id).unwrap().cache_config = cfg;
    Ok(())
}

pub fn ctx_get_shared_mem_config(cfg: Out<u32>) -> CuResult {
    let d = driver()?;
    let id = d.current()?;
    cfg.set(d.contexts[&id].shared_config)
}

pub fn ctx_set_shared_mem_config(cfg: u32) -> CuResult {
    let mut d = driver()?;
    let id = d.current()?;
    if cfg > 2 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.contexts.get_mut(&id).unwrap().shared_config = cfg;
    Ok(())
}

/// The H200 answers least 0, greatest -5.
pub fn ctx_get_stream_priority_range(least: Out<i32>, greatest: Out<i32>) -> CuResult {
    let d = driver()?;
    d.current()?;
    least.set_if_asked(0)?;
    greatest.set_if_asked(-5)
}

pub fn primary_retain(pctx: Out<CUcontext>, dev: CUdevice) -> CuResult {
    pctx.required()?;
    let id = retain_primary(dev)?;
    pctx.set(handle(Tag::Context, id))
}

/// Retains device `dev`'s primary context (made if needed): its id.
pub(crate) fn retain_primary(dev: CUdevice) -> CuResult<u64> {
    let mut d = driver()?;
    d.check_device(dev)?;
    if let Some(code) = d.primary[dev as usize].poisoned {
        return Err(code);
    }
    let existing = d.primary[dev as usize].ctx.filter(|id| d.contexts.contains_key(id));
    let id = match existing {
        Some(id) => id,
        None => {
            let flags = d.primary[dev as usize].flags;
            let id = new_context(&mut d, dev, flags, true);
            d.primary[dev as usize].ctx = Some(id);
            id
        }
    };
    d.primary[dev as usize].refcount += 1;
    Ok(id)
}

pub fn primary_release(dev: CUdevice) -> CuResult {
    let mut d = driver()?;
    d.check_device(dev)?;
    let p = &mut d.primary[dev as usize];
    if p.refcount == 0 {
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    p.refcount -= 1;
    if p.refcount == 0 {
        if let Some(id) = p.ctx.take() {
            drop(d);
            let _ = crate::queue::force_context(id, "cuDevicePrimaryCtxRelease");
            let mut d = driver()?;
            release_owned(&mut d, id, true);
            ctx_stack(|s| s.retain(|&c| c != id));
        }
    }
    Ok(())
}

pub fn primary_set_flags(dev: CUdevice, flags: u32) -> CuResult {
    let mut d = driver()?;
    d.check_device(dev)?;
    if flags & !CTX_FLAGS_MASK != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.primary[dev as usize].flags = flags;
    if let Some(id) = d.primary[dev as usize].ctx {
        if let Some(c) = d.contexts.get_mut(&id) {
            c.flags = flags;
        }
    }
    Ok(())
}

pub fn primary_get_state(dev: CUdevice, flags: Out<u32>, active: Out<i32>) -> CuResult {
    let d = driver()?;
    d.check_device(dev)?;
    let p = &d.primary[dev as usize];
    flags.set(p.flags)?;
    active.set((p.refcount > 0) as i32)
}

/// Destroys the primary context with every allocation in it. Handles retained before
/// now name a destroyed context (CUDA_ERROR_CONTEXT_IS_DESTROYED, as on an H200); the
/// next retain creates a fresh one unless a sticky error poisoned the device.
pub fn primary_reset(dev: CUdevice) -> CuResult {
    let mut d = driver()?;
    d.check_device(dev)?;
    if let Some(id) = d.primary[dev as usize].ctx.take() {
        // The calling thread keeps the stale handle current (its calls then answer
        // CUDA_ERROR_CONTEXT_IS_DESTROYED, as on a device).
        release_owned(&mut d, id, false);
    }
    d.primary[dev as usize].refcount = 0;
    Ok(())
}
