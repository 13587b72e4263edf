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
    /// Qualified name as written in the source (template-id for instantiations).
    pub name: String,
    /// Exported symbol at the kernel's address (mangled as nvcc mangles), if any.
    pub symbol: Option<String>,
    /// `sizeof` each parameter, in order.
    pub param_sizes: Vec<u32>,
    /// `alignof` each parameter, in order.
    pub param_aligns: Vec<u32>,
    /// `__launch_bounds__` maximum threads per block, 0 if none.
    pub max_threads: u32,
    /// `__launch_bounds__` minimum blocks per multiprocessor, 0 if none.
    pub min_blocks: u32,
    /// The generated runner: runs a range of threads of the current block.
    pub run: ffi::RunFn,
    /// The kernel function's address in the library.
    pub(crate) function: *const c_void,
}

/// One namespace-scope `__device__` / `__constant__` variable of a loaded library.
#[derive(Debug, Clone)]
pub struct GlobalInfo {
    /// Qualified name as written in the source.
    pub name: String,
    /// Exported symbol at the variable's address, if any (none in an anonymous namespace).
    pub symbol: Option<String>,
    /// `sizeof` the variable in bytes.
    pub size: u64,
    /// `__constant__` (true) or `__device__` (false).
    pub constant: bool,
    /// The variable's address in the loaded library.
    pub address: *mut c_void,
}

/// A kernel library kept open for as long as this value lives.
pub struct LoadedModule {
    _lib: libloading::os::unix::Library,
    path: std::path::PathBuf,
    /// The library's module descriptor (`simtwin_module_v2()`), valid while this value lives.
    pub descriptor: *const ffi::Module,
    /// The descriptor's kernels, in order (entry `i` of the manifest).
    pub kernels: Vec<KernelInfo>,
    /// The descriptor's globals, in order (global `i` of the manifest).
    pub globals: Vec<GlobalInfo>,
    /// The `.cu` file as given to kernels-host.
    pub source_path: String,
    /// sha256 hex of the `.cu` file's bytes.
    pub source_hash: String,
    /// sha256 hex of the generated translation unit; the manifest holds the same string.
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
        let lib = unsafe { libloading::os::unix::Library::open(Some(path), libc::RTLD_NOW | libc::RTLD_LOCAL) }
            .map_err(|e| format!("{}: cannot load: {e}", path.display()))?;
        // SAFETY: the symbol has the signature abi.h gives it.
        let get: libloading::os::unix::Symbol<ffi::ModuleFn> =
            unsafe { lib.get(ffi::MODULE_SYMBOL) }.map_err(|e| format!("{}: not a simtwin kernel library: {e}", path.display()))?;
        // SAFETY: simtwin_module_v2 takes no arguments and returns the static descriptor.
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
            // SAFETY: `kernels` holds kernel_count records, alive with the library.
            let k = unsafe { &*d.kernels.add(i) };
            let n = k.param_count as usize;
            // SAFETY: arrays of param_count entries in the record.
            let sizes = unsafe { std::slice::from_raw_parts(k.param_sizes, n) }.to_vec();
            // SAFETY: as above.
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
            // SAFETY: `globals` holds global_count records, alive with the library.
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
            path: path.to_path_buf(),
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

    /// The symbol at each kernel's address, local symbols (`.symtab`) included: a kernel
    /// in an anonymous namespace has internal linkage, so dladdr (exported symbols only)
    /// does not name it. In descriptor order; `None` where the library has no symbol
    /// there (a stripped library).
    pub fn kernel_symbols_with_locals(&self) -> Result<Vec<Option<String>>, String> {
        use object::{Object, ObjectSymbol};
        let data = std::fs::read(&self.path).map_err(|e| format!("{}: {e}", self.path.display()))?;
        let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", self.path.display()))?;
        // SAFETY: Dl_info is plain data; dladdr only reads the loader's tables. The
        // descriptor's `bind` is a function of this library, so dli_fbase is the
        // library's load base. The descriptor is valid while the library is open.
        let base = unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            if libc::dladdr((*self.descriptor).bind as *const c_void, &mut info) == 0 {
                return Err(format!("{}: dladdr failed", self.path.display()));
            }
            info.dli_fbase as usize
        };
        let mut by_address = std::collections::HashMap::new();
        for sym in file.symbols().chain(file.dynamic_symbols()) {
            if sym.kind() == object::SymbolKind::Text {
                if let Ok(name) = sym.name() {
                    // Prefer a real name over g++'s `.localalias`/`.cold` companions.
                    let slot = by_address.entry(sym.address() as usize).or_insert_with(|| name.to_string());
                    if slot.contains('.') && !name.contains('.') {
                        *slot = name.to_string();
                    }
                }
            }
        }
        Ok(self.kernels.iter().map(|k| k.symbol.clone().or_else(|| by_address.get(&(k.function as usize - base)).cloned())).collect())
    }

    /// The kernel with that source name or exported symbol.
    pub fn kernel(&self, name_or_symbol: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name_or_symbol || k.symbol.as_deref() == Some(name_or_symbol))
    }
    /// The global with that source name or exported symbol.
    pub fn global(&self, name_or_symbol: &str) -> Option<&GlobalInfo> {
        self.globals.iter().find(|g| g.name == name_or_symbol || g.symbol.as_deref() == Some(name_or_symbol))
    }
}
