//! CUDA graphs and stream capture: the graph model (nodes, edges, clones), executable
//! graphs (a topological order of the nodes, flattened through child graphs, run as one
//! unit of work on a stream) and capture sequences (work submitted to a capturing stream
//! becomes nodes instead of running).
//!
//! Locking: the registry's lock may be taken while the driver's lock is held, never the
//! other way round; a graph launch runs its steps with neither held.

use crate::boundary::{CuResult, HeldArgs, HostCall};
use crate::cu::*;
use crate::queue::StreamKey;
use crate::state::{handle, handle_id, Tag};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A kernel node: the launch with its arguments captured when the node was made.
#[derive(Clone)]
pub struct KernelNode {
    /// The CUfunction (or CUkernel) handle value.
    pub func: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub args: HeldArgs,
    /// The parameter addresses handed out by cuGraphKernelNodeGetParams.
    pub param_ptrs: Vec<usize>,
    /// Captured from a cooperative launch: it runs as one (all blocks resident, the
    /// context's grid workspace made if it has none).
    pub cooperative: bool,
}

/// A 3D copy's parameters as plain numbers (CUDA_MEMCPY3D with addresses).
#[derive(Clone, Copy)]
pub struct Copy3D([u64; 25]);

impl Copy3D {
    pub fn of(c: &CUDA_MEMCPY3D) -> Copy3D {
        Copy3D([
            c.src_x_in_bytes as u64,
            c.src_y as u64,
            c.src_z as u64,
            c.src_lod as u64,
            c.src_memory_type as u64,
            c.src_host as u64,
            c.src_device,
            c.src_array as u64,
            c.reserved0 as u64,
            c.src_pitch as u64,
            c.src_height as u64,
            c.dst_x_in_bytes as u64,
            c.dst_y as u64,
            c.dst_z as u64,
            c.dst_lod as u64,
            c.dst_memory_type as u64,
            c.dst_host as u64,
            c.dst_device,
            c.dst_array as u64,
            c.reserved1 as u64,
            c.dst_pitch as u64,
            c.dst_height as u64,
            c.width_in_bytes as u64,
            c.height as u64,
            c.depth as u64,
        ])
    }

    pub fn get(&self) -> CUDA_MEMCPY3D {
        let v = &self.0;
        CUDA_MEMCPY3D {
            src_x_in_bytes: v[0] as usize,
            src_y: v[1] as usize,
            src_z: v[2] as usize,
            src_lod: v[3] as usize,
            src_memory_type: v[4] as u32,
            src_host: v[5] as usize as *const std::ffi::c_void,
            src_device: v[6],
            src_array: v[7] as usize as *mut std::ffi::c_void,
            reserved0: v[8] as usize as *mut std::ffi::c_void,
            src_pitch: v[9] as usize,
            src_height: v[10] as usize,
            dst_x_in_bytes: v[11] as usize,
            dst_y: v[12] as usize,
            dst_z: v[13] as usize,
            dst_lod: v[14] as usize,
            dst_memory_type: v[15] as u32,
            dst_host: v[16] as usize as *mut std::ffi::c_void,
            dst_device: v[17],
            dst_array: v[18] as usize as *mut std::ffi::c_void,
            reserved1: v[19] as usize as *mut std::ffi::c_void,
            dst_pitch: v[20] as usize,
            dst_height: v[21] as usize,
            width_in_bytes: v[22] as usize,
            height: v[23] as usize,
            depth: v[24] as usize,
        }
    }
}

/// What a node does.
#[derive(Clone)]
pub enum Op {
    Empty,
    Kernel(KernelNode),
    /// A 1D copy (captured cuMemcpy*Async).
    Copy {
        dst: u64,
        src: u64,
        len: u64,
    },
    /// A 2D copy (captured cuMemcpy2DAsync).
    Copy2D {
        dst: u64,
        dpitch: u64,
        src: u64,
        spitch: u64,
        width: u64,
        height: u64,
    },
    /// cuGraphAddMemcpyNode, captured cuMemcpy3DAsync.
    Copy3D(Copy3D),
    Memset {
        dst: u64,
        pitch: u64,
        value: u32,
        elem: u64,
        w: u64,
        h: u64,
    },
    Host(HostCall),
    Record(u64),
    Wait(u64),
    /// A child graph: the id of the graph the node owns (a clone of the one given).
    Child(u64),
    /// A captured graph launch: the executable graph's steps.
    Launch(Arc<Plan>),
}

impl Op {
    /// The CUgraphNodeType.
    pub fn node_type(&self) -> u32 {
        match self {
            Op::Kernel(_) => CU_GRAPH_NODE_TYPE_KERNEL,
            Op::Copy { .. } | Op::Copy2D { .. } | Op::Copy3D(_) => CU_GRAPH_NODE_TYPE_MEMCPY,
            Op::Memset { .. } => CU_GRAPH_NODE_TYPE_MEMSET,
            Op::Host(_) => CU_GRAPH_NODE_TYPE_HOST,
            Op::Child(_) | Op::Launch(_) => CU_GRAPH_NODE_TYPE_GRAPH,
            Op::Empty => CU_GRAPH_NODE_TYPE_EMPTY,
            Op::Wait(_) => CU_GRAPH_NODE_TYPE_WAIT_EVENT,
            Op::Record(_) => CU_GRAPH_NODE_TYPE_EVENT_RECORD,
        }
    }
}

struct Node {
    graph: u64,
    deps: Vec<u64>,
    op: Op,
    /// The node this one was cloned from (cuGraphNodeFindInClone).
    cloned_from: Option<u64>,
}

#[derive(Default)]
struct Graph {
    /// Nodes in the order they were added.
    nodes: Vec<u64>,
    /// The child node that owns this graph (not destroyable by the program).
    owned: bool,
}

/// An executable graph's steps: every node's operation in a topological order.
#[derive(Clone, Default)]
pub struct Plan {
    steps: Vec<Op>,
}

struct Exec {
    plan: Arc<Plan>,
    /// Node id of the source graph (top level) -> step index.
    steps_of: HashMap<u64, usize>,
    /// The source graph's top-level nodes in order (for cuGraphExecUpdate).
    order: Vec<u64>,
    /// Their topology when instantiated: each node's type, its dependencies (as positions
    /// in `order`) and, for a child graph, its node count.
    shape: Vec<Shape>,
    flags: u64,
}

/// One node's place in a topology (cuGraphExecUpdate compares them).
#[derive(PartialEq)]
struct Shape {
    kind: u32,
    deps: BTreeSet<usize>,
    child_nodes: Option<usize>,
}

struct Capture {
    graph: u64,
    mode: u32,
    thread: std::thread::ThreadId,
    origin: StreamKey,
    invalid: bool,
    /// Each stream in the capture and the nodes its next work depends on.
    tips: HashMap<StreamKey, Vec<u64>>,
    /// Streams of the capture that synchronise with the legacy stream.
    blocking: BTreeSet<StreamKey>,
}

#[derive(Default)]
struct Registry {
    next: u64,
    graphs: HashMap<u64, Graph>,
    nodes: HashMap<u64, Node>,
    execs: HashMap<u64, Exec>,
    captures: HashMap<u64, Capture>,
    by_stream: HashMap<StreamKey, u64>,
    /// Events last recorded in a capturing stream: (capture, the nodes they stand for).
    events: HashMap<u64, (u64, Vec<u64>)>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);
/// Captures under way (a cheap test on every launch and copy).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's capture interaction mode (cuThreadExchangeStreamCaptureMode).
    static THREAD_MODE: std::cell::Cell<u32> = const { std::cell::Cell::new(CU_STREAM_CAPTURE_MODE_GLOBAL) };
}

fn reg() -> MutexGuard<'static, Option<Registry>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut g = reg();
    f(g.get_or_insert_with(Registry::default))
}

impl Registry {
    fn id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    fn new_graph(&mut self, owned: bool) -> u64 {
        let id = self.id();
        self.graphs.insert(id, Graph { nodes: Vec::new(), owned });
        id
    }

    fn add_node(&mut self, graph: u64, deps: Vec<u64>, op: Op) -> CuResult<u64> {
        if !self.graphs.contains_key(&graph) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for (i, d) in deps.iter().enumerate() {
            // Every dependency is a node of the same graph, named once.
            if self.nodes.get(d).is_none_or(|n| n.graph != graph) || deps[..i].contains(d) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        let id = self.id();
        self.nodes.insert(id, Node { graph, deps, op, cloned_from: None });
        self.graphs.get_mut(&graph).expect("checked").nodes.push(id);
        Ok(id)
    }

    /// Removes a graph and its nodes (and the graphs its child nodes own).
    fn drop_graph(&mut self, graph: u64) {
        if let Some(g) = self.graphs.remove(&graph) {
            for n in g.nodes {
                self.drop_node_data(n);
            }
        }
    }

    fn drop_node_data(&mut self, n: u64) {
        if let Some(node) = self.nodes.remove(&n) {
            if let Op::Child(c) = node.op {
                self.drop_graph(c);
            }
        }
    }

    /// A deep copy of `graph` (a new graph id); `owned` marks a child graph's copy.
    fn clone_graph(&mut self, graph: u64, owned: bool) -> CuResult<u64> {
        let nodes = self.graphs.get(&graph).ok_or(CUDA_ERROR_INVALID_VALUE)?.nodes.clone();
        let g = self.new_graph(owned);
        let mut map = HashMap::new();
        for n in nodes {
            let (deps, op) = {
                let node = &self.nodes[&n];
                (node.deps.iter().map(|d| map[d]).collect::<Vec<u64>>(), node.op.clone())
            };
            let op = match op {
                Op::Child(c) => Op::Child(self.clone_graph(c, true)?),
                other => other,
            };
            let id = self.add_node(g, deps, op)?;
            self.nodes.get_mut(&id).expect("added").cloned_from = Some(n);
            map.insert(n, id);
        }
        Ok(g)
    }

    /// The topology of a graph's top-level nodes.
    fn shape(&self, graph: u64) -> Vec<Shape> {
        let nodes = &self.graphs[&graph].nodes;
        let index: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        nodes
            .iter()
            .map(|n| {
                let node = &self.nodes[n];
                Shape {
                    kind: node.op.node_type(),
                    deps: node.deps.iter().map(|d| index[d]).collect(),
                    child_nodes: match node.op {
                        Op::Child(c) => Some(self.graphs[&c].nodes.len()),
                        _ => None,
                    },
                }
            })
            .collect()
    }

    /// The graph's nodes in a topological order (ties in the order they were added);
    /// None when the edges hold a cycle.
    fn topo(&self, graph: u64) -> Option<Vec<u64>> {
        let nodes = &self.graphs.get(&graph)?.nodes;
        let mut done: BTreeSet<u64> = BTreeSet::new();
        let mut order = Vec::with_capacity(nodes.len());
        while order.len() < nodes.len() {
            let before = order.len();
            for n in nodes {
                if !done.contains(n) && self.nodes[n].deps.iter().all(|d| done.contains(d)) {
                    done.insert(*n);
                    order.push(*n);
                }
            }
            if order.len() == before {
                return None;
            }
        }
        Some(order)
    }

    /// The graph's steps, child graphs flattened in place; `top` gets the step index of
    /// each top-level node.
    fn plan(&self, graph: u64, steps: &mut Vec<Op>, mut top: Option<&mut HashMap<u64, usize>>) -> CuResult {
        let order = self.topo(graph).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        for n in order {
            if let Some(t) = top.as_deref_mut() {
                t.insert(n, steps.len());
            }
            match &self.nodes[&n].op {
                Op::Child(c) => {
                    // The child's nodes run where the child node runs (an empty step
                    // keeps the node's own index).
                    steps.push(Op::Empty);
                    self.plan(*c, steps, None)?;
                }
                op => steps.push(op.clone()),
            }
        }
        Ok(())
    }
}

// ---- handles ------------------------------------------------------------------------

pub fn graph_handle(id: u64) -> CUgraph {
    handle(Tag::Graph, id)
}
pub fn node_handle(id: u64) -> CUgraphNode {
    handle(Tag::GraphNode, id)
}
pub fn exec_handle(id: u64) -> CUgraphExec {
    handle(Tag::GraphExec, id)
}
fn graph_id(g: CUgraph) -> CuResult<u64> {
    handle_id(Tag::Graph, g).ok_or(CUDA_ERROR_INVALID_VALUE)
}
fn node_id(n: CUgraphNode) -> CuResult<u64> {
    handle_id(Tag::GraphNode, n).ok_or(CUDA_ERROR_INVALID_VALUE)
}
fn exec_id(e: CUgraphExec) -> CuResult<u64> {
    handle_id(Tag::GraphExec, e).ok_or(CUDA_ERROR_INVALID_VALUE)
}
fn node_ids(v: &[CUgraphNode]) -> CuResult<Vec<u64>> {
    v.iter().map(|&n| node_id(n)).collect()
}

// ---- graphs and nodes ---------------------------------------------------------------

pub fn create(flags: u32) -> CuResult<CUgraph> {
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(graph_handle(with(|r| r.new_graph(false))))
}

pub fn destroy(g: CUgraph) -> CuResult {
    let id = graph_id(g)?;
    with(|r| {
        match r.graphs.get(&id) {
            Some(gr) if !gr.owned => {}
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
        if r.captures.values().any(|c| c.graph == id) {
            // The graph of a capture under way belongs to the capture.
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        r.drop_graph(id);
        Ok(())
    })
}

/// Adds a node with its dependencies; a child graph is copied into the node. A child
/// node's own graph (cuGraphChildGraphNodeGetGraph) takes nodes too: it is not a copy.
pub fn add_node(g: CUgraph, deps: &[CUgraphNode], op: Op) -> CuResult<CUgraphNode> {
    let gid = graph_id(g)?;
    let deps = node_ids(deps)?;
    with(|r| {
        let op = match op {
            Op::Child(c) => Op::Child(r.clone_graph(c, true)?),
            other => other,
        };
        r.add_node(gid, deps, op).map(node_handle)
    })
}

/// The id behind a graph handle (cuGraphAddChildGraphNode's argument).
pub fn graph_of_handle(g: CUgraph) -> CuResult<u64> {
    let id = graph_id(g)?;
    with(|r| r.graphs.contains_key(&id).then_some(id).ok_or(CUDA_ERROR_INVALID_VALUE))
}

pub fn node_op(n: CUgraphNode) -> CuResult<Op> {
    let id = node_id(n)?;
    with(|r| r.nodes.get(&id).map(|n| n.op.clone()).ok_or(CUDA_ERROR_INVALID_VALUE))
}

/// Replaces a node's operation with one of the same type.
pub fn set_node_op(n: CUgraphNode, op: Op) -> CuResult {
    let id = node_id(n)?;
    with(|r| {
        let node = r.nodes.get_mut(&id).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if node.op.node_type() != op.node_type() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        node.op = op;
        Ok(())
    })
}

pub fn child_graph(n: CUgraphNode) -> CuResult<CUgraph> {
    match node_op(n)? {
        Op::Child(c) => Ok(graph_handle(c)),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn nodes(g: CUgraph) -> CuResult<Vec<usize>> {
    let id = graph_id(g)?;
    with(|r| Ok(r.graphs.get(&id).ok_or(CUDA_ERROR_INVALID_VALUE)?.nodes.iter().map(|&n| node_handle(n) as usize).collect()))
}

pub fn root_nodes(g: CUgraph) -> CuResult<Vec<usize>> {
    let id = graph_id(g)?;
    with(|r| {
        let gr = r.graphs.get(&id).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        Ok(gr.nodes.iter().filter(|n| r.nodes[n].deps.is_empty()).map(|&n| node_handle(n) as usize).collect())
    })
}

pub fn edges(g: CUgraph) -> CuResult<Vec<(usize, usize)>> {
    let id = graph_id(g)?;
    with(|r| {
        let gr = r.graphs.get(&id).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let mut out = Vec::new();
        for n in &gr.nodes {
            for d in &r.nodes[n].deps {
                out.push((node_handle(*d) as usize, node_handle(*n) as usize));
            }
        }
        Ok(out)
    })
}

pub fn dependencies(n: CUgraphNode) -> CuResult<Vec<usize>> {
    let id = node_id(n)?;
    with(|r| Ok(r.nodes.get(&id).ok_or(CUDA_ERROR_INVALID_VALUE)?.deps.iter().map(|&d| node_handle(d) as usize).collect()))
}

pub fn dependents(n: CUgraphNode) -> CuResult<Vec<usize>> {
    let id = node_id(n)?;
    with(|r| {
        let g = r.nodes.get(&id).ok_or(CUDA_ERROR_INVALID_VALUE)?.graph;
        Ok(r.graphs[&g].nodes.iter().filter(|m| r.nodes[m].deps.contains(&id)).map(|&m| node_handle(m) as usize).collect())
    })
}

pub fn node_type(n: CUgraphNode) -> CuResult<u32> {
    Ok(node_op(n)?.node_type())
}

pub fn containing_graph(n: CUgraphNode) -> CuResult<CUgraph> {
    let id = node_id(n)?;
    with(|r| r.nodes.get(&id).map(|n| graph_handle(n.graph)).ok_or(CUDA_ERROR_INVALID_VALUE))
}

/// cuGraphAddDependencies (`add`) and cuGraphRemoveDependencies.
pub fn change_dependencies(g: CUgraph, from: &[CUgraphNode], to: &[CUgraphNode], add: bool) -> CuResult {
    let gid = graph_id(g)?;
    let (from, to) = (node_ids(from)?, node_ids(to)?);
    with(|r| {
        if !r.graphs.contains_key(&gid) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // Validate every pair before changing anything.
        for (f, t) in from.iter().zip(&to) {
            let ok = |n: &u64| r.nodes.get(n).is_some_and(|x| x.graph == gid);
            if !ok(f) || !ok(t) || f == t {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let has = r.nodes[t].deps.contains(f);
            if has == add {
                // Adding an edge twice, or removing one that is not there.
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        for (f, t) in from.iter().zip(&to) {
            let deps = &mut r.nodes.get_mut(t).expect("checked").deps;
            if add {
                deps.push(*f);
            } else {
                deps.retain(|d| d != f);
            }
        }
        Ok(())
    })
}

pub fn destroy_node(n: CUgraphNode) -> CuResult {
    let id = node_id(n)?;
    with(|r| {
        let g = r.nodes.get(&id).ok_or(CUDA_ERROR_INVALID_VALUE)?.graph;
        r.graphs.get_mut(&g).expect("node's graph").nodes.retain(|&m| m != id);
        for node in r.nodes.values_mut() {
            node.deps.retain(|&d| d != id);
        }
        r.drop_node_data(id);
        Ok(())
    })
}

pub fn clone(g: CUgraph) -> CuResult<CUgraph> {
    let id = graph_id(g)?;
    with(|r| r.clone_graph(id, false).map(graph_handle))
}

pub fn find_in_clone(original: CUgraphNode, clone: CUgraph) -> CuResult<CUgraphNode> {
    let (o, c) = (node_id(original)?, graph_id(clone)?);
    with(|r| {
        let gr = r.graphs.get(&c).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        gr.nodes.iter().find(|n| r.nodes[n].cloned_from == Some(o)).map(|&n| node_handle(n)).ok_or(CUDA_ERROR_INVALID_VALUE)
    })
}

// ---- executable graphs --------------------------------------------------------------

/// Instantiates a graph; Err(node, code) names the node at fault where there is one.
pub fn instantiate(g: CUgraph, flags: u64) -> CuResult<CUgraphExec> {
    let id = graph_id(g)?;
    let known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
        | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD
        | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    if flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH != 0 {
        crate::log_warn!("cuGraphInstantiate: CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH (device-side graph launch) is not emulated");
        return Err(CUDA_ERROR_NOT_SUPPORTED);
    }
    if flags & !known != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    with(|r| {
        if !r.graphs.contains_key(&id) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut steps = Vec::new();
        let mut steps_of = HashMap::new();
        r.plan(id, &mut steps, Some(&mut steps_of)).inspect_err(|_| {
            crate::log_error!("cuGraphInstantiate: the graph's dependencies form a cycle");
        })?;
        let order = r.graphs[&id].nodes.clone();
        let shape = r.shape(id);
        let e = r.id();
        r.execs.insert(e, Exec { plan: Arc::new(Plan { steps }), steps_of, order, shape, flags });
        Ok(exec_handle(e))
    })
}

pub fn exec_destroy(e: CUgraphExec) -> CuResult {
    let id = exec_id(e)?;
    with(|r| r.execs.remove(&id).map(|_| ()).ok_or(CUDA_ERROR_INVALID_VALUE))
}

pub fn exec_flags(e: CUgraphExec) -> CuResult<u64> {
    let id = exec_id(e)?;
    with(|r| r.execs.get(&id).map(|x| x.flags).ok_or(CUDA_ERROR_INVALID_VALUE))
}

/// The steps a launch of `e` runs (a snapshot: later updates do not change it).
pub fn exec_plan(e: CUgraphExec) -> CuResult<Arc<Plan>> {
    let id = exec_id(e)?;
    with(|r| r.execs.get(&id).map(|x| x.plan.clone()).ok_or(CUDA_ERROR_INVALID_VALUE))
}

/// cuGraphExec*SetParams: the step of top-level node `n` gets `op` (same type).
pub fn exec_set_op(e: CUgraphExec, n: CUgraphNode, op: Op) -> CuResult {
    let (eid, nid) = (exec_id(e)?, node_id(n)?);
    with(|r| {
        let x = r.execs.get_mut(&eid).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let &i = x.steps_of.get(&nid).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let plan = Arc::make_mut(&mut x.plan);
        if plan.steps[i].node_type() != op.node_type() || matches!(plan.steps[i], Op::Empty) && !matches!(op, Op::Empty) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        plan.steps[i] = op;
        Ok(())
    })
}

/// The outcome of cuGraphExecUpdate: the result code and the nodes at fault.
pub struct UpdateOutcome {
    pub result: u32,
    pub node: usize,
    pub from: usize,
}

/// cuGraphExecUpdate: `g` must have the topology of the graph `e` was made from (the
/// same nodes in the same order, of the same types, with the same edges); then `e`
/// takes `g`'s parameters.
pub fn exec_update(e: CUgraphExec, g: CUgraph) -> CuResult<UpdateOutcome> {
    let (eid, gid) = (exec_id(e)?, graph_id(g)?);
    with(|r| {
        let new_nodes = r.graphs.get(&gid).ok_or(CUDA_ERROR_INVALID_VALUE)?.nodes.clone();
        let x = r.execs.get(&eid).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let old = x.order.clone();
        let fail = |result, node: u64, from: u64| {
            Ok(UpdateOutcome {
                result,
                node: if node == 0 { 0 } else { node_handle(node) as usize },
                from: if from == 0 { 0 } else { node_handle(from) as usize },
            })
        };
        if old.len() != new_nodes.len() {
            return fail(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, 0, 0);
        }
        let new_shape = r.shape(gid);
        for (i, (was, now)) in x.shape.iter().zip(&new_shape).enumerate() {
            let n = new_nodes[i];
            if was.kind != now.kind {
                return fail(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, n, 0);
            }
            if was.deps != now.deps || was.child_nodes != now.child_nodes {
                let from = now.deps.iter().find(|d| !was.deps.contains(d)).map_or(0, |&d| new_nodes[d]);
                return fail(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, n, from);
            }
        }
        // Same topology: the new graph's steps, indexed by the old graph's nodes.
        let mut steps = Vec::new();
        let mut by_new = HashMap::new();
        r.plan(gid, &mut steps, Some(&mut by_new))?;
        let steps_of = old.iter().zip(&new_nodes).map(|(&o, n)| (o, by_new[n])).collect();
        let x = r.execs.get_mut(&eid).expect("checked");
        x.plan = Arc::new(Plan { steps });
        x.steps_of = steps_of;
        Ok(UpdateOutcome { result: CU_GRAPH_EXEC_UPDATE_SUCCESS, node: 0, from: 0 })
    })
}

/// Runs a plan's steps in order, on `stream` (a graph launch: one unit of work there).
pub fn run_plan(plan: &Plan, stream: usize) -> CuResult {
    for op in &plan.steps {
        run_op(op, stream)?;
    }
    Ok(())
}

fn run_op(op: &Op, stream: usize) -> CuResult {
    use crate::queue::Work;
    match op {
        Op::Empty | Op::Wait(_) => Ok(()),
        Op::Kernel(k) => {
            let p = k.args.with(|args| {
                crate::launch::prepare(
                    crate::launch::Launch {
                        f: k.func as CUfunction,
                        grid: k.grid,
                        block: k.block,
                        shared: k.shared,
                        stream: stream as CUstream,
                        args,
                        // Nodes added by hand are plain launches (the cooperative
                        // attribute of cuGraphKernelNodeSetAttribute is not supported).
                        cooperative: k.cooperative,
                    },
                    true,
                )
            })?;
            crate::launch::run(p)
        }
        Op::Copy { dst, src, len } => crate::queue::run_now(Work::Copy { dst: *dst, src: *src, len: *len, snapshot: None }),
        &Op::Copy2D { dst, dpitch, src, spitch, width, height } => {
            crate::queue::run_now(Work::Copy2D { dst, dpitch, src, spitch, width, height })
        }
        Op::Copy3D(c) => crate::api::texture::graph_copy_3d(&c.get(), true),
        &Op::Memset { dst, pitch, value, elem, w, h } => crate::queue::run_now(Work::Memset { dst, pitch, value, elem, w, h }),
        Op::Host(h) => crate::queue::run_now(Work::Host(*h)),
        Op::Record(e) => crate::queue::run_now(Work::Record { event: *e }),
        Op::Child(_) => Ok(()),
        Op::Launch(p) => run_plan(p, stream),
    }
}

// ---- stream capture -----------------------------------------------------------------

/// Whether any capture is under way.
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed) > 0
}

/// cuStreamBeginCapture: `key` must be a named stream, not capturing; `blocking`: it
/// synchronises with the legacy stream.
pub fn begin_capture(key: StreamKey, blocking: bool, mode: u32) -> CuResult {
    if mode > CU_STREAM_CAPTURE_MODE_RELAXED {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if key.stream.is_none() {
        // The legacy stream (and this driver's per-thread stream) cannot be captured.
        return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    with(|r| {
        if r.by_stream.contains_key(&key) {
            return Err(CUDA_ERROR_ILLEGAL_STATE);
        }
        let graph = r.new_graph(false);
        let id = r.id();
        let mut tips = HashMap::new();
        tips.insert(key, Vec::new());
        let blocking = if blocking { [key].into_iter().collect() } else { BTreeSet::new() };
        r.captures.insert(id, Capture { graph, mode, thread: std::thread::current().id(), origin: key, invalid: false, tips, blocking });
        r.by_stream.insert(key, id);
        ACTIVE.fetch_add(1, Ordering::Relaxed);
        Ok(())
    })
}

/// cuStreamEndCapture: the captured graph, or the capture's error (the capture ends
/// either way, except from the wrong stream or thread).
pub fn end_capture(key: StreamKey) -> CuResult<CUgraph> {
    with(|r| {
        let &cid = r.by_stream.get(&key).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
        let c = &r.captures[&cid];
        if c.origin != key {
            return Err(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
        }
        if c.mode != CU_STREAM_CAPTURE_MODE_RELAXED && c.thread != std::thread::current().id() {
            return Err(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
        }
        let c = r.captures.remove(&cid).expect("present");
        r.by_stream.retain(|_, v| *v != cid);
        r.events.retain(|_, v| v.0 != cid);
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
        if c.invalid {
            r.drop_graph(c.graph);
            return Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        }
        // Every other stream's work must have been joined back into the origin stream.
        let mut ancestors = BTreeSet::new();
        let mut stack = c.tips[&key].clone();
        while let Some(n) = stack.pop() {
            if ancestors.insert(n) {
                stack.extend(r.nodes[&n].deps.iter().copied());
            }
        }
        let unjoined = c.tips.iter().any(|(k, t)| *k != key && t.iter().any(|n| !ancestors.contains(n)));
        if unjoined {
            crate::log_error!("cuStreamEndCapture: a stream joined to the capture has work the origin stream never waited for");
            r.drop_graph(c.graph);
            return Err(CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
        }
        Ok(graph_handle(c.graph))
    })
}

/// cuStreamIsCapturing / cuStreamGetCaptureInfo: (status, capture id, graph, the
/// stream's current dependencies).
pub fn capture_info(key: StreamKey) -> (u32, u64, CUgraph, Vec<usize>) {
    if !active() {
        return (CU_STREAM_CAPTURE_STATUS_NONE, 0, std::ptr::null_mut(), Vec::new());
    }
    with(|r| match r.by_stream.get(&key) {
        None => (CU_STREAM_CAPTURE_STATUS_NONE, 0, std::ptr::null_mut(), Vec::new()),
        Some(&cid) => {
            let c = &r.captures[&cid];
            let status = if c.invalid { CU_STREAM_CAPTURE_STATUS_INVALIDATED } else { CU_STREAM_CAPTURE_STATUS_ACTIVE };
            let deps = c.tips.get(&key).map(|t| t.iter().map(|&n| node_handle(n) as usize).collect()).unwrap_or_default();
            (status, cid, graph_handle(c.graph), deps)
        }
    })
}

/// cuThreadExchangeStreamCaptureMode.
pub fn exchange_mode(mode: u32) -> CuResult<u32> {
    if mode > CU_STREAM_CAPTURE_MODE_RELAXED {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(THREAD_MODE.with(|m| m.replace(mode)))
}

fn invalidate(r: &mut Registry, cids: &[u64], why: &str) {
    for cid in cids {
        if let Some(c) = r.captures.get_mut(cid) {
            if !c.invalid {
                crate::log_warn!("stream capture {cid} invalidated: {why}");
            }
            c.invalid = true;
        }
    }
}

/// Work submitted to `key`: None when no capture is concerned (the work runs as usual);
/// otherwise the answer: the node `build` makes added to the capture, or the error (an
/// invalidated capture; the legacy stream while a blocking stream of its context
/// captures, which invalidates that capture). `build` runs without the registry's lock.
pub fn capture(key: StreamKey, build: impl FnOnce() -> CuResult<Op>) -> Option<CuResult> {
    if !active() {
        return None;
    }
    if let Err(e) = precheck(key)? {
        return Some(Err(e));
    }
    let op = match build() {
        Ok(op) => op,
        Err(e) => return Some(Err(e)),
    };
    Some(with(|r| {
        let &cid = r.by_stream.get(&key).ok_or(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)?;
        let c = &r.captures[&cid];
        if c.invalid {
            return Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        }
        let (graph, deps) = (c.graph, c.tips.get(&key).cloned().unwrap_or_default());
        let n = r.add_node(graph, deps, op)?;
        r.captures.get_mut(&cid).expect("present").tips.insert(key, vec![n]);
        Ok(())
    }))
}

/// None: `key` takes no part in a capture; Some(Ok): it captures; Some(Err): refused.
fn precheck(key: StreamKey) -> Option<CuResult> {
    with(|r| {
        if let Some(&cid) = r.by_stream.get(&key) {
            return Some(if r.captures[&cid].invalid { Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) } else { Ok(()) });
        }
        if key.stream.is_none() {
            let hit: Vec<u64> = r.captures.iter().filter(|(_, c)| c.blocking.iter().any(|k| k.ctx == key.ctx)).map(|(&id, _)| id).collect();
            if !hit.is_empty() {
                invalidate(r, &hit, "work on the legacy stream would wait for a capturing blocking stream");
                return Some(Err(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT));
            }
        }
        None
    })
}

/// cuEventRecord on `key`: in a capture the event stands for the stream's current
/// dependencies (no node is made).
pub fn capture_record(key: StreamKey, event: u64) -> Option<CuResult> {
    if !active() {
        return None;
    }
    if let Err(e) = precheck(key)? {
        return Some(Err(e));
    }
    Some(with(|r| {
        let &cid = r.by_stream.get(&key).ok_or(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)?;
        let tips = r.captures[&cid].tips.get(&key).cloned().unwrap_or_default();
        r.events.insert(event, (cid, tips));
        Ok(())
    }))
}

/// cuStreamWaitEvent: an event recorded in a capture joins `key` to that capture (its
/// later work depends on what the event stands for). None: no capture is concerned.
pub fn capture_wait(key: StreamKey, event: u64, blocking: bool) -> Option<CuResult> {
    if !active() {
        return None;
    }
    with(|r| {
        let Some((cid, nodes)) = r.events.get(&event).cloned() else {
            // An event recorded outside any capture: no dependency inside the graph
            // (its work is complete or runs before, in stream order).
            return r.by_stream.get(&key).map(|c| if r.captures[c].invalid { Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) } else { Ok(()) });
        };
        match r.by_stream.get(&key) {
            Some(&other) if other != cid => {
                invalidate(r, &[cid, other], "a wait would merge two capture sequences");
                return Some(Err(CUDA_ERROR_STREAM_CAPTURE_MERGE));
            }
            _ => {}
        }
        let c = r.captures.get_mut(&cid).expect("event's capture");
        if c.invalid {
            // An event of an invalidated capture: CUDA_ERROR_INVALID_VALUE (H100).
            return Some(Err(CUDA_ERROR_INVALID_VALUE));
        }
        if key.stream.is_none() {
            // The legacy stream cannot join a capture.
            invalidate(r, &[cid], "the legacy stream waited for a captured event");
            return Some(Err(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT));
        }
        let tips = c.tips.entry(key).or_default();
        for n in nodes {
            if !tips.contains(&n) {
                tips.push(n);
            }
        }
        if blocking {
            c.blocking.insert(key);
        }
        r.by_stream.insert(key, cid);
        Some(Ok(()))
    })
}

/// cuEventQuery / cuEventSynchronize on an event last recorded in a capture:
/// CUDA_ERROR_CAPTURED_EVENT, and the capture is invalidated (measured on an H100:
/// reports/reference/h200/coop-graphs/).
pub fn event_captured(event: u64) -> CuResult {
    if !active() {
        return Ok(());
    }
    with(|r| match r.events.get(&event) {
        Some(&(cid, _)) => {
            invalidate(r, &[cid], "an event recorded in it was queried or synchronised");
            Err(CUDA_ERROR_CAPTURED_EVENT)
        }
        None => Ok(()),
    })
}

/// cuStreamSynchronize / cuStreamQuery on a capturing stream: not permitted, and the
/// capture is invalidated.
pub fn sync_stream(key: StreamKey, name: &str) -> CuResult {
    if !active() {
        return Ok(());
    }
    with(|r| {
        let Some(&cid) = r.by_stream.get(&key) else { return Ok(()) };
        invalidate(r, &[cid], &format!("{name} on a capturing stream"));
        Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    })
}

/// cuCtxSynchronize while streams of `ctx` capture: it would wait for the capturing
/// streams, which is never permitted, whatever the capture modes (an H100 answers
/// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED in relaxed mode too:
/// reports/reference/h200/coop-graphs/); every such capture is invalidated.
pub fn sync_context(ctx: u64, name: &str) -> CuResult {
    if !active() {
        return Ok(());
    }
    with(|r| {
        let hit: Vec<u64> = r.captures.iter().filter(|(_, c)| c.origin.ctx == ctx).map(|(&id, _)| id).collect();
        if hit.is_empty() {
            return Ok(());
        }
        invalidate(r, &hit, &format!("{name} would wait for a capturing stream"));
        Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    })
}

// ---- entry points -------------------------------------------------------------------

use crate::boundary::{EdgeList, HandleList, KernelNodeIn, KernelNodeOut, Out};

/// A kernel node from cuGraphAddKernelNode's parameters or a captured launch: the
/// function checked, its arguments copied, the launch validated as cuLaunchKernel
/// validates it (on `stream`, whose context the kernel must belong to).
pub fn kernel_node(p: KernelNodeIn, stream: CUstream) -> CuResult<KernelNode> {
    let f = if p.func.is_null() { p.kern } else { p.func };
    if f.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let node = {
        let d = crate::state::driver()?;
        let id = match handle_id(Tag::Function, f) {
            Some(id) => id,
            None => d.kernel_function(f)?,
        };
        let func = d.functions.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let k = func.kernel();
        let buf = p.args.capture(&k.param_sizes, &k.param_offsets, k.param_bytes)?;
        let args = HeldArgs::new(&buf, k.param_bytes, &k.param_offsets);
        let param_ptrs = args.param_addresses();
        KernelNode { func: f as usize, grid: p.grid, block: p.block, shared: p.shared, args, param_ptrs, cooperative: false }
    };
    // The launch's configuration is checked now, as cuLaunchKernel checks it.
    let prepared = node.args.with(|args| {
        crate::launch::prepare(
            crate::launch::Launch { f, grid: node.grid, block: node.block, shared: node.shared, stream, args, cooperative: false },
            false,
        )
    })?;
    drop(prepared);
    Ok(node)
}

/// The current context's legacy stream (nodes made outside a capture are validated there).
fn current_stream() -> CuResult<CUstream> {
    crate::state::driver()?.current()?;
    Ok(std::ptr::null_mut())
}

pub fn graph_create(g: Out<CUgraph>, flags: u32) -> CuResult {
    g.required()?;
    g.set(create(flags)?)
}

pub fn add_kernel_node(n: Out<CUgraphNode>, g: CUgraph, deps: Option<Vec<CUgraphNode>>, p: Option<KernelNodeIn>) -> CuResult {
    n.required()?;
    let deps = deps.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let node = kernel_node(p.ok_or(CUDA_ERROR_INVALID_VALUE)?, current_stream()?)?;
    n.set(add_node(g, &deps, Op::Kernel(node))?)
}

fn memcpy_op(c: Option<CUDA_MEMCPY3D>) -> CuResult<Op> {
    let c = c.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    crate::api::texture::graph_copy_3d(&c, false)?;
    Ok(Op::Copy3D(Copy3D::of(&c)))
}

pub fn add_memcpy_node(
    n: Out<CUgraphNode>,
    g: CUgraph,
    deps: Option<Vec<CUgraphNode>>,
    c: Option<CUDA_MEMCPY3D>,
    _ctx: CUcontext,
) -> CuResult {
    n.required()?;
    let deps = deps.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    n.set(add_node(g, &deps, memcpy_op(c)?)?)
}

fn memset_op(p: Option<CUDA_MEMSET_NODE_PARAMS>) -> CuResult<Op> {
    let p = p.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if ![1, 2, 4].contains(&p.element_size) || p.height == 0 || p.width == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let elem = p.element_size as u64;
    let pitch = if p.height == 1 { p.width as u64 * elem } else { p.pitch as u64 };
    {
        let d = crate::state::driver()?;
        crate::memory::check_memset(&d, p.dst, pitch, elem, p.width as u64, p.height as u64)?;
    }
    Ok(Op::Memset { dst: p.dst, pitch, value: p.value, elem, w: p.width as u64, h: p.height as u64 })
}

pub fn add_memset_node(
    n: Out<CUgraphNode>,
    g: CUgraph,
    deps: Option<Vec<CUgraphNode>>,
    p: Option<CUDA_MEMSET_NODE_PARAMS>,
    _ctx: CUcontext,
) -> CuResult {
    n.required()?;
    let deps = deps.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    n.set(add_node(g, &deps, memset_op(p)?)?)
}

pub fn add_host_node(n: Out<CUgraphNode>, g: CUgraph, deps: Option<Vec<CUgraphNode>>, h: Option<HostCall>) -> CuResult {
    n.required()?;
    let deps = deps.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    n.set(add_node(g, &deps, Op::Host(h.ok_or(CUDA_ERROR_INVALID_VALUE)?))?)
}

pub fn add_empty_node(n: Out<CUgraphNode>, g: CUgraph, deps: Option<Vec<CUgraphNode>>) -> CuResult {
    n.required()?;
    let deps = deps.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    n.set(add_node(g, &deps, Op::Empty)?)
}

fn event_of(e: CUevent) -> CuResult<u64> {
    let id = handle_id(Tag::Event, e).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    crate::state::driver()?.events.get(&id).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    Ok(id)
}

pub fn add_event_node(n: Out<CUgraphNode>, g: CUgraph, deps: Option<Vec<CUgraphNode>>, e: CUevent, record: bool) -> CuResult {
    n.required()?;
    let deps = deps.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let id = event_of(e)?;
    n.set(add_node(g, &deps, if record { Op::Record(id) } else { Op::Wait(id) })?)
}

pub fn event_node_get(n: CUgraphNode, e: Out<CUevent>, record: bool) -> CuResult {
    e.required()?;
    match (node_op(n)?, record) {
        (Op::Record(id), true) | (Op::Wait(id), false) => e.set(handle(Tag::Event, id)),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn event_node_set(n: CUgraphNode, e: CUevent, record: bool) -> CuResult {
    let id = event_of(e)?;
    set_node_op(n, if record { Op::Record(id) } else { Op::Wait(id) })
}

pub fn add_child_node(n: Out<CUgraphNode>, g: CUgraph, deps: Option<Vec<CUgraphNode>>, child: CUgraph) -> CuResult {
    n.required()?;
    let deps = deps.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let c = graph_of_handle(child)?;
    n.set(add_node(g, &deps, Op::Child(c))?)
}

pub fn child_node_get_graph(n: CUgraphNode, g: Out<CUgraph>) -> CuResult {
    g.required()?;
    g.set(child_graph(n)?)
}

/// A node type the emulation does not build: answered CUDA_ERROR_NOT_SUPPORTED with a
/// log line naming it.
pub fn unsupported_node(what: &str) -> CuResult {
    crate::log_warn!("graph node type '{what}' is not emulated: answered CUDA_ERROR_NOT_SUPPORTED");
    crate::counters::get().unsupported(&format!("graph node: {what}"));
    Err(CUDA_ERROR_NOT_SUPPORTED)
}

pub fn kernel_node_get(n: CUgraphNode, out: KernelNodeOut) -> CuResult {
    match node_op(n)? {
        Op::Kernel(k) => {
            // The parameter pointers live in a thread-local list until the next call.
            let ptrs = crate::boundary::thread_handles(k.param_ptrs.clone());
            out.set(k.func as CUfunction, k.grid, k.block, k.shared, ptrs as *mut *mut std::ffi::c_void)
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn kernel_node_set(n: CUgraphNode, p: Option<KernelNodeIn>) -> CuResult {
    node_op(n)?;
    let node = kernel_node(p.ok_or(CUDA_ERROR_INVALID_VALUE)?, current_stream()?)?;
    set_node_op(n, Op::Kernel(node))
}

pub fn memcpy_node_get(n: CUgraphNode, out: Out<CUDA_MEMCPY3D>) -> CuResult {
    out.required()?;
    match node_op(n)? {
        Op::Copy3D(c) => out.set(c.get()),
        Op::Copy { dst, src, len } => {
            let mut c = Copy3D([0; 25]).get();
            c.src_memory_type = CU_MEMORYTYPE_UNIFIED;
            c.dst_memory_type = CU_MEMORYTYPE_UNIFIED;
            c.src_device = src;
            c.dst_device = dst;
            c.width_in_bytes = len as usize;
            c.height = 1;
            c.depth = 1;
            out.set(c)
        }
        Op::Copy2D { dst, dpitch, src, spitch, width, height } => {
            let mut c = Copy3D([0; 25]).get();
            c.src_memory_type = CU_MEMORYTYPE_UNIFIED;
            c.dst_memory_type = CU_MEMORYTYPE_UNIFIED;
            c.src_device = src;
            c.dst_device = dst;
            c.src_pitch = spitch as usize;
            c.dst_pitch = dpitch as usize;
            c.width_in_bytes = width as usize;
            c.height = height as usize;
            c.depth = 1;
            out.set(c)
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn memcpy_node_set(n: CUgraphNode, c: Option<CUDA_MEMCPY3D>) -> CuResult {
    node_op(n)?;
    set_node_op(n, memcpy_op(c)?)
}

pub fn memset_node_get(n: CUgraphNode, out: Out<CUDA_MEMSET_NODE_PARAMS>) -> CuResult {
    out.required()?;
    match node_op(n)? {
        Op::Memset { dst, pitch, value, elem, w, h } => out.set(CUDA_MEMSET_NODE_PARAMS {
            dst,
            pitch: pitch as usize,
            value,
            element_size: elem as u32,
            width: w as usize,
            height: h as usize,
        }),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn memset_node_set(n: CUgraphNode, p: Option<CUDA_MEMSET_NODE_PARAMS>) -> CuResult {
    node_op(n)?;
    set_node_op(n, memset_op(p)?)
}

pub fn host_node_get(n: CUgraphNode, out: Out<CUDA_HOST_NODE_PARAMS>) -> CuResult {
    out.required()?;
    match node_op(n)? {
        Op::Host(h) => out.set(h.node_params().ok_or(CUDA_ERROR_INVALID_VALUE)?),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// cuGraphAddNode (the generic form): not emulated; the answer names the node type.
pub fn add_node_generic(t: Option<u32>) -> CuResult {
    let name = match t {
        Some(CU_GRAPH_NODE_TYPE_KERNEL) => "kernel (through cuGraphAddNode)",
        Some(CU_GRAPH_NODE_TYPE_MEMCPY) => "memcpy (through cuGraphAddNode)",
        Some(CU_GRAPH_NODE_TYPE_MEMSET) => "memset (through cuGraphAddNode)",
        Some(CU_GRAPH_NODE_TYPE_HOST) => "host (through cuGraphAddNode)",
        Some(CU_GRAPH_NODE_TYPE_GRAPH) => "child graph (through cuGraphAddNode)",
        Some(CU_GRAPH_NODE_TYPE_EMPTY) => "empty (through cuGraphAddNode)",
        Some(CU_GRAPH_NODE_TYPE_WAIT_EVENT) => "event wait (through cuGraphAddNode)",
        Some(CU_GRAPH_NODE_TYPE_EVENT_RECORD) => "event record (through cuGraphAddNode)",
        Some(8) => "external semaphore signal",
        Some(9) => "external semaphore wait",
        Some(10) => "memory allocation",
        Some(11) => "memory free",
        Some(12) => "batch memory operation",
        Some(13) => "conditional",
        Some(_) => "unknown",
        None => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    unsupported_node(name)
}

pub fn host_node_set(n: CUgraphNode, h: Option<HostCall>) -> CuResult {
    set_node_op(n, Op::Host(h.ok_or(CUDA_ERROR_INVALID_VALUE)?))
}

pub fn get_nodes(g: CUgraph, out: HandleList) -> CuResult {
    out.fill(&nodes(g)?)
}

pub fn get_root_nodes(g: CUgraph, out: HandleList) -> CuResult {
    out.fill(&root_nodes(g)?)
}

pub fn get_edges(g: CUgraph, out: EdgeList) -> CuResult {
    out.fill(&edges(g)?)
}

pub fn node_get_dependencies(n: CUgraphNode, out: HandleList) -> CuResult {
    out.fill(&dependencies(n)?)
}

pub fn node_get_dependents(n: CUgraphNode, out: HandleList) -> CuResult {
    out.fill(&dependents(n)?)
}

pub fn node_get_type(n: CUgraphNode, t: Out<u32>) -> CuResult {
    t.required()?;
    t.set(node_type(n)?)
}

pub fn node_get_graph(n: CUgraphNode, g: Out<CUgraph>) -> CuResult {
    g.required()?;
    g.set(containing_graph(n)?)
}

/// cuGraphAdd/RemoveDependencies(_v2): `default_edges` false when edge data other than
/// the default was given (not emulated).
pub fn dependencies_change(
    g: CUgraph,
    from: Option<Vec<CUgraphNode>>,
    to: Option<Vec<CUgraphNode>>,
    default_edges: bool,
    add: bool,
) -> CuResult {
    if !default_edges {
        crate::log_warn!("graph edges with data (ports, programmatic dependencies) are not emulated: answered CUDA_ERROR_NOT_SUPPORTED");
        return Err(CUDA_ERROR_NOT_SUPPORTED);
    }
    let (from, to) = (from.ok_or(CUDA_ERROR_INVALID_VALUE)?, to.ok_or(CUDA_ERROR_INVALID_VALUE)?);
    change_dependencies(g, &from, &to, add)
}

pub fn graph_clone(out: Out<CUgraph>, g: CUgraph) -> CuResult {
    out.required()?;
    out.set(clone(g)?)
}

pub fn node_find_in_clone(out: Out<CUgraphNode>, original: CUgraphNode, g: CUgraph) -> CuResult {
    out.required()?;
    out.set(find_in_clone(original, g)?)
}

/// cuGraphInstantiate(_v2): the legacy form with an error node and a log buffer.
pub fn graph_instantiate_legacy(e: Out<CUgraphExec>, g: CUgraph, err_node: Out<CUgraphNode>, log: crate::boundary::OutText) -> CuResult {
    e.required()?;
    match instantiate(g, 0) {
        Ok(x) => {
            err_node.set_if_asked(std::ptr::null_mut())?;
            e.set(x)
        }
        Err(c) => {
            let _ = log.set("the graph is invalid (a cycle, or a node the emulation cannot run)");
            Err(c)
        }
    }
}

pub fn graph_instantiate(e: Out<CUgraphExec>, g: CUgraph, flags: u64) -> CuResult {
    e.required()?;
    e.set(instantiate(g, flags)?)
}

pub fn graph_instantiate_with_params(
    e: Out<CUgraphExec>,
    g: CUgraph,
    p: Out<CUDA_GRAPH_INSTANTIATE_PARAMS>,
    given: Option<CUDA_GRAPH_INSTANTIATE_PARAMS>,
) -> CuResult {
    e.required()?;
    let mut params = given.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let r = instantiate(g, params.flags);
    params.h_err_node_out = std::ptr::null_mut();
    params.result_out = match r {
        Ok(_) => CUDA_GRAPH_INSTANTIATE_SUCCESS,
        Err(CUDA_ERROR_INVALID_VALUE) => CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE,
        Err(_) => CUDA_GRAPH_INSTANTIATE_ERROR,
    };
    p.set(params)?;
    e.set(r?)
}

/// cuMemcpy3D(Async): on a capturing stream a memcpy node (checked now); otherwise the
/// copy (api::texture).
pub fn memcpy_3d(p: Option<CUDA_MEMCPY3D>, stream: Option<CUstream>) -> CuResult {
    if active() {
        if let Some(c) = p {
            let key = crate::queue::key(&*crate::state::driver()?, stream.unwrap_or(std::ptr::null_mut()))?;
            if involved(key) {
                return capture(key, || memcpy_op(Some(c))).unwrap_or(Ok(()));
            }
        }
    }
    crate::api::texture::memcpy_3d(p, stream)
}

/// cuGraphLaunch: the graph's steps as one unit of work on the stream (captured as a
/// child graph when the stream captures).
pub fn graph_launch(e: CUgraphExec, s: CUstream) -> CuResult {
    let plan = exec_plan(e)?;
    let key = crate::queue::key(&*crate::state::driver()?, s)?;
    let p = plan.clone();
    if let Some(r) = capture(key, move || Ok(Op::Launch(p))) {
        return r;
    }
    let stream = s as usize;
    crate::queue::submit(key, crate::queue::Work::Graph(Box::new(move || run_plan(&plan, stream))), &crate::queue::origin("cuGraphLaunch"))
}

/// cuGraphUpload: nothing to upload; the handles are checked.
pub fn graph_upload(e: CUgraphExec, s: CUstream) -> CuResult {
    exec_plan(e)?;
    crate::queue::key(&*crate::state::driver()?, s)?;
    Ok(())
}

pub fn graph_exec_destroy(e: CUgraphExec) -> CuResult {
    exec_destroy(e)
}

pub fn graph_destroy(g: CUgraph) -> CuResult {
    destroy(g)
}

pub fn graph_destroy_node(n: CUgraphNode) -> CuResult {
    destroy_node(n)
}

pub fn exec_get_flags(e: CUgraphExec, f: Out<u64>) -> CuResult {
    f.required()?;
    f.set(exec_flags(e)?)
}

pub fn exec_kernel_node_set(e: CUgraphExec, n: CUgraphNode, p: Option<KernelNodeIn>) -> CuResult {
    exec_plan(e)?;
    if node_type(n)? != CU_GRAPH_NODE_TYPE_KERNEL {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let node = kernel_node(p.ok_or(CUDA_ERROR_INVALID_VALUE)?, current_stream()?)?;
    exec_set_op(e, n, Op::Kernel(node))
}

pub fn exec_memcpy_node_set(e: CUgraphExec, n: CUgraphNode, c: Option<CUDA_MEMCPY3D>, _ctx: CUcontext) -> CuResult {
    exec_set_op(e, n, memcpy_op(c)?)
}

pub fn exec_memset_node_set(e: CUgraphExec, n: CUgraphNode, p: Option<CUDA_MEMSET_NODE_PARAMS>, _ctx: CUcontext) -> CuResult {
    exec_set_op(e, n, memset_op(p)?)
}

pub fn exec_host_node_set(e: CUgraphExec, n: CUgraphNode, h: Option<HostCall>) -> CuResult {
    exec_set_op(e, n, Op::Host(h.ok_or(CUDA_ERROR_INVALID_VALUE)?))
}

pub fn exec_event_node_set(e: CUgraphExec, n: CUgraphNode, ev: CUevent, record: bool) -> CuResult {
    let id = event_of(ev)?;
    exec_set_op(e, n, if record { Op::Record(id) } else { Op::Wait(id) })
}

/// cuGraphExecUpdate (the CUDA 10.2 form: error node and result).
pub fn exec_update_v1(e: CUgraphExec, g: CUgraph, err: Out<CUgraphNode>, result: Out<u32>) -> CuResult {
    err.required()?;
    result.required()?;
    let o = exec_update(e, g)?;
    err.set(o.node as CUgraphNode)?;
    result.set(o.result)?;
    update_code(&o)
}

/// cuGraphExecUpdate_v2: the result info.
pub fn exec_update_v2(e: CUgraphExec, g: CUgraph, info: Out<CUgraphExecUpdateResultInfo>) -> CuResult {
    info.required()?;
    let o = exec_update(e, g)?;
    info.set(CUgraphExecUpdateResultInfo { result: o.result, error_node: o.node as CUgraphNode, error_from_node: o.from as CUgraphNode })?;
    update_code(&o)
}

fn update_code(o: &UpdateOutcome) -> CuResult {
    if o.result == CU_GRAPH_EXEC_UPDATE_SUCCESS {
        Ok(())
    } else {
        crate::log_warn!(
            "cuGraphExecUpdate: not updated (result {}): only a graph of the same topology can update an executable graph",
            o.result
        );
        Err(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    }
}

// ---- capture entry points -----------------------------------------------------------

fn stream_key(s: CUstream) -> CuResult<(StreamKey, bool)> {
    let d = crate::state::driver()?;
    let key = crate::queue::key(&d, s)?;
    let blocking = match key.stream {
        Some(id) => d.streams.get(&id).is_some_and(|st| st.flags & CU_STREAM_NON_BLOCKING == 0),
        None => true,
    };
    Ok((key, blocking))
}

/// cuStreamBeginCapture (CUDA 10.0: no mode, global).
pub fn begin_capture_v1(s: CUstream) -> CuResult {
    stream_begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)
}

pub fn stream_begin_capture(s: CUstream, mode: u32) -> CuResult {
    let (key, blocking) = stream_key(s)?;
    begin_capture(key, blocking, mode)
}

pub fn stream_end_capture(s: CUstream, g: Out<CUgraph>) -> CuResult {
    g.required()?;
    let (key, _) = stream_key(s)?;
    match end_capture(key) {
        Ok(graph) => g.set(graph),
        Err(e) => {
            if e == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED || e == CUDA_ERROR_STREAM_CAPTURE_UNJOINED {
                g.set(std::ptr::null_mut())?;
            }
            Err(e)
        }
    }
}

pub fn stream_is_capturing(s: CUstream, status: Out<u32>) -> CuResult {
    status.required()?;
    let (key, _) = stream_key(s)?;
    status.set(capture_info(key).0)
}

/// cuStreamGetCaptureInfo (every version): what the caller asks for.
pub fn stream_get_capture_info(
    s: CUstream,
    status: Out<u32>,
    id: Out<u64>,
    graph: Out<CUgraph>,
    deps: Out<*const CUgraphNode>,
    edges: Out<*const std::ffi::c_void>,
    count: Out<usize>,
) -> CuResult {
    status.required()?;
    let (key, _) = stream_key(s)?;
    let (st, cid, g, d) = capture_info(key);
    status.set(st)?;
    id.set_if_asked(cid)?;
    graph.set_if_asked(g)?;
    count.set_if_asked(d.len())?;
    edges.set_if_asked(std::ptr::null())?;
    deps.set_if_asked(crate::boundary::thread_handles(d))
}

pub fn thread_exchange_mode(mode: Out<u32>, given: Option<u32>) -> CuResult {
    let m = given.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    mode.set(exchange_mode(m)?)
}

/// Whether work submitted to `key` concerns a capture (the stream captures, or it is the
/// legacy stream of a context where a blocking stream captures).
pub fn involved(key: StreamKey) -> bool {
    active()
        && with(|r| {
            r.by_stream.contains_key(&key)
                || (key.stream.is_none() && r.captures.values().any(|c| c.blocking.iter().any(|k| k.ctx == key.ctx)))
        })
}

/// Work a capture cannot hold (stream-ordered allocation and free nodes, batch memory
/// operations): the capture is invalidated and the call answers CUDA_ERROR_NOT_SUPPORTED,
/// with a log line naming the node type.
pub fn refuse(key: StreamKey, what: &str) -> CuResult {
    with(|r| {
        if let Some(&cid) = r.by_stream.get(&key) {
            invalidate(r, &[cid], &format!("a {what} node is not emulated"));
        }
    });
    unsupported_node(what)
}
