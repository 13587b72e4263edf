//! The trace in pass-through (EMU_CUDA_REAL): device memory is the real device's, so
//! after a traced launch the driver synchronises the launch's stream and copies every
//! buffer the launch could have written back to the host (cuStreamSynchronize,
//! cuMemcpyDtoH_v2 of the real driver; pinned host memory is read in place), and an
//! asynchronous device-to-host copy is hashed after synchronising its stream. That is
//! what tracing costs here: the time goes to the end record's `copy_back_us`.
//!
//! The parameter layout comes from the real cuFuncGetParamInfo (CUDA 12.4 and later);
//! a driver without it gives no layout, and the launch's buffers are then every live
//! allocation. Module globals are those the program looked up with cuModuleGetGlobal
//! (the pass-through does not parse images).

use super::{pointer_words, with, LaunchFacts, Target, Timer};
use crate::cu::*;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_char, c_void};
use std::sync::Mutex;
use std::time::Instant;

/// The real driver's symbol lookup, handed in by the pass-through.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<usize>;

#[derive(Default)]
struct State {
    /// Live allocations: base -> (bytes, pinned host).
    allocs: BTreeMap<u64, (u64, bool)>,
    /// Module -> globals the program looked up: (symbol, address, bytes).
    globals: HashMap<usize, Vec<(String, u64, u64)>>,
    /// Function -> its parameter layout (None: the driver cannot say).
    layouts: HashMap<usize, Option<Vec<[u32; 2]>>>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn find(s: &State, p: u64) -> Option<(u64, u64, bool)> {
    let (&base, &(size, pinned)) = s.allocs.range(..=p).next_back()?;
    (p < base + size.max(1)).then_some((base, size, pinned))
}

/// Reads a `T` the program passed (or the real driver wrote) at `p`; None for null.
fn read<T: Copy>(p: u64) -> Option<T> {
    // SAFETY: a pointer argument of a call the real driver accepted (checked non-null).
    (p != 0).then(|| unsafe { (p as *const T).read_unaligned() })
}

/// One forwarded call that succeeded (arguments as register words): allocations,
/// globals, launches, copies and synchronisations update the trace.
pub fn forwarded(name: &str, a: &[u64], lookup: Lookup) {
    if !super::enabled() {
        return;
    }
    let base = name.trim_end_matches("_ptds").trim_end_matches("_ptsz");
    let arg = |i: usize| a.get(i).copied().unwrap_or(0);
    let mut g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let s = g.get_or_insert_with(State::default);
    match base {
        "cuMemAlloc_v2" | "cuMemAllocManaged" | "cuMemAllocAsync" | "cuMemAllocFromPoolAsync" | "cuMemHostAlloc" | "cuMemAllocHost_v2" => {
            let Some(p) = read::<u64>(arg(0)) else { return };
            s.allocs.insert(p, (arg(1), matches!(base, "cuMemHostAlloc" | "cuMemAllocHost_v2")));
            super::allocated(p);
        }
        "cuMemAllocPitch_v2" => {
            let (Some(p), Some(pitch)) = (read::<u64>(arg(0)), read::<usize>(arg(1))) else { return };
            s.allocs.insert(p, (pitch as u64 * arg(3), false));
            super::allocated(p);
        }
        "cuMemFree_v2" | "cuMemFreeHost" | "cuMemFreeAsync" => {
            s.allocs.remove(&arg(0));
            super::released(arg(0));
        }
        "cuModuleGetGlobal_v2" => {
            // Either out-pointer may be null: ask the real driver for both.
            let Some((p, size)) = global(lookup, arg(2), arg(3)) else { return };
            // SAFETY: the program's NUL-terminated variable name.
            let n = unsafe { simtwin_abi::ffi::c_str(arg(3) as *const c_char) };
            let list = s.globals.entry(arg(2) as usize).or_default();
            if !list.iter().any(|(m, _, _)| *m == n) {
                list.push((n, p, size as u64));
            }
        }
        "cuLaunchKernel" => {
            let grid = [arg(1) as u32, arg(2) as u32, arg(3) as u32];
            let block = [arg(4) as u32, arg(5) as u32, arg(6) as u32];
            launch(s, lookup, arg(0) as usize, grid, block, arg(7) as u32, arg(8), arg(9), arg(10));
        }
        "cuLaunchCooperativeKernel" => {
            let grid = [arg(1) as u32, arg(2) as u32, arg(3) as u32];
            let block = [arg(4) as u32, arg(5) as u32, arg(6) as u32];
            launch(s, lookup, arg(0) as usize, grid, block, arg(7) as u32, arg(8), arg(9), 0);
        }
        "cuLaunchKernelEx" => {
            let Some(c) = read::<CUlaunchConfig>(arg(0)) else { return };
            let grid = [c.grid_dim_x, c.grid_dim_y, c.grid_dim_z];
            let block = [c.block_dim_x, c.block_dim_y, c.block_dim_z];
            launch(s, lookup, arg(1) as usize, grid, block, c.shared_mem_bytes, c.h_stream as u64, arg(2), arg(3));
        }
        "cuMemcpyHtoD_v2" | "cuMemcpyHtoDAsync_v2" => super::htod(),
        "cuMemcpyDtoH_v2" => d2h(s, arg(1), arg(0), None, arg(2), None, lookup),
        "cuMemcpyDtoHAsync_v2" => d2h(s, arg(1), arg(0), None, arg(2), Some(arg(3)), lookup),
        "cuMemcpy" | "cuMemcpyAsync" => {
            let (dst_dev, src_dev) = (find(s, arg(0)).is_some_and(|f| !f.2), find(s, arg(1)).is_some_and(|f| !f.2));
            let stream = (base == "cuMemcpyAsync").then(|| arg(3));
            match (src_dev, dst_dev) {
                (true, false) => d2h(s, arg(1), arg(0), None, arg(2), stream, lookup),
                (false, true) => super::htod(),
                _ => {}
            }
        }
        "cuMemcpy2D_v2" | "cuMemcpy2DAsync_v2" | "cuMemcpy2DUnaligned_v2" => {
            let Some(m) = read::<CUDA_MEMCPY2D>(arg(0)) else { return };
            let stream = (base == "cuMemcpy2DAsync_v2").then(|| arg(1));
            match (m.src_memory_type, m.dst_memory_type) {
                (CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST) => {
                    let dst = m.dst_host as u64 + (m.dst_y * m.dst_pitch + m.dst_x_in_bytes) as u64;
                    let src = m.src_device + (m.src_y * m.src_pitch + m.src_x_in_bytes) as u64;
                    let rows = Some((m.dst_pitch as u64, m.width_in_bytes as u64, m.height as u64));
                    d2h(s, src, dst, rows, (m.width_in_bytes * m.height) as u64, stream, lookup);
                }
                (CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE) => super::htod(),
                _ => {}
            }
        }
        "cuStreamSynchronize" | "cuCtxSynchronize" | "cuEventSynchronize" => super::synchronized(),
        _ => {}
    }
}

/// A module global's address and size from the real cuModuleGetGlobal_v2.
fn global(lookup: Lookup, module: u64, name: u64) -> Option<(u64, usize)> {
    type F = unsafe extern "C" fn(*mut u64, *mut usize, u64, *const c_char) -> CUresult;
    let f = lookup("cuModuleGetGlobal_v2")?;
    let (mut p, mut size) = (0u64, 0usize);
    // SAFETY: the real cuModuleGetGlobal_v2 with two out-pointers and the module and
    // NUL-terminated name the program just passed to it successfully.
    let r = unsafe { std::mem::transmute::<usize, F>(f)(&mut p, &mut size, module, name as *const c_char) };
    (r == CUDA_SUCCESS && p != 0).then_some((p, size))
}

/// Synchronises a stream of the real driver; the time goes to `copy_back_us`.
fn sync(lookup: Lookup, stream: u64) -> bool {
    type F = unsafe extern "C" fn(u64) -> CUresult;
    let Some(f) = lookup("cuStreamSynchronize") else { return false };
    // SAFETY: the real cuStreamSynchronize with a stream handle the program used.
    unsafe { std::mem::transmute::<usize, F>(f)(stream) == CUDA_SUCCESS }
}

/// Copies `len` device bytes at `src` into `out` through the real driver, in the
/// allocation's own context (pushed for the copy: the program's thread may have none
/// current when it launches on a stream).
fn copy_back(lookup: Lookup, src: u64, len: u64, out: &mut Vec<u8>) -> bool {
    type Copy = unsafe extern "C" fn(*mut c_void, u64, usize) -> CUresult;
    type Attr = unsafe extern "C" fn(*mut c_void, u32, u64) -> CUresult;
    type Push = unsafe extern "C" fn(usize) -> CUresult;
    type Pop = unsafe extern "C" fn(*mut usize) -> CUresult;
    let (Some(f), Some(attr), Some(push), Some(pop)) =
        (lookup("cuMemcpyDtoH_v2"), lookup("cuPointerGetAttribute"), lookup("cuCtxPushCurrent_v2"), lookup("cuCtxPopCurrent_v2"))
    else {
        return false;
    };
    let mut ctx = 0usize;
    // SAFETY: the real cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_CONTEXT) with an
    // out-pointer to a context handle.
    let pushed = unsafe { std::mem::transmute::<usize, Attr>(attr)(&mut ctx as *mut usize as *mut c_void, CU_POINTER_ATTRIBUTE_CONTEXT, src) } == CUDA_SUCCESS
        // SAFETY: the real cuCtxPushCurrent_v2 with the context the driver just named.
        && ctx != 0 && unsafe { std::mem::transmute::<usize, Push>(push)(ctx) } == CUDA_SUCCESS;
    out.resize(len as usize, 0);
    // SAFETY: the real cuMemcpyDtoH_v2 into a host buffer of `len` bytes.
    let ok = unsafe { std::mem::transmute::<usize, Copy>(f)(out.as_mut_ptr() as *mut c_void, src, len as usize) } == CUDA_SUCCESS;
    if pushed {
        let mut was = 0usize;
        // SAFETY: the real cuCtxPopCurrent_v2 undoing the push above.
        unsafe { std::mem::transmute::<usize, Pop>(pop)(&mut was) };
    }
    ok
}

/// A function's parameter layout from the real cuFuncGetParamInfo (None if it has none).
fn layout(lookup: Lookup, f: usize) -> Option<Vec<[u32; 2]>> {
    type F = unsafe extern "C" fn(usize, usize, *mut usize, *mut usize) -> CUresult;
    let g = lookup("cuFuncGetParamInfo")?;
    let mut out = Vec::new();
    for i in 0..4096usize {
        let (mut off, mut size) = (0usize, 0usize);
        // SAFETY: the real cuFuncGetParamInfo with two out-pointers to usize.
        let r = unsafe { std::mem::transmute::<usize, F>(g)(f, i, &mut off, &mut size) };
        if r != CUDA_SUCCESS {
            // Past the last parameter: CUDA_ERROR_INVALID_VALUE; anything at index 0
            // other than that means the driver cannot say.
            return (i > 0 || r == CUDA_ERROR_INVALID_VALUE).then_some(out);
        }
        out.push([off as u32, size as u32]);
    }
    Some(out)
}

/// The kernel name (cuFuncGetName) and module (cuFuncGetModule) of a function.
fn name_and_module(lookup: Lookup, f: usize) -> (String, usize) {
    type N = unsafe extern "C" fn(*mut *const c_char, usize) -> CUresult;
    type M = unsafe extern "C" fn(*mut usize, usize) -> CUresult;
    let mut name: *const c_char = std::ptr::null();
    let n = match lookup("cuFuncGetName") {
        // SAFETY: the real cuFuncGetName with an out-pointer to a C string, which lives
        // as long as the module.
        Some(g) if unsafe { std::mem::transmute::<usize, N>(g)(&mut name, f) } == CUDA_SUCCESS && !name.is_null() => unsafe {
            simtwin_abi::ffi::c_str(name)
        },
        _ => format!("function@{f:#x}"),
    };
    let mut m = 0usize;
    if let Some(g) = lookup("cuFuncGetModule") {
        // SAFETY: the real cuFuncGetModule with an out-pointer to a handle.
        unsafe { std::mem::transmute::<usize, M>(g)(&mut m, f) };
    }
    (n, m)
}

/// The argument bytes of a launch: from `kernelParams` by the layout, or the `extra`
/// buffer (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE).
fn arg_bytes(layout: &[[u32; 2]], params: u64, extra: u64) -> Vec<u8> {
    if params != 0 {
        let total = layout.iter().map(|&[o, s]| (o + s) as usize).max().unwrap_or(0);
        let mut out = vec![0u8; total];
        for (i, &[o, s]) in layout.iter().enumerate() {
            let Some(p) = read::<u64>(params + 8 * i as u64) else { continue };
            if p != 0 {
                // SAFETY: kernelParams[i] points at the parameter's `s` bytes (the
                // real driver accepted the launch with this layout).
                out[o as usize..(o + s) as usize].copy_from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, s as usize) });
            }
        }
        return out;
    }
    let (mut buf, mut size) = (0u64, 0u64);
    let mut at = extra;
    while let Some(key) = read::<u64>(at).filter(|_| at != 0) {
        match key as usize {
            CU_LAUNCH_PARAM_END => break,
            CU_LAUNCH_PARAM_BUFFER_POINTER => buf = read::<u64>(at + 8).unwrap_or(0),
            CU_LAUNCH_PARAM_BUFFER_SIZE => size = read::<u64>(read::<u64>(at + 8).unwrap_or(0)).unwrap_or(0),
            _ => break,
        }
        at += 16;
    }
    if buf == 0 || size == 0 || size > 1 << 16 {
        return Vec::new();
    }
    // SAFETY: the `extra` buffer of `size` bytes the real driver accepted.
    unsafe { std::slice::from_raw_parts(buf as *const u8, size as usize) }.to_vec()
}

#[allow(clippy::too_many_arguments)]
fn launch(s: &mut State, lookup: Lookup, f: usize, grid: [u32; 3], block: [u32; 3], shared: u32, stream: u64, params: u64, extra: u64) {
    let (symbol, module) = name_and_module(lookup, f);
    let lay = s.layouts.entry(f).or_insert_with(|| layout(lookup, f)).clone();
    let args = arg_bytes(lay.as_deref().unwrap_or(&[]), params, extra);
    let mut facts_params = lay.clone().unwrap_or_default();
    if facts_params.is_empty() && !args.is_empty() {
        // Only the `extra` buffer: read it as one parameter.
        facts_params.push([0, args.len() as u32]);
    }
    let globals = s.globals.get(&module).cloned().unwrap_or_default();
    with(|t| {
        let (n, traced) = t.next_launch(&symbol);
        if !traced {
            return;
        }
        let timer = Timer::start();
        let facts = LaunchFacts { symbol: &symbol, grid, block, shared, params: facts_params, args: &args };
        let mut spans: Vec<(u64, u64, bool)> = Vec::new();
        let mut targets: Vec<Target> = Vec::new();
        let mut add = |base: u64, size: u64, pinned: bool, p: Option<u32>, t: &super::Tracer| match spans.iter().position(|x| x.0 == base) {
            Some(i) => {
                if let Some(p) = p.filter(|p| !targets[i].params.contains(p)) {
                    targets[i].params.push(p);
                }
            }
            None => {
                let kind = if pinned { "pinned host" } else { "device" };
                spans.push((base, size, pinned));
                targets.push(Target { name: t.alloc_name(base, kind, size), kind: kind.into(), size, params: p.into_iter().collect() });
            }
        };
        if lay.is_none() {
            // No layout: every live allocation could have been written.
            for (&base, &(size, pinned)) in &s.allocs {
                add(base, size, pinned, None, t);
            }
        } else {
            for (p, word) in pointer_words(&facts.params, &args) {
                if let Some((base, size, pinned)) = find(s, word) {
                    add(base, size, pinned, Some(p), t);
                }
            }
        }
        let m = t.module_ordinal(module as u64);
        let mut gl = globals;
        gl.sort();
        for (sym, addr, size) in gl {
            spans.push((addr, size, false));
            targets.push(Target { name: format!("g{m}:{sym}"), kind: "global".into(), size, params: Vec::new() });
        }
        let started = Instant::now();
        let synced = sync(lookup, stream);
        let mut copy_ns = started.elapsed().as_nanos() as u64;
        let result = if synced { "ok".to_string() } else { "synchronisation failed".to_string() };
        super::write_launch(t, n, &facts, targets, &result, |i, out| {
            let (base, size, pinned) = spans[i];
            if pinned {
                // SAFETY: pinned host memory of `size` bytes, complete after the sync.
                out.extend_from_slice(unsafe { std::slice::from_raw_parts(base as *const u8, size as usize) });
                return synced;
            }
            let c = Instant::now();
            let ok = synced && copy_back(lookup, base, size, out);
            copy_ns += c.elapsed().as_nanos() as u64;
            ok
        });
        t.copy_back_ns += copy_ns;
        timer.stop(t);
    });
}

/// A device-to-host copy the real driver accepted; `stream`: asynchronous on it.
fn d2h(s: &State, src: u64, dst: u64, rows: Option<(u64, u64, u64)>, len: u64, stream: Option<u64>, lookup: Lookup) {
    with(|t| {
        let (n, traced) = t.next_copy();
        if !traced {
            return;
        }
        let timer = Timer::start();
        if let Some(st) = stream {
            let c = Instant::now();
            sync(lookup, st);
            t.copy_back_ns += c.elapsed().as_nanos() as u64;
        }
        let name = match find(s, src) {
            Some((base, size, pinned)) => {
                format!("{}+{}", t.alloc_name(base, if pinned { "pinned host" } else { "device" }, size), src - base)
            }
            None => "untracked".into(),
        };
        let mut bytes = Vec::with_capacity(len as usize);
        match rows {
            Some((pitch, width, height)) => {
                for r in 0..height {
                    // SAFETY: the copy wrote `width` bytes of each row, `pitch` apart.
                    bytes.extend_from_slice(unsafe { std::slice::from_raw_parts((dst + r * pitch) as *const u8, width as usize) });
                }
            }
            // SAFETY: the copy wrote `len` bytes at `dst` (complete: synchronous, or its
            // stream was synchronised above).
            None => bytes.extend_from_slice(unsafe { std::slice::from_raw_parts(dst as *const u8, len as usize) }),
        }
        super::write_copy(t, n, name, &bytes);
        timer.stop(t);
    });
}
