//! Pass-through (EMU_CUDA_REAL=path of a real libcuda.so.1): every exported entry point
//! forwards to the real driver's entry of the same name, and the counters see what the
//! program did — calls and failures by name, copies by direction and bytes, memsets,
//! allocations, launches by kernel name, synchronisations, leaks — in the same schema
//! as the emulated driver. On a GPU machine this replaces a CUPTI injection library for
//! call and transfer audits.
//!
//! The real library is opened with RTLD_DEEPBIND, so its own references to `cu*` names
//! bind to itself and not to this library's exports of the same names. Entries with a
//! declared signature forward through a typed call and observe arguments and result;
//! unimplemented and legacy entries forward through a register-preserving trampoline
//! (`exports.rs`) and are counted by name only. cuGetProcAddress hands out this
//! library's wrappers (so calls through it are counted too) and the real driver's
//! pointer for names this library does not export; cuGetExportTable is forwarded.

use crate::cu::*;
use simtwin_abi::counters::Dir;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::path::Path;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The real driver.
pub struct Real {
    handle: usize,
    /// Resolved addresses by export-table index: 0 = not looked up, 1 = absent.
    addrs: Vec<AtomicUsize>,
}

/// What pass-through tracks to count launches by name and to report leaks.
#[derive(Default)]
struct Tracked {
    /// Live allocations: address -> (pinned host?, bytes).
    allocs: HashMap<u64, (bool, u64)>,
    modules: HashMap<usize, ()>,
    streams: HashMap<usize, ()>,
    events: HashMap<usize, ()>,
    /// Function handle -> kernel name.
    functions: HashMap<usize, String>,
}

static REAL: OnceLock<Result<Real, String>> = OnceLock::new();
/// Number of export-table entries (set by the export table before the first use).
static ENTRIES: AtomicUsize = AtomicUsize::new(0);

/// Tells pass-through how many exported entries there are (the export table calls it).
pub fn set_entries(n: usize) {
    ENTRIES.store(n, Ordering::Relaxed);
}
static TRACKED: Mutex<Option<Tracked>> = Mutex::new(None);

/// Whether EMU_CUDA_REAL asks for pass-through.
pub fn enabled() -> bool {
    matches!(crate::config::get(), Ok(c) if c.real.is_some())
}

/// The real driver, opened at first use; the error says why it could not be.
pub fn real() -> Result<&'static Real, &'static str> {
    let r = REAL.get_or_init(|| {
        let path = crate::config::get().ok().and_then(|c| c.real.clone()).ok_or("EMU_CUDA_REAL is not set")?;
        open(&path).inspect_err(|e| crate::log_error!("EMU_CUDA_REAL={}: {e}", path.display()))
    });
    r.as_ref().map_err(|e| e.as_str())
}

fn open(path: &Path) -> Result<Real, String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| "a path with a NUL byte".to_string())?;
    // SAFETY: dlopen of a library the user named as their real driver.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND) };
    if h.is_null() {
        // SAFETY: dlerror returns a NUL-terminated message or null.
        let e = unsafe { simtwin_abi::ffi::c_str(libc::dlerror()) };
        return Err(format!("cannot load: {e}"));
    }
    let marker = CString::new(simtwin_abi::EMULATED_DRIVER_SYMBOL).expect("no NUL");
    // SAFETY: a symbol lookup in the handle just opened.
    let is_simtwin = !unsafe { libc::dlsym(h, marker.as_ptr()) }.is_null();
    let init = CString::new("cuInit").expect("no NUL");
    // SAFETY: as above.
    let has_init = !unsafe { libc::dlsym(h, init.as_ptr()) }.is_null();
    if is_simtwin {
        return Err("this is simtwin's emulated driver itself, not a real driver: refused".into());
    }
    if !has_init {
        return Err("not a CUDA driver (no cuInit)".into());
    }
    let n = ENTRIES.load(Ordering::Relaxed);
    Ok(Real { handle: h as usize, addrs: (0..n).map(|_| AtomicUsize::new(0)).collect() })
}

impl Real {
    /// The real driver's entry `name` (export-table index `id`), if it has one.
    pub fn address(&self, id: usize, name: &str) -> Option<usize> {
        let Some(slot) = self.addrs.get(id) else { return self.symbol(name) };
        let a = slot.load(Ordering::Relaxed);
        if a > 1 {
            return Some(a);
        }
        if a == 1 {
            return None;
        }
        let f = self.symbol(name);
        slot.store(f.unwrap_or(1), Ordering::Relaxed);
        f
    }
    /// Any symbol of the real driver.
    pub fn symbol(&self, name: &str) -> Option<usize> {
        let c = CString::new(name).ok()?;
        // SAFETY: a symbol lookup in the real driver's handle.
        let p = unsafe { libc::dlsym(self.handle as *mut c_void, c.as_ptr()) };
        (!p.is_null()).then_some(p as usize)
    }
}

/// The `driver` field of the counters in pass-through.
pub fn driver_label() -> Option<String> {
    crate::config::get().ok().and_then(|c| c.real.as_ref()).map(|p| format!("pass-through {}", p.display()))
}

/// A register-sized copy of an argument (for observation after the call).
pub fn word<T>(v: &T) -> u64 {
    let mut w = 0u64;
    let n = std::mem::size_of::<T>().min(8);
    // SAFETY: copies the first n <= 8 bytes of `v` into `w`.
    unsafe { std::ptr::copy_nonoverlapping(v as *const T as *const u8, &mut w as *mut u64 as *mut u8, n) };
    w
}

/// For a forwarding trampoline (unimplemented and legacy entries): counts the call and
/// returns the real entry's address, or 0 when pass-through is off or the real driver
/// lacks it (the trampoline then runs the emulated entry).
pub fn trampoline_target(names: &'static [&'static str], id: usize) -> usize {
    if !enabled() {
        return 0;
    }
    let name = names[id];
    let counters = crate::counters::get();
    counters.call_entry(names, id);
    match real().ok().and_then(|r| r.address(id, name)) {
        Some(a) => a,
        None => {
            counters.unsupported(name);
            0
        }
    }
}

/// Forwards a typed entry: counts, applies EMU_CUDA_FAIL, calls the real driver through
/// `call(address)`, observes arguments and result.
pub fn forward(names: &'static [&'static str], id: usize, args: &[u64], call: impl FnOnce(usize) -> CUresult) -> CUresult {
    let name = names[id];
    let counters = crate::counters::get();
    let nth = counters.call_entry(names, id) + 1;
    let r = match real() {
        Err(_) => {
            if name == "cuInit" {
                CUDA_ERROR_INVALID_VALUE
            } else {
                CUDA_ERROR_NOT_INITIALIZED
            }
        }
        Ok(real) => {
            if let Some(c) = crate::config::get().ok().and_then(|cfg| crate::inject::check(&cfg.fail, name, nth)) {
                counters.injected(name, nth, c);
                c
            } else {
                match real.address(id, name) {
                    None => {
                        counters.unsupported(name);
                        CUDA_ERROR_NOT_SUPPORTED
                    }
                    Some(a) => {
                        let r = call(a);
                        observe(real, observed(names, id), args, r);
                        if r == CUDA_SUCCESS && crate::trace::enabled() {
                            crate::trace::passthrough::forwarded(name, args, &|s| real.symbol(s));
                        }
                        r
                    }
                }
            }
        }
    };
    if r != CUDA_SUCCESS {
        counters.failure(name);
    }
    crate::log_calls!("call {name} -> {} (pass-through)", crate::errors::name(r));
    r
}

/// Reads a value the real driver wrote through an out-pointer argument (or a struct the
/// program passed in); zero for null.
fn read_out<T: Copy>(p: u64) -> T {
    if p == 0 {
        // SAFETY: the types read here are plain C structs and integers, for which all
        // zero bytes is a valid value.
        return unsafe { std::mem::zeroed() };
    }
    // SAFETY: the program passed this pointer and the real driver accepted it.
    unsafe { (p as *const T).read_unaligned() }
}

/// The memory type the real driver reports for a pointer (copies through cuMemcpy and
/// cuMemcpyAsync have no direction in their name).
fn memory_type(real: &Real, p: u64) -> u32 {
    type F = unsafe extern "C" fn(*mut c_void, u32, u64) -> CUresult;
    let Some(f) = real.symbol("cuPointerGetAttribute") else { return CU_MEMORYTYPE_HOST };
    let mut t = 0u32;
    // SAFETY: the real cuPointerGetAttribute with an out-pointer to a u32.
    let r = unsafe { std::mem::transmute::<usize, F>(f)(&mut t as *mut u32 as *mut c_void, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) };
    if r == CUDA_SUCCESS {
        t
    } else {
        CU_MEMORYTYPE_HOST
    }
}

fn side(real: &Real, mem_type: u32, p: u64) -> bool {
    let t = if mem_type == CU_MEMORYTYPE_UNIFIED { memory_type(real, p) } else { mem_type };
    t == CU_MEMORYTYPE_DEVICE
}

fn direction(src_dev: bool, dst_dev: bool) -> Dir {
    match (src_dev, dst_dev) {
        (false, true) => Dir::HtoD,
        (true, false) => Dir::DtoH,
        (true, true) => Dir::DtoD,
        (false, false) => Dir::HtoH,
    }
}

/// The kernel name of a function handle (cuFuncGetName of the real driver, cached).
fn function_name(real: &Real, t: &mut Tracked, f: usize) -> String {
    if let Some(n) = t.functions.get(&f) {
        return n.clone();
    }
    type F = unsafe extern "C" fn(*mut *const c_char, usize) -> CUresult;
    let mut name: *const c_char = std::ptr::null();
    let n = match real.symbol("cuFuncGetName") {
        // SAFETY: the real cuFuncGetName with an out-pointer to a C string.
        Some(a) if unsafe { std::mem::transmute::<usize, F>(a)(&mut name, f) } == CUDA_SUCCESS && !name.is_null() => {
            // SAFETY: the driver's name lives as long as the module.
            unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
        }
        _ => format!("function@{f:#x}"),
    };
    t.functions.insert(f, n.clone());
    n
}

/// What a forwarded call means for the counters and the tracked handles, decided once
/// per export-table entry from its name (matching the name on every call cost more
/// than the real driver's cheapest entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Observed {
    /// A copy in a known direction; `bytes_arg` is the argument that holds its size.
    Copy(Dir, usize),
    /// cuMemcpy(Async): direction from the pointers' memory types.
    CopyUnified,
    /// A CUDA_MEMCPY2D copy.
    Copy2D,
    /// A 1D memset of `elem`-byte elements.
    Memset(u64),
    /// A 2D memset of `elem`-byte elements.
    Memset2D(u64),
    /// An allocation (pinned host memory or not).
    Alloc(bool),
    AllocPitch,
    Free,
    ModuleLoad,
    ModuleUnload,
    StreamCreate,
    StreamDestroy,
    EventCreate,
    EventDestroy,
    GetFunction,
    Launch,
    LaunchEx,
    Sync,
}

fn classify(name: &str) -> Option<Observed> {
    use Observed::*;
    let base = name.trim_end_matches("_ptds").trim_end_matches("_ptsz");
    Some(match base {
        "cuMemcpyHtoD_v2" | "cuMemcpyHtoDAsync_v2" => Copy(Dir::HtoD, 2),
        "cuMemcpyDtoH_v2" | "cuMemcpyDtoHAsync_v2" => Copy(Dir::DtoH, 2),
        "cuMemcpyDtoD_v2" | "cuMemcpyDtoDAsync_v2" => Copy(Dir::DtoD, 2),
        "cuMemcpyPeer" | "cuMemcpyPeerAsync" => Copy(Dir::DtoD, 4),
        "cuMemcpy" | "cuMemcpyAsync" => CopyUnified,
        "cuMemcpy2D_v2" | "cuMemcpy2DAsync_v2" | "cuMemcpy2DUnaligned_v2" => Copy2D,
        "cuMemsetD8_v2" | "cuMemsetD8Async" => Memset(1),
        "cuMemsetD16_v2" | "cuMemsetD16Async" => Memset(2),
        "cuMemsetD32_v2" | "cuMemsetD32Async" => Memset(4),
        "cuMemsetD2D8_v2" | "cuMemsetD2D8Async" => Memset2D(1),
        "cuMemsetD2D16_v2" | "cuMemsetD2D16Async" => Memset2D(2),
        "cuMemsetD2D32_v2" | "cuMemsetD2D32Async" => Memset2D(4),
        "cuMemAlloc_v2" | "cuMemAllocManaged" | "cuMemAllocAsync" | "cuMemAllocFromPoolAsync" => Alloc(false),
        "cuMemAllocPitch_v2" => AllocPitch,
        "cuMemHostAlloc" | "cuMemAllocHost_v2" => Alloc(true),
        "cuMemFree_v2" | "cuMemFreeHost" | "cuMemFreeAsync" => Free,
        "cuModuleLoad" | "cuModuleLoadData" | "cuModuleLoadDataEx" | "cuModuleLoadFatBinary" => ModuleLoad,
        "cuModuleUnload" => ModuleUnload,
        "cuStreamCreate" | "cuStreamCreateWithPriority" => StreamCreate,
        "cuStreamDestroy" | "cuStreamDestroy_v2" => StreamDestroy,
        "cuEventCreate" => EventCreate,
        "cuEventDestroy" | "cuEventDestroy_v2" => EventDestroy,
        "cuModuleGetFunction" => GetFunction,
        "cuLaunchKernel" | "cuLaunchCooperativeKernel" => Launch,
        "cuLaunchKernelEx" => LaunchEx,
        "cuStreamSynchronize" | "cuCtxSynchronize" | "cuEventSynchronize" => Sync,
        _ => return None,
    })
}

/// `classify` of every export-table entry, computed at the first forwarded call.
fn observed(names: &'static [&'static str], id: usize) -> Option<Observed> {
    static KINDS: OnceLock<Box<[Option<Observed>]>> = OnceLock::new();
    let kinds = KINDS.get_or_init(|| names.iter().map(|n| classify(n)).collect());
    kinds.get(id).copied().unwrap_or_else(|| names.get(id).and_then(|n| classify(n)))
}

/// Updates the counters from one forwarded call (arguments as register words).
fn observe(real: &Real, kind: Option<Observed>, a: &[u64], r: CUresult) {
    use Observed::*;
    let Some(kind) = kind else { return };
    if r != CUDA_SUCCESS {
        return;
    }
    let c = crate::counters::get();
    // The tracked handles' lock only for the calls that create, destroy or name them.
    let tracked = |f: &mut dyn FnMut(&mut Tracked)| {
        let mut guard = TRACKED.lock().unwrap_or_else(|e| e.into_inner());
        f(guard.get_or_insert_with(Tracked::default))
    };
    match kind {
        Copy(dir, bytes_arg) => c.copy(dir, a[bytes_arg]),
        CopyUnified => {
            let (dst, src) = (side(real, CU_MEMORYTYPE_UNIFIED, a[0]), side(real, CU_MEMORYTYPE_UNIFIED, a[1]));
            c.copy(direction(src, dst), a[2]);
        }
        Copy2D => {
            let m: CUDA_MEMCPY2D = read_out(a[0]);
            let src = side(real, m.src_memory_type, if m.src_memory_type == CU_MEMORYTYPE_HOST { m.src_host as u64 } else { m.src_device });
            let dst = side(real, m.dst_memory_type, if m.dst_memory_type == CU_MEMORYTYPE_HOST { m.dst_host as u64 } else { m.dst_device });
            c.copy(direction(src, dst), (m.width_in_bytes * m.height) as u64);
        }
        Memset(elem) => c.memset(a[2] * elem),
        Memset2D(elem) => c.memset(a[3] * a[4] * elem),
        Alloc(pinned) => {
            let p: u64 = read_out(a[0]);
            c.alloc(a[1]);
            tracked(&mut |t| {
                t.allocs.insert(p, (pinned, a[1]));
            });
        }
        AllocPitch => {
            let (p, pitch): (u64, u64) = (read_out(a[0]), read_out::<usize>(a[1]) as u64);
            c.alloc(pitch * a[3]);
            tracked(&mut |t| {
                t.allocs.insert(p, (false, pitch * a[3]));
            });
        }
        Free => tracked(&mut |t| {
            if t.allocs.remove(&a[0]).is_some() {
                c.free();
            }
        }),
        ModuleLoad => tracked(&mut |t| {
            t.modules.insert(read_out::<usize>(a[0]), ());
        }),
        ModuleUnload => tracked(&mut |t| {
            t.modules.remove(&(a[0] as usize));
        }),
        StreamCreate => tracked(&mut |t| {
            t.streams.insert(read_out::<usize>(a[0]), ());
        }),
        StreamDestroy => tracked(&mut |t| {
            t.streams.remove(&(a[0] as usize));
        }),
        EventCreate => tracked(&mut |t| {
            t.events.insert(read_out::<usize>(a[0]), ());
        }),
        EventDestroy => tracked(&mut |t| {
            t.events.remove(&(a[0] as usize));
        }),
        GetFunction => {
            let f: usize = read_out(a[0]);
            // SAFETY: the program's NUL-terminated kernel name.
            let n = unsafe { simtwin_abi::ffi::c_str(a[2] as *const c_char) };
            tracked(&mut |t| {
                t.functions.insert(f, n.clone());
            });
        }
        Launch => {
            let mut n = String::new();
            tracked(&mut |t| n = function_name(real, t, a[0] as usize));
            let blocks = a[1] * a[2] * a[3];
            c.launch(&n, blocks * a[4] * a[5] * a[6], blocks);
        }
        LaunchEx => {
            let cfg: CUlaunchConfig = read_out(a[0]);
            let mut n = String::new();
            tracked(&mut |t| n = function_name(real, t, a[1] as usize));
            let blocks = cfg.grid_dim_x as u64 * cfg.grid_dim_y as u64 * cfg.grid_dim_z as u64;
            c.launch(&n, blocks * cfg.block_dim_x as u64 * cfg.block_dim_y as u64 * cfg.block_dim_z as u64, blocks);
        }
        Sync => c.sync(),
    }
}

/// At exit in pass-through: what the program left behind, as the calls showed it.
pub fn leaks_at_exit() {
    let Ok(guard) = TRACKED.try_lock() else { return };
    let Some(t) = guard.as_ref() else { return };
    let c = crate::counters::get();
    for (p, (pinned, size)) in &t.allocs {
        let (pinned, size) = (*pinned, *size);
        c.leak(
            |l| {
                if pinned {
                    l.pinned += 1
                } else {
                    l.allocations += 1;
                    l.allocation_bytes += size
                }
            },
            format!("{} allocation of {size} bytes at {p:#x} still live at exit", if pinned { "pinned host" } else { "device" }),
        );
    }
    for m in t.modules.keys() {
        c.leak(|l| l.modules += 1, format!("module {m:#x} still loaded at exit"));
    }
    for s in t.streams.keys() {
        c.leak(|l| l.streams += 1, format!("stream {s:#x} not destroyed at exit"));
    }
    for e in t.events.keys() {
        c.leak(|l| l.events += 1, format!("event {e:#x} not destroyed at exit"));
    }
}
