//! Modules: an image (PTX, fatbin, cubin) parsed for its entry names, bound to the one
//! host-compiled kernel library with the same entries, loaded as an instance of its own
//! (the same image loaded twice gets two copies of its globals).

use crate::abi;
use crate::cu::*;
use crate::image;
use crate::memory;
use crate::registry::{self, Manifest};
use crate::state::{AllocKind, CuResult, Driver};
use std::collections::{BTreeSet, HashMap};
use std::ffi::{c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What the driver keeps of one kernel entry.
pub struct Kernel {
    pub symbol: String,
    pub run: abi::RunFn,
    pub param_sizes: Vec<u32>,
    pub param_aligns: Vec<u32>,
    /// Parameter offsets for the `extra` buffer form: from the image when it says,
    /// otherwise laid out from the host function's sizes and alignments.
    pub param_offsets: Vec<u32>,
    pub param_bytes: u32,
    pub attrs: Option<image::FuncAttrs>,
    pub launch_bounds: (u32, u32),
}

impl Kernel {
    /// The most threads per block the device allows this kernel: __launch_bounds__ as the
    /// sm_90 cubin records it, else as the host twin's manifest does; None if unbounded.
    pub fn thread_bound(&self) -> Option<u32> {
        self.attrs.as_ref().and_then(|a| a.max_threads_per_block).filter(|&m| m > 0)
            .or(Some(self.launch_bounds.0).filter(|&m| m > 0))
    }
}

pub struct Module {
    pub ctx: u64,
    pub chosen: String,
    pub manifest: Manifest,
    pub kernels: Vec<Kernel>,
    pub globals: HashMap<String, (u64, u64)>,
    pub ctx_slot: abi::CtxSlotFn,
    /// Function handles handed out, by entry name (the same name gives the same handle).
    pub handles: Mutex<HashMap<String, u64>>,
    library_path: PathBuf,
    _lib: libloading::Library,
}

// SAFETY: the raw function pointers refer to code of the loaded library, which lives as
// long as the module; nothing here is tied to a thread.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    pub fn library_name(&self) -> String {
        self.library_path.display().to_string()
    }
    pub fn device_faithful(&self) -> bool {
        !self.manifest.fma_contraction_differs
    }
}

/// A function handle: the module it belongs to and the kernel's index.
#[derive(Clone)]
pub struct FunctionRef {
    pub module_id: u64,
    pub module: Arc<Module>,
    pub index: usize,
    /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as set by cuFuncSetAttribute.
    pub max_dynamic_shared: u32,
    pub carveout: i32,
    pub cache_config: u32,
}

impl FunctionRef {
    pub fn kernel(&self) -> &Kernel {
        &self.module.kernels[self.index]
    }
}

/// Paths of kernel libraries loaded now, with how many instances each has.
static LOADED: Mutex<Vec<(PathBuf, usize)>> = Mutex::new(Vec::new());

/// A path to dlopen for a new instance: the library itself the first time, a private
/// copy afterwards (dlopen of the same path would return the same instance).
fn instance_path(lib: &Path) -> Result<(PathBuf, bool), String> {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let entry = loaded.iter_mut().find(|(p, _)| p == lib);
    let n = match entry {
        Some(e) => {
            e.1 += 1;
            e.1
        }
        None => {
            loaded.push((lib.to_path_buf(), 1));
            1
        }
    };
    if n == 1 {
        return Ok((lib.to_path_buf(), false));
    }
    let dir = std::env::temp_dir().join(format!("simtwin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stem = lib.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    static COPIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let k = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let copy = dir.join(format!("{stem}.instance{k}.so"));
    std::fs::copy(lib, &copy).map_err(|e| format!("copying {} for a second instance: {e}", lib.display()))?;
    Ok((copy, true))
}

fn forget_instance(lib: &Path) {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = loaded.iter().position(|(p, _)| p == lib) {
        loaded[i].1 -= 1;
        if loaded[i].1 == 0 {
            loaded.remove(i);
        }
    }
}

/// The exported symbol name at exactly `addr` (mangled for C++), via dladdr.
fn symbol_at(addr: *const c_void) -> Option<String> {
    // SAFETY: dladdr only reads the loader's tables; the out struct is ours.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr, &mut info) == 0 || info.dli_sname.is_null() || info.dli_saddr as *const c_void != addr {
            return None;
        }
        Some(CStr::from_ptr(info.dli_sname).to_string_lossy().into_owned())
    }
}

fn cstr(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the descriptor's strings are NUL-terminated literals of the library.
    unsafe { CStr::from_ptr(p).to_string_lossy().into_owned() }
}

fn layout_offsets(sizes: &[u32], aligns: &[u32]) -> (Vec<u32>, u32) {
    let mut off = 0u32;
    let mut v = Vec::with_capacity(sizes.len());
    for (i, s) in sizes.iter().enumerate() {
        let a = aligns.get(i).copied().unwrap_or(1).max(1);
        off = off.div_ceil(a) * a;
        v.push(off);
        off += s;
    }
    (v, off)
}

fn no_binary(msg: String) -> CUresult {
    crate::log_error!("{msg}");
    CUDA_ERROR_NO_BINARY_FOR_GPU
}

/// Loads a parsed image as a module of context `ctx`.
pub fn load(d: &mut Driver, ctx: u64, img: image::Image) -> CuResult<u64> {
    let symbols: BTreeSet<String> = img.kernels.iter().map(|k| k.name.clone()).collect();
    let looked_in = d.config.kernels.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":");
    let scan = registry::scan(&d.config.kernels);
    let manifest = registry::select(&scan, &symbols, &looked_in).map_err(no_binary)?.clone();
    let lib_path = manifest.library_path();
    let (open_path, is_copy) = instance_path(&lib_path).map_err(no_binary)?;
    let opened = {
        // SAFETY: loading a kernels-host library runs only its static initialisers
        // (device code: constant tables); it imports nothing from the driver.
        unsafe { libloading::os::unix::Library::open(Some(&open_path), libc::RTLD_NOW | libc::RTLD_LOCAL) }
    };
    if is_copy {
        let _ = std::fs::remove_file(&open_path);
    }
    let lib: libloading::Library = match opened {
        Ok(l) => l.into(),
        Err(e) => {
            forget_instance(&lib_path);
            return Err(no_binary(format!("cannot load host kernel library {}: {e}", lib_path.display())));
        }
    };
    let desc = match bind_library(&lib, &lib_path) {
        Ok(d) => d,
        Err(msg) => {
            forget_instance(&lib_path);
            return Err(no_binary(msg));
        }
    };
    // SAFETY: bind_library checked the ABI version; the descriptor is static data of `lib`.
    let desc = unsafe { &*desc };
    let raw_kernels = unsafe { std::slice::from_raw_parts(desc.kernels, desc.kernel_count as usize) };
    let mut kernels = Vec::new();
    for ik in &img.kernels {
        let found = raw_kernels.iter().find(|k| {
            symbol_at(k.function).map(|s| s == ik.name).unwrap_or(false) || cstr(k.name) == ik.name
        });
        let Some(k) = found else {
            forget_instance(&lib_path);
            return Err(no_binary(format!(
                "host kernel library {} lists entry {} in its manifest but does not define it (stale build? rebuild with kernels-host)",
                lib_path.display(), ik.name
            )));
        };
        let n = k.param_count as usize;
        // SAFETY: arrays of param_count entries in the library's descriptor.
        let sizes = unsafe { slice_or_empty(k.param_sizes, n) };
        let aligns = unsafe { slice_or_empty(k.param_aligns, n) };
        let (mut offsets, mut bytes) = layout_offsets(&sizes, &aligns);
        if let Some(params) = &ik.params {
            let img_sizes: Vec<u32> = params.iter().map(|p| p.size).collect();
            if img_sizes != sizes {
                forget_instance(&lib_path);
                return Err(no_binary(format!(
                    "entry {}: the image's parameter sizes {:?} differ from the host twin's {:?} ({}): rebuild the host kernels from the same source",
                    ik.name, img_sizes, sizes, lib_path.display()
                )));
            }
            offsets = params.iter().map(|p| p.offset).collect();
            bytes = params.iter().map(|p| p.offset + p.size).max().unwrap_or(0);
        }
        kernels.push(Kernel {
            symbol: ik.name.clone(),
            run: k.run,
            param_sizes: sizes,
            param_aligns: aligns,
            param_offsets: offsets,
            param_bytes: bytes,
            attrs: ik.attrs.clone(),
            launch_bounds: (k.max_threads, k.min_blocks),
        });
    }
    let raw_globals = unsafe { std::slice::from_raw_parts(desc.globals, desc.global_count as usize) };
    let mut globals = HashMap::new();
    for g in raw_globals {
        let name = symbol_at(g.address as *const c_void).unwrap_or_else(|| cstr(g.name));
        let addr = g.address as u64;
        globals.insert(name.clone(), (addr, g.size));
        let plain = cstr(g.name);
        if plain != name {
            globals.entry(plain).or_insert((addr, g.size));
        }
        if g.size > 0 {
            make_writable(addr, g.size);
            memory::track_foreign(d, ctx, addr, g.size, AllocKind::ModuleGlobal);
        }
    }
    if manifest.fma_contraction_differs {
        crate::log_info!(
            "module {}: nvcc contracts a*b+c into FMA by default and host compilation does not: results may differ from the device (build with --fmad=false to be device-faithful)",
            lib_path.display()
        );
    }
    let id = d.new_id();
    let module = Module {
        ctx,
        chosen: img.chosen.clone(),
        manifest,
        kernels,
        globals,
        ctx_slot: desc.ctx_slot,
        handles: Mutex::new(HashMap::new()),
        library_path: lib_path,
        _lib: lib,
    };
    d.modules.insert(id, Arc::new(module));
    Ok(id)
}

/// `__constant__ const` tables land in the library's read-only data; on a device the
/// driver can still write them (cuMemcpyHtoD to cuModuleGetGlobal's address), so their
/// pages are made writable (copy-on-write: the file is not touched).
fn make_writable(addr: u64, size: u64) {
    let page = 4096u64;
    let start = addr & !(page - 1);
    let end = (addr + size + page - 1) & !(page - 1);
    // Only read-only, non-executable mappings are touched (never code pages).
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let read_only = maps.lines().any(|l| {
        let mut f = l.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else { return false };
        let Some((a, b)) = range.split_once('-') else { return false };
        let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) else { return false };
        a <= start && end <= b && perms.starts_with("r-") && !perms.contains('x')
    });
    if !read_only {
        return;
    }
    // SAFETY: the pages belong to the library's own mapping of this global.
    unsafe { libc::mprotect(start as *mut libc::c_void, (end - start) as usize, libc::PROT_READ | libc::PROT_WRITE) };
}

unsafe fn slice_or_empty(p: *const u32, n: usize) -> Vec<u32> {
    if p.is_null() || n == 0 {
        return Vec::new();
    }
    std::slice::from_raw_parts(p, n).to_vec()
}

/// Looks up the descriptor, checks the ABI and hands the runtime table over.
fn bind_library(lib: &libloading::Library, path: &Path) -> Result<*const abi::Module, String> {
    // SAFETY: the symbol's type is fixed by the ABI header.
    let f: libloading::Symbol<abi::ModuleFn> = unsafe { lib.get(abi::SIMTWIN_MODULE_SYMBOL) }
        .map_err(|_| format!("{} is not a kernels-host library (no simtwin_module_v1)", path.display()))?;
    let desc = unsafe { f() };
    if desc.is_null() {
        return Err(format!("{}: simtwin_module_v1 returned null", path.display()));
    }
    let v = unsafe { (*desc).abi_version };
    if v != abi::SIMTWIN_ABI_VERSION {
        return Err(format!(
            "{}: device runtime ABI {v}, this driver speaks {}: rebuild it with this kernels-host",
            path.display(),
            abi::SIMTWIN_ABI_VERSION
        ));
    }
    unsafe { ((*desc).bind)(crate::exec::runtime_table()) };
    Ok(desc)
}

/// Unloads a module: its functions go, its globals leave the tracker, the library
/// instance is closed once the last launch holding it ends.
pub fn unload(d: &mut Driver, id: u64) -> bool {
    let Some(m) = d.modules.remove(&id) else { return false };
    d.functions.retain(|_, f| f.module_id != id);
    for (addr, size) in m.globals.values() {
        if *size > 0 && d.allocs.get(addr).map(|a| a.kind == AllocKind::ModuleGlobal).unwrap_or(false) {
            d.allocs.remove(addr);
        }
    }
    forget_instance(&m.library_path);
    true
}

/// Parses an image passed by pointer (cuModuleLoadData and friends).
pub fn parse_image_ptr(d: &Driver, ptr: *const c_void) -> CuResult<image::Image> {
    if ptr.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let target = image::Target { sm: d.profile.sm() };
    // SAFETY: the caller promises an image; the parser reads only what headers allow.
    unsafe { image::parse_ptr(ptr as *const u8, target) }.map_err(|e| {
        crate::log_error!("module image rejected: {e}");
        e.cu_result()
    })
}

pub fn parse_image_file(d: &Driver, path: &Path) -> CuResult<image::Image> {
    let bytes = std::fs::read(path).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
    let target = image::Target { sm: d.profile.sm() };
    image::parse_bytes(&bytes, target).map_err(|e| {
        crate::log_error!("module image {} rejected: {e}", path.display());
        e.cu_result()
    })
}
