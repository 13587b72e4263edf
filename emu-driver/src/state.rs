//! Driver state: contexts, the allocation tracker, modules, functions, streams, events
//! and pools, behind one lock, and the rules that find the context a call acts in. Handles are tagged integers (never host pointers to driver
//! memory), so a stale or forged handle is looked up and refused instead of dereferenced.

use crate::config::Config;
use crate::cu::*;
use crate::profile::Profile;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

pub use crate::boundary::CuResult;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    Context = 0xC7,
    Module = 0x3D,
    Function = 0xF1,
    Stream = 0x57,
    Event = 0xE7,
    Pool = 0x9F,
    /// A physical allocation of the virtual-memory API (CUmemGenericAllocationHandle).
    MemHandle = 0xA1,
    /// A JIT linker's state (CUlinkState).
    Link = 0x11,
    /// A context-independent library (CUlibrary).
    Library = 0x1B,
    /// A kernel of a library (CUkernel).
    Kernel = 0x4E,
    /// A CUDA array (CUarray), also a level of a mipmapped array.
    Array = 0xA7,
    /// A mipmapped array (CUmipmappedArray).
    Mipmap = 0x3A,
    /// A graph (CUgraph), one of its nodes (CUgraphNode), an executable graph (CUgraphExec).
    Graph = 0x6A,
    GraphNode = 0x6B,
    GraphExec = 0x6C,
}

/// Handle values: 0x7f5e_TT00_0000_0000 | id. High enough not to collide with the special
/// stream handles 0x1/0x2, recognisable in a debugger.
pub fn handle(tag: Tag, id: u64) -> *mut std::ffi::c_void {
    ((0x7f5e_u64 << 48) | ((tag as u64) << 40) | id) as usize as *mut std::ffi::c_void
}

/// A map keyed by the driver's own ids. They are sequential integers the driver hands
/// out, not hostile input, so a multiplicative hash does; SipHash cost about a tenth of
/// a cheap call such as cuStreamQuery.
pub type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// The hasher of [`IdMap`]: one multiply by a 64-bit odd constant (Fibonacci hashing).
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub fn handle_id(tag: Tag, h: *mut std::ffi::c_void) -> Option<u64> {
    let v = h as usize as u64;
    if v >> 48 == 0x7f5e && ((v >> 40) & 0xff) == tag as u64 {
        Some(v & ((1 << 40) - 1))
    } else {
        None
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocKind {
    Device,
    Pitched,
    PinnedHost,
    Managed,
    StreamOrdered,
    /// A module's __device__ / __constant__ variable (owned by the module).
    ModuleGlobal,
    /// The memory of a CUDA array (owned by the array: not a device pointer a program has).
    Array,
    /// Host memory registered with cuMemHostRegister (not owned).
    Registered,
    /// A mapping of the virtual-memory API with access for the device (owned by
    /// `vmm`, not by a context: `ctx` is 0). Adjacent mappings form one range for
    /// copies and memsets, as they do on a device.
    Mapped,
    /// The same, read-only (cuMemSetAccess with CU_MEM_ACCESS_FLAGS_PROT_READ).
    MappedReadOnly,
}

impl AllocKind {
    pub fn is_host(self) -> bool {
        matches!(self, AllocKind::PinnedHost | AllocKind::Registered)
    }
    /// Host memory a kernel reaches without a copy call (a launch's zero-copy count).
    pub fn is_zero_copy(self) -> bool {
        matches!(self, AllocKind::PinnedHost | AllocKind::Registered | AllocKind::Managed)
    }
    /// A mapping of the virtual-memory API.
    pub fn is_mapping(self) -> bool {
        matches!(self, AllocKind::Mapped | AllocKind::MappedReadOnly)
    }
    pub fn name(self) -> &'static str {
        match self {
            AllocKind::Device => "device",
            AllocKind::Pitched => "pitched",
            AllocKind::PinnedHost => "pinned host",
            AllocKind::Managed => "managed",
            AllocKind::StreamOrdered => "stream-ordered",
            AllocKind::ModuleGlobal => "module global",
            AllocKind::Array => "CUDA array",
            AllocKind::Registered => "registered host",
            AllocKind::Mapped => "virtual-memory mapping",
            AllocKind::MappedReadOnly => "read-only virtual-memory mapping",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Alloc {
    pub base: u64,
    pub size: u64,
    /// Start of the mapping (the lower guard page); 0 when the memory is not ours.
    pub map_start: u64,
    /// Bytes mapped, guard pages included; 0 when the memory is not ours.
    pub mapped: u64,
    pub kind: AllocKind,
    pub ctx: u64,
    pub pool: Option<u64>,
    /// Unique over the process's lifetime (CU_POINTER_ATTRIBUTE_BUFFER_ID).
    pub id: u64,
}

pub struct Context {
    pub device: i32,
    pub flags: u32,
    pub primary: bool,
    /// The sticky execution error, once a kernel failed (CUDA_ERROR_ASSERT, ...).
    pub sticky: Option<CUresult>,
    pub limits: HashMap<u32, u64>,
    pub cache_config: u32,
    pub shared_config: u32,
    /// The grid workspace, made at the context's first cooperative launch and handed to
    /// every launch after it.
    pub grid_workspace: Option<Box<GridWorkspace>>,
}

/// A context's grid workspace, as the device keeps one (measured on an H100,
/// reports/reference/h200/coop-graphs/): made at the context's first cooperative launch
/// and handed to that launch and every later one, cooperative or not, through
/// `%envreg1`:`%envreg2` (before it, a plain launch reads 0 and a grid sync traps);
/// 256 bytes, 256-byte aligned, its first word the workspace's size (16, as the device's
/// reads) and the grid barrier's counter at offset 4 (0 when made; a completed grid sync
/// leaves it as cooperative_groups' barrier expects, so it is never reset).
#[repr(C, align(256))]
pub struct GridWorkspace(pub [u64; 32]);

impl GridWorkspace {
    pub fn new() -> Box<GridWorkspace> {
        let mut w = Box::new(GridWorkspace([0; 32]));
        w.0[0] = 16;
        w
    }
}

pub struct Primary {
    pub ctx: Option<u64>,
    pub refcount: u32,
    pub flags: u32,
    /// A sticky execution error of any context of the device (it outlives the context
    /// on a real device): cuDevicePrimaryCtxRetain, also after cuDevicePrimaryCtxReset,
    /// and cuCtxCreate answer it from then on (measured on an H200: `sticky_*`).
    pub poisoned: Option<CUresult>,
}

pub struct Stream {
    pub ctx: u64,
    pub flags: u32,
    pub priority: i32,
}

pub struct Event {
    pub ctx: u64,
    pub flags: u32,
    pub recorded: Option<std::time::Instant>,
}

pub struct Pool {
    pub release_threshold: u64,
    pub used: u64,
    pub used_high: u64,
    pub reuse_flags: [i32; 3],
    pub default: bool,
}

/// A JIT linker's state: the PTX modules added, and the image cuLinkComplete made (it
/// lives until cuLinkDestroy, as the API says of `cubinOut`).
#[derive(Default)]
pub struct LinkState {
    pub modules: Vec<String>,
    /// Library inputs (ar archives), resolved at cuLinkComplete (simtwin_abi::devrt).
    pub archives: Vec<simtwin_abi::devrt::Archive>,
    pub image: Option<Vec<u8>>,
    /// cuLinkCreate's CU_JIT_OPTIMIZATION_LEVEL, if given.
    pub opt_level: Option<u8>,
}

/// A library's kernel (CUkernel): its library, its name and the function handle it stands
/// for (made when the kernel handle was).
pub struct LibKernel {
    pub library: u64,
    pub name: String,
    pub function: u64,
}

/// A library (cuLibraryLoadData): its module, loaded into the context that was current
/// (or the primary context) when the library was loaded, and its kernels' names.
pub struct Library {
    pub module: u64,
    pub ctx: u64,
    pub kernels: Vec<String>,
}

/// A launch's threads per block, shared bytes per block (static and dynamic) and
/// registers per thread: what its resident blocks depend on.
pub type LaunchShape = (u64, u64, u32);

pub struct Driver {
    pub config: Config,
    pub profile: &'static Profile,
    pub next_id: u64,
    pub contexts: IdMap<Context>,
    pub primary: Vec<Primary>,
    /// Tracked allocations by base address. Entered and removed through `insert_alloc`
    /// and `remove_alloc`, which keep `zero_copy_allocs`.
    pub allocs: BTreeMap<u64, Alloc>,
    /// How many of `allocs` are of a zero-copy kind (`AllocKind::is_zero_copy`): a launch
    /// looks its pointer arguments up only when there is one.
    pub zero_copy_allocs: usize,
    /// The last launch shape's resident blocks (`launch::resident_blocks`), by threads,
    /// shared bytes and registers: consecutive launches of one kernel skip its divisions.
    pub resident_memo: std::cell::Cell<Option<(LaunchShape, u32)>>,
    pub used_bytes: u64,
    pub modules: IdMap<Arc<crate::module::Module>>,
    pub functions: IdMap<crate::module::FunctionRef>,
    pub streams: IdMap<Stream>,
    pub events: IdMap<Event>,
    pub pools: IdMap<Pool>,
    pub device_pool: Vec<u64>,
    /// The virtual-memory API's physical allocations, reservations and mappings (its
    /// accessible mappings are in `allocs` too).
    pub vmm: crate::vmm::Vmm,
    /// The JIT linker's states (cuLinkCreate ... cuLinkDestroy).
    pub links: IdMap<LinkState>,
    /// Libraries (cuLibraryLoadData) and their kernels (CUkernel handles).
    pub libraries: IdMap<Library>,
    pub lib_kernels: IdMap<LibKernel>,
    /// CUDA arrays (cuArrayCreate, cuArray3DCreate, levels of mipmapped arrays).
    pub arrays: IdMap<Arc<crate::texture::Array>>,
    /// Mipmapped arrays: the array ids of their levels.
    pub mipmaps: IdMap<Vec<u64>>,
}

static DRIVER: OnceLock<Mutex<Option<Driver>>> = OnceLock::new();

fn cell() -> &'static Mutex<Option<Driver>> {
    DRIVER.get_or_init(|| Mutex::new(None))
}

pub struct Guard(MutexGuard<'static, Option<Driver>>);

impl std::ops::Deref for Guard {
    type Target = Driver;
    fn deref(&self) -> &Driver {
        self.0.as_ref().expect("driver initialised")
    }
}
impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut Driver {
        self.0.as_mut().expect("driver initialised")
    }
}

/// The driver, or CUDA_ERROR_NOT_INITIALIZED before a successful cuInit.
pub fn driver() -> CuResult<Guard> {
    let g = cell().lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        return Err(CUDA_ERROR_NOT_INITIALIZED);
    }
    Ok(Guard(g))
}

/// The driver if it is initialised and its lock is free right now (exit-time reports
/// must not wait for a thread that will never release it).
pub fn try_driver() -> Option<Guard> {
    let g = cell().try_lock().ok()?;
    g.is_some().then(|| Guard(g))
}

pub fn is_initialised() -> bool {
    cell().lock().map(|g| g.is_some()).unwrap_or(false)
}

pub fn initialise(config: Config) -> CuResult {
    let mut g = cell().lock().unwrap_or_else(|e| e.into_inner());
    if g.is_some() {
        return Ok(());
    }
    let profile = crate::profile::by_name(&config.device).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let mut d = Driver {
        config,
        profile,
        next_id: 1,
        contexts: IdMap::default(),
        primary: vec![Primary { ctx: None, refcount: 0, flags: 0, poisoned: None }],
        allocs: BTreeMap::new(),
        zero_copy_allocs: 0,
        resident_memo: std::cell::Cell::new(None),
        used_bytes: 0,
        modules: IdMap::default(),
        functions: IdMap::default(),
        streams: IdMap::default(),
        events: IdMap::default(),
        pools: IdMap::default(),
        device_pool: Vec::new(),
        vmm: crate::vmm::Vmm::default(),
        links: IdMap::default(),
        libraries: IdMap::default(),
        lib_kernels: IdMap::default(),
        arrays: IdMap::default(),
        mipmaps: IdMap::default(),
    };
    let pool = d.new_id();
    d.pools.insert(pool, Pool { release_threshold: 0, used: 0, used_high: 0, reuse_flags: [1, 1, 1], default: true });
    d.device_pool.push(pool);
    *g = Some(d);
    Ok(())
}

thread_local! {
    /// The calling host thread's context stack (top = current).
    static CTX_STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

pub fn ctx_stack<R>(f: impl FnOnce(&mut Vec<u64>) -> R) -> R {
    CTX_STACK.with(|s| f(&mut s.borrow_mut()))
}

pub fn current_ctx_id() -> Option<u64> {
    ctx_stack(|s| s.last().copied())
}

impl Driver {
    /// The function a library's kernel handle (CUkernel) stands for, where the API takes
    /// one for a CUfunction (cuLaunchKernel, cuFuncGetAttribute, ...).
    pub fn kernel_function(&self, k: *mut std::ffi::c_void) -> Result<u64, crate::cu::CUresult> {
        let id = handle_id(Tag::Kernel, k).ok_or(crate::cu::CUDA_ERROR_INVALID_HANDLE)?;
        self.lib_kernels.get(&id).map(|k| k.function).ok_or(crate::cu::CUDA_ERROR_INVALID_HANDLE)
    }

    pub fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub fn device_count(&self) -> i32 {
        self.primary.len() as i32
    }

    pub fn check_device(&self, dev: CUdevice) -> CuResult {
        if dev < 0 || dev >= self.device_count() {
            return Err(CUDA_ERROR_INVALID_DEVICE);
        }
        Ok(())
    }

    /// The current context of the calling thread, with its sticky error applied.
    pub fn current(&self) -> CuResult<u64> {
        let id = current_ctx_id().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        let ctx = self.contexts.get(&id).ok_or(CUDA_ERROR_CONTEXT_IS_DESTROYED)?;
        if let Some(code) = ctx.sticky {
            return Err(code);
        }
        Ok(id)
    }

    /// The current context without the sticky check (calls that work after an error).
    pub fn current_unchecked(&self) -> CuResult<u64> {
        let id = current_ctx_id().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        self.contexts.get(&id).ok_or(CUDA_ERROR_CONTEXT_IS_DESTROYED)?;
        Ok(id)
    }

    pub fn ctx_from_handle(&self, h: CUcontext) -> CuResult<u64> {
        let id = handle_id(Tag::Context, h).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        if !self.contexts.contains_key(&id) {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        Ok(id)
    }

    pub fn set_sticky(&mut self, ctx: u64, code: CUresult) {
        if let Some(c) = self.contexts.get_mut(&ctx) {
            c.sticky.get_or_insert(code);
            let dev = c.device as usize;
            if let Some(p) = self.primary.get_mut(dev) {
                p.poisoned.get_or_insert(code);
            }
        }
    }

    /// The allocation nearest to `addr` (holding it, or the closest below or above),
    /// with the signed offset of `addr` from its base: for fault reports.
    pub fn nearest_alloc(&self, addr: u64) -> Option<(&Alloc, i128)> {
        let below = self.allocs.range(..=addr).next_back().map(|(_, a)| a);
        let above = self.allocs.range(addr.saturating_add(1)..).next().map(|(_, a)| a);
        let dist = |a: &Alloc| {
            if addr < a.base {
                a.base - addr
            } else {
                addr.saturating_sub(a.base + a.size.max(1) - 1)
            }
        };
        let best = match (below, above) {
            (Some(b), Some(u)) => {
                if dist(b) <= dist(u) {
                    b
                } else {
                    u
                }
            }
            (Some(b), None) => b,
            (None, Some(u)) => u,
            (None, None) => return None,
        };
        Some((best, addr as i128 - best.base as i128))
    }

    /// Tracks an allocation at its base (replacing what was tracked there).
    pub fn insert_alloc(&mut self, a: Alloc) {
        insert_counted(&mut self.allocs, &mut self.zero_copy_allocs, a);
    }

    /// Stops tracking the allocation at `base`.
    pub fn remove_alloc(&mut self, base: u64) -> Option<Alloc> {
        remove_counted(&mut self.allocs, &mut self.zero_copy_allocs, base)
    }

    /// The allocation holding `ptr`, if any.
    pub fn find_alloc(&self, ptr: u64) -> Option<&Alloc> {
        let (_, a) = self.allocs.range(..=ptr).next_back()?;
        if ptr < a.base + a.size.max(1) {
            Some(a)
        } else {
            None
        }
    }

    /// Checks that [ptr, ptr+len) lies inside one tracked allocation, or inside
    /// adjacent accessible mappings of the virtual-memory API.
    pub fn check_range(&self, ptr: u64, len: u64) -> CuResult<&Alloc> {
        let a = self.find_alloc(ptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let end = ptr.checked_add(len).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if end > a.base + a.size && !(a.kind.is_mapping() && self.mapped_through(a.base + a.size, end)) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Ok(a)
    }

    /// Refuses a write to [ptr, ptr+len) that would reach a read-only mapping of the
    /// virtual-memory API (the host pages are read-only: a write would fault).
    pub fn check_writable(&self, ptr: u64, len: u64) -> CuResult {
        let end = ptr.saturating_add(len.max(1));
        let read_only = |a: &Alloc| a.kind == AllocKind::MappedReadOnly;
        if self.find_alloc(ptr).is_some_and(read_only) || self.allocs.range(ptr..end).any(|(_, a)| read_only(a)) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Ok(())
    }

    /// Whether accessible mappings follow each other without a gap from `at` to `end`.
    fn mapped_through(&self, mut at: u64, end: u64) -> bool {
        while at < end {
            match self.allocs.get(&at) {
                Some(b) if b.kind.is_mapping() => at = b.base + b.size,
                _ => return false,
            }
        }
        true
    }

    /// A context by id, with its sticky error applied.
    pub fn context(&self, id: u64) -> CuResult<u64> {
        let ctx = self.contexts.get(&id).ok_or(CUDA_ERROR_CONTEXT_IS_DESTROYED)?;
        match ctx.sticky {
            Some(code) => Err(code),
            None => Ok(id),
        }
    }

    /// A context by id, without the sticky check.
    pub fn context_unchecked(&self, id: u64) -> CuResult<u64> {
        self.contexts.get(&id).map(|_| id).ok_or(CUDA_ERROR_CONTEXT_IS_DESTROYED)
    }

    /// The context a call on `stream` acts in: a named stream's own context (no context
    /// needs to be current, as on an H200); for the NULL, legacy and per-thread default
    /// streams the calling thread's current context.
    pub fn stream_context(&self, stream: CUstream) -> CuResult<u64> {
        match self.named_stream(stream)? {
            Some(ctx) => self.context(ctx),
            None => self.current(),
        }
    }

    /// As `stream_context`, without the sticky check.
    pub fn stream_context_unchecked(&self, stream: CUstream) -> CuResult<u64> {
        match self.named_stream(stream)? {
            Some(ctx) => self.context_unchecked(ctx),
            None => self.current_unchecked(),
        }
    }

    /// The context of a named stream; None for the default streams.
    fn named_stream(&self, stream: CUstream) -> CuResult<Option<u64>> {
        let v = stream as usize;
        if v == 0 || v == CU_STREAM_LEGACY || v == CU_STREAM_PER_THREAD {
            return Ok(None);
        }
        let id = handle_id(Tag::Stream, stream).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        Ok(Some(self.streams.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx))
    }

    /// The context owning the allocation that holds `ptr` (pointer calls take their
    /// context from the pointer); the current context when the pointer is unknown.
    pub fn alloc_ctx(&self, ptr: u64) -> CuResult<u64> {
        match self.find_alloc(ptr) {
            Some(a) if a.kind.is_mapping() => self.current(),
            Some(a) => self.context(a.ctx),
            None => self.current(),
        }
    }
}

/// `Driver::insert_alloc` on its two fields: the table and its count of zero-copy kinds.
fn insert_counted(allocs: &mut BTreeMap<u64, Alloc>, zero_copy: &mut usize, a: Alloc) {
    *zero_copy += a.kind.is_zero_copy() as usize;
    if let Some(old) = allocs.insert(a.base, a) {
        *zero_copy -= old.kind.is_zero_copy() as usize;
    }
}

/// `Driver::remove_alloc` on its two fields.
fn remove_counted(allocs: &mut BTreeMap<u64, Alloc>, zero_copy: &mut usize, base: u64) -> Option<Alloc> {
    let a = allocs.remove(&base)?;
    *zero_copy -= a.kind.is_zero_copy() as usize;
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(base: u64, kind: AllocKind) -> Alloc {
        Alloc { base, size: 64, map_start: 0, mapped: 0, kind, ctx: 1, pool: None, id: base }
    }

    #[test]
    fn the_zero_copy_count_follows_inserts_replacements_and_removals() {
        let (mut m, mut n) = (BTreeMap::new(), 0);
        insert_counted(&mut m, &mut n, alloc(0x1000, AllocKind::Device));
        assert_eq!(n, 0);
        for (base, kind) in [(0x2000, AllocKind::PinnedHost), (0x3000, AllocKind::Registered), (0x4000, AllocKind::Managed)] {
            insert_counted(&mut m, &mut n, alloc(base, kind));
        }
        assert_eq!(n, 3);
        // A mapping replaced at the same base with another kind (cuMemSetAccess).
        insert_counted(&mut m, &mut n, alloc(0x2000, AllocKind::Mapped));
        assert_eq!(n, 2);
        insert_counted(&mut m, &mut n, alloc(0x1000, AllocKind::PinnedHost));
        assert_eq!(n, 3);
        assert!(remove_counted(&mut m, &mut n, 0x5000).is_none());
        assert_eq!(n, 3);
        for base in [0x1000, 0x2000, 0x3000, 0x4000] {
            assert!(remove_counted(&mut m, &mut n, base).is_some());
        }
        assert_eq!((n, m.len()), (0, 0));
    }
}
