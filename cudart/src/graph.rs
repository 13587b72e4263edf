//! Stream capture and graphs, on the driver's (a cudaGraph_t is its CUgraph, a
//! cudaGraphExec_t its CUgraphExec): a program captures its work on a stream
//! (cudaStreamBeginCapture .. cudaStreamEndCapture; launches, copies, memsets and host
//! functions issued to it are recorded by the driver, not run), instantiates the graph
//! and launches it. Capture modes and statuses have the same numbers in both APIs. Graphs
//! can also be built node by node (cudaGraphCreate, cudaGraphAdd{Kernel,Memcpy,Memset,
//! Host,Empty}Node): a kernel node's function is the registered kernel's driver function
//! on the current device, a memcpy node's parameters become the driver's CUDA_MEMCPY3D, the
//! memset and host nodes' have the driver's layout.
//!
//! Also here: the stream-ordered allocator (cudaMallocAsync / cudaFreeAsync) and
//! cudaGetDriverEntryPoint(ByVersion), which hands out the driver's own entry points.

use std::ffi::CStr;

use crate::driver::{self as d, Handle, HostNodeParams, KernelNodeParams, MemsetNodeParams};
use crate::error::{self, check, Res};
use crate::launch::Dim3;
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

pub fn create(flags: u32) -> Res<usize> {
    state::ctx()?;
    if flags != 0 {
        return Err(error::INVALID_VALUE);
    }
    let mut g = std::ptr::null_mut();
    check(d::cuGraphCreate(&mut g, 0))?;
    Ok(g as usize)
}

pub fn clone(graph: Handle) -> Res<usize> {
    state::ctx()?;
    let mut g = std::ptr::null_mut();
    check(d::cuGraphClone(&mut g, graph))?;
    Ok(g as usize)
}

/// cudaGraphGetNodes: `nodes` null asks for the count only.
pub fn nodes(graph: Handle, nodes: *mut Handle, n: &mut usize) -> Res<()> {
    state::init()?;
    check(d::cuGraphGetNodes(graph, nodes, n))
}

/// A new node's dependencies (cudaErrorInvalidValue for a count without a list).
fn deps_ok(deps: *const Handle, n: usize) -> Res<()> {
    if n > 0 && deps.is_null() {
        return Err(error::INVALID_VALUE);
    }
    Ok(())
}

fn current_ctx() -> Res<Handle> {
    state::ctx()?;
    let mut c = std::ptr::null_mut();
    check(d::cuCtxGetCurrent(&mut c))?;
    Ok(c)
}

/// The runtime's cudaKernelNodeParams, with the kernel named by its host stub.
pub struct KernelNode {
    pub func: usize,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared: u32,
    pub params: *mut *mut std::ffi::c_void,
    pub extra: *mut *mut std::ffi::c_void,
}

fn kernel_params(k: &KernelNode) -> Res<KernelNodeParams> {
    let func = crate::registry::function(k.func)?;
    Ok(KernelNodeParams {
        func,
        grid: [k.grid.x, k.grid.y, k.grid.z],
        block: [k.block.x, k.block.y, k.block.z],
        shared_mem_bytes: k.shared,
        kernel_params: k.params,
        extra: k.extra,
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    })
}

pub fn add_kernel_node(graph: Handle, deps: *const Handle, n: usize, k: &KernelNode) -> Res<usize> {
    deps_ok(deps, n)?;
    let p = kernel_params(k)?;
    let mut node = std::ptr::null_mut();
    // The driver's answer as it is, as for launches (launch.rs' comment).
    check(d::cuGraphAddKernelNode(&mut node, graph, deps, n, &p))?;
    Ok(node as usize)
}

pub fn add_memset_node(graph: Handle, deps: *const Handle, n: usize, p: &MemsetNodeParams) -> Res<usize> {
    deps_ok(deps, n)?;
    let ctx = current_ctx()?;
    let mut node = std::ptr::null_mut();
    check(d::cuGraphAddMemsetNode(&mut node, graph, deps, n, p, ctx))?;
    Ok(node as usize)
}

pub fn add_memcpy_node(graph: Handle, deps: *const Handle, n: usize, p: &crate::texture::Memcpy3DParms) -> Res<usize> {
    deps_ok(deps, n)?;
    let ctx = current_ctx()?;
    let c = crate::texture::driver_3d(p)?;
    let mut node = std::ptr::null_mut();
    check(d::cuGraphAddMemcpyNode(&mut node, graph, deps, n, &c, ctx))?;
    Ok(node as usize)
}

pub fn add_host_node(graph: Handle, deps: *const Handle, n: usize, p: &HostNodeParams) -> Res<usize> {
    deps_ok(deps, n)?;
    state::ctx()?;
    if p.f.is_none() {
        return Err(error::INVALID_VALUE);
    }
    let mut node = std::ptr::null_mut();
    check(d::cuGraphAddHostNode(&mut node, graph, deps, n, p))?;
    Ok(node as usize)
}

pub fn add_empty_node(graph: Handle, deps: *const Handle, n: usize) -> Res<usize> {
    deps_ok(deps, n)?;
    state::ctx()?;
    let mut node = std::ptr::null_mut();
    check(d::cuGraphAddEmptyNode(&mut node, graph, deps, n))?;
    Ok(node as usize)
}

pub fn exec_kernel_node_set_params(exec: Handle, node: Handle, k: &KernelNode) -> Res<()> {
    let p = kernel_params(k)?;
    check(d::cuGraphExecKernelNodeSetParams(exec, node, &p))
}

/// cudaGraphExecUpdate: cudaGraphExecUpdateResultInfo has CUgraphExecUpdateResultInfo's
/// layout and numbers.
pub fn exec_update(exec: Handle, graph: Handle, info: *mut std::ffi::c_void) -> Res<()> {
    state::ctx()?;
    check(d::cuGraphExecUpdate(exec, graph, info))
}
