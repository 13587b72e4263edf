//! Loading a built kernel library and reading its descriptor: the only unsafe code of
//! this crate. The ABI types are `simtwin_abi::kernel` (layout-checked against
//! `include/simtwin/abi.h`).

use std::ffi::{c_char, c_void};
use std::path::Path;

/// The device runtime ABI (the shared definition in `simtwin_abi::kernel`).
pub use simtwin_abi::kernel as ffi;

/// One kernel of a loaded library, as the descriptor and dladdr describe it.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    pub name: String,
    /// Exported symbol at the kernel's address (mangled as nvcc mangles), if any.
    pub symbol: Option<String>,
    pub param_sizes: Vec<u32>,
    pub param_aligns: Vec<u32>,
    pub max_threads: u32,
    pub min_blocks: u32,
    pub run: ffi::RunFn,
    pub function: *const c_void,
}

#[derive(Debug, Clone)]
pub struct GlobalInfo {
    pub name: String,
    pub symbol: Option<String>,
    pub size: u64,
    pub constant: bool,
    pub address: *mut c_void,
}

/// A kernel library kept open for as long as this value lives.
pub struct LoadedModule {
    _lib: libloading::os::unix::Library,
    pub descriptor: *const ffi::Module,
    pub kernels: Vec<KernelInfo>,
    pub globals: Vec<GlobalInfo>,
    pub source_path: String,
    pub source_hash: String,
    pub build_id: String,
}

fn cstr(p: *const c_char) -> String {
    // SAFETY: the descriptor's strings are NUL-terminated literals of the library.
    unsafe { simtwin_abi::ffi::c_str(p) }
}

use simtwin_abi::ffi::symbol_at;

impl LoadedModule {
    /// dlopens a kernel library (RTLD_NOW | RTLD_LOCAL) and reads its descriptor.
    pub fn open(path: &Path) -> Result<LoadedModule, String> {
        // SAFETY: loading runs the library's static constructors (the user's code).
        let lib = unsafe {
            libloading::os::unix::Library::open(Some(path), libc::RTLD_NOW | libc::RTLD_LOCAL)
        }
        .map_err(|e| format!("{}: cannot load: {e}", path.display()))?;
        // SAFETY: the symbol has the signature abi.h gives it.
        let get: libloading::os::unix::Symbol<ffi::ModuleFn> =
            unsafe { lib.get(ffi::MODULE_SYMBOL) }
                .map_err(|e| format!("{}: not a simtwin kernel library: {e}", path.display()))?;
        let m = unsafe { get() };
        if m.is_null() {
            return Err(format!("{}: simtwin_module_v2 returned null", path.display()));
        }
        // SAFETY: the descriptor lives as long as the library, which `self` keeps open.
        let d = unsafe { &*m };
        if d.abi_version != ffi::ABI_VERSION {
            return Err(format!("{}: ABI version {} (expected {})", path.display(), d.abi_version, ffi::ABI_VERSION));
        }
        let mut kernels = Vec::new();
        for i in 0..d.kernel_count as usize {
            let k = unsafe { &*d.kernels.add(i) };
            let n = k.param_count as usize;
            let sizes = unsafe { std::slice::from_raw_parts(k.param_sizes, n) }.to_vec();
            let aligns = unsafe { std::slice::from_raw_parts(k.param_aligns, n) }.to_vec();
            kernels.push(KernelInfo {
                name: cstr(k.name),
                symbol: symbol_at(k.function),
                param_sizes: sizes,
                param_aligns: aligns,
                max_threads: k.max_threads,
                min_blocks: k.min_blocks,
                run: k.run,
                function: k.function,
            });
        }
        let mut globals = Vec::new();
        for i in 0..d.global_count as usize {
            let g = unsafe { &*d.globals.add(i) };
            globals.push(GlobalInfo {
                name: cstr(g.name),
                symbol: symbol_at(g.address),
                size: g.size,
                constant: g.is_constant != 0,
                address: g.address,
            });
        }
        Ok(LoadedModule {
            source_path: cstr(d.source_path),
            source_hash: cstr(d.source_hash),
            build_id: cstr(d.build_id),
            _lib: lib,
            descriptor: m,
            kernels,
            globals,
        })
    }

    /// Hands a runtime table to the library (abi.h `bind`).
    ///
    /// # Safety
    /// `rt` must stay valid for as long as kernels of this library run.
    pub unsafe fn bind(&self, rt: *const ffi::Runtime) {
        // SAFETY: the descriptor is valid while the library is open; `rt` per the caller.
        unsafe { ((*self.descriptor).bind)(rt) }
    }

    /// The calling OS thread's context slot (abi.h `ctx_slot`).
    pub fn ctx_slot(&self) -> *mut *mut ffi::ThreadCtx {
        // SAFETY: the descriptor is valid while the library is open.
        unsafe { ((*self.descriptor).ctx_slot)() }
    }

    pub fn kernel(&self, name_or_symbol: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name_or_symbol || k.symbol.as_deref() == Some(name_or_symbol))
    }
    pub fn global(&self, name_or_symbol: &str) -> Option<&GlobalInfo> {
        self.globals.iter().find(|g| g.name == name_or_symbol || g.symbol.as_deref() == Some(name_or_symbol))
    }
}
