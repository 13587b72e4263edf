//! Loading a built kernel library and reading its descriptor: the only unsafe code of
//! this crate. `ffi` mirrors `include/simtwin/abi.h` (version 1) field for field.

use std::ffi::{c_char, c_void, CStr};
use std::path::Path;

pub mod ffi {
    use std::ffi::{c_char, c_void};

    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Dim3 {
        pub x: u32,
        pub y: u32,
        pub z: u32,
    }

    #[repr(C)]
    #[derive(Debug)]
    pub struct ThreadCtx {
        pub thread_idx: Dim3,
        pub block_idx: Dim3,
        pub block_dim: Dim3,
        pub grid_dim: Dim3,
        pub linear_tid: u32,
        pub lane: u32,
        pub dyn_smem: *mut c_void,
        pub dyn_smem_size: u64,
        pub range_stop: u32,
        pub reserved0: u32,
        pub executor: *mut c_void,
    }

    #[repr(C)]
    pub struct Runtime {
        pub abi_version: u32,
        pub size: u32,
        pub barrier: extern "C" fn(op: u32, pred: i32) -> i32,
        pub warp: extern "C" fn(op: u32, mask: u32, value: u64, arg: i32, width: i32, pred_out: *mut i32) -> u64,
        pub activemask: extern "C" fn() -> u32,
        pub trap: extern "C" fn(kind: u32, message: *const c_char, file: *const c_char, line: u32),
        pub print: extern "C" fn(text: *const c_char, len: usize),
        pub threadfence: extern "C" fn(scope: u32),
        pub clock: extern "C" fn() -> u64,
    }

    pub type RunFn = unsafe extern "C" fn(params: *const *mut c_void, ctx: *mut ThreadCtx, first: u32, count: u32);

    #[repr(C)]
    pub struct Kernel {
        pub name: *const c_char,
        pub function: *const c_void,
        pub run: RunFn,
        pub param_count: u32,
        pub param_sizes: *const u32,
        pub param_aligns: *const u32,
        pub max_threads: u32,
        pub min_blocks: u32,
    }

    #[repr(C)]
    pub struct Global {
        pub name: *const c_char,
        pub address: *mut c_void,
        pub size: u64,
        pub is_constant: u32,
        pub reserved: u32,
    }

    #[repr(C)]
    pub struct Module {
        pub abi_version: u32,
        pub kernel_count: u32,
        pub kernels: *const Kernel,
        pub global_count: u32,
        pub globals: *const Global,
        pub source_path: *const c_char,
        pub source_hash: *const c_char,
        pub bind: extern "C" fn(runtime: *const Runtime),
        pub ctx_slot: extern "C" fn() -> *mut *mut ThreadCtx,
    }

    pub const ABI_VERSION: u32 = 1;
    pub const MODULE_SYMBOL: &[u8] = b"simtwin_module_v1\0";
}

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
}

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the descriptor's strings are NUL-terminated literals of the library.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The exported symbol that starts exactly at `addr`.
fn symbol_at(addr: *const c_void) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    let ok = unsafe { libc::dladdr(addr, &mut info) };
    if ok == 0 || info.dli_sname.is_null() || info.dli_saddr as *const c_void != addr {
        return None;
    }
    Some(cstr(info.dli_sname))
}

impl LoadedModule {
    /// dlopens a kernel library (RTLD_NOW | RTLD_LOCAL) and reads its descriptor.
    pub fn open(path: &Path) -> Result<LoadedModule, String> {
        // SAFETY: loading runs the library's static constructors (the user's code).
        let lib = unsafe {
            libloading::os::unix::Library::open(Some(path), libc::RTLD_NOW | libc::RTLD_LOCAL)
        }
        .map_err(|e| format!("{}: cannot load: {e}", path.display()))?;
        // SAFETY: the symbol has the signature abi.h gives it.
        let get: libloading::os::unix::Symbol<unsafe extern "C" fn() -> *const ffi::Module> =
            unsafe { lib.get(ffi::MODULE_SYMBOL) }
                .map_err(|e| format!("{}: not a simtwin kernel library: {e}", path.display()))?;
        let m = unsafe { get() };
        if m.is_null() {
            return Err(format!("{}: simtwin_module_v1 returned null", path.display()));
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
        ((*self.descriptor).bind)(rt)
    }

    /// The calling OS thread's context slot (abi.h `ctx_slot`).
    pub fn ctx_slot(&self) -> *mut *mut ffi::ThreadCtx {
        unsafe { ((*self.descriptor).ctx_slot)() }
    }

    pub fn kernel(&self, name_or_symbol: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name_or_symbol || k.symbol.as_deref() == Some(name_or_symbol))
    }
    pub fn global(&self, name_or_symbol: &str) -> Option<&GlobalInfo> {
        self.globals.iter().find(|g| g.name == name_or_symbol || g.symbol.as_deref() == Some(name_or_symbol))
    }
}
