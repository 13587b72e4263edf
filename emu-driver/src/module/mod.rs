//! Modules and functions as the driver keeps them (the data); `load` holds the
//! mechanics of binding an image to its kernel library, `ptx` the PTX mode (the image's
//! own PTX, translated and compiled at load), `choose` which of the two runs a module.

pub mod choose;
pub mod load;
pub mod ptx;

use crate::image;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What the driver keeps of one kernel entry.
pub struct Kernel {
    pub symbol: String,
    /// What the executor runs: `symbol` as a shared name (for reports), the entry and
    /// the library's context slot; made once at load, so that a launch passes a
    /// reference (no count on the shared name per launch).
    pub exec: crate::exec::KernelRef,
    /// The launch counters of `symbol` (`counters::LaunchTally`), taken at load.
    pub tally: std::sync::Arc<crate::counters::LaunchTally>,
    pub param_sizes: Vec<u32>,
    /// Parameter offsets for the `extra` buffer form: from the image when it says,
    /// otherwise laid out from the host function's sizes and alignments.
    pub param_offsets: Vec<u32>,
    pub param_bytes: u32,
    pub attrs: Option<image::FuncAttrs>,
    pub launch_bounds: (u32, u32),
    /// PTX mode: bytes of the kernel's static shared variables, which the executor puts
    /// in front of the block's dynamic shared memory (one window, as the PTX addresses
    /// it); 0 for twins (their static shared memory is the library's thread-locals).
    pub smem_prefix: u32,
    /// PTX mode: the device's driver cannot compile this kernel (simtwin-ptx
    /// `KernelInfo::refused`, e.g. a txq of a texture's format): the module loads, the
    /// first cuModuleGetFunction of the kernel answers the code, and a launch of the
    /// handle a later call gives answers CUDA_ERROR_UNKNOWN, as on an H200 under lazy
    /// loading (ptx_txq_lazy). None for every other kernel.
    pub refused: Option<Arc<Refusal>>,
}

/// A kernel the device's driver refuses to compile (see `Kernel::refused`).
pub struct Refusal {
    /// The driver's answer (a CUresult).
    pub code: u32,
    /// The translator's message.
    pub message: String,
    /// Whether cuModuleGetFunction has answered the code once.
    pub told: std::sync::atomic::AtomicBool,
}

impl Kernel {
    /// The most threads per block the device allows this kernel: __launch_bounds__ as the
    /// sm_90 cubin records it, else as the host twin's manifest does; None if unbounded.
    /// Bytes of static shared memory: ptxas's figure from the sm_90 cubin when the image
    /// has one, else PTX mode's own window (0 for a twin without a cubin).
    pub fn static_shared(&self) -> u32 {
        self.attrs.as_ref().map(|a| a.shared_size_bytes).unwrap_or(self.smem_prefix)
    }

    pub fn thread_bound(&self) -> Option<u32> {
        self.attrs.as_ref().and_then(|a| a.max_threads_per_block).filter(|&m| m > 0).or(Some(self.launch_bounds.0).filter(|&m| m > 0))
    }
}

pub struct Module {
    pub ctx: u64,
    pub kernels: Vec<Kernel>,
    pub globals: HashMap<String, (u64, u64)>,
    /// Function handles handed out, by entry name (the same name gives the same handle).
    pub handles: Mutex<HashMap<String, u64>>,
    pub(crate) library_path: PathBuf,
    pub(crate) _lib: libloading::Library,
}

// SAFETY: the raw function pointers refer to code of the loaded library, which lives as
// long as the module; nothing here is tied to a thread.
unsafe impl Send for Module {}
// SAFETY: as for Send; the mutable parts are behind the Mutex.
unsafe impl Sync for Module {}

impl Module {
    pub fn library_name(&self) -> String {
        self.library_path.display().to_string()
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
