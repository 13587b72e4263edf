//! Stream capture and graphs, on the driver's (a cudaGraph_t is its CUgraph, a
//! cudaGraphExec_t its CUgraphExec): a program captures its work on a stream
//! (cudaStreamBeginCapture .. cudaStreamEndCapture; launches, copies, memsets and host
//! functions issued to it are recorded by the driver, not run), instantiates the graph
//! and launches it. Capture modes and statuses have the same numbers in both APIs. The
//! explicit node-building API (cudaGraphAdd*Node) is not implemented (not exported).
//!
//! Also here: the stream-ordered allocator (cudaMallocAsync / cudaFreeAsync) and
//! cudaGetDriverEntryPoint(ByVersion), which hands out the driver's own entry points.

use std::ffi::CStr;

use crate::driver::{self as d, Handle};
use crate::error::{self, check, Res};
use crate::state;

pub fn begin_capture(s: Handle, mode: i32) -> Res<()> {
    state::ctx()?;
    if !(0..=2).contains(&mode) {
        return Err(error::INVALID_VALUE);
    }
    check(d::cuStreamBeginCapture(s, mode as u32))
}

pub fn end_capture(s: Handle) -> Res<usize> {
    state::ctx()?;
    let mut g = std::ptr::null_mut();
    check(d::cuStreamEndCapture(s, &mut g))?;
    Ok(g as usize)
}

/// cudaStreamIsCapturing: cudaStreamCaptureStatusNone 0, Active 1, Invalidated 2.
pub fn is_capturing(s: Handle) -> Res<i32> {
    state::ctx()?;
    let mut st = 0u32;
    check(d::cuStreamIsCapturing(s, &mut st))?;
    Ok(st as i32)
}

pub fn instantiate(graph: Handle, flags: u64) -> Res<usize> {
    state::ctx()?;
    if graph.is_null() {
        return Err(error::INVALID_VALUE);
    }
    let mut e = std::ptr::null_mut();
    check(d::cuGraphInstantiateWithFlags(&mut e, graph, flags))?;
    Ok(e as usize)
}

pub fn launch(exec: Handle, s: Handle) -> Res<()> {
    state::ctx()?;
    if exec.is_null() {
        return Err(error::INVALID_RESOURCE_HANDLE);
    }
    check(d::cuGraphLaunch(exec, s))
}

pub fn exec_destroy(exec: Handle) -> Res<()> {
    state::init()?;
    if exec.is_null() {
        return Err(error::INVALID_RESOURCE_HANDLE);
    }
    check(d::cuGraphExecDestroy(exec))
}

pub fn destroy(graph: Handle) -> Res<()> {
    state::init()?;
    if graph.is_null() {
        return Err(error::INVALID_RESOURCE_HANDLE);
    }
    check(d::cuGraphDestroy(graph))
}

/// cudaMallocAsync: from the device's default pool, ordered on `s`.
pub fn malloc_async(size: usize, s: Handle) -> Res<u64> {
    state::ctx()?;
    let mut p = 0;
    check(d::cuMemAllocAsync(&mut p, size, s))?;
    Ok(p)
}

pub fn free_async(p: u64, s: Handle) -> Res<()> {
    state::ctx()?;
    check(d::cuMemFreeAsync(p, s))
}

/// cudaGetDriverEntryPoint(ByVersion): the driver's entry point `name` at `version` (the
/// flags, cudaEnable*, are CU_GET_PROC_ADDRESS_*'s numbers; so are the query statuses).
pub fn driver_entry_point(name: &CStr, version: i32, flags: u64) -> Res<(usize, i32)> {
    state::init()?;
    let (r, p, status) = d::get_proc_address(name, version, flags);
    check(r)?;
    Ok((p, status))
}
