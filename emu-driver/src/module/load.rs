//! Loading and unloading modules: an image (PTX, fatbin, cubin) parsed for its entry
//! names, bound to the one host-compiled kernel library with the same entries, opened
//! as an instance of its own (the same image loaded twice gets two copies of its
//! globals).

use super::{Kernel, Module};
use crate::abi;
use crate::cu::*;
use crate::image;
use crate::memory;
use crate::registry::{self, Found};
use crate::state::{AllocKind, CuResult, Driver};
use simtwin_abi::ffi::c_str;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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
    // A file of its own in the temporary directory, removed once opened (a directory per
    // process was left behind, empty, by every program that loaded a module twice).
    let stem = lib.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    static COPIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let k = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let copy = std::env::temp_dir().join(format!("simtwin-{}-{stem}.instance{k}.so", std::process::id()));
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

/// A module image bound to its kernel library, ready to be entered into the driver's
/// tables (made without the driver's lock: scanning, translation and dlopen can be slow).
pub struct Prepared {
    kernels: Vec<Kernel>,
    globals: Vec<(String, String, u64, u64)>,
    lib: libloading::Library,
    lib_path: PathBuf,
    /// What the counters file records of the module.
    record: simtwin_abi::counters::ModuleRecord,
}

/// Binds a parsed image to the one kernel library with the same entries and opens a
/// fresh instance of it. Time is linear in the module's entries: the manifest lists
/// them in descriptor order. With `race` (EMU_CUDA_CHECKS=race) the library's checking
/// variant is opened instead (`kernels-host build --checks`): the same kernels,
/// reporting their memory accesses; a library built without one is an error that says
/// how to build it.
pub fn prepare(kernel_paths: &[PathBuf], img: image::Image, race: bool) -> CuResult<Prepared> {
    let kernel_names: BTreeSet<String> = img.kernels.iter().map(|k| k.name.clone()).collect();
    let global_names: BTreeSet<String> = img.globals.iter().map(|g| g.name.clone()).collect();
    let looked_in = kernel_paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":");
    let scan = registry::scan(kernel_paths);
    let want = registry::Wanted { kernels: &kernel_names, globals: &global_names };
    let found = registry::select(&scan, &want, &looked_in).map_err(no_binary)?.clone();
    let lib_path = if race { checks_library(&found).map_err(no_binary)? } else { found.library_path() };
    let (lib, desc) = open_instance(&lib_path).map_err(no_binary)?;
    if race {
        // SAFETY: looking up a data symbol; it is not called or written.
        let marked = unsafe { lib.get::<*const u8>(b"simtwin_checks_v1\0") }.is_ok();
        if !marked {
            forget_instance(&lib_path);
            return Err(no_binary(format!(
                "EMU_CUDA_CHECKS=race: {} (named as the checking variant by {}) is not a checking library (no simtwin_checks_v1): rebuild with `kernels-host build --checks`",
                lib_path.display(),
                found.path.display()
            )));
        }
    }
    match bind_parts(desc, &lib_path, &found, &img) {
        Ok((kernels, globals)) => {
            let m = &found.manifest;
            let mut notes = m.warnings.clone();
            if m.fma_contraction_differs {
                notes.insert(0, "nvcc contracts a*b+c into FMA by default and the host twin does not: results may differ from the device (build with --fmad=false, or run the image's PTX: EMU_CUDA_EXEC=ptx)".into());
            }
            let record = simtwin_abi::counters::ModuleRecord {
                image: image_label(&img),
                mode: "twin".into(),
                library: lib_path.display().to_string(),
                kernels: kernels.len() as u64,
                device_exact: !m.fma_contraction_differs,
                notes,
                ..Default::default()
            };
            Ok(Prepared { kernels, globals, lib, lib_path, record })
        }
        Err(msg) => {
            forget_instance(&lib_path);
            Err(no_binary(msg))
        }
    }
}

/// The checking variant of a library (EMU_CUDA_CHECKS=race), or why there is none.
fn checks_library(found: &Found) -> Result<PathBuf, String> {
    match found.manifest.checks_library_path(&found.path) {
        Some(p) if p.is_file() => Ok(p),
        Some(p) => Err(format!(
            "EMU_CUDA_CHECKS=race: the checking variant {} named by {} is missing: rebuild with `kernels-host build --checks`",
            p.display(),
            found.path.display()
        )),
        None => Err(format!(
            "EMU_CUDA_CHECKS=race needs the checking variant of each kernel library, and {} (of {}) was built without one: rebuild with `kernels-host build --checks ...`",
            found.library_path().display(),
            found.path.display()
        )),
    }
}

type BoundParts = (Vec<Kernel>, Vec<(String, String, u64, u64)>);

/// Reads the library's descriptor against its manifest and the image.
fn bind_parts(desc: *const abi::Module, lib_path: &Path, found: &Found, img: &image::Image) -> Result<BoundParts, String> {
    // SAFETY: bind_library checked the ABI version; the descriptor is static data of the
    // library, which the caller keeps open.
    let desc = unsafe { &*desc };
    let m = &found.manifest;
    // SAFETY: the descriptor's strings are NUL-terminated literals of the library.
    let build_id = unsafe { c_str(desc.build_id) };
    if build_id != m.build_id || desc.kernel_count as usize != m.entries.len() || desc.global_count as usize != m.globals.len() {
        return Err(format!(
            "{} does not belong to {} (another build: library build {build_id}, manifest build {}): rebuild with kernels-host",
            lib_path.display(),
            found.path.display(),
            m.build_id
        ));
    }
    // SAFETY: arrays of kernel_count / global_count records in the descriptor.
    let raw_kernels = unsafe { slice(desc.kernels, desc.kernel_count as usize) };
    // SAFETY: as above, the globals' array.
    let raw_globals = unsafe { slice(desc.globals, desc.global_count as usize) };
    let index: HashMap<&str, usize> = m.entries.iter().enumerate().map(|(i, e)| (e.symbol.as_str(), i)).collect();
    let mut kernels = Vec::with_capacity(img.kernels.len());
    for ik in &img.kernels {
        let Some(&i) = index.get(ik.name.as_str()) else {
            return Err(format!("{}: no entry {} (selected by its entry set; rebuild with kernels-host)", found.path.display(), ik.name));
        };
        let k = &raw_kernels[i];
        let n = k.param_count as usize;
        // SAFETY: arrays of param_count entries in the library's descriptor.
        let sizes = unsafe { slice(k.param_sizes, n) }.to_vec();
        // SAFETY: as above, the alignments' array.
        let aligns = unsafe { slice(k.param_aligns, n) }.to_vec();
        let (mut offsets, mut bytes) = layout_offsets(&sizes, &aligns);
        if let Some(params) = &ik.params {
            let img_sizes: Vec<u32> = params.iter().map(|p| p.size).collect();
            if img_sizes != sizes {
                return Err(format!(
                    "entry {}: the image's parameter sizes {:?} differ from the host twin's {:?} ({}): rebuild the host kernels from the same source",
                    ik.name, img_sizes, sizes, lib_path.display()
                ));
            }
            offsets = params.iter().map(|p| p.offset).collect();
            bytes = params.iter().map(|p| p.offset + p.size).max().unwrap_or(0);
        }
        kernels.push(Kernel {
            symbol: ik.name.clone(),
            exec: crate::exec::KernelRef { name: ik.name.as_str().into(), run: k.run, ctx_slot: desc.ctx_slot, shared_in_tls: true },
            tally: crate::counters::get().tally(&ik.name),
            param_sizes: sizes,
            param_offsets: offsets,
            param_bytes: bytes,
            attrs: ik.attrs,
            launch_bounds: (k.max_threads, k.min_blocks),
            smem_prefix: 0,
            refused: None,
        });
    }
    let globals =
        raw_globals.iter().zip(&m.globals).map(|(g, mg)| (mg.symbol.clone(), mg.name.clone(), g.address as u64, g.size)).collect();
    Ok((kernels, globals))
}

/// Enters a prepared module into context `ctx`: its globals join the tracker.
pub fn insert(d: &mut Driver, ctx: u64, p: Prepared) -> u64 {
    let mut globals = HashMap::new();
    for (symbol, name, addr, size) in &p.globals {
        globals.insert(symbol.clone(), (*addr, *size));
        if name != symbol {
            globals.entry(name.clone()).or_insert((*addr, *size));
        }
        if *size > 0 {
            make_writable(*addr, *size);
            memory::track_foreign(d, ctx, *addr, *size, AllocKind::ModuleGlobal);
        }
    }
    for note in &p.record.notes {
        crate::log_info!("module {} ({}): {note}", p.lib_path.display(), p.record.mode);
    }
    crate::counters::get().module(p.record.clone());
    let id = d.new_id();
    let module = Module { ctx, kernels: p.kernels, globals, handles: Mutex::new(HashMap::new()), library_path: p.lib_path, _lib: p.lib };
    d.modules.insert(id, Arc::new(module));
    id
}

/// A short description of an image for reports: its kind, the entry used and a digest.
pub(crate) fn image_label(img: &image::Image) -> String {
    use sha2::{Digest, Sha256};
    let kind = match img.kind {
        image::ImageKind::Ptx => "ptx",
        image::ImageKind::Cubin => "cubin",
        image::ImageKind::Fatbin => "fatbin",
        image::ImageKind::Linked => "linked",
    };
    let mut label = format!("{kind}: {}", img.chosen);
    if !img.ptx.is_empty() {
        let mut h = Sha256::new();
        for t in &img.ptx {
            h.update(t.as_bytes());
        }
        let d = h.finalize();
        let hex: String = d.iter().take(8).map(|b| format!("{b:02x}")).collect();
        label.push_str(&format!(" (ptx {hex})"));
    }
    label
}

/// Opens a fresh instance of a kernel library and hands it the runtime table: the
/// library, the path that was opened (for symbolisation) and its descriptor.
pub(crate) fn open_instance(lib_path: &Path) -> Result<(libloading::Library, *const abi::Module), String> {
    let (open_path, is_copy) = instance_path(lib_path)?;
    let opened = {
        // SAFETY: loading a kernel library runs only its static initialisers (device code:
        // constant tables and their relocations); it imports nothing from the driver.
        unsafe { libloading::os::unix::Library::open(Some(&open_path), libc::RTLD_NOW | libc::RTLD_LOCAL) }
    };
    if is_copy {
        let _ = std::fs::remove_file(&open_path);
        crate::symbols::note_copy(&open_path, lib_path);
    }
    let lib: libloading::Library = match opened {
        Ok(l) => l.into(),
        Err(e) => {
            forget_instance(lib_path);
            return Err(format!("cannot load kernel library {}: {e}", lib_path.display()));
        }
    };
    match bind_library(&lib, lib_path) {
        Ok(desc) => Ok((lib, desc)),
        Err(e) => {
            forget_instance(lib_path);
            Err(e)
        }
    }
}

/// Parts of a prepared module (for the PTX path in `ptx`).
pub(crate) fn prepared(
    kernels: Vec<Kernel>,
    globals: Vec<(String, String, u64, u64)>,
    lib: libloading::Library,
    lib_path: PathBuf,
    record: simtwin_abi::counters::ModuleRecord,
) -> Prepared {
    Prepared { kernels, globals, lib, lib_path, record }
}

/// Gives back an instance whose module will not be entered.
pub(crate) fn release_instance(lib_path: &Path) {
    forget_instance(lib_path);
}

/// Gives back a prepared module that will not be entered (its context went away).
pub fn discard(p: Prepared) {
    forget_instance(&p.lib_path);
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

/// A descriptor array as a slice (empty for null or zero length).
///
/// # Safety
/// `p` is null or points to `n` valid records that outlive the returned slice.
unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        return &[];
    }
    // SAFETY: per the caller's contract.
    unsafe { std::slice::from_raw_parts(p, n) }
}

/// Looks up the descriptor, checks the ABI and hands the runtime table over.
fn bind_library(lib: &libloading::Library, path: &Path) -> Result<*const abi::Module, String> {
    // SAFETY: the symbol's type is fixed by the ABI header.
    let f: libloading::Symbol<abi::ModuleFn> = unsafe { lib.get(abi::MODULE_SYMBOL) }.map_err(|_| {
        format!(
            "{} is not a kernels-host library of ABI {} (no simtwin_module_v2): rebuild it with this kernels-host",
            path.display(),
            abi::ABI_VERSION
        )
    })?;
    // SAFETY: simtwin_module_v2 takes no arguments and returns the library's static
    // descriptor (or null, refused below).
    let desc = unsafe { f() };
    if desc.is_null() {
        return Err(format!("{}: simtwin_module_v2 returned null", path.display()));
    }
    // SAFETY: non-null, and every ABI version starts with this field.
    let v = unsafe { (*desc).abi_version };
    if v != abi::ABI_VERSION {
        return Err(format!(
            "{}: device runtime ABI {v}, this driver speaks {}: rebuild it with this kernels-host",
            path.display(),
            abi::ABI_VERSION
        ));
    }
    // SAFETY: the descriptor is of this ABI version (checked above); bind takes the
    // runtime table, which lives for the whole process.
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
            d.remove_alloc(*addr);
        }
    }
    forget_instance(&m.library_path);
    true
}

/// Parses an image passed by pointer (cuModuleLoadData and friends).
pub fn parse_image_ptr(image: crate::boundary::ImagePtr, target: image::Target) -> CuResult<image::Image> {
    image.parse(target)
}

/// Parses an image file (cuModuleLoad).
pub fn parse_image_file(path: &Path, target: image::Target) -> CuResult<image::Image> {
    let bytes = std::fs::read(path).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
    image::parse_bytes(&bytes, target).map_err(|e| {
        crate::log_error!("module image {} rejected: {e}", path.display());
        e.cu_result()
    })
}
